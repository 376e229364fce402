/* SPDX-License-Identifier: MIT
 * scan_read.c: the rows recommend's passes read (see scan.h): some columns of a
 * profile table, batch by batch, with the types its rx_ view gives them. The C reader
 * (db/parquet_read.h) reads the table's files, holding two row groups; files it does not
 * read (an encoding or codec it lacks, a column of another type) are read by DuckDB
 * instead, as are passes that need their rows sorted. The C reader's row groups are
 * decoded on a thread of their own, one ahead of the pass that reads them (NX_REC_THREADS=1:
 * on the pass's thread, one row group held; "recommend on two threads" in docs/memory.md). */
#include "common/compat.h"
#include "analysis/scan.h"
#include "analysis/rec.h"
#include "db/table_files.h"
#include "common/env_num.h"
#include "common/fsutil.h"
#include "common/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The C reader's batches as the view types them, in two sets (the reader's two sets of
 * buffers, nx_pqr_two_sets): DOUBLE columns stored as integers cast into f64. */
struct conv {
	struct nx_pqr_batch batch;
	double *f64[NX_PQR_MAX_COLS];
	size_t cap;
};

/* The thread that decodes the row groups ahead: it holds at most two batches, the one
 * the pass reads and the next. */
struct ahead {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t ready, room;
	const struct nx_pqr_batch *q[2]; /* decoded, not yet taken, from head */
	size_t head, count;
	bool held;  /* the pass holds the batch it took last */
	bool done;  /* the thread met the end or an error (rc, err), and stopped */
	bool stop;  /* the pass closes the read */
	int rc;
	struct nx_err err;
};

struct nx_rec_read {
	struct nx_pqr *pqr;
	struct conv conv[2];
	unsigned set;            /* the conv of the reader's next batch */
	struct ahead *ahead;     /* NULL: the pass decodes its batches itself */
	struct nx_duck_cursor *cur;
	const struct nx_rec_colspec *cols;
	size_t ncols;
	struct nx_pqr_batch batch;
	/* buffers of the converted columns */
	uint8_t *valid[NX_PQR_MAX_COLS];
	int64_t *i64[NX_PQR_MAX_COLS];
	double *f64[NX_PQR_MAX_COLS];
	const char **str[NX_PQR_MAX_COLS];
	uint32_t *len[NX_PQR_MAX_COLS];
	size_t cap;
};

static void ahead_start(struct nx_rec_read *r);

/* The table's files in read order (the rule of db/table_files.h). */
static int table_files(const char *dir, const char *table, char ***out, size_t *n,
		       struct nx_err *err)
{
	struct nx_table_file *f;
	size_t all;
	int rc = nx_table_files_list(dir, NULL, NULL, &f, &all, err);

	*out = NULL;
	*n = 0;
	for (size_t i = 0; !rc && i < all; i++) {
		if (strcmp(f[i].table, table))
			continue;
		*out = nx_xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = nx_path_join(dir, f[i].file);
	}
	nx_table_files_free(f, all);
	return rc;
}

static void free_files(char **files, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(files[i]);
	free(files);
}

/* Whether the C reader's kinds are what the view's types take. */
static bool kinds_fit(const struct nx_pqr *p, const struct nx_rec_colspec *cols, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		enum nx_pqr_kind kd = nx_pqr_kind(p, k);
		bool ok = kd == NX_PQR_NULL ||
			  (cols[k].want == NX_REC_BIGINT &&
			   (kd == NX_PQR_I64 || kd == NX_PQR_BOOL)) ||
			  (cols[k].want == NX_REC_DOUBLE &&
			   (kd == NX_PQR_I64 || kd == NX_PQR_F64)) ||
			  (cols[k].want == NX_REC_VARCHAR && kd == NX_PQR_STR);
		if (!ok)
			return false;
	}
	return true;
}

static const char *type_sql(enum nx_rec_want w)
{
	return w == NX_REC_BIGINT ? "BIGINT" : w == NX_REC_DOUBLE ? "DOUBLE" : "VARCHAR";
}

