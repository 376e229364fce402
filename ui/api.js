/* api.js: the UI's only data access: documented endpoints of the HTTP API (docs/api.md),
 * on the same origin as the page, plus formatting helpers shared by the pages. */
'use strict';
const NX = {};

NX.enc = encodeURIComponent;
NX.profileBase = (name) => `/api/v1/profiles/namespace/global/profile_name/${NX.enc(name)}`;

NX.get = async function (url, signal) {
  const r = await fetch(url, { signal });
  const j = await r.json();
  if (!r.ok) throw new Error(j.error ? `${j.error.code}: ${j.error.message}` : `HTTP ${r.status}`);
  return j;
};

NX.search = async function (name, body) {
  const r = await fetch(`/api/v1/db/${NX.enc(name)}/_search`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  const j = await r.json();
  if (!r.ok) throw new Error(j.error ? `${j.error.code}: ${j.error.message}` : `HTTP ${r.status}`);
  return j;
};

NX.query = (name, sql) => NX.search(name, { type: 'databaseExplorerQuery', query: sql });

/* Rows as objects keyed by column name. */
NX.objects = (res) => res.rows.map((r) => Object.fromEntries(res.columns.map((c, i) => [c.name, r[i]])));

const schemaCache = new Map();
NX.schema = function (name, table) {
  const key = name + '\u0000' + table;
  if (!schemaCache.has(key))
    schemaCache.set(key, NX.search(name, { type: 'tableSchema', tableName: table }).catch((e) => {
      schemaCache.delete(key);
      throw e;
    }));
  return schemaCache.get(key);
};

NX.fmtNs = function (ns) {
  if (ns === null || ns === undefined) return '–';
  if (typeof ns === 'bigint' || typeof ns === 'string') ns = Number(ns);
  if (isNaN(ns)) return '–';
  const a = Math.abs(ns);
  if (a >= 1e9) return +(ns / 1e9).toPrecision(4) + ' s';
  if (a >= 1e6) return +(ns / 1e6).toPrecision(4) + ' ms';
  if (a >= 1e3) return +(ns / 1e3).toPrecision(4) + ' µs';
  return (+ns.toPrecision(4)) + ' ns';
};

/* Exact times. The API sends integers beyond ±2^53 as strings (docs/api.md), as epoch
 * nanoseconds are; NX.big turns a time of any of those forms into a BigInt, so sums and
 * differences of absolute times are exact. The timeline keeps its times as numbers
 * relative to the profile's start, which stay exact below 2^53 ns (104 days). */
NX.big = (v) => (typeof v === 'bigint' ? v : BigInt(typeof v === 'number' ? Math.round(v) : String(v)));
/* Whether s spells an integer that fits in int64 (a time or an id in a URL). */
NX.isIntText = (s) => typeof s === 'string' && /^-?\d{1,19}$/.test(s) &&
  BigInt(s) <= 9223372036854775807n && BigInt(s) >= -9223372036854775808n;

/* The device events' bounds of a profile as the timeline takes them (GET
 * .../timeline/tracks): {origin, end} as BigInts, origin the first start of an event row
 * (of a value track when there is none): the zero of the pages' relative times. */
NX.deviceBounds = async function (name) {
  const rows = NX.objects(await NX.get(`${NX.profileBase(name)}/timeline/tracks`)).filter((t) => t.kind !== 'framework');
  let o = null, e = null;
  for (const pass of [false, true]) {
    for (const t of rows) if (pass || t.kind !== 'counter') {
      const s = NX.big(t.start), x = NX.big(t.end);
      if (o === null || s < o) o = s;
      if (e === null || x > e) e = x;
    }
    if (o !== null) break;
  }
  return { origin: o === null ? 0n : o, end: e === null ? 1000n : e };
};

/* 22,550,312 ns: every digit, grouped by thousands. */
NX.fmtNsExact = function (ns) {
  if (ns === null || ns === undefined) return '–';
  const b = NX.big(ns), neg = b < 0n;
  const s = (neg ? -b : b).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return (neg ? '−' : '') + s + ' ns';
};

/* A round axis step: the least of 1, 2 or 5 times a power of ten that is at least raw,
 * and at least 1 (ns): the timeline's ticks and the Analysis chart's. */
NX.niceStep = function (raw) {
  const p10 = Math.pow(10, Math.floor(Math.log10(Math.max(1, raw))));
  return Math.max(1, [1, 2, 5, 10].map((m) => m * p10).find((s) => s >= raw) || 10 * p10);
};

/* The unit a time axis labels its ticks in: by the largest time it shows. */
NX.timeUnit = function (maxAbs) {
  for (const [scale, u] of [[1e9, 's'], [1e6, 'ms'], [1e3, 'µs']]) if (maxAbs >= scale) return [scale, u];
  return [1, 'ns'];
};

/* An integer time t (ns) in the unit [scale, name] with as many decimals as a tick step
 * of `step` ns needs: 22.550312 ms for a 2 ns step, 22.55 ms for 10 µs. Exact (BigInt). */
NX.fmtTick = function (t, step, unit) {
  const [scale, name] = unit;
  const digits = Math.max(0, Math.ceil(Math.log10(scale / Math.max(1, step)) - 1e-9));
  const b = NX.big(t), neg = b < 0n, a = neg ? -b : b, sc = BigInt(scale);
  let txt = (a / sc).toString();
  if (digits > 0) txt += '.' + (a % sc).toString().padStart(String(scale).length - 1, '0').slice(0, digits);
  return (neg && a !== 0n ? '−' : '') + txt + ' ' + name;
};

NX.fmtNum = function (v) {
  if (v === null || v === undefined) return '–';
  if (typeof v !== 'number') return String(v);
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e6 || a < 1e-3)) return v.toExponential(3);
  return (+v.toPrecision(4)).toLocaleString('en-US', { maximumFractionDigits: 4 });
};

