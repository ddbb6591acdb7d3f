/* check_tui_filter.c: the one filter language where people type it: the console's `/` (fields
 * per device in view 1, job fields in view 2, errors with their column beside the input and in
 * the status line after Enter, the last expression that parsed kept while one is half typed) and
 * the command line's `--filter` (inventory and health, text and JSON, exit 2 with the column).
 * Clusters are `sim gen` files edited with jansson so that the answers are known. */
#include <check.h>
#include <stdbool.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checklib.h"
#include "suitelib.h"
#include "testlib.h"
#include "tmuxlib.h"
#include "xp.h"

static char dir[96];
static char db[160];
static char file[256];
static char names[3][64];

static void setup_all(void)
{
	xp_tmux_suite_setup("tui_filter");
}

/* Three H100 nodes, every device idle at 40 C on NUMA 0 but: node 0's ACC0 at 91 C on NUMA 1,
 * node 1's ACC2 at 90 C on NUMA 0. `temp>85` finds nodes 0 and 1, `temp>85 & numa==0` only 1. */
static void setup(void)
{
	xp_tmux_test_dir(dir, sizeof dir);
	snprintf(db, sizeof db, "%s/x.db", dir);
	snprintf(file, sizeof file, "%s/c.json", dir);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "sim", "gen", "--nodes", "3", "--mix", "nvidia-h100:100", "-o", file,
				      NULL),
			 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_run_free(&r);
	json_error_t e;
	json_t *doc = json_load_file(file, 0, &e);
	ck_assert_msg(doc, "%s", e.text);
	size_t i, j;
	json_t *n, *d;
	json_array_foreach(json_object_get(doc, "nodes"), i, n) {
		snprintf(names[i], sizeof names[i], "%s", json_string_value(json_object_get(n, "name")));
		json_object_set_new(n, "state", json_string("up"));
		json_array_foreach(json_object_get(n, "devices"), j, d) {
			json_object_set_new(d, "temperature_c", json_real(40));
			json_object_set_new(d, "numa", json_integer(0));
			json_object_set_new(d, "health", json_string("ok"));
			json_object_set_new(d, "health_reasons", json_array());
			json_object_set_new(d, "allocations", json_array());
		}
	}
	json_t *nodes = json_object_get(doc, "nodes");
	json_t *d0 = json_array_get(json_object_get(json_array_get(nodes, 0), "devices"), 0);
	json_object_set_new(d0, "temperature_c", json_real(91));
	json_object_set_new(d0, "numa", json_integer(1));
	json_t *d1 = json_array_get(json_object_get(json_array_get(nodes, 1), "devices"), 2);
	json_object_set_new(d1, "temperature_c", json_real(90));
	ck_assert_int_eq(json_dump_file(doc, file, JSON_INDENT(1)), 0);
	json_decref(doc);
}

static void teardown(void)
{
	xp_tmux_test_dir_done(dir);
}

/* True when the screen shows node i's row (the name at a row's start, not in the filter). */
static bool row(const char *screen, int i)
{
	char want[96];
	snprintf(want, sizeof want, "\n  %s  ", names[i]);
	return strstr(screen, want) != NULL;
}

static void start(void)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
		 "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color XDG_STATE_HOME=%s %s --db %s --inventory %s; "
		 "echo $? > %s/rc",
		 dir, xp_bin(), db, file, dir);
	xp_tmux_start(cmd, 200, 50);
	free(xp_tmux_wait("3 nodes", false, 15));
}

START_TEST(console_fields_per_device)
{
	start();
	xp_tmux_keys("/");
	xp_tmux_literal("temp>85");
	xp_tmux_expect_all("$/temp>85", "$ 1 of 2 (1 filtered from 3)");
	char *s = xp_tmux_capture();
	ck_assert_msg(row(s, 0) && row(s, 1) && !row(s, 2), "%s", s);
	free(s);
	/* one device both hot and on NUMA 0: only node 1 */
	xp_tmux_literal(" & numa==0");
	xp_tmux_expect_all("$ 1 of 1 (2 filtered from 3)");
	s = xp_tmux_capture();
	ck_assert_msg(row(s, 1) && !row(s, 0) && !row(s, 2), "%s", s);
	free(s);
	/* or, negation, parentheses */
	xp_tmux_keys("C-u");
	char expr[256];
	snprintf(expr, sizeof expr, "!(name=%s | name=%s) | temp>90.5", names[0], names[1]);
	xp_tmux_literal(expr);
	xp_tmux_expect_all("$ 1 of 2 (1 filtered from 3)");
	s = xp_tmux_capture();
	ck_assert_msg(row(s, 0) && row(s, 2) && !row(s, 1), "%s", s);
	free(s);
	/* a bare word still looks in the node's text; two words mean both */
	xp_tmux_keys("C-u");
	xp_tmux_literal("h100 ");
	xp_tmux_literal(names[2]);
	xp_tmux_expect_all("$ 1 of 1 (2 filtered from 3)");
	xp_tmux_keys("Escape");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
}
END_TEST

