/* agent_server.c: the node agent's HTTP server (libmicrohttpd).
 *
 * Threading: one internal polling thread (epoll or poll, MHD_USE_AUTO) serves every
 * connection, so a slow or stalled client costs a socket and a little memory, never a
 * thread, and cannot hold up the others. Slow clients are bounded three ways: a connection
 * idle for CONN_TIMEOUT_S is cut, one that has not sent a complete request (head and body)
 * REQUEST_DEADLINE_S after it opened or after its last reply is cut however it trickles
 * (the watcher thread shuts its socket down), one client address holds at most
 * a->per_ip of the --max-connections (past it, a new connection from the address sheds that
 * address's longest-waiting one: one local console or NAT address is shared by good clients
 * and slow ones, and the slow ones must not lock the good ones out), and an eighth of the
 * slots stays free: past the rest,
 * each new connection sheds the one that has waited longest for its request (shed()), so
 * slow clients from many addresses cannot make a new one wait; when none waits, it sheds the one
 * whose reply has been in flight longest (slow readers, who take their replies a window at a
 * time and so are never idle); request headers are bounded
 * by the per-connection memory pool (32 KiB). Every GET is answered at once from copies kept under a->mu.
 * A probe runs for seconds, so it must not run on the polling thread: its connection is
 * suspended (MHD_ALLOW_SUSPEND_RESUME), one worker thread runs the probe and resumes the
 * connection with the reply. Probes run one at a time (a second gets 409), so at most
 * one worker exists. The watcher thread polls a probing connection's socket: a client that
 * hangs up cancels its probe (the probe's process group is killed). Stopping the agent
 * stops accepting, cancels the probe, joins its worker, gives the replies in flight (the
 * probe's "cancelled" one among them) up to STOP_GRACE_S to go out, then stops the daemon. */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "agent_int.h"
#include "agent_token.h"
#include "format.h"
#include "history_json.h"
#include "model_json.h"
#include "validate.h"

/* Idle seconds before a connection is cut. */
#define CONN_TIMEOUT_S 5
/* Seconds a connection has to send a complete request (head and body), from its start or
 * from the end of its previous reply, however slowly it trickles. */
#define REQUEST_DEADLINE_S 10.0
/* How often the watcher looks at the connections, milliseconds. */
#define WATCH_MS 100
/* Most seconds stopping waits for replies in flight. */
#define STOP_GRACE_S 1.0
/* Status logged and counted for a probe whose client hung up before the reply (nginx's). */
#define CLIENT_GONE 499
/* Memory one connection may use for its request line and headers (and the reply's headers):
 * a larger request gets 431 and the connection is closed. */
#define CONN_MEMORY ((size_t)32 << 10)
/* A body past XP_AGENT_MAX_REQUEST_BODY is read to its end for the 413, up to this much. */
#define TOO_LARGE_CUT ((size_t)XP_AGENT_MAX_REQUEST_BODY * 16)
/* Longest path kept for the request log. */
#define LOG_PATH_MAX 200

/* ---- addresses ---- */

int xp_agent_listen_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len, struct xp_err *err)
{
	memset(ss, 0, sizeof *ss);
	char host[128];
	const char *port;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':' || (size_t)(close - s - 1) >= sizeof host)
			return xp_errf(err, "listen address '%s': expected [IPV6]:PORT", s);
		memcpy(host, s + 1, (size_t)(close - s - 1));
		host[close - s - 1] = '\0';
		port = close + 2;
	} else {
		const char *colon = strrchr(s, ':');
		if (!colon || colon == s || (size_t)(colon - s) >= sizeof host || memchr(s, ':', (size_t)(colon - s)))
			return xp_errf(err, "listen address '%s': expected ADDR:PORT (IPv6 as [ADDR]:PORT)", s);
		memcpy(host, s, (size_t)(colon - s));
		host[colon - s] = '\0';
		port = colon + 1;
	}
	char *end;
	errno = 0;
	long p = strtol(port, &end, 10);
	if (!(port[0] >= '0' && port[0] <= '9') || *end || errno || p < 0 || p > 65535)
		return xp_errf(err, "listen address '%s': port '%s' is not a number from 0 to 65535", s, port);
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)p);
		*len = sizeof *v4;
	} else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)p);
		*len = sizeof *v6;
	} else
		/* Numeric only: a name could resolve to an address the operator did not mean to expose. */
		return xp_errf(err, "listen address '%s': '%s' is not a numeric IPv4 or IPv6 address", s, host);
	return 0;
}

bool xp_agent_addr_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		if (IN6_IS_ADDR_LOOPBACK(a))
			return true;
		return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
	}
	return false;
}

