/* cmd_batch.c: splitting command lines into words and running batch scripts. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

void xp_cmd_split_free(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
}

static int split(const char *line, bool comments, int *argc_out, char ***argv_out, struct xp_err *err);

int xp_cmd_split(const char *line, int *argc_out, char ***argv_out, struct xp_err *err)
{
	return split(line, true, argc_out, argv_out, err);
}

int xp_cmd_split_argv(const char *line, int *argc_out, char ***argv_out, struct xp_err *err)
{
	return split(line, false, argc_out, argv_out, err);
}

static int split(const char *line, bool comments, int *argc_out, char ***argv_out, struct xp_err *err)
{
	size_t len = strlen(line);
	char **argv = xp_calloc(XP_CMD_MAX_WORDS + 1, sizeof *argv);
	char *word = xp_malloc(len + 1);
	int argc = 0;
	const char *p = line;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (!*p || (comments && *p == '#'))
			break;
		size_t w = 0;
		char quote = 0;
		for (; *p; p++) {
			if (quote) {
				if (*p == quote)
					quote = 0;
				else if (*p == '\\' && quote == '"' && (p[1] == '"' || p[1] == '\\'))
					word[w++] = *++p;
				else
					word[w++] = *p;
			} else if (*p == '\'' || *p == '"')
				quote = *p;
			else if (*p == '\\' && p[1])
				word[w++] = *++p;
			else if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
				break;
			else
				word[w++] = *p;
		}
		if (quote) {
			free(word);
			xp_cmd_split_free(argc, argv);
			return xp_errf(err, "unterminated %c quote", quote);
		}
		if (argc == XP_CMD_MAX_WORDS) {
			free(word);
			xp_cmd_split_free(argc, argv);
			return xp_errf(err, "more than %d words on one line", XP_CMD_MAX_WORDS);
		}
		argv[argc++] = xp_strndup(word, w);
	}
	free(word);
	*argc_out = argc;
	*argv_out = argv;
	return 0;
}

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
