/* jobrun.c: the store's jobs run through the scheduler at one moment (jobrun.h). */
#include "jobrun.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine_hold.h"
#include "job_opts.h"
#include "normalize.h"
#include "qsim.h"
#include "qstore.h"
#include "k8s_queues.h"
#include "slurm.h"

int xp_jobrun_now(int64_t *now, struct xp_err *err)
{
	const char *v = getenv("XPOOL_NOW");
	if (!v || !*v) {
		*now = (int64_t)time(NULL);
		return 0;
	}
	char *end;
	errno = 0;
	long long t = strtoll(v, &end, 10);
	if (*end || errno || t < 0 || t > 253402300799LL)
		return xp_errf(err, "XPOOL_NOW: '%.40s' is not a time in seconds since 1970", v);
	*now = t;
	return 0;
}

/* The listener: each change, with who made it and why. */
static void on_event(void *arg, const struct xp_sched_event *e)
{
	struct xp_jobrun *r = arg;
	if (r->mute)
		return;
	xp_grow(&r->ev, sizeof *r->ev, r->n_ev, &r->cap_ev);
	struct xp_jobrun_event *x = &r->ev[r->n_ev++];
	x->job = e->job;
	x->from = e->from;
	x->to = e->to;
	x->reason = e->reason;
	x->text = xp_strdup(r->detail ? r->detail : e->text);
	x->time = e->time;
	x->actor = r->actor ? r->actor : XP_JSTORE_SCHEDULER;
}

const char *xp_jobrun_engine(const struct xp_ctx *ctx)
{
	if (ctx->slurm)
		return "Slurm";
	if (ctx->k8s || ctx->k8s_server || ctx->k8s_token || ctx->k8s_ca)
		return "Kubernetes";
	return NULL;
}

int xp_jobrun_engine_load(const struct xp_ctx *ctx, struct xp_qset *qs, struct xp_qjob **jobs, size_t *n,
			  struct xp_err *err)
{
	if (ctx->slurm)
		return xp_slurm_load_queues(ctx->slurm, qs, jobs, n, err);
	struct xp_k8s_opts ko = {.server = ctx->k8s_server, .token_file = ctx->k8s_token, .ca_file = ctx->k8s_ca};
	if (xp_k8s_load_queues(&ko, qs, jobs, n, NULL, err) < 0)
		return -1;
	/* Volcano's PodGroups and Kueue's Workloads: the rows say where they came from. */
	for (size_t i = 0; i < *n; i++)
		if (!(*jobs)[i].engine)
			(*jobs)[i].engine = "k8s";
	return 0;
}

