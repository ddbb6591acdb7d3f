/* check_discovery.c: xp_local_discover against every hwloc XML fixture.
 *
 * The expected values come from an oracle that reads the same XML with libxml2
 * and walks the <object> elements itself, so a test fails when discovery and the
 * file disagree, not when discovery disagrees with itself. hwloc is never called
 * here. Link classes between accelerators are worked out by hand from the XML
 * structure and written down next to each assertion. */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <dlfcn.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "local/local.h"
#include "local/pci_links.h"
#include "model.h"
#include "model_json.h"
#include "suitelib.h"
#include "testlib.h"

/* ---- fixture list ------------------------------------------------------ */

/* The hwloc fixtures, found once when the suite is built. Fixed storage, so
 * that nothing is left allocated for LeakSanitizer to see. */
#define MAX_FIXTURES 64
static char fixture_names[MAX_FIXTURES][256];
static int n_fixtures;

static int name_cmp(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

/* Finds the fixtures and returns how many (the loop test's count). */
static int scan_fixtures(void)
{
	n_fixtures = 0;
	DIR *d = opendir(xp_fixture("hwloc"));
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL && n_fixtures < MAX_FIXTURES) {
		size_t len = strlen(e->d_name);
		if (len <= 4 || len >= sizeof fixture_names[0] || strcmp(e->d_name + len - 4, ".xml") != 0)
			continue;
		memcpy(fixture_names[n_fixtures++], e->d_name, len + 1);
	}
	closedir(d);
	/* readdir order is arbitrary; sorted, the loop index names the same file every run. */
	qsort(fixture_names, (size_t)n_fixtures, sizeof fixture_names[0], name_cmp);
	return n_fixtures;
}

/* Copies the fixture path: xp_fixture returns a static buffer that the next call reuses. */
static char *fixture_path(const char *name)
{
	char rel[300];
	snprintf(rel, sizeof rel, "hwloc/%s", name);
	return strdup(xp_fixture(rel));
}

/* ---- assertions that name the fixture ---------------------------------- */

#define XEQ(fx, what, got, want)                                                              \
	do {                                                                                  \
		long long got_ = (long long)(got), want_ = (long long)(want);                 \
		ck_assert_msg(got_ == want_, "%s: %s is %lld, expected %lld", (fx), (what),   \
			      got_, want_);                                                   \
	} while (0)

#define XSTREQ(fx, what, got, want)                                                           \
	do {                                                                                  \
		const char *gots_ = (got), *wants_ = (want);                                  \
		ck_assert_msg(gots_ && strcmp(gots_, wants_) == 0,                            \
			      "%s: %s is \"%s\", expected \"%s\"", (fx), (what),              \
			      gots_ ? gots_ : "(null)", wants_);                              \
	} while (0)

/* ---- hwloc bitmaps as written in XML ----------------------------------- */

/* hwloc writes a bitmap as comma-separated 32-bit hex words, most significant
 * first ("0x000000ff,0xffffffff"), an empty word for zero ("0xff,,0x0") and
 * "0xf...f" leading an infinite set. */
#define BM_WORDS 64
struct bm {
	uint32_t w[BM_WORDS]; /* w[0] holds bits 0-31 */
	bool inf;             /* every bit above the explicit words is set */
};

/* Parses s into b; false when s is not a bitmap hwloc could have written. */
static bool bm_parse(const char *s, struct bm *b)
{
	memset(b, 0, sizeof *b);
	if (strncmp(s, "0xf...f", 7) == 0) {
		b->inf = true;
		s += 7;
		if (*s == '\0')
			return true;
		if (*s++ != ',')
			return false;
	}
	size_t words = 1;
	for (const char *p = s; *p; p++)
		words += *p == ',';
	if (words > BM_WORDS)
		return false;
	for (size_t k = 0; k < words; k++) {
		/* hwloc leaves zero words out between commas: "0x000000ff,,0x0". */
		if (*s == ',' || (*s == '\0' && words > 1)) {
			if (*s == ',')
				s++;
			continue;
		}
		if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
			return false;
		s += 2;
		uint32_t v = 0;
		int digits = 0;
		for (; *s && *s != ','; s++, digits++) {
			int h = xp_hex_digit(*s);
			if (h < 0 || digits >= 8)
				return false;
			v = v << 4 | (uint32_t)h;
		}
		if (!digits)
			return false;
		b->w[words - 1 - k] = v;
		if (*s == ',')
			s++;
	}
	return true;
}

/* Number of set bits, -1 for an infinite set. */
static int bm_weight(const struct bm *b)
{
	if (b->inf)
		return -1;
	int n = 0;
	for (int i = 0; i < BM_WORDS; i++)
		n += __builtin_popcount(b->w[i]);
	return n;
}

static bool bm_isset(const struct bm *b, int bit)
{
	return (b->w[bit / 32] >> (bit % 32)) & 1u;
}

/* Lowest set bit, -1 when empty. */
static int bm_first(const struct bm *b)
{
	for (int i = 0; i < BM_WORDS * 32; i++)
		if (bm_isset(b, i))
			return i;
	return -1;
}

static bool bm_iszero(const struct bm *b)
{
	return bm_weight(b) == 0;
}

static bool bm_included(const struct bm *sub, const struct bm *super)
{
	if (sub->inf && !super->inf)
		return false;
	for (int i = 0; i < BM_WORDS; i++)
		if (sub->w[i] & ~super->w[i])
			return false;
	return true;
}

/* Writes a finite bitmap as hwloc's list syntax ("0-7,16-23") into buf. */
static void bm_list(const struct bm *b, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = '\0';
	for (int i = 0; i < BM_WORDS * 32; i++) {
		if (!bm_isset(b, i))
			continue;
		int j = i;
		while (j + 1 < BM_WORDS * 32 && bm_isset(b, j + 1))
			j++;
		int k = j == i ? snprintf(buf + off, len - off, "%s%d", off ? "," : "", i)
			       : snprintf(buf + off, len - off, "%s%d-%d", off ? "," : "", i, j);
		if (k < 0 || (size_t)k >= len - off)
			return;
		off += (size_t)k;
		i = j;
	}
}

/* ---- the oracle: the XML read directly --------------------------------- */

#define OX_MAX 1024

struct ox_numa {
	int id;
	unsigned long long mem; /* bytes */
	struct bm cpuset;
};

struct ox_pkg {
	int id;
	int cores, pus;
	struct bm cpuset;
};

struct ox_pci {
	char bus[32];
	char pci_id[16]; /* "vvvv:dddd" */
	unsigned cls, vendor, device;
	int numa;
	bool accel;
	int n_net, n_of; /* network and OpenFabrics OS devices directly below */
	bool matched;    /* used while pairing with the discovered list */
};

struct oracle {
	int packages, cores, pus;
	int allowed; /* weight of the root's allowed_cpuset, -1 when absent */
	unsigned long long mem;
	struct ox_numa numa[OX_MAX];
	size_t n_numa;
	struct ox_pkg pkg[OX_MAX];
	size_t n_pkg;
	struct ox_pci pci[OX_MAX];
	size_t n_pci;
	int netdevs; /* OSDev osdev_type="2" anywhere */
	int nics;    /* NICs discovery should report */
	char host[256];
	const char *fx; /* fixture name, for messages */
};

/* Copies attribute name of node into buf; false when absent. */
static bool attr(xmlNodePtr node, const char *name, char *buf, size_t len)
{
	xmlChar *v = xmlGetProp(node, BAD_CAST name);
	if (!v)
		return false;
	size_t n = strlen((const char *)v);
	ck_assert_msg(n < len, "attribute %s too long (%zu bytes)", name, n);
	memcpy(buf, v, n + 1);
	xmlFree(v);
	return true;
}

static bool is_object(xmlNodePtr n)
{
	return n && n->type == XML_ELEMENT_NODE && xmlStrEqual(n->name, BAD_CAST "object");
}

static bool type_is(xmlNodePtr n, const char *type)
{
	char t[64];
	return attr(n, "type", t, sizeof t) && strcmp(t, type) == 0;
}

static void obj_bitmap(const struct oracle *o, xmlNodePtr n, const char *name, struct bm *b)
{
	char s[4096];
	ck_assert_msg(attr(n, name, s, sizeof s), "%s: object without %s", o->fx, name);
	ck_assert_msg(bm_parse(s, b), "%s: bad bitmap %s=\"%s\"", o->fx, name, s);
}

