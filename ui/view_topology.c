/* view_topology.c: view 1, the cluster map. Nodes grouped by network location,
 * one row per node with a cell per device; Enter opens a node's diagram
 * (packages, NUMA domains, devices by affinity group, NICs) and link matrix,
 * and Enter on a device lists every field the model holds for it.
 *
 * The map must stay fast with 10,000 nodes: the row list is built when the data
 * or the filter changes (map_layout.c), and a frame draws only the visible rows. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "dev_graph.h"
#include "draw.h"
#include "format.h"
#include "list.h"
#include "list_draw.h"
#include "map_layout.h"
#include "node_actions.h"
#include "node_cols.h"
#include "pci_class.h"
#include "spark.h"
#include "theme.h"
#include "view.h"
#include "words.h"
#include "xp.h"

/* ---- detail documents: lines of coloured segments ---- */

struct seg {
	char *text;
	int role;
};

struct line {
	struct seg *segs;
	size_t n, cap;
	int dev; /* the accelerator this line stands for (cursor stops), -1 for none */
};

struct doc {
	struct line *lines;
	size_t n, cap;
	int width; /* widest line, for horizontal scrolling */
};

static void line_free(struct line *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->segs[i].text);
	free(l->segs);
	memset(l, 0, sizeof *l);
	l->dev = -1;
}

static void doc_free(struct doc *d)
{
	for (size_t i = 0; i < d->n; i++)
		line_free(&d->lines[i]);
	free(d->lines);
	memset(d, 0, sizeof *d);
}

/* Appends text to a line; runs of one role merge into one segment, which keeps a big
 * link matrix to a handful of segments per row. */
__attribute__((format(printf, 3, 0))) static void line_addv(struct line *l, int role, const char *fmt, va_list ap)
{
	char *s;
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	if (!s)
		s = xp_strdup("");
	if (l->n && l->segs[l->n - 1].role == role) {
		struct seg *last = &l->segs[l->n - 1];
		char *joined = xp_asprintf("%s%s", last->text, s);
		free(last->text);
		free(s);
		last->text = joined;
		return;
	}
	xp_grow(&l->segs, sizeof *l->segs, l->n, &l->cap);
	l->segs[l->n++] = (struct seg){s, role};
}

static void line_add(struct line *l, int role, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void line_add(struct line *l, int role, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	line_addv(l, role, fmt, ap);
	va_end(ap);
}

static struct line *doc_line(struct doc *d)
{
	xp_grow(&d->lines, sizeof *d->lines, d->n, &d->cap);
	struct line *l = &d->lines[d->n++];
	memset(l, 0, sizeof *l);
	l->dev = -1;
	return l;
}

static int line_cols(const struct line *l)
{
	int c = 0;
	for (size_t i = 0; i < l->n; i++)
		c += xp_draw_cols(l->segs[i].text);
	return c;
}

static void doc_measure(struct doc *d)
{
	d->width = 0;
	for (size_t i = 0; i < d->n; i++) {
		int c = line_cols(&d->lines[i]);
		if (c > d->width)
			d->width = c;
	}
}

/* Draws line l at row y over columns x..maxx-1, scrolled right by xoff; sel paints the
 * whole row in the cursor role. */
static void draw_line(WINDOW *w, int y, int x, int maxx, const struct line *l, int xoff, bool sel)
{
	int col = 0, cx = x, last = XP_ROLE_NORMAL;
	/* A line cut at the right edge ends in the mark (Right scrolls to the rest), in the
	 * role of the run it cuts, as styled documents' lines do. */
	bool cut = line_cols(l) - xoff > maxx - x && maxx - x > 1;
	for (size_t i = 0; i < l->n && cx < maxx; i++) {
		const struct seg *s = &l->segs[i];
		int c = xp_draw_cols(s->text);
		/* The cursor paints the line's content, not the tree branches leading to it. */
		bool paint = sel && !(i == 0 && s->role == XP_ROLE_BORDER);
		if (col + c > xoff) {
			last = paint ? XP_ROLE_SELECTED : s->role;
			cx = xp_draw_put(w, y, cx, maxx, last, s->text, xoff > col ? xoff - col : 0);
		}
		col += c;
	}
	if (cut)
		xp_draw_put(w, y, maxx - 1, maxx, last, xp_draw_ellipsis(), 0);
	xp_draw_fill(w, y, cx, maxx, sel ? XP_ROLE_SELECTED : XP_ROLE_NORMAL);
}

static long line_of_dev(const struct doc *d, int dev)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->lines[i].dev == dev && dev >= 0)
			return (long)i;
	return -1;
}

/* ---- a tree of lines, flattened with ├─ └─ │ prefixes ---- */

struct tnode {
	struct line line;
	struct tnode **kids;
	size_t n, cap;
};

static struct tnode *tnode_new(void)
{
	struct tnode *t = xp_calloc(1, sizeof *t);
	t->line.dev = -1;
	return t;
}

static struct tnode *tnode_add(struct tnode *parent)
{
	xp_grow(&parent->kids, sizeof *parent->kids, parent->n, &parent->cap);
	return parent->kids[parent->n++] = tnode_new();
}

static void tnode_free(struct tnode *t)
{
	for (size_t i = 0; i < t->n; i++)
		tnode_free(t->kids[i]);
	free(t->kids);
	line_free(&t->line);
	free(t);
}

/* Moves t's lines into d depth first; prefix is what the ancestors draw on each line. */
static void tnode_flatten(struct tnode *t, struct doc *d, const struct xp_glyphs *g, const char *prefix,
			  int depth, bool last)
{
	struct line *l = doc_line(d);
	if (depth > 0)
		line_add(l, XP_ROLE_BORDER, "%s%s ", prefix, last ? g->tree_last : g->tree_mid);
	for (size_t i = 0; i < t->line.n; i++) {
		line_add(l, t->line.segs[i].role, "%s", t->line.segs[i].text);
	}
	l->dev = t->line.dev;
	char *sub = depth > 0 ? xp_asprintf("%s%s ", prefix, last ? "  " : g->tree_pipe) : xp_strdup(prefix);
	for (size_t i = 0; i < t->n; i++)
		tnode_flatten(t->kids[i], d, g, sub, depth + 1, i + 1 == t->n);
	free(sub);
}

/* ---- the view's state ---- */

/* What the map needs of each node beyond the model, computed when the data changes so that
 * a filter keystroke on 10,000 nodes is one substring search per node. */
struct ncache {
	size_t hay;   /* offset in the view's hay buffer of the searchable fields, one a line */
	unsigned char w[XP_NCOL_COUNT]; /* width of each column's text (node_cols.h) */
	const struct xp_node *node;     /* the node they were counted for */
};

/* Columns of the map: node_cols.h's, then the device cells, which take what is left. */
#define N_COLS (XP_NCOL_COUNT + 2) /* the node_cols columns, the sparklines, the device cells */
#define DEV_TITLE "DEVICES"

enum mode {
	MODE_MAP,
	MODE_NODE,
	MODE_DEVICE
};

struct topo {
	const struct xp_ui *ui;  /* for the filter predicate, set before each use */
	const struct xp_glyphs *g;
	int mode;
	/* the map */
	struct xp_map_rows rows;
	struct xp_list map;      /* cursor and window over rows (group rows are no stops) */
	char *filter;            /* the filter rows was built with */
	const struct xp_cluster *built;
	uint64_t built_gen;
	struct ncache *nc;       /* per node of built */
	size_t n_nc, cap_nc;
	char *hay;               /* every node's search text, NUL-separated: one buffer, not 10,000 */
	size_t hay_len, hay_cap;
	int want[XP_NCOL_COUNT]; /* widest shown cell of each column */
	int max_dev;             /* widest device cells of a node: their share of the width */
	/* rows: how they are made (sort, grouping, device rows, folds), kept across refreshes */
	struct xp_map_opts opt;
	struct xp_node_sum *sums; /* per node of built: the figures, counted once per data change */
	char **folds;            /* labels of the groups whose fold differs from fold_all */
	size_t n_folds;
	bool fold_all;
	bool reuse;              /* nc's figures hold for the nodes still in their places */
	int redo;                /* 1: walk the rows again (fold, device rows), 2: sort them again */
	int on_kind;             /* the kind of row under the cursor (enum xp_map_row_kind) */
	int on_dev;              /* a device row's device */
	char *on_group;          /* a group row's label */
	char *name;              /* node under the cursor, or opened: names survive a refresh */
	size_t node;             /* its index in the current cluster (valid after sync) */
	/* node detail: a pager over its lines, with a device cursor of its own */
	struct doc nd;
	struct xp_list nlist;
	int dev;                 /* device cursor (index), -1 when the node has none */
	/* device detail */
	struct doc dd;
	struct xp_list dlist;
	char *dev_bus;           /* the opened device's bus id: indexes may move on a refresh */
	int hist_metric;         /* the device graph's metric (enum xp_hist_metric): `m` */
	int hist_win;            /* its window, an index into xp_dev_graph_windows: `w` */
	int graph_w;             /* its columns, from the last frame's width (0: none drawn yet) */
	uint64_t graph_gen;      /* the history's generation it was made at */
	char where[512];
	struct xp_nact *act;     /* tags, drain/undrain, ssh (node_actions.h) */
};

static void set_name(struct topo *t, const char *name)
{
	if (t->name && name && strcmp(t->name, name) == 0)
		return;
	free(t->name);
	t->name = xp_strdup(name);
}

/* ---- the filter ---- */

/* Appends s as a line of the search text, skipping a repeat of the previous line
 * (eight devices of one model add it once). */
static void hay_add(struct topo *t, const char **last, const char *s)
{
	if (!s || !*s || (*last && strcmp(*last, s) == 0))
		return;
	*last = s;
	size_t n = strlen(s);
	xp_grow(&t->hay, 1, t->hay_len + n + 2, &t->hay_cap);
	memcpy(t->hay + t->hay_len, s, n);
	t->hay[t->hay_len + n] = '\n';
	t->hay_len += n + 1;
}

static void hay_labels(struct topo *t, const char **last, const struct xp_labels *l)
{
	for (size_t i = 0; i < l->n; i++)
		hay_add(t, last, l->values[i]);
}

/* Name, state, device vendors, models and health, location and label values, one a line:
 * the filter never contains a newline, so a match inside this text is a match of one field.
 * Returns the text's offset in t->hay. */
static size_t node_hay(struct topo *t, const struct xp_node *n)
{
	size_t off = t->hay_len;
	const char *last = NULL;
	hay_add(t, &last, n->name);
	hay_add(t, &last, xp_node_state_name(n->state));
	/* Vendors, then models: a node's devices are usually alike, and repeats collapse. */
	for (size_t i = 0; i < n->n_devices; i++)
		hay_add(t, &last, n->devices[i].vendor);
	for (size_t i = 0; i < n->n_devices; i++)
		hay_add(t, &last, n->devices[i].model);
	/* Device health: "fail" finds the nodes with a failed device. */
	bool seen[XP_HEALTH_COUNT] = {false};
	for (size_t i = 0; i < n->n_devices; i++) {
		int h = n->devices[i].health;
		if (h >= 0 && h < XP_HEALTH_COUNT && h != XP_HEALTH_UNKNOWN && !seen[h]) {
			seen[h] = true;
			hay_add(t, &last, xp_health_name(h));
		}
	}
	/* The location too: "rack12" is the first thing an operator types. */
	hay_add(t, &last, n->zone);
	hay_add(t, &last, n->rack);
	hay_add(t, &last, n->sw);
	hay_labels(t, &last, &n->facts);
	hay_labels(t, &last, &n->governance);
	hay_labels(t, &last, &n->validation);
	xp_grow(&t->hay, 1, t->hay_len + 1, &t->hay_cap);
	t->hay[t->hay_len++] = '\0';
	return off;
}