static bool listed(char **names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* The DuckDB way: the columns cast as the view casts them, NULL where the files lack
 * them, in file order or sorted. */
static int open_duck(struct nx_duck *d, char **files, size_t nfiles, struct nx_rec_read *r,
		     const char *order_by, struct nx_err *err)
{
	struct nx_strbuf scan = NX_STRBUF_INIT, sql = NX_STRBUF_INIT, probe = NX_STRBUF_INIT;
	char **names = NULL;
	size_t n = 0;
	int rc = 0;

	nx_strbuf_addstr(&scan, "read_parquet([");
	for (size_t i = 0; i < nfiles; i++) {
		if (i)
			nx_strbuf_addch(&scan, ',');
		nx_sql_quote(&scan, files[i]);
	}
	nx_strbuf_addstr(&scan, "])");
	if (nfiles) {
		nx_strbuf_addf(&probe, "SELECT * FROM %s", scan.buf);
		rc = nx_duck_columns(d, probe.buf, &names, &n, err);
	}
	nx_strbuf_addstr(&sql, "SELECT ");
	for (size_t k = 0; !rc && k < r->ncols; k++) {
		nx_strbuf_addstr(&sql, k ? ", CAST(" : "CAST(");
		if (listed(names, n, r->cols[k].name))
			nx_sql_quote_ident(&sql, r->cols[k].name);
		else
			nx_strbuf_addstr(&sql, "NULL");
		nx_strbuf_addf(&sql, " AS %s)", type_sql(r->cols[k].want));
	}
	if (nfiles)
		nx_strbuf_addf(&sql, " FROM %s", scan.buf);
	else
		nx_strbuf_addstr(&sql, " WHERE false");
	if (nfiles && order_by)
		nx_strbuf_addf(&sql, " ORDER BY %s", order_by);
	if (!rc)
		rc = nx_duck_cursor_open(d, sql.buf, false, &r->cur, err);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	nx_strbuf_release(&scan);
	nx_strbuf_release(&sql);
	nx_strbuf_release(&probe);
	return rc;
}

int nx__rec_read_open(struct nx_duck *d, const char *dir, const char *table,
		      const struct nx_rec_colspec *cols, size_t ncols, const char *order_by,
		      bool duck, struct nx_rec_read **out, struct nx_err *err)
{
	struct nx_rec_read *r = nx_xcalloc(1, sizeof(*r));
	const char *names[NX_PQR_MAX_COLS];
	char **files;
	size_t nfiles;
	int rc = table_files(dir, table, &files, &nfiles, err);

	*out = NULL;
	r->cols = cols;
	r->ncols = ncols;
	for (size_t k = 0; k < ncols && k < NX_PQR_MAX_COLS; k++)
		names[k] = cols[k].name;
	/* the C reader, unless the rows must come sorted or it does not read the files */
	if (!rc && !order_by && !duck && nfiles) {
		struct nx_err ignored = { 0 };
		if (nx_pqr_open(&r->pqr, (const char *const *)files, nfiles, names, ncols,
				&ignored) || !kinds_fit(r->pqr, cols, ncols)) {
			nx_pqr_close(r->pqr);
			r->pqr = NULL;
		}
	}
	if (!rc && !r->pqr)
		rc = open_duck(d, files, nfiles, r, order_by, err);
	else if (!rc)
		ahead_start(r);
	free_files(files, nfiles);
	if (rc) {
		nx__rec_read_close(r);
		return nx_err_wrap(err, "reading %s", table);
	}
	*out = r;
	return 0;
}

int nx__rec_read_ranges(const char *dir, const char *table, const struct nx_rec_colspec *cols,
			size_t ncols, int64_t *rows, struct nx_pqr_range *out, struct nx_err *err)
{
	struct nx_pqr *pqr = NULL;
	int rc = nx__rec_read_groups(dir, table, cols, ncols, &pqr, err);

	if (!rc)
		rc = nx_pqr_ranges(pqr, rows, out, err);
	nx_pqr_close(pqr);
	return rc;
}

int nx__rec_read_groups(const char *dir, const char *table, const struct nx_rec_colspec *cols,
			size_t ncols, struct nx_pqr **out, struct nx_err *err)
{
	const char *names[NX_PQR_MAX_COLS];
	struct nx_pqr *pqr = NULL;
	char **files;
	size_t nfiles;
	int rc = table_files(dir, table, &files, &nfiles, err);

	*out = NULL;
	for (size_t k = 0; k < ncols && k < NX_PQR_MAX_COLS; k++)
		names[k] = cols[k].name;
	if (!rc && !nfiles)
		rc = nx_errf(err, NX_ENOTFOUND, "%s: no file", table);
	if (!rc)
		rc = nx_pqr_open(&pqr, (const char *const *)files, nfiles, names, ncols, err);
	/* what the C reader does not read is read by the pass */
	if (rc == NX_EVERSION || rc == NX_EMISMATCH)
		rc = err->code = NX_ENOTFOUND;
	if (!rc && !kinds_fit(pqr, cols, ncols))
		rc = nx_errf(err, NX_ENOTFOUND, "%s: columns of other types", table);
	if (rc)
		nx_pqr_close(pqr);
	else
		*out = pqr;
	free_files(files, nfiles);
	return rc;
}

static void room(struct nx_rec_read *r, size_t rows)
{
	if (rows <= r->cap)
		return;
	for (size_t k = 0; k < r->ncols; k++) {
		r->valid[k] = nx_xrealloc(r->valid[k], rows);
		r->i64[k] = nx_xrealloc(r->i64[k], rows * sizeof(**r->i64));
		r->f64[k] = nx_xrealloc(r->f64[k], rows * sizeof(**r->f64));
		r->str[k] = nx_xrealloc(r->str[k], rows * sizeof(**r->str));
		r->len[k] = nx_xrealloc(r->len[k], rows * sizeof(**r->len));
	}
	r->cap = rows;
}

/* A DuckDB chunk as a batch of the view's types. */
static void from_chunk(struct nx_rec_read *r, const struct nx_dchunk *c)
{
	size_t rows = nx_dchunk_rows(c);

	room(r, rows ? rows : 1);
	r->batch.rows = rows;
	r->batch.ncols = r->ncols;
	for (size_t k = 0; k < r->ncols; k++) {
		struct nx_pqr_col *col = &r->batch.col[k];
		size_t present = 0;
		for (size_t i = 0; i < rows; i++) {
			const char *s;
			size_t len = 0;
			switch (r->cols[k].want) {
			case NX_REC_BIGINT:
				r->valid[k][i] = nx_dchunk_i64(c, k, i, &r->i64[k][i]);
				break;
			case NX_REC_DOUBLE:
				r->valid[k][i] = nx_dchunk_f64(c, k, i, &r->f64[k][i]);
				break;
			case NX_REC_VARCHAR:
				r->valid[k][i] = nx_dchunk_str(c, k, i, &s, &len);
				r->str[k][i] = r->valid[k][i] ? s : NULL;
				r->len[k][i] = (uint32_t)len;
				break;
			}
			present += r->valid[k][i];
		}
		col->kind = r->cols[k].want == NX_REC_BIGINT ? NX_PQR_I64
			  : r->cols[k].want == NX_REC_DOUBLE ? NX_PQR_F64 : NX_PQR_STR;
		col->valid = present == rows ? NULL : r->valid[k]; /* as the C reader's */
		col->i64 = r->i64[k];
		col->f64 = r->f64[k];
		col->str = r->str[k];
		col->len = r->len[k];
		col->idx = NULL; /* no dictionary through DuckDB */
		col->dict_str = NULL;
		col->dict_len = NULL;
		col->ndict = 0;
	}
}

/* The C reader's next batch, typed as the view types it, into *b (NULL at the end). */
static int pqr_next(struct nx_rec_read *r, const struct nx_pqr_batch **b, struct nx_err *err)
{
	const struct nx_pqr_batch *pb;
	int rc;

	*b = NULL;
	if ((rc = nx_pqr_next(r->pqr, &pb, err)) || !pb)
		return rc;
	struct conv *cv = &r->conv[r->set];
	r->set ^= r->ahead ? 1u : 0u; /* one set when the pass decodes (it used one before) */
	cv->batch = *pb;
	/* DOUBLE columns stored as integers are cast, as the view casts them */
	for (size_t k = 0; k < r->ncols; k++) {
		struct nx_pqr_col *col = &cv->batch.col[k];
		if (r->cols[k].want == NX_REC_DOUBLE && col->kind == NX_PQR_I64) {
			if (cv->cap < pb->rows) {
				for (size_t j = 0; j < r->ncols; j++)
					cv->f64[j] = nx_xrealloc(cv->f64[j],
								 pb->rows * sizeof(**cv->f64));
				cv->cap = pb->rows;
			}
			for (size_t i = 0; i < pb->rows; i++)
				cv->f64[k][i] = (double)col->i64[i];
			col->f64 = cv->f64[k];
			col->kind = NX_PQR_F64;
			col->idx = NULL; /* its dictionary holds the integers */
		} else if (col->kind == NX_PQR_BOOL) {
			col->kind = NX_PQR_I64;
		}
	}
	*b = &cv->batch;
	return 0;
}

/* The decoding thread: a batch whenever fewer than two are out, until the end, an
 * error or the pass's stop. The set it decodes into is free: the batches out are the
 * last ones before it, at most one, in the other set. */
static void *ahead_main(void *arg)
{
	struct nx_rec_read *r = arg;
	struct ahead *a = r->ahead;

	for (;;) {
		pthread_mutex_lock(&a->mu);
		while (a->count + (a->held ? 1 : 0) == 2 && !a->stop)
			pthread_cond_wait(&a->room, &a->mu);
		bool stop = a->stop;
		pthread_mutex_unlock(&a->mu);
		const struct nx_pqr_batch *b = NULL;
		struct nx_err err = { 0 };
		int rc = stop ? 0 : pqr_next(r, &b, &err);
		pthread_mutex_lock(&a->mu);
		if (rc || !b) {
			a->rc = rc;
			a->err = err;
			a->done = true;
			pthread_cond_signal(&a->ready);
			pthread_mutex_unlock(&a->mu);
			return NULL;
		}
		a->q[(a->head + a->count) % 2] = b;
		a->count++;
		pthread_cond_signal(&a->ready);
		pthread_mutex_unlock(&a->mu);
	}
}

static void ahead_free(struct ahead *a)
{
	pthread_cond_destroy(&a->room);
	pthread_cond_destroy(&a->ready);
	pthread_mutex_destroy(&a->mu);
	free(a);
}

int nx__rec_threads(void)
{
	return (int)nx_env_whole_or("NX_REC_THREADS", 2, "threads", 2) < 2 ? 1 : 2;
}

/* Starts the thread (NX_REC_THREADS=1: none, the pass decodes); when it cannot start,
 * the pass decodes too. */
static void ahead_start(struct nx_rec_read *r)
{
	if (nx__rec_threads() < 2)
		return;
	struct ahead *a = nx_xcalloc(1, sizeof(*a));
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->ready, NULL);
	pthread_cond_init(&a->room, NULL);
	nx_pqr_two_sets(r->pqr);
	r->ahead = a;
	if (pthread_create(&a->thread, NULL, ahead_main, r)) {
		r->ahead = NULL;
		ahead_free(a);
	}
}

