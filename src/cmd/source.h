/* source.h: where the cluster comes from: the local machine (hwloc and the vendor
 * adapters), a captured hwloc XML, a replay directory of recorded vendor outputs,
 * or an inventory snapshot. Later sources (agents, engines) join here. */
#ifndef XP_SOURCE_H
#define XP_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "model.h"
#include "xp.h"

/* Which source to read; all NULL means "discover this machine". */
struct xp_source_opts {
	const char *topology;  /* hwloc XML file: the PCI view only (the tools here describe another machine) */
	const char *inventory; /* inventory JSON snapshot */
	const char *replay;    /* replay directory: hwloc.xml, vendor tool outputs, hostname */
	bool no_adapters;      /* hwloc alone */
	const char *agents;      /* agent URLs (--agent), one a line; NULL for none */
	const char *agents_file; /* a file of agent URLs (--agents) */
	const char *agent_token; /* token file for agents that name none of their own */
	const char *agent_ca;    /* CA certificates for https agents, NULL for the system's */
	double agent_timeout;    /* seconds an agent may take, 0 for the default */
	const char *slurm;       /* read the live Slurm: "" with the client's own configuration
				  * (--slurm), else its slurm.conf (--slurm-conf FILE); NULL for none */
	bool k8s;                   /* the Kubernetes cluster of the kubeconfig (or the pod's service account) */
	const char *k8s_server;     /* a Kubernetes API server URL instead of the kubeconfig's */
	const char *k8s_token_file; /* bearer token file for it */
	const char *k8s_ca;         /* CA certificates for it */
	struct xp_k8s_watch *k8s_watch; /* the console's kept Nodes and Pods (live.c): the cluster is
					 * built from them, not listed again; NULL for a list */
};

struct xp_agent_pool;
struct xp_k8s_watch;

/* Loads the cluster from the chosen source; NULL with err set on failure. With an engine
 * (--slurm, --k8s), --replay or --inventory gives the hardware of the nodes it names
 * (xp_engine_join); --topology then only goes with --replay. */
struct xp_cluster *xp_source_load(const struct xp_source_opts *o, struct xp_err *err);
/* True when the cluster comes from a Kubernetes API server (--k8s or any --k8s-* option). */
bool xp_source_has_k8s(const struct xp_source_opts *o);
/* True when agents are named (--agent or --agents). */
bool xp_source_has_agents(const struct xp_source_opts *o);
/* True when the cluster has a base source to load (a file, a replay, or this machine): always,
 * unless agents are named and no --topology, --inventory or --replay is. */
bool xp_source_has_base(const struct xp_source_opts *o);
/* A pool of the named agents, not yet polled; NULL with err set on a bad URL, file or token. */
struct xp_agent_pool *xp_source_agent_pool(const struct xp_source_opts *o, struct xp_err *err);
/* Adds the pool's nodes to c (see xp_agent_pool_cluster_kept: shared with the pool, made again
 * only for agents that changed), with this thread's stored baselines applied to their ECU
 * (basis names them: a new basis rebases every node), joined by name as xp_engine_join says: an
 * engine's node (--slurm, --k8s) of the name takes the agent's hardware and keeps its state,
 * labels and allocations; a node of another base source keeps its own, the agent's left out
 * with a warning. Sets c->sources_down to the agents that are down. */
void xp_source_merge_agents(struct xp_cluster *c, struct xp_agent_pool *p, time_t now, uint64_t basis);
/* Loads the base source (when xp_source_has_base) and adds the pool's nodes (pool may be NULL),
 * with the stored baselines of the database at db applied to both (NULL, or a database not
 * made yet: the manifests' coefficients). NULL with err set when the base source fails. */
struct xp_cluster *xp_source_load_all(const struct xp_source_opts *o, const char *db,
				      struct xp_agent_pool *pool, struct xp_err *err);
/* Runs the vendor adapters (live, or on a replay directory) and merges what they report into n. */
void xp_source_adapters(struct xp_node *n, const char *replay);

#endif
