/* testlib.c: fixture paths and a fork/exec runner that captures stdout and stderr. */
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *xp_fixture(const char *rel)
{
	static char buf[4096];
	const char *root = getenv("XP_FIXTURES");
	snprintf(buf, sizeof buf, "%s/%s", root && *root ? root : "tests/fixtures", rel);
	return buf;
}

const char *xp_bin(void)
{
	const char *b = getenv("XPOOL_BIN");
	return b && *b ? b : "./xpool";
}

static void append(char **buf, size_t *len, const char *data, size_t n)
{
	*buf = realloc(*buf, *len + n + 1);
	if (!*buf)
		abort();
	memcpy(*buf + *len, data, n);
	*len += n;
	(*buf)[*len] = '\0';
}

int xp_run_argv(struct xp_run *r, char *const argv[], const char *in)
{
	int po[2], pe[2], pi[2];
	memset(r, 0, sizeof *r);
	if (pipe(po) || pipe(pe) || pipe(pi))
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(pi[0], 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(pi[0]); close(pi[1]); close(po[0]); close(po[1]); close(pe[0]); close(pe[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pi[0]); close(po[1]); close(pe[1]);
	if (in) {
		size_t n = strlen(in), off = 0;
		signal(SIGPIPE, SIG_IGN);
		while (off < n) {
			ssize_t w = write(pi[1], in + off, n - off);
			if (w <= 0)
				break;
			off += (size_t)w;
		}
	}
	close(pi[1]);
	size_t lo = 0, le = 0;
	r->out = calloc(1, 1);
	r->err = calloc(1, 1);
	struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
	int open_fds = 2;
	while (open_fds > 0) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char buf[65536];
			ssize_t k = read(fds[i].fd, buf, sizeof buf);
			if (k <= 0) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
				continue;
			}
			if (i == 0)
				append(&r->out, &lo, buf, (size_t)k);
			else
				append(&r->err, &le, buf, (size_t)k);
		}
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

int xp_run_xpool(struct xp_run *r, const char *in, ...)
{
	const char *argv[64];
	int n = 0;
	va_list ap;
	argv[n++] = xp_bin();
	va_start(ap, in);
	const char *a;
	while ((a = va_arg(ap, const char *)) != NULL && n < 63)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	return xp_run_argv(r, (char *const *)argv, in);
}

void xp_run_free(struct xp_run *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof *r);
}

char *xp_tmpfile(const char *text, size_t len)
{
	char *path = strdup("/tmp/xpool-test-XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0)
		abort();
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);
		if (w <= 0)
			abort();
		off += (size_t)w;
	}
	close(fd);
	return path;
}
