/* timeline.js: the canvas timeline (docs/ui.md "Timeline"): its view, data and drawing;
 * timeline-input.js adds the mouse, keys and tooltip, timeline-query.js selection,
 * search and box selection, timeline-groups.js the track groups (engines, DMA queues,
 * counters, semaphores, framework processes: collapse, pin, reorder), timeline-deps.js
 * flows and the dependency chain, timeline-notes.js the annotations. Rows: engines,
 * framework streams (one row per depth lane of nested or overlapping events), DMA
 * queues, then value tracks (counters, semaphores). The server does the level of detail (GET .../timeline?t0&t1&px and
 * .../timeline/counters, docs/api.md): each reply holds, per track, raw rows or
 * per-bucket summaries, so the browser never draws more than a few thousand rectangles
 * per row. Each fetch covers the view and a quarter of its width on either side (at the
 * view's bucket width), so a small pan is drawn from data at hand while the next fetch
 * runs; fetches are throttled while the view moves and drawing happens once per
 * animation frame.
 * Times: the API's times are absolute profile nanoseconds, beyond 2^53 for epoch traces
 * (then sent as strings). The timeline keeps `origin`, the profile's first start, as a
 * BigInt, and every time as a number relative to it (exact up to 2^53 ns, 104 days);
 * requests and links carry absolute times made with BigInt (abs, rel). */
'use strict';

const TL_KINDS = ['instruction', 'framework', 'dma'];
const TL_MARGIN = 0.25; /* share of the view fetched beyond each side */
const TL_MIN_SPAN = 10; /* ns: the narrowest view */
const TL_FONT = '12px system-ui, sans-serif', TL_FONT_SMALL = '10px system-ui, sans-serif';

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

/* The canvas's colours, from the page's theme (app.css), so dark mode reaches it. */
function tlTheme() {
  const cs = getComputedStyle(document.documentElement);
  const v = (n, d) => cs.getPropertyValue(n).trim() || d;
  return {
    bg: v('--tl-bg', '#fff'), axisBg: v('--tl-axis', '#f7f8fa'), grid: v('--tl-grid', '#eef0f3'),
    alt: v('--tl-alt', '#fafbfc'), line: v('--line', '#e2e5ea'), text: v('--text', '#1d2430'),
    muted: v('--muted', '#6b7483'), sel: v('--tl-sel', '#111827'), counter: v('--tl-counter', '#7c4a03'),
  };
}

/* Black or white text over a colour, whichever reads better. */
const inkCache = new Map();
function inkOn(col) {
  let ink = inkCache.get(col);
  if (!ink) {
    const n = parseInt(col.slice(1), 16);
    const lum = 0.299 * (n >> 16) + 0.587 * ((n >> 8) & 255) + 0.114 * (n & 255);
    ink = lum > 160 ? '#111827' : '#ffffff';
    inkCache.set(col, ink);
  }
  return ink;
}

class Timeline {
  constructor(root, profile, opts) {
    this.profile = profile;
    this.onSelect = opts.onSelect || (() => {});
    this.onView = opts.onView || (() => {});
    /* embedded (the compare page): no state in the URL's hash, keys only while the
     * pointer is over it or it has the focus */
    this.embedded = !!opts.embedded;
    this.rowH = 22; this.laneH = 15; this.axisH = 26; this.labelW = 200;
    this.tracks = []; this.data = null; this.counters = null; this.selected = null; this.hover = null;
    this.flows = []; this.matches = null; this.box = null; this.mouse = null;
    this.origin = 0n; this.full = null; this.widths = new Map(); this.cuts = new Map();
    this.canvas = NX.el('canvas', { class: 'tl-canvas', tabindex: '0', 'data-testid': 'timeline' });
    this.status = NX.el('div', { class: 'tl-status' });
    this.legend = NX.el('div', { class: 'legend', 'data-testid': 'legend' });
    this.notice = NX.el('div', { class: 'tl-notice', 'data-testid': 'tl-notice', hidden: true });
    this.panel = NX.el('div', { class: 'tl-panel', 'data-testid': 'tl-selection' });
    root.append(this.searchBar(), this.notice, this.canvas, this.status, this.legend, this.panel);
    this.ctx = this.canvas.getContext('2d');
    this.pending = null; this.timer = 0; this.requests = 0;
    this.dma = 'transfers'; /* or 'packets': which DMA table the queue rows show */
    this.theme = tlTheme();
    const dark = matchMedia('(prefers-color-scheme: dark)');
    dark.addEventListener('change', () => { this.theme = tlTheme(); this.draw(); });
    this.bindEvents();
    new ResizeObserver(() => this.resize()).observe(this.canvas);
  }

