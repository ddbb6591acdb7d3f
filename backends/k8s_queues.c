/* k8s_queues.c: Volcano and Kueue objects into queues, quotas and jobs. */
#include "k8s_queues.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format.h"
#include "jobspec.h"
#include "k8s_nodes.h"

/* A job without a time limit runs for a year: longer than any horizon (as Slurm's UNLIMITED). */
#define NO_LIMIT_S (365LL * 86400)

/* "Queue default", "Workload ns/name": how errors name an object. */
static void who(json_t *o, const char *kind, size_t ix, char *buf, size_t len)
{
	json_t *md = json_object_get(o, "metadata");
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	const char *name = json_string_value(json_object_get(md, "name"));
	if (!name)
		snprintf(buf, len, "%s #%zu", kind, ix + 1);
	else if (ns)
		snprintf(buf, len, "%s %.100s/%.200s", kind, ns, name);
	else
		snprintf(buf, len, "%s %.200s", kind, name);
}

/* A quantity given as a JSON string ("36Gi") or number (9); -1 when it is neither. */
static int quantity(json_t *v, double *out)
{
	if (json_is_number(v)) {
		*out = json_number_value(v);
		return *out >= 0 ? 0 : -1;
	}
	if (json_is_string(v) && xp_k8s_quantity(json_string_value(v), out) == 0 && *out >= 0)
		return 0;
	return -1;
}

/* An optional string field: NULL when absent or null; -1 when it is something else. */
static int opt_string(json_t *o, const char *key, const char **out)
{
	json_t *v = json_object_get(o, key);
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return -1;
	*out = json_string_value(v);
	return 0;
}

/* Which class and resource a Kubernetes resource name counts, and its milli-units per unit:
 * cpu (cores), memory (bytes into GiB) and accelerators; 0 for the rest (pods, storage,
 * a HAMi memory or core share: not in the quota model). flavor names a Kueue flavor's class;
 * NULL names the class after the resource (Volcano). */
static int resource_of(const char *name, const char *flavor, char *cls, size_t len, int *res, double *scale)
{
	if (strcmp(name, "cpu") == 0) {
		snprintf(cls, len, "cpu");
		*res = XP_RES_CPUS;
		*scale = 1000;
		return 1;
	}
	if (strcmp(name, "memory") == 0) {
		snprintf(cls, len, "mem");
		*res = XP_RES_MEMORY;
		*scale = 1000.0 / 1073741824.0;
		return 1;
	}
	if (!xp_k8s_resource_vendor(name))
		return 0;
	snprintf(cls, len, "%s", flavor ? flavor : name);
	for (char *p = cls; *p; p++)
		if (*p == '/')
			*p = '_';
	*res = XP_RES_DEVICES;
	*scale = 1000;
	return 1;
}

static int64_t milli(double v, double scale)
{
	double m = v * scale;
	if (m > (double)XP_QUOTA_MAX_UNITS * 1000)
		m = (double)XP_QUOTA_MAX_UNITS * 1000;
	return (int64_t)llround(m);
}

/* The class called name, added when new (vendor: the resource's, for a device class). */
static void class_add(struct xp_qset *set, const char *name, const char *resource)
{
	if (xp_qset_class(set, name))
		return;
	set->classes = xp_realloc(set->classes, (set->n_classes + 1) * sizeof *set->classes);
	struct xp_rclass *c = &set->classes[set->n_classes++];
	*c = (struct xp_rclass){.name = xp_strdup(name)};
	if (strcmp(name, "cpu") == 0 || strcmp(name, "mem") == 0)
		c->builtin = true;
	else if (resource && xp_k8s_resource_vendor(resource))
		c->vendor = xp_strdup(xp_k8s_resource_vendor(resource));
}

static int64_t add_limit(int64_t a, int64_t b)
{
	return a == XP_UNLIMITED || b == XP_UNLIMITED ? XP_UNLIMITED : a + b;
}

/* Adds a quota to q, summed into one already there for the same class and resource (several
 * Kueue flavors of cpu all count CPUs). */
static void quota_add(struct xp_queue *q, const char *cls, int res, int64_t g, int64_t d, int64_t m, int64_t b,
		      int64_t l)
{
	for (size_t i = 0; i < q->n_quotas; i++) {
		struct xp_quota *x = &q->quotas[i];
		if (x->res == res && strcmp(x->rclass, cls) == 0) {
			x->guaranteed += g;
			x->deserved += d;
			x->max = add_limit(x->max, m);
			x->borrowing_limit = add_limit(x->borrowing_limit, b);
			x->lending_limit = add_limit(x->lending_limit, l);
			return;
		}
	}
	q->quotas = xp_realloc(q->quotas, (q->n_quotas + 1) * sizeof *q->quotas);
	q->quotas[q->n_quotas++] = (struct xp_quota){.rclass = xp_strdup(cls), .res = res, .guaranteed = g,
						     .deserved = d, .max = m, .borrowing_limit = b, .lending_limit = l};
}

