// views.mjs: the viewers of the web UI's second round, part 2 (issue 39), in headless
// Debian Chromium through playwright-core, against the real server on real profiles (a
// simulated device profile with DMA-trigger flows, and vendored framework traces): track
// groups that collapse, pin and reorder (kept in the URL); flows followed by a click,
// their off-screen ends marked; the dependency chain (Trace) against the server's walk;
// the memory view against SbufAllocation, linked to the timeline; annotations in the URL
// and as a JSON file, with "diff vs"; the IR hierarchy; compare's stacked timelines with
// their deltas per opcode and line; names inside framework bars.
// Screenshots (1280x720, light and dark) go to NX_SHOTS.
// Environment: NX_UI_URL, NX_DEV, NX_DEV2 (device profiles), NX_FW_NESTED, NX_FW_EPOCH,
// NX_FW_THIRD (framework traces), NX_SHOTS, NX_DL (scratch for downloads), NX_TOOLS,
// NX_CHROMIUM.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { launch } from './chromium.mjs';
import { apiOf, check, env, openProfile, settled as settledOn, sqlRows } from './helpers.mjs';

const url = env('NX_UI_URL').replace(/\/$/, ''), DEV = env('NX_DEV'), NESTED = env('NX_FW_NESTED');
const EPOCH = env('NX_FW_EPOCH'), THIRD = env('NX_FW_THIRD'), DEV2 = env('NX_DEV2');
const shots = env('NX_SHOTS'), dl = env('NX_DL');
mkdirSync(shots, { recursive: true });
const api = (name) => apiOf(url, name);

