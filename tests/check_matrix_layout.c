/* check_matrix_layout.c: the validation view's pure layout (ui/matrix_layout.c): the
 * marks of a cell in UTF-8 and ASCII, truncation and column widths, sideways scrolling
 * over columns of different widths, and what the filter keeps, with the totals. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "draw.h"
#include "glyphs.h"
#include "matrix_layout.h"
#include "suitelib.h"
#include "theme.h"

/* ---- a matrix built by hand ---- */

/* Three environments, three cases; each cell given as five status letters
 * (P pass, F fail, S stale, anything else untested), row by row. */
static char *env_ids[] = {"NVIDIA:H100:535.54.03", "AMD:MI300X:6.1.0", "Huawei:Ascend910B:23.0.3"};
static char *case_names[] = {"llm-train", "bert-infer", "resnet50"};
static char *case_teams[] = {"nlp", "nlp", "vision"};

static int status_of(char c)
{
	return c == 'P' ? XP_V_PASS : c == 'F' ? XP_V_FAIL : c == 'S' ? XP_V_STALE : XP_V_UNTESTED;
}

static void build(struct xp_matrix *m, const char *const cells[9])
{
	memset(m, 0, sizeof *m);
	m->n_envs = 3;
	m->n_cases = 3;
	m->envs = calloc(3, sizeof *m->envs);
	m->cases = calloc(3, sizeof *m->cases);
	m->cells = calloc(9, sizeof *m->cells);
	for (size_t i = 0; i < 3; i++) {
		m->envs[i].id = env_ids[i];
		m->cases[i].name = case_names[i];
		m->cases[i].team = case_teams[i];
	}
	for (size_t k = 0; k < 9; k++) {
		m->cells[k].env = k / 3;
		m->cells[k].kase = k % 3;
		for (int l = 0; l < XP_LAYER_COUNT; l++) {
			m->cells[k].layers[l].layer = l;
			m->cells[k].layers[l].status = status_of(cells[k][l]);
		}
	}
}

static void unbuild(struct xp_matrix *m)
{
	free(m->envs);
	free(m->cases);
	free(m->cells);
}

static const char *const sample[9] = {
	"PPPPP", "PP...", "PPPPP", /* H100: two accepted */
	"F....", "PPPF.", "S....", /* MI300X: two failing, one stale */
	"PP...", "PPP..", "PPPP.", /* Ascend: in progress */
};

/* Which rows and columns are shown, as "rows 0 2 / cols 1". */
static const char *shown_str(const struct xp_mx_shown *sh, char *buf, size_t len)
{
	snprintf(buf, len, "rows");
	for (size_t i = 0; i < sh->n_rows; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), " %zu", sh->rows[i]);
	snprintf(buf + strlen(buf), len - strlen(buf), " / cols");
	for (size_t j = 0; j < sh->n_cols; j++)
		snprintf(buf + strlen(buf), len - strlen(buf), " %zu", sh->cols[j]);
	return buf;
}

/* The filter tests' fixture: the sample matrix, what the last filter shows and its text. */
static struct xp_matrix mx;
static struct xp_mx_shown vis;
static char vis_text[128];

static void filter_setup(void)
{
	build(&mx, sample);
	memset(&vis, 0, sizeof vis);
}

static void filter_teardown(void)
{
	xp_mx_shown_free(&vis);
	unbuild(&mx);
}

/* What filter shows of mx (into vis), as shown_str writes it. */
static const char *filtered(const char *filter)
{
	xp_mx_shown_build(&vis, &mx, filter, NULL, NULL);
	return shown_str(&vis, vis_text, sizeof vis_text);
}

/* ---- marks ---- */

