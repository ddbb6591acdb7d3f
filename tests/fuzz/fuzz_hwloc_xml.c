/* fuzz_hwloc_xml.c: an hwloc XML topology as `--topology FILE` (and HWLOC_XMLFILE) gives it:
 * written to a file and discovered by xp_local_discover (backends/local/hwloc_discover.c), which
 * reads it, checks it before libhwloc sees it (xp_hwloc_xml_check, backends/local/hwloc_xml.c:
 * libhwloc 2.x crashes on documents it does not check) and hands hwloc the checked document.
 * Inputs above 1 MiB are cut: real exports are a few hundred KiB and hwloc's load time grows
 * with the document. */
#include "fuzz.h"

#include <stdlib.h>

#include "local/local.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > (1u << 20))
		size = 1u << 20;
	const char *path = xp_fuzz_tmpfile(data, size, "topo.xml");
	struct xp_local_opts o = {.topology_xml = path};
	struct xp_err err = {{0}};
	struct xp_node *n = xp_local_discover(&o, &err);
	if (!n && !err.msg[0])
		abort();
	xp_node_free(n);
	return 0;
}
