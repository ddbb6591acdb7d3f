/* fuzz_slurm_json_nodes.c: `sinfo --json` (22.05) and `scontrol -d --json show node` (23.02 and
 * later) (backends/slurm_json.c, xp_slurm_json_nodes_text), turned into scontrol's records and
 * those read into a cluster (xp_slurm_parse_nodes), as xp_slurm_load's JSON path does. */
#include "fuzz.h"

#include <stdlib.h>

#include "model.h"
#include "slurm.h"
#include "slurm_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *json = xp_fuzz_str(data, size);
	char *text = NULL;
	size_t tlen = 0;
	struct xp_err err = {{0}};
	if (xp_slurm_json_nodes_text(json, size, "sinfo --json", &text, &tlen, &err) < 0) {
		if (!err.msg[0])
			abort();
	} else {
		struct xp_cluster *c = xp_cluster_new();
		if (xp_slurm_parse_nodes(text, tlen, "sinfo --json", c, &err) < 0 && !err.msg[0])
			abort();
		xp_cluster_free(c);
	}
	free(text);
	free(json);
	return 0;
}
