/* place.h: the placement dry-run (issue 6): where a job would go, which devices or slices it
 * gets and why, or, when it fits nowhere, one reason per node aggregated Kubernetes-style.
 * A dry-run never changes the cluster: replicas are placed one after another against a
 * scratch copy of what is in use, and the whole job (gang) is placed or nothing is.
 *
 * Strategy weights (score = 100 x the weighted sum, each criterion in 0..1):
 *   pack      utilization after placement 0.7, topology 0.3
 *   spread    free share after placement 0.7, topology 0.3
 *   topology  topology 0.8, utilization 0.2
 *   green     node already busy (powered) 0.6, ECU per watt 0.3, utilization 0.1
 * topology = 1 - mean link rank between the replica's devices / 7 (SYS).
 * Ties go to the node that sorts first by name, so the same input gives the same answer. */
#ifndef XP_PLACE_H
#define XP_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobspec.h"
#include "manifest.h"
#include "model.h"
#include "xp.h"

/* How candidate nodes are ranked. */
enum xp_strategy {
	XP_STRAT_PACK,
	XP_STRAT_SPREAD,
	XP_STRAT_TOPOLOGY,
	XP_STRAT_GREEN,
	XP_STRAT_COUNT
};

/* Score criteria, in the order of xp_place_replica.breakdown. */
enum xp_criterion {
	XP_CRIT_UTILIZATION, /* share of the node's devices in use after placement (pack) */
	XP_CRIT_BALANCE,     /* share left free after placement (spread) */
	XP_CRIT_TOPOLOGY,    /* closeness of the replica's devices */
	XP_CRIT_POWERED,     /* node already runs something (green) */
	XP_CRIT_EFFICIENCY,  /* ECU per watt of the devices (green) */
	XP_CRIT_COUNT
};

/* Options of one dry-run. */
struct xp_place_opts {
	int strategy;             /* enum xp_strategy */
	uint64_t seed;            /* reserved for ties between equal names; recorded for replay */
	const char *explain_node; /* node whose full check list to record, NULL for none */
};

/* One placed replica. Strings are heap copies owned by the result. */
struct xp_place_replica {
	size_t group;           /* task group index */
	char *node;
	int *devices;           /* device indices */
	char **bus_ids;         /* their PCI bus ids ("" when not known) */
	size_t n_devices;
	char *slice;            /* template name or "share:N" for a slice/share job, else NULL */
	int numa;               /* NUMA domain holding every device, -1 when none */
	double score;           /* 0..100 */
	double breakdown[XP_CRIT_COUNT]; /* weighted contribution of each criterion */
	const char *env_name;   /* CUDA_VISIBLE_DEVICES, ASCEND_VISIBLE_DEVICES, ... */
	char *env_value;        /* "0,1,2,3" */
};

/* One aggregated reason nodes were refused. */
struct xp_place_reason {
	const char *code; /* "node-state", "label", "model", "free", "affinity", ... */
	char *text;       /* "fewer than 8 free Ascend 910A in one HCCS group" */
	size_t count;     /* nodes refused for it */
};

/* One line of `--explain NODE`. */
struct xp_place_check {
	const char *name; /* "node-state", "label", "model", ... */
	bool pass;
	char *detail;     /* numbers: "8 of 8 healthy" */
};

/* What a dry-run found. */
struct xp_place_result {
	bool placed;
	int strategy;
	struct xp_place_replica *replicas;
	size_t n_replicas;
	struct xp_place_reason *reasons; /* most common first; counts sum to n_nodes */
	size_t n_reasons;
	size_t n_nodes;
	char *summary;                   /* "0/200 nodes fit: 64 ..." or "placed 2 replicas on 2 nodes" */
	struct xp_place_check *checks;   /* for opts.explain_node, empty when not asked */
	size_t n_checks;
	bool explained;                  /* explain_node was found */
};

/* Returns a strategy's name ("pack", ...). */
const char *xp_strategy_name(int s);
/* Parses a strategy name; -1 when unknown. */
int xp_strategy_parse(const char *s);
/* Returns a criterion's name as the JSON breakdown writes it ("utilization", ...). */
const char *xp_criterion_name(int c);
/* The weight of criterion c under strategy s. */
double xp_strategy_weight(int s, int c);

/* Dry-runs job on c (manifests give templates and affinity rules; none: device strings only).
 * A network constraint (switch or rack) in any group keeps the whole job under one switch (rack).
 * NULL with err set for jobs it cannot judge (validation layer: not yet). */
struct xp_place_result *xp_place(const struct xp_cluster *c, const struct xp_job *job,
				 const struct xp_manifest *const *manifests, size_t n,
				 const struct xp_place_opts *opts, struct xp_err *err);
/* Frees a result; NULL is fine. */
void xp_place_result_free(struct xp_place_result *r);

#endif