  fail(e) { this.status.textContent = 'timeline: ' + (e.message || e); }
  /* A message above the canvas, once (the same text is not repeated). */
  say(msg) {
    if (this.notice.textContent.includes(msg)) return;
    this.notice.hidden = false;
    this.notice.append(NX.el('div', {}, msg));
  }
  base() { return NX.profileBase(this.profile); }
  /* The URL hash's parameters (none when embedded), and writing them back. */
  hashParams() { return new URLSearchParams(this.embedded ? '' : location.hash.slice(1)); }
  writeHash(h) { if (!this.embedded) history.replaceState(null, '', '#' + h.toString()); }

  /* Relative time of an absolute one (a number, a string beyond 2^53, a BigInt). */
  rel(v) {
    if (typeof v === 'number' && this.originNum !== null) return v - this.originNum;
    return Number(NX.big(v) - this.origin);
  }
  /* Absolute profile nanoseconds of a relative time, as exact text. */
  abs(t) { return (this.origin + BigInt(Math.round(t))).toString(); }

  /* Opens the profile's rows; view is a link's {t0, t1} (absolute, as text) or null. */
  async load(view) {
    /* the first open of a profile version builds its timeline cache on the server: about
     * 1 to 2 s per million events (docs/ui.md) */
    const slow = setTimeout(() => { this.status.textContent = 'Building the timeline summary of this profile ' +
      '(once per profile version, about 1–2 s per million events)…'; }, 1000);
    const res = await NX.get(`${this.base()}/timeline/tracks?dma=${this.dma}`).finally(() => clearTimeout(slow));
    this.statusText = null;
    const rows = this.oneClock(NX.objects(res));
    let o = null;
    for (const pass of [false, true]) {
      for (const t of rows) if (pass || t.kind !== 'counter') { const s = NX.big(t.start); if (o === null || s < o) o = s; }
      if (o !== null) break;
    }
    this.origin = o === null ? 0n : o;
    this.originNum = Number.isSafeInteger(Number(this.origin)) ? Number(this.origin) : null;
    this.tracks = rows.map((t) => Object.assign(t, { start: this.rel(t.start), end: this.rel(t.end),
      stream: t.stream === undefined || t.stream === null ? t.track : t.stream, lane: t.lane || 0 }));
    this.natural = this.tracks.slice(); /* the server's order; layout() orders the groups */
    let hi = -Infinity;
    for (const t of this.tracks) if (t.kind !== 'counter') hi = Math.max(hi, t.end);
    if (!isFinite(hi)) for (const t of this.tracks) hi = Math.max(hi, t.end);
    this.full = [0, isFinite(hi) && hi > 0 ? hi : 1000];
    this.layout();
    if (!this.notes) this.notes = this.readNotes();
    this.data = null; this.counters = null;
    if (!view || !this.linkView(view)) { this.t0 = this.full[0]; this.t1 = this.full[1]; }
    this.resize();
    const hl = this.hashParams().get('highlight');
    if (hl && !this.highlighted) { this.highlighted = true; this.highlight(hl, { keepView: !!view }).catch((e) => this.fail(e)); }
    const sq = this.hashParams().get('search');
    if (sq && !hl && !this.searched) { /* a link's search (the memory and hierarchy views) */
      this.searched = true; this.searchInput.value = sq;
      this.search(sq, { keepView: !!view }).catch((e) => this.searchError(e));
    }
    return this.tracks;
  }

