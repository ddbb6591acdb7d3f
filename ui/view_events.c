/* view_events.c: view 5, the event log: discovery and health events, newest
 * first, filtered by the `/` text, sortable by a column (s, S). The cursor stays
 * on the event it was on when new ones arrive, although every event's place from
 * the newest shifts. The list itself is the console's list widget (list.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "draw.h"
#include "list.h"
#include "list_draw.h"
#include "theme.h"
#include "view.h"
#include "xp.h"

enum { COL_TIME, COL_SEV, COL_NODE, COL_MSG, N_COLS };

static const struct xp_list_col columns[N_COLS] = {
	[COL_TIME] = {.title = "TIME"},
	[COL_SEV] = {.title = "SEV"},
	[COL_NODE] = {.title = "NODE", .max = 24, .min = 8},
	[COL_MSG] = {.title = "MESSAGE", .fill = true},
};

struct evs {
	/* Rows: row id i is the i-th newest event of the log the rows were built from. */
	struct xp_list list;
	/* The event under the cursor: its ring slot and a copy to recognise it by, because
	 * a full ring reuses slots and shifts every index. */
	bool have_cur;
	size_t cur_slot;
	struct xp_event cur;
	/* What the rows were built from. */
	const struct xp_ui *ui;
	const struct xp_event *ring;
	size_t start, count;
	char *filter;
	int sort_col;
	bool sort_desc;
	int node_w;
	time_t oldest;          /* oldest shown event's time: decides whether dates are needed */
	/* the last frame, for drawing rows */
	time_t midnight;
};

static const struct xp_event *event_of(const struct evs *v, size_t id)
{
	const struct xp_event_log *log = xp_ui_events(v->ui);
	return xp_event_get(log, log->n - 1 - id);
}

static bool same_event(const struct xp_event *a, const struct xp_event *b)
{
	return a->time == b->time && a->severity == b->severity && strcmp(a->node, b->node) == 0 &&
	       strcmp(a->msg, b->msg) == 0;
}

/* The fields of an event row for the `/` filter. */
static const struct xp_filter_field event_fields[] = {
	{"severity", false, "info, warn, fail", NULL},
	{"node", false, "the node it is about", NULL},
	{NULL, false, NULL, NULL},
};

static bool event_get(void *row, const char *field, struct xp_fval *out)
{
	const struct xp_event *e = row;
	const char *s = !strcmp(field, "severity") ? xp_severity_name(e->severity) : e->node[0] ? e->node : NULL;
	*out = (struct xp_fval){s ? XP_FV_STR : XP_FV_NONE, 0, s};
	return s != NULL;
}

static bool event_matches(size_t id, void *arg)
{
	const struct evs *v = arg;
	const struct xp_event *e = event_of(v, id);
	char text[320];
	snprintf(text, sizeof text, "%s\n%s\n%s", e->node, e->msg, xp_severity_name(e->severity));
	return xp_filter_eval(xp_ui_filter_expr(v->ui, event_fields), event_get, (void *)e, text);
}

static int event_cmp(size_t a, size_t b, int col, void *arg)
{
	const struct xp_event *x = event_of(arg, a), *y = event_of(arg, b);
	switch (col) {
	case COL_TIME:
		return (x->time > y->time) - (x->time < y->time);
	case COL_SEV:
		return (x->severity > y->severity) - (x->severity < y->severity);
	case COL_NODE:
		return strcmp(x->node, y->node);
	default:
		return strcmp(x->msg, y->msg);
	}
}

static void remember(struct evs *v, const struct xp_event_log *log)
{
	long id = xp_list_current(&v->list);
	v->have_cur = id >= 0;
	if (!v->have_cur)
		return;
	size_t li = log->n - 1 - (size_t)id;
	v->cur_slot = (log->start + li) % log->cap;
	v->cur = *xp_event_get(log, li);
}

