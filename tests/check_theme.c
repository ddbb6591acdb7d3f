/* check_theme.c: the theme file format (good and malformed files, each error naming file, line
 * and key), the shipped themes, the search path, applying a theme to a terminal, and the
 * `theme` command. Tests run from the repository root, so "themes" is the shipped directory. */
#include <check.h>
#include <locale.h>
#include <curses.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wchar.h>

#include "cmd.h"
#include "suitelib.h"
#include "testlib.h"
#include "draw.h"
#include "theme.h"
#include "xp.h"

extern const struct xp_cmd_entry xp_cmd_theme_entry;

static const char *const shipped[] = {"default", "dark", "high-contrast", "mono", "colorblind"};
#define N_SHIPPED (sizeof shipped / sizeof shipped[0])

/* Keeps the user's own theme directory out of the search path. */
static void isolate(const char *theme_path)
{
	setenv("XDG_CONFIG_HOME", "/nonexistent-xpool-check/config", 1);
	if (theme_path)
		setenv("XPOOL_THEME_PATH", theme_path, 1);
	else
		unsetenv("XPOOL_THEME_PATH");
}

static int parse(const char *text, struct xp_theme *t, struct xp_err *err)
{
	return xp_theme_parse(text, strlen(text), "t.theme", t, err);
}

static void assert_style(const struct xp_style *s, int fg, int fg8, int bg, int bg8, unsigned attrs)
{
	ck_assert_int_eq(s->fg, fg);
	ck_assert_int_eq(s->fg8, fg8);
	ck_assert_int_eq(s->bg, bg);
	ck_assert_int_eq(s->bg8, bg8);
	ck_assert_uint_eq(s->attrs, attrs);
}

START_TEST(role_names)
{
	for (int r = 0; r < XP_ROLE_COUNT; r++) {
		ck_assert_ptr_nonnull(xp_role_name(r));
		for (int k = 0; k < r; k++)
			ck_assert_str_ne(xp_role_name(r), xp_role_name(k));
	}
	ck_assert_str_eq(xp_role_name(XP_ROLE_TAB_ACTIVE), "tab.active");
	ck_assert_str_eq(xp_role_name(XP_ROLE_UTIL_80), "util.80");
	ck_assert_str_eq(xp_role_name(XP_ROLE_LINK_SYS), "link.sys");
	ck_assert_ptr_null(xp_role_name(-1));
	ck_assert_ptr_null(xp_role_name(XP_ROLE_COUNT));
}
END_TEST

