/* fuzz_bookmarks.c: the bookmarks file ($XDG_CONFIG_HOME/xpool/bookmarks), read whole by
 * xp_bookmarks_load from a path as the console does; a loaded file must name valid bookmarks
 * whose views split, and must save and load back the same. */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "bookmarks.h"
#include "words.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = xp_fuzz_tmpfile(data, size, "bookmarks");
	struct xp_bookmarks b = {0};
	struct xp_err err = {{0}};
	if (xp_bookmarks_load(path, &b, &err) < 0) {
		if (!err.msg[0])
			abort(); /* a refusal must say why */
		xp_bookmarks_free(&b);
		return 0;
	}
	for (size_t i = 0; i < b.n; i++) {
		if (!xp_bookmark_name_ok(b.v[i].name))
			abort();
		int argc;
		char **argv;
		struct xp_err serr = {{0}};
		if (xp_cmd_split(b.v[i].view, &argc, &argv, &serr) < 0)
			abort();
		xp_cmd_split_free(argc, argv);
	}
	struct xp_err werr = {{0}};
	if (xp_bookmarks_save(path, &b, &werr) < 0)
		abort();
	struct xp_bookmarks again = {0};
	struct xp_err rerr = {{0}};
	if (xp_bookmarks_load(path, &again, &rerr) < 0 || again.n != b.n)
		abort(); /* what xpool writes, xpool reads */
	for (size_t i = 0; i < b.n; i++)
		if (strcmp(again.v[i].name, b.v[i].name) || strcmp(again.v[i].view, b.v[i].view))
			abort();
	xp_bookmarks_free(&again);
	xp_bookmarks_free(&b);
	return 0;
}
