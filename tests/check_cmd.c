/* check_cmd.c: the command table: lookup, argument parsing, line splitting, batch scripts. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "suitelib.h"

/* A private table so lookup rules (alias, prefix, ambiguity) can be tested on known names. */
static int noop_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	(void)a;
	fprintf(ctx->out, "ran\n");
	return 0;
}

static const struct xp_opt t_opts[] = {
	{"file", 'f', "FILE", "a file"},
	{"all", 'a', NULL, "everything"},
	{NULL, 0, NULL, NULL},
};
static const struct xp_cmd_entry t_place = {"place", "pl", "[-a] [-f FILE] NAME", "p", t_opts, 1, 1, noop_exec};
static const struct xp_cmd_entry t_plan = {"plan", NULL, "", "p", NULL, 0, 0, noop_exec};
static const struct xp_cmd_entry t_show = {"show", NULL, "", "s", NULL, 0, -1, noop_exec};
static const struct xp_cmd_entry *const t_table[] = {&t_place, &t_plan, &t_show, NULL};

START_TEST(option_tables_fit)
{
	/* xp_args holds XP_CMD_MAX_OPTS options: a longer table would lose the options past it
	 * ("unknown option"), as place's did when it grew to 27. */
	for (size_t i = 0; xp_cmd_table[i]; i++) {
		size_t n = 0;
		while (xp_cmd_table[i]->opts && xp_cmd_table[i]->opts[n].name)
			n++;
		ck_assert_msg(n <= XP_CMD_MAX_OPTS, "%s has %zu options, room for %d", xp_cmd_table[i]->name, n,
			      XP_CMD_MAX_OPTS);
	}
}
END_TEST

START_TEST(find_rules)
{
	struct xp_err err = {{0}};
	ck_assert_ptr_eq(xp_cmd_find_in(t_table, "place", &err), &t_place);
	ck_assert_ptr_eq(xp_cmd_find_in(t_table, "pl", &err), &t_place); /* alias beats prefix */
	ck_assert_ptr_eq(xp_cmd_find_in(t_table, "sh", &err), &t_show);
	ck_assert_ptr_null(xp_cmd_find_in(t_table, "pla", &err));
	ck_assert_str_eq(err.msg, "ambiguous command: pla, could be: place, plan");
	ck_assert_ptr_null(xp_cmd_find_in(t_table, "zap", &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "unknown command: zap"));
	ck_assert_ptr_null(xp_cmd_find_in(t_table, "", &err));
	/* The real table: every name and alias resolves to itself. */
	for (int i = 0; xp_cmd_table[i]; i++) {
		ck_assert_ptr_eq(xp_cmd_find(xp_cmd_table[i]->name, &err), xp_cmd_table[i]);
		if (xp_cmd_table[i]->alias)
			ck_assert_ptr_eq(xp_cmd_find(xp_cmd_table[i]->alias, &err), xp_cmd_table[i]);
		ck_assert_ptr_nonnull(xp_cmd_table[i]->exec);
		ck_assert_ptr_nonnull(xp_cmd_table[i]->usage);
		ck_assert_ptr_nonnull(xp_cmd_table[i]->summary);
	}
	ck_assert_ptr_eq(xp_cmd_find("inv", &err), xp_cmd_find("inventory", &err));
}
END_TEST

static int parse(struct xp_ctx *ctx, const char *line, struct xp_args *a, struct xp_err *err,
		 int *argc, char ***argv)
{
	ck_assert_int_eq(xp_cmd_split(line, argc, argv, err), 0);
	return xp_cmd_parse(ctx, &t_place, *argc, *argv, a, err);
}

