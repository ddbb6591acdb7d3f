/* words.c: the command language's word rule (quotes, backslash escapes, `#` comments), shared
 * by the command line, batch scripts, the console's prompt and the agent's config file. It sits
 * in base so that a backend can read a config line without calling into the command layer. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "words.h"

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


static char *dquote(const char *s);

char *xp_cmd_quote(const char *s)
{
	/* Every byte the splitter ends a word at (space, tab, CR, LF) or reads (quotes, backslash,
	 * '#') makes the word quoted; the rest only keep the shell-looking words readable. */
	if (*s && strcspn(s, " \t\r\n'\"\\#|&!()<>=;") == strlen(s))
		return xp_strdup(s);
	return dquote(s);
}

char *xp_cmd_quote_always(const char *s)
{
	if (!strchr(s, '\''))
		return xp_asprintf("'%s'", s);
	return dquote(s);
}

static char *dquote(const char *s)
{
	size_t n = 2;
	for (const char *p = s; *p; p++)
		n += (*p == '"' || *p == '\\') ? 2 : 1;
	char *q = xp_malloc(n + 1), *o = q;
	*o++ = '"';
	for (const char *p = s; *p; p++) {
		if (*p == '"' || *p == '\\')
			*o++ = '\\';
		*o++ = *p;
	}
	*o++ = '"';
	*o = '\0';
	return q;
}
