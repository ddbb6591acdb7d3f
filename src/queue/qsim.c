/* qsim.c: the discrete-event simulator (qsim.h): a binary min-heap of events, ordered by
 * time, then kind (job ends before arrivals at the same time, so that a job arriving as
 * another ends sees its devices free), then insertion order; one scheduling pass after the
 * last event of each timestamp. What starts and ends is learnt from the scheduler's state
 * changes (xp_sched_listen); utilization is the integral of busy devices per class, a
 * piecewise-constant function of time, cut into buckets at the end. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "qsim.h"

/* Event kinds, in their order at one time. */
enum { EV_END, EV_SUBMIT };

struct ev {
	int64_t time;
	int kind;
	uint32_t gen;  /* EV_END: the job's run it ends (a preempted run's end is stale) */
	uint64_t seq;
	size_t ix;     /* EV_END: job index in the scheduler; EV_SUBMIT: index in arrivals */
};

/* One busy-device change of one utilization row, in milli-devices. */
struct uchange {
	int64_t time;
	uint32_t row;
	int64_t delta;
};

/* What the simulator keeps per scheduler job. */
struct jrec {
	uint32_t gen;      /* runs started so far */
	bool running;      /* counted as running (its devices are in busy) */
	bool started;      /* started at least once: its wait is known */
	int64_t run_start; /* the current run's start */
	double ecu, dev;   /* ECU and devices it holds while it runs */
	uint32_t *rows;    /* its slots' utilization rows and milli-devices, n_rows pairs */
	int64_t *milli;
	size_t n_rows;
};

struct run {
	struct xp_sched *s;
	const struct xp_qsim_opts *o;
	struct ev *heap;
	size_t n_heap, cap_heap;
	uint64_t seq;
	struct jrec *jobs;
	size_t cap_jobs;
	/* Utilization rows: the set's device classes, then models of unclassed devices. */
	char **row_name;
	size_t *row_devices;
	size_t n_rows;
	int *class_row;           /* qs class index -> row, -1 */
	uint32_t **dev_row;       /* [node][pos] -> row */
	struct uchange *changes;
	size_t n_changes, cap_changes;
	/* Per queue, the waits of started jobs. */
	int64_t **waits;
	size_t *n_waits, *cap_waits;
	size_t *preempted;
	/* Tenants, by name (sorted at the end). */
	struct xp_qsim_tenant *tenants;
	size_t n_tenants, cap_tenants;
	int64_t now;
	bool failed;
	struct xp_err *err;
};

static bool ev_less(const struct ev *a, const struct ev *b)
{
	if (a->time != b->time)
		return a->time < b->time;
	if (a->kind != b->kind)
		return a->kind < b->kind;
	return a->seq < b->seq;
}

static void heap_push(struct run *r, struct ev e)
{
	e.seq = r->seq++;
	xp_grow(&r->heap, sizeof *r->heap, r->n_heap, &r->cap_heap);
	size_t i = r->n_heap++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!ev_less(&e, &r->heap[p]))
			break;
		r->heap[i] = r->heap[p];
		i = p;
	}
	r->heap[i] = e;
}

static struct ev heap_pop(struct run *r)
{
	struct ev top = r->heap[0], last = r->heap[--r->n_heap];
	size_t i = 0, n = r->n_heap;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && ev_less(&r->heap[c + 1], &r->heap[c]))
			c++;
		if (!ev_less(&r->heap[c], &last))
			break;
		r->heap[i] = r->heap[c];
		i = c;
	}
	if (n)
		r->heap[i] = last;
	return top;
}

static struct jrec *jrec(struct run *r, size_t ix)
{
	xp_grow(&r->jobs, sizeof *r->jobs, ix, &r->cap_jobs);
	return &r->jobs[ix];
}

/* The queue index of a job in the set, -1 when none. */
static long queue_ix(const struct run *r, const char *name)
{
	if (!r->o->qs || !name)
		return -1;
	for (size_t i = 0; i < r->o->qs->n_queues; i++)
		if (strcmp(r->o->qs->queues[i].name, name) == 0)
			return (long)i;
	return -1;
}

