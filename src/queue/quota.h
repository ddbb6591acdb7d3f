/* quota.h: queue quotas as the scheduler applies them (internal to src/queue): the table of
 * each queue's quota per class and resource, admission of a job's charges (the queue and every
 * ancestor within max; borrowing from siblings within their lending and its borrowing limits),
 * and the quota invariants. The rules and their numbers are in xpool-internals(7). */
#ifndef XP_QUOTA_H
#define XP_QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xp.h"

struct xp_sched;
struct xp_quota;
struct xs_charge;

/* Builds s->qt from the queue set's quotas. */
void xq_init(struct xp_sched *s);
/* Queue qi's quota of class ci and resource r, NULL when it has none (unlimited). */
const struct xp_quota *xq_quota(const struct xp_sched *s, size_t qi, size_t ci, int r);
/* The quota invariants: every queue within max, borrowing within limits. */
int xq_check_quota(const struct xp_sched *s, struct xp_err *err);

#endif
