/* bench_load.c: loading a cluster snapshot (issue 15), whole process and in process.
 *
 * For 1,000, 5,000, 10,000, 20,000 and 100,000 nodes, in the sim gen default mix and in
 * `--mix nvidia-h100:100`: the file is written once into a temporary directory by the built
 * program (`xpool sim gen`, timed), then
 *   "place": `xpool --inventory F place --dry-run --devices 4` (load, index, one dry-run),
 *   "inventory": `xpool --inventory F inventory --json >/dev/null` (load and write it all),
 * each run as its own process (fork/exec): wall time, CPU time (user + system: what the load
 * of a shared machine does not inflate) and peak RSS from wait4's rusage, median
 * of 5 runs (3 at 100,000 nodes); and "decode": xp_snapshot_load alone in this process,
 * median of as many runs, with its cost per 1,000 nodes (flat when loading is linear).
 * Targets: 10,000 nodes under 0.5 s and 200 MiB, 100,000 nodes under 5 s and 2 GiB, whole
 * process. A miss prints MISS; the run does not fail on it (machines differ, and the
 * placement index build is part of "place").
 * XP_BENCH_LOAD_MAX=N stops at N nodes (for a quick run); XP_BENCH_LOAD_MIN=N starts at N
 * (100,000 alone, say). The machine's load average is printed with each size. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model.h"
#include "snapshot.h"
#include "testlib.h"

static const size_t sizes[] = {1000, 5000, 10000, 20000, 100000};
static const char *const mixes[] = {NULL, "nvidia-h100:100"};

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, xp_cmp_double);
	return v[n / 2];
}

/* Median wall and CPU time and the largest peak RSS over runs of argv; false when a run failed. */
static bool measure(char *const argv[], int runs, double *ms, double *cpu, long *rss)
{
	double t[8], u[8];
	*rss = 0;
	for (int r = 0; r < runs; r++) {
		struct xp_sample s = xp_run_timed(argv, 1);
		if (s.status != 0) {
			fprintf(stderr, "bench_load: %s ... exited %d\n", argv[0], s.status);
			return false;
		}
		t[r] = s.ms;
		u[r] = s.cpu_ms;
		if (s.rss_kib > *rss)
			*rss = s.rss_kib;
	}
	*ms = median(t, (size_t)runs);
	*cpu = median(u, (size_t)runs);
	return true;
}

/* The in-process decode, median of runs, in a child of its own: the memory it leaves to
 * malloc would otherwise be the peak RSS every later child starts from (a child's maxrss
 * counts what it inherited at fork). */
static int decode(const char *file, int runs, double *ms, size_t *devs)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(p[0]);
		double d[8], out[2] = {-1, 0};
		for (int r = 0; r < runs; r++) {
			struct xp_err err = {{0}};
			double t0 = xp_now_ms();
			struct xp_cluster *c = xp_snapshot_load(file, &err);
			d[r] = xp_now_ms() - t0;
			if (!c) {
				fprintf(stderr, "bench_load: %s\n", err.msg);
				_exit(1);
			}
			out[1] = (double)xp_cluster_device_count(c);
			xp_cluster_free(c);
		}
		out[0] = median(d, (size_t)runs);
		_exit(write(p[1], out, sizeof out) == (ssize_t)sizeof out ? 0 : 1);
	}
	close(p[1]);
	double in[2];
	ssize_t n = read(p[0], in, sizeof in);
	close(p[0]);
	int st = 0;
	waitpid(pid, &st, 0);
	if (n != (ssize_t)sizeof in || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	*ms = in[0];
	*devs = (size_t)in[1];
	return 0;
}

static const char *verdict(size_t nodes, double ms, long rss_kib)
{
	if (nodes == 10000)
		return ms < 500 && rss_kib < 200 * 1024 ? "ok" : "MISS (target 500 ms, 200 MiB)";
	if (nodes == 100000)
		return ms < 5000 && rss_kib < 2048 * 1024 ? "ok" : "MISS (target 5 s, 2 GiB)";
	return "";
}

int main(void)
{
	const char *bin = getenv("XPOOL_BIN");
	if (!bin) {
		fprintf(stderr, "bench_load: set XPOOL_BIN to the built program\n");
		return 1;
	}
	size_t max = getenv("XP_BENCH_LOAD_MAX") ? strtoul(getenv("XP_BENCH_LOAD_MAX"), NULL, 10) : 100000;
	size_t min = getenv("XP_BENCH_LOAD_MIN") ? strtoul(getenv("XP_BENCH_LOAD_MIN"), NULL, 10) : 0;
	char dir[] = "/tmp/xpool-bench-load-XXXXXX";
	if (!mkdtemp(dir)) {
		perror("bench_load: mkdtemp");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("bench_load: whole process (fork/exec, median wall, peak RSS) and decode alone\n");
	int rc = 0;
	for (size_t m = 0; m < sizeof mixes / sizeof mixes[0] && !rc; m++) {
		printf("  mix %s\n", mixes[m] ? mixes[m] : "(sim gen default)");
		for (size_t k = 0; k < sizeof sizes / sizeof sizes[0] && sizes[k] <= max && !rc; k++) {
			size_t nodes = sizes[k];
			if (nodes < min)
				continue;
			int runs = nodes >= 100000 ? 3 : 5;
			char file[sizeof dir + 32], n[24];
			snprintf(file, sizeof file, "%s/c%zu.json", dir, nodes);
			snprintf(n, sizeof n, "%zu", nodes);
			char *gen[] = {(char *)bin, "sim", "gen", "--nodes", n, "-o", file,
				       mixes[m] ? "--mix" : NULL, (char *)mixes[m], NULL};
			struct xp_sample g = xp_run_timed(gen, 1);
			struct stat st;
			if (g.status != 0 || stat(file, &st) < 0) {
				fprintf(stderr, "bench_load: sim gen --nodes %zu failed (%d)\n", nodes, g.status);
				rc = 1;
				break;
			}
			double place_ms, inv_ms, place_cpu, inv_cpu;
			long place_rss, inv_rss;
			char *place[] = {(char *)bin, "--inventory", file, "place", "--dry-run", "--devices", "4", NULL};
			char *inv[] = {(char *)bin, "--inventory", file, "inventory", "--json", NULL};
			if (!measure(place, runs, &place_ms, &place_cpu, &place_rss) ||
			    !measure(inv, runs, &inv_ms, &inv_cpu, &inv_rss)) {
				rc = 1;
				break;
			}
			double dec;
			size_t devs;
			if (decode(file, runs, &dec, &devs) < 0) {
				rc = 1;
				break;
			}
			/* The machine's load: on a shared machine, wall time beyond CPU time is waiting. */
			double load[1] = {-1};
			getloadavg(load, 1);
			printf("  %6zu nodes, %6zu devices, %5.0f MB (sim gen %.1f s, %ld MiB), load %.2f:\n", nodes, devs,
			       (double)st.st_size / 1e6, g.ms / 1000, g.rss_kib / 1024, load[0]);
			printf("    place     %8.0f ms (cpu %6.0f ms) %6ld MiB %s\n", place_ms, place_cpu, place_rss / 1024,
			       verdict(nodes, place_ms, place_rss));
			printf("    inventory %8.0f ms (cpu %6.0f ms) %6ld MiB %s\n", inv_ms, inv_cpu, inv_rss / 1024,
			       verdict(nodes, inv_ms, inv_rss));
			printf("    decode    %8.0f ms (%.1f ms per 1,000 nodes)\n", dec, dec * 1000 / (double)nodes);
			unlink(file);
		}
	}
	rmdir(dir);
	return rc;
}
