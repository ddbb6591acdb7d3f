/* draw.h: text drawing shared by the console frame and its views: clipped UTF-8
 * output, blank fills and string widths. */
#ifndef XP_DRAW_H
#define XP_DRAW_H

#include <curses.h>

/* Columns of a UTF-8 string counted one per code point (the views' layout unit). */
int xp_draw_cols(const char *s);
/* Byte offset of the code point after the first cols ones of s. */
size_t xp_draw_bytes(const char *s, int cols);
/* Draws s at (y, x) in role, skipping its first skip columns, stopping before column maxx
 * and at a bounded byte count; control characters become '?'; returns the column after it. */
int xp_draw_put(WINDOW *w, int y, int x, int maxx, int role, const char *s, int skip);
/* Fills columns x..maxx-1 of row y with blanks in role. */
void xp_draw_fill(WINDOW *w, int y, int x, int maxx, int role);
/* Columns a UTF-8 string takes on the terminal (wcwidth; undecodable bytes count one). */
int xp_draw_width(const char *s);
/* Writes s at (y, x) in the current attributes, at most width terminal columns; returns the columns used. */
int xp_draw_clip(WINDOW *w, int y, int x, int width, const char *s);

#endif
