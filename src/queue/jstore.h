/* jstore.h: workload jobs in the store (tables jobs and job_events of schema version 4):
 * loading them whole with their device slots, each job's state changes, and the writes: a new
 * job, a job's row after a change, one state change, and the audit row of a user's action.
 * As qstore.h, the writers do not begin or commit: the caller holds one transaction around a
 * command's transitions, events and audit row. */
#ifndef XP_JSTORE_H
#define XP_JSTORE_H

#include <jansson.h>

#include "model.h"
#include "qjob.h"
#include "store.h"

/* Who writes a change the scheduler made (a user's action is written as the store's actor). */
#define XP_JSTORE_SCHEDULER "scheduler"

/* One state change of a job as stored. */
struct xp_jevent {
	int64_t id, job, time;
	int from, to;  /* enum xp_jstate; from -1 for a job's first state */
	int reason;    /* enum xp_reason */
	char *detail;  /* NULL when none */
	char *actor;
};

/* Loads every job, by id, into *jobs (caller frees each with xp_qjob_clear, then the array).
 * c maps the stored slots' node names to indices: a slot on a node c does not hold is left
 * out and the job's *lost (when given, one flag per job, caller frees) is set. A file from
 * before the job tables holds none. */
int xp_jstore_load(struct xp_store *s, const struct xp_cluster *c, struct xp_qjob **jobs, size_t *n, bool **lost,
		   struct xp_err *err);
/* The state changes of job id, oldest first (caller frees with xp_jevents_free). */
int xp_jstore_events(struct xp_store *s, int64_t id, struct xp_jevent **ev, size_t *n, struct xp_err *err);
/* Frees n events and the array. */
void xp_jevents_free(struct xp_jevent *ev, size_t n);
/* How many jobs of queue name are not final (pending, held, admitted, running). */
int xp_jstore_unfinished(struct xp_store *s, const char *queue, int64_t *n, struct xp_err *err);

/* Inserts job j (its id is set), with its first event (-1 -> j's state, by the store's
 * actor) and the audit row "job.submit" (after: the row as JSON). */
int xp_jstore_insert(struct xp_store *s, struct xp_qjob *j, const struct xp_cluster *c, struct xp_err *err);
/* Writes j's changing columns (state, reason, text, start, end, preemptions, slots). */
int xp_jstore_update(struct xp_store *s, const struct xp_qjob *j, const struct xp_cluster *c, struct xp_err *err);
/* Records one state change of job id at time t by actor. */
int xp_jstore_event(struct xp_store *s, int64_t id, int64_t t, int from, int to, int reason, const char *detail,
		    const char *actor, struct xp_err *err);
/* The audit row of a user's action on a job ("job.cancel", ...): before and after as JSON. */
int xp_jstore_audit(struct xp_store *s, const char *action, const struct xp_qjob *before,
		    const struct xp_qjob *after, const struct xp_cluster *c, struct xp_err *err);

/* Job j as a JSON object (the stored row: spec, times, state, reason, slots by node name). */
json_t *xp_jstore_job_json(const struct xp_qjob *j, const struct xp_cluster *c);
/* A deep copy of j into dst (the spec through its JSON form). */
void xp_jstore_job_copy(struct xp_qjob *dst, const struct xp_qjob *j);
/* The slots as stored: [{"node","pos","take","slice"}] (NULL text when there are none). */
char *xp_jstore_alloc_text(const struct xp_qalloc *a, const struct xp_cluster *c);

#endif
