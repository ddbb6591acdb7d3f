/* view_problems.c: view 6, what is wrong now across the cluster: one row per problem of
 * xp_node_problems (the list `xpool health` prints), most severe first (open before
 * acknowledged, fail before warn, the node before its devices, then the oldest), with a
 * key to acknowledge (a), snooze (z, asks how long) or un-acknowledge (A) the problem under
 * the cursor. Those keys run `problem ack|snooze|unack` through the command table, so the
 * store and the audit log see exactly what the CLI does; an acknowledged row drops to the
 * bottom, dimmed, saying who and until when. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acks.h"
#include "draw.h"
#include "line_edit.h"
#include "list.h"
#include "list_draw.h"
#include "nameset.h"
#include "theme.h"
#include "view.h"
#include "words.h"
#include "xp.h"

enum { COL_SEV, COL_NODE, COL_WHAT, COL_REASON, COL_SINCE, COL_STATE, N_COLS };

static const struct xp_list_col columns[N_COLS] = {
	[COL_SEV] = {.title = "SEV"},
	[COL_NODE] = {.title = "NODE", .max = 32, .min = 8},
	[COL_WHAT] = {.title = "WHAT"},
	[COL_REASON] = {.title = "REASON", .max = 64, .min = 12},
	[COL_SINCE] = {.title = "SINCE"},
	[COL_STATE] = {.title = "ACK", .fill = true},
};

/* A problem's first-seen time, by its key (node, what, reason). */
struct seen {
	char *key;
	time_t t;
};

struct pv {
	struct xp_list list;
	/* The problems of the cluster shown (strings borrowed from its nodes), in order. */
	struct xp_problem *p;
	int *state;
	time_t *since;
	size_t n;
	/* First-seen times of the problems now shown (a problem that clears and comes back is new). */
	struct seen *seen;
	size_t n_seen;
	struct xp_nameset seen_by;
	/* What the rows were built from. */
	const struct xp_cluster *built;
	uint64_t built_gen, acks_gen;
	char *filter;
	time_t built_now;
	int widths[N_COLS];
	/* The row under the cursor, to find again after a rebuild. */
	char *cur_key;
	/* z: the snooze length being typed, for the problem in snooze_node / snooze_what. */
	bool editing;
	struct xp_ledit ed;
	char *snooze_node;
	char snooze_what[16];
	char *snooze_reason;
};

static char *key_of(const struct xp_problem *p)
{
	return xp_asprintf("%s\x1f%s\x1f%s", p->node, p->what, p->reason ? p->reason : "");
}

static void seen_free(struct pv *v)
{
	for (size_t i = 0; i < v->n_seen; i++)
		free(v->seen[i].key);
	free(v->seen);
	v->seen = NULL;
	v->n_seen = 0;
	xp_nameset_clear(&v->seen_by);
}

static const char *age_text(time_t since, time_t now, char *buf, size_t len)
{
	long s = (long)(now - since);
	if (s < 0)
		s = 0;
	if (s < 60)
		snprintf(buf, len, "%lds", s);
	else if (s < 3600)
		snprintf(buf, len, "%ldm", s / 60);
	else if (s < 86400)
		snprintf(buf, len, "%ldh%02ldm", s / 3600, s / 60 % 60);
	else
		snprintf(buf, len, "%ldd%02ldh", s / 86400, s / 3600 % 24);
	return buf;
}

/* The ACK cell: "acked by alice 10:02", "snoozed by bob until 14:00", or "" when open. */
static const char *ack_text(const struct xp_ack *k, char *buf, size_t len)
{
	char t[32];
	struct tm tm;
	if (!k) {
		buf[0] = '\0';
		return buf;
	}
	time_t at = k->kind == XP_ACK_SNOOZE ? k->until : k->time;
	localtime_r(&at, &tm);
	strftime(t, sizeof t, "%m-%d %H:%M", &tm);
	snprintf(buf, len, "%s by %s %s %s%s%s", k->kind == XP_ACK_SNOOZE ? "snoozed" : "acked", k->actor ? k->actor : "-",
		 k->kind == XP_ACK_SNOOZE ? "until" : "at", t, k->note ? ": " : "", k->note ? k->note : "");
	return buf;
}

