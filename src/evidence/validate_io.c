/* validate_io.c: export and import of the whole matrix as one JSON document
 * ("xpool.validation/v1"); an import is checked field by field, all or nothing. */
#include "validate_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model_json.h"

/* One row of the export query ("id, " EV_COLS ", env, case_name") as a document result. */
static json_t *export_row(sqlite3_stmt *st)
{
	struct xp_evidence e = {0};
	xpv_ev_read(st, &e);
	json_t *o = json_object();
	json_object_set_new(o, "env", xp_json_str((const char *)sqlite3_column_text(st, 11)));
	json_object_set_new(o, "case", xp_json_str((const char *)sqlite3_column_text(st, 12)));
	json_object_set_new(o, "layer", json_string(xp_layer_name(e.layer)));
	json_object_set_new(o, "status", json_string(xp_vstatus_name(e.status)));
	json_object_set_new(o, "time", json_integer((json_int_t)e.time));
	json_object_set_new(o, "actor", xp_json_str(e.actor));
	json_object_set_new(o, "note", xp_json_str(e.note));
	json_object_set_new(o, "log_path", xp_json_str(e.log_path));
	json_object_set_new(o, "log_sha256", xp_json_str(e.log_sha256));
	json_object_set_new(o, "node", xp_json_str(e.node));
	json_object_set_new(o, "driver", xp_json_str(e.driver));
	json_object_set_new(o, "firmware", xp_json_str(e.firmware));
	xp_evidence_clear(&e, 1);
	return o;
}

/* Writes the document to f; a full disk shows at the flush, so that is checked too. */
static int export_write(json_t *doc, FILE *f, struct xp_err *err)
{
	errno = 0;
	if (json_dumpf(doc, f, JSON_INDENT(2)) < 0 || fputc('\n', f) == EOF || fflush(f) == EOF || ferror(f))
		return xp_errf(err, "writing the export: %s", errno ? strerror(errno) : "write error");
	return 0;
}

