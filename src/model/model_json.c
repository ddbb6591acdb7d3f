/* model_json.c: encoding and validating decoding of the "xpool.inventory/v1" document. */
#include "model_json.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"

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
	F_I64,   /* int64_t from 0: null for -1 when nullable, else a count (never negative) */
	F_INT,   /* int from 0 to max: as F_I64 */
	F_NUM,   /* double from min to max: null for XP_NA (always nullable) */
	F_CLASS, /* int: a PCI class as 4 hex digits, null for -1 */
	F_STRV,  /* char ** with its size_t count at n_off: an array of strings */
	F_ENUM   /* int: one of the names name() gives and parse() reads, listed in choices */
};

struct field {
	const char *key; /* NULL ends a table */
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

#define FSTR(T, k, m, null) {.key = k, .kind = F_STR, .nullable = null, .off = offsetof(T, m)}
#define FI64(T, k, m, null) {.key = k, .kind = F_I64, .nullable = null, .off = offsetof(T, m)}
#define FINT(T, k, m, hi, null) {.key = k, .kind = F_INT, .nullable = null, .off = offsetof(T, m), .max = hi}
/* A count that is 0 only when not known (no topology): null in JSON, 0 in memory. */
#define FCNT(T, k, m) {.key = k, .kind = F_INT, .nullable = true, .off = offsetof(T, m), .max = INT_MAX, .zero_null = true}
#define FNUM(T, k, m, lo, hi) {.key = k, .kind = F_NUM, .nullable = true, .off = offsetof(T, m), .min = lo, .max = hi}
#define FCLASS(T, k, m) {.key = k, .kind = F_CLASS, .nullable = true, .off = offsetof(T, m)}
#define FSTRV(T, k, m) {.key = k, .kind = F_STRV, .off = offsetof(T, m), .n_off = offsetof(T, n_##m)}
#define FENUM(T, k, m, nm, ps, ch) {.key = k, .kind = F_ENUM, .off = offsetof(T, m), .name = nm, .parse = ps, .choices = ch}

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
	FSTR(struct xp_pci, "pci_id", pci_id, true),
	FCLASS(struct xp_pci, "class", pci_class),
	FSTR(struct xp_pci, "name", name, true),
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
	{.key = "share", .kind = F_INT, .nullable = true, .off = offsetof(struct xp_alloc, share_pct), .max = 100,
	 .null_zero = true},
	{0},
};

/* An allocation's "uuid" (an existing MIG instance's UUID): written only where known, so that
 * inventories without it read and print as before (xpool(1), INVENTORY JSON). */
static void alloc_uuids_to_json(json_t *allocs, const struct xp_device *d)
{
	for (size_t i = 0; i < d->n_allocs; i++)
		if (d->allocs[i].uuid)
			json_object_set_new(json_array_get(allocs, i), "uuid", json_string(d->allocs[i].uuid));
}

