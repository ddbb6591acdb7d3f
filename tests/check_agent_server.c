/* check_agent_server.c: `xpool agent` as a real process on loopback, talked to with
 * real HTTP (libcurl, and raw sockets for misbehaving clients). */
#include <arpa/inet.h>
#include <check.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_token.h"
#include "checklib.h"
#include "model.h"
#include "model_json.h"
#include "run.h"
#include "suitelib.h"
#include "testlib.h"
#include "xp.h"

/* Most agents one test starts. */
#define MAX_AGENTS 8

/* A started agent. */
struct agent {
	pid_t pid;
	int out;        /* its stdout */
	char url[256];  /* from its "serving" line */
	char *errpath;  /* its stderr, a file */
};

static char dir[128];
static struct agent *agents[MAX_AGENTS];
static char *nv, *asc; /* replay directories: 1 x A100, 8 x Ascend 910A */

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void write_text(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	size_t n = strlen(text);
	ck_assert_int_eq(write(fd, text, n), (ssize_t)n);
	fchmod(fd, mode);
	close(fd);
}

static char *path_in(const char *name)
{
	return xp_asprintf("%s/%s", dir, name);
}

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/xpool-agent-%d", (int)getpid());
	mkdir(dir, 0700);
	unsetenv("XPOOL_ADAPTER_PATH");
	unsetenv("XPOOL_ADAPTER_PATH_ONLY");
	unsetenv("XPOOL_ADAPTERS");
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	nv = xp_replay_dgx(dir);
	asc = xp_assemble(dir, "asc", "ascend/npu-smi-info_atlas800-9010_8x910A_24.1.RC2.txt", "npu-smi-info.txt",
			  "ascend/npu-smi-info-m_atlas800-9010_8x910A_24.1.RC2.txt", "npu-smi-info-m.txt",
			  "hwloc/32em64t-2n8c2t-pci-wholeio.xml", "hwloc.xml", NULL);
}

