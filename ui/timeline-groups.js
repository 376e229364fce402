/* timeline-groups.js: the timeline's track groups (docs/ui.md): the rows are grouped by
 * what they show, per core: Engines, DMA queues, Counters, Semaphores, and per framework
 * process (instance / pid) its streams. Each group has a header row: a click on it
 * collapses the group to that one row (its event rows drawn over one another there) or
 * expands it; its pin puts it at the top, its arrows move it up or down. The Tracks
 * panel (toolbar) does the same for every group at once. The state is kept in the URL's
 * hash as groups=<entry>,<entry>,... in display order, an entry being the group's id
 * with ^ in front when pinned and ! when collapsed (e.g. groups=^dma:0,engines:0,!sems:0),
 * so a link shows the same rows. */
'use strict';

const TL_HEADER_H = 18;

/* The group of a track: {id, title}. */
function tlGroupOf(tr, ncores) {
  const nc = ncores > 1 && tr.core !== null && tr.core !== undefined ? `NC${tr.core} · ` : '';
  const core = tr.core === null || tr.core === undefined ? '-' : tr.core;
  if (tr.kind === 'instruction') return { id: `engines:${core}`, title: nc + 'Engines' };
  if (tr.kind === 'dma') return { id: `dma:${core}`, title: nc + 'DMA queues' };
  if (tr.kind === 'counter')
    return /^sem /.test(tr.track) ? { id: `sems:${core}`, title: nc + 'Semaphores' } : { id: `counters:${core}`, title: nc + 'Counters' };
  const m = /^(.*) \/ tid [^/]*$/.exec(tr.stream);
  const proc = m ? m[1] : tr.stream;
  return { id: `fw:${proc}`, title: proc };
}

/* A group id in the hash: commas and percent signs escaped, the rest as it is. */
const tlGroupEsc = (id) => id.replace(/%/g, '%25').replace(/,/g, '%2C');
const tlGroupUnesc = (s) => s.replace(/%2C/gi, ',').replace(/%25/g, '%');

