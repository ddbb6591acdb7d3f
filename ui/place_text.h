/* place_text.h: the Placement view's words and numbers (pure, no ncurses): pane widths,
 * the one-line outcome of a dry-run, the strategy comparison, device lists, the score
 * breakdown and the marks of chosen devices on the mini map. */
#ifndef XP_PLACE_TEXT_H
#define XP_PLACE_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "place.h"

/* Columns of the form pane for a body width columns wide (the result pane takes the rest). */
int xp_pv_form_width(int width);
/* The mean score of a placement's replicas, -1 when nothing was placed (or r is NULL). */
double xp_pv_mean_score(const struct xp_place_result *r);
/* Nodes used by a placement, each counted once. */
size_t xp_pv_node_count(const struct xp_place_result *r);
/* How a dry-run ended, in a few columns: "95.7" (mean score), "0/40 fit", "-" (not run: r NULL). */
const char *xp_pv_outcome(const struct xp_place_result *r, char *buf, size_t len);
/* "pack 95.7 -> spread 78.2": two strategies' outcomes side by side (a is from, b is to). */
const char *xp_pv_compare(int from, const struct xp_place_result *a, int to, const struct xp_place_result *b,
			  char *buf, size_t len);
/* Where a placement went: "node7 [2,3]" for one replica, "3 nodes: a, b, c" for more,
 * the summary when nothing fit. */
const char *xp_pv_where(const struct xp_place_result *r, char *buf, size_t len);
/* A replica's device indexes: "2,3" (the slice, if any, after a space). */
const char *xp_pv_devices(const struct xp_place_replica *p, char *buf, size_t len);
/* The criteria the strategy weighs, each with its share of the score (they add up to it):
 * "utilization 70.0 + topology 25.7". */
const char *xp_pv_breakdown(int strategy, const struct xp_place_replica *p, char *buf, size_t len);
/* The cell of a chosen device on the mini map: a shape the map uses for nothing else (the
 * ASCII map already spends digits on utilization), so the choice reads without colour. */
const char *xp_pv_chosen_glyph(bool utf8);
/* A time for the eye: "0.04 ms" under 1 ms, "2.8 ms", "1.35 s" from a second. */
const char *xp_pv_ms(double ms, char *buf, size_t len);
/* The smallest change that makes a refused job fit, as `xpool place` prints it: "would fit
 * with devices 8 -> 4: placed 1 replica on 1 node (pack)"; "" when r has none. */
const char *xp_pv_relaxation(const struct xp_place_result *r, char *buf, size_t len);
/* A replica's device files as `xpool place` lists them, "mounts: /dev/nvidia0 /dev/nvidiactl",
 * cut to cols columns with an ellipsis ("\u2026" when utf8, else "...") when longer; "" when
 * it has none. */
const char *xp_pv_mounts(const struct xp_place_replica *p, int cols, bool utf8, char *buf, size_t len);
/* Cuts the UTF-8 text in buf (len bytes) to cols columns (one a character), ending it with
 * the ellipsis when something was cut; returns buf. */
char *xp_pv_clip(char *buf, size_t len, int cols, bool utf8);
/* True when the placement gave device dev of node to some replica. */
bool xp_pv_chosen(const struct xp_place_result *r, const char *node, int dev);

#endif
