/* theme_file.c: the theme file parser and the theme search path. Pure (no ncurses): the
 * `theme` command checks files with it without a terminal, the console (ui/theme.c) applies
 * what it returns, and the tests exercise it directly. */
#include "theme_file.h"

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* The Makefile passes the install prefix's data directory; this keeps a bare compile working. */
#ifndef XP_DATADIR
#define XP_DATADIR "/usr/local/share/xpool"
#endif

static const char *const role_names[XP_ROLE_COUNT] = {
	[XP_ROLE_NORMAL] = "normal",
	[XP_ROLE_HEADER] = "header",
	[XP_ROLE_TAB] = "tab",
	[XP_ROLE_TAB_ACTIVE] = "tab.active",
	[XP_ROLE_TITLE] = "title",
	[XP_ROLE_SELECTED] = "selected",
	[XP_ROLE_OK] = "ok",
	[XP_ROLE_WARN] = "warn",
	[XP_ROLE_FAIL] = "fail",
	[XP_ROLE_DIM] = "dim",
	[XP_ROLE_STATUS] = "status",
	[XP_ROLE_PROMPT] = "prompt",
	[XP_ROLE_BORDER] = "border",
	[XP_ROLE_MATCH] = "match",
	[XP_ROLE_UTIL_0] = "util.0",
	[XP_ROLE_UTIL_20] = "util.20",
	[XP_ROLE_UTIL_40] = "util.40",
	[XP_ROLE_UTIL_60] = "util.60",
	[XP_ROLE_UTIL_80] = "util.80",
	[XP_ROLE_LINK_FABRIC] = "link.fabric",
	[XP_ROLE_LINK_PIX] = "link.pix",
	[XP_ROLE_LINK_PXB] = "link.pxb",
	[XP_ROLE_LINK_PHB] = "link.phb",
	[XP_ROLE_LINK_NODE] = "link.node",
	[XP_ROLE_LINK_SYS] = "link.sys",
};

const char *xp_role_name(int role)
{
	return role >= 0 && role < XP_ROLE_COUNT ? role_names[role] : NULL;
}

/* The basic colours, in ANSI order: their index is their colour number. */
static const char *const basic_names[8] = {"black", "red", "green", "yellow",
					   "blue", "magenta", "cyan", "white"};
enum { C_DEF = -1, C_BLACK, C_RED, C_GREEN, C_YELLOW, C_BLUE, C_MAGENTA, C_CYAN, C_WHITE };

/* A style from its preferred and fallback colours: S(fg, fg8, bg, bg8, attrs). */
#define S(fg, fg8, bg, bg8, a) {(fg), (bg), (fg8), (bg8), (a), false}
#define BOLD XP_ATTR_BOLD

/* themes/default.theme, transcribed; check_theme.c fails when the two drift apart. */
static const struct xp_style default_styles[XP_ROLE_COUNT] = {
	[XP_ROLE_NORMAL] = S(C_DEF, C_DEF, C_DEF, C_DEF, 0),
	[XP_ROLE_HEADER] = S(231, C_WHITE, 24, C_BLUE, BOLD),
	[XP_ROLE_TAB] = S(252, C_WHITE, 238, C_BLACK, 0),
	[XP_ROLE_TAB_ACTIVE] = S(16, C_BLACK, 81, C_CYAN, BOLD),
	[XP_ROLE_TITLE] = S(39, C_CYAN, C_DEF, C_DEF, BOLD),
	[XP_ROLE_SELECTED] = S(231, C_WHITE, 25, C_BLUE, BOLD),
	[XP_ROLE_OK] = S(40, C_GREEN, C_DEF, C_DEF, 0),
	[XP_ROLE_WARN] = S(214, C_YELLOW, C_DEF, C_DEF, BOLD),
	[XP_ROLE_FAIL] = S(196, C_RED, C_DEF, C_DEF, BOLD),
	[XP_ROLE_DIM] = S(245, C_WHITE, C_DEF, C_DEF, 0),
	[XP_ROLE_STATUS] = S(252, C_WHITE, 238, C_BLACK, 0),
	[XP_ROLE_PROMPT] = S(C_DEF, C_DEF, C_DEF, C_DEF, BOLD),
	[XP_ROLE_BORDER] = S(244, C_BLUE, C_DEF, C_DEF, 0),
	[XP_ROLE_MATCH] = S(16, C_BLACK, 220, C_YELLOW, BOLD),
	[XP_ROLE_UTIL_0] = S(242, C_BLUE, C_DEF, C_DEF, 0),
	[XP_ROLE_UTIL_20] = S(67, C_BLUE, C_DEF, C_DEF, BOLD),
	[XP_ROLE_UTIL_40] = S(33, C_CYAN, C_DEF, C_DEF, 0),
	[XP_ROLE_UTIL_60] = S(39, C_CYAN, C_DEF, C_DEF, BOLD),
	[XP_ROLE_UTIL_80] = S(45, C_WHITE, C_DEF, C_DEF, BOLD),
	[XP_ROLE_LINK_FABRIC] = S(46, C_GREEN, C_DEF, C_DEF, BOLD),
	[XP_ROLE_LINK_PIX] = S(43, C_CYAN, C_DEF, C_DEF, 0),
	[XP_ROLE_LINK_PXB] = S(38, C_CYAN, C_DEF, C_DEF, 0),
	[XP_ROLE_LINK_PHB] = S(33, C_BLUE, C_DEF, C_DEF, 0),
	[XP_ROLE_LINK_NODE] = S(141, C_MAGENTA, C_DEF, C_DEF, 0),
	[XP_ROLE_LINK_SYS] = S(245, C_WHITE, C_DEF, C_DEF, 0),
};

