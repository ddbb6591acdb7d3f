/* line_edit.c: a one-line text editor for form fields (line_edit.h). */
#include "line_edit.h"

#include <curses.h>
#include <string.h>

static bool cont(char c)
{
	return ((unsigned char)c & 0xc0) == 0x80;
}

void xp_ledit_start(struct xp_ledit *e, const char *text)
{
	size_t n = text ? strlen(text) : 0;
	if (n > XP_LEDIT_MAX) {
		/* Never stop inside a character. */
		n = XP_LEDIT_MAX;
		while (n && cont(text[n]))
			n--;
	}
	if (n)
		memcpy(e->text, text, n);
	e->text[n] = '\0';
	e->len = e->cur = n;
}

static size_t prev_char(const struct xp_ledit *e, size_t at)
{
	if (!at)
		return 0;
	do
		at--;
	while (at && cont(e->text[at]));
	return at;
}

static size_t next_char(const struct xp_ledit *e, size_t at)
{
	if (at >= e->len)
		return e->len;
	do
		at++;
	while (at < e->len && cont(e->text[at]));
	return at;
}

/* Removes bytes [from, to). */
static void cut(struct xp_ledit *e, size_t from, size_t to)
{
	memmove(e->text + from, e->text + to, e->len - to + 1);
	e->len -= to - from;
	e->cur = from;
}

int xp_ledit_key(struct xp_ledit *e, int key)
{
	switch (key) {
	case '\n':
	case '\r':
	case KEY_ENTER:
		return XP_LEDIT_DONE;
	case 27:
	case 3: /* Ctrl-C */
		return XP_LEDIT_CANCEL;
	case KEY_LEFT:
	case 2: /* Ctrl-B */
		e->cur = prev_char(e, e->cur);
		break;
	case KEY_RIGHT:
	case 6: /* Ctrl-F */
		e->cur = next_char(e, e->cur);
		break;
	case KEY_HOME:
	case 1: /* Ctrl-A */
		e->cur = 0;
		break;
	case KEY_END:
	case 5: /* Ctrl-E */
		e->cur = e->len;
		break;
	case KEY_BACKSPACE:
	case 127:
	case 8:
		if (e->cur)
			cut(e, prev_char(e, e->cur), e->cur);
		break;
	case KEY_DC:
	case 4: /* Ctrl-D */
		if (e->cur < e->len)
			cut(e, e->cur, next_char(e, e->cur));
		break;
	case 21: /* Ctrl-U */
		cut(e, 0, e->cur);
		break;
	case 11: /* Ctrl-K */
		e->text[e->cur] = '\0';
		e->len = e->cur;
		break;
	default:
		/* Bytes of UTF-8 text arrive one by one; control characters are not text. */
		if (key >= 32 && key < 256 && key != 127 && e->len < XP_LEDIT_MAX) {
			memmove(e->text + e->cur + 1, e->text + e->cur, e->len - e->cur + 1);
			e->text[e->cur++] = (char)key;
			e->len++;
		}
		break;
	}
	return XP_LEDIT_EDITING;
}

size_t xp_ledit_scroll(const struct xp_ledit *e, int width)
{
	if (width < 2)
		width = 2;
	/* Columns from the start to the cursor; keep one column for the cursor cell itself. */
	int cols = 0;
	for (size_t i = 0; i < e->cur; i++)
		cols += !cont(e->text[i]);
	size_t start = 0;
	while (cols > width - 1) {
		start = start < e->len ? start + 1 : start;
		while (start < e->len && cont(e->text[start]))
			start++;
		cols--;
	}
	return start;
}
