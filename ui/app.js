/* app.js: routing and pages of the web UI (docs/ui.md).
 *   /                      profiles list
 *   /profile/<name>        summary metrics, engine active time, timeline, details panel;
 *                          the timeline viewport lives in the hash (#t0=..&t1=..)
 *   /profile/<name>/sql    SELECT through _search, results as a table */
'use strict';

const main = document.getElementById('main');
const { el } = NX;

const EXAMPLES = [
  ['Time by engine and opcode', 'SELECT engine, opcode, COUNT(*) AS cnt, SUM(duration_ns) AS total_dur_ns,\n       SUM(evt_wait_time_ns) AS total_evt_wait_ns\nFROM Instruction GROUP BY engine, opcode ORDER BY total_dur_ns DESC'],
  ['Hot source lines', 'SELECT bir_debug_info_source_location, engine, opcode, COUNT(*) AS cnt,\n       SUM(duration_ns) AS total_dur_ns\nFROM Instruction WHERE bir_debug_info_source_location IS NOT NULL\nGROUP BY bir_debug_info_source_location, engine, opcode\nORDER BY total_dur_ns DESC LIMIT 10'],
  ['Headline metrics', 'SELECT total_time, mfu_estimated_percent, tensor_engine_active_time_percent,\n       vector_engine_active_time_percent, dma_active_time_percent, hbm_read_bytes, hbm_write_bytes\nFROM Summary'],
  ['DMA packets', 'SELECT COUNT(*) AS cnt FROM DmaPacket'],
  ['Field descriptions', "SELECT table_name, field_name, field_description, field_unit\nFROM SchemaFields WHERE table_name = 'Instruction'"],
];

const ENGINE_COLORS = { Tensor: '#4e79a7', TensorMatrix: '#76b7b2', Vector: '#59a14f', Scalar: '#f28e2b', GpSimd: '#b07aa1', Sync: '#9c755f' };

function setChrome(crumbs, tabs) {
  document.getElementById('crumbs').replaceChildren(...crumbs);
  document.getElementById('tabs').replaceChildren(...tabs);
}

function errorBox(e) { return el('div', { class: 'error', 'data-testid': 'error' }, String(e.message || e)); }

function route() {
  const path = decodeURIComponent(location.pathname);
  const m = /^\/profile\/([^/]+)(\/sql)?\/?$/.exec(location.pathname);
  document.getElementById('tooltip').hidden = true;
  if (m) {
    const name = decodeURIComponent(m[1]);
    return m[2] ? sqlPage(name) : profilePage(name);
  }
  if (path === '/' || path === '') return profilesPage();
  main.replaceChildren(errorBox(`no page at ${path}`));
}

function go(url) { history.pushState(null, '', url); route(); }
document.addEventListener('click', (ev) => {
  const a = ev.target.closest('a[data-nav]');
  if (!a || ev.ctrlKey || ev.metaKey || ev.shiftKey) return;
  ev.preventDefault();
  go(a.getAttribute('href'));
});
window.addEventListener('popstate', route);

/* ---- profiles list ---- */

async function profileFacts(name) {
  const files = await NX.search(name, { type: 'listDbFiles' });
  const tables = new Set(files.tables.map((t) => t.name));
  const facts = { kind: tables.has('Instruction') ? 'device' : 'framework' };
  if (tables.has('Summary')) {
    const parts = ['(SELECT total_time FROM Summary LIMIT 1) AS total_time'];
    if (tables.has('ActiveTime'))
      parts.push('(SELECT engine FROM ActiveTime GROUP BY engine ORDER BY SUM(duration_ns) DESC LIMIT 1) AS bottleneck');
    if (tables.has('ExecutionInfo')) parts.push('(SELECT neff_name FROM ExecutionInfo LIMIT 1) AS kernel');
    Object.assign(facts, NX.objects(await NX.query(name, 'SELECT ' + parts.join(', ')))[0]);
  }
  return facts;
}

