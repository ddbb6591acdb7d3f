/* simgen.h: synthetic heterogeneous clusters (`xpool sim gen`) for tests and benchmarks.
 *
 * A generated cluster is what discovery would have produced on real machines: each
 * node is built the way hwloc and the vendor adapters build one (a PCI view, then a
 * raw adapter report merged with xp_normalize_merge and the adapter's manifest), so
 * models, peaks, ECU, affinity groups and links come from the manifests, not from
 * here. Everything random comes from one seeded generator: the same options give the
 * same cluster, byte for byte, on every machine. */
#ifndef XP_SIMGEN_H
#define XP_SIMGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "manifest.h"
#include "model.h"
#include "xp.h"

/* Most nodes one cluster may have (about 10 GB of JSON at that size): what a snapshot may
 * hold (XP_MAX_NODES), since `--inventory` streams a file of any size. */
#define XP_SIM_MAX_NODES XP_MAX_NODES
/* Nodes under one top-of-rack switch; a rack holds one switch. */
#define XP_SIM_NODES_PER_RACK 32
/* Racks in one zone. */
#define XP_SIM_RACKS_PER_ZONE 16
/* Most accelerators a node kind may have. */
#define XP_SIM_MAX_DEVICES 8
/* Most entries in a --mix spec (one per kind). */
#define XP_SIM_MAX_MIX 16
/* The mix used when none is given: percent of nodes by kind. */
#define XP_SIM_DEFAULT_MIX \
	"nvidia-h100:25,nvidia-h800:10,nvidia-a100:20,ascend-910a:20,amd-mi300x:5,amd-mi100:10,cpu:10"

/* A small, fast, portable generator (splitmix64): the same seed gives the same stream everywhere. */
struct xp_rng {
	uint64_t s;
};

/* Starts a stream from seed. */
void xp_rng_seed(struct xp_rng *r, uint64_t seed);
/* The next 64 random bits. */
uint64_t xp_rng_next(struct xp_rng *r);
/* A uniform integer in [0, n); 0 when n is 0. */
uint64_t xp_rng_below(struct xp_rng *r, uint64_t n);
/* A uniform real in [0, 1). */
double xp_rng_unit(struct xp_rng *r);

/* One kind of node: a server model as a site buys it by the rack. */
struct xp_sim_kind {
	const char *name;     /* "nvidia-h100": the word --mix uses */
	const char *adapter;  /* manifest that describes its devices ("nvidia"), NULL for CPU-only */
	const char *model;    /* the manifest's model name ("H100 SXM 80GB") */
	const char *product;  /* what the vendor tool prints ("NVIDIA H100 80GB HBM3") */
	const char *prefix;   /* node name prefix ("h100") */
	unsigned pci_vendor, pci_device;
	int pci_class;        /* PCI class code of the accelerators */
	int devices;          /* accelerators per node: 0..XP_SIM_MAX_DEVICES */
	int nvlinks;          /* NVLink count between every pair (NV#), 0 when none */
	bool xgmi;            /* every pair on XGMI, one hive */
	const char *bus[XP_SIM_MAX_DEVICES]; /* PCI bus ids as on the real board */
	double power_limit_w, idle_w;
	const char *drivers[3], *runtimes[3]; /* driver versions with their runtime, oldest first */
	const char *firmware;
	const char *cpu_model, *arch;
	int cores_per_package; /* two packages, one NUMA domain each */
	int threads_per_core;
	int64_t memory_mib;   /* host memory */
	int64_t nic_mbps;     /* per-NUMA RDMA NIC speed, 0 when none */
	double cost_per_hour;
	double slice_rate;    /* share of busy devices holding slices rather than a whole job */
};

/* The node kinds sim gen knows, in a fixed order; *n gets their count. */
const struct xp_sim_kind *xp_sim_kinds(size_t *n);
/* The kind named name, or NULL. */
const struct xp_sim_kind *xp_sim_kind_find(const char *name);

/* A parsed --mix: kinds in the order given, with their percentages (summing to 100). */
struct xp_sim_mix {
	size_t n;
	const struct xp_sim_kind *kind[XP_SIM_MAX_MIX];
	int pct[XP_SIM_MAX_MIX];
};

/* Parses "KIND:PERCENT,..." (whole percentages adding up to 100); -1 with err set. */
int xp_sim_mix_parse(const char *spec, struct xp_sim_mix *mix, struct xp_err *err);
/* Splits nodes over the mix by largest remainder: each count is within one of nodes*pct/100. */
void xp_sim_mix_counts(const struct xp_sim_mix *mix, size_t nodes, size_t *counts);
/* Parses a --nodes value (1..XP_SIM_MAX_NODES); -1 with err set. */
int xp_sim_parse_nodes(const char *s, size_t *out, struct xp_err *err);
/* Parses a --seed value (a 64-bit unsigned number, decimal or 0x hex); -1 with err set. */
int xp_sim_parse_seed(const char *s, uint64_t *out, struct xp_err *err);


/* Generates a cluster of nodes nodes split by mix (NULL: XP_SIM_DEFAULT_MIX), everything
 * drawn from seed; NULL with err set when a manifest or one of its models is missing. */
struct xp_cluster *xp_sim_generate(size_t nodes, const struct xp_sim_mix *mix, uint64_t seed,
				   struct xp_err *err);

/* Writes c to f with xp_cluster_write(c, f, 0, err) (compact), which streams node by node,
 * so that a million-device document never exists as one JSON tree. */
int xp_sim_write(const struct xp_cluster *c, FILE *f, struct xp_err *err);

#endif
