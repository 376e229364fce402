/* SPDX-License-Identifier: MIT
 * semaphores.c: the 256 semaphores of a NeuronCore. Instructions wait on one before
 * they issue (>= or ==) and update one when they complete; DMA engines add 1 each at
 * the end of a transfer. Every change is a SEM record and wakes the waiting engines
 * (the wait check itself, nx__sim_sem_ready, is inline in sim_int.h). */
#include "common/compat.h"
#include "sim/sim_int.h"

int nx__sim_sem_update(struct sim *s, unsigned sem, int op, int32_t value, int source)
{
	int32_t old = s->sem[sem], v = old;
	int rc;

	switch (op) {
	case NX_SEM_INC:
		v = old + 1;
		break;
	case NX_SEM_DEC:
		v = old - 1;
		break;
	case NX_SEM_ADD:
		v = old + value;
		break;
	case NX_SEM_SUB:
		v = old - value;
		break;
	case NX_SEM_SET:
		v = value;
		break;
	default:
		return 0;
	}
	s->sem[sem] = v;
	s->sem_src[sem] = (uint8_t)source;
	s->st->sem_updates++;
	if (s->recording) {
		struct nx_rec rec;

		rec.kind = NX_REC_SEM;
		rec.u.sem = (struct nx_rec_sem){
			.ts = nx__sim_ticks(s->now),
			.value = v,
			.sem = (uint16_t)sem,
			.source = (uint8_t)source,
			.op = (uint8_t)op,
			.timing = NX_SEMT_COMPLETE,
			.double_set = op == NX_SEM_SET && old == v,
		};
		if ((rc = nx__sim_emit(s, &rec)))
			return rc;
	}
	return nx__sim_wake(s, sem);
}
