/* fuzz_theme.c: theme files (themes/NAME.theme, `--theme PATH`, `:theme`): xp_theme_parse on the
 * text, as xp_theme_load hands it a file; every role a parsed theme holds must be a colour
 * ncurses can take. */
#include "fuzz.h"

#include <stdlib.h>

#include "theme_file.h"

static bool colour_ok(short c, short most)
{
	return c >= -1 && c <= most;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xp_theme t;
	struct xp_err err = {{0}};
	if (xp_theme_parse((const char *)data, size, "fuzz.theme", &t, &err) < 0) {
		if (!err.msg[0])
			abort(); /* a refusal must say why */
		return 0;
	}
	for (int r = 0; r < XP_ROLE_COUNT; r++) {
		const struct xp_style *s = &t.roles[r];
		if (!colour_ok(s->fg, 255) || !colour_ok(s->bg, 255) || !colour_ok(s->fg8, 7) || !colour_ok(s->bg8, 7))
			abort();
	}
	(void)xp_theme_roles_set(&t);
	return 0;
}
