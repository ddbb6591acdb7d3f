/* local.h: discovery of the machine xpool runs on (or of a captured hwloc XML). */
#ifndef XP_LOCAL_H
#define XP_LOCAL_H

#include "model.h"
#include "xp.h"

/* Largest hwloc XML accepted: real machines export a few MiB at most. */
#define XP_TOPOLOGY_MAX_BYTES (64u << 20)

/* What to discover. */
struct xp_local_opts {
	const char *topology_xml; /* hwloc XML file to load instead of the live machine, or NULL */
	const char *topology_text; /* that file's text, read already (a replay's, read confined to its
				    * directory): then topology_xml only names it in messages */
	size_t topology_len;
};

/* Discovers one node with hwloc (I/O included); NULL with err set on failure. */
struct xp_node *xp_local_discover(const struct xp_local_opts *opts, struct xp_err *err);

/* Exports the live machine's topology as hwloc XML (what --topology reads back); caller frees. */
int xp_local_export_xml(char **xml, size_t *len, struct xp_err *err);

#endif