START_TEST(test_marks)
{
	struct xp_matrix m;
	build(&m, sample);
	char buf[64];
	ck_assert_str_eq(xp_mx_marks(xp_mx_cell(&m, 0, 1), false, buf, sizeof buf), "PP...");
	ck_assert_str_eq(xp_mx_marks(xp_mx_cell(&m, 1, 0), false, buf, sizeof buf), "F....");
	ck_assert_str_eq(xp_mx_marks(xp_mx_cell(&m, 1, 2), false, buf, sizeof buf), "S....");
	ck_assert_str_eq(xp_mx_marks(xp_mx_cell(&m, 0, 1), true, buf, sizeof buf), "\u2713\u2713\u00b7\u00b7\u00b7");
	ck_assert_str_eq(xp_mx_marks(xp_mx_cell(&m, 1, 1), true, buf, sizeof buf), "\u2713\u2713\u2713\u2717\u00b7");
	ck_assert_str_eq(xp_mx_marks(xp_mx_cell(&m, 1, 2), true, buf, sizeof buf), "~\u00b7\u00b7\u00b7\u00b7");
	/* Five marks, five columns, in either set. */
	ck_assert_int_eq(xp_mx_cols(xp_mx_marks(xp_mx_cell(&m, 1, 1), true, buf, sizeof buf)), 5);
	/* A short buffer holds whole marks only. */
	char small[5];
	ck_assert_str_eq(xp_mx_marks(xp_mx_cell(&m, 0, 0), true, small, sizeof small), "\u2713");
	ck_assert_str_eq(xp_mx_marks(xp_mx_cell(&m, 0, 0), false, small, sizeof small), "PPPP");
	/* Every status has its own glyph in each set, and ASCII marks are ASCII. */
	for (int a = 0; a < XP_V_COUNT; a++) {
		ck_assert_int_eq(xp_mx_cols(xp_mx_mark(a, true)), 1);
		ck_assert_int_eq((int)strlen(xp_mx_mark(a, false)), 1);
		ck_assert_int_lt((unsigned char)xp_mx_mark(a, false)[0], 0x80);
		ck_assert_int_eq(xp_mx_mark(a, false)[0], xp_vstatus_mark(a));
		for (int b = a + 1; b < XP_V_COUNT; b++) {
			ck_assert_str_ne(xp_mx_mark(a, true), xp_mx_mark(b, true));
			ck_assert_str_ne(xp_mx_mark(a, false), xp_mx_mark(b, false));
		}
	}
	ck_assert_int_eq(xp_mx_role(XP_V_PASS), XP_ROLE_OK);
	ck_assert_int_eq(xp_mx_role(XP_V_FAIL), XP_ROLE_FAIL);
	ck_assert_int_eq(xp_mx_role(XP_V_STALE), XP_ROLE_WARN);
	ck_assert_int_eq(xp_mx_role(XP_V_UNTESTED), XP_ROLE_DIM);
	unbuild(&m);
}
END_TEST

START_TEST(test_cell_summary)
{
	struct xp_matrix m;
	build(&m, sample);
	ck_assert(xp_mx_cell_accepted(xp_mx_cell(&m, 0, 0)));
	ck_assert(!xp_mx_cell_accepted(xp_mx_cell(&m, 0, 1)));
	ck_assert(!xp_mx_cell_failed(xp_mx_cell(&m, 0, 1)));
	ck_assert(xp_mx_cell_failed(xp_mx_cell(&m, 1, 1)));
	ck_assert(!xp_mx_cell_accepted(xp_mx_cell(&m, 1, 2)));
	ck_assert_uint_eq(xp_mx_cell_statuses(xp_mx_cell(&m, 1, 1)),
			  1u << XP_V_PASS | 1u << XP_V_FAIL | 1u << XP_V_UNTESTED);
	ck_assert_uint_eq(xp_mx_cell_statuses(xp_mx_cell(&m, 0, 0)), 1u << XP_V_PASS);
	unbuild(&m);
}
END_TEST

/* ---- widths ---- */

/* The one cutting helper: the middle cut keeps the tail that tells ids of one family apart,
 * the start cut keeps a path's end; each marks the cut, UTF-8 or ASCII. */