START_TEST(parse_options)
{
	struct xp_ctx ctx;
	xp_ctx_init(&ctx, stdout, stderr);
	struct xp_args a;
	struct xp_err err = {{0}};
	int argc;
	char **argv;

	ck_assert_int_eq(parse(&ctx, "place -a --file=x.json job1 --json", &a, &err, &argc, &argv), 0);
	ck_assert(xp_args_has(&a, "all"));
	ck_assert_str_eq(xp_args_get(&a, "file"), "x.json");
	ck_assert_int_eq(a.argc, 1);
	ck_assert_str_eq(a.argv[0], "job1");
	ck_assert(ctx.json); /* global options are accepted after the command */
	free(a.argv);
	xp_cmd_split_free(argc, argv);

	ck_assert_int_eq(parse(&ctx, "place -af y.json -qv -- -job", &a, &err, &argc, &argv), 0);
	ck_assert_str_eq(xp_args_get(&a, "file"), "y.json");
	ck_assert(ctx.quiet);
	ck_assert_int_eq(ctx.verbose, 1);
	ck_assert_str_eq(a.argv[0], "-job");
	free(a.argv);
	xp_cmd_split_free(argc, argv);

	ck_assert_int_eq(parse(&ctx, "place -fz.json j", &a, &err, &argc, &argv), 0);
	ck_assert_str_eq(xp_args_get(&a, "file"), "z.json");
	ck_assert(!xp_args_has(&a, "all"));
	free(a.argv);
	xp_cmd_split_free(argc, argv);

	ck_assert_int_eq(parse(&ctx, "place --bogus j", &a, &err, &argc, &argv), -1);
	ck_assert_str_eq(err.msg, "place: unknown option --bogus");
	xp_cmd_split_free(argc, argv);
	ck_assert_int_eq(parse(&ctx, "place j -f", &a, &err, &argc, &argv), -1);
	ck_assert_str_eq(err.msg, "place: option -f needs a FILE");
	xp_cmd_split_free(argc, argv);
	ck_assert_int_eq(parse(&ctx, "place --all=yes j", &a, &err, &argc, &argv), -1);
	ck_assert_str_eq(err.msg, "place: option --all takes no value");
	xp_cmd_split_free(argc, argv);
	ck_assert_int_eq(parse(&ctx, "place a b", &a, &err, &argc, &argv), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "wrong number of arguments"));
	ck_assert_ptr_nonnull(strstr(err.msg, "usage: xpool place [-a] [-f FILE] NAME"));
	xp_cmd_split_free(argc, argv);
	ck_assert_int_eq(parse(&ctx, "place", &a, &err, &argc, &argv), -1);
	xp_cmd_split_free(argc, argv);
	ck_assert_int_eq(parse(&ctx, "place --topology", &a, &err, &argc, &argv), -1);
	ck_assert_str_eq(err.msg, "place: option --topology needs a FILE");
	xp_cmd_split_free(argc, argv);
	xp_ctx_free(&ctx);
}
END_TEST

START_TEST(split_words)
{
	int argc;
	char **argv;
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_cmd_split("  a 'b c' \"d \\\"e\\\"\" f\\ g  # tail", &argc, &argv, &err), 0);
	ck_assert_int_eq(argc, 4);
	ck_assert_str_eq(argv[0], "a");
	ck_assert_str_eq(argv[1], "b c");
	ck_assert_str_eq(argv[2], "d \"e\"");
	ck_assert_str_eq(argv[3], "f g");
	xp_cmd_split_free(argc, argv);

	ck_assert_int_eq(xp_cmd_split("x '' y", &argc, &argv, &err), 0);
	ck_assert_int_eq(argc, 3);
	ck_assert_str_eq(argv[1], "");
	xp_cmd_split_free(argc, argv);

	ck_assert_int_eq(xp_cmd_split("   # only a comment", &argc, &argv, &err), 0);
	ck_assert_int_eq(argc, 0);
	xp_cmd_split_free(argc, argv);

	/* A command given as one argument keeps its '#' words. */
	ck_assert_int_eq(xp_cmd_split_argv("grep #x file", &argc, &argv, &err), 0);
	ck_assert_int_eq(argc, 3);
	ck_assert_str_eq(argv[1], "#x");
	xp_cmd_split_free(argc, argv);

	ck_assert_int_eq(xp_cmd_split("a 'open", &argc, &argv, &err), -1);
	ck_assert_str_eq(err.msg, "unterminated ' quote");

	char *many = malloc(XP_CMD_MAX_WORDS * 2 + 8);
	size_t k = 0;
	for (int i = 0; i <= XP_CMD_MAX_WORDS; i++) {
		many[k++] = 'w';
		many[k++] = ' ';
	}
	many[k] = '\0';
	ck_assert_int_eq(xp_cmd_split(many, &argc, &argv, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "more than"));
	free(many);
}
END_TEST

