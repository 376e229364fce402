/* timeline-deps.js: the timeline's dependencies (docs/ui.md): the selected event's
 * flows (Flow: instruction -> the DMA transfer it triggered, semaphore producer ->
 * waiter) drawn as arrows, an end beyond the view marked at the canvas's edge with the
 * event's name and how far it is; a click on a flow's far end (or on its line in the
 * details drawer) follows it: that event is selected and brought into view. And the
 * dependency chain (Trace, key T): GET .../timeline/chain walks upstream on the server
 * from the selected instruction or transfer through every event that waited, to the
 * first instruction that did not; the chain is outlined and linked on the timeline,
 * each wait drawn as a dashed line before its instruction (its engine idle, waiting),
 * and listed in the drawer. */
'use strict';

const TL_FLOW_COLORS = { SEMAPHORE: '#d9480f', DGE_TRIGGER: '#1c7ed6' };
const TL_CHAIN_COLOR = '#c026d3';

/* Why a chain ends (docs/api.md, .../timeline/chain), said in the drawer. */
const TL_CHAIN_END = {
  not_waiting: 'its engine did not wait for it: it issued as soon as the engine was free, so it is the work the chain waited for',
  no_edge: 'no dependency leads into it in Flow',
  limit: 'the walk stopped at its step limit',
  cycle: 'Flow leads back to an event already in the chain',
  missing: 'Flow names an event its table does not have',
  no_flow: 'the profile has no Flow table',
};