/* Sort hook for s / S (the view's own order is the severity order). */
static int row_cmp(size_t a, size_t b, int col, void *arg)
{
	const struct pv *v = arg;
	const struct xp_problem *x = &v->p[a], *y = &v->p[b];
	switch (col) {
	case COL_SEV:
		return y->level - x->level;
	case COL_NODE:
		return strcmp(x->node, y->node);
	case COL_WHAT:
		return strcmp(x->what, y->what);
	case COL_REASON:
		return strcmp(x->reason ? x->reason : "", y->reason ? y->reason : "");
	case COL_SINCE:
		return (v->since[a] > v->since[b]) - (v->since[a] < v->since[b]);
	default:
		return v->state[a] - v->state[b];
	}
}

struct match_ctx {
	const struct pv *v;
	const struct xp_ui *ui;
};

static bool filter_row(size_t id, void *arg)
{
	const struct match_ctx *m = arg;
	const struct xp_problem *p = &m->v->p[id];
	return xp_ui_matches(m->ui, p->node) || xp_ui_matches(m->ui, p->what) || xp_ui_matches(m->ui, p->reason) ||
	       xp_ui_matches(m->ui, xp_health_name(p->level)) || xp_ui_matches(m->ui, xp_ack_state_name(m->v->state[id]));
}

static void remember(struct pv *v)
{
	long id = xp_list_current(&v->list);
	free(v->cur_key);
	v->cur_key = id >= 0 ? key_of(&v->p[id]) : NULL;
}

static void rebuild(struct pv *v, struct xp_ui *ui)
{
	const struct xp_cluster *c = xp_ui_cluster(ui);
	uint64_t agen;
	const struct xp_acks *acks = xp_ui_acks(ui, &agen);
	time_t now = xp_ui_now();
	free(v->p);
	v->p = NULL;
	v->n = 0;
	for (size_t i = 0; i < c->n_nodes; i++)
		xp_node_problems(c->nodes[i], &v->p, &v->n, NULL);
	free(v->state);
	free(v->since);
	v->state = xp_calloc(v->n + 1, sizeof *v->state);
	v->since = xp_calloc(v->n + 1, sizeof *v->since);
	/* First-seen times carry over for problems still there; the others start now. */
	struct seen *seen = xp_calloc(v->n + 1, sizeof *seen);
	struct xp_nameset by = {0};
	size_t ns = 0;
	for (size_t i = 0; i < v->n; i++) {
		char *k = key_of(&v->p[i]);
		struct seen *old = xp_nameset_get(&v->seen_by, k);
		time_t t = old ? old->t : now;
		if (xp_nameset_get(&by, k)) {
			/* The same words twice for one device: one key, one time. */
			t = ((struct seen *)xp_nameset_get(&by, k))->t;
			free(k);
		} else {
			seen[ns] = (struct seen){k, t};
			xp_nameset_put(&by, seen[ns].key, &seen[ns]);
			ns++;
		}
		v->since[i] = t;
		v->state[i] = xp_ack_state(acks, &v->p[i], now, NULL);
	}
	seen_free(v);
	v->seen = seen;
	v->n_seen = ns;
	v->seen_by = by;
	xp_problems_order(v->p, v->state, v->since, v->n);
	struct match_ctx m = {v, ui};
	const char *f = xp_ui_filter(ui);
	xp_list_filter(&v->list, v->n, *f ? filter_row : NULL, &m, row_cmp, v);
	/* Back to the problem the cursor was on, when it is still shown. */
	long at = -1;
	for (size_t i = 0; v->cur_key && i < v->list.n && at < 0; i++) {
		char *k = key_of(&v->p[v->list.rows[i]]);
		if (strcmp(k, v->cur_key) == 0)
			at = (long)i;
		free(k);
	}
	if (at >= 0)
		xp_list_move_to(&v->list, at, 1);
	memset(v->widths, 0, sizeof v->widths);
	v->widths[COL_SEV] = 4;
	v->widths[COL_WHAT] = 4;
	v->widths[COL_SINCE] = 6;
	v->widths[COL_STATE] = 0;
	for (size_t i = 0; i < v->list.n; i++) {
		const struct xp_problem *p = &v->p[v->list.rows[i]];
		int w = xp_draw_cols(p->node);
		if (w > v->widths[COL_NODE])
			v->widths[COL_NODE] = w;
		w = xp_draw_cols(p->what);
		if (w > v->widths[COL_WHAT])
			v->widths[COL_WHAT] = w;
		w = xp_draw_cols(p->reason ? p->reason : "");
		if (w > v->widths[COL_REASON])
			v->widths[COL_REASON] = w;
	}
	v->built = c;
	v->built_gen = c->generation;
	v->acks_gen = agen;
	v->built_now = now;
	free(v->filter);
	v->filter = xp_strdup(f);
	remember(v);
}

