/* view_validation.c: view 4, the validation matrix. Environments down, workload
 * cases across, five layer marks per cell (discovered, schedulable, launches,
 * executes, accepted) whose glyphs differ as well as their colours; totals per
 * row and column; Enter opens the evidence history of a cell.
 *
 * The matrix comes from the store (validate.h). Reading it costs a query, and the
 * discovered layer must first be synced from the cluster shown (a write), so both
 * happen once per new cluster, when the view is drawn, never once per frame; a
 * filter keystroke only re-picks the shown rows and columns (matrix_layout.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "draw.h"
#include "list.h"
#include "list_draw.h"
#include "store_open.h"
#include "map_layout.h"
#include "matrix_layout.h"
#include "styled_doc.h"
#include "theme.h"
#include "validate.h"
#include "view.h"
#include "xp.h"

/* Width of one row-total field ("pass", "fail") and the room the two take at the right. */
#define TOT_FIELD 4
#define TOT_W (XP_MX_GAP + TOT_FIELD + XP_MX_GAP + TOT_FIELD + 1)
/* The longest note a history line shows before cutting it (the command shows all of it). */
#define NOTE_MAX 60
/* Rows the history keeps above the records: title, case, current state, blank, headings. */
#define HIST_HEAD 5

/* ---- history lines: runs of coloured text (styled_doc.h) ---- */

/* Adds s padded with blanks to width columns (cut with the ellipsis when longer). */
static void hl_pad(struct xp_sdoc_line *l, int role, const char *s, int width, const char *ellipsis)
{
	char buf[512];
	xp_mx_truncate(s ? s : "-", width, ellipsis, buf, sizeof buf);
	xp_sdoc_add(l, role, "%s%*s", buf, width - xp_mx_cols(buf) + XP_MX_GAP, "");
}

/* ---- the view's state ---- */

enum mode {
	MODE_GRID,
	MODE_HISTORY
};

struct vv {
	const struct xp_glyphs *g;
	int mode;
	/* what the shown data was read for */
	bool read;                       /* read at least once */
	bool unrecorded;                 /* the cluster is (partly) a file the store does not show yet */
	const struct xp_cluster *seen;   /* the cluster it was read with */
	uint64_t seen_gen;
	const struct xp_cluster *synced; /* the last cluster synced into the store (a write) */
	uint64_t synced_gen;
	bool no_store;                   /* the database could not be opened */
	char *error;                     /* reading the matrix failed: why */
	struct xp_matrix m;
	struct xp_mx_shown sh;
	char *filter;                    /* the filter sh was built with */
	int *widths;                     /* per shown column */
	/* the cell cursor: the shown rows' list (its cursor is the row), the column among the
	 * shown columns, and the cell's ids, which survive a re-read and a filter that hides
	 * the cell for a while */
	struct xp_list envs;
	size_t col, left;
	char *env_id, *case_name;
	/* the last frame's geometry, for clicks */
	int f_xc, f_avail, f_env_x, f_env_w;
	/* history of the opened cell */
	char *h_env, *h_case;
	struct xp_sdoc hd;
	struct xp_list hist;             /* a pager over the records under the headings */
	char where[1024];
};

static void set_str(char **dst, const char *s)
{
	if (*dst && s && strcmp(*dst, s) == 0)
		return;
	free(*dst);
	*dst = xp_strdup(s);
}

static bool have_cell(const struct vv *v)
{
	return v->sh.n_rows && v->sh.n_cols;
}

static const struct xp_env *cur_env(const struct vv *v)
{
	return v->sh.n_rows ? &v->m.envs[v->sh.rows[v->envs.cursor]] : NULL;
}

static const struct xp_case *cur_case(const struct vv *v)
{
	return v->sh.n_cols ? &v->m.cases[v->sh.cols[v->col]] : NULL;
}

/* The user moved: the cell under the cursor is now the one to come back to. */
static void remember(struct vv *v)
{
	if (v->sh.n_rows)
		set_str(&v->env_id, cur_env(v)->id);
	if (v->sh.n_cols)
		set_str(&v->case_name, cur_case(v)->name);
}

static bool ui_match(const char *text, void *arg)
{
	return xp_ui_matches(arg, text);
}

/* Picks the shown rows and columns for the current filter and puts the cursor back on the
 * remembered cell, or as near its old place as the new shape allows. */
