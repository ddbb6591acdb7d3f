/* view_queues.c: view 2, the queues. The queue tree (parent hierarchy, Enter folds) with a
 * quota bar per resource class (used inside the deserved share, borrowed above it, free,
 * headroom to the maximum), pending and running counts; below it the jobs of the queue under
 * the tree's cursor (state, wait, priority, position, reason), sorted (s, S) and filtered (/);
 * Tab moves between the two. Enter on a job opens `job show ID` in a pager; h/u/d hold,
 * release and cancel a job after a y/N question naming it, through the command table as the
 * `:` prompt runs them. `w` opens the what-if panel (queue_whatif.c, on a thread of its own).
 *
 * The view reads the store as the console opened it, for reading; the only writes are the
 * user's actions, which are commands. Pure layout and formatting: queue_layout.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "draw.h"
#include "format.h"
#include "list.h"
#include "list_draw.h"
#include "qstore.h"
#include "queue_data.h"
#include "queue_layout.h"
#include "queue_whatif.h"
#include "styled_doc.h"
#include "theme.h"
#include "view.h"
#include "xp.h"

enum { FOCUS_TREE, FOCUS_JOBS };
enum { ACT_NONE, ACT_HOLD, ACT_RELEASE, ACT_CANCEL };

static const struct xp_list_col job_cols[XP_QL_J_COUNT] = {
	[XP_QL_J_ID] = {.title = "ID", .align = XP_ALIGN_RIGHT},
	[XP_QL_J_STATE] = {.title = "STATE"},
	[XP_QL_J_WAIT] = {.title = "WAIT", .align = XP_ALIGN_RIGHT},
	[XP_QL_J_PRIO] = {.title = "PRIO", .align = XP_ALIGN_RIGHT},
	[XP_QL_J_POS] = {.title = "POS", .align = XP_ALIGN_RIGHT},
	[XP_QL_J_REASON] = {.title = "REASON", .fill = true},
};

struct qv {
	struct xp_ui *ui;
	bool stale;               /* the data may have changed: read it again before drawing */
	struct xp_qdata d;        /* queues, jobs, usage (queue_data.c) */
	/* the tree */
	char **folded;            /* names of folded queues: names survive a reload */
	size_t n_folded;
	struct xp_ql_tree tree;
	struct xp_list tl;
	char *cur_queue;          /* the queue under the tree's cursor */
	/* the jobs of that queue */
	struct xp_list jl;
	size_t *qjobs, n_qjobs;   /* indices into d.jobs */
	int64_t cur_job;          /* id under the job cursor, -1 none */
	int focus;
	/* Enter on a job: `job show ID` in a pager */
	bool pager;
	int64_t pager_job;
	struct xp_sdoc doc;
	struct xp_list pl;
	/* h/u/d: the question asked, y runs it */
	int act;
	int64_t act_job;
	char act_text[512];
	/* w: the what-if panel */
	struct xp_qwhatif *wi;
	char where[256];
	/* the last frame, for clicks: body rows of the tree's and the job list's first rows */
	int tree_y, tree_rows, jobs_y, jobs_rows;
};

/* ---- data ---- */

static bool is_folded(const struct qv *v, const char *name)
{
	for (size_t i = 0; i < v->n_folded; i++)
		if (strcmp(v->folded[i], name) == 0)
			return true;
	return false;
}

static void toggle_fold(struct qv *v, const char *name)
{
	for (size_t i = 0; i < v->n_folded; i++)
		if (strcmp(v->folded[i], name) == 0) {
			free(v->folded[i]);
			v->folded[i] = v->folded[--v->n_folded];
			return;
		}
	v->folded = xp_realloc(v->folded, (v->n_folded + 1) * sizeof *v->folded);
	v->folded[v->n_folded++] = xp_strdup(name);
}

static bool tree_stop(size_t pos, void *arg)
{
	const struct qv *v = arg;
	return v->tree.rows[pos].first;
}

static const struct xp_qjob *job_at(const struct qv *v, size_t id)
{
	return &v->d.jobs[v->qjobs[id]];
}

/* The fields of a job row for the `/` filter. */
static const struct xp_filter_field job_fields[] = {
	{"id", true, "the job's id", NULL},
	{"name", false, "the job's name", NULL},
	{"state", false, "pending, admitted, running, preempted, completed, failed, held, cancelled", NULL},
	{"queue", false, "its queue", NULL},
	{"tenant", false, "its tenant", NULL},
	{"reason", false, "why it waits: Resources, Priority, QuotaExceeded, ...", NULL},
	{"prio", true, "its priority", NULL},
	{NULL, false, NULL, NULL},
};

static bool job_get(void *row, const char *field, struct xp_fval *out)
{
	const struct xp_qjob *j = row;
	const char *s = NULL;
	if (!strcmp(field, "id") || !strcmp(field, "prio")) {
		*out = (struct xp_fval){XP_FV_NUM, field[0] == 'i' ? (double)j->id : j->priority, NULL};
		return true;
	}
	if (!strcmp(field, "name"))
		s = j->name;
	else if (!strcmp(field, "state"))
		s = xp_jstate_name(j->state);
	else if (!strcmp(field, "queue"))
		s = j->queue;
	else if (!strcmp(field, "tenant"))
		s = j->tenant;
	else if (!strcmp(field, "reason"))
		s = j->reason != XP_R_NONE ? xp_reason_name(j->reason) : NULL;
	*out = (struct xp_fval){s ? XP_FV_STR : XP_FV_NONE, 0, s};
	return s != NULL;
}