START_TEST(test_cut_where)
{
	char a[64], b[64];
	const char *ell = xp_glyphs_utf8.ellipsis;
	const char *e1 = "nvidia/H100-SXM5-80GB/550.54.15/cuda-12.4", *e2 = "nvidia/H100-SXM5-80GB/550.54.15/cuda-12.2";
	xp_draw_cut(e1, 20, XP_CUT_MIDDLE, ell, a, sizeof a);
	xp_draw_cut(e2, 20, XP_CUT_MIDDLE, ell, b, sizeof b);
	ck_assert_str_ne(a, b);
	ck_assert_str_eq(a, "nvidia/\u202615/cuda-12.4");
	ck_assert_int_eq(xp_mx_cols(a), 20);
	/* The end cut (what view 4 did) made them one. */
	xp_draw_cut(e1, 20, XP_CUT_END, ell, a, sizeof a);
	xp_draw_cut(e2, 20, XP_CUT_END, ell, b, sizeof b);
	ck_assert_str_eq(a, b);
	ck_assert_str_eq(xp_draw_cut("Placement \u203a pack (editing)", 12, XP_CUT_START, ell, a, sizeof a),
			 "\u2026k (editing)");
	ck_assert_str_eq(xp_draw_cut("abcdefgh", 5, XP_CUT_MIDDLE, xp_glyphs_ascii.ellipsis, a, sizeof a), "a~fgh");
	ck_assert_str_eq(xp_draw_cut("abcdefgh", 5, XP_CUT_START, "...", a, sizeof a), "...gh");
	ck_assert_str_eq(xp_draw_cut("abc", 5, XP_CUT_MIDDLE, ell, a, sizeof a), "abc");
	ck_assert_str_eq(xp_draw_cut("abcdef", 0, XP_CUT_MIDDLE, ell, a, sizeof a), "");
}
END_TEST

START_TEST(test_truncate)
{
	char buf[64];
	const char *ell = xp_glyphs_utf8.ellipsis;
	ck_assert_str_eq(xp_mx_truncate("llm-train", 12, ell, buf, sizeof buf), "llm-train");
	ck_assert_str_eq(xp_mx_truncate("llm-train", 9, ell, buf, sizeof buf), "llm-train");
	ck_assert_str_eq(xp_mx_truncate("llm-train", 8, ell, buf, sizeof buf), "llm-tra\u2026");
	ck_assert_int_eq(xp_mx_cols(buf), 8);
	ck_assert_str_eq(xp_mx_truncate("llm-train", 8, xp_glyphs_ascii.ellipsis, buf, sizeof buf), "llm-tra~");
	ck_assert_str_eq(xp_mx_truncate("llm-train", 1, ell, buf, sizeof buf), "\u2026");
	ck_assert_str_eq(xp_mx_truncate("llm-train", 0, ell, buf, sizeof buf), "");
	ck_assert_str_eq(xp_mx_truncate("llm-train", -3, ell, buf, sizeof buf), "");
	ck_assert_str_eq(xp_mx_truncate(NULL, 5, ell, buf, sizeof buf), "");
	/* Multi-byte text is cut between code points, never inside one. */
	ck_assert_str_eq(xp_mx_truncate("\u00e9t\u00e9-\u00e9t\u00e9", 4, ".", buf, sizeof buf), "\u00e9t\u00e9.");
	/* A long ellipsis in no room: the start of the text rather than half a glyph. */
	ck_assert_str_eq(xp_mx_truncate("abcdef", 2, "...", buf, sizeof buf), "ab");
	/* A buffer shorter than the text: cut, still terminated. */
	char small[4];
	xp_mx_truncate("abcdefgh", 6, ell, small, sizeof small);
	ck_assert_uint_eq(strlen(small), 3);
}
END_TEST

