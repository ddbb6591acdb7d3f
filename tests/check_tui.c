/* check_tui.c: the console end to end: the real binary in a real terminal (tmux),
 * driven with send-keys and read back with capture-pane, as an operator would. */
#include <check.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checklib.h"
#include "suitelib.h"
#include "testlib.h"
#include "tmuxlib.h"
#include "xp.h"

#define WHOLEIO "hwloc/32em64t-2n8c2t-pci-wholeio.xml"

static char statedir[64]; /* XDG_STATE_HOME for the console under test (history) */

/* Starts xpool in a detached tmux session of cols x rows with the given locale and extra arguments. */
static void start(const char *lang, int cols, int rows, const char *extra)
{
	char cmd[8192];
	/* tmux runs this through sh; the exit status goes to a file, which is more
	 * dependable than the pane's dead status. */
	snprintf(cmd, sizeof cmd,
		 "env LANG=%s LC_ALL=%s TERM=screen-256color XDG_STATE_HOME=%s %s --topology %s %s; echo $? > %s/rc",
		 lang, lang, statedir, xp_bin(), xp_fixture(WHOLEIO), extra ? extra : "", statedir);
	xp_tmux_start(cmd, cols, rows);
}

static void setup(void)
{
	xp_tmux_test_socket();
	snprintf(statedir, sizeof statedir, "/tmp/xpool-tui-%d", (int)getpid());
	xp_tmux_kill_server(); /* a server a failed test left */
	char *argv[] = {"/bin/mkdir", "-p", statedir, NULL};
	struct xp_run r;
	xp_run_argv(&r, argv, NULL);
	xp_run_free(&r);
}

static void teardown(void)
{
	const char *argv[] = {"/usr/bin/tmux", "-L", xp_tmux_sock, "kill-server", NULL};
	struct xp_run r;
	xp_run_argv(&r, (char *const *)argv, NULL);
	xp_run_free(&r);
	xp_rm_rf(statedir);
}