static bool job_matches(size_t id, void *arg)
{
	const struct qv *v = arg;
	const struct xp_qjob *j = job_at(v, id);
	/* Words look in the id, name, state, tenant and the reason as the view words it. */
	char text[1024], reason[512];
	xp_ql_reason(j, reason, sizeof reason);
	snprintf(text, sizeof text, "%lld\n%s\n%s\n%s\n%s", (long long)j->id, j->name ? j->name : "",
		 xp_jstate_name(j->state), j->tenant ? j->tenant : "", reason);
	return xp_filter_eval(xp_ui_filter_expr(v->ui, job_fields), job_get, (void *)j, text);
}

static int job_cmp(size_t a, size_t b, int col, void *arg)
{
	const struct qv *v = arg;
	return xp_ql_job_cmp(job_at(v, a), job_at(v, b), col, v->d.now);
}

static const char *selected_queue_name(const struct qv *v)
{
	long pos = (long)v->tl.cursor;
	if (!v->tree.n || pos < 0 || (size_t)pos >= v->tree.n)
		return NULL;
	return v->d.qs.queues[v->tree.rows[pos].queue].name;
}

/* The job list of the queue under the tree's cursor, keeping the job cursor on the same job. */
static void rebuild_jobs(struct qv *v)
{
	const char *q = selected_queue_name(v);
	v->n_qjobs = 0;
	free(v->qjobs);
	v->qjobs = xp_malloc((v->d.n_jobs ? v->d.n_jobs : 1) * sizeof *v->qjobs);
	for (size_t i = 0; q && i < v->d.n_jobs; i++)
		if (v->d.jobs[i].queue && strcmp(v->d.jobs[i].queue, q) == 0)
			v->qjobs[v->n_qjobs++] = i;
	const char *f = xp_ui_filter(v->ui);
	xp_list_filter(&v->jl, v->n_qjobs, *f ? job_matches : NULL, v, job_cmp, v);
	long at = -1;
	for (size_t i = 0; v->cur_job >= 0 && i < v->jl.n; i++)
		if (job_at(v, v->jl.rows[i])->id == v->cur_job)
			at = (long)i;
	if (at >= 0)
		xp_list_move_to(&v->jl, at, 1);
	long cur = xp_list_current(&v->jl);
	v->cur_job = cur >= 0 ? job_at(v, (size_t)cur)->id : -1;
}

static void rebuild_tree(struct qv *v)
{
	bool *folded = xp_calloc(v->d.qs.n_queues ? v->d.qs.n_queues : 1, sizeof *folded);
	for (size_t i = 0; i < v->d.qs.n_queues; i++)
		folded[i] = is_folded(v, v->d.qs.queues[i].name);
	xp_ql_tree_build(&v->d.qs, folded, &v->tree);
	free(folded);
	v->tl.stop = tree_stop;
	v->tl.stop_arg = v;
	xp_list_set_count(&v->tl, v->tree.n, v->tree.n);
	/* The same queue as before, else the first row. */
	long at = 0;
	for (size_t i = 0; v->cur_queue && i < v->d.qs.n_queues; i++)
		if (strcmp(v->d.qs.queues[i].name, v->cur_queue) == 0) {
			long r = xp_ql_tree_find(&v->tree, i);
			at = r >= 0 ? r : 0;
		}
	if (v->tree.n)
		xp_list_move_to(&v->tl, at, 1);
	const char *q = selected_queue_name(v);
	free(v->cur_queue);
	v->cur_queue = q ? xp_strdup(q) : NULL;
}

static void reload(struct qv *v)
{
	xp_qdata_load(&v->d, v->ui);
	rebuild_tree(v);
	rebuild_jobs(v);
	v->stale = false;
}

static void sync(struct qv *v)
{
	if (v->stale)
		reload(v);
}

/* ---- the tree ---- */

static const char *res_short(int res)
{
	static const char *const n[] = {"dev", "ecu", "cpu", "mem"};
	return res >= 0 && res < XP_RES_COUNT ? n[res] : "?";
}

static void row_label(const struct qv *v, const struct xp_ql_row *r, char *buf, size_t len)
{
	const struct xp_queue *q = &v->d.qs.queues[r->queue];
	if (r->quota == SIZE_MAX)
		snprintf(buf, len, "no quota");
	else
		snprintf(buf, len, "%s %s", q->quotas[r->quota].rclass, res_short(q->quotas[r->quota].res));
}

static void row_amounts(const struct qv *v, const struct xp_ql_row *r, char *buf, size_t len)
{
	const struct xp_queue *q = &v->d.qs.queues[r->queue];
	if (r->quota == SIZE_MAX) {
		snprintf(buf, len, "-");
		return;
	}
	const struct xp_quota *u = &q->quotas[r->quota];
	xp_ql_amounts(xp_qdata_used(&v->d, r->queue, r->quota), u->deserved, u->max, buf, len);
}

