/* trace.c: workload traces as JSON lines: the strict reader, the writer and the seeded
 * generator (trace.h; the format: xpool(1), TRACE FORMAT). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format.h"
#include "model_json.h"
#include "simgen.h"
#include "trace.h"

/* ---------------------------------------------------------------- reading */

/* What the reader carries from line to line. */
struct rd {
	struct xp_where w;
	struct xp_trace *t;
	int64_t declared;  /* the header's "jobs" */
	size_t cap_jobs;
	char **ids;        /* every job's "id", sorted at the end to find duplicates */
};

/* The keys an object may have; the first unknown one is an error naming it. */
static int keys_known(const struct rd *r, json_t *o, const char *what, const char *const *keys)
{
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v) {
		size_t i = 0;
		while (keys[i] && strcmp(keys[i], k) != 0)
			i++;
		if (!keys[i]) {
			char shown[80];
			snprintf(shown, sizeof shown, "%.64s", k);
			xp_mask_controls(shown);
			return xp_where_errf(&r->w, "%s: unknown field \"%s\"", what, shown);
		}
	}
	return 0;
}

/* An integer field in [min, max]; absent: def when has_def, else an error. */
static int get_int(const struct rd *r, json_t *o, const char *key, int64_t min, int64_t max, bool has_def,
		   int64_t def, int64_t *out)
{
	json_t *v = json_object_get(o, key);
	if (!v) {
		if (!has_def)
			return xp_where_errf(&r->w, "%s: missing", key);
		*out = def;
		return 0;
	}
	if (!json_is_integer(v))
		return xp_where_errf(&r->w, "%s: expected an integer, got %s", key, xp_json_type_name(v));
	json_int_t n = json_integer_value(v);
	if (n < min || n > max)
		return xp_where_errf(&r->w, "%s: %lld is outside %lld to %lld", key, (long long)n, (long long)min,
				     (long long)max);
	*out = n;
	return 0;
}

/* A name field (queue, tenant, class: xp_qname_check); absent or null gives NULL when nullable. */
static int get_name(const struct rd *r, json_t *o, const char *key, bool nullable, char **out)
{
	json_t *v = json_object_get(o, key);
	*out = NULL;
	if (!v || json_is_null(v)) {
		if (nullable)
			return 0;
		return xp_where_errf(&r->w, "%s: missing", key);
	}
	if (!json_is_string(v))
		return xp_where_errf(&r->w, "%s: expected a string, got %s", key, xp_json_type_name(v));
	struct xp_err e = {{0}};
	if (xp_qname_check(json_string_value(v), key, &e) < 0)
		return xp_where_errf(&r->w, "%s", e.msg);
	*out = xp_strdup(json_string_value(v));
	return 0;
}

/* An optional printable string (globs, labels); NULL when absent or null. */
static int get_text(const struct rd *r, json_t *o, const char *key, char **out)
{
	json_t *v = json_object_get(o, key);
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return xp_where_errf(&r->w, "%s: expected a string, got %s", key, xp_json_type_name(v));
	const char *s = json_string_value(v);
	if (strlen(s) > XP_QGLOB_MAX || xp_unsafe_len(s) || strpbrk(s, "\t\n\r"))
		return xp_where_errf(&r->w, "%s: not a printable text of at most %d bytes", key, XP_QGLOB_MAX);
	for (const char *p = s; *p; p++)
		if (xp_unsafe_len(p))
			return xp_where_errf(&r->w, "%s: not a printable text", key);
	*out = xp_strdup(s);
	return 0;
}

/* An amount in units (an integer, a real with at most 3 decimals, null: unlimited when
 * unlimited_ok) into milli-units. */
static int get_amount(const struct rd *r, json_t *o, const char *key, bool unlimited_ok, int64_t def,
		      int64_t *out)
{
	json_t *v = json_object_get(o, key);
	if (!v) {
		*out = def;
		return 0;
	}
	if (json_is_null(v)) {
		if (!unlimited_ok)
			return xp_where_errf(&r->w, "%s: may not be null", key);
		*out = XP_UNLIMITED;
		return 0;
	}
	if (!json_is_number(v))
		return xp_where_errf(&r->w, "%s: expected a number, got %s", key, xp_json_type_name(v));
	double d = json_number_value(v);
	if (!(d >= 0) || d > (double)XP_QUOTA_MAX_UNITS)
		return xp_where_errf(&r->w, "%s: %g is outside 0 to %lld", key, d, (long long)XP_QUOTA_MAX_UNITS);
	double m = d * 1000.0;
	if (fabs(m - nearbyint(m)) > 1e-6 * (m > 1 ? m : 1))
		return xp_where_errf(&r->w, "%s: %g has more than 3 decimals", key, d);
	*out = (int64_t)nearbyint(m);
	return 0;
}

/* Parses an ISO 8601 UTC time "YYYY-MM-DDTHH:MM:SSZ" into epoch seconds. */
static int parse_time(const char *s, int64_t *out)
{
	struct tm tm = {0};
	char z = 0;
	int n = 0;
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%c%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
		   &tm.tm_sec, &z, &n) != 7 ||
	    z != 'Z' || s[n] || strlen(s) != 20 || tm.tm_year < 1970 || tm.tm_year > 9999 || tm.tm_mon < 1 ||
	    tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	time_t t = timegm(&tm);
	if (t == (time_t)-1)
		return -1;
	*out = (int64_t)t;
	return 0;
}