/* A new queue called name at the end of set (weight 1, open, reclaimable). */
static struct xp_queue *queue_add(struct xp_qset *set, const char *name)
{
	set->queues = xp_realloc(set->queues, (set->n_queues + 1) * sizeof *set->queues);
	struct xp_queue *q = &set->queues[set->n_queues++];
	*q = (struct xp_queue){.name = xp_strdup(name), .weight = 1, .reclaimable = true};
	return q;
}

/* metadata.name as a queue name: present and one the model accepts. */
static const char *object_name(json_t *o, const char *what, struct xp_err *err)
{
	const char *name = NULL;
	if (opt_string(json_object_get(o, "metadata"), "name", &name) < 0 || !name) {
		xp_errf(err, "metadata.name: missing or not a string");
		return NULL;
	}
	if (what && xp_qname_check(name, what, err) < 0)
		return NULL;
	return name;
}

/* ---- Volcano Queue ---- */

/* The resources of one map (spec.capability, spec.deserved, spec.guarantee.resource) into
 * milli-units per class and resource: vals[i] for names[i], added when new. */
struct rlist {
	char cls[64][80];
	int res[64];
	const char *resource[64];
	int64_t v[3][64];
	bool set[3][64];
	size_t n;
};

static int rmap(json_t *map, int which, struct rlist *rl, const char *field, struct xp_err *err)
{
	if (!map || json_is_null(map))
		return 0;
	if (!json_is_object(map))
		return xp_errf(err, "%s: not an object", field);
	const char *key;
	json_t *val;
	json_object_foreach(map, key, val) {
		double v;
		if (quantity(val, &v) < 0)
			return xp_errf(err, "%s.%.100s: not a quantity", field, key);
		char cls[80];
		int res;
		double scale;
		if (!resource_of(key, NULL, cls, sizeof cls, &res, &scale))
			continue;
		size_t i = 0;
		while (i < rl->n && !(rl->res[i] == res && strcmp(rl->cls[i], cls) == 0))
			i++;
		if (i == rl->n) {
			if (rl->n == 64)
				return xp_errf(err, "%s: more than 64 resources", field);
			snprintf(rl->cls[i], sizeof rl->cls[i], "%s", cls);
			rl->res[i] = res;
			rl->resource[i] = key;
			rl->n++;
		}
		rl->v[which][i] = milli(v, scale);
		rl->set[which][i] = true;
	}
	return 0;
}

/* Splits "a/b/c" at '/' into at most 16 parts (in buf); the count, or -1 on an empty part. */
static int split_path(const char *s, char *buf, size_t len, char **parts)
{
	snprintf(buf, len, "%s", s);
	int n = 0;
	for (char *p = buf; n < 16;) {
		parts[n++] = p;
		char *slash = strchr(p, '/');
		if (!slash)
			break;
		*slash = '\0';
		p = slash + 1;
	}
	for (int i = 0; i < n; i++)
		if (!*parts[i])
			return -1;
	return n;
}

/* The queues a Volcano hierarchy annotation names above a queue ("root/eng/prod": root and
 * root-eng, each named by its path joined with '-'), added when missing with the weight
 * hierarchy-weights gives each level; the queue's parent and own weight in *parent, *weight. */
static int hierarchy(struct xp_qset *set, const char *path, const char *weights, char **parent, double *weight,
		     struct xp_err *err)
{
	char pb[512], wb[512];
	char *p[16], *w[16];
	int n = split_path(path, pb, sizeof pb, p), nw = weights ? split_path(weights, wb, sizeof wb, w) : 0;
	if (n < 1)
		return xp_errf(err, "metadata.annotations[volcano.sh/hierarchy]: '%.100s' is not a path", path);
	if (weights && nw != n)
		return xp_errf(err, "metadata.annotations[volcano.sh/hierarchy-weights]: '%.100s' does not give one weight per level of '%.100s'",
			       weights, path);
	double wv[16];
	for (int i = 0; i < nw; i++) {
		char *end;
		wv[i] = strtod(w[i], &end);
		if (*end || !(wv[i] > 0))
			return xp_errf(err, "metadata.annotations[volcano.sh/hierarchy-weights]: '%.100s' is not a positive number", w[i]);
	}
	char name[512] = "", up[512] = "";
	for (int i = 0; i < n - 1; i++) {
		snprintf(name + strlen(name), sizeof name - strlen(name), "%s%s", i ? "-" : "", p[i]);
		if (xp_qname_check(name, "metadata.annotations[volcano.sh/hierarchy]", err) < 0)
			return -1;
		if (!xp_qset_queue(set, name)) {
			struct xp_queue *q = queue_add(set, name);
			q->parent = i ? xp_strdup(up) : NULL;
			if (nw)
				q->weight = wv[i];
		}
		snprintf(up, sizeof up, "%s", name);
	}
	*parent = n > 1 ? xp_strdup(up) : NULL;
	if (nw)
		*weight = wv[n - 1];
	return 0;
}

