/* SPDX-License-Identifier: MIT
 * cmd_view.c: `neuron-explorer view`. Ingests a NEFF + NTFF into parquet tables under
 * the data path, then (unless --ingest-only) serves the query API and the web UI on 127.0.0.1. With
 * no inputs it serves what the data path already holds. */
#include "common/compat.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/view_dir.h"
#include "cli/view_output.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "ingest/ingest.h"
#include "schema/schema.h"
#include "server/server.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_DATA_PATH "~/.local/share/neuron-profile"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: neuron-explorer view [-n NEFF -s NTFF | -d DIR] [--data-path DIR] [--display-name NAME]\n"
		"                            [--ingest-only | --disable-ui] [--api-server-port PORT] [--port PORT]\n"
		"                            [--output-format FMT] [--output-file PATH]\n"
		"\n"
		"Ingests a device profile (a NEFF and the NTFF captured from it) into parquet tables\n"
		"under DIR/profiles/global/NAME@latest/, then serves the HTTP query API on\n"
		"127.0.0.1:PORT and the web UI on 127.0.0.1:3001. Without -n/-s it serves the profiles\n"
		"already in DIR.\n"
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
		"      --output-format FMT     parquet (default), summary-json, summary-text,\n"
		"                              perfetto (Chrome trace JSON the Perfetto UI opens);\n"
		"                              the summaries and the trace are exports: stdout (or\n"
		"                              the output file) holds only the document, and the\n"
		"                              profile is published only when --data-path or\n"
		"                              --display-name is given\n"
		"      --output-file PATH      with parquet: write the tables into this directory;\n"
		"                              otherwise: write the summary or trace there\n"
		"      --show-profile-schema   print the profile schema (OpenAPI YAML) and exit\n"
		"  -F ignore-nc-buf-usage=true skip SbufAllocation/SbufUsage/PsumUsage (faster on\n"
		"                              huge traces)\n"
		"  -q, --quiet                 no progress lines\n"
		"  -h, --help                  this text\n",
		DEFAULT_DATA_PATH);
}

enum {
	OPT_DATA_PATH = 256, OPT_DISPLAY_NAME, OPT_INGEST_ONLY, OPT_DISABLE_UI, OPT_API_PORT,
	OPT_UI_PORT, OPT_OUTPUT_FORMAT, OPT_OUTPUT_FILE, OPT_SHOW_SCHEMA, OPT_IGNORED_VALUE,
	OPT_IGNORED_FLAG,
};

static const struct option long_opts[] = {
	{ "neff-path", required_argument, NULL, 'n' },
	{ "session-file", required_argument, NULL, 's' },
	{ "session-dir", required_argument, NULL, 'd' },
	{ "data-path", required_argument, NULL, OPT_DATA_PATH },
	{ "display-name", required_argument, NULL, OPT_DISPLAY_NAME },
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
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_port(const char *s, unsigned *port)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < 0 || v > 65535)
		return -1;
	*port = (unsigned)v;
	return 0;
}

/* Default display name: the input's file name without directory and extensions. */
static char *default_name(const char *path)
{
	char *p = nx_xstrdup(path);
	size_t len = strlen(p);
	while (len > 1 && p[len - 1] == '/')
		p[--len] = '\0';
	const char *base = strrchr(p, '/');
	base = base ? base + 1 : p;
	const char *dot = strchr(base, '.');
	char *name = nx_xstrndup(base, dot && dot != base ? (size_t)(dot - base) : strlen(base));
	free(p);
	return name;
}

/* The ingest's progress printer: one line per table written (as before the library
 * stopped printing), and, on a terminal, a live line with the table being written,
 * its rows and rows/s that the next line overwrites. */
struct progress_printer {
	bool tty;
	bool live;   /* a live line is on screen */
};

static void clear_live(struct progress_printer *pp)
{
	if (pp->live)
		fputs("\r\033[K", stderr);
	pp->live = false;
}

