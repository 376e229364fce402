/* SPDX-License-Identifier: MIT
 * stmt_cache.c: a connection's prepared statements by SQL text (see stmt_cache.h). Eight
 * entries searched in order: the UI and a workflow repeat a handful of queries. */
#include "common/compat.h"
#include "server/stmt_cache.h"
#include "common/xalloc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_int total; /* entries in every cache of the process */

static void entry_free(struct nx_stmt_entry *e);

duckdb_prepared_statement nx__stmt_cache_get(struct nx_stmt_cache *c, const char *sql,
					     struct nx_stmt_tag *tag)
{
	for (size_t i = 0; i < NX_STMT_CACHE_SIZE; i++) {
		struct nx_stmt_entry *e = &c->ent[i];

		if (e->sql && !strcmp(e->sql, sql)) {
			if (e->uses++ == NX_STMT_CACHE_USES) {
				entry_free(e);
				return NULL;
			}
			e->used = ++c->tick;
			*tag = e->tag;
			return e->ps;
		}
	}
	return NULL;
}

static void entry_free(struct nx_stmt_entry *e)
{
	if (!e->sql)
		return;
	free(e->sql);
	duckdb_destroy_prepare(&e->ps);
	memset(e, 0, sizeof(*e));
	atomic_fetch_sub(&total, 1);
}

bool nx__stmt_cache_put(struct nx_stmt_cache *c, const char *sql, duckdb_prepared_statement ps,
			struct nx_stmt_tag tag)
{
	struct nx_stmt_entry *victim = &c->ent[0];

	if (strlen(sql) > NX_STMT_CACHE_SQL_MAX)
		return false;
	for (size_t i = 0; i < NX_STMT_CACHE_SIZE; i++) {
		struct nx_stmt_entry *e = &c->ent[i];

		if (!e->sql) {
			victim = e;
			break;
		}
		if (e->used < victim->used)
			victim = e;
	}
	entry_free(victim); /* a full cache gives up its least recent entry */
	if (atomic_fetch_add(&total, 1) >= NX_STMT_CACHE_TOTAL) {
		atomic_fetch_sub(&total, 1);
		return false;
	}
	victim->sql = nx_xstrdup(sql);
	victim->ps = ps;
	victim->tag = tag;
	victim->used = ++c->tick;
	return true;
}

void nx__stmt_cache_drop(struct nx_stmt_cache *c, duckdb_prepared_statement ps)
{
	for (size_t i = 0; i < NX_STMT_CACHE_SIZE; i++)
		if (c->ent[i].sql && c->ent[i].ps == ps)
			entry_free(&c->ent[i]);
}

void nx__stmt_cache_clear(struct nx_stmt_cache *c)
{
	for (size_t i = 0; i < NX_STMT_CACHE_SIZE; i++)
		entry_free(&c->ent[i]);
	c->tick = 0;
}

int nx__stmt_cache_total(void)
{
	return atomic_load(&total);
}
