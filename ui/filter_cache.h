/* filter_cache.h: the console's `/` filter compiled once per kind of row. Views of different
 * rows (nodes, jobs, events) read one filter text through different fields, so each field table
 * gets its own compiled expression, made on first use after the text changed. While an
 * expression does not parse (half typed: "temp>"), the last one that did stays in effect and
 * the error says why, so the rows do not flicker to "everything" between keystrokes. */
#ifndef XP_FILTER_CACHE_H
#define XP_FILTER_CACHE_H

#include "filter.h"

/* The cache (opaque). */
struct xp_filter_cache;

/* A new, empty cache. */
struct xp_filter_cache *xp_filter_cache_new(void);
/* Frees the cache and every expression in it; NULL is fine. */
void xp_filter_cache_free(struct xp_filter_cache *fc);
/* The text changed: expressions are compiled again on their next use ("" drops them all). */
void xp_filter_cache_text(struct xp_filter_cache *fc, const char *text);
/* The expression for rows with these fields (NULL: words only): the text's, or while it does not
 * parse the last that did since the text was last empty; NULL when there is none (no filter:
 * every row matches). */
const struct xp_filter *xp_filter_cache_get(struct xp_filter_cache *fc, const struct xp_filter_field *fields);
/* Why the text does not parse for these fields ("column 6: ..."), or NULL when it does. */
const char *xp_filter_cache_error(struct xp_filter_cache *fc, const struct xp_filter_field *fields);

#endif
