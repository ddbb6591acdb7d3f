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
			}
	return 0;
}
