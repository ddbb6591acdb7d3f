/* check_list.c: the list widget's pure logic (ui/list.c): filtering through the view's hook,
 * stable sort by a column both ways, cursor and window arithmetic with rows the cursor may
 * not rest on, the movement keys of a list and of a pager, wheel and clicks, the "N of M"
 * count, and how columns share a width that is too short. */
#include <check.h>
#include <curses.h>
#include <string.h>

#include "list.h"
#include "suitelib.h"

/* ---- hooks ---- */

static bool even(size_t id, void *arg)
{
	(void)arg;
	return id % 2 == 0;
}

/* Rows whose key is given in an array: column 0 compares the key, column 1 the id reversed. */
static int by_key(size_t a, size_t b, int col, void *arg)
{
	const int *key = arg;
	if (col == 1)
		return (a < b) - (a > b);
	return (key[a] > key[b]) - (key[a] < key[b]);
}

/* Every fourth row is a heading the cursor skips (as topology's group rows). */
static bool not_heading(size_t pos, void *arg)
{
	(void)arg;
	return pos % 4 != 0;
}

static struct xp_list make(size_t n, int page)
{
	struct xp_list l = XP_LIST_INIT;
	xp_list_set_count(&l, n, n);
	l.page = page;
	return l;
}

/* ---- rows ---- */

START_TEST(test_filter)
{
	struct xp_list l = XP_LIST_INIT;
	ck_assert_uint_eq(xp_list_filter(&l, 9, even, NULL, NULL, NULL), 5);
	ck_assert_uint_eq(l.total, 9);
	ck_assert_uint_eq(l.rows[0], 0);
	ck_assert_uint_eq(l.rows[4], 8);
	ck_assert_int_eq(xp_list_find(&l, 6), 3);
	ck_assert_int_eq(xp_list_find(&l, 5), -1);
	l.cursor = 4;
	ck_assert_int_eq(xp_list_current(&l), 8);
	/* A narrower filter pulls the cursor onto the last row left. */
	ck_assert_uint_eq(xp_list_filter(&l, 3, even, NULL, NULL, NULL), 2);
	ck_assert_uint_eq(l.cursor, 1);
	/* No hook: every row. */
	ck_assert_uint_eq(xp_list_filter(&l, 4, NULL, NULL, NULL, NULL), 4);
	ck_assert_uint_eq(xp_list_filter(&l, 0, NULL, NULL, NULL, NULL), 0);
	ck_assert_int_eq(xp_list_current(&l), -1);
	xp_list_free(&l);
	ck_assert_ptr_null(l.rows);
}
END_TEST

START_TEST(test_sort)
{
	int key[] = {3, 1, 3, 0, 1};
	struct xp_list l = XP_LIST_INIT;
	/* The view's own order until a column is picked. */
	xp_list_filter(&l, 5, NULL, NULL, by_key, key);
	for (size_t i = 0; i < 5; i++)
		ck_assert_uint_eq(l.rows[i], i);
	l.sort_col = 0;
	xp_list_filter(&l, 5, NULL, NULL, by_key, key);
	size_t asc[] = {3, 1, 4, 0, 2}; /* ties keep the view's order */
	for (size_t i = 0; i < 5; i++)
		ck_assert_uint_eq(l.rows[i], asc[i]);
	l.sort_desc = true;
	xp_list_filter(&l, 5, NULL, NULL, by_key, key);
	size_t desc[] = {0, 2, 1, 4, 3}; /* still stable: equal keys in the view's order */
	for (size_t i = 0; i < 5; i++)
		ck_assert_uint_eq(l.rows[i], desc[i]);
	l.sort_col = 1;
	l.sort_desc = false;
	xp_list_filter(&l, 5, even, NULL, by_key, key);
	ck_assert_uint_eq(l.rows[0], 4);
	ck_assert_uint_eq(l.rows[2], 0);
	xp_list_free(&l);

	/* A long list: sorted and every id still there once. */
	enum { N = 1000 };
	static int big[N];
	for (int i = 0; i < N; i++)
		big[i] = (i * 7919) % 101;
	size_t ids[N];
	for (size_t i = 0; i < N; i++)
		ids[i] = i;
	xp_list_sort(ids, N, by_key, 0, false, big);
	bool seen[N] = {false};
	for (size_t i = 0; i < N; i++) {
		ck_assert(!seen[ids[i]]);
		seen[ids[i]] = true;
		if (i) {
			ck_assert_int_le(big[ids[i - 1]], big[ids[i]]);
			if (big[ids[i - 1]] == big[ids[i]])
				ck_assert_uint_lt(ids[i - 1], ids[i]);
		}
	}
}
END_TEST