static void reshow(struct vv *v, struct xp_ui *ui)
{
	const char *f = xp_ui_filter(ui);
	/* A filter text the user just typed (not cleared) starts at its first match, as the
	 * map's does; a re-read under the same filter, or clearing it, keeps the cursor's cell. */
	bool typed = f && *f && (!v->filter || strcmp(v->filter, f) != 0);
	xp_mx_shown_build(&v->sh, &v->m, f, ui_match, ui);
	set_str(&v->filter, f ? f : "");
	free(v->widths);
	v->widths = xp_calloc(v->sh.n_cols + 1, sizeof *v->widths);
	for (size_t j = 0; j < v->sh.n_cols; j++)
		v->widths[j] = xp_mx_case_width(v->m.cases[v->sh.cols[j]].name);
	long r = xp_mx_find_env(&v->m, &v->sh, v->env_id);
	long c = xp_mx_find_case(&v->m, &v->sh, v->case_name);
	xp_list_set_count(&v->envs, v->sh.n_rows, v->m.n_envs);
	if (typed)
		v->envs.cursor = v->envs.top = 0;
	else if (r >= 0)
		v->envs.cursor = (size_t)r;
	if (c >= 0)
		v->col = (size_t)c;
	else if (v->col >= v->sh.n_cols)
		v->col = v->sh.n_cols ? v->sh.n_cols - 1 : 0;
	/* The first read has nothing to remember yet: start from the top-left cell. */
	if (typed || !v->env_id || !v->case_name)
		remember(v);
}

/* ---- the history of a cell ---- */

static void fmt_time(time_t t, char *buf, size_t len)
{
	struct tm tm;
	if (!t || !localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "-");
}

/* Widens *w to the columns of s ("-" when absent), up to max. */
static void widen(int *w, const char *s, int max)
{
	int c = xp_mx_cols(s ? s : "-");
	if (c > *w)
		*w = c < max ? c : max;
}

/* Index of the environment with this id in the whole matrix (the filter may hide it), or -1. */
static long env_index(const struct xp_matrix *m, const char *id)
{
	for (size_t i = 0; id && i < m->n_envs; i++)
		if (strcmp(m->envs[i].id, id) == 0)
			return (long)i;
	return -1;
}

static long case_index(const struct xp_matrix *m, const char *name)
{
	for (size_t i = 0; name && i < m->n_cases; i++)
		if (strcmp(m->cases[i].name, name) == 0)
			return (long)i;
	return -1;
}

static void hist_head(struct vv *v, struct xp_ui *ui, size_t n_rows)
{
	const struct xp_glyphs *g = v->g;
	struct xp_sdoc_line *l = xp_sdoc_line(&v->hd);
	char *shown = xp_env_id_show(v->h_env);
	xp_sdoc_add(l, XP_ROLE_TITLE, "%s %s %s", shown, g->arrow, v->h_case);
	free(shown);
	xp_sdoc_add(l, XP_ROLE_DIM, "   %zu record%s, newest first", n_rows, n_rows == 1 ? "" : "s");
	/* What the case runs, so that the evidence can be read against it. */
	l = xp_sdoc_line(&v->hd);
	struct xp_case kc = {0};
	struct xp_err err = {{0}};
	struct xp_store *s = xp_ui_store(ui);
	if (s && xp_validate_case_get(s, v->h_case, &kc, &err) == 0) {
		const char *names[] = {"image", "model", "data", "team", "acceptance"};
		const char *vals[] = {kc.image, kc.model, kc.data, kc.team, kc.acceptance};
		for (size_t i = 0; i < sizeof names / sizeof *names; i++)
			if (vals[i])
				xp_sdoc_add(l, XP_ROLE_DIM, "%s%s %s", l->n ? "  " : "", names[i], vals[i]);
		if (kc.entry) {
			xp_sdoc_add(l, XP_ROLE_DIM, "%sentry", l->n ? "  " : "");
			for (char **a = kc.entry; *a; a++)
				xp_sdoc_add(l, XP_ROLE_DIM, " %s", *a);
		}
		xp_case_clear(&kc);
	}
	/* The cell as the grid shows it, spelt out. */
	l = xp_sdoc_line(&v->hd);
	xp_sdoc_add(l, XP_ROLE_NORMAL, "now:");
	long r = env_index(&v->m, v->h_env), c = case_index(&v->m, v->h_case);
	for (int k = 0; k < XP_LAYER_COUNT && r >= 0 && c >= 0; k++) {
		int st = xp_mx_cell(&v->m, (size_t)r, (size_t)c)->layers[k].status;
		xp_sdoc_add(l, XP_ROLE_NORMAL, "  %s ", xp_layer_name(k));
		xp_sdoc_add(l, xp_mx_role(st), "%s %s", xp_mx_mark(st, g->utf8), xp_vstatus_name(st));
	}
	xp_sdoc_line(&v->hd);
}

