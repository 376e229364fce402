/* SPDX-License-Identifier: MIT
 * profile_db.c: the sandboxed DuckDB behind each profile (see profile_db.h). Before
 * any statement reads a file, allowed_directories is narrowed to the profile
 * directory, external access is switched off and the configuration is locked, so
 * no query, our view definitions included, can read elsewhere or undo this.
 * The SELECT-only rule is enforced separately from DuckDB's parser, because the
 * sandbox alone would still allow writes inside the profile directory. */
#include "common/compat.h"
#include "server/duck_vec.h"
#include "server/lod.h"
#include "server/profile_db.h"
#include "server/resident.h"
#include "server/slice_dir.h"
#include "server/result_json.h"
#include "server/stmt_cache.h"
#include "server/user_query.h"
#include "common/env_num.h"
#include "common/fsutil.h"
#include "common/json_writer.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "db/duck_alloc.h"
#include "db/duck_conn.h"
#include "db/parquet_footer.h"
#include "db/parquet_slice.h"
#include "db/parquet_union.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define POOL_MAX 16

/* A profile whose table files' footers take more than this, as stored, has its footers
 * parsed by each query that reads them instead of kept: DuckDB holds about ten times a
 * footer's stored size while it is parsed (111 MB for the 11 MB footer of a 100M-record
 * profile's Instruction.parquet, 2,137 row groups of 55 columns), which its footer cache
 * kept for the life of the server. */
#define FOOTER_CACHE_MAX (4u << 20)

/* A table file whose footer takes more than SLICE_FOOTER bytes as stored (the environment's
 * NX_SERVER_SLICE_FOOTER when set) and that has more than LARGE_GROUPS row groups is read
 * as slices of SLICE_GROUPS row groups (each a parquet file of its own, cut when a query
 * first names its table): DuckDB parses a file's whole footer for any query over it, 111
 * MB (above) for a narrow WHERE on start_ts, where a list of slices holds one slice's
 * footer per reading thread at a time and skips slices by their statistics. A smaller
 * footer costs less than the cut (a copy of the file's bytes): 1.1 MB at 10M records.
 * Slices of 16 row groups, not 64: the timeline's flows and chains, which read every
 * slice of the 100M-record Instruction, raised the server's peak by 32 MiB with slices
 * of 64 (a slice's footer as DuckDB parsed it, per thread), by 13 to 19 with 16
 * (docs/memory.md, "The server's memory: users' SQL and flatness"). */
#define SLICE_FOOTER (2u << 20)
#define LARGE_GROUPS 64
#define SLICE_GROUPS 16

/* DuckDB's memory_limit of each database the server opens for a profile (not a fleet
 * run's: pdb_new), and for its timeline cache CACHE_MEMORY (the environment's
 * NX_SERVER_MEMORY_LIMIT when set, for every one): without it DuckDB takes up to 80 % of the machine's memory,
 * and its cache of the timeline cache's blocks held 220 MB at 100M records. A query
 * beyond it spills to the database's private folder (SPILL below the folder of slices)
 * or fails naming the limit (docs/memory.md, "The server's peak with flows, chains and
 * aggregates"). */
#define SERVER_MEMORY "64MB"
/* The timeline cache's database's (nx__pdb_open_attached), unless NX_SERVER_MEMORY_LIMIT
 * is set: its queries read a window's blocks of a read-only file, and the 64MB pool of
 * their blocks was most of what the server held through the timeline's windows, more at
 * 100M records than at 10M (docs/memory.md, "The server's memory: users' SQL and
 * flatness"). */
#define CACHE_MEMORY "32MB"
#define SPILL "spill"

/* A pooled connection and the statements prepared on it. */
struct pconn {
	duckdb_connection c;
	struct nx_stmt_cache stmts;
};

struct nx_pdb {
	duckdb_database db;
	pthread_mutex_t lock;
	struct pconn *idle[POOL_MAX];
	size_t nidle;
	struct nx_resident res; /* small tables copied into memory once read often */
	pthread_mutex_t views;  /* guards what follows: views are made on first use */
	struct broken {
		char *table;
		char *msg; /* names the damaged file(s) */
	} *broken;
	size_t nbroken;
	char *dir;
	const struct nx_pfiles *files; /* borrowed: it outlives the database */
	bool *tried;                   /* per files->t[i]: its view was made (or failed) */
	bool *large;                   /* per files->t[i]: read as slices, cut on first use */
	size_t untried;                /* union tables and large tables without a view yet */
	char *scratch;                 /* the slices of large files, and what DuckDB spills */
	char *memory;                  /* DuckDB's memory_limit (SERVER_MEMORY or the env's) */
	bool limited;                  /* memory is a limit of ours, not DuckDB's default */
	char *query_memory;            /* a user's query's run again (user_query.h) */
	unsigned threads;
	/* A retry database (nx__pdb_open_retry): the profile's database whose query it runs
	 * again, and that database's limit; it borrows parent's dir, files and slices. */
	struct nx_pdb *parent;
	const char *base_memory;
	int scratch_lock;              /* the lock on scratch's mark (slice_dir.h) */
	struct nx_lod_slices slices;   /* the tables read as slices, their files in scratch */
};

/* File i of t: in dir, or "../<member>@latest/<file>" beside it for a fleet run; a
 * slice (an absolute path in the scratch folder) as it is. */
static char *file_path(const char *dir, const struct nx_ptable *t, size_t i)
{
	const char *slash = strrchr(dir, '/');
	char *file = nx__ptable_file(t, i), *p;

	if (file[0] == '/')
		return file;
	if (t->members && slash && !strncmp(file, "../", 3)) {
		char *parent = nx_xstrndup(dir, (size_t)(slash - dir));
		p = nx_path_join(parent, file + 3);
		free(parent);
	} else {
		p = nx_path_join(dir, file);
	}
	free(file);
	return p;
}

static struct pconn *pconn_of(duckdb_connection c)
{
	struct pconn *pc = nx_xcalloc(1, sizeof(*pc));

	pc->c = c;
	return pc;
}

static void pconn_close(struct pconn *pc)
{
	nx__stmt_cache_clear(&pc->stmts);
	duckdb_disconnect(&pc->c);
	free(pc);
}

static int create_view(duckdb_connection c, const char *dir, const struct nx_ptable *t,
		       struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	char **paths = nx_xcalloc(t->nfiles ? t->nfiles : 1, sizeof(*paths));
	int rc;

	for (size_t i = 0; i < t->nfiles; i++)
		paths[i] = file_path(dir, t, i);
	nx_strbuf_addstr(&sql, "CREATE VIEW ");
	nx_sql_quote_ident(&sql, t->name);
	nx_strbuf_addstr(&sql, " AS ");
	/* A fleet run's union of its members' tables, with the member as `profile`. */
	if (t->members) {
		nx_pq_union_select(&sql, (const char *const *)paths, t->nfiles);
	} else {
		nx_strbuf_addstr(&sql, "SELECT * FROM read_parquet([");
		for (size_t i = 0; i < t->nfiles; i++) {
			if (i)
				nx_strbuf_addch(&sql, ',');
			nx_sql_quote(&sql, paths[i]);
		}
		nx_strbuf_addstr(&sql, "])");
	}
	rc = nx_duck_con_exec(c, sql.buf, err);
	for (size_t i = 0; i < t->nfiles; i++)
		free(paths[i]);
	free(paths);
	nx_strbuf_release(&sql);
	return rc;
}