/* What identifies a device and its software, after "index" and "vendor_index". */
static const struct field device_id_fields[] = {
	FSTR(struct xp_device, "vendor", vendor, true),
	FSTR(struct xp_device, "model", model, true),
	FSTR(struct xp_device, "arch", arch, true),
	FSTR(struct xp_device, "uuid", uuid, true),
	FSTR(struct xp_device, "pci_bus_id", pci_bus_id, true),
	FSTR(struct xp_device, "pci_id", pci_id, true),
	FCLASS(struct xp_device, "pci_class", pci_class),
	FSTRV(struct xp_device, "pci_path", pci_path),
	FSTRV(struct xp_device, "os_devices", os_devices),
	FINT(struct xp_device, "numa", numa, ID_MAX, true),
	FSTR(struct xp_device, "driver", driver, true),
	FSTR(struct xp_device, "firmware", firmware, true),
	FSTR(struct xp_device, "runtime", runtime, true),
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
	FSTR(struct xp_device, "ecu_basis", ecu_basis, true),
	FENUM(struct xp_device, "memory_access", mem_access, xp_mem_access_name, xp_mem_access_parse,
	      "unknown, explicit, unified"),
	FSTR(struct xp_device, "affinity_group", affinity_group, true),
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
			j = jstr(*(char *const *)v);
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
static int real_digits(double v)
{
	char buf[40];
	for (int p = 15; p < 17; p++) {
		snprintf(buf, sizeof buf, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			return p;
	}
	return 17;
}

/* jansson prints every real of a document with one precision. 17 digits always
 * read back exactly but turn 989.4 into 989.39999999999998, so use the fewest
 * that are exact for every real in doc (our own, shallow tree). */
static int doc_digits(json_t *j)
{
	int p = 15, q;
	size_t i;
	const char *key;
	json_t *v;
	switch (json_typeof(j)) {
	case JSON_REAL:
		return real_digits(json_real_value(j));
	case JSON_ARRAY:
		json_array_foreach(j, i, v)
			if ((q = doc_digits(v)) > p && (p = q) == 17)
				break;
		return p;
	case JSON_OBJECT:
		json_object_foreach(j, key, v)
			if ((q = doc_digits(v)) > p && (p = q) == 17)
				break;
		return p;
	default:
		return p;
	}
}

int xp_cluster_write(const struct xp_cluster *c, FILE *f, int pretty, struct xp_err *err)
{
	json_t *doc = xp_cluster_to_json(c);
	size_t flags = JSON_REAL_PRECISION(doc_digits(doc));
	flags |= pretty ? JSON_INDENT(2) : JSON_COMPACT;
	int rc = json_dumpf(doc, f, flags);
	json_decref(doc);
	if (rc != 0 || fputc('\n', f) == EOF || fflush(f) == EOF || ferror(f))
		return xp_errf(err, "cannot write the inventory: %s", strerror(errno));
	return 0;
}

/* ---- decoding ---- */

/* Every decoder below returns 0, or -1 with err set to "PATH: message". A key
 * that is absent leaves the model's default in place; that is what "not known"
 * means, and it lets old and new writers share the schema. */

__attribute__((format(printf, 4, 5)))
static int bad(struct xp_err *err, const char *path, const char *key, const char *fmt, ...)
{
	char msg[384];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (key)
		return xp_errf(err, "%s.%s: %s", path, key, msg);
	return xp_errf(err, "%s: %s", path, msg);
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

static void path_cut(char *out, int n)
{
	xp_json_path_cut(out, PATH_LEN, n);
}

static void path_key(char *out, const char *path, const char *key)
{
	path_cut(out, snprintf(out, PATH_LEN, "%s.%s", path, key));
}

static void path_idx(char *out, const char *path, size_t i)
{
	xp_json_path_idx(out, PATH_LEN, path, i);
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

static const char *or_null(bool nullable)
{
	return nullable ? " or null" : "";
}

/* A C string cannot hold NUL, so "a\u0000b" would silently become "a". */
static int check_str(json_t *v, const char *path, const char *key, bool nullable, size_t max,
		     struct xp_err *err)
{
	if (!json_is_string(v))
		return bad(err, path, key, "expected a string%s, got %s", or_null(nullable), xp_json_type_name(v));
	size_t n = json_string_length(v);
	const char *sv = json_string_value(v);
	if (strlen(sv) != n)
		return bad(err, path, key, "a string must not contain NUL (\\u0000)");
	/* Control characters would reach operators' terminals as escape sequences
	 * (retitling the window, forging table lines) when the string is printed. */
	for (size_t i = 0; i < n; i++) {
		if ((unsigned char)sv[i] < 0x20 || sv[i] == 0x7f)
			return bad(err, path, key, "a string must not contain control characters (byte 0x%02x at %zu)",
				   (unsigned char)sv[i], i);
		/* U+0080-U+009F: terminals take some of them (CSI) as escape sequences too. */
		if ((unsigned char)sv[i] == 0xc2 && i + 1 < n && (unsigned char)sv[i + 1] < 0xa0)
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

static int get_str(json_t *o, const char *path, const char *key, bool nullable, char **out,
		   struct xp_err *err)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return 0;
	if (!(nullable && json_is_null(v)) && check_str(v, path, key, nullable, STR_MAX, err))
		return -1;
	free(*out);
	*out = xp_strdup(json_string_value(v)); /* NULL for null */
	return 0;
}

static int take_int(json_t *v, const char *path, const char *key, int64_t min, int64_t max,
		    bool nullable, int64_t *out, struct xp_err *err)
{
	if (!json_is_integer(v))
		return bad(err, path, key, "expected an integer%s, got %s", or_null(nullable),
			   xp_json_type_name(v));
	json_int_t x = json_integer_value(v);
	if (x >= min && x <= max) {
		*out = x;
		return 0;
	}
	if (min == 0 && max == INT64_MAX)
		return bad(err, path, key, "expected a non-negative integer%s, got %lld",
			   or_null(nullable), (long long)x);
	return bad(err, path, key, "expected an integer from %lld to %lld%s, got %lld",
		   (long long)min, (long long)max, or_null(nullable), (long long)x);
}

/* Integers; null (when allowed) is -1, the model's "not known". */
static int get_int(json_t *o, const char *path, const char *key, int64_t min, int64_t max,
		   bool nullable, int64_t *out, struct xp_err *err)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return 0;
	if (nullable && json_is_null(v)) {
		*out = -1;
		return 0;
	}
	return take_int(v, path, key, min, max, nullable, out, err);
}

static int get_i(json_t *o, const char *path, const char *key, int max, bool nullable, int *out,
		 struct xp_err *err)
{
	int64_t v = *out;
	if (get_int(o, path, key, 0, max, nullable, &v, err))
		return -1;
	*out = (int)v;
	return 0;
}

/* Numbers (integer or real); null (when allowed) is XP_NA. */
static int get_num(json_t *o, const char *path, const char *key, double min, double max,
		   bool nullable, double *out, struct xp_err *err)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return 0;
	if (nullable && json_is_null(v)) {
		*out = XP_NA;
		return 0;
	}
	if (!json_is_number(v))
		return bad(err, path, key, "expected a number%s, got %s", or_null(nullable), xp_json_type_name(v));
	double x = json_number_value(v);
	if (x >= min && x <= max) {
		*out = x;
		return 0;
	}
	if (isinf(max))
		return bad(err, path, key, "expected a number >= %g%s, got %g", min,
			   or_null(nullable), x);
	return bad(err, path, key, "expected a number from %g to %g%s, got %g", min, max,
		   or_null(nullable), x);
}

static int get_enum(json_t *o, const char *path, const char *key, int (*parse)(const char *),
		    const char *choices, int *out, struct xp_err *err)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return 0;
	int x = -1;
	if (json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v))
		x = parse(json_string_value(v));
	if (x < 0)
		return bad(err, path, key, "expected one of %s", choices);
	*out = x;
	return 0;
}

/* Looks up a container: *out is NULL when key is absent, -1 when it has another type. */
static int get_typed(json_t *o, const char *path, const char *key, json_type t, json_t **out,
		     struct xp_err *err)
{
	json_t *v = json_object_get(o, key);
	*out = NULL;
	if (!v)
		return 0;
	if (json_typeof(v) != t)
		return bad(err, path, key, "expected %s, got %s",
			   t == JSON_OBJECT ? "an object" : "an array", xp_json_type_name(v));
	*out = v;
	return 0;
}

static int get_strv(json_t *o, const char *path, const char *key, char ***v, size_t *n,
		    struct xp_err *err)
{
	json_t *a, *s;
	size_t i;
	char p[PATH_LEN], ep[PATH_LEN];
	if (get_typed(o, path, key, JSON_ARRAY, &a, err))
		return -1;
	if (!a)
		return 0;
	path_key(p, path, key);
	json_array_foreach(a, i, s) {
		path_idx(ep, p, i);
		if (check_str(s, ep, NULL, false, STR_MAX, err))
			return -1;
		xp_strv_add(v, n, json_string_value(s));
	}
	return 0;
}

/* PCI class as 4 hex digits ("0302"), the spelling lspci and sysfs use. */
static int get_class(json_t *o, const char *path, const char *key, int *out, struct xp_err *err)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return 0;
	if (json_is_null(v)) {
		*out = -1;
		return 0;
	}
	const char *s = json_is_string(v) ? json_string_value(v) : "";
	bool ok = json_is_string(v) && json_string_length(v) == 4;
	for (size_t i = 0; ok && i < 4; i++)
		ok = strchr("0123456789abcdefABCDEF", s[i]) != NULL && s[i] != '\0';
	if (!ok)
		return bad(err, path, key, "expected 4 hex digits (\"0302\") or null");
	*out = (int)strtol(s, NULL, 16);
	return 0;
}