static int volcano_queue(struct xp_qset *set, json_t *o, struct xp_err *err)
{
	const char *name = object_name(o, "metadata.name", err);
	if (!name)
		return -1;
	if (xp_qset_queue(set, name))
		return xp_errf(err, "metadata.name: a queue called %s was listed already", name);
	json_t *spec = json_object_get(o, "spec");
	if (spec && !json_is_object(spec))
		return xp_errf(err, "spec: not an object");
	json_t *w = json_object_get(spec, "weight");
	double weight = 1;
	if (w && (!json_is_integer(w) || json_integer_value(w) <= 0))
		return xp_errf(err, "spec.weight: not a positive integer");
	if (w)
		weight = (double)json_integer_value(w);
	json_t *rc = json_object_get(spec, "reclaimable");
	if (rc && !json_is_null(rc) && !json_is_boolean(rc))
		return xp_errf(err, "spec.reclaimable: not a boolean");
	const char *parent = NULL, *state = NULL;
	if (opt_string(spec, "parent", &parent) < 0)
		return xp_errf(err, "spec.parent: not a string");
	if (parent && *parent && xp_qname_check(parent, "spec.parent", err) < 0)
		return -1;
	if (opt_string(json_object_get(o, "status"), "state", &state) < 0)
		return xp_errf(err, "status.state: not a string");
	int st = XP_QS_OPEN;
	if (state && (strcmp(state, "Closed") == 0 || strcmp(state, "Closing") == 0))
		st = XP_QS_HOLD; /* closed: admits nothing new, keeps what runs */
	else if (state && strcmp(state, "Open") && strcmp(state, "Unknown") && *state)
		return xp_errf(err, "status.state: '%.40s' is not Open, Closed, Closing or Unknown", state);
	struct rlist rl = {.n = 0};
	if (rmap(json_object_get(json_object_get(spec, "guarantee"), "resource"), 0, &rl, "spec.guarantee.resource", err) < 0 ||
	    rmap(json_object_get(spec, "deserved"), 1, &rl, "spec.deserved", err) < 0 ||
	    rmap(json_object_get(spec, "capability"), 2, &rl, "spec.capability", err) < 0)
		return -1;
	/* The hierarchy annotation (hdrf) when no spec.parent names one. */
	json_t *ann = json_object_get(json_object_get(o, "metadata"), "annotations");
	const char *hpath = json_string_value(json_object_get(ann, "volcano.sh/hierarchy"));
	const char *hweights = json_string_value(json_object_get(ann, "volcano.sh/hierarchy-weights"));
	char *hparent = NULL;
	if ((!parent || !*parent) && hpath && hierarchy(set, hpath, hweights, &hparent, &weight, err) < 0)
		return -1;
	struct xp_queue *q = queue_add(set, name);
	q->weight = weight;
	q->reclaimable = !json_is_false(rc);
	q->state = st;
	q->parent = parent && *parent ? xp_strdup(parent) : hparent;
	if (q->parent != hparent)
		free(hparent);
	for (size_t i = 0; i < rl.n; i++) {
		/* Deserved absent: the guarantee (what is above it may be reclaimed); capability
		 * absent: no limit; the guarantee is never lent (lend = deserved - guaranteed). */
		int64_t g = rl.set[0][i] ? rl.v[0][i] : 0;
		int64_t d = rl.set[1][i] ? rl.v[1][i] : g;
		int64_t m = rl.set[2][i] ? rl.v[2][i] : XP_UNLIMITED;
		class_add(set, rl.cls[i], rl.resource[i]);
		quota_add(q, rl.cls[i], rl.res[i], g, d, m, XP_UNLIMITED, d >= g ? d - g : 0);
		if (xp_quota_check(&q->quotas[q->n_quotas - 1], xp_qset_class(set, rl.cls[i]), err) < 0) {
			xp_err_prefix(err, "spec (%s)", rl.resource[i]);
			return -1;
		}
	}
	return 0;
}

/* ---- Kueue ClusterQueue ---- */

static int enum_of(const char *v, const char *const *names, const int *values, size_t n, int dflt)
{
	if (!v)
		return dflt;
	for (size_t i = 0; i < n; i++)
		if (strcmp(v, names[i]) == 0)
			return values[i];
	return -1;
}

