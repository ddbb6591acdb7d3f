/* fuzz_slurm_acct.c: Slurm's accounting outputs as xp_slurm_load_queues reads them into one
 * queue set: `sacctmgr -P -n show qos` (xp_slurm_parse_qos: TRES lists, wall times, preempt
 * lists) then `sshare -a -P -l` (xp_slurm_parse_sshare: a header naming the columns, then
 * rows), both given the same bytes. */
#include "fuzz.h"

#include <stdlib.h>

#include "qmodel.h"
#include "slurm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xp_fuzz_str(data, size);
	struct xp_qset set = {0};
	struct xp_err err = {{0}};
	if (xp_slurm_parse_qos(text, size, "sacctmgr", &set, &err) < 0 && !err.msg[0])
		abort();
	err.msg[0] = '\0';
	if (xp_slurm_parse_sshare(text, size, "sshare", &set, &err) < 0 && !err.msg[0])
		abort();
	xp_qset_clear(&set);
	free(text);
	return 0;
}
