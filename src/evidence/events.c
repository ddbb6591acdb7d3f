/* events.c: the event log and the snapshot comparison that fills it. */
#include "events.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "problems.h"
#include "xp.h"

const char *xp_severity_name(int sev)
{
	return sev == XP_SEV_FAIL ? "fail" : sev == XP_SEV_WARN ? "warn" : "info";
}

void xp_event_log_init(struct xp_event_log *log, size_t cap)
{
	memset(log, 0, sizeof *log);
	log->cap = cap ? cap : 1;
	log->ring = xp_calloc(log->cap, sizeof *log->ring);
}

void xp_event_log_free(struct xp_event_log *log)
{
	free(log->ring);
	memset(log, 0, sizeof *log);
}

void xp_event_add(struct xp_event_log *log, time_t t, int sev, const char *node, const char *fmt, ...)
{
	if (!log->cap)
		return;
	/* The log stays in time order, so that newest first is true: an event older than the
	 * newest (an audit row from before the console started, another process's change) goes
	 * after the last one of its time or earlier. The usual new event is simply appended. */
	size_t pos = log->n;
	while (pos > 0 && xp_event_get(log, pos - 1)->time > t)
		pos--;
	if (log->n == log->cap) {
		/* Full: the oldest goes, unless the new one would be older still. */
		if (pos == 0)
			return;
		log->start = (log->start + 1) % log->cap;
		log->n--;
		pos--;
	}
	for (size_t i = log->n; i > pos; i--)
		log->ring[(log->start + i) % log->cap] = log->ring[(log->start + i - 1) % log->cap];
	log->n++;
	struct xp_event *e = &log->ring[(log->start + pos) % log->cap];
	e->time = t;
	e->severity = sev;
	snprintf(e->node, sizeof e->node, "%s", node ? node : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
}

const struct xp_event *xp_event_get(const struct xp_event_log *log, size_t i)
{
	return i < log->n ? &log->ring[(log->start + i) % log->cap] : NULL;
}

static int health_sev(int h)
{
	return h == XP_HEALTH_FAIL ? XP_SEV_FAIL : h == XP_HEALTH_WARN ? XP_SEV_WARN : XP_SEV_INFO;
}

/* Equal but for the digits: a reading that moves ("temperature 91 C", "after 3 ms" in an agent's
 * connect error) is the same problem still, or every refresh would log it again and flood the log. */
static bool same_words(const char *a, const char *b)
{
	for (;;) {
		bool da = *a >= '0' && *a <= '9', db = *b >= '0' && *b <= '9';
		if (da && db) {
			while (*a >= '0' && *a <= '9')
				a++;
			while (*b >= '0' && *b <= '9')
				b++;
			continue;
		}
		if (*a != *b)
			return false;
		if (!*a)
			return true;
		a++;
		b++;
	}
}

static bool same_problem(const struct xp_problem *a, const struct xp_problem *b)
{
	return a->level == b->level && strcmp(a->what, b->what) == 0 && same_words(a->reason, b->reason);
}

static bool has_problem(const struct xp_problem *p, size_t n, const struct xp_problem *x)
{
	for (size_t i = 0; i < n; i++)
		if (same_problem(&p[i], x))
			return true;
	return false;
}

/* The node's problems (xp_node_problems, the list `health` prints) that o did not have, each an
 * event of its level; those o had and n has not, an info "resolved". o NULL: every problem. */
static size_t diff_problems(const struct xp_node *o, const struct xp_node *n, time_t now,
			    struct xp_event_log *log)
{
	struct xp_problem *was = NULL, *is = NULL;
	size_t n_was = 0, n_is = 0, k = 0;
	char text[192];
	if (o)
		xp_node_problems(o, &was, &n_was, NULL);
	xp_node_problems(n, &is, &n_is, NULL);
	for (size_t i = 0; i < n_is; i++)
		if (!has_problem(was, n_was, &is[i])) {
			bool quiet = log->quiet && log->quiet(&is[i], log->quiet_arg);
			xp_event_add(log, now, quiet ? XP_SEV_INFO : health_sev(is[i].level), n->name, "%s%s",
				     xp_problem_text(&is[i], text, sizeof text), quiet ? " (acknowledged)" : "");
			k++;
		}
	for (size_t i = 0; i < n_was; i++)
		if (!has_problem(is, n_is, &was[i])) {
			xp_event_add(log, now, XP_SEV_INFO, n->name, "resolved: %s",
				     xp_problem_text(&was[i], text, sizeof text));
			k++;
		}
	free(was);
	free(is);
	return k;
}

/* Devices are matched by bus id (stable across reboots), by index when there is none. */
static const struct xp_device *find_dev(const struct xp_node *n, const struct xp_device *d)
{
	if (d->pci_bus_id)
		return xp_node_device_by_bus(n, d->pci_bus_id);
	for (size_t i = 0; i < n->n_devices; i++)
		if (!n->devices[i].pci_bus_id && n->devices[i].index == d->index)
			return &n->devices[i];
	return NULL;
}

static size_t diff_node(const struct xp_node *o, const struct xp_node *n, time_t now,
			struct xp_event_log *log)
{
	/* A node's state and a device's health in warn or fail are problems: diff_problems says
	 * when they appear and clear, with their reasons, so they are not repeated here. */
	size_t k = 0;
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct xp_device *d = &n->devices[i];
		const struct xp_device *was = find_dev(o, d);
		if (!was) {
			xp_event_add(log, now, XP_SEV_INFO, n->name, "device ACC%d %s %s appeared at %s", d->index,
				     d->vendor ? d->vendor : "?", d->model ? d->model : "?",
				     d->pci_bus_id ? d->pci_bus_id : "?");
			k++;
		} else if (was->health != d->health && health_sev(was->health) == XP_SEV_INFO &&
			   health_sev(d->health) == XP_SEV_INFO) {
			/* ok <-> unknown: no problem appears or clears, but health data came or went */
			xp_event_add(log, now, health_sev(d->health), n->name, "device ACC%d health %s -> %s%s%s",
				     d->index, xp_health_name(was->health), xp_health_name(d->health),
				     d->n_health_reasons ? ": " : "",
				     d->n_health_reasons ? d->health_reasons[0] : "");
			k++;
		}
	}
	for (size_t i = 0; i < o->n_devices; i++) {
		const struct xp_device *d = &o->devices[i];
		if (!find_dev(n, d)) {
			xp_event_add(log, now, XP_SEV_FAIL, n->name, "device ACC%d %s %s at %s disappeared",
				     d->index, d->vendor ? d->vendor : "?", d->model ? d->model : "?",
				     d->pci_bus_id ? d->pci_bus_id : "?");
			k++;
		}
	}
	return k;
}

