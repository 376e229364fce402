/* SPDX-License-Identifier: MIT
 * cmd_kernel.c: `neuron-explorer kernel`, the kernel tools:
 *   kernel asm LISTING -o K.neff            pack a kernel listing into a NEFF
 *   kernel gen NAME [--size N] -o K.neff    generate a library kernel
 *   kernel list                             names and one-line descriptions
 * The listing format is described in docs/formats/listing.md. */
#include "common/compat.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "kernels/library.h"
#include "kernels/listing.h"
#include "neff/neff.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: neuron-explorer kernel asm LISTING -o K.neff\n"
		   "       neuron-explorer kernel gen NAME [--size N] [--target trn2|trn1]\n"
		   "                                  [--listing FILE] [--instr-fetch] [-q] -o K.neff\n"
		   "       neuron-explorer kernel list\n"
		   "\n"
		   "Packs kernel listings (docs/formats/listing.md) into NEFFs and generates the\n"
		   "library kernels, whose NKI sources are kernels/<name>.py.\n"
		   "Run 'neuron-explorer kernel <verb> --help' for the options of a verb.\n");
}

static bool is_help(const char *a)
{
	return !strcmp(a, "--help") || !strcmp(a, "-h");
}

static size_t count_insts(const struct nx_neff *neff)
{
	size_t n = 0;

	for (size_t e = 0; e < NX_ENGINE_COUNT; e++)
		n += neff->ninst[e];
	return n;
}

static int write_neff(const char *path, const struct nx_neff *neff)
{
	struct nx_err err = { 0 };

	if (nx_neff_write(path, neff, &err)) {
		nx_cli_error("kernel", "writing '%s': %s", path, err.msg);
		return NX_EXIT_FAIL;
	}
	return NX_EXIT_OK;
}

static int do_list(int argc, char **argv)
{
	const struct nx_kernel_def *const *k;
	size_t n;

	if (argc > 1 && is_help(argv[1])) {
		printf("usage: neuron-explorer kernel list\n\n"
		       "Lists the library kernels with their default size and NKI source.\n");
		return NX_EXIT_OK;
	}
	if (argc > 1) {
		nx_cli_error("kernel", "list takes no arguments");
		return NX_EXIT_USAGE;
	}
	k = nx_kernels(&n);
	for (size_t i = 0; i < n; i++)
		printf("%-17s %s (default --size %u, %s)\n", k[i]->name, k[i]->summary,
		       k[i]->default_size, k[i]->source);
	return NX_EXIT_OK;
}

static int do_asm(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct nx_neff neff;
	struct nx_err err = { 0 };
	const char *out = NULL;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'h':
			printf("usage: neuron-explorer kernel asm LISTING -o K.neff\n\n"
			       "Assembles a kernel listing (docs/formats/listing.md) into a NEFF with\n"
			       "kernel debug info, so profiles point at the listing's source lines.\n");
			return NX_EXIT_OK;
		default:
			return NX_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc || !out) {
		nx_cli_error("kernel", "asm needs one LISTING and -o K.neff");
		return NX_EXIT_USAGE;
	}
	if (nx_listing_assemble_file(argv[optind], &neff, &err)) {
		nx_cli_error("kernel", "%s", err.msg);
		return NX_EXIT_FAIL;
	}
	rc = write_neff(out, &neff);
	nx_neff_release(&neff);
	return rc;
}

static int do_gen(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "size", required_argument, NULL, 's' },
		{ "target", required_argument, NULL, 't' },
		{ "listing", required_argument, NULL, 'l' },
		{ "instr-fetch", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct nx_kernel_def *k;
	struct nx_kopts ko = { .size = 0, .target = "trn2" };
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_neff neff;
	struct nx_err err = { 0 };
	const char *out = NULL, *listing = NULL;
	unsigned long long size;
	bool quiet = false;
	char name[160];
	int c, rc = NX_EXIT_FAIL;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 's':
			if (nx_cli_uint("kernel gen", "--size", optarg, 1, UINT32_MAX, &size))
				return NX_EXIT_USAGE;
			ko.size = (unsigned)size;
			break;
		case 'q':
			quiet = true;
			break;
		case 't':
			ko.target = optarg;
			break;
		case 'l':
			listing = optarg;
			break;
		case 'f':
			ko.instr_fetch = true;
			break;
		case 'h':
			printf("usage: neuron-explorer kernel gen NAME [--size N] [--target trn2|trn1]\n"
			       "                                  [--listing FILE] -o K.neff\n\n"
			       "Generates a library kernel ('neuron-explorer kernel list') as a NEFF.\n"
			       "  --size N         problem size (each kernel says what it scales)\n"
			       "  --target T       SBUF budget to plan buffers for (default trn2)\n"
			       "  --listing FILE   also write the generated listing to FILE\n"
			       "  --instr-fetch    declare instruction queues, so captures include\n"
			       "                   instruction-fetch DMA traffic\n"
			       "  -q, --quiet      no line on stderr saying what was written\n");
			return NX_EXIT_OK;
		default:
			return NX_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc || !out) {
		nx_cli_error("kernel", "gen needs one kernel NAME and -o K.neff");
		return NX_EXIT_USAGE;
	}
	k = nx_kernel_find(argv[optind]);
	if (!k) {
		nx_cli_error("kernel", "no library kernel '%s' (see 'neuron-explorer kernel list')",
			     argv[optind]);
		return NX_EXIT_USAGE;
	}
	if (nx_kernel_listing(k, &ko, &sb, &err)) {
		nx_cli_error("kernel", "%s", err.msg);
		rc = err.code == NX_EUSAGE ? NX_EXIT_USAGE : NX_EXIT_FAIL;
		goto out;
	}
	if (listing && nx_write_file_atomic(listing, sb.buf, sb.len, &err)) {
		nx_cli_error("kernel", "writing '%s': %s", listing, err.msg);
		goto out;
	}
	snprintf(name, sizeof(name), "%s.listing", k->name);
	if (nx_listing_assemble(name, nx_strbuf_str(&sb), sb.len, &neff, &err)) {
		nx_cli_error("kernel", "%s", err.msg);
		goto out;
	}
	rc = write_neff(out, &neff);
	if (!rc && !quiet)
		fprintf(stderr, "kernel: wrote %s: %s, size %u, %zu instructions\n", out, k->name,
			ko.size ? ko.size : k->default_size, count_insts(&neff));
	nx_neff_release(&neff);
out:
	nx_strbuf_release(&sb);
	return rc;
}

int cmd_kernel(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return NX_EXIT_USAGE;
	}
	if (is_help(argv[1])) {
		usage(stdout);
		return NX_EXIT_OK;
	}
	if (!strcmp(argv[1], "list"))
		return do_list(argc - 1, argv + 1);
	if (!strcmp(argv[1], "asm"))
		return do_asm(argc - 1, argv + 1);
	if (!strcmp(argv[1], "gen"))
		return do_gen(argc - 1, argv + 1);
	nx_cli_error("kernel", "'%s' is not a kernel verb (asm, gen, list)", argv[1]);
	usage(stderr);
	return NX_EXIT_USAGE;
}
