/* cmd_queue.c: `xpool queue list|show|add|set|rm` and `xpool queue class add|list|rm`: the
 * workload queues, their quotas per resource class, and the classes (src/queue). Looking
 * (list, show, class list) opens the database read-only, or an empty one when there is none:
 * it never creates or changes the file. Each write is one transaction with its audit row. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "jobrun.h"
#include "jstore.h"
#include "model.h"
#include "qmodel.h"
#include "qstore.h"
#include "store.h"
#include "store_open.h"
#include "table.h"

static const char *order_value(int i)
{
	return i < XP_QO_COUNT ? xp_qorder_name(i) : NULL;
}

static const char *state_value(int i)
{
	return i < XP_QS_COUNT ? xp_qstate_name(i) : NULL;
}

static const char *within_value(int i)
{
	return i < 3 ? xp_qpolicy_name(i) : NULL;
}

static const char *reclaim_value(int i)
{
	static const int v[] = {XP_QP_NEVER, XP_QP_LOWER_PRIORITY, XP_QP_ANY};
	return i < 3 ? xp_qpolicy_name(v[i]) : NULL;
}

static const char *yes_no_value(int i)
{
	return i == 0 ? "yes" : i == 1 ? "no" : NULL;
}

static const struct xp_opt queue_opts[] = {
	{"parent", 0, "QUEUE", "add, set: the parent queue (a cohort); set: '-' for none"},
	{"weight", 0, "W", "add, set: share weight, > 0 (default 1)"},
	{"priority", 0, "N", "add, set: queue priority (default 0)"},
	{"tenants", 0, "T,..", "add, set: tenants allowed (default, or '-': every tenant)"},
	{"ordering", 0, "ORDER", "add, set: best-effort or strict FIFO (default best-effort)", order_value},
	{"state", 0, "STATE", "add, set: open, hold (admit nothing) or drain (also evict) (default open)", state_value},
	{"within", 0, "POLICY", "add, set: preemption within the queue: never, lower-priority, lower-or-newer",
	 within_value},
	{"reclaim", 0, "POLICY", "add, set: taking back what was lent: never, lower-priority, any", reclaim_value},
	{"reclaimable", 0, "yes|no", "add, set: whether what it borrowed may be reclaimed (default yes)", yes_no_value},
	{"quota", 0, "CLASS:RES=G/D[/M[/B[/L]]],..",
	 "add, set: quotas (RES devices|ecu|cpus|memory; M max, B borrowing, L lending limit, '-' unlimited)"},
	{"drop-quota", 0, "CLASS:RES,..", "set: remove these quotas"},
	{"vendor", 0, "GLOB", "class add: the vendor or adapter glob (\"NVIDIA\", \"ascend\")"},
	{"model", 0, "GLOB", "class add: the model glob (\"*H100*\")"},
	{"label", 0, "KEY=VALUE", "class add: the pool label its nodes carry (instead of globs)"},
	{NULL, 0, NULL, NULL},
};

/* What each form takes: its words, positional count and the options that apply. */
struct qsub {
	const char *group, *name, *usage, *opts;
	int nargs;
	bool writes;
	int (*fn)(struct xp_ctx *ctx, const struct xp_args *a, const char *arg, struct xp_store *s);
};

static int do_list(struct xp_ctx *ctx, const struct xp_args *a, const char *arg, struct xp_store *s);
static int do_show(struct xp_ctx *ctx, const struct xp_args *a, const char *arg, struct xp_store *s);
static int do_put(struct xp_ctx *ctx, const struct xp_args *a, const char *arg, struct xp_store *s);
static int do_rm(struct xp_ctx *ctx, const struct xp_args *a, const char *arg, struct xp_store *s);
static int do_class_add(struct xp_ctx *ctx, const struct xp_args *a, const char *arg, struct xp_store *s);
static int do_class_list(struct xp_ctx *ctx, const struct xp_args *a, const char *arg, struct xp_store *s);
static int do_class_rm(struct xp_ctx *ctx, const struct xp_args *a, const char *arg, struct xp_store *s);

