/* jobspec.h: the job a placement dry-run is asked about (issue 6, "Job spec"): a job of one
 * or more task groups, read from JSON or from command-line flags, and checked for values that
 * can never be placed before any cluster is looked at.
 *
 * Parsing checks form (known fields, types, strings safe to print); xp_job_check checks
 * sense (0 replicas, a slice no model has, a device count the affinity rule refuses).
 * Callers run both. Every error names where it came from: a JSON path
 * ("$.groups[0].devices: ...") or a flag ("--devices: ..."). */
#ifndef XP_JOBSPEC_H
#define XP_JOBSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "manifest.h"
#include "model.h"
#include "xp.h"

/* Bounds that keep a hostile spec from costing memory or time. */
#define XP_JOB_MAX_BYTES (1u << 20) /* bytes of JSON */
#define XP_JOB_MAX_GROUPS 64        /* task groups per job */
#define XP_JOB_MAX_REPLICAS 100000  /* replicas per group: more than any cluster has devices */
#define XP_JOB_MAX_LABELS 64        /* label selectors per group */
#define XP_JOB_MAX_STRING 256       /* bytes in a name, pattern or label (a Kubernetes key fits) */

/* What a job does; train makes groups homogeneous unless told otherwise. */
enum xp_job_kind {
	XP_JOB_TRAIN,
	XP_JOB_INFER,
	XP_JOB_DATA,
	XP_JOB_BATCH,
	XP_JOB_KIND_COUNT
};

/* How a replica's devices and CPUs relate to NUMA domains. */
enum xp_numa_policy {
	XP_NUMA_NONE,   /* anywhere */
	XP_NUMA_PREFER, /* one domain when one fits, else anywhere */
	XP_NUMA_STRICT, /* one domain or not at all */
	XP_NUMA_POLICY_COUNT
};

/* Where a group's replicas may lie relative to each other. */
enum xp_network {
	XP_NET_ANY,    /* anywhere */
	XP_NET_SWITCH, /* all under one switch */
	XP_NET_RACK,   /* all in one rack */
	XP_NET_COUNT
};

/* Where a job came from: decides how xp_job_check names a field. */
enum xp_job_form {
	XP_JOB_FORM_FULL,  /* JSON with "groups": "$.groups[0].devices" */
	XP_JOB_FORM_SHORT, /* JSON with one group's fields at the top: "$.devices" */
	XP_JOB_FORM_FLAGS  /* command-line flags: "--devices" */
};

/* One task group: replicas that each ask for the same thing. Strings are heap copies owned
 * here; NULL means "any" for patterns and "none" otherwise; 0 means "any" for amounts. */
struct xp_task_group {
	char *name;           /* NULL when not named */
	int replicas;         /* how many replicas */
	int gang_min;         /* fewest replicas worth starting (default: replicas) */
	int devices;          /* whole devices per replica; 0 when a slice or share is asked */
	char *slice;          /* MIG profile or vNPU template name per replica, NULL for none */
	int share_pct;        /* soft share of one device per replica, 1-100; 0 for none */
	char *vendor;         /* case-insensitive glob over the vendor ("Huawei") or adapter ("ascend") */
	char *model;          /* case-insensitive glob over the model ("Ascend910B*") */
	int64_t memory_mib;   /* device memory per device (or per slice or share) */
	double min_ecu;       /* effective compute units per device */
	int cpus;             /* CPUs per replica */
	int64_t host_memory_mib; /* host memory per replica */
	struct xp_labels labels; /* node label selectors, key = value, all must hold */
	bool homogeneous;     /* same vendor, model and driver across the job (default for train) */
	bool same_group;      /* a replica's devices in one affinity group */
	int numa;             /* enum xp_numa_policy */
	int network;          /* enum xp_network */
	int validated_layer;  /* enum xp_layer that must be proven, -1 for none */
	char *validated_case; /* the case it must be proven for, NULL for any case */
};

/* A job: one or more task groups placed together (gang across the whole job). */
struct xp_job {
	char *name;     /* NULL when not named */
	int kind;       /* enum xp_job_kind */
	char *queue;    /* NULL: the default queue */
	char *tenant;   /* NULL: none */
	int priority;   /* larger goes first; 0 by default */
	struct xp_task_group *groups;
	size_t n_groups;
	int form;       /* enum xp_job_form */
};