static void rebuild(struct evs *v, struct xp_ui *ui)
{
	const struct xp_event_log *log = xp_ui_events(ui);
	const char *f = xp_ui_filter(ui);
	v->ui = ui;
	/* Where the remembered event is now: its slot still holds it unless the ring wrapped over it. */
	long target = -1;
	/* A filter text the user just typed (not cleared) starts at its newest match (the top
	 * row), as the map's does; new events under the same filter, or clearing it, keep the
	 * cursor's event. */
	bool typed = *f && (!v->filter || strcmp(v->filter, f) != 0);
	if (v->have_cur && log->cap && !typed) {
		size_t li = (v->cur_slot + log->cap - log->start) % log->cap;
		const struct xp_event *e = xp_event_get(log, li);
		if (e && same_event(e, &v->cur))
			target = (long)li;
		else {
			/* An older event inserted in its time's place shifts the later ones: look. */
			target = 0;
			for (size_t i = log->n; i-- > 0;)
				if (same_event(xp_event_get(log, i), &v->cur)) {
					target = (long)i;
					break;
				}
		}
	}
	xp_list_filter(&v->list, log->n, *f ? event_matches : NULL, v, event_cmp, v);
	v->node_w = 0;
	v->oldest = 0;
	for (size_t i = 0; i < v->list.n; i++) {
		const struct xp_event *e = event_of(v, v->list.rows[i]);
		int w = xp_draw_cols(e->node);
		if (w > v->node_w)
			v->node_w = w;
		if (!v->oldest || e->time < v->oldest)
			v->oldest = e->time;
	}
	v->list.cursor = 0;
	if (typed)
		v->list.top = 0;
	if (target >= 0) {
		/* The same event, or when the filter hides it the next older one shown (in the
		 * newest-first order; another sort only finds the same event). */
		size_t tid = log->n - 1 - (size_t)target, i = 0;
		long at = xp_list_find(&v->list, tid);
		if (at < 0 && v->list.sort_col < 0) {
			while (i < v->list.n && v->list.rows[i] < tid)
				i++;
			at = (long)i;
		}
		if (at >= 0)
			xp_list_move_to(&v->list, at, 1);
	}
	v->ring = log->ring;
	v->start = log->start;
	v->count = log->n;
	v->sort_col = v->list.sort_col;
	v->sort_desc = v->list.sort_desc;
	free(v->filter);
	v->filter = xp_strdup(f);
	remember(v, log);
}

/* The app announces new data but not each new event: compare with what the rows were built from. */
static void sync(struct evs *v, struct xp_ui *ui)
{
	const struct xp_event_log *log = xp_ui_events(ui);
	if (!v->filter || log->ring != v->ring || log->start != v->start || log->n != v->count ||
	    strcmp(v->filter, xp_ui_filter(ui)) != 0 || v->sort_col != v->list.sort_col ||
	    v->sort_desc != v->list.sort_desc)
		rebuild(v, ui);
}

static struct xp_list_fit fit_columns(const struct evs *v, int time_w, int avail)
{
	int want[N_COLS] = {[COL_TIME] = time_w, [COL_SEV] = 4, [COL_NODE] = v->node_w};
	struct xp_list_fit fit;
	xp_list_fit(columns, want, N_COLS, avail, 2, &fit);
	return fit;
}

struct row_ctx {
	struct evs *v;
	struct xp_list_fit fit;
	int x0, maxx;
};

static void draw_row(void *arg, WINDOW *w, int y, size_t pos, bool sel)
{
	const struct row_ctx *c = arg;
	const struct xp_event *e = event_of(c->v, c->v->list.rows[pos]);
	int base = sel ? XP_ROLE_SELECTED : XP_ROLE_NORMAL;
	char when[32];
	struct tm et;
	localtime_r(&e->time, &et);
	/* The date only where it is not today's: the column is wide enough for it either way. */
	strftime(when, sizeof when, e->time < c->v->midnight ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &et);
	int sev = e->severity == XP_SEV_FAIL ? XP_ROLE_FAIL : e->severity == XP_SEV_WARN ? XP_ROLE_WARN : XP_ROLE_NORMAL;
	const char *text[N_COLS] = {when, xp_severity_name(e->severity), e->node[0] ? e->node : "-", e->msg};
	xp_draw_fill(w, y, c->x0 - 1, c->maxx, base);
	for (size_t j = 0; j < c->fit.n; j++)
		xp_list_draw_cell(w, y, c->x0 + c->fit.x[j], columns[j].fill ? c->maxx : c->fit.w[j], c->maxx,
				  j == COL_SEV && !sel ? sev : base, columns[j].align, text[j]);
}