START_TEST(test_widths)
{
	ck_assert_int_eq(xp_mx_case_width("a"), XP_MX_CASE_MIN);
	ck_assert_int_eq(xp_mx_case_width("llm-train"), 9);
	ck_assert_int_eq(xp_mx_case_width("resnet50-imagenet-inference"), XP_MX_CASE_MAX);
	ck_assert_int_eq(xp_mx_case_width(""), XP_MX_CASE_MIN);
	ck_assert_int_eq(xp_mx_env_width(21, 120, 40), 21);
	ck_assert_int_eq(xp_mx_env_width(5, 120, 40), XP_MX_ENV_MIN);
	/* The room there is, up to the widest id: a long id is not cut while the cases fit. */
	ck_assert_int_eq(xp_mx_env_width(80, 200, 40), 80);
	ck_assert_int_eq(xp_mx_env_width(80, 100, 40), 60);
	/* Half the screen at most when the cases need more than that... */
	ck_assert_int_eq(xp_mx_env_width(40, 60, 50), 30);
	/* ...but never under the heading. */
	ck_assert_int_eq(xp_mx_env_width(40, 10, 50), XP_MX_ENV_MIN);
	ck_assert_int_eq(xp_mx_cols("\u2713\u2713\u00b7"), 3);
	/* Ids that differ in the driver: the shared vendor:model and firmware:runtime give way. */
	const char *ids[] = {"NVIDIA:A100 80GB:535.54.03:92.00.36.00.02:CUDA 12.2",
			     "NVIDIA:A100 80GB:999.1:92.00.36.00.02:CUDA 12.2"};
	size_t pre, suf;
	xp_mx_env_common(ids, 2, &pre, &suf);
	ck_assert_uint_eq(pre, strlen("NVIDIA:A100 80GB:"));
	ck_assert_uint_eq(suf, strlen(":92.00.36.00.02:CUDA 12.2"));
	char a[128], b[128];
	xp_mx_env_cut(ids[0], 30, pre, suf, "~", a, sizeof a);
	xp_mx_env_cut(ids[1], 30, pre, suf, "~", b, sizeof b);
	ck_assert_str_eq(a, "NVIDIA:A100 80GB:535.54.03:92~");
	ck_assert_str_eq(b, "NVIDIA:A100 80GB:999.1:92.00.~");
	xp_mx_env_cut(ids[0], 16, pre, suf, "~", a, sizeof a);
	ck_assert_str_eq(a, "~80GB:535.54.03~");
	xp_mx_env_cut(ids[0], 7, pre, suf, "~", a, sizeof a);
	ck_assert_str_eq(a, "~5~.03~");
	/* One id, or ids alike: the middle cut. */
	xp_mx_env_common(ids, 1, &pre, &suf);
	ck_assert_uint_eq(pre + suf, 0);
	const char *same[] = {"a:b", "a:b"};
	xp_mx_env_common(same, 2, &pre, &suf);
	ck_assert_uint_eq(pre + suf, 0);
	ck_assert_int_eq(xp_mx_cols(NULL), 0);
}
END_TEST

/* ---- sideways scrolling ---- */

START_TEST(test_fit)
{
	const int w[] = {5, 10, 5, 14, 5};
	/* 5 + 2 + 10 + 2 + 5 = 24 */
	ck_assert_uint_eq(xp_mx_fit(w, 5, 0, 24, 2), 3);
	ck_assert_uint_eq(xp_mx_fit(w, 5, 0, 23, 2), 2);
	ck_assert_uint_eq(xp_mx_fit(w, 5, 3, 100, 2), 2);
	ck_assert_uint_eq(xp_mx_fit(w, 5, 5, 100, 2), 0);
	/* A column wider than the room still shows (cut): the cursor must be somewhere. */
	ck_assert_uint_eq(xp_mx_fit(w, 5, 3, 4, 2), 1);
	ck_assert_uint_eq(xp_mx_fit(w, 0, 0, 100, 2), 0);
}
END_TEST

