/* source.h: where the cluster comes from: the local machine, a captured hwloc XML,
 * or an inventory snapshot. Later sources (agents, engines) join here. */
#ifndef XP_SOURCE_H
#define XP_SOURCE_H

#include "model.h"
#include "xp.h"

/* Which source to read; all NULL means "discover this machine". */
struct xp_source_opts {
	const char *topology;  /* hwloc XML file */
	const char *inventory; /* inventory JSON snapshot */
};

/* Loads the cluster from the chosen source; NULL with err set on failure. */
struct xp_cluster *xp_source_load(const struct xp_source_opts *o, struct xp_err *err);

#endif
