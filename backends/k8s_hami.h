/* k8s_hami.h: the devices HAMi and Huawei's Ascend device plugin name in Kubernetes
 * annotations. A HAMi device plugin registers each device of a node in a node annotation
 * (hami.io/node-nvidia-register, hami.io/node-register-Ascend910B3, ...: id, split count,
 * memory, cores, type, NUMA, health); HAMi's scheduler writes the exact devices of each pod
 * (hami.io/vgpu-devices-allocated: uuid, memory, cores per device and container); Huawei's
 * Ascend device plugin names the chips of a pod (huawei.com/Ascend910: "Ascend910-0,...").
 * The formats are HAMi's pkg/device/devices.go and docs/develop/protocol.md, and
 * ascend-device-plugin's pkg/common (commits in tests/fixtures/SOURCES.md). */
#ifndef XP_K8S_HAMI_H
#define XP_K8S_HAMI_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* Devices [first, first+count) of a node came from extended resource res. */
struct xp_k8s_span {
	const char *res; /* borrowed: the Node object's key or an xp_hami_reg's res */
	size_t first, count;
};

/* One device of a register annotation (HAMi's DeviceInfo). */
struct xp_hami_dev {
	char *id;        /* the device's UUID ("GPU-0fc3eda5-...") */
	int32_t count;   /* split count: how many tasks may share it */
	int32_t devmem;  /* memory HAMi offers, MiB */
	int32_t devcore; /* cores HAMi offers (100 for a GPU: percent) */
	char *type;      /* "NVIDIA-Tesla V100-PCIE-32GB" */
	int numa;
	bool health;
	int index;       /* the vendor's index, -1 when not said */
	char *mode;      /* "hami-core", "mig", "mps"; NULL when not said */
	size_t dev;      /* the node device it became, SIZE_MAX before */
};

/* One register annotation of a node. */
struct xp_hami_reg {
	char *key;          /* the annotation's name */
	char *res;          /* the count resource its devices are ("nvidia.com/gpu") */
	const char *vendor; /* "NVIDIA", "Huawei", ... */
	struct xp_hami_dev *devs;
	size_t n;
	bool placed;        /* its devices are on the node */
};

/* A node's register annotations. */
struct xp_hami_node {
	struct xp_hami_reg *regs;
	size_t n;
};

/* One device of a pod annotation (HAMi's ContainerDevice). */
struct xp_hami_use {
	char *uuid;        /* as written: a MIG slice is "GPU-...[1-0]" */
	char *type;        /* "NVIDIA", "Ascend910B3" */
	int32_t usedmem;   /* MiB */
	int32_t usedcores; /* of the device's devcore; 0: no limit */
};

/* Decodes a register annotation's value, the JSON array HAMi writes now or the older
 * "id,count,mem,cores,type,numa,health[,index,mode]:..." form, into *out (*n devices);
 * -1 with why (a static reason) when it is not one. At most XP_MAX_DEVICES devices. */
int xp_hami_decode_node(const char *s, struct xp_hami_dev **out, size_t *n, const char **why);
/* Frees n devices of a decode. */
void xp_hami_devs_free(struct xp_hami_dev *d, size_t n);
/* Decodes a pod annotation "uuid,type,mem,cores:...;...;" into *out (*n devices, all
 * containers); -1 with why when it is not one. */
int xp_hami_decode_pod(const char *s, struct xp_hami_use **out, size_t *n, const char **why);
/* Frees n devices of a pod decode. */
void xp_hami_uses_free(struct xp_hami_use *u, size_t n);

/* Reads the register annotations of a Node's metadata.annotations into hn; one that is
 * malformed is a warning on n naming it, and left out. */
void xp_hami_node_read(struct xp_hami_node *hn, json_t *annotations, struct xp_node *n);
/* The register annotation whose devices are resource res, or NULL. */
struct xp_hami_reg *xp_hami_node_reg(struct xp_hami_node *hn, const char *res);
/* Appends r's devices to n (uuid, memory, model, NUMA, health; split count and cores as node
 * facts), capacity the resource's count (-1: none): a warning when it is neither the number of
 * devices nor of their shares. */
void xp_hami_node_place(struct xp_node *n, struct xp_hami_reg *r, long long capacity);
/* Frees what xp_hami_node_read read. */
void xp_hami_node_clear(struct xp_hami_node *hn);

/* Allocations on n from a pod's annotations (owner "namespace/name"): HAMi's on the devices
 * of hn by uuid, with memory and a share; the Ascend device plugin's on chip N of the span of
 * its resource. Each resource so named is added to *handled (a string list): its count in
 * the pod's requests is not held again. A bad annotation is a warning on n. */
void xp_hami_pod(struct xp_node *n, const struct xp_hami_node *hn, const struct xp_k8s_span *spans,
		 size_t n_spans, json_t *annotations, const char *owner, char ***handled, size_t *n_handled);

/* Whether a Node's annotation key is one xp_hami_node_read reads (the list trims keep those). */
bool xp_hami_node_annotation(const char *key);
/* Whether a Pod's annotation key is one xp_hami_pod reads. */
bool xp_hami_pod_annotation(const char *key);

#endif
