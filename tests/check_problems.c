/* check_problems.c: problems are visible at once and scripts can gate on them: `health`'s exit
 * status and --fail-on, unknown values shown as "-" (JSON null), and the console (tmux): every
 * problem an event of its level worded as `health` words it, down and unreachable nodes' cells
 * and header counts. Clusters are `sim gen` files edited with jansson. */
#include <check.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checklib.h"
#include "store.h"
#include "suitelib.h"
#include "testlib.h"
#include "tmuxlib.h"
#include "xp.h"

static char dir[96];   /* the test's scratch directory (tmuxlib names it after the runner) */
static char db[160];   /* a database of the test's own: reading a snapshot must not touch the user's */

static void setup_all(void)
{
	xp_tmux_suite_setup("problems");
}

static void setup(void)
{
	xp_tmux_test_dir(dir, sizeof dir);
	snprintf(db, sizeof db, "%s/x.db", dir);
}

static void teardown(void)
{
	xp_tmux_test_dir_done(dir);
}

/* `xpool sim gen` of n nodes of one kind into dir/name, loaded back (caller decrefs). */
static json_t *sim(const char *name, int n, const char *mix, int seed)
{
	char path[256], nodes[16], sd[16], mx[64];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	snprintf(nodes, sizeof nodes, "%d", n);
	snprintf(sd, sizeof sd, "%d", seed);
	snprintf(mx, sizeof mx, "%s:100", mix);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "sim", "gen", "--nodes", nodes, "--seed", sd, "--mix", mx, "-o", path,
				      NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_run_free(&r);
	json_error_t e;
	json_t *doc = json_load_file(path, 0, &e);
	ck_assert_msg(doc != NULL, "%s", e.text);
	return doc;
}

/* Every node up, no warnings, every device healthy and idle: the edits then say all there is. */
static void clean(json_t *doc)
{
	size_t i, j;
	json_t *n, *d;
	json_array_foreach(json_object_get(doc, "nodes"), i, n) {
		json_object_set_new(n, "state", json_string("up"));
		json_object_set_new(n, "warnings", json_array());
		json_array_foreach(json_object_get(n, "devices"), j, d) {
			json_object_set_new(d, "health", json_string("ok"));
			json_object_set_new(d, "health_reasons", json_array());
			json_object_set_new(d, "utilization_pct", json_integer(0));
			json_object_set_new(d, "temperature_c", json_null());
			json_object_set_new(d, "power_w", json_null());
		}
	}
}

static json_t *node_at(json_t *doc, size_t i)
{
	return json_array_get(json_object_get(doc, "nodes"), i);
}

static void set_health(json_t *doc, size_t node, size_t dev, const char *health, const char *reason)
{
	json_t *d = json_array_get(json_object_get(node_at(doc, node), "devices"), dev);
	json_object_set_new(d, "health", json_string(health));
	json_object_set_new(d, "health_reasons", json_pack("[s]", reason));
}

static const char *save(json_t *doc, const char *name)
{
	static char path[256];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	ck_assert_int_eq(json_dump_file(doc, path, JSON_INDENT(1)), 0);
	return path;
}

/* `xpool --db DB --inventory FILE health [more]`: its exit status; *out its output when asked. */
static int health(const char *file, const char *a1, const char *a2, char **out)
{
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--inventory", file, "health", a1, a2, NULL), 0);
	int st = r.status;
	if (out)
		*out = strdup(r.out);
	xp_run_free(&r);
	return st;
}

START_TEST(health_exit_status)
{
	json_t *doc = sim("h.json", 3, "nvidia-h100", 1);
	clean(doc);
	const char *f = save(doc, "clean.json");
	ck_assert_int_eq(health(f, NULL, NULL, NULL), XP_EXIT_OK);
	ck_assert_int_eq(health(f, "--fail-on", "warn", NULL), XP_EXIT_OK);

	/* A warning: fine by default, a failure for --fail-on warn. */
	set_health(doc, 1, 2, "warn", "temperature 85 C at or above 83 C");
	f = save(doc, "warn.json");
	ck_assert_int_eq(health(f, NULL, NULL, NULL), XP_EXIT_OK);
	ck_assert_int_eq(health(f, "--fail-on", "fail", NULL), XP_EXIT_OK);
	ck_assert_int_eq(health(f, "--fail-on", "warn", NULL), XP_EXIT_PROBLEMS);

	/* A failed device: 5, whatever the output form; never: 0. */
	set_health(doc, 2, 0, "fail", "XID 48: double bit ECC error");
	f = save(doc, "fail.json");
	char *out;
	ck_assert_int_eq(health(f, NULL, NULL, &out), XP_EXIT_PROBLEMS);
	xp_want_parts(out, "ACC0  fail   XID 48: double bit ECC error", NULL);
	free(out);
	ck_assert_int_eq(health(f, "--json", NULL, NULL), XP_EXIT_PROBLEMS);
	ck_assert_int_eq(health(f, "--fail-on", "never", NULL), XP_EXIT_OK);

	/* A down node alone is a failure too. */
	clean(doc);
	json_object_set_new(node_at(doc, 0), "state", json_string("down"));
	f = save(doc, "down.json");
	ck_assert_int_eq(health(f, NULL, NULL, &out), XP_EXIT_PROBLEMS);
	xp_want_parts(out, "node  fail   down", NULL);
	free(out);

	/* A level that is not one is a usage error, before any discovery. */
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--inventory", f, "health", "--fail-on", "sometimes", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_USAGE);
	xp_want_parts(r.err, "--fail-on sometimes", NULL);
	xp_run_free(&r);
	json_decref(doc);
}
END_TEST