static int kueue_cq(struct xp_qset *set, json_t *o, struct xp_err *err)
{
	const char *name = object_name(o, "metadata.name", err);
	if (!name)
		return -1;
	if (xp_qset_queue(set, name))
		return xp_errf(err, "metadata.name: a queue called %s was listed already (a Volcano Queue?)", name);
	json_t *spec = json_object_get(o, "spec");
	if (spec && !json_is_object(spec))
		return xp_errf(err, "spec: not an object");
	const char *cohort = NULL, *qs = NULL, *stop = NULL, *within = NULL, *reclaim = NULL;
	/* v1beta2 calls it cohortName, v1beta1 cohort. */
	if (opt_string(spec, "cohortName", &cohort) < 0 || (!cohort && opt_string(spec, "cohort", &cohort) < 0))
		return xp_errf(err, "spec.cohortName: not a string");
	if (cohort && *cohort && xp_qname_check(cohort, "spec.cohortName", err) < 0)
		return -1;
	if (cohort && !*cohort)
		cohort = NULL;
	json_t *pre = json_object_get(spec, "preemption");
	if (opt_string(spec, "queueingStrategy", &qs) < 0 || opt_string(spec, "stopPolicy", &stop) < 0 ||
	    opt_string(pre, "withinClusterQueue", &within) < 0 || opt_string(pre, "reclaimWithinCohort", &reclaim) < 0)
		return xp_errf(err, "spec: queueingStrategy, stopPolicy or a preemption policy is not a string");
	static const char *const qn[] = {"BestEffortFIFO", "StrictFIFO"}, *const sn[] = {"None", "Hold", "HoldAndDrain"},
				 *const wn[] = {"Never", "LowerPriority", "LowerOrNewerEqualPriority"},
				 *const rn[] = {"Never", "LowerPriority", "Any"};
	static const int qv[] = {XP_QO_BEST_EFFORT, XP_QO_STRICT}, sv[] = {XP_QS_OPEN, XP_QS_HOLD, XP_QS_DRAIN},
			 wv[] = {XP_QP_NEVER, XP_QP_LOWER_PRIORITY, XP_QP_LOWER_OR_NEWER},
			 rv[] = {XP_QP_NEVER, XP_QP_LOWER_PRIORITY, XP_QP_ANY};
	int order = enum_of(qs, qn, qv, 2, XP_QO_BEST_EFFORT), state = enum_of(stop, sn, sv, 3, XP_QS_OPEN);
	int wi = enum_of(within, wn, wv, 3, XP_QP_NEVER), re = enum_of(reclaim, rn, rv, 3, XP_QP_NEVER);
	if (order < 0)
		return xp_errf(err, "spec.queueingStrategy: '%.40s' is not StrictFIFO or BestEffortFIFO", qs);
	if (state < 0)
		return xp_errf(err, "spec.stopPolicy: '%.40s' is not None, Hold or HoldAndDrain", stop);
	if (wi < 0)
		return xp_errf(err, "spec.preemption.withinClusterQueue: '%.40s' is not a policy", within);
	if (re < 0)
		return xp_errf(err, "spec.preemption.reclaimWithinCohort: '%.40s' is not a policy", reclaim);
	double weight = 1;
	json_t *fw = json_object_get(json_object_get(spec, "fairSharing"), "weight");
	if (fw && quantity(fw, &weight) < 0)
		return xp_errf(err, "spec.fairSharing.weight: not a quantity");
	json_t *groups = json_object_get(spec, "resourceGroups");
	if (groups && !json_is_array(groups))
		return xp_errf(err, "spec.resourceGroups: not an array");
	struct xp_queue *q = queue_add(set, name);
	q->parent = cohort ? xp_strdup(cohort) : NULL;
	q->order = order;
	q->state = state;
	q->within = wi;
	q->reclaim = re;
	q->weight = weight;
	size_t gi, fi, ri;
	json_t *g, *f, *r;
	json_array_foreach(groups, gi, g) {
		json_t *flavors = json_object_get(g, "flavors");
		if (!json_is_array(flavors))
			return xp_errf(err, "spec.resourceGroups[%zu].flavors: not an array", gi);
		json_array_foreach(flavors, fi, f) {
			const char *fname = NULL;
			json_t *rs = json_object_get(f, "resources");
			if (opt_string(f, "name", &fname) < 0 || !fname || xp_qname_check(fname, "flavor name", err) < 0)
				return xp_errf(err, "spec.resourceGroups[%zu].flavors[%zu].name: missing or not a flavor name", gi, fi);
			if (!json_is_array(rs))
				return xp_errf(err, "spec.resourceGroups[%zu].flavors[%zu].resources: not an array", gi, fi);
			json_array_foreach(rs, ri, r) {
				const char *rname = NULL;
				if (opt_string(r, "name", &rname) < 0 || !rname)
					return xp_errf(err, "spec.resourceGroups[%zu].flavors[%zu].resources[%zu].name: missing",
						       gi, fi, ri);
				double nom, bl = -1, ll = -1;
				json_t *bj = json_object_get(r, "borrowingLimit"), *lj = json_object_get(r, "lendingLimit");
				const char *bad = quantity(json_object_get(r, "nominalQuota"), &nom) < 0 ? "nominalQuota"
						  : bj && !json_is_null(bj) && quantity(bj, &bl) < 0 ? "borrowingLimit"
						  : lj && !json_is_null(lj) && quantity(lj, &ll) < 0 ? "lendingLimit"
												       : NULL;
				if (bad)
					return xp_errf(err, "spec.resourceGroups[%zu].flavors[%zu].resources[%zu].%s: not a quantity",
						       gi, fi, ri, bad);
				char cls[80];
				int res;
				double scale;
				if (!resource_of(rname, fname, cls, sizeof cls, &res, &scale))
					continue;
				int64_t d = milli(nom, scale), g0, m, b, l;
				if (!cohort) {
					/* Outside a cohort nothing is borrowed or lent: the nominal quota is all. */
					g0 = m = d;
					b = l = 0;
				} else {
					b = bl < 0 ? XP_UNLIMITED : milli(bl, scale);
					l = ll < 0 ? XP_UNLIMITED : milli(ll, scale);
					m = b == XP_UNLIMITED ? XP_UNLIMITED : d + b;
					g0 = l == XP_UNLIMITED ? 0 : d - l;
				}
				class_add(set, cls, rname);
				struct xp_quota one = {.rclass = cls, .res = res, .guaranteed = g0, .deserved = d, .max = m,
						       .borrowing_limit = b, .lending_limit = l};
				if (g0 < 0 || xp_quota_check(&one, xp_qset_class(set, cls), err) < 0) {
					if (g0 < 0)
						xp_errf(err, "lendingLimit is above nominalQuota");
					xp_err_prefix(err, "spec.resourceGroups[%zu].flavors[%zu].resources[%zu]", gi, fi, ri);
					return -1;
				}
				quota_add(q, cls, res, g0, d, m, b, l);
			}
		}
	}
	return 0;
}