Object.assign(Timeline.prototype, {
  /* Where an end of a flow is drawn: its row (a collapsed group's header) at time t;
   * off is -1 or 1 when t lies left or right of the view. Null without a row. */
  flowEnd(table, core, track, t) {
    const i = this.rowIndex(table, core, track);
    if (i < 0) return null;
    const tr = this.tracks[i], x = this.x(t);
    return { x: Math.max(this.labelW, Math.min(this.W, x)), y: tr.y + tr.h / 2, off: x < this.labelW ? -1 : x > this.W ? 1 : 0 };
  },

  /* A curve from a to b with an arrowhead at b. */
  arrow(a, b, col, width) {
    const c = this.ctx;
    c.strokeStyle = col; c.fillStyle = col; c.lineWidth = width;
    c.beginPath(); c.moveTo(a.x, a.y);
    const mx = (a.x + b.x) / 2;
    c.bezierCurveTo(mx, a.y, mx, b.y, b.x, b.y); c.stroke();
    const ang = Math.atan2(b.y - a.y, Math.max(1, b.x - mx));
    c.beginPath(); c.moveTo(b.x, b.y);
    c.lineTo(b.x - 8 * Math.cos(ang - 0.4), b.y - 8 * Math.sin(ang - 0.4));
    c.lineTo(b.x - 8 * Math.cos(ang + 0.4), b.y - 8 * Math.sin(ang + 0.4));
    c.closePath(); c.fill();
    c.lineWidth = 1;
  },

  /* The mark of an end beyond the view: a tag at the edge, pointing out, with the
   * event's name and its distance from the view. */
  offMark(end, t, label, col) {
    const c = this.ctx, dist = end.off < 0 ? this.t0 - t : t - this.t1;
    const text = end.off < 0 ? `◂ ${label} · ${NX.fmtNs(dist)}` : `${label} · ${NX.fmtNs(dist)} ▸`;
    c.font = TL_FONT_SMALL;
    const w = Math.min(180, c.measureText(text).width + 8), x = end.off < 0 ? this.labelW + 1 : this.W - w - 1;
    c.fillStyle = col; c.globalAlpha = 0.92;
    c.fillRect(x, end.y - 7, w, 14);
    c.globalAlpha = 1; c.fillStyle = '#ffffff';
    c.fillText(this.fit(text, w - 6), x + 4, end.y + 0.5);
    c.font = TL_FONT;
    return { x: x + w / 2, y: end.y, w };
  },

  /* The selected event's flows: upstream end -> downstream start; the far ends are
   * the targets a click follows. */
  drawFlows() {
    this.flowTargets = [];
    const sel = this.selected;
    for (const f of this.flows) {
      const a = this.flowEnd(f.from_table, f.from_core, f.from_track, f.from_end);
      const b = this.flowEnd(f.to_table, f.to_core, f.to_track, f.to_start);
      if (!a || !b) continue;
      const col = TL_FLOW_COLORS[f.type] || '#1c7ed6';
      this.arrow(a, b, col, 1.5);
      const up = sel && sel.table === f.from_table && String(sel.id) === String(f.from_id);
      const far = up ? b : a, t = up ? f.to_start : f.from_end;
      const ev = up ? { table: f.to_table, id: f.to_id, core: f.to_core, track: f.to_track, start: f.to_start, end: f.to_end, label: f.to_label }
        : { table: f.from_table, id: f.from_id, core: f.from_core, track: f.from_track, start: f.from_start, end: f.from_end, label: f.from_label };
      const spot = far.off ? this.offMark(far, t, String(ev.label), col) : { x: far.x, y: far.y, w: 12 };
      this.flowTargets.push({ x: spot.x, y: spot.y, r: Math.max(10, spot.w / 2), ev });
    }
  },

  /* Follows a flow or a chain step whose mark is at (x, y); false when none is. */
  followAt(x, y) {
    const all = (this.flowTargets || []).concat(this.chainTargets || []);
    const t = all.find((p) => Math.abs(p.x - x) <= p.r && Math.abs(p.y - y) <= 8);
    if (!t) return false;
    this.follow(t.ev);
    return true;
  },

  /* Selects the event ev ({table, id, core, track, start, end, label}, relative times)
   * and brings it into view. */
  follow(ev) {
    const i = this.rowIndex(ev.table, ev.core, ev.track), tr = i >= 0 ? this.tracks[i] : null;
    this.reveal(ev.start, ev.end);
    if (tr) this.select({ key: tr.key, track: tr, table: ev.table, core: ev.core, id: ev.id, start: ev.start,
      end: ev.end, label: ev.label, count: 1, busy: null, bins: false });
  },

  /* [s, e] in view: the view moved to centre it when it fits, else zoomed to it. */
  reveal(s, e) {
    const span = this.t1 - this.t0;
    if (e - s > span * 0.8) return this.focus(s, e);
    if (s < this.t0 || e > this.t1) this.setView((s + e) / 2 - span / 2, (s + e) / 2 + span / 2);
  },

  /* The dependency chain of h (the selection by default), from the server; the view
   * takes in the whole chain. */
  async trace(h) {
    h = h || this.selected;
    if (!h || (h.table !== 'Instruction' && h.table !== 'DmaPacketAggregated')) return null;
    const r = await NX.get(`${this.base()}/timeline/chain?table=${h.table}&id=${NX.enc(String(h.id))}`);
    const steps = r.steps.map((x) => Object.assign(x, { start: this.rel(x.start), end: this.rel(x.end),
      wait: x.wait === null ? null : Number(x.wait), gap: x.gap === null ? null : Number(x.gap) }));
    this.chain = { steps, end: r.end, keys: new Set(steps.map((x) => x.table + '|' + x.id)), of: h };
    this.canvas.dataset.chain = steps.length;
    const lo = Math.min(...steps.map((x) => x.start - (x.wait > 0 ? x.wait : 0))), hi = Math.max(...steps.map((x) => x.end));
    if (lo < this.t0 || hi > this.t1) { const m = Math.max(20, (hi - lo) * 0.08); this.setView(lo - m, hi + m); } else this.draw();
    this.renderDeps();
    return this.chain;
  },
  clearChain() {
    this.chain = null; this.chainTargets = [];
    delete this.canvas.dataset.chain;
    this.draw();
    this.renderDeps();
  },

  /* The chain on the timeline: each step outlined, its wait dashed before it, arrows
   * from each step to the one it released. */
  drawChain() {
    this.chainTargets = [];
    const ch = this.chain;
    if (!ch) return;
    const c = this.ctx, ends = [];
    ch.steps.forEach((st, k) => {
      const a = this.flowEnd(st.table, st.core, st.track, st.start), b = this.flowEnd(st.table, st.core, st.track, st.end);
      ends.push(a && b ? { a, b } : null);
      if (!a || !b) return;
      const i = this.rowIndex(st.table, st.core, st.track), tr = this.tracks[i];
      c.strokeStyle = TL_CHAIN_COLOR; c.lineWidth = 2;
      if (!a.off || !b.off || a.off !== b.off) c.strokeRect(a.x - 1, tr.y + 1, Math.max(2, b.x - a.x) + 2, tr.h - 2);
      if (st.wait > 0) { /* the engine sat idle waiting */
        const w0 = this.x(st.start - st.wait);
        c.setLineDash([4, 3]); c.beginPath(); c.moveTo(Math.max(this.labelW, w0), a.y); c.lineTo(a.x, a.y); c.stroke(); c.setLineDash([]);
      }
      c.lineWidth = 1;
      /* a step's number, and the target a click follows */
      c.fillStyle = TL_CHAIN_COLOR; c.font = TL_FONT_SMALL;
      const nx = Math.min(this.W - 8, Math.max(this.labelW + 8, a.x));
      c.beginPath(); c.arc(nx, tr.y + 2, 7, 0, 2 * Math.PI); c.fill();
      c.fillStyle = '#ffffff'; c.fillText(String(k), nx - (k > 9 ? 6 : 3), tr.y + 2.5);
      c.font = TL_FONT;
      this.chainTargets.push({ x: nx, y: tr.y + 2, r: 8, ev: st });
    });
    for (let k = 1; k < ch.steps.length; k++) {
      const up = ends[k], down = ends[k - 1];
      if (up && down) this.arrow(up.b, down.a, TL_CHAIN_COLOR, 2);
    }
  },

  /* The drawer's Dependencies section for the selection h: kept by the timeline, which
   * fills it when the flows or a chain arrive. */
  depsSection(h) {
    this.deps = NX.el('div', { class: 'deps', 'data-testid': 'details-deps' });
    this.depsOf = h;
    this.renderDeps(true);
    return this.deps;
  },

  /* Fills the section; fresh: it is not on the page yet (the drawer is being built). */
  renderDeps(fresh) {
    const box = this.deps, h = this.depsOf;
    if (!box || (!fresh && !box.isConnected) || !h || h.counter) return;
    const traceable = h.table === 'Instruction' || h.table === 'DmaPacketAggregated';
    if (!traceable) { box.replaceChildren(); return; }
    const ev = (x) => `${x.label} · ${x.track}${x.core !== null && x.core !== undefined && this.ncores > 1 ? ` (NC${x.core})` : ''}`;
    const go = (x, text, testid) => NX.el('a', { href: '#', class: 'mono', 'data-testid': testid,
      onclick: (e) => { e.preventDefault(); this.follow(x); } }, text);
    const mine = this.selected === h ? this.flows : [];
    const flows = mine.map((f) => {
      const up = String(f.from_id) === String(h.id) && f.from_table === h.table;
      const o = up ? { table: f.to_table, id: f.to_id, core: f.to_core, track: f.to_track, start: f.to_start, end: f.to_end, label: f.to_label }
        : { table: f.from_table, id: f.from_id, core: f.from_core, track: f.from_track, start: f.from_start, end: f.from_end, label: f.from_label };
      return NX.el('li', {}, NX.el('span', { class: 'chip', style: `--c:${TL_FLOW_COLORS[f.type] || '#1c7ed6'}` }, f.type), ' ',
        up ? '→ ' : '← ', go(o, ev(o), 'flow-link'), NX.el('span', { class: 'muted' },
          ` ${o.table === 'Instruction' ? 'instruction' : 'transfer'} ${o.id}` + (f.gap !== null && f.gap !== undefined ? ` · gap ${NX.fmtNsExact(f.gap)}` : '')));
    });
    const ch = this.chain && this.chain.of && this.chain.of.table === h.table && String(this.chain.of.id) === String(h.id) ? this.chain : null;
    const kids = [NX.el('h3', {}, 'Dependencies'),
      flows.length ? NX.el('ul', { class: 'flow-list', 'data-testid': 'flow-list' }, flows)
        : NX.el('p', { class: 'muted' }, this.flowsFor === h ? 'No Flow edge leads into or out of it.' : 'Loading its flows…'),
      NX.el('div', { class: 'toolbar' },
        NX.el('button', { class: 'secondary', 'data-testid': 'details-trace', title: 'Walk upstream along the semaphore and DMA-trigger edges to the first instruction that did not wait (T)',
          onclick: () => this.trace(h).catch((e) => { box.append(NX.el('div', { class: 'error' }, String(e.message || e))); }) }, 'Trace dependency chain'),
        ch ? NX.el('button', { class: 'secondary', onclick: () => this.clearChain() }, 'Clear chain') : null)];
    if (ch) {
      const last = ch.steps[ch.steps.length - 1];
      const waited = ch.steps.filter((x) => x.wait > 0).reduce((a, x) => a + x.wait, 0);
      kids.push(NX.el('p', { class: 'muted', 'data-testid': 'chain-summary' },
        `${ch.steps.length} step${ch.steps.length === 1 ? '' : 's'}; engines sat idle waiting ${NX.fmtNsExact(waited)} along it. ` +
        `It ends at ${last.label} (${last.table === 'Instruction' ? 'instruction' : 'transfer'} ${last.id}): ${TL_CHAIN_END[ch.end] || ch.end}.`),
      NX.el('table', { class: 'grid chain', 'data-testid': 'chain-list' },
        NX.el('thead', {}, NX.el('tr', {}, ['#', 'event', 'start', 'waited', 'released by'].map((x, i) => NX.el('th', { class: i > 1 ? 'num' : '' }, x)))),
        NX.el('tbody', {}, ch.steps.map((x, k) => {
          const up = ch.steps[k + 1];
          return NX.el('tr', { 'data-step': k }, NX.el('td', {}, String(k)), NX.el('td', {}, go(x, ev(x), 'chain-link')),
            NX.el('td', { class: 'num' }, NX.fmtNsExact(x.start)), NX.el('td', { class: 'num' }, x.wait > 0 ? NX.fmtNsExact(x.wait) : x.wait === 0 ? '0' : '–'),
            NX.el('td', { class: 'num' }, up ? `${up.edge}${up.gap !== null ? ` (gap ${NX.fmtNs(up.gap)})` : ''}` : '–'));
        }))));
    }
    box.replaceChildren(...kids.filter(Boolean));
  },
});
