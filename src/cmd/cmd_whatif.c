/* cmd_whatif.c: `xpool whatif`: a workload (a trace) simulated on the cluster as it is and on
 * a copy with changes (nodes drained, devices failed, nodes added, a queue's quota, another
 * strategy), both at once, and the two side by side: each queue's waits, the jobs that would
 * never start and why, preemptions, utilization per resource class over time, ECU-hours per
 * tenant (src/queue/whatif.h). It never writes: the database is opened for reading only. */
#include <errno.h>
#include <langinfo.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd.h"
#include "format.h"
#include "engine_hold.h"
#include "jobrun.h"
#include "jstore.h"
#include "place.h"
#include "qstore.h"
#include "slurm.h"
#include "store_open.h"
#include "table.h"
#include "trace.h"
#include "whatif.h"

static const struct xp_opt whatif_opts[] = {
	{"trace", 0, "FILE", "the workload: a trace of JSON lines (`xpool sim trace`; xpool(1) TRACE FORMAT)"},
	{"jobs-from-store", 0, NULL, "the workload: the database's unfinished jobs (the engine's with --slurm or --k8s), from now ($XPOOL_NOW)"},
	{"drain", 0, "NODE,..", "scenario: drain these nodes (running jobs finish, nothing new starts)"},
	{"fail", 0, "NODE:DEV,..", "scenario: these devices fail at the start"},
	{"add", 0, "N:KIND", "scenario: add N idle nodes of a sim gen kind (nvidia-h100, ...)"},
	{"quota", 0, "QUEUE:CLASS=N,..", "scenario: the queue deserves N devices of the class"},
	{"strategy", 0, "S", "scenario: place by strategy S (pack, spread, ...; the baseline packs)"},
	{"horizon", 0, "DUR", "how long to simulate: 90m, 24h, 7d (default 24h)"},
	{NULL, 0, NULL, NULL},
};

/* Parses a duration: a number with s, m, h or d (none: seconds), 60 s to 366 days. */
static int duration_parse(const char *s, int64_t *out)
{
	char *end = NULL;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (end == s || errno || v < 0 || s[0] == '+' || s[0] == '-')
		return -1;
	int64_t mul = 1;
	if (*end == 's')
		end++;
	else if (*end == 'm')
		mul = 60, end++;
	else if (*end == 'h')
		mul = 3600, end++;
	else if (*end == 'd')
		mul = 86400, end++;
	if (*end || v > 366LL * 86400)
		return -1;
	*out = v * mul;
	return *out >= 60 && *out <= 366LL * 86400 ? 0 : -1;
}

