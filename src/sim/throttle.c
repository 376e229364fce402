/* SPDX-License-Identifier: MIT
 * throttle.c: Tensor-engine power throttling (dI/dt) on NeuronCore-v3.
 *
 * After an idle stretch the Tensor engine starts at ~50% of its rate and ramps to full
 * speed over ~3 us (§6.2). We re-arm the ramp when the engine was idle for at least
 * throttle_idle_ps (an idle half of a 3 us window drops utilisation below 50%) and
 * split the ramp into steps with limits k/16 = 8, 10, 12, 14. A MATMUL or LDWEIGHTS
 * that starts inside step i runs 16/k times longer. Each step that was in force becomes
 * one THROTTLE record when its window closes. */
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

int nx__sim_throttle(struct sim *s, const struct nx_inst *in, uint64_t start_ps, uint64_t *dur_ps)
{
	const struct nx_machine *m = s->m;
	struct sim_throttle *t = &s->thr;
	uint64_t step_ps = m->throttle_ramp_ps / m->throttle_steps, end;
	int rc;

	if (!m->throttle || (in->opcode != NX_OP_MATMUL && in->opcode != NX_OP_LDWEIGHTS))
		return 0;
	if (!t->te_seen || start_ps >= t->te_busy_end_ps + m->throttle_idle_ps) {
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
