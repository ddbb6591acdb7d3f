/* check_cmd.c: the command table: lookup, argument parsing, line splitting, batch scripts. */
#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "suitelib.h"
#include "testlib.h"

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


/* A global option before the command on a batch line works as on the command line, and lasts
 * for that line only. */
START_TEST(batch_leading_options)
{
	char *out, *err;
	char *script = xp_asprintf("--topology %s inventory\n--json version\nversion\n",
				   xp_fixture("hwloc/32em64t-2n8c2t-pci-wholeio.xml"));
	int rc = batch(script, false, &out, &err);
	free(script);
	ck_assert_msg(rc == 0, "rc %d: %s", rc, err);
	ck_assert_str_eq(err, "");
	ck_assert_ptr_nonnull(strstr(out, "conan  up  hwloc-xml:"));
	char *json = strstr(out, "{\n");
	ck_assert_ptr_nonnull(json);
	ck_assert_ptr_nonnull(strstr(json, "\"version\": \"" XP_VERSION "\""));
	/* The line after it is text again. */
	ck_assert_ptr_nonnull(strstr(json, "}\nxpool " XP_VERSION "\n"));
	free(out);
	free(err);

	/* The same parser as the command line: its messages, and no command is a usage error. */
	rc = batch("--bogus version\n", true, &out, &err);
	ck_assert_int_eq(rc, XP_EXIT_USAGE);
	ck_assert_str_eq(err, "xpool: t.xps:1: unknown option --bogus (try 'xpool help')\n");
	free(out);
	free(err);
	rc = batch("-q\n--db\n", true, &out, &err);
	ck_assert_int_eq(rc, XP_EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(err, "t.xps:1: options but no command"));
	ck_assert_ptr_nonnull(strstr(err, "t.xps:2: option --db needs a PATH"));
	free(out);
	free(err);
	/* A source option before the command does not outlive its line. */
	script = xp_asprintf("--inventory /nonexistent.json inventory\nversion\n");
	rc = batch(script, true, &out, &err);
	free(script);
	ck_assert_int_eq(rc, XP_EXIT_ERROR);
	ck_assert_ptr_nonnull(strstr(err, "t.xps:1: /nonexistent.json"));
	ck_assert_str_eq(out, "xpool " XP_VERSION "\n");
	free(out);
	free(err);
}
END_TEST

/* Arguments (after the form's words) that let a form run, and extra global options. */
struct form_args {
	const char *form;
	const char *args[4];
};

static char walk_dir[96];
static pid_t walk_agent = -1;

static void walk_teardown(void)
{
	if (walk_agent > 0)
		xp_agent_stop(walk_agent);
	walk_agent = -1;
	xp_rm_rf(walk_dir);
}

/* Runs xpool with the global options, then words (a form and its arguments) and --json. */
static int run_json(struct xp_run *r, const char *db, const char *agent, char *const *words, int n)
{
	char *argv[32];
	int k = 0;
	argv[k++] = (char *)xp_bin();
	argv[k++] = "--db";
	argv[k++] = (char *)db;
	if (agent) {
		argv[k++] = "--agent";
		argv[k++] = (char *)agent;
	} else {
		argv[k++] = "--topology";
		argv[k++] = (char *)xp_fixture("hwloc/32em64t-2n8c2t-pci-wholeio.xml");
	}
	for (int i = 0; i < n && k < 29; i++)
		argv[k++] = words[i];
	argv[k++] = "--json";
	argv[k] = NULL;
	return xp_run_argv(r, argv, NULL);
}

/* Every command and subcommand of the table either prints JSON under --json or refuses it with
 * exit 2: none prints text to a script that asked for JSON. */
