/* view_fleet.c: view 8, the fleet at a glance: a heatmap with one cell per node, grouped by
 * rack (each rack's name, then its nodes' cells; racks sit side by side while they fit the
 * width), coloured by one metric chosen with m (utilization, memory, temperature, power,
 * free devices, health) on five levels, with a legend of the scale. Every level has a glyph
 * of its own as well as a colour, so the map reads without colour. The cursor moves over
 * the cells (arrows, hjkl), the status line names the node under it and its value, and
 * Enter opens the node in view 1 (xp_ui_open_node).
 *
 * The layout (each cell's row and column) is made when the data, the metric, the filter or
 * the width change, never per frame: a frame draws the rows on screen from arrays. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "theme.h"
#include "view.h"
#include "xp.h"

enum metric { M_UTIL, M_MEM, M_TEMP, M_POWER, M_FREE, M_HEALTH, N_METRICS };

static const char *const metric_names[N_METRICS] = {"util", "mem", "temp", "power", "free", "health"};

/* The scale of each metric: the lower bound of levels 1..4 (level 0 below the first). */
static const double bounds[N_METRICS][4] = {
	[M_UTIL] = {20, 40, 60, 80},   /* % */
	[M_MEM] = {20, 40, 60, 80},    /* % used */
	[M_TEMP] = {45, 60, 75, 85},   /* hottest device, C */
	[M_POWER] = {20, 40, 60, 80},  /* % of the devices' power limits (of the fleet's top node without limits) */
	[M_FREE] = {1, 25, 50, 75},    /* % of the node's devices free: level 0 is none free */
	[M_HEALTH] = {1, 2, 3, 4},     /* unused: health has its own cells */
};

/* Five glyphs, lowest to highest: distinct without colour. */
static const char *const ramp_utf8[5] = {"\u2581", "\u2583", "\u2584", "\u2586", "\u2588"};
static const char *const ramp_ascii[5] = {".", ":", "+", "#", "@"};
static const int ramp_roles[5] = {XP_ROLE_UTIL_0, XP_ROLE_UTIL_20, XP_ROLE_UTIL_40, XP_ROLE_UTIL_60, XP_ROLE_UTIL_80};

/* A cell's level beyond the ramp. */
enum { LV_UNKNOWN = -1, LV_OK = 10, LV_WARN, LV_FAIL, LV_DOWN, LV_STALE };

/* One rack's run of cells: its heading at (y, x), then cells first..first+count-1. */
struct seg {
	int y, x;
	const char *rack;
	size_t first, count;
};

struct fv {
	int metric;
	/* What the layout was made from. */
	const struct xp_cluster *built;
	uint64_t gen;
	int width;
	int built_metric;
	char *filter;
	/* The cells in order: node index, level, value (NAN when not known), place. */
	size_t *node;
	signed char *level;
	double *value;
	int *cy, *cx;
	size_t n, total;
	struct seg *segs;
	size_t n_segs;
	/* rows: the first cell on each layout row (row_first[rows] = n), for Up/Down and clicks */
	size_t *row_first;
	int rows;
	size_t cursor;
	int top;
	int page;
	char *cur_name;  /* the node under the cursor, found again after a rebuild */
	const struct xp_glyphs *g;
};

/* Natural order of rack names ("rack2" before "rack10"); unknown last. */
static int nat_cmp(const char *a, const char *b)
{
	if (!a || !b)
		return !a - !b;
	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			while (*a == '0')
				a++;
			while (*b == '0')
				b++;
			size_t la = strspn(a, "0123456789"), lb = strspn(b, "0123456789");
			if (la != lb)
				return la < lb ? -1 : 1;
			int c = strncmp(a, b, la);
			if (c)
				return c;
			a += la;
			b += lb;
		} else {
			if (*a != *b)
				return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
			a++;
			b++;
		}
	}
	return (*a != 0) - (*b != 0);
}

