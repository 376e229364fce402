/* source.js: the source view (/profile/<name>/source?file=F&line=N or ?loc=f.py:12).
 * The uploaded archive (source_folder.tar.gz, from the documented /fs/ route) is unpacked
 * in the browser (DecompressionStream and a small tar reader); per line it shows the
 * instruction count and total duration from the server's per-line summary, and the DMA
 * transfers the line's instructions triggered (bytes and summed duration: a DMA-bound
 * kernel's load lines are hot through them), and a click on a line lists its
 * instructions by engine and opcode and links to the timeline with them and their
 * transfers highlighted. Without an archive: the file:line references and how to upload. */
'use strict';

/* The archive's unpacked size is capped by the server (artifacts' unpacked_limit, the cap
 * `upload` enforces): a larger archive, or one that unpacks to more, is not unpacked. */
async function gunzipCapped(raw, limit) {
  const reader = new Blob([raw]).stream().pipeThrough(new DecompressionStream('gzip')).getReader();
  const parts = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    n += value.length;
    if (n > limit) {
      reader.cancel();
      throw new Error(`the source archive unpacks to more than ${NX.fmtBytes(limit)}, the most the source view unpacks`);
    }
    parts.push(value);
  }
  return new Blob(parts).arrayBuffer();
}

/* The regular files of a tar archive: [{path, bytes}]. ustar, pax ("path=") and GNU long
 * names; everything else (directories, links) is skipped. */
