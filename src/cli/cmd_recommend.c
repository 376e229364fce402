/* SPDX-License-Identifier: MIT
 * cmd_recommend.c: `neuron-explorer recommend`. Analyses a profile (ingesting a
 * NEFF + NTFF first when given) and prints the performance report: bounds, gaps,
 * investigations localised to source lines, or the before/after comparison of two
 * profiles. Deterministic: no network, no language model (src/analysis/). */
#include "common/compat.h"
#include "cli/cli_opts.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "analysis/recommend.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "fleet/fleet.h"
#include "ingest/ingest.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	nx_cli_usage(out,
		"usage: neuron-explorer recommend -n NEFF -s NTFF [--nki-source-root DIR]\n"
		"                                 [--data-path DIR] [--display-name NAME]\n"
		"       neuron-explorer recommend --data-path DIR --display-name NAME\n"
		"       neuron-explorer recommend --compare A B [--data-path DIR]\n"
		"       (all forms: [--window T0:T1|kernel|dpa] [--format markdown|json] [--details])\n"
		"\n"
		"Computes the performance bounds of a kernel profile (memory, compute, pipeline),\n"
		"their gaps, the bottleneck engine, and runs the investigations below, each\n"
		"localised to source lines. With -n/-s the pair is ingested first, into a\n"
		"temporary data path unless --data-path is given. A display name that is a fleet\n"
		"run (fleet index) analyses every device member, slowest first, after a run-wide\n"
		"part that sets them side by side. See docs/recommend.md for the method.\n"
		"\n"
		"investigations (their ids in the JSON report):\n");
	for (size_t i = 0; nx_recommend_investigation(i, NULL); i++) {
		const char *title, *id = nx_recommend_investigation(i, &title);
		fprintf(out, "  %-18s %s\n", id, title);
	}
	fprintf(out,
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
		NX_CLI_DEFAULT_DATA_PATH);
}

enum { OPT_COMPARE = 256, OPT_WINDOW, OPT_FORMAT, OPT_SRC, OPT_DETAILS };

static const struct option long_opts[] = {
	{ "neff-path", required_argument, NULL, 'n' },
	{ "session-file", required_argument, NULL, 's' },
	{ "nki-source-root", required_argument, NULL, OPT_SRC },
	NX_CLI_LONG_DATA_PATH,
	NX_CLI_LONG_DISPLAY_NAME,
	{ "compare", required_argument, NULL, OPT_COMPARE },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "details", no_argument, NULL, OPT_DETAILS },
	NX_CLI_LONG_HELP,
	{ NULL, 0, NULL, 0 },
};

/* The command line, as parsed. */
struct rec_args {
	struct nx_cli_common co;
	const char *neff, *ntff, *cmp_a, *cmp_b;
	struct nx_recommend_opts o;
};

/* What prepare() sets up, released by release_run(). */
struct rec_run {
	char *data_path, *tmp, *dir_a, *dir_b, *name;
	bool fleet; /* dir_a is a fleet run's index: its members are analysed */
};

/* Whether dir is the index profile of a fleet run. */
static bool is_fleet_run(const char *dir)
{
	char *members = nx_path_join(dir, NX_FLEET_MEMBERS);
	bool yes = nx_is_file(members);

	free(members);
	return yes;
}

/* A profile given as a directory, or as a display name in the data path. */
static char *resolve(const char *data_path, const char *what)
{
	if (nx_is_dir(what))
		return nx_xstrdup(what);
	return nx_profile_dir(data_path, what);
}

/* Whether the profile dir exists; says how to make it when it does not. */
static bool have_profile(const char *dir, const char *what, const char *data_path)
{
	if (nx_is_dir(dir))
		return true;
	nx_cli_error("recommend", "no profile '%s' in the data path '%s' (%s): ingest it first "
		     "with 'neuron-explorer view -n NEFF -s NTFF --data-path %s --display-name %s', "
		     "or give -n/-s here", what, data_path, dir, data_path, what);
	return false;
}

