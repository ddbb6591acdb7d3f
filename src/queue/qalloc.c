/* qalloc.c: what running jobs hold: their charges per class and resource, the usage and shares
 * they make (xp_sched_used, xp_sched_capacity, xp_sched_share), commits rebuilt
 * from their device slots, and the small map and time words the scheduler's files share
 * (qsched_int.h). Below qsched.c and backfill.c, which both use it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "place.h"
#include "qsched_int.h"

static uint64_t str_hash(const char *k)
{
	uint64_t h = 1469598103934665603ull;
	for (; *k; k++)
		h = (h ^ (unsigned char)*k) * 1099511628211ull;
	return h;
}

const char *xs_map_get(const struct xs_map *m, const char *key, int *reason, bool *found)
{
	*found = false;
	if (!m->cap)
		return NULL;
	for (size_t i = str_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->keys[i])
			return NULL;
		if (strcmp(m->keys[i], key) == 0) {
			*found = true;
			if (reason)
				*reason = m->reason[i];
			return m->text[i];
		}
	}
}

void xs_map_put(struct xs_map *m, const char *key, int reason, const char *text)
{
	if ((m->n + 1) * 2 > m->cap) {
		struct xs_map n = {.cap = m->cap ? m->cap * 2 : 64};
		n.keys = xp_calloc(n.cap, sizeof *n.keys);
		n.reason = xp_calloc(n.cap, sizeof *n.reason);
		n.text = xp_calloc(n.cap, sizeof *n.text);
		for (size_t i = 0; i < m->cap; i++)
			if (m->keys[i]) {
				size_t k = str_hash(m->keys[i]) & (n.cap - 1);
				while (n.keys[k])
					k = (k + 1) & (n.cap - 1);
				n.keys[k] = m->keys[i];
				n.reason[k] = m->reason[i];
				n.text[k] = m->text[i];
			}
		n.n = m->n;
		free(m->keys);
		free(m->reason);
		free(m->text);
		*m = n;
	}
	size_t i = str_hash(key) & (m->cap - 1);
	while (m->keys[i] && strcmp(m->keys[i], key) != 0)
		i = (i + 1) & (m->cap - 1);
	if (m->keys[i]) {
		free(m->text[i]);
	} else {
		m->keys[i] = xp_strdup(key);
		m->n++;
	}
	m->reason[i] = reason;
	m->text[i] = text ? xp_strdup(text) : NULL;
}

void xs_map_clear(struct xs_map *m)
{
	for (size_t i = 0; i < m->cap; i++) {
		free(m->keys[i]);
		free(m->text[i]);
	}
	free(m->keys);
	free(m->reason);
	free(m->text);
	memset(m, 0, sizeof *m);
}

void xs_time_text(int64_t t, char *buf, size_t size)
{
	/* Store jobs carry epoch seconds; a trace counts from 0. After 2000-01-01 it is a date. */
	if (t >= 946684800) {
		time_t tt = (time_t)t;
		struct tm tm;
		gmtime_r(&tt, &tm);
		strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
	} else
		snprintf(buf, size, "t=%llds", (long long)t);
}

static void charge_add(struct xs_job *sj, int ci, int res, int64_t amt)
{
	if (ci < 0 || !amt)
		return;
	uint32_t key = (uint32_t)ci * XP_RES_COUNT + (uint32_t)res;
	for (size_t i = 0; i < sj->n_ch; i++)
		if (sj->ch[i].key == key) {
			sj->ch[i].amt += amt;
			return;
		}
	sj->ch = xp_realloc(sj->ch, (sj->n_ch + 1) * sizeof *sj->ch);
	sj->ch[sj->n_ch++] = (struct xs_charge){key, amt};
}

void xs_charge_compute(struct xp_sched *s, size_t ji)
{
	struct xs_job *sj = &s->jobs[ji];
	free(sj->ch);
	sj->ch = NULL;
	sj->n_ch = 0;
	for (size_t i = 0; i < sj->j.alloc.n; i++) {
		const struct xp_qslot *sl = &sj->j.alloc.slots[i];
		int ci = s->slot_class[s->off[sl->node_ix] + sl->pos];
		charge_add(sj, ci, XP_RES_DEVICES, sl->take);
		double e = s->c->nodes[sl->node_ix]->devices[sl->pos].ecu;
		if (!isnan(e) && e > 0)
			charge_add(sj, ci, XP_RES_ECU, llround(e * sl->take));
	}
	/* CPUs and host memory per replica: the whole job's replicas (a gang minimum below the
	 * replicas starts fewer, which the slots do not say; the spec's count is the upper bound). */
	for (size_t g = 0; g < sj->j.spec->n_groups; g++) {
		const struct xp_task_group *tg = &sj->j.spec->groups[g];
		charge_add(sj, s->cpu_ci, XP_RES_CPUS, (int64_t)tg->cpus * tg->replicas * XS_MILLI);
		charge_add(sj, s->mem_ci, XP_RES_MEMORY, tg->host_memory_mib * tg->replicas * XS_MILLI / 1024);
	}
}

