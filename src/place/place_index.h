/* place_index.h: what the placement engine keeps between decisions, so that a decision does
 * not judge every node (internal to place.c and place_index.c; the public handle and its
 * functions are in place.h).
 *
 * Nodes that would answer every job alike are one class: the same state, labels, CPUs and
 * memory, the same devices (vendor, model, driver, firmware, health, memory, ECU, power, NUMA,
 * affinity group) linked alike, and the same share of each device in use. A class is judged
 * once per job shape (a "query") and the answer is kept (the memo); a decision looks at the
 * classes that have members, not at the nodes, and a refusal counts each class's members, so
 * it still accounts for every node. When a device's use changes (a dry-run's own replicas,
 * a commit, a release) its node moves to the class of its new state. Between equal scores
 * the node that sorts first by name wins, as in a scan by name; each class keeps its members'
 * name ranks sorted so that its first member is that node. */
#ifndef XP_PLACE_INDEX_H
#define XP_PLACE_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "manifest.h"
#include "model.h"

/* The manifest entry describing a device: its model by name, else by the match globs. */
struct xpi_dinfo {
	const struct xp_manifest *m;
	const struct xp_mmodel *md;
};

/* A kept answer of one class to one query (see place.c's struct answer). */
struct xpi_memo {
	bool ok;            /* it fits (stage is the engine's "ok") */
	int stage;
	const char *text;   /* interned in its query (a shape has few distinct reasons) */
	int *dev;           /* device positions, n of them */
	size_t n;
	double take, score, parts[8];
};

/* Nodes in one state. */
struct xpi_class {
	uint32_t scls;      /* static class: everything but use */
	uint64_t hash;
	double *used;       /* use of each device, 0..1, then each device's mode (XPI_HARD,
			     * XPI_SOFT bits): 2 x n_devices of the static class */
	double used_sum;    /* their sum: bounds a placement's score before judging it */
	uint32_t *members;  /* name ranks, ascending */
	size_t n_members, cap_members;
	size_t live_at;     /* position in its static class's live list, SIZE_MAX when empty */
	uint32_t all_at;    /* position in the index's list of all live classes (live_all) */
};

/* A job shape judged by the index, with its answers: slot[class] and, for answers that do not
 * depend on what is in use (a node down, no such model), sslot[static class]. */
struct xpi_query {
	char *sig;          /* NULL: a free entry */
	uint64_t used_at;   /* for dropping the least recently used shape */
	uint32_t *slot, *sslot; /* answer index + 1; 0: not judged */
	uint32_t *open;     /* static classes with no static answer when last looked at (any
			     * order): a decision walks only their classes; one answered
			     * statically leaves the list for good (a refusal whatever is in use) */
	size_t n_open;
	uint8_t *kinds_ok;  /* per static class: 0 not looked at, 1 a device of the query's
			     * vendor and model, 2 none (place.c open_kinds) */
	double *score;      /* per class beside slot: the answer's score when it fits, -1 when not
			     * (a decision reads this dense array, not the answers) */
	double *ub;         /* per class beside slot, while not judged: the highest score it could
			     * get, -1 when not reckoned yet (a class and a shape fix it; a decision
			     * would otherwise reckon it again for every class it need not judge) */
	size_t cap_slot;
	struct xpi_memo *ans;
	size_t n_ans, cap_ans;
	char **texts;       /* the answers' reason texts, each once */
	size_t n_texts;
};

/* What a device's slices are: hard (MIG, vNPU: own memory and compute) and soft (shares,
 * time-sliced) never mix on one device, as the vendors' partition modes do not. */
#define XPI_HARD 1
#define XPI_SOFT 2

/* One change of use recorded so that a dry-run can take its own replicas back. */
struct xpi_undo {
	size_t node, pos;
	double old;
	uint32_t hard, soft;
	const struct xp_mtemplate *tpl; /* a hard slice this change put on the device's committed
					 * ones (xpi_set_use_slice), taken off again; NULL none */
};

/* A committed placement: what xp_place_release gives back. */
struct xpi_commit {
	size_t *node, *n_pos;
	int **pos;
	double *take;
	int *mode;          /* XPI_HARD, XPI_SOFT or 0 (whole devices) per replica */
	const struct xp_mtemplate **tpl; /* per replica: the hard slice it took, NULL for none */
	size_t n;           /* replicas; 0 once released */
};

