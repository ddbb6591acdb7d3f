/* glyphs.h: the characters the console draws with: UTF-8 box drawing and blocks,
 * or plain ASCII when the locale is not UTF-8 (LANG=C) or --ascii is given. */
#ifndef XP_GLYPHS_H
#define XP_GLYPHS_H

#include <stdbool.h>
#include <stddef.h>

/* A glyph set; every member is a NUL-terminated string one column wide. */
struct xp_glyphs {
	bool utf8;
	const char *hline, *vline;          /* ─ │ */
	const char *tl, *tr, *bl, *br;      /* ┌ ┐ └ ┘ */
	const char *tee_down, *tee_up, *tee_right, *tee_left, *cross; /* ┬ ┴ ├ ┤ ┼ */
	const char *level[9];               /* utilization: " ", ▁ .. █ */
	const char *unknown;                /* a device whose utilization is not known: ■ */
	const char *fail, *warn;            /* device cells for failed and warned health */
	const char *down;                   /* a device of a node that is down: ╳ (x) */
	const char *stale;                  /* a device of an unreachable node, last data stale: ░ (?) */
	const char *group_open, *group_close; /* around an affinity group of device cells */
	const char *ellipsis;               /* … */
	const char *arrow;                  /* › in breadcrumbs */
	const char *tree_mid, *tree_last, *tree_pipe; /* ├─ └─ │  (two columns each) */
};

/* One kind of device cell, for a legend: the glyph's member, the role (theme_file.h) it is drawn
 * in, and what it means. Every cell glyph the map draws has an entry in xp_glyph_cells. */
struct xp_glyph_cell {
	const char *name;    /* short name: "fail", "down" */
	size_t off;          /* offsetof the member of struct xp_glyphs holding the glyph */
	int role;            /* enum xp_role it is drawn in */
	const char *meaning; /* one line */
};

/* The device cells, in the order a legend lists them; ends with a NULL name. */
extern const struct xp_glyph_cell xp_glyph_cells[];
/* The glyph of a cell kind in set g. */
const char *xp_glyph_cell_str(const struct xp_glyphs *g, const struct xp_glyph_cell *c);

/* The UTF-8 set. */
extern const struct xp_glyphs xp_glyphs_utf8;
/* The ASCII set. */
extern const struct xp_glyphs xp_glyphs_ascii;
/* Picks the set: ASCII when forced or when the locale's codeset is not UTF-8 (call after setlocale). */
const struct xp_glyphs *xp_glyphs_pick(bool force_ascii);
/* The level glyph (0-8) for a utilization percentage. */
int xp_glyph_level(double pct);

#endif
