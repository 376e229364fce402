// browse.mjs: drives the real web UI in headless Debian Chromium through playwright-core:
// profiles page (list, filter, open), profile page (headline, summary, engine bars, timeline
// zoom in and out, click an instruction -> details drawer with its opcode), analysis page,
// SQL page (run a query).
// Environment: NX_UI_URL (the UI's root URL), NX_PROFILE (a device profile's name),
// NX_SHOTS (screenshot directory), NX_TOOLS (tests/tools, where playwright-core is),
// NX_CHROMIUM (browser binary). Exits non-zero with a message on the first failure.
import { createRequire } from 'node:module';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const env = (k) => { if (!process.env[k]) throw new Error(`${k} not set`); return process.env[k]; };
const url = env('NX_UI_URL').replace(/\/$/, ''), profile = env('NX_PROFILE'), shots = env('NX_SHOTS');
const { chromium } = createRequire(path.join(env('NX_TOOLS'), 'package.json'))('playwright-core');
mkdirSync(shots, { recursive: true });
const userDir = mkdtempSync(path.join(tmpdir(), 'nx-chromium-'));

function check(cond, msg) { if (!cond) throw new Error(msg); }

// a fresh profile directory (playwright passes it as --user-data-dir)
const browser = await chromium.launchPersistentContext(userDir, {
  executablePath: process.env.NX_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1440, height: 1000 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const errors = [];
let step = 'start';
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(20000);
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  const view = () => page.evaluate(() => window.nx.timeline.view());
  const requests = () => page.evaluate(() => window.nx.timeline.requests);
  /* the view's data has arrived: no fetch running and the data covers the view (a zoom
   * that keeps the bucket width is drawn from the data at hand, without a request) */
  const settled = () => page.waitForFunction(() => { const tl = window.nx.timeline; return !tl.pending && tl.covered(); });

  step = 'profiles page';
  await page.goto(url + '/');
  const row = page.locator(`tr[data-name="${profile}"]`);
  await row.waitFor();
  await row.locator('.badge').waitFor();
  check((await row.locator('.badge').textContent()) === 'device', 'kind is not device');
  check(/\d/.test(await row.locator('td').nth(4).textContent()), 'no total time');
  check((await row.locator('td').nth(5).textContent()) === 'DMA', 'the bottleneck is not the DMA that recommend names');
  await page.screenshot({ path: path.join(shots, '1-profiles.png'), fullPage: true });
  await page.fill('[data-testid=filter]', 'no-such-profile-xyz');
  check(await row.isHidden(), 'filter does not hide the profile');
  await page.fill('[data-testid=filter]', '');
  await row.locator('a').click();

  step = 'profile page';
  await page.waitForURL(`**/profile/${encodeURIComponent(profile)}`);
  await page.locator('[data-testid=summary] .metric').first().waitFor();
  await page.locator('[data-testid=engines] .bar').first().waitFor();
  await page.waitForFunction(() => window.nx && window.nx.timeline.requests >= 1);
  await page.locator('[data-testid=hl-bottleneck]').waitFor();
  check((await page.textContent('[data-testid=hl-bottleneck]')).includes('DMA'), 'the headline lacks the DMA bottleneck');
  const full = await view();
  await page.screenshot({ path: path.join(shots, '2-profile.png'), fullPage: true });

  step = 'zoom in';
  let n = await requests();
  await page.click('[data-testid=timeline]', { position: { x: 5, y: 5 } });
  for (let i = 0; i < 6; i++) await page.keyboard.press('w');
  await page.waitForFunction((k) => window.nx.timeline.requests > k, n);
  await settled();
  const zin = await view();
  check(zin.t1 - zin.t0 < (full.t1 - full.t0) / 2, `W did not zoom in: ${JSON.stringify(zin)}`);
  await page.waitForFunction((v) => location.hash === `#t0=${v.t0}&t1=${v.t1}`, zin);
  const box = await page.locator('[data-testid=timeline]').boundingBox();
  await page.mouse.move(box.x + box.width * 0.6, box.y + 60);
  await page.mouse.wheel(0, -400);
  await page.waitForFunction((v) => window.nx.timeline.view().t1 - window.nx.timeline.view().t0 < v.t1 - v.t0, zin);
  await settled();
  const zw = await view();
  check(zw.t1 - zw.t0 < zin.t1 - zin.t0, 'wheel did not zoom in');
  await page.screenshot({ path: path.join(shots, '3-zoomed-in.png'), fullPage: true });

  step = 'zoom out';
  n = await requests();
  await page.click('[data-testid=zoom-out]');
  await page.click('[data-testid=zoom-out]');
  await page.click('[data-testid=timeline]', { position: { x: 5, y: 5 } });
  for (let i = 0; i < 12; i++) await page.keyboard.press('s');
  await page.waitForFunction((k) => window.nx.timeline.requests > k, n);
  await settled();
  const zout = await view();
  check(zout.t1 - zout.t0 > zw.t1 - zw.t0, 'S did not zoom out');
  await page.click('[data-testid=reset]');
  await settled();
  check((await page.locator('[data-testid=legend] span').count()) >= 3, 'the colour legend lists fewer than three labels');

  step = 'DMA packets';
  const dmaTable = (t) => page.waitForFunction((table) => {
    const d = window.nx.timeline.data;
    return d && [...d.rows.values()].some((r) => r.table === table);
  }, t);
  await page.check('[data-testid=dma-packets]');
  await dmaTable('DmaPacket');
  await page.uncheck('[data-testid=dma-packets]');
  await dmaTable('DmaPacketAggregated');
  await settled();

  step = 'click an instruction';
  const target = await page.evaluate(() => {
    const tl = window.nx.timeline;
    for (let i = 0; i < tl.tracks.length; i++) {
      const s = tl.series(i);
      if (tl.tracks[i].kind !== 'instruction' || !s) continue;
      let j = 0;
      for (let k = 1; k < s.start.length; k++) if (s.end[k] - s.start[k] > s.end[j] - s.start[j]) j = k;
      const [x0, x1] = tl.extent(s, j);
      return { x: (x0 + x1) / 2, y: tl.tracks[i].y + tl.tracks[i].h / 2,
        label: s.label[j], id: s.id[j] };
    }
    return null;
  });
  check(target, 'no instruction drawn on the timeline');
  await page.mouse.move(box.x + target.x, box.y + target.y);
  await page.locator('#tooltip:not([hidden])').waitFor();
  check((await page.textContent('#tooltip')).includes(target.label), 'tooltip lacks the opcode');
  await page.mouse.click(box.x + target.x, box.y + target.y);
  await page.locator('[data-testid=details] tr[data-field=opcode]').waitFor();
  const opcode = await page.textContent('[data-testid=details] tr[data-field=opcode] .mono');
  check(opcode === target.label, `details opcode '${opcode}' != '${target.label}'`);
  const idCell = await page.textContent('[data-testid=details] tr[data-field=id] .mono');
  check(idCell === String(target.id), `details id '${idCell}' != '${target.id}'`);
  check((await page.locator('[data-testid=details] .desc').count()) > 5, 'no field descriptions');
  const srcLine = await page.textContent('[data-testid=details] tr[data-field=bir_debug_info_source_location] .mono');
  check(/\.py:\d+$/.test(srcLine), `details source line '${srcLine}' is not file.py:line`);
  check((await page.textContent('[data-testid=details] tr[data-field=opcode] .desc')).length > 10, 'no description of opcode');
  await page.waitForFunction(() => window.nx.timeline.canvas.dataset.flows !== undefined);
  await page.screenshot({ path: path.join(shots, '4-details.png'), fullPage: true });
  await page.locator('.card:has([data-testid=timeline])').screenshot({ path: path.join(shots, '4-timeline.png') });

  step = 'search the whole profile';
  await page.fill('[data-testid=tl-search]', 'opcode = MATMUL');
  await page.press('[data-testid=tl-search]', 'Enter');
  await page.waitForFunction(() => /of \d+/.test(document.querySelector('[data-testid=tl-search-info]').textContent));
  const matches = await page.evaluate(() => ({ n: window.nx.timeline.matches.total, sel: window.nx.timeline.selected && window.nx.timeline.selected.label }));
  check(matches.n > 0 && matches.sel === 'MATMUL', `search: ${JSON.stringify(matches)}`);

  step = 'box selection';
  await page.keyboard.press('Escape'); /* leaves the search box */
  await page.keyboard.press('Escape'); /* closes the details drawer */
  await page.waitForFunction(() => !document.querySelector('.drawer.open'));
  await page.click('[data-testid=reset]');
  await settled();
  await page.keyboard.down('Shift');
  await page.mouse.move(box.x + 230, box.y + 30);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width - 20, box.y + 30 + 3 * 22, { steps: 5 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  await page.locator('[data-testid=tl-aggregate] tbody tr').first().waitFor();
  const agg = await page.textContent('[data-testid=tl-aggregate-summary]');
  check(/\d+ rows · [\d,]+ events/.test(agg), `aggregate: ${agg}`);
  await page.screenshot({ path: path.join(shots, '4-selection.png'), fullPage: true });

  step = 'analysis page';
  await page.click('[data-testid=tab-analysis]');
  await page.waitForURL('**/analysis');
  await page.locator('[data-testid=findings] tbody tr').first().waitFor();
  check((await page.textContent('[data-testid=analysis]')).includes('DMA'), 'analysis lacks the DMA bottleneck');

  step = 'SQL page';
  await page.click('#tabs a:has-text("SQL")');
  await page.waitForURL('**/sql');
  await page.fill('[data-testid=sql]', 'SELECT engine, COUNT(*) AS n FROM Instruction GROUP BY engine ORDER BY engine');
  await page.click('[data-testid=run]');
  await page.locator('[data-testid=result] tbody tr').first().waitFor();
  const text = await page.textContent('[data-testid=result]');
  check(text.includes('Tensor') && text.includes('engine'), 'SQL result lacks Tensor');
  await page.screenshot({ path: path.join(shots, '5-sql.png'), fullPage: true });
  await page.fill('[data-testid=sql]', 'DROP TABLE Instruction');
  await page.click('[data-testid=run]');
  await page.locator('[data-testid=error]').waitFor();
  check((await page.textContent('[data-testid=error]')).includes('query_not_allowed'), 'DROP not refused');

  step = 'hash restores the viewport';
  await page.goto(`${url}/profile/${encodeURIComponent(profile)}#t0=${zw.t0}&t1=${zw.t1}`);
  await page.waitForFunction(() => window.nx && window.nx.timeline.requests >= 1);
  const back = await view();
  check(back.t0 === zw.t0 && back.t1 === zw.t1, `viewport from hash ${JSON.stringify(back)} != ${JSON.stringify(zw)}`);
  errors.splice(0, errors.length, ...errors.filter((e) => !/403|query_not_allowed/.test(e)));
  check(errors.length === 0, 'browser errors: ' + errors.join(' | '));
  console.log('ui ok: ' + JSON.stringify({ full, zin, zw, zout, opcode }));
} catch (e) {
  console.error(`FAIL (${step}): ${e.message}`);
  if (errors.length) console.error('browser errors: ' + errors.join(' | '));
  process.exitCode = 1;
} finally {
  await browser.close();
  rmSync(userDir, { recursive: true, force: true });
}