/* The NUMA node a PCI function is local to: the nodeset of its first ancestor
 * that is not an I/O object, when that nodeset holds exactly one node. */
static int ox_pci_numa(const struct oracle *o, xmlNodePtr dev)
{
	for (xmlNodePtr p = dev->parent; is_object(p); p = p->parent) {
		if (type_is(p, "Bridge") || type_is(p, "PCIDev") || type_is(p, "OSDev"))
			continue;
		struct bm ns;
		obj_bitmap(o, p, "nodeset", &ns);
		return bm_weight(&ns) == 1 ? bm_first(&ns) : -1;
	}
	return -1;
}

/* The accelerator rule, restated from the design: compute classes always,
 * display classes only for compute vendors, less two on-board server VGAs. */
static bool ox_is_accel(unsigned cls, unsigned vendor, unsigned device)
{
	static const unsigned compute_vendors[] = {0x10de, 0x19e5, 0x1002, 0x1d94, 0xcabc,
						   0x1da3, 0x1e3e, 0x1ed5, 0x1e36, 0x9999,
						   0x1ee0, 0x1d22, 0x1ae0, 0x1d95, 0x1de0};
	if (cls == 0x0302 || cls == 0x0b40 || cls == 0x1200) /* 1201 is SDXI, a data mover */
		return true;
	if (cls != 0x0300 && cls != 0x0380)
		return false;
	if (vendor == 0x1002 && (device == 0x515e || device == 0x5159))
		return false;
	if (vendor == 0x8086) /* Intel: 0380 data-centre GPUs yes, 0300 integrated graphics no */
		return cls == 0x0380;
	for (size_t i = 0; i < sizeof compute_vendors / sizeof compute_vendors[0]; i++)
		if (compute_vendors[i] == vendor)
			return true;
	return false;
}

static void ox_add_pci(struct oracle *o, xmlNodePtr n)
{
	ck_assert_msg(o->n_pci < OX_MAX, "%s: too many PCI functions", o->fx);
	struct ox_pci *p = &o->pci[o->n_pci++];
	char type[256];
	ck_assert_msg(attr(n, "pci_busid", p->bus, sizeof p->bus), "%s: PCIDev without pci_busid", o->fx);
	ck_assert_msg(attr(n, "pci_type", type, sizeof type), "%s: PCIDev %s without pci_type", o->fx,
		      p->bus);
	/* "CCCC [vvvv:dddd] [ssss:ssss] rr": class, then vendor:device. */
	ck_assert_msg(sscanf(type, "%4x [%4x:%4x]", &p->cls, &p->vendor, &p->device) == 3,
		      "%s: cannot read pci_type \"%s\"", o->fx, type);
	snprintf(p->pci_id, sizeof p->pci_id, "%04x:%04x", p->vendor, p->device);
	p->numa = ox_pci_numa(o, n);
	p->accel = ox_is_accel(p->cls, p->vendor, p->device);
	for (xmlNodePtr c = n->children; c; c = c->next) {
		char ot[16];
		if (!is_object(c) || !type_is(c, "OSDev") || !attr(c, "osdev_type", ot, sizeof ot))
			continue;
		p->n_net += strcmp(ot, "2") == 0;
		p->n_of += strcmp(ot, "3") == 0;
	}
	/* One NIC per network interface; an RDMA device joins the function's first
	 * interface, or stands as a NIC of its own when the function has none. */
	o->nics += p->n_net + (p->n_net == 0 && p->n_of > 0);
}

static void ox_walk(struct oracle *o, xmlNodePtr node, int pkg)
{
	for (xmlNodePtr c = node->children; c; c = c->next) {
		char type[64];
		if (!is_object(c) || !attr(c, "type", type, sizeof type))
			continue;
		int sub = pkg;
		if (strcmp(type, "Package") == 0) {
			ck_assert_msg(o->n_pkg < OX_MAX, "%s: too many packages", o->fx);
			struct ox_pkg *k = &o->pkg[o->n_pkg];
			char idx[32];
			ck_assert_msg(attr(c, "os_index", idx, sizeof idx), "%s: Package without os_index", o->fx);
			k->id = atoi(idx);
			obj_bitmap(o, c, "cpuset", &k->cpuset);
			sub = (int)o->n_pkg++;
			o->packages++;
		} else if (strcmp(type, "Core") == 0) {
			o->cores++;
			if (pkg >= 0)
				o->pkg[pkg].cores++;
		} else if (strcmp(type, "PU") == 0) {
			o->pus++;
			if (pkg >= 0)
				o->pkg[pkg].pus++;
		} else if (strcmp(type, "NUMANode") == 0) {
			ck_assert_msg(o->n_numa < OX_MAX, "%s: too many NUMA nodes", o->fx);
			struct ox_numa *m = &o->numa[o->n_numa++];
			char v[64];
			ck_assert_msg(attr(c, "os_index", v, sizeof v), "%s: NUMANode without os_index", o->fx);
			m->id = atoi(v);
			if (attr(c, "local_memory", v, sizeof v))
				m->mem = strtoull(v, NULL, 10);
			obj_bitmap(o, c, "cpuset", &m->cpuset);
		} else if (strcmp(type, "PCIDev") == 0) {
			ox_add_pci(o, c);
		} else if (strcmp(type, "OSDev") == 0) {
			char ot[16];
			if (attr(c, "osdev_type", ot, sizeof ot) && strcmp(ot, "2") == 0)
				o->netdevs++;
		}
		char v[64];
		if (attr(c, "local_memory", v, sizeof v))
			o->mem += strtoull(v, NULL, 10);
		ox_walk(o, c, sub);
	}
}

/* Reads path into a new oracle; aborts the test when the file does not parse. */
static struct oracle *ox_load(const char *path, const char *fx)
{
	struct oracle *o = calloc(1, sizeof *o);
	ck_assert_ptr_nonnull(o);
	o->fx = fx;
	o->allowed = -1;
	xmlDocPtr doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	ck_assert_msg(doc != NULL, "%s: libxml2 cannot read %s", fx, path);
	xmlNodePtr top = xmlDocGetRootElement(doc);
	ck_assert_msg(top && xmlStrEqual(top->name, BAD_CAST "topology"), "%s: no <topology>", fx);
	xmlNodePtr root = top->children;
	while (root && !is_object(root))
		root = root->next;
	ck_assert_msg(root && type_is(root, "Machine"), "%s: the first object is not a Machine", fx);
	char s[4096];
	if (attr(root, "allowed_cpuset", s, sizeof s)) {
		struct bm b;
		ck_assert_msg(bm_parse(s, &b), "%s: bad allowed_cpuset \"%s\"", fx, s);
		o->allowed = bm_weight(&b);
	}
	for (xmlNodePtr c = root->children; c; c = c->next) {
		char name[64];
		if (c->type == XML_ELEMENT_NODE && xmlStrEqual(c->name, BAD_CAST "info") &&
		    attr(c, "name", name, sizeof name) && strcmp(name, "HostName") == 0)
			attr(c, "value", o->host, sizeof o->host);
	}
	/* The root counts too: walk from the <topology> element. */
	ox_walk(o, top, -1);
	xmlFreeDoc(doc);
	return o;
}

/* ---- discovery helpers ------------------------------------------------- */

static struct xp_node *discover(const char *path)
{
	struct xp_local_opts opts = {path};
	struct xp_err err = {{0}};
	struct xp_node *n = xp_local_discover(&opts, &err);
	ck_assert_msg(n != NULL, "%s: discovery failed: %s", path, err.msg);
	return n;
}

static struct xp_node *discover_fixture(const char *name)
{
	char *path = fixture_path(name);
	struct xp_node *n = discover(path);
	free(path);
	return n;
}

static const struct xp_device *dev_by_bus(const struct xp_node *n, const char *fx, const char *bus)
{
	const struct xp_device *d = xp_node_device_by_bus(n, bus);
	ck_assert_msg(d != NULL, "%s: no accelerator at %s", fx, bus);
	return d;
}

/* The link class between the accelerators at bus ids a and b, checked symmetric. */
static int link_between(const struct xp_node *n, const char *fx, const char *a, const char *b)
{
	const struct xp_device *da = dev_by_bus(n, fx, a), *db = dev_by_bus(n, fx, b);
	int ab = xp_node_link(n, (size_t)da->index, (size_t)db->index)->cls;
	int ba = xp_node_link(n, (size_t)db->index, (size_t)da->index)->cls;
	ck_assert_msg(ab == ba, "%s: link %s-%s is %d one way, %d the other", fx, a, b, ab, ba);
	return ab;
}

