/* bench_validate.c: recording speed and matrix read time at the scale.
 *
 * A temporary database gets 500 environments and 200 cases, then 100,000 results
 * through xp_validate_record (layer rule, audit row and all), in batches of BATCH
 * inside one transaction each; that reports records/s. Then RUNS reads of the whole
 * matrix (xp_validate_matrix: 100,000 cells); the median is held to the issue's
 * target of 50 ms. Machines are noisy, so a miss prints FAIL but only a miss by more
 * than SLACK times fails the run. Then, for information, the placement query and three
 * syncs with a 500-node inventory (what `validate matrix` and the console do first). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "istr.h"
#include "model.h"
#include "store.h"
#include "validate.h"
#include "testlib.h"

#define N_ENVS 500
#define N_CASES 200
#define N_RESULTS 100000
#define BATCH 1000
#define RUNS 5
#define TARGET_MS 50.0
#define SLACK 3.0

static int die(const char *what, const struct xp_err *err)
{
	fprintf(stderr, "bench_validate: %s: %s\n", what, err->msg);
	return 1;
}

static void cleanup(const char *dir)
{
	const char *suffix[] = {"/bench.db", "/bench.db-wal", "/bench.db-shm"};
	char p[512];
	for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
		snprintf(p, sizeof p, "%s%s", dir, suffix[i]);
		unlink(p);
	}
	rmdir(dir);
}

static int run(const char *dir)
{
	char path[512];
	snprintf(path, sizeof path, "%s/bench.db", dir);
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_open(path, &err);
	if (!s)
		return die("open", &err);
	int rc = 1;
	char (*ids)[64] = malloc(N_ENVS * sizeof *ids);
	char name[32], model[32];

	/* The catalogue, each list in one transaction. */
	if (xp_store_begin(s, &err) < 0)
		goto out;
	for (int i = 0; i < N_ENVS; i++) {
		snprintf(model, sizeof model, "Model-%03d", i);
		struct xp_env e = {.vendor = i % 2 ? "NVIDIA" : "Huawei", .model = model, .driver = "535.54.03"};
		if (xp_validate_env_declare(s, &e, &err) < 0)
			goto out;
		char *id = xp_env_id(e.vendor, e.model, e.driver, NULL, NULL);
		snprintf(ids[i], sizeof ids[i], "%s", id);
		free(id);
	}
	for (int i = 0; i < N_CASES; i++) {
		snprintf(name, sizeof name, "case-%03d", i);
		struct xp_case c = {.name = name, .team = "bench"};
		if (xp_validate_case_add(s, &c, &err) < 0)
			goto out;
	}
	if (xp_store_commit(s, &err) < 0)
		goto out;

	/* 100,000 records: cells in turn, each climbing discovered, schedulable, launches
	 * (every pass allowed by the one below it), the cells spread over every env. */
	double t0 = xp_now_ms();
	for (int i = 0; i < N_RESULTS; i += BATCH) {
		if (xp_store_begin(s, &err) < 0)
			goto out;
		for (int k = i; k < i + BATCH && k < N_RESULTS; k++) {
			int cell = k / 3, layer = k % 3;
			snprintf(name, sizeof name, "case-%03d", (cell / N_ENVS) % N_CASES);
			if (xp_validate_record(s, ids[cell % N_ENVS], name, layer, XP_V_PASS, NULL, NULL, "node1", &err) < 0)
				goto out;
		}
		if (xp_store_commit(s, &err) < 0)
			goto out;
	}
	double rec_ms = xp_now_ms() - t0;
	printf("bench_validate: %d environments x %d cases\n", N_ENVS, N_CASES);
	printf("  recorded %d results in batches of %d: %.0f ms, %.0f records/s\n", N_RESULTS, BATCH, rec_ms,
	       N_RESULTS / (rec_ms / 1e3));

	double ms[RUNS];
	size_t filled = 0;
	for (int r = 0; r < RUNS; r++) {
		struct xp_matrix m;
		double a = xp_now_ms();
		if (xp_validate_matrix(s, &m, &err) < 0)
			goto out;
		ms[r] = xp_now_ms() - a;
		filled = 0;
		for (size_t c = 0; c < m.n_envs * m.n_cases; c++)
			for (int l = 0; l < XP_LAYER_COUNT; l++)
				filled += m.cells[c].layers[l].status != XP_V_UNTESTED;
		xp_matrix_free(&m);
	}
	qsort(ms, RUNS, sizeof *ms, xp_cmp_double);
	double med = ms[RUNS / 2];
	printf("  matrix read (%d cells, %zu layers recorded): median %.1f ms, min %.1f, max %.1f over %d runs\n",
	       N_ENVS * N_CASES, filled, med, ms[0], ms[RUNS - 1], RUNS);
	if (filled != N_RESULTS) {
		fprintf(stderr, "bench_validate: the matrix shows %zu recorded layers, not %d\n", filled, N_RESULTS);
		goto out;
	}
	double h = xp_now_ms();
	int best = xp_validate_highest(s, ids[0], NULL);
	printf("  highest layer for one environment, any case: %s in %.2f ms\n", xp_layer_name(best), xp_now_ms() - h);

	/* What every `validate matrix` and console refresh does first: sync with the inventory.
	 * One node per environment, eight devices each; the first sync fills the discovered
	 * layer, the second finds nothing to do, the third follows a driver update on a tenth
	 * of the nodes (their evidence turns stale). */
	struct xp_cluster *c = xp_cluster_new();
	for (int i = 0; i < N_ENVS; i++) {
		snprintf(name, sizeof name, "node%03d", i);
		snprintf(model, sizeof model, "Model-%03d", i);
		struct xp_node *n = xp_node_new(name);
		for (int d = 0; d < 8; d++) {
			struct xp_device *dev = xp_node_add_device(n);
			dev->vendor = xp_istr(i % 2 ? "NVIDIA" : "Huawei");
			dev->model = xp_istr(model);
			dev->driver = xp_istr("535.54.03");
		}
		xp_cluster_add(c, n);
	}
	const char *what[] = {"first (fills discovered)", "again (nothing to do)", "after a driver update on 50 nodes"};
	for (int k = 0; k < 3; k++) {
		if (k == 2)
			for (int i = 0; i < N_ENVS; i += 10)
				for (size_t d = 0; d < c->nodes[i]->n_devices; d++) {
					xp_istr_set(&c->nodes[i]->devices[d].driver, "550.54.14");
				}
		double a = xp_now_ms();
		int src = xp_validate_sync(s, c, time(NULL), 0, &err);
		if (src < 0) {
			xp_cluster_free(c);
			goto out;
		}
		printf("  sync with %d nodes, %s: %.1f ms\n", N_ENVS, what[k], xp_now_ms() - a);
	}
	xp_cluster_free(c);
	printf("  %s matrix query: %.1f ms (target < %.0f ms)\n", med < TARGET_MS ? "PASS" : "FAIL", med, TARGET_MS);
	rc = med > TARGET_MS * SLACK;
	if (rc)
		printf("  ^ more than %.0fx over the target\n", SLACK);
out:
	if (rc && err.msg[0])
		die("recording", &err);
	free(ids);
	xp_store_close(s);
	return rc;
}

int main(void)
{
	char dir[] = "/tmp/xpool-bench-validate-XXXXXX";
	if (!mkdtemp(dir)) {
		perror("bench_validate: mkdtemp");
		return 1;
	}
	int rc = run(dir);
	cleanup(dir);
	return rc;
}
