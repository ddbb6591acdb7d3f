/* map_layout.c: row list, device cells, scrolling and text columns of the
 * topology map. Nothing here draws: the view turns these into ncurses calls. */
#include "map_layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "theme.h"
#include "xp.h"

/* ---- row list ---- */

static int level_of(const struct xp_map_rows *r)
{
	return r->opt ? r->opt->group : XP_GROUP_SWITCH;
}

struct loc_ctx {
	const struct xp_cluster *c;
	int by;
};

static int loc_item_cmp(const void *pa, const void *pb, void *arg)
{
	const struct loc_ctx *l = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c = xp_node_loc_cmp(l->c->nodes[a], l->c->nodes[b], l->by);
	return c ? c : (a > b) - (a < b);
}

/* Ranks every node's group at level by (one location sort per data change or grouping). */
static void group_ids(struct xp_map_rows *r, const struct xp_cluster *c, int by)
{
	size_t n = c->n_nodes;
	if (r->gid && r->gid_c == c && r->gid_gen == c->generation && r->gid_by == by && r->n_gid == n)
		return;
	size_t *idx = xp_malloc(n * sizeof *idx);
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	struct loc_ctx l = {c, by};
	/* Clusters usually arrive grouped already (inventories are written rack by rack):
	 * skip the sort when they are, which keeps a refresh of a big cluster cheap. */
	bool sorted = true;
	for (size_t i = 1; i < n && sorted; i++)
		sorted = xp_node_loc_cmp(c->nodes[i - 1], c->nodes[i], by) <= 0;
	if (!sorted)
		qsort_r(idx, n, sizeof *idx, loc_item_cmp, &l);
	free(r->gid);
	r->gid = xp_malloc((n ? n : 1) * sizeof *r->gid);
	uint32_t g = 0;
	for (size_t k = 0; k < n; k++) {
		if (k && xp_node_loc_cmp(c->nodes[idx[k - 1]], c->nodes[idx[k]], by) != 0)
			g++;
		r->gid[idx[k]] = g;
	}
	free(idx);
	r->n_gid = n;
	r->gid_c = c;
	r->gid_gen = c->generation;
	r->gid_by = by;
}

/* The sort of the rows: group rank, then the sort column inside a group (a figure known
 * before one not known, either way), then the cluster index (qsort is not stable: the index
 * keeps cluster order, and a tie costs no string compare). */
struct sort_item {
	uint32_t gid;
	bool known;
	double v;
	size_t i;
};

struct sort_ctx {
	const struct xp_cluster *c;
	const struct xp_map_opts *opt;
	bool text; /* a text column: compared through node_cols */
};

static int item_cmp(const void *pa, const void *pb, void *arg)
{
	const struct sort_ctx *s = arg;
	const struct sort_item *a = pa, *b = pb;
	if (a->gid != b->gid)
		return a->gid < b->gid ? -1 : 1;
	if (s->text) {
		int c = xp_ncol_cmp(s->opt->sort_col, s->opt->desc, s->c->nodes[a->i], &s->opt->sums[a->i],
				    s->c->nodes[b->i], &s->opt->sums[b->i]);
		if (c)
			return c;
	} else if (a->known != b->known) {
		return a->known ? -1 : 1;
	} else if (a->known && a->v != b->v) {
		int c = a->v < b->v ? -1 : 1;
		return s->opt->desc ? -c : c;
	}
	return (a->i > b->i) - (a->i < b->i);
}

static void push_row(struct xp_map_rows *r, int kind, size_t index, int dev)
{
	xp_grow(&r->rows, sizeof *r->rows, r->n, &r->cap);
	r->rows[r->n].kind = (unsigned char)kind;
	r->rows[r->n].dev = dev;
	r->rows[r->n].index = index;
	r->n++;
}

