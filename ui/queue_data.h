/* queue_data.h: what the queues view shows, read from the store the console opened for
 * reading: the queue set, the jobs with their reasons and positions, and each queue's use
 * of each quota and its pending and running counts. Reading never writes. */
#ifndef XP_QUEUE_DATA_H
#define XP_QUEUE_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qjob.h"
#include "qmodel.h"
#include "ui.h"

/* One read of the store. */
struct xp_qdata {
	struct xp_qset qs;
	char queues_note[256];    /* what the view says when there is no queue */
	bool have_jobs;           /* jobs (and with them use and counts) were read */
	char jobs_note[256];      /* what the job list says when they were not */
	struct xp_qjob *jobs;     /* by id */
	size_t n_jobs;
	int64_t now;              /* when it was read (waits are counted to it) */
	int64_t *used;            /* per quota row: milli-units used, -1 not known */
	size_t *used_at;          /* per queue: its first quota's index in used */
	size_t *pend, *run;       /* per queue: jobs waiting (pending, held), started (admitted, running) */
};

/* Reads everything again into d (what d held is freed first); never fails: what could not be
 * read leaves a note saying why. With --slurm the queues and jobs are Slurm's (jobrun.h). */
void xp_qdata_load(struct xp_qdata *d, struct xp_ui *ui);
/* Milli-units queue qi (its descendants included) uses of its quota k, -1 when not known. */
int64_t xp_qdata_used(const struct xp_qdata *d, size_t qi, size_t k);
/* Queue qi's pending (pending true) or running count as text, "-" when jobs were not read. */
const char *xp_qdata_count_text(const struct xp_qdata *d, size_t qi, bool pending, char *buf, size_t len);
/* Frees what d holds and zeroes it. */
void xp_qdata_clear(struct xp_qdata *d);

#endif
