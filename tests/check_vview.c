/* check_vview.c: the Validation view (view 4) end to end: a database filled through
 * the API, the real binary in a real terminal (tmux), keys sent and the screen read
 * back, as an operator would. */
#include <check.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store.h"
#include "testlib.h"
#include "validate.h"
#include "xp.h"

#define WHOLEIO "hwloc/32em64t-2n8c2t-pci-wholeio.xml"
#define H100 "NVIDIA:H100:535.54.03"
#define MI300 "AMD:MI300X:6.1.0"
#define LOG_TEXT "step 1/1: scheduled\n"

static char sock[64];     /* a private tmux server per test process */
static char statedir[96]; /* XDG_STATE_HOME of the console under test, and its database */
static char dbpath[128];

/* ---- tmux (as in check_tui.c) ---- */

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
	const char *argv[] = {"/usr/bin/tmux", "-L", sock, "-f", "/dev/null", "capture-pane", "-p", "-t", "t", NULL};
	struct xp_run r;
	ck_assert_int_eq(xp_run_argv(&r, (char *const *)argv, NULL), 0);
	free(r.err);
	return r.out;
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
		if ((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9 > seconds)
			ck_abort_msg("screen %s \"%s\" after %.0f s:\n%s", absent ? "still shows" : "never showed", text,
				     seconds, s);
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

/* Starts xpool on the test's database in a detached tmux session of cols x rows. */
static void start(const char *lang, int cols, int rows)
{
	char cmd[8192], geom_x[16], geom_y[16];
	snprintf(geom_x, sizeof geom_x, "%d", cols);
	snprintf(geom_y, sizeof geom_y, "%d", rows);
	snprintf(cmd, sizeof cmd,
		 "env LANG=%s LC_ALL=%s TERM=screen-256color XDG_STATE_HOME=%s %s --topology %s --db %s; echo $? > %s/rc",
		 lang, lang, statedir, xp_bin(), xp_fixture(WHOLEIO), dbpath, statedir);
	tmux_do("new-session", "-d", "-s", "t", "-x", geom_x, "-y", geom_y, cmd, NULL);
	tmux_do("set-option", "-t", "t", "remain-on-exit", "on", NULL);
}

/* A failed check ends the test's process with _exit (fork mode), so neither its teardown nor
 * atexit runs: what a failed test leaves behind is cleaned up by the next test's setup and by
 * the tcase's unchecked teardown, which run in processes that are still alive. So the tmux
 * server and the files are named after the runner, not after the test. */
static char topdir[64];   /* /tmp/xpool-vview-RUNNER: every test's directory is inside */

static void kill_server(void)
{
	const char *argv[] = {"/usr/bin/tmux", "-L", sock, "kill-server", NULL};
	struct xp_run r;
	if (xp_run_argv(&r, (char *const *)argv, NULL) == 0)
		xp_run_free(&r);
}

static void remove_dir(const char *dir)
{
	char *argv[] = {"/bin/rm", "-rf", (char *)dir, NULL};
	struct xp_run r;
	if (dir[0] && xp_run_argv(&r, argv, NULL) == 0)
		xp_run_free(&r);
}

/* In the runner, once for the tcase. */
static void setup_all(void)
{
	snprintf(sock, sizeof sock, "xpool-vview-%d", (int)getpid());
	snprintf(topdir, sizeof topdir, "/tmp/xpool-vview-%d", (int)getpid());
}

static void teardown_all(void)
{
	kill_server();
	remove_dir(topdir);
}

/* In each test's process. */
static void setup(void)
{
	/* The server of a test that failed before this one still runs its session "t". */
	kill_server();
	snprintf(statedir, sizeof statedir, "%s/%d", topdir, (int)getpid());
	snprintf(dbpath, sizeof dbpath, "%s/v.db", statedir);
	char *argv[] = {"/bin/mkdir", "-p", statedir, NULL};
	struct xp_run r;
	xp_run_argv(&r, argv, NULL);
	xp_run_free(&r);
}

static void teardown(void)
{
	kill_server();
	remove_dir(statedir);
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

/* Presses Right until the breadcrumb ends on the case (the order of cases is the store's). */
static void select_case(const char *arrow, const char *name)
{
	char crumb[256];
	snprintf(crumb, sizeof crumb, "%s %s\n", arrow, name);
	for (int i = 0; i < 20; i++) {
		char *s = capture();
		bool there = strstr(s, crumb) != NULL;
		free(s);
		if (there)
			return;
		keys("Right");
		usleep(100 * 1000);
	}
	expect(crumb);
}

/* ---- the database ---- */

static struct xp_store *open_db(void)
{
	/* The actor is read when the store opens: the history shows it. */
	setenv("XPOOL_ACTOR", "vview-tester", 1);
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_open(dbpath, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	return s;
}

static void add_case(struct xp_store *s, const char *name, const char *team)
{
	char *entry[] = {"python3", "-c", "print(1)", NULL};
	struct xp_case c = {.name = (char *)name, .image = "registry.local/ml:1", .team = (char *)team, .entry = entry};
	struct xp_err err = {{0}};
	ck_assert_msg(xp_validate_case_add(s, &c, &err) == 0, "%s", err.msg);
}

static void declare(struct xp_store *s, const char *vendor, const char *model, const char *driver)
{
	struct xp_env e = {.vendor = (char *)vendor, .model = (char *)model, .driver = (char *)driver};
	struct xp_err err = {{0}};
	ck_assert_msg(xp_validate_env_declare(s, &e, &err) >= 0, "%s", err.msg);
}

static void record(struct xp_store *s, const char *env, const char *kase, int layer, int status, const char *note,
		   const char *log)
{
	struct xp_err err = {{0}};
	/* A node the fixture does not have: discovery must leave this evidence alone. */
	ck_assert_msg(xp_validate_record(s, env, kase, layer, status, note, log, "gpu07", &err) == 0, "%s", err.msg);
}

/* Two cases, two declared environments: H100 x llm-train discovered and schedulable (with a
 * log), MI300X x llm-train failed discovery. The log goes into the test's directory (teardown
 * removes it); its path is written into log (at least 128 bytes). */
static void fill_db(char *log)
{
	snprintf(log, 128, "%s/probe.log", statedir);
	FILE *f = fopen(log, "w");
	ck_assert_ptr_nonnull(f);
	fputs(LOG_TEXT, f);
	fclose(f);
	struct xp_store *s = open_db();
	add_case(s, "llm-train", "nlp");
	add_case(s, "resnet50-imagenet-inference", "vision");
	declare(s, "NVIDIA", "H100", "535.54.03");
	declare(s, "AMD", "MI300X", "6.1.0");
	record(s, H100, "llm-train", XP_LAYER_DISCOVERED, XP_V_PASS, "nvml sees 8 devices", NULL);
	record(s, H100, "llm-train", XP_LAYER_SCHEDULABLE, XP_V_PASS, "scheduled on gpu07 by slurm", log);
	record(s, MI300, "llm-train", XP_LAYER_DISCOVERED, XP_V_FAIL, "rocm-smi saw no device", NULL);
	xp_store_close(s);
}

/* ---- the tests ---- */

START_TEST(grid_history_filter)
{
	char log[128], sha[65];
	fill_db(log);
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_sha256_file(log, sha, &err), 0);
	sha[12] = '\0';

	start("C.UTF-8", 140, 40);
	expect("conan");
	keys("4");
	expect(H100);
	expect(MI300);
	expect("llm-train");
	/* The long case name is cut to its column, with the ellipsis. */
	expect("resnet50-imag\u2026");
	/* discovered + schedulable pass, the rest untested; a failed discovery. */
	expect("\u2713\u2713\u00b7\u00b7\u00b7");
	expect("\u2717\u00b7\u00b7\u00b7\u00b7");
	/* The legend and the totals. */
	expect("\u2713 pass");
	expect("\u2717 fail");
	expect("~ stale");
	expect("any fail");

	/* A vendor filter keeps that environment and every case. */
	keys("/");
	literal("H100");
	keys("Enter");
	expect_gone(MI300);
	expect("resnet50-imag");
	select_case("\u203a", "llm-train");
	expect("Validation \u203a " H100 " \u203a llm-train");

	/* The evidence, newest first: schedulable above discovered. */
	keys("Enter");
	expect("scheduled on gpu07 by slurm");
	expect("nvml sees 8 devices");
	expect("vview-tester");
	expect(sha);
	expect("schedulable  \u2713 pass");
	char *s = wait_screen("nvml sees", false, 10);
	const char *newer = strstr(s, "scheduled on gpu07"), *older = strstr(s, "nvml sees");
	ck_assert_msg(newer && older && newer < older, "not newest first:\n%s", s);
	free(s);

	keys("Escape");
	expect_gone("scheduled on gpu07 by slurm");
	expect("\u2713\u2713\u00b7\u00b7\u00b7");
	/* Esc again clears the filter. */
	keys("Escape");
	expect(MI300);

	/* A status word keeps what has a layer in that status. */
	keys("/");
	literal("fail");
	keys("Enter");
	expect_gone(H100);
	expect_gone("resnet50-imag");
	expect(MI300);
	expect("\u2717\u00b7\u00b7\u00b7\u00b7");
	keys("q");
	expect_exit(0);
}
END_TEST

START_TEST(ascii_marks)
{
	char log[128];
	fill_db(log);
	start("C", 120, 32);
	expect("conan");
	keys("4");
	expect("PP...");
	expect("F....");
	expect("P pass");
	expect("F fail");
	expect(". untested");
	expect("S stale");
	/* LANG=C: no UTF-8 anywhere on the screen, the cut name included. */
	char *s = wait_screen("resnet50-imag~", false, 10);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		ck_assert_msg(*p < 0x80, "non-ASCII byte 0x%02x on an ASCII screen:\n%s", *p, s);
	free(s);
	expect("Validation > ");
	keys("q");
	expect_exit(0);
}
END_TEST

START_TEST(empty_database)
{
	start("C.UTF-8", 120, 32);
	expect("conan");
	keys("4");
	expect("No workload cases yet");
	expect(":validate case add NAME --image IMAGE --entry \"CMD ARGS\"");
	expect("Environments come from discovery");
	/* Enter on nothing opens nothing. */
	keys("Enter");
	expect("No workload cases yet");
	keys("q");
	expect_exit(0);
}
END_TEST

START_TEST(scrolling)
{
	struct xp_store *s = open_db();
	char name[64], model[64];
	for (int i = 0; i < 12; i++) {
		snprintf(name, sizeof name, "case-%02d", i);
		add_case(s, name, "bench");
	}
	for (int i = 0; i < 40; i++) {
		snprintf(model, sizeof model, "Model-%02d", i);
		declare(s, "Vendor", model, "1.0");
	}
	xp_store_close(s);
	start("C.UTF-8", 80, 24);
	expect("conan");
	keys("4");
	expect("Vendor:Model-00:1.0");
	expect("case-00");
	/* Neither the last environment nor the last case fits. */
	char *scr = capture();
	ck_assert_ptr_null(strstr(scr, "Vendor:Model-39:1.0"));
	ck_assert_ptr_null(strstr(scr, "case-11"));
	free(scr);
	keys("End");
	expect("Vendor:Model-39:1.0");
	expect_gone("Vendor:Model-00:1.0");
	keys("$");
	expect("case-11");
	expect_gone("case-00 ");
	/* 80 columns keep the end of the breadcrumb. */
	expect("\u203a case-11\n");
	keys("Home");
	expect("Vendor:Model-00:1.0");
	keys("0");
	expect("case-00");
	keys("PPage");
	keys("NPage");
	expect_gone("Vendor:Model-00:1.0");
	keys("Left");
	keys("Up");
	/* A cell with no evidence says how to add some. */
	keys("Enter");
	expect("no evidence recorded");
	keys("Escape");
	expect_gone("no evidence recorded");
	/* The view's keys are in the help. */
	keys("?");
	expect("/fail /stale");
	keys("Escape");
	keys("q");
	expect_exit(0);
}
END_TEST

Suite *xp_suite_vview(void);
Suite *xp_suite_vview(void)
{
	Suite *s = suite_create("vview");
	TCase *tc = tcase_create("tmux");
	tcase_add_unchecked_fixture(tc, setup_all, teardown_all);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, grid_history_filter);
	tcase_add_test(tc, ascii_marks);
	tcase_add_test(tc, empty_database);
	tcase_add_test(tc, scrolling);
	suite_add_tcase(s, tc);
	return s;
}
