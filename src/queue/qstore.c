/* qstore.c: the queue model in the store (qstore.h). */
#include "qstore.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"

/* NULL for unlimited, else the milli-units. */
static void bind_limit(sqlite3_stmt *st, int i, int64_t v)
{
	if (v == XP_UNLIMITED)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, v);
}

static int64_t col_limit(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? XP_UNLIMITED : sqlite3_column_int64(st, i);
}

static int load_classes(struct xp_store *s, struct xp_qset *set, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s, "SELECT name, vendor, model, label, builtin, created FROM rclasses"
			     " ORDER BY builtin DESC, name",
			  &st, err, "reading resource classes") < 0)
		return -1;
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		xp_grow(&set->classes, sizeof *set->classes, set->n_classes, &cap);
		struct xp_rclass *c = &set->classes[set->n_classes++];
		c->name = xp_store_col_text(st, 0);
		c->vendor = xp_store_col_text(st, 1);
		c->model = xp_store_col_text(st, 2);
		c->label = xp_store_col_text(st, 3);
		c->builtin = sqlite3_column_int(st, 4) != 0;
		c->created = sqlite3_column_int64(st, 5);
	}
	return xp_store_finish(s, st, rc, err, "reading resource classes");
}

/* The built-ins, for a file from before the tables (the migration inserts the same rows). */
static void builtin_classes(struct xp_qset *set)
{
	set->n_classes = 2;
	set->classes = xp_calloc(2, sizeof *set->classes);
	set->classes[0] = (struct xp_rclass){.name = xp_strdup("cpu"), .builtin = true};
	set->classes[1] = (struct xp_rclass){.name = xp_strdup("mem"), .builtin = true};
}

static int load_quotas(struct xp_store *s, struct xp_qset *set, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s,
			  "SELECT queue, class, resource, guaranteed, deserved, max, borrowing_limit, lending_limit"
			  " FROM quotas ORDER BY queue, class, resource",
			  &st, err, "reading quotas") < 0)
		return -1;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct xp_queue *q = xp_qset_queue(set, (const char *)sqlite3_column_text(st, 0));
		int res = xp_res_parse((const char *)sqlite3_column_text(st, 2));
		if (!q || res < 0)
			continue; /* the foreign key and CHECK keep this from happening */
		q->quotas = xp_realloc(q->quotas, (q->n_quotas + 1) * sizeof *q->quotas);
		struct xp_quota *u = &q->quotas[q->n_quotas++];
		u->rclass = xp_store_col_text(st, 1);
		u->res = res;
		u->guaranteed = sqlite3_column_int64(st, 3);
		u->deserved = sqlite3_column_int64(st, 4);
		u->max = col_limit(st, 5);
		u->borrowing_limit = col_limit(st, 6);
		u->lending_limit = col_limit(st, 7);
	}
	return xp_store_finish(s, st, rc, err, "reading quotas");
}

/* An enum column read back; a value this xpool does not know reads as the default (0). */
static int col_enum(sqlite3_stmt *st, int i, int (*parse)(const char *))
{
	int v = parse((const char *)sqlite3_column_text(st, i));
	return v < 0 ? 0 : v;
}

static int load_queues(struct xp_store *s, struct xp_qset *set, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s,
			  "SELECT name, parent, tenants, weight, priority, ordering, state, reclaimable, within,"
			  " reclaim, created FROM queues ORDER BY name",
			  &st, err, "reading queues") < 0)
		return -1;
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		xp_grow(&set->queues, sizeof *set->queues, set->n_queues, &cap);
		struct xp_queue *q = &set->queues[set->n_queues++];
		memset(q, 0, sizeof *q);
		q->name = xp_store_col_text(st, 0);
		q->parent = xp_store_col_text(st, 1);
		const char *t = (const char *)sqlite3_column_text(st, 2);
		struct xp_err ignore;
		if (t && xp_tenants_parse(t, &q->tenants, &q->n_tenants, &ignore) < 0)
			q->n_tenants = 0;
		q->weight = sqlite3_column_double(st, 3);
		q->priority = sqlite3_column_int(st, 4);
		q->order = col_enum(st, 5, xp_qorder_parse);
		q->state = col_enum(st, 6, xp_qstate_parse);
		q->reclaimable = sqlite3_column_int(st, 7) != 0;
		q->within = col_enum(st, 8, xp_qpolicy_parse);
		q->reclaim = col_enum(st, 9, xp_qpolicy_parse);
		q->created = sqlite3_column_int64(st, 10);
	}
	return xp_store_finish(s, st, rc, err, "reading queues");
}

int xp_qstore_load(struct xp_store *s, struct xp_qset *set, struct xp_err *err)
{
	memset(set, 0, sizeof *set);
	bool has;
	if (xp_store_has_table(s, "queues", &has, err) < 0)
		return -1;
	if (!has) {
		builtin_classes(set);
		return 0;
	}
	if (load_classes(s, set, err) < 0 || load_queues(s, set, err) < 0 || load_quotas(s, set, err) < 0) {
		xp_qset_clear(set);
		return -1;
	}
	return 0;
}

/* The JSON text of a JSON value (freed here), for the audit log. */
static char *dump(json_t *o)
{
	char *t = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return t;
}

