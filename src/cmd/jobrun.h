/* jobrun.h: the store's jobs run through the scheduler (src/queue/qsched.h) at one moment, for
 * `job` and `queue`: the paper workload advanced to now (running jobs past their estimate
 * end), a user's action, one pass; what changed, as the store records it; and each pending
 * job's estimated start from the simulator. Reads compute all of it in memory every time and
 * never write; a write saves it inside the caller's transaction. */
#ifndef XP_JOBRUN_H
#define XP_JOBRUN_H

#include <stdbool.h>
#include <stdint.h>

#include "cmd.h"
#include "jstore.h"
#include "place.h"
#include "qmodel.h"
#include "qsched.h"
#include "store.h"

/* How far ahead estimated starts are looked for, seconds. */
#define XP_JOBRUN_HORIZON 86400

/* One state change the run made. */
struct xp_jobrun_event {
	size_t job;        /* scheduler index */
	int from, to, reason;
	char *text;
	int64_t time;
	const char *actor; /* the store's actor for a user's action, else XP_JSTORE_SCHEDULER */
};

/* A run: the stored rows, the scheduler built on them, and what it did. */
struct xp_jobrun {
	int64_t now;
	struct xp_qset qs;
	struct xp_qjob *jobs;  /* the stored rows, by id */
	size_t n;
	bool *lost;            /* [n] a row's slots or spec could not be read back on this cluster */
	struct xp_cluster *c;  /* the context's (or, with own_c, the run's own sharing its nodes);
				* NULL when none was needed */
	bool own_c;            /* c is the run's: an engine's running jobs took their devices in it */
	struct xp_manifest *ms[XP_PLACE_MANIFESTS];
	size_t nm;
	struct xp_sched *s;
	int64_t *six;          /* [n] each row's scheduler index, -1 when not scheduled */
	char **note;           /* [n] why a row is not scheduled (NULL: it is, or it is final) */
	size_t *row;           /* [xp_sched_count] each scheduler job's row, SIZE_MAX for one not stored */
	size_t cap_row;
	struct xp_jobrun_event *ev;
	size_t n_ev, cap_ev;
	const char *actor;     /* who makes the changes being made now */
	const char *detail;    /* overrides the scheduler's text of the changes being made now */
	int64_t *eta;          /* [xp_sched_count] estimated starts after xp_jobrun_eta, -1 unknown */
	char **eta_nodes;      /* [xp_sched_count] after xp_jobrun_eta: the nodes a pending job starts
				* on in that run ("n1,n2"), NULL when it does not start there */
	size_t n_eta;          /* entries of eta and eta_nodes */
	bool mute;             /* adding jobs: their first state is stored already (or never is) */
	int strategy;
	struct xp_store *st;   /* what --validated reads (the command's store) */
};

/* The time a run is at: $XPOOL_NOW (epoch seconds, for tests and examples) or the clock.
 * -1 with err when XPOOL_NOW is not a number of seconds. */
int xp_jobrun_now(int64_t *now, struct xp_err *err);
/* The live engine whose queues and jobs runs read instead of the store's: "Slurm" with --slurm
 * or --slurm-conf, "Kubernetes" with --k8s or any --k8s-* option; NULL for the store. */
const char *xp_jobrun_engine(const struct xp_ctx *ctx);
/* Reads that engine's queues and jobs, read-only (*qs zeroed by the caller; free it with
 * xp_qset_clear and each job with xp_qjob_clear, then the array); each job's engine names it.
 * -1 with err. */
int xp_jobrun_engine_load(const struct xp_ctx *ctx, struct xp_qset *qs, struct xp_qjob **jobs, size_t *n,
			  struct xp_err *err);

/* Loads the store's queues and jobs into r (zeroed first), and the context's cluster when
 * cluster is true or any job is unfinished. With --slurm (ctx->slurm) the live Slurm's
 * partitions and jobs instead (the store is not read for them): its running jobs are not
 * scheduled (the nodes' GresUsed holds their devices; note says so), its pending and held
 * ones are. -1 with err (the cluster's failure is printed by the context; err then says so). */
int xp_jobrun_load(struct xp_jobrun *r, struct xp_ctx *ctx, struct xp_store *st, int64_t now, bool cluster,
		   struct xp_err *err);
/* Builds the scheduler on the loaded rows (every unfinished one it accepts). */
int xp_jobrun_build(struct xp_jobrun *r, int strategy, struct xp_err *err);
/* Adds job j (moved in) to the scheduler: a new job, not stored (row SIZE_MAX). The index, or
 * -1 with err (an unknown queue, a tenant the queue refuses). */
int64_t xp_jobrun_add(struct xp_jobrun *r, struct xp_qjob *j, struct xp_err *err);
/* Advances the paper workload to now: each running job whose start + estimate is not after
 * now completes at that time (text "estimated end"), earliest first. */
int xp_jobrun_advance(struct xp_jobrun *r, struct xp_err *err);
/* One scheduling pass at now. */
int xp_jobrun_pass(struct xp_jobrun *r, struct xp_err *err);
/* Fills r->eta: a second scheduler built, advanced and passed as r was (with extra, a copy of
 * a job added as xp_jobrun_add did, when given) and simulated forward from now over
 * XP_JOBRUN_HORIZON; a pending job's eta is when it started there, eta_nodes where. */
int xp_jobrun_eta(struct xp_jobrun *r, const struct xp_qjob *extra, struct xp_err *err);
/* Writes every stored row the run changed and every change it made, inside the caller's
 * transaction; -1 with err when the rows are a live engine's (never written). */
int xp_jobrun_save(struct xp_jobrun *r, struct xp_store *st, struct xp_err *err);
/* Row i as it is now: the scheduler's job when scheduled, else the stored row. */
const struct xp_qjob *xp_jobrun_job(const struct xp_jobrun *r, size_t i);
/* The row of job id, or SIZE_MAX. */
size_t xp_jobrun_find(const struct xp_jobrun *r, int64_t id);
/* Frees what r holds (not the context's cluster). */
void xp_jobrun_free(struct xp_jobrun *r);

#endif