struct tree_ctx {
	struct qv *v;
	struct xp_ql_cols c;
	int x0, maxx;
	bool utf8;
};

static int draw_text(WINDOW *w, int y, int x, int width, int maxx, int role, int align, const char *s)
{
	if (width <= 0)
		return x;
	return xp_list_draw_cell(w, y, x, width, maxx, role, align, s);
}

static void draw_bar(WINDOW *w, int y, int x, int maxx, const struct xp_ql_bar *b, bool utf8, bool sel)
{
	int n[4] = {b->used, b->borrowed, b->free, b->headroom};
	for (int s = 0; s < 4; s++)
		for (int i = 0; i < n[s] && x < maxx; i++)
			x = xp_draw_put(w, y, x, maxx, sel && s >= 2 ? XP_ROLE_SELECTED : xp_ql_bar_role(s),
					xp_ql_bar_glyph(s, utf8), 0);
}

static void draw_tree_row(void *arg, WINDOW *w, int y, size_t pos, bool sel)
{
	const struct tree_ctx *c = arg;
	struct qv *v = c->v;
	const struct xp_ql_row *r = &v->tree.rows[pos];
	const struct xp_queue *q = &v->d.qs.queues[r->queue];
	/* The cursor shows strongly where the keys go; in the job list's turn, only as a title. */
	int base = sel ? (v->focus == FOCUS_TREE ? XP_ROLE_SELECTED : XP_ROLE_TITLE) : XP_ROLE_NORMAL;
	xp_draw_fill(w, y, c->x0 - 1, c->maxx, base);
	char buf[512], pre[128];
	const int *cx = c->c.x, *cw = c->c.w;
	if (r->first) {
		xp_ql_name_cell(r, q->name, cw[XP_QL_C_NAME], c->utf8, xp_draw_ellipsis(), buf, sizeof buf);
		draw_text(w, y, c->x0 + cx[XP_QL_C_NAME], cw[XP_QL_C_NAME], c->maxx, base, XP_ALIGN_LEFT, buf);
		snprintf(buf, sizeof buf, "w%g", q->weight);
		draw_text(w, y, c->x0 + cx[XP_QL_C_WEIGHT], cw[XP_QL_C_WEIGHT], c->maxx, sel ? base : XP_ROLE_DIM,
			  XP_ALIGN_LEFT, buf);
		snprintf(buf, sizeof buf, "%s", xp_qdata_count_text(&v->d, r->queue, true, pre, sizeof pre));
		draw_text(w, y, c->x0 + cx[XP_QL_C_PEND], cw[XP_QL_C_PEND], c->maxx, base, XP_ALIGN_RIGHT, buf);
		snprintf(buf, sizeof buf, "%s", xp_qdata_count_text(&v->d, r->queue, false, pre, sizeof pre));
		draw_text(w, y, c->x0 + cx[XP_QL_C_RUN], cw[XP_QL_C_RUN], c->maxx, base, XP_ALIGN_RIGHT, buf);
	}
	row_label(v, r, buf, sizeof buf);
	draw_text(w, y, c->x0 + cx[XP_QL_C_LABEL], cw[XP_QL_C_LABEL], c->maxx,
		  r->quota == SIZE_MAX && !sel ? XP_ROLE_DIM : base, XP_ALIGN_LEFT, buf);
	if (r->quota != SIZE_MAX) {
		const struct xp_quota *u = &q->quotas[r->quota];
		if (cw[XP_QL_C_BAR]) {
			struct xp_ql_bar b;
			xp_ql_bar_fit(xp_qdata_used(&v->d, r->queue, r->quota), u->deserved, u->max, cw[XP_QL_C_BAR], &b);
			draw_bar(w, y, c->x0 + cx[XP_QL_C_BAR], c->maxx, &b, c->utf8, sel);
		}
		row_amounts(v, r, buf, sizeof buf);
		draw_text(w, y, c->x0 + cx[XP_QL_C_AMOUNTS], cw[XP_QL_C_AMOUNTS], c->maxx, base, XP_ALIGN_LEFT, buf);
	}
}

/* The tree's headings: the bar is the quota (own use, borrowed, free, headroom to the max);
 * the numbers are used/deserved/max with the borrowed part as "+N". */
static const char *const tree_titles[XP_QL_C_COUNT] = {"QUEUE", "W", "CLASS", "QUOTA", "USED/DES/MAX", "PEND",
							"RUN"};

