/* testlib.h: helpers shared by the check suites: fixture paths and running the built binary. */
#ifndef XP_TESTLIB_H
#define XP_TESTLIB_H

#include <stddef.h>

/* Result of running a program: exit status and captured output (both NUL-terminated). */
struct xp_run {
	int status;   /* exit code, or 128+signal when killed */
	char *out;    /* stdout */
	char *err;    /* stderr */
};

/* Returns the path of a fixture file (static buffer): $XP_FIXTURES/rel, default tests/fixtures/rel. */
const char *xp_fixture(const char *rel);
/* Returns the path of the built xpool ($XPOOL_BIN, default ./xpool). */
const char *xp_bin(void);
/* Runs argv (argv[0] a path) with stdin from in (NULL: empty), capturing output; -1 when it cannot start. */
int xp_run_argv(struct xp_run *r, char *const argv[], const char *in);
/* Runs the built xpool with the NULL-terminated arguments after in. */
int xp_run_xpool(struct xp_run *r, const char *in, ...);
/* Frees the captured output of a run. */
void xp_run_free(struct xp_run *r);
/* Writes text to a new temporary file and returns its path (caller frees and unlinks). */
char *xp_tmpfile(const char *text, size_t len);

#endif
