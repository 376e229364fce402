/* timeline-input.js: the timeline's mouse, keys and tooltip (docs/ui.md, the table of
 * inputs). The keys work wherever the page's focus is, except while typing in a field
 * ("/" focuses the search box from anywhere, Esc leaves it). The tooltip follows what is
 * under the pointer after every redraw, so a zoom by key or wheel never leaves it
 * describing an event that moved away, and it stays inside the window. */
'use strict';

/* Whether a key event comes from a place where it types text. */
function typing(ev) {
  const t = ev.target;
  return t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName) && t.type !== 'checkbox');
}

Object.assign(Timeline.prototype, {
  /* The event under (x, y): the drawn rectangle, or the nearest within 3 px (on a
   * collapsed group's header, of all its rows). */
  hit(x, y) {
    if (x < this.labelW) return null;
    let best = null, bestD = 4;
    for (const i of this.tracksAt(y)) {
      const tr = this.tracks[i];
      if (tr.kind === 'counter') return this.counterAt(tr, x);
      const s = this.series(i);
      if (!s) continue;
      for (let j = 0; j < s.start.length; j++) {
        const [x0, e1] = this.extent(s, j), x1 = Math.max(x0 + 1, e1);
        const d = x < x0 ? x0 - x : x > x1 ? x - x1 : 0;
        if (d < bestD || (d === 0 && bestD === 0 && s.end[j] - s.start[j] < best.s.end[best.j] - best.s.start[best.j])) {
          best = { tr, s, j }; bestD = d;
        }
      }
    }
    if (!best) return null;
    const { tr, s, j } = best;
    return { key: tr.key, track: tr, table: s.table, core: tr.core,
      id: s.id[j], start: s.start[j], end: s.end[j], label: s.label[j],
      count: s.count ? s.count[j] : 1, busy: s.busy ? s.busy[j] : null, bins: s.mode === 'bins' && s.count[j] > 1 };
  },

  counterAt(tr, x) {
    const s = this.counters && this.counters.rows.get(tr.key);
    if (!s || !s.ts) return null;
    const t = this.t(x), bk = this.counters.bucket;
    let v = s.before, lo = null, hi = null, at = null;
    for (let j = 0; j < s.ts.length && s.ts[j] <= t; j++) {
      if (t < s.ts[j] + bk) { lo = s.lo[j]; hi = s.hi[j]; }
      v = s.last[j]; at = s.ts[j];
    }
    return { counter: true, track: tr, value: v, lo, hi, at: Math.round(t) };
  },

  /* The tooltip of h at the pointer (clientX, clientY), kept inside the window: to the
   * left of the pointer near the right edge, above it near the bottom. */
  showTip(pt, h) {
    const tip = document.getElementById('tooltip');
    if (!h || !pt) { tip.hidden = true; return; }
    let kids;
    if (h.counter) {
      const f = (v) => (v === null || v === undefined ? '–' : counterValue(h.track.track, v));
      kids = [NX.el('b', {}, h.track.track), NX.el('br'), `value ${f(h.value)} at ${NX.fmtNsExact(h.at)}`,
        h.hi !== null ? NX.el('span', {}, NX.el('br'), `in this bucket: ${f(h.lo)} – ${f(h.hi)}`) : null];
    } else {
      const what = h.track.kind === 'dma' ? 'DMA queue' : h.track.kind === 'framework' ? 'stream' : 'engine';
      kids = [NX.el('b', {}, String(h.label)), NX.el('br'),
        `${what} ${h.track.stream}${h.track.lane ? ` · depth ${h.track.lane}` : ''} · id ${h.id}`, NX.el('br'),
        `start ${NX.fmtNsExact(h.start)} · duration ${NX.fmtNsExact(h.end - h.start)}`,
        h.bins ? NX.el('span', {}, NX.el('br'), `bucket: ${h.count} events, busy ${NX.fmtNsExact(h.busy)} (longest shown)`) : null,
        this.smallAt(h)];
    }
    tip.replaceChildren(...kids.filter(Boolean));
    tip.hidden = false;
    const r = tip.getBoundingClientRect(), W = window.innerWidth, H = window.innerHeight;
    let left = pt.clientX + 14, top = pt.clientY + 16;
    if (left + r.width > W - 6) left = Math.max(6, pt.clientX - 14 - r.width);
    if (top + r.height > H - 6) top = Math.max(6, pt.clientY - 12 - r.height);
    tip.style.left = left + 'px';
    tip.style.top = top + 'px';
  },

  /* The small-DMA band's word on a hovered transfer: the small transfers around it. */
  smallAt(h) {
    const sd = h.track.kind === 'dma' && this.dma === 'transfers' && this.smallDma && this.smallDma.rows.get(h.track.key);
    const b = sd && sd.find((x) => h.start >= x.start && h.start < x.start + this.smallDma.bucket);
    return b ? NX.el('span', { class: 'tip-warn' }, NX.el('br'),
      `${b.small} of ${b.n} transfers here move < ${this.smallDma.limit} B per partition`) : null;
  },

  /* After a redraw: the tooltip describes what is now under the pointer. */
  afterDraw() {
    if (!this.mouse || this.dragging) return;
    const r = this.canvas.getBoundingClientRect();
    const x = this.mouse.clientX - r.left, y = this.mouse.clientY - r.top;
    if (x < 0 || y < 0 || x > r.width || y > r.height) return;
    this.mouseT = x > this.labelW ? this.t(x) : undefined;
    this.hover = this.hit(x, y);
    this.showTip(this.mouse, this.hover);
  },

  /* What a key does; false when it is not the timeline's. */
  keyAction(ev) {
    const k = ev.key.toLowerCase(), at = this.mouse ? this.mouseT : undefined;
    if (ev.key === '/') this.searchInput.focus();
    else if (k === 'w') this.zoom(0.8, at);
    else if (k === 's') this.zoom(1.25, at);
    else if (k === 'a' || ev.key === 'ArrowLeft') this.pan(-0.15);
    else if (k === 'd' || ev.key === 'ArrowRight') this.pan(0.15);
    else if (k === '0') this.reset();
    else if (k === 'f' && this.selected) this.focus(this.selected.start, this.selected.end);
    else if (k === 'n') this.nextMatch(ev.shiftKey ? -1 : 1);
    else if (k === 't' && this.selected) this.trace().catch((e) => this.fail(e));
    else if (k === 'm') this.addMarker(at !== undefined ? at : this.selected ? this.selected.start : (this.t0 + this.t1) / 2);
    else if (ev.key === 'Escape') {
      this.box = null; this.chain = null; this.opsWindow = null; this.select(null); this.panel.replaceChildren(); if (this.ops) this.refreshOps();
    }
    else return false;
    return true;
  },

  bindEvents() {
    const cv = this.canvas;
    let drag = null;
    const pos = (ev) => { const r = cv.getBoundingClientRect(); return [ev.clientX - r.left, ev.clientY - r.top]; };
    cv.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      const [x] = pos(ev);
      this.mouse = { clientX: ev.clientX, clientY: ev.clientY };
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
      cv.focus({ preventScroll: true }); /* a tall canvas must not jump under the pointer */
      ev.preventDefault();
    });
    const onMove = (ev) => {
      const [x, y] = pos(ev);
      const inside = ev.target === cv;
      this.mouse = inside || drag ? { clientX: ev.clientX, clientY: ev.clientY } : null;
      if (inside && x > this.labelW) this.mouseT = this.t(x);
      if (drag) {
        if (Math.abs(x - drag.x) > 3 || Math.abs(y - drag.y) > 3) {
          drag.moved = true;
          if (!drag.box) { cv.classList.add('dragging'); this.dragging = true; this.showTip(null, null); }
        }
        if (drag.box) {
          this.box.x1 = Math.max(this.labelW, Math.min(this.W, x)); this.box.y1 = Math.max(this.axisH, Math.min(this.H, y));
          this.redraw();
        } else if (drag.moved) {
          const dt = (x - drag.x) / this.plotW() * (drag.t1 - drag.t0);
          this.setView(drag.t0 - dt, drag.t1 - dt);
        }
        return;
      }
      if (!inside) { this.mouseT = undefined; return; }
      this.hover = this.hit(x, y);
      this.showTip(this.mouse, this.hover);
    };
    const onUp = (ev) => {
      if (!drag) return;
      const d = drag;
      drag = null; this.dragging = false; cv.classList.remove('dragging');
      if (d.box) {
        const b = this.box;
        if (!d.moved) { this.box = null; this.draw(); return; }
        const rows = this.tracksIn(Math.min(b.y0, b.y1) + 1, Math.max(b.y0, b.y1) - 1);
        this.aggregate(this.t(Math.min(b.x0, b.x1)), this.t(Math.max(b.x0, b.x1)), rows).catch((e) => this.fail(e));
        return;
      }
      if (d.moved || ev.target !== cv) return;
      const [x, y] = pos(ev);
      if (this.headerClick(x, y) || this.followAt(x, y)) return;
      const h = this.hit(x, y);
      this.select(h);
    };
    /* keys for the page, not only for the focused canvas; the page's listeners go with
     * the canvas (the first event after it left the page removes them) */
    const onKey = (ev) => {
      if (!cv.isConnected) return off();
      if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
      if (typing(ev)) {
        if (ev.key === 'Escape' && ev.target === this.searchInput) { this.searchInput.blur(); cv.focus({ preventScroll: true }); ev.preventDefault(); }
        return;
      }
      if (this.embedded && !this.mouse && document.activeElement !== cv) return;
      if (this.keyAction(ev)) ev.preventDefault();
    };
    const move = (ev) => (cv.isConnected ? onMove(ev) : off());
    const up = (ev) => (cv.isConnected ? onUp(ev) : off());
    const off = () => {
      window.removeEventListener('mousemove', move); window.removeEventListener('mouseup', up);
      document.removeEventListener('keydown', onKey);
    };
    window.addEventListener('mousemove', move);
    window.addEventListener('mouseup', up);
    document.addEventListener('keydown', onKey);
    cv.addEventListener('mouseleave', () => { if (!drag) { this.showTip(null, null); this.mouse = null; this.mouseT = undefined; } });
  },
});
