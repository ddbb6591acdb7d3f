/* node_filter.c: see node_filter.h. */
#include "node_filter.h"

#include <stdlib.h>

int xp_node_filter_compile(struct xp_ctx *ctx, const struct xp_args *a, const char *cmd, struct xp_filter **f)
{
	*f = NULL;
	const char *expr = xp_args_get(a, "filter");
	if (!expr)
		return 0;
	struct xp_err err = {{0}};
	*f = xp_filter_compile(expr, xp_filter_node_fields, &err);
	if (!*f) {
		xp_ctx_error(ctx, "%s: --filter: %s", cmd, err.msg);
		return -1;
	}
	return 0;
}

bool xp_node_filter_match(const struct xp_filter *f, const struct xp_node *n)
{
	if (!f)
		return true;
	char *text = xp_filter_node_text(n);
	bool ok = xp_filter_node(f, n, text);
	free(text);
	return ok;
}