/* Decodes the fields f of o into the struct at base, in table order. */
static int get_fields(json_t *o, const char *p, void *base, const struct field *f, struct xp_err *err)
{
	char *b = base;
	for (; f->key; f++) {
		void *v = b + f->off;
		int rc;
		switch (f->kind) {
		case F_STR:
			rc = get_str(o, p, f->key, f->nullable, v, err);
			break;
		case F_I64:
			rc = get_int(o, p, f->key, 0, INT64_MAX, f->nullable, v, err);
			break;
		case F_INT:
			rc = get_i(o, p, f->key, (int)f->max, f->nullable, v, err);
			if ((f->zero_null || f->null_zero) && *(int *)v < 0)
				*(int *)v = 0;
			break;
		case F_NUM:
			rc = get_num(o, p, f->key, f->min, f->max, true, v, err);
			break;
		case F_CLASS:
			rc = get_class(o, p, f->key, v, err);
			break;
		case F_STRV:
			rc = get_strv(o, p, f->key, v, (size_t *)(b + f->n_off), err);
			break;
		default: /* F_ENUM */
			rc = get_enum(o, p, f->key, f->parse, f->choices, v, err);
			break;
		}
		if (rc)
			return -1;
	}
	return 0;
}

/* Decodes the object at key of o, when there is one, with the fields f. */
static int get_object(json_t *o, const char *path, const char *key, void *base, const struct field *f,
		      struct xp_err *err)
{
	char sp[PATH_LEN];
	json_t *sub;
	if (get_typed(o, path, key, JSON_OBJECT, &sub, err))
		return -1;
	if (!sub)
		return 0;
	path_key(sp, path, key);
	return get_fields(sub, sp, base, f, err);
}

