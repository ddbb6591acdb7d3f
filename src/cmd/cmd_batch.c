/* cmd_batch.c: running batch scripts, one command a line (the words are split by words.c). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

/* Reads one line of at most XP_BATCH_MAX_LINE bytes; 1 read, 0 end, -1 too long or NUL. */
static int read_line(FILE *f, char *buf, size_t cap)
{
	size_t n = 0;
	int c;
	bool bad = false;
	while ((c = getc(f)) != EOF && c != '\n') {
		if (c == '\0')
			bad = true;
		if (n + 1 < cap)
			buf[n++] = (char)c;
		else
			bad = true;
	}
	if (c == EOF && n == 0 && !bad)
		return 0;
	buf[n] = '\0';
	return bad ? -1 : 1;
}

int xp_batch_run(struct xp_ctx *ctx, FILE *f, const char *name, bool keep_going)
{
	char *line = xp_malloc(XP_BATCH_MAX_LINE + 1);
	char where[512];
	int first_rc = XP_EXIT_OK;
	for (unsigned long lineno = 1;; lineno++) {
		int r = read_line(f, line, XP_BATCH_MAX_LINE + 1);
		if (r == 0)
			break;
		snprintf(where, sizeof where, "%s:%lu", name, lineno);
		ctx->where = where;
		int rc;
		int argc = 0;
		char **argv = NULL;
		struct xp_err err = {{0}};
		if (r < 0) {
			xp_ctx_error(ctx, "line longer than %d bytes or holding a NUL byte", XP_BATCH_MAX_LINE);
			rc = XP_EXIT_USAGE;
		} else if (xp_cmd_split(line, &argc, &argv, &err) < 0) {
			xp_ctx_error(ctx, "%s", err.msg);
			rc = XP_EXIT_USAGE;
		} else {
			rc = argc ? xp_cmd_run(ctx, argc, argv) : XP_EXIT_OK;
			xp_cmd_split_free(argc, argv);
		}
		ctx->where = NULL;
		if (rc != XP_EXIT_OK) {
			if (first_rc == XP_EXIT_OK)
				first_rc = rc;
			if (!keep_going)
				break;
		}
	}
	if (ferror(f) && first_rc == XP_EXIT_OK) {
		xp_ctx_error(ctx, "%s: read error", name);
		first_rc = XP_EXIT_ERROR;
	}
	free(line);
	return first_rc;
}
