/* SPDX-License-Identifier: MIT
 * attribution.c: the DMA transfers with the source line of their triggering instruction
 * (attribution.h). */
#include "common/compat.h"
#include "analysis/attribution.h"

void nx_dma_line_sql(struct nx_strbuf *sql, const char *flow, const char *inst,
		     const char *src_sql)
{
	nx_strbuf_addf(sql, "SELECT f.out_id AS dma_id, f.in_id AS inst_id, i.src FROM %s f "
			    "JOIN (SELECT id, %s AS src FROM %s) i ON i.id = f.in_id "
			    "WHERE " NX_DMA_TRIGGER_SQL,
		       flow, src_sql, inst);
}