/* Stops an agent: SIGTERM, then its exit status (SIGKILL after 10 s: a hang is a failure). */
static int agent_stop(struct agent *a)
{
	int st = 0;
	if (a->pid > 0) {
		kill(a->pid, SIGTERM);
		double end = now_s() + 10;
		pid_t w;
		while ((w = waitpid(a->pid, &st, WNOHANG)) == 0 && now_s() < end)
			nanosleep(&(struct timespec){0, 10000000}, NULL);
		if (w == 0) {
			kill(a->pid, SIGKILL);
			waitpid(a->pid, &st, 0);
			st = -1;
		}
		a->pid = 0;
	}
	for (int i = 0; i < MAX_AGENTS; i++)
		if (agents[i] == a)
			agents[i] = NULL;
	if (a->out >= 0)
		close(a->out);
	if (a->errpath) {
		unlink(a->errpath);
		free(a->errpath);
	}
	free(a);
	if (st < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void teardown(void)
{
	for (int i = 0; i < MAX_AGENTS; i++)
		if (agents[i]) {
			kill(agents[i]->pid, SIGKILL);
			waitpid(agents[i]->pid, NULL, 0);
			agents[i]->pid = 0;
			agent_stop(agents[i]);
		}
	xp_rm_rf(dir);
	free(nv);
	free(asc);
	curl_global_cleanup();
}

/* The stderr an agent wrote so far (caller frees). */
static char *agent_err(const struct agent *a)
{
	struct xp_err err = {{0}};
	size_t len;
	char *s = xp_read_file(a->errpath, 1 << 20, &len, &err);
	return s ? s : xp_strdup("");
}

/* Starts `xpool GLOBAL... agent ARGS...` (args NULL-terminated; "agent" among them). Waits up to
 * 15 s for its "serving" line: then the agent is returned with its URL. When it exits first,
 * *status gets its exit code, *err its stderr (caller frees), and NULL is returned. */
static struct agent *agent_try(int *status, char **err, ...)
{
	char *argv[64];
	int n = 0;
	argv[n++] = (char *)xp_bin();
	va_list ap;
	va_start(ap, err);
	char *s;
	while ((s = va_arg(ap, char *)) != NULL && n < 62)
		argv[n++] = s;
	va_end(ap);
	argv[n] = NULL;
	struct agent *a = xp_calloc(1, sizeof *a);
	static int seq;
	a->errpath = xp_asprintf("%s/agent-%d.err", dir, seq++);
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	a->pid = fork();
	ck_assert_int_ge(a->pid, 0);
	if (a->pid == 0) {
		int e = open(a->errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(p[1], 1);
		dup2(e, 2);
		close(p[0]);
		close(p[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	a->out = p[0];
	for (int i = 0; i < MAX_AGENTS; i++)
		if (!agents[i]) {
			agents[i] = a;
			break;
		}
	char line[512];
	size_t used = 0;
	double end = now_s() + 15;
	while (now_s() < end && used < sizeof line - 1) {
		struct pollfd pf = {a->out, POLLIN, 0};
		if (poll(&pf, 1, 100) <= 0)
			continue;
		ssize_t k = read(a->out, line + used, 1);
		if (k <= 0)
			break; /* exited */
		if (line[used] == '\n')
			break;
		used++;
	}
	line[used] = '\0';
	const char *on = strstr(line, " on ");
	if (strncmp(line, "xpool agent: serving ", 21) == 0 && on) {
		snprintf(a->url, sizeof a->url, "%s", on + 4);
		return a;
	}
	*err = agent_err(a);
	*status = agent_stop(a);
	return NULL;
}

/* agent_try that must succeed. */
#define AGENT(...)                                                                       \
	({                                                                               \
		int st_ = 0;                                                             \
		char *e_ = NULL;                                                         \
		struct agent *a_ = agent_try(&st_, &e_, __VA_ARGS__, NULL);              \
		ck_assert_msg(a_ != NULL, "agent did not start: exit %d: %s", st_, e_); \
		a_;                                                                      \
	})

/* One HTTP exchange. */
struct http {
	long code;
	char *body;
	size_t len;
	char etag[128];
	char www_auth[128];
	char allow[64];
	char ctype[128];
	char clen[32];
};

static size_t body_cb(char *p, size_t sz, size_t n, void *u)
{
	struct http *h = u;
	h->body = xp_realloc(h->body, h->len + sz * n + 1);
	memcpy(h->body + h->len, p, sz * n);
	h->len += sz * n;
	h->body[h->len] = '\0';
	return sz * n;
}

static void header_value(const char *line, size_t len, const char *name, char *out, size_t outlen)
{
	size_t nl = strlen(name);
	if (len <= nl + 1 || strncasecmp(line, name, nl) != 0 || line[nl] != ':')
		return;
	const char *v = line + nl + 1;
	size_t vl = len - nl - 1;
	while (vl && (*v == ' '))
		v++, vl--;
	while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n'))
		vl--;
	snprintf(out, outlen, "%.*s", (int)vl, v);
}

static size_t header_cb(char *p, size_t sz, size_t n, void *u)
{
	struct http *h = u;
	header_value(p, sz * n, "ETag", h->etag, sizeof h->etag);
	header_value(p, sz * n, "WWW-Authenticate", h->www_auth, sizeof h->www_auth);
	header_value(p, sz * n, "Allow", h->allow, sizeof h->allow);
	header_value(p, sz * n, "Content-Type", h->ctype, sizeof h->ctype);
	header_value(p, sz * n, "Content-Length", h->clen, sizeof h->clen);
	return sz * n;
}

/* method ("GET", "POST"), the agent's url + path, an optional bearer token, an extra header,
 * a CA file for https. Fails the test when the exchange itself fails. */
static struct http http(const char *method, const struct agent *a, const char *path, const char *token,
			const char *header, const char *ca)
{
	struct http h = {0};
	h.body = xp_strdup("");
	CURL *c = curl_easy_init();
	char *url = xp_asprintf("%s%s", a->url, path);
	struct curl_slist *hl = NULL;
	char *auth = token ? xp_asprintf("Authorization: Bearer %s", token) : NULL;
	if (auth)
		hl = curl_slist_append(hl, auth);
	if (header)
		hl = curl_slist_append(hl, header);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (strcmp(method, "POST") == 0) {
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, body_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &h);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &h);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (ca)
		curl_easy_setopt(c, CURLOPT_CAINFO, ca);
	CURLcode rc = curl_easy_perform(c);
	ck_assert_msg(rc == CURLE_OK, "%s %s: %s", method, url, curl_easy_strerror(rc));
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &h.code);
	curl_slist_free_all(hl);
	curl_easy_cleanup(c);
	free(auth);
	free(url);
	return h;
}

/* Requests path and checks only the status code; the body is dropped. */
static void expect_code(const char *method, const struct agent *a, const char *path, const char *token, long code)
{
	struct http h = http(method, a, path, token, NULL, NULL);
	ck_assert_msg(h.code == code, "%s %s: status %ld, want %ld", method, path, h.code, code);
	free(h.body);
}

static json_t *http_json(const struct http *h)
{
	json_error_t je;
	json_t *j = json_loads(h->body, 0, &je);
	ck_assert_msg(j != NULL, "not JSON (%s): %s", je.text, h->body);
	return j;
}

/* A raw TCP connection to the agent (http://127.0.0.1:PORT) from the loopback address src
 * (NULL: any): with another src, another client as far as the agent can tell. */
static int raw_connect_from(const struct agent *a, const char *src)
{
	const char *colon = strrchr(a->url, ':');
	ck_assert_ptr_nonnull(colon);
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	if (src) {
		struct sockaddr_in from = {.sin_family = AF_INET};
		inet_pton(AF_INET, src, &from.sin_addr);
		ck_assert_msg(bind(fd, (struct sockaddr *)&from, sizeof from) == 0, "bind %s: %s", src,
			      strerror(errno));
	}
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	return fd;
}

/* A raw TCP connection to the agent (http://127.0.0.1:PORT). */
static int raw_connect(const struct agent *a)
{
	return raw_connect_from(a, NULL);
}

/* Waits (in 50 ms polls, so a deadline is never overslept by much) until fd is readable;
 * false when end passes first. */
static bool raw_readable(int fd, double end)
{
	while (now_s() < end) {
		struct pollfd pf = {fd, POLLIN, 0};
		if (poll(&pf, 1, 50) > 0)
			return true;
	}
	return false;
}

/* True when the agent closed fd within timeout_s (what it sent before is dropped). */
static bool raw_closed(int fd, double timeout_s)
{
	double end = now_s() + timeout_s;
	while (raw_readable(fd, end)) {
		char tmp[4096];
		ssize_t k = recv(fd, tmp, sizeof tmp, MSG_DONTWAIT);
		if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
			return true;
	}
	return false;
}

static void raw_send(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
		if (w <= 0)
			return; /* the agent may cut us off: that is what some tests want */
		s += w;
		n -= (size_t)w;
	}
}

/* Reads what the agent sends until it closes or timeout_s passes (caller frees). */
static char *raw_read(int fd, double timeout_s)
{
	size_t len = 0;
	char *buf = xp_calloc(1, 1);
	double end = now_s() + timeout_s;
	while (raw_readable(fd, end)) {
		char tmp[4096];
		ssize_t k = recv(fd, tmp, sizeof tmp, 0);
		if (k <= 0)
			break;
		buf = xp_realloc(buf, len + (size_t)k + 1);
		memcpy(buf + len, tmp, (size_t)k);
		len += (size_t)k;
		buf[len] = '\0';
	}
	return buf;
}

/* /v1/node is an inventory document of one node, with the agent's own fields; ETag and
 * If-None-Match give 304 while the node is unchanged, rediscovery after rediscovery. */
START_TEST(node_etag_health)
{
	struct agent *a = AGENT("--replay", nv, "agent", "--listen", "127.0.0.1:0", "--name", "node-a", "--interval", "0.2");
	ck_assert_msg(strncmp(a->url, "http://127.0.0.1:", 17) == 0, "%s", a->url);
	ck_assert_int_ne(atoi(strrchr(a->url, ':') + 1), 0);
	struct http h = http("GET", a, "/v1/node", NULL, NULL, NULL);
	ck_assert_int_eq(h.code, 200);
	ck_assert_str_eq(h.ctype, "application/json");
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_cluster_parse(h.body, h.len, "/v1/node", &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	ck_assert_uint_eq(c->n_nodes, 1);
	ck_assert_str_eq(c->nodes[0]->name, "node-a");
	ck_assert_uint_eq(c->nodes[0]->n_devices, 1);
	ck_assert_str_eq(c->nodes[0]->devices[0].vendor, "NVIDIA");
	xp_cluster_free(c);
	json_t *j = http_json(&h);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "generation")), 1);
	json_t *ag = json_object_get(j, "agent");
	ck_assert_str_eq(json_string_value(json_object_get(ag, "node")), "node-a");
	ck_assert_str_eq(json_string_value(json_object_get(ag, "version")), XP_VERSION);
	ck_assert_double_eq(json_real_value(json_object_get(ag, "interval_s")), 0.2);
	/* The discovery time is in /v1/health only: the body changes only with the node. */
	ck_assert_ptr_null(json_object_get(ag, "discovered"));
	ck_assert_int_gt(json_integer_value(json_object_get(ag, "started")), 0);
	json_decref(j);
	ck_assert_msg(h.etag[0] == '"' && strlen(h.etag) > 10, "ETag %s", h.etag);
	char etag[128];
	snprintf(etag, sizeof etag, "%s", h.etag);
	char *inm = xp_asprintf("If-None-Match: %s", etag);
	struct http h2 = http("GET", a, "/v1/node", NULL, inm, NULL);
	ck_assert_int_eq(h2.code, 304);
	ck_assert_uint_eq(h2.len, 0);
	/* No Content-Length 0 on a 304: the 200's, or none. */
	ck_assert_msg(h2.clen[0] == '\0' || strtoull(h2.clen, NULL, 10) == h.len, "304 Content-Length %s", h2.clen);
	ck_assert_str_eq(h2.etag, etag);
	free(h2.body);
	/* Several rediscoveries later: the same node, the same generation and ETag. */
	nanosleep(&(struct timespec){1, 200000000}, NULL);
	h2 = http("GET", a, "/v1/node", NULL, inm, NULL);
	ck_assert_int_eq(h2.code, 304);
	free(h2.body);
	h2 = http("GET", a, "/v1/node", NULL, "If-None-Match: \"other\"", NULL);
	ck_assert_int_eq(h2.code, 200);
	ck_assert_str_eq(h2.etag, etag);
	j = http_json(&h2);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "generation")), 1);
	json_decref(j);
	/* Strong ETag: the same body byte for byte. */
	ck_assert_uint_eq(h2.len, h.len);
	ck_assert_mem_eq(h2.body, h.body, h.len);
	free(h2.body);
	/* If-None-Match: weak comparison, lists and "*". */
	char *weak = xp_asprintf("If-None-Match: \"x\", W/%s", etag);
	h2 = http("GET", a, "/v1/node", NULL, weak, NULL);
	ck_assert_int_eq(h2.code, 304);
	free(h2.body);
	free(weak);
	h2 = http("GET", a, "/v1/node", NULL, "If-None-Match: *", NULL);
	ck_assert_int_eq(h2.code, 304);
	free(h2.body);
	free(inm);
	free(h.body);

	h = http("GET", a, "/v1/health", NULL, NULL, NULL);
	ck_assert_int_eq(h.code, 200);
	j = http_json(&h);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "ok");
	ck_assert_str_eq(json_string_value(json_object_get(j, "node")), "node-a");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "generation")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "devices")), 1);
	ck_assert(json_is_null(json_object_get(j, "error")));
	ck_assert(json_is_number(json_object_get(j, "discovery_ms")));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "devices_health"), "ok")) +
				 json_integer_value(json_object_get(json_object_get(j, "devices_health"), "unknown")),
			 1);
	json_decref(j);
	free(h.body);

	/* Unknown paths and methods. */
	h = http("GET", a, "/v1/nothing", NULL, NULL, NULL);
	ck_assert_int_eq(h.code, 404);
	j = http_json(&h);
	ck_assert(json_is_string(json_object_get(j, "error")));
	json_decref(j);
	free(h.body);
	h = http("DELETE", a, "/v1/node", NULL, NULL, NULL);
	ck_assert_int_eq(h.code, 405);
	ck_assert_str_eq(h.allow, "GET, HEAD");
	free(h.body);
	h = http("GET", a, "/v1/probe/x", NULL, NULL, NULL);
	ck_assert_int_eq(h.code, 405);
	ck_assert_str_eq(h.allow, "POST");
	free(h.body);
	ck_assert_int_eq(agent_stop(a), 0);
}
END_TEST

