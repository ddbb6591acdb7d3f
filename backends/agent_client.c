/* agent_client.c: polling many node agents at once with libcurl's multi interface. */
#include "agent_client.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "agent_token.h"
#include "format.h"
#include "model_json.h"
#include "nameset.h"

/* Most lines kept in the change log between two takes; older ones are dropped. */
#define LOG_CAP 1024
/* Longest ETag kept: longer ones are not a cache key worth sending back. */
#define MAX_ETAG 256

struct agent {
	char *url;       /* as given, without a trailing '/' */
	char *node_url;  /* url + "/v1/node" */
	bool hist_done;  /* the history was asked for with a good answer (or is not wanted) */
	bool hist_asked; /* the request in flight asks for it */
	char *token;     /* bearer token, NULL for none; never printed */
	CURL *easy;      /* kept between polls, so the connection is reused */
	struct curl_slist *headers;
	char errbuf[CURL_ERROR_SIZE]; /* curl's own words for the last failure */
	char etag[MAX_ETAG + 1];     /* of the data we hold, "" for none */
	char new_etag[MAX_ETAG + 1]; /* from the reply in flight */
	char *body;
	size_t len, cap;
	bool too_big, in_flight, done;
	CURLcode res;      /* how the transfer ended, when done */
	struct xp_node *data; /* the last good node, NULL before one (each cluster gets a copy) */
	char *node;        /* its name: the identity this agent is held to */
	bool up, ever;
	char *error;
	time_t last_ok, next_try;
	double latency_ms;
	int64_t generation;
	unsigned fails;
	uint64_t polls, not_modified, rejected;
	/* The agent's clock: from the reply in flight (X-Xpool-Time, else Date; 0 for none), when
	 * the reply came by ours, and the last skew measured (agent minus console, seconds). */
	double new_clock, recv_real, skew_s;
	bool have_skew;
	struct xp_agent_pool *pool;
	struct shard *shard; /* whose multi handle runs its transfers */
	/* The node as clusters show it (xp_agent_pool_cluster_kept), shared by every cluster built
	 * since it was made; made again only when version moves (new data, up or down). */
	struct xp_node *built;
	uint64_t version, built_version;
};

/* Most agents in one shard (see xp_agent_pool.sh). */
#define SHARD_AGENTS 256

/* One multi handle and the agents whose transfers (and kept connections) are in it. */
struct shard {
	CURLM *multi;
	struct xp_agent_pool *pool;
	uint32_t id;          /* its index in pool->sh, in the high half of its sockets' epoll data */
	size_t agents;        /* agents assigned to it */
	int running;          /* transfers in progress */
	long timer_ms;        /* curl's timer: -1 none, else due in this many ms from timer_set */
	double timer_set;     /* when curl set it (monotonic s) */
};

struct xp_agent_pool {
	struct xp_agent_pool_opts o;
	char *ca_file;
	/* The agents are spread over shards of at most SHARD_AGENTS, each its own multi handle
	 * and connection cache: curl 7.88 walks every cached connection of a multi each time a
	 * transfer is removed from it, which over one multi of 10,000 agents was quadratic. */
	struct shard **sh;
	size_t n_sh;
	/* The poll waits on the sockets curl names (CURLMOPT_SOCKETFUNCTION) and acts on the one
	 * that is ready (curl_multi_socket_action): a cycle costs what its replies cost. Waiting
	 * with curl_multi_poll/perform walks every transfer on every wakeup. */
	int epfd;
	int wakefd;           /* an eventfd in epfd: xp_agent_pool_wake */
	struct agent **a;
	size_t n, cap;
	/* Agents by URL and by the node they serve with data: lookups, not scans, at 10,000
	 * agents. Rebuilt after a removal (the names are the agents' own strings). */
	struct xp_nameset by_url, by_node;
	bool sets_stale;
	uint64_t generation;
	char **log;
	size_t n_log, cap_log;
	uint64_t basis;        /* the kept nodes were fixed under this basis */
	uint64_t n_decoded;    /* replies decoded (200s) */
	uint64_t n_built;      /* nodes made for clusters (xp_agent_pool_cluster_kept) */
	int history_s;         /* seconds of samples to ask a new agent for, 0: none */
	struct xp_hist_batch *hist; /* samples received, not yet taken */
	size_t n_hist, cap_hist;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
	/* Once per process, before any thread uses curl (curl_global_init is not thread-safe). */
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

static double now_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void plog(struct xp_agent_pool *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void plog(struct xp_agent_pool *p, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (p->n_log >= LOG_CAP) {
		free(p->log[0]);
		memmove(p->log, p->log + 1, (p->n_log - 1) * sizeof *p->log);
		p->n_log--;
	}
	xp_grow(&p->log, sizeof *p->log, p->n_log, &p->cap_log);
	p->log[p->n_log++] = xp_strdup(buf);
}

CURL *xp_agent_easy_new(const char *ca_file, double connect_s, double total_s, char *errbuf)
{
	pthread_once(&curl_once, curl_init_once);
	CURL *e = curl_easy_init();
	if (!e)
		return NULL;
	/* Signals are the console's; timeouts come from curl's own clock, not SIGALRM. */
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(connect_s * 1000));
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(total_s * 1000));
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	/* Only the two schemes an agent speaks: a redirect or a typo never reaches file:// or others. */
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_USERAGENT, "xpool/" XP_VERSION);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
	if (ca_file)
		curl_easy_setopt(e, CURLOPT_CAINFO, ca_file);
	return e;
}

