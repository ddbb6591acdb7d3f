/* model.c: constructors, destructors and lookups of the resource model. */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "format.h"
#include "istr.h"
#include "names.h"
#include "xp.h"

static const char *const state_names[XP_NODE_STATE_COUNT] = {
	"up", "degraded", "unreachable", "draining", "down"};
static const char *const health_names[XP_HEALTH_COUNT] = {"unknown", "ok", "warn", "fail"};
static const char *const access_names[XP_MEM_ACCESS_COUNT] = {"unknown", "explicit", "unified"};
/* Spelling of each link class; NV/HCCS/XGMI/MLU carry a link count after the name. */
static const char *const link_names[XP_LINK_CLASS_COUNT] = {
	"X", "NV", "HCCS", "XGMI", "MLU", "PIX", "PXB", "PHB", "NODE", "SYS", "?"};

/* The enums' spellings, printed and parsed exactly (case-sensitive); "unknown" out of range. */
XP_NAMES_DEFINE(xp_node_state, state_names, XP_NODE_STATE_COUNT)
XP_NAMES_DEFINE(xp_health, health_names, XP_HEALTH_COUNT)
XP_NAMES_DEFINE(xp_mem_access, access_names, XP_MEM_ACCESS_COUNT)

static bool link_has_count(int cls)
{
	return cls == XP_LINK_NVLINK || cls == XP_LINK_HCCS || cls == XP_LINK_XGMI ||
	       cls == XP_LINK_MLULINK;
}

const char *xp_link_str(struct xp_link l, char *buf, size_t len)
{
	int cls = l.cls < XP_LINK_CLASS_COUNT ? l.cls : XP_LINK_UNKNOWN;
	if (link_has_count(cls) && l.count)
		snprintf(buf, len, "%s%u", link_names[cls], (unsigned)l.count);
	else
		snprintf(buf, len, "%s", link_names[cls]);
	return buf;
}

int xp_link_parse(const char *s, struct xp_link *out)
{
	if (!s || !*s)
		return -1;
	for (int c = 0; c < XP_LINK_CLASS_COUNT; c++) {
		size_t n = strlen(link_names[c]);
		if (strncmp(s, link_names[c], n) != 0)
			continue;
		const char *rest = s + n;
		if (!*rest) {
			/* topo -m always writes NV with its link count; other fabrics may stand alone. */
			if (c == XP_LINK_NVLINK)
				return -1;
			out->cls = (uint8_t)c;
			out->count = 0;
			return 0;
		}
		if (!link_has_count(c))
			continue;
		/* Digits by hand (as strtol would take them, without its sign, space and locale
		 * handling): a 10,000-node file has 640,000 cells. */
		unsigned k = 0;
		for (const char *q = rest; *q; q++) {
			if (*q < '0' || *q > '9')
				return -1;
			k = k * 10 + (unsigned)(*q - '0');
			if (k > 255)
				return -1;
		}
		if (k < 1)
			return -1;
		out->cls = (uint8_t)c;
		out->count = (uint8_t)k;
		return 0;
	}
	return -1;
}

int xp_link_rank(struct xp_link l)
{
	switch (l.cls) {
	case XP_LINK_SELF: return 0;
	case XP_LINK_NVLINK:
	case XP_LINK_HCCS:
	case XP_LINK_XGMI:
	case XP_LINK_MLULINK: return 1;
	case XP_LINK_PIX: return 2;
	case XP_LINK_PXB: return 3;
	case XP_LINK_PHB: return 4;
	case XP_LINK_NODE: return 5;
	case XP_LINK_SYS: return 6;
	default: return 7;
	}
}

void xp_labels_set(struct xp_labels *l, const char *key, const char *value)
{
	for (size_t i = 0; i < l->n; i++) {
		if (strcmp(l->keys[i], key) == 0) {
			free(l->values[i]);
			l->values[i] = xp_strdup(value);
			return;
		}
	}
	xp_labels_append(l, key, value);
}

