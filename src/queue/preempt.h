/* preempt.h: the victims a job may take devices from (internal to src/queue): lower-priority
 * jobs of its own queue, or jobs of borrowing siblings (reclaim), and the smallest set of them
 * in eviction order that lets it place within its quota. */
#ifndef XP_PREEMPT_H
#define XP_PREEMPT_H

#include <stdbool.h>
#include <stddef.h>

struct xp_sched;
struct xp_place_result;

/* Running jobs of job ji's queue its within policy lets it evict, in eviction order (lowest
 * priority, then the latest started); *n of them (caller frees). */
size_t *xp_preempt_within(struct xp_sched *s, size_t ji, size_t *n);
/* Running jobs of job ji's reclaimable siblings its reclaim policy lets it take back from,
 * in eviction order (the sibling with the largest share, then lowest priority, then latest
 * started); *n of them (caller frees). */
size_t *xp_preempt_reclaim(struct xp_sched *s, size_t ji, size_t *n);
/* Releases candidates cand[0..n) in order (reclaim: only from a queue still borrowing) until
 * job ji places and its quota admits it (reclaim: also within its deserved quota), then takes
 * back from the last while it still does. Returns the placement (caller commits it) with the
 * victims in *victims (caller frees), released from the index and uncharged, for the caller to
 * move to preempted; NULL when no set works, everything as before. probe: everything put back
 * even on success (*n_victims says how many it would take). */
struct xp_place_result *xp_preempt_find(struct xp_sched *s, size_t ji, const size_t *cand, size_t n, bool reclaim,
					bool probe, size_t **victims, size_t *n_victims);
/* Whether job ji would place and be admitted (no reclaim) with every candidate cand[0..n) let
 * go: what xp_preempt_find finds a set for, as releases only free devices and quota (a job that
 * fits with some gone fits with more gone), so they are let go in growing batches with a
 * dry-run after each (none while a count of whole devices already says no) until it fits.
 * Everything as before after. */
bool xp_preempt_any(struct xp_sched *s, size_t ji, const size_t *cand, size_t n);

#endif