static const struct xp_nic *nic_by_name(const struct xp_node *n, const char *name)
{
	for (size_t i = 0; i < n->n_nics; i++)
		if (n->nics[i].name && strcmp(n->nics[i].name, name) == 0)
			return &n->nics[i];
	return NULL;
}

/* ---- every fixture against the oracle ---------------------------------- */

static void check_cpus(const struct xp_node *n, const struct oracle *o)
{
	const char *fx = o->fx;
	XEQ(fx, "packages_n", n->packages_n, o->packages);
	XEQ(fx, "n_packages", n->n_packages, o->packages);
	XEQ(fx, "cores", n->cores, o->cores);
	XEQ(fx, "pus", n->pus, o->pus);
	XEQ(fx, "pus_allowed", n->pus_allowed, o->allowed >= 0 ? o->allowed : o->pus);
	for (size_t i = 0; i < o->n_pkg; i++) {
		const struct ox_pkg *k = &o->pkg[i];
		const struct xp_package *pk = NULL;
		for (size_t j = 0; j < n->n_packages; j++)
			if (n->packages[j].id == k->id)
				pk = &n->packages[j];
		ck_assert_msg(pk != NULL, "%s: package %d missing", fx, k->id);
		char what[64], list[8192];
		snprintf(what, sizeof what, "package %d cores", k->id);
		XEQ(fx, what, pk->cores, k->cores);
		snprintf(what, sizeof what, "package %d pus", k->id);
		XEQ(fx, what, pk->pus, k->pus);
		snprintf(what, sizeof what, "package %d cpus", k->id);
		bm_list(&k->cpuset, list, sizeof list);
		XSTREQ(fx, what, pk->cpus, list);
	}
}

static void check_numa(const struct xp_node *n, const struct oracle *o)
{
	const char *fx = o->fx;
	XEQ(fx, "n_numa", n->n_numa, o->n_numa);
	XEQ(fx, "memory_mib", n->memory_mib, (long long)(o->mem >> 20));
	for (size_t i = 0; i < o->n_numa; i++) {
		const struct ox_numa *m = &o->numa[i];
		const struct xp_numa *d = xp_node_numa_by_id(n, m->id);
		ck_assert_msg(d != NULL, "%s: NUMA node %d missing", fx, m->id);
		char what[64], list[8192];
		snprintf(what, sizeof what, "NUMA %d memory_mib", m->id);
		XEQ(fx, what, d->memory_mib, (long long)(m->mem >> 20));
		snprintf(what, sizeof what, "NUMA %d cpus", m->id);
		bm_list(&m->cpuset, list, sizeof list);
		XSTREQ(fx, what, d->cpus, list);
		/* The package is the one whose cpuset holds the node's, -1 for none or a
		 * CPU-less node. */
		int want = -1;
		for (size_t k = 0; k < o->n_pkg && !bm_iszero(&m->cpuset); k++)
			if (bm_included(&m->cpuset, &o->pkg[k].cpuset)) {
				want = o->pkg[k].id;
				break;
			}
		snprintf(what, sizeof what, "NUMA %d package", m->id);
		XEQ(fx, what, d->package, want);
	}
}

static void check_pci(const struct xp_node *n, struct oracle *o)
{
	const char *fx = o->fx;
	XEQ(fx, "n_pci", n->n_pci, o->n_pci);
	size_t n_accel = 0;
	bool *used = calloc(n->n_pci + 1, sizeof *used);
	ck_assert_ptr_nonnull(used);
	for (size_t i = 0; i < o->n_pci; i++) {
		struct ox_pci *p = &o->pci[i];
		/* Bus ids are not unique in every fixture (wholeio has two 0000:04:00.0),
		 * so pair on bus id and vendor:device, each discovered entry once. */
		const struct xp_pci *q = NULL;
		for (size_t j = 0; j < n->n_pci && !q; j++)
			if (!used[j] && n->pci[j].bus_id && strcmp(n->pci[j].bus_id, p->bus) == 0 &&
			    n->pci[j].pci_id && strcmp(n->pci[j].pci_id, p->pci_id) == 0) {
				used[j] = true;
				q = &n->pci[j];
			}
		ck_assert_msg(q != NULL, "%s: PCI %s [%s] missing from node->pci", fx, p->bus, p->pci_id);
		char what[96];
		snprintf(what, sizeof what, "PCI %s class", p->bus);
		XEQ(fx, what, q->pci_class, p->cls);
		snprintf(what, sizeof what, "PCI %s numa", p->bus);
		XEQ(fx, what, q->numa, p->numa);
		snprintf(what, sizeof what, "PCI %s is an accelerator", p->bus);
		XEQ(fx, what, q->accel >= 0, p->accel);
		if (!p->accel)
			continue;
		n_accel++;
		ck_assert_msg((size_t)q->accel < n->n_devices, "%s: PCI %s accel index %d out of range", fx,
			      p->bus, q->accel);
		const struct xp_device *d = &n->devices[q->accel];
		snprintf(what, sizeof what, "accelerator at PCI %s bus id", p->bus);
		XSTREQ(fx, what, d->pci_bus_id, p->bus);
		snprintf(what, sizeof what, "accelerator %s pci_id", p->bus);
		XSTREQ(fx, what, d->pci_id, p->pci_id);
		snprintf(what, sizeof what, "accelerator %s class", p->bus);
		XEQ(fx, what, d->pci_class, p->cls);
		snprintf(what, sizeof what, "accelerator %s numa", p->bus);
		XEQ(fx, what, d->numa, p->numa);
	}
	free(used);
	XEQ(fx, "n_devices", n->n_devices, n_accel);
	for (size_t i = 0; i < n->n_devices; i++)
		XEQ(fx, "device index", n->devices[i].index, i);
}

static void check_links(const struct xp_node *n, const char *fx)
{
	size_t k = n->n_devices;
	if (!k) {
		ck_assert_msg(n->links == NULL, "%s: a link matrix without devices", fx);
		return;
	}
	ck_assert_msg(n->links != NULL, "%s: %zu devices and no link matrix", fx, k);
	for (size_t a = 0; a < k; a++)
		for (size_t b = 0; b < k; b++) {
			int c = xp_node_link(n, a, b)->cls;
			if (a == b) {
				ck_assert_msg(c == XP_LINK_SELF, "%s: link %zu-%zu is %d, expected X", fx, a, b, c);
				continue;
			}
			ck_assert_msg(c == XP_LINK_PIX || c == XP_LINK_PXB || c == XP_LINK_PHB ||
					      c == XP_LINK_NODE || c == XP_LINK_SYS,
				      "%s: link %zu-%zu is %d, not a PCIe class", fx, a, b, c);
			ck_assert_msg(c == xp_node_link(n, b, a)->cls, "%s: link matrix not symmetric at %zu,%zu",
				      fx, a, b);
		}
}

START_TEST(test_fixture)
{
	const char *fx = fixture_names[_i];
	char *path = fixture_path(fx);
	struct oracle *o = ox_load(path, fx);
	struct xp_node *n = discover(path);

	check_cpus(n, o);
	check_numa(n, o);
	check_pci(n, o);
	check_links(n, fx);
	XEQ(fx, "n_nics", n->n_nics, o->nics);

	char base[256];
	snprintf(base, sizeof base, "%.*s", (int)(strlen(fx) - 4), fx);
	XSTREQ(fx, "name", n->name, o->host[0] ? o->host : base);
	char *src = NULL;
	ck_assert_int_ge(asprintf(&src, "hwloc-xml:%s", path), 0);
	XSTREQ(fx, "source", n->source, src);
	free(src);

	/* What discovery writes, the snapshot reader takes back unchanged. */
	struct xp_cluster *c = xp_cluster_new();
	xp_cluster_add(c, n);
	json_t *j1 = xp_cluster_to_json(c);
	char *t1 = json_dumps(j1, JSON_COMPACT);
	struct xp_err err = {{0}};
	struct xp_cluster *back = xp_cluster_parse(t1, strlen(t1), fx, &err);
	ck_assert_msg(back != NULL, "%s: its own inventory does not read back: %s", fx, err.msg);
	json_t *j2 = xp_cluster_to_json(back);
	char *t2 = json_dumps(j2, JSON_COMPACT);
	ck_assert_msg(strcmp(t1, t2) == 0, "%s: inventory changed on a round trip", fx);
	free(t1);
	free(t2);
	json_decref(j1);
	json_decref(j2);
	xp_cluster_free(back);
	xp_cluster_free(c);
	free(o);
	free(path);
}
END_TEST

