/* backfill.c: EASY backfill's reservation for the head job (Mu'alem and Feitelson's "extra
 * nodes" rule, as Slurm's backfill plugin applies it to its first blocked job): the running
 * jobs are let go in the order of their estimated ends, into the scheduler's own index, until
 * the head job places; that end is the shadow time T and the devices it got are the reserved
 * slots R. Every released job is committed again at once, so the index is as before. A later
 * job may start only when it ends by T or touches none of R (sched.c). */
#include <stdlib.h>
#include <string.h>

#include "backfill.h"
#include "qsched_int.h"

struct ending {
	int64_t end;
	size_t ji;
};

static int ending_cmp(const void *a, const void *b)
{
	const struct ending *x = a, *y = b;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->ji < y->ji ? -1 : x->ji > y->ji;
}

/* Whole devices the job needs at least (its gang minimum's), for the counting gate; 0 when it
 * asks for slices or shares (the gate then lets every dry-run through). */
static size_t whole_demand(const struct xp_job *j)
{
	size_t n = 0;
	for (size_t g = 0; g < j->n_groups; g++) {
		const struct xp_task_group *tg = &j->groups[g];
		if (tg->devices <= 0)
			return 0;
		n += (size_t)tg->devices * (size_t)(tg->gang_min > 0 ? tg->gang_min : tg->replicas);
	}
	return n;
}

void xs_reservation(struct xp_sched *s, size_t head, int64_t now)
{
	for (size_t k = 0; k < s->n_resv; k++)
		s->reserved[s->resv_slots[k]] = false;
	s->n_resv = 0;
	s->head = head;
	s->shadow = -1;
	s->resv_valid = true;
	struct ending *e = xp_malloc((s->n_running ? s->n_running : 1) * sizeof *e);
	size_t n = s->n_running;
	for (size_t i = 0; i < n; i++) {
		const struct xp_qjob *j = &s->jobs[s->running[i]].j;
		int64_t end = j->start + j->est_s;
		e[i] = (struct ending){end > now ? end : now, s->running[i]};
	}
	qsort(e, n, sizeof *e, ending_cmp);
	/* The counting gate: devices free now, plus whole devices given back so far. */
	size_t free_now = 0;
	for (size_t nd = 0; nd < s->c->n_nodes; nd++)
		for (size_t p = 0; p < s->c->nodes[nd]->n_devices; p++)
			free_now += xp_place_index_use(s->ix, nd, p, NULL) <= 1e-9;
	size_t need = whole_demand(s->jobs[head].j.spec);
	size_t released = 0;
	struct xp_place_opts po = {.strategy = s->o.strategy, .quiet = true, .reconfigure = s->o.reconfigure};
	while (released < n) {
		int64_t t = e[released].end;
		if (t > now + s->o.horizon_s)
			break;
		/* One batch: every job ending at t. */
		for (; released < n && e[released].end == t; released++) {
			struct xp_qjob *j = &s->jobs[e[released].ji].j;
			xp_place_release(s->ix, j->alloc.commit);
			j->alloc.commit = -1;
			for (size_t k = 0; k < j->alloc.n; k++)
				free_now += j->alloc.slots[k].take >= XS_MILLI &&
					    xp_place_index_use(s->ix, j->alloc.slots[k].node_ix, j->alloc.slots[k].pos, NULL) <= 1e-9;
		}
		if (need && free_now < need)
			continue;
		struct xp_err err;
		struct xp_place_result *r = xp_place_ix(s->ix, s->jobs[head].j.spec, &po, &err);
		if (r && r->placed) {
			s->shadow = t;
			for (size_t i = 0; i < r->n_replicas; i++)
				for (size_t d = 0; d < r->replicas[i].n_devices; d++) {
					size_t slot = s->off[r->replicas[i].node_ix] + (size_t)r->replicas[i].pos[d];
					if (!s->reserved[slot]) {
						s->reserved[slot] = true;
						s->resv_slots = xp_realloc(s->resv_slots, (s->n_resv + 1) * sizeof *s->resv_slots);
						s->resv_slots[s->n_resv++] = slot;
					}
				}
			xp_place_result_free(r);
			break;
		}
		xp_place_result_free(r);
	}
	/* Back as they were: every released job committed again (new commit ids). */
	for (size_t i = 0; i < released; i++) {
		struct xp_qjob *j = &s->jobs[e[i].ji].j;
		j->alloc.commit = xs_commit_slots(s, j);
	}
	free(e);
}

int64_t xs_shadow_probe(struct xp_sched *s, size_t head, int64_t now)
{
	/* The same walk without keeping its answer: what T would be now (invariant e). */
	bool *keep = xp_malloc((s->n_slots ? s->n_slots : 1) * sizeof *keep);
	memcpy(keep, s->reserved, (s->n_slots ? s->n_slots : 1) * sizeof *keep);
	size_t *ks = s->n_resv ? xp_malloc(s->n_resv * sizeof *ks) : NULL;
	if (ks)
		memcpy(ks, s->resv_slots, s->n_resv * sizeof *ks);
	size_t kn = s->n_resv, kh = s->head;
	int64_t kt = s->shadow;
	bool kv = s->resv_valid;
	xs_reservation(s, head, now);
	int64_t t = s->shadow;
	for (size_t k = 0; k < s->n_resv; k++)
		s->reserved[s->resv_slots[k]] = false;
	free(s->resv_slots);
	memcpy(s->reserved, keep, (s->n_slots ? s->n_slots : 1) * sizeof *keep);
	s->resv_slots = ks;
	s->n_resv = kn;
	s->head = kh;
	s->shadow = kt;
	s->resv_valid = kv;
	free(keep);
	return t;
}