/* The command-line flags of `xpool place`, as their raw text (NULL: not given); a command
 * fills it from its parsed options. Boolean flags take "", "yes", "true" or "1" for true and
 * "no", "false" or "0" for false (so that a `--no-homogeneous` can pass "no"). The flags
 * describe one task group. */
struct xp_job_flags {
	const char *name;        /* --name NAME: the job's */
	const char *kind;        /* --kind train|infer|data|batch */
	const char *queue;       /* --queue NAME */
	const char *tenant;      /* --tenant NAME */
	const char *priority;    /* --priority N */
	const char *replicas;    /* --replicas N (default 1) */
	const char *gang_min;    /* --gang-min N */
	const char *devices;     /* --devices N (default 1 unless a slice or share is asked) */
	const char *slice;       /* --slice NAME */
	const char *share;       /* --share PERCENT */
	const char *vendor;      /* --vendor PATTERN */
	const char *model;       /* --model PATTERN */
	const char *memory;      /* --memory MIB */
	const char *ecu;         /* --ecu N */
	const char *cpus;        /* --cpus N */
	const char *host_memory; /* --host-memory MIB */
	const char *labels;      /* --label KEY=VALUE[,KEY=VALUE...] */
	const char *homogeneous; /* --homogeneous */
	const char *same_group;  /* --same-group */
	const char *numa;        /* --numa none|prefer|strict */
	const char *network;     /* --network switch|rack|any */
	const char *validated;   /* --validated LAYER[:CASE] */
};

/* Returns the name of a job kind ("train", ...), "unknown" when out of range. */
const char *xp_job_kind_name(int kind);
/* Parses a job kind name; -1 when unknown. */
int xp_job_kind_parse(const char *s);
/* Returns the name of a NUMA policy ("none", "prefer", "strict"). */
const char *xp_numa_policy_name(int policy);
/* Parses a NUMA policy name; -1 when unknown. */
int xp_numa_policy_parse(const char *s);
/* Returns the name of a network constraint ("any", "switch", "rack"). */
const char *xp_network_name(int net);
/* Parses a network constraint name; -1 when unknown. */
int xp_network_parse(const char *s);

/* Parses a JSON job spec: {"name", "kind", "queue", "tenant", "priority", "groups": [{...}]},
 * or one group's fields at the top level without "groups". Unknown fields, wrong types and
 * unsafe strings are errors with their JSON path, prefixed with name when not NULL. Absent
 * fields take their defaults (kind batch, replicas 1, devices 1 unless a slice or share is
 * asked). NULL with err set on error. */
struct xp_job *xp_job_parse(const char *text, size_t len, const char *name, struct xp_err *err);
/* Builds a one-group job from command-line flags; errors name the flag. NULL with err set. */
struct xp_job *xp_job_from_flags(const struct xp_job_flags *f, struct xp_err *err);
/* Encodes a job in the full form xp_job_parse reads back (caller owns the reference). */
json_t *xp_job_to_json(const struct xp_job *j);
/* Frees a job and everything it owns; NULL is fine. */
void xp_job_free(struct xp_job *j);

/* True when a manifest model fits the group's vendor and model patterns: the vendor pattern
 * against the model's vendor or the adapter's name, the model pattern against the model's
 * name or the product names it matches. What placement and xp_job_check both use. */
bool xp_job_model_matches(const struct xp_task_group *g, const struct xp_manifest *m,
			  const struct xp_mmodel *md);

/* Refuses a job no cluster could ever run: no groups, 0 replicas, gang_min outside 1 to
 * replicas, no devices and no slice or share, devices together with a slice or share, a share
 * outside 1-100, more than XP_MAX_DEVICES devices, a case without a layer, duplicate group
 * names; and, against the manifests (none: those checks are skipped), a slice that no model
 * matching the patterns has, a device count that every matching model's affinity rule refuses
 * (ring:N takes 1 to N within one ring or a multiple of N), same_group wider than the ring,
 * more memory than any matching model or slice has. -1 with err naming the field. */
int xp_job_check(const struct xp_job *j, const struct xp_manifest *const *manifests, size_t n,
		 struct xp_err *err);

#endif
