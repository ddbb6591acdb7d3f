/* pci_ids.c: accelerator recognition from PCI class and vendor ids.
 *
 * Recognition is generic first: any function whose class says "compute"
 * (3D controller, processing accelerator, co-processor) is an accelerator,
 * whoever made it, so a vendor we have never heard of still shows up. Display
 * controllers (VGA, other display) count only for vendors known to make compute
 * cards, because every server has a BMC VGA chip that is no accelerator. */
#include "pci_ids.h"

#include <stddef.h>

struct vendor {
	unsigned id;
	const char *name;
	bool vga_compute; /* its VGA/display-class functions are compute devices */
};

/* Vendor ids checked against Debian's pci.ids (2023.04). Cambricon, Iluvatar,
 * MetaX and Biren are not in that list: their ids are unconfirmed here, and they
 * only affect naming, since those cards use compute classes recognised anyway. */
static const struct vendor vendors[] = {
	{0x10de, "NVIDIA", true},
	{0x19e5, "Huawei", true},
	{0x1002, "AMD", true},
	{0x1d94, "Hygon", true},
	{0xcabc, "Cambricon", true},
	{0x8086, "Intel", false}, /* its VGA functions are integrated graphics */
	{0x1da3, "Habana", true},
	{0x1e3e, "Iluvatar", true},
	{0x1ed5, "MooreThreads", true},
	{0x1e36, "Enflame", true},
	{0x9999, "MetaX", true},
	{0x1ee0, "Biren", true},
	{0x1d22, "Kunlunxin", true},
	{0x1ae0, "Google", true},
	{0x1d95, "Graphcore", true},
	{0x1de0, "Groq", true},
};

/* Display functions of accelerator vendors that are server management or
 * legacy on-board graphics, not compute. */
static const struct {
	unsigned vendor, device;
} not_compute[] = {
	{0x1002, 0x515e}, /* ATI ES1000: on-board server VGA */
	{0x1002, 0x5159}, /* ATI RV100 (ES7000): on-board server VGA */
};

static const struct {
	unsigned cls;
	const char *name;
} classes[] = {
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

static const struct {
	unsigned cls;
	const char *name;
} bases[] = {
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

static const struct vendor *vendor_find(unsigned id)
{
	for (size_t i = 0; i < sizeof vendors / sizeof vendors[0]; i++)
		if (vendors[i].id == id)
			return &vendors[i];
	return NULL;
}

const char *xp_pci_vendor_name(unsigned vendor_id)
{
	const struct vendor *v = vendor_find(vendor_id);
	return v ? v->name : NULL;
}

bool xp_pci_is_accelerator(unsigned vendor_id, unsigned device_id, unsigned class_id)
{
	switch (class_id) {
	case 0x0302: /* 3D controller */
	case 0x0b40: /* co-processor */
	case 0x1200: /* processing accelerator */
		return true;
	case 0x0300: /* VGA */
	case 0x0380: { /* other display controller */
		const struct vendor *v = vendor_find(vendor_id);
		if (!v || !v->vga_compute)
			return false;
		for (size_t i = 0; i < sizeof not_compute / sizeof not_compute[0]; i++)
			if (not_compute[i].vendor == vendor_id && not_compute[i].device == device_id)
				return false;
		return true;
	}
	default:
		return false;
	}
}

const char *xp_pci_class_name(unsigned class_id)
{
	for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
		if (classes[i].cls == class_id)
			return classes[i].name;
	/* Fall back to the base class so that the tree still says something useful. */
	for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++)
		if (bases[i].cls == class_id >> 8)
			return bases[i].name;
	return NULL;
}