/* Search texts are built on the first filter after new data, not on every refresh: a
 * refresh of 10,000 nodes then costs the key loop only the row list and widths. */
#define HAY_NONE ((size_t)-1)

static bool node_matches(const struct xp_node *n, size_t i, void *arg)
{
	struct topo *t = arg;
	if (t->nc[i].hay == HAY_NONE)
		t->nc[i].hay = node_hay(t, n);
	/* Fields per device (`temp>85 & numa==0`), words against the node's text. */
	return xp_filter_node(xp_ui_filter_expr(t->ui, xp_filter_node_fields), n, t->hay + t->nc[i].hay);
}

static void cache_free(struct topo *t)
{
	free(t->sums);
	t->sums = NULL;
	free(t->nc);
	free(t->hay);
	t->nc = NULL;
	t->hay = NULL;
	t->n_nc = t->cap_nc = t->hay_len = t->hay_cap = 0;
}

/* Buffers keep their size from one refresh to the next: a refresh of a big cluster then
 * allocates nothing here. */
static void cache_build(struct topo *t, const struct xp_cluster *c)
{
	size_t kept = t->reuse ? t->n_nc : 0;
	t->n_nc = 0;
	t->hay_len = 0;
	size_t old_cap = t->cap_nc;
	if (c->n_nodes)
		xp_grow(&t->nc, sizeof *t->nc, c->n_nodes - 1, &t->cap_nc);
	if (t->cap_nc != old_cap || !t->sums)
		t->sums = xp_realloc(t->sums, (t->cap_nc ? t->cap_nc : 1) * sizeof *t->sums);
	char buf[256];
	t->max_dev = 0;
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct xp_node *n = c->nodes[i];
		struct ncache *k = &t->nc[i];
		k->hay = HAY_NONE;
		/* The cells' width: a glyph a device, two brackets an affinity group (counted where
		 * the group changes from one device to the next, as they usually sit together). */
		int cells = (int)n->n_devices;
		for (size_t d = 0; d < n->n_devices; d++) {
			const char *g = n->devices[d].affinity_group;
			if (g && (!d || !n->devices[d - 1].affinity_group || strcmp(g, n->devices[d - 1].affinity_group) != 0))
				cells += 2;
		}
		if (cells > t->max_dev)
			t->max_dev = cells;
		/* A node the app says stayed in its place is the same node (shared nodes never
		 * change, model.h): an agent's refresh counts only the nodes that did (on_data). */
		if (i < kept && k->node == n)
			continue;
		k->node = n;
		xp_node_sum(n, &t->sums[i]);
		for (int col = 0; col < XP_NCOL_COUNT; col++) {
			const char *txt = xp_ncol_text(col, n, &t->sums[i], buf, sizeof buf);
			int w = col == XP_NCOL_NODE || col == XP_NCOL_MODEL ? xp_draw_cols(txt) : (int)strlen(txt);
			k->w[col] = (unsigned char)(w > 255 ? 255 : w);
		}
	}
	t->n_nc = c->n_nodes;
	t->reuse = true;
	t->opt.sums = t->sums;
}

/* ---- building ---- */

static void build_node_doc(struct topo *t, const struct xp_node *n);
static void build_dev_doc(struct topo *t, const struct xp_node *n, const struct xp_device *d);

static long find_node(const struct xp_cluster *c, const char *name)
{
	if (!name)
		return -1;
	for (size_t i = 0; i < c->n_nodes; i++)
		if (strcmp(c->nodes[i]->name, name) == 0)
			return (long)i;
	return -1;
}

/* Column widths from the shown nodes, so that a filter tightens the columns. */
static void measure_columns(struct topo *t)
{
	memset(t->want, 0, sizeof t->want);
	for (size_t i = 0; i < t->rows.n; i++) {
		if (t->rows.rows[i].kind != XP_MAP_NODE)
			continue;
		const struct ncache *k = &t->nc[t->rows.rows[i].index];
		for (int j = 0; j < XP_NCOL_COUNT; j++)
			if (k->w[j] > t->want[j])
				t->want[j] = k->w[j];
	}
	/* Device rows: "  ACC12" in the node column. */
	if (t->opt.expanded && t->want[XP_NCOL_NODE] < 7)
		t->want[XP_NCOL_NODE] = 7;
}

/* ---- folds ---- */

static long fold_find(const struct topo *t, const char *label)
{
	for (size_t i = 0; i < t->n_folds; i++)
		if (strcmp(t->folds[i], label) == 0)
			return (long)i;
	return -1;
}

/* A group is folded when fold_all says so, unless it is listed (the exceptions). */
static bool is_folded(const char *label, void *arg)
{
	const struct topo *t = arg;
	return t->fold_all != (fold_find(t, label) >= 0);
}

static void set_fold(struct topo *t, const char *label, bool fold)
{
	if (is_folded(label, t) == fold)
		return;
	long i = fold_find(t, label);
	if (i >= 0) {
		free(t->folds[i]);
		t->folds[i] = t->folds[--t->n_folds];
	} else {
		t->folds = xp_realloc(t->folds, (t->n_folds + 1) * sizeof *t->folds);
		t->folds[t->n_folds++] = xp_strdup(label);
	}
}

static void folds_clear(struct topo *t)
{
	for (size_t i = 0; i < t->n_folds; i++)
		free(t->folds[i]);
	free(t->folds);
	t->folds = NULL;
	t->n_folds = 0;
}

/* Puts the map cursor on a node row: the first match for a new filter (with the window at
 * the top, so no match hides above it), else the named node, else near the old row. */
static long row_of_group(const struct topo *t, const char *label)
{
	char buf[512];
	for (size_t i = 0; label && i < t->rows.n; i++)
		if (t->rows.rows[i].kind == XP_MAP_GROUP &&
		    strcmp(xp_map_group_label(&t->rows.groups[t->rows.rows[i].index], buf, sizeof buf), label) == 0)
			return (long)i;
	return -1;
}

/* Remembers what is under the cursor (a node, one of its devices, a group heading), so that
 * a refresh, a sort or a fold puts the cursor back on it. */
static void note_cursor(struct topo *t, const struct xp_cluster *c)
{
	if (!t->rows.n || t->map.cursor >= t->rows.n)
		return;
	const struct xp_map_row *r = &t->rows.rows[t->map.cursor];
	t->on_kind = r->kind;
	if (r->kind == XP_MAP_GROUP) {
		char buf[512];
		free(t->on_group);
		t->on_group = xp_strdup(xp_map_group_label(&t->rows.groups[r->index], buf, sizeof buf));
		return;
	}
	t->node = r->index;
	t->on_dev = r->dev;
	set_name(t, c->nodes[t->node]->name);
}

static void place_cursor(struct topo *t, const struct xp_cluster *c, size_t old_row, bool first)
{
	long at = -1, ni = first ? -1 : find_node(c, t->name);
	if (first) {
		at = xp_map_snap_node(&t->rows, 0, 1);
		t->map.top = 0;
	} else if (t->on_kind == XP_MAP_GROUP) {
		at = row_of_group(t, t->on_group);
	}
	if (at < 0 && ni >= 0) {
		at = xp_map_row_of_node(&t->rows, (size_t)ni);
		/* Back on the device row it was on, when the device rows are still there. */
		if (at >= 0 && t->on_kind == XP_MAP_DEVICE && t->on_dev >= 0 &&
		    (size_t)at + 1 + (size_t)t->on_dev < t->rows.n &&
		    t->rows.rows[at + 1 + t->on_dev].kind == XP_MAP_DEVICE)
			at += 1 + t->on_dev;
	}
	/* The node left the rows (folded away, filtered out): its group's heading, else near. */
	if (at < 0 && ni >= 0 && t->rows.n_groups) {
		char buf[512];
		at = row_of_group(t, xp_group_label(c->nodes[ni], t->opt.group, buf, sizeof buf));
	}
	/* Nothing to go back to (the first frame): the nearest node, as the map always did, so that
	 * Enter opens a node rather than folding a group. */
	if (at < 0 && t->on_kind != XP_MAP_GROUP)
		at = xp_map_snap_node(&t->rows, old_row, -1);
	if (at < 0 && t->rows.n)
		at = (long)(old_row < t->rows.n ? old_row : t->rows.n - 1);
	xp_list_set_count(&t->map, t->rows.n, c->n_nodes);
	t->map.cursor = at >= 0 ? (size_t)at : 0;
	if (at >= 0 && t->mode == MODE_MAP)
		note_cursor(t, c);
}

static void back_to_map(struct topo *t)
{
	t->mode = MODE_MAP;
	doc_free(&t->nd);
	doc_free(&t->dd);
	free(t->dev_bus);
	t->dev_bus = NULL;
}

/* Rebuilds whatever depends on the cluster and the filter; keeps the cursor on the same node
 * (by name) and the detail on the same node and device, or steps back when they left. */
static void rebuild(struct topo *t, struct xp_ui *ui)
{
	const struct xp_cluster *c = xp_ui_cluster(ui);
	const char *f = xp_ui_filter(ui);
	size_t old_row = t->map.cursor;
	/* A new cluster is never allocated where the shown one still lives, so pointer and
	 * generation tell a data change from a filter edit (which keeps the cache). */
	bool fresh = c != t->built || c->generation != t->built_gen || t->n_nc != c->n_nodes;
	if (fresh)
		cache_build(t, c);
	t->ui = ui;
	t->rows.opt = &t->opt;
	/* No fold anywhere: no label to make per group. */
	t->opt.folded = t->fold_all || t->n_folds ? is_folded : NULL;
	if (fresh || t->redo >= 2)
		xp_map_rows_build(&t->rows, c, f && *f ? node_matches : NULL, t);
	else
		xp_map_rows_refilter(&t->rows, c, f && *f ? node_matches : NULL, t);
	t->redo = 0;
	/* A filter typed (not cleared) jumps to its first match. */
	bool first = f && *f && (!t->filter || strcmp(t->filter, f) != 0);
	free(t->filter);
	t->filter = xp_strdup(f ? f : "");
	t->built = c;
	t->built_gen = c->generation;
	measure_columns(t);
	place_cursor(t, c, old_row, first && t->mode == MODE_MAP);
	if (t->mode == MODE_MAP)
		return;
	long ni = find_node(c, t->name);
	if (ni < 0) {
		xp_ui_message(ui, XP_ROLE_WARN, "node %s is gone; back to the map", t->name);
		back_to_map(t);
		return;
	}
	t->node = (size_t)ni;
	const struct xp_node *n = c->nodes[ni];
	if (t->dev >= (int)n->n_devices)
		t->dev = n->n_devices ? (int)n->n_devices - 1 : -1;
	if (t->mode == MODE_DEVICE) {
		const struct xp_device *d = NULL;
		if (t->dev_bus)
			d = xp_node_device_by_bus(n, t->dev_bus);
		else if (t->dev >= 0)
			d = &n->devices[t->dev];
		if (!d) {
			xp_ui_message(ui, XP_ROLE_WARN, "the device left %s; back to the node", n->name);
			t->mode = MODE_NODE;
			doc_free(&t->dd);
		} else {
			t->dev = (int)(d - n->devices);
			build_dev_doc(t, n, d);
		}
	}
	build_node_doc(t, n);
}

