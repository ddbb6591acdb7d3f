/* check_slurm_compare.c: the reader of `sbatch --test-only`'s answer (backends/slurm_compare.c)
 * on the real answers of slurm-wlm 22.05.8 recorded by tests/slurm_compare_check.sh
 * (tests/fixtures/slurm/sbatch-test-only-*.txt: the answer, then "# exit N"), on Slurm's
 * hostlist expressions, and on lines cut, grown and spoiled: each must be an error or a
 * refusal read as Slurm's words, never a crash, a wrong node or a control byte shown. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fakehost.h"
#include "slurm_ask.h"
#include "slurm_compare.h"
#include "suitelib.h"
#include "testlib.h"
#include "xp.h"

/* Parses fixture rel: its text less the recorder's "# exit N" line, with that status. */
static int parse_fixture(const char *rel, struct xp_slurm_answer *a, struct xp_err *err)
{
	size_t len = 0;
	char *t = xp_fixture_text(rel, &len);
	char *mark = strstr(t, "# exit ");
	ck_assert_msg(mark != NULL, "%s has no # exit line", rel);
	int status = atoi(mark + 7);
	int rc = xp_slurm_parse_test_only(t, (size_t)(mark - t), status, a, err);
	free(t);
	return rc;
}

/* Parses text that must fail; returns the message (static). */
static const char *bad(const char *text, int status)
{
	static struct xp_err err;
	memset(&err, 0, sizeof err);
	struct xp_slurm_answer a;
	ck_assert_msg(xp_slurm_parse_test_only(text, strlen(text), status, &a, &err) == -1, "accepted: %s", text);
	ck_assert_ptr_null(a.nodes);
	ck_assert_msg(strncmp(err.msg, "sbatch --test-only", 18) == 0, "no command named: %s", err.msg);
	return err.msg;
}