static int read_header(struct rd *r, json_t *o)
{
	static const char *const keys[] = {"xpool_trace", "seed", "jobs", "start", NULL};
	if (!json_is_object(o) || !json_object_get(o, "xpool_trace"))
		return xp_where_errf(&r->w, "xpool_trace: the first line must be the header {\"xpool_trace\":%d,...}",
				     XP_TRACE_VERSION);
	if (keys_known(r, o, "header", keys) < 0)
		return -1;
	int64_t v, seed;
	if (get_int(r, o, "xpool_trace", 1, 1000000, false, 0, &v) < 0)
		return -1;
	if (v != XP_TRACE_VERSION)
		return xp_where_errf(&r->w, "xpool_trace: version %lld is not one this xpool reads (%d)", (long long)v,
				     XP_TRACE_VERSION);
	json_t *s = json_object_get(o, "seed");
	if (s && !json_is_integer(s))
		return xp_where_errf(&r->w, "seed: expected an integer, got %s", xp_json_type_name(s));
	/* jansson's integers are signed 64-bit: a seed above 2^63 is written as its two's complement. */
	seed = s ? (int64_t)json_integer_value(s) : 0;
	r->t->seed = (uint64_t)seed;
	if (get_int(r, o, "jobs", 0, XP_TRACE_MAX_JOBS, false, 0, &r->declared) < 0)
		return -1;
	json_t *st = json_object_get(o, "start");
	if (!st)
		return xp_where_errf(&r->w, "start: missing");
	if (!json_is_string(st) || parse_time(json_string_value(st), &r->t->start) < 0)
		return xp_where_errf(&r->w, "start: expected a time \"YYYY-MM-DDTHH:MM:SSZ\"");
	return 0;
}

static int read_class(struct rd *r, json_t *o)
{
	static const char *const keys[] = {"name", "vendor", "model", "label", "builtin", NULL};
	if (!json_is_object(o))
		return xp_where_errf(&r->w, "class: expected an object, got %s", xp_json_type_name(o));
	if (keys_known(r, o, "class", keys) < 0)
		return -1;
	struct xp_rclass c = {0};
	struct xp_err e = {{0}};
	json_t *b = json_object_get(o, "builtin");
	if (b && !json_is_false(b))
		return xp_where_errf(&r->w, "class.builtin: only cpu and mem are built in (false or absent here)");
	if (get_name(r, o, "name", false, &c.name) < 0 || get_text(r, o, "vendor", &c.vendor) < 0 ||
	    get_text(r, o, "model", &c.model) < 0 || get_text(r, o, "label", &c.label) < 0)
		goto fail;
	if (xp_qset_class(&r->t->qs, c.name)) {
		xp_where_errf(&r->w, "class.name: '%s' is defined twice (cpu and mem are built in)", c.name);
		goto fail;
	}
	if (!c.vendor && !c.model && !c.label) {
		xp_where_errf(&r->w, "class: needs a vendor or model glob or a label");
		goto fail;
	}
	if (c.label && (c.vendor || c.model)) {
		xp_where_errf(&r->w, "class: a label or globs, not both");
		goto fail;
	}
	if ((c.vendor && xp_qglob_check(c.vendor, "class.vendor", &e) < 0) ||
	    (c.model && xp_qglob_check(c.model, "class.model", &e) < 0) || (c.label && xp_qlabel_check(c.label, &e) < 0)) {
		xp_where_errf(&r->w, "%s", e.msg);
		goto fail;
	}
	xp_grow(&r->t->qs.classes, sizeof *r->t->qs.classes, r->t->qs.n_classes + 1, &(size_t){r->t->qs.n_classes});
	r->t->qs.classes[r->t->qs.n_classes++] = c;
	return 0;
fail:
	xp_rclass_clear(&c);
	return -1;
}

static int read_quota(struct rd *r, json_t *o, struct xp_quota *u)
{
	static const char *const keys[] = {"class", "resource", "used", "guaranteed", "deserved", "max",
					   "borrowing_limit", "lending_limit", NULL};
	if (!json_is_object(o))
		return xp_where_errf(&r->w, "queue.quotas[]: expected an object, got %s", xp_json_type_name(o));
	if (keys_known(r, o, "queue.quotas[]", keys) < 0)
		return -1;
	if (get_name(r, o, "class", false, &u->rclass) < 0)
		return -1;
	json_t *res = json_object_get(o, "resource");
	if (!res || !json_is_string(res) || (u->res = xp_res_parse(json_string_value(res))) < 0)
		return xp_where_errf(&r->w, "queue.quotas[].resource: expected one of devices, ecu, cpus, memory");
	if (get_amount(r, o, "guaranteed", false, 0, &u->guaranteed) < 0 ||
	    get_amount(r, o, "deserved", false, 0, &u->deserved) < 0 ||
	    get_amount(r, o, "max", true, XP_UNLIMITED, &u->max) < 0 ||
	    get_amount(r, o, "borrowing_limit", true, XP_UNLIMITED, &u->borrowing_limit) < 0 ||
	    get_amount(r, o, "lending_limit", true, XP_UNLIMITED, &u->lending_limit) < 0)
		return -1;
	struct xp_err e = {{0}};
	if (xp_quota_check(u, xp_qset_class(&r->t->qs, u->rclass), &e) < 0)
		return xp_where_errf(&r->w, "queue.quotas[]: %s (class lines come before the queues that use them)",
				     e.msg);
	return 0;
}

