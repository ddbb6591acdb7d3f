/* model_json.c: encoding and validating decoding of the "xpool.inventory/v1" document. */
#include "model_json.h"

#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "format.h"
#include "istr.h"
#include "jsonpull.h"

/* Bounds on what a document may hold; they keep hostile input from bloating
 * every later view (each string is printed, measured and copied many times). */
#define STR_MAX XP_MAX_STRING /* bytes in any string */
#define NODE_NAME_MAX XP_MAX_NODE_NAME
#define ID_MAX 65535      /* NUMA ids: hwloc's OS indexes are far below */
#define PATH_LEN 256      /* room for the deepest path plus a truncated label name */

static const char *const part_names[] = {"whole", "mig", "vnpu", "share"};
#define PART_COUNT (sizeof part_names / sizeof part_names[0])
static const char *const label_classes[] = {"facts", "governance", "validation"};

/* ---- fields ---- */

/* How a scalar field is stored and spelled. The encoder and the decoder both walk the
 * tables below, so key order, nullability and bounds cannot drift apart between them. */
enum fkind {
	F_STR,   /* char *: a string; null for NULL when nullable */
	F_ISTR,  /* const char *: an interned string (istr.h), as F_STR otherwise */
	F_I64,   /* int64_t from 0: null for -1 when nullable, else a count (never negative) */
	F_INT,   /* int from 0 to max: as F_I64 */
	F_NUM,   /* double from min to max: null for XP_NA (always nullable) */
	F_CLASS, /* int: a PCI class as 4 hex digits, null for -1 */
	F_STRV,  /* char ** with its size_t count at n_off: an array of strings */
	F_ENUM,  /* int: one of the names name() gives and parse() reads, listed in choices */
	F_OWN    /* read by the decoder's own code for that object (decoder tables only): the
		  * table finds the key and its duplicate as for any field */
};

struct field {
	const char *key; /* NULL ends a table */
	size_t klen;     /* strlen(key): the decoder compares lengths first */
	enum fkind kind;
	bool nullable;
	size_t off, n_off;
	double min, max;
	const char *(*name)(int);
	int (*parse)(const char *);
	const char *choices;
	bool zero_null;  /* F_INT: 0 means "not known" (a machine has at least one core): null */
	bool null_zero;  /* F_INT: null reads as 0 (an allocation's share: null is the whole device) */
};

#define FSTR(T, k, m, null) {.key = k, .klen = sizeof k - 1, .kind = F_STR, .nullable = null, .off = offsetof(T, m)}
/* A text that repeats across devices and nodes: stored once (istr.h). */
#define FISTR(T, k, m, null) {.key = k, .klen = sizeof k - 1, .kind = F_ISTR, .nullable = null, .off = offsetof(T, m)}
#define FI64(T, k, m, null) {.key = k, .klen = sizeof k - 1, .kind = F_I64, .nullable = null, .off = offsetof(T, m)}
#define FINT(T, k, m, hi, null) {.key = k, .klen = sizeof k - 1, .kind = F_INT, .nullable = null, .off = offsetof(T, m), .max = hi}
/* A count that is 0 only when not known (no topology): null in JSON, 0 in memory. */
#define FCNT(T, k, m) {.key = k, .klen = sizeof k - 1, .kind = F_INT, .nullable = true, .off = offsetof(T, m), .max = INT_MAX, .zero_null = true}
#define FNUM(T, k, m, lo, hi) {.key = k, .klen = sizeof k - 1, .kind = F_NUM, .nullable = true, .off = offsetof(T, m), .min = lo, .max = hi}
#define FCLASS(T, k, m) {.key = k, .klen = sizeof k - 1, .kind = F_CLASS, .nullable = true, .off = offsetof(T, m)}
#define FSTRV(T, k, m) {.key = k, .klen = sizeof k - 1, .kind = F_STRV, .off = offsetof(T, m), .n_off = offsetof(T, n_##m)}
#define FENUM(T, k, m, nm, ps, ch) {.key = k, .klen = sizeof k - 1, .kind = F_ENUM, .off = offsetof(T, m), .name = nm, .parse = ps, .choices = ch}

/* A node's scalars between its name and its labels. */
static const struct field node_head_fields[] = {
	FSTR(struct xp_node, "source", source, true),
	FENUM(struct xp_node, "state", state, xp_node_state_name, xp_node_state_parse,
	      "up, degraded, unreachable, draining, down"),
	FI64(struct xp_node, "age_s", age_s, false),
	{0},
};

static const struct field location_fields[] = {
	FSTR(struct xp_node, "zone", zone, true),
	FSTR(struct xp_node, "rack", rack, true),
	FSTR(struct xp_node, "switch", sw, true),
	{0},
};

static const struct field cpu_fields[] = {
	FCNT(struct xp_node, "packages", packages_n),
	FCNT(struct xp_node, "cores", cores),
	FCNT(struct xp_node, "pus", pus),
	FCNT(struct xp_node, "pus_allowed", pus_allowed),
	FSTR(struct xp_node, "model", cpu_model, true),
	{0},
};

static const struct field package_fields[] = {
	FINT(struct xp_package, "id", id, INT_MAX, false),
	FSTR(struct xp_package, "model", model, true),
	FINT(struct xp_package, "cores", cores, INT_MAX, false),
	FINT(struct xp_package, "pus", pus, INT_MAX, false),
	FSTR(struct xp_package, "cpus", cpus, true),
	{0},
};

static const struct field numa_fields[] = {
	FINT(struct xp_numa, "id", id, ID_MAX, false),
	FI64(struct xp_numa, "memory_mib", memory_mib, true),
	FSTR(struct xp_numa, "cpus", cpus, true),
	FINT(struct xp_numa, "package", package, INT_MAX, true),
	{0},
};

static const struct field nic_fields[] = {
	FSTR(struct xp_nic, "name", name, false),
	FSTR(struct xp_nic, "pci_bus_id", pci_bus_id, true),
	FSTR(struct xp_nic, "rdma", rdma, true),
	FSTR(struct xp_nic, "address", address, true),
	FINT(struct xp_nic, "numa", numa, ID_MAX, true),
	FI64(struct xp_nic, "speed_mbps", speed_mbps, true),
	{0},
};

static const struct field pci_fields[] = {
	FSTR(struct xp_pci, "bus_id", bus_id, false),
	FISTR(struct xp_pci, "pci_id", pci_id, true),
	FCLASS(struct xp_pci, "class", pci_class),
	FISTR(struct xp_pci, "name", name, true),
	FINT(struct xp_pci, "numa", numa, ID_MAX, true),
	FINT(struct xp_pci, "accelerator", accel, INT_MAX, true),
	FSTRV(struct xp_pci, "os_devices", os_devices),
	{0},
};

static const struct field alloc_fields[] = {
	FSTR(struct xp_alloc, "slice", slice, true),
	FSTR(struct xp_alloc, "job", owner, true),
	FI64(struct xp_alloc, "memory_mib", memory_mib, true),
	/* null is the whole device (xpool(1), INVENTORY JSON), as 0 is. */
	{.key = "share", .klen = 5, .kind = F_INT, .nullable = true, .off = offsetof(struct xp_alloc, share_pct), .max = 100,
	 .null_zero = true},
	{0},
};

/* An allocation's "uuid" (an existing MIG instance's UUID): written only where known, so that
 * inventories without it read and print as before (xpool(1), INVENTORY JSON). */
static const struct field alloc_uuid_field[] = {
	FSTR(struct xp_alloc, "uuid", uuid, true),
	{0},
};

/* A process's fields after its "pid" and before its "type" (both read by the decoder's own
 * code: a pid is bounded, a type is one of three words). */
static const struct field proc_fields[] = {
	FSTR(struct xp_proc, "user", user, true),
	FSTR(struct xp_proc, "command", command, true),
	FI64(struct xp_proc, "memory_mib", memory_mib, true),
	FNUM(struct xp_proc, "util_pct", util_pct, 0, 100),
	{0},
};
#define PROC_PID_MAX 4194304 /* Linux's PID_MAX_LIMIT: a larger pid is no process */
#define PROC_COMMAND_MAX 4096 /* bytes of a command line kept (a view shows far fewer) */

static void alloc_uuids_to_json(json_t *allocs, const struct xp_device *d)
{
	for (size_t i = 0; i < d->n_allocs; i++)
		if (d->allocs[i].uuid)
			json_object_set_new(json_array_get(allocs, i), "uuid", json_string(d->allocs[i].uuid));
}

/* What identifies a device and its software, after "index" and "vendor_index". */
static const struct field device_id_fields[] = {
	FISTR(struct xp_device, "vendor", vendor, true),
	FISTR(struct xp_device, "model", model, true),
	FISTR(struct xp_device, "arch", arch, true),
	FSTR(struct xp_device, "uuid", uuid, true),
	FSTR(struct xp_device, "pci_bus_id", pci_bus_id, true),
	FISTR(struct xp_device, "pci_id", pci_id, true),
	FCLASS(struct xp_device, "pci_class", pci_class),
	FSTRV(struct xp_device, "pci_path", pci_path),
	FSTRV(struct xp_device, "os_devices", os_devices),
	FINT(struct xp_device, "numa", numa, ID_MAX, true),
	FISTR(struct xp_device, "driver", driver, true),
	FISTR(struct xp_device, "firmware", firmware, true),
	FISTR(struct xp_device, "runtime", runtime, true),
	{0},
};

/* A device's memory, before "peak". */
static const struct field device_memory_fields[] = {
	FI64(struct xp_device, "memory_mib", memory_mib, true),
	FI64(struct xp_device, "memory_used_mib", memory_used_mib, true),
	{0},
};

/* A device's compute, health and metrics, between "peak" and "partition". */
static const struct field device_state_fields[] = {
	FNUM(struct xp_device, "ecu", ecu, 0, INFINITY),
	FISTR(struct xp_device, "ecu_basis", ecu_basis, true),
	FENUM(struct xp_device, "memory_access", mem_access, xp_mem_access_name, xp_mem_access_parse,
	      "unknown, explicit, unified"),
	FISTR(struct xp_device, "affinity_group", affinity_group, true),
	FENUM(struct xp_device, "health", health, xp_health_name, xp_health_parse, "unknown, ok, warn, fail"),
	FSTRV(struct xp_device, "health_reasons", health_reasons),
	FNUM(struct xp_device, "temperature_c", temperature_c, -100, 300),
	FNUM(struct xp_device, "power_w", power_w, 0, INFINITY),
	FNUM(struct xp_device, "power_limit_w", power_limit_w, 0, INFINITY),
	FNUM(struct xp_device, "utilization_pct", utilization_pct, 0, 100),
	FI64(struct xp_device, "ecc_corrected", ecc_corrected, true),
	FI64(struct xp_device, "ecc_uncorrected", ecc_uncorrected, true),
	FI64(struct xp_device, "retired_pages", retired_pages, true),
	{0},
};

/* ---- encoding ---- */

/* Copy of s with every byte that is not valid UTF-8 replaced by U+FFFD. */
static char *utf8_fix(const char *s)
{
	size_t n = strlen(s), i = 0, o = 0;
	char *out = xp_malloc(n * 3 + 1);
	while (i < n) {
		size_t k = xp_utf8_len((const unsigned char *)s + i, n - i);
		if (k) {
			memcpy(out + o, s + i, k);
			o += k, i += k;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3, i++;
		}
	}
	out[o] = '\0';
	return out;
}

/* Model strings come from sysfs, hwloc and drivers, which promise no encoding;
 * jansson refuses non-UTF-8, and dropping the key would break "every key is there". */
static json_t *jstr(const char *s)
{
	if (!s)
		return json_null();
	json_t *j = json_string(s);
	if (!j) {
		char *fixed = utf8_fix(s);
		j = json_string(fixed);
		free(fixed);
	}
	return j;
}

json_t *xp_json_str(const char *s)
{
	return jstr(s);
}

/* Negative means "not known" (-1) in the model. */
static json_t *jint(int64_t v)
{
	return v < 0 ? json_null() : json_integer((json_int_t)v);
}

json_t *xp_json_int(int64_t v)
{
	return jint(v);
}

/* Counts are never unknown in the model; a negative one would not decode again. */
static json_t *jcount(int64_t v)
{
	return json_integer((json_int_t)(v < 0 ? 0 : v));
}

