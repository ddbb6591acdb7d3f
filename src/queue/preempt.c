/* preempt.c: victims for a job that does not start (preempt.h): lower-priority jobs of its own
 * queue (Kueue withinClusterQueue) or jobs of siblings that borrow (Kueue reclaimWithinCohort,
 * Volcano reclaim), released one by one from the scheduler's index until the job places and
 * its quota admits it, then taken back from the last while it still does: the smallest set in
 * that order (Kueue's minimal set). */
#include "preempt.h"

#include <stdlib.h>
#include <string.h>

#include "qsched_int.h"
#include "quota.h"

struct cand {
	size_t ji;
	double share;
	int prio;
	int64_t start, id;
};

/* Eviction order: the sibling with the largest share first (reclaim), then lowest priority,
 * then the most recently started (it loses the least work), then the highest id. */
static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->share != y->share)
		return x->share > y->share ? -1 : 1;
	if (x->prio != y->prio)
		return x->prio < y->prio ? -1 : 1;
	if (x->start != y->start)
		return x->start > y->start ? -1 : 1;
	return x->id > y->id ? -1 : x->id < y->id;
}

static size_t *sorted(struct cand *c, size_t n)
{
	qsort(c, n, sizeof *c, cand_cmp);
	size_t *out = xp_malloc((n ? n : 1) * sizeof *out);
	for (size_t i = 0; i < n; i++)
		out[i] = c[i].ji;
	free(c);
	return out;
}

size_t *xp_preempt_within(struct xp_sched *s, size_t ji, size_t *n)
{
	const struct xp_qjob *j = &s->jobs[ji].j;
	int pol = s->qs->queues[s->jobs[ji].qi].within;
	struct cand *c = xp_malloc((s->n_running ? s->n_running : 1) * sizeof *c);
	*n = 0;
	for (size_t k = 0; k < s->n_running; k++) {
		const struct xs_job *v = &s->jobs[s->running[k]];
		if (v->qi != s->jobs[ji].qi)
			continue;
		bool lower = v->j.priority < j->priority;
		bool newer = v->j.priority == j->priority &&
			     (v->j.submit > j->submit || (v->j.submit == j->submit && v->j.id > j->id));
		if (!(lower || (pol == XP_QP_LOWER_OR_NEWER && newer) || pol == XP_QP_ANY))
			continue;
		c[(*n)++] = (struct cand){s->running[k], 0, v->j.priority, v->j.start, v->j.id};
	}
	return sorted(c, *n);
}

size_t *xp_preempt_reclaim(struct xp_sched *s, size_t ji, size_t *n)
{
	const struct xp_qjob *j = &s->jobs[ji].j;
	size_t qi = s->jobs[ji].qi, p = s->q[qi].parent;
	int pol = s->qs->queues[qi].reclaim;
	struct cand *c = xp_malloc((s->n_running ? s->n_running : 1) * sizeof *c);
	*n = 0;
	if (p == SIZE_MAX || pol == XP_QP_NEVER)
		return sorted(c, 0);
	for (size_t k = 0; k < s->n_running; k++) {
		const struct xs_job *v = &s->jobs[s->running[k]];
		if (v->qi == qi || s->q[v->qi].parent != p || !s->qs->queues[v->qi].reclaimable)
			continue;
		if (pol == XP_QP_LOWER_PRIORITY && v->j.priority >= j->priority)
			continue;
		c[(*n)++] = (struct cand){s->running[k], xp_sched_share(s, v->qi), v->j.priority, v->j.start, v->j.id};
	}
	return sorted(c, *n);
}

/* Whether job vi's queue still borrows any of what vi is charged (reclaim takes only from a
 * queue while it is above its deserved quota). */
static bool still_borrows(const struct xp_sched *s, size_t vi)
{
	const struct xs_job *v = &s->jobs[vi];
	for (size_t k = 0; k < v->n_ch; k++)
		if (xq_borrow(s, v->qi, v->ch[k].key / XP_RES_COUNT, (int)(v->ch[k].key % XP_RES_COUNT)) > 0)
			return true;
	return false;
}

static void let_go(struct xp_sched *s, size_t vi)
{
	struct xs_job *v = &s->jobs[vi];
	xp_place_release(s->ix, v->j.alloc.commit);
	v->j.alloc.commit = -1;
	xs_charge_apply(s, vi, -1);
}

static void take_back(struct xp_sched *s, size_t vi)
{
	struct xs_job *v = &s->jobs[vi];
	v->j.alloc.commit = xs_commit_slots(s, &v->j);
	xs_charge_apply(s, vi, +1);
}

