/* source.c: picks the backend for a run and hands back a cluster. */
#include "source.h"

#include "local/local.h"
#include "snapshot.h"

struct xp_cluster *xp_source_load(const struct xp_source_opts *o, struct xp_err *err)
{
	if (o->inventory && o->topology) {
		xp_errf(err, "--inventory and --topology both name a source; give one");
		return NULL;
	}
	if (o->inventory)
		return xp_snapshot_load(o->inventory, err);
	struct xp_local_opts lo = {.topology_xml = o->topology};
	struct xp_node *n = xp_local_discover(&lo, err);
	if (!n)
		return NULL;
	struct xp_cluster *c = xp_cluster_new();
	xp_cluster_add(c, n);
	return c;
}