/* Rediscovery: a changed node bumps the generation and the ETag; a failed rediscovery keeps
 * the last good node served, with health degraded, until discovery works again. */
/* GET /v1/health until its status is want (rediscovery runs every 0.2 s; up to 10 s), the
 * last reply returned either way for the caller's checks. */
static struct http health_when(const struct agent *a, const char *want)
{
	struct http h = {0};
	for (int i = 0; i < 100; i++) {
		h = http("GET", a, "/v1/health", NULL, NULL, NULL);
		ck_assert_int_eq(h.code, 200);
		char pat[64];
		snprintf(pat, sizeof pat, "\"status\":\"%s\"", want);
		if (strstr(h.body, pat) || i == 99)
			break;
		free(h.body);
		nanosleep(&(struct timespec){0, 100000000}, NULL);
	}
	return h;
}

START_TEST(rediscovery)
{
	struct agent *a = AGENT("--replay", nv, "agent", "--listen", "127.0.0.1:0", "--interval", "0.2");
	struct http h = http("GET", a, "/v1/node", NULL, NULL, NULL);
	ck_assert_int_eq(h.code, 200);
	ck_assert_ptr_nonnull(strstr(h.body, "\"name\":\"dgx-a100-07\""));
	char *inm = xp_asprintf("If-None-Match: %s", h.etag);
	free(h.body);
	char *host = xp_asprintf("%s/hostname", nv), *tmp = xp_asprintf("%s/hostname.new", nv);
	/* Replaced whole (a rename), as an operator's tools do: a rediscovery between a
	 * truncation and a write would see a third name, and one change more. */
	write_text(tmp, "dgx-a100-08\n", 0644);
	ck_assert_int_eq(rename(tmp, host), 0);
	free(tmp);
	/* Waited for, not slept on: the next rediscoveries (every 0.2 s) see the new name. */
	json_t *j = NULL;
	for (int i = 0; i < 100; i++) {
		h = http("GET", a, "/v1/node", NULL, inm, NULL);
		ck_assert_msg(h.code == 200 || h.code == 304, "code %ld", h.code);
		if (h.code == 200 && strstr(h.body, "\"name\":\"dgx-a100-08\""))
			break;
		free(h.body);
		h.body = NULL;
		nanosleep(&(struct timespec){0, 100000000}, NULL);
	}
	ck_assert_ptr_nonnull(h.body);
	j = http_json(&h);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "generation")), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(j, "nodes"), 0), "name")),
			 "dgx-a100-08");
	json_decref(j);
	free(h.body);

	char *moved = xp_asprintf("%s.moved", nv);
	ck_assert_int_eq(rename(nv, moved), 0);
	h = health_when(a, "degraded");
	j = http_json(&h);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "degraded");
	ck_assert_msg(json_is_string(json_object_get(j, "error")), "%s", h.body);
	json_decref(j);
	free(h.body);
	h = http("GET", a, "/v1/node", NULL, NULL, NULL);
	ck_assert_int_eq(h.code, 200);
	ck_assert_ptr_nonnull(strstr(h.body, "\"name\":\"dgx-a100-08\""));
	free(h.body);
	h = http("GET", a, "/metrics", NULL, NULL, NULL);
	ck_assert_ptr_null(strstr(h.body, "xpool_agent_discovery_errors_total 0\n"));
	free(h.body);
	ck_assert_int_eq(rename(moved, nv), 0);
	h = health_when(a, "ok");
	j = http_json(&h);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "ok");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "generation")), 2);
	json_decref(j);
	free(h.body);
	ck_assert_int_eq(agent_stop(a), 0);
	free(moved);
	free(host);
	free(inm);
}
END_TEST

/* Runs promtool check metrics on text; its output (caller frees) and exit status. */
static int promtool(const char *text, char **out)
{
	char *argv[] = {"/usr/bin/promtool", "check", "metrics", NULL};
	struct xp_run r;
	ck_assert_int_eq(xp_run_argv(&r, argv, text), 0);
	*out = xp_asprintf("%s%s", r.out, r.err);
	int st = r.status;
	xp_run_free(&r);
	return st;
}

START_TEST(metrics_promtool)
{
	ck_assert_msg(access("/usr/bin/promtool", X_OK) == 0, "promtool is missing (make check installs it)");
	struct agent *a = AGENT("--replay", asc, "agent", "--listen", "127.0.0.1:0", "--name", "npu \"7\"\\x");
	struct agent *b = AGENT("--replay", nv, "agent", "--listen", "127.0.0.1:0");
	struct agent *both[] = {a, b};
	for (int i = 0; i < 2; i++) {
		struct http h = http("GET", both[i], "/metrics", NULL, NULL, NULL);
		ck_assert_int_eq(h.code, 200);
		ck_assert_str_eq(h.ctype, "text/plain; version=0.0.4; charset=utf-8");
		char *out;
		int st = promtool(h.body, &out);
		ck_assert_msg(st == 0 && out[0] == '\0', "promtool: exit %d: %s\n%s", st, out, h.body);
		free(out);
		ck_assert_ptr_nonnull(strstr(h.body, "# TYPE xpool_device_health gauge"));
		ck_assert_ptr_nonnull(strstr(h.body, "xpool_agent_generation 1\n"));
		ck_assert_ptr_nonnull(strstr(h.body, "xpool_agent_discovery_duration_seconds "));
		ck_assert_ptr_nonnull(strstr(h.body, "xpool_agent_last_discovery_timestamp_seconds "));
		ck_assert_ptr_eq(strstr(h.body, "NaN"), NULL);
		if (i == 0) {
			/* 8 NPUs and the hwloc.xml's 4 GPUs, the node name's quote and backslash escaped. */
			ck_assert_ptr_nonnull(strstr(h.body, "xpool_node_devices{node=\"npu \\\"7\\\"\\\\x\"} 12\n"));
			ck_assert_ptr_nonnull(strstr(h.body, "xpool_device_memory_total_bytes{node=\"npu \\\"7\\\"\\\\x\",vendor=\"Huawei\""));
			ck_assert_ptr_nonnull(strstr(h.body, "xpool_device_temperature_celsius{"));
			ck_assert_ptr_nonnull(strstr(h.body, "xpool_device_power_watts{"));
		} else {
			ck_assert_ptr_nonnull(strstr(h.body, "xpool_device_health{node=\"dgx-a100-07\",vendor=\"NVIDIA\","
							     "model=\"A100 80GB\",bus_id=\"0000:01:00.0\",index=\"0\""));
			ck_assert_ptr_nonnull(strstr(h.body, "xpool_device_ecc_uncorrected_errors_total{"));
			ck_assert_ptr_nonnull(strstr(h.body, "xpool_device_memory_total_bytes{node=\"dgx-a100-07\""));
		}
		free(h.body);
		/* The first scrape is counted by the second. */
		h = http("GET", both[i], "/metrics", NULL, NULL, NULL);
		ck_assert_ptr_nonnull(strstr(h.body, "xpool_agent_requests_total{path=\"/metrics\",code=\"200\"} 1\n"));
		free(h.body);
	}
	ck_assert_int_eq(agent_stop(a), 0);
	ck_assert_int_eq(agent_stop(b), 0);
}
END_TEST

