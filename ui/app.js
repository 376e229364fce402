/* app.js: routing of the web UI (docs/ui.md) and the profile page with its timeline.
 *   /                          profiles list (profiles.js)
 *   /profile/<name>            overview cards (overview.js), timeline, details panel;
 *                              the timeline viewport lives in the hash (#t0=..&t1=..)
 *   /profile/<name>/source     source view (source.js)
 *   /profile/<name>/sql        SELECT through _search, paged (sql.js)
 *   /compare/<a>/<b>           two profiles side by side (compare.js) */
'use strict';

const main = document.getElementById('main');
const { el } = NX;

function setChrome(crumbs, tabs) {
  document.getElementById('crumbs').replaceChildren(...crumbs);
  document.getElementById('tabs').replaceChildren(...tabs);
}

function errorBox(e) { return el('div', { class: 'error', 'data-testid': 'error' }, String(e.message || e)); }

function route() {
  const path = decodeURIComponent(location.pathname);
  const m = /^\/profile\/([^/]+)(\/sql|\/source)?\/?$/.exec(location.pathname);
  const c = /^\/compare\/([^/]+)\/([^/]+)\/?$/.exec(location.pathname);
  document.getElementById('tooltip').hidden = true;
  window.scrollTo(0, 0);
  if (m) {
    const name = decodeURIComponent(m[1]);
    return m[2] === '/sql' ? sqlPage(name) : m[2] === '/source' ? sourcePage(name) : profilePage(name);
  }
  if (c) return comparePage(decodeURIComponent(c[1]), decodeURIComponent(c[2]));
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

/* ---- profile page ---- */

function profileChrome(name, tab) {
  const base = '/profile/' + NX.enc(name);
  setChrome([el('a', { href: '/', 'data-nav': true }, 'Profiles'), ' / ', el('span', {}, name)],
    [['overview', base, 'Overview'], ['source', base + '/source', 'Source'], ['sql', base + '/sql', 'SQL']].map(([k, href, text]) =>
      el('a', { href, 'data-nav': true, class: tab === k ? 'active' : '' }, text)));
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
    onView: (v) => { /* the viewport in the hash; other parameters (highlight) stay */
      clearTimeout(hashTimer);
      hashTimer = setTimeout(() => {
        const h = new URLSearchParams(location.hash.slice(1));
        h.set('t0', v.t0); h.set('t1', v.t1);
        history.replaceState(null, '', '#' + h.toString());
      }, 150);
    },
  });
  window.nx = { timeline: tl }; /* for the browser console and the UI tests */
  let row = {};
  try { row = await summaryCard(name, summary); } catch (e) { summary.replaceChildren(el('h2', {}, 'Summary'), errorBox(e)); }
  enginesCard(name, engines, row).catch((e) => engines.append(errorBox(e)));
  try { await tl.load(readHash()); } catch (e) { tlMain.replaceChildren(errorBox(e)); }
  analysisCard(name, analysis).catch((e) => analysis.replaceChildren(el('h2', {}, 'Analysis'), errorBox(e)));
}

route();