START_TEST(test_sort_key)
{
	struct xp_list l = XP_LIST_INIT;
	ck_assert_int_eq(l.sort_col, -1);
	ck_assert(xp_list_sort_key(&l, 's', 3));
	ck_assert_int_eq(l.sort_col, 0);
	ck_assert(xp_list_sort_key(&l, 'S', 3));
	ck_assert(l.sort_desc);
	ck_assert(xp_list_sort_key(&l, 's', 3));
	ck_assert_int_eq(l.sort_col, 1);
	ck_assert(!l.sort_desc);
	xp_list_sort_key(&l, 's', 3);
	xp_list_sort_key(&l, 's', 3);
	ck_assert_int_eq(l.sort_col, -1); /* back to the view's own order */
	ck_assert(!xp_list_sort_key(&l, 'x', 3));
}
END_TEST

/* ---- cursor and window ---- */

/* A key and where the cursor (or a pager's top) is after it. */
struct step {
	int key;
	size_t want;
};

/* Presses each key in turn and checks where it left the list. */
static void press(struct xp_list *l, const struct step *steps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(xp_list_key(l, steps[i].key), "step %zu: key %d not taken", i, steps[i].key);
		size_t got = l->pager ? l->top : l->cursor;
		ck_assert_msg(got == steps[i].want, "step %zu: at %zu, want %zu", i, got, steps[i].want);
	}
}

START_TEST(test_keys)
{
	static const struct step steps[] = {
		{KEY_DOWN, 1}, {'j', 2},  {'k', 1},        {KEY_NPAGE, 11}, {KEY_PPAGE, 1}, {KEY_PPAGE, 0},
		{KEY_UP, 0},   {'G', 49}, {KEY_DOWN, 49},  {KEY_HOME, 0},   {KEY_END, 49},  {'g', 0},
	};
	struct xp_list l = make(50, 10);
	press(&l, steps, sizeof steps / sizeof *steps);
	ck_assert(!xp_list_key(&l, 'x'));
	ck_assert(!xp_list_key(&l, KEY_LEFT)); /* a list leaves Left/Right to its view */
	/* An empty list takes the keys and stays put. */
	struct xp_list e = make(0, 10);
	ck_assert(xp_list_key(&e, KEY_DOWN));
	ck_assert_uint_eq(e.cursor, 0);
}
END_TEST

START_TEST(test_stops)
{
	/* Rows 0, 4, 8 are headings. */
	struct xp_list l = make(10, 3);
	l.stop = not_heading;
	xp_list_key(&l, KEY_HOME);
	ck_assert_uint_eq(l.cursor, 1);
	xp_list_key(&l, KEY_UP);
	ck_assert_uint_eq(l.cursor, 1); /* nothing above but the heading: stays */
	l.cursor = 3;
	xp_list_key(&l, KEY_DOWN);
	ck_assert_uint_eq(l.cursor, 5);
	xp_list_key(&l, KEY_UP);
	ck_assert_uint_eq(l.cursor, 3);
	xp_list_key(&l, KEY_END);
	ck_assert_uint_eq(l.cursor, 9);
	/* The window shows the heading above a cursor on its first row. */
	l.top = 9;
	l.cursor = 5;
	xp_list_frame(&l, 3);
	ck_assert_uint_eq(l.top, 4);
	ck_assert_int_eq(xp_list_row_at(&l, 0), -1); /* a heading cannot be clicked */
	ck_assert_int_eq(xp_list_row_at(&l, 2), 6);
	/* Only headings: no move. */
	struct xp_list h = make(1, 3);
	h.stop = not_heading;
	ck_assert(!xp_list_move_to(&h, 0, 1));
}
END_TEST

