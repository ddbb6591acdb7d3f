/* cmd_job.c: `xpool job submit|list|show|cancel|hold|release`: workload jobs in queues
 * (src/queue). Looking (list, show, submit --dry-run) opens the database read-only, or an
 * empty one when there is none, and computes reasons, positions and estimated starts in memory
 * every time: it never creates or changes the file. A write (submit, cancel, hold, release)
 * first advances the paper workload to now (running jobs past their estimate complete), makes
 * its change, runs one scheduling pass, and writes the rows, every state change and its audit
 * row in one transaction. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "format.h"
#include "job_opts.h"
#include "jobrun.h"
#include "jstore.h"
#include "model_json.h"
#include "qjob.h"
#include "qstore.h"
#include "store.h"
#include "store_open.h"
#include "table.h"

static const char *strategy_value(int i)
{
	return i >= 0 && i < XP_STRAT_COUNT ? xp_strategy_name(i) : NULL;
}

static const char *jstate_value(int i)
{
	return i >= 0 && i < XP_JS_COUNT ? xp_jstate_name(i) : NULL;
}

static const struct xp_opt job_opts[] = {
	{"file", 'f', "FILE", "submit: read the job spec (JSON) from FILE instead of flags"},
	{"estimate", 0, "DUR", "submit: how long the job runs at most (a time limit: 90s, 30m, 2h, 1d, 1h30m)"},
	{"dry-run", 0, NULL, "submit: say whether it would start now, where, or why not; store nothing"},
	{"strategy", 0, "S", "submit: placement strategy: pack (default), spread, topology or green", strategy_value},
	{"state", 0, "STATE", "list: only jobs in STATE (pending, running, held, completed, cancelled, ...)",
	 jstate_value},
	XP_JOB_OPTS,
	{NULL, 0, NULL, NULL},
};

struct jsub {
	const char *name, *usage, *opts;
	int min, max;
	bool writes;
	int (*fn)(struct xp_ctx *ctx, const struct xp_args *a, struct xp_store *s);
};

static int do_submit(struct xp_ctx *ctx, const struct xp_args *a, struct xp_store *s);
static int do_list(struct xp_ctx *ctx, const struct xp_args *a, struct xp_store *s);
static int do_show(struct xp_ctx *ctx, const struct xp_args *a, struct xp_store *s);
static int do_action(struct xp_ctx *ctx, const struct xp_args *a, struct xp_store *s);

#define JOB_FLAG_NAMES                                                                                     \
	" name kind queue tenant priority replicas gang-min devices vendor model memory ecu slice share cpus " \
	"host-memory label homogeneous same-group numa network validated "
static const struct jsub jsubs[] = {
	{"submit", "[-f JOB.json | job flags] --queue Q [--tenant T] [--priority N] --estimate DUR [--dry-run] "
		   "[--strategy S] [--json]",
	 " file estimate dry-run strategy" JOB_FLAG_NAMES, 0, 0, true, do_submit},
	{"list", "[--queue Q] [--state S] [--tenant T] [--json]", " queue state tenant ", 0, 0, false, do_list},
	{"show", "ID [--json]", " ", 1, 1, false, do_show},
	{"hold", "ID... [--json]", " ", 1, 1000, true, do_action},
	{"release", "ID... [--json]", " ", 1, 1000, true, do_action},
	{"cancel", "ID... [--json]", " ", 1, 1000, true, do_action},
	{NULL, NULL, NULL, 0, 0, false, NULL},
};

/* "job WORDS: message" as a failure with exit code code. */
static int fail(struct xp_ctx *ctx, const char *words, int code, const struct xp_err *err)
{
	xp_ctx_error(ctx, "job %s: %s", words, err->msg);
	return code;
}

/* Parses a duration: one or more NUMBER UNIT (s, m, h, d), at most 366 days. */
static int parse_duration(const char *v, int64_t *out, struct xp_err *err)
{
	const char *p = v;
	int64_t total = 0;
	if (!*p)
		return xp_errf(err, "--estimate: empty (give 90s, 30m, 2h, 1d or 1h30m)");
	while (*p) {
		if (*p < '0' || *p > '9')
			return xp_errf(err, "--estimate: '%.40s' is not a duration (90s, 30m, 2h, 1d, 1h30m)", v);
		errno = 0;
		char *end;
		long long n = strtoll(p, &end, 10);
		int64_t unit = *end == 's' ? 1 : *end == 'm' ? 60 : *end == 'h' ? 3600 : *end == 'd' ? 86400 : 0;
		if (errno || !unit || n > 366LL * 86400)
			return xp_errf(err, "--estimate: '%.40s' is not a duration (90s, 30m, 2h, 1d, 1h30m)%s", v,
				       !errno && !unit && !*end ? ": a number needs a unit" : "");
		total += n * unit;
		if (total > 366LL * 86400)
			return xp_errf(err, "--estimate: '%.40s' is longer than 366 days", v);
		p = end + 1;
	}
	if (total <= 0)
		return xp_errf(err, "--estimate: '%.40s' is not above zero", v);
	*out = total;
	return 0;
}

