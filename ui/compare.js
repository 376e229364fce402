/* compare.js: two profiles side by side (/compare/<a>/<b>, a = before, b = after): the
 * timelines stacked on one time axis with the per-opcode and per-line deltas of their
 * window (compare-timelines.js), the Summary metrics with their deltas, engine active
 * times as paired bars, and the `recommend --compare` report (GET
 * .../analysis?compare=b): bounds, gaps, bottleneck change and the after profile's
 * findings. */
'use strict';

/* before and after: two colours no event or engine uses */
const CMP_COLORS = ['#64748b', '#d97706'];

/* "+1.2 µs" / "−3.4 %" style delta of b against a in the metric's unit, and the change. */
function deltaCells(a, b, unit) {
  if (typeof a !== 'number' || typeof b !== 'number')
    return [el('td', { class: 'num muted' }, a === b ? '=' : '–'), el('td', { class: 'num muted' }, '')];
  const d = b - a;
  /* a difference of percentages is in percentage points */
  const mag = unit === 'percent' ? (+(Math.abs(d) * 100).toPrecision(4)) + ' pp' : NX.fmtUnit(Math.abs(d), unit);
  const txt = d === 0 ? '=' : (d > 0 ? '+' : '−') + mag;
  const rel = a !== 0 ? (100 * d / Math.abs(a)) : null;
  /* only for times is the direction plainly good or bad: shorter is better */
  const timed = unit === 'seconds' || unit === 'nanoseconds';
  return [el('td', { class: 'num ' + (!timed || d === 0 ? '' : d < 0 ? 'down' : 'up') }, txt),
    el('td', { class: 'num muted' }, rel === null || d === 0 ? '' : `${rel > 0 ? '+' : ''}${rel.toFixed(1)} %`)];
}

async function summaryDeltas(a, b, card) {
  const one = (n) => NX.query(n, 'SELECT * FROM Summary LIMIT 1').then((r) => NX.objects(r)[0] || {}).catch(() => ({}));
  const [ra, rb, schema] = await Promise.all([one(a), one(b), NX.schema(a, 'Summary')]);
  const fields = new Map(schema.fields.map((f) => [f.name, f]));
  const cols = [...new Set([...Object.keys(ra), ...Object.keys(rb)])].filter((k) => typeof ra[k] === 'number' || typeof rb[k] === 'number');
  if (!cols.length) { card.replaceChildren(el('h2', {}, 'Summary'), el('p', { class: 'muted' }, 'Neither profile has a Summary (framework traces).')); return; }
  const row = (k) => {
    const f = fields.get(k) || {};
    return el('tr', { 'data-field': k, title: f.description || '' }, el('td', { class: 'mono' }, k),
      el('td', { class: 'num' }, NX.fmtUnit(ra[k], f.unit)), el('td', { class: 'num' }, NX.fmtUnit(rb[k], f.unit)), ...deltaCells(ra[k], rb[k], f.unit));
  };
  const head = () => el('thead', {}, el('tr', {}, el('th', {}, 'Metric'), el('th', { class: 'num' }, a), el('th', { class: 'num' }, b),
    el('th', { class: 'num' }, 'Δ'), el('th', { class: 'num' }, 'change')));
  const keys = KEY_METRICS.filter((k) => cols.includes(k));
  const changed = cols.filter((k) => !keys.includes(k) && ra[k] !== rb[k]);
  card.replaceChildren(el('h2', {}, 'Summary'),
    el('table', { class: 'grid', 'data-testid': 'summary-deltas' }, head(), el('tbody', {}, keys.map(row))),
    el('details', {}, el('summary', {}, `${changed.length} more metrics that differ`),
      el('table', { class: 'grid' }, head(), el('tbody', {}, changed.map(row)))));
}