/* curl says which sockets to watch for what: kept in the pool's epoll set. */
static int socket_cb(CURL *e, curl_socket_t fd, int what, void *user, void *sockp)
{
	(void)e, (void)sockp;
	struct shard *sh = user;
	struct xp_agent_pool *p = sh->pool;
	if (what == CURL_POLL_REMOVE) {
		epoll_ctl(p->epfd, EPOLL_CTL_DEL, fd, NULL);
		return 0;
	}
	struct epoll_event ev = {.data.u64 = (uint64_t)sh->id << 32 | (uint32_t)fd};
	if (what & CURL_POLL_IN)
		ev.events |= EPOLLIN;
	if (what & CURL_POLL_OUT)
		ev.events |= EPOLLOUT;
	if (epoll_ctl(p->epfd, EPOLL_CTL_MOD, fd, &ev) < 0 && errno == ENOENT)
		epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ev);
	return 0;
}

/* curl's one timer (timeouts, connection steps): acted on when the wait ends. */
static int timer_cb(CURLM *m, long ms, void *user)
{
	(void)m;
	struct shard *sh = user;
	sh->timer_ms = ms;
	sh->timer_set = now_mono();
	return 0;
}

/* A shard with room for one more agent (a new one when all are full). */
static struct shard *shard_for(struct xp_agent_pool *p)
{
	for (size_t i = 0; i < p->n_sh; i++)
		if (p->sh[i]->agents < SHARD_AGENTS)
			return p->sh[i];
	struct shard *sh = xp_calloc(1, sizeof *sh);
	sh->multi = curl_multi_init();
	if (!sh->multi) {
		fprintf(stderr, "xpool: curl_multi_init failed\n");
		abort();
	}
	sh->pool = p;
	sh->id = (uint32_t)p->n_sh;
	sh->timer_ms = -1;
	curl_multi_setopt(sh->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
	curl_multi_setopt(sh->multi, CURLMOPT_SOCKETDATA, sh);
	curl_multi_setopt(sh->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	curl_multi_setopt(sh->multi, CURLMOPT_TIMERDATA, sh);
	/* Keep every agent's connection open between polls: a reused connection costs a request,
	 * a new one a handshake (and a TLS one several round trips). */
	curl_multi_setopt(sh->multi, CURLMOPT_MAXCONNECTS, (long)SHARD_AGENTS);
	p->sh = xp_realloc(p->sh, (p->n_sh + 1) * sizeof *p->sh);
	p->sh[p->n_sh++] = sh;
	return sh;
}

struct xp_agent_pool *xp_agent_pool_new(const struct xp_agent_pool_opts *opts)
{
	pthread_once(&curl_once, curl_init_once);
	struct xp_agent_pool *p = xp_calloc(1, sizeof *p);
	if (opts)
		p->o = *opts;
	if (!(p->o.connect_timeout_s > 0))
		p->o.connect_timeout_s = 2;
	if (!(p->o.timeout_s > 0))
		p->o.timeout_s = 5;
	if (p->o.connect_timeout_s > p->o.timeout_s)
		p->o.connect_timeout_s = p->o.timeout_s;
	if (!(p->o.backoff_base_s > 0))
		p->o.backoff_base_s = 2;
	if (!(p->o.backoff_max_s > 0))
		p->o.backoff_max_s = 60;
	if (!p->o.max_body)
		p->o.max_body = XP_AGENT_MAX_BODY;
	p->ca_file = xp_strdup(p->o.ca_file);
	p->o.ca_file = p->ca_file;
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	p->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	/* The wake descriptor's data names no shard (UINT32_MAX in the high half). */
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)UINT32_MAX << 32};
	if (p->epfd < 0 || p->wakefd < 0 || epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->wakefd, &ev) < 0) {
		fprintf(stderr, "xpool: cannot set up the agent poll (epoll or eventfd failed)\n");
		abort();
	}
	return p;
}

/* Frees a request's header list, wiping the Authorization line first: it holds the token. */
static void headers_free(struct curl_slist *h)
{
	for (struct curl_slist *l = h; l; l = l->next)
		if (strncasecmp(l->data, "Authorization:", 14) == 0)
			explicit_bzero(l->data, strlen(l->data));
	curl_slist_free_all(h);
}

static void agent_free(struct agent *a)
{
	if (!a)
		return;
	if (a->easy) {
		if (a->in_flight)
			curl_multi_remove_handle(a->shard->multi, a->easy);
		curl_easy_cleanup(a->easy);
	}
	headers_free(a->headers);
	if (a->token) {
		/* Wipe the secret before the allocator hands the memory to someone else. */
		volatile char *t = a->token;
		for (size_t i = 0; t[i]; i++)
			t[i] = 0;
		free(a->token);
	}
	if (a->shard)
		a->shard->agents--;
	xp_node_free(a->built);
	xp_node_free(a->data);
	free(a->url);
	free(a->node_url);
	free(a->body);
	free(a->node);
	free(a->error);
	free(a);
}

