/* check_queue_layout.c: the queues view's pure layout (ui/queue_layout.c): the queue tree
 * (hierarchy, folding, one row per quota, a loop of parents), quota bars (used, borrowed,
 * free, headroom; rounding that keeps small amounts visible; unlimited and unknown), their
 * numbers, the tree's columns from a wide to a very narrow terminal, and the job list's
 * cells and order. Every expected value is worked out by hand in the comments. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "queue_layout.h"
#include "suitelib.h"
#include "theme.h"

/* ---- a queue set built by hand ---- */

static struct xp_quota two_quotas[2] = {
	{.rclass = "h100", .res = XP_RES_DEVICES, .deserved = 16000, .max = 32000},
	{.rclass = "cpu", .res = XP_RES_CPUS, .deserved = 64000, .max = -1},
};

/* By name, as xp_qstore_load keeps them: eng, nlp (under research), orphan (its parent is not
 * in the set), prod (two quotas), research, vision (under research). */
static struct xp_queue queues[] = {
	{.name = "eng"},
	{.name = "nlp", .parent = "research"},
	{.name = "orphan", .parent = "gone"},
	{.name = "prod", .quotas = two_quotas, .n_quotas = 2},
	{.name = "research"},
	{.name = "vision", .parent = "research"},
};
static const struct xp_qset qset = {.queues = queues, .n_queues = 6};

/* The tree as "name/depth/quota,..." (quota '-' for none, '+' for a continuation row). */
static const char *tree_str(const struct xp_ql_tree *t, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < t->n && at < len; i++) {
		const struct xp_ql_row *r = &t->rows[i];
		char q[24];
		if (r->quota == SIZE_MAX)
			snprintf(q, sizeof q, "-");
		else
			snprintf(q, sizeof q, "%zu", r->quota);
		at += (size_t)snprintf(buf + at, len - at, "%s%s%s/%d/%s%s", i ? " " : "", r->first ? "" : "+",
				       qset.queues[r->queue].name, r->depth, q, r->kids ? (r->open ? "v" : ">") : "");
	}
	return buf;
}

START_TEST(test_tree_order)
{
	struct xp_ql_tree t = {0};
	char buf[512];
	xp_ql_tree_build(&qset, NULL, &t);
	/* Top queues by name (orphan is one: its parent is not in the set), research's children
	 * by name under it, prod's second quota on a row of its own. */
	ck_assert_str_eq(tree_str(&t, buf, sizeof buf),
			 "eng/0/- orphan/0/- prod/0/0 +prod/0/1 research/0/-v nlp/1/- vision/1/-");
	ck_assert_int_eq(xp_ql_tree_find(&t, 5), 6);
	ck_assert_int_eq(xp_ql_tree_find(&t, 3), 2);
	/* Building again replaces the rows. */
	xp_ql_tree_build(&qset, NULL, &t);
	ck_assert_uint_eq(t.n, 7);
	xp_ql_tree_free(&t);
	ck_assert_ptr_null(t.rows);
}
END_TEST

START_TEST(test_tree_fold)
{
	struct xp_ql_tree t = {0};
	char buf[512];
	bool folded[6] = {[4] = true};
	xp_ql_tree_build(&qset, folded, &t);
	ck_assert_str_eq(tree_str(&t, buf, sizeof buf), "eng/0/- orphan/0/- prod/0/0 +prod/0/1 research/0/->");
	ck_assert_int_eq(xp_ql_tree_find(&t, 5), -1);
	/* Folding a leaf changes nothing. */
	bool leaf[6] = {[0] = true};
	xp_ql_tree_build(&qset, leaf, &t);
	ck_assert_uint_eq(t.n, 7);
	xp_ql_tree_free(&t);
}
END_TEST

START_TEST(test_tree_loop_and_empty)
{
	/* a's parent is b and b's is a: no top; each shows once. */
	struct xp_queue loop[] = {{.name = "a", .parent = "b"}, {.name = "b", .parent = "a"}};
	struct xp_qset ls = {.queues = loop, .n_queues = 2};
	struct xp_ql_tree t = {0};
	xp_ql_tree_build(&ls, NULL, &t);
	ck_assert_uint_eq(t.n, 2);
	ck_assert_uint_eq(t.rows[0].queue, 0);
	ck_assert_int_eq(t.rows[0].depth, 0);
	ck_assert_uint_eq(t.rows[1].queue, 1);
	ck_assert_int_eq(t.rows[1].depth, 1);
	struct xp_qset none = {0};
	xp_ql_tree_build(&none, NULL, &t);
	ck_assert_uint_eq(t.n, 0);
	xp_ql_tree_free(&t);
}
END_TEST

