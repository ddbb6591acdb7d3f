/* badabi_nvidia.c: a test adapter built for another ABI version; the loader must refuse it. */
#include <stddef.h>

#include "xp_adapter.h"

const struct xp_adapter xp_adapter_nvidia = {
	.abi = XP_ADAPTER_ABI + 41,
	.name = "nvidia",
};
