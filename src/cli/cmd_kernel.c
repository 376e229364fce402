/* SPDX-License-Identifier: MIT
 * cmd_kernel.c: `neuron-explorer kernel`, the kernel tools:
 *   kernel asm LISTING -o K.neff            pack a kernel listing into a NEFF
 *     [--attach-source FILE]...             carrying the kernel's source files
 *     [--listing FILE]                      and keep a copy of the listing
 *   kernel asm --check -o K.neff [--listing FILE]   may these outputs be written?
 *   kernel gen NAME [--size N] -o K.neff    generate a library kernel
 *   kernel list                             names and one-line descriptions
 * The listing format is described in docs/formats/listing.md. */
#include "common/compat.h"
#include "cli/cli_opts.h"
#include "cli/cli_output.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "kernels/library.h"
#include "kernels/listing.h"
#include "neff/neff.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void usage(FILE *f)
{
	nx_cli_usage(f, "usage: neuron-explorer kernel asm LISTING -o K.neff [--attach-source FILE]...\n"
		   "                                  [--listing FILE] [--check]\n"
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

	nx_cli_guard_outputs();
	if (nx_neff_write(path, neff, &err)) {
		nx_cli_error("kernel", "writing '%s': %s", path, err.msg);
		return err.code == NX_EUSAGE ? NX_EXIT_USAGE : NX_EXIT_FAIL;
	}
	return NX_EXIT_OK;
}

static int do_list(int argc, char **argv)
{
	const struct nx_kernel_def *const *k;
	size_t n;

	if (argc > 1 && is_help(argv[1])) {
		nx_cli_usage(stdout, "usage: neuron-explorer kernel list\n\n"
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

/* A source file, added to src (NEFF member kernel_source/<its name>). */
static int read_source(const char *path, struct nx_neff_source *src, struct nx_err *err)
{
	const char *base = strrchr(path, '/');
	char *text = NULL;
	size_t len = 0;
	struct stat st;
	int rc;

	base = base ? base + 1 : path;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return nx_errf(err, NX_EUSAGE, "--attach-source '%s' is not a regular file", path);
	if ((rc = nx_neff_source_check(base, (uint64_t)st.st_size, err)) ||
	    (rc = nx_read_file(path, &text, &len, err)) ||
	    (rc = nx_neff_source_check(base, len, err))) { /* it may have grown meanwhile */
		free(text);
		nx_err_wrap(err, "--attach-source '%s'", path);
		return rc;
	}
	nx_neff_source_add(src, nx_xstrdup(base), (uint8_t *)text, len);
	return 0;
}

/* Whether path names the same file as one of the first n paths (a file given twice is
 * attached once). */
static bool same_file_before(const char *const *paths, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (nx_out_same_path(paths[i], path))
			return true;
	return false;
}

/* The command line of `kernel asm`, as parsed. */
struct asm_args {
	const char *in, *out, *listing;
	const char *sources[NX_NEFF_SOURCE_FILES_MAX];
	size_t nsources;
	bool check;
};

static void asm_usage(void)
{
	nx_cli_usage(stdout, "usage: neuron-explorer kernel asm LISTING -o K.neff "
	       "[--attach-source FILE]... [--listing FILE]\n"
	       "       neuron-explorer kernel asm --check -o K.neff [--listing FILE]\n\n"
	       "Assembles a kernel listing (docs/formats/listing.md) into a NEFF with\n"
	       "kernel debug info, so profiles point at the listing's source lines.\n"
	       "  --attach-source FILE  the NEFF carries FILE, named by its file name\n"
	       "                        alone, which 'view' attaches to the profile for\n"
	       "                        its source view; again for more files (the\n"
	       "                        kernel's own first, then its helpers': at most\n"
	       "                        %d, of " NX_NEFF_SOURCE_MAX_TEXT " in all, each name once;\n"
	       "                        a file given twice is attached once)\n"
	       "  --listing FILE        also write a copy of the listing to FILE\n"
	       "  --check               only check that the outputs may be written (no\n"
	       "                        LISTING; nothing is read or written)\n"
	       "An existing K.neff (or listing FILE) is replaced only when it is a NEFF (a\n"
	       "listing neuron-explorer wrote); anything else is refused.\n",
	       NX_NEFF_SOURCE_FILES_MAX);
}

/* Returns an exit status, or -1 when --help was answered. */
static int parse_asm(int argc, char **argv, struct asm_args *a)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "attach-source", required_argument, NULL, 'a' },
		{ "listing", required_argument, NULL, 'l' },
		{ "check", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	memset(a, 0, sizeof(*a));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': a->out = optarg; break;
		case 'l': a->listing = optarg; break;
		case 'c': a->check = true; break;
		case 'a':
			if (same_file_before(a->sources, a->nsources, optarg))
				break;
			if (a->nsources == NX_NEFF_SOURCE_FILES_MAX) {
				nx_cli_error("kernel asm", "more than %d --attach-source files",
					     NX_NEFF_SOURCE_FILES_MAX);
				return NX_EXIT_USAGE;
			}
			a->sources[a->nsources++] = optarg;
			break;
		case 'h':
			asm_usage();
			return -1;
		default:
			return nx_cli_bad_option("kernel asm", c, argv);
		}
	}
	if (a->check ? optind != argc || !a->out : optind + 1 != argc || !a->out) {
		nx_cli_error("kernel", a->check ? "asm --check takes -o K.neff and no LISTING"
						: "asm needs one LISTING and -o K.neff");
		return NX_EXIT_USAGE;
	}
	a->in = a->check ? NULL : argv[optind];
	if (a->listing && nx_out_same_path(a->listing, a->out)) {
		nx_cli_error("kernel asm", "--listing '%s' and -o '%s' are the same file", a->listing,
			     a->out);
		return NX_EXIT_USAGE;
	}
	rc = nx_cli_out_file("kernel asm", a->out, NX_CLI_OUT_NEFF, 0);
	if (!rc && a->listing)
		rc = nx_cli_out_file("kernel asm", a->listing, NX_CLI_OUT_LISTING, 0);
	return rc;
}

/* Assembles the listing with its sources, writes the listing's copy, then the NEFF. */
static int run_asm(const struct asm_args *a)
{
	struct nx_neff neff;
	struct nx_err err = { 0 };
	char *text = NULL;
	size_t len = 0;
	int rc = 0;

	memset(&neff, 0, sizeof(neff));
	if (nx_read_file(a->in, &text, &len, &err) ||
	    nx_listing_assemble(a->in, text, len, &neff, &err)) {
		nx_cli_error("kernel", "%s", err.msg);
		free(text);
		return NX_EXIT_FAIL;
	}
	for (size_t i = 0; i < a->nsources && !rc; i++)
		rc = read_source(a->sources[i], &neff.source, &err);
	if (rc || (rc = nx_neff_source_check_all(&neff.source, &err))) {
		nx_cli_error("kernel asm", "%s", err.msg);
		rc = err.code == NX_EUSAGE ? NX_EXIT_USAGE : NX_EXIT_FAIL;
		goto out;
	}
	/* the listing's copy first, so its text goes before the NEFF is laid out */
	nx_cli_guard_outputs();
	if (a->listing && nx_out_file_write(a->listing, &nx_listing_out_kind, 0, text, len, &err)) {
		nx_cli_error("kernel asm", "writing '%s': %s", a->listing, err.msg);
		rc = err.code == NX_EUSAGE ? NX_EXIT_USAGE : NX_EXIT_FAIL;
		goto out;
	}
	free(text);
	text = NULL;
	rc = write_neff(a->out, &neff);
out:
	nx_neff_release(&neff);
	free(text);
	return rc;
}

static int do_asm(int argc, char **argv)
{
	struct asm_args a;
	int rc = parse_asm(argc, argv, &a);

	if (rc)
		return rc < 0 ? NX_EXIT_OK : rc;
	return a.check ? NX_EXIT_OK : run_asm(&a);
}

static void gen_usage(void)
{
	nx_cli_usage(stdout, "usage: neuron-explorer kernel gen NAME [--size N] [--target trn2|trn1]\n"
	       "                                  [--listing FILE] -o K.neff\n\n"
	       "Generates a library kernel ('neuron-explorer kernel list') as a NEFF.\n"
	       "  --size N         problem size (each kernel says what it scales)\n"
	       "  --target T       SBUF budget to plan buffers for (default trn2)\n"
	       "  --listing FILE   also write the generated listing to FILE\n"
	       "  --instr-fetch    declare instruction queues, so captures include\n"
	       "                   instruction-fetch DMA traffic\n"
	       "  -q, --quiet      no line on stderr saying what was written\n"
	       "An existing K.neff (or listing FILE) is replaced only when it is a NEFF (a\n"
	       "listing this command wrote); anything else is refused.\n");
}

/* The command line of `kernel gen`, as parsed. */
struct gen_args {
	struct nx_cli_common co;
	const char *out, *listing;
	const struct nx_kernel_def *k;
	struct nx_kopts ko;
};

/* Returns an exit status; NX_EXIT_OK with co.help set when --help was answered. */
static int parse_gen(int argc, char **argv, struct gen_args *a)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "size", required_argument, NULL, 's' },
		{ "target", required_argument, NULL, 't' },
		{ "listing", required_argument, NULL, 'l' },
		{ "instr-fetch", no_argument, NULL, 'f' },
		NX_CLI_LONG_QUIET,
		NX_CLI_LONG_HELP,
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long size;
	int c;

	memset(a, 0, sizeof(*a));
	nx_cli_common_init(&a->co, "kernel gen");
	a->ko.target = "trn2";
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:qh", opts, NULL)) != -1) {
		if (nx_cli_common_opt(&a->co, c, optarg)) {
			if (a->co.help) {
				gen_usage();
				return NX_EXIT_OK;
			}
			continue;
		}
		switch (c) {
		case 'o': a->out = optarg; break;
		case 's':
			if (nx_cli_uint("kernel gen", "--size", optarg, 1, UINT32_MAX, &size))
				return NX_EXIT_USAGE;
			a->ko.size = (unsigned)size;
			break;
		case 't': a->ko.target = optarg; break;
		case 'l': a->listing = optarg; break;
		case 'f': a->ko.instr_fetch = true; break;
		default: return nx_cli_bad_option("kernel gen", c, argv);
		}
	}
	if (optind + 1 != argc || !a->out) {
		nx_cli_error("kernel", "gen needs one kernel NAME and -o K.neff");
		return NX_EXIT_USAGE;
	}
	a->k = nx_kernel_find(argv[optind]);
	if (!a->k) {
		nx_cli_error("kernel", "no library kernel '%s' (see '%s kernel list')",
			     argv[optind], nx_cli_prog);
		return NX_EXIT_USAGE;
	}
	if (a->listing && nx_out_same_path(a->listing, a->out)) {
		nx_cli_error("kernel gen", "--listing '%s' and -o '%s' are the same file", a->listing,
			     a->out);
		return NX_EXIT_USAGE;
	}
	int rc = nx_cli_out_file("kernel gen", a->out, NX_CLI_OUT_NEFF, 0);
	if (!rc && a->listing)
		rc = nx_cli_out_file("kernel gen", a->listing, NX_CLI_OUT_LISTING, 0);
	return rc;
}

