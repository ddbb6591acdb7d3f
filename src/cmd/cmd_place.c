/* cmd_place.c: `xpool place --dry-run [-f job.json | flags] [--strategy S] [--reconfigure] [--explain NODE] [--export k8s|volcano|slurm [--flavor hami]] [--json]`:
 * where a job would go, or why it fits nowhere (exit 3). */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "adapters.h"
#include "job_opts.h"
#include "jobspec.h"
#include "model_json.h"
#include "normalize.h"
#include "place.h"
#include "place_export.h"
#include "simgen.h"
#include "slurm_ask.h"
#include "slurm_compare.h"
#include "store.h"
#include "validate.h"

#include <sys/stat.h>

/* The values --strategy and --export take, from the engine's own name tables (prompt completion). */
static const char *strategy_value(int i)
{
	return i >= 0 && i < XP_STRAT_COUNT ? xp_strategy_name(i) : NULL;
}

static const char *export_value(int i)
{
	return i >= 0 && i < XP_EXPORT_COUNT ? xp_export_name(i) : NULL;
}

static const char *flavor_value(int i)
{
	return i >= 0 && i + XP_FLAVOR_HAMI < XP_FLAVOR_COUNT ? xp_export_flavor_name(i + XP_FLAVOR_HAMI) : NULL;
}

/* The options before the job flags say how to place and write; the job flags (job_opts.h)
 * describe the job (and so do not go with -f). */
static const struct xp_opt place_opts[] = {
	{"dry-run", 0, NULL, "decide without changing anything (required: the only mode so far)"},
	{"file", 'f', "FILE", "read the job spec (JSON) from FILE instead of flags"},
	{"strategy", 0, "S", "pack (default), spread, topology or green", strategy_value},
	{"reconfigure", 0, NULL, "a MIG slice may also need a new instance (the GPU repartitioned), not only a free one"},
	{"explain", 0, "NODE", "also list every check for NODE, passed or failed, with its numbers"},
	{"export", 0, "FORMAT", "write the placement as k8s Pods, a volcano Job or a slurm sbatch script", export_value},
	{"partition", 0, "NAME", "with --export slurm: the Slurm partition to ask for (a queue is not one)"},
	{"gres-type", 0, "PROFILE=TYPE[,...]", "with --export slurm: the site's gres type per MIG profile or vNPU template (whole=TYPE: whole GPUs)"},
	{"compare", 0, NULL, "with --slurm: also ask Slurm (sbatch --test-only) and say whether it agrees"},
	{"flavor", 0, "NAME", "with --export k8s or volcano: the sharing layer to write for (hami)", flavor_value},
	XP_JOB_OPTS,
	{NULL, 0, NULL, NULL},
};

/* Two decimals: scores are for reading and comparing, not for float noise. */
static double round2(double x)
{
	return round(x * 100) / 100;
}