START_TEST(json_or_refused)
{
	snprintf(walk_dir, sizeof walk_dir, "/tmp/xpool-cmdjson-%d", (int)getpid());
	ck_assert_int_eq(mkdir(walk_dir, 0700), 0);
	char *db = xp_asprintf("%s/x.db", walk_dir);
	char *conf = xp_write_file(walk_dir, "agent.conf", "probe hello -- /bin/echo hello\n", 0600);
	char *tok = xp_write_file(walk_dir, "write.token", "s3cret-token-for-the-walk\n", 0600);
	char url[256];
	walk_agent = xp_agent_start(url, sizeof url, "--topology", xp_fixture("hwloc/32em64t-2n8c2t-pci-wholeio.xml"),
				    "--config", conf, "--write-token-file", tok, NULL);
	ck_assert_msg(walk_agent > 0, "agent did not start: %s", url);
	struct xp_run r;
	/* A case and an environment for the forms that name them. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "validate", "case", "add", "c1", NULL), 0);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "validate", "env", "declare", "V", "M", "D", NULL), 0);
	xp_run_free(&r);
	/* On hold, so that the job the walk submits stays pending for hold and release. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "queue", "add", "q1", "--state", "hold", NULL), 0);
	xp_run_free(&r);
	/* xp_fixture's buffer is reused by run_json: a copy. */
	char *trace = xp_strdup(xp_fixture("traces/quota.jsonl"));
	const struct form_args need[] = {
		{"queue show", {"q1"}},
		{"queue add", {"q2"}},
		{"queue set", {"q2", "--state", "hold"}},
		{"queue rm", {"q2"}},
		{"queue class add", {"k1", "--vendor", "NVIDIA"}},
		{"queue class rm", {"k1"}},
		{"validate case show", {"c1"}},
		{"validate history", {"V:M:D", "c1"}},
		{"agent probe", {url, "hello", "--write-token-file", tok}},
		{"place", {"--dry-run", "--devices", "1"}},
		{"job submit", {"--queue", "q1", "--estimate", "1h"}},
		{"job show", {"1"}},
		{"job hold", {"1"}},
		{"job release", {"1"}},
		{"job cancel", {"1"}},
		{"whatif", {"--trace", trace}},
		{NULL, {NULL}},
	};
	int json_forms = 0, refused = 0;
	for (int i = 0; xp_cmd_table[i]; i++) {
		const struct xp_cmd_entry *e = xp_cmd_table[i];
		/* The bare command (f -1) when it may stand alone, then each subcommand. */
		int n_subs = 0;
		while (e->subs && e->subs[n_subs].words)
			n_subs++;
		for (int f = e->min_args > 0 ? 0 : -1; f < n_subs; f++) {
			char form[96];
			snprintf(form, sizeof form, "%s%s%s", e->name, f < 0 ? "" : " ", f < 0 ? "" : e->subs[f].words);
			bool json = f < 0 ? e->json : e->subs[f].json;
			char *words[16];
			char buf[96];
			snprintf(buf, sizeof buf, "%s", form);
			int n = 0;
			for (char *w = strtok(buf, " "); w && n < 8; w = strtok(NULL, " "))
				words[n++] = w;
			int positional = n - 1;
			for (int k = 0; need[k].form; k++)
				if (strcmp(need[k].form, form) == 0)
					for (int j = 0; j < 4 && need[k].args[j]; j++) {
						words[n++] = (char *)need[k].args[j];
						positional += need[k].args[j][0] != '-';
					}
			/* Enough arguments to pass the parser: what is refused must be --json itself. */
			for (; positional < e->min_args; positional++)
				words[n++] = "x";
			const char *agent = strcmp(form, "agent ls") == 0 || strcmp(form, "agent list") == 0 ? url : NULL;
			ck_assert_int_eq(run_json(&r, db, agent, words, n), 0);
			if (json) {
				json_error_t je;
				json_t *doc = json_loads(r.out, 0, &je);
				ck_assert_msg(doc != NULL, "%s --json: not JSON (%s), exit %d: %s%s", form, je.text, r.status,
					      r.out, r.err);
				ck_assert_msg(r.status == 0 || r.status == 3, "%s --json: exit %d: %s", form, r.status, r.err);
				json_decref(doc);
				json_forms++;
			} else {
				ck_assert_msg(r.status == XP_EXIT_USAGE && strstr(r.err, "--json: this command prints no JSON"),
					      "%s --json: exit %d, not refused: %s%s", form, r.status, r.out, r.err);
				ck_assert_str_eq(r.out, "");
				refused++;
			}
			xp_run_free(&r);
		}
	}
	/* An option that makes text of a JSON command is refused with --json: export writes
	 * YAML or an sbatch script. */
	for (int f = 0; f < 3; f++) {
		const char *fmt[] = {"k8s", "volcano", "slurm"};
		ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--topology",
					      xp_fixture("hwloc/32em64t-2n8c2t-pci-wholeio.xml"), "place", "--dry-run",
					      "--devices", "1", "--export", fmt[f], "--json", NULL),
				 0);
		ck_assert_msg(r.status == XP_EXIT_USAGE && strstr(r.err, "not JSON"), "--export %s --json: exit %d: %s%s",
			      fmt[f], r.status, r.out, r.err);
		ck_assert_str_eq(r.out, "");
		xp_run_free(&r);
	}
	/* A form the table does not know is refused too, never run to print text. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "validate", "bogus", "--json", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(r.err, "validate bogus: --json: not a subcommand that prints JSON"));
	xp_run_free(&r);
	ck_assert_int_ge(json_forms, 15);
	ck_assert_int_ge(refused, 10);
	free(db);
	free(trace);
	free(conf);
	free(tok);
}
END_TEST

XP_DEFINE_SUITE(cmd,
	{"core",
	 .tests = {option_tables_fit, find_rules, parse_options, split_words, batch_scripts, batch_leading_options}},
	{"json", .timeout_s = 120, .teardown = walk_teardown, .tests = {json_or_refused}})
