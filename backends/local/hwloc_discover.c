/* hwloc_discover.c: builds a node from an hwloc topology: CPUs, NUMA, memory,
 * the PCI tree, NICs, accelerators and their PCIe link matrix. */
#include "local.h"

#include <errno.h>
#include <limits.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "local/hwloc_xml.h"
#include "local/pci_links.h"
#include "normalize.h"
#include "pci_ids.h"

static char *cpuset_list(hwloc_const_bitmap_t set)
{
	char *s = NULL;
	if (hwloc_bitmap_list_asprintf(&s, set) < 0 || !s)
		return xp_strdup("");
	char *d = xp_strdup(s);
	free(s);
	return d;
}

static void bus_id(hwloc_obj_t o, char *buf, size_t len)
{
	snprintf(buf, len, "%04x:%02x:%02x.%01x", o->attr->pcidev.domain, o->attr->pcidev.bus,
		 o->attr->pcidev.dev, o->attr->pcidev.func);
}

/* The NUMA domain a PCI object is local to: the one NUMA node in its nearest
 * non-I/O ancestor's nodeset, or -1 when that ancestor spans several. */
static int pci_numa(hwloc_topology_t topo, hwloc_obj_t o)
{
	hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, o);
	if (!anc || !anc->nodeset || hwloc_bitmap_weight(anc->nodeset) != 1)
		return -1;
	return hwloc_bitmap_first(anc->nodeset);
}

static bool osdev_is(hwloc_obj_t o, hwloc_obj_osdev_type_t t)
{
#if HWLOC_API_VERSION >= 0x00030000
	/* hwloc 3 turned the OS device type into a bit mask. */
	return (o->attr->osdev.types & t) != 0;
#else
	return o->attr->osdev.type == t;
#endif
}

/* An OS index as the model keeps it: hwloc marks unknown ones with
 * HWLOC_UNKNOWN_INDEX; the logical index is then the best stable number. */
static int os_id(hwloc_obj_t o)
{
	if (o->os_index == HWLOC_UNKNOWN_INDEX || o->os_index > 65535)
		return (int)o->logical_index;
	return (int)o->os_index;
}

static int package_of(hwloc_topology_t topo, hwloc_const_cpuset_t set)
{
	if (!set || hwloc_bitmap_iszero(set))
		return -1;
	hwloc_obj_t p = NULL;
	while ((p = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PACKAGE, p)) != NULL)
		if (hwloc_bitmap_isincluded(set, p->cpuset))
			return os_id(p);
	return -1;
}

static void discover_cpus(hwloc_topology_t topo, struct xp_node *n)
{
	n->packages_n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
	n->cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
	n->pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(topo);
	n->pus_allowed = allowed ? hwloc_bitmap_weight(allowed) : n->pus;
	hwloc_obj_t root = hwloc_get_root_obj(topo);
	n->memory_mib = (int64_t)(root->total_memory >> 20);

	hwloc_obj_t p = NULL;
	while ((p = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PACKAGE, p)) != NULL) {
		struct xp_package *pk = xp_node_add_package(n);
		pk->id = os_id(p);
		pk->model = xp_strdup(hwloc_obj_get_info_by_name(p, "CPUModel"));
		pk->cores = hwloc_get_nbobjs_inside_cpuset_by_type(topo, p->cpuset, HWLOC_OBJ_CORE);
		pk->pus = hwloc_get_nbobjs_inside_cpuset_by_type(topo, p->cpuset, HWLOC_OBJ_PU);
		pk->cpus = cpuset_list(p->cpuset);
		if (!n->cpu_model && pk->model)
			n->cpu_model = xp_strdup(pk->model);
	}
	hwloc_obj_t m = NULL;
	while ((m = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, m)) != NULL) {
		struct xp_numa *d = xp_node_add_numa(n);
		d->id = os_id(m);
		d->memory_mib = (int64_t)(m->attr->numanode.local_memory >> 20);
		d->cpus = cpuset_list(m->cpuset);
		d->package = package_of(topo, m->cpuset);
	}
}

/* Collects the names of the OS devices under a PCI function. */
static void os_devices(hwloc_obj_t pci, char ***v, size_t *nv)
{
	for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling)
		if (c->type == HWLOC_OBJ_OS_DEVICE && c->name)
			xp_strv_add(v, nv, c->name);
}

/* The model name of an accelerator: a runtime's GPUModel beats the PCI database
 * name, which beats the bare ids. */