/* Calls fn on each object of the array at key, with its path ("...devices[3]"). */
typedef int (*elem_fn)(json_t *o, const char *path, void *ctx, struct xp_err *err);

static int each_object(json_t *obj, const char *path, const char *key, size_t max, elem_fn fn,
		       void *ctx, struct xp_err *err)
{
	json_t *a, *e;
	size_t i;
	char p[PATH_LEN], ep[PATH_LEN];
	if (get_typed(obj, path, key, JSON_ARRAY, &a, err))
		return -1;
	if (!a)
		return 0;
	if (json_array_size(a) > max)
		return bad(err, path, key, "%zu entries, more than the %zu allowed",
			   json_array_size(a), max);
	path_key(p, path, key);
	json_array_foreach(a, i, e) {
		path_idx(ep, p, i);
		if (!json_is_object(e))
			return bad(err, ep, NULL, "expected an object, got %s", xp_json_type_name(e));
		if (fn(e, ep, ctx, err))
			return -1;
	}
	return 0;
}

static int labels_from(json_t *m, const char *path, struct xp_labels *l, struct xp_err *err)
{
	char kp[PATH_LEN];
	for (void *it = json_object_iter(m); it; it = json_object_iter_next(m, it)) {
		const char *key = json_object_iter_key(it);
		size_t klen = json_object_iter_key_len(it);
		json_t *v = json_object_iter_value(it);
		path_cut(kp, snprintf(kp, sizeof kp, "%s.%.64s", path, key));
		if (klen != strlen(key))
			return bad(err, kp, NULL, "a label name must not contain NUL (\\u0000)");
		if (klen == 0 || klen > STR_MAX)
			return bad(err, kp, NULL, "a label name must have 1 to %d bytes", STR_MAX);
		if (check_str(v, kp, NULL, false, STR_MAX, err))
			return -1;
		xp_labels_append(l, key, json_string_value(v));
	}
	return 0;
}