#define QUEUE_OPTS " parent weight priority tenants ordering state within reclaim reclaimable quota "
static const struct qsub qsubs[] = {
	{NULL, "list", "[--json]", " ", 0, false, do_list},
	{NULL, "show", "NAME [--json]", " ", 1, false, do_show},
	{NULL, "add", "NAME [options]", QUEUE_OPTS, 1, true, do_put},
	{NULL, "set", "NAME [options] [--drop-quota CLASS:RES,..]", QUEUE_OPTS "drop-quota ", 1, true, do_put},
	{NULL, "rm", "NAME", " ", 1, true, do_rm},
	{"class", "add", "NAME --vendor GLOB [--model GLOB] | --label KEY=VALUE", " vendor model label ", 1, true,
	 do_class_add},
	{"class", "list", "[--json]", " ", 0, false, do_class_list},
	{"class", "rm", "NAME", " ", 1, true, do_class_rm},
	{NULL, NULL, NULL, NULL, 0, false, NULL},
};

/* "NAME: message" in err, as a usage (2) or runtime (1) failure of the form words. */
static int fail(struct xp_ctx *ctx, const char *words, int code, const struct xp_err *err)
{
	xp_ctx_error(ctx, "queue %s: %s", words, err->msg);
	return code;
}

/* Begins a write: the transaction that holds its checks and its audit row, and the queues and
 * classes as they are inside it. 0, or the exit code after saying why (nothing left open). */
static int write_begin(struct xp_ctx *ctx, struct xp_store *s, const char *words, struct xp_qset *set)
{
	struct xp_err err = {{0}};
	if (xp_store_begin(s, &err) < 0)
		return fail(ctx, words, XP_EXIT_ERROR, &err);
	if (xp_qstore_load(s, set, &err) < 0) {
		xp_store_rollback(s);
		return fail(ctx, words, XP_EXIT_ERROR, &err);
	}
	return 0;
}

/* Writes a quantity, or "unlimited". */
static const char *amount(int64_t milli, char *buf, size_t size)
{
	return xp_qamount_format(milli, buf, size);
}

static void tenants_cell(const struct xp_queue *q, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < q->n_tenants && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? "," : "", q->tenants[i]);
	if (!q->n_tenants)
		snprintf(buf, size, "(all)");
}

/* The store's jobs at now, in memory (jobrun.h): what each queue uses, holds and waits for.
 * 0, or the exit code after saying why. */
static int usage_run(struct xp_ctx *ctx, struct xp_store *s, const char *words, struct xp_jobrun *r)
{
	struct xp_err err = {{0}};
	int64_t now;
	if (xp_jobrun_now(&now, &err) < 0)
		return fail(ctx, words, XP_EXIT_USAGE, &err);
	if (xp_jobrun_load(r, ctx, s, now, false, &err) < 0 || xp_jobrun_build(r, 0, &err) < 0 ||
	    xp_jobrun_advance(r, &err) < 0 || xp_jobrun_pass(r, &err) < 0) {
		xp_jobrun_free(r);
		return fail(ctx, words, XP_EXIT_ERROR, &err);
	}
	return 0;
}

/* How many of queue name's jobs are pending (held ones too: they wait) and running. */
static void job_counts(const struct xp_jobrun *r, const char *name, size_t *pending, size_t *running)
{
	*pending = *running = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct xp_qjob *j = xp_jobrun_job(r, i);
		if (strcmp(j->queue, name) != 0)
			continue;
		if (j->state == XP_JS_PENDING || j->state == XP_JS_HELD)
			(*pending)++;
		else if (j->state == XP_JS_RUNNING || j->state == XP_JS_ADMITTED)
			(*running)++;
	}
}

/* What queue q (index qi in r's set) uses under quota u, milli-units (0 with no scheduler). */
static int64_t quota_used(const struct xp_jobrun *r, size_t qi, const struct xp_quota *u)
{
	if (!r->s)
		return 0;
	for (size_t ci = 0; ci < r->qs.n_classes; ci++)
		if (strcmp(r->qs.classes[ci].name, u->rclass) == 0)
			return xp_sched_used(r->s, qi, ci, u->res);
	return 0;
}

/* "h100 8/8/16" per quota (the resource named unless devices): used/deserved/max. */
static void usage_cell(const struct xp_jobrun *r, size_t qi, char *buf, size_t size, bool borrowed)
{
	const struct xp_queue *q = &r->qs.queues[qi];
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < q->n_quotas && len < size; i++) {
		const struct xp_quota *u = &q->quotas[i];
		int64_t used = quota_used(r, qi, u);
		char res[48], a[32], d[32], m[32];
		if (u->res == XP_RES_DEVICES)
			snprintf(res, sizeof res, "%s", u->rclass);
		else
			snprintf(res, sizeof res, "%s:%s", u->rclass, xp_res_name(u->res));
		if (borrowed) {
			if (used > u->deserved)
				len += (size_t)snprintf(buf + len, size - len, "%s%s %s", len ? "," : "", res,
							xp_qamount_format(used - u->deserved, a, sizeof a));
			continue;
		}
		xp_qamount_format(used, a, sizeof a);
		xp_qamount_format(u->deserved, d, sizeof d);
		if (u->max < 0)
			snprintf(m, sizeof m, "-");
		else
			xp_qamount_format(u->max, m, sizeof m);
		len += (size_t)snprintf(buf + len, size - len, "%s%s %s/%s/%s", len ? "," : "", res, a, d, m);
	}
	if (!buf[0])
		snprintf(buf, size, "-");
}