static const struct xp_cluster *sort_c;

static int node_cmp(const void *x, const void *y)
{
	const struct xp_node *a = sort_c->nodes[*(const size_t *)x], *b = sort_c->nodes[*(const size_t *)y];
	int c = nat_cmp(a->rack, b->rack);
	if (!c)
		c = nat_cmp(a->name, b->name);
	return c;
}

/* The node's value of metric m (NAN when not known) and, through lim, the power limits. */
static double node_value(const struct xp_node *n, int m, double *lim)
{
	double sum = 0, l = 0, top = NAN;
	int64_t used = 0, total = 0;
	size_t k = 0, free_n = 0;
	bool all_lim = true;
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct xp_device *d = &n->devices[i];
		switch (m) {
		case M_UTIL:
			if (XP_HAS(d->utilization_pct)) {
				sum += d->utilization_pct;
				k++;
			}
			break;
		case M_MEM:
			if (d->memory_mib > 0 && d->memory_used_mib >= 0) {
				used += d->memory_used_mib;
				total += d->memory_mib;
			}
			break;
		case M_TEMP:
			if (XP_HAS(d->temperature_c) && (isnan(top) || d->temperature_c > top))
				top = d->temperature_c;
			break;
		case M_POWER:
			if (XP_HAS(d->power_w)) {
				sum += d->power_w;
				k++;
				if (XP_HAS(d->power_limit_w) && d->power_limit_w > 0)
					l += d->power_limit_w;
				else
					all_lim = false;
			}
			break;
		case M_FREE:
			free_n += xp_device_is_free(n, d);
			break;
		default:
			break;
		}
	}
	switch (m) {
	case M_UTIL:
		return k ? sum / (double)k : NAN;
	case M_MEM:
		return total ? 100.0 * (double)used / (double)total : NAN;
	case M_TEMP:
		return top;
	case M_POWER:
		*lim = k && all_lim ? l : 0;
		return k ? sum : NAN;
	case M_FREE:
		return n->n_devices ? (double)free_n : NAN;
	default:
		return NAN;
	}
}

static int band(int m, double pct)
{
	int lv = 0;
	while (lv < 4 && pct >= bounds[m][lv])
		lv++;
	return lv;
}

/* The node's cell for health: its state first (down, unreachable), then its worst device. */
static int health_level(const struct xp_node *n)
{
	if (n->state == XP_NODE_DOWN)
		return LV_DOWN;
	if (n->state == XP_NODE_UNREACHABLE)
		return LV_STALE;
	int worst = n->state == XP_NODE_UP ? -1 : LV_WARN;
	bool known = false;
	for (size_t i = 0; i < n->n_devices; i++) {
		int h = n->devices[i].health;
		if (h == XP_HEALTH_FAIL)
			return LV_FAIL;
		if (h == XP_HEALTH_WARN)
			worst = LV_WARN;
		known |= h == XP_HEALTH_OK;
	}
	return worst >= 0 ? worst : known ? LV_OK : LV_UNKNOWN;
}

static const char *cur_name(const struct fv *v, const struct xp_cluster *c)
{
	return v->n ? c->nodes[v->node[v->cursor]]->name : NULL;
}

/* Each shown node's value and level of the current metric (the layout does not depend on it:
 * m costs only this). */
