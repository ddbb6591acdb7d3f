/* model.h: the unified resource model (xpool-internals(7), "RESOURCE MODEL").
 *
 * A cluster owns nodes; a node owns its NUMA domains, packages, NICs, PCI devices,
 * accelerators and the accelerator link matrix. Everything is plain data with
 * owning pointers: xp_cluster_free releases the whole tree. A `char *` string is a
 * heap copy owned by the struct that holds it; a `const char *` one (the texts that
 * repeat across devices and nodes: vendor, model, driver, peaks, PCI ids...) is an
 * interned string (istr.h) of which the struct holds one reference: set it with
 * xp_istr_set (or assign xp_istr / xp_strdup), release it with xp_istr_drop, never
 * edit it in place. NULL means "not known".
 * Numeric metrics that may be unknown use XP_NA (NaN), written as JSON null. */
#ifndef XP_MODEL_H
#define XP_MODEL_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Value of a numeric metric that is not known (JSON null, UI "n/a"). */
#define XP_NA NAN
/* True when a metric holds a value. */
#define XP_HAS(v) (!isnan(v))

/* Hard limits that keep hostile snapshots from exhausting memory. */
#define XP_MAX_DEVICES 1024 /* accelerators per node */
#define XP_MAX_NUMA 1024    /* NUMA domains per node */
#define XP_MAX_STRING 65536 /* bytes in one string: a cpu list of a 4096-PU machine fits */
#define XP_MAX_NODES 1000000 /* nodes in one document: what `sim gen` may write */
#define XP_MAX_PROCS 1024   /* processes per device in a document: the rest are refused */

/* Node state, as shown in every view. */
enum xp_node_state {
	XP_NODE_UP,
	XP_NODE_DEGRADED,
	XP_NODE_UNREACHABLE,
	XP_NODE_DRAINING,
	XP_NODE_DOWN,
	XP_NODE_STATE_COUNT
};

/* Device health. */
enum xp_health {
	XP_HEALTH_UNKNOWN,
	XP_HEALTH_OK,
	XP_HEALTH_WARN,
	XP_HEALTH_FAIL,
	XP_HEALTH_COUNT
};

/* How a device's memory is reached from the host. */
enum xp_mem_access {
	XP_MEM_UNKNOWN,
	XP_MEM_EXPLICIT, /* explicit copies/migration between host and device */
	XP_MEM_UNIFIED,  /* unified addressing / zero-copy */
	XP_MEM_ACCESS_COUNT
};

/* Partitioning capabilities of a device (bit set). */
enum xp_partition {
	XP_PART_WHOLE = 1 << 0, /* allocatable whole */
	XP_PART_MIG = 1 << 1,   /* NVIDIA MIG profiles */
	XP_PART_VNPU = 1 << 2,  /* Ascend vNPU hard templates */
	XP_PART_SHARE = 1 << 3  /* soft share by percent */
};

/* Link class between two devices, ordered from closest to farthest
 * (the order is the distance rank, as in `nvidia-smi topo -m`). */
enum xp_link_class {
	XP_LINK_SELF,    /* X: the device itself */
	XP_LINK_NVLINK,  /* NV#: NVLink with # links */
	XP_LINK_HCCS,    /* HCCS (Ascend) */
	XP_LINK_XGMI,    /* XGMI / Infinity Fabric (AMD, Hygon) */
	XP_LINK_MLULINK, /* MLU-Link (Cambricon) */
	XP_LINK_PIX,     /* at most one PCIe bridge (same switch port) */
	XP_LINK_PXB,     /* several PCIe bridges, no host bridge */
	XP_LINK_PHB,     /* through a PCIe host bridge */
	XP_LINK_NODE,    /* between host bridges inside one NUMA node */
	XP_LINK_SYS,     /* across the SMP interconnect between NUMA nodes */
	XP_LINK_UNKNOWN, /* not known */
	XP_LINK_CLASS_COUNT
};

/* One cell of the link matrix. */
struct xp_link {
	uint8_t cls;   /* enum xp_link_class */
	uint8_t count; /* number of links for NV#/HCCS/XGMI, else 0 */
};

/* Labels in one class: an ordered list of key = value pairs. */
struct xp_labels {
	size_t n, cap;
	char **keys;
	char **values;
};

