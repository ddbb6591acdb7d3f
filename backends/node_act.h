/* node_act.h: changing an engine's nodes, the one write xpool makes to an engine: Slurm's
 * drain and resume (`scontrol update`, an argv, never a shell) and Kubernetes' cordon and
 * uncordon (a merge PATCH of spec.unschedulable), and whether the caller may make them:
 * Slurm's root or SlurmUser, Kubernetes' SelfSubjectAccessReview for patch on nodes. */
#ifndef XP_NODE_ACT_H
#define XP_NODE_ACT_H

#include <stdbool.h>
#include <stddef.h>

#include "k8s_client.h"
#include "xp.h"

/* True when name can be handed to an engine as one node: letters, digits, '.', '_', '-',
 * not starting with '-' (a Slurm host list would expand brackets and split at commas). */
bool xp_node_act_name_ok(const char *name);
/* Runs `scontrol update NodeName=LIST State=DRAIN Reason=REASON` (drain; reason required) or
 * `State=RESUME` with SLURM_CONF=conf as xp_slurm_load; *answer (caller frees) takes what
 * scontrol printed, stdout and stderr. scontrol's exit status (0: done), or -1 with err set
 * when it could not run (missing, a timeout, a bad --slurm-conf). */
int xp_slurm_nodes_update(const char *conf, const char *list, bool drain, const char *reason, char **answer,
			  struct xp_err *err);
/* The SlurmUser line's user name in `scontrol show config` output (text, len bytes), caller
 * frees; NULL when there is none. */
char *xp_slurm_config_user(const char *text, size_t len);
/* 1 when the caller may change Slurm's nodes: root, or the SlurmUser `scontrol show config`
 * names; 0 with why set when not; -1 with err set when scontrol cannot say. */
int xp_slurm_may_update(const char *conf, char *why, size_t len, struct xp_err *err);
/* Cordons (on) or uncordons node name: PATCH /api/v1/nodes/NAME with
 * {"spec":{"unschedulable":ON}} as application/merge-patch+json. 0, or -1 with err set to
 * the server's answer (404: no such node, 403: not allowed); the caller names the node. */
int xp_k8s_node_cordon(struct xp_k8s_client *cl, const char *name, bool on, struct xp_err *err);
/* 1 when a SelfSubjectAccessReview says the caller may patch nodes, 0 with why set when it
 * says not (with the server's reason), -1 with err set when it cannot be asked. */
int xp_k8s_may_patch_nodes(struct xp_k8s_client *cl, char *why, size_t len, struct xp_err *err);

#endif
