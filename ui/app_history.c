/* app_history.c: feeding the console's device history (app_history.h). */
#include "app_history.h"

#include <math.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "store_history.h"
#include "theme.h"

/* XPOOL_HISTORY_FILL: a full history without waiting an hour (the RSS benchmark, tests). The
 * values wander around each device's current ones so a graph has something to draw. */
static void fill(struct xp_history *h, const struct xp_cluster *c, time_t now)
{
	const char *e = getenv("XPOOL_HISTORY_FILL");
	long secs = e ? strtol(e, NULL, 10) : 0;
	if (secs <= 0)
		return;
	if (secs > XP_HIST_SPAN_MAX)
		secs = XP_HIST_SPAN_MAX;
	int p = xp_history_period(h);
	for (time_t t = now - secs; t < now; t += p)
		for (size_t i = 0; i < c->n_nodes; i++) {
			const struct xp_node *n = c->nodes[i];
			for (size_t k = 0; k < n->n_devices; k++) {
				double v[XP_HIST_METRICS], w = sin((double)(t + (time_t)(i * 7 + k * 3)) / 97.0);
				for (int m = 0; m < XP_HIST_METRICS; m++) {
					double x = xp_hist_device_value(&n->devices[k], m);
					v[m] = isnan(x) ? x : x * (0.75 + 0.25 * w);
				}
				xp_history_add(h, n->name, (int)k, t, v);
			}
		}
}

void xp_app_history_batches(struct xp_history *h, struct xp_hist_batch *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		xp_hist_batch_apply(&b[i], h);
		xp_hist_batch_free(&b[i]);
	}
	free(b);
}

void xp_app_history_take(struct xp_ui *ui, struct xp_history *h, bool *loaded, time_t now)
{
	const struct xp_cluster *c = xp_ui_cluster(ui);
	if (!*loaded && c->n_nodes) {
		*loaded = true;
#ifdef __GLIBC__
		/* The rings (about 1 KiB a device) are allocated now: first hand back the pages the first
		 * load freed (reading a 10,000-node snapshot peaks at twice what it keeps), or the rings
		 * land among them, pin them, and the peak is both. */
		malloc_trim(0);
#endif
		struct xp_store *s = xp_ui_store(ui);
		struct xp_err err = {{0}};
		size_t added = 0;
		if (s && xp_store_history_load(s, h, c, now - XP_HIST_SPAN_MAX, &added, &err) < 0)
			xp_ui_message(ui, XP_ROLE_WARN, "history: %s", err.msg);
		fill(h, c, now);
		xp_history_feed(h, c, now);
#ifdef __GLIBC__
		/* And what the store's rows and the fill left. */
		malloc_trim(0);
#endif
		return;
	}
	xp_history_feed(h, c, now);
}
