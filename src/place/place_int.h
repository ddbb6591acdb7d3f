/* place_int.h: what the placement engine's files share (internal; the API is place.h):
 * place_eval.c judges one node for one replica, place.c searches the cluster and assembles
 * the result, place_relax.c is the public entry: a dry-run and, when it is refused, the
 * smallest change that makes it fit. Calls run one way: relax -> place -> eval -> index. */
#ifndef XP_PLACE_INT_H
#define XP_PLACE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "place.h"
#include "place_index.h"

#define EPS 1e-9
/* Stages a node passes in order; the first it fails is its one reason. */
enum stage { ST_STATE, ST_LABELS, ST_CPUS, ST_HOSTMEM, ST_MODEL, ST_HOMOG, ST_VALID, ST_HEALTH,
	     ST_MEMORY, ST_ECU, ST_FREE, ST_SHAPE, ST_OK };
/* The reason code of each stage ("node-state", ..., "ok"). */
extern const char *const xpl_stage_code[];

/* What one dry-run (one strategy, one homogeneous key, one switch) works with. */
struct pctx {
	struct xp_place_index *ix;
	const struct xp_cluster *c;
	const struct xp_job *job;
	int strategy;
	bool scan;         /* judge node by node, no index: the reference the tests compare with */
	bool quiet;        /* no reasons for a refusal */
	bool bare;         /* placed replicas without bus ids, CPUs, environment or mounts */
	bool reconfigure;  /* MIG: new instances allowed, not only free existing ones */
	const struct xp_device *key; /* homogeneous key: vendor, model, driver of this device */
	uint32_t key_kind; /* its kind number (ix->kind) */
	uint32_t *qid;     /* per group: its query under this key and strategy (index only) */
	uint32_t *qid_old; /* per group: its query without reconfigure (a MIG slice's first pass:
			    * free existing instances before new ones) */
	bool *one_product; /* per group: every device it may take follows one vendor rule (product),
			    * so the vendor's node score may rank them (xpl_one_product) */
	int net;           /* enum xp_network of the whole job */
	const char *domain; /* the switch or rack this attempt keeps to, NULL for anywhere */
	size_t dom_lo, dom_hi; /* its nodes: ix->dom[net].nodes[dom_lo..dom_hi) */
};

/* One node's answer for one replica. */
struct answer {
	int stage;          /* enum stage reached (ST_OK when it fits) */
	char text[256];     /* reason when it does not */
	int dev[XP_MAX_DEVICES]; /* positions in the node's device array */
	size_t n;
	double take;        /* capacity taken from each chosen device */
	double score, parts[XP_CRIT_COUNT];
};

/* Recorder for --explain: NULL when not asked. */
struct rec {
	struct xp_place_check *v;
	size_t n;
};

/* The manifest entry of device di of node ni. */
const struct xpi_dinfo *xpl_dinfo(const struct pctx *p, size_t ni, size_t di);
/* Judges node ni for one replica of group g; fills a. rc: the --explain recorder or NULL. */
void xpl_eval(const struct pctx *p, size_t ni, const struct xp_task_group *g, struct answer *a, struct rec *rc);
/* What a slice of g on device di of node ni would be as things stand: 0 not a MIG slice,
 * 1 a free existing instance, 2 a new instance (the GPU repartitioned). */
int xpl_mig_instance(const struct pctx *p, size_t ni, size_t di, const struct xp_task_group *g);
/* True when a replica of g is ranked by a vendor's node score where a model has one: whole
 * devices under pack, for a job that names its vendor or model (as a job for a vendor's
 * scheduler does: one that takes any accelerator is ranked by the strategy alone, since the
 * two scores do not compare across vendors). */
bool xpl_vendor_group(const struct pctx *p, const struct xp_task_group *g);
/* True when every device of the cluster that group g may take (its vendor and model) places by
 * one product's rule (the same [layout], or the same model where none applies): a vendor's
 * node scores compare only nodes of one product (Volcano's plugin never mixes them: the
 * resource and the Pod's metadata pick one handler), so where products mix, the strategy's
 * score ranks the nodes and each node's devices still follow its product's rule. */
bool xpl_one_product(const struct pctx *p, const struct xp_task_group *g);
/* True when job j has more than one task (replicas over all its groups): a vendor's rule may
 * differ then (a manifest's counts_multi, wide_multi). */
bool xpl_multi_task(const struct xp_job *j);
/* True when node ni may score a replica of g by a vendor's rule (a manifest's ring_priority,
 * under pack) instead of the strategy's weights: such a score is not bounded as those are. */
bool xpl_vendor_scored(const struct pctx *p, size_t ni, const struct xp_task_group *g);
/* One dry-run on ix, without a relaxation search (place_relax.c adds that on top: it calls
 * this again for each change it tries, so the search sits above the engine, never in it). */
struct xp_place_result *xpl_place(struct xp_place_index *ix, const struct xp_job *job,
				  const struct xp_place_opts *opts, struct xp_err *err);

#endif