/* A job id argument: a whole number from 1. */
static int parse_id(const char *v, int64_t *id, struct xp_err *err)
{
	char *end;
	errno = 0;
	long long n = strtoll(v, &end, 10);
	if (end == v || *end || errno || n < 1 || v[0] == '+' || v[0] == ' ')
		return xp_errf(err, "'%.40s' is not a job id (a whole number from 1)", v);
	*id = n;
	return 0;
}

/* "2026-12-02T03:10:00Z" (UTC), or "-" for -1. */
static const char *iso(int64_t t, char *buf, size_t size)
{
	if (t < 0)
		return "-";
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

/* What a job waited or has waited: to its start, or to now while it waits. */
static int64_t wait_of(const struct xp_qjob *j, int64_t now)
{
	if (j->start >= 0)
		return j->start - j->submit;
	if (j->state == XP_JS_PENDING || j->state == XP_JS_HELD)
		return now - j->submit;
	return -1;
}

static bool waiting(const struct xp_qjob *j)
{
	return j->state == XP_JS_PENDING || j->state == XP_JS_HELD;
}

static json_t *reason_json(int code, const char *text)
{
	if (code == XP_R_NONE && !text)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "code", json_integer(code));
	json_object_set_new(o, "name", json_string(xp_reason_name(code)));
	json_object_set_new(o, "text", text ? json_string(text) : json_null());
	return o;
}

/* The scheduler index of row i's eta, or -1 when it has none. */
static int64_t eta_of(const struct xp_jobrun *r, size_t i)
{
	return r->eta && r->six[i] >= 0 ? r->eta[r->six[i]] : -1;
}

/* Where row i starts in the estimate's simulation ("n1,n2"), NULL when not known. */
static const char *eta_nodes_of(const struct xp_jobrun *r, size_t i)
{
	return r->eta_nodes && r->six[i] >= 0 && (size_t)r->six[i] < r->n_eta ? r->eta_nodes[r->six[i]] : NULL;
}

/* A comma list of nodes as a JSON array (NULL: null). */
static json_t *names_json(const char *list)
{
	if (!list)
		return json_null();
	json_t *a = json_array();
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		json_array_append_new(a, json_stringn(p, n));
		p += n + (e ? 1 : 0);
	}
	return a;
}

/* A pending job's place in line as JSON ({"queue": N, "global": M}, 1-based); null when it
 * has none or when shown is false. */
static json_t *position_json(const struct xp_qjob *j, bool shown)
{
	if (!shown || !j->pos_queue)
		return json_null();
	json_t *p = json_object();
	json_object_set_new(p, "queue", json_integer((json_int_t)j->pos_queue));
	json_object_set_new(p, "global", json_integer((json_int_t)j->pos_global));
	return p;
}

/* Row i as JSON: the stored form as it is now, with its wait, position and estimated start. */
static json_t *row_json(const struct xp_jobrun *r, size_t i)
{
	const struct xp_qjob *j = xp_jobrun_job(r, i);
	json_t *o = xp_jstore_job_json(j, r->c);
	json_object_set_new(o, "reason", waiting(j) ? reason_json(j->reason, j->reason_text) : json_null());
	json_object_set_new(o, "wait_s", wait_of(j, r->now) >= 0 ? json_integer(wait_of(j, r->now)) : json_null());
	json_object_set_new(o, "position", position_json(j, j->state == XP_JS_PENDING));
	int64_t eta = j->state == XP_JS_PENDING ? eta_of(r, i) : -1;
	char b[32];
	json_object_set_new(o, "eta", eta >= 0 ? json_string(iso(eta, b, sizeof b)) : json_null());
	json_object_set_new(o, "eta_nodes", names_json(j->state == XP_JS_PENDING ? eta_nodes_of(r, i) : NULL));
	json_object_set_new(o, "note", r->note && r->note[i] ? json_string(r->note[i]) : json_null());
	const struct xp_qjob *row = &r->jobs[i];
	if (row->engine) {
		/* The engine's own view beside xpool's: its reason in its words with the code they
		 * map to, and its node list as it writes it. */
		json_object_set_new(o, "engine", json_string(row->engine));
		json_object_set_new(o, "engine_reason", reason_json(row->reason, row->reason_text));
		json_object_set_new(o, "engine_nodes", row->nodes ? json_string(row->nodes) : json_null());
		json_object_set_new(o, "engine_id", row->engine_id ? json_string(row->engine_id) : json_null());
	}
	return o;
}

/* Opens a read: the store's jobs through the scheduler at now, in memory. 0 or an exit code. */
static int read_run(struct xp_ctx *ctx, struct xp_store *s, const char *words, struct xp_jobrun *r, int strategy,
		    bool cluster)
{
	struct xp_err err = {{0}};
	int64_t now;
	memset(r, 0, sizeof *r);
	if (xp_jobrun_now(&now, &err) < 0)
		return fail(ctx, words, XP_EXIT_USAGE, &err);
	if (xp_jobrun_load(r, ctx, s, now, cluster, &err) < 0 || xp_jobrun_build(r, strategy, &err) < 0 ||
	    xp_jobrun_advance(r, &err) < 0 || xp_jobrun_pass(r, &err) < 0)
		return fail(ctx, words, XP_EXIT_ERROR, &err);
	return 0;
}