START_TEST(test_scroll_left)
{
	const int w[] = {5, 5, 5, 5, 5, 5, 5, 5, 5, 5}; /* 7 columns each with the gap */
	/* 20 columns hold 3: 5+2+5+2+5 = 19. */
	ck_assert_uint_eq(xp_mx_scroll_left(w, 10, 0, 0, 20, 2), 0);
	ck_assert_uint_eq(xp_mx_scroll_left(w, 10, 0, 2, 20, 2), 0);
	/* One step right of the window moves it by one. */
	ck_assert_uint_eq(xp_mx_scroll_left(w, 10, 0, 3, 20, 2), 1);
	/* A jump to the end shows the last three. */
	ck_assert_uint_eq(xp_mx_scroll_left(w, 10, 0, 9, 20, 2), 7);
	/* Moving left inside the window does not scroll. */
	ck_assert_uint_eq(xp_mx_scroll_left(w, 10, 7, 8, 20, 2), 7);
	/* Moving left out of it scrolls to the cursor. */
	ck_assert_uint_eq(xp_mx_scroll_left(w, 10, 7, 4, 20, 2), 4);
	ck_assert_uint_eq(xp_mx_scroll_left(w, 10, 7, 0, 20, 2), 0);
	/* A wider screen pulls the window back: no blank room after the last column. */
	ck_assert_uint_eq(xp_mx_scroll_left(w, 10, 7, 9, 34, 2), 5);
	ck_assert_uint_eq(xp_mx_scroll_left(w, 10, 7, 9, 200, 2), 0);
	/* A filter that left fewer columns than left. */
	ck_assert_uint_eq(xp_mx_scroll_left(w, 2, 7, 1, 20, 2), 0);
	ck_assert_uint_eq(xp_mx_scroll_left(w, 0, 7, 0, 20, 2), 0);
	/* Mixed widths: the cursor column ends the window. */
	const int mixed[] = {14, 5, 14, 5, 14};
	size_t left = xp_mx_scroll_left(mixed, 5, 0, 4, 30, 2);
	ck_assert_uint_eq(left, 3);
	ck_assert_uint_ge(left + xp_mx_fit(mixed, 5, left, 30, 2), 5);
	/* A cursor column wider than the room: it alone is shown. */
	ck_assert_uint_eq(xp_mx_scroll_left(mixed, 5, 0, 2, 10, 2), 2);
}
END_TEST

/* ---- filtering and totals ---- */

START_TEST(test_filter_none)
{
	ck_assert_str_eq(filtered(""), "rows 0 1 2 / cols 0 1 2");
	ck_assert_str_eq(filtered(NULL), "rows 0 1 2 / cols 0 1 2");
	/* Totals: H100 has two accepted cells, MI300X two failing. */
	ck_assert_uint_eq(vis.row_ok[0], 2);
	ck_assert_uint_eq(vis.row_fail[0], 0);
	ck_assert_uint_eq(vis.row_ok[1], 0);
	ck_assert_uint_eq(vis.row_fail[1], 2);
	ck_assert_uint_eq(vis.row_ok[2], 0);
	ck_assert_uint_eq(vis.col_ok[0], 1);
	ck_assert_uint_eq(vis.col_fail[0], 1);
	ck_assert_uint_eq(vis.col_ok[2], 1);
	ck_assert_uint_eq(vis.col_fail[1], 1);
	ck_assert_uint_eq(vis.ok, 2);
	ck_assert_uint_eq(vis.fail, 2);
	ck_assert_int_eq(vis.env_widest, (int)strlen("Huawei:Ascend910B:23.0.3"));
	ck_assert_int_eq(xp_mx_find_env(&mx, &vis, "AMD:MI300X:6.1.0"), 1);
	ck_assert_int_eq(xp_mx_find_case(&mx, &vis, "resnet50"), 2);
	ck_assert_int_eq(xp_mx_find_case(&mx, &vis, "nope"), -1);
	ck_assert_int_eq(xp_mx_find_env(&mx, &vis, NULL), -1);
}
END_TEST

