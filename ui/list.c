/* list.c: the table/list widget's pure half (list.h): rows, order, cursor, window, keys. */
#include "list.h"

#include <curses.h> /* KEY_* codes only: nothing here touches the terminal */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map_layout.h"
#include "matrix_layout.h"
#include "xp.h"

void xp_list_free(struct xp_list *l)
{
	free(l->rows);
	l->rows = NULL;
	l->n = l->cap = l->total = 0;
	l->cursor = l->top = 0;
}

static void clamp_cursor(struct xp_list *l)
{
	if (l->cursor >= l->n)
		l->cursor = l->n ? l->n - 1 : 0;
}

void xp_list_set_count(struct xp_list *l, size_t n, size_t total)
{
	l->n = n;
	l->total = total;
	clamp_cursor(l);
}

/* ---- sort ---- */

struct sort_ctx {
	xp_list_cmp cmp;
	int col;
	bool desc;
	void *arg;
};

static int sort_cmp(const struct sort_ctx *s, size_t a, size_t b)
{
	int c = s->cmp(a, b, s->col, s->arg);
	return s->desc ? -c : c;
}

/* Merge sort (stable, unlike qsort): equal rows keep the view's own order under any column. */
static void merge_sort(size_t *ids, size_t *tmp, size_t n, const struct sort_ctx *s)
{
	if (n < 2)
		return;
	size_t h = n / 2;
	merge_sort(ids, tmp, h, s);
	merge_sort(ids + h, tmp, n - h, s);
	size_t i = 0, j = h, k = 0;
	while (i < h && j < n)
		tmp[k++] = sort_cmp(s, ids[j], ids[i]) < 0 ? ids[j++] : ids[i++];
	while (i < h)
		tmp[k++] = ids[i++];
	while (j < n)
		tmp[k++] = ids[j++];
	memcpy(ids, tmp, n * sizeof *ids);
}

void xp_list_sort(size_t *ids, size_t n, xp_list_cmp cmp, int col, bool desc, void *arg)
{
	if (n < 2 || !cmp || col < 0)
		return;
	struct sort_ctx s = {cmp, col, desc, arg};
	size_t *tmp = xp_calloc(n, sizeof *tmp);
	merge_sort(ids, tmp, n, &s);
	free(tmp);
}

size_t xp_list_filter(struct xp_list *l, size_t total, xp_list_match match, void *arg, xp_list_cmp cmp,
		      void *cmp_arg)
{
	l->n = 0;
	for (size_t i = 0; i < total; i++) {
		if (match && !match(i, arg))
			continue;
		xp_grow(&l->rows, sizeof *l->rows, l->n, &l->cap);
		l->rows[l->n++] = i;
	}
	l->total = total;
	xp_list_sort(l->rows, l->n, cmp, l->sort_col, l->sort_desc, cmp_arg);
	clamp_cursor(l);
	return l->n;
}

long xp_list_find(const struct xp_list *l, size_t id)
{
	for (size_t i = 0; l->rows && i < l->n; i++)
		if (l->rows[i] == id)
			return (long)i;
	return -1;
}

long xp_list_current(const struct xp_list *l)
{
	if (!l->n)
		return -1;
	return l->rows ? (long)l->rows[l->cursor] : (long)l->cursor;
}

bool xp_list_sort_key(struct xp_list *l, int key, int ncols)
{
	if (key == 's') {
		l->sort_col = l->sort_col + 1 < ncols ? l->sort_col + 1 : -1;
		l->sort_desc = false;
		return true;
	}
	if (key == 'S') {
		l->sort_desc = !l->sort_desc;
		return true;
	}
	return false;
}

/* ---- cursor and window ---- */

/* Nearest row the cursor may rest on from at, first in direction dir, then the other way. */
static long snap(const struct xp_list *l, size_t at, int dir)
{
	if (!l->stop)
		return (long)at;
	int d = dir < 0 ? -1 : 1;
	for (int pass = 0; pass < 2; pass++, d = -d)
		for (long i = (long)at; i >= 0 && i < (long)l->n; i += d)
			if (l->stop((size_t)i, l->stop_arg))
				return i;
	return -1;
}

bool xp_list_move_to(struct xp_list *l, long pos, int dir)
{
	if (!l->n)
		return false;
	if (pos < 0)
		pos = 0;
	if (pos >= (long)l->n)
		pos = (long)l->n - 1;
	long at = snap(l, (size_t)pos, dir);
	if (at < 0)
		return false;
	l->cursor = (size_t)at;
	return true;
}

size_t xp_list_max_top(const struct xp_list *l)
{
	size_t page = l->page > 0 ? (size_t)l->page : 1;
	return l->n > page ? l->n - page : 0;
}

/* A pager moves its window: by delta rows, kept between the first row and the last full page. */
static void pager_scroll(struct xp_list *l, long delta)
{
	size_t max = xp_list_max_top(l);
	if (delta < 0)
		l->top = l->top > (size_t)-delta ? l->top - (size_t)-delta : 0;
	else
		l->top = l->top + (size_t)delta < max ? l->top + (size_t)delta : max;
}

static void hscroll(struct xp_list *l, int by)
{
	int max = l->width - l->cols + l->xslack;
	l->xoff += by;
	if (l->xoff > max)
		l->xoff = max;
	if (l->xoff < 0)
		l->xoff = 0;
}