START_TEST(test_prefix)
{
	char buf[64];
	struct xp_ql_row open = {.depth = 0, .first = true, .kids = true, .open = true};
	struct xp_ql_row shut = {.depth = 1, .first = true, .kids = true, .open = false};
	struct xp_ql_row leaf = {.depth = 2, .first = true};
	struct xp_ql_row cont = {.depth = 1, .first = false, .kids = true, .open = true};
	ck_assert_str_eq(xp_ql_prefix(&open, true, buf, sizeof buf), "▾ ");
	ck_assert_str_eq(xp_ql_prefix(&shut, true, buf, sizeof buf), "  ▸ ");
	ck_assert_str_eq(xp_ql_prefix(&leaf, true, buf, sizeof buf), "      ");
	ck_assert_str_eq(xp_ql_prefix(&cont, true, buf, sizeof buf), "    ");
	ck_assert_str_eq(xp_ql_prefix(&open, false, buf, sizeof buf), "- ");
	ck_assert_str_eq(xp_ql_prefix(&shut, false, buf, sizeof buf), "  + ");
	/* A short buffer is cut, never overrun. */
	char tiny[4];
	xp_ql_prefix(&leaf, false, tiny, sizeof tiny);
	ck_assert_uint_lt(strlen(tiny), sizeof tiny);
}
END_TEST

START_TEST(test_name_cell)
{
	char buf[256];
	struct xp_ql_row top = {.depth = 0, .first = true, .kids = true, .open = true};
	struct xp_ql_row deep = {.depth = 2, .first = true};
	struct xp_ql_row cont = {.depth = 0, .first = false};
	/* Fits: prefix and name as they are. */
	ck_assert_str_eq(xp_ql_name_cell(&top, "research", 12, true, "\u2026", buf, sizeof buf), "\u25be research");
	/* 8 columns: the mark and its blank, then 5 of the name and the ellipsis. */
	ck_assert_str_eq(xp_ql_name_cell(&top, "research", 8, true, "\u2026", buf, sizeof buf), "\u25be resea\u2026");
	ck_assert_str_eq(xp_ql_name_cell(&top, "research", 8, false, "~", buf, sizeof buf), "- resea~");
	/* Two levels down (4 blanks, 2 for the leaf's mark) in 8: two columns of name, cut. */
	ck_assert_str_eq(xp_ql_name_cell(&deep, "vision", 8, false, "~", buf, sizeof buf), "      v~");
	/* No room for a column of the name after the prefix: the name alone, cut. */
	ck_assert_str_eq(xp_ql_name_cell(&deep, "vision", 5, false, "~", buf, sizeof buf), "visi~");
	/* A continuation row, or no width: blank. */
	ck_assert_str_eq(xp_ql_name_cell(&cont, "research", 12, true, "\u2026", buf, sizeof buf), "");
	ck_assert_str_eq(xp_ql_name_cell(&top, "research", 0, true, "\u2026", buf, sizeof buf), "");
}
END_TEST

/* ---- bars ---- */

static const char *bar_str(int64_t used, int64_t deserved, int64_t max, int width, char *buf, size_t len)
{
	struct xp_ql_bar b;
	xp_ql_bar_fit(used, deserved, max, width, &b);
	snprintf(buf, len, "%d %d %d %d", b.used, b.borrowed, b.free, b.headroom);
	ck_assert_int_eq(b.used + b.borrowed + b.free + b.headroom, width > 0 ? width : 0);
	return buf;
}

START_TEST(test_bar_widths)
{
	char b[64];
	/* 48 used of 40 deserved, max 64, 20 cells (3.2 units a cell): the share ends at 12.5
	 * cells, rounded to 13; the use at 15 exactly: 13 own, 2 borrowed, 5 headroom. */
	ck_assert_str_eq(bar_str(48000, 40000, 64000, 20, b, sizeof b), "13 2 0 5");
	/* 12 of 16 deserved = max, 10 cells: 7.5 rounds to 8 used, 2 free, no headroom. */
	ck_assert_str_eq(bar_str(12000, 16000, 16000, 10, b, sizeof b), "8 0 2 0");
	/* The whole share used: full. */
	ck_assert_str_eq(bar_str(16000, 16000, 16000, 10, b, sizeof b), "10 0 0 0");
	/* Nothing used: the share is free, the rest headroom (8 of 32 on 8 cells: 2). */
	ck_assert_str_eq(bar_str(0, 8000, 32000, 8, b, sizeof b), "0 0 2 6");
	/* Used above max (the invariants forbid it): the bar is full. */
	ck_assert_str_eq(bar_str(70000, 40000, 64000, 20, b, sizeof b), "13 7 0 0");
	/* Width 0: nothing. */
	ck_assert_str_eq(bar_str(1000, 1000, 1000, 0, b, sizeof b), "0 0 0 0");
}
END_TEST

