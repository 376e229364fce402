/* SPDX-License-Identifier: MIT
 * cmd_view.c: `neuron-explorer view`. Ingests a NEFF + NTFF into parquet tables under
 * the data path, then (unless --ingest-only) serves the query API and the web UI on 127.0.0.1. With
 * no inputs it serves what the data path already holds, or, with an export format and
 * --display-name, writes that export of an ingested profile. */
#include "common/compat.h"
#include "cli/cli_opts.h"
#include "cli/cli_output.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/view_cache.h"
#include "cli/view_dir.h"
#include "cli/view_progress.h"
#include "cli/view_output.h"
#include "common/fsutil.h"
#include "common/outpath.h"
#include "common/xalloc.h"
#include "ingest/ingest.h"
#include "schema/schema.h"
#include "server/server.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *out)
{
	nx_cli_usage(out,
		"usage: neuron-explorer view [-n NEFF -s NTFF | -d DIR] [--data-path DIR] [--display-name NAME]\n"
		"                            [--ingest-only | --disable-ui] [--api-server-port PORT] [--port PORT]\n"
		"                            [--output-format FMT] [--output-file PATH] [--force]\n"
		"\n"
		"Ingests a device profile (a NEFF and the NTFF captured from it) into parquet tables\n"
		"under DIR/profiles/global/NAME@latest/, with the timeline's cache (.timeline/, so the\n"
		"UI's first timeline opens at once), then serves the HTTP query API on\n"
		"127.0.0.1:PORT and the web UI on 127.0.0.1:3001. Without -n/-s it serves the profiles\n"
		"already in DIR; with an export format and --display-name it writes the export of\n"
		"profile NAME, already ingested in DIR.\n"
		"\n"
		"options:\n"
		"  -n, --neff-path FILE        compiled kernel (NEFF)\n"
		"  -s, --session-file FILE     device trace (NTFF) captured from that NEFF\n"
		"  -d, --session-dir DIR       directory mode: every framework trace (Chrome trace\n"
		"                              JSON, .json or .json.gz) and NEFF/NTFF pair found\n"
		"                              under DIR (or one trace file) becomes one profile\n"
		"      --data-path DIR         workspace for processed profiles (default %s)\n"
		"      --display-name NAME     profile name used in directories and API URLs\n"
		"                              (default: the NTFF file name without extension):\n"
		"                              letters, digits, '-', '_' and '.' (not first), at\n"
		"                              most 200 characters, without '.tmp'\n"
		"      --ingest-only           write the tables and exit; no server\n"
		"      --disable-ui            serve only the API, not the web UI\n"
		"      --api-server-port PORT  API port (default 3002; 0 picks a free port)\n"
		"      --port, --ui-port PORT  web UI port (default 3001; 0 picks a free port)\n"
		"      --output-format FMT     parquet (default; 'db' is taken as parquet),\n"
		"                              summary-json ({\"NAME\": {Summary fields}}, one\n"
		"                              member per device profile), summary-text, json (the\n"
		"                              legacy parsable format: summary, instructions, DMA,\n"
		"                              semaphores, ...; docs/formats/json.md), perfetto\n"
		"                              (Chrome trace JSON the Perfetto UI opens). These are\n"
		"                              exports written to stdout (or the output file), which\n"
		"                              then holds only the document; the profile is\n"
		"                              published only when --data-path or --display-name\n"
		"                              is given\n"
		"      --output-file PATH      with parquet: write the tables into this directory\n"
		"                              instead of the data path (nothing is served). It\n"
		"                              must be new or empty, or one an earlier run wrote\n"
		"                              (it holds " NX_OUT_MARKER "), which is then\n"
		"                              replaced whole; anything else is refused.\n"
		"                              Otherwise: write the export to this file ('-' or\n"
		"                              none: stdout; json: default " NX_VIEW_JSON_DEFAULT_FILE "),\n"
		"                              whole or not at all (a temporary file renamed into\n"
		"                              place). An existing file is replaced only when it is\n"
		"                              an export of the same format (known by its first\n"
		"                              bytes); a FIFO or a device is written in place; a\n"
		"                              symbolic link, a directory or another file is\n"
		"                              refused with exit 2, before any work\n"
		"      --force                 with an export: also replace a regular file that is\n"
		"                              not one (never a directory, a link or what it\n"
		"                              points to)\n"
		"      --show-profile-schema   print the profile schema (OpenAPI YAML) and exit\n"
		"  -F ignore-nc-buf-usage=true skip SbufAllocation/SbufUsage/PsumUsage (faster on\n"
		"                              huge traces); --ignore-nc-buf-usage is the same\n"
		"  -q, --quiet                 no progress lines\n"
		"  -h, --help                  this text\n",
		NX_CLI_DEFAULT_DATA_PATH);
}

