/* fuzz_nvsmi_topo.c: `nvidia-smi topo -m` (adapters/nvidia/nvsmi_topo.c,
 * xp_nvsmi_parse_topo): the link matrix and NUMA affinities, read into an empty node (bare
 * devices made from the rows) and again into the node that made.
 * The bytes are the tool's output as the adapter reads it (host->run or a replay file): a
 * NUL-ended copy, its length the input's. */
#include "fuzz.h"

#include <stdlib.h>

#include "nvidia/nvidia.h"
#include "fuzz_raw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xp_fuzz_str(data, size);
	struct xp_raw_node *n = xp_fuzz_node();
	char err[256] = "";
	int rc = xp_nvsmi_parse_topo(text, size, n, err, sizeof err);
	xp_fuzz_raw_check(n, rc, err);
	/* Read again into the node it filled, as the adapter merges a second output into the
	 * devices the first found: the matching paths run too. */
	err[0] = '\0';
	rc = xp_nvsmi_parse_topo(text, size, n, err, sizeof err);
	xp_fuzz_raw_check(n, rc, err);
	free(text);
	return 0;
}
