/* queue_data.c: the queues view's read of the store (queue_data.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qstore.h"
#include "queue_data.h"
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

void xp_qdata_load(struct xp_qdata *d, struct xp_ui *ui)
{
	xp_qdata_clear(d);
	d->now = (int64_t)time(NULL);
	struct xp_store *s = xp_ui_store(ui);
	struct xp_err err = {{0}};
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
	snprintf(d->jobs_note, sizeof d->jobs_note,
		 " jobs: not available in this build (the job store of `xpool job` is not built yet)");
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
