/* cmd_sim.c: `xpool sim gen`: a synthetic cluster snapshot for tests and benchmarks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "model_json.h"
#include "simgen.h"

static const struct xp_opt sim_opts[] = {
	{"nodes", 0, "N", "how many nodes (1 to 1000000)"},
	{"mix", 0, "SPEC", "percent of nodes by kind: KIND:PCT,... (default " XP_SIM_DEFAULT_MIX ")"},
	{"seed", 0, "S", "seed of every random choice (default 1): the same seed, the same cluster"},
	{"output", 'o', "FILE", "write the snapshot to FILE instead of standard output"},
	{NULL, 0, NULL, NULL},
};

static int sim_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	struct xp_err err = {{0}};
	if (strcmp(a->argv[0], "gen") != 0) {
		xp_ctx_error(ctx, "sim: unknown subcommand '%s'; usage: xpool sim %s", a->argv[0],
			     a->entry->usage);
		return XP_EXIT_USAGE;
	}
	size_t nodes = 0;
	uint64_t seed = 1;
	struct xp_sim_mix mix;
	const char *nv = xp_args_get(a, "nodes"), *sv = xp_args_get(a, "seed");
	if (!nv) {
		xp_ctx_error(ctx, "sim gen: --nodes N is required");
		return XP_EXIT_USAGE;
	}
	if (xp_sim_parse_nodes(nv, &nodes, &err) < 0 || (sv && xp_sim_parse_seed(sv, &seed, &err) < 0) ||
	    xp_sim_mix_parse(xp_args_has(a, "mix") ? xp_args_get(a, "mix") : XP_SIM_DEFAULT_MIX, &mix, &err) < 0) {
		xp_ctx_error(ctx, "sim gen: %s", err.msg);
		return XP_EXIT_USAGE;
	}
	struct xp_cluster *c = xp_sim_generate(nodes, &mix, seed, &err);
	if (!c) {
		xp_ctx_error(ctx, "sim gen: %s", err.msg);
		return XP_EXIT_ERROR;
	}
	const char *path = xp_args_get(a, "output");
	FILE *f = ctx->out;
	if (path && strcmp(path, "-") != 0 && !(f = fopen(path, "w"))) {
		xp_ctx_error(ctx, "sim gen: %s: %s", path, strerror(errno));
		xp_cluster_free(c);
		return XP_EXIT_ERROR;
	}
	/* Compact: at 10,000 nodes an indented document is several times larger for no reader. */
	int rc = XP_EXIT_OK;
	if (xp_sim_write(c, f, &err) < 0) {
		xp_ctx_error(ctx, "sim gen: %s%s%s", path ? path : "", path ? ": " : "", err.msg);
		rc = XP_EXIT_ERROR;
	}
	if (f != ctx->out) {
		if (fclose(f) != 0 && rc == XP_EXIT_OK) {
			xp_ctx_error(ctx, "sim gen: %s: %s", path, strerror(errno));
			rc = XP_EXIT_ERROR;
		}
		/* Half a snapshot must not pass for a whole one. */
		if (rc != XP_EXIT_OK)
			unlink(path);
		else if (!ctx->quiet)
			fprintf(ctx->out, "%s: %zu nodes, %zu accelerators (seed %llu)\n", path, c->n_nodes,
				xp_cluster_device_count(c), (unsigned long long)seed);
	}
	xp_cluster_free(c);
	return rc;
}

/* gen writes inventory JSON whatever --json says: the option would change nothing. */
static const struct xp_subcmd sim_subs[] = {
	{"gen", false}, {NULL, false},
};
const struct xp_cmd_entry xp_cmd_sim_entry = {
	.name = "sim",
	.alias = NULL,
	.usage = "gen --nodes N [--mix SPEC] [--seed S] [-o FILE]",
	.summary = "generate a synthetic heterogeneous cluster snapshot (inventory JSON)",
	.opts = sim_opts,
	.min_args = 1,
	.max_args = 1,
	.exec = sim_exec,
	.subs = sim_subs,
};
