/* validate_evidence.c: evidence rows: reading a cell's latest records, recording a
 * layer under the layer rule, a cell's history, and the highest layer proven (what
 * placement asks). */
#include "validate_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model_json.h"

void xp_evidence_clear(struct xp_evidence *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++) {
		struct xp_evidence *e = &rows[i];
		free(e->actor);
		free(e->note);
		free(e->log_path);
		free(e->log_sha256);
		free(e->node);
		free(e->driver);
		free(e->firmware);
		e->actor = e->note = e->log_path = e->log_sha256 = e->node = e->driver = e->firmware = NULL;
	}
}

void xp_evidence_free(struct xp_evidence *rows, size_t n)
{
	xp_evidence_clear(rows, n);
	free(rows);
}

/* Reads "id, " EV_COLS from a row. */
void xpv_ev_read(sqlite3_stmt *st, struct xp_evidence *e)
{
	e->id = sqlite3_column_int64(st, 0);
	e->layer = sqlite3_column_int(st, 1);
	int status = xp_vstatus_parse((const char *)sqlite3_column_text(st, 2));
	e->status = status < 0 ? XP_V_UNTESTED : status;
	e->time = (time_t)sqlite3_column_int64(st, 3);
	e->actor = xp_store_col_text(st, 4);
	e->note = xp_store_col_text(st, 5);
	e->log_path = xp_store_col_text(st, 6);
	e->log_sha256 = xp_store_col_text(st, 7);
	e->node = xp_store_col_text(st, 8);
	e->driver = xp_store_col_text(st, 9);
	e->firmware = xp_store_col_text(st, 10);
}

json_t *xp_evidence_to_json(const struct xp_evidence *e, bool full)
{
	json_t *o = json_object();
	if (full)
		json_object_set_new(o, "layer", json_string(xp_layer_name(e->layer)));
	json_object_set_new(o, "status", json_string(xp_vstatus_name(e->status)));
	json_object_set_new(o, "time", xpv_jtime(e->time));
	json_object_set_new(o, "actor", xp_json_str(e->actor));
	json_object_set_new(o, "note", xp_json_str(e->note));
	if (full)
		json_object_set_new(o, "log_path", xp_json_str(e->log_path));
	json_object_set_new(o, "log_sha256", xp_json_str(e->log_sha256));
	json_object_set_new(o, "node", xp_json_str(e->node));
	if (full) {
		json_object_set_new(o, "driver", xp_json_str(e->driver));
		json_object_set_new(o, "firmware", xp_json_str(e->firmware));
	}
	return o;
}

/* The latest record of each layer of one cell; layers without one are untested. */
int xpv_cell_read(struct xp_store *s, const char *env, const char *kase, struct xp_evidence ev[XP_LAYER_COUNT],
		  struct xp_err *err)
{
	memset(ev, 0, XP_LAYER_COUNT * sizeof *ev);
	for (int i = 0; i < XP_LAYER_COUNT; i++)
		ev[i].layer = i;
	sqlite3_stmt *st;
	/* max() with bare columns: sqlite takes those from the row holding the maximum. */
	if (xp_store_prep(s, "SELECT max(id), " EV_COLS " FROM results WHERE env = ?1 AND case_name = ?2 GROUP BY layer",
			  &st, err, "reading a cell") < 0)
		return -1;
	xp_store_bind_text(st, 1, env);
	xp_store_bind_text(st, 2, kase);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int l = sqlite3_column_int(st, 1);
		if (l >= 0 && l < XP_LAYER_COUNT)
			xpv_ev_read(st, &ev[l]);
	}
	if (xp_store_finish(s, st, rc, err, "reading a cell") < 0) {
		xp_evidence_clear(ev, XP_LAYER_COUNT);
		return -1;
	}
	return 0;
}

/* The lowest layer under `layer` that is not pass, or -1 when all are. */
int xpv_lower_gap(const struct xp_evidence ev[XP_LAYER_COUNT], int layer)
{
	for (int i = 0; i < layer; i++)
		if (ev[i].status != XP_V_PASS)
			return i;
	return -1;
}

