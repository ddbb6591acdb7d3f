/* queue_whatif.c: the queues view's what-if panel (queue_whatif.h). A run copies what it reads
 * (the cluster's nodes by reference, the queue set, the unfinished jobs) so that the key loop
 * may replace its data while the thread simulates; the thread hands its result back through
 * an atomic flag that the key loop's tick looks at, as the refresh thread hands clusters. */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "draw.h"
#include "format.h"
#include "engine_hold.h"
#include "jobrun.h"
#include "jstore.h"
#include "line_edit.h"
#include "place.h"
#include "queue_layout.h"
#include "queue_whatif.h"
#include "theme.h"
#include "whatif.h"
#include "xp.h"

/* How far ahead the panel simulates. */
#define WI_HORIZON (24 * 3600)

/* One run: its own copies of the inputs, and the result the thread leaves. */
struct run {
	pthread_t th;
	struct xp_cluster *c;
	struct xp_manifest *ms[XP_PLACE_MANIFESTS];
	size_t nm;
	struct xp_qset qs;
	struct xp_qjob *jobs;
	size_t n_jobs;
	struct xp_whatif_change ch;
	int64_t t0;
	bool hold;               /* XPOOL_WHATIF_HOLD: wait for the cancel before running (tests) */
	atomic_bool cancel;
	atomic_bool done;        /* set last by the thread: what follows is its to read */
	int rc;
	char err[512];
	struct xp_whatif_result res;
};

/* One queue's line of a finished run. */
struct wi_row {
	char *queue;
	int64_t b50, b95, s50, s95;
};

struct xp_qwhatif {
	const struct xp_qdata *d;
	struct run *run;         /* in flight, NULL when none */
	time_t started;
	char what[300];          /* the scenario in words */
	bool typing;             /* + : the N:KIND line */
	struct xp_ledit ed;
	char status[600];
	int status_role;
	struct wi_row *rows;
	size_t n_rows;
	bool utf8;
};

static void run_free(struct run *r)
{
	xp_cluster_free(r->c);
	xp_place_manifests_free(r->ms, r->nm);
	xp_qset_clear(&r->qs);
	for (size_t i = 0; i < r->n_jobs; i++)
		xp_qjob_clear(&r->jobs[i]);
	free(r->jobs);
	xp_whatif_change_clear(&r->ch);
	xp_whatif_result_clear(&r->res);
	free(r);
}

static void *run_thread(void *arg)
{
	struct run *r = arg;
	struct xp_err err = {{0}};
	/* Tests cancel a run that is surely in flight: it waits here for Esc. */
	while (r->hold && !atomic_load(&r->cancel)) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	r->nm = xp_place_manifests(r->ms);
	struct xp_whatif w = {
		.cluster = r->c,
		.ms = (const struct xp_manifest *const *)r->ms,
		.n_ms = r->nm,
		.qs = &r->qs,
		.jobs = r->jobs,
		.n_jobs = r->n_jobs,
		.changes = &r->ch,
		.n_changes = 1,
		.strategy = -1,
		/* As `xpool whatif`: MIG slices may go where an instance could be made. */
		.reconfigure = true,
		.t0 = r->t0,
		.horizon_s = WI_HORIZON,
		.seed = 1,
		.cancel = &r->cancel,
	};
	r->rc = xp_whatif_run(&w, &r->res, &err);
	if (r->rc < 0)
		snprintf(r->err, sizeof r->err, "%.400s", err.msg);
	atomic_store(&r->done, true);
	return NULL;
}

static void rows_clear(struct xp_qwhatif *w)
{
	for (size_t i = 0; i < w->n_rows; i++)
		free(w->rows[i].queue);
	free(w->rows);
	w->rows = NULL;
	w->n_rows = 0;
}

static void set_status(struct xp_qwhatif *w, int role, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_status(struct xp_qwhatif *w, int role, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->status, sizeof w->status, fmt, ap);
	va_end(ap);
	w->status_role = role;
}