START_TEST(read_token)
{
	char *tok = xp_write_file(dir, "read.token", "s3cret-read\n", 0600);
	struct agent *a = AGENT("--replay", nv, "agent", "--listen", "127.0.0.1:0", "--token-file", tok);
	const char *paths[] = {"/v1/node", "/v1/health", "/metrics", "/nowhere"};
	for (size_t i = 0; i < 4; i++) {
		struct http h = http("GET", a, paths[i], NULL, NULL, NULL);
		ck_assert_int_eq(h.code, 401);
		ck_assert_msg(strncmp(h.www_auth, "Bearer", 6) == 0, "WWW-Authenticate: %s", h.www_auth);
		free(h.body);
		h = http("GET", a, paths[i], "s3cret-reax", NULL, NULL);
		ck_assert_int_eq(h.code, 401);
		free(h.body);
		h = http("GET", a, paths[i], "s3cret-read-and-more", NULL, NULL);
		ck_assert_int_eq(h.code, 401);
		free(h.body);
		h = http("GET", a, paths[i], "s3cret-read", NULL, NULL);
		ck_assert_int_eq(h.code, i == 3 ? 404 : 200);
		free(h.body);
	}
	struct http h = http("GET", a, "/v1/node", NULL, "Authorization: Basic czNjcmV0LXJlYWQ=", NULL);
	ck_assert_int_eq(h.code, 401);
	free(h.body);
	ck_assert_int_eq(agent_stop(a), 0);

	/* Token files others may read, empty ones and missing ones are refused, naming the file. */
	int st;
	char *err;
	write_text(tok, "s3cret-read\n", 0644);
	ck_assert_ptr_null(agent_try(&st, &err, "--replay", nv, "agent", "--listen", "127.0.0.1:0", "--token-file", tok, NULL));
	ck_assert_int_eq(st, 1);
	ck_assert_msg(strstr(err, tok) != NULL, "%s", err);
	ck_assert_ptr_null(strstr(err, "s3cret"));
	free(err);
	write_text(tok, "\n", 0600);
	ck_assert_ptr_null(agent_try(&st, &err, "--replay", nv, "agent", "--listen", "127.0.0.1:0", "--write-token-file", tok, NULL));
	ck_assert_int_eq(st, 1);
	ck_assert_msg(strstr(err, tok) != NULL, "%s", err);
	free(err);
	char *big = xp_calloc(1, 5000);
	memset(big, 'x', 4999);
	write_text(tok, big, 0600);
	free(big);
	ck_assert_ptr_null(agent_try(&st, &err, "--replay", nv, "agent", "--listen", "127.0.0.1:0", "--token-file", tok, NULL));
	ck_assert_int_eq(st, 1);
	ck_assert_msg(strstr(err, tok) != NULL, "%s", err);
	free(err);
	free(tok);
}
END_TEST

START_TEST(bind_rules)
{
	int st;
	char *err;
	ck_assert_ptr_null(agent_try(&st, &err, "--replay", nv, "agent", "--listen", "0.0.0.0:0", NULL));
	ck_assert_int_eq(st, 2);
	ck_assert_msg(strstr(err, "without --token-file") != NULL, "%s", err);
	free(err);
	ck_assert_ptr_null(agent_try(&st, &err, "--replay", nv, "agent", "--listen", "[::]:0", NULL));
	ck_assert_int_eq(st, 2);
	free(err);
	const char *bad[] = {"localhost:80", "127.0.0.1", "127.0.0.1:65536", "127.0.0.1:-1", "[::1:80", "::1:80"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_ptr_null(agent_try(&st, &err, "--replay", nv, "agent", "--listen", bad[i], NULL));
		ck_assert_msg(st == 2 && strstr(err, "listen address"), "%s: exit %d: %s", bad[i], st, err);
		free(err);
	}
	ck_assert_ptr_null(agent_try(&st, &err, "--replay", nv, "agent", "--interval", "0.01", NULL));
	ck_assert_int_eq(st, 2);
	free(err);
	ck_assert_ptr_null(agent_try(&st, &err, "--replay", nv, "agent", "--tls-cert", "/nonexistent", NULL));
	ck_assert_int_eq(st, 2);
	free(err);
	ck_assert_ptr_null(agent_try(&st, &err, "agent", "nosuchsub", NULL));
	ck_assert_int_eq(st, 2);
	free(err);
	/* With a token, any address; the loopback ::1 without one. */
	char *tok = xp_write_file(dir, "t", "tok\n", 0600);
	struct agent *a = AGENT("--replay", nv, "agent", "--listen", "0.0.0.0:0", "--token-file", tok);
	ck_assert_msg(strncmp(a->url, "http://0.0.0.0:", 15) == 0, "%s", a->url);
	ck_assert_int_eq(agent_stop(a), 0);
	a = agent_try(&st, &err, "--replay", nv, "agent", "--listen", "[::1]:0", NULL);
	if (a) { /* a machine without IPv6 cannot bind ::1: nothing to check there */
		ck_assert_msg(strncmp(a->url, "http://[::1]:", 13) == 0, "%s", a->url);
		struct http h = http("GET", a, "/v1/health", NULL, NULL, NULL);
		ck_assert_int_eq(h.code, 200);
		free(h.body);
		ck_assert_int_eq(agent_stop(a), 0);
	} else
		free(err);
	free(tok);
}
END_TEST

