/* rocmsmi.c: parser of `rocm-smi --json` and of Hygon's `hy-smi --json`, which prints the same
 * shape: {"card0": {"Field (unit)": "value", ...}, ..., "system": {...}}. Every value is a
 * string in the outputs we have, numbers carry their unit in the key, and which fields appear
 * depends on the options, the ROCm/DTK version and the card, so everything here is optional. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "amd.h"

/* A card found at the top level, kept so cards can be put in index order. */
struct card {
	int index;
	const char *key;
	json_t *obj;
};

/* Looks a key up ignoring case: rocm-smi versions spell "Card series" and "Card Series", and
 * Hygon's tool writes "vram Total Memory" where AMD's writes "VRAM Total Memory". */
static json_t *get_ci(json_t *obj, const char *key)
{
	const char *k;
	json_t *v;
	json_object_foreach(obj, k, v)
		if (strcasecmp(k, key) == 0)
			return v;
	return NULL;
}

static bool is_na(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return !*s || strncasecmp(s, "N/A", 3) == 0;
}

/* The value of a text field; NULL when absent, "N/A", empty or not a string (warned). */
static const char *text_of(struct xp_raw_node *node, const char *card, json_t *obj, const char *key)
{
	json_t *v = get_ci(obj, key);
	if (!v)
		return NULL;
	if (!json_is_string(v)) {
		xp_raw_warn(node, "%s: \"%s\" is not a string", card, key);
		return NULL;
	}
	const char *s = json_string_value(v);
	return is_na(s) ? NULL : s;
}

static bool get_text(struct xp_raw_node *node, const char *card, json_t *obj, const char *key, char *dst,
		     size_t size)
{
	const char *s = text_of(node, card, obj, key);
	if (!s)
		return false;
	xp_raw_set(dst, size, s, strlen(s));
	return dst[0] != '\0';
}

/* A number from a JSON number or from a string that starts with one ("53.0", "2.5GT/s x1"). */
static bool value_num(json_t *v, double *out)
{
	if (json_is_number(v)) {
		*out = json_number_value(v);
		return isfinite(*out);
	}
	if (!json_is_string(v))
		return false;
	const char *s = json_string_value(v);
	if (is_na(s))
		return false;
	char *end;
	errno = 0;
	double d = strtod(s, &end);
	if (end == s || errno == ERANGE || !isfinite(d))
		return false;
	*out = d;
	return true;
}

static bool get_num(struct xp_raw_node *node, const char *card, json_t *obj, const char *key, double *out)
{
	json_t *v = get_ci(obj, key);
	if (!v)
		return false;
	if (!json_is_number(v) && !json_is_string(v)) {
		xp_raw_warn(node, "%s: \"%s\" is neither a number nor a string", card, key);
		return false;
	}
	return value_num(v, out);
}

/* A whole count, exactly: byte counts pass 2^53 on large parts, so strings go through strtoll. */
static bool value_i64(json_t *v, int64_t *out)
{
	if (json_is_integer(v)) {
		*out = (int64_t)json_integer_value(v);
		return true;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		char *end;
		errno = 0;
		long long n = strtoll(s, &end, 10);
		if (end != s && errno != ERANGE && (*end == '\0' || isspace((unsigned char)*end))) {
			*out = n;
			return true;
		}
	}
	double d;
	if (!value_num(v, &d) || d < -9.2e18 || d > 9.2e18)
		return false;
	*out = (int64_t)d;
	return true;
}

/* Bytes per unit named in a key's "(unit)" suffix; 0 when not a size unit we know. */
static int64_t unit_bytes(const char *u, size_t n)
{
	static const struct {
		const char *name;
		int64_t bytes;
	} units[] = {{"B", 1},       {"KB", 1024},    {"KiB", 1024},       {"MB", 1 << 20},
		     {"MiB", 1 << 20}, {"GB", 1 << 30}, {"GiB", 1 << 30}};
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (strlen(units[i].name) == n && strncasecmp(units[i].name, u, n) == 0)
			return units[i].bytes;
	return 0;
}

/* A memory size in MiB from "PREFIX(unit)" keys: AMD prints "VRAM Total Memory (B)", Hygon
 * "vram Total Memory (MiB)". The prefix must start the key, so "VIS_VRAM ..." is not taken. */
static bool get_mib(struct xp_raw_node *node, const char *card, json_t *obj, const char *prefix, int64_t *out)
{
	size_t pl = strlen(prefix);
	const char *k;
	json_t *v;
	json_object_foreach(obj, k, v) {
		if (strncasecmp(k, prefix, pl) != 0)
			continue;
		const char *u = k + pl, *close = strchr(u, ')');
		int64_t per = close ? unit_bytes(u, (size_t)(close - u)) : 0;
		if (!per || close[1])
			continue;
		if (!json_is_number(v) && !json_is_string(v)) {
			xp_raw_warn(node, "%s: \"%s\" is neither a number nor a string", card, k);
			return false;
		}
		int64_t n;
		if (!value_i64(v, &n) || n < 0 || n > INT64_MAX / per - (1 << 20))
			return false; /* unknown, or so large it cannot be real: never overflow */
		if (per < (1 << 20))
			*out = (n * per + (1 << 19)) >> 20; /* nearest MiB */
		else
			*out = n * (per >> 20);
		return true;
	}
	return false;
}