static void fit_tree(struct qv *v, int avail, bool utf8, struct xp_ql_cols *out)
{
	/* At least the headings (tree_titles). */
	int want[XP_QL_C_COUNT] = {[XP_QL_C_NAME] = 5, [XP_QL_C_WEIGHT] = 2, [XP_QL_C_LABEL] = 5,
				   [XP_QL_C_AMOUNTS] = 12};
	char buf[512], pre[128];
	for (size_t i = 0; i < v->tree.n; i++) {
		const struct xp_ql_row *r = &v->tree.rows[i];
		const struct xp_queue *q = &v->d.qs.queues[r->queue];
		int n = xp_draw_cols(xp_ql_prefix(r, utf8, pre, sizeof pre)) + xp_draw_cols(q->name);
		if (n > want[XP_QL_C_NAME])
			want[XP_QL_C_NAME] = n;
		snprintf(buf, sizeof buf, "w%g", q->weight);
		if (xp_draw_cols(buf) > want[XP_QL_C_WEIGHT])
			want[XP_QL_C_WEIGHT] = xp_draw_cols(buf);
		row_label(v, r, buf, sizeof buf);
		if (xp_draw_cols(buf) > want[XP_QL_C_LABEL])
			want[XP_QL_C_LABEL] = xp_draw_cols(buf);
		row_amounts(v, r, buf, sizeof buf);
		if (xp_draw_cols(buf) > want[XP_QL_C_AMOUNTS])
			want[XP_QL_C_AMOUNTS] = xp_draw_cols(buf);
	}
	xp_ql_cols_fit(want, avail, out);
}

static void draw_tree_header(WINDOW *w, int y, const struct tree_ctx *c)
{
	const int *cx = c->c.x, *cw = c->c.w;
	xp_draw_fill(w, y, c->x0 - 1, c->maxx, XP_ROLE_TITLE);
	for (int i = 0; i < XP_QL_C_COUNT; i++) {
		const char *t = tree_titles[i];
		draw_text(w, y, c->x0 + cx[i], cw[i], c->maxx, XP_ROLE_TITLE,
			  i >= XP_QL_C_PEND ? XP_ALIGN_RIGHT : XP_ALIGN_LEFT, t);
	}
}

/* ---- the jobs ---- */

struct job_ctx {
	struct qv *v;
	struct xp_list_fit fit;
	int x0, maxx;
};

static void job_cells(const struct qv *v, const struct xp_qjob *j, char cells[XP_QL_J_COUNT][512])
{
	/* A live engine's job says which engine it came from, by the engine's own id ("slurm 7_2"
	 * for an array's task, as squeue and `job list` say). */
	if (j->engine && j->engine_id)
		snprintf(cells[XP_QL_J_ID], 512, "%s %.64s", j->engine, j->engine_id);
	else
		snprintf(cells[XP_QL_J_ID], 512, "%s%s%lld", j->engine ? j->engine : "", j->engine ? " " : "", (long long)j->id);
	snprintf(cells[XP_QL_J_STATE], 512, "%s", xp_jstate_name(j->state) ? xp_jstate_name(j->state) : "?");
	xp_fmt_span(cells[XP_QL_J_WAIT], 512, xp_ql_wait(j, v->d.now));
	snprintf(cells[XP_QL_J_PRIO], 512, "%d", j->priority);
	xp_ql_position(j, cells[XP_QL_J_POS], 512);
	xp_ql_reason(j, cells[XP_QL_J_REASON], 512);
}

static int state_role(int state)
{
	switch (state) {
	case XP_JS_RUNNING:
	case XP_JS_ADMITTED:
	case XP_JS_COMPLETED:
		return XP_ROLE_OK;
	case XP_JS_PENDING:
	case XP_JS_HELD:
	case XP_JS_PREEMPTED:
		return XP_ROLE_WARN;
	case XP_JS_FAILED:
		return XP_ROLE_FAIL;
	default:
		return XP_ROLE_DIM;
	}
}

static void draw_job_row(void *arg, WINDOW *w, int y, size_t pos, bool sel)
{
	const struct job_ctx *c = arg;
	const struct qv *v = c->v;
	const struct xp_qjob *j = job_at(v, v->jl.rows[pos]);
	bool cur = sel && v->focus == FOCUS_JOBS;
	int base = cur ? XP_ROLE_SELECTED : XP_ROLE_NORMAL;
	char cells[XP_QL_J_COUNT][512];
	job_cells(v, j, cells);
	xp_draw_fill(w, y, c->x0 - 1, c->maxx, base);
	for (size_t k = 0; k < c->fit.n; k++)
		xp_list_draw_cell(w, y, c->x0 + c->fit.x[k], job_cols[k].fill ? c->maxx : c->fit.w[k], c->maxx,
				  k == XP_QL_J_STATE && !cur ? state_role(j->state) : base, job_cols[k].align, cells[k]);
}

static struct xp_list_fit fit_jobs(const struct qv *v, int avail)
{
	int want[XP_QL_J_COUNT] = {0};
	char cells[XP_QL_J_COUNT][512];
	for (size_t i = 0; i < v->jl.n; i++) {
		job_cells(v, job_at(v, v->jl.rows[i]), cells);
		for (int k = 0; k < XP_QL_J_COUNT; k++)
			if (xp_draw_cols(cells[k]) > want[k])
				want[k] = xp_draw_cols(cells[k]);
	}
	struct xp_list_fit fit;
	xp_list_fit(job_cols, want, XP_QL_J_COUNT, avail, 2, &fit);
	return fit;
}

