/* queue_data.c: the queues view's read of the store (queue_data.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jobrun.h"
#include "qstore.h"
#include "queue_data.h"
#include "whatif.h"
#include "xp.h"

void xp_qdata_clear(struct xp_qdata *d)
{
	xp_qset_clear(&d->qs);
	for (size_t i = 0; i < d->n_jobs; i++)
		xp_qjob_clear(&d->jobs[i]);
	free(d->jobs);
	free(d->used);
	free(d->used_at);
	free(d->pend);
	free(d->run);
	memset(d, 0, sizeof *d);
}

/* Room for the per-queue figures, every use not known. */
static void figures_alloc(struct xp_qdata *d)
{
	size_t nq = d->qs.n_queues ? d->qs.n_queues : 1, rows = 0;
	d->used_at = xp_calloc(nq, sizeof *d->used_at);
	for (size_t i = 0; i < d->qs.n_queues; i++) {
		d->used_at[i] = rows;
		rows += d->qs.queues[i].n_quotas;
	}
	d->used = xp_malloc((rows ? rows : 1) * sizeof *d->used);
	for (size_t i = 0; i < rows; i++)
		d->used[i] = -1;
	d->pend = xp_calloc(nq, sizeof *d->pend);
	d->run = xp_calloc(nq, sizeof *d->run);
}

/* The store's jobs at now as `job list` and `queue list` compute them (jobrun.h: the paper
 * workload advanced to now, one pass, all in memory): states, reasons, positions, and what
 * each queue uses. */
static void load_jobs(struct xp_qdata *d, struct xp_ui *ui, struct xp_store *s)
{
	struct xp_ctx *ctx = xp_ui_ctx(ui);
	struct xp_err err = {{0}};
	if (!ctx->cluster) {
		/* Before the first data the context would discover on the key loop: wait for it. */
		snprintf(d->jobs_note, sizeof d->jobs_note, " jobs: waiting for the cluster's data");
		return;
	}
	int64_t now;
	struct xp_jobrun r;
	if (xp_jobrun_now(&now, &err) < 0) {
		snprintf(d->jobs_note, sizeof d->jobs_note, " jobs: %.200s", err.msg);
		return;
	}
	d->now = now;
	if (xp_jobrun_load(&r, ctx, s, now, false, &err) < 0 || xp_jobrun_build(&r, 0, &err) < 0 ||
	    xp_jobrun_advance(&r, &err) < 0 || xp_jobrun_pass(&r, &err) < 0) {
		snprintf(d->jobs_note, sizeof d->jobs_note, " cannot read the jobs: %.200s", err.msg);
		xp_jobrun_free(&r);
		return;
	}
	if (xp_jobrun_engine(ctx)) {
		/* A live engine: its queues, read with its jobs by the run. */
		xp_qset_clear(&d->qs);
		xp_qset_copy(&d->qs, &r.qs);
		free(d->used);
		free(d->used_at);
		free(d->pend);
		free(d->run);
		figures_alloc(d);
		if (!d->qs.n_queues)
			snprintf(d->queues_note, sizeof d->queues_note, "Slurm shows no partition");
	}
	d->jobs = xp_calloc(r.n ? r.n : 1, sizeof *d->jobs);
	for (size_t i = 0; i < r.n; i++) {
		const struct xp_qjob *j = xp_jobrun_job(&r, i);
		xp_qjob_copy(&d->jobs[d->n_jobs++], j);
		/* Counted as `queue list` counts: held jobs wait too. */
		struct xp_queue *q = xp_qset_queue(&d->qs, j->queue);
		if (!q)
			continue;
		size_t qi = (size_t)(q - d->qs.queues);
		if (j->state == XP_JS_PENDING || j->state == XP_JS_HELD)
			d->pend[qi]++;
		else if (j->state == XP_JS_RUNNING || j->state == XP_JS_ADMITTED)
			d->run[qi]++;
	}
	/* The queue set the run loaded is the view's (both read in this call, by name). */
	for (size_t qi = 0; qi < d->qs.n_queues; qi++) {
		const struct xp_queue *q = &d->qs.queues[qi];
		const struct xp_queue *rq = xp_qset_queue(&r.qs, q->name);
		for (size_t k = 0; k < q->n_quotas; k++) {
			int64_t used = 0;
			for (size_t ci = 0; rq && r.s && ci < r.qs.n_classes; ci++)
				if (strcmp(r.qs.classes[ci].name, q->quotas[k].rclass) == 0)
					used = xp_sched_used(r.s, (size_t)(rq - r.qs.queues), ci, q->quotas[k].res);
			d->used[d->used_at[qi] + k] = used;
		}
	}
	d->have_jobs = true;
	xp_jobrun_free(&r);
}

void xp_qdata_load(struct xp_qdata *d, struct xp_ui *ui)
{
	xp_qdata_clear(d);
	d->now = (int64_t)time(NULL);
	struct xp_store *s = xp_ui_store(ui);
	struct xp_err err = {{0}};
	if (xp_jobrun_engine(xp_ui_ctx(ui))) {
		/* The live engine's queues and jobs, not the store's (xp_jobrun_load reads them). */
		snprintf(d->queues_note, sizeof d->queues_note, "reading %s's queues", xp_jobrun_engine(xp_ui_ctx(ui)));
		figures_alloc(d);
		load_jobs(d, ui, s);
		if (d->have_jobs && d->qs.n_queues)
			d->queues_note[0] = '\0';
		else if (!d->have_jobs)
			snprintf(d->queues_note, sizeof d->queues_note, "Slurm's partitions:%.200s", d->jobs_note);
		return;
	}
	if (!s) {
		snprintf(d->queues_note, sizeof d->queues_note, "no database: queues are kept in the store (--db)");
	} else if (xp_qstore_load(s, &d->qs, &err) < 0) {
		snprintf(d->queues_note, sizeof d->queues_note, "cannot read the queues: %.200s", err.msg);
		xp_qset_clear(&d->qs);
	} else if (!d->qs.n_queues) {
		snprintf(d->queues_note, sizeof d->queues_note,
			 "no queues yet: add one with `:queue add NAME --quota CLASS:devices=G/D/MAX`");
	}
	figures_alloc(d);
	if (s && d->qs.n_queues)
		load_jobs(d, ui, s);
}

int64_t xp_qdata_used(const struct xp_qdata *d, size_t qi, size_t k)
{
	if (!d->used || qi >= d->qs.n_queues || k >= d->qs.queues[qi].n_quotas)
		return -1;
	return d->used[d->used_at[qi] + k];
}

const char *xp_qdata_count_text(const struct xp_qdata *d, size_t qi, bool pending, char *buf, size_t len)
{
	if (!d->have_jobs || qi >= d->qs.n_queues)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%zu", pending ? d->pend[qi] : d->run[qi]);
	return buf;
}
