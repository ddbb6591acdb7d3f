/* fuzz_hami.c: HAMi's annotations (backends/k8s_hami.c): a node's device register
 * (hami.io/node-*-register, xp_hami_decode_node: the older colon form or JSON) and a pod's
 * allocation (hami.io/VENDOR-devices-to-allocate, xp_hami_decode_pod), each given the whole input
 * as the annotation's value. */
#include "fuzz.h"

#include <stdlib.h>

#include "k8s_hami.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = xp_fuzz_str(data, size);
	struct xp_hami_dev *d = NULL;
	size_t nd = 0;
	const char *why = NULL;
	if (xp_hami_decode_node(s, &d, &nd, &why) < 0 && !why)
		abort();
	xp_hami_devs_free(d, nd);
	struct xp_hami_use *u = NULL;
	size_t nu = 0;
	why = NULL;
	if (xp_hami_decode_pod(s, &u, &nu, &why) < 0 && !why)
		abort();
	xp_hami_uses_free(u, nu);
	free(s);
	return 0;
}
