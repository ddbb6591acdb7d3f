/* fuzz_validate_import.c: `xpool validate import FILE` ("xpool.validation/v1" documents):
 * xp_validate_import into one in-memory store, opened once, each input inside a transaction
 * that is rolled back after it, so that every input meets the same empty store. The import is
 * all or nothing: a refused one leaves no environment, case or result behind. */
#include "fuzz.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "store.h"
#include "validate.h"

static struct xp_store *store;
static int results0, cases0, envs0; /* rows an empty store holds */

static int count(const char *table)
{
	char sql[64];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(store->db, sql, -1, &st, NULL) != SQLITE_OK)
		abort();
	int n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
	sqlite3_finalize(st);
	return n;
}

static void close_store(void)
{
	xp_store_close(store);
	store = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!store) {
		struct xp_err err = {{0}};
		if (!(store = xp_store_open(":memory:", &err)))
			abort();
		atexit(close_store);
		results0 = count("results");
		cases0 = count("cases");
		envs0 = count("environments");
	}
	if (sqlite3_exec(store->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		abort();
	struct xp_err err = {{0}};
	if (xp_validate_import(store, (const char *)data, size, "fuzz.json", &err) < 0) {
		if (!err.msg[0])
			abort(); /* a refusal must say why */
		if (count("results") != results0 || count("cases") != cases0 || count("environments") != envs0)
			abort(); /* all or nothing */
	}
	if (sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL) != SQLITE_OK)
		abort();
	return 0;
}