/* XP_NA is NaN, which JSON cannot spell. */
static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *jclass(int cls)
{
	if (cls < 0 || cls > 0xffff)
		return json_null();
	char buf[8];
	snprintf(buf, sizeof buf, "%04x", (unsigned)cls);
	return json_string(buf);
}

json_t *xp_json_class(int cls)
{
	return jclass(cls);
}

static json_t *jstrv(char *const *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, jstr(v[i]));
	return a;
}

static void put(json_t *o, const char *key, json_t *v)
{
	json_object_set_new(o, key, v);
}

/* Puts the fields of the struct at base into o, in table order. */
static void put_fields(json_t *o, const void *base, const struct field *f)
{
	const char *b = base;
	for (; f->key; f++) {
		const void *v = b + f->off;
		json_t *j;
		switch (f->kind) {
		case F_STR:
		case F_ISTR:
			j = jstr(*(const char *const *)v);
			break;
		case F_I64:
			j = f->nullable ? jint(*(const int64_t *)v) : jcount(*(const int64_t *)v);
			break;
		case F_INT:
			if (f->zero_null && *(const int *)v <= 0)
				j = json_null();
			else
				j = f->nullable ? jint(*(const int *)v) : jcount(*(const int *)v);
			break;
		case F_NUM:
			j = jnum(*(const double *)v);
			break;
		case F_CLASS:
			j = jclass(*(const int *)v);
			break;
		case F_STRV:
			j = jstrv(*(char **const *)v, *(const size_t *)(b + f->n_off));
			break;
		default: /* F_ENUM */
			j = json_string(f->name(*(const int *)v));
			break;
		}
		put(o, f->key, j);
	}
}

/* An array of the n structs (size bytes each) at arr, each an object of fields f. */
static json_t *objects_to_json(const void *arr, size_t n, size_t size, const struct field *f)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_object();
		put_fields(o, (const char *)arr + i * size, f);
		json_array_append_new(a, o);
	}
	return a;
}

/* The fields f of the struct at base as the object at key of o. */
static void put_object(json_t *o, const char *key, const void *base, const struct field *f)
{
	json_t *sub = json_object();
	put_fields(sub, base, f);
	put(o, key, sub);
}

static json_t *labels_to_json(const struct xp_labels *l)
{
	json_t *o = json_object();
	for (size_t i = 0; i < l->n; i++) {
		if (json_object_set_new(o, l->keys[i], jstr(l->values[i])) != 0) {
			char *k = utf8_fix(l->keys[i]);
			json_object_set_new(o, k, jstr(l->values[i]));
			free(k);
		}
	}
	return o;
}

static json_t *peaks_to_json(const struct xp_device *d)
{
	json_t *a = json_array();
	for (size_t i = 0; i < d->n_peaks; i++) {
		json_t *p = json_object();
		put(p, "precision", jstr(d->peaks[i].precision));
		/* Not nullable: a peak without a value is not worth listing. */
		double v = d->peaks[i].value;
		put(p, "value", json_real(isfinite(v) ? v : 0));
		put(p, "unit", jstr(d->peaks[i].unit));
		json_array_append_new(a, p);
	}
	return a;
}

static json_t *partition_to_json(unsigned bits)
{
	json_t *a = json_array();
	for (size_t i = 0; i < PART_COUNT; i++)
		if (bits & (1u << i))
			json_array_append_new(a, json_string(part_names[i]));
	return a;
}

static json_t *device_to_json(const struct xp_device *d)
{
	json_t *o = json_object();
	put(o, "index", json_integer(d->index));
	put(o, "vendor_index", d->vendor_index >= 0 ? json_integer(d->vendor_index) : json_null());
	put_fields(o, d, device_id_fields);
	put_fields(o, d, device_memory_fields);
	put(o, "peak", peaks_to_json(d));
	put_fields(o, d, device_state_fields);
	put(o, "partition", partition_to_json(d->partition));
	put(o, "mig_mode", d->mig_mode < 0 ? json_null() : json_boolean(d->mig_mode == 1));
	json_t *allocs = objects_to_json(d->allocs, d->n_allocs, sizeof *d->allocs, alloc_fields);
	alloc_uuids_to_json(allocs, d);
	put(o, "allocations", allocs);
	/* Written only where a source lists them (as an allocation's uuid), so that inventories
	 * without processes read and print as before (xpool(1), INVENTORY JSON). */
	if (d->procs_known) {
		json_t *a = json_array();
		for (size_t i = 0; i < d->n_procs; i++) {
			const struct xp_proc *pr = &d->procs[i];
			json_t *po = json_object();
			put(po, "pid", jint(pr->pid));
			put_fields(po, pr, proc_fields);
			put(po, "type", jstr(pr->type[0] ? pr->type : NULL));
			json_array_append_new(a, po);
		}
		put(o, "processes", a);
	}
	return o;
}

static json_t *links_to_json(const struct xp_node *n)
{
	json_t *a = json_array();
	if (!n->links)
		return a;
	for (size_t r = 0; r < n->n_devices; r++) {
		json_t *row = json_array();
		for (size_t c = 0; c < n->n_devices; c++) {
			char buf[16];
			json_array_append_new(row, json_string(xp_link_str(*xp_node_link(n, r, c),
									     buf, sizeof buf)));
		}
		json_array_append_new(a, row);
	}
	return a;
}

static json_t *labels_all_to_json(const struct xp_node *n)
{
	json_t *o = json_object();
	put(o, label_classes[0], labels_to_json(&n->facts));
	put(o, label_classes[1], labels_to_json(&n->governance));
	put(o, label_classes[2], labels_to_json(&n->validation));
	return o;
}

json_t *xp_node_to_json(const struct xp_node *n)
{
	json_t *o = json_object();
	put(o, "name", jstr(n->name));
	put_fields(o, n, node_head_fields);
	put(o, "labels", labels_all_to_json(n));
	put_object(o, "location", n, location_fields);
	put_object(o, "cpu", n, cpu_fields);
	put(o, "memory_mib", jint(n->memory_mib));
	put(o, "packages", objects_to_json(n->packages, n->n_packages, sizeof *n->packages, package_fields));
	put(o, "numa", objects_to_json(n->numa, n->n_numa, sizeof *n->numa, numa_fields));
	put(o, "nics", objects_to_json(n->nics, n->n_nics, sizeof *n->nics, nic_fields));
	put(o, "pci", objects_to_json(n->pci, n->n_pci, sizeof *n->pci, pci_fields));
	json_t *devs = json_array();
	for (size_t i = 0; i < n->n_devices; i++)
		json_array_append_new(devs, device_to_json(&n->devices[i]));
	put(o, "devices", devs);
	put(o, "links", links_to_json(n));
	put(o, "cost_per_hour", jnum(n->cost_per_hour));
	put(o, "warnings", jstrv(n->warnings, n->n_warnings));
	return o;
}

json_t *xp_cluster_to_json(const struct xp_cluster *c)
{
	json_t *doc = json_object();
	put(doc, "schema", json_string(XP_INVENTORY_SCHEMA));
	uint64_t g = c->generation > INT64_MAX ? INT64_MAX : c->generation;
	put(doc, "generation", json_integer((json_int_t)g));
	json_t *nodes = json_array();
	for (size_t i = 0; i < c->n_nodes; i++)
		json_array_append_new(nodes, xp_node_to_json(c->nodes[i]));
	put(doc, "nodes", nodes);
	return doc;
}

/* Fewest significant digits, from 15 to 17, that read back as exactly v. */
/* v as the decimal m / 10^k (k <= 15, |m| < 10^15, no trailing zero in m when k > 0) of
 * which it is the nearest double, found without printing; false when there is none, or when
 * |v| < 1e-4 (which %g writes with an exponent). The division is of two exact doubles, hence
 * correctly rounded, so equality says v is that decimal's double; and a decimal of at most 15
 * significant digits (DBL_DIG) is what %.15g prints of its double, so such a v needs 15 digits
 * and its text can be spelled from m and k. Most reals of an inventory are such decimals
 * (989.4 TFLOPS, 69.5 degrees, 700.0 W). */
static bool short_decimal(double v, int64_t *m, int *k)
{
	static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13,
				     1e14, 1e15};
	double a = fabs(v);
	if (!(a >= 1e-4 && a < 1e15) && v != 0)
		return false;
	for (int e = 0; e <= 15; e++) {
		double x = rint(v * p10[e]);
		if (fabs(x) >= 1e15)
			return false;
		if (x / p10[e] == v) {
			int64_t q = (int64_t)x;
			int z = e;
			while (z > 0 && q % 10 == 0)
				q /= 10, z--;
			*m = q;
			*k = z;
			return true;
		}
	}
	return false;
}

static int real_digits(double v)
{
	int64_t m;
	int k;
	if (short_decimal(v, &m, &k))
		return 15;
	char buf[40];
	for (int p = 15; p < 17; p++) {
		snprintf(buf, sizeof buf, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			return p;
	}
	return 17;
}

/* ---- the streaming writer ---- */

/* xp_cluster_write spells the document itself, node by node, into a buffer, with exactly
 * the bytes jansson's json_dumpf writes for xp_cluster_to_json's tree (JSON_INDENT(2) or
 * JSON_COMPACT, one real precision for the whole document, keys in insertion order): no
 * tree of the whole cluster is built, so writing 100,000 nodes costs no more memory than
 * the model. check_json's test_writer_matches_tree holds the two spellings together. */

/* A real's digits or text, cached by its bits: a cluster repeats the same few values. */
struct real_slot {
	uint64_t bits;
	int digits;   /* real_digits, 0 when not computed */
	int prec;     /* the precision txt was written with, 0 when none */
	char txt[40];
};
#define REAL_SLOTS 512

struct wr {
	FILE *f;
	bool pretty, fail;
	int prec;
	int depth;
	bool first[64];     /* no element written yet at each depth */
	size_t n;
	char buf[1 << 16];
	struct real_slot reals[REAL_SLOTS];
};

static size_t real_slot(double v, uint64_t *bits)
{
	memcpy(bits, &v, sizeof v);
	uint64_t h = *bits * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 55) & (REAL_SLOTS - 1);
}

static int real_digits_cached(struct wr *w, double v)
{
	if (!isfinite(v))
		return 15;
	uint64_t bits;
	struct real_slot *s = &w->reals[real_slot(v, &bits)];
	if (s->bits != bits || !s->digits) {
		s->bits = bits;
		s->prec = 0;
		s->digits = real_digits(v);
	}
	return s->digits;
}

static void widen(struct wr *w, int *p, double v)
{
	int q = real_digits_cached(w, v);
	if (q > *p)
		*p = q;
}

/* The precision jansson would need for every real of the document (doc_digits on its tree). */
static int cluster_digits(struct wr *w, const struct xp_cluster *c)
{
	int p = 15;
	for (size_t i = 0; i < c->n_nodes && p < 17; i++) {
		const struct xp_node *n = c->nodes[i];
		widen(w, &p, n->cost_per_hour);
		for (size_t k = 0; k < n->n_devices; k++) {
			const struct xp_device *d = &n->devices[k];
			for (size_t j = 0; j < d->n_peaks; j++)
				widen(w, &p, isfinite(d->peaks[j].value) ? d->peaks[j].value : 0);
			widen(w, &p, d->ecu);
			widen(w, &p, d->temperature_c);
			widen(w, &p, d->power_w);
			widen(w, &p, d->power_limit_w);
			widen(w, &p, d->utilization_pct);
		}
	}
	return p;
}

int xp_cluster_real_digits(const struct xp_cluster *c)
{
	struct wr *w = xp_calloc(1, sizeof *w);
	int p = cluster_digits(w, c);
	free(w);
	return p;
}

static void w_flush(struct wr *w)
{
	if (w->n && fwrite(w->buf, 1, w->n, w->f) != w->n)
		w->fail = true;
	w->n = 0;
}

static __attribute__((noinline)) void w_put_slow(struct wr *w, const char *s, size_t k)
{
	w_flush(w);
	if (k > sizeof w->buf) {
		if (fwrite(s, 1, k, w->f) != k)
			w->fail = true;
		return;
	}
	memcpy(w->buf + w->n, s, k);
	w->n += k;
}

