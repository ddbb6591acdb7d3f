/* cmd_sim.c: `xpool sim gen`: a synthetic cluster snapshot for tests and benchmarks;
 * `xpool sim trace`: a synthetic workload trace for that cluster (src/queue/trace.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "files.h"
#include "model_json.h"
#include "place.h"
#include "simgen.h"
#include "trace.h"

#define SIM_GEN_USAGE "--nodes N [--mix SPEC] [--seed S] [-o FILE]"
#define SIM_TRACE_USAGE \
	"--jobs N [--seed S] [--mix KIND:PCT,..] [--queues NAME[:W],..] [--tenants N] [--load F] [-o FILE]"

static const struct xp_opt sim_opts[] = {
	{"nodes", 0, "N", "gen: how many nodes (1 to 1000000)"},
	{"mix", 0, "SPEC", "gen: percent of nodes by kind: KIND:PCT,... (default " XP_SIM_DEFAULT_MIX
			   "); trace: percent of jobs by kind (default " XP_TRACE_DEFAULT_MIX ")"},
	{"seed", 0, "S", "seed of every random choice (default 1): the same seed, the same output"},
	{"output", 'o', "FILE", "write to FILE instead of standard output"},
	{"jobs", 0, "N", "trace: how many jobs (1 to 2000000)"},
	{"queues", 0, "NAME[:W],..", "trace: the queues jobs go to, with weights (default: one queue 'default')"},
	{"tenants", 0, "N", "trace: how many tenants submit (default 4)"},
	{"load", 0, "F", "trace: offered device-time over the cluster's (default 0.85)"},
	{NULL, 0, NULL, NULL},
};

static int sim_trace(struct xp_ctx *ctx, const struct xp_args *a);

/* Opens path for writing ("-" or NULL: the context's output): a new file renamed into place by
 * out_close, so a link planted at the name is replaced, never followed, and a failed run leaves
 * the old file as it was; the mode follows the umask (synthetic data, nothing private). NULL
 * after saying why. */
static FILE *out_open(struct xp_ctx *ctx, const char *words, const char *path, struct xp_afile *af)
{
	memset(af, 0, sizeof *af);
	if (!path || strcmp(path, "-") == 0)
		return ctx->out;
	struct xp_err err = {{0}};
	if (xp_afile_open(af, path, XP_FMODE_UMASK, &err) < 0) {
		xp_ctx_error(ctx, "sim %s: %s", words, err.msg);
		return NULL;
	}
	return af->f;
}

/* Finishes what out_open began: renamed into place when rc is XP_EXIT_OK, else dropped (half a
 * file must not pass for a whole one). The exit code. */
static int out_close(struct xp_ctx *ctx, const char *words, struct xp_afile *af, int rc)
{
	if (!af->f)
		return rc;
	if (rc != XP_EXIT_OK) {
		xp_afile_abort(af);
		return rc;
	}
	struct xp_err err = {{0}};
	if (xp_afile_commit(af, &err) < 0) {
		xp_ctx_error(ctx, "sim %s: %s", words, err.msg);
		return XP_EXIT_ERROR;
	}
	return rc;
}

static int sim_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	struct xp_err err = {{0}};
	char words[16];
	if (strcmp(a->argv[0], "trace") == 0) {
		int rc = xp_args_sub_check(ctx, a,
					   &(struct xp_subuse){NULL, "trace", SIM_TRACE_USAGE,
							       " jobs seed mix queues tenants load output ", 0, 0},
					   words, sizeof words);
		return rc ? rc : sim_trace(ctx, a);
	}
	if (strcmp(a->argv[0], "gen") != 0) {
		xp_ctx_error(ctx, "sim: unknown subcommand '%s'; usage: xpool sim %s", a->argv[0],
			     a->entry->usage);
		return XP_EXIT_USAGE;
	}
	int urc = xp_args_sub_check(ctx, a, &(struct xp_subuse){NULL, "gen", SIM_GEN_USAGE, " nodes mix seed output ", 0, 0},
				    words, sizeof words);
	if (urc)
		return urc;
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
	struct xp_afile af;
	FILE *f = out_open(ctx, "gen", path, &af);
	if (!f) {
		xp_cluster_free(c);
		return XP_EXIT_ERROR;
	}
	/* Compact: at 10,000 nodes an indented document is several times larger for no reader. */
	int rc = XP_EXIT_OK;
	if (xp_sim_write(c, f, &err) < 0) {
		xp_ctx_error(ctx, "sim gen: %s%s%s", path ? path : "", path ? ": " : "", err.msg);
		rc = XP_EXIT_ERROR;
	}
	if (f != ctx->out && (rc = out_close(ctx, "gen", &af, rc)) == XP_EXIT_OK && !ctx->quiet)
		fprintf(ctx->out, "%s: %zu nodes, %zu accelerators (seed %llu)\n", path, c->n_nodes,
			xp_cluster_device_count(c), (unsigned long long)seed);
	xp_cluster_free(c);
	return rc;
}