/* Stops the thread and waits for it (it ends the row group it decodes). */
static void ahead_stop(struct nx_rec_read *r)
{
	struct ahead *a = r->ahead;

	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = true;
	pthread_cond_signal(&a->room);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->thread, NULL);
	r->ahead = NULL;
	ahead_free(a);
}

/* The next batch the thread decoded: the one taken before is given back first. Its
 * error comes once, after the batches before it. */
static int ahead_next(struct ahead *a, const struct nx_pqr_batch **b, struct nx_err *err)
{
	int rc = 0;

	*b = NULL;
	pthread_mutex_lock(&a->mu);
	if (a->held) {
		a->held = false;
		pthread_cond_signal(&a->room);
	}
	while (!a->count && !a->done)
		pthread_cond_wait(&a->ready, &a->mu);
	if (a->count) {
		*b = a->q[a->head];
		a->head = (a->head + 1) % 2;
		a->count--;
		a->held = true;
	} else if (a->rc) {
		rc = a->rc;
		*err = a->err;
		a->rc = 0;
	}
	pthread_mutex_unlock(&a->mu);
	return rc;
}

int nx__rec_read_next(struct nx_rec_read *r, const struct nx_pqr_batch **b, struct nx_err *err)
{
	int rc;

	*b = NULL;
	if (!r->pqr) {
		const struct nx_dchunk *c;
		if ((rc = nx_duck_cursor_next(r->cur, &c, err)) || !c)
			return rc;
		from_chunk(r, c);
		*b = &r->batch;
		return 0;
	}
	return r->ahead ? ahead_next(r->ahead, b, err) : pqr_next(r, b, err);
}

