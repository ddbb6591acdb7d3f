/* validate_sync.c: sync with a discovered cluster: the environments inventory shows,
 * evidence made stale where a node's driver or firmware changed under it, and the
 * discovered layer set pass. */
#include "validate_int.h"

#include <stdlib.h>
#include <string.h>

#include "model_json.h"

/* The actor of rows written by inventory sync. */
#define DISCOVERY "discovery"

/* An unreachable or down node shows what it had, not what it has: it proves nothing new.
 * Nor does a node read from a file, unless the user asked for the file to be recorded
 * (XP_SYNC_FILES): looking at a snapshot or a sim gen cluster never writes. */
static bool node_live(const struct xp_node *n, unsigned flags)
{
	return n->state != XP_NODE_UNREACHABLE && n->state != XP_NODE_DOWN &&
	       (!n->from_file || (flags & XP_SYNC_FILES));
}

/* A node that may turn evidence stale: a live one that is a real machine. A synthetic
 * node (sim gen) shares names with others of its kind, not the machine the evidence was
 * taken on, so it never speaks for one. */
static bool node_speaks(const struct xp_node *n, unsigned flags)
{
	return node_live(n, flags) && !(n->source && strcmp(n->source, "sim") == 0);
}

static bool dev_known(const struct xp_device *d)
{
	/* A ':' in a field would make the id ambiguous (see check_id_field): such a device
	 * gets no environment rather than someone else's. */
	return known(d->vendor) && known(d->model) && known(d->driver) && !strchr(d->vendor, ':') &&
	       !strchr(d->model, ':') && !strchr(d->driver, ':') && !(d->firmware && strchr(d->firmware, ':')) &&
	       !(d->runtime && strchr(d->runtime, ':'));
}

/* An environment the inventory shows, with the first live node and device showing it:
 * eight identical accelerators on a hundred nodes are one environment, written once. */
struct shown {
	char *id;
	size_t seq; /* discovery order, so that "first" is the first node listed */
	const struct xp_node *node;
	const struct xp_device *dev;
};

static int shown_cmp(const void *a, const void *b)
{
	const struct shown *x = a, *y = b;
	int c = strcmp(x->id, y->id);
	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

static struct shown *shown_envs(const struct xp_cluster *c, unsigned flags, size_t *n)
{
	struct shown *v = NULL;
	size_t k = 0, cap = 0;
	for (size_t ni = 0; ni < c->n_nodes; ni++) {
		const struct xp_node *nd = c->nodes[ni];
		for (size_t i = 0; node_live(nd, flags) && i < nd->n_devices; i++) {
			const struct xp_device *d = &nd->devices[i];
			if (!dev_known(d))
				continue;
			xp_grow(&v, sizeof *v, k, &cap);
			v[k] = (struct shown){xp_env_id(d->vendor, d->model, d->driver, d->firmware, d->runtime), k, nd, d};
			k++;
		}
	}
	if (k)
		qsort(v, k, sizeof *v, shown_cmp);
	size_t out = 0;
	for (size_t i = 0; i < k; i++) {
		if (out && strcmp(v[out - 1].id, v[i].id) == 0)
			free(v[i].id);
		else
			v[out++] = v[i];
	}
	*n = out;
	return v;
}

static void shown_free(struct shown *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].id);
	free(v);
}

