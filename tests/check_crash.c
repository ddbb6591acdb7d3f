/* check_crash.c: the store survives a writer killed in the middle of bulk recording.
 *
 * A child process records results in batches (each batch one transaction of several
 * xp_validate_record calls, every fourth batch a lone record in its own transaction)
 * and reports each batch on a pipe once COMMIT has returned. The parent SIGKILLs it at
 * a random moment, then opens the database and checks: PRAGMA integrity_check says ok,
 * every batch the child reported is there, and every batch that is there is whole (all
 * of its rows, each with its audit row). Many rounds, each on the database the last
 * one left behind. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store.h"
#include "suitelib.h"
#include "testlib.h"
#include "validate.h"

#define ROUNDS 20
#define BATCH 8          /* records per batch transaction */
#define MIN_MS 5         /* the kill comes between MIN_MS and MAX_MS after the fork */
#define MAX_MS 80
#define ENV "NVIDIA:H100:535.54.03"
#define CASE "bulk"
#define WRITER "crash-writer"

static char dir[128], path[192];

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/xpool-crash-%d", (int)getpid());
	mkdir(dir, 0700);
	snprintf(path, sizeof path, "%s/crash.db", dir);
}

static void teardown(void)
{
	xp_rm_rf(dir);
}

/* The child: records until it is killed. Exit codes say where it failed by itself. */
static void writer(int fd, int32_t first)
{
	setenv("XPOOL_ACTOR", WRITER, 1);
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_open(path, &err);
	if (!s)
		_exit(3);
	for (int32_t b = first;; b++) {
		char note[32];
		if (b % 4 == 0) {
			snprintf(note, sizeof note, "single %d", (int)b);
			if (xp_validate_record(s, ENV, CASE, XP_LAYER_DISCOVERED, XP_V_FAIL, note, NULL, "n1", &err) < 0)
				_exit(4);
		} else {
			snprintf(note, sizeof note, "batch %d", (int)b);
			if (xp_store_begin(s, &err) < 0)
				_exit(5);
			for (int i = 0; i < BATCH; i++)
				if (xp_validate_record(s, ENV, CASE, i % XP_LAYER_COUNT, XP_V_FAIL, note, NULL, "n1", &err) < 0)
					_exit(6);
			if (xp_store_commit(s, &err) < 0)
				_exit(7);
		}
		/* Only now is it committed; a kill before this write just leaves it unreported. */
		if (write(fd, &b, sizeof b) != (ssize_t)sizeof b)
			_exit(8);
	}
}

static long long q1(struct xp_store *s, const char *sql, const char *arg)
{
	sqlite3_stmt *st;
	ck_assert_int_eq(sqlite3_prepare_v2(s->db, sql, -1, &st, NULL), SQLITE_OK);
	if (arg)
		sqlite3_bind_text(st, 1, arg, -1, SQLITE_TRANSIENT);
	long long v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
	sqlite3_finalize(st);
	return v;
}

/* One batch as found in the database. */
struct found {
	int32_t batch;
	int rows;
	bool single;
};

static int found_cmp(const void *a, const void *b)
{
	int32_t x = ((const struct found *)a)->batch, y = ((const struct found *)b)->batch;
	return (x > y) - (x < y);
}

static void check_db(unsigned seed, int round, const int32_t *done, size_t n_done)
{
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_open(path, &err);
	ck_assert_msg(s != NULL, "seed %u round %d: %s", seed, round, err.msg);
	sqlite3_stmt *st;
	ck_assert_int_eq(sqlite3_prepare_v2(s->db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_msg(strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0, "seed %u round %d: %s", seed, round,
		      sqlite3_column_text(st, 0));
	sqlite3_finalize(st);

	/* Every batch that is there, in one pass (a query per batch would scan the table each time). */
	ck_assert_int_eq(sqlite3_prepare_v2(s->db, "SELECT note, count(*) FROM results WHERE actor = '" WRITER
						   "' GROUP BY note", -1, &st, NULL),
			 SQLITE_OK);
	struct found *f = NULL;
	size_t n = 0, cap = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *note = (const char *)sqlite3_column_text(st, 0);
		int b;
		if (n == cap)
			f = realloc(f, (cap = cap ? cap * 2 : 1024) * sizeof *f);
		bool single = sscanf(note, "single %d", &b) == 1;
		ck_assert_msg(single || sscanf(note, "batch %d", &b) == 1, "odd note %s", note);
		f[n++] = (struct found){b, sqlite3_column_int(st, 1), single};
	}
	sqlite3_finalize(st);
	/* A writer killed before its first commit leaves no batch: f is then NULL, which qsort
	 * and bsearch must not be given even with a count of 0. */
	if (n > 0)
		qsort(f, n, sizeof *f, found_cmp);
	/* Nothing half-written: every batch present has all its rows. */
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(f[i].rows == (f[i].single ? 1 : BATCH), "seed %u round %d: batch %d has %d rows", seed, round,
			      (int)f[i].batch, f[i].rows);
	/* Everything reported committed is there. */
	for (size_t i = 0; i < n_done; i++) {
		struct found key = {done[i], 0, false};
		ck_assert_msg(n > 0 && bsearch(&key, f, n, sizeof *f, found_cmp) != NULL,
			      "seed %u round %d: batch %d was committed and is gone", seed, round, (int)done[i]);
	}
	free(f);
	/* And no record without its audit row: both are one transaction. */
	long long rows = q1(s, "SELECT count(*) FROM results WHERE actor = ?", WRITER);
	long long audits = q1(s, "SELECT count(*) FROM audit WHERE action = 'validate.record' AND actor = ?", WRITER);
	ck_assert_msg(rows == audits, "seed %u round %d: %lld records, %lld audit rows", seed, round, rows, audits);
	xp_store_close(s);
}

START_TEST(kill_writer)
{
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_open(path, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	struct xp_env e = {.vendor = "NVIDIA", .model = "H100", .driver = "535.54.03"};
	ck_assert_int_eq(xp_validate_env_declare(s, &e, &err), 0);
	struct xp_case c = {.name = CASE};
	ck_assert_int_eq(xp_validate_case_add(s, &c, &err), 0);
	xp_store_close(s);

	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	size_t total = 0, cap = 4096, n_done = 0;
	int32_t *done = malloc(cap * sizeof *done);
	for (int round = 0; round < ROUNDS; round++) {
		int p[2];
		ck_assert_int_eq(pipe(p), 0);
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			close(p[0]);
			writer(p[1], (int32_t)round * 1000000);
		}
		close(p[1]);
		long ms = MIN_MS + rand_r(&seed) % (MAX_MS - MIN_MS + 1);
		struct timespec ts = {0, ms * 1000000L};
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "seed %u round %d: the writer stopped by itself (%d)",
			      seed, round, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		/* The pipe keeps what the child wrote before it died. */
		int32_t b;
		size_t before = n_done;
		while (read(p[0], &b, sizeof b) == (ssize_t)sizeof b) {
			if (n_done == cap)
				done = realloc(done, (cap *= 2) * sizeof *done);
			done[n_done++] = b;
		}
		close(p[0]);
		total += n_done - before;
		check_db(seed, round, done, n_done);
	}
	free(done);
	/* The rounds must have written something, or the test tested nothing. */
	ck_assert_msg(total > 0, "seed %u: no batch committed in %d rounds", seed, ROUNDS);
}
END_TEST

XP_DEFINE_SUITE(crash,
	{"sigkill", .timeout_s = 120, .setup = setup, .teardown = teardown,
	 .tests = {kill_writer}})
