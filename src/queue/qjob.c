/* qjob.c: a workload job's state and reason names, and freeing a job (qjob.h). */
#include "qjob.h"

#include <stdlib.h>
#include <string.h>

#include "names.h"

static const char *const jstate_names[XP_JS_COUNT] = {"pending",   "admitted", "running", "preempted",
						      "completed", "failed",   "held",    "cancelled"};
/* Slurm's and Kueue's words where they have one (qjob.h); the numbers are the stable part. */
static const char *const reason_names[XP_R_COUNT] = {"None",         "Resources",
						     "Priority",     "QuotaExceeded",
						     "GangIncomplete", "NotValidated",
						     "AffinityUnsatisfiable", "Held",
						     "QueueInactive"};

XP_NAMES_DEFINE(xp_jstate, jstate_names, XP_JS_COUNT)
XP_NAMES_DEFINE(xp_reason, reason_names, XP_R_COUNT)

bool xp_jstate_final(int state)
{
	return state == XP_JS_COMPLETED || state == XP_JS_FAILED || state == XP_JS_CANCELLED;
}

void xp_qjob_clear(struct xp_qjob *j)
{
	if (!j)
		return;
	free(j->name);
	free(j->queue);
	free(j->tenant);
	xp_job_free(j->spec);
	free(j->reason_text);
	free(j->nodes);
	free(j->engine_id);
	free(j->engine_gres);
	free(j->alloc.slots);
	memset(j, 0, sizeof *j);
}
