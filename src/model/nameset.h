/* nameset.h: a set of node names by hash, for joining thousands of nodes by name without
 * comparing each with each (xp_cluster_node is a scan: fine once, quadratic in a loop). */
#ifndef XP_NAMESET_H
#define XP_NAMESET_H

#include <stdbool.h>
#include <stddef.h>

/* The set; the names are borrowed (they must outlive it). Zero-initialized is empty. */
struct xp_nameset {
	const char **slot; /* NULL: empty */
	void **val;        /* what each name maps to */
	size_t cap, n;
};

/* The value put with name, or NULL when the set does not hold it. */
void *xp_nameset_get(const struct xp_nameset *s, const char *name);
/* Puts name -> val (val not NULL) unless the set holds name already; true when it was put. */
bool xp_nameset_put(struct xp_nameset *s, const char *name, void *val);
/* Frees the set's tables (not the names). */
void xp_nameset_clear(struct xp_nameset *s);

#endif
