/* manifest.h: adapter manifests (<vendor>.adapter): what a vendor's devices are
 * (models, peak compute, memory, partition templates, health thresholds) as data,
 * so that placement and normalization carry no per-vendor code paths.
 * The format is documented in adapters/README.md and xpool.conf(5). */
#ifndef XP_MANIFEST_H
#define XP_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xp.h"

/* Largest manifest accepted. */
#define XP_MANIFEST_MAX_BYTES (1u << 20)
#define XP_MAX_SLOTS 16 /* placement slots a partitioned device may have (MIG has 8) */

/* One peak figure of a model. */
struct xp_mpeak {
	char precision[16]; /* "bf16" */
	double value;
	char unit[16];      /* "TFLOPS", "TOPS" */
};

/* A partition template: a MIG profile or a vNPU template. */
struct xp_mtemplate {
	char name[32];
	int64_t memory_mib; /* -1 when not given */
	double compute;     /* share of the device's compute, 0..1 */
	int count;          /* how many fit on one device */
	int aicpu;          /* Ascend AI CPUs, -1 when not given */
	char k8s_slice[48]; /* what {slice} of k8s_slice_resource becomes ("2c"), "" the name */
	unsigned at;        /* bit s: the slice may start at slot s (nvidia-smi mig -lgipp); 0 not given */
	int span;           /* slots it covers from its start, 0 when not given */
};

/* What `xpool record` runs: the replay file name and the command. */
struct xp_mrecord {
	char file[64];
	char **argv;  /* NULL-terminated */
};

/* A version range: from..to inclusive, to empty for "and later". */
struct xp_mrange {
	char from[32], to[32];
};

/* Affinity rules. */
enum xp_affinity {
	XP_AFF_NONE,   /* not given */
	XP_AFF_PCIE,   /* the PCIe root port */
	XP_AFF_NVLINK, /* islands of NVLink-connected devices */
	XP_AFF_RING,   /* consecutive groups of ring_size by device index (HCCS rings) */
	XP_AFF_XGMI,   /* the hive the vendor tool reports */
	XP_AFF_CARD    /* consecutive groups of ring_size by device index, no link between them
			* implied (chips of one PCIe card: Atlas 300I) */
};

/* What a request wider than one ring takes (the manifest's wide key). */
enum xp_wide {
	XP_WIDE_WHOLE,  /* whole rings, every device of each free (the default) */
	XP_WIDE_MIRROR, /* an equal share of every ring, at the same positions in each (Box16) */
	XP_WIDE_PAIR    /* an equal share of every ring, each ring's lowest free devices (Box16,
			 * a job of several tasks: the plugin pairs the rings' free lists by order) */
};

/* A Kubernetes key=value pair a layout asks the exports to write. */
struct xp_mkv {
	char key[128];
	char value[64];
};

/* How many node selectors, Pod labels or Pod annotations one entry may give. */
#define XP_MKV_MAX 4

/* The terms of a vendor's node score (node_score = healthy:W rank:W free:W). */
enum xp_score_term { XP_SCORE_HEALTHY, XP_SCORE_RANK, XP_SCORE_FREE, XP_SCORE_TERMS };

/* The resources and annotation of a sharing layer (HAMi) for one vendor's devices: Kubernetes
 * names, each of which may hold {chip} (the model's hami_chip); "" when the layer has none. */
struct xp_mhami {
	char count[128];          /* devices ("nvidia.com/gpu", "huawei.com/{chip}") */
	char memory[128];         /* device memory in MiB per device ("nvidia.com/gpumem") */
	char memory_percent[128]; /* device memory in percent ("nvidia.com/gpumem-percentage") */
	char cores[128];          /* compute in percent ("nvidia.com/gpucores") */
	char uuid[128];           /* annotation that pins devices by UUID ("nvidia.com/use-gpuuuid") */
};

/* Largest request size, and longest list, a ring_priority line may give. */
#define XP_MRING_MAX 16

