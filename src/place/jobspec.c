/* jobspec.c: job specs from JSON and flags, their encoding, and the checks that refuse a
 * job no cluster could run (see jobspec.h). */
#include "jobspec.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model_json.h"
#include "names.h"
#include "validate.h"

#define PATH_LEN 320 /* "$.groups[63]." and a key cut to KEY_SHOWN bytes fit with room */
#define KEY_SHOWN 64 /* bytes of an unknown key echoed in a message */
#define VAL_SHOWN 40 /* bytes of a bad flag value echoed in a message */

static const char *const kind_names[XP_JOB_KIND_COUNT] = {"train", "infer", "data", "batch"};
static const char *const numa_names[XP_NUMA_POLICY_COUNT] = {"none", "prefer", "strict"};
static const char *const net_names[XP_NET_COUNT] = {"any", "switch", "rack"};

/* The fields of the job and of a group, in the order they are encoded. */
static const char *const job_keys[] = {"name", "kind", "queue", "tenant", "priority", "groups", NULL};
static const char *const group_keys[] = {
	"name", "replicas", "gang_min", "devices", "slice", "share_pct", "vendor", "model",
	"memory_mib", "min_ecu", "cpus", "host_memory_mib", "labels", "homogeneous", "same_group",
	"numa", "network", "validated", NULL};

/* The flag that sets each field, for xp_job_check's messages on a job made from flags. */
static const struct {
	const char *key, *flag;
} flag_of[] = {
	{"name", "name"}, {"kind", "kind"}, {"queue", "queue"}, {"tenant", "tenant"},
	{"priority", "priority"}, {"replicas", "replicas"}, {"gang_min", "gang-min"},
	{"devices", "devices"}, {"slice", "slice"}, {"share_pct", "share"}, {"vendor", "vendor"},
	{"model", "model"}, {"memory_mib", "memory"}, {"min_ecu", "ecu"}, {"cpus", "cpus"},
	{"host_memory_mib", "host-memory"}, {"labels", "label"}, {"homogeneous", "homogeneous"},
	{"same_group", "same-group"}, {"numa", "numa"}, {"network", "network"},
	{"validated", "validated"},
};

/* The enums' spellings, printed and parsed exactly (case-sensitive); "unknown" out of range. */
XP_NAMES_DEFINE(xp_job_kind, kind_names, XP_JOB_KIND_COUNT)
XP_NAMES_DEFINE(xp_numa_policy, numa_names, XP_NUMA_POLICY_COUNT)
XP_NAMES_DEFINE(xp_network, net_names, XP_NET_COUNT)

/* ---- strings ---- */

/* What is wrong with a string that names or selects something (NULL when nothing): every
 * one of them is printed in tables and reasons, so control characters would reach
 * operators' terminals as escape sequences; flags are not UTF-8 by construction as JSON is. */
static const char *str_problem(const char *s, size_t n, char *buf, size_t len)
{
	if (strlen(s) != n)
		return "a string must not contain NUL (\\u0000)";
	if (n == 0)
		return "must not be empty";
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f) {
			snprintf(buf, len, "a string must not contain control characters (byte 0x%02x at %zu)", c, i);
			return buf;
		}
		size_t k = xp_utf8_len((const unsigned char *)s + i, n - i);
		if (!k) {
			snprintf(buf, len, "not UTF-8 (byte 0x%02x at %zu)", c, i);
			return buf;
		}
		/* U+0080-U+009F: terminals take some of them (CSI) as escape sequences too. */
		if (k == 2 && c == 0xc2 && (unsigned char)s[i + 1] < 0xa0) {
			snprintf(buf, len, "a string must not contain control characters (U+%04X at %zu)",
				 (unsigned char)s[i + 1], i);
			return buf;
		}
		i += k;
	}
	if (n > XP_JOB_MAX_STRING) {
		snprintf(buf, len, "a string of %zu bytes, more than the %d allowed", n, XP_JOB_MAX_STRING);
		return buf;
	}
	return NULL;
}

/* A bounded, printable copy of text a user gave (for echoing it in a message). */
static const char *shown(const char *s, char *buf, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; s[i] && o + 4 < len; i++) {
		unsigned char c = (unsigned char)s[i];
		buf[o++] = c < 0x20 || c == 0x7f || c >= 0x80 ? '?' : (char)c;
	}
	if (o + 4 >= len)
		memcpy(buf + o, "...", 3), o += 3;
	buf[o] = '\0';
	return buf;
}

/* ---- JSON decoding ---- */

/* Every decoder returns 0, or -1 with err set to "PATH: message". */

/* "LEADWHERE: message": the one formatter behind bad() (a JSON path) and fbad() (a flag). */
__attribute__((format(printf, 4, 0)))
static int vbad(struct xp_err *err, const char *lead, const char *where, const char *fmt, va_list ap)
{
	char msg[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	return xp_errf(err, "%s%s: %s", lead, where, msg);
}

__attribute__((format(printf, 3, 4)))
static int bad(struct xp_err *err, const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vbad(err, "", path, fmt, ap);
	va_end(ap);
	return rc;
}

/* path.key, the key made printable and cut short: unknown keys are the user's text. */
static void path_key(char *out, const char *path, const char *key)
{
	char k[KEY_SHOWN + 8];
	xp_json_path_cut(out, PATH_LEN, snprintf(out, PATH_LEN, "%s.%s", path, shown(key, k, sizeof k)));
}

static bool in_list(const char *const *keys, const char *k)
{
	for (size_t i = 0; keys[i]; i++)
		if (strcmp(keys[i], k) == 0)
			return true;
	return false;
}

/* Edit distance between short a and b (0 to 3, 3 meaning "3 or more"), for suggestions. */
static int near(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	int row[33], prev;
	if (na > 32 || nb > 32)
		return 3;
	for (size_t k = 0; k <= nb; k++)
		row[k] = (int)k;
	for (size_t i = 1; i <= na; i++) {
		prev = row[0];
		row[0] = (int)i;
		for (size_t k = 1; k <= nb; k++) {
			int sub = prev + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[k - 1]));
			int del = row[k] + 1, ins = row[k - 1] + 1;
			prev = row[k];
			row[k] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
	}
	return row[nb] < 3 ? row[nb] : 3;
}

