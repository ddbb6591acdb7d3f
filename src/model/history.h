/* history.h: the recent past of every device (utilization, memory used, temperature, power) in
 * compact rings, for sparklines and the device view's graph.
 *
 * Keyed by node name + device index (a hash table of nodes, each with its devices' rings).
 * Three tiers per device: one minute of slots at the refresh period (the finest: 30 at 2 s),
 * XP_HIST_SLOTS ten-second buckets and XP_HIST_SLOTS one-minute buckets (one hour). A bucket keeps the mean of
 * the samples that fell in it (no max: the graph shows level, the problems view shows peaks).
 * Slots are aligned to the clock (slot = time / period), so samples from several sources (the
 * store at start, an agent's own ring, each refresh) land in the same places; a slot nobody
 * filled is XP_NA. Values are quantized: utilization in half percents and temperature in whole
 * degrees (one byte each), memory (MiB) and power (W) in a 16-bit float-like code (0.1 %
 * relative, any size), a sample's four side by side (one cache line per tier and refresh):
 * 6 bytes per sample, about 950 bytes per device for all three tiers at a 2 s refresh.
 *
 * Not thread-safe: the console's key loop thread owns it (it feeds it after taking a poll, and
 * the views read it while drawing); other threads hand it samples through the poller. */
#ifndef XP_HISTORY_H
#define XP_HISTORY_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "model.h"
#include "xp.h"

/* Slots of each coarse tier (10 s and 1 min buckets). */
#define XP_HIST_SLOTS 60
/* Seconds the finest tier keeps (60 / period slots, at least 2): the shortest window. */
#define XP_HIST_FINE_SPAN 60
/* Tiers per device. */
#define XP_HIST_TIERS 3
/* The coarsest tier's span, s: what the history can show at most (one hour). */
#define XP_HIST_SPAN_MAX (XP_HIST_SLOTS * 60)

/* The metrics kept. */
enum xp_hist_metric {
	XP_HIST_UTIL,  /* utilization, % */
	XP_HIST_MEM,   /* memory used, MiB */
	XP_HIST_TEMP,  /* temperature, degrees C */
	XP_HIST_POWER, /* power, W */
	XP_HIST_METRICS
};

/* The history of every device (opaque). */
struct xp_history;

/* A new, empty history whose finest tier has the refresh period period_s (at least 1 s). */
struct xp_history *xp_history_new(int period_s);
/* Frees it; NULL is fine. */
void xp_history_free(struct xp_history *h);
/* The finest tier's period, s. */
int xp_history_period(const struct xp_history *h);
/* Records every device of c at time now (each refresh); an unreachable node's (its figures are
 * its last report's) is left a gap. A clock that went back more than a
 * minute since the last feed makes the past unplaceable: the history is cleared first. */
void xp_history_feed(struct xp_history *h, const struct xp_cluster *c, time_t now);
/* Records one sample of device dev of node at time t: values[XP_HIST_METRICS], XP_NA for a
 * metric not known (store read-back, an agent's ring). Samples older than what a tier keeps
 * are left out of it; a sample for a slot that has one already replaces it (finest tier) or is
 * averaged in (buckets). dev must be below XP_MAX_DEVICES, or the sample is dropped. */
void xp_history_add(struct xp_history *h, const char *node, int dev, time_t t, const double values[]);
/* Fills out[0..n-1] with metric over the window_s seconds ending at now, in n equal buckets
 * (oldest first), each the mean of the samples in it, XP_NA where there is none. Uses the finest
 * tier that covers the window. Returns how many buckets hold a value (0: no history). */
size_t xp_history_series(const struct xp_history *h, const char *node, int dev, int metric, int window_s,
			 time_t now, double *out, size_t n);
/* The newest sample of metric (XP_NA when none in the last minute). */
double xp_history_last(const struct xp_history *h, const char *node, int dev, int metric, time_t now);
/* Bumped by every feed and add: a view whose graph was made at another generation makes it again. */
uint64_t xp_history_generation(const struct xp_history *h);
/* Devices with history. */
size_t xp_history_devices(const struct xp_history *h);
/* Bytes the history holds (rings, table, names): for the benchmark and `:agent ls`-style notes. */
size_t xp_history_bytes(const struct xp_history *h);

/* The metric's short name ("util", "mem", "temp", "power"). */
const char *xp_hist_metric_name(int metric);
/* The metric's unit ("%", "MiB", "C", "W"). */
const char *xp_hist_metric_unit(int metric);
/* The metric by short name; -1 when none. */
int xp_hist_metric_parse(const char *s);
/* The value a device's model holds for metric (XP_NA when not known). */
double xp_hist_device_value(const struct xp_device *d, int metric);

/* Quantization (exposed for tests): what a value of metric reads back as after storing. */
double xp_hist_quantize(int metric, double v);

#endif
