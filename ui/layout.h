/* layout.h: where the console's parts go on a screen of a given size (pure, testable). */
#ifndef XP_LAYOUT_H
#define XP_LAYOUT_H

#include <stdbool.h>

#include "view.h"

/* Smallest usable terminal. */
#define XP_MIN_ROWS 24
#define XP_MIN_COLS 80

/* The frame: header line, tab bar, body, status line. */
struct xp_layout {
	bool too_small;          /* below XP_MIN_ROWS x XP_MIN_COLS: show only a message */
	struct xp_rect header, tabs, body, status;
};

/* Lays out a rows x cols screen. */
struct xp_layout xp_layout_frame(int rows, int cols);

/* One tab's label position on the tab bar. */
struct xp_tab_pos {
	int x, w;
};

/* Places n tab labels ("1 Topology") left to right from column 1 with two spaces between;
 * returns how many fit in cols (the rest are not drawn). */
int xp_layout_tabs(const char *const *labels, int n, int cols, struct xp_tab_pos *pos);

/* First row to show so that cursor stays inside a window of height rows over total rows,
 * moving the previous top as little as possible. */
int xp_layout_scroll(int top, int cursor, int height, int total);

#endif
