/* bookmarks.h: named views (`:bookmark save NAME`), kept one a line as "NAME VIEW-STRING" in
 * $XDG_CONFIG_HOME/xpool/bookmarks (else ~/.config/xpool/bookmarks). The file is written only
 * when the user saves or removes one: 0600 in a 0700 folder, replaced whole (rename). */
#ifndef XP_BOOKMARKS_H
#define XP_BOOKMARKS_H

#include <stdbool.h>
#include <stddef.h>

#include "xp.h"

/* One bookmark. */
struct xp_bookmark {
	char *name; /* letters, digits, '.', '_', '-' */
	char *view; /* the view's command string: "topology --sort temp-" */
};

/* The bookmarks of one file, in file order. */
struct xp_bookmarks {
	struct xp_bookmark *v;
	size_t n;
};

/* The bookmarks file's path (caller frees), or NULL when neither XDG_CONFIG_HOME nor HOME is set. */
char *xp_bookmarks_path(void);
/* True when name may name a bookmark (and is not a word of the command: save, list, ls, rm). */
bool xp_bookmark_name_ok(const char *name);
/* Reads path into b (emptied first); a missing file is no bookmarks. -1 with err naming
 * "FILE:LINE" on a malformed line (a bad name, no view, a view that does not split, a repeat). */
int xp_bookmarks_load(const char *path, struct xp_bookmarks *b, struct xp_err *err);
/* Writes b to path (making its folder 0700 when missing; the file 0600); -1 with err set. */
int xp_bookmarks_save(const char *path, const struct xp_bookmarks *b, struct xp_err *err);
/* The view string of bookmark name, or NULL. */
const char *xp_bookmarks_get(const struct xp_bookmarks *b, const char *name);
/* Adds bookmark name, or replaces its view. */
void xp_bookmarks_set(struct xp_bookmarks *b, const char *name, const char *view);
/* Removes bookmark name; false when there is none. */
bool xp_bookmarks_rm(struct xp_bookmarks *b, const char *name);
/* Frees the bookmarks (the struct is the caller's) and empties it. */
void xp_bookmarks_free(struct xp_bookmarks *b);

#endif