static int node_labels(json_t *o, const char *path, struct xp_node *n, struct xp_err *err)
{
	struct xp_labels *dst[] = {&n->facts, &n->governance, &n->validation};
	char lp[PATH_LEN], cp[PATH_LEN];
	json_t *ls, *m;
	if (get_typed(o, path, "labels", JSON_OBJECT, &ls, err))
		return -1;
	if (!ls)
		return 0;
	path_key(lp, path, "labels");
	for (size_t i = 0; i < 3; i++) {
		if (get_typed(ls, lp, label_classes[i], JSON_OBJECT, &m, err))
			return -1;
		path_key(cp, lp, label_classes[i]);
		if (m && labels_from(m, cp, dst[i], err))
			return -1;
	}
	return 0;
}

static int package_from(json_t *o, const char *p, void *ctx, struct xp_err *err)
{
	return get_fields(o, p, xp_node_add_package(ctx), package_fields, err);
}

static int numa_from(json_t *o, const char *p, void *ctx, struct xp_err *err)
{
	struct xp_node *n = ctx;
	struct xp_numa *m = xp_node_add_numa(n);
	if (get_fields(o, p, m, numa_fields, err))
		return -1;
	/* xp_node_numa_by_id returns the first match, so a second one would be invisible. */
	for (size_t i = 0; i + 1 < n->n_numa; i++)
		if (n->numa[i].id == m->id)
			return bad(err, p, "id", "NUMA id %d appears twice", m->id);
	return 0;
}

static int nic_from(json_t *o, const char *p, void *ctx, struct xp_err *err)
{
	struct xp_nic *c = xp_node_add_nic(ctx);
	if (get_fields(o, p, c, nic_fields, err))
		return -1;
	/* Every listing prints it: a nameless NIC has nothing to show. */
	if (!c->name)
		return bad(err, p, "name", "missing (every NIC needs a name)");
	return 0;
}

static int pci_from(json_t *o, const char *p, void *ctx, struct xp_err *err)
{
	struct xp_node *n = ctx;
	struct xp_pci *f = xp_node_add_pci(n);
	if (get_fields(o, p, f, pci_fields, err))
		return -1;
	if (!f->bus_id)
		return bad(err, p, "bus_id", "missing (every PCI function has a bus id)");
	/* Views index devices[] with it: a dangling index would read out of bounds. */
	if (f->accel >= 0 && (size_t)f->accel >= n->n_devices)
		return bad(err, p, "accelerator", "device %d does not exist (the node has %zu)",
			   f->accel, n->n_devices);
	return 0;
}