/* "ADDR:PORT" or "[ADDR]:PORT" of a socket address. */
static void addr_str(const struct sockaddr *sa, socklen_t len, char *out, size_t outlen, bool with_port)
{
	char host[NI_MAXHOST] = "?", serv[NI_MAXSERV] = "?";
	getnameinfo(sa, len, host, sizeof host, serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV);
	bool v6 = sa->sa_family == AF_INET6;
	if (with_port)
		snprintf(out, outlen, "%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", serv);
	else
		snprintf(out, outlen, "%s", host);
}

/* ---- state ---- */

struct xp_agent *xp_agent_new(const struct xp_agent_opts *o)
{
	struct xp_agent *a = xp_calloc(1, sizeof *a);
	a->listen = xp_strdup(o->listen ? o->listen : XP_AGENT_DEFAULT_LISTEN);
	pthread_mutex_init(&a->tok_mu, NULL);
	a->read_token = xp_strdup(o->read_token);
	a->write_token = xp_strdup(o->write_token);
	a->tls_cert = xp_strdup(o->tls_cert_pem);
	a->tls_key = xp_strdup(o->tls_key_pem);
	a->interval_s = o->interval_s;
	a->max_connections = o->max_connections ? o->max_connections : 64;
	/* A quarter of the slots per client address, at least 8 (one console, a Prometheus and a
	 * few curls behind one NAT), never more than all of them; past it, the address's
	 * longest-waiting connection is shed (shed_same_address). */
	a->per_ip = a->max_connections / 4 < 8 ? 8 : a->max_connections / 4;
	if (a->per_ip > a->max_connections)
		a->per_ip = a->max_connections;
	/* An eighth of the slots (at least one) stays free for new clients: past the rest, a new
	 * connection sheds the one that has waited longest for its request. */
	unsigned reserve = a->max_connections / 8 ? a->max_connections / 8 : 1;
	a->shed_at = a->max_connections > reserve ? a->max_connections - reserve : 0;
	a->verbose = o->verbose;
	/* The log goes to a duplicate of stderr's descriptor, not to fd 2 itself: discovery
	 * points fd 2 at a file for a moment while hwloc loads (to keep hwloc's messages off the
	 * terminal and turn them into node warnings), and an access line written then must
	 * neither be lost nor end up in the node's warnings. */
	a->log = o->log;
	if (!a->log) {
		int fd = dup(STDERR_FILENO);
		a->log = fd >= 0 ? fdopen(fd, "w") : NULL;
		a->log_owned = a->log != NULL;
		if (!a->log) {
			if (fd >= 0)
				close(fd);
			a->log = stderr;
		}
	}
	a->config = o->config;
	a->started = time(NULL);
	a->ring = xp_hist_ring_new(XP_AGENT_HISTORY_S, a->interval_s > 0 ? a->interval_s : 5);
	pthread_mutex_init(&a->mu, NULL);
	pthread_mutex_init(&a->conn_mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a->watch_cv, &ca);
	pthread_condattr_destroy(&ca);
	atomic_init(&a->inflight, 0);
	atomic_init(&a->probe_busy, 0);
	atomic_init(&a->cancel, 0);
	return a;
}

/* Rebuilds the /v1/node body and its ETag from the current node; a->mu held. The body holds
 * nothing that changes while the node does not (the discovery time is in /v1/health), so
 * the strong ETag, a digest of the body, stays the same exactly while the body does. */
static void build_body(struct xp_agent *a)
{
	json_t *doc = xp_cluster_to_json(a->cluster);
	json_object_set_new(doc, "generation", json_integer((json_int_t)a->generation));
	json_t *ag = json_object();
	json_object_set_new(ag, "version", json_string(XP_VERSION));
	json_object_set_new(ag, "node", xp_json_str(a->cluster->nodes[0]->name));
	json_object_set_new(ag, "started", json_integer((json_int_t)a->started));
	json_object_set_new(ag, "interval_s", json_real(a->interval_s));
	json_object_set_new(doc, "agent", ag);
	free(a->body);
	a->body = json_dumps(doc, JSON_COMPACT);
	a->body_len = strlen(a->body);
	json_decref(doc);
	struct xp_sha256 h;
	unsigned char dg[32];
	char hex[65];
	xp_sha256_init(&h);
	xp_sha256_update(&h, a->body, a->body_len);
	xp_sha256_final(&h, dg);
	xp_sha256_hex(dg, hex);
	snprintf(a->etag, sizeof a->etag, "\"%.32s\"", hex);
}

void xp_agent_publish(struct xp_agent *a, struct xp_node *n, double discovery_s, time_t when)
{
	/* Encoded outside the lock: requests keep being answered from the old copy meanwhile. */
	json_t *nj = xp_node_to_json(n);
	char *ns = json_dumps(nj, JSON_COMPACT);
	json_decref(nj);
	struct xp_cluster *c = xp_cluster_new();
	xp_cluster_add(c, n);
	pthread_mutex_lock(&a->mu);
	if (!a->node_json || strcmp(a->node_json, ns) != 0) {
		a->generation++;
		free(a->node_json);
		a->node_json = ns;
		ns = NULL;
	}
	struct xp_cluster *old = a->cluster;
	a->cluster = c;
	c->generation = a->generation;
	a->discovered = when;
	a->discovery_s = discovery_s;
	xp_hist_ring_add(a->ring, n, when);
	free(a->error);
	a->error = NULL;
	build_body(a);
	pthread_mutex_unlock(&a->mu);
	xp_cluster_free(old);
	free(ns);
}