/* One [model NAME] section. */
struct xp_mmodel {
	char name[96];
	char vendor[32];      /* "" means the adapter's vendor */
	char **match;         /* case-insensitive globs over the tool's product name */
	size_t n_match;
	unsigned *pci_devices;
	size_t n_pci_devices;
	char generation[48];
	char cls[16];         /* "training", "inference", "" */
	int64_t memory_mib;   /* -1 when not given */
	struct xp_mpeak *peaks;
	size_t n_peaks;
	char ecu_precision[16]; /* "" means the adapter's */
	double coefficient;   /* 1.0 when not given */
	int memory_access;    /* enum xp_mem_access */
	int affinity;         /* enum xp_affinity, XP_AFF_NONE: the adapter's */
	int ring_size;
	uint64_t counts;      /* devices a replica may take on one node: bit k-1 for k (1..64); 0 any */
	/* ring_prio[k][0..n_ring_prio[k]): for a request of k devices, the free counts a ring
	 * must show, tried in this order (the vendor's rule, not a best fit); n 0: no rule. */
	unsigned char ring_prio[XP_MRING_MAX + 1][XP_MRING_MAX];
	unsigned char n_ring_prio[XP_MRING_MAX + 1];
	int wide;             /* enum xp_wide: a request wider than a ring */
	/* The same two for a job of several tasks (more than one replica in all), where the
	 * vendor's rule differs: counts_multi 0 and has_wide_multi false: as above. */
	uint64_t counts_multi;
	bool has_wide_multi;
	int wide_multi;
	/* What Kubernetes must carry for the vendor's scheduler to apply this rule: node selectors
	 * (k8s_node_selector), Pod labels (k8s_pod_label), Pod annotations (k8s_pod_annotation). */
	struct xp_mkv k8s_selector[XP_MKV_MAX], k8s_label[XP_MKV_MAX], k8s_annotation[XP_MKV_MAX];
	size_t n_k8s_selector, n_k8s_label, n_k8s_annotation;
	bool has_score;       /* node_score given: score_w holds the vendor's node score */
	int score_w[XP_SCORE_TERMS]; /* weight of each enum xp_score_term in the node score */
	char layout[96];      /* the [layout] this entry was made from ("" a [model] section) */
	uint64_t layout_devices; /* node sizes the layout applies to: bit n-1 for n devices; 0 any */
	int slots;            /* placement slots of a partitioned device (MIG: 8 memory slices), 0 none */
	unsigned partition;   /* enum xp_partition bits, 0 when not given */
	struct xp_mtemplate *templates;
	size_t n_templates;
	double temp_warn, temp_crit;   /* NAN: the adapter's */
	double power_warn, power_crit; /* percent of the power limit, NAN: the adapter's */
	char k8s_resource[128];       /* Kubernetes resource of a whole device, "" the adapter's */
	char k8s_slice_resource[128]; /* resource of a slice, pattern with {slice}, "" the adapter's */
	char slurm_gres[32];          /* Slurm gres name, "" the adapter's */
	struct xp_mhami hami;         /* `hami`: HAMi's names for a Pod, count "" the adapter's */
	struct xp_mhami hami_volcano; /* `hami_volcano`: under Volcano's device sharing, count "" the adapter's */
	char hami_chip[48];           /* what {chip} becomes ("Ascend910A"), "" the adapter's */
	int hami_unit;                /* HAMi allocates the chip in units of this many (it rounds a
				       * smaller request up): `hami_unit`, 0 when not given */
	int line;             /* where the section starts, for messages */
};

/* A parsed manifest. */
struct xp_manifest {
	char *path;
	char name[32];
	char vendor[32];
	unsigned *pci_vendors;
	size_t n_pci_vendors;
	struct xp_mrange *drivers;
	size_t n_drivers;
	char **tools, **libraries;
	size_t n_tools, n_libraries;
	struct xp_mrecord *records;
	size_t n_records;
	char ecu_precision[16];
	int affinity;
	int ring_size;
	double temp_warn, temp_crit;   /* NAN when not given */
	double power_warn, power_crit;
	char visible_env[64];         /* variable that names the visible devices, "" none */
	char **device_nodes;          /* per-device node patterns with {index} ("/dev/nvidia{index}") */
	size_t n_device_nodes;
	char **control_nodes;         /* nodes every task needs once ("/dev/nvidiactl") */
	size_t n_control_nodes;
	char k8s_resource[128];       /* Kubernetes extended resource of a whole device, "" none */
	char k8s_slice_resource[128]; /* resource of a MIG profile / vNPU template: pattern with {slice}, "" none */
	char slurm_gres[32];          /* Slurm gres name ("gpu"), "" none */
	struct xp_mhami hami;         /* `hami`: HAMi's resource names for a Pod, count "" none */
	struct xp_mhami hami_volcano; /* `hami_volcano`: the same under Volcano, count "" as hami */
	char hami_chip[48];           /* what {chip} becomes, "" none */
	int order;                    /* where the adapter is tried among the others (lower first; 500 unset) */
	struct xp_mmodel *models;
	size_t n_models;
	/* [layout] sections made concrete: one entry per layout and model it names, a copy of the
	 * model with the layout's placement keys over it (sharing the model's heap parts). */
	struct xp_mmodel *variants;
	size_t n_variants;
	size_t *variant_of;           /* variants[i] copies models[variant_of[i]] */
};