void xp_agent_pool_free(struct xp_agent_pool *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		agent_free(p->a[i]);
	free(p->a);
	for (size_t i = 0; i < p->n_sh; i++) {
		curl_multi_cleanup(p->sh[i]->multi);
		free(p->sh[i]);
	}
	free(p->sh);
	xp_nameset_clear(&p->by_url);
	xp_nameset_clear(&p->by_node);
	close(p->epfd);
	close(p->wakefd);
	for (size_t i = 0; i < p->n_log; i++)
		free(p->log[i]);
	free(p->log);
	for (size_t i = 0; i < p->n_hist; i++)
		xp_hist_batch_free(&p->hist[i]);
	free(p->hist);
	free(p->ca_file);
	free(p);
}

int xp_agent_url_check(const char *url, struct xp_err *err)
{
	size_t len = strlen(url);
	if (len > XP_AGENT_MAX_URL)
		return xp_errf(err, "agent URL longer than %d bytes", XP_AGENT_MAX_URL);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)url[i];
		if (c <= 0x20 || c >= 0x7f)
			return xp_errf(err, "agent URL %.200s: a space, control or non-ASCII byte at offset %zu", url, i);
	}
	const char *rest;
	if (strncmp(url, "http://", 7) == 0)
		rest = url + 7;
	else if (strncmp(url, "https://", 8) == 0)
		rest = url + 8;
	else
		return xp_errf(err, "agent URL %.200s: must start with http:// or https://", url);
	size_t host = strcspn(rest, "/?#");
	if (memchr(rest, '@', host))
		/* A password in a URL ends up in shell history, process lists and logs. */
		return xp_errf(err, "agent URL %.200s: no user or password in the URL; give a token file", url);
	if (host == 0 || rest[0] == ':')
		return xp_errf(err, "agent URL %.200s: no host", url);
	if (rest[host] == '?' || rest[host] == '#' || strpbrk(rest + host, "?#"))
		return xp_errf(err, "agent URL %.200s: no query or fragment (the agent's paths are fixed)", url);
	/* A port, when given, is 1-65535. */
	const char *colon = NULL;
	if (rest[0] == '[') {
		const char *close = memchr(rest, ']', host);
		if (!close)
			return xp_errf(err, "agent URL %.200s: unterminated [IPv6] address", url);
		if (close + 1 < rest + host) {
			if (close[1] != ':')
				return xp_errf(err, "agent URL %.200s: junk after ]", url);
			colon = close + 1;
		}
	} else {
		colon = memchr(rest, ':', host);
	}
	if (colon) {
		const char *d = colon + 1, *end = rest + host;
		long port = 0;
		if (d == end)
			return xp_errf(err, "agent URL %.200s: empty port", url);
		for (; d < end; d++) {
			if (!isdigit((unsigned char)*d) || (port = port * 10 + (*d - '0')) > 65535)
				return xp_errf(err, "agent URL %.200s: port is not 1-65535", url);
		}
		if (port == 0)
			return xp_errf(err, "agent URL %.200s: port is not 1-65535", url);
	}
	return 0;
}

char *xp_agent_url_norm(const char *url)
{
	size_t len = strlen(url);
	while (len > 8 && url[len - 1] == '/')
		len--;
	return xp_strndup(url, len);
}

/* Makes by_url and by_node hold the agents again after a removal. */
static void sets_fresh(struct xp_agent_pool *p)
{
	if (!p->sets_stale)
		return;
	xp_nameset_clear(&p->by_url);
	xp_nameset_clear(&p->by_node);
	for (size_t i = 0; i < p->n; i++) {
		struct agent *a = p->a[i];
		xp_nameset_put(&p->by_url, a->url, a);
		if (a->node && a->data)
			xp_nameset_put(&p->by_node, a->node, a);
	}
	p->sets_stale = false;
}

static struct agent *find(struct xp_agent_pool *p, const char *norm, size_t *at)
{
	sets_fresh(p);
	struct agent *a = xp_nameset_get(&p->by_url, norm);
	if (!a || !at)
		return a;
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->a[i]->url, norm) == 0) {
			if (at)
				*at = i;
			return p->a[i];
		}
	return NULL;
}

static size_t body_cb(char *data, size_t size, size_t nmemb, void *user)
{
	struct agent *a = user;
	size_t n = size * nmemb;
	if (a->len + n > a->pool->o.max_body) {
		/* Returning less than given aborts the transfer: no reading 10 MB to throw it away. */
		a->too_big = true;
		return 0;
	}
	if (a->len + n + 1 > a->cap) {
		size_t cap = a->cap ? a->cap : 16384;
		while (cap < a->len + n + 1)
			cap *= 2;
		a->body = xp_realloc(a->body, cap);
		a->cap = cap;
	}
	memcpy(a->body + a->len, data, n);
	a->len += n;
	a->body[a->len] = '\0';
	return n;
}

