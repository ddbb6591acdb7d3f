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

#include "dev_graph.h"
#include "draw.h"
#include "format.h"
#include "list.h"
#include "list_draw.h"
#include "map_layout.h"
#include "pci_class.h"
#include "theme.h"
#include "view.h"
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
static void line_addv(struct line *l, int role, const char *fmt, va_list ap)
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
	int name_w, state_w, cpu_w;
};

/* The map's columns. */
enum { COL_NODE, COL_STATE, COL_CPU, COL_DEVICES, N_COLS };

static const struct xp_list_col columns[N_COLS] = {
	[COL_NODE] = {.title = "NODE", .max = 32, .min = 12},
	[COL_STATE] = {.title = "STATE"},
	[COL_CPU] = {.title = "CPU", .min = 7},
	[COL_DEVICES] = {.title = "DEVICES", .fill = true},
};

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
	int want[N_COLS];        /* widest shown cell of each column */
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
	return xp_ui_matches(t->ui, t->hay + t->nc[i].hay);
}

static void cache_free(struct topo *t)
{
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
	t->n_nc = 0;
	t->hay_len = 0;
	if (c->n_nodes)
		xp_grow(&t->nc, sizeof *t->nc, c->n_nodes - 1, &t->cap_nc);
	char buf[64];
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct xp_node *n = c->nodes[i];
		struct ncache *k = &t->nc[i];
		k->hay = HAY_NONE;
		k->name_w = xp_draw_cols(n->name);
		k->state_w = (int)strlen(xp_map_state_str(n, buf, sizeof buf));
		k->cpu_w = (int)strlen(xp_map_cpu_summary(n, buf, sizeof buf));
	}
	t->n_nc = c->n_nodes;
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
		int w[] = {k->name_w, k->state_w, k->cpu_w};
		for (size_t j = 0; j < sizeof w / sizeof *w; j++)
			if (w[j] > t->want[j])
				t->want[j] = w[j];
	}
}

/* The map's cursor may rest on node rows only, not on the group headings. */
static bool is_node_row(size_t pos, void *arg)
{
	const struct topo *t = arg;
	return t->rows.rows[pos].kind == XP_MAP_NODE;
}

/* Puts the map cursor on a node row: the first match for a new filter (with the window at
 * the top, so no match hides above it), else the named node, else near the old row. */
static void place_cursor(struct topo *t, const struct xp_cluster *c, size_t old_row, bool first)
{
	long at = -1, ni = first ? -1 : find_node(c, t->name);
	if (first) {
		at = xp_map_snap_node(&t->rows, 0, 1);
		t->map.top = 0;
	}
	if (ni >= 0)
		at = xp_map_row_of_node(&t->rows, (size_t)ni);
	if (at < 0)
		at = xp_map_snap_node(&t->rows, old_row, -1);
	xp_list_set_count(&t->map, t->rows.n, c->n_nodes);
	t->map.cursor = at >= 0 ? (size_t)at : 0;
	if (at >= 0 && t->rows.rows[at].kind == XP_MAP_NODE) {
		t->node = t->rows.rows[at].index;
		if (t->mode == MODE_MAP)
			set_name(t, c->nodes[t->node]->name);
	}
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
	if (fresh)
		xp_map_rows_build(&t->rows, c, f && *f ? node_matches : NULL, t);
	else
		xp_map_rows_refilter(&t->rows, c, f && *f ? node_matches : NULL, t);
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
	if (c != t->built || c->generation != t->built_gen || !t->filter || strcmp(t->filter, f ? f : "") != 0)
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
		if (c->speed_mbps > 0)
			line_add(&x->line, XP_ROLE_DIM, "  %lld Mb/s", (long long)c->speed_mbps);
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
};

static void draw_group_row(const struct topo *t, WINDOW *w, int y, struct xp_rect r, const struct xp_map_group *gr)
{
	int maxx = r.x + r.w;
	char label[512], counts[96];
	xp_map_group_label(gr, label, sizeof label);
	if (gr->n_nodes < gr->n_total)
		snprintf(counts, sizeof counts, "  %zu of %zu nodes, %zu devices", gr->n_nodes, gr->n_total,
			 gr->n_devices);
	else
		snprintf(counts, sizeof counts, "  %zu node%s, %zu device%s", gr->n_nodes, gr->n_nodes == 1 ? "" : "s",
			 gr->n_devices, gr->n_devices == 1 ? "" : "s");
	int x = xp_draw_put(w, y, r.x, maxx, XP_ROLE_BORDER, t->g->hline, 0);
	x = xp_draw_put(w, y, x, maxx, XP_ROLE_NORMAL, " ", 0);
	x = xp_draw_put(w, y, x, maxx, XP_ROLE_TITLE, label, 0);
	x = xp_draw_put(w, y, x, maxx, XP_ROLE_DIM, counts, 0);
	x = xp_draw_put(w, y, x, maxx, XP_ROLE_NORMAL, " ", 0);
	while (x < maxx)
		x = xp_draw_put(w, y, x, maxx, XP_ROLE_BORDER, t->g->hline, 0);
}

