/* testlib.h: helpers shared by the check suites: fixture paths and running the built binary. */
#ifndef XP_TESTLIB_H
#define XP_TESTLIB_H

#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>

struct xp_cluster;
struct xp_node;

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

/* An agent farm: one forked process answering GET /v1/node over real HTTP for every node of a
 * cluster, each node an agent of its own at its own loopback address (node i at 127.1.0.1 + i,
 * one port; told apart by the Host header), with the body, strong ETag, If-None-Match -> 304 and
 * generation of the real agent. Thousands of agents cost one process, not thousands. */
struct xp_farm {
	pid_t pid;
	int port;
	size_t n;                 /* nodes (agents) served */
	struct xp_farm_shm *shm;  /* shared with the server: versions and counters */
};
/* Counters the farm's server keeps (read by the test between polls). */
struct xp_farm_counts {
	unsigned long requests, ok200, not_modified;
};
/* Starts a farm serving the nodes of c (the child keeps its copy). NULL when it cannot start. */
struct xp_farm *xp_farm_start(const struct xp_cluster *c);
/* The URL of agent i ("http://127.1.x.y:port") into buf. */
void xp_farm_url(const struct xp_farm *f, size_t i, char *buf, size_t len);
/* Changes node i: its next reply carries new data (its devices' utilization; after an odd
 * number of changes every free device taken by a job "farm-job"), a new ETag and the next
 * generation. */
void xp_farm_change(struct xp_farm *f, size_t i);
/* What node i serves now, as the agent would (a copy the caller frees), for comparisons. */
struct xp_node *xp_farm_node(const struct xp_farm *f, const struct xp_cluster *c, size_t i);
/* The counters so far. */
struct xp_farm_counts xp_farm_counts(const struct xp_farm *f);
/* Stops the farm and frees it; NULL is fine. */
void xp_farm_stop(struct xp_farm *f);

/* The monotonic clock in milliseconds, for timing (tests and benchmarks). */
double xp_now_ms(void);
/* qsort's comparison of doubles, ascending (for medians and percentiles of timings). */
int xp_cmp_double(const void *a, const void *b);
/* One timed run of a command (for benchmarks). */
struct xp_sample {
	double ms, cpu_ms; /* wall; user + system: what a shared machine's load does not inflate */
	long rss_kib;      /* the child's peak RSS */
	int status;        /* exit status, 128 + signal, -1 when it did not run */
};
/* Runs argv (PATH searched) with stdout to /dev/null, stderr too when quiet (else a failure
 * says why): its wall and CPU time and peak RSS from wait4's rusage. */
struct xp_sample xp_run_timed(char *const argv[], int quiet);

#endif