#undef S
#undef BOLD

void xp_theme_default(struct xp_theme *t)
{
	memset(t, 0, sizeof *t);
	snprintf(t->name, sizeof t->name, "default");
	memcpy(t->roles, default_styles, sizeof t->roles);
}

/* ---- Colours ---- */

/* xterm's RGB for colour n (0-255): the values the 256-colour palette is defined by. */
static void xterm_rgb(int n, int rgb[3])
{
	static const unsigned char base[16][3] = {
		{0, 0, 0}, {205, 0, 0}, {0, 205, 0}, {205, 205, 0},
		{0, 0, 238}, {205, 0, 205}, {0, 205, 205}, {229, 229, 229},
		{127, 127, 127}, {255, 0, 0}, {0, 255, 0}, {255, 255, 0},
		{92, 92, 255}, {255, 0, 255}, {0, 255, 255}, {255, 255, 255}};
	if (n < 16) {
		for (int i = 0; i < 3; i++)
			rgb[i] = base[n][i];
	} else if (n < 232) {
		int c = n - 16, v[3] = {c / 36, (c / 6) % 6, c % 6};
		for (int i = 0; i < 3; i++)
			rgb[i] = v[i] ? 55 + 40 * v[i] : 0;
	} else {
		rgb[0] = rgb[1] = rgb[2] = 8 + 10 * (n - 232);
	}
}

static long rgb_dist(const int a[3], const int b[3])
{
	long d = 0;
	for (int i = 0; i < 3; i++)
		d += (long)(a[i] - b[i]) * (a[i] - b[i]);
	return d;
}

/* The colour among [lo, hi] nearest to rgb (first one on a tie). */
static int nearest(const int rgb[3], int lo, int hi)
{
	int best = lo;
	long best_d = -1;
	for (int n = lo; n <= hi; n++) {
		int c[3];
		xterm_rgb(n, c);
		long d = rgb_dist(rgb, c);
		if (best_d < 0 || d < best_d) {
			best = n;
			best_d = d;
		}
	}
	return best;
}

/* The 8-colour stand-in for colour n: itself, its dark twin, or the nearest basic colour. */
static short fallback8(int n)
{
	if (n < 0)
		return C_DEF;
	if (n < 8)
		return (short)n;
	if (n < 16)
		return (short)(n - 8);
	int rgb[3];
	xterm_rgb(n, rgb);
	/* A grey is nearer xterm's yellow than its white by plain distance; keep greys grey. */
	if (rgb[0] == rgb[1] && rgb[1] == rgb[2]) {
		int black[3] = {0, 0, 0}, white[3];
		xterm_rgb(C_WHITE, white);
		return rgb_dist(rgb, black) <= rgb_dist(rgb, white) ? C_BLACK : C_WHITE;
	}
	return (short)nearest(rgb, 0, 7);
}

static bool word_is(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && strncasecmp(s, w, n) == 0;
}

static int basic_lookup(const char *s, size_t n)
{
	for (int i = 0; i < 8; i++)
		if (word_is(s, n, basic_names[i]))
			return i;
	return -1;
}