/* Generates the listing, writes it when asked, assembles and writes the NEFF. */
static int run_gen(const struct gen_args *a)
{
	const struct nx_kernel_def *k = a->k;
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_neff neff;
	struct nx_err err = { 0 };
	char name[160];
	int rc = NX_EXIT_FAIL;

	if (nx_kernel_listing(k, &a->ko, &sb, &err)) {
		nx_cli_error("kernel", "%s", err.msg);
		rc = err.code == NX_EUSAGE ? NX_EXIT_USAGE : NX_EXIT_FAIL;
		goto out;
	}
	nx_cli_guard_outputs();
	if (a->listing && nx_out_file_write(a->listing, &nx_listing_out_kind, 0, sb.buf, sb.len,
					    &err)) {
		nx_cli_error("kernel", "writing '%s': %s", a->listing, err.msg);
		rc = err.code == NX_EUSAGE ? NX_EXIT_USAGE : NX_EXIT_FAIL;
		goto out;
	}
	snprintf(name, sizeof(name), "%s.listing", k->name);
	if (nx_listing_assemble(name, nx_strbuf_str(&sb), sb.len, &neff, &err)) {
		nx_cli_error("kernel", "%s", err.msg);
		goto out;
	}
	rc = write_neff(a->out, &neff);
	if (!rc && !a->co.quiet)
		fprintf(stderr, "kernel: wrote %s: %s, size %u, %zu instructions\n", a->out,
			k->name, a->ko.size ? a->ko.size : k->default_size, count_insts(&neff));
	nx_neff_release(&neff);
out:
	nx_strbuf_release(&sb);
	return rc;
}

static int do_gen(int argc, char **argv)
{
	struct gen_args a;
	int rc = parse_gen(argc, argv, &a);

	if (rc || a.co.help)
		return rc;
	return run_gen(&a);
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