START_TEST(test_frame)
{
	struct xp_list l = make(100, 1);
	l.cursor = 50;
	xp_list_frame(&l, 20);
	ck_assert_int_eq(l.page, 20);
	ck_assert_uint_eq(l.top, 31);
	l.cursor = 40;
	xp_list_frame(&l, 20);
	ck_assert_uint_eq(l.top, 31); /* still shown: the window does not move */
	l.cursor = 10;
	xp_list_frame(&l, 20);
	ck_assert_uint_eq(l.top, 10);
	/* A narrower filter pulls the window up so the last row ends it. */
	xp_list_set_count(&l, 15, 100);
	xp_list_frame(&l, 20);
	ck_assert_uint_eq(l.top, 0);
	xp_list_frame(&l, 0);
	ck_assert_int_eq(l.page, 1);
}
END_TEST

START_TEST(test_mouse)
{
	struct xp_list l = make(30, 10);
	l.top = 5;
	l.cursor = 7;
	ck_assert_int_eq(xp_list_click(&l, 3), XP_LIST_SELECT);
	ck_assert_uint_eq(l.cursor, 8);
	ck_assert_int_eq(xp_list_click(&l, 3), XP_LIST_ACTIVATE);
	ck_assert_int_eq(xp_list_click(&l, -1), XP_LIST_MISS);
	ck_assert_int_eq(xp_list_click(&l, 10), XP_LIST_MISS); /* below the window */
	ck_assert_uint_eq(l.cursor, 8);
	l.top = 25;
	ck_assert_int_eq(xp_list_click(&l, 6), XP_LIST_MISS); /* past the last row */
	xp_list_wheel(&l, 1);
	ck_assert_uint_eq(l.cursor, 8 + XP_LIST_WHEEL);
	for (int i = 0; i < 3; i++)
		xp_list_wheel(&l, -1);
	ck_assert_uint_eq(l.cursor, 2);
	xp_list_wheel(&l, -1);
	ck_assert_uint_eq(l.cursor, 0);
	/* The wheel scrolls the window at once, the cursor on the same row of it. */
	l.top = 0;
	l.cursor = 2;
	xp_list_wheel(&l, 1);
	ck_assert_uint_eq(l.top, XP_LIST_WHEEL);
	ck_assert_uint_eq(l.cursor, 2 + XP_LIST_WHEEL);
	xp_list_frame(&l, 10);
	ck_assert_uint_eq(l.top, XP_LIST_WHEEL);
	xp_list_wheel(&l, -1);
	ck_assert_uint_eq(l.top, 0);
	ck_assert_uint_eq(l.cursor, 2);
	/* At the last page the window stays and the cursor goes on down. */
	l.top = xp_list_max_top(&l);
	l.cursor = l.top;
	xp_list_wheel(&l, 1);
	ck_assert_uint_eq(l.top, xp_list_max_top(&l));
	ck_assert_uint_eq(l.cursor, xp_list_max_top(&l) + XP_LIST_WHEEL);
}
END_TEST

