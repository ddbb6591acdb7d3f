/* problems.h: a node's health problems, one line each (a node that is not up, a discovery
 * warning, a device in warn or fail with each reason). `xpool health` prints them and the
 * console's event log records them: one function makes the list so the two cannot drift. */
#ifndef XP_PROBLEMS_H
#define XP_PROBLEMS_H

#include <stddef.h>

#include "model.h"

/* One problem; the strings are borrowed from the node it was found on. */
struct xp_problem {
	const char *node;   /* the node's name */
	char what[16];      /* "node", or the device: "ACC3" */
	int level;          /* XP_HEALTH_WARN or XP_HEALTH_FAIL */
	const char *reason; /* "down", a warning, a health reason, "no reason given" */
};

/* Appends n's problems to *p (grown as needed, *np counting them), in the order `health` prints
 * them; adds to *unknown (when not NULL) the devices without health data. Returns how many. */
size_t xp_node_problems(const struct xp_node *n, struct xp_problem **p, size_t *np, size_t *unknown);
/* The problem as one line without its node and level: "ACC3 RAS: uncorrectable ECC error",
 * "node down". The event log's message and `health`'s WHAT and REASON columns say the same. */
const char *xp_problem_text(const struct xp_problem *p, char *buf, size_t len);
/* The level of a node state as a problem: XP_HEALTH_OK for up, XP_HEALTH_WARN for degraded and
 * draining, XP_HEALTH_FAIL for down and unreachable. */
int xp_node_state_level(int state);

#endif
