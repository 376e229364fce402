/* compare-timelines.js: the compare page's timelines (docs/ui.md, "Compare"): the two
 * profiles' timelines stacked on one time axis, aligned at their starts (each profile's
 * time from its own first event), both as long as the longer one; a zoom or pan of either
 * moves both. Under them, for the window both show, the deltas per opcode (DMA op,
 * framework event name) and per source line: events and busy time clipped to the window
 * in each, and after - before (from .../timeline/aggregate and .../timeline/lines, as the
 * operator table has them: tlOperators). */
'use strict';

async function compareTimelines(a, b, card) {
  const roots = [el('div', { class: 'tl-main' }), el('div', { class: 'tl-main' })];
  const deltas = el('div', { class: 'cmp-deltas', 'data-testid': 'cmp-deltas' });
  const tag = (n, i) => el('div', { class: 'cmp-tl-name' }, el('span', { class: 'chip', style: `--c:${CMP_COLORS[i]}` }, i ? 'after' : 'before'), ' ',
    el('a', { href: NX.profileUrl(n), 'data-nav': true }, n));
  card.replaceChildren(el('div', { class: 'toolbar' }, el('h2', { style: 'margin:0' }, 'Timelines'),
    el('span', { class: 'muted' }, 'aligned at their starts, on one time axis: a zoom or pan of either moves both'),
    el('span', { style: 'flex:1' }),
    el('button', { class: 'secondary', 'data-testid': 'cmp-reset', onclick: () => tls[0].reset() }, 'Reset')),
  tag(a, 0), roots[0], tag(b, 1), roots[1], deltas);
  let syncing = false, timer = 0;
  const sync = (i) => {
    const me = tls[i], other = tls[1 - i];
    if (syncing || !ready) return;
    syncing = true;
    try { if (other.t0 !== me.t0 || other.t1 !== me.t1) other.setView(me.t0, me.t1); } finally { syncing = false; }
    clearTimeout(timer);
    timer = setTimeout(() => refresh().catch((e) => deltas.replaceChildren(errorBox(e))), 500);
  };
  let ready = false;
  const tls = [a, b].map((n, i) => new Timeline(roots[i], n, { embedded: true, onView: () => sync(i) }));
  window.nx = Object.assign(window.nx || {}, { compare: tls });
  await Promise.all(tls.map((t) => t.load(null)));
  /* one axis: both as long as the longer profile */
  const end = Math.max(tls[0].full[1], tls[1].full[1]);
  for (const t of tls) { t.full = [0, end]; t.t0 = 0; t.t1 = end; t.redraw(); t.fetchSoon(); }
  ready = true;
  let token = 0;
  const refresh = async () => {
    const my = ++token, t0 = Math.max(0, Math.floor(tls[0].t0)), t1 = Math.ceil(tls[0].t1);
    deltas.dataset.state = 'loading';
    const got = await Promise.all(tls.map((t) => tlOperators(t.base(), t.abs(t0), t.abs(t1), t.dma,
      t.tracks.some((r) => r.kind === 'instruction'))));
    if (my !== token) return;
    deltas.replaceChildren(...compareDeltaTables(a, b, got, t0, t1));
    window.nx.compareDeltas = { t0, t1, got };
    deltas.dataset.state = 'ready';
  };
  await refresh().catch((e) => deltas.replaceChildren(errorBox(e)));
}

/* The per-opcode and per-line delta tables of two tlOperators results, the largest
 * changes of busy time first. */
function compareDeltaTables(a, b, got, t0, t1) {
  const join = (xs, ys, key) => {
    const m = new Map();
    for (const [i, list] of [xs, ys].entries()) for (const x of list) {
      const k = key(x), e = m.get(k) || { x, v: [null, null] };
      e.v[i] = x; m.set(k, e);
    }
    return [...m.values()];
  };
  const busy = (x, f) => (x ? x[f] : 0);
  const sign = (d) => (d === 0 ? '=' : (d > 0 ? '+' : '−') + NX.fmtNs(Math.abs(d)));
  const cls = (d) => 'num ' + (d < 0 ? 'down' : d > 0 ? 'up' : 'muted');
  const head = (cols) => el('thead', {}, el('tr', {}, cols.map((c, i) => el('th', { class: i ? 'num' : '' }, c))));
  const ops = join(got[0].ops, got[1].ops, (o) => o.kind + '\u0000' + o.label)
    .map((e) => Object.assign(e, { d: busy(e.v[1], 'busy') - busy(e.v[0], 'busy') }))
    .sort((p, q) => Math.abs(q.d) - Math.abs(p.d));
  const lines = join(got[0].lines, got[1].lines, (l) => l.loc)
    .map((e) => Object.assign(e, { d: busy(e.v[1], 'dur') - busy(e.v[0], 'dur') }))
    .sort((p, q) => Math.abs(q.d) - Math.abs(p.d));
  const n = (x, f) => (x ? NX.fmtNum(x[f]) : '–'), ns = (x, f) => (x ? NX.fmtNs(x[f]) : '–');
  const out = [el('div', { class: 'toolbar', style: 'margin-top:12px' }, el('h2', { style: 'margin:0' }, 'Deltas in the window'),
    el('span', { class: 'muted', 'data-testid': 'cmp-window' },
      `${NX.fmtNsExact(t0)} – ${NX.fmtNsExact(t1)} from each start; busy time clipped to it; after − before, largest changes first`))];
  out.push(el('div', { class: 'row' },
    el('div', { style: 'flex:1;min-width:0' }, el('table', { class: 'grid', 'data-testid': 'cmp-ops' },
      head(['Opcode / op / name', `events ${a}`, `events ${b}`, `busy ${a}`, `busy ${b}`, 'Δ busy']),
      el('tbody', {}, ops.slice(0, 60).map((e) => el('tr', { 'data-label': e.x.label, 'data-kind': e.x.kind },
        el('td', {}, el('span', { class: 'chip', style: `--c:${NX.color(e.x.label)}` }, e.x.label), el('span', { class: 'muted' }, ' ' + e.x.kind)),
        el('td', { class: 'num' }, n(e.v[0], 'count')), el('td', { class: 'num' }, n(e.v[1], 'count')),
        el('td', { class: 'num' }, ns(e.v[0], 'busy')), el('td', { class: 'num' }, ns(e.v[1], 'busy')),
        el('td', { class: cls(e.d) }, sign(e.d))))))),
    lines.length ? el('div', { style: 'flex:1;min-width:0' }, el('table', { class: 'grid', 'data-testid': 'cmp-lines' },
      head(['Source line', `busy ${a}`, `busy ${b}`, 'Δ busy', `DMA ${a}`, `DMA ${b}`]),
      el('tbody', {}, lines.slice(0, 60).map((e) => el('tr', { 'data-loc': e.x.loc },
        el('td', { class: 'mono' }, e.x.loc),
        el('td', { class: 'num' }, ns(e.v[0], 'dur')), el('td', { class: 'num' }, ns(e.v[1], 'dur')),
        el('td', { class: cls(e.d) }, sign(e.d)),
        el('td', { class: 'num' }, e.v[0] && e.v[0].dma_n ? NX.fmtBytes(e.v[0].dma_bytes) : '–'),
        el('td', { class: 'num' }, e.v[1] && e.v[1].dma_n ? NX.fmtBytes(e.v[1].dma_bytes) : '–')))))) : null));
  return out;
}