/* w_put and w_c are inline: every byte of the document comes through them. */
static inline void w_put(struct wr *w, const char *s, size_t k)
{
	if (w->n + k > sizeof w->buf) {
		w_put_slow(w, s, k);
		return;
	}
	memcpy(w->buf + w->n, s, k);
	w->n += k;
}

static inline void w_c(struct wr *w, char c)
{
	if (w->n == sizeof w->buf)
		w_flush(w);
	w->buf[w->n++] = c;
}

/* jansson's dump_indent: a new line and two spaces a level when indented, nothing when compact. */
static void w_indent(struct wr *w)
{
	static const char nl[] = "\n                                                                "
				 "                                                                ";
	if (!w->pretty)
		return;
	size_t n = 1 + 2 * (size_t)w->depth;
	if (n <= sizeof nl - 1) {
		w_put(w, nl, n);
		return;
	}
	w_c(w, '\n');
	for (int i = 0; i < w->depth; i++)
		w_put(w, "  ", 2);
}

/* Before an element of the open container (a key and its value, or an array entry). */
static void w_elem(struct wr *w)
{
	if (!w->first[w->depth])
		w_c(w, ',');
	w->first[w->depth] = false;
	w_indent(w);
}

static void w_open(struct wr *w, char c)
{
	w_c(w, c);
	w->depth++;
	w->first[w->depth] = true;
}

static void w_close(struct wr *w, char c)
{
	bool empty = w->first[w->depth];
	w->depth--;
	if (!empty)
		w_indent(w);
	w_c(w, c);
}

/* Bytes a JSON string must escape: controls, the quote and the backslash. */
static const bool w_special[256] = {[0 ... 0x1f] = true, ['"'] = true, ['\\'] = true};

/* The first byte from i on (before n) that w_special names: 16 bytes at a time with SSE2
 * (a byte below 0x20 is one that is below 0x20 as a signed byte and not negative). */
static inline size_t w_run(const char *s, size_t i, size_t n)
{
#ifdef __SSE2__
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20),
		      minus1 = _mm_set1_epi8(-1);
	for (; n - i >= 16; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		__m128i ctl = _mm_and_si128(_mm_cmplt_epi8(v, space), _mm_cmpgt_epi8(v, minus1));
		__m128i stop = _mm_or_si128(ctl, _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)));
		unsigned m = (unsigned)_mm_movemask_epi8(stop);
		if (m)
			return i + (size_t)__builtin_ctz(m);
	}
#endif
	while (i < n && !w_special[(unsigned char)s[i]])
		i++;
	return i;
}

/* A string known to be valid UTF-8, escaped as jansson does (\uXXXX in upper case). */
static void w_escaped(struct wr *w, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	w_c(w, '"');
	size_t i = 0;
	while (i < n) {
		size_t j = w_run(s, i, n);
		if (j > i)
			w_put(w, s + i, j - i);
		if (j == n)
			break;
		unsigned char c = (unsigned char)s[j];
		switch (c) {
		case '"': w_put(w, "\\\"", 2); break;
		case '\\': w_put(w, "\\\\", 2); break;
		case '\b': w_put(w, "\\b", 2); break;
		case '\f': w_put(w, "\\f", 2); break;
		case '\n': w_put(w, "\\n", 2); break;
		case '\r': w_put(w, "\\r", 2); break;
		case '\t': w_put(w, "\\t", 2); break;
		default: {
			char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			w_put(w, e, 6);
		}
		}
		i = j + 1;
	}
	w_c(w, '"');
}

static bool utf8_ok(const char *s, size_t n)
{
	size_t i = 0;
#ifdef __SSE2__
	/* ASCII 16 bytes at a time: most model strings are nothing else. */
	while (n - i >= 16 && !_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(const void *)(s + i))))
		i += 16;
#endif
	while (i < n) {
		if ((unsigned char)s[i] < 0x80) {
			i++;
			continue;
		}
		size_t k = xp_utf8_len((const unsigned char *)s + i, n - i);
		if (!k)
			return false;
		i += k;
	}
	return true;
}

/* A model string: null for NULL, bytes that are not UTF-8 as U+FFFD (as jstr does). */
static void w_str(struct wr *w, const char *s)
{
	if (!s) {
		w_put(w, "null", 4);
		return;
	}
	size_t n = strlen(s);
	if (utf8_ok(s, n)) {
		w_escaped(w, s, n);
		return;
	}
	char *fixed = utf8_fix(s);
	w_escaped(w, fixed, strlen(fixed));
	free(fixed);
}

static void w_keyn(struct wr *w, const char *key, size_t len)
{
	w_elem(w);
	w_escaped(w, key, len);
	if (w->pretty)
		w_put(w, ": ", 2);
	else
		w_c(w, ':');
}

static void w_key(struct wr *w, const char *key)
{
	w_elem(w);
	w_escaped(w, key, strlen(key));
	if (w->pretty)
		w_put(w, ": ", 2);
	else
		w_c(w, ':');
}

static void w_i64(struct wr *w, int64_t v)
{
	char b[24], *e = b + sizeof b, *p = e;
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	w_put(w, p, (size_t)(e - p));
}

/* jansson's jsonp_dtostr: %.*g, '.' whatever the locale, ".0" when it reads as an integer,
 * no '+' and no leading zeros in the exponent. */
static void real_text(double v, int prec, char *out, size_t cap)
{
	int64_t m;
	int k;
	/* At 15 digits, a short decimal is spelled from its digits: what %.15g writes of it
	 * (fixed notation, trailing zeros dropped) with ".0" for an integer, as below. */
	if (prec == 15 && cap >= 40 && short_decimal(v, &m, &k)) {
		char *p = out;
		if (signbit(v))
			*p++ = '-';
		uint64_t u = m < 0 ? (uint64_t)0 - (uint64_t)m : (uint64_t)m;
		char d[24];
		int n = 0;
		do {
			d[n++] = (char)('0' + u % 10);
			u /= 10;
		} while (u);
		/* d holds the digits from the last; at least k + 1 of them, zeros in front. */
		while (n < k + 1)
			d[n++] = '0';
		while (n > k)
			*p++ = d[--n];
		*p++ = '.';
		if (k == 0)
			*p++ = '0';
		while (n > 0)
			*p++ = d[--n];
		*p = '\0';
		return;
	}
	snprintf(out, cap, "%.*g", prec, v);
	const char *dp = localeconv()->decimal_point;
	if (dp && dp[0] && dp[0] != '.' && !dp[1]) {
		char *q = strchr(out, dp[0]);
		if (q)
			*q = '.';
	}
	if (!strchr(out, '.') && !strchr(out, 'e')) {
		size_t l = strlen(out);
		if (l + 3 <= cap)
			memcpy(out + l, ".0", 3);
	}
	char *start = strchr(out, 'e');
	if (start) {
		start++;
		char *end = start + 1;
		if (*start == '-')
			start++;
		while (*end == '0')
			end++;
		if (end != start)
			memmove(start, end, strlen(end) + 1);
	}
}

static void w_real(struct wr *w, double v)
{
	uint64_t bits;
	struct real_slot *s = &w->reals[real_slot(v, &bits)];
	if (s->bits != bits || s->prec != w->prec) {
		if (s->bits != bits)
			s->digits = 0;
		s->bits = bits;
		s->prec = w->prec;
		real_text(v, w->prec, s->txt, sizeof s->txt);
	}
	w_put(w, s->txt, strlen(s->txt));
}

/* As jint, jcount, jnum. */
static void w_int_or_null(struct wr *w, int64_t v)
{
	if (v < 0)
		w_put(w, "null", 4);
	else
		w_i64(w, v);
}

static void w_num(struct wr *w, double v)
{
	if (isfinite(v))
		w_real(w, v);
	else
		w_put(w, "null", 4);
}

static void w_strv(struct wr *w, char *const *v, size_t n)
{
	w_open(w, '[');
	for (size_t i = 0; i < n; i++) {
		w_elem(w);
		w_str(w, v[i]);
	}
	w_close(w, ']');
}

/* The fields f of the struct at base, in table order (as put_fields). */
static void w_fields(struct wr *w, const void *base, const struct field *f)
{
	const char *b = base;
	for (; f->key; f++) {
		const void *v = b + f->off;
		w_keyn(w, f->key, f->klen);
		switch (f->kind) {
		case F_STR:
		case F_ISTR:
			w_str(w, *(const char *const *)v);
			break;
		case F_I64:
			if (f->nullable)
				w_int_or_null(w, *(const int64_t *)v);
			else
				w_i64(w, *(const int64_t *)v < 0 ? 0 : *(const int64_t *)v);
			break;
		case F_INT: {
			int x = *(const int *)v;
			if (f->zero_null && x <= 0)
				w_put(w, "null", 4);
			else if (f->nullable)
				w_int_or_null(w, x);
			else
				w_i64(w, x < 0 ? 0 : x);
			break;
		}
		case F_NUM:
			w_num(w, *(const double *)v);
			break;
		case F_CLASS: {
			int cls = *(const int *)v;
			if (cls < 0 || cls > 0xffff) {
				w_put(w, "null", 4);
			} else {
				static const char hx[] = "0123456789abcdef";
				char q[6] = {'"', hx[cls >> 12 & 15], hx[cls >> 8 & 15], hx[cls >> 4 & 15], hx[cls & 15], '"'};
				w_put(w, q, 6);
			}
			break;
		}
		case F_STRV:
			w_strv(w, *(char **const *)v, *(const size_t *)(b + f->n_off));
			break;
		default: { /* F_ENUM */
			const char *s = f->name(*(const int *)v);
			w_str(w, s);
		}
		}
	}
}

static void w_objects(struct wr *w, const char *key, const void *arr, size_t n, size_t size,
		      const struct field *f)
{
	w_key(w, key);
	w_open(w, '[');
	for (size_t i = 0; i < n; i++) {
		w_elem(w);
		w_open(w, '{');
		w_fields(w, (const char *)arr + i * size, f);
		w_close(w, '}');
	}
	w_close(w, ']');
}

/* Labels as jansson's object keeps them: a key that is not UTF-8 is fixed, and when two keys
 * then meet, the first place keeps the last value (json_object_set_new replaces). */
static void w_labels(struct wr *w, const char *cls, const struct xp_labels *l)
{
	bool fix = false;
	for (size_t i = 0; i < l->n && !fix; i++)
		fix = !utf8_ok(l->keys[i], strlen(l->keys[i]));
	w_key(w, cls);
	w_open(w, '{');
	if (!fix) {
		for (size_t i = 0; i < l->n; i++) {
			w_key(w, l->keys[i]);
			w_str(w, l->values[i]);
		}
	} else {
		/* Rare (a discovered key with stray bytes): quadratic, but only here. */
		char **k = xp_calloc(l->n ? l->n : 1, sizeof *k);
		for (size_t i = 0; i < l->n; i++)
			k[i] = utf8_fix(l->keys[i]);
		for (size_t i = 0; i < l->n; i++) {
			size_t j = 0, last = i;
			while (j < i && strcmp(k[j], k[i]) != 0)
				j++;
			if (j < i)
				continue;
			for (size_t m = i + 1; m < l->n; m++)
				if (strcmp(k[m], k[i]) == 0)
					last = m;
			w_key(w, k[i]);
			w_str(w, l->values[last]);
		}
		for (size_t i = 0; i < l->n; i++)
			free(k[i]);
		free(k);
	}
	w_close(w, '}');
}