void xp_agent_fail(struct xp_agent *a, const char *why, double discovery_s)
{
	pthread_mutex_lock(&a->mu);
	free(a->error);
	a->error = xp_strdup(why);
	a->discovery_s = discovery_s;
	a->discovery_errors++;
	pthread_mutex_unlock(&a->mu);
}

/* ---- requests ---- */

/* One request, from its first call to its completion. */
struct req {
	struct xp_agent *a;
	struct MHD_Connection *conn;
	struct xpa_conn *cc;        /* its connection's context (NULL: not tracked) */
	double t0;
	int route;
	unsigned code;
	char method[8];
	char path[LOG_PATH_MAX + 1];
	size_t body_bytes;          /* request body received (probes take none) */
	bool answered;              /* routed: a reply is queued or the probe accepted */
	bool is_probe;              /* an accepted POST /v1/probe, body still arriving */
	bool probe_started;
	const struct xp_agent_probe *probe;
	struct xpa_probe_job job;
	char *reply;                /* the probe worker's reply, set before it resumes us */
	size_t reply_len;
	unsigned reply_code;
	bool client_gone;           /* the client hung up while the probe ran: no reply */
	bool too_large;             /* the body grew past XP_AGENT_MAX_REQUEST_BODY */
};

static double mono_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The context of conn (set when it was accepted), or NULL. */
static struct xpa_conn *conn_ctx(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

/* Marks a connection's request complete (waiting false) or a new one awaited (true, from now). */
static void conn_waiting(struct xp_agent *a, struct xpa_conn *cc, bool waiting)
{
	if (!cc)
		return;
	pthread_mutex_lock(&a->conn_mu);
	cc->waiting = waiting;
	if (waiting)
		cc->wait_since = mono_s();
	else
		cc->answer_since = mono_s();
	pthread_mutex_unlock(&a->conn_mu);
}

/* Shuts a connection down as the watcher does at the deadline (libmicrohttpd then closes it);
 * a->conn_mu held. */
static void cut(struct xpa_conn *cc)
{
	shutdown(cc->fd, SHUT_RDWR);
	cc->cut = true;
}

/* The connection to shed among those open (not cut, not fresh, no probe running) that match
 * (same address as `like` when not NULL): the one that has waited longest for a complete request
 * or, when none waits, the one whose reply has been in flight longest (a slow reader, who takes
 * its replies a window at a time and so is never idle nor waiting, would otherwise keep its slot
 * as long as it liked: a reply is a few tens of KiB, read in milliseconds by a good client, so
 * the oldest reply in flight is the slowest reader's); NULL when none may be shed.
 * a->conn_mu held. */
static struct xpa_conn *longest_waiting(struct xp_agent *a, const struct xpa_conn *fresh, const struct xpa_conn *like)
{
	struct xpa_conn *oldest = NULL, *slowest = NULL;
	for (struct xpa_conn *cc = a->conns; cc; cc = cc->next) {
		if (cc == fresh || cc->fd < 0 || cc->cut || cc->probing ||
		    (like && !(cc->has_addr && memcmp(cc->addr, like->addr, sizeof cc->addr) == 0)))
			continue;
		if (cc->waiting && (!oldest || cc->wait_since < oldest->wait_since))
			oldest = cc;
		else if (!cc->waiting && (!slowest || cc->answer_since < slowest->answer_since))
			slowest = cc;
	}
	return oldest ? oldest : slowest;
}

/* The per-address share; a->conn_mu held, fresh just added. Past a->per_ip open connections
 * from fresh's address, that address's longest-waiting one is shed (not the new one: a good
 * client behind the same address as slow ones must get its turn); when every other one from
 * it runs a probe, the new one is closed. */
static void shed_same_address(struct xp_agent *a, struct xpa_conn *fresh)
{
	if (!fresh->has_addr)
		return;
	unsigned open = 0;
	for (struct xpa_conn *cc = a->conns; cc; cc = cc->next)
		open += !cc->cut && cc->has_addr && memcmp(cc->addr, fresh->addr, sizeof cc->addr) == 0;
	while (open > a->per_ip) {
		struct xpa_conn *oldest = longest_waiting(a, fresh, fresh);
		if (!oldest) {
			if (fresh->fd >= 0)
				cut(fresh);
			return;
		}
		cut(oldest);
		open--;
	}
}

/* Keeps room for new clients; a->conn_mu held, fresh just added. Past a->shed_at open
 * connections, the one that has waited longest for a complete request (idle after its reply,
 * or still trickling one in) is shut down, as the watcher does at the deadline: many slow
 * clients from many addresses (each within its per-address share) then cost each other their
 * slots, never a new client its turn; with none waiting, the reply in flight longest goes (slow
 * readers). A connection with a probe running is never shed. */
static void shed(struct xp_agent *a, struct xpa_conn *fresh)
{
	unsigned open = 0;
	for (struct xpa_conn *cc = a->conns; cc; cc = cc->next)
		open += !cc->cut;
	while (open > a->shed_at) {
		struct xpa_conn *oldest = longest_waiting(a, fresh, NULL);
		if (!oldest)
			return;
		cut(oldest);
		open--;
	}
}

/* libmicrohttpd's connection start and close: the context the watcher sees. Close comes
 * before the socket is closed, so a socket in the list is always the connection's own. */
static void conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
			enum MHD_ConnectionNotificationCode code)
{
	struct xp_agent *a = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		struct xpa_conn *cc = xp_calloc(1, sizeof *cc);
		cc->fd = ci ? ci->connect_fd : -1;
		ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		const struct sockaddr *sa = ci ? ci->client_addr : NULL;
		if (sa && sa->sa_family == AF_INET6) {
			memcpy(cc->addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
			cc->has_addr = true;
		} else if (sa && sa->sa_family == AF_INET) {
			/* As IPv4-mapped IPv6, the form a dual-stack socket gives the same client. */
			cc->addr[10] = cc->addr[11] = 0xff;
			memcpy(cc->addr + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
			cc->has_addr = true;
		}
		cc->waiting = true;
		cc->wait_since = mono_s();
		atomic_init(&cc->cancel, 0);
		pthread_mutex_lock(&a->conn_mu);
		cc->next = a->conns;
		if (a->conns)
			a->conns->prev = cc;
		a->conns = cc;
		shed_same_address(a, cc);
		if (!cc->cut)
			shed(a, cc);
		/* Stopping: a probe that starts from now on is cancelled at once. */
		if (atomic_load(&a->cancel))
			atomic_store(&cc->cancel, 1);
		pthread_mutex_unlock(&a->conn_mu);
		*socket_context = cc;
		return;
	}
	struct xpa_conn *cc = *socket_context;
	if (!cc)
		return;
	*socket_context = NULL;
	pthread_mutex_lock(&a->conn_mu);
	if (cc->prev)
		cc->prev->next = cc->next;
	else
		a->conns = cc->next;
	if (cc->next)
		cc->next->prev = cc->prev;
	pthread_mutex_unlock(&a->conn_mu);
	free(cc);
}

/* The watcher: every WATCH_MS, cuts the connections past their request deadline (shutting
 * the socket down makes libmicrohttpd close it) and cancels the probe of a client that hung up. */
static void *watcher(void *arg)
{
	struct xp_agent *a = arg;
	pthread_mutex_lock(&a->conn_mu);
	while (!a->watch_stop) {
		double now = mono_s();
		for (struct xpa_conn *cc = a->conns; cc; cc = cc->next) {
			if (cc->fd < 0)
				continue;
			if (cc->waiting && !cc->cut && now - cc->wait_since > REQUEST_DEADLINE_S)
				cut(cc);
			if (cc->probing && !cc->gone) {
				struct pollfd pf = {cc->fd, POLLRDHUP, 0};
				if (poll(&pf, 1, 0) > 0 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
					cc->gone = true;
					atomic_store(&cc->cancel, 1);
				}
			}
		}
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += WATCH_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&a->watch_cv, &a->conn_mu, &ts);
	}
	pthread_mutex_unlock(&a->conn_mu);
	return NULL;
}