int xp_validate_export(struct xp_store *s, FILE *f, struct xp_err *err)
{
	struct xp_env *envs = NULL;
	struct xp_case *cases = NULL;
	size_t ne = 0, nc = 0;
	bool own = sqlite3_get_autocommit(s->db);
	if (own && sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return xp_store_fail(s, err, "exporting");
	sqlite3_stmt *st = NULL;
	int rc = xp_validate_env_list(s, &envs, &ne, err);
	if (rc == 0)
		rc = xp_validate_case_list(s, &cases, &nc, err);
	if (rc == 0)
		rc = xp_store_prep(s, "SELECT id, " EV_COLS ", env, case_name FROM results ORDER BY id", &st, err,
				   "exporting");
	json_t *doc = json_object(), *je = json_array(), *jc = json_array(), *jr = json_array();
	json_object_set_new(doc, "schema", json_string(XP_VALIDATE_SCHEMA));
	json_object_set_new(doc, "environments", je);
	json_object_set_new(doc, "cases", jc);
	json_object_set_new(doc, "results", jr);
	for (size_t i = 0; rc == 0 && i < ne; i++)
		json_array_append_new(je, xp_env_to_json(&envs[i]));
	for (size_t i = 0; rc == 0 && i < nc; i++)
		json_array_append_new(jc, xp_case_to_json(&cases[i]));
	int step = SQLITE_DONE;
	while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(jr, export_row(st));
	if (rc == 0 && step != SQLITE_DONE)
		rc = xp_store_fail(s, err, "exporting");
	sqlite3_finalize(st);
	if (own)
		sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	if (rc == 0)
		rc = export_write(doc, f, err);
	json_decref(doc);
	xp_env_list_free(envs, ne);
	xp_case_list_free(cases, nc);
	return rc;
}

/* Reading a document: each getter takes the object, the key and the object's JSON path
 * (for the message); a missing key or null is "not given". */

static int jstring(json_t *o, const char *key, const char *path, size_t max, bool required, const char **out,
		   struct xp_err *err)
{
	json_t *v = json_object_get(o, key);
	*out = NULL;
	if (!v || json_is_null(v))
		return required ? xp_errf(err, "%s.%s: missing", path, key) : 0;
	if (!json_is_string(v))
		return xp_errf(err, "%s.%s: expected a string", path, key);
	char what[160];
	snprintf(what, sizeof what, "%s.%s", path, key);
	if (xpv_check_text(what, json_string_value(v), max, required, err) < 0)
		return -1;
	*out = json_string_value(v);
	return 0;
}

static int jtime_get(json_t *o, const char *key, const char *path, bool required, time_t *out, struct xp_err *err)
{
	json_t *v = json_object_get(o, key);
	*out = 0;
	if (!v || json_is_null(v))
		return required ? xp_errf(err, "%s.%s: missing", path, key) : 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return xp_errf(err, "%s.%s: expected seconds since 1970 (an integer)", path, key);
	/* Evidence from the future is a broken clock or a forged file: a day of skew is allowed. */
	if (json_integer_value(v) > (json_int_t)time(NULL) + 86400)
		return xp_errf(err, "%s.%s: %lld is in the future", path, key, (long long)json_integer_value(v));
	*out = (time_t)json_integer_value(v);
	return 0;
}

static json_t *jarray(json_t *doc, const char *key, struct xp_err *err)
{
	json_t *a = json_object_get(doc, key);
	if (!a || json_is_null(a))
		return json_array();
	if (!json_is_array(a)) {
		xp_errf(err, "$.%s: expected an array", key);
		return NULL;
	}
	return json_incref(a);
}

/* A digest is 64 lower-case hex digits, as xp_sha256_hex writes it. */
static int check_hex(const char *h, const char *path, struct xp_err *err)
{
	if (!h)
		return 0;
	size_t n = strspn(h, "0123456789abcdef");
	if (n != 64 || h[n])
		return xp_errf(err, "%s.log_sha256: expected 64 hex digits", path);
	return 0;
}

/* Reads and checks environment i of the document at o: an object, its fields, its id
 * (which must match them) and listed once (seen: id -> first index, added to here).
 * e's strings, *id and *decl point into o. */
static int import_env_read(json_t *o, size_t i, const char *path, json_t *seen, struct xp_env *e, const char **id,
			   json_t **decl, struct xp_err *err)
{
	if (!json_is_object(o))
		return xp_errf(err, "%s: expected an object", path);
	if (jstring(o, "id", path, TEXT_MAX, true, id, err) < 0 ||
	    jstring(o, "vendor", path, FIELD_MAX, true, (const char **)&e->vendor, err) < 0 ||
	    jstring(o, "model", path, FIELD_MAX, true, (const char **)&e->model, err) < 0 ||
	    jstring(o, "driver", path, FIELD_MAX, true, (const char **)&e->driver, err) < 0 ||
	    jstring(o, "firmware", path, FIELD_MAX, false, (const char **)&e->firmware, err) < 0 ||
	    jstring(o, "runtime", path, FIELD_MAX, false, (const char **)&e->runtime, err) < 0 ||
	    jtime_get(o, "first_seen", path, false, &e->first_seen, err) < 0 ||
	    jtime_get(o, "last_seen", path, false, &e->last_seen, err) < 0)
		return -1;
	*decl = json_object_get(o, "declared");
	if (*decl && !json_is_null(*decl) && !json_is_boolean(*decl))
		return xp_errf(err, "%s.declared: expected true or false", path);
	int rc = 0;
	char *want = xp_env_id(e->vendor, e->model, e->driver, e->firmware, e->runtime);
	if (strcmp(want, *id) != 0)
		rc = xp_errf(err, "%s.id: %s does not match its fields (%s)", path, *id, want);
	free(want);
	json_t *dup = json_object_get(seen, *id);
	if (rc == 0 && dup)
		rc = xp_errf(err, "%s.id: %s is listed twice (first at $.environments[%lld])", path, *id,
			     (long long)json_integer_value(dup));
	if (rc == 0)
		json_object_set_new(seen, *id, json_integer((json_int_t)i));
	return rc;
}

/* Inserts one read environment with st (INSERT OR IGNORE): a known one stays as it is. */
static int import_env_insert(struct xp_store *s, sqlite3_stmt *st, const char *id, const struct xp_env *e,
			     json_t *decl, struct xp_err *err)
{
	sqlite3_reset(st);
	xp_store_bind_text(st, 1, id);
	xp_store_bind_text(st, 2, e->vendor);
	xp_store_bind_text(st, 3, e->model);
	xp_store_bind_text(st, 4, e->driver);
	xp_store_bind_text(st, 5, e->firmware);
	xp_store_bind_text(st, 6, e->runtime);
	sqlite3_bind_int(st, 7, json_is_true(decl));
	if (e->first_seen)
		sqlite3_bind_int64(st, 8, (sqlite3_int64)e->first_seen);
	else
		sqlite3_bind_null(st, 8);
	if (e->last_seen)
		sqlite3_bind_int64(st, 9, (sqlite3_int64)e->last_seen);
	else
		sqlite3_bind_null(st, 9);
	if (sqlite3_step(st) != SQLITE_DONE)
		return xp_store_fail(s, err, "importing an environment");
	return 0;
}

/* Imports the environments: new ones are inserted, known ones left as they are. */
static int import_envs(struct xp_store *s, json_t *arr, json_t *seen, int *added, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s, "INSERT OR IGNORE INTO environments(" ENV_COLS ") VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)", &st, err,
			  "importing an environment") < 0)
		return -1;
	size_t i;
	json_t *o;
	int rc = 0;
	json_array_foreach(arr, i, o) {
		char path[64];
		snprintf(path, sizeof path, "$.environments[%zu]", i);
		struct xp_env e = {0};
		const char *id;
		json_t *decl;
		if (import_env_read(o, i, path, seen, &e, &id, &decl, err) < 0 ||
		    import_env_insert(s, st, id, &e, decl, err) < 0) {
			rc = -1;
			break;
		}
		*added += sqlite3_changes(s->db);
	}
	sqlite3_finalize(st);
	return rc;
}

