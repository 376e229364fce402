/* SPDX-License-Identifier: MIT
 * sim.h: the NeuronCore performance simulator behind `neuron-explorer capture`.
 *
 * nx_sim_run executes the instruction streams of a NEFF on a discrete-event model of
 * one NeuronCore (five compute engines, 16 DMA engines, 256 semaphores) and hands
 * every trace record to a sink, in the order the NTFF writer requires (per kind,
 * non-decreasing timestamps). nx_sim_capture wraps it with the NTFF writer. The run is
 * deterministic: the same NEFF and options give the same records. The model and its
 * constants are described in docs/simulator.md. */
#ifndef NX_SIM_SIM_H
#define NX_SIM_SIM_H

#include "common/compat.h"
#include "common/err.h"
#include "neff/neff.h"
#include "ntff/ntff.h"

struct nx_sim_opts {
	const char *target;       /* "trn2" (default when NULL) or "trn1" */
	bool dma_packets;         /* emit DMA packet records (DGE notifications) */
	uint32_t exec_index;      /* execution index recorded in the trace (>= 1) */
	/* The device clock's time when the execution starts: every record of a capture is
	 * shifted by it (0: the execution starts at tick 0). */
	uint64_t start_ns;
	/* Optional progress report, called about every 64 Ki instructions. */
	void (*progress)(void *arg, uint64_t insts_done, uint64_t insts_total, uint64_t now_ns);
	void *progress_arg;
};

/* Receives records; returns 0 or a negative error (which stops the run). */
struct nx_sim_sink {
	int (*record)(void *arg, const struct nx_rec *rec, struct nx_err *err);
	void *arg;
};

struct nx_sim_stats {
	uint64_t insts;          /* instructions executed */
	uint64_t dma_packets;    /* DMA packets moved (emitted or not) */
	uint64_t dma_transfers;
	uint64_t sem_updates;
	uint64_t throttles;
	uint64_t end_ns;         /* simulated time of the stop record */
};

/* Validates and runs the NEFF. Errors (NX_ESIM) name the instruction (engine, index,
 * opcode) and its source file:line when debug info has one. */
int nx_sim_run(const struct nx_neff *neff, const struct nx_sim_opts *opts,
	       const struct nx_sim_sink *sink, struct nx_sim_stats *stats, struct nx_err *err);

/* Fills the NTFF header for a simulated run of neff (flags, uuid, hardware constants).
 * Returns NX_EUSAGE for an unknown target. */
int nx_sim_ntff_info(const struct nx_neff *neff, const struct nx_sim_opts *opts,
		     struct nx_ntff_info *info, struct nx_err *err);

/* Runs the NEFF and writes the trace to ntff_path (atomically). */
int nx_sim_capture(const struct nx_neff *neff, const struct nx_sim_opts *opts,
		   const char *ntff_path, struct nx_sim_stats *stats, struct nx_err *err);

/* Checks the program before it runs: opcodes valid for their engine, operands inside
 * SBUF/PSUM, tile limits, DMA blocks and semaphores in range (validate.c). */
int nx_sim_validate(const struct nx_neff *neff, const char *target, struct nx_err *err);

/* "Vector instruction 12 (TENSOR_TENSOR) at kernels/x.py:31" into buf. */
void nx_sim_describe_inst(const struct nx_neff *neff, int engine, size_t index, char *buf,
			  size_t len);

#endif