/* No fixture has two accelerators meeting below a deeper PCI bridge, so make one:
 * the wholeio machine with ACC3 (0000:84:00.1) moved two bridges further down
 * under root port 0000:80:03.0. ACC2 and ACC3 then meet at the root port with two
 * bridges on ACC3's side: PXB. ACC1 is still PHB to both. */
START_TEST(test_links_pxb)
{
	char *path = fixture_path("32em64t-2n8c2t-pci-wholeio.xml");
	size_t len;
	struct xp_err err = {{0}};
	char *xml = xp_read_file(path, 1 << 24, &len, &err);
	ck_assert_msg(xml != NULL, "%s", err.msg);
	const char *open_dev = "<object type=\"PCIDev\" gp_index=\"138\"";
	char *at = strstr(xml, open_dev);
	ck_assert_ptr_nonnull(at);
	/* The device element ends at the first "</object>" after its OpenCL OS device. */
	char *osdev_end = strstr(at, "</object>");
	ck_assert_ptr_nonnull(osdev_end);
	char *dev_end = strstr(osdev_end + 9, "</object>");
	ck_assert_ptr_nonnull(dev_end);
	dev_end += strlen("</object>");
	static const char b1[] = "<object type=\"Bridge\" gp_index=\"9001\" bridge_type=\"1-1\" depth=\"2\" "
				 "bridge_pci=\"0000:[85-86]\" pci_busid=\"0000:84:00.7\" "
				 "pci_type=\"0604 [10b5:8747] [0000:0000] ca\" pci_link_speed=\"0.000000\">";
	static const char b2[] = "<object type=\"Bridge\" gp_index=\"9002\" bridge_type=\"1-1\" depth=\"3\" "
				 "bridge_pci=\"0000:[86-86]\" pci_busid=\"0000:85:08.0\" "
				 "pci_type=\"0604 [10b5:8747] [0000:0000] ca\" pci_link_speed=\"0.000000\">";
	static const char close2[] = "</object></object>";
	size_t pre = (size_t)(at - xml), body = (size_t)(dev_end - at);
	size_t total = len + sizeof b1 + sizeof b2 + sizeof close2;
	char *out = calloc(1, total);
	memcpy(out, xml, pre);
	strcat(out, b1);
	strcat(out, b2);
	strncat(out, at, body);
	strcat(out, close2);
	strcat(out, dev_end);
	char *tmp = xp_tmpfile(out, strlen(out));
	struct xp_node *n = discover(tmp);
	unlink(tmp);
	ck_assert_uint_eq(n->n_devices, 4);
	ck_assert_int_eq(link_between(n, "pxb", "0000:84:00.0", "0000:84:00.1"), XP_LINK_PXB);
	ck_assert_int_eq(link_between(n, "pxb", "0000:83:00.0", "0000:84:00.1"), XP_LINK_PHB);
	ck_assert_int_eq(link_between(n, "pxb", "0000:83:00.0", "0000:84:00.0"), XP_LINK_PHB);
	const struct xp_device *d3 = dev_by_bus(n, "pxb", "0000:84:00.1");
	ck_assert_uint_eq(d3->n_pci_path, 3);
	ck_assert_str_eq(d3->pci_path[0], "0000:80:03.0");
	ck_assert_str_eq(d3->pci_path[2], "0000:85:08.0");
	xp_node_free(n);
	free(tmp);
	free(out);
	free(xml);
	free(path);
}
END_TEST

/* The list is found at run time; make sure it is not silently empty or short. */
START_TEST(test_fixture_count)
{
	ck_assert_msg(n_fixtures >= 12, "only %d hwloc XML fixtures under %s", n_fixtures,
		      xp_fixture("hwloc"));
}
END_TEST

/* ---- known link pairs, worked out by hand ------------------------------ */

/* 32em64t-2n8c2t-pci-wholeio.xml (host "conan"):
 *   Package 0 > host bridge 0000:[00-05] > root port 0000:00:03.0 > 0000:03:00.0 (0302 Tesla)
 *   Package 1 > host bridge 0000:[80-84] (bridge_type="0-1")
 *                 > root port 0000:80:02.0 > 0000:83:00.0 (0302 Tesla)
 *                 > root port 0000:80:03.0 > 0000:84:00.0 (0302 Tesla) and 0000:84:00.1 (0300 AMD)
 * 84:00.0/84:00.1 meet at root port 80:03.0 with no bridge between either and
 * it: PIX. 83:00.0 meets the 84:00.x functions only at the host bridge: PHB.
 * 03:00.0 is under the other package; they meet at the Machine, whose nodeset
 * has two NUMA nodes: SYS. */
START_TEST(test_links_wholeio)
{
	const char *fx = "32em64t-2n8c2t-pci-wholeio.xml";
	struct xp_node *n = discover_fixture(fx);
	ck_assert_uint_eq(n->n_devices, 4);
	ck_assert_int_eq(link_between(n, fx, "0000:84:00.0", "0000:84:00.1"), XP_LINK_PIX);
	ck_assert_int_eq(link_between(n, fx, "0000:83:00.0", "0000:84:00.0"), XP_LINK_PHB);
	ck_assert_int_eq(link_between(n, fx, "0000:83:00.0", "0000:84:00.1"), XP_LINK_PHB);
	ck_assert_int_eq(link_between(n, fx, "0000:03:00.0", "0000:83:00.0"), XP_LINK_SYS);
	ck_assert_int_eq(link_between(n, fx, "0000:03:00.0", "0000:84:00.0"), XP_LINK_SYS);
	ck_assert_int_eq(link_between(n, fx, "0000:03:00.0", "0000:84:00.1"), XP_LINK_SYS);
	/* NUMA: each host bridge hangs off a Package with a one-node nodeset. */
	ck_assert_int_eq(dev_by_bus(n, fx, "0000:03:00.0")->numa, 0);
	ck_assert_int_eq(dev_by_bus(n, fx, "0000:83:00.0")->numa, 1);
	ck_assert_int_eq(dev_by_bus(n, fx, "0000:84:00.0")->numa, 1);
	ck_assert_int_eq(dev_by_bus(n, fx, "0000:84:00.1")->numa, 1);
	/* The ES-class on-board VGA (Matrox 102b:0532) is not an accelerator. */
	ck_assert_ptr_null(xp_node_device_by_bus(n, "0000:05:03.0"));
	/* 84:00.0 carries cuda0 with GPUModel "Tesla K40m" and 11796032 KiB of memory. */
	const struct xp_device *d = dev_by_bus(n, fx, "0000:84:00.0");
	ck_assert_str_eq(d->model, "Tesla K40m");
	ck_assert_int_eq(d->memory_mib, 11796032 >> 10);
	ck_assert_uint_eq(d->n_pci_path, 1);
	ck_assert_str_eq(d->pci_path[0], "0000:80:03.0");
	xp_node_free(n);
}
END_TEST

/* 24em64t-2n6c2t-pci.xml:
 *   Package 0 > host bridge 0000:[00-0f] > root port 0000:00:07.0 > 0000:06:00.0 (0302 NVIDIA)
 *             (also root port 00:1e.0 > 0000:01:03.0, 1002:515e ES1000: on-board VGA, excluded)
 *   Package 1 > host bridge 0000:[10-1f] > root port 0000:10:03.0 > 0000:14:00.0 (0302 NVIDIA)
 *                                        > root port 0000:10:07.0 > 0000:11:00.0 (0302 NVIDIA)
 * 14:00.0 and 11:00.0 sit under different root ports of one host bridge: PHB.
 * 06:00.0 is in the other package, so either pair crosses the packages: SYS. */
START_TEST(test_links_24em64t)
{
	const char *fx = "24em64t-2n6c2t-pci.xml";
	struct xp_node *n = discover_fixture(fx);
	ck_assert_uint_eq(n->n_devices, 3);
	ck_assert_ptr_null(xp_node_device_by_bus(n, "0000:01:03.0"));
	ck_assert_int_eq(link_between(n, fx, "0000:14:00.0", "0000:11:00.0"), XP_LINK_PHB);
	ck_assert_int_eq(link_between(n, fx, "0000:06:00.0", "0000:14:00.0"), XP_LINK_SYS);
	ck_assert_int_eq(link_between(n, fx, "0000:06:00.0", "0000:11:00.0"), XP_LINK_SYS);
	ck_assert_int_eq(dev_by_bus(n, fx, "0000:06:00.0")->numa, 0);
	ck_assert_int_eq(dev_by_bus(n, fx, "0000:14:00.0")->numa, 1);
	ck_assert_int_eq(dev_by_bus(n, fx, "0000:11:00.0")->numa, 1);
	xp_node_free(n);
}
END_TEST

