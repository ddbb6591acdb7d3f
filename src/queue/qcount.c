/* qcount.c: the counting gate of a simulator's passes. A replica of d whole devices needs d
 * devices no job holds on one node of its kind, so a shape whose gang minimum exceeds what the
 * idle devices can hold, counted per node, cannot place: the pass says Resources without a
 * dry-run of the placement engine over every node. Counts are kept per node type (the kind of
 * its devices, or "mixed") as a histogram of nodes by idle devices, moved as jobs start and
 * end. The count is an upper bound (CPUs, memory, links and labels are not looked at), so the
 * gate refuses only what placement would refuse too. The same counts without the head job's
 * reserved devices say when a job ending after the reserved start cannot avoid them (EASY:
 * it would delay the head). */
#include <stdlib.h>
#include <string.h>

#include "qsched_int.h"

static bool slot_usable(const struct xp_sched *s, size_t n, size_t slot)
{
	return !s->failed[slot] && !s->drained[n] && !s->cnt.never[slot];
}

static size_t *hist_row(const struct xp_sched *s, size_t t)
{
	return &s->cnt.hist[t * (s->cnt.kmax + 1)];
}

static size_t *hist_r_row(const struct xp_sched *s, size_t t)
{
	return &s->cnt.hist_r[t * (s->cnt.kmax + 1)];
}

/* Moves node n's count outside the reservation to idle (its histogram row with it). */
static void set_idle_r(struct xp_sched *s, size_t n, uint32_t idle)
{
	size_t *row = hist_r_row(s, s->cnt.ntype[n]);
	row[s->cnt.nidle_r[n]]--;
	s->cnt.nidle_r[n] = idle;
	row[idle]++;
}

void xs_count_init(struct xp_sched *s)
{
	struct xs_count *k = &s->cnt;
	size_t nn = s->c->n_nodes;
	size_t kinds = xp_place_index_n_kinds(s->ix);
	k->n_types = kinds + 1; /* the last: nodes of more than one kind */
	k->ntype = xp_calloc(nn ? nn : 1, sizeof *k->ntype);
	k->nidle = xp_calloc(nn ? nn : 1, sizeof *k->nidle);
	k->nidle_r = xp_calloc(nn ? nn : 1, sizeof *k->nidle_r);
	k->held = xp_calloc(s->n_slots ? s->n_slots : 1, sizeof *k->held);
	k->never = xp_calloc(s->n_slots ? s->n_slots : 1, sizeof *k->never);
	k->snode = xp_calloc(s->n_slots ? s->n_slots : 1, sizeof *k->snode);
	for (size_t n = 0; n < nn; n++) {
		size_t nd = s->c->nodes[n]->n_devices;
		if (nd > k->kmax)
			k->kmax = nd;
		uint32_t t = nd ? xp_place_index_kind(s->ix, n, 0) : (uint32_t)kinds;
		for (size_t p = 1; p < nd; p++)
			if (xp_place_index_kind(s->ix, n, p) != t)
				t = (uint32_t)kinds;
		k->ntype[n] = t;
		for (size_t p = 0; p < nd; p++)
			k->snode[s->off[n] + p] = (uint32_t)n;
		/* What placement never gives a whole-device job: a node not up (nor degraded), a
		 * failed device, one the cluster shows in use. */
		const struct xp_node *nd_ = s->c->nodes[n];
		bool up = nd_->state == XP_NODE_UP || nd_->state == XP_NODE_DEGRADED;
		for (size_t p = 0; p < nd; p++) {
			double base;
			xp_place_index_use(s->ix, n, p, &base);
			k->never[s->off[n] + p] = !up || nd_->devices[p].health == XP_HEALTH_FAIL || base > 1e-9;
		}
	}
	k->hist = xp_calloc(k->n_types * (k->kmax + 1), sizeof *k->hist);
	k->hist_r = xp_calloc(k->n_types * (k->kmax + 1), sizeof *k->hist_r);
	xs_count_recount(s);
}

