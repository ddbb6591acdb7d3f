/* fuzz_nvsmi_xml.c: `nvidia-smi -q -x` (adapters/nvidia/nvsmi_xml.c,
 * xp_nvsmi_parse_xml), the XML the NVIDIA adapter reads when NVML is absent or replayed.
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
	int rc = xp_nvsmi_parse_xml(text, size, n, err, sizeof err);
	xp_fuzz_raw_check(n, rc, err);

	free(text);
	return 0;
}
