/* cmd_version.c: `xpool version`: the program and library versions. */
#include <hwloc.h>
#include <jansson.h>

#include "cmd.h"
#include "model_json.h"
#include "table.h"

static int version_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	(void)a;
	unsigned h = hwloc_get_api_version();
	if (ctx->json) {
		/* The libraries always: a script asking for JSON can ignore keys, not parse -v text. */
		char hv[32];
		snprintf(hv, sizeof hv, "%u.%u.%u", h >> 16, (h >> 8) & 0xff, h & 0xff);
		xp_print_json(ctx->out, json_pack("{s:s, s:s, s:s}", "version", XP_VERSION, "hwloc", hv, "jansson",
						  jansson_version_str()));
		return XP_EXIT_OK;
	}
	fprintf(ctx->out, "xpool %s\n", XP_VERSION);
	if (ctx->verbose) {
		fprintf(ctx->out, "hwloc %u.%u.%u, jansson %s\n", h >> 16, (h >> 8) & 0xff, h & 0xff,
			jansson_version_str());
	}
	return XP_EXIT_OK;
}

const struct xp_cmd_entry xp_cmd_version_entry = {
	.name = "version",
	.alias = NULL,
	.usage = "[-v] [--json]",
	.summary = "print the version (with -v, the libraries' too)",
	.opts = NULL,
	.min_args = 0,
	.max_args = 0,
	.exec = version_exec,
	.json = true,
};