static void draw(void *st, struct xp_ui *ui, WINDOW *w, struct xp_rect r)
{
	struct evs *v = st;
	sync(v, ui);
	if (r.h <= 0 || r.w <= 0)
		return;
	const struct xp_event_log *log = xp_ui_events(ui);
	int maxx = r.x + r.w;
	/* Dates only when some shown event is from before today. */
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	v->midnight = mktime(&tm);
	bool dates = v->list.n && v->oldest < v->midnight;
	struct row_ctx c = {v, fit_columns(v, dates ? 19 : 8, r.w - 1), r.x + 1, maxx};
	xp_list_draw_header(w, r.y, r.x, c.x0, maxx, columns, &c.fit, &v->list, xp_ui_glyphs(ui));
	struct xp_rect body = {r.y + 1, r.x, r.h - 1, r.w};
	xp_list_frame(&v->list, body.h);
	if (body.h <= 0)
		return;
	if (!v->list.n) {
		char msg[320];
		if (log->n)
			snprintf(msg, sizeof msg, " no event matches \"%s\" (Esc clears the filter)", v->filter);
		else
			snprintf(msg, sizeof msg, " no events yet");
		xp_list_draw_empty(w, body, msg);
		return;
	}
	xp_list_draw_rows(&v->list, w, body, draw_row, &c);
}

static int on_key(void *st, struct xp_ui *ui, int key)
{
	struct evs *v = st;
	sync(v, ui);
	if (xp_list_sort_key(&v->list, key, N_COLS)) {
		sync(v, ui);
		return XP_REACT_REDRAW;
	}
	if (!xp_list_key(&v->list, key))
		return XP_REACT_UNHANDLED;
	remember(v, xp_ui_events(ui));
	return XP_REACT_REDRAW;
}

static int on_wheel(void *st, struct xp_ui *ui, int dir)
{
	struct evs *v = st;
	sync(v, ui);
	xp_list_wheel(&v->list, dir);
	remember(v, xp_ui_events(ui));
	return XP_REACT_REDRAW;
}

static int on_click(void *st, struct xp_ui *ui, int y, int x)
{
	struct evs *v = st;
	(void)x;
	sync(v, ui);
	if (xp_list_click(&v->list, y - 1) == XP_LIST_MISS)
		return XP_REACT_NONE;
	remember(v, xp_ui_events(ui));
	return XP_REACT_REDRAW;
}

static void on_data(void *st, struct xp_ui *ui)
{
	sync(st, ui);
}

static const char *count(void *st, char *buf, size_t len)
{
	const struct evs *v = st;
	return xp_list_count(&v->list, buf, len);
}

static void *create(struct xp_ui *ui)
{
	(void)ui;
	struct evs *v = xp_calloc(1, sizeof *v);
	v->list = (struct xp_list)XP_LIST_INIT;
	v->sort_col = -1;
	return v;
}

static void destroy(void *st)
{
	struct evs *v = st;
	if (!v)
		return;
	xp_list_free(&v->list);
	free(v->filter);
	free(v);
}

static const struct xp_view_key keys[] = {
	{"Up/Down j/k", "move"},
	{"PgUp/PgDn Home/End", "page, newest, oldest"},
	{"s / S", "sort by the next column / reverse it"},
	{NULL, NULL},
};

const struct xp_view xp_view_events = {
	.name = "events",
	.title = "Events",
	.order = 5,
	.keys = keys,
	.create = create,
	.destroy = destroy,
	.draw = draw,
	.on_key = on_key,
	.on_click = on_click,
	.on_wheel = on_wheel,
	.on_data = on_data,
	.count = count,
	.filter_fields = event_fields,
};