/* The closest known key to k within two edits, or NULL. */
static const char *suggest(const char *k, const char *const *a, const char *const *b)
{
	const char *best = NULL;
	int d = 3;
	for (const char *const *l = a; l; l = l == a ? b : NULL)
		for (size_t i = 0; l[i]; i++)
			if (near(k, l[i]) < d)
				d = near(k, l[i]), best = l[i];
	return best;
}

/* A typo in a job spec must not be ignored: it would silently drop a constraint. */
static int known_keys(json_t *o, const char *path, const char *const *a, const char *const *b,
		      struct xp_err *err)
{
	const char *k;
	json_t *v;
	char p[PATH_LEN];
	json_object_foreach(o, k, v) {
		if (in_list(a, k) || (b && in_list(b, k)))
			continue;
		path_key(p, path, k);
		if (!b && a == job_keys && in_list(group_keys, k))
			return bad(err, p, "a group's field at the top level of a job with \"groups\": "
				   "move it into a group");
		const char *hint = suggest(k, a, b);
		if (hint)
			return bad(err, p, "unknown field (did you mean \"%s\"?)", hint);
		return bad(err, p, "unknown field");
	}
	return 0;
}

/* A string (or null when nullable) into *out, replacing what was there. */
static int get_str(json_t *o, const char *path, const char *key, bool nullable, char **out,
		   struct xp_err *err)
{
	json_t *v = json_object_get(o, key);
	char p[PATH_LEN], buf[160];
	if (!v)
		return 0;
	path_key(p, path, key);
	if (nullable && json_is_null(v)) {
		free(*out);
		*out = NULL;
		return 0;
	}
	if (!json_is_string(v))
		return bad(err, p, "expected a string%s, got %s", nullable ? " or null" : "", xp_json_type_name(v));
	const char *why = str_problem(json_string_value(v), json_string_length(v), buf, sizeof buf);
	if (why)
		return bad(err, p, "%s", why);
	free(*out);
	*out = xp_strdup(json_string_value(v));
	return 0;
}

static int get_int(json_t *o, const char *path, const char *key, int64_t min, int64_t max,
		   int64_t *out, struct xp_err *err)
{
	json_t *v = json_object_get(o, key);
	char p[PATH_LEN];
	if (!v)
		return 0;
	path_key(p, path, key);
	if (!json_is_integer(v))
		return bad(err, p, "expected an integer, got %s", xp_json_type_name(v));
	json_int_t x = json_integer_value(v);
	if (x < min || x > max) {
		if (min == 0)
			return bad(err, p, "expected an integer from 0 to %lld, got %lld", (long long)max,
				   (long long)x);
		return bad(err, p, "expected an integer from %lld to %lld, got %lld", (long long)min,
			   (long long)max, (long long)x);
	}
	*out = x;
	return 0;
}

static int get_i(json_t *o, const char *path, const char *key, int min, int *out, struct xp_err *err)
{
	int64_t v = *out;
	if (get_int(o, path, key, min, INT_MAX, &v, err))
		return -1;
	*out = (int)v;
	return 0;
}

static int get_bool(json_t *o, const char *path, const char *key, bool *out, struct xp_err *err)
{
	json_t *v = json_object_get(o, key);
	char p[PATH_LEN];
	if (!v)
		return 0;
	if (!json_is_boolean(v)) {
		path_key(p, path, key);
		return bad(err, p, "expected a boolean, got %s", xp_json_type_name(v));
	}
	*out = json_is_true(v);
	return 0;
}

static int get_enum(json_t *o, const char *path, const char *key, int (*parse)(const char *),
		    const char *choices, int *out, struct xp_err *err)
{
	json_t *v = json_object_get(o, key);
	char p[PATH_LEN];
	if (!v)
		return 0;
	int x = -1;
	if (json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v))
		x = parse(json_string_value(v));
	if (x < 0) {
		path_key(p, path, key);
		return bad(err, p, "expected one of %s", choices);
	}
	*out = x;
	return 0;
}

static int get_labels(json_t *o, const char *path, struct xp_labels *l, struct xp_err *err)
{
	json_t *m = json_object_get(o, "labels"), *v;
	char p[PATH_LEN], kp[PATH_LEN], buf[160];
	const char *k, *why;
	if (!m || json_is_null(m))
		return 0;
	path_key(p, path, "labels");
	if (!json_is_object(m))
		return bad(err, p, "expected an object of \"key\": \"value\" selectors, got %s", xp_json_type_name(m));
	if (json_object_size(m) > XP_JOB_MAX_LABELS)
		return bad(err, p, "%zu selectors, more than the %d allowed", json_object_size(m),
			   XP_JOB_MAX_LABELS);
	json_object_foreach(m, k, v) {
		path_key(kp, p, k);
		if ((why = str_problem(k, strlen(k), buf, sizeof buf)))
			return bad(err, kp, "label key: %s", why);
		if (strchr(k, '=') || strchr(k, ','))
			return bad(err, kp, "label key: must not contain '=' or ','");
		if (!json_is_string(v))
			return bad(err, kp, "expected a string, got %s", xp_json_type_name(v));
		/* An empty value is a value (Kubernetes allows it), so only the rest is checked. */
		if (json_string_length(v) &&
		    (why = str_problem(json_string_value(v), json_string_length(v), buf, sizeof buf)))
			return bad(err, kp, "%s", why);
		xp_labels_set(l, k, json_string_value(v));
	}
	return 0;
}

