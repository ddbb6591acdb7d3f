/* validate_case.c: workload cases: checking, storing, reading, listing and removing
 * them, and their stored entry command. */
#include "validate_int.h"

#include <stdlib.h>
#include <string.h>

#include "model_json.h"

/* Case names go into log file names, audit targets and command lines: keep them plain. */
static int check_case_name(const char *name, struct xp_err *err)
{
	size_t n = name ? strlen(name) : 0;
	bool ok = n > 0 && n <= XP_CASE_NAME_MAX;
	for (size_t i = 0; ok && i < n; i++) {
		char c = name[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		ok = alnum || (i > 0 && (c == '.' || c == '_' || c == '-'));
	}
	if (!ok)
		return xp_errf(err, "invalid case name '%.80s': use letters, digits, '.', '_' and '-', starting with a "
			       "letter or digit, at most %d bytes", name ? name : "", XP_CASE_NAME_MAX);
	return 0;
}

void xp_case_clear(struct xp_case *c)
{
	if (!c)
		return;
	free(c->name);
	free(c->image);
	free(c->model);
	free(c->data);
	free(c->acceptance);
	free(c->team);
	for (size_t i = 0; c->entry && c->entry[i]; i++)
		free(c->entry[i]);
	free(c->entry);
	memset(c, 0, sizeof *c);
}

void xp_case_list_free(struct xp_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++)
		xp_case_clear(&cases[i]);
	free(cases);
}

static json_t *entry_json(char *const *entry)
{
	if (!entry)
		return json_null();
	json_t *a = json_array();
	for (size_t i = 0; entry[i]; i++)
		json_array_append_new(a, xp_json_str(entry[i]));
	return a;
}

json_t *xp_case_to_json(const struct xp_case *c)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", xp_json_str(c->name));
	json_object_set_new(o, "image", xp_json_str(c->image));
	json_object_set_new(o, "model", xp_json_str(c->model));
	json_object_set_new(o, "data", xp_json_str(c->data));
	json_object_set_new(o, "entry", entry_json(c->entry));
	json_object_set_new(o, "acceptance", xp_json_str(c->acceptance));
	json_object_set_new(o, "team", xp_json_str(c->team));
	json_object_set_new(o, "created", xpv_jtime(c->created));
	return o;
}

/* The stored entry (a JSON array of strings) as an argv; what we wrote always parses,
 * anything else (a hand-edited database) is reported rather than run. */
static int entry_parse(const char *text, const char *name, char ***out, struct xp_err *err)
{
	*out = NULL;
	if (!text)
		return 0;
	json_t *a = json_loads(text, 0, NULL);
	size_t n = json_is_array(a) ? json_array_size(a) : 0;
	bool ok = n > 0 && n <= ENTRY_MAX_ARGS;
	for (size_t i = 0; ok && i < n; i++)
		ok = json_is_string(json_array_get(a, i));
	if (!ok) {
		json_decref(a);
		return xp_errf(err, "case %s: the stored entry is not a list of words", name);
	}
	char **v = xp_calloc(n + 1, sizeof *v);
	for (size_t i = 0; i < n; i++)
		v[i] = xp_strdup(json_string_value(json_array_get(a, i)));
	json_decref(a);
	*out = v;
	return 0;
}

#define CASE_COLS "name, image, model, data, entry, acceptance, team, created"

static int case_read(sqlite3_stmt *st, struct xp_case *c, struct xp_err *err)
{
	c->name = xp_store_col_text(st, 0);
	c->image = xp_store_col_text(st, 1);
	c->model = xp_store_col_text(st, 2);
	c->data = xp_store_col_text(st, 3);
	c->acceptance = xp_store_col_text(st, 5);
	c->team = xp_store_col_text(st, 6);
	c->created = (time_t)sqlite3_column_int64(st, 7);
	return entry_parse((const char *)sqlite3_column_text(st, 4), c->name, &c->entry, err);
}

