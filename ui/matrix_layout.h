/* matrix_layout.h: the pure parts of the validation view (no ncurses), so that they
 * can be unit tested: the marks of a cell, column widths and truncation, sideways
 * scrolling over columns of different widths, and which environments and cases a
 * filter keeps, with the totals of what is shown. */
#ifndef XP_MATRIX_LAYOUT_H
#define XP_MATRIX_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>

#include "validate.h"

/* A case column is never narrower than a cell's five marks nor wider than this. */
#define XP_MX_CASE_MIN XP_LAYER_COUNT
#define XP_MX_CASE_MAX 14
/* The environment column: at least "ENVIRONMENT", at most this (ids can be long). */
#define XP_MX_ENV_MIN 11
/* Blank columns between two columns of the grid. */
#define XP_MX_GAP 2

/* The mark of one layer status: "✓" "✗" "·" "~" in UTF-8, "P" "F" "." "S" in ASCII;
 * every mark is one column and the four differ in shape, not only in colour. */
const char *xp_mx_mark(int status, bool utf8);
/* The theme role of a status: ok for pass, fail for fail, warn for stale, dim for untested. */
int xp_mx_role(int status);
/* Writes the five marks of a cell (discovered first) into buf; returns buf. */
const char *xp_mx_marks(const struct xp_cell *cell, bool utf8, char *buf, size_t len);
/* Bit (1 << status) set for every status some layer of the cell has. */
unsigned xp_mx_cell_statuses(const struct xp_cell *cell);
/* True when every layer passes: the cell is fully accepted. */
bool xp_mx_cell_accepted(const struct xp_cell *cell);
/* True when some layer failed. */
bool xp_mx_cell_failed(const struct xp_cell *cell);
/* The cell of environment env and case kase (the matrix stores them row by row). */
const struct xp_cell *xp_mx_cell(const struct xp_matrix *m, size_t env, size_t kase);

/* Columns of a UTF-8 string: one per code point (the console's contract for its text). */
int xp_mx_cols(const char *s);
/* Writes s cut to at most width columns into buf: when it does not fit, its start and the
 * ellipsis take the width exactly. Returns buf ("" for width <= 0). */
const char *xp_mx_truncate(const char *s, int width, const char *ellipsis, char *buf, size_t len);
/* Width of a case column for its name: the name, kept between XP_MX_CASE_MIN and _MAX. */
int xp_mx_case_width(const char *name);
/* Width of the environment column: the widest id, at least XP_MX_ENV_MIN; capped only where
 * the other columns (rest: every case column and the totals) need the room, and then at the
 * larger of half of avail and what they leave, but never under XP_MX_ENV_MIN. */
int xp_mx_env_width(int widest, int avail, int rest);
/* Where the n ids (as drawn) diverge: *pre bytes that all share at their start and *suf at
 * their end, both at a ':' field boundary (the whole field that differs stays between them);
 * 0 and 0 for fewer than two ids. */
void xp_mx_env_common(const char *const *ids, size_t n, size_t *pre, size_t *suf);
/* Cuts id to width columns so that what tells it apart from its neighbours (the bytes between
 * pre and suf from xp_mx_env_common) stays: the shared end gives way first, then the shared
 * start (keeping the part next to the difference), each marked with ellipsis; the difference
 * itself is cut in its middle only when it alone does not fit. Writes buf and returns it. */
const char *xp_mx_env_cut(const char *id, int width, size_t pre, size_t suf, const char *ellipsis, char *buf,
			  size_t len);

/* How many columns from left fit in avail with gap between two (at least one when left < n,
 * so that a column wider than the screen still shows, cut). */
size_t xp_mx_fit(const int *widths, size_t n, size_t left, int avail, int gap);
/* The first column to show so that column cursor is visible, moving as little as possible from
 * left, and showing as many columns as fit when scrolled to the end. */
size_t xp_mx_scroll_left(const int *widths, size_t n, size_t left, size_t cursor, int avail, int gap);

/* The status a filter text names ("pass", "fail", "stale", "untested", any case), or -1. */
int xp_mx_status_word(const char *text);

/* Decides whether text matches the filter. */
typedef bool (*xp_mx_pred)(const char *text, void *arg);

/* What the filter keeps of a matrix, and the totals of the shown cells. */
struct xp_mx_shown {
	size_t *rows, n_rows;      /* environment indexes, in matrix order */
	size_t *cols, n_cols;      /* case indexes, in matrix order */
	size_t *row_ok, *row_fail; /* per shown row: cells fully accepted, cells with a failure */
	size_t *col_ok, *col_fail; /* per shown column, likewise */
	size_t ok, fail;           /* over every shown cell */
	int env_widest;            /* columns of the widest shown environment id */
};

/* Fills sh (replacing its contents) from m and the filter:
 *   - no filter: everything;
 *   - a status word: the environments and the cases with at least one layer in that status;
 *   - other text: environments whose id matches, cases whose name or team matches; when only
 *     one side matches, the other is kept whole (so "nvidia" keeps every case).
 * match decides a match (NULL: case-insensitive substring). */
void xp_mx_shown_build(struct xp_mx_shown *sh, const struct xp_matrix *m, const char *filter, xp_mx_pred match,
		       void *arg);
/* Frees sh's arrays (the struct is the caller's). */
void xp_mx_shown_free(struct xp_mx_shown *sh);
/* Position among the shown rows of the environment with this id, or -1. */
long xp_mx_find_env(const struct xp_matrix *m, const struct xp_mx_shown *sh, const char *id);
/* Position among the shown columns of the case with this name, or -1. */
long xp_mx_find_case(const struct xp_matrix *m, const struct xp_mx_shown *sh, const char *name);

#endif
