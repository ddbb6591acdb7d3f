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
	char *listen, *read_token, *write_token, *tls_cert, *tls_key;
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