/* Node i of new_c as old had it (NULL when old did not). Refreshes keep the order, so the
 * same position is looked at before searching. */
static const struct xp_node *was(const struct xp_cluster *old, const struct xp_cluster *new_c, size_t i)
{
	const struct xp_node *n = new_c->nodes[i];
	if (old && i < old->n_nodes && strcmp(old->nodes[i]->name, n->name) == 0)
		return old->nodes[i];
	return old ? xp_cluster_node(old, n->name) : NULL;
}

size_t xp_events_diff(const struct xp_cluster *old, const struct xp_cluster *new_c, time_t now,
		      struct xp_event_log *log)
{
	size_t k = 0;
	/* Discoveries first, then problems: the newest events, which view 5 shows on top, are
	 * what is wrong now, not that a node was found. */
	for (size_t i = 0; new_c && i < new_c->n_nodes; i++) {
		const struct xp_node *n = new_c->nodes[i], *o = was(old, new_c, i);
		if (!o) {
			xp_event_add(log, now, XP_SEV_INFO, n->name, "node discovered: %zu accelerator%s, %s",
				     n->n_devices, n->n_devices == 1 ? "" : "s", xp_node_state_name(n->state));
			k++;
			continue;
		}
		k += diff_node(o, n, now, log);
	}
	for (size_t i = 0; new_c && i < new_c->n_nodes; i++)
		k += diff_problems(was(old, new_c, i), new_c->nodes[i], now, log);
	for (size_t i = 0; old && i < old->n_nodes; i++) {
		const struct xp_node *o = old->nodes[i];
		bool same_place = new_c && i < new_c->n_nodes && strcmp(new_c->nodes[i]->name, o->name) == 0;
		if (!same_place && (!new_c || !xp_cluster_node(new_c, o->name))) {
			xp_event_add(log, now, XP_SEV_FAIL, o->name, "node left the cluster");
			k++;
		}
	}
	return k;
}
