/* jstore.c: workload jobs in the store (jstore.h). */
#include "jstore.h"

#include <stdlib.h>
#include <string.h>

#include "model_json.h"

/* -1 for NULL (not started, not ended), else the value. */
static int64_t col_time(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, i);
}

static void bind_time(sqlite3_stmt *st, int i, int64_t v)
{
	if (v < 0)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, v);
}

/* Binds what changes as a job moves (state, reason, reason_text, start, end, preemptions,
 * alloc) to the seven parameters from first on, in that order: an insert and an update write
 * the same columns. */
static void bind_progress(sqlite3_stmt *st, int first, const struct xp_qjob *j, const char *alloc)
{
	xp_store_bind_text(st, first, xp_jstate_name(j->state));
	sqlite3_bind_int(st, first + 1, j->reason);
	xp_store_bind_text(st, first + 2, j->reason_text);
	bind_time(st, first + 3, j->start);
	bind_time(st, first + 4, j->end);
	sqlite3_bind_int(st, first + 5, j->preemptions);
	xp_store_bind_text(st, first + 6, alloc);
}

/* The slice text of j's spec equal to name, so that a slot points into the spec (qjob.h:
 * slots do not own their slice); NULL when no group asks for it. */
static const char *spec_slice(const struct xp_job *spec, const char *name)
{
	for (size_t g = 0; spec && name && g < spec->n_groups; g++)
		if (spec->groups[g].slice && strcmp(spec->groups[g].slice, name) == 0)
			return spec->groups[g].slice;
	return NULL;
}

/* Reads the stored slots text into j->alloc; slots on nodes c does not hold are left out
 * (*lost set). A text that is not the stored form reads as no slots, lost. */
static void alloc_parse(struct xp_qjob *j, const char *text, const struct xp_cluster *c, bool *lost)
{
	j->alloc = (struct xp_qalloc){NULL, 0, -1};
	if (!text)
		return;
	json_t *arr = json_loads(text, 0, NULL);
	if (!json_is_array(arr)) {
		*lost = true;
		json_decref(arr);
		return;
	}
	size_t n = json_array_size(arr);
	j->alloc.slots = n ? xp_calloc(n, sizeof *j->alloc.slots) : NULL;
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_array_get(arr, i);
		const char *node = json_string_value(json_object_get(o, "node"));
		json_int_t pos = json_integer_value(json_object_get(o, "pos"));
		json_int_t take = json_integer_value(json_object_get(o, "take"));
		size_t ix = 0;
		bool found = false;
		for (; node && c && ix < c->n_nodes; ix++)
			if (strcmp(c->nodes[ix]->name, node) == 0) {
				found = true;
				break;
			}
		if (!found || pos < 0 || pos > UINT16_MAX || take <= 0 || take > 1000) {
			*lost = true;
			continue;
		}
		struct xp_qslot *sl = &j->alloc.slots[j->alloc.n++];
		sl->node_ix = (uint32_t)ix;
		sl->pos = (uint16_t)pos;
		sl->take = (int16_t)take;
		sl->slice = spec_slice(j->spec, json_string_value(json_object_get(o, "slice")));
	}
	json_decref(arr);
}