/* DuckDB's first line only: its messages go on with a caret drawing of the SQL. */
static char *first_line(const char *msg)
{
	return nx_xstrndup(msg, strcspn(msg, "\n"));
}

/* Whether DuckDB's message says it ran out of memory (its memory_limit). */
static bool is_oom(const char *msg)
{
	return strstr(msg, "Out of Memory Error") != NULL;
}

/* Reads the footer of each file of t alone. Returns NULL when all are parquet files,
 * else "table T cannot be read: F is damaged or not a parquet file (DuckDB: ...)", or
 * "F (member M) is gone since the profile was opened" for a file removed meanwhile (a
 * fleet run's member removed after the scan). A view over several parts would only
 * notice a damaged later part when a query reaches it, and DuckDB would then not say
 * which table it belongs to. */
static char *damaged_files(duckdb_connection c, const char *dir, const struct nx_ptable *t,
			   const char *memory)
{
	struct nx_strbuf names = NX_STRBUF_INIT, gone = NX_STRBUF_INIT, text = NX_STRBUF_INIT;
	char *why = NULL, *msg;
	size_t bad = 0, ngone = 0;

	for (size_t i = 0; i < t->nfiles; i++) {
		struct nx_strbuf sql = NX_STRBUF_INIT;
		struct nx_err ferr = { 0 };
		char *path = file_path(dir, t, i);

		if (access(path, F_OK) != 0 && errno == ENOENT) {
			char *file = nx__ptable_file(t, i);
			const char *member = nx__ptable_member(t, i);

			nx_strbuf_addf(&gone, "%s%s", ngone++ ? ", " : "", file);
			if (member)
				nx_strbuf_addf(&gone, " (member %s)", member);
			free(file);
			free(path);
			continue;
		}
		nx_strbuf_addstr(&sql, "SELECT * FROM read_parquet(");
		nx_sql_quote(&sql, path);
		nx_strbuf_addstr(&sql, ") LIMIT 0");
		int frc = nx_duck_con_exec(c, sql.buf, &ferr);

		if (frc && is_oom(ferr.msg)) {
			/* not damaged: its footer does not fit the limit */
			char *line = first_line(ferr.msg);

			nx_strbuf_release(&sql);
			free(path);
			nx_strbuf_release(&names);
			nx_strbuf_release(&gone);
			free(why);
			msg = nx_xasprintf("table %s cannot be read within the server's memory limit "
					   "of %s per profile (NX_SERVER_MEMORY_LIMIT) (DuckDB: %s)",
					   t->name, memory, line);
			free(line);
			return msg;
		} else if (frc) {
			char *file = nx__ptable_file(t, i);

			nx_strbuf_addf(&names, "%s%s", bad++ ? ", " : "", file);
			free(file);
			if (!why)
				why = first_line(ferr.msg);
		}
		nx_strbuf_release(&sql);
		free(path);
	}
	if (ngone || bad)
		nx_strbuf_addf(&text, "table %s cannot be read: ", t->name);
	if (ngone)
		nx_strbuf_addf(&text, "%s %s gone since the profile was opened", gone.buf,
			       ngone > 1 ? "are" : "is");
	if (bad)
		nx_strbuf_addf(&text, "%s%s %s damaged or not a parquet file (DuckDB: %s)",
			       ngone ? "; " : "", names.buf, bad > 1 ? "are" : "is", why);
	msg = text.buf;
	free(why);
	nx_strbuf_release(&names);
	nx_strbuf_release(&gone);
	return msg;
}

/* Creates the view of t; NULL when done, else why it cannot be read (naming the damaged
 * files). A fleet run's members' files are checked one by one only when its union view
 * fails: a file that is not parquet makes db/parquet_union.c fall back to union_by_name,
 * which reads every footer and fails. Checking each first cost one query per file and
 * table, the bulk of making a run's views. */
static char *make_view(duckdb_connection c, const char *dir, const struct nx_ptable *t,
		       const char *memory)
{
	struct nx_err verr = { 0 };
	/* a table read as slices: the slicer has read its footers already */
	bool sliced = t->files && t->nfiles && t->files[0][0] == '/';
	char *why = t->members || sliced ? NULL : damaged_files(c, dir, t, memory);

	if (!why && create_view(c, dir, t, &verr)) {
		char *line = first_line(verr.msg);

		if (t->members)
			why = damaged_files(c, dir, t, memory);
		if (!why && is_oom(line))
			why = nx_xasprintf("table %s cannot be read within the server's memory "
					   "limit of %s per profile (NX_SERVER_MEMORY_LIMIT) (DuckDB: "
					   "%s)", t->name, memory, line);
		if (!why)
			why = nx_xasprintf("table %s cannot be read: its files do not form one table "
					   "(DuckDB: %s)", t->name, line);
		free(line);
	}
	return why;
}

/* Records that table has no view, and why (the caller holds p->views). */
static void add_broken(struct nx_pdb *p, const char *table, char *why)
{
	p->broken = nx_xrealloc(p->broken, (p->nbroken + 1) * sizeof(*p->broken));
	p->broken[p->nbroken].table = nx_xstrdup(table);
	p->broken[p->nbroken++].msg = why;
}

/* Narrows file access to dir (and a fleet run's members, and the scratch folder of its
 * slices when set, where DuckDB then spills) and freezes the configuration. */
static int lock_down(duckdb_connection c, const char *dir, const struct nx_pfiles *files,
		     const char *scratch, const char *slices, struct nx_err *err)
{
	const char **dirs = nx_xcalloc(files->nallow + 3, sizeof(*dirs));
	char *spill = scratch ? nx_path_join(scratch, SPILL) : NULL;
	size_t n = 0;
	int rc;

	dirs[n++] = dir;
	for (size_t i = 0; i < files->nallow; i++)
		dirs[n++] = files->allow[i];
	if (scratch)
		dirs[n++] = scratch;
	if (slices)
		dirs[n++] = slices;
	rc = nx_duck_con_sandbox(c, dirs, n, spill, err);
	free(spill);
	free(dirs);
	return rc;
}

/* The bytes the footers of the profile's own table files take, as stored (read from each
 * file's last eight bytes); a file that cannot be opened as parquet counts nothing (its
 * view reports it). */
