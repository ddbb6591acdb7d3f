/* invariants.c: xp_sched_check (qsched.h): what must hold after every event, recounted from
 * the jobs rather than read from the counters the scheduler keeps as it goes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qsched_int.h"
#include "backfill.h"
#include "quota.h"

/* (a) no device over-allocated, and the index's use is the cluster's plus the running jobs'
 * plus a blocker on each drained or failed device. */
static int check_devices(const struct xp_sched *s, struct xp_err *err)
{
	int64_t *take = xp_calloc(s->n_slots ? s->n_slots : 1, sizeof *take);
	/* Slots held per device: a job's take is whole milli-devices (a 2/15 slice holds 133), while
	 * the index adds the template's exact share, so each holder may differ by half a milli. */
	uint32_t *holders = xp_calloc(s->n_slots ? s->n_slots : 1, sizeof *holders);
	for (size_t i = 0; i < s->n_jobs; i++) {
		const struct xp_qjob *j = &s->jobs[i].j;
		if (j->state != XP_JS_RUNNING) {
			if (j->alloc.n) {
				free(take);
				free(holders);
				return xp_errf(err, "job %lld is %s and still holds %zu devices", (long long)j->id,
					       xp_jstate_name(j->state), j->alloc.n);
			}
			continue;
		}
		for (size_t k = 0; k < j->alloc.n; k++) {
			take[s->off[j->alloc.slots[k].node_ix] + j->alloc.slots[k].pos] += j->alloc.slots[k].take;
			holders[s->off[j->alloc.slots[k].node_ix] + j->alloc.slots[k].pos]++;
		}
	}
	for (size_t n = 0; n < s->c->n_nodes; n++)
		for (size_t p = 0; p < s->c->nodes[n]->n_devices; p++) {
			size_t slot = s->off[n] + p;
			double base, use = xp_place_index_use(s->ix, n, p, &base);
			double jobs = take[slot] / (double)XS_MILLI;
			double tol = 1e-6 + 0.0005 * holders[slot];
			if (jobs + base > 1 + tol) {
				free(take);
				free(holders);
				return xp_errf(err, "device %zu of %s is over-allocated: %.3f held by jobs, %.3f by the cluster",
					       p, s->c->nodes[n]->name, jobs, base);
			}
			double want = base + jobs + ((s->drained[n] || s->failed[slot]) ? 1 : 0);
			if (fabs(use - want) > tol) {
				free(take);
				free(holders);
				return xp_errf(err, "device %zu of %s: the index holds %.3f, the jobs and blockers %.3f", p,
					       s->c->nodes[n]->name, use, want);
			}
		}
	/* The running list is in estimated-end order, and the free count is a recount's. */
	int64_t free_ = 0;
	for (size_t n = 0; n < s->c->n_nodes; n++)
		for (size_t p = 0; p < s->c->nodes[n]->n_devices; p++) {
			if (s->drained[n] || s->failed[s->off[n] + p])
				continue;
			double base;
			xp_place_index_use(s->ix, n, p, &base);
			free_ += XS_MILLI - llround(base * XS_MILLI) - take[s->off[n] + p];
		}
	free(take);
	free(holders);
	if (free_ != s->free_milli)
		return xp_errf(err, "%lld milli-devices are free by a recount, %lld by the counter", (long long)free_,
			       (long long)s->free_milli);
	for (size_t r = 1; r < s->n_running; r++) {
		const struct xp_qjob *a = &s->jobs[s->running[r - 1]].j, *b = &s->jobs[s->running[r]].j;
		if (a->start + a->est_s > b->start + b->est_s)
			return xp_errf(err, "running jobs %lld and %lld are out of estimated-end order", (long long)a->id,
				       (long long)b->id);
	}
	return 0;
}

/* (f) the usage counters equal a recount of the running jobs' charges, and those charges equal
 * what their slots and specs say; (g) every running job's commit is live. */
