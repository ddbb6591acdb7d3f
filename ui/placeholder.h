/* placeholder.h: the body of a view whose feature has not landed yet: a plain
 * statement of what the view will show and which command fills it. */
#ifndef XP_PLACEHOLDER_H
#define XP_PLACEHOLDER_H

#include "view.h"

/* Draws the lines of text (NULL-terminated), first one as a title, into r. */
void xp_placeholder_draw(WINDOW *w, struct xp_rect r, const char *const *lines);

#endif
