/* overview.js: the cards of a profile's page (/profile/<name>): the headline line above
 * the timeline (total time and the bottleneck as recommend names it, from
 * .../analysis?part=bounds), Summary metrics with their SchemaFields units and
 * descriptions, engine active time (recommend's engines, DMA included); and the Analysis
 * page (/profile/<name>/analysis): the `recommend` analysis (bounds and gaps as one
 * chart, ranked findings with their source lines, each a link to the source view and to
 * the timeline). A framework-only profile gets its event streams instead. */
'use strict';

/* One colour per engine, the same on every page. */
const ENGINE_COLORS = { tensor: '#2f6db3', tensormatrix: '#89b4e3', vector: '#2e8b57', scalar: '#e07b39',
  gpsimd: '#8c6bb1', sync: '#9c755f', dma: '#1b9aaa' };
const engineColor = (e) => ENGINE_COLORS[String(e).toLowerCase()] || '#4e79a7';
const capital = (s) => NX.engineName(s);

const KEY_METRICS = ['total_time', 'event_count', 'hardware_flops', 'mfu_estimated_percent',
  'mm_arithmetic_intensity', 'tensor_engine_active_time_percent', 'vector_engine_active_time_percent',
  'dma_active_time_percent', 'dma_transfer_total_bytes', 'mbu_estimated_percent', 'hbm_read_bytes', 'hbm_write_bytes'];

/* A tile: the value formatted in its unit (the formatted value carries that unit; the
 * stored unit is in the tooltip), the field's name and description. */
function metricTile(k, v, f) {
  const stored = f.unit && f.unit !== 'count' ? ` (stored in ${f.unit})` : '';
  return el('div', { class: 'metric', title: (f.description || '') + stored, 'data-field': k },
    el('div', { class: 'v' }, NX.fmtUnit(v, f.unit)),
    el('div', { class: 'k' }, k.replace(/_/g, ' ')),
    f.description ? el('div', { class: 'd' }, f.description) : null);
}

/* "Compare with…": the other profiles of the data path; picking one opens the compare
 * page with this profile as "before". */
function compareControl(name) {
  const sel = el('select', { 'data-testid': 'compare-with', title: 'Compare this profile with another',
    onchange: () => { if (sel.value) go(NX.compareUrl(name, sel.value)); } }, el('option', { value: '' }, 'Compare with…'));
  NX.get('/api/v1/profiles').then((r) => sel.append(...r.profiles.filter((p) => p.name !== name)
    .map((p) => el('option', { value: p.name }, p.name)))).catch(() => { sel.hidden = true; });
  return sel;
}

/* Summary: headline tiles and every column in a table. Returns the Summary row. */
async function summaryCard(name, card) {
  const [res, schema] = await Promise.all([NX.query(name, 'SELECT * FROM Summary LIMIT 1'), NX.schema(name, 'Summary')]);
  const row = NX.objects(res)[0];
  if (!row) return frameworkCard(name, card);
  const fields = new Map(schema.fields.map((f) => [f.name, f]));
  const keys = KEY_METRICS.filter((k) => row[k] !== null && row[k] !== undefined);
  const all = el('table', { class: 'grid' },
    el('thead', {}, el('tr', {}, el('th', {}, 'Metric'), el('th', { class: 'num' }, 'Value'), el('th', {}, 'Unit'), el('th', {}, 'Description'))),
    el('tbody', {}, res.columns.map((c) => {
      const f = fields.get(c.name) || {};
      return el('tr', {}, el('td', { class: 'mono' }, c.name), el('td', { class: 'num' }, NX.fmtUnit(row[c.name], f.unit)),
        el('td', { class: 'muted' }, f.unit || ''), el('td', { class: 'muted' }, f.description || ''));
    })));
  card.replaceChildren(el('h2', {}, 'Summary'),
    el('div', { class: 'metrics', 'data-testid': 'summary' }, keys.map((k) => metricTile(k, row[k], fields.get(k) || {}))),
    el('details', {}, el('summary', {}, `All ${res.columns.length} metrics with units and descriptions`), all));
  return row;
}

