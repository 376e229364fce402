/* timeline.js: the canvas timeline. One row per track (engine rows, then DMA queues);
 * the server does the level of detail (GET .../timeline?t0&t1&px, docs/api.md): each
 * reply holds, per track, either raw rows or per-bucket representatives, so the
 * browser never draws more than a few thousand rectangles per row. Wheel zooms, drag
 * pans, W/A/S/D as in Perfetto; hover shows a tooltip; a click selects an event. */
'use strict';

class Timeline {
  constructor(root, profile, opts) {
    this.profile = profile;
    this.onSelect = opts.onSelect || (() => {});
    this.onView = opts.onView || (() => {});
    this.rowH = 26; this.axisH = 26; this.labelW = 150;
    this.tracks = []; this.data = null; this.selected = null; this.hover = null;
    this.canvas = NX.el('canvas', { class: 'tl-canvas', tabindex: '0', 'data-testid': 'timeline' });
    this.status = NX.el('div', { class: 'tl-status' });
    this.legend = NX.el('div', { class: 'legend' });
    root.append(this.canvas, this.status, this.legend);
    this.ctx = this.canvas.getContext('2d');
    this.pending = null; this.timer = 0; this.requests = 0;
    this.dma = 'transfers'; /* or 'packets': which DMA table the queue rows show */
    this.bindEvents();
    new ResizeObserver(() => this.resize()).observe(this.canvas);
  }

  async load(view) {
    const res = await NX.get(`${NX.profileBase(this.profile)}/timeline/tracks?dma=${this.dma}`);
    this.tracks = NX.objects(res);
    let lo = Infinity, hi = -Infinity;
    for (const t of this.tracks) { lo = Math.min(lo, t.start); hi = Math.max(hi, t.end); }
    if (!isFinite(lo)) { lo = 0; hi = 1000; }
    this.full = [lo, hi];
    this.t0 = lo; this.t1 = hi;
    if (view && view.t1 > view.t0) { this.t0 = view.t0; this.t1 = view.t1; }
    this.resize();
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
    this.draw(); this.fetchSoon(); this.onView(this.view());
  }
  view() { return { t0: Math.floor(this.t0), t1: Math.ceil(this.t1) }; }
  zoom(factor, at) {
    const c = at === undefined ? (this.t0 + this.t1) / 2 : at;
    this.setView(c - (c - this.t0) * factor, c + (this.t1 - c) * factor);
  }
  pan(frac) { const d = (this.t1 - this.t0) * frac; this.setView(this.t0 + d, this.t1 + d); }
  reset() { this.setView(this.full[0], this.full[1]); }