/* Runs a batch script held in memory; returns its exit code with output and errors captured. */
static int batch(const char *script, bool keep_going, char **out, char **errs)
{
	size_t ol, el;
	FILE *o = open_memstream(out, &ol), *e = open_memstream(errs, &el);
	FILE *in = fmemopen((void *)script, strlen(script), "r");
	struct xp_ctx ctx;
	xp_ctx_init(&ctx, o, e);
	int rc = xp_batch_run(&ctx, in, "t.xps", keep_going);
	xp_ctx_free(&ctx);
	fclose(in);
	fclose(o);
	fclose(e);
	return rc;
}

START_TEST(batch_scripts)
{
	char *out, *err;
	int rc = batch("# a comment\n\nversion\n  version   # again\n", false, &out, &err);
	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(out, "xpool " XP_VERSION "\nxpool " XP_VERSION "\n");
	ck_assert_str_eq(err, "");
	free(out);
	free(err);

	/* Stops at the first error and names its line. */
	rc = batch("version\nbogus\nversion\n", false, &out, &err);
	ck_assert_int_eq(rc, XP_EXIT_USAGE);
	ck_assert_str_eq(out, "xpool " XP_VERSION "\n");
	ck_assert_str_eq(err, "xpool: t.xps:2: unknown command: bogus (try 'xpool help')\n");
	free(out);
	free(err);

	/* -k carries on and still returns the first failure. */
	rc = batch("version\nbogus\nhelp nope\nversion", true, &out, &err);
	ck_assert_int_eq(rc, XP_EXIT_USAGE);
	ck_assert_str_eq(out, "xpool " XP_VERSION "\nxpool " XP_VERSION "\n");
	ck_assert_ptr_nonnull(strstr(err, "t.xps:2: unknown command: bogus"));
	ck_assert_ptr_nonnull(strstr(err, "t.xps:3: help: unknown command: nope"));
	free(out);
	free(err);

	rc = batch("version 'unclosed\n", false, &out, &err);
	ck_assert_int_eq(rc, XP_EXIT_USAGE);
	ck_assert_str_eq(err, "xpool: t.xps:1: unterminated ' quote\n");
	free(out);
	free(err);

	/* A NUL byte or an endless line is refused, not truncated into another command. */
	static const char nul[] = "version\0x\n";
	size_t ol, el;
	FILE *o = open_memstream(&out, &ol), *e = open_memstream(&err, &el);
	FILE *in = fmemopen((void *)nul, sizeof nul - 1, "r");
	struct xp_ctx ctx;
	xp_ctx_init(&ctx, o, e);
	rc = xp_batch_run(&ctx, in, "t.xps", false);
	xp_ctx_free(&ctx);
	fclose(in);
	fclose(o);
	fclose(e);
	ck_assert_int_eq(rc, XP_EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(err, "t.xps:1: line longer than"));
	free(out);
	free(err);

	char *longline = malloc(XP_BATCH_MAX_LINE + 100);
	memset(longline, 'a', XP_BATCH_MAX_LINE + 50);
	strcpy(longline + XP_BATCH_MAX_LINE + 50, "\nversion\n");
	rc = batch(longline, true, &out, &err);
	ck_assert_int_eq(rc, XP_EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(err, "t.xps:1: line longer than"));
	ck_assert_str_eq(out, "xpool " XP_VERSION "\n"); /* line 2 still ran with -k */
	free(out);
	free(err);
	free(longline);
}
END_TEST

XP_DEFINE_SUITE(cmd,
	{"core",
	 .tests = {option_tables_fit, find_rules, parse_options, split_words, batch_scripts}})
