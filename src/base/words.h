/* words.h: splitting a line into words the way every xpool command line is split. */
#ifndef XP_WORDS_H
#define XP_WORDS_H

#include "xp.h"

/* Most words one command line may split into. */
#define XP_CMD_MAX_WORDS 256

/* Splits a command line into words (quotes '' and "", backslash escapes); -1 with err set. */
int xp_cmd_split(const char *line, int *argc, char ***argv, struct xp_err *err);
/* xp_cmd_split without comments: for a command line given as one argument (`--entry "grep #x"`). */
int xp_cmd_split_argv(const char *line, int *argc, char ***argv, struct xp_err *err);
/* s as one word of a command line (caller frees): as it is when it needs no quotes, else in
 * double quotes with '"' and '\\' escaped, so that xp_cmd_split gives s back. */
char *xp_cmd_quote(const char *s);
/* s quoted always (an expression reads as one value): in single quotes when it holds none,
 * else as xp_cmd_quote quotes it. Caller frees. */
char *xp_cmd_quote_always(const char *s);
/* Frees what xp_cmd_split returned. */
void xp_cmd_split_free(int argc, char **argv);

#endif
