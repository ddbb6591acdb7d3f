/* cmd_problem.c: `xpool problem list|ack|snooze|unack`: the problems `health` lists, most
 * severe first, and acknowledging or snoozing them (stored and audited, acks.h) so that a
 * known bad device stops shouting without being forgotten. The console's problems view (tab
 * 6) runs these same commands for its a, z and A keys. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acks.h"
#include "cmd.h"
#include "jobrun.h"
#include "model_json.h"
#include "store_open.h"
#include "table.h"

static const struct xp_opt problem_opts[] = {
	{"note", 0, "TEXT", "ack, snooze: why (kept with the acknowledgement and in the audit log)"},
	{"for", 0, "DURATION", "snooze: how long, a number and s, m, h or d (30m, 4h, 1d; default 1h)"},
	{"reason", 0, "TEXT", "ack, snooze: only the problem of WHAT with this reason (as `problem list` words it)"},
	{NULL, 0, NULL, NULL},
};

#define PROBLEM_USAGE                                                                              \
	"list [--json] | ack NODE WHAT [--reason TEXT] [--note TEXT] | snooze NODE WHAT [--for DURATION] [--reason TEXT] " \
	"[--note TEXT] | " \
	"unack NODE WHAT"

/* "2026-12-02 10:00" of t in local time. */
static const char *when(time_t t, char *buf, size_t len)
{
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M", &tm);
	return buf;
}

/* Every problem of the cluster with its state against the stored acknowledgements, in order. */
static size_t gather(const struct xp_cluster *c, const struct xp_acks *acks, time_t now, struct xp_problem **p,
		     int **state)
{
	size_t n = 0;
	*p = NULL;
	for (size_t i = 0; i < c->n_nodes; i++)
		xp_node_problems(c->nodes[i], p, &n, NULL);
	*state = xp_calloc(n ? n : 1, sizeof **state);
	for (size_t i = 0; i < n; i++)
		(*state)[i] = xp_ack_state(acks, &(*p)[i], now, NULL);
	xp_problems_order(*p, *state, NULL, n);
	return n;
}

static int list(struct xp_ctx *ctx, const struct xp_cluster *c, const struct xp_acks *acks, time_t now)
{
	struct xp_problem *p;
	int *state;
	size_t n = gather(c, acks, now, &p, &state);
	if (ctx->json) {
		json_t *a = json_array();
		for (size_t i = 0; i < n; i++) {
			const struct xp_ack *k;
			xp_ack_state(acks, &p[i], now, &k);
			json_t *o = json_object();
			json_object_set_new(o, "node", xp_json_str(p[i].node));
			json_object_set_new(o, "what", xp_json_str(p[i].what));
			json_object_set_new(o, "level", xp_json_str(xp_health_name(p[i].level)));
			json_object_set_new(o, "reason", xp_json_str(p[i].reason));
			json_object_set_new(o, "state", xp_json_str(xp_ack_state_name(state[i])));
			if (k) {
				json_object_set_new(o, "by", xp_json_str(k->actor));
				json_object_set_new(o, "at", json_integer((json_int_t)k->time));
				if (k->kind == XP_ACK_SNOOZE)
					json_object_set_new(o, "until", json_integer((json_int_t)k->until));
				if (k->note)
					json_object_set_new(o, "note", xp_json_str(k->note));
			}
			json_array_append_new(a, o);
		}
		xp_print_json_list(ctx->out, "problems", a);
	} else if (!n) {
		fprintf(ctx->out, "no problems\n");
	} else {
		struct xp_table t;
		xp_table_init(&t, 5);
		xp_table_row(&t, "LEVEL", "NODE", "WHAT", "REASON", "STATE");
		for (size_t i = 0; i < n; i++) {
			const struct xp_ack *k;
			xp_ack_state(acks, &p[i], now, &k);
			char st[256], t1[32];
			if (!k)
				snprintf(st, sizeof st, "open");
			else if (k->kind == XP_ACK_SNOOZE)
				snprintf(st, sizeof st, "snoozed by %s until %s", k->actor ? k->actor : "-",
					 when(k->until, t1, sizeof t1));
			else
				snprintf(st, sizeof st, "acked by %s at %s", k->actor ? k->actor : "-",
					 when(k->time, t1, sizeof t1));
			xp_table_row(&t, xp_health_name(p[i].level), p[i].node, p[i].what, p[i].reason, st);
		}
		xp_table_print(&t, ctx->out, "");
		xp_table_free(&t);
	}
	free(p);
	free(state);
	return XP_EXIT_OK;
}

/* The problems of NODE's WHAT now (the rows an ack covers); 0 after a message when none. */
static size_t problems_of(struct xp_ctx *ctx, const struct xp_cluster *c, const char *sub, const char *node,
			  const char *what, const char *reason, struct xp_problem **p)
{
	*p = NULL;
	size_t n = 0, k = 0;
	const struct xp_node *nd = xp_cluster_node(c, node);
	if (!nd) {
		xp_ctx_error(ctx, "problem %s: no node named %s", sub, node);
		return 0;
	}
	struct xp_problem *all = NULL;
	xp_node_problems(nd, &all, &n, NULL);
	for (size_t i = 0; i < n; i++)
		if (strcmp(all[i].what, what) == 0 && (!reason || (all[i].reason && !strcmp(all[i].reason, reason))))
			all[k++] = all[i];
	if (!k && reason) {
		xp_ctx_error(ctx, "problem %s: %s has no problem %s \"%s\" now (`xpool problem list` shows them)", sub,
			     node, what, reason);
		free(all);
		return 0;
	}
	if (!k) {
		xp_ctx_error(ctx, "problem %s: %s has no problem %s now (`xpool problem list` shows them)", sub, node, what);
		free(all);
		return 0;
	}
	*p = all;
	return k;
}

