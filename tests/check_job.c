/* check_job.c: `xpool job` and the job columns of `xpool queue`, run as the real binary on real
 * sqlite files: states and their events, audit rows, exit codes, --json shapes, submit
 * --dry-run's answers (start now, or wait with each reason a small cluster gives), estimated
 * starts from the simulator, reads that leave the file's bytes alone (and work on a 0444 file),
 * a schema-3 file read as having no jobs, and hostile input refused naming the field.
 *
 * The cluster: 2 nodes x 8 H100 (xpool sim gen), class h100 over them. Times are fixed with
 * XPOOL_NOW, so every expected time below is worked out by hand from the estimates. */
#include <check.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store.h"
#include "checklib.h"
#include "suitelib.h"
#include "testlib.h"

static char dir[128], db[192], inv[192];

static void run_in(struct xp_run *r, const char *in, va_list ap)
{
	char *argv[48] = {(char *)xp_bin(), "--db", db, "--inventory", inv};
	int n = 5;
	for (const char *s; (s = va_arg(ap, const char *)) && n < 47;)
		argv[n++] = (char *)s;
	argv[n] = NULL;
	ck_assert_int_eq(xp_run_argv(r, argv, in), 0);
}

/* Runs xpool --db db --inventory inv ARGS... */
static void q(struct xp_run *r, ...)
{
	va_list ap;
	va_start(ap, r);
	run_in(r, NULL, ap);
	va_end(ap);
}

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/xpool-job-%d", (int)getpid());
	snprintf(db, sizeof db, "%s/j.db", dir);
	snprintf(inv, sizeof inv, "%s/c.json", dir);
	xp_rm_rf(dir);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	setenv("XPOOL_ACTOR", "tester", 1);
	setenv("XPOOL_NOW", "1000", 1);
	struct xp_run r;
	char *argv[] = {(char *)xp_bin(), "sim", "gen", "--nodes", "2", "--mix", "nvidia-h100:100", "--seed", "1",
			"-o", inv, NULL};
	ck_assert_int_eq(xp_run_argv(&r, argv, NULL), 0);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	xp_run_free(&r);
	/* Idle whole devices: sim gen gives some of them jobs of its own, and MIG mode. */
	json_error_t e;
	json_t *c = json_load_file(inv, 0, &e);
	ck_assert_msg(c != NULL, "%s", e.text);
	json_t *nodes = json_object_get(c, "nodes"), *node, *dev;
	size_t i, k;
	json_array_foreach(nodes, i, node) json_array_foreach(json_object_get(node, "devices"), k, dev)
	{
		json_object_set_new(dev, "allocations", json_array());
		json_object_set_new(dev, "mig_mode", json_false());
	}
	ck_assert_int_eq(json_dump_file(c, inv, JSON_INDENT(1)), 0);
	json_decref(c);
}

static void teardown(void)
{
	unsetenv("XPOOL_NOW");
	xp_rm_rf(dir);
}