void xp_labels_append(struct xp_labels *l, const char *key, const char *value)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 4;
		l->keys = xp_realloc(l->keys, l->cap * sizeof *l->keys);
		l->values = xp_realloc(l->values, l->cap * sizeof *l->values);
	}
	l->keys[l->n] = xp_strdup(key);
	l->values[l->n] = xp_strdup(value);
	l->n++;
}

const char *xp_labels_get(const struct xp_labels *l, const char *key)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->keys[i], key) == 0)
			return l->values[i];
	return NULL;
}

void xp_labels_clear(struct xp_labels *l)
{
	xp_strv_free(l->keys, l->n);
	xp_strv_free(l->values, l->n);
	memset(l, 0, sizeof *l);
}

void xp_strv_add(char ***v, size_t *n, const char *s)
{
	*v = xp_realloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = xp_strdup(s);
}

void xp_strv_add_once(char ***v, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*v)[i], s) == 0)
			return;
	xp_strv_add(v, n, s);
}

void xp_strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

struct xp_cluster *xp_cluster_new(void)
{
	return xp_calloc(1, sizeof(struct xp_cluster));
}

void xp_cluster_free(struct xp_cluster *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_nodes; i++)
		xp_node_free(c->nodes[i]);
	free(c->nodes);
	free(c);
}

void xp_cluster_add(struct xp_cluster *c, struct xp_node *n)
{
	xp_grow(&c->nodes, sizeof *c->nodes, c->n_nodes, &c->cap_nodes);
	c->nodes[c->n_nodes++] = n;
	c->generation++;
}

struct xp_node *xp_cluster_node(const struct xp_cluster *c, const char *name)
{
	for (size_t i = 0; i < c->n_nodes; i++)
		if (c->nodes[i]->name && strcmp(c->nodes[i]->name, name) == 0)
			return c->nodes[i];
	return NULL;
}

size_t xp_cluster_device_count(const struct xp_cluster *c)
{
	size_t n = 0;
	for (size_t i = 0; i < c->n_nodes; i++)
		n += c->nodes[i]->n_devices;
	return n;
}

struct xp_node *xp_node_new(const char *name)
{
	struct xp_node *n = xp_calloc(1, sizeof *n);
	n->name = xp_strdup(name);
	n->state = XP_NODE_UP;
	n->memory_mib = -1;
	n->cost_per_hour = XP_NA;
	return n;
}

static void device_free(struct xp_device *d)
{
	xp_istr_drop(d->vendor);
	xp_istr_drop(d->model);
	xp_istr_drop(d->arch);
	free(d->uuid);
	free(d->pci_bus_id);
	xp_istr_drop(d->pci_id);
	xp_strv_free(d->pci_path, d->n_pci_path);
	xp_strv_free(d->os_devices, d->n_os_devices);
	xp_istr_drop(d->driver);
	xp_istr_drop(d->firmware);
	xp_istr_drop(d->runtime);
	for (size_t i = 0; i < d->n_peaks; i++) {
		xp_istr_drop(d->peaks[i].precision);
		xp_istr_drop(d->peaks[i].unit);
	}
	free(d->peaks);
	xp_istr_drop(d->affinity_group);
	xp_istr_drop(d->ecu_basis);
	xp_strv_free(d->health_reasons, d->n_health_reasons);
	for (size_t i = 0; i < d->n_allocs; i++) {
		free(d->allocs[i].slice);
		free(d->allocs[i].owner);
		free(d->allocs[i].uuid);
	}
	free(d->allocs);
	xp_device_procs_clear(d);
}

void xp_device_procs_clear(struct xp_device *d)
{
	for (size_t i = 0; i < d->n_procs; i++) {
		free(d->procs[i].user);
		free(d->procs[i].command);
	}
	free(d->procs);
	d->procs = NULL;
	d->n_procs = 0;
	d->procs_known = false;
}


struct xp_node *xp_node_ref(struct xp_node *n)
{
	__atomic_fetch_add(&n->refs, 1, __ATOMIC_RELAXED);
	return n;
}