/* Upserts each shown environment; last_seen = now. */
static int sync_envs(struct xp_store *s, const struct shown *v, size_t n, time_t now, struct xp_err *err)
{
	sqlite3_stmt *ins = NULL, *upd = NULL;
	if (xp_store_prep(s, "INSERT OR IGNORE INTO environments(" ENV_COLS ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, 0, ?7, ?7)",
			  &ins, err, "recording an environment") < 0 ||
	    xp_store_prep(s,
			  "UPDATE environments SET last_seen = ?2 WHERE id = ?1 AND (last_seen IS NULL OR last_seen < ?2)",
			  &upd, err, "recording an environment") < 0) {
		sqlite3_finalize(ins);
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const struct xp_device *d = v[i].dev;
		sqlite3_reset(ins);
		xp_store_bind_text(ins, 1, v[i].id);
		xp_store_bind_text(ins, 2, d->vendor);
		xp_store_bind_text(ins, 3, d->model);
		xp_store_bind_text(ins, 4, d->driver);
		xp_store_bind_text(ins, 5, opt(d->firmware));
		xp_store_bind_text(ins, 6, opt(d->runtime));
		sqlite3_bind_int64(ins, 7, (sqlite3_int64)now);
		if (sqlite3_step(ins) != SQLITE_DONE) {
			rc = xp_store_fail(s, err, "recording an environment");
			break;
		}
		if (sqlite3_changes(s->db) == 1) {
			/* New environments are audited; sightings of known ones are not (every sync would). */
			struct xp_env e = {.id = v[i].id, .vendor = (char *)d->vendor, .model = (char *)d->model, .driver = (char *)d->driver,
					   .firmware = (char *)opt(d->firmware), .runtime = (char *)opt(d->runtime),
					   .first_seen = now, .last_seen = now};
			json_t *j = xp_env_to_json(&e);
			json_object_set_new(j, "node", xp_json_str(v[i].node->name));
			json_object_set_new(j, "source", xp_json_str(v[i].node->source));
			if (v[i].node->from_file)
				json_object_set_new(j, "file", xp_json_str(v[i].node->from_file));
			char *after = xpv_jdump(j);
			rc = xp_audit_add(s, "env.discover", v[i].id, NULL, after, err);
			free(after);
		}
		sqlite3_reset(upd);
		xp_store_bind_text(upd, 1, v[i].id);
		sqlite3_bind_int64(upd, 2, (sqlite3_int64)now);
		if (rc == 0 && sqlite3_step(upd) != SQLITE_DONE)
			rc = xp_store_fail(s, err, "recording an environment");
	}
	sqlite3_finalize(ins);
	sqlite3_finalize(upd);
	return rc;
}

/* When node n has devices of vendor+model but none with driver and firmware, the first
 * of them (what the node has now). NULL when one still matches, or when there is nothing
 * to compare with (no such device, or versions not known): staleness is a version that
 * changed, not a device that went missing. */
static const struct xp_device *changed_device(const struct xp_node *n, const char *vendor, const char *model,
					      const char *driver, const char *firmware)
{
	const struct xp_device *first = NULL;
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct xp_device *d = &n->devices[i];
		if (!known(d->driver) || !same(d->vendor, vendor) || !same(d->model, model))
			continue;
		if (same(d->driver, driver) && same(d->firmware, firmware))
			return NULL;
		if (!first)
			first = d;
	}
	return first;
}

/* "driver 535.54.03 -> 550.54.14, firmware A -> B on node7 (seen by SOURCE)": the source
 * says which view of the node did it (this machine, a replay, an agent's URL), or "(seen in
 * FILE)" for a node read from a file the user synced. */
static char *change_note(const struct xp_evidence *ev, const struct xp_device *d, const char *node,
			 const char *source, const char *file)
{
	char buf[1024] = "";
	size_t used = 0;
	if (!same(ev->driver, d->driver))
		used += (size_t)snprintf(buf, sizeof buf, "driver %s -> %s", known(ev->driver) ? ev->driver : "unknown",
					 d->driver);
	if (!same(ev->firmware, d->firmware) && used < sizeof buf)
		used += (size_t)snprintf(buf + used, sizeof buf - used, "%sfirmware %s -> %s", used ? ", " : "",
					 known(ev->firmware) ? ev->firmware : "unknown",
					 known(d->firmware) ? d->firmware : "unknown");
	if (used < sizeof buf)
		used += (size_t)snprintf(buf + used, sizeof buf - used, " on %s", node);
	if (used < sizeof buf && file)
		snprintf(buf + used, sizeof buf - used, " (seen in %s)", file);
	else if (used < sizeof buf && source && *source)
		snprintf(buf + used, sizeof buf - used, " (seen by %s)", source);
	return xp_strdup(buf);
}

static int node_cmp(const void *a, const void *b)
{
	return strcmp((*(struct xp_node *const *)a)->name, (*(struct xp_node *const *)b)->name);
}

static const struct xp_node *node_find(struct xp_node *const *sorted, size_t n, const char *name)
{
	struct xp_node key = {.name = (char *)name}, *kp = &key;
	struct xp_node *const *f = n ? bsearch(&kp, sorted, n, sizeof *sorted, node_cmp) : NULL;
	return f ? *f : NULL;
}