/* A framework trace has no Summary: its streams and busiest events instead. */
async function frameworkCard(name, card) {
  const q = (sql) => NX.query(name, sql).then(NX.objects);
  const [[tot], streams, top] = await Promise.all([
    q('SELECT count(*) AS events, count(DISTINCT framework_stream_id) AS streams, ' +
      'max(end_ts) FILTER (duration_ns > 0) - min(start_ts) FILTER (duration_ns > 0) AS span_ns FROM SystemProfileEvents'),
    q('SELECT trace_event_source AS source, instance_id, count(DISTINCT framework_stream_id) AS streams, ' +
      'count(*) AS events FROM SystemProfileEvents GROUP BY ALL ORDER BY events DESC LIMIT 10'),
    q('SELECT name, count(*) AS n, sum(duration_ns) AS total_ns FROM SystemProfileEvents ' +
      'WHERE duration_ns > 0 GROUP BY name ORDER BY total_ns DESC LIMIT 10')]);
  const max = Math.max(1, ...top.map((r) => r.total_ns));
  card.replaceChildren(el('h2', {}, 'Framework trace'),
    el('div', { class: 'metrics', 'data-testid': 'summary' },
      metricTile('span', tot.span_ns, { unit: 'nanoseconds', description: 'From the first event start to the last event end.' }),
      metricTile('events', tot.events, { unit: 'count', description: 'SystemProfileEvents rows (metadata events included).' }),
      metricTile('streams', tot.streams, { unit: 'count', description: 'Distinct instance/pid/tid streams.' })),
    el('div', { class: 'sub muted', style: 'margin-top:14px' }, 'Busiest events (total duration)'),
    el('div', { class: 'bars wide' }, top.map((r) => el('div', { class: 'bar' }, el('span', { class: 'mono', title: r.name }, r.name),
      el('div', { class: 'track' }, el('div', { class: 'fill', style: `width:${(100 * r.total_ns / max).toFixed(1)}%;background:#b07aa1` })),
      el('span', { class: 'val' }, `${NX.fmtNs(r.total_ns)} · ${r.n}×`)))),
    el('table', { class: 'grid', style: 'margin-top:12px' }, el('thead', {}, el('tr', {}, ['Source', 'Instance', 'Streams', 'Events'].map((h, i) => el('th', { class: i > 1 ? 'num' : '' }, h)))),
      el('tbody', {}, streams.map((r) => el('tr', {}, el('td', {}, r.source), el('td', { class: 'mono' }, r.instance_id),
        el('td', { class: 'num' }, r.streams), el('td', { class: 'num' }, NX.fmtNum(r.events)))))));
  return tot;
}

/* Per engine its ActiveTime total in ns: from the Summary row, which holds those sums
 * (<engine>_engine_active_time, seconds: docs/derived-tables.md), else from ActiveTime
 * itself (one aggregate over a table of about 1.5 rows per 100 events). The compare
 * page's pairs. */
const SUMMARY_ENGINES = ['tensor', 'vector', 'scalar', 'gpsimd', 'sync'];
async function engineTimes(name, row) {
  if (row && SUMMARY_ENGINES.every((e) => typeof row[`${e}_engine_active_time`] === 'number'))
    return SUMMARY_ENGINES.map((e) => ({ engine: e, busy_ns: Math.round(row[`${e}_engine_active_time`] * 1e9) }))
      .filter((r) => r.busy_ns > 0).sort((a, b) => b.busy_ns - a.busy_ns);
  return NX.objects(await NX.query(name, 'SELECT engine, SUM(duration_ns) AS busy_ns FROM ActiveTime GROUP BY engine ORDER BY busy_ns DESC'));
}

/* The engines as recommend weighs them (Tensor, Vector, Scalar, GpSimd and the DMA, from
 * .../analysis?part=bounds), the bottleneck marked; bounds is that report's promise. */
async function enginesCard(name, card, row, bounds) {
  const r = bounds && await bounds;
  if (!r || !r.engines) { card.hidden = true; return; } /* a framework trace: no engines */
  const total = r.inputs && r.inputs.total_ns;
  const rows = r.engines.filter((e) => e.active_ns > 0 || e.engine === r.bottleneck).sort((a, b) => b.active_ns - a.active_ns);
  const max = total || Math.max(1, ...rows.map((e) => e.active_ns));
  card.replaceChildren(el('h2', {}, 'Engine active time'),
    el('div', { class: 'bars', 'data-testid': 'engines' }, rows.map((e) => el('div', { class: 'bar', 'data-engine': e.engine },
      el('span', {}, NX.engineName(e.engine), e.engine === r.bottleneck ? el('span', { class: 'badge found', style: 'margin-left:6px' }, 'bottleneck') : null),
      el('div', { class: 'track' }, el('div', { class: 'fill', style: `width:${(100 * e.active_ns / max).toFixed(1)}%;background:${engineColor(e.engine)}` })),
      el('span', { class: 'val' }, `${NX.fmtNs(e.active_ns)} · ${(100 * e.active_ns / max).toFixed(1)} %`)))),
    el('p', { class: 'muted', style: 'margin:8px 0 0;font-size:12px' },
      'Share of the total time each engine was busy, as recommend counts it (ActiveTime; DMA: the packets\' merged time).'));
}

