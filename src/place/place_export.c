/* place_export.c: writes a placement as Kubernetes Pods, a Volcano Job or an sbatch script.
 * Shapes follow the public APIs: core/v1 Pod (spec.affinity.nodeAffinity
 * requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[].matchExpressions[]),
 * batch.volcano.sh/v1alpha1 Job (spec.schedulerName, minAvailable, queue, tasks[].replicas,
 * tasks[].template) and sbatch's #SBATCH options. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "place_export.h"

static const char *const fmt_names[XP_EXPORT_COUNT] = {"k8s", "volcano", "slurm"};

int xp_export_parse(const char *s)
{
	for (int i = 0; s && i < XP_EXPORT_COUNT; i++)
		if (!strcmp(s, fmt_names[i]))
			return i;
	return -1;
}

const char *xp_export_name(int fmt)
{
	return fmt >= 0 && fmt < XP_EXPORT_COUNT ? fmt_names[fmt] : "unknown";
}

static const char *const flavor_names[XP_FLAVOR_COUNT] = {"none", "hami"};

int xp_export_flavor_parse(const char *s)
{
	for (int i = XP_FLAVOR_HAMI; s && i < XP_FLAVOR_COUNT; i++)
		if (!strcmp(s, flavor_names[i]))
			return i;
	return -1;
}

const char *xp_export_flavor_name(int flavor)
{
	return flavor >= 0 && flavor < XP_FLAVOR_COUNT ? flavor_names[flavor] : "unknown";
}

void xp_yaml_quote(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f); /* UTF-8 bytes are valid in a double-quoted scalar as they are */
	}
	fputc('"', f);
}

/* The device a replica was given first: its manifest names the resource and the gres. */
static const struct xp_device *first_device(const struct xp_cluster *c, const struct xp_place_replica *p)
{
	const struct xp_node *n = xp_cluster_node(c, p->node);
	if (!n || !p->n_devices)
		return NULL;
	for (size_t i = 0; i < n->n_devices; i++)
		if (n->devices[i].index == p->devices[0])
			return &n->devices[i];
	return NULL;
}

/* The manifests an export reads. */
struct mset {
	const struct xp_manifest *const *ms;
	size_t n;
};

/* The manifest and model describing device d: its model by model name, else by the match
 * globs over its product name; failing both, the manifest whose vendor or name is the device's
 * vendor, with no model (so an unknown model gets the adapter's names, and a vendor only a
 * model override names, as Hygon in the amd manifest, gets none rather than AMD's). */
static const struct xp_manifest *manifest_of(const struct mset *s, const struct xp_device *d,
					     const struct xp_mmodel **md)
{
	*md = NULL;
	if (!d)
		return NULL;
	for (size_t i = 0; i < s->n && d->model; i++)
		for (size_t k = 0; k < s->ms[i]->n_models; k++)
			if (!strcasecmp(s->ms[i]->models[k].name, d->model))
				return *md = &s->ms[i]->models[k], s->ms[i];
	for (size_t i = 0; i < s->n && d->model; i++)
		if ((*md = xp_manifest_model(s->ms[i], d->model, -1)) != NULL)
			return s->ms[i];
	for (size_t i = 0; i < s->n && d->vendor; i++)
		if (!strcasecmp(s->ms[i]->vendor, d->vendor) || !strcasecmp(s->ms[i]->name, d->vendor))
			return s->ms[i];
	return NULL;
}

static void ind(FILE *f, int n);

/* The manifest entry replica p's node places by: its first device's model, and the [layout] of
 * it that the node's count of the model selects (xp_manifest_layout); NULL when none. */
static const struct xp_mmodel *layout_of(const struct mset *s, const struct xp_cluster *c,
					 const struct xp_place_replica *p)
{
	const struct xp_device *d = first_device(c, p);
	const struct xp_mmodel *md;
	const struct xp_manifest *m = manifest_of(s, d, &md);
	const struct xp_node *n = xp_cluster_node(c, p->node);
	if (!m || !md || !n)
		return NULL;
	int same = 0;
	for (size_t i = 0; i < n->n_devices; i++)
		same += n->devices[i].model && d->model && !strcasecmp(n->devices[i].model, d->model);
	return xp_manifest_layout(m, md, same);
}

/* What the vendor's scheduler must see on the Pod for the rule xpool placed by to apply (a
 * layout's k8s_node_selector, k8s_pod_label, k8s_pod_annotation): only for whole devices
 * without a sharing layer (a vNPU or HAMi request goes to another handler). NULL: none. */
static const struct xp_mmodel *vendor_meta(const struct mset *s, const struct xp_cluster *c,
					   const struct xp_place_replica *p, bool hami)
{
	if (hami || p->slice)
		return NULL;
	const struct xp_mmodel *md = layout_of(s, c, p);
	return md && md->n_k8s_selector + md->n_k8s_label + md->n_k8s_annotation ? md : NULL;
}

/* Entries of a YAML map at indent n. */
static void kv_map(FILE *f, int n, const struct xp_mkv *v, size_t nv)
{
	for (size_t i = 0; i < nv; i++) {
		ind(f, n), xp_yaml_quote(f, v[i].key), fputs(": ", f);
		xp_yaml_quote(f, v[i].value);
		fputc('\n', f);
	}
}

/* True when two entries ask the same metadata of Kubernetes. */
static bool same_meta(const struct xp_mmodel *a, const struct xp_mmodel *b)
{
	if (!a || !b)
		return a == b;
	return a->n_k8s_selector == b->n_k8s_selector && a->n_k8s_label == b->n_k8s_label &&
	       a->n_k8s_annotation == b->n_k8s_annotation &&
	       !memcmp(a->k8s_selector, b->k8s_selector, sizeof a->k8s_selector) &&
	       !memcmp(a->k8s_label, b->k8s_label, sizeof a->k8s_label) &&
	       !memcmp(a->k8s_annotation, b->k8s_annotation, sizeof a->k8s_annotation);
}

/* "node N device D (vendor model)", for messages. */
static void what(char *buf, size_t len, const struct xp_place_replica *p, const struct xp_device *d)
{
	snprintf(buf, len, "node %s device %d (%s %s)", p->node, p->n_devices ? p->devices[0] : -1,
		 d && d->vendor ? d->vendor : "?", d && d->model ? d->model : "?");
}

/* The extended resource a replica asks for: the whole-device resource of its first device's
 * manifest, or for a MIG profile / vNPU template its slice resource (a soft share "share:N"
 * takes the whole device). Heap string, or NULL with err set naming the node and device. */