/* Parses manifest text; file names it in errors ("FILE:LINE: ..."). NULL with err set on error. */
struct xp_manifest *xp_manifest_parse(const char *text, size_t len, const char *file, struct xp_err *err);
/* Reads and parses a manifest file. */
struct xp_manifest *xp_manifest_load(const char *path, struct xp_err *err);
/* Frees a manifest; NULL is fine. */
void xp_manifest_free(struct xp_manifest *m);
/* True when md lets a replica take k devices on one node (its counts, or any when it gives none). */
bool xp_manifest_count_ok(const struct xp_mmodel *md, int k);
/* The counts md allows as text ("1, 2, 4 or 8"), "" when any. */
void xp_manifest_counts_text(const struct xp_mmodel *md, char *out, size_t len);
/* The counts md allows a task of a job with one task (multi false) or several: bit k-1 for k,
 * 0 any. */
uint64_t xp_manifest_task_counts(const struct xp_mmodel *md, bool multi);
/* The counts of mask as text ("1, 2, 4 or 8"), "" when 0. */
void xp_manifest_mask_text(uint64_t mask, char *out, size_t len);
/* What a request wider than a ring takes (enum xp_wide) in a job of one task or several. */
int xp_manifest_wide(const struct xp_mmodel *md, bool multi);
/* The template of md named name (any case), NULL when md is NULL or has none by that name. */
const struct xp_mtemplate *xp_manifest_template(const struct xp_mmodel *md, const char *name);
/* The entry a node holding n devices of model md places by: the first [layout] made from md
 * whose devices include n, else md itself (NULL when md is NULL). */
const struct xp_mmodel *xp_manifest_layout(const struct xp_manifest *m, const struct xp_mmodel *md, int n);
/* The model whose match globs fit the product name, else whose PCI device id matches (pci_device
 * < 0: none); NULL when none does. */
const struct xp_mmodel *xp_manifest_model(const struct xp_manifest *m, const char *product, int pci_device);
/* True when the manifest lists the PCI vendor id. */
bool xp_manifest_has_vendor(const struct xp_manifest *m, unsigned pci_vendor);
/* Compares two version strings field by field ("535.54.03", "24.1.RC2": letters are skipped,
 * digit runs compare as numbers); <0, 0, >0 like strcmp. */
int xp_version_cmp(const char *a, const char *b);
/* True when version lies in one of the manifest's driver ranges (or none are given). */
bool xp_manifest_driver_ok(const struct xp_manifest *m, const char *version);
/* True when text matches the glob (`*`, `?`), ignoring case. */
bool xp_glob_match(const char *glob, const char *text);
/* The variable that names a task's visible devices ("CUDA_VISIBLE_DEVICES"); NULL when none. */
const char *xp_manifest_env(const struct xp_manifest *m);
/* The device nodes a task on devices indices[0..n) needs: each index's device_nodes, then the
 * control_nodes, no path twice (negative indices skipped). Sets *out to a heap vector (NULL when
 * empty) the caller frees with xp_strv_free(*out, count); returns count. */
size_t xp_manifest_mounts(const struct xp_manifest *m, const int *indices, size_t n, char ***out);
/* The Kubernetes resource of a whole device of model md (NULL: none known): the model's, else the
 * adapter's; NULL when neither gives one. */
const char *xp_manifest_k8s_resource(const struct xp_manifest *m, const struct xp_mmodel *md);
/* The Kubernetes resource of slice (a template name) of model md: the model's or the adapter's
 * k8s_slice_resource with {slice} replaced by the template's k8s_slice (or the slice's own
 * name when no template of md names it); heap string, NULL when no pattern is given. */
char *xp_manifest_k8s_slice(const struct xp_manifest *m, const struct xp_mmodel *md, const char *slice);
/* The Slurm gres name for model md (NULL: none known): the model's, else the adapter's; NULL
 * when neither gives one. */
const char *xp_manifest_slurm_gres(const struct xp_manifest *m, const struct xp_mmodel *md);
/* HAMi's names for model md (under Volcano when volcano), {chip} filled in, into *out: the
 * model's, else the adapter's; hami_volcano falls back to hami. False (out zeroed) when neither
 * names a count resource, or a name needs {chip} and no hami_chip is given. */
bool xp_manifest_hami(const struct xp_manifest *m, const struct xp_mmodel *md, bool volcano, struct xp_mhami *out);
/* True when s is a valid Kubernetes extended resource name ("nvidia.com/mig-1g.10gb"): a DNS
 * subdomain prefix outside kubernetes.io, '/', and a qualified name of at most 63 bytes. */
bool xp_k8s_resource_valid(const char *s);

#endif
