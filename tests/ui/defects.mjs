// defects.mjs: one regression test per defect of the web UI's second round (issue 39),
// in headless Debian Chromium through playwright-core, against the real server on real
// profiles: a simulated device profile with its kernel sources, three vendored
// framework traces (nested slices, Unix-epoch times, a third), a directory of traces on
// two clocks and one of a device profile with a trace on another clock. Each step
// names its defect (D1 .. D11). Screenshots of a device profile and a framework trace at
// several zoom levels, light and dark, at 1280x720, go to NX_SHOTS.
// Environment: NX_UI_URL, NX_DEV (device profile, sources uploaded), NX_FW_NESTED,
// NX_FW_EPOCH, NX_FW_THIRD, NX_MIXED (two clocks, aligned), NX_DEVMIX (device + trace
// on another clock), NX_SHOTS, NX_DL (scratch for downloads), NX_TOOLS, NX_CHROMIUM.
// Beyond the defects: the operator table and the small-DMA warning band.
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { launch } from './chromium.mjs';
import { apiOf, check, env, openProfile, settled as settledOn, sqlRows } from './helpers.mjs';

const url = env('NX_UI_URL').replace(/\/$/, ''), DEV = env('NX_DEV'), NESTED = env('NX_FW_NESTED');
const EPOCH = env('NX_FW_EPOCH'), THIRD = env('NX_FW_THIRD'), MIXED = env('NX_MIXED'), DEVMIX = env('NX_DEVMIX');
const shots = env('NX_SHOTS'), dl = env('NX_DL');
mkdirSync(shots, { recursive: true });
const api = (name) => apiOf(url, name);