void xs_charge_apply(struct xp_sched *s, size_t ji, int sign)
{
	struct xs_job *sj = &s->jobs[ji];
	s->share_ok = false;
	for (size_t q = sj->qi; q != SIZE_MAX; q = s->q[q].parent)
		for (size_t i = 0; i < sj->n_ch; i++)
			s->used[q * s->nc * XP_RES_COUNT + sj->ch[i].key] += sign * sj->ch[i].amt;
}

/* A placed result rebuilt from a job's slots (one replica per slot) and committed: the same
 * use per device as the placement it came from. */
int64_t xs_commit_slots(struct xp_sched *s, const struct xp_qjob *j)
{
	if (!j->alloc.n)
		return -1;
	bool share_job = false, whole_job = false;
	for (size_t g = 0; g < j->spec->n_groups; g++) {
		share_job = share_job || j->spec->groups[g].share_pct > 0;
		whole_job = whole_job || j->spec->groups[g].devices > 0;
	}
	struct xp_place_replica *reps = xp_calloc(j->alloc.n, sizeof *reps);
	int *pos = xp_calloc(j->alloc.n, sizeof *pos);
	for (size_t i = 0; i < j->alloc.n; i++) {
		const struct xp_qslot *sl = &j->alloc.slots[i];
		pos[i] = sl->pos;
		reps[i].node_ix = sl->node_ix;
		reps[i].pos = &pos[i];
		reps[i].n_devices = 1;
		reps[i].take = sl->take / (double)XS_MILLI;
		reps[i].slice = (char *)sl->slice;
		reps[i].isolation = sl->slice ? "mig" : (sl->take < XS_MILLI || (share_job && !whole_job)) ? "soft" : "exclusive";
	}
	struct xp_place_result r = {.placed = true, .replicas = reps, .n_replicas = j->alloc.n};
	int64_t id = xp_place_commit(s->ix, &r);
	free(reps);
	free(pos);
	return id;
}


/* The job's placement result's devices as slots. */
void xs_alloc_from_result(struct xs_job *sj, const struct xp_place_result *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n_replicas; i++)
		n += r->replicas[i].n_devices;
	sj->j.alloc.slots = xp_calloc(n ? n : 1, sizeof *sj->j.alloc.slots);
	sj->j.alloc.n = n;
	size_t k = 0;
	for (size_t i = 0; i < r->n_replicas; i++) {
		const struct xp_place_replica *p = &r->replicas[i];
		const struct xp_task_group *g = &sj->j.spec->groups[p->group < sj->j.spec->n_groups ? p->group : 0];
		for (size_t d = 0; d < p->n_devices; d++)
			sj->j.alloc.slots[k++] = (struct xp_qslot){.node_ix = (uint32_t)p->node_ix,
								   .pos = (uint16_t)p->pos[d],
								   .take = (int16_t)llround(p->take * XS_MILLI),
								   .slice = p->instance || (p->isolation && strcmp(p->isolation, "soft") &&
											    strcmp(p->isolation, "exclusive"))
										    ? g->slice
										    : NULL};
	}
}

void xs_result_charges(struct xp_sched *s, size_t ji, const struct xp_place_result *r, struct xs_charge **ch, size_t *n)
{
	/* The job's own record, borrowed: its slots and charges as they would be, then put back. */
	struct xs_job *sj = &s->jobs[ji];
	struct xp_qalloc keep = sj->j.alloc;
	struct xs_charge *kch = sj->ch;
	size_t kn = sj->n_ch;
	sj->ch = NULL;
	sj->n_ch = 0;
	xs_alloc_from_result(sj, r);
	xs_charge_compute(s, ji);
	free(sj->j.alloc.slots);
	sj->j.alloc = keep;
	*ch = sj->ch;
	*n = sj->n_ch;
	sj->ch = kch;
	sj->n_ch = kn;
}

/* Usage and shares (qsched.h): here, below preempt.c and qsched.c, which both read them. */

int64_t xp_sched_used(const struct xp_sched *s, size_t qi, size_t ci, int res)
{
	if (qi >= s->nq || ci >= s->nc || res < 0 || res >= XP_RES_COUNT)
		return 0;
	return *xs_used(s, qi, ci, res);
}

int64_t xp_sched_capacity(const struct xp_sched *s, size_t ci, int res)
{
	if (ci >= s->nc || res < 0 || res >= XP_RES_COUNT)
		return 0;
	return s->cap[ci * XP_RES_COUNT + (size_t)res];
}

double xp_sched_share(const struct xp_sched *s, size_t qi)
{
	double best = 0;
	double w = s->qs->queues[qi].weight > 0 ? s->qs->queues[qi].weight : 1;
	for (size_t c = 0; c < s->nc; c++)
		for (int r = 0; r < XP_RES_COUNT; r++) {
			int64_t cap = s->cap[c * XP_RES_COUNT + (size_t)r];
			if (cap <= 0)
				continue;
			double v = (double)*xs_used(s, qi, c, r) / (double)cap / w;
			if (v > best)
				best = v;
		}
	return best;
}

