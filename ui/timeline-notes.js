/* timeline-notes.js: the timeline's annotations (docs/ui.md): markers (a time) and
 * ranges (two times) with a note each, drawn over the rows and flagged on the axis
 * with their letter. M adds a marker at the pointer (at the start of the event under
 * it), the Notes panel one at the view's centre, the box selection's panel a range.
 * They are kept in the URL's hash (notes=<t>~<text>,<t0>-<t1>~<text>,..., absolute
 * profile nanoseconds as exact integers), and saved to or read from a small JSON file
 * ({"profile", "notes": [{"kind": "marker", "t", "text"} | {"kind": "range", "t0",
 * "t1", "text"}]}, times as integer strings). "diff vs" between two markers gives the
 * time between them and opens the operator table of that range. */
'use strict';

const TL_NOTE_COLOR = '#0d9488';

/* A note's letter: A .. Z, then A1 .. */
const tlNoteLetter = (i) => String.fromCharCode(65 + (i % 26)) + (i >= 26 ? Math.floor(i / 26) : '');

Object.assign(Timeline.prototype, {
  /* The notes of the hash (once per page), as relative times; invalid entries said once. */
  readNotes() {
    const v = this.hashParams().get('notes');
    const out = [];
    let bad = 0;
    for (const e of (v || '').split(',').filter(Boolean)) {
      const m = /^(-?\d{1,19})(?:-(-?\d{1,19}))?(?:~(.*))?$/.exec(e);
      let text = '';
      try { text = m && m[3] ? decodeURIComponent(m[3]) : ''; } catch (x) { bad++; continue; }
      if (!m || !NX.isIntText(m[1]) || (m[2] && (!NX.isIntText(m[2]) || NX.big(m[2]) <= NX.big(m[1])))) { bad++; continue; }
      out.push({ t0: this.rel(m[1]), t1: m[2] ? this.rel(m[2]) : null, text });
    }
    if (bad) this.say(`${bad} annotation${bad === 1 ? '' : 's'} of the link could not be read and ${bad === 1 ? 'is' : 'are'} left out.`);
    return out;
  },

  saveNotes() {
    const h = this.hashParams();
    const v = this.notes.map((n) => this.abs(n.t0) + (n.t1 !== null ? '-' + this.abs(n.t1) : '') +
      (n.text ? '~' + encodeURIComponent(n.text) : '')).join(',');
    if (v) h.set('notes', v); else h.delete('notes');
    this.writeHash(h);
    if (this.notesPanel) this.fillNotesPanel();
    this.redraw();
  },

  /* A marker at t (relative ns); snaps to the start of the event under the pointer. */
  addMarker(t, text) {
    const h = this.hover;
    if (h && !h.counter && this.mouseT !== undefined && Math.abs(this.x(h.start) - this.x(t)) < 6) t = h.start;
    this.notes.push({ t0: Math.round(t), t1: null, text: text || '' });
    this.saveNotes();
    return this.notes.length - 1;
  },
  addRange(t0, t1, text) {
    this.notes.push({ t0: Math.floor(t0), t1: Math.ceil(t1), text: text || '' });
    this.saveNotes();
    return this.notes.length - 1;
  },

  /* Ranges as bands and markers as dashed lines over the rows (under the events). */
  drawNotes() {
    const c = this.ctx, top = this.axisH, bottom = this.H;
    if (!this.notes || !this.notes.length) return;
    c.save(); c.beginPath(); c.rect(this.labelW, 0, this.plotW(), bottom); c.clip();
    for (const n of this.notes) {
      const x0 = this.x(n.t0);
      if (n.t1 !== null) {
        const x1 = this.x(n.t1);
        if (x1 < this.labelW || x0 > this.W) continue;
        c.fillStyle = TL_NOTE_COLOR; c.globalAlpha = 0.08; c.fillRect(x0, top, Math.max(1, x1 - x0), bottom - top); c.globalAlpha = 1;
      }
    }
    c.restore();
  },
  /* The notes' flags on the axis, and the markers' lines over everything. */
  drawNoteFlags() {
    const c = this.ctx;
    if (!this.notes || !this.notes.length) return;
    c.save(); c.beginPath(); c.rect(this.labelW, 0, this.plotW(), this.H); c.clip();
    c.font = TL_FONT_SMALL;
    this.notes.forEach((n, i) => {
      const x0 = Math.round(this.x(n.t0)) + 0.5, letter = tlNoteLetter(i);
      const label = letter + (n.text ? ' ' + n.text : '');
      c.strokeStyle = TL_NOTE_COLOR; c.fillStyle = TL_NOTE_COLOR;
      if (n.t1 === null) {
        if (x0 < this.labelW - 1 || x0 > this.W + 1) return;
        c.setLineDash([3, 3]); c.beginPath(); c.moveTo(x0, this.axisH); c.lineTo(x0, this.H); c.stroke(); c.setLineDash([]);
        const w = Math.min(140, c.measureText(label).width + 8);
        c.fillRect(x0, 1, w, 12);
        c.fillStyle = '#ffffff'; c.fillText(this.fit(label, w - 6), x0 + 3, 7.5);
      } else {
        const x1 = Math.round(this.x(n.t1)) + 0.5;
        if (x1 < this.labelW || x0 > this.W) return;
        const a = Math.max(this.labelW, x0), b = Math.min(this.W, x1);
        c.fillRect(a, this.axisH - 4, Math.max(1, b - a), 3);
        c.globalAlpha = 0.9; c.fillRect(a, 1, Math.min(140, Math.max(14, b - a)), 12); c.globalAlpha = 1;
        c.fillStyle = '#ffffff'; c.fillText(this.fit(label, Math.min(140, Math.max(14, b - a)) - 6), a + 3, 7.5);
      }
    });
    c.font = TL_FONT;
    c.restore();
  },

  /* The Notes panel: the annotations with their notes, go, delete, "diff vs", and the
   * JSON file. */
  toggleNotes() {
    if (this.notesPanel) { this.notesPanel.remove(); this.notesPanel = null; return; }
    this.notesPanel = NX.el('div', { class: 'tl-notes card-inner', 'data-testid': 'tl-notes' });
    this.legend.after(this.notesPanel);
    this.fillNotesPanel();
  },

  fillNotesPanel() {
    const p = this.notesPanel;
    if (!p) return;
    const b = (text, title, fn, testid) => NX.el('button', { type: 'button', class: 'secondary small', title, 'data-testid': testid, onclick: fn }, text);
    const when = (n) => (n.t1 === null ? NX.fmtNsExact(n.t0) : `${NX.fmtNsExact(n.t0)} – ${NX.fmtNsExact(n.t1)} (${NX.fmtNs(n.t1 - n.t0)})`);
    const markers = this.notes.map((n, i) => [n, i]).filter(([n]) => n.t1 === null);
    const file = NX.el('input', { type: 'file', accept: 'application/json,.json', hidden: true, 'data-testid': 'notes-file',
      onchange: (ev) => { const f = ev.target.files[0]; if (f) f.text().then((t) => this.importNotes(t)).catch((e) => this.say(String(e.message || e))); ev.target.value = ''; } });
    p.replaceChildren(
      NX.el('div', { class: 'toolbar' }, NX.el('h2', { style: 'margin:0' }, 'Annotations'),
        NX.el('span', { class: 'muted' }, 'M adds a marker at the pointer; a box selection can become a range'),
        NX.el('span', { style: 'flex:1' }),
        b('Add marker', 'a marker at the middle of the view', () => this.addMarker((this.t0 + this.t1) / 2), 'notes-add'),
        b('Export JSON', 'save the annotations as a file', () => this.exportNotes(), 'notes-export'),
        b('Import JSON', 'add the annotations of a file', () => file.click(), 'notes-import'), file,
        b('×', 'close', () => this.toggleNotes())),
      this.notes.length ? NX.el('table', { class: 'grid', 'data-testid': 'notes-list' },
        NX.el('thead', {}, NX.el('tr', {}, ['', 'when', 'note', ''].map((h) => NX.el('th', {}, h)))),
        NX.el('tbody', {}, this.notes.map((n, i) => NX.el('tr', { 'data-note': i },
          NX.el('td', {}, NX.el('b', { style: `color:${TL_NOTE_COLOR}` }, tlNoteLetter(i))),
          NX.el('td', { class: 'mono' }, when(n)),
          NX.el('td', {}, NX.el('input', { type: 'text', value: n.text, placeholder: 'note', 'data-testid': 'note-text',
            onchange: (ev) => { n.text = ev.target.value; this.saveNotes(); } })),
          NX.el('td', {},
            b('Go', 'show it', () => (n.t1 === null ? this.reveal(n.t0, n.t0) : this.focusRange(n.t0, n.t1)), 'note-go'),
            n.t1 !== null ? b('Operators', 'the operator table of this range', () => this.opsFor(n.t0, n.t1, `range ${tlNoteLetter(i)}`), 'note-ops') : null,
            n.t1 === null && markers.length > 1 ? NX.el('select', { 'data-testid': 'note-diff', title: 'diff vs another marker',
              onchange: (ev) => { if (ev.target.value !== '') this.diffMarkers(i, Number(ev.target.value)); } },
            NX.el('option', { value: '' }, 'diff vs…'),
            markers.filter(([, j]) => j !== i).map(([, j]) => NX.el('option', { value: j }, tlNoteLetter(j)))) : null,
            b('Delete', 'remove it', () => { this.notes.splice(i, 1); this.saveNotes(); }, 'note-delete')))))) : NX.el('p', { class: 'muted' }, 'No annotations yet.'),
      this.noteDiff ? NX.el('p', { 'data-testid': 'notes-diff' }, this.noteDiff) : null);
  },

  /* Shows [t0, t1] with a margin of a tenth on each side. */
  focusRange(t0, t1) { const m = Math.max(5, (t1 - t0) / 10); this.setView(t0 - m, t1 + m); },

  /* The time between markers i and j, and the operator table of the range between. */
  diffMarkers(i, j) {
    const a = this.notes[i], b = this.notes[j];
    const lo = Math.min(a.t0, b.t0), hi = Math.max(a.t0, b.t0), d = b.t0 - a.t0;
    this.noteDiff = `${tlNoteLetter(j)} − ${tlNoteLetter(i)} = ${d < 0 ? '−' : ''}${NX.fmtNsExact(Math.abs(d))} (${NX.fmtNs(Math.abs(d))})`;
    this.fillNotesPanel();
    if (hi > lo) this.opsFor(lo, hi, `${tlNoteLetter(Math.min(i, j))} – ${tlNoteLetter(Math.max(i, j))}`);
    return d;
  },

  exportNotes() {
    const body = JSON.stringify({ profile: this.profile, notes: this.notes.map((n) => (n.t1 === null
      ? { kind: 'marker', t: this.abs(n.t0), text: n.text } : { kind: 'range', t0: this.abs(n.t0), t1: this.abs(n.t1), text: n.text })) }, null, 1);
    const a = NX.el('a', { href: URL.createObjectURL(new Blob([body + '\n'], { type: 'application/json' })), download: `${this.profile}-notes.json` });
    document.body.append(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  },

  /* Adds the annotations of a JSON file's text; says what it could not read. */
  importNotes(text) {
    let j;
    try { j = JSON.parse(text); } catch (e) { this.say(`The annotations file is no JSON (${e.message}).`); return 0; }
    const list = j && Array.isArray(j.notes) ? j.notes : null;
    if (!list) { this.say('The annotations file has no "notes" list.'); return 0; }
    let bad = 0, n = 0;
    const int = (v) => (typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : v);
    for (const e of list) {
      const text = e && typeof e.text === 'string' ? e.text.slice(0, 500) : '';
      if (e && e.kind === 'marker' && NX.isIntText(int(e.t))) { this.notes.push({ t0: this.rel(int(e.t)), t1: null, text }); n++; }
      else if (e && e.kind === 'range' && NX.isIntText(int(e.t0)) && NX.isIntText(int(e.t1)) && NX.big(int(e.t1)) > NX.big(int(e.t0))) {
        this.notes.push({ t0: this.rel(int(e.t0)), t1: this.rel(int(e.t1)), text }); n++;
      } else bad++;
    }
    if (bad) this.say(`${bad} entr${bad === 1 ? 'y' : 'ies'} of the annotations file could not be read and ${bad === 1 ? 'was' : 'were'} left out.`);
    this.saveNotes();
    return n;
  },
});