/* Adds node i's figures to its group's totals. */
static void group_add(struct xp_map_group *g, const struct xp_node_sum *s)
{
	g->n_free += (size_t)s->n_free;
	if (s->n_util) {
		g->util = g->n_util ? (g->util * (double)g->n_util + s->util * s->n_util) / (double)(g->n_util + s->n_util)
				    : s->util;
		g->n_util += (size_t)s->n_util;
	}
	if (XP_HAS(s->temp) && (!XP_HAS(g->temp) || s->temp > g->temp))
		g->temp = s->temp;
	if (XP_HAS(s->power))
		g->power = XP_HAS(g->power) ? g->power + s->power : s->power;
}

/* Walks the sorted order into group headers and node rows, keeping what pred accepts. */
static void rows_walk(struct xp_map_rows *r, const struct xp_cluster *c, xp_map_pred pred, void *arg)
{
	free(r->rows);
	free(r->groups);
	r->rows = NULL;
	r->groups = NULL;
	r->n = r->cap = r->n_groups = r->n_nodes = r->n_match = 0;
	const struct xp_map_opts *o = r->opt;
	int by = level_of(r);
	size_t n = r->n_order, gcap = 0;
	for (size_t i = 0; i < n;) {
		const struct xp_node *first = c->nodes[r->order[i]];
		size_t j = i + 1;
		while (j < n && r->gid[r->order[j]] == r->gid[r->order[i]])
			j++;
		struct xp_map_group g = {first->zone, first->rack, first->sw, 0, 0, j - i, first, by, false,
					 0, XP_NA, XP_NA, XP_NA, 0};
		if (o && o->folded && by != XP_GROUP_NONE) {
			char label[512];
			g.folded = o->folded(xp_group_label(first, by, label, sizeof label), o->fold_arg);
		}
		for (size_t k = i; k < j; k++) {
			size_t ni = r->order[k];
			const struct xp_node *node = c->nodes[ni];
			if (pred && !pred(node, ni, arg))
				continue;
			/* Without grouping there is no heading to rest on: the list is the nodes. */
			if (!g.n_nodes && by != XP_GROUP_NONE)
				push_row(r, XP_MAP_GROUP, r->n_groups, -1);
			g.n_nodes++;
			g.n_devices += node->n_devices;
			if (o && o->sums)
				group_add(&g, &o->sums[ni]);
			if (g.folded)
				continue;
			push_row(r, XP_MAP_NODE, ni, -1);
			r->n_nodes++;
			if (o && o->expanded)
				for (size_t d = 0; d < node->n_devices; d++)
					push_row(r, XP_MAP_DEVICE, ni, (int)d);
		}
		if (g.n_nodes) {
			xp_grow(&r->groups, sizeof *r->groups, r->n_groups, &gcap);
			r->groups[r->n_groups++] = g;
			r->n_match += g.n_nodes;
		}
		i = j;
	}
}

void xp_map_rows_build(struct xp_map_rows *r, const struct xp_cluster *c, xp_map_pred pred, void *arg)
{
	free(r->rows);
	free(r->groups);
	free(r->order);
	r->rows = NULL;
	r->groups = NULL;
	r->order = NULL;
	r->n = r->cap = r->n_groups = r->n_nodes = r->n_match = r->n_order = 0;
	size_t n = c ? c->n_nodes : 0;
	if (!n)
		return;
	const struct xp_map_opts *opt = r->opt;
	group_ids(r, c, level_of(r));
	struct sort_ctx sc = {c, opt, false};
	int col = opt && opt->sums ? opt->sort_col : -1;
	sc.text = col == XP_NCOL_NODE || col == XP_NCOL_MODEL;
	struct sort_item *items = xp_malloc(n * sizeof *items);
	for (size_t i = 0; i < n; i++) {
		double v = col >= 0 && !sc.text ? xp_ncol_value(col, c->nodes[i], &opt->sums[i]) : 0;
		items[i] = (struct sort_item){r->gid[i], XP_HAS(v), v, i};
	}
	bool sorted = true;
	for (size_t i = 1; i < n && sorted; i++)
		sorted = item_cmp(&items[i - 1], &items[i], &sc) <= 0;
	if (!sorted)
		qsort_r(items, n, sizeof *items, item_cmp, &sc);
	r->order = xp_malloc(n * sizeof *r->order);
	for (size_t i = 0; i < n; i++)
		r->order[i] = items[i].i;
	r->n_order = n;
	free(items);
	rows_walk(r, c, pred, arg);
}

