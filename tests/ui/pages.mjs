// pages.mjs: drives the web UI's pages in headless Debian Chromium through playwright-core:
// profiles page (kinds, filter, pick two), compare page, a profile's overview (Summary with
// units and descriptions, engine bars, bounds chart, findings with source lines), source
// view of a finding's line (instruction count, opcodes, link to the timeline), source view
// without an archive (upload hint), SQL page (paging, CSV, schema browser, examples,
// refusal) and a framework trace's overview.
// Environment: NX_UI_URL, NX_A and NX_B (device profiles; A has a source archive),
// NX_FW (a framework profile), NX_SHOTS, NX_TOOLS (tests/tools), NX_CHROMIUM, NX_DL (a
// scratch directory for the CSV). Exits non-zero with a message on the first failure.
import { createRequire } from 'node:module';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const env = (k) => { if (!process.env[k]) throw new Error(`${k} not set`); return process.env[k]; };
const url = env('NX_UI_URL').replace(/\/$/, ''), A = env('NX_A'), B = env('NX_B'), FW = env('NX_FW');
const shots = env('NX_SHOTS'), dl = env('NX_DL');
const { chromium } = createRequire(path.join(env('NX_TOOLS'), 'package.json'))('playwright-core');
mkdirSync(shots, { recursive: true });
const userDir = mkdtempSync(path.join(tmpdir(), 'nx-chromium-'));
const check = (cond, msg) => { if (!cond) throw new Error(msg); };
const shot = (page, n) => page.screenshot({ path: path.join(shots, n + '.png'), fullPage: true });

