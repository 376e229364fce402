/* SPDX-License-Identifier: MIT
 * duck_enum.c: a function of ours that turns text into an ENUM type's value, for a copy
 * that would otherwise cast each row (duck.h, nx_duck_enum_function). DuckDB casts a
 * VARCHAR to an ENUM row by row (a hash of the string and a lookup in the type's map),
 * even where the rows come as a parquet column chunk's dictionary; a function, unlike a
 * cast, DuckDB runs once per entry of such a dictionary when it is consistent and cannot
 * fail (DuckDB 1.4's ExecuteFunctionState), so the lookups fall from one per row to one
 * per dictionary entry (docs/memory.md, "The events part's CPU, again"). */
#include "common/compat.h"
#include "db/duck.h"
#include "db/duck_conn.h"
#include "common/strmap.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* The codes of the ENUM's values, by their text. */
struct enum_map {
	struct nx_strmap code; /* of each value: uint32_t */
	bool wide;             /* codes are uint16 (else uint8) */
};

static void map_free(void *p)
{
	struct enum_map *m = p;

	if (!m)
		return;
	nx_strmap_release(&m->code);
	free(m);
}

static void enum_call(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output)
{
	const struct enum_map *m = duckdb_scalar_function_get_extra_info(info);
	duckdb_vector v = duckdb_data_chunk_get_vector(input, 0);
	const duckdb_string_t *in = duckdb_vector_get_data(v);
	uint64_t *valid = duckdb_vector_get_validity(v), *out_valid = NULL;
	void *out = duckdb_vector_get_data(output);
	idx_t rows = duckdb_data_chunk_get_size(input);

	for (idx_t r = 0; r < rows; r++) {
		uint32_t c = 0;

		if (valid && !duckdb_validity_row_is_valid(valid, r)) {
			if (!out_valid) {
				duckdb_vector_ensure_validity_writable(output);
				out_valid = duckdb_vector_get_validity(output);
			}
			duckdb_validity_set_row_invalid(out_valid, r);
		} else {
			duckdb_string_t s = in[r];
			const uint32_t *code = nx_strmap_find(&m->code, duckdb_string_t_data(&s),
							      duckdb_string_t_length(s));

			if (!code) {
				duckdb_scalar_function_set_error(info, "a value that is none of the "
								       "ENUM's");
				return;
			}
			c = *code;
		}
		if (m->wide)
			((uint16_t *)out)[r] = (uint16_t)c;
		else
			((uint8_t *)out)[r] = (uint8_t)c;
	}
}

int nx_duck_enum_function(struct nx_duck *d, const char *name, const char *type,
			  struct nx_err *err)
{
	duckdb_connection con = nx__duck_con(d);
	duckdb_logical_type t = NULL;
	duckdb_scalar_function sf;
	duckdb_result res;
	struct enum_map *m = NULL;
	duckdb_state st;
	char *sql;
	int rc;

	if (!con)
		return nx_errf(err, NX_EUSAGE, "cannot make the function %s", name);
	/* the type as DuckDB binds it, so that the function's values are the type's */
	sql = nx_xasprintf("SELECT NULL::%s", type);
	rc = nx_duck_con_run(con, sql, &res, err);
	free(sql);
	if (rc)
		return rc;
	t = duckdb_column_logical_type(&res, 0);
	duckdb_destroy_result(&res);
	if (!t || duckdb_get_type_id(t) != DUCKDB_TYPE_ENUM ||
	    (duckdb_enum_internal_type(t) != DUCKDB_TYPE_UTINYINT &&
	     duckdb_enum_internal_type(t) != DUCKDB_TYPE_USMALLINT)) {
		duckdb_destroy_logical_type(&t);
		return nx_errf(err, NX_EUSAGE, "cannot make the function %s: %s is no ENUM of at "
			       "most 65535 values", name, type);
	}
	m = nx_xcalloc(1, sizeof(*m));
	m->wide = duckdb_enum_internal_type(t) == DUCKDB_TYPE_USMALLINT;
	nx_strmap_init(&m->code, sizeof(uint32_t));
	for (idx_t i = 0; i < duckdb_enum_dictionary_size(t); i++) {
		char *v = duckdb_enum_dictionary_value(t, i);

		*(uint32_t *)nx_strmap_get(&m->code, v, strlen(v), NULL) = (uint32_t)i;
		duckdb_free(v);
	}
	sf = duckdb_create_scalar_function();
	duckdb_scalar_function_set_name(sf, name);
	{
		duckdb_logical_type text = duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);

		duckdb_scalar_function_add_parameter(sf, text);
		duckdb_destroy_logical_type(&text);
	}
	duckdb_scalar_function_set_return_type(sf, t);
	duckdb_destroy_logical_type(&t);
	/* NULLs are ours to pass on (set_special_handling), and the function is neither
	 * volatile nor set to fail: so DuckDB may run it on a dictionary's entries alone */
	duckdb_scalar_function_set_special_handling(sf);
	duckdb_scalar_function_set_extra_info(sf, m, map_free);
	duckdb_scalar_function_set_function(sf, enum_call);
	st = duckdb_register_scalar_function(con, sf);
	duckdb_destroy_scalar_function(&sf);
	if (st != DuckDBSuccess)
		return nx_errf(err, NX_EDB, "cannot make the function %s", name);
	return 0;
}