void nx__rec_read_close(struct nx_rec_read *r)
{
	if (!r)
		return;
	ahead_stop(r);
	nx_pqr_close(r->pqr);
	for (size_t set = 0; set < 2; set++)
		for (size_t k = 0; k < r->ncols; k++)
			free(r->conv[set].f64[k]);
	nx_duck_cursor_close(r->cur);
	for (size_t k = 0; k < r->ncols; k++) {
		free(r->valid[k]);
		free(r->i64[k]);
		free(r->f64[k]);
		free(r->str[k]);
		free(r->len[k]);
	}
	free(r);
}

int nx__rec_read_pass(struct nx_duck *d, const char *dir, const char *table,
		      const struct nx_rec_colspec *cols, size_t ncols, const char *order_by,
		      void (*reset)(void *arg), nx_rec_batch_fn fn, void *arg, struct nx_err *err)
{
	/* NX_REC_READ=duckdb reads every pass with DuckDB (the tests compare both ways) */
	const char *how = getenv("NX_REC_READ");
	bool duck = how && !strcmp(how, "duckdb"), sorted = false;
	int rc;

	for (;;) {
		struct nx_rec_read *r = NULL;
		const struct nx_pqr_batch *b;
		if (reset)
			reset(arg);
		rc = nx__rec_read_open(d, dir, table, cols, ncols, sorted ? order_by : NULL, duck,
				       &r, err);
		while (!rc && !(rc = nx__rec_read_next(r, &b, err)) && b)
			rc = fn(arg, b, err);
		bool by_duckdb = r && !r->pqr;
		nx__rec_read_close(r);
		if (rc == NX_REC_UNSORTED && !sorted && order_by) {
			sorted = true; /* DuckDB sorts them */
			continue;
		}
		if (rc == NX_EVERSION && !by_duckdb && !duck) {
			duck = true; /* a row group the C reader does not read: DuckDB reads all */
			continue;
		}
		if (rc == NX_REC_UNSORTED)
			rc = nx_errf(err, NX_EDB, "%s: rows out of order even sorted", table);
		return rc;
	}
}