static struct xp_qsim_tenant *tenant(struct run *r, const char *name)
{
	if (!name)
		name = "-";
	for (size_t i = 0; i < r->n_tenants; i++)
		if (strcmp(r->tenants[i].name, name) == 0)
			return &r->tenants[i];
	xp_grow(&r->tenants, sizeof *r->tenants, r->n_tenants, &r->cap_tenants);
	struct xp_qsim_tenant *t = &r->tenants[r->n_tenants++];
	*t = (struct xp_qsim_tenant){.name = xp_strdup(name)};
	return t;
}

static void change(struct run *r, int64_t time, uint32_t row, int64_t delta)
{
	xp_grow(&r->changes, sizeof *r->changes, r->n_changes, &r->cap_changes);
	r->changes[r->n_changes++] = (struct uchange){time, row, delta};
}

/* Job ix starts running at time: its devices count as busy, its END goes on the heap. */
static void job_started(struct run *r, size_t ix, int64_t time)
{
	const struct xp_qjob *j = xp_sched_job(r->s, ix);
	struct jrec *jr = jrec(r, ix);
	if (jr->running)
		return;
	jr->running = true;
	jr->run_start = time;
	jr->gen++;
	if (!jr->started) {
		jr->started = true;
		long q = queue_ix(r, j->queue);
		if (q >= 0) {
			xp_grow(&r->waits[q], sizeof *r->waits[q], r->n_waits[q], &r->cap_waits[q]);
			r->waits[q][r->n_waits[q]++] = time - j->submit > 0 ? time - j->submit : 0;
		}
	}
	jr->ecu = jr->dev = 0;
	jr->n_rows = 0;
	const struct xp_cluster *c = r->o->cluster;
	if (c && j->alloc.n) {
		jr->rows = xp_realloc(jr->rows, j->alloc.n * sizeof *jr->rows);
		jr->milli = xp_realloc(jr->milli, j->alloc.n * sizeof *jr->milli);
		for (size_t k = 0; k < j->alloc.n; k++) {
			const struct xp_qslot *sl = &j->alloc.slots[k];
			if (sl->node_ix >= c->n_nodes || sl->pos >= c->nodes[sl->node_ix]->n_devices)
				continue;
			const struct xp_device *d = &c->nodes[sl->node_ix]->devices[sl->pos];
			double share = sl->take / 1000.0;
			jr->dev += share;
			if (!isnan(d->ecu) && d->ecu > 0)
				jr->ecu += d->ecu * share;
			uint32_t row = r->dev_row[sl->node_ix][sl->pos];
			size_t m = 0;
			while (m < jr->n_rows && jr->rows[m] != row)
				m++;
			if (m == jr->n_rows) {
				jr->rows[m] = row;
				jr->milli[m] = 0;
				jr->n_rows++;
			}
			jr->milli[m] += sl->take;
		}
		for (size_t m = 0; m < jr->n_rows; m++)
			change(r, time, jr->rows[m], jr->milli[m]);
	}
	/* The estimate is a time limit (Slurm's --time): a job that would run longer is stopped
	 * there, as Slurm ends it TIMEOUT, so that backfill, which plans by estimates, never
	 * delays the head job's reserved start. */
	int64_t d = j->actual_s >= 0 && j->actual_s < j->est_s ? j->actual_s : j->est_s;
	heap_push(r, (struct ev){.time = time + d, .kind = EV_END, .gen = jr->gen, .ix = ix});
}

/* Job ix stops running at time (ended, failed, preempted, cancelled). */
static void job_stopped(struct run *r, size_t ix, int64_t time)
{
	struct jrec *jr = jrec(r, ix);
	if (!jr->running)
		return;
	jr->running = false;
	for (size_t m = 0; m < jr->n_rows; m++)
		change(r, time, jr->rows[m], -jr->milli[m]);
	double h = (double)(time - jr->run_start) / 3600.0;
	struct xp_qsim_tenant *t = tenant(r, xp_sched_job(r->s, ix)->tenant);
	t->ecu_hours += jr->ecu * h;
	t->device_hours += jr->dev * h;
}