static long long sql_int(const char *sql)
{
	sqlite3 *raw;
	sqlite3_stmt *st;
	long long v = -1;
	ck_assert_int_eq(sqlite3_open_v2(db, &raw, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_msg(sqlite3_prepare_v2(raw, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(raw));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(raw);
	return v;
}

/* The JSON a command printed (status checked by the caller through *status). */
static json_t *json_of(int *status, ...)
{
	struct xp_run r;
	va_list ap;
	va_start(ap, status);
	run_in(&r, NULL, ap);
	va_end(ap);
	*status = r.status;
	json_error_t e;
	json_t *o = json_loads(r.out, 0, &e);
	ck_assert_msg(o != NULL, "not JSON (%s): %s%s", e.text, r.out, r.err);
	xp_run_free(&r);
	return o;
}

/* The queue the tests use: class h100 over the H100s; research may use 8 of them. */
static void queues(void)
{
	OK("queue", "class", "add", "h100", "--vendor", "NVIDIA", "--model", "*H100*");
	OK("queue", "add", "research", "--quota", "h100:devices=8/8/8");
	OK("queue", "add", "open");
}

/* The scheduler's state of job id, as stored. */
static void state_is(int id, const char *state)
{
	char sql[128];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM jobs WHERE id = %d AND state = '%s'", id, state);
	ck_assert_msg(sql_int(sql) == 1, "job %d is not %s", id, state);
}

/* Submit, hold, release, cancel: each state stored with its events, by whom, and the user's
 * actions audited (job.submit, job.hold, job.release, job.cancel) in the same transaction. */
START_TEST(states_and_events)
{
	queues();
	/* 8 devices: within research's 8 (quota max) and one whole node: starts at once. */
	OUT(0, "job 1 submitted to research: running on h100-0000", "job", "submit", "--queue", "research",
	    "--devices", "8", "--estimate", "1h", "--name", "first");
	state_is(1, "running");
	/* 8 more: research would use 16 of its max 8: waits for quota (reason 3). */
	OUT(0, "job 2 submitted to research: pending, QuotaExceeded", "job", "submit", "--queue", "research",
	    "--devices", "8", "--estimate", "30m");
	state_is(2, "pending");
	ck_assert_int_eq(sql_int("SELECT reason FROM jobs WHERE id = 2"), 3);
	/* Its reason is history too: pending -> pending, QuotaExceeded, with the words. */
	ck_assert_int_eq(sql_int("SELECT count(*) FROM job_events WHERE job = 2 AND from_state = 'pending' AND"
				 " to_state = 'pending' AND reason = 3 AND detail LIKE 'h100 devices 8/8 used%' AND"
				 " actor = 'scheduler'"),
			 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM job_events WHERE job = 1 AND from_state IS NULL AND"
				 " to_state = 'pending' AND actor = 'tester' AND time = 1000"),
			 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM job_events WHERE job = 1 AND to_state = 'running' AND"
				 " actor = 'scheduler' AND time = 1000"),
			 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM jobs WHERE id = 1 AND start = 1000 AND alloc LIKE"
				 " '%\"node\":\"h100-0000%'"),
			 1);

	OK("job", "hold", "2");
	state_is(2, "held");
	ck_assert_int_eq(sql_int("SELECT reason FROM jobs WHERE id = 2"), 7);
	FAILS(1, "job 2", "job", "hold", "2");      /* held already */
	FAILS(1, "job 1", "job", "release", "1");   /* running, not held */
	OK("job", "release", "2");
	state_is(2, "pending");
	/* Cancelling the running job frees research's quota: the same pass starts job 2. */
	OUT(0, "job 1 cancelled", "job", "cancel", "1");
	state_is(1, "cancelled");
	state_is(2, "running");
	FAILS(1, "cancelled", "job", "cancel", "1");
	ck_assert_int_eq(sql_int("SELECT count(*) FROM job_events WHERE job = 2 AND from_state = 'pending' AND"
				 " to_state = 'held' AND actor = 'tester'"),
			 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM job_events WHERE job = 2 AND from_state = 'held' AND"
				 " to_state = 'pending' AND actor = 'tester'"),
			 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM job_events WHERE job = 1 AND to_state = 'cancelled' AND"
				 " actor = 'tester'"),
			 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM job_events WHERE job = 2 AND to_state = 'running' AND"
				 " actor = 'scheduler'"),
			 1);
	/* The audit log: one row per user action, with the row before and after. */
	ck_assert_int_eq(sql_int("SELECT count(*) FROM audit WHERE action = 'job.submit'"), 2);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM audit WHERE action = 'job.hold' AND target = '2' AND"
				 " before LIKE '%\"state\":\"pending\"%' AND after LIKE '%\"state\":\"held\"%'"),
			 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM audit WHERE action = 'job.release' AND target = '2'"), 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM audit WHERE action = 'job.cancel' AND target = '1' AND"
				 " after LIKE '%\"state\":\"cancelled\"%'"),
			 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM audit WHERE action LIKE 'job.%' AND actor = 'tester'"), 5);

	/* A failing action writes nothing: two ids, the second unknown. */
	long long events = sql_int("SELECT count(*) FROM job_events"), audits = sql_int("SELECT count(*) FROM audit");
	FAILS(1, "no job 99", "job", "hold", "2", "99");
	ck_assert_int_eq(sql_int("SELECT count(*) FROM job_events"), events);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM audit"), audits);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM jobs WHERE id = 2 AND state = 'running'"), 1);
	FAILS(2, "not a job id", "job", "hold", "x");
	FAILS(2, "not a job id", "job", "show", "0");
	FAILS(1, "no job 42", "job", "show", "42");

	/* Estimated end: an hour and a half on, job 2 (started 1000, 30m) is past its estimate.
	 * A read shows it completed without writing; the next write records it. */
	setenv("XPOOL_NOW", "6400", 1);
	OUT(0, "completed", "job", "list", "--state", "completed");
	state_is(2, "running");
	OK("job", "submit", "--queue", "open", "--devices", "1", "--estimate", "10m");
	state_is(2, "completed");
	ck_assert_int_eq(sql_int("SELECT count(*) FROM job_events WHERE job = 2 AND to_state = 'completed' AND"
				 " detail = 'estimated end' AND time = 2800 AND actor = 'scheduler'"),
			 1);
	ck_assert_int_eq(sql_int("SELECT end FROM jobs WHERE id = 2"), 2800);

	/* Played forward between writes: job 4 (research's whole max, 1h from 6400) ends by its
	 * estimate at 10000; job 5, waiting for that quota, starts then (not at the next write's
	 * now) and, 30m later, ends at 11800: at a write at 12400 both are completed at those times. */
	OUT(0, "job 4 submitted to research: running", "job", "submit", "--queue", "research", "--devices", "8",
	    "--estimate", "1h");
	OUT(0, "job 5 submitted to research: pending", "job", "submit", "--queue", "research",
	    "--devices", "8", "--estimate", "30m");
	setenv("XPOOL_NOW", "12400", 1);
	OK("job", "submit", "--queue", "open", "--devices", "1", "--estimate", "10m");
	ck_assert_int_eq(sql_int("SELECT count(*) FROM jobs WHERE id = 4 AND state = 'completed' AND end = 10000"), 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM jobs WHERE id = 5 AND state = 'completed' AND start = 10000 AND"
				 " end = 11800"),
			 1);
}
END_TEST

