/* SPDX-License-Identifier: MIT
 * cmd_recommend.c: `neuron-explorer recommend`. Analyses a profile (ingesting a
 * NEFF + NTFF first when given) and prints the performance report: bounds, gaps,
 * investigations localised to source lines, or the before/after comparison of two
 * profiles. Deterministic: no network, no language model (src/analysis/). */
#include "common/compat.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "analysis/recommend.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "ingest/ingest.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_DATA_PATH "~/.local/share/neuron-profile"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: neuron-explorer recommend -n NEFF -s NTFF [--nki-source-root DIR]\n"
		"                                 [--data-path DIR] [--display-name NAME]\n"
		"       neuron-explorer recommend --data-path DIR --display-name NAME\n"
		"       neuron-explorer recommend --compare A B [--data-path DIR]\n"
		"       (all forms: [--window T0:T1|kernel|dpa] [--format markdown|json] [--details])\n"
		"\n"
		"Computes the performance bounds of a kernel profile (memory, compute, pipeline),\n"
		"their gaps, the bottleneck engine, and runs the investigations (DMA efficiency,\n"
		"redundant DMA transfers, Tensor engine tiles and transposes, serialisation\n"
		"between engines), each localised to source lines. With -n/-s the pair is ingested\n"
		"first, into a temporary data path unless --data-path is given. See\n"
		"docs/recommend.md for the method.\n"
		"\n"
		"options:\n"
		"  -n, --neff-path FILE     compiled kernel (NEFF)\n"
		"  -s, --session-file FILE  device trace (NTFF) captured from it\n"
		"      --nki-source-root D  kernel sources (a directory): each finding quotes the\n"
		"                           code of its top source lines (Markdown report)\n"
		"      --data-path DIR      workspace of ingested profiles (default %s)\n"
		"      --display-name NAME  the profile to analyse (or to ingest -n/-s as): letters,\n"
		"                           digits, '-', '_' and '.' (not first), at most 200\n"
		"                           characters, without '.tmp'\n"
		"      --compare A B        follow-up report: A (before) and B (after) side by side;\n"
		"                           each is a profile directory or a name in --data-path\n"
		"      --window SPEC        T0:T1 (profile timestamps in ns, half-open, 0 or more;\n"
		"                           a window reaching past the profile is clipped to it and\n"
		"                           the report says so, one that misses it is refused),\n"
		"                           'kernel' (extent of the kernel DMA packets) or 'dpa'\n"
		"                           (extent of DmaPacketAggregated); default: the whole\n"
		"                           kernel, from Summary\n"
		"      --format FMT         markdown (default) or json\n"
		"      --details            Markdown: add the method's choices and the Step 1\n"
		"                           tables of every investigation (JSON always has them)\n"
		"  -h, --help               this text\n",
		DEFAULT_DATA_PATH);
}

enum {
	OPT_DATA_PATH = 256, OPT_DISPLAY_NAME, OPT_COMPARE, OPT_WINDOW, OPT_FORMAT, OPT_SRC,
	OPT_DETAILS,
};

static const struct option long_opts[] = {
	{ "neff-path", required_argument, NULL, 'n' },
	{ "session-file", required_argument, NULL, 's' },
	{ "nki-source-root", required_argument, NULL, OPT_SRC },
	{ "data-path", required_argument, NULL, OPT_DATA_PATH },
	{ "display-name", required_argument, NULL, OPT_DISPLAY_NAME },
	{ "compare", required_argument, NULL, OPT_COMPARE },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "details", no_argument, NULL, OPT_DETAILS },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static char *base_name(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dot = strchr(base, '.');
	return nx_xstrndup(base, dot && dot != base ? (size_t)(dot - base) : strlen(base));
}

/* A profile given as a directory, or as a display name in the data path. */
static char *resolve(const char *data_path, const char *what)
{
	if (nx_is_dir(what))
		return nx_xstrdup(what);
	return nx_profile_dir(data_path, what);
}

static int usage_error(const char *fmt, const char *arg)
{
	nx_cli_error("recommend", fmt, arg);
	fprintf(stderr, "try 'neuron-explorer recommend --help'\n");
	return NX_EXIT_USAGE;
}