struct stale {
	char *kase;
	struct xp_evidence was; /* the pass that no longer holds */
	const struct xp_device *now;
	const char *source; /* the source of the node that shows the change */
	const char *file;   /* the file it was read from, NULL when live */
};

/* The current passes of environment e taken on a node in changed (sorted by name) that now
 * shows e's model with other versions, each with the device it has now; the caller frees
 * *list, also on error. */
static int stale_collect(struct xp_store *s, const struct xp_env *e, struct xp_node *const *changed, size_t n_changed,
			 struct stale **list, size_t *n, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s, "SELECT max(id), " EV_COLS ", case_name FROM results WHERE env = ? GROUP BY case_name, layer",
			  &st, err, "checking for stale results") < 0)
		return -1;
	xp_store_bind_text(st, 1, e->id);
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *status = (const char *)sqlite3_column_text(st, 2);
		const char *node = (const char *)sqlite3_column_text(st, 8);
		if (!status || strcmp(status, "pass") != 0 || !node)
			continue;
		const struct xp_node *nd = node_find(changed, n_changed, node);
		const struct xp_device *d = nd ? changed_device(nd, e->vendor, e->model,
								 (const char *)sqlite3_column_text(st, 9),
								 (const char *)sqlite3_column_text(st, 10))
					       : NULL;
		if (!d)
			continue;
		xp_grow(list, sizeof **list, *n, &cap);
		struct stale *x = &(*list)[(*n)++];
		memset(x, 0, sizeof *x);
		xpv_ev_read(st, &x->was);
		x->kase = xp_store_col_text(st, 11);
		x->now = d;
		x->source = nd->source;
		x->file = nd->from_file;
	}
	return xp_store_finish(s, st, rc, err, "checking for stale results");
}

/* Writes the stale row that replaces one collected pass, and its audit row. */
static int stale_write(struct xp_store *s, const struct xp_env *e, const struct stale *x, time_t now,
		       struct xp_err *err)
{
	char *note = change_note(&x->was, x->now, x->was.node, x->source, x->file);
	struct xp_evidence ev = {.layer = x->was.layer, .status = XP_V_STALE, .time = now, .actor = DISCOVERY,
				 .note = note, .node = x->was.node, .driver = (char *)x->now->driver,
				 .firmware = (char *)x->now->firmware};
	int rc = xpv_result_insert(s, e->id, x->kase, &ev, err) < 0
			 ? -1
			 : xpv_audit_cell(s, "validate.stale", e->id, x->kase, &x->was, &ev, err);
	free(note);
	return rc;
}

/* Marks stale the current passes of environment e taken on the nodes in changed (sorted
 * by name): nodes that show e's model with another driver or firmware. With now == 0 it
 * only counts them into *found (a read). */
static int stale_env(struct xp_store *s, const struct xp_env *e, struct xp_node *const *changed, size_t n_changed,
		     time_t now, size_t *found, struct xp_err *err)
{
	/* Collected first and written after: rows added while the scan runs could be seen by it. */
	struct stale *list = NULL;
	size_t n = 0;
	int rc = stale_collect(s, e, changed, n_changed, &list, &n, err);
	*found += n;
	for (size_t i = 0; rc == 0 && now && i < n; i++)
		rc = stale_write(s, e, &list[i], now, err);
	for (size_t i = 0; i < n; i++) {
		free(list[i].kase);
		xp_evidence_clear(&list[i].was, 1);
	}
	free(list);
	return rc;
}

/* Orders environments by vendor, then model: the ones a device could be. */
static int vm_cmp(const void *a, const void *b)
{
	const struct xp_env *x = *(const struct xp_env *const *)a, *y = *(const struct xp_env *const *)b;
	int c = strcmp(x->vendor, y->vendor);
	return c ? c : strcmp(x->model, y->model);
}

/* An environment and a node that now shows its model with other versions. */
struct pair {
	size_t env;
	const struct xp_node *node;
};

static int pair_cmp(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	if (x->env != y->env)
		return (x->env > y->env) - (x->env < y->env);
	return strcmp(x->node->name, y->node->name);
}

/* True when device i is the first on node nd of its vendor and model (known devices only):
 * each model is looked up once per node. */