static json_t *result_json(const struct xp_place_result *r, const struct xp_job *job)
{
	json_t *o = json_object();
	json_object_set_new(o, "placed", json_boolean(r->placed));
	json_object_set_new(o, "strategy", json_string(xp_strategy_name(r->strategy)));
	json_t *reps = json_array();
	for (size_t i = 0; i < r->n_replicas; i++) {
		const struct xp_place_replica *p = &r->replicas[i];
		json_t *x = json_object();
		json_object_set_new(x, "node", xp_json_str(p->node));
		json_t *devs = json_array(), *slices = json_array();
		for (size_t k = 0; k < p->n_devices; k++) {
			json_array_append_new(devs, json_integer(p->devices[k]));
			if (p->slice)
				json_array_append_new(slices, json_string(p->slice));
		}
		json_object_set_new(x, "devices", devs);
		json_object_set_new(x, "slices", slices);
		json_object_set_new(x, "isolation", json_string(p->isolation));
		json_object_set_new(x, "instance", p->instance ? json_string(p->instance) : json_null());
		json_object_set_new(x, "enable_mig", json_boolean(p->enable_mig));
		json_object_set_new(x, "numa", p->numa >= 0 ? json_integer(p->numa) : json_null());
		json_object_set_new(x, "cpus", p->cpus ? xp_json_str(p->cpus) : json_null());
		json_object_set_new(x, "score", json_real(round2(p->score)));
		json_t *bd = json_object();
		for (int c = 0; c < XP_CRIT_COUNT; c++)
			if (xp_strategy_weight(r->strategy, c) > 0)
				json_object_set_new(bd, xp_criterion_name(c), json_real(round2(p->breakdown[c])));
		json_object_set_new(x, "score_breakdown", bd);
		json_t *env = json_object();
		json_object_set_new(env, p->env_name, json_string(p->env_shown ? p->env_shown : p->env_value));
		json_object_set_new(x, "env", env);
		json_t *mounts = json_array();
		for (size_t k = 0; k < p->n_mounts; k++)
			json_array_append_new(mounts, xp_json_str(p->mounts[k]));
		json_object_set_new(x, "mounts", mounts);
		json_array_append_new(reps, x);
	}
	json_object_set_new(o, "replicas", reps);
	json_t *rs = json_array();
	for (size_t i = 0; i < r->n_reasons; i++) {
		json_t *x = json_object();
		json_object_set_new(x, "code", json_string(r->reasons[i].code));
		json_object_set_new(x, "count", json_integer((json_int_t)r->reasons[i].count));
		json_object_set_new(x, "text", xp_json_str(r->reasons[i].text));
		json_array_append_new(rs, x);
	}
	json_object_set_new(o, "reasons", rs);
	json_object_set_new(o, "pending", json_integer((json_int_t)r->pending));
	if (r->relaxation) {
		json_t *x = json_object();
		json_object_set_new(x, "field", xp_json_str(r->relaxation->field));
		json_object_set_new(x, "from", xp_json_str(r->relaxation->from));
		json_object_set_new(x, "to", xp_json_str(r->relaxation->to));
		json_object_set_new(x, "summary", xp_json_str(r->relaxation->summary));
		json_object_set_new(o, "relaxation", x);
	} else
		json_object_set_new(o, "relaxation", json_null());
	json_object_set_new(o, "summary", xp_json_str(r->summary));
	(void)job;
	return o;
}

static void explain_json(json_t *o, const struct xp_place_result *r, const char *node)
{
	json_t *e = json_object();
	json_object_set_new(e, "node", xp_json_str(node));
	json_t *cl = json_array();
	for (size_t i = 0; i < r->n_checks; i++) {
		json_t *x = json_object();
		json_object_set_new(x, "check", json_string(r->checks[i].name));
		json_object_set_new(x, "pass", json_boolean(r->checks[i].pass));
		json_object_set_new(x, "detail", xp_json_str(r->checks[i].detail));
		json_array_append_new(cl, x);
	}
	json_object_set_new(e, "checks", cl);
	json_object_set_new(o, "explain", e);
}

/* What --validated reads: the validation matrix in the store, opened read-only. */
struct vctx {
	struct xp_store *s; /* NULL: no database yet, so nothing is proven beyond discovery */
};

/* True when a group of job asks for a validation layer. */
static bool job_validates(const struct xp_job *job)
{
	for (size_t i = 0; i < job->n_groups; i++)
		if (job->groups[i].validated_layer >= 0)
			return true;
	return false;
}

/* What `place` keeps between commands of one run (ctx->place_keep): the manifests, read once,
 * and the index of cluster c at generation gen (NULL until a place needs it). The index
 * points into c and into the manifests, so it goes first and with them. */
struct xp_place_keep {
	struct xp_manifest *ms[XP_PLACE_MANIFESTS];
	size_t nm;
	const struct xp_cluster *c;
	uint64_t gen;
	struct xp_place_index *ix;
};

void xp_ctx_place_drop(struct xp_ctx *ctx)
{
	struct xp_place_keep *k = ctx->place_keep;
	if (!k)
		return;
	xp_place_index_free(k->ix);
	xp_place_manifests_free(k->ms, k->nm);
	free(k);
	ctx->place_keep = NULL;
}

