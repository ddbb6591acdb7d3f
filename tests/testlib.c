/* testlib.c: fixture paths, a fork/exec runner that captures stdout and stderr, replay
 * directories, real agents on loopback and a canned-reply HTTP server for fault tests. */
#include "testlib.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "xp.h"

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

int xp_run_xpoolv(struct xp_run *r, const char *in, va_list ap)
{
	const char *argv[64];
	int n = 0;
	argv[n++] = xp_bin();
	const char *a;
	while ((a = va_arg(ap, const char *)) != NULL && n < 63)
		argv[n++] = a;
	argv[n] = NULL;
	return xp_run_argv(r, (char *const *)argv, in);
}

int xp_run_xpool(struct xp_run *r, const char *in, ...)
{
	va_list ap;
	va_start(ap, in);
	int rc = xp_run_xpoolv(r, in, ap);
	va_end(ap);
	return rc;
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

char *xp_assemble(const char *dir, const char *sub, ...)
{
	char *d = xp_asprintf("%s/%s", dir, sub);
	mkdir(d, 0755);
	va_list ap;
	va_start(ap, sub);
	const char *from;
	while ((from = va_arg(ap, const char *)) != NULL) {
		const char *to = va_arg(ap, const char *);
		struct xp_err err = {{0}};
		size_t len;
		char *data = xp_read_file(xp_fixture(from), 1 << 26, &len, &err);
		if (!data) {
			fprintf(stderr, "xp_assemble: %s\n", err.msg);
			abort();
		}
		char *path = xp_asprintf("%s/%s", d, to);
		FILE *f = fopen(path, "w");
		if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
			fprintf(stderr, "xp_assemble: %s: %s\n", path, strerror(errno));
			abort();
		}
		free(path);
		free(data);
	}
	va_end(ap);
	return d;
}

char *xp_replay_dgx(const char *dir)
{
	char *d = xp_assemble(dir, "dgx", "nvidia-smi/a100-sxm4-80gb-x4_535.54.03.q.xml", "nvidia-smi-q-x.xml", NULL);
	char *host = xp_asprintf("%s/hostname", d);
	FILE *f = fopen(host, "w");
	if (!f || fputs("dgx-a100-07\n", f) < 0 || fclose(f) != 0) {
		fprintf(stderr, "xp_replay_dgx: %s: %s\n", host, strerror(errno));
		abort();
	}
	free(host);
	return d;
}

void xp_rm_rf(const char *path)
{
	char *argv[] = {"/bin/rm", "-rf", (char *)path, NULL};
	struct xp_run r;
	if (path[0] && xp_run_argv(&r, argv, NULL) == 0)
		xp_run_free(&r);
}

pid_t xp_agent_startv(char *url, size_t len, const char *listen, const char *const *args, size_t n)
{
	int p[2];
	url[0] = '\0';
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	const char **argv = xp_calloc(n + 5, sizeof *argv);
	argv[0] = xp_bin();
	argv[1] = "agent";
	argv[2] = "--listen";
	argv[3] = listen;
	for (size_t i = 0; i < n; i++)
		argv[4 + i] = args[i];
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	free(argv);
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return -1;
	}
	/* The first line names the URL; anything else (an error exit) is handed back in url. */
	size_t got = 0;
	struct pollfd pf = {.fd = p[0], .events = POLLIN};
	while (got + 1 < len && !memchr(url, '\n', got) && poll(&pf, 1, 20000) > 0) {
		ssize_t r = read(p[0], url + got, len - 1 - got);
		if (r <= 0)
			break;
		got += (size_t)r;
		url[got] = '\0';
	}
	close(p[0]);
	char *on = strstr(url, " on http");
	char *nl = strchr(url, '\n');
	if (!on || !nl) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	*nl = '\0';
	memmove(url, on + 4, strlen(on + 4) + 1);
	return pid;
}

pid_t xp_agent_start(char *url, size_t len, ...)
{
	const char *args[64];
	size_t n = 0;
	va_list ap;
	va_start(ap, len);
	const char *a;
	while ((a = va_arg(ap, const char *)) != NULL && n < 64)
		args[n++] = a;
	va_end(ap);
	return xp_agent_startv(url, len, "127.0.0.1:0", args, n);
}

int xp_agent_stop(pid_t pid)
{
	if (pid <= 0)
		return -1;
	kill(pid, SIGCONT); /* a stopped agent cannot handle SIGTERM */
	kill(pid, SIGTERM);
	int st;
	for (int i = 0; i < 1000; i++) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

pid_t xp_fake_http(int *port, const char *reply, size_t len)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int one = 1;
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 64) < 0)
		return -1;
	socklen_t al = sizeof a;
	getsockname(s, (struct sockaddr *)&a, &al);
	*port = ntohs(a.sin_port);
	pid_t pid = fork();
	if (pid != 0) {
		close(s);
		return pid;
	}
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		int c = accept(s, NULL, NULL);
		if (c < 0)
			continue;
		/* Read the request head, so the client is not reset before it reads the reply. */
		char buf[8192];
		size_t got = 0;
		while (got < sizeof buf - 1) {
			ssize_t r = read(c, buf + got, sizeof buf - 1 - got);
			if (r <= 0)
				break;
			got += (size_t)r;
			buf[got] = '\0';
			if (strstr(buf, "\r\n\r\n"))
				break;
		}
		for (size_t off = 0; off < len;) {
			ssize_t w = write(c, reply + off, len - off);
			if (w <= 0)
				break;
			off += (size_t)w;
		}
		close(c);
	}
}

double xp_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int xp_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

pid_t xp_agent_restart(char *url, size_t len, const char *old_url, const char *const *args, size_t n)
{
	const char *colon = strrchr(old_url, ':');
	if (!colon)
		return -1;
	char listen[64];
	snprintf(listen, sizeof listen, "127.0.0.1:%s", colon + 1);
	pid_t p = -1;
	/* The old agent's socket may linger a moment after it exits. */
	for (int i = 0; i < 50 && p < 0; i++) {
		p = xp_agent_startv(url, len, listen, args, n);
		if (p < 0)
			usleep(100000);
	}
	return p;
}

char *xp_write_file(const char *dir, const char *name, const char *text, mode_t mode)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *path = malloc(n);
	if (!path)
		abort();
	snprintf(path, n, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) == EOF || fclose(f) != 0 || chmod(path, mode) != 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		abort();
	}
	return path;
}
