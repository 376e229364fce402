/* timeline-ops.js: the timeline's operator table (docs/ui.md): for the view, for the
 * time range of the box selection when there is one, or for an annotation's range (or
 * the range between two markers, opsFor), per opcode (DMA op, framework event
 * name) and per source line the events, their busy time clipped to the window, its share
 * and the mean; per line also the DMA transfers the line triggered. From the server:
 * .../timeline/aggregate (by row and label) and .../timeline/lines?t0&t1 (by line);
 * Download CSV saves both tables. While open it follows the view. */
'use strict';

/* The operators of [t0, t1] (absolute profile ns, exact text) of the profile at API base
 * `base`, durations clipped to the window: {ops: [{kind, label, count, busy}] busiest
 * first, kindBusy: {kind: busy}, lines: [{loc, n, dur, dma_n, dma_bytes, dma_ns}]} (lines
 * only for a device profile). The operator table and the compare page use it. */
async function tlOperators(base, t0, t1, dma, device) {
  const q = `t0=${t0}&t1=${t1}`;
  const [agg, lines] = await Promise.all([NX.get(`${base}/timeline/aggregate?${q}&dma=${dma}`),
    device ? NX.get(`${base}/timeline/lines?${q}`) : null]);
  const byLabel = new Map(), kindBusy = {};
  for (const x of NX.objects(agg.result)) { /* per kind and label, over every row */
    const k = x.kind + '\u0000' + x.label;
    const e = byLabel.get(k) || { kind: x.kind, label: x.label, count: 0, busy: 0 };
    e.count += Number(x.count); e.busy += Number(x.busy);
    byLabel.set(k, e);
    kindBusy[x.kind] = (kindBusy[x.kind] || 0) + Number(x.busy);
  }
  const lrows = lines && lines.result ? NX.objects(lines.result).map((r) => ({ loc: r.loc, n: Number(r.n), dur: Number(r.dur),
    dma_n: Number(r.dma_n), dma_bytes: Number(r.dma_bytes), dma_ns: Number(r.dma_ns) })) : [];
  return { ops: [...byLabel.values()].sort((a, b) => b.busy - a.busy), kindBusy, lines: lrows };
}