START_TEST(console_errors_name_the_column)
{
	start();
	xp_tmux_keys("/");
	xp_tmux_literal("temp>85");
	xp_tmux_expect_all("$ 1 of 2 (1 filtered from 3)");
	/* half typed: the error beside the input, the rows of the last expression that parsed */
	xp_tmux_literal(" & numa=");
	xp_tmux_expect_all("$/temp>85 & numa=  column 15: a value must follow the operator",
			   "$ 1 of 2 (1 filtered from 3)");
	xp_tmux_keys("C-u");
	xp_tmux_literal("tmp>85");
	xp_tmux_expect_all("$/tmp>85  column 1: unknown field 'tmp' (fields: name state health");
	xp_tmux_keys("Enter");
	xp_tmux_expect_all("$ filter: column 1: unknown field 'tmp'");
	xp_tmux_keys("/");
	xp_tmux_keys("C-u");
	xp_tmux_literal("temp>>1");
	xp_tmux_expect_all("$/temp>>1  column 5: a value must follow the operator");
	xp_tmux_keys("C-u");
	xp_tmux_literal("(temp>1");
	xp_tmux_expect_all("$/(temp>1  column 1: '(' is not closed");
	xp_tmux_keys("Escape");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
}
END_TEST

START_TEST(cli_filter)
{
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--inventory", file, "inventory", "--filter",
				      "temp>85 & numa==0", NULL),
			 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, names[1]) && !strstr(r.out, names[0]) && !strstr(r.out, names[2]), "%s", r.out);
	xp_want_parts(r.out, "1 node, 8 accelerators", NULL);
	xp_run_free(&r);
	/* JSON: the same nodes */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--inventory", file, "--json", "inventory", "--filter",
				      "temp>85", NULL),
			 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	json_error_t e;
	json_t *doc = json_loads(r.out, 0, &e);
	ck_assert_msg(doc, "%s", e.text);
	ck_assert_int_eq(json_array_size(json_object_get(doc, "nodes")), 2);
	json_decref(doc);
	xp_run_free(&r);
	/* with named nodes: those named that match */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--inventory", file, "inventory", "--filter", "temp>85",
				      names[1], names[2], NULL),
			 0);
	ck_assert_msg(r.status == 0 && strstr(r.out, "1 node,") && strstr(r.out, names[1]), "%s", r.out);
	xp_run_free(&r);
	/* health: the problems of the nodes it keeps */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--inventory", file, "health", "--filter",
				      "label.nothere=x", NULL),
			 0);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	xp_run_free(&r);
	/* errors: exit 2, the column, before any discovery */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--inventory", "/nonexistent", "inventory", "--filter",
				      "temp>85 & nmua==0", NULL),
			 0);
	ck_assert_int_eq(r.status, XP_EXIT_USAGE);
	xp_want_parts(r.err, "xpool: inventory: --filter: column 11: unknown field 'nmua'", NULL);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--inventory", file, "health", "--filter", "temp>hot",
				      NULL),
			 0);
	ck_assert_int_eq(r.status, XP_EXIT_USAGE);
	xp_want_parts(r.err, "xpool: health: --filter: column 6: 'hot' is not a number for temp (in C)", NULL);
	xp_run_free(&r);
}
END_TEST

XP_DEFINE_SUITE(tui_filter,
	{"all", .timeout_s = 120, .setup = setup, .teardown = teardown, .setup_all = setup_all,
	 .teardown_all = xp_tmux_suite_teardown,
	 .tests = {console_fields_per_device, console_errors_name_the_column, cli_filter}})
