/* SPDX-License-Identifier: MIT
 * validate.c: checks a NEFF's program before the simulator runs it, so bad input ends
 * in a clear error naming the instruction and its source line instead of a crash:
 * opcodes unknown or not valid on their engine, operands outside SBUF/PSUM, tiles
 * larger than the Tensor engine takes, DMA blocks and semaphores out of range. */
#include "common/compat.h"
#include "common/xalloc.h"
#include "sim/cost.h"
#include "sim/machine.h"
#include "sim/sim.h"

#include <stdio.h>
#include <stdlib.h>

void nx_sim_describe_inst(const struct nx_neff *neff, int engine, size_t index, char *buf,
			  size_t len)
{
	const struct nx_inst *in = &neff->inst[engine][index];
	const char *op = in->opcode < NX_OP_COUNT ? nx_opcode_name(in->opcode) : NULL;
	char opbuf[32];
	int n;

	if (!op) {
		snprintf(opbuf, sizeof(opbuf), "opcode %u", (unsigned)in->opcode);
		op = opbuf;
	}
	n = snprintf(buf, len, "%s instruction %zu (%s)", nx_engine_name(engine), index, op);
	if (n < 0 || (size_t)n >= len)
		return;
	if (in->debug_id != NX_NONE32 && in->debug_id < neff->dbg.ninsts) {
		const struct nx_dbg_inst *d = &neff->dbg.insts[in->debug_id];

		if (d->file)
			snprintf(buf + n, len - (size_t)n, " at %s:%" PRId64, d->file, d->line);
	}
}

static int inst_err(const struct nx_neff *neff, int e, size_t i, struct nx_err *err,
		    const char *what)
{
	char desc[512];

	nx_sim_describe_inst(neff, e, i, desc, sizeof(desc));
	return nx_errf(err, NX_ESIM, "%s: %s", desc, what);
}

static bool allowed(int engine, int op)
{
	switch (op) {
	case NX_OP_NOP:
	case NX_OP_EVENT_SEMAPHORE:
	case NX_OP_DMA_TRIGGER:
	case NX_OP_NOTIFY:
		return true;
	case NX_OP_LDWEIGHTS:
	case NX_OP_MATMUL:
		return engine == NX_ENGINE_TENSOR;
	case NX_OP_ACTIVATE:
		return engine == NX_ENGINE_SCALAR;
	case NX_OP_TENSOR_TENSOR:
	case NX_OP_TENSOR_REDUCE:
		return engine == NX_ENGINE_VECTOR || engine == NX_ENGINE_GPSIMD;
	case NX_OP_IOTA:
		return engine == NX_ENGINE_GPSIMD;
	case NX_OP_TENSOR_SCALAR:
	case NX_OP_TENSOR_COPY:
	case NX_OP_MEMSET:
		return engine == NX_ENGINE_VECTOR || engine == NX_ENGINE_SCALAR ||
		       engine == NX_ENGINE_GPSIMD;
	default:
		return false;
	}
}

/* Byte range [lo, hi) touched inside each partition by an access pattern. */
static void ap_range(const struct nx_ap *ap, int64_t *lo, int64_t *hi)
{
	int64_t es = nx_dtype_size(ap->dtype), a = 0, b = 0;
	uint32_t s1 = ap->size[1] ? ap->size[1] : 1;
	int64_t d0 = (int64_t)(ap->size[0] ? ap->size[0] - 1 : 0) * ap->step[0];
	int64_t d1 = (int64_t)(s1 - 1) * ap->step[1];

	a += d0 < 0 ? d0 : 0;
	b += d0 > 0 ? d0 : 0;
	a += d1 < 0 ? d1 : 0;
	b += d1 > 0 ? d1 : 0;
	*lo = (int64_t)ap->offset + a * es;
	*hi = (int64_t)ap->offset + (b + 1) * es;
}

static int check_ap(const struct nx_neff *neff, const struct nx_machine *m, int e, size_t i,
		    const char *name, const struct nx_ap *ap, struct nx_err *err)
{
	char what[256];
	int64_t lo, hi, cap;
	const char *mem;

	if (ap->mem == NX_MEM_NONE)
		return 0;
	if (ap->mem != NX_MEM_SBUF && ap->mem != NX_MEM_PSUM) {
		snprintf(what, sizeof(what), "%s is in memory %u, not SBUF or PSUM", name,
			 (unsigned)ap->mem);
		return inst_err(neff, e, i, err, what);
	}
	if (ap->dtype >= NX_DT_COUNT) {
		snprintf(what, sizeof(what), "%s has unknown dtype %u", name, (unsigned)ap->dtype);
		return inst_err(neff, e, i, err, what);
	}
	mem = ap->mem == NX_MEM_SBUF ? "SBUF" : "PSUM";
	cap = (int64_t)(ap->mem == NX_MEM_SBUF ? m->hw->sbuf_partition_bytes
					       : m->hw->psum_partition_bytes);
	if ((unsigned)ap->start_partition + nx_ap_partitions(ap) > NX_NUM_PARTITIONS) {
		snprintf(what, sizeof(what), "%s partitions %u..%u are outside %s (%u partitions)",
			 name, ap->start_partition, ap->start_partition + nx_ap_partitions(ap) - 1,
			 mem, NX_NUM_PARTITIONS);
		return inst_err(neff, e, i, err, what);
	}
	ap_range(ap, &lo, &hi);
	if (lo < 0 || hi > cap) {
		snprintf(what, sizeof(what),
			 "%s bytes %" PRId64 "..%" PRId64 " of each partition are outside %s "
			 "(%" PRId64 " bytes per partition on %s)",
			 name, lo, hi - 1, mem, cap, m->hw->target);
		return inst_err(neff, e, i, err, what);
	}
	return 0;
}

