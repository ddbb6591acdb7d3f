/* qsched.h: the scheduler: one engine used by the what-if simulator, `job submit --dry-run`
 * and every read of the store's jobs. (Not "sched.h": under -Isrc/queue that name hides the
 * system <sched.h> that <pthread.h> includes.)
 * It holds jobs, queues (a xp_qset) and a private placement
 * index on one cluster, and runs passes: queues in order of their weighted dominant-resource
 * share (DRF), jobs in a queue by priority then submit time; quota with borrowing inside a
 * cohort (siblings under one parent) and reclaim; priority preemption inside a queue; EASY
 * backfill behind the head job's reservation; placement by the existing engine, committed into
 * the scheduler's own index as jobs start and released as they end. It never reads a clock:
 * every call says what time it is, so a run is deterministic. */
#ifndef XP_SCHED_H
#define XP_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "manifest.h"
#include "model.h"
#include "qjob.h"
#include "qmodel.h"
#include "xp.h"

/* Options of a scheduler (zero values take the defaults). */
struct xp_sched_opts {
	int strategy;      /* enum xp_strategy (place.h); 0 = pack */
	bool no_backfill;  /* true: strict order, no backfill (for comparisons) */
	size_t depth;      /* most jobs tried per pass (Slurm default_queue_depth); 0: 1000, or 100
			    * with skip_tail (Slurm's own default_queue_depth) */
	int64_t horizon_s; /* how far ahead a reservation is looked for; 0: 86400 */
	bool reconfigure;  /* MIG slices may go where a new instance could be made */
	bool skip_tail;    /* a pass stops at the depth cap, or once no device is free and no queue may
			    * preempt, leaving the jobs it did not reach as they were (reason and
			    * position), and refuses a job needing more whole devices than are free
			    * without a dry-run: the simulator's passes, where only starts count */
};

/* One state change, as the store records it (job_events) and the simulator counts it. */
struct xp_sched_event {
	size_t job;        /* index (xp_sched_job) */
	int from, to;      /* enum xp_jstate; from = -1 for a job's first state */
	int reason;        /* enum xp_reason of the change (preempted: what took the devices) */
	const char *text;  /* words with numbers; valid during the call only */
	int64_t time;
};
/* Called on every state change, in order. */
typedef void (*xp_sched_listener)(void *ctx, const struct xp_sched_event *ev);

struct xp_sched;

/* A scheduler over cluster c (not changed; it and ms and qs must outlive the scheduler and stay
 * unchanged). NULL with err when the queue set is unusable. */
struct xp_sched *xp_sched_new(const struct xp_cluster *c, const struct xp_manifest *const *ms, size_t n_ms,
			      const struct xp_qset *qs, const struct xp_sched_opts *o, struct xp_err *err);
/* Frees s and every job it holds; NULL is fine. */
void xp_sched_free(struct xp_sched *s);
/* Sets the function told of every state change (NULL: none). */
void xp_sched_listen(struct xp_sched *s, xp_sched_listener fn, void *ctx);
/* Gives the scheduler's placement the validation matrix (as xp_place_index_set_validation);
 * without it a job asking --validated waits with NotValidated. */
void xp_sched_set_validation(struct xp_sched *s, int (*fn)(void *ctx, const struct xp_device *d, const char *kase),
			     void *ctx);

/* Adds job j, moving what it owns into the scheduler (*j is zeroed). A pending or held job is
 * queued; a running job keeps the slots in j->alloc, committed into the index as they are (a
 * store's running job). Returns the job's index, or -1 with err (unknown queue, a tenant the
 * queue does not allow, slots outside the cluster or already full); *j is then cleared. */
int64_t xp_sched_add(struct xp_sched *s, struct xp_qjob *j, struct xp_err *err);
/* How many jobs s holds (every state; indices are stable). */
size_t xp_sched_count(const struct xp_sched *s);
/* Job i (i < xp_sched_count). */
const struct xp_qjob *xp_sched_job(const struct xp_sched *s, size_t i);

/* Ends running job i at now as completed or failed, freeing its devices. -1 with err when it
 * is not running. */
int xp_sched_finish(struct xp_sched *s, size_t i, int state, int64_t now, struct xp_err *err);
/* User actions: hold a pending job, release a held one, cancel one not yet final (a running
 * job's devices are freed). -1 with err naming the state when it does not allow the action. */
int xp_sched_hold(struct xp_sched *s, size_t i, int64_t now, struct xp_err *err);
int xp_sched_release(struct xp_sched *s, size_t i, int64_t now, struct xp_err *err);
int xp_sched_cancel(struct xp_sched *s, size_t i, int64_t now, struct xp_err *err);
/* Takes node_ix out of scheduling (drained: running jobs finish, nothing new starts there). */
int xp_sched_drain(struct xp_sched *s, size_t node_ix, struct xp_err *err);
/* Marks device pos of node_ix failed: nothing starts on it, the job running on it fails at now. */
int xp_sched_fail_device(struct xp_sched *s, size_t node_ix, size_t pos, int64_t now, struct xp_err *err);

/* One scheduling pass at now: starts what may start (admission, placement, preemption,
 * backfill), then gives every pending and held job its reason, text and positions. Returns
 * how many jobs started, -1 with err on an internal failure (out of memory). */
int xp_sched_pass(struct xp_sched *s, int64_t now, struct xp_err *err);
/* A simulator's passes (skip_tail) give reasons a full pass would word otherwise: a job
 * refused by a count gate (no dry-run) has the count's words, and one refused for devices is
 * not asked whether it would fit were its queue's running jobs of lower priority gone (within
 * never: reason Priority, "running jobs of lower priority in queue Q hold what it needs").
 * This gives every pending job a full pass's reason; call it before reading a simulator's
 * reasons. No state, start or reservation changes; nothing for a scheduler without skip_tail. */
void xp_sched_explain(struct xp_sched *s);
/* The earliest time a pending job could start by the running jobs' estimates (the head job's
 * reservation, EASY's shadow time); -1 when there is none. *head (may be NULL) gets its index. */
int64_t xp_sched_shadow(const struct xp_sched *s, size_t *head);

/* What queue qi (index in the qset) uses of class ci (index in qs->classes) and resource res,
 * milli-units, its descendants included. */
int64_t xp_sched_used(const struct xp_sched *s, size_t qi, size_t ci, int res);
/* The cluster's capacity of class ci and resource res (usable devices only), milli-units. */
int64_t xp_sched_capacity(const struct xp_sched *s, size_t ci, int res);
/* Queue qi's weighted dominant share (used / capacity / weight, largest over class and
 * resource); what orders queues. */
double xp_sched_share(const struct xp_sched *s, size_t qi);
/* The class index of device pos of node node_ix (first class in the set's order whose
 * vendor/model globs or label match). A device no class takes is in a class of its model that
 * the scheduler adds for the shares: an index at or past the set's n_classes. */
int xp_sched_device_class(const struct xp_sched *s, size_t node_ix, size_t pos);

/* Checks every invariant (no device over-allocated, no queue over its maximum, borrowing
 * within limits, every pending or held job with a reason and text, usage counters equal to a
 * recount, every running job's commit live in the index, the counting gate's idle devices
 * equal to a recount, and the head job's shadow time, worked out again, no later than the one
 * backfill was let in under); -1 with err naming the first broken. It releases and commits
 * again the running jobs of that walk: their commit ids change, nothing else. */
int xp_sched_check(const struct xp_sched *s, struct xp_err *err);

#endif