void xp_map_rows_refilter(struct xp_map_rows *r, const struct xp_cluster *c, xp_map_pred pred, void *arg)
{
	/* A cluster of another size cannot be the one the order was made for. */
	if (!c || r->n_order != c->n_nodes || !r->order) {
		xp_map_rows_build(r, c, pred, arg);
		return;
	}
	rows_walk(r, c, pred, arg);
}

void xp_map_rows_free(struct xp_map_rows *r)
{
	free(r->gid);
	free(r->rows);
	free(r->groups);
	free(r->order);
	memset(r, 0, sizeof *r);
}

const char *xp_map_group_label(const struct xp_map_group *g, char *buf, size_t len)
{
	if (!g->first) {
		snprintf(buf, len, "(no location)");
		return buf;
	}
	return xp_group_label(g->first, g->by, buf, len);
}

long xp_map_next_node(const struct xp_map_rows *r, size_t from, int dir)
{
	if (!r->n_nodes || !r->n)
		return -1;
	size_t n = r->n, i = from < n ? from : n - 1;
	for (size_t step = 0; step < n; step++) {
		i = dir >= 0 ? (i + 1) % n : (i + n - 1) % n;
		if (r->rows[i].kind == XP_MAP_NODE)
			return (long)i;
	}
	return -1;
}

long xp_map_snap_node(const struct xp_map_rows *r, size_t at, int dir)
{
	if (!r->n_nodes || !r->n)
		return -1;
	long n = (long)r->n, a = at < r->n ? (long)at : n - 1;
	int d = dir >= 0 ? 1 : -1;
	for (int pass = 0; pass < 2; pass++, d = -d)
		for (long i = a; i >= 0 && i < n; i += d)
			if (r->rows[i].kind == XP_MAP_NODE)
				return i;
	return -1;
}

long xp_map_row_of_node(const struct xp_map_rows *r, size_t node)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->rows[i].kind == XP_MAP_NODE && r->rows[i].index == node)
			return (long)i;
	return -1;
}

/* ---- device cells ---- */

static bool same_group(const char *a, const char *b)
{
	return a && b && (a == b || strcmp(a, b) == 0);
}

void xp_map_dev_order(const struct xp_node *n, int *order, int *group_of)
{
	size_t k = n->n_devices;
	if (!k)
		return;
	/* key[i]: the first device of i's affinity group (itself when it has none). A counting
	 * sort on key is stable, so each group gathers at its first member's place with its
	 * devices in index order, and devices in no group keep their own place. */
	int small[3][64];
	int *key = k <= 64 ? small[0] : xp_malloc(k * sizeof *key);
	int *start = k <= 64 ? small[1] : xp_malloc(k * sizeof *start);
	int *gnum = k <= 64 ? small[2] : xp_malloc(k * sizeof *gnum);
	memset(start, 0, k * sizeof *start);
	int ngroups = 0;
	for (size_t i = 0; i < k; i++) {
		const char *g = n->devices[i].affinity_group;
		key[i] = (int)i;
		gnum[i] = -1;
		if (g) {
			/* Members of a group are usually adjacent: try the previous device first. */
			if (i > 0 && same_group(g, n->devices[i - 1].affinity_group)) {
				key[i] = key[i - 1];
			} else {
				for (size_t j = 0; j < i; j++)
					if (key[j] == (int)j && same_group(g, n->devices[j].affinity_group)) {
						key[i] = (int)j;
						break;
					}
			}
			if (key[i] == (int)i)
				gnum[i] = ngroups++;
		}
		start[key[i]]++;
	}
	int pos = 0;
	for (size_t i = 0; i < k; i++) {
		int c = start[i];
		start[i] = pos;
		pos += c;
	}
	for (size_t i = 0; i < k; i++) {
		int at = start[key[i]]++;
		order[at] = (int)i;
		group_of[at] = gnum[key[i]];
	}
	if (k > 64) {
		free(key);
		free(start);
		free(gnum);
	}
}