function untar(buf) {
  const u8 = new Uint8Array(buf), out = [], dec = new TextDecoder();
  const str = (o, n) => { let e = o; while (e < o + n && u8[e]) e++; return dec.decode(u8.subarray(o, e)); };
  const oct = (o, n) => parseInt(str(o, n).trim() || '0', 8);
  let off = 0, longName = null;
  while (off + 512 <= u8.length) {
    if (u8.subarray(off, off + 512).every((b) => b === 0)) break;
    const size = oct(off + 124, 12), type = String.fromCharCode(u8[off + 156] || 48);
    const body = off + 512, next = body + Math.ceil(size / 512) * 512;
    if (type === 'L') longName = str(body, size);
    else if (type === 'x') {
      const text = dec.decode(u8.subarray(body, body + size));
      for (const rec of text.split('\n')) { const m = /^\d+ path=(.*)$/.exec(rec); if (m) longName = m[1]; }
    } else if (type === '0' || type === '7') {
      const prefix = u8[off + 257] === 0x75 ? str(off + 345, 155) : ''; /* "ustar" */
      const name = longName || (prefix ? prefix + '/' : '') + str(off, 100);
      out.push({ path: name.replace(/^\.\//, ''), bytes: u8.subarray(body, body + size) });
      longName = null;
    } else if (type !== 'g') longName = null;
    off = next;
  }
  return out;
}

async function sourceArchive(name) {
  const arts = await NX.get(NX.profileBase(name) + '/artifacts?types=source-code');
  const a = arts.artifacts[0];
  if (!a) return null;
  const limit = a.unpacked_limit || 64 << 20;
  if (a.size > 2 * limit) throw new Error(`the source archive is ${NX.fmtBytes(a.size)}, more than the source view unpacks (${NX.fmtBytes(limit)})`);
  const r = await fetch(a.url);
  if (!r.ok) throw new Error(`source archive: HTTP ${r.status}`);
  const raw = await r.arrayBuffer();
  const gz = new Uint8Array(raw, 0, 2);
  if (!(gz[0] === 0x1f && gz[1] === 0x8b) && raw.byteLength > limit) throw new Error(`the source archive is ${NX.fmtBytes(raw.byteLength)}, more than the source view unpacks (${NX.fmtBytes(limit)})`);
  const tar = gz[0] === 0x1f && gz[1] === 0x8b ? await gunzipCapped(raw, limit) : raw;
  const files = untar(tar).sort((x, y) => x.path.localeCompare(y.path));
  return { name: a.name, size: a.size, files };
}

/* Per source location (NX.LOC_SQL): instruction count, total duration and time span, and
 * the DMA transfers it triggered (count, bytes, summed duration, span), from the timeline
 * cache's per-line summary (GET .../timeline/lines), so no scan of Instruction. */
async function locationStats(name) {
  const res = await NX.get(NX.profileBase(name) + '/timeline/lines');
  return res.result ? NX.objects(res.result).map((r) => Object.assign(r, NX.splitLoc(r.loc), {
    dma_n: Number(r.dma_n || 0), dma_bytes: Number(r.dma_bytes || 0), dma_ns: Number(r.dma_ns || 0),
    dma_t0: r.dma_t0 === null || r.dma_t0 === undefined ? null : Number(r.dma_t0),
    dma_t1: r.dma_t1 === null || r.dma_t1 === undefined ? null : Number(r.dma_t1) })) : [];
}

/* A line's totals, summed over the locations that name it. */
function addStats(l, s) {
  l.n += s.n; l.dur += s.dur; l.t0 = Math.min(l.t0, s.t0); l.t1 = Math.max(l.t1, s.t1);
  l.dma_n += s.dma_n; l.dma_bytes += s.dma_bytes; l.dma_ns += s.dma_ns;
  if (s.dma_t0 !== null) { l.dma_t0 = Math.min(l.dma_t0, s.dma_t0); l.dma_t1 = Math.max(l.dma_t1, s.dma_t1); }
  return l;
}
const emptyStats = () => ({ n: 0, dur: 0, t0: Infinity, t1: -Infinity, dma_n: 0, dma_bytes: 0, dma_ns: 0, dma_t0: Infinity, dma_t1: -Infinity, locs: [] });

/* How well archive path p names the file f of a location: the trailing path components
 * they share, ranked above everything else when one path is a whole suffix of the other
 * ("kernels/mm.py" and "/home/u/kernels/mm.py"); 0 when even the file names differ. */
function pathMatch(p, f) {
  const a = p.split('/').filter(Boolean), b = f.split('/').filter(Boolean);
  let n = 0;
  while (n < a.length && n < b.length && a[a.length - 1 - n] === b[b.length - 1 - n]) n++;
  return n && n === Math.min(a.length, b.length) ? 1000 + n : n;
}

/* The archive file a location's file is, or null: the longest matching suffix. */
function resolveFile(files, f) {
  let best = null, bn = 0;
  for (const x of files) { const n = pathMatch(x.path, f); if (n > bn) { bn = n; best = x; } }
  return best;
}

async function sourcePage(name) {
  document.title = `Source · ${name} · Neuron Explorer`;
  profileChrome(name, 'source');
  const params = new URLSearchParams(location.search);
  const want = params.get('loc') ? NX.splitLoc(params.get('loc')) : { file: params.get('file'), line: Number(params.get('line')) || null };
  const side = el('div', { class: 'card src-files' }, el('h2', {}, 'Files'), el('p', { class: 'muted' }, 'Loading…'));
  const view = el('div', { class: 'card src-view', 'data-testid': 'source-view' }, el('p', { class: 'muted' }, 'Loading…'));
  main.replaceChildren(el('h1', {}, 'Source'), el('div', { class: 'src-wrap' }, side, view));
  let stats, arch;
  try {
    [stats, arch] = await Promise.all([locationStats(name), sourceArchive(name)]);
  } catch (e) { view.replaceChildren(errorBox(e)); side.replaceChildren(el('h2', {}, 'Files')); return; }
  if (!arch) return noArchive(name, stats, side, view, want);

  /* per archive file: its locations, by line */
  const byFile = new Map(arch.files.map((f) => [f.path, { file: f, lines: new Map(), n: 0, dur: 0, dma_ns: 0, dma_bytes: 0 }]));
  const unmatched = [];
  for (const s of stats) {
    const f = resolveFile(arch.files, s.file);
    if (!f || s.line === null) { unmatched.push(s); continue; }
    const e = byFile.get(f.path);
    const l = addStats(e.lines.get(s.line) || emptyStats(), s);
    l.locs.push(s.loc);
    e.lines.set(s.line, l); e.n += s.n; e.dur += s.dur; e.dma_ns += s.dma_ns; e.dma_bytes += s.dma_bytes;
  }
  if (!arch.files.length) { view.replaceChildren(el('p', { class: 'muted' }, `${arch.name} holds no files.`)); return; }
  let cur = want.file ? resolveFile(arch.files, want.file) : null;
  const missing = want.file && !cur;
  if (!cur) cur = [...byFile.values()].sort((a, b) => b.dur + b.dma_ns - a.dur - a.dma_ns)[0].file;
  const list = el('ul', { class: 'src-list', 'data-testid': 'source-files' }, [...byFile.values()].map((e) =>
    el('li', { 'data-path': e.file.path, class: e.file === cur ? 'active' : '' },
      el('a', { href: NX.sourceUrl(name, { file: e.file.path }), 'data-nav': true, class: 'mono' }, e.file.path),
      e.n ? el('span', { class: 'muted' }, ` ${e.n} instr · ${NX.fmtNs(e.dur)}${e.dma_ns ? ` · DMA ${NX.fmtNs(e.dma_ns)}` : ''}`) : null)));
  side.replaceChildren(...[el('h2', {}, 'Files ', el('span', { class: 'muted', style: 'font-weight:400' }, `${arch.files.length} in ${arch.name}`)), list,
    unmatched.length ? el('details', {}, el('summary', {}, `${unmatched.length} locations not in the archive`),
      el('ul', { class: 'src-list' }, unmatched.map((s) => el('li', { class: 'mono' }, s.loc, el('span', { class: 'muted' }, ` ${s.n} instr`))))) : null].filter(Boolean));
  renderFile(name, view, byFile.get(cur.path), missing ? null : want.line);
  if (missing)
    view.prepend(el('div', { class: 'error' }, `${want.file} is not in the uploaded archive; showing ${cur.path}.`));
}

function renderFile(name, view, entry, line) {
  const bytes = entry.file.bytes;
  if (bytes.includes(0)) {
    view.replaceChildren(el('h2', { class: 'mono' }, entry.file.path), el('p', { class: 'muted' }, `Binary file, ${NX.fmtBytes(bytes.length)}.`));
    return;
  }
  const text = new TextDecoder().decode(bytes).replace(/\n$/, '');
  const lines = text.split('\n');
  const maxDur = Math.max(1, ...[...entry.lines.values()].map((l) => Math.max(l.dur, l.dma_ns)));
  const heat = (v, col) => `background:linear-gradient(90deg, ${col} ${(100 * v / maxDur).toFixed(1)}%, transparent 0)`;
  const info = el('div', { class: 'src-info', 'data-testid': 'line-info' },
    el('span', { class: 'muted' }, entry.lines.size ? 'Click a line with instructions to see them and show them on the timeline.' :
      'No instruction of this profile comes from this file.'));
  const rows = lines.map((t, i) => {
    const n = i + 1, l = entry.lines.get(n);
    return el('tr', { 'data-line': n, class: l ? 'hot' : '', onclick: l ? () => select(n) : null },
      el('td', { class: 'ln' }, n),
      el('td', { class: 'cnt', title: l ? `${l.n} instructions` : '' }, l ? l.n : ''),
      el('td', { class: 'dur', style: l ? heat(l.dur, 'rgba(225,87,89,.28)') : '', title: l ? 'total duration of its instructions' : '' }, l ? NX.fmtNs(l.dur) : ''),
      el('td', { class: 'dma', title: l && l.dma_n ? `${l.dma_n} DMA transfers triggered by its instructions` : '' }, l && l.dma_n ? NX.fmtBytes(l.dma_bytes) : ''),
      el('td', { class: 'dma last', style: l && l.dma_n ? heat(l.dma_ns, 'rgba(27,154,170,.28)') : '', title: l && l.dma_n ? 'summed duration of those transfers' : '' },
        l && l.dma_n ? NX.fmtNs(l.dma_ns) : ''),
      el('td', { class: 'code' }, t || ' '));
  });
  const table = el('table', { class: 'src' },
    el('thead', {}, el('tr', {}, el('th', { class: 'ln' }, 'line'), el('th', { class: 'cnt' }, 'instr'), el('th', { class: 'dur' }, 'time'),
      el('th', { class: 'dma', title: 'bytes of the DMA transfers the line triggered' }, 'DMA'),
      el('th', { class: 'dma', title: 'summed duration of those transfers' }, 'DMA time'), el('th', {}, ''))),
    el('tbody', {}, rows));
  const scroller = el('div', { class: 'src-scroll' }, table);
  view.replaceChildren(el('div', { class: 'toolbar' }, el('h2', { class: 'mono', style: 'margin:0' }, entry.file.path), el('span', { class: 'spacer' }),
    el('span', { class: 'muted' }, `${lines.length} lines · ${entry.n} instructions · ${NX.fmtNs(entry.dur)}` +
      (entry.dma_ns ? ` · DMA ${NX.fmtBytes(entry.dma_bytes)}, ${NX.fmtNs(entry.dma_ns)}` : ''))), info, scroller);
  let token = 0;
  async function select(n) {
    for (const r of table.querySelectorAll('tr.sel')) r.classList.remove('sel');
    const tr = rows[n - 1];
    if (!tr) return;
    tr.classList.add('sel');
    const url = new URL(location.href);
    url.searchParams.delete('loc'); url.searchParams.set('file', entry.file.path); url.searchParams.set('line', n);
    history.replaceState(null, '', url.pathname + url.search);
    const l = entry.lines.get(n);
    if (!l) { info.replaceChildren(el('b', {}, `Line ${n}`), el('span', { class: 'muted' }, ' has no instructions in this profile.')); return; }
    const mine = ++token;
    const t0 = l.dma_n ? Math.min(l.t0, l.dma_t0) : l.t0, t1 = l.dma_n ? Math.max(l.t1, l.dma_t1) : l.t1;
    const pad = Math.max(1, Math.round((t1 - t0) * 0.02));
    const link = el('a', { href: NX.timelineUrl(name, { t0: t0 - pad, t1: t1 + pad, highlight: l.locs[0] }), 'data-nav': true,
      'data-testid': 'timeline-link', class: 'button' },
    `Show ${l.n} instructions${l.dma_n ? ` and ${l.dma_n} DMA transfers` : ''} on the timeline →`);
    info.replaceChildren(el('b', {}, `Line ${n}`), ` ${l.n} instructions, ${NX.fmtNs(l.dur)} in total, from ${NX.fmtNs(l.t0)} to ${NX.fmtNs(l.t1)}`,
      l.dma_n ? el('span', { 'data-testid': 'line-dma' }, `; they trigger ${l.dma_n} DMA transfers: ${NX.fmtBytes(l.dma_bytes)}, ` +
        `${NX.fmtNs(l.dma_ns)} of transfer time, from ${NX.fmtNs(l.dma_t0)} to ${NX.fmtNs(l.dma_t1)}`) : null, ' ',
      el('span', { class: 'mono muted' }, `(${l.locs.join(', ')})`), ' ', link);
    try {
      const res = await NX.query(name, `SELECT engine, opcode, count(*) AS n, sum(duration_ns)::BIGINT AS dur FROM Instruction ` +
        `WHERE start_ts <= ${Math.ceil(l.t1)} AND end_ts >= ${Math.floor(l.t0)} ` + /* integer bounds: row groups skipped */
        `AND ${NX.LOC_SQL} IN (${l.locs.map(NX.sqlStr).join(', ')}) GROUP BY ALL ORDER BY dur DESC LIMIT 50`);
      if (mine !== token) return;
      info.append(el('div', { class: 'chips', 'data-testid': 'line-opcodes' }, NX.objects(res).map((r) =>
        el('span', { class: 'chip', style: `--c:${NX.color(r.opcode)}` }, `${r.engine} ${r.opcode} ×${r.n} · ${NX.fmtNs(r.dur)}`))));
    } catch (e) { if (mine === token) info.append(errorBox(e)); }
  }
  if (line) {
    const tr = rows[line - 1];
    if (tr) { select(line); requestAnimationFrame(() => tr.scrollIntoView({ block: 'center' })); }
  }
}

/* Without an archive: the locations the profile names, grouped by file, and the hint. */
function noArchive(name, stats, side, view, want) {
  side.replaceChildren(el('h2', {}, 'Files'), el('p', { class: 'muted' }, 'No source archive is attached to this profile.'));
  const files = new Map();
  for (const s of stats) { const a = files.get(s.file) || []; a.push(s); files.set(s.file, a); }
  const hint = el('div', { class: 'hint', 'data-testid': 'upload-hint' },
    el('p', {}, 'To see the code next to these numbers, attach the kernel sources to the profile:'),
    el('pre', { class: 'mono' }, `neuron-explorer upload --source-code DIR --data-path DATA_PATH --display-name ${name}`),
    el('p', { class: 'muted' }, 'DIR is the directory the paths below are relative to (or a .tar.gz). The page reads the archive on the next visit; no restart is needed.'));
  const rows = [];
  for (const [f, locs] of [...files].sort((a, b) => a[0].localeCompare(b[0]))) {
    locs.sort((a, b) => (a.line || 0) - (b.line || 0));
    for (const s of locs) {
      const pick = want.file && pathMatch(f, want.file) && (!want.line || s.line === want.line);
      rows.push(el('tr', { class: pick ? 'sel' : '', 'data-loc': s.loc }, el('td', { class: 'mono' }, s.loc), el('td', { class: 'num' }, s.n),
        el('td', { class: 'num' }, NX.fmtNs(s.dur)), el('td', { class: 'num' }, s.dma_n ? NX.fmtBytes(s.dma_bytes) : ''),
        el('td', { class: 'num' }, s.dma_n ? NX.fmtNs(s.dma_ns) : ''),
        el('td', {}, el('a', { href: NX.timelineUrl(name, { t0: s.dma_n ? Math.min(s.t0, s.dma_t0) : s.t0,
          t1: s.dma_n ? Math.max(s.t1, s.dma_t1) : s.t1, highlight: s.loc }), 'data-nav': true }, 'timeline'))));
    }
  }
  view.replaceChildren(el('h2', {}, 'Source locations'), hint,
    stats.length ? el('table', { class: 'grid', 'data-testid': 'locations' },
      el('thead', {}, el('tr', {}, el('th', {}, 'file:line'), el('th', { class: 'num' }, 'instructions'), el('th', { class: 'num' }, 'total duration'),
        el('th', { class: 'num' }, 'DMA bytes'), el('th', { class: 'num' }, 'DMA time'), el('th', {}, ''))),
      el('tbody', {}, rows)) : el('p', { class: 'muted' }, 'The instructions of this profile carry no source locations.'));
  const sel = view.querySelector('tr.sel');
  if (sel) requestAnimationFrame(() => sel.scrollIntoView({ block: 'center' }));
}
