/* SPDX-License-Identifier: MIT
 * resident.c: copying small, often-read tables into memory (see resident.h). The copy
 * is made under a temporary name, measured, and swapped in for the view in the same
 * transaction, so a query on another connection sees either the view or the table,
 * never neither; any failure rolls back and leaves the view. */
#include "common/compat.h"
#include "server/resident.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "db/duck_conn.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

void nx__resident_init(struct nx_resident *r, int64_t budget)
{
	memset(r, 0, sizeof(*r));
	r->budget = budget;
	pthread_mutex_init(&r->lock, NULL);
}

void nx__resident_release(struct nx_resident *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->t[i].name);
	pthread_mutex_destroy(&r->lock);
	memset(r, 0, sizeof(*r));
}

void nx__resident_add(struct nx_resident *r, const char *name, uint64_t bytes)
{
	if (bytes > NX_RESIDENT_FILE_BYTES || r->n == NX_RESIDENT_MAX)
		return;
	r->t[r->n++] = (struct nx_rtable){ .name = nx_xstrdup(name) };
}

/* The candidate named by the identifier s[0, len), as bit mask. */
static uint64_t name_bit(const struct nx_resident *r, const char *s, size_t len)
{
	for (size_t j = 0; j < r->n; j++)
		if (strlen(r->t[j].name) == len && !strncasecmp(s, r->t[j].name, len))
			return (uint64_t)1 << j;
	return 0;
}

static bool ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (c & 0x80);
}

static bool ident_char(char c)
{
	return ident_start(c) || (c >= '0' && c <= '9') || c == '$';
}

/* The statement is scanned as SQL tokens: every identifier, bare or double-quoted,
 * that names a candidate counts, string literals and comments do not. A column that
 * shares a table's name counts too; that costs at most an early copy of a small table,
 * within the budget. */
uint64_t nx__resident_mask(const struct nx_resident *r, const char *sql)
{
	uint64_t mask = 0;
	const char *p = sql;

	while (r->n && *p) {
		if (*p == '\'' || *p == '"') { /* 'literal' or "identifier", '' and "" escape */
			struct nx_strbuf id = NX_STRBUF_INIT;
			char q = *p++;

			for (; *p; p++) {
				if (*p == q && p[1] != q)
					break;
				if (*p == q)
					p++;
				nx_strbuf_addch(&id, *p);
			}
			if (q == '"' && id.len)
				mask |= name_bit(r, id.buf, id.len);
			nx_strbuf_release(&id);
			if (*p)
				p++;
		} else if (p[0] == '-' && p[1] == '-') {
			p += strcspn(p, "\n");
		} else if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");
			p = e ? e + 2 : p + strlen(p);
		} else if (ident_start(*p)) {
			const char *b = p;
			while (ident_char(*p))
				p++;
			mask |= name_bit(r, b, (size_t)(p - b));
		} else {
			p++;
		}
	}
	return mask;
}

/* The first value of sql's result as an integer (NULL: 0); -1 when it fails. */
static int64_t query_i64(duckdb_connection c, const char *sql)
{
	struct nx_err err = { 0 };
	int64_t v;

	return nx_duck_con_query_i64(c, sql, &v, &err) ? -1 : v;
}

/* Runs our statement on c; false when DuckDB refused it. */
static bool exec(duckdb_connection c, const struct nx_strbuf *sql)
{
	struct nx_err err = { 0 };
	return nx_duck_con_exec(c, sql->buf, &err) == 0;
}

/* Past one vector of rows DuckDB stores each column of a table in blocks of 256 KiB. */
#define DUCK_VECTOR_ROWS 2048
#define DUCK_BLOCK_BYTES ((int64_t)256 << 10)

/* What DuckDB's in-memory tables take, by its own accounting: their blocks, and the
 * blocks of their strings longer than 12 bytes. */
#define MEMORY_SQL                                                                           \
	"SELECT COALESCE(sum(memory_usage_bytes), 0) FROM duckdb_memory() "                   \
	"WHERE tag IN ('IN_MEMORY_TABLE', 'OVERFLOW_STRINGS')"

