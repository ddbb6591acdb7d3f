/* qsched.c: the scheduler (qsched.h): its jobs and their states, the device classes and usage,
 * and the pass: queues by weighted dominant share, jobs in a queue by priority and submit
 * time, placement into the scheduler's own index, reasons and positions. */
#include "qsched.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "manifest.h"
#include "place.h"
#include "backfill.h"
#include "qsched_int.h"
#include "preempt.h"
#include "quota.h"

/* ---------- small helpers ---------- */

static void free_recount(struct xp_sched *s);

static void set_reason(struct xs_job *sj, int reason, const char *text)
{
	sj->j.reason = reason;
	if (sj->j.reason_text && text && strcmp(sj->j.reason_text, text) == 0)
		return;
	free(sj->j.reason_text);
	sj->j.reason_text = text ? xp_strdup(text) : NULL;
}

static void emit(struct xp_sched *s, size_t ji, int from, int to, int reason, const char *text, int64_t now)
{
	if (!s->fn)
		return;
	struct xp_sched_event ev = {.job = ji, .from = from, .to = to, .reason = reason, .text = text, .time = now};
	s->fn(s->fctx, &ev);
}

static void move_state(struct xp_sched *s, size_t ji, int to, int reason, const char *text, int64_t now)
{
	int from = s->jobs[ji].j.state;
	s->jobs[ji].j.state = to;
	emit(s, ji, from, to, reason, text, now);
}

/* ---------- device classes and capacity ---------- */

static bool usable_node(const struct xp_sched *s, size_t n)
{
	const struct xp_node *nd = s->c->nodes[n];
	return (nd->state == XP_NODE_UP || nd->state == XP_NODE_DEGRADED) && !(s->drained && s->drained[n]);
}

/* Whether class k takes device d of node nd: its vendor and model globs (each when given) over
 * the device's vendor and model, or its label among the node's governance or fact labels. */
static bool class_takes(const struct xp_rclass *k, const struct xp_node *nd, const struct xp_device *d)
{
	if (k->builtin)
		return false;
	if (k->label) {
		const char *eq = strchr(k->label, '=');
		if (!eq)
			return false;
		char key[XP_QNAME_MAX * 2 + 2];
		size_t kl = (size_t)(eq - k->label);
		if (kl >= sizeof key)
			return false;
		memcpy(key, k->label, kl);
		key[kl] = 0;
		const char *v = xp_labels_get(&nd->governance, key);
		if (!v)
			v = xp_labels_get(&nd->facts, key);
		return v && strcmp(v, eq + 1) == 0;
	}
	if (!k->vendor && !k->model)
		return false;
	if (k->vendor && !(d->vendor && xp_glob_match(k->vendor, d->vendor)))
		return false;
	if (k->model && !(d->model && xp_glob_match(k->model, d->model)))
		return false;
	return true;
}

static int class_order_cmp(const void *a, const void *b, void *arg)
{
	const struct xp_qset *qs = arg;
	const struct xp_rclass *x = &qs->classes[*(const size_t *)a], *y = &qs->classes[*(const size_t *)b];
	if (x->created != y->created)
		return x->created < y->created ? -1 : 1;
	return strcmp(x->name, y->name);
}

static bool device_usable(const struct xp_sched *s, size_t n, size_t pos)
{
	const struct xp_device *d = &s->c->nodes[n]->devices[pos];
	return usable_node(s, n) && d->health != XP_HEALTH_FAIL && !s->failed[s->off[n] + pos];
}

static void capacity_compute(struct xp_sched *s)
{
	memset(s->cap, 0, s->nc * XP_RES_COUNT * sizeof *s->cap);
	for (size_t n = 0; n < s->c->n_nodes; n++) {
		const struct xp_node *nd = s->c->nodes[n];
		if (!usable_node(s, n))
			continue;
		for (size_t p = 0; p < nd->n_devices; p++) {
			int ci = s->slot_class[s->off[n] + p];
			if (ci < 0 || !device_usable(s, n, p))
				continue;
			s->cap[(size_t)ci * XP_RES_COUNT + XP_RES_DEVICES] += XS_MILLI;
			double e = nd->devices[p].ecu;
			if (!isnan(e) && e > 0)
				s->cap[(size_t)ci * XP_RES_COUNT + XP_RES_ECU] += llround(e * XS_MILLI);
		}
		if (s->cpu_ci >= 0) {
			int cpus = nd->pus_allowed > 0 ? nd->pus_allowed : nd->pus > 0 ? nd->pus : nd->cores;
			s->cap[(size_t)s->cpu_ci * XP_RES_COUNT + XP_RES_CPUS] += (int64_t)(cpus > 0 ? cpus : 0) * XS_MILLI;
		}
		if (s->mem_ci >= 0 && nd->memory_mib > 0)
			s->cap[(size_t)s->mem_ci * XP_RES_COUNT + XP_RES_MEMORY] += nd->memory_mib * XS_MILLI / 1024;
	}
}

/* ---------- usage ---------- */

int xp_sched_device_class(const struct xp_sched *s, size_t node_ix, size_t pos)
{
	if (node_ix >= s->c->n_nodes || pos >= s->c->nodes[node_ix]->n_devices)
		return -1;
	return s->slot_class[s->off[node_ix] + pos];
}

/* ---------- commits ---------- */

/* Commits a blocker on the given device slots (drained node, failed device): a whole device's
 * use on top of whatever is there, so nothing new fits; jobs there keep running. Into both
 * indexes. */
static void block_slots(struct xp_sched *s, size_t node, const size_t *pos, size_t n)
{
	if (!n)
		return;
	struct xp_place_replica *reps = xp_calloc(n, sizeof *reps);
	int *p = xp_calloc(n, sizeof *p);
	for (size_t i = 0; i < n; i++) {
		p[i] = (int)pos[i];
		reps[i] = (struct xp_place_replica){.node_ix = node, .pos = &p[i], .n_devices = 1, .take = 1.0,
						    .isolation = "exclusive"};
	}
	struct xp_place_result r = {.placed = true, .replicas = reps, .n_replicas = n};
	xp_place_commit(s->ix, &r);
	xp_place_commit(s->idle, &r);
	free(reps);
	free(p);
}

/* ---------- creation ---------- */

/* The number of a shape, made when new. */
static uint32_t shape_of(struct xp_sched *s, const char *sig, const struct xp_job *spec)
{
	bool found;
	int id = 0;
	xs_map_get(&s->shapes, sig, &id, &found);
	if (found)
		return (uint32_t)id;
	if (s->n_shapes == s->cap_shapes) {
		size_t cap = s->cap_shapes ? s->cap_shapes * 2 : 16;
		s->fail = xp_realloc(s->fail, cap * sizeof *s->fail);
		s->blk_fail = xp_realloc(s->blk_fail, cap * sizeof *s->blk_fail);
		s->idle_a = xp_realloc(s->idle_a, cap * sizeof *s->idle_a);
		s->shape_pending = xp_realloc(s->shape_pending, cap * sizeof *s->shape_pending);
		s->qfail = xp_realloc(s->qfail, cap * (s->nq ? s->nq : 1) * sizeof *s->qfail);
		s->cnt.shape = xp_realloc(s->cnt.shape, cap * sizeof *s->cnt.shape);
		s->cap_shapes = cap;
	}
	memset(&s->fail[s->n_shapes], 0, sizeof *s->fail);
	s->blk_fail[s->n_shapes] = 0;
	memset(&s->idle_a[s->n_shapes], 0, sizeof *s->idle_a);
	s->shape_pending[s->n_shapes] = 0;
	memset(&s->qfail[s->n_shapes * s->nq], 0, s->nq * sizeof *s->qfail);
	xs_count_shape(s, (uint32_t)s->n_shapes, spec);
	xs_map_put(&s->shapes, sig, (int)s->n_shapes, NULL);
	return (uint32_t)s->n_shapes++;
}

static void fail_put(struct xp_sched *s, struct xs_fail *f, int reason, const char *text)
{
	/* A placement refusal of a shape with pending jobs: one more shape that cannot start. */
	bool placement = f >= s->fail && f < s->fail + s->n_shapes;
	if (placement && f->gen != s->fail_gen && s->shape_pending[f - s->fail])
		s->n_refused++;
	f->gen = placement ? s->fail_gen : s->qfail_gen;
	f->reason = reason;
	f->counted = false;
	if (!f->text || strcmp(f->text, text ? text : "") != 0) {
		free(f->text);
		f->text = xp_strdup(text ? text : "");
	}
}

static char *job_sig(const struct xp_job *spec)
{
	json_t *o = xp_job_to_json(spec);
	json_object_del(o, "name");
	json_object_del(o, "queue");
	json_object_del(o, "tenant");
	json_object_del(o, "priority");
	char *t = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return t ? t : xp_strdup("?");
}

