/* k8s_nodes.h: a Kubernetes cluster's Nodes and bound Pods turned into the model: the
 * accelerators its device plugins advertise, what the pods on each node request of them,
 * labels, zone and rack, cordons, taints and readiness as node states. */
#ifndef XP_K8S_NODES_H
#define XP_K8S_NODES_H

#include <jansson.h>

#include "k8s_client.h"
#include "k8s_config.h"
#include "model.h"
#include "xp.h"

/* The vendor of an extended resource name ("nvidia.com/gpu" -> "NVIDIA"), NULL when it does
 * not count accelerators (cpu, memory, huawei.com/Ascend910B3-memory, ...). */
const char *xp_k8s_resource_vendor(const char *name);
/* Parses a Kubernetes quantity ("64", "500m", "263842740Ki", "1Gi", "2e3") into *v (units;
 * milli-units as fractions); -1 when it is not one. */
int xp_k8s_quantity(const char *s, double *v);
/* A cluster from Node objects and Pod objects (JSON arrays of API objects; pods may be NULL);
 * source names where they came from. NULL with err set when an object is not a Node or Pod. */
struct xp_cluster *xp_k8s_build(json_t *nodes, json_t *pods, const char *source, struct xp_err *err);
/* The query of the Pod list (and of its watch): finished pods hold nothing, the server leaves them out. */
#define XP_K8S_POD_QUERY "fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed"
/* Cuts a listed or watched Node to what xp_k8s_build reads; always true (kept). */
bool xp_k8s_trim_node(json_t *node);
/* Cuts a listed or watched Pod to what xp_k8s_build reads; false when it holds no accelerator
 * (unbound, finished, asking for none): not kept. */
bool xp_k8s_trim_pod(json_t *pod);
/* What xp_k8s_trim_node keeps of a Node, for the client to decode no more (xp_k8s_client_keep). */
extern const struct xp_k8s_keep xp_k8s_node_keep[];
/* What xp_k8s_trim_pod keeps of a Pod (before it drops the Pods that hold no accelerator). */
extern const struct xp_k8s_keep xp_k8s_pod_keep[];
/* Lists /api/v1/nodes and /api/v1/pods through cl and builds the cluster; NULL with err set. */
struct xp_cluster *xp_k8s_cluster(struct xp_k8s_client *cl, struct xp_err *err);
/* Connects as o says (xp_k8s_conf_load) and reads the cluster; NULL with err set. */
struct xp_cluster *xp_k8s_load(const struct xp_k8s_opts *o, struct xp_err *err);

#endif
