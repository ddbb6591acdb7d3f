/* cluster.c: hand-made clusters and manifests for the placement suites (see cluster.h). */
#include "cluster.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"
#include "model.h"
#include "simgen.h"
#include "testlib.h"
#include "xp.h"

struct xp_node *xp_test_node(struct xp_cluster *c, const char *name, int n, const struct xp_test_devs *t)
{
	struct xp_node *nd = xp_node_new(name);
	int domains = t->numa_domains > 1 ? t->numa_domains : 1;
	int per_numa = n / domains ? n / domains : 1;
	for (int i = 0; i < n; i++) {
		struct xp_device *d = xp_node_add_device(nd);
		d->index = i;
		d->vendor = xp_strdup(t->vendor);
		d->model = xp_strdup(t->model);
		d->driver = xp_strdup(t->driver);
		d->pci_bus_id = xp_asprintf("0000:%02x:00.0", 0x10 + i);
		d->memory_mib = t->memory_mib;
		d->ecu = 1.0;
		d->numa = i / per_numa;
		d->health = XP_HEALTH_OK;
		d->affinity_group = xp_asprintf("%s:%d", t->link, t->per_link ? i / t->per_link : 0);
	}
	xp_cluster_add(c, nd);
	return nd;
}

struct xp_manifest *xp_test_manifest(const char *text, const char *name)
{
	struct xp_err err = {{0}};
	struct xp_manifest *m = xp_manifest_parse(text, strlen(text), name, &err);
	ck_assert_msg(m != NULL, "%s: %s", name, err.msg);
	return m;
}

char *xp_test_sim_file(size_t nodes, uint64_t seed)
{
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_sim_generate(nodes, NULL, seed, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_msg(xp_sim_write(c, f, &err) == 0, "%s", err.msg);
	fclose(f);
	xp_cluster_free(c);
	char *path = xp_tmpfile(buf, len);
	free(buf);
	return path;
}

struct xp_manifest *xp_test_mans[2];

void xp_test_mans_parse(const char *ascend_text, const char *nvidia_text)
{
	xp_test_mans[0] = xp_test_manifest(ascend_text, "ascend.adapter");
	xp_test_mans[1] = xp_test_manifest(nvidia_text, "nvidia.adapter");
}

void xp_test_mans_free(void)
{
	xp_manifest_free(xp_test_mans[0]);
	xp_manifest_free(xp_test_mans[1]);
	xp_test_mans[0] = xp_test_mans[1] = NULL;
}
