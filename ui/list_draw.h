/* list_draw.h: the table/list widget's drawing half (list.h holds its state and logic):
 * the heading row of a table's columns, a cell in its column, the window of rows and the
 * message of an empty list, so that every list view looks the same. */
#ifndef XP_LIST_DRAW_H
#define XP_LIST_DRAW_H

#include <curses.h>
#include <stdbool.h>

#include "glyphs.h"
#include "list.h"
#include "view.h"

/* Draws one row of a list: position pos at screen row y; sel when it holds the cursor. */
typedef void (*xp_list_draw_row)(void *arg, WINDOW *w, int y, size_t pos, bool sel);

/* Draws the headings of fitted columns on row y from column x0 (the row filled from fill_x
 * to maxx in the title role); the sorted column (l->sort_col, when set) gets an arrow. */
void xp_list_draw_header(WINDOW *w, int y, int fill_x, int x0, int maxx, const struct xp_list_col *cols,
			 const struct xp_list_fit *fit, const struct xp_list *l, const struct xp_glyphs *g);
/* Draws text in the cell of width columns at x, aligned, cut at the cell's end and at maxx;
 * returns the column after the text. */
int xp_list_draw_cell(WINDOW *w, int y, int x, int width, int maxx, int role, int align, const char *text);
/* Draws the window's rows into body (from l->top, one a screen row) with draw_row, blank
 * rows under the last. */
void xp_list_draw_rows(const struct xp_list *l, WINDOW *w, struct xp_rect body, xp_list_draw_row draw_row,
		       void *arg);
/* Draws msg dimmed on the first row of body (an empty list says why), blank rows under it. */
void xp_list_draw_empty(WINDOW *w, struct xp_rect body, const char *msg);

#endif
