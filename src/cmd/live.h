/* live.h: a source read again and again, as the console's refresh does: the base source
 * (this machine, a file, a replay) is loaded anew each time, while the agents are a pool
 * kept across loads (connections, backoff, last good data), changed between loads by
 * `:agent add|rm`. One thread loads; xp_live_wake may come from another. */
#ifndef XP_LIVE_H
#define XP_LIVE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <time.h>

#include "history_json.h"
#include "model.h"
#include "source.h"
#include "xp.h"

/* A copy of one agent's status (xp_agent_status) that outlives the pool: the console's agents
 * view reads these, copied by the refresh thread, so that drawing never waits on a poll. */
struct xp_agent_snap {
	char *url, *node, *error; /* owned; node and error NULL when none */
	bool up, ever;            /* answered last time; ever answered */
	time_t last_ok;           /* when good data last came, 0 never */
	double latency_ms;        /* the last poll's round trip, -1 before any */
	double skew_s;            /* its clock minus the console's, seconds, when have_skew */
	bool have_skew;
	unsigned fails;           /* failures in a row */
	uint64_t polls, not_modified, rejected;
};

struct xp_live;

/* A live source with no pool yet; a poll in progress gives up when *cancel is set. */
struct xp_live *xp_live_new(const atomic_bool *cancel);
/* Frees it and its pool; NULL is fine. */
void xp_live_free(struct xp_live *l);
/* The longest one load waits for slow agents, seconds (0: until each answers or times out);
 * those still in flight then are finished by a later load. Called from the loading thread. */
void xp_live_set_cycle(struct xp_live *l, double cycle_s);
/* Between loads, from the loading thread: drives the agents' requests still in flight (see
 * xp_agent_pool_pump) for up to secs; false at once when there are none. xp_live_wake ends it. */
bool xp_live_pump(struct xp_live *l, double secs);
/* Drops the pool: the next load builds it from the agent options again. */
void xp_live_reset(struct xp_live *l);
/* One load. ops ("+URL" to add an agent, "-URL" to remove one; taken over) apply first; the
 * agents due (all with force) are polled; then the base source and the agents' nodes, with
 * db's stored baselines. NULL with err set when the base source or the agent list fails (ops
 * then wait for the next load); NULL with *unchanged when nothing changed since the cluster
 * last returned, which is then current: only agents, all answered 304 and none is down; or a
 * snapshot file whose identity, size and time are as they were, as are the database's and
 * its WAL's, with the agents unchanged too (force reads it anyway). */
struct xp_cluster *xp_live_load(struct xp_live *l, const struct xp_source_opts *so, const char *db, char **ops,
				size_t n_ops, bool force, bool *unchanged, struct xp_err *err);
/* Checks a URL `:agent add|rm` names, as an agent list would; -1 with err set. */
int xp_live_url_check(const char *url, struct xp_err *err);
/* Wakes a poll in progress so that it sees the cancel flag; safe from any thread. */
void xp_live_wake(struct xp_live *l);
/* Agent counts after the last load; false when there is no pool. */
bool xp_live_agent_counts(const struct xp_live *l, size_t *up, size_t *down);
/* The pool's work so far (see xp_agent_pool_work); false when there is no pool. */
bool xp_live_agent_work(const struct xp_live *l, uint64_t *decoded, uint64_t *built);
/* Copies of the pool's agent statuses, in the order added, into *out (caller frees with
 * xp_agent_snaps_free); returns how many, 0 without a pool. */
size_t xp_live_agent_snaps(const struct xp_live *l, struct xp_agent_snap **out);
/* A copy of n snaps (deep). */
struct xp_agent_snap *xp_agent_snaps_copy(const struct xp_agent_snap *s, size_t n);
/* Frees n snaps and the array. */
void xp_agent_snaps_free(struct xp_agent_snap *s, size_t n);
/* `agent ls` of the last load (caller frees), NULL without a pool. */
char *xp_live_agent_list(const struct xp_live *l);
/* The agent changes logged since the last call (see xp_agent_pool_take_log), also those of
 * `:agent add|rm` that failed. */
char **xp_live_take_log(struct xp_live *l, size_t *n);

/* The agents' samples received since the last call (see xp_agent_pool_take_history): *n
 * batches, caller frees each (xp_hist_batch_free) and the array; NULL when none. */
struct xp_hist_batch *xp_live_take_history(struct xp_live *l, size_t *n);

/* How an engine source (Kubernetes, Slurm) stands after the last load, for the console's header. */
struct xp_live_health {
	char engine[8];          /* "k8s" or "slurm"; "" when the source is no engine */
	bool ok;                 /* the last load read it */
	time_t listed;           /* k8s: the last whole list; slurm: the last read; 0 before one */
	char state[256];         /* k8s: the watch ("listed", "watching", "re-listed after 410 Gone",
				  * "watch failed: ...; re-listed"); "" for Slurm */
	char error[512];         /* why the last load failed, "" when ok */
	unsigned lists, watches; /* k8s: whole lists and watch windows read so far */
};
/* The engine's health after the last load; false when the source is no engine. */
bool xp_live_health(const struct xp_live *l, struct xp_live_health *h);
/* The header's words for h at now: "watching, listed 12s ago", "read 3s ago", "failed: ...". */
void xp_live_health_words(const struct xp_live_health *h, time_t now, char *buf, size_t len);

#endif
