/* store_open.c: opening the database for a look or for a change (see store_open.h). */
#include "store_open.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "validate.h"

bool xp_store_for_reading_exists(const char *db)
{
	return (db && strcmp(db, ":memory:") == 0) || !xp_store_missing(db);
}

struct xp_store *xp_store_for_reading(const char *db, bool *missing, struct xp_err *err)
{
	bool none = !xp_store_for_reading_exists(db);
	if (missing)
		*missing = none;
	/* An empty database answers every read the way no database would, and nothing is
	 * created on disk: the first command that writes does that. */
	return none ? xp_store_open(":memory:", err) : xp_store_open_read(db, err);
}

int xp_sync_if_changed(const char *db, struct xp_store *read, const struct xp_cluster *c, unsigned flags,
		       struct xp_err *err)
{
	/* No database yet: an empty one says whether there is anything to record. */
	struct xp_store *empty = read ? NULL : xp_store_open(":memory:", err);
	if (!read && !empty)
		return -1;
	int p = xp_validate_sync_pending(read ? read : empty, c, flags, err);
	xp_store_close(empty);
	if (p <= 0)
		return p;
	struct xp_store *w = xp_store_open(db, err);
	if (!w)
		return -1;
	int rc = xp_validate_sync(w, c, time(NULL), flags, err);
	xp_store_close(w);
	return rc < 0 ? -1 : 1;
}

bool xp_files_unrecorded(struct xp_store *read, const struct xp_cluster *c)
{
	bool files = false;
	for (size_t i = 0; c && i < c->n_nodes && !files; i++)
		files = c->nodes[i]->from_file;
	if (!files)
		return false;
	struct xp_err err = {{0}};
	struct xp_store *empty = read ? NULL : xp_store_open(":memory:", &err);
	bool some = (read || empty) && xp_validate_sync_pending(read ? read : empty, c, XP_SYNC_FILES, &err) > 0;
	xp_store_close(empty);
	return some;
}
