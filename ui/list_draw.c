/* list_draw.c: drawing of the table/list widget (list_draw.h). */
#include "list_draw.h"

#include <stdio.h>

#include "draw.h"
#include "theme.h"

void xp_list_draw_header(WINDOW *w, int y, int fill_x, int x0, int maxx, const struct xp_list_col *cols,
			 const struct xp_list_fit *fit, const struct xp_list *l, const struct xp_glyphs *g)
{
	xp_draw_fill(w, y, fill_x, maxx, XP_ROLE_TITLE);
	for (size_t j = 0; j < fit->n; j++) {
		char title[64];
		/* The arrow only once the user picked a sort: the view's own order is unmarked. */
		if (l && l->sort_col == (int)j)
			snprintf(title, sizeof title, "%s%s", cols[j].title,
				 l->sort_desc ? (g && g->utf8 ? "\xe2\x86\x93" : "v") : (g && g->utf8 ? "\xe2\x86\x91" : "^"));
		else
			snprintf(title, sizeof title, "%s", cols[j].title);
		int x = x0 + fit->x[j];
		int width = cols[j].fill ? maxx - x : fit->w[j] + 1;
		xp_list_draw_cell(w, y, x, width, maxx, XP_ROLE_TITLE, cols[j].align, title);
	}
}

int xp_list_draw_cell(WINDOW *w, int y, int x, int width, int maxx, int role, int align, const char *text)
{
	int end = x + width < maxx ? x + width : maxx;
	if (align == XP_ALIGN_RIGHT) {
		int c = xp_draw_cols(text);
		if (c < width)
			x += width - c;
	}
	if (x >= end)
		return x;
	/* Cut text says so: the mark in its last column. */
	char buf[1024];
	return xp_draw_put(w, y, x, end, role, xp_draw_cut(text, end - x, XP_CUT_END, xp_draw_ellipsis(), buf, sizeof buf),
			   0);
}

void xp_list_draw_rows(const struct xp_list *l, WINDOW *w, struct xp_rect body, xp_list_draw_row draw_row,
		       void *arg)
{
	for (int i = 0; i < body.h; i++) {
		size_t pos = l->top + (size_t)i;
		if (pos < l->n)
			draw_row(arg, w, body.y + i, pos, !l->pager && pos == l->cursor);
		else
			xp_draw_fill(w, body.y + i, body.x, body.x + body.w, XP_ROLE_NORMAL);
	}
}

void xp_list_draw_empty(WINDOW *w, struct xp_rect body, const char *msg)
{
	int maxx = body.x + body.w;
	if (body.h <= 0)
		return;
	int end = xp_draw_put(w, body.y, body.x, maxx, XP_ROLE_DIM, msg, 0);
	xp_draw_fill(w, body.y, end, maxx, XP_ROLE_NORMAL);
	for (int i = 1; i < body.h; i++)
		xp_draw_fill(w, body.y + i, body.x, maxx, XP_ROLE_NORMAL);
}