/* 64intel64-3g2n+2n-irregulargroups+pci.xml: eight packages, five of them in
 * three Groups, PCI domains 0000-0004 each under its own package.
 *   Package os 4 (nodeset 0x10, NUMA 4), not in a group
 *       > host bridge 0002:[00-01] > root port 0002:00:03.0 > 0002:01:00.0 (0300 10de:11ba)
 *   Package os 8 (nodeset 0x80, NUMA 7), not in a group
 *       > host bridge 0004:[00-01] > root port 0004:00:03.0 > 0004:01:00.0 (0300 10de:11ba)
 * They meet only at the Machine (eight NUMA nodes): SYS. NUMA os indexes differ
 * from package os indexes here (package 8 holds NUMA 7), which catches a
 * discovery that reports the package instead of the node. The Matrox G200eR2 at
 * 0000:08:00.0 (0300, vendor 102b) is not an accelerator. */
START_TEST(test_links_64intel64)
{
	const char *fx = "64intel64-3g2n+2n-irregulargroups+pci.xml";
	struct xp_node *n = discover_fixture(fx);
	ck_assert_uint_eq(n->n_devices, 2);
	ck_assert_ptr_null(xp_node_device_by_bus(n, "0000:08:00.0"));
	ck_assert_int_eq(link_between(n, fx, "0002:01:00.0", "0004:01:00.0"), XP_LINK_SYS);
	ck_assert_int_eq(dev_by_bus(n, fx, "0002:01:00.0")->numa, 4);
	ck_assert_int_eq(dev_by_bus(n, fx, "0004:01:00.0")->numa, 7);
	/* allowed_cpuset="0x0000ffff": 16 of the 64 PUs are allowed. */
	ck_assert_int_eq(n->pus, 64);
	ck_assert_int_eq(n->pus_allowed, 16);
	xp_node_free(n);
}
END_TEST

/* No fixture has two accelerators that meet inside one NUMA node above the host
 * bridges (NODE) or at a switch (PIX between downstream ports), so the link rule
 * is also checked on other PCI functions of real fixtures. This calls hwloc
 * directly: it tests pci_links.c, the expected classes come from the XML. */
struct pair {
	const char *a, *b;
	int cls;
};

static void check_pairs(const char *fx, const struct pair *pairs, size_t n)
{
	char *path = fixture_path(fx);
	hwloc_topology_t topo;
	ck_assert_int_eq(hwloc_topology_init(&topo), 0);
	hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PCI_DEVICE, HWLOC_TYPE_FILTER_KEEP_ALL);
	hwloc_topology_set_type_filter(topo, HWLOC_OBJ_BRIDGE, HWLOC_TYPE_FILTER_KEEP_ALL);
	ck_assert_int_eq(hwloc_topology_set_xml(topo, path), 0);
	ck_assert_int_eq(hwloc_topology_load(topo), 0);
	for (size_t i = 0; i < n; i++) {
		hwloc_obj_t a = hwloc_get_pcidev_by_busidstring(topo, pairs[i].a);
		hwloc_obj_t b = hwloc_get_pcidev_by_busidstring(topo, pairs[i].b);
		ck_assert_msg(a && b, "%s: no PCI function %s or %s", fx, pairs[i].a, pairs[i].b);
		int ab = xp_pci_link_class(a, b), ba = xp_pci_link_class(b, a);
		ck_assert_msg(ab == pairs[i].cls && ba == pairs[i].cls, "%s: %s-%s is %d/%d, expected %d",
			      fx, pairs[i].a, pairs[i].b, ab, ba, pairs[i].cls);
	}
	hwloc_topology_destroy(topo);
	free(path);
}

/* Fixtures whose devices xpool does not count, checked by the classes of their PCI function
 * pairs alone; pairs ends at the first with a NULL a. */
static const struct {
	const char *fx;
	struct pair pairs[8];
} other_links[] = {
	/* 96em64t-4n4d3ca2co-pci.xml: four Groups, each one NUMA node with four packages
	 * and two host bridges. Group nodeset=0x1 holds host bridge A (root port 00:1c.0
	 * > 02:00.0/.1 I350-class NICs, root port 00:1e.0 > 01:00.0 VGA) and host bridge
	 * B (root port 03:00.0 > 04:00.0 SCSI). */
	{"96em64t-4n4d3ca2co-pci.xml",
	 {/* two functions of one device below one root port */
	  {"0000:02:00.0", "0000:02:00.1", XP_LINK_PIX},
	  /* root ports 00:1c.0 and 00:1e.0 of host bridge A */
	  {"0000:02:00.0", "0000:01:00.0", XP_LINK_PHB},
	  /* host bridges A and B meet at the Group, whose nodeset is one NUMA node */
	  {"0000:02:00.0", "0000:04:00.0", XP_LINK_NODE},
	  /* Groups nodeset=0x1 and 0x2 meet at the Machine: four NUMA nodes */
	  {"0000:02:00.0", "0000:32:00.0", XP_LINK_SYS},
	  {"0000:04:00.0", "0000:94:00.0", XP_LINK_SYS}}},
	/* 192em64t-24n8c2t.xml, package nodeset=0x10: root port 0002:00:03.0 > switch
	 * upstream port 0002:01:00.0 > downstream ports 0002:02:01.0 (> 03:00.0/.1) and
	 * 0002:02:02.0 (> 04:00.0/.1). Package nodeset=0x1: root port 00:03.2 > 03:00.0
	 * > 04:08.0 > 05:00.0, and root port 00:1c.0 > 07:00.0 > 08:00.0 > 09:00.0 > 0a:00.0. */
	{"192em64t-24n8c2t.xml",
	 {/* one downstream port each side of the switch: nvidia's "same switch" */
	  {"0002:03:00.0", "0002:04:00.0", XP_LINK_PIX},
	  {"0002:03:00.0", "0002:03:00.1", XP_LINK_PIX},
	  /* different root ports of host bridge 0000 */
	  {"0000:05:00.0", "0000:0a:00.0", XP_LINK_PHB},
	  {"0000:01:00.0", "0000:05:00.0", XP_LINK_PHB},
	  /* packages 0x1 and 0x10 */
	  {"0000:05:00.0", "0002:03:00.0", XP_LINK_SYS}}},
	/* 16intel64-manyVFs.xml: Cisco VIC below root port 00:03.0: upstream 06:00.0 >
	 * downstream 07:01.0 > upstream 09:00.0 > downstream ports 0a:00.0 (> 0b:00.x)
	 * and 0a:01.0 (> 0c:00.x). */
	{"16intel64-manyVFs.xml",
	 {{"0000:0b:00.0", "0000:0b:00.3", XP_LINK_PIX},
	  /* meet at upstream port 09:00.0, one downstream port on each side */
	  {"0000:0b:00.0", "0000:0c:00.4", XP_LINK_PIX},
	  /* 02:00.0 hangs off root port 00:01.1: they meet at the host bridge */
	  {"0000:0b:00.0", "0000:02:00.0", XP_LINK_PHB},
	  /* packages 0 and 1 */
	  {"0000:0b:00.0", "0000:88:00.0", XP_LINK_SYS}}},
};

START_TEST(test_links_other)
{
	size_t n = 0;
	while (n < sizeof other_links[_i].pairs / sizeof other_links[_i].pairs[0] && other_links[_i].pairs[n].a)
		n++;
	ck_assert_uint_gt(n, 0);
	check_pairs(other_links[_i].fx, other_links[_i].pairs, n);
}
END_TEST

/* ---- NICs and names ---------------------------------------------------- */

/* wholeio: eth0/eth1 on 0000:81:00.0/.1 (I350, package 1); ib0 and its RDMA
 * device mlx5_0 share the ConnectX-4 function 0000:04:00.0 under root port 80:03.0. */
