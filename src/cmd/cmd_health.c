/* cmd_health.c: `xpool health [--json] [NODE...]`: every problem, with its reason. */
#include <jansson.h>
#include <string.h>

#include "cmd.h"
#include "model_json.h"
#include "table.h"

struct problem {
	const char *node;
	char what[32];    /* "node", "ACC3" */
	const char *level; /* "warn", "fail" */
	const char *reason;
};

static void add(struct problem **p, size_t *n, const char *node, const char *what, const char *level,
		const char *reason)
{
	*p = xp_realloc(*p, (*n + 1) * sizeof **p);
	struct problem *x = &(*p)[(*n)++];
	x->node = node;
	snprintf(x->what, sizeof x->what, "%s", what);
	x->level = level;
	x->reason = reason;
}

static void collect(const struct xp_node *n, struct problem **p, size_t *k, size_t *unknown)
{
	if (n->state != XP_NODE_UP)
		add(p, k, n->name, "node",
		    n->state == XP_NODE_DEGRADED || n->state == XP_NODE_DRAINING ? "warn" : "fail",
		    xp_node_state_name(n->state));
	for (size_t i = 0; i < n->n_warnings; i++)
		add(p, k, n->name, "node", "warn", n->warnings[i]);
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct xp_device *d = &n->devices[i];
		char what[32];
		snprintf(what, sizeof what, "ACC%d", d->index);
		if (d->health == XP_HEALTH_UNKNOWN)
			(*unknown)++;
		if (d->health < XP_HEALTH_WARN)
			continue;
		const char *lvl = xp_health_name(d->health);
		if (!d->n_health_reasons)
			add(p, k, n->name, what, lvl, "no reason given");
		for (size_t r = 0; r < d->n_health_reasons; r++)
			add(p, k, n->name, what, lvl, d->health_reasons[r]);
	}
}

static int health_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	struct xp_cluster *c = xp_ctx_cluster(ctx);
	if (!c)
		return XP_EXIT_ERROR;
	for (int i = 0; i < a->argc; i++)
		if (!xp_cluster_node(c, a->argv[i])) {
			xp_ctx_error(ctx, "health: no node named %s", a->argv[i]);
			return XP_EXIT_ERROR;
		}
	struct problem *p = NULL;
	size_t k = 0, unknown = 0, devices = 0;
	for (size_t i = 0; i < c->n_nodes; i++) {
		bool want = a->argc == 0;
		for (int j = 0; j < a->argc && !want; j++)
			want = strcmp(a->argv[j], c->nodes[i]->name) == 0;
		if (!want)
			continue;
		collect(c->nodes[i], &p, &k, &unknown);
		devices += c->nodes[i]->n_devices;
	}
	if (ctx->json) {
		json_t *list = json_array();
		for (size_t i = 0; i < k; i++) {
			json_t *o = json_object();
			json_object_set_new(o, "node", xp_json_str(p[i].node));
			json_object_set_new(o, "what", xp_json_str(p[i].what));
			json_object_set_new(o, "level", xp_json_str(p[i].level));
			json_object_set_new(o, "reason", xp_json_str(p[i].reason));
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
		xp_table_init(&t, 4);
		xp_table_row(&t, "NODE", "WHAT", "LEVEL", "REASON");
		for (size_t i = 0; i < k; i++)
			xp_table_row(&t, p[i].node, p[i].what, p[i].level, p[i].reason);
		xp_table_print(&t, ctx->out, "");
		xp_table_free(&t);
		if (unknown)
			fprintf(ctx->out, "%zu device%s without health data (no vendor adapter reported them)\n",
				unknown, unknown == 1 ? "" : "s");
	}
	free(p);
	return XP_EXIT_OK;
}

const struct xp_cmd_entry xp_cmd_health_entry = {
	.name = "health",
	.alias = NULL,
	.usage = "[--json] [NODE...]",
	.summary = "list every health problem (nodes, devices, discovery warnings) with its reason",
	.opts = NULL,
	.min_args = 0,
	.max_args = -1,
	.exec = health_exec,
	.json = true,
};
