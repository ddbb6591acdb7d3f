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
#include "suitelib.h"
#include "testlib.h"
#include "tmuxlib.h"
#include "validate.h"
#include "xp.h"

#define WHOLEIO "hwloc/32em64t-2n8c2t-pci-wholeio.xml"
#define H100 "NVIDIA:H100:535.54.03"
#define MI300 "AMD:MI300X:6.1.0"
#define LOG_TEXT "step 1/1: scheduled\n"

static char statedir[96]; /* XDG_STATE_HOME of the console under test, and its database */
static char dbpath[128];

/* Starts xpool on the test's database in a detached tmux session of cols x rows. */
static void start(const char *lang, int cols, int rows)
{
	char cmd[8192];
	snprintf(cmd, sizeof cmd,
		 "env LANG=%s LC_ALL=%s TERM=screen-256color XDG_STATE_HOME=%s %s --topology %s --db %s; echo $? > %s/rc",
		 lang, lang, statedir, xp_bin(), xp_fixture(WHOLEIO), dbpath, statedir);
	xp_tmux_start(cmd, cols, rows);
}

/* Files and server are named after the runner (see tmuxlib.h). In the runner, once for the tcase. */
static void setup_all(void)
{
	xp_tmux_suite_setup("vview");
}

/* In each test's process. */
static void setup(void)
{
	xp_tmux_test_dir(statedir, sizeof statedir);
	snprintf(dbpath, sizeof dbpath, "%s/v.db", statedir);
}

static void teardown(void)
{
	xp_tmux_test_dir_done(statedir);
}