static int peak_from(json_t *o, const char *p, void *ctx, struct xp_err *err)
{
	struct xp_device *d = ctx;
	d->peaks = xp_realloc(d->peaks, (d->n_peaks + 1) * sizeof *d->peaks);
	struct xp_peak *k = &d->peaks[d->n_peaks++];
	memset(k, 0, sizeof *k);
	if (get_str(o, p, "precision", false, &k->precision, err) ||
	    get_num(o, p, "value", 0, INFINITY, false, &k->value, err) ||
	    get_str(o, p, "unit", false, &k->unit, err))
		return -1;
	/* A peak without its precision or unit compares with nothing. */
	if (!k->precision || !k->unit)
		return bad(err, p, k->precision ? "unit" : "precision", "missing");
	return 0;
}

static int alloc_uuid_from(json_t *o, const char *p, struct xp_alloc *a, struct xp_err *err)
{
	return get_str(o, p, "uuid", true, &a->uuid, err);
}

static int alloc_from(json_t *o, const char *p, void *ctx, struct xp_err *err)
{
	struct xp_device *d = ctx;
	d->allocs = xp_realloc(d->allocs, (d->n_allocs + 1) * sizeof *d->allocs);
	struct xp_alloc *a = &d->allocs[d->n_allocs++];
	memset(a, 0, sizeof *a);
	a->memory_mib = -1;
	return get_fields(o, p, a, alloc_fields, err) || alloc_uuid_from(o, p, a, err) ? -1 : 0;
}

static int get_partition(json_t *o, const char *path, unsigned *out, struct xp_err *err)
{
	json_t *a, *e;
	size_t i;
	char p[PATH_LEN], ep[PATH_LEN];
	unsigned bits = 0;
	if (get_typed(o, path, "partition", JSON_ARRAY, &a, err))
		return -1;
	if (!a)
		return 0;
	path_key(p, path, "partition");
	json_array_foreach(a, i, e) {
		size_t k = PART_COUNT;
		if (json_is_string(e) && strlen(json_string_value(e)) == json_string_length(e))
			for (k = 0; k < PART_COUNT; k++)
				if (strcmp(part_names[k], json_string_value(e)) == 0)
					break;
		if (k == PART_COUNT) {
			path_idx(ep, p, i);
			return bad(err, ep, NULL, "expected one of whole, mig, vnpu, share");
		}
		bits |= 1u << k;
	}
	*out = bits;
	return 0;
}

/* "mig_mode": true, false, or null; absent (a file written before it) is null: not known. */
static int get_mig_mode(json_t *o, const char *path, int *out, struct xp_err *err)
{
	json_t *v = json_object_get(o, "mig_mode");
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v))
		return bad(err, path, "mig_mode", "expected true, false or null, got %s", xp_json_type_name(v));
	*out = json_is_true(v);
	return 0;
}

static int device_metrics(json_t *o, const char *p, struct xp_device *d, struct xp_err *err)
{
	if (get_fields(o, p, d, device_memory_fields, err) ||
	    each_object(o, p, "peak", SIZE_MAX, peak_from, d, err) ||
	    get_fields(o, p, d, device_state_fields, err) || get_partition(o, p, &d->partition, err) ||
	    get_mig_mode(o, p, &d->mig_mode, err) ||
	    each_object(o, p, "allocations", SIZE_MAX, alloc_from, d, err))
		return -1;
	return 0;
}

static int device_from(json_t *o, const char *p, void *ctx, struct xp_err *err)
{
	struct xp_device *d = xp_node_add_device(ctx);
	json_t *ix = json_object_get(o, "index");
	int64_t index = d->index;
	/* Link rows and pci accelerator fields refer to devices by position. */
	if (ix && take_int(ix, p, "index", 0, INT_MAX, false, &index, err))
		return -1;
	if (index != d->index)
		return bad(err, p, "index", "expected %d (the position in devices), got %lld",
			   d->index, (long long)index);
	if (get_fields(o, p, d, device_id_fields, err) || device_metrics(o, p, d, err) ||
	    get_i(o, p, "vendor_index", ID_MAX, true, &d->vendor_index, err))
		return -1;
	return 0;
}

