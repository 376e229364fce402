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

#include <stdarg.h>
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
	case NX_OP_TENSOR_TENSOR_SCAN:
	case NX_OP_RECIPROCAL:
	case NX_OP_SCALAR_TENSOR_TENSOR:
	case NX_OP_TENSOR_COPY_PREDICATED:
	case NX_OP_SELECT:
		return engine == NX_ENGINE_VECTOR || engine == NX_ENGINE_GPSIMD;
	case NX_OP_BN_STATS:
	case NX_OP_BN_AGGR:
	case NX_OP_TENSOR_SCALAR_REDUCE:
	case NX_OP_TRANSPOSE:
	case NX_OP_RANGE_SELECT:
	case NX_OP_MAX8:
	case NX_OP_FIND_INDEX8:
	case NX_OP_MATCH_REPLACE8:
		return engine == NX_ENGINE_VECTOR;
	case NX_OP_AFFINE_SELECT:
	case NX_OP_LOCAL_GATHER:
		return engine == NX_ENGINE_GPSIMD;
	default:
		return false;
	}
}

/* The operand slots each opcode needs (the listing enforces the same). */
enum { N_DST = 1, N_SRC0 = 2, N_SRC1 = 4, N_SRC2 = 8, N_DST2 = 16 };
static unsigned needs(int op)
{
	switch (op) {
	case NX_OP_MEMSET:
	case NX_OP_IOTA:
		return N_DST;
	case NX_OP_TENSOR_TENSOR:
	case NX_OP_TENSOR_TENSOR_SCAN:
	case NX_OP_SCALAR_TENSOR_TENSOR:
	case NX_OP_FIND_INDEX8:
	case NX_OP_MATCH_REPLACE8:
	case NX_OP_LOCAL_GATHER:
		return N_DST | N_SRC0 | N_SRC1;
	case NX_OP_TENSOR_SCALAR_REDUCE:
		return N_DST | N_SRC0 | N_DST2;
	case NX_OP_TENSOR_COPY_PREDICATED:
		return N_DST | N_SRC0 | N_SRC2;
	case NX_OP_SELECT:
	case NX_OP_RANGE_SELECT:
		return N_DST | N_SRC0 | N_SRC1 | N_SRC2;
	case NX_OP_TENSOR_SCALAR:
	case NX_OP_TENSOR_REDUCE:
	case NX_OP_ACTIVATE:
	case NX_OP_TENSOR_COPY:
	case NX_OP_BN_STATS:
	case NX_OP_BN_AGGR:
	case NX_OP_RECIPROCAL:
	case NX_OP_AFFINE_SELECT:
	case NX_OP_TRANSPOSE:
	case NX_OP_MAX8:
		return N_DST | N_SRC0;
	default:
		return 0;
	}
}

/* Byte range [lo, hi) touched inside each partition by an access pattern. An axis of
 * one element (or none) spans nothing, so the outer two count only when used. */
static inline void ap_range(const struct nx_ap *ap, int64_t *lo, int64_t *hi)
{
	int64_t es = nx_dtype_size(ap->dtype), a = 0, b = 0;

	for (unsigned k = 0; k < NX_AP_DIMS; k++) {
		int64_t d = (int64_t)ap->size[k] - 1;

		if (d <= 0)
			continue;
		d *= ap->step[k];
		if (d < 0)
			a += d;
		else
			b += d;
	}
	*lo = (int64_t)ap->offset + a * es;
	*hi = (int64_t)ap->offset + (b + 1) * es;
}

/* True when a used pattern is in SBUF or PSUM, of a known dtype and inside the memory
 * (the common case, without building a message); check_ap says what is wrong. */