/* list and show: columns, filters, positions, history, and the --json shapes. */
START_TEST(list_show_json)
{
	queues();
	OK("job", "submit", "--queue", "research", "--devices", "8", "--estimate", "1h", "--tenant", "alice");
	OK("job", "submit", "--queue", "research", "--devices", "4", "--estimate", "1h", "--tenant", "bob");
	OK("job", "submit", "--queue", "research", "--devices", "4", "--estimate", "1h", "--tenant", "bob",
	   "--priority", "5");
	setenv("XPOOL_NOW", "1600", 1);
	struct xp_run r;
	q(&r, "job", "list", NULL);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_msg(strstr(r.out, "ID") && strstr(r.out, "QUEUE") && strstr(r.out, "TENANT") && strstr(r.out, "STATE") &&
			      strstr(r.out, "PRIO") && strstr(r.out, "WAIT") && strstr(r.out, "POS") && strstr(r.out, "ETA") &&
			      strstr(r.out, "REASON"),
		      "%s", r.out);
	/* Job 3 (priority 5) is ahead of job 2 in research: positions 1/1 and 2/2 (in its queue,
	 * overall); both have waited 10m. */
	ck_assert_msg(strstr(r.out, "1/1") && strstr(r.out, "2/2") && strstr(r.out, "10m"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "QuotaExceeded"), "%s", r.out);
	xp_run_free(&r);
	q(&r, "job", "list", "--tenant", "alice", NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "alice") && !strstr(r.out, "bob"), "%s%s", r.out, r.err);
	xp_run_free(&r);
	q(&r, "job", "list", "--state", "running", "--queue", "research", NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "running") && !strstr(r.out, "pending"), "%s%s", r.out, r.err);
	xp_run_free(&r);
	q(&r, "job", "list", "--queue", "open", NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "no jobs match"), "%s%s", r.out, r.err);
	xp_run_free(&r);
	FAILS(2, "--state", "job", "list", "--state", "sleeping");
	FAILS(2, "does not apply", "job", "list", "--estimate", "1h");

	int st;
	json_t *o = json_of(&st, "--json", "job", "list", NULL);
	ck_assert_int_eq(st, 0);
	json_t *jobs = json_object_get(o, "jobs");
	ck_assert_uint_eq(json_array_size(jobs), 3);
	json_t *j3 = json_array_get(jobs, 2);
	ck_assert_int_eq(json_integer_value(json_object_get(j3, "id")), 3);
	ck_assert_str_eq(json_string_value(json_object_get(j3, "state")), "pending");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j3, "reason"), "code")), 3);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j3, "reason"), "name")), "QuotaExceeded");
	ck_assert_ptr_nonnull(json_string_value(json_object_get(json_object_get(j3, "reason"), "text")));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j3, "position"), "queue")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j3, "position"), "global")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(j3, "wait_s")), 600);
	/* Job 1 ends by its estimate at 1000 + 3600: research's quota frees then, for job 3. */
	ck_assert_str_eq(json_string_value(json_object_get(j3, "eta")), "1970-01-01T01:16:40Z");
	json_t *j1 = json_array_get(jobs, 0);
	ck_assert(json_is_null(json_object_get(j1, "reason")));
	ck_assert(json_is_null(json_object_get(j1, "position")));
	ck_assert_uint_eq(json_array_size(json_object_get(j1, "slots")), 8);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j1, "spec"), "queue")), "research");
	json_decref(o);

	q(&r, "job", "show", "3", NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "priority:    5") && strstr(r.out, "QuotaExceeded (3)") &&
			      strstr(r.out, "position:    1 in research, 1 overall") &&
			      strstr(r.out, "estimated start: 1970-01-01T01:16:40Z on h100-0000") && strstr(r.out, "- -> pending") &&
			      strstr(r.out, "tester") && strstr(r.out, "spec:"),
		      "%s%s", r.out, r.err);
	xp_run_free(&r);
	q(&r, "job", "show", "1", NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "placement:   running on h100-0000") &&
			      strstr(r.out, "admitted -> running") && strstr(r.out, "scheduler"),
		      "%s%s", r.out, r.err);
	xp_run_free(&r);
	o = json_of(&st, "--json", "job", "show", "2", NULL);
	ck_assert_int_eq(st, 0);
	json_t *h = json_object_get(o, "history");
	ck_assert_uint_ge(json_array_size(h), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(h, 0), "to")), "pending");
	ck_assert(json_is_true(json_object_get(json_array_get(h, 0), "recorded")));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(o, "position"), "queue")), 2);
	json_decref(o);

	/* Actions print the rows under --json. */
	o = json_of(&st, "--json", "job", "hold", "2", "3", NULL);
	ck_assert_int_eq(st, 0);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "jobs")), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(o, "jobs"), 1), "state")),
			 "held");
	json_decref(o);
	o = json_of(&st, "--json", "job", "submit", "--queue", "open", "--devices", "1", "--estimate", "5m", NULL);
	ck_assert_int_eq(st, 0);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "id")), 4);
	ck_assert_str_eq(json_string_value(json_object_get(o, "state")), "running");
	json_decref(o);
}
END_TEST

