/* fuzz_npusmi_info.c: `npu-smi info` (adapters/ascend/npusmi.c,
 * xp_npusmi_parse_info): the device table and the process table under it.
 * The bytes are the tool's output as the adapter reads it (host->run or a replay file): a
 * NUL-ended copy, its length the input's. */
#include "fuzz.h"

#include <stdlib.h>

#include "ascend/ascend.h"
#include "fuzz_raw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xp_fuzz_str(data, size);
	struct xp_raw_node *n = xp_fuzz_node();
	char err[256] = "";
	int rc = xp_npusmi_parse_info(text, size, n, err, sizeof err);
	xp_fuzz_raw_check(n, rc, err);

	free(text);
	return 0;
}