static inline bool ap_ok(const struct nx_machine *m, const struct nx_ap *ap)
{
	int64_t lo, hi, cap;

	if (ap->mem == NX_MEM_NONE)
		return true;
	if ((ap->mem != NX_MEM_SBUF && ap->mem != NX_MEM_PSUM) || ap->dtype >= NX_DT_COUNT ||
	    (unsigned)ap->start_partition + nx_ap_partitions(ap) > NX_NUM_PARTITIONS)
		return false;
	cap = (int64_t)(ap->mem == NX_MEM_SBUF ? m->hw->sbuf_partition_bytes
					       : m->hw->psum_partition_bytes);
	ap_range(ap, &lo, &hi);
	return lo >= 0 && hi <= cap;
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

			int dt = s && d->cast ? d->to_dtype : d->dtype;
			unsigned es0 = nx_dtype_size(d->dtype) ? nx_dtype_size(d->dtype) : 1;
			uint64_t bytes = d->bytes / es0 * nx_dtype_size(dt);

			if (dt < 0 || dt >= NX_DT_COUNT) {
				snprintf(what, sizeof(what), "DMA block %u descriptor %zu: %s "
					 "dtype %d is not defined", b->id, k, side, dt);
				return inst_err(neff, e, i, err, what);
			}
			if (locs[s] == NX_LOC_HBM) {
				uint64_t es = nx_dtype_size(dt), hi = off[s];
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
				uint64_t per = parts ? bytes / parts : 0;

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

/* inst_err with a formatted "what" (kept out of the callers, which then need no buffer
 * on their stack). */
static int inst_errf(const struct nx_neff *neff, int e, size_t i, struct nx_err *err,
		     const char *fmt, ...) NX_PRINTF(5, 6);
static int inst_errf(const struct nx_neff *neff, int e, size_t i, struct nx_err *err,
		     const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return inst_err(neff, e, i, err, what);
}

/* A per-partition column operand (operand0, bias, bound0 ...): the partitions of src0
 * and one element each. */
static int column(const struct nx_neff *neff, int e, size_t i, const char *role,
		  const struct nx_ap *ap, struct nx_err *err)
{
	const struct nx_ap *src = &neff->inst[e][i].src0;

	if (ap->mem == NX_MEM_NONE)
		return 0;
	if (nx_ap_partitions(ap) != nx_ap_partitions(src) || nx_ap_free_elems(ap) != 1)
		return inst_errf(neff, e, i, err, "%s must be %u partitions x 1 element (it is %u "
				 "x %" PRIu64 ")", role, nx_ap_partitions(src),
				 nx_ap_partitions(ap), nx_ap_free_elems(ap));
	return 0;
}

/* A version-2 instruction without any of the newer operands: only the checks of
 * check_inst apply (the fast path of the library kernels' programs). */
static inline bool plain_v2(const struct nx_inst *in, unsigned need)
{
	bool columns = (in->opcode == NX_OP_TENSOR_SCALAR || in->opcode == NX_OP_ACTIVATE) &&
		       in->src1.mem != NX_MEM_NONE;

	return in->opcode < NX_OP_COUNT_V2 && !columns && in->src2.mem == NX_MEM_NONE &&
	       in->dst2.mem == NX_MEM_NONE && !(in->tile[0] | in->tile[1] | in->tile[2] |
						 in->tile[3]) &&
	       (!(need & N_DST) || in->dst.mem != NX_MEM_NONE) &&
	       (!(need & N_SRC0) || in->src0.mem != NX_MEM_NONE) &&
	       (!(need & N_SRC1) || in->src1.mem != NX_MEM_NONE) && !in->axes;
}

/* Operand presence and the shape rules of the operations (docs/simulator.md, "Checks
 * and errors"): all of them for the NKI operations of NEFF version 3, the per-partition
 * operands and reductions for the older ones. */
static int check_shapes(const struct nx_neff *neff, const struct nx_machine *m, int e, size_t i,
			struct nx_err *err)
{
	const struct nx_inst *in = &neff->inst[e][i];
	unsigned need = needs(in->opcode);

	if (plain_v2(in, need))
		return 0;

	const struct nx_op_roles *r = nx_op_roles(in->opcode);
	uint64_t ns = nx_ap_free_elems(&in->src0), nd = nx_ap_free_elems(&in->dst);
	unsigned ps = nx_ap_partitions(&in->src0), pd = nx_ap_partitions(&in->dst);
	const char *op = nx_opcode_name(in->opcode);
	int rc;

#define BAD(...) inst_errf(neff, e, i, err, __VA_ARGS__)
	if (((need & N_DST) && !nx_ap_used(&in->dst)) ||
	    ((need & N_SRC0) && !nx_ap_used(&in->src0)))
		return inst_err(neff, e, i, err, need & N_SRC0 ? "missing dst or src0 operand"
							       : "missing dst operand");
	if (((need & N_SRC1) && !nx_ap_used(&in->src1)) ||
	    ((need & N_SRC2) && !nx_ap_used(&in->src2)) ||
	    ((need & N_DST2) && !nx_ap_used(&in->dst2)))
		return BAD("missing %s operand",
			   (need & N_SRC1) && !nx_ap_used(&in->src1) ? r->src1
			   : (need & N_SRC2) && !nx_ap_used(&in->src2) ? r->src2 : r->dst2);
	if (in->axes > NX_AP_DIMS || in->alu >= NX_ALU_COUNT || in->alu1 >= NX_ALU_COUNT)
		return BAD("bad axes or ALU operation");
	if (in->opcode >= NX_OP_COUNT_V2 && in->opcode != NX_OP_TRANSPOSE &&
	    in->opcode != NX_OP_LOCAL_GATHER && need & N_SRC0 && ps != pd)
		return BAD("%s reads %u partitions but writes %u", op, ps, pd);
	switch (in->opcode) {
	case NX_OP_TENSOR_SCALAR:
		if ((rc = column(neff, e, i, "operand0", &in->src1, err)) ||
		    (rc = column(neff, e, i, "operand1", &in->src2, err)))
			return rc;
		break;
	case NX_OP_ACTIVATE:
		if ((rc = column(neff, e, i, "bias", &in->src1, err)) ||
		    (rc = column(neff, e, i, "scale", &in->src2, err)))
			return rc;
		break;
	case NX_OP_TENSOR_TENSOR_SCAN:
		if ((rc = column(neff, e, i, "initial", &in->src2, err)))
			return rc;
		break;
	case NX_OP_SCALAR_TENSOR_TENSOR:
		if ((rc = column(neff, e, i, "operand0", &in->src2, err)))
			return rc;
		break;
	case NX_OP_TENSOR_SCALAR_REDUCE:
		if ((rc = column(neff, e, i, "operand0", &in->src1, err)))
			return rc;
		break;
	case NX_OP_RANGE_SELECT:
		if ((rc = column(neff, e, i, "bound0", &in->src1, err)) ||
		    (rc = column(neff, e, i, "bound1", &in->src2, err)))
			return rc;
		if (!nx_alu_is_compare(in->alu) || !nx_alu_is_compare(in->alu1))
			return BAD("comp_op0 and comp_op1 must be comparisons");
		break;
	case NX_OP_AFFINE_SELECT:
		if (!nx_alu_is_compare(in->alu))
			return BAD("cmp_op %s is not a comparison",
				   nx_alu_name(in->alu));
		break;
	case NX_OP_TENSOR_REDUCE:
		if (in->axes > nx_ap_ndim(&in->src0))
			return BAD("axes %u exceeds the %u free dimensions of "
				   "src0", in->axes, nx_ap_ndim(&in->src0));
		return 0;
	case NX_OP_BN_STATS:
		if (ns > 512 || nd != 6)
			return BAD("BN_STATS takes at most 512 elements per "
				   "partition (%" PRIu64 ") and writes 6 (%" PRIu64 ")", ns, nd);
		return 0;
	case NX_OP_BN_AGGR:
		if (ns % 3 || nd != 2)
			return BAD("BN_AGGR reads a multiple of 3 elements per "
				   "partition (%" PRIu64 ") and writes 2 (%" PRIu64 ")", ns, nd);
		return 0;
	case NX_OP_TRANSPOSE:
		if (ps > 32 || ns > 32 || pd != ns || nd != ps)
			return BAD("a Vector TRANSPOSE maps P x F to F x P with "
				   "P, F <= 32 (here %u x %" PRIu64 " to %u x %" PRIu64 ")", ps,
				   ns, pd, nd);
		return 0;
	case NX_OP_MAX8:
		if (nd != 8 || ns < 8)
			return BAD("MAX8 writes 8 elements per partition from "
				   "at least 8 (here %" PRIu64 " from %" PRIu64 ")", nd, ns);
		return 0;
	case NX_OP_FIND_INDEX8:
	case NX_OP_MATCH_REPLACE8:
		if (nx_ap_free_elems(&in->src1) != 8 ||
		    nx_ap_partitions(&in->src1) != ps ||
		    nd != (in->opcode == NX_OP_FIND_INDEX8 ? 8 : ns))
			return BAD("%s takes vals of %u partitions x 8 and "
				   "writes %s per partition", op, ps,
				   in->opcode == NX_OP_FIND_INDEX8 ? "8" : "as many as src0");
		return 0;
	case NX_OP_LOCAL_GATHER:
		return 0;
	case NX_OP_MATMUL:
	case NX_OP_LDWEIGHTS:
		if (in->tile[0] + in->tile[2] > (int)m->hw->te_cols ||
		    in->tile[1] + in->tile[3] > (int)m->hw->te_cols)
			return BAD("PE tile at %u,%u of size %u,%u leaves the "
				   "%ux%u array", in->tile[0], in->tile[1], in->tile[2],
				   in->tile[3], m->hw->te_cols, m->hw->te_cols);
		return 0;
	default:
		break;
	}
	if (nx_ap_used(&in->dst2) && nx_ap_partitions(&in->dst2) != ps)
		return BAD("%s has %u partitions, src0 %u", r->dst2 ? r->dst2 : "dst2",
			   nx_ap_partitions(&in->dst2), ps);
	/* the version-2 operations keep their looser rules: the library kernels use a
	 * TENSOR_REDUCE for bn_stats and an ACTIVATE into one element for a mean */
	if (in->opcode < NX_OP_COUNT_V2)
		return 0;
	if (need & N_SRC0 && ns != nd)
		return BAD("%s reads %" PRIu64 " elements per partition but "
			   "writes %" PRIu64, op, ns, nd);
	if (need & N_SRC1 && in->opcode != NX_OP_RANGE_SELECT &&
	    nx_ap_free_elems(&in->src1) != ns)
		return BAD("%s is %" PRIu64 " elements per partition, src0 %"
			   PRIu64, r->src1, nx_ap_free_elems(&in->src1), ns);
	if ((in->opcode == NX_OP_SELECT || in->opcode == NX_OP_TENSOR_COPY_PREDICATED) &&
	    nx_ap_free_elems(&in->src2) != ns)
		return BAD("predicate is %" PRIu64 " elements per partition, "
			   "src0 %" PRIu64, nx_ap_free_elems(&in->src2), ns);
	return 0;
#undef BAD
}

static int check_inst(const struct nx_neff *neff, const struct nx_machine *m, int e, size_t i,
		      unsigned char *block_seen, struct nx_err *err)
{
	const struct nx_inst *in = &neff->inst[e][i];
	int rc;

	if (in->opcode >= NX_OP_COUNT)
		return inst_err(neff, e, i, err, "unknown opcode");
	if (in->engine != e)
		return inst_errf(neff, e, i, err,
				 "instruction is for the %s engine but sits in the %s stream",
				 nx_engine_name(in->engine < NX_ENGINE_COUNT ? in->engine : 0),
				 nx_engine_name(e));
	if (!allowed(e, in->opcode))
		return inst_errf(neff, e, i, err, "%s cannot run on the %s engine",
				 nx_opcode_name(in->opcode), nx_engine_name(e));
	if ((in->wait_cond != NX_WAIT_NONE && in->wait_sem >= NX_NUM_SEMAPHORES) ||
	    (in->sig_op != NX_SEM_NONE && in->sig_sem >= NX_NUM_SEMAPHORES))
		return inst_err(neff, e, i, err, "semaphore index out of range (0..255)");
	if (in->wait_cond > NX_WAIT_EQ || in->sig_op > NX_SEM_SET)
		return inst_err(neff, e, i, err, "unknown semaphore condition or operation");
	if ((!ap_ok(m, &in->dst) || !ap_ok(m, &in->src0) || !ap_ok(m, &in->src1) ||
	     !ap_ok(m, &in->src2) || !ap_ok(m, &in->dst2)) &&
	    ((rc = check_ap(neff, m, e, i, "dst", &in->dst, err)) ||
	     (rc = check_ap(neff, m, e, i, "src0", &in->src0, err)) ||
	     (rc = check_ap(neff, m, e, i, "src1", &in->src1, err)) ||
	     (rc = check_ap(neff, m, e, i, "src2", &in->src2, err)) ||
	     (rc = check_ap(neff, m, e, i, "dst2", &in->dst2, err))))
		return rc;
	switch (in->opcode) {
	case NX_OP_MATMUL:
		if (in->src0.mem != NX_MEM_SBUF || in->dst.mem != NX_MEM_PSUM)
			return inst_err(neff, e, i, err,
					"MATMUL needs its moving operand in SBUF and dst in PSUM");
		if (nx_ap_free_elems(&in->src0) > m->mm_max_moving)
			return inst_errf(neff, e, i, err, "moving free size %" PRIu64 " exceeds %u",
					 nx_ap_free_elems(&in->src0), m->mm_max_moving);
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
		if (nx_ap_free_elems(&in->src0) > m->hw->te_cols)
			return inst_errf(neff, e, i, err, "stationary free size %" PRIu64
					 " exceeds %u", nx_ap_free_elems(&in->src0),
					 m->hw->te_cols);
		break;
	case NX_OP_DMA_TRIGGER:
		if (in->dma_block == NX_NONE32 || in->dma_block >= neff->nblocks)
			return inst_errf(neff, e, i, err,
					 "DMA block %u does not exist (NEFF has %zu)",
					 in->dma_block, neff->nblocks);
		if (!block_seen[in->dma_block]) {
			block_seen[in->dma_block] = 1;
			return check_block(neff, m, e, i, &neff->blocks[in->dma_block], err);
		}
		break;
	default:
		break;
	}
	return check_shapes(neff, m, e, i, err);
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
