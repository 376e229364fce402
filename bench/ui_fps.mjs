// ui_fps.mjs: frame rate of the web UI's timeline while it pans (bench/ui_timeline.sh runs
// it; not a ctest test). Opens /profile/<name> in headless Chromium (playwright-core with
// the system browser), sets the view to a zoom level, waits for its data, then drags the
// timeline with synthetic mouse events every 8 ms (a 120 Hz mouse) for DURATION ms, back
// and forth over 600 px, while a requestAnimationFrame loop records frame timestamps.
// Prints per level: frames per second, the 95th percentile and the longest frame
// interval, the mean and longest time of one draw() of the canvas, and the fetches made
// during the pan.
// usage: node ui_fps.mjs UI_URL PROFILE TOOLS_DIR [CHROMIUM]   env: DURATION (4000)
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const [url, profile, tools, exe] = process.argv.slice(2);
const duration = Number(process.env.DURATION || 4000);
const { chromium } = createRequire(path.join(tools, 'package.json'))('playwright-core');
const userDir = mkdtempSync(path.join(tmpdir(), 'nx-fps-'));
const browser = await chromium.launchPersistentContext(userDir, {
  executablePath: exe || '/usr/bin/chromium', headless: true, viewport: { width: 1600, height: 1000 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(120000);
  await page.goto(`${url.replace(/\/$/, '')}/profile/${encodeURIComponent(profile)}`);
  await page.waitForFunction(() => window.nx && window.nx.timeline.requests >= 1);
  const full = await page.evaluate(() => window.nx.timeline.full);
  console.log(`canvas ${await page.evaluate(() => window.nx.timeline.W)} px wide, ${duration} ms of panning per level`);
  console.log(['share', 'fps', 'p95_frame_ms', 'max_frame_ms', 'draw_ms', 'max_draw_ms', 'fetches'].map((s, i) => i ? s.padStart(12) : s.padEnd(10)).join(' '));
  for (const f of [1, 0.01, 1e-4, 1e-6]) {
    const span = Math.max(200, (full[1] - full[0]) * f), t0 = full[0] + (full[1] - full[0] - span) / 2;
    await page.evaluate(([a, b]) => window.nx.timeline.setView(a, b), [t0, t0 + span]);
    await page.waitForFunction(() => { const tl = window.nx.timeline; return !tl.pending && tl.covered(); });
    const r = await page.evaluate(async (ms) => {
      const tl = window.nx.timeline, cv = tl.canvas, box = cv.getBoundingClientRect();
      const draw = tl.draw.bind(tl), draws = [];
      tl.draw = () => { const t = performance.now(); draw(); draws.push(performance.now() - t); };
      const req0 = tl.requests, frames = [];
      let run = true;
      const tick = (t) => { frames.push(t); if (run) requestAnimationFrame(tick); };
      requestAnimationFrame(tick);
      const y = box.top + tl.axisH + tl.rowH / 2, x0 = box.left + tl.labelW + 300;
      const ev = (type, x) => (type === 'mousedown' ? cv : window).dispatchEvent(new MouseEvent(type,
        { clientX: x, clientY: y, bubbles: true, buttons: 1 }));
      ev('mousedown', x0);
      const start = performance.now();
      await new Promise((done) => {
        const timer = setInterval(() => {
          const t = performance.now() - start;
          if (t > ms) { clearInterval(timer); done(); return; }
          const phase = (t % 2000) / 1000; /* 0..2: right then back */
          ev('mousemove', x0 + 600 * (phase < 1 ? phase : 2 - phase));
        }, 8);
      });
      ev('mouseup', x0);
      run = false;
      tl.draw = draw;
      const iv = frames.slice(1).map((t, i) => t - frames[i]).sort((a, b) => a - b);
      return { fps: (frames.length - 1) / ((frames[frames.length - 1] - frames[0]) / 1000),
        p95: iv[Math.floor(iv.length * 0.95)], max: iv[iv.length - 1],
        draw: draws.reduce((a, x) => a + x, 0) / Math.max(1, draws.length), maxDraw: Math.max(0, ...draws),
        fetches: tl.requests - req0 };
    }, duration);
    console.log([String(f).padEnd(10), r.fps.toFixed(1), r.p95.toFixed(1), r.max.toFixed(1), r.draw.toFixed(2),
      r.maxDraw.toFixed(1), r.fetches].map((s, i) => (i ? String(s).padStart(12) : s)).join(' '));
  }
} finally {
  await browser.close();
  rmSync(userDir, { recursive: true, force: true });
}
