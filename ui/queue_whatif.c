/* queue_whatif.c: the queues view's what-if panel (queue_whatif.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "queue_whatif.h"
#include "theme.h"
#include "xp.h"

struct xp_qwhatif {
	const struct xp_qdata *d;
	char status[256];
};

struct xp_qwhatif *xp_qwhatif_new(const struct xp_qdata *d)
{
	struct xp_qwhatif *w = xp_calloc(1, sizeof *w);
	w->d = d;
	snprintf(w->status, sizeof w->status, "not available in this build: the simulator (`xpool whatif`) is not built yet");
	return w;
}

void xp_qwhatif_free(struct xp_qwhatif *w)
{
	free(w);
}

int xp_qwhatif_height(const struct xp_qwhatif *w, int max)
{
	(void)w;
	return max < 2 ? max : 2;
}

void xp_qwhatif_draw(struct xp_qwhatif *w, WINDOW *win, struct xp_rect r, const struct xp_glyphs *g)
{
	int maxx = r.x + r.w;
	if (r.h <= 0)
		return;
	int x = xp_draw_put(win, r.y, r.x, maxx, XP_ROLE_BORDER, g->hline, 0);
	x = xp_draw_put(win, r.y, x, maxx, XP_ROLE_TITLE, " What-if ", 0);
	while (x < maxx)
		x = xp_draw_put(win, r.y, x, maxx, XP_ROLE_BORDER, g->hline, 0);
	for (int i = 1; i < r.h; i++)
		xp_draw_fill(win, r.y + i, r.x, maxx, XP_ROLE_NORMAL);
	if (r.h > 1)
		xp_draw_put(win, r.y + 1, r.x + 1, maxx, XP_ROLE_DIM, w->status, 0);
}

int xp_qwhatif_key(struct xp_qwhatif *w, struct xp_ui *ui, int key)
{
	(void)w;
	(void)ui;
	(void)key;
	return XP_REACT_UNHANDLED;
}

int xp_qwhatif_tick(struct xp_qwhatif *w, struct xp_ui *ui)
{
	(void)w;
	(void)ui;
	return XP_REACT_NONE;
}
