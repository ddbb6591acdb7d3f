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
/* What queue qi borrows of class ci, resource r: its use above deserved (0 without a quota). */
int64_t xq_borrow(const struct xp_sched *s, size_t qi, size_t ci, int r);
/* What queue qi may lend of ci, r: min(lending limit, deserved - guaranteed) (0 without a
 * quota): the guaranteed part is never lent. */
int64_t xq_lendable(const struct xp_sched *s, size_t qi, size_t ci, int r);
/* Whether queue qi may take the n charges ch on top of what it uses: the queue and every
 * ancestor stay within max; what it uses above deserved stays within its borrowing limit and
 * within what its siblings leave unused of what they lend (less what the others borrow).
 * 0 when it may; else XP_R_QUOTA with *text (caller frees) in words with the numbers, and
 * *pool_short true when only the siblings' unused quota was short (reclaim may help). */
int xq_admit(const struct xp_sched *s, size_t qi, const struct xs_charge *ch, size_t n, char **text,
	     bool *pool_short);
/* Whether the n charges ch keep queue qi within its deserved quota (reclaim's condition). */
bool xq_within_deserved(const struct xp_sched *s, size_t qi, const struct xs_charge *ch, size_t n);
/* The quota invariants: every queue within max, borrowing within limits. */
int xq_check_quota(const struct xp_sched *s, struct xp_err *err);

#endif