static void w_device(struct wr *w, const struct xp_device *d)
{
	w_open(w, '{');
	w_key(w, "index");
	w_i64(w, d->index);
	w_key(w, "vendor_index");
	w_int_or_null(w, d->vendor_index);
	w_fields(w, d, device_id_fields);
	w_fields(w, d, device_memory_fields);
	w_key(w, "peak");
	w_open(w, '[');
	for (size_t i = 0; i < d->n_peaks; i++) {
		w_elem(w);
		w_open(w, '{');
		w_key(w, "precision");
		w_str(w, d->peaks[i].precision);
		w_key(w, "value");
		w_real(w, isfinite(d->peaks[i].value) ? d->peaks[i].value : 0);
		w_key(w, "unit");
		w_str(w, d->peaks[i].unit);
		w_close(w, '}');
	}
	w_close(w, ']');
	w_fields(w, d, device_state_fields);
	w_key(w, "partition");
	w_open(w, '[');
	for (size_t i = 0; i < PART_COUNT; i++)
		if (d->partition & (1u << i)) {
			w_elem(w);
			w_str(w, part_names[i]);
		}
	w_close(w, ']');
	/* As device_to_json: mig_mode after partition; an allocation's uuid last, where known. */
	w_key(w, "mig_mode");
	if (d->mig_mode < 0)
		w_put(w, "null", 4);
	else
		w_put(w, d->mig_mode ? "true" : "false", d->mig_mode ? 4 : 5);
	w_key(w, "allocations");
	w_open(w, '[');
	for (size_t i = 0; i < d->n_allocs; i++) {
		w_elem(w);
		w_open(w, '{');
		w_fields(w, &d->allocs[i], alloc_fields);
		if (d->allocs[i].uuid)
			w_fields(w, &d->allocs[i], alloc_uuid_field);
		w_close(w, '}');
	}
	w_close(w, ']');
	if (d->procs_known) {
		w_key(w, "processes");
		w_open(w, '[');
		for (size_t i = 0; i < d->n_procs; i++) {
			const struct xp_proc *pr = &d->procs[i];
			w_elem(w);
			w_open(w, '{');
			w_key(w, "pid");
			w_int_or_null(w, pr->pid);
			w_fields(w, pr, proc_fields);
			w_key(w, "type");
			w_str(w, pr->type[0] ? pr->type : NULL);
			w_close(w, '}');
		}
		w_close(w, ']');
	}
	w_close(w, '}');
}

static void w_node(struct wr *w, const struct xp_node *n)
{
	char buf[16];
	w_open(w, '{');
	w_key(w, "name");
	w_str(w, n->name);
	w_fields(w, n, node_head_fields);
	w_key(w, "labels");
	w_open(w, '{');
	w_labels(w, label_classes[0], &n->facts);
	w_labels(w, label_classes[1], &n->governance);
	w_labels(w, label_classes[2], &n->validation);
	w_close(w, '}');
	w_key(w, "location");
	w_open(w, '{');
	w_fields(w, n, location_fields);
	w_close(w, '}');
	w_key(w, "cpu");
	w_open(w, '{');
	w_fields(w, n, cpu_fields);
	w_close(w, '}');
	w_key(w, "memory_mib");
	w_int_or_null(w, n->memory_mib);
	w_objects(w, "packages", n->packages, n->n_packages, sizeof *n->packages, package_fields);
	w_objects(w, "numa", n->numa, n->n_numa, sizeof *n->numa, numa_fields);
	w_objects(w, "nics", n->nics, n->n_nics, sizeof *n->nics, nic_fields);
	w_objects(w, "pci", n->pci, n->n_pci, sizeof *n->pci, pci_fields);
	w_key(w, "devices");
	w_open(w, '[');
	for (size_t i = 0; i < n->n_devices; i++) {
		w_elem(w);
		w_device(w, &n->devices[i]);
	}
	w_close(w, ']');
	w_key(w, "links");
	w_open(w, '[');
	for (size_t r = 0; n->links && r < n->n_devices; r++) {
		w_elem(w);
		w_open(w, '[');
		for (size_t c = 0; c < n->n_devices; c++) {
			w_elem(w);
			w_str(w, xp_link_str(*xp_node_link(n, r, c), buf, sizeof buf));
		}
		w_close(w, ']');
	}
	w_close(w, ']');
	w_key(w, "cost_per_hour");
	w_num(w, n->cost_per_hour);
	w_key(w, "warnings");
	w_strv(w, n->warnings, n->n_warnings);
	w_close(w, '}');
}

int xp_cluster_write(const struct xp_cluster *c, FILE *f, int pretty, struct xp_err *err)
{
	struct wr *w = xp_calloc(1, sizeof *w);
	w->f = f;
	w->pretty = pretty != 0;
	w->prec = cluster_digits(w, c);
	w_open(w, '{');
	w_key(w, "schema");
	w_str(w, XP_INVENTORY_SCHEMA);
	w_key(w, "generation");
	w_i64(w, c->generation > INT64_MAX ? INT64_MAX : (int64_t)c->generation);
	w_key(w, "nodes");
	w_open(w, '[');
	for (size_t i = 0; i < c->n_nodes && !w->fail; i++) {
		w_elem(w);
		w_node(w, c->nodes[i]);
	}
	w_close(w, ']');
	w_close(w, '}');
	w_c(w, '\n');
	w_flush(w);
	bool failed = w->fail;
	free(w);
	if (failed || fflush(f) == EOF || ferror(f))
		return xp_errf(err, "cannot write the inventory: %s", strerror(errno));
	return 0;
}

/* ---- decoding ---- */

/* The decoder reads the text once, front to back, with the pull tokenizer (jsonpull.h), and
 * builds the model as it goes: no document tree, so memory follows the model, not the text.
 * Every decoder below returns 0, or -1 with err set to "PATH: message" (a validation error)
 * or the tokenizer failed (a syntax error, "LINE:COLUMN: message"). A key that is absent
 * leaves the model's default in place; that is what "not known" means, and it lets old and
 * new writers share the schema. Checks that need a whole node (a PCI function's accelerator,
 * the link matrix) run when the node's object ends, in the order a tree walk would take. */

/* Where a value is, built on the stack and spelled only in messages ("$.nodes[3].devices[1]"). */
struct jpath {
	const struct jpath *up; /* NULL at the root */
	const char *key;        /* ".key" (at most 64 bytes shown), or the root's own text */
	size_t idx;             /* "[idx]" when key is NULL */
};

static void path_str(char *out, const struct jpath *p)
{
	const struct jpath *chain[64];
	size_t n = 0;
	for (; p && n < 64; p = p->up)
		chain[n++] = p;
	size_t len = 0;
	int w = 0;
	out[0] = '\0';
	while (n-- > 0 && len < PATH_LEN) {
		const struct jpath *q = chain[n];
		if (!q->up)
			w = snprintf(out + len, PATH_LEN - len, "%s", q->key);
		else if (q->key)
			w = snprintf(out + len, PATH_LEN - len, ".%.64s", q->key);
		else
			w = snprintf(out + len, PATH_LEN - len, "[%zu]", q->idx);
		if (w < 0)
			break;
		len += (size_t)w;
	}
	if (len >= PATH_LEN)
		memcpy(out + PATH_LEN - 4, "...", 4);
}

__attribute__((format(printf, 4, 5)))
static int bad(struct xp_err *err, const struct jpath *path, const char *key, const char *fmt, ...)
{
	char msg[384], p[PATH_LEN];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	path_str(p, path);
	if (key)
		return xp_errf(err, "%s.%s: %s", p, key, msg);
	return xp_errf(err, "%s: %s", p, msg);
}

/* Paths only ever appear in messages, so a path too long to fit is cut short and says so. */
void xp_json_path_cut(char *out, size_t cap, int n)
{
	if (n >= 0 && (size_t)n >= cap)
		memcpy(out + cap - 4, "...", 4);
}

void xp_json_path_idx(char *out, size_t cap, const char *path, size_t i)
{
	xp_json_path_cut(out, cap, snprintf(out, cap, "%s[%zu]", path, i));
}

const char *xp_json_type_name(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a real number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* The same names for what the tokenizer read. */
static const char *tname(enum xp_jp_type t)
{
	switch (t) {
	case XP_JP_OBJECT: return "an object";
	case XP_JP_ARRAY: return "an array";
	case XP_JP_STRING: return "a string";
	case XP_JP_INTEGER: return "an integer";
	case XP_JP_REAL: return "a real number";
	case XP_JP_TRUE:
	case XP_JP_FALSE: return "a boolean";
	default: return "null";
	}
}

static const char *or_null(bool nullable)
{
	return nullable ? " or null" : "";
}

/* One decoding: the reader, the error, and buffers reused from node to node. */
struct link_cell {
	struct xp_link l;
	char *msg; /* the cell's own error, reported when the matrix is checked in order */
};

struct link_row {
	bool is_array;
	size_t len;             /* cells in the row (all counted, at most LINK_KEEP kept) */
	struct link_cell *cells;
	size_t cap;
};

#define LINK_KEEP (XP_MAX_DEVICES + 1) /* rows and cells kept: one more than any node may have */

struct dec {
	struct xp_jp jp;
	struct xp_err *err;
	/* the current node's links, checked when the node ends */
	bool links_seen;
	const char *links_type; /* not an array: its type name */
	size_t n_rows;          /* rows counted */
	struct link_row *rows;  /* at most LINK_KEEP kept */
	size_t cap_rows;
	/* Devices, PCI functions and peaks are read into these buffers, kept from node to node,
	 * and each array is then copied once at its final size: growing every node's arrays one
	 * element at a time cost a realloc a power of two and kept malloc consolidating. */
	struct xp_device *devs;
	size_t n_devs, cap_devs;
	struct xp_pci *pcis;
	size_t n_pcis, cap_pcis;
	struct xp_peak *peaks;
	size_t n_peaks, cap_peaks;
	char **strs;
	size_t n_strs, cap_strs;
	/* the current node's PCI accelerators, checked against its devices when it ends */
	size_t *pci_accel;      /* index into pci of each function that names one */
	size_t n_pci_accel, cap_pci_accel;
	/* The interned strings this decoding has handed out (dec_istrn): found here without
	 * istr.c's lock; each entry holds a reference of its own, so that its text stays alive,
	 * and counts the references handed to fields since the last flush (ic_flush). */
	struct icache *ic;      /* IC_SLOTS, allocated on first use */
	uint16_t *ic_used;      /* slots in use, at most IC_MAX */
	size_t n_ic;
};

/* A decoder's interned string, and the holders it has not registered yet. */
struct icache {
	const char *s; /* NULL when the slot is empty */
	uint32_t hash, len;
	size_t pending;
};

#define IC_SLOTS 512
#define IC_MAX (IC_SLOTS / 2) /* distinct strings cached; more go to xp_istrn each time */

/* The interned copy of the n bytes at s, one more reference to it, as xp_istrn; a cluster
 * repeats a few dozen texts across every device, so nearly every call is a lookup here. */
static const char *dec_istrn(struct dec *d, const char *s, size_t n)
{
	if (n > UINT32_MAX)
		return xp_istrn(s, n);
	if (!d->ic) {
		d->ic = xp_calloc(IC_SLOTS, sizeof *d->ic);
		d->ic_used = xp_malloc(IC_MAX * sizeof *d->ic_used);
	}
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	size_t i = h & (IC_SLOTS - 1);
	for (; d->ic[i].s; i = (i + 1) & (IC_SLOTS - 1)) {
		struct icache *e = &d->ic[i];
		if (e->hash == h && e->len == n && memcmp(e->s, s, n) == 0) {
			e->pending++;
			return e->s;
		}
	}
	if (d->n_ic == IC_MAX)
		return xp_istrn(s, n);
	/* The entry's own reference; the field's is pending. */
	d->ic[i] = (struct icache){xp_istrn(s, n), h, (uint32_t)n, 1};
	d->ic_used[d->n_ic++] = (uint16_t)i;
	return d->ic[i].s;
}

/* Registers the references handed out since the last flush: before anything the decoder
 * built can be freed (a node that failed, a cluster given up, a field read twice), since its
 * fields release references istr.c must know of. */
static void ic_flush(struct dec *d)
{
	for (size_t k = 0; k < d->n_ic; k++) {
		struct icache *e = &d->ic[d->ic_used[k]];
		xp_istr_hold(e->s, e->pending);
		e->pending = 0;
	}
}

/* A C string cannot hold NUL, so "a\u0000b" would silently become "a". */
static int check_str_p(enum xp_jp_type t, const char *sv, size_t n, bool printable, const struct jpath *path,
		       const char *key, bool nullable, size_t max, struct xp_err *err)
{
	if (t != XP_JP_STRING)
		return bad(err, path, key, "expected a string%s, got %s", or_null(nullable), tname(t));
	/* Printable ASCII read as it was: no NUL, no control, nothing to reorder. */
	if (printable && n <= max)
		return 0;
	if (strlen(sv) != n)
		return bad(err, path, key, "a string must not contain NUL (\\u0000)");
	/* Control characters would reach operators' terminals as escape sequences
	 * (retitling the window, forging table lines) when the string is printed. */
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)sv[i];
		if (ch >= 0x20 && ch < 0x7f)
			continue;
		if (ch < 0x20 || ch == 0x7f)
			return bad(err, path, key, "a string must not contain control characters (byte 0x%02x at %zu)",
				   ch, i);
		/* U+0080-U+009F: terminals take some of them (CSI) as escape sequences too. */
		if (ch == 0xc2 && i + 1 < n && (unsigned char)sv[i + 1] < 0xa0)
			return bad(err, path, key, "a string must not contain control characters (U+%04X at %zu)",
				   (unsigned char)sv[i + 1], i);
		/* U+202E and friends reorder what is shown around them. */
		size_t b = xp_bidi_len(sv + i);
		if (b) {
			const unsigned char *u = (const unsigned char *)sv + i;
			unsigned cp = b == 2 ? (u[0] & 0x1fu) << 6 | (u[1] & 0x3fu)
					     : (u[0] & 0x0fu) << 12 | (u[1] & 0x3fu) << 6 | (u[2] & 0x3fu);
			return bad(err, path, key, "a string must not contain bidirectional controls (U+%04X at %zu)",
				   cp, i);
		}
	}
	if (n > max)
		return bad(err, path, key, "a string of %zu bytes, more than the %zu allowed", n, max);
	return 0;
}

