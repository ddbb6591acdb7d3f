/* ui.h: the console: entry point and what views may ask of the running app. */
#ifndef XP_UI_H
#define XP_UI_H

#include <stdbool.h>
#include <stddef.h>

#include "acks.h"
#include "cmd.h"
#include "events.h"
#include "filter.h"
#include "glyphs.h"
#include "history.h"
#include "model.h"
#include "store.h"

/* The running console (opaque to views). */
struct xp_ui;

/* Runs the console on the terminal until the user quits; returns an exit code.
 * Reads ctx's source options, delay, theme and ascii settings. */
int xp_ui_run(struct xp_ctx *ctx);

/* The cluster currently shown (never NULL while a view draws; may have no nodes). */
const struct xp_cluster *xp_ui_cluster(const struct xp_ui *ui);
/* A refresh that replaced the cluster: old (freed: compare it, never read it), its generation
 * then, and the positions of the new cluster whose node is not old's (the others are the same
 * nodes, shared). */
struct xp_ui_moved {
	const struct xp_cluster *old;
	uint64_t old_gen;
	const size_t *changed;
	size_t n_changed;
};
/* True, with m filled, while views hear of a refresh (on_data) whose cluster has the old one's
 * nodes in the same places, most of them the same: a kept index may follow it
 * (xp_place_index_update). False for any other new data. */
bool xp_ui_moved(const struct xp_ui *ui, struct xp_ui_moved *m);
/* The text of the `/` filter, "" when none. */
const char *xp_ui_filter(const struct xp_ui *ui);
/* The glyph set in use (UTF-8 or ASCII). */
const struct xp_glyphs *xp_ui_glyphs(const struct xp_ui *ui);
/* The discovery and health events seen so far. */
const struct xp_event_log *xp_ui_events(const struct xp_ui *ui);
/* Shows a one-line message in the status line in a theme role (XP_ROLE_FAIL for errors). */
void xp_ui_message(struct xp_ui *ui, int role, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Every device's recent past (history.h), fed on each refresh; never NULL while views draw. */
struct xp_history *xp_ui_history(const struct xp_ui *ui);
/* The database (opened read-only on first use from --db or the default path); NULL when there is
 * none yet, or after a message when it cannot be opened. */
struct xp_store *xp_ui_store(struct xp_ui *ui);
/* Records what the live sources of c show that the database does not (see xp_sync_if_changed):
 * 1 when it wrote, 0 when nothing was new or c is only files, -1 with err set. */
int xp_ui_sync(struct xp_ui *ui, const struct xp_cluster *c, struct xp_err *err);
/* The command context the console runs with (its cluster is the one shown): for code that
 * reads as a command does (the store's jobs through src/cmd/jobrun.h). */
struct xp_ctx *xp_ui_ctx(struct xp_ui *ui);
/* The node under the cursor of the first view (by order) that has one (view 1's map, or the
 * node it has open), or NULL. */
const char *xp_ui_selected_node(struct xp_ui *ui);
/* Runs a command line through the command table as the `:` prompt does, its output and errors
 * captured into *out and *errs (caller frees both; never NULL), then tells every view the data
 * may have changed (a write shows at once) without showing anything itself; returns the exit
 * code. */
int xp_ui_command(struct xp_ui *ui, const char *line, char **out, char **errs);
/* Opens node name in the first view (by order) that can (view 1's node page) and switches to
 * it; false, after a message in the status line, when none could. */
bool xp_ui_open_node(struct xp_ui *ui, const char *name);
/* The acknowledged and snoozed problems of the database (acks.h), read again after a command
 * or an audit row that may have changed them; *gen (when not NULL) moves each time they are. */
const struct xp_acks *xp_ui_acks(struct xp_ui *ui, uint64_t *gen);
struct xp_agent_snap;
/* The node agents' statuses as the refresh thread copied them after its last poll: when they
 * changed since *gen, a copy in *out (caller frees with xp_agent_snaps_free), *n of them, and
 * true; false otherwise. Never waits on a poll. */
bool xp_ui_agent_snaps(struct xp_ui *ui, uint64_t *gen, struct xp_agent_snap **out, size_t *n);
/* The clock problems are judged at (snooze ends): $XPOOL_NOW when set (tests), else now. */
time_t xp_ui_now(void);
/* True when text matches the filter's words (each a case-insensitive substring; always true
 * without a filter, or while it holds only an expression no word-only view can read). */
bool xp_ui_matches(const struct xp_ui *ui, const char *text);
/* The filter compiled for rows with these fields (filter.h; NULL: words only), NULL when there is
 * none; while the text does not parse, the last expression that did (the status line says why). */
const struct xp_filter *xp_ui_filter_expr(const struct xp_ui *ui, const struct xp_filter_field *fields);

#endif