static uint64_t footer_bytes(const char *dir, const struct nx_pfiles *files)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < files->n; i++) {
		const struct nx_ptable *t = &files->t[i];

		for (size_t j = 0; !t->members && j < t->nfiles; j++) {
			struct nx_pq_file f = { 0 };
			struct nx_err ignored = { 0 };
			char *path = file_path(dir, t, j);

			if (!nx_pq_open(&f, path, &ignored))
				sum += f.footer_len;
			nx_pq_close(&f);
			free(path);
		}
	}
	return sum;
}

/* Whether the profile is a fleet run (union tables over its members' files). */
static bool has_members(const struct nx_pfiles *files)
{
	for (size_t i = 0; i < files->n; i++)
		if (files->t[i].members)
			return true;
	return false;
}

/* The settings of a profile's database: the parquet footer cache on unless the footers are
 * large; neither for a fleet run, nor DuckDB's external file cache when the cache is off. */
static const char *cache_settings(const char *dir, const struct nx_pfiles *files)
{
	if (has_members(files) || footer_bytes(dir, files) > FOOTER_CACHE_MAX)
		return "SET enable_external_file_cache = false";
	return NX_DUCK_FOOTER_CACHE_SQL;
}

/* SLICE_FOOTER, or NX_SERVER_SLICE_FOOTER (a whole number of bytes). */
static int slice_footer(uint64_t *out, struct nx_err *err)
{
	long long n = SLICE_FOOTER;
	int rc = nx_env_whole("NX_SERVER_SLICE_FOOTER", LLONG_MAX,
			      "bytes (0: cut every file of more than 64 row groups)", &n, err);

	*out = (uint64_t)n;
	return rc;
}

/* Whether a file of t has a footer of more than footer bytes and more than LARGE_GROUPS
 * row groups (a file that cannot be read as parquet counts as small: its view says what
 * is wrong with it). */
static bool is_large(const char *dir, const struct nx_ptable *t, uint64_t footer)
{
	bool large = false;

	for (size_t i = 0; !large && i < t->nfiles; i++) {
		struct nx_pq_file f = { 0 };
		struct nx_pq_slicer *sl;
		struct nx_err ignored = { 0 };
		char *path = file_path(dir, t, i);

		if (!nx_pq_open(&f, path, &ignored) && f.footer_len > footer &&
		    !nx_pq_slicer_open(&sl, path, &ignored)) {
			large = nx_pq_slicer_row_groups(sl) > LARGE_GROUPS;
			nx_pq_slicer_close(sl);
		}
		nx_pq_close(&f);
		free(path);
	}
	return large;
}

/* Marks the tables with a file of more than LARGE_GROUPS row groups whose footer takes
 * more than footer bytes (p->large) and makes the private folder, p->scratch, of their
 * slices and of what DuckDB spills (made for every profile): when that folder cannot be
 * made, every table is read whole, as before, and a query beyond the memory limit fails. */
static void find_large(struct nx_pdb *p, uint64_t footer)
{
	struct nx_err ignored = { 0 };

	for (size_t i = 0; i < p->files->n; i++) {
		const struct nx_ptable *t = &p->files->t[i];

		p->large[i] = !t->members && is_large(p->dir, t, footer);
	}
	if (nx__slice_dir_make(&p->scratch, &p->scratch_lock, &ignored)) {
		memset(p->large, 0, p->files->n * sizeof(*p->large));
		return;
	}
	nx__lod_slices_init(&p->slices, p->scratch, SLICE_GROUPS);
}

/* Large table t as its view reads it: slices of its files cut into p->scratch. A cut that
 * fails (a full temporary folder, a row group past the file's end) leaves no slice and
 * the table is read whole, as before: its view then says what is wrong with a damaged
 * file. The caller holds p->views. */
static const struct nx_ptable *read_as(struct nx_pdb *p, const struct nx_ptable *t)
{
	const struct nx_ptable *out = t;
	struct nx_err ignored = { 0 };

	return nx__lod_sliced(&p->slices, p->dir, t, &out, &ignored) ? t : out;
}

/* read_as for p or, for a retry database, its parent's slices (cut once per profile; the
 * parent's views lock guards them, taken after p's). The caller holds p->views. */
static const struct nx_ptable *read_as_shared(struct nx_pdb *p, const struct nx_ptable *t)
{
	const struct nx_ptable *out;

	if (!p->parent)
		return read_as(p, t);
	pthread_mutex_lock(&p->parent->views);
	out = read_as(p->parent, t);
	pthread_mutex_unlock(&p->parent->views);
	return out;
}

/* A new nx_pdb in *out with its database and a first connection in *c; on failure the
 * caller still frees *out (and *c when set). */
static int pdb_new(unsigned threads, bool fleet, const char *memory, const char *dflt,
		   struct nx_pdb **out, duckdb_connection *c, struct nx_err *err)
{
	struct nx_pdb *p = nx_xcalloc(1, sizeof(*p));
	/* a fleet run's union views bind every member's footers at once: 9 members' took
	 * more than 64MB (tests/e2e/t6004-fleet-lazy-views.sh); they keep DuckDB's default
	 * unless NX_SERVER_MEMORY_LIMIT is set */
	struct nx_duck_config cfg = { .threads = threads,
				      .memory_limit = fleet ? NULL : dflt };
	int rc = 0;

	*out = p;
	*c = NULL;
	p->scratch_lock = -1;
	p->threads = threads;
	pthread_mutex_init(&p->lock, NULL);
	pthread_mutex_init(&p->views, NULL);
	nx__resident_init(&p->res, NX_RESIDENT_BUDGET);
	if (memory)
		cfg.memory_limit = memory;
	else
		rc = nx_env_size("NX_SERVER_MEMORY_LIMIT", &cfg.memory_limit, err);
	p->limited = cfg.memory_limit != NULL;
	p->memory = nx_xstrdup(cfg.memory_limit ? cfg.memory_limit : "DuckDB's default");
	if (!rc)
		rc = nx_duck_db_open(&p->db, &cfg, err);
	if (!rc && duckdb_connect(p->db, c) == DuckDBError) {
		*c = NULL;
		rc = nx_errf(err, NX_EDB, "cannot connect to DuckDB");
	}
	return rc;
}