  /* A profile's device events and framework events can be on clocks that do not meet
   * (the device's ticks, the epoch: ingest says so in Warning): then the timeline shows
   * one clock at a time, chosen above the canvas (and kept in the hash as clock=), never
   * an axis across both. Returns the rows of the clock shown. */
  oneClock(rows) {
    const dev = rows.filter((t) => t.kind !== 'framework'), fw = rows.filter((t) => t.kind === 'framework');
    if (!dev.length || !fw.length) return rows;
    const bounds = (rs) => rs.reduce(([a, b], t) => {
      const s = NX.big(t.start), e = NX.big(t.end);
      return [a === null || s < a ? s : a, b === null || e > b ? e : b];
    }, [null, null]);
    const [d0, d1] = bounds(dev), [f0, f1] = bounds(fw);
    const gap = f0 > d1 ? f0 - d1 : d0 > f1 ? d0 - f1 : 0n, span = d1 - d0 > f1 - f0 ? d1 - d0 : f1 - f0;
    if (gap <= 100n * (span > 0n ? span : 1n)) return rows;
    if (!this.clock) this.clock = this.hashParams().get('clock') === 'framework' ? 'framework' : 'device';
    if (!this.clockBox) {
      const pick = NX.el('select', { 'data-testid': 'tl-clock', onchange: () => {
        this.clock = pick.value;
        const h = this.hashParams();
        h.delete('t0'); h.delete('t1'); h.set('clock', this.clock);
        this.writeHash(h);
        this.data = null; this.notes = null; this.gstate = null;
        this.load(null).catch((e) => this.fail(e));
      } }, NX.el('option', { value: 'device' }, 'device events'), NX.el('option', { value: 'framework' }, 'framework events'));
      this.clockBox = NX.el('div', {}, 'The device\'s events and the framework events are on clocks that do not meet ' +
        `(${NX.fmtNs(Number(gap))} apart; the Warning table says more): the timeline shows one clock at a time. Showing `, pick, '.');
      this.notice.hidden = false;
      this.notice.append(this.clockBox);
    }
    this.clockBox.querySelector('select').value = this.clock;
    return this.clock === 'framework' ? fw : dev;
  }

  resize() {
    const dpr = window.devicePixelRatio || 1;
    const w = this.canvas.clientWidth || 800;
    const h = (this.tracks.length ? this.rowsH : this.axisH + this.rowH) + 1;
    this.canvas.style.height = h + 'px';
    this.canvas.width = Math.round(w * dpr); this.canvas.height = Math.round(h * dpr);
    this.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    this.W = w; this.H = h;
    this.draw(); this.fetchSoon();
  }

  /* Switches the DMA rows between transfers and packets, keeping the viewport. */
  async setDma(mode) {
    this.dma = mode;
    const v = this.view();
    this.data = null;
    await this.load(v);
  }

  plotW() { return Math.max(10, this.W - this.labelW); }
  x(t) { return this.labelW + (t - this.t0) / (this.t1 - this.t0) * this.plotW(); }
  t(x) { return this.t0 + (x - this.labelW) / this.plotW() * (this.t1 - this.t0); }

  /* [t0, t1] kept on the profile: at least TL_MIN_SPAN wide, at most a fifth wider than
   * the profile, and never panned more than a tenth of the view past either end. */
  clampView(t0, t1) {
    const [f0, f1] = this.full, fs = f1 - f0;
    let span = t1 - t0;
    if (!(span >= TL_MIN_SPAN)) { const c = (t0 + t1) / 2; span = TL_MIN_SPAN; t0 = c - span / 2; t1 = c + span / 2; }
    if (span > fs * 1.2) return [f0 - fs * 0.1, f1 + fs * 0.1];
    const lo = f0 - span * 0.1, hi = f1 + span * 0.1;
    if (t0 < lo) { t0 = lo; t1 = lo + span; }
    if (t1 > hi) { t1 = hi; t0 = hi - span; }
    return [t0, t1];
  }

  /* Takes a link's view (absolute ns as text) when it is valid, clamped to the profile;
   * says once, above the canvas, what it ignored or changed. */
  linkView(v) {
    const what = `The link's view (t0=${String(v.t0).slice(0, 24)}, t1=${String(v.t1).slice(0, 24)})`;
    if (!NX.isIntText(v.t0) || !NX.isIntText(v.t1)) { this.say(`${what} is ignored: t0 and t1 must be integer nanoseconds.`); return false; }
    const t0 = this.rel(v.t0), t1 = this.rel(v.t1);
    if (!(t1 > t0)) { this.say(`${what} is ignored: t1 must be above t0.`); return false; }
    if (t1 <= this.full[0] || t0 >= this.full[1]) { this.say(`${what} is ignored: it lies outside the profile.`); return false; }
    const [c0, c1] = this.clampView(t0, t1);
    if (c0 !== t0 || c1 !== t1) this.say(`${what} was narrowed to the profile.`);
    this.t0 = c0; this.t1 = c1;
    return true;
  }

