/* history_json.h: a node's recent samples as JSON, both ways: the ring a node agent keeps and
 * serves (GET /v1/node?history=SECONDS, member "history"), and what the console reads back from
 * it into its own history (history.h).
 *
 * The member, compact and per device:
 *   {"interval_s":2,"times":[T0,T1,...],
 *    "devices":[{"index":0,"util":[..],"mem":[..],"temp":[..],"power":[..]}, ...]}
 * times are Unix seconds, oldest first; each metric array has one number (or null: not known)
 * per time; index is the device's position in the node. */
#ifndef XP_HISTORY_JSON_H
#define XP_HISTORY_JSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "history.h"
#include "model.h"
#include "xp.h"

/* Most samples (times) one history member may hold: an hour at one a second. */
#define XP_HIST_JSON_MAX_TIMES 3600
/* Most numbers one history member may hold (times x devices x metrics). */
#define XP_HIST_JSON_MAX_VALUES ((size_t)4 << 20)

/* An agent's ring: the last window of samples of its one node, at its discovery interval. */
struct xp_hist_ring;

/* A ring keeping window_s seconds at interval_s (at least one sample, at most
 * XP_HIST_JSON_MAX_TIMES). */
struct xp_hist_ring *xp_hist_ring_new(double window_s, double interval_s);
/* Frees it; NULL is fine. */
void xp_hist_ring_free(struct xp_hist_ring *r);
/* Records every device of n at t (a node whose device count changed starts the ring over). */
void xp_hist_ring_add(struct xp_hist_ring *r, const struct xp_node *n, time_t t);
/* Samples held. */
size_t xp_hist_ring_count(const struct xp_hist_ring *r);
/* The history member of the samples taken at or after since (a new reference). */
json_t *xp_hist_ring_json(const struct xp_hist_ring *r, time_t since);

/* A node's samples read from a history member. */
struct xp_hist_batch {
	char *node;
	size_t n_times;
	int64_t *times;
	size_t n_dev;
	int *dev;     /* each device's position */
	float *v;     /* [device][metric][time], NAN where not known */
};

/* Checks and reads the history member j for node; -1 with err naming the field (and index)
 * that is wrong: not an object, times not ascending integers, a metric array whose length is
 * not the times', a value neither number nor null, too many times or values. */
int xp_hist_batch_parse(const json_t *j, const char *node, struct xp_hist_batch *b, struct xp_err *err);
/* Adds a batch's samples to h. */
void xp_hist_batch_apply(const struct xp_hist_batch *b, struct xp_history *h);
/* Frees a batch's contents. */
void xp_hist_batch_free(struct xp_hist_batch *b);

#endif