static void on_event(void *ctx, const struct xp_sched_event *ev)
{
	struct run *r = ctx;
	if (ev->to == XP_JS_RUNNING)
		job_started(r, ev->job, ev->time);
	else if (ev->from == XP_JS_RUNNING || ev->from == XP_JS_ADMITTED)
		job_stopped(r, ev->job, ev->time);
	if (ev->to == XP_JS_PREEMPTED) {
		long q = queue_ix(r, xp_sched_job(r->s, ev->job)->queue);
		if (q >= 0)
			r->preempted[q]++;
	}
	if (r->o->also)
		r->o->also(r->o->also_ctx, ev);
}

/* Utilization rows: every device class of the set (in its order) that has a device, then,
 * for devices of no class, one row per model (sorted by name). */
static void rows_build(struct run *r)
{
	const struct xp_cluster *c = r->o->cluster;
	const struct xp_qset *qs = r->o->qs;
	size_t nc = qs ? qs->n_classes : 0;
	r->class_row = xp_calloc(nc + 1, sizeof *r->class_row);
	size_t *class_n = xp_calloc(nc + 1, sizeof *class_n);
	r->dev_row = xp_calloc(c->n_nodes + 1, sizeof *r->dev_row);
	/* First pass: which classes have devices, and the models of unclassed ones. */
	char **models = NULL;
	size_t *model_n = NULL, n_models = 0, cap_models = 0, cap_mn = 0;
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct xp_node *nd = c->nodes[i];
		r->dev_row[i] = xp_calloc(nd->n_devices + 1, sizeof **r->dev_row);
		for (size_t d = 0; d < nd->n_devices; d++) {
			int ci = nc ? xp_sched_device_class(r->s, i, d) : -1;
			if (ci >= 0 && (size_t)ci < nc) {
				class_n[ci]++;
				r->dev_row[i][d] = (uint32_t)ci; /* a class index for now */
				continue;
			}
			const char *m = nd->devices[d].model ? nd->devices[d].model : "unknown";
			size_t k = 0;
			while (k < n_models && strcmp(models[k], m) != 0)
				k++;
			if (k == n_models) {
				xp_grow(&models, sizeof *models, n_models, &cap_models);
				xp_grow(&model_n, sizeof *model_n, n_models, &cap_mn);
				models[n_models] = (char *)m;
				model_n[n_models++] = 0;
			}
			model_n[k]++;
			r->dev_row[i][d] = (uint32_t)(nc + k); /* a model index past the classes */
		}
	}
	/* Models sorted by name: the node order must not decide the rows' order. */
	size_t *order = xp_calloc(n_models + 1, sizeof *order);
	for (size_t k = 0; k < n_models; k++)
		order[k] = k;
	for (size_t a = 1; a < n_models; a++)
		for (size_t b = a; b > 0 && strcmp(models[order[b - 1]], models[order[b]]) > 0; b--) {
			size_t t = order[b];
			order[b] = order[b - 1];
			order[b - 1] = t;
		}
	size_t *model_row = xp_calloc(n_models + 1, sizeof *model_row);
	r->row_name = xp_calloc(nc + n_models + 1, sizeof *r->row_name);
	r->row_devices = xp_calloc(nc + n_models + 1, sizeof *r->row_devices);
	for (size_t ci = 0; ci < nc; ci++) {
		r->class_row[ci] = -1;
		if (class_n[ci]) {
			r->class_row[ci] = (int)r->n_rows;
			r->row_name[r->n_rows] = xp_strdup(qs->classes[ci].name);
			r->row_devices[r->n_rows++] = class_n[ci];
		}
	}
	for (size_t k = 0; k < n_models; k++) {
		model_row[order[k]] = r->n_rows;
		r->row_name[r->n_rows] = xp_strdup(models[order[k]]);
		r->row_devices[r->n_rows++] = model_n[order[k]];
	}
	for (size_t i = 0; i < c->n_nodes; i++)
		for (size_t d = 0; d < c->nodes[i]->n_devices; d++) {
			uint32_t v = r->dev_row[i][d];
			r->dev_row[i][d] = v < nc ? (uint32_t)r->class_row[v] : (uint32_t)model_row[v - nc];
		}
	free(order);
	free(model_row);
	free(models);
	free(model_n);
	free(class_n);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int cmp_tenant(const void *a, const void *b)
{
	return strcmp(((const struct xp_qsim_tenant *)a)->name, ((const struct xp_qsim_tenant *)b)->name);
}

