/* acks.c: acknowledged and snoozed problems in the store (acks.h). */
#include "acks.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_json.h"

static int key_cmp(const char *n1, const char *w1, const char *r1, const char *n2, const char *w2, const char *r2)
{
	int c = strcmp(n1, n2);
	if (!c)
		c = strcmp(w1, w2);
	return c ? c : strcmp(r1, r2);
}

static int ack_cmp(const void *x, const void *y)
{
	const struct xp_ack *a = x, *b = y;
	return key_cmp(a->node, a->what, a->reason, b->node, b->what, b->reason);
}

void xp_acks_free(struct xp_acks *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->a[i].node);
		free(a->a[i].what);
		free(a->a[i].reason);
		free(a->a[i].actor);
		free(a->a[i].note);
	}
	free(a->a);
	a->a = NULL;
	a->n = 0;
}

int xp_acks_load(struct xp_store *s, struct xp_acks *out, struct xp_err *err)
{
	out->a = NULL;
	out->n = 0;
	bool has;
	if (xp_store_has_table(s, "acks", &has, err) < 0)
		return -1;
	if (!has)
		return 0;
	sqlite3_stmt *st;
	if (xp_store_prep(s, "SELECT node, what, reason, level, kind, time, until, actor, note FROM acks", &st, err,
			  "reading acknowledged problems") < 0)
		return -1;
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		xp_grow(&out->a, sizeof *out->a, out->n, &cap);
		struct xp_ack *k = &out->a[out->n++];
		k->node = xp_store_col_text(st, 0);
		k->what = xp_store_col_text(st, 1);
		k->reason = xp_store_col_text(st, 2);
		const char *lv = (const char *)sqlite3_column_text(st, 3);
		k->level = lv ? xp_health_parse(lv) : XP_HEALTH_UNKNOWN;
		const char *kind = (const char *)sqlite3_column_text(st, 4);
		k->kind = kind && strcmp(kind, "snooze") == 0 ? XP_ACK_SNOOZE : XP_ACK_ACK;
		k->time = (time_t)sqlite3_column_int64(st, 5);
		k->until = (time_t)sqlite3_column_int64(st, 6);
		k->actor = xp_store_col_text(st, 7);
		k->note = xp_store_col_text(st, 8);
		/* NOT NULL in the schema; a hand-edited file must still not crash the lookups. */
		if (!k->node || !k->what || !k->reason) {
			free(k->node);
			free(k->what);
			free(k->reason);
			free(k->actor);
			free(k->note);
			out->n--;
		}
	}
	if (xp_store_finish(s, st, rc, err, "reading acknowledged problems") < 0) {
		xp_acks_free(out);
		return -1;
	}
	/* Sorted here, not by the query: strcmp's order is the one bsearch needs. */
	if (out->n)
		qsort(out->a, out->n, sizeof *out->a, ack_cmp);
	return 0;
}