/* submit --dry-run: exit 0 and where it would start; exit 3 and why it would wait, with each
 * reason this cluster can give; nothing stored. */
START_TEST(dry_run)
{
	queues();
	/* An idle cluster: 8 devices start now, packed on one node. */
	OUT(0, "job would start now on h100-0000", "job", "submit", "--dry-run", "--queue", "research", "--devices",
	    "8", "--estimate", "1h");
	ck_assert_int_eq(sql_int("SELECT count(*) FROM jobs"), 0);
	OUT(0, "(spread)", "job", "submit", "--dry-run", "--queue", "open", "--devices", "1", "--estimate", "1h",
	    "--strategy", "spread");
	int st;
	json_t *o = json_of(&st, "--json", "job", "submit", "--dry-run", "--queue", "research", "--devices", "8",
			    "--estimate", "1h", NULL);
	ck_assert_int_eq(st, 0);
	ck_assert(json_is_true(json_object_get(o, "start_now")));
	ck_assert(json_is_null(json_object_get(o, "reason")));
	ck_assert_uint_eq(json_array_size(json_object_get(o, "nodes")), 1);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "preempts")), 0);
	json_decref(o);

	/* Proven to execute, on an empty validation matrix: NotValidated (5). */
	OUT(3, "job would wait: NotValidated (5)", "job", "submit", "--dry-run", "--queue", "open", "--validated",
	    "executes", "--estimate", "1h");
	/* 9 devices per replica: no node has 9, even idle: AffinityUnsatisfiable (6). */
	OUT(3, "job would wait: AffinityUnsatisfiable (6)", "job", "submit", "--dry-run", "--queue", "open", "--devices",
	    "9", "--estimate", "1h");

	OK("job", "submit", "--queue", "research", "--devices", "8", "--estimate", "1h");
	/* Research is at its max of 8: QuotaExceeded (3), first in line, starts when job 1's
	 * estimate ends (1000 + 3600 s). */
	OUT(3, "job would wait: QuotaExceeded (3): ", "job", "submit", "--dry-run", "--queue", "research", "--devices",
	    "1", "--estimate", "1h");
	OUT(3, "; position 1 in research, 1 overall; estimated start 1970-01-01T01:16:40Z on h100-0000", "job", "submit",
	    "--dry-run", "--queue", "research", "--devices", "1", "--estimate", "1h");
	o = json_of(&st, "--json", "job", "submit", "--dry-run", "--queue", "research", "--devices", "1", "--estimate",
		    "1h", NULL);
	ck_assert_int_eq(st, 3);
	ck_assert(json_is_false(json_object_get(o, "start_now")));
	json_t *reason = json_object_get(o, "reason");
	ck_assert_int_eq(json_integer_value(json_object_get(reason, "code")), 3);
	ck_assert_str_eq(json_string_value(json_object_get(reason, "name")), "QuotaExceeded");
	ck_assert_ptr_nonnull(json_string_value(json_object_get(reason, "text")));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(o, "position"), "queue")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(o, "position"), "global")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(o, "eta")), "1970-01-01T01:16:40Z");
	/* Waiting: nodes are where the estimate's simulation starts it (one device: one node). */
	ck_assert_uint_eq(json_array_size(json_object_get(o, "nodes")), 1);
	ck_assert(strncmp(json_string_value(json_array_get(json_object_get(o, "nodes"), 0)), "h100-0000", 9) == 0);
	json_decref(o);

	/* The other node busy too (queue open has no quota): two replicas of 8 would need both
	 * nodes, and only... none is free: Resources (1); with one node free (after a cancel) one
	 * of the two replicas fits: GangIncomplete (4). */
	OK("job", "submit", "--queue", "open", "--devices", "8", "--estimate", "2h");
	OUT(3, "job would wait: Resources (1)", "job", "submit", "--dry-run", "--queue", "open", "--devices", "1",
	    "--estimate", "1h");
	OK("job", "cancel", "2");
	OUT(3, "job would wait: GangIncomplete (4)", "job", "submit", "--dry-run", "--queue", "open", "--replicas", "2",
	    "--devices", "8", "--estimate", "1h");

	/* A queue on hold admits nothing: QueueInactive (8). */
	OK("queue", "set", "open", "--state", "hold");
	OUT(3, "job would wait: QueueInactive (8)", "job", "submit", "--dry-run", "--queue", "open", "--devices", "1",
	    "--estimate", "1h");
	ck_assert_int_eq(sql_int("SELECT count(*) FROM jobs"), 2);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM audit WHERE action = 'job.submit'"), 2);

	/* An unknown queue is a runtime error (1), as for a write. */
	FAILS(1, "no queue 'nope'", "job", "submit", "--dry-run", "--queue", "nope", "--devices", "1", "--estimate", "1h");
	FAILS(1, "no queue 'nope'", "job", "submit", "--queue", "nope", "--devices", "1", "--estimate", "1h");
}
END_TEST

