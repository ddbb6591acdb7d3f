/* check_prompt.c: the `:` prompt: completion rules, and the real readline callback loop
 * driven byte by byte on a curses screen that writes to /dev/null. */
#include <check.h>
#include <curses.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "prompt.h"
#include "suitelib.h"
#include "xp.h"

/* ---- completion ---- */

static size_t count(char **v)
{
	size_t n = 0;
	while (v[n])
		n++;
	return n;
}

static void free_list(char **v)
{
	for (size_t i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

static bool contains(char **v, const char *s)
{
	for (size_t i = 0; v[i]; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

/* Checks that got holds exactly the n strings of want (any order), then frees got. */
static void expect_set(char **got, const char *const *want, size_t n)
{
	ck_assert_uint_eq(count(got), n);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(contains(got, want[i]), "missing completion %s", want[i]);
	free_list(got);
}

/* Command names (and aliases that are not abbreviations of their name) starting with text. */
static size_t expected_commands(const char *text, const char **out, size_t max)
{
	size_t n = 0;
	for (int i = 0; xp_cmd_table[i] && n < max; i++) {
		const struct xp_cmd_entry *e = xp_cmd_table[i];
		if (strncmp(e->name, text, strlen(text)) == 0)
			out[n++] = e->name;
		if (e->alias && n < max && strncmp(e->alias, text, strlen(text)) == 0 &&
		    strncmp(e->name, e->alias, strlen(e->alias)) != 0)
			out[n++] = e->alias;
	}
	return n;
}

/* "--name" of the command's options and the global ones starting with text (deduplicated). */
static size_t expected_opts(const char *cmd, const char *text, char **out, size_t max)
{
	struct xp_err err;
	const struct xp_cmd_entry *e = cmd ? xp_cmd_find(cmd, &err) : NULL;
	size_t n = 0;
	for (int pass = 0; pass < 2; pass++) {
		const struct xp_opt *o = pass == 0 ? (e ? e->opts : NULL) : xp_global_opts;
		for (; o && o->name && n < max; o++) {
			char *s = xp_asprintf("--%s", o->name);
			bool dup = false;
			for (size_t k = 0; k < n; k++)
				dup = dup || strcmp(out[k], s) == 0;
			if (!dup && strncmp(s, text, strlen(text)) == 0)
				out[n++] = s;
			else
				free(s);
		}
	}
	return n;
}

static void check_opts(const char *line, int start, const char *cmd, const char *text)
{
	char *want[64];
	size_t n = expected_opts(cmd, text, want, 64);
	expect_set(xp_prompt_complete(NULL, line, start, text), (const char *const *)want, n);
	for (size_t i = 0; i < n; i++)
		free(want[i]);
}

static const char *const test_nodes[] = {"conan", "condor", "bertha"};

static size_t node_names(void *arg, const char *const **names)
{
	int *calls = arg;
	if (calls)
		(*calls)++;
	*names = test_nodes;
	return 3;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

START_TEST(complete_commands)
{
	char **m = xp_prompt_complete(NULL, "inv", 0, "inv");
	ck_assert_uint_eq(count(m), 1);
	ck_assert_str_eq(m[0], "inventory");
	free_list(m);

	const char *want[64];
	size_t n = expected_commands("t", want, 64);
	ck_assert_uint_ge(n, 1);
	m = xp_prompt_complete(NULL, "t", 0, "t");
	ck_assert(contains(m, "topo"));
	expect_set(m, want, n);

	/* Nothing typed: every command, sorted. */
	n = expected_commands("", want, 64);
	m = xp_prompt_complete(NULL, "", 0, "");
	ck_assert_uint_eq(count(m), n);
	for (size_t i = 1; i < n; i++)
		ck_assert_int_lt(strcmp(m[i - 1], m[i]), 0);
	free_list(m);

	/* Leading blanks do not make the command word a later one. */
	m = xp_prompt_complete(NULL, "  ver", 2, "ver");
	expect_set(m, (const char *const[]){"version"}, 1);

	m = xp_prompt_complete(NULL, "zzz", 0, "zzz");
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(count(m), 0);
	free_list(m);

	/* `help` takes a command name; global options before the command are skipped. */
	m = xp_prompt_complete(NULL, "help to", 5, "to");
	expect_set(m, (const char *const[]){"topo"}, 1);
	m = xp_prompt_complete(NULL, "--delay 3 -q top", 13, "top");
	expect_set(m, (const char *const[]){"topo"}, 1);
}
END_TEST

START_TEST(complete_options)
{
	check_opts("inventory --j", 10, "inventory", "--j");
	char **m = xp_prompt_complete(NULL, "inventory --j", 10, "--j");
	expect_set(m, (const char *const[]){"--json"}, 1);

	check_opts("topo --a", 5, "topo", "--a");
	m = xp_prompt_complete(NULL, "topo --a", 5, "--a");
	ck_assert(contains(m, "--all"));
	free_list(m);

	/* Before any command: global options only. */
	m = xp_prompt_complete(NULL, "--to", 0, "--to");
	expect_set(m, (const char *const[]){"--topology"}, 1);
	check_opts("-", 0, NULL, "-");
	/* An alias finds its command's options. */
	check_opts("inv -", 4, "inventory", "-");
	/* After "--" a dash word is an argument (a node name here). */
	m = xp_prompt_complete(NULL, "topo -- -x", 8, "-x");
	ck_assert_uint_eq(count(m), 0);
	free_list(m);
}
END_TEST

START_TEST(complete_names)
{
	int calls = 0;
	struct xp_prompt *p = xp_prompt_new(NULL, node_names, &calls);
	char **m = xp_prompt_complete(p, "inventory co", 10, "co");
	expect_set(m, (const char *const[]){"conan", "condor"}, 2);
	ck_assert_int_eq(calls, 1);
	m = xp_prompt_complete(p, "topo --all ", 11, "");
	ck_assert_uint_eq(count(m), 3);
	ck_assert_str_eq(m[0], "bertha"); /* sorted */
	free_list(m);
	/* The value of an option is not a node name; a number has no completions. */
	m = xp_prompt_complete(p, "topo -d ", 8, "");
	ck_assert_uint_eq(count(m), 0);
	free_list(m);
	m = xp_prompt_complete(p, "--delay=2 inventory b", 20, "b");
	expect_set(m, (const char *const[]){"bertha"}, 1);
	xp_prompt_free(p);

	/* Without a callback there are no names, and nothing breaks. */
	m = xp_prompt_complete(NULL, "inventory co", 10, "co");
	ck_assert_uint_eq(count(m), 0);
	free_list(m);
}
END_TEST

/* Subcommands come from the command table (each entry's sub hook), never node names; an
 * option's value from its own list (--strategy, --export) or the nodes (--explain NODE). */
START_TEST(complete_subcommands_and_values)
{
	struct xp_prompt *p = xp_prompt_new(NULL, node_names, NULL);
	char **m = xp_prompt_complete(p, "validate ", 9, "");
	ck_assert_msg(contains(m, "matrix") && contains(m, "sync") && contains(m, "case") && contains(m, "env") &&
			      contains(m, "help"),
		      "validate's subcommands");
	ck_assert_msg(!contains(m, "conan") && !contains(m, "add"), "node names or second words after validate");
	free_list(m);
	m = xp_prompt_complete(p, "validate ca", 9, "ca");
	expect_set(m, (const char *const[]){"case"}, 1);
	m = xp_prompt_complete(p, "validate case ", 14, "");
	expect_set(m, (const char *const[]){"add", "list", "rm", "show"}, 4);
	m = xp_prompt_complete(p, "validate env d", 13, "d");
	expect_set(m, (const char *const[]){"declare"}, 1);
	/* After a whole subcommand its own arguments follow: no node names. */
	m = xp_prompt_complete(p, "validate case show ", 19, "");
	ck_assert_uint_eq(count(m), 0);
	free_list(m);
	m = xp_prompt_complete(p, "db ", 3, "");
	ck_assert_msg(contains(m, "info") && contains(m, "check") && !contains(m, "conan"), "db's subcommands");
	free_list(m);
	m = xp_prompt_complete(p, "agent ", 6, "");
	ck_assert_msg(contains(m, "ls") && contains(m, "add") && contains(m, "rm"), "agent's subcommands");
	free_list(m);
	/* An option's values, from the engine's own names. */
	m = xp_prompt_complete(p, "place --dry-run --strategy ", 27, "");
	expect_set(m, (const char *const[]){"pack", "spread", "topology", "green"}, 4);
	m = xp_prompt_complete(p, "place --strategy sp", 17, "sp");
	expect_set(m, (const char *const[]){"spread"}, 1);
	m = xp_prompt_complete(p, "place --export ", 15, "");
	expect_set(m, (const char *const[]){"k8s", "volcano", "slurm"}, 3);
	m = xp_prompt_complete(p, "place --explain co", 16, "co");
	expect_set(m, (const char *const[]){"conan", "condor"}, 2);
	m = xp_prompt_complete(p, "validate run x --node b", 22, "b");
	expect_set(m, (const char *const[]){"bertha"}, 1);
	m = xp_prompt_complete(p, "validate run x --layer ex", 23, "ex");
	expect_set(m, (const char *const[]){"executes"}, 1);
	/* Commands without subcommands still take node names. */
	m = xp_prompt_complete(p, "inventory b", 10, "b");
	expect_set(m, (const char *const[]){"bertha"}, 1);
	/* Every option with a fixed set of values offers them: health's levels, the job's NUMA
	 * policies and network scopes (the engine's own names). */
	m = xp_prompt_complete(p, "health --fail-on ", 17, "");
	expect_set(m, (const char *const[]){"fail", "warn", "never"}, 3);
	m = xp_prompt_complete(p, "place --network ", 16, "");
	expect_set(m, (const char *const[]){"any", "switch", "rack"}, 3);
	m = xp_prompt_complete(p, "place --numa p", 13, "p");
	expect_set(m, (const char *const[]){"prefer"}, 1);
	xp_prompt_free(p);
}
END_TEST

/* `:theme ` completes theme names (the built-in default and the files in the theme path),
 * not node names: the command's table names what its argument is. */
START_TEST(complete_theme_names)
{
	char dir[64], path[128];
	snprintf(dir, sizeof dir, "/tmp/xpool-prompt-themes-%d", (int)getpid());
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(path, sizeof path, "%s/zz-test.theme", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("name = zz-test\n", f);
	fclose(f);
	setenv("XPOOL_THEME_PATH", dir, 1);
	struct xp_prompt *p = xp_prompt_new(NULL, node_names, NULL);
	char **m = xp_prompt_complete(p, "theme ", 6, "");
	ck_assert_msg(contains(m, "default") && contains(m, "zz-test") && !contains(m, "conan"), "theme names");
	free_list(m);
	m = xp_prompt_complete(p, "theme zz", 6, "zz");
	expect_set(m, (const char *const[]){"zz-test"}, 1);
	/* one argument only */
	m = xp_prompt_complete(p, "theme zz-test ", 14, "");
	ck_assert_uint_eq(count(m), 0);
	free_list(m);
	xp_prompt_free(p);
	unlink(path);
	rmdir(dir);
}
END_TEST

START_TEST(complete_files)
{
	char dir[] = "/tmp/xp-prompt-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char *f = xp_asprintf("%s/fixture.xml", dir);
	FILE *fp = fopen(f, "w");
	ck_assert_ptr_nonnull(fp);
	fclose(fp);
	char *line = xp_asprintf("inventory --topology %s/fi", dir);
	int start = (int)strlen("inventory --topology ");
	char **m = xp_prompt_complete(NULL, line, start, line + start);
	expect_set(m, (const char *const[]){f}, 1);
	unlink(f);
	rmdir(dir);
	free(line);
	free(f);
}
END_TEST

/* ---- the readline loop ---- */

static SCREEN *scr;
static FILE *scr_out, *scr_in;

static void screen_up(void)
{
	setenv("TERM", "xterm-256color", 1);
	setenv("INPUTRC", "/dev/null", 1); /* the tester's ~/.inputrc must not change the keys */
	scr_out = fopen("/dev/null", "w");
	scr_in = fopen("/dev/null", "r");
	ck_assert_ptr_nonnull(scr_out);
	ck_assert_ptr_nonnull(scr_in);
	scr = newterm(NULL, scr_out, scr_in);
	ck_assert_ptr_nonnull(scr);
	set_term(scr);
}

static void screen_down(void)
{
	endwin();
	delscreen(scr);
	fclose(scr_out);
	fclose(scr_in);
}

/* Feeds bytes that must leave the prompt editing. */
static void type(struct xp_prompt *p, const char *s)
{
	for (; *s; s++)
		ck_assert_int_eq(xp_prompt_feed(p, (unsigned char)*s), XP_PROMPT_EDITING);
}

/* Opens the prompt on the bottom row, types s, presses Enter; returns the state. */
static int run_line(struct xp_prompt *p, const char *s)
{
	xp_prompt_open(p, stdscr, LINES - 1, COLS, ":");
	ck_assert(xp_prompt_active(p));
	type(p, s);
	return xp_prompt_feed(p, '\r');
}

/* The line the prompt gives back for keys s and Enter, which must finish it. */
static const char *entered(struct xp_prompt *p, const char *s)
{
	int got = run_line(p, s);
	ck_assert_msg(got == XP_PROMPT_DONE, "keys \"%s\" ended in state %d, not done", s, got);
	return xp_prompt_line(p);
}

/* The text of the prompt row (static buffer); the cursor stays where the prompt left it. */
static const char *row(void)
{
	static char buf[512];
	int n = COLS < (int)sizeof buf - 1 ? COLS : (int)sizeof buf - 1;
	int y, x;
	getyx(stdscr, y, x);
	mvwinnstr(stdscr, LINES - 1, 0, buf, n);
	wmove(stdscr, y, x);
	return buf;
}

START_TEST(loop_accept)
{
	struct xp_prompt *p = xp_prompt_new(NULL, NULL, NULL);
	xp_prompt_open(p, stdscr, LINES - 1, COLS, ":");
	type(p, "inventory --json");
	ck_assert(strncmp(row(), ":inventory --json ", 18) == 0);
	int y, x;
	getyx(stdscr, y, x);
	ck_assert_int_eq(y, LINES - 1);
	ck_assert_int_eq(x, 17);
	ck_assert_int_eq(xp_prompt_feed(p, '\r'), XP_PROMPT_DONE);
	ck_assert(!xp_prompt_active(p));
	ck_assert_str_eq(xp_prompt_line(p), "inventory --json");
	/* A closed prompt takes no keys. */
	ck_assert_int_eq(xp_prompt_feed(p, 'x'), XP_PROMPT_CANCEL);

	ck_assert_int_eq(run_line(p, ""), XP_PROMPT_CANCEL); /* an empty line closes */
	ck_assert_int_eq(run_line(p, "   "), XP_PROMPT_CANCEL);
	ck_assert_int_eq(xp_prompt_feed(p, '\n'), XP_PROMPT_CANCEL);
	xp_prompt_open(p, stdscr, LINES - 1, COLS, ":");
	type(p, "help");
	ck_assert_int_eq(xp_prompt_feed(p, '\n'), XP_PROMPT_DONE);
	ck_assert_str_eq(xp_prompt_line(p), "help");
	xp_prompt_free(p);
}
END_TEST

START_TEST(loop_editing)
{
	struct xp_prompt *p = xp_prompt_new(NULL, NULL, NULL);
	ck_assert_str_eq(entered(p, "abc\001x"), "xabc"); /* Ctrl-A */

	/* Left arrow as the raw bytes a terminal sends, fed one at a time. */
	xp_prompt_open(p, stdscr, LINES - 1, COLS, ":");
	type(p, "ab\033");
	ck_assert(xp_prompt_esc_pending(p));
	type(p, "[D");
	ck_assert(!xp_prompt_esc_pending(p));
	type(p, "X");
	ck_assert_int_eq(xp_prompt_feed(p, '\r'), XP_PROMPT_DONE);
	ck_assert_str_eq(xp_prompt_line(p), "aXb");

	/* Home, Delete, Backspace, Ctrl-W, Alt-b (Esc b). */
	ck_assert_str_eq(entered(p, "xyz\033[H\033[3~"), "yz");
	ck_assert_str_eq(entered(p, "abcd\177\010"), "ab");
	ck_assert_str_eq(entered(p, "one two\027three"), "one three");
	ck_assert_str_eq(entered(p, "one two\033bX"), "one Xtwo");

	/* Keys ncurses decoded (keypad left on) still work. */
	xp_prompt_open(p, stdscr, LINES - 1, COLS, ":");
	type(p, "ab");
	ck_assert_int_eq(xp_prompt_feed(p, KEY_LEFT), XP_PROMPT_EDITING);
	ck_assert_int_eq(xp_prompt_feed(p, KEY_RESIZE), XP_PROMPT_EDITING);
	type(p, "-");
	ck_assert_int_eq(xp_prompt_feed(p, KEY_ENTER), XP_PROMPT_DONE);
	ck_assert_str_eq(xp_prompt_line(p), "a-b");

	/* Unknown sequences are dropped whole: F5, an SGR mouse report, an X10 mouse report. */
	ck_assert_str_eq(entered(p, "a\033[15~b\033[<0;12;5Mc\033[M !!d"), "abcd");
	/* Esc then Enter in quick succession is not a switch to vi mode. */
	ck_assert_str_eq(entered(p, "ab\033\r"), "ab");
	ck_assert_str_eq(entered(p, "x\033\r"), "x");
	/* ERR with nothing pending does nothing. */
	xp_prompt_open(p, stdscr, LINES - 1, COLS, ":");
	type(p, "q");
	ck_assert_int_eq(xp_prompt_feed(p, ERR), XP_PROMPT_EDITING);
	ck_assert_int_eq(xp_prompt_feed(p, '\r'), XP_PROMPT_DONE);
	ck_assert_str_eq(xp_prompt_line(p), "q");
	xp_prompt_free(p);
}
END_TEST

START_TEST(loop_cancel)
{
	struct xp_prompt *p = xp_prompt_new(NULL, NULL, NULL);
	xp_prompt_open(p, stdscr, LINES - 1, COLS, ":");
	type(p, "abc\033");
	ck_assert_int_eq(xp_prompt_feed(p, -1), XP_PROMPT_CANCEL);
	ck_assert(!xp_prompt_active(p));
	ck_assert_str_eq(xp_prompt_line(p), "");

	xp_prompt_open(p, stdscr, LINES - 1, COLS, ":");
	type(p, "abc");
	ck_assert_int_eq(xp_prompt_feed(p, 3), XP_PROMPT_CANCEL); /* Ctrl-C */

	xp_prompt_open(p, stdscr, LINES - 1, COLS, ":");
	ck_assert_int_eq(xp_prompt_feed(p, 4), XP_PROMPT_CANCEL); /* Ctrl-D, empty line */

	xp_prompt_open(p, stdscr, LINES - 1, COLS, ":");
	type(p, "x\033");
	ck_assert_int_eq(xp_prompt_feed(p, 27), XP_PROMPT_CANCEL); /* Esc Esc */

	/* Ctrl-D on a non-empty line deletes; the next line starts empty after a cancel. */
	ck_assert_str_eq(entered(p, "ab\001\004"), "b");

	/* Cancel from inside an incremental search and from a half-typed Ctrl-X prefix. */
	ck_assert_int_eq(run_line(p, "version"), XP_PROMPT_DONE);
	xp_prompt_open(p, stdscr, LINES - 1, COLS, ":");
	type(p, "\022ver"); /* Ctrl-R */
	ck_assert_ptr_nonnull(strstr(row(), "version"));
	type(p, "\033");
	ck_assert_int_eq(xp_prompt_feed(p, ERR), XP_PROMPT_CANCEL);
	xp_prompt_open(p, stdscr, LINES - 1, COLS, ":");
	type(p, "zz\030");
	ck_assert_int_eq(xp_prompt_feed(p, 3), XP_PROMPT_CANCEL);
	ck_assert_str_eq(entered(p, "ok"), "ok");

	/* Freeing an open prompt cancels it cleanly. */
	xp_prompt_open(p, stdscr, LINES - 1, COLS, ":");
	type(p, "left open");
	xp_prompt_free(p);
}
END_TEST

/* A fresh directory under /tmp holding state/xpool/history (not created yet). */
static char *hist_dir(char **path)
{
	char tmpl[] = "/tmp/xp-hist-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	*path = xp_asprintf("%s/state/xpool/history", tmpl);
	return xp_strdup(tmpl);
}

static char *slurp(const char *path)
{
	struct xp_err err;
	size_t len;
	char *s = xp_read_file(path, 1 << 20, &len, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	return s;
}

START_TEST(loop_history)
{
	char *path;
	char *dir = hist_dir(&path);
	struct xp_prompt *p = xp_prompt_new(path, NULL, NULL);
	ck_assert_int_eq(run_line(p, "inventory"), XP_PROMPT_DONE);
	ck_assert_int_eq(run_line(p, "topo --all"), XP_PROMPT_DONE);
	ck_assert_int_eq(run_line(p, "topo --all"), XP_PROMPT_DONE); /* a repeat is kept once */
	ck_assert_str_eq(entered(p, "\033[A"), "topo --all");
	ck_assert_str_eq(entered(p, "\033[A\033[A"), "inventory");
	/* Editing a recalled line and leaving it does not rewrite history. */
	xp_prompt_open(p, stdscr, LINES - 1, COLS, ":");
	type(p, "\033[A!!\033[Bnew");
	ck_assert_int_eq(xp_prompt_feed(p, '\r'), XP_PROMPT_DONE);
	ck_assert_str_eq(xp_prompt_line(p), "new");
	xp_prompt_open(p, stdscr, LINES - 1, COLS, ":");
	type(p, "\033[Ax\033");
	ck_assert_int_eq(xp_prompt_feed(p, ERR), XP_PROMPT_CANCEL);
	xp_prompt_free(p);

	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	char *parent = xp_asprintf("%s/state/xpool", dir);
	ck_assert_int_eq(stat(parent, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	char *text = slurp(path);
	ck_assert_str_eq(text, "inventory\ntopo --all\ninventory\nnew\n");
	free(text);

	/* A new prompt on the same file recalls them. */
	p = xp_prompt_new(path, NULL, NULL);
	ck_assert_str_eq(entered(p, "\033[A"), "new");
	ck_assert_str_eq(entered(p, "\033[A\033[A\033[A"), "topo --all");
	xp_prompt_open(p, stdscr, LINES - 1, COLS, ":");
	ck_assert_int_eq(xp_prompt_feed(p, KEY_UP), XP_PROMPT_EDITING);
	ck_assert_int_eq(xp_prompt_feed(p, '\r'), XP_PROMPT_DONE);
	ck_assert_str_eq(xp_prompt_line(p), "topo --all");
	xp_prompt_free(p);

	unlink(path);
	rmdir(parent);
	free(parent);
	parent = xp_asprintf("%s/state", dir);
	rmdir(parent);
	rmdir(dir);
	free(parent);
	free(path);
	free(dir);
}
END_TEST

START_TEST(loop_history_limit)
{
	char *path;
	char *dir = hist_dir(&path);
	struct xp_prompt *p = xp_prompt_new(path, NULL, NULL);
	char line[32];
	for (int i = 0; i < 1010; i++) {
		snprintf(line, sizeof line, "l%d", i);
		ck_assert_int_eq(run_line(p, line), XP_PROMPT_DONE);
	}
	xp_prompt_free(p);
	char *text = slurp(path);
	int lines = 0;
	for (char *s = text; *s; s++)
		lines += *s == '\n';
	ck_assert_int_eq(lines, 1000);
	ck_assert(strncmp(text, "l10\n", 4) == 0);
	free(text);
	unlink(path);
	char *d = xp_asprintf("%s/state/xpool", dir);
	rmdir(d);
	free(d);
	d = xp_asprintf("%s/state", dir);
	rmdir(d);
	free(d);
	rmdir(dir);
	free(path);
	free(dir);
}
END_TEST

START_TEST(loop_completion)
{
	struct xp_prompt *p = xp_prompt_new(NULL, node_names, NULL);
	ck_assert(strncmp(entered(p, "top\t"), "topo", 4) == 0);
	ck_assert(strncmp(entered(p, "inventory --j\t"), "inventory --json", 16) == 0);

	/* Several matches: the common part is inserted and the list shows after the input
	 * until the next key. */
	xp_prompt_open(p, stdscr, LINES - 1, COLS, ":");
	type(p, "inventory co\t");
	ck_assert_msg(strncmp(row(), ":inventory con  conan  condor ", 30) == 0, "row '%s'", row());
	type(p, "d");
	ck_assert_ptr_null(strstr(row(), "conan"));
	type(p, "\t");
	ck_assert_int_eq(xp_prompt_feed(p, '\r'), XP_PROMPT_DONE);
	ck_assert_str_eq(xp_prompt_line(p), "inventory condor ");

	xp_prompt_open(p, stdscr, LINES - 1, COLS, ":");
	type(p, "\t");
	const char *want[64];
	size_t n = expected_commands("", want, 64);
	/* The list shares one row, sorted: every command that fits in it must be there. */
	qsort(want, n, sizeof want[0], cmp_names);
	size_t used = 1;
	for (size_t i = 0; i < n; i++) {
		used += strlen(want[i]) + 2;
		if (used > (size_t)COLS - 2)
			break;
		ck_assert_msg(strstr(row(), want[i]), "%s not listed in '%s'", want[i], row());
	}
	ck_assert_int_eq(xp_prompt_feed(p, 3), XP_PROMPT_CANCEL);
	xp_prompt_free(p);
}
END_TEST

START_TEST(loop_scroll)
{
	struct xp_prompt *p = xp_prompt_new(NULL, NULL, NULL);
	int y, x;
	xp_prompt_open(p, stdscr, LINES - 1, 20, ":");
	char buf[64];
	for (int i = 0; i < 40; i++)
		buf[i] = (char)('a' + i % 26);
	buf[40] = '\0';
	type(p, buf);
	/* Scrolled to the end: '<' marks hidden text, the cursor sits after the last letter. */
	ck_assert_int_eq(row()[0], '<');
	getyx(stdscr, y, x);
	ck_assert_int_eq(x, 18);
	ck_assert_int_eq(row()[17], buf[39]);
	ck_assert_int_eq(row()[20], ' '); /* nothing past the prompt's width */
	type(p, "\001"); /* Home: back to the start, '>' marks more on the right */
	ck_assert_msg(strncmp(row(), ":abcdefghijklmnopqr>", 20) == 0, "row '%s'", row());
	getyx(stdscr, y, x);
	ck_assert_int_eq(x, 1);
	/* Resizing keeps the text and redraws in the new width. */
	xp_prompt_resize(p, LINES - 2, 30);
	xp_prompt_draw(p);
	getyx(stdscr, y, x);
	ck_assert_int_eq(y, LINES - 2);
	ck_assert_int_eq(x, 1);
	ck_assert_int_eq(xp_prompt_feed(p, '\r'), XP_PROMPT_DONE);
	ck_assert_str_eq(xp_prompt_line(p), buf);
	xp_prompt_free(p);
}
END_TEST

START_TEST(loop_utf8)
{
	if (!setlocale(LC_ALL, "C.UTF-8"))
		return; /* no UTF-8 locale on this machine */
	screen_up();
	struct xp_prompt *p = xp_prompt_new(NULL, NULL, NULL);
	xp_prompt_open(p, stdscr, LINES - 1, COLS, ":");
	type(p, "\xc3\xa9\xe4\xb8\xad"); /* é (one column), 中 (two) */
	int y, x;
	getyx(stdscr, y, x);
	ck_assert_int_eq(x, 4);
	type(p, "\002"); /* Ctrl-B: back over the whole wide character */
	getyx(stdscr, y, x);
	ck_assert_int_eq(y, LINES - 1);
	ck_assert_int_eq(x, 2);
	type(p, "\001"); /* Ctrl-A */
	getyx(stdscr, y, x);
	ck_assert_int_eq(x, 1);
	ck_assert_int_eq(xp_prompt_feed(p, '\r'), XP_PROMPT_DONE);
	ck_assert_str_eq(xp_prompt_line(p), "\xc3\xa9\xe4\xb8\xad");
	xp_prompt_free(p);
	screen_down();
	setlocale(LC_ALL, "C");
}
END_TEST

XP_DEFINE_SUITE(prompt,
	{"complete",
	 .tests = {complete_commands, complete_options, complete_names, complete_subcommands_and_values,
		   complete_theme_names, complete_files}},
	{"readline", .setup = screen_up, .teardown = screen_down,
	 .tests = {loop_accept, loop_editing, loop_cancel, loop_history, loop_history_limit,
		   loop_completion, loop_scroll}},
	{"utf8", .tests = {loop_utf8}})