static bool first_of_model(const struct xp_node *nd, size_t i)
{
	const struct xp_device *d = &nd->devices[i];
	bool first = dev_known(d);
	for (size_t j = 0; first && j < i; j++)
		first = !dev_known(&nd->devices[j]) || !same(nd->devices[j].vendor, d->vendor) ||
			!same(nd->devices[j].model, d->model);
	return first;
}

/* The first index in by (sorted with vm_cmp) of key's vendor and model; n when none. */
static size_t vm_lower(const struct xp_env *const *by, size_t n, const struct xp_env *key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (vm_cmp(&by[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Every (environment, live node) pair where the node shows the environment's vendor and
 * model with another driver or firmware, sorted by environment, then node name. */
static struct pair *changed_pairs(const struct xp_cluster *c, unsigned flags, const struct xp_env *envs,
				  size_t n_envs, size_t *n_pairs)
{
	const struct xp_env **by = xp_calloc(n_envs + 1, sizeof *by);
	for (size_t i = 0; i < n_envs; i++)
		by[i] = &envs[i];
	if (n_envs)
		qsort(by, n_envs, sizeof *by, vm_cmp);
	struct pair *pairs = NULL;
	size_t n = 0, cap = 0;
	for (size_t ni = 0; ni < c->n_nodes; ni++) {
		const struct xp_node *nd = c->nodes[ni];
		for (size_t i = 0; node_speaks(nd, flags) && i < nd->n_devices; i++) {
			if (!first_of_model(nd, i))
				continue;
			/* The first environment of this vendor and model, then each of them. */
			struct xp_env key = {.vendor = (char *)nd->devices[i].vendor, .model = (char *)nd->devices[i].model};
			const struct xp_env *kp = &key;
			for (size_t lo = vm_lower(by, n_envs, kp); lo < n_envs && vm_cmp(&by[lo], &kp) == 0; lo++) {
				const struct xp_env *e = by[lo];
				if (!changed_device(nd, e->vendor, e->model, e->driver, e->firmware))
					continue;
				xp_grow(&pairs, sizeof *pairs, n, &cap);
				pairs[n++] = (struct pair){(size_t)(e - envs), nd};
			}
		}
	}
	free(by);
	if (n)
		qsort(pairs, n, sizeof *pairs, pair_cmp);
	*n_pairs = n;
	return pairs;
}

/* Marks stale every cell layer whose current pass was taken on a live node that now has
 * a different driver or firmware for that environment's model. An environment's id holds
 * its driver and firmware, and so does its evidence; so the question "did this node
 * change under the evidence" is first asked of the environments (cheap: each node's
 * models against the environments of those models), and only the results of the
 * environments that some node changed under are read. */
static int sync_stale(struct xp_store *s, const struct xp_cluster *c, unsigned flags, time_t now, size_t *found,
		      struct xp_err *err)
{
	struct xp_env *envs;
	size_t n_envs, n_pairs;
	if (xp_validate_env_list(s, &envs, &n_envs, err) < 0)
		return -1;
	struct pair *pairs = changed_pairs(c, flags, envs, n_envs, &n_pairs);
	struct xp_node **changed = xp_calloc(n_pairs + 1, sizeof *changed);
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n_pairs;) {
		size_t k = 0, env = pairs[i].env;
		for (; i < n_pairs && pairs[i].env == env; i++)
			changed[k++] = (struct xp_node *)pairs[i].node;
		rc = stale_env(s, &envs[env], changed, k, now, found, err);
	}
	free(changed);
	free(pairs);
	xp_env_list_free(envs, n_envs);
	return rc;
}

/* Sets the discovered layer pass, for every case, on each shown environment where it is
 * not pass already; the evidence is the first node showing it. */
static int sync_discovered(struct xp_store *s, const struct shown *v, size_t n, time_t now, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s,
			  "INSERT INTO results(env, case_name, layer, status, time, actor, node, driver, firmware) "
			  "SELECT ?1, c.name, 0, 'pass', ?2, '" DISCOVERY "', ?3, ?4, ?5 FROM cases c WHERE "
			  "coalesce((SELECT r.status FROM results r WHERE r.env = ?1 AND r.case_name = c.name "
			  "AND r.layer = 0 ORDER BY r.id DESC LIMIT 1), '') <> 'pass' ORDER BY c.name",
			  &st, err, "recording discovery") < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const struct xp_device *d = v[i].dev;
		sqlite3_reset(st);
		xp_store_bind_text(st, 1, v[i].id);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)now);
		xp_store_bind_text(st, 3, v[i].node->name);
		xp_store_bind_text(st, 4, d->driver);
		xp_store_bind_text(st, 5, opt(d->firmware));
		if (sqlite3_step(st) != SQLITE_DONE) {
			rc = xp_store_fail(s, err, "recording discovery");
			break;
		}
		int k = sqlite3_changes(s->db);
		if (k > 0) {
			/* One audit row per environment and sync, not per cell: it says how many. */
			json_t *j = json_object();
			json_object_set_new(j, "layer", json_string("discovered"));
			json_object_set_new(j, "status", json_string("pass"));
			json_object_set_new(j, "node", xp_json_str(v[i].node->name));
			json_object_set_new(j, "source", xp_json_str(v[i].node->source));
			if (v[i].node->from_file)
				json_object_set_new(j, "file", xp_json_str(v[i].node->from_file));
			json_object_set_new(j, "driver", xp_json_str(d->driver));
			json_object_set_new(j, "firmware", xp_json_str(opt(d->firmware)));
			json_object_set_new(j, "cases", json_integer(k));
			char *after = xpv_jdump(j);
			rc = xp_audit_add(s, "validate.discover", v[i].id, NULL, after, err);
			free(after);
		}
	}
	sqlite3_finalize(st);
	return rc;
}