/* The job's placement now, when it places and its quota admits it (and, for reclaim, it stays
 * within its deserved quota); NULL otherwise. */
static struct xp_place_result *fits(struct xp_sched *s, size_t ji, bool reclaim)
{
	struct xp_place_opts po = {.strategy = s->o.strategy, .bare = true, .quiet = true, .reconfigure = s->o.reconfigure};
	struct xp_err err;
	struct xp_place_result *r = xp_place_ix(s->ix, s->jobs[ji].j.spec, &po, &err);
	if (!r || !r->placed) {
		xp_place_result_free(r);
		return NULL;
	}
	struct xs_charge *ch;
	size_t n;
	xs_result_charges(s, ji, r, &ch, &n);
	char *text = NULL;
	bool short_;
	bool ok = xq_admit(s, s->jobs[ji].qi, ch, n, &text, &short_) == 0 &&
		  (!reclaim || xq_within_deserved(s, s->jobs[ji].qi, ch, n));
	free(text);
	free(ch);
	if (!ok) {
		xp_place_result_free(r);
		return NULL;
	}
	return r;
}

/* Milli-devices job ji holds on usable devices. */
static int64_t usable_take(const struct xp_sched *s, size_t ji)
{
	int64_t t = 0;
	const struct xp_qalloc *a = &s->jobs[ji].j.alloc;
	for (size_t i = 0; i < a->n; i++)
		if (!s->failed[s->off[a->slots[i].node_ix] + a->slots[i].pos] && !s->drained[a->slots[i].node_ix])
			t += a->slots[i].take;
	return t;
}

/* Lets go the candidates on the first nodes (in the candidates' order) where d devices are
 * idle or held whole by candidates, on a node of job ji's model when it names one, until those
 * nodes have room for reps replicas of d and two more nodes; marks them in gone, lists them in
 * order; returns how many. Only an order: the answer is the dry-run's. */
static size_t near_nodes(struct xp_sched *s, size_t ji, int d, size_t reps, const size_t *cand, size_t n,
			 bool *gone, size_t *order)
{
	const struct xp_job *spec = s->jobs[ji].j.spec;
	const char *model = spec->n_groups ? spec->groups[0].model : NULL;
	if (!s->near_held) {
		s->near_held = xp_calloc(s->c->n_nodes ? s->c->n_nodes : 1, sizeof *s->near_held);
		s->near_sel = xp_calloc(s->c->n_nodes ? s->c->n_nodes : 1, sizeof *s->near_sel);
	}
	/* Whole devices candidates hold per node (-1 marks a node seen, so 0 is "none yet"). */
	size_t *touched = xp_malloc((n ? n : 1) * sizeof *touched), nt = 0, cap_t = n ? n : 1;
	for (size_t k = 0; k < n; k++) {
		const struct xp_qalloc *a = &s->jobs[cand[k]].j.alloc;
		for (size_t i = 0; i < a->n; i++) {
			size_t node = a->slots[i].node_ix;
			if (!s->near_held[node]) {
				if (nt == cap_t)
					touched = xp_realloc(touched, (cap_t *= 2) * sizeof *touched);
				touched[nt++] = node;
				s->near_held[node] = 1;
			}
			s->near_held[node] += a->slots[i].take >= XS_MILLI;
		}
	}
	size_t room = 0, extra = 0, sel = 0;
	for (size_t t = 0; t < nt && extra < 2; t++) {
		size_t node = touched[t];
		int held = s->near_held[node] - 1;
		const struct xp_node *nd = s->c->nodes[node];
		bool ok = !s->drained[node];
		int idle = 0;
		for (size_t p = 0; ok && p < nd->n_devices; p++) {
			if (model && !(nd->devices[p].model && xp_glob_match(model, nd->devices[p].model)))
				ok = false;
			else if (!s->failed[s->off[node] + p] && xp_place_index_use(s->ix, node, p, NULL) <= 1e-9)
				idle++;
		}
		if (ok && idle + held >= d) {
			if (room >= reps)
				extra++;
			room += (size_t)((idle + held) / d);
			s->near_sel[node] = true;
			sel++;
		}
	}
	size_t no = 0;
	for (size_t k = 0; k < n && sel; k++) {
		const struct xp_qalloc *a = &s->jobs[cand[k]].j.alloc;
		bool on = false;
		for (size_t i = 0; i < a->n && !on; i++)
			on = s->near_sel[a->slots[i].node_ix];
		if (on) {
			gone[k] = true;
			order[no++] = cand[k];
		}
	}
	for (size_t t = 0; t < nt; t++) {
		s->near_held[touched[t]] = 0;
		s->near_sel[touched[t]] = false;
	}
	free(touched);
	/* Let go after the walk: the walk reads the slots. */
	for (size_t k = 0; k < no; k++)
		let_go(s, order[k]);
	return no;
}