/* An enum field by its names; absent: def. */
static int get_enum(const struct rd *r, json_t *o, const char *key, int (*parse)(const char *), int def, int *out)
{
	json_t *v = json_object_get(o, key);
	if (!v) {
		*out = def;
		return 0;
	}
	if (!json_is_string(v) || (*out = parse(json_string_value(v))) < 0)
		return xp_where_errf(&r->w, "%s: not a known value", key);
	return 0;
}

static int read_queue(struct rd *r, json_t *o)
{
	static const char *const keys[] = {"name", "parent", "tenants", "weight", "priority", "ordering", "state",
					   "reclaimable", "within", "reclaim", "quotas", NULL};
	if (!json_is_object(o))
		return xp_where_errf(&r->w, "queue: expected an object, got %s", xp_json_type_name(o));
	if (r->t->n_jobs)
		return xp_where_errf(&r->w, "queue: queue lines come before the first job line");
	if (keys_known(r, o, "queue", keys) < 0)
		return -1;
	struct xp_queue q = {.weight = 1, .reclaimable = true};
	int64_t prio;
	if (get_name(r, o, "name", false, &q.name) < 0 || get_name(r, o, "parent", true, &q.parent) < 0 ||
	    get_int(r, o, "priority", -1000000, 1000000, true, 0, &prio) < 0 ||
	    get_enum(r, o, "ordering", xp_qorder_parse, XP_QO_BEST_EFFORT, &q.order) < 0 ||
	    get_enum(r, o, "state", xp_qstate_parse, XP_QS_OPEN, &q.state) < 0 ||
	    get_enum(r, o, "within", xp_qpolicy_parse, XP_QP_NEVER, &q.within) < 0 ||
	    get_enum(r, o, "reclaim", xp_qpolicy_parse, XP_QP_NEVER, &q.reclaim) < 0)
		goto fail;
	q.priority = (int)prio;
	json_t *v = json_object_get(o, "weight");
	if (v && (!json_is_number(v) || !(json_number_value(v) > 0) || json_number_value(v) > 1e6)) {
		xp_where_errf(&r->w, "queue.weight: expected a number above 0 and at most 1000000");
		goto fail;
	}
	if (v)
		q.weight = json_number_value(v);
	if ((v = json_object_get(o, "reclaimable"))) {
		if (!json_is_boolean(v)) {
			xp_where_errf(&r->w, "queue.reclaimable: expected true or false");
			goto fail;
		}
		q.reclaimable = json_is_true(v);
	}
	if ((v = json_object_get(o, "tenants")) && !json_is_null(v)) {
		if (!json_is_array(v) || json_array_size(v) > 1000) {
			xp_where_errf(&r->w, "queue.tenants: expected an array of at most 1000 names");
			goto fail;
		}
		q.tenants = xp_calloc(json_array_size(v) + 1, sizeof *q.tenants);
		for (size_t i = 0; i < json_array_size(v); i++) {
			json_t *n = json_array_get(v, i);
			struct xp_err e = {{0}};
			if (!json_is_string(n) || xp_qname_check(json_string_value(n), "tenant", &e) < 0) {
				xp_where_errf(&r->w, "queue.tenants[%zu]: %s", i, json_is_string(n) ? e.msg : "expected a name");
				goto fail;
			}
			q.tenants[q.n_tenants++] = xp_strdup(json_string_value(n));
		}
	}
	if ((v = json_object_get(o, "quotas")) && !json_is_null(v)) {
		if (!json_is_array(v) || json_array_size(v) > 1000) {
			xp_where_errf(&r->w, "queue.quotas: expected an array of at most 1000 quotas");
			goto fail;
		}
		q.quotas = xp_calloc(json_array_size(v) + 1, sizeof *q.quotas);
		for (size_t i = 0; i < json_array_size(v); i++) {
			struct xp_quota *u = &q.quotas[q.n_quotas++];
			if (read_quota(r, json_array_get(v, i), u) < 0)
				goto fail;
			for (size_t k = 0; k + 1 < q.n_quotas; k++)
				if (strcmp(q.quotas[k].rclass, u->rclass) == 0 && q.quotas[k].res == u->res) {
					xp_where_errf(&r->w, "queue.quotas[%zu]: %s:%s given twice", i, u->rclass,
						      xp_res_name(u->res));
					goto fail;
				}
		}
	}
	struct xp_err e = {{0}};
	if (xp_qset_queue(&r->t->qs, q.name)) {
		xp_where_errf(&r->w, "queue.name: '%s' is defined twice", q.name);
		goto fail;
	}
	if (q.parent && xp_qset_parent_check(&r->t->qs, q.name, q.parent, &e) < 0) {
		xp_where_errf(&r->w, "queue.parent: %s (a parent's line comes first)", e.msg);
		goto fail;
	}
	xp_grow(&r->t->qs.queues, sizeof *r->t->qs.queues, r->t->qs.n_queues + 1, &(size_t){r->t->qs.n_queues});
	r->t->qs.queues[r->t->qs.n_queues++] = q;
	r->t->has_queues = true;
	return 0;
fail:
	xp_queue_clear(&q);
	return -1;
}