static int do_list(struct xp_ctx *ctx, const struct xp_args *a, struct xp_store *s)
{
	const char *fq = xp_args_get(a, "queue"), *fs = xp_args_get(a, "state"), *ft = xp_args_get(a, "tenant");
	struct xp_err err = {{0}};
	if (fs && xp_jstate_parse(fs) < 0) {
		xp_errf(&err, "--state: '%.40s' is not a job state (pending, admitted, running, preempted, completed,"
			      " failed, held, cancelled)",
			fs);
		return fail(ctx, "list", XP_EXIT_USAGE, &err);
	}
	struct xp_jobrun r;
	int rc = read_run(ctx, s, "list", &r, 0, false);
	if (!rc && xp_jobrun_eta(&r, NULL, &err) < 0)
		rc = fail(ctx, "list", XP_EXIT_ERROR, &err);
	if (rc) {
		xp_jobrun_free(&r);
		return rc;
	}
	json_t *arr = ctx->json ? json_array() : NULL;
	struct xp_table t;
	/* Read from a live engine: which one, its nodes and its own reason beside xpool's. */
	bool eng = xp_jobrun_engine(ctx) != NULL;
	xp_table_init(&t, eng ? 12 : 9);
	const char *head[] = {"ID", "QUEUE", "TENANT", "STATE", "PRIO", "WAIT", "POS", "ETA", "REASON", "FROM", "NODES",
			      "ENGINE REASON"};
	xp_table_rowv(&t, head);
	size_t shown = 0;
	for (size_t i = 0; i < r.n; i++) {
		const struct xp_qjob *j = xp_jobrun_job(&r, i);
		if ((fq && strcmp(fq, j->queue) != 0) || (fs && xp_jstate_parse(fs) != j->state) ||
		    (ft && (!j->tenant || strcmp(ft, j->tenant) != 0)))
			continue;
		shown++;
		if (arr) {
			json_array_append_new(arr, row_json(&r, i));
			continue;
		}
		char id[24], prio[16], w[32], pos[48], eb[32], reason[600];
		snprintf(id, sizeof id, "%lld", (long long)j->id);
		snprintf(prio, sizeof prio, "%d", j->priority);
		if (j->state == XP_JS_PENDING && j->pos_queue)
			snprintf(pos, sizeof pos, "%zu/%zu", j->pos_queue, j->pos_global);
		else
			snprintf(pos, sizeof pos, "-");
		int64_t eta = j->state == XP_JS_PENDING ? eta_of(&r, i) : -1;
		if (r.note[i])
			snprintf(reason, sizeof reason, "(not scheduled: %s)", r.note[i]);
		else if (waiting(j) && j->reason)
			snprintf(reason, sizeof reason, "%s: %s", xp_reason_name(j->reason),
				 j->reason_text ? j->reason_text : "");
		else
			snprintf(reason, sizeof reason, "-");
		const struct xp_qjob *row = &r.jobs[i];
		char er[600], from[96];
		/* An engine's job with its own id ("7_[2-5]", "8+1": array tasks and heterogeneous
		 * components have numbers of their own, the ID column's). */
		snprintf(from, sizeof from, "%s%s%.64s", row->engine ? row->engine : "xpool", row->engine_id ? " " : "",
			 row->engine_id ? row->engine_id : "");
		if (row->reason_text)
			snprintf(er, sizeof er, "%s (%s)", row->reason_text, xp_reason_name(row->reason));
		else
			snprintf(er, sizeof er, "-");
		const char *cells[] = {id, j->queue, j->tenant ? j->tenant : "-", xp_jstate_name(j->state), prio,
				       xp_fmt_span(w, sizeof w, wait_of(j, r.now)), pos, iso(eta, eb, sizeof eb), reason,
				       from, row->nodes ? row->nodes : "-", er};
		xp_table_rowv(&t, cells);
	}
	if (arr)
		xp_print_json_list(ctx->out, "jobs", arr);
	else if (!shown)
		fprintf(ctx->out, "%s\n", r.n ? "no jobs match" : "no jobs (submit one with `xpool job submit`)");
	else
		xp_table_print(&t, ctx->out, "");
	xp_table_free(&t);
	xp_jobrun_free(&r);
	return XP_EXIT_OK;
}

/* The nodes of a job's slots, in order, each once: "n1,n2". */
static void nodes_text(const struct xp_qjob *j, const struct xp_cluster *c, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < j->alloc.n && len < size; i++) {
		uint32_t ix = j->alloc.slots[i].node_ix;
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = j->alloc.slots[k].node_ix == ix;
		if (!seen && c && ix < c->n_nodes)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? "," : "", c->nodes[ix]->name);
	}
}

static json_t *nodes_json(const struct xp_qjob *j, const struct xp_cluster *c)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < j->alloc.n; i++) {
		uint32_t ix = j->alloc.slots[i].node_ix;
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = j->alloc.slots[k].node_ix == ix;
		if (!seen && c && ix < c->n_nodes)
			json_array_append_new(arr, json_string(c->nodes[ix]->name));
	}
	return arr;
}

