/* source.h: where the cluster comes from: the local machine (hwloc and the vendor
 * adapters), a captured hwloc XML, a replay directory of recorded vendor outputs,
 * or an inventory snapshot. Later sources (agents, engines) join here. */
#ifndef XP_SOURCE_H
#define XP_SOURCE_H

#include <stdbool.h>

#include "model.h"
#include "xp.h"

/* Which source to read; all NULL means "discover this machine". */
struct xp_source_opts {
	const char *topology;  /* hwloc XML file: the PCI view only (the tools here describe another machine) */
	const char *inventory; /* inventory JSON snapshot */
	const char *replay;    /* replay directory: hwloc.xml, vendor tool outputs, hostname */
	bool no_adapters;      /* hwloc alone */
};

/* Loads the cluster from the chosen source; NULL with err set on failure. */
struct xp_cluster *xp_source_load(const struct xp_source_opts *o, struct xp_err *err);
/* Runs the vendor adapters (live, or on a replay directory) and merges what they report into n. */
void xp_source_adapters(struct xp_node *n, const char *replay);

#endif