static double now_real(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double xp_agent_clock_header(const char *data, size_t n, double clock)
{
	char line[128];
	if (n >= sizeof line)
		return clock;
	memcpy(line, data, n);
	line[n] = '\0';
	line[strcspn(line, "\r\n")] = '\0';
	if (strncasecmp(line, "x-xpool-time:", 13) == 0) {
		char *end;
		double t = strtod(line + 13, &end);
		if (end != line + 13 && t > 0 && t < 253402300799.0)
			return t;
	} else if (strncasecmp(line, "date:", 5) == 0 && clock == 0) {
		time_t t = curl_getdate(line + 5, NULL);
		/* Whole seconds: the middle of the second it names is the best guess. Bounded as
		 * X-Xpool-Time is: a year past 9999 is no clock, it would only make a skew. */
		if (t > 0 && (double)t < 253402300799.0)
			return (double)t + 0.5;
	}
	return clock;
}

bool xp_agent_etag_header(const char *data, size_t n, char *out, size_t cap)
{
	if (n <= 5 || strncasecmp(data, "etag:", 5) != 0)
		return false;
	const char *v = data + 5;
	size_t l = n - 5;
	while (l && (*v == ' ' || *v == '\t'))
		v++, l--;
	while (l && (v[l - 1] == '\r' || v[l - 1] == '\n' || v[l - 1] == ' '))
		l--;
	/* It goes back in our next request's header: printable ASCII only, or no cache key
	 * (a CR in it would let the agent write headers into our requests). */
	bool ok = l < cap;
	for (size_t i = 0; ok && i < l; i++)
		ok = (unsigned char)v[i] >= 0x20 && (unsigned char)v[i] < 0x7f;
	if (ok) {
		memcpy(out, v, l);
		out[l] = '\0';
	}
	return ok;
}

static size_t header_cb(char *data, size_t size, size_t nmemb, void *user)
{
	struct agent *a = user;
	size_t n = size * nmemb;
	a->new_clock = xp_agent_clock_header(data, n, a->new_clock);
	(void)xp_agent_etag_header(data, n, a->new_etag, sizeof a->new_etag);
	return n;
}

int xp_agent_pool_add(struct xp_agent_pool *p, const char *url, const char *token_file, struct xp_err *err)
{
	if (xp_agent_url_check(url, err) < 0)
		return -1;
	char *norm = xp_agent_url_norm(url);
	if (find(p, norm, NULL)) {
		xp_errf(err, "agent %s is listed already", norm);
		free(norm);
		return -1;
	}
	if (p->n >= XP_AGENT_MAX) {
		free(norm);
		return xp_errf(err, "more than %d agents", XP_AGENT_MAX);
	}
	char *token = NULL;
	if (token_file && !(token = xp_token_read(token_file, err))) {
		free(norm);
		return -1;
	}
	struct agent *a = xp_calloc(1, sizeof *a);
	a->pool = p;
	a->shard = shard_for(p);
	a->shard->agents++;
	a->url = norm;
	a->node_url = xp_asprintf("%s/v1/node", norm);
	a->token = token;
	a->latency_ms = -1;
	a->generation = -1;
	a->error = xp_strdup("not polled yet");
	a->easy = xp_agent_easy_new(p->o.ca_file, p->o.connect_timeout_s, p->o.timeout_s, a->errbuf);
	if (!a->easy) {
		agent_free(a);
		return xp_errf(err, "curl_easy_init failed");
	}
	CURL *e = a->easy;
	curl_easy_setopt(e, CURLOPT_URL, a->node_url);
	curl_easy_setopt(e, CURLOPT_PRIVATE, a);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, body_cb);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, a);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, a);
	curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)p->o.max_body);
	/* No DNS cache: after each transfer curl prunes its cache by walking every entry, one per
	 * agent host, which made a cycle quadratic in the agents. A kept connection needs no
	 * lookup, and a new one gets the name's current address. */
	curl_easy_setopt(e, CURLOPT_DNS_CACHE_TIMEOUT, 0L);
	xp_grow(&p->a, sizeof *p->a, p->n, &p->cap);
	p->a[p->n++] = a;
	xp_nameset_put(&p->by_url, a->url, a);
	p->generation++;
	return 0;
}

int xp_agent_pool_remove(struct xp_agent_pool *p, const char *url)
{
	char *norm = xp_agent_url_norm(url);
	size_t at;
	struct agent *a = find(p, norm, &at);
	free(norm);
	if (!a)
		return -1;
	agent_free(a);
	memmove(p->a + at, p->a + at + 1, (p->n - at - 1) * sizeof *p->a);
	p->n--;
	p->sets_stale = true;
	p->generation++;
	return 0;
}

int xp_agent_pool_load_file(struct xp_agent_pool *p, const char *path, const char *default_token,
			    struct xp_err *err)
{
	size_t len;
	char *text = xp_read_file(path, (size_t)64 << 20, &len, err);
	if (!text)
		return -1;
	if (memchr(text, '\0', len)) {
		free(text);
		return xp_errf(err, "%s: a NUL byte: not a text file", path);
	}
	/* Token paths are relative to the file, so that a directory of agents moves as one. */
	const char *slash = strrchr(path, '/');
	char *dir = slash ? xp_strndup(path, (size_t)(slash - path) + 1) : xp_strdup("");
	size_t first = p->n;
	int line = 0, rc = 0;
	for (char *s = text, *nl; s && *s && rc == 0; s = nl ? nl + 1 : NULL) {
		nl = strchr(s, '\n');
		if (nl)
			*nl = '\0';
		line++;
		char *hash = strchr(s, '#');
		if (hash)
			*hash = '\0';
		char *save = NULL;
		char *url = strtok_r(s, " \t\r", &save);
		if (!url)
			continue;
		char *tok = strtok_r(NULL, " \t\r", &save);
		char *extra = strtok_r(NULL, " \t\r", &save);
		if (extra) {
			rc = xp_errf(err, "%s:%d: expected URL [TOKEN_FILE], found more: %.64s", path, line, extra);
			break;
		}
		char *tpath = NULL;
		if (tok)
			tpath = tok[0] == '/' ? xp_strdup(tok) : xp_asprintf("%s%s", dir, tok);
		if (xp_agent_pool_add(p, url, tpath ? tpath : default_token, err) < 0) {
			xp_err_prefix(err, "%s:%d", path, line);
			rc = -1;
		}
		free(tpath);
	}
	if (rc < 0) {
		/* All or nothing: a half-read list would poll a cluster nobody asked for. */
		while (p->n > first)
			agent_free(p->a[--p->n]);
		p->sets_stale = true;
	}
	free(dir);
	free(text);
	return rc;
}