/* 1 when the case exists, 0 when not, -1 on error. */
int xpv_case_exists(struct xp_store *s, const char *name, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s, "SELECT 1 FROM cases WHERE name = ?", &st, err, "reading a case") < 0)
		return -1;
	xp_store_bind_text(st, 1, name);
	int rc = sqlite3_step(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		xp_store_fail(s, err, "reading a case");
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

int xp_validate_case_get(struct xp_store *s, const char *name, struct xp_case *c, struct xp_err *err)
{
	memset(c, 0, sizeof *c);
	sqlite3_stmt *st;
	if (xp_store_prep(s, "SELECT " CASE_COLS " FROM cases WHERE name = ?", &st, err, "reading a case") < 0)
		return -1;
	xp_store_bind_text(st, 1, name);
	int rc = sqlite3_step(st), ret = 0;
	if (rc == SQLITE_ROW)
		ret = case_read(st, c, err);
	else if (rc == SQLITE_DONE)
		ret = xp_errf(err, "no case named %s", name);
	else
		ret = xp_store_fail(s, err, "reading a case");
	sqlite3_finalize(st);
	if (ret < 0)
		xp_case_clear(c);
	return ret;
}

int xp_validate_case_list(struct xp_store *s, struct xp_case **cases, size_t *n, struct xp_err *err)
{
	*cases = NULL;
	*n = 0;
	sqlite3_stmt *st;
	if (xp_store_prep(s, "SELECT " CASE_COLS " FROM cases ORDER BY name", &st, err, "listing cases") < 0)
		return -1;
	size_t cap = 0;
	int rc, bad = 0;
	while (!bad && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		xp_grow(cases, sizeof **cases, *n, &cap);
		memset(&(*cases)[*n], 0, sizeof **cases);
		bad = case_read(st, &(*cases)[(*n)++], err);
	}
	if (!bad && rc != SQLITE_DONE)
		bad = xp_store_fail(s, err, "listing cases");
	sqlite3_finalize(st);
	if (bad) {
		xp_case_list_free(*cases, *n);
		*cases = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

/* Checks a case's fields before it is stored (add and import share it). */
int xpv_check_case(const struct xp_case *c, struct xp_err *err)
{
	if (check_case_name(c->name, err) < 0 || xpv_check_text("image", c->image, TEXT_MAX, false, err) < 0 ||
	    xpv_check_text("model", c->model, TEXT_MAX, false, err) < 0 ||
	    xpv_check_text("data", c->data, TEXT_MAX, false, err) < 0 ||
	    xpv_check_text("acceptance", c->acceptance, TEXT_MAX, false, err) < 0 ||
	    xpv_check_text("team", c->team, FIELD_MAX, false, err) < 0)
		return -1;
	if (c->entry) {
		size_t n = 0;
		while (c->entry[n])
			n++;
		if (n == 0 || !*c->entry[0])
			return xp_errf(err, "entry: the command is empty");
		if (n > ENTRY_MAX_ARGS)
			return xp_errf(err, "entry: more than %d words", ENTRY_MAX_ARGS);
		for (size_t i = 0; i < n; i++)
			if (xpv_check_text("entry", c->entry[i], TEXT_MAX, false, err) < 0)
				return -1;
	}
	return 0;
}

/* Inserts a checked case; the caller holds the transaction. */
int xpv_case_insert(struct xp_store *s, const struct xp_case *c, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s, "INSERT INTO cases(" CASE_COLS ") VALUES(?, ?, ?, ?, ?, ?, ?, ?)", &st, err,
			  "adding a case") < 0)
		return -1;
	char *entry = c->entry ? xpv_jdump(entry_json(c->entry)) : NULL;
	xp_store_bind_text(st, 1, c->name);
	xp_store_bind_text(st, 2, opt(c->image));
	xp_store_bind_text(st, 3, opt(c->model));
	xp_store_bind_text(st, 4, opt(c->data));
	xp_store_bind_text(st, 5, entry);
	xp_store_bind_text(st, 6, opt(c->acceptance));
	xp_store_bind_text(st, 7, opt(c->team));
	sqlite3_bind_int64(st, 8, (sqlite3_int64)c->created);
	int rc = xp_store_finish(s, st, sqlite3_step(st), err, "adding a case");
	free(entry);
	return rc;
}

int xp_validate_case_add(struct xp_store *s, const struct xp_case *c, struct xp_err *err)
{
	if (xpv_check_case(c, err) < 0)
		return -1;
	struct xp_case k = *c;
	k.created = c->created > 0 ? c->created : time(NULL);
	bool nested;
	if (xpv_tx_begin(s, &nested, err) < 0)
		return -1;
	int ex = xpv_case_exists(s, c->name, err);
	int rc = ex < 0 ? -1 : ex ? xp_errf(err, "case %s exists already", c->name) : xpv_case_insert(s, &k, err);
	if (rc == 0) {
		char *after = xpv_jdump(xp_case_to_json(&k));
		rc = xp_audit_add(s, "case.add", c->name, NULL, after, err);
		free(after);
	}
	if (rc < 0) {
		xpv_tx_rollback(s, nested);
		return -1;
	}
	return xpv_tx_commit(s, nested, err);
}

/* Runs a statement with one text parameter that changes rows; the count, or -1. */
static int exec1(struct xp_store *s, const char *sql, const char *arg, const char *doing, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s, sql, &st, err, doing) < 0)
		return -1;
	xp_store_bind_text(st, 1, arg);
	int rc = sqlite3_step(st) == SQLITE_DONE ? sqlite3_changes(s->db) : xp_store_fail(s, err, doing);
	sqlite3_finalize(st);
	return rc;
}

int xp_validate_case_rm(struct xp_store *s, const char *name, struct xp_err *err)
{
	bool nested;
	if (xpv_tx_begin(s, &nested, err) < 0)
		return -1;
	struct xp_case c;
	int rc = xp_validate_case_get(s, name, &c, err);
	int gone = 0;
	if (rc == 0) {
		/* Explicit rather than left to ON DELETE CASCADE: the count goes into the audit row,
		 * and a connection opened without foreign keys still removes the evidence. */
		gone = exec1(s, "DELETE FROM results WHERE case_name = ?", name, "removing a case's results", err);
		if (gone < 0 || exec1(s, "DELETE FROM cases WHERE name = ?", name, "removing a case", err) < 0)
			rc = -1;
	}
	if (rc == 0) {
		json_t *b = xp_case_to_json(&c);
		json_object_set_new(b, "results", json_integer(gone));
		char *before = xpv_jdump(b);
		rc = xp_audit_add(s, "case.rm", name, before, NULL, err);
		free(before);
	}
	xp_case_clear(&c);
	if (rc < 0) {
		xpv_tx_rollback(s, nested);
		return -1;
	}
	return xpv_tx_commit(s, nested, err);
}
