/* place_manifests.c: the manifests placement reads: every adapter's the build has, found
 * where the adapter loader looks (manifest_path.h), so that the console and the tools ask
 * placement, not the backends. */
#include "manifest_path.h"
#include "place.h"

_Static_assert(XP_ADAPTER_COUNT <= XP_PLACE_MANIFESTS, "room for every adapter's manifest");

size_t xp_place_manifests(struct xp_manifest **ms)
{
	static const char *const names[] = XP_ADAPTER_NAMES;
	size_t n = 0;
	for (size_t i = 0; i < XP_ADAPTER_COUNT; i++) {
		struct xp_err err = {{0}};
		struct xp_manifest *m = xp_adapter_manifest_load(names[i], &err);
		/* A vendor whose manifest is not installed is a vendor this cluster does not need. */
		if (m)
			ms[n++] = m;
	}
	return n;
}

void xp_place_manifests_free(struct xp_manifest **ms, size_t n)
{
	for (size_t i = 0; i < n; i++)
		xp_manifest_free(ms[i]);
}