int xp_map_cell_role(const struct xp_node *n, const struct xp_device *d, const struct xp_glyphs *g,
		     const char **glyph)
{
	/* The node first: a down or silent node's devices are neither idle nor fine, whatever
	 * their last reported utilization and health said. */
	if (n && n->state == XP_NODE_DOWN) {
		*glyph = g->down;
		return XP_ROLE_FAIL;
	}
	if (n && n->state == XP_NODE_UNREACHABLE) {
		*glyph = g->stale;
		return XP_ROLE_WARN;
	}
	/* Health wins over utilization: a failed device at 0 % must not look idle and fine. */
	if (d->health == XP_HEALTH_FAIL) {
		*glyph = g->fail;
		return XP_ROLE_FAIL;
	}
	if (d->health == XP_HEALTH_WARN) {
		*glyph = g->warn;
		return XP_ROLE_WARN;
	}
	if (XP_HAS(d->utilization_pct)) {
		*glyph = g->level[xp_glyph_level(d->utilization_pct)];
		return xp_role_for_util(d->utilization_pct);
	}
	/* An engine (Slurm's GresUsed, a pod's request) says who holds it but not how busy it
	 * is: in use must not look idle. A MIG instance that exists is an allocation without an
	 * owner too, and a GPU in MIG mode reports no utilization: only an owner, or a whole
	 * device held, says in use. */
	for (size_t i = 0; i < d->n_allocs; i++)
		if (d->allocs[i].owner || !d->allocs[i].slice) {
			*glyph = g->held;
			return XP_ROLE_UTIL_80;
		}
	if (d->health == XP_HEALTH_OK) {
		*glyph = g->unknown;
		return XP_ROLE_OK;
	}
	*glyph = g->nohealth;
	return XP_ROLE_DIM;
}

/* Appends one segment of cols columns; false when the buffers are full. */
static bool add_seg(struct xp_cells *c, int role, int dev, const char *s, unsigned cols)
{
	size_t len = strlen(s), off = strlen(c->text);
	if (c->n_seg >= XP_CELLS_MAX || off + len >= sizeof c->text)
		return false;
	memcpy(c->text + off, s, len + 1);
	c->seg[c->n_seg++] = (struct xp_cell_seg){role, dev, (unsigned)off, (unsigned)len, (unsigned)c->cols, cols};
	c->cols += (int)cols;
	return true;
}

