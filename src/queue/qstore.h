/* qstore.h: the queue model in the store (tables rclasses, queues, quotas of schema version 3):
 * loading it whole, and each change with its audit row (before/after as JSON). The writers do
 * not begin or commit: the caller holds one transaction around its reads, checks and writes,
 * so that a check (a parent exists, no children) and the write it guards cannot be split. */
#ifndef XP_QSTORE_H
#define XP_QSTORE_H

#include "qmodel.h"
#include "store.h"

/* Loads every class (built-ins first) and queue with its quotas, by name. A file from before
 * the queue tables (read without migrating) holds none: only the built-in classes. */
int xp_qstore_load(struct xp_store *s, struct xp_qset *set, struct xp_err *err);
/* Inserts class c (audit "rclass.add"). */
int xp_qstore_class_add(struct xp_store *s, const struct xp_rclass *c, struct xp_err *err);
/* Deletes class c (audit "rclass.rm"); the caller has checked that no quota uses it. */
int xp_qstore_class_rm(struct xp_store *s, const struct xp_rclass *c, struct xp_err *err);
/* Writes q and its quotas, replacing the stored row when before (the row as it was) is given:
 * audit "queue.add" or "queue.set". */
int xp_qstore_queue_put(struct xp_store *s, const struct xp_queue *q, const struct xp_queue *before,
			struct xp_err *err);
/* Deletes queue q and its quotas (audit "queue.rm"); the caller has checked it has no children. */
int xp_qstore_queue_rm(struct xp_store *s, const struct xp_queue *q, struct xp_err *err);

#endif
