/* check_tui_panels.c: views 6 to 8 in a real terminal (tmux): the problems view's order, a
 * key that acknowledges (the row drops, stays so after a restart, the header stops counting
 * it) and a snooze that ends ($XPOOL_NOW as the clock); the agents view over real agents on
 * loopback (one up with a skewed clock, one killed: down with its error; keys answered while
 * an agent hangs); the fleet heatmap at 2,000 nodes (the metric cycling with m, the cursor's
 * node in the status line, Enter opening it in view 1). */
#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checklib.h"
#include "suitelib.h"
#include "testlib.h"
#include "tmuxlib.h"
#include "xp.h"

static char dir[96];
static char db[160];
static pid_t agents[2];
static bool started; /* this test started a console already (its session "t" remains) */

static void setup_all(void)
{
	xp_tmux_suite_setup("tui_panels");
}

static void setup(void)
{
	xp_tmux_test_dir(dir, sizeof dir);
	snprintf(db, sizeof db, "%s/x.db", dir);
	started = false;
	unsetenv("XPOOL_ADAPTER_PATH");
	unsetenv("XPOOL_ADAPTER_PATH_ONLY");
	unsetenv("XPOOL_ADAPTERS");
}

static void teardown(void)
{
	for (int i = 0; i < 2; i++)
		if (agents[i] > 0) {
			kill(agents[i], SIGKILL);
			waitpid(agents[i], NULL, 0);
			agents[i] = 0;
		}
	xp_tmux_test_dir_done(dir);
}

/* `sim gen` of n nodes into dir/name; with problems, every node healthy but three: a failed
 * device on the 4th, the 3rd node degraded, a warm device on the 1st. */
static const char *sim(const char *name, int n, bool problems)
{
	static char path[256];
	char nodes[16];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	snprintf(nodes, sizeof nodes, "%d", n);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "sim", "gen", "--nodes", nodes, "--mix", "nvidia-h100:100", "-o", path,
				      NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_run_free(&r);
	if (!problems)
		return path;
	json_t *doc = json_load_file(path, 0, NULL);
	ck_assert_ptr_nonnull(doc);
	size_t i, j;
	json_t *nd, *d;
	json_array_foreach(json_object_get(doc, "nodes"), i, nd) {
		json_object_set_new(nd, "state", json_string(i == 2 ? "degraded" : "up"));
		json_object_set_new(nd, "warnings", json_array());
		json_array_foreach(json_object_get(nd, "devices"), j, d) {
			bool bad = (i == 0 && j == 1) || (i == 3 && j == 5);
			json_object_set_new(d, "health", json_string(!bad ? "ok" : i == 0 ? "warn" : "fail"));
			json_object_set_new(d, "health_reasons",
					    bad ? json_pack("[s]", i == 0 ? "temperature 86 C" : "XID 79: fell off the bus")
						: json_array());
		}
	}
	ck_assert_int_eq(json_dump_file(doc, path, 0), 0);
	json_decref(doc);
	return path;
}

static void start(const char *file, const char *env)
{
	char cmd[2048];
	/* A console of this test that quit still holds session "t" (remain-on-exit); the first
	 * start needs no kill (setup's), and a kill just before it may race the new server. */
	if (started) {
		xp_tmux_kill_server();
		usleep(200 * 1000);
	}
	started = true;
	snprintf(cmd, sizeof cmd,
		 "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color XDG_STATE_HOME=%s XPOOL_ACTOR=tester %s %s --db %s"
		 " --inventory %s; echo $? > %s/rc",
		 dir, env ? env : "", xp_bin(), db, file, dir);
	xp_tmux_start(cmd, 200, 50);
}

/* The row of screen holding a, or NULL (a copy; caller frees). */
static char *row_with(const char *screen, const char *a)
{
	const char *p = strstr(screen, a);
	if (!p)
		return NULL;
	const char *b = p;
	while (b > screen && b[-1] != '\n')
		b--;
	return xp_strndup(b, strcspn(b, "\n"));
}

/* Which of a and b comes first on screen: true when a does (both must be there). */
static bool before(const char *screen, const char *a, const char *b)
{
	const char *x = strstr(screen, a), *y = strstr(screen, b);
	ck_assert_msg(x && y, "no \"%s\" or \"%s\" in:\n%s", a, b, screen);
	return x < y;
}

