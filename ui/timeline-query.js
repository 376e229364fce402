/* timeline-query.js: what the timeline asks the server about events beyond the view
 * (docs/ui.md): selection (details drawer, flow arrows), search over the whole profile,
 * the highlight of a source line (its instructions and the DMA transfers they
 * triggered) and the box selection's aggregate, exported as CSV. Errors of a search
 * are shown at the search box. */
'use strict';

/* field op value: op is = (==), !=, <, <=, >, >= or ~ (contains, any case). */
const TL_SEARCH_RE = /^(?:([A-Za-z]\w*)\.)?([A-Za-z_]\w*)\s*(==|=|!=|<=|>=|<|>|~)\s*(.*)$/;
const TL_OPS = { '=': 'eq', '==': 'eq', '!=': 'ne', '<': 'lt', '<=': 'le', '>': 'gt', '>=': 'ge', '~': 'contains' };

/* A CSV field (RFC 4180). */
const csvField = (v) => { const s = v === null || v === undefined ? '' : String(v); return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s; };

Object.assign(Timeline.prototype, {
  searchBar() {
    this.searchInput = NX.el('input', { type: 'search', class: 'tl-search', 'data-testid': 'tl-search',
      placeholder: 'Search the profile: opcode = MATMUL · duration_ns > 1000 · name ~ conv · a name',
      title: 'field = value (also !=, <, <=, >, >=, ~ for "contains"), Table.field = value, or a bare word: ' +
        'instructions by opcode and framework events by name that contain it. / focuses this box.' });
    this.searchInfo = NX.el('span', { class: 'muted tl-search-info', 'data-testid': 'tl-search-info' });
    this.searchToken = 0;
    return NX.el('form', { class: 'tl-bar', onsubmit: (ev) => { ev.preventDefault(); this.search(this.searchInput.value).catch((e) => this.searchError(e)); } },
      this.searchInput,
      NX.el('button', { type: 'button', class: 'secondary', title: 'previous match (shift+N)', onclick: () => this.nextMatch(-1) }, '‹'),
      NX.el('button', { type: 'button', class: 'secondary', 'data-testid': 'tl-search-next', title: 'next match (N)', onclick: () => this.nextMatch(1) }, '›'),
      this.searchInfo);
  },

  /* A search that cannot run or failed: said at the box, the marks cleared. */
  searchError(e) {
    this.searchToken++;
    this.matches = null;
    this.searchInput.classList.add('bad');
    this.searchInfo.classList.add('bad');
    this.searchInfo.textContent = String(e.message || e).replace(/^bad_request: /, '');
    this.draw();
    return null;
  },

  /* The searches a text stands for: [{table, field, op, value, optional}]. A bare word
   * looks for instruction opcodes and framework event names containing it; a field
   * without a table goes to the first table of the timeline that has it;
   * source_location to the instructions of that line and the transfers they triggered. */
  async searchPlans(q) {
    const kinds = new Set(this.tracks.map((t) => t.kind));
    const dmaTable = this.dma === 'packets' ? 'DmaPacket' : 'DmaPacketAggregated';
    const tables = [kinds.has('instruction') && 'Instruction', kinds.has('framework') && 'SystemProfileEvents',
      kinds.has('dma') && dmaTable].filter(Boolean);
    const m = TL_SEARCH_RE.exec(q);
    if (!m) {
      if (/[=<>~]/.test(q)) throw new Error('write field = value, field < value, field ~ text, or a bare word');
      const plans = [];
      if (kinds.has('instruction')) plans.push({ table: 'Instruction', field: 'opcode', op: 'contains', value: q });
      if (kinds.has('framework')) plans.push({ table: 'SystemProfileEvents', field: 'name', op: 'contains', value: q });
      if (!plans.length) throw new Error('this timeline has no instructions or framework events to find by name');
      return plans;
    }
    const value = m[4].trim().replace(/^(['"])(.*)\1$/, '$2'), op = TL_OPS[m[3]];
    if (!value) throw new Error(`write a value after ${m[3]}`);
    if (m[1]) return [{ table: m[1], field: m[2], op, value }];
    if (m[2].toLowerCase() === 'source_location' && kinds.has('instruction')) {
      const plans = [{ table: 'Instruction', field: 'source_location', op, value }];
      if (kinds.has('dma') && dmaTable === 'DmaPacketAggregated')
        plans.push({ table: 'DmaPacketAggregated', field: 'source_location', op, value, optional: true });
      return plans;
    }
    for (const t of tables) {
      const sch = await NX.schema(this.profile, t).catch(() => null);
      if (sch && sch.fields.some((f) => f.name.toLowerCase() === m[2].toLowerCase())) return [{ table: t, field: m[2], op, value }];
    }
    throw new Error(`no table of this timeline (${tables.join(', ')}) has a field '${m[2]}'`);
  },

  /* Searches the whole profile on the server: the count, the first 500 matches of each
   * table marked (outlined, and as ticks on the time axis), the view on the first
   * unless opts.keepView. */
  async search(text, opts) {
    const q = (text || '').trim();
    this.searchInput.classList.remove('bad');
    this.searchInfo.classList.remove('bad');
    if (!q) { this.searchToken++; this.matches = null; this.searchInfo.textContent = ''; this.draw(); return null; }
    const token = ++this.searchToken;
    this.searchInfo.textContent = 'searching…';
    const plans = await this.searchPlans(q);
    if (token !== this.searchToken) return null;
    return this.runSearch(plans, q, opts, token);
  },

  /* The instructions of a source line and the DMA transfers they triggered (the
   * timeline highlight of docs/ui.md), kept in the search box. */
  highlight(loc, opts) {
    const text = `source_location = ${loc}`;
    this.searchInput.value = text;
    return this.search(text, opts);
  },

  async runSearch(plans, text, opts, token) {
    const url = (p) => `${this.base()}/timeline/search?table=${NX.enc(p.table)}&field=${NX.enc(p.field)}` +
      `&op=${p.op}&value=${NX.enc(p.value)}`;
    const results = await Promise.all(plans.map((p) => NX.get(url(p)).catch((e) => {
      if (p.optional) return null;
      throw e;
    })));
    if (token !== this.searchToken) return null;
    const rows = [], keys = new Set(), byTable = {};
    let total = 0;
    for (const r of results.filter(Boolean)) {
      const rs = NX.objects(r.result), n = rs.length ? Number(rs[0].total) : 0;
      total += n;
      byTable[r.table] = n;
      for (const x of rs) {
        rows.push({ table: r.table, kind: r.kind, id: x.id, core: x.core, track: x.track,
          start: this.rel(x.start), end: this.rel(x.end), label: x.label });
        keys.add(r.table + '|' + x.id);
      }
    }
    rows.sort((a, b) => a.start - b.start);
    this.matches = { rows, keys, total, byTable, i: -1, text };
    const marked = rows.length < total ? ` (first ${rows.length} marked)` : '';
    this.searchInfo.textContent = `${NX.fmtNum(total)} match${total === 1 ? '' : 'es'}` + marked;
    if (rows.length && !(opts && opts.keepView)) this.nextMatch(1);
    else this.draw();
    return this.matches;
  },

  nextMatch(dir) {
    const m = this.matches;
    if (!m || !m.rows.length) return;
    m.i = (m.i + dir + m.rows.length) % m.rows.length;
    const r = m.rows[m.i];
    this.searchInfo.textContent = `${m.i + 1} of ${NX.fmtNum(m.total)}`;
    this.focus(r.start, r.end);
    const tr = this.tracks.find((t) => t.kind === r.kind && t.core === r.core && (t.track === r.track || t.stream === r.track));
    if (tr) this.select({ key: tr.key, track: tr, table: r.table, core: r.core, id: r.id, start: r.start,
      end: r.end, label: r.label, count: 1, busy: null, bins: false });
  },

  /* Selects an event (from a click or a search) or a value track's sample: outline,
   * flows, details drawer; null clears. */
  select(h) {
    this.selected = h && !h.counter ? h : null;
    this.flows = []; this.flowsFor = null;
    this.draw();
    this.onSelect(h || null);
    if (h && (h.table === 'Instruction' || h.table === 'DmaPacketAggregated')) {
      NX.get(`${this.base()}/timeline/flows?table=${h.table}&id=${h.id}`).then((r) => {
        if (this.selected !== h) return;
        this.flows = r.result ? NX.objects(r.result).map((f) => Object.assign(f, {
          from_start: this.rel(f.from_start), from_end: this.rel(f.from_end), to_start: this.rel(f.to_start), to_end: this.rel(f.to_end) })) : [];
        this.canvas.dataset.flows = this.flows.length;
        this.flowsFor = h;
        this.draw();
        this.renderDeps();
      }).catch((e) => this.fail(e));
    }
  },

  /* The box selection's aggregate: events overlapping [t0, t1) on the rows the box
   * spans, their durations clipped to the box (GET .../timeline/aggregate): per row
   * (a framework stream with all its lanes) the events and the busy time and share of
   * the box, per row and label the same; Download CSV saves both. */
  async aggregate(t0, t1, rows) {
    t0 = Math.floor(t0); t1 = Math.ceil(t1);
    const width = t1 - t0;
    const picked = new Map(rows.map((i) => [this.tracks[i].key, this.tracks[i]]));
    this.panel.replaceChildren(NX.el('p', { class: 'muted' }, 'Aggregating…'));
    const r = await NX.get(`${this.base()}/timeline/aggregate?t0=${this.abs(t0)}&t1=${this.abs(t1)}&dma=${this.dma}`);
    const all = NX.objects(r.result).filter((x) => picked.has(`${x.kind}|${x.core}|${x.track}`));
    const byRow = new Map(), byLabel = new Map();
    for (const x of all) {
      const tr = picked.get(`${x.kind}|${x.core}|${x.track}`);
      const e = byRow.get(tr.group) || { kind: x.kind, core: x.core, row: tr.stream, count: 0, busy: 0 };
      e.count += x.count;
      /* a stream's busy time is its top lane's: deeper lanes are nested in it */
      if (!tr.lane) e.busy += x.busy;
      byRow.set(tr.group, e);
      const lk = tr.group + '\u0000' + x.label;
      const l = byLabel.get(lk) || { kind: x.kind, core: x.core, row: tr.stream, label: x.label, count: 0, busy: 0 };
      l.count += x.count; l.busy += x.busy;
      byLabel.set(lk, l);
    }
    const rowsOut = [...byRow.values()].sort((a, b) => b.busy - a.busy);
    const labelsOut = [...byLabel.values()].sort((a, b) => b.busy - a.busy);
    const n = rowsOut.reduce((a, x) => a + x.count, 0);
    const pct = (busy) => (100 * busy / width).toFixed(1) + ' %';
    const tbl = (head, list, cells, testid) => NX.el('table', { class: 'grid', 'data-testid': testid },
      NX.el('thead', {}, NX.el('tr', {}, head.map((h, i) => NX.el('th', { class: i > 1 ? 'num' : '' }, h)))),
      NX.el('tbody', {}, list.map((x) => NX.el('tr', {}, cells(x).map((v, i) => NX.el('td', { class: i > 1 ? 'num' : '' }, v))))));
    const csv = () => {
      const lines = [['kind', 'core', 'row', 'label', 'events', 'busy_ns', 'busy_pct_of_box', 'box_t0_ns', 'box_t1_ns'].join(',')];
      for (const x of rowsOut) lines.push([x.kind, x.core, x.row, '', x.count, x.busy, (100 * x.busy / width).toFixed(3), this.abs(t0), this.abs(t1)].map(csvField).join(','));
      for (const x of labelsOut) lines.push([x.kind, x.core, x.row, x.label, x.count, x.busy, (100 * x.busy / width).toFixed(3), this.abs(t0), this.abs(t1)].map(csvField).join(','));
      const a = NX.el('a', { href: URL.createObjectURL(new Blob([lines.join('\r\n') + '\r\n'], { type: 'text/csv' })),
        download: `${this.profile}-selection.csv` });
      document.body.append(a); a.click(); a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    };
    this.panel.replaceChildren(
      NX.el('div', { class: 'toolbar' }, NX.el('h2', { style: 'margin:0' }, 'Selection'),
        NX.el('span', { class: 'muted', 'data-testid': 'tl-aggregate-summary' },
          `${NX.fmtNsExact(t0)} – ${NX.fmtNsExact(t1)} (${NX.fmtNs(width)}) · ${byRow.size} rows · ${NX.fmtNum(n)} events`),
        NX.el('span', { style: 'flex:1' }),
        NX.el('button', { class: 'secondary', 'data-testid': 'tl-aggregate-range', title: 'keep the box\'s time range as an annotation',
          onclick: () => { this.addRange(t0, t1); if (!this.notesPanel) this.toggleNotes(); } }, 'Add as range'),
        NX.el('button', { class: 'secondary', 'data-testid': 'tl-aggregate-csv', onclick: csv }, 'Download CSV'),
        NX.el('button', { class: 'secondary', onclick: () => { this.panel.replaceChildren(); this.box = null; this.draw(); if (this.ops) this.refreshOps(); } }, 'Clear')),
      NX.el('div', { class: 'row', 'data-testid': 'tl-aggregate' },
        NX.el('div', { style: 'flex:1' }, tbl(['Row', 'Kind', 'Events', 'Busy in box', 'Busy %'], rowsOut,
          (x) => [x.row, x.kind, NX.fmtNum(x.count), NX.fmtNs(x.busy), pct(x.busy)], 'tl-aggregate-rows')),
        NX.el('div', { style: 'flex:1.4' }, tbl(['Row', 'Opcode / op / name', 'Events', 'Busy in box', 'Mean'], labelsOut.slice(0, 60),
          (x) => [x.row, x.label, NX.fmtNum(x.count), NX.fmtNs(x.busy), NX.fmtNs(x.busy / x.count)], 'tl-aggregate-labels'))),
      NX.el('p', { class: 'muted', style: 'font-size:12px;margin:6px 0 0' },
        'Durations are clipped to the box; events that overlap on one row each count (a share can pass 100 %).'));
    this.lastAggregate = { t0: this.abs(t0), t1: this.abs(t1), rows: rowsOut, labels: labelsOut, width };
    this.opsWindow = null;
    if (this.ops) this.refreshOps();
    return this.lastAggregate;
  },
});