enum {
	OPT_INGEST_ONLY = 256, OPT_DISABLE_UI, OPT_API_PORT, OPT_UI_PORT, OPT_OUTPUT_FORMAT,
	OPT_OUTPUT_FILE, OPT_SHOW_SCHEMA, OPT_IGNORED_VALUE, OPT_IGNORED_FLAG, OPT_FORCE,
	OPT_IGNORE_BUF,
};

static const struct option long_opts[] = {
	{ "neff-path", required_argument, NULL, 'n' },
	{ "session-file", required_argument, NULL, 's' },
	{ "session-dir", required_argument, NULL, 'd' },
	NX_CLI_LONG_DATA_PATH,
	NX_CLI_LONG_DISPLAY_NAME,
	{ "ingest-only", no_argument, NULL, OPT_INGEST_ONLY },
	{ "disable-ui", no_argument, NULL, OPT_DISABLE_UI },
	{ "api-server-port", required_argument, NULL, OPT_API_PORT },
	{ "port", required_argument, NULL, OPT_UI_PORT },
	{ "ui-port", required_argument, NULL, OPT_UI_PORT },
	{ "output-format", required_argument, NULL, OPT_OUTPUT_FORMAT },
	{ "output-file", required_argument, NULL, OPT_OUTPUT_FILE },
	{ "show-profile-schema", no_argument, NULL, OPT_SHOW_SCHEMA },
	{ "nki-source-root", required_argument, NULL, OPT_IGNORED_VALUE },
	{ "framework-source-root", required_argument, NULL, OPT_IGNORED_VALUE },
	{ "ignore-system-profile", no_argument, NULL, OPT_IGNORED_FLAG },
	{ "force", no_argument, NULL, OPT_FORCE },
	/* the old tool's (neuron-profile) options: the same effect, or none where ours has
	 * nothing to do (an InfluxDB database, Perfetto flow and memory-tracker options) */
	{ "ignore-nc-buf-usage", no_argument, NULL, OPT_IGNORE_BUF },
	{ "db-endpoint", required_argument, NULL, OPT_IGNORED_VALUE },
	{ "db-org", required_argument, NULL, OPT_IGNORED_VALUE },
	{ "db-bucket", required_argument, NULL, OPT_IGNORED_VALUE },
	{ "show-perfetto-flows", no_argument, NULL, OPT_IGNORED_FLAG },
	{ "enable-memory-tracker", no_argument, NULL, OPT_IGNORED_FLAG },
	NX_CLI_LONG_QUIET,
	NX_CLI_LONG_HELP,
	{ NULL, 0, NULL, 0 },
};

/* The command line, as parsed. */
struct view_args {
	struct nx_cli_common co;
	const char *neff, *ntff, *sdir, *format, *output_file;
	bool ingest_only, disable_ui, skip_buf_usage, force;
	bool done; /* --help or --show-profile-schema: answered while parsing */
	unsigned port, ui_port;
};

/* What prepare() sets up for the run, released by release_run(). */
struct view_run {
	char *data_path, *name, *published, *tmp;
	bool parquet, publish;
};

/* A TCP port (0: any free one); prints the error. */
static int parse_port(const char *flag, const char *s, unsigned *port)
{
	unsigned long long v;

	if (nx_cli_uint("view", flag, s, 0, 65535, &v))
		return -1;
	*port = (unsigned)v;
	return 0;
}