static int problem_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	const char *sub = a->argv[0];
	bool is_list = strcmp(sub, "list") == 0, is_ack = strcmp(sub, "ack") == 0,
	     is_snooze = strcmp(sub, "snooze") == 0, is_unack = strcmp(sub, "unack") == 0;
	if (!(is_list || is_ack || is_snooze || is_unack) || (is_list && a->argc != 1) || (!is_list && a->argc != 3)) {
		xp_ctx_error(ctx, "problem: usage: xpool problem %s", PROBLEM_USAGE);
		return XP_EXIT_USAGE;
	}
	if ((xp_args_get(a, "note") && !(is_ack || is_snooze)) || (xp_args_get(a, "for") && !is_snooze)) {
		xp_ctx_error(ctx, "problem %s: --%s is for %s", sub, xp_args_get(a, "for") && !is_snooze ? "for" : "note",
			     xp_args_get(a, "for") && !is_snooze ? "snooze" : "ack and snooze");
		return XP_EXIT_USAGE;
	}
	int64_t snooze_s = 3600;
	struct xp_err err = {{0}};
	if (is_snooze && xp_args_get(a, "for") && xp_ack_duration(xp_args_get(a, "for"), &snooze_s, &err) < 0) {
		xp_ctx_error(ctx, "problem snooze: --for %s", err.msg);
		return XP_EXIT_USAGE;
	}
	int64_t now;
	if (xp_jobrun_now(&now, &err) < 0) {
		xp_ctx_error(ctx, "problem: %s", err.msg);
		return XP_EXIT_USAGE;
	}
	if (is_unack) {
		/* Needs no cluster: what is stored is removed even when the node is gone. */
		struct xp_store *s = xp_store_open(ctx->db, &err);
		size_t removed = 0;
		int rc = s && xp_acks_clear(s, a->argv[1], a->argv[2], &removed, &err) == 0 ? XP_EXIT_OK : XP_EXIT_ERROR;
		xp_store_close(s);
		if (rc) {
			xp_ctx_error(ctx, "problem unack: %s", err.msg);
			return rc;
		}
		if (!removed) {
			xp_ctx_error(ctx, "problem unack: nothing is acknowledged or snoozed for %s %s", a->argv[1],
				     a->argv[2]);
			return XP_EXIT_ERROR;
		}
		fprintf(ctx->out, "%s %s: no longer acknowledged (%zu row%s)\n", a->argv[1], a->argv[2], removed,
			removed == 1 ? "" : "s");
		return XP_EXIT_OK;
	}
	struct xp_cluster *c = xp_ctx_cluster(ctx);
	if (!c)
		return XP_EXIT_ERROR;
	if (is_list) {
		struct xp_store *s = xp_store_for_reading(ctx->db, NULL, &err);
		struct xp_acks acks = {0};
		if (!s || xp_acks_load(s, &acks, &err) < 0) {
			xp_store_close(s);
			xp_ctx_error(ctx, "problem list: %s", err.msg);
			return XP_EXIT_ERROR;
		}
		int rc = list(ctx, c, &acks, (time_t)now);
		xp_acks_free(&acks);
		xp_store_close(s);
		return rc;
	}
	struct xp_problem *p;
	size_t n = problems_of(ctx, c, sub, a->argv[1], a->argv[2], xp_args_get(a, "reason"), &p);
	if (!n)
		return XP_EXIT_ERROR;
	struct xp_store *s = xp_store_open(ctx->db, &err);
	time_t until = (time_t)(now + snooze_s);
	int rc = s && xp_acks_put(s, p, n, is_snooze ? XP_ACK_SNOOZE : XP_ACK_ACK, (time_t)now, until,
				  xp_args_get(a, "note"), &err) == 0
			 ? XP_EXIT_OK
			 : XP_EXIT_ERROR;
	xp_store_close(s);
	if (rc)
		xp_ctx_error(ctx, "problem %s: %s", sub, err.msg);
	else if (is_snooze) {
		char t1[32];
		fprintf(ctx->out, "%s %s: snoozed until %s (%zu problem%s)\n", p[0].node, p[0].what,
			when(until, t1, sizeof t1), n, n == 1 ? "" : "s");
	} else
		fprintf(ctx->out, "%s %s: acknowledged (%zu problem%s)\n", p[0].node, p[0].what, n, n == 1 ? "" : "s");
	free(p);
	return rc;
}

static const struct xp_subcmd problem_subs[] = {
	{"list", true}, {"ack", false}, {"snooze", false}, {"unack", false}, {NULL, false},
};
const struct xp_cmd_entry xp_cmd_problem_entry = {
	.name = "problem",
	.alias = NULL,
	.usage = PROBLEM_USAGE,
	.summary = "health problems most severe first; acknowledge or snooze them (stored, audited)",
	.opts = problem_opts,
	.min_args = 1,
	.max_args = 3,
	.exec = problem_exec,
	.subs = problem_subs,
};
