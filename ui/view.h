/* view.h: one console view (a tab). A view is one file, ui/view_NAME.c, that
 * defines `const struct xp_view xp_view_NAME`; the build lists those files, so
 * adding a view adds no line anywhere else. */
#ifndef XP_VIEW_H
#define XP_VIEW_H

#include <curses.h>

#include "ui.h"

/* A rectangle of the screen: top row, left column, height, width. */
struct xp_rect {
	int y, x, h, w;
};

/* What a key or click asks of the app (bit set). */
enum xp_reaction {
	XP_REACT_NONE = 0,
	XP_REACT_REDRAW = 1 << 0,   /* draw again */
	XP_REACT_REFRESH = 1 << 1,  /* re-read the data source now */
	XP_REACT_QUIT = 1 << 2,     /* leave the console */
	XP_REACT_UNHANDLED = 1 << 3 /* the view did not use the key: the app may */
};

/* One line of the `?` overlay: the keys and what they do. */
struct xp_view_key {
	const char *keys;
	const char *help;
};

/* A view. Every function pointer but draw may be NULL. */
struct xp_view {
	const char *name;  /* "topology": for `:view NAME` and messages */
	const char *title; /* "Topology": the tab label */
	int order;         /* tab number, 1-9; views are shown in this order */
	const struct xp_view_key *keys; /* its own keys, {NULL, NULL}-terminated */
	/* Makes the view's state; called once when the console starts. */
	void *(*create)(struct xp_ui *ui);
	/* Frees the state. */
	void (*destroy)(void *st);
	/* Draws into r of w (erase what it owns; do not refresh). */
	void (*draw)(void *st, struct xp_ui *ui, WINDOW *w, struct xp_rect r);
	/* Sees a key before the app's own keys (q, r, 1-9, :, /, ?): an inline editor must get
	 * every key; returns XP_REACT_UNHANDLED to let the app have it. */
	int (*pre_key)(void *st, struct xp_ui *ui, int key);
	/* Handles a key (ncurses KEY_* or a character); returns enum xp_reaction bits. */
	int (*on_key)(void *st, struct xp_ui *ui, int key);
	/* Handles a click at (y, x) relative to the body rectangle. */
	int (*on_click)(void *st, struct xp_ui *ui, int y, int x);
	/* Handles one mouse wheel notch over the body (dir -1 up, +1 down). */
	int (*on_wheel)(void *st, struct xp_ui *ui, int dir);
	/* Called after a new cluster replaced the old one (indexes may have moved). */
	void (*on_data)(void *st, struct xp_ui *ui);
	/* Breadcrumb of where the view is ("Topology > node7 > ACC3"), or NULL for the title. */
	const char *(*where)(void *st);
	/* True when the view is drilled in (Esc goes back inside the view, not to the app). */
	bool (*nested)(void *st);
	/* Writes where the list cursor is ("12 of 340") into buf for the status line, or returns
	 * NULL or "" when the view shows no list now. */
	const char *(*count)(void *st, char *buf, size_t len);
	/* Called on every turn of the key loop (about ten times a second, and after each key), so
	 * that work a view runs on a thread of its own shows as soon as it ends; returns enum
	 * xp_reaction bits. */
	int (*tick)(void *st, struct xp_ui *ui);
	/* The name of the node under the view's cursor, or NULL (xp_ui_selected_node asks). */
	const char *(*selected_node)(void *st);
	/* Applies one option of the view's command string (`:view topology --sort temp-`): key
	 * without dashes ("sort", "group", "metric", "select", "mode"), its value; returns 0, or -1
	 * with a message in err (unknown key, bad value). NULL: the view takes no options. */
	int (*set_opt)(void *st, struct xp_ui *ui, const char *key, const char *value, char *err, size_t errlen);
	/* Writes the view's own options as they are now (" --sort temp- --group rack"; "" for
	 * none) into buf: with the view's name and the filter, the command string that brings the
	 * view back (status line, bookmarks). NULL: none. */
	void (*opts)(void *st, char *buf, size_t len);
	/* The fields its rows offer to the `/` filter (filter.h), NULL: words only. */
	const struct xp_filter_field *filter_fields;
	/* The keys to list in `?` now, when they depend on the state (view 1 hides its action
	 * keys in read-only); NULL: keys. */
	const struct xp_view_key *(*keys_now)(void *st);
	/* Opens the node called name as Enter on it would (xp_ui_open_node asks; the fleet and
	 * problems views use it); false when the view cannot show it now (filtered out, gone). */
	bool (*open_node)(void *st, struct xp_ui *ui, const char *name);
};

#endif