/* A node without a topology (an agent's, a device-only snapshot's) has no CPU counts: "-" in
 * text, null in JSON, never 0. */
START_TEST(unknown_is_dash)
{
	json_t *doc = sim("u.json", 2, "nvidia-h100", 1);
	json_t *n = node_at(doc, 1);
	json_object_del(n, "cpu");
	json_object_set_new(n, "packages", json_array());
	json_object_set_new(n, "numa", json_array());
	const char *f = save(doc, "notopo.json");
	const char *name = json_string_value(json_object_get(n, "name"));
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--inventory", f, "inventory", NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	const char *row = strstr(r.out, name);
	ck_assert_msg(row != NULL, "%s", r.out);
	char line[512];
	snprintf(line, sizeof line, "%.*s", (int)strcspn(row, "\n"), row);
	ck_assert_msg(strstr(line, "0/0") == NULL, "%s", line);
	/* NODE STATE CORES/PUS MEMORY ("1.0 TiB": two words) NUMA ACCEL */
	char w[7][64] = {{0}};
	ck_assert_int_eq(sscanf(line, "%63s %63s %63s %63s %63s %63s %63s", w[0], w[1], w[2], w[3], w[4], w[5], w[6]), 7);
	ck_assert_str_eq(w[2], "-");
	ck_assert_str_eq(w[5], "-");
	xp_run_free(&r);

	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--inventory", f, "--json", "inventory", NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	json_error_t e;
	json_t *out = json_loads(r.out, 0, &e);
	ck_assert_msg(out != NULL, "%s", e.text);
	json_t *cpu = json_object_get(node_at(out, 1), "cpu");
	ck_assert_ptr_nonnull(cpu);
	const char *keys[] = {"packages", "cores", "pus", "pus_allowed"};
	for (size_t i = 0; i < 4; i++)
		ck_assert_msg(json_is_null(json_object_get(cpu, keys[i])), "cpu.%s is not null", keys[i]);
	/* and the known node keeps its counts */
	ck_assert(json_integer_value(json_object_get(json_object_get(node_at(out, 0), "cpu"), "cores")) > 0);
	json_decref(out);
	xp_run_free(&r);
	json_decref(doc);
}
END_TEST

/* The cluster the console tests open: node 0 down, node 1 unreachable, node 2 up with a failed
 * and a warned device, node 3 degraded; every device idle, so a down node's cells drawn from their
 * last report would look idle and fine. */
static const char *console_cluster(char names[4][64])
{
	json_t *doc = sim("c.json", 4, "nvidia-h100", 3);
	clean(doc);
	json_object_set_new(node_at(doc, 0), "state", json_string("down"));
	json_object_set_new(node_at(doc, 1), "state", json_string("unreachable"));
	set_health(doc, 2, 0, "fail", "XID 48: double bit ECC error");
	set_health(doc, 2, 5, "warn", "temperature 85 C at or above 83 C");
	json_object_set_new(node_at(doc, 3), "state", json_string("degraded"));
	for (size_t i = 0; i < 4; i++)
		snprintf(names[i], 64, "%s", json_string_value(json_object_get(node_at(doc, i), "name")));
	const char *f = save(doc, "console.json");
	json_decref(doc);
	return f;
}

static void start(const char *lang, const char *file, const char *extra)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
		 "env LANG=%s LC_ALL=%s TERM=screen-256color XDG_STATE_HOME=%s %s %s --db %s --inventory %s; "
		 "echo $? > %s/rc",
		 lang, lang, dir, extra ? extra : "", xp_bin(), db, file, dir);
	xp_tmux_start(cmd, 200, 50);
}