static json_t *event_json(int64_t t, int from, int to, int reason, const char *detail, const char *actor,
			  bool recorded)
{
	json_t *o = json_object();
	char b[32];
	json_object_set_new(o, "time", json_string(iso(t, b, sizeof b)));
	json_object_set_new(o, "from", from >= 0 ? json_string(xp_jstate_name(from)) : json_null());
	json_object_set_new(o, "to", json_string(xp_jstate_name(to)));
	json_object_set_new(o, "reason", json_integer(reason));
	json_object_set_new(o, "reason_name", json_string(xp_reason_name(reason)));
	json_object_set_new(o, "detail", detail ? json_string(detail) : json_null());
	json_object_set_new(o, "actor", json_string(actor));
	json_object_set_new(o, "recorded", json_boolean(recorded));
	return o;
}

static void event_row(struct xp_table *t, int64_t time, int from, int to, int reason, const char *detail,
		      const char *actor)
{
	char b[32], change[48], rs[32];
	snprintf(change, sizeof change, "%s -> %s", from >= 0 ? xp_jstate_name(from) : "-", xp_jstate_name(to));
	snprintf(rs, sizeof rs, "%s", reason ? xp_reason_name(reason) : "-");
	xp_table_row(t, iso(time, b, sizeof b), change, rs, actor, detail ? detail : "");
}

static int do_show(struct xp_ctx *ctx, const struct xp_args *a, struct xp_store *s)
{
	struct xp_err err = {{0}};
	int64_t id;
	if (parse_id(a->argv[1], &id, &err) < 0)
		return fail(ctx, "show", XP_EXIT_USAGE, &err);
	struct xp_jobrun r;
	int rc = read_run(ctx, s, "show", &r, 0, false);
	if (!rc && xp_jobrun_eta(&r, NULL, &err) < 0)
		rc = fail(ctx, "show", XP_EXIT_ERROR, &err);
	size_t i = rc ? SIZE_MAX : xp_jobrun_find(&r, id);
	if (!rc && i == SIZE_MAX) {
		xp_ctx_error(ctx, "job show: no job %lld (`xpool job list` lists them)", (long long)id);
		rc = XP_EXIT_ERROR;
	}
	struct xp_jevent *ev = NULL;
	size_t n_ev = 0;
	/* A live engine's job has no history in the store (its ids are the engine's). */
	if (!rc && !r.jobs[i].engine && xp_jstore_events(s, id, &ev, &n_ev, &err) < 0)
		rc = fail(ctx, "show", XP_EXIT_ERROR, &err);
	if (rc) {
		xp_jobrun_free(&r);
		return rc;
	}
	const struct xp_qjob *j = xp_jobrun_job(&r, i);
	int64_t eta = j->state == XP_JS_PENDING ? eta_of(&r, i) : -1;
	char b[32], b2[32], nodes[1024];
	nodes_text(j, r.c, nodes, sizeof nodes);
	if (ctx->json) {
		json_t *o = row_json(&r, i);
		json_object_set_new(o, "nodes", nodes_json(j, r.c));
		json_t *h = json_array();
		for (size_t k = 0; k < n_ev; k++)
			json_array_append_new(h, event_json(ev[k].time, ev[k].from, ev[k].to, ev[k].reason, ev[k].detail,
							    ev[k].actor, true));
		for (size_t k = 0; k < r.n_ev; k++)
			if (r.six[i] >= 0 && r.ev[k].job == (size_t)r.six[i])
				json_array_append_new(h, event_json(r.ev[k].time, r.ev[k].from, r.ev[k].to, r.ev[k].reason,
								    r.ev[k].text, r.ev[k].actor, false));
		json_object_set_new(o, "history", h);
		xp_print_json(ctx->out, o);
	} else {
		FILE *f = ctx->out;
		fprintf(f, "job:         %lld%s%s\n", (long long)j->id, j->name ? " " : "", j->name ? j->name : "");
		fprintf(f, "queue:       %s\ntenant:      %s\npriority:    %d\n", j->queue, j->tenant ? j->tenant : "-",
			j->priority);
		fprintf(f, "state:       %s\n", xp_jstate_name(j->state));
		fprintf(f, "submitted:   %s (estimate %s)\n", iso(j->submit, b, sizeof b),
			xp_fmt_span(b2, sizeof b2, j->est_s));
		if (j->start >= 0)
			fprintf(f, "started:     %s\n", iso(j->start, b, sizeof b));
		if (j->end >= 0)
			fprintf(f, "ended:       %s\n", iso(j->end, b, sizeof b));
		if (r.note[i])
			fprintf(f, "not scheduled: %s\n", r.note[i]);
		const struct xp_qjob *row = &r.jobs[i];
		if (row->engine) {
			fprintf(f, "from:        %s%s%s (read-only)\nnodes:       %s\n", row->engine, row->engine_id ? ", its job " : "",
				row->engine_id ? row->engine_id : "", row->nodes ? row->nodes : "-");
			if (row->reason_text)
				fprintf(f, "%s reason: %s (as %s)\n", row->engine, row->reason_text, xp_reason_name(row->reason));
		}
		if (waiting(j) && j->reason)
			fprintf(f, "reason:      %s (%d): %s\n", xp_reason_name(j->reason), j->reason,
				j->reason_text ? j->reason_text : "");
		if (j->state == XP_JS_PENDING && j->pos_queue)
			fprintf(f, "position:    %zu in %s, %zu overall\n", j->pos_queue, j->queue, j->pos_global);
		if (j->state == XP_JS_PENDING) {
			const char *en = eta_nodes_of(&r, i);
			fprintf(f, "estimated start: %s%s%s\n", eta >= 0 ? iso(eta, b, sizeof b) : "beyond 24h (or never)",
				eta >= 0 && en ? " on " : "", eta >= 0 && en ? en : "");
		}
		if (j->alloc.n)
			fprintf(f, "placement:   %s on %s (%zu device slot%s)\n",
				j->state == XP_JS_RUNNING ? "running" : "holds", nodes, j->alloc.n,
				j->alloc.n == 1 ? "" : "s");
		if (j->spec) {
			json_t *sj = xp_job_to_json(j->spec);
			char *t = json_dumps(sj, JSON_COMPACT | JSON_PRESERVE_ORDER);
			fprintf(f, "spec:        %s\n", t ? t : "");
			free(t);
			json_decref(sj);
		}
		fprintf(f, "history:\n");
		struct xp_table t;
		xp_table_init(&t, 5);
		xp_table_row(&t, "TIME", "CHANGE", "REASON", "BY", "DETAIL");
		for (size_t k = 0; k < n_ev; k++)
			event_row(&t, ev[k].time, ev[k].from, ev[k].to, ev[k].reason, ev[k].detail, ev[k].actor);
		size_t pending = 0;
		for (size_t k = 0; k < r.n_ev; k++)
			if (r.six[i] >= 0 && r.ev[k].job == (size_t)r.six[i]) {
				char by[64];
				snprintf(by, sizeof by, "%s (not yet recorded)", r.ev[k].actor);
				event_row(&t, r.ev[k].time, r.ev[k].from, r.ev[k].to, r.ev[k].reason, r.ev[k].text, by);
				pending++;
			}
		xp_table_print(&t, f, "  ");
		xp_table_free(&t);
		if (pending)
			fprintf(f, "(changes not yet recorded happen at now by the estimates; the next write records them)\n");
	}
	xp_jevents_free(ev, n_ev);
	xp_jobrun_free(&r);
	return XP_EXIT_OK;
}

