/* pci_class.h: names of PCI class codes, for listings and the topology tree. */
#ifndef XP_PCI_CLASS_H
#define XP_PCI_CLASS_H

/* Human name of a PCI class code ("3D controller", "Ethernet controller"), or NULL. */
const char *xp_pci_class_name(unsigned class_id);

#endif
