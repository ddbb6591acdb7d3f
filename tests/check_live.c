/* check_live.c: the console's source read again and again (src/cmd/live.c). A snapshot file
 * that has not changed is not parsed again; one rewritten, renamed over, or a database whose
 * baselines its ECU takes, is; a forced refresh always is. */
#include <check.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "live.h"
#include "simgen.h"
#include "suitelib.h"
#include "testlib.h"

/* Writes a sim cluster of n nodes to path (replacing it). */
static void write_sim(const char *path, size_t n, uint64_t seed)
{
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_sim_generate(n, NULL, seed, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.new", path);
	FILE *f = fopen(tmp, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(xp_sim_write(c, f, &err), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(rename(tmp, path), 0);
	xp_cluster_free(c);
}

/* Sets a file's times a minute back: written long enough ago for its signature to be trusted. */
static void age(const char *path)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct timespec ts[2] = {{now.tv_sec - 60, 0}, {now.tv_sec - 60, 0}};
	ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* One load: 1 a new cluster (freed here) of want nodes, 0 unchanged. */
static int load(struct xp_live *l, const struct xp_source_opts *so, const char *db, bool force, size_t want)
{
	struct xp_err err = {{0}};
	bool unchanged = true;
	struct xp_cluster *c = xp_live_load(l, so, db, NULL, 0, force, &unchanged, &err);
	if (!c) {
		ck_assert_msg(unchanged, "load failed: %s", err.msg);
		return 0;
	}
	ck_assert(!unchanged);
	ck_assert_uint_eq(c->n_nodes, want);
	xp_cluster_free(c);
	return 1;
}

/* After a change: the next load reads, at most one more does (the read itself moved a file),
 * then none. */
static void settles(struct xp_live *l, const struct xp_source_opts *so, const char *db, size_t want)
{
	ck_assert_int_eq(load(l, so, db, false, want), 1);
	load(l, so, db, false, want);
	ck_assert_int_eq(load(l, so, db, false, want), 0);
	ck_assert_int_eq(load(l, so, db, false, want), 0);
}

START_TEST(snapshot_read_when_changed)
{
	char dir[] = "/tmp/xp-live-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char path[512], db[512], wal[600];
	snprintf(path, sizeof path, "%s/c.json", dir);
	snprintf(db, sizeof db, "%s/xpool.db", dir);
	snprintf(wal, sizeof wal, "%s-wal", db);
	write_sim(path, 6, 1);
	age(path);
	atomic_bool cancel = false;
	struct xp_live *l = xp_live_new(&cancel);
	struct xp_source_opts so = {.inventory = path, .agent_timeout = 5};

	/* The first load reads it; the next ones, nothing having changed, do not. */
	ck_assert_int_eq(load(l, &so, db, false, 6), 1);
	ck_assert_int_eq(load(l, &so, db, false, 6), 0);
	ck_assert_int_eq(load(l, &so, db, false, 6), 0);
	/* A forced refresh reads it anyway. */
	ck_assert_int_eq(load(l, &so, db, true, 6), 1);
	ck_assert_int_eq(load(l, &so, db, false, 6), 0);

	/* Renamed over (a new inode): read again, with the new content. */
	write_sim(path, 9, 2);
	age(path);
	ck_assert_int_eq(load(l, &so, db, false, 9), 1);
	ck_assert_int_eq(load(l, &so, db, false, 9), 0);

	/* Rewritten in place with the same size: its time moved, so read again. */
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	struct timespec ts[2] = {st.st_atim, {st.st_mtim.tv_sec + 5, st.st_mtim.tv_nsec}};
	ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
	ck_assert_int_eq(load(l, &so, db, false, 9), 1);
	ck_assert_int_eq(load(l, &so, db, false, 9), 0);

	/* The database (its baselines set the ECU) and its WAL appearing count as changes too.
	 * A load during which they moved (sqlite may make the WAL as it opens the database) is
	 * not trusted: the next one reads again, and then it settles. */
	free(xp_write_file(dir, "xpool.db", "", 0600));
	age(db);
	settles(l, &so, db, 9);
	free(xp_write_file(dir, "xpool.db-wal", "x", 0600));
	age(wal);
	settles(l, &so, db, 9);

	/* Written just now: a same-size rewrite in the same tick of the file's clock would keep
	 * the signature, so it is read at every load until it has settled (XP_LIVE_SETTLE_S). */
	write_sim(path, 7, 3);
	ck_assert_int_eq(load(l, &so, db, false, 7), 1);
	ck_assert_int_eq(load(l, &so, db, false, 7), 1);
	ck_assert_int_eq(load(l, &so, db, false, 7), 1);
	age(path);
	ck_assert_int_eq(load(l, &so, db, false, 7), 1);
	ck_assert_int_eq(load(l, &so, db, false, 7), 0);

	/* A reset (the source options changed) reads it again. */
	xp_live_reset(l);
	ck_assert_int_eq(load(l, &so, db, false, 7), 1);

	/* A file that went away is an error, not the old cluster. */
	ck_assert_int_eq(unlink(path), 0);
	struct xp_err err = {{0}};
	bool unchanged = true;
	ck_assert_ptr_null(xp_live_load(l, &so, db, NULL, 0, false, &unchanged, &err));
	ck_assert(!unchanged);
	ck_assert_msg(err.msg[0] != '\0', "no error for a missing snapshot");

	xp_live_free(l);
	unlink(wal);
	xp_rm_rf(dir);
}
END_TEST

XP_DEFINE_SUITE(live,
	{"snapshot", .tests = {snapshot_read_when_changed}})