int64_t xpv_result_insert(struct xp_store *s, const char *env, const char *kase, const struct xp_evidence *e,
			  struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s,
			  "INSERT INTO results(env, case_name, " EV_COLS ") VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			  &st, err, "recording a result") < 0)
		return -1;
	xp_store_bind_text(st, 1, env);
	xp_store_bind_text(st, 2, kase);
	sqlite3_bind_int(st, 3, e->layer);
	xp_store_bind_text(st, 4, xp_vstatus_name(e->status));
	sqlite3_bind_int64(st, 5, (sqlite3_int64)e->time);
	xp_store_bind_text(st, 6, e->actor);
	xp_store_bind_text(st, 7, opt(e->note));
	xp_store_bind_text(st, 8, opt(e->log_path));
	xp_store_bind_text(st, 9, opt(e->log_sha256));
	xp_store_bind_text(st, 10, opt(e->node));
	xp_store_bind_text(st, 11, opt(e->driver));
	xp_store_bind_text(st, 12, opt(e->firmware));
	int64_t id = sqlite3_step(st) == SQLITE_DONE ? sqlite3_last_insert_rowid(s->db)
						     : xp_store_fail(s, err, "recording a result");
	sqlite3_finalize(st);
	return id;
}

/* "env/case/layer": the audit target of a cell layer (caller frees). */
static char *cell_target(const char *env, const char *kase, int layer)
{
	return xp_asprintf("%s/%s/%s", env, kase, xp_layer_name(layer));
}

int xpv_audit_cell(struct xp_store *s, const char *action, const char *env, const char *kase,
		   const struct xp_evidence *before, const struct xp_evidence *after, struct xp_err *err)
{
	char *b = before ? xpv_jdump(xp_evidence_to_json(before, true)) : NULL;
	char *a = xpv_jdump(xp_evidence_to_json(after, true));
	char *target = cell_target(env, kase, after->layer);
	int rc = xp_audit_add(s, action, target, b, a, err);
	free(b);
	free(a);
	free(target);
	return rc;
}

/* Records one layer inside the caller's transaction: the checks that need the
 * database, the row, the audit entry. */
static int record_in(struct xp_store *s, const char *env, const char *kase, struct xp_evidence *e,
		     struct xp_err *err)
{
	int ex = xpv_case_exists(s, kase, err);
	if (ex <= 0)
		return ex < 0 ? -1 : xp_errf(err, "no case named %s", kase);
	struct xp_env en;
	int found = xpv_env_get(s, env, &en, err);
	if (found <= 0)
		return found < 0 ? -1 : xp_errf(err, "no environment matches %s", env);
	struct xp_evidence cur[XP_LAYER_COUNT];
	if (xpv_cell_read(s, env, kase, cur, err) < 0) {
		xp_env_clear(&en);
		return -1;
	}
	int rc = 0, gap = e->status == XP_V_PASS ? xpv_lower_gap(cur, e->layer) : -1;
	if (gap >= 0)
		rc = xp_errf(err, "cannot record %s pass: %s is %s", xp_layer_name(e->layer), xp_layer_name(gap),
			     xp_vstatus_name(cur[gap].status));
	/* The evidence is for the environment as it is now: staleness compares against this. */
	e->driver = en.driver;
	e->firmware = en.firmware;
	if (rc == 0 && xpv_result_insert(s, env, kase, e, err) < 0)
		rc = -1;
	if (rc == 0) {
		struct xp_evidence *prev = &cur[e->layer];
		const struct xp_evidence *before = prev->status != XP_V_UNTESTED ? prev : NULL;
		rc = xpv_audit_cell(s, "validate.record", env, kase, before, e, err);
	}
	e->driver = e->firmware = NULL;
	xp_evidence_clear(cur, XP_LAYER_COUNT);
	xp_env_clear(&en);
	return rc;
}

/* Reads the log of a record first: a record whose evidence cannot be read is not written at
 * all. A pipe or a device would hash once and never again: the digest must be checkable
 * later, so only a regular file will do. hex gets its digest, *abs its absolute path
 * (caller frees; NULL on error). */
static int log_evidence(const char *log_path, char hex[65], char **abs, struct xp_err *err)
{
	struct stat st;
	if (stat(log_path, &st) == 0 && !S_ISREG(st.st_mode))
		return xp_errf(err, "log file: %s: not a regular file", log_path);
	if (xp_sha256_file(log_path, hex, err) < 0) {
		xp_err_prefix(err, "log file");
		return -1;
	}
	*abs = realpath(log_path, NULL);
	if (!*abs)
		return xp_errf(err, "log file: %s: %s", log_path, strerror(errno));
	if (xpv_check_text("log path", *abs, TEXT_MAX, true, err) < 0) {
		free(*abs);
		*abs = NULL;
		return -1;
	}
	return 0;
}