/* Parses one colour without a fallback (s[0..n)); sets *v and its computed fallback *v8.
 * Returns NULL, or why the text is not a colour. */
static const char *colour_plain(const char *s, size_t n, short *v, short *v8)
{
	int b;
	if (word_is(s, n, "default")) {
		*v = *v8 = C_DEF;
		return NULL;
	}
	if ((b = basic_lookup(s, n)) >= 0) {
		*v = *v8 = (short)b;
		return NULL;
	}
	if (n > 6 && strncasecmp(s, "bright", 6) == 0 && (b = basic_lookup(s + 6, n - 6)) >= 0) {
		*v = (short)(b + 8);
		*v8 = (short)b;
		return NULL;
	}
	size_t pre = n > 6 && strncasecmp(s, "colour", 6) == 0 ? 6 : n > 5 && strncasecmp(s, "color", 5) == 0 ? 5 : 0;
	if (pre) {
		int num = 0;
		/* At most three digits: "color0000000300" is a typo, not colour 44. */
		if (n - pre > 3)
			return "colour numbers run from 0 to 255";
		for (size_t i = pre; i < n; i++) {
			if (s[i] < '0' || s[i] > '9')
				return "expected a number after 'color'";
			num = num * 10 + (s[i] - '0');
		}
		if (num > 255)
			return "colour numbers run from 0 to 255";
		*v = (short)num;
		*v8 = fallback8(num);
		return NULL;
	}
	if (s[0] == '#') {
		int rgb[3];
		if (n != 7)
			return "expected #rrggbb, six hex digits";
		for (int i = 0; i < 3; i++) {
			int hi = xp_hex_digit(s[1 + 2 * i]), lo = xp_hex_digit(s[2 + 2 * i]);
			if (hi < 0 || lo < 0)
				return "expected #rrggbb, six hex digits";
			rgb[i] = hi * 16 + lo;
		}
		/* Colours 0-15 are whatever the terminal's palette says; only 16-255 are fixed. */
		int c = nearest(rgb, 16, 255);
		*v = (short)c;
		*v8 = fallback8(c);
		return NULL;
	}
	return "expected default, a colour name (black red green yellow blue magenta cyan white), "
	       "bright+name, colorN or #rrggbb";
}

static const char *skip_blank(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

static const char *trim_end(const char *s, const char *end)
{
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	return end;
}

/* Parses "COLOUR[/FALLBACK]" (a trimmed, NUL-terminated field). Returns NULL or why not. */
static const char *colour_parse(const char *s, short *v, short *v8)
{
	const char *slash = strchr(s, '/'), *end = s + strlen(s);
	const char *main_end = slash ? trim_end(s, slash) : end;
	if (main_end == s)
		return "missing colour before '/'";
	const char *why = colour_plain(s, (size_t)(main_end - s), v, v8);
	if (why || !slash)
		return why;
	const char *fb = skip_blank(slash + 1, end);
	short f, f8;
	if (fb == end || colour_plain(fb, (size_t)(end - fb), &f, &f8) || f > 7)
		return "the fallback after '/' must be default or one of the 8 basic colours";
	*v8 = f;
	return NULL;
}

/* ---- Attributes ---- */

static const struct {
	const char *name;
	unsigned bit;
} attr_names[] = {
	{"bold", XP_ATTR_BOLD},       {"dim", XP_ATTR_DIM},       {"underline", XP_ATTR_UNDERLINE},
	{"reverse", XP_ATTR_REVERSE}, {"blink", XP_ATTR_BLINK},   {"italic", XP_ATTR_ITALIC},
	{"standout", XP_ATTR_STANDOUT},
};

static unsigned attr_lookup(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof attr_names / sizeof attr_names[0]; i++)
		if (word_is(s, n, attr_names[i].name))
			return attr_names[i].bit;
	return 0;
}

/* ORs the blank-separated attribute words of a field into *bits; on an unknown word returns
 * it (pointer into s) with its length in *bad_len, else NULL. */
static const char *attrs_parse(const char *s, unsigned *bits, size_t *bad_len)
{
	const char *end = s + strlen(s);
	for (const char *w = skip_blank(s, end); w < end; w = skip_blank(w, end)) {
		const char *we = w;
		while (we < end && *we != ' ' && *we != '\t')
			we++;
		unsigned b = attr_lookup(w, (size_t)(we - w));
		if (!b) {
			*bad_len = (size_t)(we - w);
			return w;
		}
		*bits |= b;
		w = we;
	}
	return NULL;
}

