/* k8s_hami.c: HAMi's register and allocation annotations, and the Ascend device plugin's. */
#include "k8s_hami.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "istr.h"
#include "xp.h"

/* The register keys and the count resources HAMi's device backends read them for
 * (Project-HAMi/HAMi pkg/device/{nvidia,hygon,amd}/device.go RegisterAnnos; pkg/device/ascend:
 * "hami.io/node-register-" + the commonWord of the chart's vnpus, whose resource is
 * "huawei.com/" + that word). The pod keys are each backend's SupportDevices and
 * InRequestDevices: "-allocated" keeps the whole decision, "-to-allocate" is emptied by the
 * device plugin container by container as it hands them out. */
static const struct hami_kind {
	const char *reg, *res, *vendor, *alloc, *to_alloc;
} kinds[] = {
	{"hami.io/node-nvidia-register", "nvidia.com/gpu", "NVIDIA", "hami.io/vgpu-devices-allocated",
	 "hami.io/vgpu-devices-to-allocate"},
	{"hami.io/node-dcu-register", "hygon.com/dcunum", "Hygon", "hami.io/dcu-devices-allocated",
	 "hami.io/dcu-devices-to-allocate"},
	{"hami.io/node-amd-register", "amd.com/gpu", "AMD", "hami.io/amd-devices-allocated", "hami.io/amd-devices-to-allocate"},
};
#define ASCEND_REG "hami.io/node-register-"
#define ALLOCATED "-devices-allocated"
#define TO_ALLOCATE "-devices-to-allocate"
/* The Ascend device plugin's record of what it mounted (ascend-device-plugin pkg/common
 * constants.go: ResourceNamePrefix + PodRealAlloc). */
#define ASCEND_REAL "huawei.com/AscendReal"

/* A word that may follow "huawei.com/": HAMi's Ascend commonWords ("Ascend910B3",
 * "Ascend910B4-1"), the plugin's types ("Ascend910", "Ascend310P"). */
static bool ascend_word(const char *w, size_t len)
{
	if (len <= 6 || len > 64 || strncmp(w, "Ascend", 6))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)w[i]) && w[i] != '-')
			return false;
	return true;
}

/* The kind of a register key into *k (res in buf for Ascend); false when it is none. */
static bool reg_kind(const char *key, struct hami_kind *k, char *buf, size_t cap)
{
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (!strcmp(key, kinds[i].reg)) {
			*k = kinds[i];
			return true;
		}
	size_t l = strlen(ASCEND_REG);
	if (strncmp(key, ASCEND_REG, l) || !ascend_word(key + l, strlen(key + l)))
		return false;
	snprintf(buf, cap, "huawei.com/%s", key + l);
	*k = (struct hami_kind){key, buf, "Huawei", NULL, NULL};
	return true;
}

/* The count resource of a pod allocation key into buf, and whether it is the "-to-allocate"
 * form; false when key is none. */
static bool alloc_kind(const char *key, char *buf, size_t cap, bool *to)
{
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (!strcmp(key, kinds[i].alloc) || !strcmp(key, kinds[i].to_alloc)) {
			*to = !strcmp(key, kinds[i].to_alloc);
			snprintf(buf, cap, "%s", kinds[i].res);
			return true;
		}
	if (strncmp(key, "hami.io/", 8))
		return false;
	const char *w = key + 8;
	size_t len = strlen(w), la = strlen(ALLOCATED), lt = strlen(TO_ALLOCATE);
	if (len > lt && !strcmp(w + len - lt, TO_ALLOCATE) && ascend_word(w, len - lt))
		*to = true, len -= lt;
	else if (len > la && !strcmp(w + len - la, ALLOCATED) && ascend_word(w, len - la))
		*to = false, len -= la;
	else
		return false;
	snprintf(buf, cap, "huawei.com/%.*s", (int)len, w);
	return true;
}

bool xp_hami_node_annotation(const char *key)
{
	struct hami_kind k;
	char buf[96];
	return reg_kind(key, &k, buf, sizeof buf);
}