/* Milli-units as the queue JSON writes quotas: whole units as integers. */
static json_t *milli_json(int64_t milli)
{
	return milli % 1000 == 0 ? json_integer((json_int_t)(milli / 1000)) : json_real((double)milli / 1000.0);
}

/* q's JSON with what it uses, borrows, and its pending and running jobs. */
static json_t *queue_usage_json(const struct xp_jobrun *r, size_t qi)
{
	const struct xp_queue *q = &r->qs.queues[qi];
	json_t *o = xp_queue_json(q);
	json_t *arr = json_object_get(o, "quotas");
	for (size_t i = 0; i < q->n_quotas && i < json_array_size(arr); i++) {
		int64_t used = quota_used(r, qi, &q->quotas[i]);
		json_t *e = json_array_get(arr, i);
		json_object_set_new(e, "used", milli_json(used));
		json_object_set_new(e, "borrowed",
				    milli_json(used > q->quotas[i].deserved ? used - q->quotas[i].deserved : 0));
	}
	size_t pending, running;
	job_counts(r, q->name, &pending, &running);
	json_object_set_new(o, "pending", json_integer((json_int_t)pending));
	json_object_set_new(o, "running", json_integer((json_int_t)running));
	return o;
}

static int do_list(struct xp_ctx *ctx, const struct xp_args *a, const char *arg, struct xp_store *s)
{
	(void)a, (void)arg;
	struct xp_jobrun r;
	int rc = usage_run(ctx, s, "list", &r);
	if (rc)
		return rc;
	const struct xp_qset *set = &r.qs;
	if (ctx->json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < set->n_queues; i++)
			json_array_append_new(arr, queue_usage_json(&r, i));
		if (set->n_notes) {
			/* A live engine's words on its queues as a whole (what it could not say). */
			json_t *o = json_object(), *notes = json_array();
			json_object_set_new(o, "queues", arr);
			for (size_t i = 0; i < set->n_notes; i++)
				json_array_append_new(notes, json_string(set->notes[i]));
			json_object_set_new(o, "notes", notes);
			xp_print_json(ctx->out, o);
		} else
			xp_print_json_list(ctx->out, "queues", arr);
	} else if (!set->n_queues) {
		fprintf(ctx->out, "no queues (add one with `xpool queue add NAME`)\n");
	} else {
		struct xp_table t;
		xp_table_init(&t, 10);
		xp_table_row(&t, "NAME", "PARENT", "WEIGHT", "PRIORITY", "STATE", "TENANTS", "PENDING", "RUNNING",
			     "USED/DESERVED/MAX", "BORROWED");
		for (size_t i = 0; i < set->n_queues; i++) {
			const struct xp_queue *q = &set->queues[i];
			char w[32], p[16], ten[256], use[512], bor[512], pe[24], ru[24];
			size_t pending, running;
			snprintf(w, sizeof w, "%g", q->weight);
			snprintf(p, sizeof p, "%d", q->priority);
			tenants_cell(q, ten, sizeof ten);
			usage_cell(&r, i, use, sizeof use, false);
			usage_cell(&r, i, bor, sizeof bor, true);
			job_counts(&r, q->name, &pending, &running);
			snprintf(pe, sizeof pe, "%zu", pending);
			snprintf(ru, sizeof ru, "%zu", running);
			xp_table_row(&t, q->name, q->parent ? q->parent : "-", w, p, xp_qstate_name(q->state), ten, pe, ru,
				     use, bor);
		}
		xp_table_print(&t, ctx->out, "");
		xp_table_free(&t);
	}
	for (size_t i = 0; !ctx->json && i < set->n_notes; i++)
		fprintf(ctx->out, "note: %s\n", set->notes[i]);
	xp_jobrun_free(&r);
	return XP_EXIT_OK;
}

