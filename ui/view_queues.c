/* view_queues.c: view 2, queues: not built yet; says so and what will fill it. */
#include "placeholder.h"

static const char *const text[] = {
	"Queues: not built yet.",
	"",
	"This view will list jobs and their states, waits and pending reasons, with",
	"quota bars per queue, read from Volcano, Kueue or Slurm (or simulated).",
	"Queues and their quotas are kept already (`xpool queue`; `:queue list` here",
	"shows them); jobs and the what-if simulator (`xpool whatif`) come next.",
	NULL,
};

static void draw(void *st, struct xp_ui *ui, WINDOW *w, struct xp_rect r)
{
	(void)st;
	(void)ui;
	xp_placeholder_draw(w, r, text);
}

const struct xp_view xp_view_queues = {
	.name = "queues",
	.title = "Queues",
	.order = 2,
	.draw = draw,
};