static char *resource_name(const struct mset *s, const struct xp_cluster *c, const struct xp_place_replica *p,
			   struct xp_err *err)
{
	const struct xp_device *d = first_device(c, p);
	const struct xp_mmodel *md;
	const struct xp_manifest *m = manifest_of(s, d, &md);
	char w[256];
	what(w, sizeof w, p, d);
	if (!m)
		return xp_errf(err, "export: %s: no adapter manifest describes it, so its Kubernetes resource "
				    "name is unknown", w), NULL;
	if (p->slice && strncmp(p->slice, "share:", 6)) {
		char *res = xp_manifest_k8s_slice(m, md, p->slice);
		if (!res)
			return xp_errf(err, "export: %s: manifest %s gives no k8s_slice_resource for slice %s",
				       w, m->name, p->slice), NULL;
		if (!xp_k8s_resource_valid(res)) {
			xp_errf(err, "export: %s: slice %s makes '%.80s', not a Kubernetes resource name", w, p->slice, res);
			free(res);
			return NULL;
		}
		return res;
	}
	const char *res = xp_manifest_k8s_resource(m, md);
	if (!res)
		return xp_errf(err, "export: %s: manifest %s gives no k8s_resource", w, m->name), NULL;
	return xp_strdup(res);
}

/* How many of the resource one replica asks for: its devices, or one slice. */
static size_t resource_count(const struct xp_place_replica *p)
{
	return p->slice ? 1 : p->n_devices;
}

/* Kubernetes object names are DNS-1123 labels: the job name lowercased, anything else turned
 * into '-', cut so that a "-gN-NNNNNN" suffix still fits 63. The raw name goes to an
 * annotation (quoted), so nothing is lost. */
static void k8s_name(char out[48], const struct xp_job *job)
{
	const char *s = job->name && *job->name ? job->name : "xpool-job";
	size_t k = 0;
	for (; *s && k < 40; s++) {
		unsigned char ch = (unsigned char)tolower((unsigned char)*s);
		char o = isalnum(ch) && ch < 0x80 ? (char)ch : '-';
		if (o == '-' && (k == 0 || out[k - 1] == '-'))
			continue;
		out[k++] = o;
	}
	while (k && out[k - 1] == '-')
		k--;
	if (!k)
		k = (size_t)snprintf(out, 48, "xpool-job");
	out[k] = 0;
}

static void ind(FILE *f, int n)
{
	fprintf(f, "%*s", n, "");
}

/* requiredDuringScheduling node affinity on kubernetes.io/hostname: the scheduler (default or
 * Volcano) still binds the pod, so quotas, gang and the device plugin's allocation all run,
 * unlike spec.nodeName which skips the scheduler. Node names are taken to be the hostname
 * label, as kubelet sets it by default. */
static void affinity(FILE *f, int n, const char *const *nodes, size_t nn)
{
	ind(f, n), fputs("affinity:\n", f);
	ind(f, n + 2), fputs("nodeAffinity:\n", f);
	ind(f, n + 4), fputs("requiredDuringSchedulingIgnoredDuringExecution:\n", f);
	ind(f, n + 6), fputs("nodeSelectorTerms:\n", f);
	ind(f, n + 6), fputs("- matchExpressions:\n", f);
	ind(f, n + 8), fputs("- key: \"kubernetes.io/hostname\"\n", f);
	ind(f, n + 10), fputs("operator: \"In\"\n", f);
	ind(f, n + 10), fputs("values:\n", f);
	for (size_t i = 0; i < nn; i++) {
		ind(f, n + 10), fputs("- ", f);
		xp_yaml_quote(f, nodes[i]);
		fputc('\n', f);
	}
}

/* Env is written only for devices without a known device plugin: NVIDIA's, Huawei's, AMD's
 * and Cambricon's plugins expose just the allocated devices to the container, renumbered from
 * 0 (and set NVIDIA_VISIBLE_DEVICES / ASCEND_VISIBLE_DEVICES themselves), so the host indices
 * the dry-run chose would point at the wrong or missing devices inside. They go to the
 * xpool.io/devices annotation instead, for audit and for a plugin that honours it. */
static void container(FILE *f, int n, const char *res, size_t count, const struct xp_place_replica *p)
{
	ind(f, n), fputs("containers:\n", f);
	ind(f, n), fputs("- name: \"main\"\n", f);
	ind(f, n + 2), fputs("image: \"busybox\" # replace with the workload's image\n", f);
	if (!strcmp(p->env_name, XP_PLACE_GENERIC_ENV)) {
		ind(f, n + 2), fputs("env:\n", f);
		ind(f, n + 2), fputs("- name: ", f), xp_yaml_quote(f, p->env_name), fputc('\n', f);
		ind(f, n + 4), fputs("value: ", f), xp_yaml_quote(f, p->env_value), fputc('\n', f);
	}
	ind(f, n + 2), fputs("resources:\n", f);
	ind(f, n + 4), fputs("limits:\n", f);
	ind(f, n + 6), xp_yaml_quote(f, res), fprintf(f, ": %zu\n", count);
}

/* The MIG instances among ps[0..n) the dry-run took as new ("NODE:DEVICE PROFILE;...", with
 * " (enable MIG mode)" where the GPU is not in MIG mode yet), NULL when none: NVIDIA's device
 * plugin and Slurm offer only instances that exist, so the GPU must be repartitioned before
 * the job can run as placed (--reconfigure). */
static char *mig_new(const struct xp_place_replica *ps, size_t n)
{
	char *s = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!ps[i].instance || strcmp(ps[i].instance, "new"))
			continue;
		char *t = xp_asprintf("%s%s%s:%s %s%s", s ? s : "", s ? ";" : "", ps[i].node, ps[i].env_value, ps[i].slice,
				      ps[i].enable_mig ? " (enable MIG mode)" : "");
		free(s);
		s = t;
	}
	return s;
}

/* The object's metadata; repart (NULL none): the MIG instances to make first (mig_new); vm
 * (NULL none): the vendor's labels and annotations on a Pod. */
static void meta(FILE *f, const char *name, const struct xp_job *job, const char *devices, const char *repart,
		 const struct xp_mmodel *vm)
{
	fputs("metadata:\n  name: ", f);
	xp_yaml_quote(f, name);
	fputs("\n  labels:\n    \"app.kubernetes.io/managed-by\": \"xpool\"\n", f);
	if (vm)
		kv_map(f, 4, vm->k8s_label, vm->n_k8s_label);
	fputs("  annotations:\n", f);
	fputs("    \"xpool.io/job\": ", f), xp_yaml_quote(f, job->name ? job->name : ""), fputc('\n', f);
	if (devices)
		fputs("    \"xpool.io/devices\": ", f), xp_yaml_quote(f, devices), fputc('\n', f);
	if (repart)
		fputs("    \"xpool.io/mig-repartition\": ", f), xp_yaml_quote(f, repart),
			fputs(" # new MIG instances: create them first, the device plugin offers only existing ones\n", f);
	if (vm)
		kv_map(f, 4, vm->k8s_annotation, vm->n_k8s_annotation);
}