START_TEST(parse_good)
{
	/* A byte order mark, CRLF endings, tabs, comments, mixed case, every colour form. */
	static const char text[] =
		"\xef\xbb\xbf# a test theme\r\n"
		"\r\n"
		"name = Test Theme   # trailing comment\r\n"
		"\tnormal = default, default\n"
		"header = red, blue, bold underline\n"
		"tab = brightred, brightblack\n"
		"tab.active = color208, color16\n"
		"title = color208/yellow\n"
		"selected = #ff8700, default, reverse\n"
		"ok = COLOR40 , Default ,BOLD,dim\n"
		"warn = bold italic blink standout\n"
		"fail = #00FF00/red\n"
		"dim = colour244 # British spelling, then a comment\n"
		"status = color7, color15\n"
		"prompt = color196 / default, #0000ff/ blue\n"
		"border = #D55E00\n"
		"match = white, black, reverse, bold underline\n"
		"util.0 = color232, color255\n";
	struct xp_theme t;
	struct xp_err err = {{0}};
	ck_assert_msg(parse(text, &t, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(t.name, "Test Theme");
	assert_style(&t.roles[XP_ROLE_NORMAL], -1, -1, -1, -1, 0);
	assert_style(&t.roles[XP_ROLE_HEADER], 1, 1, 4, 4, XP_ATTR_BOLD | XP_ATTR_UNDERLINE);
	/* bright N falls back to N. */
	assert_style(&t.roles[XP_ROLE_TAB], 9, 1, 8, 0, 0);
	/* Computed fallbacks: orange is nearest yellow, colour 16 is black. */
	assert_style(&t.roles[XP_ROLE_TAB_ACTIVE], 208, 3, 16, 0, 0);
	assert_style(&t.roles[XP_ROLE_TITLE], 208, 3, -1, -1, 0);
	/* #ff8700 is exactly colour 208. */
	assert_style(&t.roles[XP_ROLE_SELECTED], 208, 3, -1, -1, XP_ATTR_REVERSE);
	assert_style(&t.roles[XP_ROLE_OK], 40, 2, -1, -1, XP_ATTR_BOLD | XP_ATTR_DIM);
	/* Attributes alone leave both colours at the default. */
	assert_style(&t.roles[XP_ROLE_WARN], -1, -1, -1, -1,
		     XP_ATTR_BOLD | XP_ATTR_ITALIC | XP_ATTR_BLINK | XP_ATTR_STANDOUT);
	/* An explicit fallback wins over the computed one (green). */
	assert_style(&t.roles[XP_ROLE_FAIL], 46, 1, -1, -1, 0);
	assert_style(&t.roles[XP_ROLE_DIM], 244, 7, -1, -1, 0);
	assert_style(&t.roles[XP_ROLE_STATUS], 7, 7, 15, 7, 0);
	assert_style(&t.roles[XP_ROLE_PROMPT], 196, -1, 21, 4, 0);
	/* Okabe-Ito vermillion maps to 166 (#d75f00), whose nearest basic colour is red. */
	assert_style(&t.roles[XP_ROLE_BORDER], 166, 1, -1, -1, 0);
	assert_style(&t.roles[XP_ROLE_MATCH], 7, 7, 0, 0, XP_ATTR_REVERSE | XP_ATTR_BOLD | XP_ATTR_UNDERLINE);
	/* The grey ramp: darkest is black, lightest white. */
	assert_style(&t.roles[XP_ROLE_UTIL_0], 232, 0, 255, 7, 0);
	for (int r = XP_ROLE_NORMAL; r <= XP_ROLE_UTIL_0; r++)
		ck_assert_msg(t.roles[r].set, "%s not marked set", xp_role_name(r));
	/* Roles the file does not name keep the default and are not marked set. */
	struct xp_theme d;
	xp_theme_default(&d);
	for (int r = XP_ROLE_UTIL_20; r < XP_ROLE_COUNT; r++) {
		ck_assert(!t.roles[r].set);
		ck_assert_mem_eq(&t.roles[r], &d.roles[r], sizeof d.roles[r]);
	}
	ck_assert_int_eq(xp_theme_roles_set(&t), XP_ROLE_UTIL_0 + 1);

	/* Without a name line the theme is named after its file. */
	ck_assert_int_eq(xp_theme_parse("ok = red\n", 9, "/a/b/my-look.theme", &t, &err), 0);
	ck_assert_str_eq(t.name, "my-look");
	/* A '#' after a blank and before no hex digit starts a comment; an empty text is the default. */
	ck_assert_int_eq(parse("ok = red #healthy\nfail=#ff0000", &t, &err), 0);
	assert_style(&t.roles[XP_ROLE_OK], 1, 1, -1, -1, 0);
	assert_style(&t.roles[XP_ROLE_FAIL], 196, 1, -1, -1, 0);
	ck_assert_int_eq(xp_theme_parse("", 0, "empty.theme", &t, &err), 0);
	ck_assert_int_eq(xp_theme_roles_set(&t), 0);
	ck_assert_str_eq(t.name, "empty");
}
END_TEST

/* Expects text to fail with exactly the given message prefix, naming what must be named. */
static void bad(const char *text, size_t len, const char *prefix, const char *named)
{
	struct xp_theme t;
	struct xp_err err = {{0}};
	snprintf(t.name, sizeof t.name, "untouched");
	int rc = xp_theme_parse(text, len, "t.theme", &t, &err);
	ck_assert_msg(rc == -1, "accepted: %s", text);
	ck_assert_msg(strncmp(err.msg, prefix, strlen(prefix)) == 0, "'%s' does not start with '%s'", err.msg,
		      prefix);
	if (named)
		ck_assert_msg(strstr(err.msg, named) != NULL, "'%s' does not name %s", err.msg, named);
	ck_assert_str_eq(t.name, "untouched"); /* a bad file leaves the theme alone */
}

#define BAD(text, prefix, named) bad(text, strlen(text), prefix, named)

START_TEST(parse_bad)
{
	BAD("ok = red\nokay = red\n", "t.theme:2: unknown key 'okay'", NULL);
	BAD("\n\nfail = purple\n", "t.theme:3: fail: bad colour 'purple'", "expected default");
	BAD("warn = color256\n", "t.theme:1: warn: bad colour 'color256'", "0 to 255");
	BAD("warn = color0300\n", "t.theme:1: warn: bad colour 'color0300'", NULL);
	BAD("warn = color-1\n", "t.theme:1: warn: bad colour 'color-1'", NULL);
	BAD("warn = color\n", "t.theme:1: warn: bad colour 'color'", NULL);
	BAD("ok = #12345g\n", "t.theme:1: ok: bad colour '#12345g'", "#rrggbb");
	BAD("ok = red #bad\n", "t.theme:1: ok: bad colour 'red #bad'", NULL);
	BAD("ok = #1234\n", "t.theme:1: ok: bad colour '#1234'", NULL);
	BAD("ok = brightpink\n", "t.theme:1: ok: bad colour 'brightpink'", NULL);
	BAD("ok = color208/brightred\n", "t.theme:1: ok: bad colour 'color208/brightred'", "fallback");
	BAD("ok = color208/color12\n", "t.theme:1: ok: bad colour 'color208/color12'", "fallback");
	BAD("ok = color208/\n", "t.theme:1: ok: bad colour 'color208/'", "fallback");
	BAD("ok = /red\n", "t.theme:1: ok: bad colour '/red'", NULL);
	BAD("ok = red, blue, shiny\n", "t.theme:1: ok: unknown attribute 'shiny'", "red, blue, shiny");
	BAD("ok = bold shiny\n", "t.theme:1: ok: unknown attribute 'shiny'", NULL);
	BAD("ok = red, bold, green\n", "t.theme:1: ok: unknown attribute 'green'", NULL);
	BAD("ok = red, blue, green\n", "t.theme:1: ok: 'green' is a third colour", NULL);
	BAD("ok = red blue\n", "t.theme:1: ok: bad colour 'red blue'", NULL);
	BAD("ok = red,,bold\n", "t.theme:1: ok: empty item in 'red,,bold'", NULL);
	BAD("ok = red,\n", "t.theme:1: ok: empty item", NULL);
	BAD("ok = red\n# again\nok = blue\n", "t.theme:3: duplicate key 'ok' (first set on line 1)", NULL);
	BAD("name = a\nname = b\n", "t.theme:2: duplicate key 'name' (first set on line 1)", NULL);
	BAD("ok red\n", "t.theme:1: expected 'key = value', got 'ok red'", NULL);
	BAD("# fine\n= red\n", "t.theme:2: missing key before '= red'", NULL);
	BAD("tab.active =   # nothing\n", "t.theme:1: tab.active: missing value", NULL);
	BAD("Ok = red\n", "t.theme:1: unknown key 'Ok'", NULL); /* keys are case-sensitive */
	BAD("name = \x01x\n", "t.theme:1: name: control character", NULL);
	BAD("name = 0123456789012345678901234567890123456789012345678901234567890123\n",
	    "t.theme:1: name: '0123", "longer than 63 bytes");
	BAD("ok = red\n# \xff\xfe\n", "t.theme:2: invalid UTF-8", NULL);
	BAD("# \xc0\xaf overlong\n", "t.theme:1: invalid UTF-8", NULL);
	BAD("# \xed\xa0\x80 surrogate\n", "t.theme:1: invalid UTF-8", NULL);
	BAD("# truncated \xe2\x94", "t.theme:1: invalid UTF-8", NULL);

	/* A NUL byte ends no line early: the parser sees it and says where. */
	static const char nul[] = "ok = red\nwarn = yel\0low\n";
	bad(nul, sizeof nul - 1, "t.theme:2: NUL byte", NULL);

	/* Lines: 1024 bytes are fine, 1025 are not. */
	char *line = malloc(2048);
	memset(line, 'x', 2048);
	memcpy(line, "ok = red\n# ", 11);
	line[9 + 1024] = '\n';
	struct xp_theme t;
	struct xp_err err = {{0}};
	ck_assert_msg(xp_theme_parse(line, 9 + 1024 + 1, "t.theme", &t, &err) == 0, "%s", err.msg);
	line[9 + 1024] = 'x';
	line[9 + 1025] = '\n';
	bad(line, 9 + 1025 + 1, "t.theme:2: line longer than 1024 bytes", NULL);
	free(line);

	/* A 70 KiB file is refused before any line is read. */
	size_t big = 70 * 1024;
	char *text = malloc(big);
	for (size_t i = 0; i < big; i += 64) {
		memset(text + i, ' ', 64);
		text[i] = '#';
		text[i + 63] = '\n';
	}
	bad(text, big, "t.theme: file is 71680 bytes, more than the 65536 allowed", NULL);
	/* The same through a file on disk. */
	char *path = xp_tmpfile(text, big);
	ck_assert_int_eq(xp_theme_load(path, &t, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "71680 bytes, more than the 65536 allowed"));
	ck_assert_int_eq(strncmp(err.msg, path, strlen(path)), 0);
	unlink(path);
	free(path);
	free(text);
}
END_TEST

START_TEST(shipped_themes)
{
	for (size_t i = 0; i < N_SHIPPED; i++) {
		char path[256];
		snprintf(path, sizeof path, "themes/%s.theme", shipped[i]);
		struct xp_theme t;
		struct xp_err err = {{0}};
		ck_assert_msg(xp_theme_load(path, &t, &err) == 0, "%s", err.msg);
		ck_assert_str_eq(t.name, shipped[i]);
		ck_assert_int_eq(xp_theme_roles_set(&t), XP_ROLE_COUNT);
		const struct xp_style *s = t.roles;
		bool mono = strcmp(shipped[i], "mono") == 0;
		for (int r = 0; r < XP_ROLE_COUNT; r++) {
			ck_assert_msg(s[r].set, "%s: %s not set", path, xp_role_name(r));
			ck_assert(s[r].fg8 >= -1 && s[r].fg8 <= 7 && s[r].bg8 >= -1 && s[r].bg8 <= 7);
			if (mono)
				ck_assert_msg(s[r].fg == -1 && s[r].bg == -1, "mono sets a colour for %s", xp_role_name(r));
			/* Readable on 8 colours: text never in its own background colour. */
			if (s[r].fg8 >= 0)
				ck_assert_msg(s[r].fg8 != s[r].bg8, "%s: %s is invisible on 8 colours", path,
					      xp_role_name(r));
		}
		/* The cursor row is marked: by a background, or by reverse video. */
		const struct xp_style *sel = &s[XP_ROLE_SELECTED], *nor = &s[XP_ROLE_NORMAL];
		ck_assert(sel->bg != nor->bg || (sel->attrs & XP_ATTR_REVERSE));
		ck_assert(sel->bg8 != nor->bg8 || (sel->attrs & XP_ATTR_REVERSE));
		/* ok and fail differ on both kinds of terminal, and not by hue alone: fail is bold. */
		const struct xp_style *ok = &s[XP_ROLE_OK], *fail = &s[XP_ROLE_FAIL];
		ck_assert(mono || ok->fg8 != fail->fg8);
		ck_assert(mono || ok->fg != fail->fg);
		ck_assert(fail->attrs & XP_ATTR_BOLD);
		/* Each utilization step looks different from the one below it, in 256 and in 8 colours. */
		for (int r = XP_ROLE_UTIL_20; r <= XP_ROLE_UTIL_80; r++) {
			const struct xp_style *a = &s[r - 1], *b = &s[r];
			ck_assert_msg(a->fg != b->fg || a->bg != b->bg || a->attrs != b->attrs, "%s: %s", path,
				      xp_role_name(r));
			ck_assert_msg(a->fg8 != b->fg8 || a->bg8 != b->bg8 || a->attrs != b->attrs, "%s: %s (8)",
				      path, xp_role_name(r));
		}
	}
	/* The colour-blind theme keeps green and red out of ok and fail. */
	struct xp_theme cb;
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_theme_load("themes/colorblind.theme", &cb, &err), 0);
	ck_assert_int_ne(cb.roles[XP_ROLE_OK].fg8, COLOR_GREEN);
	ck_assert_int_eq(cb.roles[XP_ROLE_OK].fg, 74); /* Okabe-Ito sky blue */
	ck_assert_int_eq(cb.roles[XP_ROLE_FAIL].fg, 166); /* Okabe-Ito vermillion */
}
END_TEST

START_TEST(default_matches_file)
{
	struct xp_theme file, builtin;
	struct xp_err err = {{0}};
	ck_assert_msg(xp_theme_load("themes/default.theme", &file, &err) == 0, "%s", err.msg);
	xp_theme_default(&builtin);
	ck_assert_str_eq(file.name, builtin.name);
	for (int r = 0; r < XP_ROLE_COUNT; r++) {
		const struct xp_style *f = &file.roles[r], *b = &builtin.roles[r];
		ck_assert_msg(f->fg == b->fg && f->bg == b->bg && f->fg8 == b->fg8 && f->bg8 == b->bg8 &&
				      f->attrs == b->attrs,
			      "default.theme and xp_theme_default differ on %s: file %d/%d,%d/%d,%u built in %d/%d,%d/%d,%u",
			      xp_role_name(r), f->fg, f->fg8, f->bg, f->bg8, f->attrs, b->fg, b->fg8, b->bg, b->bg8,
			      b->attrs);
	}
}
END_TEST

/* Makes a directory holding one theme file; returns the directory (caller removes both). */
static char *theme_dir(const char *file, const char *text)
{
	char tmpl[] = "/tmp/xpool-themes-XXXXXX";
	char *dir = mkdtemp(tmpl);
	ck_assert_ptr_nonnull(dir);
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return strdup(dir);
}

static void theme_dir_remove(char *dir, const char *file)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	unlink(path);
	rmdir(dir);
	free(dir);
}

