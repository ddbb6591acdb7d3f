/* poller.h: the console's refresh thread. It reads the data source (this machine,
 * a file, a replay, and the node agents) off the drawing path, every delay
 * seconds or when asked, and hands each new cluster to the key loop. */
#ifndef XP_POLLER_H
#define XP_POLLER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "cmd.h"
#include "live.h"
#include "model.h"

/* What the refresh thread and the key loop share; every field is private to poller.c. */
struct xp_live;

struct xp_poller {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool started, stop, want, force;
	atomic_bool cancel;            /* set by xp_poller_stop: a running poll gives up at once */
	double delay;
	/* the source, copied from the context */
	char *topology, *inventory, *replay, *db;
	char *agents, *agents_file, *agent_token, *agent_ca;
	char *slurm; /* --slurm (""), --slurm-conf FILE; NULL for none */
	bool k8s;    /* --k8s */
	char *k8s_server, *k8s_token, *k8s_ca; /* --k8s-server, --k8s-token-file, --k8s-ca */
	double agent_timeout;
	bool agents_changed;           /* the agent options changed: build the pool again */
	char **ops;                    /* queued `:agent add|rm`: "+URL" or "-URL" */
	size_t n_ops, cap_ops;
	struct xp_live *live;          /* the source the thread loads, with its agent pool */
	/* results, for the key loop */
	struct xp_cluster *result;     /* a fresh cluster not yet taken, or NULL */
	char error[1024];              /* the last load's error, "" when it worked */
	bool have_result;              /* result or error is new */
	bool unchanged;                /* the last poll found nothing new: the data is fresh as it is */
	bool busy;                     /* a load is running */
	bool have_agents;
	size_t agents_up, agents_down;
	char *agents_text;             /* `agent ls` of the last poll */
	struct xp_agent_snap *snaps;   /* each agent's status after the last poll (agents view) */
	size_t n_snaps;
	uint64_t snaps_gen;            /* moves with each poll that copied them */
	char **log;                    /* agent changes not yet taken */
	size_t n_log, cap_log;
	struct xp_hist_batch *hist;    /* agents' recent samples not yet taken */
	size_t n_hist, cap_hist;
	struct xp_live_health health;  /* the engine's, after the last poll */
	bool have_health;              /* the source is an engine */
};

/* What xp_poller_take hands over. */
struct xp_poller_news {
	struct xp_cluster *cluster; /* new data (caller owns), or NULL */
	bool fresh;                 /* a poll worked: the data shown is current even if cluster is NULL */
	bool failed;                /* the load failed: error says why */
	char error[1024];
	char **log;                 /* agent changes (caller frees each and the array), n_log of them */
	size_t n_log;
	struct xp_hist_batch *hist; /* agents' recent samples (caller frees each and the array), n_hist */
	size_t n_hist;
};

/* A new poller, not started (heap-allocated: a thread stuck in a vendor tool may outlive the
 * console, and must not find its memory freed). */
struct xp_poller *xp_poller_new(void);
/* Copies the source options from ctx (the thread reads them on its next load). */
void xp_poller_set_source(struct xp_poller *p, const struct xp_ctx *ctx);
/* Starts the thread; -1 when it cannot be created. */
int xp_poller_start(struct xp_poller *p, const struct xp_ctx *ctx);
/* Asks for a load now; force also asks agents that are backing off. */
void xp_poller_request(struct xp_poller *p, bool force);
/* Queues `:agent add URL` (add) or `:agent rm URL`; -1 with err set on a URL that cannot be one. */
int xp_poller_agent(struct xp_poller *p, bool add, const char *url, struct xp_err *err);
/* Takes what arrived since the last call, without waiting; false when nothing did. */
bool xp_poller_take(struct xp_poller *p, struct xp_poller_news *news);
/* Agent counts of the last poll; false when the console has no agents. */
bool xp_poller_agent_counts(struct xp_poller *p, size_t *up, size_t *down);
/* A copy of the last poll's agent listing (caller frees), NULL before one or without agents. */
char *xp_poller_agents_text(struct xp_poller *p);
/* When the agents' statuses changed since *gen (a poll ended): a copy of them in *out (caller
 * frees with xp_agent_snaps_free), *n of them, *gen moved, and true; false, nothing copied,
 * otherwise. Holds the lock only to copy: the poll itself runs without it. */
bool xp_poller_agent_snaps(struct xp_poller *p, uint64_t *gen, struct xp_agent_snap **out, size_t *n);
/* The engine's health after the last poll (see xp_live_health); false when the source is no engine. */
bool xp_poller_engine_health(struct xp_poller *p, struct xp_live_health *h);
/* Stops the thread (a poll of agents is cancelled at once) and frees the poller; a load stuck for
 * more than 3 s (a hung vendor tool) is abandoned with its memory: the process is exiting. */
void xp_poller_stop(struct xp_poller *p);

#endif
