/* fuzz_jobspec.c: job spec files, as `place` and `whatif` read them: xp_job_parse, then
 * xp_job_check against the tree's adapter manifests (loaded once; skipped when the harness runs
 * outside the tree). A job that parses must encode (xp_job_to_json) and parse back to as many
 * groups. */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "jobspec.h"
#include "manifest.h"

static const char *const manifest_files[] = {
	"adapters/nvidia/nvidia.adapter", "adapters/amd/amd.adapter",
	"adapters/ascend/ascend.adapter", "adapters/cambricon/cambricon.adapter",
};
#define N_MANIFESTS (sizeof manifest_files / sizeof manifest_files[0])
static struct xp_manifest *manifests[N_MANIFESTS];
static size_t n_manifests;

static void free_manifests(void)
{
	for (size_t i = 0; i < n_manifests; i++)
		xp_manifest_free(manifests[i]);
	n_manifests = 0;
}

static void load_manifests(void)
{
	static bool done;
	if (done)
		return;
	done = true;
	for (size_t i = 0; i < N_MANIFESTS; i++) {
		struct xp_err err = {{0}};
		struct xp_manifest *m = xp_manifest_load(manifest_files[i], &err);
		if (m)
			manifests[n_manifests++] = m;
	}
	atexit(free_manifests);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	load_manifests();
	struct xp_err err = {{0}};
	struct xp_job *j = xp_job_parse((const char *)data, size, "fuzz.json", &err);
	if (!j) {
		if (!err.msg[0])
			abort(); /* a refusal must say why */
		return 0;
	}
	/* No groups parses (xp_job_check refuses it, as place does); too many never does. */
	if (j->n_groups > XP_JOB_MAX_GROUPS)
		abort();
	struct xp_err cerr = {{0}};
	if (xp_job_check(j, (const struct xp_manifest *const *)manifests, n_manifests, &cerr) < 0 && !cerr.msg[0])
		abort();
	cerr.msg[0] = '\0';
	if (xp_job_check(j, NULL, 0, &cerr) < 0 && !cerr.msg[0])
		abort();
	json_t *doc = xp_job_to_json(j);
	char *text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	if (!text)
		abort();
	struct xp_err rerr = {{0}};
	struct xp_job *again = xp_job_parse(text, strlen(text), "again.json", &rerr);
	if (!again || again->n_groups != j->n_groups)
		abort(); /* what xpool writes, xpool reads */
	xp_job_free(again);
	free(text);
	xp_job_free(j);
	return 0;
}