int nx__pdb_open(struct nx_pdb **out, const char *dir, const struct nx_pfiles *files,
		 unsigned threads, struct nx_err *err)
{
	struct nx_pdb *p;
	duckdb_connection c;
	uint64_t footer;
	int rc;

	if ((rc = pdb_new(threads, has_members(files), NULL, SERVER_MEMORY, &p, &c, err)) ||
	    (rc = slice_footer(&footer, err)) || (rc = nx__query_memory(&p->query_memory, err)))
		goto fail;
	p->dir = nx_xstrdup(dir);
	p->files = files;
	p->tried = nx_xcalloc(files->n ? files->n : 1, sizeof(*p->tried));
	p->large = nx_xcalloc(files->n ? files->n : 1, sizeof(*p->large));
	/* The folder of the slices of large files is made first, so that the sandbox admits
	 * it; the files are cut when a query first names their table (ensure_views): cutting
	 * the 1.3 GB Instruction.parquet of a 100M-record profile took 1.3 s, and the first
	 * queries of the web UI need none of it (docs/memory.md). */
	find_large(p, footer);
	/* Parquet footers are parsed once per file, not once per query, when they are small
	 * (FOOTER_CACHE_MAX): SQL over small tables asks often. The cache checks each file's
	 * modification time, and a new profile version gets a new database. Not for a fleet
	 * run: its union views span every member's files, and their footers, kept, took 1.4
	 * MB per member (1.5 GB at 1,000), for queries that read each small footer once; nor
	 * for large footers, which held 150 MB at 100M records from the first query on (the
	 * timeline reads its own cache, not these files). Without it, nor DuckDB's external
	 * file cache, which kept what queries read. Sandbox next: even our own view
	 * definitions run inside it. */
	rc = nx_duck_con_exec(c, cache_settings(dir, files), err);
	if (!rc)
		rc = lock_down(c, dir, files, p->scratch, NULL, err);
	if (rc) {
		nx_err_wrap(err, "cannot sandbox the database of '%s'", dir);
		goto fail;
	}
	/* A fleet run's union views, and the views of large tables, are made when a query
	 * first names their table (ensure_views): binding one stats every member's file of
	 * it, and making all of them made opening a run cost per member what few queries use;
	 * a large table is cut first. */
	for (size_t i = 0; i < files->n; i++) {
		const struct nx_ptable *t = &files->t[i];
		char *why;

		if (t->members || p->large[i]) {
			p->untried++;
			continue;
		}
		p->tried[i] = true;
		why = make_view(c, dir, t, p->memory);
		if (why)
			add_broken(p, t->name, why);
		else
			nx__resident_add(&p->res, t->name, t->bytes);
	}
	p->idle[p->nidle++] = pconn_of(c);
	*out = p;
	return 0;
fail:
	if (c)
		duckdb_disconnect(&c);
	nx__pdb_free(&p);
	return rc;
}

int nx__pdb_open_attached(struct nx_pdb **out, const char *file, const char *dir,
			  unsigned threads, struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	struct nx_pdb *p;
	duckdb_connection c;
	int rc;

	if ((rc = pdb_new(threads, false, NULL, CACHE_MEMORY, &p, &c, err)))
		goto fail;
	nx_strbuf_addstr(&sql, "ATTACH ");
	nx_sql_quote(&sql, file);
	nx_strbuf_addstr(&sql, " AS tl (READ_ONLY)");
	rc = nx_duck_con_exec(c, sql.buf, err);
	if (!rc)
		rc = nx_duck_con_sandbox(c, &dir, 1, NULL, err);
	nx_strbuf_release(&sql);
	if (rc) {
		nx_err_wrap(err, "cannot open %s", file);
		goto fail;
	}
	p->idle[p->nidle++] = pconn_of(c);
	*out = p;
	return 0;
fail:
	if (c)
		duckdb_disconnect(&c);
	nx__pdb_free(&p);
	return rc;
}

int nx__pdb_open_retry(struct nx_pdb **out, struct nx_pdb *parent, struct nx_err *err)
{
	const char *memory = parent->query_memory;
	struct nx_pdb *p;
	duckdb_connection c;
	const struct nx_pfiles *files = parent->files;
	int rc;

	/* DuckDB's other settings are the parent's: preserve_insertion_order stays true (the
	 * SQL page pages a query by LIMIT/OFFSET, one query per page: without that promise an
	 * unordered query's pages may repeat or skip rows), and neither threads=1 nor
	 * smaller allocator flush thresholds made a query of 100M records answer sooner or
	 * peak lower (docs/memory.md, "Users' SQL at 100M records: the run again's
	 * settings"). */
	if ((rc = pdb_new(parent->threads, false, memory, NULL, &p, &c, err)))
		goto fail;
	p->parent = parent;
	p->base_memory = parent->memory;
	p->dir = nx_xstrdup(parent->dir);
	p->files = files;
	p->tried = nx_xcalloc(files->n ? files->n : 1, sizeof(*p->tried));
	p->large = nx_xcalloc(files->n ? files->n : 1, sizeof(*p->large));
	/* its own folder, for what it spills (not the parent's: DuckDB names its spill
	 * files alike in every database); it reads the parent's slices */
	if (parent->scratch && nx__slice_dir_make(&p->scratch, &p->scratch_lock, err)) {
		nx_err_wrap(err, "cannot make the spill folder of a query run again");
		goto fail;
	}
	memcpy(p->large, parent->large, files->n * sizeof(*p->large));
	rc = nx_duck_con_exec(c, cache_settings(p->dir, files), err);
	if (!rc)
		rc = lock_down(c, p->dir, files, p->scratch, parent->scratch, err);
	if (rc) {
		nx_err_wrap(err, "cannot sandbox the database of '%s'", p->dir);
		goto fail;
	}
	/* its views are made as the statement names their tables (ensure_views): it runs
	 * one statement */
	p->untried = files->n;
	p->idle[p->nidle++] = pconn_of(c);
	*out = p;
	return 0;
fail:
	if (c)
		duckdb_disconnect(&c);
	nx__pdb_free(&p);
	*out = NULL;
	return rc ? rc : err->code;
}

bool nx__pdb_retries(const struct nx_pdb *pdb)
{
	return pdb->limited && pdb->query_memory && pdb->files && !has_members(pdb->files) &&
	       !pdb->parent;
}

const char *nx__pdb_memory(const struct nx_pdb *pdb)
{
	return pdb->memory;
}

const char *nx__pdb_query_memory(const struct nx_pdb *pdb)
{
	return pdb->query_memory ? pdb->query_memory : "none";
}

void nx__pdb_free(struct nx_pdb **pdb)
{
	struct nx_pdb *p = *pdb;

	if (!p)
		return;
	for (size_t i = 0; i < p->nidle; i++)
		pconn_close(p->idle[i]);
	if (p->db)
		duckdb_close(&p->db);
	for (size_t i = 0; i < p->nbroken; i++) {
		free(p->broken[i].table);
		free(p->broken[i].msg);
	}
	free(p->broken);
	free(p->tried);
	free(p->large);
	free(p->dir);
	free(p->memory);
	free(p->query_memory);
	if (!p->parent)
		nx__lod_slices_release(&p->slices);
	nx__slice_dir_release(p->scratch, p->scratch_lock);
	nx__resident_release(&p->res);
	pthread_mutex_destroy(&p->lock);
	pthread_mutex_destroy(&p->views);
	free(p);
	*pdb = NULL;
}

const char *nx__pdb_broken(struct nx_pdb *pdb, size_t i)
{
	const char *msg;

	pthread_mutex_lock(&pdb->views);
	msg = i < pdb->nbroken ? pdb->broken[i].msg : NULL;
	pthread_mutex_unlock(&pdb->views);
	return msg;
}

/* The message of a table that has files but no view, matched like SQL names (a
 * message, once added, stays until the database is freed). */
