/* cluster.c: hand-made clusters and manifests for the placement suites (see cluster.h). */
#include "cluster.h"

#include <check.h>
#include <string.h>

#include "manifest.h"
#include "model.h"
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