/* ---- jobs ---- */

/* Accelerators, CPUs and host memory one pod template asks (requests, else limits). */
static int pod_asks(json_t *tmpl, struct xp_task_group *g, const char *field, struct xp_err *err)
{
	json_t *cs = json_object_get(json_object_get(tmpl, "spec"), "containers");
	if (cs && !json_is_array(cs))
		return xp_errf(err, "%s.spec.containers: not an array", field);
	size_t i;
	json_t *c;
	double cpus = 0, mem = 0;
	json_array_foreach(cs, i, c) {
		json_t *res = json_object_get(c, "resources");
		json_t *req = json_object_get(res, "requests"), *lim = json_object_get(res, "limits");
		const char *key;
		json_t *val;
		/* A limit alone is the request too (extended resources must have both equal). */
		json_t *m = json_object();
		if (json_is_object(lim))
			json_object_update(m, lim);
		if (json_is_object(req))
			json_object_update(m, req);
		json_object_foreach(m, key, val) {
			double v;
			if (quantity(val, &v) < 0) {
				/* key lives in m: the message first. */
				xp_errf(err, "%s.spec.containers[%zu].resources: %.100s is not a quantity", field, i, key);
				json_decref(m);
				return -1;
			}
			const char *vendor = xp_k8s_resource_vendor(key);
			if (strcmp(key, "cpu") == 0)
				cpus += v;
			else if (strcmp(key, "memory") == 0)
				mem += v;
			else if (vendor) {
				if (v > XP_MAX_DEVICES * 1000.0) {
					xp_errf(err, "%s.spec.containers[%zu].resources: %.100s: not a device count", field, i,
						key);
					json_decref(m);
					return -1;
				}
				g->devices += (int)ceil(v);
				if (!g->vendor)
					g->vendor = xp_strdup(vendor);
			}
		}
		json_decref(m);
	}
	if (cpus > INT_MAX)
		return xp_errf(err, "%s.spec.containers: more CPUs than can be counted", field);
	g->cpus = (int)ceil(cpus);
	g->host_memory_mib = (int64_t)ceil(mem / 1048576.0);
	return 0;
}

/* metadata.creationTimestamp in epoch seconds; 0 when absent or not RFC 3339 UTC. */
static int64_t created(json_t *o)
{
	const char *t = json_string_value(json_object_get(json_object_get(o, "metadata"), "creationTimestamp"));
	struct tm tm = {0};
	if (!t || sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
			 &tm.tm_sec) != 6)
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm);
}

static struct xp_qjob *job_add(struct xp_qjob **jobs, size_t *n, json_t *o, const char *queue)
{
	*jobs = xp_realloc(*jobs, (*n + 1) * sizeof **jobs);
	struct xp_qjob *j = &(*jobs)[(*n)++];
	json_t *md = json_object_get(o, "metadata");
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	const char *name = json_string_value(json_object_get(md, "name"));
	*j = (struct xp_qjob){.id = (int64_t)*n, .est_s = NO_LIMIT_S, .actual_s = -1, .start = -1, .end = -1, .eta = -1};
	j->alloc.commit = -1;
	j->name = xp_asprintf("%s/%s", ns ? ns : "default", name);
	j->queue = xp_strdup(queue);
	j->tenant = ns ? xp_strdup(ns) : NULL;
	j->submit = created(o);
	j->spec = xp_calloc(1, sizeof *j->spec);
	j->spec->kind = XP_JOB_BATCH;
	j->spec->form = XP_JOB_FORM_FLAGS;
	j->spec->queue = xp_strdup(queue);
	j->spec->tenant = j->tenant ? xp_strdup(j->tenant) : NULL;
	return j;
}

static struct xp_task_group *group_add(struct xp_job *s)
{
	s->groups = xp_realloc(s->groups, (s->n_groups + 1) * sizeof *s->groups);
	struct xp_task_group *g = &s->groups[s->n_groups++];
	*g = (struct xp_task_group){.replicas = 1, .gang_min = 1, .validated_layer = -1};
	return g;
}

/* The condition of type type in status.conditions, or NULL; -1 when conditions is malformed. */
static int condition(json_t *o, const char *type, json_t **out)
{
	*out = NULL;
	json_t *cs = json_object_get(json_object_get(o, "status"), "conditions");
	if (cs && !json_is_array(cs))
		return -1;
	size_t i;
	json_t *c;
	json_array_foreach(cs, i, c) {
		if (!json_is_object(c))
			return -1;
		const char *t = json_string_value(json_object_get(c, "type"));
		if (t && strcmp(t, type) == 0)
			*out = c; /* the last one of the type wins: Volcano appends */
	}
	return 0;
}