static const char *broken_msg(struct nx_pdb *pdb, const char *table, size_t len)
{
	const char *msg = NULL;

	pthread_mutex_lock(&pdb->views);
	for (size_t i = 0; !msg && i < pdb->nbroken; i++)
		if (strlen(pdb->broken[i].table) == len &&
		    !strncasecmp(pdb->broken[i].table, table, len))
			msg = pdb->broken[i].msg;
	pthread_mutex_unlock(&pdb->views);
	return msg;
}

/* DuckDB says "Table with name X does not exist" for a table whose view could not be
 * created; the reply then names the damaged file instead. */
static int explain_missing(struct nx_pdb *pdb, struct nx_err *err)
{
	static const char pre[] = "Table with name ";
	const char *at = strstr(err->msg, pre), *end, *msg;

	if (err->code != NX_EDB || !at)
		return err->code;
	at += sizeof(pre) - 1;
	end = strstr(at, " does not exist");
	if (!end || !(msg = broken_msg(pdb, at, (size_t)(end - at))))
		return err->code;
	return nx_errf(err, NX_ECORRUPT, "%s", msg);
}

static int conn_get(struct nx_pdb *p, struct pconn **pc, struct nx_err *err)
{
	duckdb_connection c;

	pthread_mutex_lock(&p->lock);
	*pc = p->nidle ? p->idle[--p->nidle] : NULL;
	pthread_mutex_unlock(&p->lock);
	if (*pc)
		return 0;
	if (duckdb_connect(p->db, &c) == DuckDBError)
		return nx_errf(err, NX_EDB, "cannot connect to the profile database");
	*pc = pconn_of(c);
	return 0;
}

/* The pages DuckDB's allocator freed go back to the system after a query, at most once a
 * second: it kept them (about a second, and only as allocation goes on), per arena of each
 * thread: 59 MB of them after the flows and chains of a 100M-record profile (docs/memory.md,
 * "The server's peak with flows, chains and aggregates"). A purge after every query made
 * the next one fault its pages in again: the timeline's windows took 30 to 50 % more CPU. */
#define PURGE_EVERY_NS 1000000000LL

static void purge_now_and_then(void)
{
	static _Atomic long long last;
	struct timespec ts;
	long long now, was;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	was = atomic_load(&last);
	if (now - was >= PURGE_EVERY_NS && atomic_compare_exchange_strong(&last, &was, now))
		nx_duck_alloc_purge();
}

/* A connection that may carry a pending interrupt is not reused. */
static void conn_put(struct nx_pdb *p, struct pconn *pc, bool reuse)
{
	pthread_mutex_lock(&p->lock);
	if (reuse && p->nidle < POOL_MAX) {
		p->idle[p->nidle++] = pc;
		pc = NULL;
	}
	pthread_mutex_unlock(&p->lock);
	if (pc)
		pconn_close(pc);
	purge_now_and_then();
}

static const char *stmt_name(duckdb_statement_type t)
{
	static const char *const names[] = {
		[DUCKDB_STATEMENT_TYPE_INSERT] = "INSERT", [DUCKDB_STATEMENT_TYPE_UPDATE] = "UPDATE",
		[DUCKDB_STATEMENT_TYPE_EXPLAIN] = "EXPLAIN", [DUCKDB_STATEMENT_TYPE_DELETE] = "DELETE",
		[DUCKDB_STATEMENT_TYPE_PREPARE] = "PREPARE", [DUCKDB_STATEMENT_TYPE_CREATE] = "CREATE",
		[DUCKDB_STATEMENT_TYPE_EXECUTE] = "EXECUTE", [DUCKDB_STATEMENT_TYPE_ALTER] = "ALTER",
		[DUCKDB_STATEMENT_TYPE_TRANSACTION] = "transaction",
		[DUCKDB_STATEMENT_TYPE_COPY] = "COPY", [DUCKDB_STATEMENT_TYPE_ANALYZE] = "ANALYZE",
		[DUCKDB_STATEMENT_TYPE_VARIABLE_SET] = "SET VARIABLE",
		[DUCKDB_STATEMENT_TYPE_CREATE_FUNC] = "CREATE FUNCTION",
		[DUCKDB_STATEMENT_TYPE_DROP] = "DROP", [DUCKDB_STATEMENT_TYPE_EXPORT] = "EXPORT",
		[DUCKDB_STATEMENT_TYPE_PRAGMA] = "PRAGMA", [DUCKDB_STATEMENT_TYPE_VACUUM] = "VACUUM",
		[DUCKDB_STATEMENT_TYPE_CALL] = "CALL", [DUCKDB_STATEMENT_TYPE_SET] = "SET",
		[DUCKDB_STATEMENT_TYPE_LOAD] = "LOAD/INSTALL",
		[DUCKDB_STATEMENT_TYPE_ATTACH] = "ATTACH", [DUCKDB_STATEMENT_TYPE_DETACH] = "DETACH",
		[DUCKDB_STATEMENT_TYPE_MULTI] = "multi-part",
	};

	if ((size_t)t < NX_ARRAY_SIZE(names) && names[t])
		return names[t];
	return "non-SELECT";
}

struct run {
	const char *memory; /* the database's memory_limit, for the error beyond it */
	const char *base;   /* a retry database's: its parent's limit */
	struct pconn *pc;
	struct nx_wd_entry wd;
	const struct nx_query_limits *lim;
	bool armed;
};

static void on_deadline(void *arg)
{
	struct run *r = arg;
	duckdb_interrupt(r->pc->c);
}

/* Maps a DuckDB error message to our codes; a fired deadline wins. */
static int db_error(struct run *r, const char *msg, struct nx_err *err)
{
	msg = msg ? nx_duck_error_cause(msg) : "unknown DuckDB error";
	if (r->armed && r->wd.fired)
		return nx_errf(err, -ETIMEDOUT,
			       "the query ran longer than the %u %s limit and was interrupted; "
			       "filter with WHERE, add LIMIT or aggregate, or raise "
			       "NX_SERVER_QUERY_TIMEOUT (seconds)",
			       r->lim->timeout_ms % 1000 ? r->lim->timeout_ms
							 : r->lim->timeout_ms / 1000,
			       r->lim->timeout_ms % 1000 ? "ms" : "s");
	if (is_oom(msg) && r->base)
		return nx_errf(err, -ENOMEM,
			       "the query needs more memory than the server's limit of %s per "
			       "profile (NX_SERVER_MEMORY_LIMIT) and, run again alone, than its "
			       "limit of %s for a user's query (NX_SERVER_QUERY_MEMORY_LIMIT), even "
			       "spilling to disk; filter with WHERE, select fewer columns or "
			       "aggregate, or raise NX_SERVER_QUERY_MEMORY_LIMIT (DuckDB: %.*s)",
			       r->base, r->memory, (int)strcspn(msg, "\n"), msg);
	if (is_oom(msg))
		return nx_errf(err, -ENOMEM,
			       "the query needs more memory than the server's limit of %s per "
			       "profile (NX_SERVER_MEMORY_LIMIT) and could not spill it to disk; "
			       "filter with WHERE, select fewer columns or aggregate (DuckDB: %.*s)",
			       r->memory, (int)strcspn(msg, "\n"), msg);
	if (!strncmp(msg, "Permission Error", 16))
		return nx_errf(err, -EACCES,
			       "refused by the sandbox (queries may read only this profile's "
			       "tables): %s", msg);
	return nx_errf(err, NX_EDB, "%s", msg);
}

