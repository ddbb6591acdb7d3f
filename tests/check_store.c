/* check_store.c: the database: migrations, version refusal, audit rows, baselines
 * feeding ECU, settings and retention, two writers at once, read-only files. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <math.h>
#include <pwd.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "normalize.h"
#include "store.h"
#include "checklib.h"
#include "suitelib.h"
#include "testlib.h"

static char dir[128], path[192];

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/xpool-store-%d", (int)getpid());
	snprintf(path, sizeof path, "%s/sub/dir/x.db", dir);
	setenv("XPOOL_ACTOR", "tester", 1);
}

static void teardown(void)
{
	xp_rm_rf(dir);
}

static int table_has(struct xp_store *s, const char *sql)
{
	sqlite3_stmt *st;
	ck_assert_int_eq(sqlite3_prepare_v2(s->db, sql, -1, &st, NULL), SQLITE_OK);
	int rc = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
	sqlite3_finalize(st);
	return rc;
}

START_TEST(migrations)
{
	struct xp_err err = {{0}};
	/* A database as the first schema version left it. */
	struct xp_store *s = xp_store_open_existing(":memory:", &err);
	ck_assert_ptr_nonnull(s);
	xp_store_close(s);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	char old[256];
	snprintf(old, sizeof old, "%s/v1.db", dir);
	s = xp_old_store(old, 1);
	ck_assert_int_eq(table_has(s, "PRAGMA user_version"), 1);
	ck_assert_int_eq(table_has(s, "SELECT count(*) FROM sqlite_master WHERE name = 'results_cell'"), 0);
	ck_assert_int_eq(sqlite3_exec(s->db, "INSERT INTO cases(name, created) VALUES('kept', 1)", NULL, NULL, NULL),
			 SQLITE_OK);
	xp_store_close(s);

	/* Opening with this xpool migrates it forward, keeping the data. */
	s = xp_store_open(old, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	ck_assert_int_eq(s->version, 1);
	ck_assert_int_eq(table_has(s, "PRAGMA user_version"), XP_STORE_VERSION);
	ck_assert_int_eq(table_has(s, "SELECT count(*) FROM sqlite_master WHERE name = 'results_cell'"), 1);
	ck_assert_int_eq(table_has(s, "SELECT count(*) FROM cases WHERE name = 'kept'"), 1);
	ck_assert_int_eq(table_has(s, "PRAGMA foreign_keys"), 1);
	char *mode = NULL;
	sqlite3_stmt *st;
	sqlite3_prepare_v2(s->db, "PRAGMA journal_mode", -1, &st, NULL);
	if (sqlite3_step(st) == SQLITE_ROW)
		mode = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	ck_assert_str_eq(mode, "wal");
	free(mode);
	/* A newer xpool's database is refused with a clear message. */
	ck_assert_int_eq(sqlite3_exec(s->db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
	xp_store_close(s);
	ck_assert_ptr_null(xp_store_open(old, &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "schema version 99 is newer than this xpool understands"));
	/* Not a database at all. */
	char junk[256];
	snprintf(junk, sizeof junk, "%s/junk.db", dir);
	FILE *f = fopen(junk, "w");
	fputs("this is not sqlite, just text long enough to be looked at by sqlite\n", f);
	fclose(f);
	ck_assert_ptr_null(xp_store_open(junk, &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "file is not a database"));
}
END_TEST

START_TEST(default_path_and_dirs)
{
	setenv("XDG_STATE_HOME", dir, 1);
	char *p = xp_store_default_path();
	char want[256];
	snprintf(want, sizeof want, "%s/xpool/xpool.db", dir);
	ck_assert_str_eq(p, want);
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_open(NULL, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	xp_store_close(s);
	struct stat st;
	char d[256];
	snprintf(d, sizeof d, "%s/xpool", dir);
	ck_assert_int_eq(stat(d, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	ck_assert_int_eq(stat(p, &st), 0);
	free(p);
	unsetenv("XDG_STATE_HOME");
	/* Parents of an explicit path are made too. */
	s = xp_store_open(path, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	xp_store_close(s);
}
END_TEST

START_TEST(audit_and_baselines)
{
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_open(":memory:", &err);
	ck_assert_ptr_nonnull(s);
	struct xp_baseline b = {.model = "H100 80GB HBM3", .driver = "535.54.03", .benchmark = "llm-train",
				.coefficient = 0.8, .verified = false};
	ck_assert_int_eq(xp_baseline_add(s, &b, &err), 0);
	b.coefficient = 0.9;
	b.verified = true;
	ck_assert_int_eq(xp_baseline_add(s, &b, &err), 0);
	b.coefficient = 0.7; /* newer but unverified: the verified one still wins */
	b.verified = false;
	ck_assert_int_eq(xp_baseline_add(s, &b, &err), 0);
	ck_assert(xp_baseline_coefficient(s, "H100 80GB HBM3", "535.54.03") == 0.9);
	ck_assert(isnan(xp_baseline_coefficient(s, "H100 80GB HBM3", "550.0")));
	b.coefficient = -1;
	ck_assert_int_eq(xp_baseline_add(s, &b, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "must be a positive number"));

	struct xp_audit *rows;
	size_t n;
	ck_assert_int_eq(xp_audit_list(s, 0, 0, &rows, &n, &err), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(rows[1].actor, "tester");
	ck_assert_str_eq(rows[1].action, "baseline.add");
	ck_assert_str_eq(rows[1].target, "baseline H100 80GB HBM3 / 535.54.03");
	ck_assert_ptr_null(rows[1].before);
	ck_assert_ptr_nonnull(strstr(rows[1].after, "\"coefficient\":0.9"));
	xp_audit_free(rows, n);

	/* The hook: ECU uses the stored coefficient and says so. */
	xp_store_use_baselines(s);
	struct xp_err e2 = {{0}};
	static const char man[] = "[adapter]\nname = nvidia\nvendor = NVIDIA\n"
				  "[model H100 80GB HBM3]\nmatch = *H100*\npeak = bf16 1000 TFLOPS\n";
	struct xp_manifest *m = xp_manifest_parse(man, sizeof man - 1, "m", &e2);
	ck_assert_ptr_nonnull(m);
	struct xp_node *node = xp_node_new("n");
	struct xp_raw_node *raw = calloc(1, sizeof *raw);
	xp_raw_node_init(raw);
	struct xp_raw_device *d = &raw->devices[raw->n_devices++];
	xp_raw_device_init(d);
	snprintf(d->name, sizeof d->name, "NVIDIA H100 80GB HBM3");
	snprintf(d->driver, sizeof d->driver, "535.54.03");
	xp_normalize_merge(node, raw, m, "nvidia");
	ck_assert(fabs(node->devices[0].ecu - 900) < 1e-9);
	ck_assert_str_eq(node->devices[0].ecu_basis, "bf16 1000 TFLOPS x 0.90 (baseline)");
	xp_store_use_baselines(NULL);
	xp_node_free(node);
	free(raw);
	xp_manifest_free(m);
	xp_store_close(s);
}
END_TEST

START_TEST(snapshots_and_retention)
{
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_open(":memory:", &err);
	ck_assert_ptr_nonnull(s);
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *n = xp_node_new("n1");
	struct xp_device *d = xp_node_add_device(n);
	d->pci_bus_id = xp_strdup("0000:3b:00.0");
	d->utilization_pct = 42;
	xp_node_links_reset(n);
	xp_cluster_add(c, n);
	time_t now = 1700000000;
	ck_assert_int_eq(xp_store_snapshot(s, c, now - 10 * 86400, &err), 0);
	ck_assert_int_eq(xp_store_snapshot(s, c, now, &err), 0);
	/* The 10-day-old rows went when the newer snapshot was taken (7-day default). */
	ck_assert_int_eq(table_has(s, "SELECT count(*) FROM samples"), 1);
	ck_assert_int_eq(table_has(s, "SELECT count(*) FROM snapshots"), 1);
	ck_assert_int_eq(xp_store_set_setting(s, "retention_days", "30", &err), 0);
	char *v;
	ck_assert_int_eq(xp_store_setting(s, "retention_days", &v, &err), 0);
	ck_assert_str_eq(v, "30");
	free(v);
	ck_assert_int_eq(xp_store_snapshot(s, c, now - 20 * 86400, &err), 0);
	ck_assert_int_eq(xp_store_snapshot(s, c, now, &err), 0);
	ck_assert_int_eq(table_has(s, "SELECT count(*) FROM samples"), 3);
	ck_assert_int_eq(table_has(s, "SELECT count(*) FROM audit WHERE action = 'setting.set'"), 1);
	xp_cluster_free(c);
	xp_store_close(s);
}
END_TEST

/* Two processes writing to one database at once: the busy timeout lets both finish. */
START_TEST(two_writers)
{
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_open(path, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	xp_store_close(s);
	pid_t kids[2];
	for (int k = 0; k < 2; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			struct xp_err e = {{0}};
			struct xp_store *w = xp_store_open(path, &e);
			if (!w)
				_exit(2);
			for (int i = 0; i < 200; i++) {
				char key[32];
				snprintf(key, sizeof key, "k%d-%d", k, i);
				if (xp_store_set_setting(w, key, "v", &e) < 0)
					_exit(1);
			}
			xp_store_close(w);
			_exit(0);
		}
	}
	for (int k = 0; k < 2; k++) {
		int st;
		waitpid(kids[k], &st, 0);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer %d failed", k);
	}
	s = xp_store_open(path, &err);
	ck_assert_int_eq(table_has(s, "SELECT count(*) FROM settings"), 400);
	ck_assert_int_eq(table_has(s, "SELECT count(*) FROM audit"), 400);
	xp_store_close(s);
}
END_TEST

/* Several processes opening a database that does not exist yet: each migration step is
 * applied once, and every process gets a working database. */
START_TEST(first_open_race)
{
	for (int round = 0; round < 5; round++) {
		char p[256];
		snprintf(p, sizeof p, "%s/race%d.db", dir, round);
		mkdir(dir, 0755);
		pid_t kids[4];
		for (int k = 0; k < 4; k++) {
			kids[k] = fork();
			if (kids[k] == 0) {
				struct xp_err e = {{0}};
				struct xp_store *w = xp_store_open(p, &e);
				if (!w)
					_exit(2);
				char key[16];
				snprintf(key, sizeof key, "k%d", k);
				int rc = xp_store_set_setting(w, key, "v", &e);
				xp_store_close(w);
				_exit(rc < 0 ? 1 : 0);
			}
		}
		for (int k = 0; k < 4; k++) {
			int st;
			waitpid(kids[k], &st, 0);
			ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "round %d: process %d failed", round, k);
		}
	}
}
END_TEST

/* A read-only database: a clear error, nothing half-done. */
START_TEST(read_only)
{
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_open(path, &err);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(xp_store_set_setting(s, "a", "1", &err), 0);
	xp_store_close(s);
	/* Opened read-only (file modes do not stop root, sqlite's read-only open does). */
	s = xp_store_open_existing(path, &err);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(xp_store_set_setting(s, "b", "2", &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, path));
	ck_assert_int_eq(table_has(s, "SELECT count(*) FROM settings"), 1);
	ck_assert_int_eq(table_has(s, "SELECT count(*) FROM audit"), 1);
	xp_store_close(s);
}
END_TEST

/* A database made by xp_store_open at p with a setting and an audit row, closed (so its WAL
 * was checkpointed into the file and the -wal and -shm files are gone). */
static void make_db(const char *p)
{
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_open(p, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	ck_assert_int_eq(xp_store_set_setting(s, "retention_days", "30", &err), 0);
	xp_store_close(s);
	char side[256];
	snprintf(side, sizeof side, "%s-wal", p);
	ck_assert_int_ne(access(side, F_OK), 0);
}

/* In a child that dropped to the nobody user (file modes do not stop root): reads through
 * xp_store_open_read work, a write is refused naming the file and the write, `db backup`
 * copies it to backup; exits 0 when all held, 77
 * when the uid cannot be dropped. */
static int as_nobody(const char *p, const char *backup)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (getuid() == 0 && (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0))
			_exit(77);
		struct xp_err err = {{0}};
		struct xp_store *s = xp_store_open_read(p, &err);
		if (!s) {
			fprintf(stderr, "open_read: %s\n", err.msg);
			_exit(1);
		}
		char *v = NULL;
		if (xp_store_setting(s, "retention_days", &v, &err) < 0 || !v || strcmp(v, "30") != 0) {
			fprintf(stderr, "setting: %s\n", err.msg);
			_exit(2);
		}
		free(v);
		if (xp_store_set_setting(s, "retention_days", "3", &err) == 0 || !strstr(err.msg, p) ||
		    !strstr(err.msg, "reading only")) {
			fprintf(stderr, "write: %s\n", err.msg);
			_exit(3);
		}
		xp_store_close(s);
		/* The command line too: db info and db check read it, a write says why it cannot. */
		struct xp_run r;
		if (xp_run_xpool(&r, NULL, "--db", p, "db", "info", NULL) != 0 || r.status != 0 ||
		    !strstr(r.out, "settings   1 row")) {
			fprintf(stderr, "db info: %d: %s%s\n", r.status, r.out, r.err);
			_exit(4);
		}
		xp_run_free(&r);
		if (xp_run_xpool(&r, NULL, "--db", p, "db", "check", NULL) != 0 || r.status != 0) {
			fprintf(stderr, "db check: %d: %s%s\n", r.status, r.out, r.err);
			_exit(5);
		}
		xp_run_free(&r);
		/* The refusal names the file and the write that was refused, not the open's first read. */
		if (xp_run_xpool(&r, NULL, "--db", p, "db", "set", "retention_days", "3", NULL) != 0 ||
		    r.status != 1 || !strstr(r.err, "read-only") || !strstr(r.err, p) ||
		    !strstr(r.err, "writing a setting") || strstr(r.err, "schema version")) {
			fprintf(stderr, "db set: %d: %s%s\n", r.status, r.out, r.err);
			_exit(6);
		}
		xp_run_free(&r);
		struct xp_baseline b = {.model = "A100", .driver = "535", .benchmark = "b", .coefficient = 1.5};
		s = xp_store_open(p, &err);
		if (!s || xp_baseline_add(s, &b, &err) == 0 || !strstr(err.msg, p) ||
		    !strstr(err.msg, "recording a baseline") || !strstr(err.msg, "read-only here")) {
			fprintf(stderr, "baseline add: %s\n", err.msg);
			_exit(7);
		}
		xp_store_close(s);
		if (xp_run_xpool(&r, NULL, "--db", p, "db", "vacuum", NULL) != 0 || r.status != 1 ||
		    !strstr(r.err, p) || !strstr(r.err, "vacuuming: the database is read-only here")) {
			fprintf(stderr, "db vacuum: %d: %s%s\n", r.status, r.out, r.err);
			_exit(9);
		}
		xp_run_free(&r);
		/* A backup only reads the database. */
		if (xp_run_xpool(&r, NULL, "--db", p, "db", "backup", backup, NULL) != 0 || r.status != 0) {
			fprintf(stderr, "db backup: %d: %s%s\n", r.status, r.out, r.err);
			_exit(8);
		}
		xp_run_free(&r);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A database the user may only read (file 0444 in a directory 0555, no -wal or -shm that
 * could be created): read commands work, writes are refused naming the file. */
START_TEST(read_only_user)
{
	struct xp_err err = {{0}};
	char ro[256], db[300];
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(ro, sizeof ro, "%s/ro", dir);
	ck_assert_int_eq(mkdir(ro, 0755), 0);
	snprintf(db, sizeof db, "%s/x.db", ro);
	/* No database yet: an error that names the file, and a way to tell. */
	ck_assert_ptr_null(xp_store_open_read(db, &err));
	ck_assert_ptr_nonnull(strstr(err.msg, db));
	ck_assert_ptr_nonnull(strstr(err.msg, "no database yet"));
	ck_assert(xp_store_missing(db));
	make_db(db);
	ck_assert(!xp_store_missing(db));
	ck_assert_int_eq(chmod(db, 0444), 0);
	ck_assert_int_eq(chmod(ro, 0555), 0);
	/* The nobody user must reach the directory (the scratch one is 0755 under /tmp). */
	/* Somewhere the nobody user may write the backup. */
	char out[256], backup[300];
	snprintf(out, sizeof out, "%s/out", dir);
	ck_assert_int_eq(mkdir(out, 0755), 0);
	/* nobody's own, not open to all: a backup is refused where another user could plant its
	 * -journal (check_files). */
	struct passwd *nob = getpwnam("nobody");
	if (nob)
		ck_assert_int_eq(chown(out, nob->pw_uid, nob->pw_gid), 0);
	snprintf(backup, sizeof backup, "%s/b.db", out);
	int rc = as_nobody(db, backup);
	chmod(ro, 0755);
	if (rc == 77) {
		fprintf(stderr, "check_store read_only_user: SKIPPED the unprivileged part: cannot become nobody\n");
		return;
	}
	ck_assert_msg(rc == 0, "as nobody: step %d failed (see stderr)", rc);
	/* Back to root's own: root refuses a database in a directory of another user's. */
	ck_assert_int_eq(chown(out, 0, 0), 0);
	/* The backup holds the database's setting. */
	struct xp_store *b = xp_store_open_read(backup, &err);
	ck_assert_msg(b != NULL, "%s", err.msg);
	char *v = NULL;
	ck_assert_int_eq(xp_store_setting(b, "retention_days", &v, &err), 0);
	ck_assert_str_eq(v, "30");
	free(v);
	xp_store_close(b);
	/* Reading left nothing behind: no -wal, no -shm, the file unchanged. */
	char side[320];
	snprintf(side, sizeof side, "%s-shm", db);
	ck_assert_int_ne(access(side, F_OK), 0);
}
END_TEST

/* Overwrites the page of the database at p where table's rows start (its root page). */
static void smash_table(const char *p, const char *table)
{
	sqlite3 *raw;
	ck_assert_int_eq(sqlite3_open(p, &raw), SQLITE_OK);
	sqlite3_stmt *st;
	ck_assert_int_eq(sqlite3_prepare_v2(raw,
					    "SELECT rootpage, (SELECT page_size FROM pragma_page_size)"
					    " FROM sqlite_schema WHERE type = 'table' AND name = ?",
					    -1, &st, NULL),
			 SQLITE_OK);
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	long long page = sqlite3_column_int64(st, 0), size = sqlite3_column_int64(st, 1);
	sqlite3_finalize(st);
	sqlite3_close(raw);
	ck_assert_int_gt(page, 1);
	char *junk = malloc((size_t)size);
	memset(junk, 0xa5, (size_t)size);
	int fd = open(p, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, junk, (size_t)size, (off_t)((page - 1) * size)), size);
	close(fd);
	free(junk);
}

/* A damaged settings page is an error with the file and what to do, never "unset": the
 * retention would silently fall back to the default. */
START_TEST(corrupt_settings)
{
	struct xp_err err = {{0}};
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	char db[256];
	snprintf(db, sizeof db, "%s/c.db", dir);
	make_db(db);
	smash_table(db, "settings");
	struct xp_store *s = xp_store_open(db, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	char *v = NULL;
	ck_assert_int_eq(xp_store_setting(s, "retention_days", &v, &err), -1);
	ck_assert_ptr_null(v);
	ck_assert_msg(strstr(err.msg, db) && strstr(err.msg, "run `xpool db check`"), "%s", err.msg);
	struct xp_cluster *c = xp_cluster_new();
	xp_cluster_add(c, xp_node_new("n1"));
	err.msg[0] = '\0';
	ck_assert_int_eq(xp_store_snapshot(s, c, 1700000000, &err), -1);
	ck_assert_msg(strstr(err.msg, "run `xpool db check`"), "%s", err.msg);
	ck_assert_int_eq(xp_store_set_setting(s, "retention_days", "3", &err), -1);
	ck_assert_msg(strstr(err.msg, "run `xpool db check`"), "%s", err.msg);
	xp_cluster_free(c);
	xp_store_close(s);
	/* The commands: the snapshot fails instead of keeping 7 days; db check names the damage. */
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--topology", xp_fixture("hwloc/16amd64-4distances.xml"),
				      "db", "snapshot", NULL),
			 0);
	ck_assert_msg(r.status == 1 && strstr(r.err, "db check"), "%d: %s%s", r.status, r.out, r.err);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "db", "check", NULL), 0);
	ck_assert_msg(r.status == 1, "%d: %s%s", r.status, r.out, r.err);
	xp_run_free(&r);
	/* Reads with no error return (the ECU hook's baseline, the audit log's last id) keep the
	 * damage for their caller to report. */
	s = xp_store_open(db, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	struct xp_baseline b = {.model = "A100", .driver = "535", .benchmark = "b", .coefficient = 1.5};
	ck_assert_int_eq(xp_baseline_add(s, &b, &err), 0);
	xp_store_close(s);
	smash_table(db, "baselines");
	s = xp_store_open(db, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	ck_assert_ptr_null(xp_store_damage(s));
	ck_assert(isnan(xp_baseline_coefficient(s, "A100", "535")));
	ck_assert_msg(xp_store_damage(s) && strstr(xp_store_damage(s), "reading baselines") &&
			      strstr(xp_store_damage(s), "run `xpool db check`"),
		      "%s", xp_store_damage(s));
	xp_store_close(s);
	/* db info counts the rows themselves: the damaged table is an error, not a count. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "db", "info", NULL), 0);
	ck_assert_msg(r.status == 1 && strstr(r.err, "counting settings") && strstr(r.err, "run `xpool db check`"),
		      "%d: %s%s", r.status, r.out, r.err);
	xp_run_free(&r);
}
END_TEST

/* A user_version that does not match the tables is refused before any migration step, saying
 * what it is and what was expected (not sqlite's "table already exists"). */
START_TEST(migration_mismatch)
{
	struct xp_err err = {{0}};
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	char db[256];
	snprintf(db, sizeof db, "%s/m.db", dir);
	make_db(db);
	const struct {
		const char *pragma, *want;
	} cases[] = {
		{"PRAGMA user_version = 1", "says schema version 1, but its tables are those of version 5"},
		{"PRAGMA user_version = 2", "says schema version 2, but its tables are those of version 5"},
		{"PRAGMA user_version = 3", "says schema version 3, but its tables are those of version 5"},
		{"PRAGMA user_version = 4", "says schema version 4, but its tables are those of version 5"},
		{"PRAGMA user_version = -1", "schema version -1 is not one xpool writes (expected 0"},
		{"PRAGMA user_version = 0", "says schema version 0, but its tables are those of version 5"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		sqlite3 *raw;
		ck_assert_int_eq(sqlite3_open(db, &raw), SQLITE_OK);
		ck_assert_int_eq(sqlite3_exec(raw, cases[i].pragma, NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(raw);
		err.msg[0] = '\0';
		ck_assert_ptr_null(xp_store_open(db, &err));
		ck_assert_msg(strstr(err.msg, cases[i].want) && strstr(err.msg, db), "%s: %s", cases[i].pragma,
			      err.msg);
		ck_assert_ptr_null(strstr(err.msg, "already exists"));
	}
	/* Read-only opens refuse a version they cannot read, naming it. */
	sqlite3 *raw;
	ck_assert_int_eq(sqlite3_open(db, &raw), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(raw, "PRAGMA user_version = -1", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
	ck_assert_ptr_null(xp_store_open_read(db, &err));
	ck_assert_msg(strstr(err.msg, "schema version -1 is not one xpool writes"), "%s", err.msg);
	/* Set back, the file opens and still holds its data. */
	ck_assert_int_eq(sqlite3_open(db, &raw), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(raw, "PRAGMA user_version = 5", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
	struct xp_store *s = xp_store_open(db, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	ck_assert_int_eq(table_has(s, "SELECT count(*) FROM settings"), 1);
	xp_store_close(s);
}
END_TEST

/* Sets the user_version of the database at p. */
static void set_user_version(const char *p, int v)
{
	sqlite3 *raw;
	char pragma[64];
	snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", v);
	ck_assert_int_eq(sqlite3_open(p, &raw), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(raw, pragma, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
}

/* Reads check the tables against the user_version as migrations do: a version-4 file whose
 * user_version says 0, 1, 2 or 3 is refused with the same message (not "holds no xpool tables yet",
 * not read silently), and `db check` reports any mismatch (exit 1). */
START_TEST(read_version_mismatch)
{
	struct xp_err err = {{0}};
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	char db[256];
	snprintf(db, sizeof db, "%s/v.db", dir);
	make_db(db);
	struct xp_run r;
	for (int v = 0; v < XP_STORE_VERSION; v++) {
		set_user_version(db, v);
		char want[128];
		snprintf(want, sizeof want, "says schema version %d, but its tables are those of version %d", v,
			 XP_STORE_VERSION);
		err.msg[0] = '\0';
		ck_assert_ptr_null(xp_store_open_read(db, &err));
		ck_assert_msg(strstr(err.msg, want) && strstr(err.msg, db), "%d: %s", v, err.msg);
		ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "baseline", "list", NULL), 0);
		ck_assert_msg(r.status == 1 && strstr(r.err, want) && !strstr(r.err, "no xpool tables"), "%d: %d: %s%s",
			      v, r.status, r.out, r.err);
		xp_run_free(&r);
	}
	const int bad[] = {-1, 0, 1, 2, 3, 4, XP_STORE_VERSION + 1};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		set_user_version(db, bad[i]);
		char want[64];
		snprintf(want, sizeof want, "schema version %d", bad[i]);
		ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "db", "check", NULL), 0);
		ck_assert_msg(r.status == 1 && strstr(r.err, want) && strstr(r.err, db) && !strstr(r.out, ": ok"),
			      "%d: %d: %s%s", bad[i], r.status, r.out, r.err);
		xp_run_free(&r);
	}
	set_user_version(db, XP_STORE_VERSION);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "db", "check", NULL), 0);
	ck_assert_msg(r.status == 0 && strstr(r.out, ": ok"), "%d: %s%s", r.status, r.out, r.err);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "baseline", "list", NULL), 0);
	ck_assert_msg(r.status == 0, "%d: %s%s", r.status, r.out, r.err);
	xp_run_free(&r);
}
END_TEST

/* A full database: the write fails with a clear message and leaves nothing behind. */
START_TEST(full_database)
{
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_open(":memory:", &err);
	ck_assert_ptr_nonnull(s);
	int pages = table_has(s, "PRAGMA page_count");
	char pragma[64];
	snprintf(pragma, sizeof pragma, "PRAGMA max_page_count = %d", pages + 1);
	ck_assert_int_eq(sqlite3_exec(s->db, pragma, NULL, NULL, NULL), SQLITE_OK);
	char *big = malloc(200000);
	memset(big, 'x', 199999);
	big[199999] = '\0';
	ck_assert_int_eq(xp_store_set_setting(s, "big", big, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "full"));
	ck_assert_int_eq(table_has(s, "SELECT count(*) FROM settings"), 0);
	ck_assert_int_eq(table_has(s, "SELECT count(*) FROM audit"), 0);
	free(big);
	xp_store_close(s);
}
END_TEST

/* A schema-3 file (queues, no jobs) gets the job tables on its first writable open, keeping its
 * queues; read-only, it stays version 3 (its reader sees no jobs: check_job old_database). */
START_TEST(migration_to_jobs)
{
	struct xp_err err = {{0}};
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	char old[256];
	snprintf(old, sizeof old, "%s/v3.db", dir);
	struct xp_store *s = xp_old_store(old, 3);
	ck_assert_int_eq(table_has(s, "PRAGMA user_version"), 3);
	ck_assert_int_eq(sqlite3_exec(s->db, "INSERT INTO queues(name, created) VALUES('kept', 1)", NULL, NULL, NULL),
			 SQLITE_OK);
	ck_assert_int_eq(table_has(s, "SELECT count(*) FROM sqlite_master WHERE name = 'jobs'"), 0);
	xp_store_close(s);

	s = xp_store_open_read(old, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	ck_assert_int_eq(s->version, 3);
	ck_assert_int_eq(table_has(s, "SELECT count(*) FROM sqlite_master WHERE name = 'jobs'"), 0);
	xp_store_close(s);

	s = xp_store_open(old, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	ck_assert_int_eq(s->version, 3);
	ck_assert_int_eq(table_has(s, "PRAGMA user_version"), XP_STORE_VERSION);
	const char *objs[] = {"jobs", "jobs_queue_state", "job_events", "job_events_job"};
	for (size_t i = 0; i < 4; i++) {
		char q[128];
		snprintf(q, sizeof q, "SELECT count(*) FROM sqlite_master WHERE name = '%s'", objs[i]);
		ck_assert_msg(table_has(s, q) == 1, "%s", objs[i]);
	}
	ck_assert_int_eq(table_has(s, "SELECT count(*) FROM queues WHERE name = 'kept'"), 1);
	/* The columns the job store writes, and their checks: an estimate must be positive. */
	ck_assert_int_eq(sqlite3_exec(s->db,
				      "INSERT INTO jobs(id, queue, spec, submit, est_s, state) VALUES(1, 'kept', '{}', 5,"
				      " 60, 'pending');"
				      "INSERT INTO job_events(job, time, to_state, actor) VALUES(1, 5, 'pending', 'a')",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	ck_assert_int_ne(sqlite3_exec(s->db,
				      "INSERT INTO jobs(queue, spec, submit, est_s, state) VALUES('kept', '{}', 5, 0,"
				      " 'pending')",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	xp_store_close(s);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", old, "db", "check", NULL), 0);
	ck_assert_msg(r.status == 0 && strstr(r.out, ": ok"), "%d: %s%s", r.status, r.out, r.err);
	xp_run_free(&r);
}
END_TEST

XP_DEFINE_SUITE(store,
	{"core", .timeout_s = 60, .setup = setup, .teardown = teardown,
	 .tests = {migrations, default_path_and_dirs, audit_and_baselines, snapshots_and_retention,
		   two_writers, read_only, read_only_user, corrupt_settings, migration_mismatch, read_version_mismatch, full_database,
		   migration_to_jobs,
		   first_open_race}})