static int sim_trace(struct xp_ctx *ctx, const struct xp_args *a)
{
	struct xp_err err = {{0}};
	struct xp_trace_gen_opts o = {.seed = 1};
	const char *v;
	char *end = NULL;
	int rc = XP_EXIT_USAGE;
	if (!(v = xp_args_get(a, "jobs"))) {
		xp_ctx_error(ctx, "sim trace: --jobs N is required");
		return XP_EXIT_USAGE;
	}
	errno = 0;
	unsigned long long jobs = strtoull(v, &end, 10);
	if (*end || errno || jobs < 1 || jobs > XP_TRACE_MAX_JOBS || v[0] == '-' || v[0] == '+') {
		xp_ctx_error(ctx, "sim trace: --jobs: '%s' is not a number from 1 to %d", v, XP_TRACE_MAX_JOBS);
		return XP_EXIT_USAGE;
	}
	o.jobs = (size_t)jobs;
	if ((v = xp_args_get(a, "seed")) && xp_sim_parse_seed(v, &o.seed, &err) < 0)
		goto usage;
	if ((v = xp_args_get(a, "mix")) && xp_trace_mix_parse(v, o.mix, &err) < 0)
		goto usage;
	if ((v = xp_args_get(a, "queues")) && xp_trace_queues_parse(v, &o, &err) < 0)
		goto usage;
	if ((v = xp_args_get(a, "tenants"))) {
		errno = 0;
		unsigned long long n = strtoull(v, &end, 10);
		if (*end || errno || n < 1 || n > 10000 || v[0] == '-' || v[0] == '+') {
			xp_errf(&err, "--tenants: '%s' is not a number from 1 to 10000", v);
			goto usage;
		}
		o.tenants = (size_t)n;
	}
	if ((v = xp_args_get(a, "load"))) {
		o.load = strtod(v, &end);
		if (*end || !(o.load > 0) || o.load > 100) {
			xp_errf(&err, "--load: '%s' is not a number above 0 and at most 100", v);
			goto usage;
		}
	}
	struct xp_cluster *c = xp_ctx_cluster(ctx);
	if (!c) {
		rc = XP_EXIT_ERROR;
		goto out;
	}
	struct xp_manifest *ms[XP_PLACE_MANIFESTS];
	size_t n_ms = xp_place_manifests(ms);
	struct xp_trace t;
	rc = XP_EXIT_ERROR;
	if (xp_trace_gen(c, (const struct xp_manifest *const *)ms, n_ms, &o, &t, &err) < 0) {
		xp_ctx_error(ctx, "sim trace: %s", err.msg);
		xp_place_manifests_free(ms, n_ms);
		goto out;
	}
	xp_place_manifests_free(ms, n_ms);
	const char *path = xp_args_get(a, "output");
	struct xp_afile af;
	FILE *f = out_open(ctx, "trace", path, &af);
	if (f) {
		rc = XP_EXIT_OK;
		if (xp_trace_write(f, &t, &err) < 0) {
			xp_ctx_error(ctx, "sim trace: %s%s%s", path ? path : "", path ? ": " : "", err.msg);
			rc = XP_EXIT_ERROR;
		}
		if (f != ctx->out && (rc = out_close(ctx, "trace", &af, rc)) == XP_EXIT_OK && !ctx->quiet)
			fprintf(ctx->out, "%s: %zu jobs in %zu queues (seed %llu)\n", path, t.n_jobs, t.qs.n_queues,
				(unsigned long long)o.seed);
	}
	xp_trace_clear(&t);
	goto out;
usage:
	xp_ctx_error(ctx, "sim trace: %s", err.msg);
out:
	xp_trace_gen_opts_clear(&o);
	return rc;
}

/* gen writes inventory JSON, trace JSON lines, whatever --json says: the option would change nothing. */
static const struct xp_subcmd sim_subs[] = {
	{"gen", false}, {"trace", false}, {NULL, false},
};
const struct xp_cmd_entry xp_cmd_sim_entry = {
	.name = "sim",
	.alias = NULL,
	.usage = "gen " SIM_GEN_USAGE " | trace " SIM_TRACE_USAGE,
	.summary = "generate a synthetic cluster snapshot (inventory JSON) or workload trace (JSON lines)",
	.opts = sim_opts,
	.min_args = 1,
	.max_args = 1,
	.exec = sim_exec,
	.subs = sim_subs,
};
