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
 * and at a bounded byte count; control characters and bidirectional controls become '?'; returns the column after it. */
int xp_draw_put(WINDOW *w, int y, int x, int maxx, int role, const char *s, int skip);
/* Fills columns x..maxx-1 of row y with blanks in role. */
void xp_draw_fill(WINDOW *w, int y, int x, int maxx, int role);
/* Columns a UTF-8 string takes on the terminal (wcwidth; undecodable bytes count one). */
int xp_draw_width(const char *s);
/* Writes s at (y, x) in the current attributes, at most width terminal columns, each unsafe
 * sequence (xp_unsafe_len) as '?'; returns the columns used. */
int xp_draw_clip(WINDOW *w, int y, int x, int width, const char *s);

/* Where xp_draw_cut takes the text out of a string that is too long. */
enum xp_cut {
	XP_CUT_END,    /* "llm-tra…": the start says what it is */
	XP_CUT_MIDDLE, /* "nvidia…cuda12.4": ids that differ only at their end */
	XP_CUT_START   /* "…node7 › ACC3": a path, where the end says where one is */
};
/* The one way text is cut to width columns (code points): whole when it fits, else cut as
 * how says with ellipsis (the glyph set's: UTF-8 "…" or ASCII "~") marking the cut; no room
 * for the mark leaves the plain start. Writes buf (len bytes) and returns it. */
const char *xp_draw_cut(const char *s, int width, int how, const char *ellipsis, char *buf, size_t len);
/* The mark xp_draw_ellipsis returns: the glyph set's (the console sets it at start; "~" before). */
void xp_draw_set_ellipsis(const char *ellipsis);
/* The mark set by xp_draw_set_ellipsis, for drawing code that has no glyph set at hand. */
const char *xp_draw_ellipsis(void);
/* xp_draw_clip of s cut by xp_draw_cut to width; returns the columns used. */
int xp_draw_clip_cut(WINDOW *w, int y, int x, int width, const char *s, int how, const char *ellipsis);

#endif