/* Rebuilds when the cluster, the acknowledgements, the filter, the sort or the minute changed
 * (a snooze that ends must shout again without a refresh). */
static void sync(struct pv *v, struct xp_ui *ui)
{
	const struct xp_cluster *c = xp_ui_cluster(ui);
	uint64_t agen;
	xp_ui_acks(ui, &agen);
	time_t now = xp_ui_now();
	bool expired = false;
	for (size_t i = 0; i < v->n && !expired; i++)
		if (v->state[i] == XP_ACK_SNOOZED) {
			const struct xp_ack *k;
			xp_ack_state(xp_ui_acks(ui, NULL), &v->p[i], v->built_now, &k);
			expired = k && now >= k->until;
		}
	if (!v->filter || c != v->built || c->generation != v->built_gen || agen != v->acks_gen || expired ||
	    strcmp(v->filter, xp_ui_filter(ui)) != 0)
		rebuild(v, ui);
}

struct row_ctx {
	struct pv *v;
	struct xp_ui *ui;
	struct xp_list_fit fit;
	int x0, maxx;
	time_t now;
};

static void draw_row(void *arg, WINDOW *w, int y, size_t pos, bool sel)
{
	const struct row_ctx *c = arg;
	size_t id = c->v->list.rows[pos];
	const struct xp_problem *p = &c->v->p[id];
	bool quiet = c->v->state[id] != XP_ACK_OPEN;
	int base = sel ? XP_ROLE_SELECTED : quiet ? XP_ROLE_DIM : XP_ROLE_NORMAL;
	int sev = quiet ? XP_ROLE_DIM : p->level == XP_HEALTH_FAIL ? XP_ROLE_FAIL : XP_ROLE_WARN;
	char since[32], ack[320];
	const struct xp_ack *k = NULL;
	if (quiet)
		xp_ack_state(xp_ui_acks(c->ui, NULL), p, c->now, &k);
	const char *text[N_COLS] = {xp_health_name(p->level), p->node, p->what, p->reason ? p->reason : "-",
				    age_text(c->v->since[id], c->now, since, sizeof since), ack_text(k, ack, sizeof ack)};
	xp_draw_fill(w, y, c->x0 - 1, c->maxx, base);
	for (size_t j = 0; j < c->fit.n; j++)
		xp_list_draw_cell(w, y, c->x0 + c->fit.x[j], columns[j].fill ? c->maxx : c->fit.w[j], c->maxx,
				  j == COL_SEV && !sel ? sev : base, columns[j].align, text[j]);
}

