/* SPDX-License-Identifier: MIT
 * cmd_nki.c: `neuron-explorer nki`, the NKI front-end (docs/nki.md):
 *   nki path                      the directory to put on PYTHONPATH (the shim's packages)
 *   nki run FILE --entry NAME ... run an NKI kernel with random inputs: NEFF + NTFF
 * `nki run` hands over to the shim's driver (python3 -m nx_nki.run) with PYTHONPATH and
 * NX_NKI_BIN set, so the shim runs this very binary for asm, capture and ingest. */
#include "common/compat.h"
#include "cli/commands.h"
#include "cli/nki_env.h"
#include "common/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: neuron-explorer nki path\n"
		   "       neuron-explorer nki run FILE --entry NAME --input NAME=SHAPE[:DTYPE] ...\n"
		   "                               [options]\n"
		   "\n"
		   "The NKI front-end: a user's NKI kernel (Python, neuronxcc.nki or Beta 2 nki),\n"
		   "unchanged, runs against neuron-explorer's shim of the NKI API, which records it\n"
		   "and writes a kernel listing; the listing is assembled into a NEFF, simulated\n"
		   "into an NTFF and can be ingested like any profile (docs/nki.md).\n"
		   "\n"
		   "  export PYTHONPATH=$(neuron-explorer nki path)   then run your own script\n"
		   "                                                  (nki.baremetal, nki.benchmark,\n"
		   "                                                  nki.profile ...)\n"
		   "Run 'neuron-explorer nki run --help' for the options of run.\n");
}

static void run_usage(FILE *f)
{
	fprintf(f,
		"usage: neuron-explorer nki run FILE --entry NAME --input NAME=SHAPE[:DTYPE] ...\n"
		"                               [--arg NAME=VALUE] [--grid N[xM]] [--target trn2|trn1]\n"
		"                               [-n K.neff] [-s K.ntff] [--data-path D --display-name N]\n"
		"                               [--seed N] [--numerics] [--policy K=V,...]\n"
		"                               [--compile-opt FLAGS] [--listing FILE] [-q]\n"
		"\n"
		"Runs the NKI kernel NAME of FILE (its __main__ block does not run) on seeded random\n"
		"inputs, compiles the recording with the shim's policies, writes the NEFF and the\n"
		"simulated NTFF and, with --display-name, ingests the profile.\n"
		"  --entry NAME          the kernel function (decorated with nki.jit or not)\n"
		"  --input NAME=SHAPE[:DTYPE]\n"
		"                        one tensor argument: dims joined by x, dtype bfloat16,\n"
		"                        float16, float32 (default), int32, ... e.g.\n"
		"                        --input a=4096x8192:bfloat16\n"
		"  --arg NAME=VALUE      a non-tensor argument (a Python literal)\n"
		"  --grid N[xM]          an SPMD launch grid (kernel[N, M]); default the kernel's\n"
		"  --target T            trn2 (default) or trn1; also --compile-opt '--target trn1'\n"
		"  -n, --neff FILE       NEFF to write (default NAME.neff)\n"
		"  -s, --session-file F  NTFF to write (default NAME.ntff)\n"
		"  --data-path D         where to ingest (with --display-name)\n"
		"  --display-name N      ingest the profile under this name (view/recommend/UI)\n"
		"  --seed N              random inputs' seed (default 0)\n"
		"  --numerics            also compute the values (slower; off by default: the\n"
		"                        profile does not depend on them)\n"
		"  --policy K=V,...      the shim's compiler policies (bufs=N, bufs@LINE=N,\n"
		"                        engines=balance|vector, queues=N, dge=on|off, sbuf=BYTES,\n"
		"                        fuse=on|off, hoist=on|off, serve_loads=on|off,\n"
		"                        serve_reuse=auto|furthest|turn, serve_sbuf=BYTES,\n"
		"                        spill_trigger=writer|sync, spill_ahead=N,\n"
		"                        loop_order=reuse|source, psum_share=on|off;\n"
		"                        docs/nki.md has them all)\n"
		"  --compile-opt FLAGS   the real compiler's flags (--target, --disable-dge;\n"
		"                        others are accepted and noted as ignored)\n"
		"  --listing FILE        also write the kernel listing\n"
		"  -q, --quiet           no summary line\n"
		"\n"
		"Exit status: 0 done; 1 the kernel failed (one line: FILE:LINE: the NKI call: the\n"
		"problem) or a pipeline step failed; 2 a usage error.\n");
}

static int do_path(int argc, char **argv)
{
	char *dir;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: neuron-explorer nki path\n\n"
		       "Prints the directory of the NKI shim's Python packages (neuronxcc, nki):\n"
		       "  export PYTHONPATH=$(neuron-explorer nki path)\n"
		       "after which an unchanged NKI script runs against this neuron-explorer.\n");
		return NX_EXIT_OK;
	}
	if (argc > 1) {
		nx_cli_error("nki", "path takes no arguments");
		return NX_EXIT_USAGE;
	}
	dir = nx_cli_nki_shim_dir(NULL);
	if (!dir) {
		nx_cli_error("nki", "the NKI shim is not installed beside this binary (expected "
			     "nki/python or ../share/neuron-explorer/nki/python next to it)");
		return NX_EXIT_FAIL;
	}
	printf("%s\n", dir);
	free(dir);
	return NX_EXIT_OK;
}

static int do_run(int argc, char **argv)
{
	const char *py = nx_cli_nki_python();
	char **args;
	int rc;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			run_usage(stdout);
			return NX_EXIT_OK;
		}
	if (argc < 2) {
		run_usage(stderr);
		return NX_EXIT_USAGE;
	}
	if ((rc = nx_cli_nki_env("nki")))
		return rc;
	args = nx_xcalloc((size_t)argc + 4, sizeof(*args));
	args[0] = (char *)py;
	args[1] = (char *)"-m";
	args[2] = (char *)"nx_nki.run";
	for (int i = 1; i < argc; i++)
		args[2 + i] = argv[i];
	fflush(stdout);
	execvp(py, args);
	nx_cli_error("nki", "cannot run %s: %s (set NX_PYTHON to a python3 with numpy)", py,
		     strerror(errno));
	free(args);
	return NX_EXIT_FAIL;
}

int cmd_nki(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return NX_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return NX_EXIT_OK;
	}
	if (!strcmp(argv[1], "path"))
		return do_path(argc - 1, argv + 1);
	if (!strcmp(argv[1], "run"))
		return do_run(argc - 1, argv + 1);
	nx_cli_error("nki", "unknown verb '%s' (path or run)", argv[1]);
	usage(stderr);
	return NX_EXIT_USAGE;
}