/* What a sync would write, found by reading: a shown environment not stored yet, a shown
 * one whose discovered layer is not pass for some case, a pass a node changed under. */
static int pending(struct xp_store *s, const struct xp_cluster *c, unsigned flags, const struct shown *v, size_t n,
		   struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s,
			  "SELECT (SELECT count(*) FROM environments WHERE id = ?1) = 0 OR EXISTS (SELECT 1 FROM "
			  "cases c WHERE coalesce((SELECT r.status FROM results r WHERE r.env = ?1 AND "
			  "r.case_name = c.name AND r.layer = 0 ORDER BY r.id DESC LIMIT 1), '') <> 'pass')",
			  &st, err, "comparing with discovery") < 0)
		return -1;
	int found = 0;
	for (size_t i = 0; !found && i < n; i++) {
		sqlite3_reset(st);
		xp_store_bind_text(st, 1, v[i].id);
		int rc = sqlite3_step(st);
		if (rc != SQLITE_ROW) {
			sqlite3_finalize(st);
			return xp_store_fail(s, err, "comparing with discovery");
		}
		found = sqlite3_column_int(st, 0) != 0;
	}
	sqlite3_finalize(st);
	size_t stale = 0;
	if (!found && sync_stale(s, c, flags, 0, &stale, err) < 0)
		return -1;
	return found || stale;
}

int xp_validate_sync_pending(struct xp_store *s, const struct xp_cluster *c, unsigned flags, struct xp_err *err)
{
	size_t n;
	struct shown *v = shown_envs(c, flags, &n);
	int rc = pending(s, c, flags, v, n, err);
	shown_free(v, n);
	return rc;
}

int xp_validate_sync(struct xp_store *s, const struct xp_cluster *c, time_t now, unsigned flags, struct xp_err *err)
{
	size_t n;
	struct shown *v = shown_envs(c, flags, &n);
	/* Nothing new: no transaction, no row, not even last_seen. A console refreshing an
	 * unchanged cluster, or a cron job asking for the matrix, never writes. */
	int p = pending(s, c, flags, v, n, err);
	if (p <= 0) {
		shown_free(v, n);
		return p;
	}
	bool nested;
	if (xpv_tx_begin(s, &nested, err) < 0) {
		shown_free(v, n);
		return -1;
	}
	/* Staleness before discovery: when an environment's evidence node changed but another
	 * node still has it, the discovered layer turns stale and then pass again on the other
	 * node in the same sync, and the history says both. */
	size_t stale = 0;
	int rc = sync_envs(s, v, n, now, err);
	if (rc == 0)
		rc = sync_stale(s, c, flags, now, &stale, err);
	if (rc == 0)
		rc = sync_discovered(s, v, n, now, err);
	shown_free(v, n);
	if (rc < 0) {
		xpv_tx_rollback(s, nested);
		return -1;
	}
	return xpv_tx_commit(s, nested, err);
}