/* A bare hex id ("0x747e") names nothing: "Card Model" holds one on some versions. */
static bool is_hex_id(const char *s)
{
	if (strncasecmp(s, "0x", 2) != 0 || !s[2])
		return false;
	for (s += 2; *s; s++)
		if (!isxdigit((unsigned char)*s))
			return false;
	return true;
}

/* The most descriptive product name present: "Arcturus GL-XL [Instinct MI100]" over "D3431401". */
static void pick_name(struct xp_raw_node *node, const char *card, json_t *obj, struct xp_raw_device *d)
{
	static const char *const keys[] = {"Marketing Name", "Card Series", "Device Name", "Card Model",
					   "Card SKU"};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const char *s = text_of(node, card, obj, keys[i]);
		if (s && !is_hex_id(s)) {
			xp_raw_set(d->name, sizeof d->name, s, strlen(s));
			if (d->name[0])
				return;
		}
	}
}

static void fill_device(struct xp_raw_node *node, const char *card, json_t *obj, const char *sys_driver,
			struct xp_raw_device *d)
{
	pick_name(node, card, obj, d);
	get_text(node, card, obj, "GFX Version", d->arch, sizeof d->arch);
	get_text(node, card, obj, "PCI Bus", d->bus_id, sizeof d->bus_id);
	get_text(node, card, obj, "Unique ID", d->uuid, sizeof d->uuid);
	get_text(node, card, obj, "Serial Number", d->serial, sizeof d->serial);
	get_text(node, card, obj, "VBIOS version", d->firmware, sizeof d->firmware);
	if (!get_text(node, card, obj, "Driver version", d->driver, sizeof d->driver) && sys_driver)
		xp_raw_set(d->driver, sizeof d->driver, sys_driver, strlen(sys_driver));

	/* Junction is the hottest spot and what the firmware throttles on; edge when absent. */
	double t;
	if (get_num(node, card, obj, "Temperature (Sensor junction) (C)", &t) ||
	    get_num(node, card, obj, "Temperature (Sensor edge) (C)", &t))
		d->temperature_c = t;
	double p;
	if (get_num(node, card, obj, "Average Graphics Package Power (W)", &p) ||
	    get_num(node, card, obj, "Current Socket Graphics Package Power (W)", &p))
		d->power_w = p;
	if (get_num(node, card, obj, "Max Graphics Package Power (W)", &p))
		d->power_limit_w = p;
	/* AMD says GPU, Hygon DCU, and DTK 25.04 and later HCU. */
	double u;
	if (get_num(node, card, obj, "GPU use (%)", &u) || get_num(node, card, obj, "DCU use (%)", &u) ||
	    get_num(node, card, obj, "HCU use (%)", &u))
		d->utilization_pct = u;
	get_mib(node, card, obj, "VRAM Total Memory (", &d->memory_total_mib);
	get_mib(node, card, obj, "VRAM Total Used Memory (", &d->memory_used_mib);

	json_t *v = get_ci(obj, "(Topology) Numa Node");
	int64_t n;
	if (v && value_i64(v, &n) && n >= 0 && n < 1 << 20)
		d->numa = (int)n;
}

static int cmp_card(const void *a, const void *b)
{
	const struct card *x = a, *y = b;
	return (x->index > y->index) - (x->index < y->index);
}

/* "card12" -> 12; -1 for any other key. */
static int card_index(const char *key)
{
	if (strncmp(key, "card", 4) != 0 || !isdigit((unsigned char)key[4]))
		return -1;
	long n = 0;
	for (const char *s = key + 4; *s; s++) {
		if (!isdigit((unsigned char)*s) || n > 100000)
			return -1;
		n = n * 10 + (*s - '0');
	}
	return (int)n;
}

static int find_root(int *parent, int i)
{
	while (parent[i] != i)
		i = parent[i] = parent[parent[i]];
	return i;
}

/* Link types between DRM devices (`--showtopotype`): rocm-smi prints "PCIE" or "XGMI" for each
 * pair. Only XGMI says something hwloc cannot, so the matrix is filled only when one exists;
 * PCIe cells stay unknown for the PCI tree to classify. DRM device numbers are the card numbers. */