static int get_validated(json_t *o, const char *path, struct xp_task_group *g, struct xp_err *err)
{
	json_t *v = json_object_get(o, "validated"), *lv;
	static const char *const keys[] = {"layer", "case", NULL};
	char p[PATH_LEN], lp[PATH_LEN];
	if (!v || json_is_null(v))
		return 0;
	path_key(p, path, "validated");
	if (!json_is_object(v))
		return bad(err, p, "expected an object {\"layer\", \"case\"} or null, got %s", xp_json_type_name(v));
	if (known_keys(v, p, keys, NULL, err))
		return -1;
	path_key(lp, p, "layer");
	if (!(lv = json_object_get(v, "layer")))
		return bad(err, lp, "missing: name the layer that must be proven");
	int layer = -1;
	if (json_is_string(lv) && strlen(json_string_value(lv)) == json_string_length(lv))
		layer = xp_layer_parse(json_string_value(lv));
	if (layer < 0)
		return bad(err, lp, "expected one of discovered, schedulable, launches, executes, accepted");
	g->validated_layer = layer;
	return get_str(v, p, "case", true, &g->validated_case, err);
}

/* One group from o: a group object (named), or the whole job in the short form, where
 * "name" is the job's. */
static int group_from(json_t *o, const char *path, bool named, int kind, struct xp_task_group *g,
		      struct xp_err *err)
{
	int64_t mem = 0, host = 0;
	double ecu = 0;
	json_t *v;
	char p[PATH_LEN];
	g->replicas = 1;
	g->gang_min = -1;
	g->devices = -1;
	g->homogeneous = kind == XP_JOB_TRAIN;
	g->validated_layer = -1;
	if ((named && get_str(o, path, "name", true, &g->name, err)) ||
	    get_i(o, path, "replicas", 0, &g->replicas, err) ||
	    get_i(o, path, "gang_min", 0, &g->gang_min, err) ||
	    get_i(o, path, "devices", 0, &g->devices, err) ||
	    get_str(o, path, "slice", true, &g->slice, err) ||
	    get_i(o, path, "share_pct", 0, &g->share_pct, err) ||
	    get_str(o, path, "vendor", true, &g->vendor, err) ||
	    get_str(o, path, "model", true, &g->model, err) ||
	    get_int(o, path, "memory_mib", 0, INT64_MAX, &mem, err) ||
	    get_i(o, path, "cpus", 0, &g->cpus, err) ||
	    get_int(o, path, "host_memory_mib", 0, INT64_MAX, &host, err) ||
	    get_labels(o, path, &g->labels, err) ||
	    get_bool(o, path, "homogeneous", &g->homogeneous, err) ||
	    get_bool(o, path, "same_group", &g->same_group, err) ||
	    get_enum(o, path, "numa", xp_numa_policy_parse, "none, prefer, strict", &g->numa, err) ||
	    get_enum(o, path, "network", xp_network_parse, "any, switch, rack", &g->network, err) ||
	    get_validated(o, path, g, err))
		return -1;
	if ((v = json_object_get(o, "min_ecu"))) {
		path_key(p, path, "min_ecu");
		if (!json_is_number(v))
			return bad(err, p, "expected a number, got %s", xp_json_type_name(v));
		ecu = json_number_value(v);
		if (!(ecu >= 0 && isfinite(ecu)))
			return bad(err, p, "expected a number >= 0, got %g", ecu);
	}
	g->memory_mib = mem;
	g->host_memory_mib = host;
	g->min_ecu = ecu;
	/* One device is what "give me an accelerator" means; a slice or share is instead of it. */
	if (g->devices < 0)
		g->devices = g->slice || g->share_pct ? 0 : 1;
	if (g->gang_min < 0)
		g->gang_min = g->replicas;
	return 0;
}

static struct xp_job *job_new(void)
{
	struct xp_job *j = xp_calloc(1, sizeof *j);
	j->kind = XP_JOB_BATCH;
	return j;
}

static struct xp_job *job_from_json(json_t *doc, struct xp_err *err)
{
	struct xp_job *j = job_new();
	json_t *groups = json_object_get(doc, "groups");
	char p[PATH_LEN], gp[PATH_LEN];
	int64_t prio = 0;
	if (known_keys(doc, "$", job_keys, groups ? NULL : group_keys, err) ||
	    get_str(doc, "$", "name", true, &j->name, err) ||
	    get_enum(doc, "$", "kind", xp_job_kind_parse, "train, infer, data, batch", &j->kind, err) ||
	    get_str(doc, "$", "queue", true, &j->queue, err) ||
	    get_str(doc, "$", "tenant", true, &j->tenant, err) ||
	    get_int(doc, "$", "priority", INT_MIN, INT_MAX, &prio, err))
		goto fail;
	j->priority = (int)prio;
	if (!groups) {
		/* The common case: one group, its fields beside the job's. */
		j->form = XP_JOB_FORM_SHORT;
		j->groups = xp_calloc(1, sizeof *j->groups);
		j->n_groups = 1;
		if (group_from(doc, "$", false, j->kind, &j->groups[0], err))
			goto fail;
		return j;
	}
	j->form = XP_JOB_FORM_FULL;
	path_key(p, "$", "groups");
	if (!json_is_array(groups)) {
		bad(err, p, "expected an array of task groups, got %s", xp_json_type_name(groups));
		goto fail;
	}
	if (json_array_size(groups) > XP_JOB_MAX_GROUPS) {
		bad(err, p, "%zu groups, more than the %d allowed", json_array_size(groups), XP_JOB_MAX_GROUPS);
		goto fail;
	}
	j->groups = xp_calloc(json_array_size(groups) + 1, sizeof *j->groups);
	size_t i;
	json_t *g;
	json_array_foreach(groups, i, g) {
		xp_json_path_idx(gp, sizeof gp, p, i);
		j->n_groups = i + 1; /* counted before decoding, so a failure frees what it got */
		if (!json_is_object(g)) {
			bad(err, gp, "expected an object, got %s", xp_json_type_name(g));
			goto fail;
		}
		if (known_keys(g, gp, group_keys, NULL, err) || group_from(g, gp, true, j->kind, &j->groups[i], err))
			goto fail;
	}
	return j;
fail:
	xp_job_free(j);
	return NULL;
}