int xp_jobrun_load(struct xp_jobrun *r, struct xp_ctx *ctx, struct xp_store *st, int64_t now, bool cluster,
		   struct xp_err *err)
{
	memset(r, 0, sizeof *r);
	r->now = now;
	r->st = st;
	if (xp_jobrun_engine(ctx)) {
		/* The live engine's queues and jobs instead of the store's (read, never written). */
		if (xp_jobrun_engine_load(ctx, &r->qs, &r->jobs, &r->n, err) < 0)
			return -1;
		r->lost = xp_calloc(r->n ? r->n : 1, sizeof *r->lost);
		for (size_t i = 0; i < r->n && !cluster; i++)
			cluster = !xp_jstate_final(r->jobs[i].state);
		if (cluster) {
			struct xp_cluster *c = xp_ctx_cluster(ctx);
			if (!c)
				return xp_errf(err, "no cluster to schedule on");
			/* Running jobs take their devices back from the nodes' in-use counts in a
			 * cluster of the run's own (the context's is the one view 1 shows). */
			r->c = xp_engine_hold_share(c);
			r->own_c = true;
			xp_engine_hold(r->c, r->jobs, r->n, NULL);
		}
		goto groups;
	}
	if (xp_qstore_load(st, &r->qs, err) < 0)
		return -1;
	if (xp_jstore_load(st, NULL, &r->jobs, &r->n, &r->lost, err) < 0)
		return -1;
	for (size_t i = 0; i < r->n && !cluster; i++)
		cluster = !xp_jstate_final(r->jobs[i].state);
	if (!cluster)
		return 0;
	if (!(r->c = xp_ctx_cluster(ctx)))
		return xp_errf(err, "no cluster to schedule on");
	/* The rows again, their slots read against the cluster's nodes. */
	for (size_t i = 0; i < r->n; i++)
		xp_qjob_clear(&r->jobs[i]);
	free(r->jobs);
	free(r->lost);
	r->jobs = NULL;
	r->lost = NULL;
	r->n = 0;
	if (xp_jstore_load(st, r->c, &r->jobs, &r->n, &r->lost, err) < 0)
		return -1;
groups:
	if (!r->c)
		return 0;
	if (ctx->slurm) {
		/* Slurm's waiting jobs against its nodes: untyped GRES get their partition's kind;
		 * what xpool cannot simulate (no accelerator, an ambiguous kind) is noted, not tried. */
		r->note = xp_calloc(r->n ? r->n : 1, sizeof *r->note);
		for (size_t i = 0; i < r->n; i++)
			if (r->jobs[i].state == XP_JS_PENDING || r->jobs[i].state == XP_JS_HELD)
				r->note[i] = xp_slurm_job_fit(&r->jobs[i], r->c);
	}
	r->nm = xp_place_manifests(r->ms);
	/* An inventory written without affinity groups gets the groups discovery would give, as
	 * `place` does, so that a job is judged here as there. */
	for (size_t i = 0; i < r->c->n_nodes; i++)
		xp_normalize_groups_cow(&r->c->nodes[i], (const struct xp_manifest *const *)r->ms, r->nm);
	return 0;
}

/* Records that scheduler index k is row row. */
static void row_set(struct xp_jobrun *r, size_t k, size_t row)
{
	while (r->cap_row <= k) {
		size_t cap = r->cap_row ? r->cap_row * 2 : 16;
		r->row = xp_realloc(r->row, cap * sizeof *r->row);
		for (size_t i = r->cap_row; i < cap; i++)
			r->row[i] = SIZE_MAX;
		r->cap_row = cap;
	}
	r->row[k] = row;
}

/* Whether job j asks for devices at all. */
static bool xs_demand(const struct xp_qjob *j)
{
	for (size_t g = 0; j->spec && g < j->spec->n_groups; g++)
		if (j->spec->groups[g].devices > 0 || j->spec->groups[g].slice)
			return true;
	return false;
}

/* A new scheduler on the loaded rows; six (n entries) and note get what happened to each. */
static struct xp_sched *sched_build(struct xp_jobrun *r, int64_t *six, char **note, bool listen,
				    struct xp_err *err)
{
	struct xp_sched_opts o = {.strategy = r->strategy, .horizon_s = XP_JOBRUN_HORIZON};
	struct xp_sched *s = xp_sched_new(r->c, (const struct xp_manifest *const *)r->ms, r->nm, &r->qs, &o, err);
	if (!s)
		return NULL;
	if (listen)
		xp_sched_listen(s, on_event, r);
	xp_sched_set_validation(s, xp_job_validated_layer, r->st);
	for (size_t i = 0; i < r->n; i++) {
		six[i] = -1;
		const struct xp_qjob *j = &r->jobs[i];
		if (xp_jstate_final(j->state) || (r->note && r->note[i]))
			continue;
		if (j->engine && (j->state == XP_JS_RUNNING || j->state == XP_JS_ADMITTED) && !j->alloc.n) {
			/* Its nodes or their in-use counts did not add up (xp_engine_hold): the
			 * nodes hold its devices for as long as the run looks ahead. */
			if (note)
				note[i] = xp_asprintf(xs_demand(j) ? "runs on %s: its devices stay held by its nodes"
								   : "runs on %s: no GRES per node (a CPU job, or GPUs "
								     "asked per job or task, which squeue's %%b does not show)",
						      j->engine);
			continue;
		}
		if (r->lost[i]) {
			if (note)
				note[i] = xp_strdup(j->spec ? "its devices are not in this cluster"
							    : "its stored spec cannot be read");
			continue;
		}
		struct xp_qjob copy;
		xp_jstore_job_copy(&copy, j);
		if (copy.state == XP_JS_ADMITTED)
			copy.state = XP_JS_RUNNING;
		else if (copy.state == XP_JS_PREEMPTED)
			copy.state = XP_JS_PENDING;
		struct xp_err e = {{0}};
		r->mute = true;
		int64_t k = xp_sched_add(s, &copy, &e);
		r->mute = false;
		if (k < 0) {
			if (note)
				note[i] = xp_strdup(e.msg);
			continue;
		}
		six[i] = k;
	}
	return s;
}