Object.assign(Timeline.prototype, {
  /* The groups' state of the URL's hash: {order: [id], pinned: Set, collapsed: Set}. */
  readGroups() {
    const st = { order: [], pinned: new Set(), collapsed: new Set() };
    const v = this.hashParams().get('groups');
    for (const e of (v || '').split(',').filter(Boolean)) {
      const m = /^([\^!]*)(.*)$/.exec(e), id = tlGroupUnesc(m[2]);
      if (!id) continue;
      st.order.push(id);
      if (m[1].includes('^')) st.pinned.add(id);
      if (m[1].includes('!')) st.collapsed.add(id);
    }
    return st;
  },

  /* Writes the groups' state to the hash (other parameters stay). */
  saveGroups() {
    const h = this.hashParams();
    h.set('groups', this.groups.map((g) => (g.pinned ? '^' : '') + (g.collapsed ? '!' : '') + tlGroupEsc(g.id)).join(','));
    this.writeHash(h);
  },

  /* Row geometry: groups in their order (pinned first), each a header row, then its
   * rows (a stream with depth lanes gets thinner rows, one per lane); a collapsed
   * group's rows all lie on its header. this.tracks becomes the display order. */
  layout() {
    if (!this.gstate) this.gstate = this.readGroups();
    const src = this.natural || this.tracks;
    this.ncores = new Set(src.map((t) => t.core)).size;
    const deep = new Set(src.filter((t) => t.lane > 0).map((t) => `${t.kind}|${t.core}|${t.stream}`));
    const byId = new Map();
    for (const t of src) {
      const g0 = tlGroupOf(t, this.ncores);
      let g = byId.get(g0.id);
      if (!g) { g = Object.assign(g0, { tracks: [], natural: byId.size }); byId.set(g.id, g); }
      g.tracks.push(t);
      t.key = `${t.kind}|${t.core}|${t.track}`;
      t.group = `${t.kind}|${t.core}|${t.stream}`; /* the stream: its lanes together */
      t.tg = g;
    }
    const st = this.gstate, pos = new Map(st.order.map((id, i) => [id, i]));
    const rank = (g) => (pos.has(g.id) ? pos.get(g.id) : st.order.length + g.natural);
    this.groups = [...byId.values()].map((g) => Object.assign(g, { pinned: st.pinned.has(g.id), collapsed: st.collapsed.has(g.id) }))
      .sort((a, b) => (b.pinned - a.pinned) || rank(a) - rank(b));
    let y = this.axisH;
    const rows = [];
    for (const g of this.groups) {
      g.y = y; g.h = g.collapsed ? this.rowH : TL_HEADER_H;
      rows.push({ header: g, y, h: g.h });
      y += g.h;
      let prev = null;
      for (const t of g.tracks) {
        t.first = t.group !== prev; prev = t.group;
        t.hidden = g.collapsed;
        if (g.collapsed) { t.y = g.y; t.h = g.h; continue; }
        t.h = deep.has(t.group) ? this.laneH : this.rowH;
        t.y = y;
        rows.push({ track: t, y, h: t.h });
        y += t.h;
      }
      y += 3;
    }
    this.tracks = this.groups.flatMap((g) => g.tracks);
    this.tracks.forEach((t, i) => { t.index = i; });
    this.rows = rows;
    this.rowsH = y;
    if (this.groupsPanel) this.fillGroupsPanel();
  },

  /* The display row under y (canvas pixels): {header} or {track}, or null. */
  rowAt(y) {
    const r = this.rows || [];
    let lo = 0, hi = r.length - 1;
    while (lo <= hi) {
      const m = (lo + hi) >> 1;
      if (y < r[m].y) hi = m - 1; else if (y >= r[m].y + r[m].h) lo = m + 1; else return r[m];
    }
    return null;
  },
  /* The track row under y, as an index of this.tracks, or -1 (a header, a gap). */
  rowOf(y) {
    const r = this.rowAt(y);
    return r && r.track ? r.track.index : -1;
  },
  /* The tracks drawn at y: the track of its row, or every event row of a collapsed
   * group's header. */
  tracksAt(y) {
    const r = this.rowAt(y);
    if (!r) return [];
    if (r.track) return [r.track.index];
    return r.header.collapsed ? r.header.tracks.filter((t) => t.kind !== 'counter').map((t) => t.index) : [];
  },
  /* The tracks whose rows meet [y0, y1] (a collapsed group: all its rows). */
  tracksIn(y0, y1) {
    const out = [];
    for (const r of this.rows || []) {
      if (r.y + r.h <= y0 || r.y >= y1) continue;
      if (r.track) out.push(r.track.index);
      else if (r.header.collapsed) for (const t of r.header.tracks) out.push(t.index);
    }
    return out;
  },

  /* Row shading and the group headers' bands (under the events). */
  drawRows() {
    const c = this.ctx, th = this.theme, pw = this.plotW();
    (this.rows || []).forEach((r, n) => {
      if (r.y > this.H || r.y + r.h < this.axisH) return;
      if (r.header) {
        c.fillStyle = th.axisBg; c.fillRect(this.labelW, r.y, pw, r.h);
        c.strokeStyle = th.line; c.beginPath(); c.moveTo(0, r.y + 0.5); c.lineTo(this.W, r.y + 0.5); c.stroke();
      } else if (n % 2) {
        c.fillStyle = th.alt; c.fillRect(this.labelW, r.y, pw, r.h);
      }
    });
  },

  /* Where a header's controls are (label column x): the arrow and title, up, down, pin. */
  headerControls() {
    const w = this.labelW;
    return { up: [w - 58, w - 42], down: [w - 40, w - 24], pin: [w - 22, w - 4] };
  },

  /* The row labels: group headers with their controls, then a stream's name on its
   * first lane, ellipsized, never squeezed, and a bracket along a stream's lanes. */
  drawLabels() {
    const c = this.ctx, th = this.theme, H = this.H;
    c.fillStyle = th.bg; c.fillRect(0, this.axisH + 1, this.labelW, H);
    c.strokeStyle = th.line; c.beginPath(); c.moveTo(this.labelW + 0.5, 0); c.lineTo(this.labelW + 0.5, H); c.stroke();
    const ctl = this.headerControls();
    for (const r of this.rows || []) {
      if (r.y > H || r.y + r.h < this.axisH) continue;
      if (r.header) {
        const g = r.header, mid = r.y + Math.min(r.h, TL_HEADER_H) / 2 + 0.5;
        c.fillStyle = th.axisBg; c.fillRect(0, r.y + 1, this.labelW, r.h - 1);
        c.fillStyle = th.text; c.font = 'bold 11px system-ui, sans-serif';
        const n = g.tracks.length;
        c.fillText((g.collapsed ? '▸ ' : '▾ ') + this.fit(`${g.title} (${n})`, ctl.up[0] - 20, g.id.startsWith('fw:')), 4, mid);
        c.font = TL_FONT;
        c.fillStyle = th.muted;
        c.fillText('↑', ctl.up[0] + 3, mid); c.fillText('↓', ctl.down[0] + 3, mid);
        /* the pin: filled when pinned */
        const px = (ctl.pin[0] + ctl.pin[1]) / 2;
        c.strokeStyle = g.pinned ? th.text : th.muted; c.fillStyle = g.pinned ? th.text : 'transparent';
        c.beginPath(); c.arc(px, mid - 2, 3.5, 0, 2 * Math.PI); c.fill(); c.stroke();
        c.beginPath(); c.moveTo(px, mid + 1.5); c.lineTo(px, mid + 6); c.stroke();
      }
    }
    let groupTop = 0;
    this.tracks.forEach((tr, i) => {
      if (tr.hidden) return;
      if (tr.first) groupTop = tr.y;
      const next = this.tracks[i + 1];
      if (tr.lane && (!next || next.group !== tr.group || next.hidden)) { /* a bracket along a stream's lanes */
        c.strokeStyle = th.line; c.beginPath(); c.moveTo(10.5, groupTop + 3); c.lineTo(10.5, tr.y + tr.h - 3); c.stroke();
      }
      if (!tr.first) return;
      c.fillStyle = tr.kind === 'instruction' ? th.text : tr.kind === 'counter' ? th.counter : th.muted;
      c.fillText(this.fit(this.rowLabel(tr), this.labelW - 22, tr.kind === 'framework'), 16, tr.y + Math.min(tr.h, this.rowH) / 2);
    });
    c.fillStyle = th.muted; c.fillText('time', 12, this.axisH / 2);
  },

  /* A click on a header's label: its controls, else collapse or expand. True when the
   * click was a header's. */
  headerClick(x, y) {
    const r = this.rowAt(y);
    if (!r || !r.header || x >= this.labelW) return false;
    const g = r.header, ctl = this.headerControls(), inside = (z) => x >= z[0] && x < z[1];
    if (inside(ctl.pin)) this.pinGroup(g.id);
    else if (inside(ctl.up)) this.moveGroup(g.id, -1);
    else if (inside(ctl.down)) this.moveGroup(g.id, 1);
    else this.collapseGroup(g.id);
    return true;
  },

  /* The state's changes: each lays out again, redraws and keeps the state in the hash. */
  regroup() {
    this.layout();
    this.resize();
    this.saveGroups();
  },
  collapseGroup(id, collapsed) {
    const st = this.gstate, on = collapsed === undefined ? !st.collapsed.has(id) : collapsed;
    if (on) st.collapsed.add(id); else st.collapsed.delete(id);
    this.regroup();
  },
  pinGroup(id, pinned) {
    const st = this.gstate, on = pinned === undefined ? !st.pinned.has(id) : pinned;
    if (on) st.pinned.add(id); else st.pinned.delete(id);
    st.order = this.groups.map((g) => g.id);
    this.regroup();
  },
  /* Moves a group one place up (-1) or down (+1) among the pinned or the others. */
  moveGroup(id, dir) {
    const ids = this.groups.map((g) => g.id), i = ids.indexOf(id), j = i + dir;
    if (i < 0 || j < 0 || j >= ids.length || this.groups[j].pinned !== this.groups[i].pinned) return;
    [ids[i], ids[j]] = [ids[j], ids[i]];
    this.gstate.order = ids;
    this.regroup();
  },
  resetGroups() {
    this.gstate = { order: [], pinned: new Set(), collapsed: new Set() };
    this.regroup();
  },

  /* The Tracks panel: every group with its controls, and expand / collapse all. */
  toggleGroupsPanel() {
    if (this.groupsPanel) { this.groupsPanel.remove(); this.groupsPanel = null; return; }
    this.groupsPanel = NX.el('div', { class: 'tl-groups card-inner', 'data-testid': 'tl-groups' });
    this.notice.after(this.groupsPanel);
    this.fillGroupsPanel();
  },
  fillGroupsPanel() {
    const p = this.groupsPanel, b = (text, title, fn, testid) =>
      NX.el('button', { type: 'button', class: 'secondary small', title, 'data-testid': testid, onclick: fn }, text);
    p.replaceChildren(
      NX.el('div', { class: 'toolbar' }, NX.el('b', {}, 'Track groups'),
        NX.el('span', { class: 'muted' }, 'collapse, pin to the top, reorder; kept in the link'),
        NX.el('span', { style: 'flex:1' }),
        b('Expand all', 'expand every group', () => { this.gstate.collapsed.clear(); this.regroup(); }, 'tl-groups-expand'),
        b('Collapse all', 'collapse every group', () => { for (const g of this.groups) this.gstate.collapsed.add(g.id); this.regroup(); }, 'tl-groups-collapse'),
        b('Reset', 'the natural order, nothing pinned or collapsed', () => this.resetGroups(), 'tl-groups-reset'),
        b('×', 'close', () => this.toggleGroupsPanel())),
      NX.el('ul', { class: 'tl-group-list' }, this.groups.map((g) => NX.el('li', { 'data-group': g.id },
        NX.el('label', { title: 'shown expanded' }, NX.el('input', { type: 'checkbox', checked: !g.collapsed,
          onchange: (ev) => this.collapseGroup(g.id, !ev.target.checked) }), ' ', g.title),
        NX.el('span', { class: 'muted' }, ` ${g.tracks.length} row${g.tracks.length === 1 ? '' : 's'}`),
        NX.el('span', { style: 'flex:1' }),
        b(g.pinned ? 'Unpin' : 'Pin', 'keep this group at the top', () => this.pinGroup(g.id), 'pin'),
        b('↑', 'move up', () => this.moveGroup(g.id, -1), 'up'),
        b('↓', 'move down', () => this.moveGroup(g.id, 1), 'down')))));
  },
});