struct xp_job *xp_job_parse(const char *text, size_t len, const char *name, struct xp_err *err)
{
	json_error_t je;
	char buf[sizeof je.text + 8];
	struct xp_job *j = NULL;
	if (len > XP_JOB_MAX_BYTES) {
		xp_errf(err, "a job spec of %zu bytes, more than the %u allowed", len, XP_JOB_MAX_BYTES);
	} else {
		json_t *doc = json_loadb(text ? text : "", text ? len : 0, JSON_REJECT_DUPLICATES, &je);
		if (!doc) {
			/* jansson quotes the input near the error; it may hold control characters. */
			xp_errf(err, "%d:%d: %s", je.line, je.column, shown(je.text, buf, sizeof buf));
		} else if (!json_is_object(doc)) {
			bad(err, "$", "expected an object, got %s", xp_json_type_name(doc));
		} else {
			j = job_from_json(doc, err);
		}
		json_decref(doc);
	}
	if (!j && name) {
		char nb[PATH_LEN];
		xp_err_prefix(err, "%s", shown(name, nb, sizeof nb));
	}
	return j;
}

/* ---- flags ---- */

__attribute__((format(printf, 3, 4)))
static int fbad(struct xp_err *err, const char *flag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vbad(err, "--", flag, fmt, ap);
	va_end(ap);
	return rc;
}

static int flag_str(const char *flag, const char *val, char **out, struct xp_err *err)
{
	char buf[160];
	if (!val)
		return 0;
	const char *why = str_problem(val, strlen(val), buf, sizeof buf);
	if (why)
		return fbad(err, flag, "%s", why);
	free(*out);
	*out = xp_strdup(val);
	return 0;
}

/* Decimal digits only: "8 ", "0x8" or "8k" is a typo, not 8. */
static int flag_int(const char *flag, const char *val, int64_t min, int64_t max, int64_t *out,
		    struct xp_err *err)
{
	char buf[VAL_SHOWN];
	if (!val)
		return 0;
	const char *s = val + (val[0] == '-' && min < 0);
	bool ok = *s != '\0';
	for (const char *c = s; ok && *c; c++)
		ok = *c >= '0' && *c <= '9';
	errno = 0;
	long long x = ok ? strtoll(val, NULL, 10) : 0;
	if (!ok || errno == ERANGE || x < min || x > max)
		return fbad(err, flag, "expected an integer from %lld to %lld, got \"%s\"", (long long)min,
			    (long long)max, shown(val, buf, sizeof buf));
	*out = x;
	return 0;
}

static int flag_i(const char *flag, const char *val, int min, int *out, struct xp_err *err)
{
	int64_t v = *out;
	if (flag_int(flag, val, min, INT_MAX, &v, err))
		return -1;
	*out = (int)v;
	return 0;
}

static int flag_bool(const char *flag, const char *val, bool *out, struct xp_err *err)
{
	static const char *const yes[] = {"", "yes", "true", "1", NULL}, *const no[] = {"no", "false", "0", NULL};
	char buf[VAL_SHOWN];
	if (!val)
		return 0;
	if (in_list(yes, val) || in_list(no, val)) {
		*out = in_list(yes, val);
		return 0;
	}
	return fbad(err, flag, "expected yes or no, got \"%s\"", shown(val, buf, sizeof buf));
}

static int flag_enum(const char *flag, const char *val, int (*parse)(const char *), const char *choices,
		     int *out, struct xp_err *err)
{
	char buf[VAL_SHOWN];
	if (!val)
		return 0;
	int x = parse(val);
	if (x < 0)
		return fbad(err, flag, "expected one of %s, got \"%s\"", choices, shown(val, buf, sizeof buf));
	*out = x;
	return 0;
}

/* "KEY=VALUE[,KEY=VALUE...]". */
static int flag_labels(const char *val, struct xp_labels *l, struct xp_err *err)
{
	char buf[160], kb[VAL_SHOWN];
	const char *why;
	if (!val)
		return 0;
	if ((why = str_problem(val, strlen(val), buf, sizeof buf)))
		return fbad(err, "label", "%s", why);
	char *copy = xp_strdup(val), *save = NULL;
	int rc = 0;
	for (char *kv = strtok_r(copy, ",", &save); kv && !rc; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		if (!eq || eq == kv) {
			rc = fbad(err, "label", "expected KEY=VALUE, got \"%s\"", shown(kv, kb, sizeof kb));
			break;
		}
		*eq = '\0';
		if (xp_labels_get(l, kv))
			rc = fbad(err, "label", "%s given twice", shown(kv, kb, sizeof kb));
		else if (l->n >= XP_JOB_MAX_LABELS)
			rc = fbad(err, "label", "more than the %d selectors allowed", XP_JOB_MAX_LABELS);
		else
			xp_labels_set(l, kv, eq + 1);
	}
	if (!rc && l->n == 0)
		rc = fbad(err, "label", "expected KEY=VALUE, got \"%s\"", shown(val, kb, sizeof kb));
	free(copy);
	return rc;
}

