/* check_qview.c: the Queues view (view 2) end to end: a database made by the real binary's
 * commands (queues, then jobs), the console in a real terminal (tmux), keys sent and the screen
 * read back: the tree with its quota bars and counts, folding, Tab between the tree and the
 * jobs, a job's pager, a hold asked and confirmed (the store's state and audit checked after),
 * and a what-if run and a cancelled one. */
#include <check.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simgen.h"
#include "suitelib.h"
#include "testlib.h"
#include "tmuxlib.h"
#include "xp.h"

#define SIM_NODES 12
#define SIM_SEED 5

static char statedir[96]; /* this test's XDG_STATE_HOME, snapshot and database */
static char simpath[128];
static char dbpath[128];

static void setup_all(void)
{
	xp_tmux_suite_setup("qview");
}

/* Runs xpool with the NULL-terminated arguments on the test's database and snapshot; checks
 * it exits 0 and returns its output (caller frees). */
static char *xpool(const char *first, ...) __attribute__((sentinel));
static char *xpool(const char *first, ...)
{
	char *argv[40];
	int n = 0;
	argv[n++] = "--db";
	argv[n++] = dbpath;
	argv[n++] = "--inventory";
	argv[n++] = simpath;
	va_list ap;
	va_start(ap, first);
	for (const char *a = first; a && n < 38; a = va_arg(ap, const char *))
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;
	char *full[42] = {(char *)xp_bin()};
	memcpy(full + 1, argv, (size_t)(n + 1) * sizeof *argv);
	struct xp_run r;
	ck_assert_int_eq(xp_run_argv(&r, full, NULL), 0);
	ck_assert_msg(r.status == 0, "xpool %s %s: exit %d: %s", first, n > 5 ? argv[5] : "", r.status, r.err);
	char *out = r.out;
	r.out = NULL;
	xp_run_free(&r);
	return out;
}

static void setup(void)
{
	xp_tmux_test_dir(statedir, sizeof statedir);
	snprintf(simpath, sizeof simpath, "%s/sim.json", statedir);
	snprintf(dbpath, sizeof dbpath, "%s/q.db", statedir);
	struct xp_err err = {{0}};
	struct xp_sim_mix mix;
	ck_assert_msg(xp_sim_mix_parse("nvidia-h100:100", &mix, &err) == 0, "%s", err.msg);
	struct xp_cluster *c = xp_sim_generate(SIM_NODES, &mix, SIM_SEED, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	FILE *f = fopen(simpath, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_msg(xp_sim_write(c, f, &err) == 0, "%s", err.msg);
	fclose(f);
	xp_cluster_free(c);
	/* research (weight 2) holds vision and nlp; prod stands alone. */
	free(xpool("queue", "class", "add", "h100", "--vendor", "NVIDIA", "--model", "*H100*", NULL));
	free(xpool("queue", "add", "research", "--weight", "2", "--quota", "h100:devices=8/40/64", NULL));
	free(xpool("queue", "add", "vision", "--parent", "research", "--quota", "h100:devices=0/16/16", NULL));
	free(xpool("queue", "add", "nlp", "--parent", "research", "--quota", "h100:devices=0/8/-,cpu:cpus=0/64",
		   NULL));
	free(xpool("queue", "add", "prod", "--weight", "3", "--quota", "h100:devices=16/32/32", NULL));
}

static void teardown(void)
{
	xp_tmux_test_dir_done(statedir);
}

static void start(const char *lang, int cols, int rows)
{
	char cmd[8192];
	snprintf(cmd, sizeof cmd,
		 "env LANG=%s LC_ALL=%s TERM=screen-256color XDG_STATE_HOME=%s XPOOL_ACTOR=qview-tester %s "
		 "--inventory %s --db %s; echo $? > %s/rc",
		 lang, lang, statedir, xp_bin(), simpath, dbpath, statedir);
	xp_tmux_start(cmd, cols, rows);
	char nodes[32];
	snprintf(nodes, sizeof nodes, "%d nodes", SIM_NODES);
	xp_tmux_expect(nodes);
}

/* The screen row that holds text (caller frees), or aborts. */
static char *row_with(const char *screen, const char *text)
{
	const char *p = strstr(screen, text);
	ck_assert_msg(p != NULL, "no row holds \"%s\" in:\n%s", text, screen);
	const char *b = p;
	while (b > screen && b[-1] != '\n')
		b--;
	return xp_strndup(b, strcspn(b, "\n"));
}

START_TEST(tree_bars_fold)
{
	start("C.UTF-8", 120, 36);
	xp_tmux_keys("2");
	/* Top queues by name, research open with its children under it, nlp's second quota on a
	 * row of its own; no job yet: nothing used, the share free and the rest headroom. */
	char *s = xp_tmux_wait_all(10, "QUEUE", "USED/DES/MAX", "PEND", "\u25be research", "  nlp", "  vision",
				   "prod", "0/40/64", "0/16/16", "0/32/32", "cpu cpu", "0/64/-", "^Queues \u203a prod",
				   NULL);
	char *r = row_with(s, "\u25be research");
	/* 40 of 64 on the bar: free (░) then headroom (·), no use (█) nor borrowing (▓). */
	ck_assert_msg(strstr(r, "\u2591\u00b7") && !strstr(r, "\u2588") && !strstr(r, "\u2593"), "%s", r);
	ck_assert_msg(strstr(r, "w2"), "%s", r);
	free(r);
	free(s);
	/* Down to research and Enter: folded, its children gone. */
	xp_tmux_keys("Down");
	xp_tmux_expect("^Queues \u203a research");
	xp_tmux_keys("Enter");
	xp_tmux_expect_all("\u25b8 research", "!  vision", "!  nlp");
	xp_tmux_keys("Right");
	xp_tmux_expect_all("\u25be research", "  vision");
	/* Down onto nlp (two rows), Down again skips its second quota row to vision. */
	xp_tmux_keys("Down");
	xp_tmux_expect("^Queues \u203a nlp");
	xp_tmux_keys("Down");
	xp_tmux_expect("^Queues \u203a vision");
	/* Left on a leaf goes to its parent. */
	xp_tmux_keys("Left");
	xp_tmux_expect("^Queues \u203a research");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

START_TEST(ascii_narrow)
{
	/* ASCII: the fold marks and the bar's glyphs change; on 80 columns the bar, the numbers
	 * and the counts all fit (narrower tables: check_queue_layout's columns). */
	start("C", 80, 24);
	xp_tmux_keys("2");
	char *s = xp_tmux_wait_all(10, "- research", "0/40/64", "PEND", "RUN", NULL);
	char *r = row_with(s, "- research");
	ck_assert_msg(strstr(r, "-.") && !strstr(r, "#"), "%s", r);
	free(r);
	free(s);
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

XP_DEFINE_SUITE(qview,
	{"tmux", .timeout_s = 120, .setup = setup, .teardown = teardown, .setup_all = setup_all,
	 .teardown_all = xp_tmux_suite_teardown, .tests = {tree_bars_fold, ascii_narrow}})