/* Reads the opened cell's records and lays them out, newest first. */
static void hist_build(struct vv *v, struct xp_ui *ui)
{
	xp_sdoc_free(&v->hd);
	struct xp_store *s = xp_ui_store(ui);
	struct xp_evidence *rows = NULL;
	size_t n = 0;
	struct xp_err err = {{0}};
	int rc = s ? xp_validate_history(s, v->h_env, v->h_case, &rows, &n, &err) : -1;
	hist_head(v, ui, n);
	const char *ell = v->g->ellipsis;
	int aw = 5, nw = 4, tw = 4; /* the headings' widths */
	for (size_t i = 0; i < n; i++) {
		widen(&aw, rows[i].actor, 24);
		widen(&nw, rows[i].node, 24);
		widen(&tw, rows[i].note, NOTE_MAX);
	}
	struct xp_sdoc_line *l = xp_sdoc_line(&v->hd);
	hl_pad(l, XP_ROLE_TITLE, "TIME", 19, ell);
	hl_pad(l, XP_ROLE_TITLE, "LAYER", 11, ell);
	hl_pad(l, XP_ROLE_TITLE, "STATUS", 10, ell);
	hl_pad(l, XP_ROLE_TITLE, "ACTOR", aw, ell);
	hl_pad(l, XP_ROLE_TITLE, "NODE", nw, ell);
	hl_pad(l, XP_ROLE_TITLE, "NOTE", tw, ell);
	xp_sdoc_add(l, XP_ROLE_TITLE, "SHA-256       LOG");
	if (rc < 0) {
		l = xp_sdoc_line(&v->hd);
		xp_sdoc_add(l, XP_ROLE_FAIL, "cannot read the history: %s", s ? err.msg : "no database");
	} else if (!n) {
		l = xp_sdoc_line(&v->hd);
		xp_sdoc_add(l, XP_ROLE_DIM, "no evidence recorded for this cell yet: "
				       ":validate record ENV CASE LAYER pass|fail --log FILE --note TEXT");
	}
	for (size_t i = n; i-- > 0;) {
		const struct xp_evidence *e = &rows[i];
		char when[32], mark[64];
		fmt_time(e->time, when, sizeof when);
		l = xp_sdoc_line(&v->hd);
		hl_pad(l, XP_ROLE_NORMAL, when, 19, ell);
		hl_pad(l, XP_ROLE_NORMAL, xp_layer_name(e->layer), 11, ell);
		snprintf(mark, sizeof mark, "%s %s", xp_mx_mark(e->status, v->g->utf8), xp_vstatus_name(e->status));
		hl_pad(l, xp_mx_role(e->status), mark, 10, ell);
		hl_pad(l, XP_ROLE_NORMAL, e->actor, aw, ell);
		hl_pad(l, XP_ROLE_NORMAL, e->node, nw, ell);
		hl_pad(l, XP_ROLE_NORMAL, e->note, tw, ell);
		/* The digest first: fixed width, so that a long path cannot push it off the screen. */
		if (e->log_sha256)
			xp_sdoc_add(l, XP_ROLE_DIM, "%-12.12s  ", e->log_sha256);
		else
			xp_sdoc_add(l, XP_ROLE_DIM, "%-12s  ", "-");
		xp_sdoc_add(l, e->log_path ? XP_ROLE_NORMAL : XP_ROLE_DIM, "%s", e->log_path ? e->log_path : "-");
	}
	xp_evidence_free(rows, n);
}

static void back_to_grid(struct vv *v)
{
	v->mode = MODE_GRID;
	xp_sdoc_free(&v->hd);
	free(v->h_env);
	free(v->h_case);
	v->h_env = v->h_case = NULL;
}

static void open_history(struct vv *v, struct xp_ui *ui)
{
	if (!have_cell(v))
		return;
	remember(v);
	set_str(&v->h_env, cur_env(v)->id);
	set_str(&v->h_case, cur_case(v)->name);
	v->mode = MODE_HISTORY;
	v->hist.top = 0;
	v->hist.xoff = 0;
	hist_build(v, ui);
}

/* ---- reading ---- */

/* Syncs the discovered layer from c (once per cluster: it writes), then reads the matrix. */
static void load(struct vv *v, struct xp_ui *ui, const struct xp_cluster *c)
{
	v->read = true;
	v->seen = c;
	v->seen_gen = c->generation;
	xp_matrix_free(&v->m);
	memset(&v->m, 0, sizeof v->m);
	free(v->error);
	v->error = NULL;
	struct xp_store *s = xp_ui_store(ui);
	v->no_store = !s;
	struct xp_err err = {{0}};
	/* The console shows an empty cluster until the first load: nothing to sync from that. */
	if (c->n_nodes && (c != v->synced || c->generation != v->synced_gen)) {
		v->synced = c;
		v->synced_gen = c->generation;
		/* A live source records what is new (the first time, that makes the database); a
		 * file is only looked at. */
		int w = xp_ui_sync(ui, c, &err);
		if (w < 0)
			xp_ui_message(ui, XP_ROLE_FAIL, "validation: syncing discovery: %s", err.msg);
		else if (w > 0)
			s = xp_ui_store(ui); /* the file it made replaces the empty stand-in */
		v->unrecorded = xp_files_unrecorded(s, c);
		if (v->unrecorded)
			xp_ui_message(ui, XP_ROLE_WARN, "validation: the cluster is read from a file: what it shows is "
							"not recorded (:validate sync records it)");
	}
	if (s && xp_validate_matrix(s, &v->m, &err) < 0) {
		v->error = xp_strdup(err.msg);
		memset(&v->m, 0, sizeof v->m);
	}
	reshow(v, ui);
	if (v->mode != MODE_HISTORY)
		return;
	if (env_index(&v->m, v->h_env) < 0 || case_index(&v->m, v->h_case) < 0) {
		xp_ui_message(ui, XP_ROLE_WARN, "validation: %s / %s is gone; back to the grid", v->h_env, v->h_case);
		back_to_grid(v);
		return;
	}
	hist_build(v, ui);
}

