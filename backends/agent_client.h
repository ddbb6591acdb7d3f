/* agent_client.h: the console's side of the node agents: a pool of agent URLs
 * polled all at once through one libcurl multi handle.
 *
 * Each agent keeps its last good node. A poll asks every agent that is due for
 * GET /v1/node with If-None-Match, so an unchanged node costs a 304 and no
 * parsing. A failing agent (refused, timed out, garbage, too large, another
 * node's identity) keeps its last data, is tried again after a doubling delay,
 * and its node shows as unreachable with the age of that data. */
#ifndef XP_AGENT_CLIENT_H
#define XP_AGENT_CLIENT_H

#include <curl/curl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "history_json.h"
#include "model.h"
#include "xp.h"

/* Seconds of samples a console asks a new agent for: all an agent keeps (XP_AGENT_HISTORY_S). */
#define XP_AGENT_HISTORY_ASK_S 600
/* Largest /v1/node reply accepted: a node at the 1,024-device cap is about 2 MiB. */
#define XP_AGENT_MAX_BODY ((size_t)8 << 20)
/* Longest agent URL. */
#define XP_AGENT_MAX_URL 2048
/* Most agents one pool holds (each is a socket and a descriptor). */
#define XP_AGENT_MAX 100000

/* How a pool talks to its agents. Zero fields take the defaults. */
struct xp_agent_pool_opts {
	double connect_timeout_s; /* default 2 */
	double timeout_s;         /* whole request, default 5 */
	double backoff_base_s;    /* first retry delay of a failing agent, default 2 */
	double backoff_max_s;     /* longest retry delay, default 60 */
	const char *ca_file;      /* CA bundle for https agents with private certificates, NULL for the system's */
	size_t max_body;          /* default XP_AGENT_MAX_BODY */
	const atomic_bool *cancel; /* when set (by another thread), a poll stops at once; NULL for none */
	/* When > 0, a poll returns after this many seconds even while some agents have not
	 * answered; their requests stay in flight and a later poll finishes them (the console:
	 * one hung agent must not hold back every other agent's data until its timeout).
	 * 0: a poll waits for every agent to answer or time out (one-shot commands). */
	double cycle_s;
};

/* One agent as the pool sees it, for listings (strings owned by the pool; valid until the next call). */
struct xp_agent_status {
	const char *url;
	const char *node;      /* the node it serves, NULL before its first good answer */
	bool up;               /* the last poll got good data (200 or 304) */
	bool ever;             /* it has answered with good data at least once */
	const char *error;     /* why the last poll failed, NULL when up */
	time_t last_ok;        /* when good data last came, 0 never */
	double latency_ms;     /* the last poll's time, -1 before any */
	int64_t generation;    /* the agent's own generation of its node, -1 before any */
	unsigned fails;        /* failures in a row */
	time_t next_try;       /* when a failing agent is asked again */
	uint64_t polls, not_modified, rejected; /* counts since it was added */
	double skew_s;         /* the agent's clock minus the console's at the last good reply, seconds */
	bool have_skew;        /* skew_s was measured (the reply carried X-Xpool-Time or Date) */
};

struct xp_agent_pool;

/* A curl handle set up as every request to an agent is (http and https only, no redirects,
 * no signals, keepalive, the CA file when given, curl's words for a failure in errbuf, which
 * holds CURL_ERROR_SIZE bytes); NULL when curl cannot make one. */
CURL *xp_agent_easy_new(const char *ca_file, double connect_s, double total_s, char *errbuf);
/* A new empty pool; opts may be NULL. */
struct xp_agent_pool *xp_agent_pool_new(const struct xp_agent_pool_opts *opts);
/* Frees a pool and closes its connections; NULL is fine. */
void xp_agent_pool_free(struct xp_agent_pool *p);
/* The agent's clock from one reply header line (n bytes, not NUL-terminated): X-Xpool-Time
 * (seconds since 1970 with a fraction, which xpool agents send) wins over the HTTP Date (whole
 * seconds, which any server sends, used only while clock is 0); clock unchanged otherwise. */
double xp_agent_clock_header(const char *data, size_t n, double clock);
/* When the header line (n bytes) is an ETag of printable ASCII shorter than cap, copies its
 * value into out and returns true (it goes back in our next request: no CR may get in). */
bool xp_agent_etag_header(const char *data, size_t n, char *out, size_t cap);
/* Checks an agent URL: http or https, a host, no user:password (secrets go in token files),
 * no spaces or control bytes. 0 or -1 with err set. */
int xp_agent_url_check(const char *url, struct xp_err *err);
/* The URL as the pool names its agent, without trailing slashes ("http://a:1/" and "http://a:1"
 * are one agent; it is also the source of the agent's node). Caller frees. */
