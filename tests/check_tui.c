/* check_tui.c: the console end to end: the real binary in a real terminal (tmux),
 * driven with send-keys and read back with capture-pane, as an operator would. */
#include <check.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "xp.h"

#define WHOLEIO "hwloc/32em64t-2n8c2t-pci-wholeio.xml"

static char sock[64];     /* a private tmux server per test process */
static char statedir[64]; /* XDG_STATE_HOME for the console under test (history) */

/* Runs tmux with the private socket and the given arguments; returns its output (caller frees). */
static char *tmux(const char *first, ...)
{
	const char *argv[32] = {"/usr/bin/tmux", "-L", sock, "-f", "/dev/null"};
	int n = 5;
	va_list ap;
	va_start(ap, first);
	for (const char *a = first; a && n < 31; a = va_arg(ap, const char *))
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	struct xp_run r;
	ck_assert_int_eq(xp_run_argv(&r, (char *const *)argv, NULL), 0);
	char *out = r.out;
	free(r.err);
	return out;
}

static void tmux_do(const char *first, ...)
{
	const char *argv[32] = {"/usr/bin/tmux", "-L", sock, "-f", "/dev/null"};
	int n = 5;
	va_list ap;
	va_start(ap, first);
	for (const char *a = first; a && n < 31; a = va_arg(ap, const char *))
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	struct xp_run r;
	ck_assert_int_eq(xp_run_argv(&r, (char *const *)argv, NULL), 0);
	xp_run_free(&r);
}

static char *capture(void)
{
	return tmux("capture-pane", "-p", "-t", "t", NULL);
}

/* Waits until the screen holds text (or, with absent, until it does not); returns the screen. */
static char *wait_screen(const char *text, bool absent, double seconds)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		char *s = capture();
		bool has = strstr(s, text) != NULL;
		if (has != absent)
			return s;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if ((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9 > seconds) {
			ck_abort_msg("screen %s \"%s\" after %.0f s:\n%s", absent ? "still shows" : "never showed",
				     text, seconds, s);
		}
		free(s);
		usleep(50 * 1000);
	}
}

static void expect(const char *text)
{
	free(wait_screen(text, false, 10));
}

static void expect_gone(const char *text)
{
	free(wait_screen(text, true, 10));
}

static void keys(const char *k)
{
	tmux_do("send-keys", "-t", "t", k, NULL);
}

static void literal(const char *text)
{
	tmux_do("send-keys", "-t", "t", "-l", text, NULL);
}

/* Starts xpool in a detached tmux session of cols x rows with the given locale and extra arguments. */
static void start(const char *lang, int cols, int rows, const char *extra)
{
	char cmd[8192], geom_x[16], geom_y[16];
	snprintf(geom_x, sizeof geom_x, "%d", cols);
	snprintf(geom_y, sizeof geom_y, "%d", rows);
	/* tmux runs this through sh; the exit status goes to a file, which is more
	 * dependable than the pane's dead status. */
	snprintf(cmd, sizeof cmd,
		 "env LANG=%s LC_ALL=%s TERM=screen-256color XDG_STATE_HOME=%s %s --topology %s %s; echo $? > %s/rc",
		 lang, lang, statedir, xp_bin(), xp_fixture(WHOLEIO), extra ? extra : "", statedir);
	tmux_do("new-session", "-d", "-s", "t", "-x", geom_x, "-y", geom_y, cmd, NULL);
	tmux_do("set-option", "-t", "t", "remain-on-exit", "on", NULL);
}

static void kill_server(void)
{
	const char *argv[] = {"/usr/bin/tmux", "-L", sock, "kill-server", NULL};
	struct xp_run r;
	if (xp_run_argv(&r, (char *const *)argv, NULL) == 0)
		xp_run_free(&r);
}

static void setup(void)
{
	/* Named after the runner (the parent of each forked test), so one teardown in the
	 * runner can remove whatever a failed test left behind. */
	snprintf(sock, sizeof sock, "xpool-test-%d", (int)getppid());
	snprintf(statedir, sizeof statedir, "/tmp/xpool-tui-%d", (int)getpid());
	kill_server(); /* a server a failed test left */
	char *argv[] = {"/bin/mkdir", "-p", statedir, NULL};
	struct xp_run r;
	xp_run_argv(&r, argv, NULL);
	xp_run_free(&r);
}

static void teardown(void)
{
	const char *argv[] = {"/usr/bin/tmux", "-L", sock, "kill-server", NULL};
	struct xp_run r;
	xp_run_argv(&r, (char *const *)argv, NULL);
	xp_run_free(&r);
	char *rm[] = {"/bin/rm", "-rf", statedir, NULL};
	xp_run_argv(&r, rm, NULL);
	xp_run_free(&r);
}

/* Waits for xpool to exit and checks its exit code. */
static void expect_exit(int code)
{
	char path[128];
	snprintf(path, sizeof path, "%s/rc", statedir);
	for (int i = 0; i < 200; i++) {
		FILE *f = fopen(path, "r");
		int st = -1;
		if (f) {
			int got = fscanf(f, "%d", &st);
			fclose(f);
			if (got == 1) {
				ck_assert_int_eq(st, code);
				return;
			}
		}
		usleep(50 * 1000);
	}
	char *screen = capture();
	ck_abort_msg("xpool did not exit; the screen:\n%s", screen);
}