/* Catches changes the app did not announce (a filter edit, a swapped cluster). */
static void sync(struct topo *t, struct xp_ui *ui)
{
	const struct xp_cluster *c = xp_ui_cluster(ui);
	const char *f = xp_ui_filter(ui);
	t->g = xp_ui_glyphs(ui);
	if (t->redo || c != t->built || c->generation != t->built_gen || !t->filter ||
	    strcmp(t->filter, f ? f : "") != 0)
		rebuild(t, ui);
}

/* ---- node detail ---- */

static int health_role(int h)
{
	return h == XP_HEALTH_FAIL ? XP_ROLE_FAIL
	       : h == XP_HEALTH_WARN ? XP_ROLE_WARN
	       : h == XP_HEALTH_OK   ? XP_ROLE_OK
				     : XP_ROLE_NORMAL;
}

static int link_role(struct xp_link l)
{
	switch (l.cls) {
	case XP_LINK_NVLINK:
	case XP_LINK_HCCS:
	case XP_LINK_XGMI:
	case XP_LINK_MLULINK:
		return XP_ROLE_LINK_FABRIC;
	case XP_LINK_PIX:
		return XP_ROLE_LINK_PIX;
	case XP_LINK_PXB:
		return XP_ROLE_LINK_PXB;
	case XP_LINK_PHB:
		return XP_ROLE_LINK_PHB;
	case XP_LINK_NODE:
		return XP_ROLE_LINK_NODE;
	case XP_LINK_SYS:
		return XP_ROLE_LINK_SYS;
	default:
		return XP_ROLE_DIM;
	}
}

static void add_mib(struct line *l, int64_t mib)
{
	char buf[32];
	if (mib < 0)
		line_add(l, XP_ROLE_DIM, "memory -");
	else
		line_add(l, XP_ROLE_NORMAL, "%s", xp_fmt_mib(buf, sizeof buf, mib));
}

/* "NVIDIA H100", without saying the vendor twice when the model already starts with it
 * ("AMD Radeon R9", not "AMD AMD Radeon R9"). */
static const char *vendor_model(const struct xp_device *d, char *buf, size_t len)
{
	const char *v = d->vendor ? d->vendor : "?", *m = d->model ? d->model : "?";
	size_t vl = strlen(v);
	if (d->vendor && d->model && strncasecmp(m, v, vl) == 0 && (m[vl] == ' ' || !m[vl]))
		snprintf(buf, len, "%s", m);
	else
		snprintf(buf, len, "%s %s", v, m);
	return buf;
}

static void add_device(struct tnode *parent, const struct xp_node *n, const struct xp_device *d)
{
	char vm[256];
	struct tnode *k = tnode_add(parent);
	k->line.dev = (int)(d - n->devices);
	/* A down or unreachable node's device is not usable or not current, whatever it last said. */
	int role = n->state == XP_NODE_DOWN ? XP_ROLE_FAIL : n->state == XP_NODE_UNREACHABLE ? XP_ROLE_WARN
											: health_role(d->health);
	line_add(&k->line, role, "ACC%d", d->index);
	line_add(&k->line, XP_ROLE_NORMAL, "  %s  %s  ", vendor_model(d, vm, sizeof vm),
		 d->pci_bus_id ? d->pci_bus_id : "no bus id");
	add_mib(&k->line, d->memory_mib);
	if (XP_HAS(d->utilization_pct)) {
		line_add(&k->line, XP_ROLE_NORMAL, "  ");
		line_add(&k->line, xp_role_for_util(d->utilization_pct), "%.0f%%", d->utilization_pct);
	}
	/* The figures of the map's columns, as the map writes them (node_cols.h). */
	struct xp_node_sum ds;
	xp_device_sum(n, d, &ds);
	char fig[64];
	if (d->memory_used_mib >= 0)
		line_add(&k->line, XP_ROLE_DIM, "  mem %s", xp_ncol_dev_text(XP_NCOL_MEM, n, d, &ds, fig, sizeof fig));
	if (XP_HAS(d->temperature_c))
		line_add(&k->line, XP_ROLE_DIM, "  %s", xp_ncol_dev_text(XP_NCOL_TEMP, n, d, &ds, fig, sizeof fig));
	if (XP_HAS(d->power_w))
		line_add(&k->line, XP_ROLE_DIM, "  %s", xp_ncol_dev_text(XP_NCOL_POWER, n, d, &ds, fig, sizeof fig));
	if (d->health == XP_HEALTH_WARN || d->health == XP_HEALTH_FAIL) {
		line_add(&k->line, XP_ROLE_NORMAL, "  ");
		line_add(&k->line, health_role(d->health), "%s", xp_health_name(d->health));
	}
}

/* True when device i belongs under NUMA id numa (numa -2: under "not local to one"). */
static bool dev_in(const struct xp_node *n, size_t i, int numa)
{
	int m = n->devices[i].numa;
	bool local = m >= 0 && xp_node_numa_by_id(n, m);
	return numa == -2 ? !local : local && m == numa;
}

static bool nic_in(const struct xp_node *n, size_t i, int numa)
{
	int m = n->nics[i].numa;
	bool local = m >= 0 && xp_node_numa_by_id(n, m);
	return numa == -2 ? !local : local && m == numa;
}

/* The accelerators of one NUMA domain (or of none), each affinity group under its own
 * heading in order of first appearance, then the NICs. */
static void add_locals(struct tnode *parent, const struct xp_node *n, int numa)
{
	size_t k = n->n_devices;
	int *order = xp_malloc((k ? k : 1) * sizeof *order), *grp = xp_malloc((k ? k : 1) * sizeof *grp);
	if (k)
		xp_map_dev_order(n, order, grp);
	struct tnode *head = NULL;
	int head_grp = -1;
	for (size_t p = 0; p < k; p++) {
		size_t i = (size_t)order[p];
		if (!dev_in(n, i, numa))
			continue;
		const struct xp_device *d = &n->devices[i];
		if (grp[p] < 0) {
			add_device(parent, n, d);
			continue;
		}
		if (!head || head_grp != grp[p]) {
			size_t members = 0;
			for (size_t q = p; q < k && grp[q] == grp[p]; q++)
				members += dev_in(n, (size_t)order[q], numa);
			head = tnode_add(parent);
			head_grp = grp[p];
			line_add(&head->line, XP_ROLE_TITLE, "%s", d->affinity_group);
			line_add(&head->line, XP_ROLE_DIM, "  %zu device%s", members, members == 1 ? "" : "s");
		}
		add_device(head, n, d);
	}
	free(order);
	free(grp);
	for (size_t i = 0; i < n->n_nics; i++) {
		if (!nic_in(n, i, numa))
			continue;
		const struct xp_nic *c = &n->nics[i];
		struct tnode *x = tnode_add(parent);
		line_add(&x->line, XP_ROLE_NORMAL, "NIC %s", c->name ? c->name : "?");
		if (c->rdma)
			line_add(&x->line, XP_ROLE_NORMAL, "  RDMA %s", c->rdma);
		line_add(&x->line, XP_ROLE_NORMAL, "  %s", c->pci_bus_id ? c->pci_bus_id : "virtual");
		if (c->numa >= 0)
			line_add(&x->line, XP_ROLE_DIM, "  NUMA %d", c->numa);
		char sp[32];
		if (c->speed_mbps > 0)
			line_add(&x->line, XP_ROLE_DIM, "  %s", xp_fmt_link(sp, sizeof sp, c->speed_mbps));
	}
}

static void add_numa(struct tnode *parent, const struct xp_node *n, const struct xp_numa *m)
{
	char mem[32];
	struct tnode *x = tnode_add(parent);
	line_add(&x->line, XP_ROLE_TITLE, "NUMA %d", m->id);
	line_add(&x->line, XP_ROLE_NORMAL, "  %s  cpus %s", m->memory_mib < 0 ? "memory -" : xp_fmt_mib(mem, sizeof mem, m->memory_mib),
		 m->cpus && *m->cpus ? m->cpus : "-");
	add_locals(x, n, m->id);
}

static bool any_nonlocal(const struct xp_node *n)
{
	for (size_t i = 0; i < n->n_devices; i++)
		if (dev_in(n, i, -2))
			return true;
	for (size_t i = 0; i < n->n_nics; i++)
		if (nic_in(n, i, -2))
			return true;
	return false;
}

static void add_matrix(struct doc *d, const struct xp_node *n)
{
	struct line *l = doc_line(d);
	line_add(l, XP_ROLE_TITLE, "Accelerator links");
	size_t k = n->n_devices;
	if (!k) {
		line_add(doc_line(d), XP_ROLE_DIM, "  none (no accelerators)");
		return;
	}
	/* Every column as wide as the widest spelling, like nvidia-smi topo -m. */
	char buf[32];
	int cw = snprintf(buf, sizeof buf, "ACC%zu", k - 1);
	for (size_t r = 0; r < k; r++)
		for (size_t c = 0; c < k; c++) {
			int w = (int)strlen(xp_link_str(*xp_node_link(n, r, c), buf, sizeof buf));
			if (w > cw)
				cw = w;
		}
	cw += 2;
	l = doc_line(d);
	line_add(l, XP_ROLE_TITLE, "  %-*s", cw, "");
	for (size_t c = 0; c < k; c++) {
		snprintf(buf, sizeof buf, "ACC%zu", c);
		line_add(l, XP_ROLE_TITLE, "%-*s", cw, buf);
	}
	line_add(l, XP_ROLE_TITLE, "%-6s%s", "NUMA", "AFFINITY");
	for (size_t r = 0; r < k; r++) {
		const struct xp_device *dv = &n->devices[r];
		l = doc_line(d);
		snprintf(buf, sizeof buf, "ACC%zu", r);
		line_add(l, XP_ROLE_TITLE, "  %-*s", cw, buf);
		for (size_t c = 0; c < k; c++) {
			struct xp_link lk = *xp_node_link(n, r, c);
			line_add(l, link_role(lk), "%-*s", cw, xp_link_str(lk, buf, sizeof buf));
		}
		if (dv->numa >= 0)
			line_add(l, XP_ROLE_NORMAL, "%-6d", dv->numa);
		else
			line_add(l, XP_ROLE_DIM, "%-6s", "-");
		line_add(l, dv->affinity_group ? XP_ROLE_NORMAL : XP_ROLE_DIM, "%s",
			 dv->affinity_group ? dv->affinity_group : "-");
	}
}