int xp_jobrun_build(struct xp_jobrun *r, int strategy, struct xp_err *err)
{
	r->strategy = strategy;
	r->six = xp_calloc(r->n ? r->n : 1, sizeof *r->six);
	if (!r->note) /* an engine's jobs may have notes from loading (xp_jobrun_load) */
		r->note = xp_calloc(r->n ? r->n : 1, sizeof *r->note);
	if (!r->c) {
		for (size_t i = 0; i < r->n; i++)
			r->six[i] = -1;
		return 0;
	}
	if (!(r->s = sched_build(r, r->six, r->note, true, err)))
		return -1;
	for (size_t i = 0; i < r->n; i++)
		if (r->six[i] >= 0)
			row_set(r, (size_t)r->six[i], i);
	return 0;
}

int64_t xp_jobrun_add(struct xp_jobrun *r, struct xp_qjob *j, struct xp_err *err)
{
	if (!r->s) {
		xp_qjob_clear(j);
		return xp_errf(err, "no cluster to schedule on");
	}
	r->mute = true;
	int64_t k = xp_sched_add(r->s, j, err);
	r->mute = false;
	if (k >= 0)
		row_set(r, (size_t)k, SIZE_MAX);
	return k;
}

/* Plays the paper workload forward to now: the running jobs whose estimate ended by then
 * complete at their estimated ends, earliest first, with a pass at each of those times, so
 * that what waited for them starts when they ended (and may itself end by now), not all at
 * now. The pass at now itself is the caller's. */
static int advance(struct xp_sched *s, int64_t now, struct xp_err *err)
{
	for (;;) {
		size_t n = xp_sched_count(s);
		int64_t t = INT64_MAX;
		for (size_t k = 0; k < n; k++) {
			const struct xp_qjob *j = xp_sched_job(s, k);
			if ((j->state == XP_JS_RUNNING || j->state == XP_JS_ADMITTED) && j->start >= 0 &&
			    j->start + j->est_s <= now && j->start + j->est_s < t)
				t = j->start + j->est_s;
		}
		if (t == INT64_MAX)
			return 0;
		for (size_t k = 0; k < n; k++) {
			const struct xp_qjob *j = xp_sched_job(s, k);
			if ((j->state == XP_JS_RUNNING || j->state == XP_JS_ADMITTED) && j->start >= 0 &&
			    j->start + j->est_s == t && xp_sched_finish(s, k, XP_JS_COMPLETED, t, err) < 0)
				return -1;
		}
		if (t < now && xp_sched_pass(s, t, err) < 0)
			return -1;
	}
}

int xp_jobrun_advance(struct xp_jobrun *r, struct xp_err *err)
{
	if (!r->s)
		return 0;
	const char *d = r->detail, *a = r->actor;
	r->detail = "estimated end";
	r->actor = NULL;
	int rc = advance(r->s, r->now, err);
	r->detail = d;
	r->actor = a;
	return rc;
}

int xp_jobrun_pass(struct xp_jobrun *r, struct xp_err *err)
{
	if (!r->s)
		return 0;
	const char *d = r->detail, *a = r->actor;
	r->detail = NULL;
	r->actor = NULL;
	int rc = xp_sched_pass(r->s, r->now, err) < 0 ? -1 : 0;
	r->detail = d;
	r->actor = a;
	return rc;
}