int xp_qstore_class_add(struct xp_store *s, const struct xp_rclass *c, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s, "INSERT INTO rclasses(name, vendor, model, label, builtin, created) VALUES(?,?,?,?,0,?)",
			  &st, err, "adding a resource class") < 0)
		return -1;
	xp_store_bind_text(st, 1, c->name);
	xp_store_bind_text(st, 2, c->vendor);
	xp_store_bind_text(st, 3, c->model);
	xp_store_bind_text(st, 4, c->label);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)time(NULL));
	if (xp_store_finish(s, st, sqlite3_step(st), err, "adding a resource class") < 0)
		return -1;
	char *after = dump(xp_rclass_json(c));
	int rc = xp_audit_add(s, "rclass.add", c->name, NULL, after, err);
	free(after);
	return rc;
}

int xp_qstore_class_rm(struct xp_store *s, const struct xp_rclass *c, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s, "DELETE FROM rclasses WHERE name = ? AND builtin = 0", &st, err,
			  "removing a resource class") < 0)
		return -1;
	xp_store_bind_text(st, 1, c->name);
	if (xp_store_finish(s, st, sqlite3_step(st), err, "removing a resource class") < 0)
		return -1;
	char *before = dump(xp_rclass_json(c));
	int rc = xp_audit_add(s, "rclass.rm", c->name, before, NULL, err);
	free(before);
	return rc;
}

/* Deletes the quotas of queue name. */
static int quotas_delete(struct xp_store *s, const char *name, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s, "DELETE FROM quotas WHERE queue = ?", &st, err, "replacing quotas") < 0)
		return -1;
	xp_store_bind_text(st, 1, name);
	return xp_store_finish(s, st, sqlite3_step(st), err, "replacing quotas");
}

static int quotas_insert(struct xp_store *s, const struct xp_queue *q, struct xp_err *err)
{
	for (size_t i = 0; i < q->n_quotas; i++) {
		const struct xp_quota *u = &q->quotas[i];
		sqlite3_stmt *st;
		if (xp_store_prep(s,
				  "INSERT INTO quotas(queue, class, resource, guaranteed, deserved, max, borrowing_limit,"
				  " lending_limit) VALUES(?,?,?,?,?,?,?,?)",
				  &st, err, "writing a quota") < 0)
			return -1;
		xp_store_bind_text(st, 1, q->name);
		xp_store_bind_text(st, 2, u->rclass);
		xp_store_bind_text(st, 3, xp_res_name(u->res));
		sqlite3_bind_int64(st, 4, u->guaranteed);
		sqlite3_bind_int64(st, 5, u->deserved);
		bind_limit(st, 6, u->max);
		bind_limit(st, 7, u->borrowing_limit);
		bind_limit(st, 8, u->lending_limit);
		if (xp_store_finish(s, st, sqlite3_step(st), err, "writing a quota") < 0)
			return -1;
	}
	return 0;
}

/* The tenants as stored: comma-separated, NULL for none. */
static char *tenants_text(const struct xp_queue *q)
{
	if (!q->n_tenants)
		return NULL;
	size_t len = 0;
	for (size_t i = 0; i < q->n_tenants; i++)
		len += strlen(q->tenants[i]) + 1;
	char *t = xp_malloc(len), *p = t;
	for (size_t i = 0; i < q->n_tenants; i++)
		p += sprintf(p, "%s%s", i ? "," : "", q->tenants[i]);
	return t;
}

int xp_qstore_queue_put(struct xp_store *s, const struct xp_queue *q, const struct xp_queue *before,
			struct xp_err *err)
{
	sqlite3_stmt *st;
	const char *sql = before ? "UPDATE queues SET parent = ?2, tenants = ?3, weight = ?4, priority = ?5,"
				   " ordering = ?6, state = ?7, reclaimable = ?8, within = ?9, reclaim = ?10"
				   " WHERE name = ?1"
				 : "INSERT INTO queues(name, parent, tenants, weight, priority, ordering, state,"
				   " reclaimable, within, reclaim, created) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)";
	if (xp_store_prep(s, sql, &st, err, before ? "changing a queue" : "adding a queue") < 0)
		return -1;
	char *tenants = tenants_text(q);
	xp_store_bind_text(st, 1, q->name);
	xp_store_bind_text(st, 2, q->parent);
	xp_store_bind_text(st, 3, tenants);
	sqlite3_bind_double(st, 4, q->weight);
	sqlite3_bind_int(st, 5, q->priority);
	xp_store_bind_text(st, 6, xp_qorder_name(q->order));
	xp_store_bind_text(st, 7, xp_qstate_name(q->state));
	sqlite3_bind_int(st, 8, q->reclaimable);
	xp_store_bind_text(st, 9, xp_qpolicy_name(q->within));
	xp_store_bind_text(st, 10, xp_qpolicy_name(q->reclaim));
	if (!before)
		sqlite3_bind_int64(st, 11, (sqlite3_int64)time(NULL));
	int rc = xp_store_finish(s, st, sqlite3_step(st), err, before ? "changing a queue" : "adding a queue");
	free(tenants);
	if (rc < 0 || quotas_delete(s, q->name, err) < 0 || quotas_insert(s, q, err) < 0)
		return -1;
	char *b = before ? dump(xp_queue_json(before)) : NULL, *a = dump(xp_queue_json(q));
	rc = xp_audit_add(s, before ? "queue.set" : "queue.add", q->name, b, a, err);
	free(b);
	free(a);
	return rc;
}

int xp_qstore_queue_rm(struct xp_store *s, const struct xp_queue *q, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s, "DELETE FROM queues WHERE name = ?", &st, err, "removing a queue") < 0)
		return -1;
	xp_store_bind_text(st, 1, q->name);
	if (xp_store_finish(s, st, sqlite3_step(st), err, "removing a queue") < 0)
		return -1;
	char *b = dump(xp_queue_json(q));
	int rc = xp_audit_add(s, "queue.rm", q->name, b, NULL, err);
	free(b);
	return rc;
}