struct xp_qwhatif *xp_qwhatif_new(const struct xp_qdata *d)
{
	struct xp_qwhatif *w = xp_calloc(1, sizeof *w);
	w->d = d;
	set_status(w, XP_ROLE_DIM, "x: drain the node under view 1's cursor   +: add N nodes of a kind   Esc: close");
	return w;
}

/* Waits for the run's thread and frees the run. */
static void run_join(struct xp_qwhatif *w)
{
	if (!w->run)
		return;
	pthread_join(w->run->th, NULL);
	run_free(w->run);
	w->run = NULL;
}

void xp_qwhatif_free(struct xp_qwhatif *w)
{
	if (!w)
		return;
	if (w->run)
		atomic_store(&w->run->cancel, true);
	run_join(w);
	rows_clear(w);
	free(w);
}

/* Starts a run of change ch (moved in) on the console's cluster and the view's data. */
static void start(struct xp_qwhatif *w, struct xp_ui *ui, struct xp_whatif_change *ch, const char *what)
{
	const struct xp_qdata *d = w->d;
	struct run *r = xp_calloc(1, sizeof *r);
	const struct xp_cluster *c = xp_ui_cluster(ui);
	r->c = xp_cluster_new();
	for (size_t i = 0; i < c->n_nodes; i++)
		xp_cluster_add(r->c, xp_node_ref(c->nodes[i]));
	xp_qset_copy(&r->qs, &d->qs);
	/* The workload as `xpool whatif --jobs-from-store` takes it: the database's unfinished
	 * jobs, less those whose devices are on nodes this cluster lacks (read only). */
	struct xp_store *s = xp_ui_store(ui);
	struct xp_qjob *all = NULL;
	size_t n_all = 0;
	bool *lost = NULL;
	struct xp_err err = {{0}};
	if (xp_jobrun_engine(xp_ui_ctx(ui))) {
		/* A live engine's jobs as the view read them (`whatif --jobs-from-store` with
		 * --slurm or --k8s): its running ones take their devices from this run's nodes
		 * as `whatif` does (xp_engine_hold), or else stay held by the nodes. */
		s = NULL;
		all = xp_calloc(d->n_jobs + 1, sizeof *all);
		lost = xp_calloc(d->n_jobs + 1, sizeof *lost);
		bool *held = xp_calloc(d->n_jobs + 1, sizeof *held);
		for (size_t i = 0; i < d->n_jobs; i++) {
			xp_qjob_copy(&all[n_all], &d->jobs[i]);
			/* The view's slots were taken on the view's copy of the nodes. */
			free(all[n_all].alloc.slots);
			all[n_all].alloc.slots = NULL;
			all[n_all].alloc.n = 0;
			n_all++;
		}
		xp_engine_hold(r->c, all, n_all, held);
		/* A job filed where no queue the engine shows is (`whatif` names it) is left out,
		 * rather than no answer for all the others. */
		for (size_t i = 0; i < n_all; i++)
			lost[i] = ((all[i].state == XP_JS_RUNNING || all[i].state == XP_JS_ADMITTED) && !held[i]) ||
				  !xp_qset_queue(&r->qs, all[i].queue ? all[i].queue : "");
		free(held);
	}
	if (s && xp_jstore_load(s, r->c, &all, &n_all, &lost, &err) < 0) {
		set_status(w, XP_ROLE_FAIL, "what-if: cannot read the jobs: %.300s", err.msg);
		run_free(r);
		xp_whatif_change_clear(ch);
		return;
	}
	r->jobs = xp_calloc(n_all + 1, sizeof *r->jobs);
	for (size_t i = 0; i < n_all; i++) {
		if (!xp_jstate_final(all[i].state) && !(lost && lost[i])) {
			r->jobs[r->n_jobs++] = all[i];
			memset(&all[i], 0, sizeof all[i]);
		}
		xp_qjob_clear(&all[i]);
	}
	free(all);
	free(lost);
	r->ch = *ch;
	memset(ch, 0, sizeof *ch);
	r->t0 = d->now;
	const char *hold = getenv("XPOOL_WHATIF_HOLD");
	r->hold = hold && strcmp(hold, "1") == 0;
	atomic_init(&r->cancel, false);
	atomic_init(&r->done, false);
	snprintf(w->what, sizeof w->what, "%s", what);
	if (pthread_create(&r->th, NULL, run_thread, r) != 0) {
		run_free(r);
		set_status(w, XP_ROLE_FAIL, "what-if: cannot start a thread");
		return;
	}
	w->run = r;
	w->started = time(NULL);
	rows_clear(w);
	set_status(w, XP_ROLE_WARN, "running: %s over the next %dh (%zu job%s); Esc cancels", what, WI_HORIZON / 3600,
		   r->n_jobs, r->n_jobs == 1 ? "" : "s");
}

