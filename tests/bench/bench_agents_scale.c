/* bench_agents_scale.c: the console's refresh over 10,000 node agents, over real HTTP on loopback.
 *
 * One farm process (tests/testlib.c, xp_farm_start) answers GET /v1/node for every node of a
 * `sim gen` cluster, each node an agent of its own at its own loopback address, as the real
 * agent does (body, strong ETag, 304 on If-None-Match, generation). This process is the console:
 * its refresh does what the console's refresh thread does (xp_live_load over an agents file:
 * poll, then build the cluster when something changed) and then renews the placement index as
 * the console's placement view does. Measured, medians of RUNS (wall and this process's CPU):
 *   - a warm cycle: every agent answers 304, nothing is built;
 *   - a changed cycle: CHANGED_PCT of the nodes changed between cycles: their bodies are
 *     decoded, the cluster built and the index renewed.
 * Target (issue 15): both within the console's refresh interval (XP_DEFAULT_DELAY, 2 s), the
 * warm cycle's CPU a small share of a core. XP_BENCH_AGENTS sets the count (default 10,000).
 * Machines are noisy: a miss prints FAIL; only a miss by more than SLACK times fails. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent_client.h"
#include "cmd.h"
#include "live.h"
#include "model.h"
#include "place.h"
#include "snapshot.h"
#include "testlib.h"
#include "xp.h"

#define RUNS 7
#define CHANGED_PCT 1
#define SLACK 3.0

static double cpu_ms(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, xp_cmp_double);
	return v[n / 2];
}

int main(void)
{
	size_t n = 10000;
	const char *env = getenv("XP_BENCH_AGENTS");
	if (env && atol(env) > 0)
		n = (size_t)atol(env);
	/* Each agent is a socket here and one in the farm: fit under the descriptor limit. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && rl.rlim_max < n + 256) {
		size_t fit = rl.rlim_max > 512 ? (size_t)rl.rlim_max - 256 : (size_t)rl.rlim_max / 4;
		fprintf(stderr, "bench_agents_scale: the descriptor limit (%lu) allows %zu agents, not %zu\n",
			(unsigned long)rl.rlim_max, fit, n);
		n = fit;
	}
	char dir[64];
	snprintf(dir, sizeof dir, "/tmp/xpool-bench-scale-%d", (int)getpid());
	mkdir(dir, 0755);
	char inv[128], nodes_s[32];
	snprintf(inv, sizeof inv, "%s/inv.json", dir);
	snprintf(nodes_s, sizeof nodes_s, "%zu", n);
	struct xp_run r;
	if (xp_run_xpool(&r, NULL, "sim", "gen", "--nodes", nodes_s, "-o", inv, NULL) < 0 || r.status != 0) {
		fprintf(stderr, "bench_agents_scale: sim gen failed: %s\n", r.err ? r.err : "");
		xp_rm_rf(dir);
		return 1;
	}
	xp_run_free(&r);
	struct xp_err err = {{0}};
	struct xp_cluster *src = xp_snapshot_load(inv, &err);
	if (!src) {
		fprintf(stderr, "bench_agents_scale: %s\n", err.msg);
		xp_rm_rf(dir);
		return 1;
	}
	struct xp_farm *farm = xp_farm_start(src);
	if (!farm) {
		fprintf(stderr, "bench_agents_scale: the farm did not start\n");
		xp_rm_rf(dir);
		return 1;
	}
	char list[128];
	snprintf(list, sizeof list, "%s/agents", dir);
	FILE *f = fopen(list, "w");
	if (!f) {
		fprintf(stderr, "bench_agents_scale: %s: %s\n", list, strerror(errno));
		xp_farm_stop(farm);
		xp_cluster_free(src);
		xp_rm_rf(dir);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		char url[64];
		xp_farm_url(farm, i, url, sizeof url);
		fprintf(f, "%s\n", url);
	}
	fclose(f);

	struct xp_manifest *ms[XP_PLACE_MANIFESTS];
	size_t nm = xp_place_manifests(ms);
	const struct xp_manifest *const *cms = (const struct xp_manifest *const *)ms;
	atomic_bool cancel = false;
	struct xp_live *live = xp_live_new(&cancel);
	struct xp_source_opts so = {.agents_file = list};
	int rc = 0;
	/* The first cycle connects to every agent and decodes every node (a cold start); a few
	 * more with force, for agents whose connection the listen backlog made late. */
	double w0 = xp_now_ms(), c0 = cpu_ms();
	bool unchanged;
	struct xp_cluster *c = xp_live_load(live, &so, NULL, NULL, 0, false, &unchanged, &err);
	double cold_wall = xp_now_ms() - w0, cold_cpu = cpu_ms() - c0;
	size_t up = 0, down = 0;
	for (int t = 0; t < 5; t++) {
		xp_live_agent_counts(live, &up, &down);
		if (!down)
			break;
		struct xp_cluster *c2 = xp_live_load(live, &so, NULL, NULL, 0, true, &unchanged, &err);
		if (c2) {
			xp_cluster_free(c);
			c = c2;
		}
	}
	xp_live_agent_counts(live, &up, &down);
	if (!c || down || c->n_nodes != n) {
		fprintf(stderr, "bench_agents_scale: %zu of %zu agents down after the cold cycles\n", down, n);
		rc = 1;
		goto out;
	}
	w0 = xp_now_ms();
	struct xp_place_index *ix = xp_place_index_new(c, cms, nm);
	double ix_full = xp_now_ms() - w0;

	double warm_wall[RUNS], warm_cpu[RUNS], ch_wall[RUNS], ch_cpu[RUNS], ch_build[RUNS], ch_ix[RUNS];
	struct xp_farm_counts fc0 = xp_farm_counts(farm);
	for (int k = 0; k < RUNS; k++) {
		w0 = xp_now_ms(), c0 = cpu_ms();
		struct xp_cluster *c2 = xp_live_load(live, &so, NULL, NULL, 0, false, &unchanged, &err);
		warm_wall[k] = xp_now_ms() - w0, warm_cpu[k] = cpu_ms() - c0;
		if (c2 || !unchanged) {
			xp_live_agent_counts(live, &up, &down);
			char *l = xp_live_agent_list(live);
			fprintf(stderr, "bench_agents_scale: warm cycle %d built a cluster (%zu down):\n%.600s\n", k, down,
				l ? l : "");
			free(l);
			xp_cluster_free(c2);
			rc = 1;
		}
	}
	struct xp_farm_counts fc1 = xp_farm_counts(farm);
	if (fc1.not_modified - fc0.not_modified != RUNS * n || fc1.ok200 != fc0.ok200) {
		fprintf(stderr, "bench_agents_scale: warm cycles got %lu 304s and %lu 200s, expected %zu and 0\n",
			fc1.not_modified - fc0.not_modified, fc1.ok200 - fc0.ok200, RUNS * n);
		rc = 1;
	}
	size_t k_changed = n * CHANGED_PCT / 100 ? n * CHANGED_PCT / 100 : 1;
	uint64_t dec0, built0, dec1, built1;
	xp_live_agent_work(live, &dec0, &built0);
	unsigned seed = 15;
	size_t reindexed = 0;
	for (int k = 0; k < RUNS; k++) {
		for (size_t j = 0; j < k_changed; j++)
			xp_farm_change(farm, (size_t)rand_r(&seed) % n);
		w0 = xp_now_ms(), c0 = cpu_ms();
		struct xp_cluster *c2 = xp_live_load(live, &so, NULL, NULL, 0, false, &unchanged, &err);
		double wb = xp_now_ms();
		ch_build[k] = 0;
		if (!c2) {
			fprintf(stderr, "bench_agents_scale: a changed cycle built no cluster\n");
			rc = 1;
			continue;
		}
		/* As the console does: the positions whose node is not the same, indexed again. */
		size_t *chg = xp_malloc(c2->n_nodes * sizeof *chg), n_chg = 0;
		for (size_t i = 0; c->n_nodes == c2->n_nodes && i < c2->n_nodes; i++)
			if (c->nodes[i] != c2->nodes[i])
				chg[n_chg++] = i;
		int re = c->n_nodes == c2->n_nodes ? xp_place_index_update(ix, c2, chg, n_chg) : -1;
		if (re < 0) {
			xp_place_index_free(ix);
			ix = xp_place_index_new(c2, cms, nm);
			re = (int)c2->n_nodes;
		}
		reindexed += (size_t)re;
		free(chg);
		ch_ix[k] = xp_now_ms() - wb;
		ch_wall[k] = xp_now_ms() - w0, ch_cpu[k] = cpu_ms() - c0;
		xp_cluster_free(c);
		c = c2;
	}
	xp_live_agent_work(live, &dec1, &built1);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double interval_ms = XP_DEFAULT_DELAY * 1e3;
	double mw = median(warm_wall, RUNS), mc = median(warm_cpu, RUNS);
	double cw = median(ch_wall, RUNS), cc = median(ch_cpu, RUNS), ci = median(ch_ix, RUNS);
	(void)ch_build;
	printf("bench_agents_scale: %zu agents in one farm process on loopback, refresh every %.0f s\n", n,
	       XP_DEFAULT_DELAY);
	printf("  cold cycle (connect, every node decoded, cluster built): %8.1f ms wall %8.1f ms CPU\n", cold_wall,
	       cold_cpu);
	printf("  warm cycle (%zu x 304), median of %d:       %8.1f ms wall %8.1f ms CPU (%.1f%% of a core)  %s\n", n,
	       RUNS, mw, mc, mc / interval_ms * 100, mw <= interval_ms ? "ok" : "FAIL");
	printf("  %zu changed (%d%%), cycle + cluster + index, median: %8.1f ms wall %8.1f ms CPU  %s\n", k_changed,
	       CHANGED_PCT, cw, cc, cw <= interval_ms ? "ok" : "FAIL");
	printf("    of which the index update: %.1f ms (a full build: %.1f ms)\n", ci, ix_full);
	printf("    per changed cycle: %.1f replies decoded, %.1f nodes copied into the cluster, %.1f re-indexed (of %zu)\n",
	       (double)(dec1 - dec0) / RUNS, (double)(built1 - built0) / RUNS, (double)reindexed / RUNS, n);
	printf("  peak RSS %ld MiB\n", ru.ru_maxrss / 1024);
	if (mw > interval_ms * SLACK || cw > interval_ms * SLACK)
		rc = 1;
	xp_place_index_free(ix);
out:
	xp_cluster_free(c);
	xp_live_free(live);
	xp_place_manifests_free(ms, nm);
	xp_farm_stop(farm);
	xp_cluster_free(src);
	xp_rm_rf(dir);
	return rc;
}