static void levels(struct fv *v, const struct xp_cluster *c)
{
	/* Power without limits is judged against the fleet's top node, so its scale is relative. */
	double top_power = 0;
	double *lims = xp_calloc(v->n + 1, sizeof *lims);
	for (size_t i = 0; i < v->n; i++) {
		const struct xp_node *n = c->nodes[v->node[i]];
		v->value[i] = v->metric == M_HEALTH ? NAN : node_value(n, v->metric, &lims[i]);
		if (v->metric == M_POWER && XP_HAS(v->value[i]) && !lims[i] && v->value[i] > top_power)
			top_power = v->value[i];
	}
	for (size_t i = 0; i < v->n; i++) {
		const struct xp_node *n = c->nodes[v->node[i]];
		double x = v->value[i];
		int lv;
		if (v->metric == M_HEALTH)
			lv = health_level(n);
		else if (n->state == XP_NODE_DOWN)
			lv = LV_DOWN;
		else if (n->state == XP_NODE_UNREACHABLE)
			lv = LV_STALE;
		else if (isnan(x))
			lv = LV_UNKNOWN;
		else if (v->metric == M_POWER)
			lv = band(M_POWER, lims[i] > 0 ? 100 * x / lims[i] : top_power > 0 ? 100 * x / top_power : 0);
		else if (v->metric == M_FREE)
			lv = band(M_FREE, 100 * x / (double)n->n_devices);
		else
			lv = band(v->metric, x);
		v->level[i] = (signed char)lv;
	}
	free(lims);
	v->built_metric = v->metric;
}

/* The values and levels of every shown node, then the layout for width w. */
static void rebuild(struct fv *v, struct xp_ui *ui, int w)
{
	const struct xp_cluster *c = xp_ui_cluster(ui);
	v->g = xp_ui_glyphs(ui);
	/* A refresh usually brings the same nodes in the same places: the last order, when it
	 * still covers every shown node and is still sorted, saves the sort. */
	size_t *old = v->node, n_old = v->n;
	bool same_set = old && v->filter && strcmp(v->filter, xp_ui_filter(ui)) == 0 && !xp_ui_filter(ui)[0] &&
			n_old == c->n_nodes;
	free(v->level);
	free(v->value);
	free(v->cy);
	free(v->cx);
	free(v->segs);
	free(v->row_first);
	v->row_first = NULL;
	size_t cap = c->n_nodes ? c->n_nodes : 1;
	v->node = xp_calloc(cap, sizeof *v->node);
	v->level = xp_calloc(cap, sizeof *v->level);
	v->value = xp_calloc(cap, sizeof *v->value);
	v->cy = xp_calloc(cap, sizeof *v->cy);
	v->cx = xp_calloc(cap, sizeof *v->cx);
	v->segs = NULL;
	v->n_segs = 0;
	v->n = 0;
	v->total = c->n_nodes;
	sort_c = c;
	bool sorted = same_set;
	for (size_t i = 1; sorted && i < n_old; i++)
		sorted = node_cmp(&old[i - 1], &old[i]) <= 0;
	if (sorted) {
		/* No filter and as many nodes: old is a permutation of all of them. */
		memcpy(v->node, old, n_old * sizeof *old);
		v->n = n_old;
	} else {
		for (size_t i = 0; i < c->n_nodes; i++) {
			const struct xp_node *n = c->nodes[i];
			if (xp_ui_matches(ui, n->name) || xp_ui_matches(ui, n->rack))
				v->node[v->n++] = i;
		}
		qsort(v->node, v->n, sizeof *v->node, node_cmp);
	}
	free(old);
	levels(v, c);
	/* Layout: each rack a run "NAME cells", runs side by side with two blanks between while
	 * they fit; a run longer than the width wraps under its own heading. */
	int maxlab = 0;
	size_t segcap = 0;
	for (size_t i = 0; i < v->n;) {
		const char *rack = c->nodes[v->node[i]]->rack;
		size_t j = i;
		while (j < v->n && nat_cmp(c->nodes[v->node[j]]->rack, rack) == 0)
			j++;
		xp_grow(&v->segs, sizeof *v->segs, v->n_segs, &segcap);
		v->segs[v->n_segs++] = (struct seg){0, 0, rack, i, j - i};
		int lw = xp_draw_cols(rack ? rack : "-");
		if (lw > maxlab)
			maxlab = lw;
		i = j;
	}
	if (maxlab > 16)
		maxlab = 16;
	int y = 0, x = 0;
	if (w < maxlab + 4)
		w = maxlab + 4;
	for (size_t s = 0; s < v->n_segs; s++) {
		struct seg *sg = &v->segs[s];
		int need = maxlab + 1 + (int)sg->count;
		if (x > 0 && x + 2 + need > w) {
			y++;
			x = 0;
		} else if (x > 0)
			x += 2;
		sg->y = y;
		sg->x = x;
		int cx = x + maxlab + 1;
		for (size_t k = 0; k < sg->count; k++) {
			if (cx >= w) {
				y++;
				cx = maxlab + 1;
			}
			v->cy[sg->first + k] = y;
			v->cx[sg->first + k] = cx++;
		}
		x = cx;
	}
	v->rows = v->n ? y + 1 : 0;
	v->row_first = xp_calloc((size_t)v->rows + 1, sizeof *v->row_first);
	for (int r = 0, i = 0; r <= v->rows; r++) {
		while ((size_t)i < v->n && v->cy[i] < r)
			i++;
		v->row_first[r] = (size_t)i;
	}
	/* The cursor stays on its node when it is still shown. */
	v->cursor = 0;
	for (size_t i = 0; v->cur_name && i < v->n; i++)
		if (strcmp(c->nodes[v->node[i]]->name, v->cur_name) == 0) {
			v->cursor = i;
			break;
		}
	v->built = c;
	v->gen = c->generation;
	v->width = w;
	v->built_metric = v->metric;
	free(v->filter);
	v->filter = xp_strdup(xp_ui_filter(ui));
	free(v->cur_name);
	v->cur_name = xp_strdup(cur_name(v, c));
}

