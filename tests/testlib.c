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

#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "model.h"
#include "model_json.h"
#include "sha256.h"
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

struct xp_sample xp_run_timed(char *const argv[], int quiet)
{
	struct xp_sample s = {0, 0, 0, -1};
	double t0 = xp_now_ms();
	pid_t pid = fork();
	if (pid < 0)
		return s;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, 1);
			if (quiet)
				dup2(fd, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	int st = 0;
	struct rusage ru;
	while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR)
		;
	s.ms = xp_now_ms() - t0;
	s.rss_kib = ru.ru_maxrss;
	s.cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
		   (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
	s.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return s;
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

/* The farm's memory shared between the test and its server: each node's version (bumped by
 * xp_farm_change) and what was served. */
struct xp_farm_shm {
	atomic_ulong requests, ok200, not_modified;
	atomic_uint ver[];
};

/* Node i of the farm's first address: 127.1.0.1 + i (all of 127/8 is the loopback's). */
#define FARM_BASE 0x7f010001u

/* Node i as it is at version v: the cluster's node, then per version new utilizations and a fact. */
static struct xp_node *farm_node_at(const struct xp_cluster *c, size_t i, unsigned v)
{
	struct xp_node *n = xp_node_clone(c->nodes[i]);
	/* Each version new utilizations; an odd one, every free device taken by a job too (what
	 * placement sees: its use, not its static class). */
	for (size_t d = 0; v && d < n->n_devices; d++) {
		struct xp_device *dv = &n->devices[d];
		dv->utilization_pct = (double)((v * 7 + d) % 100);
		if (v % 2 && dv->n_allocs == 0) {
			dv->allocs = xp_calloc(1, sizeof *dv->allocs);
			dv->allocs[0] = (struct xp_alloc){.owner = xp_strdup("farm-job"), .memory_mib = -1};
			dv->n_allocs = 1;
		}
	}
	return n;
}

struct farm_srv {
	const struct xp_cluster *c;
	struct xp_farm_shm *shm;
	size_t n;
	char **body;
	size_t *len;
	char (*etag)[40];
	unsigned *built; /* version each body was made from, UINT_MAX for none */
	time_t started;
};

/* The reply as backends/agent_server.c's build_body makes it: the one-node inventory, its
 * generation and the agent object, compact; the ETag the first 32 hex digits of its SHA-256. */
static void farm_build(struct farm_srv *s, size_t i, unsigned v)
{
	struct xp_cluster *one = xp_cluster_new();
	xp_cluster_add(one, farm_node_at(s->c, i, v));
	json_t *doc = xp_cluster_to_json(one);
	json_object_set_new(doc, "generation", json_integer((json_int_t)v + 1));
	json_t *ag = json_object();
	json_object_set_new(ag, "version", json_string(XP_VERSION));
	json_object_set_new(ag, "node", json_string(one->nodes[0]->name));
	json_object_set_new(ag, "started", json_integer((json_int_t)s->started));
	json_object_set_new(ag, "interval_s", json_real(3600));
	json_object_set_new(doc, "agent", ag);
	free(s->body[i]);
	s->body[i] = json_dumps(doc, JSON_COMPACT);
	s->len[i] = strlen(s->body[i]);
	json_decref(doc);
	xp_cluster_free(one);
	struct xp_sha256 h;
	unsigned char dg[32];
	char hex[65];
	xp_sha256_init(&h);
	xp_sha256_update(&h, s->body[i], s->len[i]);
	xp_sha256_final(&h, dg);
	xp_sha256_hex(dg, hex);
	snprintf(s->etag[i], sizeof s->etag[i], "\"%.32s\"", hex);
	s->built[i] = v;
}

static enum MHD_Result farm_reply(struct MHD_Connection *conn, unsigned code, const char *body, size_t len,
				  const char *etag)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	MHD_add_response_header(r, "Content-Type", "application/json");
	if (etag)
		MHD_add_response_header(r, "ETag", etag);
	enum MHD_Result ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result farm_handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
				   const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	(void)version, (void)upload, (void)upload_size;
	static int seen;
	struct farm_srv *s = cls;
	/* Answered on the second call, once the request is complete, as the agent does: a reply
	 * queued on the first makes libmicrohttpd close the connection instead of keeping it. */
	if (!*con_cls) {
		*con_cls = &seen;
		return MHD_YES;
	}
	atomic_fetch_add(&s->shm->requests, 1);
	const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
	char ip[64] = "";
	if (host)
		snprintf(ip, sizeof ip, "%.*s", (int)strcspn(host, ":"), host);
	struct in_addr a;
	if (!host || inet_pton(AF_INET, ip, &a) != 1 || ntohl(a.s_addr) < FARM_BASE ||
	    ntohl(a.s_addr) - FARM_BASE >= s->n)
		return farm_reply(conn, 404, "{\"error\":\"no such node\"}", 24, NULL);
	if (strcmp(method, "GET") != 0 || strcmp(url, "/v1/node") != 0)
		return farm_reply(conn, 404, "{\"error\":\"not found\"}", 21, NULL);
	size_t i = ntohl(a.s_addr) - FARM_BASE;
	unsigned v = atomic_load(&s->shm->ver[i]);
	if (s->built[i] != v)
		farm_build(s, i, v);
	const char *inm = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "If-None-Match");
	if (inm && strcmp(inm, s->etag[i]) == 0) {
		atomic_fetch_add(&s->shm->not_modified, 1);
		return farm_reply(conn, 304, "", 0, s->etag[i]);
	}
	atomic_fetch_add(&s->shm->ok200, 1);
	return farm_reply(conn, 200, s->body[i], s->len[i], s->etag[i]);
}