static void count(struct xp_agent *a, int route, unsigned code)
{
	pthread_mutex_lock(&a->mu);
	size_t i = 0;
	while (i < a->n_counts && !(a->counts[i].route == route && a->counts[i].code == (int)code))
		i++;
	if (i == a->n_counts && i < XPA_MAX_COUNTS) {
		a->counts[i] = (struct xpa_count){route, (int)code, 0};
		a->n_counts++;
	}
	if (i < a->n_counts)
		a->counts[i].n++;
	pthread_mutex_unlock(&a->mu);
}

/* Extra headers of a reply. */
struct hdrs {
	const char *ctype, *etag, *allow;
	bool auth, no_cache;
};

/* The agent's clock as its replies say it (X-Xpool-Time), so that a console can show how far
 * this node's clock is from its own: seconds since 1970 with milliseconds. $XPOOL_CLOCK_OFFSET
 * (seconds) shifts it, for tests of a node whose clock is wrong. */
static void clock_text(char *buf, size_t len)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	double t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	const char *off = getenv("XPOOL_CLOCK_OFFSET");
	if (off && *off) {
		char *end;
		double o = strtod(off, &end);
		if (!*end && o > -1e9 && o < 1e9)
			t += o;
	}
	snprintf(buf, len, "%.3f", t);
}