static int link_cell(json_t *cell, const char *rp, struct xp_node *n, size_t r, size_t c,
		     struct xp_err *err)
{
	char cp[PATH_LEN], b1[16], b2[16];
	struct xp_link l;
	path_idx(cp, rp, c);
	if (check_str(cell, cp, NULL, false, STR_MAX, err))
		return -1;
	const char *s = json_string_value(cell);
	if (xp_link_parse(s, &l) < 0)
		return bad(err, cp, NULL, "unknown link class \"%.32s\"", s);
	if (r == c && l.cls != XP_LINK_SELF)
		return bad(err, cp, NULL, "expected \"X\" on the diagonal, got \"%.32s\"", s);
	if (r != c && l.cls == XP_LINK_SELF)
		return bad(err, cp, NULL, "\"X\" is only allowed on the diagonal");
	struct xp_link m = c < r ? *xp_node_link(n, c, r) : l;
	if (m.cls != l.cls || m.count != l.count)
		return bad(err, cp, NULL, "\"%s\" differs from [%zu][%zu] \"%s\"; links are symmetric",
			   xp_link_str(l, b1, sizeof b1), c, r, xp_link_str(m, b2, sizeof b2));
	*xp_node_link(n, r, c) = l;
	return 0;
}

static int node_links(json_t *o, const char *path, struct xp_node *n, struct xp_err *err)
{
	char lp[PATH_LEN], rp[PATH_LEN];
	size_t k = n->n_devices;
	json_t *a;
	/* Views read any cell of a node with devices, so the matrix always exists. */
	xp_node_links_reset(n);
	if (get_typed(o, path, "links", JSON_ARRAY, &a, err))
		return -1;
	if (!a)
		return 0;
	path_key(lp, path, "links");
	if (json_array_size(a) != k)
		return bad(err, lp, NULL, "expected %zu rows (one per device), got %zu", k,
			   json_array_size(a));
	for (size_t r = 0; r < k; r++) {
		json_t *row = json_array_get(a, r);
		path_idx(rp, lp, r);
		if (!json_is_array(row) || json_array_size(row) != k)
			return bad(err, rp, NULL, "expected an array of %zu link names", k);
		for (size_t c = 0; c < k; c++)
			if (link_cell(json_array_get(row, c), rp, n, r, c, err))
				return -1;
	}
	return 0;
}

static int node_fields(json_t *o, const char *p, struct xp_node *n, struct xp_err *err)
{
	/* Devices before pci and links: both refer to devices by index. */
	if (get_fields(o, p, n, node_head_fields, err) || node_labels(o, p, n, err) ||
	    get_object(o, p, "location", n, location_fields, err) || get_object(o, p, "cpu", n, cpu_fields, err) ||
	    get_int(o, p, "memory_mib", 0, INT64_MAX, true, &n->memory_mib, err) ||
	    each_object(o, p, "packages", SIZE_MAX, package_from, n, err) ||
	    each_object(o, p, "numa", XP_MAX_NUMA, numa_from, n, err) ||
	    each_object(o, p, "nics", SIZE_MAX, nic_from, n, err) ||
	    each_object(o, p, "devices", XP_MAX_DEVICES, device_from, n, err) ||
	    each_object(o, p, "pci", SIZE_MAX, pci_from, n, err) || node_links(o, p, n, err) ||
	    get_num(o, p, "cost_per_hour", 0, INFINITY, true, &n->cost_per_hour, err) ||
	    get_strv(o, p, "warnings", &n->warnings, &n->n_warnings, err))
		return -1;
	return 0;
}