/* A dry-run in the same second as the jobs already waiting sorts after them, as the real
 * submit does (ties of submit time go by id): in a strict queue behind a waiting gang it says
 * "behind job 2", as the submit that follows it does, not "would start now". */
START_TEST(dry_run_same_second)
{
	queues();
	OK("queue", "add", "s", "--ordering", "strict");
	OUT(0, "job 1 submitted to s: running", "job", "submit", "--queue", "s", "--devices", "8", "--estimate", "1h");
	OUT(0, "job 2 submitted to s: pending", "job", "submit", "--queue", "s", "--devices", "8", "--replicas", "2",
	    "--estimate", "1h");
	OUT(3, "job would wait: Priority (2): behind job 2; position 2 in s", "job", "submit", "--dry-run", "--queue",
	    "s", "--devices", "1", "--estimate", "1h");
	OUT(0, "job 3 submitted to s: pending, Priority: behind job 2", "job", "submit", "--queue", "s", "--devices",
	    "1", "--estimate", "1h");
}
END_TEST

/* Priority preemption inside a queue (within lower-priority): the dry-run names the victim
 * (the newest lower-priority job, Kueue's minimal set), the submit preempts it: running ->
 * preempted -> pending, its submit time kept, counted. */
START_TEST(preemption)
{
	OK("queue", "add", "p", "--within", "lower-priority");
	OK("job", "submit", "--queue", "p", "--devices", "8", "--estimate", "1h");
	setenv("XPOOL_NOW", "1100", 1);
	OK("job", "submit", "--queue", "p", "--devices", "8", "--estimate", "1h");
	state_is(1, "running");
	state_is(2, "running");
	struct xp_run r;
	q(&r, "job", "submit", "--dry-run", "--queue", "p", "--devices", "8", "--estimate", "1h", "--priority", "10",
	  NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "job would start now on h100-00002 (pack)\n  Preempts: 2\n"),
		      "%d: %s%s", r.status, r.out, r.err);
	xp_run_free(&r);
	int st;
	json_t *o = json_of(&st, "--json", "job", "submit", "--dry-run", "--queue", "p", "--devices", "8",
			    "--estimate", "1h", "--priority", "10", NULL);
	ck_assert_int_eq(st, 0);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "preempts")), 1);
	ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(o, "preempts"), 0)), 2);
	json_decref(o);
	/* Equal priority preempts nothing: it waits for Resources. */
	OUT(3, "job would wait: Resources (1)", "job", "submit", "--dry-run", "--queue", "p", "--devices", "8",
	    "--estimate", "1h");
	state_is(2, "running");
	OUT(0, "job 3 submitted to p: running on h100-00002; preempted 2\n", "job", "submit", "--queue", "p", "--devices",
	    "8", "--estimate", "1h", "--priority", "10");
	state_is(3, "running");
	state_is(2, "pending");
	ck_assert_int_eq(sql_int("SELECT count(*) FROM jobs WHERE id = 2 AND submit = 1100 AND preemptions = 1 AND"
				 " alloc IS NULL AND start IS NULL"),
			 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM job_events WHERE job = 2 AND from_state = 'running' AND"
				 " to_state = 'preempted' AND actor = 'scheduler'"),
			 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM job_events WHERE job = 2 AND from_state = 'preempted' AND"
				 " to_state = 'pending'"),
			 1);
}
END_TEST

