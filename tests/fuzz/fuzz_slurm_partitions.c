/* fuzz_slurm_partitions.c: `scontrol show partition -o` (backends/slurm_jobs.c,
 * xp_slurm_parse_partitions), read into a queue set as xp_slurm_load_queues reads it, then
 * squeue's jobs read against that set (xp_slurm_parse_jobs_in) from the same bytes: a record
 * that is both is how the fuzzer reaches the partition-aware paths. */
#include "fuzz.h"

#include <stdlib.h>

#include "qjob.h"
#include "qmodel.h"
#include "slurm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xp_fuzz_str(data, size);
	struct xp_qset set = {0};
	struct xp_err err = {{0}};
	if (xp_slurm_parse_partitions(text, size, "scontrol show partition", &set, &err) < 0 && !err.msg[0])
		abort();
	struct xp_qjob *jobs = NULL;
	size_t n = 0;
	err.msg[0] = '\0';
	if (xp_slurm_parse_jobs_in(text, size, "squeue", &set, &jobs, &n, &err) < 0 && !err.msg[0])
		abort();
	for (size_t i = 0; i < n; i++)
		xp_qjob_clear(&jobs[i]);
	free(jobs);
	xp_qset_clear(&set);
	free(text);
	return 0;
}
