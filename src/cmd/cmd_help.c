/* cmd_help.c: `xpool help [COMMAND]`: the command list, or one command's usage and options. */
#include "cmd.h"

static void print_opts(FILE *f, const struct xp_opt *opts)
{
	for (const struct xp_opt *o = opts; o && o->name; o++) {
		char left[64];
		if (o->short_name)
			snprintf(left, sizeof left, "-%c, --%s%s%s", o->short_name, o->name, o->arg ? " " : "",
				 o->arg ? o->arg : "");
		else
			snprintf(left, sizeof left, "    --%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
		fprintf(f, "  %-24s %s\n", left, o->help);
	}
}

static int help_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	FILE *f = ctx->out;
	if (a->argc == 1) {
		struct xp_err err = {{0}};
		const struct xp_cmd_entry *e = xp_cmd_find(a->argv[0], &err);
		if (!e) {
			xp_ctx_error(ctx, "help: %s", err.msg);
			return XP_EXIT_USAGE;
		}
		xp_cmd_usage(e, f);
		fprintf(f, "%s\n", e->summary);
		if (e->alias)
			fprintf(f, "alias: %s\n", e->alias);
		if (e->opts && e->opts->name) {
			fprintf(f, "\noptions:\n");
			print_opts(f, e->opts);
		}
		fprintf(f, "\nglobal options (before or after the command):\n");
		print_opts(f, xp_global_opts);
		return XP_EXIT_OK;
	}
	fprintf(f, "usage: xpool [GLOBAL OPTIONS] [COMMAND [ARGS]]\n"
		   "       xpool -b FILE [-k]     run a batch script ('-' reads stdin)\n"
		   "       xpool --version\n\ncommands:\n");
	for (int i = 0; xp_cmd_table[i]; i++)
		fprintf(f, "  %-12s %s\n", xp_cmd_table[i]->name, xp_cmd_table[i]->summary);
	fprintf(f, "\nglobal options:\n");
	print_opts(f, xp_global_opts);
	fprintf(f, "  %-24s %s\n  %-24s %s\n  %-24s %s\n", "-b, --batch FILE",
		"run the commands in FILE, one a line", "-k, --keep-going",
		"with -b: carry on after a failing line", "-h, --help", "show this help");
	fprintf(f, "\nRun 'xpool help COMMAND' for a command's options. Exit status: 0 ok, 1 error,\n"
		   "2 usage, 3 not placeable, 4 partial data, 5 problems found (health).\n");
	return XP_EXIT_OK;
}

const struct xp_cmd_entry xp_cmd_help_entry = {
	.name = "help",
	.alias = NULL,
	.usage = "[COMMAND]",
	.summary = "list the commands, or show one command's usage and options",
	.opts = NULL,
	.min_args = 0,
	.max_args = 1,
	.exec = help_exec,
};
