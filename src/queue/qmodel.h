/* qmodel.h: the workload queue model: resource classes (Kueue ResourceFlavors), queues in a
 * hierarchy (Volcano hierarchical queues, Kueue cohorts, Slurm partitions and QOS) and their
 * quotas per class and resource; the command-line forms of each, parsed with errors that
 * name the option or field, and names of every enum in both directions (names.h).
 * Quantities are int64 milli-units (1 device = 1000) so that slices and shares add exactly. */
#ifndef XP_QMODEL_H
#define XP_QMODEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xp.h"

/* The resources a quota limits; memory is host memory in GiB. */
enum xp_res { XP_RES_DEVICES, XP_RES_ECU, XP_RES_CPUS, XP_RES_MEMORY, XP_RES_COUNT };
/* Preemption policies: within the queue (Kueue withinClusterQueue: never, lower-priority,
 * lower-or-newer) and to reclaim what was lent (Kueue reclaimWithinCohort: never,
 * lower-priority, any). */
enum xp_qpolicy { XP_QP_NEVER, XP_QP_LOWER_PRIORITY, XP_QP_LOWER_OR_NEWER, XP_QP_ANY, XP_QP_COUNT };
/* Ordering inside a queue (Kueue queueingStrategy BestEffortFIFO / StrictFIFO). */
enum xp_qorder { XP_QO_BEST_EFFORT, XP_QO_STRICT, XP_QO_COUNT };
/* Whether a queue admits (open), keeps its jobs waiting (hold), or also evicts them (drain):
 * Kueue stopPolicy None / Hold / HoldAndDrain, Volcano Open / Closed. */
enum xp_qstate { XP_QS_OPEN, XP_QS_HOLD, XP_QS_DRAIN, XP_QS_COUNT };

/* Longest queue, class or tenant name. */
#define XP_QNAME_MAX 63
/* Longest vendor or model glob, or label. */
#define XP_QGLOB_MAX 128
/* Largest quota value in units (before milli): far below int64 overflow when summed. */
#define XP_QUOTA_MAX_UNITS 1000000000000LL
/* Unlimited, for max, borrowing and lending limits (NULL in the store, null in JSON). */
#define XP_UNLIMITED (-1)

/* A resource class: which devices a device quota counts (vendor/model globs, or a pool label
 * key=value), or a built-in (cpu: CPUs, mem: host memory). */
struct xp_rclass {
	char *name;
	char *vendor, *model, *label; /* NULL when not given */
	bool builtin;
	int64_t created;
};

/* One quota: a class and a resource's guaranteed <= deserved <= max, and how much may be
 * borrowed from or lent to the rest of the cohort (XP_UNLIMITED: no limit). */
struct xp_quota {
	char *rclass;
	int res; /* enum xp_res */
	int64_t guaranteed, deserved, max, borrowing_limit, lending_limit;
};

/* A queue. */
struct xp_queue {
	char *name, *parent;   /* parent NULL at the top */
	char **tenants;        /* n_tenants names; none: every tenant */
	size_t n_tenants;
	double weight;
	int priority;
	int order, state;      /* enum xp_qorder, xp_qstate */
	bool reclaimable;      /* what it lent may be taken back (Volcano reclaimable) */
	int within, reclaim;   /* enum xp_qpolicy */
	struct xp_quota *quotas;
	size_t n_quotas;
	int64_t created;
	char *engine_text;     /* a live engine's words on it that no field holds (a Slurm QOS's per-user
				* limits and the QOS it preempts), NULL: none */
};

/* Every class and queue of one store, queues by name. */
struct xp_qset {
	struct xp_rclass *classes;
	size_t n_classes;
	struct xp_queue *queues;
	size_t n_queues;
	char **notes;          /* what a live engine said of its queues as a whole ("QOS not available
				* (no accounting)", fair-share factors), none for the store's */
	size_t n_notes;
};

