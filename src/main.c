/* main.c: the program's own options, then one command, a batch script, the
 * console (on a terminal) or the inventory summary (without one). */
#include <errno.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "safe_out.h"
#include "ui.h"

/* Options that only make sense before a command: how the run is driven. The
 * global options (--topology, --json, ...) are accepted here too, by the parser. */
static const struct xp_opt main_opts[] = {
	{"batch", 'b', "FILE", "run the commands in FILE, one a line ('-' reads stdin)"},
	{"keep-going", 'k', NULL, "with -b: carry on after a failing line"},
	{"help", 'h', NULL, "show the help"},
	{"version", 0, NULL, "print the version"},
	{NULL, 0, NULL, NULL},
};

static const struct xp_cmd_entry main_entry = {
	.name = "xpool",
	.usage = "[GLOBAL OPTIONS] [COMMAND [ARGS]]",
	.summary = "the program itself",
	.opts = main_opts,
	.min_args = 0,
	.max_args = -1,
	.stop_at_args = true,
};

static int run_batch(struct xp_ctx *ctx, const char *path, bool keep_going)
{
	if (strcmp(path, "-") == 0)
		return xp_batch_run(ctx, stdin, "<stdin>", keep_going);
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		xp_ctx_error(ctx, "%s: is a directory, not a script", path);
		return XP_EXIT_ERROR;
	}
	FILE *f = fopen(path, "re");
	if (!f) {
		xp_ctx_error(ctx, "%s: %s", path, strerror(errno));
		return XP_EXIT_ERROR;
	}
	int rc = xp_batch_run(ctx, f, path, keep_going);
	fclose(f);
	return rc;
}

static int run_one(struct xp_ctx *ctx, const char *name)
{
	char *v[] = {(char *)name, NULL};
	return xp_cmd_run(ctx, 1, v);
}

/* Runs `view STRING` for --view STRING. */
static int run_view(struct xp_ctx *ctx)
{
	char *line = xp_asprintf("view %s", ctx->view);
	int argc = 0;
	char **argv = NULL;
	struct xp_err err = {{0}};
	int rc;
	if (xp_cmd_split(line, &argc, &argv, &err) < 0) {
		xp_ctx_error(ctx, "--view: %s", err.msg);
		rc = XP_EXIT_USAGE;
	} else {
		rc = xp_cmd_run(ctx, argc, argv);
	}
	xp_cmd_split_free(argc, argv);
	free(line);
	return rc;
}

/* The process is about to end, and the kernel takes its memory back in one go: handing a
 * loaded cluster back to malloc first, node by node (a 10,000-node cluster is a million
 * allocations and as many interned-string releases), cost about a tenth of a one-shot
 * command's time. So a normal build leaves the cluster (and the one a command parked)
 * allocated, still reachable from this static, and exits. A sanitizer build frees it all as
 * before: there the teardown is what proves every allocation has an owner, and LeakSanitizer
 * must see a clean exit. The other fields (the agents' pool with its connections, the
 * placement index, small strings) are freed by xp_ctx_free as always. */
#if defined(__SANITIZE_ADDRESS__)
#define XP_EXIT_FREES_CLUSTER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define XP_EXIT_FREES_CLUSTER 1
#endif
#endif
#ifndef XP_EXIT_FREES_CLUSTER
static struct xp_cluster *left[2];

static void leave_cluster(struct xp_ctx *ctx)
{
	/* The kept placement index points into the cluster: it goes first, as it always has. */
	xp_ctx_place_drop(ctx);
	left[0] = ctx->cluster;
	left[1] = ctx->parked;
	ctx->cluster = NULL;
	ctx->parked = NULL;
}
#else
static void leave_cluster(struct xp_ctx *ctx)
{
	(void)ctx;
}
#endif

int main(int argc, char **argv)
{
	setlocale(LC_ALL, "");
	/* Everything the commands print goes through streams that show a terminal control as
	 * '?' instead of passing it on (safe_out.h): names and messages from vendor tools,
	 * agents, engines, files and the store can neither steer the terminal nor reorder what
	 * it shows. The console draws its screens itself (ui/draw.c masks the same way). */
	FILE *out = xp_safe_stream(stdout, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF);
	FILE *errs = xp_safe_stream(stderr, _IONBF);
	if (!out || !errs) {
		fprintf(stderr, "xpool: cannot set up the output streams: %s\n", strerror(errno));
		return XP_EXIT_ERROR;
	}
	struct xp_ctx ctx;
	xp_ctx_init(&ctx, out, errs);
	struct xp_args a;
	struct xp_err err = {{0}};
	if (xp_cmd_parse(&ctx, &main_entry, argc, argv, &a, &err) < 0) {
		xp_ctx_error(&ctx, "%s (try 'xpool help')", err.msg);
		xp_ctx_free(&ctx);
		fclose(out);
		fclose(errs);
		return XP_EXIT_USAGE;
	}
	/* Options given before the command are the run's own settings: keep them. */
	xp_ctx_settle(&ctx);

	int rc;
	if (xp_args_has(&a, "version")) {
		rc = run_one(&ctx, "version");
	} else if (xp_args_has(&a, "help")) {
		char *h[] = {"help", a.argc ? a.argv[0] : NULL, NULL};
		rc = xp_cmd_run(&ctx, a.argc ? 2 : 1, h);
	} else if (xp_args_has(&a, "batch")) {
		if (a.argc) {
			xp_ctx_error(&ctx, "-b runs a script; a command (%s) cannot follow it", a.argv[0]);
			rc = XP_EXIT_USAGE;
		} else
			rc = run_batch(&ctx, xp_args_get(&a, "batch"), xp_args_has(&a, "keep-going"));
	} else if (a.argc) {
		rc = xp_cmd_run(&ctx, a.argc, a.argv);
	} else if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
		/* No command on a terminal: the console. */
		rc = xp_ui_run(&ctx);
	} else if (ctx.view && *ctx.view) {
		/* --view without a terminal: the view's rows, as `xpool view` prints them. */
		rc = run_view(&ctx);
	} else {
		/* No command and no terminal (a pipe, cron, CI): the summary, never a hang. */
		rc = run_one(&ctx, "inventory");
	}
	xp_args_clear(&a);
	if ((fflush(out) != 0 || ferror(out) || fflush(stdout) != 0 || ferror(stdout)) && rc == XP_EXIT_OK) {
		xp_ctx_error(&ctx, "writing output: %s", strerror(errno));
		rc = XP_EXIT_ERROR;
	}
	leave_cluster(&ctx);
	xp_ctx_free(&ctx);
	fclose(out);
	fclose(errs);
	return rc;
}
