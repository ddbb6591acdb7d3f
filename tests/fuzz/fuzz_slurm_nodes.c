/* fuzz_slurm_nodes.c: `scontrol -d show node -o` (backends/slurm.c, xp_slurm_parse_nodes):
 * one record a line of Key=Value fields, GRES with types and indices, states with flags, as
 * xp_slurm_load reads it into a cluster. */
#include "fuzz.h"

#include <stdlib.h>

#include "model.h"
#include "slurm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xp_fuzz_str(data, size);
	struct xp_cluster *c = xp_cluster_new();
	struct xp_err err = {{0}};
	if (xp_slurm_parse_nodes(text, size, "scontrol", c, &err) < 0 && !err.msg[0])
		abort(); /* a refusal must say why */
	xp_cluster_free(c);
	free(text);
	return 0;
}
