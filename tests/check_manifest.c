/* check_manifest.c: the manifest format, version ranges, globs, and normalization
 * rules that manifests drive (ECU, affinity groups, link merging, NUMA). */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manifest.h"
#include "manifest_path.h"
#include "model.h"
#include "normalize.h"
#include "suitelib.h"

static const char full[] =
	"# a full manifest\n"
	"[adapter]\n"
	"name = nvidia\n"
	"vendor = NVIDIA\n"
	"pci_vendor = 10de\n"
	"drivers = 450-599 >=600.1\n"
	"tools = nvidia-smi\n"
	"libraries = libnvidia-ml.so.1\n"
	"record = nvidia-smi-q-x.xml: nvidia-smi -q -x\n"
	"record = nvidia-smi-topo-m.txt:nvidia-smi topo -m\n"
	"ecu_precision = bf16\n"
	"affinity = nvlink\n"
	"temperature = 83 90\n"
	"power = 100 110\n"
	"\n"
	"[model H100 80GB HBM3]\n"
	"match = *H100*80GB*HBM3*\n"
	"match = NVIDIA H100\n"
	"pci_device = 2330 2331\n"
	"generation = Hopper\n"
	"class = training\n"
	"memory_mib = 81559\n"
	"peak = bf16 989.4 TFLOPS\n"
	"peak = int8 1978.9 TOPS\n"
	"coefficient = 0.9\n"
	"memory_access = explicit\n"
	"partition = whole mig\n"
	"slots = 8\n"
	"template = 1g.10gb memory_mib=10240 compute=1/7 count=7\n"
	"template = 7g.80gb memory_mib=81920 compute=1 count=1 at=0 span=8\n"
	"temperature = 85 92\n"
	"[model Tesla T4]\n"
	"match = Tesla T4\n"
	"class = inference\n"
	"peak = fp16 65 TFLOPS\n"
	"peak = int8 130 TOPS\n";