START_TEST(frame_and_views)
{
	start("C.UTF-8", 120, 32, NULL);
	xp_tmux_expect_all("conan", "^1 node", "1 Topology", "5 Events", "$q quit");
	xp_tmux_keys("2");
	xp_tmux_expect("no queues yet: add one with `:queue add NAME");
	xp_tmux_keys("3");
	xp_tmux_expect("No dry-run yet");
	xp_tmux_keys("Tab");
	xp_tmux_expect("No workload cases yet");
	xp_tmux_keys("BTab");
	xp_tmux_expect("[ Run dry-run ]");
	xp_tmux_keys("5");
	xp_tmux_expect("node discovered");
	xp_tmux_keys("1");
	xp_tmux_expect("conan");
	xp_tmux_keys("?");
	xp_tmux_expect("Everywhere");
	xp_tmux_keys("Escape");
	xp_tmux_expect_gone("Everywhere");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

START_TEST(drill_in_and_back)
{
	start("C.UTF-8", 120, 40, NULL);
	xp_tmux_expect("conan");
	xp_tmux_keys("Enter");
	/* the node diagram and its link matrix */
	xp_tmux_expect("Package 1");
	xp_tmux_expect("PIX");
	xp_tmux_expect("0000:84:00.0");
	xp_tmux_keys("Down");
	xp_tmux_keys("Down");
	xp_tmux_keys("Enter");
	xp_tmux_expect("pci bus id");
	xp_tmux_keys("Escape");
	xp_tmux_expect_gone("pci bus id");
	xp_tmux_keys("Escape");
	xp_tmux_expect_gone("Package 1");
	xp_tmux_expect("conan");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

START_TEST(filter)
{
	start("C.UTF-8", 120, 32, NULL);
	xp_tmux_expect("conan");
	xp_tmux_keys("/");
	xp_tmux_literal("zzz-no-such");
	xp_tmux_expect_gone("conan  ");
	xp_tmux_keys("Escape");
	xp_tmux_expect("conan");
	xp_tmux_keys("/");
	xp_tmux_literal("cona");
	xp_tmux_keys("Enter");
	xp_tmux_expect("[cona]");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

START_TEST(prompt_and_theme)
{
	start("C.UTF-8", 120, 32, NULL);
	xp_tmux_expect("conan");
	xp_tmux_command("version");
	xp_tmux_expect("xpool " XP_VERSION);
	xp_tmux_command("inventory");
	xp_tmux_expect("Command output");
	xp_tmux_expect("Accelerators: 4");
	xp_tmux_keys("Escape");
	xp_tmux_expect_gone("Command output");
	xp_tmux_command("theme mono");
	xp_tmux_expect("theme mono");
	xp_tmux_command("nosuchcommand");
	xp_tmux_expect("unknown command: nosuchcommand");
	/* history: Up recalls the last line */
	xp_tmux_keys(":");
	xp_tmux_keys("Up");
	xp_tmux_expect(":nosuchcommand");
	xp_tmux_keys("C-c");
	xp_tmux_expect_gone(":nosuchcommand");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
	char hist[128];
	snprintf(hist, sizeof hist, "%s/xpool/history", statedir);
	ck_assert_msg(access(hist, R_OK) == 0, "no history file at %s", hist);
}
END_TEST

/* Tab completes what the command table says follows (subcommands, an option's values, node
 * names for --explain), and `:q` quits as in vi. */
START_TEST(prompt_completion_and_quit)
{
	start("C.UTF-8", 120, 32, NULL);
	xp_tmux_expect("conan");
	xp_tmux_keys(":");
	xp_tmux_literal("validate ");
	xp_tmux_keys("Tab");
	xp_tmux_keys("Tab");
	xp_tmux_expect_all("$matrix", "$sync", "$case");
	xp_tmux_literal("ca");
	xp_tmux_keys("Tab");
	xp_tmux_expect_all("$:validate case");
	xp_tmux_keys("C-c");
	xp_tmux_keys(":");
	xp_tmux_literal("place --dry-run --strategy sp");
	xp_tmux_keys("Tab");
	xp_tmux_expect_all("$:place --dry-run --strategy spread");
	xp_tmux_literal("--explain co");
	xp_tmux_keys("Tab");
	xp_tmux_expect_all("$--strategy spread --explain conan");
	xp_tmux_keys("C-c");
	xp_tmux_command("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

/* Writes a `sim gen` cluster of nodes nodes to statedir/name (path into inv). */
static void sim_file(char *inv, size_t len, const char *name, const char *nodes)
{
	snprintf(inv, len, "%s/%s", statedir, name);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "sim", "gen", "--nodes", nodes, "-o", inv, NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_run_free(&r);
}

/* Starts the console on the snapshot inv at cols x rows, with env's locale settings and extra
 * arguments (NULL for none). */
static void start_on(const char *env, const char *inv, const char *extra, int cols, int rows)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
		 "env %s TERM=screen-256color XDG_STATE_HOME=%s %s --db %s/x.db --inventory %s %s; echo $? > %s/rc", env,
		 statedir, xp_bin(), statedir, inv, extra ? extra : "", statedir);
	xp_tmux_start(cmd, cols, rows);
}

/* A 2,000-node cluster at 100x30, 80x24 and 200x50: the header keeps the source and whole
 * words, in the bar's colours; the wheel scrolls the map; a filter jumps to its first match
 * and says how many match; view 3's breadcrumb loses its start, not its end; the result pane
 * says what is below on its own row; `?` has the cells' legend. */
START_TEST(sizes_filter_wheel_legend)
{
	char inv[128];
	sim_file(inv, sizeof inv, "big.json", "2000");
	start_on("LANG=C.UTF-8 LC_ALL=C.UTF-8", inv, NULL, 100, 30);
	xp_tmux_expect_all("^snapshot big.json", "^2000 nodes", "^devices  ok", "h100-00001 ", "$1 of 2000");
	/* The health counts keep the header's background (no "default background" inside it). */
	char *e = xp_tmux("capture-pane", "-p", "-e", "-t", "t", NULL);
	e[strcspn(e, "\n")] = '\0';
	ck_assert_msg(strstr(e, "\033[49m") == NULL && strstr(e, "\033[0m") == NULL, "a hole in the header: %s", e);
	free(e);

	/* Two notches of the wheel (X10 reports, as tmux sends them) move the window 6 rows. */
	for (int i = 0; i < 2; i++)
		xp_tmux_do("send-keys", "-t", "t", "-H", "1b", "5b", "4d", "61", "2b", "2b", NULL);
	xp_tmux_expect_all("!h100-00001 ", "h100-00006 ", "$7 of 2000");

	/* From the end of the map, a filter jumps back to its first match and counts them. */
	xp_tmux_keys("G");
	xp_tmux_expect_all("$2000 of 2000");
	xp_tmux_keys("/");
	xp_tmux_literal("h100-0000");
	xp_tmux_expect_all("$/h100-0000", "$1 of 9 (1991 filtered from 2000)", "h100-00001 ", "h100-00009 ");
	xp_tmux_keys("Enter");
	xp_tmux_expect_all("$[h100-0000]", "$1 of 9", "h100-00001 ");
	xp_tmux_keys("Escape");

	/* 80 columns: whole words in the header; the breadcrumb keeps its end. */
	xp_tmux_resize(80, 24);
	xp_tmux_expect_all("^ big.json ", "^2000 nodes", "^13600 dev ok", "^ warn ", "^ fail ", "^ n/a ", "^s old",
			   "!h100-0000]");
	xp_tmux_keys("3");
	xp_tmux_keys("r");
	/* The other tabs shrink to their numbers, and the whole breadcrumb fits. */
	xp_tmux_expect_all("placed 1 replica", "  1   2   3 Placement   4 ", "Placement \u203a pack\n");
	/* A long result at the top: its last row says how much is below, in place of a line. */
	xp_tmux_keys("x");
	xp_tmux_literal("h100-00001");
	xp_tmux_keys("Enter");
	xp_tmux_expect("Checks for h100-00001");
	for (int i = 0; i < 12; i++)
		xp_tmux_keys("K");
	xp_tmux_expect_all("STRATEGY", "more lines (J, PgDn)");

	/* 200 columns: everything, the clock too; `?` lists the cells. */
	xp_tmux_resize(200, 50);
	xp_tmux_keys("1");
	xp_tmux_expect_all("^snapshot big.json", "^data ", "h100-00001 ");
	xp_tmux_keys("?");
	xp_tmux_expect_all("Device cells on the map", "\u00b7\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588",
			   "\u2716 ", "failed", "health warning");
	xp_tmux_keys("Escape");
	xp_tmux_command("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

/* A 300-node snapshot at 80x24, in UTF-8 and in ASCII without colour: the header keeps the
 * file's name next to every count and the age (it used to drop the source for the counts). */
START_TEST(header_80_keeps_source)
{
	char inv[128];
	sim_file(inv, sizeof inv, "s1.json", "300");
	static const char *const envs[] = {"LANG=C.UTF-8 LC_ALL=C.UTF-8", "LANG=C LC_ALL=C NO_COLOR=1"};
	for (size_t i = 0; i < 2; i++) {
		start_on(envs[i], inv, NULL, 80, 24);
		xp_tmux_expect_all("^ xpool s1.json ", "^ 300 nodes 2040 devices ok ", "^ warn ", "^ fail ", "^s old",
				   "h100-00001 ");
		xp_tmux_keys("q");
		xp_tmux_expect_exit(statedir, 0);
		xp_tmux_kill_server();
	}
}
END_TEST

/* Text cut at the right edge ends in the mark: a status message longer than the line, and the
 * node diagram's lines (Right scrolls to the rest). */
START_TEST(cut_text_has_mark)
{
	char inv[128];
	sim_file(inv, sizeof inv, "s1.json", "300");
	start_on("LANG=C.UTF-8 LC_ALL=C.UTF-8", inv, "--theme /nonexistent/a-rather-long-directory-name/and-another-one/x.theme",
		 80, 24);
	xp_tmux_expect_all("$theme: /nonexistent/a-rather-long-directory-name/", "$\u2026", "h100-00001 ");
	xp_tmux_keys("Enter");
	xp_tmux_expect_all("Machine h100-00001", "Package 0  Intel(R) Xeon(R) Platinum 8480+, 56 cores, 112 PUs, cpus 0-55,112\u2026\n");
	xp_tmux_keys("Escape");
	/* View 4's explanations too (a snapshot: what it shows is not recorded). */
	xp_tmux_keys("4");
	xp_tmux_expect_all("The cluster is read from a file: looking records nothing; :validate sync reco\u2026");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

START_TEST(resize_and_ascii)
{
	start("C", 100, 30, NULL);
	char *s = xp_tmux_wait("conan", false, 10);
	/* LANG=C: no UTF-8 in the drawing */
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		ck_assert_msg(*p < 0x80, "non-ASCII byte 0x%02x on an ASCII screen:\n%s", *p, s);
	free(s);
	xp_tmux_resize(60, 20);
	xp_tmux_expect("terminal too small");
	xp_tmux_resize(100, 30);
	xp_tmux_expect_gone("terminal too small");
	xp_tmux_expect("conan");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

START_TEST(bad_theme_and_signals)
{
	start("C.UTF-8", 120, 32, "--theme /nonexistent/x.theme");
	xp_tmux_expect("using default");
	xp_tmux_expect("conan");
	/* SIGTERM: a clean exit, the terminal given back. */
	/* The pane runs sh, which runs xpool: signal xpool itself, sh's child. */
	char *pid = xp_tmux("display-message", "-p", "-t", "t", "#{pane_pid}", NULL);
	char kids[128];
	snprintf(kids, sizeof kids, "/proc/%d/task/%d/children", atoi(pid), atoi(pid));
	FILE *f = fopen(kids, "r");
	ck_assert_msg(f != NULL, "cannot read %s", kids);
	char child[32] = "";
	ck_assert_int_eq(fscanf(f, "%31s", child), 1);
	fclose(f);
	/* kill(2) itself: a fresh Debian need not have procps's kill(1). */
	ck_assert_int_eq(kill((pid_t)atoi(child), SIGTERM), 0);
	free(pid);
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

XP_DEFINE_SUITE(tui,
	{"tmux", .timeout_s = 120, .setup = setup, .teardown = teardown,
	 .setup_all = xp_tmux_runner_setup, .teardown_all = xp_tmux_runner_teardown,
	 .tests = {frame_and_views, drill_in_and_back, filter, prompt_and_theme, prompt_completion_and_quit,
		   sizes_filter_wheel_legend, header_80_keeps_source, cut_text_has_mark, resize_and_ascii,
		   bad_theme_and_signals}})