/* The hard slices commits put on one device: MIG geometry answers by which instances are
 * there, and a later job's own templates say nothing of an earlier job's. */
struct xpi_cslices {
	const struct xp_mtemplate **t;
	size_t n;
	size_t own;         /* the last own of t are the running dry-run's (xpi_set_use_slice) */
	double sig;         /* names the multiset in the device's class key (0: none) */
};

/* Nodes by switch or rack: keys[i]'s nodes are nodes[start[i]..start[i+1]), by name rank. */
struct xpi_domains {
	bool built;
	size_t n;
	const char **keys;   /* the cluster's strings, sorted */
	size_t *start;
	size_t *nodes;
	size_t nokey;        /* nodes with none recorded */
	size_t *of;          /* node -> its key's index, SIZE_MAX for none */
};

struct xp_place_index {
	const struct xp_cluster *c;
	const struct xp_manifest *const *ms;
	size_t nm;
	size_t n_nodes;
	size_t *order;           /* name rank -> node */
	uint32_t *rank;          /* node -> name rank */
	size_t *off;             /* node -> its first device slot */
	double *base, *used;     /* per device slot: what the cluster shows in use; now */
	uint32_t *hard, *soft;   /* per device slot: hard slices and soft shares on it now */
	struct xpi_dinfo *di;    /* per device slot */
	uint32_t *scls;          /* node -> static class */
	size_t *scls_rep;        /* static class -> a node of it */
	size_t n_scls;
	uint32_t *cls;           /* node -> class */
	struct xpi_class *classes;
	size_t n_classes, cap_classes;
	uint32_t *htab;          /* class id + 1 by hash, 0: empty; open addressing */
	size_t hcap;
	uint32_t **live;         /* per static class: its classes with members */
	size_t *n_live, *cap_live;
	size_t *scls_n;          /* per static class: its nodes */
	size_t n_live_all;       /* classes with members in all */
	uint32_t *live_all;      /* those classes, in no order: a decision walks them, not every class
				  * the index ever made (after commits and releases most are empty) */
	uint32_t *live_all_sc;   /* beside it: each one's static class (no class read to skip one) */
	size_t cap_live_all;
	struct xpi_query *q;     /* job shapes judged, at most XPI_QUERIES */
	size_t n_q;
	uint64_t tick;
	uint32_t *kind;          /* per device slot: its (vendor, model, driver) as a number */
	size_t n_kinds;
	size_t *kind_slot;       /* per kind: the device slot that made it (a homogeneous job's keys) */
	struct xpi_undo *undo;   /* the running dry-run's changes */
	size_t n_undo, cap_undo;
	bool recording;
	struct xpi_commit *commits;
	size_t n_commits;
	struct xpi_cslices *cs;  /* per device slot: committed hard slices; NULL until a commit has one */
	int (*validated)(void *ctx, const struct xp_device *d, const char *kase);
	void *vctx;
	char **vkeys;            /* "env id\ncase" -> layer, the validation callback's answers */
	int *vvals;
	size_t n_v;
	struct xpi_domains dom[2]; /* by switch, by rack; built when a job first asks */
	char **pkeys;            /* a group's vendor and model patterns (xpi_product_key) ... */
	bool *pvals;             /* ... -> whether the devices they select follow one product's rule */
	size_t n_p;
	uint64_t product_walks;  /* xpl_one_product walks made (for the tests and benchmarks) */
	uint64_t evals, hits;    /* class judgements made and answers reused (for benchmarks) */
};

/* The node of device slot slot. */
size_t xpi_slot_node(const struct xp_place_index *ix, size_t slot);
/* The answer kept for every class of static class sc under query q, NULL when none. */
const struct xpi_memo *xpi_static_get(const struct xp_place_index *ix, uint32_t q, size_t sc);
/* Job shapes whose answers are kept; the least recently used goes first. */
#define XPI_QUERIES 256
/* The share of a device one slice of t takes: its compute share (MIG 3g is 3/7, so 3g + 4 x 1g
 * fill a device), else one count's worth. */
double xpi_slice_share(const struct xp_mtemplate *t);
/* True when allocation a of a device of manifest entry di is a free MIG instance: it names a
 * profile with positions and no job holds it (an existing instance a slice may take). */
