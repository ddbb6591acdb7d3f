/* engine_hold.h: a live engine's running jobs take back the devices they hold, so that runs
 * (job list's reasons and estimates, what-if) end them at their time limit and free them. */
#ifndef XP_ENGINE_HOLD_H
#define XP_ENGINE_HOLD_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"
#include "qjob.h"

/* For each running job of a live engine (jobs[i].engine set) that names its nodes: the devices
 * its nodes show in use with no owner (Slurm's GresUsed) become the job's slots, and no longer
 * the nodes' own use. c's node array must be the caller's own (nodes shared with another
 * cluster are copied before they change). held[i] (n entries, may be NULL) says which jobs
 * hold their devices now; the others stay as before: their devices held by the nodes for as
 * long as a run looks. The nodes of the partition sets jobs ask (several partitions) get the
 * sets' labels too (xp_slurm_partsets). Returns how many hold. */
size_t xp_engine_hold(struct xp_cluster *c, struct xp_qjob *jobs, size_t n, bool *held);

/* A cluster that shares c's nodes (each referenced) in an array of its own: what
 * xp_engine_hold may change without changing c. */
struct xp_cluster *xp_engine_hold_share(const struct xp_cluster *c);

#endif
