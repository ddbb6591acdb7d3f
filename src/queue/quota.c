/* quota.c: queue quotas as the scheduler applies them (quota.h). */
#include "quota.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qsched_int.h"

void xq_init(struct xp_sched *s)
{
	size_t cells = (s->nq ? s->nq : 1) * (s->nc ? s->nc : 1) * XP_RES_COUNT;
	s->qt = xp_calloc(cells, sizeof *s->qt);
	for (size_t q = 0; q < s->nq; q++) {
		const struct xp_queue *qu = &s->qs->queues[q];
		for (size_t k = 0; k < qu->n_quotas; k++) {
			const struct xp_quota *qt = &qu->quotas[k];
			const struct xp_rclass *c = xp_qset_class(s->qs, qt->rclass);
			if (!c || qt->res < 0 || qt->res >= XP_RES_COUNT)
				continue;
			s->qt[(q * s->nc + (size_t)(c - s->qs->classes)) * XP_RES_COUNT + (size_t)qt->res] = qt;
		}
	}
}

const struct xp_quota *xq_quota(const struct xp_sched *s, size_t qi, size_t ci, int r)
{
	return s->qt[(qi * s->nc + ci) * XP_RES_COUNT + (size_t)r];
}

int64_t xq_borrow(const struct xp_sched *s, size_t qi, size_t ci, int r)
{
	const struct xp_quota *qt = xq_quota(s, qi, ci, r);
	if (!qt)
		return 0;
	int64_t b = *xs_used(s, qi, ci, r) - qt->deserved;
	return b > 0 ? b : 0;
}

int64_t xq_lendable(const struct xp_sched *s, size_t qi, size_t ci, int r)
{
	const struct xp_quota *qt = xq_quota(s, qi, ci, r);
	if (!qt)
		return 0;
	int64_t l = qt->deserved - qt->guaranteed;
	if (qt->lending_limit != XP_UNLIMITED && qt->lending_limit < l)
		l = qt->lending_limit;
	return l > 0 ? l : 0;
}

/* What queue si leaves unused of what it lends. */
static int64_t unused(const struct xp_sched *s, size_t si, size_t ci, int r)
{
	const struct xp_quota *qt = xq_quota(s, si, ci, r);
	if (!qt)
		return 0;
	int64_t free_ = qt->deserved - *xs_used(s, si, ci, r);
	if (free_ < 0)
		free_ = 0;
	int64_t l = xq_lendable(s, si, ci, r);
	return free_ < l ? free_ : l;
}

/* The queues sharing qi's parent (its cohort), qi included; the top-level queues have none
 * (no cohort: nothing to borrow). */
static const size_t *cohort(const struct xp_sched *s, size_t qi, size_t *n)
{
	size_t p = s->q[qi].parent;
	if (p == SIZE_MAX) {
		*n = 0;
		return NULL;
	}
	*n = s->q[p].n_kids;
	return s->q[p].kids;
}

static char *amount(int64_t milli, char *buf, size_t size)
{
	return xp_qamount_format(milli, buf, size);
}

