/* view_agents.c: view 7, the node agents at a glance: each agent's URL and node, state,
 * round-trip time, data age, clock skew against this console, polls, 304s, rejected
 * replies and last error, sortable (s, S). It draws only the copy the refresh thread made
 * after its last poll (xp_ui_agent_snaps), so nothing an agent does (hang, trickle, vanish)
 * can hold up a key. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "live.h"
#include "draw.h"
#include "list.h"
#include "list_draw.h"
#include "theme.h"
#include "view.h"
#include "xp.h"

enum { COL_URL, COL_NODE, COL_STATE, COL_RTT, COL_AGE, COL_SKEW, COL_POLLS, COL_304, COL_REJ, COL_ERROR, N_COLS };

static const struct xp_list_col columns[N_COLS] = {
	[COL_URL] = {.title = "AGENT", .max = 48, .min = 12},
	[COL_NODE] = {.title = "NODE", .max = 32, .min = 8},
	[COL_STATE] = {.title = "STATE"},
	[COL_RTT] = {.title = "RTT", .align = XP_ALIGN_RIGHT},
	[COL_AGE] = {.title = "DATA AGE", .align = XP_ALIGN_RIGHT},
	[COL_SKEW] = {.title = "SKEW", .align = XP_ALIGN_RIGHT},
	[COL_POLLS] = {.title = "POLLS", .align = XP_ALIGN_RIGHT},
	[COL_304] = {.title = "304S", .align = XP_ALIGN_RIGHT},
	[COL_REJ] = {.title = "REJECTED", .align = XP_ALIGN_RIGHT},
	[COL_ERROR] = {.title = "LAST ERROR", .fill = true},
};

/* Skew that a refresh interval's rounding cannot explain: worth a colour, seconds. */
#define SKEW_WARN_S 2.0

struct av {
	struct xp_list list;
	struct xp_agent_snap *a;
	size_t n;
	uint64_t gen;
	bool polled;       /* a poll has ended (with or without agents) */
	char *filter;
	int sort_col;
	bool sort_desc;
	char *cur_url;     /* the agent under the cursor, found again after each poll */
};

static const char *state_word(const struct xp_agent_snap *s)
{
	return s->up ? "up" : s->ever ? "down" : "never";
}

struct mctx {
	struct av *v;
	const struct xp_ui *ui;
};

static bool filter_row(size_t id, void *arg)
{
	const struct mctx *m = arg;
	const struct xp_agent_snap *s = &m->v->a[id];
	return xp_ui_matches(m->ui, s->url) || xp_ui_matches(m->ui, s->node) || xp_ui_matches(m->ui, s->error) ||
	       xp_ui_matches(m->ui, state_word(s));
}

static int dcmp(double a, double b)
{
	return (a > b) - (a < b);
}

static int row_cmp(size_t x, size_t y, int col, void *arg)
{
	const struct av *v = arg;
	const struct xp_agent_snap *a = &v->a[x], *b = &v->a[y];
	switch (col) {
	case COL_URL:
		return strcmp(a->url, b->url);
	case COL_NODE:
		return strcmp(a->node ? a->node : "", b->node ? b->node : "");
	case COL_STATE:
		return strcmp(state_word(a), state_word(b));
	case COL_RTT:
		return dcmp(a->latency_ms, b->latency_ms);
	case COL_AGE:
		/* Older data first when descending: never-heard agents are the oldest. */
		return dcmp(a->last_ok ? -(double)a->last_ok : -1e18, b->last_ok ? -(double)b->last_ok : -1e18);
	case COL_SKEW:
		return dcmp(a->have_skew ? fabs(a->skew_s) : -1, b->have_skew ? fabs(b->skew_s) : -1);
	case COL_POLLS:
		return dcmp((double)a->polls, (double)b->polls);
	case COL_304:
		return dcmp((double)a->not_modified, (double)b->not_modified);
	case COL_REJ:
		return dcmp((double)a->rejected, (double)b->rejected);
	default:
		return strcmp(a->error ? a->error : "", b->error ? b->error : "");
	}
}

static void remember(struct av *v)
{
	long id = xp_list_current(&v->list);
	free(v->cur_url);
	v->cur_url = id >= 0 ? xp_strdup(v->a[id].url) : NULL;
}

