/* run.c: fork/execve of vendor tools with a timeout and an output cap. */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "xp.h"

/* Where vendor tools live when PATH says nothing (cron, systemd). */
#define SAFE_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

char *xp_which(const char *prog)
{
	if (!prog || !*prog)
		return NULL;
	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0 ? xp_strdup(prog) : NULL;
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = SAFE_PATH;
	char *copy = xp_strdup(path), *save = NULL;
	for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char *full = xp_asprintf("%s/%s", *dir ? dir : ".", prog);
		struct stat st;
		if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0) {
			free(copy);
			return full;
		}
		free(full);
	}
	free(copy);
	return NULL;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void child(const char *prog, const char *const *argv, const char *const *extra, int out_fd, bool merge)
{
	/* A clean environment: the tool's output must not depend on the caller's locale
	 * or settings, and nothing secret in our environment reaches it; only the few
	 * settings the caller names (a Slurm client's SLURM_CONF) join it. */
	const char *env[16] = {("PATH=" SAFE_PATH), "LANG=C", "LC_ALL=C"};
	size_t k = 3;
	for (size_t i = 0; extra && extra[i] && k + 1 < sizeof env / sizeof env[0]; i++)
		env[k++] = extra[i];
	env[k] = NULL;
	int devnull = open("/dev/null", O_RDWR);
	if (devnull >= 0) {
		dup2(devnull, STDIN_FILENO);
		dup2(devnull, STDERR_FILENO);
	}
	dup2(out_fd, STDOUT_FILENO);
	/* A tool that answers on stderr (sbatch --test-only) is read there too, in order. */
	if (merge)
		dup2(out_fd, STDERR_FILENO);
	/* Its own process group, so a timeout kills whatever it started too. */
	setpgid(0, 0);
	/* Ignored signals and the signal mask survive exec: the tool starts from the defaults,
	 * not from the agent's (SIGTERM, SIGINT, SIGHUP blocked, SIGPIPE ignored). */
	signal(SIGPIPE, SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(prog, (char *const *)argv, (char *const *)env);
	_exit(127);
}

int xp_run_tool(const char *const *argv, double timeout_s, size_t max_out, char **out, size_t *len,
		char *err, size_t errlen)
{
	return xp_run_tool_env(argv, NULL, timeout_s, max_out, out, len, err, errlen);
}

/* Runs argv; merge: stderr joins stdout; status: NULL to fail on a non-zero exit, else where the
 * exit status goes (the output is then kept whatever the status). */
static int run(const char *const *argv, const char *const *env, double timeout_s, size_t max_out, bool merge,
	       char **out, size_t *len, int *status, char *err, size_t errlen)
{
	*out = NULL;
	*len = 0;
	char *prog = xp_which(argv[0]);
	if (!prog) {
		snprintf(err, errlen, "%s: not found", argv[0]);
		return -1;
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "%s: %s", argv[0], strerror(errno));
		free(prog);
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "%s: %s", argv[0], strerror(errno));
		close(p[0]);
		close(p[1]);
		free(prog);
		return -1;
	}
	if (pid == 0)
		child(prog, argv, env, p[1], merge);
	free(prog);
	close(p[1]);

	size_t cap = 65536, n = 0;
	char *buf = xp_malloc(cap);
	double deadline = now_s() + timeout_s;
	const char *why = NULL;
	for (;;) {
		double left = deadline - now_s();
		if (left <= 0) {
			why = "timed out";
			break;
		}
		struct pollfd pf = {p[0], POLLIN, 0};
		int r = poll(&pf, 1, (int)(left * 1000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		if (n + 1 >= cap) {
			if (cap > max_out) {
				why = "printed more than allowed";
				break;
			}
			cap *= 2;
			buf = xp_realloc(buf, cap);
		}
		ssize_t k = read(p[0], buf + n, cap - n - 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
		if (n > max_out) {
			why = "printed more than allowed";
			break;
		}
	}
	close(p[0]);
	/* A tool may close its output and keep running: the deadline covers its exit too. */
	int st = 0;
	pid_t w = 0;
	while (!why && (w = waitpid(pid, &st, WNOHANG)) == 0) {
		if (now_s() >= deadline) {
			why = "timed out";
			break;
		}
		usleep(2000);
	}
	if (why) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL); /* in case it had not made its group yet */
		/* A process stuck in the kernel (a wedged driver) ignores SIGKILL until it leaves;
		 * give it a moment, then leave it behind rather than hang with it. */
		double give_up = now_s() + 2.0;
		while (waitpid(pid, &st, WNOHANG) == 0 && now_s() < give_up)
			usleep(5000);
	}
	if (why) {
		snprintf(err, errlen, "%s: %s (%.0f s, %zu bytes)", argv[0], why, timeout_s, max_out);
		free(buf);
		return -1;
	}
	if (status && WIFEXITED(st) && WEXITSTATUS(st) != 127)
		*status = WEXITSTATUS(st);
	else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
			snprintf(err, errlen, "%s: could not be started", argv[0]);
		else if (WIFEXITED(st))
			snprintf(err, errlen, "%s: exit status %d", argv[0], WEXITSTATUS(st));
		else
			snprintf(err, errlen, "%s: killed by signal %d", argv[0], WTERMSIG(st));
		free(buf);
		return -1;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int xp_run_tool_env(const char *const *argv, const char *const *env, double timeout_s, size_t max_out,
		    char **out, size_t *len, char *err, size_t errlen)
{
	return run(argv, env, timeout_s, max_out, false, out, len, NULL, err, errlen);
}

int xp_run_tool_answer(const char *const *argv, const char *const *env, double timeout_s, size_t max_out,
		       char **out, size_t *len, int *status, char *err, size_t errlen)
{
	return run(argv, env, timeout_s, max_out, true, out, len, status, err, errlen);
}
