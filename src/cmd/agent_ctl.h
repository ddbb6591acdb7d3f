/* agent_ctl.h: the console's side of `xpool agent`: `agent ls` (a listing of the
 * polled agents, one row each with node, state, latency and last error) and
 * `agent add|rm URL`, which change the running console's list. */
#ifndef XP_AGENT_CTL_H
#define XP_AGENT_CTL_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

struct xp_agent_pool;
struct xp_ctx;
struct xp_args;

/* Prints the agents as a table (URL NODE STATE LATENCY AGE POLLS ERROR), or as a JSON document
 * with json; now is the clock for ages. */
void xp_agent_list_print(const struct xp_agent_pool *p, FILE *f, bool json, time_t now);

/* `agent probe URL NAME`: runs a probe on the agent (with the write token in token_file), waits
 * at most timeout seconds (NULL: 660) and prints its result; with kase (which needs layer, the
 * probe's layer), checks first that the result can be recorded, then records it for every
 * environment of the node. An exit code. */
int xp_agent_probe_cmd(struct xp_ctx *ctx, const char *url, const char *name, const char *kase,
		       const char *layer, const char *token_file, const char *timeout);
/* Runs `agent SUB ARGS...` (a->argv[0] is SUB: ls, add, rm or probe); returns an exit code. */
int xp_agent_ctl(struct xp_ctx *ctx, const struct xp_args *a);

#endif