size_t xp_agent_pool_size(const struct xp_agent_pool *p)
{
	return p->n;
}

static void set_error(struct agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_error(struct agent *a, const char *fmt, ...)
{
	char buf[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	/* What the agent sent is quoted here: no control bytes reach the terminal or the log. */
	xp_mask_controls(buf);
	bool same = a->error && strcmp(a->error, buf) == 0;
	bool was_up = a->up;
	free(a->error);
	a->error = xp_strdup(buf);
	a->up = false;
	a->fails++;
	double delay = a->pool->o.backoff_base_s * pow(2.0, a->fails > 30 ? 30 : (double)(a->fails - 1));
	if (delay > a->pool->o.backoff_max_s)
		delay = a->pool->o.backoff_max_s;
	a->next_try = time(NULL) + (time_t)ceil(delay);
	if (was_up || !same || a->fails == 1) {
		a->pool->generation++;
		a->version++;
		plog(a->pool, "agent %s%s%s%s: %s", a->url, a->node ? " (" : "", a->node ? a->node : "",
		     a->node ? ")" : "", buf);
	}
}

static void set_up(struct agent *a)
{
	bool was_up = a->up;
	free(a->error);
	a->error = NULL;
	a->up = true;
	a->ever = true;
	a->fails = 0;
	a->next_try = 0;
	a->last_ok = time(NULL);
	if (!was_up) {
		a->pool->generation++;
		a->version++;
		plog(a->pool, "agent %s: up, serving %s", a->url, a->node ? a->node : "?");
	}
}

/* Is name served by another agent of the pool that is up? */
static const struct agent *claimed_by(struct xp_agent_pool *p, const struct agent *self, const char *name)
{
	sets_fresh(p);
	/* At most one agent holds data for a name: a second one claiming it is refused here. */
	const struct agent *o = xp_nameset_get(&p->by_node, name);
	return o != self ? o : NULL;
}

/* The "history" member of a reply that asked for it (an agent that does not keep one sends
 * none: nothing to take). A bad one is logged and left out; the node stands. */
static void take_history(struct agent *a)
{
	a->hist_done = true;
	json_error_t je;
	json_t *doc = json_loadb(a->body ? a->body : "", a->len, 0, &je);
	const json_t *h = json_object_get(doc, "history");
	if (h) {
		struct xp_hist_batch b;
		struct xp_err err = {{0}};
		if (xp_hist_batch_parse(h, a->node, &b, &err) < 0) {
			a->rejected++;
			char buf[1100];
			snprintf(buf, sizeof buf, "%s", err.msg);
			xp_mask_controls(buf);
			plog(a->pool, "agent %s (%s): history rejected: %s", a->url, a->node, buf);
		} else {
			struct xp_agent_pool *p = a->pool;
			xp_grow(&p->hist, sizeof *p->hist, p->n_hist, &p->cap_hist);
			p->hist[p->n_hist++] = b;
		}
	}
	json_decref(doc);
}

/* A 200: the body must be one node of the inventory schema, the node this agent has always served. */
static void take_body(struct agent *a)
{
	struct xp_err err = {{0}};
	bool syntax = false;
	/* The inventory's one decoder, straight from the text (as a snapshot file is read). */
	struct xp_cluster *c = xp_cluster_decode(a->body ? a->body : "", a->len, &syntax, &err);
	a->pool->n_decoded++;
	if (!c) {
		a->rejected++;
		set_error(a, syntax ? "rejected: not JSON: %s" : "rejected: %s", err.msg);
		return;
	}
	const char *why = NULL;
	char buf[640];
	const struct agent *o;
	if (c->n_nodes != 1) {
		snprintf(buf, sizeof buf, "%zu nodes in the reply (an agent serves one)", c->n_nodes);
		why = buf;
	} else if (a->node && strcmp(a->node, c->nodes[0]->name) != 0) {
		snprintf(buf, sizeof buf, "claims to be node %.255s, but it served %.255s", c->nodes[0]->name, a->node);
		why = buf;
	} else if ((o = claimed_by(a->pool, a, c->nodes[0]->name))) {
		snprintf(buf, sizeof buf, "node %.255s is served by %.300s already", c->nodes[0]->name, o->url);
		why = buf;
	}
	if (why) {
		a->rejected++;
		set_error(a, "rejected: %s", why);
		xp_cluster_free(c);
		return;
	}
	/* Valid: keep the decoded node; each cluster built from the pool gets a copy of it. */
	xp_node_free(a->data);
	a->data = c->nodes[0];
	c->nodes[0] = NULL;
	a->generation = c->generation > INT64_MAX ? INT64_MAX : (int64_t)c->generation;
	if (!a->node) {
		a->node = xp_strdup(a->data->name);
		sets_fresh(a->pool);
		xp_nameset_put(&a->pool->by_node, a->node, a);
	}
	xp_cluster_free(c);
	snprintf(a->etag, sizeof a->etag, "%s", a->new_etag);
	a->pool->generation++;
	a->version++;
	set_up(a);
	if (a->hist_asked)
		take_history(a);
}

static void finish(struct agent *a)
{
	CURLcode res = a->res;
	a->polls++;
	long code = 0;
	curl_easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &code);
	/* The clock skew against ours: the agent read its clock about half the round trip
	 * before the reply reached us. */
	if (res == CURLE_OK && (code == 200 || code == 304) && a->new_clock > 0 && a->recv_real > 0) {
		a->skew_s = a->new_clock - (a->recv_real - (a->latency_ms > 0 ? a->latency_ms / 2000 : 0));
		a->have_skew = true;
	}
	if (a->too_big || res == CURLE_FILESIZE_EXCEEDED) {
		a->rejected++;
		set_error(a, "rejected: reply larger than %zu bytes", a->pool->o.max_body);
	} else if (res == CURLE_OPERATION_TIMEDOUT) {
		/* The common failure of a hung agent: name the limit it ran into. */
		set_error(a, "no answer within %.1f s", a->pool->o.timeout_s);
	} else if (res != CURLE_OK) {
		set_error(a, "%s", a->errbuf[0] ? a->errbuf : curl_easy_strerror(res));
	} else if (code == 304) {
		a->not_modified++;
		if (a->data)
			set_up(a);
		else
			set_error(a, "304 Not Modified for data this console does not hold");
	} else if (code == 200) {
		take_body(a);
	} else if (code == 401 || code == 403) {
		set_error(a, "HTTP %ld: the agent refused the token%s", code, a->token ? "" : " (none given)");
	} else {
		set_error(a, "HTTP %ld from the agent", code);
	}
	free(a->body);
	a->body = NULL;
	a->len = a->cap = 0;
}

/* Raises the descriptor limit to what the system allows: each agent polled at once is a socket. */
static void raise_nofile(size_t want)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want + 64 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = want + 64 < rl.rlim_max ? want + 64 : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* How serve() ended. */
enum serve_end {
	SERVE_ALL_DONE, /* no transfer in flight */
	SERVE_TIME_UP,  /* end_ms came with transfers still in flight */
	SERVE_WOKEN,    /* xp_agent_pool_wake (only when asked to end on it) */
	SERVE_STOPPED,  /* the cancel flag, or epoll failed */
};

/* Drives the transfers in flight (the pool's epoll set and curl's timers) until none is left,
 * end_ms (monotonic ms) comes, the cancel flag is set, or, when wake_ends, a wake. A transfer
 * that ends is marked done with its result and latency (t0: when its poll began); finish()
 * judges it later. */
static enum serve_end serve(struct xp_agent_pool *p, double end_ms, bool wake_ends, double t0)
{
	struct epoll_event evs[256];
	bool woken = false;
	for (;;) {
		/* Due timers, then the transfers that ended (some end within the first action: a
		 * reply on a kept connection can be read at once). */
		double now_ms = now_mono() * 1000;
		int running = 0;
		for (size_t j = 0; j < p->n_sh; j++) {
			struct shard *sh = p->sh[j];
			if (sh->timer_ms >= 0 && now_ms >= sh->timer_set * 1000 + (double)sh->timer_ms) {
				sh->timer_ms = -1;
				curl_multi_socket_action(sh->multi, CURL_SOCKET_TIMEOUT, 0, &sh->running);
			}
			CURLMsg *m;
			int left;
			while ((m = curl_multi_info_read(sh->multi, &left))) {
				if (m->msg != CURLMSG_DONE)
					continue;
				struct agent *a = NULL;
				curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&a);
				a->res = m->data.result;
				a->recv_real = now_real();
				/* The request's own time, not the cycle's: a slow agent shows as slow. */
				curl_off_t us = 0;
				if (curl_easy_getinfo(m->easy_handle, CURLINFO_TOTAL_TIME_T, &us) == CURLE_OK)
					a->latency_ms = (double)us / 1000;
				else
					a->latency_ms = (now_mono() - t0) * 1000;
				curl_multi_remove_handle(sh->multi, m->easy_handle);
				a->in_flight = false;
				a->done = true;
			}
			running += sh->running;
		}
		if (!running)
			return SERVE_ALL_DONE;
		/* Stopping the console must not wait out a hung agent's timeout. */
		if (p->o.cancel && atomic_load(p->o.cancel))
			return SERVE_STOPPED;
		if (now_ms >= end_ms)
			return SERVE_TIME_UP;
		int wait = 1000;
		if (end_ms - now_ms < wait)
			wait = (int)ceil(end_ms - now_ms);
		for (size_t j = 0; j < p->n_sh; j++) {
			struct shard *sh = p->sh[j];
			if (sh->timer_ms < 0)
				continue;
			double left = sh->timer_set * 1000 + (double)sh->timer_ms - now_ms;
			if (left < wait)
				wait = left <= 0 ? 0 : (int)ceil(left);
		}
		int k = epoll_wait(p->epfd, evs, (int)(sizeof evs / sizeof *evs), wait);
		if (k < 0 && errno != EINTR)
			return SERVE_STOPPED;
		for (int i = 0; i < k; i++) {
			uint32_t id = (uint32_t)(evs[i].data.u64 >> 32);
			if (id >= p->n_sh) { /* the wake descriptor: drained; the cancel flag says why */
				uint64_t v;
				if (read(p->wakefd, &v, sizeof v) < 0) {
				}
				woken = true;
				continue;
			}
			int ev = 0;
			if (evs[i].events & (EPOLLIN | EPOLLHUP))
				ev |= CURL_CSELECT_IN;
			if (evs[i].events & EPOLLOUT)
				ev |= CURL_CSELECT_OUT;
			if (evs[i].events & EPOLLERR)
				ev |= CURL_CSELECT_ERR;
			struct shard *sh = p->sh[id];
			curl_multi_socket_action(sh->multi, (curl_socket_t)(uint32_t)evs[i].data.u64, ev, &sh->running);
		}
		if (woken && wake_ends)
			return SERVE_WOKEN;
	}
}

