/* manifest_path.h: where the vendor manifests are found (beside the adapters: the adapter
 * path), and which adapters the build has. The list is generated from the adapters/ folders
 * in the order their manifests' `order` keys give, so a new vendor is a folder, not a line
 * of code here. */
#ifndef XP_MANIFEST_PATH_H
#define XP_MANIFEST_PATH_H

#include <stddef.h>

#include "adapter_names.inc" /* XP_ADAPTER_NAMES {"nvidia", ...} and XP_ADAPTER_COUNT, built */
#include "manifest.h"
#include "xp.h"

/* The directories searched for adapters and their manifests, in order (caller frees the list):
 * $XPOOL_ADAPTER_PATH, the build tree beside the program, then the installed directory. */
size_t xp_adapter_dirs(char ***dirs);
/* The manifest NAME.adapter in one of dirs (beside an installed .so, or in the source tree's
 * adapters/NAME/ seen from a build directory); NULL when none is there. Caller frees. */
char *xp_manifest_find(const char *name, char *const *dirs, size_t n);
/* Loads the manifest of adapter NAME found where the loader looks for it, without loading the
 * adapter itself (placement and sim gen need the data only); NULL with err naming every
 * directory searched. */
struct xp_manifest *xp_adapter_manifest_load(const char *name, struct xp_err *err);

#endif