/* ---- Parsing ---- */

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	char *e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*e = '\0';
	return s;
}

/* Cuts a comment off the line: a '#' that is the first non-blank character, or that follows
 * a blank and is not followed by a hex digit ("ok = #00ff00  # healthy"). A '#' before a hex
 * digit stays, so that a mistyped colour ("#12345g") is reported rather than dropped. */
static void strip_comment(char *s)
{
	char *first = s + strspn(s, " \t");
	if (*first == '#') {
		*first = '\0';
		return;
	}
	for (char *c = first; *c; c++)
		if (*c == '#' && (c[-1] == ' ' || c[-1] == '\t') && xp_hex_digit(c[1]) < 0) {
			*c = '\0';
			return;
		}
}

/* True when s[0..n) is well-formed UTF-8 (no overlongs, surrogates or values past U+10FFFF). */
static bool utf8_valid(const unsigned char *s, size_t n)
{
	for (size_t i = 0, k; i < n; i += k)
		if (!(k = xp_utf8_len(s + i, n - i)))
			return false;
	return true;
}

/* Parses a style value: [FG [, BG]] [, ATTR...] with attributes separated by blanks or commas. */
static int style_parse(const struct xp_where *p, const char *key, const char *value, struct xp_style *st)
{
	char buf[XP_THEME_MAX_LINE + 1];
	snprintf(buf, sizeof buf, "%s", value);
	*st = (struct xp_style){C_DEF, C_DEF, C_DEF, C_DEF, 0, true};
	int colours = 0;
	bool in_attrs = false;
	char *field = buf;
	for (;;) {
		char *comma = strchr(field, ',');
		if (comma)
			*comma = '\0';
		char *f = trim(field);
		if (!*f)
			return xp_where_errf(p, "%s: empty item in '%.200s' (items are separated by single commas)", key,
				    value);
		short c = C_DEF, c8 = C_DEF;
		const char *why = in_attrs ? "" : colour_parse(f, &c, &c8);
		if (!why && colours < 2) {
			if (colours++ == 0) {
				st->fg = c;
				st->fg8 = c8;
			} else {
				st->bg = c;
				st->bg8 = c8;
			}
		} else if (!why) {
			return xp_where_errf(p, "%s: '%.100s' is a third colour in '%.200s' (a style is FG, BG, then attributes)",
				    key, f, value);
		} else {
			size_t bad_len = 0;
			const char *bad = attrs_parse(f, &st->attrs, &bad_len);
			/* A first word that is no attribute, where a colour may still stand, was meant as a colour. */
			if (bad && bad == f && !in_attrs && colours < 2)
				return xp_where_errf(p, "%s: bad colour '%.100s' in '%.200s': %s", key, f, value, why);
			if (bad)
				return xp_where_errf(p, "%s: unknown attribute '%.*s' in '%.200s' (expected bold, dim, underline, "
					    "reverse, blink, italic or standout)", key, (int)(bad_len > 100 ? 100 : bad_len),
					    bad, value);
			in_attrs = true;
		}
		if (!comma)
			break;
		field = comma + 1;
	}
	return 0;
}

/* The theme name a file gets when it has no "name =" line: its base name without ".theme". */
static void name_from_file(const char *file, char *name, size_t size)
{
	const char *b = strrchr(file, '/');
	b = b ? b + 1 : file;
	size_t n = strlen(b);
	if (n > 6 && strcmp(b + n - 6, ".theme") == 0)
		n -= 6;
	if (n == 0) {
		b = "unnamed";
		n = strlen(b);
	}
	if (n >= size)
		n = size - 1;
	memcpy(name, b, n);
	name[n] = '\0';
}

/* Applies one line (NUL-terminated, at most XP_THEME_MAX_LINE bytes) to t. seen[] holds the
 * line that first set each role (index XP_ROLE_COUNT: "name"), to catch duplicates. */