size_t xp_agent_pool_poll(struct xp_agent_pool *p, bool force)
{
	if (!p->n)
		return 0;
	raise_nofile(p->n);
	time_t now = time(NULL);
	double t0 = now_mono();
	size_t failed = 0;
	/* A wake left from before (a key's request for this very load) must not end the pump
	 * after it at once; the cancel flag, not the wake, says stop. */
	uint64_t stale;
	if (read(p->wakefd, &stale, sizeof stale) < 0) {
	}
	for (size_t i = 0; i < p->n; i++) {
		struct agent *a = p->a[i];
		/* Still in flight from an earlier poll that returned at its cycle's end: it goes on,
		 * and is neither asked again nor counted as failed before it ends. One that ended
		 * since, in a pump between polls, is judged below with this poll's replies. */
		if (a->in_flight || a->done)
			continue;
		if (!force && a->fails && now < a->next_try)
			continue;
		headers_free(a->headers);
		a->headers = NULL;
		char *h;
		if (a->token) {
			h = xp_asprintf("Authorization: Bearer %s", a->token);
			a->headers = curl_slist_append(a->headers, h);
			explicit_bzero(h, strlen(h));
			free(h);
		}
		if (a->etag[0] && a->data) {
			h = xp_asprintf("If-None-Match: %s", a->etag);
			a->headers = curl_slist_append(a->headers, h);
			free(h);
		}
		a->headers = curl_slist_append(a->headers, "Accept: application/json");
		curl_easy_setopt(a->easy, CURLOPT_HTTPHEADER, a->headers);
		/* Until the first good answer, the recent past too (once: the console keeps it). */
		bool ask = p->history_s > 0 && !a->hist_done && !a->data;
		if (ask != a->hist_asked) {
			char *u = ask ? xp_asprintf("%s?history=%d", a->node_url, p->history_s) : NULL;
			curl_easy_setopt(a->easy, CURLOPT_URL, u ? u : a->node_url);
			free(u); /* curl keeps its own copy */
			a->hist_asked = ask;
		}
		a->new_etag[0] = '\0';
		a->new_clock = 0;
		a->recv_real = 0;
		a->errbuf[0] = '\0';
		a->too_big = false;
		a->len = 0;
		if (curl_multi_add_handle(a->shard->multi, a->easy) != CURLM_OK) {
			set_error(a, "curl could not start the request");
			failed++;
			continue;
		}
		a->in_flight = true;
	}
	/* Start what was added (curl set each shard's timer to now). */
	for (size_t j = 0; j < p->n_sh; j++) {
		struct shard *sh = p->sh[j];
		sh->running = 0;
		curl_multi_socket_action(sh->multi, CURL_SOCKET_TIMEOUT, 0, &sh->running);
	}
	/* The cycle counts from the requests' start, not from building them (10,000 agents). */
	double started = now_mono();
	enum serve_end how = serve(p, p->o.cycle_s > 0 ? (started + p->o.cycle_s) * 1000 : INFINITY, false, t0);
	bool cycle_over = how == SERVE_TIME_UP;
	/* Replies are judged in the list's order, not the order they came in: when two agents
	 * claim one node for the first time, the one listed first keeps it, every time. */
	for (size_t i = 0; i < p->n; i++) {
		struct agent *a = p->a[i];
		if (a->done) {
			a->done = false;
			finish(a);
			failed += !a->up;
		} else if (a->in_flight && cycle_over) {
			continue; /* slow or hung: a later poll finishes it, or its timeout does */
		} else if (a->in_flight) {
			/* Still in flight: cancelled, or the multi loop failed. A failure, not a hang. */
			curl_multi_remove_handle(a->shard->multi, a->easy);
			a->in_flight = false;
			set_error(a, "%s", p->o.cancel && atomic_load(p->o.cancel) ? "poll cancelled" : "the poll loop failed");
			failed++;
		}
	}
	return failed;
}