START_TEST(recorded_will_run)
{
	struct xp_slurm_answer a;
	struct xp_err err = {{0}};
	ck_assert_msg(parse_fixture("slurm/sbatch-test-only-one.txt", &a, &err) == 0, "%s", err.msg);
	ck_assert(a.will_run);
	ck_assert_int_eq(a.job_id, 8);
	ck_assert_uint_eq(a.procs, 1);
	ck_assert_str_eq(a.start_text, "2026-12-02T05:43:15");
	ck_assert_int_eq((long long)a.start, 1796190195LL); /* 2026-12-02T05:43:15Z */
	ck_assert_uint_eq(a.n_nodes, 1);
	ck_assert_str_eq(a.nodes[0], "gpu01");
	ck_assert_str_eq(a.partition, "train");
	ck_assert_ptr_null(a.error);
	ck_assert(xp_slurm_starts_now(&a, a.start));
	ck_assert(xp_slurm_starts_now(&a, a.start - XP_SLURM_NOW_SLACK_S));
	ck_assert(!xp_slurm_starts_now(&a, a.start - XP_SLURM_NOW_SLACK_S - 1));
	xp_slurm_answer_clear(&a);

	ck_assert_msg(parse_fixture("slurm/sbatch-test-only-range.txt", &a, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(a.nodelist, "gpu[03-04]");
	ck_assert_uint_eq(a.n_nodes, 2);
	ck_assert_str_eq(a.nodes[0], "gpu03");
	ck_assert_str_eq(a.nodes[1], "gpu04");
	ck_assert_uint_eq(a.procs, 2);
	xp_slurm_answer_clear(&a);

	/* A heterogeneous job's answer names its nodes without "nodes" and no partition. */
	ck_assert_msg(parse_fixture("slurm/sbatch-test-only-het.txt", &a, &err) == 0, "%s", err.msg);
	ck_assert(a.will_run);
	ck_assert_uint_eq(a.procs, 3);
	ck_assert_uint_eq(a.n_nodes, 1);
	ck_assert_str_eq(a.nodes[0], "gpu01");
	ck_assert_ptr_null(a.partition);
	xp_slurm_answer_clear(&a);
}
END_TEST

START_TEST(recorded_refusals)
{
	struct xp_slurm_answer a;
	struct xp_err err = {{0}};
	ck_assert_msg(parse_fixture("slurm/sbatch-test-only-gres.txt", &a, &err) == 0, "%s", err.msg);
	ck_assert(!a.will_run);
	ck_assert_str_eq(a.error, "Requested node configuration is not available");
	ck_assert_uint_eq(a.n_nodes, 0);
	ck_assert(!xp_slurm_starts_now(&a, 0));
	xp_slurm_answer_clear(&a);
	/* Two lines: the allocation failure is Slurm's reason, before sbatch's own error. */
	ck_assert_msg(parse_fixture("slurm/sbatch-test-only-partition.txt", &a, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(a.error, "Invalid partition name specified");
	xp_slurm_answer_clear(&a);
	/* Only sbatch's error, or nothing recognised: its first error, else the last line. */
	const char *t = "sbatch: error: Batch job submission failed: Invalid account\n";
	ck_assert_int_eq(xp_slurm_parse_test_only(t, strlen(t), 1, &a, &err), 0);
	ck_assert_str_eq(a.error, "Batch job submission failed: Invalid account");
	xp_slurm_answer_clear(&a);
	t = "something\nUnable to contact slurm controller\n";
	ck_assert_int_eq(xp_slurm_parse_test_only(t, strlen(t), 1, &a, &err), 0);
	ck_assert_str_eq(a.error, "Unable to contact slurm controller");
	xp_slurm_answer_clear(&a);
	ck_assert_int_eq(xp_slurm_parse_test_only("", 0, 1, &a, &err), 0);
	ck_assert_str_eq(a.error, "exit status 1, nothing said");
	xp_slurm_answer_clear(&a);
	/* A refusal's words reach a terminal: control bytes go. */
	t = "allocation failure: bad\x1b[2Jnews\r\n";
	ck_assert_int_eq(xp_slurm_parse_test_only(t, strlen(t), 1, &a, &err), 0);
	ck_assert_str_eq(a.error, "bad[2Jnews");
	xp_slurm_answer_clear(&a);
}
END_TEST

START_TEST(hostlists)
{
	char **v = NULL;
	size_t n = 0;
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_slurm_hostlist("gpu[01-03,7],npu01,a[8-10]b", &v, &n, &err), 0);
	const char *want[] = {"gpu01", "gpu02", "gpu03", "gpu7", "npu01", "a8b", "a9b", "a10b"};
	ck_assert_uint_eq(n, 8);
	for (size_t i = 0; i < n; i++) {
		ck_assert_str_eq(v[i], want[i]);
		free(v[i]);
	}
	free(v);
	static const char *bad_lists[] = {
		"",           "gpu[01-",     "gpu[03-01]", "gpu[a-b]",      "gpu[1-2][3]", "gpu]1[",  "gpu,",
		"gpu[1,,2]x", "g pu",        "gpu[1-2]x]", "n[0-999999999]", "gpu[-3]",    "gpu[]",   "a;b",
		"gpu[0000000001]", "gpu[[1]]", ",gpu",
	};
	for (size_t i = 0; i < sizeof bad_lists / sizeof bad_lists[0]; i++) {
		v = NULL;
		n = 0;
		ck_assert_msg(xp_slurm_hostlist(bad_lists[i], &v, &n, &err) == -1, "'%s' accepted", bad_lists[i]);
		ck_assert_ptr_null(v);
		ck_assert_msg(strncmp(err.msg, "hostlist:", 9) == 0, "%s", err.msg);
	}
}
END_TEST

START_TEST(malformed_and_hostile)
{
	const char *ok = "sbatch: Job 8 to start at 2026-12-02T05:43:15 using 1 processors on nodes gpu01 in partition train\n";
	/* Exit 0 without a will-run line, or a will-run line with a failure status. */
	ck_assert(strstr(bad("", 0), "no will-run line"));
	ck_assert(strstr(bad("sbatch: warning: something\n", 0), "no will-run line"));
	ck_assert(strstr(bad(ok, 1), "exit status 1"));
	/* Two answers: which one is Slurm's? */
	char *two = xp_asprintf("%s%s", ok, ok);
	ck_assert(strstr(bad(two, 0), "two will-run lines"));
	free(two);
	static const char *lines[] = {
		/* cut */
		"sbatch: Job 8 to start at 2026-12-02T05:43:15 using 1 processors on nodes gpu01 in partition\n",
		"sbatch: Job 8 to start at 2026-12-02T05:43:15 using 1 processors on nodes gpu01\n",
		"sbatch: Job 8 to start at\n",
		/* grown */
		"sbatch: Job 8 to start at 2026-12-02T05:43:15 using 1 processors on nodes gpu01 in partition train; rm -rf /\n",
		"sbatch: Job 8 to start at 2026-12-02T05:43:15 using 1 processors on nodes gpu01 in partition train x y z a b c\n",
		/* spoiled */
		"sbatch: Job x8 to start at 2026-12-02T05:43:15 using 1 processors on nodes gpu01 in partition train\n",
		"sbatch: Job 8 to start at tomorrow using 1 processors on nodes gpu01 in partition train\n",
		"sbatch: Job 8 to start at 2026-12-02T05:43:15Z using 1 processors on nodes gpu01 in partition train\n",
		"sbatch: Job 8 to start at 2026-12-02T05:43:15 using -1 processors on nodes gpu01 in partition train\n",
		"sbatch: Job 8 to start at 2026-12-02T05:43:15 using 99999999999 processors on nodes gpu01 in partition train\n",
		"sbatch: Job 99999999999999999999 to start at 2026-12-02T05:43:15 using 1 processors on nodes gpu01 in partition train\n",
		"sbatch: Job 8 to start at 2026-12-02T05:43:15 using 1 processors on nodes gpu[01-0 in partition train\n",
		"sbatch: Job 8 to start at 2026-12-02T05:43:15 using 1 processors on nodes n[0-99999999] in partition train\n",
		"sbatch: Job 8 to start at 2026-12-02T05:43:15 using 1 processors on nodes gpu\x1b[2J01 in partition train\n",
		"sbatch: Job 8 to start at 2026-12-02T05:43:15 using 1 processors on nodes gpu01 in partition tr\x07" "ain\n",
		"sbatch: Job 8 to start at 2026-12-02T05:43:15 using 1 processors on disks gpu01 in partition train\n",
		"sbatch: Job 8 to start at 2026-12-02T05:43:15 using 1 processors on nodes gpu01 of partition train\n",
		"sbatch: Job 8 to start at 2026-12-02T05:43:15 using 1 cores on nodes gpu01 in partition train\n",
	};
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
		bad(lines[i], 0);
	/* A NUL byte inside: the rest would be read as another text. */
	static const char nul[] = "sbatch: Job 8 to start at 2026-12-02T05:43:15 using 1 processors on nodes gpu01\0 in partition train\n";
	struct xp_slurm_answer a;
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_slurm_parse_test_only(nul, sizeof nul - 1, 0, &a, &err), -1);
	ck_assert(strstr(err.msg, "NUL"));
	/* Long lines and many of them: an error or a refusal, bounded. */
	size_t big = 1 << 20;
	char *t = xp_malloc(big + 1);
	memset(t, 'x', big);
	t[big] = 0;
	ck_assert_int_eq(xp_slurm_parse_test_only(t, big, 0, &a, &err), -1);
	ck_assert_int_eq(xp_slurm_parse_test_only(t, big, 1, &a, &err), 0);
	ck_assert_uint_eq(strlen(a.error), big);
	xp_slurm_answer_clear(&a);
	for (size_t i = 0; i < big; i += 7)
		t[i] = '\n';
	ck_assert_int_eq(xp_slurm_parse_test_only(t, big, 0, &a, &err), -1);
	free(t);
	/* CRLF endings are read as the line. */
	const char *crlf = "sbatch: Job 8 to start at 2026-12-02T05:43:15 using 1 processors on nodes gpu01 in partition train\r\n";
	ck_assert_int_eq(xp_slurm_parse_test_only(crlf, strlen(crlf), 0, &a, &err), 0);
	ck_assert_str_eq(a.partition, "train");
	xp_slurm_answer_clear(&a);
}
END_TEST

START_TEST(request_drops_nodelist)
{
	const char *script = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --nodelist=gpu02\n#SBATCH --gres=gpu:4\n"
			     "srun --nodelist='gpu02' true\n#SBATCH --nodelist=gpu01";
	char *r = xp_slurm_request(script);
	ck_assert_str_eq(r, "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gres=gpu:4\nsrun --nodelist='gpu02' true\n");
	free(r);
}
END_TEST

/* View 3 asks Slurm on a thread of its own, and gives a question up without waiting for it:
 * a user pressing r again and again must not pile up sbatch runs (review: 40 at once), and
 * the scripts of questions still running when the console quits are removed with it. A
 * faked sbatch on PATH answers slowly. */
START_TEST(asks_in_flight_bounded)
{
	char dir[] = "/tmp/xpool-ask-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	free(xp_write_file(dir, "sbatch", "#!/bin/sh\nsleep 3\necho 'sbatch: error: not now' >&2\nexit 1\n", 0700));
	char *conf = xp_write_file(dir, "slurm.conf", "ClusterName=x\n", 0600);
	char *path = xp_asprintf("%s:%s", dir, getenv("PATH"));
	setenv("PATH", path, 1);
	setenv("TMPDIR", dir, 1);
	struct xp_slurm_ask *a[5] = {0};
	struct xp_err err = {{0}};
	for (int i = 0; i < 4; i++) {
		a[i] = xp_slurm_ask_start(conf, "#!/bin/sh\n#SBATCH --nodes=1\n", &err);
		ck_assert_msg(a[i] != NULL, "%s", err.msg);
	}
	a[4] = xp_slurm_ask_start(conf, "#!/bin/sh\n#SBATCH --nodes=1\n", &err);
	ck_assert_ptr_null(a[4]);
	ck_assert_msg(strstr(err.msg, "still being answered"), "%s", err.msg);
	/* The scripts the four sbatch runs read are removed when the process exits, questions
	 * running or not (the atexit hook, called here as exit would). */
	size_t scripts = 0;
	for (int k = 0; k < 250 && scripts < 4; k++) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
		scripts = 0;
		DIR *d = opendir(dir);
		for (struct dirent *e; d && (e = readdir(d));)
			scripts += strncmp(e->d_name, "xpool-sbatch.", 13) == 0;
		if (d)
			closedir(d);
	}
	ck_assert_uint_eq(scripts, 4);
	xp_slurm_test_only_clean();
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d));)
		ck_assert_msg(strncmp(e->d_name, "xpool-sbatch.", 13) != 0, "%s left behind", e->d_name);
	if (d)
		closedir(d);
	for (int i = 0; i < 4; i++)
		xp_slurm_ask_abandon(a[i]);
	/* Given up, each thread still ends when its sbatch does, and frees itself. */
	for (int k = 0; k < 2000 && xp_slurm_ask_in_flight() > 0; k++) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	ck_assert_int_eq(xp_slurm_ask_in_flight(), 0);
	free(conf);
	free(path);
}
END_TEST

XP_DEFINE_SUITE(slurm_compare, {"answers", .tests = {recorded_will_run, recorded_refusals, hostlists,
						     request_drops_nodelist}},
		{"malformed", .tests = {malformed_and_hostile}}, {"ask", .tests = {asks_in_flight_bounded}})
