/* cmd_version.c: `xpool version`: the program and library versions. */
#include <hwloc.h>
#include <jansson.h>

#include "cmd.h"

static int version_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	(void)a;
	fprintf(ctx->out, "xpool %s\n", XP_VERSION);
	if (ctx->verbose) {
		unsigned h = hwloc_get_api_version();
		fprintf(ctx->out, "hwloc %u.%u.%u, jansson %s\n", h >> 16, (h >> 8) & 0xff, h & 0xff,
			jansson_version_str());
	}
	return XP_EXIT_OK;
}

const struct xp_cmd_entry xp_cmd_version_entry = {
	.name = "version",
	.alias = NULL,
	.usage = "[-v]",
	.summary = "print the version (with -v, the libraries' too)",
	.opts = NULL,
	.min_args = 0,
	.max_args = 0,
	.exec = version_exec,
};