/* The screen line holding all of a, b and c, or NULL. */
static bool line_with(const char *screen, const char *a, const char *b, const char *c)
{
	for (const char *p = screen; *p;) {
		size_t len = strcspn(p, "\n");
		char line[1024];
		snprintf(line, sizeof line, "%.*s", (int)len, p);
		if (strstr(line, a) && strstr(line, b) && strstr(line, c))
			return true;
		p += len + (p[len] == '\n');
	}
	return false;
}

START_TEST(console_events_are_health)
{
	char names[4][64];
	const char *f = console_cluster(names);
	char *out;
	ck_assert_int_eq(health(f, NULL, NULL, &out), XP_EXIT_PROBLEMS);
	start("C.UTF-8", f, NULL);
	char *s = xp_tmux_wait("4 nodes", false, 15);
	free(s);
	xp_tmux_keys("5");
	/* Every row `health` prints is an event: same node, its level as the severity, and the
	 * message "WHAT REASON". Two passes, /fail then /warn, so each level fits the screen. */
	const char *levels[] = {"fail", "warn"};
	int seen = 0;
	for (size_t l = 0; l < 2; l++) {
		xp_tmux_keys("/");
		xp_tmux_literal(levels[l]);
		xp_tmux_keys("Enter");
		/* the filter has taken when the other level's problem has gone */
		s = xp_tmux_wait(l == 0 ? "node degraded" : "node down", true, 10);
		free(s);
		s = xp_tmux_wait(l == 0 ? "node down" : "node degraded", false, 10);
		const char *row = strchr(out, '\n') + 1; /* past NODE WHAT LEVEL REASON */
		while (*row) {
			char node[64], what[16], level[8], reason[256];
			size_t len = strcspn(row, "\n");
			char line[512];
			snprintf(line, sizeof line, "%.*s", (int)len, row);
			row += len + (row[len] == '\n');
			if (sscanf(line, "%63s %15s %7s %255[^\n]", node, what, level, reason) != 4 ||
			    strcmp(level, levels[l]) != 0)
				continue;
			char msg[300];
			snprintf(msg, sizeof msg, "%s %s", what, reason);
			ck_assert_msg(line_with(s, node, level, msg), "no %s event \"%s\" for %s on:\n%s", level, msg,
				      node, s);
			seen++;
		}
		free(s);
		xp_tmux_keys("Escape");
	}
	/* down, unreachable, ACC0 (fail); ACC5, degraded (warn) */
	ck_assert_int_eq(seen, 5);
	free(out);
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
}
END_TEST

/* A down node's cells and an unreachable node's are their own glyphs, not idle ones, in UTF-8
 * and in ASCII without colour; their devices count under n/a in the header, never ok. */
START_TEST(console_down_cells)
{
	char names[4][64];
	const char *f = console_cluster(names);
	start("C.UTF-8", f, NULL);
	char *s = xp_tmux_wait("4 nodes", false, 15);
	/* 32 devices: node 2 has 6 ok, 1 warn, 1 fail, node 3 (degraded) 8 ok; nodes 0 and 1 n/a */
	xp_want_parts(s, "ok 14", "warn 1", "fail 1", "n/a 16", NULL);
	ck_assert_msg(line_with(s, names[0], "\u2573\u2573", ""), "%s", s);
	ck_assert_msg(line_with(s, names[1], "\u2591\u2591", ""), "%s", s);
	free(s);
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
}
END_TEST

/* The same without UTF-8 and without colour: the glyphs alone tell the cells apart. */
START_TEST(console_down_cells_ascii)
{
	char names[4][64];
	const char *f = console_cluster(names);
	start("C", f, "NO_COLOR=1");
	char *s;
	s = xp_tmux_wait("4 nodes", false, 15);
	xp_want_parts(s, "ok 14", "n/a 16", NULL);
	ck_assert_msg(line_with(s, names[0], "xx", ""), "%s", s);
	ck_assert_msg(line_with(s, names[1], "??", ""), "%s", s);
	free(s);
	/* The legend: a healthy device of unknown utilization and one of unknown health have two
	 * glyphs (they shared '#', told apart by colour alone). */
	char ok[128], unk[128];
	snprintf(ok, sizeof ok, "  %-22s %s", "#", "healthy, utilization not known");
	snprintf(unk, sizeof unk, "  %-22s %s", "-", "health and utilization not known");
	xp_tmux_keys("?");
	xp_tmux_expect_all("Device cells on the map", ok, unk);
	xp_tmux_keys("Escape");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
}
END_TEST