/* A rule across the body with a title in it: "─ Jobs (research) ─ sort: wait ─────". */
static void draw_rule(WINDOW *w, int y, int x, int maxx, const struct xp_glyphs *g, const char *title)
{
	int cx = xp_draw_put(w, y, x, maxx, XP_ROLE_BORDER, g->hline, 0);
	cx = xp_draw_put(w, y, cx, maxx, XP_ROLE_TITLE, " ", 0);
	cx = xp_draw_put(w, y, cx, maxx, XP_ROLE_TITLE, title, 0);
	cx = xp_draw_put(w, y, cx, maxx, XP_ROLE_TITLE, " ", 0);
	while (cx < maxx)
		cx = xp_draw_put(w, y, cx, maxx, XP_ROLE_BORDER, g->hline, 0);
}

static void jobs_title(const struct qv *v, const struct xp_glyphs *g, char *buf, size_t len)
{
	size_t at = (size_t)snprintf(buf, len, "Jobs (%s)", v->cur_queue ? v->cur_queue : "-");
	if (at < len && v->jl.sort_col >= 0)
		at += (size_t)snprintf(buf + at, len - at, " %s sort: %s %s", g->hline,
				       job_cols[v->jl.sort_col].title, v->jl.sort_desc ? "desc" : "asc");
	const char *f = xp_ui_filter(v->ui);
	if (at < len && *f)
		snprintf(buf + at, len - at, " %s filter: /%s", g->hline, f);
}

static void draw_jobs(struct qv *v, WINDOW *w, struct xp_rect r, const struct xp_glyphs *g)
{
	int maxx = r.x + r.w;
	char title[512];
	if (r.h <= 0)
		return;
	jobs_title(v, g, title, sizeof title);
	draw_rule(w, r.y, r.x, maxx, g, title);
	if (r.h <= 1)
		return;
	if (!v->d.have_jobs) {
		xp_list_draw_empty(w, (struct xp_rect){r.y + 1, r.x, r.h - 1, r.w}, v->d.jobs_note);
		return;
	}
	struct job_ctx c = {v, fit_jobs(v, r.w - 1), r.x + 1, maxx};
	xp_list_draw_header(w, r.y + 1, r.x, c.x0, maxx, job_cols, &c.fit, &v->jl, g);
	struct xp_rect body = {r.y + 2, r.x, r.h - 2, r.w};
	xp_list_frame(&v->jl, body.h);
	if (body.h <= 0)
		return;
	if (!v->jl.n) {
		char msg[512];
		const char *f = xp_ui_filter(v->ui);
		if (v->n_qjobs && *f)
			snprintf(msg, sizeof msg, " no job of %s matches \"%s\" (Esc clears the filter)", v->cur_queue, f);
		else
			snprintf(msg, sizeof msg, " no jobs in %s", v->cur_queue ? v->cur_queue : "this queue");
		xp_list_draw_empty(w, body, msg);
		return;
	}
	xp_list_draw_rows(&v->jl, w, body, draw_job_row, &c);
}

/* ---- the pager ---- */

static void pager_close(struct qv *v)
{
	v->pager = false;
	xp_sdoc_free(&v->doc);
}

/* Enter on a job: what `job show ID` prints, as the prompt would show it. */
static void pager_open(struct qv *v, struct xp_ui *ui, int64_t id)
{
	char line[64], *out, *errs;
	snprintf(line, sizeof line, "job show %lld", (long long)id);
	int rc = xp_ui_command(ui, line, &out, &errs);
	xp_sdoc_free(&v->doc);
	struct xp_sdoc_line *l = xp_sdoc_line(&v->doc);
	xp_sdoc_add(l, XP_ROLE_TITLE, "job %lld", (long long)id);
	xp_sdoc_add(l, XP_ROLE_DIM, "  (`xpool job show %lld`; Esc goes back)", (long long)id);
	xp_sdoc_line(&v->doc);
	const char *texts[2] = {out, errs};
	for (int t = 0; t < 2; t++)
		for (char *p = (char *)texts[t]; p && *p;) {
			size_t n = strcspn(p, "\n");
			char *s = xp_strndup(p, n);
			xp_mask_controls(s);
			/* A line that names a section ("spec:", "reason history:") stands out. */
			bool head = t == 0 && n && s[n - 1] == ':' && s[0] != ' ';
			xp_sdoc_add(xp_sdoc_line(&v->doc), t ? XP_ROLE_FAIL : head ? XP_ROLE_TITLE : XP_ROLE_NORMAL, "%s", s);
			free(s);
			p += n + (p[n] == '\n');
		}
	if (rc != XP_EXIT_OK && !*errs)
		xp_sdoc_add(xp_sdoc_line(&v->doc), XP_ROLE_FAIL, "exit %d", rc);
	free(out);
	free(errs);
	v->pl = (struct xp_list)XP_LIST_INIT;
	v->pl.pager = true;
	v->pager = true;
	v->pager_job = id;
}