static void draw_map_row(void *arg, WINDOW *w, int y, size_t row, bool sel)
{
	const struct map_frame *f = arg;
	const struct topo *t = f->t;
	const struct xp_map_row *mr = &t->rows.rows[row];
	int maxx = f->r.x + f->r.w;
	if (mr->kind == XP_MAP_GROUP) {
		draw_group_row(t, w, y, f->r, &t->rows.groups[mr->index]);
		return;
	}
	const struct xp_node *n = xp_ui_cluster(f->ui)->nodes[mr->index];
	int base = sel ? XP_ROLE_SELECTED : XP_ROLE_NORMAL;
	char state[64], cpu[64];
	bool hit = !sel && t->filter && *t->filter && xp_ui_matches(f->ui, n->name);
	const char *text[] = {n->name, xp_map_state_str(n, state, sizeof state), xp_map_cpu_summary(n, cpu, sizeof cpu)};
	int roles[] = {hit ? XP_ROLE_MATCH : base, sel ? base : xp_map_state_role(n->state), base};
	xp_draw_fill(w, y, f->r.x, maxx, base);
	for (size_t j = 0; j < COL_DEVICES && j < f->fit.n; j++)
		xp_list_draw_cell(w, y, f->x0 + f->fit.x[j], f->fit.w[j], maxx, roles[j], columns[j].align, text[j]);
	int x = f->x0 + f->fit.x[COL_DEVICES];
	if (f->fit.n <= COL_DEVICES || x >= maxx)
		return;
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

static void draw_map(struct topo *t, struct xp_ui *ui, WINDOW *w, struct xp_rect r)
{
	int maxx = r.x + r.w;
	/* The column header: fixed at the top, the list scrolls under it. */
	struct map_frame f = {t, ui, r, {{0}}, r.x + 2};
	xp_list_fit(columns, t->want, N_COLS, maxx - f.x0, 2, &f.fit);
	xp_list_draw_header(w, r.y, r.x, f.x0, maxx, columns, &f.fit, NULL, t->g);
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
}

/* ---- keys ---- */

static void open_node(struct topo *t, struct xp_ui *ui)
{
	if (!t->rows.n || t->rows.rows[t->map.cursor].kind != XP_MAP_NODE)
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
	if (!t->rows.n || t->rows.rows[t->map.cursor].kind != XP_MAP_NODE)
		return;
	t->node = t->rows.rows[t->map.cursor].index;
	set_name(t, xp_ui_cluster(ui)->nodes[t->node]->name);
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

static int map_key(struct topo *t, struct xp_ui *ui, int key)
{
	if (xp_list_key(&t->map, key)) {
		map_moved(t, ui);
		return XP_REACT_REDRAW;
	}
	switch (key) {
	case '\n':
	case '\r':
	case KEY_ENTER:
		open_node(t, ui);
		break;
	case 'n':
		return map_next_match(t, ui, 1);
	case 'N':
		return map_next_match(t, ui, -1);
	default:
		return XP_REACT_UNHANDLED;
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

/* The map counts nodes, not rows: the group headings are not among them. */
static const char *count(void *st, char *buf, size_t len)
{
	const struct topo *t = st;
	if (t->mode != MODE_MAP || !t->rows.n_nodes)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i <= t->map.cursor && i < t->rows.n; i++)
		k += t->rows.rows[i].kind == XP_MAP_NODE;
	return xp_list_count_of(k ? k - 1 : 0, t->rows.n_nodes, t->map.total, buf, len);
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
	t->map.stop = is_node_row;
	t->map.stop_arg = t;
	t->nlist = t->dlist = (struct xp_list)XP_LIST_INIT;
	t->nlist.pager = t->dlist.pager = true;
	t->g = xp_ui_glyphs(ui);
	t->hist_win = 1; /* 10 min */
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
	free(t);
}

/* The node under the map's cursor, or the one open (view 2's what-if drains it). */
static const char *selected_node(void *st)
{
	const struct topo *t = st;
	return t->rows.n ? t->name : NULL;
}

static const struct xp_view_key keys[] = {
	{"Up/Down j/k", "move"},
	{"PgUp/PgDn Home/End", "page, first, last"},
	{"Enter", "open node / device"},
	{"Esc", "back"},
	{"Left/Right h/l", "scroll a wide diagram sideways"},
	{"n / N", "next / previous match"},
	{"w / m", "device graph: window (1m 10m 1h) / metric"},
	{NULL, NULL},
};

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
};