static void sync(struct fv *v, struct xp_ui *ui, int w)
{
	const struct xp_cluster *c = xp_ui_cluster(ui);
	if (w <= 0)
		w = v->width > 0 ? v->width : 80;
	if (!v->filter || c != v->built || c->generation != v->gen || w != v->width ||
	    strcmp(v->filter, xp_ui_filter(ui)) != 0)
		rebuild(v, ui, w);
	else if (v->metric != v->built_metric)
		levels(v, c);
}

/* A cell's glyph and role. */
static const char *cell(const struct fv *v, int lv, int *role)
{
	const struct xp_glyphs *g = v->g;
	switch (lv) {
	case LV_UNKNOWN:
		*role = XP_ROLE_DIM;
		return g->nohealth;
	case LV_OK:
		*role = XP_ROLE_OK;
		return g->utf8 ? ramp_utf8[0] : ramp_ascii[0];
	case LV_WARN:
		*role = XP_ROLE_WARN;
		return g->warn;
	case LV_FAIL:
		*role = XP_ROLE_FAIL;
		return g->fail;
	case LV_DOWN:
		*role = XP_ROLE_FAIL;
		return g->down;
	case LV_STALE:
		*role = XP_ROLE_WARN;
		return g->stale;
	default:
		*role = ramp_roles[lv];
		return g->utf8 ? ramp_utf8[lv] : ramp_ascii[lv];
	}
}

/* The value under the cursor as the status line says it. */
static const char *value_text(const struct fv *v, size_t i, const struct xp_node *n, char *buf, size_t len)
{
	double x = v->value[i];
	switch (v->metric) {
	case M_HEALTH: {
		int lv = v->level[i];
		snprintf(buf, len, "%s", lv == LV_FAIL ? "fail" : lv == LV_WARN ? "warn" : lv == LV_OK ? "ok"
					 : lv == LV_DOWN ? "down" : lv == LV_STALE ? "unreachable" : "-");
		return buf;
	}
	case M_FREE:
		if (isnan(x))
			snprintf(buf, len, "-");
		else
			snprintf(buf, len, "%.0f/%zu free", x, n->n_devices);
		return buf;
	default:
		if (isnan(x))
			snprintf(buf, len, "-");
		else
			snprintf(buf, len, v->metric == M_TEMP ? "%.0f C" : v->metric == M_POWER ? "%.0f W" : "%.0f%%", x);
		return buf;
	}
}

