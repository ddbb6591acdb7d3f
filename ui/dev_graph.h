/* dev_graph.h: the device view's history graph as text: a title, block-column rows with the
 * scale's top and bottom on the left, and the time axis under them (built from history.h). */
#ifndef XP_DEV_GRAPH_H
#define XP_DEV_GRAPH_H

#include <stdbool.h>
#include <time.h>

#include "history.h"
#include "model.h"

/* Rows of the graph. */
#define XP_DEV_GRAPH_ROWS 6
/* The windows `w` cycles through, s. */
#define XP_DEV_GRAPH_WINDOWS 3
extern const int xp_dev_graph_windows[XP_DEV_GRAPH_WINDOWS];

/* A graph ready to draw; every string is the graph's own. */
struct xp_dev_graph {
	char title[160];                 /* "utilization, last 10 min: now 43.5 %, min 12.0 %, max 88.0 %" */
	bool empty;                      /* no sample in the window: rows hold nothing */
	char axis[XP_DEV_GRAPH_ROWS][16]; /* left labels: top is the scale's top, bottom its bottom */
	char *rows[XP_DEV_GRAPH_ROWS];   /* the columns, top row first */
	char time_axis[160];             /* "-10m ... now" under the columns */
	int axis_w;                      /* columns of the left labels */
};

/* Builds the graph of metric for device dev (its position) of node n over window_s seconds
 * ending at now, width columns wide (one bucket each). Free it with xp_dev_graph_free. */
void xp_dev_graph_build(const struct xp_history *h, const struct xp_node *n, int dev, int metric, int window_s,
			time_t now, int width, bool ascii, struct xp_dev_graph *g);
/* Frees what xp_dev_graph_build allocated. */
void xp_dev_graph_free(struct xp_dev_graph *g);
/* A value of metric with its unit, as the graph labels it ("43.5 %", "63.9 GiB", "71 C", "312 W"). */
const char *xp_dev_graph_value(int metric, double v, char *buf, size_t len);

#endif