static int line_parse(const struct xp_where *p, char *line, struct xp_theme *t, int *seen)
{
	strip_comment(line);
	char *s = trim(line);
	if (!*s)
		return 0;
	char *eq = strchr(s, '=');
	if (!eq)
		return xp_where_errf(p, "expected 'key = value', got '%.200s'", s);
	*eq = '\0';
	char *key = trim(s), *value = trim(eq + 1);
	if (!*key)
		return xp_where_errf(p, "missing key before '= %.200s'", value);
	int idx = XP_ROLE_COUNT;
	if (strcmp(key, "name") != 0) {
		for (idx = 0; idx < XP_ROLE_COUNT && strcmp(role_names[idx], key) != 0; idx++)
			;
		if (idx == XP_ROLE_COUNT)
			return xp_where_errf(p, "unknown key '%.100s' (expected name or a role: normal, header, tab, "
				    "tab.active, title, selected, ok, warn, fail, dim, status, prompt, border, match, "
				    "util.0-util.80, link.*)", key);
	}
	if (seen[idx])
		return xp_where_errf(p, "duplicate key '%.100s' (first set on line %d)", key, seen[idx]);
	seen[idx] = p->line;
	if (!*value)
		return xp_where_errf(p, "%.100s: missing value", key);
	if (idx == XP_ROLE_COUNT) {
		if (strlen(value) >= sizeof t->name)
			return xp_where_errf(p, "name: '%.100s' is longer than %zu bytes", value, sizeof t->name - 1);
		for (const char *c = value; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				return xp_where_errf(p, "name: control character in '%.100s'", value);
		snprintf(t->name, sizeof t->name, "%s", value);
		return 0;
	}
	return style_parse(p, key, value, &t->roles[idx]);
}

int xp_theme_parse(const char *text, size_t len, const char *file, struct xp_theme *out, struct xp_err *err)
{
	if (!file)
		file = "<theme>";
	if (len > XP_THEME_MAX_BYTES)
		return xp_errf(err, "%s: file is %zu bytes, more than the %d allowed", file, len, XP_THEME_MAX_BYTES);
	/* Parse into a copy so that a bad file leaves the caller's theme as it was. */
	struct xp_theme t;
	xp_theme_default(&t);
	name_from_file(file, t.name, sizeof t.name);
	int seen[XP_ROLE_COUNT + 1] = {0};
	struct xp_where p = {file, 0, err};
	size_t pos = 0;
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		pos = 3; /* a byte order mark some editors write */
	while (pos < len) {
		p.line++;
		const char *start = text + pos;
		const char *nl = memchr(start, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - start) : len - pos;
		pos += n + (nl ? 1 : 0);
		if (n && start[n - 1] == '\r')
			n--;
		if (n > XP_THEME_MAX_LINE)
			return xp_where_errf(&p, "line longer than %d bytes", XP_THEME_MAX_LINE);
		if (memchr(start, '\0', n))
			return xp_where_errf(&p, "NUL byte in the line (a theme is UTF-8 text)");
		if (!utf8_valid((const unsigned char *)start, n))
			return xp_where_errf(&p, "invalid UTF-8 in the line");
		char line[XP_THEME_MAX_LINE + 1];
		memcpy(line, start, n);
		line[n] = '\0';
		if (line_parse(&p, line, &t, seen) < 0)
			return -1;
	}
	*out = t;
	return 0;
}

/* ---- Finding theme files ---- */

struct dirs {
	char **v;
	size_t n, cap;
};

/* Adds a directory once, by its real path when it exists (so build/san/../../themes and
 * ./themes count once); a missing one is kept as given, for the "looked in" message. */
static void dirs_add(struct dirs *d, const char *dir)
{
	if (!dir || !*dir)
		return;
	char *rp = realpath(dir, NULL);
	char *p = rp ? rp : xp_strdup(dir);
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->v[i], p) == 0) {
			free(p);
			return;
		}
	xp_grow(&d->v, sizeof *d->v, d->n, &d->cap);
	d->v[d->n++] = p;
}

static void dirs_free(struct dirs *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i]);
	free(d->v);
}

/* The theme directories in search order: XPOOL_THEME_PATH, the user's, the build tree's, the installed. */
static void dirs_get(struct dirs *d)
{
	memset(d, 0, sizeof *d);
	const char *env = getenv("XPOOL_THEME_PATH");
	if (env) {
		char *copy = xp_strdup(env), *save = NULL;
		for (char *tok = strtok_r(copy, ":", &save); tok; tok = strtok_r(NULL, ":", &save))
			dirs_add(d, tok);
		free(copy);
	}
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	char *user = NULL;
	/* The XDG spec says to ignore a relative XDG_CONFIG_HOME. */
	if (xdg && xdg[0] == '/')
		user = xp_asprintf("%s/xpool/themes", xdg);
	else if (home && *home)
		user = xp_asprintf("%s/.config/xpool/themes", home);
	dirs_add(d, user);
	free(user);
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			char *a = xp_asprintf("%s/themes", exe), *b = xp_asprintf("%s/../../themes", exe);
			dirs_add(d, a);
			dirs_add(d, b);
			free(a);
			free(b);
		}
	}
	dirs_add(d, XP_DATADIR "/themes");
}

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