async function compareEngines(a, b, card, cmp) {
  const q = (n) => NX.query(n, 'SELECT * FROM Summary LIMIT 1').then((r) => engineTimes(n, NX.objects(r)[0])).catch(() => []);
  const [ea, eb] = await Promise.all([q(a), q(b)]);
  const m = new Map();
  for (const [i, rows] of [ea, eb].entries()) for (const r of rows) {
    const e = m.get(r.engine) || [0, 0];
    e[i] = r.busy_ns; m.set(r.engine, e);
  }
  const dma = cmp && cmp.deltas.engines.find((e) => e.name === 'DMA');
  if (dma) m.set('DMA (transfers)', [dma.before_ns, dma.after_ns]);
  const rows = [...m].sort((x, y) => Math.max(...y[1]) - Math.max(...x[1]));
  const max = Math.max(1, ...rows.map(([, v]) => Math.max(...v)));
  card.replaceChildren(el('h2', {}, 'Engine active time'),
    el('div', { class: 'legend', style: 'margin:0 0 8px' }, [a, b].map((n, i) => el('span', { style: `--c:${CMP_COLORS[i]}` }, n))),
    rows.length ? el('div', { class: 'bars pair', 'data-testid': 'compare-engines' }, rows.map(([e, v]) => el('div', { class: 'bar', 'data-engine': e },
      el('span', {}, capital(e)),
      el('div', {}, v.map((ns, i) => el('div', { class: 'track thin' }, el('div', { class: 'fill', style: `width:${(100 * ns / max).toFixed(1)}%;background:${CMP_COLORS[i]}` })))),
      el('span', { class: 'val' }, el('div', {}, NX.fmtNs(v[0])), el('div', {}, NX.fmtNs(v[1])))))) :
      el('p', { class: 'muted' }, 'No engine activity in either profile.'));
}

function compareReport(a, b, card, cmp) {
  const t = cmp.deltas.bounds.find((x) => x.name === 'total_time');
  const gapLabel = new Map(cmp.after.gaps.map((g) => [g.name, g.label]));
  const table = (title, rows, label) => el('div', { style: 'flex:1;min-width:0' }, el('div', { class: 'sub muted' }, title),
    el('table', { class: 'grid' }, el('thead', {}, el('tr', {}, el('th', {}, ''), el('th', { class: 'num' }, a), el('th', { class: 'num' }, b), el('th', { class: 'num' }, 'Δ (ratio)'))),
      el('tbody', {}, rows.map((x) => el('tr', { 'data-name': x.name }, el('td', {}, label(x)), el('td', { class: 'num' }, NX.fmtNs(x.before_ns)),
        el('td', { class: 'num' }, NX.fmtNs(x.after_ns)),
        el('td', { class: 'num ' + (x.delta_ns < 0 && x.text !== '—' ? 'down' : x.delta_ns > 0 && x.text !== '—' ? 'up' : 'muted') }, NX.usToMicro(x.text)))))));
  const status = new Map(cmp.before.findings.map((f) => [f.id, f.status]));
  card.replaceChildren(el('h2', {}, 'recommend --compare'),
    el('p', { 'data-testid': 'compare-headline' }, 'Total time ', el('b', {}, NX.fmtNs(t.before_ns)), ' → ', el('b', {}, NX.fmtNs(t.after_ns)),
      ` (${NX.usToMicro(t.text)}). Bottleneck: `, el('b', {}, cmp.bottleneck.before), cmp.bottleneck.changed ? [' → ', el('b', {}, cmp.bottleneck.after)] : ' (unchanged)', '.',
      el('span', { class: 'muted' }, ' Deltas are after − before; the ratio is before / after.')),
    el('div', { class: 'row' },
      table('Bounds', cmp.deltas.bounds, (x) => x.name.replace(/_/g, ' ')),
      table('Gaps', cmp.deltas.gaps, (x) => gapLabel.get(x.name) || x.name)),
    el('div', { class: 'sub muted', style: 'margin-top:14px' }, `Findings of ${b}, with their status in ${a}`),
    el('table', { class: 'grid', 'data-testid': 'compare-findings' },
      el('thead', {}, el('tr', {}, ['#', 'Finding', a, b, 'Gap', 'Summary'].map((h, i) => el('th', { class: i === 4 ? 'num' : '' }, h)))),
      el('tbody', {}, cmp.after.findings.map((f) => el('tr', {}, el('td', { class: 'num' }, f.rank), el('td', {}, f.title),
        el('td', {}, el('span', { class: 'badge' + (status.get(f.id) === 'found' ? ' found' : ' quiet') }, (status.get(f.id) || '–').replace(/_/g, ' '))),
        el('td', {}, el('span', { class: 'badge' + (f.status === 'found' ? ' found' : ' quiet') }, f.status.replace(/_/g, ' '))),
        el('td', { class: 'num' }, f.gap_ns === null || f.gap_ns === undefined ? '–' : NX.fmtNs(f.gap_ns)),
        el('td', {}, NX.usToMicro(f.summary || '')))))));
}