void xp_node_free(struct xp_node *n)
{
	if (!n)
		return;
	/* refs counts the other owners: whoever finds none left frees (0 wraps in that thread only). */
	if (__atomic_fetch_sub(&n->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	free(n->name);
	free(n->source);
	free(n->from_file);
	xp_labels_clear(&n->facts);
	xp_labels_clear(&n->governance);
	xp_labels_clear(&n->validation);
	free(n->zone);
	free(n->rack);
	free(n->sw);
	free(n->cpu_model);
	for (size_t i = 0; i < n->n_packages; i++) {
		free(n->packages[i].model);
		free(n->packages[i].cpus);
	}
	free(n->packages);
	for (size_t i = 0; i < n->n_numa; i++)
		free(n->numa[i].cpus);
	free(n->numa);
	for (size_t i = 0; i < n->n_nics; i++) {
		free(n->nics[i].name);
		free(n->nics[i].pci_bus_id);
		free(n->nics[i].rdma);
		free(n->nics[i].address);
	}
	free(n->nics);
	for (size_t i = 0; i < n->n_pci; i++) {
		free(n->pci[i].bus_id);
		xp_istr_drop(n->pci[i].pci_id);
		xp_istr_drop(n->pci[i].name);
		xp_strv_free(n->pci[i].os_devices, n->pci[i].n_os_devices);
	}
	free(n->pci);
	for (size_t i = 0; i < n->n_devices; i++)
		device_free(&n->devices[i]);
	free(n->devices);
	free(n->links);
	xp_strv_free(n->warnings, n->n_warnings);
	free(n);
}

/* A copy of an array of n elements with room for append(): its capacity is the next power of
 * two of its length, the rule append() relies on. */
static void *dup_array(const void *src, size_t n, size_t sz)
{
	if (!n)
		return NULL;
	size_t cap = 1;
	while (cap < n)
		cap *= 2;
	void *p = xp_malloc(cap * sz);
	memcpy(p, src, n * sz);
	return p;
}

static char **strv_dup(char *const *v, size_t n)
{
	if (!n)
		return NULL;
	char **o = xp_malloc(n * sizeof *o);
	for (size_t i = 0; i < n; i++)
		o[i] = xp_strdup(v[i]);
	return o;
}

static void labels_dup(struct xp_labels *dst, const struct xp_labels *src)
{
	*dst = (struct xp_labels){0};
	for (size_t i = 0; i < src->n; i++)
		xp_labels_set(dst, src->keys[i], src->values[i]);
}

static void device_dup(struct xp_device *d)
{
	d->vendor = xp_istr(d->vendor);
	d->model = xp_istr(d->model);
	d->arch = xp_istr(d->arch);
	d->uuid = xp_strdup(d->uuid);
	d->pci_bus_id = xp_strdup(d->pci_bus_id);
	d->pci_id = xp_istr(d->pci_id);
	d->pci_path = strv_dup(d->pci_path, d->n_pci_path);
	d->os_devices = strv_dup(d->os_devices, d->n_os_devices);
	d->driver = xp_istr(d->driver);
	d->firmware = xp_istr(d->firmware);
	d->runtime = xp_istr(d->runtime);
	d->peaks = dup_array(d->peaks, d->n_peaks, sizeof *d->peaks);
	for (size_t i = 0; i < d->n_peaks; i++) {
		d->peaks[i].precision = xp_istr(d->peaks[i].precision);
		d->peaks[i].unit = xp_istr(d->peaks[i].unit);
	}
	d->ecu_basis = xp_istr(d->ecu_basis);
	d->affinity_group = xp_istr(d->affinity_group);
	d->health_reasons = strv_dup(d->health_reasons, d->n_health_reasons);
	d->allocs = dup_array(d->allocs, d->n_allocs, sizeof *d->allocs);
	for (size_t i = 0; i < d->n_allocs; i++) {
		d->allocs[i].slice = xp_strdup(d->allocs[i].slice);
		d->allocs[i].owner = xp_strdup(d->allocs[i].owner);
		d->allocs[i].uuid = xp_strdup(d->allocs[i].uuid);
	}
	d->procs = dup_array(d->procs, d->n_procs, sizeof *d->procs);
	for (size_t i = 0; i < d->n_procs; i++) {
		d->procs[i].user = xp_strdup(d->procs[i].user);
		d->procs[i].command = xp_strdup(d->procs[i].command);
	}
}

struct xp_node *xp_node_clone(const struct xp_node *src)
{
	struct xp_node *n = xp_malloc(sizeof *n);
	*n = *src; /* the numbers; every pointer is replaced below */
	n->refs = 0; /* the copy has one owner */
	n->name = xp_strdup(src->name);
	n->source = xp_strdup(src->source);
	n->from_file = xp_strdup(src->from_file);
	labels_dup(&n->facts, &src->facts);
	labels_dup(&n->governance, &src->governance);
	labels_dup(&n->validation, &src->validation);
	n->zone = xp_strdup(src->zone);
	n->rack = xp_strdup(src->rack);
	n->sw = xp_strdup(src->sw);
	n->cpu_model = xp_strdup(src->cpu_model);
	n->packages = dup_array(src->packages, src->n_packages, sizeof *n->packages);
	for (size_t i = 0; i < n->n_packages; i++) {
		n->packages[i].model = xp_strdup(n->packages[i].model);
		n->packages[i].cpus = xp_strdup(n->packages[i].cpus);
	}
	n->numa = dup_array(src->numa, src->n_numa, sizeof *n->numa);
	for (size_t i = 0; i < n->n_numa; i++)
		n->numa[i].cpus = xp_strdup(n->numa[i].cpus);
	n->nics = dup_array(src->nics, src->n_nics, sizeof *n->nics);
	for (size_t i = 0; i < n->n_nics; i++) {
		n->nics[i].name = xp_strdup(n->nics[i].name);
		n->nics[i].pci_bus_id = xp_strdup(n->nics[i].pci_bus_id);
		n->nics[i].rdma = xp_strdup(n->nics[i].rdma);
		n->nics[i].address = xp_strdup(n->nics[i].address);
	}
	n->pci = dup_array(src->pci, src->n_pci, sizeof *n->pci);
	for (size_t i = 0; i < n->n_pci; i++) {
		n->pci[i].bus_id = xp_strdup(n->pci[i].bus_id);
		n->pci[i].pci_id = xp_istr(n->pci[i].pci_id);
		n->pci[i].name = xp_istr(n->pci[i].name);
		n->pci[i].os_devices = strv_dup(n->pci[i].os_devices, n->pci[i].n_os_devices);
	}
	n->devices = dup_array(src->devices, src->n_devices, sizeof *n->devices);
	for (size_t i = 0; i < n->n_devices; i++)
		device_dup(&n->devices[i]);
	n->links = src->links ? dup_array(src->links, src->n_devices * src->n_devices, sizeof *n->links) : NULL;
	n->warnings = strv_dup(src->warnings, src->n_warnings);
	return n;
}

/* Appends one zeroed element to an array whose capacity is implicitly the next
 * power of two of its length, so appends stay amortized O(1) without a cap field. */
static void *append(void *arr, size_t *n, size_t sz)
{
	void **a = arr;
	size_t k = *n;
	if (k == 0 || (k & (k - 1)) == 0)
		*a = xp_realloc(*a, (k ? k * 2 : 1) * sz);
	char *p = (char *)*a + k * sz;
	memset(p, 0, sz);
	(*n)++;
	return p;
}

struct xp_proc *xp_device_add_proc(struct xp_device *d)
{
	struct xp_proc *p = append(&d->procs, &d->n_procs, sizeof *p);
	p->pid = -1;
	p->memory_mib = -1;
	p->util_pct = XP_NA;
	d->procs_known = true;
	return p;
}

struct xp_device *xp_node_add_device(struct xp_node *n)
{
	struct xp_device *d = append(&n->devices, &n->n_devices, sizeof *d);
	xp_device_init(d, (int)n->n_devices - 1);
	return d;
}

void xp_device_init(struct xp_device *d, int index)
{
	memset(d, 0, sizeof *d);
	d->index = index;
	d->vendor_index = -1;
	d->pci_class = -1;
	d->numa = -1;
	d->memory_mib = -1;
	d->memory_used_mib = -1;
	d->ecu = XP_NA;
	d->temperature_c = XP_NA;
	d->power_w = XP_NA;
	d->utilization_pct = XP_NA;
	d->power_limit_w = XP_NA;
	d->retired_pages = -1;
	d->ecc_corrected = -1;
	d->ecc_uncorrected = -1;
	d->partition = XP_PART_WHOLE;
	d->mig_mode = -1;
}

struct xp_numa *xp_node_add_numa(struct xp_node *n)
{
	struct xp_numa *m = append(&n->numa, &n->n_numa, sizeof *m);
	m->memory_mib = -1;
	m->package = -1;
	return m;
}

struct xp_package *xp_node_add_package(struct xp_node *n)
{
	return append(&n->packages, &n->n_packages, sizeof(struct xp_package));
}

struct xp_nic *xp_node_add_nic(struct xp_node *n)
{
	struct xp_nic *c = append(&n->nics, &n->n_nics, sizeof *c);
	c->numa = -1;
	c->speed_mbps = -1;
	return c;
}

struct xp_pci *xp_node_add_pci(struct xp_node *n)
{
	struct xp_pci *p = append(&n->pci, &n->n_pci, sizeof *p);
	xp_pci_init(p);
	return p;
}

void xp_pci_init(struct xp_pci *p)
{
	memset(p, 0, sizeof *p);
	p->pci_class = -1;
	p->numa = -1;
	p->accel = -1;
}

void *xp_node_array(const void *src, size_t n, size_t size)
{
	return dup_array(src, n, size);
}

void xp_node_links_reset(struct xp_node *n)
{
	free(n->links);
	n->links = NULL;
	size_t k = n->n_devices;
	if (!k)
		return;
	n->links = xp_calloc(k * k, sizeof *n->links);
	for (size_t a = 0; a < k; a++)
		for (size_t b = 0; b < k; b++)
			n->links[a * k + b].cls = a == b ? XP_LINK_SELF : XP_LINK_UNKNOWN;
}

struct xp_link *xp_node_link(const struct xp_node *n, size_t a, size_t b)
{
	return &n->links[a * n->n_devices + b];
}

struct xp_device *xp_node_device_by_bus(const struct xp_node *n, const char *bus_id)
{
	for (size_t i = 0; i < n->n_devices; i++)
		if (n->devices[i].pci_bus_id && strcasecmp(n->devices[i].pci_bus_id, bus_id) == 0)
			return &n->devices[i];
	return NULL;
}

struct xp_numa *xp_node_numa_by_id(const struct xp_node *n, int id)
{
	for (size_t i = 0; i < n->n_numa; i++)
		if (n->numa[i].id == id)
			return &n->numa[i];
	return NULL;
}

/* Cleans s in place and cuts it at max bytes (on a character boundary). One rule for every
 * string read from outside, the one error messages and the command-line output apply
 * (xp_unsafe_len, as xp_mask_controls uses it): C0 and DEL, C1 (U+0080-U+009F, which
 * terminals read as CSI and friends), bytes that are not UTF-8 and bidirectional controls
 * (U+202E and friends, which reorder what is shown around them) each become one '?':
 * nothing from a device may steer a terminal. */
static void clean_str(char *s, size_t max)
{
	if (!s)
		return;
	size_t i = 0, o = 0;
	while (s[i] && i < max) {
		size_t b = xp_unsafe_len(s + i);
		if (b) {
			s[o++] = '?';
			i += b;
			continue;
		}
		size_t k = xp_utf8_len((const unsigned char *)s + i, 4);
		if (i + k > max)
			break;
		memmove(s + o, s + i, k);
		o += k;
		i += k;
	}
	s[o] = '\0';
}

/* An interned string is shared: a dirty one is replaced by a cleaned copy, never edited. */
static void clean_istr(const char **f, size_t max)
{
	if (!*f)
		return;
	char *c = xp_strdup(*f);
	clean_str(c, max);
	if (strcmp(c, *f) != 0)
		xp_istr_set(f, c);
	free(c);
}

static void clean_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		clean_str(v[i], XP_MAX_STRING);
}

void xp_node_clean(struct xp_node *n)
{
	clean_str(n->name, XP_MAX_NODE_NAME);
	char **strs[] = {&n->source, &n->zone, &n->rack, &n->sw, &n->cpu_model};
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
		clean_str(*strs[i], XP_MAX_STRING);
	struct xp_labels *ls[] = {&n->facts, &n->governance, &n->validation};
	for (size_t i = 0; i < 3; i++) {
		clean_strv(ls[i]->keys, ls[i]->n);
		clean_strv(ls[i]->values, ls[i]->n);
	}
	clean_strv(n->warnings, n->n_warnings);
	for (size_t i = 0; i < n->n_packages; i++) {
		clean_str(n->packages[i].model, XP_MAX_STRING);
		clean_str(n->packages[i].cpus, XP_MAX_STRING);
	}
	for (size_t i = 0; i < n->n_numa; i++)
		clean_str(n->numa[i].cpus, XP_MAX_STRING);
	for (size_t i = 0; i < n->n_nics; i++) {
		struct xp_nic *c = &n->nics[i];
		char **f[] = {&c->name, &c->pci_bus_id, &c->rdma, &c->address};
		for (size_t k = 0; k < 4; k++)
			clean_str(*f[k], XP_MAX_STRING);
	}
	for (size_t i = 0; i < n->n_pci; i++) {
		struct xp_pci *p = &n->pci[i];
		clean_str(p->bus_id, XP_MAX_STRING);
		clean_istr(&p->pci_id, XP_MAX_STRING);
		clean_istr(&p->name, XP_MAX_STRING);
		clean_strv(p->os_devices, p->n_os_devices);
	}
	for (size_t i = 0; i < n->n_devices; i++) {
		struct xp_device *d = &n->devices[i];
		clean_str(d->uuid, XP_MAX_STRING);
		clean_str(d->pci_bus_id, XP_MAX_STRING);
		const char **f[] = {&d->vendor, &d->model, &d->arch, &d->pci_id, &d->driver, &d->firmware,
				    &d->runtime, &d->affinity_group, &d->ecu_basis};
		for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
			clean_istr(f[k], XP_MAX_STRING);
		clean_strv(d->pci_path, d->n_pci_path);
		clean_strv(d->os_devices, d->n_os_devices);
		clean_strv(d->health_reasons, d->n_health_reasons);
		for (size_t k = 0; k < d->n_peaks; k++) {
			clean_istr(&d->peaks[k].precision, XP_MAX_STRING);
			clean_istr(&d->peaks[k].unit, XP_MAX_STRING);
		}
		for (size_t k = 0; k < d->n_allocs; k++) {
			clean_str(d->allocs[k].slice, XP_MAX_STRING);
			clean_str(d->allocs[k].owner, XP_MAX_STRING);
			clean_str(d->allocs[k].uuid, XP_MAX_STRING);
		}
		for (size_t k = 0; k < d->n_procs; k++) {
			clean_str(d->procs[k].user, XP_MAX_STRING);
			clean_str(d->procs[k].command, XP_MAX_STRING);
			/* A type is one of three words; anything else is not known. */
			const char *t = d->procs[k].type;
			if (strcmp(t, "C") != 0 && strcmp(t, "G") != 0 && strcmp(t, "C+G") != 0)
				d->procs[k].type[0] = '\0';
		}
	}
}