async function profilesPage() {
  document.title = 'Profiles · Neuron Explorer';
  setChrome([], []);
  const filter = el('input', { type: 'search', placeholder: 'Filter by name…', 'data-testid': 'filter', style: 'width:280px' });
  const body = el('tbody');
  const table = el('table', { class: 'grid', 'data-testid': 'profiles' },
    el('thead', {}, el('tr', {}, ['Name', 'Kind', 'Kernel', 'Total time', 'Bottleneck engine', 'Ingested', 'Tables'].map((h) => el('th', {}, h)))), body);
  const card = el('div', { class: 'card' }, el('div', { class: 'toolbar' }, filter, el('span', { class: 'muted', id: 'count' })), table);
  main.replaceChildren(el('h1', {}, 'Profiles'), card);
  let list;
  try { list = (await NX.get('/api/v1/profiles')).profiles; } catch (e) { card.append(errorBox(e)); return; }
  if (!list.length) {
    card.replaceChildren(el('p', { class: 'muted' }, 'No profiles yet. Ingest one with ',
      el('span', { class: 'mono' }, 'neuron-explorer view -n KERNEL.neff -s PROFILE.ntff --data-path DIR'), '.'));
    return;
  }
  const rows = list.map((p) => {
    const cells = { kind: el('td'), kernel: el('td', { class: 'mono' }), total: el('td', { class: 'num' }), bottleneck: el('td') };
    const href = '/profile/' + NX.enc(p.name);
    const tr = el('tr', { class: 'clickable', 'data-name': p.name, onclick: (ev) => { if (!ev.target.closest('a')) go(href); } },
      el('td', {}, el('a', { href, 'data-nav': true }, p.name)), cells.kind, cells.kernel, cells.total, cells.bottleneck,
      el('td', { class: 'muted' }, p.updated.replace('T', ' ').replace('Z', ' UTC')), el('td', { class: 'num' }, p.table_count));
    profileFacts(p.name).then((f) => {
      cells.kind.replaceChildren(el('span', { class: 'badge ' + f.kind }, f.kind));
      cells.kernel.textContent = f.kernel || '–';
      cells.total.textContent = f.total_time !== undefined ? NX.fmtNs(f.total_time * 1e9) : '–';
      cells.bottleneck.textContent = f.bottleneck || '–';
    }).catch((e) => { cells.kind.replaceChildren(el('span', { class: 'muted', title: e.message }, 'unreadable')); });
    return tr;
  });
  const apply = () => {
    const q = filter.value.trim().toLowerCase();
    let n = 0;
    for (const r of rows) { const show = !q || r.dataset.name.toLowerCase().includes(q); r.hidden = !show; n += show; }
    document.getElementById('count').textContent = `${n} of ${rows.length} profiles`;
  };
  filter.addEventListener('input', apply);
  body.append(...rows);
  apply();
}

/* ---- profile page ---- */

function profileChrome(name, tab) {
  const base = '/profile/' + NX.enc(name);
  setChrome([el('a', { href: '/', 'data-nav': true }, 'Profiles'), ' / ', el('span', {}, name)],
    [el('a', { href: base, 'data-nav': true, class: tab === 'overview' ? 'active' : '' }, 'Overview'),
      el('a', { href: base + '/sql', 'data-nav': true, class: tab === 'sql' ? 'active' : '' }, 'SQL')]);
}

const KEY_METRICS = ['total_time', 'event_count', 'model_flops', 'hardware_flops', 'mfu_estimated_percent',
  'mm_arithmetic_intensity', 'dma_active_time_percent', 'dma_transfer_total_bytes', 'mbu_estimated_percent',
  'hbm_read_bytes', 'hbm_write_bytes', 'tensor_engine_active_time_percent'];

