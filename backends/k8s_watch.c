/* k8s_watch.c: Nodes and Pods kept across refreshes, changed by watch events. */
#include "k8s_watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "k8s_nodes.h"

/* Most objects of one kind kept: ten times the 50,000 Pods of the benchmark; a server that
 * adds more is not one to follow. */
#define MAX_KEPT 500000

struct kept {
	json_t *objs; /* key -> trimmed object, in the order they came */
	char *rv;     /* where the next watch goes on from */
};

static const struct {
	const char *path, *query, *kind;
	xp_k8s_trim_fn *trim;
	const struct xp_k8s_keep *keep; /* what the list decodes of each: what trim keeps */
} kinds[2] = {
	{"/api/v1/nodes", NULL, "Node", xp_k8s_trim_node, xp_k8s_node_keep},
	{"/api/v1/pods", XP_K8S_POD_QUERY, "Pod", xp_k8s_trim_pod, xp_k8s_pod_keep},
};

struct xp_k8s_watch {
	struct xp_k8s_client *cl;
	struct xp_k8s_watch_opts wo;
	struct kept kept[2];
	bool listed;       /* kept holds a list's objects and versions: a watch can go on */
	uint64_t changes;  /* objects changed so far */
	struct xp_k8s_watch_health h;
};

struct xp_k8s_watch *xp_k8s_watch_new(struct xp_k8s_client *cl, const struct xp_k8s_watch_opts *wo)
{
	struct xp_k8s_watch *w = xp_calloc(1, sizeof *w);
	w->cl = cl;
	if (wo)
		w->wo = *wo;
	for (int k = 0; k < 2; k++)
		w->kept[k].objs = json_object();
	return w;
}

static void kept_clear(struct kept *k)
{
	json_object_clear(k->objs);
	free(k->rv);
	k->rv = NULL;
}

void xp_k8s_watch_free(struct xp_k8s_watch *w)
{
	if (!w)
		return;
	for (int k = 0; k < 2; k++) {
		kept_clear(&w->kept[k]);
		json_decref(w->kept[k].objs);
	}
	xp_k8s_client_free(w->cl);
	free(w);
}

/* The key an object is kept by (caller frees): its name, and for a Pod its namespace first. */
static char *key_of(enum xp_k8s_kind kind, json_t *md)
{
	const char *name = json_string_value(json_object_get(md, "name"));
	if (!name || !*name)
		return NULL;
	if (kind == XP_K8S_NODES)
		return xp_strdup(name);
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	return xp_asprintf("%s/%s", ns && *ns ? ns : "default", name);
}

int xp_k8s_watch_event(struct xp_k8s_watch *w, enum xp_k8s_kind kind, const char *type, json_t *obj,
		       struct xp_err *err)
{
	struct kept *k = &w->kept[kind];
	const char *path = kinds[kind].path;
	json_t *md = json_object_get(obj, "metadata");
	/* Read before the trim, which keeps of metadata only what the model reads. */
	const char *rv = json_string_value(json_object_get(md, "resourceVersion"));
	if (!rv || !*rv)
		return xp_errf(err, "GET %s (watch): a %.10s event without metadata.resourceVersion", path, type);
	if (strcmp(type, "BOOKMARK") != 0) {
		const char *ok = json_string_value(json_object_get(obj, "kind"));
		if (ok && strcmp(ok, kinds[kind].kind))
			return xp_errf(err, "GET %s (watch): a %.10s event of another kind", path, type);
		char *key = key_of(kind, md);
		if (!key)
			return xp_errf(err, "GET %s (watch): a %.10s event without metadata.name", path, type);
		bool had = json_object_get(k->objs, key) != NULL;
		if (!strcmp(type, "DELETED")) {
			if (had)
				json_object_del(k->objs, key), w->changes++;
		} else if (!had && json_object_size(k->objs) >= MAX_KEPT) {
			free(key);
			return xp_errf(err, "GET %s (watch): more than %d objects", path, MAX_KEPT);
		} else {
			char *nrv = xp_strdup(rv); /* rv points into obj, which the trim cuts */
			json_incref(obj);
			if (kinds[kind].trim(obj))
				json_object_set_new(k->objs, key, obj), w->changes++;
			else {
				/* A Pod that no longer holds an accelerator (finished, unbound) is not kept. */
				json_decref(obj);
				if (had)
					json_object_del(k->objs, key), w->changes++;
			}
			free(k->rv);
			k->rv = nrv;
			free(key);
			return 0;
		}
		free(key);
	}
	free(k->rv);
	k->rv = xp_strdup(rv);
	return 0;
}

struct ev_arg {
	struct xp_k8s_watch *w;
	enum xp_k8s_kind kind;
};

static int on_event(void *arg, const char *type, json_t *obj, struct xp_err *err)
{
	struct ev_arg *a = arg;
	return xp_k8s_watch_event(a->w, a->kind, type, obj, err);
}

