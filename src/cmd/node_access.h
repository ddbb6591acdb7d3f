/* node_access.h: which engine a run changes nodes through, and whether it may: the rule
 * behind `node drain|undrain` and the console's action keys (read-only unless write
 * credentials are given). */
#ifndef XP_NODE_ACCESS_H
#define XP_NODE_ACCESS_H

#include <stdbool.h>
#include <stddef.h>

#include "source.h"

/* The engine the source options name: "slurm" (--slurm, --slurm-conf), "k8s" (any --k8s
 * option), or NULL when none (nothing to change nodes through). */
const char *xp_node_engine(const struct xp_source_opts *so);
/* Whether nodes may be changed: 1 yes; 0 read-only with why set: read_only (--read-only),
 * no engine, Slurm's user neither root nor SlurmUser, Kubernetes' SelfSubjectAccessReview
 * for patch on nodes not allowed or not answered (why says what it said). */
int xp_node_access(const struct xp_source_opts *so, bool read_only, char *why, size_t len);

#endif