async function summaryCard(name, card) {
  const [res, schema] = await Promise.all([NX.query(name, 'SELECT * FROM Summary LIMIT 1'), NX.schema(name, 'Summary')]);
  const row = NX.objects(res)[0] || {};
  const fields = new Map(schema.fields.map((f) => [f.name, f]));
  const tile = (k) => {
    const f = fields.get(k) || {};
    return el('div', { class: 'metric', title: f.description || '' },
      el('div', { class: 'v' }, NX.fmtUnit(row[k], f.unit)), el('div', { class: 'k' }, k.replace(/_/g, ' ')));
  };
  const all = el('table', { class: 'grid' }, el('thead', {}, el('tr', {}, el('th', {}, 'Metric'), el('th', {}, 'Value'), el('th', {}, 'Description'))),
    el('tbody', {}, res.columns.map((c) => {
      const f = fields.get(c.name) || {};
      return el('tr', {}, el('td', { class: 'mono' }, c.name), el('td', { class: 'num' }, NX.fmtUnit(row[c.name], f.unit)),
        el('td', { class: 'muted' }, f.description || ''));
    })));
  card.replaceChildren(el('h2', {}, 'Summary'),
    el('div', { class: 'metrics', 'data-testid': 'summary' }, KEY_METRICS.filter((k) => k in row).map(tile)),
    el('details', {}, el('summary', {}, `All ${res.columns.length} metrics`), all));
  return row;
}

async function enginesCard(name, card, totalNs) {
  const res = await NX.query(name, 'SELECT engine, SUM(duration_ns) AS busy_ns, COUNT(*) AS intervals FROM ActiveTime GROUP BY engine ORDER BY busy_ns DESC');
  const rows = NX.objects(res);
  const max = totalNs || Math.max(1, ...rows.map((r) => r.busy_ns));
  card.replaceChildren(el('h2', {}, 'Engine active time'),
    el('div', { class: 'bars', 'data-testid': 'engines' }, rows.map((r) => el('div', { class: 'bar' },
      el('span', {}, r.engine),
      el('div', { class: 'track' }, el('div', { class: 'fill', style: `width:${(100 * r.busy_ns / max).toFixed(1)}%;background:${ENGINE_COLORS[r.engine] || '#4e79a7'}` })),
      el('span', { class: 'val' }, `${NX.fmtNs(r.busy_ns)} · ${(100 * r.busy_ns / max).toFixed(1)}%`)))),
    el('p', { class: 'muted', style: 'margin:8px 0 0;font-size:12px' }, 'Share of the total time each engine was busy (ActiveTime, semaphore waits excluded).'));
}

/* The `recommend` analysis (GET .../analysis): bounds and gaps as bars, ranked findings. */
async function analysisCard(name, card) {
  const r = (await NX.get(NX.profileBase(name) + '/analysis')).report;
  const total = (r.inputs && r.inputs.total_ns) || Math.max(1, ...r.bounds.map((b) => b.ns || 0));
  const bar = (label, ns, color) => el('div', { class: 'bar' }, el('span', { title: label }, label),
    el('div', { class: 'track' }, el('div', { class: 'fill', style: `width:${Math.min(100, 100 * (ns || 0) / total).toFixed(1)}%;background:${color}` })),
    el('span', { class: 'val' }, `${NX.fmtNs(ns)} · ${(100 * (ns || 0) / total).toFixed(1)}%`));
  const fam = { memory: '#4e79a7', compute: '#59a14f', pipeline: '#f28e2b' };
  card.replaceChildren(el('h2', {}, 'Analysis ', el('span', { class: 'muted', style: 'font-weight:400' }, `bottleneck: ${r.bottleneck || '–'}`)),
    el('div', { class: 'row' },
      el('div', { class: 'bars wide', style: 'flex:1' }, el('div', { class: 'muted sub' }, 'Bounds (time the kernel would take if only this limited it)'),
        r.bounds.map((b) => bar(b.name.replace(/_/g, ' '), b.ns, '#94a3b8'))),
      el('div', { class: 'bars wide', style: 'flex:1' }, el('div', { class: 'muted sub' }, 'Gaps (time lost, share of total)'),
        r.gaps.map((g) => bar(g.label || g.name, g.ns, fam[g.family] || '#b07aa1')))),
    el('table', { class: 'grid', 'data-testid': 'findings', style: 'margin-top:12px' },
      el('thead', {}, el('tr', {}, ['#', 'Finding', 'Status', 'Gap', 'Summary'].map((h) => el('th', {}, h)))),
      el('tbody', {}, r.findings.map((f) => el('tr', {}, el('td', { class: 'num' }, f.rank), el('td', {}, f.title),
        el('td', {}, el('span', { class: 'badge' + (f.status === 'found' ? ' found' : ' quiet') }, f.status)),
        el('td', { class: 'num' }, f.gap_ns === null || f.gap_ns === undefined ? '–' : NX.fmtNs(f.gap_ns)),
        el('td', {}, f.summary || ''))))));
}

