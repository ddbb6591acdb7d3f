/* export.c: the live machine's hwloc topology as XML, for `xpool record`. */
#include <hwloc.h>
#include <stdlib.h>
#include <string.h>

#include "local.h"
#include "local/hwloc_xml.h"
#include "model.h"

int xp_local_export_xml(char **xml, size_t *len, struct xp_err *err)
{
	hwloc_topology_t topo;
	xp_hwloc_no_libxml();
	if (hwloc_topology_init(&topo) < 0)
		return xp_errf(err, "hwloc: cannot initialise a topology");
	/* The same view discovery uses: whole machine, all PCI, important OS devices. */
	hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
	hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PCI_DEVICE, HWLOC_TYPE_FILTER_KEEP_ALL);
	hwloc_topology_set_type_filter(topo, HWLOC_OBJ_BRIDGE, HWLOC_TYPE_FILTER_KEEP_ALL);
	hwloc_topology_set_type_filter(topo, HWLOC_OBJ_OS_DEVICE, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	/* What hwloc prints while it loads is captured as in discovery (hwloc_discover.c): the
	 * reason when the load fails; dropped when it works, since discovering this machine
	 * (inventory, the console) shows the same messages as the node's warnings. */
	struct xp_hwloc_capture cap;
	if (xp_hwloc_capture_begin(&cap, err) < 0) {
		hwloc_topology_destroy(topo);
		return -1;
	}
	int loaded = hwloc_topology_load(topo);
	char **said = NULL;
	size_t n_said = 0;
	xp_hwloc_capture_end(&cap, &said, &n_said);
	if (loaded < 0)
		xp_errf(err, "hwloc: cannot discover this machine%s%s", n_said ? ": " : "", n_said ? said[0] : "");
	xp_strv_free(said, n_said);
	if (loaded < 0) {
		hwloc_topology_destroy(topo);
		return -1;
	}
	char *buf = NULL;
	int n = 0;
	if (hwloc_topology_export_xmlbuffer(topo, &buf, &n, 0) < 0 || !buf || n <= 0) {
		hwloc_topology_destroy(topo);
		return xp_errf(err, "hwloc: cannot export the topology as XML");
	}
	/* hwloc's buffer ends with its NUL, counted in n. */
	*len = strlen(buf);
	*xml = xp_strndup(buf, *len);
	hwloc_free_xmlbuffer(topo, buf);
	hwloc_topology_destroy(topo);
	return 0;
}