Object.assign(Timeline.prototype, {
  /* Opens or closes the operator table under the canvas. */
  toggleOps() {
    if (this.ops) { this.ops.remove(); this.ops = null; this.opsWindow = null; return; }
    this.ops = NX.el('div', { class: 'tl-ops card-inner', 'data-testid': 'tl-ops' });
    this.legend.after(this.ops);
    this.refreshOps();
  },

  /* Refreshes the table when the view has rested half a second (setView calls it). */
  opsSoon() {
    if (!this.ops || this.box || this.opsWindow) return;
    clearTimeout(this.opsTimer);
    this.opsTimer = setTimeout(() => this.refreshOps(), 500);
  },

  /* The operator table of [t0, t1] (relative ns), named `what`, opened if closed. */
  opsFor(t0, t1, what) {
    this.opsWindow = { t0: Math.floor(t0), t1: Math.ceil(t1), what };
    if (!this.ops) this.toggleOps(); else this.refreshOps();
  },

  async refreshOps() {
    const box = !this.opsWindow && this.box && this.lastAggregate, fixed = this.opsWindow;
    const t0 = fixed ? fixed.t0 : box ? Number(NX.big(box.t0) - this.origin) : Math.floor(this.t0);
    const t1 = fixed ? fixed.t1 : box ? Number(NX.big(box.t1) - this.origin) : Math.ceil(this.t1);
    const panel = this.ops, token = this.opsToken = (this.opsToken || 0) + 1;
    if (!panel) return;
    const device = this.tracks.some((t) => t.kind === 'instruction');
    panel.replaceChildren(NX.el('p', { class: 'muted' }, 'Counting operators…'));
    let got;
    try { got = await tlOperators(this.base(), this.abs(t0), this.abs(t1), this.dma, device); }
    catch (e) { if (token === this.opsToken) panel.replaceChildren(errorBox(e)); return; }
    if (token !== this.opsToken || panel !== this.ops) return;
    const width = t1 - t0, { ops, kindBusy } = got, lrows = got.lines;
    const lineBusy = lrows.reduce((a, r) => a + r.dur, 0);
    const pct = (v, of) => (of > 0 ? (100 * v / of).toFixed(1) + ' %' : '–');
    const head = (cols, k) => NX.el('thead', {}, NX.el('tr', {}, cols.map((c, i) => NX.el('th', { class: i >= k ? 'num' : '' }, c))));
    const row = (cells, k) => NX.el('tr', {}, cells.map((v, i) => NX.el('td', { class: i >= k ? 'num' : '' }, v)));
    const csv = () => {
      const f = (v) => { const s = v === null || v === undefined ? '' : String(v); return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s; };
      const out = [['table', 'kind', 'label', 'events', 'busy_ns', 'share_pct', 'dma_transfers', 'dma_bytes', 'dma_busy_ns', 'window_t0_ns', 'window_t1_ns'].join(',')];
      for (const o of ops) out.push(['operator', o.kind, o.label, o.count, o.busy, (100 * o.busy / (kindBusy[o.kind] || 1)).toFixed(3), '', '', '', this.abs(t0), this.abs(t1)].map(f).join(','));
      for (const l of lrows) out.push(['line', 'instruction', l.loc, l.n, l.dur, (100 * l.dur / (lineBusy || 1)).toFixed(3), l.dma_n, l.dma_bytes, l.dma_ns, this.abs(t0), this.abs(t1)].map(f).join(','));
      const a = NX.el('a', { href: URL.createObjectURL(new Blob([out.join('\r\n') + '\r\n'], { type: 'text/csv' })), download: `${this.profile}-operators.csv` });
      document.body.append(a); a.click(); a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    };
    this.opsData = { t0: this.abs(t0), t1: this.abs(t1), ops, lines: lrows };
    const opsTable = NX.el('table', { class: 'grid', 'data-testid': 'tl-ops-labels' },
      head(['Opcode / op / name', 'Kind', 'Events', 'Busy', 'Share of kind', 'Mean'], 2),
      NX.el('tbody', {}, ops.slice(0, 100).map((o) => row([NX.el('span', { class: 'chip', style: `--c:${NX.color(o.label)}` }, o.label),
        o.kind, NX.fmtNum(o.count), NX.fmtNs(o.busy), pct(o.busy, kindBusy[o.kind]), NX.fmtNs(o.busy / o.count)], 2))));
    const linesTable = device ? NX.el('table', { class: 'grid', 'data-testid': 'tl-ops-lines' },
      head(['Source line', 'Instr.', 'Busy', 'Share', 'DMA transfers', 'DMA bytes', 'DMA busy'], 1),
      NX.el('tbody', {}, lrows.slice(0, 100).map((l) => row([
        NX.el('a', { href: NX.sourceUrl(this.profile, l.loc), 'data-nav': true, class: 'mono' }, l.loc),
        NX.fmtNum(l.n), NX.fmtNs(l.dur), pct(l.dur, lineBusy), l.dma_n ? NX.fmtNum(l.dma_n) : '',
        l.dma_n ? NX.fmtBytes(l.dma_bytes) : '', l.dma_n ? NX.fmtNs(l.dma_ns) : ''], 1)))) : null;
    panel.replaceChildren(
      NX.el('div', { class: 'toolbar' }, NX.el('h2', { style: 'margin:0' }, 'Operators'),
        NX.el('span', { class: 'muted', 'data-testid': 'tl-ops-window' },
          `${fixed ? 'in ' + fixed.what : box ? 'in the box' : 'in the view'}: ${NX.fmtNsExact(t0)} – ${NX.fmtNsExact(t1)} (${NX.fmtNs(width)}); durations clipped to it`),
        NX.el('span', { style: 'flex:1' }),
        NX.el('button', { class: 'secondary', 'data-testid': 'tl-ops-csv', onclick: csv }, 'Download CSV'),
        NX.el('button', { class: 'secondary', onclick: () => this.toggleOps() }, 'Close')),
      NX.el('div', { class: 'row' }, NX.el('div', { style: 'flex:1;min-width:0' }, opsTable),
        linesTable ? NX.el('div', { style: 'flex:1.3;min-width:0' }, linesTable) : null));
  },
});