START_TEST(test_pager)
{
	static const struct step steps[] = {
		{KEY_DOWN, 1}, {KEY_NPAGE, 11}, {KEY_NPAGE, 20}, {'j', 20}, {KEY_PPAGE, 10},
		{'g', 0},      {'k', 0},        {'G', 20},
	};
	struct xp_list l = make(30, 10);
	l.pager = true;
	l.width = 100;
	l.cols = 80;
	ck_assert_uint_eq(xp_list_max_top(&l), 20);
	press(&l, steps, sizeof steps / sizeof *steps);
	xp_list_wheel(&l, -1);
	ck_assert_uint_eq(l.top, 20 - XP_LIST_WHEEL);
	/* Sideways: eight columns a key, up to the widest line's end (and the slack). */
	ck_assert(xp_list_key(&l, KEY_RIGHT));
	ck_assert_int_eq(l.xoff, 8);
	xp_list_key(&l, 'l');
	xp_list_key(&l, 'l');
	ck_assert_int_eq(l.xoff, 20);
	l.xslack = 2;
	xp_list_key(&l, 'l');
	ck_assert_int_eq(l.xoff, 22);
	xp_list_key(&l, 'h');
	xp_list_key(&l, KEY_LEFT);
	xp_list_key(&l, KEY_LEFT);
	ck_assert_int_eq(l.xoff, 0);
	/* A shorter document pulls the window back when it is drawn. */
	l.top = 25;
	xp_list_set_count(&l, 12, 12);
	xp_list_frame(&l, 10);
	ck_assert_uint_eq(l.top, 2);
	/* No selection in a pager: a click selects nothing. */
	ck_assert_int_eq(xp_list_click(&l, 0), XP_LIST_SELECT);
	ck_assert_uint_eq(l.cursor, 0);
}
END_TEST

START_TEST(test_count)
{
	char buf[64];
	struct xp_list l = make(0, 10);
	ck_assert_str_eq(xp_list_count(&l, buf, sizeof buf), "");
	xp_list_set_count(&l, 40, 40);
	l.cursor = 11;
	ck_assert_str_eq(xp_list_count(&l, buf, sizeof buf), "12 of 40");
	xp_list_set_count(&l, 40, 55);
	ck_assert_str_eq(xp_list_count(&l, buf, sizeof buf), "12 of 40 (15 filtered from 55)");
}
END_TEST

/* ---- columns ---- */

static const struct xp_list_col cols[] = {
	{.title = "NODE", .max = 32, .min = 10},
	{.title = "STATE"},
	{.title = "CPU", .min = 3},
	{.title = "DEVICES", .fill = true},
};

START_TEST(test_fit)
{
	struct xp_list_fit f;
	/* Room enough: each column its widest cell, at least its title, at most its max. */
	int want[] = {40, 2, 14, 0};
	xp_list_fit(cols, want, 4, 100, 2, &f);
	ck_assert_uint_eq(f.n, 4);
	ck_assert_int_eq(f.w[0], 32);
	ck_assert_int_eq(f.w[1], 5);
	ck_assert_int_eq(f.x[1], 34);
	ck_assert_int_eq(f.w[2], 14);
	ck_assert_int_eq(f.x[3], 34 + 7 + 16);
	ck_assert_int_eq(f.w[3], 100 - 57);
	/* Short: CPU gives what is missing first (no more), then NODE; STATE never shrinks. */
	xp_list_fit(cols, want, 4, 50, 2, &f);
	ck_assert_int_eq(f.w[2], 7);
	ck_assert_int_eq(f.w[0], 32);
	ck_assert_int_eq(f.x[3], 50);
	ck_assert_int_eq(f.w[3], 0);
	xp_list_fit(cols, want, 4, 30, 2, &f);
	ck_assert_int_eq(f.w[2], 3);
	ck_assert_int_eq(f.w[0], 16);
	ck_assert_int_eq(f.x[3], 18 + 7 + 5);
	/* Still too short: the columns past the edge are cut off. */
	xp_list_fit(cols, want, 4, 15, 2, &f);
	ck_assert_uint_eq(f.n, 2);
	ck_assert_int_eq(f.w[0], 10);
}
END_TEST

XP_DEFINE_SUITE(list,
	{"list",
	 .tests = {test_filter, test_sort, test_sort_key, test_keys, test_stops, test_frame,
		   test_mouse, test_pager, test_count, test_fit}})