static const struct {
	int role;
	const char *key, *text;
} legend[] = {
	{XP_ROLE_DIM, "X   ", "Self"},
	{XP_ROLE_LINK_FABRIC, "NV# ", "NVLink, a bonded set of # links"},
	{XP_ROLE_LINK_FABRIC, "HCCS", "Huawei HCCS (Ascend)"},
	{XP_ROLE_LINK_FABRIC, "XGMI", "AMD Infinity Fabric / XGMI"},
	{XP_ROLE_LINK_FABRIC, "MLU#", "Cambricon MLU-Link"},
	{XP_ROLE_LINK_PIX, "PIX ", "at most a single PCIe bridge"},
	{XP_ROLE_LINK_PXB, "PXB ", "multiple PCIe bridges (without the PCIe host bridge)"},
	{XP_ROLE_LINK_PHB, "PHB ", "PCIe and a PCIe host bridge (typically the CPU)"},
	{XP_ROLE_LINK_NODE, "NODE", "PCIe and the interconnect between host bridges within a NUMA node"},
	{XP_ROLE_LINK_SYS, "SYS ", "PCIe and the SMP interconnect between NUMA nodes (QPI/UPI)"},
};

static void build_node_doc(struct topo *t, const struct xp_node *n)
{
	doc_free(&t->nd);
	char mem[32];
	struct tnode *root = tnode_new();
	struct line *l = &root->line;
	line_add(l, XP_ROLE_TITLE, "Machine %s", n->name);
	line_add(l, XP_ROLE_NORMAL, "  ");
	char st[48], pk_s[16], co_s[16], pu_s[16];
	line_add(l, xp_map_state_role(n->state), "%s", xp_map_state_str(n, st, sizeof st));
	if (n->pus == 0 && n->n_numa == 0)
		line_add(l, XP_ROLE_DIM, "  topology not known (no hwloc topology for this node)");
	else
		line_add(l, XP_ROLE_NORMAL, "  %s package%s, %s cores, %s PUs, %s", /* 0: not known, "-" */
			 xp_fmt_int(pk_s, sizeof pk_s, n->packages_n > 0 ? n->packages_n : -1),
			 n->packages_n == 1 ? "" : "s", xp_fmt_int(co_s, sizeof co_s, n->cores > 0 ? n->cores : -1),
			 xp_fmt_int(pu_s, sizeof pu_s, n->pus > 0 ? n->pus : -1),
			 n->memory_mib < 0 ? "memory -" : xp_fmt_mib(mem, sizeof mem, n->memory_mib));
	if (n->zone || n->rack || n->sw)
		line_add(l, XP_ROLE_DIM, "  zone %s / rack %s / switch %s", n->zone ? n->zone : "-", n->rack ? n->rack : "-",
			 n->sw ? n->sw : "-");
	for (size_t p = 0; p < n->n_packages; p++) {
		const struct xp_package *pk = &n->packages[p];
		struct tnode *x = tnode_add(root);
		line_add(&x->line, XP_ROLE_TITLE, "Package %d", pk->id);
		line_add(&x->line, XP_ROLE_NORMAL, "  %s%s%d cores, %d PUs, cpus %s", pk->model ? pk->model : "",
			 pk->model ? ", " : "", pk->cores, pk->pus, pk->cpus ? pk->cpus : "-");
		for (size_t m = 0; m < n->n_numa; m++)
			if (n->numa[m].package == pk->id)
				add_numa(x, n, &n->numa[m]);
	}
	/* NUMA domains no single package holds: memory-only domains, or packages unknown. */
	for (size_t m = 0; m < n->n_numa; m++) {
		bool held = false;
		for (size_t p = 0; p < n->n_packages && !held; p++)
			held = n->numa[m].package == n->packages[p].id;
		if (!held)
			add_numa(root, n, &n->numa[m]);
	}
	if (any_nonlocal(n)) {
		struct tnode *x = tnode_add(root);
		line_add(&x->line, XP_ROLE_TITLE, "Not local to one NUMA domain");
		add_locals(x, n, -2);
	}
	tnode_flatten(root, &t->nd, t->g, "", 0, true);
	tnode_free(root);

	/* Discovery warnings (sources that disagree, devices off the bus, failing tools) are
	 * the first thing an operator bringing a node up needs to see. */
	if (n->n_warnings) {
		doc_line(&t->nd);
		line_add(doc_line(&t->nd), XP_ROLE_WARN, "Warnings");
		for (size_t i = 0; i < n->n_warnings; i++)
			line_add(doc_line(&t->nd), XP_ROLE_WARN, "  %s", n->warnings[i]);
	}
	doc_line(&t->nd);
	add_matrix(&t->nd, n);
	doc_line(&t->nd);
	line_add(doc_line(&t->nd), XP_ROLE_TITLE, "Legend");
	for (size_t i = 0; i < sizeof legend / sizeof legend[0]; i++) {
		l = doc_line(&t->nd);
		line_add(l, XP_ROLE_NORMAL, "  ");
		line_add(l, legend[i].role, "%s", legend[i].key);
		line_add(l, XP_ROLE_NORMAL, " = %s", legend[i].text);
	}
	doc_measure(&t->nd);
	/* The cursor starts on the first device of the diagram (not ACC0: the diagram orders
	 * them by NUMA domain and affinity group). */
	if (line_of_dev(&t->nd, t->dev) < 0) {
		t->dev = -1;
		for (size_t i = 0; i < t->nd.n && t->dev < 0; i++)
			t->dev = t->nd.lines[i].dev;
	}
}

/* ---- device detail ---- */