/* Queues a reply (the body is copied) and counts it. */
static enum MHD_Result reply(struct req *r, unsigned code, const char *body, size_t len, const struct hdrs *h)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)(body ? body : ""),
								     MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	if (h && h->ctype)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, h->ctype);
	if (h && h->etag)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, h->etag);
	if (h && h->allow)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, h->allow);
	if (h && h->auth)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"xpool\"");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	char now[48];
	clock_text(now, sizeof now);
	MHD_add_response_header(resp, "X-Xpool-Time", now);
	enum MHD_Result ret = MHD_queue_response(r->conn, code, resp);
	MHD_destroy_response(resp);
	r->code = code;
	count(r->a, r->route, code);
	return ret;
}

/* A JSON error reply {"error": msg}. */
static enum MHD_Result fail(struct req *r, unsigned code, const char *msg, const char *allow, bool auth)
{
	json_t *o = json_object();
	json_object_set_new(o, "error", xp_json_str(msg));
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	struct hdrs h = {.ctype = "application/json", .allow = allow, .auth = auth};
	enum MHD_Result ret = reply(r, code, s, strlen(s), &h);
	free(s);
	return ret;
}

/* The head of a request, as xpa_route takes it. */
static void head_of(struct MHD_Connection *conn, const char *method, const char *url, struct xpa_head *h)
{
	*h = (struct xpa_head){
		.method = method,
		.url = url,
		.authorization = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
		.content_length = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH),
		.if_none_match = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH),
		.history = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "history"),
		.layer = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "layer"),
	};
}

/* What the agent's settings say of requests. */
static struct xpa_policy policy_of(const struct xp_agent *a)
{
	return (struct xpa_policy){.read_token = a->read_token, .write_token = a->write_token, .config = a->config};
}

/* xpa_route with the tokens as they are now: SIGHUP may rotate them (xp_agent_set_tokens)
 * while requests are judged, so the policy is read and used under tok_mu. */
static void route_now(struct xp_agent *a, const struct xpa_head *h, bool early, struct xpa_verdict *v)
{
	pthread_mutex_lock(&a->tok_mu);
	struct xpa_policy pol = policy_of(a);
	xpa_route(&pol, h, early, v);
	pthread_mutex_unlock(&a->tok_mu);
}

/* Replaces one token with a copy of t, the old one wiped: nothing when t is NULL or the agent
 * has no token of that kind (rotation changes a secret, never whether there is one). */
static void token_swap(char **slot, const char *t)
{
	if (!t || !*slot)
		return;
	explicit_bzero(*slot, strlen(*slot));
	free(*slot);
	*slot = xp_strdup(t);
}

void xp_agent_set_tokens(struct xp_agent *a, const char *read_token, const char *write_token)
{
	pthread_mutex_lock(&a->tok_mu);
	token_swap(&a->read_token, read_token);
	token_swap(&a->write_token, write_token);
	pthread_mutex_unlock(&a->tok_mu);
}

static char *body_with_history(struct xp_agent *a, long secs, size_t *len)
{
	json_t *h = xp_hist_ring_json(a->ring, time(NULL) - secs);
	char *hs = json_dumps(h, JSON_COMPACT);
	json_decref(h);
	/* The body is one object: its closing brace makes way for the member. */
	char *b = xp_asprintf("%.*s,\"history\":%s}", (int)(a->body_len - 1), a->body, hs);
	free(hs);
	*len = strlen(b);
	return b;
}

/* The /v1/node reply (hist: seconds of history asked, -1 none); a 304 when inm names its ETag. */
static enum MHD_Result get_node(struct req *r, const char *inm, long hist)
{
	struct xp_agent *a = r->a;
	pthread_mutex_lock(&a->mu);
	if (!a->body) {
		pthread_mutex_unlock(&a->mu);
		return fail(r, 503, "no node discovered yet", NULL, false);
	}
	char etag[sizeof a->etag];
	memcpy(etag, a->etag, sizeof etag);
	bool same = inm && xpa_etag_matches(inm, etag);
	size_t len = a->body_len;
	/* The ETag is the node's: a 304 says the node did not change (and sends no history). */
	char *body = hist > 0 && !same ? body_with_history(a, hist, &len) : xp_strndup(a->body, a->body_len);
	pthread_mutex_unlock(&a->mu);
	struct hdrs h = {.ctype = "application/json", .etag = etag};
	/* A 304 carries the body too: libmicrohttpd sends a 304 like a HEAD, headers only, with the
	 * Content-Length of that body, the 200's (RFC 9110 8.6), never a wrong 0. */
	enum MHD_Result ret = reply(r, same ? 304 : 200, body, len, &h);
	free(body);
	return ret;
}

