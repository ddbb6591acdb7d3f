/* styled_doc.c: lines of text in theme roles (styled_doc.h). */
#include "styled_doc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "theme.h"
#include "xp.h"

struct xp_sdoc_line *xp_sdoc_line(struct xp_sdoc *d)
{
	xp_grow(&d->lines, sizeof *d->lines, d->n, &d->cap);
	struct xp_sdoc_line *l = &d->lines[d->n++];
	memset(l, 0, sizeof *l);
	return l;
}

void xp_sdoc_add(struct xp_sdoc_line *l, int role, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s;
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	xp_grow(&l->segs, sizeof *l->segs, l->n, &l->cap);
	l->segs[l->n++] = (struct xp_sdoc_seg){s ? s : xp_strdup(""), role};
}

void xp_sdoc_free(struct xp_sdoc *d)
{
	for (size_t i = 0; i < d->n; i++) {
		for (size_t j = 0; j < d->lines[i].n; j++)
			free(d->lines[i].segs[j].text);
		free(d->lines[i].segs);
	}
	free(d->lines);
	memset(d, 0, sizeof *d);
}

void xp_sdoc_draw(WINDOW *w, int y, int x, int maxx, const struct xp_sdoc_line *l)
{
	xp_sdoc_draw_from(w, y, x, maxx, l, 0);
}

void xp_sdoc_draw_from(WINDOW *w, int y, int x, int maxx, const struct xp_sdoc_line *l, int xoff)
{
	int col = 0, x0 = x, total = 0;
	for (size_t i = 0; l && i < l->n; i++)
		total += xp_draw_cols(l->segs[i].text);
	/* A line cut at the right edge ends in the mark, in the role of the run it cuts. */
	bool cut = total - xoff > maxx - x0 && maxx - x0 > 1;
	int last_role = XP_ROLE_NORMAL;
	for (size_t i = 0; l && i < l->n && x < maxx; i++) {
		int c = xp_draw_cols(l->segs[i].text);
		/* Runs wholly left of the scroll are skipped; the one it cuts starts part way. */
		if (col + c > xoff) {
			x = xp_draw_put(w, y, x, maxx, l->segs[i].role, l->segs[i].text, xoff > col ? xoff - col : 0);
			last_role = l->segs[i].role;
		}
		col += c;
	}
	if (cut)
		xp_draw_put(w, y, maxx - 1, maxx, last_role, xp_draw_ellipsis(), 0);
	xp_draw_fill(w, y, x, maxx, XP_ROLE_NORMAL);
}

int xp_sdoc_width(const struct xp_sdoc *d)
{
	int width = 0;
	for (size_t i = 0; i < d->n; i++) {
		int c = 0;
		for (size_t j = 0; j < d->lines[i].n; j++)
			c += xp_draw_cols(d->lines[i].segs[j].text);
		if (c > width)
			width = c;
	}
	return width;
}