static int usage_error(const char *fmt, const char *arg)
{
	nx_cli_error("recommend", fmt, arg);
	nx_cli_usage(stderr, "try 'neuron-explorer recommend --help'\n");
	return NX_EXIT_USAGE;
}

/* One option of recommend's own (the common ones are taken before). */
static int parse_opt(struct rec_args *a, int c, int argc, char **argv)
{
	struct nx_err err = { 0 };

	switch (c) {
	case 'n': a->neff = optarg; break;
	case 's': a->ntff = optarg; break;
	case OPT_SRC: a->o.source_root = optarg; break;
	case OPT_COMPARE:
		if (optind >= argc || argv[optind][0] == '-')
			return usage_error("--compare needs two profiles (A B)%s", "");
		a->cmp_a = optarg;
		a->cmp_b = argv[optind++];
		break;
	case OPT_WINDOW:
		if (nx_recommend_parse_window(&a->o, optarg, &err))
			return usage_error("%s", err.msg);
		break;
	case OPT_DETAILS: a->o.details = true; break;
	case OPT_FORMAT:
		if (!strcmp(optarg, "json"))
			a->o.format = NX_REC_JSON;
		else if (!strcmp(optarg, "markdown") || !strcmp(optarg, "md"))
			a->o.format = NX_REC_MARKDOWN;
		else
			return usage_error("unknown --format '%s' (markdown or json)", optarg);
		break;
	case ':':
		return usage_error("option '%s' needs a value", argv[optind - 1]);
	default:
		return usage_error("unknown option '%s'", argv[optind - 1]);
	}
	return NX_EXIT_OK;
}

/* Every argument is checked before any work. */
static int check_args(const struct rec_args *a)
{
	const char *cmd = "recommend";

	if (!!a->neff != !!a->ntff)
		return usage_error("-n and -s go together%s", "");
	if (a->neff && a->cmp_a)
		return usage_error("--compare takes ingested profiles, not -n/-s%s", "");
	if (!a->neff && !a->cmp_a && !a->co.display_name)
		return usage_error("nothing to analyse: give -n/-s, --display-name or "
				   "--compare%s", "");
	if (nx_cli_common_check(&a->co))
		return NX_EXIT_USAGE;
	if (a->cmp_a && ((!nx_is_dir(a->cmp_a) && nx_cli_name(cmd, a->cmp_a)) ||
			 (!nx_is_dir(a->cmp_b) && nx_cli_name(cmd, a->cmp_b))))
		return NX_EXIT_USAGE;
	if (a->o.source_root && !nx_is_dir(a->o.source_root)) {
		nx_cli_error(cmd, "--nki-source-root '%s' is not a directory", a->o.source_root);
		return NX_EXIT_USAGE;
	}
	return NX_EXIT_OK;
}

