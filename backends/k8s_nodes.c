/* k8s_nodes.c: Nodes and Pods from the API server into xp_node. */
#include "k8s_nodes.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "istr.h"
#include "k8s_hami.h"
#include "nameset.h"

/* Extended resources that count whole accelerators or slices of one. A name not listed here
 * (cpu, memory, pods, HAMi's *-memory and *-cores amounts) is not a device. */
const char *xp_k8s_resource_vendor(const char *name)
{
	static const struct {
		const char *prefix;
		const char *vendor;
		bool exact;
	} t[] = {
		{"nvidia.com/gpu", "NVIDIA", true},
		{"nvidia.com/mig-", "NVIDIA", false},
		{"huawei.com/Ascend", "Huawei", false},
		{"amd.com/gpu", "AMD", true},
		{"cambricon.com/mlu", "Cambricon", false},
		/* HAMi's count of Cambricon MLU shares (its chart's mluResourceName). */
		{"cambricon.com/vmlu", "Cambricon", true},
		{"hygon.com/dcunum", "Hygon", true},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		size_t l = strlen(t[i].prefix);
		if (t[i].exact ? strcmp(name, t[i].prefix) != 0 : strncmp(name, t[i].prefix, l) != 0)
			continue;
		/* HAMi's companions of a device count: amounts of memory and cores, not devices. */
		const char *dash = strrchr(name, '-');
		if (dash && (!strcmp(dash, "-memory") || !strcmp(dash, "-mem") || !strcmp(dash, "-cores") ||
			     !strcmp(dash, "-memory-percentage")))
			return NULL;
		/* HAMi's MLU memory and cores (cambricon.com/mlu.smlu.vmemory, .vcore). */
		if (!strcmp(name, "cambricon.com/mlumem") || !strncmp(name, "cambricon.com/mlu.", 18))
			return NULL;
		return t[i].vendor;
	}
	return NULL;
}

int xp_k8s_quantity(const char *s, double *v)
{
	if (!s || !*s)
		return -1;
	char *end;
	double x = strtod(s, &end);
	if (end == s || !isfinite(x) || x < 0)
		return -1;
	static const struct {
		const char *suf;
		double mul;
	} t[] = {{"", 1},
		 {"m", 1e-3},
		 {"k", 1e3},
		 {"M", 1e6},
		 {"G", 1e9},
		 {"T", 1e12},
		 {"P", 1e15},
		 {"E", 1e18},
		 {"Ki", 1024.0},
		 {"Mi", 1048576.0},
		 {"Gi", 1073741824.0},
		 {"Ti", 1099511627776.0},
		 {"Pi", 1125899906842624.0},
		 {"Ei", 1152921504606846976.0}};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (!strcmp(end, t[i].suf)) {
			/* Past 2^62 no count or size is real, and every later cast stays defined. */
			if (x * t[i].mul > 4611686018427387904.0)
				return -1;
			*v = x * t[i].mul;
			return 0;
		}
	return -1;
}

/* One node's devices by resource name (struct xp_k8s_span), and its HAMi register annotations. */
struct knode {
	struct xp_node *n;
	struct xp_k8s_span *spans;
	size_t n_spans;
	struct xp_hami_node hami;
};

static const char *jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The model for the devices of resource res on a node with these labels. */
static char *device_model(const char *res, json_t *labels)
{
	const char *slash = strchr(res, '/');
	const char *kind = slash ? slash + 1 : res;
	if (!strncmp(res, "nvidia.com/", 11)) {
		/* GPU feature discovery names the product ("NVIDIA-A100-SXM4-80GB": GFD writes '-'
		 * for spaces); a MIG resource is a slice of one. */
		const char *prod = jstr(labels, "nvidia.com/gpu.product");
		if (!strncmp(kind, "mig-", 4))
			return xp_asprintf("%s MIG %s", prod ? prod : "NVIDIA GPU", kind + 4);
		return xp_strdup(prod ? prod : "NVIDIA GPU");
	}
	if (!strncmp(res, "huawei.com/", 11))
		return xp_strdup(kind);
	if (!strcmp(res, "amd.com/gpu")) {
		const char *p = jstr(labels, "amd.com/gpu.product-name");
		return xp_strdup(p ? p : "AMD GPU");
	}
	if (!strncmp(res, "cambricon.com/", 14)) {
		const char *p = jstr(labels, "cambricon.com/mlu.model");
		return xp_strdup(p ? p : "Cambricon MLU");
	}
	return xp_strdup("Hygon DCU");
}