/* Reads case i of the document at o: an object, its fields, its entry (the argv array is
 * the caller's to free, its strings point into o), created now when not given. */
static int import_case_read(json_t *o, const char *path, struct xp_case *c, struct xp_err *err)
{
	if (!json_is_object(o))
		return xp_errf(err, "%s: expected an object", path);
	if (jstring(o, "name", path, XP_CASE_NAME_MAX, true, (const char **)&c->name, err) < 0 ||
	    jstring(o, "image", path, TEXT_MAX, false, (const char **)&c->image, err) < 0 ||
	    jstring(o, "model", path, TEXT_MAX, false, (const char **)&c->model, err) < 0 ||
	    jstring(o, "data", path, TEXT_MAX, false, (const char **)&c->data, err) < 0 ||
	    jstring(o, "acceptance", path, TEXT_MAX, false, (const char **)&c->acceptance, err) < 0 ||
	    jstring(o, "team", path, FIELD_MAX, false, (const char **)&c->team, err) < 0 ||
	    jtime_get(o, "created", path, false, &c->created, err) < 0)
		return -1;
	json_t *entry = json_object_get(o, "entry");
	size_t n = json_is_array(entry) ? json_array_size(entry) : 0;
	if (entry && !json_is_null(entry) && (!json_is_array(entry) || n == 0 || n > ENTRY_MAX_ARGS))
		return xp_errf(err, "%s.entry: expected a list of 1 to %d strings", path, ENTRY_MAX_ARGS);
	for (size_t k = 0; k < n; k++)
		if (!json_is_string(json_array_get(entry, k)))
			return xp_errf(err, "%s.entry[%zu]: expected a string", path, k);
	if (n) {
		c->entry = xp_calloc(n + 1, sizeof *c->entry);
		for (size_t k = 0; k < n; k++)
			c->entry[k] = (char *)json_string_value(json_array_get(entry, k));
	}
	if (c->created == 0)
		c->created = time(NULL);
	return 0;
}

