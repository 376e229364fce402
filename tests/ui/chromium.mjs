// chromium.mjs: the headless Debian Chromium the UI tests drive through playwright-core
// (which never downloads browsers), with a fresh profile directory of its own: launch()
// gives the browser context, a page that collects the browser's errors, and close().
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export async function launch(tools, opts = {}) {
  const { chromium } = createRequire(path.join(tools, 'package.json'))('playwright-core');
  const userDir = mkdtempSync(path.join(tmpdir(), 'nx-chromium-'));
  const browser = await chromium.launchPersistentContext(userDir, {
    executablePath: process.env.NX_CHROMIUM || '/usr/bin/chromium',
    headless: true, acceptDownloads: true, viewport: opts.viewport || { width: 1440, height: 1000 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const errors = [];
  const page = await browser.newPage();
  page.setDefaultTimeout(opts.timeout || 30000);
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  const close = async () => { await browser.close(); rmSync(userDir, { recursive: true, force: true }); };
  return { browser, page, errors, close };
}
