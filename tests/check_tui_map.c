/* check_tui_map.c: view 1's figures end to end, in a real terminal (tmux): the columns that
 * fit 200 and 80 columns, sorting both ways, folding groups, a row per device, views as
 * command strings (`:view`, the status line, `xpool --view`), bookmarks, and `xpool view` in
 * batch (text and JSON) on real recorded vendor output (npu-smi of an Atlas 800). */
#include <check.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "checklib.h"
#include "suitelib.h"
#include "testlib.h"
#include "tmuxlib.h"
#include "xp.h"

static char dir[128], inv[192], cfg[192];

static void suite_setup(void)
{
	xp_tmux_suite_setup("tui_map");
}

static void setup(void)
{
	xp_tmux_test_dir(dir, sizeof dir);
	snprintf(inv, sizeof inv, "%s/sim.json", dir);
	snprintf(cfg, sizeof cfg, "%s/cfg", dir);
}

static void teardown(void)
{
	xp_tmux_test_dir_done(dir);
}

/* stdout of xpool ARGS... (caller frees); the exit status must be status. */
static char *run(int status, ...)
{
	va_list ap;
	va_start(ap, status);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpoolv(&r, NULL, ap), 0);
	va_end(ap);
	ck_assert_msg(r.status == status, "exit %d, wanted %d: %.300s%.2000s", r.status, status, r.out, r.err);
	char *out = r.status == 0 ? r.out : r.err;
	if (r.status == 0)
		free(r.err);
	else
		free(r.out);
	return out;
}

/* A sim cluster of 40 nodes (real-looking figures: utilization, memory, temperature, power). */
static void sim(void)
{
	free(run(0, "sim", "gen", "--nodes", "40", "-o", inv, NULL));
}

/* Starts the console on the sim cluster with extra arguments (NULL: none). */
static void start(const char *extra, int cols, int rows)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
		 "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color XDG_STATE_HOME=%s XDG_CONFIG_HOME=%s %s --db %s/x.db "
		 "--inventory %s %s; echo $? > %s/rc",
		 dir, cfg, xp_bin(), dir, inv, extra ? extra : "", dir);
	xp_tmux_start(cmd, cols, rows);
}

/* The first word of the first node row under the column heading of a screen (a copy). */
static char *first_row_word(const char *screen)
{
	const char *h = strstr(screen, "DEVICES");
	ck_assert_ptr_nonnull(h);
	const char *l = strchr(h, '\n');
	ck_assert_ptr_nonnull(l);
	l++;
	l += strspn(l, " ");
	return xp_strndup(l, strcspn(l, " \n"));
}

/* The first node of `xpool view topology ARGS` in batch (its first row after the heading). */
static char *batch_first(const char *sort)
{
	char *out = run(0, "--inventory", inv, "view", "topology", "--group", "none", "--sort", sort, NULL);
	const char *l = strchr(out, '\n');
	ck_assert_ptr_nonnull(l);
	char *w = xp_strndup(l + 1, strcspn(l + 1, " \n"));
	free(out);
	return w;
}

START_TEST(columns_fit_width)
{
	sim();
	start(NULL, 200, 50);
	/* 200 wide: every figure, the NIC speeds as operators read them, the model and the CPU. */
	xp_tmux_expect_all("NODE", "HEALTH", "FREE", "UTIL", "MEM", "TEMP", "POWER", "ECC", "MODEL", "NET", "CPU",
			   "DEVICES", "2x400 Gb/s", "H100 SXM 80GB", "/640G", "free ", " kW");
	char *s = xp_tmux_capture();
	/* No big empty area: a node row reaches past column 130 (the cells' end). */
	const char *row = strstr(s, "h100-00001");
	ck_assert_ptr_nonnull(row);
	const char *end = strchr(row, '\n');
	int last = 0;
	for (const char *p = row; p < end; p++)
		if (*p != ' ')
			last = (int)(p - row);
	ck_assert_msg(last > 110, "row ends at %d: %.*s", last, (int)(end - row), row);
	free(s);
	/* 80 wide: the essentials, not the extras. */
	xp_tmux_resize(80, 24);
	xp_tmux_expect_all("NODE", "STATE", "FREE", "UTIL", "TEMP", "h100-00001", "!NET", "!CPU", "!MODEL", "!2x400");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
}
END_TEST