/* A running job whose node is gone from the cluster (renamed in the inventory) is shown with
 * why it is not scheduled, holds nothing in the pass, and can still be cancelled. */
START_TEST(lost_node)
{
	OK("queue", "add", "open");
	OK("job", "submit", "--queue", "open", "--devices", "8", "--estimate", "1h");
	state_is(1, "running");
	json_error_t e;
	json_t *c = json_load_file(inv, 0, &e);
	ck_assert_ptr_nonnull(c);
	json_t *n0 = json_array_get(json_object_get(c, "nodes"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(n0, "name")), "h100-00001");
	json_object_set_new(n0, "name", json_string("h100-renamed"));
	ck_assert_int_eq(json_dump_file(c, inv, JSON_INDENT(1)), 0);
	json_decref(c);
	OUT(0, "(not scheduled: its devices are not in this cluster)", "job", "list");
	/* Its 8 devices are not counted: both nodes are free for two replicas of 8. */
	OUT(0, "h100-renamed", "job", "submit", "--dry-run", "--queue", "open", "--replicas", "2", "--devices", "8",
	    "--estimate", "1h");
	FAILS(1, "nothing to hold", "job", "hold", "1");
	OUT(0, "job 1 cancelled", "job", "cancel", "1");
	state_is(1, "cancelled");
	ck_assert_int_eq(sql_int("SELECT count(*) FROM jobs WHERE id = 1 AND end = 1000 AND alloc IS NULL"), 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM job_events WHERE job = 1 AND from_state = 'running' AND"
				 " to_state = 'cancelled' AND actor = 'tester' AND detail LIKE '%not in this cluster%'"),
			 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM audit WHERE action = 'job.cancel' AND target = '1'"), 1);
}
END_TEST

struct fileprint {
	char *bytes, *wal;
	size_t len, wal_len;
	struct timespec mtime;
};

static void fileprint(struct fileprint *f)
{
	struct xp_err err;
	struct stat st;
	char wal[256];
	memset(f, 0, sizeof *f);
	f->bytes = xp_read_file(db, 1 << 26, &f->len, &err);
	ck_assert_ptr_nonnull(f->bytes);
	ck_assert_int_eq(stat(db, &st), 0);
	f->mtime = st.st_mtim;
	snprintf(wal, sizeof wal, "%s-wal", db);
	if (stat(wal, &st) == 0)
		f->wal = xp_read_file(wal, 1 << 26, &f->wal_len, &err);
}

static void fileprint_same(struct fileprint *a, struct fileprint *b)
{
	ck_assert_uint_eq(a->len, b->len);
	ck_assert_int_eq(memcmp(a->bytes, b->bytes, a->len), 0);
	ck_assert(a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec);
	ck_assert_uint_eq(a->wal_len, b->wal_len);
	ck_assert(!a->wal_len || memcmp(a->wal, b->wal, a->wal_len) == 0);
	free(a->bytes);
	free(a->wal);
	free(b->bytes);
	free(b->wal);
}

/* Every read (list, show, submit --dry-run; text and JSON; also when a write would record
 * changes: an estimate ended) leaves the file's bytes alone, and works on a 0444 file. */