char *xp_theme_find(const char *name_or_path, struct xp_err *err)
{
	if (strchr(name_or_path, '/'))
		return xp_strdup(name_or_path);
	size_t n = strlen(name_or_path);
	/* "dark.theme" means the theme dark: people type the file name they saw. */
	if (n > 6 && strcmp(name_or_path + n - 6, ".theme") == 0)
		n -= 6;
	if (n == 0) {
		xp_errf(err, "empty theme name");
		return NULL;
	}
	struct dirs d;
	dirs_get(&d);
	for (size_t i = 0; i < d.n; i++) {
		char *path = xp_asprintf("%s/%.*s.theme", d.v[i], (int)n, name_or_path);
		if (is_file(path)) {
			dirs_free(&d);
			return path;
		}
		free(path);
	}
	char where[sizeof err->msg] = "";
	size_t used = 0;
	for (size_t i = 0; i < d.n && used < sizeof where; i++)
		used += (size_t)snprintf(where + used, sizeof where - used, "%s%s", i ? ", " : "", d.v[i]);
	xp_errf(err, "no theme named '%.*s' (looked in %s; a path needs a '/', as in ./%.*s.theme)",
		(int)(n > 64 ? 64 : n), name_or_path, where, (int)(n > 64 ? 64 : n), name_or_path);
	dirs_free(&d);
	return NULL;
}

static bool is_builtin_name(const char *name)
{
	return strcmp(name, "default") == 0 || strcmp(name, "default.theme") == 0;
}

int xp_theme_load(const char *name_or_path, struct xp_theme *t, struct xp_err *err)
{
	char *path = xp_theme_find(name_or_path, err);
	if (!path) {
		/* "default" works even when no theme directory was installed. */
		if (is_builtin_name(name_or_path)) {
			xp_theme_default(t);
			return 0;
		}
		return -1;
	}
	size_t len = 0;
	char *text = xp_read_file(path, XP_THEME_MAX_BYTES, &len, err);
	int rc = text ? xp_theme_parse(text, len, path, t, err) : -1;
	free(text);
	free(path);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t xp_theme_list(char ***names)
{
	char **v = NULL;
	size_t n = 0, cap = 0;
	struct dirs d;
	dirs_get(&d);
	xp_grow(&v, sizeof *v, n, &cap);
	v[n++] = xp_strdup("default"); /* always there: built in */
	for (size_t i = 0; i < d.n; i++) {
		DIR *dir = opendir(d.v[i]);
		if (!dir)
			continue;
		struct dirent *e;
		while ((e = readdir(dir))) {
			size_t len = strlen(e->d_name);
			if (len <= 6 || e->d_name[0] == '.' || strcmp(e->d_name + len - 6, ".theme") != 0)
				continue;
			char *path = xp_asprintf("%s/%s", d.v[i], e->d_name);
			bool ok = is_file(path);
			free(path);
			if (!ok)
				continue;
			char *name = xp_strndup(e->d_name, len - 6);
			bool dup = false;
			for (size_t k = 0; k < n && !dup; k++)
				dup = strcmp(v[k], name) == 0;
			if (dup) {
				free(name);
				continue;
			}
			xp_grow(&v, sizeof *v, n, &cap);
			v[n++] = name;
		}
		closedir(dir);
	}
	dirs_free(&d);
	qsort(v, n, sizeof *v, cmp_str);
	*names = v;
	return n;
}

void xp_theme_list_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int xp_theme_roles_set(const struct xp_theme *t)
{
	int n = 0;
	for (int r = 0; r < XP_ROLE_COUNT; r++)
		n += t->roles[r].set;
	return n;
}

int xp_role_for_util(double pct)
{
	if (isnan(pct) || pct < 20)
		return XP_ROLE_UTIL_0;
	if (pct < 40)
		return XP_ROLE_UTIL_20;
	if (pct < 60)
		return XP_ROLE_UTIL_40;
	if (pct < 80)
		return XP_ROLE_UTIL_60;
	return XP_ROLE_UTIL_80;
}
