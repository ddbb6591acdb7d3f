/* store_history.h: the console's device history filled from the store's metric samples (what
 * `db snapshot` saved), so that a console started now shows the last hour. */
#ifndef XP_STORE_HISTORY_H
#define XP_STORE_HISTORY_H

#include <time.h>

#include "history.h"
#include "model.h"
#include "store.h"
#include "xp.h"

/* Adds to h every sample of s taken at or after since whose node is in c, its device found by
 * PCI bus id (or "ACC<index>") among that node's devices; samples of nodes or devices c does not
 * have are left out (they cannot be placed). Only reads s. Sets *added to the samples added;
 * -1 with err set when the store cannot be read. */
int xp_store_history_load(struct xp_store *s, struct xp_history *h, const struct xp_cluster *c, time_t since,
			  size_t *added, struct xp_err *err);

#endif