/* A resource count as a whole number of devices; -1 when not one. */
static long long count_of(json_t *v)
{
	double x;
	if (!json_is_string(v) || xp_k8s_quantity(json_string_value(v), &x) < 0 || x != floor(x) || x > XP_MAX_DEVICES)
		return -1;
	return (long long)x;
}

/* Adds a warning to n (a heap string it takes). */
static void warn(struct xp_node *n, char *w)
{
	xp_strv_add_once(&n->warnings, &n->n_warnings, w);
	free(w);
}

/* The label whose name (after any prefix) is one of names, or NULL. */
static const char *label_named(json_t *labels, const char *const *names)
{
	const char *k;
	json_t *v;
	json_object_foreach(labels, k, v) {
		const char *base = strrchr(k, '/');
		base = base ? base + 1 : k;
		for (const char *const *p = names; *p; p++)
			if (!strcmp(base, *p) && json_is_string(v))
				return json_string_value(v);
	}
	return NULL;
}

/* Places reg's devices on kn's node (first: where they start) as the span of res; count:
 * the node's capacity of res, -1 when none. */
static void place_reg(struct knode *kn, const char *res, long long count, struct xp_hami_reg *reg)
{
	size_t first = kn->n->n_devices;
	xp_hami_node_place(kn->n, reg, count);
	if (!reg->placed)
		return;
	kn->spans = xp_realloc(kn->spans, (kn->n_spans + 1) * sizeof *kn->spans);
	kn->spans[kn->n_spans++] = (struct xp_k8s_span){res, first, kn->n->n_devices - first};
}

