/* validate_env.c: environments: their ids, the stored rows, declaring one by hand,
 * listing them and resolving an id prefix. */
#include "validate_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_json.h"

#define RESOLVE_SHOW 5         /* candidates named when a prefix is ambiguous */

char *xp_env_id(const char *vendor, const char *model, const char *driver, const char *firmware,
		const char *runtime)
{
	if (known(firmware) || known(runtime))
		return xp_asprintf("%s:%s:%s:%s:%s", vendor ? vendor : "", model ? model : "", driver ? driver : "",
				   firmware ? firmware : "", runtime ? runtime : "");
	return xp_asprintf("%s:%s:%s", vendor ? vendor : "", model ? model : "", driver ? driver : "");
}

char *xp_env_id_show(const char *id)
{
	if (!id)
		return xp_strdup("-");
	/* Five fields: vendor:model:driver:firmware:runtime; only the last two may be empty. */
	const char *c3 = NULL;
	int colons = 0;
	for (const char *p = id; *p; p++)
		if (*p == ':' && ++colons == 3)
			c3 = p;
	if (colons != 4)
		return xp_strdup(id);
	const char *fw = c3 + 1, *c4 = strchr(fw, ':'), *rt = c4 + 1;
	/* An empty field is "-" (a precision of 0 would print nothing of it). */
	int fw_len = c4 == fw ? 1 : (int)(c4 - fw);
	return xp_asprintf("%.*s:%.*s:%s", (int)(c3 - id), id, fw_len, c4 == fw ? "-" : fw, *rt ? rt : "-");
}

/* The id an xp_env_id_show form stands for: "-" firmware or runtime back to empty (NULL when
 * q is not such a form). */
static char *id_unshow(const char *q)
{
	int colons = 0;
	const char *c3 = NULL;
	for (const char *p = q; *p; p++)
		if (*p == ':' && ++colons == 3)
			c3 = p;
	if (colons != 4)
		return NULL;
	const char *fw = c3 + 1, *c4 = strchr(fw, ':'), *rt = c4 + 1;
	bool fw_dash = c4 - fw == 1 && *fw == '-', rt_dash = strcmp(rt, "-") == 0;
	if (!fw_dash && !rt_dash)
		return NULL;
	return xp_asprintf("%.*s:%.*s:%s", (int)(c3 - q), q, fw_dash ? 0 : (int)(c4 - fw), fw, rt_dash ? "" : rt);
}

/* The fields of an environment id are separated by ':'; a ':' inside one would make two
 * environments share an id. */
static int check_id_field(const char *what, const char *v, bool required, struct xp_err *err)
{
	if (xpv_check_text(what, v, FIELD_MAX, required, err) < 0)
		return -1;
	if (v && strchr(v, ':'))
		return xp_errf(err, "%s '%.80s' holds ':', which separates the fields of an environment id", what, v);
	return 0;
}

void xp_env_clear(struct xp_env *e)
{
	if (!e)
		return;
	free(e->id);
	free(e->vendor);
	free(e->model);
	free(e->driver);
	free(e->firmware);
	free(e->runtime);
	memset(e, 0, sizeof *e);
}

void xp_env_list_free(struct xp_env *envs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		xp_env_clear(&envs[i]);
	free(envs);
}

static void env_read(sqlite3_stmt *st, struct xp_env *e)
{
	e->id = xp_store_col_text(st, 0);
	e->vendor = xp_store_col_text(st, 1);
	e->model = xp_store_col_text(st, 2);
	e->driver = xp_store_col_text(st, 3);
	e->firmware = xp_store_col_text(st, 4);
	e->runtime = xp_store_col_text(st, 5);
	e->declared = sqlite3_column_int(st, 6) != 0;
	e->first_seen = (time_t)sqlite3_column_int64(st, 7);
	e->last_seen = (time_t)sqlite3_column_int64(st, 8);
}