START_TEST(probes)
{
	char *rt = xp_write_file(dir, "r.token", "reader\n", 0600);
	char *wt = xp_write_file(dir, "w.token", "writer\n", 0600);
	char *cfg = xp_write_file(dir, "agent.conf",
				  "# probes this node may run\n"
				  "\n"
				  "probe hello -- /bin/echo hello \"big world\"\n"
				  "probe nope layer=launches -- false\n"
				  "probe slow timeout=0.5 -- /bin/sleep 5\n"
				  "probe sleep2 timeout=10 -- /bin/sleep 2\n"
				  "probe long timeout=30 -- /bin/sleep 20\n",
				  0644);
	struct agent *a = AGENT("--replay", nv, "agent", "--listen", "127.0.0.1:0", "--token-file", rt,
				"--write-token-file", wt, "--config", cfg, "--name", "probe-node");
	struct http h = http("POST", a, "/v1/probe/hello", NULL, NULL, NULL);
	ck_assert_int_eq(h.code, 401);
	free(h.body);
	expect_code("POST", a, "/v1/probe/hello", "reader", 401);
	h = http("POST", a, "/v1/probe/unlisted", "writer", NULL, NULL);
	ck_assert_int_eq(h.code, 404);
	json_t *j = http_json(&h);
	ck_assert(json_is_string(json_object_get(j, "error")));
	json_decref(j);
	free(h.body);
	expect_code("POST", a, "/v1/probe/..%2f..%2fbin%2fsh", "writer", 404);
	expect_code("GET", a, "/v1/probe/hello", "reader", 405);
	/* Without the read token a GET there is 401 like any other, not 405. */
	expect_code("GET", a, "/v1/probe/hello", NULL, 401);

	h = http("POST", a, "/v1/probe/hello", "writer", NULL, NULL);
	ck_assert_int_eq(h.code, 200);
	j = http_json(&h);
	ck_assert_str_eq(json_string_value(json_object_get(j, "schema")), "xpool.probe/v1");
	ck_assert_str_eq(json_string_value(json_object_get(j, "node")), "probe-node");
	ck_assert_str_eq(json_string_value(json_object_get(j, "probe")), "hello");
	ck_assert_str_eq(json_string_value(json_object_get(j, "layer")), "executes");
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "pass");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "exit")), 0);
	ck_assert(json_is_null(json_object_get(j, "signal")));
	ck_assert(json_is_false(json_object_get(j, "timed_out")));
	ck_assert_str_eq(json_string_value(json_object_get(j, "output")), "hello big world\n");
	/* sha256("hello big world\n") */
	ck_assert_uint_eq(strlen(json_string_value(json_object_get(j, "output_sha256"))), 64);
	json_t *argv = json_object_get(j, "argv");
	ck_assert_uint_eq(json_array_size(argv), 3);
	ck_assert_str_eq(json_string_value(json_array_get(argv, 2)), "big world");
	json_t *envs = json_object_get(j, "environments");
	ck_assert_uint_eq(json_array_size(envs), 1);
	ck_assert_msg(strncmp(json_string_value(json_array_get(envs, 0)), "NVIDIA:A100 80GB:535.54.03", 26) == 0, "%s",
		      json_string_value(json_array_get(envs, 0)));
	json_decref(j);
	free(h.body);

	h = http("POST", a, "/v1/probe/nope", "writer", NULL, NULL);
	ck_assert_int_eq(h.code, 200);
	j = http_json(&h);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "fail");
	ck_assert_str_eq(json_string_value(json_object_get(j, "layer")), "launches");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "exit")), 1);
	json_decref(j);
	free(h.body);

	double t0 = now_s();
	h = http("POST", a, "/v1/probe/slow", "writer", NULL, NULL);
	ck_assert_int_eq(h.code, 200);
	ck_assert_msg(now_s() - t0 < 3, "the timeout did not stop the probe");
	j = http_json(&h);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "fail");
	ck_assert(json_is_true(json_object_get(j, "timed_out")));
	ck_assert(json_is_null(json_object_get(j, "exit")));
	json_decref(j);
	free(h.body);

	/* One probe at a time: a second one while the first runs gets 409, GETs still work. */
	int fd = raw_connect(a);
	const char *req = "POST /v1/probe/sleep2 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer writer\r\n"
			  "Content-Length: 0\r\n\r\n";
	raw_send(fd, req, strlen(req));
	nanosleep(&(struct timespec){0, 300000000}, NULL);
	expect_code("POST", a, "/v1/probe/hello", "writer", 409);
	expect_code("GET", a, "/v1/health", "reader", 200);
	char *got = raw_read(fd, 5);
	close(fd);
	ck_assert_msg(strncmp(got, "HTTP/1.1 200", 12) == 0 && strstr(got, "\"status\":\"pass\""), "%s", got);
	free(got);
	expect_code("POST", a, "/v1/probe/hello", "writer", 200);
	/* A client that hangs up cancels its probe: the next one is not refused for long. */
	fd = raw_connect(a);
	req = "POST /v1/probe/long HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer writer\r\nContent-Length: 0\r\n\r\n";
	raw_send(fd, req, strlen(req));
	nanosleep(&(struct timespec){1, 0}, NULL);
	close(fd);
	t0 = now_s();
	do {
		h = http("POST", a, "/v1/probe/hello", "writer", NULL, NULL);
		if (h.code == 409 && now_s() - t0 < 3) {
			free(h.body);
			nanosleep(&(struct timespec){0, 50000000}, NULL);
			continue;
		}
		break;
	} while (1);
	ck_assert_msg(h.code == 200, "after a hang-up: %ld %s", h.code, h.body);
	ck_assert_msg(now_s() - t0 < 1.5, "the hung-up probe ran on for %.1f s", now_s() - t0);
	free(h.body);
	/* A body is refused when it is announced too large. */
	fd = raw_connect(a);
	req = "POST /v1/probe/hello HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer writer\r\nContent-Length: 100000\r\n\r\n";
	raw_send(fd, req, strlen(req));
	got = raw_read(fd, 3);
	close(fd);
	ck_assert_msg(strncmp(got, "HTTP/1.1 413", 12) == 0, "%s", got);
	free(got);
	/* Stopping while a probe runs kills it and still exits 0. */
	fd = raw_connect(a);
	req = "POST /v1/probe/sleep2 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer writer\r\n\r\n";
	raw_send(fd, req, strlen(req));
	nanosleep(&(struct timespec){0, 200000000}, NULL);
	t0 = now_s();
	ck_assert_int_eq(agent_stop(a), 0);
	ck_assert_msg(now_s() - t0 < 1.5, "stopping waited for the probe");
	/* ... and the client still gets its reply, the probe cancelled. */
	got = raw_read(fd, 2);
	close(fd);
	ck_assert_msg(strncmp(got, "HTTP/1.1 200", 12) == 0 && strstr(got, "\"cancelled\":true"), "%s", got);
	free(got);

	/* Without a write token, probes are disabled. */
	a = AGENT("--replay", nv, "agent", "--listen", "127.0.0.1:0", "--config", cfg);
	expect_code("POST", a, "/v1/probe/hello", "writer", 403);
	ck_assert_int_eq(agent_stop(a), 0);
	free(cfg);
	free(rt);
	free(wt);
}
END_TEST

/* The token is checked before anything else is said: no token gets 401, never the 413 of
 * a large body nor the 403 that tells how the agent is configured (probes off). */
START_TEST(token_first)
{
	char *rt = xp_write_file(dir, "r1.token", "reader\n", 0600);
	char *cfg = xp_write_file(dir, "a1.conf", "probe hello -- /bin/echo hello\n", 0644);
	struct agent *a = AGENT("--replay", nv, "agent", "--listen", "127.0.0.1:0", "--token-file", rt, "--config", cfg);
	struct http h = http("POST", a, "/v1/probe/hello", NULL, NULL, NULL);
	ck_assert_msg(h.code == 401 && !strstr(h.body, "disabled"), "%ld %s", h.code, h.body);
	ck_assert_msg(strncmp(h.www_auth, "Bearer", 6) == 0, "WWW-Authenticate: %s", h.www_auth);
	free(h.body);
	/* The read token's holder may know that probes are off. */
	expect_code("POST", a, "/v1/probe/hello", "reader", 403);
	/* A large Content-Length without the token: 401; with it: 413. */
	const char *paths[] = {"/v1/node", "/v1/health", "/nowhere"};
	for (size_t i = 0; i < 3; i++) {
		for (int tok = 0; tok < 2; tok++) {
			int fd = raw_connect(a);
			char *req = xp_asprintf("POST %s HTTP/1.1\r\nHost: x\r\n%sContent-Length: 100000000\r\n\r\n", paths[i],
						tok ? "Authorization: Bearer reader\r\n" : "");
			raw_send(fd, req, strlen(req));
			char *got = raw_read(fd, 5);
			close(fd);
			ck_assert_msg(strncmp(got, tok ? "HTTP/1.1 413" : "HTTP/1.1 401", 12) == 0, "%s token %d: %s",
				      paths[i], tok, got);
			free(got);
			free(req);
		}
	}
	ck_assert_int_eq(agent_stop(a), 0);
	free(cfg);
	free(rt);
}
END_TEST