/* Reads --priority, when given, into *prio. */
static int read_priority(const struct xp_args *a, int *prio, struct xp_err *err)
{
	const char *v = xp_args_get(a, "priority");
	if (!v)
		return 0;
	char *end;
	errno = 0;
	long p = strtol(v, &end, 10);
	if (end == v || *end || errno || p < -1000000000L || p > 1000000000L)
		return xp_errf(err, "--priority: '%.40s' is not a whole number within +-1000000000", v);
	*prio = (int)p;
	return 0;
}

/* The new job of a submit from its options; NULL after printing why (*code set). */
static struct xp_qjob *submit_job(struct xp_ctx *ctx, const struct xp_args *a, int64_t now, int *code)
{
	struct xp_err err = {{0}};
	struct xp_job *spec = xp_job_opts_read(ctx, a, "job submit", " queue tenant priority ", code);
	if (!spec)
		return NULL;
	struct xp_qjob *j = xp_calloc(1, sizeof *j);
	j->spec = spec;
	j->priority = spec->priority;
	const char *q = xp_args_get(a, "queue"), *t = xp_args_get(a, "tenant"), *est = xp_args_get(a, "estimate");
	if (!q)
		q = spec->queue;
	if (!t)
		t = spec->tenant;
	*code = XP_EXIT_USAGE;
	if (!q)
		xp_errf(&err, "--queue: which queue? (give --queue NAME, or \"queue\" in the job file)");
	else if (xp_qname_check(q, "--queue", &err) < 0 || (t && xp_qname_check(t, "--tenant", &err) < 0))
		;
	else if (read_priority(a, &j->priority, &err) < 0)
		;
	else if (!est)
		xp_errf(&err, "--estimate: how long does it run at most? (a time limit: 30m, 2h, 1d)");
	else if (parse_duration(est, &j->est_s, &err) == 0)
		*code = 0;
	if (*code) {
		fail(ctx, "submit", *code, &err);
		xp_qjob_clear(j);
		free(j);
		return NULL;
	}
	/* The spec says the same as the row, so that a stored spec read back schedules alike
	 * (q and t may be the spec's own: copied before the spec's are replaced). */
	j->name = xp_strdup(spec->name);
	j->queue = xp_strdup(q);
	j->tenant = xp_strdup(t);
	free(spec->queue);
	spec->queue = xp_strdup(j->queue);
	free(spec->tenant);
	spec->tenant = xp_strdup(j->tenant);
	spec->priority = j->priority;
	j->submit = now;
	j->actual_s = -1;
	j->start = j->end = -1;
	j->eta = -1;
	j->state = XP_JS_PENDING;
	j->alloc.commit = -1;
	return j;
}

