/* SPDX-License-Identifier: MIT
 * h_timeline_memory.c: the memory view's data (docs/api.md, docs/ui.md):
 *   .../timeline/memory?t0=&t1=&px=   for the window, the SBUF allocations that overlap
 *        it (SbufAllocation: per core and partition group, the time span and the byte
 *        range inside each partition, with what made it: the tensor, the opcode and
 *        operands of the instruction, or the DMA queue and block), at most MEMORY_LIMIT
 *        of them, the largest (clipped duration x bytes) first, with their total; and
 *        the PSUM banks' utilisation (PsumUsage) per power-of-two bucket of the window
 *        (as .../timeline picks it): per bank the largest sample of the bucket, from one
 *        window width before t0 so the sample in force at t0 is there.
 * Read from the profile's tables with integer bounds (SbufAllocation is stored in
 * (core, start) order, so row groups past the window are skipped). */
#include "common/compat.h"
#include "common/strbuf.h"
#include "server/http.h"
#include "server/registry.h"
#include "server/timeline.h"

#define MEMORY_LIMIT 4000

static int memory_body(struct nx_req *rq, struct nx_profile *p, struct nx_lod *lod, void *arg,
		       struct nx_strbuf *out, struct nx_err *err)
{
	const struct nx__tl_window *w = arg;
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int64_t back = nx__tl_sub(w->t0, nx__tl_sub(w->t1, w->t0));
	int rc = 0;

	(void)lod;
	nx__tl_put_window(out, w->t0, w->t1);
	nx_strbuf_addf(out, ",\"bucket\":%" PRId64 ",\"limit\":%d,\"sbuf\":", w->bucket,
		       MEMORY_LIMIT);
	if (nx__pfiles_find(&p->files, "SbufAllocation")) {
		nx_strbuf_addf(&sql,
			"SELECT pcore_idx::BIGINT AS core, \"partition\"::BIGINT AS \"partition\", "
			"start_ts::BIGINT AS start, end_ts::BIGINT AS \"end\", "
			"start_address::BIGINT AS lo, end_address::BIGINT AS hi, "
			"op_source_type::VARCHAR AS source, coalesce(tensor_name, opcode, "
			"queue_name)::VARCHAR AS name, opcode::VARCHAR AS opcode, "
			"operands::VARCHAR AS operands, queue_name::VARCHAR AS queue, "
			"block_id::BIGINT AS block, count(*) OVER ()::BIGINT AS total "
			"FROM SbufAllocation WHERE start_ts < %" PRId64 " AND end_ts > %" PRId64
			" AND " NX_TL_IN_BOUNDS_SQL " ORDER BY (least(end_ts, %" PRId64 ") - "
			"greatest(start_ts, %" PRId64 "))::DOUBLE * (end_address - start_address + 1) "
			"DESC, start_ts, \"partition\", start_address LIMIT %d",
			w->t1, w->t0, w->t1, w->t0, MEMORY_LIMIT);
		rc = nx__query_limited(rq, p, sql.buf, out, err);
	} else {
		nx_strbuf_addstr(out, "null");
	}
	if (rc)
		goto out;
	nx_strbuf_addstr(out, ",\"psum\":");
	if (nx__pfiles_find(&p->files, "PsumUsage")) {
		nx_strbuf_reset(&sql);
		nx_strbuf_addf(&sql, "SELECT pcore_idx::BIGINT AS core, (timestamp // %" PRId64
				     ") * %" PRId64 " AS ts", w->bucket, w->bucket);
		for (int b = 0; b < 8; b++)
			nx_strbuf_addf(&sql, ", max(bank_%d_util_percent)::DOUBLE AS b%d", b, b);
		nx_strbuf_addf(&sql, ", max(avg_util_percent)::DOUBLE AS avg FROM PsumUsage WHERE "
				     "timestamp >= %" PRId64 " AND timestamp < %" PRId64
				     " GROUP BY ALL ORDER BY core, ts",
			       back, w->t1);
		rc = nx__query_limited(rq, p, sql.buf, out, err);
	} else {
		nx_strbuf_addstr(out, "null");
	}
	if (!rc)
		nx_strbuf_addch(out, '}');
out:
	nx_strbuf_release(&sql);
	return rc;
}

enum MHD_Result nx__h_timeline_memory(struct nx_req *rq, char **cap)
{
	return nx__tl_serve_window(rq, cap, false, memory_body);
}
