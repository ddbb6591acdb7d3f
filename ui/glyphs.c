/* glyphs.c: UTF-8 and ASCII glyph sets, and the choice between them. */
#include "glyphs.h"

#include <langinfo.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "theme_file.h"

const struct xp_glyphs xp_glyphs_utf8 = {
	.utf8 = true,
	.hline = "\u2500", .vline = "\u2502",
	.tl = "\u250c", .tr = "\u2510", .bl = "\u2514", .br = "\u2518",
	.tee_down = "\u252c", .tee_up = "\u2534", .tee_right = "\u251c", .tee_left = "\u2524",
	.cross = "\u253c",
	.level = {"\u00b7", "\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"},
	.unknown = "\u25a0",
	.nohealth = "\u25a1",
	.held = "\u25a3",
	.fail = "\u2716",
	.warn = "!",
	.down = "\u2573",
	.stale = "\u2591",
	.group_open = "[", .group_close = "]",
	.ellipsis = "\u2026",
	.arrow = "\u203a",
	.tree_mid = "\u251c\u2500", .tree_last = "\u2514\u2500", .tree_pipe = "\u2502 ",
};

const struct xp_glyphs xp_glyphs_ascii = {
	.utf8 = false,
	.hline = "-", .vline = "|",
	.tl = "+", .tr = "+", .bl = "+", .br = "+",
	.tee_down = "+", .tee_up = "+", .tee_right = "+", .tee_left = "+", .cross = "+",
	.level = {".", "1", "2", "3", "4", "5", "6", "7", "8"},
	.unknown = "#",
	.nohealth = "-", /* unknown reads "-" everywhere */
	.held = "u",
	.fail = "X",
	.warn = "!",
	.down = "x",
	.stale = "?",
	.group_open = "[", .group_close = "]",
	.ellipsis = "~",
	.arrow = ">",
	.tree_mid = "|-", .tree_last = "`-", .tree_pipe = "| ",
};

/* Each kind has a glyph of its own, so that every cell reads without colour (NO_COLOR, a
 * monochrome terminal): a down or unreachable node's cells never look like idle ones, nor a
 * device whose health is not known like a healthy one. */
const struct xp_glyph_cell xp_glyph_cells[] = {
	{"util", offsetof(struct xp_glyphs, level), 9, -1, "utilization 0 to 100 %, by eighths"},
	{"ok", offsetof(struct xp_glyphs, unknown), 1, XP_ROLE_OK, "healthy, utilization not known"},
	{"unknown", offsetof(struct xp_glyphs, nohealth), 1, XP_ROLE_DIM, "health and utilization not known"},
	{"held", offsetof(struct xp_glyphs, held), 1, XP_ROLE_UTIL_80, "in use (a job or pod holds it), utilization not known"},
	{"warn", offsetof(struct xp_glyphs, warn), 1, XP_ROLE_WARN, "health warning"},
	{"fail", offsetof(struct xp_glyphs, fail), 1, XP_ROLE_FAIL, "failed"},
	{"stale", offsetof(struct xp_glyphs, stale), 1, XP_ROLE_WARN, "node unreachable: its last data, not current"},
	{"down", offsetof(struct xp_glyphs, down), 1, XP_ROLE_FAIL, "node down: the device cannot be used"},
	{"group", offsetof(struct xp_glyphs, group_open), 2, XP_ROLE_DIM, "around the devices of one affinity group"},
	{NULL, 0, 0, 0, NULL},
};

const char *xp_glyph_at(const struct xp_glyphs *g, size_t offset, int i)
{
	const char *const *p = (const char *const *)(const void *)((const char *)g + offset);
	return p[i];
}

const struct xp_glyphs *xp_glyphs_pick(bool force_ascii)
{
	if (force_ascii)
		return &xp_glyphs_ascii;
	const char *cs = nl_langinfo(CODESET);
	bool utf8 = cs && (strcasecmp(cs, "UTF-8") == 0 || strcasecmp(cs, "utf8") == 0);
	return utf8 ? &xp_glyphs_utf8 : &xp_glyphs_ascii;
}

int xp_glyph_level(double pct)
{
	if (!(pct > 0))
		return 0;
	if (pct >= 100)
		return 8;
	/* 1..8 for anything above zero, so a busy-but-light device never looks idle. */
	int l = 1 + (int)(pct * 8 / 100);
	return l > 8 ? 8 : l;
}