/* The dry-run's answer: whether the job would start now and where, or why it waits. */
static int dry_run_print(struct xp_ctx *ctx, struct xp_jobrun *r, int64_t k, int strategy)
{
	const struct xp_qjob *j = xp_sched_job(r->s, (size_t)k);
	bool now = j->state == XP_JS_RUNNING || j->state == XP_JS_ADMITTED;
	char nodes[1024], b[32];
	nodes_text(j, r->c, nodes, sizeof nodes);
	/* Jobs the new one would preempt: running ones its pass sent to preempted. */
	json_t *pre = json_array();
	char ptext[512] = "";
	size_t plen = 0;
	for (size_t i = 0; i < r->n_ev; i++)
		if (r->ev[i].to == XP_JS_PREEMPTED) {
			const struct xp_qjob *v = xp_sched_job(r->s, r->ev[i].job);
			json_array_append_new(pre, json_integer(v->id));
			if (plen < sizeof ptext)
				plen += (size_t)snprintf(ptext + plen, sizeof ptext - plen, "%s%lld", plen ? "," : "",
							 (long long)v->id);
		}
	int64_t eta = now ? r->now : r->eta ? r->eta[k] : -1;
	const char *en = !now && r->eta_nodes && (size_t)k < r->n_eta ? r->eta_nodes[k] : NULL;
	if (ctx->json) {
		json_t *o = json_object();
		json_object_set_new(o, "start_now", json_boolean(now));
		json_object_set_new(o, "reason", now ? json_null() : reason_json(j->reason, j->reason_text));
		json_object_set_new(o, "position", position_json(j, !now));
		json_object_set_new(o, "eta", eta >= 0 ? json_string(iso(eta, b, sizeof b)) : json_null());
		json_object_set_new(o, "preempts", pre);
		json_object_set_new(o, "nodes", now ? nodes_json(j, r->c) : names_json(eta >= 0 ? en : NULL));
		json_object_set_new(o, "strategy", json_string(xp_strategy_name(strategy)));
		xp_print_json(ctx->out, o);
	} else {
		json_decref(pre);
		if (now)
			fprintf(ctx->out, "job would start now on %s (%s)\n", nodes, xp_strategy_name(strategy));
		else {
			fprintf(ctx->out, "job would wait: %s (%d): %s", xp_reason_name(j->reason), j->reason,
				j->reason_text ? j->reason_text : "");
			if (j->pos_queue)
				fprintf(ctx->out, "; position %zu in %s, %zu overall", j->pos_queue, j->queue, j->pos_global);
			fprintf(ctx->out, "; estimated start %s%s%s\n", eta >= 0 ? iso(eta, b, sizeof b) : "beyond 24h",
				eta >= 0 && en ? " on " : "", eta >= 0 && en ? en : "");
		}
		if (plen)
			fprintf(ctx->out, "  Preempts: %s\n", ptext);
	}
	return now ? XP_EXIT_OK : XP_EXIT_UNPLACEABLE;
}

