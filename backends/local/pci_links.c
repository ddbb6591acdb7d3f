/* pci_links.c: PIX/PXB/PHB/NODE/SYS from the PCI tree alone.
 *
 * `nvidia-smi topo -m` defines: PIX at most one PCIe bridge, PXB several bridges
 * but no host bridge, PHB through a host bridge, NODE between host bridges of one
 * NUMA node, SYS across the SMP interconnect. hwloc shows a PCIe switch as an
 * upstream-port bridge with one downstream-port bridge per slot, so "one bridge"
 * in nvidia's sense is "the two functions meet at a bridge with at most one more
 * bridge on each side" (the downstream ports of one switch). */
#include "local/pci_links.h"

#include <stdio.h>

#include "xp.h"

static bool is_host_bridge(hwloc_obj_t o)
{
	return o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST;
}

static bool is_ancestor(hwloc_obj_t anc, hwloc_obj_t o)
{
	for (hwloc_obj_t p = o->parent; p; p = p->parent)
		if (p == anc)
			return true;
	return false;
}

/* Objects strictly between o and its ancestor anc. */
static int hops(hwloc_obj_t o, hwloc_obj_t anc)
{
	int k = 0;
	for (hwloc_obj_t p = o->parent; p && p != anc; p = p->parent)
		k++;
	return k;
}

enum xp_link_class xp_pci_link_class(hwloc_obj_t a, hwloc_obj_t b)
{
	if (a == b)
		return XP_LINK_SELF;
	hwloc_obj_t lca = NULL;
	for (hwloc_obj_t p = a->parent; p; p = p->parent)
		if (is_ancestor(p, b)) {
			lca = p;
			break;
		}
	if (!lca)
		return XP_LINK_UNKNOWN;
	if (hwloc_obj_type_is_io(lca->type)) {
		if (is_host_bridge(lca))
			return XP_LINK_PHB;
		return hops(a, lca) <= 1 && hops(b, lca) <= 1 ? XP_LINK_PIX : XP_LINK_PXB;
	}
	/* They meet above the PCI trees: inside one NUMA node it is NODE; across NUMA
	 * nodes it is SYS, even inside one package (SNC/NPS modes), as nvidia-smi says. */
	if (lca->nodeset && hwloc_bitmap_weight(lca->nodeset) == 1)
		return XP_LINK_NODE;
	return XP_LINK_SYS;
}

void xp_pci_path(hwloc_obj_t pci, char ***path, size_t *n)
{
	hwloc_obj_t chain[64];
	size_t k = 0;
	for (hwloc_obj_t p = pci->parent; p && hwloc_obj_type_is_io(p->type) && k < 64; p = p->parent)
		if (p->type == HWLOC_OBJ_BRIDGE && p->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI)
			chain[k++] = p;
	/* chain is device-up; the path reads root port first. */
	while (k > 0) {
		hwloc_obj_t br = chain[--k];
		char buf[32];
		snprintf(buf, sizeof buf, "%04x:%02x:%02x.%01x", br->attr->bridge.upstream.pci.domain,
			 br->attr->bridge.upstream.pci.bus, br->attr->bridge.upstream.pci.dev,
			 br->attr->bridge.upstream.pci.func);
		xp_strv_add(path, n, buf);
	}
}