static bool cond_true(json_t *c)
{
	const char *s = json_string_value(json_object_get(c, "status"));
	return s && strcmp(s, "True") == 0;
}

static char *cond_text(json_t *c)
{
	const char *m = json_string_value(json_object_get(c, "message"));
	const char *r = json_string_value(json_object_get(c, "reason"));
	const char *t = m && *m ? m : r;
	if (!t)
		return NULL;
	char *s = xp_strndup(t, 1024);
	xp_mask_controls(s);
	return s;
}

static int podgroup(json_t *o, struct xp_qjob **jobs, size_t *n, struct xp_err *err)
{
	if (!object_name(o, NULL, err))
		return -1;
	json_t *spec = json_object_get(o, "spec");
	if (spec && !json_is_object(spec))
		return xp_errf(err, "spec: not an object");
	const char *queue = NULL, *phase = NULL;
	if (opt_string(spec, "queue", &queue) < 0)
		return xp_errf(err, "spec.queue: not a string");
	json_t *mm = json_object_get(spec, "minMember");
	if (mm && (!json_is_integer(mm) || json_integer_value(mm) < 0 || json_integer_value(mm) > XP_JOB_MAX_REPLICAS))
		return xp_errf(err, "spec.minMember: not a member count");
	int min = mm && json_integer_value(mm) > 0 ? (int)json_integer_value(mm) : 1;
	if (opt_string(json_object_get(o, "status"), "phase", &phase) < 0)
		return xp_errf(err, "status.phase: not a string");
	int state;
	if (!phase || !*phase || !strcmp(phase, "Pending") || !strcmp(phase, "Inqueue") || !strcmp(phase, "Unknown"))
		state = XP_JS_PENDING;
	else if (!strcmp(phase, "Running"))
		state = XP_JS_RUNNING;
	else if (!strcmp(phase, "Completed"))
		state = XP_JS_COMPLETED;
	else
		return xp_errf(err, "status.phase: '%.40s' is not Pending, Inqueue, Running, Completed or Unknown", phase);
	json_t *un;
	if (condition(o, "Unschedulable", &un) < 0)
		return xp_errf(err, "status.conditions: not an array of objects");
	/* minResources is the whole gang's: per member, rounded up. */
	struct xp_task_group tot = {0};
	json_t *mr = json_object_get(spec, "minResources");
	if (mr && !json_is_object(mr))
		return xp_errf(err, "spec.minResources: not an object");
	json_t *fake = json_pack("{s:{s:[{s:{s:o}}]}}", "spec", "containers", "resources", "requests",
				 mr ? json_incref(mr) : json_object());
	int rc = pod_asks(fake, &tot, "spec.minResources", err);
	json_decref(fake);
	if (rc < 0) {
		free(tot.vendor);
		return xp_errf(err, "spec.minResources: a value is not a quantity");
	}
	struct xp_qjob *j = job_add(jobs, n, o, queue ? queue : "default");
	j->state = state;
	struct xp_task_group *g = group_add(j->spec);
	g->replicas = g->gang_min = min;
	g->devices = (tot.devices + min - 1) / min;
	g->cpus = (tot.cpus + min - 1) / min;
	g->host_memory_mib = (tot.host_memory_mib + min - 1) / min;
	g->vendor = tot.vendor;
	if (state == XP_JS_PENDING) {
		const char *r = json_string_value(json_object_get(un, "reason"));
		j->reason = r && strcmp(r, "NotEnoughTasks") == 0 ? XP_R_GANG : XP_R_RESOURCES;
		j->reason_text = un && cond_true(un) ? cond_text(un) : NULL;
	}
	return 0;
}

/* A LocalQueue: namespace/name -> ClusterQueue. */
struct lq {
	char *key, *cq;
};

static int localqueue(json_t *o, struct lq **lqs, size_t *n, struct xp_qset *set, struct xp_err *err)
{
	const char *name = object_name(o, NULL, err), *ns = NULL, *cq = NULL;
	if (!name)
		return -1;
	if (opt_string(json_object_get(o, "metadata"), "namespace", &ns) < 0 || !ns)
		return xp_errf(err, "metadata.namespace: missing (a LocalQueue is namespaced)");
	if (opt_string(json_object_get(o, "spec"), "clusterQueue", &cq) < 0 || !cq)
		return xp_errf(err, "spec.clusterQueue: missing or not a string");
	*lqs = xp_realloc(*lqs, (*n + 1) * sizeof **lqs);
	(*lqs)[(*n)++] = (struct lq){.key = xp_asprintf("%s/%s", ns, name), .cq = xp_strdup(cq)};
	/* Who may submit to a ClusterQueue: the namespaces with a LocalQueue pointing at it. */
	struct xp_queue *q = xp_qset_queue(set, cq);
	if (q && xp_qname_check(ns, "metadata.namespace", err) == 0) {
		for (size_t i = 0; i < q->n_tenants; i++)
			if (strcmp(q->tenants[i], ns) == 0)
				return 0;
		q->tenants = xp_realloc(q->tenants, (q->n_tenants + 1) * sizeof *q->tenants);
		q->tenants[q->n_tenants++] = xp_strdup(ns);
	}
	return 0;
}