static char *accel_model(struct xp_node *n, hwloc_obj_t pci, const char *bus)
{
	const char *d = hwloc_obj_get_info_by_name(pci, "PCIDevice");
	for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
		const char *m = c->type == HWLOC_OBJ_OS_DEVICE ? hwloc_obj_get_info_by_name(c, "GPUModel") : NULL;
		if (!m || !*m)
			continue;
		/* Two sources, one device: the PCI database by the device id, the runtime by asking
		 * the board. When they name different products, say so (the runtime's name is kept). */
		if (d && xp_normalize_names_disagree(d, m)) {
			char *w = xp_asprintf("ACC%zu %s: PCI id %04x:%04x is %s, the runtime (%s) says %s", n->n_devices - 1,
					      bus, pci->attr->pcidev.vendor_id, pci->attr->pcidev.device_id, d,
					      c->name ? c->name : "hwloc", m);
			xp_strv_add_once(&n->warnings, &n->n_warnings, w);
			free(w);
		}
		return xp_strdup(m);
	}
	if (d && *d)
		return xp_strdup(d);
	return xp_asprintf("[%04x:%04x]", pci->attr->pcidev.vendor_id, pci->attr->pcidev.device_id);
}

/* Device memory as a runtime reported it through hwloc (KiB in the info), or -1. */
static int64_t accel_memory(hwloc_obj_t pci)
{
	static const char *const keys[] = {"CUDAGlobalMemorySize", "OpenCLGlobalMemorySize"};
	for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
		if (c->type != HWLOC_OBJ_OS_DEVICE)
			continue;
		for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
			const char *v = hwloc_obj_get_info_by_name(c, keys[k]);
			if (!v)
				continue;
			char *end;
			errno = 0;
			unsigned long long kib = strtoull(v, &end, 10);
			if (!errno && end != v && !*end)
				return (int64_t)(kib >> 10);
		}
	}
	return -1;
}

static void add_accelerator(struct xp_node *n, hwloc_obj_t o, const char *bus, struct xp_pci *p)
{
	struct xp_device *d = xp_node_add_device(n);
	unsigned vid = o->attr->pcidev.vendor_id;
	const char *vname = xp_pci_vendor_name(vid);
	if (!vname)
		vname = hwloc_obj_get_info_by_name(o, "PCIVendor");
	d->vendor = vname ? xp_strdup(vname) : xp_asprintf("0x%04x", vid);
	d->model = accel_model(n, o, bus);
	d->pci_bus_id = xp_strdup(bus);
	d->pci_id = xp_strdup(p->pci_id);
	d->pci_class = p->pci_class;
	d->numa = p->numa;
	d->memory_mib = accel_memory(o);
	xp_pci_path(o, &d->pci_path, &d->n_pci_path);
	os_devices(o, &d->os_devices, &d->n_os_devices);
	/* Until an adapter knows better, the PCIe root port is the affinity group:
	 * devices below one root port talk without crossing the host bridge. */
	if (d->n_pci_path)
		d->affinity_group = xp_asprintf("pcie:%s", d->pci_path[0]);
	p->accel = d->index;
}

static struct xp_nic *nic_for(struct xp_node *n, const char *bus)
{
	for (size_t i = 0; i < n->n_nics; i++)
		if (n->nics[i].pci_bus_id && strcmp(n->nics[i].pci_bus_id, bus) == 0)
			return &n->nics[i];
	return NULL;
}

static void add_nics(struct xp_node *n, hwloc_obj_t o, const char *bus, int numa)
{
	/* Network interfaces first, so that the RDMA device then joins the right one. */
	for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling) {
		if (c->type != HWLOC_OBJ_OS_DEVICE || !c->name || !osdev_is(c, HWLOC_OBJ_OSDEV_NETWORK))
			continue;
		struct xp_nic *nic = xp_node_add_nic(n);
		nic->name = xp_strdup(c->name);
		nic->pci_bus_id = xp_strdup(bus);
		nic->numa = numa;
		nic->address = xp_strdup(hwloc_obj_get_info_by_name(c, "Address"));
	}
	/* An RDMA device serves every interface of its function (eth2 and the IPoIB
	 * ib0 of one ConnectX port both sit on mlx4_0). */
	for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling) {
		if (c->type != HWLOC_OBJ_OS_DEVICE || !c->name ||
		    !osdev_is(c, HWLOC_OBJ_OSDEV_OPENFABRICS))
			continue;
		if (!nic_for(n, bus)) {
			struct xp_nic *nic = xp_node_add_nic(n);
			nic->name = xp_strdup(c->name);
			nic->pci_bus_id = xp_strdup(bus);
			nic->numa = numa;
			nic->address = xp_strdup(hwloc_obj_get_info_by_name(c, "NodeGUID"));
		}
		for (size_t i = 0; i < n->n_nics; i++) {
			struct xp_nic *nic = &n->nics[i];
			if (nic->pci_bus_id && strcmp(nic->pci_bus_id, bus) == 0 && !nic->rdma)
				nic->rdma = xp_strdup(c->name);
		}
	}
}

