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
	bool vga_compute; /* its VGA-class (0300) functions are compute devices */
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
	{0x8086, "Intel", false}, /* its VGA functions are integrated graphics; 0380 is GPU Max/Flex */
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
		/* Data-centre GPUs without a display engine report 0380 whoever makes them. */
		if (!v || (class_id == 0x0300 && !v->vga_compute))
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