static void draw(void *st, struct xp_ui *ui, WINDOW *w, struct xp_rect r)
{
	struct pv *v = st;
	sync(v, ui);
	if (r.h <= 0 || r.w <= 0)
		return;
	int maxx = r.x + r.w;
	struct row_ctx c = {v, ui, {{0}}, r.x + 1, maxx, xp_ui_now()};
	xp_list_fit(columns, v->widths, N_COLS, r.w - 1, 2, &c.fit);
	xp_list_draw_header(w, r.y, r.x, c.x0, maxx, columns, &c.fit, &v->list, xp_ui_glyphs(ui));
	/* The snooze question takes the last row while it is asked. */
	int ask = v->editing ? 1 : 0;
	struct xp_rect body = {r.y + 1, r.x, r.h - 1 - ask, r.w};
	xp_list_frame(&v->list, body.h);
	if (ask && r.h >= 2) {
		int y = r.y + r.h - 1;
		char q[160];
		snprintf(q, sizeof q, " snooze %s %s for (30m, 4h, 1d; Enter, Esc): ", v->snooze_node, v->snooze_what);
		xp_draw_fill(w, y, r.x, maxx, XP_ROLE_PROMPT);
		int x = xp_draw_put(w, y, r.x, maxx, XP_ROLE_PROMPT, q, 0);
		size_t from = xp_ledit_scroll(&v->ed, maxx - x - 1);
		int cx = xp_draw_put(w, y, x, maxx, XP_ROLE_PROMPT, v->ed.text + from, 0);
		(void)cx;
	}
	if (body.h <= 0)
		return;
	if (!v->list.n) {
		char msg[320];
		if (v->n)
			snprintf(msg, sizeof msg, " no problem matches \"%s\" (Esc clears the filter)", v->filter);
		else
			snprintf(msg, sizeof msg, " no problems: every node is up and no device reports warn or fail");
		xp_list_draw_empty(w, body, msg);
		return;
	}
	xp_list_draw_rows(&v->list, w, body, draw_row, &c);
}