json_t *xp_env_to_json(const struct xp_env *e)
{
	json_t *o = json_object();
	json_object_set_new(o, "id", xp_json_str(e->id));
	json_object_set_new(o, "vendor", xp_json_str(e->vendor));
	json_object_set_new(o, "model", xp_json_str(e->model));
	json_object_set_new(o, "driver", xp_json_str(e->driver));
	json_object_set_new(o, "firmware", xp_json_str(e->firmware));
	json_object_set_new(o, "runtime", xp_json_str(e->runtime));
	json_object_set_new(o, "declared", json_boolean(e->declared));
	json_object_set_new(o, "first_seen", xpv_jtime(e->first_seen));
	json_object_set_new(o, "last_seen", xpv_jtime(e->last_seen));
	return o;
}

/* Reads one environment: 1 found, 0 not, -1 error. */
int xpv_env_get(struct xp_store *s, const char *id, struct xp_env *e, struct xp_err *err)
{
	sqlite3_stmt *st;
	memset(e, 0, sizeof *e);
	if (xp_store_prep(s, "SELECT " ENV_COLS " FROM environments WHERE id = ?",
			  &st, err, "reading an environment") < 0)
		return -1;
	xp_store_bind_text(st, 1, id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		env_read(st, e);
	else if (rc != SQLITE_DONE)
		xp_store_fail(s, err, "reading an environment");
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

int xp_validate_env_list(struct xp_store *s, struct xp_env **envs, size_t *n, struct xp_err *err)
{
	*envs = NULL;
	*n = 0;
	sqlite3_stmt *st;
	if (xp_store_prep(s, "SELECT " ENV_COLS " FROM environments ORDER BY id", &st, err, "listing environments") < 0)
		return -1;
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		xp_grow(envs, sizeof **envs, *n, &cap);
		memset(&(*envs)[*n], 0, sizeof **envs);
		env_read(st, &(*envs)[(*n)++]);
	}
	if (xp_store_finish(s, st, rc, err, "listing environments") < 0) {
		xp_env_list_free(*envs, *n);
		*envs = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

/* Marks a discovered environment declared (audited): declaring keeps it listed when
 * discovery no longer sees it. */
static int env_mark_declared(struct xp_store *s, const char *id, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s, "UPDATE environments SET declared = 1 WHERE id = ?",
			  &st, err, "declaring an environment") < 0)
		return -1;
	xp_store_bind_text(st, 1, id);
	int rc = xp_store_finish(s, st, sqlite3_step(st), err, "declaring an environment");
	if (rc == 0)
		rc = xp_audit_add(s, "env.declare", id, "{\"declared\":false}", "{\"declared\":true}", err);
	return rc;
}

/* Inserts an environment declared by hand, first seen now (audited). */
static int env_insert_declared(struct xp_store *s, const struct xp_env *e, char *id, struct xp_err *err)
{
	struct xp_env n = {.id = id, .vendor = e->vendor, .model = e->model, .driver = e->driver,
			   .firmware = (char *)opt(e->firmware), .runtime = (char *)opt(e->runtime),
			   .declared = true, .first_seen = time(NULL)};
	sqlite3_stmt *st;
	if (xp_store_prep(s, "INSERT INTO environments(" ENV_COLS ") VALUES(?, ?, ?, ?, ?, ?, 1, ?, NULL)", &st, err,
			  "declaring an environment") < 0)
		return -1;
	xp_store_bind_text(st, 1, n.id);
	xp_store_bind_text(st, 2, n.vendor);
	xp_store_bind_text(st, 3, n.model);
	xp_store_bind_text(st, 4, n.driver);
	xp_store_bind_text(st, 5, n.firmware);
	xp_store_bind_text(st, 6, n.runtime);
	sqlite3_bind_int64(st, 7, (sqlite3_int64)n.first_seen);
	int rc = xp_store_finish(s, st, sqlite3_step(st), err, "declaring an environment");
	if (rc == 0) {
		char *after = xpv_jdump(xp_env_to_json(&n));
		rc = xp_audit_add(s, "env.declare", id, NULL, after, err);
		free(after);
	}
	return rc;
}

/* Declares id inside the caller's transaction: 1 when it was declared already, 0 when
 * created or marked, -1 on error. */
static int env_declare_in(struct xp_store *s, const struct xp_env *e, char *id, struct xp_err *err)
{
	struct xp_env old;
	int found = xpv_env_get(s, id, &old, err);
	int rc = found < 0 ? -1 : found == 0 ? env_insert_declared(s, e, id, err) : old.declared ? 1
								   : env_mark_declared(s, id, err);
	xp_env_clear(&old);
	return rc;
}

int xp_validate_env_declare(struct xp_store *s, const struct xp_env *e, struct xp_err *err)
{
	if (check_id_field("vendor", e->vendor, true, err) < 0 || check_id_field("model", e->model, true, err) < 0 ||
	    check_id_field("driver", e->driver, true, err) < 0 ||
	    check_id_field("firmware", e->firmware, false, err) < 0 ||
	    check_id_field("runtime", e->runtime, false, err) < 0)
		return -1;
	char *id = xp_env_id(e->vendor, e->model, e->driver, e->firmware, e->runtime);
	bool nested;
	if (xpv_tx_begin(s, &nested, err) < 0) {
		free(id);
		return -1;
	}
	int rc = env_declare_in(s, e, id, err);
	free(id);
	if (rc < 0) {
		xpv_tx_rollback(s, nested);
		return -1;
	}
	if (xpv_tx_commit(s, nested, err) < 0)
		return -1;
	return rc;
}

/* Says why q resolved to no one environment: n matched, the first of them listed in shown. */
static void resolve_fail(const char *q, size_t n, const char *shown, struct xp_err *err)
{
	if (n == 0)
		xp_errf(err, "no environment matches %s", q);
	else if (n > RESOLVE_SHOW)
		xp_errf(err, "environment %s is ambiguous: %s and %zu more", q, shown, n - RESOLVE_SHOW);
	else
		xp_errf(err, "environment %s is ambiguous: %s", q, shown);
}

static char *resolve(struct xp_store *s, const char *q, struct xp_err *err);

char *xp_validate_env_resolve(struct xp_store *s, const char *q, struct xp_err *err)
{
	/* An id as shown ("-" for an empty firmware or runtime) names the stored one. */
	char *plain = q ? id_unshow(q) : NULL;
	if (plain) {
		struct xp_err e2 = {{0}};
		char *id = resolve(s, plain, &e2);
		free(plain);
		if (id)
			return id;
	}
	return resolve(s, q, err);
}

static char *resolve(struct xp_store *s, const char *q, struct xp_err *err)
{
	if (!known(q)) {
		xp_errf(err, "no environment given");
		return NULL;
	}
	sqlite3_stmt *st;
	/* Ids that start with q sort together from q on: one index range, no LIKE (whose
	 * wildcards would be read in user text). */
	if (xp_store_prep(s, "SELECT id FROM environments WHERE id >= ? ORDER BY id", &st, err,
			  "finding an environment") < 0)
		return NULL;
	xp_store_bind_text(st, 1, q);
	size_t qlen = strlen(q), n = 0;
	char *first = NULL;
	char shown[768] = "";
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *id = (const char *)sqlite3_column_text(st, 0);
		if (!id || strncmp(id, q, qlen) != 0)
			break;
		if (strcmp(id, q) == 0) {
			/* The whole id: never ambiguous, even when it prefixes a longer one. */
			free(first);
			first = xp_strdup(id);
			n = 1;
			break;
		}
		if (n == 0)
			first = xp_strdup(id);
		if (n < RESOLVE_SHOW) {
			size_t used = strlen(shown);
			snprintf(shown + used, sizeof shown - used, "%s%s", used ? ", " : "", id);
		}
		n++;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		xp_store_fail(s, err, "finding an environment");
		sqlite3_finalize(st);
		free(first);
		return NULL;
	}
	sqlite3_finalize(st);
	if (n == 1)
		return first;
	free(first);
	resolve_fail(q, n, shown, err);
	return NULL;
}