/* spec.nodeSelector at indent n: the vendor's node selectors (vm NULL or none: nothing). */
static void node_selector(FILE *f, int n, const struct xp_mmodel *vm)
{
	if (!vm || !vm->n_k8s_selector)
		return;
	ind(f, n), fputs("nodeSelector:\n", f);
	kv_map(f, n + 2, vm->k8s_selector, vm->n_k8s_selector);
}

/* What one replica asks of HAMi (--flavor hami): its limits, count first, and the annotation
 * that pins its devices by UUID. hami false: HAMi names nothing for it (a MIG slice, which
 * stays the device plugin's nvidia.com/mig-PROFILE, as HAMi's own examples ask it; a device
 * no manifest gives `hami` names), and the plain export is written. */
struct hami_req {
	bool hami;
	size_t n;
	char name[4][128];
	long long value[4];
	char uuid_key[128]; /* "" none */
	char *uuids;        /* heap "UUID,UUID", NULL when a device's UUID is not known */
};

static void hami_add(struct hami_req *h, const char *name, long long v)
{
	if (*name && h->n < 4) {
		snprintf(h->name[h->n], sizeof h->name[h->n], "%s", name);
		h->value[h->n++] = v;
	}
}

/* Appends p's devices' UUIDs to *list ("A,B"), each once; false when one is not known. */
static bool uuids_add(char **list, const struct xp_cluster *c, const struct xp_place_replica *p)
{
	const struct xp_node *n = xp_cluster_node(c, p->node);
	for (size_t k = 0; n && k < p->n_devices; k++) {
		const struct xp_device *d = NULL;
		for (size_t i = 0; i < n->n_devices && !d; i++)
			if (n->devices[i].index == p->devices[k])
				d = &n->devices[i];
		if (!d || !d->uuid || !*d->uuid || strchr(d->uuid, ','))
			return false;
		const char *hit = *list ? strstr(*list, d->uuid) : NULL;
		size_t ul = strlen(d->uuid);
		if (hit && (hit == *list || hit[-1] == ',') && (hit[ul] == ',' || !hit[ul]))
			continue;
		char *s = xp_asprintf("%s%s%s", *list ? *list : "", *list ? "," : "", d->uuid);
		free(*list);
		*list = s;
	}
	return n != NULL;
}

/* HAMi's request for replica p (under Volcano's device sharing when volcano), from its first
 * device's manifest `hami` names. A soft share of N percent asks one device with N percent of
 * its cores and, for memory, the job's MiB when it gave them, else N percent (xpool's share
 * takes that part of the device's memory); a whole device asks 100 percent of both, so that
 * HAMi does not share it on (HAMi's use_exclusive_card example); a vNPU template asks its
 * memory, which HAMi's Ascend support turns back into the smallest template holding it: this
 * one. -1 with err when a share cannot be written so that it runs as placed. */
static int hami_request(const struct mset *s, const struct xp_cluster *c, const struct xp_job *job,
			const struct xp_place_replica *p, bool volcano, struct hami_req *h, struct xp_err *err)
{
	memset(h, 0, sizeof *h);
	const struct xp_device *d = first_device(c, p);
	const struct xp_mmodel *md;
	const struct xp_manifest *m = manifest_of(s, d, &md);
	struct xp_mhami names = {{0}};
	bool have = m && xp_manifest_hami(m, md, volcano, &names);
	bool share = p->slice && !strncmp(p->slice, "share:", 6);
	char w[256];
	what(w, sizeof w, p, d);
	if (share) {
		int pct = atoi(p->slice + 6);
		int64_t mib = p->group < job->n_groups ? job->groups[p->group].memory_mib : 0;
		if (!have)
			return xp_errf(err, "export: %s: a soft share with --flavor hami needs HAMi's resource names, "
					    "and %s%s gives no `hami` names for this device; not exported", w,
				       m ? "manifest " : "no manifest", m ? m->name : "");
		if (!names.cores[0])
			return xp_errf(err, "export: %s: HAMi shares %s by memory only (it picks a vNPU template by "
					    "memory), so a soft share of its compute cannot be written; ask for a "
					    "--slice (template) instead; not exported", w, names.count);
		hami_add(h, names.count, 1);
		hami_add(h, names.cores, pct);
		if (mib > 0 && names.memory[0])
			hami_add(h, names.memory, mib);
		else if (names.memory_percent[0])
			hami_add(h, names.memory_percent, pct);
		else if (names.memory[0] && d && d->memory_mib > 0)
			hami_add(h, names.memory, d->memory_mib * pct / 100);
		else
			return xp_errf(err, "export: %s: HAMi's names give no memory resource for a share; not exported", w);
	} else if (p->slice) {
		const struct xp_mtemplate *t = xp_manifest_template(md, p->slice);
		if (!have || !names.memory[0] || !p->isolation || strcmp(p->isolation, "vnpu") || !t || t->memory_mib <= 0)
			return 0; /* a MIG slice: the device plugin's resource */
		hami_add(h, names.count, 1);
		hami_add(h, names.memory, t->memory_mib);
	} else {
		if (!have)
			return 0;
		/* HAMi rounds a request below its unit up (Ascend910C: 1 NPU becomes a module of 2,
		 * HAMi pkg/device/ascend/device.go MutateAdmission) and refuses other odd ones: the
		 * Pod would not get the devices placed. */
		int unit = md && md->hami_unit > 1 ? md->hami_unit : 1;
		if (p->n_devices % (size_t)unit && p->n_devices < (size_t)unit)
			return xp_errf(err, "export: %s: HAMi allocates %s in units of %d and rounds a request of %zu up "
					    "to %d, so the Pod would not get the %zu placed; place %d; not exported", w,
				       names.count, unit, p->n_devices, unit, p->n_devices, unit);
		if (p->n_devices % (size_t)unit)
			return xp_errf(err, "export: %s: HAMi allocates %s in units of %d and refuses a request of %zu; "
					    "place a multiple of %d; not exported", w, names.count, unit, p->n_devices, unit);
		hami_add(h, names.count, (long long)p->n_devices);
		hami_add(h, names.cores, 100);
		hami_add(h, names.memory_percent, 100);
	}
	h->hami = true;
	if (names.uuid[0]) {
		snprintf(h->uuid_key, sizeof h->uuid_key, "%s", names.uuid);
		if (!uuids_add(&h->uuids, c, p)) {
			free(h->uuids);
			h->uuids = NULL;
		}
	}
	return 0;
}

/* The host CPUs and memory a replica of g was placed with (--cpus, --host-memory), as the
 * container's cpu and memory limits and requests, at container indent n: the scheduler then
 * reserves them as the dry-run counted them. Written after the device limits. */