/* "LAYER[:CASE]": case names never hold ':' (the store refuses it in ids). */
static int flag_validated(const char *val, struct xp_task_group *g, struct xp_err *err)
{
	char buf[160], vb[VAL_SHOWN];
	const char *why;
	if (!val)
		return 0;
	if ((why = str_problem(val, strlen(val), buf, sizeof buf)))
		return fbad(err, "validated", "%s", why);
	const char *colon = strchr(val, ':');
	char *layer = xp_strndup(val, colon ? (size_t)(colon - val) : strlen(val));
	int l = xp_layer_parse(layer);
	free(layer);
	if (l < 0)
		return fbad(err, "validated", "expected LAYER[:CASE] with LAYER one of discovered, schedulable, "
			    "launches, executes, accepted, got \"%s\"", shown(val, vb, sizeof vb));
	if (colon && !colon[1])
		return fbad(err, "validated", "a case name after ':' is missing");
	g->validated_layer = l;
	free(g->validated_case);
	g->validated_case = colon ? xp_strdup(colon + 1) : NULL;
	return 0;
}

struct xp_job *xp_job_from_flags(const struct xp_job_flags *f, struct xp_err *err)
{
	struct xp_job *j = job_new();
	j->form = XP_JOB_FORM_FLAGS;
	j->groups = xp_calloc(1, sizeof *j->groups);
	j->n_groups = 1;
	struct xp_task_group *g = &j->groups[0];
	int64_t mem = 0, host = 0;
	g->replicas = 1;
	g->gang_min = -1;
	g->devices = -1;
	g->validated_layer = -1;
	if (flag_str("name", f->name, &j->name, err) ||
	    flag_enum("kind", f->kind, xp_job_kind_parse, "train, infer, data, batch", &j->kind, err) ||
	    flag_str("queue", f->queue, &j->queue, err) || flag_str("tenant", f->tenant, &j->tenant, err) ||
	    flag_i("priority", f->priority, INT_MIN, &j->priority, err))
		goto fail;
	g->homogeneous = j->kind == XP_JOB_TRAIN;
	if (flag_i("replicas", f->replicas, 0, &g->replicas, err) ||
	    flag_i("gang-min", f->gang_min, 0, &g->gang_min, err) ||
	    flag_i("devices", f->devices, 0, &g->devices, err) ||
	    flag_str("slice", f->slice, &g->slice, err) ||
	    flag_i("share", f->share, 0, &g->share_pct, err) ||
	    flag_str("vendor", f->vendor, &g->vendor, err) || flag_str("model", f->model, &g->model, err) ||
	    flag_int("memory", f->memory, 0, INT64_MAX, &mem, err) ||
	    flag_i("cpus", f->cpus, 0, &g->cpus, err) ||
	    flag_int("host-memory", f->host_memory, 0, INT64_MAX, &host, err) ||
	    flag_labels(f->labels, &g->labels, err) ||
	    flag_bool("homogeneous", f->homogeneous, &g->homogeneous, err) ||
	    flag_bool("same-group", f->same_group, &g->same_group, err) ||
	    flag_enum("numa", f->numa, xp_numa_policy_parse, "none, prefer, strict", &g->numa, err) ||
	    flag_enum("network", f->network, xp_network_parse, "switch, rack, any", &g->network, err) ||
	    flag_validated(f->validated, g, err))
		goto fail;
	if (f->ecu) {
		char buf[VAL_SHOWN], *end = NULL;
		errno = 0;
		double x = strtod(f->ecu, &end);
		bool digit = (f->ecu[0] >= '0' && f->ecu[0] <= '9') || f->ecu[0] == '.';
		if (!digit || end == f->ecu || *end || errno == ERANGE || !(x >= 0 && isfinite(x))) {
			fbad(err, "ecu", "expected a number >= 0, got \"%s\"", shown(f->ecu, buf, sizeof buf));
			goto fail;
		}
		g->min_ecu = x;
	}
	g->memory_mib = mem;
	g->host_memory_mib = host;
	if (g->devices < 0)
		g->devices = g->slice || g->share_pct ? 0 : 1;
	if (g->gang_min < 0)
		g->gang_min = g->replicas;
	return j;
fail:
	xp_job_free(j);
	return NULL;
}

/* ---- encoding and freeing ---- */