static void draw_pager(struct qv *v, WINDOW *w, struct xp_rect r)
{
	struct xp_list *l = &v->pl;
	xp_list_set_count(l, v->doc.n, v->doc.n);
	l->width = xp_sdoc_width(&v->doc);
	l->cols = r.w - 1;
	xp_list_frame(l, r.h);
	for (int i = 0; i < r.h; i++) {
		size_t li = l->top + (size_t)i;
		xp_draw_fill(w, r.y + i, r.x, r.x + 1, XP_ROLE_NORMAL);
		xp_sdoc_draw_from(w, r.y + i, r.x + 1, r.x + r.w, li < v->doc.n ? &v->doc.lines[li] : NULL, l->xoff);
	}
}

/* ---- drawing ---- */

static void draw(void *st, struct xp_ui *ui, WINDOW *w, struct xp_rect r)
{
	struct qv *v = st;
	v->ui = ui;
	sync(v);
	if (r.h <= 0 || r.w <= 0)
		return;
	const struct xp_glyphs *g = xp_ui_glyphs(ui);
	int maxx = r.x + r.w;
	/* The question of h/u/d takes the last row while it waits for y or n. */
	if (v->act) {
		xp_draw_fill(w, r.y + r.h - 1, r.x, maxx, XP_ROLE_WARN);
		xp_draw_put(w, r.y + r.h - 1, r.x + 1, maxx, XP_ROLE_WARN, v->act_text, 0);
		r.h--;
		if (r.h <= 0)
			return;
	}
	if (v->pager) {
		draw_pager(v, w, r);
		return;
	}
	if (!v->d.qs.n_queues) {
		for (int i = 0; i < r.h; i++)
			xp_draw_fill(w, r.y + i, r.x, maxx, XP_ROLE_NORMAL);
		xp_draw_put(w, r.y, r.x + 1, maxx, XP_ROLE_DIM, v->d.queues_note, 0);
		return;
	}
	/* The what-if panel at the bottom, the tree at the top, the jobs between. */
	int wi_h = v->wi ? xp_qwhatif_height(v->wi, r.h / 3) : 0;
	int rest = r.h - wi_h;
	int tree_h = (int)v->tree.n + 1;
	int tree_max = rest * 2 / 5 > 3 ? rest * 2 / 5 : 3;
	if (tree_h > tree_max)
		tree_h = tree_max;
	if (tree_h > rest)
		tree_h = rest;
	struct tree_ctx tc = {v, {{0}, {0}}, r.x + 1, maxx, g->utf8};
	fit_tree(v, r.w - 1, g->utf8, &tc.c);
	draw_tree_header(w, r.y, &tc);
	xp_list_frame(&v->tl, tree_h - 1);
	v->tree_y = 1;
	v->tree_rows = tree_h - 1;
	v->jobs_y = tree_h + 2;
	v->jobs_rows = v->d.have_jobs ? rest - tree_h - 2 : 0;
	if (tree_h > 1)
		xp_list_draw_rows(&v->tl, w, (struct xp_rect){r.y + 1, r.x, tree_h - 1, r.w}, draw_tree_row, &tc);
	draw_jobs(v, w, (struct xp_rect){r.y + tree_h, r.x, rest - tree_h, r.w}, g);
	if (wi_h)
		xp_qwhatif_draw(v->wi, w, (struct xp_rect){r.y + rest, r.x, wi_h, r.w}, g);
}

/* ---- keys ---- */

/* The tree's cursor moved (force: or the tree changed under it): the job list follows. */
static void tree_moved(struct qv *v, bool force)
{
	const char *q = selected_queue_name(v);
	if (!force && q && v->cur_queue && strcmp(q, v->cur_queue) == 0)
		return;
	free(v->cur_queue);
	v->cur_queue = q ? xp_strdup(q) : NULL;
	v->jl.cursor = v->jl.top = 0;
	v->cur_job = -1;
	rebuild_jobs(v);
}

static void jobs_moved(struct qv *v)
{
	long cur = xp_list_current(&v->jl);
	v->cur_job = cur >= 0 ? job_at(v, (size_t)cur)->id : -1;
}

static const struct xp_qjob *current_job(const struct qv *v)
{
	long cur = xp_list_current(&v->jl);
	return cur >= 0 ? job_at(v, (size_t)cur) : NULL;
}

/* h/u/d: asks before it acts, naming the job. */
static int ask(struct qv *v, struct xp_ui *ui, int act)
{
	const struct xp_qjob *j = current_job(v);
	if (!j) {
		xp_ui_message(ui, XP_ROLE_DIM, "no job selected");
		return XP_REACT_REDRAW;
	}
	static const char *const verbs[] = {"", "Hold", "Release", "Cancel"};
	v->act = act;
	v->act_job = j->id;
	snprintf(v->act_text, sizeof v->act_text, "%s job %lld%s%s%s (%s, %s)? y/N", verbs[act], (long long)j->id,
		 j->name ? " \"" : "", j->name ? j->name : "", j->name ? "\"" : "", j->queue,
		 xp_jstate_name(j->state) ? xp_jstate_name(j->state) : "?");
	xp_mask_controls(v->act_text);
	return XP_REACT_REDRAW;
}