/* Makes room for element n of *arr (size bytes each), doubling at powers of two as model.c's
 * appends do, so a list of k costs log k reallocations (the model frees lists with free). */
static void grow(void *arr, size_t n, size_t size)
{
	void **a = arr;
	if (n == 0 || (n & (n - 1)) == 0)
		*a = xp_realloc(*a, (n ? n * 2 : 1) * size);
}

/* check_str_p for the string the reader just read (it knows whether it was all printable). */
#define check_str(t, sv, n, path, key, nullable, max, err)                                             \
	((t) == XP_JP_STRING && (sv) == d->jp.str && d->jp.str_printable && (n) <= (max)                \
		 ? 0 /* check_str_p's first answer, without the call */                                 \
		 : check_str_p(t, sv, n, (sv) == d->jp.str && d->jp.str_printable, path, key, nullable, max, err))

/* The next element of a decoder buffer (size bytes each), growing it by doubling. */
static void *scratch(void *buf, size_t *n, size_t *cap, size_t size)
{
	void **b = buf;
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*b = xp_realloc(*b, *cap * size);
	}
	return (char *)*b + (*n)++ * size;
}

/* The string just read (checked: no NUL within), as a model string: its length is known,
 * so a copy of it and its terminator, without strndup's scan for the end. */
static char *take_str(struct dec *d)
{
	char *s = xp_malloc(d->jp.str_len + 1);
	memcpy(s, d->jp.str, d->jp.str_len + 1);
	return s;
}

static int rd_str(struct dec *d, const struct jpath *path, const char *key, bool nullable, char **out)
{
	enum xp_jp_type t = xp_jp_value(&d->jp);
	if (t == XP_JP_ERROR)
		return -1;
	if (nullable && t == XP_JP_NULL) {
		free(*out);
		*out = NULL;
		return 0;
	}
	if (check_str(t, d->jp.str, d->jp.str_len, path, key, nullable, STR_MAX, d->err))
		return -1;
	free(*out);
	*out = take_str(d);
	return 0;
}

/* As rd_str into an interned field: one reference to the shared text. */
static int rd_istr(struct dec *d, const struct jpath *path, const char *key, bool nullable, const char **out)
{
	enum xp_jp_type t = xp_jp_value(&d->jp);
	if (t == XP_JP_ERROR)
		return -1;
	const char *old = *out;
	if (nullable && t == XP_JP_NULL) {
		*out = NULL;
	} else {
		if (check_str(t, d->jp.str, d->jp.str_len, path, key, nullable, STR_MAX, d->err))
			return -1;
		*out = dec_istrn(d, d->jp.str, d->jp.str_len);
	}
	if (old) {
		ic_flush(d);
		xp_istr_drop(old);
	}
	return 0;
}

/* Integers; null (when allowed) is -1, the model's "not known". */
static int rd_int(struct dec *d, const struct jpath *path, const char *key, int64_t min, int64_t max,
		  bool nullable, int64_t *out)
{
	enum xp_jp_type t = xp_jp_value(&d->jp);
	if (t == XP_JP_ERROR)
		return -1;
	if (nullable && t == XP_JP_NULL) {
		*out = -1;
		return 0;
	}
	if (t != XP_JP_INTEGER)
		return bad(d->err, path, key, "expected an integer%s, got %s", or_null(nullable), tname(t));
	int64_t x = d->jp.ival;
	if (x >= min && x <= max) {
		*out = x;
		return 0;
	}
	if (min == 0 && max == INT64_MAX)
		return bad(d->err, path, key, "expected a non-negative integer%s, got %lld",
			   or_null(nullable), (long long)x);
	return bad(d->err, path, key, "expected an integer from %lld to %lld%s, got %lld",
		   (long long)min, (long long)max, or_null(nullable), (long long)x);
}

static int rd_i(struct dec *d, const struct jpath *path, const char *key, int max, bool nullable, int *out)
{
	int64_t v = *out;
	if (rd_int(d, path, key, 0, max, nullable, &v))
		return -1;
	*out = (int)v;
	return 0;
}

/* Numbers (integer or real); null (when allowed) is XP_NA. */
static int rd_num(struct dec *d, const struct jpath *path, const char *key, double min, double max,
		  bool nullable, double *out)
{
	enum xp_jp_type t = xp_jp_value(&d->jp);
	if (t == XP_JP_ERROR)
		return -1;
	if (nullable && t == XP_JP_NULL) {
		*out = XP_NA;
		return 0;
	}
	if (t != XP_JP_INTEGER && t != XP_JP_REAL)
		return bad(d->err, path, key, "expected a number%s, got %s", or_null(nullable), tname(t));
	double x = d->jp.dval;
	if (x >= min && x <= max) {
		*out = x;
		return 0;
	}
	if (isinf(max))
		return bad(d->err, path, key, "expected a number >= %g%s, got %g", min, or_null(nullable), x);
	return bad(d->err, path, key, "expected a number from %g to %g%s, got %g", min, max,
		   or_null(nullable), x);
}

static int rd_enum(struct dec *d, const struct jpath *path, const char *key, int (*parse)(const char *),
		   const char *choices, int *out)
{
	enum xp_jp_type t = xp_jp_value(&d->jp);
	if (t == XP_JP_ERROR)
		return -1;
	int x = -1;
	if (t == XP_JP_STRING && strlen(d->jp.str) == d->jp.str_len)
		x = parse(d->jp.str);
	if (x < 0)
		return bad(d->err, path, key, "expected one of %s", choices);
	*out = x;
	return 0;
}

/* PCI class as 4 hex digits ("0302"), the spelling lspci and sysfs use. */
static int rd_class(struct dec *d, const struct jpath *path, const char *key, int *out)
{
	enum xp_jp_type t = xp_jp_value(&d->jp);
	if (t == XP_JP_ERROR)
		return -1;
	if (t == XP_JP_NULL) {
		*out = -1;
		return 0;
	}
	const char *s = d->jp.str;
	bool ok = t == XP_JP_STRING && d->jp.str_len == 4;
	int v = 0;
	for (size_t i = 0; ok && i < 4; i++) {
		char c = s[i];
		int x = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		ok = x >= 0;
		v = v << 4 | x;
	}
	if (!ok)
		return bad(d->err, path, key, "expected 4 hex digits (\"0302\") or null");
	*out = v;
	return 0;
}

/* Enters the array at key: 0 when it is one, -1 (an error naming it) when not. */
static int rd_array(struct dec *d, const struct jpath *path, const char *key)
{
	enum xp_jp_type t = xp_jp_value(&d->jp);
	if (t == XP_JP_ERROR)
		return -1;
	if (t != XP_JP_ARRAY)
		return bad(d->err, path, key, "expected an array, got %s", tname(t));
	return 0;
}

static int rd_object(struct dec *d, const struct jpath *path, const char *key)
{
	enum xp_jp_type t = xp_jp_value(&d->jp);
	if (t == XP_JP_ERROR)
		return -1;
	if (t != XP_JP_OBJECT)
		return bad(d->err, path, key, "expected an object, got %s", tname(t));
	return 0;
}

static int rd_strv(struct dec *d, const struct jpath *path, const char *key, char ***v, size_t *n)
{
	if (rd_array(d, path, key))
		return -1;
	struct jpath p = {path, key, 0};
	int r;
	/* Into the buffer, then one copy of the final size (appended to what *v holds). */
	d->n_strs = 0;
	for (size_t i = 0; (r = xp_jp_next_elem(&d->jp)) == 1; i++) {
		struct jpath ep = {&p, NULL, i};
		enum xp_jp_type t = xp_jp_value(&d->jp);
		if (t == XP_JP_ERROR || check_str(t, d->jp.str, d->jp.str_len, &ep, NULL, false, STR_MAX, d->err)) {
			r = -1;
			break;
		}
		*(char **)scratch(&d->strs, &d->n_strs, &d->cap_strs, sizeof *d->strs) = take_str(d);
	}
	if (d->n_strs) {
		*v = xp_realloc(*v, (*n + d->n_strs) * sizeof **v);
		memcpy(*v + *n, d->strs, d->n_strs * sizeof **v);
		*n += d->n_strs;
	}
	return r;
}

/* The fields of one kind of object: up to four tables, matched against its keys. Writers
 * list keys in table order, so the entry after the last match is tried first; duplicates of
 * a table's keys are found with a bit each, other keys go to the reader's own check. */
struct fmatch {
	const struct field *t[4];
	size_t nt;
	size_t hint[4];
	size_t off[4];  /* bit of each table's first field */
	uint64_t seen;
};

#define NFIELDS(t) (sizeof t / sizeof t[0] - 1)

static bool key_is(const struct field *f, const struct xp_jp *jp)
{
	return f->key && f->klen == jp->key_len && memcmp(f->key, jp->key, jp->key_len) == 0;
}

/* Reads the next key: 1 with *out its field (or NULL for another key), 0 at the end, -1 on error. */
static int next_field(struct dec *d, struct fmatch *m, const struct field **out)
{
	int r = xp_jp_next_key_unchecked(&d->jp);
	if (r != 1)
		return r;
	const struct field *f = NULL;
	size_t ft = 0, fi = 0;
	for (size_t t = 0; t < m->nt && !f; t++)
		if (key_is(&m->t[t][m->hint[t]], &d->jp))
			f = &m->t[t][m->hint[t]], ft = t, fi = m->hint[t];
	for (size_t t = 0; t < m->nt && !f; t++)
		for (size_t i = 0; m->t[t][i].key && !f; i++)
			if (key_is(&m->t[t][i], &d->jp))
				f = &m->t[t][i], ft = t, fi = i;
	*out = f;
	if (!f)
		return xp_jp_key_check(&d->jp) ? -1 : 1;
	uint64_t bit = (uint64_t)1 << (m->off[ft] + fi);
	if (m->seen & bit)
		return xp_jp_key_dup(&d->jp);
	m->seen |= bit;
	m->hint[ft] = fi + 1;
	return 1;
}

/* A matcher for the tables given (at most four, 64 fields in all). */
#define FMATCH1(a) {.t = {a}, .nt = 1}
#define FMATCH2(a, b) {.t = {a, b}, .nt = 2, .off = {0, NFIELDS(a)}}
#define FMATCH3(a, b, c) {.t = {a, b, c}, .nt = 3, .off = {0, NFIELDS(a), NFIELDS(a) + NFIELDS(b)}}
#define FMATCH4(a, b, c, e) {.t = {a, b, c, e}, .nt = 4, \
			     .off = {0, NFIELDS(a), NFIELDS(a) + NFIELDS(b), NFIELDS(a) + NFIELDS(b) + NFIELDS(c)}}