/* Device profile ingest; returns an exit status and prints its error. */
static int ingest_device(const char *neff, const char *ntff, const char *data_path,
			 const char *name, const char *output_dir, bool quiet, bool skip_buf_usage,
			 char **published)
{
	struct nx_ingest_opts io = { 0 };
	struct nx_err err = { 0 };

	io.neff_path = neff;
	io.ntff_path = ntff;
	io.data_path = data_path;
	io.display_name = name;
	io.output_dir = output_dir;
	io.quiet = quiet;
	io.skip_buf_usage = skip_buf_usage;
	io.before_publish = &nx_view_cache_hook;
	struct nx_view_progress vp;
	nx_view_progress_init(&vp, quiet);
	io.progress = &vp.cb; /* under -q, warnings only (as view -d) */
	if (!quiet) {
		fprintf(stderr, "Ingesting '%s' + '%s' as '%s'\n", neff, ntff,
			name ? name : output_dir);
	}
	if (nx_ingest(&io, published, &err)) {
		nx_view_progress_clear(&vp);
		nx_cli_error("view", "%s", err.msg);
		return err.code == NX_EUSAGE ? NX_EXIT_USAGE : NX_EXIT_FAIL;
	}
	return NX_EXIT_OK;
}

/* The UI's URL path of a profile name: unreserved bytes as they are, others %XX. */
static void print_profile_url(unsigned ui_port, const char *name)
{
	printf("View profile at http://localhost:%u/profile/", ui_port);
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p))
			putchar(*p);
		else
			printf("%%%02X", *p);
	}
	putchar('\n');
}

static int serve(const char *data_path, unsigned port, bool ui, unsigned ui_port, bool quiet,
		 bool ingested, const char *one_profile)
{
	struct nx_server_opts so;
	struct nx_server *srv = NULL;
	struct nx_err err = { 0 };
	char *profiles = nx_xasprintf("%s/profiles/global", data_path);

	if (nx_mkdirs(profiles, &err)) {
		free(profiles);
		nx_cli_error("view", "%s", err.msg);
		return NX_EXIT_FAIL;
	}
	free(profiles);
	/* what killed ingests and uploads left (their process has ended) goes now */
	nx_remove_stale_tmp_all(data_path);
	nx_server_opts_init(&so, data_path);
	so.port = port;
	so.quiet = quiet;
	so.ui = ui;
	so.ui_port = ui_port;
	if (nx_server_start(&srv, &so, &err)) {
		nx_cli_error("view", "%s%s", err.msg,
			     ingested ? "; the profile itself is ingested (a neuron-explorer "
					"server on the same data path picks it up)" : "");
		return NX_EXIT_FAIL;
	}
	/* scripts wait for this line: the profile is ingested and the API answers */
	printf("Ready: API server listening on http://127.0.0.1:%u/api/v1 (data path %s)\n",
	       nx_server_port(srv), data_path);
	if (ui && one_profile)
		print_profile_url(nx_server_ui_port(srv), one_profile);
	else if (ui)
		printf("View a list of profiles at http://localhost:%u/\n", nx_server_ui_port(srv));
	printf("ctrl-c to exit\n");
	fflush(stdout);
	/* the profile just ingested will be opened in the UI: its timeline cache is built
	 * now, while the browser loads the page, rather than on the first timeline view */
	if (ui && one_profile && nx_server_warm_timeline(srv, one_profile, &err))
		fprintf(stderr, "%s view: note: %s; the timeline cache is built on first use\n",
			nx_cli_prog, err.msg);
	nx_server_wait(srv);
	nx_server_stop(srv);
	return NX_EXIT_OK;
}

/* One option of view's own (the common ones are taken before); returns an exit
 * status, NX_EXIT_OK to go on. */
