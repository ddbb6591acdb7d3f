/* whatif.h: what-if runs: the same workload simulated twice, on the cluster as it is (the
 * baseline) and on a copy with changes (the scenario: nodes drained, devices failed, nodes
 * added, a queue's quota changed, another strategy), both at once on two threads, so that an
 * operator sees what a change does to every queue's waits before making it. Pure: no
 * printing, no store; the console runs it off its key loop with a cancel flag. */
#ifndef XP_WHATIF_H
#define XP_WHATIF_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "manifest.h"
#include "model.h"
#include "qjob.h"
#include "qmodel.h"
#include "qsim.h"
#include "xp.h"

/* What a change does. */
enum xp_whatif_kind { XP_WI_DRAIN, XP_WI_FAIL, XP_WI_ADD, XP_WI_QUOTA, XP_WI_KIND_COUNT };

/* One change of the scenario. */
struct xp_whatif_change {
	int kind;          /* enum xp_whatif_kind */
	char *node;        /* drain, fail: the node's name */
	int dev;           /* fail: the device's index in the node */
	size_t count;      /* add: how many nodes */
	char *node_kind;   /* add: a sim gen kind ("nvidia-h100") */
	char *queue, *rclass; /* quota: the queue and device class */
	int64_t devices;   /* quota: its deserved devices, milli-units */
};

/* A what-if's inputs (all borrowed: they must outlive the run and not change during it). */
struct xp_whatif {
	const struct xp_cluster *cluster;
	const struct xp_manifest *const *ms;
	size_t n_ms;
	const struct xp_qset *qs;
	const struct xp_qjob *jobs;  /* copied for each run */
	size_t n_jobs;
	const struct xp_whatif_change *changes;
	size_t n_changes;
	int strategy;      /* the scenario's enum xp_strategy; -1: as the baseline's */
	bool no_backfill;
	bool reconfigure;  /* MIG slices may go where a new instance could be made (qsched.h) */
	int64_t t0, horizon_s; /* as xp_qsim_opts */
	size_t buckets;
	bool check;
	uint64_t seed;     /* of the nodes --add generates */
	atomic_bool *cancel;
};

/* Both runs' reports and the changes in words. */
struct xp_whatif_result {
	struct xp_qsim_report baseline, scenario;
	char **changes;    /* "drain h100-0003", "add 4 nvidia-h100 (whatif-h100-0001..0004)" */
	size_t n_changes;
};

/* Parses one change from its option's text into *c (clear with xp_whatif_change_clear):
 * --drain NODE, --fail NODE:DEV, --add N:KIND, --quota QUEUE:CLASS=N. -1 with err naming the
 * option on bad syntax (names are looked up when the run starts). */
int xp_whatif_change_parse(int kind, const char *text, struct xp_whatif_change *c, struct xp_err *err);
/* Frees what c owns and zeroes it. */
void xp_whatif_change_clear(struct xp_whatif_change *c);

/* Builds the scenario, runs the baseline and the scenario on two threads and fills res
 * (clear with xp_whatif_result_clear). -1 with err: an unknown node, device, kind, queue or
 * class ("--drain h9: no such node"), a run's failure ("scenario: ..."), or "cancelled". */
int xp_whatif_run(const struct xp_whatif *w, struct xp_whatif_result *res, struct xp_err *err);
/* Frees what res owns and zeroes it. */
void xp_whatif_result_clear(struct xp_whatif_result *res);
/* {"baseline": report, "scenario": report, "changes": [words]} (caller owns it). */
json_t *xp_whatif_json(const struct xp_whatif_result *res);

/* A deep copy of a job (the scheduler takes the jobs it is given). */
void xp_qjob_copy(struct xp_qjob *dst, const struct xp_qjob *src);
/* A deep copy of a queue set. */
void xp_qset_copy(struct xp_qset *dst, const struct xp_qset *src);

#endif