  setView(t0, t1) {
    [this.t0, this.t1] = this.clampView(t0, t1);
    this.redraw(); this.fetchSoon(); this.onView(this.view());
    if (this.ops) this.opsSoon();
  }
  /* The view as absolute profile nanoseconds (exact text), as links carry it. */
  view() { return { t0: this.abs(Math.floor(this.t0)), t1: this.abs(Math.ceil(this.t1)) }; }
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
    const q = `t0=${this.abs(f0)}&t1=${this.abs(f1)}&px=${fpx}`;
    const t = performance.now();
    try {
      const hasCounters = this.tracks.some((tr) => tr.kind === 'counter');
      const [r, c] = await Promise.all([NX.get(`${this.base()}/timeline?${q}&dma=${this.dma}`, ac.signal),
        hasCounters ? NX.get(`${this.base()}/timeline/counters?${q}`, ac.signal) : null]);
      this.data = this.index(r);
      this.counters = c && c.series ? { bucket: c.bucket, rows: new Map(c.series.map((x) => {
        x.ts = (x.ts || []).map((v) => this.rel(v));
        return [`counter|${x.core}|${x.track}`, x];
      })) } : null;
      this.lastMs = performance.now() - t;
      this.requests++;
      this.canvas.dataset.requests = this.requests;
      this.redraw();
      if (this.dma === 'transfers' && this.tracks.some((tr) => tr.kind === 'dma')) this.fetchSmallDma(q, r.bucket);
    } catch (e) {
      if (e.name !== 'AbortError') this.fail(e);
    } finally {
      if (this.pending === ac) this.pending = null;
    }
    if (!this.pending && this.again) { this.again = false; if (!this.covered()) this.fetch(); }
  }

  /* The small-DMA warning band of the fetched window (GET .../timeline/small-dma): after
   * the window's data, so it never delays a view. */
  async fetchSmallDma(q, bucket) {
    const mine = this.smallToken = (this.smallToken || 0) + 1;
    try {
      const r = await NX.get(`${this.base()}/timeline/small-dma?${q}`);
      if (mine !== this.smallToken || !r.result) return;
      const rows = new Map();
      for (const x of NX.objects(r.result)) {
        const k = `dma|${x.core}|${x.track}`, a = rows.get(k) || [];
        a.push({ start: this.rel(x.start), small: Number(x.small), n: Number(x.n) });
        rows.set(k, a);
      }
      this.smallDma = { bucket: r.bucket, limit: r.bytes_per_partition_below, rows, t0: this.rel(r.t0), t1: this.rel(r.t1) };
      this.redraw();
    } catch (e) { if (e.name !== 'AbortError') this.fail(e); }
  }

  /* Draws at the next animation frame (once, however many changes come before it). */
  redraw() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => { this.frame = 0; this.draw(); });
  }

  /* Maps "kind|core|track" to its columnar rows; labels from the reply's dictionary,
   * and per label the indices of its rectangles (drawn with one fill style each). */
  index(r) {
    const m = new Map(), labels = r.labels || [], rt0 = this.rel(r.t0);
    let lod = false;
    for (const kind of TL_KINDS) {
      if (!r[kind]) continue;
      lod = lod || r[kind].lod;
      for (const row of r[kind].tracks) {
        row.label = row.label.map((i) => (i === null ? null : labels[i]));
        /* start and last come as offsets from the reply's t0, ends as durations */
        row.start = row.start.map((x) => x + rt0);
        row.end = row.dur.map((x, j) => row.start[j] + x);
        if (row.last) row.last = row.last.map((x) => x + rt0);
        const groups = new Map();
        row.label.forEach((l, j) => { const g = groups.get(l); if (g) g.push(j); else groups.set(l, [j]); });
        m.set(`${kind}|${row.core}|${row.track}`, Object.assign(row, { table: r[kind].table, kind, groups }));
      }
    }
    return { bucket: r.bucket, rows: m, t0: rt0, t1: this.rel(r.t1), lod };
  }

  series(i) { return this.data && this.data.rows.get(this.tracks[i].key); }
  /* The row index of an event of table t (Flow's table names) on core/track, or -1. */
  rowIndex(table, core, track) {
    const kind = table === 'Instruction' ? 'instruction' : table === 'SystemProfileEvents' ? 'framework' : 'dma';
    return this.tracks.findIndex((tr) => tr.kind === kind && tr.core === core && (tr.track === track || (tr.stream === track && !tr.lane)));
  }

  /* text cut to maxW pixels with an ellipsis (at its start with fromStart), never
   * squeezed; widths of whole texts are remembered. */
  fit(text, maxW, fromStart) {
    const c = this.ctx, wkey = c.font + '\u0000' + text;
    let w = this.widths.get(wkey);
    if (w === undefined) { w = c.measureText(text).width; if (this.widths.size > 5000) this.widths.clear(); this.widths.set(wkey, w); }
    if (w <= maxW) return text;
    if (maxW < 12) return '';
    /* cut texts are remembered per font and whole pixel of room: a pan redraws them unchanged */
    const key = `${fromStart ? 1 : 0}${Math.floor(maxW)}\u0000${wkey}`;
    let out = this.cuts.get(key);
    if (out === undefined) {
      out = this.cut(text, Math.floor(maxW), fromStart);
      if (this.cuts.size > 5000) this.cuts.clear();
      this.cuts.set(key, out);
    }
    return out;
  }

  cut(text, maxW, fromStart) {
    const c = this.ctx;
    let lo = 0, hi = text.length;
    while (lo < hi) {
      const m = (lo + hi + 1) >> 1;
      const s = fromStart ? '…' + text.slice(text.length - m) : text.slice(0, m) + '…';
      if (c.measureText(s).width <= maxW) lo = m; else hi = m - 1;
    }
    return lo ? (fromStart ? '…' + text.slice(text.length - lo) : text.slice(0, lo) + '…') : '';
  }

  /* Tick step of the axis: 1, 2 or 5 times a power of ten, ticks ~110 px apart, >= 1 ns. */
  tickStep() {
    return NX.niceStep((this.t1 - this.t0) / (this.plotW() / 110));
  }

  /* The axis's ticks of the view: [{t, x, text}] at multiples of the step from the
   * profile's start, labelled with the digits the step needs. */
  tickLabels() {
    const step = this.tickStep(), unit = NX.timeUnit(Math.max(Math.abs(this.t0), Math.abs(this.t1))), out = [];
    for (let k = Math.ceil(this.t0 / step); k * step <= this.t1; k++)
      out.push({ t: k * step, x: Math.round(this.x(k * step)) + 0.5, text: NX.fmtTick(k * step, step, unit), step });
    return out;
  }

  /* A row's label: kind, stream (without its group's process, which the group's header
   * names, as it names the core), and a value track's scale. */
  rowLabel(tr) {
    const prefix = { dma: 'DMA ', counter: '', framework: '', instruction: '' };
    const proc = tr.kind === 'framework' && tr.tg && tr.stream.startsWith(tr.tg.title + ' / ') ? tr.tg.title.length + 3 : 0;
    let label = prefix[tr.kind] + tr.stream.slice(proc);
    if (tr.kind === 'counter' && tr.max !== undefined) label += tr.max > 0 ? ` ≤ ${counterValue(tr.track, tr.max)}` : ' (0)';
    return label;
  }

  draw() {
    const c = this.ctx, W = this.W, H = this.H, pw = this.plotW(), th = this.theme;
    if (!W || !this.full) return;
    c.clearRect(0, 0, W, H);
    c.fillStyle = th.bg; c.fillRect(0, 0, W, H);
    c.font = TL_FONT; c.textBaseline = 'middle';
    // axis: ticks at multiples of the step from the profile's start, labelled with the
    // digits the step needs
    const span = this.t1 - this.t0;
    c.fillStyle = th.axisBg; c.fillRect(0, 0, W, this.axisH);
    c.strokeStyle = th.line; c.beginPath(); c.moveTo(0, this.axisH + 0.5); c.lineTo(W, this.axisH + 0.5); c.stroke();
    for (const { x, text } of this.tickLabels()) {
      c.strokeStyle = th.grid; c.beginPath(); c.moveTo(x, this.axisH); c.lineTo(x, H); c.stroke();
      if (x + 4 + c.measureText(text).width <= W - 2) { c.fillStyle = th.muted; c.fillText(text, x + 4, this.axisH / 2); }
    }
    const seen = new Map();
    this.drawRows(); /* group headers, row shading (timeline-groups.js) */
    this.drawNotes(); /* annotation ranges and markers, under the events (timeline-notes.js) */
    this.tracks.forEach((tr, i) => {
      /* a collapsed group's rows are drawn over one another on its header */
      if (tr.hidden && tr.kind === 'counter') return;
      const y = tr.y;
      if (y > H || y + tr.h < this.axisH) return;
      if (tr.first && !tr.hidden) { c.strokeStyle = th.grid; c.beginPath(); c.moveTo(this.labelW, y + 0.5); c.lineTo(W, y + 0.5); c.stroke(); }
      c.save(); c.beginPath(); c.rect(this.labelW, y, pw, tr.h); c.clip();
      if (tr.kind === 'counter') this.drawCounter(tr, y);
      else this.drawEvents(tr, i, y, seen);
      c.restore();
    });
    this.drawMatchTicks();
    this.drawFlows();
    this.drawChain();
    if (this.box) {
      const b = this.box, x0 = Math.min(b.x0, b.x1), y0 = Math.min(b.y0, b.y1);
      c.fillStyle = 'rgba(47,111,236,0.12)'; c.strokeStyle = '#2f6fec';
      c.fillRect(x0, y0, Math.abs(b.x1 - b.x0), Math.abs(b.y1 - b.y0));
      c.strokeRect(x0 + 0.5, y0 + 0.5, Math.abs(b.x1 - b.x0), Math.abs(b.y1 - b.y0));
    }
    this.drawLabels();
    this.drawNoteFlags();
    this.drawStatus(span, seen);
    this.afterDraw();
  }

  /* Status line (exact nanoseconds from the profile's start) and legend; the DOM only
   * when their text changes: a pan redraws 60 times a second. */
  drawStatus(span, seen) {
    const d = this.data;
    let mode = '';
    if (d) {
      const modes = [...d.rows.values()].map((r) => r.mode);
      mode = modes.includes('bins') ? `buckets of ${NX.fmtNsExact(d.bucket)}${d.lod ? ' (summary)' : ''}` : 'raw events';
    }
    const x0 = NX.fmtNsExact(Math.floor(this.t0)).replace(/ ns$/, ''), x1 = NX.fmtNsExact(Math.ceil(this.t1));
    const status = [`window ${x0} – ${x1} (${NX.fmtNs(span)})`,
      mode, this.lastMs ? `last fetch ${this.lastMs.toFixed(0)} ms` : '',
      'wheel/W/S zoom · drag/A/D pan · shift+drag select · F focus · 0 reset · / search'];
    if (status.join('\n') !== this.statusText) {
      this.statusText = status.join('\n');
      this.status.replaceChildren(...status.map((t, i) => NX.el('span', i === 1 ? { 'data-testid': 'lod' } : i === 0 ? { 'data-testid': 'tl-window' } : {}, t)));
    }
    const lg = [...seen.entries()].sort((a, b) => String(a[0]).localeCompare(String(b[0]))).slice(0, 40);
    const legend = lg.map(([k, v]) => k + '=' + v).join('\n');
    if (legend !== this.legendText) {
      this.legendText = legend;
      this.legend.replaceChildren(...lg.map(([k, v]) => NX.el('span', { style: `--c:${v}`, title: k, 'data-label': k }, k)));
    }
  }

  drawEvents(tr, i, y, seen) {
    const c = this.ctx, s = this.series(i);
    if (!s) return;
    const sel = this.selected, bk = this.data.bucket, bins = s.mode === 'bins';
    const keys = this.matches ? this.matches.keys : null;
    const lo = this.labelW - 2, hi = this.W + 2, pad = tr.h > 18 ? 3 : 2, top = y + pad, h = tr.h - 2 * pad;
    for (const [label, idx] of s.groups) {
      const col = NX.color(label);
      seen.set(label, col);
      c.fillStyle = col;
      for (const j of idx) {
        const [x0, x1] = this.extent(s, j);
        if (x1 < lo || x0 > hi) continue;
        const w = Math.max(1, x1 - x0);
        /* a bucket: its longest event's colour, as opaque as the bucket is busy */
        if (bins && s.count[j] > 1) {
          c.globalAlpha = 0.15 + 0.85 * Math.min(1, s.busy[j] / bk);
          c.fillRect(x0, top, w, h);
          c.globalAlpha = 1;
        } else if (s.end[j] === s.start[j]) {
          /* an instant (no duration): a small triangle pointing at its time */
          c.beginPath(); c.moveTo(x0 - 4, top); c.lineTo(x0 + 4, top); c.lineTo(x0, top + h); c.closePath(); c.fill();
        } else {
          /* a pixel's gap at the right end: adjacent events of one colour stay apart */
          c.fillRect(x0, top, w >= 3 ? w - 1 : w, h);
        }
      }
    }
    const band = this.dma === 'transfers' && tr.kind === 'dma' && this.smallDma && this.smallDma.rows.get(tr.key);
    if (band) { /* small transfers: a band along the row's top, as strong as they are many */
      const col = '#e8590c', bk2 = this.smallDma.bucket;
      c.fillStyle = col;
      for (const b of band) {
        const x0 = this.x(b.start), x1 = this.x(b.start + bk2);
        if (x1 < lo || x0 > hi) continue;
        c.globalAlpha = 0.45 + 0.55 * b.small / b.n;
        c.fillRect(x0, y, Math.max(2, x1 - x0), 3);
      }
      c.globalAlpha = 1;
      seen.set(`small DMA (< ${this.smallDma.limit} B per partition)`, col);
    }
    /* names inside bars wide enough, ellipsized: 12 px on rows, 10 px on the thinner
     * depth lanes of framework streams */
    const n = s.start.length, font = h >= 12 ? TL_FONT : h >= 9 ? TL_FONT_SMALL : null;
    if (font) c.font = font;
    for (let j = 0; j < n; j++) {
      const [x0, x1] = this.extent(s, j), w = Math.max(1, x1 - x0);
      if (x1 < lo || x0 > hi) continue;
      if (font && w > 24 && (!bins || s.count[j] === 1) && s.label[j] !== null) {
        const x = Math.max(x0, this.labelW), room = Math.min(x1, this.W) - x - 6;
        const txt = this.fit(String(s.label[j]), room);
        if (txt) { c.fillStyle = inkOn(NX.color(s.label[j])); c.fillText(txt, x + 3, y + tr.h / 2 + 0.5); }
      }
      if (keys && keys.has(s.table + '|' + s.id[j])) {
        c.strokeStyle = '#f59e0b'; c.lineWidth = 2; c.strokeRect(x0 - 1, y + 1, w + 2, tr.h - 2); c.lineWidth = 1;
      }
      if (sel && sel.table === s.table && sel.id === s.id[j] && sel.core === tr.core) {
        c.strokeStyle = this.theme.sel; c.lineWidth = 2; c.strokeRect(x0 - 1, y + 1.5, w + 2, tr.h - 3); c.lineWidth = 1;
      }
    }
  }

  /* A value track: per bucket the maximum as a filled step, the last value carried over
   * gaps, scaled to the largest value in view. */
  drawCounter(tr, y) {
    const s = this.counters && this.counters.rows.get(tr.key);
    if (!s) return;
    const c = this.ctx, bk = this.counters.bucket, top = y + 3, h = tr.h - 6;
    const ts = s.ts || [], hi = s.hi || [], last = s.last || [];
    const max = Math.max(0, s.before || 0, ...hi);
    tr.max = max;
    if (!(max > 0)) return;
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

  /* Pixel extent of entry j: the event itself; for a bucket of several events, the
   * bucket's span (a lone event in a bucket is drawn as itself). */
  extent(s, j) {
    if (s.mode === 'bins' && s.count[j] > 1) {
      const bk = this.data.bucket, k = this.data.t0 + Math.floor((s.start[j] - this.data.t0) / bk) * bk;
      return [this.x(k), this.x(Math.max(k + bk, Math.min(s.last ? s.last[j] : 0, k + 2 * bk)))];
    }
    return [this.x(s.start[j]), this.x(s.end[j])];
  }
}
