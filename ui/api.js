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
  if (ns === null || ns === undefined || isNaN(ns)) return '–';
  const a = Math.abs(ns);
  if (a >= 1e9) return +(ns / 1e9).toPrecision(4) + ' s';
  if (a >= 1e6) return +(ns / 1e6).toPrecision(4) + ' ms';
  if (a >= 1e3) return +(ns / 1e3).toPrecision(4) + ' µs';
  return (+ns.toPrecision(4)) + ' ns';
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

/* Colours per label (opcode, DMA op): handed out in order of first use, so the
 * labels on screen rarely share one; stable for the page's lifetime. */
const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1',
  '#ff9da7', '#9c755f', '#86bcb6', '#d37295', '#a0cbe8', '#8cd17d', '#f1ce63', '#499894'];
const colors = new Map();
NX.color = function (label) {
  let c = colors.get(label);
  if (!c) { c = PALETTE[colors.size % PALETTE.length]; colors.set(label, c); }
  return c;
};