/* The legend line: the metric, then each level's glyph in its colour and what it means. */
static void draw_legend(struct fv *v, WINDOW *w, int y, int x0, int maxx)
{
	xp_draw_fill(w, y, x0, maxx, XP_ROLE_NORMAL);
	char head[64];
	snprintf(head, sizeof head, " %s (m) ", metric_names[v->metric]);
	int x = xp_draw_put(w, y, x0, maxx, XP_ROLE_TITLE, head, 0);
	static const char *const unit[N_METRICS] = {"%", "% used", " C", "% of limit", "% free", ""};
	int role;
	if (v->metric == M_HEALTH) {
		static const int lv[] = {LV_OK, LV_WARN, LV_FAIL, LV_DOWN, LV_STALE, LV_UNKNOWN};
		static const char *const what[] = {"ok", "warn", "fail", "down", "unreachable", "not known"};
		for (size_t i = 0; i < sizeof lv / sizeof *lv && x < maxx; i++) {
			const char *gl = cell(v, lv[i], &role);
			x = xp_draw_put(w, y, x + 1, maxx, role, gl, 0);
			x = xp_draw_put(w, y, x + 1, maxx, XP_ROLE_NORMAL, what[i], 0);
		}
		return;
	}
	for (int lv = 0; lv < 5 && x < maxx; lv++) {
		char t[48];
		const double *b = bounds[v->metric];
		if (lv == 0)
			snprintf(t, sizeof t, v->metric == M_FREE ? "none" : "<%g%s", b[0], unit[v->metric]);
		else if (lv == 4)
			snprintf(t, sizeof t, ">=%g%s", b[3], unit[v->metric]);
		else
			snprintf(t, sizeof t, "%g-%g%s", b[lv - 1], b[lv], unit[v->metric]);
		const char *gl = cell(v, lv, &role);
		x = xp_draw_put(w, y, x + 1, maxx, role, gl, 0);
		x = xp_draw_put(w, y, x + 1, maxx, XP_ROLE_NORMAL, t, 0);
	}
	const char *gl = cell(v, LV_UNKNOWN, &role);
	x = xp_draw_put(w, y, x + 2, maxx, role, gl, 0);
	x = xp_draw_put(w, y, x + 1, maxx, XP_ROLE_NORMAL, "not known", 0);
	gl = cell(v, LV_DOWN, &role);
	x = xp_draw_put(w, y, x + 2, maxx, role, gl, 0);
	xp_draw_put(w, y, x + 1, maxx, XP_ROLE_NORMAL, "down", 0);
}

static void draw(void *st, struct xp_ui *ui, WINDOW *w, struct xp_rect r)
{
	struct fv *v = st;
	if (r.h <= 0 || r.w <= 0)
		return;
	/* One column of margin on the left, as the lists have. */
	sync(v, ui, r.w - 1);
	int maxx = r.x + r.w;
	draw_legend(v, w, r.y, r.x, maxx);
	struct xp_rect body = {r.y + 1, r.x + 1, r.h - 1, r.w - 1};
	v->page = body.h > 0 ? body.h : 1;
	for (int i = 0; i < body.h; i++)
		xp_draw_fill(w, body.y + i, r.x, maxx, XP_ROLE_NORMAL);
	if (body.h <= 0)
		return;
	if (!v->n) {
		xp_draw_put(w, body.y, body.x, maxx, XP_ROLE_DIM,
			    v->total ? "no node matches the filter (Esc clears it)" : "no nodes yet", 0);
		return;
	}
	/* The cursor's row stays in the window; its rack's heading too when it fits. */
	int cyr = v->cy[v->cursor];
	if (cyr < v->top)
		v->top = cyr;
	if (cyr >= v->top + body.h)
		v->top = cyr - body.h + 1;
	if (v->top > v->rows - body.h)
		v->top = v->rows - body.h > 0 ? v->rows - body.h : 0;
	if (v->top < 0)
		v->top = 0;
	for (size_t s = 0; s < v->n_segs; s++) {
		const struct seg *sg = &v->segs[s];
		if (sg->y < v->top || sg->y >= v->top + body.h)
			continue;
		char lab[64];
		xp_draw_cut(sg->rack ? sg->rack : "-", 16, XP_CUT_MIDDLE, v->g->ellipsis, lab, sizeof lab);
		xp_draw_put(w, body.y + sg->y - v->top, body.x + sg->x, maxx, XP_ROLE_TITLE, lab, 0);
	}
	int last = v->top + body.h;
	if (last > v->rows)
		last = v->rows;
	for (size_t i = v->row_first[v->top]; i < v->row_first[last]; i++) {
		int role;
		const char *gl = cell(v, v->level[i], &role);
		if (i == v->cursor)
			role = XP_ROLE_SELECTED;
		xp_draw_put(w, body.y + v->cy[i] - v->top, body.x + v->cx[i], maxx, role, gl, 0);
	}
}