START_TEST(problems_ack_snooze)
{
	const char *f = sim("p.json", 6, true);
	start(f, "XPOOL_NOW=1000000");
	free(xp_tmux_wait("6 nodes", false, 15));
	xp_tmux_keys("6");
	char *s = xp_tmux_wait_all(10, "XID 79: fell off the bus", "degraded", "temperature 86 C", "$1 of 3",
				   "^fail 1", NULL);
	/* fail first, then the node, then the device warning */
	ck_assert(before(s, "XID 79", "degraded"));
	ck_assert(before(s, "degraded", "temperature 86 C"));
	free(s);
	/* a: acknowledged; the row drops to the bottom, saying who; the header stops counting it. */
	xp_tmux_keys("a");
	s = xp_tmux_wait_all(10, "acked by tester", "$h100-00004 ACC5: acknowledged", "^fail 0", NULL);
	ck_assert(before(s, "temperature 86 C", "XID 79"));
	char *row = row_with(s, "XID 79");
	ck_assert_msg(strstr(row, "acked by tester"), "%s", row);
	free(row);
	free(s);
	/* The cursor stayed in place: on what is now the first row, the degraded node. z snoozes it. */
	xp_tmux_keys("z");
	xp_tmux_expect_all("snooze h100-00003 node for", "1h");
	xp_tmux_keys("C-u");
	xp_tmux_literal("30m");
	xp_tmux_keys("Enter");
	s = xp_tmux_wait_all(10, "snoozed by tester until", "$h100-00003 node: snoozed until", NULL);
	row = row_with(s, "degraded");
	ck_assert_msg(strstr(row, "snoozed by tester"), "%s", row);
	free(row);
	free(s);
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);

	/* A restart reads them back: both still quiet, the warn device first. The event log notes
	 * the acknowledged problems as such, not as failures. */
	start(f, "XPOOL_NOW=1001000");
	free(xp_tmux_wait("6 nodes", false, 15));
	xp_tmux_keys("6");
	s = xp_tmux_wait_all(10, "acked by tester", "snoozed by tester", "^fail 0", NULL);
	ck_assert(before(s, "temperature 86 C", "degraded"));
	free(s);
	xp_tmux_keys("5");
	xp_tmux_expect_all("XID 79: fell off the bus (acknowledged)");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);

	/* 30 minutes after the snooze it shouts again; the acknowledgement stays. */
	start(f, "XPOOL_NOW=1001800");
	free(xp_tmux_wait("6 nodes", false, 15));
	xp_tmux_keys("6");
	s = xp_tmux_wait_all(10, "acked by tester", "!snoozed", "degraded", NULL);
	ck_assert(before(s, "degraded", "temperature 86 C"));
	free(s);
	/* A un-acknowledges: the failure is first again and counted. */
	xp_tmux_keys("End");
	xp_tmux_keys("A");
	s = xp_tmux_wait_all(10, "!acked by", "^fail 1", "$no longer acknowledged", NULL);
	ck_assert(before(s, "XID 79", "degraded"));
	free(s);
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
	/* Each change is in the audit log. */
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "audit", NULL), 0);
	xp_want_parts(r.out, "tester", "problem.ack", "problem.snooze", "problem.unack", NULL);
	xp_run_free(&r);
}
END_TEST

START_TEST(agents_view)
{
	char *dgx = xp_replay_dgx(dir);
	char *mi = xp_assemble(dir, "mi100-11", "amd/mi100-x4_rocm602.rocm-smi.json", "rocm-smi.json", NULL);
	char u1[256], u2[256];
	agents[0] = xp_agent_start(u1, sizeof u1, "--replay", dgx, NULL);
	ck_assert_msg(agents[0] > 0, "%s", u1);
	/* The second node's clock is 30 s ahead. */
	setenv("XPOOL_CLOCK_OFFSET", "30", 1);
	agents[1] = xp_agent_start(u2, sizeof u2, "--replay", mi, NULL);
	unsetenv("XPOOL_CLOCK_OFFSET");
	ck_assert_msg(agents[1] > 0, "%s", u2);
	char cmd[4096];
	snprintf(cmd, sizeof cmd,
		 "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color XDG_STATE_HOME=%s %s --db %s --delay 0.5 "
		 "--agent-timeout 4 --agent %s --agent %s; echo $? > %s/rc",
		 dir, xp_bin(), db, u1, u2, dir);
	xp_tmux_start(cmd, 200, 50);
	free(xp_tmux_wait_all(15, "^agents 2 up 0 down", NULL));
	xp_tmux_keys("7");
	char *s = xp_tmux_wait_all(10, "AGENT", "SKEW", "304S", "dgx-a100-07", "mi100-11", NULL);
	char *row = row_with(s, "mi100-11");
	ck_assert_msg(strstr(row, " up ") && strstr(row, "+30") && strstr(row, " ms"), "%s", row);
	free(row);
	row = row_with(s, "dgx-a100-07");
	ck_assert_msg(strstr(row, " up ") && !strstr(row, "+30"), "%s", row);
	free(row);
	free(s);

	/* One dies: down, with curl's words for why. */
	kill(agents[1], SIGKILL);
	waitpid(agents[1], NULL, 0);
	agents[1] = 0;
	s = xp_tmux_wait_all(15, "^agents 1 up 1 down", "Couldn't connect", NULL);
	row = row_with(s, "mi100-11");
	ck_assert_msg(strstr(row, "down") && strstr(row, "Couldn't connect"), "%s", row);
	free(row);
	free(s);

	/* The other hangs (stopped: connected, never answering, for longer than the check below):
	 * keys are answered at once all the same. */
	kill(agents[0], SIGSTOP);
	usleep(1200 * 1000); /* a poll is now waiting on it */
	xp_tmux_keys("s");
	free(xp_tmux_wait_all(1.5, "AGENT\u2191", NULL));
	xp_tmux_keys("S");
	free(xp_tmux_wait_all(1.5, "AGENT\u2193", NULL));
	xp_tmux_keys("s");
	free(xp_tmux_wait_all(1.5, "NODE\u2191", NULL));
	kill(agents[0], SIGCONT);
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
	free(dgx);
	free(mi);
}
END_TEST