static int parse_opt(struct view_args *a, int c, char **argv)
{
	switch (c) {
	case 'n': a->neff = optarg; break;
	case 's': a->ntff = optarg; break;
	case 'd': a->sdir = optarg; break;
	case OPT_INGEST_ONLY: a->ingest_only = true; break;
	case OPT_DISABLE_UI: a->disable_ui = true; break;
	case OPT_API_PORT:
		if (parse_port("--api-server-port", optarg, &a->port))
			return NX_EXIT_USAGE;
		break;
	case OPT_UI_PORT:
		if (parse_port("--port", optarg, &a->ui_port))
			return NX_EXIT_USAGE;
		break;
	case OPT_OUTPUT_FORMAT:
		if (!(a->format = nx_view_format(optarg))) {
			nx_cli_error("view", "unknown --output-format '%s' (parquet, json, "
				     "summary-json, summary-text, perfetto)", optarg);
			return NX_EXIT_USAGE;
		}
		break;
	case OPT_FORCE: a->force = true; break;
	case OPT_IGNORE_BUF: a->skip_buf_usage = true; break;
	case OPT_OUTPUT_FILE: a->output_file = optarg; break;
	case OPT_SHOW_SCHEMA:
		nx_schema_print_yaml(stdout);
		a->done = true;
		break;
	case 'F':
		if (!strcmp(optarg, "ignore-nc-buf-usage=true"))
			a->skip_buf_usage = true;
		else if (strcmp(optarg, "ignore-nc-buf-usage=false"))
			fprintf(stderr, "%s view: note: feature flag '%s' is not known to this "
				"build and is ignored\n", nx_cli_prog, optarg);
		break;
	case OPT_IGNORED_VALUE: case OPT_IGNORED_FLAG: break;
	case ':':
		nx_cli_error("view", "option '%s' needs a value", argv[optind - 1]);
		return NX_EXIT_USAGE;
	default:
		nx_cli_error("view", "unknown option '%s'", argv[optind - 1]);
		usage(stderr);
		return NX_EXIT_USAGE;
	}
	return NX_EXIT_OK;
}

/* The combinations of options that make no sense, the values of the common ones, and an
 * export's output file (before any work). */
static int check_args(struct view_args *a)
{
	const char *msg = NULL;

	if (a->sdir && (a->neff || a->ntff))
		msg = "give either -n NEFF -s NTFF (one device profile) or -d DIR, not both";
	else if (!!a->neff != !!a->ntff)
		msg = a->neff ? "a device profile needs both -n NEFF and -s NTFF; -s is missing"
			      : "a device profile needs both -n NEFF and -s NTFF; -n is missing";
	if (msg) {
		nx_cli_error("view", "%s", msg);
		return NX_EXIT_USAGE;
	}
	if (a->ingest_only && !a->neff && !a->sdir)
		msg = "--ingest-only needs -n NEFF and -s NTFF, or -d DIR";
	else if (strcmp(a->format, "parquet") && !a->neff && !a->sdir && !a->co.display_name)
		msg = "an export needs -n NEFF and -s NTFF, -d DIR, or the --display-name of a "
		      "profile already ingested in --data-path";
	if (msg) {
		nx_cli_error("view", "%s", msg);
		return NX_EXIT_USAGE;
	}
	if (!a->disable_ui && a->port && a->port == a->ui_port) {
		nx_cli_error("view", "--api-server-port and --port are both %u; the API and the "
			     "web UI need a port each (or --disable-ui)", a->port);
		return NX_EXIT_USAGE;
	}
	if (nx_cli_common_check(&a->co))
		return NX_EXIT_USAGE;
	return nx_view_output_check(a->format, &a->output_file, a->force);
}

static int parse(int argc, char **argv, struct view_args *a)
{
	int c, rc;

	memset(a, 0, sizeof(*a));
	nx_cli_common_init(&a->co, "view");
	a->format = "parquet";
	a->port = 3002;
	a->ui_port = 3001;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:s:d:qhF:", long_opts, NULL)) != -1) {
		if (nx_cli_common_opt(&a->co, c, optarg)) {
			if (a->co.help) {
				usage(stdout);
				a->done = true;
				return NX_EXIT_OK;
			}
		} else if ((rc = parse_opt(a, c, argv)) || a->done) {
			return rc;
		}
	}
	if (optind < argc) {
		nx_cli_error("view", "unexpected argument '%s'", argv[optind]);
		return NX_EXIT_USAGE;
	}
	return check_args(a);
}

/* The output directory of parquet, against the output rule, before any work (an
 * export's output file is checked with the arguments). */
static int check_output(const struct view_args *a)
{
	char *data;
	int rc;

	if (!a->output_file || strcmp(a->format, "parquet"))
		return NX_EXIT_OK;
	data = nx_cli_common_data_path(&a->co);
	rc = nx_cli_out_dir("view", a->output_file, data);
	free(data);
	return rc;
}

/* The profile name and the data path of an ingest: the data path asked for, or a
 * temporary one when an export publishes nothing. */