/* The nearest-rank percentile p of n sorted values (n > 0): the smallest value with at
 * least p of the values at or below it. */
static int64_t pct(const int64_t *v, size_t n, double p)
{
	size_t k = (size_t)ceil(p * (double)n);
	return v[k ? k - 1 : 0];
}

/* Cuts the busy-device changes into buckets over [t0, t1). */
static void util_fill(struct run *r, struct xp_qsim_report *rep, int64_t t0, int64_t t1)
{
	size_t nb = r->o->buckets ? r->o->buckets : 96;
	rep->n_buckets = nb;
	rep->t0 = t0;
	double width = t1 > t0 ? (double)(t1 - t0) / (double)nb : 1.0;
	rep->bucket_s = width;
	rep->n_util = r->n_rows;
	rep->util = xp_calloc(r->n_rows + 1, sizeof *rep->util);
	int64_t *busy = xp_calloc(r->n_rows + 1, sizeof *busy);
	double **area = xp_calloc(r->n_rows + 1, sizeof *area);
	for (size_t k = 0; k < r->n_rows; k++)
		area[k] = xp_calloc(nb, sizeof **area);
	/* Changes are in time order (appended as events are applied). Each constant piece
	 * [a, b) of busy[row] adds busy x overlap to every bucket it covers. */
	int64_t *last = xp_calloc(r->n_rows + 1, sizeof *last);
	for (size_t k = 0; k < r->n_rows; k++)
		last[k] = t0;
	for (size_t i = 0; i <= r->n_changes; i++) {
		bool end = i == r->n_changes;
		for (size_t k = 0; k < r->n_rows; k++) {
			if (!end && r->changes[i].row != k)
				continue;
			int64_t a = last[k], b = end ? t1 : r->changes[i].time;
			if (b > t1)
				b = t1;
			if (a < t0)
				a = t0;
			if (b > a && busy[k] > 0) {
				size_t first = (size_t)((double)(a - t0) / width), lastb = (size_t)((double)(b - t0) / width);
				if (lastb >= nb)
					lastb = nb - 1;
				if (first >= nb)
					first = nb - 1;
				for (size_t q = first; q <= lastb; q++) {
					double lo = (double)t0 + (double)q * width, hi = lo + width;
					double x0 = (double)a > lo ? (double)a : lo, x1 = (double)b < hi ? (double)b : hi;
					if (x1 > x0)
						area[k][q] += (double)busy[k] / 1000.0 * (x1 - x0);
				}
			}
			if (!end) {
				last[k] = r->changes[i].time > last[k] ? r->changes[i].time : last[k];
				busy[k] += r->changes[i].delta;
			}
		}
	}
	for (size_t k = 0; k < r->n_rows; k++) {
		struct xp_qsim_util *u = &rep->util[k];
		u->rclass = r->row_name[k];
		r->row_name[k] = NULL;
		u->devices = r->row_devices[k];
		u->bucket = area[k];
		double sum = 0;
		for (size_t q = 0; q < nb; q++) {
			u->bucket[q] = u->devices ? u->bucket[q] / ((double)u->devices * width) : 0;
			sum += u->bucket[q];
		}
		u->mean = sum / (double)nb;
	}
	free(area);
	free(busy);
	free(last);
}

static int check(struct run *r, const char *when)
{
	if (!r->o->check)
		return 0;
	if (xp_sched_check(r->s, r->err) < 0) {
		xp_err_prefix(r->err, "invariant broken at t=%lld (after %s)", (long long)r->now, when);
		return -1;
	}
	return 0;
}