START_TEST(sort_both_ways)
{
	sim();
	char *hot = batch_first("temp-"), *cool = batch_first("temp");
	ck_assert_str_ne(hot, cool);
	start(NULL, 200, 50);
	xp_tmux_expect("h100-00001");
	/* No groups: the whole fleet in one order. */
	xp_tmux_keys("=");
	xp_tmux_expect("grouped by none");
	xp_tmux_keys("T");
	xp_tmux_expect_all("sorted by temp, descending", "TEMP\xe2\x86\x93");
	char *s = xp_tmux_capture(), *w = first_row_word(s);
	ck_assert_msg(strcmp(w, hot) == 0, "first %s, hottest %s:\n%s", w, hot, s);
	free(w);
	free(s);
	xp_tmux_keys("I");
	xp_tmux_expect_all("sorted by temp, ascending", "TEMP\xe2\x86\x91");
	s = xp_tmux_capture();
	w = first_row_word(s);
	ck_assert_msg(strcmp(w, cool) == 0, "first %s, coolest %s:\n%s", w, cool, s);
	free(w);
	free(s);
	/* T again: the other way round (k9s); > the next column. */
	xp_tmux_keys("T");
	xp_tmux_expect("sorted by temp, descending");
	xp_tmux_keys(">");
	xp_tmux_expect_all("sorted by power, descending", "POWER\xe2\x86\x93");
	xp_tmux_keys("<");
	xp_tmux_expect("sorted by temp, descending");
	free(hot);
	free(cool);
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
}
END_TEST

START_TEST(fold_and_expand)
{
	sim();
	start(NULL, 200, 50);
	xp_tmux_expect_all("\xe2\x96\xbe zone zone00 / rack rack0000 / switch tor0000  10 nodes", "h100-00003");
	/* The cursor starts on the first heading: - folds it, its nodes go, the totals stay. */
	xp_tmux_keys("-");
	xp_tmux_expect_all("\xe2\x96\xb8 zone zone00 / rack rack0000 / switch tor0000  10 nodes  free ", "!h100-00003",
			   "h800-00011");
	xp_tmux_keys("+");
	xp_tmux_expect("h100-00003");
	xp_tmux_keys("*");
	xp_tmux_expect_all("folded every group", "!h100-00003", "!h800-00011");
	xp_tmux_keys("*");
	xp_tmux_expect_all("unfolded every group", "h100-00003");
	/* A row per device, with its own figures. */
	xp_tmux_keys("j");
	xp_tmux_keys("e");
	xp_tmux_expect_all("a row per device", "ACC0", "ACC7", "/80G");
	/* Enter on a device row opens that device. */
	xp_tmux_keys("j");
	xp_tmux_keys("Enter");
	xp_tmux_expect_all("ACC0", "temperature", "power");
	xp_tmux_keys("Escape");
	xp_tmux_keys("Escape");
	xp_tmux_keys("e");
	xp_tmux_expect_gone("ACC7");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
}
END_TEST

START_TEST(view_command_string)
{
	sim();
	char *hot = batch_first("power-");
	/* --view opens the console there, and the status line says so. */
	start("--view 'topology --sort power- --group none'", 200, 50);
	/* The heading and status line are drawn before the first load: wait for the rows too. */
	xp_tmux_expect_all("$view topology --sort power- --group none", "POWER\xe2\x86\x93", hot);
	char *s = xp_tmux_capture(), *w = first_row_word(s);
	ck_assert_msg(strcmp(w, hot) == 0, "first %s, top power %s", w, hot);
	free(w);
	free(s);
	/* At the prompt: another view, then back with a filter and a grouping. */
	xp_tmux_command("view events");
	xp_tmux_expect_all("$view events");
	xp_tmux_command("view topology --filter h800 --sort temp- --group rack");
	xp_tmux_expect_all("$view topology --filter 'h800' --sort temp- --group rack", "h800-00011", "!h100-00001",
			   "zone zone00 / rack rack0001  4 nodes");
	/* The filter language, at the prompt and in batch: the same rows. */
	xp_tmux_command("view topology --filter 'temp>85' --group none");
	xp_tmux_expect_all("$view topology --filter 'temp>85' --sort temp- --group none", "h100-00003", "mi300x-00032",
			   "!h800-00011");
	char *out = run(0, "--inventory", inv, "view", "topology", "--filter", "temp>85", NULL);
	xp_want_parts(out, "h100-00003", "mi300x-00032", NULL);
	ck_assert_ptr_null(strstr(out, "h800-00011"));
	free(out);
	out = run(2, "--inventory", inv, "view", "topology", "--filter", "tmp>85", NULL);
	xp_want_parts(out, "column 1", "unknown field 'tmp'", NULL);
	free(out);
	/* A bad option says why and changes nothing. */
	xp_tmux_command("view topology --sort tmp");
	xp_tmux_expect("unknown column 'tmp'");
	xp_tmux_command("view nosuch");
	xp_tmux_expect("no view 'nosuch'");
	free(hot);
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
}
END_TEST