START_TEST(config_errors)
{
	struct {
		const char *text, *want;
	} cases[] = {
		{"probe a -- /bin/true\n\nprobe b timeout=x -- /bin/true\n", ":3: probe b: timeout 'x'"},
		{"# c\nprobe a /bin/true\n", ":2: probe a: unknown option '/bin/true'"},
		{"probe a --\n", ":1: probe a: missing PROGRAM"},
		{"probe a -- no-such-program-xpool\n", ":1: probe a: no-such-program-xpool: program not found"},
		{"probe a -- ./rel/prog\n", ":1: probe a: ./rel/prog: give an absolute path"},
		{"probe a/b -- /bin/true\n", ":1: probe name 'a/b'"},
		{"probe a -- /bin/true\nprobe a -- /bin/true\n", ":2: probe a: defined twice"},
		{"run x\n", ":1: unknown directive 'run'"},
		{"probe a layer=deployed -- /bin/true\n", ":1: probe a: unknown layer 'deployed'"},
		{"probe a -- /bin/echo \"unterminated\n", ":1: "},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *cfg = xp_write_file(dir, "bad.conf", cases[i].text, 0644);
		int st;
		char *err;
		ck_assert_ptr_null(agent_try(&st, &err, "--replay", nv, "agent", "--listen", "127.0.0.1:0", "--config", cfg, NULL));
		char *want = xp_asprintf("%s%s", cfg, cases[i].want);
		ck_assert_msg(st == 2 && strstr(err, want), "case %zu: exit %d: %s (want %s)", i, st, err, want);
		free(want);
		free(err);
		free(cfg);
	}
	int st;
	char *err;
	ck_assert_ptr_null(agent_try(&st, &err, "--replay", nv, "agent", "--config", "/nonexistent.conf", NULL));
	ck_assert_int_eq(st, 2);
	ck_assert_msg(strstr(err, "/nonexistent.conf") != NULL, "%s", err);
	free(err);
}
END_TEST

/* A client that sends half a request, or a 64 KiB header, does not stop others being served. */
START_TEST(slow_and_oversized_clients)
{
	struct agent *a = AGENT("--replay", asc, "agent", "--listen", "127.0.0.1:0", "--max-connections", "16");
	int slow[4];
	for (int i = 0; i < 4; i++) {
		slow[i] = raw_connect(a);
		raw_send(slow[i], "GET /v1/node HTTP/1.1\r\nHost: x\r\n", 32);
	}
	int idle = raw_connect(a);
	double t0 = now_s();
	struct http h = http("GET", a, "/v1/node", NULL, NULL, NULL);
	ck_assert_int_eq(h.code, 200);
	ck_assert_msg(now_s() - t0 < 2, "served after %.1f s", now_s() - t0);
	free(h.body);

	int big = raw_connect(a);
	size_t n = 70000;
	char *req = xp_malloc(n + 200);
	int k = snprintf(req, 200, "GET /v1/node HTTP/1.1\r\nHost: x\r\nX-Big: ");
	memset(req + k, 'a', n);
	memcpy(req + k + n, "\r\n\r\n", 5);
	raw_send(big, req, strlen(req));
	free(req);
	char *got = raw_read(big, 3);
	close(big);
	/* Refused (431) or cut off, never served. */
	ck_assert_msg(strncmp(got, "HTTP/1.1 200", 12) != 0, "a 70 KB header was served");
	ck_assert_msg(got[0] == '\0' || strncmp(got, "HTTP/1.1 431", 12) == 0 || strncmp(got, "HTTP/1.1 4", 10) == 0,
		      "%s", got);
	free(got);
	expect_code("GET", a, "/metrics", NULL, 200);
	/* A chunked body (no Content-Length) over 4 KiB: 413 once it has ended. */
	int ch = raw_connect(a);
	const char *head = "POST /v1/health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2000\r\n";
	raw_send(ch, head, strlen(head));
	char *chunk = xp_malloc(0x2000 + 16);
	memset(chunk, 'c', 0x2000);
	memcpy(chunk + 0x2000, "\r\n0\r\n\r\n", 8);
	raw_send(ch, chunk, 0x2000 + 7);
	free(chunk);
	got = raw_read(ch, 3);
	close(ch);
	ck_assert_msg(strncmp(got, "HTTP/1.1 413", 12) == 0 && strstr(got, "\"error\""), "%s", got);
	free(got);
	/* A long URL too. */
	char *url = xp_malloc(40010);
	memcpy(url, "/v1/", 4);
	memset(url + 4, 'b', 40000);
	url[40004] = '\0';
	int u = raw_connect(a);
	char *line = xp_asprintf("GET %s HTTP/1.1\r\nHost: x\r\n\r\n", url);
	raw_send(u, line, strlen(line));
	got = raw_read(u, 3);
	ck_assert_msg(strncmp(got, "HTTP/1.1 200", 12) != 0 && strncmp(got, "HTTP/1.1 404", 12) != 0, "%.40s", got);
	free(got);
	free(line);
	free(url);
	close(u);
	for (int i = 0; i < 4; i++)
		close(slow[i]);
	close(idle);
	expect_code("GET", a, "/v1/health", NULL, 200);
	ck_assert_int_eq(agent_stop(a), 0);
}
END_TEST

/* Slowloris: one client address holds at most its share of the connections (a quarter of
 * --max-connections, at least 8; past it, its longest-waiting one is shed), so idle sockets
 * from it leave room for everyone else; and a
 * request has 10 s to arrive in full, however it trickles. */
START_TEST(slow_clients_bounded)
{
	struct agent *a = AGENT("--replay", asc, "agent", "--listen", "127.0.0.1:0", "--max-connections", "64");
	int idle[16];
	for (int i = 0; i < 16; i++)
		idle[i] = raw_connect(a);
	nanosleep(&(struct timespec){0, 300000000}, NULL);
	/* Over the share of 16: the address's socket that has waited longest makes room. */
	int over = raw_connect(a);
	ck_assert_msg(raw_closed(idle[0], 2), "a 17th idle socket from one address shed nothing");
	ck_assert_msg(!raw_closed(over, 0.1), "the 17th idle socket was closed at once");
	ck_assert_msg(!raw_closed(idle[1], 0.1), "the second longest-waiting socket was shed too");
	/* Another client is served meanwhile. */
	int other = raw_connect_from(a, "127.0.0.2");
	const char *req = "GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	raw_send(other, req, strlen(req));
	char *got = raw_read(other, 3);
	close(other);
	ck_assert_msg(strncmp(got, "HTTP/1.1 200", 12) == 0, "%s", got);
	free(got);
	/* A header line every second never makes it idle, but the deadline cuts it. */
	double t0 = now_s();
	int slow = raw_connect_from(a, "127.0.0.3");
	raw_send(slow, "GET /v1/health HTTP/1.1\r\n", 25);
	bool cut = false;
	while (!cut && now_s() - t0 < 14) {
		raw_send(slow, "X-A: b\r\n", 8);
		cut = raw_closed(slow, 1);
	}
	double took = now_s() - t0;
	close(slow);
	ck_assert_msg(cut && took > 8.5 && took < 12.5, "trickling client: cut %d after %.1f s", cut, took);
	/* The idle ones are long gone (idle timeout), and the first address is served again. */
	for (int i = 0; i < 16; i++) {
		ck_assert_msg(raw_closed(idle[i], 0.2), "idle socket %d still open after %.1f s", i, now_s() - t0);
		close(idle[i]);
	}
	ck_assert_msg(raw_closed(over, 0.2), "the 17th idle socket still open after %.1f s", now_s() - t0);
	close(over);
	struct http h = http("GET", a, "/v1/health", NULL, NULL, NULL);
	ck_assert_int_eq(h.code, 200);
	free(h.body);
	ck_assert_int_eq(agent_stop(a), 0);
}
END_TEST

/* Eight addresses with 16 trickling connections each (each within its per-address share,
 * together twice the 64 slots): a new client is still answered, and before the request
 * deadline (10 s) would have freed any slot, the earliest a full agent could take it. */
