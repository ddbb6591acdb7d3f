/* placeholder.c: drawing of the views that are not built yet. */
#include "placeholder.h"

#include "theme.h"

void xp_placeholder_draw(WINDOW *w, struct xp_rect r, const char *const *lines)
{
	wattrset(w, xp_theme_attr(XP_ROLE_NORMAL));
	for (int y = r.y; y < r.y + r.h; y++) {
		wmove(w, y, r.x);
		wclrtoeol(w);
	}
	for (int i = 0; lines[i] && 1 + i < r.h; i++) {
		wattrset(w, xp_theme_attr(i == 0 ? XP_ROLE_TITLE : XP_ROLE_NORMAL));
		mvwaddnstr(w, r.y + 1 + i, r.x + 2, lines[i], r.w - 4);
	}
}
