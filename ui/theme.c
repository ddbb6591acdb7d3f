/* theme.c: applying a theme with ncurses (the file format and search path are
 * src/cmd/theme_file.c, which the command line uses without a terminal). */
#include "theme.h"

#include <curses.h>
#include <stdbool.h>
#include <string.h>

/* The current theme and each role's ncurses attribute; the console draws from one thread. */
static struct {
	bool applied;
	bool colour;
	struct xp_theme theme;
	int attr[XP_ROLE_COUNT];
	short fg[XP_ROLE_COUNT], bg[XP_ROLE_COUNT]; /* the colours sent for each role */
	int on[XP_ROLE_COUNT][XP_ROLE_COUNT];       /* xp_theme_attr_on's pairs, made on first use */
	int next_pair;
} cur;

static int curses_attrs(unsigned a)
{
	chtype r = A_NORMAL;
	if (a & XP_ATTR_BOLD)
		r |= A_BOLD;
	if (a & XP_ATTR_DIM)
		r |= A_DIM;
	if (a & XP_ATTR_UNDERLINE)
		r |= A_UNDERLINE;
	if (a & XP_ATTR_REVERSE)
		r |= A_REVERSE;
	if (a & XP_ATTR_BLINK)
		r |= A_BLINK;
#ifdef A_ITALIC
	if (a & XP_ATTR_ITALIC)
		r |= A_ITALIC;
#endif
	if (a & XP_ATTR_STANDOUT)
		r |= A_STANDOUT;
	return (int)r;
}

/* The colour to send for a preferred value v with fallback v8, given the terminal's COLORS. */
static short pick(short v, short v8, int colors)
{
	if (v < 0)
		return -1;
	/* 16-255 mean the xterm palette only on 256-colour terminals (88-colour ones differ). */
	if (colors >= 256 || (v < 16 && v < colors))
		return v;
	return v8;
}

/* Without colour, the bars and the cursor row must still stand out: a colour theme marks them
 * with a background, which is gone, and bold alone does not show where a bar or the cursor is.
 * So they get reverse video unless the theme already marks the whole line itself. */
static unsigned mono_attrs(int role, unsigned a)
{
	bool bar = role == XP_ROLE_SELECTED || role == XP_ROLE_TAB_ACTIVE || role == XP_ROLE_STATUS ||
		   role == XP_ROLE_HEADER;
	if (bar && !(a & (XP_ATTR_REVERSE | XP_ATTR_STANDOUT | XP_ATTR_UNDERLINE)))
		a |= XP_ATTR_REVERSE;
	return a;
}

static void attrs_mono(const struct xp_theme *t, int *attr)
{
	for (int r = 0; r < XP_ROLE_COUNT; r++)
		attr[r] = curses_attrs(mono_attrs(r, t->roles[r].attrs));
}

void xp_theme_apply(const struct xp_theme *t, bool colour)
{
	cur.theme = *t;
	cur.applied = true;
	cur.colour = colour && has_colors() && start_color() == OK;
	memset(cur.on, 0, sizeof cur.on);
	cur.next_pair = XP_ROLE_COUNT + 1;
	if (!cur.colour) {
		attrs_mono(t, cur.attr);
		return;
	}
	/* Without default-colour support, -1 is not a colour: use white on black, the common default. */
	bool defaults = use_default_colors() == OK;
	for (int r = 0; r < XP_ROLE_COUNT; r++) {
		const struct xp_style *st = &t->roles[r];
		short fg = pick(st->fg, st->fg8, COLORS), bg = pick(st->bg, st->bg8, COLORS);
		if (!defaults) {
			fg = fg < 0 ? COLOR_WHITE : fg;
			bg = bg < 0 ? COLOR_BLACK : bg;
		}
		int a = curses_attrs(st->attrs);
		cur.fg[r] = fg;
		cur.bg[r] = bg;
		if (r + 1 < COLOR_PAIRS && init_pair((short)(r + 1), fg, bg) == OK)
			a |= (int)COLOR_PAIR(r + 1);
		else
			a = curses_attrs(mono_attrs(r, st->attrs)); /* too few pairs: keep it visible */
		cur.attr[r] = a;
	}
}

int xp_theme_attr(int role)
{
	if (role < 0 || role >= XP_ROLE_COUNT)
		return (int)A_NORMAL;
	if (!cur.applied) {
		/* Before any xp_theme_apply: the default theme's attributes, no colour. */
		struct xp_theme t;
		int attr[XP_ROLE_COUNT];
		xp_theme_default(&t);
		attrs_mono(&t, attr);
		return attr[role];
	}
	return cur.attr[role];
}

int xp_theme_attr_on(int role, int bar)
{
	if (role < 0 || role >= XP_ROLE_COUNT || bar < 0 || bar >= XP_ROLE_COUNT)
		return xp_theme_attr(role);
	if (!cur.applied || !cur.colour) {
		/* Attributes only: the bar's own (reverse video) with the role's bold or dim. */
		struct xp_theme t;
		xp_theme_default(&t);
		const struct xp_theme *th = cur.applied ? &cur.theme : &t;
		return curses_attrs(mono_attrs(bar, th->roles[bar].attrs) | th->roles[role].attrs);
	}
	if (!cur.on[bar][role]) {
		/* The role's foreground on the bar's background: one more pair, made once. */
		short bg = cur.bg[bar] >= 0 ? cur.bg[bar] : cur.bg[role];
		int a = curses_attrs(cur.theme.roles[role].attrs | cur.theme.roles[bar].attrs);
		if (cur.next_pair < COLOR_PAIRS && init_pair((short)cur.next_pair, cur.fg[role], bg) == OK)
			a |= (int)COLOR_PAIR(cur.next_pair++);
		else
			a = cur.attr[role];
		cur.on[bar][role] = a ? a : (int)A_NORMAL;
	}
	return cur.on[bar][role];
}

const struct xp_theme *xp_theme_current(void)
{
	if (!cur.applied) {
		xp_theme_default(&cur.theme);
		attrs_mono(&cur.theme, cur.attr);
		cur.applied = true;
	}
	return &cur.theme;
}

bool xp_theme_has_colour(void)
{
	return cur.applied && cur.colour;
}