/* The cell on layout row r nearest to column x, or -1 when the row has none. */
static long nearest(const struct fv *v, int r, int x)
{
	if (r < 0 || r >= v->rows)
		return -1;
	size_t a = v->row_first[r], b = v->row_first[r + 1];
	if (a == b)
		return -1;
	size_t best = a;
	for (size_t i = a; i < b; i++)
		if (abs(v->cx[i] - x) < abs(v->cx[best] - x))
			best = i;
	return (long)best;
}

static void moved(struct fv *v, struct xp_ui *ui)
{
	free(v->cur_name);
	v->cur_name = xp_strdup(cur_name(v, xp_ui_cluster(ui)));
}

/* Up or down by rows layout rows (skipping rows without cells). */
static void vertical(struct fv *v, int rows)
{
	int r = v->cy[v->cursor], x = v->cx[v->cursor];
	int step = rows < 0 ? -1 : 1;
	for (int left = abs(rows); left > 0;) {
		r += step;
		if (r < 0 || r >= v->rows)
			break;
		long k = nearest(v, r, x);
		if (k >= 0) {
			v->cursor = (size_t)k;
			left--;
		}
	}
}

static int on_key(void *st, struct xp_ui *ui, int key)
{
	struct fv *v = st;
	sync(v, ui, 0);
	if (key == 'm' || key == 'M') {
		v->metric = (v->metric + (key == 'm' ? 1 : N_METRICS - 1)) % N_METRICS;
		sync(v, ui, 0);
		return XP_REACT_REDRAW;
	}
	if (!v->n)
		return XP_REACT_UNHANDLED;
	switch (key) {
	case KEY_LEFT:
	case 'h':
		if (v->cursor > 0)
			v->cursor--;
		break;
	case KEY_RIGHT:
	case 'l':
		if (v->cursor + 1 < v->n)
			v->cursor++;
		break;
	case KEY_UP:
	case 'k':
		vertical(v, -1);
		break;
	case KEY_DOWN:
	case 'j':
		vertical(v, 1);
		break;
	case KEY_PPAGE:
		vertical(v, -(v->page > 1 ? v->page - 1 : 1));
		break;
	case KEY_NPAGE:
		vertical(v, v->page > 1 ? v->page - 1 : 1);
		break;
	case KEY_HOME:
	case 'g':
		v->cursor = 0;
		break;
	case KEY_END:
	case 'G':
		v->cursor = v->n - 1;
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		xp_ui_open_node(ui, xp_ui_cluster(ui)->nodes[v->node[v->cursor]]->name);
		return XP_REACT_REDRAW;
	default:
		return XP_REACT_UNHANDLED;
	}
	moved(v, ui);
	return XP_REACT_REDRAW;
}