START_TEST(load_and_search)
{
	struct xp_theme t;
	struct xp_err err = {{0}};
	/* By name through XPOOL_THEME_PATH; an empty or missing entry is skipped. */
	isolate("/nonexistent-xpool-check::themes");
	ck_assert_msg(xp_theme_load("dark", &t, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(t.name, "dark");
	ck_assert_int_eq(xp_theme_load("high-contrast.theme", &t, &err), 0);
	ck_assert_str_eq(t.name, "high-contrast");
	char *p = xp_theme_find("mono", &err);
	ck_assert_ptr_nonnull(p);
	ck_assert_msg(strlen(p) > 18 && p[0] == '/' && strcmp(p + strlen(p) - 18, "/themes/mono.theme") == 0,
		      "%s", p);
	free(p);
	p = xp_theme_find("./x/y.theme", &err);
	ck_assert_str_eq(p, "./x/y.theme"); /* a path is taken as given */
	free(p);

	/* A missing theme: the message names it and every place searched. */
	ck_assert_int_eq(xp_theme_load("no-such-theme", &t, &err), -1);
	static const char looked[] = "no theme named 'no-such-theme' (looked in /nonexistent-xpool-check, ";
	ck_assert_msg(strncmp(err.msg, looked, sizeof looked - 1) == 0, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent-xpool-check/config/xpool/themes"));
	ck_assert_ptr_nonnull(strstr(err.msg, "/themes, "));
	ck_assert_ptr_nonnull(strstr(err.msg, XP_DATADIR "/themes"));
	ck_assert_ptr_nonnull(strstr(err.msg, "./no-such-theme.theme"));
	ck_assert_int_eq(xp_theme_load("", &t, &err), -1);
	ck_assert_str_eq(err.msg, "empty theme name");
	/* A missing path says so. */
	ck_assert_int_eq(xp_theme_load("./nope/x.theme", &t, &err), -1);
	ck_assert_str_eq(err.msg, "./nope/x.theme: No such file or directory");
	/* "default" is built in, found or not. */
	ck_assert_int_eq(xp_theme_load("default", &t, &err), 0);
	ck_assert_str_eq(t.name, "default");

	/* The list: sorted, unique, every shipped theme, default once. */
	char **names;
	size_t n = xp_theme_list(&names);
	for (size_t i = 0; i + 1 < n; i++)
		ck_assert_int_lt(strcmp(names[i], names[i + 1]), 0);
	for (size_t k = 0; k < N_SHIPPED; k++) {
		bool found = false;
		for (size_t i = 0; i < n; i++)
			found |= strcmp(names[i], shipped[k]) == 0;
		ck_assert_msg(found, "%s not listed", shipped[k]);
	}
	xp_theme_list_free(names, n);

	/* Earlier directories win; parse errors name the file found. */
	char *dir = theme_dir("dark.theme", "name = shadow\nok = blue\nfail = nocolour\n");
	char *env = xp_asprintf("%s:themes", dir);
	isolate(env);
	ck_assert_int_eq(xp_theme_load("dark", &t, &err), -1);
	char *want = xp_asprintf("%s/dark.theme:3: fail: bad colour 'nocolour'", dir);
	ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
	free(want);
	free(env);
	theme_dir_remove(dir, "dark.theme");

	dir = theme_dir("zz-local.theme", "ok = blue\n");
	env = xp_asprintf("%s:themes", dir);
	isolate(env);
	ck_assert_int_eq(xp_theme_load("zz-local", &t, &err), 0);
	ck_assert_str_eq(t.name, "zz-local");
	n = xp_theme_list(&names);
	ck_assert_str_eq(names[n - 1], "zz-local");
	xp_theme_list_free(names, n);
	free(env);
	theme_dir_remove(dir, "zz-local.theme");
	/* Without XPOOL_THEME_PATH, "default" is still listed. */
	isolate(NULL);
	n = xp_theme_list(&names);
	bool has_default = false;
	for (size_t i = 0; i < n; i++)
		has_default |= strcmp(names[i], "default") == 0;
	ck_assert(has_default);
	xp_theme_list_free(names, n);
}
END_TEST

START_TEST(util_steps)
{
	ck_assert_int_eq(xp_role_for_util(0), XP_ROLE_UTIL_0);
	ck_assert_int_eq(xp_role_for_util(19.999), XP_ROLE_UTIL_0);
	ck_assert_int_eq(xp_role_for_util(20), XP_ROLE_UTIL_20);
	ck_assert_int_eq(xp_role_for_util(39.9), XP_ROLE_UTIL_20);
	ck_assert_int_eq(xp_role_for_util(40), XP_ROLE_UTIL_40);
	ck_assert_int_eq(xp_role_for_util(59.99), XP_ROLE_UTIL_40);
	ck_assert_int_eq(xp_role_for_util(60), XP_ROLE_UTIL_60);
	ck_assert_int_eq(xp_role_for_util(79.99), XP_ROLE_UTIL_60);
	ck_assert_int_eq(xp_role_for_util(80), XP_ROLE_UTIL_80);
	ck_assert_int_eq(xp_role_for_util(100), XP_ROLE_UTIL_80);
	ck_assert_int_eq(xp_role_for_util(250), XP_ROLE_UTIL_80);
	ck_assert_int_eq(xp_role_for_util(-5), XP_ROLE_UTIL_0);
	ck_assert_int_eq(xp_role_for_util(NAN), XP_ROLE_UTIL_0);
	ck_assert_int_eq(xp_role_for_util(INFINITY), XP_ROLE_UTIL_80);
}
END_TEST

START_TEST(apply_mono)
{
	struct xp_theme t;
	struct xp_err err = {{0}};
	/* Before any apply: the default's attributes, bars reversed. */
	ck_assert_int_eq(xp_theme_attr(XP_ROLE_SELECTED), (int)(A_BOLD | A_REVERSE));
	xp_theme_default(&t);
	/* No colour: no ncurses colour calls at all, so this runs without a terminal. */
	xp_theme_apply(&t, false);
	ck_assert(!xp_theme_has_colour());
	ck_assert_int_eq(xp_theme_attr(XP_ROLE_SELECTED), (int)(A_BOLD | A_REVERSE));
	ck_assert_int_eq(xp_theme_attr(XP_ROLE_STATUS), (int)A_REVERSE);
	ck_assert_int_eq(xp_theme_attr(XP_ROLE_OK), (int)A_NORMAL);
	ck_assert_int_eq(xp_theme_attr(XP_ROLE_FAIL), (int)A_BOLD);
	ck_assert_int_eq(xp_theme_attr(-1), (int)A_NORMAL);
	ck_assert_int_eq(xp_theme_attr(XP_ROLE_COUNT), (int)A_NORMAL);
	ck_assert_int_eq(xp_theme_load("themes/mono.theme", &t, &err), 0);
	xp_theme_apply(&t, false);
	ck_assert_str_eq(xp_theme_current()->name, "mono");
	ck_assert_int_eq(xp_theme_attr(XP_ROLE_SELECTED), (int)A_REVERSE);
	ck_assert_int_eq(xp_theme_attr(XP_ROLE_UTIL_80), (int)(A_REVERSE | A_BOLD));
	ck_assert_int_eq(xp_theme_attr(XP_ROLE_UTIL_0), (int)A_DIM);
	/* An underlined bar is marked already; a bold one is not. */
	ck_assert_int_eq(parse("header = underline\nstatus = bold\n", &t, &err), 0);
	xp_theme_apply(&t, false);
	ck_assert_int_eq(xp_theme_attr(XP_ROLE_HEADER), (int)A_UNDERLINE);
	ck_assert_int_eq(xp_theme_attr(XP_ROLE_STATUS), (int)(A_BOLD | A_REVERSE));
}
END_TEST

/* Opens a screen on a terminal type writing to /dev/null; NULL when the terminfo entry is missing. */
static SCREEN *fake_screen(const char *term, FILE **out, FILE **in)
{
	*out = fopen("/dev/null", "w");
	*in = fopen("/dev/null", "r");
	ck_assert(*out && *in);
	SCREEN *s = newterm(term, *out, *in);
	if (!s) {
		fclose(*out);
		fclose(*in);
	}
	return s;
}

static void close_screen(SCREEN *s, FILE *out, FILE *in)
{
	endwin();
	delscreen(s);
	fclose(out);
	fclose(in);
}

START_TEST(apply_colour)
{
	struct xp_theme t;
	struct xp_err err = {{0}};
	ck_assert_int_eq(parse("ok = color208/yellow, default, bold\nfail = brightred, color22\n"
			       "selected = red, blue\n", &t, &err), 0);
	FILE *out, *in;
	SCREEN *s = fake_screen("xterm-256color", &out, &in);
	if (!s) {
		fprintf(stderr, "check_theme: no xterm-256color terminfo; colour checks skipped\n");
		return;
	}
	xp_theme_apply(&t, true);
	ck_assert(xp_theme_has_colour());
	ck_assert_int_ge(COLORS, 256);
	short fg, bg;
	int a = xp_theme_attr(XP_ROLE_OK);
	ck_assert_int_eq(a & (int)A_COLOR, (int)COLOR_PAIR(XP_ROLE_OK + 1));
	ck_assert(a & (int)A_BOLD);
	ck_assert_int_eq(pair_content(XP_ROLE_OK + 1, &fg, &bg), OK);
	ck_assert_int_eq(fg, 208);
	ck_assert_int_eq(bg, -1);
	ck_assert_int_eq(pair_content(XP_ROLE_FAIL + 1, &fg, &bg), OK);
	ck_assert_int_eq(fg, 9);
	ck_assert_int_eq(bg, 22);
	/* With colour, a bar without attributes keeps its colours and gets no reverse. */
	ck_assert_int_eq(xp_theme_attr(XP_ROLE_SELECTED) & (int)A_REVERSE, 0);
	close_screen(s, out, in);

	/* 8 colours: the fallbacks. */
	s = fake_screen("xterm", &out, &in);
	if (!s)
		return;
	xp_theme_apply(&t, true);
	ck_assert_int_eq(COLORS, 8);
	ck_assert_int_eq(pair_content(XP_ROLE_OK + 1, &fg, &bg), OK);
	ck_assert_int_eq(fg, COLOR_YELLOW);
	ck_assert_int_eq(pair_content(XP_ROLE_FAIL + 1, &fg, &bg), OK);
	ck_assert_int_eq(fg, COLOR_RED);
	ck_assert_int_eq(bg, COLOR_BLACK); /* colour 22 (#005f00) is nearer black than xterm's green */
	/* --no-color on a colour terminal: attributes only. */
	xp_theme_apply(&t, false);
	ck_assert_int_eq(xp_theme_attr(XP_ROLE_OK), (int)A_BOLD);
	ck_assert_int_eq(xp_theme_attr(XP_ROLE_SELECTED), (int)A_REVERSE);
	close_screen(s, out, in);
}
END_TEST

/* ---- the `theme` command ---- */

/* What the fake console was asked to apply ("" when nothing). */
static char fake_applied[64];
static int fake_ui_theme(struct xp_ctx *ctx, const char *name, struct xp_err *err)
{
	(void)ctx;
	if (strcmp(name, "mono") == 0)
		return xp_errf(err, "cannot switch now");
	snprintf(fake_applied, sizeof fake_applied, "%s", name);
	return 0;
}

/* Runs one `theme ...` line on ctx (after setup), capturing output and errors. */
static int run_theme(const char *line, const char *ctx_theme, bool console, bool json, char **out, char **errs)
{
	static const struct xp_cmd_entry *const table[] = {&xp_cmd_theme_entry, NULL};
	size_t ol, el;
	FILE *o = open_memstream(out, &ol), *e = open_memstream(errs, &el);
	struct xp_ctx ctx;
	xp_ctx_init(&ctx, o, e);
	ctx.theme = ctx_theme ? strdup(ctx_theme) : NULL;
	ctx.json = json;
	if (console)
		ctx.ui_theme = fake_ui_theme;
	int argc;
	char **argv;
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_cmd_split(line, &argc, &argv, &err), 0);
	const struct xp_cmd_entry *entry = xp_cmd_find_in(table, argv[0], &err);
	ck_assert_ptr_nonnull(entry);
	struct xp_args a;
	ck_assert_msg(xp_cmd_parse(&ctx, entry, argc, argv, &a, &err) == 0, "%s", err.msg);
	int rc = entry->exec(&ctx, &a);
	if (console && rc == 0)
		ck_assert_str_eq(ctx.theme, argv[1]); /* remembered for the next listing */
	free(a.argv);
	xp_cmd_split_free(argc, argv);
	xp_ctx_free(&ctx);
	fclose(o);
	fclose(e);
	return rc;
}

START_TEST(command)
{
	char *out, *err;
	isolate("themes");
	ck_assert_str_eq(xp_cmd_theme_entry.name, "theme");
	ck_assert_str_eq(xp_cmd_theme_entry.usage, "[NAME|PATH]");

	ck_assert_int_eq(run_theme("theme", NULL, false, false, &out, &err), 0);
	static const char listing[] = "  colorblind\n  dark\n* default\n  high-contrast\n  mono\n";
	ck_assert_msg(strncmp(out, listing, sizeof listing - 1) == 0, "%s", out);
	ck_assert_str_eq(err, "");
	free(out);
	free(err);

	ck_assert_int_eq(run_theme("theme", "dark.theme", false, false, &out, &err), 0);
	ck_assert_ptr_nonnull(strstr(out, "* dark\n"));
	ck_assert_ptr_nonnull(strstr(out, "  default\n"));
	free(out);
	free(err);
	/* By path: the file it names is marked. */
	ck_assert_int_eq(run_theme("theme", "./themes/mono.theme", false, false, &out, &err), 0);
	ck_assert_ptr_nonnull(strstr(out, "* mono\n"));
	ck_assert_ptr_null(strstr(out, "* default"));
	free(out);
	free(err);

	ck_assert_int_eq(run_theme("theme high-contrast", NULL, false, false, &out, &err), 0);
	char *want = xp_asprintf("theme high-contrast: ok (%d roles set)\n", XP_ROLE_COUNT);
	ck_assert_str_eq(out, want);
	free(want);
	free(out);
	free(err);

	/* In the console: the callback applies it. */
	fake_applied[0] = '\0';
	ck_assert_int_eq(run_theme("theme dark", NULL, true, false, &out, &err), 0);
	ck_assert_str_eq(out, "theme dark\n");
	ck_assert_str_eq(fake_applied, "dark");
	free(out);
	free(err);
	ck_assert_int_eq(run_theme("theme mono", NULL, true, false, &out, &err), XP_EXIT_ERROR);
	ck_assert_str_eq(err, "xpool: theme: cannot switch now\n");
	free(out);
	free(err);

	/* A bad file: the error names file and line, nothing is applied. */
	char *dir = theme_dir("broken.theme", "name = broken\n\nwarn = yellow, bold, blink, color9\n");
	char *line = xp_asprintf("theme %s/broken.theme", dir);
	fake_applied[0] = '\0';
	ck_assert_int_eq(run_theme(line, NULL, true, false, &out, &err), XP_EXIT_ERROR);
	want = xp_asprintf("xpool: theme: %s/broken.theme:3: warn: unknown attribute 'color9'", dir);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
	ck_assert_str_eq(fake_applied, "");
	ck_assert_str_eq(out, "");
	free(want);
	free(line);
	free(out);
	free(err);
	theme_dir_remove(dir, "broken.theme");

	ck_assert_int_eq(run_theme("theme nothing-like-it", NULL, false, false, &out, &err), XP_EXIT_ERROR);
	ck_assert_ptr_nonnull(strstr(err, "xpool: theme: no theme named 'nothing-like-it' (looked in "));
	free(out);
	free(err);

	/* --json: every theme with its path, exactly one current. */
	ck_assert_int_eq(run_theme("theme", "colorblind", false, true, &out, &err), 0);
	json_error_t je;
	json_t *doc = json_loads(out, 0, &je);
	ck_assert_msg(doc != NULL, "%s: %s", je.text, out);
	json_t *arr = json_object_get(doc, "themes");
	ck_assert(json_is_array(arr));
	ck_assert_int_ge(json_array_size(arr), N_SHIPPED);
	int current = 0;
	for (size_t i = 0; i < json_array_size(arr); i++) {
		json_t *e = json_array_get(arr, i);
		ck_assert(json_is_string(json_object_get(e, "name")));
		ck_assert(json_is_string(json_object_get(e, "path")) || json_is_null(json_object_get(e, "path")));
		if (json_is_true(json_object_get(e, "current"))) {
			current++;
			ck_assert_str_eq(json_string_value(json_object_get(e, "name")), "colorblind");
			const char *p = json_string_value(json_object_get(e, "path"));
			ck_assert_ptr_nonnull(p);
			ck_assert_ptr_nonnull(strstr(p, "themes/colorblind.theme"));
		}
	}
	ck_assert_int_eq(current, 1);
	json_decref(doc);
	free(out);
	free(err);

	/* --json on a check: what was loaded. */
	ck_assert_int_eq(run_theme("theme dark", NULL, false, true, &out, &err), 0);
	doc = json_loads(out, 0, &je);
	ck_assert_msg(doc != NULL, "%s: %s", je.text, out);
	ck_assert_str_eq(json_string_value(json_object_get(doc, "name")), "dark");
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "roles_set")), XP_ROLE_COUNT);
	ck_assert(json_is_false(json_object_get(doc, "applied")));
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(doc, "path")), "themes/dark.theme"));
	json_decref(doc);
	free(out);
	free(err);
	/* -q: nothing on success. */
	ck_assert_int_eq(run_theme("theme -q mono", NULL, false, false, &out, &err), 0);
	ck_assert_str_eq(out, "");
	ck_assert_str_eq(err, "");
	free(out);
	free(err);
}
END_TEST