const struct xp_ack *xp_acks_find(const struct xp_acks *a, const char *node, const char *what, const char *reason)
{
	size_t lo = 0, hi = a->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct xp_ack *k = &a->a[mid];
		int c = key_cmp(node, what, reason, k->node, k->what, k->reason);
		if (!c)
			return k;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

int xp_ack_state(const struct xp_acks *a, const struct xp_problem *p, time_t now, const struct xp_ack **row)
{
	const struct xp_ack *k = a ? xp_acks_find(a, p->node, p->what, p->reason ? p->reason : "") : NULL;
	/* A device that went from warn to fail with the same words is worse: it shouts again. */
	if (k && (k->level != p->level || (k->kind == XP_ACK_SNOOZE && now >= k->until)))
		k = NULL;
	if (row)
		*row = k;
	return !k ? XP_ACK_OPEN : k->kind == XP_ACK_SNOOZE ? XP_ACK_SNOOZED : XP_ACK_ACKED;
}

const char *xp_ack_state_name(int state)
{
	return state == XP_ACK_ACKED ? "acked" : state == XP_ACK_SNOOZED ? "snoozed" : "open";
}

int xp_acks_put(struct xp_store *s, const struct xp_problem *p, size_t n, int kind, time_t now, time_t until,
		const char *note, struct xp_err *err)
{
	if (!n)
		return xp_errf(err, "no problem to acknowledge");
	if (xp_store_begin(s, err) < 0)
		return -1;
	sqlite3_stmt *st;
	if (xp_store_prep(s,
			  "INSERT OR REPLACE INTO acks(node, what, reason, level, kind, time, until, actor, note)"
			  " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)",
			  &st, err, "acknowledging a problem") < 0) {
		xp_store_rollback(s);
		return -1;
	}
	json_t *reasons = json_array();
	for (size_t i = 0; i < n; i++) {
		sqlite3_reset(st);
		xp_store_bind_text(st, 1, p[i].node);
		xp_store_bind_text(st, 2, p[i].what);
		xp_store_bind_text(st, 3, p[i].reason ? p[i].reason : "");
		xp_store_bind_text(st, 4, xp_health_name(p[i].level));
		xp_store_bind_text(st, 5, kind == XP_ACK_SNOOZE ? "snooze" : "ack");
		sqlite3_bind_int64(st, 6, (sqlite3_int64)now);
		if (kind == XP_ACK_SNOOZE)
			sqlite3_bind_int64(st, 7, (sqlite3_int64)until);
		else
			sqlite3_bind_null(st, 7);
		xp_store_bind_text(st, 8, s->actor);
		xp_store_bind_text(st, 9, note);
		int rc = sqlite3_step(st);
		if (rc != SQLITE_DONE) {
			json_decref(reasons);
			xp_store_finish(s, st, rc, err, "acknowledging a problem");
			xp_store_rollback(s);
			return -1;
		}
		json_array_append_new(reasons, xp_json_str(p[i].reason ? p[i].reason : ""));
	}
	sqlite3_finalize(st);
	json_t *after = json_object();
	json_object_set_new(after, "level", xp_json_str(xp_health_name(p[0].level)));
	json_object_set_new(after, "reasons", reasons);
	if (kind == XP_ACK_SNOOZE)
		json_object_set_new(after, "until", json_integer((json_int_t)until));
	if (note)
		json_object_set_new(after, "note", xp_json_str(note));
	char *at = json_dumps(after, JSON_COMPACT);
	json_decref(after);
	char target[256];
	snprintf(target, sizeof target, "%s %s", p[0].node, p[0].what);
	int rc = xp_audit_add(s, kind == XP_ACK_SNOOZE ? "problem.snooze" : "problem.ack", target, NULL, at, err);
	free(at);
	if (rc < 0) {
		xp_store_rollback(s);
		return -1;
	}
	return xp_store_commit(s, err);
}

int xp_acks_clear(struct xp_store *s, const char *node, const char *what, size_t *removed, struct xp_err *err)
{
	*removed = 0;
	if (xp_store_begin(s, err) < 0)
		return -1;
	/* What was there, for the audit row's before. */
	sqlite3_stmt *st;
	if (xp_store_prep(s, "SELECT reason, kind FROM acks WHERE node = ? AND what = ? ORDER BY reason", &st, err,
			  "reading acknowledged problems") < 0) {
		xp_store_rollback(s);
		return -1;
	}
	xp_store_bind_text(st, 1, node);
	xp_store_bind_text(st, 2, what);
	json_t *was = json_array();
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *o = json_object();
		json_object_set_new(o, "reason", xp_json_str((const char *)sqlite3_column_text(st, 0)));
		json_object_set_new(o, "kind", xp_json_str((const char *)sqlite3_column_text(st, 1)));
		json_array_append_new(was, o);
	}
	if (xp_store_finish(s, st, rc, err, "reading acknowledged problems") < 0) {
		json_decref(was);
		xp_store_rollback(s);
		return -1;
	}
	*removed = json_array_size(was);
	if (!*removed) {
		json_decref(was);
		xp_store_rollback(s);
		return 0;
	}
	if (xp_store_prep(s, "DELETE FROM acks WHERE node = ? AND what = ?", &st, err, "un-acknowledging a problem") <
	    0) {
		json_decref(was);
		xp_store_rollback(s);
		return -1;
	}
	xp_store_bind_text(st, 1, node);
	xp_store_bind_text(st, 2, what);
	char *bt = json_dumps(was, JSON_COMPACT);
	json_decref(was);
	char target[256];
	snprintf(target, sizeof target, "%s %s", node, what);
	if (xp_store_finish(s, st, sqlite3_step(st), err, "un-acknowledging a problem") < 0 ||
	    xp_audit_add(s, "problem.unack", target, bt, NULL, err) < 0) {
		free(bt);
		xp_store_rollback(s);
		*removed = 0;
		return -1;
	}
	free(bt);
	return xp_store_commit(s, err);
}

int xp_ack_duration(const char *text, int64_t *secs, struct xp_err *err)
{
	char *end;
	errno = 0;
	double v = text && *text ? strtod(text, &end) : 0;
	if (!text || !*text || end == text || errno || !(v > 0))
		return xp_errf(err, "'%.40s' is not a duration (a number and s, m, h or d: 30m, 4h, 1d)", text ? text : "");
	int64_t unit = !*end ? 60 : strcmp(end, "s") == 0 ? 1 : strcmp(end, "m") == 0 ? 60 : strcmp(end, "h") == 0 ? 3600
		       : strcmp(end, "d") == 0 ? 86400 : 0;
	if (!unit)
		return xp_errf(err, "'%.40s': unit '%.8s' is not s, m, h or d", text, end);
	double s = v * (double)unit;
	if (s > 365.0 * 86400)
		return xp_errf(err, "'%.40s' is longer than 365 days", text);
	*secs = (int64_t)(s + 0.5) > 0 ? (int64_t)(s + 0.5) : 1;
	return 0;
}

/* One problem's place in the order, for sorting the three arrays along. */
struct ord {
	struct xp_problem p;
	int state;
	time_t since;
};

static int ord_cmp(const void *x, const void *y)
{
	const struct ord *a = x, *b = y;
	bool qa = a->state != XP_ACK_OPEN, qb = b->state != XP_ACK_OPEN;
	if (qa != qb)
		return qa - qb;
	if (a->p.level != b->p.level)
		return b->p.level - a->p.level;
	bool da = strcmp(a->p.what, "node") != 0, db = strcmp(b->p.what, "node") != 0;
	if (da != db)
		return da - db;
	if (a->since != b->since)
		return a->since < b->since ? -1 : 1;
	int c = strcmp(a->p.node, b->p.node);
	if (!c)
		c = strcmp(a->p.what, b->p.what);
	return c ? c : strcmp(a->p.reason ? a->p.reason : "", b->p.reason ? b->p.reason : "");
}

void xp_problems_order(struct xp_problem *p, int *state, time_t *since, size_t n)
{
	if (n < 2)
		return;
	struct ord *o = xp_calloc(n, sizeof *o);
	for (size_t i = 0; i < n; i++)
		o[i] = (struct ord){p[i], state ? state[i] : XP_ACK_OPEN, since ? since[i] : 0};
	qsort(o, n, sizeof *o, ord_cmp);
	for (size_t i = 0; i < n; i++) {
		p[i] = o[i].p;
		if (state)
			state[i] = o[i].state;
		if (since)
			since[i] = o[i].since;
	}
	free(o);
}