START_TEST(crowded_slots)
{
	struct agent *a = AGENT("--replay", asc, "agent", "--listen", "127.0.0.1:0", "--max-connections", "64");
	enum { ADDRS = 8, EACH = 16, DEADLINE_S = 10 };
	int slow[ADDRS * EACH];
	double t_first = now_s();
	for (int i = 0; i < ADDRS * EACH; i++) {
		char src[32];
		snprintf(src, sizeof src, "127.0.0.%d", 2 + i / EACH);
		slow[i] = raw_connect_from(a, src);
		raw_send(slow[i], "GET /v1/health HTTP/1.1\r\n", 25);
	}
	int good = raw_connect(a);
	const char *req = "GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	raw_send(good, req, strlen(req));
	/* The tricklers send a header line a second (never idle for the 5 s timeout) while the
	 * good client waits; given up a little after the deadline so that a full agent fails
	 * here rather than passing late. */
	bool answered = false;
	double answered_at = 0;
	while (!answered && now_s() < t_first + DEADLINE_S + 2) {
		answered = raw_readable(good, now_s() + 1);
		answered_at = now_s();
		for (int i = 0; !answered && i < ADDRS * EACH; i++)
			raw_send(slow[i], "X-A: b\r\n", 8);
	}
	ck_assert_msg(answered, "the good client got nothing in %.1f s", now_s() - t_first);
	char *got = raw_read(good, 3);
	close(good);
	ck_assert_msg(strncmp(got, "HTTP/1.1 200", 12) == 0, "%s", got);
	ck_assert_msg(answered_at < t_first + DEADLINE_S, "answered only after %.1f s: slots freed by the deadline",
		      answered_at - t_first);
	free(got);
	for (int i = 0; i < ADDRS * EACH; i++)
		close(slow[i]);
	ck_assert_int_eq(agent_stop(a), 0);
}
END_TEST

/* One address's tricklers do not lock out the others behind it (every local console is
 * 127.0.0.1; behind NAT everyone shares an address): at its share, a new connection from the
 * address sheds that address's connection that has waited longest for a complete request,
 * so a good request from the same address is answered however often the tricklers reconnect. */
START_TEST(one_address_shared)
{
	char *tok = xp_write_file(dir, "share.token", "s3cret-share\n", 0600);
	struct agent *a = AGENT("--replay", asc, "agent", "--listen", "127.0.0.1:0", "--max-connections", "64",
				"--token-file", tok);
	enum { EACH = 16, ROUNDS = 3 };
	const char *head = "GET /v1/health HTTP/1.1\r\nHost: x\r\n";
	/* The agent accepts in the order the connections arrived (the listen backlog is FIFO):
	 * slow[0] has waited longest. */
	int slow[EACH];
	for (int i = 0; i < EACH; i++) {
		slow[i] = raw_connect(a);
		raw_send(slow[i], head, strlen(head));
	}
	const char *req = "GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
			  "Authorization: Bearer s3cret-share\r\n\r\n";
	for (int round = 0; round < ROUNDS; round++) {
		int good = raw_connect(a);
		raw_send(good, req, strlen(req));
		char *got = raw_read(good, 3);
		close(good);
		ck_assert_msg(strncmp(got, "HTTP/1.1 200", 12) == 0, "round %d: the good request got '%.40s'", round,
			      got);
		free(got);
		/* The trickler that waited longest made room; the attacker reconnects it (now the newest)
		 * and keeps the others trickling. */
		int shed = -1;
		for (int i = 0; i < EACH && shed < 0; i++)
			if (raw_closed(slow[i], 0.05))
				shed = i;
		ck_assert_msg(shed == round, "round %d: trickler %d was shed, not the longest-waiting", round, shed);
		close(slow[shed]);
		for (int i = 0; i < EACH; i++)
			if (i != shed)
				raw_send(slow[i], "X-A: b\r\n", 8);
		slow[shed] = raw_connect(a);
		raw_send(slow[shed], head, strlen(head));
	}
	for (int i = 0; i < EACH; i++)
		close(slow[i]);
	free(tok);
	ck_assert_int_eq(agent_stop(a), 0);
}
END_TEST

/* Vendor tools the agent runs on rediscovery start from the default signal state, not the
 * agent's (SIGTERM, SIGINT, SIGHUP blocked, SIGPIPE ignored). */
START_TEST(tool_signals)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	const char *argv[] = {"/bin/grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status", NULL};
	char *out = NULL, err[256] = "";
	size_t len = 0;
	ck_assert_msg(xp_run_tool(argv, 10, 1 << 16, &out, &len, err, sizeof err) == 0, "%s", err);
	const char *blk = strstr(out, "SigBlk:"), *ign = strstr(out, "SigIgn:");
	ck_assert_msg(blk && ign, "%s", out);
	unsigned long long b = strtoull(blk + 7, NULL, 16), i = strtoull(ign + 7, NULL, 16);
	ck_assert_msg(b == 0, "the tool started with signals blocked: %s", out);
	ck_assert_msg(!(i & (1ULL << (SIGPIPE - 1))), "the tool started with SIGPIPE ignored: %s", out);
	free(out);
}
END_TEST

START_TEST(https)
{
	char *key = path_in("key.pem"), *cert = path_in("cert.pem");
	xp_self_signed(key, cert);
	chmod(key, 0600);
	int st;
	char *err;
	ck_assert_ptr_null(agent_try(&st, &err, "--replay", nv, "agent", "--listen", "127.0.0.1:0", "--tls-cert", cert, NULL));
	ck_assert_int_eq(st, 2);
	ck_assert_msg(strstr(err, "go together") != NULL, "%s", err);
	free(err);
	/* A key that is not a key: refused at startup (by the TLS library: the file is private). */
	chmod(cert, 0600);
	ck_assert_ptr_null(agent_try(&st, &err, "--replay", nv, "agent", "--listen", "127.0.0.1:0", "--tls-cert", cert,
				     "--tls-key", cert, NULL));
	ck_assert_int_eq(st, 1);
	ck_assert_msg(strstr(err, "others may read") == NULL, "%s", err);
	free(err);
	chmod(cert, 0644);
	/* A key others may read is refused, as ssh refuses such a private key, through a link too
	 * (one is followed: certbot's privkey.pem is one). */
	chmod(key, 0604);
	ck_assert_ptr_null(agent_try(&st, &err, "--replay", nv, "agent", "--listen", "127.0.0.1:0", "--tls-cert", cert,
				     "--tls-key", key, NULL));
	ck_assert_int_eq(st, 1);
	ck_assert_msg(strstr(err, "TLS key file") && strstr(err, "others may read it (mode 604)"), "%s", err);
	free(err);
	chmod(key, 0600);
	char *link = path_in("key-link.pem");
	ck_assert_int_eq(symlink(key, link), 0);
	chmod(key, 0644);
	ck_assert_ptr_null(agent_try(&st, &err, "--replay", nv, "agent", "--listen", "127.0.0.1:0", "--tls-cert", cert,
				     "--tls-key", link, NULL));
	ck_assert_int_eq(st, 1);
	ck_assert_msg(strstr(err, "TLS key file") && strstr(err, "others may read it (mode 644)"), "%s", err);
	free(err);
	chmod(key, 0600);
	struct agent *a = AGENT("--replay", nv, "agent", "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", link);
	free(link);
	ck_assert_msg(strncmp(a->url, "https://127.0.0.1:", 18) == 0, "%s", a->url);
	struct http h = http("GET", a, "/v1/node", NULL, NULL, cert);
	ck_assert_int_eq(h.code, 200);
	ck_assert_ptr_nonnull(strstr(h.body, "\"xpool.inventory/v1\""));
	free(h.body);
	/* A plain HTTP client gets nowhere, and the agent carries on. */
	int fd = raw_connect(a);
	raw_send(fd, "GET /v1/node HTTP/1.1\r\nHost: x\r\n\r\n", 34);
	char *got = raw_read(fd, 2);
	ck_assert_ptr_null(strstr(got, "inventory"));
	free(got);
	close(fd);
	h = http("GET", a, "/v1/health", NULL, NULL, cert);
	ck_assert_int_eq(h.code, 200);
	free(h.body);
	ck_assert_int_eq(agent_stop(a), 0);
	free(key);
	free(cert);
}
END_TEST

