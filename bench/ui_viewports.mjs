// ui_viewports.mjs: viewport latency of the web UI's timeline (bench/ui_timeline.sh runs
// it; not a ctest test). For each zoom level (a share of the profile, down to windows of
// raw rows), N windows at random offsets; each viewport is what the page asks for after a
// zoom or pan: GET .../timeline and .../timeline/counters at once, on keep-alive
// connections. Prints per level: p50/p99 of the viewport (both replies in), p50 of the
// timeline reply alone, p50/p99 of the counters reply alone (its pyramid answers wide
// windows; goal at 100M records: <= 50 ms p50, <= 150 ms p99), the server's CPU time per
// viewport (user + sys from /proc, which a
// loaded machine disturbs less than wall time), the reply size, how the rows came (lod:
// pyramid level, raw: rows of the window) and the bucket width. Baselines in the same run:
// the round trip of GET /health, and the whole-profile view computed from the raw table
// by one _search aggregate (what the pyramid saves).
// usage: node ui_viewports.mjs API_URL PROFILE SERVER_PID   env: N (30), PX (1600), SEED
import { readFileSync } from 'node:fs';

const [api, profile, pid] = process.argv.slice(2);
const N = Number(process.env.N || 30), PX = Number(process.env.PX || 1600);
const base = `${api}/api/v1/profiles/namespace/global/profile_name/${encodeURIComponent(profile)}`;
const tck = 100; /* USER_HZ on Linux */
let seed = Number(process.env.SEED || 12345);
const rand = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
const cpu = () => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) * 1000 / tck; };
const pct = (a, p) => { const s = [...a].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]; };

async function get(url) {
  const t = performance.now();
  const r = await fetch(url);
  const body = await r.text();
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status} ${body.slice(0, 200)}`);
  return { ms: performance.now() - t, body };
}

const tracks = JSON.parse((await get(`${base}/timeline/tracks`)).body);
let lo = Infinity, hi = -Infinity, hasCounters = false;
for (const r of tracks.rows) {
  if (r[0] === 'counter') { hasCounters = true; continue; }
  lo = Math.min(lo, r[4]); hi = Math.max(hi, r[5]);
}
const span = hi - lo;

const floor = [];
for (let i = 0; i < N; i++) floor.push((await get(`${api}/api/v1/health`)).ms);
console.log(`baseline: GET /health p50 ${pct(floor, 0.5).toFixed(1)} ms, p99 ${pct(floor, 0.99).toFixed(1)} ms`);

/* The whole-profile view without the pyramid: the same buckets from the raw table. */
{
  let b = 1;
  while (b * PX < span) b *= 2;
  const sql = 'SELECT timeline_track, k, count(*), sum(end_ts - start_ts)::BIGINT, ' +
    `arg_max(id, end_ts - start_ts) FROM (SELECT *, start_ts // ${b} AS k FROM Instruction WHERE ` +
    `start_ts < ${hi + 1} AND end_ts > ${lo}) GROUP BY ALL`;
  const ms = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    const r = await fetch(`${api}/api/v1/db/${encodeURIComponent(profile)}/_search`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ type: 'databaseExplorerQuery', query: sql }) });
    await r.text();
    ms.push(performance.now() - t);
  }
  console.log(`baseline: whole-profile buckets from the raw Instruction table (_search): p50 ${pct(ms, 0.5).toFixed(0)} ms`);
}

console.log(`profile span ${span} ns, px ${PX}, ${N} viewports per level`);
console.log(['share', 'window_ns', 'p50_ms', 'p99_ms', 'tl_p50', 'ctr_p50', 'ctr_p99', 'cpu_ms', 'reply_kB', 'from', 'bucket_ns'].map((s, i) => i ? s.padStart(10) : s.padEnd(10)).join(' '));
const levels = [1, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6];
for (const f of levels) {
  const w = Math.max(100, Math.round(span * f));
  const all = [], tl = [], ctr = [];
  let bytes = 0, from = '', bucket = 0;
  const c0 = cpu();
  for (let i = 0; i < N; i++) {
    const t0 = lo + Math.floor((span - w) * rand()), q = `t0=${t0}&t1=${t0 + w}&px=${PX}`;
    const t = performance.now();
    const [a, c] = await Promise.all([get(`${base}/timeline?${q}`), hasCounters ? get(`${base}/timeline/counters?${q}`) : null]);
    all.push(performance.now() - t); tl.push(a.ms);
    if (c) ctr.push(c.ms);
    bytes += a.body.length + (c ? c.body.length : 0);
    const j = JSON.parse(a.body);
    const kinds = ['instruction', 'dma', 'framework'].filter((k) => j[k]);
    from = kinds.map((k) => (j[k].lod ? 'lod' : 'raw')).join('/');
    bucket = j.bucket;
  }
  const cms = (cpu() - c0) / N;
  const cp = (p) => (ctr.length ? pct(ctr, p).toFixed(1) : '-');
  console.log([String(f).padEnd(10), ...[w, pct(all, 0.5).toFixed(1), pct(all, 0.99).toFixed(1), pct(tl, 0.5).toFixed(1), cp(0.5), cp(0.99),
    cms.toFixed(1), (bytes / N / 1000).toFixed(0), from, bucket].map((s) => String(s).padStart(10))].join(' '));
}
