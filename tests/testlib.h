/* testlib.h: helpers shared by the check suites: fixture paths and running the built binary. */
#ifndef XP_TESTLIB_H
#define XP_TESTLIB_H

#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>

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
/* xp_run_xpool with the arguments in ap (NULL-terminated). */
int xp_run_xpoolv(struct xp_run *r, const char *in, va_list ap);
/* Frees the captured output of a run. */
void xp_run_free(struct xp_run *r);
/* rm -rf path (a scratch directory whose files the program under test chose); "" does nothing. */
void xp_rm_rf(const char *path);
/* Makes dir/dgx, the replay directory of a DGX with four A100s (recorded nvidia-smi -q -x) whose
 * hostname file says dgx-a100-07: the node the agent and replay suites start from (free it). */
char *xp_replay_dgx(const char *dir);
/* Writes text to dir/name with mode (whatever umask says) and returns the path (caller frees);
 * aborts on failure. */
char *xp_write_file(const char *dir, const char *name, const char *text, mode_t mode);
/* Writes text to a new temporary file and returns its path (caller frees and unlinks). */
char *xp_tmpfile(const char *text, size_t len);

/* Makes dir/sub holding fixture files under their replay names: pairs of (fixture path, name in
 * the directory), NULL-terminated. Returns the directory (caller frees); aborts on failure. */
char *xp_assemble(const char *dir, const char *sub, ...);

/* Starts `xpool agent --listen 127.0.0.1:0` with the NULL-terminated extra arguments and waits
 * (up to 20 s) for the line that names its URL, copied into url. The pid, or -1 (url then holds
 * what it printed, or why it failed). */
pid_t xp_agent_start(char *url, size_t len, ...);
/* Like xp_agent_start with the arguments in an array (n of them) and the address to listen on. */
pid_t xp_agent_startv(char *url, size_t len, const char *listen, const char *const *args, size_t n);
/* Starts an agent (xp_agent_startv's arguments) on the port of old_url, an agent stopped just
 * before: tries for up to 5 s while the port is still taken. The pid, or -1. */
pid_t xp_agent_restart(char *url, size_t len, const char *old_url, const char *const *args, size_t n);
/* Stops an agent (SIGTERM, then SIGKILL after 10 s) and returns its exit status (128+signal when killed). */
int xp_agent_stop(pid_t pid);
/* Forks a server on 127.0.0.1 that answers every connection with the same raw bytes (after
 * reading the request head) and closes it; *port is where. The pid (stop it with kill + waitpid). */
pid_t xp_fake_http(int *port, const char *reply, size_t len);

/* The monotonic clock in milliseconds, for timing (tests and benchmarks). */
double xp_now_ms(void);
/* qsort's comparison of doubles, ascending (for medians and percentiles of timings). */
int xp_cmp_double(const void *a, const void *b);

#endif
