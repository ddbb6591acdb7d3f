/* map_layout.h: the pure parts of the topology map (no ncurses), so that they can
 * be unit tested: the row list (location groups and nodes), the device cells of a
 * node row, the scroll arithmetic and the short text columns. */
#ifndef XP_MAP_LAYOUT_H
#define XP_MAP_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "glyphs.h"
#include "model.h"
#include "node_cols.h"

/* What a map row shows. */
enum xp_map_row_kind {
	XP_MAP_GROUP, /* a location group's header */
	XP_MAP_NODE,  /* one node */
	XP_MAP_DEVICE /* one device of the node above (expanded mode) */
};

/* One row of the map: a group header (index into groups), a node (index into the cluster's
 * nodes) or a device (index: its node's, dev: the device's). */
struct xp_map_row {
	unsigned char kind; /* enum xp_map_row_kind */
	int dev;            /* XP_MAP_DEVICE: device index in the node, else -1 */
	size_t index;
};

/* A group of nodes (network location, at the grouping's level) with its totals. */
struct xp_map_group {
	const char *zone, *rack, *sw; /* borrowed from the group's first node; NULL when not known */
	size_t n_nodes, n_devices;    /* nodes and devices shown (those the filter kept) */
	size_t n_total;               /* nodes of the group before filtering */
	const struct xp_node *first;  /* its first node (for the label) */
	int by;                       /* enum xp_group_by it was made with */
	bool folded;                  /* its nodes are hidden under the heading */
	/* Totals over the shown nodes (when the rows were given sums; else unknown). */
	size_t n_free;                /* free devices */
	double util;                  /* mean utilization of the devices reporting one */
	double temp;                  /* hottest device */
	double power;                 /* sum of power draws */
	size_t n_util;                /* devices behind util */
};

/* How the rows are made: grouping, order inside a group, device rows, folding. */
struct xp_map_opts {
	int group;        /* enum xp_group_by */
	int sort_col;     /* enum xp_ncol, -1 for cluster order */
	bool desc;        /* that column descending */
	bool expanded;    /* a row per device under each node */
	const struct xp_node_sum *sums; /* per cluster index (sorting by figures, totals); NULL: none */
	/* True when the group labelled label is folded; NULL: none is. */
	bool (*folded)(const char *label, void *arg);
	void *fold_arg;
};

/* The map's rows: group headers followed by their nodes, groups sorted by location. */
struct xp_map_rows {
	struct xp_map_row *rows;
	size_t n, cap;
	struct xp_map_group *groups;
	size_t n_groups;
	size_t n_nodes; /* node rows */
	size_t n_match; /* nodes the filter kept (folded ones too) */
	size_t *order;  /* cluster indexes sorted by location, kept for xp_map_rows_refilter */
	size_t n_order;
	const struct xp_map_opts *opt; /* set by the caller before a build; NULL: switch groups,
					* cluster order, no device rows, nothing folded */
	/* Each node's group rank at the level gid_by, for the cluster gid_c at generation gid_gen:
	 * made once per data change, so that a sort compares integers, not location strings. */
	uint32_t *gid;
	size_t n_gid;
	const struct xp_cluster *gid_c;
	uint64_t gid_gen;
	int gid_by;
};

/* Decides whether a node (index i in the cluster) is shown: the filter; NULL keeps every node. */
typedef bool (*xp_map_pred)(const struct xp_node *n, size_t i, void *arg);

/* Builds the rows of c (replacing r's contents); groups sorted by zone, rack, switch
 * (natural order, unknown parts last), nodes in cluster order inside a group; groups
 * the predicate empties are left out. Pointers in groups borrow from c. */
void xp_map_rows_build(struct xp_map_rows *r, const struct xp_cluster *c, xp_map_pred pred, void *arg);
/* Same as xp_map_rows_build for the cluster of the last build (unchanged since), reusing its
 * sorted order: what a filter keystroke costs. */
void xp_map_rows_refilter(struct xp_map_rows *r, const struct xp_cluster *c, xp_map_pred pred, void *arg);
/* Frees the rows' storage (the struct itself is the caller's). */
void xp_map_rows_free(struct xp_map_rows *r);
/* Writes a group's label ("zone z1 / rack r3 / switch sw2", "(no location)") into buf. */
const char *xp_map_group_label(const struct xp_map_group *g, char *buf, size_t len);
/* Row index of the node row after (dir > 0) or before (dir < 0) row from, wrapping; -1 when there is none. */
long xp_map_next_node(const struct xp_map_rows *r, size_t from, int dir);
/* Nearest node row to row at, looking first in direction dir (+1/-1) then the other way; -1 when none. */
long xp_map_snap_node(const struct xp_map_rows *r, size_t at, int dir);
/* Row index of the node with cluster index node, or -1 when it is not shown. */
long xp_map_row_of_node(const struct xp_map_rows *r, size_t node);

/* Most columns one node's cell string may take. */
#define XP_CELLS_MAX 512

/* One run of the cell string in one role: a device cell, a bracket or the "+N" tail. */
struct xp_cell_seg {
	int role;           /* enum xp_role */
	int dev;            /* device index for a device cell, -1 for brackets and "+N" */
	unsigned off, len;  /* bytes of text */
	unsigned col, cols; /* first column and width */
};

/* A node's device cells laid out for a width. */
struct xp_cells {
	char text[XP_CELLS_MAX * 4 + 1]; /* UTF-8, NUL-terminated */
	struct xp_cell_seg seg[XP_CELLS_MAX];
	size_t n_seg;
	int cols;   /* columns used */
	int shown;  /* devices drawn */
	int hidden; /* devices left out (the "+N") */
};

/* Orders a node's devices for the map: affinity groups in order of first appearance,
 * devices of one group together; order receives n_devices indexes, group_of each position's
 * group number (-1 for a device in no group). */
void xp_map_dev_order(const struct xp_node *n, int *order, int *group_of);
/* The role and glyph of a device cell of node n (NULL: not known): a down or unreachable node
 * first, then fail/warn health, then utilization, else unknown. */
int xp_map_cell_role(const struct xp_node *n, const struct xp_device *d, const struct xp_glyphs *g,
		     const char **glyph);
/* Lays out n's device cells in at most width columns: one glyph per device, each affinity group
 * between group_open/group_close, and "+N" at the end when not every device fits. */
void xp_map_cells(const struct xp_node *n, const struct xp_glyphs *g, int width, struct xp_cells *out);

/* First visible row that keeps cursor visible in a window of height rows over n rows,
 * moving as little as possible from top and never leaving empty rows below the last. */
size_t xp_scroll_top(size_t top, size_t cursor, size_t height, size_t n);
/* Cursor moved by delta rows, clamped to 0..n-1 (0 when n is 0). */
size_t xp_scroll_move(size_t cursor, long delta, size_t n);
/* Cursor after a page down (dir > 0) or up (dir < 0) of height rows, clamped. */
size_t xp_scroll_page(size_t cursor, size_t height, size_t n, int dir);

/* Writes a node's CPU/NUMA summary ("16c/32t 2N 64G", "?" for unknown parts) into buf. */
const char *xp_map_cpu_summary(const struct xp_node *n, char *buf, size_t len);
/* Writes a node's state as the map shows it ("up", "unreachable 5m") into buf. */
const char *xp_map_state_str(const struct xp_node *n, char *buf, size_t len);
/* The role of a node state: ok for up, warn for degraded/draining, fail for down/unreachable. */
int xp_map_state_role(int state);
/* Writes an age in seconds as "45s", "12m", "3h" or "2d" into buf. */
const char *xp_map_age(long long s, char *buf, size_t len);

#endif