const { browser, page, errors, close } = await launch(env('NX_TOOLS'), { viewport: { width: 1280, height: 720 } });
let step = 'start';
try {
  const sql = (name, q) => sqlRows(page, url, name, q);
  const settled = () => settledOn(page);
  const open = (name, hash = '') => openProfile(page, url, name, hash);
  const tl = (fn, arg) => page.evaluate(fn, arg);
  const canvasBox = () => page.locator('[data-testid=timeline]').boundingBox();
  /* the centre of the widest entry drawn on a row of `kind` (page coordinates) */
  const target = async (kind, pred) => {
    const t = await tl(([k, p]) => {
      const tl = window.nx.timeline, ok = p ? new Function('tr', 'return ' + p) : () => true;
      let best = null;
      tl.tracks.forEach((tr, i) => {
        const s = tl.series(i);
        if (tr.kind !== k || !s || !ok(tr)) return;
        for (let j = 0; j < s.start.length; j++) {
          const [x0, x1] = tl.extent(s, j), a = Math.max(x0, tl.labelW), b = Math.min(x1, tl.W);
          if (b - a > (best ? best.w : 2)) best = { w: b - a, x: (a + b) / 2, y: tr.y + tr.h / 2, id: s.id[j], label: s.label[j], table: s.table };
        }
      });
      return best;
    }, [kind, pred || null]);
    check(t, `no ${kind} event drawn`);
    /* the row on screen: a mouse event beyond the window reaches nothing */
    await page.evaluate((y) => { const r = window.nx.timeline.canvas.getBoundingClientRect();
      if (r.top + y < 60 || r.top + y > innerHeight - 40) window.scrollBy(0, r.top + y - innerHeight / 2); }, t.y);
    const b = await canvasBox();
    return Object.assign(t, { px: b.x + t.x, py: b.y + t.y });
  };

  /* ---- D1: framework traces ---- */
  for (const fw of [NESTED, EPOCH, THIRD]) {
    step = `D1 framework trace ${fw}: lanes`;
    await open(fw);
    const lanes = await tl(() => {
      const t = window.nx.timeline, out = { lanes: 0, overlaps: 0 };
      out.lanes = t.tracks.filter((r) => r.kind === 'framework' && r.lane > 0).length;
      for (const s of t.data.rows.values()) {
        if (s.kind !== 'framework' || s.mode !== 'raw') continue;
        const iv = s.start.map((x, j) => [x, s.end[j]]).sort((a, b) => a[0] - b[0]);
        let reach = -Infinity;
        for (const [a, b] of iv) { if (a < reach) out.overlaps++; reach = Math.max(reach, b); }
      }
      return out;
    });
    check(lanes.lanes > 0, `${fw}: nested events have no depth lanes`);
    check(lanes.overlaps === 0, `${fw}: ${lanes.overlaps} events overlap another on their lane`);
    step = `D1 framework trace ${fw}: click opens its row`;
    const t = await target('framework');
    await page.mouse.click(t.px, t.py);
    await page.locator('.drawer.open [data-testid=details] tr[data-field=name]').waitFor();
    const shown = await page.textContent('[data-testid=details] tr[data-field=name] .mono');
    check(shown === String(t.label), `${fw}: the details show '${shown}', the event is '${t.label}'`);
    check(await page.locator('[data-testid=details-panel] [data-testid=error]').count() === 0, `${fw}: the details show an error`);
    /* exact times end to end: the selection's start, made absolute, is the table's */
    const sel = await tl(() => { const t = window.nx.timeline; return { id: t.selected.id, abs: t.abs(t.selected.start) }; });
    const [[st]] = await sql(fw, `SELECT start_ts::VARCHAR FROM SystemProfileEvents WHERE id = ${sel.id}`);
    check(st === sel.abs, `${fw}: the selected event starts at ${sel.abs} on the timeline, ${st} in the table`);
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !document.querySelector('.drawer.open'));
  }
  step = 'D1 epoch search: the view lands on the match, exactly';
  await open(EPOCH);
  await page.fill('[data-testid=tl-search]', 'name ~ conv');
  await page.press('[data-testid=tl-search]', 'Enter');
  await page.waitForFunction(() => /of \d+/.test(document.querySelector('[data-testid=tl-search-info]').textContent));
  const m = await tl(() => { const t = window.nx.timeline, r = t.matches.rows[0]; return { v: t.view(), start: t.abs(r.start), end: t.abs(r.end), id: r.id, n: t.matches.total }; });
  check(m.n > 0, 'no framework event named like conv');
  check(BigInt(m.v.t0) <= BigInt(m.start) && BigInt(m.end) <= BigInt(m.v.t1) && BigInt(m.v.t1) - BigInt(m.v.t0) < 10n ** 12n,
    `the view ${JSON.stringify(m.v)} does not show the match ${m.start}..${m.end}`);
  const [[ms]] = await sql(EPOCH, `SELECT start_ts::VARCHAR FROM SystemProfileEvents WHERE id = ${m.id}`);
  check(ms === m.start, `the match starts at ${m.start}, the table says ${ms}`);
  await page.screenshot({ path: path.join(shots, 'd1-epoch-search.png') });

  step = 'D1 details of a DMA transfer and a value track';
  await open(DEV);
  const dma = await target('dma');
  await page.mouse.click(dma.px, dma.py);
  await page.locator('.drawer.open [data-testid=details] tr[data-field=queue_name]').waitFor();
  check((await page.textContent('.drawer-title')).startsWith(dma.table), 'the DMA details are not its table\'s');
  const ctrRow = await tl(() => { const t = window.nx.timeline, r = t.tracks.find((x) => x.track === 'SbufUsage'); return { x: t.labelW + t.plotW() / 2, y: r.y + r.h / 2 }; });
  const cb = await canvasBox();
  await page.mouse.click(cb.x + ctrRow.x, cb.y + ctrRow.y);
  await page.locator('.drawer.open [data-testid=details] tr[data-field=timestamp]').waitFor();
  check((await page.textContent('.drawer-title')) === 'SbufUsage sample', 'no sample details for a value track');
  await page.keyboard.press('Escape');

  /* ---- D2: time precision ---- */
  step = 'D2 ticks, status line and tooltip in exact ns';
  await tl(() => window.nx.timeline.setView(4780, 4800));
  await settled();
  const ticks = await tl(() => window.nx.timeline.tickLabels());
  check(ticks.length >= 3 && new Set(ticks.map((x) => x.text)).size === ticks.length, `tick labels repeat: ${ticks.map((x) => x.text)}`);
  for (const k of ticks) {
    check(k.t % k.step === 0, `tick ${k.t} is not a multiple of ${k.step} from the profile's start`);
    const [, num, u] = /^(−?[\d.]+) (s|ms|µs|ns)$/.exec(k.text) || [];
    const scale = { s: 1e9, ms: 1e6, 'µs': 1e3, ns: 1 }[u];
    check(num && Math.round(Number(num.replace('−', '-')) * scale) === k.t, `tick ${k.t} is labelled ${k.text}`);
  }
  const win = await page.textContent('[data-testid=tl-window]');
  check(/^window 4,780 – 4,800 ns/.test(win), `status line: ${win}`);
  const ev = await target('instruction');
  await page.mouse.move(ev.px, ev.py);
  await page.locator('#tooltip:not([hidden])').waitFor();
  check(/start [\d,]+ ns · duration [\d,]+ ns/.test(await page.textContent('#tooltip')), 'the tooltip lacks exact times');
  await tl(() => window.nx.timeline.reset());
  await settled();
  check((await tl(() => window.nx.timeline.tickLabels()[0].text)).startsWith('0 '), 'the first tick of the whole profile is not 0');

  /* ---- D3: mixed clocks ---- */
  step = 'D3 traces on two clocks are aligned at ingest';
  const warn = await sql(MIXED, "SELECT message FROM Warning WHERE message LIKE '%not on the Unix epoch%'");
  check(warn.length === 1, `mixed: ${warn.length} clock warnings`);
  await open(MIXED);
  const mspan = await tl(() => window.nx.timeline.full[1]);
  check(mspan > 0 && mspan < 3600e9, `the mixed profile spans ${mspan} ns`);
  check(!/\d{12,}/.test(await page.textContent('[data-testid=headline]')), 'the headline shows a many-digit span');
  step = 'D3 a device profile and a trace on another clock: one clock at a time';
  const dw = await sql(DEVMIX, "SELECT count(*) FROM Warning WHERE message LIKE '%clocks that do not meet%'");
  check(dw[0][0] === 1, 'no Warning about the device clock');
  await open(DEVMIX);
  const c1 = await tl(() => ({ kinds: [...new Set(window.nx.timeline.tracks.map((t) => t.kind))], span: window.nx.timeline.full[1] }));
  check(!c1.kinds.includes('framework') && c1.span < 1e9, `device clock: ${JSON.stringify(c1)}`);
  await page.selectOption('[data-testid=tl-clock]', 'framework');
  await page.waitForFunction(() => window.nx.timeline.tracks.every((t) => t.kind === 'framework'));
  await settled();
  check((await tl(() => window.nx.timeline.full[1])) < 3600e9, 'the framework clock spans hours');
  await page.screenshot({ path: path.join(shots, 'd3-two-clocks.png') });

  /* ---- D4: layout ---- */
  step = 'D4 timeline first and full width at 1280x720, details as a drawer, analysis a tab';
  await open(DEV);
  const lb = await canvasBox();
  check(lb.y < 260 && lb.width > 1280 * 0.9, `the timeline starts at ${lb.y} px, ${lb.width} px wide`);
  check(await page.locator('.drawer.open').count() === 0, 'the details drawer is open before a selection');
  const instr = await target('instruction');
  await page.mouse.click(instr.px, instr.py);
  await page.locator('.drawer.open [data-testid=details] tr[data-field=opcode]').waitFor();
  await page.waitForTimeout(400); /* its slide-in */
  const db = await page.locator('[data-testid=details-panel]').boundingBox();
  check(db.x + db.width <= 1281 && db.x > 600, `drawer at ${JSON.stringify(db)}`);
  await page.screenshot({ path: path.join(shots, 'd4-drawer.png') });
  await page.click('[data-testid=details-close]');
  await page.waitForFunction(() => !document.querySelector('.drawer.open'));
  const tab = await page.locator('[data-testid=tab-analysis]').boundingBox();
  check(tab && tab.y < 50, 'the analysis tab is not in the top bar');

  /* ---- D5: colours ---- */
  step = 'D5 one palette on every page, every load';
  const legend = async () => page.evaluate(() => Object.fromEntries([...document.querySelectorAll('[data-testid=legend] span')]
    .map((s) => [s.dataset.label, s.style.getPropertyValue('--c')])));
  const l1 = await legend();
  check(l1.MATMUL && l1.copy && l1.MATMUL !== l1.copy, `legend: ${JSON.stringify(l1)}`);
  check(!['#e0a800', '#b07aa1'].includes(l1.copy), 'DMA copy has a value track\'s colour');
  await page.reload();
  await page.waitForFunction(() => window.nx && window.nx.timeline.requests >= 1);
  await settled();
  const l2 = await legend();
  check(Object.keys(l1).every((k) => !(k in l2) || l1[k] === l2[k]) && l2.MATMUL === l1.MATMUL && l2.copy === l1.copy,
    `colours changed between loads: ${JSON.stringify(l1)} / ${JSON.stringify(l2)}`);
  step = 'D5 adjacent events of one colour stay apart';
  /* two events of one label, the second starting where the first ends, shown wide */
  const pair = await tl(() => {
    const t = window.nx.timeline;
    for (let i = 0; i < t.tracks.length; i++) {
      const s = t.series(i);
      if (!s || s.mode !== 'raw') continue;
      const o = s.start.map((x, j) => j).sort((a, b) => s.start[a] - s.start[b]);
      for (let k = 1; k < o.length; k++) {
        const a = o[k - 1], b = o[k];
        if (s.label[a] === s.label[b] && s.start[b] === s.end[a] && s.end[a] > s.start[a])
          return { i, a: s.id[a], b: s.id[b], s: s.start[a], e: s.end[b], label: s.label[a] };
      }
    }
    return null;
  });
  check(pair, 'no two abutting events of one colour');
  await tl((p) => window.nx.timeline.setView(p.s - (p.e - p.s) / 2, p.e + (p.e - p.s) / 2), pair);
  await settled();
  const gap = await tl((p) => {
    const t = window.nx.timeline, s = t.series(p.i), j = s.id.indexOf(p.a);
    const x = t.x(s.end[j]), dpr = window.devicePixelRatio || 1, y = Math.round(t.tracks[p.i].y + t.tracks[p.i].h / 2);
    const px = (k) => { const d = t.ctx.getImageData(Math.floor(k * dpr), y * dpr, 1, 1).data; return '#' + [d[0], d[1], d[2]].map((v) => v.toString(16).padStart(2, '0')).join(''); };
    return { colour: NX.color(p.label), inside: px(x - 4), edge: px(x - 0.5) };
  }, pair);
  check(gap.inside === gap.colour && gap.edge !== gap.colour, `abutting ${pair.label} events run into each other: ${JSON.stringify(gap)}`);
  step = 'D5 the source view and compare use the timeline\'s colours';
  const [[loc]] = await sql(DEV, "SELECT loc FROM (SELECT coalesce(bir_debug_info_source_location, nki_source_location) AS loc, count(*) AS n FROM Instruction WHERE opcode = 'MATMUL' GROUP BY 1 ORDER BY n DESC LIMIT 1)");
  await page.goto(`${url}/profile/${encodeURIComponent(DEV)}/source?loc=${encodeURIComponent(loc)}`);
  await page.locator('[data-testid=line-opcodes] .chip').first().waitFor();
  const chip = await page.evaluate(() => [...document.querySelectorAll('[data-testid=line-opcodes] .chip')]
    .find((c) => c.textContent.includes('MATMUL')).style.getPropertyValue('--c'));
  check(chip === l1.MATMUL, `MATMUL is ${chip} in the source view, ${l1.MATMUL} on the timeline`);

  /* ---- D6: tooltips, keys, labels ---- */
  step = 'D6 keys work without clicking the canvas; / focuses the search';
  await open(DEV);
  const v0 = await tl(() => window.nx.timeline.view());
  await page.locator('h1').click();
  await page.keyboard.press('w');
  await page.waitForFunction((v) => { const x = window.nx.timeline.view(); return x.t1 - x.t0 < v.t1 - v.t0; }, v0);
  await page.keyboard.press('/');
  check(await page.evaluate(() => document.activeElement.dataset.testid === 'tl-search'), '/ does not focus the search box');
  await page.keyboard.press('Escape');
  step = 'D6 the tooltip follows a zoom by key';
  await tl(() => window.nx.timeline.reset());
  await settled();
  const e1 = await target('instruction', 'tr.track === "TensorMatrix"');
  await page.mouse.move(e1.px, e1.py);
  await page.locator('#tooltip:not([hidden])').waitFor();
  for (let i = 0; i < 6; i++) await page.keyboard.press('s');
  await settled();
  await page.waitForTimeout(100);
  const tip = await tl(([x, y]) => {
    const t = window.nx.timeline, r = t.canvas.getBoundingClientRect(), h = t.hit(x - r.left, y - r.top);
    const el = document.getElementById('tooltip');
    return { hidden: el.hidden, text: el.textContent, want: h ? `id ${h.id}` : null };
  }, [e1.px, e1.py]);
  check(tip.want === null ? tip.hidden : !tip.hidden && tip.text.includes(tip.want), `stale tooltip after zooming: ${JSON.stringify(tip)}`);
  step = 'D6 the tooltip stays on screen at the bottom';
  await page.setViewportSize({ width: 1280, height: 500 });
  await open(DEV);
  const last = await tl(() => { const t = window.nx.timeline, r = t.tracks[t.tracks.length - 1]; return { x: t.labelW + t.plotW() * 0.98, y: r.y + r.h / 2 }; });
  await page.evaluate((y) => { const r = window.nx.timeline.canvas.getBoundingClientRect(); window.scrollBy(0, r.top + y - (innerHeight - 12)); }, last.y);
  const lb2 = await canvasBox();
  const py = lb2.y + last.y;
  check(py < 500 && py > 400, `the last row is at ${py}`);
  await page.mouse.move(lb2.x + last.x, py);
  await page.locator('#tooltip:not([hidden])').waitFor();
  const tb = await page.locator('#tooltip').boundingBox();
  check(tb.y + tb.height <= 500 && tb.x + tb.width <= 1280, `tooltip off screen: ${JSON.stringify(tb)}`);
  await page.setViewportSize({ width: 1280, height: 720 });
  step = 'D6 labels are ellipsized, not squeezed';
  const fit = await tl(() => { const t = window.nx.timeline, s = t.fit('a_rather_long_framework_event_name_that_cannot_fit', 80); return { s, w: t.ctx.measureText(s).width }; });
  check(fit.s.endsWith('…') && fit.w <= 80, `fit: ${JSON.stringify(fit)}`);

  /* ---- D7: DMA attribution to source lines ---- */
  step = 'D7 a load line carries its DMA bytes and time';
  const lines = await (await page.request.get(`${api(DEV)}/timeline/lines`)).json();
  const lrows = lines.result.rows.map((r) => Object.fromEntries(lines.result.columns.map((c, i) => [c.name, r[i]])));
  const load = lrows.sort((a, b) => b.dma_ns - a.dma_ns)[0];
  check(load.dma_n > 0 && load.dma_ns > load.dur, `the busiest DMA line: ${JSON.stringify(load)}`);
  const [[dmaN, dmaB]] = await sql(DEV, 'SELECT count(*), sum(a.transfer_bytes) FROM Flow f JOIN Instruction i ON i.id = f.in_id JOIN DmaPacketAggregated a ON a.id = f.out_id ' +
    `WHERE f.dependency_type = 'DGE_TRIGGER' AND coalesce(i.bir_debug_info_source_location, i.nki_source_location) = '${load.loc}'`);
  check(dmaN === load.dma_n && dmaB === load.dma_bytes, `line ${load.loc}: ${load.dma_n} transfers, ${load.dma_bytes} B; by SQL ${dmaN}, ${dmaB}`);
  await page.goto(`${url}/profile/${encodeURIComponent(DEV)}/source?loc=${encodeURIComponent(load.loc)}`);
  await page.locator('[data-testid=line-dma]').waitFor();
  check((await page.textContent('[data-testid=line-dma]')).includes(`${load.dma_n} DMA transfers`), 'the line panel lacks its transfers');
  const lineNo = Number(load.loc.split(':').pop());
  check((await page.textContent(`table.src tr[data-line="${lineNo}"] td.dma.last`)).trim() !== '', 'no DMA time in the gutter');
  await page.screenshot({ path: path.join(shots, 'd7-source-dma.png') });
  step = 'D7 the line\'s transfers are highlighted on the timeline';
  await page.click('[data-testid=timeline-link]');
  await page.waitForFunction(() => window.nx && window.nx.timeline.matches);
  const hl = await tl(() => window.nx.timeline.matches.byTable);
  check(hl.DmaPacketAggregated === load.dma_n && hl.Instruction === load.n, `highlight: ${JSON.stringify(hl)} for ${JSON.stringify(load)}`);
  await settled();
  await page.screenshot({ path: path.join(shots, 'd7-timeline-dma.png') });
  step = 'D7 recommend names DMA lines by the same attribution';
  const rep = await (await page.request.get(`${api(DEV)}/analysis`)).json();
  const f = rep.report.findings.find((x) => x.id === 'dma_efficiency');
  const src = f && f.lines && f.lines.columns ? f.lines.rows.map((r) => r[f.lines.columns.indexOf('source')]) : [];
  check(src.length && src.every((s) => lrows.some((l) => l.dma_n > 0 && (l.loc === s || l.loc.endsWith('/' + s)))),
    `DMA finding lines ${src} are not lines with DMA in the source view`);

  /* ---- D8: box selection ---- */
  step = 'D8 a box sums durations clipped to it, busy % per row, CSV';
  await open(DEV);
  const g = await tl(() => { const t = window.nx.timeline; const a = t.tracks.findIndex((r) => r.track === 'Tensor'); const b = t.tracks.findIndex((r) => r.track === 'Sync');
    return { x0: t.x(t.full[1] * 0.3), x1: t.x(t.full[1] * 0.45), y0: t.tracks[a].y + 3, y1: t.tracks[b].y + t.tracks[b].h - 3 }; });
  const bb = await canvasBox();
  await page.keyboard.down('Shift');
  await page.mouse.move(bb.x + g.x0, bb.y + g.y0);
  await page.mouse.down();
  await page.mouse.move(bb.x + g.x1, bb.y + g.y1, { steps: 5 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  await page.locator('[data-testid=tl-aggregate-rows] tbody tr').first().waitFor();
  const agg = await tl(() => window.nx.timeline.lastAggregate);
  for (const r of agg.rows) {
    const [[busy]] = await sql(DEV, `SELECT coalesce(sum(least(end_ts, ${agg.t1}) - greatest(start_ts, ${agg.t0})), 0) FROM Instruction ` +
      `WHERE timeline_track = '${r.row}' AND start_ts < ${agg.t1} AND end_ts > ${agg.t0}`);
    check(busy === r.busy, `${r.row}: ${r.busy} ns busy in the box, ${busy} by SQL`);
    check(r.busy <= agg.width, `${r.row}: ${r.busy} ns busy in a ${agg.width} ns box`);
  }
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=tl-aggregate-csv]')]);
  const csvPath = path.join(dl, 'selection.csv');
  await download.saveAs(csvPath);
  const csv = readFileSync(csvPath, 'utf8').trimEnd().split('\r\n');
  check(csv[0].startsWith('kind,core,row,label,events,busy_ns,busy_pct_of_box') && csv.length === 1 + agg.rows.length + agg.labels.length,
    `CSV: ${csv.length} lines, header ${csv[0]}`);
  await page.screenshot({ path: path.join(shots, 'd8-selection.png'), fullPage: true });

  /* ---- D9: URL state ---- */
  step = 'D9 invalid or out-of-range views in the link';
  const full = await tl(() => window.nx.timeline.full);
  for (const [hash, want] of [['#t0=-1e12&t1=1e12', 'ignored'], ['#t0=0&t1=Infinity', 'ignored'],
    ['#t0=-1000000000000&t1=1000000000000', 'narrowed'], ['#t0=100&t1=101', 'narrowed'], ['#t0=5000&t1=4000', 'ignored']]) {
    await page.goto('about:blank');
    await open(DEV, hash);
    const st = await tl(() => ({ t0: window.nx.timeline.t0, t1: window.nx.timeline.t1, notice: document.querySelector('[data-testid=tl-notice]').textContent }));
    check(st.notice.includes(want), `${hash}: the notice says '${st.notice}'`);
    check(st.t1 - st.t0 >= 10 && st.t0 >= full[0] - 0.11 * (full[1] - full[0]) && st.t1 <= full[1] + 0.11 * (full[1] - full[0]),
      `${hash}: view ${st.t0}..${st.t1} outside the profile ${full}`);
    await page.keyboard.press('d');
    await settled();
    check(await page.locator('[data-testid=tl-notice] div').count() === 1, `${hash}: the notice is not said once`);
  }
  step = 'D9 dragging the profile off screen';
  await open(DEV);
  const b3 = await canvasBox();
  await page.mouse.move(b3.x + 400, b3.y + 60);
  await page.mouse.down();
  await page.mouse.move(b3.x + 400 + 3000, b3.y + 60, { steps: 10 });
  await page.mouse.up();
  const dv = await tl(() => ({ t0: window.nx.timeline.t0, t1: window.nx.timeline.t1, f: window.nx.timeline.full }));
  check(dv.t1 > dv.f[0] && dv.t0 < dv.f[1], `the profile left the view: ${JSON.stringify(dv)}`);

  /* ---- D10: assorted ---- */
  step = 'D10 unknown profiles: one clear error';
  for (const p of ['/compare/' + encodeURIComponent(DEV) + '/nope', '/profile/nope', '/profile/nope/analysis']) {
    await page.goto(url + p);
    await page.locator('[data-testid=error]').first().waitFor();
    await page.waitForTimeout(300);
    check(await page.locator('[data-testid=error]').count() === 1 && (await page.textContent('[data-testid=error]')).includes("'nope'"),
      `${p}: ${await page.locator('[data-testid=error]').count()} errors`);
    check(await page.locator('[data-testid=summary-deltas]').count() === 0, `${p}: a table of dashes`);
  }
  step = 'D10 SQL grid keeps every digit';
  await page.goto(`${url}/profile/${encodeURIComponent(DEV)}/sql`);
  await page.fill('[data-testid=sql]', 'SELECT 123456.789 AS x, 12345678901234 AS y, 0.1::DOUBLE + 0.2::DOUBLE AS z');
  await page.click('[data-testid=run]');
  await page.locator('[data-testid=result] tbody tr').first().waitFor();
  const cells = await page.locator('[data-testid=result] tbody td').allTextContents();
  check(cells[0] === '123,456.789' && cells[1] === '12,345,678,901,234' && cells[2] === '0.30000000000000004', `SQL cells: ${cells}`);
  step = 'D10 value tracks: natural order, honest scales';
  await open(DEV);
  const vt = await tl(() => { const t = window.nx.timeline; return t.tracks.filter((r) => r.kind === 'counter').map((r) => ({ track: r.track, label: t.rowLabel(r) })); });
  const sems = vt.filter((r) => r.track.startsWith('sem ')).map((r) => Number(r.track.slice(4)));
  check(sems.length && sems.every((n, i) => !i || n > sems[i - 1]), `semaphores out of order: ${sems}`);
  check(vt.every((r) => !/e-\d/.test(r.label)), `a value track's scale: ${vt.map((r) => r.label)}`);
  step = 'D10 tiles, names, the engine card and the bottleneck';
  const tile = page.locator('[data-testid=summary] .metric[data-field=total_time]');
  check(/\d (µs|ms|s)$/.test(await tile.locator('.v').textContent()) && await tile.locator('.unit').count() === 0, 'the total_time tile');
  await page.locator('[data-testid=engines] .bar[data-engine=DMA]').waitFor();
  check((await page.textContent('[data-testid=engines] .bar[data-engine=DMA]')).includes('bottleneck'), 'the engine card does not mark the DMA bottleneck');
  const bounds = await (await page.request.get(`${api(DEV)}/analysis?part=bounds`)).json();
  await page.goto(url + '/');
  const prow = page.locator(`tr[data-name="${DEV}"]`);
  await page.waitForFunction((n) => { const r = document.querySelector(`tr[data-name="${n}"]`); return r && r.querySelectorAll('td')[5].textContent !== ''; }, DEV);
  check((await prow.locator('td').nth(5).textContent()) === bounds.report.bottleneck, 'the profiles page bottleneck is not recommend\'s');
  await page.goto(`${url}/profile/${encodeURIComponent(DEV)}/analysis`);
  await page.locator('[data-testid=findings] tbody tr').first().waitFor();
  const atext = await page.textContent('main');
  check(!/\d us\b/.test(atext) && !atext.includes('Gpsimd'), 'the analysis page says us or Gpsimd');
  step = 'D10 dark mode';
  const dark = await browser.newPage();
  await dark.emulateMedia({ colorScheme: 'dark' });
  await dark.goto(`${url}/profile/${encodeURIComponent(DEV)}`);
  await dark.waitForFunction(() => window.nx && window.nx.timeline.requests >= 1);
  const bg = await dark.evaluate(() => {
    const c = getComputedStyle(document.body).backgroundColor.match(/\d+/g).map(Number);
    const t = window.nx.timeline, d = t.ctx.getImageData(Math.round((t.labelW + 3) * (window.devicePixelRatio || 1)), 5, 1, 1).data;
    return { body: c[0] + c[1] + c[2], canvas: d[0] + d[1] + d[2] };
  });
  check(bg.body < 150 && bg.canvas < 200, `dark mode: ${JSON.stringify(bg)}`);
  for (const [name, n] of [[DEV, 'device'], [EPOCH, 'framework']]) {
    await dark.goto(`${url}/profile/${encodeURIComponent(name)}`);
    await dark.waitForFunction(() => window.nx && window.nx.timeline.requests >= 1);
    await dark.waitForFunction(() => { const t = window.nx.timeline; return !t.pending && t.covered(); });
    await dark.screenshot({ path: path.join(shots, `dark-${n}.png`) });
  }
  await dark.close();

  /* ---- D11: search ---- */
  step = 'D11 comparisons, substrings, names, errors at the box';
  await open(DEV);
  const search = async (q) => {
    await page.fill('[data-testid=tl-search]', q);
    await page.press('[data-testid=tl-search]', 'Enter');
    await page.waitForFunction(() => { const i = document.querySelector('[data-testid=tl-search-info]'); return i.textContent && i.textContent !== 'searching…'; });
    return page.evaluate(() => ({ info: document.querySelector('[data-testid=tl-search-info]').textContent,
      bad: document.querySelector('[data-testid=tl-search]').classList.contains('bad'), total: window.nx.timeline.matches && window.nx.timeline.matches.total }));
  };
  for (const [q, where] of [['opcode ~ mat', "opcode ILIKE '%mat%'"], ['duration_ns > 100', 'duration_ns > 100'], ['opcode != MATMUL', "opcode <> 'MATMUL'"]]) {
    const r = await search(q);
    const [[n]] = await sql(DEV, `SELECT count(*) FROM Instruction WHERE ${where}`);
    check(!r.bad && r.total === n, `${q}: ${JSON.stringify(r)}, SQL ${n}`);
  }
  for (const [q, want] of [['nosuch = 1', "field 'nosuch'"], ['duration_ns > abc', 'not a number'], ['= 3', 'write field']]) {
    const r = await search(q);
    check(r.bad && r.info.includes(want), `${q}: ${JSON.stringify(r)}`);
  }
  await open(EPOCH);
  const r11 = await search('conv');
  check(r11.total > 0 && (await tl(() => window.nx.timeline.matches.rows.every((x) => /conv/i.test(x.label)))), `bare word: ${JSON.stringify(r11)}`);

  /* ---- beyond the defects: the operator table and the small-DMA band ---- */
  step = 'operator table of the view, per opcode and per line, as CSV';
  await open(DEV);
  await tl(() => window.nx.timeline.setView(2000, 9000));
  await settled();
  await page.click('[data-testid=tl-ops-toggle]');
  await page.locator('[data-testid=tl-ops-lines] tbody tr').first().waitFor();
  const ops = await tl(() => window.nx.timeline.opsData);
  for (const o of ops.ops.filter((x) => x.kind === 'instruction')) {
    const [[busy, n]] = await sql(DEV, `SELECT sum(least(end_ts, ${ops.t1}) - greatest(start_ts, ${ops.t0})), count(*) FROM Instruction ` +
      `WHERE opcode = '${o.label}' AND start_ts < ${ops.t1} AND end_ts > ${ops.t0}`);
    check(busy === o.busy && n === o.count, `${o.label}: ${o.count} events, ${o.busy} ns; SQL ${n}, ${busy}`);
  }
  const busiest = ops.lines.find((l) => l.dma_n > 0);
  check(busiest, 'no line of the view triggers DMA');
  const [opsDl] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=tl-ops-csv]')]);
  await opsDl.saveAs(path.join(dl, 'ops.csv'));
  const opsCsv = readFileSync(path.join(dl, 'ops.csv'), 'utf8').trimEnd().split('\r\n');
  check(opsCsv.length === 1 + ops.ops.length + ops.lines.length && opsCsv[0].startsWith('table,kind,label,events,busy_ns'), `operators CSV: ${opsCsv.length} lines`);
  await page.screenshot({ path: path.join(shots, 'ops.png'), fullPage: true });
  step = 'small-DMA band';
  await tl(() => window.nx.timeline.reset());
  await settled();
  /* the band of the whole view (not one of an earlier view) */
  await page.waitForFunction(() => { const t = window.nx.timeline, b = t.smallDma; return b && b.t0 <= t.full[0] && b.t1 >= t.full[1]; });
  const band = await tl(() => { let n = 0; for (const a of window.nx.timeline.smallDma.rows.values()) for (const b of a) n += b.small; return n; });
  const [[smallN]] = await sql(DEV, 'SELECT count(*) FROM DmaPacketAggregated WHERE transfer_bytes < 512 * ' +
    'greatest(1, coalesce(read_num_sbuf_partitions, 0), coalesce(write_num_sbuf_partitions, 0))');
  check(band === smallN, `the band counts ${band} small transfers, SQL ${smallN}`);
  if (smallN) check((await legend())[`small DMA (< 512 B per partition)`], 'the legend does not name the band');

  /* ---- screenshots at zoom levels ---- */
  step = 'screenshots';
  for (const [name, n] of [[DEV, 'device'], [NESTED, 'framework']]) {
    await open(name);
    await page.screenshot({ path: path.join(shots, `zoom-${n}-0.png`) });
    const b = await canvasBox();
    for (const z of [1, 2, 3]) {
      await page.mouse.move(b.x + b.width * 0.4, b.y + 50);
      for (let i = 0; i < 7; i++) await page.keyboard.press('w');
      await settled();
      await page.screenshot({ path: path.join(shots, `zoom-${n}-${z}.png`) });
    }
  }

  errors.splice(0, errors.length, ...errors.filter((e) => !/40[034]|analysis_failed/.test(e)));
  check(errors.length === 0, 'browser errors: ' + errors.join(' | '));
  console.log('ui defects ok');
} catch (e) {
  console.error(`FAIL (${step}): ${e.message}`);
  if (errors.length) console.error('browser errors: ' + errors.join(' | '));
  process.exitCode = 1;
} finally {
  await close();
}
