/* fuzz_slurm_config.c: `scontrol show config` (backends/node_act.c, xp_slurm_config_user):
 * the SlurmUser line that decides whether this user may drain nodes. */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "node_act.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xp_fuzz_str(data, size);
	char *user = xp_slurm_config_user(text, size);
	if (user && !user[0])
		abort(); /* no user is NULL, never "" */
	free(user);
	free(text);
	return 0;
}