static bool ident_char(char ch)
{
	return ch == '_' || (ch >= '0' && ch <= '9') || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z') ||
	       (unsigned char)ch >= 0x80;
}

/* Whether name appears in sql as a whole word, in any case: a table the statement may
 * read (a word in a literal or comment too, which only makes a view early). */
static bool names_table(const char *sql, const char *name)
{
	size_t len = strlen(name);

	for (const char *s = sql; (s = strcasestr(s, name)); s++)
		if ((s == sql || !ident_char(s[-1])) && !ident_char(s[len]))
			return true;
	return false;
}

/* Whether sql may ask the catalog for the tables or their columns: every view is then
 * made (a word in a literal or comment too, which only makes the views early). */
static bool names_catalog(const char *sql)
{
	static const char *const words[] = { "information_schema", "duckdb_views",
					     "duckdb_columns", "duckdb_tables", "SHOW",
					     "DESCRIBE", "SUMMARIZE", "pragma_table_info",
					     "pragma_show_tables", "pragma_show_tables_expanded" };

	for (size_t i = 0; i < NX_ARRAY_SIZE(words); i++)
		if (names_table(sql, words[i]))
			return true;
	return false;
}

/* Makes, on c, the views not made yet of the tables that sql names: a fleet run's union
 * tables, and large tables, cut into slices first (views belong to the database: every
 * connection sees them; a statement that may ask the catalog makes those of the large
 * tables). A table whose view cannot be made is recorded with the damaged files, as at
 * opening; a deadline that fires meanwhile (r, when armed) leaves the table to the next
 * query. */
static int ensure_views(struct nx_pdb *p, duckdb_connection c, const char *sql, struct run *r,
			struct nx_err *err)
{
	int rc = 0;

	pthread_mutex_lock(&p->views);
	for (size_t i = 0; !rc && p->untried && i < p->files->n; i++) {
		const struct nx_ptable *t = &p->files->t[i];
		char *why;

		if (p->tried[i] || !(names_table(sql, t->name) ||
				     (p->large[i] && names_catalog(sql))))
			continue;
		why = make_view(c, p->dir, p->large[i] ? read_as_shared(p, t) : t, p->memory);
		if (why && r && r->armed && r->wd.fired) {
			free(why);
			rc = db_error(r, NULL, err);
			break;
		}
		if (why)
			add_broken(p, t->name, why);
		p->tried[i] = true;
		p->untried--;
	}
	pthread_mutex_unlock(&p->views);
	return rc;
}

/* Whether sql names a table read as slices (its words, as names_table finds them). A
 * statement over one is not kept: its bind holds a slice's footer as DuckDB parsed it
 * (about ten times its stored size), and the timeline's flows and chains, a statement per
 * event id, filled the caches with them: 90 MB more at 100M records (docs/memory.md, "The
 * server's peak with flows, chains and aggregates"). */
static bool names_large(struct nx_pdb *p, const char *sql)
{
	for (size_t i = 0; p->files && p->large && i < p->files->n; i++)
		if (p->large[i] && names_table(sql, p->files->t[i].name))
			return true;
	return false;
}

/* Parses and prepares; accepts exactly one SELECT statement. A statement this
 * connection prepared before comes from its cache (*cached: the cache owns *ps). Then
 * counts the statement's reads of small tables, which may copy one into memory
 * (resident.h) before the statement runs. */
static int prepare_select(struct nx_pdb *pdb, struct run *r, const char *sql,
			  duckdb_prepared_statement *ps, bool *cached, struct nx_err *err)
{
	struct nx_stmt_tag tag = { .copies = nx__resident_copies(&pdb->res) };
	unsigned copies = tag.copies;
	duckdb_extracted_statements ext = NULL;
	idx_t n;
	duckdb_statement_type st;
	int rc = 0;

	*cached = false;
	if ((*ps = nx__stmt_cache_get(&r->pc->stmts, sql, &tag))) {
		if (tag.copies == copies) {
			*cached = true;
			nx__resident_read(&pdb->res, r->pc->c, tag.reads);
			return 0;
		}
		/* a table it reads may have been copied since: bind it anew */
		nx__stmt_cache_drop(&r->pc->stmts, *ps);
		tag.copies = copies;
	}
	if ((rc = ensure_views(pdb, r->pc->c, sql, r, err)))
		return rc;
	n = duckdb_extract_statements(r->pc->c, sql, &ext);

	if (n == 0) {
		const char *e = duckdb_extract_statements_error(ext);
		rc = e ? db_error(r, e, err)
		       : nx_errf(err, NX_EUSAGE, "the query is empty: send one SELECT statement");
		goto out;
	}
	if (n > 1) {
		rc = nx_errf(err, -EACCES,
			     "the query holds %llu statements; send exactly one SELECT statement "
			     "per request", (unsigned long long)n);
		goto out;
	}
	if (duckdb_prepare_extracted_statement(r->pc->c, ext, 0, ps) == DuckDBError) {
		rc = db_error(r, duckdb_prepare_error(*ps), err);
		goto out;
	}
	st = duckdb_prepared_statement_type(*ps);
	if (st != DUCKDB_STATEMENT_TYPE_SELECT) {
		rc = nx_errf(err, -EACCES,
			     "only SELECT statements are allowed, not %s statements",
			     stmt_name(st));
	} else {
		tag.reads = nx__resident_mask(&pdb->res, sql);
		*cached = !names_large(pdb, sql) &&
			  nx__stmt_cache_put(&r->pc->stmts, sql, *ps, tag);
	}
out:
	duckdb_destroy_extracted(&ext);
	if (!rc)
		nx__resident_read(&pdb->res, r->pc->c, tag.reads);
	return rc;
}

static void write_columns(struct nx_strbuf *out, duckdb_result *res, struct nx_rj_type *types,
			  idx_t ncol)
{
	nx_strbuf_addstr(out, "{\"columns\":[");
	for (idx_t i = 0; i < ncol; i++) {
		const char *nm = duckdb_column_name(res, i);

		nx_strbuf_addstr(out, i ? ",{\"name\":" : "{\"name\":");
		nx_json_quote(out, nm ? nm : "", nm ? strlen(nm) : 0);
		nx_strbuf_addstr(out, ",\"type\":");
		nx_json_quote(out, types[i].sql_name, strlen(types[i].sql_name));
		nx_strbuf_addch(out, '}');
	}
	nx_strbuf_addstr(out, "],\"rows\":[");
}