/* The line beside the profile's name: its kind and, for a device profile, the total
 * time and the bottleneck as recommend names it; for a framework trace its span. */
async function headline(name, box, row, bounds) {
  const item = (k, v, testid) => el('span', { class: 'hl-item', 'data-testid': testid }, el('span', { class: 'muted' }, k + ' '), el('b', {}, v));
  if (row.total_time !== undefined) {
    box.replaceChildren(el('span', { class: 'badge' }, 'device'), item('total', NX.fmtUnit(row.total_time, 'seconds'), 'hl-total'));
    const r = bounds && await bounds;
    if (r && r.bottleneck) box.append(item('bottleneck', NX.engineName(r.bottleneck), 'hl-bottleneck'));
    if (row.mfu_estimated_percent !== undefined && row.mfu_estimated_percent !== null)
      box.append(item('MFU', NX.fmtUnit(row.mfu_estimated_percent, 'percent'), 'hl-mfu'));
    box.append(el('a', { href: NX.profileUrl(name) + '/analysis', 'data-nav': true, 'data-testid': 'hl-analysis' }, 'Analysis →'));
  } else if (row.span_ns !== undefined) {
    box.replaceChildren(el('span', { class: 'badge framework' }, 'framework'), item('span', NX.fmtNs(row.span_ns), 'hl-total'),
      item('events', NX.fmtNum(row.events), 'hl-events'), item('streams', NX.fmtNum(row.streams), 'hl-streams'));
  }
}

const GAP_COLORS = { memory: '#4e79a7', compute: '#59a14f', pipeline: '#f28e2b' };

/* Bounds and gaps on one time axis (SVG): each bound is the time the kernel would take if
 * only that limited it, each gap the time lost; the dashed line is the measured total. */
function boundsChart(r) {
  const NS = 'http://www.w3.org/2000/svg';
  const svg = (tag, attrs, ...kids) => {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    for (const k of kids) e.append(k);
    return e;
  };
  const total = (r.inputs && r.inputs.total_ns) || 1;
  const rows = [{ head: 'Bounds' }, ...r.bounds.map((b) => ({ label: b.name.replace(/_/g, ' '), ns: b.ns, color: b.name === 'total_time' ? '#1f2937' : '#94a3b8',
    note: b.engine ? `(${b.engine})` : '' })), { head: 'Gaps' },
  ...r.gaps.map((g) => ({ label: g.label || g.name, ns: g.ns, color: GAP_COLORS[g.family] || '#b07aa1', note: g.family }))];
  const max = Math.max(total, ...rows.map((x) => x.ns || 0)) * 1.02;
  const W = 1000, L = 190, R = 150, rowH = 20, headH = 24, top = 8;
  let y = top;
  const g = svg('g');
  for (const x of rows) {
    if (x.head) {
      g.append(svg('text', { x: 0, y: y + 16, class: 'bc-head' }, x.head));
      y += headH;
      continue;
    }
    const w = Math.max(0, (W - L - R) * (x.ns || 0) / max);
    const t = svg('g', { 'data-name': x.label });
    t.append(svg('title', {}, `${x.label}: ${NX.fmtNs(x.ns)} (${(100 * (x.ns || 0) / total).toFixed(1)} % of the total)`),
      svg('text', { x: 0, y: y + 14, class: 'bc-label' }, x.label),
      svg('rect', { x: L, y: y + 3, width: W - L - R, height: rowH - 6, class: 'bc-bg' }),
      svg('rect', { x: L, y: y + 3, width: w.toFixed(1), height: rowH - 6, rx: 2, fill: x.color }),
      svg('text', { x: W - R + 8, y: y + 14, class: 'bc-val' }, `${NX.fmtNs(x.ns)} · ${(100 * (x.ns || 0) / total).toFixed(1)} %`));
    g.append(t);
    y += rowH;
  }
  const H = y + 22;
  const tx = L + (W - L - R) * total / max;
  const axis = svg('g');
  /* ticks at round times (as the timeline's axis), three to six of them */
  const step = NX.niceStep(max / 5), unit = NX.timeUnit(max);
  for (let v = 0; v <= max; v += step) {
    const x = L + (W - L - R) * v / max;
    axis.append(svg('line', { x1: x, x2: x, y1: top, y2: y, class: 'bc-grid' }),
      svg('text', { x, y: y + 16, class: 'bc-tick', 'text-anchor': 'middle' },
        NX.fmtTick(v, step, unit)));
  }
  axis.append(svg('line', { x1: tx, x2: tx, y1: top, y2: y, class: 'bc-total' }),
    svg('text', { x: tx - 4, y: top + 14, class: 'bc-tick', 'text-anchor': 'end' }, 'measured total'));
  return svg('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: 'bounds-chart', 'data-testid': 'bounds-chart', role: 'img',
    'aria-label': 'bounds and gaps' }, axis, g);
}