static int check_block(const struct nx_neff *neff, const struct nx_machine *m, int e, size_t i,
		       const struct nx_dma_block *b, struct nx_err *err)
{
	char what[512];

	if (b->queue < 0 || (size_t)b->queue >= neff->nqueues) {
		snprintf(what, sizeof(what), "DMA block %u names queue %d, which does not exist",
			 b->id, b->queue);
		return inst_err(neff, e, i, err, what);
	}
	if (b->semaphore >= (int)NX_NUM_SEMAPHORES) {
		snprintf(what, sizeof(what), "DMA block %u signals semaphore %d (of %u)", b->id,
			 b->semaphore, NX_NUM_SEMAPHORES);
		return inst_err(neff, e, i, err, what);
	}
	for (size_t k = 0; k < b->ndesc; k++) {
		const struct nx_dma_desc *d = &b->desc[k];
		int locs[2] = { d->from_loc, d->to_loc };
		int vars[2] = { d->from_var, d->to_var };
		unsigned sp[2] = { d->from_start_partition, d->to_start_partition };
		const uint64_t *sizes[2] = { d->from_sizes, d->to_sizes };
		unsigned ndim[2] = { d->from_ndim, d->to_ndim };
		uint64_t off[2] = { d->from_off, d->to_off };
		const int64_t *steps[2] = { d->from_steps, d->to_steps };

		if (d->from_ndim < 1 || d->from_ndim > 4 || d->to_ndim < 1 || d->to_ndim > 4 ||
		    d->from_loc < NX_LOC_HBM || d->from_loc > NX_LOC_PSUM ||
		    d->to_loc < NX_LOC_HBM || d->to_loc > NX_LOC_PSUM) {
			snprintf(what, sizeof(what), "DMA block %u descriptor %zu: bad dimensions or "
				 "memory", b->id, k);
			return inst_err(neff, e, i, err, what);
		}
		for (int s = 0; s < 2; s++) {
			const char *side = s ? "destination" : "source";

			if (locs[s] == NX_LOC_HBM) {
				uint64_t es = nx_dtype_size(d->dtype), hi = off[s];
				const struct nx_tensor *t;

				if (vars[s] < 0 || (size_t)vars[s] >= neff->ntensors) {
					snprintf(what, sizeof(what),
						 "DMA block %u descriptor %zu: %s tensor %d does not exist",
						 b->id, k, side, vars[s]);
					return inst_err(neff, e, i, err, what);
				}
				t = &neff->tensors[vars[s]];
				for (unsigned dd = 0; dd < ndim[s]; dd++)
					if (sizes[s][dd] && steps[s][dd] > 0)
						hi += (sizes[s][dd] - 1) * (uint64_t)steps[s][dd];
				if ((hi + 1) * es > t->size) {
					snprintf(what, sizeof(what),
						 "DMA block %u descriptor %zu: %s reads past the end of "
						 "tensor '%s' (%" PRIu64 " bytes)",
						 b->id, k, side, t->name ? t->name : "?", t->size);
					return inst_err(neff, e, i, err, what);
				}
			} else {
				uint64_t cap = locs[s] == NX_LOC_SBUF
					       ? m->hw->sbuf_partition_bytes
					       : m->hw->psum_partition_bytes;
				uint64_t parts = ndim[s] ? sizes[s][0] : 0;
				uint64_t per = parts ? d->bytes / parts : 0;

				if (sp[s] + parts > NX_NUM_PARTITIONS || off[s] + per > cap) {
					snprintf(what, sizeof(what),
						 "DMA block %u descriptor %zu: %s partitions %u..%" PRIu64
						 " bytes %" PRIu64 "..%" PRIu64 " are outside %s",
						 b->id, k, side, sp[s], sp[s] + parts - 1, off[s],
						 off[s] + per - 1,
						 locs[s] == NX_LOC_SBUF ? "SBUF" : "PSUM");
					return inst_err(neff, e, i, err, what);
				}
			}
		}
	}
	return 0;
}

