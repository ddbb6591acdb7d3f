/* node_cols.h: the columns of a node row, shared by the console's map (view 1) and
 * `xpool view topology` in batch: what each column shows as a number (to sort by) and as text
 * (units as operators read them, "-" when not known), how two nodes compare in it, and which
 * columns fit a width. Pure: no terminal. A device row (the map's expanded mode) has the same
 * columns, filled with the device's own figures. */
#ifndef XP_NODE_COLS_H
#define XP_NODE_COLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* The columns, in the order they are shown. */
enum xp_ncol {
	XP_NCOL_NODE,   /* node name (a device row: "ACC3") */
	XP_NCOL_STATE,  /* node state ("up", "unreachable 5m") */
	XP_NCOL_HEALTH, /* worst device health */
	XP_NCOL_FREE,   /* free/total devices ("6/8") */
	XP_NCOL_UTIL,   /* mean utilization of the devices that report one */
	XP_NCOL_MEM,    /* device memory used/total ("40.1G/80G") */
	XP_NCOL_TEMP,   /* hottest device, degrees C */
	XP_NCOL_POWER,  /* sum of the devices' power draw, W */
	XP_NCOL_ECC,    /* ECC errors corrected/uncorrected, summed */
	XP_NCOL_MODEL,  /* device model (the first device's; "+" when they differ) */
	XP_NCOL_NET,    /* RDMA NICs and their speed ("2x400 Gb/s") */
	XP_NCOL_CPU,    /* cores/threads, NUMA domains, host memory */
	XP_NCOL_COUNT
};

/* One column's definition. */
struct xp_ncol_def {
	const char *name;  /* "temp": --sort, JSON keys, the command string */
	const char *title; /* "TEMP": the heading */
	char key;          /* the console's Shift-letter that sorts by it, 0 for none */
	int min, max;      /* width bounds (the title's width is a floor too) */
	bool right;        /* right-aligned (figures) */
	int prio;          /* lower is kept first when the width is short */
};

/* The columns, indexed by enum xp_ncol. */
extern const struct xp_ncol_def xp_ncols[XP_NCOL_COUNT];

/* What the columns need of one node, counted once per data change (a frame only formats). */
struct xp_node_sum {
	int n_dev, n_free; /* devices, and those free (see xp_device_free) */
	int n_util;        /* devices reporting utilization */
	double util;       /* their mean, XP_NA when none */
	int64_t mem_used, mem_total; /* sums over the devices that know them, -1 when none */
	double temp;       /* hottest, XP_NA when none reports */
	double power;      /* sum over those reporting, XP_NA when none */
	int health;        /* worst known device health (enum xp_health), UNKNOWN when none */
	int64_t ecc_corr, ecc_uncorr; /* sums, -1 when no device reports */
};

/* True when a device is free: its node is up or degraded, nothing holds it (no allocation, no
 * slice) and it has not failed. */
bool xp_device_free(const struct xp_node *n, const struct xp_device *d);
/* Counts node n's figures into *s. */
void xp_node_sum(const struct xp_node *n, struct xp_node_sum *s);
/* Fills *s with one device's own figures (a device row): n_dev 1, n_free 0 or 1. */
void xp_device_sum(const struct xp_node *n, const struct xp_device *d, struct xp_node_sum *s);

/* Finds a column by name (case-insensitive; "mem" or "memory"...); -1 when none. */
int xp_ncol_find(const char *name);
/* Writes column col of node n (summed in s) into buf; "-" when not known. Returns buf. */
const char *xp_ncol_text(int col, const struct xp_node *n, const struct xp_node_sum *s, char *buf, size_t len);
/* Writes column col of device d of node n (its figures in s) into buf. Returns buf. */
const char *xp_ncol_dev_text(int col, const struct xp_node *n, const struct xp_device *d,
			     const struct xp_node_sum *s, char *buf, size_t len);
/* The value column col sorts by, XP_NA when not known (text columns: NaN, see xp_ncol_cmp). */
double xp_ncol_value(int col, const struct xp_node *n, const struct xp_node_sum *s);
/* Compares nodes a and b in column col, ascending or (desc) descending; a value not known sorts
 * last either way, and ties fall back to the name (natural order), so the order is total. */
int xp_ncol_cmp(int col, bool desc, const struct xp_node *a, const struct xp_node_sum *sa, const struct xp_node *b,
		const struct xp_node_sum *sb);

/* How nodes are grouped by network location. */
enum xp_group_by {
	XP_GROUP_NONE,   /* one list, no headings */
	XP_GROUP_ZONE,   /* by zone */
	XP_GROUP_RACK,   /* by zone and rack */
	XP_GROUP_SWITCH, /* by zone, rack and switch (the default) */
	XP_GROUP_COUNT
};
/* The name of a grouping ("none", "zone", "rack", "switch"). */
const char *xp_group_name(int by);
/* Parses a grouping name; -1 when unknown. */
int xp_group_parse(const char *s);
/* Compares the locations of a and b down to the grouping's level (natural order, unknown
 * parts last); 0 when they are in one group. */
int xp_node_loc_cmp(const struct xp_node *a, const struct xp_node *b, int by);
/* Writes the label of the group of n ("zone z1 / rack r3", "(no location)") into buf. */
const char *xp_group_label(const struct xp_node *n, int by, char *buf, size_t len);

/* Picks the columns that fit width: want[col] is the widest cell of each (0: unknown), gap the
 * blanks between two, reserve what must stay free to the right (the map's device cells).
 * Columns are taken in priority order while they fit; the node name always is. Writes the
 * chosen columns in display order to out and their widths to w; returns how many. */
size_t xp_ncol_fit(const int *want, int width, int gap, int reserve, int *out, int *w);
/* The width column col takes for widest cell want (title, min and max applied). */
int xp_ncol_width(int col, int want);

#endif