bool xp_ctx_place_follow(struct xp_ctx *ctx, const struct xp_cluster *old, uint64_t old_gen, struct xp_cluster *c,
			 const size_t *changed, size_t n)
{
	struct xp_place_keep *k = ctx->place_keep;
	if (!k || !k->ix || k->c != old || k->gen != old_gen) {
		xp_ctx_place_drop(ctx);
		return false;
	}
	/* The changed nodes get the groups keep_index gives every node of a cluster it indexes. */
	for (size_t i = 0; i < n; i++)
		if (changed[i] < c->n_nodes)
			xp_normalize_groups_cow(&c->nodes[changed[i]], (const struct xp_manifest *const *)k->ms, k->nm);
	if (xp_place_index_update(k->ix, c, changed, n) < 0) {
		xp_ctx_place_drop(ctx);
		return false;
	}
	k->c = c;
	k->gen = c->generation;
	if (ctx->verbose)
		fprintf(ctx->err, "xpool: place: placement index moved to the new data (%zu nodes indexed again)\n", n);
	return true;
}

void xp_ctx_touch(struct xp_ctx *ctx)
{
	if (!ctx->cluster)
		return;
	struct xp_place_keep *k = ctx->place_keep;
	bool current = k && k->ix && k->c == ctx->cluster && k->gen == ctx->cluster->generation;
	ctx->cluster->generation++;
	if (current)
		k->gen = ctx->cluster->generation;
}

/* The context's keep, made (manifests read) when there is none. */
static struct xp_place_keep *keep_for(struct xp_ctx *ctx)
{
	if (!ctx->place_keep) {
		struct xp_place_keep *k = xp_calloc(1, sizeof *k);
		k->nm = xp_place_manifests(k->ms);
		ctx->place_keep = k;
	}
	return ctx->place_keep;
}

/* The index of c: the kept one while c is the cluster it was built on, unchanged since (the
 * same generation), else a new one. A dry-run takes back every change it makes to the index,
 * so the kept one answers each `place` as a fresh one would. */
static struct xp_place_index *keep_index(struct xp_ctx *ctx, struct xp_place_keep *k, struct xp_cluster *c)
{
	if (k->ix && k->c == c && k->gen == c->generation)
		return k->ix;
	xp_place_index_free(k->ix);
	/* An inventory written without affinity groups: the groups discovery would give, so that
	 * the vendor's group rules apply to it as to a discovered node. Once per cluster: the
	 * groups, once given, stay. */
	for (size_t i = 0; i < c->n_nodes; i++)
		xp_normalize_groups_cow(&c->nodes[i], (const struct xp_manifest *const *)k->ms, k->nm);
	k->ix = xp_place_index_new(c, (const struct xp_manifest *const *)k->ms, k->nm);
	k->c = c;
	k->gen = c->generation;
	if (ctx->verbose)
		fprintf(ctx->err, "xpool: place: placement index built for %zu nodes\n", c->n_nodes);
	return k->ix;
}

/* Opens the store when a group asks for a validation layer; a named case must exist there. */
static int validated_open(struct xp_ctx *ctx, const struct xp_job *job, struct vctx *v)
{
	const char *kase = NULL;
	bool want = false;
	for (size_t i = 0; i < job->n_groups; i++)
		if (job->groups[i].validated_layer >= 0) {
			want = true;
			kase = kase ? kase : job->groups[i].validated_case;
		}
	if (!want)
		return 0;
	char *def = ctx->db && *ctx->db ? NULL : xp_store_default_path();
	const char *path = def ? def : ctx->db;
	struct xp_err err = {{0}};
	struct stat st;
	if (stat(path, &st) == 0 && !(v->s = xp_store_open_existing(path, &err))) {
		xp_ctx_error(ctx, "place: --validated: %s", err.msg);
		free(def);
		return -1;
	}
	for (size_t i = 0; i < job->n_groups; i++) {
		const char *k = job->groups[i].validated_case;
		struct xp_case cs;
		if (!k)
			continue;
		if (!v->s) {
			xp_ctx_error(ctx, "place: --validated: no case %s: %s holds no validation matrix yet", k, path);
			free(def);
			return -1;
		}
		if (xp_validate_case_get(v->s, k, &cs, &err) < 0) {
			xp_ctx_error(ctx, "place: --validated: %s", err.msg);
			free(def);
			return -1;
		}
		xp_case_clear(&cs);
	}
	free(def);
	return 0;
}

