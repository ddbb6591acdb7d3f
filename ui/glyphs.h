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
	const char *unknown;                /* a healthy device whose utilization is not known: ■ */
	const char *nohealth;               /* a device whose health and utilization are not known: □ */
	const char *held;                   /* a device in use (an engine's job or pod, an allocation)
					     * whose utilization is not known: ▣ */
	const char *fail, *warn;            /* device cells for failed and warned health */
	const char *down;                   /* a device of a node that is down: ╳ (x) */
	const char *stale;                  /* a device of an unreachable node, last data stale: ░ (?) */
	const char *group_open, *group_close; /* around an affinity group of device cells */
	const char *ellipsis;               /* … */
	const char *arrow;                  /* › in breadcrumbs */
	const char *tree_mid, *tree_last, *tree_pipe; /* ├─ └─ │  (two columns each) */
};

/* One entry of the legend the `?` help draws: a device cell glyph of the map, in its colour.
 * Every cell glyph the map draws has an entry in xp_glyph_cells. */
struct xp_glyph_cell {
	const char *name;    /* short name: "fail", "down"; NULL ends the table */
	size_t offset;       /* offsetof(struct xp_glyphs, member): a const char * member */
	int count;           /* glyphs from there (the utilization ramp: 9), else 1 */
	int role;            /* the theme role it is drawn in; -1: by utilization, per glyph */
	const char *meaning; /* what it says, for the legend */
};
/* The map's device cells, in the order the legend lists them; ends with a NULL name. A new
 * cell glyph gets a row here, and the `?` legend shows it. */
extern const struct xp_glyph_cell xp_glyph_cells[];
/* The glyph at offset (a xp_glyph_cell's) plus i in a set. */
const char *xp_glyph_at(const struct xp_glyphs *g, size_t offset, int i);

/* The UTF-8 set. */
extern const struct xp_glyphs xp_glyphs_utf8;
/* The ASCII set. */
extern const struct xp_glyphs xp_glyphs_ascii;
/* Picks the set: ASCII when forced or when the locale's codeset is not UTF-8 (call after setlocale). */
const struct xp_glyphs *xp_glyphs_pick(bool force_ascii);
/* The level glyph (0-8) for a utilization percentage. */
int xp_glyph_level(double pct);

#endif