static int rank_cmp(const void *a, const void *b, void *arg)
{
	const struct xp_qset *qs = arg;
	const struct xp_queue *x = &qs->queues[*(const size_t *)a], *y = &qs->queues[*(const size_t *)b];
	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int validated_thunk(void *ctx, const struct xp_device *d, const char *kase)
{
	struct xp_sched *s = ctx;
	return s->validated ? s->validated(s->vctx, d, kase) : -1;
}

/* Devices no class takes still count in the queues' shares: each model of them becomes a class
 * of its own, after the caller's (no quota names it, so it limits nothing). Without this a
 * cluster with no classes defined (a trace's, a new store's) gives every queue a share of 0 and
 * the first queue by name takes everything. Returns order with the new classes appended. */
static size_t *model_classes(struct xp_sched *s, const struct xp_cluster *c, size_t *order)
{
	s->n_user_classes = s->nc;
	for (size_t n = 0; n < c->n_nodes; n++)
		for (size_t p = 0; p < c->nodes[n]->n_devices; p++) {
			if (s->slot_class[s->off[n] + p] >= 0)
				continue;
			const char *model = c->nodes[n]->devices[p].model;
			if (!model || !*model)
				model = "unknown";
			if (s->qs != &s->own) {
				s->own = *s->qs;
				s->own.classes = xp_malloc((s->nc + 1) * sizeof *s->own.classes);
				if (s->nc)
					memcpy(s->own.classes, s->qs->classes, s->nc * sizeof *s->own.classes);
				s->qs = &s->own;
			}
			size_t ci = s->n_user_classes;
			while (ci < s->nc && strcmp(s->own.classes[ci].name, model) != 0)
				ci++;
			if (ci == s->nc) {
				s->own.classes = xp_realloc(s->own.classes, (s->nc + 1) * sizeof *s->own.classes);
				s->own.classes[ci] = (struct xp_rclass){.name = xp_strdup(model), .model = xp_strdup(model),
									.created = INT64_MAX};
				order = xp_realloc(order, (s->nc + 1) * sizeof *order);
				order[s->nc] = ci;
				s->nc++;
				s->own.n_classes = s->nc;
			}
			s->slot_class[s->off[n] + p] = (int)ci;
		}
	return order;
}

struct xp_sched *xp_sched_new(const struct xp_cluster *c, const struct xp_manifest *const *ms, size_t n_ms,
			      const struct xp_qset *qs, const struct xp_sched_opts *o, struct xp_err *err)
{
	if (!c || !qs)
		return xp_errf(err, "scheduler: no cluster or queue set"), NULL;
	for (size_t i = 0; i < qs->n_queues; i++)
		if (qs->queues[i].parent && !xp_qset_queue(qs, qs->queues[i].parent))
			return xp_errf(err, "queue %s: parent %s does not exist", qs->queues[i].name, qs->queues[i].parent),
			       NULL;
	struct xp_sched *s = xp_calloc(1, sizeof *s);
	s->c = c;
	s->ms = ms;
	s->n_ms = n_ms;
	s->qs = qs;
	if (o)
		s->o = *o;
	if (!s->o.depth)
		s->o.depth = s->o.skip_tail ? 100 : 1000;
	if (!s->o.horizon_s)
		s->o.horizon_s = 86400;
	s->nq = qs->n_queues;
	s->nc = qs->n_classes;
	s->head = SIZE_MAX;
	s->next_q = SIZE_MAX;
	s->delay_head = SIZE_MAX;
	s->shadow = -1;
	s->fail_gen = 1;
	s->qfail_gen = 1;
	s->blk_gen = 1;
	s->idle_gen = 1;
	s->ix_gen = 1;
	s->off = xp_calloc(c->n_nodes + 1, sizeof *s->off);
	for (size_t n = 0; n < c->n_nodes; n++)
		s->off[n + 1] = s->off[n] + c->nodes[n]->n_devices;
	s->n_slots = s->off[c->n_nodes];
	s->slot_class = xp_malloc((s->n_slots ? s->n_slots : 1) * sizeof *s->slot_class);
	s->failed = xp_calloc(s->n_slots ? s->n_slots : 1, sizeof *s->failed);
	s->reserved = xp_calloc(s->n_slots ? s->n_slots : 1, sizeof *s->reserved);
	s->drained = xp_calloc(c->n_nodes ? c->n_nodes : 1, sizeof *s->drained);
	s->cpu_ci = s->mem_ci = -1;
	size_t *order = xp_malloc((s->nc ? s->nc : 1) * sizeof *order);
	for (size_t i = 0; i < s->nc; i++) {
		order[i] = i;
		if (qs->classes[i].builtin && strcmp(qs->classes[i].name, "cpu") == 0)
			s->cpu_ci = (int)i;
		if (qs->classes[i].builtin && strcmp(qs->classes[i].name, "mem") == 0)
			s->mem_ci = (int)i;
	}
	qsort_r(order, s->nc, sizeof *order, class_order_cmp, (void *)qs);
	for (size_t n = 0; n < c->n_nodes; n++)
		for (size_t p = 0; p < c->nodes[n]->n_devices; p++) {
			int ci = -1;
			for (size_t k = 0; k < s->nc && ci < 0; k++)
				if (class_takes(&qs->classes[order[k]], c->nodes[n], &c->nodes[n]->devices[p]))
					ci = (int)order[k];
			s->slot_class[s->off[n] + p] = ci;
		}
	order = model_classes(s, c, order);
	s->class_order = order;
	s->cap = xp_calloc((s->nc ? s->nc : 1) * XP_RES_COUNT, sizeof *s->cap);
	s->used = xp_calloc((s->nq ? s->nq : 1) * (s->nc ? s->nc : 1) * XP_RES_COUNT, sizeof *s->used);
	s->share = xp_calloc(s->nq ? s->nq : 1, sizeof *s->share);
	capacity_compute(s);
	xq_init(s);
	s->q = xp_calloc(s->nq ? s->nq : 1, sizeof *s->q);
	for (size_t i = 0; i < s->nq; i++) {
		s->q[i].min_started_prio = INT_MAX;
		s->q[i].parent = SIZE_MAX;
		if (qs->queues[i].parent)
			s->q[i].parent = (size_t)(xp_qset_queue(qs, qs->queues[i].parent) - qs->queues);
	}
	/* Children and roots in tie order (priority desc, name), so that equal shares go that way. */
	size_t *all = xp_malloc((s->nq ? s->nq : 1) * sizeof *all);
	for (size_t i = 0; i < s->nq; i++)
		all[i] = i;
	qsort_r(all, s->nq, sizeof *all, rank_cmp, (void *)qs);
	for (size_t i = 0; i < s->nq; i++)
		s->may_preempt = s->may_preempt || qs->queues[i].within != XP_QP_NEVER || qs->queues[i].reclaim != XP_QP_NEVER;
	s->roots = xp_malloc((s->nq ? s->nq : 1) * sizeof *s->roots);
	for (size_t k = 0; k < s->nq; k++) {
		size_t i = all[k];
		s->q[i].rank = k;
		size_t p = s->q[i].parent;
		if (p == SIZE_MAX)
			s->roots[s->n_roots++] = i;
		else {
			s->q[p].kids = xp_realloc(s->q[p].kids, (s->q[p].n_kids + 1) * sizeof *s->q[p].kids);
			s->q[p].kids[s->q[p].n_kids++] = i;
		}
	}
	free(all);
	s->ix = xp_place_index_new(c, ms, n_ms);
	s->idle = xp_place_index_new(c, ms, n_ms);
	free_recount(s);
	xs_count_init(s);
	xp_place_index_set_validation(s->ix, validated_thunk, s);
	xp_place_index_set_validation(s->idle, validated_thunk, s);
	return s;
}

void xp_sched_set_validation(struct xp_sched *s, int (*fn)(void *ctx, const struct xp_device *d, const char *kase),
			     void *ctx)
{
	s->validated = fn;
	s->vctx = ctx;
	s->idle_gen++;
	s->ix_gen++;
	s->up_gen++;
	s->down_gen++;
}

void xp_sched_free(struct xp_sched *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_jobs; i++) {
		xp_qjob_clear(&s->jobs[i].j);
		free(s->jobs[i].sig);
		free(s->jobs[i].ch);
	}
	free(s->jobs);
	for (size_t i = 0; i < s->nq; i++) {
		free(s->q[i].kids);
		free(s->q[i].pend);
	}
	free(s->q);
	free(s->roots);
	free(s->off);
	free(s->slot_class);
	free(s->class_order);
	if (s->qs == &s->own) {
		for (size_t i = s->n_user_classes; i < s->nc; i++)
			xp_rclass_clear(&s->own.classes[i]);
		free(s->own.classes);
	}
	free(s->failed);
	free(s->reserved);
	free(s->resv_slots);
	free(s->drained);
	free(s->cap);
	free(s->used);
	free(s->share);
	free(s->qt);
	free(s->running);
	free(s->probe);
	free(s->near_held);
	free(s->near_sel);
	s->idle_gen++;
	xs_map_clear(&s->shapes);
	for (size_t i = 0; i < s->n_shapes; i++) {
		free(s->fail[i].text);
		free(s->idle_a[i].text);
		for (size_t q = 0; q < s->nq; q++)
			free(s->qfail[i * s->nq + q].text);
	}
	free(s->fail);
	free(s->blk_fail);
	free(s->idle_a);
	free(s->shape_pending);
	free(s->qfail);
	xs_count_free(s);
	xp_place_index_free(s->ix);
	xp_place_index_free(s->idle);
	free(s);
}

