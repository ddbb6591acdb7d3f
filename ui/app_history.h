/* app_history.h: what the console does with its device history on each refresh: the first
 * time, load the last hour from the store's samples (read-only); every time, record the cluster. */
#ifndef XP_APP_HISTORY_H
#define XP_APP_HISTORY_H

#include <stdbool.h>
#include <time.h>

#include "history.h"
#include "history_json.h"
#include "ui.h"

/* Records the shown cluster into h at now (the key loop calls it after taking a poll). On the
 * first call with nodes, first adds the store's samples of the last hour (*loaded becomes true),
 * and, when XPOOL_HISTORY_FILL=SECONDS is set (tests, benchmarks), that many seconds of made-up
 * samples per device before now. */
void xp_app_history_take(struct xp_ui *ui, struct xp_history *h, bool *loaded, time_t now);

/* Adds the agents' samples a poll brought to h and frees them (the array too). */
void xp_app_history_batches(struct xp_history *h, struct xp_hist_batch *b, size_t n);

#endif
