/* store_open.h: how a command opens the database: writable (created and migrated) only
 * when it writes; read-only when it looks, and a throwaway empty one when there is no
 * database yet, so that looking never creates, migrates or changes the file. */
#ifndef XP_STORE_OPEN_H
#define XP_STORE_OPEN_H

#include <stdbool.h>

#include "store.h"
#include "xp.h"

/* The database at db (NULL: the default path) for reading: read-only when the file exists,
 * else an empty in-memory one (*missing set when given); NULL with err set on failure. */
struct xp_store *xp_store_for_reading(const char *db, bool *missing, struct xp_err *err);
/* True when the database at db (NULL: the default path) exists. */
bool xp_store_for_reading_exists(const char *db);
/* Brings the stored discovered layer up to date with c when a live source in it shows
 * something new (xp_validate_sync with flags): opens the database writable only then.
 * 1 when it wrote, 0 when nothing was new, -1 with err set. */
int xp_sync_if_changed(const char *db, struct xp_store *read, const struct xp_cluster *c, unsigned flags,
		       struct xp_err *err);
/* True when c holds nodes read from a file whose environments the database does not show
 * yet: what `validate sync` would record. */
bool xp_files_unrecorded(struct xp_store *read, const struct xp_cluster *c);

#endif