static int parse(int argc, char **argv, struct rec_args *a)
{
	int c, rc;

	memset(a, 0, sizeof(*a));
	nx_cli_common_init(&a->co, "recommend");
	nx_recommend_opts_init(&a->o);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:s:h", long_opts, NULL)) != -1) {
		if (nx_cli_common_opt(&a->co, c, optarg)) {
			if (a->co.help) {
				usage(stdout);
				return NX_EXIT_OK;
			}
		} else if ((rc = parse_opt(a, c, argc, argv))) {
			return rc;
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	return check_args(a);
}

/* --compare with one profile twice (by name or directory): a follow-up report of a
 * profile against itself says nothing. Prints the refusal. */
static bool same_profile(const struct rec_args *a, const struct rec_run *r)
{
	char *ra = realpath(r->dir_a, NULL), *rb = realpath(r->dir_b, NULL);
	bool same = ra && rb && !strcmp(ra, rb);

	if (same)
		nx_cli_error("recommend", "--compare needs two different profiles; '%s' and '%s' "
			     "are the same profile (%s)", a->cmp_a, a->cmp_b, ra);
	free(ra);
	free(rb);
	return same;
}

/* The profile directories to analyse: -n/-s ingested first (into a temporary data
 * path unless --data-path is given), or the ones named. */
static int prepare(const struct rec_args *a, struct rec_run *r)
{
	struct nx_ingest_opts io = { 0 };
	struct nx_err err = { 0 };

	if (a->neff) {
		r->name = a->co.display_name ? nx_xstrdup(a->co.display_name)
					     : nx_cli_default_name(a->ntff);
		if (!a->co.display_name && nx_check_display_name(r->name, &err)) {
			nx_cli_error("recommend", "the name taken from '%s' is not usable: %s; "
				     "give --display-name", a->ntff, err.msg);
			return NX_EXIT_USAGE;
		}
	}
	if (a->neff && !a->co.data_path_given) {
		if (!(r->tmp = nx_cli_tmp_data_path("recommend", "recommend")))
			return NX_EXIT_FAIL;
		r->data_path = nx_xstrdup(r->tmp);
	} else {
		r->data_path = nx_cli_common_data_path(&a->co);
	}
	if (a->cmp_a) {
		r->dir_a = resolve(r->data_path, a->cmp_a);
		r->dir_b = resolve(r->data_path, a->cmp_b);
		if (!have_profile(r->dir_a, a->cmp_a, r->data_path) ||
		    !have_profile(r->dir_b, a->cmp_b, r->data_path))
			return NX_EXIT_FAIL;
		if (is_fleet_run(r->dir_a) || is_fleet_run(r->dir_b)) {
			nx_cli_error("recommend", "--compare takes two profiles, and '%s' is a fleet "
				     "run: compare two of its members", is_fleet_run(r->dir_a)
				     ? a->cmp_a : a->cmp_b);
			return NX_EXIT_USAGE;
		}
		return same_profile(a, r) ? NX_EXIT_USAGE : NX_EXIT_OK;
	}
	if (!a->neff) {
		r->dir_a = nx_profile_dir(r->data_path, a->co.display_name);
		if (!have_profile(r->dir_a, a->co.display_name, r->data_path))
			return NX_EXIT_FAIL;
		r->fleet = is_fleet_run(r->dir_a);
		return NX_EXIT_OK;
	}
	io.neff_path = a->neff;
	io.ntff_path = a->ntff;
	io.data_path = r->data_path;
	io.display_name = r->name;
	io.quiet = true;
	if (nx_ingest(&io, &r->dir_a, &err)) {
		nx_cli_error("recommend", "%s", err.msg);
		return NX_EXIT_FAIL;
	}
	return NX_EXIT_OK;
}

/* Analyses and prints the report. */
static int run(struct rec_args *a, const struct rec_run *r)
{
	struct nx_strbuf out = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	int rc;

	a->o.profile_dir = r->dir_a;
	a->o.compare_dir = r->dir_b;
	if (r->fleet ? nx_fleet_recommend(r->data_path, a->co.display_name, 0, &a->o, &out, &err)
		     : nx_recommend_run(&a->o, &out, &err)) {
		nx_cli_error("recommend", "%s", err.msg);
		rc = err.code == NX_EUSAGE ? NX_EXIT_USAGE : NX_EXIT_FAIL;
	} else {
		fwrite(out.buf, 1, out.len, stdout);
		rc = fflush(stdout) ? NX_EXIT_FAIL : NX_EXIT_OK;
	}
	nx_strbuf_release(&out);
	return rc;
}

int cmd_recommend(int argc, char **argv)
{
	struct rec_args a;
	struct rec_run r = { 0 };
	int rc = parse(argc, argv, &a);

	if (rc || a.co.help)
		return rc;
	rc = prepare(&a, &r);
	if (!rc)
		rc = run(&a, &r);
	nx_cli_tmp_release(r.tmp);
	free(r.data_path);
	free(r.dir_a);
	free(r.dir_b);
	free(r.name);
	return rc;
}