/* Catches up with the app: a new cluster means a sync and a re-read, a new filter a re-pick. */
static void sync_view(struct vv *v, struct xp_ui *ui)
{
	const struct xp_cluster *c = xp_ui_cluster(ui);
	const char *f = xp_ui_filter(ui);
	v->g = xp_ui_glyphs(ui);
	if (!v->read || c != v->seen || c->generation != v->seen_gen)
		load(v, ui, c);
	else if (!v->filter || strcmp(v->filter, f ? f : "") != 0)
		reshow(v, ui);
}

/* ---- drawing the grid ---- */

/* Draws n lines of text (roles[i] each) from the top of r, blank rows under them. */
static void draw_lines(WINDOW *w, struct xp_rect r, const char *const *lines, const int *roles, int n,
		       const char *ellipsis)
{
	int maxx = r.x + r.w;
	char buf[1024];
	for (int i = 0; i < r.h; i++) {
		int x = r.x + 2 < maxx ? r.x + 2 : maxx;
		xp_draw_fill(w, r.y + i, r.x, x, XP_ROLE_NORMAL);
		/* A line longer than the view ends in the mark, as cut text does everywhere. */
		if (i < n)
			x = xp_draw_put(w, r.y + i, x, maxx, roles[i],
					xp_draw_cut(lines[i], maxx - x, XP_CUT_END, ellipsis, buf, sizeof buf), 0);
		xp_draw_fill(w, r.y + i, x, maxx, XP_ROLE_NORMAL);
	}
}

/* Says plainly why there is no grid and what to do about it; true when it did. */
static bool draw_empty(struct vv *v, WINDOW *w, struct xp_rect r)
{
	const char *lines[12] = {NULL};
	int roles[12];
	char buf[3][512];
	int n = 0;
#define SAY(role, text) (roles[n] = (role), lines[n++] = (text))
	if (v->no_store) {
		SAY(XP_ROLE_TITLE, "Validation: no database.");
		SAY(XP_ROLE_NORMAL, "");
		SAY(XP_ROLE_NORMAL, "xpool could not open its database (the status line said why).");
		SAY(XP_ROLE_NORMAL, "Start the console with --db PATH, or make $XDG_STATE_HOME/xpool writable.");
	} else if (v->error) {
		snprintf(buf[0], sizeof buf[0], "Cannot read the validation matrix: %s", v->error);
		SAY(XP_ROLE_FAIL, buf[0]);
		SAY(XP_ROLE_NORMAL, "");
		SAY(XP_ROLE_NORMAL, "`xpool db check` tells whether the database is sound; r tries again.");
	} else if (!v->m.n_cases || !v->m.n_envs) {
		if (!v->m.n_cases) {
			SAY(XP_ROLE_TITLE, "No workload cases yet. Add one:");
			SAY(XP_ROLE_NORMAL, "    :validate case add NAME --image IMAGE --entry \"CMD ARGS\"");
			SAY(XP_ROLE_NORMAL, "");
		}
		if (!v->m.n_envs) {
			SAY(XP_ROLE_TITLE, "No environments yet.");
			if (v->unrecorded)
				SAY(XP_ROLE_WARN, "The cluster is read from a file: looking records nothing; "
						  ":validate sync records what it shows.");
			SAY(XP_ROLE_NORMAL, "Environments come from discovery: each vendor, model and driver "
					    "the cluster shows");
			SAY(XP_ROLE_NORMAL, "is one (a device whose driver is not known is none); r refreshes.");
		} else {
			snprintf(buf[1], sizeof buf[1],
				 "Environments come from discovery (vendor, model, driver): %zu known so far.",
				 v->m.n_envs);
			SAY(XP_ROLE_NORMAL, buf[1]);
		}
		SAY(XP_ROLE_NORMAL, "");
		SAY(XP_ROLE_DIM, "Then record evidence: "
				 ":validate record ENV CASE LAYER pass|fail --log FILE --note TEXT");
	} else if (!have_cell(v)) {
		snprintf(buf[2], sizeof buf[2], "Nothing matches \"%s\" (Esc clears the filter).",
			 v->filter ? v->filter : "");
		SAY(XP_ROLE_DIM, buf[2]);
		SAY(XP_ROLE_DIM, "The filter keeps environments by vendor, model or driver, cases by name or team,");
		SAY(XP_ROLE_DIM, "and \"pass\", \"fail\", \"stale\" or \"untested\" keep what has a layer "
				 "in that status.");
	} else {
		return false;
	}
#undef SAY
	draw_lines(w, r, lines, roles, n, v->g->ellipsis);
	return true;
}