static void kv(struct doc *d, const char *key, int role, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void kv(struct doc *d, const char *key, int role, const char *fmt, ...)
{
	struct line *l = doc_line(d);
	line_add(l, XP_ROLE_TITLE, "  %-18s", key);
	va_list ap;
	va_start(ap, fmt);
	line_addv(l, role, fmt, ap);
	va_end(ap);
}

/* A string field: its value, or "-" dimmed (unknown reads "-" everywhere, as in text output). */
static void kv_str(struct doc *d, const char *key, const char *v)
{
	if (v)
		kv(d, key, XP_ROLE_NORMAL, "%s", v);
	else
		kv(d, key, XP_ROLE_DIM, "-");
}

static void kv_int(struct doc *d, const char *key, long long v)
{
	char buf[32];
	if (v < 0)
		kv(d, key, XP_ROLE_DIM, "-");
	else
		kv(d, key, XP_ROLE_NORMAL, "%s", xp_fmt_int(buf, sizeof buf, v));
}

static void kv_mib(struct doc *d, const char *key, int64_t v)
{
	char buf[32];
	if (v < 0)
		kv(d, key, XP_ROLE_DIM, "-");
	else
		kv(d, key, XP_ROLE_NORMAL, "%s (%lld MiB)", xp_fmt_mib(buf, sizeof buf, v), (long long)v);
}

static void kv_num(struct doc *d, const char *key, double v, const char *unit)
{
	if (XP_HAS(v))
		kv(d, key, XP_ROLE_NORMAL, "%.1f%s", v, unit);
	else
		kv(d, key, XP_ROLE_DIM, "-");
}

/* A list field: one line per item under the key, "-" when empty (none known). */
static void kv_list(struct doc *d, const char *key, char *const *v, size_t n)
{
	if (!n)
		kv(d, key, XP_ROLE_DIM, "-");
	for (size_t i = 0; i < n; i++)
		kv(d, i ? "" : key, XP_ROLE_NORMAL, "%s", v[i]);
}

/* ---- device history graph (w: window, m: metric) ---- */

/* The graph of the device's history, its scale on the left, the time axis under it. */
static void dev_graph_lines(struct topo *t, struct doc *o, const struct xp_node *n, const struct xp_device *d)
{
	const struct xp_history *h = t->ui ? xp_ui_history(t->ui) : NULL;
	if (!h)
		return;
	struct xp_dev_graph g;
	int width = t->graph_w > 0 ? t->graph_w : XP_HIST_SLOTS;
	t->graph_gen = xp_history_generation(h);
	xp_dev_graph_build(h, n, (int)(d - n->devices), t->hist_metric, xp_dev_graph_windows[t->hist_win], time(NULL),
			   width, !t->g || !t->g->utf8, &g);
	struct line *l = doc_line(o);
	line_add(l, XP_ROLE_TITLE, "  %-18s", "history");
	line_add(l, g.empty ? XP_ROLE_DIM : XP_ROLE_NORMAL, "%s", g.title);
	line_add(l, XP_ROLE_DIM, "   (w window, m metric)");
	for (int r = 0; r < XP_DEV_GRAPH_ROWS; r++) {
		l = doc_line(o);
		line_add(l, XP_ROLE_DIM, "  %*s %s", g.axis_w, g.axis[r], t->g ? t->g->vline : "|");
		line_add(l, t->hist_metric == XP_HIST_UTIL ? XP_ROLE_OK : XP_ROLE_LINK_FABRIC, "%s", g.rows[r]);
	}
	l = doc_line(o);
	line_add(l, XP_ROLE_DIM, "  %*s %s", g.axis_w, "", g.time_axis);
	doc_line(o);
	xp_dev_graph_free(&g);
}

/* Builds the open device's page again (the graph's window, metric or width changed). */
static void dev_graph_rebuild(struct topo *t)
{
	if (t->mode != MODE_DEVICE || !t->ui)
		return;
	const struct xp_cluster *c = xp_ui_cluster(t->ui);
	if (t->node >= c->n_nodes)
		return;
	const struct xp_node *n = c->nodes[t->node];
	if (t->dev >= 0 && t->dev < (int)n->n_devices)
		build_dev_doc(t, n, &n->devices[t->dev]);
}

/* The graph takes the frame's width less its scale; a new width, or samples added since (a
 * refresh that brought no new cluster still adds one), build the page again. */
static void dev_graph_fit(struct topo *t, int frame_w)
{
	int w = frame_w - 16;
	w = w < 20 ? 20 : w > 240 ? 240 : w;
	const struct xp_history *h = t->ui ? xp_ui_history(t->ui) : NULL;
	if (w != t->graph_w || (h && xp_history_generation(h) != t->graph_gen)) {
		t->graph_w = w;
		dev_graph_rebuild(t);
	}
}

/* `w` cycles 1 min / 10 min / 1 h, `m` util / mem / temp / power. */
static int dev_graph_key(struct topo *t, int key)
{
	if (key == 'w')
		t->hist_win = (t->hist_win + 1) % XP_DEV_GRAPH_WINDOWS;
	else if (key == 'm')
		t->hist_metric = (t->hist_metric + 1) % XP_HIST_METRICS;
	else
		return XP_REACT_UNHANDLED;
	dev_graph_rebuild(t);
	return XP_REACT_REDRAW;
}

/* The device's processes, one line each under a heading (nvitop's lower half); "-" for a vendor
 * that does not list processes, "none" for one that lists none. */
static void dev_doc_processes(struct doc *o, const struct xp_device *d)
{
	if (!d->procs_known) {
		kv(o, "processes", XP_ROLE_DIM, "-");
		return;
	}
	if (!d->n_procs) {
		kv(o, "processes", XP_ROLE_DIM, "none");
		return;
	}
	kv(o, "processes", XP_ROLE_TITLE, "%7s  %-12s %-4s %9s %5s  %s", "PID", "USER", "TYPE", "MEMORY", "UTIL",
	   "COMMAND");
	for (size_t i = 0; i < d->n_procs; i++) {
		const struct xp_proc *p = &d->procs[i];
		char pid[24], mem[32], util[16];
		xp_fmt_int(pid, sizeof pid, p->pid);
		xp_fmt_mib(mem, sizeof mem, p->memory_mib);
		if (XP_HAS(p->util_pct))
			snprintf(util, sizeof util, "%.0f%%", p->util_pct);
		else
			snprintf(util, sizeof util, "-");
		kv(o, "", XP_ROLE_NORMAL, "%7s  %-12.12s %-4s %9s %5s  %s", pid, p->user ? p->user : "-",
		   p->type[0] ? p->type : "-", mem, util, p->command ? p->command : "-");
	}
}

static void build_dev_doc(struct topo *t, const struct xp_node *n, const struct xp_device *d)
{
	doc_free(&t->dd);
	struct doc *o = &t->dd;
	struct line *l = doc_line(o);
	line_add(l, health_role(d->health), "ACC%d", d->index);
	char vm[256];
	line_add(l, XP_ROLE_TITLE, "  %s on %s", vendor_model(d, vm, sizeof vm), n->name);
	doc_line(o);
	kv_int(o, "index", d->index);
	kv_str(o, "vendor", d->vendor);
	kv_str(o, "model", d->model);
	kv_str(o, "arch", d->arch);
	kv_str(o, "uuid", d->uuid);
	kv_str(o, "pci bus id", d->pci_bus_id);
	kv_str(o, "pci id", d->pci_id);
	if (d->pci_class < 0) {
		kv(o, "pci class", XP_ROLE_DIM, "-");
	} else {
		const char *cn = xp_pci_class_name((unsigned)d->pci_class);
		kv(o, "pci class", XP_ROLE_NORMAL, "%04x%s%s", (unsigned)d->pci_class & 0xffff, cn ? "  " : "", cn ? cn : "");
	}
	kv_list(o, "pci path", d->pci_path, d->n_pci_path);
	kv_list(o, "os devices", d->os_devices, d->n_os_devices);
	kv_int(o, "numa", d->numa);
	kv_str(o, "driver", d->driver);
	kv_str(o, "firmware", d->firmware);
	kv_str(o, "runtime", d->runtime);
	kv_mib(o, "memory", d->memory_mib);
	kv_mib(o, "memory used", d->memory_used_mib);
	if (!d->n_peaks)
		kv(o, "peaks", XP_ROLE_DIM, "-");
	for (size_t i = 0; i < d->n_peaks; i++) {
		const struct xp_peak *p = &d->peaks[i];
		if (XP_HAS(p->value))
			kv(o, i ? "" : "peaks", XP_ROLE_NORMAL, "%-6s %g %s", p->precision ? p->precision : "?", p->value,
			   p->unit ? p->unit : "");
		else
			kv(o, i ? "" : "peaks", XP_ROLE_DIM, "%-6s -", p->precision ? p->precision : "?");
	}
	kv_num(o, "ecu", d->ecu, "");
	kv_str(o, "ecu basis", d->ecu_basis);
	if (d->mem_access == XP_MEM_UNKNOWN)
		kv(o, "memory access", XP_ROLE_DIM, "-");
	else
		kv(o, "memory access", XP_ROLE_NORMAL, "%s", xp_mem_access_name(d->mem_access));
	kv_str(o, "affinity group", d->affinity_group);
	kv(o, "health", d->health == XP_HEALTH_UNKNOWN ? XP_ROLE_DIM : health_role(d->health), "%s",
	   xp_health_name(d->health));
	kv_list(o, "health reasons", d->health_reasons, d->n_health_reasons);
	kv_num(o, "temperature", d->temperature_c, " C");
	kv_num(o, "power", d->power_w, " W");
	kv_num(o, "power limit", d->power_limit_w, " W");
	if (XP_HAS(d->utilization_pct))
		kv(o, "utilization", xp_role_for_util(d->utilization_pct), "%.1f %%", d->utilization_pct);
	else
		kv(o, "utilization", XP_ROLE_DIM, "-");
	/* Below the figures it draws, not above the identity (an 80x24 page shows that first). */
	doc_line(o);
	dev_graph_lines(t, o, n, d);
	kv_int(o, "ecc corrected", d->ecc_corrected);
	kv_int(o, "ecc uncorrected", d->ecc_uncorrected);
	kv_int(o, "retired pages", d->retired_pages);
	static const char *const part_names[] = {"whole", "mig", "vnpu", "share"};
	char parts[64] = "";
	for (int b = 0; b < 4; b++)
		if (d->partition & (1u << b))
			snprintf(parts + strlen(parts), sizeof parts - strlen(parts), "%s%s", *parts ? ", " : "", part_names[b]);
	if (*parts)
		kv(o, "partition", XP_ROLE_NORMAL, "%s", parts);
	else
		kv(o, "partition", XP_ROLE_DIM, "none");
	if (!d->n_allocs)
		kv(o, "allocations", XP_ROLE_DIM, "none");
	for (size_t i = 0; i < d->n_allocs; i++) {
		const struct xp_alloc *a = &d->allocs[i];
		char mem[32] = "";
		if (a->memory_mib >= 0)
			snprintf(mem, sizeof mem, "  %lld MiB", (long long)a->memory_mib);
		char share[24] = "";
		if (a->share_pct > 0)
			snprintf(share, sizeof share, "  %d%%", a->share_pct);
		kv(o, i ? "" : "allocations", XP_ROLE_NORMAL, "%s  %s%s%s", a->slice ? a->slice : "whole",
		   a->owner ? a->owner : "?", mem, share);
	}
	dev_doc_processes(o, d);
	/* Not a device field, but what the next question about a device usually is. */
	size_t idx = (size_t)(d - n->devices);
	if (n->links && n->n_devices > 1) {
		l = doc_line(o);
		line_add(l, XP_ROLE_TITLE, "  %-18s", "links");
		bool first = true;
		for (size_t j = 0; j < n->n_devices; j++) {
			if (j == idx)
				continue;
			char buf[16];
			struct xp_link lk = *xp_node_link(n, idx, j);
			line_add(l, XP_ROLE_NORMAL, "%sACC%zu ", first ? "" : "  ", j);
			line_add(l, link_role(lk), "%s", xp_link_str(lk, buf, sizeof buf));
			first = false;
		}
	}
	doc_measure(o);
}

/* ---- drawing ---- */

/* What drawing one map row needs beyond the view. */
struct map_frame {
	struct topo *t;
	struct xp_ui *ui;
	struct xp_rect r;
	struct xp_list_fit fit;
	int x0;
	int cols[XP_NCOL_COUNT]; /* the node_cols columns shown, in order; fit has one more: the cells */
	size_t ncols;
	size_t cell_col;         /* the fit column of the device cells: ncols, or ncols + 1 after the
				  * sparklines */
	bool spark;              /* the sparkline column is shown (fit column ncols) */
	const struct xp_history *h;
	time_t now;
};

/* The sparkline column: two minutes of utilization in 12 columns of 10 s, the node's the mean of
 * its devices'. Shown from 120 columns wide, where it takes none of the columns an 80-column
 * terminal needs. */
#define SPARK_W 12
#define SPARK_WINDOW 120
#define SPARK_MIN_WIDTH 120
#define SPARK_TITLE "UTIL 2m"

/* Draws the sparkline of device dev of n (-1: the node's mean over its devices) at x. */
static void draw_spark(const struct map_frame *f, WINDOW *w, int y, int x, int maxx, const struct xp_node *n,
		       int dev, int role)
{
	double v[SPARK_W], sum[SPARK_W];
	int cnt[SPARK_W] = {0};
	for (int i = 0; i < SPARK_W; i++)
		sum[i] = 0;
	size_t from = dev >= 0 ? (size_t)dev : 0, to = dev >= 0 ? (size_t)dev + 1 : n->n_devices;
	bool any = false;
	for (size_t d = from; d < to; d++) {
		if (!xp_history_series(f->h, n->name, n->devices[d].index, XP_HIST_UTIL, SPARK_WINDOW, f->now, v,
				       SPARK_W))
			continue;
		any = true;
		for (int i = 0; i < SPARK_W; i++)
			if (XP_HAS(v[i])) {
				sum[i] += v[i];
				cnt[i]++;
			}
	}
	if (!any) {
		xp_draw_put(w, y, x, maxx, XP_ROLE_DIM, "-", 0);
		return;
	}
	for (int i = 0; i < SPARK_W; i++)
		v[i] = cnt[i] ? sum[i] / cnt[i] : XP_NA;
	char buf[XP_SPARK_BYTES(SPARK_W)];
	/* Utilization is drawn on its own scale, 0 to 100 %: rows compare by height. */
	xp_spark(v, SPARK_W, 0, 100, !f->t->g->utf8, buf, sizeof buf);
	xp_draw_put(w, y, x, maxx, role, buf, 0);
}

/* Power as a heading's total: watts, kilowatts from 10 kW. */
static const char *power_str(double w, char *buf, size_t len)
{
	if (!XP_HAS(w))
		snprintf(buf, len, "-");
	else if (w >= 10000)
		snprintf(buf, len, "%.1f kW", w / 1000.0);
	else
		snprintf(buf, len, "%.0f W", w);
	return buf;
}

static void draw_group_row(const struct topo *t, WINDOW *w, int y, struct xp_rect r, const struct xp_map_group *gr,
			   bool sel)
{
	int maxx = r.x + r.w;
	char label[512], counts[256], pw[32];
	xp_map_group_label(gr, label, sizeof label);
	int n = 0;
	if (gr->n_nodes < gr->n_total)
		n = snprintf(counts, sizeof counts, "  %zu of %zu nodes", gr->n_nodes, gr->n_total);
	else
		n = snprintf(counts, sizeof counts, "  %zu node%s", gr->n_nodes, gr->n_nodes == 1 ? "" : "s");
	/* The group's totals: what an operator compares racks by. */
	snprintf(counts + n, sizeof counts - (size_t)n, "  free %zu/%zu", gr->n_free, gr->n_devices);
	n = (int)strlen(counts);
	if (XP_HAS(gr->util))
		n += snprintf(counts + n, sizeof counts - (size_t)n, "  util %.0f%%", gr->util);
	if (XP_HAS(gr->temp))
		n += snprintf(counts + n, sizeof counts - (size_t)n, "  max %.0fC", gr->temp);
	if (XP_HAS(gr->power))
		snprintf(counts + n, sizeof counts - (size_t)n, "  %s", power_str(gr->power, pw, sizeof pw));
	int base = sel ? XP_ROLE_SELECTED : XP_ROLE_NORMAL;
	const char *mark = gr->folded ? (t->g->utf8 ? "\xe2\x96\xb8" : "+") : (t->g->utf8 ? "\xe2\x96\xbe" : "-");
	int x = xp_draw_put(w, y, r.x, maxx, sel ? base : XP_ROLE_BORDER, mark, 0);
	x = xp_draw_put(w, y, x, maxx, base, " ", 0);
	x = xp_draw_put(w, y, x, maxx, sel ? base : XP_ROLE_TITLE, label, 0);
	x = xp_draw_put(w, y, x, maxx, sel ? base : XP_ROLE_DIM, counts, 0);
	x = xp_draw_put(w, y, x, maxx, base, " ", 0);
	while (x < maxx)
		x = xp_draw_put(w, y, x, maxx, sel ? base : XP_ROLE_BORDER, t->g->hline, 0);
}

/* A tagged node's mark in the row's first column (drawn again over the row's fill). */
static void draw_tag_mark(const struct topo *t, WINDOW *w, int y, int x, int base, const char *name)
{
	if (!xp_nact_tagged(t->act, name))
		return;
	xp_draw_fill(w, y, x, x + 2, base);
	xp_draw_put(w, y, x, x + 1, base == XP_ROLE_SELECTED ? base : XP_ROLE_WARN, "*", 0);
}

/* The role of a figure: health and utilization colour their cells. */
static int cell_role(int col, const struct xp_node *n, const struct xp_node_sum *s, bool hit, int base)
{
	if (base == XP_ROLE_SELECTED)
		return base;
	switch (col) {
	case XP_NCOL_NODE:
		return hit ? XP_ROLE_MATCH : base;
	case XP_NCOL_STATE:
		return xp_map_state_role(n->state);
	case XP_NCOL_HEALTH:
		return health_role(s->health);
	case XP_NCOL_UTIL:
		return XP_HAS(s->util) ? xp_role_for_util(s->util) : XP_ROLE_DIM;
	case XP_NCOL_FREE:
		return s->n_free ? XP_ROLE_OK : base;
	default:
		return base;
	}
}

static void draw_cells(const struct topo *t, WINDOW *w, int y, int x, int maxx, const struct xp_node *n)
{
	struct xp_cells cells;
	xp_map_cells(n, t->g, maxx - x, &cells);
	for (size_t i = 0; i < cells.n_seg; i++) {
		const struct xp_cell_seg *s = &cells.seg[i];
		char one[32];
		size_t len = s->len < sizeof one ? s->len : sizeof one - 1;
		memcpy(one, cells.text + s->off, len);
		one[len] = '\0';
		xp_draw_put(w, y, x + (int)s->col, maxx, s->role, one, 0);
	}
}

static void draw_dev_row(const struct map_frame *f, WINDOW *w, int y, const struct xp_node *n, int dev, bool sel)
{
	int maxx = f->r.x + f->r.w, base = sel ? XP_ROLE_SELECTED : XP_ROLE_NORMAL;
	const struct xp_device *d = &n->devices[dev];
	struct xp_node_sum s;
	xp_device_sum(n, d, &s);
	xp_draw_fill(w, y, f->r.x, maxx, base);
	char buf[256];
	for (size_t j = 0; j < f->ncols && j < f->fit.n; j++) {
		int col = f->cols[j];
		const char *txt = xp_ncol_dev_text(col, n, d, &s, buf, sizeof buf);
		char ind[300];
		if (col == XP_NCOL_NODE) {
			snprintf(ind, sizeof ind, "  %s", txt);
			txt = ind;
		}
		int role = col == XP_NCOL_NODE && !sel ? XP_ROLE_DIM : cell_role(col, n, &s, false, base);
		xp_list_draw_cell(w, y, f->x0 + f->fit.x[j], f->fit.w[j], maxx, role, xp_ncols[col].right, txt);
	}
	if (f->spark && f->fit.n > f->ncols)
		draw_spark(f, w, y, f->x0 + f->fit.x[f->ncols], maxx, n, dev, sel ? base : XP_ROLE_DIM);
	if (f->fit.n <= f->cell_col)
		return;
	int x = f->x0 + f->fit.x[f->cell_col];
	const char *glyph;
	int role = xp_map_cell_role(n, d, f->t->g, &glyph);
	x = xp_draw_put(w, y, x, maxx, sel ? base : role, glyph, 0);
	snprintf(buf, sizeof buf, " %s", d->pci_bus_id ? d->pci_bus_id : "");
	xp_draw_put(w, y, x, maxx, sel ? base : XP_ROLE_DIM, buf, 0);
}

static void draw_map_row(void *arg, WINDOW *w, int y, size_t row, bool sel)
{
	const struct map_frame *f = arg;
	const struct topo *t = f->t;
	const struct xp_map_row *mr = &t->rows.rows[row];
	int maxx = f->r.x + f->r.w;
	if (mr->kind == XP_MAP_GROUP) {
		draw_group_row(t, w, y, f->r, &t->rows.groups[mr->index], sel);
		return;
	}
	const struct xp_node *n = xp_ui_cluster(f->ui)->nodes[mr->index];
	if (mr->kind == XP_MAP_DEVICE) {
		draw_dev_row(f, w, y, n, mr->dev, sel);
		return;
	}
	const struct xp_node_sum *s = &t->sums[mr->index];
	int base = sel ? XP_ROLE_SELECTED : XP_ROLE_NORMAL;
	char buf[256];
	/* A search by words marks the names it found; an expression marks nothing (every row
	 * shown is a match). */
	const struct xp_filter *fx = t->filter && *t->filter ? xp_ui_filter_expr(f->ui, xp_filter_node_fields) : NULL;
	bool hit = !sel && fx && xp_filter_is_text(fx) && xp_filter_eval(fx, NULL, NULL, n->name);
	xp_draw_fill(w, y, f->r.x, maxx, base);
	draw_tag_mark(t, w, y, f->r.x, base, n->name);
	for (size_t j = 0; j < f->ncols && j < f->fit.n; j++) {
		int col = f->cols[j];
		xp_list_draw_cell(w, y, f->x0 + f->fit.x[j], f->fit.w[j], maxx, cell_role(col, n, s, hit, base),
				  xp_ncols[col].right, xp_ncol_text(col, n, s, buf, sizeof buf));
	}
	if (f->spark && f->fit.n > f->ncols)
		draw_spark(f, w, y, f->x0 + f->fit.x[f->ncols], maxx, n, -1, sel ? base : XP_ROLE_NORMAL);
	if (f->fit.n <= f->cell_col)
		return;
	int x = f->x0 + f->fit.x[f->cell_col];
	if (x < maxx)
		draw_cells(t, w, y, x, maxx, n);
}

static void draw_map(struct topo *t, struct xp_ui *ui, WINDOW *w, struct xp_rect r)
{
	int maxx = r.x + r.w;
	/* The column header: fixed at the top, the list scrolls under it. */
	struct map_frame f = {t, ui, r, {{0}}, r.x + 2, {0}, 0, 0, false, xp_ui_history(ui), time(NULL)};
	/* The device cells keep room for a node's devices with their brackets, at most 16. */
	int cells = t->max_dev < 16 ? t->max_dev : 16;
	if (cells < (int)strlen(DEV_TITLE))
		cells = (int)strlen(DEV_TITLE);
	int widths[XP_NCOL_COUNT];
	f.spark = f.h && xp_history_devices(f.h) && r.w >= SPARK_MIN_WIDTH;
	f.ncols = xp_ncol_fit(t->want, maxx - f.x0, 2, cells + 2 + (f.spark ? SPARK_W + 2 : 0), f.cols, widths);
	struct xp_list_col cols[N_COLS];
	int want[N_COLS];
	for (size_t j = 0; j < f.ncols; j++) {
		const struct xp_ncol_def *d = &xp_ncols[f.cols[j]];
		cols[j] = (struct xp_list_col){.title = d->title, .max = widths[j], .min = j ? 0 : d->min,
					       .align = d->right ? XP_ALIGN_RIGHT : XP_ALIGN_LEFT};
		want[j] = widths[j];
	}
	f.cell_col = f.ncols;
	if (f.spark) {
		cols[f.ncols] = (struct xp_list_col){.title = SPARK_TITLE, .max = SPARK_W, .min = SPARK_W};
		want[f.ncols] = SPARK_W;
		f.cell_col++;
	}
	cols[f.cell_col] = (struct xp_list_col){.title = DEV_TITLE, .fill = true};
	want[f.cell_col] = 0;
	xp_list_fit(cols, want, f.cell_col + 1, maxx - f.x0, 2, &f.fit);
	/* The sorted column's heading carries the arrow. */
	struct xp_list hl = XP_LIST_INIT;
	for (size_t j = 0; j < f.ncols; j++)
		if (f.cols[j] == t->opt.sort_col) {
			hl.sort_col = (int)j;
			hl.sort_desc = t->opt.desc;
		}
	xp_list_draw_header(w, r.y, r.x, f.x0, maxx, cols, &f.fit, &hl, t->g);
	struct xp_rect body = {r.y + 1, r.x, r.h - 1, r.w};
	xp_list_frame(&t->map, body.h);
	if (body.h <= 0)
		return;
	if (!t->rows.n) {
		char msg[320];
		if (xp_ui_cluster(ui)->n_nodes)
			snprintf(msg, sizeof msg, "  no node matches \"%s\" (Esc clears the filter)", t->filter ? t->filter : "");
		else
			snprintf(msg, sizeof msg, "  no nodes yet");
		xp_list_draw_empty(w, body, msg);
		return;
	}
	xp_list_draw_rows(&t->map, w, body, draw_map_row, &f);
}

/* The pager of a detail document: its lines and widest line, as the document is now. */
static struct xp_list *doc_list(struct xp_list *l, const struct doc *d)
{
	xp_list_set_count(l, d->n, d->n);
	l->width = d->width;
	return l;
}

static void draw_doc(WINDOW *w, struct xp_rect r, struct doc *d, struct xp_list *l, int cursor_dev)
{
	doc_list(l, d);
	l->cols = r.w;
	xp_list_frame(l, r.h);
	for (int i = 0; i < r.h; i++) {
		size_t li = l->top + (size_t)i;
		if (li < d->n) {
			const struct line *ln = &d->lines[li];
			draw_line(w, r.y + i, r.x, r.x + r.w, ln, l->xoff, cursor_dev >= 0 && ln->dev == cursor_dev);
		} else {
			xp_draw_fill(w, r.y + i, r.x, r.x + r.w, XP_ROLE_NORMAL);
		}
	}
}

static void draw(void *st, struct xp_ui *ui, WINDOW *w, struct xp_rect r)
{
	struct topo *t = st;
	sync(t, ui);
	if (r.h <= 0 || r.w <= 0)
		return;
	if (t->mode == MODE_MAP)
		draw_map(t, ui, w, r);
	else if (t->mode == MODE_NODE)
		draw_doc(w, r, &t->nd, &t->nlist, t->dev);
	else {
		t->ui = ui;
		dev_graph_fit(t, r.w);
		draw_doc(w, r, &t->dd, &t->dlist, -1);
	}
	/* An action's question (a reason, y/N) over the last row, whatever the page. */
	xp_nact_draw(t->act, w, r);
}

/* ---- keys ---- */

static void open_node(struct topo *t, struct xp_ui *ui)
{
	if (!t->rows.n || t->rows.rows[t->map.cursor].kind == XP_MAP_GROUP)
		return;
	const struct xp_cluster *c = xp_ui_cluster(ui);
	t->node = t->rows.rows[t->map.cursor].index;
	set_name(t, c->nodes[t->node]->name);
	t->mode = MODE_NODE;
	t->dev = -1;
	t->nlist.top = 0;
	t->nlist.xoff = 0;
	build_node_doc(t, c->nodes[t->node]);
}

static void open_device(struct topo *t, struct xp_ui *ui)
{
	const struct xp_cluster *c = xp_ui_cluster(ui);
	const struct xp_node *n = c->nodes[t->node];
	if (t->dev < 0 || t->dev >= (int)n->n_devices)
		return;
	const struct xp_device *d = &n->devices[t->dev];
	free(t->dev_bus);
	t->dev_bus = xp_strdup(d->pci_bus_id);
	t->mode = MODE_DEVICE;
	t->dlist.top = 0;
	t->dlist.xoff = 0;
	build_dev_doc(t, n, d);
}

/* The map cursor moved: the node under it is the one to come back to after a refresh. */
static void map_moved(struct topo *t, struct xp_ui *ui)
{
	note_cursor(t, xp_ui_cluster(ui));
}

/* The open_node hook (xp_ui_open_node: Enter on a fleet cell or a problem): the map's cursor
 * goes to the node, then Enter's own opening runs; false when the map does not show it. */
static bool open_named(void *st, struct xp_ui *ui, const char *name)
{
	struct topo *t = st;
	sync(t, ui);
	const struct xp_cluster *c = xp_ui_cluster(ui);
	for (size_t i = 0; i < t->rows.n; i++)
		if (t->rows.rows[i].kind == XP_MAP_NODE && strcmp(c->nodes[t->rows.rows[i].index]->name, name) == 0) {
			t->mode = MODE_MAP;
			xp_list_move_to(&t->map, (long)i, 1);
			map_moved(t, ui);
			open_node(t, ui);
			return t->mode == MODE_NODE;
		}
	return false;
}

static int map_next_match(struct topo *t, struct xp_ui *ui, int dir)
{
	const char *f = xp_ui_filter(ui);
	size_t cur = t->map.cursor;
	if (!f || !*f) {
		xp_ui_message(ui, XP_ROLE_DIM, "no filter: press / to look for nodes");
		return XP_REACT_REDRAW;
	}
	long at = xp_map_next_node(&t->rows, cur, dir);
	if (at < 0) {
		xp_ui_message(ui, XP_ROLE_WARN, "no node matches \"%s\"", f);
		return XP_REACT_REDRAW;
	}
	if ((size_t)at == cur)
		xp_ui_message(ui, XP_ROLE_DIM, "only this node matches \"%s\"", f);
	else if ((dir > 0) != ((size_t)at > cur))
		xp_ui_message(ui, XP_ROLE_DIM, "search wrapped");
	if (xp_list_move_to(&t->map, at, dir))
		map_moved(t, ui);
	return XP_REACT_REDRAW;
}

/* The group row of the row under the cursor (itself for a heading), or -1. */
static long cursor_group_row(const struct topo *t)
{
	for (long i = (long)t->map.cursor; i >= 0 && (size_t)i < t->rows.n; i--)
		if (t->rows.rows[i].kind == XP_MAP_GROUP)
			return i;
	return -1;
}

static const char *sort_desc_name(const struct topo *t)
{
	return t->opt.desc ? "descending" : "ascending";
}

/* Figures sort largest first on their first press (the hottest node on top); names, states
 * and models alphabetically. */
static bool first_desc(int col)
{
	return col != XP_NCOL_NODE && col != XP_NCOL_STATE && col != XP_NCOL_MODEL;
}

static void set_sort(struct topo *t, struct xp_ui *ui, int col, bool desc)
{
	t->opt.sort_col = col;
	t->opt.desc = desc;
	t->redo = 2;
	if (col < 0)
		xp_ui_message(ui, XP_ROLE_DIM, "sort: the map's own order");
	else
		xp_ui_message(ui, XP_ROLE_DIM, "sorted by %s, %s", xp_ncols[col].name, sort_desc_name(t));
}

static int sort_key(struct topo *t, struct xp_ui *ui, int key)
{
	int col = t->opt.sort_col;
	if (key == '>' || key == KEY_F(6)) {
		col = col + 1 >= XP_NCOL_COUNT ? -1 : col + 1;
		set_sort(t, ui, col, col >= 0 && first_desc(col));
	} else if (key == '<') {
		col = col < 0 ? XP_NCOL_COUNT - 1 : col - 1;
		set_sort(t, ui, col, col >= 0 && first_desc(col));
	} else if (key == 'I') {
		if (col < 0) {
			xp_ui_message(ui, XP_ROLE_DIM, "no sort to invert: > or a Shift-letter sorts");
			return XP_REACT_REDRAW;
		}
		set_sort(t, ui, col, !t->opt.desc);
	} else {
		for (int c = 0; c < XP_NCOL_COUNT; c++)
			if (xp_ncols[c].key == key) {
				/* Again: the other way round (k9s). */
				set_sort(t, ui, c, c == col ? !t->opt.desc : first_desc(c));
				return XP_REACT_REDRAW;
			}
		return XP_REACT_UNHANDLED;
	}
	return XP_REACT_REDRAW;
}

static int fold_key(struct topo *t, struct xp_ui *ui, int key)
{
	if (t->opt.group == XP_GROUP_NONE) {
		xp_ui_message(ui, XP_ROLE_DIM, "no groups to fold: = groups the nodes");
		return XP_REACT_REDRAW;
	}
	char buf[512];
	if (key == '*') {
		/* All folded: unfold all; else fold all. */
		bool all = true;
		for (size_t i = 0; i < t->rows.n_groups && all; i++)
			all = t->rows.groups[i].folded;
		folds_clear(t);
		t->fold_all = !all;
		xp_ui_message(ui, XP_ROLE_DIM, "%s every group", all ? "unfolded" : "folded");
	} else {
		long g = cursor_group_row(t);
		if (g < 0)
			return XP_REACT_REDRAW;
		const struct xp_map_group *gr = &t->rows.groups[t->rows.rows[g].index];
		bool fold = key == '-' ? true : key == '+' ? false : !gr->folded;
		set_fold(t, xp_map_group_label(gr, buf, sizeof buf), fold);
		/* The cursor goes to the heading: its node may be folded away. */
		t->map.cursor = (size_t)g;
		note_cursor(t, xp_ui_cluster(ui));
	}
	if (t->redo < 1)
		t->redo = 1;
	return XP_REACT_REDRAW;
}

static const char *selected_node(void *st);

static int map_key(struct topo *t, struct xp_ui *ui, int key)
{
	if (xp_list_key(&t->map, key)) {
		map_moved(t, ui);
		return XP_REACT_REDRAW;
	}
	const struct xp_map_row *cur = t->rows.n ? &t->rows.rows[t->map.cursor] : NULL;
	switch (key) {
	case '\n':
	case '\r':
	case KEY_ENTER:
		if (cur && cur->kind == XP_MAP_GROUP)
			return fold_key(t, ui, 0);
		open_node(t, ui);
		if (cur && cur->kind == XP_MAP_DEVICE && t->mode == MODE_NODE) {
			t->dev = cur->dev;
			open_device(t, ui);
		}
		break;
	case '-':
	case '+':
	case '*':
		return fold_key(t, ui, key);
	case 'e':
		t->opt.expanded = !t->opt.expanded;
		t->redo = t->redo < 1 ? 1 : t->redo;
		xp_ui_message(ui, XP_ROLE_DIM, "%s", t->opt.expanded ? "a row per device (e: one per node)"
								     : "one row per node (e: a row per device)");
		break;
	case '=':
		/* switch (the default) -> none -> zone -> rack -> switch */
		t->opt.group = t->opt.group == XP_GROUP_SWITCH ? XP_GROUP_NONE : t->opt.group + 1;
		t->redo = 2;
		xp_ui_message(ui, XP_ROLE_DIM, "grouped by %s", xp_group_name(t->opt.group));
		break;
	case 'n':
		return map_next_match(t, ui, 1);
	case 'N':
		return map_next_match(t, ui, -1);
	default: {
		/* Sorting's keys, then the actions' (Space, d, u, s). */
		int r = sort_key(t, ui, key);
		return r == XP_REACT_UNHANDLED ? xp_nact_key(t->act, ui, key, selected_node(t), true) : r;
	}
	}
	return XP_REACT_REDRAW;
}

/* Keeps line li inside the window of page rows starting at *top. */
static void show_line(size_t *top, long li, int page)
{
	if (li < 0)
		return;
	if ((size_t)li < *top)
		*top = (size_t)li;
	else if ((size_t)li >= *top + (size_t)page)
		*top = (size_t)li - (size_t)page + 1;
}

/* Moves the device cursor to the next device line in dir; when there is none, the view
 * scrolls instead, so that the link matrix below the last device is reachable. */
static void node_step(struct topo *t, int dir)
{
	struct xp_list *l = doc_list(&t->nlist, &t->nd);
	long li = line_of_dev(&t->nd, t->dev);
	long n = (long)t->nd.n;
	for (long i = li + dir; li >= 0 && i >= 0 && i < n; i += dir)
		if (t->nd.lines[i].dev >= 0) {
			t->dev = t->nd.lines[i].dev;
			show_line(&l->top, i, l->page);
			return;
		}
	if (dir < 0)
		l->top = l->top ? l->top - 1 : 0;
	else if (l->top < xp_list_max_top(l))
		l->top++;
}

/* After a page scroll, a cursor left off screen moves to a device line on screen, if any. */
static void node_cursor_into_view(struct topo *t, int dir)
{
	long li = line_of_dev(&t->nd, t->dev);
	size_t page = (size_t)t->nlist.page, lo = t->nlist.top, hi = lo + page;
	if (li >= 0 && (size_t)li >= lo && (size_t)li < hi)
		return;
	for (size_t k = 0; k < page; k++) {
		size_t i = dir > 0 ? lo + k : hi - 1 - k;
		if (i < t->nd.n && t->nd.lines[i].dev >= 0) {
			t->dev = t->nd.lines[i].dev;
			return;
		}
	}
}

static int node_key(struct topo *t, struct xp_ui *ui, int key)
{
	switch (key) {
	case KEY_UP:
	case 'k':
		node_step(t, -1);
		return XP_REACT_REDRAW;
	case KEY_DOWN:
	case 'j':
		node_step(t, 1);
		return XP_REACT_REDRAW;
	case '\n':
	case '\r':
	case KEY_ENTER:
		open_device(t, ui);
		return XP_REACT_REDRAW;
	case 27:
		back_to_map(t);
		return XP_REACT_REDRAW;
	case 's':
	case 'd':
	case 'u':
		return xp_nact_key(t->act, ui, key, t->name, false);
	default:
		break;
	}
	if (!xp_list_key(doc_list(&t->nlist, &t->nd), key))
		return XP_REACT_UNHANDLED;
	/* The page keys leave the device cursor where the window went: up keys from its
	 * bottom, down keys from its top. */
	if (key == KEY_PPAGE || key == KEY_END || key == 'G')
		node_cursor_into_view(t, -1);
	else if (key == KEY_NPAGE || key == KEY_HOME || key == 'g')
		node_cursor_into_view(t, 1);
	return XP_REACT_REDRAW;
}

static int dev_key(struct topo *t, int key)
{
	if (key == 27) {
		t->mode = MODE_NODE;
		doc_free(&t->dd);
		free(t->dev_bus);
		t->dev_bus = NULL;
		return XP_REACT_REDRAW;
	}
	if (key == 'w' || key == 'm')
		return dev_graph_key(t, key);
	return xp_list_key(doc_list(&t->dlist, &t->dd), key) ? XP_REACT_REDRAW : XP_REACT_UNHANDLED;
}

/* A question of the actions (a reason, y/N) takes every key while it is asked. */
static int pre_key(void *st, struct xp_ui *ui, int key)
{
	struct topo *t = st;
	return xp_nact_pre_key(t->act, ui, key);
}

static int on_key(void *st, struct xp_ui *ui, int key)
{
	struct topo *t = st;
	sync(t, ui);
	switch (t->mode) {
	case MODE_MAP:
		return map_key(t, ui, key);
	case MODE_NODE:
		return node_key(t, ui, key);
	default:
		return dev_key(t, key);
	}
}

/* The wheel moves the map cursor, and scrolls a detail. */
static int on_wheel(void *st, struct xp_ui *ui, int dir)
{
	struct topo *t = st;
	sync(t, ui);
	if (t->mode == MODE_MAP) {
		xp_list_wheel(&t->map, dir);
		map_moved(t, ui);
	} else if (t->mode == MODE_NODE) {
		xp_list_wheel(doc_list(&t->nlist, &t->nd), dir);
	} else {
		xp_list_wheel(doc_list(&t->dlist, &t->dd), dir);
	}
	return XP_REACT_REDRAW;
}

static int on_click(void *st, struct xp_ui *ui, int y, int x)
{
	struct topo *t = st;
	(void)x;
	sync(t, ui);
	if (t->mode == MODE_MAP) {
		switch (xp_list_click(&t->map, y - 1)) {
		case XP_LIST_MISS:
			return XP_REACT_NONE;
		case XP_LIST_ACTIVATE:
			open_node(t, ui);
			break;
		default:
			map_moved(t, ui);
			break;
		}
		return XP_REACT_REDRAW;
	}
	if (t->mode == MODE_NODE) {
		size_t li = t->nlist.top + (size_t)y;
		if (y < 0 || li >= t->nd.n || t->nd.lines[li].dev < 0)
			return XP_REACT_NONE;
		if (t->nd.lines[li].dev == t->dev)
			open_device(t, ui);
		else
			t->dev = t->nd.lines[li].dev;
		return XP_REACT_REDRAW;
	}
	return XP_REACT_NONE;
}

/* Lazy: the next draw, key or click rebuilds (sync sees the new cluster or filter), so a
 * refresh costs nothing while another view is shown. */
static void on_data(void *st, struct xp_ui *ui)
{
	struct topo *t = st;
	t->g = xp_ui_glyphs(ui);
	/* What the figures may keep at the next build: the nodes the refresh did not replace
	 * (a freed node's address may come back for another one, so only the app can say). */
	struct xp_ui_moved m;
	if (!xp_ui_moved(ui, &m)) {
		t->reuse = false;
		return;
	}
	for (size_t i = 0; i < m.n_changed; i++)
		if (m.changed[i] < t->n_nc)
			t->nc[m.changed[i]].node = NULL;
}

static const char *where(void *st)
{
	struct topo *t = st;
	if (t->mode == MODE_MAP || !t->g)
		return NULL;
	if (t->mode == MODE_NODE)
		snprintf(t->where, sizeof t->where, "Topology %s %s", t->g->arrow, t->name ? t->name : "?");
	else
		snprintf(t->where, sizeof t->where, "Topology %s %s %s ACC%d", t->g->arrow, t->name ? t->name : "?",
			 t->g->arrow, t->dev);
	return t->where;
}

/* The status line's count with how many nodes are tagged for an action. */
static const char *tagged_count(const struct topo *t, const char *c, char *buf, size_t len)
{
	size_t n = xp_nact_count(t->act);
	if (!n || !c)
		return c;
	if (c != buf)
		snprintf(buf, len, "%s", c);
	size_t l = strlen(buf);
	snprintf(buf + l, len - l, ", %zu tagged", n);
	return buf;
}

/* The map counts nodes, not rows: the group headings are not among them. */
static const char *count(void *st, char *buf, size_t len)
{
	const struct topo *t = st;
	if (t->mode != MODE_MAP || !t->rows.n_nodes)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i <= t->map.cursor && i < t->rows.n; i++)
		k += t->rows.rows[i].kind == XP_MAP_NODE;
	return tagged_count(t, xp_list_count_of(k ? k - 1 : 0, t->rows.n_nodes, t->map.total, buf, len), buf, len);
}

