/* qsim.h: the discrete-event simulator: a scheduler (qsched.h) run forward from a time t0 with
 * jobs arriving at their submit times, running for their actual (or estimated) durations and
 * ending; after the events of each timestamp, one scheduling pass. Metrics per queue (waits,
 * never-started jobs and why, preemptions), utilization per resource class over time and
 * ECU-hours per tenant. Deterministic: no clock, no hash order. */
#ifndef XP_QSIM_H
#define XP_QSIM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "qjob.h"
#include "qsched.h"
#include "xp.h"

/* Options of a run. */
struct xp_qsim_opts {
	int64_t t0;         /* the time the run starts (store jobs: now; traces: 0) */
	int64_t horizon_s;  /* the run stops at t0 + horizon_s; 0: runs until no event is left */
	size_t buckets;     /* utilization samples over the horizon; 0: 96 */
	bool check;         /* xp_sched_check after every event (tests; XPOOL_SCHED_CHECK=1) */
	atomic_bool *cancel;/* set from another thread: the run stops with -1, err "cancelled" */
	/* The cluster and queue set the scheduler was made with (sched.h keeps them opaque): the
	 * report's queues, utilization rows and ECU come from them. NULL: no queue rows (qs), no
	 * utilization or ECU-hours (cluster). */
	const struct xp_cluster *cluster;
	const struct xp_qset *qs;
	/* Told of every state change too, after the simulator has counted it (the run replaces
	 * the scheduler's own listener): where a job starts in the run, for example. NULL: none. */
	xp_sched_listener also;
	void *also_ctx;
};

/* One queue's figures. */
struct xp_qsim_queue {
	char *name;
	size_t submitted, started, completed, failed, never, preempted;
	int64_t wait_p50, wait_p95, wait_max; /* of started jobs, seconds; -1 when none started */
	size_t never_reasons[XP_R_COUNT];     /* jobs never started, by their last reason */
};

/* One resource class's utilization: busy share of its devices per bucket (0..1). Devices of
 * no class of the queue set are counted under their model's name. */
struct xp_qsim_util {
	char *rclass;
	double *bucket;   /* n_buckets values */
	double mean;
	size_t devices;   /* its devices in the cluster (the share's denominator) */
};

/* ECU-hours (and device-hours) a tenant used. */
struct xp_qsim_tenant {
	char *name;       /* "-" for jobs without one */
	double ecu_hours, device_hours;
};

/* What a run found. */
struct xp_qsim_report {
	struct xp_qsim_queue *queues;  /* in the qset's order */
	size_t n_queues;
	struct xp_qsim_util *util;     /* one per device class that has capacity */
	size_t n_util, n_buckets;
	int64_t t0;                    /* the buckets cover [t0, t0 + n_buckets x bucket_s) */
	double bucket_s;
	struct xp_qsim_tenant *tenants;/* by name */
	size_t n_tenants;
	uint64_t events, passes;
	int64_t t_end;                 /* time of the last event */
};

/* Runs s forward from o->t0: arrivals (n jobs, moved in, any order; each added to s at its
 * submit time) and every job s already holds (running ones end at start + actual_s, or est_s
 * when actual_s < 0). After the run each job's start says when it started (-1: never, within
 * the horizon); that is the estimated start of a store's pending job. Fills r (clear it with
 * xp_qsim_report_clear). -1 with err on an invariant broken (o->check), cancel, or failure;
 * r then holds only events, passes and t_end: how far the run came. */
int xp_qsim_run(struct xp_sched *s, struct xp_qjob *arrivals, size_t n, const struct xp_qsim_opts *o,
		struct xp_qsim_report *r, struct xp_err *err);
/* Frees what r owns and zeroes it. */
void xp_qsim_report_clear(struct xp_qsim_report *r);
/* The report as JSON (caller owns the reference): queues, utilization (buckets rounded to
 * 4 decimals), tenants, events, passes, t_end; the same run gives the same bytes. */
json_t *xp_qsim_report_json(const struct xp_qsim_report *r);

#endif
