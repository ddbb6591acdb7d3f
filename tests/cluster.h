/* cluster.h: hand-made clusters and manifests for the suites that place jobs (place, export,
 * jobspec), so that each builds its nodes and reads its manifests the same way. */
#ifndef XP_TEST_CLUSTER_H
#define XP_TEST_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

struct xp_cluster;
struct xp_manifest;
struct xp_node;

/* What the devices of one hand-made node share. */
struct xp_test_devs {
	const char *vendor, *model, *driver; /* copied into every device */
	int64_t memory_mib;                  /* each device's memory */
	int numa_domains;                    /* devices split in index order over this many (0 counts as 1) */
	const char *link;                    /* affinity group prefix: "hccs" makes "hccs:0", "hccs:1", ... */
	int per_link;                        /* devices per affinity group; 0: all in group 0 */
};

/* Adds node name to c with n free, healthy devices as t describes (device i on bus
 * 0000:(0x10+i):00.0, one ECU each) and returns it. */
struct xp_node *xp_test_node(struct xp_cluster *c, const char *name, int n, const struct xp_test_devs *t);
/* Parses manifest text (reported as file name); fails the test when it does not parse. */
struct xp_manifest *xp_test_manifest(const char *text, const char *name);
/* The suite's two hand-written manifests (Ascend-like, NVIDIA-like), held by its checked fixture. */
extern struct xp_manifest *xp_test_mans[2];
/* The same, as the placement functions take them. */
#define XP_TEST_MANS ((const struct xp_manifest *const *)xp_test_mans)
/* Parses the two manifests into xp_test_mans (a fixture's setup). */
void xp_test_mans_parse(const char *ascend_text, const char *nvidia_text);
/* Frees xp_test_mans (a fixture's teardown). */
void xp_test_mans_free(void);
/* Writes a default-mix sim cluster of nodes nodes from seed to a new temporary file, as
 * `xpool sim gen` would; returns its path (unlink and free it). */
char *xp_test_sim_file(size_t nodes, uint64_t seed);

#endif
