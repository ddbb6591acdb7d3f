/* bench_adapters.c: discovery with every adapter in replay mode (the target:
 * under 50 ms median for the 4xA100 and 8x910 fixtures), and the throughput of the
 * nvidia-smi XML parser on the largest recorded XML. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nvidia/nvidia.h"
#include "xp.h"
#include "testlib.h"

#define RUNS 10
#define TARGET_MS 50.0
#define SLACK 3.0

static const char *fixtures(void)
{
	const char *f = getenv("XP_FIXTURES");
	return f && *f ? f : "tests/fixtures";
}

static int copy(const char *from, const char *dir, const char *name)
{
	struct xp_err err = {{0}};
	size_t len;
	char *data = xp_read_file(from, 1 << 26, &len, &err);
	if (!data) {
		fprintf(stderr, "bench_adapters: %s\n", err.msg);
		return -1;
	}
	char *to = xp_asprintf("%s/%s", dir, name);
	FILE *f = fopen(to, "w");
	int rc = f && fwrite(data, 1, len, f) == len ? 0 : -1;
	if (f)
		fclose(f);
	free(to);
	free(data);
	return rc;
}

/* Median wall time of `xpool --replay DIR inventory --json` over RUNS runs. */
static double run_replay(const char *bin, const char *dir, double *min, double *max)
{
	double t[RUNS];
	for (int i = 0; i < RUNS; i++) {
		/* Nothing buffered may be copied into the child and printed twice. */
		fflush(stdout);
		double t0 = xp_now_ms();
		pid_t pid = fork();
		if (pid == 0) {
			FILE *null = freopen("/dev/null", "w", stdout);
			(void)null;
			execl(bin, bin, "--replay", dir, "inventory", "--json", (char *)NULL);
			_exit(127);
		}
		int st;
		waitpid(pid, &st, 0);
		t[i] = xp_now_ms() - t0;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "bench_adapters: %s --replay %s failed\n", bin, dir);
			return -1;
		}
	}
	qsort(t, RUNS, sizeof t[0], xp_cmp_double);
	*min = t[0];
	*max = t[RUNS - 1];
	return (t[RUNS / 2 - 1] + t[RUNS / 2]) / 2;
}

int main(void)
{
	const char *bin = getenv("XPOOL_BIN");
	if (!bin || !*bin)
		bin = "./xpool";
	char base[] = "/tmp/xpool-bench-XXXXXX";
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	char *a100 = xp_asprintf("%s/a100", base), *ascend = xp_asprintf("%s/ascend", base);
	mkdir(a100, 0755);
	mkdir(ascend, 0755);
	char *fx1 = xp_asprintf("%s/nvidia-smi/a100-sxm4-80gb-x4_535.54.03.q.xml", fixtures());
	char *fx2 = xp_asprintf("%s/ascend/npu-smi-info_atlas800-9010_8x910A_24.1.RC2.txt", fixtures());
	char *fx3 = xp_asprintf("%s/ascend/npu-smi-info-m_atlas800-9010_8x910A_24.1.RC2.txt", fixtures());
	char *fx4 = xp_asprintf("%s/hwloc/32em64t-2n8c2t-pci-wholeio.xml", fixtures());
	int bad = copy(fx1, a100, "nvidia-smi-q-x.xml") || copy(fx4, a100, "hwloc.xml") ||
		  copy(fx2, ascend, "npu-smi-info.txt") || copy(fx3, ascend, "npu-smi-info-m.txt") ||
		  copy(fx4, ascend, "hwloc.xml");
	int fail = 0;
	if (!bad) {
		printf("bench_adapters: %s, %d runs each, every adapter loaded, replay mode\n", bin, RUNS);
		printf("%-34s %9s %7s %7s\n", "replay directory", "median ms", "min", "max");
		const char *names[] = {"4x A100 (nvidia-smi -q -x) + hwloc", "8x 910A (npu-smi info, -m) + hwloc"};
		const char *dirs[] = {a100, ascend};
		for (int i = 0; i < 2; i++) {
			double mn, mx, med = run_replay(bin, dirs[i], &mn, &mx);
			if (med < 0) {
				fail = 1;
				continue;
			}
			printf("%-34s %9.2f %7.2f %7.2f\n", names[i], med, mn, mx);
			printf("  %s: median %.1f ms (target < %.0f ms)\n", med < TARGET_MS ? "PASS" : "FAIL", med,
			       TARGET_MS);
			if (med > TARGET_MS * SLACK)
				fail = 1;
		}

		/* Parser throughput: the largest recorded XML, parsed over and over in-process. */
		size_t len;
		struct xp_err err = {{0}};
		char *xml = xp_read_file(fx1, 1 << 26, &len, &err);
		struct xp_raw_node *node = malloc(sizeof *node);
		if (xml && node) {
			char e[256];
			int reps = 0;
			double t0 = xp_now_ms(), el = 0;
			while (el < 1000 && reps < 100000) {
				xp_raw_node_init(node);
				if (xp_nvsmi_parse_xml(xml, len, node, e, sizeof e) < 0) {
					fprintf(stderr, "bench_adapters: parse failed: %s\n", e);
					fail = 1;
					break;
				}
				reps++;
				el = xp_now_ms() - t0;
			}
			if (reps)
				printf("nvidia-smi -q -x parser: %zu bytes x %d in %.0f ms = %.1f MB/s, %.3f ms a document\n",
				       len, reps, el, (double)len * reps / (el / 1e3) / 1e6, el / reps);
		}
		free(xml);
		free(node);
	} else
		fail = 1;
	char *rm[] = {"/bin/rm", "-rf", base, NULL};
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		execv(rm[0], rm);
		_exit(127);
	}
	waitpid(pid, NULL, 0);
	free(a100);
	free(ascend);
	free(fx1);
	free(fx2);
	free(fx3);
	free(fx4);
	return fail;
}