static bool nested(void *st)
{
	const struct topo *t = st;
	return t->mode != MODE_MAP;
}

static void *create(struct xp_ui *ui)
{
	struct topo *t = xp_calloc(1, sizeof *t);
	t->dev = -1;
	t->map = (struct xp_list)XP_LIST_INIT;
	/* Every row is a stop: a group heading is where - and + fold it. */
	t->opt.group = XP_GROUP_SWITCH;
	t->opt.sort_col = -1;
	t->opt.fold_arg = t;
	t->on_kind = XP_MAP_NODE;
	t->on_dev = -1;
	t->nlist = t->dlist = (struct xp_list)XP_LIST_INIT;
	t->nlist.pager = t->dlist.pager = true;
	t->g = xp_ui_glyphs(ui);
	t->hist_win = 1; /* 10 min */
	t->act = xp_nact_new(ui);
	return t;
}

static void destroy(void *st)
{
	struct topo *t = st;
	if (!t)
		return;
	xp_map_rows_free(&t->rows);
	cache_free(t);
	doc_free(&t->nd);
	doc_free(&t->dd);
	free(t->filter);
	free(t->name);
	free(t->dev_bus);
	free(t->on_group);
	folds_clear(t);
	xp_nact_free(t->act);
	free(t);
}

/* The node under the map's cursor, or the one open (view 2's what-if drains it). */
static const char *selected_node(void *st)
{
	const struct topo *t = st;
	if (t->mode == MODE_MAP && t->on_kind == XP_MAP_GROUP)
		return NULL;
	return t->rows.n ? t->name : NULL;
}