async function comparePage(a, b) {
  document.title = `${a} → ${b} · Neuron Explorer`;
  setChrome([el('a', { href: '/', 'data-nav': true }, 'Profiles'), ' / compare'], []);
  const sum = el('div', { class: 'card' }, el('h2', {}, 'Summary'), el('p', { class: 'muted' }, 'Loading…'));
  const eng = el('div', { class: 'card', style: 'max-width:620px' }, el('h2', {}, 'Engine active time'), el('p', { class: 'muted' }, 'Loading…'));
  const tlc = el('div', { class: 'card tl-card', 'data-testid': 'compare-timelines' }, el('h2', {}, 'Timelines'), el('p', { class: 'muted' }, 'Loading…'));
  const rep = el('div', { class: 'card', 'data-testid': 'compare-report' }, el('h2', {}, 'recommend --compare'), el('p', { class: 'muted' }, 'Loading…'));
  main.replaceChildren(el('div', { class: 'toolbar' },
    el('h1', { style: 'margin:0' }, el('a', { href: NX.profileUrl(a), 'data-nav': true }, a), el('span', { class: 'muted' }, ' → '),
      el('a', { href: NX.profileUrl(b), 'data-nav': true }, b)), el('span', { class: 'spacer' }),
    el('a', { href: NX.compareUrl(b, a), 'data-nav': true, class: 'button secondary', 'data-testid': 'swap' }, 'Swap')),
  el('div', { style: 'margin-top:12px' }, tlc), el('div', { class: 'row' }, sum, eng), rep);
  let names;
  try { names = new Set((await NX.get('/api/v1/profiles')).profiles.map((p) => p.name)); } catch (e) { main.replaceChildren(errorBox(e)); return; }
  const missing = [a, b].filter((n) => !names.has(n));
  if (missing.length) { /* one error, not a table of dashes */
    main.replaceChildren(el('h1', {}, `${a} → ${b}`), el('div', { class: 'error', 'data-testid': 'error' },
      `There is no profile named ${missing.map((n) => `'${n}'`).join(' or ')} on this server's data path. `,
      el('a', { href: '/', 'data-nav': true }, 'See the profiles')));
    return;
  }
  compareTimelines(a, b, tlc).catch((e) => tlc.replaceChildren(el('h2', {}, 'Timelines'), errorBox(e)));
  const both = (await Promise.all([hasInstructions(a), hasInstructions(b)])).every(Boolean);
  if (!both)
    rep.replaceChildren(el('h2', {}, 'recommend --compare'), el('p', { class: 'muted' }, 'The comparison of the analyses needs two device profiles.'));
  const cmp = !both ? null : await NX.get(`${NX.profileBase(a)}/analysis?compare=${NX.enc(b)}`).catch((e) => {
    rep.replaceChildren(el('h2', {}, 'recommend --compare'), errorBox(e));
    return null;
  });
  if (cmp) compareReport(a, b, rep, cmp);
  summaryDeltas(a, b, sum).catch((e) => sum.replaceChildren(el('h2', {}, 'Summary'), errorBox(e)));
  compareEngines(a, b, eng, cmp).catch((e) => eng.replaceChildren(el('h2', {}, 'Engine active time'), errorBox(e)));
}