/* The nodes of a job's slots, each once, in slot order ("n1,n2"); NULL when it holds none. */
static char *slot_nodes(const struct xp_qjob *j, const struct xp_cluster *c)
{
	if (!j->alloc.n || !c)
		return NULL;
	char *out = NULL;
	for (size_t i = 0; i < j->alloc.n; i++) {
		size_t ni = j->alloc.slots[i].node_ix;
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = j->alloc.slots[k].node_ix == ni;
		if (seen || ni >= c->n_nodes)
			continue;
		char *t = xp_asprintf("%s%s%s", out ? out : "", out ? "," : "", c->nodes[ni]->name);
		free(out);
		out = t;
	}
	return out;
}

/* What xp_jobrun_eta's simulation tells it: where each of r's jobs first starts. */
struct eta_watch {
	struct xp_jobrun *r;
	struct xp_sched *s;
};

static void eta_started(void *ctx, const struct xp_sched_event *ev)
{
	struct eta_watch *w = ctx;
	if (ev->to != XP_JS_RUNNING || ev->job >= w->r->n_eta || w->r->eta_nodes[ev->job])
		return;
	w->r->eta_nodes[ev->job] = slot_nodes(xp_sched_job(w->s, ev->job), w->r->c);
}

static void eta_clear(struct xp_jobrun *r)
{
	for (size_t k = 0; k < r->n_eta; k++)
		free(r->eta_nodes[k]);
	free(r->eta_nodes);
	free(r->eta);
	r->eta_nodes = NULL;
	r->eta = NULL;
	r->n_eta = 0;
}

int xp_jobrun_eta(struct xp_jobrun *r, const struct xp_qjob *extra, struct xp_err *err)
{
	size_t n = r->s ? xp_sched_count(r->s) : 0;
	eta_clear(r);
	r->eta = xp_calloc(n ? n : 1, sizeof *r->eta);
	r->eta_nodes = xp_calloc(n ? n : 1, sizeof *r->eta_nodes);
	r->n_eta = n;
	for (size_t k = 0; k < n; k++)
		r->eta[k] = -1;
	if (!r->s)
		return 0;
	int64_t *six = xp_calloc(r->n ? r->n : 1, sizeof *six);
	struct xp_sched *s = sched_build(r, six, NULL, false, err);
	free(six);
	if (!s)
		return -1;
	int rc = 0;
	if (extra) {
		struct xp_qjob copy;
		xp_jstore_job_copy(&copy, extra);
		rc = xp_sched_add(s, &copy, err) < 0 ? -1 : 0;
	}
	if (rc == 0)
		rc = advance(s, r->now, err);
	if (rc == 0 && xp_sched_pass(s, r->now, err) < 0)
		rc = -1;
	struct xp_qsim_report rep = {0};
	/* The jobs the pass at now started are placed already: the run tells where the rest go. */
	struct eta_watch w = {r, s};
	struct xp_qsim_opts o = {.t0 = r->now, .horizon_s = XP_JOBRUN_HORIZON, .also = eta_started, .also_ctx = &w};
	if (rc == 0 && xp_qsim_run(s, NULL, 0, &o, &rep, err) < 0)
		rc = -1;
	xp_qsim_report_clear(&rep);
	/* The same rows added in the same order: the indices are r's. */
	size_t m = xp_sched_count(s);
	for (size_t k = 0; rc == 0 && k < n && k < m; k++) {
		const struct xp_qjob *j = xp_sched_job(r->s, k);
		const struct xp_qjob *f = xp_sched_job(s, k);
		if (j->state == XP_JS_RUNNING || j->state == XP_JS_ADMITTED)
			r->eta[k] = j->start;
		else if (j->state == XP_JS_PENDING && f->start >= r->now)
			r->eta[k] = f->start;
	}
	xp_sched_free(s);
	return rc;
}