START_TEST(test_filter_text)
{
	/* A vendor keeps its environments and every case. */
	ck_assert_str_eq(filtered("amd"), "rows 1 / cols 0 1 2");
	ck_assert_int_eq(xp_mx_find_env(&mx, &vis, "AMD:MI300X:6.1.0"), 0);
	ck_assert_int_eq(xp_mx_find_env(&mx, &vis, "NVIDIA:H100:535.54.03"), -1);
	ck_assert_uint_eq(vis.fail, 2);
	ck_assert_uint_eq(vis.col_fail[2], 0);
	/* A driver version is in the id too. */
	ck_assert_str_eq(filtered("535.54"), "rows 0 / cols 0 1 2");
	/* A team keeps its cases and every environment. */
	ck_assert_str_eq(filtered("vision"), "rows 0 1 2 / cols 2");
	ck_assert_uint_eq(vis.ok, 1);
	ck_assert_uint_eq(vis.row_ok[0], 1);
	ck_assert_str_eq(filtered("NLP"), "rows 0 1 2 / cols 0 1");
	/* A case name. */
	ck_assert_str_eq(filtered("bert"), "rows 0 1 2 / cols 1");
	/* Text on both sides filters both: "e" is in Huawei, bert-infer and resnet50. */
	ck_assert_str_eq(filtered("e"), "rows 2 / cols 1 2");
	/* Nothing matches: nothing shown, and no crash on the empty totals. */
	ck_assert_str_eq(filtered("zzz"), "rows / cols");
	ck_assert_uint_eq(vis.ok + vis.fail, 0);
	ck_assert_int_eq(vis.env_widest, 0);
}
END_TEST

START_TEST(test_filter_status)
{
	ck_assert_int_eq(xp_mx_status_word("fail"), XP_V_FAIL);
	ck_assert_int_eq(xp_mx_status_word("Stale"), XP_V_STALE);
	ck_assert_int_eq(xp_mx_status_word("untested"), XP_V_UNTESTED);
	ck_assert_int_eq(xp_mx_status_word("PASS"), XP_V_PASS);
	ck_assert_int_eq(xp_mx_status_word("fai"), -1);
	ck_assert_int_eq(xp_mx_status_word(""), -1);
	ck_assert_int_eq(xp_mx_status_word(NULL), -1);
	/* fail: the MI300X row, and the columns of its failing cells. */
	ck_assert_str_eq(filtered("fail"), "rows 1 / cols 0 1");
	ck_assert_uint_eq(vis.fail, 2);
	ck_assert_str_eq(filtered("stale"), "rows 1 / cols 2");
	/* untested: every cell but the accepted ones has some. */
	ck_assert_str_eq(filtered("untested"), "rows 0 1 2 / cols 0 1 2");
	ck_assert_str_eq(filtered("pass"), "rows 0 1 2 / cols 0 1 2");
	xp_mx_shown_free(&vis);
	unbuild(&mx);

	/* Nothing stale anywhere: nothing shown. */
	static const char *const fresh[9] = {"PPPPP", "PP...", "PPPPP", "F....", "PPPF.", ".....",
					     "PP...", "PPP..", "PPPP."};
	build(&mx, fresh);
	memset(&vis, 0, sizeof vis);
	ck_assert_str_eq(filtered("stale"), "rows / cols");
}
END_TEST

/* The caller's predicate decides a match (the console passes its own). */
static bool prefix_match(const char *text, void *arg)
{
	return text && strncasecmp(text, arg, strlen(arg)) == 0;
}

START_TEST(test_filter_predicate)
{
	xp_mx_shown_build(&vis, &mx, "a", prefix_match, "a");
	ck_assert_str_eq(shown_str(&vis, vis_text, sizeof vis_text), "rows 1 / cols 0 1 2");
	/* An empty matrix: nothing shown, nothing NULL. */
	struct xp_matrix none = {0};
	xp_mx_shown_build(&vis, &none, "", NULL, NULL);
	ck_assert_uint_eq(vis.n_rows + vis.n_cols, 0);
	ck_assert_ptr_nonnull(vis.rows);
	xp_mx_shown_build(&vis, &none, "fail", NULL, NULL);
	ck_assert_uint_eq(vis.n_rows + vis.n_cols, 0);
}
END_TEST

XP_DEFINE_SUITE(matrix_layout,
	{"marks", .tests = {test_marks, test_cell_summary}},
	{"widths", .tests = {test_truncate, test_cut_where, test_widths}},
	{"scroll", .tests = {test_fit, test_scroll_left}},
	{"filter", .setup = filter_setup, .teardown = filter_teardown,
	 .tests = {test_filter_none, test_filter_text, test_filter_status,
		   test_filter_predicate}})
