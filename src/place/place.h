/* place.h: the placement dry-run (issue 6): where a job would go, which devices or slices it
 * gets and why, or, when it fits nowhere, one reason per node aggregated Kubernetes-style.
 * A dry-run never changes the cluster: replicas are placed one after another against a
 * scratch copy of what is in use, and the whole job (gang) is placed or nothing is.
 *
 * Strategy weights (score = 100 x the weighted sum, each criterion in 0..1):
 *   pack      utilization after placement 0.7, topology 0.3
 *   spread    free share after placement 0.7, topology 0.3
 *   topology  topology 0.8, utilization 0.2; several replicas without a network constraint go
 *             under one switch when one holds them, else in one rack, else anywhere
 *   green     node already busy (powered) 0.6, ECU per watt 0.3, utilization 0.1
 * topology = 1 - mean link rank between the replica's devices / 7 (SYS).
 * Scores count to a millionth of a point; ties go to the node that sorts first by name, so the
 * same input gives the same answer.
 * Gang: a group's replicas are all placed or the job is not, unless the group has a gang
 * minimum below its replicas: then it is placed when at least that many fit, and the rest
 * are pending (result.pending, with the reasons they do not fit).
 * A refusal comes with the smallest relaxation that fits, tried in this order: another
 * strategy, NUMA strict -> prefer, network switch -> rack -> any, no same-group, not
 * homogeneous, another value of a label (another pool) or none, fewer devices, fewer replicas;
 * at most 48 dry-runs in all. */
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
	bool scan;                /* judge every node one by one, no index (the tests' reference) */
	bool quiet;               /* a refusal needs no reasons (a scheduler loop: faster) */
	bool reconfigure;         /* a MIG slice may also go where a new instance could be made (the
				   * GPU repartitioned); false: only on a free existing instance of its
				   * profile, as NVIDIA's device plugin and Slurm schedule */
	bool bare;                /* a placed replica needs only its node, devices, positions, take,
				   * slice and isolation: no bus ids, CPUs, environment or mounts, and a
				   * refusal no relaxation (a scheduler that commits it: faster); last,
				   * as callers give the fields above by position */
};

/* The variable that names a replica's devices when its vendor's manifest names none: a
 * device no adapter describes has no device plugin either, so an export sets it itself. */
#define XP_PLACE_GENERIC_ENV "XPOOL_VISIBLE_DEVICES"