/* --inventory: a one-node snapshot serves as is; a multi-node one needs --name. */
START_TEST(inventory_source)
{
	const char *doc = "{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"n1\"},{\"name\":\"n2\"}]}";
	char *snap = xp_write_file(dir, "snap.json", doc, 0644);
	int st;
	char *err;
	ck_assert_ptr_null(agent_try(&st, &err, "--inventory", snap, "agent", "--listen", "127.0.0.1:0", NULL));
	ck_assert_int_eq(st, 1);
	ck_assert_msg(strstr(err, "holds 2 nodes") != NULL, "%s", err);
	free(err);
	ck_assert_ptr_null(agent_try(&st, &err, "--inventory", snap, "agent", "--listen", "127.0.0.1:0", "--name", "n3", NULL));
	ck_assert_int_eq(st, 1);
	free(err);
	struct agent *a = AGENT("--inventory", snap, "agent", "--listen", "127.0.0.1:0", "--name", "n2");
	struct http h = http("GET", a, "/v1/node", NULL, NULL, NULL);
	ck_assert_int_eq(h.code, 200);
	json_t *j = http_json(&h);
	json_t *nodes = json_object_get(j, "nodes");
	ck_assert_uint_eq(json_array_size(nodes), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(nodes, 0), "name")), "n2");
	json_decref(j);
	free(h.body);
	ck_assert_int_eq(agent_stop(a), 0);
	free(snap);
}
END_TEST

/* A token path swapped for a FIFO (nobody writing) is refused at once, not waited on. */
START_TEST(token_fifo)
{
	char *p = path_in("fifo.token");
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	struct xp_err err = {{0}};
	double t0 = now_s();
	char *t = xp_token_read(p, &err);
	ck_assert_ptr_null(t);
	ck_assert_msg(now_s() - t0 < 2, "took %.1f s", now_s() - t0);
	ck_assert_msg(strstr(err.msg, "not a regular file") != NULL, "%s", err.msg);
	unlink(p);
	/* A token file that is a link is refused, saying so (not "too many levels of links"). */
	char *real = path_in("real.token");
	FILE *f = fopen(real, "w");
	ck_assert_ptr_nonnull(f);
	fputs("s3cret-token\n", f);
	fclose(f);
	chmod(real, 0600);
	ck_assert_int_eq(symlink(real, p), 0);
	ck_assert_ptr_null(xp_token_read(p, &err));
	ck_assert_msg(strstr(err.msg, "a symbolic link: give the file it points to") != NULL, "%s", err.msg);
	t = xp_token_read(real, &err);
	ck_assert_msg(t && !strcmp(t, "s3cret-token"), "%s", err.msg);
	free(t);
	unlink(p);
	free(real);
	free(p);
}
END_TEST

/* Waits up to 5 s for the agent's stderr to hold what. */
static bool err_says(const struct agent *a, const char *what)
{
	double end = now_s() + 5;
	do {
		char *e = agent_err(a);
		bool yes = e && strstr(e, what);
		free(e);
		if (yes)
			return true;
		usleep(20000);
	} while (now_s() < end);
	return false;
}

/* A stolen read token is revoked without a restart: the file is rewritten and SIGHUP read it
 * again. A file that cannot be read then keeps the tokens in use; the old ones stop working. */
START_TEST(token_rotation)
{
	char *rtok = xp_write_file(dir, "rot-read.token", "first-read\n", 0600);
	char *wtok = xp_write_file(dir, "rot-write.token", "first-write\n", 0600);
	struct agent *a = AGENT("--replay", nv, "agent", "--listen", "127.0.0.1:0", "--token-file", rtok,
				"--write-token-file", wtok);
	expect_code("GET", a, "/v1/node", "first-read", 200);
	write_text(rtok, "second-read\n", 0600);
	write_text(wtok, "second-write\n", 0600);
	/* Nothing changes until SIGHUP. */
	expect_code("GET", a, "/v1/node", "first-read", 200);
	kill(a->pid, SIGHUP);
	ck_assert_msg(err_says(a, "token files read again"), "no rotation line");
	expect_code("GET", a, "/v1/node", "first-read", 401);
	expect_code("GET", a, "/v1/node", "second-read", 200);
	/* The write token rotated too: the old one is no longer a write token, the new one is
	 * (a probe the config lacks is 404 only past the token check). */
	expect_code("POST", a, "/v1/probe/nothing", "first-write", 401);
	expect_code("POST", a, "/v1/probe/nothing", "second-write", 404);
	/* A token file others may read is refused at SIGHUP as at start: both tokens stay. */
	write_text(rtok, "third-read\n", 0644);
	kill(a->pid, SIGHUP);
	ck_assert_msg(err_says(a, "the tokens in use stay"), "no refusal line");
	expect_code("GET", a, "/v1/node", "second-read", 200);
	expect_code("GET", a, "/v1/node", "third-read", 401);
	char *e = agent_err(a);
	ck_assert_msg(strstr(e, "rot-read.token") != NULL, "%s", e);
	ck_assert_msg(strstr(e, "read") && !strstr(e, "second-") && !strstr(e, "third-") && !strstr(e, "first-"),
		      "a token reached the log: %s", e);
	free(e);
	ck_assert_int_eq(agent_stop(a), 0);
	free(rtok);
	free(wtok);
}
END_TEST

/* --hide-args: a reader (with a stolen read token, say) sees each process's program, never
 * the arguments that may hold a secret. */
START_TEST(hide_args)
{
	const char *doc = "{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"n1\",\"devices\":[{\"index\":0,"
			  "\"processes\":[{\"pid\":5762,\"user\":\"alice\",\"command\":\"python train.py "
			  "--api-key=hunter2\",\"memory_mib\":1005}]}]}]}";
	char *snap = xp_write_file(dir, "procs.json", doc, 0644);
	for (int hide = 0; hide < 2; hide++) {
		struct agent *a = hide ? AGENT("--inventory", snap, "agent", "--listen", "127.0.0.1:0", "--hide-args")
				       : AGENT("--inventory", snap, "agent", "--listen", "127.0.0.1:0");
		struct http h = http("GET", a, "/v1/node", NULL, NULL, NULL);
		ck_assert_int_eq(h.code, 200);
		json_t *j = http_json(&h);
		json_t *pr = json_array_get(json_object_get(json_array_get(json_object_get(json_array_get(
			json_object_get(j, "nodes"), 0), "devices"), 0), "processes"), 0);
		ck_assert_str_eq(json_string_value(json_object_get(pr, "command")),
				 hide ? "python" : "python train.py --api-key=hunter2");
		ck_assert_str_eq(json_string_value(json_object_get(pr, "user")), "alice");
		ck_assert_msg(hide == !strstr(h.body, "hunter2"), "%s", h.body);
		json_decref(j);
		free(h.body);
		ck_assert_int_eq(agent_stop(a), 0);
	}
	free(snap);
}
END_TEST

XP_DEFINE_SUITE(agent_server,
	{"agent", .timeout_s = 60, .setup = setup, .teardown = teardown,
	 .tests = {node_etag_health, rediscovery, metrics_promtool, read_token, bind_rules, probes, token_first,
		   config_errors, slow_and_oversized_clients, slow_clients_bounded, crowded_slots, one_address_shared, tool_signals,
		   https, inventory_source, token_rotation, hide_args, token_fifo}})
