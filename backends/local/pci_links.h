/* pci_links.h: link classes between PCI functions from the hwloc PCI tree,
 * with the meaning `nvidia-smi topo -m` gives them. */
#ifndef XP_PCI_LINKS_H
#define XP_PCI_LINKS_H

#include <hwloc.h>
#include <stddef.h>

#include "model.h"

/* Link class (PIX, PXB, PHB, NODE or SYS) between two PCI functions of one topology. */
enum xp_link_class xp_pci_link_class(hwloc_obj_t a, hwloc_obj_t b);
/* The bus ids of the PCI bridges above a function, root port first (host bridges excluded). */
void xp_pci_path(hwloc_obj_t pci, char ***path, size_t *n);

#endif