/* The console says "-" for what is not known, as text output does: a replayed AMD node with
 * no topology has "-" for its CPU cell (not "-c/-t -N -") and its device's detail has "-" for
 * the PCI id, path, runtime (not "unknown" or "none"). */
START_TEST(console_unknown_is_dash)
{
	char rd[256], cmd[2048];
	snprintf(rd, sizeof rd, "%s/amd", dir);
	ck_assert_int_eq(mkdir(rd, 0700), 0);
	char to[300];
	snprintf(to, sizeof to, "%s/rocm-smi.json", rd);
	FILE *in = fopen(xp_fixture("amd/amd-gpu_rocm6.2.4.rocm-smi.json"), "r"), *out = fopen(to, "w");
	ck_assert(in && out);
	char buf[4096];
	size_t k;
	while ((k = fread(buf, 1, sizeof buf, in)) > 0)
		ck_assert_uint_eq(fwrite(buf, 1, k, out), k);
	fclose(in);
	ck_assert_int_eq(fclose(out), 0);
	snprintf(cmd, sizeof cmd,
		 "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color XDG_STATE_HOME=%s %s --db %s --replay %s; "
		 "echo $? > %s/rc",
		 dir, xp_bin(), db, rd, dir);
	xp_tmux_start(cmd, 80, 24);
	xp_tmux_expect_all("^1 node", "  amd           up     ok", " 53W    -  ", "!-c/-t");
	xp_tmux_keys("Enter");
	xp_tmux_expect_all("Machine amd", "ACC0");
	xp_tmux_keys("Enter");
	xp_tmux_expect_all("  pci id            -\n", "  pci path          -\n", "  runtime           -\n",
			   "  numa              -\n", "!unknown", "!none");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
}
END_TEST

/* View 5 is newest first with a database: the audit rows loaded at start (older context) go
 * below the events the console has just found, in time order (they used to go on top). */
START_TEST(console_events_time_order)
{
	char names[4][64];
	const char *f = console_cluster(names);
	struct xp_err err = {{0}};
	setenv("XPOOL_ACTOR", "problems-tester", 1);
	struct xp_store *st = xp_store_open(db, &err);
	ck_assert_msg(st != NULL, "%s", err.msg);
	ck_assert_msg(xp_audit_add(st, "old-change", "target-x", NULL, NULL, &err) == 0, "%s", err.msg);
	/* an hour ago: before anything the console will find */
	ck_assert_int_eq(sqlite3_exec(st->db, "UPDATE audit SET time = time - 3600", NULL, NULL, NULL), SQLITE_OK);
	xp_store_close(st);
	start("C.UTF-8", f, NULL);
	free(xp_tmux_wait("4 nodes", false, 15));
	xp_tmux_keys("5");
	char *s = xp_tmux_wait_all(10, "audit: problems-tester old-change target-x", "node discovered", "node down",
				   (const char *)NULL);
	const char *audit = strstr(s, "old-change target-x"), *found = strstr(s, "node discovered");
	ck_assert_msg(found < audit, "the older audit row is above the newer events:\n%s", s);
	free(s);
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
}
END_TEST

/* A filter typed in view 5 starts at its first match, wherever the cursor was ("1 of N"), as
 * the map's does; it used to keep the cursor on the event it was on (the 52nd match). */
START_TEST(console_events_filter_first)
{
	char path[256];
	snprintf(path, sizeof path, "%s/s1.json", dir);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "sim", "gen", "--nodes", "300", "-o", path, NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_run_free(&r);
	start("C.UTF-8", path, NULL);
	free(xp_tmux_wait("300 nodes", false, 15));
	xp_tmux_keys("5");
	for (int i = 0; i < 10; i++)
		xp_tmux_keys("j");
	xp_tmux_expect_all("$ 11 of ");
	xp_tmux_keys("/");
	xp_tmux_literal("warn");
	xp_tmux_expect_all("$/warn", "$ 1 of ");
	xp_tmux_keys("Enter");
	xp_tmux_expect_all("$--filter 'warn'", "$ 1 of ");
	/* Moving under the same filter, then a refresh (r) keeps the cursor where it is. */
	xp_tmux_keys("j");
	xp_tmux_keys("j");
	xp_tmux_expect_all("$ 3 of ");
	xp_tmux_keys("Escape");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
}
END_TEST

XP_DEFINE_SUITE(problems,
	{"all", .timeout_s = 120, .setup = setup, .teardown = teardown, .setup_all = setup_all,
	 .teardown_all = xp_tmux_suite_teardown,
	 .tests = {health_exit_status, unknown_is_dash, console_events_are_health, console_down_cells,
		   console_down_cells_ascii, console_events_filter_first, console_unknown_is_dash,
		   console_events_time_order}})
