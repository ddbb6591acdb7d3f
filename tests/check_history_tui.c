/* check_history_tui.c: the console's device history end to end in tmux: the device view's graph
 * fills with each refresh and follows `w` (window) and `m` (metric); a console started after two
 * `db snapshot`s shows their samples. */
#include <check.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "model.h"
#include "simgen.h"
#include "suitelib.h"
#include "testlib.h"
#include "tmuxlib.h"
#include "xp.h"

static char statedir[128], inv[192], db[192];
static pid_t fake = -1; /* a stand-in agent, stopped in teardown whatever the test did */

static void setup_all(void)
{
	xp_tmux_suite_setup("history_tui");
}

static void setup(void)
{
	xp_tmux_test_dir(statedir, sizeof statedir);
	snprintf(inv, sizeof inv, "%s/inv.json", statedir);
	snprintf(db, sizeof db, "%s/h.db", statedir);
}

static void teardown(void)
{
	if (fake > 0) {
		kill(fake, SIGKILL);
		waitpid(fake, NULL, 0);
		fake = -1;
	}
	xp_tmux_test_dir_done(statedir);
}

/* Writes the one-node `sim gen` cluster with device 0 at util percent, by a new file (rename),
 * so the console sees a changed snapshot. */
static void write_inv(double util)
{
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_sim_generate(1, NULL, 1, &err);
	ck_assert_msg(c, "%s", err.msg);
	c->nodes[0]->devices[0].utilization_pct = util;
	char tmp[256];
	snprintf(tmp, sizeof tmp, "%s.tmp", inv);
	FILE *f = fopen(tmp, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_msg(xp_sim_write(c, f, &err) == 0, "%s", err.msg);
	fclose(f);
	ck_assert_int_eq(rename(tmp, inv), 0);
	xp_cluster_free(c);
}

static void start(const char *extra)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color XDG_STATE_HOME=%s %s --db %s --inventory %s "
		 "--delay 1 %s; echo $? > %s/rc",
		 statedir, xp_bin(), db, inv, extra ? extra : "", statedir);
	xp_tmux_start(cmd, 140, 60);
}

/* Opens the first device of the first node and shows its graph over one minute. */
static void open_device_minute(void)
{
	xp_tmux_expect("h100-00001");
	xp_tmux_keys("Enter");
	xp_tmux_expect("ACC0");
	xp_tmux_keys("Enter");
	xp_tmux_expect("utilization, last 10 min");
	xp_tmux_keys("w");
	xp_tmux_expect("utilization, last 1 h");
	xp_tmux_keys("w");
	xp_tmux_expect("utilization, last 1 min");
}

