/* cmd_node.c: `xpool node drain NODE... [--reason TEXT]` and `xpool node undrain NODE...`:
 * take nodes out of scheduling and back through the run's engine (Slurm: drain and resume;
 * Kubernetes: cordon and uncordon), each node's answer audited. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd.h"
#include "k8s_client.h"
#include "k8s_config.h"
#include "node_access.h"
#include "node_act.h"
#include "source.h"
#include "store.h"

static const struct xp_opt node_opts[] = {
	{"reason", 0, "TEXT", "drain: why (Slurm requires one; kept in the audit log)"},
	{NULL, 0, NULL, NULL},
};

/* One node's outcome. */
struct outcome {
	bool ok;
	char *answer; /* the engine's words ("" when it said nothing) */
};

/* Slurm: all the nodes in one scontrol; when that fails and there were several, one each, so
 * that the answer names the node it is about (a drain or resume applied twice is the same). */
static int slurm_act(struct xp_ctx *ctx, const char *conf, char *const *names, int n, bool drain, const char *reason,
		     struct outcome *o)
{
	struct xp_err err = {{0}};
	size_t len = 1;
	for (int i = 0; i < n; i++)
		len += strlen(names[i]) + 1;
	char *list = xp_calloc(1, len);
	for (int i = 0; i < n; i++) {
		if (i)
			strcat(list, ",");
		strcat(list, names[i]);
	}
	char *answer;
	int st = xp_slurm_nodes_update(conf, list, drain, reason, &answer, &err);
	free(list);
	if (st < 0) {
		xp_ctx_error(ctx, "node %s: %s", drain ? "drain" : "undrain", err.msg);
		return -1;
	}
	if (st == 0 || n == 1) {
		for (int i = 0; i < n; i++)
			o[i] = (struct outcome){st == 0, xp_strdup(answer)};
		free(answer);
		return 0;
	}
	free(answer);
	for (int i = 0; i < n; i++) {
		st = xp_slurm_nodes_update(conf, names[i], drain, reason, &answer, &err);
		if (st < 0)
			o[i] = (struct outcome){false, xp_strdup(err.msg)};
		else
			o[i] = (struct outcome){st == 0, answer ? answer : xp_strdup("")};
		if (st < 0)
			free(answer);
	}
	return 0;
}

static int k8s_act(struct xp_ctx *ctx, const struct xp_source_opts *so, char *const *names, int n, bool drain,
		   struct outcome *o)
{
	struct xp_k8s_opts ko = {.server = so->k8s_server, .token_file = so->k8s_token_file, .ca_file = so->k8s_ca};
	struct xp_k8s_conf conf;
	struct xp_err err = {{0}};
	if (xp_k8s_conf_load(&ko, &conf, &err) < 0) {
		xp_ctx_error(ctx, "node %s: k8s: %s", drain ? "drain" : "undrain", err.msg);
		return -1;
	}
	struct xp_k8s_client *cl = xp_k8s_client_new(&conf, NULL);
	for (int i = 0; i < n; i++) {
		err.msg[0] = '\0';
		bool ok = xp_k8s_node_cordon(cl, names[i], drain, &err) == 0;
		o[i] = (struct outcome){ok, xp_strdup(ok ? "" : err.msg)};
	}
	xp_k8s_client_free(cl);
	return 0;
}

/* The audit row's "after": what was asked, of which engine, and what it answered. */
static char *audit_after(const char *engine, bool drain, const char *reason, const struct outcome *o)
{
	json_t *j = json_object();
	json_object_set_new(j, "engine", json_string(engine));
	json_object_set_new(j, "state", json_string(drain ? (engine[0] == 'k' ? "cordoned" : "drain")
							  : (engine[0] == 'k' ? "uncordoned" : "resume")));
	if (reason)
		json_object_set_new(j, "reason", json_string(reason));
	json_object_set_new(j, "ok", json_boolean(o->ok));
	json_object_set_new(j, "answer", json_string(o->answer ? o->answer : ""));
	char *s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	return s;
}