static int drain(struct xp_qwhatif *w, struct xp_ui *ui)
{
	const char *node = xp_ui_selected_node(ui);
	if (!node) {
		set_status(w, XP_ROLE_FAIL, "no node under view 1's cursor: pick one there (1), then come back");
		return XP_REACT_REDRAW;
	}
	struct xp_whatif_change ch;
	struct xp_err err = {{0}};
	if (xp_whatif_change_parse(XP_WI_DRAIN, node, &ch, &err) < 0) {
		set_status(w, XP_ROLE_FAIL, "%s", err.msg);
		return XP_REACT_REDRAW;
	}
	char what[300];
	snprintf(what, sizeof what, "drain %s", node);
	xp_mask_controls(what);
	start(w, ui, &ch, what);
	return XP_REACT_REDRAW;
}

static int add(struct xp_qwhatif *w, struct xp_ui *ui, const char *text)
{
	struct xp_whatif_change ch;
	struct xp_err err = {{0}};
	if (xp_whatif_change_parse(XP_WI_ADD, text, &ch, &err) < 0) {
		set_status(w, XP_ROLE_FAIL, "%s", err.msg);
		return XP_REACT_REDRAW;
	}
	char what[300];
	snprintf(what, sizeof what, "add %s", text);
	xp_mask_controls(what);
	start(w, ui, &ch, what);
	return XP_REACT_REDRAW;
}

int xp_qwhatif_key(struct xp_qwhatif *w, struct xp_ui *ui, int key)
{
	if (w->typing) {
		int st = xp_ledit_key(&w->ed, key);
		if (st == XP_LEDIT_CANCEL)
			w->typing = false;
		else if (st == XP_LEDIT_DONE) {
			w->typing = false;
			return add(w, ui, w->ed.text);
		}
		return XP_REACT_REDRAW;
	}
	if (key == 27 && w->run) {
		atomic_store(&w->run->cancel, true);
		set_status(w, XP_ROLE_WARN, "cancelling: %s", w->what);
		return XP_REACT_REDRAW;
	}
	if ((key == 'x' || key == '+') && w->run) {
		set_status(w, XP_ROLE_WARN, "a run is in flight (%s); Esc cancels it", w->what);
		return XP_REACT_REDRAW;
	}
	if (key == 'x')
		return drain(w, ui);
	if (key == '+') {
		w->typing = true;
		xp_ledit_start(&w->ed, NULL);
		return XP_REACT_REDRAW;
	}
	return XP_REACT_UNHANDLED;
}

/* The report's queue called name, or NULL. */
static const struct xp_qsim_queue *report_queue(const struct xp_qsim_report *r, const char *name)
{
	for (size_t i = 0; i < r->n_queues; i++)
		if (strcmp(r->queues[i].name, name) == 0)
			return &r->queues[i];
	return NULL;
}