START_TEST(test_nics_wholeio)
{
	const char *fx = "32em64t-2n8c2t-pci-wholeio.xml";
	struct xp_node *n = discover_fixture(fx);
	ck_assert_uint_eq(n->n_nics, 3);
	const struct xp_nic *e0 = nic_by_name(n, "eth0"), *e1 = nic_by_name(n, "eth1"),
			    *ib = nic_by_name(n, "ib0");
	ck_assert_ptr_nonnull(e0);
	ck_assert_ptr_nonnull(e1);
	ck_assert_ptr_nonnull(ib);
	ck_assert_str_eq(e0->pci_bus_id, "0000:81:00.0");
	ck_assert_str_eq(e1->pci_bus_id, "0000:81:00.1");
	ck_assert_str_eq(e0->address, "00:25:90:95:71:12");
	ck_assert_ptr_null(e0->rdma);
	ck_assert_ptr_null(e1->rdma);
	ck_assert_str_eq(ib->pci_bus_id, "0000:04:00.0");
	ck_assert_ptr_nonnull(ib->rdma);
	ck_assert_str_eq(ib->rdma, "mlx5_0");
	ck_assert_int_eq(e0->numa, 1);
	ck_assert_int_eq(ib->numa, 1);
	/* mlx5_0 joined ib0 rather than standing as a NIC of its own. */
	ck_assert_ptr_null(nic_by_name(n, "mlx5_0"));
	xp_node_free(n);
}
END_TEST

/* manyVFs: every network OS device (eth*) sits on a PCI function, and the usnic_*
 * OpenFabrics devices share functions with an eth, so NICs == osdev_type="2". */
START_TEST(test_nics_manyvfs)
{
	const char *fx = "16intel64-manyVFs.xml";
	char *path = fixture_path(fx);
	struct oracle *o = ox_load(path, fx);
	struct xp_node *n = discover(path);
	ck_assert_int_gt(o->netdevs, 0);
	ck_assert_int_eq((int)n->n_nics, o->netdevs);
	for (size_t i = 0; i < n->n_nics; i++) {
		ck_assert_ptr_nonnull(n->nics[i].name);
		ck_assert_msg(strncmp(n->nics[i].name, "eth", 3) == 0, "%s: NIC %s is not an eth", fx,
			      n->nics[i].name);
		ck_assert_ptr_nonnull(n->nics[i].pci_bus_id);
	}
	const struct xp_nic *e4 = nic_by_name(n, "eth4");
	ck_assert_ptr_nonnull(e4);
	ck_assert_str_eq(e4->pci_bus_id, "0000:0b:00.0");
	ck_assert_ptr_nonnull(e4->rdma);
	ck_assert_str_eq(e4->rdma, "usnic_0");
	xp_node_free(n);
	free(o);
	free(path);
}
END_TEST

START_TEST(test_names)
{
	struct xp_node *n = discover_fixture("32em64t-2n8c2t-pci-wholeio.xml");
	ck_assert_str_eq(n->name, "conan");
	xp_node_free(n);
	/* No HostName info: the file's base name without .xml. */
	n = discover_fixture("16amd64-4distances.xml");
	ck_assert_str_eq(n->name, "16amd64-4distances");
	xp_node_free(n);
}
END_TEST

/* ---- bad input --------------------------------------------------------- */

/* Discovery of path must fail with a message that names the file. With cleanup,
 * path (a temporary file or directory) is removed before asserting, so that a
 * failing test leaves nothing behind (one of them is 65 MiB). */
static void expect_fail(const char *path, const char *what, bool cleanup)
{
	struct xp_local_opts opts = {path};
	struct xp_err err = {{0}};
	struct xp_node *n = xp_local_discover(&opts, &err);
	bool failed = n == NULL;
	xp_node_free(n);
	if (cleanup)
		remove(path);
	ck_assert_msg(failed, "%s: discovery of %s succeeded", what, path);
	ck_assert_msg(strstr(err.msg, path) != NULL, "%s: message \"%s\" does not name %s", what,
		      err.msg, path);
}

START_TEST(test_bad_missing)
{
	expect_fail("/nonexistent/xpool/topology.xml", "missing file", false);
}
END_TEST

START_TEST(test_bad_directory)
{
	char dir[] = "/tmp/xpool-test-dir-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	expect_fail(dir, "directory", true);
}
END_TEST

START_TEST(test_bad_empty)
{
	char *p = xp_tmpfile("", 0);
	expect_fail(p, "empty file", true);
	free(p);
}
END_TEST

START_TEST(test_bad_truncated)
{
	char *fx = fixture_path("32em64t-2n8c2t-pci-wholeio.xml");
	FILE *f = fopen(fx, "rb");
	ck_assert_ptr_nonnull(f);
	char buf[500];
	ck_assert_uint_eq(fread(buf, 1, sizeof buf, f), sizeof buf);
	fclose(f);
	char *p = xp_tmpfile(buf, sizeof buf);
	expect_fail(p, "truncated XML", true);
	free(p);
	free(fx);
}
END_TEST

START_TEST(test_bad_text)
{
	static const char text[] = "this is not XML at all\njust some lines of text\n";
	char *p = xp_tmpfile(text, sizeof text - 1);
	expect_fail(p, "text file", true);
	free(p);
}
END_TEST

/* One MiB over the 64 MiB cap, sparse so that the test costs no disk. */
START_TEST(test_bad_huge)
{
	char *p = xp_tmpfile("<topology>", 10);
	int fd = open(p, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)65 << 20), 0);
	close(fd);
	expect_fail(p, "65 MiB file", true);
	free(p);
}
END_TEST

/* The same cap on a file hwloc would load: a real fixture padded past 64 MiB with
 * comments (small nodes, so libxml2's text-size limit does not reject it first).
 * Without the cap this loads fine, so only the cap makes it fail. */
START_TEST(test_bad_huge_valid)
{
	char *fx = fixture_path("32em64t-2n8c2t-pci-wholeio.xml");
	FILE *f = fopen(fx, "rb");
	ck_assert_ptr_nonnull(f);
	static char xml[1 << 20];
	size_t len = fread(xml, 1, sizeof xml - 1, f);
	fclose(f);
	xml[len] = '\0';
	char *end = strstr(xml, "</topology>");
	ck_assert_ptr_nonnull(end);
	char *p = xp_tmpfile(xml, (size_t)(end - xml));
	f = fopen(p, "ab");
	ck_assert_ptr_nonnull(f);
	static char pad[4096];
	memset(pad, 'x', sizeof pad);
	memcpy(pad, "<!-- ", 5);
	memcpy(pad + sizeof pad - 5, " -->\n", 5);
	for (size_t total = 0; total <= (size_t)65 << 20; total += sizeof pad)
		ck_assert_uint_eq(fwrite(pad, 1, sizeof pad, f), sizeof pad);
	ck_assert_int_gt(fputs(end, f), -1);
	ck_assert_int_eq(fclose(f), 0);
	expect_fail(p, "65 MiB valid XML", true);
	free(p);
	free(fx);
}
END_TEST

/* No topology_xml: hwloc would read HWLOC_XMLFILE by itself, so discovery must
 * check it and say which file is wrong. */
START_TEST(test_bad_env)
{
	const char *missing = "/nonexistent/xpool/env-topology.xml";
	ck_assert_int_eq(setenv("HWLOC_XMLFILE", missing, 1), 0);
	struct xp_local_opts opts = {NULL};
	struct xp_err err = {{0}};
	struct xp_node *n = xp_local_discover(&opts, &err);
	unsetenv("HWLOC_XMLFILE");
	if (n)
		xp_node_free(n);
	ck_assert_msg(n == NULL, "HWLOC_XMLFILE=%s: discovery succeeded", missing);
	ck_assert_msg(strstr(err.msg, missing) != NULL, "message \"%s\" does not name %s", err.msg,
		      missing);
}
END_TEST

/* HWLOC_XMLFILE naming a file that exists but is not a topology is an error, not
 * a silent fall-back to the live machine. */
START_TEST(test_bad_env_content)
{
	static const char junk[] = "not xml\n";
	char *path = xp_tmpfile(junk, sizeof junk - 1);
	ck_assert_int_eq(setenv("HWLOC_XMLFILE", path, 1), 0);
	struct xp_local_opts opts = {NULL};
	struct xp_err err = {{0}};
	struct xp_node *n = xp_local_discover(&opts, &err);
	unsetenv("HWLOC_XMLFILE");
	unlink(path);
	if (n)
		xp_node_free(n);
	ck_assert_msg(n == NULL, "HWLOC_XMLFILE=%s (not XML): discovery succeeded", path);
	ck_assert_msg(strstr(err.msg, path) != NULL, "message \"%s\" does not name %s", err.msg, path);
	free(path);
}
END_TEST