void xp_agent_pool_set_cancel(struct xp_agent_pool *p, const atomic_bool *cancel)
{
	p->o.cancel = cancel;
}

bool xp_agent_pool_pump(struct xp_agent_pool *p, double secs)
{
	bool any = false;
	for (size_t i = 0; i < p->n && !any; i++)
		any = p->a[i]->in_flight;
	if (!any)
		return false;
	double t0 = now_mono();
	serve(p, (t0 + secs) * 1000, true, t0);
	return true;
}

void xp_agent_pool_set_cycle(struct xp_agent_pool *p, double cycle_s)
{
	p->o.cycle_s = cycle_s > 0 ? cycle_s : 0;
}

void xp_agent_pool_wake(struct xp_agent_pool *p)
{
	uint64_t one = 1;
	if (write(p->wakefd, &one, sizeof one) < 0) { /* full: a wake is pending anyway */
	}
}

void xp_agent_pool_counts(const struct xp_agent_pool *p, size_t *up, size_t *down)
{
	size_t u = 0;
	for (size_t i = 0; i < p->n; i++)
		u += p->a[i]->up;
	if (up)
		*up = u;
	if (down)
		*down = p->n - u;
}

uint64_t xp_agent_pool_generation(const struct xp_agent_pool *p)
{
	return p->generation;
}