void xp_sched_listen(struct xp_sched *s, xp_sched_listener fn, void *ctx)
{
	s->fn = fn;
	s->fctx = ctx;
}

size_t xp_sched_count(const struct xp_sched *s)
{
	return s->n_jobs;
}

const struct xp_qjob *xp_sched_job(const struct xp_sched *s, size_t i)
{
	return i < s->n_jobs ? &s->jobs[i].j : NULL;
}

/* ---------- pending lists ---------- */

/* Job order inside a queue: priority desc, submit asc, id asc. */
static int job_cmp(const struct xp_sched *s, size_t a, size_t b)
{
	const struct xp_qjob *x = &s->jobs[a].j, *y = &s->jobs[b].j;
	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	if (x->submit != y->submit)
		return x->submit < y->submit ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return a < b ? -1 : a > b;
}

static size_t pend_insert(struct xp_sched *s, size_t ji)
{
	struct xs_queue *q = &s->q[s->jobs[ji].qi];
	if (q->n_pend == q->cap_pend) {
		q->cap_pend = q->cap_pend ? q->cap_pend * 2 : 16;
		q->pend = xp_realloc(q->pend, q->cap_pend * sizeof *q->pend);
	}
	size_t lo = 0, hi = q->n_pend;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (job_cmp(s, q->pend[mid], ji) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(&q->pend[lo + 1], &q->pend[lo], (q->n_pend - lo) * sizeof *q->pend);
	q->pend[lo] = ji;
	q->n_pend++;
	uint32_t sh = s->jobs[ji].shape;
	if (s->shape_pending[sh]++ == 0) {
		s->n_shapes_pending++;
		s->n_refused += s->fail[sh].gen == s->fail_gen;
	}
	/* Mid-pass (a preempted job back in its queue): what was already looked at stays so. */
	if (lo < q->cur)
		q->cur++;
	return lo;
}

static void pend_remove(struct xp_sched *s, size_t ji)
{
	struct xs_queue *q = &s->q[s->jobs[ji].qi];
	for (size_t i = 0; i < q->n_pend; i++)
		if (q->pend[i] == ji) {
			memmove(&q->pend[i], &q->pend[i + 1], (q->n_pend - i - 1) * sizeof *q->pend);
			q->n_pend--;
			uint32_t sh = s->jobs[ji].shape;
			if (--s->shape_pending[sh] == 0) {
				s->n_shapes_pending--;
				s->n_refused -= s->fail[sh].gen == s->fail_gen;
			}
			return;
		}
}

/* Running jobs are kept by estimated end (start + estimate, then index): the reservation walks
 * them in that order without sorting. */
static bool ends_before(const struct xp_sched *s, size_t a, size_t b)
{
	int64_t ea = s->jobs[a].j.start + s->jobs[a].j.est_s, eb = s->jobs[b].j.start + s->jobs[b].j.est_s;
	return ea != eb ? ea < eb : a < b;
}

static size_t running_at(const struct xp_sched *s, size_t ji)
{
	size_t lo = 0, hi = s->n_running;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ends_before(s, s->running[mid], ji))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void free_adjust(struct xp_sched *s, size_t ji, int sign)
{
	const struct xp_qalloc *a = &s->jobs[ji].j.alloc;
	for (size_t k = 0; k < a->n; k++)
		if (!s->failed[s->off[a->slots[k].node_ix] + a->slots[k].pos] && !s->drained[a->slots[k].node_ix])
			s->free_milli += sign * a->slots[k].take;
}

static void running_add(struct xp_sched *s, size_t ji)
{
	if (s->n_running == s->cap_running) {
		s->cap_running = s->cap_running ? s->cap_running * 2 : 64;
		s->running = xp_realloc(s->running, s->cap_running * sizeof *s->running);
	}
	size_t at = running_at(s, ji);
	memmove(&s->running[at + 1], &s->running[at], (s->n_running - at) * sizeof *s->running);
	s->running[at] = ji;
	s->n_running++;
	free_adjust(s, ji, -1);
	xs_count_job(s, ji, +1);
	struct xs_queue *q = &s->q[s->jobs[ji].qi];
	q->n_running++;
	if (s->jobs[ji].j.priority < q->min_started_prio)
		q->min_started_prio = s->jobs[ji].j.priority;
}

/* Before the job's slots and start are cleared. */
static void running_remove(struct xp_sched *s, size_t ji)
{
	size_t at = running_at(s, ji);
	if (at >= s->n_running || s->running[at] != ji)
		for (at = 0; at < s->n_running && s->running[at] != ji; at++)
			;
	if (at == s->n_running)
		return;
	memmove(&s->running[at], &s->running[at + 1], (s->n_running - at - 1) * sizeof *s->running);
	s->n_running--;
	free_adjust(s, ji, +1);
	xs_count_job(s, ji, -1);
	s->q[s->jobs[ji].qi].n_running--;
}

/* ---------- adding jobs ---------- */

static bool tenant_allowed(const struct xp_queue *q, const char *tenant)
{
	if (!q->n_tenants)
		return true;
	for (size_t i = 0; i < q->n_tenants; i++)
		if (tenant && strcmp(q->tenants[i], tenant) == 0)
			return true;
	return false;
}

int64_t xp_sched_add(struct xp_sched *s, struct xp_qjob *j, struct xp_err *err)
{
	const struct xp_queue *q = j->queue ? xp_qset_queue(s->qs, j->queue) : NULL;
	if (!q) {
		xp_errf(err, "job %lld: no queue '%s'", (long long)j->id, j->queue ? j->queue : "");
		xp_qjob_clear(j);
		return -1;
	}
	if (!tenant_allowed(q, j->tenant)) {
		xp_errf(err, "job %lld: queue %s does not take tenant '%s'", (long long)j->id, q->name,
			j->tenant ? j->tenant : "-");
		xp_qjob_clear(j);
		return -1;
	}
	if (!j->spec || !j->spec->n_groups) {
		xp_errf(err, "job %lld: no job spec", (long long)j->id);
		xp_qjob_clear(j);
		return -1;
	}
	int st = j->state;
	if (st == XP_JS_ADMITTED)
		st = XP_JS_RUNNING;
	if (st == XP_JS_PREEMPTED)
		st = XP_JS_PENDING;
	if (st == XP_JS_RUNNING) {
		if (!j->alloc.n) {
			xp_errf(err, "job %lld: running without devices", (long long)j->id);
			xp_qjob_clear(j);
			return -1;
		}
		for (size_t i = 0; i < j->alloc.n; i++) {
			const struct xp_qslot *sl = &j->alloc.slots[i];
			if (sl->node_ix >= s->c->n_nodes || sl->pos >= s->c->nodes[sl->node_ix]->n_devices ||
			    sl->take <= 0 || sl->take > XS_MILLI) {
				xp_errf(err, "job %lld: slot %zu is outside the cluster", (long long)j->id, i);
				xp_qjob_clear(j);
				return -1;
			}
			double base, u = xp_place_index_use(s->ix, sl->node_ix, sl->pos, &base);
			if (u + sl->take / (double)XS_MILLI > 1 + 1e-9) {
				xp_errf(err, "job %lld: device %zu of %s is already full", (long long)j->id, (size_t)sl->pos,
					s->c->nodes[sl->node_ix]->name);
				xp_qjob_clear(j);
				return -1;
			}
		}
	}
	if (s->n_jobs == s->cap_jobs) {
		s->cap_jobs = s->cap_jobs ? s->cap_jobs * 2 : 64;
		s->jobs = xp_realloc(s->jobs, s->cap_jobs * sizeof *s->jobs);
	}
	size_t ji = s->n_jobs++;
	struct xs_job *sj = &s->jobs[ji];
	memset(sj, 0, sizeof *sj);
	sj->j = *j;
	memset(j, 0, sizeof *j);
	sj->qi = (size_t)(q - s->qs->queues);
	sj->sig = job_sig(sj->j.spec);
	sj->shape = shape_of(s, sj->sig, sj->j.spec);
	sj->need = (int64_t)xs_whole_demand(sj->j.spec) * XS_MILLI;
	sj->j.pos_queue = sj->j.pos_global = 0;
	sj->j.eta = -1;
	if (xp_jstate_final(st)) {
		sj->j.state = st;
		free(sj->j.alloc.slots);
		sj->j.alloc = (struct xp_qalloc){NULL, 0, -1};
		set_reason(sj, XP_R_NONE, NULL);
		emit(s, ji, -1, st, XP_R_NONE, NULL, sj->j.end);
		return (int64_t)ji;
	}
	if (st == XP_JS_RUNNING) {
		sj->j.state = XP_JS_RUNNING;
		sj->j.alloc.commit = xs_commit_slots(s, &sj->j);
		xs_charge_compute(s, ji);
		xs_charge_apply(s, ji, +1);
		running_add(s, ji);
		set_reason(sj, XP_R_NONE, NULL);
		s->resv_valid = false;
		s->ix_gen++;
		s->up_gen++;
		emit(s, ji, -1, XP_JS_RUNNING, XP_R_NONE, NULL, sj->j.start);
		return (int64_t)ji;
	}
	free(sj->j.alloc.slots);
	sj->j.alloc = (struct xp_qalloc){NULL, 0, -1};
	sj->j.start = sj->j.end = -1;
	if (st == XP_JS_HELD) {
		sj->j.state = XP_JS_HELD;
		set_reason(sj, XP_R_HELD, "held by user");
		emit(s, ji, -1, XP_JS_HELD, XP_R_HELD, sj->j.reason_text, sj->j.submit);
		return (int64_t)ji;
	}
	sj->j.state = XP_JS_PENDING;
	/* Until a pass judges it. */
	set_reason(sj, XP_R_PRIORITY, "not yet considered by a scheduling pass");
	pend_insert(s, ji);
	emit(s, ji, -1, XP_JS_PENDING, XP_R_NONE, NULL, sj->j.submit);
	return (int64_t)ji;
}

/* ---------- ending and user actions ---------- */

/* After job ji's devices came free (its slots still listed, the counts already moved), in a
 * simulator's passes (only the reason counts there, not its words): the quota refusals end
 * (its queues use less); a placement refusal ends only when one of the job's nodes could now
 * take a replica of the shape by count (idle devices of its kind, qcount.c), and the counts
 * no longer refuse it: only the job's nodes changed since (starts only take). Fits-nowhere
 * answers (the idle cluster's) do not depend on use. */
static void fail_release(struct xp_sched *s, size_t ji)
{
	/* Outside a simulator every refusal goes: its words count nodes by reason, and those
	 * numbers moved. */
	if (!s->o.skip_tail) {
		xs_fail_clear(s);
		return;
	}
	s->qfail_gen++;
	s->blk_gen++;
	s->ix_gen++;
	const struct xp_qalloc *a = &s->jobs[ji].j.alloc;
	for (size_t sh = 0; sh < s->n_shapes; sh++) {
		struct xs_fail *f = &s->fail[sh];
		if (f->gen != s->fail_gen || f->reason == XP_R_AFFINITY)
			continue;
		bool hosts = false;
		size_t last = SIZE_MAX;
		for (size_t k = 0; k < a->n && !hosts; k++) {
			size_t n = a->slots[k].node_ix;
			if (n != last)
				hosts = xs_count_hosts(s, (uint32_t)sh, n);
			last = n;
		}
		if (!hosts || (s->cnt.shape[sh].whole && xs_count_refuses(s, (uint32_t)sh, false, NULL, NULL)))
			continue;
		f->gen = 0;
		if (s->shape_pending[sh])
			s->n_refused--;
	}
}

/* Frees a running job's devices and charges (the state is the caller's). */
static void stop_running(struct xp_sched *s, size_t ji)
{
	struct xs_job *sj = &s->jobs[ji];
	s->down_gen++;
	running_remove(s, ji);
	if (sj->j.alloc.commit >= 0)
		xp_place_release(s->ix, sj->j.alloc.commit);
	xs_charge_apply(s, ji, -1);
	fail_release(s, ji);
	free(sj->ch);
	sj->ch = NULL;
	sj->n_ch = 0;
	free(sj->j.alloc.slots);
	sj->j.alloc = (struct xp_qalloc){NULL, 0, -1};
	sj->backfilled = false;
	/* Devices came free: the refusals kept since the last release may be stale. The head's
	 * reservation stays: devices free earlier than estimated can only bring its start
	 * forward, never delay it (it is worked out again when the head changes). */
}

int xp_sched_finish(struct xp_sched *s, size_t i, int state, int64_t now, struct xp_err *err)
{
	if (i >= s->n_jobs)
		return xp_errf(err, "no job %zu", i);
	if (state != XP_JS_COMPLETED && state != XP_JS_FAILED)
		return xp_errf(err, "a job ends completed or failed, not %s", xp_jstate_name(state));
	struct xs_job *sj = &s->jobs[i];
	if (sj->j.state != XP_JS_RUNNING && sj->j.state != XP_JS_ADMITTED)
		return xp_errf(err, "job %lld is %s, not running", (long long)sj->j.id, xp_jstate_name(sj->j.state));
	stop_running(s, i);
	sj->j.end = now;
	move_state(s, i, state, XP_R_NONE, NULL, now);
	return 0;
}

int xp_sched_hold(struct xp_sched *s, size_t i, int64_t now, struct xp_err *err)
{
	if (i >= s->n_jobs)
		return xp_errf(err, "no job %zu", i);
	struct xs_job *sj = &s->jobs[i];
	if (sj->j.state != XP_JS_PENDING)
		return xp_errf(err, "job %lld is %s; only a pending job can be held", (long long)sj->j.id,
			       xp_jstate_name(sj->j.state));
	pend_remove(s, i);
	set_reason(sj, XP_R_HELD, "held by user");
	sj->j.pos_queue = sj->j.pos_global = 0;
	if (s->head == i)
		s->resv_valid = false;
	move_state(s, i, XP_JS_HELD, XP_R_HELD, sj->j.reason_text, now);
	return 0;
}

int xp_sched_release(struct xp_sched *s, size_t i, int64_t now, struct xp_err *err)
{
	if (i >= s->n_jobs)
		return xp_errf(err, "no job %zu", i);
	struct xs_job *sj = &s->jobs[i];
	if (sj->j.state != XP_JS_HELD)
		return xp_errf(err, "job %lld is %s; only a held job can be released", (long long)sj->j.id,
			       xp_jstate_name(sj->j.state));
	set_reason(sj, XP_R_PRIORITY, "released; not yet considered by a scheduling pass");
	pend_insert(s, i);
	move_state(s, i, XP_JS_PENDING, XP_R_NONE, NULL, now);
	return 0;
}

int xp_sched_cancel(struct xp_sched *s, size_t i, int64_t now, struct xp_err *err)
{
	if (i >= s->n_jobs)
		return xp_errf(err, "no job %zu", i);
	struct xs_job *sj = &s->jobs[i];
	if (xp_jstate_final(sj->j.state))
		return xp_errf(err, "job %lld is already %s", (long long)sj->j.id, xp_jstate_name(sj->j.state));
	if (sj->j.state == XP_JS_RUNNING || sj->j.state == XP_JS_ADMITTED) {
		stop_running(s, i);
		sj->j.end = now;
	} else if (sj->j.state == XP_JS_PENDING)
		pend_remove(s, i);
	if (s->head == i)
		s->resv_valid = false;
	set_reason(sj, XP_R_NONE, NULL);
	sj->j.pos_queue = sj->j.pos_global = 0;
	move_state(s, i, XP_JS_CANCELLED, XP_R_NONE, "cancelled by user", now);
	return 0;
}

/* What is free of the usable devices: each one's free share, less what running jobs hold. */
static void free_recount(struct xp_sched *s)
{
	s->free_milli = 0;
	for (size_t n = 0; n < s->c->n_nodes; n++)
		for (size_t p = 0; p < s->c->nodes[n]->n_devices; p++) {
			if (s->failed[s->off[n] + p] || s->drained[n])
				continue;
			double base;
			xp_place_index_use(s->ix, n, p, &base);
			s->free_milli += XS_MILLI - llround(base * XS_MILLI);
		}
	s->idle_milli = s->free_milli;
	for (size_t r = 0; r < s->n_running; r++)
		free_adjust(s, s->running[r], -1);
}

static void recapacity(struct xp_sched *s)
{
	capacity_compute(s);
	s->share_ok = false;
	free_recount(s);
	xs_count_recount(s);
	s->resv_valid = false;
	s->idle_gen++;
	s->up_gen++;
	s->down_gen++;
	xs_fail_clear(s);
}

int xp_sched_drain(struct xp_sched *s, size_t node_ix, struct xp_err *err)
{
	if (node_ix >= s->c->n_nodes)
		return xp_errf(err, "no node %zu", node_ix);
	if (s->drained[node_ix])
		return 0;
	const struct xp_node *nd = s->c->nodes[node_ix];
	size_t *pos = xp_malloc((nd->n_devices ? nd->n_devices : 1) * sizeof *pos), n = 0;
	for (size_t p = 0; p < nd->n_devices; p++)
		if (!s->failed[s->off[node_ix] + p])
			pos[n++] = p;
	block_slots(s, node_ix, pos, n);
	free(pos);
	s->drained[node_ix] = true;
	recapacity(s);
	return 0;
}

int xp_sched_fail_device(struct xp_sched *s, size_t node_ix, size_t pos, int64_t now, struct xp_err *err)
{
	if (node_ix >= s->c->n_nodes || pos >= s->c->nodes[node_ix]->n_devices)
		return xp_errf(err, "no device %zu on node %zu", pos, node_ix);
	size_t slot = s->off[node_ix] + pos;
	if (s->failed[slot])
		return 0;
	/* The job running there fails with it (a copy of the running list: finishing edits it). */
	size_t victim = SIZE_MAX;
	for (size_t r = 0; r < s->n_running && victim == SIZE_MAX; r++) {
		const struct xp_qalloc *a = &s->jobs[s->running[r]].j.alloc;
		for (size_t k = 0; k < a->n; k++)
			if (a->slots[k].node_ix == node_ix && a->slots[k].pos == pos)
				victim = s->running[r];
	}
	/* Possibly several shares on one device: fail each. */
	while (victim != SIZE_MAX) {
		char text[160];
		snprintf(text, sizeof text, "device %zu of %s failed", pos, s->c->nodes[node_ix]->name);
		stop_running(s, victim);
		s->jobs[victim].j.end = now;
		move_state(s, victim, XP_JS_FAILED, XP_R_NONE, text, now);
		victim = SIZE_MAX;
		for (size_t r = 0; r < s->n_running && victim == SIZE_MAX; r++) {
			const struct xp_qalloc *a = &s->jobs[s->running[r]].j.alloc;
			for (size_t k = 0; k < a->n; k++)
				if (a->slots[k].node_ix == node_ix && a->slots[k].pos == pos)
					victim = s->running[r];
		}
	}
	if (!s->drained[node_ix])
		block_slots(s, node_ix, &pos, 1);
	s->failed[slot] = true;
	recapacity(s);
	return 0;
}

/* ---------- the pass ---------- */

/* Whether queue qi or a queue below it has a job left to look at this pass. */
static bool active(const struct xp_sched *s, size_t qi)
{
	const struct xs_queue *q = &s->q[qi];
	if (!q->stopped && q->cur < q->n_pend)
		return true;
	for (size_t k = 0; k < q->n_kids; k++)
		if (active(s, q->kids[k]))
			return true;
	return false;
}

/* Among queues ids[0..n), the active one to serve first: lowest weighted dominant share, then
 * queue priority desc, then name (ids come in that tie order). */
static size_t pick(const struct xp_sched *s, const size_t *ids, size_t n)
{
	size_t best = SIZE_MAX;
	double bs = 0;
	for (size_t k = 0; k < n; k++) {
		if (!active(s, ids[k]))
			continue;
		double sh = s->share[ids[k]];
		if (best == SIZE_MAX || sh < bs || (sh == bs && s->q[ids[k]].rank < s->q[best].rank)) {
			best = ids[k];
			bs = sh;
		}
	}
	return best;
}

/* The queue whose next job comes next: down the tree by share; a queue's own jobs go before
 * its children's. SIZE_MAX when none is left. */
static size_t next_queue(struct xp_sched *s)
{
	/* Shares change only when charges do (xs_charge_apply marks them stale). */
	if (!s->share_ok) {
		for (size_t i = 0; i < s->nq; i++)
			s->share[i] = xp_sched_share(s, i);
		s->share_ok = true;
		s->next_q = SIZE_MAX;
	}
	/* The last answer stands while the shares do and its queue has jobs left to look at: in a
	 * pass the other queues only lose jobs (cur moves on, a strict queue stops), so at every
	 * level of the tree its branch is still the lowest share among the active ones. */
	if (s->next_q != SIZE_MAX && !s->q[s->next_q].stopped && s->q[s->next_q].cur < s->q[s->next_q].n_pend)
		return s->next_q;
	size_t qi = pick(s, s->roots, s->n_roots);
	while (qi != SIZE_MAX) {
		const struct xs_queue *q = &s->q[qi];
		if (!q->stopped && q->cur < q->n_pend)
			return s->next_q = qi;
		qi = pick(s, q->kids, q->n_kids);
	}
	return s->next_q = SIZE_MAX;
}

/* Starts job ji on placement r (pending -> admitted -> running at now). */
static void start_job(struct xp_sched *s, size_t ji, const struct xp_place_result *r, int64_t now, bool backfill)
{
	struct xs_job *sj = &s->jobs[ji];
	xs_alloc_from_result(sj, r);
	sj->j.alloc.commit = xp_place_commit(s->ix, r);
	s->ix_gen++;
	s->up_gen++;
	xs_charge_compute(s, ji);
	xs_charge_apply(s, ji, +1);
	sj->j.start = now;
	sj->j.end = -1;
	sj->backfilled = backfill;
	set_reason(sj, XP_R_NONE, NULL);
	sj->j.pos_queue = sj->j.pos_global = 0;
	sj->j.eta = now;
	running_add(s, ji);
	move_state(s, ji, XP_JS_ADMITTED, XP_R_NONE, NULL, now);
	move_state(s, ji, XP_JS_RUNNING, XP_R_NONE, NULL, now);
}

/* Why a refused job waits: validation, the idle cluster, a gang short of its minimum, or
 * resources now. text gets the words. */
static int refusal(struct xp_sched *s, struct xs_job *sj, const struct xp_place_result *r, char **text)
{
	size_t total = 0, gmin = 0;
	for (size_t g = 0; g < sj->j.spec->n_groups; g++) {
		total += (size_t)sj->j.spec->groups[g].replicas;
		gmin += (size_t)(sj->j.spec->groups[g].gang_min > 0 ? sj->j.spec->groups[g].gang_min
								     : sj->j.spec->groups[g].replicas);
	}
	if (r->n_reasons && r->reasons[0].code && strcmp(r->reasons[0].code, "validated") == 0) {
		*text = xp_strdup(r->summary ? r->summary : "no device proven");
		return XP_R_NOT_VALIDATED;
	}
	/* Fits nowhere even on the idle cluster (only the drained and failed devices held)? */
	struct xs_fail *ia = &s->idle_a[sj->shape];
	if (ia->gen != s->idle_gen) {
		struct xp_place_opts po = {.strategy = s->o.strategy, .bare = true, .reconfigure = s->o.reconfigure};
		struct xp_err e2;
		struct xp_place_result *ir = xp_place_ix(s->idle, sj->j.spec, &po, &e2);
		ia->gen = s->idle_gen;
		free(ia->text);
		ia->text = NULL;
		ia->reason = 0;
		if (ir && !ir->placed && ir->fit < gmin) {
			ia->reason = XP_R_AFFINITY;
			ia->text = xp_asprintf("fits nowhere even with every job gone: %s", ir->summary ? ir->summary : "no node fits");
		}
		xp_place_result_free(ir);
	}
	int idle_reason = ia->reason;
	const char *idle_text = ia->text;
	if (idle_reason == XP_R_AFFINITY) {
		*text = xp_strdup(idle_text);
		return XP_R_AFFINITY;
	}
	if (total > 1 && r->fit > 0) {
		/* The placement's own "only N of M replicas fit; " would say the count twice. */
		const char *rest = r->summary ? r->summary : "";
		const char *cut = strncmp(rest, "only ", 5) == 0 ? strstr(rest, "; ") : NULL;
		*text = xp_asprintf("%zu of %zu replicas fit (gang minimum %zu); %s", r->fit, total, gmin,
				    cut ? cut + 2 : rest);
		return XP_R_GANG;
	}
	*text = xp_strdup(r->summary ? r->summary : "no node fits");
	return XP_R_RESOURCES;
}

/* Whether any of r's devices is reserved for the head job. */
static bool touches_reserved(const struct xp_sched *s, const struct xp_place_result *r)
{
	for (size_t i = 0; i < r->n_replicas; i++)
		for (size_t d = 0; d < r->replicas[i].n_devices; d++)
			if (s->reserved[s->off[r->replicas[i].node_ix] + (size_t)r->replicas[i].pos[d]])
				return true;
	return false;
}



/* Moves released, uncharged victims to preempted and back to pending (submit time kept). */
static void evict(struct xp_sched *s, const size_t *v, size_t n, size_t by, int reason, int64_t now)
{
	const struct xp_qjob *b = &s->jobs[by].j;
	char text[192];
	snprintf(text, sizeof text, "preempted by job %lld (queue %s, priority %d)%s", (long long)b->id,
		 s->qs->queues[s->jobs[by].qi].name, b->priority, reason == XP_R_QUOTA ? " reclaiming its quota" : "");
	for (size_t k = 0; k < n; k++) {
		struct xs_job *sj = &s->jobs[v[k]];
		running_remove(s, v[k]);
		free(sj->ch);
		sj->ch = NULL;
		sj->n_ch = 0;
		free(sj->j.alloc.slots);
		sj->j.alloc = (struct xp_qalloc){NULL, 0, -1};
		sj->backfilled = false;
		sj->j.start = -1;
		sj->j.preemptions++;
		move_state(s, v[k], XP_JS_PREEMPTED, reason, text, now);
		set_reason(sj, XP_R_PRIORITY, text);
		pend_insert(s, v[k]);
		move_state(s, v[k], XP_JS_PENDING, reason, text, now);
	}
	if (n) {
		s->resv_valid = false;
		s->down_gen++;
		xs_fail_clear(s);
	}
}

/* A draining queue (Kueue HoldAndDrain) evicts its running jobs: back to pending, devices
 * freed, submit times kept. */
static void drain_queue(struct xp_sched *s, size_t qi, int64_t now)
{
	char text[128];
	snprintf(text, sizeof text, "queue %s is draining", s->qs->queues[qi].name);
	for (size_t r = s->n_running; r-- > 0;) {
		size_t ji = s->running[r];
		if (s->jobs[ji].qi != qi)
			continue;
		stop_running(s, ji);
		struct xs_job *sj = &s->jobs[ji];
		sj->j.start = -1;
		sj->j.preemptions++;
		move_state(s, ji, XP_JS_PREEMPTED, XP_R_QUEUE_INACTIVE, text, now);
		set_reason(sj, XP_R_QUEUE_INACTIVE, text);
		pend_insert(s, ji);
		move_state(s, ji, XP_JS_PENDING, XP_R_QUEUE_INACTIVE, text, now);
	}
}

/* The node of device slot slot (the counts keep it per slot). */
static size_t slot_node(const struct xp_sched *s, size_t slot)
{
	return s->cnt.snode[slot];
}

/* Free milli-devices among the head's reserved slots (kept per index generation). */
static int64_t resv_free(struct xp_sched *s)
{
	if (s->resv_free_gen == s->ix_gen)
		return s->resv_free;
	int64_t f = 0;
	for (size_t k = 0; k < s->n_resv; k++) {
		size_t slot = s->resv_slots[k], n = slot_node(s, slot);
		if (s->drained[n] || s->failed[slot])
			continue;
		int64_t u = llround(xp_place_index_use(s->ix, n, slot - s->off[n], NULL) * XS_MILLI);
		if (u < XS_MILLI)
			f += XS_MILLI - u;
	}
	s->resv_free = f;
	s->resv_free_gen = s->ix_gen;
	return f;
}

/* Job sj placed with the head's reserved slots taken by a blocker commit (released again at
 * once): where it could start without touching them; NULL when nowhere. */
static struct xp_place_result *around_reserved(struct xp_sched *s, const struct xs_job *sj)
{
	if (!s->n_resv)
		return NULL;
	struct xp_place_replica *reps = xp_calloc(s->n_resv, sizeof *reps);
	int *pos = xp_calloc(s->n_resv, sizeof *pos);
	for (size_t k = 0; k < s->n_resv; k++) {
		size_t n = slot_node(s, s->resv_slots[k]);
		pos[k] = (int)(s->resv_slots[k] - s->off[n]);
		reps[k] = (struct xp_place_replica){.node_ix = n, .pos = &pos[k], .n_devices = 1, .take = 1.0,
						    .isolation = "exclusive"};
	}
	struct xp_place_result br = {.placed = true, .replicas = reps, .n_replicas = s->n_resv};
	int64_t id = xp_place_commit(s->ix, &br);
	free(reps);
	free(pos);
	struct xp_place_opts po = {.strategy = s->o.strategy, .bare = true, .quiet = true, .reconfigure = s->o.reconfigure};
	struct xp_err err;
	struct xp_place_result *r = xp_place_ix(s->ix, sj->j.spec, &po, &err);
	xp_place_release(s->ix, id);
	if (r && !r->placed) {
		xp_place_result_free(r);
		r = NULL;
	}
	return r;
}

/* Whether a job starting on r now would delay the head job's reservation. */
static bool delays_head(const struct xp_sched *s, size_t head, int64_t now, int64_t est, const struct xp_place_result *r)
{
	return head != SIZE_MAX && s->shadow >= 0 && now + est > s->shadow && touches_reserved(s, r);
}

/* A copy of spec with every group narrowed to device class k: its vendor and model globs
 * where the group gives none, its label as one more selector. NULL when k is a built-in. */
static struct xp_job *narrow(const struct xp_job *spec, const struct xp_rclass *k)
{
	if (k->builtin || (!k->vendor && !k->model && !k->label))
		return NULL;
	json_t *o = xp_job_to_json(spec);
	char *t = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	struct xp_err err;
	struct xp_job *j = t ? xp_job_parse(t, strlen(t), NULL, &err) : NULL;
	free(t);
	for (size_t g = 0; j && g < j->n_groups; g++) {
		struct xp_task_group *tg = &j->groups[g];
		if (k->vendor && !tg->vendor)
			tg->vendor = xp_strdup(k->vendor);
		if (k->model && !tg->model)
			tg->model = xp_strdup(k->model);
		const char *eq = k->label ? strchr(k->label, '=') : NULL;
		if (eq) {
			char *key = xp_strdup(k->label);
			key[eq - k->label] = 0;
			xp_labels_set(&tg->labels, key, eq + 1);
			free(key);
		}
	}
	return j;
}

/* Kueue's flavor fungibility (TryNextFlavor): a job its quota refused where it placed may fit
 * the quota on devices of another class; each device class in class order, the job narrowed
 * to it, is placed and admitted in turn. The first that is admitted: its placement. */
static struct xp_place_result *next_class(struct xp_sched *s, size_t ji, const struct xp_place_opts *po)
{
	struct xs_job *sj = &s->jobs[ji];
	size_t n_dev = 0;
	for (size_t k = 0; k < s->nc; k++)
		n_dev += !s->qs->classes[k].builtin;
	if (n_dev < 2)
		return NULL;
	for (size_t o = 0; o < s->nc; o++) {
		struct xp_job *nj = narrow(sj->j.spec, &s->qs->classes[s->class_order[o]]);
		if (!nj)
			continue;
		struct xp_err err;
		struct xp_place_result *r = xp_place_ix(s->ix, nj, po, &err);
		xp_job_free(nj);
		if (!r || !r->placed) {
			xp_place_result_free(r);
			continue;
		}
		struct xs_charge *ch;
		size_t n;
		xs_result_charges(s, ji, r, &ch, &n);
		char *text = NULL;
		bool short_;
		int reason = xq_admit(s, sj->qi, ch, n, &text, &short_);
		free(text);
		free(ch);
		if (!reason)
			return r;
		xp_place_result_free(r);
	}
	return NULL;
}

/* xp_preempt_any for job ji, kept per shape, queue and priority until the index changes (the
 * candidates are its queue's running jobs of lower priority; the answer depends on nothing
 * else). */
/* The kept answer for job ji's shape, queue and priority: 1 yes, 0 no, -1 none. */
static struct xs_probe *probe_entry(struct xp_sched *s, size_t ji)
{
	const struct xs_job *sj = &s->jobs[ji];
	for (size_t k = 0; k < s->n_probe; k++)
		if (s->probe[k].shape == sj->shape && s->probe[k].qi == sj->qi && s->probe[k].prio == sj->j.priority)
			return &s->probe[k];
	return NULL;
}

static int probe_kept(struct xp_sched *s, size_t ji)
{
	const struct xs_probe *e = probe_entry(s, ji);
	if (!e || e->gen != (e->yes ? s->up_gen : s->down_gen))
		return -1;
	return e->yes;
}

static bool probe_any(struct xp_sched *s, size_t ji, const size_t *cand, size_t nc)
{
	const struct xs_job *sj = &s->jobs[ji];
	int kept = probe_kept(s, ji);
	if (kept >= 0)
		return kept;
	bool yes = xp_preempt_any(s, ji, cand, nc);
	struct xs_probe *e = probe_entry(s, ji);
	if (!e) {
		if (s->n_probe == s->cap_probe) {
			s->cap_probe = s->cap_probe ? s->cap_probe * 2 : 16;
			s->probe = xp_realloc(s->probe, s->cap_probe * sizeof *s->probe);
		}
		e = &s->probe[s->n_probe++];
	}
	*e = (struct xs_probe){sj->shape, sj->qi, sj->j.priority, yes, yes ? s->up_gen : s->down_gen};
	return yes;
}

/* "would delay job N (reserved start T)" for the head and its shadow time, made once for both
 * (a pass gives it to many jobs). */
static const char *delay_text(struct xp_sched *s, size_t head)
{
	if (s->delay_head != head || s->delay_shadow != s->shadow) {
		char tt[40];
		xs_time_text(s->shadow, tt, sizeof tt);
		snprintf(s->delay_text, sizeof s->delay_text, "would delay job %lld (reserved start %s)",
			 (long long)s->jobs[head].j.id, tt);
		s->delay_head = head;
		s->delay_shadow = s->shadow;
	}
	return s->delay_text;
}

/* Looks at job ji once in a pass: starts it (1), or gives it its reason (0). */
static int try_job(struct xp_sched *s, size_t ji, int64_t now, size_t head, bool *stale)
{
	struct xs_job *sj = &s->jobs[ji];
	size_t qi = sj->qi;
	const struct xp_queue *qu = &s->qs->queues[qi];
	int reason = 0;
	char *text = NULL;
	bool found;
	/* A shape refused since devices last came free is refused again: no dry-run. Quota
	 * answers depend on the queue too. */
	struct xs_fail *pf = &s->fail[sj->shape], *qf = &s->qfail[sj->shape * s->nq + qi];
	/* Not the shape's answer when this job might preempt where another could not: its queue
	 * preempts or reclaims, or may hold lower-priority jobs (the Priority reason's check,
	 * which a simulator's passes leave to xp_sched_explain). */
	const struct xs_queue *sq = &s->q[qi];
	bool own = qu->within != XP_QP_NEVER || qu->reclaim != XP_QP_NEVER ||
		   (sq->n_running && sj->j.priority > sq->min_started_prio && !s->o.skip_tail);
	sj->held_back = false;
	sj->gated = false;
	bool qown = qu->reclaim == XP_QP_LOWER_PRIORITY; /* reclaim by priority: per job */
	found = (!own && pf->gen == s->fail_gen) || (!qown && qf->gen == s->qfail_gen);
	if (found) {
		const struct xs_fail *f = !own && pf->gen == s->fail_gen ? pf : qf;
		(void)qown;
		set_reason(sj, f->reason, f->text);
		sj->gated = f->counted;
		return 0;
	}
	/* The count gates below refuse without a dry-run only a shape known to fit the idle
	 * cluster (else the dry-run says AffinityUnsatisfiable, and a job that can never start
	 * must not become the head) and asking no validated layer (NotValidated comes first). */
	bool validated = false;
	for (size_t g = 0; g < sj->j.spec->n_groups; g++)
		validated = validated || sj->j.spec->groups[g].validated_layer >= 0;
	const struct xs_fail *ia = &s->idle_a[sj->shape];
	bool countable = s->o.skip_tail && !s->may_preempt && !validated && ia->gen == s->idle_gen && !ia->reason;
	/* Behind a reservation: a job ending after the reserved start that needs more whole
	 * devices than are free outside the reserved ones, whose shape was just refused for
	 * touching them with no shorter estimate, or (a simulator's pass) that fits by the counts
	 * of idle devices node by node but not outside them (qcount.c), would delay the head: no
	 * dry-run. */
	if (!own && head != SIZE_MAX && s->shadow >= 0 && now + sj->j.est_s > s->shadow &&
	    ((sj->need && sj->need <= s->free_milli && sj->need > s->free_milli - resv_free(s)) ||
	     s->blk_fail[sj->shape] == s->blk_gen ||
	     (countable && s->cnt.shape[sj->shape].whole && !xs_count_refuses(s, sj->shape, false, NULL, NULL) &&
	      xs_count_refuses(s, sj->shape, true, NULL, NULL)))) {
		set_reason(sj, XP_R_PRIORITY, delay_text(s, head));
		return 0;
	}
	/* The counting gate (a simulator's passes): more whole devices than are free, and no
	 * preemption to make room: Resources without a dry-run (its exact words, Resources or
	 * GangIncomplete, come from xp_sched_explain: gated). */
	if (countable && sj->need > s->free_milli) {
		/* The words stay the same from pass to pass (no free count): no copy each time. */
		char t[96];
		snprintf(t, sizeof t, "%lld devices needed, fewer free", (long long)(sj->need / XS_MILLI));
		if (sj->j.reason != XP_R_RESOURCES || !sj->j.reason_text || strcmp(sj->j.reason_text, t) != 0)
			set_reason(sj, XP_R_RESOURCES, t);
		sj->gated = true;
		return 0;
	}
	/* The gate per node (qcount.c): fewer replicas' room in idle devices of its kind, node by
	 * node, than its gang minimum. Kept as the shape's refusal, like a dry-run's; its words
	 * are the count's (xp_sched_explain gives a full pass's). */
	size_t cfit, cg;
	if (countable && xs_count_refuses(s, sj->shape, false, &cfit, &cg)) {
		const struct xp_task_group *gr = &sj->j.spec->groups[cg];
		size_t total = 0;
		for (size_t g = 0; g < sj->j.spec->n_groups; g++)
			total += (size_t)sj->j.spec->groups[g].replicas;
		char t[160];
		int rs = total > 1 && cfit > 0 ? XP_R_GANG : XP_R_RESOURCES;
		if (rs == XP_R_GANG)
			snprintf(t, sizeof t, "at most %zu of %zu replicas fit (gang minimum %d) by idle devices of %d per node",
				 cfit, total, s->cnt.shape[sj->shape].gmin[cg], gr->devices);
		else
			snprintf(t, sizeof t, "no node has %d idle device%s of its kind", gr->devices, gr->devices == 1 ? "" : "s");
		fail_put(s, pf, rs, t);
		pf->counted = true;
		set_reason(sj, rs, t);
		sj->gated = true;
		return 0;
	}
	/* A simulator's pass needs no reasons' words for a refusal (only which reason): quiet,
	 * unless the job asks for a validated layer (NotValidated is the placement's top reason). */
	struct xp_place_opts po = {.strategy = s->o.strategy, .bare = true, .quiet = s->o.skip_tail && !validated,
				   .reconfigure = s->o.reconfigure};
	struct xp_err e2;
	struct xp_place_result *r = xp_place_ix(s->ix, sj->j.spec, &po, &e2);
	size_t *victims = NULL, nv = 0;
	int vreason = 0;
	if (!r) {
		reason = XP_R_AFFINITY;
		text = xp_strdup(e2.msg);
	} else if (r->placed) {
		struct xs_charge *ch;
		size_t n;
		xs_result_charges(s, ji, r, &ch, &n);
		bool pool_short = false;
		reason = xq_admit(s, qi, ch, n, &text, &pool_short);
		if (reason && pool_short && qu->reclaim != XP_QP_NEVER && xq_within_deserved(s, qi, ch, n)) {
			size_t nc;
			size_t *cand = xp_preempt_reclaim(s, ji, &nc);
			struct xp_place_result *r2 = xp_preempt_find(s, ji, cand, nc, true, false, &victims, &nv);
			free(cand);
			if (r2) {
				xp_place_result_free(r);
				r = r2;
				reason = 0;
				free(text);
				text = NULL;
				vreason = XP_R_QUOTA;
			}
		}
		if (reason) {
			struct xp_place_result *r2 = next_class(s, ji, &po);
			if (r2) {
				xp_place_result_free(r);
				r = r2;
				reason = 0;
				free(text);
				text = NULL;
			}
		}
		free(ch);
		if (reason)
			fail_put(s, qf, reason, text);
	} else {
		reason = refusal(s, sj, r, &text);
		if (reason == XP_R_RESOURCES || reason == XP_R_GANG) {
			struct xp_place_result *r2 = NULL;
			size_t nc;
			/* Reclaim first: what borrowing siblings hold of this queue's deserved quota is
			 * taken back before its own lower-priority jobs are evicted (Kueue looks at the
			 * borrowing workloads of other queues first), and whatever the within policy. */
			if (qu->reclaim != XP_QP_NEVER) {
				size_t *rc_cand = xp_preempt_reclaim(s, ji, &nc);
				r2 = xp_preempt_find(s, ji, rc_cand, nc, true, false, &victims, &nv);
				vreason = XP_R_QUOTA;
				free(rc_cand);
			}
			/* Candidates only where there may be some: a queue that preempts, or one whose
			 * lower-priority jobs may hold what this one needs (the Priority reason; a
			 * simulator's passes leave that check to xp_sched_explain). */
			const struct xs_queue *sq2 = &s->q[qi];
			bool lower = sq2->n_running && sj->j.priority > sq2->min_started_prio && !s->o.skip_tail;
			size_t *cand = !r2 && (qu->within != XP_QP_NEVER || lower) ? xp_preempt_within(s, ji, &nc)
										   : (nc = 0, NULL);
			if (nc && qu->within != XP_QP_NEVER) {
				r2 = xp_preempt_find(s, ji, cand, nc, false, false, &victims, &nv);
				vreason = XP_R_PRIORITY;
			} else if (nc) {
				/* within never: say that lower-priority jobs of its queue hold what it needs,
				 * when evicting them would let it start. It still waits for devices: the
				 * head's reservation may be its (held_back). */
				size_t *pv = NULL, npv = 0;
				struct xp_place_result *probe = xp_preempt_find(s, ji, cand, nc, false, true, &pv, &npv);
				if (probe) {
					free(text);
					text = xp_asprintf("%zu running job%s of lower priority in queue %s hold%s what it needs "
							   "(preemption within the queue: never)",
							   npv, npv == 1 ? "" : "s", qu->name, npv == 1 ? "s" : "");
					reason = XP_R_PRIORITY;
					sj->held_back = true;
				}
				xp_place_result_free(probe);
				free(pv);
			}
			free(cand);
			if (r2) {
				xp_place_result_free(r);
				r = r2;
				reason = 0;
				free(text);
				text = NULL;
			}
		}
		if (reason && reason != XP_R_PRIORITY)
			fail_put(s, pf, reason, text);
	}
	if (!reason && !nv && delays_head(s, head, now, sj->j.est_s, r)) {
		/* EASY lets it start when its devices can avoid the reserved ones: placed again
		 * with those blocked. A shape that fits nowhere so stays refused (blk_fail). */
		struct xp_place_result *rb = around_reserved(s, sj);
		if (rb) {
			xp_place_result_free(r);
			r = rb;
		} else
			s->blk_fail[sj->shape] = s->blk_gen;
	}
	if (!reason && delays_head(s, head, now, sj->j.est_s, r)) {
		text = xp_strdup(delay_text(s, head));
		reason = XP_R_PRIORITY;
		/* Victims found for it stay: put them back. */
		for (size_t k = nv; k-- > 0;) {
			struct xs_job *v = &s->jobs[victims[k]];
			v->j.alloc.commit = xs_commit_slots(s, &v->j);
			xs_charge_apply(s, victims[k], +1);
		}
		nv = 0;
	}
	if (reason) {
		set_reason(sj, reason, text);
		free(text);
		free(victims);
		xp_place_result_free(r);
		return 0;
	}
	/* A start ahead of the head on its reserved devices, ending after its reserved start:
	 * the reservation must be worked out again. */
	if (head == SIZE_MAX && s->resv_valid && s->shadow >= 0 && now + sj->j.est_s > s->shadow && touches_reserved(s, r))
		*stale = true;
	evict(s, victims, nv, ji, vreason, now);
	free(victims);
	pend_remove(s, ji);
	start_job(s, ji, r, now, head != SIZE_MAX);
	xp_place_result_free(r);
	return 1;
}

int xp_sched_pass(struct xp_sched *s, int64_t now, struct xp_err *err)
{
	(void)err;
	int started = 0;
	s->next_q = SIZE_MAX; /* every queue's jobs are there to look at again */
	for (size_t i = 0; i < s->nq; i++) {
		s->q[i].cur = 0;
		s->q[i].blocker = SIZE_MAX;
		s->q[i].stopped = false;
		if (s->qs->queues[i].state == XP_QS_DRAIN)
			drain_queue(s, i, now);
		if (s->qs->queues[i].state != XP_QS_OPEN) {
			/* Hold and drain admit nothing: every pending job says why, in queue order. */
			const char *how = s->qs->queues[i].state == XP_QS_HOLD ? "on hold" : "draining";
			char text[128];
			snprintf(text, sizeof text, "queue %s is %s", s->qs->queues[i].name, how);
			for (size_t k = 0; k < s->q[i].n_pend; k++) {
				set_reason(&s->jobs[s->q[i].pend[k]], XP_R_QUEUE_INACTIVE, text);
				s->jobs[s->q[i].pend[k]].j.pos_queue = k + 1;
			}
			s->q[i].stopped = true;
		}
	}
	size_t head = SIZE_MAX, tried = 0, global = 0;
	bool stale = false; /* a start ahead of the head took its reserved devices */
	bool stop_all = false; /* no backfill: the head stops everything behind it */
	size_t qi;
	while ((qi = next_queue(s)) != SIZE_MAX) {
		struct xs_queue *q = &s->q[qi];
		size_t ji = q->pend[q->cur++];
		struct xs_job *sj = &s->jobs[ji];
		sj->j.pos_queue = q->cur;
		sj->j.pos_global = ++global;
		if (stop_all) {
			char text[96];
			snprintf(text, sizeof text, "behind job %lld (no backfill)", (long long)s->jobs[head].j.id);
			set_reason(sj, XP_R_PRIORITY, text);
			continue;
		}
		if (tried >= s->o.depth && s->o.skip_tail)
			break;
		if (tried >= s->o.depth) {
			char text[128];
			snprintf(text, sizeof text, "position %zu; a pass tries the first %zu jobs", sj->j.pos_global,
				 s->o.depth);
			set_reason(sj, XP_R_PRIORITY, text);
			continue;
		}
		/* A simulator's pass ends once nothing can start: no device free, or every shape
		 * waiting refused since devices last came free. */
		if (s->o.skip_tail && !s->may_preempt && (s->free_milli <= 0 || s->n_refused >= s->n_shapes_pending))
			break;
		tried++;
		if (try_job(s, ji, now, head, &stale)) {
			/* pend_remove took it out of q->pend before q->cur. */
			q->cur--;
			global--;
			started++;
			continue;
		}
		if (head == SIZE_MAX && (sj->j.reason == XP_R_RESOURCES || sj->j.reason == XP_R_GANG || sj->held_back)) {
			head = ji;
			/* The kept reservation holds while the head is the same job, nothing started ahead
			 * of it on its devices, nothing was preempted or taken out, and its start is
			 * still ahead (devices freed early only bring it forward). */
			if (s->o.no_backfill)
				stop_all = true;
			else if (!s->resv_valid || s->head != ji || stale || (s->shadow >= 0 && now >= s->shadow) ||
				 (s->shadow < 0 && now != s->resv_now)) {
				xs_reservation(s, ji, now);
				s->ix_gen++;
				s->blk_gen++; /* other reserved slots */
			}
		}
		if (s->qs->queues[qi].order == XP_QO_STRICT) {
			q->stopped = true;
			q->blocker = ji;
		}
	}
	/* A simulator's pass that ended before any job was refused for devices keeps the kept
	 * head's reservation for the next (the same head then needs no new walk), unless a start
	 * took its reserved devices; any other pass without a head drops it. */
	bool keep = s->o.skip_tail && !stale && s->resv_valid && s->head != SIZE_MAX &&
		    s->jobs[s->head].j.state == XP_JS_PENDING;
	if (head == SIZE_MAX && !keep) {
		s->head = SIZE_MAX;
		s->shadow = -1;
		for (size_t k = 0; k < s->n_resv; k++)
			xs_count_reserve(s, s->resv_slots[k], false);
		s->n_resv = 0;
		s->resv_valid = false;
	}
	/* A simulator's pass leaves what it did not reach as it was. */
	if (s->o.skip_tail)
		return started;
	/* The jobs strict queues held back, and the positions of what no loop reached. */
	for (size_t i = 0; i < s->nq; i++) {
		struct xs_queue *q = &s->q[i];
		if (s->qs->queues[i].state != XP_QS_OPEN || q->blocker == SIZE_MAX)
			continue;
		for (size_t k = q->cur; k < q->n_pend; k++) {
			struct xs_job *sj = &s->jobs[q->pend[k]];
			sj->j.pos_queue = k + 1;
			char text[96];
			snprintf(text, sizeof text, "behind job %lld", (long long)s->jobs[q->blocker].j.id);
			set_reason(sj, XP_R_PRIORITY, text);
		}
	}
	/* Global positions of inactive queues' and strict-blocked jobs: after the rest, by queue. */
	for (size_t k = 0; k < s->nq; k++) {
		size_t i = k;
		struct xs_queue *q = &s->q[i];
		size_t from = s->qs->queues[i].state != XP_QS_OPEN ? 0 : q->cur;
		for (size_t m = from; m < q->n_pend; m++)
			s->jobs[q->pend[m]].j.pos_global = ++global;
	}
	return started;
}

/* The reason a full pass gives job ji, refused in a simulator's pass by a count gate (whose
 * words say only that it cannot fit): a dry-run with words, kept per shape in *rs and *tx. */
static void explain_gated(struct xp_sched *s, size_t ji, int *rs, char **tx)
{
	struct xs_job *sj = &s->jobs[ji];
	if (!rs[sj->shape]) {
		struct xp_place_opts po = {.strategy = s->o.strategy, .bare = true, .reconfigure = s->o.reconfigure};
		struct xp_err e2;
		struct xp_place_result *r = xp_place_ix(s->ix, sj->j.spec, &po, &e2);
		rs[sj->shape] = -1; /* it places now (ends since the last pass): the gate's words stay */
		if (!r) {
			rs[sj->shape] = XP_R_AFFINITY;
			tx[sj->shape] = xp_strdup(e2.msg);
		} else if (!r->placed)
			rs[sj->shape] = refusal(s, sj, r, &tx[sj->shape]);
		xp_place_result_free(r);
	}
	if (rs[sj->shape] > 0)
		set_reason(sj, rs[sj->shape], tx[sj->shape]);
}

void xp_sched_explain(struct xp_sched *s)
{
	if (!s->o.skip_tail)
		return;
	int *rs = xp_calloc(s->n_shapes ? s->n_shapes : 1, sizeof *rs);
	char **tx = xp_calloc(s->n_shapes ? s->n_shapes : 1, sizeof *tx);
	for (size_t qi = 0; qi < s->nq; qi++) {
		const struct xp_queue *qu = &s->qs->queues[qi];
		const struct xs_queue *q = &s->q[qi];
		if (qu->state != XP_QS_OPEN)
			continue;
		for (size_t k = 0; k < q->n_pend; k++) {
			size_t ji = q->pend[k];
			struct xs_job *sj = &s->jobs[ji];
			if (sj->gated) {
				explain_gated(s, ji, rs, tx);
				sj->gated = false;
			}
			if ((sj->j.reason != XP_R_RESOURCES && sj->j.reason != XP_R_GANG) || qu->within != XP_QP_NEVER ||
			    !q->n_running || sj->j.priority <= q->min_started_prio)
				continue;
			int kept = probe_kept(s, ji);
			size_t nc = 0;
			size_t *cand = kept < 0 ? xp_preempt_within(s, ji, &nc) : NULL;
			if (kept > 0 || (kept < 0 && probe_any(s, ji, cand, nc))) {
				char *text = xp_asprintf("running jobs of lower priority in queue %s hold what it needs "
							 "(preemption within the queue: never)",
							 qu->name);
				set_reason(sj, XP_R_PRIORITY, text);
				sj->held_back = true;
				free(text);
			}
			free(cand);
		}
	}
	for (size_t i = 0; i < s->n_shapes; i++)
		free(tx[i]);
	free(tx);
	free(rs);
}

int64_t xp_sched_shadow(const struct xp_sched *s, size_t *head)
{
	if (head)
		*head = s->head;
	return s->head == SIZE_MAX ? -1 : s->shadow;
}