int xp_validate_record(struct xp_store *s, const char *env, const char *kase, int layer, int status,
		       const char *note, const char *log_path, const char *node, struct xp_err *err)
{
	if (layer < 0 || layer >= XP_LAYER_COUNT)
		return xp_errf(err, "unknown layer %d", layer);
	if (status != XP_V_PASS && status != XP_V_FAIL)
		return xp_errf(err, "a record is pass or fail, not %s", xp_vstatus_name(status));
	if (xpv_check_text("note", note, TEXT_MAX, false, err) < 0 ||
	    xpv_check_text("node", node, FIELD_MAX, false, err) < 0)
		return -1;
	char hex[65];
	char *abs = NULL;
	if (log_path && log_evidence(log_path, hex, &abs, err) < 0)
		return -1;
	char *id = xp_validate_env_resolve(s, env, err);
	if (!id) {
		free(abs);
		return -1;
	}
	struct xp_evidence e = {.layer = layer, .status = status, .time = time(NULL), .actor = s->actor,
				.note = (char *)note, .log_path = abs, .log_sha256 = abs ? hex : NULL,
				.node = (char *)node};
	bool nested;
	int rc = xpv_tx_begin(s, &nested, err);
	if (rc == 0) {
		rc = record_in(s, id, kase, &e, err);
		if (rc < 0)
			xpv_tx_rollback(s, nested);
		else
			rc = xpv_tx_commit(s, nested, err);
	}
	free(id);
	free(abs);
	return rc;
}

int xp_validate_cell(struct xp_store *s, const char *env, const char *kase,
		     struct xp_evidence layers[XP_LAYER_COUNT], struct xp_err *err)
{
	memset(layers, 0, XP_LAYER_COUNT * sizeof *layers);
	char *id = xp_validate_env_resolve(s, env, err);
	if (!id)
		return -1;
	int ex = xpv_case_exists(s, kase, err);
	int rc = ex < 0 ? -1 : ex == 0 ? xp_errf(err, "no case named %s", kase)
				       : xpv_cell_read(s, id, kase, layers, err);
	free(id);
	return rc;
}

int xp_validate_history(struct xp_store *s, const char *env, const char *kase, struct xp_evidence **rows,
			size_t *n, struct xp_err *err)
{
	*rows = NULL;
	*n = 0;
	char *id = xp_validate_env_resolve(s, env, err);
	if (!id)
		return -1;
	int ex = xpv_case_exists(s, kase, err);
	if (ex <= 0) {
		free(id);
		return ex < 0 ? -1 : xp_errf(err, "no case named %s", kase);
	}
	sqlite3_stmt *st;
	if (xp_store_prep(s, "SELECT id, " EV_COLS " FROM results WHERE env = ? AND case_name = ? ORDER BY id", &st, err,
			  "reading a cell's history") < 0) {
		free(id);
		return -1;
	}
	xp_store_bind_text(st, 1, id);
	xp_store_bind_text(st, 2, kase);
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		xp_grow(rows, sizeof **rows, *n, &cap);
		memset(&(*rows)[*n], 0, sizeof **rows);
		xpv_ev_read(st, &(*rows)[(*n)++]);
	}
	free(id);
	if (xp_store_finish(s, st, rc, err, "reading a cell's history") < 0) {
		xp_evidence_free(*rows, *n);
		*rows = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

int xp_validate_highest(struct xp_store *s, const char *env, const char *kase)
{
	sqlite3_stmt *st;
	struct xp_err err;
	if (!env || xp_store_prep(s,
				  "SELECT case_name, layer, max(id), status FROM results WHERE env = ?1 AND (?2 IS NULL OR "
				  "case_name = ?2) GROUP BY case_name, layer ORDER BY case_name, layer",
				  &st, &err, "reading the matrix") < 0)
		return -1;
	xp_store_bind_text(st, 1, env);
	xp_store_bind_text(st, 2, kase);
	int best = -1;
	char *cur = NULL;
	bool pass[XP_LAYER_COUNT] = {false};
	/* Rows come grouped by case: score each case when the next one starts. */
	for (;;) {
		int rc = sqlite3_step(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
			/* Placement must not trust a half-read answer. */
			best = -1;
			break;
		}
		const char *name = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
		if (cur && (!name || strcmp(name, cur) != 0)) {
			int h = -1;
			while (h + 1 < XP_LAYER_COUNT && pass[h + 1])
				h++;
			if (h > best)
				best = h;
			free(cur);
			cur = NULL;
		}
		if (!name)
			break;
		if (!cur) {
			cur = xp_strdup(name);
			memset(pass, 0, sizeof pass);
		}
		int l = sqlite3_column_int(st, 1);
		const char *status = (const char *)sqlite3_column_text(st, 3);
		if (l >= 0 && l < XP_LAYER_COUNT)
			pass[l] = status && strcmp(status, "pass") == 0;
	}
	free(cur);
	sqlite3_finalize(st);
	return best;
}