const browser = await chromium.launchPersistentContext(userDir, {
  executablePath: process.env.NX_CHROMIUM || '/usr/bin/chromium',
  headless: true, acceptDownloads: true,
  viewport: { width: 1440, height: 1000 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const errors = [];
let step = 'start';
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(30000);
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  const text = (sel) => page.locator(sel).first().textContent();

  step = 'profiles page';
  await page.goto(url + '/');
  const row = (n) => page.locator(`tr[data-name="${n}"]`);
  for (const n of [A, B, FW]) await row(n).locator('.badge:not(.quiet)').waitFor();
  check(await row(A).locator('.badge:not(.quiet)').textContent() === 'device', 'A is not a device profile');
  check(await row(FW).locator('.badge:not(.quiet)').textContent() === 'framework', 'the framework trace is not "framework"');
  check(/\d/.test(await row(FW).locator('td').nth(4).textContent()), 'no total time for the framework trace');
  check(await row(A).locator('td').nth(5).textContent() === 'DMA', 'the bottleneck of A is not the DMA that recommend names');
  check(await row(A).locator('.badge.quiet').count() === 1, 'A does not show its source archive');
  await page.fill('[data-testid=filter]', B);
  check(await row(A).isHidden() && await row(B).isVisible(), 'the filter does not narrow the list');
  await page.fill('[data-testid=filter]', '');
  check(await page.isDisabled('[data-testid=compare]'), 'compare enabled with nothing picked');
  await row(A).locator('[data-testid=pick]').check();
  await row(B).locator('[data-testid=pick]').check();
  check(await page.isEnabled('[data-testid=compare]'), 'compare disabled with two picked');
  await shot(page, '1-profiles');

  step = 'compare';
  await page.click('[data-testid=compare]');
  await page.waitForURL(`**/compare/${encodeURIComponent(A)}/${encodeURIComponent(B)}`);
  await page.locator('[data-testid=summary-deltas] tr[data-field=total_time]').waitFor();
  await page.locator('[data-testid=compare-engines] .bar').first().waitFor();
  await page.locator('[data-testid=compare-findings] tbody tr').first().waitFor();
  const headline = await text('[data-testid=compare-headline]');
  check(/Total time .* → .*Bottleneck/.test(headline), `compare headline: ${headline}`);
  const totalRow = await page.locator('[data-testid=summary-deltas] tr[data-field=total_time] td').allTextContents();
  check(totalRow.length === 5 && /[+−]/.test(totalRow[3]), `total_time delta row: ${totalRow}`);
  check(await page.locator('[data-testid=compare-engines] .bar').count() >= 2, 'fewer than two engines compared');
  check(await page.locator('[data-testid=compare-engines] .bar[data-engine^=DMA] .fill').count() === 2, 'no paired DMA bars');
  await shot(page, '2-compare');

  step = 'overview';
  await page.goto(`${url}/profile/${encodeURIComponent(A)}`);
  await page.locator('[data-testid=summary] .metric').first().waitFor();
  await page.locator('[data-testid=engines] .bar').first().waitFor();
  check(await page.locator('[data-testid=summary] .metric .d').count() >= 5, 'summary tiles lack descriptions');
  const tt = page.locator('[data-testid=summary] .metric[data-field=total_time]');
  check(/ (µs|ms|s)$/.test(await tt.locator('.v').textContent()) && (await tt.getAttribute('title')).includes('stored in seconds'),
    'total_time tile: its value lacks its unit or the stored unit is not said');
  await shot(page, '3-overview');
  check(await page.locator(`[data-testid=compare-with] option[value="${B}"]`).count() === 1, 'no "compare with" for B');
  await page.click('[data-testid=tab-analysis]');
  await page.waitForURL('**/analysis');
  await page.locator('[data-testid=findings] tbody tr').first().waitFor();
  check(await page.locator('[data-testid=bounds-chart] g[data-name] rect').count() >= 20, 'bounds chart lacks bars');
  // the chart's axis: ticks at 0 and every 1, 2 or 5 x 10^k ns, labelled with that time
  const ticks = (await page.locator('[data-testid=bounds-chart] text.bc-tick').allTextContents())
    .filter((t) => t !== 'measured total');
  const scale = { ns: 1, 'µs': 1e3, ms: 1e6, s: 1e9 };
  const tickNs = ticks.map((t) => {
    const m = /^(\d+(?:\.\d+)?) (ns|µs|ms|s)$/.exec(t);
    return m ? Math.round(Number(m[1]) * scale[m[2]]) : NaN;
  });
  const tick = tickNs[1], mant = tick / Math.pow(10, Math.floor(Math.log10(tick)));
  check(ticks.length >= 3 && ticks.length <= 6 && tickNs.every((v, i) => v === i * tick) &&
    [1, 2, 5].includes(Math.round(mant * 1e9) / 1e9),
  `bounds chart ticks are not round: ${ticks.join(', ')}`);
  const src = page.locator('[data-testid=finding-source]').first();
  const loc = await src.textContent();
  check(/:\d+$/.test(loc), `finding source is not file:line: ${loc}`);
  await page.locator('[data-testid=analysis]').screenshot({ path: path.join(shots, '3-analysis.png') });
  step = 'finding line -> timeline';
  await page.locator('[data-testid=finding-timeline]').first().click();
  await page.waitForURL(`**/profile/${encodeURIComponent(A)}#*`);
  await page.waitForFunction(() => window.nx && window.nx.timeline.matches && window.nx.timeline.selected);
  const fm = await page.evaluate(() => ({ n: window.nx.timeline.matches.byTable.Instruction, hash: location.hash }));
  check(fm.n > 0 && new URLSearchParams(fm.hash.slice(1)).get('highlight') === loc,
    `the finding's line marks ${fm.n} instructions, hash ${fm.hash}`);

  step = 'source view of a finding line';
  await page.goBack();
  await page.locator('[data-testid=finding-source]').first().click();
  await page.waitForURL('**/source?**');
  const line = Number(loc.split(':').pop());
  await page.locator(`table.src tr.sel[data-line="${line}"]`).waitFor();
  await page.locator('[data-testid=line-opcodes] .chip').first().waitFor();
  const info = await text('[data-testid=line-info]');
  check(new RegExp(`Line ${line} \\d+ instructions`).test(info), `line info: ${info}`);
  const cnt = Number(await page.locator(`table.src tr[data-line="${line}"] td.cnt`).textContent());
  check(cnt > 0 && info.includes(`${cnt} instructions`), 'line count differs from the gutter');
  check(await page.locator('table.src tr.hot').count() >= 3, 'fewer than three lines with instructions');
  check((await text('[data-testid=source-files] li.active')).startsWith(loc.split(':')[0].split('/').pop()), 'wrong file selected');
  await shot(page, '4-source');
  step = 'source line -> timeline';
  const href = await page.getAttribute('[data-testid=timeline-link]', 'href');
  const h = new URLSearchParams(href.split('#')[1]);
  check(h.get('highlight') && h.get('highlight').endsWith(':' + line) && Number(h.get('t1')) > Number(h.get('t0')),
    `timeline link: ${href}`);
  await page.click('[data-testid=timeline-link]');
  await page.waitForURL(`**/profile/${encodeURIComponent(A)}#*`);
  await page.locator('[data-testid=timeline]').waitFor();
  /* the line's instructions are marked: as many matches as the gutter count */
  await page.waitForFunction(() => window.nx && window.nx.timeline.matches);
  const marked = await page.evaluate(() => ({ total: window.nx.timeline.matches.byTable.Instruction, view: window.nx.timeline.view() }));
  check(marked.total === cnt, `the timeline marks ${marked.total} instructions of the line, the gutter says ${cnt}`);
  check(marked.view.t0 === h.get('t0') && marked.view.t1 === h.get('t1'), `timeline view ${JSON.stringify(marked.view)} != the link's`);
  await page.waitForFunction(() => { const tl = window.nx.timeline; return !tl.pending && tl.covered(); });
  await page.keyboard.press('d'); /* a pan rewrites t0/t1 and keeps the highlight */
  await page.click('[data-testid=timeline]', { position: { x: 5, y: 5 } });
  await page.keyboard.press('d');
  await page.waitForFunction(([hl, t0]) => { const q = new URLSearchParams(location.hash.slice(1));
    return q.get('highlight') === hl && q.get('t0') !== t0; }, [h.get('highlight'), h.get('t0')]);
  await page.locator('[data-testid=timeline]').screenshot({ path: path.join(shots, '4-timeline-highlight.png') });

  step = 'source view without an archive';
  await page.goto(`${url}/profile/${encodeURIComponent(B)}/source`);
  await page.locator('[data-testid=upload-hint]').waitFor();
  check((await text('[data-testid=upload-hint]')).includes(`upload --source-code DIR --data-path DATA_PATH --display-name ${B}`), 'no upload hint');
  await page.locator('[data-testid=locations] tbody tr').first().waitFor();
  check(/:\d+$/.test(await page.locator('[data-testid=locations] tbody tr td').first().textContent()), 'locations are not file:line');
  await shot(page, '5-source-no-archive');

  step = 'SQL page';
  await page.goto(`${url}/profile/${encodeURIComponent(A)}/sql`);
  await page.locator('[data-testid=schema] details[data-table=Instruction]').waitFor();
  await page.fill('[data-testid=sql]', 'SELECT id, start_ts, queue_name FROM DmaPacket ORDER BY start_ts DESC, id;');
  await page.click('[data-testid=run]');
  await page.waitForFunction(() => / of [\d,]+ /.test(document.querySelector('[data-testid=sql-info]').textContent));
  const total = Number((await text('[data-testid=sql-info]')).match(/ of ([\d,]+) /)[1].replace(/,/g, ''));
  check(total > 100, `DmaPacket has only ${total} rows`);
  check(await page.locator('[data-testid=result] tbody tr').count() === 100, 'page 1 is not 100 rows');
  const firstTs = await page.locator('[data-testid=result] tbody tr').first().locator('td').nth(1).textContent();
  await page.click('[data-testid=next]');
  await page.waitForFunction(() => document.querySelector('[data-testid=sql-info]').textContent.startsWith('rows 101–'));
  const p2 = await page.locator('[data-testid=result] tbody tr').first().locator('td').nth(1).textContent();
  check(Number(p2.replace(/,/g, '')) <= Number(firstTs.replace(/,/g, '')), 'page 2 is not after page 1 in the order');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=csv]')]);
  const csvPath = path.join(dl, 'result.csv');
  await download.saveAs(csvPath);
  const csv = readFileSync(csvPath, 'utf8').trimEnd().split('\r\n');
  check(csv[0] === 'id,start_ts,queue_name' && csv.length === total + 1, `CSV: ${csv.length} lines, header ${csv[0]}`);
  await page.click('[data-testid=schema] details[data-table=Instruction] summary');
  await page.locator('[data-testid=schema] details[data-table=Instruction] .field[data-field=opcode] .desc').waitFor();
  await page.click('[data-testid=examples] a:has-text("Time by engine and opcode")');
  await page.waitForFunction(() => /rows 1–/.test(document.querySelector('[data-testid=sql-info]').textContent));
  check((await text('[data-testid=result]')).includes('MATMUL'), 'the example query lacks MATMUL');
  await shot(page, '6-sql');
  await page.fill('[data-testid=sql]', 'DROP TABLE Instruction');
  await page.click('[data-testid=run]');
  await page.locator('[data-testid=error]').waitFor();
  check((await text('[data-testid=error]')).includes('query_not_allowed'), 'DROP not refused');

  step = 'framework overview';
  await page.goto(`${url}/profile/${encodeURIComponent(FW)}`);
  await page.locator('[data-testid=summary] .metric').first().waitFor();
  check((await page.textContent('main')).includes('Framework trace'), 'no framework card');
  await page.waitForFunction(() => { const tl = window.nx && window.nx.timeline; return tl && tl.tracks.length && !tl.pending && tl.covered(); });
  const fwRows = await page.evaluate(() => window.nx.timeline.tracks.filter((t) => t.kind === 'framework').length);
  check(fwRows > 1, `the timeline has ${fwRows} framework rows`);
  await shot(page, '7-framework');
  await page.selectOption('[data-testid=compare-with]', A);
  await page.waitForURL(`**/compare/${encodeURIComponent(FW)}/${encodeURIComponent(A)}`);
  await page.locator('[data-testid=summary-deltas] tr[data-field=total_time]').waitFor();
  check((await text('[data-testid=compare-report]')).includes('needs two device profiles'), 'framework compare report');

  errors.splice(0, errors.length, ...errors.filter((e) => !/40[03]|query_not_allowed|analysis_failed/.test(e)));
  check(errors.length === 0, 'browser errors: ' + errors.join(' | '));
  console.log('ui pages ok: ' + JSON.stringify({ loc, line, cnt, total, headline }));
} catch (e) {
  console.error(`FAIL (${step}): ${e.message}`);
  if (errors.length) console.error('browser errors: ' + errors.join(' | '));
  process.exitCode = 1;
} finally {
  await browser.close();
  rmSync(userDir, { recursive: true, force: true });
}