START_TEST(parse_full)
{
	struct xp_err err = {{0}};
	struct xp_manifest *m = xp_manifest_parse(full, sizeof full - 1, "t.adapter", &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	ck_assert_str_eq(m->name, "nvidia");
	ck_assert_uint_eq(m->n_pci_vendors, 1);
	ck_assert_uint_eq(m->pci_vendors[0], 0x10de);
	ck_assert_uint_eq(m->n_drivers, 2);
	ck_assert_uint_eq(m->n_records, 2);
	ck_assert_str_eq(m->records[1].file, "nvidia-smi-topo-m.txt");
	ck_assert_str_eq(m->records[1].argv[0], "nvidia-smi");
	ck_assert_str_eq(m->records[1].argv[2], "-m");
	ck_assert_ptr_null(m->records[1].argv[3]);
	ck_assert_int_eq(m->affinity, XP_AFF_NVLINK);
	ck_assert(m->temp_warn == 83 && m->temp_crit == 90);
	ck_assert_uint_eq(m->n_models, 2);
	const struct xp_mmodel *h = &m->models[0];
	ck_assert_str_eq(h->name, "H100 80GB HBM3");
	ck_assert_uint_eq(h->n_match, 2);
	ck_assert_uint_eq(h->n_pci_devices, 2);
	ck_assert_int_eq(h->memory_mib, 81559);
	ck_assert_uint_eq(h->n_peaks, 2);
	ck_assert(fabs(h->peaks[0].value - 989.4) < 1e-9);
	ck_assert_str_eq(h->peaks[1].unit, "TOPS");
	ck_assert(h->coefficient == 0.9);
	ck_assert_int_eq(h->memory_access, XP_MEM_EXPLICIT);
	ck_assert_uint_eq(h->partition, XP_PART_WHOLE | XP_PART_MIG);
	ck_assert_uint_eq(h->n_templates, 2);
	ck_assert(fabs(h->templates[0].compute - 1.0 / 7) < 1e-12);
	ck_assert_int_eq(h->templates[0].count, 7);
	/* MIG geometry: the memory slices, and a template's starts (bits) and span. */
	ck_assert_int_eq(h->slots, 8);
	ck_assert_uint_eq(h->templates[0].at, 0);
	ck_assert_uint_eq(h->templates[1].at, 1);
	ck_assert_int_eq(h->templates[1].span, 8);
	ck_assert(m->models[1].coefficient == 1.0);

	ck_assert_ptr_eq(xp_manifest_model(m, "NVIDIA H100 80GB HBM3", -1), h);
	ck_assert_ptr_eq(xp_manifest_model(m, "nvidia h100", -1), h); /* case-insensitive, exact */
	ck_assert_ptr_eq(xp_manifest_model(m, "unknown card", 0x2331), h);
	ck_assert_ptr_eq(xp_manifest_model(m, "Tesla T4", -1), &m->models[1]);
	ck_assert_ptr_null(xp_manifest_model(m, "Tesla T40", -1));
	ck_assert(xp_manifest_has_vendor(m, 0x10de) && !xp_manifest_has_vendor(m, 0x1002));

	ck_assert(xp_manifest_driver_ok(m, "535.54.03"));
	ck_assert(xp_manifest_driver_ok(m, "599.99"));  /* 599.x is inside 450-599 */
	ck_assert(!xp_manifest_driver_ok(m, "600.0")); /* between the two ranges */
	ck_assert(xp_manifest_driver_ok(m, "600.1"));
	ck_assert(xp_manifest_driver_ok(m, "1000"));
	ck_assert(!xp_manifest_driver_ok(m, "418.43"));
	ck_assert(!xp_manifest_driver_ok(m, ""));
	xp_manifest_free(m);
}
END_TEST

START_TEST(versions_and_globs)
{
	ck_assert_int_lt(xp_version_cmp("535.54.03", "535.104.05"), 0);
	ck_assert_int_eq(xp_version_cmp("24.1.RC2", "24.1.2"), 0);
	ck_assert_int_gt(xp_version_cmp("24.1.RC3", "24.1.RC2"), 0);
	ck_assert_int_lt(xp_version_cmp("24.1", "24.1.RC2"), 0);
	ck_assert_int_eq(xp_version_cmp("007.1", "7.01"), 0);
	ck_assert_int_gt(xp_version_cmp("99999999999999999999999.1", "9.1"), 0); /* no overflow */
	ck_assert(xp_glob_match("*H100*", "NVIDIA H100 80GB HBM3"));
	ck_assert(xp_glob_match("Ascend910?", "ascend910b"));
	ck_assert(!xp_glob_match("Ascend910?", "Ascend910B3"));
	ck_assert(xp_glob_match("*", ""));
	ck_assert(!xp_glob_match("a*b*c", "aXbXd"));
	/* Pathological pattern stays fast (linear backtracking). */
	char text[4001];
	memset(text, 'a', 4000);
	text[4000] = '\0';
	ck_assert(!xp_glob_match("*a*a*a*a*a*a*a*a*b", text));
}
END_TEST

/* Each bad manifest: the message names the file, the line and what is wrong. */
START_TEST(parse_errors)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{"name = x\n", "m.adapter:1: 'name' before any section"},
		{"[adapter]\nname = x\nname = y\n", "m.adapter:3: name: given twice in one section"},
		{"[adapter]\nname = x\n[model A]\npeak = bf16 lots TFLOPS\n", "m.adapter:4: peak: expected 'PRECISION VALUE UNIT'"},
		{"[adapter]\nname = x\n[model A]\ntemplate = 1g memory_mib=1 compute=9/7 count=1\n", "m.adapter:4: compute: '9/7' is more than the whole device"},
		{"[adapter]\nname = x\n[model A]\ntemplate = 1g memory_mib=1\n", "m.adapter:4: template 1g: needs memory_mib, compute and count"},
		{"[adapter]\nname = x\npci_vendor = 10de zz\n", "m.adapter:3: pci_vendor: 'zz' is not a 4-digit hex PCI id"},
		{"[adapter]\nname = x\ndrivers = latest\n", "m.adapter:3: drivers: 'latest' is not FROM-TO or >=FROM"},
		{"[adapter]\nname = x\nrecord = ../x: ls\n", "m.adapter:3: record: '../x' must be a plain file name"},
		{"[adapter]\nname = x\nrecord = f:\n", "m.adapter:3: record: no command after 'f:'"},
		{"[adapter]\nname = x\naffinity = ring:0\n", "m.adapter:3: affinity: 'ring:0': ring size must be 1 to"},
		{"[adapter]\nname = x\ntemperature = 90 80\n", "m.adapter:3: temperature: expected 'WARN CRIT' with WARN <= CRIT"},
		{"[adapter]\nname = x\n[model A]\n[model A]\n", "m.adapter:4: model 'A' again (first at line 3)"},
		{"[model A]\n", "m.adapter:1: [model] before [adapter]"},
		{"[adapter\n", "m.adapter:1: section header without its closing ']'"},
		{"[adapter]\nname = x\n[widgets]\n", "m.adapter:3: unknown section [widgets]"},
		{"[adapter]\nname = x\njust words\n", "m.adapter:3: expected 'key = value' or a [section]"},
		{"[adapter]\nname =\n", "m.adapter:2: name: empty value"},
		{"[adapter]\nvendor = x\n", "m.adapter: no [adapter] section with a name"},
		{"", "m.adapter: no [adapter] section with a name"},
		{"[adapter]\nname = x\n[model A]\nclass = gaming\n", "m.adapter:4: class: 'gaming' is not training or inference"},
		{"[adapter]\nname = x\n[model A]\nmemory_access = magic\n", "m.adapter:4: memory_access: 'magic' is not explicit or unified"},
		{"[adapter]\nname = x\nvisible_devices_env = 1GPU\n", "m.adapter:3: visible_devices_env: '1GPU' is not an environment variable name"},
		{"[adapter]\nname = x\nvisible_devices_env = A-B\n", "m.adapter:3: visible_devices_env: 'A-B' is not an environment variable name"},
		{"[adapter]\nname = x\nvisible_devices_env = A\x01B\n", "m.adapter:3: visible_devices_env: 'A\x01B' is not an environment"},
		{"[adapter]\nname = x\nvisible_devices_env = A\nvisible_devices_env = B\n", "m.adapter:4: visible_devices_env: given twice in one section"},
		{"[adapter]\nname = x\ndevice_nodes = dev/x{index}\n", "m.adapter:3: device_nodes: 'dev/x{index}' is not an absolute path"},
		{"[adapter]\nname = x\ndevice_nodes = /dev/x\n", "m.adapter:3: device_nodes: '/dev/x' has no {index}"},
		{"[adapter]\nname = x\ndevice_nodes = /dev/x{idx}\n", "m.adapter:3: device_nodes: '/dev/x{idx}': byte 0x7b is not allowed"},
		{"[adapter]\nname = x\ndevice_nodes = /dev/../x{index}\n", "m.adapter:3: device_nodes: '/dev/../x{index}' has an empty, '.' or '..' component"},
		{"[adapter]\nname = x\ndevice_nodes = /dev/x{index} /dev/x{index}\n", "m.adapter:3: device_nodes: '/dev/x{index}' given twice"},
		{"[adapter]\nname = x\ncontrol_nodes = /dev/ctl{index}\n", "m.adapter:3: control_nodes: '/dev/ctl{index}': byte 0x7b is not allowed"},
		{"[adapter]\nname = x\ncontrol_nodes = /dev/a\x1b[2Jb\n", "m.adapter:3: control_nodes: '/dev/a"},
		{"[adapter]\nname = x\ncontrol_nodes = /dev//ctl\n", "m.adapter:3: control_nodes: '/dev//ctl' has an empty"},
		{"[adapter]\nname = x\nk8s_resource = gpu\n", "m.adapter:3: k8s_resource: 'gpu' is not a Kubernetes extended resource name"},
		{"[adapter]\nname = x\nk8s_resource = nvidia.com/gpu/x\n", "m.adapter:3: k8s_resource: 'nvidia.com/gpu/x' is not a Kubernetes"},
		{"[adapter]\nname = x\nk8s_resource = NVIDIA.com/gpu\n", "m.adapter:3: k8s_resource: 'NVIDIA.com/gpu' is not a Kubernetes"},
		{"[adapter]\nname = x\nk8s_resource = kubernetes.io/gpu\n", "m.adapter:3: k8s_resource: 'kubernetes.io/gpu' is not a Kubernetes"},
		{"[adapter]\nname = x\nk8s_resource = a.com/-gpu\n", "m.adapter:3: k8s_resource: 'a.com/-gpu' is not a Kubernetes"},
		{"[adapter]\nname = x\nk8s_slice_resource = nvidia.com/mig\n", "m.adapter:3: k8s_slice_resource: 'nvidia.com/mig' must hold {slice} once"},
		{"[adapter]\nname = x\nk8s_slice_resource = a.com/{slice}{slice}\n", "m.adapter:3: k8s_slice_resource: 'a.com/{slice}{slice}' must hold {slice} once"},
		{"[adapter]\nname = x\nk8s_slice_resource = a.com/x {slice}\n", "m.adapter:3: k8s_slice_resource: 'a.com/x {slice}' is not a Kubernetes"},
		{"[adapter]\nname = x\nslurm_gres = gpu:1\n", "m.adapter:3: slurm_gres: 'gpu:1' is not a Slurm gres name"},
		{"[adapter]\nname = x\norder = 1000\n", "m.adapter:3: order: '1000' is not a whole number from 0 to 999"},
		{"[adapter]\nname = x\norder = -1\n", "m.adapter:3: order: '-1' is not a whole number"},
		{"[adapter]\nname = x\norder = 1x\n", "m.adapter:3: order: '1x' is not a whole number"},
		{"[adapter]\nname = x\n[model A]\norder = 1\n", "m.adapter:4: unknown key 'order' in [model A]"},
		{"[adapter]\nname = x\n[model A]\nvisible_devices_env = X\n", "m.adapter:4: unknown key 'visible_devices_env' in [model A]"},
		{"[adapter]\nname = x\n[model A]\ncontrol_nodes = /dev/x\n", "m.adapter:4: unknown key 'control_nodes' in [model A]"},
		{"[adapter]\nname = x\n[model A]\nk8s_resource = a/b/c\n", "m.adapter:4: k8s_resource: 'a/b/c' is not a Kubernetes"},
		{"[adapter]\nname = x\n[model A]\ntemplate = t memory_mib=1 compute=1 count=1 k8s_slice=a/b\n", "m.adapter:4: template t: k8s_slice 'a/b' is not [A-Za-z0-9._-]"},
		{"[adapter]\nname = x\n[model A]\ntemplate = t memory_mib=1 compute=1 count=1 k8s_slice=-a\n", "m.adapter:4: template t: k8s_slice '-a' is not"},
		{"[adapter]\nname = x\n[model A]\ntemplate = t memory_mib=1 compute=1 count=1 at=0,4\n", "m.adapter:4: template t: at and span go together"},
		{"[adapter]\nname = x\n[model A]\ntemplate = t memory_mib=1 compute=1 count=1 at=0,16 span=1\n", "m.adapter:4: template t: at '16' is not a slot 0..15"},
		{"[adapter]\nname = x\n[model A]\ntemplate = t memory_mib=1 compute=1 count=1 at=0 span=0\n", "m.adapter:4: template t: span '0' is not 1..16"},
		{"[adapter]\nname = x\n[model A]\nslots = 17\n", "m.adapter:4: slots: '17' is not 1..16"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct xp_err err = {{0}};
		struct xp_manifest *m = xp_manifest_parse(cases[i].text, strlen(cases[i].text), "m.adapter", &err);
		ck_assert_msg(m == NULL, "case %zu parsed", i);
		ck_assert_msg(strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) == 0, "case %zu: got '%s', want '%s'",
			      i, err.msg, cases[i].msg);
	}
	/* A NUL byte, an endless line, a huge file. */
	struct xp_err err = {{0}};
	static const char nul[] = "[adapter]\nname = x\0y\n";
	ck_assert_ptr_null(xp_manifest_parse(nul, sizeof nul - 1, "m.adapter", &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "NUL"));
	char *longl = malloc(10000);
	memset(longl, 'a', 9999);
	longl[9999] = '\0';
	ck_assert_ptr_null(xp_manifest_parse(longl, 9999, "m.adapter", &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "m.adapter:1: line longer than"));
	free(longl);
	ck_assert_ptr_null(xp_manifest_parse("x", XP_MANIFEST_MAX_BYTES + 1, "m.adapter", &err));
	ck_assert_ptr_null(xp_manifest_load("/nonexistent.adapter", &err));
	ck_assert_str_eq(err.msg, "/nonexistent.adapter: No such file or directory");
}
END_TEST