static int node_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	const char *sub = a->argc ? a->argv[0] : NULL;
	bool drain = sub && strcmp(sub, "drain") == 0;
	if (!sub || (!drain && strcmp(sub, "undrain") != 0)) {
		xp_ctx_error(ctx, "node: %s%s (try drain or undrain)", sub ? "unknown subcommand " : "which subcommand?",
			     sub ? sub : "");
		return XP_EXIT_USAGE;
	}
	char words[32];
	int rc = xp_args_sub_check(ctx, a,
				   &(struct xp_subuse){NULL, sub, drain ? "NODE... [--reason TEXT]" : "NODE...",
						       drain ? " reason " : " ", 1, 100000},
				   words, sizeof words);
	if (rc)
		return rc;
	char *const *names = a->argv + 1;
	int n = a->argc - 1;
	const char *reason = xp_args_get(a, "reason");
	struct xp_source_opts so;
	xp_ctx_source(ctx, &so);
	const char *engine = xp_node_engine(&so);
	if (!engine) {
		xp_ctx_error(ctx, "node %s: no engine to change nodes through: give --slurm, --slurm-conf FILE or --k8s",
			     words);
		return XP_EXIT_USAGE;
	}
	for (int i = 0; i < n; i++)
		if (!xp_node_act_name_ok(names[i])) {
			xp_ctx_error(ctx, "node %s: '%s' is not a node name (letters, digits, '.', '_', '-')", words,
				     names[i]);
			return XP_EXIT_USAGE;
		}
	/* Only nodes the engine lists: Slurm reads NodeName=ALL (any case) as every node and a
	 * NodeSet's name as all of its nodes, which a name check alone lets through. */
	struct xp_cluster *c = xp_ctx_cluster(ctx);
	if (!c)
		return XP_EXIT_ERROR;
	for (int i = 0; i < n; i++)
		if (!strcasecmp(names[i], "all") || !xp_cluster_node(c, names[i])) {
			xp_ctx_error(ctx, "node %s: %s lists no node named %s", words, engine, names[i]);
			return XP_EXIT_ERROR;
		}
	if (drain && engine[0] == 's' && (!reason || !*reason)) {
		xp_ctx_error(ctx, "node drain: Slurm requires a reason: --reason TEXT");
		return XP_EXIT_USAGE;
	}
	char why[512];
	if (!xp_node_access(&so, ctx->read_only, why, sizeof why)) {
		xp_ctx_error(ctx, "node %s: %s; nothing changed", words, why);
		return XP_EXIT_USAGE;
	}
	/* Every action is audited: no database to write, no action. */
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_open(ctx->db, &err);
	if (!s) {
		xp_ctx_error(ctx, "node %s: %s (every action is audited; nothing changed)", words, err.msg);
		return XP_EXIT_ERROR;
	}
	struct outcome *o = xp_calloc((size_t)n, sizeof *o);
	int act = engine[0] == 's' ? slurm_act(ctx, so.slurm, names, n, drain, reason, o)
				   : k8s_act(ctx, &so, names, n, drain, o);
	rc = act < 0 ? XP_EXIT_ERROR : XP_EXIT_OK;
	const char *done = engine[0] == 'k' ? (drain ? "cordoned" : "uncordoned") : (drain ? "drained" : "resumed");
	for (int i = 0; act == 0 && i < n; i++) {
		char *after = audit_after(engine, drain, reason, &o[i]);
		if (xp_audit_add(s, drain ? "node.drain" : "node.undrain", names[i], NULL, after, &err) < 0) {
			xp_ctx_error(ctx, "node %s: %s: audit: %s", words, names[i], err.msg);
			rc = XP_EXIT_ERROR;
		}
		free(after);
		if (o[i].ok)
			fprintf(ctx->out, "%s: %s (%s)\n", names[i], done, engine);
		else {
			xp_ctx_error(ctx, "node %s: %s: %s", words, names[i], *o[i].answer ? o[i].answer : "failed");
			rc = XP_EXIT_ERROR;
		}
	}
	for (int i = 0; i < n; i++)
		free(o[i].answer);
	free(o);
	xp_store_close(s);
	return rc;
}

static const struct xp_subcmd node_subs[] = {
	{"drain", false},
	{"undrain", false},
	{NULL, false},
};

const struct xp_cmd_entry xp_cmd_node_entry = {
	.name = "node",
	.alias = NULL,
	.usage = "drain NODE... [--reason TEXT] | undrain NODE...",
	.summary = "take nodes out of scheduling and back through the engine (Slurm drain/resume, "
		   "Kubernetes cordon/uncordon), audited",
	.opts = node_opts,
	.min_args = 0,
	.max_args = -1,
	.exec = node_exec,
	.subs = node_subs,
};
