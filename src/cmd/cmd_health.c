/* cmd_health.c: `xpool health [--json] [--fail-on LEVEL] [NODE...]`: every problem, with its
 * reason; the exit status says whether one is bad enough to act on. */
#include <jansson.h>
#include <string.h>

#include "acks.h"
#include "cmd.h"
#include "node_filter.h"
#include "jobrun.h"
#include "model_json.h"
#include "problems.h"
#include "store_open.h"
#include "table.h"

/* --fail-on's levels and the health level each gates on (never: past every level). */
static const struct {
	const char *name;
	int gate;
} fail_on_levels[] = {{"fail", XP_HEALTH_FAIL}, {"warn", XP_HEALTH_WARN}, {"never", XP_HEALTH_COUNT}};

/* The values --fail-on takes (prompt completion): the table the command parses with. */
static const char *fail_on_value(int i)
{
	return i >= 0 && (size_t)i < sizeof fail_on_levels / sizeof *fail_on_levels ? fail_on_levels[i].name : NULL;
}

static const struct xp_opt health_opts[] = {
	{"fail-on", 0, "LEVEL", "exit 5 when a problem of LEVEL or worse is listed: fail (default), warn, never",
	 fail_on_value},
	XP_NODE_FILTER_OPT,
	{NULL, 0, NULL, NULL},
};

static int health_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	/* The level that makes the exit status 5, for cron and monitoring checks; checked before
	 * discovery so that a typo is a usage error, not a slow one. */
	int gate = XP_HEALTH_FAIL;
	const char *fo = xp_args_get(a, "fail-on");
	if (fo) {
		const char *v;
		int i = 0;
		while ((v = fail_on_value(i)) != NULL && strcmp(v, fo) != 0)
			i++;
		if (v)
			gate = fail_on_levels[i].gate;
		else {
			xp_ctx_error(ctx, "health: --fail-on %s: not fail, warn or never", fo);
			return XP_EXIT_USAGE;
		}
	}
	struct xp_filter *f;
	if (xp_node_filter_compile(ctx, a, "health", &f) < 0)
		return XP_EXIT_USAGE;
	struct xp_cluster *c = xp_ctx_cluster(ctx);
	if (!c) {
		xp_filter_free(f);
		return XP_EXIT_ERROR;
	}
	for (int i = 0; i < a->argc; i++)
		if (!xp_cluster_node(c, a->argv[i])) {
			xp_ctx_error(ctx, "health: no node named %s", a->argv[i]);
			xp_filter_free(f);
			return XP_EXIT_ERROR;
		}
	/* Acknowledged and snoozed problems are listed, marked, and do not set the exit status:
	 * a known bad device must not keep a monitoring check red (`xpool problem`). */
	struct xp_err err = {{0}};
	int64_t now;
	struct xp_acks acks = {0};
	struct xp_store *s = NULL;
	if (xp_jobrun_now(&now, &err) < 0) {
		xp_ctx_error(ctx, "health: %s", err.msg);
		xp_filter_free(f);
		return XP_EXIT_USAGE;
	}
	if (!(s = xp_store_for_reading(ctx->db, NULL, &err)) || xp_acks_load(s, &acks, &err) < 0) {
		/* A database that cannot be read must not turn a health check into an error: the
		 * problems are the hardware's; only their acknowledgements are not known. */
		xp_ctx_error(ctx, "health: acknowledgements not read (%s); every problem counts", err.msg);
		xp_acks_free(&acks);
		acks = (struct xp_acks){0};
	}
	xp_store_close(s);
	struct xp_problem *p = NULL;
	size_t k = 0, unknown = 0, devices = 0;
	for (size_t i = 0; i < c->n_nodes; i++) {
		bool want = a->argc == 0;
		for (int j = 0; j < a->argc && !want; j++)
			want = strcmp(a->argv[j], c->nodes[i]->name) == 0;
		if (!want || !xp_node_filter_match(f, c->nodes[i]))
			continue;
		xp_node_problems(c->nodes[i], &p, &k, &unknown);
		devices += c->nodes[i]->n_devices;
	}
	int *state = xp_calloc(k ? k : 1, sizeof *state);
	bool any_acked = false;
	for (size_t i = 0; i < k; i++) {
		state[i] = xp_ack_state(&acks, &p[i], (time_t)now, NULL);
		any_acked |= state[i] != XP_ACK_OPEN;
	}
	xp_acks_free(&acks);
	if (ctx->json) {
		json_t *list = json_array();
		for (size_t i = 0; i < k; i++) {
			json_t *o = json_object();
			json_object_set_new(o, "node", xp_json_str(p[i].node));
			json_object_set_new(o, "what", xp_json_str(p[i].what));
			json_object_set_new(o, "level", xp_json_str(xp_health_name(p[i].level)));
			json_object_set_new(o, "reason", xp_json_str(p[i].reason));
			json_object_set_new(o, "state", xp_json_str(xp_ack_state_name(state[i])));
			json_array_append_new(list, o);
		}
		json_t *doc = json_object();
		json_object_set_new(doc, "problems", list);
		json_object_set_new(doc, "devices", json_integer((json_int_t)devices));
		json_object_set_new(doc, "devices_health_unknown", json_integer((json_int_t)unknown));
		xp_print_json(ctx->out, doc);
	} else if (!k) {
		fprintf(ctx->out, "no problems: %zu device%s", devices, devices == 1 ? "" : "s");
		if (unknown)
			fprintf(ctx->out, ", %zu without health data (no vendor adapter reported them)", unknown);
		fputc('\n', ctx->out);
	} else {
		struct xp_table t;
		/* The STATE column only when something is acknowledged: the usual table stays as it was. */
		xp_table_init(&t, any_acked ? 5 : 4);
		xp_table_row(&t, "NODE", "WHAT", "LEVEL", "REASON", "STATE");
		for (size_t i = 0; i < k; i++)
			xp_table_row(&t, p[i].node, p[i].what, xp_health_name(p[i].level), p[i].reason,
				     xp_ack_state_name(state[i]));
		xp_table_print(&t, ctx->out, "");
		xp_table_free(&t);
		if (unknown)
			fprintf(ctx->out, "%zu device%s without health data (no vendor adapter reported them)\n",
				unknown, unknown == 1 ? "" : "s");
	}
	int rc = XP_EXIT_OK;
	for (size_t i = 0; i < k; i++)
		if (p[i].level >= gate && state[i] == XP_ACK_OPEN)
			rc = XP_EXIT_PROBLEMS;
	free(p);
	xp_filter_free(f);
	free(state);
	return rc;
}

const struct xp_cmd_entry xp_cmd_health_entry = {
	.name = "health",
	.alias = NULL,
	.usage = "[--json] [--fail-on LEVEL] [--filter EXPR] [NODE...]",
	.summary = "list every health problem (nodes, devices, discovery warnings) with its reason",
	.opts = health_opts,
	.min_args = 0,
	.max_args = -1,
	.exec = health_exec,
	.json = true,
};