START_TEST(graph_follows_refreshes_and_keys)
{
	write_inv(50);
	start(NULL);
	open_device_minute();
	xp_tmux_expect_all("now 50.0 %, min 50.0 %, max 50.0 %", "100.0 %", "-1 min", "(w window, m metric)");
	/* The next refreshes bring another value: the graph holds both. */
	write_inv(90);
	free(xp_tmux_wait_all(15, "now 90.0 %, min 50.0 %, max 90.0 %", "\u2588", NULL));
	xp_tmux_keys("m");
	xp_tmux_expect_all("memory used, last 1 min: now 62.5 GiB", "80.0 GiB");
	xp_tmux_keys("m");
	xp_tmux_expect("temperature, last 1 min");
	xp_tmux_keys("m");
	xp_tmux_expect_all("power, last 1 min", "700 W");
	xp_tmux_keys("m");
	xp_tmux_expect("utilization, last 1 min");
	xp_tmux_keys("w");
	xp_tmux_expect_all("utilization, last 10 min", "-10 min");
	/* Back to the node and in again: the window and metric are kept. */
	xp_tmux_keys("Escape");
	xp_tmux_expect_gone("(w window, m metric)");
	xp_tmux_keys("Enter");
	xp_tmux_expect("utilization, last 10 min");
	xp_tmux_command("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

/* ASCII: the graph's columns are '#' and '.', never a block glyph. */
START_TEST(graph_ascii)
{
	write_inv(100);
	start("--ascii");
	open_device_minute();
	char *s = xp_tmux_wait_all(10, "now 100.0 %", "####", NULL);
	ck_assert_msg(!strstr(s, "\u2588"), "a block glyph in ASCII mode:\n%s", s);
	free(s);
	xp_tmux_command("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

/* Two `db snapshot`s, then a console: it starts with their samples (read, never written). */
START_TEST(store_history_at_start)
{
	struct xp_run r;
	write_inv(20);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--inventory", inv, "db", "snapshot", NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_run_free(&r);
	sleep(2); /* another second-long slot */
	write_inv(80);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--inventory", inv, "db", "snapshot", NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_run_free(&r);
	start(NULL);
	open_device_minute();
	/* 20 % only ever was in the store. */
	xp_tmux_expect("now 80.0 %, min 20.0 %, max 80.0 %");
	xp_tmux_command("q");
	xp_tmux_expect_exit(statedir, 0);
	/* Looking wrote nothing: still two snapshots' samples. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "db", "info", "--json", NULL), 0);
	ck_assert_msg(strstr(r.out, "\"samples\": 16,"), "%s", r.out);
	xp_run_free(&r);
}
END_TEST

/* A console started late over an agent: the agent's ring (here a stand-in's, 77 % for the half
 * minute before) shows beside what the console sees itself (10 %), through the poller. */
START_TEST(agent_history_at_start)
{
	time_t now = time(NULL);
	char times[512] = "", util[512] = "";
	for (int i = 0; i < 10; i++) {
		snprintf(times + strlen(times), sizeof times - strlen(times), "%s%lld", i ? "," : "",
			 (long long)(now - 40 + 2 * i));
		snprintf(util + strlen(util), sizeof util - strlen(util), "%s77", i ? "," : "");
	}
	char *body = xp_asprintf("{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"late-1\",\"devices\":"
				 "[{\"index\":0,\"vendor\":\"NVIDIA\",\"model\":\"X\",\"utilization_pct\":10}]}],"
				 "\"history\":{\"interval_s\":2,\"times\":[%s],\"devices\":[{\"index\":0,\"util\":[%s]}]}}",
				 times, util);
	char *reply = xp_asprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
				  "Connection: close\r\n\r\n%s",
				  strlen(body), body);
	int port = 0;
	fake = xp_fake_http(&port, reply, strlen(reply));
	ck_assert_int_gt(fake, 0);
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color XDG_STATE_HOME=%s %s --db %s "
		 "--agent http://127.0.0.1:%d --delay 1; echo $? > %s/rc",
		 statedir, xp_bin(), db, port, statedir);
	xp_tmux_start(cmd, 140, 60);
	xp_tmux_expect("late-1");
	xp_tmux_keys("Enter");
	xp_tmux_expect("ACC0");
	xp_tmux_keys("Enter");
	xp_tmux_keys("w");
	xp_tmux_keys("w");
	xp_tmux_expect("utilization, last 1 min: now 10.0 %, min 10.0 %, max 77.0 %");
	xp_tmux_command("q");
	xp_tmux_expect_exit(statedir, 0);
	free(reply);
	free(body);
}
END_TEST

/* The screen line holding text (a copy, caller frees), or NULL. */
static char *line_of(const char *screen, const char *text)
{
	const char *p = strstr(screen, text);
	if (!p)
		return NULL;
	const char *b = p, *e = p;
	while (b > screen && b[-1] != '\n')
		b--;
	while (*e && *e != '\n')
		e++;
	return strndup(b, (size_t)(e - b));
}

/* Waits up to seconds for the screen line holding key to hold want as well. */
static bool line_gets(const char *key, const char *want, double seconds)
{
	for (double t = 0; t < seconds; t += 0.25) {
		char *s = xp_tmux_capture();
		char *l = line_of(s, key);
		bool ok = l && strstr(l, want);
		free(l);
		free(s);
		if (ok)
			return true;
		usleep(250000);
	}
	return false;
}

/* View 1's sparklines: from 120 columns a UTIL 2m column, the node's mean and in expanded rows
 * each device's own, filling in as refreshes bring new values. */
START_TEST(map_sparklines)
{
	write_inv(0);
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color XDG_STATE_HOME=%s %s --db %s --inventory %s "
		 "--delay 1; echo $? > %s/rc",
		 statedir, xp_bin(), db, inv, statedir);
	xp_tmux_start(cmd, 200, 50);
	xp_tmux_expect_all("UTIL 2m", "h100-00001");
	xp_tmux_keys("e");
	/* ACC0 idle: its sparkline's bar is the lowest (a gap would be blank), its cell the idle dot */
	ck_assert_msg(line_gets("    ACC0", "\u2581  \u00b7 0000:", 10), "no idle sparkline for ACC0");
	write_inv(100);
	/* a later bucket at 100 %: the sparkline ends in a full bar, beside the full cell */
	ck_assert_msg(line_gets("    ACC0", "\u2588  \u2588 0000:", 30), "the sparkline did not follow");
	char *s = xp_tmux_capture();
	char *l = line_of(s, "    ACC0");
	/* the bucket of the idle samples stays lower than full (it may hold some at 100 % too) */
	bool lower = false;
	for (unsigned c = 0x2581; l && c < 0x2588; c++) {
		char glyph[4] = {(char)0xe2, (char)0x96, (char)(0x80 | (c & 0x3f)), 0};
		lower = lower || strstr(l, glyph);
	}
	ck_assert_msg(lower, "the idle past is gone: %s", l ? l : s);
	free(l);
	free(s);
	/* below 120 columns the column gives its room back */
	xp_tmux_resize(100, 30);
	xp_tmux_expect_gone("UTIL 2m");
	xp_tmux_command("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

XP_DEFINE_SUITE(history_tui,
	{"tmux", .timeout_s = 120, .setup = setup, .teardown = teardown, .setup_all = setup_all,
	 .teardown_all = xp_tmux_suite_teardown,
	 .tests = {graph_follows_refreshes_and_keys, graph_ascii, store_history_at_start, agent_history_at_start,
		   map_sparklines}})