/* y: runs `job hold|release|cancel ID` through the command table; the view reads again. */
static void act(struct qv *v, struct xp_ui *ui)
{
	static const char *const words[] = {"", "hold", "release", "cancel"};
	char line[96], *out, *errs;
	snprintf(line, sizeof line, "job %s %lld", words[v->act], (long long)v->act_job);
	v->act = ACT_NONE;
	int rc = xp_ui_command(ui, line, &out, &errs);
	const char *e = strncmp(errs, "xpool: ", 7) == 0 ? errs + 7 : errs;
	if (rc != XP_EXIT_OK)
		xp_ui_message(ui, XP_ROLE_FAIL, "%s: %.*s (exit %d)", line, (int)strcspn(e, "\n"), *e ? e : "failed", rc);
	else if (*out)
		xp_ui_message(ui, XP_ROLE_OK, "%.*s", (int)strcspn(out, "\n"), out);
	else
		xp_ui_message(ui, XP_ROLE_OK, "%s: done", line);
	free(out);
	free(errs);
	v->stale = true;
}

static int pre_key(void *st, struct xp_ui *ui, int key)
{
	struct qv *v = st;
	v->ui = ui;
	sync(v);
	if (v->act) {
		if (key == 'y' || key == 'Y')
			act(v, ui);
		else {
			v->act = ACT_NONE;
			xp_ui_message(ui, XP_ROLE_DIM, "not done");
		}
		return XP_REACT_REDRAW;
	}
	if (v->wi && !v->pager) {
		int r = xp_qwhatif_key(v->wi, ui, key);
		if (!(r & XP_REACT_UNHANDLED))
			return r;
	}
	if (key == '\t' && !v->pager) {
		v->focus = v->focus == FOCUS_TREE ? FOCUS_JOBS : FOCUS_TREE;
		return XP_REACT_REDRAW;
	}
	return XP_REACT_UNHANDLED;
}

static int tree_key(struct qv *v, struct xp_ui *ui, int key)
{
	if (xp_list_key(&v->tl, key)) {
		tree_moved(v, false);
		return XP_REACT_REDRAW;
	}
	if (!v->tree.n)
		return XP_REACT_UNHANDLED;
	const struct xp_ql_row *r = &v->tree.rows[v->tl.cursor];
	const char *name = v->d.qs.queues[r->queue].name;
	switch (key) {
	case '\n':
	case '\r':
	case KEY_ENTER:
	case ' ':
		if (!r->kids)
			return XP_REACT_REDRAW;
		toggle_fold(v, name);
		break;
	case KEY_RIGHT:
	case 'l':
		if (!r->kids || r->open)
			return XP_REACT_REDRAW;
		toggle_fold(v, name);
		break;
	case KEY_LEFT:
	case 'h':
		if (r->kids && r->open)
			toggle_fold(v, name);
		else if (v->d.qs.queues[r->queue].parent) {
			/* A leaf or a folded queue: up to its parent, as in a file tree. */
			free(v->cur_queue);
			v->cur_queue = xp_strdup(v->d.qs.queues[r->queue].parent);
		}
		break;
	default:
		return XP_REACT_UNHANDLED;
	}
	(void)ui;
	rebuild_tree(v);
	tree_moved(v, true);
	return XP_REACT_REDRAW;
}

static int jobs_key(struct qv *v, struct xp_ui *ui, int key)
{
	if (xp_list_sort_key(&v->jl, key, XP_QL_J_COUNT)) {
		rebuild_jobs(v);
		return XP_REACT_REDRAW;
	}
	if (xp_list_key(&v->jl, key)) {
		jobs_moved(v);
		return XP_REACT_REDRAW;
	}
	const struct xp_qjob *j = current_job(v);
	switch (key) {
	case '\n':
	case '\r':
	case KEY_ENTER:
		if (j)
			pager_open(v, ui, j->id);
		return XP_REACT_REDRAW;
	case 'h':
		return ask(v, ui, ACT_HOLD);
	case 'u':
		return ask(v, ui, ACT_RELEASE);
	case 'd':
		return ask(v, ui, ACT_CANCEL);
	default:
		return XP_REACT_UNHANDLED;
	}
}

static int on_key(void *st, struct xp_ui *ui, int key)
{
	struct qv *v = st;
	v->ui = ui;
	sync(v);
	if (v->pager) {
		if (key == 27 || key == 'q') {
			pager_close(v);
			return XP_REACT_REDRAW;
		}
		return xp_list_key(&v->pl, key) ? XP_REACT_REDRAW : XP_REACT_UNHANDLED;
	}
	if (key == 27 && v->wi) {
		xp_qwhatif_free(v->wi);
		v->wi = NULL;
		return XP_REACT_REDRAW;
	}
	if (key == 'w') {
		if (!v->wi)
			v->wi = xp_qwhatif_new(&v->d);
		return XP_REACT_REDRAW;
	}
	return v->focus == FOCUS_TREE ? tree_key(v, ui, key) : jobs_key(v, ui, key);
}

static int on_wheel(void *st, struct xp_ui *ui, int dir)
{
	struct qv *v = st;
	v->ui = ui;
	sync(v);
	if (v->pager)
		xp_list_wheel(&v->pl, dir);
	else if (v->focus == FOCUS_TREE) {
		xp_list_wheel(&v->tl, dir);
		tree_moved(v, false);
	} else {
		xp_list_wheel(&v->jl, dir);
		jobs_moved(v);
	}
	return XP_REACT_REDRAW;
}