static void print_quotas(FILE *out, const struct xp_jobrun *r, size_t qi)
{
	const struct xp_queue *q = &r->qs.queues[qi];
	if (!q->n_quotas) {
		fprintf(out, "quotas:      none (limited only by its parent and the cluster)\n");
		return;
	}
	struct xp_table t;
	xp_table_init(&t, 9);
	xp_table_row(&t, "CLASS", "RESOURCE", "USED", "GUARANTEED", "DESERVED", "MAX", "BORROWED", "BORROW", "LEND");
	for (size_t i = 0; i < q->n_quotas; i++) {
		const struct xp_quota *u = &q->quotas[i];
		int64_t used = quota_used(r, qi, u);
		char us[32], g[32], d[32], m[32], bo[32], b[32], l[32];
		xp_table_row(&t, u->rclass, xp_res_name(u->res), amount(used, us, sizeof us),
			     amount(u->guaranteed, g, sizeof g), amount(u->deserved, d, sizeof d),
			     amount(u->max, m, sizeof m), amount(used > u->deserved ? used - u->deserved : 0, bo, sizeof bo),
			     amount(u->borrowing_limit, b, sizeof b), amount(u->lending_limit, l, sizeof l));
	}
	xp_table_print(&t, out, "  ");
	xp_table_free(&t);
	bool mem = false;
	for (size_t i = 0; i < q->n_quotas; i++)
		mem = mem || q->quotas[i].res == XP_RES_MEMORY;
	if (mem)
		fprintf(out, "  (memory in GiB)\n");
}

static int do_show(struct xp_ctx *ctx, const struct xp_args *a, const char *arg, struct xp_store *s)
{
	(void)a;
	struct xp_err err = {{0}};
	if (xp_qname_check(arg, "queue name", &err) < 0)
		return fail(ctx, "show", XP_EXIT_USAGE, &err);
	struct xp_jobrun r;
	int rc = usage_run(ctx, s, "show", &r);
	if (rc)
		return rc;
	const struct xp_qset *set = &r.qs;
	const struct xp_queue *q = xp_qset_queue(set, arg);
	size_t qi = q ? (size_t)(q - set->queues) : 0;
	if (!q) {
		xp_ctx_error(ctx, "queue show: no queue '%s' (`xpool queue list` lists them)", arg);
		rc = XP_EXIT_ERROR;
	} else if (ctx->json) {
		json_t *o = queue_usage_json(&r, qi);
		json_t *kids = json_array();
		for (size_t i = 0; i < set->n_queues; i++)
			if (set->queues[i].parent && strcmp(set->queues[i].parent, q->name) == 0)
				json_array_append_new(kids, json_string(set->queues[i].name));
		json_object_set_new(o, "children", kids);
		xp_print_json(ctx->out, o);
	} else {
		char ten[256];
		tenants_cell(q, ten, sizeof ten);
		fprintf(ctx->out, "queue:       %s\nparent:      %s\n", q->name, q->parent ? q->parent : "-");
		fprintf(ctx->out, "children:    ");
		size_t nk = 0;
		for (size_t i = 0; i < set->n_queues; i++)
			if (set->queues[i].parent && strcmp(set->queues[i].parent, q->name) == 0)
				fprintf(ctx->out, "%s%s", nk++ ? "," : "", set->queues[i].name);
		fprintf(ctx->out, "%s\n", nk ? "" : "-");
		fprintf(ctx->out, "tenants:     %s\nweight:      %g\npriority:    %d\nstate:       %s\n", ten, q->weight,
			q->priority, xp_qstate_name(q->state));
		fprintf(ctx->out, "ordering:    %s\nreclaimable: %s\npreemption:  within %s, reclaim %s\n",
			xp_qorder_name(q->order), q->reclaimable ? "yes" : "no", xp_qpolicy_name(q->within),
			xp_qpolicy_name(q->reclaim));
		size_t pending, running;
		job_counts(&r, q->name, &pending, &running);
		fprintf(ctx->out, "jobs:        %zu running, %zu pending\n", running, pending);
		if (q->engine_text)
			fprintf(ctx->out, "engine:      %s\n", q->engine_text);
		print_quotas(ctx->out, &r, qi);
	}
	xp_jobrun_free(&r);
	return rc;
}

/* Reads the queue options of a into q (a copy of the stored one for set, defaults for add).
 * Usage errors (the option's text) return XP_EXIT_USAGE with err naming the option. */