/* Lists both kinds into fresh kept sets; the old ones are replaced only when both listed. */
static int relist(struct xp_k8s_watch *w, struct xp_err *err)
{
	json_t *items[2] = {NULL, NULL};
	char *rv[2] = {NULL, NULL};
	int rc = 0;
	for (int k = 0; k < 2 && rc == 0; k++) {
		xp_k8s_client_trim(w->cl, kinds[k].trim);
		xp_k8s_client_keep(w->cl, kinds[k].keep);
		items[k] = xp_k8s_list_rv(w->cl, kinds[k].path, kinds[k].query, &rv[k], err);
		w->h.lists++;
		if (!items[k])
			rc = -1;
	}
	xp_k8s_client_trim(w->cl, NULL);
	xp_k8s_client_keep(w->cl, NULL);
	for (int k = 0; k < 2 && rc == 0; k++) {
		struct kept *kp = &w->kept[k];
		kept_clear(kp);
		kp->rv = rv[k];
		rv[k] = NULL;
		size_t i;
		json_t *o;
		json_array_foreach(items[k], i, o) {
			char *key = key_of((enum xp_k8s_kind)k, json_object_get(o, "metadata"));
			if (key && json_object_size(kp->objs) < MAX_KEPT)
				json_object_set(kp->objs, key, o);
			free(key);
		}
	}
	for (int k = 0; k < 2; k++) {
		json_decref(items[k]);
		free(rv[k]);
	}
	if (rc == 0) {
		w->listed = true;
		w->changes++;
	}
	return rc;
}

int xp_k8s_watch_poll(struct xp_k8s_watch *w, bool *changed, struct xp_err *err)
{
	*changed = false;
	uint64_t before = w->changes;
	char why[sizeof w->h.state] = "";
	if (w->listed) {
		int rc = 0;
		for (int k = 0; k < 2 && rc == 0; k++) {
			struct ev_arg a = {w, (enum xp_k8s_kind)k};
			rc = xp_k8s_watch(w->cl, kinds[k].path, kinds[k].query, w->kept[k].rv, &w->wo, on_event, &a, err);
			w->h.watches++;
		}
		*changed = w->changes != before;
		if (rc == 0) {
			w->h.ok = true;
			w->h.read = time(NULL);
			w->h.error[0] = '\0';
			snprintf(w->h.state, sizeof w->h.state, "watching");
			return 0;
		}
		if (w->wo.cancel && atomic_load(w->wo.cancel))
			return -1; /* the console is leaving: nothing is wrong with the watch */
		/* The events before the failure were applied, but what follows cannot be trusted
		 * to join them: list again, now. */
		if (rc == XP_K8S_GONE)
			snprintf(why, sizeof why, "re-listed after 410 Gone");
		else
			snprintf(why, sizeof why, "watch failed: %.200s; re-listed", err->msg);
		w->listed = false;
	}
	if (relist(w, err) < 0) {
		w->h.ok = false;
		snprintf(w->h.error, sizeof w->h.error, "%.500s", err->msg);
		if (why[0])
			snprintf(w->h.state, sizeof w->h.state, "%s", why);
		*changed = w->changes != before;
		return -1;
	}
	time_t now = time(NULL);
	w->h.ok = true;
	w->h.error[0] = '\0';
	w->h.listed = w->h.read = now;
	snprintf(w->h.state, sizeof w->h.state, "%s", why[0] ? why : "listed");
	*changed = true;
	return 0;
}

struct xp_cluster *xp_k8s_watch_cluster(struct xp_k8s_watch *w, struct xp_err *err)
{
	if (!w->h.listed)
		return (void)xp_errf(err, "the Kubernetes cluster is not listed yet"), NULL;
	json_t *arr[2];
	for (int k = 0; k < 2; k++) {
		arr[k] = json_array();
		const char *key;
		json_t *o;
		json_object_foreach(w->kept[k].objs, key, o) json_array_append(arr[k], o);
	}
	char *src = xp_asprintf("k8s:%s", xp_k8s_client_conf(w->cl)->server);
	struct xp_cluster *c = xp_k8s_build(arr[0], arr[1], src, err);
	free(src);
	json_decref(arr[0]);
	json_decref(arr[1]);
	return c;
}

void xp_k8s_watch_health(const struct xp_k8s_watch *w, struct xp_k8s_watch_health *h)
{
	*h = w->h;
}

size_t xp_k8s_watch_count(const struct xp_k8s_watch *w, enum xp_k8s_kind kind)
{
	return json_object_size(w->kept[kind].objs);
}

const char *xp_k8s_watch_rv(const struct xp_k8s_watch *w, enum xp_k8s_kind kind)
{
	return w->kept[kind].rv;
}