START_TEST(test_bar_small_amounts)
{
	char b[64];
	/* One milli-device of 64 devices still shows one cell. */
	ck_assert_str_eq(bar_str(1, 64000, 64000, 10, b, sizeof b), "1 0 9 0");
	/* 63.999 of 64 would round to the full bar: one cell stays free to show the gap. */
	ck_assert_str_eq(bar_str(63999, 64000, 64000, 10, b, sizeof b), "9 0 1 0");
	/* A share of 1 of 1000 max: one cell of share, the rest headroom. */
	ck_assert_str_eq(bar_str(0, 1000, 1000000, 10, b, sizeof b), "0 0 1 9");
}
END_TEST

START_TEST(test_bar_unlimited_unknown)
{
	char b[64];
	/* No max: the bar ends at the larger of deserved (16) and used (8): half used, half free. */
	ck_assert_str_eq(bar_str(8000, 16000, -1, 8, b, sizeof b), "4 0 4 0");
	/* No max, 24 used of 16: the bar ends at 24; the share is 8 of 12 cells, 4 borrowed. */
	ck_assert_str_eq(bar_str(24000, 16000, -1, 12, b, sizeof b), "8 4 0 0");
	/* Use not known: only the share (16 of 32: 5 of 10) and the headroom. */
	ck_assert_str_eq(bar_str(-1, 16000, 32000, 10, b, sizeof b), "0 0 5 5");
	/* Nothing deserved, max 8, 4 used: all of it borrowed (5 cells), 5 headroom. */
	ck_assert_str_eq(bar_str(4000, 0, 8000, 10, b, sizeof b), "0 5 0 5");
	/* Nothing deserved and no max: headroom, or all borrowed once something is used. */
	ck_assert_str_eq(bar_str(0, 0, -1, 6, b, sizeof b), "0 0 0 6");
	ck_assert_str_eq(bar_str(2000, 0, -1, 6, b, sizeof b), "0 6 0 0");
}
END_TEST

START_TEST(test_bar_glyphs)
{
	/* Four segments, four shapes, one column each, in both glyph sets. */
	for (int utf8 = 0; utf8 < 2; utf8++)
		for (int i = 0; i < 4; i++)
			for (int j = 0; j < i; j++)
				ck_assert_str_ne(xp_ql_bar_glyph(i, utf8), xp_ql_bar_glyph(j, utf8));
	ck_assert_str_eq(xp_ql_bar_glyph(0, true), "█");
	ck_assert_str_eq(xp_ql_bar_glyph(1, true), "▓");
	ck_assert_str_eq(xp_ql_bar_glyph(1, false), "=");
	ck_assert_str_eq(xp_ql_bar_glyph(3, false), ".");
	/* Borrowed stands apart from used in colour too. */
	ck_assert_int_ne(xp_ql_bar_role(0), xp_ql_bar_role(1));
	ck_assert_int_eq(xp_ql_bar_role(1), XP_ROLE_WARN);
}
END_TEST

START_TEST(test_amounts)
{
	char b[64];
	ck_assert_str_eq(xp_ql_amounts(48000, 40000, 64000, b, sizeof b), "40+8/40/64");
	ck_assert_str_eq(xp_ql_amounts(12000, 16000, 16000, b, sizeof b), "12/16/16");
	ck_assert_str_eq(xp_ql_amounts(-1, 16000, -1, b, sizeof b), "?/16/-");
	ck_assert_str_eq(xp_ql_amounts(500, 1000, -1, b, sizeof b), "0.5/1/-");
	/* Cut to a short buffer, terminated. */
	char s[6];
	xp_ql_amounts(48000, 40000, 64000, s, sizeof s);
	ck_assert_str_eq(s, "40+8/");
}
END_TEST

/* ---- columns ---- */

