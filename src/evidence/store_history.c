/* store_history.c: store samples into the device history (store_history.h). */
#include "store_history.h"

#include <stdlib.h>
#include <string.h>

#include "nameset.h"

struct load {
	struct xp_history *h;
	struct xp_nameset nodes;
	size_t added;
};

/* The device's position in n: "ACC<index>" by index, else by PCI bus id; -1 when not there. */
static int device_pos(const struct xp_node *n, const char *dev)
{
	if (strncmp(dev, "ACC", 3) == 0 && dev[3] >= '0' && dev[3] <= '9') {
		char *end;
		long i = strtol(dev + 3, &end, 10);
		if (*end)
			return -1;
		for (size_t k = 0; k < n->n_devices; k++)
			if (n->devices[k].index == i)
				return (int)k;
		return -1;
	}
	const struct xp_device *d = xp_node_device_by_bus(n, dev);
	return d ? (int)(d - n->devices) : -1;
}

static int one(void *arg, const struct xp_sample_row *r)
{
	struct load *l = arg;
	const struct xp_node *n = xp_nameset_get(&l->nodes, r->node);
	int pos = n ? device_pos(n, r->device) : -1;
	if (pos < 0)
		return 0;
	double v[XP_HIST_METRICS];
	v[XP_HIST_UTIL] = r->util_pct;
	v[XP_HIST_MEM] = r->mem_used_mib;
	v[XP_HIST_TEMP] = r->temp_c;
	v[XP_HIST_POWER] = r->power_w;
	xp_history_add(l->h, n->name, pos, r->time, v);
	l->added++;
	return 0;
}

int xp_store_history_load(struct xp_store *s, struct xp_history *h, const struct xp_cluster *c, time_t since,
			  size_t *added, struct xp_err *err)
{
	struct load l = {.h = h};
	for (size_t i = 0; i < c->n_nodes; i++)
		if (c->nodes[i]->name && c->nodes[i]->n_devices)
			xp_nameset_put(&l.nodes, c->nodes[i]->name, c->nodes[i]);
	int rc = l.nodes.n ? xp_store_samples(s, since, one, &l, err) : 0;
	xp_nameset_clear(&l.nodes);
	*added = l.added;
	return rc < 0 ? -1 : 0;
}
