/* slurm_json.c: Slurm's JSON answers (scontrol --json, sinfo --json, squeue --json) turned
 * into the text records slurm.c and slurm_jobs.c read. */
#include "slurm_json.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format.h"
#include "run.h"
#include "slurm.h"

/* A growing text: the records being written. */
struct buf {
	char *s;
	size_t len, cap;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = xp_realloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void putf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct buf *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof tmp) {
		put(b, tmp, (size_t)n);
		return;
	}
	/* A long node list or task string: written whole, never cut. */
	char *big = xp_malloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	put(b, big, (size_t)n);
	free(big);
}

/* Refuses nesting deeper than XP_SLURM_JSON_MAX_DEPTH before jansson builds it (its own limit
 * is 2048: a hostile answer could still make a deep, slow tree). */
static int depth_check(const char *s, size_t len, const char *what, struct xp_err *err)
{
	int depth = 0;
	bool in_str = false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
		} else if (c == '"') {
			in_str = true;
		} else if (c == '[' || c == '{') {
			if (++depth > XP_SLURM_JSON_MAX_DEPTH)
				return xp_errf(err, "%s: nested deeper than %d", what, XP_SLURM_JSON_MAX_DEPTH);
		} else if (c == ']' || c == '}') {
			depth--;
		}
	}
	return 0;
}

/* The answer as a tree: an object, checked for size and depth; NULL with err set. */
static json_t *load(const char *json, size_t len, const char *what, struct xp_err *err)
{
	if (len > XP_SLURM_MAX_OUTPUT)
		return xp_errf(err, "%s: more than %zu bytes", what, (size_t)XP_SLURM_MAX_OUTPUT), NULL;
	if (depth_check(json, len, what, err) < 0)
		return NULL;
	json_error_t je;
	/* No JSON_ALLOW_NUL: a "\u0000" in a string is refused, as a NUL byte in the records is. */
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return xp_errf(err, "%s: not JSON (line %d: %s)", what, je.line, je.text), NULL;
	if (!json_is_object(root)) {
		json_decref(root);
		return xp_errf(err, "%s: the answer is not a JSON object", what), NULL;
	}
	return root;
}

/* Slurm's own "errors" list (what it says when it could not answer): -1 with err quoting the
 * first, 0 when there is none. */
static int slurm_errors(json_t *root, const char *what, struct xp_err *err)
{
	json_t *e = json_object_get(root, "errors");
	if (!e || json_is_null(e) || (json_is_array(e) && json_array_size(e) == 0))
		return 0;
	if (!json_is_array(e))
		return xp_errf(err, "%s: field errors: not an array", what);
	json_t *first = json_array_get(e, 0);
	const char *msg = NULL;
	if (json_is_object(first)) {
		msg = json_string_value(json_object_get(first, "error"));
		if (!msg)
			msg = json_string_value(json_object_get(first, "description"));
	}
	char *m = xp_strndup(msg ? msg : "an error", 200);
	xp_mask_controls(m);
	xp_errf(err, "%s: Slurm says: %s", what, m);
	free(m);
	return -1;
}

/* Where a value is read: the command, "node" or "job", and the object's index in its list. */
struct at {
	const char *what, *kind;
	size_t index;
	struct xp_err *err;
};

static int bad(const struct at *a, const char *field, const char *why)
{
	return xp_errf(a->err, "%s: %s %zu: field %s: %s", a->what, a->kind, a->index, field, why);
}

/* What a number field held: a number, none (null: 22.05's "not set" or "unlimited" by field),
 * an object with "set": false (not set), or infinite. */
enum { N_SET, N_NULL, N_UNSET, N_INF };

/* A whole number: a plain one (22.05), null, Slurm's {"set","infinite","number"} object
 * (data_parser v0.0.39 and later) or "Infinity" (their complex mode). */