/* Splits a comma-separated option into changes of one kind, appended to *cs. */
static int changes_add(const char *text, int kind, struct xp_whatif_change **cs, size_t *n, struct xp_err *err)
{
	const char *p = text;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char *item = xp_strndup(p, len);
		*cs = xp_realloc(*cs, (*n + 1) * sizeof **cs);
		int rc = xp_whatif_change_parse(kind, item, &(*cs)[*n], err);
		free(item);
		if (rc < 0)
			return -1;
		(*n)++;
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* "a | b", or "a" when both say the same. */
static void pair(char *buf, size_t len, const char *a, const char *b)
{
	/* A cell cut short is still a cell: the table shows what fits. */
	int n = strcmp(a, b) == 0 ? snprintf(buf, len, "%s", a) : snprintf(buf, len, "%s | %s", a, b);
	if (n < 0)
		buf[0] = 0;
}

/* The commonest reason a queue's jobs never started, "" when all started. */
static const char *top_reason(const struct xp_qsim_queue *q)
{
	int best = -1;
	for (int k = 0; k < XP_R_COUNT; k++)
		if (q->never_reasons[k] && (best < 0 || q->never_reasons[k] > q->never_reasons[best]))
			best = k;
	return best < 0 ? "" : xp_reason_name(best);
}

static void never_cell(const struct xp_qsim_queue *q, char *buf, size_t len)
{
	if (!q)
		snprintf(buf, len, "-");
	else if (q->never)
		snprintf(buf, len, "%zu %s", q->never, top_reason(q));
	else
		snprintf(buf, len, "0");
}

static const struct xp_qsim_queue *queue_of(const struct xp_qsim_report *r, const char *name)
{
	for (size_t i = 0; i < r->n_queues; i++)
		if (strcmp(r->queues[i].name, name) == 0)
			return &r->queues[i];
	return NULL;
}

static const struct xp_qsim_util *util_of(const struct xp_qsim_report *r, const char *name)
{
	for (size_t i = 0; i < r->n_util; i++)
		if (strcmp(r->util[i].rclass, name) == 0)
			return &r->util[i];
	return NULL;
}

static const struct xp_qsim_tenant *tenant_of(const struct xp_qsim_report *r, const char *name)
{
	for (size_t i = 0; i < r->n_tenants; i++)
		if (strcmp(r->tenants[i].name, name) == 0)
			return &r->tenants[i];
	return NULL;
}

/* A sparkline of the buckets: eight block heights in UTF-8, ASCII steps otherwise. */
static void spark(const struct xp_qsim_util *u, size_t n, bool utf8, char *buf, size_t len)
{
	static const char *const blocks[] = {" ", "\u2581", "\u2582", "\u2583", "\u2584",
					     "\u2585", "\u2586", "\u2587", "\u2588"};
	static const char ascii[] = " .:-=+*#%@";
	size_t off = 0;
	buf[0] = 0;
	for (size_t i = 0; u && i < n && off + 4 < len; i++) {
		double v = u->bucket[i] < 0 ? 0 : u->bucket[i] > 1 ? 1 : u->bucket[i];
		if (utf8) {
			int k = v > 0 ? 1 + (int)(v * 7.999) : 0;
			off += (size_t)snprintf(buf + off, len - off, "%s", blocks[k]);
		} else {
			int k = v > 0 ? 1 + (int)(v * 8.999) : 0;
			buf[off++] = ascii[k];
			buf[off] = 0;
		}
	}
}

static void print_text(struct xp_ctx *ctx, const struct xp_whatif_result *res, const char *source, size_t jobs,
		       const char *horizon)
{
	FILE *f = ctx->out;
	const struct xp_qsim_report *b = &res->baseline, *s = &res->scenario;
	char h[32], x[128], y[128], z[128], w[128], v[128];
	fprintf(f, "baseline | scenario: ");
	for (size_t i = 0; i < res->n_changes; i++)
		fprintf(f, "%s%s", i ? "; " : "", res->changes[i]);
	fprintf(f, "%s\n", res->n_changes ? "" : "no change");
	fprintf(f, "%zu jobs from %s, horizon %s\n\n", jobs, source, horizon);

	struct xp_table t;
	xp_table_init(&t, 7);
	xp_table_row(&t, "QUEUE", "STARTED", "WAIT P50", "WAIT P95", "WAIT MAX", "NEVER STARTED", "PREEMPTED");
	for (size_t i = 0; i < b->n_queues; i++) {
		const struct xp_qsim_queue *qb = &b->queues[i], *qs = queue_of(s, qb->name);
		char a1[32], a2[32], st[80], pre[80];
		snprintf(a1, sizeof a1, "%zu", qb->started);
		snprintf(a2, sizeof a2, "%zu", qs ? qs->started : 0);
		pair(st, sizeof st, a1, a2);
		pair(x, sizeof x, xp_fmt_span(a1, sizeof a1, qb->wait_p50),
		     xp_fmt_span(a2, sizeof a2, qs ? qs->wait_p50 : -1));
		pair(y, sizeof y, xp_fmt_span(a1, sizeof a1, qb->wait_p95),
		     xp_fmt_span(a2, sizeof a2, qs ? qs->wait_p95 : -1));
		pair(z, sizeof z, xp_fmt_span(a1, sizeof a1, qb->wait_max),
		     xp_fmt_span(a2, sizeof a2, qs ? qs->wait_max : -1));
		char n1[64], n2[64];
		never_cell(qb, n1, sizeof n1);
		never_cell(qs, n2, sizeof n2);
		pair(w, sizeof w, n1, n2);
		snprintf(a1, sizeof a1, "%zu", qb->preempted);
		snprintf(a2, sizeof a2, "%zu", qs ? qs->preempted : 0);
		pair(pre, sizeof pre, a1, a2);
		xp_table_row(&t, qb->name, st, x, y, z, w, pre);
	}
	xp_table_print(&t, f, "");
	xp_table_free(&t);

	/* Utilization: the union of both runs' rows (an added kind is the scenario's only). */
	const char *cs = nl_langinfo(CODESET);
	bool utf8 = !ctx->ascii && cs && (strcasecmp(cs, "UTF-8") == 0 || strcasecmp(cs, "utf8") == 0);
	fprintf(f, "\n");
	xp_table_init(&t, 4);
	snprintf(v, sizeof v, "OVER TIME (%zu x %s)", b->n_buckets, xp_fmt_span(h, sizeof h, (int64_t)b->bucket_s));
	xp_table_row(&t, "CLASS", "DEVICES", "MEAN", v);
	for (int side = 0; side < 2; side++) {
		const struct xp_qsim_report *r = side ? s : b;
		for (size_t i = 0; i < r->n_util; i++) {
			const char *name = r->util[i].rclass;
			if (side && util_of(b, name))
				continue;
			const struct xp_qsim_util *ub = util_of(b, name), *us = util_of(s, name);
			char a1[32], a2[32], dv[80], mean[80], sp[1024];
			snprintf(a1, sizeof a1, "%zu", ub ? ub->devices : 0);
			snprintf(a2, sizeof a2, "%zu", us ? us->devices : 0);
			pair(dv, sizeof dv, a1, a2);
			snprintf(a1, sizeof a1, "%.0f%%", ub ? ub->mean * 100 : 0);
			snprintf(a2, sizeof a2, "%.0f%%", us ? us->mean * 100 : 0);
			pair(mean, sizeof mean, a1, a2);
			spark(ub, b->n_buckets, utf8, sp, sizeof sp);
			char line[1100];
			snprintf(line, sizeof line, "baseline %s", sp);
			xp_table_row(&t, name, dv, mean, line);
			spark(us, s->n_buckets, utf8, sp, sizeof sp);
			snprintf(line, sizeof line, "scenario %s", sp);
			xp_table_row(&t, "", "", "", line);
		}
	}
	xp_table_print(&t, f, "");
	xp_table_free(&t);

	fprintf(f, "\n");
	xp_table_init(&t, 3);
	xp_table_row(&t, "TENANT", "ECU-HOURS", "DEVICE-HOURS");
	for (int side = 0; side < 2; side++) {
		const struct xp_qsim_report *r = side ? s : b;
		for (size_t i = 0; i < r->n_tenants; i++) {
			const char *name = r->tenants[i].name;
			if (side && tenant_of(b, name))
				continue;
			const struct xp_qsim_tenant *tb = tenant_of(b, name), *ts = tenant_of(s, name);
			char a1[32], a2[32];
			snprintf(a1, sizeof a1, "%.1f", tb ? tb->ecu_hours : 0);
			snprintf(a2, sizeof a2, "%.1f", ts ? ts->ecu_hours : 0);
			pair(x, sizeof x, a1, a2);
			snprintf(a1, sizeof a1, "%.1f", tb ? tb->device_hours : 0);
			snprintf(a2, sizeof a2, "%.1f", ts ? ts->device_hours : 0);
			pair(y, sizeof y, a1, a2);
			xp_table_row(&t, name, x, y);
		}
	}
	xp_table_print(&t, f, "");
	xp_table_free(&t);
}

static int whatif_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	struct xp_err err = {{0}};
	const char *trace = xp_args_get(a, "trace"), *v;
	bool from_store = xp_args_has(a, "jobs-from-store");
	if (!!trace == from_store) {
		xp_ctx_error(ctx, "whatif: give the workload: --trace FILE or --jobs-from-store%s",
			     trace ? " (one of them, not both)" : "");
		return XP_EXIT_USAGE;
	}
	/* A what-if asks what the queues would see: a MIG slice goes where an instance could be
	 * made, as a scheduler with dynamic partitioning (and `place --reconfigure`) would. */
	struct xp_whatif w = {.strategy = -1, .horizon_s = 86400, .seed = 1, .reconfigure = true};
	struct xp_whatif_change *cs = NULL;
	size_t n_cs = 0;
	int rc = XP_EXIT_USAGE;
	struct xp_trace t = {0};
	struct xp_qset store_qs = {0};
	char **skipped = NULL; /* an engine's waiting jobs not simulated, and why */
	size_t n_skipped = 0;
	struct xp_manifest *ms[XP_PLACE_MANIFESTS];
	size_t n_ms = 0;
	struct xp_cluster *c = NULL;
	bool own_c = false; /* c is a share of the context's (xp_engine_hold_share) */
	if (((v = xp_args_get(a, "drain")) && changes_add(v, XP_WI_DRAIN, &cs, &n_cs, &err) < 0) ||
	    ((v = xp_args_get(a, "fail")) && changes_add(v, XP_WI_FAIL, &cs, &n_cs, &err) < 0) ||
	    ((v = xp_args_get(a, "add")) && changes_add(v, XP_WI_ADD, &cs, &n_cs, &err) < 0) ||
	    ((v = xp_args_get(a, "quota")) && changes_add(v, XP_WI_QUOTA, &cs, &n_cs, &err) < 0)) {
		xp_ctx_error(ctx, "whatif: %s", err.msg);
		goto out;
	}
	if ((v = xp_args_get(a, "strategy")) && (w.strategy = xp_strategy_parse(v)) < 0) {
		xp_ctx_error(ctx, "whatif: --strategy: unknown strategy '%s'", v);
		goto out;
	}
	if ((v = xp_args_get(a, "horizon")) && duration_parse(v, &w.horizon_s) < 0) {
		xp_ctx_error(ctx, "whatif: --horizon: '%s' is not a duration from 60s to 366d (90m, 24h, 7d)", v);
		goto out;
	}
	rc = XP_EXIT_ERROR;
	const struct xp_qset *qs = &t.qs;
	const char *source = trace;
	if (from_store) {
		/* The database's queues and unfinished jobs from now: read only, never written. */
		source = "the database";
		if (xp_jobrun_now(&w.t0, &err) < 0) {
			xp_ctx_error(ctx, "whatif: %s", err.msg);
			goto out;
		}
		if (!(c = xp_ctx_cluster(ctx)))
			goto out;
		struct xp_qjob *all = NULL;
		size_t n_all = 0;
		bool *lost = NULL;
		int lrc;
		if (xp_jobrun_engine(ctx)) {
			/* A live engine's queues and jobs, not the database's. Its running jobs that
			 * name their nodes take their devices from the nodes' in-use counts and end
			 * at their time limit (xp_engine_hold); the others' devices stay held by the
			 * nodes for the whole horizon. */
			source = xp_jobrun_engine(ctx);
			lrc = xp_jobrun_engine_load(ctx, &store_qs, &all, &n_all, &err);
			lost = xp_calloc(n_all + 1, sizeof *lost);
			c = xp_engine_hold_share(c);
			own_c = true;
			bool *held = xp_calloc(n_all + 1, sizeof *held);
			if (lrc == 0)
				xp_engine_hold(c, all, n_all, held);
			for (size_t i = 0; i < n_all; i++)
				lost[i] = (all[i].state == XP_JS_RUNNING || all[i].state == XP_JS_ADMITTED) && !held[i];
			free(held);
			/* Slurm's waiting jobs fitted to its nodes as `job list` does (untyped GPUs
			 * take their partition's kind); one xpool cannot simulate is left out, said. */
			for (size_t i = 0; lrc == 0 && i < n_all; i++) {
				bool waiting = !lost[i] && !xp_jstate_final(all[i].state) && all[i].state != XP_JS_RUNNING &&
					       all[i].state != XP_JS_ADMITTED;
				char *why = waiting && ctx->slurm ? xp_slurm_job_fit(&all[i], c) : NULL;
				/* One the engine files where no queue it shows is: left out, rather than
				 * no answer for all the others. */
				if (!why && !lost[i] && !xp_jstate_final(all[i].state) &&
				    !xp_qset_queue(&store_qs, all[i].queue ? all[i].queue : ""))
					why = xp_asprintf("no queue '%s' among %s's", all[i].queue ? all[i].queue : "", source);
				if (why) {
					char *line = xp_asprintf("job %lld (%s %s): %s", (long long)all[i].id, all[i].engine,
								 all[i].engine_id ? all[i].engine_id : "-", why);
					xp_strv_add(&skipped, &n_skipped, line);
					free(line);
					free(why);
					lost[i] = true;
				}
			}
		} else {
			struct xp_store *s = xp_store_for_reading(ctx->db, NULL, &err);
			lrc = s ? xp_qstore_load(s, &store_qs, &err) : -1;
			if (!lrc)
				lrc = xp_jstore_load(s, c, &all, &n_all, &lost, &err);
			xp_store_close(s);
		}
		if (lrc < 0) {
			for (size_t i = 0; i < n_all; i++)
				xp_qjob_clear(&all[i]);
			free(all);
			free(lost);
			xp_ctx_error(ctx, "whatif: %s", err.msg);
			goto out;
		}
		qs = &store_qs;
		/* Finished jobs are history; a job whose devices are on nodes this cluster lacks
		 * cannot be placed back (job list names it). */
		t.jobs = xp_calloc(n_all + 1, sizeof *t.jobs);
		for (size_t i = 0; i < n_all; i++) {
			if (!xp_jstate_final(all[i].state) && !(lost && lost[i])) {
				t.jobs[t.n_jobs++] = all[i];
				memset(&all[i], 0, sizeof all[i]);
			}
			xp_qjob_clear(&all[i]);
		}
		free(all);
		free(lost);
	} else if (xp_trace_read(trace, &t, &err) < 0) {
		xp_ctx_error(ctx, "whatif: %s", err.msg);
		goto out;
	}
	if (!from_store && !t.has_queues) {
		/* The trace names queues the database defines: read it, never write it. */
		struct xp_store *s = xp_store_for_reading(ctx->db, NULL, &err);
		int lrc = s ? xp_qstore_load(s, &store_qs, &err) : -1;
		xp_store_close(s);
		if (lrc < 0) {
			xp_ctx_error(ctx, "whatif: %s", err.msg);
			goto out;
		}
		qs = &store_qs;
		for (size_t i = 0; i < t.n_jobs; i++)
			if (!xp_qset_queue(qs, t.jobs[i].queue)) {
				xp_ctx_error(ctx, "whatif: %s: job %s: no queue '%s' in the trace or the database (`xpool queue "
						  "list`)",
					     trace, t.jobs[i].name, t.jobs[i].queue);
				goto out;
			}
	}
	if (!c && !(c = xp_ctx_cluster(ctx)))
		goto out;
	n_ms = xp_place_manifests(ms);
	w.cluster = c;
	w.ms = (const struct xp_manifest *const *)ms;
	w.n_ms = n_ms;
	w.qs = qs;
	w.jobs = t.jobs;
	w.n_jobs = t.n_jobs;
	w.changes = cs;
	w.n_changes = n_cs;
	struct xp_whatif_result res;
	if (xp_whatif_run(&w, &res, &err) < 0) {
		xp_ctx_error(ctx, "whatif: %s", err.msg);
		goto out;
	}
	if (ctx->json)
		xp_print_json(ctx->out, xp_whatif_json(&res));
	else
		print_text(ctx, &res, source, t.n_jobs, xp_args_has(a, "horizon") ? xp_args_get(a, "horizon") : "24h");
	for (size_t i = 0; !ctx->json && i < n_skipped; i++)
		fprintf(ctx->out, "not simulated: %s\n", skipped[i]);
	xp_whatif_result_clear(&res);
	rc = XP_EXIT_OK;
out:
	xp_strv_free(skipped, n_skipped);
	for (size_t i = 0; i < n_cs; i++)
		xp_whatif_change_clear(&cs[i]);
	free(cs);
	xp_trace_clear(&t);
	xp_qset_clear(&store_qs);
	xp_place_manifests_free(ms, n_ms);
	if (own_c)
		xp_cluster_free(c);
	return rc;
}

const struct xp_cmd_entry xp_cmd_whatif_entry = {
	.name = "whatif",
	.alias = NULL,
	.usage = "--trace FILE | --jobs-from-store [--drain NODE,..] [--fail NODE:DEV,..] [--add N:KIND] [--quota QUEUE:CLASS=N,..] "
		 "[--strategy S] [--horizon DUR] [--json]",
	.summary = "simulate a workload on the cluster and on a changed copy, side by side",
	.opts = whatif_opts,
	.min_args = 0,
	.max_args = 0,
	.exec = whatif_exec,
	.json = true,
};
