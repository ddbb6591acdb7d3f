/* k8s_queues.h: a Kubernetes cluster's batch engines read into src/queue's model, read-only:
 * Volcano Queues and PodGroups (scheduling.volcano.sh/v1beta1) and Kueue ClusterQueues,
 * LocalQueues and Workloads (kueue.x-k8s.io v1beta2, else v1beta1), mapped as man/xpool.1's
 * table of queue fields says (from domain-rules.md). An API group that is not served (404)
 * is an engine not installed, not an error. */
#ifndef XP_K8S_QUEUES_H
#define XP_K8S_QUEUES_H

#include <jansson.h>
#include <stddef.h>

#include "k8s_client.h"
#include "k8s_config.h"
#include "qjob.h"
#include "qmodel.h"
#include "xp.h"

/* Which engines a cluster serves (bits of xp_k8s_queues' *engines). */
enum { XP_K8S_VOLCANO = 1, XP_K8S_KUEUE = 2 };

/* Fills set (zeroed by the caller; free with xp_qset_clear) and *jobs, *n_jobs (free each with
 * xp_qjob_clear, then the array) from the items of each list (JSON arrays of API objects; NULL:
 * that engine is absent). Built-in classes cpu and mem, a class per accelerator resource of a
 * Volcano quota (its name with '/' as '_') and per Kueue flavor of an accelerator; parents that
 * no object names (a Kueue cohort, a Volcano hierarchy path or parent not listed) become queues
 * without quotas. -1 with err naming the object ("Queue default", "Workload ns/name") and the
 * field; set and *jobs then hold what was read before. */
int xp_k8s_build_queues(json_t *vqueues, json_t *podgroups, json_t *cqueues, json_t *lqueues, json_t *workloads,
			struct xp_qset *set, struct xp_qjob **jobs, size_t *n_jobs, struct xp_err *err);
/* Lists the five resources through cl (a 404 for a group: absent) and builds them as
 * xp_k8s_build_queues does; *engines (may be NULL) gets the XP_K8S_* bits of those found.
 * -1 with err set. */
int xp_k8s_queues(struct xp_k8s_client *cl, struct xp_qset *set, struct xp_qjob **jobs, size_t *n_jobs,
		  unsigned *engines, struct xp_err *err);
/* Connects as o says (xp_k8s_conf_load) and reads the queues and jobs (xp_k8s_queues). */
int xp_k8s_load_queues(const struct xp_k8s_opts *o, struct xp_qset *set, struct xp_qjob **jobs, size_t *n_jobs,
		       unsigned *engines, struct xp_err *err);

#endif