static void cut(struct nx_strbuf *sb, size_t len)
{
	sb->len = len;
	if (sb->buf)
		sb->buf[len] = '\0';
}

enum cut_reason { CUT_NONE, CUT_ROWS, CUT_BYTES };

/* An open query: its connection, deadline and streaming result, and where the rows
 * are. Rows are produced chunk by chunk from DuckDB's streaming result. */
struct nx_pdb_cursor {
	struct nx_pdb *pdb;
	struct nx_query_limits lim;
	struct run r;
	duckdb_prepared_statement ps;
	bool cached;             /* ps belongs to the connection's statement cache */
	bool failed;             /* DuckDB failed with ps: it leaves the cache */
	duckdb_pending_result pending;
	duckdb_result res;
	bool have_res, done;
	struct nx_rj_type *types;
	idx_t ncol;
	duckdb_vector *vec;
	duckdb_data_chunk chunk; /* current chunk, rows [row, size) still to write */
	idx_t row, size;
	uint64_t nrows;          /* rows written */
	uint64_t row_bytes;      /* bytes of the rows written, for the byte cap */
	enum cut_reason why;
};

static int cursor_start(struct nx_pdb_cursor *k, const char *sql, struct nx_strbuf *out,
			struct nx_err *err)
{
	struct run *r = &k->r;
	int rc = prepare_select(k->pdb, r, sql, &k->ps, &k->cached, err);

	if (rc)
		return rc;
	k->ncol = duckdb_prepared_statement_column_count(k->ps);
	k->types = nx_xcalloc(k->ncol ? k->ncol : 1, sizeof(*k->types));
	k->vec = nx_xcalloc(k->ncol ? k->ncol : 1, sizeof(*k->vec));
	for (idx_t i = 0; i < k->ncol; i++) {
		duckdb_logical_type t = duckdb_prepared_statement_column_logical_type(k->ps, i);
		const char *bad = NULL;

		rc = nx__rj_type_init(&k->types[i], t, &bad);
		duckdb_destroy_logical_type(&t);
		if (rc) {
			char *nm = (char *)duckdb_prepared_statement_column_name(k->ps, i);
			rc = nx_errf(err, -ENOTSUP,
				     "column '%s' has type %s, which the API cannot encode as JSON; "
				     "CAST it to VARCHAR", nm ? nm : "?", bad);
			duckdb_free(nm); /* this one is the caller's to free */
			return rc;
		}
	}
	if (duckdb_pending_prepared_streaming(k->ps, &k->pending) == DuckDBError) {
		k->failed = true;
		return db_error(r, duckdb_pending_error(k->pending), err);
	}
	k->have_res = true;
	if (nx_duck_execute_pending(k->pending, &k->res) == DuckDBError) {
		k->failed = true;
		return db_error(r, duckdb_result_error(&k->res), err);
	}
	write_columns(out, &k->res, k->types, k->ncol);
	return 0;
}

void nx__pdb_cursor_close(struct nx_pdb_cursor *k)
{
	bool fired = false;

	if (!k)
		return;
	if (k->chunk)
		duckdb_destroy_data_chunk(&k->chunk);
	if (k->have_res)
		duckdb_destroy_result(&k->res);
	duckdb_destroy_pending(&k->pending);
	if (!k->cached)
		duckdb_destroy_prepare(&k->ps);
	else if (k->failed)
		nx__stmt_cache_drop(&k->r.pc->stmts, k->ps);
	for (idx_t i = 0; k->types && i < k->ncol; i++)
		nx__rj_type_release(&k->types[i]);
	free(k->types);
	free(k->vec);
	if (k->r.armed)
		fired = nx__wd_disarm(k->r.lim->wd, &k->r.wd);
	if (k->r.pc)
		conn_put(k->pdb, k->r.pc, !fired);
	free(k);
}

int nx__pdb_cursor_open(struct nx_pdb *pdb, const char *sql, const struct nx_query_limits *lim,
			struct nx_pdb_cursor **out_cur, struct nx_strbuf *out, struct nx_err *err)
{
	struct nx_pdb_cursor *k = nx_xcalloc(1, sizeof(*k));
	size_t start = out->len;
	int rc;

	*out_cur = NULL;
	k->pdb = pdb;
	k->lim = *lim;
	k->r.lim = &k->lim;
	k->r.memory = pdb->memory;
	k->r.base = pdb->base_memory;
	rc = conn_get(pdb, &k->r.pc, err);
	if (rc) {
		free(k);
		return rc;
	}
	if (lim->wd && lim->timeout_ms) {
		nx__wd_arm(lim->wd, &k->r.wd, lim->timeout_ms, on_deadline, &k->r);
		k->r.armed = true;
	}
	rc = cursor_start(k, sql, out, err);
	if (rc) {
		cut(out, start);
		rc = explain_missing(pdb, err);
		nx__pdb_cursor_close(k);
		return rc;
	}
	*out_cur = k;
	return 0;
}

static void write_trailer(struct nx_pdb_cursor *k, struct nx_strbuf *out)
{
	nx_strbuf_addf(out, "],\"row_count\":%llu,\"truncated\":%s",
		       (unsigned long long)k->nrows, k->why == CUT_NONE ? "false" : "true");
	if (k->why == CUT_ROWS)
		nx_strbuf_addf(out, ",\"message\":\"result cut at the %llu-row limit; add LIMIT, "
				    "filter or aggregate to see everything\"",
			       (unsigned long long)k->r.lim->max_rows);
	else if (k->why == CUT_BYTES)
		nx_strbuf_addf(out, ",\"message\":\"result cut after %llu rows at the %llu-byte "
				    "reply limit; select fewer columns, add LIMIT or aggregate\"",
			       (unsigned long long)k->nrows,
			       (unsigned long long)k->r.lim->max_bytes);
	nx_strbuf_addch(out, '}');
	k->done = true;
}

/* Appends rows until want bytes were added, the caps cut the result or it ends (then
 * the trailer follows). Returns 1 while rows remain, 0 once the trailer is written. */
int nx__pdb_cursor_fill(struct nx_pdb_cursor *k, struct nx_strbuf *out, size_t want,
			struct nx_err *err)
{
	size_t start = out->len;

	if (k->done)
		return 0;
	while (k->why == CUT_NONE) {
		if (k->row >= k->size) {
			if (k->chunk)
				duckdb_destroy_data_chunk(&k->chunk);
			if (out->len - start >= want)
				return 1; /* the next chunk is fetched on the next call */
			k->chunk = duckdb_fetch_chunk(k->res);
			if (!k->chunk) {
				if (!duckdb_result_error(&k->res))
					break;
				k->failed = true;
				db_error(&k->r, duckdb_result_error(&k->res), err);
				return explain_missing(k->pdb, err);
			}
			k->size = duckdb_data_chunk_get_size(k->chunk);
			k->row = 0;
			for (idx_t c = 0; c < k->ncol; c++)
				k->vec[c] = duckdb_data_chunk_get_vector(k->chunk, c);
			continue;
		}
		size_t mark = out->len;

		if (k->nrows >= k->r.lim->max_rows) {
			k->why = CUT_ROWS;
			break;
		}
		nx_strbuf_addstr(out, k->nrows ? ",[" : "[");
		for (idx_t c = 0; c < k->ncol; c++) {
			if (c)
				nx_strbuf_addch(out, ',');
			nx__rj_value(out, &k->types[c], k->vec[c], k->row);
		}
		nx_strbuf_addch(out, ']');
		if (k->row_bytes + (out->len - mark) > k->r.lim->max_bytes) {
			cut(out, mark);
			k->why = CUT_BYTES;
			break;
		}
		k->row_bytes += out->len - mark;
		k->row++;
		k->nrows++;
	}
	write_trailer(k, out);
	return 0;
}

