/* fuzz_slurm_jobs.c: squeue's lines in XP_SLURM_SQUEUE_FORMAT (backends/slurm_jobs.c,
 * xp_slurm_parse_jobs): ids of arrays and heterogeneous jobs, states, limits, GRES, reasons,
 * node lists and times. */
#include "fuzz.h"

#include <stdlib.h>

#include "qjob.h"
#include "slurm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xp_fuzz_str(data, size);
	struct xp_qjob *jobs = NULL;
	size_t n = 0;
	struct xp_err err = {{0}};
	if (xp_slurm_parse_jobs(text, size, "squeue", &jobs, &n, &err) < 0 && !err.msg[0])
		abort();
	for (size_t i = 0; i < n; i++)
		xp_qjob_clear(&jobs[i]);
	free(jobs);
	free(text);
	return 0;
}