char *xp_jstore_alloc_text(const struct xp_qalloc *a, const struct xp_cluster *c)
{
	if (!a->n)
		return NULL;
	json_t *arr = json_array();
	for (size_t i = 0; i < a->n; i++) {
		const struct xp_qslot *sl = &a->slots[i];
		json_t *o = json_object();
		json_object_set_new(o, "node", c && sl->node_ix < c->n_nodes ? json_string(c->nodes[sl->node_ix]->name)
									     : json_null());
		json_object_set_new(o, "pos", json_integer(sl->pos));
		json_object_set_new(o, "take", json_integer(sl->take));
		json_object_set_new(o, "slice", sl->slice ? json_string(sl->slice) : json_null());
		json_array_append_new(arr, o);
	}
	char *t = json_dumps(arr, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(arr);
	return t;
}

#define JOB_COLS "id, name, queue, tenant, priority, spec, submit, est_s, state, reason, reason_text, start, end," \
		 " preemptions, alloc"

int xp_jstore_load(struct xp_store *s, const struct xp_cluster *c, struct xp_qjob **jobs, size_t *n, bool **lost,
		   struct xp_err *err)
{
	*jobs = NULL;
	*n = 0;
	if (lost)
		*lost = NULL;
	bool has;
	if (xp_store_has_table(s, "jobs", &has, err) < 0)
		return -1;
	if (!has)
		return 0;
	sqlite3_stmt *st;
	if (xp_store_prep(s, "SELECT " JOB_COLS " FROM jobs ORDER BY id", &st, err, "reading jobs") < 0)
		return -1;
	size_t cap = 0, lcap = 0;
	bool *lf = NULL;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		xp_grow(jobs, sizeof **jobs, *n, &cap);
		xp_grow(&lf, sizeof *lf, *n, &lcap);
		struct xp_qjob *j = &(*jobs)[*n];
		bool *l = &lf[(*n)++];
		memset(j, 0, sizeof *j);
		*l = false;
		j->id = sqlite3_column_int64(st, 0);
		j->name = xp_store_col_text(st, 1);
		j->queue = xp_store_col_text(st, 2);
		j->tenant = xp_store_col_text(st, 3);
		j->priority = sqlite3_column_int(st, 4);
		const char *spec = (const char *)sqlite3_column_text(st, 5);
		struct xp_err perr;
		j->spec = spec ? xp_job_parse(spec, strlen(spec), "stored job", &perr) : NULL;
		j->submit = sqlite3_column_int64(st, 6);
		j->est_s = sqlite3_column_int64(st, 7);
		j->actual_s = -1;
		int state = xp_jstate_parse((const char *)sqlite3_column_text(st, 8));
		j->state = state < 0 ? XP_JS_FAILED : state; /* a state this xpool does not know: not scheduled */
		j->reason = sqlite3_column_int(st, 9);
		j->reason_text = xp_store_col_text(st, 10);
		j->start = col_time(st, 11);
		j->end = col_time(st, 12);
		j->preemptions = sqlite3_column_int(st, 13);
		j->eta = -1;
		alloc_parse(j, (const char *)sqlite3_column_text(st, 14), c, l);
		if (!j->spec)
			*l = true;
	}
	if (xp_store_finish(s, st, rc, err, "reading jobs") < 0) {
		for (size_t i = 0; i < *n; i++)
			xp_qjob_clear(&(*jobs)[i]);
		free(*jobs);
		free(lf);
		*jobs = NULL;
		*n = 0;
		return -1;
	}
	if (lost)
		*lost = lf;
	else
		free(lf);
	return 0;
}

int xp_jstore_events(struct xp_store *s, int64_t id, struct xp_jevent **ev, size_t *n, struct xp_err *err)
{
	*ev = NULL;
	*n = 0;
	bool has;
	if (xp_store_has_table(s, "jobs", &has, err) < 0)
		return -1;
	if (!has)
		return 0;
	sqlite3_stmt *st;
	if (xp_store_prep(s,
			  "SELECT id, job, time, from_state, to_state, reason, detail, actor FROM job_events"
			  " WHERE job = ? ORDER BY id",
			  &st, err, "reading job events") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		xp_grow(ev, sizeof **ev, *n, &cap);
		struct xp_jevent *e = &(*ev)[(*n)++];
		e->id = sqlite3_column_int64(st, 0);
		e->job = sqlite3_column_int64(st, 1);
		e->time = sqlite3_column_int64(st, 2);
		const char *from = (const char *)sqlite3_column_text(st, 3);
		e->from = from ? xp_jstate_parse(from) : -1;
		e->to = xp_jstate_parse((const char *)sqlite3_column_text(st, 4));
		e->reason = sqlite3_column_int(st, 5);
		e->detail = xp_store_col_text(st, 6);
		e->actor = xp_store_col_text(st, 7);
	}
	if (xp_store_finish(s, st, rc, err, "reading job events") < 0) {
		xp_jevents_free(*ev, *n);
		*ev = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

void xp_jevents_free(struct xp_jevent *ev, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(ev[i].detail);
		free(ev[i].actor);
	}
	free(ev);
}

int xp_jstore_unfinished(struct xp_store *s, const char *queue, int64_t *n, struct xp_err *err)
{
	*n = 0;
	bool has;
	if (xp_store_has_table(s, "jobs", &has, err) < 0)
		return -1;
	if (!has)
		return 0;
	sqlite3_stmt *st;
	if (xp_store_prep(s,
			  "SELECT count(*) FROM jobs WHERE queue = ? AND state NOT IN ('completed', 'failed', 'cancelled')",
			  &st, err, "counting jobs") < 0)
		return -1;
	xp_store_bind_text(st, 1, queue);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*n = sqlite3_column_int64(st, 0);
		rc = SQLITE_DONE;
	}
	return xp_store_finish(s, st, rc, err, "counting jobs");
}