/* Draws a number right-aligned in a field of TOT_FIELD columns: coloured when it says something. */
static int put_count(WINDOW *w, int y, int x, int maxx, size_t count, int role, int base)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%*zu", TOT_FIELD, count);
	return xp_draw_put(w, y, x, maxx, count ? role : base, buf, 0);
}

static void draw_header(struct vv *v, WINDOW *w, int y, int x0, int env_w, int xc, size_t nvis, int xr, int maxx)
{
	char buf[256];
	xp_draw_fill(w, y, x0 - 1, maxx, XP_ROLE_TITLE);
	xp_draw_put(w, y, x0, x0 + env_w, XP_ROLE_TITLE, "ENVIRONMENT", 0);
	int x = xc;
	for (size_t j = v->left; j < v->left + nvis; j++) {
		const char *name = v->m.cases[v->sh.cols[j]].name;
		xp_mx_truncate(name, v->widths[j], v->g->ellipsis, buf, sizeof buf);
		xp_draw_put(w, y, x, xr, j == v->col ? XP_ROLE_SELECTED : XP_ROLE_TITLE, buf, 0);
		x += v->widths[j] + XP_MX_GAP;
	}
	/* Cases scrolled out of sight on either side: say so where they would be. */
	if (v->left > 0)
		xp_draw_put(w, y, xc - XP_MX_GAP, xc - 1, XP_ROLE_TITLE, "<", 0);
	if (v->left + nvis < v->sh.n_cols)
		xp_draw_put(w, y, x - XP_MX_GAP + 1 < xr ? x - XP_MX_GAP + 1 : xr - 1, xr, XP_ROLE_TITLE, ">", 0);
	if (xr < maxx) {
		snprintf(buf, sizeof buf, "%*s%*s%*s", XP_MX_GAP, "", TOT_FIELD, "pass", XP_MX_GAP + TOT_FIELD, "fail");
		xp_draw_put(w, y, xr, maxx, XP_ROLE_TITLE, buf, 0);
	}
}

/* Where the grid's parts go on one frame. */
struct grid_frame {
	struct vv *v;
	int x0, env_w, xc, xr, maxx;
	size_t nvis;
	size_t pre, suf; /* what the shown ids share at their start and end (xp_mx_env_common) */
	char **win;      /* the ids of the window's rows as shown, from the list's top */
	size_t top, nwin;
};

static void draw_row(void *arg, WINDOW *w, int y, size_t i, bool sel)
{
	const struct grid_frame *f = arg;
	struct vv *v = f->v;
	int x0 = f->x0, env_w = f->env_w, xc = f->xc, xr = f->xr, maxx = f->maxx;
	size_t nvis = f->nvis;
	char buf[512];
	xp_draw_fill(w, y, x0 - 1, maxx, XP_ROLE_NORMAL);
	/* A cut id keeps the fields where the ids on the screen differ (two ids cut alike would
	 * read as one environment); what they all share gives way. */
	/* An empty firmware or runtime field reads "-", as in the command line's matrix (the
	 * frame made each window row's shown id once). */
	char *made = i >= f->top && i - f->top < f->nwin ? NULL : xp_env_id_show(v->m.envs[v->sh.rows[i]].id);
	xp_mx_env_cut(made ? made : f->win[i - f->top], env_w, f->pre, f->suf, v->g->ellipsis, buf, sizeof buf);
	free(made);
	int end = xp_draw_put(w, y, x0, x0 + env_w, sel ? XP_ROLE_SELECTED : XP_ROLE_NORMAL, buf, 0);
	if (sel)
		xp_draw_fill(w, y, end, x0 + env_w, XP_ROLE_SELECTED);
	int x = xc;
	for (size_t j = v->left; j < v->left + nvis && x < xr; j++) {
		const struct xp_cell *cell = xp_mx_cell(&v->m, v->sh.rows[i], v->sh.cols[j]);
		bool here = sel && j == v->col;
		int cx = x;
		/* The cursor cell loses its colours but keeps its glyphs: it still reads. */
		for (int k = 0; k < XP_LAYER_COUNT; k++) {
			int st = cell->layers[k].status;
			cx = xp_draw_put(w, y, cx, xr, here ? XP_ROLE_SELECTED : xp_mx_role(st), xp_mx_mark(st, v->g->utf8), 0);
		}
		if (here)
			xp_draw_fill(w, y, cx, x + v->widths[j] < xr ? x + v->widths[j] : xr, XP_ROLE_SELECTED);
		x += v->widths[j] + XP_MX_GAP;
	}
	if (xr < maxx) {
		x = xp_draw_put(w, y, xr, maxx, XP_ROLE_NORMAL, "  ", 0);
		x = put_count(w, y, x, maxx, v->sh.row_ok[i], XP_ROLE_OK, XP_ROLE_DIM);
		x = xp_draw_put(w, y, x, maxx, XP_ROLE_NORMAL, "  ", 0);
		put_count(w, y, x, maxx, v->sh.row_fail[i], XP_ROLE_FAIL, XP_ROLE_DIM);
	}
}

