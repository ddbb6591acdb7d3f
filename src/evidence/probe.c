/* probe.c: the probe runner shared by `validate run` and the node agent's POST /v1/probe. */
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double mono_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int xp_probe_run(const char *prog, char *const *argv, char *const *envp, int fd, double timeout_s, size_t max,
		 const atomic_int *cancel, struct xp_probe_result *res, struct xp_err *err)
{
	memset(res, 0, sizeof *res);
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return xp_errf(err, "%s: %s", argv[0], strerror(errno));
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		return xp_errf(err, "%s: %s", argv[0], strerror(e));
	}
	if (pid == 0) {
		/* Its own process group, so that a timeout kills what it started too; ignored
		 * signals and the signal mask survive exec, so the probe starts from the defaults.
		 * Only async-signal-safe calls here: the agent forks from one of several threads. */
		setpgid(0, 0);
		signal(SIGPIPE, SIG_DFL);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		int dn = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (dn >= 0)
			dup2(dn, STDIN_FILENO);
		dup2(p[1], STDOUT_FILENO);
		dup2(p[1], STDERR_FILENO);
		execve(prog, argv, envp);
		_exit(127);
	}
	setpgid(pid, pid); /* also here: the kill below must not race the child's own call */
	close(p[1]);
	char *buf = xp_malloc(65536);
	double deadline = mono_s() + timeout_s, grace = 0;
	bool reaped = false, eof = false;
	int st = 0, werr = 0;
	size_t total = 0;
	const char *why = NULL;
	while (!eof && !why && !werr) {
		double now = mono_s();
		if (now >= deadline) {
			why = "timed out";
			break;
		}
		if (cancel && atomic_load(cancel)) {
			why = "cancelled";
			break;
		}
		/* Exited, but something it started still holds the output open: give that a second. */
		if (reaped && now >= grace)
			break;
		double left = deadline - now;
		int ms = left > 0.1 ? 100 : (int)(left * 1000) + 1;
		struct pollfd pf = {p[0], POLLIN, 0};
		int r = poll(&pf, 1, ms);
		if (r > 0) {
			ssize_t k = read(p[0], buf, 65536);
			if (k < 0 && errno != EINTR && errno != EAGAIN)
				werr = errno;
			else if (k == 0)
				eof = true;
			else if (k > 0) {
				size_t keep = (size_t)k;
				if (total + keep > max) {
					keep = max - total;
					why = "output cut";
				}
				if (write_all(fd, buf, keep) < 0)
					werr = errno ? errno : EIO;
				total += keep;
			}
		}
		if (!reaped && waitpid(pid, &st, WNOHANG) == pid) {
			reaped = true;
			grace = mono_s() + 1.0;
		}
	}
	free(buf);
	close(p[0]);
	/* Output closed: the probe is exiting, or carries on without output; it still has
	 * until the deadline. */
	while (!reaped && !why && !werr) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			reaped = true;
		else if (mono_s() >= deadline)
			why = "timed out";
		else if (cancel && atomic_load(cancel))
			why = "cancelled";
		else
			nanosleep(&(struct timespec){0, 2000000}, NULL);
	}
	/* A timeout, or something the probe started that still holds the output: the whole group goes. */
	if (why || werr || !eof)
		kill(-pid, SIGKILL);
	if (!reaped) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	res->wstatus = st;
	res->bytes = total;
	res->timed_out = why && why[0] == 't';
	res->cut = why && why[0] == 'o';
	res->cancelled = why && why[0] == 'c';
	if (werr)
		return xp_errf(err, "writing the log: %s", strerror(werr));
	return !why && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 1 : 0;
}

void xp_probe_note(const struct xp_probe_result *res, double timeout_s, size_t max, char *note, size_t len)
{
	int st = res->wstatus;
	if (res->timed_out)
		snprintf(note, len, "timed out after %g s", timeout_s);
	else if (res->cut)
		snprintf(note, len, "printed more than %zu MiB (log cut)", max >> 20);
	else if (res->cancelled)
		snprintf(note, len, "cancelled");
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
		snprintf(note, len, "exit status 127 (could not be started?)");
	else if (WIFEXITED(st))
		snprintf(note, len, "exit status %d", WEXITSTATUS(st));
	else
		snprintf(note, len, "killed by signal %d", WTERMSIG(st));
}
