/* SPDX-License-Identifier: MIT
 * emit.c: where simulator records go. nx__sim_emit passes each record to the sink;
 * nx_sim_capture plugs the NTFF writer in as the sink and fills the header with the
 * target's hardware constants and the NX_NTFF_SIMULATED flag. Nothing host-dependent
 * (clock, pid, paths) goes into the file, so captures are byte-identical; a device clock
 * asked for (opts start_ns) shifts the records. */
#include "common/compat.h"
#include "sim/sim_int.h"

#include <stdio.h>
#include <string.h>

int nx__sim_emit(struct sim *s, const struct nx_rec *rec)
{
	if (!s->sink || !s->sink->record)
		return 0;
	return s->sink->record(s->sink->arg, rec, s->err);
}

static void copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

int nx_sim_ntff_info(const struct nx_neff *neff, const struct nx_sim_opts *opts,
		     struct nx_ntff_info *info, struct nx_err *err)
{
	const struct nx_machine *m = nx_machine_get(opts->target);

	if (!m)
		return nx_errf(err, NX_EUSAGE, "unknown target '%s' (expected trn2 or trn1)",
			       opts->target);
	memset(info, 0, sizeof(*info));
	info->version = NX_NTFF_VERSION;
	info->flags = NX_NTFF_SIMULATED | (opts->dma_packets ? NX_NTFF_DGE_NOTIFICATIONS : 0);
	memcpy(info->neff_uuid, neff->hdr.uuid, sizeof(info->neff_uuid));
	info->ticks_per_ns = 1;
	info->capture_unix_ns = 0;
	info->num_physical_cores = 1;
	info->num_dma_engines = m->hw->dma_engines;
	info->te_rows = m->hw->te_rows;
	info->te_cols = m->hw->te_cols;
	info->ve_channels = info->se_channels = info->gp_channels = NX_NUM_PARTITIONS;
	info->dma_ddr_bandwidth = m->hw->dma_ddr_bandwidth;
	info->hbm_ddr_bandwidth = m->hw->hbm_ddr_bandwidth;
	info->te_clock_ghz = m->hw->te_mhz / 1000.0;
	info->ve_clock_ghz = m->hw->ve_mhz / 1000.0;
	info->se_clock_ghz = m->hw->se_mhz / 1000.0;
	info->gp_clock_ghz = m->hw->gp_mhz / 1000.0;
	info->nc_clock_ghz = m->hw->nc_mhz / 1000.0;
	copy_str(info->target, sizeof(info->target), m->hw->target);
	copy_str(info->instance_type, sizeof(info->instance_type), m->hw->instance_type);
	snprintf(info->runtime_version, sizeof(info->runtime_version),
		 "neuron-explorer simulator %s (%s)", NX_VERSION, m->hw->core_name);
	copy_str(info->driver_version, sizeof(info->driver_version), "simulated");
	copy_str(info->neff_name, sizeof(info->neff_name), neff->hdr.name);
	return 0;
}

/* The NTFF writer as the sink, records moved to the device clock's start_ns. */
struct shifted {
	struct nx_ntff_writer *w;
	uint64_t start_ns;
};

static int write_rec(void *arg, const struct nx_rec *rec, struct nx_err *err)
{
	const struct shifted *sh = arg;
	struct nx_rec r;

	if (!sh->start_ns)
		return nx_ntff_write(sh->w, rec, err);
	r = *rec;
	switch (r.kind) {
	case NX_REC_INST: r.u.inst.start += sh->start_ns; r.u.inst.end += sh->start_ns; break;
	case NX_REC_DMA: r.u.dma.start += sh->start_ns; r.u.dma.end += sh->start_ns; break;
	case NX_REC_SEM: r.u.sem.ts += sh->start_ns; break;
	case NX_REC_THROTTLE: r.u.throttle.ts += sh->start_ns; break;
	case NX_REC_ERROR: r.u.error.ts += sh->start_ns; break;
	case NX_REC_EXEC: r.u.exec.ts += sh->start_ns; break;
	}
	return nx_ntff_write(sh->w, &r, err);
}

int nx_sim_capture(const struct nx_neff *neff, const struct nx_sim_opts *opts,
		   const char *ntff_path, struct nx_sim_stats *stats, struct nx_err *err)
{
	struct shifted sh = { .start_ns = opts->start_ns };
	struct nx_ntff_info info;
	struct nx_sim_sink sink;
	int rc;

	if ((rc = nx_sim_ntff_info(neff, opts, &info, err)))
		return rc;
	if ((rc = nx_ntff_writer_open(&sh.w, ntff_path, &info, err)))
		return rc;
	sink.record = write_rec;
	sink.arg = &sh;
	rc = nx_sim_run(neff, opts, &sink, stats, err);
	if (rc) {
		nx_ntff_writer_abort(sh.w);
		return rc;
	}
	return nx_ntff_writer_close(sh.w, err);
}