/* The column totals: cells accepted on every layer (ok) or with a failed layer (fail). */
static void draw_totals(struct vv *v, WINDOW *w, int y, bool fail, int x0, int env_w, int xc, size_t nvis, int xr,
			int maxx)
{
	char buf[32];
	xp_draw_fill(w, y, x0 - 1, maxx, XP_ROLE_NORMAL);
	xp_draw_put(w, y, x0, x0 + env_w, XP_ROLE_TITLE, fail ? "any fail" : "all pass", 0);
	int x = xc;
	for (size_t j = v->left; j < v->left + nvis && x < xr; j++) {
		size_t n = fail ? v->sh.col_fail[j] : v->sh.col_ok[j];
		snprintf(buf, sizeof buf, "%zu", n);
		xp_draw_put(w, y, x, xr, n ? (fail ? XP_ROLE_FAIL : XP_ROLE_OK) : XP_ROLE_DIM, buf, 0);
		x += v->widths[j] + XP_MX_GAP;
	}
	if (xr < maxx) {
		x = xr + XP_MX_GAP + (fail ? TOT_FIELD + XP_MX_GAP : 0);
		put_count(w, y, x, maxx, fail ? v->sh.fail : v->sh.ok, fail ? XP_ROLE_FAIL : XP_ROLE_OK, XP_ROLE_DIM);
	}
}

static void draw_legend(struct vv *v, WINDOW *w, int y, int x0, size_t nvis, size_t nrows_vis, int maxx)
{
	static const int order[] = {XP_V_PASS, XP_V_FAIL, XP_V_UNTESTED, XP_V_STALE};
	xp_draw_fill(w, y, x0 - 1, maxx, XP_ROLE_NORMAL);
	int x = x0;
	for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
		x = xp_draw_put(w, y, x, maxx, xp_mx_role(order[i]), xp_mx_mark(order[i], v->g->utf8), 0);
		char buf[32];
		snprintf(buf, sizeof buf, " %s ", xp_vstatus_name(order[i]));
		x = xp_draw_put(w, y, x, maxx, XP_ROLE_NORMAL, buf, 0);
	}
	/* Where the window is comes before the layer names: on a narrow screen it says what
	 * scrolling would show, and the names are in the help and the history. */
	char buf[256];
	snprintf(buf, sizeof buf,
		 "  envs %zu-%zu/%zu cases %zu-%zu/%zu  marks: discovered schedulable launches executes accepted",
		 v->envs.top + 1, v->envs.top + nrows_vis, v->sh.n_rows, v->left + 1, v->left + nvis, v->sh.n_cols);
	/* A cut legend ends in the mark, not in half a word. */
	char cut[300];
	xp_draw_put(w, y, x, maxx, XP_ROLE_DIM, xp_draw_cut(buf, maxx - x, XP_CUT_END, v->g->ellipsis, cut, sizeof cut),
		    0);
}

static void draw_grid(struct vv *v, WINDOW *w, struct xp_rect r)
{
	v->envs.page = 1;
	if (draw_empty(v, w, r))
		return;
	int maxx = r.x + r.w;
	int x0 = r.x + 1;
	/* The id column takes the room the cases and totals leave, up to the widest id. */
	int rest = XP_MX_GAP + TOT_W;
	for (size_t j = 0; j < v->sh.n_cols; j++)
		rest += v->widths[j] + (j ? XP_MX_GAP : 0);
	int env_w = xp_mx_env_width(v->sh.env_widest, r.w - 1, rest);
	int xc = x0 + env_w + XP_MX_GAP;
	/* The row totals stay at the right edge; a narrow screen gives them up first. */
	int xr = maxx - TOT_W;
	if (xr - xc < XP_MX_CASE_MIN)
		xr = maxx;
	int avail = xr - xc;
	if (avail < 1)
		avail = 1;
	v->left = xp_mx_scroll_left(v->widths, v->sh.n_cols, v->left, v->col, avail, XP_MX_GAP);
	size_t nvis = xp_mx_fit(v->widths, v->sh.n_cols, v->left, avail, XP_MX_GAP);
	/* Header, then rows, then (room allowing) two total lines and the legend. */
	int foot = r.h >= 7 ? 3 : r.h >= 3 ? 1 : 0;
	int body = r.h - 1 - foot;
	if (body < 1) {
		foot = 0;
		body = r.h - 1;
	}
	v->f_xc = xc;
	v->f_avail = avail;
	v->f_env_x = x0;
	v->f_env_w = env_w;
	draw_header(v, w, r.y, x0, env_w, xc, nvis, xr, maxx);
	xp_list_frame(&v->envs, body);
	if (body < 1)
		return;
	/* Where the ids in the window diverge, as drawn. */
	size_t nwin = v->sh.n_rows - v->envs.top < (size_t)body ? v->sh.n_rows - v->envs.top : (size_t)body;
	char **win = xp_calloc(nwin + 1, sizeof *win);
	for (size_t k = 0; k < nwin; k++)
		win[k] = xp_env_id_show(v->m.envs[v->sh.rows[v->envs.top + k]].id);
	struct grid_frame f = {v, x0, env_w, xc, xr, maxx, nvis, 0, 0, win, v->envs.top, nwin};
	xp_mx_env_common((const char *const *)win, nwin, &f.pre, &f.suf);
	xp_list_draw_rows(&v->envs, w, (struct xp_rect){r.y + 1, r.x, body, r.w}, draw_row, &f);
	xp_strv_free(win, nwin);
	size_t left = v->sh.n_rows - v->envs.top, shown = left < (size_t)body ? left : (size_t)body;
	int y = r.y + 1 + body;
	if (foot == 3) {
		draw_totals(v, w, y++, false, x0, env_w, xc, nvis, xr, maxx);
		draw_totals(v, w, y++, true, x0, env_w, xc, nvis, xr, maxx);
	}
	if (foot)
		draw_legend(v, w, y, x0, nvis, shown, maxx);
}