const { browser, page, errors, close } = await launch(env('NX_TOOLS'), { viewport: { width: 1280, height: 720 } });
let step = 'start';
try {
  const sql = (name, q) => sqlRows(page, url, name, q);
  const settled = (p = page) => settledOn(p);
  const open = (name, hash = '', p = page) => openProfile(p, url, name, hash);
  const tl = (fn, arg) => page.evaluate(fn, arg);
  const hashParam = (k) => page.evaluate((key) => new URLSearchParams(location.hash.slice(1)).get(key), k);
  const canvasBox = () => page.locator('[data-testid=timeline]').boundingBox();
  /* page coordinates of canvas point (x, y), scrolled on screen */
  const onScreen = async (x, y) => {
    await page.evaluate((yy) => { const r = window.nx.timeline.canvas.getBoundingClientRect();
      if (r.top + yy < 60 || r.top + yy > innerHeight - 40) window.scrollBy(0, r.top + yy - innerHeight / 2); }, y);
    const b = await canvasBox();
    return [b.x + x, b.y + y];
  };
  const groupIds = () => tl(() => window.nx.timeline.groups.map((g) => g.id));

  /* ---- 1. track groups ---- */
  step = 'groups: the device profile\'s groups';
  await open(DEV);
  const ids = await groupIds();
  for (const g of ['engines:0', 'dma:0', 'counters:0', 'sems:0']) check(ids.includes(g), `no group ${g}: ${ids}`);
  step = 'groups: a click on a header collapses it, kept in the URL';
  const dmaHead = await tl(() => { const g = window.nx.timeline.groups.find((x) => x.id === 'dma:0'); return { y: g.y + 8, n: g.tracks.length }; });
  let [px, py] = await onScreen(40, dmaHead.y);
  await page.mouse.click(px, py);
  check((await hashParam('groups') || '').includes('!dma:0'), `collapsing is not in the URL: ${await hashParam('groups')}`);
  const collapsed = await tl(() => { const t = window.nx.timeline, g = t.groups.find((x) => x.id === 'dma:0');
    return { c: g.collapsed, rows: t.rows.filter((r) => r.track && r.track.tg === g).length, h: t.rowsH }; });
  check(collapsed.c && collapsed.rows === 0, `the DMA group did not collapse: ${JSON.stringify(collapsed)}`);
  step = 'groups: a collapsed group\'s events are hit on its header';
  await settled();
  const hitHead = await tl(() => { const t = window.nx.timeline, g = t.groups.find((x) => x.id === 'dma:0');
    for (let x = t.labelW + 2; x < t.W; x += 2) { const h = t.hit(x, g.y + 4); if (h) return h.table; } return null; });
  check(hitHead === 'DmaPacketAggregated', `no DMA transfer under the collapsed header: ${hitHead}`);
  step = 'groups: pin and reorder, and a link keeps them';
  const ctl = await tl(() => { const t = window.nx.timeline, g = t.groups.find((x) => x.id === 'sems:0'), c = t.headerControls();
    return { x: (c.pin[0] + c.pin[1]) / 2, y: g.y + 8 }; });
  [px, py] = await onScreen(ctl.x, ctl.y);
  await page.mouse.click(px, py);
  check((await groupIds())[0] === 'sems:0', `pinning does not put the group first: ${await groupIds()}`);
  await page.click('[data-testid=tl-groups-toggle]');
  await page.locator('[data-testid=tl-groups] li[data-group="counters:0"] [data-testid=up]').click();
  const order = await groupIds();
  check(order.indexOf('counters:0') < order.indexOf('dma:0') || order.indexOf('counters:0') === 1, `moving up did nothing: ${order}`);
  const g0 = await hashParam('groups');
  check(g0.startsWith('^sems:0,'), `the URL does not say the pin first: ${g0}`);
  await page.screenshot({ path: path.join(shots, 'groups.png') });
  await open(DEV, '#groups=' + encodeURIComponent(g0));
  check(JSON.stringify(await groupIds()) === JSON.stringify(order), `the link does not restore the groups: ${await groupIds()} vs ${order}`);
  check(await tl(() => window.nx.timeline.groups.find((g) => g.id === 'dma:0').collapsed), 'the link does not keep the collapse');
  step = 'groups: a bad groups parameter is harmless';
  await open(DEV, '#groups=nosuch,%2C%2C,^!engines:0');
  check((await groupIds())[0] === 'engines:0' && await tl(() => window.nx.timeline.groups[0].collapsed), 'odd groups entries broke the layout');
  step = 'groups: framework streams grouped by process';
  await open(NESTED);
  const fw = await tl(() => window.nx.timeline.groups.map((g) => ({ id: g.id, n: g.tracks.length })));
  check(fw.length >= 1 && fw.every((g) => g.id.startsWith('fw:')), `framework groups: ${JSON.stringify(fw)}`);
  await tl((id) => window.nx.timeline.collapseGroup(id), fw[0].id);
  await settled();
  await page.screenshot({ path: path.join(shots, 'groups-framework-collapsed.png') });
  await tl(() => window.nx.timeline.resetGroups());

  /* ---- 7. names inside framework bars, no empty lanes ---- */
  for (const fwName of [NESTED, EPOCH, THIRD]) {
    step = `framework bars: names drawn in wide bars (${fwName})`;
    await open(fwName);
    let wideAll = 0;
    for (const zoom of [1, 0.1, 0.01]) {
      await tl((z) => { const t = window.nx.timeline, s = t.full[1] * 0.3; t.setView(s, s + (t.full[1] - t.full[0]) * z); }, zoom);
      await settled();
      const r = await tl(() => {
        const t = window.nx.timeline, texts = [], c = t.ctx, orig = c.fillText;
        c.fillText = function (txt, ...a) { texts.push(String(txt)); return orig.call(this, txt, ...a); };
        try { t.draw(); } finally { c.fillText = orig; }
        let wide = 0, named = 0;
        t.tracks.forEach((tr, i) => {
          const s = t.series(i);
          if (tr.kind !== 'framework' || !s || tr.hidden || tr.h < 9) return;
          for (let j = 0; j < s.start.length; j++) {
            const [x0, x1] = t.extent(s, j), w = Math.min(x1, t.W) - Math.max(x0, t.labelW);
            if (w < 120 || s.label[j] === null || (s.count && s.count[j] > 1)) continue;
            wide++;
            const lab = String(s.label[j]);
            if (texts.some((x) => x === lab || (x.endsWith('…') && lab.startsWith(x.slice(0, -1))))) named++;
          }
        });
        /* lanes with no event in the whole profile */
        const empty = t.tracks.filter((tr) => tr.kind === 'framework' && !(tr.end > tr.start) && !(tr.count > 0)).length;
        return { wide, named, empty };
      });
      check(r.named === r.wide, `${fwName} at ${zoom}: ${r.named} of ${r.wide} wide framework bars named`);
      check(r.empty === 0, `${fwName}: ${r.empty} empty lanes`);
      wideAll += r.wide;
      if (fwName === THIRD) await page.screenshot({ path: path.join(shots, `framework-names-${zoom}.png`) });
    }
    check(wideAll > 0, `${fwName}: no framework bar 120 px wide at any of the zoom levels`);
  }

  /* ---- 1. flows you click to follow, off-screen ends marked ---- */
  step = 'flows: an instruction that triggered a DMA transfer';
  const [[fromId, toId, toStart, toEnd]] = await sql(DEV, "SELECT f.in_id, f.out_id, d.start_ts, d.end_ts FROM Flow f JOIN DmaPacketAggregated d ON d.id = f.out_id " +
    "JOIN Instruction i ON i.id = f.in_id WHERE f.dependency_type = 'DGE_TRIGGER' AND f.in_table = 'Instruction' " +
    "AND d.start_ts > i.end_ts + 200 ORDER BY d.start_ts - i.end_ts DESC LIMIT 1");
  const [[iS, iE]] = await sql(DEV, `SELECT start_ts, end_ts FROM Instruction WHERE id = ${fromId}`);
  await open(DEV);
  /* the instruction in view, its transfer beyond the right edge */
  const origin = await tl(() => window.nx.timeline.origin.toString());
  const rel = (v) => Number(BigInt(v) - BigInt(origin));
  await tl(([s, e, d]) => { const t = window.nx.timeline, w = Math.max(60, (d - s) * 0.6); t.setView(s - w * 0.2, s + w * 0.8); }, [rel(iS), rel(iE), rel(toStart)]);
  await settled();
  const ins = await tl(([id]) => { const t = window.nx.timeline;
    for (let i = 0; i < t.tracks.length; i++) { const s = t.series(i); if (!s || s.table !== 'Instruction') continue;
      const j = s.id.findIndex((x) => String(x) === String(id)); if (j >= 0) { const [x0, x1] = t.extent(s, j); return { x: (Math.max(x0, t.labelW) + Math.min(x1, t.W)) / 2, y: t.tracks[i].y + t.tracks[i].h / 2 }; } }
    return null; }, [fromId]);
  check(ins, `instruction ${fromId} is not drawn`);
  [px, py] = await onScreen(ins.x, ins.y);
  await page.mouse.click(px, py);
  await page.waitForFunction((id) => { const t = window.nx.timeline; return t.selected && String(t.selected.id) === String(id) && t.flowsFor === t.selected; }, fromId);
  const mark = await tl(() => window.nx.timeline.flowTargets.find((f) => f.ev.table === 'DmaPacketAggregated'));
  check(mark && mark.x > (await tl(() => window.nx.timeline.W)) - 200, `the transfer's end is not marked at the right edge: ${JSON.stringify(mark)}`);
  await page.locator('[data-testid=flow-list] li').first().waitFor();
  await page.screenshot({ path: path.join(shots, 'flow-offscreen.png') });
  step = 'flows: a click on the mark follows the flow';
  [px, py] = await onScreen(mark.x, mark.y);
  await page.mouse.click(px, py);
  const followed = await tl(() => { const t = window.nx.timeline, s = t.selected; return s && { table: s.table, id: String(s.id), inView: s.start >= t.t0 && s.end <= t.t1 }; });
  check(followed && followed.table === 'DmaPacketAggregated' && followed.id === String(toId) && followed.inView, `following the flow: ${JSON.stringify(followed)}`);
  await settled();
  step = 'flows: the drawer\'s link goes back';
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=flow-link]').length > 0);
  await page.locator('[data-testid=flow-link]').first().click();
  check(await tl((id) => String(window.nx.timeline.selected.id) === String(id) && window.nx.timeline.selected.table === 'Instruction', fromId), 'the drawer\'s flow link did not select the instruction');

  /* ---- 2. dependency chain ---- */
  step = 'chain: Trace from an instruction that waited on a semaphore';
  const [[wid]] = await sql(DEV, "SELECT i.id FROM Instruction i JOIN Flow f ON f.out_table = 'Instruction' AND f.out_id = i.id AND " +
    "f.dependency_type = 'SEMAPHORE' WHERE i.evt_wait_time_ns > 0 ORDER BY i.start_ts DESC LIMIT 1");
  const want = await (await page.request.get(`${api(DEV)}/timeline/chain?table=Instruction&id=${wid}`)).json();
  check(want.steps.length >= 2, `the server's chain of ${wid} is short: ${JSON.stringify(want)}`);
  await tl(async (id) => { const t = window.nx.timeline;
    const r = await NX.query(t.profile, `SELECT start_ts, end_ts, engine, opcode, pcore_idx FROM Instruction WHERE id = ${id}`);
    const [s, e, eng, op, core] = r.rows[0], i = t.tracks.findIndex((x) => x.kind === 'instruction' && x.track === eng && x.core === core);
    t.follow({ table: 'Instruction', id, core, track: eng, start: t.rel(s), end: t.rel(e), label: op }); }, wid);
  await page.locator('[data-testid=details-trace]').click();
  await page.locator('[data-testid=chain-list] tbody tr').first().waitFor();
  const got = await tl(() => window.nx.timeline.chain.steps.map((s) => `${s.table}:${s.id}`));
  check(JSON.stringify(got) === JSON.stringify(want.steps.map((s) => `${s.table}:${s.id}`)), `chain ${got} vs the server's ${JSON.stringify(want.steps)}`);
  check((await page.locator('[data-testid=chain-list] tbody tr').count()) === want.steps.length, 'the drawer does not list every step');
  check((await page.textContent('[data-testid=chain-summary]')).includes(`${want.steps.length} step`), 'the chain summary');
  const inView = await tl(() => { const t = window.nx.timeline; return t.chain.steps.every((s) => s.end >= t.t0 && s.start <= t.t1); });
  check(inView, 'the view does not take in the whole chain');
  await settled();
  await page.screenshot({ path: path.join(shots, 'chain.png') });
  step = 'chain: T on the keyboard, Esc clears';
  await page.keyboard.press('Escape');
  check(await tl(() => window.nx.timeline.chain === null), 'Esc did not clear the chain');
  step = 'chain: bad input at the API';
  for (const [q, code] of [['table=Nope&id=1', 400], ['table=Instruction&id=abc', 400], ['table=Instruction&id=999999999', 404], ['table=Instruction&id=1&max=0', 400]]) {
    const r = await page.request.get(`${api(DEV)}/timeline/chain?${q}`);
    check(r.status() === code, `chain?${q}: ${r.status()}`);
  }

  /* ---- 4. annotations ---- */
  step = 'notes: M adds a marker at the pointer, kept in the URL';
  await open(DEV);
  const cb = await canvasBox();
  await page.mouse.move(cb.x + cb.width * 0.3, cb.y + 60);
  await page.keyboard.press('m');
  await page.mouse.move(cb.x + cb.width * 0.7, cb.y + 60);
  await page.keyboard.press('m');
  const notes = await hashParam('notes');
  check(notes && notes.split(',').length === 2, `markers in the URL: ${notes}`);
  await page.click('[data-testid=tl-notes-toggle]');
  await page.locator('[data-testid=note-text]').first().fill('load starts');
  await page.locator('[data-testid=note-text]').first().press('Enter');
  await page.locator('[data-testid=note-text]').first().dispatchEvent('change');
  check((await hashParam('notes')).includes('~load%20starts'), `the note's text is not in the URL: ${await hashParam('notes')}`);
  step = 'notes: a range from the box selection';
  await tl(() => { const t = window.nx.timeline; t.addRange(t.t0 + (t.t1 - t.t0) * 0.4, t.t0 + (t.t1 - t.t0) * 0.5, 'hot'); });
  step = 'notes: diff vs between two markers';
  await page.locator('tr[data-note="0"] [data-testid=note-diff]').selectOption('1');
  const diff = await page.textContent('[data-testid=notes-diff]');
  const [m0, m1] = (await hashParam('notes')).split(',').slice(0, 2).map((e) => BigInt(e.split('~')[0]));
  const delta = (m1 - m0).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  check(diff.includes(`B − A = ${delta} ns`), `diff: ${diff}, want ${delta}`);
  await page.locator('[data-testid=tl-ops-lines] tbody tr, [data-testid=tl-ops] table').first().waitFor();
  const opsWin = await page.textContent('[data-testid=tl-ops-window]');
  check(opsWin.startsWith('in A – B'), `the operator table is not the markers' range: ${opsWin}`);
  await page.screenshot({ path: path.join(shots, 'notes.png'), fullPage: true });
  step = 'notes: a reload keeps them';
  const link = await page.evaluate(() => location.href);
  await page.goto('about:blank');
  await page.goto(link);
  await page.waitForFunction(() => window.nx && window.nx.timeline && window.nx.timeline.requests >= 1);
  const kept = await tl(() => window.nx.timeline.notes.map((n) => [n.t1 === null ? 'm' : 'r', n.text]));
  check(JSON.stringify(kept) === JSON.stringify([['m', 'load starts'], ['m', ''], ['r', 'hot']]), `after a reload: ${JSON.stringify(kept)}`);
  step = 'notes: export and import as JSON';
  await page.click('[data-testid=tl-notes-toggle]');
  const [ndl] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=notes-export]')]);
  await ndl.saveAs(path.join(dl, 'notes.json'));
  const nj = JSON.parse(readFileSync(path.join(dl, 'notes.json'), 'utf8'));
  check(nj.profile === DEV && nj.notes.length === 3 && nj.notes[0].kind === 'marker' && typeof nj.notes[0].t === 'string' &&
    nj.notes[2].kind === 'range', `exported: ${JSON.stringify(nj)}`);
  nj.notes.push({ kind: 'marker', t: 'soon' }, { kind: 'range', t0: '5', t1: '3' });
  nj.notes[0].text = 'imported';
  writeFileSync(path.join(dl, 'notes-in.json'), JSON.stringify(nj));
  await page.locator('[data-testid=notes-file]').setInputFiles(path.join(dl, 'notes-in.json'));
  await page.waitForFunction(() => window.nx.timeline.notes.length === 6);
  check((await page.textContent('[data-testid=tl-notice]')).includes('2 entries of the annotations file could not be read'),
    `no word on the bad entries: ${await page.textContent('[data-testid=tl-notice]')}`);
  writeFileSync(path.join(dl, 'notes-bad.json'), '{"notes": ');
  await page.locator('[data-testid=notes-file]').setInputFiles(path.join(dl, 'notes-bad.json'));
  await page.waitForFunction(() => document.querySelector('[data-testid=tl-notice]').textContent.includes('no JSON'));
  step = 'notes: a bad notes parameter';
  await open(DEV, '#notes=abc,5-3~x,12~ok');
  check(await tl(() => window.nx.timeline.notes.length === 1 && window.nx.timeline.notes[0].text === 'ok'), 'bad notes entries were kept');
  check((await page.textContent('[data-testid=tl-notice]')).includes('2 annotations of the link could not be read'), 'no word on the bad notes');

  /* ---- 3. memory view ---- */
  step = 'memory: SBUF allocations of the window';
  const [[nAlloc]] = await sql(DEV, 'SELECT count(*) FROM SbufAllocation');
  check(nAlloc > 0, 'the device profile has no SbufAllocation rows');
  await open(DEV);
  await tl(() => { const t = window.nx.timeline; t.setView(t.full[1] * 0.2, t.full[1] * 0.4); });
  await settled();
  const tlView = await tl(() => window.nx.timeline.view());
  /* the hash follows the view 150 ms after it rests */
  await page.waitForFunction((v) => { const h = new URLSearchParams(location.hash.slice(1)); return h.get('t0') === v.t0 && h.get('t1') === v.t1; }, tlView);
  await page.locator('[data-testid=tab-memory]').focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => window.nx && window.nx.memory && window.nx.memory.requests >= 1);
  const mem = await page.evaluate(() => { const m = window.nx.memory; return { t0: m.abs(Math.floor(m.t0)), t1: m.abs(Math.ceil(m.t1)), n: m.allocs.length, total: m.total }; });
  check(mem.t0 === tlView.t0 && mem.t1 === tlView.t1, `the memory view's window ${mem.t0}-${mem.t1} is not the timeline's ${tlView.t0}-${tlView.t1}`);
  const [[inWin]] = await sql(DEV, `SELECT count(*) FROM SbufAllocation WHERE start_ts < ${mem.t1} AND end_ts > ${mem.t0}`);
  check(mem.total === inWin && mem.n === Math.min(inWin, 4000), `memory: ${mem.n} drawn of ${mem.total}, SQL ${inWin}`);
  await page.screenshot({ path: path.join(shots, 'memory.png'), fullPage: true });
  step = 'memory: a click on an allocation opens the timeline on it';
  const spot = await page.evaluate(() => { const m = window.nx.memory;
    const s = m.spots.filter((x) => x.x1 - x.x0 > 4 && x.y1 - x.y0 > 3).sort((a, b) => (b.x1 - b.x0) - (a.x1 - a.x0))[0];
    return s && { x: (Math.max(s.x0, 120) + Math.min(s.x1, m.W)) / 2, y: (s.y0 + s.y1) / 2, a: { s: m.abs(s.a.start), e: m.abs(s.a.end), name: s.a.name } }; });
  check(spot, 'no allocation drawn');
  const mb = await page.locator('[data-testid=memory]').boundingBox();
  await page.evaluate((y) => window.scrollTo(0, y), 0);
  await page.mouse.move(mb.x + spot.x, mb.y + spot.y);
  check(!(await page.locator('#tooltip').isHidden()) && (await page.textContent('#tooltip')).includes(spot.a.name || ''), 'no tooltip over the allocation');
  await page.mouse.click(mb.x + spot.x, mb.y + spot.y);
  await page.waitForFunction(() => window.nx && window.nx.timeline && window.nx.timeline.requests >= 1);
  const v = await tl(() => window.nx.timeline.view());
  check(BigInt(v.t0) <= BigInt(spot.a.s) && BigInt(v.t1) >= BigInt(spot.a.e), `the timeline ${v.t0}-${v.t1} does not show the allocation ${spot.a.s}-${spot.a.e}`);
  step = 'memory: dark, and a framework trace says it has none';
  const dark = await browser.newPage();
  await dark.setViewportSize({ width: 1280, height: 720 });
  await dark.emulateMedia({ colorScheme: 'dark' });
  await dark.goto(`${url}/profile/${encodeURIComponent(DEV)}/memory`);
  await dark.waitForFunction(() => window.nx && window.nx.memory && window.nx.memory.requests >= 1);
  await dark.screenshot({ path: path.join(shots, 'memory-dark.png') });
  await open(DEV, '', dark);
  await dark.evaluate(() => { const t = window.nx.timeline; t.addMarker(t.full[1] * 0.3, 'A'); t.addRange(t.full[1] * 0.5, t.full[1] * 0.6, 'range'); });
  await dark.screenshot({ path: path.join(shots, 'timeline-dark.png') });
  await dark.close();
  await page.goto(`${url}/profile/${encodeURIComponent(NESTED)}/memory`);
  await page.locator('[data-testid=mem-none]').waitFor();
  step = 'memory: bad input at the API';
  for (const q of ['t0=5&t1=3&px=100', 't0=a&t1=3&px=100', 't0=0&t1=100&px=0']) {
    const r = await page.request.get(`${api(DEV)}/timeline/memory?${q}`);
    check(r.status() === 400, `memory?${q}: ${r.status()}`);
  }

  /* ---- 5. hierarchy ---- */
  step = 'hierarchy: the device profile';
  const [[nf, nh, np, nb, ni]] = await sql(DEV, 'SELECT (SELECT count(*) FROM FrameworkInstruction), (SELECT count(*) FROM HloInstruction), ' +
    '(SELECT count(*) FROM PenguinInstruction), (SELECT count(*) FROM BirInstruction), (SELECT count(*) FROM Instruction)');
  await page.goto(`${url}/profile/${encodeURIComponent(DEV)}/hierarchy`);
  await page.locator('[data-testid=hier-counts]').waitFor();
  const counts = await page.textContent('[data-testid=hier-counts]');
  const fmt = (x) => x.toLocaleString('en-US');
  check(counts.includes(`FrameworkInstruction ${fmt(nf)}`) && counts.includes(`BirInstruction ${fmt(nb)}`) && counts.includes(`Instruction ${fmt(ni)}`), `counts: ${counts}`);
  if (nf > 0) {
    await page.locator('[data-testid=hierarchy] tr[data-level=PenguinInstruction]').first().waitFor();
    const top = await page.locator('[data-testid=hierarchy] tr[data-level=FrameworkInstruction]').count();
    check(top === Math.min(nf, 500), `top level rows ${top}, FrameworkInstruction ${nf}`);
    check(nf !== 1 || nh !== 1 || await page.locator('[data-testid=hier-kernel-only]').count() === 1, 'a one-kernel profile is not said to be one');
    const pen = page.locator('[data-testid=hierarchy] tr[data-level=PenguinInstruction]').first();
    const pid = await pen.getAttribute('data-id');
    await pen.locator('[data-testid=hier-open]').click();
    const bir = page.locator('[data-testid=hierarchy] tr[data-level=BirInstruction]').first();
    await bir.waitFor();
    const [[nBir]] = await sql(DEV, `SELECT count(*) FROM BirInstruction WHERE raw_penguin_id = ${pid}`);
    check(await page.locator('[data-testid=hierarchy] tr[data-level=BirInstruction]').count() === Math.min(nBir, 500), 'BIR children of a Penguin row');
    const bid = await bir.getAttribute('data-id');
    await bir.locator('[data-testid=hier-open]').click();
    await page.locator('[data-testid=hierarchy] tr[data-level=Instruction]').first().waitFor();
    const [[nIns]] = await sql(DEV, `SELECT count(*) FROM Instruction WHERE raw_bir_id = ${bid}`);
    check(await page.locator('[data-testid=hierarchy] tr[data-level=Instruction]').count() === Math.min(nIns, 500), 'instructions of a BIR row');
    await page.screenshot({ path: path.join(shots, 'hierarchy.png'), fullPage: true });
    await bir.locator('[data-testid=hier-timeline]').click();
    await page.waitForFunction(() => window.nx && window.nx.timeline && window.nx.timeline.matches && window.nx.timeline.matches.total >= 0);
    check(await tl((n) => window.nx.timeline.matches.total === n, nIns), 'the timeline link does not mark the BIR row\'s instructions');
  } else {
    await page.locator('[data-testid=hier-none]').waitFor();
    await page.screenshot({ path: path.join(shots, 'hierarchy.png'), fullPage: true });
  }
  await page.goto(`${url}/profile/${encodeURIComponent(EPOCH)}/hierarchy`);
  check((await page.locator('[data-testid=hier-none]').textContent()).includes('framework trace'), 'a framework trace\'s hierarchy');

  /* ---- 6. compare: two timelines on one axis, deltas per opcode and line ---- */
  step = 'compare: stacked timelines on one axis';
  await page.goto(`${url}/compare/${encodeURIComponent(DEV)}/${encodeURIComponent(DEV2)}`);
  await page.waitForFunction(() => window.nx && window.nx.compare && window.nx.compare.every((t) => t.full && t.requests >= 1));
  await page.locator('[data-testid=cmp-deltas][data-state=ready]').waitFor();
  const ends = await page.evaluate(() => window.nx.compare.map((t) => t.full[1]));
  check(ends[0] === ends[1], `the timelines' axes differ: ${ends}`);
  const span = await page.evaluate(() => window.nx.compare.map((t) => Number(t.tracks.filter((r) => r.kind !== 'counter').reduce((m, r) => Math.max(m, r.end), 0))));
  check(ends[0] === Math.max(...span), `the axis is not the longer profile: ${ends} vs ${span}`);
  step = 'compare: a zoom of one moves the other';
  await page.locator('[data-testid=compare-timelines] [data-testid=timeline]').nth(1).scrollIntoViewIfNeeded();
  const c1 = await page.locator('[data-testid=compare-timelines] [data-testid=timeline]').nth(1).boundingBox();
  await page.mouse.move(c1.x + c1.width * 0.6, c1.y + 40);
  for (let i = 0; i < 6; i++) await page.keyboard.press('w');
  await page.waitForFunction(() => { const [p, q] = window.nx.compare; return p.t0 === q.t0 && p.t1 === q.t1 && p.t1 - p.t0 < p.full[1] / 2; });
  step = 'compare: deltas of the window against SQL';
  await page.waitForFunction(() => { const d = window.nx.compareDeltas, t = window.nx.compare[0];
    return d && d.t0 === Math.max(0, Math.floor(t.t0)) && d.t1 === Math.ceil(t.t1) && document.querySelector('[data-testid=cmp-deltas]').dataset.state === 'ready'; });
  const cd = await page.evaluate(() => { const d = window.nx.compareDeltas, o = window.nx.compare.map((t) => t.origin.toString());
    return { t0: d.t0, t1: d.t1, o, mm: d.got.map((g) => (g.ops.find((x) => x.label === 'MATMUL') || { busy: 0, count: 0 })) }; });
  for (const [i, name] of [[0, DEV], [1, DEV2]]) {
    const t0 = BigInt(cd.o[i]) + BigInt(cd.t0), t1 = BigInt(cd.o[i]) + BigInt(cd.t1);
    const [[busy, n]] = await sql(name, `SELECT coalesce(sum(least(end_ts, ${t1}) - greatest(start_ts, ${t0})), 0), count(*) FROM Instruction ` +
      `WHERE opcode = 'MATMUL' AND start_ts < ${t1} AND end_ts > ${t0}`);
    check(busy === cd.mm[i].busy && n === cd.mm[i].count, `${name} MATMUL in the window: ${JSON.stringify(cd.mm[i])}, SQL ${n}, ${busy}`);
  }
  const mrow = page.locator('[data-testid=cmp-ops] tr[data-label=MATMUL]');
  const wantD = cd.mm[1].busy - cd.mm[0].busy;
  const dtext = await mrow.locator('td').nth(5).textContent();
  check(wantD === 0 ? dtext === "=" : dtext.startsWith(wantD > 0 ? "+" : "−"), `MATMUL delta says ${dtext}, want ${wantD}`);
  check(await page.locator('[data-testid=cmp-lines] tbody tr').count() > 0, 'no per-line deltas');
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(shots, 'compare.png') });
  await page.screenshot({ path: path.join(shots, 'compare-full.png'), fullPage: true });
  check(!(await page.evaluate(() => location.hash)).includes('groups'), 'the compare page\'s timelines wrote to the URL');

  errors.splice(0, errors.length, ...errors.filter((e) => !/40[034]|analysis_failed/.test(e)));
  check(errors.length === 0, 'browser errors: ' + errors.join(' | '));
  console.log('ui views ok');
} catch (e) {
  console.error(`FAIL (${step}): ${e.message}`);
  await page.screenshot({ path: path.join(shots, 'failed.png'), fullPage: true }).catch(() => {});
  if (errors.length) console.error('browser errors: ' + errors.join(' | '));
  process.exitCode = 1;
} finally {
  await close();
}