/* Peak compute of a device at one precision. */
struct xp_peak {
	const char *precision; /* "fp16", "bf16", "fp32", "int8", ... (interned: istr.h) */
	double value;    /* in unit */
	const char *unit;      /* "TFLOPS", "TOPS", ... (interned) */
};

/* A current allocation on a device: whole or a slice. */
struct xp_alloc {
	char *slice;   /* NULL for the whole device, else MIG profile / vNPU template / "share" */
	char *owner;   /* job or pod that holds it */
	int64_t memory_mib; /* -1 when not known */
	int share_pct;      /* soft share percent, 0 when not a share */
	char *uuid;         /* an existing instance's own UUID (MIG-...), NULL when not known */
};

/* A process using a device, as the vendor tool or library reports it. */
struct xp_proc {
	int64_t pid;         /* the vendor's pid (the host's PID namespace), -1 when not known */
	char *user;          /* owner's user name (from /proc when read live), NULL when not known */
	char *command;       /* the command line when read live, else the tool's process name; NULL when not known */
	int64_t memory_mib;  /* device memory it uses, -1 when not known */
	double util_pct;     /* its share of the device's compute, XP_NA when the vendor does not say */
	char type[4];        /* "C" compute, "G" graphics, "C+G" both (nvidia-smi's words); "" when not known */
};

/* An accelerator. */
struct xp_device {
	int index;          /* index within the node, 0.. */
	int vendor_index;   /* the vendor tool's own index (nvidia-smi GPU index, NPU id, card N): what
			     * CUDA_VISIBLE_DEVICES and /dev/nvidiaN mean; -1 when not known */
	const char *vendor; /* "NVIDIA", "Huawei", ... (interned: istr.h, as every const char * here) */
	const char *model;  /* marketing model, or "[10de:1db4]" when not known */
	const char *arch;   /* generation/architecture, NULL when not known */
	char *uuid;         /* serial or UUID */
	char *pci_bus_id;   /* "0000:3b:00.0" */
	const char *pci_id; /* "10de:1db4" (vendor:device) */
	int pci_class;      /* PCI class code, e.g. 0x0302; -1 when not known */
	char **pci_path;    /* PCI bridges from the root port down to the device's parent */
	size_t n_pci_path;
	char **os_devices;  /* hwloc OS devices attached: "cuda0", "nvml0", "rsmi0", ... */
	size_t n_os_devices;
	int numa;           /* NUMA domain id, -1 when not local to one */
	const char *driver, *firmware, *runtime; /* versions, NULL when not known */
	int64_t memory_mib;      /* total, -1 when not known */
	int64_t memory_used_mib; /* -1 when not known */
	struct xp_peak *peaks;
	size_t n_peaks;
	double ecu;              /* effective compute units, XP_NA when not known */
	const char *ecu_basis;   /* how ECU was counted ("bf16 989.4 TFLOPS x 1.00"), NULL when not known */
	int mem_access;          /* enum xp_mem_access */
	const char *affinity_group; /* "pcie:0000:80:03.0", "hccs:0", ...; NULL when none */
	int health;              /* enum xp_health */
	char **health_reasons;
	size_t n_health_reasons;
	double temperature_c, power_w, utilization_pct; /* XP_NA when not known */
	double power_limit_w;    /* XP_NA when not known */
	int64_t retired_pages;   /* -1 when not known */
	int64_t ecc_corrected, ecc_uncorrected;          /* -1 when not known */
	unsigned partition;      /* enum xp_partition bits: what the device can do */
	int mig_mode;            /* NVIDIA MIG mode now: 1 on (only its MIG instances are offered,
				  * never the whole GPU), 0 off (no instances; making one enables it
				  * first), -1 not known or not MIG-capable */
	struct xp_alloc *allocs;
	size_t n_allocs;
	/* Processes using the device now; procs_known false when no source lists them (then
	 * n_procs is 0 and views show "-"), true with n_procs 0 when the vendor lists none. */
	struct xp_proc *procs;
	size_t n_procs;
	bool procs_known;
};

/* A NUMA domain. */
struct xp_numa {
	int id;             /* OS index */
	int64_t memory_mib; /* local memory */
	char *cpus;         /* cpuset as a list: "0-7,16-23" */
	int package;        /* package holding it, -1 when it spans several or none */
};