static void draw_history(struct vv *v, WINDOW *w, struct xp_rect r)
{
	int maxx = r.x + r.w;
	struct xp_list *l = &v->hist;
	/* The title and headings stay put; the records scroll under them. */
	int head = (int)v->hd.n < HIST_HEAD ? (int)v->hd.n : HIST_HEAD;
	if (head > r.h)
		head = r.h;
	for (int i = 0; i < head; i++)
		xp_sdoc_draw_from(w, r.y + i, r.x + 1, maxx, &v->hd.lines[i], l->xoff);
	if (head)
		xp_draw_fill(w, r.y, r.x, r.x + 1, XP_ROLE_NORMAL);
	int h = r.h - head;
	l->cols = r.w;
	xp_list_set_count(l, v->hd.n > (size_t)head ? v->hd.n - (size_t)head : 0, 0);
	xp_list_frame(l, h);
	for (int i = 0; i < h; i++) {
		size_t li = (size_t)head + l->top + (size_t)i;
		xp_draw_fill(w, r.y + head + i, r.x, r.x + 1, XP_ROLE_NORMAL);
		xp_sdoc_draw_from(w, r.y + head + i, r.x + 1, maxx, li < v->hd.n ? &v->hd.lines[li] : NULL, l->xoff);
	}
}

static void draw(void *st, struct xp_ui *ui, WINDOW *w, struct xp_rect r)
{
	struct vv *v = st;
	sync_view(v, ui);
	if (r.h <= 0 || r.w <= 0)
		return;
	if (v->mode == MODE_HISTORY)
		draw_history(v, w, r);
	else
		draw_grid(v, w, r);
}

/* ---- keys ---- */

static void move_to(struct vv *v, long row, long col)
{
	if (!have_cell(v))
		return;
	xp_list_move_to(&v->envs, row, 1);
	v->col = xp_scroll_move(0, col, v->sh.n_cols);
	remember(v);
}

static int grid_key(struct vv *v, struct xp_ui *ui, int key)
{
	/* The rows move as in every list; without a cell (nothing shown) nothing moves. */
	struct xp_list moved = v->envs;
	if (xp_list_key(&moved, key)) {
		if (have_cell(v)) {
			v->envs = moved;
			remember(v);
		}
		return XP_REACT_REDRAW;
	}
	long r = (long)v->envs.cursor, c = (long)v->col;
	switch (key) {
	case KEY_LEFT:
	case 'h':
		move_to(v, r, c - 1);
		break;
	case KEY_RIGHT:
	case 'l':
		move_to(v, r, c + 1);
		break;
	case '0':
	case '^':
		move_to(v, r, 0);
		break;
	case '$':
		move_to(v, r, (long)v->sh.n_cols - 1);
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		open_history(v, ui);
		break;
	default:
		return XP_REACT_UNHANDLED;
	}
	return XP_REACT_REDRAW;
}

/* The history's pager as the document is now: the records under the headings. */
static struct xp_list *hist_list(struct vv *v)
{
	xp_list_set_count(&v->hist, v->hd.n > HIST_HEAD ? v->hd.n - HIST_HEAD : 0, 0);
	v->hist.width = xp_sdoc_width(&v->hd);
	return &v->hist;
}

static int history_key(struct vv *v, int key)
{
	if (key == 27) {
		back_to_grid(v);
		return XP_REACT_REDRAW;
	}
	return xp_list_key(hist_list(v), key) ? XP_REACT_REDRAW : XP_REACT_UNHANDLED;
}

static int on_key(void *st, struct xp_ui *ui, int key)
{
	struct vv *v = st;
	sync_view(v, ui);
	return v->mode == MODE_HISTORY ? history_key(v, key) : grid_key(v, ui, key);
}