static int on_click(void *st, struct xp_ui *ui, int y, int x)
{
	struct fv *v = st;
	sync(v, ui, 0);
	int r = y - 1 + v->top, cx = x - 1;
	if (r < 0 || r >= v->rows)
		return XP_REACT_NONE;
	for (size_t i = v->row_first[r]; i < v->row_first[r + 1]; i++)
		if (v->cx[i] == cx) {
			if (i == v->cursor)
				xp_ui_open_node(ui, xp_ui_cluster(ui)->nodes[v->node[i]]->name);
			v->cursor = i;
			moved(v, ui);
			return XP_REACT_REDRAW;
		}
	return XP_REACT_NONE;
}

static int on_wheel(void *st, struct xp_ui *ui, int dir)
{
	struct fv *v = st;
	sync(v, ui, 0);
	if (v->n) {
		vertical(v, dir * 3);
		moved(v, ui);
	}
	return XP_REACT_REDRAW;
}

/* The status line's right end: the node under the cursor, its rack and value, and "N of M". */
static const char *count(void *st, char *buf, size_t len)
{
	const struct fv *v = st;
	/* built is NULL from a refresh until the next draw: nothing of the old cluster is read. */
	if (!v->n || !v->built)
		return "";
	const struct xp_node *n = v->built->nodes[v->node[v->cursor]];
	char val[48];
	snprintf(buf, len, "%s %s %s: %s  %zu of %zu", n->name, n->rack ? n->rack : "-", metric_names[v->metric],
		 value_text(v, v->cursor, n, val, sizeof val), v->cursor + 1, v->n);
	return buf;
}

static void on_data(void *st, struct xp_ui *ui)
{
	struct fv *v = st;
	(void)ui;
	/* The old cluster is gone: the layout is made again from the new one when the view is
	 * next drawn or sent a key, not on every refresh while another view is shown. */
	v->built = NULL;
}

static int set_opt(void *st, struct xp_ui *ui, const char *key, const char *value, char *err, size_t errlen)
{
	struct fv *v = st;
	(void)ui;
	if (strcmp(key, "metric") != 0) {
		snprintf(err, errlen, "fleet: no option --%s (--metric util|mem|temp|power|free|health)", key);
		return -1;
	}
	for (int m = 0; m < N_METRICS; m++)
		if (strcmp(value, metric_names[m]) == 0) {
			v->metric = m;
			return 0;
		}
	snprintf(err, errlen, "fleet: --metric %s: not util, mem, temp, power, free or health", value);
	return -1;
}

static void opts(void *st, char *buf, size_t len)
{
	const struct fv *v = st;
	snprintf(buf, len, " --metric %s", metric_names[v->metric]);
}

static void *create(struct xp_ui *ui)
{
	struct fv *v = xp_calloc(1, sizeof *v);
	v->g = xp_ui_glyphs(ui);
	v->built_metric = -1;
	return v;
}

static void destroy(void *st)
{
	struct fv *v = st;
	if (!v)
		return;
	free(v->node);
	free(v->level);
	free(v->value);
	free(v->cy);
	free(v->cx);
	free(v->segs);
	free(v->row_first);
	free(v->filter);
	free(v->cur_name);
	free(v);
}

static const struct xp_view_key keys[] = {
	{"arrows h/j/k/l", "move over the cells"},
	{"m / M", "next / previous metric: util, mem, temp, power, free, health"},
	{"Enter", "open the node in view 1"},
	{"PgUp/PgDn Home/End", "page, first, last"},
	{NULL, NULL},
};

const struct xp_view xp_view_fleet = {
	.name = "fleet",
	.title = "Fleet",
	.order = 8,
	.keys = keys,
	.create = create,
	.destroy = destroy,
	.draw = draw,
	.on_key = on_key,
	.on_click = on_click,
	.on_wheel = on_wheel,
	.on_data = on_data,
	.count = count,
	.set_opt = set_opt,
	.opts = opts,
};
