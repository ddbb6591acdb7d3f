/* theme.h: applying a colour theme to the terminal. The roles, styles and the theme file
 * format are theme_file.h (src/cmd), which this includes, so views need one header. */
#ifndef XP_THEME_H
#define XP_THEME_H

#include <stdbool.h>

#include "theme_file.h"

/* The theme last given to xp_theme_apply (the built-in default before that). */
const struct xp_theme *xp_theme_current(void);
/* True when the current theme was applied with colour pairs (false: attributes only). */
bool xp_theme_has_colour(void);
/* Makes t the current theme on the terminal; colour false (NO_COLOR, --no-color, mono terminals) uses attributes only. */
void xp_theme_apply(const struct xp_theme *t, bool colour);
/* The ncurses attribute (colour pair and attributes) of a role under the current theme. */
int xp_theme_attr(int role);
/* A role's colour and attributes drawn on a bar (XP_ROLE_HEADER, XP_ROLE_STATUS): its
 * foreground on the bar's background, so a coloured word does not cut a hole in the bar. */
int xp_theme_attr_on(int role, int bar);

#endif
