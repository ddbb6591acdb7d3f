/* backfill.c: EASY backfill's reservation for the head job (Mu'alem and Feitelson's "extra
 * nodes" rule, as Slurm's backfill plugin applies it to its first blocked job): the running
 * jobs are let go in the order of their estimated ends, into the scheduler's own index, until
 * the head job places; that end is the shadow time T and the devices it got are the reserved
 * slots R. Every released job is committed again at once, so the index is as before. A later
 * job may start only when it ends by T or touches none of R (sched.c). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "backfill.h"
#include "qsched_int.h"

/* Whole devices the job needs at least (its gang minimum's), for the counting gate; 0 when it
 * asks for slices or shares (the gate then lets every dry-run through). */
size_t xs_whole_demand(const struct xp_job *j)
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

/* Whether running job j holds devices on a node that could take a replica of shape sh by count. */
static bool on_host(const struct xp_sched *s, uint32_t sh, const struct xp_qjob *j)
{
	size_t last = SIZE_MAX;
	for (size_t k = 0; k < j->alloc.n; k++) {
		size_t n = j->alloc.slots[k].node_ix;
		if (n != last && xs_count_hosts(s, sh, n))
			return true;
		last = n;
	}
	return false;
}

static void reserve(struct xp_sched *s, size_t head, int64_t now, bool try_now)
{
	for (size_t k = 0; k < s->n_resv; k++)
		xs_count_reserve(s, s->resv_slots[k], false);
	s->n_resv = 0;
	s->head = head;
	s->shadow = -1;
	s->resv_valid = true;
	s->resv_now = now;
	/* The running jobs are kept by estimated end; one that is past its estimate ends "now".
	 * Let go until the head places (or past the horizon), then taken back. They are let go
	 * in the idle counts first (qcount.c: cheap), and in the index only when the counts say
	 * the head may fit, for the dry-run: most batches of ends cost no dry-run and no index
	 * bookkeeping. A shape with a slice or share falls back on the whole-device count. */
	const struct xs_job *hj = &s->jobs[head];
	bool by_count = s->cnt.shape[hj->shape].whole;
	size_t n = s->n_running;
	int64_t free_ = s->free_milli;
	int64_t need = (int64_t)xs_whole_demand(hj->j.spec) * XS_MILLI;
	size_t counted = 0; /* let go in the counts (some of them in the index too) */
	struct xp_place_opts po = {.strategy = s->o.strategy, .bare = true, .quiet = true, .reconfigure = s->o.reconfigure};
	bool first_try = try_now;
	while (counted < n || first_try) {
		int64_t t = now;
		if (!first_try) {
			const struct xp_qjob *first = &s->jobs[s->running[counted]].j;
			t = first->start + first->est_s;
			if (t < now)
				t = now;
		}
		if (t > now + s->o.horizon_s)
			break;
		/* One batch: every job ending by t (none on a first try at now). */
		for (; counted < n && !first_try; counted++) {
			const struct xp_qjob *j = &s->jobs[s->running[counted]].j;
			if (j->start + j->est_s > t)
				break;
			xs_count_job(s, s->running[counted], -1);
			for (size_t k = 0; k < j->alloc.n; k++)
				if (!s->failed[s->off[j->alloc.slots[k].node_ix] + j->alloc.slots[k].pos] &&
				    !s->drained[j->alloc.slots[k].node_ix])
					free_ += j->alloc.slots[k].take;
		}
		first_try = false;
		/* The counting gates: no dry-run while they refuse. */
		if ((need && free_ < need) || (by_count && xs_count_refuses(s, hj->shape, false, NULL, NULL)))
			continue;
		/* Into the index: the jobs let go on a node that could now take a replica by count.
		 * The others' devices are of no use to the head (a later batch may make them so);
		 * only where it lands among equals may differ, never whether or when it fits. */
		for (size_t i = 0; i < counted; i++) {
			struct xp_qjob *j = &s->jobs[s->running[i]].j;
			if (j->alloc.commit >= 0 && (!by_count || on_host(s, hj->shape, j))) {
				xp_place_release(s->ix, j->alloc.commit);
				j->alloc.commit = -1;
			}
		}
		struct xp_err err;
		struct xp_place_result *r = xp_place_ix(s->ix, hj->j.spec, &po, &err);
		if (r && r->placed) {
			s->shadow = t;
			for (size_t i = 0; i < r->n_replicas; i++)
				for (size_t d = 0; d < r->replicas[i].n_devices; d++) {
					size_t slot = s->off[r->replicas[i].node_ix] + (size_t)r->replicas[i].pos[d];
					if (!s->reserved[slot]) {
						xs_count_reserve(s, slot, true);
						s->resv_slots = xp_realloc(s->resv_slots, (s->n_resv + 1) * sizeof *s->resv_slots);
						s->resv_slots[s->n_resv++] = slot;
					}
				}
			xp_place_result_free(r);
			break;
		}
		xp_place_result_free(r);
	}
	/* Back as they were: every job let go committed again (new commit ids), and counted. */
	for (size_t i = 0; i < counted; i++) {
		struct xp_qjob *j = &s->jobs[s->running[i]].j;
		if (j->alloc.commit < 0)
			j->alloc.commit = xs_commit_slots(s, j);
		xs_count_job(s, s->running[i], +1);
	}
}

void xs_reservation(struct xp_sched *s, size_t head, int64_t now)
{
	/* The head was just refused at now: the walk starts with the first batch of ends. */
	reserve(s, head, now, false);
}

int64_t xs_shadow_probe(struct xp_sched *s, size_t head, int64_t now)
{
	/* The same walk without keeping its answer: what T would be now (invariant e). The
	 * reserved slots are exactly those listed in resv_slots: kept as a list, set again. */
	size_t *ks = s->n_resv ? xp_malloc(s->n_resv * sizeof *ks) : NULL;
	if (ks)
		memcpy(ks, s->resv_slots, s->n_resv * sizeof *ks);
	size_t kn = s->n_resv, kh = s->head;
	int64_t kt = s->shadow, kn_now = s->resv_now;
	bool kv = s->resv_valid;
	reserve(s, head, now, true);
	int64_t t = s->shadow;
	for (size_t k = 0; k < s->n_resv; k++)
		xs_count_reserve(s, s->resv_slots[k], false);
	free(s->resv_slots);
	for (size_t k = 0; k < kn; k++)
		xs_count_reserve(s, ks[k], true);
	s->resv_slots = ks;
	s->n_resv = kn;
	s->head = kh;
	s->shadow = kt;
	s->resv_valid = kv;
	s->resv_now = kn_now;
	return t;
}