int nx__pdb_query(struct nx_pdb *pdb, const char *sql, const struct nx_query_limits *lim,
		  struct nx_strbuf *out, struct nx_err *err)
{
	struct nx_pdb_cursor *k = NULL;
	size_t start = out->len;
	int rc = nx__pdb_cursor_open(pdb, sql, lim, &k, out, err);

	if (!rc)
		rc = nx__pdb_cursor_fill(k, out, SIZE_MAX, err);
	if (rc < 0)
		cut(out, start);
	nx__pdb_cursor_close(k);
	return rc < 0 ? rc : 0;
}

int nx__pdb_query_chunks(struct nx_pdb *pdb, const char *sql, const struct nx_query_limits *lim,
			 nx__pdb_chunk_fn fn, void *arg, struct nx_err *err)
{
	struct run r = { .lim = lim, .memory = pdb->memory };
	duckdb_prepared_statement ps = NULL;
	duckdb_pending_result pending = NULL;
	duckdb_data_chunk chunk;
	duckdb_result res;
	bool have_res = false, fired = false, cached = false, failed = false;
	uint64_t rows = 0;
	int rc;

	rc = conn_get(pdb, &r.pc, err);
	if (rc)
		return rc;
	if (lim->wd && lim->timeout_ms) {
		nx__wd_arm(lim->wd, &r.wd, lim->timeout_ms, on_deadline, &r);
		r.armed = true;
	}
	rc = prepare_select(pdb, &r, sql, &ps, &cached, err);
	if (rc)
		goto out;
	if (duckdb_pending_prepared_streaming(ps, &pending) == DuckDBError) {
		failed = true;
		rc = db_error(&r, duckdb_pending_error(pending), err);
		goto out;
	}
	have_res = true;
	if (duckdb_execute_pending(pending, &res) == DuckDBError) {
		failed = true;
		rc = db_error(&r, duckdb_result_error(&res), err);
		goto out;
	}
	while (!rc && (chunk = duckdb_fetch_chunk(res))) {
		rows += duckdb_data_chunk_get_size(chunk);
		if (rows > lim->max_rows)
			rc = nx_errf(err, -E2BIG, "the result has more than %llu rows",
				     (unsigned long long)lim->max_rows);
		else
			rc = fn(arg, chunk, err);
		duckdb_destroy_data_chunk(&chunk);
	}
	if (!rc && duckdb_result_error(&res)) {
		failed = true;
		rc = db_error(&r, duckdb_result_error(&res), err);
	}
out:
	if (have_res)
		duckdb_destroy_result(&res);
	duckdb_destroy_pending(&pending);
	if (!cached)
		duckdb_destroy_prepare(&ps);
	else if (failed)
		nx__stmt_cache_drop(&r.pc->stmts, ps);
	if (r.armed)
		fired = nx__wd_disarm(lim->wd, &r.wd);
	if (rc)
		rc = explain_missing(pdb, err);
	conn_put(pdb, r.pc, !fired);
	return rc;
}

/* A VARCHAR cell copied, "" when NULL. */
static char *vec_string(duckdb_vector v, idx_t row)
{
	char *s = nx__vec_text(v, row);

	return s ? s : nx_xstrdup("");
}

int nx__pdb_describe(struct nx_pdb *pdb, const char *table, struct nx_pdb_column **cols,
		     size_t *n, struct nx_err *err)
{
	static const char sql[] =
		"SELECT column_name, data_type, is_nullable FROM information_schema.columns "
		"WHERE table_schema = 'main' AND lower(table_name) = lower($1) "
		"ORDER BY ordinal_position";
	struct pconn *pc = NULL;
	duckdb_prepared_statement ps = NULL;
	duckdb_result res;
	bool have_res = false;
	duckdb_data_chunk chunk;
	struct nx_pdb_column *v = NULL;
	size_t nv = 0, cap = 0;
	int rc;

	*cols = NULL;
	*n = 0;
	rc = conn_get(pdb, &pc, err);
	if (rc)
		return rc;
	ensure_views(pdb, pc->c, table, NULL, err); /* no deadline: it cannot fail */
	if (broken_msg(pdb, table, strlen(table))) {
		rc = nx_errf(err, NX_ECORRUPT, "%s", broken_msg(pdb, table, strlen(table)));
		goto out;
	}
	if (duckdb_prepare(pc->c, sql, &ps) == DuckDBError ||
	    duckdb_bind_varchar(ps, 1, table) == DuckDBError) {
		const char *e = duckdb_prepare_error(ps);
		rc = nx_errf(err, NX_EDB, "%s", e ? e : "cannot prepare the schema query");
		goto out;
	}
	have_res = true;
	if (duckdb_execute_prepared(ps, &res) == DuckDBError) {
		rc = nx_errf(err, NX_EDB, "%s", duckdb_result_error(&res));
		goto out;
	}
	while ((chunk = duckdb_fetch_chunk(res))) {
		idx_t size = duckdb_data_chunk_get_size(chunk);
		duckdb_vector a = duckdb_data_chunk_get_vector(chunk, 0);
		duckdb_vector b = duckdb_data_chunk_get_vector(chunk, 1);
		duckdb_vector y = duckdb_data_chunk_get_vector(chunk, 2);

		for (idx_t row = 0; row < size; row++) {
			char *nullable = vec_string(y, row);

			NX_GROW(v, nv + 1, cap);
			v[nv].name = vec_string(a, row);
			v[nv].type = vec_string(b, row);
			v[nv].nullable = !strcmp(nullable, "YES");
			nv++;
			free(nullable);
		}
		duckdb_destroy_data_chunk(&chunk);
	}
	if (!nv)
		rc = nx_errf(err, NX_ENOTFOUND, "table '%s' does not exist in this profile", table);
out:
	if (have_res)
		duckdb_destroy_result(&res);
	duckdb_destroy_prepare(&ps);
	conn_put(pdb, pc, true);
	if (rc) {
		nx__pdb_columns_free(v, nv);
	} else {
		*cols = v;
		*n = nv;
	}
	return rc;
}

void nx__pdb_columns_free(struct nx_pdb_column *cols, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(cols[i].name);
		free(cols[i].type);
	}
	free(cols);
}