function readHash() {
  const h = new URLSearchParams(location.hash.slice(1));
  const t0 = Number(h.get('t0')), t1 = Number(h.get('t1'));
  return h.has('t0') && h.has('t1') && t1 > t0 ? { t0, t1 } : null;
}

async function showDetails(name, panel, h) {
  panel.replaceChildren(el('h2', {}, 'Details'), el('p', { class: 'muted' }, 'Loading…'));
  try {
    const sql = `SELECT * FROM "${h.table}" WHERE id = ${Number(h.id)} AND pcore_idx = ${Number(h.core)} LIMIT 1`;
    const [res, schema] = await Promise.all([NX.query(name, sql), NX.schema(name, h.table)]);
    const row = NX.objects(res)[0];
    if (!row) throw new Error(`no ${h.table} row with id ${h.id}`);
    const desc = new Map(schema.fields.map((f) => [f.name, f]));
    panel.replaceChildren(el('h2', {}, `${h.table} ${h.id}`),
      el('p', { style: 'margin:0 0 8px' }, el('span', { class: 'badge', 'data-testid': 'detail-label' }, h.label), ' ',
        el('span', { class: 'muted' }, `${h.track.track} · ${NX.fmtNs(h.end - h.start)}`),
        h.bins ? el('span', { class: 'muted' }, ` · longest of ${h.count} events in its bucket`) : null),
      el('table', { class: 'grid', 'data-testid': 'details' }, el('tbody', {}, res.columns.map((c) => {
        const f = desc.get(c.name) || {};
        let v = row[c.name];
        v = v === null ? '–' : typeof v === 'object' ? JSON.stringify(v) : f.unit ? NX.fmtUnit(v, f.unit) + (f.unit === 'nanoseconds' ? ` (${v})` : '') : String(v);
        return el('tr', { 'data-field': c.name }, el('td', {}, c.name),
          el('td', {}, el('div', { class: 'mono' }, v), f.description ? el('div', { class: 'desc' }, f.description) : null));
      }))));
  } catch (e) { panel.replaceChildren(el('h2', {}, 'Details'), errorBox(e)); }
}

async function profilePage(name) {
  document.title = `${name} · Neuron Explorer`;
  profileChrome(name, 'overview');
  const summary = el('div', { class: 'card' }, el('h2', {}, 'Summary'), el('p', { class: 'muted' }, 'Loading…'));
  const engines = el('div', { class: 'card', style: 'max-width:560px' }, el('h2', {}, 'Engine active time'));
  const tlMain = el('div', { class: 'tl-main' });
  const details = el('div', { class: 'card details', 'data-testid': 'details-panel' }, el('h2', {}, 'Details'),
    el('p', { class: 'muted' }, 'Click an event on the timeline to see every field of its row.'));
  const tlCard = el('div', { class: 'card' },
    el('div', { class: 'toolbar' }, el('h2', { style: 'margin:0' }, 'Timeline'), el('span', { class: 'spacer', style: 'flex:1' }),
      el('label', { class: 'muted', title: 'DMA rows show single packets (DmaPacket) instead of transfers (DmaPacketAggregated)' },
        el('input', { type: 'checkbox', 'data-testid': 'dma-packets', onchange: (ev) => tl.setDma(ev.target.checked ? 'packets' : 'transfers').catch((e) => tlMain.append(errorBox(e))) }), ' DMA packets'),
      el('button', { class: 'secondary', 'data-testid': 'zoom-in', onclick: () => tl.zoom(0.5) }, 'Zoom in'),
      el('button', { class: 'secondary', 'data-testid': 'zoom-out', onclick: () => tl.zoom(2) }, 'Zoom out'),
      el('button', { class: 'secondary', 'data-testid': 'reset', onclick: () => tl.reset() }, 'Reset')),
    el('div', { class: 'tl-wrap' }, tlMain, details));
  const analysis = el('div', { class: 'card', 'data-testid': 'analysis' }, el('h2', {}, 'Analysis'), el('p', { class: 'muted' }, 'Loading…'));
  main.replaceChildren(el('h1', {}, name), el('div', { class: 'row' }, summary, engines), tlCard, analysis);
  let hashTimer = 0;
  const tl = new Timeline(tlMain, name, {
    onSelect: (h) => showDetails(name, details, h),
    onView: (v) => {
      clearTimeout(hashTimer);
      hashTimer = setTimeout(() => history.replaceState(null, '', `#t0=${v.t0}&t1=${v.t1}`), 150);
    },
  });
  window.nx = { timeline: tl }; /* for the browser console and the UI tests */
  let row = {};
  try { row = await summaryCard(name, summary); } catch (e) { summary.replaceChildren(el('h2', {}, 'Summary'), errorBox(e)); }
  enginesCard(name, engines, row.total_time ? row.total_time * 1e9 : 0).catch((e) => engines.append(errorBox(e)));
  try { await tl.load(readHash()); } catch (e) { tlMain.replaceChildren(errorBox(e)); }
  analysisCard(name, analysis).catch((e) => analysis.replaceChildren(el('h2', {}, 'Analysis'), errorBox(e)));
}