/* Imports the cases; one that exists already is an error (the document would redefine it). */
static int import_cases(struct xp_store *s, json_t *arr, json_t *seen, struct xp_err *err)
{
	size_t i;
	json_t *o;
	json_array_foreach(arr, i, o) {
		char path[64];
		snprintf(path, sizeof path, "$.cases[%zu]", i);
		struct xp_case c = {0};
		if (import_case_read(o, path, &c, err) < 0)
			return -1;
		int rc = xpv_check_case(&c, err);
		if (rc < 0)
			xp_err_prefix(err, "%s", path);
		json_t *dup = rc == 0 ? json_object_get(seen, c.name) : NULL;
		if (dup)
			rc = xp_errf(err, "%s.name: %s is listed twice (first at $.cases[%lld])", path, c.name,
				     (long long)json_integer_value(dup));
		int ex = rc == 0 ? xpv_case_exists(s, c.name, err) : 0;
		if (ex < 0)
			rc = -1;
		else if (ex)
			rc = xp_errf(err, "%s.name: case %s exists already", path, c.name);
		if (rc == 0) {
			json_object_set_new(seen, c.name, json_integer((json_int_t)i));
			rc = xpv_case_insert(s, &c, err);
		}
		free(c.entry);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* 1 when the row exists. */
static int exists(struct xp_store *s, sqlite3_stmt *st, const char *key, struct xp_err *err)
{
	sqlite3_reset(st);
	xp_store_bind_text(st, 1, key);
	int rc = sqlite3_step(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return xp_store_fail(s, err, "importing");
	return rc == SQLITE_ROW;
}

/* Reads and checks one result of the document at o: its fields, and its layer and status by
 * name, exactly (a document is not a command line). e's strings, *env and *kase point into o. */
static int import_result_read(json_t *o, const char *path, struct xp_evidence *e, const char **env,
			      const char **kase, struct xp_err *err)
{
	if (!json_is_object(o))
		return xp_errf(err, "%s: expected an object", path);
	const char *layer, *status;
	if (jstring(o, "env", path, TEXT_MAX, true, env, err) < 0 ||
	    jstring(o, "case", path, XP_CASE_NAME_MAX, true, kase, err) < 0 ||
	    jstring(o, "layer", path, 32, true, &layer, err) < 0 ||
	    jstring(o, "status", path, 32, true, &status, err) < 0 ||
	    jtime_get(o, "time", path, true, &e->time, err) < 0 ||
	    jstring(o, "actor", path, FIELD_MAX, true, (const char **)&e->actor, err) < 0 ||
	    jstring(o, "note", path, TEXT_MAX, false, (const char **)&e->note, err) < 0 ||
	    jstring(o, "log_path", path, TEXT_MAX, false, (const char **)&e->log_path, err) < 0 ||
	    jstring(o, "log_sha256", path, 64, false, (const char **)&e->log_sha256, err) < 0 ||
	    check_hex(e->log_sha256, path, err) < 0 ||
	    jstring(o, "node", path, FIELD_MAX, false, (const char **)&e->node, err) < 0 ||
	    jstring(o, "driver", path, FIELD_MAX, false, (const char **)&e->driver, err) < 0 ||
	    jstring(o, "firmware", path, FIELD_MAX, false, (const char **)&e->firmware, err) < 0)
		return -1;
	e->layer = -1;
	for (int l = 0; l < XP_LAYER_COUNT; l++)
		if (strcmp(layer, xp_layer_name(l)) == 0)
			e->layer = l;
	e->status = xp_vstatus_parse(status);
	if (e->layer < 0)
		return xp_errf(err, "%s.layer: unknown layer %s (discovered, schedulable, launches, executes, accepted)",
			       path, layer);
	if (e->status != XP_V_PASS && e->status != XP_V_FAIL && e->status != XP_V_STALE)
		return xp_errf(err, "%s.status: %s is not pass, fail or stale", path, status);
	return 0;
}

/* The result's environment and case must exist: earlier in the document (imported first)
 * or in the database. */
static int import_result_refs(struct xp_store *s, sqlite3_stmt *env_st, sqlite3_stmt *case_st, const char *path,
			      const char *env, const char *kase, struct xp_err *err)
{
	int ex = exists(s, env_st, env, err);
	if (ex == 0)
		return xp_errf(err, "%s.env: no environment %s in the document or the database", path, env);
	if (ex < 0)
		return -1;
	ex = exists(s, case_st, kase, err);
	if (ex == 0)
		return xp_errf(err, "%s.case: no case %s in the document or the database", path, kase);
	return ex < 0 ? -1 : 0;
}

/* Imports the results: appended as they are (history from elsewhere). */
static int import_results(struct xp_store *s, json_t *arr, struct xp_err *err)
{
	sqlite3_stmt *env_st = NULL, *case_st = NULL;
	if (xp_store_prep(s, "SELECT 1 FROM environments WHERE id = ?", &env_st, err, "importing") < 0 ||
	    xp_store_prep(s, "SELECT 1 FROM cases WHERE name = ?", &case_st, err, "importing") < 0) {
		sqlite3_finalize(env_st);
		return -1;
	}
	size_t i;
	json_t *o;
	int rc = 0;
	json_array_foreach(arr, i, o) {
		char path[64];
		snprintf(path, sizeof path, "$.results[%zu]", i);
		const char *env, *kase;
		struct xp_evidence e = {0};
		if (import_result_read(o, path, &e, &env, &kase, err) < 0 ||
		    import_result_refs(s, env_st, case_st, path, env, kase, err) < 0 ||
		    xpv_result_insert(s, env, kase, &e, err) < 0) {
			rc = -1;
			break;
		}
	}
	sqlite3_finalize(env_st);
	sqlite3_finalize(case_st);
	return rc;
}

/* After an import, every cell the document touched must obey the layer rule as `record`
 * does: no layer pass above a lower one that is not pass. */
static int import_check_layers(struct xp_store *s, json_t *results, struct xp_err *err)
{
	static const char sql[] =
		"WITH latest AS (SELECT layer, status FROM results r WHERE env = ?1 AND case_name = ?2 AND"
		" id = (SELECT max(id) FROM results r2 WHERE r2.env = r.env AND r2.case_name = r.case_name"
		" AND r2.layer = r.layer)),"
		" lower(l) AS (VALUES(0),(1),(2),(3))"
		" SELECT a.layer, lower.l, coalesce(b.status, 'untested') FROM latest a JOIN lower ON lower.l < a.layer"
		" LEFT JOIN latest b ON b.layer = lower.l"
		" WHERE a.status = 'pass' AND (b.status IS NULL OR b.status != 'pass') LIMIT 1";
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return xp_store_fail(s, err, "checking the imported layers");
	int rc = 0;
	size_t i;
	json_t *r;
	json_array_foreach(results, i, r) {
		const char *env = json_string_value(json_object_get(r, "env"));
		const char *kase = json_string_value(json_object_get(r, "case"));
		if (!env || !kase)
			continue;
		sqlite3_bind_text(st, 1, env, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, kase, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) == SQLITE_ROW) {
			rc = xp_errf(err, "$.results[%zu]: %s / %s: %s pass above %s %s: a layer is pass only while every "
					  "layer below it is pass",
				     i, env, kase, xp_layer_name(sqlite3_column_int(st, 0)),
				     xp_layer_name(sqlite3_column_int(st, 1)), (const char *)sqlite3_column_text(st, 2));
			break;
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc;
}

static int import_doc(struct xp_store *s, json_t *doc, const char *name, struct xp_err *err)
{
	if (!json_is_object(doc))
		return xp_errf(err, "$: expected an object");
	json_t *schema = json_object_get(doc, "schema");
	if (!json_is_string(schema) || strcmp(json_string_value(schema), XP_VALIDATE_SCHEMA) != 0)
		return xp_errf(err, "$.schema: expected \"%s\"%s%.60s%s", XP_VALIDATE_SCHEMA,
			       json_is_string(schema) ? ", not \"" : "", json_is_string(schema) ? json_string_value(schema) : "",
			       json_is_string(schema) ? "\"" : "");
	json_t *envs = jarray(doc, "environments", err), *cases = NULL, *results = NULL;
	if (envs)
		cases = jarray(doc, "cases", err);
	if (cases)
		results = jarray(doc, "results", err);
	if (!results) {
		json_decref(envs);
		json_decref(cases);
		return -1;
	}
	bool nested;
	int added = 0, rc = xpv_tx_begin(s, &nested, err);
	json_t *env_seen = json_object(), *case_seen = json_object();
	if (rc == 0)
		rc = import_envs(s, envs, env_seen, &added, err);
	if (rc == 0)
		rc = import_cases(s, cases, case_seen, err);
	if (rc == 0)
		rc = import_results(s, results, err);
	if (rc == 0)
		rc = import_check_layers(s, results, err);
	if (rc == 0) {
		/* One audit row for the whole document: it is one change, and says what it held. */
		json_t *a = json_object();
		json_object_set_new(a, "environments_added", json_integer(added));
		json_object_set_new(a, "cases", json_integer((json_int_t)json_array_size(cases)));
		json_object_set_new(a, "results", json_integer((json_int_t)json_array_size(results)));
		char *after = xpv_jdump(a);
		rc = xp_audit_add(s, "validate.import", name, NULL, after, err);
		free(after);
	}
	if (rc < 0)
		xpv_tx_rollback(s, nested);
	else
		rc = xpv_tx_commit(s, nested, err);
	json_decref(env_seen);
	json_decref(case_seen);
	json_decref(envs);
	json_decref(cases);
	json_decref(results);
	return rc;
}

int xp_validate_import(struct xp_store *s, const char *text, size_t len, const char *name, struct xp_err *err)
{
	if (!name)
		name = "<input>";
	json_error_t je;
	json_t *doc = json_loadb(text ? text : "", text ? len : 0, JSON_REJECT_DUPLICATES, &je);
	if (!doc)
		return xp_errf(err, "%s:%d:%d: %s", name, je.line, je.column, je.text);
	int rc = import_doc(s, doc, name, err);
	json_decref(doc);
	if (rc < 0)
		xp_err_prefix(err, "%s", name);
	return rc;
}