static void host_resources(FILE *f, int n, const struct xp_task_group *g)
{
	if (!g || (g->cpus <= 0 && g->host_memory_mib <= 0))
		return;
	for (int pass = 0; pass < 2; pass++) {
		if (pass)
			ind(f, n + 4), fputs("requests:\n", f);
		if (g->cpus > 0)
			ind(f, n + 6), fprintf(f, "\"cpu\": \"%d\"\n", g->cpus);
		if (g->host_memory_mib > 0)
			ind(f, n + 6), fprintf(f, "\"memory\": \"%lldMi\"\n", (long long)g->host_memory_mib);
	}
}

/* The limits after the first (container() writes the count), at container indent n. */
static void hami_more_limits(FILE *f, int n, const struct hami_req *h)
{
	for (size_t i = 1; i < h->n; i++)
		ind(f, n + 6), xp_yaml_quote(f, h->name[i]), fprintf(f, ": %lld\n", h->value[i]);
}

/* HAMi's annotations, as entries of an annotations map at indent n: the UUID pin (the devices
 * xpool chose; for a Volcano task, every device its replicas were given, as the template is
 * shared) and, for a Pod, HAMi's GPU policy from the strategy (pack: binpack, spread: spread;
 * Volcano's vGPU plugin takes its policy from its own configuration). */
static void hami_annotations(FILE *f, int n, const struct hami_req *h, const char *uuids, int strategy, bool pod)
{
	if (uuids && h->uuid_key[0])
		ind(f, n), xp_yaml_quote(f, h->uuid_key), fputs(": ", f), xp_yaml_quote(f, uuids), fputc('\n', f);
	const char *policy = strategy == XP_STRAT_PACK ? "binpack" : strategy == XP_STRAT_SPREAD ? "spread" : NULL;
	if (pod && policy)
		ind(f, n), fprintf(f, "\"hami.io/gpu-scheduler-policy\": \"%s\"\n", policy);
}

static int write_k8s(FILE *f, const struct xp_place_result *r, const struct xp_job *job,
		     const struct xp_cluster *c, const struct mset *ms, const struct xp_export_opts *o,
		     struct xp_err *err)
{
	char base[48];
	k8s_name(base, job);
	for (size_t i = 0; i < r->n_replicas; i++) {
		const struct xp_place_replica *p = &r->replicas[i];
		char name[112];
		if (job->n_groups > 1)
			snprintf(name, sizeof name, "%s-g%zu-%zu", base, p->group, i);
		else
			snprintf(name, sizeof name, "%s-%zu", base, i);
		struct hami_req h = {0};
		if (o->flavor == XP_FLAVOR_HAMI && hami_request(ms, c, job, p, false, &h, err) < 0)
			return -1;
		char *res = h.hami ? xp_strdup(h.name[0]) : resource_name(ms, c, p, err);
		if (!res)
			return -1;
		char *devs = xp_asprintf("%s%s%s", p->env_value, p->slice ? " " : "", p->slice ? p->slice : "");
		if (i)
			fputs("---\n", f);
		fputs("apiVersion: \"v1\"\nkind: \"Pod\"\n", f);
		char *rp = mig_new(p, 1);
		const struct xp_mmodel *vm = vendor_meta(ms, c, p, h.hami);
		meta(f, name, job, devs, rp, vm);
		free(rp);
		if (h.hami)
			hami_annotations(f, 4, &h, h.uuids, o->strategy, true);
		fputs("spec:\n  restartPolicy: \"Never\"\n", f);
		node_selector(f, 2, vm);
		const char *nodes[1] = {p->node};
		affinity(f, 2, nodes, 1);
		container(f, 2, res, h.hami ? (size_t)h.value[0] : resource_count(p), p);
		hami_more_limits(f, 2, &h);
		host_resources(f, 2, p->group < job->n_groups ? &job->groups[p->group] : NULL);
		free(h.uuids);
		free(res);
		free(devs);
	}
	return 0;
}

/* A Kubernetes DNS-1123 subdomain (lowercase alphanumerics, '-' and '.', 253 bytes), the
 * pattern Volcano's Job CRD sets on spec.queue. */
static bool dns_subdomain(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > 253 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (!((ch >= 'a' && ch <= 'z') || isdigit(ch) || ch == '-' || ch == '.'))
			return false;
		if (ch == '.' && (s[i + 1] == '.' || s[i + 1] == '-' || s[i - 1] == '-'))
			return false;
	}
	return true;
}

/* The group's HAMi request (its first replica's) and, in *uuids, every device its replicas
 * were given; -1 with err. */
static int hami_task(const struct mset *ms, const struct xp_cluster *c, const struct xp_job *job,
		     const struct xp_place_result *r, const struct xp_place_replica *first, struct hami_req *h,
		     char **uuids, struct xp_err *err)
{
	*uuids = NULL;
	if (hami_request(ms, c, job, first, true, h, err) < 0)
		return -1;
	bool known = h->uuids != NULL;
	for (size_t i = 0; known && i < r->n_replicas; i++)
		if (r->replicas[i].group == first->group)
			known = uuids_add(uuids, c, &r->replicas[i]);
	if (!known) {
		free(*uuids);
		*uuids = NULL;
	}
	return 0;
}