/* One placed replica. Strings are heap copies owned by the result. */
struct xp_place_replica {
	size_t group;           /* task group index */
	char *node;
	int *devices;           /* device indices */
	char **bus_ids;         /* their PCI bus ids ("" when not known) */
	size_t n_devices;
	char *slice;            /* template name or "share:N" for a slice/share job, else NULL */
	const char *isolation;  /* "exclusive" (whole devices), "mig" or "vnpu" (a hard slice: its
				 * own memory and compute), "soft" (a share: time-sliced, memory not
				 * fenced unless the sharing layer enforces it) */
	int numa;               /* NUMA domain holding every device, -1 when none */
	char *cpus;             /* that domain's CPUs as a list ("0-7,16-23"), NULL when none or not known */
	double score;           /* 0..100 */
	double breakdown[XP_CRIT_COUNT]; /* weighted contribution of each criterion */
	char *env_name;         /* the manifest's visible_devices_env (CUDA_VISIBLE_DEVICES, ...;
				 * XP_PLACE_GENERIC_ENV without one) */
	char *env_value;        /* "0,1,2,3": the vendor's own device numbers (vendor_index; the
				 * node's index when not known), as are the device files */
	char *env_shown;        /* the value a task sets: env_value, except for a MIG slice: its
				 * instance's "MIG-<UUID>" (NVIDIA's MIG guide), or words saying why
				 * there is none (a new instance has no UUID until it is made) */
	char **mounts;          /* device files the task needs (the manifest's device and control nodes) */
	size_t n_mounts;
	size_t node_ix;         /* the node's index in the cluster */
	int *pos;               /* the devices' positions in the node's device array */
	double take;            /* share of each device it takes (1: whole) */
	const char *instance;   /* a MIG slice: "existing" (a free instance of its profile is there)
				 * or "new" (the GPU needs repartitioning first); else NULL */
	bool enable_mig;        /* a new instance on a GPU not in MIG mode: MIG mode is enabled first */
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

/* The smallest change to a refused job that makes it fit (one field of one group). */
struct xp_place_relax {
	char *field;   /* "strategy", "numa", "network", "same_group", "homogeneous", "labels",
			* "devices", "replicas": the job spec's names */
	char *from, *to; /* the values as text ("8", "4"; "pool=train", "pool=infer" or "none") */
	char *summary; /* what the relaxed job gets: "placed 1 replica on 1 node (pack)" */
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
	size_t pending;                  /* replicas left waiting under a gang minimum (reasons: why) */
	size_t fit;                      /* refused: replicas that fit before one did not (a gang short of
					  * its minimum: "3 of 8 replicas fit"); placed: n_replicas */
	struct xp_place_relax *relaxation; /* when refused: the smallest change that fits, or NULL */
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

/* Most manifests xp_place_manifests returns. */
#define XP_PLACE_MANIFESTS 8
/* Loads the manifest of every adapter xpool knows that is installed into ms (room for
 * XP_PLACE_MANIFESTS); returns how many. Missing ones are skipped: no such vendor here. */
size_t xp_place_manifests(struct xp_manifest **ms);
/* Frees what xp_place_manifests loaded. */
void xp_place_manifests_free(struct xp_manifest **ms, size_t n);

/* What a decision keeps between dry-runs on one cluster (place_index.h): build it once and
 * place many jobs fast. The cluster and manifests must outlive it and stay unchanged; what
 * changes is only what xp_place_commit and xp_place_release say. */
struct xp_place_index;
/* Builds the index of c (time and memory linear in the devices). */
struct xp_place_index *xp_place_index_new(const struct xp_cluster *c, const struct xp_manifest *const *ms,
					  size_t n);
/* Frees an index; NULL is fine. */
void xp_place_index_free(struct xp_place_index *ix);
/* Moves the index to c, a new version of its cluster in which only the nodes at positions
 * changed[0..n) differ (the others are the same data, as an agent pool's shared nodes are):
 * only those nodes are indexed again. Returns how many were, or -1 when c is not such a
 * version (another node count, a changed node with another device count or a name that sorts
 * elsewhere) or the index holds commits: then build a new index. On -1 ix is unchanged. */
int xp_place_index_update(struct xp_place_index *ix, const struct xp_cluster *c, const size_t *changed,
			  size_t n_changed);
/* Gives the index the validation matrix: fn returns the highest layer proven for device d
 * and kase (NULL: any case), -1 for none. Without it, --validated refuses every device. */
void xp_place_index_set_validation(struct xp_place_index *ix,
				   int (*fn)(void *ctx, const struct xp_device *d, const char *kase), void *ctx);
/* Dry-runs job against the index (xp_place on a kept index). */
struct xp_place_result *xp_place_ix(struct xp_place_index *ix, const struct xp_job *job,
				    const struct xp_place_opts *opts, struct xp_err *err);
/* Makes a placed result's devices busy in the index (not in the cluster), its MIG and vNPU
 * slices as named instances of their templates, as the cluster's own; returns the id
 * xp_place_release takes, -1 when r placed nothing. */
int64_t xp_place_commit(struct xp_place_index *ix, const struct xp_place_result *r);
/* Frees what commit id took; false when id is unknown or already released. */
bool xp_place_release(struct xp_place_index *ix, int64_t id);
/* True when commit id holds devices (made and not released). */
bool xp_place_commit_live(const struct xp_place_index *ix, int64_t id);
/* Device pos of node node_ix's use in the index now (0..1, more when commits overlap it) and,
 * in *base (may be NULL), what the cluster itself showed in use: a scheduler's invariants
 * compare them with what its jobs hold. */
double xp_place_index_use(const struct xp_place_index *ix, size_t node_ix, size_t pos, double *base);

/* The kind of device pos of node node_ix: devices of one vendor, model and driver share a
 * number below xp_place_index_n_kinds (a scheduler counts idle devices per kind). */
uint32_t xp_place_index_kind(const struct xp_place_index *ix, size_t node_ix, size_t pos);
/* How many kinds the index knows. */
size_t xp_place_index_n_kinds(const struct xp_place_index *ix);
/* Whether devices of kind k are of group g's vendor and model, as placement judges them (the
 * manifest's names and match list included); other constraints are not looked at. */
bool xp_place_index_kind_matches(const struct xp_place_index *ix, uint32_t k, const struct xp_task_group *g);

/* Counters of an index, for benchmarks and the tests. */
struct xp_place_index_stats {
	size_t nodes, static_classes, classes, live_classes, queries;
	uint64_t judged, reused; /* class judgements made and kept answers used */
	uint64_t product_walks;  /* walks over every device for a group's products (kept per pattern) */
};
/* Fills s. */
void xp_place_index_stats(const struct xp_place_index *ix, struct xp_place_index_stats *s);

#endif
