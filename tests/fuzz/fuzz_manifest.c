/* fuzz_manifest.c: adapter manifests (*.adapter), as xp_manifest_load reads them:
 * xp_manifest_parse on the text, then the lookups placement makes on what it built. */
#include "fuzz.h"

#include <stdlib.h>

#include "manifest.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > XP_MANIFEST_MAX_BYTES)
		return 0; /* xp_manifest_load refuses larger files before parsing */
	struct xp_err err = {{0}};
	struct xp_manifest *m = xp_manifest_parse((const char *)data, size, "fuzz.adapter", &err);
	if (!m) {
		if (!err.msg[0])
			abort(); /* a refusal must say why */
		return 0;
	}
	for (size_t i = 0; i < m->n_models; i++) {
		const struct xp_mmodel *md = &m->models[i];
		char buf[256];
		xp_manifest_counts_text(md, buf, sizeof buf);
		(void)xp_manifest_task_counts(md, true);
		(void)xp_manifest_wide(md, false);
		(void)xp_manifest_layout(m, md, 8);
		(void)xp_manifest_k8s_resource(m, md);
		free(xp_manifest_k8s_slice(m, md, md->n_templates ? md->templates[0].name : "1g.10gb"));
		struct xp_mhami h;
		(void)xp_manifest_hami(m, md, true, &h);
		(void)xp_manifest_model(m, md->name, 0x2330);
	}
	int idx[4] = {0, 1, 2, 3};
	char **mounts = NULL;
	size_t n = xp_manifest_mounts(m, idx, 4, &mounts);
	xp_strv_free(mounts, n);
	(void)xp_manifest_driver_ok(m, "535.54.03");
	xp_manifest_free(m);
	return 0;
}