int xp_qwhatif_tick(struct xp_qwhatif *w, struct xp_ui *ui)
{
	(void)ui;
	if (!w->run || !atomic_load(&w->run->done))
		return XP_REACT_NONE;
	struct run *r = w->run;
	if (r->rc < 0 && strcmp(r->err, "cancelled") == 0)
		set_status(w, XP_ROLE_WARN, "cancelled: %s", w->what);
	else if (r->rc < 0)
		set_status(w, XP_ROLE_FAIL, "%s: %s", w->what, r->err);
	else {
		const struct xp_qsim_report *b = &r->res.baseline, *s = &r->res.scenario;
		for (size_t i = 0; i < b->n_queues; i++) {
			const struct xp_qsim_queue *bq = &b->queues[i], *sq = report_queue(s, bq->name);
			w->rows = xp_realloc(w->rows, (w->n_rows + 1) * sizeof *w->rows);
			w->rows[w->n_rows++] = (struct wi_row){xp_strdup(bq->name), bq->wait_p50, bq->wait_p95,
							       sq ? sq->wait_p50 : -1, sq ? sq->wait_p95 : -1};
		}
		set_status(w, XP_ROLE_OK, "%s: wait baseline %s scenario, %zu job%s over %dh%s", w->what,
			   w->utf8 ? "\u2192" : "->", r->n_jobs, r->n_jobs == 1 ? "" : "s", WI_HORIZON / 3600,
			   r->n_jobs ? "" : " (no unfinished job in the store: nothing waits)");
	}
	run_join(w);
	return XP_REACT_REDRAW;
}

int xp_qwhatif_height(const struct xp_qwhatif *w, int max)
{
	int want = 2 + (int)w->n_rows + (w->typing ? 1 : 0);
	return want < max ? want : max;
}

void xp_qwhatif_draw(struct xp_qwhatif *w, WINDOW *win, struct xp_rect r, const struct xp_glyphs *g)
{
	int maxx = r.x + r.w;
	w->utf8 = g->utf8;
	if (r.h <= 0)
		return;
	char title[400];
	if (w->run)
		snprintf(title, sizeof title, " What-if %s %s %s %lds ", g->hline, w->what, g->hline,
			 (long)(time(NULL) - w->started));
	else
		snprintf(title, sizeof title, " What-if ");
	int x = xp_draw_put(win, r.y, r.x, maxx, XP_ROLE_BORDER, g->hline, 0);
	x = xp_draw_put(win, r.y, x, maxx, XP_ROLE_TITLE, title, 0);
	while (x < maxx)
		x = xp_draw_put(win, r.y, x, maxx, XP_ROLE_BORDER, g->hline, 0);
	for (int i = 1; i < r.h; i++)
		xp_draw_fill(win, r.y + i, r.x, maxx, XP_ROLE_NORMAL);
	int y = r.y + 1;
	if (y < r.y + r.h && w->typing) {
		x = xp_draw_put(win, y, r.x + 1, maxx, XP_ROLE_PROMPT, "add N:KIND (e.g. 4:nvidia-h100): ", 0);
		int width = maxx - x - 1;
		const char *t = w->ed.text + xp_ledit_scroll(&w->ed, width);
		x = xp_draw_put(win, y, x, maxx, XP_ROLE_PROMPT, t, 0);
		xp_draw_put(win, y, x, maxx, XP_ROLE_SELECTED, " ", 0);
		y++;
	}
	if (y < r.y + r.h)
		xp_draw_put(win, y++, r.x + 1, maxx, w->status_role, w->status, 0);
	int name_w = 5;
	for (size_t i = 0; i < w->n_rows; i++)
		if (xp_draw_cols(w->rows[i].queue) > name_w)
			name_w = xp_draw_cols(w->rows[i].queue);
	for (size_t i = 0; i < w->n_rows && y < r.y + r.h; i++) {
		char line[512];
		const struct wi_row *q = &w->rows[i];
		xp_ql_whatif_line(q->queue, name_w, q->b50, q->b95, q->s50, q->s95, g->utf8, line, sizeof line);
		xp_draw_put(win, y++, r.x + 3, maxx, XP_ROLE_NORMAL, line, 0);
	}
}
