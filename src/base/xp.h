/* xp.h: names shared by every layer: version, exit codes, error messages. */
#ifndef XP_H
#define XP_H

#include <stdarg.h>
#include <stddef.h>

/* Program version, printed by `xpool --version`. */
#define XP_VERSION "0.1.0"

/* Exit codes, as xpool(1) documents them for scripts (EXIT STATUS). */
enum xp_exit {
	XP_EXIT_OK = 0,          /* success */
	XP_EXIT_ERROR = 1,       /* runtime error: bad file, failed discovery */
	XP_EXIT_USAGE = 2,       /* unknown command or option, bad argument */
	XP_EXIT_UNPLACEABLE = 3, /* a dry-run found no placement */
	XP_EXIT_PARTIAL = 4,     /* some sources (agents) did not answer */
	XP_EXIT_PROBLEMS = 5     /* `health` listed a problem at its --fail-on level */
};

/* One error message, filled by the function that failed; callers print it. */
struct xp_err {
	char msg[1024];
};

/* Sets err's message (printf style); always returns -1 so callers can `return xp_errf(...)`. */
int xp_errf(struct xp_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prefixes err's message with "prefix: " (for adding a file name or a line number). */
void xp_err_prefix(struct xp_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Where a line-oriented parser (manifests, themes) is, for "FILE:LINE: message" errors. */
struct xp_where {
	const char *file;
	int line;
	struct xp_err *err;
};

/* Sets w->err to "FILE:LINE: message" (printf style); always returns -1. */
int xp_where_errf(const struct xp_where *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The value of one hex digit (either case), -1 when c is none: colours, bitmaps, ids. */
int xp_hex_digit(char c);

/* Aborts with a message when memory runs out: the one failure we do not recover from. */
void *xp_malloc(size_t n);
/* calloc that never returns NULL (see xp_malloc). */
void *xp_calloc(size_t n, size_t size);
/* realloc that never returns NULL (see xp_malloc). */
void *xp_realloc(void *p, size_t n);
/* strdup that never returns NULL; NULL in gives NULL out. */
char *xp_strdup(const char *s);
/* Duplicates at most n bytes of s, always NUL-terminated. */
char *xp_strndup(const char *s, size_t n);
/* asprintf that never returns NULL. */
char *xp_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Grows *arr (element size sz) so that index n fits; *cap tracks capacity. */
void xp_grow(void *arr, size_t sz, size_t n, size_t *cap);

struct stat;
/* Opens a file to read as xp_read_file does (regular, a pipe, or "-" for stdin; never a terminal or
 * a directory), with its stat in *st; -1 with err set (naming the file) when it cannot. */
int xp_open_input(const char *path, struct stat *st, struct xp_err *err);
/* Reads a whole file (regular, a pipe, or "-" for stdin) of at most max bytes into a NUL-terminated buffer. */
char *xp_read_file(const char *path, size_t max, size_t *len, struct xp_err *err);

/* Length of the well-formed UTF-8 sequence at s (at most left bytes), 0 when invalid. */
size_t xp_utf8_len(const unsigned char *s, size_t left);

#endif
