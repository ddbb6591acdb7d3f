/* node_filter.h: a command's `--filter EXPR` over nodes (filter.h), compiled and applied the
 * same way by every command that lists nodes. */
#ifndef XP_NODE_FILTER_H
#define XP_NODE_FILTER_H

#include <stdbool.h>

#include "cmd.h"
#include "filter.h"

/* The option line every such command declares. */
#define XP_NODE_FILTER_OPT \
	{"filter", 0, "EXPR", "only the nodes EXPR matches (see FILTER EXPRESSIONS in xpool(1))", NULL}

/* Compiles the command's --filter into *f (NULL when not given); returns 0, or -1 after printing
 * "CMD: --filter: column N: why" (a usage error: exit 2). */
int xp_node_filter_compile(struct xp_ctx *ctx, const struct xp_args *a, const char *cmd, struct xp_filter **f);
/* True when node n matches f (always without one); bare words look in xp_filter_node_text. */
bool xp_node_filter_match(const struct xp_filter *f, const struct xp_node *n);

#endif
