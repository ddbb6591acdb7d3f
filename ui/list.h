/* list.h: the console's one table/list widget, its pure half (no terminal needed, unit
 * tested in tests/check_list.c): which rows are shown (the view's filter hook), in what
 * order (sort by a column, kept per view), the cursor and the scroll window, the movement
 * keys, wheel and clicks, the "N of M" count, and how columns share a width. Every list
 * view (topology, validation, events, and the queues, problems and agents to come) keeps
 * one struct xp_list per list and draws it with list_draw.h, so that a key moves the
 * cursor the same way everywhere.
 *
 * Two kinds of list: a cursor list (a row is selected; the window follows it) and a pager
 * (no selection: the keys move the window over a document, and Left/Right scroll it
 * sideways). Rows are positions 0..n-1 in shown order; a list that filters or sorts also
 * maps each position to the view's own row id (rows[]). */
#ifndef XP_LIST_H
#define XP_LIST_H

#include <stdbool.h>
#include <stddef.h>

/* Most columns one table has. */
#define XP_LIST_COLS_MAX 16
/* Rows one wheel notch moves. */
#define XP_LIST_WHEEL 3
/* Columns one Left/Right key scrolls a pager sideways. */
#define XP_LIST_HSTEP 8

/* How a cell's text sits in its column. */
enum xp_list_align {
	XP_ALIGN_LEFT,
	XP_ALIGN_RIGHT
};

/* One column of a table. */
struct xp_list_col {
	const char *title; /* heading ("NODE"); a column is never narrower than it */
	int max;           /* widest it grows to for long cells; 0: no bound */
	int min;           /* narrowest it shrinks to when the screen is short; 0: never shrinks */
	int align;         /* enum xp_list_align */
	bool fill;         /* the last column: takes what is left of the width */
};

/* Where the columns of a table go on one frame: offsets from the table's left edge. */
struct xp_list_fit {
	int x[XP_LIST_COLS_MAX]; /* first column of each */
	int w[XP_LIST_COLS_MAX]; /* width of each (a fill column: what is left, maybe <= 0) */
	size_t n;                /* columns that start inside the width (the rest are cut off) */
};

/* Which rows the cursor may rest on (a topology group header may not); NULL: every row. */
typedef bool (*xp_list_stop)(size_t pos, void *arg);
/* The view's filter hook: true when its row id matches the `/` text. */
typedef bool (*xp_list_match)(size_t id, void *arg);
/* The view's sort hook: <0, 0, >0 as row id a sorts before, with, after b in column col
 * (ascending); ties keep the view's own order. */
typedef int (*xp_list_cmp)(size_t a, size_t b, int col, void *arg);

/* One list's state; zero it (or XP_LIST_INIT) to start; xp_list_free frees rows. */
struct xp_list {
	size_t *rows;       /* row ids in shown order, when the list filters (xp_list_filter) */
	size_t n, cap;      /* shown rows, and rows' allocation */
	size_t total;       /* rows before the filter, for "N of M" */
	size_t cursor, top; /* selected position, first position in the window */
	int page;           /* rows in the window on the last frame (paging, clicks) */
	bool pager;         /* no cursor: the keys move the window */
	int sort_col;       /* column of the sort, -1 for the view's own order */
	bool sort_desc;     /* that column descending */
	xp_list_stop stop;  /* rows the cursor may rest on, NULL: all */
	void *stop_arg;
	int xoff;           /* pager: columns scrolled sideways */
	int width, cols;    /* pager: widest line, and columns shown on the last frame */
	int xslack;         /* pager: blank columns allowed past the widest line's end */
};

/* A list that starts with the view's own order and a one-row page. */
#define XP_LIST_INIT {.sort_col = -1, .page = 1}

/* Frees the row ids (the struct is the caller's) and empties the list, keeping its settings. */
void xp_list_free(struct xp_list *l);
/* Sets the number of shown rows (for a view that keeps its rows itself) and of rows in all,
 * clamping the cursor. */
void xp_list_set_count(struct xp_list *l, size_t n, size_t total);
/* Fills rows with the ids 0..total-1 that match (NULL keeps all), in order, then sorts them
 * when a sort column is set; clamps the cursor. Returns the rows shown. */
size_t xp_list_filter(struct xp_list *l, size_t total, xp_list_match match, void *arg, xp_list_cmp cmp,
		      void *cmp_arg);
/* Stable sort of ids[0..n-1] by column col (descending when desc). */
void xp_list_sort(size_t *ids, size_t n, xp_list_cmp cmp, int col, bool desc, void *arg);
/* Position of row id among the shown rows, or -1. */
long xp_list_find(const struct xp_list *l, size_t id);
/* The row id under the cursor, or -1 when nothing is shown. */
long xp_list_current(const struct xp_list *l);
/* Moves the sort: the next column (after the last: back to the view's own order) for 's',
 * the other direction for 'S'; true when the key was one of those. ncols: sortable columns. */
bool xp_list_sort_key(struct xp_list *l, int key, int ncols);

/* Puts the cursor on position pos (clamped), then on the nearest row it may rest on, looking
 * first in direction dir (+1 down, -1 up); false (and no move) when there is none. */
bool xp_list_move_to(struct xp_list *l, long pos, int dir);
/* Handles Up/Down, j/k, PgUp/PgDn, Home/End, g/G (a pager also Left/Right, h/l);
 * true when the key was one of them. */
bool xp_list_key(struct xp_list *l, int key);
/* One wheel notch (dir -1 up, +1 down): the cursor, or a pager's window, moves XP_LIST_WHEEL rows. */
void xp_list_wheel(struct xp_list *l, int dir);
/* The position shown on window row y (0 = the first row under the heading), or -1 for none
 * (outside the window, past the last row, or a row the cursor may not rest on). */
long xp_list_row_at(const struct xp_list *l, int y);
/* What a click on window row y did. */
enum xp_list_click {
	XP_LIST_MISS,     /* no row there */
	XP_LIST_SELECT,   /* the cursor moved to it */
	XP_LIST_ACTIVATE  /* it was already selected: the view opens it (as Enter) */
};
/* A click on window row y: selects the row, or says it was the selected one. */
enum xp_list_click xp_list_click(struct xp_list *l, int y);
/* Lays out a frame of height rows: sets page and the window's top so that the cursor shows
 * (a row the cursor may not rest on just above it, its heading, shows too); a pager keeps
 * its window inside the document. */
void xp_list_frame(struct xp_list *l, int height);
/* First window top of a pager that still fills the window of page rows. */
size_t xp_list_max_top(const struct xp_list *l);
/* Writes "N of M" for position pos (from 0) of n shown rows, with "(K filtered from T)" when a
 * filter hid some of total, into buf; returns buf. */
const char *xp_list_count_of(size_t pos, size_t n, size_t total, char *buf, size_t len);
/* Writes "N of M" (the cursor's position and the rows shown, with "(M filtered from T)" when
 * the filter hid some) into buf; "" when nothing is shown. Returns buf. */
const char *xp_list_count(const struct xp_list *l, char *buf, size_t len);

/* Fits n columns into avail columns with gap blanks between two: each column takes want[j]
 * (its widest cell) but at least its title and at most its max; a fill column takes what is
 * left. When the fixed columns do not fit, those with a min shrink toward it, rightmost
 * first; what still does not fit is cut at the right edge. */
void xp_list_fit(const struct xp_list_col *cols, const int *want, size_t n, int avail, int gap,
		 struct xp_list_fit *out);

#endif