void xs_count_recount(struct xp_sched *s)
{
	struct xs_count *k = &s->cnt;
	memset(k->held, 0, (s->n_slots ? s->n_slots : 1) * sizeof *k->held);
	for (size_t r = 0; r < s->n_running; r++) {
		const struct xp_qalloc *a = &s->jobs[s->running[r]].j.alloc;
		for (size_t i = 0; i < a->n; i++)
			k->held[s->off[a->slots[i].node_ix] + a->slots[i].pos] += a->slots[i].take;
	}
	memset(k->hist, 0, k->n_types * (k->kmax + 1) * sizeof *k->hist);
	memset(k->hist_r, 0, k->n_types * (k->kmax + 1) * sizeof *k->hist_r);
	for (size_t n = 0; n < s->c->n_nodes; n++) {
		size_t idle = 0, idle_r = 0;
		for (size_t p = 0; p < s->c->nodes[n]->n_devices; p++) {
			bool i = slot_usable(s, n, s->off[n] + p) && k->held[s->off[n] + p] == 0;
			idle += i;
			idle_r += i && !s->reserved[s->off[n] + p];
		}
		k->nidle[n] = (uint32_t)idle;
		k->nidle_r[n] = (uint32_t)idle_r;
		hist_row(s, k->ntype[n])[idle]++;
		hist_r_row(s, k->ntype[n])[idle_r]++;
	}
}

void xs_count_job(struct xp_sched *s, size_t ji, int sign)
{
	struct xs_count *k = &s->cnt;
	const struct xp_qalloc *a = &s->jobs[ji].j.alloc;
	for (size_t i = 0; i < a->n; i++) {
		size_t n = a->slots[i].node_ix, slot = s->off[n] + a->slots[i].pos;
		bool was = k->held[slot] == 0;
		k->held[slot] += sign * a->slots[i].take;
		bool now = k->held[slot] == 0;
		if (was == now || !slot_usable(s, n, slot))
			continue;
		size_t *row = hist_row(s, k->ntype[n]);
		row[k->nidle[n]]--;
		k->nidle[n] = now ? k->nidle[n] + 1 : k->nidle[n] - 1;
		row[k->nidle[n]]++;
		if (!s->reserved[slot])
			set_idle_r(s, n, now ? k->nidle_r[n] + 1 : k->nidle_r[n] - 1);
	}
}

void xs_count_reserve(struct xp_sched *s, size_t slot, bool on)
{
	if (s->reserved[slot] == on)
		return;
	s->reserved[slot] = on;
	size_t n = s->cnt.snode[slot];
	if (slot_usable(s, n, slot) && s->cnt.held[slot] == 0)
		set_idle_r(s, n, on ? s->cnt.nidle_r[n] - 1 : s->cnt.nidle_r[n] + 1);
}

void xs_count_shape(struct xp_sched *s, uint32_t sh, const struct xp_job *spec)
{
	struct xs_cshape *c = &s->cnt.shape[sh];
	memset(c, 0, sizeof *c);
	c->whole = spec->n_groups > 0;
	c->dmin = 0;
	c->ng = spec->n_groups;
	c->d = xp_calloc(c->ng ? c->ng : 1, sizeof *c->d);
	c->gmin = xp_calloc(c->ng ? c->ng : 1, sizeof *c->gmin);
	c->elig = xp_calloc((c->ng ? c->ng : 1) * s->cnt.n_types, sizeof *c->elig);
	for (size_t g = 0; g < c->ng; g++) {
		const struct xp_task_group *gr = &spec->groups[g];
		bool whole = gr->devices > 0 && !gr->slice && gr->share_pct <= 0;
		if (!whole) {
			c->whole = false;
			continue;
		}
		c->d[g] = gr->devices;
		c->gmin[g] = gr->gang_min > 0 ? gr->gang_min : gr->replicas;
		if (!c->dmin || gr->devices < c->dmin)
			c->dmin = gr->devices;
		for (size_t t = 0; t + 1 < s->cnt.n_types; t++)
			c->elig[g * s->cnt.n_types + t] = xp_place_index_kind_matches(s->ix, (uint32_t)t, gr);
		c->elig[g * s->cnt.n_types + s->cnt.n_types - 1] = true; /* mixed nodes: may be */
	}
}

void xs_count_shape_clear(struct xs_cshape *c)
{
	free(c->d);
	free(c->gmin);
	free(c->elig);
	memset(c, 0, sizeof *c);
}