/* ---- the view as a command string (`:view topology --sort temp- --group rack`) ---- */

static int set_opt(void *st, struct xp_ui *ui, const char *key, const char *value, char *err, size_t errlen)
{
	struct topo *t = st;
	if (strcmp(key, "sort") == 0) {
		char name[64];
		snprintf(name, sizeof name, "%s", value);
		size_t n = strlen(name);
		bool desc = false;
		if (n && (name[n - 1] == '-' || name[n - 1] == '+')) {
			desc = name[n - 1] == '-';
			name[--n] = '\0';
		}
		if (!n || strcmp(name, "none") == 0) {
			t->opt.sort_col = -1;
			t->opt.desc = false;
			t->redo = 2;
			return 0;
		}
		int col = xp_ncol_find(name);
		if (col < 0) {
			char names[256] = "";
			for (int c = 0; c < XP_NCOL_COUNT; c++)
				snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", c ? ", " : "", xp_ncols[c].name);
			snprintf(err, errlen, "--sort: unknown column '%s' (columns: %s; a trailing - sorts descending)", name, names);
			return -1;
		}
		t->opt.sort_col = col;
		t->opt.desc = desc;
		t->redo = 2;
	} else if (strcmp(key, "group") == 0) {
		int g = xp_group_parse(value);
		if (g < 0) {
			snprintf(err, errlen, "--group: '%s' is not none, zone, rack or switch", value);
			return -1;
		}
		t->opt.group = g;
		t->redo = 2;
	} else if (strcmp(key, "mode") == 0) {
		if (strcmp(value, "expanded") != 0 && strcmp(value, "compact") != 0) {
			snprintf(err, errlen, "--mode: '%s' is not expanded or compact", value);
			return -1;
		}
		t->opt.expanded = value[0] == 'e';
		if (t->redo < 1)
			t->redo = 1;
	} else if (strcmp(key, "select") == 0) {
		if (!*value) {
			snprintf(err, errlen, "--select needs a node name");
			return -1;
		}
		const struct xp_cluster *c = xp_ui_cluster(ui);
		if (c && c->n_nodes && find_node(c, value) < 0) {
			snprintf(err, errlen, "--select: no node named '%s'", value);
			return -1;
		}
		back_to_map(t);
		set_name(t, value);
		t->on_kind = XP_MAP_NODE;
		t->on_dev = -1;
		if (t->redo < 1)
			t->redo = 1;
	} else {
		snprintf(err, errlen, "view topology takes --sort, --group, --mode and --select, not --%s", key);
		return -1;
	}
	return 0;
}

