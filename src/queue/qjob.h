/* qjob.h: a workload job as the scheduler sees it: a placement job spec (place/jobspec.h) plus
 * its queue, tenant, priority, times and state, the one pending reason it has now (stable codes,
 * Slurm's and Kueue's vocabulary where they have one), and the devices it holds while it runs.
 * Times are seconds: epoch seconds for store jobs, seconds from the trace start in a simulation. */
#ifndef XP_QJOB_H
#define XP_QJOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobspec.h"
#include "xp.h"

/* A job's states. Admitted is the instant between quota admission and placement committing
 * (both at the same time in xpool's model; recorded so that a live engine's admitted-but-not-
 * yet-running Kueue workloads fit the same model). Cancelled is final, as completed and failed. */
enum xp_jstate {
	XP_JS_PENDING,
	XP_JS_ADMITTED,
	XP_JS_RUNNING,
	XP_JS_PREEMPTED, /* evicted; goes back to pending at once with its submit time kept */
	XP_JS_COMPLETED,
	XP_JS_FAILED,
	XP_JS_HELD,
	XP_JS_CANCELLED,
	XP_JS_COUNT
};

/* Pending reasons: stable numbers (scripts and the store keep them; never renumber). */
enum xp_reason {
	XP_R_NONE = 0,
	XP_R_RESOURCES = 1,       /* Slurm Resources, Volcano NotEnoughResources */
	XP_R_PRIORITY = 2,        /* Slurm Priority: jobs ahead of it, or it would delay the head job */
	XP_R_QUOTA = 3,           /* Kueue "insufficient unused quota", Slurm QOSGrpGRES */
	XP_R_GANG = 4,            /* Volcano NotEnoughTasks: fewer replicas fit than the gang minimum */
	XP_R_NOT_VALIDATED = 5,   /* no device proven for the asked layer and case */
	XP_R_AFFINITY = 6,        /* Slurm BadConstraints: it fits nowhere even on the idle cluster */
	XP_R_HELD = 7,            /* Slurm JobHeldUser/JobHeldAdmin */
	XP_R_QUEUE_INACTIVE = 8,  /* Kueue "ClusterQueue is inactive", Slurm PartitionDown */
	XP_R_COUNT
};

/* One device slot a running job holds: node index in the cluster, device position in the
 * node, the share taken (1000 = whole, less for a share or a slice's fraction) and the slice
 * template (NULL: whole device or a share). */
struct xp_qslot {
	uint32_t node_ix;
	uint16_t pos;
	int16_t take;       /* milli-devices */
	const char *slice;  /* interned or owned by the job's spec; not freed through the slot */
};

/* What a running job holds, compact (a 10,000-node cluster runs tens of thousands of jobs). */
struct xp_qalloc {
	struct xp_qslot *slots;
	size_t n;
	int64_t commit; /* the placement index's commit id (xp_place_commit), -1 when none */
};

/* A job. */
struct xp_qjob {
	int64_t id;              /* store row id, or the trace line's number */
	char *name;              /* NULL: none (the trace's "id" text for trace jobs) */
	char *queue, *tenant;    /* tenant NULL: none */
	int priority;            /* larger first */
	struct xp_job *spec;     /* owned */
	int64_t submit;          /* when it was submitted (kept across preemption) */
	int64_t est_s;           /* the user's estimate (time limit), seconds, > 0 */
	int64_t actual_s;        /* trace jobs: how long it really runs; -1: runs est_s */
	int64_t start, end;      /* -1 until started / finished */
	int state;               /* enum xp_jstate */
	int reason;              /* enum xp_reason; XP_R_NONE unless pending or held */
	char *reason_text;       /* numbers in words: "h100 devices 64/64 used, 8 more needed" */
	size_t pos_queue, pos_global; /* 1-based position among pending jobs; 0: not pending */
	int64_t eta;             /* estimated start (pending), -1 unknown or beyond the horizon */
	int preemptions;         /* times it was preempted */
	struct xp_qalloc alloc;  /* while admitted or running */
	const char *engine;      /* the live engine it was read from ("slurm", static), NULL: xpool's own */
	char *nodes;             /* an engine's job: the nodes it runs on in the engine's words, NULL: none */
	char *engine_id;         /* an engine's job: its id in the engine's words ("7_[2-5]", "8+1"), NULL: none */
	char *engine_gres;       /* an engine's job: the GRES name it asks per node ("gpu", "npu"), NULL: none */
};

/* enum xp_jstate's names ("pending", "admitted", "running", "preempted", "completed",
 * "failed", "held", "cancelled") and back (-1 unknown). */
const char *xp_jstate_name(int value);
int xp_jstate_parse(const char *text);
/* enum xp_reason's names ("None", "Resources", "Priority", "QuotaExceeded", "GangIncomplete",
 * "NotValidated", "AffinityUnsatisfiable", "Held", "QueueInactive") and back (-1 unknown). */
const char *xp_reason_name(int value);
int xp_reason_parse(const char *text);
/* True for the final states (completed, failed, cancelled). */
bool xp_jstate_final(int state);
/* Frees what j owns (not j) and zeroes it. */
void xp_qjob_clear(struct xp_qjob *j);

#endif