bool xs_count_refuses(const struct xp_sched *s, uint32_t sh, bool outside, size_t *fit, size_t *group)
{
	const struct xs_cshape *c = &s->cnt.shape[sh];
	for (size_t g = 0; g < c->ng; g++) {
		if (!c->d[g])
			continue;
		size_t d = (size_t)c->d[g], cap = 0;
		for (size_t t = 0; t < s->cnt.n_types; t++) {
			if (!c->elig[g * s->cnt.n_types + t])
				continue;
			const size_t *row = outside ? hist_r_row(s, t) : hist_row(s, t);
			for (size_t i = d; i <= s->cnt.kmax; i++)
				cap += row[i] * (i / d);
		}
		if (cap < (size_t)c->gmin[g]) {
			if (fit)
				*fit = cap;
			if (group)
				*group = g;
			return true;
		}
	}
	return false;
}

bool xs_count_hosts(const struct xp_sched *s, uint32_t sh, size_t node)
{
	const struct xs_cshape *c = &s->cnt.shape[sh];
	if (!c->whole)
		return true;
	for (size_t g = 0; g < c->ng; g++)
		if (c->elig[g * s->cnt.n_types + s->cnt.ntype[node]] && s->cnt.nidle[node] >= (uint32_t)c->d[g])
			return true;
	return false;
}

void xs_count_free(struct xp_sched *s)
{
	for (size_t i = 0; i < s->n_shapes; i++)
		xs_count_shape_clear(&s->cnt.shape[i]);
	free(s->cnt.shape);
	free(s->cnt.ntype);
	free(s->cnt.nidle);
	free(s->cnt.nidle_r);
	free(s->cnt.hist_r);
	free(s->cnt.held);
	free(s->cnt.never);
	free(s->cnt.snode);
	free(s->cnt.hist);
}

int xs_count_check(const struct xp_sched *s, struct xp_err *err)
{
	const struct xs_count *k = &s->cnt;
	int32_t *held = xp_calloc(s->n_slots ? s->n_slots : 1, sizeof *held);
	size_t *hist = xp_calloc(k->n_types * (k->kmax + 1), sizeof *hist);
	size_t *hist_r = xp_calloc(k->n_types * (k->kmax + 1), sizeof *hist_r);
	int rc = 0;
	for (size_t r = 0; r < s->n_running; r++) {
		const struct xp_qalloc *a = &s->jobs[s->running[r]].j.alloc;
		for (size_t i = 0; i < a->n; i++)
			held[s->off[a->slots[i].node_ix] + a->slots[i].pos] += a->slots[i].take;
	}
	for (size_t n = 0; n < s->c->n_nodes && !rc; n++) {
		uint32_t idle = 0, idle_r = 0;
		for (size_t p = 0; p < s->c->nodes[n]->n_devices && !rc; p++) {
			size_t slot = s->off[n] + p;
			if (held[slot] != k->held[slot])
				rc = xp_errf(err, "device %zu of %s: the counts hold %d milli, the running jobs %d", p,
					     s->c->nodes[n]->name, k->held[slot], held[slot]);
			bool i = slot_usable(s, n, slot) && held[slot] == 0;
			idle += i;
			idle_r += i && !s->reserved[slot];
		}
		if (!rc && (idle != k->nidle[n] || idle_r != k->nidle_r[n]))
			rc = xp_errf(err, "node %s: %u idle devices (%u not reserved) by a recount, %u (%u) by the counts",
				     s->c->nodes[n]->name, idle, idle_r, k->nidle[n], k->nidle_r[n]);
		hist[k->ntype[n] * (k->kmax + 1) + idle]++;
		hist_r[k->ntype[n] * (k->kmax + 1) + idle_r]++;
	}
	if (!rc && (memcmp(hist, k->hist, k->n_types * (k->kmax + 1) * sizeof *hist) != 0 ||
		    memcmp(hist_r, k->hist_r, k->n_types * (k->kmax + 1) * sizeof *hist_r) != 0))
		rc = xp_errf(err, "the nodes by idle devices differ from a recount");
	free(held);
	free(hist);
	free(hist_r);
	return rc;
}