static void discover_pci(hwloc_topology_t topo, struct xp_node *n, hwloc_obj_t **accel_objs)
{
	size_t cap = 0;
	*accel_objs = NULL;
	hwloc_obj_t o = NULL;
	while ((o = hwloc_get_next_pcidev(topo, o)) != NULL) {
		char bus[32];
		bus_id(o, bus, sizeof bus);
		struct xp_pci *p = xp_node_add_pci(n);
		p->bus_id = xp_strdup(bus);
		p->pci_id = xp_asprintf("%04x:%04x", o->attr->pcidev.vendor_id, o->attr->pcidev.device_id);
		p->pci_class = o->attr->pcidev.class_id;
		const char *pv = hwloc_obj_get_info_by_name(o, "PCIVendor");
		const char *pd = hwloc_obj_get_info_by_name(o, "PCIDevice");
		if (pv && pd)
			p->name = xp_asprintf("%s %s", pv, pd);
		else if (pd || pv)
			p->name = xp_strdup(pd ? pd : pv);
		p->numa = pci_numa(topo, o);
		os_devices(o, &p->os_devices, &p->n_os_devices);
		add_nics(n, o, bus, p->numa);
		if (xp_pci_is_accelerator(o->attr->pcidev.vendor_id, o->attr->pcidev.device_id,
					  o->attr->pcidev.class_id) &&
		    n->n_devices < XP_MAX_DEVICES) {
			xp_grow(accel_objs, sizeof **accel_objs, n->n_devices, &cap);
			(*accel_objs)[n->n_devices] = o;
			add_accelerator(n, o, bus, p);
		}
	}
}

/* Facts labels: what discovery knows for sure, for selectors and the matrix. */
static void set_facts(hwloc_topology_t topo, struct xp_node *n)
{
	hwloc_obj_t root = hwloc_get_root_obj(topo);
	const char *arch = hwloc_obj_get_info_by_name(root, "Architecture");
	if (arch)
		xp_labels_set(&n->facts, "arch", arch);
	const char *os = hwloc_obj_get_info_by_name(root, "OSName");
	const char *rel = hwloc_obj_get_info_by_name(root, "OSRelease");
	if (os) {
		char *v = rel ? xp_asprintf("%s %s", os, rel) : xp_strdup(os);
		xp_labels_set(&n->facts, "os", v);
		free(v);
	}
	if (n->cpu_model)
		xp_labels_set(&n->facts, "cpu.model", n->cpu_model);
	char cnt[32];
	snprintf(cnt, sizeof cnt, "%zu", n->n_devices);
	xp_labels_set(&n->facts, "accelerator.count", cnt);
	if (n->n_devices) {
		/* The vendor and model when the node is homogeneous, "mixed" otherwise. */
		const char *v = n->devices[0].vendor, *m = n->devices[0].model;
		for (size_t i = 1; i < n->n_devices; i++) {
			if (v && strcmp(v, n->devices[i].vendor) != 0)
				v = "mixed";
			if (m && strcmp(m, n->devices[i].model) != 0)
				m = "mixed";
		}
		xp_labels_set(&n->facts, "accelerator.vendor", v);
		xp_labels_set(&n->facts, "accelerator.model", m);
	}
}

/* The node's name: the host name hwloc recorded, else this host's (live), else
 * the XML file's base name without its extension. */
static char *node_name(hwloc_topology_t topo, const char *xml)
{
	const char *h = hwloc_obj_get_info_by_name(hwloc_get_root_obj(topo), "HostName");
	if (h && *h)
		return xp_strdup(h);
	if (!xml) {
		char buf[256];
		if (gethostname(buf, sizeof buf) == 0) {
			buf[sizeof buf - 1] = '\0';
			return xp_strdup(buf);
		}
		return xp_strdup("localhost");
	}
	const char *b = strrchr(xml, '/');
	b = b ? b + 1 : xml;
	size_t len = strlen(b);
	if (len > 4 && strcmp(b + len - 4, ".xml") == 0)
		len -= 4;
	return len ? xp_strndup(b, len) : xp_strdup("node");
}