/* An RDMA device belongs to every interface of its PCI function: in 24em64t,
 * 0000:05:00.0 (ConnectX, 15b3:6746) carries eth2, the IPoIB ib0 and mlx4_0. */
START_TEST(test_rdma_all_interfaces)
{
	char *path = fixture_path("24em64t-2n6c2t-pci.xml");
	struct xp_local_opts opts = {path};
	struct xp_err err = {{0}};
	struct xp_node *n = xp_local_discover(&opts, &err);
	ck_assert_msg(n != NULL, "%s", err.msg);
	int seen = 0;
	for (size_t i = 0; i < n->n_nics; i++) {
		const struct xp_nic *c = &n->nics[i];
		if (!c->pci_bus_id || strcmp(c->pci_bus_id, "0000:05:00.0") != 0)
			continue;
		ck_assert_msg(c->rdma && strcmp(c->rdma, "mlx4_0") == 0, "%s: rdma %s", c->name,
			      c->rdma ? c->rdma : "(none)");
		seen++;
	}
	ck_assert_int_eq(seen, 2);
	xp_node_free(n);
	free(path);
}
END_TEST

/* HWLOC_XMLFILE pointing at a good file is the topology, as hwloc reads it. */
START_TEST(test_env_good)
{
	char *path = fixture_path("32em64t-2n8c2t-pci-wholeio.xml");
	ck_assert_int_eq(setenv("HWLOC_XMLFILE", path, 1), 0);
	struct xp_local_opts opts = {NULL};
	struct xp_err err = {{0}};
	struct xp_node *n = xp_local_discover(&opts, &err);
	unsetenv("HWLOC_XMLFILE");
	ck_assert_msg(n != NULL, "HWLOC_XMLFILE=%s: %s", path, err.msg);
	ck_assert_str_eq(n->name, "conan");
	ck_assert_uint_eq(n->n_devices, 4);
	char *src = NULL;
	ck_assert_int_ge(asprintf(&src, "hwloc-xml:%s", path), 0);
	ck_assert_str_eq(n->source, src);
	free(src);
	xp_node_free(n);
	free(path);
}
END_TEST

/* An hwloc XML written by hand (tests/hostile): a PU with a cpuset and no complete_cpuset,
 * on which libhwloc 2.9's importer dereferences NULL. Refused, naming file, line and object. */
START_TEST(test_bad_no_complete_cpuset)
{
	char *p = strdup(xp_fixture("../hostile/hwloc-pu-no-complete-cpuset.xml"));
	struct xp_local_opts opts = {p};
	struct xp_err err = {{0}};
	struct xp_node *n = xp_local_discover(&opts, &err);
	xp_node_free(n);
	ck_assert_msg(n == NULL, "%s: discovery succeeded", p);
	ck_assert_msg(strstr(err.msg, p) && strstr(err.msg, "line 9: object PU P#1 has a cpuset but no complete_cpuset"),
		      "message \"%s\"", err.msg);
	free(p);
	/* The same hole cut in a real fixture: the Machine's complete_nodeset. */
	char *fx = fixture_path("Hygon-Dhyana-32cores.xml");
	size_t len;
	struct xp_err rerr = {{0}};
	char *xml = xp_read_file(fx, 1 << 24, &len, &rerr);
	ck_assert_ptr_nonnull(xml);
	const char *cut = " complete_nodeset=\"0x0000000f\"";
	char *at = strstr(xml, cut);
	ck_assert_ptr_nonnull(at);
	memmove(at, at + strlen(cut), strlen(at + strlen(cut)) + 1);
	char *tmp = xp_tmpfile(xml, strlen(xml));
	opts.topology_xml = tmp;
	n = xp_local_discover(&opts, &err);
	xp_node_free(n);
	remove(tmp);
	ck_assert_msg(n == NULL, "discovery succeeded");
	ck_assert_msg(strstr(err.msg, "line 4: object Machine P#0 has a nodeset but no complete_nodeset"),
		      "message \"%s\"", err.msg);
	free(tmp);
	free(xml);
	free(fx);
}
END_TEST

/* The hwloc XMLs of tests/hostile, each run through the CLI twice: as --topology and as the
 * hwloc.xml of a replay directory. Each crashed libhwloc 2.9 inside xpool (exit 139) or let
 * hwloc print text of the file to the terminal. */
static const struct {
	const char *file;
	int status;
	const char *want; /* in stdout when status is 0, in stderr otherwise */
} hostile_hwloc[] = {
	/* Read otherwise by the check (libxml2) and hwloc's own reader, which stopped at the
	 * spaces, the quote or the reference and lost complete_cpuset: now hwloc reads what
	 * libxml2 read, written back, and the file is the valid topology it says. */
	{"hwloc-spaces-around-equals.xml", 0, "\"pus\": 2,"},
	{"hwloc-single-quoted.xml", 0, "\"pus\": 2,"},
	{"hwloc-charref-value.xml", 0, "\"pus\": 2,"},
	/* hwloc's reader took "<!--" and "<?" for tags and gave up: they are left out of what it
	 * is given; a CDATA section, which it would take for one too, is refused. */
	{"hwloc-comment-in-object.xml", 0, "\"pus\": 2,"},
	{"hwloc-pi-in-object.xml", 0, "\"pus\": 2,"},
	{"hwloc-cdata-in-object.xml", 1, ": line 5: a CDATA section (hwloc's reader cannot read it)"},
	/* x:complete_cpuset is not complete_cpuset: hwloc's reader cannot read namespaces. */
	{"hwloc-namespaced-attr.xml", 1, ": line 5: <object> declares a namespace (hwloc's reader cannot read it)"},
	/* hwloc 2.9: "Topology became empty, aborting!", then a crash. */
	{"hwloc-root-numanode.xml", 1, ": line 4: the root object is of type NUMANode, not a Machine (hwloc cannot import it)"},
	{"hwloc-root-memcache.xml", 1, ": line 3: the root object is of type MemCache, not a Machine (hwloc cannot import it)"},
	/* hwloc's out-of-order box quotes the file's bidi override and C1 controls (UTF-8 and a
	 * raw 0x9b byte): a warning of the node, masked, and nothing on stderr. */
	{"hwloc-bidi-out-of-order.xml", 0, "\"hwloc has encountered an out-of-order XML topology load. Object PU cpuset"},
	{"hwloc-c1-out-of-order.xml", 0, "\"hwloc has encountered an out-of-order XML topology load. Object PU cpuset"},
};

static void check_hostile_run(const char *how, const struct xp_run *r, int i)
{
	const char *f = hostile_hwloc[i].file;
	ck_assert_msg(r->status == hostile_hwloc[i].status, "%s %s: exit %d, stderr \"%s\"", how, f, r->status, r->err);
	if (hostile_hwloc[i].status == 0) {
		ck_assert_msg(strstr(r->out, hostile_hwloc[i].want), "%s %s: stdout \"%s\"", how, f, r->out);
		ck_assert_msg(r->err[0] == '\0', "%s %s: stderr \"%s\"", how, f, r->err);
	} else {
		ck_assert_msg(strstr(r->err, hostile_hwloc[i].want), "%s %s: stderr \"%s\"", how, f, r->err);
		ck_assert_msg(!strstr(r->err, "hwloc: "), "%s %s: hwloc printed \"%s\"", how, f, r->err);
	}
	/* No ESC, C1 CSI/OSC/ST (UTF-8 or raw) or bidi override of the file on the terminal. */
	static const char *const raw[] = {"\x1b", "\xc2\x9b", "\xc2\x9d", "\xc2\x9c", "\x9b", "\xe2\x80\xae"};
	for (size_t k = 0; k < sizeof raw / sizeof raw[0]; k++)
		ck_assert_msg(!strstr(r->out, raw[k]) && !strstr(r->err, raw[k]), "%s %s: raw bytes %zu reached the terminal",
			      how, f, k);
}

