/* fuzz_rocminfo.c: `rocminfo` (adapters/amd/rocminfo.c): the agent reader
 * (xp_rocminfo_agents) with room for fewer agents than a node may hold, then the parser
 * (xp_rocminfo_parse) into an empty node and again into the node that made, as the AMD adapter
 * merges rocminfo into the devices rocm-smi found (by UUID, else by position).
 * The bytes are the tool's output as the adapter reads it: a NUL-ended copy, its length the
 * input's. */
#include "fuzz.h"

#include <stdlib.h>

#include "amd/amd.h"
#include "fuzz_raw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xp_fuzz_str(data, size);
	char err[256] = "";
	struct xp_rocminfo_agent agents[4];
	int k = xp_rocminfo_agents(text, size, agents, 4, err, sizeof err);
	if (k < -1 || (k < 0 && !err[0]))
		abort();
	for (int i = 0; i < k && i < 4; i++) {
		XP_FUZZ_TEXT(agents[i].name);
		XP_FUZZ_TEXT(agents[i].marketing);
		XP_FUZZ_TEXT(agents[i].uuid);
		XP_FUZZ_TEXT(agents[i].type);
	}
	struct xp_raw_node *n = xp_fuzz_node();
	err[0] = '\0';
	int rc = xp_rocminfo_parse(text, size, n, err, sizeof err);
	xp_fuzz_raw_check(n, rc, err);
	err[0] = '\0';
	rc = xp_rocminfo_parse(text, size, n, err, sizeof err);
	xp_fuzz_raw_check(n, rc, err);
	free(text);
	return 0;
}