/* The JSON text of a JSON value (freed here), for the audit log. */
static char *dump(json_t *o)
{
	char *t = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return t;
}

static char *spec_text(const struct xp_job *spec)
{
	if (!spec)
		return NULL;
	json_t *o = xp_job_to_json(spec);
	char *t = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return t;
}

int xp_jstore_insert(struct xp_store *s, struct xp_qjob *j, const struct xp_cluster *c, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s,
			  "INSERT INTO jobs(name, queue, tenant, priority, spec, submit, est_s, state, reason,"
			  " reason_text, start, end, preemptions, alloc) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
			  &st, err, "adding a job") < 0)
		return -1;
	char *spec = spec_text(j->spec), *alloc = xp_jstore_alloc_text(&j->alloc, c);
	xp_store_bind_text(st, 1, j->name);
	xp_store_bind_text(st, 2, j->queue);
	xp_store_bind_text(st, 3, j->tenant);
	sqlite3_bind_int(st, 4, j->priority);
	xp_store_bind_text(st, 5, spec);
	sqlite3_bind_int64(st, 6, j->submit);
	sqlite3_bind_int64(st, 7, j->est_s);
	bind_progress(st, 8, j, alloc);
	int rc = xp_store_finish(s, st, sqlite3_step(st), err, "adding a job");
	free(spec);
	free(alloc);
	if (rc < 0)
		return -1;
	j->id = sqlite3_last_insert_rowid(s->db);
	if (xp_jstore_event(s, j->id, j->submit, -1, j->state, j->reason, "submitted", s->actor, err) < 0)
		return -1;
	char target[32];
	snprintf(target, sizeof target, "%lld", (long long)j->id);
	char *a = dump(xp_jstore_job_json(j, c));
	rc = xp_audit_add(s, "job.submit", target, NULL, a, err);
	free(a);
	return rc;
}

int xp_jstore_update(struct xp_store *s, const struct xp_qjob *j, const struct xp_cluster *c, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s,
			  "UPDATE jobs SET state = ?2, reason = ?3, reason_text = ?4, start = ?5, end = ?6,"
			  " preemptions = ?7, alloc = ?8 WHERE id = ?1",
			  &st, err, "changing a job") < 0)
		return -1;
	char *alloc = xp_jstore_alloc_text(&j->alloc, c);
	sqlite3_bind_int64(st, 1, j->id);
	bind_progress(st, 2, j, alloc);
	int rc = xp_store_finish(s, st, sqlite3_step(st), err, "changing a job");
	free(alloc);
	return rc;
}

