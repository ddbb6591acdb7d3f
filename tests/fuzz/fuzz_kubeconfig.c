/* fuzz_kubeconfig.c: the kubeconfig `--k8s` reads (YAML, its current context), through
 * xp_k8s_kubeconfig from a file as the program reads it; relative paths in it resolve in a
 * private temporary folder. A config that loads names a server. */
#include "fuzz.h"

#include <stdlib.h>

#include "k8s_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > XP_K8S_MAX_FILE)
		return 0;
	const char *path = xp_fuzz_tmpfile(data, size, "kubeconfig");
	struct xp_k8s_conf c;
	struct xp_err err = {{0}};
	if (xp_k8s_kubeconfig(path, &c, &err) < 0) {
		if (!err.msg[0])
			abort(); /* a refusal must say why */
	} else if (!c.server || !*c.server) {
		abort();
	}
	xp_k8s_conf_clear(&c);
	return 0;
}
