/* SPDX-License-Identifier: MIT
 * h_timeline_dma.c: the timeline's warning band for small DMA transfers (docs/api.md):
 *   .../timeline/small-dma?t0=&t1=&px=   per DMA queue and power-of-two bucket of the
 *        window (as .../timeline picks it), the transfers (DmaPacketAggregated) starting
 *        there that move fewer than SMALL_BYTES per SBUF partition, and all the
 *        transfers starting there; only buckets with a small one. A transfer's
 *        partitions are the larger of its read and write SBUF partition counts (1 when
 *        neither side is SBUF), its bytes per partition transfer_bytes over them: under
 *        512 B per partition a transfer is dominated by its fixed cost, the commonest DMA
 *        inefficiency the DMA guidance names (a count the table lacks counts as none).
 *        Read from the profile's table (the timeline cache does not keep bytes), with
 *        integer bounds, so row groups are skipped. */
#include "common/compat.h"
#include "server/http.h"
#include "server/registry.h"
#include "server/timeline.h"
#include "common/strbuf.h"

#include <string.h>
#include <strings.h>

#define SMALL_BYTES 512

/* name when the table has that column, else NULL (as SQL). */
static const char *column_or_null(const struct nx_pdb_column *cols, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcasecmp(cols[i].name, name))
			return name;
	return "NULL";
}

/* The reply of .../timeline/small-dma for window w (nx__tl_body). */
static int small_dma_body(struct nx_req *rq, struct nx_profile *p, struct nx_lod *lod, void *arg,
			  struct nx_strbuf *out, struct nx_err *err)
{
	const struct nx__tl_window *w = arg;
	struct nx_strbuf sql = NX_STRBUF_INIT;
	struct nx_pdb_column *cols = NULL;
	size_t ncols = 0;
	int rc;

	(void)lod;
	nx__tl_put_window(out, w->t0, w->t1);
	nx_strbuf_addf(out, ",\"bucket\":%" PRId64 ",\"bytes_per_partition_below\":%d,\"result\":",
		       w->bucket, SMALL_BYTES);
	if (!nx__pfiles_find(&p->files, "DmaPacketAggregated")) {
		nx_strbuf_addstr(out, "null}");
		return 0;
	}
	rc = nx__pdb_describe(p->db, "DmaPacketAggregated", &cols, &ncols, err);
	/* a partition count the table lacks counts as none */
	nx_strbuf_addf(&sql,
		"SELECT core, track, k * %" PRId64 " AS start, small, n FROM (SELECT "
		"pcore_idx::BIGINT AS core, queue_name::VARCHAR AS track, start_ts // %" PRId64
		" AS k, count(*) FILTER (%s < %d * greatest(1, coalesce(%s, 0), "
		"coalesce(%s, 0)))::BIGINT AS small, count(*)::BIGINT AS n FROM "
		"\"DmaPacketAggregated\" WHERE start_ts < %" PRId64 " AND end_ts > %" PRId64
		" AND " NX_TL_IN_BOUNDS_SQL " GROUP BY ALL) WHERE small > 0 ORDER BY core, track, k",
		w->bucket, w->bucket, column_or_null(cols, ncols, "transfer_bytes"), SMALL_BYTES,
		column_or_null(cols, ncols, "read_num_sbuf_partitions"),
		column_or_null(cols, ncols, "write_num_sbuf_partitions"), w->t1, w->t0);
	if (!rc)
		rc = nx__query_limited(rq, p, sql.buf, out, err);
	if (!rc)
		nx_strbuf_addch(out, '}');
	nx__pdb_columns_free(cols, ncols);
	nx_strbuf_release(&sql);
	return rc;
}

enum MHD_Result nx__h_timeline_small_dma(struct nx_req *rq, char **cap)
{
	/* the bucket as .../timeline picks it; the window as asked (not snapped) */
	return nx__tl_serve_window(rq, cap, false, small_dma_body);
}