/* Presses Right until the breadcrumb ends on the case (the order of cases is the store's). */
static void select_case(const char *arrow, const char *name)
{
	char crumb[256];
	snprintf(crumb, sizeof crumb, "%s %s\n", arrow, name);
	for (int i = 0; i < 20; i++) {
		char *s = xp_tmux_capture();
		bool there = strstr(s, crumb) != NULL;
		free(s);
		if (there)
			return;
		xp_tmux_keys("Right");
		usleep(100 * 1000);
	}
	xp_tmux_expect(crumb);
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
	xp_tmux_expect("conan");
	xp_tmux_keys("4");
	xp_tmux_expect(H100);
	xp_tmux_expect(MI300);
	xp_tmux_expect("llm-train");
	/* The long case name is cut to its column, with the ellipsis. */
	xp_tmux_expect("resnet50-imag\u2026");
	/* discovered + schedulable pass, the rest untested; a failed discovery. */
	xp_tmux_expect("\u2713\u2713\u00b7\u00b7\u00b7");
	xp_tmux_expect("\u2717\u00b7\u00b7\u00b7\u00b7");
	/* The legend and the totals. */
	xp_tmux_expect("\u2713 pass");
	xp_tmux_expect("\u2717 fail");
	xp_tmux_expect("~ stale");
	xp_tmux_expect("any fail");

	/* A vendor filter keeps that environment and every case. */
	xp_tmux_keys("/");
	xp_tmux_literal("H100");
	xp_tmux_keys("Enter");
	xp_tmux_expect_gone(MI300);
	xp_tmux_expect("resnet50-imag");
	select_case("\u203a", "llm-train");
	xp_tmux_expect("Validation \u203a " H100 " \u203a llm-train");

	/* The evidence, newest first: schedulable above discovered. */
	xp_tmux_keys("Enter");
	xp_tmux_expect("scheduled on gpu07 by slurm");
	xp_tmux_expect("nvml sees 8 devices");
	xp_tmux_expect("vview-tester");
	xp_tmux_expect(sha);
	xp_tmux_expect("schedulable  \u2713 pass");
	char *s = xp_tmux_wait_all(10, "scheduled on gpu07", "nvml sees", NULL);
	const char *newer = strstr(s, "scheduled on gpu07"), *older = strstr(s, "nvml sees");
	ck_assert_msg(newer && older && newer < older, "not newest first:\n%s", s);
	free(s);

	xp_tmux_keys("Escape");
	xp_tmux_expect_gone("scheduled on gpu07 by slurm");
	xp_tmux_expect("\u2713\u2713\u00b7\u00b7\u00b7");
	/* Esc again clears the filter. */
	xp_tmux_keys("Escape");
	xp_tmux_expect(MI300);

	/* A status word keeps what has a layer in that status. */
	xp_tmux_keys("/");
	xp_tmux_literal("fail");
	xp_tmux_keys("Enter");
	xp_tmux_expect_gone(H100);
	xp_tmux_expect_gone("resnet50-imag");
	xp_tmux_expect(MI300);
	xp_tmux_expect("\u2717\u00b7\u00b7\u00b7\u00b7");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

START_TEST(ascii_marks)
{
	char log[128];
	fill_db(log);
	start("C", 120, 32);
	xp_tmux_expect("conan");
	xp_tmux_keys("4");
	xp_tmux_expect("PP...");
	xp_tmux_expect("F....");
	xp_tmux_expect("P pass");
	xp_tmux_expect("F fail");
	xp_tmux_expect(". untested");
	xp_tmux_expect("S stale");
	/* LANG=C: no UTF-8 anywhere on the screen, the cut name included. */
	char *s = xp_tmux_wait("resnet50-imag~", false, 10);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		ck_assert_msg(*p < 0x80, "non-ASCII byte 0x%02x on an ASCII screen:\n%s", *p, s);
	free(s);
	xp_tmux_expect("Validation > ");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

START_TEST(empty_database)
{
	start("C.UTF-8", 120, 32);
	xp_tmux_expect("conan");
	xp_tmux_keys("4");
	xp_tmux_expect("No workload cases yet");
	xp_tmux_expect(":validate case add NAME --image IMAGE --entry \"CMD ARGS\"");
	xp_tmux_expect("Environments come from discovery");
	/* Enter on nothing opens nothing. */
	xp_tmux_keys("Enter");
	xp_tmux_expect("No workload cases yet");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
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
	xp_tmux_expect("conan");
	xp_tmux_keys("4");
	xp_tmux_expect("Vendor:Model-00:1.0");
	xp_tmux_expect("case-00");
	/* Neither the last environment nor the last case fits. */
	char *scr = xp_tmux_capture();
	ck_assert_ptr_null(strstr(scr, "Vendor:Model-39:1.0"));
	ck_assert_ptr_null(strstr(scr, "case-11"));
	free(scr);
	xp_tmux_keys("End");
	xp_tmux_expect("Vendor:Model-39:1.0");
	xp_tmux_expect_gone("Vendor:Model-00:1.0");
	xp_tmux_keys("$");
	xp_tmux_expect("case-11");
	xp_tmux_expect_gone("case-00 ");
	/* 80 columns keep the end of the breadcrumb. */
	xp_tmux_expect("\u203a case-11\n");
	xp_tmux_keys("Home");
	xp_tmux_expect("Vendor:Model-00:1.0");
	xp_tmux_keys("0");
	xp_tmux_expect("case-00");
	xp_tmux_keys("PPage");
	xp_tmux_keys("NPage");
	xp_tmux_expect_gone("Vendor:Model-00:1.0");
	xp_tmux_keys("Left");
	xp_tmux_keys("Up");
	/* A cell with no evidence says how to add some. */
	xp_tmux_keys("Enter");
	xp_tmux_expect("no evidence recorded");
	xp_tmux_keys("Escape");
	xp_tmux_expect_gone("no evidence recorded");
	/* The view's keys are in the help. */
	xp_tmux_keys("?");
	xp_tmux_expect("/fail /stale");
	xp_tmux_keys("Escape");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

/* A filter typed in view 4 starts at its first matching environment ("1 of N"), wherever the
 * cursor was; it used to keep the cursor's row (the 4th of 4). */
START_TEST(filter_first_match)
{
	struct xp_store *s = open_db();
	add_case(s, "case-00", "bench");
	char model[64];
	for (int i = 0; i < 8; i++) {
		snprintf(model, sizeof model, "Model-%02d", i);
		declare(s, "Vendor", model, "1.0");
	}
	for (int i = 0; i < 4; i++) {
		snprintf(model, sizeof model, "MI%d00X", i + 1);
		declare(s, "AMD", model, "6.1.0");
	}
	xp_store_close(s);
	start("C.UTF-8", 80, 24);
	xp_tmux_expect("conan");
	xp_tmux_keys("4");
	xp_tmux_expect("case-00");
	for (int i = 0; i < 11; i++)
		xp_tmux_keys("j");
	xp_tmux_expect_all("$ 12 of 12");
	xp_tmux_keys("/");
	xp_tmux_literal("AMD");
	xp_tmux_expect_all("$/AMD", "$ 1 of 4");
	xp_tmux_keys("Enter");
	xp_tmux_keys("j");
	xp_tmux_expect_all("$--filter 'AMD'", "$ 2 of 4");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

/* Two environments whose ids differ only at their end stay two rows at 80 columns: the id is
 * cut in the middle, with the mark, keeping the driver that tells them apart. */
START_TEST(long_env_ids)
{
	struct xp_store *s = open_db();
	add_case(s, "llm-train", "nlp");
	declare(s, "NVIDIA", "H100-SXM5-80GB-HBM3-reference-board", "535.54.03");
	declare(s, "NVIDIA", "H100-SXM5-80GB-HBM3-reference-board", "535.54.04");
	/* An empty firmware field reads '-', as on the command line, not a bare "::". */
	struct xp_env e = {.vendor = "AMD", .model = "MI300X", .driver = "6.7", .runtime = "ROCm 6.2"};
	struct xp_err err = {{0}};
	ck_assert_msg(xp_validate_env_declare(s, &e, &err) >= 0, "%s", err.msg);
	xp_store_close(s);
	start("C.UTF-8", 80, 24);
	xp_tmux_expect("conan");
	xp_tmux_keys("4");
	xp_tmux_expect_all("llm-train", "\u2026", "eference-board:535.54.03", "eference-board:535.54.04",
			   "AMD:MI300X:6.7:-:ROCm 6.2", "!6.7::ROCm");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

/* Ids that differ in the driver, with the same firmware and runtime after it: at 80 columns
 * each row keeps its driver (the shared vendor:model or end gives way); at 100 and 200
 * columns, with room to spare, the ids are whole. */
START_TEST(env_ids_keep_difference)
{
	struct xp_store *s = open_db();
	add_case(s, "llm-train", "nlp");
	add_case(s, "resnet50", "vision");
	struct xp_env e = {.vendor = "NVIDIA", .model = "A100 80GB", .driver = "535.54.03",
			   .firmware = "92.00.36.00.02", .runtime = "CUDA 12.2"};
	struct xp_err err = {{0}};
	ck_assert_msg(xp_validate_env_declare(s, &e, &err) >= 0, "%s", err.msg);
	e.driver = "999.1";
	ck_assert_msg(xp_validate_env_declare(s, &e, &err) >= 0, "%s", err.msg);
	xp_store_close(s);
	start("C.UTF-8", 80, 24);
	xp_tmux_expect("conan");
	xp_tmux_keys("4");
	xp_tmux_expect_all("llm-train", "\u2026", ":535.54.03:", ":999.1:", "!\u202692.00.36.00.02:CUDA 12.2");
	xp_tmux_resize(100, 30);
	/* The legend too long for 100 columns ends in the mark, not in half a word. */
	xp_tmux_expect_all("NVIDIA:A100 80GB:535.54.03:92.00.36.00.02:CUDA 12.2 ",
			   "NVIDIA:A100 80GB:999.1:92.00.36.00.02:CUDA 12.2 ", "marks: discovered schedulable launches \u2026",
			   "!launches e");
	xp_tmux_resize(200, 40);
	xp_tmux_expect_all("NVIDIA:A100 80GB:535.54.03:92.00.36.00.02:CUDA 12.2 ", "!\u2026");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

XP_DEFINE_SUITE(vview,
	{"tmux", .timeout_s = 120, .setup = setup, .teardown = teardown, .setup_all = setup_all,
	 .teardown_all = xp_tmux_suite_teardown,
	 .tests = {grid_history_filter, ascii_marks, empty_database, scrolling, filter_first_match, long_env_ids,
		   env_ids_keep_difference}})
