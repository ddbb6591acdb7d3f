/* nvidia.h: internals of the NVIDIA adapter: parsers of nvidia-smi's outputs (pure functions
 * over text, so tests feed them recorded outputs) and the NVML binding (dlopen, no headers). */
#ifndef XP_NVIDIA_H
#define XP_NVIDIA_H

#include <stddef.h>

#include "xp_adapter.h"

/* Largest nvidia-smi output read or parsed: `-q -x` of a full HGX node is a few MiB. */
#define XP_NVSMI_MAX_TEXT ((size_t)16 << 20)

/* Replay file names (the layout `xpool record` writes and --replay reads). */
#define XP_NVSMI_XML_FILE "nvidia-smi-q-x.xml"
#define XP_NVSMI_TOPO_FILE "nvidia-smi-topo-m.txt"
#define XP_NVSMI_LIST_FILE "nvidia-smi-L.txt"

/* Parses `nvidia-smi -q -x`: node is emptied, then gets one device per <gpu>; 0, or -1 with err. */
int xp_nvsmi_parse_xml(const char *text, size_t len, struct xp_raw_node *node, char *err, size_t errlen);

/* Parses `nvidia-smi topo -m` into node's link matrix and NUMA ids, matching GPU rows to devices
 * by index (creating bare devices when node has none); 0, or -1 with err. */
int xp_nvsmi_parse_topo(const char *text, size_t len, struct xp_raw_node *node, char *err, size_t errlen);

/* Merges `nvidia-smi -L` into node: names each MIG instance's profile (and UUID) on the GPU the
 * line follows (matched by UUID, else by index), adding the instances when node has none for that
 * GPU, and a GPU's name when node lacks it; 0, or -1 with err. */
int xp_nvsmi_parse_list(const char *text, size_t len, struct xp_raw_node *node, char *err, size_t errlen);

/* The MIG profile in a MIG device's name ("NVIDIA H100 80GB HBM3 MIG 1g.10gb", nvidia-smi -L's
 * "MIG 1g.10gb  Device 0: ..."): 1 with out ("1g.10gb", "1c.3g.71gb"), else 0 with out "". */
int xp_nv_mig_profile(const char *name, char *out, size_t outlen);

/* The NVML library, and how xp_nvml_open's message starts when it cannot be loaded at all
 * (as opposed to loaded but failing, a different story for `xpool adapters`). */
#define XP_NVML_LIB "libnvidia-ml.so.1"
#define XP_NVML_NOLIB "NVML not loaded: "

/* Loads libnvidia-ml and initializes it: XP_PROBE_ACTIVE (GPUs found), XP_PROBE_IDLE (none) with
 * *h set, or XP_PROBE_UNAVAILABLE with err and *h NULL. */
int xp_nvml_open(void **h, char *err, size_t errlen);

/* Fills node (emptied first) with every GPU NVML sees; 0, or -1 with err. */
int xp_nvml_enumerate(void *h, struct xp_raw_node *node, char *err, size_t errlen);

/* Fills node's link matrix from NVLink states and PCIe common ancestors; 0, or -1 with err. */
int xp_nvml_topology(void *h, struct xp_raw_node *node, char *err, size_t errlen);

/* Shuts NVML down and unloads it; NULL is fine. */
void xp_nvml_close(void *h);

/* The adapter (nvidia.c). */
extern const struct xp_adapter xp_adapter_nvidia;

#endif