bool xp_hami_pod_annotation(const char *key)
{
	char buf[96];
	bool to;
	if (alloc_kind(key, buf, sizeof buf, &to))
		return true;
	/* The Ascend plugin's (and HAMi's runtime copy, which xp_hami_pod passes over). */
	return !strncmp(key, "huawei.com/", 11) && ascend_word(key + 11, strlen(key + 11));
}

/* Go's strconv.ParseInt(s, 10, 32) over [s, s+len): an optional sign and decimal digits. */
static bool parse_i32(const char *s, size_t len, int32_t *v)
{
	char tmp[24];
	if (!len || len >= sizeof tmp)
		return false;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	const char *p = tmp + (tmp[0] == '+' || tmp[0] == '-');
	if (!*p)
		return false;
	for (; *p; p++)
		if (!isdigit((unsigned char)*p))
			return false;
	errno = 0;
	long long x = strtoll(tmp, NULL, 10);
	if (errno || x < INT32_MIN || x > INT32_MAX)
		return false;
	*v = (int32_t)x;
	return true;
}

/* Go's strconv.ParseBool. */
static bool parse_bool(const char *s, size_t len, bool *v)
{
	static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
	static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};
	for (size_t i = 0; i < 6; i++) {
		if (strlen(t[i]) == len && !strncmp(s, t[i], len))
			return *v = true, true;
		if (strlen(f[i]) == len && !strncmp(s, f[i], len))
			return *v = false, true;
	}
	return false;
}

/* The field [s, s+len) as a heap string. */
static char *field(const char *s, size_t len)
{
	char *r = xp_malloc(len + 1);
	memcpy(r, s, len);
	r[len] = '\0';
	return r;
}

void xp_hami_devs_free(struct xp_hami_dev *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(d[i].id);
		free(d[i].type);
		free(d[i].mode);
	}
	free(d);
}

void xp_hami_uses_free(struct xp_hami_use *u, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(u[i].uuid);
		free(u[i].type);
	}
	free(u);
}

/* Splits [s, e) at sep into at most max pieces (start, length); the count, or max+1 when
 * there are more. */
static size_t split(const char *s, const char *e, char sep, const char **at, size_t *len, size_t max)
{
	size_t n = 0;
	for (;;) {
		const char *q = memchr(s, sep, (size_t)(e - s));
		if (n == max)
			return max + 1;
		at[n] = s;
		len[n++] = (size_t)((q ? q : e) - s);
		if (!q)
			return n;
		s = q + 1;
	}
}

/* HAMi's DecodeNodeDevices (pkg/device/devices.go): devices ended by ':', each 7 fields, or
 * 9 (index and mode added); a bad one rejects the whole annotation, as HAMi does. */
static int decode_colons(const char *s, struct xp_hami_dev **out, size_t *n, const char **why)
{
	if (!strchr(s, ':'))
		return *why = "no ':' ends a device", -1;
	const char *e = s + strlen(s);
	for (const char *p = s; p < e;) {
		const char *q = memchr(p, ':', (size_t)(e - p));
		if (!q)
			q = e;
		if (q > p) {
			const char *f[10];
			size_t fl[10];
			size_t k = split(p, q, ',', f, fl, 9);
			struct xp_hami_dev d = {.index = -1, .dev = SIZE_MAX};
			if (k != 7 && k != 9)
				return *why = "a device has neither 7 nor 9 comma-separated fields", -1;
			if (!fl[0])
				return *why = "a device without an id", -1;
			int32_t numa, index = -1;
			if (!parse_i32(f[1], fl[1], &d.count) || !parse_i32(f[2], fl[2], &d.devmem) ||
			    !parse_i32(f[3], fl[3], &d.devcore) || !parse_i32(f[5], fl[5], &numa) ||
			    !parse_bool(f[6], fl[6], &d.health) || (k == 9 && (!parse_i32(f[7], fl[7], &index) || index < 0)))
				return *why = "a count, memory, cores, NUMA, health or index field is not one", -1;
			if (*n >= XP_MAX_DEVICES)
				return *why = "more devices than a node holds", -1;
			d.numa = numa;
			d.index = index;
			d.id = field(f[0], fl[0]);
			d.type = field(f[4], fl[4]);
			d.mode = k == 9 ? field(f[8], fl[8]) : NULL;
			*out = xp_realloc(*out, (*n + 1) * sizeof **out);
			(*out)[(*n)++] = d;
		}
		p = q + 1;
	}
	return 0;
}