/* A click selects a queue or a job (and gives its list the keys); a click on the selected
 * one opens it, as Enter. */
static int on_click(void *st, struct xp_ui *ui, int y, int x)
{
	struct qv *v = st;
	(void)x;
	v->ui = ui;
	sync(v);
	if (v->pager || v->act)
		return XP_REACT_NONE;
	if (y >= v->tree_y && y < v->tree_y + v->tree_rows) {
		v->focus = FOCUS_TREE;
		if (xp_list_click(&v->tl, y - v->tree_y) == XP_LIST_ACTIVATE)
			return tree_key(v, ui, '\n');
		tree_moved(v, false);
		return XP_REACT_REDRAW;
	}
	if (y >= v->jobs_y && y < v->jobs_y + v->jobs_rows) {
		v->focus = FOCUS_JOBS;
		if (xp_list_click(&v->jl, y - v->jobs_y) == XP_LIST_ACTIVATE)
			return jobs_key(v, ui, '\n');
		jobs_moved(v);
		return XP_REACT_REDRAW;
	}
	return XP_REACT_NONE;
}

static int tick(void *st, struct xp_ui *ui)
{
	struct qv *v = st;
	return v->wi ? xp_qwhatif_tick(v->wi, ui) : XP_REACT_NONE;
}

static void on_data(void *st, struct xp_ui *ui)
{
	struct qv *v = st;
	v->ui = ui;
	/* Read again when drawn: the store changes rarely, the refresh comes often. */
	v->stale = true;
}

static bool nested(void *st)
{
	const struct qv *v = st;
	/* The job list is not nested: Esc there clears the filter, as in every list. */
	return v->pager || v->wi;
}

static const char *where(void *st)
{
	struct qv *v = st;
	if (!v->cur_queue)
		return NULL;
	const char *arrow = xp_ui_glyphs(v->ui)->arrow;
	if (v->pager)
		snprintf(v->where, sizeof v->where, "Queues %s %s %s job %lld", arrow, v->cur_queue, arrow,
			 (long long)v->pager_job);
	else if (v->focus == FOCUS_JOBS)
		snprintf(v->where, sizeof v->where, "Queues %s %s %s jobs", arrow, v->cur_queue, arrow);
	else
		snprintf(v->where, sizeof v->where, "Queues %s %s", arrow, v->cur_queue);
	return v->where;
}

static const char *count(void *st, char *buf, size_t len)
{
	const struct qv *v = st;
	if (v->pager)
		return NULL;
	if (v->focus == FOCUS_JOBS)
		return xp_list_count(&v->jl, buf, len);
	/* The tree counts queues, not rows (a queue with two quotas has two). */
	size_t pos = 0, n = 0;
	for (size_t i = 0; i < v->tree.n; i++)
		if (v->tree.rows[i].first) {
			n++;
			if (i <= v->tl.cursor)
				pos = n;
		}
	return n ? xp_list_count_of(pos ? pos - 1 : 0, n, n, buf, len) : NULL;
}

static void *create(struct xp_ui *ui)
{
	struct qv *v = xp_calloc(1, sizeof *v);
	v->ui = ui;
	v->stale = true;
	v->tl = (struct xp_list)XP_LIST_INIT;
	v->jl = (struct xp_list)XP_LIST_INIT;
	v->pl = (struct xp_list)XP_LIST_INIT;
	v->cur_job = -1;
	return v;
}

static void destroy(void *st)
{
	struct qv *v = st;
	if (!v)
		return;
	xp_qwhatif_free(v->wi);
	xp_qdata_clear(&v->d);
	xp_strv_free(v->folded, v->n_folded);
	xp_ql_tree_free(&v->tree);
	xp_list_free(&v->tl);
	xp_list_free(&v->jl);
	xp_list_free(&v->pl);
	free(v->qjobs);
	free(v->cur_queue);
	xp_sdoc_free(&v->doc);
	free(v);
}

static const struct xp_view_key keys[] = {
	{"Tab", "move between the queue tree and its jobs (Shift-Tab, 1-5: views)"},
	{"Up/Down j/k", "move"},
	{"Enter  Left/Right", "tree: fold / unfold a queue; jobs: the job's spec, placement, history"},
	{"s / S", "jobs: sort by the next column / reverse it"},
	{"h / u / d", "jobs: hold / release / cancel (asks y/N first)"},
	{"w", "what-if: drain view 1's node (x) or add nodes (+); Esc cancels"},
	{"Esc", "back"},
	{"quota bar", "used in the share, borrowed (warning colour), free share, headroom to max"},
	{NULL, NULL},
};

const struct xp_view xp_view_queues = {
	.name = "queues",
	.title = "Queues",
	.order = 2,
	.keys = keys,
	.create = create,
	.destroy = destroy,
	.draw = draw,
	.pre_key = pre_key,
	.on_key = on_key,
	.on_click = on_click,
	.on_wheel = on_wheel,
	.on_data = on_data,
	.where = where,
	.nested = nested,
	.count = count,
	.tick = tick,
	.filter_fields = job_fields,
};
