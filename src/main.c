/* main.c: global options, then one command, a batch script, or the default summary. */
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

/* Options that only make sense before a command: how the run is driven. */
struct main_opts {
	const char *batch;
	bool keep_going, help, version;
};

static int parse_long(struct xp_ctx *ctx, struct main_opts *m, const char *w, const char *next,
		      bool *used, struct xp_err *err)
{
	char name[64];
	const char *eq = strchr(w, '=');
	size_t len = eq ? (size_t)(eq - w) : strlen(w);
	if (len >= sizeof name)
		return xp_errf(err, "unknown option --%.40s...", w);
	memcpy(name, w, len);
	name[len] = '\0';
	const char *inl = eq ? eq + 1 : NULL;
	if (strcmp(name, "batch") == 0) {
		if (!inl && !next)
			return xp_errf(err, "option --batch needs a FILE");
		m->batch = inl ? inl : next;
		*used = !inl;
		return 0;
	}
	bool *flag = strcmp(name, "keep-going") == 0 ? &m->keep_going
		     : strcmp(name, "help") == 0     ? &m->help
		     : strcmp(name, "version") == 0  ? &m->version
						     : NULL;
	if (flag) {
		if (inl)
			return xp_errf(err, "option --%s takes no value", name);
		*flag = true;
		return 0;
	}
	const struct xp_opt *o = xp_global_find(name, 0);
	if (!o)
		return xp_errf(err, "unknown option --%s (try 'xpool help')", name);
	if (o->arg && !inl) {
		inl = next;
		*used = true;
	} else if (!o->arg && inl)
		return xp_errf(err, "option --%s takes no value", name);
	return xp_ctx_set_global(ctx, o, inl, err);
}

static int parse_short(struct xp_ctx *ctx, struct main_opts *m, const char *w, const char *next,
		       bool *used, struct xp_err *err)
{
	for (const char *c = w; *c; c++) {
		if (*c == 'b') {
			m->batch = c[1] ? c + 1 : next;
			*used = !c[1];
			return m->batch ? 0 : xp_errf(err, "option -b needs a FILE");
		}
		if (*c == 'k' || *c == 'h') {
			*(*c == 'k' ? &m->keep_going : &m->help) = true;
			continue;
		}
		const struct xp_opt *o = xp_global_find(NULL, *c);
		if (!o)
			return xp_errf(err, "unknown option -%c (try 'xpool help')", *c);
		if (o->arg) {
			const char *v = c[1] ? c + 1 : next;
			*used = !c[1];
			return xp_ctx_set_global(ctx, o, v, err);
		}
		if (xp_ctx_set_global(ctx, o, NULL, err) < 0)
			return -1;
	}
	return 0;
}

static int run_batch(struct xp_ctx *ctx, const char *path, bool keep_going)
{
	if (strcmp(path, "-") == 0)
		return xp_batch_run(ctx, stdin, "<stdin>", keep_going);
	FILE *f = fopen(path, "re");
	if (!f) {
		xp_ctx_error(ctx, "%s: %m", path);
		return XP_EXIT_ERROR;
	}
	int rc = xp_batch_run(ctx, f, path, keep_going);
	fclose(f);
	return rc;
}

int main(int argc, char **argv)
{
	setlocale(LC_ALL, "");
	struct xp_ctx ctx;
	xp_ctx_init(&ctx, stdout, stderr);
	struct main_opts m = {0};
	struct xp_err err = {{0}};
	int i = 1;
	for (; i < argc; i++) {
		const char *w = argv[i];
		if (w[0] != '-' || w[1] == '\0')
			break;
		if (strcmp(w, "--") == 0) {
			i++;
			break;
		}
		bool used = false;
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
		int rc = w[1] == '-' ? parse_long(&ctx, &m, w + 2, next, &used, &err)
				     : parse_short(&ctx, &m, w + 1, next, &used, &err);
		if (rc < 0) {
			xp_ctx_error(&ctx, "%s", err.msg);
			xp_ctx_free(&ctx);
			return XP_EXIT_USAGE;
		}
		if (used)
			i++;
	}

	int rc;
	if (m.version) {
		char *v[] = {"version", NULL};
		rc = xp_cmd_run(&ctx, 1, v);
	} else if (m.help) {
		char *h[] = {"help", i < argc ? argv[i] : NULL, NULL};
		rc = xp_cmd_run(&ctx, i < argc ? 2 : 1, h);
	} else if (m.batch) {
		if (i < argc) {
			xp_ctx_error(&ctx, "-b runs a script; a command (%s) cannot follow it", argv[i]);
			rc = XP_EXIT_USAGE;
		} else
			rc = run_batch(&ctx, m.batch, m.keep_going);
	} else if (i < argc) {
		rc = xp_cmd_run(&ctx, argc - i, argv + i);
	} else {
		/* No command: the console on a terminal (once it exists), the summary otherwise. */
		char *v[] = {"inventory", NULL};
		rc = xp_cmd_run(&ctx, 1, v);
	}
	if (fflush(stdout) != 0 && rc == XP_EXIT_OK) {
		xp_ctx_error(&ctx, "writing output: %m");
		rc = XP_EXIT_ERROR;
	}
	xp_ctx_free(&ctx);
	return rc;
}
