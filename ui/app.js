/* app.js: routing of the web UI (docs/ui.md) and the profile page with its timeline.
 *   /                          profiles list (profiles.js)
 *   /profile/<name>            headline, timeline (first, full width), details drawer
 *                              (details.js), Summary and engine cards (overview.js); the
 *                              timeline viewport lives in the hash (#t0=..&t1=..)
 *   /profile/<name>/analysis   the recommend analysis (overview.js)
 *   /profile/<name>/memory     SBUF allocations and PSUM banks over time (memory.js), the
 *                              same window as the timeline (#t0=..&t1=..)
 *   /profile/<name>/hierarchy  the IR hierarchy: framework, HLO, Penguin, BIR, instruction
 *                              (hierarchy.js)
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
  const m = /^\/profile\/([^/]+)(\/sql|\/source|\/analysis|\/memory|\/hierarchy)?\/?$/.exec(location.pathname);
  const c = /^\/compare\/([^/]+)\/([^/]+)\/?$/.exec(location.pathname);
  document.getElementById('tooltip').hidden = true;
  window.nx = undefined; /* the profile page sets it again */
  document.body.classList.remove('drawer-open');
  window.scrollTo(0, 0);
  if (m) {
    const name = decodeURIComponent(m[1]);
    return m[2] === '/sql' ? sqlPage(name) : m[2] === '/source' ? sourcePage(name)
      : m[2] === '/analysis' ? analysisPage(name) : m[2] === '/memory' ? memoryPage(name)
        : m[2] === '/hierarchy' ? hierarchyPage(name) : profilePage(name);
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

/* The profile's tabs; Timeline and Memory carry the window of the hash (t0, t1) from
 * one to the other, read when clicked. */
function profileChrome(name, tab) {
  const base = '/profile/' + NX.enc(name);
  const windowed = new Set(['overview', 'memory']);
  setChrome([el('a', { href: '/', 'data-nav': true }, 'Profiles'), ' / ', el('span', {}, name)],
    [['overview', base, 'Timeline'], ['memory', base + '/memory', 'Memory'], ['analysis', base + '/analysis', 'Analysis'],
      ['hierarchy', base + '/hierarchy', 'Hierarchy'], ['source', base + '/source', 'Source'],
      ['sql', base + '/sql', 'SQL']].map(([k, href, text]) =>
      el('a', { href, 'data-nav': true, class: tab === k ? 'active' : '', 'data-testid': 'tab-' + k,
        onclick: (ev) => { /* the window goes along (the timeline's hash is kept current); this
          * runs before the page's navigation handler, by mouse or keyboard */
          if (!windowed.has(k) || !windowed.has(tab)) return;
          const h = new URLSearchParams(location.hash.slice(1)), w = new URLSearchParams();
          if (h.has('t0') && h.has('t1')) { w.set('t0', h.get('t0')); w.set('t1', h.get('t1')); }
          ev.currentTarget.setAttribute('href', href + (w.toString() ? '#' + w.toString() : ''));
        } }, text)));
}

/* The timeline view of the URL's hash, as text (absolute profile nanoseconds); the
 * timeline checks it against the profile (timeline.js, linkView). */
function readHash() {
  const h = new URLSearchParams(location.hash.slice(1));
  return h.has('t0') || h.has('t1') ? { t0: h.get('t0') || '', t1: h.get('t1') || '' } : null;
}

/* Whether the data path has a profile of that name; one clear error when not. */
async function profileExists(name, box) {
  const list = (await NX.get('/api/v1/profiles')).profiles;
  if (list.some((p) => p.name === name)) return true;
  box.replaceChildren(el('h1', {}, name), el('div', { class: 'error', 'data-testid': 'error' },
    `There is no profile named '${name}' on this server's data path. `,
    el('a', { href: '/', 'data-nav': true }, 'See the profiles')));
  return false;
}

async function profilePage(name) {
  document.title = `${name} · Neuron Explorer`;
  profileChrome(name, 'overview');
  main.replaceChildren(el('p', { class: 'muted' }, 'Loading…'));
  try { if (!(await profileExists(name, main))) return; } catch (e) { main.replaceChildren(errorBox(e)); return; }
  const head = el('div', { class: 'headline', 'data-testid': 'headline' });
  const summary = el('div', { class: 'card' }, el('h2', {}, 'Summary'), el('p', { class: 'muted' }, 'Loading…'));
  const engines = el('div', { class: 'card engines-card' }, el('h2', {}, 'Engine active time'));
  const tlMain = el('div', { class: 'tl-main' });
  let tl = null;
  const drawer = detailsDrawer(() => tl && tl.select(null));
  const tlCard = el('div', { class: 'card tl-card' },
    el('div', { class: 'toolbar' }, el('h2', { style: 'margin:0' }, 'Timeline'), el('span', { class: 'spacer', style: 'flex:1' }),
      el('label', { class: 'muted', title: 'DMA rows show single packets (DmaPacket) instead of transfers (DmaPacketAggregated)' },
        el('input', { type: 'checkbox', 'data-testid': 'dma-packets', onchange: (ev) => tl.setDma(ev.target.checked ? 'packets' : 'transfers').catch((e) => tlMain.append(errorBox(e))) }), ' DMA packets'),
      el('button', { class: 'secondary', 'data-testid': 'tl-groups-toggle', title: 'Track groups: collapse, pin, reorder',
        onclick: () => tl.toggleGroupsPanel() }, 'Tracks'),
      el('button', { class: 'secondary', 'data-testid': 'tl-notes-toggle', title: 'Annotations: markers and ranges with notes (M adds a marker)',
        onclick: () => tl.toggleNotes() }, 'Notes'),
      el('button', { class: 'secondary', 'data-testid': 'tl-ops-toggle', title: 'Per opcode and source line: events and busy time in the view or the box, as CSV too',
        onclick: () => tl.toggleOps() }, 'Operators'),
      el('button', { class: 'secondary', 'data-testid': 'zoom-in', onclick: () => tl.zoom(0.5) }, 'Zoom in'),
      el('button', { class: 'secondary', 'data-testid': 'zoom-out', onclick: () => tl.zoom(2) }, 'Zoom out'),
      el('button', { class: 'secondary', 'data-testid': 'reset', onclick: () => tl.reset() }, 'Reset')),
    tlMain);
  main.replaceChildren(el('div', { class: 'page-head' }, el('h1', {}, name), head, el('span', { class: 'spacer' }), compareControl(name)),
    tlCard, el('div', { class: 'row' }, summary, engines), drawer);
  let hashTimer = 0;
  tl = new Timeline(tlMain, name, {
    onSelect: (h) => showDetails(name, drawer, h, tl),
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
  const loaded = tl.load(readHash()).catch((e) => tlMain.replaceChildren(errorBox(e)));
  let row = {};
  try { row = await summaryCard(name, summary); } catch (e) { summary.replaceChildren(el('h2', {}, 'Summary'), errorBox(e)); }
  const bounds = row.total_time !== undefined ? NX.get(NX.profileBase(name) + '/analysis?part=bounds').then((r) => r.report).catch(() => null) : null;
  headline(name, head, row, bounds).catch(() => {});
  enginesCard(name, engines, row, bounds).catch((e) => engines.append(errorBox(e)));
  await loaded;
}

route();