START_TEST(bookmarks)
{
	sim();
	char path[256];
	snprintf(path, sizeof path, "%s/xpool/bookmarks", cfg);
	start(NULL, 200, 50);
	xp_tmux_expect("h100-00001");
	/* Looking writes nothing. */
	struct stat st;
	ck_assert_int_ne(stat(cfg, &st), 0);
	xp_tmux_command("view topology --sort util- --group zone");
	xp_tmux_expect_all("$view topology --sort util- --group zone");
	xp_tmux_command("bookmark save busy");
	xp_tmux_expect("bookmark busy: topology --sort util- --group zone");
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	char d[256];
	snprintf(d, sizeof d, "%s/xpool", cfg);
	ck_assert_int_eq(stat(d, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	xp_tmux_command("view topology --sort none --group switch");
	xp_tmux_expect_all("$view topology", "!UTIL\xe2\x86\x93", "zone zone00 / rack rack0000 / switch tor0000");
	xp_tmux_command("bookmark busy");
	xp_tmux_expect_all("$view topology --sort util- --group zone", "UTIL\xe2\x86\x93");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);

	/* The same file from the command line; a malformed line is an error naming file:line. */
	char *env_cfg = xp_asprintf("XDG_CONFIG_HOME=%s", cfg);
	putenv(env_cfg);
	char *out = run(0, "bookmark", "list", NULL);
	ck_assert_ptr_nonnull(strstr(out, "busy"));
	ck_assert_ptr_nonnull(strstr(out, "topology --sort util- --group zone"));
	free(out);
	FILE *f = fopen(path, "a");
	ck_assert_ptr_nonnull(f);
	fputs("lonely\n", f);
	fclose(f);
	out = run(1, "bookmark", "list", NULL);
	char want[300];
	snprintf(want, sizeof want, "%s:3: bookmark lonely has no view", path);
	ck_assert_msg(strstr(out, want) != NULL, "%s", out);
	free(out);
}
END_TEST

START_TEST(batch_text_and_json)
{
	/* Real recorded output: npu-smi of an Atlas 800 (8x Ascend 910A). */
	char *node = xp_assemble(dir, "node7", "ascend/npu-smi-info_atlas800-9010_8x910A_24.1.RC2.txt",
				 "npu-smi-info.txt",
				 "ascend/npu-smi-info-m_atlas800-9010_8x910A_24.1.RC2.txt", "npu-smi-info-m.txt",
				 NULL);
	char *out = run(0, "--replay", node, "view", "topology", "--mode", "expanded", NULL);
	/* The figures npu-smi printed: the hottest NPU 42 C, 825 W in all, 32 GB each. */
	xp_want_parts(out, "NODE", "TEMP", "POWER", "node7", "8/8", "42C", "825W", "0M/256G", "ACC7", "0M/32G",
		      "203W", NULL);
	free(out);
	out = run(0, "--replay", node, "--json", "view", "topology", "--sort", "temp-", NULL);
	json_error_t je;
	json_t *doc = json_loads(out, 0, &je);
	ck_assert_msg(doc != NULL, "%s: %s", je.text, out);
	ck_assert_str_eq(json_string_value(json_object_get(doc, "command")), "topology --sort temp-");
	json_t *row = json_array_get(json_object_get(json_array_get(json_object_get(doc, "groups"), 0), "rows"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(row, "node")), "node7");
	ck_assert_double_eq_tol(json_real_value(json_object_get(row, "temp_c")), 42, 1e-9);
	ck_assert_double_eq_tol(json_number_value(json_object_get(row, "power_w")), 825, 1.0);
	ck_assert_int_eq(json_integer_value(json_object_get(row, "devices")), 8);
	ck_assert_int_eq(json_integer_value(json_object_get(row, "mem_total_mib")), 8 * 32768);
	/* ECC: npu-smi said nothing of it: null, not 0. */
	ck_assert(json_is_null(json_object_get(row, "ecc_uncorrected")));
	json_decref(doc);
	free(out);
	/* A bad sort column is a usage error that names the columns. */
	out = run(2, "--replay", node, "view", "topology", "--sort", "hot", NULL);
	xp_want_parts(out, "unknown column 'hot'", "temp", NULL);
	free(out);
	/* --view without a terminal prints the view. */
	out = run(0, "--replay", node, "--view", "topology --sort power-", NULL);
	xp_want_parts(out, "node7", "825W", NULL);
	free(out);
	free(node);
}
END_TEST

XP_DEFINE_SUITE(tui_map,
	{"tmux", .timeout_s = 120, .setup = setup, .teardown = teardown, .setup_all = suite_setup,
	 .teardown_all = xp_tmux_suite_teardown,
	 .tests = {columns_fit_width, sort_both_ways, fold_and_expand, view_command_string, bookmarks,
		   batch_text_and_json}})