/* A click on a cell selects it; a click on the selected cell opens its history. */
static int on_click(void *st, struct xp_ui *ui, int y, int x)
{
	struct vv *v = st;
	sync_view(v, ui);
	long row = v->mode == MODE_GRID && have_cell(v) ? xp_list_row_at(&v->envs, y - 1) : -1;
	if (row < 0)
		return XP_REACT_NONE;
	long col = -1;
	if (x >= v->f_env_x && x < v->f_env_x + v->f_env_w) {
		col = (long)v->col;
	} else {
		int cx = v->f_xc;
		for (size_t j = v->left; j < v->sh.n_cols && cx < v->f_xc + v->f_avail; j++) {
			if (x >= cx && x < cx + v->widths[j]) {
				col = (long)j;
				break;
			}
			cx += v->widths[j] + XP_MX_GAP;
		}
	}
	if (col < 0)
		return XP_REACT_NONE;
	if ((size_t)row == v->envs.cursor && (size_t)col == v->col && x >= v->f_xc)
		open_history(v, ui);
	else
		move_to(v, row, col);
	return XP_REACT_REDRAW;
}

/* A new cluster waits for the next frame (the view may not be shown); a filter edit is cheap
 * and happens now, so that the rows and the breadcrumb agree at once. */
static void on_data(void *st, struct xp_ui *ui)
{
	struct vv *v = st;
	const struct xp_cluster *c = xp_ui_cluster(ui);
	v->g = xp_ui_glyphs(ui);
	if (v->read && c == v->seen && c->generation == v->seen_gen)
		sync_view(v, ui);
}

static const char *where(void *st)
{
	struct vv *v = st;
	const char *env = NULL, *kase = NULL;
	if (!v->g)
		return NULL;
	if (v->mode == MODE_HISTORY) {
		env = v->h_env;
		kase = v->h_case;
	} else if (have_cell(v)) {
		env = cur_env(v)->id;
		kase = cur_case(v)->name;
	}
	if (!env || !kase)
		return NULL;
	/* The id as the rows show it: an empty firmware or runtime field reads "-". */
	char *shown = xp_env_id_show(env);
	snprintf(v->where, sizeof v->where, "Validation %s %s %s %s", v->g->arrow, shown, v->g->arrow, kase);
	free(shown);
	/* Ids come from devices and files: nothing in them may move the app's cursor. */
	for (char *p = v->where; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return v->where;
}

/* The wheel moves the row cursor over the grid, and scrolls a history. */
static int on_wheel(void *st, struct xp_ui *ui, int dir)
{
	struct vv *v = st;
	sync_view(v, ui);
	if (v->mode == MODE_HISTORY) {
		xp_list_wheel(hist_list(v), dir);
	} else if (have_cell(v)) {
		xp_list_wheel(&v->envs, dir);
		remember(v);
	}
	return XP_REACT_REDRAW;
}

/* Where the row cursor is among the environments shown (the history has no list). */
static const char *count(void *st, char *buf, size_t len)
{
	const struct vv *v = st;
	return v->mode == MODE_GRID && have_cell(v) ? xp_list_count(&v->envs, buf, len) : NULL;
}

static bool nested(void *st)
{
	const struct vv *v = st;
	return v->mode == MODE_HISTORY;
}

/* Reads the matrix at once (without a sync: the first cluster has not come yet), so that the
 * breadcrumb has a cell before the view is first drawn. */
static void *create(struct xp_ui *ui)
{
	struct vv *v = xp_calloc(1, sizeof *v);
	v->envs = v->hist = (struct xp_list)XP_LIST_INIT;
	v->hist.pager = true;
	v->hist.xslack = 2; /* drawn a column in: the widest line may scroll until its end shows */
	sync_view(v, ui);
	return v;
}

static void destroy(void *st)
{
	struct vv *v = st;
	if (!v)
		return;
	xp_matrix_free(&v->m);
	xp_mx_shown_free(&v->sh);
	xp_list_free(&v->envs);
	xp_list_free(&v->hist);
	xp_sdoc_free(&v->hd);
	free(v->error);
	free(v->filter);
	free(v->widths);
	free(v->env_id);
	free(v->case_name);
	free(v->h_env);
	free(v->h_case);
	free(v);
}

static const struct xp_view_key keys[] = {
	{"Arrows h/j/k/l", "move the cell cursor"},
	{"PgUp/PgDn Home/End", "page, first, last environment"},
	{"0 / $", "first, last case"},
	{"Enter", "evidence history of the cell (Esc back)"},
	{"/TEXT", "keep environments by vendor, model, driver and cases by name, team"},
	{"/fail /stale", "keep the rows and columns with a layer in that status"},
	{"/pass /untested", "likewise"},
	{"r", "sync discovery and re-read the matrix"},
	{NULL, NULL},
};

const struct xp_view xp_view_validation = {
	.name = "validation",
	.title = "Validation",
	.order = 4,
	.keys = keys,
	.create = create,
	.destroy = destroy,
	.draw = draw,
	.on_key = on_key,
	.on_click = on_click,
	.on_wheel = on_wheel,
	.on_data = on_data,
	.where = where,
	.count = count,
	.nested = nested,
};
