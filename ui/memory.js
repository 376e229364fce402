/* memory.js: the memory view, /profile/<name>/memory (docs/ui.md): SBUF allocations
 * over time, one panel per core and partition group (SbufAllocation: a rectangle per
 * allocation, time across, the byte offset inside each partition down, coloured and
 * labelled by its tensor, else its opcode or DMA queue), and the PSUM banks' use
 * (PsumUsage: one strip per bank, as dark as the bank is full). It shows the timeline's
 * window (the hash's t0 and t1, exact profile nanoseconds, kept current here too, so the
 * Timeline tab opens on the same window); wheel zooms, drag pans; the data of each window
 * comes from GET .../timeline/memory (at most 4000 allocations, the largest). Hovering
 * says what an allocation holds; a click opens the timeline on its lifetime, with the
 * DMA transfers of its block marked when a DMA made it. */
'use strict';

const MEM_PANEL_H = 92, MEM_BANK_H = 12, MEM_GAP = 16, MEM_LABEL_W = 120;

async function memoryPage(name) {
  document.title = `${name} · memory · Neuron Explorer`;
  profileChrome(name, 'memory');
  main.replaceChildren(el('p', { class: 'muted' }, 'Loading…'));
  try { if (!(await profileExists(name, main))) return; } catch (e) { main.replaceChildren(errorBox(e)); return; }
  const box = el('div', { class: 'card mem-card' });
  main.replaceChildren(el('div', { class: 'page-head' }, el('h1', {}, name), el('span', { class: 'muted' }, 'SBUF and PSUM over time')), box);
  let facts = null, files;
  try {
    files = new Set((await NX.search(name, { type: 'listDbFiles' })).tables.map((t) => t.name));
    const parts = ['1 AS one'];
    if (files.has('SbufAllocation')) parts.push('(SELECT count(*) FROM SbufAllocation) AS n', '(SELECT max(end_address) + 1 FROM SbufAllocation) AS top');
    if (files.has('PsumUsage')) parts.push('(SELECT count(*) FROM PsumUsage) AS psum');
    facts = NX.objects(await NX.query(name, 'SELECT ' + parts.join(', ')))[0];
  } catch (e) { box.replaceChildren(errorBox(e)); return; }
  if (!Number(facts.n) && !Number(facts.psum)) {
    box.replaceChildren(el('h2', {}, 'Memory'), el('p', { 'data-testid': 'mem-none' },
      files.has('Instruction') ? 'This profile records no SBUF allocations and no PSUM use (SbufAllocation and PsumUsage are empty).'
        : 'This profile has no device events (a framework trace): there is no SBUF or PSUM to show.'));
    return;
  }
  const view = new MemoryView(box, name, { top: Number(facts.top) || 1, allocs: Number(facts.n) || 0, psum: Number(facts.psum) || 0 });
  window.nx = { memory: view };
  await view.load().catch((e) => box.append(errorBox(e)));
}

class MemoryView {
  constructor(root, profile, facts) {
    this.profile = profile; this.facts = facts;
    this.canvas = el('canvas', { class: 'tl-canvas mem-canvas', 'data-testid': 'memory' });
    this.info = el('div', { class: 'tl-status', 'data-testid': 'mem-status' });
    this.legend = el('div', { class: 'legend', 'data-testid': 'mem-legend' });
    this.link = el('a', { href: '#', 'data-nav': true, 'data-testid': 'mem-timeline' }, 'Open this window in the timeline');
    root.append(el('div', { class: 'toolbar' }, el('h2', { style: 'margin:0' }, 'Memory'),
      el('span', { class: 'muted' }, 'SBUF per partition group (offset down, time across), PSUM banks; a click opens the timeline'),
      el('span', { style: 'flex:1' }), this.link,
      el('button', { class: 'secondary', onclick: () => this.zoom(0.5) }, 'Zoom in'),
      el('button', { class: 'secondary', onclick: () => this.zoom(2) }, 'Zoom out'),
      el('button', { class: 'secondary', 'data-testid': 'mem-reset', onclick: () => this.setView(this.full[0], this.full[1]) }, 'Reset')),
    this.canvas, this.info, this.legend);
    this.ctx = this.canvas.getContext('2d');
    this.widths = new Map(); this.cuts = new Map(); /* for the timeline's fit() */
    this.labelW = MEM_LABEL_W; /* for the timeline's tickLabels() */
    this.theme = tlTheme();
    this.requests = 0;
    this.bind();
    new ResizeObserver(() => this.resize()).observe(this.canvas);
  }

