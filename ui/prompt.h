/* prompt.h: the console's one-line `:` command prompt: GNU readline through its
 * callback interface inside ncurses (editing keys, history kept in a file, Tab
 * completion of command names, options and node names).
 *
 * readline keeps its state in globals: only one xp_prompt may exist at a time (free one
 * before creating the next), and nothing else in the process may use readline meanwhile.
 *
 * Calling protocol for the app:
 * - keypad off while the prompt is open, so arrow keys reach readline as the bytes the
 *   terminal sent (keys ncurses decoded anyway, KEY_UP and friends, are translated back);
 * - feed every byte wgetch returns; KEY_RESIZE is ignored here (relayout, then call
 *   xp_prompt_resize and xp_prompt_draw);
 * - after feeding 27 (Esc), xp_prompt_esc_pending is true: read the next key with a short
 *   timeout (30 ms) and feed it, ERR included: ERR (-1) right after Esc is a lone Esc and
 *   cancels, any other byte continues an escape sequence (arrows, Alt-keys);
 * - Ctrl-C (byte 3) cancels, so raw() (or ISIG off) lets it reach the prompt;
 * - the prompt draws into its row and leaves the window's cursor on the input: draw it
 *   last in a frame (xp_prompt_draw), then doupdate. Cursor visibility is the app's. */
#ifndef XP_PROMPT_H
#define XP_PROMPT_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>

struct xp_err;

/* What feeding a key did. */
enum xp_prompt_state {
	XP_PROMPT_EDITING, /* still typing */
	XP_PROMPT_DONE,    /* Enter: xp_prompt_line holds the line */
	XP_PROMPT_CANCEL   /* Esc, Ctrl-C, Enter on an empty line, Ctrl-D on an empty line */
};

/* Names to complete after the command name (node names); returns a count, fills *names (borrowed). */
typedef size_t (*xp_prompt_names_fn)(void *arg, const char *const **names);

struct xp_prompt;

/* Sets up readline for use inside ncurses and loads history from history_path (NULL: none). */
struct xp_prompt *xp_prompt_new(const char *history_path, xp_prompt_names_fn names, void *arg);
/* Saves history once (at most 1000 lines, mode 0600, in a folder of the user's own: files.h);
 * -1 with err when it cannot. */
int xp_prompt_save(struct xp_prompt *p, struct xp_err *err);
/* Saves history (xp_prompt_save, unless saved already) and frees the prompt. */
void xp_prompt_free(struct xp_prompt *p);
/* Opens the prompt on row y of w, width columns wide, showing prefix (":"). */
void xp_prompt_open(struct xp_prompt *p, WINDOW *w, int y, int width, const char *prefix);
/* True while the prompt is open. */
bool xp_prompt_active(const struct xp_prompt *p);
/* Feeds one key as wgetch returned it (keypad off while open); returns enum xp_prompt_state.
 * ERR (-1) after Esc cancels; ERR otherwise does nothing. After DONE or CANCEL the prompt is
 * closed; feeding a closed prompt returns CANCEL. */
int xp_prompt_feed(struct xp_prompt *p, int ch);
/* True after Esc while the prompt waits to see whether a sequence follows: feed the next
 * key read with a short timeout, or ERR if none came. */
bool xp_prompt_esc_pending(const struct xp_prompt *p);
/* Attributes (A_* | COLOR_PAIR) of the input row and of the completion list shown after it
 * (defaults A_NORMAL and A_DIM). */
void xp_prompt_set_attrs(struct xp_prompt *p, int line_attr, int hint_attr);
/* The line accepted by the last DONE (owned by the prompt, valid until the next open). */
const char *xp_prompt_line(const struct xp_prompt *p);
/* Redraws the prompt line (after a resize or a redraw of the screen) and places the cursor. */
void xp_prompt_draw(struct xp_prompt *p);
/* Moves the prompt to a new row and width after a resize. */
void xp_prompt_resize(struct xp_prompt *p, int y, int width);
/* The completions of text at position start of line, sorted, NULL-terminated (never NULL);
 * works whether or not the prompt is open. Caller frees each and the array. First word:
 * command names; a word starting with '-': --options of the command (and global ones);
 * an option's value: the values it lists (xp_opt.value), node names for a NODE, file names
 * for a FILE or PATH; `help`'s argument: command names; after a command with subcommands
 * (xp_cmd_entry.sub): their next word, then nothing; other words: node names. */
char **xp_prompt_complete(struct xp_prompt *p, const char *line, int start, const char *text);

#endif
