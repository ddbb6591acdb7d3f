/* view_validation.c: view 4, validation: not built yet; says so and what will fill it. */
#include "placeholder.h"

static const char *const text[] = {
	"Validation: not built yet.",
	"",
	"This view will show the validation matrix: environments (vendor, model,",
	"driver) against workload cases, five layers per cell (discovered,",
	"schedulable, launches, executes, accepted) and the evidence behind each.",
	"`xpool validate matrix` will fill it.",
	NULL,
};

static void draw(void *st, struct xp_ui *ui, WINDOW *w, struct xp_rect r)
{
	(void)st;
	(void)ui;
	xp_placeholder_draw(w, r, text);
}

const struct xp_view xp_view_validation = {
	.name = "validation",
	.title = "Validation",
	.order = 4,
	.draw = draw,
};
