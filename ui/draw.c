/* draw.c: text drawing shared by the console frame and its views (draw.h).
 *
 * Views lay out by code points (glyphs are one column by contract, and model
 * strings are ASCII in practice); the frame measures with wcwidth. */
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "draw.h"

#include "format.h"
#include "theme.h"

int xp_draw_cols(const char *s)
{
	int c = 0;
	for (; *s; s++)
		c += ((unsigned char)*s & 0xc0) != 0x80;
	return c;
}

size_t xp_draw_bytes(const char *s, int cols)
{
	size_t i = 0;
	for (int c = 0; s[i]; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && c++ == cols)
			break;
	return i;
}

/* Control characters (from hostile snapshots, odd hostnames or notes) become '?' so
 * that they can neither move the cursor nor take two columns. */
int xp_draw_put(WINDOW *w, int y, int x, int maxx, int role, const char *s, int skip)
{
	if (skip > 0)
		s += xp_draw_bytes(s, skip);
	if (x >= maxx || !*s)
		return x;
	size_t n = xp_draw_bytes(s, maxx - x);
	char buf[1024];
	/* xp_draw_bytes counts lead bytes only, so a run of stray continuation bytes is
	 * unbounded: cap by bytes, backing off to a character boundary. */
	if (n >= sizeof buf) {
		n = sizeof buf - 1;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	/* Control bytes, C1 controls, bytes that are no UTF-8 and bidirectional controls (which
	 * would reorder what follows on the screen: a file name or an agent's error can carry
	 * them) are drawn as '?' (xp_unsafe_len). A bidi control is zero columns wide and '?'
	 * one, so the result is measured again. */
	memcpy(buf, s, n);
	buf[n] = '\0';
	xp_mask_controls(buf);
	buf[xp_draw_bytes(buf, maxx - x)] = '\0';
	wattrset(w, xp_theme_attr(role));
	mvwaddstr(w, y, x, buf);
	return x + xp_draw_cols(buf);
}

void xp_draw_fill(WINDOW *w, int y, int x, int maxx, int role)
{
	static const char blanks[] = "                                                                ";
	wattrset(w, xp_theme_attr(role));
	while (x < maxx) {
		int n = maxx - x < (int)sizeof blanks - 1 ? maxx - x : (int)sizeof blanks - 1;
		mvwaddnstr(w, y, x, blanks, n);
		x += n;
	}
}

/* Decodes the character at s (left bytes remain): returns its byte length and sets
 * *cw to its wcwidth, or returns 0 for a byte that does not decode (st is reset). */
static size_t next_char(const char *s, size_t left, mbstate_t *st, int *cw)
{
	wchar_t wc;
	size_t n = mbrtowc(&wc, s, left, st);
	if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
		memset(st, 0, sizeof *st);
		return 0;
	}
	*cw = wcwidth(wc);
	return n;
}

int xp_draw_width(const char *s)
{
	int w = 0;
	mbstate_t st;
	memset(&st, 0, sizeof st);
	size_t left = strlen(s);
	while (left) {
		int cw;
		size_t n = next_char(s, left, &st, &cw);
		if (n == 0) {
			n = 1;
			w++;
		} else {
			w += cw > 0 ? cw : 0;
		}
		s += n;
		left -= n;
	}
	return w;
}

/* One process, one console, one glyph set: the mark is set once, read from the draw thread. */
static const char *ellipsis_mark = "~";

void xp_draw_set_ellipsis(const char *ellipsis)
{
	ellipsis_mark = ellipsis ? ellipsis : "~";
}

const char *xp_draw_ellipsis(void)
{
	return ellipsis_mark;
}

const char *xp_draw_cut(const char *s, int width, int how, const char *ellipsis, char *buf, size_t len)
{
	if (!len)
		return buf;
	buf[0] = '\0';
	if (!s || width <= 0)
		return buf;
	int cols = xp_draw_cols(s);
	if (cols <= width) {
		snprintf(buf, len, "%s", s);
		return buf;
	}
	int keep = width - xp_draw_cols(ellipsis);
	if (keep < 0) {
		/* No room even for the mark: the start of the text says more than half a mark. */
		snprintf(buf, len, "%.*s", (int)xp_draw_bytes(s, width), s);
		return buf;
	}
	/* Columns kept before and after the mark; the middle cut favours the tail, which is where
	 * ids of one family differ (driver and runtime versions). */
	int head = how == XP_CUT_END ? keep : how == XP_CUT_START ? 0 : keep * 2 / 5;
	int tail = keep - head;
	const char *t = s + xp_draw_bytes(s, cols - tail);
	snprintf(buf, len, "%.*s%s%s", (int)xp_draw_bytes(s, head), s, ellipsis, tail ? t : "");
	return buf;
}

int xp_draw_clip_cut(WINDOW *w, int y, int x, int width, const char *s, int how, const char *ellipsis)
{
	char buf[1024];
	return xp_draw_clip(w, y, x, width, xp_draw_cut(s, width, how, ellipsis, buf, sizeof buf));
}

int xp_draw_clip(WINDOW *w, int y, int x, int width, const char *s)
{
	if (width <= 0)
		return 0;
	wmove(w, y, x);
	int cols = 0;
	const char *p = s;
	mbstate_t st;
	memset(&st, 0, sizeof st);
	while (*p && cols < width) {
		/* The frame's text (header, status line, messages, a source's error) quotes names
		 * and replies from outside: each control, C1 control and bidirectional control is
		 * one '?', as in xp_draw_put; ncurses would pass a C1 or bidi character on as it is. */
		size_t b = xp_unsafe_len(p);
		if (b) {
			waddch(w, '?');
			p += b;
			cols++;
			memset(&st, 0, sizeof st);
			continue;
		}
		int cw;
		size_t n = next_char(p, strlen(p), &st, &cw);
		if (n == 0) {
			waddch(w, '?');
			p++;
			cols++;
			continue;
		}
		if (cw < 0)
			cw = 1;
		if (cols + cw > width)
			break;
		waddnstr(w, p, (int)n);
		p += n;
		cols += cw;
	}
	return cols;
}