static int do_submit(struct xp_ctx *ctx, const struct xp_args *a, struct xp_store *s)
{
	struct xp_err err = {{0}};
	const char *sname = xp_args_get(a, "strategy");
	int strategy = sname ? xp_strategy_parse(sname) : XP_STRAT_PACK;
	if (strategy < 0) {
		xp_errf(&err, "--strategy: unknown strategy %.40s (pack, spread, topology, green)", sname);
		return fail(ctx, "submit", XP_EXIT_USAGE, &err);
	}
	int64_t now;
	if (xp_jobrun_now(&now, &err) < 0)
		return fail(ctx, "submit", XP_EXIT_USAGE, &err);
	int code;
	struct xp_qjob *j = submit_job(ctx, a, now, &code);
	if (!j)
		return code;
	struct xp_manifest *ms[XP_PLACE_MANIFESTS];
	size_t nm = xp_place_manifests(ms);
	int crc = xp_job_check(j->spec, (const struct xp_manifest *const *)ms, nm, &err);
	xp_place_manifests_free(ms, nm);
	if (crc < 0) {
		xp_qjob_clear(j);
		free(j);
		return fail(ctx, "submit", XP_EXIT_USAGE, &err);
	}
	bool dry = xp_args_has(a, "dry-run");
	int rc = XP_EXIT_ERROR;
	struct xp_jobrun r = {0};
	if (!dry && xp_store_begin(s, &err) < 0)
		goto out;
	if (xp_jobrun_load(&r, ctx, s, now, true, &err) < 0 || xp_jobrun_build(&r, strategy, &err) < 0 ||
	    xp_jobrun_advance(&r, &err) < 0)
		goto out;
	if (!xp_qset_queue(&r.qs, j->queue)) {
		xp_errf(&err, "no queue '%s' (`xpool queue list` lists them)", j->queue);
		goto out;
	}
	if (!dry) {
		r.actor = s->actor;
		if (xp_jstore_insert(s, j, r.c, &err) < 0)
			goto out;
		r.actor = NULL;
	}
	/* A dry-run's job sorts where the real one would: after every stored job of its second
	 * (ties of submit time go by id). */
	if (dry)
		j->id = r.n ? r.jobs[r.n - 1].id + 1 : 1;
	struct xp_qjob copy;
	xp_jstore_job_copy(&copy, j);
	r.actor = s->actor;
	int64_t k = xp_jobrun_add(&r, &copy, &err);
	r.actor = NULL;
	if (k < 0 || xp_jobrun_pass(&r, &err) < 0)
		goto out;
	if (dry) {
		if (!(xp_sched_job(r.s, (size_t)k)->state == XP_JS_RUNNING) && xp_jobrun_eta(&r, j, &err) < 0)
			goto out;
		rc = dry_run_print(ctx, &r, k, strategy);
		goto out;
	}
	if (xp_jobrun_save(&r, s, &err) < 0 || xp_store_commit(s, &err) < 0)
		goto out;
	rc = XP_EXIT_OK;
	const struct xp_qjob *now_j = xp_sched_job(r.s, (size_t)k);
	if (ctx->json)
		xp_print_json(ctx->out, xp_jstore_job_json(now_j, r.c));
	else {
		char nodes[1024];
		nodes_text(now_j, r.c, nodes, sizeof nodes);
		if (now_j->state == XP_JS_RUNNING) {
			fprintf(ctx->out, "job %lld submitted to %s: running on %s", (long long)now_j->id, now_j->queue,
				nodes);
			/* The jobs its start preempted, as the dry-run names them. */
			size_t np = 0;
			for (size_t i = 0; i < r.n_ev; i++)
				if (r.ev[i].to == XP_JS_PREEMPTED)
					fprintf(ctx->out, "%s%lld", np++ ? "," : "; preempted ",
						(long long)xp_sched_job(r.s, r.ev[i].job)->id);
			fputc('\n', ctx->out);
		}
		else
			fprintf(ctx->out, "job %lld submitted to %s: %s, %s: %s\n", (long long)now_j->id, now_j->queue,
				xp_jstate_name(now_j->state), xp_reason_name(now_j->reason),
				now_j->reason_text ? now_j->reason_text : "");
	}
out:
	if (rc == XP_EXIT_ERROR) {
		if (!dry)
			xp_store_rollback(s);
		if (err.msg[0])
			fail(ctx, "submit", rc, &err);
	}
	xp_jobrun_free(&r);
	xp_qjob_clear(j);
	free(j);
	return rc;
}

