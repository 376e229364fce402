/* SPDX-License-Identifier: MIT
 * throttle.c: Tensor-engine power throttling (dI/dt) on NeuronCore-v3.
 *
 * After an idle stretch the Tensor engine starts at ~50% of its rate and ramps to full
 * speed over ~3 us; utilisation below 50% in any ~3 us window re-arms it (§6.2). We
 * re-arm the ramp when the engine was idle for at least throttle_idle_ps, or when the
 * PE array's utilisation over the 3 us before an instruction was below one half, and
 * split the ramp into steps with limits k/16 = 8, 10, 12, 14. Utilisation is the
 * array's MAC work, as the profiler counts hardware FLOPs (2 x active rows x active
 * columns per element): a MATMUL with K moving partitions under M stationary columns
 * uses K x M / (128 x 128) of the array for its unthrottled duration; LDWEIGHTS does no
 * MACs. So a data-starved engine working in short bursts, and one running quarter-array
 * tiles back to back, both re-arm it. A MATMUL or LDWEIGHTS that starts inside step i
 * runs 16/k times longer. Each step that was in force becomes one THROTTLE record when
 * its window closes. */
#include "common/compat.h"
#include "sim/sim_int.h"

static unsigned step_k(const struct nx_machine *m, unsigned step)
{
	return 8 + 8 * step / m->throttle_steps;
}

/* Emits the records of the current window, cut at close_ps. */
static int close_window(struct sim *s, uint64_t close_ps)
{
	const struct nx_machine *m = s->m;
	uint64_t step_ps = m->throttle_ramp_ps / m->throttle_steps;

	if (!s->thr.armed)
		return 0;
	s->thr.armed = false;
	for (unsigned i = 0; i < m->throttle_steps; i++) {
		uint64_t ts = s->thr.arm_ps + i * step_ps, dur = step_ps;
		struct nx_rec rec = { .kind = NX_REC_THROTTLE };
		int rc;

		if (ts >= close_ps)
			break;
		if (ts + dur > close_ps)
			dur = close_ps - ts;
		rec.u.throttle.ts = nx__sim_ticks(ts);
		rec.u.throttle.duration = nx__sim_ticks(ts + dur) - nx__sim_ticks(ts);
		rec.u.throttle.k = (uint16_t)step_k(m, i);
		rec.u.throttle.n = 16;
		rec.u.throttle.type = NX_THROTTLE_ACTIVITY_0;
		s->st->throttles++;
		if ((rc = nx__sim_emit(s, &rec)))
			return rc;
	}
	return 0;
}

/* Drops what lies before from_ps; returns the work in the ring from from_ps on. */
static uint64_t window_work(struct sim_throttle *t, uint64_t from_ps)
{
	while (t->iv_n && t->iv_e[t->iv_head] <= from_ps) {
		t->iv_sum -= t->iv_e[t->iv_head] - t->iv_s[t->iv_head];
		t->iv_head = (t->iv_head + 1) % SIM_THR_RING;
		t->iv_n--;
	}
	if (t->iv_n && t->iv_s[t->iv_head] < from_ps)
		return t->iv_sum - (from_ps - t->iv_s[t->iv_head]);
	return t->iv_sum;
}

/* Adds [s, e) to the ring; Tensor instructions start in order, so only the newest
 * interval can overlap it. */
static void window_add(struct sim_throttle *t, uint64_t s, uint64_t e)
{
	unsigned last = (t->iv_head + t->iv_n + SIM_THR_RING - 1) % SIM_THR_RING, i;

	if (t->iv_n && s <= t->iv_e[last]) {
		if (e > t->iv_e[last]) {
			t->iv_sum += e - t->iv_e[last];
			t->iv_e[last] = e;
		}
		return;
	}
	if (t->iv_n == SIM_THR_RING) {  /* full: forget the oldest */
		t->iv_sum -= t->iv_e[t->iv_head] - t->iv_s[t->iv_head];
		t->iv_head = (t->iv_head + 1) % SIM_THR_RING;
		t->iv_n--;
	}
	i = (t->iv_head + t->iv_n) % SIM_THR_RING;
	t->iv_s[i] = s;
	t->iv_e[i] = e;
	t->iv_sum += e - s;
	t->iv_n++;
}

/* Utilisation below 50% over the ramp-length window before start_ps, counted only
 * once the window lies after the last arming. */
static bool underused(struct sim_throttle *t, const struct nx_machine *m, uint64_t start_ps)
{
	uint64_t w = m->throttle_ramp_ps;

	if (start_ps < t->first_ps + w || (t->armed && start_ps < t->arm_ps + w))
		return false;
	return 2 * window_work(t, start_ps - w) < w;
}

/* The unthrottled duration dur_ps of a MATMUL weighted by the share of the PE array
 * it uses: K moving partitions by M columns of the last LDWEIGHTS (all of them when no
 * LDWEIGHTS came first). */
static uint64_t array_work(const struct sim *s, const struct nx_inst *in, uint64_t dur_ps)
{
	const struct nx_hw *hw = s->m->hw;
	uint64_t k = nx_ap_partitions(&in->src0), cols = s->eng[NX_ENGINE_TENSOR].lw_cols;

	if (!cols || cols > hw->te_cols)
		cols = hw->te_cols;
	if (k > hw->te_rows)
		k = hw->te_rows;
	return dur_ps * k * cols / ((uint64_t)hw->te_rows * hw->te_cols);
}

int nx__sim_throttle(struct sim *s, const struct nx_inst *in, uint64_t start_ps, uint64_t *dur_ps)
{
	const struct nx_machine *m = s->m;
	struct sim_throttle *t = &s->thr;
	uint64_t step_ps = m->throttle_ramp_ps / m->throttle_steps, end, work = *dur_ps;
	int rc;

	if (!m->throttle || (in->opcode != NX_OP_MATMUL && in->opcode != NX_OP_LDWEIGHTS))
		return 0;
	if (!t->te_seen)
		t->first_ps = start_ps;
	if (!t->te_seen || start_ps >= t->te_busy_end_ps + m->throttle_idle_ps ||
	    underused(t, m, start_ps)) {
		if ((rc = close_window(s, start_ps)))
			return rc;
		t->armed = true;
		t->arm_ps = start_ps;
	}
	t->te_seen = true;
	if (t->armed && start_ps < t->arm_ps + m->throttle_ramp_ps) {
		unsigned k = step_k(m, (unsigned)((start_ps - t->arm_ps) / step_ps));

		*dur_ps = (*dur_ps * 16 + k - 1) / k;
	}
	end = start_ps + *dur_ps;
	if (in->opcode == NX_OP_MATMUL)
		window_add(t, start_ps, start_ps + array_work(s, in, work));
	if (end > t->te_busy_end_ps)
		t->te_busy_end_ps = end;
	return 0;
}

int nx__sim_throttle_finish(struct sim *s)
{
	uint64_t close = s->thr.arm_ps + s->m->throttle_ramp_ps;

	if (close > s->end_ps)
		close = s->end_ps;
	return close_window(s, close);
}