static int workload(json_t *o, const struct lq *lqs, size_t n_lq, struct xp_qjob **jobs, size_t *n, struct xp_err *err)
{
	if (!object_name(o, NULL, err))
		return -1;
	json_t *spec = json_object_get(o, "spec");
	if (!json_is_object(spec))
		return xp_errf(err, "spec: missing or not an object");
	const char *lqname = NULL, *ns = NULL, *cq = NULL;
	if (opt_string(spec, "queueName", &lqname) < 0)
		return xp_errf(err, "spec.queueName: not a string");
	opt_string(json_object_get(o, "metadata"), "namespace", &ns);
	json_t *adm = json_object_get(json_object_get(o, "status"), "admission");
	if (opt_string(adm, "clusterQueue", &cq) < 0)
		return xp_errf(err, "status.admission.clusterQueue: not a string");
	if (!cq && lqname) {
		char key[600];
		snprintf(key, sizeof key, "%s/%s", ns ? ns : "default", lqname);
		for (size_t i = 0; i < n_lq && !cq; i++)
			if (strcmp(lqs[i].key, key) == 0)
				cq = lqs[i].cq;
	}
	json_t *pr = json_object_get(spec, "priority");
	if (pr && !json_is_null(pr) && (!json_is_integer(pr) || json_integer_value(pr) < -2147483647 - 1 ||
					json_integer_value(pr) > 2147483647))
		return xp_errf(err, "spec.priority: not a 32-bit integer");
	json_t *sets = json_object_get(spec, "podSets");
	if (!json_is_array(sets) || json_array_size(sets) == 0 || json_array_size(sets) > XP_JOB_MAX_GROUPS)
		return xp_errf(err, "spec.podSets: not an array of 1 to %d pod sets", XP_JOB_MAX_GROUPS);
	json_t *fin, *admitted, *reserved;
	if (condition(o, "Finished", &fin) < 0 || condition(o, "Admitted", &admitted) < 0 ||
	    condition(o, "QuotaReserved", &reserved) < 0)
		return xp_errf(err, "status.conditions: not an array of objects");
	json_t *active = json_object_get(spec, "active");
	/* A workload whose LocalQueue is unknown keeps the LocalQueue's name: it is in no queue. */
	struct xp_qjob *j = job_add(jobs, n, o, cq ? cq : lqname ? lqname : "");
	j->priority = pr ? (int)json_integer_value(pr) : 0;
	j->spec->priority = j->priority;
	if (fin && cond_true(fin)) {
		const char *r = json_string_value(json_object_get(fin, "reason"));
		j->state = r && strcmp(r, "Failed") == 0 ? XP_JS_FAILED : XP_JS_COMPLETED;
	} else if (admitted && cond_true(admitted))
		j->state = XP_JS_RUNNING;
	else if (reserved && cond_true(reserved))
		j->state = XP_JS_ADMITTED;
	else if (json_is_false(active)) {
		j->state = XP_JS_HELD; /* deactivated: waits until someone sets active again */
		j->reason = XP_R_HELD;
	} else {
		j->state = XP_JS_PENDING;
		char *t = reserved ? cond_text(reserved) : NULL;
		j->reason = t && strstr(t, "inactive") ? XP_R_QUEUE_INACTIVE : XP_R_QUOTA;
		j->reason_text = t;
	}
	size_t i;
	json_t *ps;
	json_array_foreach(sets, i, ps) {
		struct xp_task_group *g = group_add(j->spec);
		const char *pname = NULL;
		json_t *count = json_object_get(ps, "count"), *minc = json_object_get(ps, "minCount");
		if (!json_is_object(ps) || opt_string(ps, "name", &pname) < 0)
			return xp_errf(err, "spec.podSets[%zu]: not an object with a name", i);
		if (count && (!json_is_integer(count) || json_integer_value(count) < 0 ||
			      json_integer_value(count) > XP_JOB_MAX_REPLICAS))
			return xp_errf(err, "spec.podSets[%zu].count: not a pod count", i);
		if (minc && !json_is_null(minc) &&
		    (!json_is_integer(minc) || json_integer_value(minc) < 0 ||
		     (count && json_integer_value(minc) > json_integer_value(count))))
			return xp_errf(err, "spec.podSets[%zu].minCount: not a count up to count", i);
		g->name = pname ? xp_strndup(pname, XP_JOB_MAX_STRING) : NULL;
		g->replicas = count ? (int)json_integer_value(count) : 1;
		g->gang_min = minc && json_is_integer(minc) ? (int)json_integer_value(minc) : g->replicas;
		char field[64];
		snprintf(field, sizeof field, "spec.podSets[%zu].template", i);
		if (pod_asks(json_object_get(ps, "template"), g, field, err) < 0)
			return -1;
	}
	return 0;
}

/* Runs fn over each item of list, prefixing an error with the object's name. */
#define EACH(list, kind, call)                                                    \
	do {                                                                      \
		size_t i_;                                                        \
		json_t *o;                                                        \
		json_array_foreach(list, i_, o) {                                 \
			if (!json_is_object(o) || (call) < 0) {                   \
				char w_[400];                                     \
				if (!json_is_object(o))                           \
					xp_errf(err, "not an object");            \
				who(o, kind, i_, w_, sizeof w_);                  \
				xp_err_prefix(err, "%s", w_);                     \
				goto fail;                                        \
			}                                                         \
		}                                                                 \
	} while (0)

