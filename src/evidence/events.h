/* events.h: discovery and health events (a device appeared, a health changed),
 * found by comparing two snapshots of the cluster, kept in a bounded log. */
#ifndef XP_EVENTS_H
#define XP_EVENTS_H

#include <stddef.h>
#include <time.h>

#include "model.h"

/* How serious an event is. */
enum xp_severity {
	XP_SEV_INFO,
	XP_SEV_WARN,
	XP_SEV_FAIL
};

/* One event. */
struct xp_event {
	time_t time;
	int severity;   /* enum xp_severity */
	char node[64];  /* node name, "" for cluster-wide events */
	char msg[192];  /* what happened, one line */
};

/* A ring of the most recent events; the oldest are dropped first. */
struct xp_problem;
struct xp_event_log {
	struct xp_event *ring;
	size_t cap, start, n;
	/* When set: true for a problem that should not shout (acknowledged, acks.h): its
	 * appearing is logged as info with "(acknowledged)", not at its level. */
	bool (*quiet)(const struct xp_problem *p, void *arg);
	void *quiet_arg;
};

/* Returns "info", "warn" or "fail". */
const char *xp_severity_name(int sev);
/* Sets up an empty log keeping at most cap events. */
void xp_event_log_init(struct xp_event_log *log, size_t cap);
/* Frees the log's storage. */
void xp_event_log_free(struct xp_event_log *log);
/* Adds an event (printf-style message) in time order (after those of its time), dropping the
 * oldest when full (the new one itself when it is older than all). */
void xp_event_add(struct xp_event_log *log, time_t t, int sev, const char *node, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* The i-th event, 0 being the oldest kept. */
const struct xp_event *xp_event_get(const struct xp_event_log *log, size_t i);
/* Records what changed from old to new: nodes and devices appearing or leaving, and each problem
 * (problems.h, what `health` lists) that appeared, at its level, or cleared, as an info
 * "resolved: ..."; old NULL records every node as discovered, then every problem there is.
 * Returns the events added. */
size_t xp_events_diff(const struct xp_cluster *old, const struct xp_cluster *new_c, time_t now,
		      struct xp_event_log *log);

#endif