  fetchSoon() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.fetch(), 40);
  }

  async fetch() {
    if (!this.tracks.length || !this.full) return;
    if (this.pending) this.pending.abort();
    const ac = new AbortController();
    this.pending = ac;
    const v = this.view(), px = Math.round(this.plotW());
    const url = `${NX.profileBase(this.profile)}/timeline?t0=${v.t0}&t1=${v.t1}&px=${px}&dma=${this.dma}`;
    const t = performance.now();
    try {
      const r = await NX.get(url, ac.signal);
      this.data = this.index(r);
      this.lastMs = performance.now() - t;
      this.requests++;
      this.canvas.dataset.requests = this.requests;
      this.draw();
    } catch (e) {
      if (e.name !== 'AbortError') this.status.textContent = 'timeline: ' + e.message;
    } finally {
      if (this.pending === ac) this.pending = null;
    }
  }

  /* Maps "kind|core|track" to its columnar rows. */
  index(r) {
    const m = new Map();
    for (const kind of ['instruction', 'dma']) {
      if (!r[kind]) continue;
      for (const row of NX.objects(r[kind].result))
        m.set(`${kind}|${row.core}|${row.track}`, Object.assign(row, { table: r[kind].table, kind }));
    }
    return { bucket: r.bucket, rows: m, t0: r.t0, t1: r.t1 };
  }

  rowOf(y) { const i = Math.floor((y - this.axisH) / this.rowH); return i >= 0 && i < this.tracks.length ? i : -1; }
  series(i) {
    const tr = this.tracks[i];
    return this.data && this.data.rows.get(`${tr.kind}|${tr.core}|${tr.track}`);
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
    // rows
    const selId = this.selected;
    const seen = new Map();
    this.tracks.forEach((tr, i) => {
      const y = this.axisH + i * this.rowH;
      if (i % 2) { c.fillStyle = '#fafbfc'; c.fillRect(this.labelW, y, pw, this.rowH); }
      c.strokeStyle = '#f0f2f5'; c.beginPath(); c.moveTo(0, y + this.rowH + 0.5); c.lineTo(W, y + this.rowH + 0.5); c.stroke();
      const s = this.series(i);
      if (!s) return;
      c.save(); c.beginPath(); c.rect(this.labelW, y, pw, this.rowH); c.clip();
      const n = s.start.length, bk = this.data.bucket;
      for (let j = 0; j < n; j++) {
        const col = NX.color(s.label[j]);
        seen.set(s.label[j], col);
        const [x0, x1] = this.extent(s, j);
        const w = Math.max(1, x1 - x0);
        /* a bucket: its longest event's colour, as opaque as the bucket is busy */
        if (s.mode === 'bins') c.globalAlpha = 0.15 + 0.85 * Math.min(1, s.busy[j] / bk);
        c.fillStyle = col; c.fillRect(x0, y + 4, w, this.rowH - 8);
        c.globalAlpha = 1;
        if (s.mode === 'raw' && w > 48) {
          c.fillStyle = '#fff';
          c.fillText(s.label[j], Math.max(x0, this.labelW) + 4, y + this.rowH / 2, w - 8);
        }
        if (selId && selId.key === `${tr.kind}|${tr.core}|${tr.track}` && selId.id === s.id[j]) {
          c.strokeStyle = '#111827'; c.lineWidth = 2; c.strokeRect(x0 - 1, y + 3, w + 2, this.rowH - 6); c.lineWidth = 1;
        }
      }
      c.restore();
    });
    // labels
    c.fillStyle = '#fff'; c.fillRect(0, this.axisH + 1, this.labelW, H);
    c.strokeStyle = '#e2e5ea'; c.beginPath(); c.moveTo(this.labelW + 0.5, 0); c.lineTo(this.labelW + 0.5, H); c.stroke();
    const cores = new Set(this.tracks.map((t) => t.core)).size;
    this.tracks.forEach((tr, i) => {
      const y = this.axisH + i * this.rowH + this.rowH / 2;
      c.fillStyle = tr.kind === 'dma' ? '#6b7483' : '#1d2430';
      c.fillText((cores > 1 ? `NC${tr.core} ` : '') + (tr.kind === 'dma' ? 'DMA ' : '') + tr.track, 12, y, this.labelW - 16);
    });
    c.fillStyle = '#6b7483'; c.fillText('time', 12, this.axisH / 2);
    // status and legend
    const d = this.data;
    let mode = '';
    if (d) {
      const modes = [...d.rows.values()].map((r) => r.mode);
      mode = modes.includes('bins') ? `buckets of ${NX.fmtNs(d.bucket)}` : 'raw events';
    }
    this.status.replaceChildren(
      NX.el('span', {}, `window ${NX.fmtNs(this.t0 - this.full[0])} – ${NX.fmtNs(this.t1 - this.full[0])} (${NX.fmtNs(span)})`),
      NX.el('span', { 'data-testid': 'lod' }, mode),
      NX.el('span', {}, this.lastMs ? `last fetch ${this.lastMs.toFixed(0)} ms` : ''),
      NX.el('span', {}, 'wheel/W/S zoom · drag/A/D pan · 0 reset · click for details'));
    const lg = [...seen.entries()].sort((a, b) => String(a[0]).localeCompare(String(b[0]))).slice(0, 30);
    this.legend.replaceChildren(...lg.map(([k, v]) => NX.el('span', { style: `--c:${v}` }, k)));
  }

  /* Pixel extent of entry j: the event itself, or for a bucket the bucket's span. */
  extent(s, j) {
    if (s.mode === 'bins') {
      const bk = this.data.bucket, k = Math.floor(s.start[j] / bk) * bk;
      return [this.x(k), this.x(k + bk)];
    }
    return [this.x(s.start[j]), this.x(s.end[j])];
  }

  /* The event under (x, y): the drawn rectangle, or the nearest within 3 px. */
  hit(x, y) {
    const i = this.rowOf(y);
    if (i < 0 || x < this.labelW) return null;
    const s = this.series(i);
    if (!s) return null;
    let best = -1, bestD = 4;
    for (let j = 0; j < s.start.length; j++) {
      const [x0, e1] = this.extent(s, j), x1 = Math.max(x0 + 1, e1);
      const d = x < x0 ? x0 - x : x > x1 ? x - x1 : 0;
      if (d < bestD || (d === 0 && bestD === 0 && s.end[j] - s.start[j] < s.end[best] - s.start[best])) { best = j; bestD = d; }
    }
    if (best < 0) return null;
    const tr = this.tracks[i];
    return { key: `${tr.kind}|${tr.core}|${tr.track}`, track: tr, table: s.table, core: tr.core,
      id: s.id[best], start: s.start[best], end: s.end[best], label: s.label[best],
      count: s.count ? s.count[best] : 1, busy: s.busy ? s.busy[best] : null, bins: s.mode === 'bins' };
  }

  showTip(ev, h) {
    const tip = document.getElementById('tooltip');
    if (!h) { tip.hidden = true; return; }
    tip.replaceChildren(...[NX.el('b', {}, h.label), NX.el('br'),
      `${h.track.kind === 'dma' ? 'DMA queue' : 'engine'} ${h.track.track} · id ${h.id}`, NX.el('br'),
      `start ${NX.fmtNs(h.start - this.full[0])} · duration ${NX.fmtNs(h.end - h.start)}`,
      h.bins ? NX.el('span', {}, NX.el('br'), `bucket: ${h.count} events, busy ${NX.fmtNs(h.busy)} (longest shown)`) : null].filter(Boolean));
    tip.hidden = false;
    tip.style.left = Math.min(ev.clientX + 14, window.innerWidth - 300) + 'px';
    tip.style.top = ev.clientY + 16 + 'px';
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
      const [x] = pos(ev);
      drag = { x, t0: this.t0, t1: this.t1, moved: false };
      cv.focus();
    });
    window.addEventListener('mousemove', (ev) => {
      const [x, y] = pos(ev);
      if (drag) {
        if (Math.abs(x - drag.x) > 3) { drag.moved = true; cv.classList.add('dragging'); }
        if (drag.moved) {
          const dt = (x - drag.x) / this.plotW() * (drag.t1 - drag.t0);
          this.setView(drag.t0 - dt, drag.t1 - dt);
        }
        return;
      }
      if (ev.target !== cv) return;
      this.hover = this.hit(x, y);
      this.showTip(ev, this.hover);
    });
    window.addEventListener('mouseup', (ev) => {
      if (!drag) return;
      const moved = drag.moved;
      drag = null; cv.classList.remove('dragging');
      if (moved || ev.target !== cv) return;
      const [x, y] = pos(ev);
      const h = this.hit(x, y);
      this.selected = h;
      this.draw();
      if (h) this.onSelect(h);
    });
    cv.addEventListener('mouseleave', () => this.showTip(null, null));
    cv.addEventListener('keydown', (ev) => {
      const k = ev.key.toLowerCase();
      const at = this.hover ? undefined : undefined;
      if (k === 'w') this.zoom(0.8, at);
      else if (k === 's') this.zoom(1.25, at);
      else if (k === 'a' || ev.key === 'ArrowLeft') this.pan(-0.15);
      else if (k === 'd' || ev.key === 'ArrowRight') this.pan(0.15);
      else if (k === '0') this.reset();
      else return;
      ev.preventDefault();
    });
  }
}