START_TEST(reads_never_write)
{
	queues();
	OK("job", "submit", "--queue", "research", "--devices", "8", "--estimate", "1h");
	OK("job", "submit", "--queue", "research", "--devices", "8", "--estimate", "1h");
	setenv("XPOOL_NOW", "5000", 1); /* job 1's estimate ended at 4600: a write would record it */
	const char *reads[][12] = {
		{"job", "list", NULL},
		{"job", "show", "1", NULL},
		{"job", "show", "2", NULL},
		{"job", "submit", "--dry-run", "--queue", "research", "--devices", "1", "--estimate", "1h", NULL},
		{"queue", "list", NULL},
		{"queue", "show", "research", NULL},
	};
	for (int pass = 0; pass < 2; pass++) {
		struct fileprint before, after;
		fileprint(&before);
		for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++)
			for (int json = 0; json < 2; json++) {
				struct xp_run r;
				char *argv[20] = {(char *)xp_bin(), "--db", db, "--inventory", inv};
				int n = 5;
				if (json)
					argv[n++] = "--json";
				for (int k = 0; reads[i][k]; k++)
					argv[n++] = (char *)reads[i][k];
				argv[n] = NULL;
				ck_assert_int_eq(xp_run_argv(&r, argv, NULL), 0);
				ck_assert_msg(r.status == 0 || r.status == 3, "%s %s: %d %s%s", reads[i][0], reads[i][1],
					      r.status, r.out, r.err);
				xp_run_free(&r);
			}
		fileprint(&after);
		fileprint_same(&before, &after);
		/* The same reads on a file nobody may write. */
		ck_assert_int_eq(chmod(db, 0444), 0);
		/* Shared on purpose: xpool makes the database and its -wal and -shm 0600 (check_files). */
		char side[256];
		snprintf(side, sizeof side, "%s-wal", db);
		chmod(side, 0644);
		snprintf(side, sizeof side, "%s-shm", db);
		chmod(side, 0644);
	}
	/* As a user who may write neither the file nor its directory (nobody, when the tests run as
	 * root, who writes whatever the mode says): reads work, a write fails saying so (exit 1). */
	struct fileprint before, after;
	fileprint(&before);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (getuid() == 0 && (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0))
			_exit(77);
		struct xp_run r;
		q(&r, "job", "list", NULL);
		if (r.status != 0 || !strstr(r.out, "completed")) {
			fprintf(stderr, "job list: %d %s%s\n", r.status, r.out, r.err);
			_exit(1);
		}
		xp_run_free(&r);
		/* Job 2 is running by now (it started when job 1's estimate ended): cancel is allowed. */
		q(&r, "job", "cancel", "2", NULL);
		if (r.status != 1 || !strstr(r.err, "read-only")) {
			fprintf(stderr, "job cancel: %d %s%s\n", r.status, r.out, r.err);
			_exit(2);
		}
		xp_run_free(&r);
		_exit(0);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "as nobody: %d", st);
	fileprint(&after);
	fileprint_same(&before, &after);
	ck_assert_int_eq(chmod(db, 0644), 0);
}
END_TEST

/* A database from before the job tables (schema 3): reads show no jobs without migrating or
 * writing; the first submit migrates it, keeping its queues. */
START_TEST(old_database)
{
	struct xp_store *s = xp_old_store(db, 3);
	ck_assert_int_eq(sqlite3_exec(s->db, "INSERT INTO queues(name, created) VALUES('kept', 1)", NULL, NULL, NULL),
			 SQLITE_OK);
	xp_store_close(s);
	struct fileprint before, after;
	fileprint(&before);
	OUT(0, "no jobs", "job", "list");
	OUT(0, "\"jobs\": []", "--json", "job", "list");
	FAILS(1, "no job 1", "job", "show", "1");
	OUT(0, "job would start now", "job", "submit", "--dry-run", "--queue", "kept", "--estimate", "1h");
	OUT(0, "kept", "queue", "list");
	fileprint(&after);
	fileprint_same(&before, &after);
	ck_assert_int_eq(sql_int("PRAGMA user_version"), 3);
	OK("job", "submit", "--queue", "kept", "--estimate", "1h");
	ck_assert_int_eq(sql_int("PRAGMA user_version"), XP_STORE_VERSION);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM jobs WHERE queue = 'kept'"), 1);
}
END_TEST

