/* agent_ctl.c: the console side of `xpool agent`: the listing and add|rm|ls. */
#include "agent_ctl.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "agent_client.h"
#include "cmd.h"
#include "model_json.h"
#include "table.h"

static void age_text(char *buf, size_t len, time_t then, time_t now)
{
	if (!then) {
		snprintf(buf, len, "never");
		return;
	}
	long s = (long)(now - then);
	if (s < 0)
		s = 0;
	if (s < 120)
		snprintf(buf, len, "%lds", s);
	else if (s < 7200)
		snprintf(buf, len, "%ldm", s / 60);
	else
		snprintf(buf, len, "%ldh", s / 3600);
}

void xp_agent_list_print(const struct xp_agent_pool *p, FILE *f, bool json, time_t now)
{
	size_t n = xp_agent_pool_size(p);
	if (json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++) {
			struct xp_agent_status st;
			xp_agent_pool_status(p, i, &st);
			json_t *o = json_object();
			json_object_set_new(o, "url", xp_json_str(st.url));
			json_object_set_new(o, "node", xp_json_str(st.node));
			json_object_set_new(o, "state", json_string(st.up ? "up" : "down"));
			json_object_set_new(o, "latency_ms", st.latency_ms >= 0 ? json_real(st.latency_ms) : json_null());
			json_object_set_new(o, "last_ok", st.last_ok ? json_integer((json_int_t)st.last_ok) : json_null());
			json_object_set_new(o, "age_s", st.last_ok ? json_integer((json_int_t)(now - st.last_ok)) : json_null());
			json_object_set_new(o, "generation", xp_json_int(st.generation));
			json_object_set_new(o, "fails", json_integer(st.fails));
			json_object_set_new(o, "next_try", st.fails ? json_integer((json_int_t)st.next_try) : json_null());
			json_object_set_new(o, "polls", json_integer((json_int_t)st.polls));
			json_object_set_new(o, "not_modified", json_integer((json_int_t)st.not_modified));
			json_object_set_new(o, "rejected", json_integer((json_int_t)st.rejected));
			json_object_set_new(o, "error", xp_json_str(st.error));
			json_array_append_new(arr, o);
		}
		size_t up = 0, down = 0;
		xp_agent_pool_counts(p, &up, &down);
		json_t *doc = json_object();
		json_object_set_new(doc, "up", json_integer((json_int_t)up));
		json_object_set_new(doc, "down", json_integer((json_int_t)down));
		json_object_set_new(doc, "agents", arr);
		json_dumpf(doc, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', f);
		json_decref(doc);
		return;
	}
	struct xp_table t;
	xp_table_init(&t, 7);
	xp_table_row(&t, "URL", "NODE", "STATE", "LATENCY", "DATA AGE", "POLLS", "ERROR");
	for (size_t i = 0; i < n; i++) {
		struct xp_agent_status st;
		xp_agent_pool_status(p, i, &st);
		char lat[32] = "-", age[32], polls[64], state[48];
		if (st.latency_ms >= 0)
			snprintf(lat, sizeof lat, "%.1f ms", st.latency_ms);
		age_text(age, sizeof age, st.last_ok, now);
		snprintf(polls, sizeof polls, "%llu (%llu 304)", (unsigned long long)st.polls,
			 (unsigned long long)st.not_modified);
		if (st.up)
			snprintf(state, sizeof state, "up");
		else if (st.fails)
			snprintf(state, sizeof state, "down x%u", st.fails);
		else
			snprintf(state, sizeof state, "down");
		xp_table_row(&t, st.url, st.node, state, lat, age, polls, st.error);
	}
	xp_table_print(&t, f, "");
	xp_table_free(&t);
}

int xp_agent_ctl(struct xp_ctx *ctx, const struct xp_args *a)
{
	const char *sub = a->argv[0];
	if (strcmp(sub, "ls") == 0 || strcmp(sub, "list") == 0) {
		if (a->argc > 1) {
			xp_ctx_error(ctx, "agent ls takes no arguments");
			return XP_EXIT_USAGE;
		}
		if (ctx->ui_agent_list) {
			if (ctx->ui_agent_list(ctx, ctx->out) < 0) {
				xp_ctx_error(ctx, "agent ls: this console polls no agents (add one: agent add URL)");
				return XP_EXIT_ERROR;
			}
			return XP_EXIT_OK;
		}
		if (!ctx->agents && !ctx->agents_file) {
			xp_ctx_error(ctx, "agent ls: no agents named (give --agent URL or --agents FILE)");
			return XP_EXIT_USAGE;
		}
		/* Loading the cluster polls every agent once (and says which did not answer). */
		if (!xp_ctx_cluster(ctx) || !ctx->agent_pool)
			return XP_EXIT_ERROR;
		xp_agent_list_print(ctx->agent_pool, ctx->out, ctx->json, time(NULL));
		return XP_EXIT_OK;
	}
	if (strcmp(sub, "probe") == 0) {
		if (a->argc != 3) {
			xp_ctx_error(ctx, "usage: xpool agent probe URL NAME [--case CASE --layer LAYER] [--timeout S] "
					  "--write-token-file FILE");
			return XP_EXIT_USAGE;
		}
		/* The evidence names the node's environments: read them from this agent (with the
		 * agents named already, if any), for this command only. */
		struct xp_err err = {{0}};
		if (xp_args_has(a, "case") && xp_ctx_set_global(ctx, xp_global_find("agent", 0), a->argv[1], &err) < 0) {
			xp_ctx_error(ctx, "agent probe: %s", err.msg);
			return XP_EXIT_USAGE;
		}
		return xp_agent_probe_cmd(ctx, a->argv[1], a->argv[2], xp_args_get(a, "case"), xp_args_get(a, "layer"),
					  xp_args_get(a, "write-token-file"), xp_args_get(a, "timeout"));
	}
	bool add = strcmp(sub, "add") == 0;
	if (!add && strcmp(sub, "rm") != 0 && strcmp(sub, "remove") != 0) {
		xp_ctx_error(ctx, "agent: unknown subcommand %s (ls, add URL, rm URL, probe URL NAME; or no argument to serve)", sub);
		return XP_EXIT_USAGE;
	}
	if (a->argc < 2) {
		xp_ctx_error(ctx, "agent %s: which URL?", sub);
		return XP_EXIT_USAGE;
	}
	if (!ctx->ui_agent) {
		/* Outside the console there is no list that outlives the command to change. */
		xp_ctx_error(ctx, "agent %s changes a running console's agents; on the command line give "
			     "--agent URL or --agents FILE", sub);
		return XP_EXIT_USAGE;
	}
	int rc = XP_EXIT_OK;
	for (int i = 1; i < a->argc; i++) {
		struct xp_err err = {{0}};
		if (ctx->ui_agent(ctx, add, a->argv[i], &err) < 0) {
			xp_ctx_error(ctx, "agent %s: %s", sub, err.msg);
			rc = XP_EXIT_USAGE;
		} else if (!ctx->quiet)
			fprintf(ctx->out, "%s %s (polled now; the events view says how it went)\n",
				add ? "adding" : "removing", a->argv[i]);
	}
	return rc;
}