/* Bidirectional controls in drawn text (an agent's error, a file name) are '?' on the screen,
 * as control bytes are, and the text still ends where the caller said. */
START_TEST(draw_masks_bidi)
{
	FILE *out, *in;
	setlocale(LC_ALL, "C.UTF-8");
	SCREEN *s = fake_screen("xterm", &out, &in);
	if (!s)
		return;
	WINDOW *w = newwin(2, 20, 0, 0);
	int end = xp_draw_put(w, 0, 0, 20, XP_ROLE_NORMAL, "ab\xe2\x80\xae" "exe.txt\x1b" "[2Jz", 0);
	char got[64] = "";
	mvwinnstr(w, 0, 0, got, 19);
	ck_assert_msg(strncmp(got, "ab?exe.txt?[2Jz", 15) == 0, "%s", got);
	ck_assert_int_eq(end, 15);
	/* C1 controls and bytes that are no UTF-8 too; good UTF-8 is drawn as it is. */
	end = xp_draw_put(w, 1, 0, 20, XP_ROLE_NORMAL, "\xc2\x9b" "1m\x9b" "2m caf\xc3\xa9", 0);
	ck_assert_int_eq(end, 11);
	wchar_t wide[32] = {0};
	mvwinnwstr(w, 1, 0, wide, 11);
	ck_assert_msg(wcscmp(wide, L"?1m?2m caf\u00e9") == 0, "%ls", wide);
	/* A bidi control's '?' takes a column the raw text did not: still cut at maxx. */
	end = xp_draw_put(w, 1, 0, 4, XP_ROLE_NORMAL, "\xe2\x81\xa6\xe2\x81\xa6" "abcdef", 0);
	ck_assert_int_eq(end, 4);
	delwin(w);
	close_screen(s, out, in);
	setlocale(LC_ALL, "C");
}
END_TEST

XP_DEFINE_SUITE(theme,
	{"core",
	 .tests = {role_names, parse_good, parse_bad, shipped_themes, default_matches_file,
		   load_and_search, util_steps, apply_mono, apply_colour, command, draw_masks_bidi}})