static void print_text(struct xp_ctx *ctx, const struct xp_place_result *r, const char *node)
{
	FILE *f = ctx->out;
	fprintf(f, "%s\n", r->summary);
	if (r->placed) {
		fprintf(f, "%-8s %-20s %-16s %-5s %-6s %s\n", "REPLICA", "NODE", "DEVICES", "NUMA", "SCORE", "ENV");
		for (size_t i = 0; i < r->n_replicas; i++) {
			const struct xp_place_replica *p = &r->replicas[i];
			char numa[16];
			snprintf(numa, sizeof numa, "%d", p->numa);
			/* The node's device indices (as the topology view and the JSON number them); ENV
			 * has the vendor's own numbers, which may differ. */
			char devs[64];
			size_t dl = 0;
			for (size_t k = 0; k < p->n_devices && dl < sizeof devs; k++)
				dl += (size_t)snprintf(devs + dl, sizeof devs - dl, "%s%d", k ? "," : "", p->devices[k]);
			if (p->slice && dl < sizeof devs)
				snprintf(devs + dl, sizeof devs - dl, " %s", p->slice);
			fprintf(f, "%-8zu %-20s %-16s %-5s %-6.1f %s=%s\n", i, p->node, devs, p->numa >= 0 ? numa : "-",
				p->score, p->env_name, p->env_shown ? p->env_shown : p->env_value);
			fprintf(f, "%8s score:", "");
			for (int c = 0; c < XP_CRIT_COUNT; c++)
				if (xp_strategy_weight(r->strategy, c) > 0)
					fprintf(f, " %s %.1f", xp_criterion_name(c), p->breakdown[c]);
			fprintf(f, "\n");
			if (p->instance)
				fprintf(f, "%8s mig: %s\n", "", p->enable_mig ? "new instance, needs MIG mode enabled "
					"(MIG mode off) and repartition" : strcmp(p->instance, "new") == 0
					? "new instance, needs repartition" : "existing instance");
			if (p->cpus)
				fprintf(f, "%8s cpus: %s (NUMA %d)\n", "", p->cpus, p->numa);
			if (p->n_mounts) {
				fprintf(f, "%8s mounts:", "");
				for (size_t k = 0; k < p->n_mounts; k++)
					fprintf(f, " %s", p->mounts[k]);
				fprintf(f, "\n");
			}
		}
	}
	if (r->relaxation)
		fprintf(f, "would fit with %s %s -> %s: %s\n", r->relaxation->field, r->relaxation->from,
			r->relaxation->to, r->relaxation->summary);
	if (node) {
		fprintf(f, "checks for %s:\n", node);
		for (size_t i = 0; i < r->n_checks; i++)
			fprintf(f, "  %-4s %-12s %s\n", r->checks[i].pass ? "ok" : "FAIL", r->checks[i].name,
				r->checks[i].detail);
	}
}

/* A monotonic clock in milliseconds. */
static double mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* --compare: xpool's placement r beside Slurm's answer (sbatch --test-only) for the request
 * xpool's Slurm export writes for it, less the nodes it pinned. The exit status is the
 * dry-run's (0 placed, 3 not); Slurm's refusal is an answer, shown; failing to ask is 1. */
