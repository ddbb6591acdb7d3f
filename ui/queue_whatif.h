/* queue_whatif.h: the queues view's what-if panel: a scenario (drain the node under view 1's
 * cursor, or add N nodes of a kind) run against the baseline over the store's jobs on a
 * thread of its own, so that the key loop stays responsive; Esc cancels a run. The panel
 * shows each queue's wait p50 and p95, baseline -> scenario. */
#ifndef XP_QUEUE_WHATIF_H
#define XP_QUEUE_WHATIF_H

#include <curses.h>

#include "queue_data.h"
#include "view.h"

struct xp_qwhatif;

/* A panel over the view's data d (read when a run starts; d may change after). */
struct xp_qwhatif *xp_qwhatif_new(const struct xp_qdata *d);
/* Cancels a run, waits for its thread, frees the panel; NULL is fine. */
void xp_qwhatif_free(struct xp_qwhatif *w);
/* Rows the panel wants, at most max. */
int xp_qwhatif_height(const struct xp_qwhatif *w, int max);
/* Draws the panel into r. */
void xp_qwhatif_draw(struct xp_qwhatif *w, WINDOW *win, struct xp_rect r, const struct xp_glyphs *g);
/* Takes the panel's keys (x drain, + add, Esc cancels a run, the N:KIND line while typed);
 * XP_REACT_UNHANDLED for the rest. */
int xp_qwhatif_key(struct xp_qwhatif *w, struct xp_ui *ui, int key);
/* Takes a finished run's results from its thread (the key loop calls it often). */
int xp_qwhatif_tick(struct xp_qwhatif *w, struct xp_ui *ui);

#endif
