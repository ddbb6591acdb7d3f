/* dev_graph.c: the device view's history graph (dev_graph.h). */
#include "dev_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "spark.h"
#include "xp.h"

const int xp_dev_graph_windows[XP_DEV_GRAPH_WINDOWS] = {60, 600, 3600};

const char *xp_dev_graph_value(int metric, double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (metric == XP_HIST_MEM)
		xp_fmt_mib(buf, len, (int64_t)llround(v));
	else if (metric == XP_HIST_UTIL)
		snprintf(buf, len, "%.1f %%", v);
	else
		snprintf(buf, len, "%.0f %s", v, xp_hist_metric_unit(metric));
	return buf;
}

/* The scale: what a full column means. Utilization is 0-100; memory up to the device's size and
 * power up to its limit when known; temperature between the tens around what was seen. */
static void scale(const struct xp_device *d, int metric, double lo_seen, double hi_seen, double *lo, double *hi)
{
	*lo = 0;
	*hi = hi_seen;
	switch (metric) {
	case XP_HIST_UTIL:
		*hi = 100;
		break;
	case XP_HIST_MEM:
		if (d && d->memory_mib > 0)
			*hi = (double)d->memory_mib;
		break;
	case XP_HIST_POWER:
		if (d && XP_HAS(d->power_limit_w) && d->power_limit_w > 0)
			*hi = d->power_limit_w;
		break;
	default:
		*lo = floor(lo_seen / 10) * 10;
		*hi = ceil(hi_seen / 10) * 10;
		break;
	}
	if (hi_seen > *hi)
		*hi = hi_seen;
	if (!(*hi > *lo))
		*hi = *lo + 1;
}

/* What the graph's title calls a metric. */
static const char *const long_names[XP_HIST_METRICS] = {"utilization", "memory used", "temperature", "power"};

static const char *window_name(int window_s, char *buf, size_t len)
{
	if (window_s % 3600 == 0)
		snprintf(buf, len, "%d h", window_s / 3600);
	else if (window_s % 60 == 0)
		snprintf(buf, len, "%d min", window_s / 60);
	else
		snprintf(buf, len, "%d s", window_s);
	return buf;
}

void xp_dev_graph_build(const struct xp_history *h, const struct xp_node *n, int dev, int metric, int window_s,
			time_t now, int width, bool ascii, struct xp_dev_graph *g)
{
	memset(g, 0, sizeof *g);
	if (metric < 0 || metric >= XP_HIST_METRICS)
		metric = XP_HIST_UTIL;
	if (width < 1)
		width = 1;
	if (width > 1000)
		width = 1000;
	double *v = xp_malloc((size_t)width * sizeof *v);
	size_t got = xp_history_series(h, n->name, dev, metric, window_s, now, v, (size_t)width);
	const struct xp_device *d = dev >= 0 && (size_t)dev < n->n_devices ? &n->devices[dev] : NULL;
	double lo_seen, hi_seen, lo, hi;
	char wn[32], a[32], b[32], c[32];
	window_name(window_s, wn, sizeof wn);
	g->empty = !got || !xp_spark_range(v, (size_t)width, &lo_seen, &hi_seen);
	if (g->empty) {
		snprintf(g->title, sizeof g->title, "%s, last %s: no samples yet (each refresh adds one)",
			 long_names[metric], wn);
		lo_seen = hi_seen = 0;
	} else {
		double last = XP_NA;
		for (int i = width - 1; i >= 0 && isnan(last); i--)
			last = v[i];
		snprintf(g->title, sizeof g->title, "%s, last %s: now %s, min %s, max %s", long_names[metric], wn, xp_dev_graph_value(metric, last, a, sizeof a),
			 xp_dev_graph_value(metric, lo_seen, b, sizeof b), xp_dev_graph_value(metric, hi_seen, c, sizeof c));
	}
	scale(d, metric, lo_seen, hi_seen, &lo, &hi);
	xp_dev_graph_value(metric, hi, g->axis[0], sizeof g->axis[0]);
	xp_dev_graph_value(metric, lo, g->axis[XP_DEV_GRAPH_ROWS - 1], sizeof g->axis[0]);
	int aw = 0;
	for (int r = 0; r < XP_DEV_GRAPH_ROWS; r++) {
		int l = (int)strlen(g->axis[r]);
		aw = l > aw ? l : aw;
		g->rows[r] = xp_malloc(XP_SPARK_BYTES((size_t)width));
	}
	g->axis_w = aw;
	xp_graph(v, (size_t)width, XP_DEV_GRAPH_ROWS, lo, hi, ascii, g->rows);
	/* "-10 min" at the left edge, "now" at the right, under the columns. */
	char left[40];
	snprintf(left, sizeof left, "-%s", wn);
	int pad = width - (int)strlen(left) - 3;
	snprintf(g->time_axis, sizeof g->time_axis, "%s%*s", left, pad > 0 ? pad + 3 : 4, "now");
	free(v);
}

void xp_dev_graph_free(struct xp_dev_graph *g)
{
	for (int r = 0; r < XP_DEV_GRAPH_ROWS; r++)
		free(g->rows[r]);
	memset(g, 0, sizeof *g);
}