int xp_jstore_event(struct xp_store *s, int64_t id, int64_t t, int from, int to, int reason, const char *detail,
		    const char *actor, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s,
			  "INSERT INTO job_events(job, time, from_state, to_state, reason, detail, actor)"
			  " VALUES(?,?,?,?,?,?,?)",
			  &st, err, "recording a job's state change") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, t);
	xp_store_bind_text(st, 3, from >= 0 ? xp_jstate_name(from) : NULL);
	xp_store_bind_text(st, 4, xp_jstate_name(to));
	sqlite3_bind_int(st, 5, reason);
	xp_store_bind_text(st, 6, detail);
	xp_store_bind_text(st, 7, actor);
	return xp_store_finish(s, st, sqlite3_step(st), err, "recording a job's state change");
}

int xp_jstore_audit(struct xp_store *s, const char *action, const struct xp_qjob *before,
		    const struct xp_qjob *after, const struct xp_cluster *c, struct xp_err *err)
{
	const struct xp_qjob *j = after ? after : before;
	char target[32];
	snprintf(target, sizeof target, "%lld", (long long)j->id);
	char *b = before ? dump(xp_jstore_job_json(before, c)) : NULL;
	char *a = after ? dump(xp_jstore_job_json(after, c)) : NULL;
	int rc = xp_audit_add(s, action, target, b, a, err);
	free(b);
	free(a);
	return rc;
}

static json_t *time_json(int64_t t)
{
	return t >= 0 ? json_integer(t) : json_null();
}

json_t *xp_jstore_job_json(const struct xp_qjob *j, const struct xp_cluster *c)
{
	json_t *o = json_object();
	json_object_set_new(o, "id", json_integer(j->id));
	json_object_set_new(o, "name", j->name ? json_string(j->name) : json_null());
	json_object_set_new(o, "queue", xp_json_str(j->queue));
	json_object_set_new(o, "tenant", j->tenant ? json_string(j->tenant) : json_null());
	json_object_set_new(o, "priority", json_integer(j->priority));
	json_object_set_new(o, "state", json_string(xp_jstate_name(j->state)));
	if (j->reason || j->reason_text) {
		json_t *r = json_object();
		json_object_set_new(r, "code", json_integer(j->reason));
		json_object_set_new(r, "name", json_string(xp_reason_name(j->reason)));
		json_object_set_new(r, "text", j->reason_text ? json_string(j->reason_text) : json_null());
		json_object_set_new(o, "reason", r);
	} else
		json_object_set_new(o, "reason", json_null());
	json_object_set_new(o, "submit", json_integer(j->submit));
	json_object_set_new(o, "est_s", json_integer(j->est_s));
	json_object_set_new(o, "start", time_json(j->start));
	json_object_set_new(o, "end", time_json(j->end));
	json_object_set_new(o, "preemptions", json_integer(j->preemptions));
	char *alloc = xp_jstore_alloc_text(&j->alloc, c);
	json_t *slots = alloc ? json_loads(alloc, 0, NULL) : json_array();
	free(alloc);
	json_object_set_new(o, "slots", slots ? slots : json_array());
	json_object_set_new(o, "spec", j->spec ? xp_job_to_json(j->spec) : json_null());
	return o;
}

void xp_jstore_job_copy(struct xp_qjob *dst, const struct xp_qjob *j)
{
	*dst = *j;
	dst->name = xp_strdup(j->name);
	dst->queue = xp_strdup(j->queue);
	dst->tenant = xp_strdup(j->tenant);
	dst->reason_text = xp_strdup(j->reason_text);
	dst->nodes = xp_strdup(j->nodes);
	dst->engine_id = xp_strdup(j->engine_id);
	dst->engine_gres = xp_strdup(j->engine_gres);
	dst->spec = NULL;
	if (j->spec) {
		char *t = spec_text(j->spec);
		struct xp_err err;
		dst->spec = t ? xp_job_parse(t, strlen(t), "job", &err) : NULL;
		free(t);
	}
	dst->alloc.slots = j->alloc.n ? xp_calloc(j->alloc.n, sizeof *j->alloc.slots) : NULL;
	for (size_t i = 0; i < j->alloc.n; i++) {
		dst->alloc.slots[i] = j->alloc.slots[i];
		dst->alloc.slots[i].slice = spec_slice(dst->spec, j->alloc.slots[i].slice);
	}
}