/* Only this machine's own addresses may ask: the farm listens on every address (one port for
 * all of 127/8), but it is a test server. */
static enum MHD_Result farm_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	(void)cls, (void)len;
	return addr->sa_family == AF_INET &&
			       (ntohl(((const struct sockaddr_in *)addr)->sin_addr.s_addr) >> 24) == 127
		       ? MHD_YES
		       : MHD_NO;
}

struct xp_farm *xp_farm_start(const struct xp_cluster *c)
{
	size_t n = c->n_nodes;
	size_t shm_len = sizeof(struct xp_farm_shm) + n * sizeof(atomic_uint);
	struct xp_farm_shm *shm = mmap(NULL, shm_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED)
		return NULL;
	int fds[2];
	if (pipe(fds) < 0) {
		munmap(shm, shm_len);
		return NULL;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		munmap(shm, shm_len);
		return NULL;
	}
	if (pid == 0) {
		close(fds[0]);
		/* Never outlive the test that started it, even one that died before this line. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		struct rlimit rl;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		struct farm_srv s = {.c = c, .shm = shm, .n = n, .started = time(NULL)};
		s.body = calloc(n ? n : 1, sizeof *s.body);
		s.len = calloc(n ? n : 1, sizeof *s.len);
		s.etag = calloc(n ? n : 1, sizeof *s.etag);
		s.built = malloc((n ? n : 1) * sizeof *s.built);
		for (size_t i = 0; i < n; i++)
			s.built[i] = UINT_MAX;
		struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
		struct MHD_Daemon *d = MHD_start_daemon(
			MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, farm_accept, NULL, farm_handle, &s,
			MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_LIMIT, (unsigned)60000,
			MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)0, MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)8192,
			MHD_OPTION_END);
		int port = -1;
		const union MHD_DaemonInfo *di = d ? MHD_get_daemon_info(d, MHD_DAEMON_INFO_LISTEN_FD) : NULL;
		socklen_t al = sizeof sa;
		if (di && getsockname(di->listen_fd, (struct sockaddr *)&sa, &al) == 0)
			port = ntohs(sa.sin_port);
		if (write(fds[1], &port, sizeof port) != sizeof port || port < 0)
			_exit(1);
		close(fds[1]);
		for (;;)
			pause();
	}
	close(fds[1]);
	int port = -1;
	ssize_t r = read(fds[0], &port, sizeof port);
	close(fds[0]);
	if (r != sizeof port || port <= 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		munmap(shm, shm_len);
		return NULL;
	}
	struct xp_farm *f = calloc(1, sizeof *f);
	f->pid = pid;
	f->port = port;
	f->n = n;
	f->shm = shm;
	return f;
}

void xp_farm_url(const struct xp_farm *f, size_t i, char *buf, size_t len)
{
	uint32_t a = FARM_BASE + (uint32_t)i;
	snprintf(buf, len, "http://%u.%u.%u.%u:%d", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255, f->port);
}

void xp_farm_change(struct xp_farm *f, size_t i)
{
	atomic_fetch_add(&f->shm->ver[i], 1);
}

struct xp_node *xp_farm_node(const struct xp_farm *f, const struct xp_cluster *c, size_t i)
{
	return farm_node_at(c, i, atomic_load(&f->shm->ver[i]));
}

struct xp_farm_counts xp_farm_counts(const struct xp_farm *f)
{
	return (struct xp_farm_counts){atomic_load(&f->shm->requests), atomic_load(&f->shm->ok200),
				       atomic_load(&f->shm->not_modified)};
}

void xp_farm_stop(struct xp_farm *f)
{
	if (!f)
		return;
	kill(f->pid, SIGKILL);
	waitpid(f->pid, NULL, 0);
	munmap(f->shm, sizeof(struct xp_farm_shm) + f->n * sizeof(atomic_uint));
	free(f);
}