static int node_from(json_t *obj, const char *source, struct knode *kn, struct xp_err *err)
{
	json_t *md = json_object_get(obj, "metadata");
	const char *name = jstr(md, "name");
	const char *kind = jstr(obj, "kind");
	if (!name || !*name || (kind && strcmp(kind, "Node")))
		return xp_errf(err, "a Node without metadata.name (or another kind: %.40s)", kind ? kind : "none");
	struct xp_node *n = xp_node_new(name);
	kn->n = n;
	free(n->source);
	n->source = xp_strdup(source);
	json_t *labels = json_object_get(md, "labels");
	json_t *status = json_object_get(obj, "status");
	json_t *spec = json_object_get(obj, "spec");
	json_t *cap = json_object_get(status, "capacity");
	json_t *alloc = json_object_get(status, "allocatable");
	const char *k;
	json_t *v;
	json_object_foreach(labels, k, v) if (json_is_string(v)) xp_labels_append(&n->facts, k, json_string_value(v));
	const char *zone = jstr(labels, "topology.kubernetes.io/zone");
	if (!zone)
		zone = jstr(labels, "failure-domain.beta.kubernetes.io/zone");
	static const char *const racks[] = {"rack", NULL};
	static const char *const switches[] = {"switch", "network-switch", "tor", NULL};
	const char *rack = label_named(labels, racks), *sw = label_named(labels, switches);
	n->zone = zone ? xp_strdup(zone) : NULL;
	n->rack = rack ? xp_strdup(rack) : NULL;
	n->sw = sw ? xp_strdup(sw) : NULL;
	double x;
	if (xp_k8s_quantity(jstr(cap, "cpu"), &x) == 0 && x <= INT_MAX)
		n->pus = (int)x;
	if (xp_k8s_quantity(jstr(cap, "memory"), &x) == 0)
		n->memory_mib = (int64_t)(x / 1048576.0);
	const char *mem = jstr(labels, "nvidia.com/gpu.memory");
	/* HAMi's register annotations name the devices of their resource (k8s_hami.c). */
	xp_hami_node_read(&kn->hami, json_object_get(md, "annotations"), n);
	json_object_foreach(cap, k, v) {
		const char *vendor = xp_k8s_resource_vendor(k);
		if (!vendor)
			continue;
		long long c = count_of(v);
		struct xp_hami_reg *reg = xp_hami_node_reg(&kn->hami, k);
		if (reg) {
			place_reg(kn, k, c, reg);
			continue;
		}
		json_t *av = json_object_get(alloc, k);
		long long a = av ? count_of(av) : c;
		if (c < 0 || a < 0) {
			warn(n, xp_asprintf("capacity %s: '%.40s' is not a device count", k, json_string_value(v) ? json_string_value(v) : "?"));
			continue;
		}
		if (n->n_devices + (size_t)c > XP_MAX_DEVICES) {
			warn(n, xp_asprintf("capacity %s: more than %d devices; the rest left out", k, XP_MAX_DEVICES));
			continue;
		}
		char *model = device_model(k, labels);
		kn->spans = xp_realloc(kn->spans, (kn->n_spans + 1) * sizeof *kn->spans);
		kn->spans[kn->n_spans++] = (struct xp_k8s_span){k, n->n_devices, (size_t)c};
		for (long long i = 0; i < c; i++) {
			struct xp_device *d = xp_node_add_device(n);
			xp_istr_set(&d->vendor, vendor);
			xp_istr_set(&d->model, model);
			/* Each unit is handed to a pod whole, a MIG instance or vNPU included. */
			d->partition = XP_PART_WHOLE;
			if (mem && !strcmp(k, "nvidia.com/gpu") && xp_k8s_quantity(mem, &x) == 0)
				d->memory_mib = (int64_t)x;
			d->health = XP_HEALTH_OK;
			if (i >= a) {
				/* The device plugin counts it but offers it to no pod: unhealthy. */
				d->health = XP_HEALTH_FAIL;
				xp_strv_add(&d->health_reasons, &d->n_health_reasons,
					    "capacity but not allocatable (the device plugin reports it unhealthy)");
			}
		}
		free(model);
	}
	/* A register annotation whose resource the node does not advertise (a warning). */
	for (size_t r = 0; r < kn->hami.n; r++)
		if (!kn->hami.regs[r].placed)
			place_reg(kn, kn->hami.regs[r].res, -1, &kn->hami.regs[r]);
	/* Readiness first: a node that is not Ready is down whatever else it says. */
	const char *ready = NULL;
	json_t *cond;
	size_t i;
	json_array_foreach(json_object_get(status, "conditions"), i, cond) if (!strcmp(jstr(cond, "type") ? jstr(cond, "type") : "", "Ready"))
		ready = jstr(cond, "status");
	bool noschedule = json_is_true(json_object_get(spec, "unschedulable"));
	json_t *t;
	json_array_foreach(json_object_get(spec, "taints"), i, t) {
		const char *eff = jstr(t, "effect");
		if (eff && (!strcmp(eff, "NoSchedule") || !strcmp(eff, "NoExecute"))) {
			noschedule = true;
			const char *tk = jstr(t, "key");
			warn(n, xp_asprintf("taint %s:%s", tk ? tk : "?", eff));
		}
	}
	if (ready && !strcmp(ready, "Unknown"))
		n->state = XP_NODE_UNREACHABLE;
	else if (!ready || strcmp(ready, "True"))
		n->state = XP_NODE_DOWN;
	else if (noschedule)
		n->state = XP_NODE_DRAINING;
	xp_node_links_reset(n);
	return 0;
}