struct xp_alloc;
bool xpi_free_instance(const struct xp_alloc *a, const struct xpi_dinfo *di);
/* Two strings alike, NULL alike only to NULL. */
bool xpi_streq(const char *a, const char *b);
/* A device's use as every judgement and class key reads it: within 0..1, to a billionth, so
 * that fractions added and taken back in another order land on the same value. */
double xpi_use(double u);
/* The query id of a job shape's signature (made, or found and marked used). */
uint32_t xpi_query(struct xp_place_index *ix, const char *sig);
/* The kept answer of class k to query q, NULL when not judged yet. Valid until the next
 * xpi_memo_put or xpi_query. */
const struct xpi_memo *xpi_memo_get(const struct xp_place_index *ix, uint32_t q, uint32_t k);
/* Query q's per-class bounds (xpi_query.ub), with room for every class the index has now.
 * Valid until the next xpi_memo_put, xpi_query or class made. */
double *xpi_query_ub(struct xp_place_index *ix, uint32_t q);
/* Keeps an answer (dev: n positions, copied; text interned); for the whole static class of k
 * when statik (the answer does not depend on use). Valid as xpi_memo_get's. */
const struct xpi_memo *xpi_memo_put(struct xp_place_index *ix, uint32_t q, uint32_t k, const struct xpi_memo *m,
				    bool statik);
/* Sets the use of device pos of node to u (0..1 or more), moving the node to its new class;
 * recorded for xpi_undo_all while ix->recording. */
void xpi_set_used(struct xp_place_index *ix, size_t node, size_t pos, double u);
/* The same, adding dh hard slices and ds soft shares to the device (negative: removing). */
void xpi_set_use(struct xp_place_index *ix, size_t node, size_t pos, double u, int dh, int ds);
/* xpi_set_use, also putting hard slice t (non-NULL) among the device's committed ones, as a
 * commit does: a dry-run's own replicas are then known by template (MIG geometry judges by
 * name; a compute share cannot tell 2 x 1g.10gb from one 2g.20gb); undone with the rest. */
void xpi_set_use_slice(struct xp_place_index *ix, size_t node, size_t pos, double u, int dh, int ds,
		       const struct xp_mtemplate *t);
/* XPI_HARD, XPI_SOFT or 0 (whole devices) for what a placed replica takes. */
struct xp_place_replica;
int xpi_replica_mode(const struct xp_place_replica *p);
/* XPI_HARD and XPI_SOFT bits of device pos of node. */
int xpi_mode(const struct xp_place_index *ix, size_t node, size_t pos);
/* The hard slices commits put on device slot s (*n of them; NULL when none). */
const struct xp_mtemplate *const *xpi_committed(const struct xp_place_index *ix, size_t s, size_t *n);
/* The hard slices the running dry-run's own replicas put on device slot s, by template (*n of
 * them; NULL when none): new MIG instances among them are the dry-run's to arrange. */
const struct xp_mtemplate *const *xpi_own_slices(const struct xp_place_index *ix, size_t s, size_t *n);
/* Takes back every change recorded since recording began, and stops recording. */
void xpi_undo_all(struct xp_place_index *ix);
/* The nodes by switch (rack false) or rack (true). */
const struct xpi_domains *xpi_domains(struct xp_place_index *ix, bool rack);
/* The switch (rack) of node i, NULL when not recorded. */
const char *xpi_domain_of(const struct xp_place_index *ix, size_t i, bool rack);
/* Drops the classes no node is in (and their kept answers), renumbering the rest, when they
 * outnumber the live ones; a long-lived index under commits and releases would otherwise
 * keep every state it ever saw. Never while a dry-run is recording. Returns classes dropped. */
size_t xpi_gc(struct xp_place_index *ix, bool force);
/* Whether the devices a group of vendor and model patterns may take follow one product's rule
 * (xpl_one_product: a walk over every device), as kept: -1 when not kept yet. The answer reads
 * only what the index's static classes hold, so it lasts as long as the index. */
int xpi_product_get(const struct xp_place_index *ix, const char *vendor, const char *model);
/* Keeps that answer (a few patterns per index; the oldest go past XPI_PRODUCTS). */
void xpi_product_put(struct xp_place_index *ix, const char *vendor, const char *model, bool one);
#define XPI_PRODUCTS 64
/* The highest validation layer of device d for kase (NULL: any), through the callback, kept. */
int xpi_validated(struct xp_place_index *ix, const struct xp_device *d, const char *kase);

#endif