START_TEST(test_hostile_hwloc)
{
	char *rel = NULL;
	ck_assert_int_ge(asprintf(&rel, "../hostile/%s", hostile_hwloc[_i].file), 0);
	char *file = strdup(xp_fixture(rel));
	const char *cmd = hostile_hwloc[_i].status == 0 ? "--json" : NULL;
	struct xp_run r;
	ck_assert_int_ge(xp_run_xpool(&r, NULL, "--topology", file, "inventory", cmd, NULL), 0);
	check_hostile_run("--topology", &r, _i);
	xp_run_free(&r);
	char dir[] = "/tmp/xp-hostile-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char *d = xp_assemble(dir, "node", rel, "hwloc.xml", NULL);
	ck_assert_int_ge(xp_run_xpool(&r, NULL, "--replay", d, "inventory", cmd, NULL), 0);
	check_hostile_run("--replay", &r, _i);
	xp_run_free(&r);
	xp_rm_rf(dir);
	free(d);
	free(file);
	free(rel);
}
END_TEST

/* Documents, written by hand, that the check passed and hwloc's reader read otherwise: it stops
 * at an attribute it cannot read and drops the rest of the element, complete_cpuset included
 * (an uppercase name, a reference beyond U+00FF, a namespace). The check now refuses them. */
START_TEST(test_bad_unreadable_attrs)
{
	static const struct {
		const char *machine, *pu, *want;
	} cases[] = {
		{"", "cpuset=\"0x1\" Foo=\"1\" complete_cpuset=\"0x1\"",
		 "line 4: attribute Foo of <object> has a name hwloc's reader cannot read"},
		{"", "cpuset=\"0x1\" name=\"&#x202E;\" complete_cpuset=\"0x1\"",
		 "line 4: attribute name of <object> has a character reference beyond U+00FF"},
		{" xmlns:x=\"u\"", "cpuset=\"0x1\" x:complete_cpuset=\"0x1\"",
		 "line 3: <object> declares a namespace (hwloc's reader cannot read it)"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *xml = NULL;
		ck_assert_int_ge(asprintf(&xml,
					  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<topology version=\"2.0\">\n"
					  "<object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" "
					  "nodeset=\"0x1\" complete_nodeset=\"0x1\"%s>\n"
					  "<object type=\"PU\" os_index=\"0\" %s nodeset=\"0x1\" complete_nodeset=\"0x1\"/>\n"
					  "<object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" "
					  "nodeset=\"0x1\" complete_nodeset=\"0x1\" local_memory=\"1000\"/>\n"
					  "</object>\n</topology>\n",
					  cases[i].machine, cases[i].pu),
				 0);
		char *tmp = xp_tmpfile(xml, strlen(xml));
		struct xp_local_opts opts = {tmp};
		struct xp_err err = {{0}};
		struct xp_node *n = xp_local_discover(&opts, &err);
		xp_node_free(n);
		remove(tmp);
		ck_assert_msg(n == NULL, "case %zu: discovery succeeded", i);
		ck_assert_msg(strstr(err.msg, tmp) && strstr(err.msg, cases[i].want), "case %zu: message \"%s\"", i, err.msg);
		free(tmp);
		free(xml);
	}
}
END_TEST

/* What hwloc prints while it loads is captured: a failed load's reason is the error, stderr
 * stays as it was (a v2 file without a NUMA node: "Topology does not contain any NUMA node"). */
START_TEST(test_hwloc_said_is_error)
{
	const char *xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<topology version=\"2.0\">\n"
			  "<object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" "
			  "nodeset=\"0x1\" complete_nodeset=\"0x1\">\n"
			  "<object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" "
			  "complete_nodeset=\"0x1\"/>\n</object>\n</topology>\n";
	char *tmp = xp_tmpfile(xml, strlen(xml));
	/* The suite's own stderr, pointed at a file for the call. */
	FILE *caught = tmpfile();
	ck_assert_ptr_nonnull(caught);
	fflush(stderr);
	int saved = dup(2);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_ge(dup2(fileno(caught), 2), 0);
	struct xp_local_opts opts = {tmp};
	struct xp_err err = {{0}};
	struct xp_node *n = xp_local_discover(&opts, &err);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	xp_node_free(n);
	remove(tmp);
	ck_assert_msg(n == NULL, "discovery succeeded");
	ck_assert_msg(strstr(err.msg, ": not a valid hwloc XML topology: hwloc: Topology does not contain any NUMA node, aborting!"),
		      "message \"%s\"", err.msg);
	struct stat st;
	ck_assert_int_eq(fstat(fileno(caught), &st), 0);
	ck_assert_msg(st.st_size == 0, "%lld bytes on stderr", (long long)st.st_size);
	fclose(caught);
	free(tmp);
}
END_TEST

/* With stderr closed (xpool 2>&-), hwloc's messages are still captured and fd 2 is closed
 * again afterwards: discovery must not fail for want of a stderr to save. */
START_TEST(test_hwloc_said_stderr_closed)
{
	char *p = strdup(xp_fixture("../hostile/hwloc-bidi-out-of-order.xml"));
	struct xp_local_opts opts = {p};
	struct xp_err err = {{0}};
	fflush(stderr);
	int saved = dup(2);
	ck_assert_int_ge(saved, 0);
	close(2);
	struct xp_node *n = xp_local_discover(&opts, &err);
	bool closed = fcntl(2, F_GETFD) < 0;
	dup2(saved, 2);
	close(saved);
	ck_assert_msg(n != NULL, "%s", err.msg);
	ck_assert_msg(closed, "fd 2 was left open");
	ck_assert_uint_eq(n->n_warnings, 1);
	ck_assert_msg(strstr(n->warnings[0], "hwloc has encountered an out-of-order XML topology load."), "warning \"%s\"",
		      n->warnings[0]);
	xp_node_free(n);
	free(p);
}
END_TEST

/* hwloc prints its out-of-order box once per process; the console and the agent load the same
 * file at every refresh, and the warning must stay. */
START_TEST(test_hwloc_said_every_load)
{
	char *p = strdup(xp_fixture("../hostile/hwloc-bidi-out-of-order.xml"));
	struct xp_local_opts opts = {p};
	for (int i = 0; i < 3; i++) {
		struct xp_err err = {{0}};
		struct xp_node *n = xp_local_discover(&opts, &err);
		ck_assert_msg(n != NULL, "%s", err.msg);
		ck_assert_msg(n->n_warnings == 1 && strstr(n->warnings[0], "out-of-order XML topology load."),
			      "load %d: %zu warnings", i, n->n_warnings);
		xp_node_free(n);
	}
	free(p);
}
END_TEST

/* libhwloc's libxml plugin sets libxml2's generic error handler to a function of its own and
 * is unloaded with the last topology: the handler must not be left pointing at unmapped code
 * (a later libxml2 error without a parser context jumped there). */
START_TEST(test_libxml_handler_after_hwloc)
{
	char *fx = fixture_path("24em64t-2n6c2t-pci.xml");
	struct xp_local_opts opts = {fx};
	struct xp_err err = {{0}};
	struct xp_node *n = xp_local_discover(&opts, &err);
	ck_assert_msg(n != NULL, "%s", err.msg);
	xp_node_free(n);
	Dl_info di;
	ck_assert_msg(dladdr((void *)xmlGenericError, &di) != 0, "libxml2's error handler points at unmapped code");
	xmlGenericError(xmlGenericErrorContext, "%s", "");
	free(fx);
}
END_TEST

XP_DEFINE_SUITE(discovery,
	{"fixtures", .timeout_s = 30, .loop = test_fixture, .loop_n = scan_fixtures(),
	 .tests = {test_fixture_count, test_links_pxb}},
	{"known", .timeout_s = 30,
	 .loop = test_links_other, .loop_n = (int)(sizeof other_links / sizeof other_links[0]),
	 .tests = {test_links_wholeio, test_links_24em64t, test_links_64intel64, test_nics_wholeio,
		   test_nics_manyvfs, test_names, test_env_good}},
	{"bad_input", .timeout_s = 30,
	 .tests = {test_bad_missing, test_bad_directory, test_bad_empty, test_bad_truncated,
		   test_bad_text, test_bad_huge, test_bad_huge_valid, test_bad_env,
		   test_bad_env_content, test_rdma_all_interfaces, test_bad_no_complete_cpuset,
		   test_libxml_handler_after_hwloc, test_bad_unreadable_attrs, test_hwloc_said_is_error,
		   test_hwloc_said_stderr_closed, test_hwloc_said_every_load}},
	{"hostile_hwloc", .timeout_s = 30,
	 .loop = test_hostile_hwloc, .loop_n = (int)(sizeof hostile_hwloc / sizeof hostile_hwloc[0])})