static json_t *group_to_json(const struct xp_task_group *g)
{
	json_t *o = json_object(), *labels = json_object();
	json_object_set_new(o, "name", xp_json_str(g->name));
	json_object_set_new(o, "replicas", json_integer(g->replicas));
	json_object_set_new(o, "gang_min", json_integer(g->gang_min));
	json_object_set_new(o, "devices", json_integer(g->devices));
	json_object_set_new(o, "slice", xp_json_str(g->slice));
	json_object_set_new(o, "share_pct", json_integer(g->share_pct));
	json_object_set_new(o, "vendor", xp_json_str(g->vendor));
	json_object_set_new(o, "model", xp_json_str(g->model));
	json_object_set_new(o, "memory_mib", json_integer((json_int_t)g->memory_mib));
	json_object_set_new(o, "min_ecu", json_real(isfinite(g->min_ecu) ? g->min_ecu : 0));
	json_object_set_new(o, "cpus", json_integer(g->cpus));
	json_object_set_new(o, "host_memory_mib", json_integer((json_int_t)g->host_memory_mib));
	for (size_t i = 0; i < g->labels.n; i++)
		json_object_set_new(labels, g->labels.keys[i], xp_json_str(g->labels.values[i]));
	json_object_set_new(o, "labels", labels);
	json_object_set_new(o, "homogeneous", json_boolean(g->homogeneous));
	json_object_set_new(o, "same_group", json_boolean(g->same_group));
	json_object_set_new(o, "numa", json_string(xp_numa_policy_name(g->numa)));
	json_object_set_new(o, "network", json_string(xp_network_name(g->network)));
	if (g->validated_layer >= 0) {
		json_t *v = json_object();
		json_object_set_new(v, "layer", json_string(xp_layer_name(g->validated_layer)));
		json_object_set_new(v, "case", xp_json_str(g->validated_case));
		json_object_set_new(o, "validated", v);
	} else {
		json_object_set_new(o, "validated", json_null());
	}
	return o;
}

json_t *xp_job_to_json(const struct xp_job *j)
{
	json_t *o = json_object(), *a = json_array();
	json_object_set_new(o, "name", xp_json_str(j->name));
	json_object_set_new(o, "kind", json_string(xp_job_kind_name(j->kind)));
	json_object_set_new(o, "queue", xp_json_str(j->queue));
	json_object_set_new(o, "tenant", xp_json_str(j->tenant));
	json_object_set_new(o, "priority", json_integer(j->priority));
	for (size_t i = 0; i < j->n_groups; i++)
		json_array_append_new(a, group_to_json(&j->groups[i]));
	json_object_set_new(o, "groups", a);
	return o;
}

void xp_job_free(struct xp_job *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n_groups; i++) {
		struct xp_task_group *g = &j->groups[i];
		free(g->name);
		free(g->slice);
		free(g->vendor);
		free(g->model);
		xp_labels_clear(&g->labels);
		free(g->validated_case);
	}
	free(j->groups);
	free(j->name);
	free(j->queue);
	free(j->tenant);
	free(j);
}

/* ---- checks ---- */

/* Where field key of group gi (gi < 0: of the job) is, in the form the job came in. */
static void where(const struct xp_job *j, long gi, const char *key, char *out, size_t len)
{
	if (j->form == XP_JOB_FORM_FLAGS) {
		for (size_t i = 0; i < sizeof flag_of / sizeof flag_of[0]; i++)
			if (strcmp(flag_of[i].key, key) == 0) {
				snprintf(out, len, "--%s", flag_of[i].flag);
				return;
			}
	}
	if (gi < 0 || j->form == XP_JOB_FORM_SHORT)
		snprintf(out, len, "$.%s", key);
	else
		snprintf(out, len, "$.groups[%ld].%s", gi, key);
}

__attribute__((format(printf, 5, 6)))
static int cbad(struct xp_err *err, const struct xp_job *j, long gi, const char *key, const char *fmt, ...)
{
	char msg[768], p[PATH_LEN];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	where(j, gi, key, p, sizeof p);
	return xp_errf(err, "%s: %s", p, msg);
}

/* The manifest's affinity rule for a model, as normalization applies it. */
static int rule_of(const struct xp_manifest *m, const struct xp_mmodel *md, int *ring)
{
	if (md->affinity) {
		*ring = md->ring_size;
		return md->affinity;
	}
	*ring = m->ring_size;
	return m->affinity;
}

static bool has_wildcard(const char *s)
{
	return strpbrk(s, "*?") != NULL;
}

bool xp_job_model_matches(const struct xp_task_group *g, const struct xp_manifest *m,
			  const struct xp_mmodel *md)
{
	if (g->vendor) {
		const char *v = md->vendor[0] ? md->vendor : m->vendor;
		if (!xp_glob_match(g->vendor, v) && !xp_glob_match(g->vendor, m->name))
			return false;
	}
	if (!g->model || xp_glob_match(g->model, md->name))
		return true;
	/* Users write the product names tools print ("Ascend910B2"), which the match list holds:
	 * as text when it is a plain name, as a glob over the user's plain name otherwise. */
	for (size_t k = 0; k < md->n_match; k++)
		if ((!has_wildcard(md->match[k]) && xp_glob_match(g->model, md->match[k])) ||
		    (!has_wildcard(g->model) && xp_glob_match(md->match[k], g->model)))
			return true;
	return false;
}

/* "vendor \"X\" and model \"Y\"", for messages about what the patterns select. */
static const char *patterns(const struct xp_task_group *g, char *buf, size_t len)
{
	char v[VAL_SHOWN], m[VAL_SHOWN];
	if (g->vendor && g->model)
		snprintf(buf, len, "vendor \"%s\" and model \"%s\"", shown(g->vendor, v, sizeof v),
			 shown(g->model, m, sizeof m));
	else if (g->vendor)
		snprintf(buf, len, "vendor \"%s\"", shown(g->vendor, v, sizeof v));
	else if (g->model)
		snprintf(buf, len, "model \"%s\"", shown(g->model, m, sizeof m));
	else
		snprintf(buf, len, "any vendor and model");
	return buf;
}

/* True when name is one of the ", "-separated names in list. */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		const char *e = strstr(p, ", ");
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && strncmp(p, name, n) == 0)
			return true;
		p += len + (e ? 2 : 0);
	}
	return false;
}