/* Decodes the value of field f into the struct at base. */
static int rd_field(struct dec *d, const struct jpath *p, void *base, const struct field *f)
{
	char *b = base;
	void *v = b + f->off;
	int rc;
	switch (f->kind) {
	case F_STR:
		return rd_str(d, p, f->key, f->nullable, v);
	case F_ISTR:
		return rd_istr(d, p, f->key, f->nullable, v);
	case F_I64:
		return rd_int(d, p, f->key, 0, INT64_MAX, f->nullable, v);
	case F_INT:
		rc = rd_i(d, p, f->key, (int)f->max, f->nullable, v);
		if ((f->zero_null || f->null_zero) && *(int *)v < 0)
			*(int *)v = 0;
		return rc;
	case F_NUM:
		return rd_num(d, p, f->key, f->min, f->max, true, v);
	case F_CLASS:
		return rd_class(d, p, f->key, v);
	case F_STRV:
		return rd_strv(d, p, f->key, v, (size_t *)(b + f->n_off));
	default: /* F_ENUM */
		return rd_enum(d, p, f->key, f->parse, f->choices, v);
	}
}

/* Skips the value of a key nobody knows (a newer writer's), checking its syntax. */
static int skip_value(struct dec *d)
{
	return xp_jp_skip(&d->jp, xp_jp_value(&d->jp));
}

/* Reads the fields of an object whose '{' was read: table fields into base, others skipped. */
static int rd_fields(struct dec *d, const struct jpath *p, void *base, const struct field *f)
{
	int r;
	struct fmatch m = FMATCH1(f);
	const struct field *k;
	while ((r = next_field(d, &m, &k)) == 1)
		if (k ? rd_field(d, p, base, k) : skip_value(d))
			return -1;
	return r;
}

/* Calls fn on each object of the array at key, with its path ("...devices[3]"). */
typedef int (*elem_fn)(struct dec *d, const struct jpath *path, void *ctx);

static int rd_objects(struct dec *d, const struct jpath *path, const char *key, size_t max, elem_fn fn,
		      void *ctx)
{
	if (rd_array(d, path, key))
		return -1;
	struct jpath p = {path, key, 0};
	int r;
	for (size_t i = 0; (r = xp_jp_next_elem(&d->jp)) == 1; i++) {
		if (i >= max)
			return bad(d->err, path, key, "more than the %zu entries allowed", max);
		struct jpath ep = {&p, NULL, i};
		enum xp_jp_type t = xp_jp_value(&d->jp);
		if (t == XP_JP_ERROR)
			return -1;
		if (t != XP_JP_OBJECT)
			return bad(d->err, &ep, NULL, "expected an object, got %s", tname(t));
		if (fn(d, &ep, ctx))
			return -1;
	}
	return r;
}

static int labels_from(struct dec *d, const struct jpath *path, struct xp_labels *l)
{
	int r;
	while ((r = xp_jp_next_key(&d->jp)) == 1) {
		const char *key = d->jp.key;
		size_t klen = d->jp.key_len;
		struct jpath kp = {path, key, 0};
		if (klen != strlen(key))
			return bad(d->err, &kp, NULL, "a label name must not contain NUL (\\u0000)");
		if (klen == 0 || klen > STR_MAX)
			return bad(d->err, &kp, NULL, "a label name must have 1 to %d bytes", STR_MAX);
		/* The path keeps the name's first 64 bytes: a container value would overwrite key. */
		char shown[65];
		snprintf(shown, sizeof shown, "%s", key);
		kp.key = shown;
		enum xp_jp_type t = xp_jp_value(&d->jp);
		if (t == XP_JP_ERROR || check_str(t, d->jp.str, d->jp.str_len, &kp, NULL, false, STR_MAX, d->err))
			return -1;
		xp_labels_append(l, d->jp.key, d->jp.str);
	}
	return r;
}

static int node_labels(struct dec *d, const struct jpath *path, struct xp_node *n)
{
	struct xp_labels *dst[] = {&n->facts, &n->governance, &n->validation};
	if (rd_object(d, path, "labels"))
		return -1;
	struct jpath lp = {path, "labels", 0};
	int r;
	while ((r = xp_jp_next_key(&d->jp)) == 1) {
		size_t i = 0;
		while (i < 3 && strcmp(d->jp.key, label_classes[i]) != 0)
			i++;
		if (i == 3) {
			if (skip_value(d))
				return -1;
			continue;
		}
		struct jpath cp = {&lp, label_classes[i], 0};
		if (rd_object(d, &lp, label_classes[i]) || labels_from(d, &cp, dst[i]))
			return -1;
	}
	return r;
}

static int package_from(struct dec *d, const struct jpath *p, void *ctx)
{
	return rd_fields(d, p, xp_node_add_package(ctx), package_fields);
}

static int numa_from(struct dec *d, const struct jpath *p, void *ctx)
{
	struct xp_node *n = ctx;
	struct xp_numa *m = xp_node_add_numa(n);
	if (rd_fields(d, p, m, numa_fields))
		return -1;
	/* xp_node_numa_by_id returns the first match, so a second one would be invisible. */
	for (size_t i = 0; i + 1 < n->n_numa; i++)
		if (n->numa[i].id == m->id)
			return bad(d->err, p, "id", "NUMA id %d appears twice", m->id);
	return 0;
}

static int nic_from(struct dec *d, const struct jpath *p, void *ctx)
{
	struct xp_nic *c = xp_node_add_nic(ctx);
	if (rd_fields(d, p, c, nic_fields))
		return -1;
	/* Every listing prints it: a nameless NIC has nothing to show. */
	if (!c->name)
		return bad(d->err, p, "name", "missing (every NIC needs a name)");
	return 0;
}

static int pci_from(struct dec *d, const struct jpath *p, void *ctx)
{
	(void)ctx;
	struct xp_pci *f = scratch(&d->pcis, &d->n_pcis, &d->cap_pcis, sizeof *d->pcis);
	xp_pci_init(f);
	if (rd_fields(d, p, f, pci_fields))
		return -1;
	if (!f->bus_id)
		return bad(d->err, p, "bus_id", "missing (every PCI function has a bus id)");
	/* Views index devices[] with it: checked when the node ends, as devices may follow. */
	if (f->accel >= 0) {
		if (d->n_pci_accel == d->cap_pci_accel) {
			d->cap_pci_accel = d->cap_pci_accel ? d->cap_pci_accel * 2 : 16;
			d->pci_accel = xp_realloc(d->pci_accel, d->cap_pci_accel * sizeof *d->pci_accel);
		}
		d->pci_accel[d->n_pci_accel++] = d->n_pcis - 1;
	}
	return 0;
}

static const struct field peak_fields[] = {
	{.key = "precision", .klen = 9, .kind = F_ISTR, .off = offsetof(struct xp_peak, precision)},
	{.key = "value", .klen = 5, .kind = F_NUM, .off = offsetof(struct xp_peak, value), .max = INFINITY},
	{.key = "unit", .klen = 4, .kind = F_ISTR, .off = offsetof(struct xp_peak, unit)},
	{0},
};

static int peak_from(struct dec *d, const struct jpath *p, void *ctx)
{
	(void)ctx;
	struct xp_peak *k = scratch(&d->peaks, &d->n_peaks, &d->cap_peaks, sizeof *d->peaks);
	memset(k, 0, sizeof *k);
	int r;
	struct fmatch m = FMATCH1(peak_fields);
	const struct field *f;
	while ((r = next_field(d, &m, &f)) == 1) {
		/* A peak's value is never null: one without a value is not worth listing. */
		if (!f ? skip_value(d)
		       : f->kind == F_NUM ? rd_num(d, p, f->key, 0, INFINITY, false, &k->value)
					  : rd_field(d, p, k, f))
			return -1;
	}
	if (r)
		return -1;
	/* A peak without its precision or unit compares with nothing. */
	if (!k->precision || !k->unit)
		return bad(d->err, p, k->precision ? "unit" : "precision", "missing");
	return 0;
}

static int alloc_from(struct dec *d, const struct jpath *p, void *ctx)
{
	struct xp_device *dv = ctx;
	grow(&dv->allocs, dv->n_allocs, sizeof *dv->allocs);
	struct xp_alloc *a = &dv->allocs[dv->n_allocs++];
	memset(a, 0, sizeof *a);
	a->memory_mib = -1;
	struct fmatch m = FMATCH2(alloc_fields, alloc_uuid_field);
	const struct field *k;
	int r;
	while ((r = next_field(d, &m, &k)) == 1)
		if (k ? rd_field(d, p, a, k) : skip_value(d))
			return -1;
	return r;
}

enum { PROC_PID, PROC_TYPE };
static const struct field proc_own_fields[] = {
	[PROC_PID] = {.key = "pid", .klen = 3, .kind = F_OWN},
	[PROC_TYPE] = {.key = "type", .klen = 4, .kind = F_OWN},
	{0},
};

static int proc_from(struct dec *d, const struct jpath *p, void *ctx)
{
	struct xp_proc *pr = xp_device_add_proc(ctx);
	struct fmatch m = FMATCH2(proc_fields, proc_own_fields);
	const struct field *k;
	int r;
	while ((r = next_field(d, &m, &k)) == 1) {
		if (!k) {
			if (skip_value(d))
				return -1;
		} else if (k->kind != F_OWN) {
			if (rd_field(d, p, pr, k))
				return -1;
			if (k->off == offsetof(struct xp_proc, command) && pr->command &&
			    strlen(pr->command) > PROC_COMMAND_MAX)
				return bad(d->err, p, "command", "a string of %zu bytes, more than the %d allowed",
					   strlen(pr->command), PROC_COMMAND_MAX);
		} else if (k == &proc_own_fields[PROC_PID]) {
			if (rd_int(d, p, "pid", 0, PROC_PID_MAX, true, &pr->pid))
				return -1;
		} else {
			enum xp_jp_type t = xp_jp_value(&d->jp);
			if (t == XP_JP_ERROR)
				return -1;
			if (t == XP_JP_NULL) {
				pr->type[0] = '\0';
				continue;
			}
			const char *v = t == XP_JP_STRING && strlen(d->jp.str) == d->jp.str_len ? d->jp.str : "";
			if (strcmp(v, "C") != 0 && strcmp(v, "G") != 0 && strcmp(v, "C+G") != 0)
				return bad(d->err, p, "type", "expected \"C\", \"G\", \"C+G\" or null, got %s",
					   t == XP_JP_STRING ? "another string" : tname(t));
			snprintf(pr->type, sizeof pr->type, "%s", v);
		}
	}
	return r;
}

static int rd_partition(struct dec *d, const struct jpath *path, unsigned *out)
{
	if (rd_array(d, path, "partition"))
		return -1;
	struct jpath p = {path, "partition", 0};
	unsigned bits = 0;
	int r;
	for (size_t i = 0; (r = xp_jp_next_elem(&d->jp)) == 1; i++) {
		enum xp_jp_type t = xp_jp_value(&d->jp);
		if (t == XP_JP_ERROR)
			return -1;
		size_t k = PART_COUNT;
		if (t == XP_JP_STRING && strlen(d->jp.str) == d->jp.str_len)
			for (k = 0; k < PART_COUNT; k++)
				if (strcmp(part_names[k], d->jp.str) == 0)
					break;
		if (k == PART_COUNT) {
			struct jpath ep = {&p, NULL, i};
			return bad(d->err, &ep, NULL, "expected one of whole, mig, vnpu, share");
		}
		bits |= 1u << k;
	}
	*out = bits;
	return r;
}

/* A device's keys its own code reads, in the order writers put them. */
enum { DEV_INDEX, DEV_VENDOR_INDEX, DEV_PEAK, DEV_PARTITION, DEV_MIG_MODE, DEV_ALLOCATIONS, DEV_PROCESSES };
static const struct field device_own_fields[] = {
	[DEV_INDEX] = {.key = "index", .klen = 5, .kind = F_OWN},
	[DEV_VENDOR_INDEX] = {.key = "vendor_index", .klen = 12, .kind = F_OWN},
	[DEV_PEAK] = {.key = "peak", .klen = 4, .kind = F_OWN},
	[DEV_PARTITION] = {.key = "partition", .klen = 9, .kind = F_OWN},
	[DEV_MIG_MODE] = {.key = "mig_mode", .klen = 8, .kind = F_OWN},
	[DEV_ALLOCATIONS] = {.key = "allocations", .klen = 11, .kind = F_OWN},
	[DEV_PROCESSES] = {.key = "processes", .klen = 9, .kind = F_OWN},
	{0},
};