NX.fmtBytes = function (b) {
  if (typeof b !== 'number') return NX.fmtNum(b);
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (Math.abs(b) >= 1024 && i < u.length - 1) { b /= 1024; i++; }
  return (i ? b.toFixed(2) : b) + ' ' + u[i];
};

/* A value with its SchemaFields unit. */
NX.fmtUnit = function (v, unit) {
  if (v === null || v === undefined) return '–';
  if (typeof v !== 'number') return String(v);
  switch (unit) {
    case 'seconds': return NX.fmtNs(v * 1e9);
    case 'nanoseconds': return NX.fmtNs(v);
    case 'bytes': return NX.fmtBytes(v);
    /* Profiles store percent fields as 0..1 fractions (docs/derived-tables.md). */
    case 'percent': return (+(v * 100).toPrecision(4)) + ' %';
    default: return NX.fmtNum(v) + (unit && unit !== 'count' ? ' ' + unit : '');
  }
};

NX.el = function (tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? '' : v);
  }
  for (const k of kids.flat()) if (k !== null && k !== undefined) e.append(k instanceof Node ? k : String(k));
  return e;
};

/* Colours per label: one fixed palette, so an opcode, a DMA op or a framework event name
 * has the same colour on every page, in every load and in compare. Known labels have
 * their own colour (grouped by engine family: tensor blues, vector greens, scalar
 * orange, DMA reds and teals); any other label takes one of PALETTE by a hash of its
 * text. No event colour is a yellow: yellow and purple are the value tracks'. */
NX.KNOWN_COLORS = {
  MATMUL: '#2f6db3', LDWEIGHTS: '#89b4e3', TENSOR_TENSOR: '#2e8b57', TENSOR_SCALAR: '#7cbf7a',
  TENSOR_REDUCE: '#1f7a6c', ACTIVATE: '#e07b39', TENSOR_COPY: '#8c6bb1', MEMSET: '#9c755f',
  IOTA: '#6b8e23', EVENT_SEMAPHORE: '#9aa3ad', DMA_DIRECT2D: '#c2414b', NOTIFY: '#b9bec5', NOP: '#cfd4da',
  copy: '#1b9aaa', transpose: '#5a4fcf', packet: '#4aa3c8', input: '#1b9aaa', output: '#d9636b',
};
const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#9c755f', '#ff9da7', '#86bcb6',
  '#d37295', '#a0cbe8', '#8cd17d', '#499894', '#79706e', '#d4a6c8', '#b6992d', '#5f9ed1'];
NX.color = function (label) {
  const s = String(label);
  const k = NX.KNOWN_COLORS[s];
  if (k) return k;
  let h = 0x811c9dc5; /* FNV-1a */
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return PALETTE[h % PALETTE.length];
};

/* recommend's texts say "us"; the pages say "µs". */
NX.usToMicro = (s) => String(s).replace(/(\d) us\b/g, '$1 µs');

/* Engine names as the profile spells them (Summary's fields are lower case). */
NX.ENGINE_NAMES = { tensor: 'Tensor', tensormatrix: 'TensorMatrix', vector: 'Vector', scalar: 'Scalar',
  gpsimd: 'GpSimd', sync: 'Sync', dma: 'DMA' };
NX.engineName = (e) => NX.ENGINE_NAMES[String(e).toLowerCase()] || String(e);