static int prepare(const struct view_args *a, struct view_run *r)
{
	const char *input = a->sdir ? a->sdir : a->ntff;
	struct nx_err err = { 0 };
	int rc;

	r->parquet = !strcmp(a->format, "parquet");
	/* an export publishes nothing unless a data path or name is asked for */
	r->publish = r->parquet || a->co.data_path_given || a->co.display_name;
	r->name = a->co.display_name ? nx_xstrdup(a->co.display_name) : nx_cli_default_name(input);
	if (!a->co.display_name && nx_check_display_name(r->name, &err)) {
		nx_cli_error("view", "the name taken from '%s' is not usable: %s; give "
			     "--display-name", input, err.msg);
		return NX_EXIT_USAGE;
	}
	if ((rc = check_output(a)))
		return rc;
	if (r->publish) {
		r->data_path = nx_cli_common_data_path(&a->co);
		return NX_EXIT_OK;
	}
	if (!(r->tmp = nx_cli_tmp_data_path("view", "view")))
		return NX_EXIT_FAIL;
	r->data_path = nx_xstrdup(r->tmp);
	return NX_EXIT_OK;
}

/* Ingests the inputs, then writes the export asked for; *serve_after says whether
 * the server is to start. */
static int run_ingest(const struct view_args *a, struct view_run *r, bool *serve_after)
{
	int rc;

	*serve_after = false;
	const char *out_dir = r->parquet ? a->output_file : NULL;

	rc = a->sdir ? nx_view_dir(a->sdir, r->data_path, r->name, out_dir, a->co.quiet,
				   &r->published)
		     : ingest_device(a->neff, a->ntff, r->data_path, r->name,
				     out_dir, a->co.quiet,
				     a->skip_buf_usage, &r->published);
	if (rc)
		return rc;
	if (r->parquet) {
		printf("Processing for %s is complete\n", r->name);
		fflush(stdout);
	} else if (!a->co.quiet) {
		fprintf(stderr, "Processing for %s is complete%s\n", r->name,
			r->publish ? "" : " (not published: give --data-path or --display-name "
			"to keep the profile)");
	}
	if (!r->parquet)
		return nx_view_export(r->published, r->name, a->format, a->output_file, a->force,
				      a->co.quiet, r->tmp);
	*serve_after = !a->ingest_only && !a->output_file;
	return NX_EXIT_OK;
}

/* An export of a profile ingested earlier (no -n/-s or -d). */
static int export_ingested(const struct view_args *a)
{
	char *data = nx_cli_common_data_path(&a->co);
	char *dir = nx_xasprintf("%s/profiles/global/%s@latest", data, a->co.display_name);
	int rc;

	if (!nx_is_dir(dir)) {
		nx_cli_error("view", "no profile '%s' in '%s': ingest it first (%s view -n NEFF "
			     "-s NTFF --ingest-only --display-name %s ...), or give the inputs "
			     "with the export", a->co.display_name, data, nx_cli_prog,
			     a->co.display_name);
		rc = NX_EXIT_USAGE;
	} else {
		rc = nx_view_export(dir, a->co.display_name, a->format, a->output_file, a->force,
				    a->co.quiet, NULL);
	}
	free(dir);
	free(data);
	return rc;
}

static void release_run(struct view_run *r)
{
	nx_cli_tmp_release(r->tmp);
	free(r->data_path);
	free(r->name);
	free(r->published);
}

int cmd_view(int argc, char **argv)
{
	struct view_args a;
	struct view_run r = { 0 };
	bool serve_after = true;
	int rc = parse(argc, argv, &a);

	if (rc || a.done)
		return rc;
	if (!a.sdir && !a.neff && strcmp(a.format, "parquet"))
		return export_ingested(&a);
	if (a.sdir || a.neff) {
		rc = prepare(&a, &r);
		if (!rc)
			rc = run_ingest(&a, &r, &serve_after);
	}
	if (!rc && serve_after) {
		if (!r.data_path)
			r.data_path = nx_cli_common_data_path(&a.co);
		rc = serve(r.data_path, a.port, !a.disable_ui, a.ui_port, a.co.quiet,
			   r.published != NULL, r.published && !a.sdir ? r.name : NULL);
	}
	release_run(&r);
	return rc;
}