/* Whether the scheduler's job differs from the stored row in a column the store keeps. */
static bool row_changed(const struct xp_qjob *a, const struct xp_qjob *b)
{
	if (a->state != b->state || a->reason != b->reason || a->start != b->start || a->end != b->end ||
	    a->preemptions != b->preemptions || a->alloc.n != b->alloc.n)
		return true;
	if ((a->reason_text == NULL) != (b->reason_text == NULL) ||
	    (a->reason_text && strcmp(a->reason_text, b->reason_text) != 0))
		return true;
	for (size_t i = 0; i < a->alloc.n; i++)
		if (a->alloc.slots[i].node_ix != b->alloc.slots[i].node_ix || a->alloc.slots[i].pos != b->alloc.slots[i].pos ||
		    a->alloc.slots[i].take != b->alloc.slots[i].take)
			return true;
	return false;
}

int xp_jobrun_save(struct xp_jobrun *r, struct xp_store *st, struct xp_err *err)
{
	/* A live engine's jobs are read, never written (nor saved as if they were xpool's). */
	for (size_t i = 0; i < r->n; i++)
		if (r->jobs[i].engine)
			return xp_errf(err, "the jobs are %s's: read-only here", r->jobs[i].engine);
	if (!r->s)
		return 0;
	size_t n = xp_sched_count(r->s);
	for (size_t k = 0; k < n; k++) {
		const struct xp_qjob *j = xp_sched_job(r->s, k);
		size_t row = k < r->cap_row ? r->row[k] : SIZE_MAX;
		if (j->id <= 0)
			continue; /* not stored (a dry-run's job) */
		if (row != SIZE_MAX && !row_changed(j, &r->jobs[row]))
			continue;
		if (xp_jstore_update(st, j, r->c, err) < 0)
			return -1;
	}
	for (size_t i = 0; i < r->n_ev; i++) {
		const struct xp_jobrun_event *e = &r->ev[i];
		const struct xp_qjob *j = xp_sched_job(r->s, e->job);
		if (j->id <= 0)
			continue;
		if (xp_jstore_event(st, j->id, e->time, e->from, e->to, e->reason, e->text, e->actor, err) < 0)
			return -1;
	}
	/* A pending job's reason changes without a change of state (Resources, then Priority
	 * behind a new head, then QuotaExceeded): each new one is recorded too, pending ->
	 * pending, so that the history says why it waited, and when. */
	for (size_t k = 0; k < n; k++) {
		const struct xp_qjob *j = xp_sched_job(r->s, k);
		size_t row = k < r->cap_row ? r->row[k] : SIZE_MAX;
		if (j->id <= 0 || j->state != XP_JS_PENDING || !j->reason)
			continue;
		const struct xp_qjob *was = row != SIZE_MAX ? &r->jobs[row] : NULL;
		if (was && was->state == XP_JS_PENDING && was->reason == j->reason)
			continue;
		if (xp_jstore_event(st, j->id, r->now, XP_JS_PENDING, XP_JS_PENDING, j->reason, j->reason_text,
				    XP_JSTORE_SCHEDULER, err) < 0)
			return -1;
	}
	return 0;
}

const struct xp_qjob *xp_jobrun_job(const struct xp_jobrun *r, size_t i)
{
	return r->six && r->six[i] >= 0 ? xp_sched_job(r->s, (size_t)r->six[i]) : &r->jobs[i];
}

size_t xp_jobrun_find(const struct xp_jobrun *r, int64_t id)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->jobs[i].id == id)
			return i;
	return SIZE_MAX;
}

void xp_jobrun_free(struct xp_jobrun *r)
{
	xp_sched_free(r->s);
	for (size_t i = 0; i < r->n; i++) {
		xp_qjob_clear(&r->jobs[i]);
		if (r->note)
			free(r->note[i]);
	}
	free(r->jobs);
	free(r->lost);
	free(r->six);
	free(r->note);
	free(r->row);
	for (size_t i = 0; i < r->n_ev; i++)
		free(r->ev[i].text);
	free(r->ev);
	eta_clear(r);
	if (r->nm)
		xp_place_manifests_free(r->ms, r->nm);
	xp_qset_clear(&r->qs);
	if (r->own_c)
		xp_cluster_free(r->c);
	memset(r, 0, sizeof *r);
}