int xq_admit(const struct xp_sched *s, size_t qi, const struct xs_charge *ch, size_t n, char **text,
	     bool *pool_short)
{
	*pool_short = false;
	char a[32], b[32], c[32], d[32], e[32]; /* one buffer per number of a text */
	for (size_t k = 0; k < n; k++) {
		size_t ci = ch[k].key / XP_RES_COUNT;
		int r = (int)(ch[k].key % XP_RES_COUNT);
		int64_t amt = ch[k].amt;
		if (amt <= 0)
			continue;
		const char *cn = s->qs->classes[ci].name, *rn = xp_res_name(r);
		/* Max (capability) of the queue and of every ancestor. */
		for (size_t q = qi; q != SIZE_MAX; q = s->q[q].parent) {
			const struct xp_quota *qt = xq_quota(s, q, ci, r);
			int64_t u = *xs_used(s, q, ci, r);
			/* A top-level queue borrows from no one: its deserved quota binds before its max,
			 * and the words say so below (with the numbers of that limit). */
			if (q == qi && s->q[qi].parent == SIZE_MAX && qt && qt->deserved < qt->max)
				continue;
			if (qt && qt->max != XP_UNLIMITED && u + amt > qt->max) {
				*text = xp_asprintf("%s%s%s%s %s %s/%s used, %s more needed", q == qi ? "" : "queue ",
						    q == qi ? "" : s->qs->queues[q].name, q == qi ? "" : ": ", cn, rn,
						    amount(u, a, sizeof a), amount(qt->max, b, sizeof b),
						    amount(u + amt - qt->max, c, sizeof c));
				return XP_R_QUOTA;
			}
		}
		const struct xp_quota *qt = xq_quota(s, qi, ci, r);
		if (!qt)
			continue;
		int64_t u = *xs_used(s, qi, ci, r);
		int64_t after = u + amt - qt->deserved;
		if (after <= 0)
			continue;
		if (qt->borrowing_limit != XP_UNLIMITED && after > qt->borrowing_limit) {
			*text = xp_asprintf("%s %s %s/%s used (deserved %s, borrowing limit %s), %s more needed", cn, rn,
					    amount(u, a, sizeof a), amount(qt->deserved + qt->borrowing_limit, b, sizeof b),
					    amount(qt->deserved, c, sizeof c), amount(qt->borrowing_limit, d, sizeof d),
					    amount(after - qt->borrowing_limit, e, sizeof e));
			return XP_R_QUOTA;
		}
		/* Borrowing: what the rest of the cohort leaves unused of what it lends, less what
		 * the others already borrow, must cover all that this queue would borrow. */
		size_t nk;
		const size_t *kids = cohort(s, qi, &nk);
		int64_t pool = 0;
		for (size_t i = 0; i < nk; i++)
			if (kids[i] != qi)
				pool += unused(s, kids[i], ci, r) - xq_borrow(s, kids[i], ci, r);
		if (after > pool) {
			int64_t room = qt->deserved + (pool > 0 ? pool : 0);
			if (!nk) /* A top-level queue: its max says what its children may use together. */
				*text = xp_asprintf("%s %s %s/%s used (deserved %s; a queue without a parent has no cohort "
						    "to borrow from), %s more needed", cn, rn, amount(u, a, sizeof a),
						    amount(room, b, sizeof b), amount(qt->deserved, c, sizeof c),
						    amount(u + amt - room, e, sizeof e));
			else
				*text = xp_asprintf("%s %s %s/%s used (deserved %s, at most %s borrowed in its cohort), %s more needed",
						    cn, rn, amount(u, a, sizeof a), amount(room, b, sizeof b),
						    amount(qt->deserved, c, sizeof c), amount(pool > 0 ? pool : 0, d, sizeof d),
						    amount(u + amt - room, e, sizeof e));
			*pool_short = true;
			return XP_R_QUOTA;
		}
	}
	return 0;
}

bool xq_within_deserved(const struct xp_sched *s, size_t qi, const struct xs_charge *ch, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		const struct xp_quota *qt = xq_quota(s, qi, ch[k].key / XP_RES_COUNT, (int)(ch[k].key % XP_RES_COUNT));
		if (qt && *xs_used(s, qi, ch[k].key / XP_RES_COUNT, (int)(ch[k].key % XP_RES_COUNT)) + ch[k].amt > qt->deserved)
			return false;
	}
	return true;
}

int xq_check_quota(const struct xp_sched *s, struct xp_err *err)
{
	for (size_t q = 0; q < s->nq; q++)
		for (size_t c = 0; c < s->nc; c++)
			for (int r = 0; r < XP_RES_COUNT; r++) {
				const struct xp_quota *qt = xq_quota(s, q, c, r);
				int64_t u = *xs_used(s, q, c, r);
				if (qt && qt->max != XP_UNLIMITED && u > qt->max)
					return xp_errf(err, "queue %s uses %lld of %s %s, over its max %lld", s->qs->queues[q].name,
						       (long long)u, s->qs->classes[c].name, xp_res_name(r), (long long)qt->max);
				int64_t b = xq_borrow(s, q, c, r);
				if (qt && qt->borrowing_limit != XP_UNLIMITED && b > qt->borrowing_limit)
					return xp_errf(err, "queue %s borrows %lld of %s %s, over its borrowing limit %lld",
						       s->qs->queues[q].name, (long long)b, s->qs->classes[c].name, xp_res_name(r),
						       (long long)qt->borrowing_limit);
			}
	/* Per cohort: all it borrows within what its queues may lend (the guaranteed parts of
	 * their quotas are never lent). */
	for (size_t p = 0; p < s->nq; p++) {
		if (!s->q[p].n_kids)
			continue;
		for (size_t c = 0; c < s->nc; c++)
			for (int r = 0; r < XP_RES_COUNT; r++) {
				int64_t borrowed = 0, lendable = 0;
				for (size_t k = 0; k < s->q[p].n_kids; k++) {
					borrowed += xq_borrow(s, s->q[p].kids[k], c, r);
					lendable += xq_lendable(s, s->q[p].kids[k], c, r);
				}
				if (borrowed > lendable)
					return xp_errf(err, "the queues under %s borrow %lld of %s %s, more than the %lld they lend",
						       s->qs->queues[p].name, (long long)borrowed, s->qs->classes[c].name,
						       xp_res_name(r), (long long)lendable);
			}
	}
	return 0;
}