static int number(const struct at *a, json_t *o, const char *key, int64_t *v, int *kind)
{
	json_t *x = json_object_get(o, key);
	*v = 0;
	*kind = N_NULL;
	if (!x || json_is_null(x))
		return 0;
	if (json_is_object(x)) {
		json_t *set = json_object_get(x, "set"), *inf = json_object_get(x, "infinite");
		if ((set && !json_is_boolean(set)) || (inf && !json_is_boolean(inf)))
			return bad(a, key, "\"set\" or \"infinite\" is not true or false");
		if (json_is_true(inf)) {
			*kind = N_INF;
			return 0;
		}
		*kind = N_UNSET;
		if (!json_is_true(set))
			return 0;
		x = json_object_get(x, "number");
		if (!x)
			return bad(a, key, "set, but no \"number\"");
	} else if (json_is_string(x) && strcmp(json_string_value(x), "Infinity") == 0) {
		*kind = N_INF;
		return 0;
	}
	if (!json_is_integer(x))
		return bad(a, key, "not a whole number");
	if (json_integer_value(x) < 0)
		return bad(a, key, "a negative number");
	*v = json_integer_value(x);
	*kind = N_SET;
	return 0;
}

/* A string field: *s NULL when absent or null; -1 when not a string or too long. */
static int string(const struct at *a, json_t *o, const char *key, const char **s)
{
	json_t *x = json_object_get(o, key);
	*s = NULL;
	if (!x || json_is_null(x))
		return 0;
	if (!json_is_string(x))
		return bad(a, key, "not a string");
	if (json_string_length(x) > XP_SLURM_JSON_MAX_STRING)
		return bad(a, key, "longer than 65536 bytes");
	*s = json_string_value(x);
	return 0;
}

/* A word of a record: no space or control byte (they would split a node record's fields or
 * end its line) and no '|' (it would shift squeue's); Slurm's own names and lists hold none.
 * An '=' is harmless: a field starts only at a word after a space. */
static int word_ok(const struct at *a, const char *key, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x21 || *p == 0x7f || *p == '|')
			return bad(a, key, "holds a space, a control byte or '|'");
	return 0;
}

/* A string or a list of strings (CSV_STRING of v0.0.40, partitions): joined with sep,
 * each word checked; "" when absent. The caller frees *out. */
static int words(const struct at *a, json_t *o, const char *key, char sep, bool upper, char **out)
{
	json_t *x = json_object_get(o, key);
	struct buf b = {0};
	put(&b, "", 0);
	*out = NULL;
	if (x && json_is_array(x)) {
		size_t i;
		json_t *e;
		json_array_foreach(x, i, e) {
			if (!json_is_string(e) || json_string_length(e) > XP_SLURM_JSON_MAX_STRING) {
				free(b.s);
				return bad(a, key, "a list item is not a string");
			}
			if (b.len)
				put(&b, &sep, 1);
			puts_(&b, json_string_value(e));
			if (b.len > XP_SLURM_MAX_LINE) {
				free(b.s);
				return bad(a, key, "a list longer than 1 MiB");
			}
		}
	} else {
		const char *s;
		if (string(a, o, key, &s) < 0) {
			free(b.s);
			return -1;
		}
		if (s)
			puts_(&b, s);
	}
	if (strlen(b.s) != b.len || word_ok(a, key, b.s) < 0) {
		if (strlen(b.s) != b.len)
			bad(a, key, "a NUL byte");
		free(b.s);
		return -1;
	}
	if (upper)
		for (char *p = b.s; *p; p++)
			*p = (char)toupper((unsigned char)*p);
	*out = b.s;
	return 0;
}

/* " Key=N", or " Key=N/A" when the number is not given (the record readers' "absent"). */
static void put_num(struct buf *b, const char *key, int64_t v, int kind)
{
	if (kind == N_SET)
		putf(b, " %s=%" PRId64, key, v);
	else
		putf(b, " %s=N/A", key);
}

/* What Slurm's clients print for a time (slurm_make_time_str, SLURM_TIME_FORMAT unset):
 * local time, "Unknown" for infinite, and squeue's "N/A" for none. */
