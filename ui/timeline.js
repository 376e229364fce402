/* timeline.js: the canvas timeline (docs/ui.md "Timeline"). Rows: engines, framework
 * streams, DMA queues, then value tracks (counters, semaphores). The server does the level
 * of detail (GET .../timeline?t0&t1&px and .../timeline/counters, docs/api.md): each reply
 * holds, per track, raw rows or per-bucket summaries, so the browser never draws more than
 * a few thousand rectangles per row. Each fetch covers the view and a quarter of its width
 * on either side (at the view's bucket width), so a small pan is drawn from data at hand
 * while the next fetch runs; fetches are throttled while the view moves and drawing
 * happens once per animation frame. Wheel/W/S zoom, drag/A/D pan, hover shows a tooltip,
 * a click selects an event (details panel, flow arrows), shift+drag selects a box
 * (aggregate), the search box finds "field = value" over the whole profile. */
'use strict';

const TL_KINDS = ['instruction', 'framework', 'dma'];
const TL_MARGIN = 0.25; /* share of the view fetched beyond each side */

/* 1.31T, 45.2k, 0.125: a value track's scale in a few characters. */
function compact(v) {
  const a = Math.abs(v);
  for (const [d, u] of [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']])
    if (a >= d) return +(v / d).toPrecision(3) + u;
  return String(+v.toPrecision(3));
}

/* A value of a value track in its unit: utilisation fractions as percent, throughputs in
 * bytes per second, the rest (pending DMAs, semaphores) as counts. */
function counterValue(track, v) {
  if (track === 'SbufUsage' || track === 'PsumUsage') return +(v * 100).toPrecision(3) + ' %';
  if (track === 'HbmUsage' || track === 'DmaUsage') return compact(v) + 'B/s';
  return compact(v);
}

class Timeline {
  constructor(root, profile, opts) {
    this.profile = profile;
    this.onSelect = opts.onSelect || (() => {});
    this.onView = opts.onView || (() => {});
    this.rowH = 26; this.axisH = 26; this.labelW = 170;
    this.tracks = []; this.data = null; this.counters = null; this.selected = null; this.hover = null;
    this.flows = []; this.matches = null; this.box = null; this.mouseT = undefined;
    this.canvas = NX.el('canvas', { class: 'tl-canvas', tabindex: '0', 'data-testid': 'timeline' });
    this.status = NX.el('div', { class: 'tl-status' });
    this.legend = NX.el('div', { class: 'legend', 'data-testid': 'legend' });
    this.searchInput = NX.el('input', { type: 'search', class: 'tl-search', 'data-testid': 'tl-search',
      placeholder: 'Search the whole profile: field = value (opcode = MATMUL, DmaPacketAggregated.queue_name = qSyncIO0)' });
    this.searchInfo = NX.el('span', { class: 'muted', 'data-testid': 'tl-search-info' });
    const bar = NX.el('form', { class: 'tl-bar', onsubmit: (ev) => { ev.preventDefault(); this.search(this.searchInput.value).catch((e) => this.fail(e)); } },
      this.searchInput,
      NX.el('button', { type: 'button', class: 'secondary', title: 'previous match (shift+N)', onclick: () => this.nextMatch(-1) }, '‹'),
      NX.el('button', { type: 'button', class: 'secondary', 'data-testid': 'tl-search-next', title: 'next match (N)', onclick: () => this.nextMatch(1) }, '›'),
      this.searchInfo);
    this.panel = NX.el('div', { class: 'tl-panel', 'data-testid': 'tl-selection' });
    root.append(bar, this.canvas, this.status, this.legend, this.panel);
    this.ctx = this.canvas.getContext('2d');
    this.pending = null; this.timer = 0; this.requests = 0;
    this.dma = 'transfers'; /* or 'packets': which DMA table the queue rows show */
    this.bindEvents();
    new ResizeObserver(() => this.resize()).observe(this.canvas);
  }

  fail(e) { this.status.textContent = 'timeline: ' + (e.message || e); }
  base() { return NX.profileBase(this.profile); }

  async load(view) {
    /* the first open of a profile version builds its timeline cache on the server: about
     * 1 to 2 s per million events (docs/ui.md) */
    const slow = setTimeout(() => { this.status.textContent = 'Building the timeline summary of this profile ' +
      '(once per profile version, about 1–2 s per million events)…'; }, 1000);
    const res = await NX.get(`${this.base()}/timeline/tracks?dma=${this.dma}`).finally(() => clearTimeout(slow));
    this.statusText = null;
    this.tracks = NX.objects(res);
    let lo = Infinity, hi = -Infinity;
    for (const t of this.tracks) {
      if (t.kind === 'counter') continue;
      lo = Math.min(lo, t.start); hi = Math.max(hi, t.end);
    }
    if (!isFinite(lo)) for (const t of this.tracks) { lo = Math.min(lo, t.start); hi = Math.max(hi, t.end); }
    if (!isFinite(lo)) { lo = 0; hi = 1000; }
    this.full = [lo, hi];
    this.t0 = lo; this.t1 = hi;
    if (view && view.t1 > view.t0) { this.t0 = view.t0; this.t1 = view.t1; }
    this.resize();
    const hl = new URLSearchParams(location.hash.slice(1)).get('highlight');
    if (hl) this.search(`source_location = ${hl}`, { keepView: !!view }).catch((e) => this.fail(e));
    return this.tracks;
  }

  resize() {
    const dpr = window.devicePixelRatio || 1;
    const w = this.canvas.clientWidth || 800;
    const h = this.axisH + Math.max(1, this.tracks.length) * this.rowH + 1;
    this.canvas.style.height = h + 'px';
    this.canvas.width = Math.round(w * dpr); this.canvas.height = Math.round(h * dpr);
    this.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    this.W = w; this.H = h;
    this.draw(); this.fetchSoon();
  }

  /* Switches the DMA rows between transfers and packets, keeping the viewport. */
  async setDma(mode) {
    this.dma = mode;
    this.data = null;
    await this.load(this.view());
  }

  plotW() { return Math.max(10, this.W - this.labelW); }
  x(t) { return this.labelW + (t - this.t0) / (this.t1 - this.t0) * this.plotW(); }
  t(x) { return this.t0 + (x - this.labelW) / this.plotW() * (this.t1 - this.t0); }

  setView(t0, t1) {
    const minSpan = 10, full = this.full[1] - this.full[0];
    if (t1 - t0 < minSpan) { const c = (t0 + t1) / 2; t0 = c - minSpan / 2; t1 = c + minSpan / 2; }
    if (t1 - t0 > full * 1.5) { const c = (t0 + t1) / 2; t0 = c - full * 0.75; t1 = c + full * 0.75; }
    this.t0 = t0; this.t1 = t1;
    this.redraw(); this.fetchSoon(); this.onView(this.view());
  }
  view() { return { t0: Math.floor(this.t0), t1: Math.ceil(this.t1) }; }
  zoom(factor, at) {
    const c = at === undefined ? (this.t0 + this.t1) / 2 : at;
    this.setView(c - (c - this.t0) * factor, c + (this.t1 - c) * factor);
  }
  pan(frac) { const d = (this.t1 - this.t0) * frac; this.setView(this.t0 + d, this.t1 + d); }
  reset() { this.setView(this.full[0], this.full[1]); }
  /* Shows [s, e] in the middle third of the view. */
  focus(s, e) { const d = Math.max(e - s, 20); this.setView(s - d, e + d); }

  /* A fetch soon: at once when none ran for a while, else when the view rests 40 ms
   * (at the latest 150 ms after the last one, so data follows a long drag). */
  fetchSoon() {
    clearTimeout(this.timer);
    const since = performance.now() - (this.lastFetchAt || 0);
    this.timer = setTimeout(() => this.fetch(), since > 150 ? 0 : 40);
  }

  /* Whether the data at hand covers the view at the view's bucket width. */
  covered() {
    const d = this.data;
    if (!d) return false;
    const b = this.bucketFor(this.t1 - this.t0, this.plotW());
    return d.bucket === b && d.t0 <= Math.max(this.t0, this.full[0]) && d.t1 >= Math.min(this.t1, this.full[1]);
  }

  /* The server's bucket for a window: the smallest power of two >= span / px. */
  bucketFor(span, px) { let b = 1; while (b * Math.round(px) < span) b *= 2; return b; }

  async fetch() {
    if (!this.tracks.length || !this.full) return;
    const bucket = this.bucketFor(this.t1 - this.t0, this.plotW());
    if (this.pending) {
      /* one fetch at a time at a bucket width: a newer view waits for it (then fetches
       * what is still missing), so a long pan is not a chain of aborted requests */
      if (this.pending.bucket === bucket) { this.again = true; return; }
      this.pending.abort();
    }
    if (this.covered()) return;
    const ac = new AbortController();
    ac.bucket = bucket;
    this.pending = ac;
    this.lastFetchAt = performance.now();
    /* the view plus TL_MARGIN of it on each side, within the profile, at the same
     * bucket: px grows with the window */
    const span = this.t1 - this.t0;
    const f0 = Math.max(Math.floor(this.t0 - span * TL_MARGIN), Math.floor(Math.min(this.t0, this.full[0])));
    const f1 = Math.min(Math.ceil(this.t1 + span * TL_MARGIN), Math.ceil(Math.max(this.t1, this.full[1])));
    /* px such that the server's bucket is the view's: ceil(width / bucket) */
    const fpx = Math.min(16384, Math.max(1, Math.ceil((f1 - f0) / bucket)));
    const q = `t0=${f0}&t1=${f1}&px=${fpx}`;
    const t = performance.now();
    try {
      const hasCounters = this.tracks.some((tr) => tr.kind === 'counter');
      const [r, c] = await Promise.all([NX.get(`${this.base()}/timeline?${q}&dma=${this.dma}`, ac.signal),
        hasCounters ? NX.get(`${this.base()}/timeline/counters?${q}`, ac.signal) : null]);
      this.data = this.index(r);
      this.counters = c && c.series ? { bucket: c.bucket, rows: new Map(c.series.map((x) => [`counter|${x.core}|${x.track}`, x])) } : null;
      this.lastMs = performance.now() - t;
      this.requests++;
      this.canvas.dataset.requests = this.requests;
      this.redraw();
    } catch (e) {
      if (e.name !== 'AbortError') this.fail(e);
    } finally {
      if (this.pending === ac) this.pending = null;
    }
    if (!this.pending && this.again) { this.again = false; if (!this.covered()) this.fetch(); }
  }

  /* Draws at the next animation frame (once, however many changes come before it). */
  redraw() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => { this.frame = 0; this.draw(); });
  }

  /* Maps "kind|core|track" to its columnar rows; labels from the reply's dictionary,
   * and per label the indices of its rectangles (drawn with one fill style each). */
  index(r) {
    const m = new Map(), labels = r.labels || [];
    let lod = false;
    for (const kind of TL_KINDS) {
      if (!r[kind]) continue;
      lod = lod || r[kind].lod;
      for (const row of r[kind].tracks) {
        row.label = row.label.map((i) => (i === null ? null : labels[i]));
        /* start and last come as offsets from the reply's t0, ends as durations */
        row.start = row.start.map((x) => x + r.t0);
        row.end = row.dur.map((x, j) => row.start[j] + x);
        if (row.last) row.last = row.last.map((x) => x + r.t0);
        const groups = new Map();
        row.label.forEach((l, j) => { const g = groups.get(l); if (g) g.push(j); else groups.set(l, [j]); });
        m.set(`${kind}|${row.core}|${row.track}`, Object.assign(row, { table: r[kind].table, kind, groups }));
      }
    }
    return { bucket: r.bucket, rows: m, t0: r.t0, t1: r.t1, lod };
  }

  key(tr) { return `${tr.kind}|${tr.core}|${tr.track}`; }
  rowOf(y) { const i = Math.floor((y - this.axisH) / this.rowH); return i >= 0 && i < this.tracks.length ? i : -1; }
  rowY(i) { return this.axisH + i * this.rowH; }
  series(i) { return this.data && this.data.rows.get(this.key(this.tracks[i])); }
  /* The row index of an event of table t (Flow's table names) on core/track, or -1. */
  rowIndex(table, core, track) {
    const kind = table === 'Instruction' ? 'instruction' : table === 'SystemProfileEvents' ? 'framework' : 'dma';
    return this.tracks.findIndex((tr) => tr.kind === kind && tr.core === core && tr.track === track);
  }

  draw() {
    const c = this.ctx, W = this.W, H = this.H, pw = this.plotW();
    if (!W || !this.full) return;
    c.clearRect(0, 0, W, H);
    c.font = '12px system-ui, sans-serif'; c.textBaseline = 'middle';
    // axis
    const span = this.t1 - this.t0, raw = span / (pw / 110);
    const p10 = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * p10).find((s) => s >= raw);
    c.fillStyle = '#f7f8fa'; c.fillRect(0, 0, W, this.axisH);
    c.strokeStyle = '#e2e5ea'; c.beginPath(); c.moveTo(0, this.axisH + 0.5); c.lineTo(W, this.axisH + 0.5); c.stroke();
    c.fillStyle = '#6b7483';
    for (let t = Math.ceil(this.t0 / step) * step; t <= this.t1; t += step) {
      const x = Math.round(this.x(t)) + 0.5;
      c.strokeStyle = '#eef0f3'; c.beginPath(); c.moveTo(x, this.axisH); c.lineTo(x, H); c.stroke();
      c.fillText(NX.fmtNs(t - this.full[0]), x + 4, this.axisH / 2);
    }
    const seen = new Map();
    const hits = this.matches ? this.matches.ids : null;
    this.tracks.forEach((tr, i) => {
      const y = this.rowY(i);
      if (i % 2) { c.fillStyle = '#fafbfc'; c.fillRect(this.labelW, y, pw, this.rowH); }
      c.strokeStyle = '#f0f2f5'; c.beginPath(); c.moveTo(0, y + this.rowH + 0.5); c.lineTo(W, y + this.rowH + 0.5); c.stroke();
      c.save(); c.beginPath(); c.rect(this.labelW, y, pw, this.rowH); c.clip();
      if (tr.kind === 'counter') this.drawCounter(tr, y);
      else this.drawEvents(tr, i, y, seen, hits && this.matches.kind === tr.kind ? hits : null);
      c.restore();
    });
    this.drawMatchTicks();
    this.drawFlows();
    if (this.box) {
      const b = this.box, x0 = Math.min(b.x0, b.x1), y0 = Math.min(b.y0, b.y1);
      c.fillStyle = 'rgba(47,111,236,0.12)'; c.strokeStyle = '#2f6fec';
      c.fillRect(x0, y0, Math.abs(b.x1 - b.x0), Math.abs(b.y1 - b.y0));
      c.strokeRect(x0 + 0.5, y0 + 0.5, Math.abs(b.x1 - b.x0), Math.abs(b.y1 - b.y0));
    }
    // labels
    c.fillStyle = '#fff'; c.fillRect(0, this.axisH + 1, this.labelW, H);
    c.strokeStyle = '#e2e5ea'; c.beginPath(); c.moveTo(this.labelW + 0.5, 0); c.lineTo(this.labelW + 0.5, H); c.stroke();
    const cores = new Set(this.tracks.map((t) => t.core)).size;
    const prefix = { dma: 'DMA ', counter: '', framework: '', instruction: '' };
    this.tracks.forEach((tr, i) => {
      const y = this.rowY(i) + this.rowH / 2;
      c.fillStyle = tr.kind === 'instruction' ? '#1d2430' : tr.kind === 'counter' ? '#7c4a03' : '#6b7483';
      let label = (cores > 1 && tr.core !== null ? `NC${tr.core} ` : '') + prefix[tr.kind] + tr.track;
      if (tr.kind === 'counter' && tr.max !== undefined) label += ` ≤ ${counterValue(tr.track, tr.max)}`;
      c.fillText(label, 12, y, this.labelW - 16);
    });
    c.fillStyle = '#6b7483'; c.fillText('time', 12, this.axisH / 2);
    // status and legend
    const d = this.data;
    let mode = '';
    if (d) {
      const modes = [...d.rows.values()].map((r) => r.mode);
      mode = modes.includes('bins') ? `buckets of ${NX.fmtNs(d.bucket)}${d.lod ? ' (summary)' : ''}` : 'raw events';
    }
    /* the DOM only when its text changes: a pan redraws 60 times a second */
    const status = [`window ${NX.fmtNs(this.t0 - this.full[0])} – ${NX.fmtNs(this.t1 - this.full[0])} (${NX.fmtNs(span)})`,
      mode, this.lastMs ? `last fetch ${this.lastMs.toFixed(0)} ms` : '',
      'wheel/W/S zoom · drag/A/D pan · shift+drag select · F focus · 0 reset'];
    if (status.join('\n') !== this.statusText) {
      this.statusText = status.join('\n');
      this.status.replaceChildren(...status.map((t, i) => NX.el('span', i === 1 ? { 'data-testid': 'lod' } : {}, t)));
    }
    const lg = [...seen.entries()].sort((a, b) => String(a[0]).localeCompare(String(b[0]))).slice(0, 40);
    const legend = lg.map(([k, v]) => k + '=' + v).join('\n');
    if (legend !== this.legendText) {
      this.legendText = legend;
      this.legend.replaceChildren(...lg.map(([k, v]) => NX.el('span', { style: `--c:${v}` }, k)));
    }
  }

  drawEvents(tr, i, y, seen, hits) {
    const c = this.ctx, s = this.series(i);
    if (!s) return;
    const sel = this.selected, bk = this.data.bucket, bins = s.mode === 'bins';
    const lo = this.labelW - 2, hi = this.W + 2, top = y + 4, h = this.rowH - 8;
    for (const [label, idx] of s.groups) {
      const col = NX.color(label);
      seen.set(label, col);
      c.fillStyle = col;
      for (const j of idx) {
        const [x0, x1] = this.extent(s, j);
        if (x1 < lo || x0 > hi) continue;
        /* a bucket: its longest event's colour, as opaque as the bucket is busy */
        if (bins && s.count[j] > 1) c.globalAlpha = 0.15 + 0.85 * Math.min(1, s.busy[j] / bk);
        c.fillRect(x0, top, Math.max(1, x1 - x0), h);
        if (bins) c.globalAlpha = 1;
      }
    }
    const n = s.start.length;
    c.fillStyle = '#fff';
    for (let j = 0; j < n; j++) {
      const [x0, x1] = this.extent(s, j), w = Math.max(1, x1 - x0);
      if (x1 < lo || x0 > hi) continue;
      if (w > 48 && (!bins || s.count[j] === 1)) c.fillText(s.label[j], Math.max(x0, this.labelW) + 4, y + this.rowH / 2, w - 8);
      if (hits && hits.has(s.id[j])) {
        c.strokeStyle = '#f59e0b'; c.lineWidth = 2; c.strokeRect(x0 - 1, y + 2, w + 2, this.rowH - 4); c.lineWidth = 1;
      }
      if (sel && sel.key === this.key(tr) && sel.id === s.id[j]) {
        c.strokeStyle = '#111827'; c.lineWidth = 2; c.strokeRect(x0 - 1, y + 3, w + 2, this.rowH - 6); c.lineWidth = 1;
      }
    }
  }

  /* A value track: per bucket the maximum as a filled step, the last value carried over
   * gaps, scaled to the largest value in view. */
  drawCounter(tr, y) {
    const s = this.counters && this.counters.rows.get(this.key(tr));
    if (!s) return;
    const c = this.ctx, bk = this.counters.bucket, top = y + 3, h = this.rowH - 6;
    const ts = s.ts || [], hi = s.hi || [], last = s.last || [];
    const max = Math.max(1e-12, s.before || 0, ...hi);
    tr.max = max;
    const col = tr.track.startsWith('sem ') ? '#b07aa1' : '#e0a800';
    c.fillStyle = col; c.globalAlpha = 0.55;
    const bar = (x0, x1, v) => { if (v > 0 && x1 > x0) { const hh = Math.max(1, v / max * h); c.fillRect(x0, top + h - hh, Math.max(1, x1 - x0), hh); } };
    let cur = s.before, px = this.labelW;
    for (let j = 0; j < ts.length; j++) {
      const xa = this.x(ts[j]), xb = this.x(ts[j] + bk);
      if (cur !== null && cur !== undefined) bar(px, xa, cur);
      bar(xa, xb, hi[j]);
      cur = last[j]; px = xb;
    }
    if (cur !== null && cur !== undefined) bar(px, Math.min(this.W, this.x(tr.end)), cur);
    c.globalAlpha = 1;
  }

  /* Where the search's matches are (of the first SEARCH_LIMIT), as ticks on the axis. */
  drawMatchTicks() {
    if (!this.matches) return;
    const c = this.ctx;
    c.fillStyle = '#f59e0b';
    for (const m of this.matches.rows) {
      const x = this.x(m.start);
      if (x >= this.labelW && x <= this.W) c.fillRect(Math.round(x) - 1, this.axisH - 6, 3, 6);
    }
  }

  /* The selected event's flows as arrows: upstream end -> downstream start. */
  drawFlows() {
    const c = this.ctx;
    for (const f of this.flows) {
      const a = this.rowIndex(f.from_table, f.from_core, f.from_track), b = this.rowIndex(f.to_table, f.to_core, f.to_track);
      if (a < 0 || b < 0) continue;
      const x0 = this.x(f.from_end), y0 = this.rowY(a) + this.rowH / 2, x1 = this.x(f.to_start), y1 = this.rowY(b) + this.rowH / 2;
      const col = f.type === 'SEMAPHORE' ? '#d9480f' : '#1c7ed6';
      c.strokeStyle = col; c.fillStyle = col; c.lineWidth = 1.5;
      c.beginPath(); c.moveTo(x0, y0);
      const mx = (x0 + x1) / 2;
      c.bezierCurveTo(mx, y0, mx, y1, x1, y1); c.stroke();
      const ang = Math.atan2(y1 - y0, Math.max(1, x1 - mx));
      c.beginPath(); c.moveTo(x1, y1);
      c.lineTo(x1 - 8 * Math.cos(ang - 0.4), y1 - 8 * Math.sin(ang - 0.4));
      c.lineTo(x1 - 8 * Math.cos(ang + 0.4), y1 - 8 * Math.sin(ang + 0.4));
      c.closePath(); c.fill();
      c.lineWidth = 1;
    }
  }

  /* Pixel extent of entry j: the event itself; for a bucket of several events, the
   * bucket's span (a lone event in a bucket is drawn as itself). */
  extent(s, j) {
    if (s.mode === 'bins' && s.count[j] > 1) {
      const bk = this.data.bucket, k = Math.floor(s.start[j] / bk) * bk;
      return [this.x(k), this.x(Math.max(k + bk, Math.min(s.last ? s.last[j] : 0, k + 2 * bk)))];
    }
    return [this.x(s.start[j]), this.x(s.end[j])];
  }

  /* The event under (x, y): the drawn rectangle, or the nearest within 3 px. */
  hit(x, y) {
    const i = this.rowOf(y);
    if (i < 0 || x < this.labelW) return null;
    const tr = this.tracks[i];
    if (tr.kind === 'counter') return this.counterAt(tr, x);
    const s = this.series(i);
    if (!s) return null;
    let best = -1, bestD = 4;
    for (let j = 0; j < s.start.length; j++) {
      const [x0, e1] = this.extent(s, j), x1 = Math.max(x0 + 1, e1);
      const d = x < x0 ? x0 - x : x > x1 ? x - x1 : 0;
      if (d < bestD || (d === 0 && bestD === 0 && s.end[j] - s.start[j] < s.end[best] - s.start[best])) { best = j; bestD = d; }
    }
    if (best < 0) return null;
    return { key: this.key(tr), track: tr, table: s.table, core: tr.core,
      id: s.id[best], start: s.start[best], end: s.end[best], label: s.label[best],
      count: s.count ? s.count[best] : 1, busy: s.busy ? s.busy[best] : null, bins: s.mode === 'bins' && s.count[best] > 1 };
  }

  counterAt(tr, x) {
    const s = this.counters && this.counters.rows.get(this.key(tr));
    if (!s || !s.ts) return null;
    const t = this.t(x), bk = this.counters.bucket;
    let v = s.before, lo = null, hi = null, at = null;
    for (let j = 0; j < s.ts.length && s.ts[j] <= t; j++) {
      if (t < s.ts[j] + bk) { lo = s.lo[j]; hi = s.hi[j]; }
      v = s.last[j]; at = s.ts[j];
    }
    return { counter: true, track: tr, value: v, lo, hi, at };
  }

  showTip(ev, h) {
    const tip = document.getElementById('tooltip');
    if (!h) { tip.hidden = true; return; }
    let kids;
    if (h.counter) {
      const f = (v) => (v === null || v === undefined ? '–' : counterValue(h.track.track, v));
      kids = [NX.el('b', {}, h.track.track), NX.el('br'), `value ${f(h.value)}`,
        h.hi !== null ? NX.el('span', {}, NX.el('br'), `in this bucket: ${f(h.lo)} – ${f(h.hi)}`) : null];
    } else {
      kids = [NX.el('b', {}, h.label), NX.el('br'),
        `${h.track.kind === 'dma' ? 'DMA queue' : h.track.kind === 'framework' ? 'stream' : 'engine'} ${h.track.track} · id ${h.id}`, NX.el('br'),
        `start ${NX.fmtNs(h.start - this.full[0])} · duration ${NX.fmtNs(h.end - h.start)}`,
        h.bins ? NX.el('span', {}, NX.el('br'), `bucket: ${h.count} events, busy ${NX.fmtNs(h.busy)} (longest shown)`) : null];
    }
    tip.replaceChildren(...kids.filter(Boolean));
    tip.hidden = false;
    tip.style.left = Math.min(ev.clientX + 14, window.innerWidth - 300) + 'px';
    tip.style.top = ev.clientY + 16 + 'px';
  }

  /* Selects an event (from a click or a search): outline, flows, details panel. */
  select(h) {
    this.selected = h;
    this.flows = [];
    this.draw();
    if (!h) return;
    this.onSelect(h);
    if (h.table === 'Instruction' || h.table === 'DmaPacketAggregated') {
      NX.get(`${this.base()}/timeline/flows?table=${h.table}&id=${h.id}`).then((r) => {
        if (this.selected !== h) return;
        this.flows = r.result ? NX.objects(r.result) : [];
        this.canvas.dataset.flows = this.flows.length;
        this.draw();
      }).catch((e) => this.fail(e));
    }
  }

  /* "field = value" or "Table.field = value" over the whole profile (server side). */
  async search(text, opts) {
    const m = /^\s*(?:([A-Za-z]\w*)\.)?([A-Za-z_]\w*)\s*==?\s*(.*?)\s*$/.exec(text || '');
    if (!m) {
      this.matches = null; this.searchInfo.textContent = text && text.trim() ? 'write field = value' : '';
      this.draw(); return null;
    }
    const table = m[1] || 'Instruction', field = m[2], value = m[3].replace(/^(['"])(.*)\1$/, '$2');
    this.searchInput.value = `${m[1] ? table + '.' : ''}${field} = ${value}`;
    this.searchInfo.textContent = 'searching…';
    const r = await NX.get(`${this.base()}/timeline/search?table=${NX.enc(table)}&field=${NX.enc(field)}&value=${NX.enc(value)}`);
    const rows = NX.objects(r.result);
    const total = rows.length ? rows[0].total : 0;
    this.matches = { table, kind: r.kind, rows, total, ids: new Set(rows.map((x) => x.id)), i: -1 };
    this.searchInfo.textContent = `${NX.fmtNum(total)} match${total === 1 ? '' : 'es'}` +
      (total > rows.length ? ` (first ${rows.length} marked)` : '');
    if (rows.length && !(opts && opts.keepView)) this.nextMatch(1);
    else this.draw();
    return this.matches;
  }

  nextMatch(dir) {
    const m = this.matches;
    if (!m || !m.rows.length) return;
    m.i = (m.i + dir + m.rows.length) % m.rows.length;
    const r = m.rows[m.i];
    this.searchInfo.textContent = `${m.i + 1} of ${NX.fmtNum(m.total)}`;
    this.focus(r.start, r.end);
    const tr = this.tracks.find((t) => t.kind === m.kind && t.core === r.core && t.track === r.track);
    if (tr) this.select({ key: this.key(tr), track: tr, table: m.table, core: r.core, id: r.id, start: r.start,
      end: r.end, label: r.label, count: 1, busy: null, bins: false });
  }

  /* The box selection's aggregate: events overlapping [t0, t1) on the rows the box
   * spans, from the server (GET .../timeline/aggregate). */
  async aggregate(t0, t1, rows) {
    t0 = Math.floor(t0); t1 = Math.ceil(t1);
    const keys = new Set(rows.map((i) => this.key(this.tracks[i])));
    this.panel.replaceChildren(NX.el('p', { class: 'muted' }, 'Aggregating…'));
    const r = await NX.get(`${this.base()}/timeline/aggregate?t0=${t0}&t1=${t1}&dma=${this.dma}`);
    const all = NX.objects(r.result).filter((x) => keys.has(`${x.kind}|${x.core}|${x.track}`));
    const byTrack = new Map();
    for (const x of all) {
      const k = `${x.kind}|${x.core}|${x.track}`;
      const e = byTrack.get(k) || { kind: x.kind, track: x.track, count: 0, busy: 0 };
      e.count += x.count; e.busy += x.busy; byTrack.set(k, e);
    }
    const n = all.reduce((a, x) => a + x.count, 0), busy = all.reduce((a, x) => a + x.busy, 0);
    const tbl = (head, list, cells) => NX.el('table', { class: 'grid' },
      NX.el('thead', {}, NX.el('tr', {}, head.map((h, i) => NX.el('th', { class: i > 1 ? 'num' : '' }, h)))),
      NX.el('tbody', {}, list.map((x) => NX.el('tr', {}, cells(x).map((v, i) => NX.el('td', { class: i > 1 ? 'num' : '' }, v))))));
    this.panel.replaceChildren(
      NX.el('div', { class: 'toolbar' }, NX.el('h2', { style: 'margin:0' }, 'Selection'),
        NX.el('span', { class: 'muted', 'data-testid': 'tl-aggregate-summary' },
          `${NX.fmtNs(t0 - this.full[0])} – ${NX.fmtNs(t1 - this.full[0])} (${NX.fmtNs(t1 - t0)}) · ${rows.length} rows · ${NX.fmtNum(n)} events · busy ${NX.fmtNs(busy)}`),
        NX.el('span', { style: 'flex:1' }),
        NX.el('button', { class: 'secondary', onclick: () => { this.panel.replaceChildren(); this.box = null; this.draw(); } }, 'Clear')),
      NX.el('div', { class: 'row', 'data-testid': 'tl-aggregate' },
        NX.el('div', { style: 'flex:1' }, tbl(['Row', 'Kind', 'Events', 'Busy'], [...byTrack.values()].sort((a, b) => b.busy - a.busy),
          (x) => [x.track, x.kind, NX.fmtNum(x.count), NX.fmtNs(x.busy)])),
        NX.el('div', { style: 'flex:1.4' }, tbl(['Row', 'Opcode / op', 'Events', 'Busy', 'Mean'], all.slice(0, 60),
          (x) => [x.track, x.label, NX.fmtNum(x.count), NX.fmtNs(x.busy), NX.fmtNs(x.busy / x.count)]))));
    return all;
  }

  bindEvents() {
    const cv = this.canvas;
    let drag = null;
    const pos = (ev) => { const r = cv.getBoundingClientRect(); return [ev.clientX - r.left, ev.clientY - r.top]; };
    cv.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      const [x] = pos(ev);
      if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
        this.pan((ev.deltaX || ev.deltaY) / this.plotW());
      } else {
        this.zoom(Math.pow(1.0015, ev.deltaY), x > this.labelW ? this.t(x) : undefined);
      }
    }, { passive: false });
    cv.addEventListener('mousedown', (ev) => {
      const [x, y] = pos(ev);
      drag = { x, y, t0: this.t0, t1: this.t1, moved: false, box: ev.shiftKey && x > this.labelW };
      if (drag.box) this.box = { x0: x, y0: y, x1: x, y1: y };
      cv.focus();
      ev.preventDefault();
    });
    window.addEventListener('mousemove', (ev) => {
      const [x, y] = pos(ev);
      if (ev.target === cv && x > this.labelW) this.mouseT = this.t(x);
      if (drag) {
        if (Math.abs(x - drag.x) > 3 || Math.abs(y - drag.y) > 3) { drag.moved = true; if (!drag.box) cv.classList.add('dragging'); }
        if (drag.box) {
          this.box.x1 = Math.max(this.labelW, Math.min(this.W, x)); this.box.y1 = Math.max(this.axisH, Math.min(this.H, y));
          this.redraw();
        } else if (drag.moved) {
          const dt = (x - drag.x) / this.plotW() * (drag.t1 - drag.t0);
          this.setView(drag.t0 - dt, drag.t1 - dt);
        }
        return;
      }
      if (ev.target !== cv) { this.mouseT = undefined; return; }
      this.hover = this.hit(x, y);
      this.showTip(ev, this.hover);
    });
    window.addEventListener('mouseup', (ev) => {
      if (!drag) return;
      const d = drag;
      drag = null; cv.classList.remove('dragging');
      if (d.box) {
        const b = this.box;
        if (!d.moved) { this.box = null; this.draw(); return; }
        const r0 = this.rowOf(Math.min(b.y0, b.y1) + 1), r1 = this.rowOf(Math.max(b.y0, b.y1) - 1);
        const rows = [];
        for (let i = Math.max(0, r0); i <= (r1 < 0 ? this.tracks.length - 1 : r1); i++) rows.push(i);
        this.aggregate(this.t(Math.min(b.x0, b.x1)), this.t(Math.max(b.x0, b.x1)), rows).catch((e) => this.fail(e));
        return;
      }
      if (d.moved || ev.target !== cv) return;
      const [x, y] = pos(ev);
      const h = this.hit(x, y);
      this.select(h && !h.counter ? h : null);
    });
    cv.addEventListener('mouseleave', () => { this.showTip(null, null); this.mouseT = undefined; });
    cv.addEventListener('keydown', (ev) => {
      const k = ev.key.toLowerCase();
      const at = this.mouseT;
      if (k === 'w') this.zoom(0.8, at);
      else if (k === 's') this.zoom(1.25, at);
      else if (k === 'a' || ev.key === 'ArrowLeft') this.pan(-0.15);
      else if (k === 'd' || ev.key === 'ArrowRight') this.pan(0.15);
      else if (k === '0') this.reset();
      else if (k === 'f' && this.selected) this.focus(this.selected.start, this.selected.end);
      else if (k === 'n') this.nextMatch(ev.shiftKey ? -1 : 1);
      else if (ev.key === 'Escape') { this.box = null; this.select(null); this.panel.replaceChildren(); }
      else if (ev.key === '/') this.searchInput.focus();
      else return;
      ev.preventDefault();
    });
  }
}
