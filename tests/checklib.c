/* checklib.c: the check suites' shared assertions (see checklib.h). */
#include "checklib.h"

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <sqlite3.h>

#include "store.h"
#include "testlib.h"

const char *xp_first_missing(const char *text, ...)
{
	va_list ap;
	va_start(ap, text);
	const char *part;
	while ((part = va_arg(ap, const char *)) != NULL && strstr(text, part))
		;
	va_end(ap);
	return part;
}

struct xp_store *xp_old_store(const char *path, int version)
{
	struct xp_err err = {{0}};
	sqlite3 *raw;
	ck_assert_int_eq(sqlite3_open(path, &raw), SQLITE_OK);
	sqlite3_close(raw);
	/* Opened as it is (no migration), then the old migrations on a fresh handle. */
	struct xp_store *s = xp_store_open_existing(path, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	sqlite3_close_v2(s->db);
	ck_assert_int_eq(sqlite3_open(path, &s->db), SQLITE_OK);
	ck_assert_msg(xp_store_migrate(s, 0, version, &err) == 0, "%s", err.msg);
	return s;
}

void xp_self_signed(const char *key, const char *cert)
{
	char *argv[] = {"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
			"-nodes", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1", "-days", "2",
			"-keyout", (char *)key, "-out", (char *)cert, NULL};
	struct xp_run r;
	ck_assert_int_eq(xp_run_argv(&r, argv, NULL), 0);
	ck_assert_msg(r.status == 0, "openssl: %s", r.err);
	xp_run_free(&r);
}