static void append(char *buf, size_t len, const char *s)
{
	size_t n = strlen(buf);
	if (n + 1 < len)
		snprintf(buf + n, len - n, "%s", s);
}

/* A slice must be a template some model the patterns select has, with the memory asked. */
static int check_slice(const struct xp_job *j, long gi, const struct xp_manifest *const *ms, size_t n,
		       struct xp_err *err)
{
	const struct xp_task_group *g = &j->groups[gi];
	char pb[200], known[256] = "", sb[VAL_SHOWN];
	size_t matching = 0, found = 0, too_small = 0;
	int64_t most = -1;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < ms[i]->n_models; k++) {
			const struct xp_mmodel *md = &ms[i]->models[k];
			if (!xp_job_model_matches(g, ms[i], md))
				continue;
			matching++;
			for (size_t t = 0; t < md->n_templates; t++) {
				const struct xp_mtemplate *tp = &md->templates[t];
				if (strcasecmp(tp->name, g->slice) != 0) {
					if (!listed(known, tp->name) && strlen(known) + strlen(tp->name) + 8 < sizeof known) {
						append(known, sizeof known, known[0] ? ", " : "");
						append(known, sizeof known, tp->name);
					}
					continue;
				}
				found++;
				if (g->memory_mib > 0 && tp->memory_mib >= 0 && tp->memory_mib < g->memory_mib) {
					too_small++;
					most = tp->memory_mib > most ? tp->memory_mib : most;
				}
			}
		}
	shown(g->slice, sb, sizeof sb);
	if (!matching)
		return cbad(err, j, gi, "slice", "no model in the manifests matches %s, so none has a template \"%s\"",
			    patterns(g, pb, sizeof pb), sb);
	if (!found && !known[0])
		return cbad(err, j, gi, "slice", "no model matching %s has partition templates; \"%s\" is not one",
			    patterns(g, pb, sizeof pb), sb);
	if (!found)
		return cbad(err, j, gi, "slice", "no model matching %s has a template \"%s\" (they have: %s)",
			    patterns(g, pb, sizeof pb), sb, known);
	if (too_small == found)
		return cbad(err, j, gi, "memory_mib", "%lld MiB per replica, more than template \"%s\" holds "
			    "(%lld MiB at most)", (long long)g->memory_mib, sb, (long long)most);
	return 0;
}

/* Whole devices: the count must be one some matching model's counts and affinity rule allow
 * (ring:N: 1 to N inside one ring, or whole rings), and the memory one some matching model has. */
static int check_devices(const struct xp_job *j, long gi, const struct xp_manifest *const *ms, size_t n,
			 struct xp_err *err)
{
	const struct xp_task_group *g = &j->groups[gi];
	const struct xp_mmodel *refused = NULL, *unfit = NULL, *largest = NULL, *vendor_refused = NULL;
	const struct xp_manifest *vendor_refused_m = NULL;
	int refused_ring = 0, unfit_ring = 0;
	bool allowed = false, fits_group = false, memory_known = true;
	size_t matching = 0;
	int d = g->devices;
	/* Each model, then each [layout] of one (a node of that size places by it): the count
	 * passes when one of them allows it. */
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < ms[i]->n_models + ms[i]->n_variants; k++) {
			const struct xp_mmodel *md = k < ms[i]->n_models ? &ms[i]->models[k]
									 : &ms[i]->variants[k - ms[i]->n_models];
			if (!xp_job_model_matches(g, ms[i], md))
				continue;
			matching += k < ms[i]->n_models;
			int ring = 0, rule = rule_of(ms[i], md, &ring);
			bool ringed = (rule == XP_AFF_RING || rule == XP_AFF_CARD) && ring > 0;
			/* The vendor's own list of request sizes comes before the ring arithmetic. */
			if (!xp_manifest_count_ok(md, d)) {
				if (!vendor_refused)
					vendor_refused = md, vendor_refused_m = ms[i];
			} else if (!ringed || d <= ring || d % ring == 0 || xp_manifest_wide(md, false) != XP_WIDE_WHOLE ||
				   xp_manifest_wide(md, true) != XP_WIDE_WHOLE)
				allowed = true;
			else if (!refused)
				refused = md, refused_ring = ring;
			/* Only rings have a size the manifest knows; other groups are found on nodes. */
			if (!ringed || d <= ring)
				fits_group = true;
			else if (!unfit)
				unfit = md, unfit_ring = ring;
			if (md->memory_mib < 0)
				memory_known = false;
			else if (!largest || md->memory_mib > largest->memory_mib)
				largest = md;
		}
	if (!matching)
		return 0; /* devices the manifests do not know: placement will say none fit */
	if (!allowed && vendor_refused && !refused) {
		char counts[128];
		xp_manifest_counts_text(vendor_refused, counts, sizeof counts);
		/* Where no allowed count is wider than a card, the limit is the card's (Atlas 300I). */
		int ring = 0, rule = rule_of(vendor_refused_m, vendor_refused, &ring), top = 64;
		while (top > 1 && !(vendor_refused->counts >> (top - 1) & 1))
			top--;
		return cbad(err, j, gi, "devices", "%d devices per replica: the vendor's rule for %s allows %s per "
			    "replica on one %s (counts in its manifest)", d, vendor_refused->name, counts,
			    rule == XP_AFF_CARD && top <= ring ? "card" : "node");
	}
	if (!allowed)
		return cbad(err, j, gi, "devices", "%d devices per replica break the ring:%d rule of %s: 1 to %d "
			    "within one ring, or a multiple of %d", d, refused_ring, refused->name, refused_ring,
			    refused_ring);
	if (g->same_group && !fits_group)
		return cbad(err, j, gi, "same_group", "%d devices do not fit in one affinity group: %s groups "
			    "devices in rings of %d (ring:%d)", d, unfit->name, unfit_ring, unfit_ring);
	if (g->memory_mib > 0 && memory_known && largest && largest->memory_mib < g->memory_mib)
		return cbad(err, j, gi, "memory_mib", "%lld MiB per device, more than any matching model has "
			    "(the most: %lld MiB, %s)", (long long)g->memory_mib, (long long)largest->memory_mib,
			    largest->name);
	return 0;
}