/* A member of o named key in any case: Go's encoding/json matches field names so (HAMi's
 * own Ascend test writes "ID", "Count", ...). */
static json_t *member(json_t *o, const char *key)
{
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v) if (!strcasecmp(k, key)) return v;
	return NULL;
}

/* An integer member into *v (absent: 0, as Go leaves it); false when it is not an int32. */
static bool member_i32(json_t *o, const char *key, int32_t *v)
{
	json_t *m = member(o, key);
	if (!m || json_is_null(m))
		return *v = 0, true;
	if (!json_is_integer(m) || json_integer_value(m) < INT32_MIN || json_integer_value(m) > INT32_MAX)
		return false;
	*v = (int32_t)json_integer_value(m);
	return true;
}

/* HAMi's UnMarshalNodeDevices: a JSON array of DeviceInfo (omitempty: a field left out is
 * its zero, health false included). */
static int decode_json(const char *s, struct xp_hami_dev **out, size_t *n, const char **why)
{
	json_error_t je;
	json_t *a = json_loads(s, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_array(a)) {
		json_decref(a);
		return *why = "not a JSON array of devices", -1;
	}
	int rc = 0;
	size_t i;
	json_t *o;
	bool any_index = false;
	json_array_foreach(a, i, o) if (json_is_object(o) && member(o, "index")) any_index = true;
	json_array_foreach(a, i, o) {
		struct xp_hami_dev d = {.dev = SIZE_MAX};
		int32_t numa, index;
		json_t *id = member(o, "id"), *type = member(o, "type"), *mode = member(o, "mode"), *h = member(o, "health");
		if (!json_is_object(o) || !json_is_string(id) || !*json_string_value(id) || (type && !json_is_string(type)) ||
		    (mode && !json_is_string(mode)) || (h && !json_is_boolean(h)) || !member_i32(o, "count", &d.count) ||
		    !member_i32(o, "devmem", &d.devmem) || !member_i32(o, "devcore", &d.devcore) ||
		    !member_i32(o, "numa", &numa) || !member_i32(o, "index", &index) || index < 0) {
			*why = "a device without an id, or with a field of the wrong type";
			rc = -1;
			break;
		}
		if (*n >= XP_MAX_DEVICES) {
			*why = "more devices than a node holds";
			rc = -1;
			break;
		}
		d.id = xp_strdup(json_string_value(id));
		d.type = xp_strdup(type ? json_string_value(type) : "");
		d.mode = mode ? xp_strdup(json_string_value(mode)) : NULL;
		d.health = json_is_true(h);
		d.numa = numa;
		/* omitempty drops index 0: where some device says its index, one that says none is 0;
		 * where none does (before HAMi wrote it), it is not known. */
		d.index = any_index ? index : -1;
		*out = xp_realloc(*out, (*n + 1) * sizeof **out);
		(*out)[(*n)++] = d;
	}
	json_decref(a);
	return rc;
}