static int check_inst(const struct nx_neff *neff, const struct nx_machine *m, int e, size_t i,
		      unsigned char *block_seen, struct nx_err *err)
{
	const struct nx_inst *in = &neff->inst[e][i];
	char what[256];
	int rc;

	if (in->opcode >= NX_OP_COUNT)
		return inst_err(neff, e, i, err, "unknown opcode");
	if (in->engine != e) {
		snprintf(what, sizeof(what), "instruction is for the %s engine but sits in the %s stream",
			 nx_engine_name(in->engine < NX_ENGINE_COUNT ? in->engine : 0),
			 nx_engine_name(e));
		return inst_err(neff, e, i, err, what);
	}
	if (!allowed(e, in->opcode)) {
		snprintf(what, sizeof(what), "%s cannot run on the %s engine",
			 nx_opcode_name(in->opcode), nx_engine_name(e));
		return inst_err(neff, e, i, err, what);
	}
	if ((in->wait_cond != NX_WAIT_NONE && in->wait_sem >= NX_NUM_SEMAPHORES) ||
	    (in->sig_op != NX_SEM_NONE && in->sig_sem >= NX_NUM_SEMAPHORES))
		return inst_err(neff, e, i, err, "semaphore index out of range (0..255)");
	if (in->wait_cond > NX_WAIT_EQ || in->sig_op > NX_SEM_SET)
		return inst_err(neff, e, i, err, "unknown semaphore condition or operation");
	if ((rc = check_ap(neff, m, e, i, "dst", &in->dst, err)) ||
	    (rc = check_ap(neff, m, e, i, "src0", &in->src0, err)) ||
	    (rc = check_ap(neff, m, e, i, "src1", &in->src1, err)))
		return rc;
	switch (in->opcode) {
	case NX_OP_MATMUL:
		if (in->src0.mem != NX_MEM_SBUF || in->dst.mem != NX_MEM_PSUM)
			return inst_err(neff, e, i, err,
					"MATMUL needs its moving operand in SBUF and dst in PSUM");
		if (nx_ap_free_elems(&in->src0) > m->mm_max_moving) {
			snprintf(what, sizeof(what), "moving free size %" PRIu64 " exceeds %u",
				 nx_ap_free_elems(&in->src0), m->mm_max_moving);
			return inst_err(neff, e, i, err, what);
		}
		{
			int64_t lo, hi;

			ap_range(&in->dst, &lo, &hi);
			int64_t bank = (int64_t)m->hw->psum_bank_bytes;

			if (lo / bank != (hi - 1) / bank)
				return inst_err(neff, e, i, err,
						"MATMUL output crosses a PSUM bank (2 KiB per partition)");
		}
		break;
	case NX_OP_LDWEIGHTS:
		if (in->src0.mem != NX_MEM_SBUF)
			return inst_err(neff, e, i, err, "LDWEIGHTS needs its operand in SBUF");
		if (nx_ap_free_elems(&in->src0) > m->hw->te_cols) {
			snprintf(what, sizeof(what), "stationary free size %" PRIu64 " exceeds %u",
				 nx_ap_free_elems(&in->src0), m->hw->te_cols);
			return inst_err(neff, e, i, err, what);
		}
		break;
	case NX_OP_DMA_TRIGGER:
		if (in->dma_block == NX_NONE32 || in->dma_block >= neff->nblocks) {
			snprintf(what, sizeof(what), "DMA block %u does not exist (NEFF has %zu)",
				 in->dma_block, neff->nblocks);
			return inst_err(neff, e, i, err, what);
		}
		if (!block_seen[in->dma_block]) {
			block_seen[in->dma_block] = 1;
			return check_block(neff, m, e, i, &neff->blocks[in->dma_block], err);
		}
		break;
	case NX_OP_TENSOR_TENSOR:
	case NX_OP_TENSOR_SCALAR:
	case NX_OP_TENSOR_REDUCE:
	case NX_OP_ACTIVATE:
	case NX_OP_TENSOR_COPY:
		if (in->dst.mem == NX_MEM_NONE || in->src0.mem == NX_MEM_NONE)
			return inst_err(neff, e, i, err, "missing dst or src0 operand");
		break;
	case NX_OP_MEMSET:
	case NX_OP_IOTA:
		if (in->dst.mem == NX_MEM_NONE)
			return inst_err(neff, e, i, err, "missing dst operand");
		break;
	default:
		break;
	}
	return 0;
}

int nx_sim_validate(const struct nx_neff *neff, const char *target, struct nx_err *err)
{
	const struct nx_machine *m = nx_machine_get(target);
	unsigned char *seen;
	int rc = 0;

	if (!m)
		return nx_errf(err, NX_EUSAGE, "unknown target '%s' (expected trn2 or trn1)", target);
	seen = nx_xcalloc(neff->nblocks + 1, 1);
	for (int e = 0; e < NX_ENGINE_COUNT && !rc; e++)
		for (size_t i = 0; i < neff->ninst[e] && !rc; i++)
			rc = check_inst(neff, m, e, i, seen, err);
	free(seen);
	return rc;
}