  rel(v) { return Number(NX.big(v) - this.origin); }
  abs(t) { return (this.origin + BigInt(Math.round(t))).toString(); }
  plotW() { return Math.max(10, this.W - MEM_LABEL_W); }
  tickStep() { return Timeline.prototype.tickStep.call(this); }
  x(t) { return MEM_LABEL_W + (t - this.t0) / (this.t1 - this.t0) * this.plotW(); }
  t(x) { return this.t0 + (x - MEM_LABEL_W) / this.plotW() * (this.t1 - this.t0); }

  /* The profile's bounds as the timeline has them (its first start is the origin). */
  async load() {
    const b = await NX.deviceBounds(this.profile);
    this.origin = b.origin;
    this.full = [0, Math.max(1, Number(b.end - b.origin))];
    const h = new URLSearchParams(location.hash.slice(1));
    const t0 = h.get('t0'), t1 = h.get('t1');
    if (NX.isIntText(t0) && NX.isIntText(t1) && NX.big(t1) > NX.big(t0)) [this.t0, this.t1] = [this.rel(t0), this.rel(t1)];
    else [this.t0, this.t1] = this.full;
    this.resize();
  }

  setView(t0, t1) {
    const fs = this.full[1] - this.full[0];
    let span = Math.max(10, t1 - t0);
    if (span > fs * 1.2) { t0 = this.full[0] - fs * 0.1; span = fs * 1.2; }
    t0 = Math.max(this.full[0] - span * 0.1, Math.min(t0, this.full[1] + span * 0.1 - span));
    this.t0 = t0; this.t1 = t0 + span;
    this.draw();
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.fetch(), 80);
    clearTimeout(this.hashTimer);
    this.hashTimer = setTimeout(() => {
      const h = new URLSearchParams(location.hash.slice(1));
      h.set('t0', this.abs(Math.floor(this.t0))); h.set('t1', this.abs(Math.ceil(this.t1)));
      history.replaceState(null, '', '#' + h.toString());
    }, 150);
  }
  zoom(f, at) { const c = at === undefined ? (this.t0 + this.t1) / 2 : at; this.setView(c - (c - this.t0) * f, c + (this.t1 - c) * f); }

  /* The panels: per core and partition group of the data, then the PSUM banks per core. */
  layout() {
    const groups = new Set(), cores = new Set();
    for (const a of this.allocs || []) groups.add(`${a.core}|${a.partition}`);
    for (const p of this.psum || []) cores.add(p.core);
    if (!groups.size && this.facts.allocs) for (const g of [0, 32, 64, 96]) groups.add(`0|${g}`);
    this.panels = [...groups].map((k) => k.split('|').map(Number)).sort((a, b) => a[0] - b[0] || a[1] - b[1])
      .map(([core, part]) => ({ core, part }));
    let y = 24;
    for (const p of this.panels) { p.y = y; p.h = MEM_PANEL_H; y += MEM_PANEL_H + 6; }
    this.banks = [];
    if (this.facts.psum) {
      y += MEM_GAP;
      for (const core of (cores.size ? [...cores].sort() : [0])) {
        for (let b = 0; b < 8; b++) { this.banks.push({ core, bank: b, y, h: MEM_BANK_H }); y += MEM_BANK_H + 1; }
        y += 6;
      }
    }
    this.H = y + 4;
  }

  resize() {
    if (!this.full) return;
    const dpr = window.devicePixelRatio || 1;
    this.W = this.canvas.clientWidth || 800;
    this.layout();
    this.canvas.style.height = this.H + 'px';
    this.canvas.width = Math.round(this.W * dpr); this.canvas.height = Math.round(this.H * dpr);
    this.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    this.draw();
    this.fetch();
  }

  async fetch() {
    if (this.pending) this.pending.abort();
    const ac = this.pending = new AbortController();
    const t0 = Math.floor(this.t0), t1 = Math.ceil(this.t1);
    try {
      const r = await NX.get(`${NX.profileBase(this.profile)}/timeline/memory?t0=${this.abs(t0)}&t1=${this.abs(t1)}&px=${Math.round(this.plotW())}`, ac.signal);
      this.allocs = r.sbuf ? NX.objects(r.sbuf).map((a) => Object.assign(a, { start: this.rel(a.start), end: this.rel(a.end) })) : [];
      this.total = r.sbuf && r.sbuf.rows.length ? Number(r.sbuf.rows[0][r.sbuf.columns.findIndex((c) => c.name === 'total')]) : 0;
      this.psum = r.psum ? NX.objects(r.psum).map((p) => Object.assign(p, { ts: this.rel(p.ts) })) : [];
      this.bucket = r.bucket;
      this.requests++;
      this.canvas.dataset.requests = this.requests;
      const n = this.panels ? this.panels.length : 0;
      this.layout();
      if (this.panels.length !== n) return this.resize();
      this.draw();
    } catch (e) { if (e.name !== 'AbortError') this.info.textContent = 'memory: ' + (e.message || e); }
    finally { if (this.pending === ac) this.pending = null; }
  }

  draw() {
    const c = this.ctx, th = this.theme, W = this.W, H = this.H;
    if (!W || !this.panels) return;
    c.clearRect(0, 0, W, H);
    c.fillStyle = th.bg; c.fillRect(0, 0, W, H);
    c.font = TL_FONT; c.textBaseline = 'middle';
    /* the axis: the timeline's ticks */
    const span = this.t1 - this.t0;
    c.fillStyle = th.axisBg; c.fillRect(0, 0, W, 22);
    for (const { x, text } of Timeline.prototype.tickLabels.call(this)) {
      c.strokeStyle = th.grid; c.beginPath(); c.moveTo(x, 22); c.lineTo(x, H); c.stroke();
      c.fillStyle = th.muted; c.fillText(text, x + 4, 11);
    }
    const top = this.facts.top, seen = new Map();
    this.spots = [];
    for (const p of this.panels) {
      c.strokeStyle = th.line; c.strokeRect(MEM_LABEL_W + 0.5, p.y + 0.5, this.plotW() - 1, p.h);
      c.save(); c.beginPath(); c.rect(MEM_LABEL_W, p.y, this.plotW(), p.h); c.clip();
      for (const a of this.allocs || []) {
        if (a.core !== p.core || a.partition !== p.part) continue;
        const x0 = this.x(a.start), x1 = this.x(a.end), y0 = p.y + a.lo / top * p.h, y1 = p.y + (a.hi + 1) / top * p.h;
        if (x1 < MEM_LABEL_W || x0 > W) continue;
        const col = NX.color(a.name || a.source);
        seen.set(a.name || a.source, col);
        c.fillStyle = col; c.globalAlpha = 0.85;
        c.fillRect(x0, y0, Math.max(1, x1 - x0 - (x1 - x0 >= 3 ? 1 : 0)), Math.max(1, y1 - y0 - (y1 - y0 >= 3 ? 1 : 0)));
        c.globalAlpha = 1;
        if (x1 - x0 > 30 && y1 - y0 >= 11) {
          c.font = TL_FONT_SMALL; c.fillStyle = inkOn(col);
          const xa = Math.max(x0, MEM_LABEL_W) + 3, room = Math.min(x1, W) - xa - 3;
          c.fillText(Timeline.prototype.fit.call(this, String(a.name || a.source), room), xa, (y0 + y1) / 2);
          c.font = TL_FONT;
        }
        this.spots.push({ a, x0, x1, y0, y1 });
      }
      c.restore();
      c.fillStyle = th.text;
      c.fillText(`${this.panels.some((q) => q.core !== p.core) ? `NC${p.core} ` : ''}SBUF p${p.part}–${p.part + 31}`, 8, p.y + 10);
      c.fillStyle = th.muted; c.font = TL_FONT_SMALL;
      c.fillText('0', MEM_LABEL_W - 14, p.y + 6); c.fillText(NX.fmtBytes(top), 8, p.y + p.h - 6);
      c.font = TL_FONT;
    }
    for (const b of this.banks) {
      c.fillStyle = th.alt; c.fillRect(MEM_LABEL_W, b.y, this.plotW(), b.h);
      const rows = (this.psum || []).filter((q) => q.core === b.core);
      /* a sample lasts to the next one; the last one as long as the shortest step */
      let step = this.bucket || 1;
      for (let j = 1; j < rows.length; j++) step = j === 1 ? rows[j].ts - rows[j - 1].ts : Math.min(step, rows[j].ts - rows[j - 1].ts);
      c.save(); c.beginPath(); c.rect(MEM_LABEL_W, b.y, this.plotW(), b.h); c.clip();
      c.fillStyle = '#7c3aed';
      for (let j = 0; j < rows.length; j++) {
        const v = Number(rows[j]['b' + b.bank]);
        if (!(v > 0)) continue;
        const x0 = this.x(rows[j].ts), x1 = this.x(j + 1 < rows.length ? rows[j + 1].ts : rows[j].ts + step);
        c.globalAlpha = 0.15 + 0.85 * Math.min(1, v);
        c.fillRect(x0, b.y, Math.max(1, x1 - x0), b.h);
      }
      c.globalAlpha = 1;
      c.restore();
      c.font = TL_FONT_SMALL; c.fillStyle = th.muted;
      c.fillText(`${b.bank === 0 ? 'PSUM ' : ''}bank ${b.bank}`, 8, b.y + b.h / 2);
      c.font = TL_FONT;
    }
    const drawn = (this.allocs || []).length;
    this.info.textContent = `window ${NX.fmtNsExact(Math.floor(this.t0)).replace(/ ns$/, '')} – ${NX.fmtNsExact(Math.ceil(this.t1))} (${NX.fmtNs(span)}) · ` +
      `${NX.fmtNum(drawn)} SBUF allocation rows${this.total > drawn ? ` of ${NX.fmtNum(this.total)} (the largest)` : ''} · ` +
      `PSUM: per bank, the fullest sample of each ${NX.fmtNsExact(this.bucket || 1)} bucket; the profile names no PSUM buffers`;
    const lg = [...seen.entries()].sort((a, b) => a[0].localeCompare(b[0])).slice(0, 40);
    this.legend.replaceChildren(...lg.map(([k, v]) => el('span', { style: `--c:${v}`, title: k }, k)));
    this.link.setAttribute('href', NX.timelineUrl(this.profile, { t0: this.abs(Math.floor(this.t0)), t1: this.abs(Math.ceil(this.t1)) }));
  }

  /* What is under (x, y): an allocation, or a PSUM bank's bucket. */
  hit(x, y) {
    for (let i = (this.spots || []).length - 1; i >= 0; i--) {
      const s = this.spots[i];
      if (x >= s.x0 - 1 && x <= Math.max(s.x1, s.x0 + 2) && y >= s.y0 && y <= Math.max(s.y1, s.y0 + 2)) return { alloc: s.a };
    }
    const b = (this.banks || []).find((q) => y >= q.y && y < q.y + q.h);
    if (b && x > MEM_LABEL_W) {
      const t = this.t(x), rows = (this.psum || []).filter((q) => q.core === b.core && q.ts <= t);
      const r = rows[rows.length - 1];
      return r ? { bank: b, row: r } : null;
    }
    return null;
  }

  tip(ev, h) {
    const tip = document.getElementById('tooltip');
    if (!h) { tip.hidden = true; return; }
    let kids;
    if (h.alloc) {
      const a = h.alloc, bytes = a.hi - a.lo + 1;
      kids = [el('b', {}, a.name || a.source), el('br'),
        a.source === 'dma' ? `DMA ${a.queue || ''} block ${a.block}` : `${a.opcode || ''} ${a.operands || ''}`.slice(0, 160), el('br'),
        `partitions ${a.partition}–${a.partition + 31} · bytes ${a.lo}–${a.hi} (${NX.fmtBytes(bytes)} per partition)`, el('br'),
        `${NX.fmtNsExact(a.start)} – ${NX.fmtNsExact(a.end)} · ${NX.fmtNs(a.end - a.start)}`, el('br'),
        el('span', { class: 'muted' }, 'click: the timeline at its lifetime')];
    } else {
      kids = [el('b', {}, `PSUM bank ${h.bank.bank}`), el('br'), `${(100 * Number(h.row['b' + h.bank.bank])).toFixed(1)} % full at most`,
        el('br'), `from ${NX.fmtNsExact(h.row.ts)} for ${NX.fmtNsExact(this.bucket)}`];
    }
    tip.replaceChildren(...kids);
    tip.hidden = false;
    const r = tip.getBoundingClientRect();
    let left = ev.clientX + 14, top = ev.clientY + 16;
    if (left + r.width > innerWidth - 6) left = Math.max(6, ev.clientX - 14 - r.width);
    if (top + r.height > innerHeight - 6) top = Math.max(6, ev.clientY - 12 - r.height);
    tip.style.left = left + 'px'; tip.style.top = top + 'px';
  }

  /* The timeline at an allocation's lifetime, its DMA block's transfers marked. */
  timelineOf(a) {
    const m = Math.max(20, (a.end - a.start) / 5);
    const u = NX.timelineUrl(this.profile, { t0: this.abs(Math.floor(a.start - m)), t1: this.abs(Math.ceil(a.end + m)),
      search: a.source === 'dma' && a.block !== null ? `DmaPacketAggregated.block_id = ${a.block}` : undefined });
    return u;
  }

  bind() {
    const cv = this.canvas;
    let drag = null;
    const pos = (ev) => { const r = cv.getBoundingClientRect(); return [ev.clientX - r.left, ev.clientY - r.top]; };
    cv.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      const [x] = pos(ev);
      if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
        const d = (ev.deltaX || ev.deltaY) / this.plotW() * (this.t1 - this.t0);
        this.setView(this.t0 + d, this.t1 + d);
      } else this.zoom(Math.pow(1.0015, ev.deltaY), x > MEM_LABEL_W ? this.t(x) : undefined);
    }, { passive: false });
    cv.addEventListener('mousedown', (ev) => { const [x] = pos(ev); drag = { x, t0: this.t0, t1: this.t1, moved: false }; ev.preventDefault(); });
    cv.addEventListener('mousemove', (ev) => {
      const [x, y] = pos(ev);
      if (drag) {
        if (Math.abs(x - drag.x) > 3) drag.moved = true;
        if (drag.moved) { const d = (x - drag.x) / this.plotW() * (drag.t1 - drag.t0); this.setView(drag.t0 - d, drag.t1 - d); this.tip(ev, null); }
        return;
      }
      this.tip(ev, this.hit(x, y));
    });
    cv.addEventListener('mouseleave', () => this.tip(null, null));
    window.addEventListener('mouseup', (ev) => {
      if (!drag || !cv.isConnected) return;
      const d = drag;
      drag = null;
      if (d.moved || ev.target !== cv) return;
      const [x, y] = pos(ev), h = this.hit(x, y);
      if (h && h.alloc) go(this.timelineOf(h.alloc));
    });
  }
}