static int write_volcano(FILE *f, const struct xp_place_result *r, const struct xp_job *job,
			 const struct xp_cluster *c, const struct mset *ms, const struct xp_export_opts *o,
			 struct xp_err *err)
{
	char base[48];
	k8s_name(base, job);
	/* Volcano's CRD refuses a queue that is not a DNS subdomain: say so here rather than write
	 * a Job the API server rejects. */
	if (job->queue && !dns_subdomain(job->queue))
		return xp_errf(err, "export volcano: queue '%.60s' is not a Kubernetes DNS subdomain ([a-z0-9.-], "
				    "as Volcano's Job CRD requires of spec.queue); refused", job->queue);
	fputs("apiVersion: \"batch.volcano.sh/v1alpha1\"\nkind: \"Job\"\n", f);
	/* One string of node:devices per replica: a task's pod template is shared, so which replica
	 * got which devices on which node can only be recorded, not pinned, per pod. */
	char *all = xp_strdup("");
	for (size_t i = 0; i < r->n_replicas; i++) {
		/* With its slice, as a Pod's annotation has it ("n1:0 1g.10gb"). */
		const struct xp_place_replica *q = &r->replicas[i];
		char *n = xp_asprintf("%s%s%s:%s%s%s", all, i ? ";" : "", q->node, q->env_value, q->slice ? " " : "",
				      q->slice ? q->slice : "");
		free(all);
		all = n;
	}
	char *rp = mig_new(r->replicas, r->n_replicas);
	meta(f, base, job, all, rp, NULL);
	free(rp);
	free(all);
	/* The gang: every placed replica, or each group's gang minimum when the job may start
	 * with fewer (the rest were pending in the dry-run and are not exported). */
	size_t min_avail = 0;
	for (size_t g = 0; g < job->n_groups; g++) {
		size_t placed = 0;
		for (size_t i = 0; i < r->n_replicas; i++)
			placed += r->replicas[i].group == g;
		size_t gm = job->groups[g].gang_min > 0 ? (size_t)job->groups[g].gang_min : placed;
		min_avail += gm < placed ? gm : placed;
	}
	fprintf(f, "spec:\n  schedulerName: \"volcano\"\n  minAvailable: %zu\n  queue: ", min_avail);
	xp_yaml_quote(f, job->queue ? job->queue : "default");
	fputs("\n  tasks:\n", f);
	for (size_t g = 0; g < job->n_groups; g++) {
		const char **nodes = xp_calloc(r->n_replicas ? r->n_replicas : 1, sizeof *nodes);
		size_t nn = 0, reps = 0;
		const struct xp_place_replica *first = NULL;
		for (size_t i = 0; i < r->n_replicas; i++) {
			const struct xp_place_replica *p = &r->replicas[i];
			if (p->group != g)
				continue;
			if (!first)
				first = p;
			reps++;
			bool seen = false;
			for (size_t k = 0; k < nn && !seen; k++)
				seen = !strcmp(nodes[k], p->node);
			if (!seen)
				nodes[nn++] = p->node;
		}
		if (!first) {
			free(nodes);
			continue;
		}
		char tname[32];
		snprintf(tname, sizeof tname, "group%zu", g);
		struct hami_req h = {0};
		char *uuids = NULL;
		if (o->flavor == XP_FLAVOR_HAMI && hami_task(ms, c, job, r, first, &h, &uuids, err) < 0) {
			free(nodes);
			return -1;
		}
		/* One template per task: its replicas must ask the vendor's scheduler for one rule. */
		const struct xp_mmodel *vm = vendor_meta(ms, c, first, h.hami);
		for (size_t i = 0; i < r->n_replicas; i++)
			if (r->replicas[i].group == g && !same_meta(vm, vendor_meta(ms, c, &r->replicas[i], h.hami))) {
				const struct xp_mmodel *o2 = layout_of(ms, c, &r->replicas[i]), *o1 = layout_of(ms, c, first);
				xp_errf(err, "export volcano: task group%zu has replicas on %s (%s) and %s (%s), whose "
					     "products the vendor's scheduler tells apart by Pod metadata, and a task has "
					     "one Pod template; refused (place them as separate groups)", g, first->node,
					o1 && o1->layout[0] ? o1->layout : "no layout", r->replicas[i].node,
					o2 && o2->layout[0] ? o2->layout : "no layout");
				free(h.uuids);
				free(uuids);
				free(nodes);
				return -1;
			}
		fprintf(f, "  - name: \"%s\"\n    replicas: %zu\n    template:\n      metadata:\n", tname, reps);
		fputs("        labels:\n          \"app.kubernetes.io/managed-by\": \"xpool\"\n", f);
		if (vm)
			kv_map(f, 10, vm->k8s_label, vm->n_k8s_label);
		bool hami_anno = h.hami && uuids && h.uuid_key[0];
		if (hami_anno || (vm && vm->n_k8s_annotation))
			fputs("        annotations:\n", f);
		if (hami_anno)
			hami_annotations(f, 10, &h, uuids, o->strategy, false);
		if (vm)
			kv_map(f, 10, vm->k8s_annotation, vm->n_k8s_annotation);
		fputs("      spec:\n        restartPolicy: \"Never\"\n", f);
		node_selector(f, 8, vm);
		affinity(f, 8, nodes, nn);
		char *res = h.hami ? xp_strdup(h.name[0]) : resource_name(ms, c, first, err);
		if (!res) {
			free(nodes);
			return -1;
		}
		container(f, 8, res, h.hami ? (size_t)h.value[0] : resource_count(first), first);
		hami_more_limits(f, 8, &h);
		host_resources(f, 8, g < job->n_groups ? &job->groups[g] : NULL);
		free(h.uuids);
		free(uuids);
		free(res);
		free(nodes);
	}
	return 0;
}

/* sbatch reads #SBATCH lines with its own tokenizer, not a shell, and some of these values land
 * in shell lines too; rather than trust two quoting rules, a name must be plain to be written. */
static bool plain(const char *s)
{
	if (!s || !*s || *s == '-')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._+-", *s))
			return false;
	return true;
}

/* Writes s single-quoted for the shell: ' becomes '\''. */
static void sh_quote(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	fputc('\'', f);
}