static void print_progress(void *user, const struct nx_progress_event *ev)
{
	struct progress_printer *pp = user;
	double mb = (double)ev->peak_rss_kb / 1024;

	switch (ev->kind) {
	case NX_PROGRESS_ROWS:
		if (!pp->tty || ev->seconds < 1)
			return;
		fprintf(stderr, "\r\033[K  [%s] %s: %" PRIu64 " rows, %.2f M rows/s, %.1f s",
			ev->stage ? ev->stage : "ingest", ev->table, ev->rows,
			ev->seconds > 0 ? (double)ev->rows / ev->seconds / 1e6 : 0.0, ev->seconds);
		pp->live = true;
		break;
	case NX_PROGRESS_TABLE:
		clear_live(pp);
		fprintf(stderr, "  %-26s %10" PRIu64 " rows  %6.2f s  peak %.0f MB%s%s%s\n", ev->table,
			ev->rows, ev->seconds, mb, ev->how ? " (" : "", ev->how ? ev->how : "",
			ev->how ? ")" : "");
		break;
	case NX_PROGRESS_DONE:
		clear_live(pp);
		fprintf(stderr, "Wrote %" PRIu64 " raw rows to %s: raw tables %.2f s, derived "
			"tables %.2f s, total %.2f s, peak %.0f MB\n", ev->rows, ev->table, ev->raw_s,
			ev->derived_s, ev->seconds, mb);
		break;
	}
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
	struct progress_printer pp = { .tty = isatty(STDERR_FILENO) == 1 };
	struct nx_progress progress = { .fn = print_progress, .user = &pp };
	if (!quiet) {
		io.progress = &progress;
		fprintf(stderr, "Ingesting '%s' + '%s' as '%s'\n", neff, ntff,
			name ? name : output_dir);
	}
	if (nx_ingest(&io, published, &err)) {
		clear_live(&pp);
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
	nx_server_wait(srv);
	nx_server_stop(srv);
	return NX_EXIT_OK;
}

int cmd_view(int argc, char **argv)
{
	const char *neff = NULL, *ntff = NULL, *sdir = NULL, *name_opt = NULL, *format = "parquet";
	const char *output_file = NULL, *data_opt = DEFAULT_DATA_PATH;
	bool ingest_only = false, disable_ui = false, quiet = false, skip_buf_usage = false;
	bool data_given = false;
	unsigned port = 3002, ui_port = 3001;
	int c, rc = NX_EXIT_OK;
	char *data_path = NULL, *name = NULL, *published = NULL, *tmp = NULL;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:s:d:qhF:", long_opts, NULL)) != -1) {
		switch (c) {
		case 'n': neff = optarg; break;
		case 's': ntff = optarg; break;
		case 'd': sdir = optarg; break;
		case OPT_DATA_PATH: data_opt = optarg; data_given = true; break;
		case OPT_DISPLAY_NAME: name_opt = optarg; break;
		case OPT_INGEST_ONLY: ingest_only = true; break;
		case OPT_DISABLE_UI: disable_ui = true; break;
		case OPT_API_PORT:
			if (parse_port(optarg, &port)) {
				nx_cli_error("view", "--api-server-port wants a port number, got '%s'", optarg);
				return NX_EXIT_USAGE;
			}
			break;
		case OPT_UI_PORT:
			if (parse_port(optarg, &ui_port)) {
				nx_cli_error("view", "--port wants a port number, got '%s'",
					     optarg);
				return NX_EXIT_USAGE;
			}
			break;
		case OPT_OUTPUT_FORMAT: format = optarg; break;
		case OPT_OUTPUT_FILE: output_file = optarg; break;
		case OPT_SHOW_SCHEMA: nx_schema_print_yaml(stdout); return NX_EXIT_OK;
		case 'F':
			if (!strcmp(optarg, "ignore-nc-buf-usage=true"))
				skip_buf_usage = true;
			else if (strcmp(optarg, "ignore-nc-buf-usage=false"))
				fprintf(stderr, "neuron-explorer view: note: feature flag '%s' is not "
					"known to this build and is ignored\n", optarg);
			break;
		case OPT_IGNORED_VALUE: case OPT_IGNORED_FLAG: break;
		case 'q': quiet = true; break;
		case 'h': usage(stdout); return NX_EXIT_OK;
		case ':':
			nx_cli_error("view", "option '%s' needs a value", argv[optind - 1]);
			return NX_EXIT_USAGE;
		default:
			nx_cli_error("view", "unknown option '%s'", argv[optind - 1]);
			usage(stderr);
			return NX_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		nx_cli_error("view", "unexpected argument '%s'", argv[optind]);
		return NX_EXIT_USAGE;
	}
	if (!!neff != !!ntff) {
		nx_cli_error("view", "a device profile needs both -n NEFF and -s NTFF");
		return NX_EXIT_USAGE;
	}
	if (sdir && neff) {
		nx_cli_error("view", "give either -n/-s (one device profile) or -d DIR, not both");
		return NX_EXIT_USAGE;
	}
	if (!nx_view_format_known(format)) {
		nx_cli_error("view", "unknown --output-format '%s' (parquet, summary-json, "
			     "summary-text, perfetto)", format);
		return NX_EXIT_USAGE;
	}
	if (!strcmp(format, "perfetto") && !output_file) {
		nx_cli_error("view", "--output-format perfetto needs --output-file FILE");
		return NX_EXIT_USAGE;
	}
	if (ingest_only && !neff && !sdir) {
		nx_cli_error("view", "--ingest-only needs -n NEFF and -s NTFF, or -d DIR");
		return NX_EXIT_USAGE;
	}
	if (nx_cli_data_path("view", data_opt))
		return NX_EXIT_USAGE;
	if (name_opt && nx_cli_name("view", name_opt))
		return NX_EXIT_USAGE;
	if (sdir || neff) {
		bool parquet = !strcmp(format, "parquet");
		/* an export publishes nothing unless a data path or name is asked for */
		bool publish = parquet || data_given || name_opt;
		struct nx_err err = { 0 };

		name = name_opt ? nx_xstrdup(name_opt) : default_name(sdir ? sdir : ntff);
		if (!name_opt && nx_check_display_name(name, &err)) {
			nx_cli_error("view", "the name taken from '%s' is not usable: %s; give "
				     "--display-name", sdir ? sdir : ntff, err.msg);
			rc = NX_EXIT_USAGE;
			goto out;
		}
		if (publish) {
			data_path = nx_expand_home(data_opt);
		} else if (!(tmp = nx_cli_tmp_data_path("view", "view"))) {
			rc = NX_EXIT_FAIL;
			goto out;
		} else {
			data_path = nx_xstrdup(tmp);
		}
		rc = sdir ? nx_view_dir(sdir, data_path, name, quiet, &published)
			  : ingest_device(neff, ntff, data_path, name, parquet ? output_file : NULL,
					  quiet, skip_buf_usage, &published);
		if (rc)
			goto out;
		if (parquet) {
			printf("Processing for %s is complete\n", name);
			fflush(stdout);
		} else if (!quiet) {
			fprintf(stderr, "Processing for %s is complete%s\n", name,
				publish ? "" : " (not published: give --data-path or --display-name "
				"to keep the profile)");
		}
		if (!strcmp(format, "perfetto")) {
			rc = nx_view_perfetto(published, output_file);
			goto out;
		}
		if (!parquet) {
			rc = nx_view_print_summary(published, format, output_file);
			goto out;
		}
		if (ingest_only || (neff && output_file))
			goto out;
	}
	if (!data_path)
		data_path = nx_expand_home(data_opt);
	rc = serve(data_path, port, !disable_ui, ui_port, quiet, published != NULL,
		   published && !sdir ? name : NULL);
out:
	nx_cli_tmp_release(tmp);
	free(data_path);
	free(name);
	free(published);
	return rc;
}