/* Replaces the view `name` with an in-memory copy of its rows; false leaves the view. */
static bool copy_in(duckdb_connection c, const char *name, int64_t budget)
{
	struct nx_strbuf q = NX_STRBUF_INIT, tmp = NX_STRBUF_INIT, sql = NX_STRBUF_INIT;
	bool ok = false;
	int64_t v, before;

	nx_sql_quote_ident(&q, name);
	nx_strbuf_addf(&tmp, "%s (resident copy)", name);
	nx_strbuf_addf(&sql, "SELECT count(*) FROM %s", q.buf);
	v = query_i64(c, sql.buf);
	if (v < 0 || v > NX_RESIDENT_ROWS)
		goto out;
	if (v > DUCK_VECTOR_ROWS) { /* 256 KiB per column at least: not worth a try past the cap */
		nx_strbuf_reset(&sql);
		nx_strbuf_addstr(&sql, "SELECT count(*) FROM duckdb_columns() WHERE table_name = ");
		nx_sql_quote(&sql, name);
		v = query_i64(c, sql.buf);
		if (v < 0 || v * DUCK_BLOCK_BYTES > NX_RESIDENT_TABLE_BYTES)
			goto out;
	}
	before = query_i64(c, MEMORY_SQL);
	nx_strbuf_reset(&sql);
	nx_strbuf_addstr(&sql, "BEGIN TRANSACTION");
	if (before < 0 || !exec(c, &sql))
		goto out;
	nx_strbuf_reset(&sql);
	nx_strbuf_addstr(&sql, "CREATE TABLE ");
	nx_sql_quote_ident(&sql, tmp.buf);
	nx_strbuf_addf(&sql, " AS SELECT * FROM %s", q.buf);
	if (!exec(c, &sql))
		goto rollback;
	v = query_i64(c, MEMORY_SQL);
	if (v < 0 || v > budget || v - before > NX_RESIDENT_TABLE_BYTES)
		goto rollback;
	nx_strbuf_reset(&sql);
	nx_strbuf_addf(&sql, "DROP VIEW %s; ALTER TABLE ", q.buf);
	nx_sql_quote_ident(&sql, tmp.buf);
	nx_strbuf_addf(&sql, " RENAME TO %s; COMMIT", q.buf);
	ok = exec(c, &sql);
	if (ok)
		goto out;
rollback:
	nx_strbuf_reset(&sql);
	nx_strbuf_addstr(&sql, "ROLLBACK");
	exec(c, &sql);
out:
	nx_strbuf_release(&q);
	nx_strbuf_release(&tmp);
	nx_strbuf_release(&sql);
	return ok;
}

void nx__resident_read(struct nx_resident *r, duckdb_connection c, uint64_t mask)
{
	size_t pick = SIZE_MAX;

	if (!mask)
		return;
	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < r->n; i++) {
		struct nx_rtable *t = &r->t[i];

		if (!(mask >> i & 1) || t->state != NX_RS_VIEW)
			continue;
		if (++t->reads >= NX_RESIDENT_AFTER && pick == SIZE_MAX) {
			t->state = NX_RS_COPYING;
			pick = i;
		}
	}
	pthread_mutex_unlock(&r->lock);
	if (pick == SIZE_MAX)
		return;
	bool ok = copy_in(c, r->t[pick].name, r->budget);
	pthread_mutex_lock(&r->lock);
	r->t[pick].state = ok ? NX_RS_RESIDENT : NX_RS_STAYS_VIEW;
	r->copies += ok;
	pthread_mutex_unlock(&r->lock);
}

unsigned nx__resident_copies(struct nx_resident *r)
{
	unsigned n;

	pthread_mutex_lock(&r->lock);
	n = r->copies;
	pthread_mutex_unlock(&r->lock);
	return n;
}

enum nx_rstate nx__resident_state(struct nx_resident *r, const char *name)
{
	enum nx_rstate s = NX_RS_STAYS_VIEW;

	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < r->n; i++)
		if (!strcasecmp(r->t[i].name, name))
			s = r->t[i].state;
	pthread_mutex_unlock(&r->lock);
	return s;
}