void xp_agent_pool_status(const struct xp_agent_pool *p, size_t i, struct xp_agent_status *st)
{
	const struct agent *a = p->a[i];
	*st = (struct xp_agent_status){
		.url = a->url,
		.node = a->node,
		.up = a->up,
		.ever = a->ever,
		.error = a->up ? NULL : a->error,
		.last_ok = a->last_ok,
		.latency_ms = a->latency_ms,
		.generation = a->generation,
		.fails = a->fails,
		.next_try = a->next_try,
		.polls = a->polls,
		.not_modified = a->not_modified,
		.rejected = a->rejected,
		.skew_s = a->skew_s,
		.have_skew = a->have_skew,
	};
}

/* "host:port" of a URL, the name of a node never heard from. */
static char *host_port(const char *url)
{
	const char *h = strstr(url, "://");
	h = h ? h + 3 : url;
	return xp_strndup(h, strcspn(h, "/"));
}

/* Agent a's node as a cluster shows it: a copy of its data (or an empty node named after its
 * address) with the agent's URL as source, marked unreachable with its age when it is down. */
static struct xp_node *agent_node(const struct agent *a, time_t now)
{
	struct xp_node *n = a->data ? xp_node_clone(a->data) : NULL;
	if (!n) {
		char *hp = host_port(a->url);
		n = xp_node_new(hp);
		free(hp);
		/* A name the agent may later claim for real must not clash: it is the URL's. */
	}
	free(n->source);
	n->source = xp_strdup(a->url);
	if (!a->up) {
		n->state = XP_NODE_UNREACHABLE;
		n->age_s = a->last_ok ? (int64_t)(now - a->last_ok) : 0;
		if (n->age_s < 0)
			n->age_s = 0;
		char *w = xp_asprintf("agent %s: %s", a->url, a->error ? a->error : "down");
		xp_strv_add(&n->warnings, &n->n_warnings, w);
		free(w);
	} else {
		n->age_s = 0;
	}
	return n;
}

struct xp_cluster *xp_agent_pool_cluster(const struct xp_agent_pool *p, time_t now)
{
	struct xp_cluster *c = xp_cluster_new();
	struct xp_nameset names = {0};
	for (size_t i = 0; i < p->n; i++) {
		struct xp_node *n = agent_node(p->a[i], now);
		/* Two agents never heard from on one host:port cannot happen (URLs are unique), but a
		 * placeholder may share a name with a real node: keep the real one. */
		if (!xp_nameset_put(&names, n->name, n)) {
			xp_node_free(n);
			continue;
		}
		xp_cluster_add(c, n);
	}
	xp_nameset_clear(&names);
	c->generation = p->generation;
	return c;
}

struct xp_cluster *xp_agent_pool_cluster_kept(struct xp_agent_pool *p, time_t now, uint64_t basis,
					      void (*fix)(struct xp_node *))
{
	if (basis != p->basis) {
		/* What fix does to a node changed (new baselines): every node is made again. */
		for (size_t i = 0; i < p->n; i++)
			p->a[i]->built_version = p->a[i]->version - 1;
		p->basis = basis;
	}
	struct xp_cluster *c = xp_cluster_new();
	struct xp_nameset names = {0};
	for (size_t i = 0; i < p->n; i++) {
		struct agent *a = p->a[i];
		/* A down agent's node shows its data's age: made again each time (they are few). */
		if (!a->built || a->built_version != a->version || !a->up) {
			xp_node_free(a->built);
			a->built = agent_node(a, now);
			if (fix)
				fix(a->built);
			a->built_version = a->version;
			p->n_built++;
		}
		if (!xp_nameset_put(&names, a->built->name, a->built))
			continue; /* a placeholder named like a real node (see xp_agent_pool_cluster) */
		xp_cluster_add(c, xp_node_ref(a->built));
	}
	xp_nameset_clear(&names);
	c->generation = p->generation;
	return c;
}

void xp_agent_pool_work(const struct xp_agent_pool *p, uint64_t *decoded, uint64_t *built)
{
	*decoded = p->n_decoded;
	*built = p->n_built;
}

void xp_agent_pool_want_history(struct xp_agent_pool *p, int secs)
{
	p->history_s = secs < 0 ? 0 : secs;
}

struct xp_hist_batch *xp_agent_pool_take_history(struct xp_agent_pool *p, size_t *n)
{
	*n = p->n_hist;
	if (!p->n_hist)
		return NULL;
	struct xp_hist_batch *b = p->hist;
	p->hist = NULL;
	p->n_hist = p->cap_hist = 0;
	return b;
}

char **xp_agent_pool_take_log(struct xp_agent_pool *p, size_t *n)
{
	*n = p->n_log;
	if (!p->n_log)
		return NULL;
	char **l = p->log;
	p->log = NULL;
	p->n_log = p->cap_log = 0;
	return l;
}