static int read_opts(const struct xp_args *a, struct xp_queue *q, struct xp_err *err)
{
	const char *v;
	if ((v = xp_args_get(a, "parent"))) {
		free(q->parent);
		q->parent = NULL;
		if (strcmp(v, "-") != 0) {
			if (xp_qname_check(v, "--parent", err) < 0)
				return -1;
			q->parent = xp_strdup(v);
		}
	}
	if ((v = xp_args_get(a, "weight"))) {
		char *end;
		errno = 0;
		double w = strtod(v, &end);
		if (end == v || *end || errno || !isfinite(w) || !(w > 0) || w > 1e6)
			return xp_errf(err, "--weight: '%.40s' is not a number above 0 and at most 1000000", v);
		q->weight = w;
	}
	if ((v = xp_args_get(a, "priority"))) {
		char *end;
		errno = 0;
		long p = strtol(v, &end, 10);
		if (end == v || *end || errno || p < -1000000000L || p > 1000000000L)
			return xp_errf(err, "--priority: '%.40s' is not a whole number within +-1000000000", v);
		q->priority = (int)p;
	}
	if ((v = xp_args_get(a, "tenants"))) {
		char **t;
		size_t n;
		if (xp_tenants_parse(v, &t, &n, err) < 0)
			return -1;
		xp_strv_free(q->tenants, q->n_tenants);
		q->tenants = t;
		q->n_tenants = n;
	}
	if ((v = xp_args_get(a, "ordering")) && (q->order = xp_qorder_parse(v)) < 0)
		return xp_errf(err, "--ordering: '%.40s' is not best-effort or strict", v);
	if ((v = xp_args_get(a, "state")) && (q->state = xp_qstate_parse(v)) < 0)
		return xp_errf(err, "--state: '%.40s' is not open, hold or drain", v);
	if ((v = xp_args_get(a, "within")) &&
	    ((q->within = xp_qpolicy_parse(v)) < 0 || q->within == XP_QP_ANY))
		return xp_errf(err, "--within: '%.40s' is not never, lower-priority or lower-or-newer", v);
	if ((v = xp_args_get(a, "reclaim")) &&
	    ((q->reclaim = xp_qpolicy_parse(v)) < 0 || q->reclaim == XP_QP_LOWER_OR_NEWER))
		return xp_errf(err, "--reclaim: '%.40s' is not never, lower-priority or any", v);
	if ((v = xp_args_get(a, "reclaimable"))) {
		if (strcmp(v, "yes") != 0 && strcmp(v, "no") != 0)
			return xp_errf(err, "--reclaimable: '%.40s' is not yes or no", v);
		q->reclaimable = strcmp(v, "yes") == 0;
	}
	if ((v = xp_args_get(a, "drop-quota"))) {
		/* The same CLASS:RES form as --quota, with no numbers. */
		const char *p = v;
		for (;;) {
			size_t len = strcspn(p, ",");
			char *e = xp_strndup(p, len);
			char *colon = strchr(e, ':');
			int res = colon ? xp_res_parse(colon + 1) : -1;
			if (colon)
				*colon = '\0';
			size_t j = 0;
			for (; res >= 0 && j < q->n_quotas; j++)
				if (strcmp(q->quotas[j].rclass, e) == 0 && q->quotas[j].res == res)
					break;
			if (res < 0 || j == q->n_quotas) {
				xp_errf(err, "--drop-quota: '%.80s' is not a quota of %s (CLASS:RES)", p, q->name);
				free(e);
				return -1;
			}
			free(e);
			free(q->quotas[j].rclass);
			q->quotas[j] = q->quotas[--q->n_quotas];
			if (!p[len])
				break;
			p += len + 1;
		}
	}
	if ((v = xp_args_get(a, "quota"))) {
		struct xp_quota *nq;
		size_t n;
		if (xp_quotas_parse(v, &nq, &n, err) < 0)
			return -1;
		/* Each given (class, resource) replaces the stored one whole; the others stay. */
		for (size_t i = 0; i < n; i++) {
			size_t j = 0;
			for (; j < q->n_quotas; j++)
				if (strcmp(q->quotas[j].rclass, nq[i].rclass) == 0 && q->quotas[j].res == nq[i].res)
					break;
			if (j == q->n_quotas)
				q->quotas = xp_realloc(q->quotas, ++q->n_quotas * sizeof *q->quotas);
			else
				free(q->quotas[j].rclass);
			q->quotas[j] = nq[i];
		}
		free(nq);
	}
	return 0;
}