struct xp_node *xp_local_discover(const struct xp_local_opts *opts, struct xp_err *err)
{
	const char *xml = opts ? opts->topology_xml : NULL;
	/* hwloc honours HWLOC_XMLFILE by itself; check it the same way for a clear error. */
	const char *env_xml = getenv("HWLOC_XMLFILE");
	const char *src = xml ? xml : (env_xml && *env_xml ? env_xml : NULL);
	/* Read the file ourselves: one size limit, clear messages, and pipes work too. */
	size_t xml_len = 0;
	char *xml_text = NULL;
	if (xml && opts->topology_text) {
		xml_len = opts->topology_len;
		xml_text = xp_malloc(xml_len + 1);
		memcpy(xml_text, opts->topology_text, xml_len); /* a NUL inside is the check's to refuse */
		xml_text[xml_len] = '\0';
	} else if (src && !(xml_text = xp_read_file(src, XP_TOPOLOGY_MAX_BYTES, &xml_len, err))) {
		return NULL;
	}
	/* The file may come from another site: refuse what libhwloc would crash on, and give
	 * hwloc the document as the check read it, never the file itself. */
	char *checked = NULL;
	size_t checked_len = 0;
	int bad = src ? xp_hwloc_xml_check(src, xml_text, xml_len, &checked, &checked_len, err) : 0;
	free(xml_text);
	if (bad < 0)
		return NULL;
	xp_hwloc_no_libxml();

	hwloc_topology_t topo;
	if (hwloc_topology_init(&topo) < 0) {
		xp_errf(err, "hwloc: cannot initialise a topology");
		free(checked);
		return NULL;
	}
	/* Include disallowed CPUs: the inventory describes the machine, not our cgroup;
	 * the allowed count is kept beside it. */
	hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
	hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PCI_DEVICE, HWLOC_TYPE_FILTER_KEEP_ALL);
	hwloc_topology_set_type_filter(topo, HWLOC_OBJ_BRIDGE, HWLOC_TYPE_FILTER_KEEP_ALL);
	hwloc_topology_set_type_filter(topo, HWLOC_OBJ_OS_DEVICE, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	/* hwloc reports what it finds wrong on stderr, with text of the file in it (the host
	 * and process names of the out-of-order load box): captured for the load and turned
	 * into the node's warnings, or into the error when the load fails, masked. Not
	 * HWLOC_HIDE_ERRORS: what hwloc says about a file (an out-of-order load means the
	 * topology it built may be wrong) is for the operator to see, and setting the
	 * environment is not safe once the console's threads run. The console loads in a
	 * worker thread while ncurses draws to fd 1: fd 2 pointing elsewhere for the load
	 * hides nothing of the screen, and anything another thread writes to stderr
	 * meanwhile becomes one of these messages rather than reach the terminal raw. */
	struct xp_hwloc_capture cap;
	if (xp_hwloc_capture_begin(&cap, err) < 0) {
		hwloc_topology_destroy(topo);
		free(checked);
		return NULL;
	}
	int loaded = -1, set_errno = 0;
	/* The environment's file goes the same way: left to itself, hwloc would silently
	 * fall back to the live machine when it cannot parse it. */
	if (src && hwloc_topology_set_xmlbuffer(topo, checked, (int)checked_len + 1) < 0)
		set_errno = errno ? errno : EINVAL;
	else
		loaded = hwloc_topology_load(topo);
	int load_errno = errno;
	char **said = NULL;
	size_t n_said = 0;
	xp_hwloc_capture_end(&cap, &said, &n_said);
	xp_hwloc_said_again(checked, checked_len, &said, &n_said);
	free(checked);
	if (set_errno)
		xp_errf(err, "%s: cannot use as an hwloc XML topology: %s", src, strerror(set_errno));
	else if (loaded < 0 && src)
		xp_errf(err, "%s: not a valid hwloc XML topology%s%s", src, n_said ? ": " : "", n_said ? said[0] : "");
	else if (loaded < 0)
		xp_errf(err, "hwloc: cannot discover this machine: %s%s%s", strerror(load_errno), n_said ? ": " : "",
			n_said ? said[0] : "");
	if (loaded < 0) {
		xp_strv_free(said, n_said);
		hwloc_topology_destroy(topo);
		return NULL;
	}

	char *name = node_name(topo, src);
	struct xp_node *n = xp_node_new(name);
	free(name);
	n->source = src ? xp_asprintf("hwloc-xml:%s", src) : xp_strdup("local");
	discover_cpus(topo, n);
	hwloc_obj_t *accel = NULL;
	discover_pci(topo, n, &accel);
	xp_node_links_reset(n);
	for (size_t a = 0; a < n->n_devices; a++)
		for (size_t b = a + 1; b < n->n_devices; b++) {
			struct xp_link l = {xp_pci_link_class(accel[a], accel[b]), 0};
			*xp_node_link(n, a, b) = l;
			*xp_node_link(n, b, a) = l;
		}
	free(accel);
	set_facts(topo, n);
	for (size_t i = 0; i < n_said; i++)
		xp_strv_add_once(&n->warnings, &n->n_warnings, said[i]);
	xp_strv_free(said, n_said);
	hwloc_topology_destroy(topo);
	xp_node_clean(n);
	return n;
}