START_TEST(agents_view_none)
{
	const char *f = sim("one.json", 1, false);
	start(f, NULL);
	free(xp_tmux_wait("1 node", false, 15));
	xp_tmux_keys("7");
	xp_tmux_expect_all("no node agents: `:agent add URL` adds one");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
}
END_TEST

START_TEST(fleet_heatmap)
{
	const char *f = sim("f.json", 2000, false);
	start(f, NULL);
	free(xp_tmux_wait("2000 nodes", false, 20));
	xp_tmux_keys("8");
	/* 2,000 nodes of 63 racks fit on one 200x50 screen: the first rack and the last are shown. */
	char *s = xp_tmux_wait_all(10, "util (m)", "<20%", ">=80%", "rack0000 ", "rack0062 ", "$h100-00001 rack0000 util:",
				   "$1 of 2000", NULL);
	free(s);
	xp_tmux_keys("m");
	xp_tmux_expect_all("mem (m)", "% used", "$h100-00001 rack0000 mem:");
	xp_tmux_keys("m");
	xp_tmux_expect_all("temp (m)", "$h100-00001 rack0000 temp:");
	xp_tmux_keys("m");
	xp_tmux_keys("m");
	xp_tmux_expect_all("free (m)", "$free:", "/8 free");
	xp_tmux_keys("m");
	xp_tmux_expect_all("health (m)", "unreachable", "$health:");
	xp_tmux_keys("m");
	xp_tmux_expect_all("util (m)");
	/* Right twice, then down a row: the status line names the node under the cursor. */
	xp_tmux_keys("l");
	xp_tmux_keys("l");
	xp_tmux_expect_all("$h100-00003 rack0000", "$3 of 2000");
	xp_tmux_keys("j");
	s = xp_tmux_wait_all(10, "!$3 of 2000", NULL);
	char *last = xp_tmux_last_row(s);
	ck_assert_msg(strstr(last, " of 2000"), "%s", last);
	free(last);
	free(s);
	xp_tmux_keys("k");
	xp_tmux_expect_all("$h100-00003 rack0000");
	/* Enter: view 1 with that node open. */
	xp_tmux_keys("Enter");
	xp_tmux_expect_all("Topology \u203a h100-00003", "Machine h100-00003");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
}
END_TEST

START_TEST(fleet_heatmap_ascii)
{
	const char *f = sim("fa.json", 50, false);
	char env[64];
	snprintf(env, sizeof env, "NO_COLOR=1");
	start(f, env);
	free(xp_tmux_wait("50 nodes", false, 20));
	xp_tmux_keys("8");
	/* Without colour each level has its own glyph; --ascii is not needed for a C locale. */
	xp_tmux_expect_all("\u2581 <20%", "\u2588 >=80%", "rack0000 ");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
	xp_tmux_kill_server();
	usleep(200 * 1000);
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
		 "env LANG=C LC_ALL=C TERM=screen-256color XDG_STATE_HOME=%s %s --db %s --ascii --inventory %s;"
		 " echo $? > %s/rc",
		 dir, xp_bin(), db, f, dir);
	xp_tmux_start(cmd, 200, 50);
	free(xp_tmux_wait("50 nodes", false, 20));
	xp_tmux_keys("8");
	xp_tmux_expect_all(". <20%", ": 20-40%", "+ 40-60%", "# 60-80%", "@ >=80%", "- not known");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
}
END_TEST

XP_DEFINE_SUITE(tui_panels,
	{"all", .timeout_s = 180, .setup = setup, .teardown = teardown, .setup_all = setup_all,
	 .teardown_all = xp_tmux_suite_teardown,
	 .tests = {problems_ack_snooze, agents_view, agents_view_none, fleet_heatmap, fleet_heatmap_ascii}})
