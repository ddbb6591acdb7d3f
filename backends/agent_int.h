/* agent_int.h: what the agent's files share (agent_server.c, agent_metrics.c,
 * agent_probe.c); not for the rest of the program. */
#ifndef XP_AGENT_INT_H
#define XP_AGENT_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "agent_server.h"

/* Route labels of the request counter. */
enum xpa_route { XPA_NODE, XPA_HEALTH, XPA_METRICS, XPA_PROBE, XPA_OTHER, XPA_ROUTE_COUNT };
/* Most distinct (route, code) pairs counted; codes are a handful, so this never fills. */
#define XPA_MAX_COUNTS 64

/* One requests_total series. */
struct xpa_count {
	int route, code;
	uint64_t n;
};

/* One open connection (libmicrohttpd's socket context), from accept to close: the
 * watcher thread cuts a connection that takes too long to send a request and notices a
 * client that hangs up while its probe runs. Guarded by xp_agent.conn_mu. */
struct xpa_conn {
	struct xpa_conn *prev, *next;
	int fd;
	bool waiting;             /* a request is awaited or still arriving */
	double wait_since;        /* since when (monotonic s): the connection's start or last reply */
	double answer_since;      /* when its request in answer was complete (monotonic s), !waiting */
	bool cut;                 /* shut down for missing the deadline */
	bool probing;             /* its probe runs (the connection is suspended) */
	bool gone;                /* the client hung up while its probe ran */
	atomic_int cancel;        /* the running probe's cancel flag */
	unsigned char addr[16];   /* the client's address, IPv4 as IPv4-mapped IPv6 (the per-address share) */
	bool has_addr;            /* addr is known */
};

struct xp_agent {
	/* Settings, owned copies. */
	char *listen, *tls_cert, *tls_key;
	/* The tokens change on SIGHUP (xp_agent_set_tokens) while handlers compare them: tok_mu
	 * guards the strings; whether there is one of each never changes after xp_agent_new. */
	pthread_mutex_t tok_mu;
	char *read_token, *write_token;
	double interval_s;
	unsigned max_connections;
	int verbose;
	FILE *log;
	bool log_owned; /* log is our duplicate of stderr (closed with the agent) */
	const struct xp_agent_config *config;
	time_t started;

	pthread_mutex_t mu;       /* guards everything below but the atomics and the daemon */
	struct xp_cluster *cluster; /* the last good node, as a one-node cluster; NULL before one */
	char *node_json;          /* its node JSON, to see changes */
	char *body;               /* the /v1/node reply */
	size_t body_len;
	char etag[40];            /* "\"<32 hex>\"": of the /v1/node body */
	uint64_t generation;
	time_t discovered;        /* when the last good node was discovered */
	double discovery_s;       /* how long the last discovery took */
	char *error;              /* the last discovery's error, NULL when it worked */
	uint64_t discovery_errors;
	struct xp_hist_ring *ring; /* the node's samples of the last XP_AGENT_HISTORY_S (?history=) */
	struct xpa_count counts[XPA_MAX_COUNTS];
	size_t n_counts;
	pthread_t probe_thread;   /* the last probe's thread, until joined */
	bool probe_joinable;

	pthread_mutex_t conn_mu;  /* guards conns and their fields */
	struct xpa_conn *conns;   /* open connections */
	pthread_cond_t watch_cv;  /* wakes the watcher to stop */
	pthread_t watcher;
	bool watching, watch_stop;
	unsigned per_ip;          /* connections one client address may hold */
	unsigned shed_at;         /* open connections past which the longest-waiting one is shed */
	atomic_int inflight;      /* requests begun and not completed */

	atomic_int probe_busy;    /* a probe runs: a second one gets 409 */
	atomic_int cancel;        /* set when stopping: the running probe is killed */
	struct MHD_Daemon *daemon;
};

/* What a request's head holds, as libmicrohttpd parsed it (NULL: absent). */
struct xpa_head {
	const char *method, *url;
	const char *authorization, *content_length, *if_none_match; /* headers */
	const char *history, *layer;                                 /* query arguments */
};
/* What the decision depends on of the agent's settings. */
struct xpa_policy {
	const char *read_token, *write_token; /* NULL: none */
	const struct xp_agent_config *config; /* probe whitelist, may be NULL */
};
/* What to do with a request. */
enum xpa_act {
	XPA_CONTINUE,   /* early: nothing to say yet, read the rest of the request */
	XPA_ANSWER,     /* reply code with {"error": msg} (allow: the Allow header; auth: WWW-Authenticate) */
	XPA_SERVE_NODE, /* the /v1/node reply, with history seconds of samples when >= 0 */
	XPA_SERVE_TEXT, /* /v1/health or /metrics */
	XPA_RUN_PROBE   /* run probe once the (empty) body has arrived */
};
/* xpa_route's answer; msg may point into buf. */
struct xpa_verdict {
	int route; /* enum xpa_route */
	int act;   /* enum xpa_act */
	unsigned code;
	const char *msg, *allow;
	bool auth;
	long history;
	const struct xp_agent_probe *probe;
	char buf[160];
};
/* The route label of a path (enum xpa_route). */
int xpa_route_of(const char *url);
/* True when an Authorization header value is "Bearer <token>" for this token. */
bool xpa_bearer_ok(const char *authorization, const char *token);
/* True when an If-None-Match list names etag (or is "*"). */
bool xpa_etag_matches(const char *inm, const char *etag);
/* Decides what the agent does with a request from its head alone. early: the head has just
 * arrived (only a body announced too large is refused then); else the request is complete. */
void xpa_route(const struct xpa_policy *p, const struct xpa_head *h, bool early, struct xpa_verdict *v);

/* Route label names ("/v1/node", ...). */
extern const char *const xpa_route_names[XPA_ROUTE_COUNT];

/* The /metrics text (Prometheus exposition 0.0.4); call with a->mu held. Caller frees. */
char *xpa_metrics(struct xp_agent *a, size_t *len);
/* The /v1/health reply; call with a->mu held. Sets *code to 200 or 503. Caller frees. */
char *xpa_health(struct xp_agent *a, unsigned *code, size_t *len);

/* A probe to run: copied under a->mu, then run without the lock. */
struct xpa_probe_job {
	const struct xp_agent_probe *probe;
	char *node;
	char **envs;              /* environment ids of the node's devices */
	size_t n_envs;
	const atomic_int *cancel;
};
/* Fills job from the agent's current node; call with a->mu held. */
void xpa_probe_job_init(struct xpa_probe_job *job, struct xp_agent *a, const struct xp_agent_probe *p);
/* Frees a job's copies. */
void xpa_probe_job_clear(struct xpa_probe_job *job);
/* Runs the job's probe; the "xpool.probe/v1" JSON reply (caller frees), *code 200 or 500. */
char *xpa_probe_run(const struct xpa_probe_job *job, unsigned *code, size_t *len);

#endif