static void rebuild(struct av *v, struct xp_ui *ui)
{
	const char *f = xp_ui_filter(ui);
	struct mctx m = {v, ui};
	xp_list_filter(&v->list, v->n, *f ? filter_row : NULL, &m, row_cmp, v);
	for (size_t i = 0; v->cur_url && i < v->list.n; i++)
		if (strcmp(v->a[v->list.rows[i]].url, v->cur_url) == 0) {
			xp_list_move_to(&v->list, (long)i, 1);
			break;
		}
	free(v->filter);
	v->filter = xp_strdup(f);
	v->sort_col = v->list.sort_col;
	v->sort_desc = v->list.sort_desc;
	remember(v);
}

/* Takes a new copy when a poll ended since the last one; rebuilds the rows when it, the
 * filter or the sort changed. */
static void sync(struct av *v, struct xp_ui *ui)
{
	struct xp_agent_snap *a;
	size_t n;
	bool fresh = xp_ui_agent_snaps(ui, &v->gen, &a, &n);
	if (fresh) {
		xp_agent_snaps_free(v->a, v->n);
		v->a = a;
		v->n = n;
		v->polled = true;
	}
	if (fresh || !v->filter || strcmp(v->filter, xp_ui_filter(ui)) != 0 || v->sort_col != v->list.sort_col ||
	    v->sort_desc != v->list.sort_desc)
		rebuild(v, ui);
}

static const char *age_text(time_t t, time_t now, char *buf, size_t len)
{
	if (!t) {
		snprintf(buf, len, "-");
		return buf;
	}
	long s = (long)(now - t);
	if (s < 0)
		s = 0;
	if (s < 120)
		snprintf(buf, len, "%lds", s);
	else if (s < 7200)
		snprintf(buf, len, "%ldm", s / 60);
	else
		snprintf(buf, len, "%ldh", s / 3600);
	return buf;
}

/* The cells of agent s as text. */
static void cells(const struct xp_agent_snap *s, time_t now, char buf[N_COLS][64], const char *text[N_COLS])
{
	text[COL_URL] = s->url;
	text[COL_NODE] = s->node ? s->node : "-";
	text[COL_STATE] = state_word(s);
	if (s->latency_ms >= 0)
		snprintf(buf[COL_RTT], 64, s->latency_ms < 10 ? "%.1f ms" : "%.0f ms", s->latency_ms);
	else
		snprintf(buf[COL_RTT], 64, "-");
	text[COL_RTT] = buf[COL_RTT];
	text[COL_AGE] = age_text(s->last_ok, now, buf[COL_AGE], 64);
	if (s->have_skew)
		snprintf(buf[COL_SKEW], 64, fabs(s->skew_s) < 10 ? "%+.2f s" : "%+.0f s", s->skew_s);
	else
		snprintf(buf[COL_SKEW], 64, "-");
	text[COL_SKEW] = buf[COL_SKEW];
	snprintf(buf[COL_POLLS], 64, "%llu", (unsigned long long)s->polls);
	text[COL_POLLS] = buf[COL_POLLS];
	snprintf(buf[COL_304], 64, "%llu", (unsigned long long)s->not_modified);
	text[COL_304] = buf[COL_304];
	snprintf(buf[COL_REJ], 64, "%llu", (unsigned long long)s->rejected);
	text[COL_REJ] = buf[COL_REJ];
	text[COL_ERROR] = s->error ? s->error : "";
}

struct row_ctx {
	struct av *v;
	struct xp_list_fit fit;
	int x0, maxx;
	time_t now;
};

static void draw_row(void *arg, WINDOW *w, int y, size_t pos, bool sel)
{
	const struct row_ctx *c = arg;
	const struct xp_agent_snap *s = &c->v->a[c->v->list.rows[pos]];
	int base = sel ? XP_ROLE_SELECTED : XP_ROLE_NORMAL;
	char buf[N_COLS][64];
	const char *text[N_COLS];
	cells(s, c->now, buf, text);
	xp_draw_fill(w, y, c->x0 - 1, c->maxx, base);
	for (size_t j = 0; j < c->fit.n; j++) {
		int role = base;
		if (!sel && j == COL_STATE)
			role = s->up ? XP_ROLE_OK : XP_ROLE_FAIL;
		else if (!sel && j == COL_SKEW && s->have_skew && fabs(s->skew_s) >= SKEW_WARN_S)
			role = XP_ROLE_WARN;
		else if (!sel && j == COL_ERROR)
			role = XP_ROLE_FAIL;
		xp_list_draw_cell(w, y, c->x0 + c->fit.x[j], columns[j].fill ? c->maxx : c->fit.w[j], c->maxx, role,
				  columns[j].align, text[j]);
	}
}