/* A deep copy of q. */
static void queue_copy(struct xp_queue *dst, const struct xp_queue *q)
{
	*dst = *q;
	dst->name = xp_strdup(q->name);
	dst->parent = xp_strdup(q->parent);
	dst->engine_text = xp_strdup(q->engine_text);
	dst->tenants = q->n_tenants ? xp_calloc(q->n_tenants, sizeof *dst->tenants) : NULL;
	for (size_t i = 0; i < q->n_tenants; i++)
		dst->tenants[i] = xp_strdup(q->tenants[i]);
	dst->quotas = q->n_quotas ? xp_calloc(q->n_quotas, sizeof *dst->quotas) : NULL;
	for (size_t i = 0; i < q->n_quotas; i++) {
		dst->quotas[i] = q->quotas[i];
		dst->quotas[i].rclass = xp_strdup(q->quotas[i].rclass);
	}
}

static int do_put(struct xp_ctx *ctx, const struct xp_args *a, const char *arg, struct xp_store *s)
{
	bool add = strcmp(a->argv[0], "add") == 0;
	const char *words = add ? "add" : "set";
	struct xp_err err = {{0}};
	if (xp_qname_check(arg, "queue name", &err) < 0)
		return fail(ctx, words, XP_EXIT_USAGE, &err);
	struct xp_qset set;
	int brc = write_begin(ctx, s, words, &set);
	if (brc)
		return brc;
	struct xp_queue *old = xp_qset_queue(&set, arg), q = {0};
	int rc = XP_EXIT_ERROR;
	if (add && old) {
		xp_errf(&err, "queue '%s' exists (change it with `xpool queue set`)", arg);
		goto out;
	}
	if (!add && !old) {
		xp_errf(&err, "no queue '%s' (`xpool queue list` lists them)", arg);
		goto out;
	}
	if (!add) {
		bool any = false;
		for (int i = 0; queue_opts[i].name; i++)
			any = any || a->set[i];
		if (!any) {
			/* An audit row saying nothing changed would only be noise. */
			xp_errf(&err, "nothing to change: give an option (xpool help queue)");
			rc = XP_EXIT_USAGE;
			goto out;
		}
	}
	if (old)
		queue_copy(&q, old);
	else
		q = (struct xp_queue){.name = xp_strdup(arg), .weight = 1, .reclaimable = true};
	if (read_opts(a, &q, &err) < 0) {
		rc = XP_EXIT_USAGE;
		goto out;
	}
	if (xp_qset_parent_check(&set, q.name, q.parent, &err) < 0)
		goto out;
	for (size_t i = 0; i < q.n_quotas; i++) {
		const struct xp_rclass *c = xp_qset_class(&set, q.quotas[i].rclass);
		if (xp_quota_check(&q.quotas[i], c, &err) < 0) {
			rc = c ? XP_EXIT_USAGE : XP_EXIT_ERROR;
			goto out;
		}
	}
	if (xp_qstore_queue_put(s, &q, old, &err) < 0 || xp_store_commit(s, &err) < 0)
		goto out;
	rc = XP_EXIT_OK;
	if (ctx->json)
		xp_print_json(ctx->out, xp_queue_json(&q));
	else
		fprintf(ctx->out, "queue %s %s\n", q.name, add ? "added" : "changed");
out:
	if (rc != XP_EXIT_OK) {
		xp_store_rollback(s);
		fail(ctx, words, rc, &err);
	}
	xp_queue_clear(&q);
	xp_qset_clear(&set);
	return rc;
}

static int do_rm(struct xp_ctx *ctx, const struct xp_args *a, const char *arg, struct xp_store *s)
{
	(void)a;
	struct xp_err err = {{0}};
	if (xp_qname_check(arg, "queue name", &err) < 0)
		return fail(ctx, "rm", XP_EXIT_USAGE, &err);
	struct xp_qset set;
	int brc = write_begin(ctx, s, "rm", &set);
	if (brc)
		return brc;
	const struct xp_queue *q = xp_qset_queue(&set, arg);
	size_t kids = q ? xp_qset_children(&set, arg) : 0;
	int64_t unfinished = 0;
	int rc = XP_EXIT_ERROR;
	if (!q)
		xp_errf(&err, "no queue '%s' (`xpool queue list` lists them)", arg);
	else if (kids)
		xp_errf(&err, "queue %s has %zu child queue%s: remove them or give them another parent first "
			      "(`xpool queue set CHILD --parent ...`)",
			arg, kids, kids == 1 ? "" : "s");
	else if (xp_jstore_unfinished(s, arg, &unfinished, &err) < 0)
		;
	else if (unfinished > 0)
		xp_errf(&err, "queue %s has %lld unfinished job%s: cancel them first (`xpool job list --queue %s`)", arg,
			(long long)unfinished, unfinished == 1 ? "" : "s", arg);
	else if (xp_qstore_queue_rm(s, q, &err) == 0 && xp_store_commit(s, &err) == 0)
		rc = XP_EXIT_OK;
	if (rc == XP_EXIT_OK) {
		if (ctx->json)
			xp_print_json(ctx->out, xp_queue_json(q));
		else
			fprintf(ctx->out, "queue %s removed\n", arg);
	} else {
		xp_store_rollback(s);
		fail(ctx, "rm", rc, &err);
	}
	xp_qset_clear(&set);
	return rc;
}

