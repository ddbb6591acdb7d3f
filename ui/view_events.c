/* view_events.c: view 5, the event log: discovery and health events, newest
 * first, filtered by the `/` text. The cursor stays on the event it was on when
 * new ones arrive, although every event's place from the newest shifts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "draw.h"
#include "map_layout.h"
#include "theme.h"
#include "view.h"
#include "xp.h"

struct evs {
	size_t *idx;            /* shown events as log indexes (0 = oldest kept), newest first */
	size_t n, cap;
	size_t cursor, top;     /* positions in idx */
	/* The event under the cursor: its ring slot and a copy to recognise it by, because
	 * a full ring reuses slots and shifts every index. */
	bool have_cur;
	size_t cur_slot;
	struct xp_event cur;
	/* What idx was built from. */
	const struct xp_event *ring;
	size_t start, count;
	char *filter;
	int node_w;
	time_t oldest;          /* oldest shown event's time: decides whether dates are needed */
	int page;
};

static bool same_event(const struct xp_event *a, const struct xp_event *b)
{
	return a->time == b->time && a->severity == b->severity && strcmp(a->node, b->node) == 0 &&
	       strcmp(a->msg, b->msg) == 0;
}

static bool event_matches(const struct xp_ui *ui, const struct xp_event *e)
{
	return xp_ui_matches(ui, e->node) || xp_ui_matches(ui, e->msg) ||
	       xp_ui_matches(ui, xp_severity_name(e->severity));
}

static void remember(struct evs *v, const struct xp_event_log *log)
{
	v->have_cur = v->n > 0;
	if (!v->have_cur)
		return;
	size_t li = v->idx[v->cursor];
	v->cur_slot = (log->start + li) % log->cap;
	v->cur = *xp_event_get(log, li);
}

static void rebuild(struct evs *v, struct xp_ui *ui)
{
	const struct xp_event_log *log = xp_ui_events(ui);
	const char *f = xp_ui_filter(ui);
	/* Where the remembered event is now: its slot still holds it unless the ring wrapped over it. */
	long target = -1;
	if (v->have_cur && log->cap) {
		size_t li = (v->cur_slot + log->cap - log->start) % log->cap;
		const struct xp_event *e = xp_event_get(log, li);
		target = e && same_event(e, &v->cur) ? (long)li : 0;
	}
	v->n = 0;
	v->node_w = 4;
	v->oldest = 0;
	for (size_t k = log->n; k-- > 0;) {
		const struct xp_event *e = xp_event_get(log, k);
		if (*f && !event_matches(ui, e))
			continue;
		xp_grow(&v->idx, sizeof *v->idx, v->n, &v->cap);
		v->idx[v->n++] = k;
		int w = xp_draw_cols(e->node);
		if (w > v->node_w)
			v->node_w = w;
		if (!v->oldest || e->time < v->oldest)
			v->oldest = e->time;
	}
	if (v->node_w > 24)
		v->node_w = 24;
	v->cursor = 0;
	if (target >= 0) {
		/* The same event, or when the filter hides it the next older one shown. */
		size_t i = 0;
		while (i < v->n && v->idx[i] > (size_t)target)
			i++;
		v->cursor = i < v->n ? i : (v->n ? v->n - 1 : 0);
	}
	v->ring = log->ring;
	v->start = log->start;
	v->count = log->n;
	free(v->filter);
	v->filter = xp_strdup(f);
	remember(v, log);
}

