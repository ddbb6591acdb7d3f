/* fuzz_slurm_json_jobs.c: `squeue --json` (backends/slurm_json.c, xp_slurm_json_jobs_text) in
 * both data parser forms, turned into squeue's lines and those read as jobs
 * (xp_slurm_parse_jobs), as xp_slurm_load_queues's JSON path does. */
#include "fuzz.h"

#include <stdlib.h>

#include "qjob.h"
#include "slurm.h"
#include "slurm_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *json = xp_fuzz_str(data, size);
	char *text = NULL;
	size_t tlen = 0;
	struct xp_err err = {{0}};
	if (xp_slurm_json_jobs_text(json, size, "squeue --json", &text, &tlen, &err) < 0) {
		if (!err.msg[0])
			abort();
	} else {
		struct xp_qjob *jobs = NULL;
		size_t n = 0;
		if (xp_slurm_parse_jobs(text, tlen, "squeue --json", &jobs, &n, &err) < 0 && !err.msg[0])
			abort();
		for (size_t i = 0; i < n; i++)
			xp_qjob_clear(&jobs[i]);
		free(jobs);
	}
	free(text);
	free(json);
	return 0;
}