/* An environment variable name the shell takes as it is. */
static bool env_plain(const char *s)
{
	if (!s || !(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

/* Nodes holding the same number of replicas form one component of the job: sbatch asks per
 * node (--gres, --ntasks-per-node), so nodes of one count share one set of options, and a job
 * whose nodes hold different counts becomes a heterogeneous job with a component per count. */
struct slurm_comp {
	size_t per;        /* replicas on each of its nodes */
	size_t n_nodes;
	const char **nodes;
};

/* The gres one replica asks for, "gpu:2" or "gpu:TYPE:1" for a slice (type: its gres type
 * name), "gpu:TYPE:2" for whole devices of a type (--gres-type whole=TYPE), times k. */
static void gres_of(FILE *f, const char *gres, const char *type, const struct xp_place_replica *p, size_t k)
{
	if (p->slice)
		fprintf(f, "%s:%s:%zu", gres, type, k);
	else if (type[0])
		fprintf(f, "%s:%s:%zu", gres, type, k * resource_count(p));
	else
		fprintf(f, "%s:%zu", gres, k * resource_count(p));
}

/* True when node holds a MIG instance (free or in use): Slurm declares each as a typed gres
 * (gpu:1g.10gb), and an untyped gpu:N may be filled with one of them instead of a whole GPU. */
static bool node_has_mig(const struct xp_cluster *c, const char *node)
{
	const struct xp_node *n = xp_cluster_node(c, node);
	for (size_t i = 0; n && i < n->n_devices; i++)
		for (size_t a = 0; (n->devices[i].partition & XP_PART_MIG) && a < n->devices[i].n_allocs; a++)
			if (n->devices[i].allocs[a].slice && n->devices[i].allocs[a].share_pct <= 0)
				return true;
	return false;
}

/* sbatch runs the batch script once, on the first node of the allocation, so per-node shell
 * code there sees only that node. Each replica is therefore a job step of its own: srun with
 * --nodes=1 --ntasks=1 --nodelist=its node and --gres=its count (or MIG type), --exact so
 * that steps sharing a node split it, backgrounded, then the script waits for all. What is
 * pinned: the node, the task count per node, the device count or slice type per task. What
 * Slurm decides: which devices of the node a step gets. For the gpu gres Slurm's own plugin
 * sets CUDA_VISIBLE_DEVICES (ROCR_VISIBLE_DEVICES, ...) to the GPUs it picked, renumbered
 * from 0 when ConstrainDevices fences the step, so xpool's host indices would be wrong there
 * and are only passed as XPOOL_DEVICES; for other gres (npu, mlu) Slurm only counts and sets
 * no variable, so the step sets the manifest's variable to xpool's choice. */
/* The gres type of slice in map ("PROFILE=TYPE[,...]"), copied into out; false when map has
 * no entry for it or the entry is not plain. */
static bool gres_type_of(const char *map, const char *slice, char *out, size_t len)
{
	size_t sl = strlen(slice);
	for (const char *s = map; s && *s;) {
		const char *end = strchr(s, ',');
		size_t n = end ? (size_t)(end - s) : strlen(s);
		if (n > sl + 1 && !strncmp(s, slice, sl) && s[sl] == '=' && n - sl - 1 < len) {
			memcpy(out, s + sl + 1, n - sl - 1);
			out[n - sl - 1] = 0;
			return plain(out);
		}
		s = end ? end + 1 : s + n;
	}
	return false;
}

/* True when a gres type names a MIG profile ("1g.10gb", "h100_3g.40gb", "1g.10gb+me"): digits,
 * "g.", digits, "gb" somewhere in it. */
static bool mig_type(const char *t)
{
	for (const char *p = t; *p; p++) {
		if (!isdigit((unsigned char)*p) || (p > t && isdigit((unsigned char)p[-1])))
			continue;
		const char *q = p;
		while (isdigit((unsigned char)*q))
			q++;
		if (q[0] != 'g' || q[1] != '.' || !isdigit((unsigned char)q[2]))
			continue;
		q += 2;
		while (isdigit((unsigned char)*q))
			q++;
		if (q[0] == 'g' && q[1] == 'b')
			return true;
	}
	return false;
}

/* The type of gres declared in decl (a node's Gres= as scontrol prints it: "gpu:h100:8(S:0-1),
 * gpu:1g.10gb:7,shard:8") that fits want: for a slice the one type that is the profile or ends in
 * _PROFILE or -PROFILE (Slurm's documentation names them h100_1g.10gb); for whole devices (slice
 * NULL) the one type that names no MIG profile, and among several the one the device's model
 * holds. Copied into out; 0 found, 1 none declared for it, 2 several fit. */
static int declared_type(const char *decl, const char *gres, const char *slice, const char *model, char *out,
			 size_t len)
{
	char found[4][128];
	int n = 0;
	size_t gl = strlen(gres);
	for (const char *s = decl; *s;) {
		/* An item ends at a comma outside parentheses (the socket list may hold commas). */
		size_t l = 0;
		int depth = 0;
		while (s[l] && (s[l] != ',' || depth)) {
			depth += s[l] == '(' ? 1 : s[l] == ')' && depth > 0 ? -1 : 0;
			l++;
		}
		const char *paren = memchr(s, '(', l);
		size_t k = paren ? (size_t)(paren - s) : l;
		if (k > gl + 1 && !strncmp(s, gres, gl) && s[gl] == ':') {
			const char *t = s + gl + 1;
			size_t tl = (size_t)(s + k - t);
			const char *colon = memchr(t, ':', tl);
			bool typed = colon || !isdigit((unsigned char)t[0]);
			if (colon)
				tl = (size_t)(colon - t);
			char type[128];
			if (typed && tl > 0 && tl < sizeof type) {
				memcpy(type, t, tl);
				type[tl] = 0;
				bool fits;
				if (slice) {
					size_t sl = strlen(slice);
					fits = !strcmp(type, slice) ||
					       (tl > sl + 1 && !strcmp(type + tl - sl, slice) && strchr("_-", type[tl - sl - 1]));
				} else
					fits = !mig_type(type);
				bool dup = false;
				for (int i = 0; i < n; i++)
					dup = dup || !strcmp(found[i], type);
				if (fits && !dup && n < 4) {
					snprintf(found[n], sizeof found[n], "%s", type);
					n++;
				}
			}
		}
		s += l + (s[l] == ',');
	}
	if (n > 1 && !slice && model) {
		/* Whole devices of several types: the one the placed device is, by its whole name
		 * first ("a100"), else as a word of it ("NVIDIA A100-SXM4-80GB" holds a100, not
		 * a10). */
		for (int i = 0; i < n; i++)
			if (!strcasecmp(model, found[i])) {
				snprintf(out, len, "%.127s", found[i]);
				return 0;
			}
		int m = -1, hits = 0;
		for (int i = 0; i < n; i++) {
			size_t fl = strlen(found[i]);
			for (const char *p = model; (p = strcasestr(p, found[i])); p++)
				if ((p == model || !isalnum((unsigned char)p[-1])) && !isalnum((unsigned char)p[fl])) {
					m = i, hits++;
					break;
				}
		}
		if (hits == 1) {
			snprintf(out, len, "%.127s", found[m]);
			return 0;
		}
	}
	if (n != 1)
		return n ? 2 : 1;
	snprintf(out, len, "%.127s", found[0]);
	return 0;
}

/* The site's gres type for what r's replicas ask, from Slurm's own declaration of their nodes
 * (the fact slurm.gres: Gres= as scontrol printed it, on nodes read with --slurm): the names a
 * site gave its types, rather than a guess. type "" when no replica's node carries one or,
 * for whole devices, none is declared; node names the node it came from. -1 with err when a
 * slice has no type there or the nodes disagree. */
static int slurm_site_type(const struct xp_cluster *c, const struct xp_place_result *r, const char *gres,
			   const char *slice, char *type, size_t len, const char **node, struct xp_err *err)
{
	type[0] = 0;
	*node = NULL;
	const struct xp_node *last = NULL;
	for (size_t i = 0; i < r->n_replicas; i++) {
		const struct xp_node *n = xp_cluster_node(c, r->replicas[i].node);
		if (n && n == last)
			continue; /* replicas on one node ask one type */
		last = n;
		const char *decl = n ? xp_labels_get(&n->facts, "slurm.gres") : NULL;
		if (!decl)
			continue;
		const struct xp_device *d = first_device(c, &r->replicas[i]);
		char t[128];
		int rc = declared_type(decl, gres, slice, d ? d->model : NULL, t, sizeof t);
		if (rc == 1 && !slice)
			continue; /* only untyped whole devices there */
		if (rc == 1)
			return xp_errf(err, "export slurm: node %s: Slurm declares Gres=%.200s, no %s type for slice %s "
					    "(PROFILE, or ending in _PROFILE); name it with --gres-type %s=TYPE",
				       n->name, decl, gres, slice, slice);
		if (rc == 2) {
			if (!slice)
				continue; /* several whole types and the device's model names none: untyped */
			return xp_errf(err, "export slurm: node %s: Slurm declares Gres=%.200s, several %s types for "
					    "slice %s; name one with --gres-type %s=TYPE",
				       n->name, decl, gres, slice, slice);
		}
		if (!plain(t))
			return xp_errf(err, "export slurm: node %s: Slurm's gres type is not plain [A-Za-z0-9._+-]; refused",
				       n->name);
		if (type[0] && strcmp(type, t))
			return xp_errf(err, "export slurm: Slurm names the type %s on %s and %s on %s; name one with "
					    "--gres-type",
				       type, *node, t, n->name);
		if (!type[0]) {
			snprintf(type, len, "%s", t);
			*node = n->name;
		}
	}
	return 0;
}

static int write_slurm(FILE *f, const struct xp_place_result *r, const struct xp_job *job,
		       const struct xp_cluster *c, const struct mset *ms, const struct xp_export_opts *o,
		       struct xp_err *err)
{
	const char *partition = o->partition;
	if (job->n_groups != 1)
		return xp_errf(err, "export slurm: %zu task groups; one sbatch script holds one group", job->n_groups);
	if (!r->n_replicas)
		return xp_errf(err, "export slurm: no replicas");
	const char *jname = job->name ? job->name : "xpool-job";
	if (!plain(jname))
		return xp_errf(err, "export slurm: job name not plain [A-Za-z0-9._+-]; refused for sbatch");
	if (partition && !plain(partition))
		return xp_errf(err, "export slurm: partition not plain [A-Za-z0-9._+-]; refused for sbatch");
	/* Distinct nodes in order of first use, and replicas on each. */
	const char **nodes = xp_calloc(r->n_replicas, sizeof *nodes);
	size_t *per = xp_calloc(r->n_replicas, sizeof *per);
	struct slurm_comp *comp = xp_calloc(r->n_replicas, sizeof *comp);
	size_t nn = 0, ncomp = 0;
	int rc = 0;
	for (size_t i = 0; i < r->n_replicas; i++) {
		const struct xp_place_replica *p = &r->replicas[i];
		if (!plain(p->node) || (p->slice && !plain(p->slice))) {
			rc = xp_errf(err, "export slurm: node or slice name not plain [A-Za-z0-9._+-]; refused");
			goto out;
		}
		if (!env_plain(p->env_name)) {
			rc = xp_errf(err, "export slurm: device variable name not plain [A-Za-z0-9_]; refused");
			goto out;
		}
		size_t k = 0;
		while (k < nn && strcmp(nodes[k], p->node))
			k++;
		if (k == nn)
			nodes[nn++] = p->node;
		per[k]++;
	}
	for (size_t k = 0; k < nn; k++) {
		size_t g = 0;
		while (g < ncomp && comp[g].per != per[k])
			g++;
		if (g == ncomp) {
			comp[ncomp].per = per[k];
			comp[ncomp++].nodes = xp_calloc(nn, sizeof *comp[g].nodes);
		}
		comp[g].nodes[comp[g].n_nodes++] = nodes[k];
	}
	const struct xp_place_replica *p0 = &r->replicas[0];
	const struct xp_task_group *g0 = &job->groups[0];
	/* The gres name is the manifest's slurm_gres of the first replica's first device. */
	const struct xp_device *d0 = first_device(c, p0);
	const struct xp_mmodel *md0;
	const struct xp_manifest *m0 = manifest_of(ms, d0, &md0);
	const char *gres = m0 ? xp_manifest_slurm_gres(m0, md0) : NULL;
	if (!gres) {
		char w[256];
		what(w, sizeof w, p0, d0);
		rc = m0 ? xp_errf(err, "export slurm: %s: manifest %s gives no slurm_gres", w, m0->name)
			: xp_errf(err, "export slurm: %s: no adapter manifest describes it, so its gres name is "
				       "unknown", w);
		goto out;
	}
	if (!plain(gres)) {
		rc = xp_errf(err, "export slurm: manifest %s: slurm_gres not plain [A-Za-z0-9._+-]; refused", m0->name);
		goto out;
	}
	/* A slice's gres type is the site's name for it: Slurm matches types literally, and
	 * sites name MIG types as they like (Slurm's docs: h100_1g.10gb). --gres-type maps them;
	 * without it the profile name is the type, and the script says which was used. */
	char type[128] = "";
	/* Where the nodes came from Slurm (--slurm), its Gres= declarations name the site's types;
	 * --gres-type still wins. */
	const char *site_node = NULL;
	bool mapped = o->gres_types && (p0->slice || strstr(o->gres_types, "whole="));
	if (!mapped && slurm_site_type(c, r, gres, p0->slice, type, sizeof type, &site_node, err) < 0) {
		rc = -1;
		goto out;
	}
	if (site_node) {
		/* Slurm's own name for it */
	} else if (p0->slice) {
		if (o->gres_types && !gres_type_of(o->gres_types, p0->slice, type, sizeof type)) {
			rc = xp_errf(err, "export slurm: --gres-type names no plain type for slice %s "
					  "(PROFILE=TYPE[,...]); refused", p0->slice);
			goto out;
		}
		if (!o->gres_types)
			snprintf(type, sizeof type, "%s", p0->slice);
	} else if (o->gres_types && strstr(o->gres_types, "whole=") &&
		   !gres_type_of(o->gres_types, "whole", type, sizeof type)) {
		rc = xp_errf(err, "export slurm: --gres-type whole=TYPE names no plain type; refused");
		goto out;
	} else if (!type[0]) {
		/* An untyped gpu:N on a node with MIG instances may get an instance, not a GPU. */
		for (size_t i = 0; i < r->n_replicas; i++)
			if (node_has_mig(c, r->replicas[i].node)) {
				rc = xp_errf(err, "export slurm: node %s holds MIG instances, which Slurm may hand an "
						  "untyped --gres=%s:N instead of whole GPUs; name the whole GPUs' gres type: "
						  "--gres-type whole=TYPE; refused", r->replicas[i].node, gres);
				goto out;
			}
	}
	for (size_t i = 1; i < r->n_replicas; i++)
		if ((r->replicas[i].slice == NULL) != (p0->slice == NULL) ||
		    (p0->slice && strcmp(r->replicas[i].slice, p0->slice))) {
			rc = xp_errf(err, "export slurm: replicas of different slices; refused");
			goto out;
		}
	/* Slurm's gpu gres plugin sets the visible-devices variable itself (see above). */
	bool slurm_sets_env = !strcmp(gres, "gpu");
	fputs("#!/bin/bash\n", f);
	fprintf(f, "#SBATCH --job-name=%s\n", jname);
	if (ncomp > 1)
		fprintf(f, "# %zu nodes hold different numbers of replicas: a heterogeneous job, one component\n"
			   "# per count, so that each node is asked for exactly what was placed on it\n", nn);
	for (size_t g = 0; g < ncomp; g++) {
		if (g)
			fputs("#SBATCH hetjob\n", f);
		fprintf(f, "#SBATCH --nodes=%zu\n", comp[g].n_nodes);
		fprintf(f, "#SBATCH --ntasks=%zu\n", comp[g].n_nodes * comp[g].per);
		fprintf(f, "#SBATCH --ntasks-per-node=%zu\n", comp[g].per);
		fputs("#SBATCH --nodelist=", f);
		for (size_t k = 0; k < comp[g].n_nodes; k++)
			fprintf(f, "%s%s", k ? "," : "", comp[g].nodes[k]);
		fputs("\n#SBATCH --gres=", f);
		/* --gres counts per node: the replicas on each of these nodes times what each asks
		 * for. A slice is a typed gres (Slurm's MIG support: gpu:1g.10gb:N). */
		gres_of(f, gres, type, p0, comp[g].per);
		fputc('\n', f);
		/* The host CPUs and memory placed with each replica: CPUs per task (a replica is one
		 * task), memory per node (sbatch's --mem), the replicas on each node times each's. */
		if (g0->cpus > 0)
			fprintf(f, "#SBATCH --cpus-per-task=%d\n", g0->cpus);
		if (g0->host_memory_mib > 0)
			fprintf(f, "#SBATCH --mem=%lldM\n", (long long)comp[g].per * (long long)g0->host_memory_mib);
		/* A queue is xpool's (or Volcano's, Kueue's) notion: Slurm refuses a partition that
		 * does not exist, so only the partition named for this export is written (in each
		 * component: a component without one gets the default partition). */
		if (partition)
			fprintf(f, "#SBATCH --partition=%s\n", partition);
	}
	if (site_node && p0->slice)
		fprintf(f, "# gres type for slice %s: %s (Slurm's Gres= on %s)\n", p0->slice, type, site_node);
	else if (site_node)
		fprintf(f, "# gres type for whole devices: %s (Slurm's Gres= on %s)\n", type, site_node);
	else if (p0->slice)
		fprintf(f, "# gres type for slice %s: %s (%s)\n", p0->slice, type,
			o->gres_types ? "--gres-type" : "the profile name; a site naming its types otherwise needs --gres-type");
	else if (type[0])
		fprintf(f, "# gres type for whole devices: %s (--gres-type whole=)\n", type);
	char *rp = mig_new(r->replicas, r->n_replicas);
	if (rp)
		fprintf(f, "# MIG: new instances (NODE:GPU PROFILE) %s: Slurm cannot create MIG instances; "
			   "repartition these GPUs and declare them in gres.conf first\n", rp);
	free(rp);
	fputs("# Run as: sbatch THIS-SCRIPT COMMAND [ARG...]. The script runs once, on the first node:\n"
	      "# each replica is a job step on its node with its devices (see xpool(1), place --export).\n", f);
	fputs("[ $# -gt 0 ] || { echo \"usage: sbatch $0 COMMAND [ARG...]\" >&2; exit 2; }\n", f);
	fputs("pids=()\n", f);
	for (size_t i = 0; i < r->n_replicas; i++) {
		const struct xp_place_replica *p = &r->replicas[i];
		size_t k = 0;
		while (k < nn && strcmp(nodes[k], p->node))
			k++;
		size_t g = 0;
		while (g < ncomp && comp[g].per != per[k])
			g++;
		fputs("srun", f);
		if (ncomp > 1)
			fprintf(f, " --het-group=%zu", g);
		fputs(" --nodes=1 --ntasks=1 --exact --nodelist=", f);
		sh_quote(f, p->node);
		fputs(" --gres=", f);
		gres_of(f, gres, type, p, 1);
		/* Each step its replica's share of the allocation: srun's --mem is the step's on its
		 * one node. */
		if (g0->cpus > 0)
			fprintf(f, " --cpus-per-task=%d", g0->cpus);
		if (g0->host_memory_mib > 0)
			fprintf(f, " --mem=%lldM", (long long)g0->host_memory_mib);
		fputs(" env XPOOL_DEVICES=", f);
		sh_quote(f, p->env_value ? p->env_value : "");
		if (!slurm_sets_env) {
			fprintf(f, " %s=", p->env_name);
			sh_quote(f, p->env_value ? p->env_value : "");
		}
		fputs(" \"$@\" &\npids+=($!)\n", f);
	}
	fputs("rc=0\nfor p in \"${pids[@]}\"; do wait \"$p\" || rc=$?; done\nexit $rc\n", f);
out:
	for (size_t g = 0; g < ncomp; g++)
		free(comp[g].nodes);
	free(comp);
	free(nodes);
	free(per);
	return rc;
}

char *xp_place_export(int fmt, const struct xp_place_result *r, const struct xp_job *job,
		      const struct xp_cluster *c, const struct xp_manifest *const *manifests, size_t n,
		      const struct xp_export_opts *o, struct xp_err *err)
{
	static const struct xp_export_opts none = {0};
	if (!o)
		o = &none;
	struct mset ms = {manifests, manifests ? n : 0};
	if (!r || !r->placed) {
		xp_errf(err, "export: the job was not placed");
		return NULL;
	}
	if (o->flavor && fmt == XP_EXPORT_SLURM) {
		xp_errf(err, "export: the %s flavour goes with k8s and volcano, not slurm", xp_export_flavor_name(o->flavor));
		return NULL;
	}
	/* A soft share needs a sharing layer (HAMi's gpucores/gpumem, Slurm's shard): a plain
	 * Pod, Volcano task or sbatch line would hand the job the whole device, so that the
	 * export would not run as placed. HAMi's is written with --flavor hami (hami_request). */
	for (size_t i = 0; o->flavor != XP_FLAVOR_HAMI && i < r->n_replicas; i++)
		if (r->replicas[i].slice && strncmp(r->replicas[i].slice, "share:", 6) == 0) {
			if (fmt == XP_EXPORT_SLURM)
				xp_errf(err, "export: replica %zu on %s is a soft share (%s%%): Slurm without a sharing "
					     "layer (shards) would give it the whole device; not exported",
					i, r->replicas[i].node, r->replicas[i].slice + 6);
			else
				xp_errf(err, "export: replica %zu on %s is a soft share (%s%%): a plain %s would get "
					     "the whole device; with HAMi installed, export it with --flavor hami; "
					     "not exported",
					i, r->replicas[i].node, r->replicas[i].slice + 6,
					fmt == XP_EXPORT_VOLCANO ? "Volcano task" : "Pod");
			return NULL;
		}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		xp_errf(err, "export: out of memory");
		return NULL;
	}
	int rc = 0;
	switch (fmt) {
	case XP_EXPORT_K8S:
		rc = write_k8s(f, r, job, c, &ms, o, err);
		break;
	case XP_EXPORT_VOLCANO:
		rc = write_volcano(f, r, job, c, &ms, o, err);
		break;
	case XP_EXPORT_SLURM:
		rc = write_slurm(f, r, job, c, &ms, o, err);
		break;
	default:
		rc = xp_errf(err, "export: unknown format %d", fmt);
	}
	fclose(f);
	if (rc < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
