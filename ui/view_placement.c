/* view_placement.c: view 3, placement: not built yet; says so and what will fill it. */
#include "placeholder.h"

static const char *const text[] = {
	"Placement: not built yet.",
	"",
	"This view will edit or load a job spec, run a dry-run placement, highlight",
	"the chosen devices on the map and explain, node by node, why not elsewhere.",
	"`xpool place --dry-run -f job.json` will fill it.",
	NULL,
};

static void draw(void *st, struct xp_ui *ui, WINDOW *w, struct xp_rect r)
{
	(void)st;
	(void)ui;
	xp_placeholder_draw(w, r, text);
}

const struct xp_view xp_view_placement = {
	.name = "placement",
	.title = "Placement",
	.order = 3,
	.draw = draw,
};