/* enum xp_res's names ("devices", "ecu", "cpus", "memory") and back (-1 unknown). */
const char *xp_res_name(int value);
int xp_res_parse(const char *text);
/* enum xp_qpolicy's names ("never", "lower-priority", "lower-or-newer", "any") and back. */
const char *xp_qpolicy_name(int value);
int xp_qpolicy_parse(const char *text);
/* enum xp_qorder's names ("best-effort", "strict") and back. */
const char *xp_qorder_name(int value);
int xp_qorder_parse(const char *text);
/* enum xp_qstate's names ("open", "hold", "drain") and back. */
const char *xp_qstate_name(int value);
int xp_qstate_parse(const char *text);

/* 0 when name is a queue, class or tenant name: 1 to XP_QNAME_MAX of [A-Za-z0-9._-], starting
 * with a letter or digit; else -1 with err naming what (e.g. "queue name"). */
int xp_qname_check(const char *name, const char *what, struct xp_err *err);
/* 0 when glob is a usable vendor/model glob (printable, at most XP_QGLOB_MAX, brackets
 * closed); else -1 with err naming the option. */
int xp_qglob_check(const char *glob, const char *option, struct xp_err *err);
/* 0 when label is KEY=VALUE with both parts names; else -1 with err. */
int xp_qlabel_check(const char *label, struct xp_err *err);
/* Parses a quantity ("8", "0.5", at most 3 decimals, <= XP_QUOTA_MAX_UNITS) into milli-units,
 * or XP_UNLIMITED for "-" when unlimited_ok; -1 with err naming field on anything else. */
int xp_qamount_parse(const char *text, bool unlimited_ok, const char *field, int64_t *milli, struct xp_err *err);
/* Writes milli-units as the shortest decimal ("8", "0.5"), or "unlimited"; returns buf. */
char *xp_qamount_format(int64_t milli, char *buf, size_t size);
/* Parses a comma-separated list of CLASS:RES=G/D[/M[/B[/L]]] (M, B, L: a number or '-' for
 * unlimited; omitted: unlimited) into *out (caller frees with xp_quotas_free); -1 with err
 * naming the entry and field. Classes are not looked up here. */
int xp_quotas_parse(const char *text, struct xp_quota **out, size_t *n, struct xp_err *err);
/* 0 when q's numbers hold together (guaranteed <= deserved <= max, lending <= deserved) and
 * its resource suits its class (cpu: cpus, mem: memory, device classes: devices or ecu);
 * else -1 with err. c is the class (NULL: not known, err says so). */
int xp_quota_check(const struct xp_quota *q, const struct xp_rclass *c, struct xp_err *err);
/* Parses a comma-separated tenant list into *out, *n (caller frees with xp_strv_free); "" or
 * "-": none (every tenant). -1 with err naming a bad one. */
int xp_tenants_parse(const char *text, char ***out, size_t *n, struct xp_err *err);

/* The class called name in set, or NULL. */
struct xp_rclass *xp_qset_class(const struct xp_qset *set, const char *name);
/* The queue called name in set, or NULL. */
struct xp_queue *xp_qset_queue(const struct xp_qset *set, const char *name);
/* 0 when giving queue name the parent parent (NULL: none) makes no cycle and the parent
 * exists; else -1 with err saying which chain loops. */
int xp_qset_parent_check(const struct xp_qset *set, const char *name, const char *parent, struct xp_err *err);
/* How many queues have name as their parent. */
size_t xp_qset_children(const struct xp_qset *set, const char *name);
/* The queue as a JSON object (quotas with used: null; `queue list|show` fill in what its jobs use). */
json_t *xp_queue_json(const struct xp_queue *q);
/* The class as a JSON object. */
json_t *xp_rclass_json(const struct xp_rclass *c);
/* Frees what q owns (not q). */
void xp_queue_clear(struct xp_queue *q);
/* Frees what c owns (not c). */
void xp_rclass_clear(struct xp_rclass *c);
/* Frees n quotas and the array. */
void xp_quotas_free(struct xp_quota *q, size_t n);
/* Frees what set owns and zeroes it. */
void xp_qset_clear(struct xp_qset *set);

#endif
