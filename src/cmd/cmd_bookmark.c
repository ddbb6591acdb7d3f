/* cmd_bookmark.c: `xpool bookmark [NAME | save NAME [VIEW] | list | rm NAME]`: named view
 * strings (`view` command, cmd_view.c) kept in the user's config (bookmarks.h). */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "bookmarks.h"
#include "cmd.h"
#include "table.h"
#include "words.h"

/* Runs a view string as `view STRING` does. */
static int open_view(struct xp_ctx *ctx, const char *view)
{
	int argc = 0;
	char **argv = NULL;
	struct xp_err err = {{0}};
	char *line = xp_asprintf("view %s", view);
	int rc;
	if (xp_cmd_split(line, &argc, &argv, &err) < 0) {
		xp_ctx_error(ctx, "bookmark: %s", err.msg);
		rc = XP_EXIT_USAGE;
	} else {
		rc = xp_cmd_run(ctx, argc, argv);
		xp_cmd_split_free(argc, argv);
	}
	free(line);
	return rc;
}

static int bookmark_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	char *path = xp_bookmarks_path();
	if (!path) {
		xp_ctx_error(ctx, "bookmark: neither XDG_CONFIG_HOME nor HOME is set: no place for bookmarks");
		return XP_EXIT_ERROR;
	}
	struct xp_bookmarks b = {0};
	struct xp_err err = {{0}};
	int rc = XP_EXIT_OK;
	const char *w = a->argc ? a->argv[0] : "list";
	if (xp_bookmarks_load(path, &b, &err) < 0) {
		xp_ctx_error(ctx, "bookmark: %s", err.msg);
		rc = XP_EXIT_ERROR;
	} else if (strcmp(w, "list") == 0 || strcmp(w, "ls") == 0) {
		json_t *arr = ctx->json ? json_array() : NULL;
		for (size_t i = 0; i < b.n; i++) {
			if (arr)
				json_array_append_new(arr, json_pack("{s:s, s:s}", "name", b.v[i].name, "view", b.v[i].view));
			else
				fprintf(ctx->out, "%-16s %s\n", b.v[i].name, b.v[i].view);
		}
		if (arr)
			xp_print_json_list(ctx->out, "bookmarks", arr);
		else if (!b.n && !ctx->quiet)
			fprintf(ctx->out, "no bookmarks yet (in the console: :bookmark save NAME)\n");
	} else if (strcmp(w, "save") == 0) {
		char cur[1024] = "";
		const char *view = a->argc >= 3 ? a->argv[2] : NULL;
		if (a->argc < 2 || !xp_bookmark_name_ok(a->argv[1])) {
			xp_ctx_error(ctx, "bookmark save: %s%s%s (letters, digits, '.', '_', '-')",
				     a->argc < 2 ? "give a name" : "'", a->argc < 2 ? "" : a->argv[1],
				     a->argc < 2 ? "" : "' is not a bookmark name");
			rc = XP_EXIT_USAGE;
		} else if (!view && !ctx->ui_view_string) {
			xp_ctx_error(ctx, "bookmark save %s: give the view too outside the console ('topology --sort temp-')",
				     a->argv[1]);
			rc = XP_EXIT_USAGE;
		} else {
			if (!view) {
				ctx->ui_view_string(ctx, cur, sizeof cur);
				view = cur;
			}
			int argc = 0;
			char **argv = NULL;
			bool ctl = false;
			for (const unsigned char *p = (const unsigned char *)view; *p && !ctl; p++)
				ctl = *p < 0x20 || *p == 0x7f;
			if (ctl) {
				/* A newline would be a line of its own in the file: another bookmark,
				 * or one that breaks the file for every later command. */
				xp_ctx_error(ctx, "bookmark save: the view holds a control character");
				rc = XP_EXIT_USAGE;
			} else if (xp_cmd_split(view, &argc, &argv, &err) < 0 || !argc) {
				xp_ctx_error(ctx, "bookmark save: %s", argc ? err.msg : "an empty view");
				rc = XP_EXIT_USAGE;
			} else {
				xp_bookmarks_set(&b, a->argv[1], view);
				if (xp_bookmarks_save(path, &b, &err) < 0) {
					xp_ctx_error(ctx, "bookmark: %s", err.msg);
					rc = XP_EXIT_ERROR;
				} else if (ctx->json) {
					xp_print_json(ctx->out, json_pack("{s:s, s:s}", "name", a->argv[1], "view", view));
				} else if (!ctx->quiet) {
					fprintf(ctx->out, "bookmark %s: %s\n", a->argv[1], view);
				}
			}
			xp_cmd_split_free(argc, argv);
		}
	} else if (strcmp(w, "rm") == 0) {
		if (a->argc != 2) {
			xp_ctx_error(ctx, "bookmark rm: give one name");
			rc = XP_EXIT_USAGE;
		} else if (!xp_bookmarks_rm(&b, a->argv[1])) {
			xp_ctx_error(ctx, "bookmark rm: no bookmark named %s", a->argv[1]);
			rc = XP_EXIT_ERROR;
		} else if (xp_bookmarks_save(path, &b, &err) < 0) {
			xp_ctx_error(ctx, "bookmark: %s", err.msg);
			rc = XP_EXIT_ERROR;
		}
	} else if (a->argc > 1) {
		xp_ctx_error(ctx, "bookmark: '%s' is not save, list or rm; to open a bookmark give its name alone", w);
		rc = XP_EXIT_USAGE;
	} else {
		const char *view = xp_bookmarks_get(&b, w);
		if (!view) {
			xp_ctx_error(ctx, "bookmark: no bookmark named %s (bookmark list shows them)", w);
			rc = XP_EXIT_ERROR;
		} else {
			char *copy = xp_strdup(view);
			xp_bookmarks_free(&b);
			rc = open_view(ctx, copy);
			free(copy);
		}
	}
	xp_bookmarks_free(&b);
	free(path);
	return rc;
}

const struct xp_cmd_entry xp_cmd_bookmark_entry = {
	.name = "bookmark",
	.alias = NULL,
	.usage = "[NAME | save NAME [VIEW] | list | rm NAME]",
	.summary = "named views: open one, save the console's view (or VIEW), list or remove them",
	.opts = NULL,
	.min_args = 0,
	.max_args = 3,
	.exec = bookmark_exec,
	.json = true, /* list and save print JSON; opening one prints the view's (batch) */
};
