/* pci_class.c: the PCI class names every view and listing uses (from the PCI
 * code and ID assignment specification, as lspci spells them). */
#include "pci_class.h"

#include <stddef.h>

/* A class code (or base class) and its name. */
struct class_name {
	unsigned cls;
	const char *name;
};

static const struct class_name classes[] = {
	{0x0100, "SCSI storage controller"},
	{0x0101, "IDE interface"},
	{0x0104, "RAID bus controller"},
	{0x0106, "SATA controller"},
	{0x0107, "Serial Attached SCSI controller"},
	{0x0108, "Non-Volatile memory controller"},
	{0x0200, "Ethernet controller"},
	{0x0207, "InfiniBand controller"},
	{0x0280, "Network controller"},
	{0x0300, "VGA compatible controller"},
	{0x0302, "3D controller"},
	{0x0380, "Display controller"},
	{0x0403, "Audio device"},
	{0x0600, "Host bridge"},
	{0x0604, "PCI bridge"},
	{0x0800, "PIC"},
	{0x0880, "System peripheral"},
	{0x0b40, "Co-processor"},
	{0x0c03, "USB controller"},
	{0x0c05, "SMBus"},
	{0x0c06, "InfiniBand"},
	{0x1101, "Performance counters"},
	{0x1180, "Signal processing controller"},
	{0x1200, "Processing accelerators"},
};

static const struct class_name bases[] = {
	{0x01, "Mass storage controller"},
	{0x02, "Network controller"},
	{0x03, "Display controller"},
	{0x04, "Multimedia controller"},
	{0x05, "Memory controller"},
	{0x06, "Bridge"},
	{0x07, "Communication controller"},
	{0x08, "Generic system peripheral"},
	{0x0b, "Processor"},
	{0x0c, "Serial bus controller"},
	{0x11, "Signal processing controller"},
	{0x12, "Processing accelerators"},
};

static const char *lookup(const struct class_name *t, size_t n, unsigned cls)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].cls == cls)
			return t[i].name;
	return NULL;
}

const char *xp_pci_class_name(unsigned class_id)
{
	const char *name = lookup(classes, sizeof classes / sizeof classes[0], class_id);
	/* Fall back to the base class so that the tree still says something useful. */
	return name ? name : lookup(bases, sizeof bases / sizeof bases[0], class_id >> 8);
}
