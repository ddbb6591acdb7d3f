/* agent_token.h: the bearer tokens agents and consoles share: read from files
 * that others may not read, compared in constant time, never printed. */
#ifndef XP_AGENT_TOKEN_H
#define XP_AGENT_TOKEN_H

#include <stdbool.h>

#include "xp.h"

/* Longest token file accepted. */
#define XP_TOKEN_MAX 4096

/* Reads a token from path (caller frees): trailing whitespace is dropped; an empty file, one
 * over XP_TOKEN_MAX, one others may read (mode & 007) or a token with control bytes is an error. */
char *xp_token_read(const char *path, struct xp_err *err);
/* Reads a secret file whole (caller frees; NUL-terminated, its length in *len): what names it
 * in errors ("token file", "TLS key file"); anything but a regular file, a file others may
 * read (mode & 007), one over max bytes, and a link unless follow (then the file it points
 * to is judged) is an error. */
char *xp_secret_read(const char *path, const char *what, size_t max, bool follow, size_t *len, struct xp_err *err);
/* True when given equals expected; the time taken depends only on the lengths, not the bytes. */
bool xp_token_equal(const char *expected, const char *given);

#endif
