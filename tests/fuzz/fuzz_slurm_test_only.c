/* fuzz_slurm_test_only.c: `sbatch --test-only`'s answer (backends/slurm_compare.c,
 * xp_slurm_parse_test_only), stdout and stderr together, read as if sbatch had exited 0 and
 * again as if 1: the will-run line with its hostlist expanded (xp_slurm_hostlist), or a
 * refusal in Slurm's words. */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "slurm_compare.h"

static void one(const char *text, size_t size, int status)
{
	struct xp_slurm_answer a;
	memset(&a, 0, sizeof a);
	struct xp_err err = {{0}};
	int rc = xp_slurm_parse_test_only(text, size, status, &a, &err);
	if (rc < 0 && !err.msg[0])
		abort();
	if (rc == 0 && a.will_run && a.n_nodes > XP_SLURM_MAX_HOSTS)
		abort();
	if (rc == 0 && !a.will_run && !a.error)
		abort(); /* a refusal says why */
	xp_slurm_answer_clear(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xp_fuzz_str(data, size);
	one(text, size, 0);
	one(text, size, 1);
	free(text);
	return 0;
}