static int do_action(struct xp_ctx *ctx, const struct xp_args *a, struct xp_store *s)
{
	const char *words = a->argv[0];
	const char *action = strcmp(words, "cancel") == 0 ? "job.cancel" : strcmp(words, "hold") == 0 ? "job.hold"
													: "job.release";
	struct xp_err err = {{0}};
	int n = a->argc - 1;
	int64_t *ids = xp_calloc((size_t)n, sizeof *ids);
	for (int i = 0; i < n; i++)
		if (parse_id(a->argv[i + 1], &ids[i], &err) < 0) {
			free(ids);
			return fail(ctx, words, XP_EXIT_USAGE, &err);
		}
	int64_t now;
	if (xp_jobrun_now(&now, &err) < 0) {
		free(ids);
		return fail(ctx, words, XP_EXIT_USAGE, &err);
	}
	int rc = XP_EXIT_ERROR;
	struct xp_jobrun r = {0};
	struct xp_qjob *before = xp_calloc((size_t)n, sizeof *before);
	size_t *rows = xp_calloc((size_t)n, sizeof *rows);
	int copied = 0;
	if (xp_store_begin(s, &err) < 0)
		goto out;
	if (xp_jobrun_load(&r, ctx, s, now, false, &err) < 0 || xp_jobrun_build(&r, 0, &err) < 0 ||
	    xp_jobrun_advance(&r, &err) < 0)
		goto out;
	for (int i = 0; i < n; i++) {
		rows[i] = xp_jobrun_find(&r, ids[i]);
		if (rows[i] == SIZE_MAX) {
			xp_errf(&err, "no job %lld (`xpool job list` lists them)", (long long)ids[i]);
			goto out;
		}
		for (int k = 0; k < i; k++)
			if (ids[k] == ids[i]) {
				xp_errf(&err, "job %lld is named twice", (long long)ids[i]);
				goto out;
			}
	}
	for (int i = 0; i < n; i++) {
		const struct xp_qjob *j = xp_jobrun_job(&r, rows[i]);
		xp_jstore_job_copy(&before[i], j);
		copied++;
		int64_t k = r.six[rows[i]];
		if (k < 0 && words[0] == 'c' && !xp_jstate_final(j->state)) {
			/* Not scheduled here (its devices are gone from this cluster, its spec is
			 * unreadable): a cancel still ends it, in the row alone. */
			struct xp_qjob *row = &r.jobs[rows[i]];
			int from = row->state;
			row->state = XP_JS_CANCELLED;
			row->end = now;
			row->reason = XP_R_NONE;
			free(row->reason_text);
			row->reason_text = NULL;
			free(row->alloc.slots);
			row->alloc = (struct xp_qalloc){NULL, 0, -1};
			char detail[600];
			snprintf(detail, sizeof detail, "cancelled while not scheduled: %s", r.note[rows[i]] ? r.note[rows[i]] : "");
			if (xp_jstore_update(s, row, r.c, &err) < 0 ||
			    xp_jstore_event(s, row->id, now, from, XP_JS_CANCELLED, XP_R_NONE, detail, s->actor, &err) < 0)
				goto out;
			continue;
		}
		if (k < 0) {
			xp_errf(&err, "job %lld is %s: nothing to %s", (long long)ids[i], xp_jstate_name(j->state), words);
			goto out;
		}
		r.actor = s->actor;
		int arc = words[0] == 'c' ? xp_sched_cancel(r.s, (size_t)k, now, &err)
			  : words[0] == 'h' ? xp_sched_hold(r.s, (size_t)k, now, &err)
					    : xp_sched_release(r.s, (size_t)k, now, &err);
		r.actor = NULL;
		if (arc < 0) {
			char m[sizeof err.msg];
			snprintf(m, sizeof m, "%s", err.msg);
			xp_errf(&err, "job %lld: %s", (long long)ids[i], m);
			goto out;
		}
	}
	if (xp_jobrun_pass(&r, &err) < 0 || xp_jobrun_save(&r, s, &err) < 0)
		goto out;
	for (int i = 0; i < n; i++)
		if (xp_jstore_audit(s, action, &before[i], xp_jobrun_job(&r, rows[i]), r.c, &err) < 0)
			goto out;
	if (xp_store_commit(s, &err) < 0)
		goto out;
	rc = XP_EXIT_OK;
	json_t *arr = ctx->json ? json_array() : NULL;
	for (int i = 0; i < n; i++) {
		const struct xp_qjob *j = xp_jobrun_job(&r, rows[i]);
		if (arr)
			json_array_append_new(arr, xp_jstore_job_json(j, r.c));
		else
			fprintf(ctx->out, "job %lld %s\n", (long long)j->id,
				words[0] == 'c' ? "cancelled" : words[0] == 'h' ? "held" : "released");
	}
	if (arr)
		xp_print_json_list(ctx->out, "jobs", arr);
out:
	if (rc != XP_EXIT_OK) {
		xp_store_rollback(s);
		fail(ctx, words, rc, &err);
	}
	for (int i = 0; i < copied; i++)
		xp_qjob_clear(&before[i]);
	free(before);
	free(rows);
	free(ids);
	xp_jobrun_free(&r);
	return rc;
}

static int job_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	const struct jsub *u = NULL;
	for (const struct jsub *x = jsubs; a->argc > 0 && x->name && !u; x++)
		if (strcmp(x->name, a->argv[0]) == 0)
			u = x;
	if (!u) {
		xp_ctx_error(ctx, "job: %s%s (try submit, list, show, cancel, hold or release)",
			     a->argc ? "unknown subcommand " : "which subcommand?", a->argc ? a->argv[0] : "");
		return XP_EXIT_USAGE;
	}
	char words[32];
	int rc = xp_args_sub_check(ctx, a, &(struct xp_subuse){NULL, u->name, u->usage, u->opts, u->min, u->max}, words,
				   sizeof words);
	if (rc)
		return rc;
	bool writes = u->writes && !(u->fn == do_submit && xp_args_has(a, "dry-run"));
	if (writes && xp_jobrun_engine(ctx)) {
		xp_ctx_error(ctx, "job %s: xpool reads %s's jobs and never changes them (submit --dry-run "
				  "asks where a job would go)", words, xp_jobrun_engine(ctx));
		return XP_EXIT_USAGE;
	}
	struct xp_err err = {{0}};
	struct xp_store *s = writes ? xp_store_open(ctx->db, &err) : xp_store_for_reading(ctx->db, NULL, &err);
	if (!s) {
		xp_ctx_error(ctx, "job %s: %s", words, err.msg);
		return XP_EXIT_ERROR;
	}
	rc = u->fn(ctx, a, s);
	xp_store_close(s);
	return rc;
}

static const struct xp_subcmd job_subs[] = {
	{"submit", true}, {"list", true}, {"show", true}, {"hold", true}, {"release", true}, {"cancel", true},
	{NULL, false},
};
const struct xp_cmd_entry xp_cmd_job_entry = {
	.name = "job",
	.alias = NULL,
	.usage = "submit [-f JOB.json | job flags] --queue Q [--tenant T] [--priority N] --estimate DUR [--dry-run] "
		 "[--strategy S] | list [--queue Q] [--state S] [--tenant T] | show ID | cancel ID... | hold ID... | "
		 "release ID...",
	.summary = "workload jobs in queues: submit (or ask whether one would start now), list with reasons, "
		   "positions and estimated starts, show, cancel, hold, release",
	.opts = job_opts,
	.min_args = 0,
	.max_args = 1001,
	.exec = job_exec,
	.subs = job_subs,
};
