/* styled_doc.h: lines of text made of runs in theme roles, built once and drawn many times
 * (a view's result pane: coloured words without re-formatting on every frame). */
#ifndef XP_STYLED_DOC_H
#define XP_STYLED_DOC_H

#include <curses.h>
#include <stddef.h>

/* One run of text in one role. */
struct xp_sdoc_seg {
	char *text;
	int role; /* enum xp_role */
};

/* One line: runs drawn left to right. */
struct xp_sdoc_line {
	struct xp_sdoc_seg *segs;
	size_t n, cap;
};

/* A document: lines top to bottom. */
struct xp_sdoc {
	struct xp_sdoc_line *lines;
	size_t n, cap;
};

/* Appends an empty line and returns it (valid until the next one is added). */
struct xp_sdoc_line *xp_sdoc_line(struct xp_sdoc *d);
/* Appends a run to line l. */
void xp_sdoc_add(struct xp_sdoc_line *l, int role, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Frees the document's contents (the struct itself is the caller's) and empties it. */
void xp_sdoc_free(struct xp_sdoc *d);
/* Draws line l (NULL: a blank line) at row y from column x, clipped before maxx, blanks after it. */
void xp_sdoc_draw(WINDOW *w, int y, int x, int maxx, const struct xp_sdoc_line *l);
/* Same, with the line scrolled left by its first xoff columns (a document wider than the screen). */
void xp_sdoc_draw_from(WINDOW *w, int y, int x, int maxx, const struct xp_sdoc_line *l, int xoff);
/* Columns of the document's widest line, for sideways scrolling. */
int xp_sdoc_width(const struct xp_sdoc *d);

#endif