static int check_group(const struct xp_job *j, long gi, const struct xp_manifest *const *ms, size_t n,
		       struct xp_err *err)
{
	const struct xp_task_group *g = &j->groups[gi];
	char sb[VAL_SHOWN];
	if (g->replicas < 1)
		return cbad(err, j, gi, "replicas", "%d replicas: a group needs at least 1", g->replicas);
	if (g->replicas > XP_JOB_MAX_REPLICAS)
		return cbad(err, j, gi, "replicas", "%d replicas, more than the %d allowed", g->replicas,
			    XP_JOB_MAX_REPLICAS);
	if (g->gang_min < 1 || g->gang_min > g->replicas)
		return cbad(err, j, gi, "gang_min", "a gang minimum of %d: it must be from 1 to the %d replicas",
			    g->gang_min, g->replicas);
	if (g->share_pct < 0 || g->share_pct > 100)
		return cbad(err, j, gi, "share_pct", "a share of %d%%: it must be from 1 to 100 (0 for none)",
			    g->share_pct);
	if (g->slice && g->share_pct)
		return cbad(err, j, gi, "share_pct", "a share of %d%% and slice \"%s\" both: a replica gets one "
			    "or the other", g->share_pct, shown(g->slice, sb, sizeof sb));
	if (g->devices < 0)
		return cbad(err, j, gi, "devices", "%d devices: the count cannot be negative", g->devices);
	if (g->devices > 0 && g->slice)
		return cbad(err, j, gi, "devices", "%d devices and slice \"%s\" both: a replica gets whole devices "
			    "or one slice", g->devices, shown(g->slice, sb, sizeof sb));
	if (g->devices > 0 && g->share_pct)
		return cbad(err, j, gi, "devices", "%d devices and a share of %d%% both: a replica gets whole "
			    "devices or a share of one", g->devices, g->share_pct);
	if (g->devices == 0 && !g->slice && !g->share_pct)
		return cbad(err, j, gi, "devices", "0 devices and no slice or share: a replica must ask for one");
	if (g->devices > XP_MAX_DEVICES)
		return cbad(err, j, gi, "devices", "%d devices per replica, more than the %d a node can hold",
			    g->devices, XP_MAX_DEVICES);
	if (g->memory_mib < 0)
		return cbad(err, j, gi, "memory_mib", "%lld MiB: memory cannot be negative", (long long)g->memory_mib);
	if (!(g->min_ecu >= 0 && isfinite(g->min_ecu)))
		return cbad(err, j, gi, "min_ecu", "%g ECU: expected a number >= 0", g->min_ecu);
	if (g->cpus < 0)
		return cbad(err, j, gi, "cpus", "%d CPUs: the count cannot be negative", g->cpus);
	if (g->host_memory_mib < 0)
		return cbad(err, j, gi, "host_memory_mib", "%lld MiB: memory cannot be negative",
			    (long long)g->host_memory_mib);
	if (g->numa < 0 || g->numa >= XP_NUMA_POLICY_COUNT)
		return cbad(err, j, gi, "numa", "policy %d: expected none, prefer or strict", g->numa);
	if (g->network < 0 || g->network >= XP_NET_COUNT)
		return cbad(err, j, gi, "network", "constraint %d: expected any, switch or rack", g->network);
	if (g->validated_layer < -1 || g->validated_layer >= XP_LAYER_COUNT)
		return cbad(err, j, gi, "validated", "layer %d is not a validation layer", g->validated_layer);
	if (g->validated_layer < 0 && g->validated_case)
		return cbad(err, j, gi, "validated", "case \"%s\" without a layer to prove for it",
			    shown(g->validated_case, sb, sizeof sb));
	if (!n)
		return 0;
	if (g->slice)
		return check_slice(j, gi, ms, n, err);
	if (g->devices > 0)
		return check_devices(j, gi, ms, n, err);
	return 0;
}

int xp_job_check(const struct xp_job *j, const struct xp_manifest *const *ms, size_t n, struct xp_err *err)
{
	if (j->kind < 0 || j->kind >= XP_JOB_KIND_COUNT)
		return cbad(err, j, -1, "kind", "kind %d: expected train, infer, data or batch", j->kind);
	if (j->n_groups == 0)
		return cbad(err, j, -1, "groups", "a job needs at least one task group");
	if (j->n_groups > XP_JOB_MAX_GROUPS)
		return cbad(err, j, -1, "groups", "%zu groups, more than the %d allowed", j->n_groups,
			    XP_JOB_MAX_GROUPS);
	for (size_t i = 0; i < j->n_groups; i++) {
		if (check_group(j, (long)i, ms, n, err))
			return -1;
		/* Placement results and reasons name groups: two of one name could not be told apart. */
		for (size_t k = 0; k < i && j->groups[i].name; k++)
			if (j->groups[k].name && strcmp(j->groups[k].name, j->groups[i].name) == 0) {
				char nb[VAL_SHOWN];
				return cbad(err, j, (long)i, "name", "group \"%s\" is named twice (also groups[%zu])",
					    shown(j->groups[i].name, nb, sizeof nb), k);
			}
	}
	return 0;
}
