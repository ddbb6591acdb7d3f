/* validate_common.c: the small helpers the validate_*.c files share (validate_int.h):
 * JSON for audit rows, checks on user-given text, and the transaction (or savepoint)
 * each change runs in. Statements, binding and reading columns are store.c's. */
#include "validate_int.h"

#include <string.h>

#include "format.h"

/* A JSON value as compact text for the audit log; consumes j. */
char *xpv_jdump(json_t *j)
{
	if (!j)
		return NULL;
	char *t = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(j);
	return t;
}

json_t *xpv_jtime(time_t t)
{
	return t > 0 ? json_integer((json_int_t)t) : json_null();
}

/* Checks a user-given text: required or not, at most max bytes, one printable line. */
int xpv_check_text(const char *what, const char *v, size_t max, bool required, struct xp_err *err)
{
	if (!known(v))
		return required ? xp_errf(err, "%s must not be empty", what) : 0;
	if (strlen(v) > max)
		return xp_errf(err, "%s is longer than %zu bytes", what, max);
	/* Evidence is printed to terminals: valid UTF-8 only, no C0 or C1 controls (U+009B is
	 * a CSI to many terminals), no bidirectional overrides that reorder what is shown. */
	const unsigned char *p = (const unsigned char *)v;
	const unsigned char *end = p + strlen(v);
	while (*p) {
		size_t k = xp_utf8_len(p, (size_t)(end - p));
		if (!k)
			return xp_errf(err, "%s is not valid UTF-8", what);
		if (p[0] < 0x20 || p[0] == 0x7f || (k == 2 && p[0] == 0xc2 && p[1] < 0xa0))
			return xp_errf(err, "%s holds a control character", what);
		if (xp_bidi_len((const char *)p))
			return xp_errf(err, "%s holds a bidirectional override", what);
		p += k;
	}
	return 0;
}

/* A change is one transaction; inside a caller's transaction (a bulk loader, a test)
 * it is a savepoint, so that a refused record still leaves the caller's batch whole. */
int xpv_tx_begin(struct xp_store *s, bool *nested, struct xp_err *err)
{
	*nested = !sqlite3_get_autocommit(s->db);
	if (!*nested)
		return xp_store_begin(s, err);
	if (sqlite3_exec(s->db, "SAVEPOINT xp_validate", NULL, NULL, NULL) != SQLITE_OK)
		return xp_store_fail(s, err, "starting a savepoint");
	return 0;
}

int xpv_tx_commit(struct xp_store *s, bool nested, struct xp_err *err)
{
	if (!nested)
		return xp_store_commit(s, err);
	if (sqlite3_exec(s->db, "RELEASE xp_validate", NULL, NULL, NULL) != SQLITE_OK)
		return xp_store_fail(s, err, "releasing a savepoint");
	return 0;
}

void xpv_tx_rollback(struct xp_store *s, bool nested)
{
	if (!nested)
		xp_store_rollback(s);
	else
		sqlite3_exec(s->db, "ROLLBACK TO xp_validate; RELEASE xp_validate", NULL, NULL, NULL);
}