/* ---- SQL page ---- */

function resultTable(res) {
  return el('table', { class: 'grid', 'data-testid': 'result' },
    el('thead', {}, el('tr', {}, res.columns.map((c, i) => el('th', {
      title: c.type, class: res.rows.length && typeof res.rows[0][i] === 'number' ? 'num' : '' }, c.name)))),
    el('tbody', {}, res.rows.map((r) => el('tr', {}, r.map((v, i) => {
      const num = typeof v === 'number';
      return el('td', { class: num ? 'num' : 'mono' }, v === null ? 'NULL' : typeof v === 'object' ? JSON.stringify(v) : num ? NX.fmtNum(v) : v);
    })))));
}

function sqlPage(name) {
  document.title = `SQL · ${name} · Neuron Explorer`;
  profileChrome(name, 'sql');
  const ta = el('textarea', { 'data-testid': 'sql', spellcheck: 'false' });
  ta.value = sessionStorage.getItem('nx-sql') || EXAMPLES[0][1];
  const out = el('div', { 'data-testid': 'sql-out' });
  const info = el('span', { class: 'muted' });
  const run = async () => {
    sessionStorage.setItem('nx-sql', ta.value);
    info.textContent = 'Running…';
    const t = performance.now();
    try {
      const res = await NX.search(name, { type: 'databaseExplorerQuery', query: ta.value });
      info.textContent = `${res.row_count} rows in ${(performance.now() - t).toFixed(0)} ms` + (res.truncated ? ' — ' + res.message : '');
      out.replaceChildren(el('div', { class: 'result-wrap' }, resultTable(res)));
    } catch (e) { info.textContent = ''; out.replaceChildren(errorBox(e)); }
  };
  ta.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); run(); } });
  main.replaceChildren(el('h1', {}, 'SQL'),
    el('div', { class: 'row' },
      el('div', { class: 'card', style: 'flex:2' }, ta,
        el('div', { class: 'toolbar', style: 'margin:10px 0 0' }, el('button', { 'data-testid': 'run', onclick: run }, 'Run'),
          el('span', { class: 'muted' }, el('span', { class: 'kbd' }, 'Ctrl'), '+', el('span', { class: 'kbd' }, 'Enter')), info)),
      el('div', { class: 'card', style: 'flex:1' }, el('h2', {}, 'Examples'),
        el('ul', { class: 'examples' }, EXAMPLES.map(([title, q]) => el('li', {},
          el('a', { href: '#', onclick: (ev) => { ev.preventDefault(); ta.value = q; run(); } }, title)))),
        el('p', { class: 'muted', style: 'font-size:12px' }, 'One read-only SELECT per query; every table of the profile is a view by its name.'))),
    el('div', { class: 'card' }, out));
}

route();
