/* fuzz_rocmsmi.c: `rocm-smi --json` and Hygon's `hy-smi --json`
 * (adapters/amd/rocmsmi.c, xp_rocmsmi_parse_json): cards, fields and the XGMI link matrix.
 * The bytes are the tool's output as the adapter reads it (host->run or a replay file): a
 * NUL-ended copy, its length the input's. */
#include "fuzz.h"

#include <stdlib.h>

#include "amd/amd.h"
#include "fuzz_raw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xp_fuzz_str(data, size);
	struct xp_raw_node *n = xp_fuzz_node();
	char err[256] = "";
	int rc = xp_rocmsmi_parse_json(text, size, n, err, sizeof err);
	xp_fuzz_raw_check(n, rc, err);

	free(text);
	return 0;
}