/* Hostile and malformed input: refused before anything is stored, naming the field. */
START_TEST(bad_input)
{
	queues();
	char path[256];
	snprintf(path, sizeof path, "%s/bad.json", dir);
	FILE *f = fopen(path, "w");
	fputs("{\"devices\": \"eight\"}", f);
	fclose(f);
	FAILS(2, "$.devices", "job", "submit", "-f", path, "--queue", "research", "--estimate", "1h");
	f = fopen(path, "w");
	fputs("{\"devices\": 1, \"gpus\": 2}", f);
	fclose(f);
	FAILS(2, "gpus", "job", "submit", "-f", path, "--queue", "research", "--estimate", "1h");
	f = fopen(path, "w");
	fputs("{\"devices\": 1,", f);
	fclose(f);
	FAILS(2, "bad.json", "job", "submit", "-f", path, "--queue", "research", "--estimate", "1h");
	/* Over the spec size limit (1 MiB). */
	f = fopen(path, "w");
	fputs("{\"name\": \"", f);
	for (int i = 0; i < (1 << 20) + 10; i++)
		fputc('x', f);
	fputs("\"}", f);
	fclose(f);
	FAILS(1, "bad.json", "job", "submit", "-f", path, "--queue", "research", "--estimate", "1h");
	/* A file with the queue inside, and flags that do not go with -f. */
	f = fopen(path, "w");
	fputs("{\"queue\": \"research\", \"devices\": 2}", f);
	fclose(f);
	FAILS(2, "-f and --devices", "job", "submit", "-f", path, "--devices", "1", "--estimate", "1h");
	OUT(0, "job 1 submitted to research", "job", "submit", "-f", path, "--estimate", "1h", "--priority", "3");
	ck_assert_int_eq(sql_int("SELECT priority FROM jobs WHERE id = 1"), 3);

	FAILS(2, "--queue", "job", "submit", "--devices", "1", "--estimate", "1h");
	FAILS(2, "--queue", "job", "submit", "--queue", "bad name", "--estimate", "1h");
	FAILS(2, "--tenant", "job", "submit", "--queue", "research", "--tenant", "../x", "--estimate", "1h");
	FAILS(2, "--estimate", "job", "submit", "--queue", "research");
	FAILS(2, "--estimate", "job", "submit", "--queue", "research", "--estimate", "5");
	FAILS(2, "--estimate", "job", "submit", "--queue", "research", "--estimate", "1x");
	FAILS(2, "--estimate", "job", "submit", "--queue", "research", "--estimate", "0m");
	FAILS(2, "--estimate", "job", "submit", "--queue", "research", "--estimate", "999999999999999999999d");
	FAILS(2, "--estimate", "job", "submit", "--queue", "research", "--estimate", "400d");
	FAILS(2, "--priority", "job", "submit", "--queue", "research", "--estimate", "1h", "--priority", "high");
	FAILS(2, "--devices", "job", "submit", "--queue", "research", "--estimate", "1h", "--devices", "-1");
	FAILS(2, "--strategy", "job", "submit", "--queue", "research", "--estimate", "1h", "--strategy", "random");
	FAILS(2, "not a job id", "job", "cancel", "1", "1.5");
	FAILS(2, "not a job id", "job", "cancel", "99999999999999999999999");
	FAILS(1, "named twice", "job", "cancel", "1", "1");
	FAILS(2, "which subcommand", "job");
	FAILS(2, "unknown subcommand", "job", "run");
	FAILS(2, "wrong number of arguments", "job", "show");
	FAILS(2, "wrong number of arguments", "job", "list", "3");
	setenv("XPOOL_NOW", "soon", 1);
	FAILS(2, "XPOOL_NOW", "job", "list");
	setenv("XPOOL_NOW", "1000", 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM jobs"), 1);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM audit WHERE action = 'job.submit'"), 1);
}
END_TEST

/* queue list/show gain use per class (used/deserved/max), borrowed, pending and running; a
 * queue with unfinished jobs cannot be removed. */
START_TEST(queue_usage)
{
	queues();
	OK("job", "submit", "--queue", "research", "--devices", "8", "--estimate", "1h");
	OK("job", "submit", "--queue", "research", "--devices", "2", "--estimate", "1h");
	OK("job", "submit", "--queue", "open", "--devices", "3", "--estimate", "1h");
	struct xp_run r;
	q(&r, "queue", "list", NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "PENDING") && strstr(r.out, "RUNNING") &&
			      strstr(r.out, "h100 8/8/8"),
		      "%s%s", r.out, r.err);
	xp_run_free(&r);
	q(&r, "queue", "show", "research", NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "jobs:        1 running, 1 pending"), "%s%s", r.out, r.err);
	xp_run_free(&r);
	int st;
	json_t *o = json_of(&st, "--json", "queue", "show", "research", NULL);
	ck_assert_int_eq(st, 0);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "running")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "pending")), 1);
	json_t *u = json_array_get(json_object_get(o, "quotas"), 0);
	ck_assert_msg(json_integer_value(json_object_get(u, "used")) == 8, "%s", json_dumps(o, 0));
	ck_assert_int_eq(json_integer_value(json_object_get(u, "borrowed")), 0);
	json_decref(o);
	o = json_of(&st, "--json", "queue", "list", NULL);
	ck_assert_int_eq(st, 0);
	json_t *qs = json_object_get(o, "queues");
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(qs, 0), "running")), 1); /* open */
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(qs, 0), "pending")), 0);
	json_decref(o);

	FAILS(1, "unfinished", "queue", "rm", "research");
	OK("job", "cancel", "1", "2");
	OK("queue", "rm", "research");
	/* Its finished jobs stay as history. */
	OUT(0, "cancelled", "job", "list", "--queue", "research");
}
END_TEST

XP_DEFINE_SUITE(job,
	{"cli", .timeout_s = 240, .setup = setup, .teardown = teardown,
	 .tests = {states_and_events, list_show_json, dry_run, dry_run_same_second, reads_never_write, old_database, bad_input,
		   queue_usage, preemption, lost_node}})