/* Normalization on a node built by hand: an 8-device node of two kinds of adapter rule. */
static struct xp_manifest *mf(const char *text)
{
	struct xp_err err = {{0}};
	struct xp_manifest *m = xp_manifest_parse(text, strlen(text), "n.adapter", &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	return m;
}

static void raw_dev(struct xp_raw_node *r, int idx, const char *bus, const char *name)
{
	struct xp_raw_device *d = &r->devices[r->n_devices++];
	xp_raw_device_init(d);
	d->index = idx;
	snprintf(d->bus_id, sizeof d->bus_id, "%s", bus);
	snprintf(d->name, sizeof d->name, "%s", name);
}

START_TEST(ecu_affinity_links)
{
	/* Inference part: ECU from int8 at half weight. */
	struct xp_manifest *m = mf("[adapter]\nname = a\nvendor = V\n[model T4]\nmatch = *T4*\nclass = inference\n"
				   "peak = fp16 65 TFLOPS\npeak = int8 130 TOPS\n");
	struct xp_node *n = xp_node_new("n");
	struct xp_raw_node *r = calloc(1, sizeof *r);
	xp_raw_node_init(r);
	raw_dev(r, 0, "00000000:3B:00.0", "Tesla T4");
	xp_normalize_merge(n, r, m, "a");
	ck_assert_uint_eq(n->n_devices, 1);
	ck_assert(fabs(n->devices[0].ecu - 65.0) < 1e-9);
	ck_assert_str_eq(n->devices[0].ecu_basis, "int8 130 TOPS x 1/2 x 1.00 (manifest)");
	xp_node_free(n);
	xp_manifest_free(m);

	/* Ascend-like: ring:4 puts 0-3 and 4-7 in two HCCS groups and links them. */
	m = mf("[adapter]\nname = ascend\nvendor = Huawei\naffinity = ring:4\n[model 910]\nmatch = *910*\n");
	n = xp_node_new("n");
	xp_raw_node_init(r);
	for (int i = 0; i < 8; i++) {
		char bus[32];
		snprintf(bus, sizeof bus, "0000:%02x:00.0", 0x10 + i);
		raw_dev(r, i, bus, "Ascend 910A");
	}
	xp_normalize_merge(n, r, m, "ascend");
	ck_assert_str_eq(n->devices[1].affinity_group, "hccs:0");
	ck_assert_str_eq(n->devices[6].affinity_group, "hccs:1");
	ck_assert_int_eq(xp_node_link(n, 0, 3)->cls, XP_LINK_HCCS);
	ck_assert_int_eq(xp_node_link(n, 4, 7)->cls, XP_LINK_HCCS);
	ck_assert_int_ne(xp_node_link(n, 3, 4)->cls, XP_LINK_HCCS);
	xp_node_free(n);
	xp_manifest_free(m);

	/* NVLink: the tool's matrix wins, islands become groups, a PCIe disagreement with
	 * hwloc and a NUMA disagreement are warnings; hwloc keeps NUMA. */
	m = mf("[adapter]\nname = nvidia\nvendor = NVIDIA\naffinity = nvlink\n");
	n = xp_node_new("n");
	for (int i = 0; i < 3; i++) {
		struct xp_device *d = xp_node_add_device(n);
		char bus[32];
		snprintf(bus, sizeof bus, "0000:%02x:00.0", 0x20 + i);
		d->pci_bus_id = xp_strdup(bus);
		d->numa = 0;
	}
	xp_node_links_reset(n);
	*xp_node_link(n, 0, 2) = *xp_node_link(n, 2, 0) = (struct xp_link){XP_LINK_PHB, 0};
	xp_raw_node_init(r);
	raw_dev(r, 0, "00000000:20:00.0", "GPU");
	raw_dev(r, 1, "00000000:21:00.0", "GPU");
	raw_dev(r, 2, "00000000:22:00.0", "GPU");
	r->devices[2].numa = 1;
	r->has_links = true;
	const char *cells[3][3] = {{"X", "NV12", "SYS"}, {"NV12", "X", "SYS"}, {"SYS", "SYS", "X"}};
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			snprintf(r->links[i][j], sizeof r->links[i][j], "%s", cells[i][j]);
	xp_normalize_merge(n, r, m, "nvidia");
	ck_assert_int_eq(xp_node_link(n, 0, 1)->cls, XP_LINK_NVLINK);
	ck_assert_int_eq(xp_node_link(n, 1, 0)->count, 12);
	ck_assert_int_eq(xp_node_link(n, 0, 2)->cls, XP_LINK_SYS);
	ck_assert_str_eq(n->devices[0].affinity_group, "nvlink:0");
	ck_assert_str_eq(n->devices[1].affinity_group, "nvlink:0");
	ck_assert_ptr_null(n->devices[2].affinity_group);
	ck_assert_int_eq(n->devices[2].numa, 0);
	ck_assert_uint_eq(n->n_warnings, 2);
	ck_assert_str_eq(n->warnings[0], "ACC2 0000:22:00.0: nvidia says NUMA 1, hwloc says NUMA 0 (keeping hwloc's)");
	ck_assert_str_eq(n->warnings[1], "link ACC0-ACC2: hwloc says PHB, nvidia says SYS");
	/* A second merge of the same report adds no duplicate warnings. */
	xp_normalize_merge(n, r, m, "nvidia");
	ck_assert_uint_eq(n->n_warnings, 2);
	xp_node_free(n);
	xp_manifest_free(m);

	/* Two reports of one bus id are never merged; a device of the vendor on the bus that
	 * the tool does not list is a warning on the device and the node. */
	m = mf("[adapter]\nname = nvidia\nvendor = NVIDIA\npci_vendor = 10de\n");
	n = xp_node_new("n");
	for (int i = 0; i < 2; i++) {
		struct xp_device *d = xp_node_add_device(n);
		d->pci_bus_id = xp_strdup(i ? "0000:31:00.0" : "0000:30:00.0");
		d->pci_id = xp_strdup("10de:2330");
	}
	xp_node_links_reset(n);
	xp_raw_node_init(r);
	raw_dev(r, 0, "00000000:30:00.0", "GPU");
	raw_dev(r, 1, "00000000:30:00.0", "GPU");
	r->has_links = true;
	snprintf(r->links[0][1], sizeof r->links[0][1], "NV4");
	snprintf(r->links[1][0], sizeof r->links[1][0], "NV4");
	xp_normalize_merge(n, r, m, "nvidia");
	ck_assert_uint_eq(n->n_devices, 2);
	ck_assert_int_eq(xp_node_link(n, 0, 0)->cls, XP_LINK_SELF); /* the diagonal stays X */
	ck_assert_int_eq(n->devices[1].health, XP_HEALTH_WARN);
	ck_assert_ptr_nonnull(strstr(n->devices[1].health_reasons[0], "nvidia does not report it"));
	ck_assert_uint_eq(n->n_warnings, 2);
	ck_assert_ptr_nonnull(strstr(n->warnings[0], "two devices report bus id 0000:30:00.0"));
	ck_assert_ptr_nonnull(strstr(n->warnings[1], "ACC1 0000:31:00.0: on the PCI bus, but nvidia does not report it"));
	xp_node_free(n);
	xp_manifest_free(m);
	free(r);
}
END_TEST

START_TEST(health_thresholds)
{
	struct xp_node *n = xp_node_new("n");
	struct xp_device *d = xp_node_add_device(n);
	xp_normalize_health(d, 80, 90, 95, 105);
	ck_assert_int_eq(d->health, XP_HEALTH_UNKNOWN); /* nothing measured: nothing to say "ok" with */
	d->temperature_c = 80;
	d->power_w = 300;
	d->power_limit_w = 300;
	xp_normalize_health(d, 80, 90, 95, 105);
	ck_assert_int_eq(d->health, XP_HEALTH_WARN);
	ck_assert_uint_eq(d->n_health_reasons, 2);
	ck_assert_str_eq(d->health_reasons[1], "power 300 W is 100% of the 300 W limit");
	d->ecc_uncorrected = 3;
	d->temperature_c = 95;
	xp_normalize_health(d, 80, 90, 95, 105);
	ck_assert_int_eq(d->health, XP_HEALTH_FAIL);
	ck_assert_str_eq(d->health_reasons[3], "3 uncorrected ECC errors");
	xp_node_free(n);
}
END_TEST

/* The keys a task's environment, mounts and exported resource names come from. */
START_TEST(task_keys)
{
	static const char text[] =
		"[adapter]\n"
		"name = ascend\n"
		"vendor = Huawei\n"
		"visible_devices_env = ASCEND_VISIBLE_DEVICES\n"
		"device_nodes = /dev/davinci{index} /dev/x{index}:{index}\n"
		"control_nodes = /dev/davinci_manager /dev/devmm_svm\n"
		"k8s_resource = huawei.com/Ascend910\n"
		"k8s_slice_resource = huawei.com/Ascend910-{slice}\n"
		"slurm_gres = npu\n"
		"[model 910B3]\n"
		"match = *910B3\n"
		"template = vir05_1c_16g memory_mib=16384 compute=5/20 count=4 k8s_slice=5c.1cpu.16g\n"
		"template = plain memory_mib=1 compute=1/20 count=1\n"
		"[model 310P3]\n"
		"match = *310P3\n"
		"k8s_resource = huawei.com/Ascend310P\n"
		"k8s_slice_resource = huawei.com/Ascend310P-{slice}\n"
		"slurm_gres = npu310\n";
	struct xp_manifest *m = mf(text);
	ck_assert_str_eq(xp_manifest_env(m), "ASCEND_VISIBLE_DEVICES");
	ck_assert_uint_eq(m->n_device_nodes, 2);
	ck_assert_uint_eq(m->n_control_nodes, 2);

	/* Per index its nodes, in order, each once; then the control nodes; -1 skipped. */
	char **v;
	const int idx[] = {3, 0, 3, -1};
	size_t n = xp_manifest_mounts(m, idx, 4, &v);
	static const char *const want[] = {"/dev/davinci3", "/dev/x3:3", "/dev/davinci0", "/dev/x0:0",
					   "/dev/davinci_manager", "/dev/devmm_svm"};
	ck_assert_uint_eq(n, 6);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(v[i], want[i]);
	xp_strv_free(v, n);
	n = xp_manifest_mounts(m, NULL, 0, &v); /* no devices: the control nodes alone */
	ck_assert_uint_eq(n, 2);
	xp_strv_free(v, n);

	const struct xp_mmodel *b3 = xp_manifest_model(m, "Ascend 910B3", -1);
	const struct xp_mmodel *p3 = xp_manifest_model(m, "Ascend 310P3", -1);
	ck_assert(b3 && p3);
	ck_assert_str_eq(xp_manifest_k8s_resource(m, b3), "huawei.com/Ascend910");
	ck_assert_str_eq(xp_manifest_k8s_resource(m, p3), "huawei.com/Ascend310P");
	ck_assert_str_eq(xp_manifest_k8s_resource(m, NULL), "huawei.com/Ascend910");
	ck_assert_str_eq(xp_manifest_slurm_gres(m, b3), "npu");
	ck_assert_str_eq(xp_manifest_slurm_gres(m, p3), "npu310");
	char *r = xp_manifest_k8s_slice(m, b3, "VIR05_1C_16G"); /* template names ignore case */
	ck_assert_str_eq(r, "huawei.com/Ascend910-5c.1cpu.16g");
	free(r);
	r = xp_manifest_k8s_slice(m, b3, "plain"); /* no k8s_slice: the template's name */
	ck_assert_str_eq(r, "huawei.com/Ascend910-plain");
	free(r);
	r = xp_manifest_k8s_slice(m, p3, "vir01");
	ck_assert_str_eq(r, "huawei.com/Ascend310P-vir01");
	ck_assert(xp_k8s_resource_valid(r));
	free(r);
	xp_manifest_free(m);

	/* A manifest without them: no variable, no mounts, no names. */
	m = mf("[adapter]\nname = bare\n[model A]\nmatch = A\n");
	ck_assert_ptr_null(xp_manifest_env(m));
	ck_assert_ptr_null(xp_manifest_env(NULL));
	n = xp_manifest_mounts(m, idx, 4, &v);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(v);
	ck_assert_ptr_null(xp_manifest_k8s_resource(m, &m->models[0]));
	ck_assert_ptr_null(xp_manifest_k8s_slice(m, &m->models[0], "x"));
	ck_assert_ptr_null(xp_manifest_slurm_gres(m, NULL));
	xp_manifest_free(m);

	ck_assert(xp_k8s_resource_valid("nvidia.com/mig-1g.10gb"));
	ck_assert(xp_k8s_resource_valid("example.kubernetes.iox/a"));
	ck_assert(!xp_k8s_resource_valid("node.kubernetes.io/a"));
	ck_assert(!xp_k8s_resource_valid("a..b/c"));
	ck_assert(!xp_k8s_resource_valid("a./c"));
	ck_assert(!xp_k8s_resource_valid("a/"));
	ck_assert(!xp_k8s_resource_valid(NULL));
}
END_TEST

/* Every shipped manifest names a task's variable, its control nodes, its Kubernetes resource
 * and its Slurm gres, and parses under the rules above. */
START_TEST(shipped_task_keys)
{
	static const char *const paths[] = {"adapters/nvidia/nvidia.adapter", "adapters/ascend/ascend.adapter",
					    "adapters/amd/amd.adapter", "adapters/cambricon/cambricon.adapter"};
	static const char *const envs[] = {"CUDA_VISIBLE_DEVICES", "ASCEND_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
					   "MLU_VISIBLE_DEVICES"};
	for (size_t i = 0; i < 4; i++) {
		struct xp_err err = {{0}};
		struct xp_manifest *m = xp_manifest_load(paths[i], &err);
		ck_assert_msg(m != NULL, "%s", err.msg);
		ck_assert_str_eq(xp_manifest_env(m), envs[i]);
		ck_assert_msg(m->n_control_nodes > 0, "%s", paths[i]);
		ck_assert_msg(xp_manifest_k8s_resource(m, NULL) && xp_manifest_slurm_gres(m, NULL), "%s", paths[i]);
		xp_manifest_free(m);
	}
	struct xp_err err = {{0}};
	struct xp_manifest *m = xp_manifest_load("adapters/nvidia/nvidia.adapter", &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	char **v;
	const int idx[] = {1};
	size_t n = xp_manifest_mounts(m, idx, 1, &v);
	ck_assert_uint_eq(n, 4);
	ck_assert_str_eq(v[0], "/dev/nvidia1");
	ck_assert_str_eq(v[1], "/dev/nvidiactl");
	xp_strv_free(v, n);
	xp_manifest_free(m);
	/* AMD: render minors are not a function of the index, so only /dev/kfd. */
	m = xp_manifest_load("adapters/amd/amd.adapter", &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	n = xp_manifest_mounts(m, idx, 1, &v);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(v[0], "/dev/kfd");
	xp_strv_free(v, n);
	ck_assert_str_eq(xp_manifest_k8s_resource(m, xp_manifest_model(m, "DCU xxxx", -1)), "hygon.com/dcunum");
	xp_manifest_free(m);
}
END_TEST

/* The build lists every adapters/NAME folder once, in the order of the manifests' `order`
 * keys (a new vendor is a folder, not a line of code); a manifest without one stands at 500. */
START_TEST(adapter_order)
{
	struct xp_err err = {{0}};
	const char *text = "[adapter]\nname = x\norder = 7\n";
	struct xp_manifest *m = xp_manifest_parse(text, strlen(text), "m.adapter", &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	ck_assert_int_eq(m->order, 7);
	xp_manifest_free(m);
	text = "[adapter]\nname = x\n";
	m = xp_manifest_parse(text, strlen(text), "m.adapter", &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	ck_assert_int_eq(m->order, 500);
	xp_manifest_free(m);

	static const char *const names[] = XP_ADAPTER_NAMES;
	ck_assert_uint_eq(sizeof names / sizeof names[0], XP_ADAPTER_COUNT);
	int last = -1;
	for (size_t i = 0; i < XP_ADAPTER_COUNT; i++) {
		char path[256];
		snprintf(path, sizeof path, "adapters/%s/%s.adapter", names[i], names[i]);
		m = xp_manifest_load(path, &err);
		ck_assert_msg(m != NULL, "%s", err.msg);
		ck_assert_str_eq(m->name, names[i]);
		ck_assert_msg(m->order >= last, "%s (order %d) listed after order %d", names[i], m->order, last);
		last = m->order;
		xp_manifest_free(m);
	}
	/* Every vendor folder is in the list. */
	DIR *d = opendir("adapters");
	ck_assert_ptr_nonnull(d);
	size_t folders = 0;
	for (struct dirent *e; (e = readdir(d));) {
		char path[2 * sizeof e->d_name + 32];
		snprintf(path, sizeof path, "adapters/%s/%s.adapter", e->d_name, e->d_name);
		if (e->d_name[0] != '.' && access(path, R_OK) == 0)
			folders++;
	}
	closedir(d);
	ck_assert_uint_eq(folders, XP_ADAPTER_COUNT);
	/* The shipped order: the order xpool has always tried them in. */
	ck_assert_str_eq(names[0], "nvidia");
	ck_assert_str_eq(names[XP_ADAPTER_COUNT - 1], "cambricon");
}
END_TEST

XP_DEFINE_SUITE(manifest,
	{"core",
	 .tests = {parse_full, versions_and_globs, parse_errors, ecu_affinity_links,
		   health_thresholds, task_keys, shipped_task_keys, adapter_order}})