static int read_job(struct rd *r, json_t *o)
{
	static const char *const keys[] = {"id", "submit", "queue", "tenant", "priority", "est", "dur", "spec", NULL};
	if (keys_known(r, o, "job", keys) < 0)
		return -1;
	if ((int64_t)r->t->n_jobs >= r->declared)
		return xp_where_errf(&r->w, "job: more job lines than the header's \"jobs\": %lld", (long long)r->declared);
	struct xp_qjob j = {.start = -1, .end = -1, .eta = -1, .state = XP_JS_PENDING, .alloc = {.commit = -1}};
	json_t *id = json_object_get(o, "id");
	if (!id || !json_is_string(id) || !json_string_length(id) || json_string_length(id) > XP_QNAME_MAX) {
		xp_where_errf(&r->w, "id: expected a string of 1 to %d bytes", XP_QNAME_MAX);
		return -1;
	}
	for (const char *p = json_string_value(id); *p; p++)
		if (xp_unsafe_len(p) || *p == ' ')
			return xp_where_errf(&r->w, "id: not a printable word");
	int64_t prio;
	if (get_int(r, o, "submit", 0, XP_TRACE_MAX_SECONDS, false, 0, &j.submit) < 0 ||
	    get_name(r, o, "queue", false, &j.queue) < 0 || get_name(r, o, "tenant", true, &j.tenant) < 0 ||
	    get_int(r, o, "priority", -1000000, 1000000, true, 0, &prio) < 0 ||
	    get_int(r, o, "est", 1, XP_TRACE_MAX_SECONDS, false, 0, &j.est_s) < 0 ||
	    get_int(r, o, "dur", 0, XP_TRACE_MAX_SECONDS, false, 0, &j.actual_s) < 0)
		goto fail;
	j.priority = (int)prio;
	json_t *spec = json_object_get(o, "spec");
	if (!spec) {
		xp_where_errf(&r->w, "spec: missing");
		goto fail;
	}
	if (!json_is_object(spec)) {
		xp_where_errf(&r->w, "spec: expected an object, got %s", xp_json_type_name(spec));
		goto fail;
	}
	/* The spec goes through the one job parser (its errors name the JSON path). */
	char *text = json_dumps(spec, JSON_COMPACT);
	struct xp_err e = {{0}};
	j.spec = text ? xp_job_parse(text, strlen(text), "spec", &e) : NULL;
	free(text);
	if (!j.spec) {
		xp_where_errf(&r->w, "%s", e.msg);
		goto fail;
	}
	if (xp_job_check(j.spec, NULL, 0, &e) < 0) {
		xp_where_errf(&r->w, "spec: %s", e.msg);
		goto fail;
	}
	j.name = xp_strdup(json_string_value(id));
	j.id = (int64_t)r->t->n_jobs + 1;
	if (r->t->n_jobs == r->cap_jobs) {
		xp_grow(&r->t->jobs, sizeof *r->t->jobs, r->t->n_jobs, &r->cap_jobs);
		r->ids = xp_realloc(r->ids, r->cap_jobs * sizeof *r->ids);
	}
	r->ids[r->t->n_jobs] = j.name;
	r->t->jobs[r->t->n_jobs++] = j;
	return 0;
fail:
	xp_qjob_clear(&j);
	return -1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One line of at most XP_TRACE_MAX_LINE bytes into *buf; 0 at the end, -1 when too long. */
static ssize_t read_line(FILE *f, char **buf, size_t *cap, bool *too_long)
{
	size_t n = 0;
	int ch;
	*too_long = false;
	while ((ch = getc(f)) != EOF) {
		if (n >= XP_TRACE_MAX_LINE) {
			*too_long = true;
			return -1;
		}
		if (n + 2 > *cap) {
			*cap = *cap ? *cap * 2 : 4096;
			if (*cap > XP_TRACE_MAX_LINE + 2)
				*cap = XP_TRACE_MAX_LINE + 2;
			*buf = xp_realloc(*buf, *cap);
		}
		if (ch == '\n') {
			(*buf)[n] = 0;
			return (ssize_t)n + 1;
		}
		(*buf)[n++] = (char)ch;
	}
	if (!n)
		return 0;
	(*buf)[n] = 0;
	return (ssize_t)n + 1;
}

int xp_trace_read_file(FILE *f, const char *name, struct xp_trace *t, struct xp_err *err)
{
	memset(t, 0, sizeof *t);
	/* cpu and mem first, as the store lists them. */
	t->qs.classes = xp_calloc(2, sizeof *t->qs.classes);
	t->qs.classes[0] = (struct xp_rclass){.name = xp_strdup("cpu"), .builtin = true};
	t->qs.classes[1] = (struct xp_rclass){.name = xp_strdup("mem"), .builtin = true};
	t->qs.n_classes = 2;
	struct rd r = {.w = {name, 0, err}, .t = t, .declared = -1};
	char *buf = NULL;
	size_t cap = 0;
	int rc = 0;
	for (;;) {
		bool too_long;
		ssize_t n = read_line(f, &buf, &cap, &too_long);
		r.w.line++;
		if (n < 0) {
			rc = xp_where_errf(&r.w, "line longer than %d bytes", XP_TRACE_MAX_LINE);
			break;
		}
		if (n == 0) {
			r.w.line--;
			if (ferror(f))
				rc = xp_where_errf(&r.w, "read error: %s", strerror(errno));
			break;
		}
		if (strlen(buf) != (size_t)n - 1) {
			rc = xp_where_errf(&r.w, "a NUL byte in the line");
			break;
		}
		json_error_t je;
		json_t *o = json_loadb(buf, (size_t)n - 1, JSON_REJECT_DUPLICATES, &je);
		if (!o) {
			rc = xp_where_errf(&r.w, "column %d: %s", je.column, je.text);
			break;
		}
		if (r.w.line == 1)
			rc = read_header(&r, o);
		else if (!json_is_object(o))
			rc = xp_where_errf(&r.w, "expected an object, got %s", xp_json_type_name(o));
		else if (json_object_get(o, "class") && json_object_size(o) == 1)
			rc = read_class(&r, json_object_get(o, "class"));
		else if (json_object_get(o, "queue") && json_object_size(o) == 1)
			rc = read_queue(&r, json_object_get(o, "queue"));
		else if (json_object_get(o, "xpool_trace"))
			rc = xp_where_errf(&r.w, "xpool_trace: a second header");
		else
			rc = read_job(&r, o);
		json_decref(o);
		if (rc < 0)
			break;
	}
	free(buf);
	if (!rc && r.w.line == 0)
		rc = xp_where_errf(&r.w, "empty: no header line");
	if (!rc && (int64_t)t->n_jobs != r.declared)
		rc = xp_errf(err, "%s:1: the header says %lld jobs, the file has %zu (cut short?)", name,
			     (long long)r.declared, t->n_jobs);
	if (!rc && t->has_queues)
		for (size_t i = 0; i < t->n_jobs; i++)
			if (!xp_qset_queue(&t->qs, t->jobs[i].queue)) {
				rc = xp_errf(err, "%s: job %s: queue: '%s' is not one of the trace's queues", name,
					     t->jobs[i].name, t->jobs[i].queue);
				break;
			}
	if (!rc && t->n_jobs > 1) {
		qsort(r.ids, t->n_jobs, sizeof *r.ids, cmp_str);
		for (size_t i = 1; i < t->n_jobs; i++)
			if (strcmp(r.ids[i - 1], r.ids[i]) == 0) {
				rc = xp_errf(err, "%s: id: '%s' is used by two jobs", name, r.ids[i]);
				break;
			}
	}
	free(r.ids);
	if (rc < 0)
		xp_trace_clear(t);
	return rc;
}

int xp_trace_read(const char *path, struct xp_trace *t, struct xp_err *err)
{
	bool std = strcmp(path, "-") == 0;
	FILE *f = std ? stdin : fopen(path, "r");
	if (!f) {
		memset(t, 0, sizeof *t);
		return xp_errf(err, "%s: %s", path, strerror(errno));
	}
	int rc = xp_trace_read_file(f, path, t, err);
	if (!std)
		fclose(f);
	return rc;
}

void xp_trace_clear(struct xp_trace *t)
{
	xp_qset_clear(&t->qs);
	for (size_t i = 0; i < t->n_jobs; i++)
		xp_qjob_clear(&t->jobs[i]);
	free(t->jobs);
	memset(t, 0, sizeof *t);
}

/* ---------------------------------------------------------------- writing */

static int put(FILE *f, json_t *o)
{
	int rc = json_dumpf(o, f, JSON_COMPACT | JSON_PRESERVE_ORDER) < 0 || fputc('\n', f) == EOF ? -1 : 0;
	json_decref(o);
	return rc;
}

int xp_trace_write(FILE *f, const struct xp_trace *t, struct xp_err *err)
{
	char start[32];
	time_t st = (time_t)t->start;
	struct tm tm;
	gmtime_r(&st, &tm);
	strftime(start, sizeof start, "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_t *h = json_object();
	json_object_set_new(h, "xpool_trace", json_integer(XP_TRACE_VERSION));
	json_object_set_new(h, "seed", json_integer((json_int_t)t->seed));
	json_object_set_new(h, "jobs", json_integer((json_int_t)t->n_jobs));
	json_object_set_new(h, "start", json_string(start));
	int rc = put(f, h);
	for (size_t i = 0; !rc && i < t->qs.n_classes; i++) {
		if (t->qs.classes[i].builtin)
			continue;
		json_t *c = xp_rclass_json(&t->qs.classes[i]);
		json_object_del(c, "builtin");
		json_t *o = json_object();
		json_object_set_new(o, "class", c);
		rc = put(f, o);
	}
	for (size_t i = 0; !rc && t->has_queues && i < t->qs.n_queues; i++) {
		json_t *q = xp_queue_json(&t->qs.queues[i]);
		json_t *a = json_object_get(q, "quotas");
		for (size_t k = 0; k < json_array_size(a); k++)
			json_object_del(json_array_get(a, k), "used");
		json_t *o = json_object();
		json_object_set_new(o, "queue", q);
		rc = put(f, o);
	}
	for (size_t i = 0; !rc && i < t->n_jobs; i++) {
		const struct xp_qjob *j = &t->jobs[i];
		json_t *o = json_object();
		char idb[32];
		snprintf(idb, sizeof idb, "j%lld", (long long)j->id);
		json_object_set_new(o, "id", json_string(j->name ? j->name : idb));
		json_object_set_new(o, "submit", json_integer(j->submit));
		json_object_set_new(o, "queue", xp_json_str(j->queue));
		json_object_set_new(o, "tenant", j->tenant ? xp_json_str(j->tenant) : json_null());
		json_object_set_new(o, "priority", json_integer(j->priority));
		json_object_set_new(o, "est", json_integer(j->est_s));
		json_object_set_new(o, "dur", json_integer(j->actual_s < 0 ? j->est_s : j->actual_s));
		json_object_set_new(o, "spec", xp_job_to_json(j->spec));
		rc = put(f, o);
	}
	if (rc < 0 || fflush(f) != 0)
		return xp_errf(err, "write: %s", strerror(errno ? errno : EIO));
	return 0;
}

/* ---------------------------------------------------------------- generating */

int xp_trace_mix_parse(const char *spec, int mix[XP_JOB_KIND_COUNT], struct xp_err *err)
{
	memset(mix, 0, sizeof(int) * XP_JOB_KIND_COUNT);
	bool seen[XP_JOB_KIND_COUNT] = {0};
	int sum = 0;
	const char *p = spec;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char item[64];
		if (n == 0 || n >= sizeof item)
			return xp_errf(err, "--mix: '%.*s' is not KIND:PERCENT", (int)(n > 40 ? 40 : n), p);
		memcpy(item, p, n);
		item[n] = 0;
		char *colon = strchr(item, ':');
		char *end = NULL;
		long pct = colon ? strtol(colon + 1, &end, 10) : -1;
		if (!colon || !colon[1] || *end || pct < 0 || pct > 100)
			return xp_errf(err, "--mix: '%s' is not KIND:PERCENT (a whole percent 0-100)", xp_mask_controls(item));
		*colon = 0;
		int k = xp_job_kind_parse(item);
		if (k < 0)
			return xp_errf(err, "--mix: unknown job kind '%s' (train, infer, data, batch)", xp_mask_controls(item));
		if (seen[k])
			return xp_errf(err, "--mix: kind %s given twice", item);
		seen[k] = true;
		mix[k] = (int)pct;
		sum += (int)pct;
		p += n;
		if (*p == ',')
			p++;
	}
	if (sum != 100)
		return xp_errf(err, "--mix: the percentages add up to %d, not 100", sum);
	return 0;
}

int xp_trace_queues_parse(const char *spec, struct xp_trace_gen_opts *o, struct xp_err *err)
{
	const char *p = spec;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char item[128];
		if (n == 0 || n >= sizeof item)
			return xp_errf(err, "--queues: an empty or too long entry");
		if (o->n_queues == XP_TRACE_MAX_QUEUES)
			return xp_errf(err, "--queues: more than %d queues", XP_TRACE_MAX_QUEUES);
		memcpy(item, p, n);
		item[n] = 0;
		double w = 1;
		char *colon = strchr(item, ':');
		if (colon) {
			char *end = NULL;
			*colon = 0;
			w = strtod(colon + 1, &end);
			if (!colon[1] || *end || !(w > 0) || w > 1e6)
				return xp_errf(err, "--queues: '%s': the weight is not a number above 0", xp_mask_controls(item));
		}
		if (xp_qname_check(item, "--queues: queue name", err) < 0)
			return -1;
		for (size_t i = 0; i < o->n_queues; i++)
			if (strcmp(o->queues[i], item) == 0)
				return xp_errf(err, "--queues: '%s' given twice", item);
		o->queues = xp_realloc(o->queues, (o->n_queues + 1) * sizeof *o->queues);
		o->weights = xp_realloc(o->weights, (o->n_queues + 1) * sizeof *o->weights);
		o->queues[o->n_queues] = xp_strdup(item);
		o->weights[o->n_queues++] = w;
		p += n;
		if (*p == ',')
			p++;
	}
	if (!o->n_queues)
		return xp_errf(err, "--queues: no queue named");
	return 0;
}