struct xp_node *xp_node_from_json(json_t *obj, const char *path, struct xp_err *err)
{
	if (!path)
		path = "$";
	if (!json_is_object(obj)) {
		bad(err, path, NULL, "expected an object, got %s", obj ? xp_json_type_name(obj) : "nothing");
		return NULL;
	}
	json_t *name = json_object_get(obj, "name");
	if (!name) {
		bad(err, path, "name", "missing (every node needs a name)");
		return NULL;
	}
	if (check_str(name, path, "name", false, NODE_NAME_MAX, err))
		return NULL;
	if (json_string_length(name) == 0) {
		bad(err, path, "name", "must not be empty");
		return NULL;
	}
	struct xp_node *n = xp_node_new(json_string_value(name));
	if (node_fields(obj, path, n, err)) {
		xp_node_free(n);
		return NULL;
	}
	return n;
}

static int check_schema(json_t *doc, struct xp_err *err)
{
	json_t *s = json_object_get(doc, "schema");
	if (!s)
		return bad(err, "$", "schema", "missing (expected \"%s\")", XP_INVENTORY_SCHEMA);
	if (!json_is_string(s))
		return bad(err, "$", "schema", "expected \"%s\", got %s", XP_INVENTORY_SCHEMA,
			   xp_json_type_name(s));
	if (json_string_length(s) != strlen(XP_INVENTORY_SCHEMA) ||
	    strcmp(json_string_value(s), XP_INVENTORY_SCHEMA) != 0)
		return bad(err, "$", "schema", "expected \"%s\", got \"%.64s\"",
			   XP_INVENTORY_SCHEMA, json_string_value(s));
	return 0;
}

/* Decodes the nodes into c; seen maps names to indexes, so duplicates cost O(1) each. */
static int cluster_nodes(json_t *nodes, struct xp_cluster *c, json_t *seen, struct xp_err *err)
{
	char p[PATH_LEN];
	size_t i;
	json_t *e;
	json_array_foreach(nodes, i, e) {
		path_idx(p, "$.nodes", i);
		struct xp_node *n = xp_node_from_json(e, p, err);
		if (!n)
			return -1;
		json_t *prev = json_object_get(seen, n->name);
		if (prev) {
			bad(err, p, "name", "duplicate node name \"%.64s\" (also $.nodes[%lld])",
			    n->name, (long long)json_integer_value(prev));
			xp_node_free(n);
			return -1;
		}
		json_object_set_new(seen, n->name, json_integer((json_int_t)i));
		xp_cluster_add(c, n);
	}
	return 0;
}

struct xp_cluster *xp_cluster_from_json(json_t *doc, struct xp_err *err)
{
	json_t *nodes;
	int64_t gen = -1;
	if (!json_is_object(doc)) {
		bad(err, "$", NULL, "expected an object, got %s", doc ? xp_json_type_name(doc) : "nothing");
		return NULL;
	}
	if (check_schema(doc, err) ||
	    get_int(doc, "$", "generation", 0, INT64_MAX, false, &gen, err) ||
	    get_typed(doc, "$", "nodes", JSON_ARRAY, &nodes, err))
		return NULL;
	if (!nodes) {
		bad(err, "$", "nodes", "missing (expected an array of nodes)");
		return NULL;
	}
	struct xp_cluster *c = xp_cluster_new();
	json_t *seen = json_object();
	int rc = cluster_nodes(nodes, c, seen, err);
	json_decref(seen);
	if (rc) {
		xp_cluster_free(c);
		return NULL;
	}
	if (gen >= 0)
		c->generation = (uint64_t)gen;
	return c;
}

struct xp_cluster *xp_cluster_parse(const char *text, size_t len, const char *name,
				    struct xp_err *err)
{
	json_error_t je;
	if (!name)
		name = "<input>";
	json_t *doc = json_loadb(text ? text : "", text ? len : 0, JSON_REJECT_DUPLICATES, &je);
	if (!doc) {
		xp_errf(err, "%s:%d:%d: %s", name, je.line, je.column, je.text);
		return NULL;
	}
	struct xp_cluster *c = xp_cluster_from_json(doc, err);
	json_decref(doc);
	if (!c)
		xp_err_prefix(err, "%s", name);
	return c;
}
