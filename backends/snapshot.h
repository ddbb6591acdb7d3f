/* snapshot.h: a cluster read from an inventory file (what `xpool --json` writes).
 *
 * Snapshots let every view, placement and test run without the hardware they
 * describe, and let a machine's inventory be inspected elsewhere. */
#ifndef XP_SNAPSHOT_H
#define XP_SNAPSHOT_H

#include "model.h"
#include "xp.h"

/* Loads and validates the snapshot at path; NULL with err set (naming the file) on error. */
struct xp_cluster *xp_snapshot_load(const char *path, struct xp_err *err);

#endif