/* A word for the command line: in single quotes, a quote inside as '\'' (xp_cmd_split's rules). */
static char *quote(const char *w)
{
	size_t n = 3;
	for (const char *p = w; *p; p++)
		n += *p == '\'' ? 4 : 1;
	char *q = xp_malloc(n), *o = q;
	*o++ = '\'';
	for (const char *p = w; *p; p++)
		if (*p == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else
			*o++ = *p;
	*o++ = '\'';
	*o = '\0';
	return q;
}

/* Runs `problem WORDS NODE WHAT [EXTRA]` for the row and says how it went. */
static void run(struct xp_ui *ui, const char *sub, const char *node, const char *what, const char *extra)
{
	char *qn = quote(node), *qw = quote(what);
	char *line = xp_asprintf("problem %s %s %s%s%s", sub, qn, qw, extra ? " " : "", extra ? extra : "");
	free(qn);
	free(qw);
	char *out, *errs;
	int rc = xp_ui_command(ui, line, &out, &errs);
	const char *e = strncmp(errs, "xpool: ", 7) == 0 ? errs + 7 : errs;
	if (rc != XP_EXIT_OK)
		xp_ui_message(ui, XP_ROLE_FAIL, "%.*s", (int)strcspn(e, "\n"), *e ? e : "failed");
	else
		xp_ui_message(ui, XP_ROLE_OK, "%.*s", (int)strcspn(out, "\n"), out);
	free(out);
	free(errs);
	free(line);
}

/* The row the cursor goes to once the one under it is acknowledged (and drops to the bottom):
 * the next one, so the cursor stays in place and a run of `a` works down the list. */
static void stay(struct pv *v)
{
	size_t pos = v->list.cursor;
	if (pos + 1 < v->list.n) {
		free(v->cur_key);
		v->cur_key = key_of(&v->p[v->list.rows[pos + 1]]);
	}
}

static int pre_key(void *st, struct xp_ui *ui, int key)
{
	struct pv *v = st;
	if (!v->editing)
		return XP_REACT_UNHANDLED;
	int r = xp_ledit_key(&v->ed, key);
	if (r == XP_LEDIT_DONE) {
		v->editing = false;
		stay(v);
		char *q = quote(v->ed.text[0] ? v->ed.text : "1h"), *qr = quote(v->snooze_reason ? v->snooze_reason : "");
		char *extra = xp_asprintf("--for %s --reason %s", q, qr);
		run(ui, "snooze", v->snooze_node, v->snooze_what, extra);
		free(q);
		free(qr);
		free(extra);
	} else if (r == XP_LEDIT_CANCEL) {
		v->editing = false;
		xp_ui_message(ui, XP_ROLE_DIM, "not snoozed");
	}
	return XP_REACT_REDRAW;
}

static int on_key(void *st, struct xp_ui *ui, int key)
{
	struct pv *v = st;
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
	if (id < 0)
		return key == 'a' || key == 'z' || key == 'A' ? XP_REACT_REDRAW : XP_REACT_UNHANDLED;
	const struct xp_problem *p = &v->p[id];
	switch (key) {
	case 'a': {
		/* This row only: a node's rows share WHAT ("node"), and acknowledging a warning
		 * must not quiet the node being down. */
		stay(v);
		char *q = quote(p->reason ? p->reason : "");
		char *extra = xp_asprintf("--reason %s", q);
		run(ui, "ack", p->node, p->what, extra);
		free(q);
		free(extra);
		return XP_REACT_REDRAW;
	}
	case 'A':
		run(ui, "unack", p->node, p->what, NULL);
		return XP_REACT_REDRAW;
	case 'z':
		free(v->snooze_node);
		v->snooze_node = xp_strdup(p->node);
		snprintf(v->snooze_what, sizeof v->snooze_what, "%s", p->what);
		free(v->snooze_reason);
		v->snooze_reason = xp_strdup(p->reason ? p->reason : "");
		xp_ledit_start(&v->ed, "1h");
		v->editing = true;
		return XP_REACT_REDRAW;
	case '\n':
	case '\r':
	case KEY_ENTER:
		xp_ui_open_node(ui, p->node);
		return XP_REACT_REDRAW;
	default:
		return XP_REACT_UNHANDLED;
	}
}

static int on_wheel(void *st, struct xp_ui *ui, int dir)
{
	struct pv *v = st;
	sync(v, ui);
	xp_list_wheel(&v->list, dir);
	remember(v);
	return XP_REACT_REDRAW;
}

static int on_click(void *st, struct xp_ui *ui, int y, int x)
{
	struct pv *v = st;
	(void)x;
	sync(v, ui);
	enum xp_list_click k = xp_list_click(&v->list, y - 1);
	if (k == XP_LIST_MISS)
		return XP_REACT_NONE;
	remember(v);
	if (k == XP_LIST_ACTIVATE)
		xp_ui_open_node(ui, v->p[xp_list_current(&v->list)].node);
	return XP_REACT_REDRAW;
}

static void on_data(void *st, struct xp_ui *ui)
{
	/* The problems borrow the cluster's strings: the old cluster is gone, build now. */
	rebuild(st, ui);
}

static const char *count(void *st, char *buf, size_t len)
{
	const struct pv *v = st;
	return xp_list_count(&v->list, buf, len);
}

static const char *selected_node(void *st)
{
	const struct pv *v = st;
	long id = xp_list_current(&v->list);
	return id >= 0 ? v->p[id].node : NULL;
}

static void *create(struct xp_ui *ui)
{
	(void)ui;
	struct pv *v = xp_calloc(1, sizeof *v);
	v->list = (struct xp_list)XP_LIST_INIT;
	return v;
}

static void destroy(void *st)
{
	struct pv *v = st;
	if (!v)
		return;
	xp_list_free(&v->list);
	seen_free(v);
	free(v->p);
	free(v->state);
	free(v->since);
	free(v->filter);
	free(v->cur_key);
	free(v->snooze_node);
	free(v->snooze_reason);
	free(v);
}

static const struct xp_view_key keys[] = {
	{"Up/Down j/k", "move"},
	{"a", "acknowledge the problem (stored, audited: `problem ack`)"},
	{"z", "snooze it for a while (asks how long: 1h, 30m, 4h, 1d)"},
	{"A", "un-acknowledge it (`problem unack`)"},
	{"Enter", "open the node in view 1"},
	{"s / S", "sort by the next column / reverse it"},
	{NULL, NULL},
};

const struct xp_view xp_view_problems = {
	.name = "problems",
	.title = "Problems",
	.order = 6,
	.keys = keys,
	.create = create,
	.destroy = destroy,
	.draw = draw,
	.pre_key = pre_key,
	.on_key = on_key,
	.on_click = on_click,
	.on_wheel = on_wheel,
	.on_data = on_data,
	.count = count,
	.selected_node = selected_node,
};