static int do_class_add(struct xp_ctx *ctx, const struct xp_args *a, const char *arg, struct xp_store *s)
{
	struct xp_err err = {{0}};
	struct xp_rclass c = {.name = (char *)arg, .vendor = (char *)xp_args_get(a, "vendor"),
			      .model = (char *)xp_args_get(a, "model"), .label = (char *)xp_args_get(a, "label")};
	if (xp_qname_check(arg, "class name", &err) < 0 || (c.vendor && xp_qglob_check(c.vendor, "--vendor", &err) < 0) ||
	    (c.model && xp_qglob_check(c.model, "--model", &err) < 0) || (c.label && xp_qlabel_check(c.label, &err) < 0))
		return fail(ctx, "class add", XP_EXIT_USAGE, &err);
	if (!c.label && !c.vendor && !c.model) {
		xp_errf(&err, "class %s: give --vendor and/or --model globs, or --label KEY=VALUE", arg);
		return fail(ctx, "class add", XP_EXIT_USAGE, &err);
	}
	if (c.label && (c.vendor || c.model)) {
		xp_errf(&err, "class %s: --label or globs (--vendor, --model), not both", arg);
		return fail(ctx, "class add", XP_EXIT_USAGE, &err);
	}
	struct xp_qset set;
	int brc = write_begin(ctx, s, "class add", &set);
	if (brc)
		return brc;
	int rc = XP_EXIT_ERROR;
	if (xp_qset_class(&set, arg))
		xp_errf(&err, "class '%s' exists", arg);
	else if (xp_qstore_class_add(s, &c, &err) == 0 && xp_store_commit(s, &err) == 0)
		rc = XP_EXIT_OK;
	if (rc != XP_EXIT_OK) {
		xp_store_rollback(s);
		fail(ctx, "class add", rc, &err);
	} else if (ctx->json)
		xp_print_json(ctx->out, xp_rclass_json(&c));
	else
		fprintf(ctx->out, "class %s added\n", arg);
	xp_qset_clear(&set);
	return rc;
}

static int do_class_list(struct xp_ctx *ctx, const struct xp_args *a, const char *arg, struct xp_store *s)
{
	(void)a, (void)arg;
	struct xp_qset set;
	struct xp_err err = {{0}};
	if (xp_qstore_load(s, &set, &err) < 0)
		return fail(ctx, "class list", XP_EXIT_ERROR, &err);
	if (ctx->json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < set.n_classes; i++)
			json_array_append_new(arr, xp_rclass_json(&set.classes[i]));
		xp_print_json_list(ctx->out, "classes", arr);
	} else {
		struct xp_table t;
		xp_table_init(&t, 4);
		xp_table_row(&t, "CLASS", "MATCHES", "RESOURCES", "QUEUES");
		for (size_t i = 0; i < set.n_classes; i++) {
			const struct xp_rclass *c = &set.classes[i];
			char m[300], nq[16];
			if (c->builtin)
				snprintf(m, sizeof m, "(built-in: %s)", strcmp(c->name, "cpu") == 0 ? "host CPUs" : "host memory");
			else if (c->label)
				snprintf(m, sizeof m, "label %s", c->label);
			else
				snprintf(m, sizeof m, "vendor %s model %s", c->vendor ? c->vendor : "*",
					 c->model ? c->model : "*");
			size_t n = 0;
			for (size_t j = 0; j < set.n_queues; j++)
				for (size_t k = 0; k < set.queues[j].n_quotas; k++)
					if (strcmp(set.queues[j].quotas[k].rclass, c->name) == 0) {
						n++;
						break;
					}
			snprintf(nq, sizeof nq, "%zu", n);
			const char *res = !c->builtin ? "devices, ecu" : strcmp(c->name, "cpu") == 0 ? "cpus" : "memory";
			xp_table_row(&t, c->name, m, res, nq);
		}
		xp_table_print(&t, ctx->out, "");
		xp_table_free(&t);
	}
	xp_qset_clear(&set);
	return XP_EXIT_OK;
}