/* Marks count devices of resource res on kn as held by owner; a warning when too few are free. */
static void hold(struct knode *kn, const char *res, long long count, const char *owner)
{
	for (size_t s = 0; s < kn->n_spans && count > 0; s++) {
		if (strcmp(kn->spans[s].res, res))
			continue;
		for (size_t i = kn->spans[s].first; i < kn->spans[s].first + kn->spans[s].count && count > 0; i++) {
			struct xp_device *d = &kn->n->devices[i];
			if (d->n_allocs || d->health == XP_HEALTH_FAIL)
				continue;
			d->allocs = xp_calloc(1, sizeof *d->allocs);
			d->allocs[0] = (struct xp_alloc){.owner = xp_strdup(owner), .memory_mib = -1};
			d->n_allocs = 1;
			count--;
		}
	}
	if (count > 0)
		warn(kn->n, xp_asprintf("pod %s requests more %s than the node has free", owner, res));
}

static bool in(char **v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

static void pod_on(json_t *pod, struct xp_nameset *names)
{
	json_t *md = json_object_get(pod, "metadata");
	json_t *spec = json_object_get(pod, "spec");
	const char *node = jstr(spec, "nodeName");
	const char *phase = jstr(json_object_get(pod, "status"), "phase");
	/* Only a bound pod that runs or is starting holds devices; Succeeded and Failed gave them back. */
	if (!node || !phase || (strcmp(phase, "Running") && strcmp(phase, "Pending")))
		return;
	struct knode *kn = xp_nameset_get(names, node);
	if (!kn)
		return;
	const char *ns = jstr(md, "namespace"), *name = jstr(md, "name");
	char *owner = xp_asprintf("%s/%s", ns ? ns : "default", name ? name : "?");
	/* Annotations naming the exact devices first; the resources they name are not held again
	 * by count. */
	char **named = NULL;
	size_t n_named = 0;
	xp_hami_pod(kn->n, &kn->hami, kn->spans, kn->n_spans, json_object_get(md, "annotations"), owner, &named, &n_named);
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(spec, "containers"), i, c) {
		json_t *res = json_object_get(c, "resources");
		/* Extended resources: requests equal limits, and a limit alone is the request too. */
		json_t *req = json_object_get(res, "requests");
		json_t *lim = json_object_get(res, "limits");
		const char *k;
		json_t *v;
		json_object_foreach(lim, k, v) if (!json_object_get(req, k) && xp_k8s_resource_vendor(k) && !in(named, n_named, k)) {
			long long n = count_of(v);
			if (n > 0)
				hold(kn, k, n, owner);
		}
		json_object_foreach(req, k, v) if (xp_k8s_resource_vendor(k) && !in(named, n_named, k)) {
			long long n = count_of(v);
			if (n > 0)
				hold(kn, k, n, owner);
		}
	}
	xp_strv_free(named, n_named);
	free(owner);
}

struct xp_cluster *xp_k8s_build(json_t *nodes, json_t *pods, const char *source, struct xp_err *err)
{
	struct xp_cluster *c = xp_cluster_new();
	size_t n = json_array_size(nodes);
	struct knode *kns = xp_calloc(n ? n : 1, sizeof *kns);
	struct xp_nameset names = {0};
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		rc = node_from(json_array_get(nodes, i), source, &kns[i], err);
		if (rc == 0 && !xp_nameset_put(&names, kns[i].n->name, &kns[i]))
			rc = xp_errf(err, "two Nodes named %.64s", kns[i].n->name);
	}
	if (rc == 0) {
		size_t i;
		json_t *p;
		json_array_foreach(pods, i, p) pod_on(p, &names);
	}
	xp_nameset_clear(&names);
	for (size_t i = 0; i < n; i++) {
		if (kns[i].n) {
			xp_node_clean(kns[i].n);
			if (rc == 0)
				xp_cluster_add(c, kns[i].n);
			else
				xp_node_free(kns[i].n);
		}
		free(kns[i].spans);
		xp_hami_node_clear(&kns[i].hami);
	}
	free(kns);
	if (rc < 0) {
		xp_cluster_free(c);
		return NULL;
	}
	return c;
}