static int digits(long v)
{
	int d = 1;
	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

void xp_map_cells(const struct xp_node *n, const struct xp_glyphs *g, int width, struct xp_cells *out)
{
	out->text[0] = '\0';
	out->n_seg = 0;
	out->cols = out->shown = out->hidden = 0;
	int k = (int)n->n_devices;
	if (!k)
		return;
	if (width > XP_CELLS_MAX)
		width = XP_CELLS_MAX;
	int small[2][64];
	int *order = k <= 64 ? small[0] : xp_malloc((size_t)k * sizeof *order);
	int *grp = k <= 64 ? small[1] : xp_malloc((size_t)k * sizeof *grp);
	xp_map_dev_order(n, order, grp);

	/* Columns of the first p devices with their brackets, the last group closed even when
	 * it continues past p; the largest p that leaves room for "+N" (or needs none) wins. */
	int shown = 0, used = 0;
	for (int p = 1; p <= k; p++) {
		int i = p - 1;
		if (i > 0 && grp[i - 1] >= 0 && grp[i - 1] != grp[i])
			used++; /* the previous group's closing bracket */
		if (grp[i] >= 0 && (i == 0 || grp[i - 1] != grp[i]))
			used++; /* opening bracket */
		used++;         /* the cell */
		int closing = grp[i] >= 0 ? 1 : 0;
		int tail = p < k ? 1 + digits(k - p) : 0;
		if (used + closing > width)
			break;
		if (used + closing + tail <= width)
			shown = p;
	}
	for (int i = 0; i < shown; i++) {
		const struct xp_device *d = &n->devices[order[i]];
		if (grp[i] >= 0 && (i == 0 || grp[i - 1] != grp[i]))
			add_seg(out, XP_ROLE_DIM, -1, g->group_open, 1);
		const char *glyph;
		int role = xp_map_cell_role(n, d, g, &glyph);
		add_seg(out, role, order[i], glyph, 1);
		if (grp[i] >= 0 && (i == shown - 1 || grp[i + 1] != grp[i]))
			add_seg(out, XP_ROLE_DIM, -1, g->group_close, 1);
	}
	out->shown = shown;
	out->hidden = k - shown;
	if (out->hidden) {
		char tail[24];
		snprintf(tail, sizeof tail, "+%d", out->hidden);
		if ((int)strlen(tail) + out->cols <= width)
			add_seg(out, XP_ROLE_DIM, -1, tail, (unsigned)strlen(tail));
	}
	if (k > 64) {
		free(order);
		free(grp);
	}
}

/* ---- scrolling ---- */

size_t xp_scroll_top(size_t top, size_t cursor, size_t height, size_t n)
{
	if (!n || !height)
		return 0;
	if (cursor >= n)
		cursor = n - 1;
	if (top > cursor)
		top = cursor;
	if (cursor >= top + height)
		top = cursor - height + 1;
	/* After a resize or a narrower filter, pull the window up so the last row ends it. */
	size_t max_top = n > height ? n - height : 0;
	return top > max_top ? max_top : top;
}

size_t xp_scroll_move(size_t cursor, long delta, size_t n)
{
	if (!n)
		return 0;
	if (delta < 0) {
		size_t d = (size_t)-delta;
		cursor = cursor > d ? cursor - d : 0;
	} else {
		cursor += (size_t)delta;
	}
	return cursor >= n ? n - 1 : cursor;
}

size_t xp_scroll_page(size_t cursor, size_t height, size_t n, int dir)
{
	long step = height ? (long)height : 1;
	return xp_scroll_move(cursor, dir < 0 ? -step : step, n);
}

/* ---- text columns ---- */

const char *xp_map_cpu_summary(const struct xp_node *n, char *buf, size_t len)
{
	struct xp_node_sum none;
	memset(&none, 0, sizeof none);
	return xp_ncol_text(XP_NCOL_CPU, n, &none, buf, len);
}

const char *xp_map_age(long long s, char *buf, size_t len)
{
	if (s < 0)
		s = 0;
	if (s < 60)
		snprintf(buf, len, "%llds", s);
	else if (s < 3600)
		snprintf(buf, len, "%lldm", s / 60);
	else if (s < 86400)
		snprintf(buf, len, "%lldh", s / 3600);
	else
		snprintf(buf, len, "%lldd", s / 86400);
	return buf;
}

const char *xp_map_state_str(const struct xp_node *n, char *buf, size_t len)
{
	struct xp_node_sum none;
	memset(&none, 0, sizeof none);
	return xp_ncol_text(XP_NCOL_STATE, n, &none, buf, len);
}

int xp_map_state_role(int state)
{
	switch (state) {
	case XP_NODE_UP:
		return XP_ROLE_OK;
	case XP_NODE_DEGRADED:
	case XP_NODE_DRAINING:
		return XP_ROLE_WARN;
	case XP_NODE_DOWN:
	case XP_NODE_UNREACHABLE:
		return XP_ROLE_FAIL;
	default:
		return XP_ROLE_DIM;
	}
}
