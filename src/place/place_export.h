/* place_export.h: a placement dry-run's result written for the tool that will run the job
 * (issue 6, `xpool place --export`): Kubernetes Pods, a Volcano Job or an sbatch script.
 * Every name that came from the user (job, queue, node, slice) is written as a YAML
 * double-quoted scalar with escapes, or, for sbatch, refused unless it is plain
 * [A-Za-z0-9._+-], so that a hostile name cannot add keys, lines or shell commands. */
#ifndef XP_PLACE_EXPORT_H
#define XP_PLACE_EXPORT_H

#include <stdio.h>

#include "jobspec.h"
#include "manifest.h"
#include "model.h"
#include "place.h"
#include "xp.h"

/* Output formats of xp_place_export. */
enum xp_export_fmt {
	XP_EXPORT_K8S,     /* one Kubernetes v1 Pod per replica, YAML documents */
	XP_EXPORT_VOLCANO, /* one batch.volcano.sh/v1alpha1 Job, a task per group */
	XP_EXPORT_SLURM,   /* an sbatch script */
	XP_EXPORT_COUNT
};

/* The sharing layer a k8s or volcano export writes for: none (a device plugin's whole devices
 * and slices; a soft share is refused) or HAMi (its count, memory and core resources). */
enum xp_export_flavor {
	XP_FLAVOR_NONE,
	XP_FLAVOR_HAMI,
	XP_FLAVOR_COUNT
};

/* Parses a flavour name ("hami"); -1 when unknown. */
int xp_export_flavor_parse(const char *s);
/* Returns a flavour's name ("hami"; "none" for XP_FLAVOR_NONE). */
const char *xp_export_flavor_name(int flavor);
/* Parses a format name ("k8s", "volcano", "slurm"); -1 when unknown. */
int xp_export_parse(const char *s);
/* Returns a format's name. */
const char *xp_export_name(int fmt);
/* Writes a YAML double-quoted scalar of s (escaping quotes, backslashes and control bytes). */
void xp_yaml_quote(FILE *f, const char *s);
/* Returns the placed result r of job on c in format fmt (caller frees; o may be NULL), or NULL with err set
 * when r is not placed, a name cannot be written safely in that format, or a replica's first
 * device has no manifest among manifests[0..n) that names its Kubernetes resource (k8s,
 * volcano) or Slurm gres (slurm): resource and gres names come from the manifests only. */
/* What an export writes beyond the placement. */
struct xp_export_opts {
	const char *partition; /* slurm: the partition to ask for; NULL: none (a queue is not one) */
	const char *gres_types; /* slurm: "PROFILE=TYPE[,...]", the site's gres type per slice (MIG
				 * profile or vNPU template); NULL: the profile name as the type */
	int flavor;             /* k8s, volcano: enum xp_export_flavor (0: none) */
	int strategy;           /* the placement's enum xp_strategy (0: pack, the default), for HAMi's GPU policy */
};

char *xp_place_export(int fmt, const struct xp_place_result *r, const struct xp_job *job,
		      const struct xp_cluster *c, const struct xp_manifest *const *manifests, size_t n,
		      const struct xp_export_opts *o, struct xp_err *err);

#endif