static int compare_slurm(struct xp_ctx *ctx, const struct xp_place_result *r, const struct xp_job *job,
			 const struct xp_cluster *c, const struct xp_manifest *const *ms, size_t nm,
			 const struct xp_export_opts *eo, double decide_ms)
{
	struct xp_err err = {{0}};
	struct xp_slurm_answer s = {0};
	char *request = NULL, *reason = NULL;
	time_t asked = 0;
	size_t nx = 0;
	const char **xn = xp_slurm_ask_nodes(r, &nx);
	bool asked_ok = false, now = false;
	int rc = r->placed ? XP_EXIT_OK : XP_EXIT_UNPLACEABLE;
	if (r->placed) {
		char *script = xp_place_export(XP_EXPORT_SLURM, r, job, c, ms, nm, eo, &err);
		if (!script) {
			xp_ctx_error(ctx, "place: --compare: %s", err.msg);
			rc = XP_EXIT_USAGE;
			goto out;
		}
		request = xp_slurm_request(script);
		free(script);
		double t0 = mono_ms();
		if (xp_slurm_test_only(ctx->slurm, request, &s, &asked, &err) < 0) {
			xp_ctx_error(ctx, "place: --compare: %s", err.msg);
			rc = XP_EXIT_ERROR;
			goto out;
		}
		/* -v: the two answers' times, for comparing their costs (tests/bench). */
		if (ctx->verbose)
			fprintf(ctx->err, "xpool: place --compare: xpool decided in %.3f ms, sbatch --test-only answered "
					  "in %.3f ms\n", decide_ms, mono_ms() - t0);
		asked_ok = true;
		now = xp_slurm_starts_now(&s, asked);
	}
	reason = xp_slurm_ask_reason(r, &s, now);
	/* Not asked (xpool placed nothing, so there is no request to write): no verdict. */
	const char *verdict = !asked_ok ? NULL : reason ? "differ" : "agree";
	FILE *f = ctx->out;
	if (ctx->json) {
		json_t *o = json_object();
		json_t *x = result_json(r, job), *nodes = json_array();
		for (size_t i = 0; i < nx; i++)
			json_array_append_new(nodes, xp_json_str(xn[i]));
		json_object_set_new(x, "nodes", nodes);
		json_object_set_new(o, "xpool", x);
		json_t *req = json_array();
		for (const char *p = request; p && *p;) {
			const char *e = strchr(p, '\n');
			size_t l = e ? (size_t)(e - p) : strlen(p);
			if (!strncmp(p, "#SBATCH ", 8))
				json_array_append_new(req, json_stringn(p + 8, l - 8));
			p += l + (e != NULL);
		}
		json_object_set_new(o, "request", request ? req : (json_decref(req), json_null()));
		json_t *sj = json_object();
		json_object_set_new(sj, "asked", json_boolean(asked_ok));
		if (asked_ok) {
			json_object_set_new(sj, "will_run", json_boolean(s.will_run));
			json_t *sn = json_array();
			for (size_t i = 0; i < s.n_nodes; i++)
				json_array_append_new(sn, xp_json_str(s.nodes[i]));
			json_object_set_new(sj, "nodes", sn);
			json_object_set_new(sj, "nodelist", s.will_run ? xp_json_str(s.nodelist) : json_null());
			json_object_set_new(sj, "start", s.will_run ? json_string(s.start_text) : json_null());
			json_object_set_new(sj, "start_now", json_boolean(now));
			json_object_set_new(sj, "processors", s.will_run ? json_integer(s.procs) : json_null());
			json_object_set_new(sj, "partition", s.partition ? xp_json_str(s.partition) : json_null());
			json_object_set_new(sj, "error", s.error ? xp_json_str(s.error) : json_null());
		}
		json_object_set_new(o, "slurm", sj);
		json_object_set_new(o, "verdict", verdict ? json_string(verdict) : json_null());
		json_object_set_new(o, "reason", reason ? xp_json_str(reason) : json_null());
		json_dumpf(o, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
		fputc('\n', f);
		json_decref(o);
		goto out;
	}
	if (r->placed) {
		fprintf(f, "xpool: ");
		for (size_t i = 0; i < nx; i++)
			fprintf(f, "%s%s", i ? "," : "", xn[i]);
		fprintf(f, " now (strategy %s)\n", xp_strategy_name(r->strategy));
	} else
		fprintf(f, "xpool: refused: %s\n", r->summary ? r->summary : "no node fits");
	if (!asked_ok)
		fprintf(f, "slurm: not asked: xpool placed nothing, so it has no sbatch request to ask with\n");
	else if (s.will_run) {
		fprintf(f, "slurm: ");
		for (size_t i = 0; i < s.n_nodes; i++)
			fprintf(f, "%s%s", i ? "," : "", s.nodes[i]);
		fprintf(f, " at %s UTC%s", s.start_text, now ? " (now)" : "");
		if (s.partition)
			fprintf(f, " in partition %s", s.partition);
		fputc('\n', f);
	} else
		fprintf(f, "slurm: refused: %s\n", s.error);
	if (verdict)
		fprintf(f, "%s\n", verdict);
	if (reason)
		fprintf(f, "reason: %s\n", reason);
out:
	xp_slurm_answer_clear(&s);
	free(reason);
	free(request);
	free(xn);
	return rc;
}

static int place_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	if (!xp_args_has(a, "dry-run")) {
		xp_ctx_error(ctx, "place: only --dry-run is supported so far");
		return XP_EXIT_USAGE;
	}
	const char *sname = xp_args_get(a, "strategy");
	int strategy = sname ? xp_strategy_parse(sname) : XP_STRAT_PACK;
	if (strategy < 0) {
		xp_ctx_error(ctx, "place: --strategy: unknown strategy %s (pack, spread, topology, green)", sname);
		return XP_EXIT_USAGE;
	}
	const char *ename = xp_args_get(a, "export");
	int efmt = ename ? xp_export_parse(ename) : -1;
	if (ename && efmt < 0) {
		xp_ctx_error(ctx, "place: --export: unknown format %s (k8s, volcano, slurm)", ename);
		return XP_EXIT_USAGE;
	}
	/* The global --compare (before the command, or the console's) asks as place's own does. */
	bool compare = xp_args_has(a, "compare") || ctx->compare;
	if (compare && (ename || !ctx->slurm)) {
		xp_ctx_error(ctx, ename ? "place: --compare asks Slurm itself: give --compare or --export"
					: "place: --compare asks the live Slurm: give --slurm or --slurm-conf FILE");
		return XP_EXIT_USAGE;
	}
	if (xp_args_has(a, "partition") && efmt != XP_EXPORT_SLURM && !compare) {
		xp_ctx_error(ctx, "place: --partition goes with --export slurm or --compare");
		return XP_EXIT_USAGE;
	}
	if (xp_args_has(a, "gres-type") && efmt != XP_EXPORT_SLURM && !compare) {
		xp_ctx_error(ctx, "place: --gres-type goes with --export slurm or --compare");
		return XP_EXIT_USAGE;
	}
	const char *fname = xp_args_get(a, "flavor");
	int flavor = fname ? xp_export_flavor_parse(fname) : XP_FLAVOR_NONE;
	if (fname && (flavor < 0 || (efmt != XP_EXPORT_K8S && efmt != XP_EXPORT_VOLCANO))) {
		xp_ctx_error(ctx, flavor < 0 ? "place: --flavor: unknown flavour %s (hami)"
					     : "place: --flavor goes with --export k8s or volcano", fname);
		return XP_EXIT_USAGE;
	}
	/* An export is YAML or a shell script: a script that asked for JSON must not get one. */
	if (ename && ctx->json) {
		xp_ctx_error(ctx, "place: --export %s writes %s, not JSON: give --export or --json", ename,
			     efmt == XP_EXPORT_SLURM ? "an sbatch script" : "YAML");
		return XP_EXIT_USAGE;
	}
	struct xp_err err = {{0}};
	int rc = XP_EXIT_OK;
	struct xp_job *job = xp_job_opts_read(ctx, a, "place", NULL, &rc);
	if (!job)
		return rc;
	struct vctx vc = {NULL};
	struct xp_place_index *ix = NULL;
	struct xp_place_result *r = NULL;
	struct xp_cluster *c = NULL;
	bool validating = false;
	/* The manifests and the index come from the context's keep: built for this cluster once,
	 * reused by every later `place` until the cluster goes or changes. */
	struct xp_place_keep *k = keep_for(ctx);
	struct xp_manifest **ms = k->ms;
	size_t nm = k->nm;
	if (xp_job_check(job, (const struct xp_manifest *const *)ms, nm, &err) < 0) {
		xp_ctx_error(ctx, "place: %s", err.msg);
		rc = XP_EXIT_USAGE;
		goto out;
	}
	if (!(c = xp_ctx_cluster(ctx))) {
		rc = XP_EXIT_ERROR;
		goto out;
	}
	const char *node = xp_args_get(a, "explain");
	if (node && !xp_cluster_node(c, node)) {
		xp_ctx_error(ctx, "place: --explain: no node named %s", node);
		rc = XP_EXIT_ERROR;
		goto out;
	}
	if (validated_open(ctx, job, &vc) < 0) {
		rc = XP_EXIT_ERROR;
		goto out;
	}
	struct xp_place_opts po = {strategy, 0, node, false, false, xp_args_has(a, "reconfigure")};
	ix = keep_index(ctx, k, c);
	/* The evidence may have changed since the index last read it (a `validate` line between
	 * two `place` lines): a job that asks for it reads it afresh, and the answers judged under
	 * it go when the job is done (the callback's context lives on this stack). */
	if (job_validates(job)) {
		xp_place_index_set_validation(ix, xp_job_validated_layer, vc.s);
		validating = true;
	}
	double t0 = mono_ms();
	if (!(r = xp_place_ix(ix, job, &po, &err))) {
		xp_ctx_error(ctx, "place: %s", err.msg);
		rc = XP_EXIT_USAGE;
		goto out;
	}
	if (compare) {
		struct xp_export_opts eo = {.partition = xp_args_get(a, "partition"),
					    .gres_types = xp_args_get(a, "gres-type"),
					    .strategy = strategy};
		rc = compare_slurm(ctx, r, job, c, (const struct xp_manifest *const *)ms, nm, &eo, mono_ms() - t0);
		goto out;
	}
	if (ename && r->placed) {
		/* Only a placement is exported; a refusal keeps the reasons below and exit 3. */
		struct xp_export_opts eo = {.partition = xp_args_get(a, "partition"),
					    .gres_types = xp_args_get(a, "gres-type"),
					    .flavor = flavor,
					    .strategy = strategy};
		char *text = xp_place_export(efmt, r, job, c, (const struct xp_manifest *const *)ms, nm, &eo, &err);
		if (!text) {
			xp_ctx_error(ctx, "place: %s", err.msg);
			rc = XP_EXIT_USAGE;
			goto out;
		}
		fputs(text, ctx->out);
		free(text);
	} else if (ctx->json) {
		json_t *o = result_json(r, job);
		if (node)
			explain_json(o, r, node);
		json_dumpf(o, ctx->out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
		fputc('\n', ctx->out);
		json_decref(o);
	} else
		print_text(ctx, r, node);
	rc = r->placed ? XP_EXIT_OK : XP_EXIT_UNPLACEABLE;
out:
	xp_place_result_free(r);
	if (validating)
		xp_place_index_set_validation(ix, NULL, NULL);
	xp_store_close(vc.s);
	xp_job_free(job);
	return rc;
}

const struct xp_cmd_entry xp_cmd_place_entry = {
	.name = "place",
	.alias = NULL,
	.usage = "--dry-run [-f JOB.json | flags] [--strategy S] [--reconfigure] [--explain NODE] [--export FMT [--partition P] [--gres-type PROFILE=TYPE,...] [--flavor hami]] [--compare] [--json]",
	.summary = "where a job would go, with devices, scores and env, or why it fits nowhere (exit 3)",
	.opts = place_opts,
	.min_args = 0,
	.max_args = 0,
	.exec = place_exec,
	.json = true,
};