static int device_from(struct dec *d, const struct jpath *p, void *ctx)
{
	(void)ctx;
	struct xp_device *dv = scratch(&d->devs, &d->n_devs, &d->cap_devs, sizeof *d->devs);
	xp_device_init(dv, (int)d->n_devs - 1);
	struct fmatch m = FMATCH4(device_id_fields, device_memory_fields, device_state_fields, device_own_fields);
	const struct field *f;
	int r;
	while ((r = next_field(d, &m, &f)) == 1) {
		if (!f) {
			if (skip_value(d))
				return -1;
			continue;
		}
		if (f->kind != F_OWN) {
			if (rd_field(d, p, dv, f))
				return -1;
			continue;
		}
		switch (f - device_own_fields) {
		case DEV_INDEX: {
			int64_t index = dv->index;
			/* Link rows and pci accelerator fields refer to devices by position. */
			if (rd_int(d, p, "index", 0, INT_MAX, false, &index))
				return -1;
			if (index != dv->index)
				return bad(d->err, p, "index", "expected %d (the position in devices), got %lld",
					   dv->index, (long long)index);
			break;
		}
		case DEV_VENDOR_INDEX:
			if (rd_i(d, p, "vendor_index", ID_MAX, true, &dv->vendor_index))
				return -1;
			break;
		case DEV_PEAK: {
			/* Into the buffer, then one copy of the final size (the device owns it even
			 * after an error, so that freeing the node frees its strings). */
			d->n_peaks = 0;
			int rc = rd_objects(d, p, "peak", SIZE_MAX, peak_from, NULL);
			free(dv->peaks);
			dv->peaks = d->n_peaks ? xp_malloc(d->n_peaks * sizeof *dv->peaks) : NULL;
			if (d->n_peaks)
				memcpy(dv->peaks, d->peaks, d->n_peaks * sizeof *dv->peaks);
			dv->n_peaks = d->n_peaks;
			if (rc)
				return -1;
			break;
		}
		case DEV_PARTITION:
			if (rd_partition(d, p, &dv->partition))
				return -1;
			break;
		case DEV_MIG_MODE: {
			/* true, false or null; absent (a file written before it) is null: not known. */
			enum xp_jp_type t = xp_jp_value(&d->jp);
			if (t == XP_JP_ERROR)
				return -1;
			if (t != XP_JP_TRUE && t != XP_JP_FALSE && t != XP_JP_NULL)
				return bad(d->err, p, "mig_mode", "expected true, false or null, got %s", tname(t));
			dv->mig_mode = t == XP_JP_NULL ? -1 : t == XP_JP_TRUE;
			break;
		}
		case DEV_ALLOCATIONS:
			if (rd_objects(d, p, "allocations", SIZE_MAX, alloc_from, dv))
				return -1;
			break;
		default: { /* DEV_PROCESSES: null (or absent) is "not known", [] is "none" */
			enum xp_jp_type t = xp_jp_value(&d->jp);
			if (t == XP_JP_ERROR)
				return -1;
			if (t == XP_JP_NULL)
				break;
			if (t != XP_JP_ARRAY)
				return bad(d->err, p, "processes", "expected an array or null, got %s", tname(t));
			dv->procs_known = true;
			struct jpath pp = {p, "processes", 0};
			int rr;
			for (size_t i = 0; (rr = xp_jp_next_elem(&d->jp)) == 1; i++) {
				struct jpath ep = {&pp, NULL, i};
				if (i >= XP_MAX_PROCS)
					return bad(d->err, p, "processes", "more than the %d entries allowed", XP_MAX_PROCS);
				enum xp_jp_type et = xp_jp_value(&d->jp);
				if (et == XP_JP_ERROR)
					return -1;
				if (et != XP_JP_OBJECT)
					return bad(d->err, &ep, NULL, "expected an object, got %s", tname(et));
				if (proc_from(d, &ep, dv))
					return -1;
			}
			if (rr)
				return -1;
			break;
		}
		}
	}
	return r;
}

/* ---- the link matrix: read whole, checked when the node ends ---- */

static struct link_row *link_row_add(struct dec *d)
{
	size_t r = d->n_rows++;
	if (r >= LINK_KEEP)
		return NULL;
	if (r == d->cap_rows) {
		size_t c = d->cap_rows ? d->cap_rows * 2 : 8;
		d->rows = xp_realloc(d->rows, c * sizeof *d->rows);
		memset(d->rows + d->cap_rows, 0, (c - d->cap_rows) * sizeof *d->rows);
		d->cap_rows = c;
	}
	struct link_row *row = &d->rows[r];
	row->is_array = false;
	row->len = 0;
	return row;
}

static void links_clear(struct dec *d)
{
	size_t n = d->n_rows < LINK_KEEP ? d->n_rows : LINK_KEEP;
	for (size_t r = 0; r < n; r++) {
		struct link_row *row = &d->rows[r];
		size_t k = row->len < LINK_KEEP ? row->len : LINK_KEEP;
		for (size_t c = 0; c < k; c++) {
			free(row->cells[c].msg);
			row->cells[c].msg = NULL;
		}
		row->len = 0;
	}
	d->n_rows = 0;
	d->links_seen = false;
	d->links_type = NULL;
}

static void links_free(struct dec *d)
{
	links_clear(d);
	for (size_t r = 0; r < d->cap_rows; r++)
		free(d->rows[r].cells);
	free(d->rows);
}

/* One cell: its name is checked now (the message kept), its place in the matrix later. */
static int link_cell_read(struct dec *d, struct link_row *row, const struct jpath *rp)
{
	enum xp_jp_type t = xp_jp_value(&d->jp);
	if (t == XP_JP_ERROR || xp_jp_skip(&d->jp, t))
		return -1;
	/* Counted only once it is read: a cell counted but never stored would be freed by
	 * links_clear from memory the row does not have. */
	size_t c = row->len++;
	if (c >= LINK_KEEP)
		return 0;
	if (c == row->cap) {
		row->cap = row->cap ? row->cap * 2 : 8;
		row->cells = xp_realloc(row->cells, row->cap * sizeof *row->cells);
	}
	struct link_cell *cell = &row->cells[c];
	cell->msg = NULL;
	struct jpath cp = {rp, NULL, c};
	struct xp_err e = {{0}};
	size_t r = d->n_rows - 1;
	if (check_str(t, d->jp.str, d->jp.str_len, &cp, NULL, false, STR_MAX, &e) == 0) {
		const char *s = d->jp.str;
		if (xp_link_parse(s, &cell->l) < 0)
			bad(&e, &cp, NULL, "unknown link class \"%.32s\"", s);
		else if (r == c && cell->l.cls != XP_LINK_SELF)
			bad(&e, &cp, NULL, "expected \"X\" on the diagonal, got \"%.32s\"", s);
		else if (r != c && cell->l.cls == XP_LINK_SELF)
			bad(&e, &cp, NULL, "\"X\" is only allowed on the diagonal");
	}
	if (e.msg[0])
		cell->msg = xp_strdup(e.msg);
	return 0;
}

static int rd_links(struct dec *d, const struct jpath *path)
{
	enum xp_jp_type t = xp_jp_value(&d->jp);
	if (t == XP_JP_ERROR)
		return -1;
	links_clear(d);
	d->links_seen = true;
	if (t != XP_JP_ARRAY) {
		d->links_type = tname(t);
		return xp_jp_skip(&d->jp, t);
	}
	struct jpath lp = {path, "links", 0};
	int r;
	for (size_t i = 0; (r = xp_jp_next_elem(&d->jp)) == 1; i++) {
		struct link_row *row = link_row_add(d);
		enum xp_jp_type rt = xp_jp_value(&d->jp);
		if (rt == XP_JP_ERROR)
			return -1;
		if (!row || rt != XP_JP_ARRAY) {
			if (xp_jp_skip(&d->jp, rt))
				return -1;
			continue;
		}
		row->is_array = true;
		struct jpath rp = {&lp, NULL, i};
		int q;
		while ((q = xp_jp_next_elem(&d->jp)) == 1)
			if (link_cell_read(d, row, &rp))
				return -1;
		if (q)
			return -1;
	}
	return r;
}

/* The matrix, checked as a tree walk would: rows, then each row, then each cell. */
static int node_links(struct dec *d, const struct jpath *path, struct xp_node *n)
{
	char b1[16], b2[16];
	size_t k = n->n_devices;
	/* Views read any cell of a node with devices, so the matrix always exists. */
	xp_node_links_reset(n);
	if (!d->links_seen)
		return 0;
	if (d->links_type)
		return bad(d->err, path, "links", "expected an array, got %s", d->links_type);
	struct jpath lp = {path, "links", 0};
	if (d->n_rows != k)
		return bad(d->err, &lp, NULL, "expected %zu rows (one per device), got %zu", k, d->n_rows);
	for (size_t r = 0; r < k; r++) {
		const struct link_row *row = &d->rows[r];
		struct jpath rp = {&lp, NULL, r};
		if (!row->is_array || row->len != k)
			return bad(d->err, &rp, NULL, "expected an array of %zu link names", k);
		for (size_t c = 0; c < k; c++) {
			const struct link_cell *cell = &row->cells[c];
			struct jpath cp = {&rp, NULL, c};
			struct xp_link l = cell->l;
			/* The cell's own faults (its name, its place on the diagonal) come first. */
			if (cell->msg)
				return xp_errf(d->err, "%s", cell->msg);
			struct xp_link m = c < r ? *xp_node_link(n, c, r) : l;
			if (m.cls != l.cls || m.count != l.count)
				return bad(d->err, &cp, NULL, "\"%s\" differs from [%zu][%zu] \"%s\"; links are symmetric",
					   xp_link_str(l, b1, sizeof b1), c, r, xp_link_str(m, b2, sizeof b2));
			*xp_node_link(n, r, c) = l;
		}
	}
	return 0;
}

/* Scalars of a node that only the decoder reads as a table (the encoder places them itself). */
static const struct field node_tail_fields[] = {
	FI64(struct xp_node, "memory_mib", memory_mib, true),
	FNUM(struct xp_node, "cost_per_hour", cost_per_hour, 0, INFINITY),
	FSTRV(struct xp_node, "warnings", warnings),
	{0},
};

/* A node's keys its own code reads, in the order writers put them. */
enum { NODE_NAME, NODE_LABELS, NODE_LOCATION, NODE_CPU, NODE_PACKAGES, NODE_NUMA, NODE_NICS, NODE_PCI,
       NODE_DEVICES, NODE_LINKS };
static const struct field node_own_fields[] = {
	[NODE_NAME] = {.key = "name", .klen = 4, .kind = F_OWN},
	[NODE_LABELS] = {.key = "labels", .klen = 6, .kind = F_OWN},
	[NODE_LOCATION] = {.key = "location", .klen = 8, .kind = F_OWN},
	[NODE_CPU] = {.key = "cpu", .klen = 3, .kind = F_OWN},
	[NODE_PACKAGES] = {.key = "packages", .klen = 8, .kind = F_OWN},
	[NODE_NUMA] = {.key = "numa", .klen = 4, .kind = F_OWN},
	[NODE_NICS] = {.key = "nics", .klen = 4, .kind = F_OWN},
	[NODE_PCI] = {.key = "pci", .klen = 3, .kind = F_OWN},
	[NODE_DEVICES] = {.key = "devices", .klen = 7, .kind = F_OWN},
	[NODE_LINKS] = {.key = "links", .klen = 5, .kind = F_OWN},
	{0},
};

