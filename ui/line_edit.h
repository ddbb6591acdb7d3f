/* line_edit.h: a one-line text editor for a form field inside a view (pure: keys in, text
 * out, no drawing), so that a field can be edited where it is shown without the `:` prompt,
 * whose history and completion are for commands. */
#ifndef XP_LINE_EDIT_H
#define XP_LINE_EDIT_H

#include <stdbool.h>
#include <stddef.h>

/* Longest text in bytes (a job spec string is at most 256, a path at most 4096). */
#define XP_LEDIT_MAX 4096

/* What a key did to the editor. */
enum xp_ledit_state {
	XP_LEDIT_EDITING, /* still typing */
	XP_LEDIT_DONE,    /* Enter: the text is the answer */
	XP_LEDIT_CANCEL   /* Esc or Ctrl-C: the old value stays */
};

/* The text being edited and the cursor, as a byte offset on a UTF-8 character boundary. */
struct xp_ledit {
	char text[XP_LEDIT_MAX + 1];
	size_t len, cur;
};

/* Starts editing text (NULL: empty), cursor at the end. */
void xp_ledit_start(struct xp_ledit *e, const char *text);
/* Applies one key (a byte or an ncurses KEY_* code): printable bytes insert, Left/Right,
 * Home/End and Ctrl-A/Ctrl-E move, Backspace and Delete remove a whole UTF-8 character,
 * Ctrl-U clears to the start, Ctrl-K to the end; returns enum xp_ledit_state. */
int xp_ledit_key(struct xp_ledit *e, int key);
/* First byte to show so that the cursor stays inside width columns (one per code point). */
size_t xp_ledit_scroll(const struct xp_ledit *e, int width);

#endif
