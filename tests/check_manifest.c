/* check_manifest.c: the manifest format, version ranges, globs, and normalization
 * rules that manifests drive (ECU, affinity groups, link merging, NUMA). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"
#include "model.h"
#include "normalize.h"

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
	"template = 1g.10gb memory_mib=10240 compute=1/7 count=7\n"
	"template = 7g.80gb memory_mib=81920 compute=1 count=1\n"
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

Suite *xp_suite_manifest(void);
Suite *xp_suite_manifest(void)
{
	Suite *s = suite_create("manifest");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, parse_full);
	tcase_add_test(tc, versions_and_globs);
	tcase_add_test(tc, parse_errors);
	tcase_add_test(tc, ecu_affinity_links);
	tcase_add_test(tc, health_thresholds);
	suite_add_tcase(s, tc);
	return s;
}