static void parse_links(struct xp_raw_node *node, json_t *sys)
{
	static const char prefix[] = "(Topology) Link type between DRM devices ";
	int parent[XP_RAW_MAX_DEVICES];
	for (int i = 0; i < XP_RAW_MAX_DEVICES; i++)
		parent[i] = i;
	bool any = false;
	const char *k;
	json_t *v;
	json_object_foreach(sys, k, v) {
		if (strncasecmp(k, prefix, sizeof prefix - 1) != 0 || !json_is_string(v))
			continue;
		int a, b, used = 0;
		if (sscanf(k + sizeof prefix - 1, "%d and %d%n", &a, &b, &used) != 2 ||
		    k[sizeof prefix - 1 + (size_t)used] || a == b)
			continue;
		if (strcasecmp(json_string_value(v), "XGMI") != 0)
			continue;
		int pa = -1, pb = -1;
		for (int i = 0; i < node->n_devices; i++) {
			if (node->devices[i].index == a)
				pa = i;
			if (node->devices[i].index == b)
				pb = i;
		}
		if (pa < 0 || pb < 0)
			continue; /* a device this output does not list (filtered with -d) */
		if (!any) {
			any = true;
			memset(node->links, 0, sizeof node->links);
			for (int i = 0; i < node->n_devices; i++)
				strcpy(node->links[i][i], "X");
		}
		strcpy(node->links[pa][pb], "XGMI");
		strcpy(node->links[pb][pa], "XGMI");
		parent[find_root(parent, pa)] = find_root(parent, pb);
	}
	node->has_links = any;
	if (!any)
		return;
	/* An XGMI hive is a connected set; name it after its lowest card so the name is stable. */
	for (int i = 0; i < node->n_devices; i++) {
		int r = find_root(parent, i), lowest = -1, members = 0;
		for (int j = 0; j < node->n_devices; j++)
			if (find_root(parent, j) == r) {
				members++;
				if (lowest < 0 || node->devices[j].index < lowest)
					lowest = node->devices[j].index;
			}
		if (members > 1)
			snprintf(node->devices[i].group, sizeof node->devices[i].group, "xgmi%d", lowest);
	}
}

int xp_rocmsmi_parse_json(const char *text, size_t len, struct xp_raw_node *node, char *err, size_t errlen)
{
	char host[sizeof node->hostname];
	memcpy(host, node->hostname, sizeof host);
	xp_raw_node_init(node);
	memcpy(node->hostname, host, sizeof host);
	if (!text || !len) {
		snprintf(err, errlen, "rocm-smi: empty output");
		return -1;
	}
	/* Some versions print a warning line before the JSON; start at the first line that opens
	 * an object, and say so. */
	size_t off = 0;
	while (off < len && isspace((unsigned char)text[off]))
		off++;
	if (off < len && text[off] != '{' && text[off] != '[') {
		const char *p = text;
		off = len;
		while ((p = memchr(p, '\n', len - (size_t)(p - text))) != NULL) {
			p++;
			if ((size_t)(p - text) < len && *p == '{') {
				off = (size_t)(p - text);
				break;
			}
		}
		if (off == len) {
			snprintf(err, errlen, "rocm-smi: output is not JSON");
			return -1;
		}
		xp_raw_warn(node, "rocm-smi: skipped %zu bytes of text before the JSON", off);
	}
	json_error_t jerr;
	json_t *root = json_loadb(text + off, len - off, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(err, errlen, "rocm-smi: JSON line %d: %s", jerr.line, jerr.text);
		return -1;
	}
	int rc = -1;
	if (!json_is_object(root)) {
		snprintf(err, errlen, "rocm-smi: the JSON is not an object of cards");
		goto out;
	}
	json_t *sys = json_object_get(root, "system");
	if (sys && !json_is_object(sys)) {
		xp_raw_warn(node, "rocm-smi: \"system\" is not an object");
		sys = NULL;
	}
	const char *sys_driver = sys ? text_of(node, "system", sys, "Driver version") : NULL;

	struct card cards[XP_RAW_MAX_DEVICES];
	int n = 0, dropped = 0;
	const char *k;
	json_t *v;
	json_object_foreach(root, k, v) {
		int idx = card_index(k);
		if (idx < 0)
			continue;
		if (!json_is_object(v)) {
			snprintf(err, errlen, "rocm-smi: \"%s\" is not an object", k);
			goto out;
		}
		if (n == XP_RAW_MAX_DEVICES) {
			dropped++;
			continue;
		}
		cards[n++] = (struct card){idx, k, v};
	}
	if (dropped)
		xp_raw_warn(node, "rocm-smi: %d cards beyond the %d kept", dropped, XP_RAW_MAX_DEVICES);
	qsort(cards, (size_t)n, sizeof cards[0], cmp_card);
	for (int i = 0; i < n; i++) {
		struct xp_raw_device *d = &node->devices[i];
		xp_raw_device_init(d);
		d->index = cards[i].index;
		fill_device(node, cards[i].key, cards[i].obj, sys_driver, d);
	}
	node->n_devices = n;
	if (sys)
		parse_links(node, sys);
	rc = 0;
out:
	json_decref(root);
	if (rc < 0) {
		node->n_devices = 0;
		node->has_links = false;
	}
	return rc;
}