/* A processor package (socket). */
struct xp_package {
	int id;        /* OS index */
	char *model;   /* CPU model string, NULL when not known */
	int cores, pus;
	char *cpus;    /* cpuset as a list */
};

/* A network interface. */
struct xp_nic {
	char *name;        /* "eth0", "ib0" */
	char *pci_bus_id;  /* NULL for virtual interfaces */
	char *rdma;        /* OpenFabrics device ("mlx5_0"), NULL when not RDMA-capable */
	char *address;     /* MAC/GUID when known */
	int numa;          /* -1 when not local to one */
	int64_t speed_mbps; /* -1 when not known */
};

/* A PCI function that is not a bridge (accelerators included), for the topology tree. */
struct xp_pci {
	char *bus_id;   /* "0000:03:00.0" */
	const char *pci_id; /* "10de:1094" (interned: istr.h) */
	int pci_class;  /* class code, e.g. 0x0200 */
	const char *name;   /* "NVIDIA Corporation Tesla M2075" when known (interned) */
	int numa;       /* -1 when not local to one */
	int accel;      /* index into the node's devices, -1 when not an accelerator */
	char **os_devices; /* hwloc OS devices: "eth0", "mlx5_0", "sda", "cuda0" */
	size_t n_os_devices;
};

/* A node: one machine. */
struct xp_node {
	char *name;
	char *source;      /* "local", "snapshot", an agent URL, ... */
	char *from_file;   /* the file it was read from (an inventory snapshot, a sim gen cluster, a
			    * topology XML), NULL when seen live: a file shows what was, not what is,
			    * so it writes no evidence by itself */	int state;         /* enum xp_node_state */
	int64_t age_s;     /* age of the last good data, 0 when fresh */
	struct xp_labels facts;      /* set by discovery: vendor, model, driver */
	struct xp_labels governance; /* set by operators: pool, queue, tenant */
	struct xp_labels validation; /* set by the validation matrix */
	char *zone, *rack, *sw;      /* network location, NULL when not known */
	char *cpu_model;
	int packages_n, cores, pus, pus_allowed;
	int64_t memory_mib;
	struct xp_package *packages;
	size_t n_packages;
	struct xp_numa *numa;
	size_t n_numa;
	struct xp_nic *nics;
	size_t n_nics;
	struct xp_pci *pci;
	size_t n_pci;
	struct xp_device *devices;
	size_t n_devices;
	struct xp_link *links;       /* n_devices x n_devices, row-major; NULL when no devices */
	double cost_per_hour;        /* XP_NA when not known */
	char **warnings;             /* discovery warnings (sources that disagree, odd tool output) */
	size_t n_warnings;
	unsigned refs;               /* owners beyond the first (xp_node_ref), changed atomically: a
				      * node shared by clusters is never changed, only replaced */
};

/* A cluster: what every view and command reads. */
struct xp_cluster {
	uint64_t generation;  /* bumped on every change */
	size_t sources_down;  /* sources (agents) that did not answer when it was loaded: the data is partial */
	struct xp_node **nodes;
	size_t n_nodes, cap_nodes;
};

/* Returns the name of a node state ("up", "degraded", ...). */
const char *xp_node_state_name(int state);
/* Parses a node state name; returns -1 when unknown. */
int xp_node_state_parse(const char *s);
/* Returns the name of a health value ("ok", "warn", "fail", "unknown"). */
const char *xp_health_name(int health);
/* Parses a health name; returns -1 when unknown. */
int xp_health_parse(const char *s);
/* Returns the name of a memory access mode ("unknown", "explicit", "unified"). */
const char *xp_mem_access_name(int mode);
/* Parses a memory access mode name; returns -1 when unknown. */
int xp_mem_access_parse(const char *s);
/* Writes a link cell as `nvidia-smi topo -m` does ("X", "NV18", "PIX", ...) into buf. */
const char *xp_link_str(struct xp_link l, char *buf, size_t len);
/* Parses "X", "NV4", "HCCS", "PIX", ... into *out; returns -1 when not a link class. */
int xp_link_parse(const char *s, struct xp_link *out);
/* Distance rank of a link class: 0 for self, larger is farther. */
int xp_link_rank(struct xp_link l);