static int check_usage(struct xp_sched *s, struct xp_err *err)
{
	size_t cells = (s->nq ? s->nq : 1) * (s->nc ? s->nc : 1) * XP_RES_COUNT;
	int64_t *used = xp_calloc(cells, sizeof *used);
	size_t n_running = 0;
	int rc = 0;
	for (size_t i = 0; i < s->n_jobs && !rc; i++) {
		struct xs_job *sj = &s->jobs[i];
		if (sj->j.state != XP_JS_RUNNING)
			continue;
		n_running++;
		if (!xp_place_commit_live(s->ix, sj->j.alloc.commit)) {
			rc = xp_errf(err, "running job %lld has no live commit (%lld)", (long long)sj->j.id,
				     (long long)sj->j.alloc.commit);
			break;
		}
		struct xs_charge *kept = sj->ch;
		size_t nk = sj->n_ch;
		sj->ch = NULL;
		sj->n_ch = 0;
		xs_charge_compute(s, i);
		bool same = nk == sj->n_ch;
		for (size_t a = 0; a < nk && same; a++) {
			bool hit = false;
			for (size_t b = 0; b < sj->n_ch; b++)
				hit = hit || (kept[a].key == sj->ch[b].key && kept[a].amt == sj->ch[b].amt);
			same = hit;
		}
		free(sj->ch);
		sj->ch = kept;
		sj->n_ch = nk;
		if (!same) {
			rc = xp_errf(err, "job %lld's charges differ from what its devices say", (long long)sj->j.id);
			break;
		}
		for (size_t q = sj->qi; q != SIZE_MAX; q = s->q[q].parent)
			for (size_t a = 0; a < nk; a++)
				used[q * s->nc * XP_RES_COUNT + kept[a].key] += kept[a].amt;
	}
	if (!rc && n_running != s->n_running)
		rc = xp_errf(err, "%zu jobs are running but %zu are listed", n_running, s->n_running);
	for (size_t q = 0; q < s->nq && !rc; q++)
		for (size_t c = 0; c < s->nc && !rc; c++)
			for (int r = 0; r < XP_RES_COUNT && !rc; r++) {
				int64_t want = used[(q * s->nc + c) * XP_RES_COUNT + (size_t)r];
				if (*xs_used(s, q, c, r) != want)
					rc = xp_errf(err, "queue %s uses %lld %s %s by its counter, %lld by a recount",
						     s->qs->queues[q].name, (long long)*xs_used(s, q, c, r),
						     s->qs->classes[c].name, xp_res_name(r), (long long)want);
			}
	free(used);
	return rc;
}

/* (d) every pending or held job has a reason with words, and sits in its queue's list once. */
static int check_reasons(const struct xp_sched *s, struct xp_err *err)
{
	size_t listed = 0, pending = 0;
	for (size_t q = 0; q < s->nq; q++)
		listed += s->q[q].n_pend;
	for (size_t i = 0; i < s->n_jobs; i++) {
		const struct xp_qjob *j = &s->jobs[i].j;
		if (j->state == XP_JS_PENDING)
			pending++;
		if (j->state != XP_JS_PENDING && j->state != XP_JS_HELD)
			continue;
		if (j->reason <= XP_R_NONE || j->reason >= XP_R_COUNT || !j->reason_text || !*j->reason_text)
			return xp_errf(err, "%s job %lld has no reason", xp_jstate_name(j->state), (long long)j->id);
		if (j->state == XP_JS_HELD && j->reason != XP_R_HELD)
			return xp_errf(err, "held job %lld has reason %s", (long long)j->id, xp_reason_name(j->reason));
	}
	if (listed != pending)
		return xp_errf(err, "%zu jobs are pending but the queues list %zu", pending, listed);
	return 0;
}

/* (e) backfill never delays the head: the head's shadow time worked out again now, with the
 * backfilled jobs in, is no later than the one they were let in under. */
static int check_shadow(struct xp_sched *s, struct xp_err *err)
{
	if (s->head == SIZE_MAX || !s->resv_valid || s->shadow < 0 || s->jobs[s->head].j.state != XP_JS_PENDING)
		return 0;
	int64_t t = xs_shadow_probe(s, s->head, s->resv_now);
	if (t < 0 || t > s->shadow)
		return xp_errf(err, "job %lld's reserved start moved from %lld to %lld", (long long)s->jobs[s->head].j.id,
			       (long long)s->shadow, (long long)t);
	return 0;
}

int xp_sched_check(const struct xp_sched *cs, struct xp_err *err)
{
	/* The recount borrows the jobs' charge arrays and puts them back: logically const. */
	struct xp_sched *s = (struct xp_sched *)cs;
	if (check_devices(s, err) || check_usage(s, err) || check_reasons(s, err) || xq_check_quota(s, err) ||
	    check_shadow(s, err) || xs_count_check(s, err))
		return -1;
	return 0;
}