static enum MHD_Result get_text(struct req *r)
{
	struct xp_agent *a = r->a;
	unsigned code = 200;
	size_t len = 0;
	pthread_mutex_lock(&a->mu);
	char *body = r->route == XPA_HEALTH ? xpa_health(a, &code, &len) : xpa_metrics(a, &len);
	pthread_mutex_unlock(&a->mu);
	if (!body)
		return fail(r, 500, "out of memory", NULL, false);
	struct hdrs h = {.ctype = r->route == XPA_HEALTH ? "application/json" : "text/plain; version=0.0.4; charset=utf-8"};
	enum MHD_Result ret = reply(r, code, body, len, &h);
	free(body);
	return ret;
}

static void *probe_worker(void *arg)
{
	struct req *r = arg;
	struct xp_agent *a = r->a;
	r->reply = xpa_probe_run(&r->job, &r->reply_code, &r->reply_len);
	if (r->cc) {
		pthread_mutex_lock(&a->conn_mu);
		r->cc->probing = false;
		r->client_gone = r->cc->gone;
		pthread_mutex_unlock(&a->conn_mu);
	}
	/* Free for the next probe: whoever starts it joins this thread first, which then
	 * only has the resume below left to do. */
	atomic_store(&a->probe_busy, 0);
	/* The reply is in place before the connection runs again. */
	MHD_resume_connection(r->conn);
	return NULL;
}