int xp_k8s_build_queues(json_t *vqueues, json_t *podgroups, json_t *cqueues, json_t *lqueues, json_t *workloads,
			struct xp_qset *set, struct xp_qjob **jobs, size_t *n_jobs, struct xp_err *err)
{
	*jobs = NULL;
	*n_jobs = 0;
	struct lq *lqs = NULL;
	size_t n_lq = 0;
	class_add(set, "cpu", NULL);
	class_add(set, "mem", NULL);
	EACH(vqueues, "Queue", volcano_queue(set, o, err));
	EACH(cqueues, "ClusterQueue", kueue_cq(set, o, err));
	/* Parents no object names: Kueue cohorts, Volcano's root or a parent not listed. */
	for (size_t i = 0; i < set->n_queues; i++) {
		const char *p = set->queues[i].parent;
		if (p && !xp_qset_queue(set, p)) {
			char *copy = xp_strdup(p);
			queue_add(set, copy);
			free(copy);
		}
	}
	for (size_t i = 0; i < set->n_queues; i++) {
		const struct xp_queue *q = &set->queues[i];
		if (xp_qset_parent_check(set, q->name, q->parent, err) < 0) {
			xp_err_prefix(err, "queue %s", q->name);
			goto fail;
		}
	}
	EACH(podgroups, "PodGroup", podgroup(o, jobs, n_jobs, err));
	EACH(lqueues, "LocalQueue", localqueue(o, &lqs, &n_lq, set, err));
	EACH(workloads, "Workload", workload(o, lqs, n_lq, jobs, n_jobs, err));
	for (size_t i = 0; i < n_lq; i++)
		free(lqs[i].key), free(lqs[i].cq);
	free(lqs);
	return 0;
fail:
	for (size_t i = 0; i < n_lq; i++)
		free(lqs[i].key), free(lqs[i].cq);
	free(lqs);
	return -1;
}

int xp_k8s_queues(struct xp_k8s_client *cl, struct xp_qset *set, struct xp_qjob **jobs, size_t *n_jobs,
		  unsigned *engines, struct xp_err *err)
{
	static const char *const paths[] = {
		"/apis/scheduling.volcano.sh/v1beta1/queues", "/apis/scheduling.volcano.sh/v1beta1/podgroups",
		"/apis/kueue.x-k8s.io/v1beta2/clusterqueues",  "/apis/kueue.x-k8s.io/v1beta2/localqueues",
		"/apis/kueue.x-k8s.io/v1beta2/workloads",
	};
	json_t *l[5] = {NULL};
	unsigned found = 0;
	int rc = -1;
	*jobs = NULL;
	*n_jobs = 0;
	for (int i = 0; i < 5; i++) {
		bool absent = false;
		if (i == 1 && !l[0])
			continue; /* no Volcano: no PodGroups either */
		if (i > 2 && !l[2])
			continue;
		l[i] = xp_k8s_list_opt(cl, paths[i], NULL, &absent, err);
		if (!l[i] && absent && i == 2) {
			/* Kueue before v1beta2 (0.15) serves v1beta1 only, with the same fields but
			 * spec.cohort: read that. */
			l[i] = xp_k8s_list_opt(cl, "/apis/kueue.x-k8s.io/v1beta1/clusterqueues", NULL, &absent, err);
			if (l[i]) {
				json_t *lq = xp_k8s_list(cl, "/apis/kueue.x-k8s.io/v1beta1/localqueues", NULL, err);
				json_t *wl = lq ? xp_k8s_list(cl, "/apis/kueue.x-k8s.io/v1beta1/workloads", NULL, err) : NULL;
				if (!wl) {
					json_decref(lq);
					goto out;
				}
				l[3] = lq;
				l[4] = wl;
				found |= XP_K8S_KUEUE;
				break;
			}
		}
		if (!l[i] && !absent)
			goto out;
		if (l[i] && i == 0)
			found |= XP_K8S_VOLCANO;
		if (l[i] && i == 2)
			found |= XP_K8S_KUEUE;
	}
	rc = xp_k8s_build_queues(l[0], l[1], l[2], l[3], l[4], set, jobs, n_jobs, err);
	if (engines)
		*engines = found;
out:
	for (int i = 0; i < 5; i++)
		json_decref(l[i]);
	return rc;
}

int xp_k8s_load_queues(const struct xp_k8s_opts *o, struct xp_qset *set, struct xp_qjob **jobs, size_t *n_jobs,
		       unsigned *engines, struct xp_err *err)
{
	struct xp_k8s_conf conf;
	*jobs = NULL;
	*n_jobs = 0;
	if (xp_k8s_conf_load(o, &conf, err) < 0)
		return -1;
	struct xp_k8s_client *cl = xp_k8s_client_new(&conf, NULL);
	int rc = xp_k8s_queues(cl, set, jobs, n_jobs, engines, err);
	xp_k8s_client_free(cl);
	return rc;
}