static void draw(void *st, struct xp_ui *ui, WINDOW *w, struct xp_rect r)
{
	struct av *v = st;
	sync(v, ui);
	if (r.h <= 0 || r.w <= 0)
		return;
	time_t now = time(NULL);
	int want[N_COLS] = {0};
	for (size_t i = 0; i < v->list.n; i++) {
		char buf[N_COLS][64];
		const char *text[N_COLS];
		cells(&v->a[v->list.rows[i]], now, buf, text);
		for (int j = 0; j < N_COLS; j++) {
			int cw = xp_draw_cols(text[j]);
			if (cw > want[j])
				want[j] = cw;
		}
	}
	struct row_ctx c = {v, {{0}}, r.x + 1, r.x + r.w, now};
	xp_list_fit(columns, want, N_COLS, r.w - 1, 2, &c.fit);
	xp_list_draw_header(w, r.y, r.x, c.x0, c.maxx, columns, &c.fit, &v->list, xp_ui_glyphs(ui));
	struct xp_rect body = {r.y + 1, r.x, r.h - 1, r.w};
	xp_list_frame(&v->list, body.h);
	if (body.h <= 0)
		return;
	if (!v->list.n) {
		char msg[320];
		if (v->n)
			snprintf(msg, sizeof msg, " no agent matches \"%s\" (Esc clears the filter)", v->filter);
		else if (!v->polled)
			snprintf(msg, sizeof msg, " waiting for the first refresh...");
		else
			snprintf(msg, sizeof msg,
				 " no node agents: `:agent add URL` adds one (or start with --agent URL, --agents FILE;"
				 " `xpool agent` serves a node)");
		xp_list_draw_empty(w, body, msg);
		return;
	}
	xp_list_draw_rows(&v->list, w, body, draw_row, &c);
}

static int on_key(void *st, struct xp_ui *ui, int key)
{
	struct av *v = st;
	sync(v, ui);
	if (xp_list_sort_key(&v->list, key, N_COLS)) {
		rebuild(v, ui);
		return XP_REACT_REDRAW;
	}
	if (xp_list_key(&v->list, key)) {
		remember(v);
		return XP_REACT_REDRAW;
	}
	long id = xp_list_current(&v->list);
	if ((key == '\n' || key == '\r' || key == KEY_ENTER) && id >= 0 && v->a[id].node) {
		xp_ui_open_node(ui, v->a[id].node);
		return XP_REACT_REDRAW;
	}
	return XP_REACT_UNHANDLED;
}

static int on_wheel(void *st, struct xp_ui *ui, int dir)
{
	struct av *v = st;
	sync(v, ui);
	xp_list_wheel(&v->list, dir);
	remember(v);
	return XP_REACT_REDRAW;
}

static int on_click(void *st, struct xp_ui *ui, int y, int x)
{
	struct av *v = st;
	(void)x;
	sync(v, ui);
	if (xp_list_click(&v->list, y - 1) == XP_LIST_MISS)
		return XP_REACT_NONE;
	remember(v);
	return XP_REACT_REDRAW;
}

static const char *count(void *st, char *buf, size_t len)
{
	const struct av *v = st;
	return xp_list_count(&v->list, buf, len);
}

static void *create(struct xp_ui *ui)
{
	(void)ui;
	struct av *v = xp_calloc(1, sizeof *v);
	v->list = (struct xp_list)XP_LIST_INIT;
	v->sort_col = -1;
	return v;
}

static void destroy(void *st)
{
	struct av *v = st;
	if (!v)
		return;
	xp_list_free(&v->list);
	xp_agent_snaps_free(v->a, v->n);
	free(v->filter);
	free(v->cur_url);
	free(v);
}

static const struct xp_view_key keys[] = {
	{"Up/Down j/k", "move"},
	{"s / S", "sort by the next column / reverse it"},
	{"Enter", "open the agent's node in view 1"},
	{":agent add URL", "add an agent (:agent rm URL removes one)"},
	{NULL, NULL},
};

const struct xp_view xp_view_agents = {
	.name = "agents",
	.title = "Agents",
	.order = 7,
	.keys = keys,
	.create = create,
	.destroy = destroy,
	.draw = draw,
	.on_key = on_key,
	.on_click = on_click,
	.on_wheel = on_wheel,
	.count = count,
};