/* The source lines a finding names: its `lines` table's "source" column. */
function findingSources(f) {
  const L = f.lines;
  if (!L || !L.columns) return [];
  const i = L.columns.indexOf('source');
  if (i < 0) return [];
  const seen = [];
  for (const r of L.rows) if (r[i] && !seen.includes(r[i])) seen.push(r[i]);
  return seen;
}

/* How many device instructions a profile has (what `recommend` analyses; 0 without): the
 * rows listDbFiles reads from the footers, else (a fleet run) a count through SQL, which
 * makes the server cut a large Instruction table into slices (docs/memory.md). */
const instructionCount = (name) => NX.search(name, { type: 'listDbFiles' }).then((f) => {
  const t = f.tables.find((x) => x.name === 'Instruction');
  if (!t) return 0;
  if (t.rows !== null && t.rows !== undefined) return t.rows;
  return NX.query(name, 'SELECT count(*) FROM Instruction').then((x) => x.rows[0][0]);
}).catch(() => 0);
const hasInstructions = (name) => instructionCount(name).then((n) => n > 0);

/* The Analysis page: the `recommend` analysis (GET .../analysis): bounds and gaps chart,
 * ranked findings with their source lines (links to the source view and the timeline). */
async function analysisPage(name) {
  document.title = `Analysis · ${name} · Neuron Explorer`;
  profileChrome(name, 'analysis');
  const card = el('div', { class: 'card', 'data-testid': 'analysis' }, el('h2', {}, 'Analysis'), el('p', { class: 'muted' }, 'Loading…'));
  main.replaceChildren(el('p', { class: 'muted' }, 'Loading…'));
  try { if (!(await profileExists(name, main))) return; } catch (e) { main.replaceChildren(errorBox(e)); return; }
  main.replaceChildren(el('div', { class: 'page-head' }, el('h1', {}, name), el('span', { class: 'spacer' }), compareControl(name)), card);
  await analysisCard(name, card).catch((e) => card.replaceChildren(el('h2', {}, 'Analysis'), errorBox(e)));
}

async function analysisCard(name, card) {
  const n = await instructionCount(name);
  if (!n) {
    card.replaceChildren(el('h2', {}, 'Analysis'), el('p', { class: 'muted' }, 'The analysis (recommend) needs device instructions; this profile has none.'));
    return;
  }
  const r = (await NX.get(NX.profileBase(name) + '/analysis')).report;
  const dq = r.data_quality && r.data_quality.counts;
  const noSrc = dq && dq.instructions > 0 && !dq.instructions_with_source;
  card.replaceChildren(...[el('h2', {}, 'Analysis ', el('span', { class: 'muted', style: 'font-weight:400' },
    `bottleneck: ${r.bottleneck ? NX.engineName(r.bottleneck) : '–'} · the method is recommend's (docs/recommend.md)`)),
  boundsChart(r),
  noSrc ? el('p', { class: 'muted' }, 'The instructions carry no source locations: compile with debug info to get source lines.') : null,
  el('table', { class: 'grid', 'data-testid': 'findings', style: 'margin-top:12px' },
    el('thead', {}, el('tr', {}, ['#', 'Finding', 'Status', 'Gap', 'Source lines', 'Summary'].map((h, i) => el('th', { class: i === 3 ? 'num' : '' }, h)))),
    el('tbody', {}, r.findings.map((f) => el('tr', { 'data-finding': f.id }, el('td', { class: 'num' }, f.rank), el('td', {}, f.title),
      el('td', {}, el('span', { class: 'badge' + (f.status === 'found' ? ' found' : ' quiet') }, f.status.replace(/_/g, ' '))),
      el('td', { class: 'num' }, f.gap_ns === null || f.gap_ns === undefined ? '–' : NX.fmtNs(f.gap_ns)),
      el('td', { class: 'srclinks' }, findingSources(f).slice(0, 4).map((s) => el('div', {},
        el('a', { href: NX.sourceUrl(name, s), 'data-nav': true, class: 'mono', 'data-testid': 'finding-source',
          title: 'Open in the source view' }, s), ' ',
        el('a', { href: NX.timelineUrl(name, { highlight: s }), 'data-nav': true, 'data-testid': 'finding-timeline', class: 'tl-link',
          title: 'Mark its instructions and their DMA transfers on the timeline' }, '▸ timeline')))),
      el('td', {}, NX.usToMicro(f.summary || ''))))))].filter(Boolean));
}
