/* check_files.c: the files xpool writes on a machine shared with other users, and the replay
 * directories it reads from anyone: modes whatever the umask (tests run with umask 000), no
 * write through a link planted at a file's name, directories others may write in refused, and a
 * replay directory read without leaving it (links, '..', absolute names, FIFOs, hard links). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <readline/history.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checklib.h"
#include "files.h"
#include "prompt.h"
#include "store.h"
#include "suitelib.h"
#include "testlib.h"
#include "validate.h"

#define VICTIM_TEXT "# the victim's own words\n"

static char dir[128];

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/xpool-files-%d", (int)getpid());
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	/* Every bit the umask could take off is left on: a mode seen below is the program's own. */
	umask(0);
	setenv("XDG_STATE_HOME", "/nonexistent-state", 1);
	setenv("XDG_CONFIG_HOME", "/nonexistent-config", 1);
	setenv("XPOOL_ACTOR", "tester", 1);
	unsetenv("XPOOL_ADAPTER_PATH");
	unsetenv("XPOOL_ADAPTER_PATH_ONLY");
	unsetenv("XPOOL_ADAPTERS");
}

static void teardown(void)
{
	xp_rm_rf(dir);
}

/* dir/rel (a static buffer of four, so a test can hold a few at once). */
static const char *at(const char *rel)
{
	static char buf[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", dir, rel);
	return buf[k];
}

static unsigned mode_of(const char *path)
{
	struct stat st;
	ck_assert_msg(lstat(path, &st) == 0, "%s: %s", path, strerror(errno));
	return (unsigned)(st.st_mode & 07777);
}

/* A file of another's that a planted link points at: dir/victim. */
static const char *victim(void)
{
	char *p = xp_write_file(dir, "victim", VICTIM_TEXT, 0644);
	static char buf[256];
	snprintf(buf, sizeof buf, "%s", p);
	free(p);
	return buf;
}

static void victim_unchanged(void)
{
	struct xp_err err;
	size_t len;
	char *t = xp_read_file(at("victim"), 1 << 20, &len, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_str_eq(t, VICTIM_TEXT);
	free(t);
	ck_assert_uint_eq(mode_of(at("victim")), 0644);
}

static void plant(const char *target, const char *link)
{
	ck_assert_msg(symlink(target, link) == 0, "%s: %s", link, strerror(errno));
}

static bool is_link(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

/* Runs xpool; the status, with out and err kept in *r for the caller to free. */
static int run(struct xp_run *r, ...)
{
	va_list ap;
	va_start(ap, r);
	int rc = xp_run_xpoolv(r, NULL, ap);
	va_end(ap);
	ck_assert_int_eq(rc, 0);
	return r->status;
}

/* ---- the database ---- */

START_TEST(db_modes_default_dir)
{
	/* The default place: $XDG_STATE_HOME/xpool, made 0700 with its parents, the file 0600. */
	setenv("XDG_STATE_HOME", at("state"), 1);
	struct xp_run r;
	ck_assert_msg(run(&r, "db", "set", "retention_days", "9", NULL) == 0, "%s", r.err);
	xp_run_free(&r);
	ck_assert_uint_eq(mode_of(at("state")), 0700);
	ck_assert_uint_eq(mode_of(at("state/xpool")), 0700);
	ck_assert_uint_eq(mode_of(at("state/xpool/xpool.db")), 0600);
}
END_TEST

START_TEST(db_modes_wal_shm)
{
	/* sqlite's own files take the database file's mode: seen while a connection holds them. */
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_open(at("sub/x.db"), &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	ck_assert_int_eq(sqlite3_exec(s->db, "CREATE TABLE t(x); INSERT INTO t VALUES (1)", NULL, NULL, NULL), SQLITE_OK);
	ck_assert_uint_eq(mode_of(at("sub")), 0700);
	ck_assert_uint_eq(mode_of(at("sub/x.db")), 0600);
	ck_assert_uint_eq(mode_of(at("sub/x.db-wal")), 0600);
	ck_assert_uint_eq(mode_of(at("sub/x.db-shm")), 0600);
	xp_store_close(s);
}
END_TEST

START_TEST(db_old_mode_tightened)
{
	/* xpool's own database as older versions made it (0644) is brought down to 0600. */
	setenv("XDG_STATE_HOME", at("state"), 1);
	ck_assert_int_eq(mkdir(at("state"), 0700), 0);
	ck_assert_int_eq(mkdir(at("state/xpool"), 0700), 0);
	struct xp_run r;
	ck_assert_msg(run(&r, "db", "set", "retention_days", "8", NULL) == 0, "%s", r.err);
	xp_run_free(&r);
	/* An older xpool's connection still open: its -wal and -shm exist, 0644 as well. */
	sqlite3 *db;
	ck_assert_int_eq(sqlite3_open(at("state/xpool/xpool.db"), &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "PRAGMA journal_mode=WAL; SELECT count(*) FROM sqlite_master", NULL, NULL, NULL),
			 SQLITE_OK);
	ck_assert_int_eq(chmod(at("state/xpool/xpool.db"), 0644), 0);
	ck_assert_int_eq(chmod(at("state/xpool/xpool.db-wal"), 0644), 0);
	ck_assert_int_eq(chmod(at("state/xpool/xpool.db-shm"), 0644), 0);
	ck_assert_msg(run(&r, "db", "set", "retention_days", "9", NULL) == 0, "%s", r.err);
	xp_run_free(&r);
	ck_assert_uint_eq(mode_of(at("state/xpool/xpool.db")), 0600);
	ck_assert_uint_eq(mode_of(at("state/xpool/xpool.db-wal")), 0600);
	ck_assert_uint_eq(mode_of(at("state/xpool/xpool.db-shm")), 0600);
	sqlite3_close(db);
}
END_TEST

/* Whether another process sees a lock on byte off of path (the fork asks: POSIX locks are
 * per process, so this process would never see its own). */
static bool locked_for_others(const char *path, off_t off)
{
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(path, O_RDWR);
		struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = off, .l_len = 1};
		_exit(fd >= 0 && fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK ? 0 : 1);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

START_TEST(db_open_keeps_locks)
{
	/* Opening the store, tightening an older version's modes included, never opens and closes
	 * the database's files itself: closing any descriptor of a file drops every POSIX lock the
	 * process holds on it, sqlite's too (the console keeps a connection open while it opens
	 * another to write). sqlite holds a shared lock on the -shm's byte 128 while connected. */
	setenv("XDG_STATE_HOME", at("state"), 1);
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_open(NULL, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	ck_assert_int_eq(sqlite3_exec(s->db, "PRAGMA journal_mode=WAL; SELECT count(*) FROM sqlite_master", NULL, NULL, NULL),
			 SQLITE_OK);
	const char *shm = at("state/xpool/xpool.db-shm");
	ck_assert_msg(locked_for_others(shm, 128), "sqlite holds no lock on the -shm to begin with");
	for (int older = 0; older < 2; older++) {
		if (older) { /* as an older version left them: the modes are tightened too */
			ck_assert_int_eq(chmod(at("state/xpool/xpool.db"), 0644), 0);
			ck_assert_int_eq(chmod(shm, 0644), 0);
		}
		struct xp_store *t = xp_store_open(NULL, &err);
		ck_assert_msg(t != NULL, "%s", err.msg);
		ck_assert_msg(locked_for_others(shm, 128), "opening the store dropped the open connection's lock");
		xp_store_close(t);
		ck_assert_msg(locked_for_others(shm, 128), "closing the second connection dropped the first's lock");
	}
	ck_assert_uint_eq(mode_of(shm), 0600);
	xp_store_close(s);
}
END_TEST

START_TEST(db_symlink_refused)
{
	/* A link planted where --db points: refused by name, the victim untouched. */
	victim();
	ck_assert_int_eq(mkdir(at("d"), 0700), 0);
	plant(at("victim"), at("d/x.db"));
	struct xp_run r;
	ck_assert_int_eq(run(&r, "--db", at("d/x.db"), "db", "set", "retention_days", "9", NULL), 1);
	ck_assert_msg(strstr(r.err, "x.db") && strstr(r.err, "symbolic link"), "%s", r.err);
	xp_run_free(&r);
	victim_unchanged();
}
END_TEST

START_TEST(db_state_dir_others_write)
{
	/* xpool's own directory that others may write in: they could plant xpool.db-wal there. */
	setenv("XDG_STATE_HOME", at("state"), 1);
	ck_assert_int_eq(mkdir(at("state"), 0700), 0);
	ck_assert_int_eq(mkdir(at("state/xpool"), 0777), 0);
	ck_assert_int_eq(chmod(at("state/xpool"), 01777), 0);
	struct xp_run r;
	ck_assert_int_eq(run(&r, "db", "set", "retention_days", "9", NULL), 1);
	ck_assert_msg(strstr(r.err, "state/xpool") && strstr(r.err, "other users may write"), "%s", r.err);
	xp_run_free(&r);
	ck_assert_int_eq(access(at("state/xpool/xpool.db"), F_OK), -1);
	/* Nor is the database read from there. */
	ck_assert_int_eq(run(&r, "db", "info", NULL), 1);
	ck_assert_msg(strstr(r.err, "other users may write"), "%s", r.err);
	xp_run_free(&r);
}
END_TEST

START_TEST(db_state_dir_not_mine)
{
	/* xpool's own directory made by someone else first (XDG_STATE_HOME under /tmp): refused. */
	if (geteuid() != 0)
		return; /* only root can give a directory away */
	setenv("XDG_STATE_HOME", at("state"), 1);
	ck_assert_int_eq(mkdir(at("state"), 0700), 0);
	ck_assert_int_eq(mkdir(at("state/xpool"), 0700), 0);
	ck_assert_int_eq(chown(at("state/xpool"), 65534, 65534), 0);
	struct xp_run r;
	ck_assert_int_eq(run(&r, "db", "set", "retention_days", "9", NULL), 1);
	ck_assert_msg(strstr(r.err, "owned by uid 65534"), "%s", r.err);
	xp_run_free(&r);
	/* A link to it, of another's making, the same. */
	ck_assert_int_eq(chown(at("state/xpool"), 0, 0), 0);
	ck_assert_int_eq(rename(at("state/xpool"), at("state/real")), 0);
	plant(at("state/real"), at("state/xpool"));
	ck_assert_int_eq(lchown(at("state/xpool"), 65534, 65534), 0);
	ck_assert_int_eq(run(&r, "db", "set", "retention_days", "9", NULL), 1);
	ck_assert_msg(strstr(r.err, "symbolic link owned by uid 65534"), "%s", r.err);
	xp_run_free(&r);
}
END_TEST

START_TEST(db_shared_dir_refused)
{
	/* --db in a directory others may write in, sticky (/tmp) or not: sqlite's -wal and -journal
	 * names are known in advance there. */
	ck_assert_int_eq(mkdir(at("tmp"), 0777), 0);
	ck_assert_int_eq(chmod(at("tmp"), 01777), 0);
	struct xp_run r;
	ck_assert_int_eq(run(&r, "--db", at("tmp/x.db"), "db", "set", "retention_days", "9", NULL), 1);
	ck_assert_msg(strstr(r.err, "/tmp: other users may write") && strstr(r.err, "-wal"), "%s", r.err);
	xp_run_free(&r);
	ck_assert_int_eq(access(at("tmp/x.db"), F_OK), -1);
	/* A directory of one's own in there is fine. */
	ck_assert_int_eq(mkdir(at("tmp/mine"), 0700), 0);
	ck_assert_msg(run(&r, "--db", at("tmp/mine/x.db"), "db", "set", "retention_days", "9", NULL) == 0, "%s", r.err);
	xp_run_free(&r);
	ck_assert_uint_eq(mode_of(at("tmp/mine/x.db")), 0600);
}
END_TEST

START_TEST(db_backup_modes_and_links)
{
	ck_assert_int_eq(mkdir(at("d"), 0700), 0);
	struct xp_run r;
	ck_assert_msg(run(&r, "--db", at("d/x.db"), "db", "set", "retention_days", "9", NULL) == 0, "%s", r.err);
	xp_run_free(&r);
	ck_assert_msg(run(&r, "--db", at("d/x.db"), "db", "backup", at("d/b.db"), NULL) == 0, "%s", r.err);
	xp_run_free(&r);
	ck_assert_uint_eq(mode_of(at("d/b.db")), 0600);
	victim();
	plant(at("victim"), at("d/c.db"));
	ck_assert_int_eq(run(&r, "--db", at("d/x.db"), "db", "backup", at("d/c.db"), NULL), 1);
	ck_assert_msg(strstr(r.err, "c.db"), "%s", r.err);
	xp_run_free(&r);
	victim_unchanged();
	/* sqlite writes b.db-journal beside a backup: not where others may plant it. */
	ck_assert_int_eq(mkdir(at("tmp"), 0777), 0);
	ck_assert_int_eq(chmod(at("tmp"), 01777), 0);
	ck_assert_int_eq(run(&r, "--db", at("d/x.db"), "db", "backup", at("tmp/b.db"), NULL), 1);
	ck_assert_msg(strstr(r.err, "/tmp: other users may write"), "%s", r.err);
	xp_run_free(&r);
	ck_assert_int_eq(access(at("tmp/b.db"), F_OK), -1);
}
END_TEST

/* ---- the prompt's history ---- */

START_TEST(history_modes)
{
	char *path = xp_asprintf("%s/state/xpool/history", dir);
	struct xp_prompt *p = xp_prompt_new(path, NULL, NULL);
	add_history("inventory");
	struct xp_err err = {{0}};
	ck_assert_msg(xp_prompt_save(p, &err) == 0, "%s", err.msg);
	xp_prompt_free(p);
	ck_assert_uint_eq(mode_of(at("state")), 0700);
	ck_assert_uint_eq(mode_of(at("state/xpool")), 0700);
	ck_assert_uint_eq(mode_of(path), 0600);
	free(path);
}
END_TEST

START_TEST(history_link_replaced)
{
	/* Even in the user's own folder, a link at the history's name is replaced, not written
	 * through (readline's write_history follows it). */
	victim();
	ck_assert_int_eq(mkdir(at("state"), 0700), 0);
	plant(at("victim"), at("state/history"));
	char *path = xp_asprintf("%s/state/history", dir);
	struct xp_prompt *p = xp_prompt_new(path, NULL, NULL);
	add_history("inventory");
	struct xp_err err = {{0}};
	ck_assert_msg(xp_prompt_save(p, &err) == 0, "%s", err.msg);
	xp_prompt_free(p);
	victim_unchanged();
	ck_assert(!is_link(path));
	ck_assert_uint_eq(mode_of(path), 0600);
	free(path);
}
END_TEST

START_TEST(history_shared_dir_refused)
{
	victim();
	ck_assert_int_eq(mkdir(at("state"), 0777), 0);
	plant(at("victim"), at("state/history"));
	char *path = xp_asprintf("%s/state/history", dir);
	struct xp_prompt *p = xp_prompt_new(path, NULL, NULL);
	/* Not read from there either: the victim's line is not in the history. */
	HIST_ENTRY **h = history_list();
	ck_assert_msg(!h || !h[0], "read history from a folder others may write in");
	add_history("inventory");
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_prompt_save(p, &err), -1);
	ck_assert_msg(strstr(err.msg, "/state: other users may write"), "%s", err.msg);
	xp_prompt_free(p);
	victim_unchanged();
	free(path);
}
END_TEST

/* ---- bookmarks ---- */

START_TEST(bookmarks_modes_and_links)
{
	setenv("XDG_CONFIG_HOME", at("cfg"), 1);
	struct xp_run r;
	ck_assert_msg(run(&r, "bookmark", "save", "hot", "topology", NULL) == 0, "%s", r.err);
	xp_run_free(&r);
	ck_assert_uint_eq(mode_of(at("cfg")), 0700);
	ck_assert_uint_eq(mode_of(at("cfg/xpool")), 0700);
	ck_assert_uint_eq(mode_of(at("cfg/xpool/bookmarks")), 0600);
	/* A link at the name is replaced, never written through. */
	victim();
	ck_assert_int_eq(unlink(at("cfg/xpool/bookmarks")), 0);
	plant(at("victim"), at("cfg/xpool/bookmarks"));
	ck_assert_msg(run(&r, "bookmark", "save", "cold", "topology", NULL) == 0, "%s", r.err);
	xp_run_free(&r);
	victim_unchanged();
	ck_assert(!is_link(at("cfg/xpool/bookmarks")));
	/* A folder others may write in: refused by name. */
	ck_assert_int_eq(chmod(at("cfg/xpool"), 0777), 0);
	ck_assert_int_eq(run(&r, "bookmark", "save", "warm", "topology", NULL), 1);
	ck_assert_msg(strstr(r.err, "cfg/xpool: other users may write"), "%s", r.err);
	xp_run_free(&r);
}
END_TEST

/* ---- validation logs and exports ---- */

START_TEST(validate_log_modes)
{
	setenv("XDG_STATE_HOME", at("state"), 1);
	char *def = xp_validate_default_log_dir();
	char *path = NULL;
	struct xp_err err = {{0}};
	ck_assert_msg(xp_validate_log_write(def, "case", "env", "out\n", 4, &path, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(mode_of(at("state/xpool")), 0700);
	ck_assert_uint_eq(mode_of(at("state/xpool/logs")), 0700);
	ck_assert_uint_eq(mode_of(path), 0600);
	free(path);
	path = NULL;
	/* --log-dir others may write in, without the sticky bit: refused by name. */
	ck_assert_int_eq(mkdir(at("open"), 0777), 0);
	ck_assert_int_eq(xp_validate_log_write(at("open"), "case", "env", "out\n", 4, &path, &err), -1);
	ck_assert_msg(strstr(err.msg, "log directory") && strstr(err.msg, "/open: other users may write"), "%s",
		      err.msg);
	ck_assert_ptr_null(path);
	free(def);
}
END_TEST

START_TEST(validate_export_modes_and_links)
{
	ck_assert_int_eq(mkdir(at("d"), 0700), 0);
	struct xp_run r;
	ck_assert_msg(run(&r, "--db", at("d/x.db"), "validate", "export", at("d/e.json"), NULL) == 0, "%s", r.err);
	xp_run_free(&r);
	ck_assert_uint_eq(mode_of(at("d/e.json")), 0600);
	victim();
	plant(at("victim"), at("d/f.json"));
	ck_assert_msg(run(&r, "--db", at("d/x.db"), "validate", "export", at("d/f.json"), NULL) == 0, "%s", r.err);
	xp_run_free(&r);
	victim_unchanged();
	ck_assert(!is_link(at("d/f.json")));
}
END_TEST

/* ---- exports with -o ---- */

START_TEST(sim_output_umask_and_links)
{
	/* Synthetic data, named by the user: its mode follows the umask, as any tool's output. */
	umask(027);
	struct xp_run r;
	ck_assert_msg(run(&r, "sim", "gen", "--nodes", "2", "-o", at("c.json"), NULL) == 0, "%s", r.err);
	xp_run_free(&r);
	ck_assert_uint_eq(mode_of(at("c.json")), 0640);
	umask(0);
	victim();
	plant(at("victim"), at("d.json"));
	ck_assert_msg(run(&r, "sim", "gen", "--nodes", "2", "-o", at("d.json"), NULL) == 0, "%s", r.err);
	xp_run_free(&r);
	victim_unchanged();
	ck_assert(!is_link(at("d.json")));
	ck_assert_uint_eq(mode_of(at("d.json")), 0666);
	plant(at("victim"), at("t.txt"));
	ck_assert_msg(run(&r, "--inventory", at("c.json"), "sim", "trace", "--jobs", "3", "-o", at("t.txt"), NULL) == 0,
		      "%s", r.err);
	xp_run_free(&r);
	victim_unchanged();
	ck_assert(!is_link(at("t.txt")));
}
END_TEST

/* ---- xpool record ---- */

START_TEST(record_modes_and_links)
{
	struct xp_run r;
	run(&r, "record", at("rec"), NULL); /* tools missing here are skipped; the status may say so */
	ck_assert_msg(strstr(r.out, "wrote    hwloc.xml"), "%s%s", r.out, r.err);
	xp_run_free(&r);
	ck_assert_uint_eq(mode_of(at("rec")), 0700);
	ck_assert_uint_eq(mode_of(at("rec/hwloc.xml")), 0600);
	/* Links planted at the names it writes are replaced, never followed. */
	victim();
	ck_assert_int_eq(unlink(at("rec/hwloc.xml")), 0);
	plant(at("victim"), at("rec/hwloc.xml"));
	unlink(at("rec/hostname"));
	plant(at("victim"), at("rec/hostname"));
	run(&r, "record", at("rec"), NULL);
	ck_assert_msg(strstr(r.out, "wrote    hwloc.xml"), "%s%s", r.out, r.err);
	xp_run_free(&r);
	victim_unchanged();
	ck_assert(!is_link(at("rec/hwloc.xml")));
	/* Into a directory others may write in without the sticky bit: refused by name. */
	ck_assert_int_eq(mkdir(at("open"), 0777), 0);
	ck_assert_int_eq(run(&r, "record", at("open"), NULL), 1);
	ck_assert_msg(strstr(r.err, "/open: other users may write"), "%s", r.err);
	xp_run_free(&r);
	ck_assert_int_eq(access(at("open/hwloc.xml"), F_OK), -1);
}
END_TEST

/* ---- replay directories ---- */

/* The DGX replay directory (four A100s) with its nvidia-smi -q -x output moved outside, dir/out. */
static char *dgx_outside(void)
{
	char *d = xp_replay_dgx(dir);
	char *in = xp_asprintf("%s/nvidia-smi-q-x.xml", d);
	ck_assert_int_eq(rename(in, at("out.xml")), 0);
	free(in);
	return d;
}

static int replay_inventory(struct xp_run *r, const char *d)
{
	return run(r, "--replay", d, "inventory", "--json", NULL);
}

START_TEST(replay_link_to_outside)
{
	/* A link inside pointing outside: the file is refused by name and nothing of it is read
	 * (the A100s it describes do not appear). */
	char *d = dgx_outside();
	char *link = xp_asprintf("%s/nvidia-smi-q-x.xml", d);
	plant(at("out.xml"), link);
	struct xp_run r;
	replay_inventory(&r, d);
	ck_assert_msg(strstr(r.out, "nvidia-smi-q-x.xml: a symbolic link"), "%s%s", r.out, r.err);
	ck_assert_msg(!strstr(r.out, "A100"), "%s", r.out);
	xp_run_free(&r);
	/* The same file copied in is read: the refusal is the link's. */
	unlink(link);
	struct xp_err err = {{0}};
	size_t len;
	char *text = xp_read_file(at("out.xml"), 64 << 20, &len, &err);
	ck_assert_ptr_nonnull(text);
	char *copy = xp_write_file(d, "nvidia-smi-q-x.xml", text, 0600);
	free(copy);
	free(text);
	ck_assert_msg(replay_inventory(&r, d) == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "A100"), "%s", r.out);
	xp_run_free(&r);
	free(link);
	free(d);
}
END_TEST

START_TEST(replay_topology_and_hostname_links)
{
	/* hwloc.xml and hostname, read by xpool itself: a link is an error naming the file. */
	char *d = dgx_outside();
	char *host = xp_asprintf("%s/hostname", d);
	unlink(host);
	plant("/etc/hostname", host);
	struct xp_run r;
	ck_assert_int_eq(replay_inventory(&r, d), 1);
	ck_assert_msg(strstr(r.err, "hostname: a symbolic link"), "%s", r.err);
	xp_run_free(&r);
	unlink(host);
	char *xml = xp_asprintf("%s/hwloc.xml", d);
	plant(xp_fixture("hwloc/24em64t-2n6c2t-pci.xml"), xml);
	ck_assert_int_eq(replay_inventory(&r, d), 1);
	ck_assert_msg(strstr(r.err, "hwloc.xml: a symbolic link"), "%s", r.err);
	xp_run_free(&r);
	free(xml);
	free(host);
	free(d);
}
END_TEST

START_TEST(read_beneath_names)
{
	/* Names that leave the directory, links at any depth, FIFOs and directories are refused;
	 * a missing file is 0. */
	ck_assert_int_eq(mkdir(at("r"), 0700), 0);
	ck_assert_int_eq(mkdir(at("r/sub"), 0700), 0);
	victim();
	free(xp_write_file(at("r/sub"), "ok", "fine\n", 0600));
	plant(at("victim"), at("r/ln"));
	plant(dir, at("r/dirln"));
	ck_assert_int_eq(mkfifo(at("r/fifo"), 0600), 0);
	char *out = NULL;
	size_t len = 0;
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_read_beneath(at("r"), "sub/ok", 100, &out, &len, &err), 1);
	ck_assert_str_eq(out, "fine\n");
	free(out);
	ck_assert_int_eq(xp_read_beneath(at("r"), "missing", 100, &out, &len, &err), 0);
	ck_assert_ptr_null(out);
	static const struct {
		const char *name, *says;
	} bad[] = {
		{"ln", "ln: a symbolic link"},
		{"dirln/victim", "a component is a symbolic link"},
		{"../victim", "a '..' component"},
		{"sub/../../victim", "a '..' component"},
		{"/etc/passwd", "is not a name inside"},
		{"fifo", "fifo: not a regular file"},
		{"sub", "sub: not a regular file"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err.msg[0] = '\0';
		ck_assert_msg(xp_read_beneath(at("r"), bad[i].name, 100, &out, &len, &err) == -1, "%s read", bad[i].name);
		ck_assert_ptr_null(out);
		ck_assert_msg(strstr(err.msg, bad[i].says), "%s: %s", bad[i].name, err.msg);
	}
}
END_TEST

START_TEST(read_beneath_hard_link)
{
	/* With fs.protected_hardlinks off, another user links a file of yours into their directory:
	 * refused. Root stands in for both users (it can give the directory away). */
	if (geteuid() != 0)
		return;
	ck_assert_int_eq(mkdir(at("r"), 0755), 0);
	victim();
	ck_assert_int_eq(link(at("victim"), at("r/nvidia-smi-q-x.xml")), 0);
	char *out = NULL;
	size_t len = 0;
	struct xp_err err = {{0}};
	/* The directory's owner's own links are theirs to make. */
	ck_assert_int_eq(xp_read_beneath(at("r"), "nvidia-smi-q-x.xml", 100, &out, &len, &err), 1);
	free(out);
	ck_assert_int_eq(chown(at("r"), 65534, 65534), 0);
	ck_assert_int_eq(xp_read_beneath(at("r"), "nvidia-smi-q-x.xml", 100, &out, &len, &err), -1);
	ck_assert_msg(strstr(err.msg, "a hard link to a file of uid 0"), "%s", err.msg);
	ck_assert_int_eq(chown(at("r"), 0, 0), 0);
}
END_TEST

/* ---- the library itself ---- */

START_TEST(private_dir_modes)
{
	/* Made with parents, each exactly 0700 even where the umask would take owner bits off. */
	umask(0277);
	struct xp_err err = {{0}};
	ck_assert_msg(xp_private_dir(at("a/b/c"), true, &err) == 0, "%s", err.msg);
	umask(0);
	ck_assert_uint_eq(mode_of(at("a")), 0700);
	ck_assert_uint_eq(mode_of(at("a/b")), 0700);
	ck_assert_uint_eq(mode_of(at("a/b/c")), 0700);
	/* Missing and not to be made: nothing checked, nothing made. */
	ck_assert_int_eq(xp_private_dir(at("none"), false, &err), 0);
	ck_assert_int_eq(access(at("none"), F_OK), -1);
	/* Writable by others is refused (by the user's own group: private_dir_own_group). */
	ck_assert_int_eq(chmod(at("a/b/c"), 0707), 0);
	ck_assert_int_eq(xp_private_dir(at("a/b/c"), false, &err), -1);
	ck_assert_msg(strstr(err.msg, "mode 0707"), "%s", err.msg);
	/* A regular file is not a directory. */
	free(xp_write_file(dir, "f", "x", 0600));
	ck_assert_int_eq(xp_private_dir(at("f"), true, &err), -1);
	ck_assert_msg(strstr(err.msg, "not a directory"), "%s", err.msg);
}
END_TEST

START_TEST(atomic_write_failure_keeps_target)
{
	/* A write that cannot finish leaves the old file and no temporary behind. */
	free(xp_write_file(dir, "t", "old\n", 0600));
	struct xp_afile a;
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_afile_open(&a, at("t"), XP_FMODE_PRIVATE, &err), 0);
	fputs("half", a.f);
	char *tmp = xp_strdup(a.tmp);
	xp_afile_abort(&a);
	ck_assert_int_eq(access(tmp, F_OK), -1);
	free(tmp);
	size_t len;
	char *t = xp_read_file(at("t"), 100, &len, &err);
	ck_assert_str_eq(t, "old\n");
	free(t);
	/* A target in a directory that does not exist: an error naming it. */
	ck_assert_int_eq(xp_write_atomic(at("no/such"), "x", 1, XP_FMODE_PRIVATE, &err), -1);
	ck_assert_msg(strstr(err.msg, "no/such"), "%s", err.msg);
}
END_TEST

/* A pipe, a socket or a character device at the target (/dev/stdout, /dev/null, a shell's
 * >(...)) is written in place: renaming a file over it would replace the device itself. A link
 * to one planted by another user is replaced, not followed. */
START_TEST(in_place_targets)
{
	struct xp_err err = {{0}};
	ck_assert_int_eq(mkfifo(at("fifo"), 0600), 0);
	int rd = open(at("fifo"), O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(rd, 0);
	ck_assert_msg(xp_write_atomic(at("fifo"), "through\n", 8, XP_FMODE_PRIVATE, &err) == 0, "%s", err.msg);
	char buf[32] = "";
	ck_assert_int_eq(read(rd, buf, sizeof buf - 1), 8);
	ck_assert_str_eq(buf, "through\n");
	close(rd);
	struct stat st;
	ck_assert_int_eq(lstat(at("fifo"), &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
	ck_assert_msg(xp_write_atomic("/dev/null", "x", 1, XP_FMODE_PRIVATE, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(lstat("/dev/null", &st), 0);
	ck_assert(S_ISCHR(st.st_mode));
	/* The user's own link to a device is followed (as /dev/stdout, root's, is). */
	ck_assert_int_eq(symlink("/dev/null", at("mine")), 0);
	ck_assert_msg(xp_write_atomic(at("mine"), "x", 1, XP_FMODE_PRIVATE, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(lstat(at("mine"), &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	if (geteuid() == 0) {
		ck_assert_int_eq(symlink("/dev/null", at("theirs")), 0);
		ck_assert_int_eq(lchown(at("theirs"), 65534, 65534), 0);
		ck_assert_msg(xp_write_atomic(at("theirs"), "mine\n", 5, XP_FMODE_PRIVATE, &err) == 0, "%s", err.msg);
		ck_assert_int_eq(lstat(at("theirs"), &st), 0);
		ck_assert(S_ISREG(st.st_mode));
		ck_assert_uint_eq(mode_of(at("theirs")), 0600);
		ck_assert_int_eq(lstat("/dev/null", &st), 0);
		ck_assert(S_ISCHR(st.st_mode));
	}
	/* An empty directory name is an error, not a read before the name's start. */
	ck_assert_int_eq(xp_private_dir("", true, &err), -1);
	ck_assert_msg(strstr(err.msg, "empty directory name"), "%s", err.msg);
}
END_TEST

/* xpool's own directory may be writable by the user's own group (a per-user group: Debian's
 * default with umask 002), never by another group. */
START_TEST(private_dir_own_group)
{
	struct xp_err err = {{0}};
	ck_assert_int_eq(mkdir(at("g"), 0700), 0);
	ck_assert_int_eq(chmod(at("g"), 0770), 0);
	ck_assert_msg(xp_private_dir(at("g"), false, &err) == 0, "%s", err.msg);
	if (geteuid() == 0 && getegid() != 65534) {
		ck_assert_int_eq(chown(at("g"), 0, 65534), 0);
		ck_assert_int_eq(chmod(at("g"), 0770), 0);
		ck_assert_int_eq(xp_private_dir(at("g"), false, &err), -1);
		ck_assert_msg(strstr(err.msg, "other users may write"), "%s", err.msg);
	}
}
END_TEST

/* A replay file of exactly the size allowed is read whole; one byte more is refused. */
START_TEST(read_beneath_exact_max)
{
	ck_assert_int_eq(mkdir(at("r"), 0700), 0);
	free(xp_write_file(at("r"), "ten", "0123456789", 0600));
	char *out = NULL;
	size_t len = 0;
	struct xp_err err = {{0}};
	ck_assert_msg(xp_read_beneath(at("r"), "ten", 10, &out, &len, &err) == 1, "%s", err.msg);
	ck_assert_uint_eq(len, 10);
	ck_assert_str_eq(out, "0123456789");
	free(out);
	ck_assert_int_eq(xp_read_beneath(at("r"), "ten", 9, &out, &len, &err), -1);
	ck_assert_ptr_null(out);
	ck_assert_msg(strstr(err.msg, "more than the 9"), "%s", err.msg);
}
END_TEST

XP_DEFINE_SUITE(files,
		{"database", .setup = setup, .teardown = teardown,
		 .tests = {db_modes_default_dir, db_modes_wal_shm, db_old_mode_tightened, db_open_keeps_locks, db_symlink_refused,
			   db_state_dir_others_write, db_state_dir_not_mine, db_shared_dir_refused,
			   db_backup_modes_and_links}},
		{"history", .setup = setup, .teardown = teardown,
		 .tests = {history_modes, history_link_replaced, history_shared_dir_refused}},
		{"bookmarks", .setup = setup, .teardown = teardown, .tests = {bookmarks_modes_and_links}},
		{"validate", .setup = setup, .teardown = teardown,
		 .tests = {validate_log_modes, validate_export_modes_and_links}},
		{"exports", .setup = setup, .teardown = teardown, .tests = {sim_output_umask_and_links}},
		{"record", .timeout_s = 300, .setup = setup, .teardown = teardown, .tests = {record_modes_and_links}},
		{"replay", .setup = setup, .teardown = teardown,
		 .tests = {replay_link_to_outside, replay_topology_and_hostname_links, read_beneath_names,
			   read_beneath_hard_link, read_beneath_exact_max}},
		{"library", .setup = setup, .teardown = teardown,
		 .tests = {private_dir_modes, atomic_write_failure_keeps_target, in_place_targets,
			   private_dir_own_group}});
