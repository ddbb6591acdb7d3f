/* layout.c: the console frame's geometry and scrolling arithmetic. */
#include "layout.h"

#include <string.h>

struct xp_layout xp_layout_frame(int rows, int cols)
{
	struct xp_layout l;
	memset(&l, 0, sizeof l);
	l.too_small = rows < XP_MIN_ROWS || cols < XP_MIN_COLS;
	if (rows < 1 || cols < 1) {
		l.too_small = true;
		return l;
	}
	l.header = (struct xp_rect){0, 0, 1, cols};
	l.tabs = (struct xp_rect){1, 0, 1, cols};
	l.status = (struct xp_rect){rows - 1, 0, 1, cols};
	int body_h = rows - 3;
	l.body = (struct xp_rect){2, 0, body_h > 0 ? body_h : 0, cols};
	return l;
}

int xp_layout_tabs(const char *const *labels, int n, int cols, struct xp_tab_pos *pos)
{
	int x = 1, fit = 0;
	for (int i = 0; i < n; i++) {
		int w = (int)strlen(labels[i]) + 2; /* a space of padding either side */
		if (x + w > cols)
			break;
		pos[i].x = x;
		pos[i].w = w;
		x += w + 1;
		fit++;
	}
	return fit;
}

int xp_layout_scroll(int top, int cursor, int height, int total)
{
	if (height <= 0 || total <= 0)
		return 0;
	if (cursor < 0)
		cursor = 0;
	if (cursor >= total)
		cursor = total - 1;
	if (cursor < top)
		top = cursor;
	if (cursor >= top + height)
		top = cursor - height + 1;
	/* Never leave blank rows below the end while earlier rows are hidden. */
	if (top > total - height)
		top = total - height;
	return top < 0 ? 0 : top;
}