/* The app announces new data but not each new event: compare with what idx was built from. */
static void sync(struct evs *v, struct xp_ui *ui)
{
	const struct xp_event_log *log = xp_ui_events(ui);
	if (!v->filter || log->ring != v->ring || log->start != v->start || log->n != v->count ||
	    strcmp(v->filter, xp_ui_filter(ui)) != 0)
		rebuild(v, ui);
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
	time_t midnight = mktime(&tm);
	bool dates = v->n && v->oldest < midnight;
	int time_w = dates ? 19 : 8;

	int x = r.x + 1;
	xp_draw_fill(w, r.y, r.x, maxx, XP_ROLE_TITLE);
	xp_draw_put(w, r.y, x, maxx, XP_ROLE_TITLE, "TIME", 0);
	xp_draw_put(w, r.y, x + time_w + 2, maxx, XP_ROLE_TITLE, "SEV", 0);
	xp_draw_put(w, r.y, x + time_w + 8, maxx, XP_ROLE_TITLE, "NODE", 0);
	xp_draw_put(w, r.y, x + time_w + 10 + v->node_w, maxx, XP_ROLE_TITLE, "MESSAGE", 0);
	int h = r.h - 1;
	v->page = h > 1 ? h : 1;
	if (h <= 0)
		return;
	if (!v->n) {
		char msg[320];
		if (log->n)
			snprintf(msg, sizeof msg, " no event matches \"%s\" (Esc clears the filter)", v->filter);
		else
			snprintf(msg, sizeof msg, " no events yet");
		int end = xp_draw_put(w, r.y + 1, r.x, maxx, XP_ROLE_DIM, msg, 0);
		xp_draw_fill(w, r.y + 1, end, maxx, XP_ROLE_NORMAL);
		for (int i = 2; i <= h; i++)
			xp_draw_fill(w, r.y + i, r.x, maxx, XP_ROLE_NORMAL);
		return;
	}
	v->top = xp_scroll_top(v->top, v->cursor, (size_t)h, v->n);
	for (int i = 0; i < h; i++) {
		int y = r.y + 1 + i;
		size_t row = v->top + (size_t)i;
		if (row >= v->n) {
			xp_draw_fill(w, y, r.x, maxx, XP_ROLE_NORMAL);
			continue;
		}
		const struct xp_event *e = xp_event_get(log, v->idx[row]);
		bool sel = row == v->cursor;
		int base = sel ? XP_ROLE_SELECTED : XP_ROLE_NORMAL;
		char when[32];
		struct tm et;
		localtime_r(&e->time, &et);
		/* The date only where it is not today's: the column is wide enough for it either way. */
		strftime(when, sizeof when, e->time < midnight ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &et);
		int sev = e->severity == XP_SEV_FAIL ? XP_ROLE_FAIL : e->severity == XP_SEV_WARN ? XP_ROLE_WARN : XP_ROLE_NORMAL;
		xp_draw_fill(w, y, r.x, maxx, base);
		x = r.x + 1;
		xp_draw_put(w, y, x, maxx, base, when, 0);
		x += time_w + 2;
		xp_draw_put(w, y, x, maxx, sel ? base : sev, xp_severity_name(e->severity), 0);
		x += 6;
		xp_draw_put(w, y, x, x + v->node_w < maxx ? x + v->node_w : maxx, base, e->node[0] ? e->node : "-", 0);
		x += v->node_w + 2;
		xp_draw_put(w, y, x, maxx, base, e->msg, 0);
	}
}

static int on_key(void *st, struct xp_ui *ui, int key)
{
	struct evs *v = st;
	sync(v, ui);
	switch (key) {
	case KEY_UP:
	case 'k':
		v->cursor = xp_scroll_move(v->cursor, -1, v->n);
		break;
	case KEY_DOWN:
	case 'j':
		v->cursor = xp_scroll_move(v->cursor, 1, v->n);
		break;
	case KEY_PPAGE:
		v->cursor = xp_scroll_page(v->cursor, (size_t)v->page, v->n, -1);
		break;
	case KEY_NPAGE:
		v->cursor = xp_scroll_page(v->cursor, (size_t)v->page, v->n, 1);
		break;
	case KEY_HOME:
	case 'g':
		v->cursor = 0;
		break;
	case KEY_END:
	case 'G':
		v->cursor = v->n ? v->n - 1 : 0;
		break;
	default:
		return XP_REACT_UNHANDLED;
	}
	remember(v, xp_ui_events(ui));
	return XP_REACT_REDRAW;
}

static int on_click(void *st, struct xp_ui *ui, int y, int x)
{
	struct evs *v = st;
	(void)x;
	sync(v, ui);
	size_t row = v->top + (size_t)(y - 1);
	if (y < 1 || row >= v->n)
		return XP_REACT_NONE;
	v->cursor = row;
	remember(v, xp_ui_events(ui));
	return XP_REACT_REDRAW;
}

static void on_data(void *st, struct xp_ui *ui)
{
	sync(st, ui);
}

static void *create(struct xp_ui *ui)
{
	(void)ui;
	return xp_calloc(1, sizeof(struct evs));
}

static void destroy(void *st)
{
	struct evs *v = st;
	if (!v)
		return;
	free(v->idx);
	free(v->filter);
	free(v);
}

static const struct xp_view_key keys[] = {
	{"Up/Down j/k", "move"},
	{"PgUp/PgDn Home/End", "page, newest, oldest"},
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
	.on_data = on_data,
};