static int do_class_rm(struct xp_ctx *ctx, const struct xp_args *a, const char *arg, struct xp_store *s)
{
	(void)a;
	struct xp_err err = {{0}};
	if (xp_qname_check(arg, "class name", &err) < 0)
		return fail(ctx, "class rm", XP_EXIT_USAGE, &err);
	struct xp_qset set;
	int brc = write_begin(ctx, s, "class rm", &set);
	if (brc)
		return brc;
	const struct xp_rclass *c = xp_qset_class(&set, arg);
	const char *user = NULL;
	for (size_t j = 0; c && !user && j < set.n_queues; j++)
		for (size_t k = 0; k < set.queues[j].n_quotas; k++)
			if (strcmp(set.queues[j].quotas[k].rclass, arg) == 0)
				user = set.queues[j].name;
	int rc = XP_EXIT_ERROR;
	if (!c)
		xp_errf(&err, "no class '%s' (`xpool queue class list` lists them)", arg);
	else if (c->builtin)
		xp_errf(&err, "class %s is built in and stays", arg);
	else if (user)
		xp_errf(&err, "class %s is used by queue %s's quotas: drop them first (`xpool queue set %s --drop-quota "
			      "%s:RES`)",
			arg, user, user, arg);
	else if (xp_qstore_class_rm(s, c, &err) == 0 && xp_store_commit(s, &err) == 0)
		rc = XP_EXIT_OK;
	if (rc != XP_EXIT_OK) {
		xp_store_rollback(s);
		fail(ctx, "class rm", rc, &err);
	} else if (ctx->json)
		xp_print_json(ctx->out, xp_rclass_json(c));
	else
		fprintf(ctx->out, "class %s removed\n", arg);
	xp_qset_clear(&set);
	return rc;
}

static int queue_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	const struct qsub *u = NULL;
	bool group = a->argc > 0 && strcmp(a->argv[0], "class") == 0;
	for (const struct qsub *x = qsubs; a->argc > 0 && x->name && !u; x++)
		if (group ? x->group && a->argc > 1 && strcmp(x->name, a->argv[1]) == 0
			  : !x->group && strcmp(x->name, a->argv[0]) == 0)
			u = x;
	if (!u) {
		if (group)
			xp_ctx_error(ctx, "queue class: %s%s (try add, list or rm)",
				     a->argc > 1 ? "unknown subcommand " : "which subcommand?", a->argc > 1 ? a->argv[1] : "");
		else
			xp_ctx_error(ctx, "queue: %s%s (try list, show, add, set, rm or class)",
				     a->argc ? "unknown subcommand " : "which subcommand?", a->argc ? a->argv[0] : "");
		return XP_EXIT_USAGE;
	}
	char words[32];
	int rc = xp_args_sub_check(ctx, a, &(struct xp_subuse){u->group, u->name, u->usage, u->opts, u->nargs, u->nargs},
				   words, sizeof words);
	if (rc)
		return rc;
	int skip = u->group ? 2 : 1;
	if (xp_jobrun_engine(ctx) && u->writes) {
		xp_ctx_error(ctx, "queue %s: xpool shows %s's queues read-only", words, xp_jobrun_engine(ctx));
		return XP_EXIT_USAGE;
	}
	struct xp_err err = {{0}};
	struct xp_store *s = u->writes ? xp_store_open(ctx->db, &err) : xp_store_for_reading(ctx->db, NULL, &err);
	if (!s) {
		xp_ctx_error(ctx, "queue %s: %s", words, err.msg);
		return XP_EXIT_ERROR;
	}
	rc = u->fn(ctx, a, u->nargs ? a->argv[skip] : NULL, s);
	xp_store_close(s);
	return rc;
}

static const struct xp_subcmd queue_subs[] = {
	{"list", true},	     {"show", true},	   {"add", true},	   {"set", true}, {"rm", true},
	{"class add", true}, {"class list", true}, {"class rm", true}, {NULL, false},
};
const struct xp_cmd_entry xp_cmd_queue_entry = {
	.name = "queue",
	.alias = NULL,
	.usage = "list | show NAME | add NAME [options] | set NAME [options] | rm NAME | class add NAME "
		 "--vendor GLOB [--model GLOB] | --label KEY=VALUE | class list | class rm NAME",
	.summary = "workload queues, their quotas per resource class, and the classes",
	.opts = queue_opts,
	.min_args = 1,
	.max_args = 3,
	.exec = queue_exec,
	.subs = queue_subs,
};