/* Starts the accepted probe on a worker thread, the connection suspended meanwhile. */
static enum MHD_Result start_probe(struct req *r)
{
	struct xp_agent *a = r->a;
	int expected = 0;
	if (!atomic_compare_exchange_strong(&a->probe_busy, &expected, 1))
		return fail(r, 409, "another probe is running; try again when it is done", NULL, false);
	pthread_mutex_lock(&a->mu);
	/* The previous worker has finished (probe_busy was clear): reap its thread. */
	if (a->probe_joinable) {
		pthread_join(a->probe_thread, NULL);
		a->probe_joinable = false;
	}
	xpa_probe_job_init(&r->job, a, r->probe);
	pthread_mutex_unlock(&a->mu);
	r->probe_started = true;
	if (r->cc) {
		/* The watcher cancels the probe through the connection when its client hangs up;
		 * stopping cancels it there too (xp_agent_free sets every connection's flag). */
		pthread_mutex_lock(&a->conn_mu);
		r->cc->probing = true;
		r->cc->gone = false;
		r->cc->waiting = false;
		pthread_mutex_unlock(&a->conn_mu);
		r->job.cancel = &r->cc->cancel;
	}
	/* Suspended before the worker exists, so its resume can never come first. */
	MHD_suspend_connection(r->conn);
	/* Under the lock with the stop flag: xp_agent_free either sees this worker and joins
	 * it, or this sees the flag and starts none. */
	pthread_mutex_lock(&a->mu);
	bool stopping = atomic_load(&a->cancel) != 0;
	int e = stopping ? 0 : pthread_create(&a->probe_thread, NULL, probe_worker, r);
	a->probe_joinable = !stopping && e == 0;
	pthread_mutex_unlock(&a->mu);
	if (stopping || e != 0) {
		if (r->cc) {
			pthread_mutex_lock(&a->conn_mu);
			r->cc->probing = false;
			pthread_mutex_unlock(&a->conn_mu);
		}
		MHD_resume_connection(r->conn);
		r->is_probe = false;
		atomic_store(&a->probe_busy, 0);
		char msg[128];
		snprintf(msg, sizeof msg, "%s%s", stopping ? "the agent is stopping" : "cannot start the probe: ",
			 stopping ? "" : strerror(e));
		return fail(r, stopping ? 503 : 500, msg, NULL, false);
	}
	return MHD_YES;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
			      const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	(void)version;
	(void)upload_data;
	struct xp_agent *a = cls;
	struct req *r = *con_cls;
	struct xpa_head head;
	head_of(conn, method, url, &head);
	struct xpa_verdict v;
	if (!r) {
		r = xp_calloc(1, sizeof *r);
		r->a = a;
		r->conn = conn;
		r->cc = conn_ctx(conn);
		atomic_fetch_add(&a->inflight, 1);
		r->t0 = mono_s();
		r->route = xpa_route_of(url);
		snprintf(r->method, sizeof r->method, "%s", method);
		snprintf(r->path, sizeof r->path, "%s", url);
		*con_cls = r;
		/* GETs are answered on the next call, once the request is complete: a reply queued
		 * before that makes libmicrohttpd close the connection instead of keeping it alive. */
		if (r->route != XPA_PROBE) {
			/* Except a body announced too large: refused now rather than read. */
			route_now(a, &head, true, &v);
			if (v.act == XPA_ANSWER) {
				r->answered = true;
				return fail(r, v.code, v.msg, v.allow, v.auth);
			}
			return MHD_YES;
		}
	} else if (!*upload_data_size)
		/* The request is complete (a later call without data): the deadline is met. */
		conn_waiting(a, r->cc, false);
	if (r->too_large && !*upload_data_size) {
		if (r->code)
			return MHD_YES; /* answered already */
		r->answered = true;
		return fail(r, 413, "request body too large", NULL, false);
	}
	if (!r->answered && (r->route == XPA_PROBE || !*upload_data_size)) {
		/* A GET once it is complete, a probe's POST as soon as its head is in. */
		r->answered = true;
		route_now(a, &head, false, &v);
		if (v.act == XPA_ANSWER)
			return fail(r, v.code, v.msg, v.allow, v.auth);
		if (v.act == XPA_RUN_PROBE) {
			r->probe = v.probe;
			r->is_probe = true;
			return MHD_YES;
		}
		return v.act == XPA_SERVE_NODE ? get_node(r, head.if_none_match, v.history) : get_text(r);
	}
	if (*upload_data_size) {
		/* Bodies are not used; count them (chunked ones have no Content-Length) and drop them. */
		r->body_bytes += *upload_data_size;
		*upload_data_size = 0;
		/* A body without a length that grows past the limit gets 413 once it has ended
		 * (libmicrohttpd takes no reply halfway through a body); one that goes on past
		 * TOO_LARGE_CUT is cut off instead. */
		if (r->body_bytes > XP_AGENT_MAX_REQUEST_BODY) {
			r->too_large = true;
			r->is_probe = false;
		}
		if (r->body_bytes > TOO_LARGE_CUT) {
			if (!r->code) { /* logged and counted as the 413 it would have had */
				r->code = 413;
				count(a, r->route, 413);
			}
			return MHD_NO;
		}
		return MHD_YES;
	}
	if (!r->is_probe)
		return MHD_YES; /* a reply is queued already */
	if (!r->probe_started)
		return start_probe(r);
	if (!r->reply)
		return MHD_YES; /* resumed without a reply: cannot happen, the worker sets it first */
	r->is_probe = false;
	if (r->client_gone) {
		/* Nobody to answer: logged and counted as such, never as the probe's 200. */
		r->code = CLIENT_GONE;
		count(a, r->route, CLIENT_GONE);
		return MHD_NO;
	}
	struct hdrs h = {.ctype = "application/json"};
	return reply(r, r->reply_code, r->reply, r->reply_len, &h);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct xp_agent *a = cls;
	struct req *r = *con_cls;
	(void)toe;
	if (!r)
		return;
	*con_cls = NULL;
	/* A probe whose client left before its reply: libmicrohttpd may close the connection
	 * without calling the handler again, so count it here, once, as the 499 it is. */
	if (r->probe_started && r->code == 0) {
		r->code = CLIENT_GONE;
		count(a, r->route, CLIENT_GONE);
	}
	if (a->verbose > 0) {
		char client[NI_MAXHOST + 8] = "?";
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		if (ci && ci->client_addr)
			addr_str(ci->client_addr,
				 ci->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
									: sizeof(struct sockaddr_in),
				 client, sizeof client, false);
		/* Paths come from the network: no control bytes into the log. Headers (the
		 * Authorization one above all) are never logged. */
		xp_mask_controls(r->path);
		xp_mask_controls(r->method);
		fprintf(a->log, "xpool agent: %s %s %u %.1f ms %s\n", r->method, r->path, r->code,
			(mono_s() - r->t0) * 1000.0, client);
		fflush(a->log);
	}
	xpa_probe_job_clear(&r->job);
	free(r->reply);
	/* Keep-alive: the next request has its deadline from now. */
	conn_waiting(a, r->cc, true);
	free(r);
	atomic_fetch_sub(&a->inflight, 1);
}

/* libmicrohttpd's own errors (a failed accept, a TLS handshake gone wrong): only with -v. */
__attribute__((format(printf, 2, 0))) static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct xp_agent *a = cls;
	if (a->verbose <= 0)
		return;
	char msg[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	size_t n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	fprintf(a->log, "xpool agent: libmicrohttpd: %s\n", msg);
	fflush(a->log);
}