/* Deletes from object o every member not named in keep (NULL-terminated). */
static void keep_only(json_t *o, const char *const *keep)
{
	const char *k;
	json_t *v;
	void *tmp;
	json_object_foreach_safe(o, tmp, k, v) {
		const char *const *p = keep;
		while (*p && strcmp(*p, k))
			p++;
		if (!*p)
			json_object_del(o, k);
	}
}

/* Deletes from annotations every member want does not read (a Node's carry
 * last-applied-configuration and the like: kilobytes each). */
static void keep_annotations(json_t *md, bool (*want)(const char *))
{
	const char *k;
	json_t *v;
	void *tmp;
	json_object_foreach_safe(json_object_get(md, "annotations"), tmp, k, v) if (!want(k))
		json_object_del(json_object_get(md, "annotations"), k);
}

/* The trims keep what node_from and pod_on read (and of the annotations those where HAMi and
 * Ascend name devices: k8s_hami.c), and drop the rest as each page arrives: managedFields, images, volumes,
 * env, statuses; and a Pod that holds no accelerator (not bound, finished, or asking for
 * none: most of a cluster's) is not kept at all. 50,000 Pods kept whole weigh some 350 MiB
 * decoded. Keep them in step with the readers above. */
static bool trim_node(json_t *node)
{
	static const char *const top[] = {"kind", "metadata", "spec", "status", NULL};
	static const char *const md[] = {"name", "labels", "annotations", NULL};
	static const char *const spec[] = {"unschedulable", "taints", NULL};
	static const char *const status[] = {"capacity", "allocatable", "conditions", NULL};
	static const char *const cond[] = {"type", "status", NULL};
	keep_only(node, top);
	keep_only(json_object_get(node, "metadata"), md);
	keep_annotations(json_object_get(node, "metadata"), xp_hami_node_annotation);
	keep_only(json_object_get(node, "spec"), spec);
	json_t *st = json_object_get(node, "status");
	keep_only(st, status);
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(st, "conditions"), i, c) keep_only(c, cond);
	return true;
}

/* True when one of containers asks for an accelerator (a request or a limit). */
static bool asks_devices(json_t *containers)
{
	size_t i;
	json_t *c;
	json_array_foreach(containers, i, c) {
		json_t *res = json_object_get(c, "resources");
		const char *k;
		json_t *v;
		json_object_foreach(json_object_get(res, "requests"), k, v) if (xp_k8s_resource_vendor(k)) return true;
		json_object_foreach(json_object_get(res, "limits"), k, v) if (xp_k8s_resource_vendor(k)) return true;
	}
	return false;
}

static bool trim_pod(json_t *pod)
{
	static const char *const top[] = {"kind", "metadata", "spec", "status", NULL};
	static const char *const md[] = {"name", "namespace", "annotations", NULL};
	static const char *const spec[] = {"nodeName", "containers", "initContainers", NULL};
	static const char *const container[] = {"name", "resources", NULL};
	static const char *const status[] = {"phase", NULL};
	json_t *sp = json_object_get(pod, "spec");
	const char *phase = jstr(json_object_get(pod, "status"), "phase");
	/* What pod_on skips. */
	if (!jstr(sp, "nodeName") || !phase || (strcmp(phase, "Running") && strcmp(phase, "Pending")) ||
	    (!asks_devices(json_object_get(sp, "containers")) && !asks_devices(json_object_get(sp, "initContainers"))))
		return false;
	keep_only(pod, top);
	keep_only(json_object_get(pod, "metadata"), md);
	keep_annotations(json_object_get(pod, "metadata"), xp_hami_pod_annotation);
	keep_only(sp, spec);
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(sp, "containers"), i, c) keep_only(c, container);
	json_array_foreach(json_object_get(sp, "initContainers"), i, c) keep_only(c, container);
	keep_only(json_object_get(pod, "status"), status);
	return true;
}

