/* bench_discovery.c: how long discovery of a captured machine takes, and how much
 * memory the whole program needs for it.
 *
 * For each fixture: RUNS runs of `$XPOOL_BIN --topology FILE inventory --json`
 * (output to /dev/null), timed from fork to wait4 and with the child's peak RSS
 * from wait4's rusage; then RUNS in-process calls of xp_local_discover.
 * The targets are for a 4-socket machine: under 50 ms and under 20 MiB.
 * Machines are noisy, so a miss prints FAIL but only a miss by more than
 * SLACK times fails the run. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "local/local.h"
#include "model.h"
#include "testlib.h"

#define RUNS 10
#define TARGET_MS 50.0
#define TARGET_MIB 20.0
#define SLACK 3.0

struct fixture {
	const char *file;
	const char *what;
	int target; /* hold it to the targets (all do: the largest is the one named) */
};

static const struct fixture fixtures[] = {
	{"192em64t-24n8c2t.xml", "24 sockets, largest", 1},
	{"96em64t-4n4d3ca2co-pci.xml", "4 NUMA, PCI", 1},
	{"32em64t-2n8c2t-pci-wholeio.xml", "2 sockets, GPUs", 1},
};

struct stats {
	double med, min, max;
};

static struct stats stats_of(double *v, size_t n)
{
	qsort(v, n, sizeof *v, xp_cmp_double);
	struct stats s = {n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1]};
	return s;
}

/* Runs argv once with stdout and stderr on /dev/null; fills the wall time and the
 * child's peak RSS. Returns the exit status, or -1 when it could not run. */
static int run_once(char *const argv[], double *ms, double *rss_mib)
{
	double t0 = xp_now_ms();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	struct rusage ru;
	pid_t w;
	while ((w = wait4(pid, &st, 0, &ru)) < 0 && errno == EINTR)
		;
	*ms = xp_now_ms() - t0;
	if (w < 0)
		return -1;
	*rss_mib = (double)ru.ru_maxrss / 1024.0; /* Linux reports KiB */
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Prints a PASS/FAIL line for value against target; returns 1 when the miss is
 * wide enough to fail the run. */
static int judge(const char *fx, const char *what, double value, double target, const char *unit)
{
	const char *verdict = value < target ? "PASS" : "FAIL";
	printf("  %s %s: %s %.1f %s (target < %.0f %s)\n", verdict, fx, what, value, unit, target, unit);
	if (value > target * SLACK) {
		printf("  ^ more than %.0fx over the target\n", SLACK);
		return 1;
	}
	return 0;
}

int main(void)
{
	/* $XPOOL_BIN and $XP_FIXTURES, as the check suites read them. */
	const char *bin = xp_bin();
	if (access(bin, X_OK) < 0) {
		fprintf(stderr, "bench_discovery: %s: %s\n", bin, strerror(errno));
		return 1;
	}

	size_t nf = sizeof fixtures / sizeof fixtures[0];
	struct stats wall[sizeof fixtures / sizeof fixtures[0]];
	double rss[sizeof fixtures / sizeof fixtures[0]];
	struct stats disc[sizeof fixtures / sizeof fixtures[0]];
	int bad = 0;

	printf("bench_discovery: %s, %d runs each\n", bin, RUNS);
	printf("%-34s %8s %7s %7s %8s %9s\n", "fixture", "wall ms", "min", "max", "RSS MiB",
	       "discov ms");
	for (size_t f = 0; f < nf; f++) {
		char path[4096];
		char rel[256];
		snprintf(rel, sizeof rel, "hwloc/%s", fixtures[f].file);
		snprintf(path, sizeof path, "%s", xp_fixture(rel));
		char *argv[] = {(char *)bin, "--topology", path, "inventory", "--json", NULL};
		double ms[RUNS], mib[RUNS];
		for (int r = 0; r < RUNS; r++) {
			int st = run_once(argv, &ms[r], &mib[r]);
			if (st != 0) {
				fprintf(stderr, "bench_discovery: %s --topology %s inventory --json: exit %d\n",
					bin, path, st);
				return 1;
			}
		}
		wall[f] = stats_of(ms, RUNS);
		rss[f] = stats_of(mib, RUNS).med;

		double dms[RUNS];
		for (int r = 0; r < RUNS; r++) {
			struct xp_local_opts opts = {path};
			struct xp_err err = {{0}};
			double t0 = xp_now_ms();
			struct xp_node *n = xp_local_discover(&opts, &err);
			dms[r] = xp_now_ms() - t0;
			if (!n) {
				fprintf(stderr, "bench_discovery: %s\n", err.msg);
				return 1;
			}
			xp_node_free(n);
		}
		disc[f] = stats_of(dms, RUNS);
		printf("%-34.34s %8.2f %7.2f %7.2f %8.1f %9.2f\n", fixtures[f].file, wall[f].med, wall[f].min,
		       wall[f].max, rss[f], disc[f].med);
	}

	printf("targets (issue: discovery of a 4-socket machine < %.0f ms, < %.0f MiB):\n", TARGET_MS,
	       TARGET_MIB);
	for (size_t f = 0; f < nf; f++) {
		if (!fixtures[f].target) {
			printf("  info %s (%s): no target\n", fixtures[f].file, fixtures[f].what);
			continue;
		}
		bad |= judge(fixtures[f].file, "whole program median", wall[f].med, TARGET_MS, "ms");
		bad |= judge(fixtures[f].file, "peak RSS median", rss[f], TARGET_MIB, "MiB");
		bad |= judge(fixtures[f].file, "in-process discovery median", disc[f].med, TARGET_MS, "ms");
	}
	return bad ? 1 : 0;
}