START_TEST(frame_and_views)
{
	start("C.UTF-8", 120, 32, NULL);
	char *s = wait_screen("conan", false, 10);
	ck_assert_ptr_nonnull(strstr(s, "1 node"));
	ck_assert_ptr_nonnull(strstr(s, "1 Topology"));
	ck_assert_ptr_nonnull(strstr(s, "5 Events"));
	ck_assert_ptr_nonnull(strstr(s, "q quit"));
	free(s);
	keys("2");
	expect("Queues: not built yet");
	keys("3");
	expect("xpool place --dry-run");
	keys("Tab");
	expect("No workload cases yet");
	keys("BTab");
	expect("Placement: not built yet");
	keys("5");
	expect("node discovered");
	keys("1");
	expect("conan");
	keys("?");
	expect("Everywhere");
	keys("Escape");
	expect_gone("Everywhere");
	keys("q");
	expect_exit(0);
}
END_TEST

START_TEST(drill_in_and_back)
{
	start("C.UTF-8", 120, 40, NULL);
	expect("conan");
	keys("Enter");
	/* the node diagram and its link matrix */
	expect("Package 1");
	expect("PIX");
	expect("0000:84:00.0");
	keys("Down");
	keys("Down");
	keys("Enter");
	expect("pci bus id");
	keys("Escape");
	expect_gone("pci bus id");
	keys("Escape");
	expect_gone("Package 1");
	expect("conan");
	keys("q");
	expect_exit(0);
}
END_TEST

START_TEST(filter)
{
	start("C.UTF-8", 120, 32, NULL);
	expect("conan");
	keys("/");
	literal("zzz-no-such");
	expect_gone("conan  ");
	keys("Escape");
	expect("conan");
	keys("/");
	literal("cona");
	keys("Enter");
	expect("[cona]");
	keys("q");
	expect_exit(0);
}
END_TEST

START_TEST(prompt_and_theme)
{
	start("C.UTF-8", 120, 32, NULL);
	expect("conan");
	keys(":");
	literal("version");
	keys("Enter");
	expect("xpool " XP_VERSION);
	keys(":");
	literal("inventory");
	keys("Enter");
	expect("Command output");
	expect("Accelerators: 4");
	keys("Escape");
	expect_gone("Command output");
	keys(":");
	literal("theme mono");
	keys("Enter");
	expect("theme mono");
	keys(":");
	literal("nosuchcommand");
	keys("Enter");
	expect("unknown command: nosuchcommand");
	/* history: Up recalls the last line */
	keys(":");
	keys("Up");
	expect(":nosuchcommand");
	keys("C-c");
	expect_gone(":nosuchcommand");
	keys("q");
	expect_exit(0);
	char hist[128];
	snprintf(hist, sizeof hist, "%s/xpool/history", statedir);
	ck_assert_msg(access(hist, R_OK) == 0, "no history file at %s", hist);
}
END_TEST

START_TEST(resize_and_ascii)
{
	start("C", 100, 30, NULL);
	char *s = wait_screen("conan", false, 10);
	/* LANG=C: no UTF-8 in the drawing */
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		ck_assert_msg(*p < 0x80, "non-ASCII byte 0x%02x on an ASCII screen:\n%s", *p, s);
	free(s);
	tmux_do("resize-window", "-t", "t", "-x", "60", "-y", "20", NULL);
	expect("terminal too small");
	tmux_do("resize-window", "-t", "t", "-x", "100", "-y", "30", NULL);
	expect_gone("terminal too small");
	expect("conan");
	keys("q");
	expect_exit(0);
}
END_TEST

START_TEST(bad_theme_and_signals)
{
	start("C.UTF-8", 120, 32, "--theme /nonexistent/x.theme");
	expect("using default");
	expect("conan");
	/* SIGTERM: a clean exit, the terminal given back. */
	/* The pane runs sh, which runs xpool: signal xpool itself, sh's child. */
	char *pid = tmux("display-message", "-p", "-t", "t", "#{pane_pid}", NULL);
	char kids[128];
	snprintf(kids, sizeof kids, "/proc/%d/task/%d/children", atoi(pid), atoi(pid));
	FILE *f = fopen(kids, "r");
	ck_assert_msg(f != NULL, "cannot read %s", kids);
	char child[32] = "";
	ck_assert_int_eq(fscanf(f, "%31s", child), 1);
	fclose(f);
	char *argv[] = {"/bin/kill", "-TERM", child, NULL};
	struct xp_run r;
	xp_run_argv(&r, argv, NULL);
	xp_run_free(&r);
	free(pid);
	expect_exit(0);
}
END_TEST

/* Runs in the runner itself, around all the tests. */
static void runner_setup(void)
{
	snprintf(sock, sizeof sock, "xpool-test-%d", (int)getpid());
}

static void runner_teardown(void)
{
	snprintf(sock, sizeof sock, "xpool-test-%d", (int)getpid());
	kill_server();
}

Suite *xp_suite_tui(void);
Suite *xp_suite_tui(void)
{
	Suite *s = suite_create("tui");
	TCase *tc = tcase_create("tmux");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_unchecked_fixture(tc, runner_setup, runner_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, frame_and_views);
	tcase_add_test(tc, drill_in_and_back);
	tcase_add_test(tc, filter);
	tcase_add_test(tc, prompt_and_theme);
	tcase_add_test(tc, resize_and_ascii);
	tcase_add_test(tc, bad_theme_and_signals);
	suite_add_tcase(s, tc);
	return s;
}