/* What the trims keep, as the client decodes a page (xp_k8s_keep): the same members, so that
 * the trims cut nothing more from them, and the cluster is the one whole objects make
 * (check_k8s.c keep_is_the_trim). Keep them in step with the trims above. */
static const struct xp_k8s_keep cond_keep[] = {{"type"}, {"status"}, {0}};
static const struct xp_k8s_keep node_md_keep[] = {
	{"name"}, {"labels"}, {"annotations", .want = xp_hami_node_annotation}, {0}};
static const struct xp_k8s_keep node_spec_keep[] = {{"unschedulable"}, {"taints"}, {0}};
static const struct xp_k8s_keep node_status_keep[] = {
	{"capacity"}, {"allocatable"}, {"conditions", cond_keep, .each = true}, {0}};
const struct xp_k8s_keep xp_k8s_node_keep[] = {
	{"kind"}, {"metadata", node_md_keep}, {"spec", node_spec_keep}, {"status", node_status_keep}, {0}};
static const struct xp_k8s_keep pod_md_keep[] = {
	{"name"}, {"namespace"}, {"annotations", .want = xp_hami_pod_annotation}, {0}};
static const struct xp_k8s_keep container_keep[] = {{"name"}, {"resources"}, {0}};
static const struct xp_k8s_keep pod_spec_keep[] = {
	{"nodeName"}, {"containers", container_keep, .each = true}, {"initContainers", container_keep, .each = true}, {0}};
static const struct xp_k8s_keep pod_status_keep[] = {{"phase"}, {0}};
const struct xp_k8s_keep xp_k8s_pod_keep[] = {
	{"kind"}, {"metadata", pod_md_keep}, {"spec", pod_spec_keep}, {"status", pod_status_keep}, {0}};

struct xp_cluster *xp_k8s_cluster(struct xp_k8s_client *cl, struct xp_err *err)
{
	xp_k8s_client_trim(cl, trim_node);
	xp_k8s_client_keep(cl, xp_k8s_node_keep);
	json_t *nodes = xp_k8s_list(cl, "/api/v1/nodes", NULL, err);
	xp_k8s_client_trim(cl, trim_pod);
	xp_k8s_client_keep(cl, xp_k8s_pod_keep);
	if (!nodes) {
		xp_k8s_client_trim(cl, NULL);
		xp_k8s_client_keep(cl, NULL);
		return NULL;
	}
	/* Finished pods hold nothing: the server leaves them out. */
	json_t *pods = xp_k8s_list(cl, "/api/v1/pods", XP_K8S_POD_QUERY, err);
	xp_k8s_client_trim(cl, NULL);
	xp_k8s_client_keep(cl, NULL);
	if (!pods) {
		json_decref(nodes);
		return NULL;
	}
	char *src = xp_asprintf("k8s:%s", xp_k8s_client_conf(cl)->server);
	struct xp_cluster *c = xp_k8s_build(nodes, pods, src, err);
	free(src);
	json_decref(nodes);
	json_decref(pods);
	return c;
}

struct xp_cluster *xp_k8s_load(const struct xp_k8s_opts *o, struct xp_err *err)
{
	struct xp_k8s_conf conf;
	if (xp_k8s_conf_load(o, &conf, err) < 0)
		return NULL;
	struct xp_k8s_client *cl = xp_k8s_client_new(&conf, NULL);
	struct xp_cluster *c = xp_k8s_cluster(cl, err);
	xp_k8s_client_free(cl);
	return c;
}

bool xp_k8s_trim_node(json_t *node)
{
	return trim_node(node);
}

bool xp_k8s_trim_pod(json_t *pod)
{
	return trim_pod(pod);
}