void xp_trace_gen_opts_clear(struct xp_trace_gen_opts *o)
{
	xp_strv_free(o->queues, o->n_queues);
	free(o->weights);
	o->queues = NULL;
	o->weights = NULL;
	o->n_queues = 0;
}

/* One device model of the cluster: how many devices, the most on one node, how many nodes
 * have 8, and its manifest entry when there is one. */
struct gmodel {
	const char *vendor, *model;
	size_t devices, nodes8;
	int per_node;
	const struct xp_mmodel *md;
};

static const struct xp_mmodel *find_mmodel(const struct xp_manifest *const *ms, size_t n, const char *model)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; ms[i] && k < ms[i]->n_models; k++)
			if (strcmp(ms[i]->models[k].name, model) == 0)
				return &ms[i]->models[k];
	return NULL;
}

/* A standard normal draw (Box-Muller, one value of the pair: simpler, and still a pure
 * function of the stream). */
static double normal(struct xp_rng *g)
{
	double u = xp_rng_unit(g), v = xp_rng_unit(g);
	return sqrt(-2.0 * log(1.0 - u)) * cos(2.0 * M_PI * v);
}

/* An exponential draw of mean m. */
static double expo(struct xp_rng *g, double m)
{
	return -m * log(1.0 - xp_rng_unit(g));
}

