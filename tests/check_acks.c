/* check_acks.c: acknowledged and snoozed problems (acks.h) in a real sqlite file: what is
 * stored, when a problem stops and starts shouting again (a snooze that ends, a changed reason
 * or level), the audit rows, the schema 4 to 5 migration and reading an older file; and the
 * `problem` command end to end (list order, ack, snooze with $XPOOL_NOW, unack, `health`
 * marking them and leaving them out of its exit status). */
#include <check.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acks.h"
#include "checklib.h"
#include "store.h"
#include "suitelib.h"
#include "testlib.h"
#include "xp.h"

static char dir[64];
static char db[128];

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/xpool-acks-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(db, sizeof db, "%s/x.db", dir);
	unsetenv("XPOOL_NOW");
	setenv("XPOOL_ACTOR", "tester", 1);
}

static void teardown(void)
{
	xp_rm_rf(dir);
}

static int count_rows(struct xp_store *s, const char *sql)
{
	sqlite3_stmt *st;
	ck_assert_int_eq(sqlite3_prepare_v2(s->db, sql, -1, &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	int n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return n;
}

START_TEST(ack_snooze_expiry)
{
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_open(db, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	struct xp_problem p[2] = {
		{.node = "gpu01", .what = "ACC3", .level = XP_HEALTH_FAIL, .reason = "XID 79: fell off the bus"},
		{.node = "gpu01", .what = "ACC3", .level = XP_HEALTH_FAIL, .reason = "uncorrectable ECC"},
	};
	ck_assert_int_eq(xp_acks_put(s, p, 2, XP_ACK_ACK, 1000, 0, "RMA 123", &err), 0);
	xp_store_close(s);

	/* Read back from the file by a new connection, as another process would. */
	s = xp_store_open_read(db, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	struct xp_acks a;
	ck_assert_int_eq(xp_acks_load(s, &a, &err), 0);
	ck_assert_uint_eq(a.n, 2);
	const struct xp_ack *k;
	ck_assert_int_eq(xp_ack_state(&a, &p[0], 5000, &k), XP_ACK_ACKED);
	ck_assert_str_eq(k->actor, "tester");
	ck_assert_str_eq(k->note, "RMA 123");
	ck_assert_int_eq((int)k->time, 1000);
	ck_assert_int_eq(xp_ack_state(&a, &p[1], 5000, NULL), XP_ACK_ACKED);
	/* Another reason, or the same words at another level, is a new problem: it shouts. */
	struct xp_problem q = p[0];
	q.reason = "XID 79: fell off the bus again";
	ck_assert_int_eq(xp_ack_state(&a, &q, 5000, &k), XP_ACK_OPEN);
	ck_assert_ptr_null(k);
	q = p[0];
	q.level = XP_HEALTH_WARN;
	ck_assert_int_eq(xp_ack_state(&a, &q, 5000, NULL), XP_ACK_OPEN);
	q = p[0];
	q.what[3] = '4';
	ck_assert_int_eq(xp_ack_state(&a, &q, 5000, NULL), XP_ACK_OPEN);
	xp_acks_free(&a);
	xp_store_close(s);

	/* A snooze replaces the acknowledgement, and ends: open again at its end, not before. */
	s = xp_store_open(db, &err);
	ck_assert_int_eq(xp_acks_put(s, p, 1, XP_ACK_SNOOZE, 2000, 2000 + 3600, NULL, &err), 0);
	ck_assert_int_eq(xp_acks_load(s, &a, &err), 0);
	ck_assert_int_eq(xp_ack_state(&a, &p[0], 2000 + 3599, NULL), XP_ACK_SNOOZED);
	ck_assert_int_eq(xp_ack_state(&a, &p[0], 2000 + 3600, NULL), XP_ACK_OPEN);
	ck_assert_int_eq(xp_ack_state(&a, &p[1], 2000 + 3600, NULL), XP_ACK_ACKED);
	xp_acks_free(&a);

	/* Un-acknowledging removes both rows, audited with what was there; again removes nothing. */
	size_t removed;
	ck_assert_int_eq(xp_acks_clear(s, "gpu01", "ACC3", &removed, &err), 0);
	ck_assert_uint_eq(removed, 2);
	ck_assert_int_eq(xp_acks_clear(s, "gpu01", "ACC3", &removed, &err), 0);
	ck_assert_uint_eq(removed, 0);
	ck_assert_int_eq(count_rows(s, "SELECT count(*) FROM acks"), 0);
	struct xp_audit *rows;
	size_t n;
	ck_assert_int_eq(xp_audit_list(s, 0, 0, &rows, &n, &err), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(rows[0].action, "problem.ack");
	ck_assert_str_eq(rows[0].target, "gpu01 ACC3");
	xp_want_parts(rows[0].after, "RMA 123", "uncorrectable ECC", "\"fail\"", NULL);
	ck_assert_str_eq(rows[1].action, "problem.snooze");
	xp_want_parts(rows[1].after, "\"until\":5600", NULL);
	ck_assert_str_eq(rows[2].action, "problem.unack");
	xp_want_parts(rows[2].before, "XID 79", "snooze", "ack", NULL);
	ck_assert_str_eq(rows[2].actor, "tester");
	xp_audit_free(rows, n);
	xp_store_close(s);
}
END_TEST

START_TEST(durations)
{
	struct xp_err err = {{0}};
	int64_t s;
	const struct {
		const char *text;
		int64_t secs;
	} good[] = {{"30m", 1800}, {"4h", 14400}, {"1d", 86400}, {"90s", 90}, {"15", 900}, {"1.5h", 5400}};
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		ck_assert_msg(xp_ack_duration(good[i].text, &s, &err) == 0, "%s: %s", good[i].text, err.msg);
		ck_assert_int_eq(s, good[i].secs);
	}
	const char *bad[] = {"", "0m", "-1h", "4y", "h", "400d", "1e400", "5 m"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		ck_assert_msg(xp_ack_duration(bad[i], &s, &err) < 0, "%s accepted", bad[i]);
	ck_assert_int_eq(xp_ack_duration("4y", &s, &err), -1);
	xp_want_parts(err.msg, "'4y'", "not s, m, h or d", NULL);
}
END_TEST

/* A schema-4 file gets the acks table on its first writable open; read without migrating it
 * has no acknowledgements (not an error). */
START_TEST(migration_to_acks)
{
	struct xp_err err = {{0}};
	struct xp_store *s = xp_old_store(db, 4);
	ck_assert_int_eq(count_rows(s, "SELECT count(*) FROM sqlite_master WHERE name = 'acks'"), 0);
	ck_assert_int_eq(sqlite3_exec(s->db, "INSERT INTO settings(key, value) VALUES('kept', '1')", NULL, NULL, NULL),
			 SQLITE_OK);
	xp_store_close(s);

	s = xp_store_open_read(db, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	ck_assert_int_eq(s->version, 4);
	struct xp_acks a = {0};
	ck_assert_int_eq(xp_acks_load(s, &a, &err), 0);
	ck_assert_uint_eq(a.n, 0);
	xp_store_close(s);

	s = xp_store_open(db, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	ck_assert_int_eq(count_rows(s, "PRAGMA user_version"), 5);
	ck_assert_int_eq(count_rows(s, "SELECT count(*) FROM settings WHERE key = 'kept'"), 1);
	struct xp_problem p = {.node = "n1", .what = "node", .level = XP_HEALTH_WARN, .reason = "degraded"};
	ck_assert_int_eq(xp_acks_put(s, &p, 1, XP_ACK_ACK, 1, 0, NULL, &err), 0);
	/* The table's checks hold: a kind other than ack or snooze is refused. */
	ck_assert_int_ne(sqlite3_exec(s->db,
				      "INSERT INTO acks(node, what, reason, level, kind, time, actor)"
				      " VALUES('a', 'b', 'c', 'warn', 'mute', 1, 'x')",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	xp_store_close(s);
}
END_TEST

/* `xpool sim gen` of 4 H100 nodes, every one healthy but three problems of our own. */
static const char *inventory(void)
{
	static char path[160];
	snprintf(path, sizeof path, "%s/c.json", dir);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "sim", "gen", "--nodes", "4", "--mix", "nvidia-h100:100", "-o", path,
				      NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_run_free(&r);
	json_error_t e;
	json_t *doc = json_load_file(path, 0, &e);
	ck_assert_ptr_nonnull(doc);
	size_t i, j;
	json_t *n, *d;
	json_array_foreach(json_object_get(doc, "nodes"), i, n) {
		json_object_set_new(n, "state", json_string(i == 2 ? "degraded" : "up"));
		json_object_set_new(n, "warnings", json_array());
		json_array_foreach(json_object_get(n, "devices"), j, d) {
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

/* xpool --db DB --inventory F ARGS...: the run (caller frees). */
#define XP(r, ...) ck_assert_int_eq(xp_run_xpool(r, NULL, "--db", db, "--inventory", inv, __VA_ARGS__, NULL), 0)

START_TEST(problem_command)
{
	const char *inv = inventory();
	struct xp_run r;
	/* Most severe first: the fail, the degraded node, then the warn device. */
	XP(&r, "problem", "list");
	ck_assert_msg(r.status == 0, "%s", r.err);
	const char *f = strstr(r.out, "h100-00004  ACC5  XID 79"), *nd = strstr(r.out, "h100-00003  node  degraded"),
		   *w = strstr(r.out, "h100-00001  ACC1  temperature 86 C");
	ck_assert_msg(f && nd && w && f < nd && nd < w, "%s", r.out);
	xp_run_free(&r);
	/* Looking never made the database. */
	ck_assert_int_ne(access(db, F_OK), 0);

	XP(&r, "problem", "ack", "h100-00004", "ACC5", "--note", "RMA 7");
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_want_parts(r.out, "h100-00004 ACC5: acknowledged (1 problem)", NULL);
	xp_run_free(&r);
	/* Acknowledged: at the bottom, saying who; health marks it and its exit status no longer fails. */
	XP(&r, "problem", "list");
	const char *ack = strstr(r.out, "acked by tester");
	w = strstr(r.out, "temperature 86 C");
	ck_assert_msg(ack && w && w < ack, "%s", r.out);
	xp_run_free(&r);
	XP(&r, "health");
	ck_assert_int_eq(r.status, 0);
	xp_want_parts(r.out, "STATE", "XID 79: fell off the bus  acked", NULL);
	xp_run_free(&r);
	XP(&r, "--json", "problem", "list");
	xp_want_parts(r.out, "\"state\": \"acked\"", "\"by\": \"tester\"", "\"note\": \"RMA 7\"", NULL);
	xp_run_free(&r);

	/* A snooze ends: with $XPOOL_NOW as the clock, 30 minutes later it shouts again. */
	setenv("XPOOL_NOW", "1000000", 1);
	XP(&r, "problem", "snooze", "h100-00001", "ACC1", "--for", "30m");
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_run_free(&r);
	setenv("XPOOL_NOW", "1001799", 1);
	XP(&r, "--json", "problem", "list");
	json_t *doc = json_loads(r.out, 0, NULL);
	ck_assert_ptr_nonnull(doc);
	json_t *last = json_array_get(json_object_get(doc, "problems"), 2);
	ck_assert_str_eq(json_string_value(json_object_get(last, "what")), "ACC1");
	ck_assert_str_eq(json_string_value(json_object_get(last, "state")), "snoozed");
	ck_assert_int_eq(json_integer_value(json_object_get(last, "until")), 1001800);
	json_decref(doc);
	xp_run_free(&r);
	setenv("XPOOL_NOW", "1001800", 1);
	XP(&r, "health", "--fail-on", "warn");
	ck_assert_int_eq(r.status, XP_EXIT_PROBLEMS);
	xp_want_parts(r.out, "h100-00001  ACC1  warn   temperature 86 C          open", NULL);
	xp_run_free(&r);
	unsetenv("XPOOL_NOW");

	/* unack: the row shouts again; a second time says nothing was acknowledged. */
	XP(&r, "problem", "unack", "h100-00004", "ACC5");
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_run_free(&r);
	XP(&r, "health");
	ck_assert_int_eq(r.status, XP_EXIT_PROBLEMS);
	xp_run_free(&r);
	XP(&r, "problem", "unack", "h100-00004", "ACC5");
	ck_assert_int_eq(r.status, XP_EXIT_ERROR);
	xp_want_parts(r.err, "nothing is acknowledged or snoozed for h100-00004 ACC5", NULL);
	xp_run_free(&r);

	/* Audited: each change with who made it. */
	XP(&r, "audit");
	xp_want_parts(r.out, "problem.ack", "problem.snooze", "problem.unack", "h100-00004 ACC5", NULL);
	xp_run_free(&r);

	/* Bad input: clear errors, nothing written. */
	XP(&r, "problem", "ack", "h100-00002", "ACC0");
	ck_assert_int_eq(r.status, XP_EXIT_ERROR);
	xp_want_parts(r.err, "h100-00002 has no problem ACC0 now", NULL);
	xp_run_free(&r);
	XP(&r, "problem", "ack", "nosuch", "ACC0");
	xp_want_parts(r.err, "no node named nosuch", NULL);
	xp_run_free(&r);
	XP(&r, "problem", "snooze", "h100-00004", "ACC5", "--for", "5q");
	ck_assert_int_eq(r.status, XP_EXIT_USAGE);
	xp_want_parts(r.err, "--for '5q'", NULL);
	xp_run_free(&r);
	XP(&r, "problem", "ack", "h100-00004", "ACC5", "--for", "1h");
	ck_assert_int_eq(r.status, XP_EXIT_USAGE);
	xp_run_free(&r);
	XP(&r, "problem", "mute", "h100-00004", "ACC5");
	ck_assert_int_eq(r.status, XP_EXIT_USAGE);
	xp_run_free(&r);
}
END_TEST

/* A node's rows share WHAT ("node"): --reason acknowledges one of them, so quieting a warning
 * of a down node leaves the node down shouting (health still exits 5). */
START_TEST(ack_one_reason)
{
	const char *inv = inventory();
	json_error_t e;
	json_t *doc = json_load_file(inv, 0, &e);
	ck_assert_ptr_nonnull(doc);
	json_t *n = json_array_get(json_object_get(doc, "nodes"), 1);
	json_object_set_new(n, "state", json_string("down"));
	json_object_set_new(n, "warnings", json_pack("[s]", "nvidia-smi line 3: unexpected row"));
	ck_assert_int_eq(json_dump_file(doc, inv, 0), 0);
	json_decref(doc);
	struct xp_run r;
	XP(&r, "problem", "ack", "h100-00002", "node", "--reason", "nvidia-smi line 3: unexpected row");
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_want_parts(r.out, "h100-00002 node: acknowledged (1 problem)", NULL);
	xp_run_free(&r);
	XP(&r, "health");
	ck_assert_int_eq(r.status, XP_EXIT_PROBLEMS);
	xp_want_parts(r.out, "h100-00002  node  fail   down", NULL);
	xp_run_free(&r);
	XP(&r, "problem", "ack", "h100-00002", "node", "--reason", "no such reason");
	ck_assert_int_eq(r.status, XP_EXIT_ERROR);
	xp_want_parts(r.err, "h100-00002 has no problem node \"no such reason\" now", NULL);
	xp_run_free(&r);
}
END_TEST

XP_DEFINE_SUITE(acks, {"all", .timeout_s = 120, .setup = setup, .teardown = teardown,
		       .tests = {ack_snooze_expiry, durations, migration_to_acks, problem_command, ack_one_reason}})
