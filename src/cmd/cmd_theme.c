/* cmd_theme.c: `xpool theme [NAME|PATH]`: list the colour themes, check one, or (from the
 * console's `:` prompt) switch to one. */
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "table.h"
#include "theme_file.h"

/* The theme the run uses: --theme (or the console's last `:theme`), else the default. */
static const char *in_use(const struct xp_ctx *ctx)
{
	return ctx->theme && *ctx->theme ? ctx->theme : "default";
}

/* True when the listed theme (name, found at path or built in when path is NULL) is cur. */
static bool is_current(const char *cur, const char *name, const char *path)
{
	if (!strchr(cur, '/')) {
		size_t n = strlen(name);
		/* xp_theme_find ignores a trailing ".theme", so "dark.theme" is dark. */
		return strcmp(cur, name) == 0 || (strncmp(cur, name, n) == 0 && strcmp(cur + n, ".theme") == 0);
	}
	if (!path)
		return false;
	char *a = realpath(cur, NULL), *b = realpath(path, NULL);
	bool same = a && b && strcmp(a, b) == 0;
	free(a);
	free(b);
	return same;
}

/* Prints and frees a document; NULL means jansson refused a value (a path that is not UTF-8). */
static int print_json(struct xp_ctx *ctx, json_t *doc)
{
	if (!doc) {
		xp_ctx_error(ctx, "theme: cannot write JSON (a name or path that is not UTF-8?)");
		return XP_EXIT_ERROR;
	}
	xp_print_json(ctx->out, doc);
	return XP_EXIT_OK;
}

static int list_themes(struct xp_ctx *ctx)
{
	char **names;
	size_t n = xp_theme_list(&names);
	const char *cur = in_use(ctx);
	bool shown = false;
	json_t *arr = ctx->json ? json_array() : NULL;
	for (size_t i = 0; i < n; i++) {
		/* A theme that cannot be found now (removed meanwhile) is still listed; default is built in. */
		char *path = xp_theme_find(names[i], NULL);
		bool mark = is_current(cur, names[i], path);
		shown |= mark;
		if (arr)
			json_array_append_new(arr, json_pack("{s:s, s:o, s:b}", "name", names[i], "path",
							     path ? json_string(path) : json_null(), "current", mark));
		else if (ctx->verbose)
			fprintf(ctx->out, "%c %-16s %s\n", mark ? '*' : ' ', names[i], path ? path : "(built in)");
		else
			fprintf(ctx->out, "%c %s\n", mark ? '*' : ' ', names[i]);
		free(path);
	}
	/* A theme given by path outside the theme directories: show it too, so the mark is somewhere. */
	if (!shown) {
		char *path = xp_theme_find(cur, NULL);
		if (arr)
			json_array_append_new(arr, json_pack("{s:s, s:o, s:b}", "name", cur, "path",
							     path ? json_string(path) : json_null(), "current", 1));
		else
			fprintf(ctx->out, "* %s\n", cur);
		free(path);
	}
	xp_theme_list_free(names, n);
	if (arr)
		return print_json(ctx, json_pack("{s:o}", "themes", arr));
	return XP_EXIT_OK;
}

static int theme_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	if (a->argc == 0)
		return list_themes(ctx);
	const char *arg = a->argv[0];
	struct xp_theme t;
	struct xp_err err = {{0}};
	if (xp_theme_load(arg, &t, &err) < 0) {
		xp_ctx_error(ctx, "theme: %s", err.msg);
		return XP_EXIT_ERROR;
	}
	bool applied = false;
	if (ctx->ui_theme) {
		if (ctx->ui_theme(ctx, arg, &err) < 0) {
			xp_ctx_error(ctx, "theme: %s", err.msg);
			return XP_EXIT_ERROR;
		}
		applied = true;
		/* Remember it, so that a later `:theme` lists it as the one in use. */
		if (ctx->theme != arg) {
			free(ctx->theme);
			ctx->theme = xp_strdup(arg);
		}
	}
	char *path = xp_theme_find(arg, NULL);
	if (ctx->json) {
		json_t *doc = json_pack("{s:s, s:o, s:i, s:b}", "name", t.name, "path",
					path ? json_string(path) : json_null(), "roles_set", xp_theme_roles_set(&t),
					"applied", applied);
		int rc = print_json(ctx, doc);
		free(path);
		return rc;
	} else if (ctx->quiet) {
		/* -q: errors only */
	} else if (applied) {
		fprintf(ctx->out, "theme %s\n", t.name);
	} else if (!path) {
		fprintf(ctx->out, "theme %s: ok (built in)\n", t.name);
	} else {
		fprintf(ctx->out, "theme %s: ok (%d roles set)\n", t.name, xp_theme_roles_set(&t));
	}
	free(path);
	return XP_EXIT_OK;
}

/* The console completes `:theme ` with the theme names, not node names. */
static size_t theme_names(char ***values)
{
	return xp_theme_list(values);
}

const struct xp_cmd_entry xp_cmd_theme_entry = {
	.name = "theme",
	.alias = NULL,
	.usage = "[NAME|PATH]",
	.summary = "list the colour themes, or check one (in the console: switch to it)",
	.opts = NULL,
	.min_args = 0,
	.max_args = 1,
	.exec = theme_exec,
	.json = true,
	.arg_values = theme_names,
};