/* A whole-device count from {1,2,4,8} the model allows on one node, at most per_node. */
static int pick_size(struct xp_rng *g, const struct gmodel *m)
{
	static const int sizes[] = {1, 2, 4, 8};
	static const int weight[] = {45, 20, 20, 15};
	int ok[4], n = 0, wsum = 0;
	for (int i = 0; i < 4; i++)
		if (sizes[i] <= m->per_node && (!m->md || xp_manifest_count_ok(m->md, sizes[i]))) {
			ok[n++] = i;
			wsum += weight[i];
		}
	if (!n)
		return 1;
	int x = (int)xp_rng_below(g, (uint64_t)wsum);
	for (int i = 0; i < n; i++) {
		if (x < weight[ok[i]])
			return sizes[ok[i]];
		x -= weight[ok[i]];
	}
	return sizes[ok[n - 1]];
}

static int cmp_gmodel(const void *a, const void *b)
{
	const struct gmodel *x = a, *y = b;
	return strcmp(x->model, y->model);
}

int xp_trace_gen(const struct xp_cluster *c, const struct xp_manifest *const *ms, size_t n_ms,
		 const struct xp_trace_gen_opts *o, struct xp_trace *t, struct xp_err *err)
{
	memset(t, 0, sizeof *t);
	if (o->jobs < 1 || o->jobs > XP_TRACE_MAX_JOBS)
		return xp_errf(err, "--jobs: %zu is outside 1 to %d", o->jobs, XP_TRACE_MAX_JOBS);
	/* The models of the devices jobs could have (free, healthy, on a node that is up), sorted
	 * by name so that the cluster's node order does not matter: a snapshot's busy devices
	 * stay busy for the whole run, so a job sized for them would wait forever. */
	struct gmodel *gm = NULL;
	size_t n_gm = 0, cap = 0, total = 0;
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct xp_node *nd = c->nodes[i];
		if (nd->state != XP_NODE_UP && nd->state != XP_NODE_DEGRADED)
			continue;
		int *per = xp_calloc(nd->n_devices + 1, sizeof *per);
		size_t *which = xp_calloc(nd->n_devices + 1, sizeof *which);
		size_t n_which = 0;
		for (size_t d = 0; d < nd->n_devices; d++) {
			const struct xp_device *dv = &nd->devices[d];
			bool busy = dv->health == XP_HEALTH_FAIL;
			for (size_t a = 0; a < dv->n_allocs && !busy; a++)
				busy = dv->allocs[a].owner != NULL;
			if (busy || !dv->model || dv->model[0] == '[')
				continue; /* an unknown model is no pattern a job could name */
			size_t k = 0;
			while (k < n_gm && strcmp(gm[k].model, dv->model) != 0)
				k++;
			if (k == n_gm) {
				xp_grow(&gm, sizeof *gm, n_gm, &cap);
				gm[n_gm++] = (struct gmodel){.vendor = dv->vendor, .model = dv->model,
							     .md = find_mmodel(ms, n_ms, dv->model)};
			}
			gm[k].devices++;
			total++;
			size_t w = 0;
			while (w < n_which && which[w] != k)
				w++;
			if (w == n_which)
				which[n_which++] = k;
			per[w]++;
		}
		for (size_t w = 0; w < n_which; w++) {
			struct gmodel *m = &gm[which[w]];
			if (per[w] > m->per_node)
				m->per_node = per[w];
			if (per[w] == 8)
				m->nodes8++;
		}
		free(per);
		free(which);
	}
	if (!total) {
		free(gm);
		return xp_errf(err, "the cluster has no free accelerator of a known model on a node that is up to make "
				    "jobs for");
	}
	qsort(gm, n_gm, sizeof *gm, cmp_gmodel);

	struct xp_rng g;
	xp_rng_seed(&g, o->seed);
	int mix[XP_JOB_KIND_COUNT];
	bool has_mix = false;
	for (int k = 0; k < XP_JOB_KIND_COUNT; k++)
		has_mix = has_mix || o->mix[k];
	if (has_mix)
		memcpy(mix, o->mix, sizeof mix);
	else
		xp_trace_mix_parse(XP_TRACE_DEFAULT_MIX, mix, err);
	static const double median_s[XP_JOB_KIND_COUNT] = {[XP_JOB_TRAIN] = 7200, [XP_JOB_INFER] = 1800,
							   [XP_JOB_DATA] = 1200, [XP_JOB_BATCH] = 600};
	size_t tenants = o->tenants ? o->tenants : 4;
	double wsum = 0;
	for (size_t q = 0; q < o->n_queues; q++)
		wsum += o->weights[q];

	/* Classes and queues: one queue line per queue, weight only. */
	t->qs.classes = xp_calloc(2, sizeof *t->qs.classes);
	t->qs.classes[0] = (struct xp_rclass){.name = xp_strdup("cpu"), .builtin = true};
	t->qs.classes[1] = (struct xp_rclass){.name = xp_strdup("mem"), .builtin = true};
	t->qs.n_classes = 2;
	size_t nq = o->n_queues ? o->n_queues : 1;
	t->qs.queues = xp_calloc(nq, sizeof *t->qs.queues);
	t->qs.n_queues = nq;
	for (size_t q = 0; q < nq; q++)
		t->qs.queues[q] = (struct xp_queue){.name = xp_strdup(o->n_queues ? o->queues[q] : "default"),
						     .weight = o->n_queues ? o->weights[q] : 1, .reclaimable = true};
	t->has_queues = true;
	t->seed = o->seed;
	t->start = o->start ? o->start : 1796083200; /* 2026-12-01T00:00:00Z */

	/* The jobs first (shapes and durations), arrivals after: their rate depends on the
	 * device-time the jobs offer. */
	t->jobs = xp_calloc(o->jobs, sizeof *t->jobs);
	double offered = 0;
	for (size_t i = 0; i < o->jobs; i++) {
		struct xp_qjob *j = &t->jobs[i];
		int x = (int)xp_rng_below(&g, 100), kind = 0;
		while (kind < XP_JOB_KIND_COUNT - 1 && x >= mix[kind])
			x -= mix[kind++];
		while (!mix[kind] && kind > 0)
			kind--;
		/* A model weighted by its devices. */
		uint64_t y = xp_rng_below(&g, total);
		size_t mi = 0;
		while (y >= gm[mi].devices)
			y -= gm[mi++].devices;
		const struct gmodel *m = &gm[mi];
		struct xp_job *s = xp_calloc(1, sizeof *s);
		s->kind = kind;
		s->groups = xp_calloc(1, sizeof *s->groups);
		s->n_groups = 1;
		s->form = XP_JOB_FORM_FULL;
		struct xp_task_group *gr = &s->groups[0];
		gr->replicas = 1;
		gr->model = xp_strdup(m->model);
		gr->validated_layer = -1;
		/* Not homogeneous: drivers roll out rack by rack, and a gang over racks would never fit. */
		gr->homogeneous = false;
		double u = xp_rng_unit(&g);
		int devices;
		if (kind == XP_JOB_TRAIN && u < 0.20 && m->nodes8 >= 2 && m->per_node == 8) {
			/* A gang of whole nodes: 2..64 replicas (powers of two), at most half the model's nodes. */
			size_t most = m->nodes8 / 2 < 64 ? m->nodes8 / 2 : 64;
			int r = 2 << xp_rng_below(&g, 6);
			while ((size_t)r > most && r > 2)
				r /= 2;
			gr->replicas = r;
			gr->devices = 8;
			devices = r * 8;
		} else if ((kind == XP_JOB_INFER || kind == XP_JOB_BATCH) && u < 0.10 && m->md && m->md->n_templates) {
			const struct xp_mtemplate *tp = &m->md->templates[xp_rng_below(&g, m->md->n_templates)];
			gr->slice = xp_strdup(tp->name);
			devices = 1; /* counted whole for the load: a slice keeps others off it */
		} else {
			gr->devices = pick_size(&g, m);
			devices = gr->devices;
		}
		gr->gang_min = gr->replicas;
		double dur = median_s[kind] * exp(1.5 * normal(&g));
		if (dur < 60)
			dur = 60;
		if (dur > 7 * 86400)
			dur = 7 * 86400;
		j->actual_s = (int64_t)ceil(dur);
		int64_t est = (int64_t)ceil((double)j->actual_s * (1.0 + 2.0 * xp_rng_unit(&g)));
		j->est_s = (est + 299) / 300 * 300;
		offered += (double)devices * (double)j->actual_s;
		double qx = xp_rng_unit(&g) * wsum;
		size_t q = 0;
		while (q + 1 < o->n_queues && qx >= o->weights[q])
			qx -= o->weights[q++];
		j->queue = xp_strdup(t->qs.queues[q].name);
		j->tenant = xp_asprintf("tenant-%zu", (size_t)xp_rng_below(&g, tenants) + 1);
		j->priority = xp_rng_below(&g, 10) == 0 ? 10 : 0;
		j->id = (int64_t)i + 1;
		j->name = xp_asprintf("j%zu", i + 1);
		j->spec = s;
		j->start = j->end = j->eta = -1;
		j->state = XP_JS_PENDING;
		j->alloc.commit = -1;
	}
	t->n_jobs = o->jobs;
	free(gm);

	/* Arrivals: a two-state MMPP. Normal periods last 50 minutes on average, bursts 10 at 8x
	 * the rate; the base rate r makes n jobs arrive over the span T in which they offer
	 * load x the cluster's device-time: T = offered / (load x devices), and the mean rate
	 * over a cycle is r (50 + 8 x 10) / 60. */
	double load = o->load > 0 ? o->load : 0.85;
	double span = offered / (load * (double)total);
	double mean_rate = (double)o->jobs / (span > 1 ? span : 1);
	double r = mean_rate * 60.0 / (50.0 + 80.0);
	double now = 0, switch_at = expo(&g, 3000);
	bool burst = false;
	for (size_t i = 0; i < o->jobs; i++) {
		for (;;) {
			double rate = burst ? 8 * r : r;
			double next = now + expo(&g, 1.0 / rate);
			if (next < switch_at) {
				now = next;
				break;
			}
			/* Memoryless: the draw past a switch starts again at the switch. */
			now = switch_at;
			burst = !burst;
			switch_at = now + expo(&g, burst ? 600 : 3000);
		}
		t->jobs[i].submit = (int64_t)now;
	}
	return 0;
}