static int put_time(const struct at *a, struct buf *b, const char *key, int64_t v, int kind)
{
	if (kind == N_INF) {
		puts_(b, "Unknown");
		return 0;
	}
	if (kind != N_SET || v == 0) {
		puts_(b, "N/A");
		return 0;
	}
	time_t t = (time_t)v;
	struct tm tm;
	char s[64];
	if (v > 253402300799LL || !localtime_r(&t, &tm) || strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		return bad(a, key, "not a time");
	puts_(b, s);
	return 0;
}

/* Free text (a node's reason, a job's pending reason, a name): a copy with control bytes
 * masked (a newline would end the record) and, where bar, '|' too (it would shift the
 * squeue fields after it). */
static char *free_text(const char *s, bool bar)
{
	char *t = xp_mask_controls(xp_strdup(s));
	if (bar)
		for (char *p = t; *p; p++)
			if (*p == '|')
				*p = '?';
	return t;
}

/* One node object as a `scontrol -d show node -o` line: every field the record reader reads,
 * in scontrol's order, Reason last (free text: a "Key=" in it cannot add a field, the first of
 * a key wins). */
static int node_line(const struct at *a, json_t *n, struct buf *b)
{
	if (!json_is_object(n))
		return xp_errf(a->err, "%s: %s %zu: not an object", a->what, a->kind, a->index);
	const char *name, *reason, *user;
	if (string(a, n, "name", &name) < 0)
		return -1;
	if (!name || !*name)
		return bad(a, "name", "missing");
	if (word_ok(a, "name", name) < 0)
		return -1;
	int64_t v[5], when;
	int k[5], kw;
	static const char *const nkeys[] = {"cores", "effective_cpus", "cpus", "real_memory", "sockets"};
	for (int i = 0; i < 5; i++)
		if (number(a, n, nkeys[i], &v[i], &k[i]) < 0)
			return -1;
	char *feat = NULL, *gres = NULL, *used = NULL, *parts = NULL, *state = NULL, *flags = NULL;
	int rc = -1;
	if (words(a, n, "features", ',', false, &feat) < 0 || words(a, n, "gres", ',', false, &gres) < 0 ||
	    words(a, n, "gres_used", ',', false, &used) < 0 || words(a, n, "partitions", ',', false, &parts) < 0 ||
	    words(a, n, "state", '+', true, &state) < 0 || words(a, n, "state_flags", '+', true, &flags) < 0 ||
	    string(a, n, "reason", &reason) < 0 || string(a, n, "reason_set_by_user", &user) < 0 ||
	    number(a, n, "reason_changed_at", &when, &kw) < 0)
		goto out;
	putf(b, "NodeName=%s", name);
	put_num(b, "CoresPerSocket", v[0], k[0]);
	/* 22.05's JSON has no effective CPUs: then the record reader takes CPUTot. */
	put_num(b, "CPUEfctv", v[1], k[1]);
	put_num(b, "CPUTot", v[2], k[2]);
	puts_(b, " AvailableFeatures=");
	puts_(b, *feat ? feat : "(null)");
	puts_(b, " Gres=");
	puts_(b, *gres ? gres : "(null)");
	puts_(b, " GresUsed=");
	puts_(b, *used ? used : "N/A");
	put_num(b, "RealMemory", v[3], k[3]);
	put_num(b, "Sockets", v[4], k[4]);
	/* 22.05: "mixed" and its flags apart ["CLOUD", "POWERED_DOWN"]; later: one list. Either
	 * way scontrol's MIXED+CLOUD+POWERED_DOWN. */
	puts_(b, " State=");
	puts_(b, *state ? state : "N/A");
	if (*flags) {
		puts_(b, "+");
		puts_(b, flags);
	}
	puts_(b, " Partitions=");
	puts_(b, *parts ? parts : "N/A");
	if (reason && *reason) {
		char *r = free_text(reason, false);
		puts_(b, " Reason=");
		puts_(b, r);
		free(r);
		/* scontrol's " [user@time]" after the reason. */
		if (kw == N_SET && when > 0) {
			char *u = free_text(user && *user ? user : "Unknown", false);
			putf(b, " [%.64s@", u);
			free(u);
			if (put_time(a, b, "reason_changed_at", when, kw) < 0)
				goto out;
			puts_(b, "]");
		}
	}
	puts_(b, "\n");
	rc = 0;
out:
	free(feat);
	free(gres);
	free(used);
	free(parts);
	free(state);
	free(flags);
	return rc;
}

/* The list named key of the answer, after Slurm's own errors. */
static json_t *list_of(json_t *root, const char *key, const char *what, struct xp_err *err)
{
	if (slurm_errors(root, what, err) < 0)
		return NULL;
	json_t *l = json_object_get(root, key);
	if (!json_is_array(l))
		return xp_errf(err, "%s: no \"%s\" list", what, key), NULL;
	return l;
}

static int nodes_text(json_t *root, const char *what, struct buf *b, struct xp_err *err)
{
	json_t *l = list_of(root, "nodes", what, err);
	if (!l)
		return -1;
	if (json_array_size(l) > XP_MAX_NODES)
		return xp_errf(err, "%s: more than %d nodes", what, XP_MAX_NODES);
	put(b, "", 0);
	size_t i;
	json_t *n;
	json_array_foreach(l, i, n) {
		struct at a = {what, "node", i, err};
		if (node_line(&a, n, b) < 0)
			return -1;
	}
	return 0;
}

/* squeue's %T: the first state flag job_state_string() tests (src/common/slurm_protocol_defs.c),
 * else the base state. */
static const char *const job_flag_order[] = {"COMPLETING", "STAGE_OUT", "CONFIGURING", "RESIZING", "REQUEUED",
					     "REQUEUE_FED", "REQUEUE_HOLD", "SPECIAL_EXIT", "STOPPED", "REVOKED",
					     "RESV_DEL_HOLD", "SIGNALING", NULL};
static const char *const job_base[] = {"PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED",
				       "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE",
				       "OUT_OF_MEMORY", NULL};

static bool in_list(const char *s, const char *const *l)
{
	for (int i = 0; l[i]; i++)
		if (strcmp(s, l[i]) == 0)
			return true;
	return false;
}

/* The job's state word: a string (22.05, v0.0.39) or a list of words (v0.0.40 and later). */
static int job_state_word(const struct at *a, json_t *j, char *out, size_t size)
{
	char *st = NULL;
	if (words(a, j, "job_state", '+', true, &st) < 0)
		return -1;
	const char *pick = NULL;
	char *save = NULL, *copy = xp_strdup(st);
	for (int f = 0; job_flag_order[f] && !pick; f++)
		for (char *w = st; *w;) {
			size_t l = strcspn(w, "+");
			if (l == strlen(job_flag_order[f]) && strncmp(w, job_flag_order[f], l) == 0)
				pick = job_flag_order[f];
			w += l + (w[l] == '+');
		}
	for (char *w = strtok_r(copy, "+", &save); w && !pick; w = strtok_r(NULL, "+", &save))
		if (in_list(w, job_base))
			pick = w;
	if (!pick)
		pick = strtok_r(st, "+", &save);
	int rc = 0;
	if (!pick || !*pick)
		rc = bad(a, "job_state", "missing");
	else
		snprintf(out, size, "%s", pick);
	free(copy);
	free(st);
	return rc;
}

/* squeue's %l: minutes as [D-]HH:MM:SS, UNLIMITED, NOT_SET (print.c _print_job_time_limit;
 * past a year squeue says INVALID, which the reader would refuse: the days are kept). */
static void put_limit(struct buf *b, int64_t v, int kind)
{
	/* 22.05 writes null for INFINITE and the number for NO_VAL (4294967294). */
	if (kind == N_INF || kind == N_NULL || (kind == N_SET && v == 4294967295LL)) {
		puts_(b, "UNLIMITED");
		return;
	}
	if (kind == N_UNSET || v == 4294967294LL) {
		puts_(b, "NOT_SET");
		return;
	}
	int64_t t = v * 60, d = t / 86400, h = t / 3600 % 24, m = t / 60 % 60, s = t % 60;
	if (d)
		putf(b, "%" PRId64 "-%02" PRId64 ":%02" PRId64 ":%02" PRId64, d, h, m, s);
	else if (h)
		putf(b, "%" PRId64 ":%02" PRId64 ":%02" PRId64, h, m, s);
	else
		putf(b, "%" PRId64 ":%02" PRId64, m, s);
}

/* One job object as an squeue line in XP_SLURM_SQUEUE_FORMAT,
 * "%i|%P|%T|%Q|%D|%l|%b|%r|%N|%V|%S|%A|%q|%a|%u|%j". */
static int job_line(const struct at *a, json_t *j, struct buf *b)
{
	if (!json_is_object(j))
		return xp_errf(a->err, "%s: %s %zu: not an object", a->what, a->kind, a->index);
	int64_t id, ajid, atid, hid, hoff, prio, nn, lim, sub, start;
	int kid, kaj, kat, kh, kho, kp, kn, kl, ks, kst;
	const char *tasks, *part, *tres, *desc, *why, *nodes, *name, *qos, *acct, *user;
	char state[64];
	if (number(a, j, "job_id", &id, &kid) < 0 || number(a, j, "array_job_id", &ajid, &kaj) < 0 ||
	    number(a, j, "array_task_id", &atid, &kat) < 0 || number(a, j, "het_job_id", &hid, &kh) < 0 ||
	    number(a, j, "het_job_offset", &hoff, &kho) < 0 || number(a, j, "priority", &prio, &kp) < 0 ||
	    number(a, j, "node_count", &nn, &kn) < 0 || number(a, j, "time_limit", &lim, &kl) < 0 ||
	    number(a, j, "submit_time", &sub, &ks) < 0 || number(a, j, "start_time", &start, &kst) < 0 ||
	    string(a, j, "array_task_string", &tasks) < 0 || string(a, j, "partition", &part) < 0 ||
	    string(a, j, "tres_per_node", &tres) < 0 || string(a, j, "state_description", &desc) < 0 ||
	    string(a, j, "state_reason", &why) < 0 || string(a, j, "nodes", &nodes) < 0 ||
	    string(a, j, "name", &name) < 0 || string(a, j, "qos", &qos) < 0 || string(a, j, "account", &acct) < 0 ||
	    string(a, j, "user_name", &user) < 0 || job_state_word(a, j, state, sizeof state) < 0)
		return -1;
	if (kid != N_SET || id <= 0 || id > 4294967295LL)
		return bad(a, "job_id", "not a job id");
	if ((tasks && word_ok(a, "array_task_string", tasks) < 0) || (part && word_ok(a, "partition", part) < 0) ||
	    (tres && word_ok(a, "tres_per_node", tres) < 0) || (nodes && word_ok(a, "nodes", nodes) < 0) ||
	    (qos && word_ok(a, "qos", qos) < 0) || (acct && word_ok(a, "account", acct) < 0) ||
	    (user && word_ok(a, "user_name", user) < 0) || word_ok(a, "job_state", state) < 0)
		return -1;
	/* %i as squeue prints it (print.c _print_job_job_id): an array's pending rest 6_[1-3], a
	 * task 6_2, a heterogeneous component 7+1, else the id. */
	if (tasks && *tasks)
		putf(b, "%" PRId64 "_[%s]", ajid, tasks);
	else if (kat == N_SET && atid != 4294967294LL)
		putf(b, "%" PRId64 "_%" PRId64, ajid, atid);
	else if (kh == N_SET && hid > 0 && hid != 4294967294LL)
		putf(b, "%" PRId64 "+%" PRId64, hid, kho == N_SET ? hoff : 0);
	else
		putf(b, "%" PRId64, id);
	putf(b, "|%s|%s|", part ? part : "", state);
	/* %Q is unsigned; infinite is UINT32_MAX, none 0 (22.05 writes null for both). */
	putf(b, "%" PRId64 "|", (int64_t)(kp == N_SET ? (prio > 4294967295LL ? 4294967295LL : prio) : kp == N_INF ? 4294967295LL : 0));
	putf(b, "%" PRId64 "|", kn == N_SET && nn <= 1000000 ? nn : 0);
	put_limit(b, lim, kl);
	putf(b, "|%s|", tres && *tres ? tres : "N/A");
	/* %r: the description when there is one ("ReqNodeNotAvail, UnavailableNodes:gpu02"),
	 * else the reason's name. */
	char *r = free_text(desc && *desc ? desc : why && *why ? why : "None", true);
	puts_(b, r);
	free(r);
	putf(b, "|%s|", nodes ? nodes : "");
	if (put_time(a, b, "submit_time", sub, ks) < 0)
		return -1;
	puts_(b, "|");
	if (put_time(a, b, "start_time", start, kst) < 0)
		return -1;
	/* %A: the job's own id, one per array task and heterogeneous component; %q %a %u as
	 * squeue prints them, "(null)" for none (no accounting). */
	putf(b, "|%" PRId64 "|%s|%s|%s|", id, qos && *qos ? qos : "(null)", acct && *acct ? acct : "(null)",
	     user && *user ? user : "(null)");
	/* %j last: the reader takes the rest of the line, '|' and all; a newline is masked. */
	char *nm = free_text(name ? name : "", false);
	puts_(b, nm);
	free(nm);
	puts_(b, "\n");
	return 0;
}

static int jobs_text(json_t *root, const char *what, struct buf *b, struct xp_err *err)
{
	json_t *l = list_of(root, "jobs", what, err);
	if (!l)
		return -1;
	put(b, "", 0);
	size_t i;
	json_t *j;
	json_array_foreach(l, i, j) {
		struct at a = {what, "job", i, err};
		if (job_line(&a, j, b) < 0)
			return -1;
	}
	return 0;
}

int xp_slurm_json_mode(void)
{
	const char *v = getenv("XPOOL_SLURM_JSON");
	if (v && strcmp(v, "0") == 0)
		return 0;
	if (v && strcmp(v, "1") == 0)
		return 1;
	return -1;
}

static int to_text(int (*fn)(json_t *, const char *, struct buf *, struct xp_err *), const char *json, size_t len,
		   const char *what, char **text, size_t *tlen, struct xp_err *err)
{
	*text = NULL;
	*tlen = 0;
	json_t *root = load(json, len, what, err);
	if (!root)
		return -1;
	struct buf b = {0};
	int rc = fn(root, what, &b, err);
	json_decref(root);
	if (rc < 0) {
		free(b.s);
		return -1;
	}
	*text = b.s;
	*tlen = b.len;
	return 0;
}

int xp_slurm_json_nodes_text(const char *json, size_t len, const char *what, char **text, size_t *tlen,
			     struct xp_err *err)
{
	return to_text(nodes_text, json, len, what, text, tlen, err);
}

int xp_slurm_json_jobs_text(const char *json, size_t len, const char *what, char **text, size_t *tlen,
			    struct xp_err *err)
{
	return to_text(jobs_text, json, len, what, text, tlen, err);
}

/* Runs a Slurm client with SLURM_CONF=conf (the caller's SLURM_CONF when conf is not given,
 * as xp_slurm_load): its output in *out. */
static int run_json(const char *const *argv, const char *conf, char **out, size_t *len, char *msg, size_t msize)
{
	if (!conf || !*conf)
		conf = getenv("SLURM_CONF");
	char *setting = conf && *conf ? xp_asprintf("SLURM_CONF=%s", conf) : NULL;
	const char *env[] = {setting, NULL};
	*out = NULL;
	*len = 0;
	int rc = xp_run_tool_env(argv, env, 30.0, XP_SLURM_MAX_OUTPUT, out, len, msg, msize);
	free(setting);
	return rc;
}

/* Runs argv and reads its answer: the tree, or NULL with err set when the command is refused
 * (an option this Slurm lacks), fails, prints no JSON, lacks the list named key, or says
 * Slurm's own errors: all of them "no JSON here" for the auto mode. */
static json_t *answer(const char *const *argv, const char *what, const char *key, const char *conf,
		      struct xp_err *err)
{
	char *out, msg[512];
	size_t len;
	if (run_json(argv, conf, &out, &len, msg, sizeof msg) < 0)
		return xp_errf(err, "slurm: %s (%s)", msg, what), NULL;
	json_t *root = load(out, len, what, err);
	free(out);
	if (root && !list_of(root, key, what, err)) {
		json_decref(root);
		root = NULL;
	}
	if (!root)
		xp_err_prefix(err, "slurm");
	return root;
}

/* The records text of the first of cmds (n of them) that answers with JSON holding the list
 * key; 1, 0 (none answered: the caller reads the records) or -1 (an answer that cannot be
 * read, or none in mode 1). */
static int first_answer(const char *const *const *cmds, const char *const *whats, int n, const char *key,
			int (*fn)(json_t *, const char *, struct buf *, struct xp_err *), const char *conf,
			char **text, size_t *tlen, const char **what, struct xp_err *err)
{
	*text = NULL;
	*tlen = 0;
	int mode = xp_slurm_json_mode();
	if (mode == 0)
		return 0;
	struct xp_err why = {{0}};
	for (int i = 0; i < n; i++) {
		json_t *root = answer(cmds[i], whats[i], key, conf, &why);
		if (!root)
			continue;
		struct buf b = {0};
		int rc = fn(root, whats[i], &b, err);
		json_decref(root);
		if (rc < 0) {
			free(b.s);
			xp_err_prefix(err, "slurm");
			return -1;
		}
		*text = b.s;
		*tlen = b.len;
		*what = whats[i];
		return 1;
	}
	if (mode == 1) {
		*err = why;
		return -1;
	}
	return 0;
}

int xp_slurm_json_nodes(const char *conf, char **text, size_t *tlen, const char **what, struct xp_err *err)
{
	/* Slurm 23.02 and later: scontrol --json, one object a node as the records (sinfo's JSON
	 * there groups nodes). 22.05: scontrol has no --json, sinfo --json lists the nodes, but
	 * without the effective CPUs the records have (CPUEfctv), at three times the time and
	 * four times the memory on 10,000 nodes (bench_engines): asked for only when JSON is
	 * asked for (XPOOL_SLURM_JSON=1); otherwise the records are read. */
	static const char *const sc[] = {"scontrol", "-d", "--json", "show", "node", NULL};
	static const char *const si[] = {"sinfo", "--json", NULL};
	static const char *const *const cmds[] = {sc, si};
	static const char *const whats[] = {"scontrol -d --json show node", "sinfo --json"};
	return first_answer(cmds, whats, xp_slurm_json_mode() == 1 ? 2 : 1, "nodes", nodes_text, conf, text, tlen, what,
			    err);
}

int xp_slurm_json_jobs(const char *conf, char **text, size_t *tlen, const char **what, struct xp_err *err)
{
	/* -a -t all as the text path asks (22.05's --json lists every job whatever the options). */
	static const char *const sq[] = {"squeue", "-a", "-t", "all", "--json", NULL};
	static const char *const *const cmds[] = {sq};
	static const char *const whats[] = {"squeue --json"};
	return first_answer(cmds, whats, 1, "jobs", jobs_text, conf, text, tlen, what, err);
}