int cmd_recommend(int argc, char **argv)
{
	const char *neff = NULL, *ntff = NULL, *data_opt = NULL, *name_opt = NULL;
	const char *cmp_a = NULL, *cmp_b = NULL;
	char *data_path = NULL, *tmp = NULL, *dir_a = NULL, *dir_b = NULL, *name = NULL;
	struct nx_recommend_opts o;
	struct nx_strbuf out = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	int c, rc = NX_EXIT_FAIL;

	nx_recommend_opts_init(&o);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:s:h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'n': neff = optarg; break;
		case 's': ntff = optarg; break;
		case OPT_SRC: o.source_root = optarg; break;
		case OPT_DATA_PATH: data_opt = optarg; break;
		case OPT_DISPLAY_NAME: name_opt = optarg; break;
		case OPT_COMPARE:
			if (optind >= argc || argv[optind][0] == '-')
				return usage_error("--compare needs two profiles (A B)%s", "");
			cmp_a = optarg;
			cmp_b = argv[optind++];
			break;
		case OPT_WINDOW:
			if (nx_recommend_parse_window(&o, optarg, &err))
				return usage_error("%s", err.msg);
			break;
		case OPT_DETAILS:
			o.details = true;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "json"))
				o.format = NX_REC_JSON;
			else if (!strcmp(optarg, "markdown") || !strcmp(optarg, "md"))
				o.format = NX_REC_MARKDOWN;
			else
				return usage_error("unknown --format '%s' (markdown or json)", optarg);
			break;
		case 'h':
			usage(stdout);
			return NX_EXIT_OK;
		case ':':
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!!neff != !!ntff)
		return usage_error("-n and -s go together%s", "");
	if (neff && cmp_a)
		return usage_error("--compare takes ingested profiles, not -n/-s%s", "");
	if (!neff && !cmp_a && !name_opt)
		return usage_error("nothing to analyse: give -n/-s, --display-name or --compare%s", "");
	/* every argument is checked before any work */
	if (data_opt && nx_cli_data_path("recommend", data_opt))
		return NX_EXIT_USAGE;
	if (name_opt && nx_cli_name("recommend", name_opt))
		return NX_EXIT_USAGE;
	if (cmp_a && ((!nx_is_dir(cmp_a) && nx_cli_name("recommend", cmp_a)) ||
		      (!nx_is_dir(cmp_b) && nx_cli_name("recommend", cmp_b))))
		return NX_EXIT_USAGE;
	if (o.source_root && !nx_is_dir(o.source_root)) {
		nx_cli_error("recommend", "--nki-source-root '%s' is not a directory", o.source_root);
		return NX_EXIT_USAGE;
	}
	if (neff && !name_opt) {
		name = base_name(ntff);
		if (nx_check_display_name(name, &err)) {
			nx_cli_error("recommend", "the name taken from '%s' is not usable: %s; give "
				     "--display-name", ntff, err.msg);
			rc = NX_EXIT_USAGE;
			goto out;
		}
	}

	if (neff && !data_opt) {
		tmp = nx_cli_tmp_data_path("recommend", "recommend");
		if (!tmp)
			goto out;
		data_path = nx_xstrdup(tmp);
	} else {
		data_path = nx_expand_home(data_opt ? data_opt : DEFAULT_DATA_PATH);
	}

	if (neff) {
		struct nx_ingest_opts io = { 0 };
		if (!name)
			name = nx_xstrdup(name_opt);
		io.neff_path = neff;
		io.ntff_path = ntff;
		io.data_path = data_path;
		io.display_name = name;
		io.quiet = true;
		if (nx_ingest(&io, &dir_a, &err)) {
			nx_cli_error("recommend", "%s", err.msg);
			goto out;
		}
	} else if (cmp_a) {
		dir_a = resolve(data_path, cmp_a);
		dir_b = resolve(data_path, cmp_b);
	} else {
		dir_a = nx_profile_dir(data_path, name_opt);
	}
	o.profile_dir = dir_a;
	o.compare_dir = dir_b;
	if (nx_recommend_run(&o, &out, &err)) {
		nx_cli_error("recommend", "%s", err.msg);
		rc = err.code == NX_EUSAGE ? NX_EXIT_USAGE : NX_EXIT_FAIL;
		goto out;
	}
	fwrite(out.buf, 1, out.len, stdout);
	rc = fflush(stdout) ? NX_EXIT_FAIL : NX_EXIT_OK;
out:
	nx_cli_tmp_release(tmp);
	nx_strbuf_release(&out);
	free(data_path);
	free(dir_a);
	free(dir_b);
	free(name);
	return rc;
}