static void opts(void *st, char *buf, size_t len)
{
	const struct topo *t = st;
	size_t n = 0;
	buf[0] = '\0';
	if (t->opt.sort_col >= 0)
		n += (size_t)snprintf(buf + n, len - n, " --sort %s%s", xp_ncols[t->opt.sort_col].name, t->opt.desc ? "-" : "");
	if (n < len && t->opt.group != XP_GROUP_SWITCH)
		n += (size_t)snprintf(buf + n, len - n, " --group %s", xp_group_name(t->opt.group));
	if (n < len && t->opt.expanded)
		n += (size_t)snprintf(buf + n, len - n, " --mode expanded");
	/* The node under the cursor: a name with a quote or a space is quoted (xp_cmd_split). */
	if (n < len && t->name && t->on_kind != XP_MAP_GROUP && t->rows.n) {
		char *q = xp_cmd_quote(t->name);
		snprintf(buf + n, len - n, " --select %s", q);
		free(q);
	}
}

static const struct xp_view_key keys[] = {
	{"Up/Down j/k", "move"},
	{"PgUp/PgDn Home/End", "page, first, last"},
	{"Enter", "open node / device"},
	{"Esc", "back"},
	{"Left/Right h/l", "scroll a wide diagram sideways"},
	{"n / N", "next / previous match"},
	{"< > F6", "sort by the previous / next column"},
	{"I", "invert the sort"},
	{"T P M U F H O E", "sort by temp, power, mem, util, free, health, name, state (again: reverse)"},
	{"e", "a row per device (expanded) / one per node"},
	{"=", "group by switch, none, zone, rack"},
	{"- + *", "fold / unfold the group (Enter on a heading too), all groups"},
	{"w / m", "device graph: window (1m 10m 1h) / metric"},
	{NULL, NULL},
};

/* The view's keys for `?`: the action keys only where nodes may be changed. */
static const struct xp_view_key *keys_now(void *st)
{
	struct topo *t = st;
	return xp_nact_keys(t->act, keys);
}

const struct xp_view xp_view_topology = {
	.name = "topology",
	.title = "Topology",
	.order = 1,
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
	.selected_node = selected_node,
	.keys_now = keys_now,
	.pre_key = pre_key,
	.set_opt = set_opt,
	.opts = opts,
	.filter_fields = xp_filter_node_fields,
	.open_node = open_named,
};
