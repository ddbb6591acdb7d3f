/* fuzz_cnmon.c: `cnmon info` (adapters/cambricon/cnmon.c,
 * xp_cnmon_parse_info): Card N blocks of "Key : value" lines.
 * The bytes are the tool's output as the adapter reads it (host->run or a replay file): a
 * NUL-ended copy, its length the input's. */
#include "fuzz.h"

#include <stdlib.h>

#include "cambricon/cambricon.h"
#include "fuzz_raw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xp_fuzz_str(data, size);
	struct xp_raw_node *n = xp_fuzz_node();
	char err[256] = "";
	int rc = xp_cnmon_parse_info(text, size, n, err, sizeof err);
	xp_fuzz_raw_check(n, rc, err);

	free(text);
	return 0;
}
