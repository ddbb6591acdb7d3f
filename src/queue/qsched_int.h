/* qsched_int.h: the scheduler's state, shared by its files (qsched.c: jobs, states and the pass;
 * quota.c: usage and admission; preempt.c: victims; backfill.c: the head's reservation;
 * invariants.c: xp_sched_check). Internal to src/queue. */
#ifndef XP_QSCHED_INT_H
#define XP_QSCHED_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "place.h"
#include "qjob.h"
#include "qmodel.h"
#include "qsched.h"

/* One charge of a running job: class index x XP_RES_COUNT + resource, and the milli-units. */
struct xs_charge {
	uint32_t key;
	int64_t amt;
};

/* A job and what the scheduler keeps beside it. */
struct xs_job {
	struct xp_qjob j;
	size_t qi;              /* its queue's index in the qset */
	char *sig;              /* its shape (the spec without name, queue, tenant, priority) */
	uint32_t shape;         /* the shape's number (s->shapes) */
	int64_t need;           /* whole devices it needs at the least, milli (the counting gate) */
	struct xs_charge *ch;   /* what it is charged while running */
	size_t n_ch;
	bool backfilled;        /* started behind a reservation (for the invariants) */
	bool held_back;         /* refused for devices that lower-priority jobs of its queue hold
				 * (reason Priority, within never): still a head for a reservation */
	bool gated;             /* refused by a count gate in a simulator's pass: xp_sched_explain
				 * gives it a full pass's words */
};

/* A queue as the scheduler sees it. */
struct xs_queue {
	size_t parent;          /* SIZE_MAX at the top */
	size_t *kids;
	size_t n_kids;
	size_t *pend;           /* its pending jobs, in order (priority desc, submit asc, id) */
	size_t n_pend, cap_pend;
	size_t rank;            /* order among siblings' ties: queue priority desc, then name */
	/* per pass */
	size_t cur;             /* next of pend to look at */
	bool stopped;           /* strict queue blocked, or inactive */
	size_t blocker;         /* strict: the job it stopped at */
	size_t n_running;       /* its running jobs */
	int min_started_prio;   /* the lowest priority any of its jobs started with (INT_MAX: none) */
};

/* A kept refusal. */
struct xs_fail {
	uint64_t gen;
	int reason;
	char *text;
	bool counted;           /* a count gate's refusal (its words are the count's) */
};

/* A shape as the counting gate sees it (qcount.c). */
struct xs_cshape {
	bool whole;             /* every group asks whole devices */
	int dmin;               /* the fewest whole devices of a replica of any group */
	size_t ng;              /* its groups */
	int *d, *gmin;          /* per group: whole devices per replica (0: a slice or share), gang minimum */
	bool *elig;             /* per group x node type: its devices are of the group's vendor and model */
};

/* Idle devices counted per node and per node type (qcount.c). */
struct xs_count {
	uint32_t *ntype;        /* per node: its devices' kind, or n_types - 1 when of several */
	size_t n_types;
	size_t kmax;            /* the most devices of a node */
	uint32_t *nidle;        /* per node: usable devices no running job holds any part of */
	uint32_t *nidle_r;      /* the same, less the head's reserved devices */
	int32_t *held;          /* per device slot: milli-units running jobs hold */
	uint32_t *snode;        /* per device slot: its node */
	bool *never;            /* per device slot: never idle (node not up, device failed, or the
				 * cluster itself shows it in use) */
	size_t *hist;           /* n_types x (kmax + 1): nodes with that many idle devices */
	size_t *hist_r;         /* the same by nidle_r */
	struct xs_cshape *shape;/* per shape */
};

/* A small string map for the per-pass and per-shape caches. */
struct xs_map {
	char **keys;
	int *reason;
	char **text;
	size_t cap, n;
};