int xp_qsim_run(struct xp_sched *s, struct xp_qjob *arrivals, size_t n, const struct xp_qsim_opts *o,
		struct xp_qsim_report *rep, struct xp_err *err)
{
	memset(rep, 0, sizeof *rep);
	struct xp_qsim_opts opts = *o;
	const char *env = getenv("XPOOL_SCHED_CHECK");
	if (env && strcmp(env, "1") == 0)
		opts.check = true;
	struct run r = {.s = s, .o = &opts, .err = err, .now = o->t0};
	size_t nq = o->qs ? o->qs->n_queues : 0;
	r.waits = xp_calloc(nq + 1, sizeof *r.waits);
	r.n_waits = xp_calloc(nq + 1, sizeof *r.n_waits);
	r.cap_waits = xp_calloc(nq + 1, sizeof *r.cap_waits);
	r.preempted = xp_calloc(nq + 1, sizeof *r.preempted);
	struct xp_cluster empty = {0};
	if (!opts.cluster)
		opts.cluster = &empty;
	rows_build(&r);
	xp_sched_listen(s, on_event, &r);
	int rc = 0;
	int64_t stop = o->horizon_s > 0 ? o->t0 + o->horizon_s : INT64_MAX;

	/* What the scheduler holds already: running jobs end by their durations. */
	for (size_t i = 0; i < xp_sched_count(s); i++) {
		const struct xp_qjob *j = xp_sched_job(s, i);
		if (j->state == XP_JS_RUNNING) {
			int64_t st = j->start >= 0 ? j->start : o->t0;
			job_started(&r, i, st);
			/* An end already past is now. */
			struct ev *last = &r.heap[0];
			(void)last;
		}
	}
	/* Those started before t0: their busy devices count from t0, their END not before t0. */
	for (size_t i = 0; i < r.n_heap; i++)
		if (r.heap[i].time < o->t0)
			r.heap[i].time = o->t0;
	for (size_t i = 0; i < r.n_changes; i++)
		if (r.changes[i].time < o->t0)
			r.changes[i].time = o->t0;
	/* The heap's order may have changed by the clamping: build it again. */
	{
		struct ev *old = r.heap;
		size_t n_old = r.n_heap;
		r.heap = NULL;
		r.n_heap = r.cap_heap = 0;
		uint64_t seq = r.seq;
		r.seq = 0;
		for (size_t i = 0; i < n_old; i++)
			heap_push(&r, old[i]);
		r.seq = seq > r.seq ? seq : r.seq;
		free(old);
	}
	for (size_t i = 0; i < n; i++)
		heap_push(&r, (struct ev){.time = arrivals[i].submit < o->t0 ? o->t0 : arrivals[i].submit,
					  .kind = EV_SUBMIT, .ix = i});
	/* A first pass at t0 for what the scheduler holds (a store's pending jobs). */
	if (xp_sched_count(s)) {
		if (xp_sched_pass(s, o->t0, err) < 0)
			rc = -1;
		rep->passes++;
		if (!rc)
			rc = check(&r, "the first pass");
	}
	int64_t t_last = o->t0;
	while (!rc && r.n_heap) {
		if (o->cancel && atomic_load(o->cancel)) {
			rc = xp_errf(err, "cancelled");
			break;
		}
		if (r.heap[0].time > stop)
			break;
		struct ev e = heap_pop(&r);
		r.now = e.time;
		t_last = e.time;
		rep->events++;
		if (e.kind == EV_END) {
			struct jrec *jr = jrec(&r, e.ix);
			const struct xp_qjob *j = xp_sched_job(s, e.ix);
			int end = j->actual_s > j->est_s ? XP_JS_FAILED : XP_JS_COMPLETED; /* its time limit */
			if (jr->gen == e.gen && jr->running && j->state == XP_JS_RUNNING &&
			    xp_sched_finish(s, e.ix, end, e.time, err) < 0)
				rc = -1;
		} else {
			struct xp_qjob *a = &arrivals[e.ix];
			char name[96];
			snprintf(name, sizeof name, "%s", a->name ? a->name : "");
			int64_t id = a->id;
			if (a->submit < o->t0)
				a->submit = o->t0;
			if (xp_sched_add(s, a, err) < 0) {
				xp_err_prefix(err, "job %s%s%lld", name, *name ? " " : "#", (long long)id);
				rc = -1;
			}
		}
		/* The invariants hold after each event too (an arrival not yet passed over has its
		 * reason from xp_sched_add); then one pass after the last event of this timestamp. */
		if (!rc)
			rc = check(&r, e.kind == EV_END ? "an end" : "an arrival");
		if (!rc && (!r.n_heap || r.heap[0].time != e.time)) {
			if (xp_sched_pass(s, e.time, err) < 0)
				rc = -1;
			rep->passes++;
			if (!rc)
				rc = check(&r, "the pass");
		}
	}
	xp_sched_listen(s, NULL, NULL);
	/* The never-started jobs' reasons as a full pass gives them (the Priority check). */
	if (!rc)
		xp_sched_explain(s);
	int64_t t_end = o->horizon_s > 0 ? stop : t_last;
	rep->t_end = t_last;
	if (!rc) {
		/* Jobs still running at the end: their ECU-hours up to it. */
		for (size_t i = 0; i < r.cap_jobs && i < xp_sched_count(s); i++)
			if (r.jobs[i].running)
				job_stopped(&r, i, t_end > r.jobs[i].run_start ? t_end : r.jobs[i].run_start);
		util_fill(&r, rep, o->t0, t_end);
		rep->n_queues = nq;
		rep->queues = xp_calloc(nq + 1, sizeof *rep->queues);
		for (size_t q = 0; q < nq; q++) {
			struct xp_qsim_queue *qq = &rep->queues[q];
			qq->name = xp_strdup(o->qs->queues[q].name);
			qq->preempted = r.preempted[q];
			qq->started = r.n_waits[q];
			qq->wait_p50 = qq->wait_p95 = qq->wait_max = -1;
			if (r.n_waits[q]) {
				qsort(r.waits[q], r.n_waits[q], sizeof **r.waits, cmp_i64);
				qq->wait_p50 = pct(r.waits[q], r.n_waits[q], 0.50);
				qq->wait_p95 = pct(r.waits[q], r.n_waits[q], 0.95);
				qq->wait_max = r.waits[q][r.n_waits[q] - 1];
			}
		}
		for (size_t i = 0; i < xp_sched_count(s); i++) {
			const struct xp_qjob *j = xp_sched_job(s, i);
			long q = queue_ix(&r, j->queue);
			if (q < 0)
				continue;
			struct xp_qsim_queue *qq = &rep->queues[q];
			qq->submitted++;
			if (j->state == XP_JS_COMPLETED)
				qq->completed++;
			else if (j->state == XP_JS_FAILED)
				qq->failed++;
			bool started = i < r.cap_jobs && r.jobs[i].started;
			if (!started && (j->state == XP_JS_PENDING || j->state == XP_JS_HELD)) {
				qq->never++;
				qq->never_reasons[j->reason >= 0 && j->reason < XP_R_COUNT ? j->reason : XP_R_NONE]++;
			}
		}
		if (r.n_tenants)
			qsort(r.tenants, r.n_tenants, sizeof *r.tenants, cmp_tenant);
		rep->tenants = r.tenants;
		rep->n_tenants = r.n_tenants;
		r.tenants = NULL;
		r.n_tenants = 0;
	}
	/* Arrivals never added (past the horizon, or after a failure) stay the caller's. */
	for (size_t i = 0; i < r.cap_jobs; i++) {
		free(r.jobs[i].rows);
		free(r.jobs[i].milli);
	}
	free(r.jobs);
	free(r.heap);
	free(r.changes);
	for (size_t i = 0; i < r.n_tenants; i++)
		free(r.tenants[i].name);
	free(r.tenants);
	for (size_t q = 0; q < nq; q++)
		free(r.waits[q]);
	free(r.waits);
	free(r.n_waits);
	free(r.cap_waits);
	free(r.preempted);
	for (size_t i = 0; i < r.n_rows; i++)
		free(r.row_name[i]);
	free(r.row_name);
	free(r.row_devices);
	free(r.class_row);
	for (size_t i = 0; i < opts.cluster->n_nodes; i++)
		free(r.dev_row[i]);
	free(r.dev_row);
	if (rc < 0) {
		/* How far a cancelled run came, for whoever cancelled it (a benchmark's time budget). */
		uint64_t events = rep->events, passes = rep->passes;
		xp_qsim_report_clear(rep);
		rep->events = events;
		rep->passes = passes;
		rep->t_end = t_last;
	}
	return rc;
}