/* Sets key = value in labels (replacing an existing key). */
void xp_labels_set(struct xp_labels *l, const char *key, const char *value);
/* Adds key = value at the end without looking for key: for keys known to be new (a JSON
 * object's keys are unique), so that a million labels do not cost a million squared. */
void xp_labels_append(struct xp_labels *l, const char *key, const char *value);
/* Returns the value of key in labels, or NULL. */
const char *xp_labels_get(const struct xp_labels *l, const char *key);
/* Frees the labels' contents (not the struct itself). */
void xp_labels_clear(struct xp_labels *l);

/* Allocates a cluster with no nodes. */
struct xp_cluster *xp_cluster_new(void);
/* Frees a cluster and everything it owns; NULL is fine. */
void xp_cluster_free(struct xp_cluster *c);
/* Adds a node (the cluster takes ownership) and bumps the generation. */
void xp_cluster_add(struct xp_cluster *c, struct xp_node *n);
/* Finds a node by name, or NULL. */
struct xp_node *xp_cluster_node(const struct xp_cluster *c, const char *name);
/* Counts the accelerators of all nodes. */
size_t xp_cluster_device_count(const struct xp_cluster *c);

/* Allocates an empty node named name, state up, all metrics unknown. */
struct xp_node *xp_node_new(const char *name);
/* A deep copy of a node (the copy owns everything it points to). */
struct xp_node *xp_node_clone(const struct xp_node *n);
/* Frees a node and everything it owns, or drops one owner of a shared node; NULL is fine. */
void xp_node_free(struct xp_node *n);
/* Adds an owner to n (one more xp_node_free to free it) and returns n: clusters that share
 * a node that does not change (an agent's between its replies). Thread-safe. */
struct xp_node *xp_node_ref(struct xp_node *n);
/* Appends a zeroed device (metrics unknown) and returns it; pointers to earlier devices may move. */
struct xp_device *xp_node_add_device(struct xp_node *n);
/* Appends a process to d (pid, memory and utilization unknown) and marks d's processes known. */
struct xp_proc *xp_device_add_proc(struct xp_device *d);
/* Frees d's processes and marks them not known. */
void xp_device_procs_clear(struct xp_device *d);
/* Sets *d to a device at index with every metric unknown (what xp_node_add_device appends). */
void xp_device_init(struct xp_device *d, int index);
/* Sets *p to a PCI function with nothing known (what xp_node_add_pci appends). */
void xp_pci_init(struct xp_pci *p);
/* A heap copy of n elements of size bytes with the capacity the xp_node_add_* functions
 * expect of a node's arrays (NULL for none): for a decoder that fills its own buffer first. */
void *xp_node_array(const void *src, size_t n, size_t size);
/* Appends a zeroed NUMA domain and returns it. */
struct xp_numa *xp_node_add_numa(struct xp_node *n);
/* Appends a zeroed package and returns it. */
struct xp_package *xp_node_add_package(struct xp_node *n);
/* Appends a zeroed NIC and returns it. */
struct xp_nic *xp_node_add_nic(struct xp_node *n);
/* Appends a zeroed PCI function and returns it. */
struct xp_pci *xp_node_add_pci(struct xp_node *n);
/* (Re)allocates the link matrix for the node's devices, every cell unknown, diagonal self. */
void xp_node_links_reset(struct xp_node *n);
/* Returns the link cell between devices a and b (both < n_devices). */
struct xp_link *xp_node_link(const struct xp_node *n, size_t a, size_t b);
/* Finds a device by PCI bus id (case-insensitive), or NULL. */
struct xp_device *xp_node_device_by_bus(const struct xp_node *n, const char *bus_id);
/* Finds a NUMA domain by OS index, or NULL. */
struct xp_numa *xp_node_numa_by_id(const struct xp_node *n, int id);

/* Longest node name (a host name fits; so does every column sized for one). */
#define XP_MAX_NODE_NAME 255

/* Makes every string of a discovered node safe to print and to round-trip through
 * JSON: control characters become '?', overlong strings are cut to the limits. */
void xp_node_clean(struct xp_node *n);

/* Appends a copy of s to a string list. */
void xp_strv_add(char ***v, size_t *n, const char *s);
/* Appends a copy of s unless the list holds it already (a reason or warning found again). */
void xp_strv_add_once(char ***v, size_t *n, const char *s);
/* Frees a string list. */
void xp_strv_free(char **v, size_t n);

#endif
