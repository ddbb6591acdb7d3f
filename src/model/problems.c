/* problems.c: the one list of health problems behind `health` and the console's events. */
#include "problems.h"

#include <stdio.h>

#include "xp.h"

static void add(struct xp_problem **p, size_t *np, const char *node, const char *what, int level,
		const char *reason)
{
	*p = xp_realloc(*p, (*np + 1) * sizeof **p);
	struct xp_problem *x = &(*p)[(*np)++];
	x->node = node;
	snprintf(x->what, sizeof x->what, "%s", what);
	x->level = level;
	x->reason = reason;
}

int xp_node_state_level(int state)
{
	switch (state) {
	case XP_NODE_UP:
		return XP_HEALTH_OK;
	case XP_NODE_DEGRADED:
	case XP_NODE_DRAINING:
		return XP_HEALTH_WARN;
	default:
		/* down, unreachable, and anything newer than this code: not usable */
		return XP_HEALTH_FAIL;
	}
}

size_t xp_node_problems(const struct xp_node *n, struct xp_problem **p, size_t *np, size_t *unknown)
{
	size_t before = *np;
	if (n->state != XP_NODE_UP)
		add(p, np, n->name, "node", xp_node_state_level(n->state), xp_node_state_name(n->state));
	for (size_t i = 0; i < n->n_warnings; i++)
		add(p, np, n->name, "node", XP_HEALTH_WARN, n->warnings[i]);
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct xp_device *d = &n->devices[i];
		char what[16];
		snprintf(what, sizeof what, "ACC%d", d->index);
		if (d->health == XP_HEALTH_UNKNOWN && unknown)
			(*unknown)++;
		if (d->health != XP_HEALTH_WARN && d->health != XP_HEALTH_FAIL)
			continue;
		if (!d->n_health_reasons)
			add(p, np, n->name, what, d->health, "no reason given");
		for (size_t r = 0; r < d->n_health_reasons; r++)
			add(p, np, n->name, what, d->health, d->health_reasons[r]);
	}
	return *np - before;
}

const char *xp_problem_text(const struct xp_problem *p, char *buf, size_t len)
{
	snprintf(buf, len, "%s %s", p->what, p->reason ? p->reason : "");
	return buf;
}