static bool pager_key(struct xp_list *l, int key)
{
	long page = l->page > 0 ? l->page : 1;
	switch (key) {
	case KEY_UP:
	case 'k':
		pager_scroll(l, -1);
		break;
	case KEY_DOWN:
	case 'j':
		pager_scroll(l, 1);
		break;
	case KEY_PPAGE:
		pager_scroll(l, -page);
		break;
	case KEY_NPAGE:
		pager_scroll(l, page);
		break;
	case KEY_HOME:
	case 'g':
		l->top = 0;
		break;
	case KEY_END:
	case 'G':
		l->top = xp_list_max_top(l);
		break;
	case KEY_LEFT:
	case 'h':
		hscroll(l, -XP_LIST_HSTEP);
		break;
	case KEY_RIGHT:
	case 'l':
		hscroll(l, XP_LIST_HSTEP);
		break;
	default:
		return false;
	}
	return true;
}

bool xp_list_key(struct xp_list *l, int key)
{
	if (l->pager)
		return pager_key(l, key);
	long cur = (long)l->cursor;
	size_t page = l->page > 0 ? (size_t)l->page : 1;
	switch (key) {
	case KEY_UP:
	case 'k':
		xp_list_move_to(l, cur - 1, -1);
		break;
	case KEY_DOWN:
	case 'j':
		xp_list_move_to(l, cur + 1, 1);
		break;
	case KEY_PPAGE:
		xp_list_move_to(l, (long)xp_scroll_page(l->cursor, page, l->n, -1), -1);
		break;
	case KEY_NPAGE:
		xp_list_move_to(l, (long)xp_scroll_page(l->cursor, page, l->n, 1), 1);
		break;
	case KEY_HOME:
	case 'g':
		xp_list_move_to(l, 0, 1);
		break;
	case KEY_END:
	case 'G':
		xp_list_move_to(l, (long)l->n - 1, -1);
		break;
	default:
		return false;
	}
	return true;
}

void xp_list_wheel(struct xp_list *l, int dir)
{
	long by = dir < 0 ? -XP_LIST_WHEEL : XP_LIST_WHEEL;
	if (l->pager) {
		pager_scroll(l, by);
		return;
	}
	/* A wheel scrolls what is shown, at once; the cursor goes with it (the same row of the
	 * window while the window can move, then on to the first or last row). Moving only the
	 * cursor left the window still until the cursor reached its edge. */
	if (l->top <= xp_list_max_top(l))
		pager_scroll(l, by);
	xp_list_move_to(l, (long)l->cursor + by, dir);
}

long xp_list_row_at(const struct xp_list *l, int y)
{
	if (y < 0 || y >= l->page)
		return -1;
	size_t pos = l->top + (size_t)y;
	if (pos >= l->n || (l->stop && !l->stop(pos, l->stop_arg)))
		return -1;
	return (long)pos;
}

enum xp_list_click xp_list_click(struct xp_list *l, int y)
{
	long pos = xp_list_row_at(l, y);
	if (pos < 0)
		return XP_LIST_MISS;
	if ((size_t)pos == l->cursor && !l->pager)
		return XP_LIST_ACTIVATE;
	if (!l->pager)
		l->cursor = (size_t)pos;
	return XP_LIST_SELECT;
}

void xp_list_frame(struct xp_list *l, int height)
{
	l->page = height > 1 ? height : 1;
	if (l->pager) {
		if (l->top > xp_list_max_top(l))
			l->top = xp_list_max_top(l);
		return;
	}
	if (height <= 0 || !l->n)
		return;
	l->top = xp_scroll_top(l->top, l->cursor, (size_t)height, l->n);
	/* The cursor on the window's first row: show the heading row above it with it. */
	if (l->stop && l->top == l->cursor && l->top > 0 && height > 1 && !l->stop(l->top - 1, l->stop_arg))
		l->top--;
}

const char *xp_list_count_of(size_t pos, size_t n, size_t total, char *buf, size_t len)
{
	if (total > n)
		snprintf(buf, len, "%zu of %zu (%zu filtered from %zu)", pos + 1, n, total - n, total);
	else
		snprintf(buf, len, "%zu of %zu", pos + 1, n);
	return buf;
}

const char *xp_list_count(const struct xp_list *l, char *buf, size_t len)
{
	if (!l->n) {
		snprintf(buf, len, "%s", "");
		return buf;
	}
	return xp_list_count_of(l->cursor, l->n, l->total, buf, len);
}

/* ---- columns ---- */

void xp_list_fit(const struct xp_list_col *cols, const int *want, size_t n, int avail, int gap,
		 struct xp_list_fit *out)
{
	memset(out, 0, sizeof *out);
	if (n > XP_LIST_COLS_MAX)
		n = XP_LIST_COLS_MAX;
	int used = 0; /* fixed columns and their gaps */
	for (size_t j = 0; j < n; j++) {
		int w = want[j];
		int t = cols[j].title ? xp_mx_cols(cols[j].title) : 0;
		if (cols[j].max > 0 && w > cols[j].max)
			w = cols[j].max;
		if (w < t)
			w = t;
		out->w[j] = w;
		if (!cols[j].fill)
			used += w + gap;
	}
	/* Short of room: shrink what may shrink, rightmost first, each toward its min. */
	for (size_t j = n; j-- > 0 && used > avail;) {
		if (cols[j].fill || cols[j].min <= 0 || out->w[j] <= cols[j].min)
			continue;
		int give = out->w[j] - cols[j].min;
		if (give > used - avail)
			give = used - avail;
		out->w[j] -= give;
		used -= give;
	}
	int x = 0;
	for (size_t j = 0; j < n; j++) {
		out->x[j] = x;
		if (cols[j].fill)
			out->w[j] = avail - x;
		if (x < avail)
			out->n = j + 1;
		x += out->w[j] + gap;
	}
}
