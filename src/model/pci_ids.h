/* pci_ids.h: which PCI functions are accelerators, and what to call their vendor. */
#ifndef XP_PCI_IDS_H
#define XP_PCI_IDS_H

#include <stdbool.h>

/* Short vendor name of a PCI vendor id ("NVIDIA", "Huawei"), or NULL when not an accelerator vendor. */
const char *xp_pci_vendor_name(unsigned vendor_id);
/* True when a PCI function with these ids and class code is an accelerator. */
bool xp_pci_is_accelerator(unsigned vendor_id, unsigned device_id, unsigned class_id);

#endif