int xp_agent_serve(struct xp_agent *a, char *url, size_t urllen, struct xp_err *err)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	if (xp_agent_listen_parse(a->listen, &ss, &sl, err) < 0)
		return -1;
	bool tls = a->tls_cert && a->tls_key;
	if (tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
		return xp_errf(err, "this libmicrohttpd was built without TLS: --tls-cert/--tls-key cannot be used");
	/* ITC: MHD_quiesce_daemon, when stopping, needs it. */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC |
			 MHD_USE_ERROR_LOG;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (tls)
		flags |= MHD_USE_TLS;
	struct MHD_OptionItem opts[] = {
		{MHD_OPTION_SOCK_ADDR, 0, &ss},
		/* One address cannot take every slot: its share is kept by shed_same_address, not by
		 * libmicrohttpd's per-IP limit, which would refuse a good client behind the address. */
		{MHD_OPTION_CONNECTION_LIMIT, (intptr_t)a->max_connections, NULL},
		{MHD_OPTION_CONNECTION_TIMEOUT, CONN_TIMEOUT_S, NULL},
		{MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)CONN_MEMORY, NULL},
		{tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, a->tls_key},
		{MHD_OPTION_HTTPS_MEM_CERT, 0, a->tls_cert},
		{MHD_OPTION_END, 0, NULL},
	};
	/* The logger first: libmicrohttpd reports errors in the options after it through it. */
	a->daemon = MHD_start_daemon(flags, 0, NULL, NULL, handle, a, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, a,
				     MHD_OPTION_ARRAY, opts,
				     MHD_OPTION_NOTIFY_COMPLETED, completed, a, MHD_OPTION_NOTIFY_CONNECTION, conn_notify,
				     a, MHD_OPTION_END);
	if (!a->daemon) {
		/* libmicrohttpd says why only through its logger; the usual causes are these. */
		return xp_errf(err, "cannot listen on %s (address in use or not on this machine%s?)", a->listen,
			       tls ? ", or an unusable TLS certificate or key" : "");
	}
	int e = pthread_create(&a->watcher, NULL, watcher, a);
	if (e != 0) {
		MHD_stop_daemon(a->daemon);
		a->daemon = NULL;
		return xp_errf(err, "cannot start the connection watcher: %s", strerror(e));
	}
	a->watching = true;
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(a->daemon, MHD_DAEMON_INFO_LISTEN_FD);
	struct sockaddr_storage bound;
	socklen_t bl = sizeof bound;
	if (!di || getsockname(di->listen_fd, (struct sockaddr *)&bound, &bl) < 0) {
		bound = ss;
		bl = sl;
	}
	char hp[NI_MAXHOST + NI_MAXSERV + 4];
	addr_str((struct sockaddr *)&bound, bl, hp, sizeof hp, true);
	snprintf(url, urllen, "%s://%s", tls ? "https" : "http", hp);
	return 0;
}

void xp_agent_free(struct xp_agent *a)
{
	if (!a)
		return;
	/* No new connections; a running probe is killed and its worker joined: it resumes its
	 * connection, and libmicrohttpd must not stop with a connection still suspended. */
	MHD_socket lfd = a->daemon ? MHD_quiesce_daemon(a->daemon) : MHD_INVALID_SOCKET;
	pthread_mutex_lock(&a->mu);
	atomic_store(&a->cancel, 1);
	bool join = a->probe_joinable;
	a->probe_joinable = false;
	pthread_mutex_unlock(&a->mu);
	pthread_mutex_lock(&a->conn_mu);
	for (struct xpa_conn *cc = a->conns; cc; cc = cc->next)
		atomic_store(&cc->cancel, 1);
	pthread_mutex_unlock(&a->conn_mu);
	if (join)
		pthread_join(a->probe_thread, NULL);
	/* The replies in flight (the cancelled probe's among them) get a moment to go out. */
	double give_up = mono_s() + STOP_GRACE_S;
	while (a->daemon && atomic_load(&a->inflight) > 0 && mono_s() < give_up)
		nanosleep(&(struct timespec){0, 5000000}, NULL);
	if (a->watching) {
		pthread_mutex_lock(&a->conn_mu);
		a->watch_stop = true;
		pthread_cond_signal(&a->watch_cv);
		pthread_mutex_unlock(&a->conn_mu);
		pthread_join(a->watcher, NULL);
	}
	if (a->daemon)
		MHD_stop_daemon(a->daemon);
	if (lfd != MHD_INVALID_SOCKET)
		close(lfd);
	/* libmicrohttpd reports every close; anything left is freed here all the same. */
	while (a->conns) {
		struct xpa_conn *cc = a->conns;
		a->conns = cc->next;
		free(cc);
	}
	pthread_mutex_destroy(&a->conn_mu);
	pthread_cond_destroy(&a->watch_cv);
	if (a->log_owned)
		fclose(a->log);
	pthread_mutex_destroy(&a->mu);
	xp_cluster_free(a->cluster);
	xp_hist_ring_free(a->ring);
	free(a->node_json);
	free(a->body);
	free(a->error);
	free(a->listen);
	/* The secrets do not outlive the agent in freed memory. */
	if (a->read_token)
		explicit_bzero(a->read_token, strlen(a->read_token));
	if (a->write_token)
		explicit_bzero(a->write_token, strlen(a->write_token));
	if (a->tls_key)
		explicit_bzero(a->tls_key, strlen(a->tls_key));
	free(a->read_token);
	free(a->write_token);
	pthread_mutex_destroy(&a->tok_mu);
	free(a->tls_cert);
	free(a->tls_key);
	free(a);
}