void xp_qsim_report_clear(struct xp_qsim_report *r)
{
	for (size_t i = 0; i < r->n_queues; i++)
		free(r->queues[i].name);
	free(r->queues);
	for (size_t i = 0; i < r->n_util; i++) {
		free(r->util[i].rclass);
		free(r->util[i].bucket);
	}
	free(r->util);
	for (size_t i = 0; i < r->n_tenants; i++)
		free(r->tenants[i].name);
	free(r->tenants);
	memset(r, 0, sizeof *r);
}

/* A real rounded to d decimals, so that the JSON does not show the last bits of a sum. */
static json_t *rounded(double v, int d)
{
	double m = pow(10, d);
	return json_real(nearbyint(v * m) / m);
}

static json_t *wait_json(int64_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

json_t *xp_qsim_report_json(const struct xp_qsim_report *r)
{
	json_t *o = json_object();
	json_t *qs = json_array();
	for (size_t i = 0; i < r->n_queues; i++) {
		const struct xp_qsim_queue *q = &r->queues[i];
		json_t *e = json_object();
		json_object_set_new(e, "name", json_string(q->name));
		json_object_set_new(e, "submitted", json_integer((json_int_t)q->submitted));
		json_object_set_new(e, "started", json_integer((json_int_t)q->started));
		json_object_set_new(e, "completed", json_integer((json_int_t)q->completed));
		json_object_set_new(e, "failed", json_integer((json_int_t)q->failed));
		json_object_set_new(e, "preempted", json_integer((json_int_t)q->preempted));
		json_object_set_new(e, "wait_p50", wait_json(q->wait_p50));
		json_object_set_new(e, "wait_p95", wait_json(q->wait_p95));
		json_object_set_new(e, "wait_max", wait_json(q->wait_max));
		json_object_set_new(e, "never_started", json_integer((json_int_t)q->never));
		json_t *why = json_object();
		for (int k = 0; k < XP_R_COUNT; k++)
			if (q->never_reasons[k])
				json_object_set_new(why, xp_reason_name(k), json_integer((json_int_t)q->never_reasons[k]));
		json_object_set_new(e, "never_reasons", why);
		json_array_append_new(qs, e);
	}
	json_object_set_new(o, "queues", qs);
	json_t *us = json_array();
	for (size_t i = 0; i < r->n_util; i++) {
		const struct xp_qsim_util *u = &r->util[i];
		json_t *e = json_object(), *b = json_array();
		json_object_set_new(e, "class", json_string(u->rclass));
		json_object_set_new(e, "devices", json_integer((json_int_t)u->devices));
		json_object_set_new(e, "mean", rounded(u->mean, 4));
		for (size_t k = 0; k < r->n_buckets; k++)
			json_array_append_new(b, rounded(u->bucket[k], 4));
		json_object_set_new(e, "buckets", b);
		json_array_append_new(us, e);
	}
	json_object_set_new(o, "utilization", us);
	json_object_set_new(o, "bucket_s", rounded(r->bucket_s, 3));
	json_t *ts = json_array();
	for (size_t i = 0; i < r->n_tenants; i++) {
		json_t *e = json_object();
		json_object_set_new(e, "name", json_string(r->tenants[i].name));
		json_object_set_new(e, "ecu_hours", rounded(r->tenants[i].ecu_hours, 3));
		json_object_set_new(e, "device_hours", rounded(r->tenants[i].device_hours, 3));
		json_array_append_new(ts, e);
	}
	json_object_set_new(o, "tenants", ts);
	json_object_set_new(o, "events", json_integer((json_int_t)r->events));
	json_object_set_new(o, "passes", json_integer((json_int_t)r->passes));
	json_object_set_new(o, "t_end", json_integer(r->t_end));
	return o;
}