int xp_hami_decode_node(const char *s, struct xp_hami_dev **out, size_t *n, const char **why)
{
	*out = NULL;
	*n = 0;
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	int rc = *s == '[' ? decode_json(s, out, n, why) : decode_colons(s, out, n, why);
	if (rc == 0 && *n == 0)
		*why = "it names no device", rc = -1;
	for (size_t i = 0; rc == 0 && i < *n; i++) {
		if ((*out)[i].count < 0 || (*out)[i].devmem < 0 || (*out)[i].devcore < 0)
			*why = "a negative count, memory or cores", rc = -1;
		for (size_t j = 0; rc == 0 && j < i; j++)
			if (!strcmp((*out)[i].id, (*out)[j].id))
				*why = "one device id twice", rc = -1;
	}
	if (rc < 0) {
		xp_hami_devs_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

/* HAMi's DecodePodDevices + DecodeContainerDevices: containers ended by ';', devices by ':',
 * a device "uuid,type,mem,cores" (a piece without ',' is passed over, as HAMi does). */
int xp_hami_decode_pod(const char *s, struct xp_hami_use **out, size_t *n, const char **why)
{
	*out = NULL;
	*n = 0;
	const char *e = s + strlen(s);
	for (const char *p = s; p < e;) {
		size_t l = strcspn(p, ":;");
		if (memchr(p, ',', l)) {
			const char *f[5];
			size_t fl[5];
			size_t k = split(p, p + l, ',', f, fl, 4);
			struct xp_hami_use u = {0};
			if (k < 4 || !fl[0] || !parse_i32(f[2], fl[2], &u.usedmem) || !parse_i32(f[3], fl[3], &u.usedcores) ||
			    u.usedmem < 0 || u.usedcores < 0 || *n >= XP_MAX_DEVICES) {
				*why = "a device is not uuid,type,memory,cores";
				xp_hami_uses_free(*out, *n);
				*out = NULL;
				*n = 0;
				return -1;
			}
			u.uuid = field(f[0], fl[0]);
			u.type = field(f[1], fl[1]);
			*out = xp_realloc(*out, (*n + 1) * sizeof **out);
			(*out)[(*n)++] = u;
		}
		p += l + (p[l] != '\0');
	}
	return 0;
}

/* Adds a warning to n (a heap string it takes). */
static void warn(struct xp_node *n, char *w)
{
	xp_strv_add_once(&n->warnings, &n->n_warnings, w);
	free(w);
}

void xp_hami_node_read(struct xp_hami_node *hn, json_t *annotations, struct xp_node *n)
{
	const char *key;
	json_t *v;
	json_object_foreach(annotations, key, v) {
		struct hami_kind k;
		char res[96];
		if (!reg_kind(key, &k, res, sizeof res))
			continue;
		const char *why = "not a string";
		struct xp_hami_dev *d = NULL;
		size_t nd = 0;
		if (!json_is_string(v) || xp_hami_decode_node(json_string_value(v), &d, &nd, &why) < 0) {
			warn(n, xp_asprintf("annotation %s left out: %s", key, why));
			continue;
		}
		hn->regs = xp_realloc(hn->regs, (hn->n + 1) * sizeof *hn->regs);
		hn->regs[hn->n++] = (struct xp_hami_reg){xp_strdup(key), xp_strdup(k.res), k.vendor, d, nd, false};
	}
}

struct xp_hami_reg *xp_hami_node_reg(struct xp_hami_node *hn, const char *res)
{
	for (size_t i = 0; i < hn->n; i++)
		if (!strcmp(hn->regs[i].res, res))
			return &hn->regs[i];
	return NULL;
}

void xp_hami_node_place(struct xp_node *n, struct xp_hami_reg *r, long long capacity)
{
	long long shares = 0;
	for (size_t i = 0; i < r->n; i++)
		shares += r->devs[i].count;
	/* HAMi's device plugin advertises each device once per share (GetPluginDevices with
	 * deviceSplitCount): either count agrees. */
	if (capacity < 0)
		warn(n, xp_asprintf("annotation %s names %zu devices the node's capacity does not count (%s)", r->key, r->n,
				    r->res));
	else if (capacity != (long long)r->n && capacity != shares)
		warn(n, xp_asprintf("capacity %s is %lld, annotation %s names %zu devices (%lld shares): its devices kept",
				    r->res, capacity, r->key, r->n, shares));
	if (n->n_devices + r->n > XP_MAX_DEVICES) {
		warn(n, xp_asprintf("annotation %s: more than %d devices; left out", r->key, XP_MAX_DEVICES));
		return;
	}
	r->placed = true;
	for (size_t i = 0; i < r->n; i++) {
		struct xp_hami_dev *h = &r->devs[i];
		struct xp_device *d = xp_node_add_device(n);
		h->dev = n->n_devices - 1;
		xp_istr_set(&d->vendor, r->vendor);
		xp_istr_set(&d->model, *h->type ? h->type : r->res);
		d->uuid = xp_strdup(h->id);
		d->memory_mib = h->devmem > 0 ? h->devmem : -1;
		d->numa = h->numa;
		d->vendor_index = h->index;
		/* A device HAMi splits is offered whole or as shares of it. */
		d->partition = XP_PART_WHOLE | (h->count > 1 ? XP_PART_SHARE : 0);
		d->health = h->health ? XP_HEALTH_OK : XP_HEALTH_FAIL;
		if (!h->health)
			xp_strv_add(&d->health_reasons, &d->n_health_reasons, "HAMi's device plugin registers it unhealthy");
		char *k = xp_asprintf("hami.io/%s", h->id);
		char *val = xp_asprintf("split %d, cores %d%s%s", (int)h->count, (int)h->devcore, h->mode ? ", mode " : "",
					h->mode ? h->mode : "");
		xp_labels_append(&n->facts, k, val);
		free(k);
		free(val);
	}
}

void xp_hami_node_clear(struct xp_hami_node *hn)
{
	for (size_t i = 0; i < hn->n; i++) {
		free(hn->regs[i].key);
		free(hn->regs[i].res);
		xp_hami_devs_free(hn->regs[i].devs, hn->regs[i].n);
	}
	free(hn->regs);
	*hn = (struct xp_hami_node){0};
}

/* The register device whose id is uuid (a MIG slice's "GPU-...[1-0]" is its GPU's), or NULL. */
static const struct xp_hami_dev *reg_dev(const struct xp_hami_node *hn, const char *uuid)
{
	size_t l = strcspn(uuid, "[");
	for (size_t r = 0; r < hn->n; r++)
		for (size_t i = 0; hn->regs[r].placed && i < hn->regs[r].n; i++)
			if (strlen(hn->regs[r].devs[i].id) == l && !strncmp(hn->regs[r].devs[i].id, uuid, l))
				return &hn->regs[r].devs[i];
	return NULL;
}

static void add_alloc(struct xp_device *d, struct xp_alloc a)
{
	d->allocs = xp_realloc(d->allocs, (d->n_allocs + 1) * sizeof *d->allocs);
	d->allocs[d->n_allocs++] = a;
}

/* HAMi's devices of one pod annotation onto n; false when it is malformed (a warning) or
 * names none (an emptied one: the pod's count is then held as without it). */
static bool hami_uses(struct xp_node *n, const struct xp_hami_node *hn, const char *key, const char *val, const char *owner)
{
	struct xp_hami_use *u;
	size_t nu;
	const char *why;
	if (xp_hami_decode_pod(val, &u, &nu, &why) < 0) {
		warn(n, xp_asprintf("pod %s: annotation %s left out: %s", owner, key, why));
		return false;
	}
	if (nu == 0) {
		xp_hami_uses_free(u, nu);
		return false;
	}
	for (size_t i = 0; i < nu; i++) {
		const struct xp_hami_dev *h = reg_dev(hn, u[i].uuid);
		if (!h) {
			warn(n, xp_asprintf("pod %s: annotation %s names %.80s, no device of this node", owner, key, u[i].uuid));
			continue;
		}
		/* The share of compute is the cores asked of the device's; a slice without a core
		 * limit (cores 0) is counted by its memory, else by the split count. */
		long long pct;
		if (u[i].usedcores > 0 && h->devcore > 0)
			pct = ((long long)u[i].usedcores * 100 + h->devcore - 1) / h->devcore;
		else if (u[i].usedmem > 0 && h->devmem > 0)
			pct = ((long long)u[i].usedmem * 100 + h->devmem - 1) / h->devmem;
		else
			pct = h->count > 1 ? 100 / h->count : 100;
		if (pct < 1)
			pct = 1;
		bool whole = pct >= 100;
		add_alloc(&n->devices[h->dev], (struct xp_alloc){.slice = whole ? NULL : xp_strdup("share"),
								 .owner = xp_strdup(owner),
								 .memory_mib = u[i].usedmem > 0 ? u[i].usedmem : -1,
								 .share_pct = whole ? 0 : (int)pct});
	}
	xp_hami_uses_free(u, nu);
	return true;
}

/* The span of resource res, or NULL. */
static const struct xp_k8s_span *span_of(const struct xp_k8s_span *spans, size_t n_spans, const char *res, size_t len)
{
	for (size_t s = 0; s < n_spans; s++)
		if (strlen(spans[s].res) == len && !strncmp(spans[s].res, res, len))
			return &spans[s];
	return NULL;
}

/* The Ascend device plugin's chips "Ascend910-0,Ascend910-1" onto the spans (type: the
 * resource's word that each name must start with; NULL: any resource the name's own type
 * is). Resources named go to handled. */
static void ascend_chips(struct xp_node *n, const struct xp_k8s_span *spans, size_t n_spans, const char *key,
			 const char *val, const char *type, const char *owner, char ***handled, size_t *n_handled)
{
	const char *e = val + strlen(val);
	for (const char *p = val; p < e;) {
		size_t l = strcspn(p, ",");
		const char *dash = NULL;
		for (size_t i = 0; i < l; i++)
			if (p[i] == '-')
				dash = p + i;
		char res[96];
		int32_t chip = -1;
		const struct xp_k8s_span *sp = NULL;
		if (dash && parse_i32(dash + 1, (size_t)(p + l - dash - 1), &chip) && chip >= 0 && dash[1] != '+' &&
		    ascend_word(p, (size_t)(dash - p)) && (!type || (strlen(type) == (size_t)(dash - p) && !strncmp(type, p, (size_t)(dash - p))))) {
			snprintf(res, sizeof res, "huawei.com/%.*s", (int)(dash - p), p);
			sp = span_of(spans, n_spans, res, strlen(res));
		}
		/* The plugin names a chip by its physical id, and counts a node's chips 0..N-1. */
		if (!sp || (size_t)chip >= sp->count) {
			warn(n, xp_asprintf("pod %s: annotation %s names %.*s, no chip of this node", owner, key, (int)(l > 80 ? 80 : l), p));
		} else {
			struct xp_device *d = &n->devices[sp->first + (size_t)chip];
			d->vendor_index = chip;
			add_alloc(d, (struct xp_alloc){.owner = xp_strdup(owner), .memory_mib = -1});
			xp_strv_add_once(handled, n_handled, res);
		}
		p += l + (p[l] != '\0');
	}
}

void xp_hami_pod(struct xp_node *n, const struct xp_hami_node *hn, const struct xp_k8s_span *spans,
		 size_t n_spans, json_t *annotations, const char *owner, char ***handled, size_t *n_handled)
{
	const char *key;
	json_t *v;
	json_t *real = json_object_get(annotations, ASCEND_REAL);
	json_object_foreach(annotations, key, v) {
		const char *val = json_string_value(v);
		char res[96];
		bool to;
		if (!val)
			continue;
		if (alloc_kind(key, res, sizeof res, &to)) {
			/* "-to-allocate" only while "-allocated" is not there: the same devices. */
			if (to) {
				char *other = xp_asprintf("%.*s%s", (int)(strlen(key) - strlen(TO_ALLOCATE)), key, ALLOCATED);
				bool both = json_object_get(annotations, other) != NULL;
				free(other);
				if (both)
					continue;
			}
			/* A malformed one names nothing: the pod's count is held as without it. */
			if (hami_uses(n, hn, key, val, owner))
				xp_strv_add_once(handled, n_handled, res);
			continue;
		}
		/* The Ascend plugin's: what it mounted (AscendReal) before what the scheduler chose
		 * (huawei.com/<type>); HAMi's JSON copy for its runtime ("[{\"UUID\":...}]") is
		 * read from hami.io/<type>-devices-allocated instead. */
		if (strncmp(key, "huawei.com/", 11) || !ascend_word(key + 11, strlen(key + 11)) || *val == '[')
			continue;
		if (!strcmp(key, ASCEND_REAL))
			ascend_chips(n, spans, n_spans, key, val, NULL, owner, handled, n_handled);
		else if (!json_is_string(real))
			ascend_chips(n, spans, n_spans, key, val, key + 11, owner, handled, n_handled);
	}
}