static const char *cols_str(int avail, char *buf, size_t len)
{
	/* name 12, weight 4, class label 8, numbers 10 */
	const int want[XP_QL_C_COUNT] = {[XP_QL_C_NAME] = 12, [XP_QL_C_WEIGHT] = 4, [XP_QL_C_LABEL] = 8,
					 [XP_QL_C_AMOUNTS] = 10};
	struct xp_ql_cols c;
	xp_ql_cols_fit(want, avail, &c);
	size_t at = 0;
	for (int i = 0; i < XP_QL_C_COUNT; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%d@%d", i ? " " : "", c.w[i], c.x[i]);
	return buf;
}

START_TEST(test_cols_wide)
{
	char b[256];
	/* 120 columns: the others take 12+4+8+10+4+4 and 6 blanks = 48; the bar would get 72,
	 * capped at 40. */
	ck_assert_str_eq(cols_str(120, b, sizeof b), "12@0 4@13 8@18 40@27 10@68 4@79 4@84");
	/* 60: the bar gets 60 - 48 = 12 and RUN ends on the last column. */
	ck_assert_str_eq(cols_str(60, b, sizeof b), "12@0 4@13 8@18 12@27 10@40 4@51 4@56");
}
END_TEST

START_TEST(test_cols_narrow)
{
	char b[256];
	/* 50: the bar would get 2: the name gives 4 (to 8) for a bar of 6. */
	ck_assert_str_eq(cols_str(50, b, sizeof b), "8@0 4@9 8@14 6@23 10@30 4@41 4@46");
	/* 45: the name gives 4, the label 4 (to 4), still 5: the weight goes (5 columns with its
	 * blank): a bar of 10. */
	ck_assert_str_eq(cols_str(45, b, sizeof b), "8@0 0@9 4@9 10@14 10@25 4@36 4@41");
	/* 30: even without the weight the bar would be negative: no bar, and the rest (34) does not
	 * fit: no numbers either; name, label and the counts remain (23 columns). */
	ck_assert_str_eq(cols_str(30, b, sizeof b), "8@0 0@9 4@9 0@14 0@14 4@14 4@19");
	/* 0 or less: the same, cut by the drawing. */
	ck_assert_str_eq(cols_str(0, b, sizeof b), "8@0 0@9 4@9 0@14 0@14 4@14 4@19");
}
END_TEST

START_TEST(test_cols_short_names)
{
	/* A name narrower than the minimum is not padded up to it, nor shrunk. */
	const int want[XP_QL_C_COUNT] = {[XP_QL_C_NAME] = 5, [XP_QL_C_LABEL] = 3, [XP_QL_C_AMOUNTS] = 8};
	struct xp_ql_cols c;
	xp_ql_cols_fit(want, 30, &c);
	/* 5+3+8+4+4 and 4 blanks = 28: no room for a bar (1 < 6), nothing to shrink. */
	ck_assert_int_eq(c.w[XP_QL_C_NAME], 5);
	ck_assert_int_eq(c.w[XP_QL_C_LABEL], 3);
	ck_assert_int_eq(c.w[XP_QL_C_BAR], 0);
	ck_assert_int_eq(c.w[XP_QL_C_AMOUNTS], 8);
	ck_assert_int_eq(c.x[XP_QL_C_RUN], 24);
}
END_TEST

/* ---- job cells ---- */

START_TEST(test_duration)
{
	char b[32];
	ck_assert_str_eq(xp_fmt_span(b, sizeof b, -1), "-");
	ck_assert_str_eq(xp_fmt_span(b, sizeof b, 0), "0s");
	ck_assert_str_eq(xp_fmt_span(b, sizeof b, 59), "59s");
	ck_assert_str_eq(xp_fmt_span(b, sizeof b, 60), "1m");
	ck_assert_str_eq(xp_fmt_span(b, sizeof b, 3599), "59m");
	ck_assert_str_eq(xp_fmt_span(b, sizeof b, 3 * 3600 + 12 * 60 + 5), "3h12m");
	ck_assert_str_eq(xp_fmt_span(b, sizeof b, 3600 + 5 * 60), "1h05m");
	ck_assert_str_eq(xp_fmt_span(b, sizeof b, 2 * 86400 + 4 * 3600 + 59), "2d4h");
}
END_TEST

static struct xp_qjob job(int64_t id, int state, int prio, int64_t submit, int64_t start, size_t pq, size_t pg,
			  int reason, char *text)
{
	return (struct xp_qjob){.id = id, .state = state, .priority = prio, .submit = submit, .start = start,
				.end = -1, .pos_queue = pq, .pos_global = pg, .reason = reason, .reason_text = text};
}

START_TEST(test_job_cells)
{
	char b[256];
	struct xp_qjob p = job(7, XP_JS_PENDING, 5, 1000, -1, 3, 40, XP_R_QUOTA, "h100 devices 64/64 used, 8 more needed");
	struct xp_qjob r = job(8, XP_JS_RUNNING, 0, 1000, 1600, 0, 0, XP_R_NONE, NULL);
	struct xp_qjob h = job(9, XP_JS_HELD, 0, 2000, -1, 0, 0, XP_R_HELD, NULL);
	struct xp_qjob c = job(10, XP_JS_CANCELLED, 0, 2000, -1, 0, 0, XP_R_NONE, NULL);
	ck_assert_int_eq(xp_ql_wait(&p, 5000), 4000);
	ck_assert_int_eq(xp_ql_wait(&r, 5000), 600);
	ck_assert_int_eq(xp_ql_wait(&h, 5000), 3000);
	ck_assert_int_eq(xp_ql_wait(&c, 5000), -1);
	/* A clock behind the submit time (another machine's job) waits 0, not a negative time. */
	ck_assert_int_eq(xp_ql_wait(&p, 10), 0);
	ck_assert_str_eq(xp_ql_position(&p, b, sizeof b), "3/40");
	ck_assert_str_eq(xp_ql_position(&r, b, sizeof b), "-");
	ck_assert_str_eq(xp_ql_reason(&p, b, sizeof b), "QuotaExceeded: h100 devices 64/64 used, 8 more needed");
	ck_assert_str_eq(xp_ql_reason(&h, b, sizeof b), "Held");
	ck_assert_str_eq(xp_ql_reason(&r, b, sizeof b), "-");
}
END_TEST

START_TEST(test_job_sort)
{
	struct xp_qjob a = job(1, XP_JS_RUNNING, 0, 100, 200, 0, 0, XP_R_NONE, NULL);
	struct xp_qjob b = job(2, XP_JS_PENDING, 9, 300, -1, 2, 5, XP_R_RESOURCES, "0/4 nodes fit");
	struct xp_qjob c = job(3, XP_JS_PENDING, 9, 50, -1, 1, 1, XP_R_PRIORITY, "behind 1");
	int64_t now = 1000;
	/* state: pending before running (the enum's order) */
	ck_assert_int_gt(xp_ql_job_cmp(&a, &b, XP_QL_J_STATE, now), 0);
	/* wait: a waited 100, b 700, c 950 */
	ck_assert_int_lt(xp_ql_job_cmp(&a, &b, XP_QL_J_WAIT, now), 0);
	ck_assert_int_lt(xp_ql_job_cmp(&b, &c, XP_QL_J_WAIT, now), 0);
	/* priority ties fall to the id */
	ck_assert_int_lt(xp_ql_job_cmp(&b, &c, XP_QL_J_PRIO, now), 0);
	ck_assert_int_lt(xp_ql_job_cmp(&a, &b, XP_QL_J_PRIO, now), 0);
	/* position: 1 before 2, not pending last */
	ck_assert_int_lt(xp_ql_job_cmp(&c, &b, XP_QL_J_POS, now), 0);
	ck_assert_int_gt(xp_ql_job_cmp(&a, &b, XP_QL_J_POS, now), 0);
	/* reason by code: None (0) < Resources (1) < Priority (2) */
	ck_assert_int_lt(xp_ql_job_cmp(&a, &b, XP_QL_J_REASON, now), 0);
	ck_assert_int_lt(xp_ql_job_cmp(&b, &c, XP_QL_J_REASON, now), 0);
	/* id */
	ck_assert_int_lt(xp_ql_job_cmp(&a, &c, XP_QL_J_ID, now), 0);
	ck_assert_int_eq(xp_ql_job_cmp(&a, &a, XP_QL_J_WAIT, now), 0);
}
END_TEST

START_TEST(test_whatif_line)
{
	char b[256];
	ck_assert_str_eq(xp_ql_whatif_line("research", 10, 720, 11400, 2400, 16800, true, b, sizeof b),
			 "research    p50 12m → 40m  p95 3h10m → 4h40m");
	ck_assert_str_eq(xp_ql_whatif_line("vision", 6, -1, -1, 60, 60, false, b, sizeof b),
			 "vision  p50 - -> 1m  p95 - -> 1m");
}
END_TEST

XP_DEFINE_SUITE(queue_layout,
	{"tree", .tests = {test_tree_order, test_tree_fold, test_tree_loop_and_empty, test_prefix, test_name_cell}},
	{"bars", .tests = {test_bar_widths, test_bar_small_amounts, test_bar_unlimited_unknown, test_bar_glyphs,
			   test_amounts}},
	{"columns", .tests = {test_cols_wide, test_cols_narrow, test_cols_short_names}},
	{"jobs", .tests = {test_duration, test_job_cells, test_job_sort, test_whatif_line}})