/* The rest of a node whose '{' was read. */
static int node_body(struct dec *d, const struct jpath *p, struct xp_node *n)
{
	bool named = false;
	int r;
	struct fmatch m = FMATCH3(node_own_fields, node_head_fields, node_tail_fields);
	const struct field *f;
	links_clear(d);
	d->n_pci_accel = 0;
	while ((r = next_field(d, &m, &f)) == 1) {
		int rc;
		if (!f) {
			rc = skip_value(d);
		} else if (f->kind != F_OWN) {
			rc = rd_field(d, p, n, f);
		} else if (f == &node_own_fields[NODE_NAME]) {
			enum xp_jp_type t = xp_jp_value(&d->jp);
			rc = t == XP_JP_ERROR ? -1
			     : check_str(t, d->jp.str, d->jp.str_len, p, "name", false, NODE_NAME_MAX, d->err);
			if (!rc && d->jp.str_len == 0)
				rc = bad(d->err, p, "name", "must not be empty");
			if (!rc) {
				free(n->name);
				n->name = take_str(d);
				named = true;
			}
		} else if (f == &node_own_fields[NODE_LABELS]) {
			rc = node_labels(d, p, n);
		} else if (f == &node_own_fields[NODE_LOCATION]) {
			struct jpath sp = {p, "location", 0};
			rc = rd_object(d, p, "location") || rd_fields(d, &sp, n, location_fields);
		} else if (f == &node_own_fields[NODE_CPU]) {
			struct jpath sp = {p, "cpu", 0};
			rc = rd_object(d, p, "cpu") || rd_fields(d, &sp, n, cpu_fields);
		} else if (f == &node_own_fields[NODE_PACKAGES]) {
			rc = rd_objects(d, p, "packages", SIZE_MAX, package_from, n);
		} else if (f == &node_own_fields[NODE_NUMA]) {
			rc = rd_objects(d, p, "numa", XP_MAX_NUMA, numa_from, n);
		} else if (f == &node_own_fields[NODE_NICS]) {
			rc = rd_objects(d, p, "nics", SIZE_MAX, nic_from, n);
		} else if (f == &node_own_fields[NODE_DEVICES]) {
			/* Into the buffer, then one copy with the capacity the model's appends expect;
			 * the node owns them even after an error, so that freeing it frees them. */
			d->n_devs = 0;
			rc = rd_objects(d, p, "devices", XP_MAX_DEVICES, device_from, NULL);
			n->devices = xp_node_array(d->devs, d->n_devs, sizeof *d->devs);
			n->n_devices = d->n_devs;
		} else if (f == &node_own_fields[NODE_PCI]) {
			d->n_pcis = 0;
			rc = rd_objects(d, p, "pci", SIZE_MAX, pci_from, NULL);
			n->pci = xp_node_array(d->pcis, d->n_pcis, sizeof *d->pcis);
			n->n_pci = d->n_pcis;
		} else { /* NODE_LINKS */
			rc = rd_links(d, p);
		}
		if (rc)
			return -1;
	}
	if (r)
		return -1;
	if (!named)
		return bad(d->err, p, "name", "missing (every node needs a name)");
	/* Views index devices[] with a PCI function's accelerator: a dangling one would read out of bounds. */
	for (size_t i = 0; i < d->n_pci_accel; i++) {
		const struct xp_pci *fn = &n->pci[d->pci_accel[i]];
		if ((size_t)fn->accel >= n->n_devices) {
			struct jpath pp = {p, "pci", 0}, fp = {&pp, NULL, d->pci_accel[i]};
			return bad(d->err, &fp, "accelerator", "device %d does not exist (the node has %zu)",
				   fn->accel, n->n_devices);
		}
	}
	return node_links(d, p, n);
}

/* Decodes one node whose '{' was read; NULL with the error set. */
static struct xp_node *node_from(struct dec *d, const struct jpath *p)
{
	struct xp_node *n = xp_node_new(NULL); /* named when "name" comes */
	int rc = node_body(d, p, n);
	ic_flush(d);
	if (rc) {
		xp_node_free(n);
		return NULL;
	}
	return n;
}

/* Node names seen so far, to find a duplicate in O(1): slots hold index + 1 into the cluster. */
struct names {
	size_t *slots;
	size_t cap;
};

static size_t names_find(struct names *s, const struct xp_cluster *c, const char *name, size_t *slot)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *q = (const unsigned char *)name; *q; q++)
		h = (h ^ *q) * 16777619u;
	size_t i = h & (s->cap - 1);
	for (; s->slots[i]; i = (i + 1) & (s->cap - 1))
		if (strcmp(c->nodes[s->slots[i] - 1]->name, name) == 0)
			break;
	*slot = i;
	return s->slots[i];
}

static void names_grow(struct names *s, const struct xp_cluster *c)
{
	size_t cap = s->cap ? s->cap * 2 : 1024, slot;
	free(s->slots);
	s->slots = xp_calloc(cap, sizeof *s->slots);
	s->cap = cap;
	for (size_t i = 0; i < c->n_nodes; i++) {
		names_find(s, c, c->nodes[i]->name, &slot);
		s->slots[slot] = i + 1;
	}
}

static int cluster_nodes(struct dec *d, struct xp_cluster *c)
{
	static const struct jpath root = {NULL, "$", 0};
	if (rd_array(d, &root, "nodes"))
		return -1;
	struct jpath np = {&root, "nodes", 0};
	struct names seen = {0};
	int r;
	for (size_t i = 0; (r = xp_jp_next_elem(&d->jp)) == 1; i++) {
		struct jpath ep = {&np, NULL, i};
		if (i >= XP_MAX_NODES) {
			r = bad(d->err, &root, "nodes", "more than the %d nodes allowed", XP_MAX_NODES);
			break;
		}
		enum xp_jp_type t = xp_jp_value(&d->jp);
		if (t != XP_JP_OBJECT) {
			r = t == XP_JP_ERROR ? -1 : bad(d->err, &ep, NULL, "expected an object, got %s", tname(t));
			break;
		}
		struct xp_node *n = node_from(d, &ep);
		if (!n) {
			r = -1;
			break;
		}
		if ((c->n_nodes + 1) * 2 > seen.cap)
			names_grow(&seen, c);
		size_t slot, prev = names_find(&seen, c, n->name, &slot);
		if (prev) {
			r = bad(d->err, &ep, "name", "duplicate node name \"%.64s\" (also $.nodes[%zu])", n->name,
				prev - 1);
			xp_node_free(n);
			break;
		}
		seen.slots[slot] = c->n_nodes + 1;
		xp_cluster_add(c, n);
	}
	free(seen.slots);
	return r;
}

static int check_schema(struct dec *d)
{
	static const struct jpath root = {NULL, "$", 0};
	enum xp_jp_type t = xp_jp_value(&d->jp);
	if (t == XP_JP_ERROR)
		return -1;
	if (t != XP_JP_STRING)
		return bad(d->err, &root, "schema", "expected \"%s\", got %s", XP_INVENTORY_SCHEMA, tname(t));
	if (d->jp.str_len != strlen(XP_INVENTORY_SCHEMA) || strcmp(d->jp.str, XP_INVENTORY_SCHEMA) != 0)
		return bad(d->err, &root, "schema", "expected \"%s\", got \"%.64s\"", XP_INVENTORY_SCHEMA, d->jp.str);
	return 0;
}

/* The whole document: schema, generation, nodes; NULL with err set, *syntax when the text is not JSON. */
static struct xp_cluster *decode_cluster(struct dec *d, bool *syntax)
{
	static const struct jpath root = {NULL, "$", 0};
	struct xp_cluster *c = xp_cluster_new();
	int64_t gen = -1;
	bool schema = false, nodes = false;
	int r = -1;
	enum xp_jp_type t = xp_jp_top(&d->jp);
	if (t == XP_JP_ARRAY) {
		/* Text that is not JSON says so first, as for any document. */
		if (xp_jp_skip(&d->jp, t) == 0 && xp_jp_end(&d->jp) == 0)
			bad(d->err, &root, NULL, "expected an object, got an array");
		goto out;
	}
	if (t != XP_JP_OBJECT)
		goto out;
	while ((r = xp_jp_next_key(&d->jp)) == 1) {
		const char *key = d->jp.key;
		if (strcmp(key, "schema") == 0) {
			schema = true;
			r = check_schema(d);
		} else if (strcmp(key, "generation") == 0) {
			r = rd_int(d, &root, "generation", 0, INT64_MAX, false, &gen);
		} else if (strcmp(key, "nodes") == 0) {
			nodes = true;
			r = cluster_nodes(d, c);
		} else {
			r = skip_value(d);
		}
		if (r)
			break;
	}
	if (!r)
		r = xp_jp_end(&d->jp);
	if (!r && !schema)
		r = bad(d->err, &root, "schema", "missing (expected \"%s\")", XP_INVENTORY_SCHEMA);
	if (!r && !nodes)
		r = bad(d->err, &root, "nodes", "missing (expected an array of nodes)");
out:
	if (d->jp.failed) {
		*syntax = true;
		xp_errf(d->err, "%s", d->jp.msg);
	}
	if (r || d->jp.failed) {
		xp_cluster_free(c);
		return NULL;
	}
	if (gen >= 0)
		c->generation = (uint64_t)gen;
	return c;
}

static void dec_free(struct dec *d)
{
	ic_flush(d);
	for (size_t k = 0; k < d->n_ic; k++)
		xp_istr_drop(d->ic[d->ic_used[k]].s);
	free(d->ic);
	free(d->ic_used);
	free(d->devs);
	free(d->pcis);
	free(d->peaks);
	free(d->strs);
	links_free(d);
	free(d->pci_accel);
	xp_jp_free(&d->jp);
}

struct xp_cluster *xp_cluster_decode(const char *text, size_t len, bool *syntax, struct xp_err *err)
{
	struct dec d = {.err = err};
	bool dummy;
	xp_jp_init_mem(&d.jp, text, len);
	struct xp_cluster *c = decode_cluster(&d, syntax ? syntax : &dummy);
	dec_free(&d);
	return c;
}

/* Puts the file's name in front of a message: "name:LINE:COL: ..." or "name: $.path: ...". */
static void name_error(struct xp_err *err, const char *name, bool syntax)
{
	char msg[sizeof err->msg];
	snprintf(msg, sizeof msg, "%s", err->msg);
	xp_errf(err, syntax ? "%s:%s" : "%s: %s", name, msg);
}

struct xp_cluster *xp_cluster_parse(const char *text, size_t len, const char *name,
				    struct xp_err *err)
{
	bool syntax = false;
	struct xp_cluster *c = xp_cluster_decode(text, len, &syntax, err);
	if (!c)
		name_error(err, name ? name : "<input>", syntax);
	return c;
}

struct xp_cluster *xp_cluster_read_fd(int fd, const char *name, struct xp_err *err)
{
	struct dec d = {.err = err};
	bool syntax = false;
	xp_jp_init_fd(&d.jp, fd);
	struct xp_cluster *c = decode_cluster(&d, &syntax);
	dec_free(&d);
	if (!c)
		name_error(err, name ? name : "<input>", syntax);
	return c;
}

struct xp_cluster *xp_cluster_from_json(json_t *doc, struct xp_err *err)
{
	if (!json_is_object(doc)) {
		xp_errf(err, "$: expected an object, got %s", doc ? xp_json_type_name(doc) : "nothing");
		return NULL;
	}
	/* One decoder: the tree is spelled out and read as any text is. A tree may hold NUL in
	 * its strings, which the checks then name by path, as they do for any other bad byte. */
	char *text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
	struct dec d = {.err = err};
	bool syntax = false;
	xp_jp_init_mem(&d.jp, text, text ? strlen(text) : 0);
	d.jp.allow_nul = true;
	struct xp_cluster *c = decode_cluster(&d, &syntax);
	dec_free(&d);
	free(text);
	return c;
}

struct xp_node *xp_node_from_json(json_t *obj, const char *path, struct xp_err *err)
{
	struct jpath root = {NULL, path ? path : "$", 0};
	if (!json_is_object(obj)) {
		bad(err, &root, NULL, "expected an object, got %s", obj ? xp_json_type_name(obj) : "nothing");
		return NULL;
	}
	char *text = json_dumps(obj, JSON_COMPACT | JSON_REAL_PRECISION(17));
	struct dec d = {.err = err};
	xp_jp_init_mem(&d.jp, text, text ? strlen(text) : 0);
	d.jp.allow_nul = true;
	struct xp_node *n = NULL;
	if (xp_jp_top(&d.jp) == XP_JP_OBJECT)
		n = node_from(&d, &root);
	if (n && xp_jp_end(&d.jp)) {
		xp_node_free(n);
		n = NULL;
	}
	if (d.jp.failed)
		xp_errf(err, "%s", d.jp.msg);
	dec_free(&d);
	free(text);
	return n;
}