struct xp_sched {
	const struct xp_cluster *c;
	const struct xp_manifest *const *ms;
	size_t n_ms;
	const struct xp_qset *qs;    /* the caller's, or &own when devices of no class were found */
	struct xp_qset own;          /* the caller's classes (shared) and one per model of the devices
				      * no class takes (owned, from n_user_classes on); queues shared */
	size_t n_user_classes;
	struct xp_sched_opts o;
	struct xp_place_index *ix;   /* the running jobs' commits, and the blockers */
	struct xp_place_index *idle; /* only the blockers: AffinityUnsatisfiable's cluster */
	size_t nq, nc;
	size_t *off;                 /* node -> its first device slot */
	size_t n_slots;
	int *slot_class;             /* device slot -> class index, -1 none */
	size_t *class_order;         /* class indices in creation order (created, then name) */
	int cpu_ci, mem_ci;          /* the built-ins' indices, -1 when the set has none */
	int64_t *cap;                /* nc x XP_RES_COUNT */
	int64_t *used;               /* nq x nc x XP_RES_COUNT, descendants included */
	double *share;               /* per queue, kept while share_ok */
	bool share_ok;
	size_t next_q;               /* a pass's last next queue (SIZE_MAX: work it out) */
	const struct xp_quota **qt;  /* nq x nc x XP_RES_COUNT: the queue's quota, NULL none (quota.c) */
	struct xs_job *jobs;
	size_t n_jobs, cap_jobs;
	struct xs_queue *q;
	size_t *roots;
	size_t n_roots;
	xp_sched_listener fn;
	void *fctx;
	bool *drained;               /* per node */
	bool *failed;                /* per device slot */
	size_t *running;             /* running job indices by estimated end (start + est_s, index) */
	bool may_preempt;            /* some queue's within or reclaim policy is not never */
	int64_t free_milli;          /* usable devices' free shares less what running jobs hold */
	int64_t idle_milli;          /* the same with no job running: more than this never fits */
	size_t n_running, cap_running;
	struct xs_fail *idle_a;      /* per shape: its answer on the idle cluster (reason 0: fits) */
	uint64_t idle_gen;           /* those answers are good while their gen is this */
	/* Refusals kept until devices come free (starts only take more): per shape (placement) and
	 * per queue and shape (quota), valid while their generation is fail_gen. */
	struct xs_map shapes;        /* shape text -> number (reason field) */
	size_t n_shapes, cap_shapes;
	struct xs_fail *fail;        /* per shape */
	struct xs_fail *qfail;       /* per shape x queue */
	uint64_t fail_gen;           /* the placement refusals' (fail) */
	uint64_t qfail_gen;          /* the quota refusals' (qfail): any release ends them */
	/* Per shape: placed around the head's reserved slots in vain, while this is blk_gen
	 * (bumped when devices come free or the reservation changes). */
	uint64_t *blk_fail;
	uint64_t blk_gen;
	uint64_t ix_gen;             /* bumped whenever the index or the reservation changes */
	uint64_t resv_free_gen;      /* resv_free is for this ix_gen */
	int64_t resv_free;           /* free milli-devices among the reserved slots */
	size_t *shape_pending;       /* per shape: pending jobs of it */
	size_t n_shapes_pending;     /* shapes with a pending job */
	size_t n_refused;            /* of those, shapes with a kept placement refusal */
	/* The within-never probe's answers (simulator passes), per shape x queue x priority. A
	 * yes holds until devices or quota are taken (up_gen: a start), a no until they are freed
	 * (down_gen: an end, a preemption): placement and quota only gain from what is freed. */
	struct xs_probe {
		uint32_t shape;
		size_t qi;
		int prio;
		bool yes;
		uint64_t gen;           /* up_gen for a yes, down_gen for a no, when worked out */
	} *probe;
	size_t n_probe, cap_probe;
	uint64_t up_gen, down_gen;
	int *near_held;              /* per node, scratch of xp_preempt_any (zero between calls) */
	bool *near_sel;              /* per node, the same */
	/* EASY reservation of the head job */
	bool resv_valid;
	size_t head;                 /* SIZE_MAX: none */
	int64_t shadow;              /* -1: none */
	int64_t resv_now;            /* when it was worked out */
	bool *reserved;              /* per device slot */
	char delay_text[128];        /* "would delay job N ...", for delay_head at delay_shadow */
	size_t delay_head;           /* SIZE_MAX: none made */
	int64_t delay_shadow;
	size_t *resv_slots;
	size_t n_resv;
	int (*validated)(void *ctx, const struct xp_device *d, const char *kase);
	void *vctx;
	struct xs_count cnt;         /* the counting gate's idle devices per node (qcount.c) */
};

