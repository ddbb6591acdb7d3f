/* theme_file.h: colour themes as data: the console's roles, the theme file format and where
 * theme files are found. Pure (no ncurses) so that the command line can check theme files;
 * ui/theme.h applies a theme to the terminal. */
#ifndef XP_THEME_FILE_H
#define XP_THEME_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "xp.h"

/* Largest theme file, and longest line in one, in bytes. */
#define XP_THEME_MAX_BYTES 65536
#define XP_THEME_MAX_LINE 1024

/* Every role a theme colours. The file keys are xp_role_name's spellings. */
enum xp_role {
	XP_ROLE_NORMAL,     /* "normal": body text */
	XP_ROLE_HEADER,     /* "header": the top line */
	XP_ROLE_TAB,        /* "tab": an inactive tab */
	XP_ROLE_TAB_ACTIVE, /* "tab.active": the current view's tab */
	XP_ROLE_TITLE,      /* "title": section titles and table headings */
	XP_ROLE_SELECTED,   /* "selected": the cursor row */
	XP_ROLE_OK,         /* "ok": healthy, pass, up */
	XP_ROLE_WARN,       /* "warn": degraded, warning, stale */
	XP_ROLE_FAIL,       /* "fail": failed, down, errors */
	XP_ROLE_DIM,        /* "dim": secondary text, unknown values */
	XP_ROLE_STATUS,     /* "status": the bottom status line */
	XP_ROLE_PROMPT,     /* "prompt": the ':' and '/' input lines */
	XP_ROLE_BORDER,     /* "border": box lines */
	XP_ROLE_MATCH,      /* "match": text matching the filter */
	XP_ROLE_UTIL_0,     /* "util.0": device utilization 0-19 % */
	XP_ROLE_UTIL_20,    /* "util.20": 20-39 % */
	XP_ROLE_UTIL_40,    /* "util.40": 40-59 % */
	XP_ROLE_UTIL_60,    /* "util.60": 60-79 % */
	XP_ROLE_UTIL_80,    /* "util.80": 80-100 % */
	XP_ROLE_LINK_FABRIC, /* "link.fabric": NV#, HCCS, XGMI, MLU links */
	XP_ROLE_LINK_PIX,   /* "link.pix" */
	XP_ROLE_LINK_PXB,   /* "link.pxb" */
	XP_ROLE_LINK_PHB,   /* "link.phb" */
	XP_ROLE_LINK_NODE,  /* "link.node" */
	XP_ROLE_LINK_SYS,   /* "link.sys" */
	XP_ROLE_COUNT
};

/* Attribute bits a style may carry (mapped to ncurses A_* when applied). */
enum xp_attr {
	XP_ATTR_BOLD = 1 << 0,
	XP_ATTR_DIM = 1 << 1,
	XP_ATTR_UNDERLINE = 1 << 2,
	XP_ATTR_REVERSE = 1 << 3,
	XP_ATTR_BLINK = 1 << 4,
	XP_ATTR_ITALIC = 1 << 5,
	XP_ATTR_STANDOUT = 1 << 6
};

/* One role's look. Colours are -1 (terminal default) or 0-255; the 8-colour
 * fallbacks (0-7 or -1) are used when the terminal has fewer than 256 colours. */
struct xp_style {
	short fg, bg;     /* preferred colours */
	short fg8, bg8;   /* 8-colour fallbacks */
	unsigned attrs;   /* enum xp_attr bits, used with and without colour */
	bool set;         /* the theme file named this role */
};

/* A theme: a name and a style for every role. */
struct xp_theme {
	char name[64];
	struct xp_style roles[XP_ROLE_COUNT];
};

/* The file key of a role ("tab.active"), or NULL when out of range. */
const char *xp_role_name(int role);
/* The built-in default theme (also what a theme file's unnamed roles inherit). */
void xp_theme_default(struct xp_theme *t);
/* Parses theme text; file names the source in errors ("FILE:LINE: ..."). Unnamed roles keep the default. */
int xp_theme_parse(const char *text, size_t len, const char *file, struct xp_theme *t, struct xp_err *err);
/* Finds a theme by NAME (searched in the theme directories) or by PATH (contains '/'), and parses it. */
int xp_theme_load(const char *name_or_path, struct xp_theme *t, struct xp_err *err);
/* Lists the names of the themes found in the theme directories (sorted, unique); caller frees. */
size_t xp_theme_list(char ***names);
/* Frees what xp_theme_list returned. */
void xp_theme_list_free(char **names, size_t n);
/* The file xp_theme_load would read for NAME (the first NAME.theme in search order; a trailing
 * ".theme" is ignored) or PATH (returned as given); caller frees. NULL with err listing the
 * directories searched when no such theme exists (the built-in "default" has no file). */
char *xp_theme_find(const char *name_or_path, struct xp_err *err);
/* How many roles the theme file named (style.set). */
int xp_theme_roles_set(const struct xp_theme *t);
/* The role for a utilization percentage (XP_ROLE_UTIL_0..80). */
int xp_role_for_util(double pct);

#endif