bool xp_preempt_any(struct xp_sched *s, size_t ji, const size_t *cand, size_t n)
{
	if (!n)
		return false;
	/* The counting gate: all of them gone and still fewer whole devices free than it needs. */
	int64_t need = s->jobs[ji].need, free_ = s->free_milli;
	if (need) {
		for (size_t k = 0; k < n && free_ < need; k++) {
			const struct xp_qalloc *a = &s->jobs[cand[k]].j.alloc;
			for (size_t i = 0; i < a->n; i++)
				if (!s->failed[s->off[a->slots[i].node_ix] + a->slots[i].pos] && !s->drained[a->slots[i].node_ix])
					free_ += a->slots[i].take;
		}
		if (free_ < need)
			return false;
	}
	/* Let go in order (gone[k]: cand[k] is), to be taken back in reverse. */
	bool *gone = xp_calloc(n, sizeof *gone);
	size_t *order = xp_malloc(n * sizeof *order), no = 0;
	struct xp_place_result *r = NULL;
	/* A replica of d whole devices fits only on a node where d devices are idle or held by
	 * candidates: the candidates of the first such nodes (of its model when it names one) with
	 * room for its replicas go first, and it mostly fits there. */
	const struct xp_job *spec = s->jobs[ji].j.spec;
	const struct xp_task_group *g0 = spec->n_groups == 1 ? &spec->groups[0] : NULL;
	if (g0 && g0->devices > 0 && !g0->slice && g0->share_pct <= 0)
		no = near_nodes(s, ji, g0->devices, (size_t)(g0->gang_min > 0 ? g0->gang_min : g0->replicas), cand, n,
				gone, order);
	if (no)
		r = fits(s, ji, false);
	/* Then the rest in growing batches (32, 64, ...): a job that fits with some gone fits with
	 * all gone; each dry-run behind the counting gate. */
	size_t next = 0, batch = 32;
	free_ = s->free_milli;
	for (size_t k = 0; k < no; k++)
		free_ += usable_take(s, order[k]);
	while (!r && next < n) {
		size_t added = 0;
		for (; next < n && added < batch; next++) {
			if (gone[next])
				continue;
			free_ += usable_take(s, cand[next]);
			let_go(s, cand[next]);
			gone[next] = true;
			order[no++] = cand[next];
			added++;
		}
		batch *= 2;
		if (added && (!need || free_ >= need))
			r = fits(s, ji, false);
	}
	for (size_t k = no; k-- > 0;)
		take_back(s, order[k]);
	free(gone);
	free(order);
	xp_place_result_free(r);
	return r != NULL;
}

struct xp_place_result *xp_preempt_find(struct xp_sched *s, size_t ji, const size_t *cand, size_t n, bool reclaim,
					bool probe, size_t **victims, size_t *n_victims)
{
	*victims = NULL;
	*n_victims = 0;
	if (!n)
		return NULL;
	size_t *out = xp_malloc(n * sizeof *out), no = 0;
	struct xp_place_result *r = NULL;
	for (size_t k = 0; k < n && !r; k++) {
		if (reclaim && !still_borrows(s, cand[k]))
			continue;
		let_go(s, cand[k]);
		out[no++] = cand[k];
		r = fits(s, ji, reclaim);
	}
	if (!r) {
		for (size_t k = no; k-- > 0;)
			take_back(s, out[k]);
		free(out);
		return NULL;
	}
	/* The minimal set: from the last released back (the first released are the least wanted
	 * victims only by order; each is kept when the job still fits without it). */
	for (size_t k = no; k-- > 0;) {
		if (k == no - 1)
			continue; /* the last one made it fit */
		take_back(s, out[k]);
		struct xp_place_result *r2 = fits(s, ji, reclaim);
		if (r2) {
			xp_place_result_free(r);
			r = r2;
			memmove(&out[k], &out[k + 1], (no - k - 1) * sizeof *out);
			no--;
		} else
			let_go(s, out[k]);
	}
	if (probe) {
		for (size_t k = no; k-- > 0;)
			take_back(s, out[k]);
		free(out);
		*n_victims = no;
		return r;
	}
	*victims = out;
	*n_victims = no;
	return r;
}