/* Milli-units of x units. */
#define XS_MILLI 1000

/* The usage cell of queue qi, class ci, resource r. */
static inline int64_t *xs_used(const struct xp_sched *s, size_t qi, size_t ci, int r)
{
	return &s->used[(qi * s->nc + ci) * XP_RES_COUNT + (size_t)r];
}

/* Adds (sign +1) or takes away (-1) job ji's charges from its queue and every ancestor. */
void xs_charge_apply(struct xp_sched *s, size_t ji, int sign);
/* Works out job ji's charges from its slots and spec (whole replicas: cpus, host memory). */
void xs_charge_compute(struct xp_sched *s, size_t ji);

/* The counting gate (qcount.c). Sets up the node types and counts (after s->ix exists). */
void xs_count_init(struct xp_sched *s);
/* Counts again from the running jobs (after a drain or a failed device). */
void xs_count_recount(struct xp_sched *s);
/* Job ji's slots come to be held (sign +1: it starts) or free (-1: it stops). */
void xs_count_job(struct xp_sched *s, size_t ji, int sign);
/* Fills shape sh's entry (s->cnt.shape has room) from its spec. */
void xs_count_shape(struct xp_sched *s, uint32_t sh, const struct xp_job *spec);
/* Frees one shape's entry. */
void xs_count_shape_clear(struct xs_cshape *c);
/* True when a group of shape sh has fewer replicas' room in idle devices, node by node, than
 * its gang minimum: placement would refuse it (outside: not counting the head's reserved
 * devices: it cannot avoid them). *fit and *group (may be NULL) get that room and the group. */
bool xs_count_refuses(const struct xp_sched *s, uint32_t sh, bool outside, size_t *fit, size_t *group);
/* Marks device slot reserved for the head job (on) or not, keeping the counts outside the
 * reservation: every change of s->reserved goes through here (or a recount). */
void xs_count_reserve(struct xp_sched *s, size_t slot, bool on);
/* Whether node could take a replica of shape sh by count (always true for a shape with a slice
 * or share): a release elsewhere leaves its refusals standing. */
bool xs_count_hosts(const struct xp_sched *s, uint32_t sh, size_t node);
/* Frees the counts. */
void xs_count_free(struct xp_sched *s);
/* The counts equal a recount from the running jobs; -1 with err naming the first difference. */
int xs_count_check(const struct xp_sched *s, struct xp_err *err);

/* Forgets every kept refusal (devices came free). */
static inline void xs_fail_clear(struct xp_sched *s)
{
	s->fail_gen++;
	s->qfail_gen++;
	s->blk_gen++;
	s->ix_gen++;
	s->n_refused = 0;
}

/* Map operations: the entry for key (NULL when none), set (copies), clear. */
const char *xs_map_get(const struct xs_map *m, const char *key, int *reason, bool *found);
void xs_map_put(struct xs_map *m, const char *key, int reason, const char *text);
void xs_map_clear(struct xs_map *m);

/* Commits job j's slots into the index again (one replica per slot); returns the commit id. */
int64_t xs_commit_slots(struct xp_sched *s, const struct xp_qjob *j);

/* Fills sj's slots from placement r (its replicas' devices, take and slice). */
void xs_alloc_from_result(struct xs_job *sj, const struct xp_place_result *r);
/* Job ji's charges were it placed as r (*ch, *n: the caller frees *ch). */
void xs_result_charges(struct xp_sched *s, size_t ji, const struct xp_place_result *r, struct xs_charge **ch,
		       size_t *n);

/* Time as words for a reason: an ISO date for epoch seconds, "t=N s" for simulated ones. */
void xs_time_text(int64_t t, char *buf, size_t size);

#endif