char *xp_agent_url_norm(const char *url);
/* Adds an agent (token_file NULL for none; it is read now). -1 with err set on a bad URL,
 * an unreadable or world-readable token file, or a URL already in the pool. */
int xp_agent_pool_add(struct xp_agent_pool *p, const char *url, const char *token_file, struct xp_err *err);
/* Removes an agent by URL (a trailing '/' is ignored); -1 when it is not in the pool. */
int xp_agent_pool_remove(struct xp_agent_pool *p, const char *url);
/* Adds the agents listed in an agents file: one "URL [TOKEN_FILE]" a line, '#' comments,
 * token paths relative to the file's directory. Errors name file:line; on error nothing is added. */
int xp_agent_pool_load_file(struct xp_agent_pool *p, const char *path, const char *default_token,
			    struct xp_err *err);
/* Number of agents. */
size_t xp_agent_pool_size(const struct xp_agent_pool *p);
/* Polls every agent that is due (every agent when force) concurrently and returns when all have
 * answered or timed out, or after opts.cycle_s when set, leaving the slow ones in flight (they
 * are not asked again until they end). Returns the number that failed this time. */
size_t xp_agent_pool_poll(struct xp_agent_pool *p, bool force);
/* Sets the cancel flag of a pool made without one (see opts.cancel). */
void xp_agent_pool_set_cancel(struct xp_agent_pool *p, const atomic_bool *cancel);
/* Between polls with a cycle: drives the requests still in flight for up to secs, so that a
 * slow agent's reply is read as it comes and its timeout judged on time, not at the next poll.
 * Returns at once (false) when none is in flight; else true when they have all ended, secs
 * have passed, or xp_agent_pool_wake was called. What ended is judged by the next poll. */
bool xp_agent_pool_pump(struct xp_agent_pool *p, double secs);
/* Sets opts.cycle_s (seconds; 0 for none) of a pool already made. */
void xp_agent_pool_set_cycle(struct xp_agent_pool *p, double cycle_s);
/* Wakes a poll running in another thread so that it sees opts.cancel (the one call that is
 * safe from another thread while a poll runs). */
void xp_agent_pool_wake(struct xp_agent_pool *p);
/* Counts agents whose last poll worked (up) and failed or never ran (down). */
void xp_agent_pool_counts(const struct xp_agent_pool *p, size_t *up, size_t *down);
/* Bumped whenever what xp_agent_pool_cluster would return changes (data, states, the agent list). */
uint64_t xp_agent_pool_generation(const struct xp_agent_pool *p);
/* The status of agent i (0 <= i < size), in the order they were added. */
void xp_agent_pool_status(const struct xp_agent_pool *p, size_t i, struct xp_agent_status *st);
/* A new cluster of every agent's node (copies): good data as the agent sent it with the agent's
 * URL as source; a failing agent's last data as unreachable with its age; an agent never heard
 * from as an empty unreachable node named after its host and port. now is the clock for ages. */
struct xp_cluster *xp_agent_pool_cluster(const struct xp_agent_pool *p, time_t now);
/* The cluster of every agent's node as xp_agent_pool_cluster makes it, built incrementally: the
 * pool keeps each agent's node and shares it with every cluster (xp_node_ref; a shared node is
 * never changed), making it again only when the agent's data or state changed since (a down
 * agent's every time, for its age), or every one when basis differs from the last call's. fix
 * (NULL for none) is applied to each node made (the baselines' ECU: basis names them). */
struct xp_cluster *xp_agent_pool_cluster_kept(struct xp_agent_pool *p, time_t now, uint64_t basis,
					      void (*fix)(struct xp_node *));
/* What the pool did since it was made: replies decoded, nodes made by xp_agent_pool_cluster_kept
 * (the work an unchanged node does not cost; for the tests and benchmarks). */
void xp_agent_pool_work(const struct xp_agent_pool *p, uint64_t *decoded, uint64_t *built);
/* Takes the pool's log of what changed since the last call (agents going down, coming back,
 * replies rejected): an array of *n lines (caller frees each and the array); NULL when none. */
char **xp_agent_pool_take_log(struct xp_agent_pool *p, size_t *n);
/* Makes the pool ask each agent, until its first good answer, for the last secs seconds of its
 * samples too (GET /v1/node?history=SECS; 0: never, the default): a console that starts late
 * still sees the recent past. */
void xp_agent_pool_want_history(struct xp_agent_pool *p, int secs);
/* Takes the samples agents sent since the last call: an array of *n batches (caller frees each
 * with xp_hist_batch_free and the array); NULL when none. A history that does not parse is left
 * out and logged (xp_agent_pool_take_log); the node itself is kept. */
struct xp_hist_batch *xp_agent_pool_take_history(struct xp_agent_pool *p, size_t *n);

#endif
