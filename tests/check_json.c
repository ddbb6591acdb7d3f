/* check_json.c: the inventory document: exact round trips and the rejection of
 * bad documents, each error naming the JSON path of the offending value. */
#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "jsonpull.h"
#include "model_json.h"
#include "snapshot.h"
#include "suitelib.h"
#include "testlib.h"
#include "xp.h"

/* ---- building blocks ---- */

static void rich_device0(struct xp_node *n)
{
	struct xp_device *d = xp_node_add_device(n);
	d->vendor = xp_strdup("NVIDIA");
	d->model = xp_strdup("Tesla V100-SXM2-32GB");
	d->arch = xp_strdup("Volta");
	d->uuid = xp_strdup("GPU-6d3c1f2a-0000-4c8e-9d1e-0123456789ab");
	d->pci_bus_id = xp_strdup("0000:3b:00.0");
	d->pci_id = xp_strdup("10de:1db5");
	d->pci_class = 0x0302;
	xp_strv_add(&d->pci_path, &d->n_pci_path, "0000:3a:00.0");
	xp_strv_add(&d->pci_path, &d->n_pci_path, "0000:3a:02.0");
	xp_strv_add(&d->os_devices, &d->n_os_devices, "cuda0");
	xp_strv_add(&d->os_devices, &d->n_os_devices, "nvml0");
	d->numa = 0;
	d->vendor_index = 3;
	d->driver = xp_strdup("535.104.05");
	d->firmware = xp_strdup("88.00.4f.00.09");
	d->runtime = xp_strdup("CUDA 12.2");
	d->memory_mib = 32768;
	d->memory_used_mib = 0;
	d->peaks = calloc(2, sizeof *d->peaks);
	d->n_peaks = 2;
	d->peaks[0] = (struct xp_peak){xp_strdup("fp16"), 989.4, xp_strdup("TFLOPS")};
	d->peaks[1] = (struct xp_peak){xp_strdup("fp64"), 0.1, xp_strdup("TFLOPS")};
	d->ecu = 0.1 + 0.2; /* not the double nearest 0.3: needs all 17 digits */
	d->mem_access = XP_MEM_EXPLICIT;
	d->affinity_group = xp_strdup("pcie:0000:3a:00.0");
	d->health = XP_HEALTH_WARN;
	xp_strv_add(&d->health_reasons, &d->n_health_reasons, "ecc: 3 corrected");
	xp_strv_add(&d->health_reasons, &d->n_health_reasons, "temperature near limit");
	d->temperature_c = -40.25;
	d->power_w = 989.4;
	d->utilization_pct = 100;
	d->ecc_corrected = 3;
	d->ecc_uncorrected = 0;
	d->partition = XP_PART_WHOLE | XP_PART_SHARE;
}

static void rich_device1(struct xp_node *n)
{
	struct xp_device *d = xp_node_add_device(n);
	d->vendor = xp_strdup("Huawei");
	d->model = xp_strdup("Ascend 910B \"quoted\" \xc3\xa9t\xc3\xa9");
	d->pci_class = 0x1200;
	d->numa = 65535;
	d->memory_mib = 65536;
	d->memory_used_mib = 12000;
	d->mem_access = XP_MEM_UNIFIED;
	d->health = XP_HEALTH_FAIL;
	d->temperature_c = 300;
	d->power_w = 0;
	d->utilization_pct = 0.1;
	d->ecu = 0;
	d->ecc_corrected = 9007199254740993LL; /* above 2^53: must stay an exact integer */
	d->partition = XP_PART_MIG | XP_PART_VNPU;
	d->allocs = calloc(2, sizeof *d->allocs);
	d->n_allocs = 2;
	d->allocs[0] = (struct xp_alloc){xp_strdup("vir02"), xp_strdup("job-17"), 16384, 50};
	d->allocs[1] = (struct xp_alloc){NULL, NULL, -1, 0};
}

static void rich_tables(struct xp_node *n)
{
	struct xp_package *k = xp_node_add_package(n);
	k->id = 0, k->cores = 64, k->pus = 128;
	k->model = xp_strdup("AMD EPYC 7742 64-Core Processor");
	k->cpus = xp_strdup("0-63,128-191");
	k = xp_node_add_package(n);
	k->id = 1, k->cores = 64, k->pus = 128;

	struct xp_numa *m = xp_node_add_numa(n);
	m->id = 0, m->memory_mib = 515945, m->package = 0;
	m->cpus = xp_strdup("0-63,128-191");
	m = xp_node_add_numa(n);
	m->id = 1; /* memory and package unknown */

	struct xp_nic *c = xp_node_add_nic(n);
	c->name = xp_strdup("ib0");
	c->pci_bus_id = xp_strdup("0000:5e:00.0");
	c->rdma = xp_strdup("mlx5_0");
	c->address = xp_strdup("80:00:02:08:fe:80:00:00");
	c->numa = 0, c->speed_mbps = 200000;
	c = xp_node_add_nic(n);
	c->name = xp_strdup("docker0");

	struct xp_pci *p = xp_node_add_pci(n);
	p->bus_id = xp_strdup("0000:3b:00.0");
	p->pci_id = xp_strdup("10de:1db5");
	p->pci_class = 0x0302, p->numa = 0, p->accel = 0;
	p->name = xp_strdup("NVIDIA Corporation GV100GL");
	xp_strv_add(&p->os_devices, &p->n_os_devices, "cuda0");
	p = xp_node_add_pci(n);
	p->bus_id = xp_strdup("0000:5e:00.0");
	p->pci_class = 0x0207, p->accel = -1;
	xp_strv_add(&p->os_devices, &p->n_os_devices, "ib0");
	xp_strv_add(&p->os_devices, &p->n_os_devices, "mlx5_0");
	p = xp_node_add_pci(n);
	p->bus_id = xp_strdup("0000:af:00.0");
	p->accel = 1;
}

static void rich_links(struct xp_node *n)
{
	xp_node_links_reset(n);
	struct xp_link nv = {XP_LINK_NVLINK, 18}, sys = {XP_LINK_SYS, 0}, hccs = {XP_LINK_HCCS, 4};
	*xp_node_link(n, 0, 1) = *xp_node_link(n, 1, 0) = nv;
	*xp_node_link(n, 0, 2) = *xp_node_link(n, 2, 0) = sys;
	*xp_node_link(n, 1, 2) = *xp_node_link(n, 2, 1) = hccs;
}

/* Node "conan" sets every field; devices[2] and node "tiny" leave everything unknown. */
static struct xp_cluster *rich_cluster(void)
{
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *n = xp_node_new("conan");
	n->source = xp_strdup("local");
	n->state = XP_NODE_DEGRADED;
	n->age_s = 12;
	xp_labels_set(&n->facts, "vendor", "NVIDIA");
	xp_labels_set(&n->facts, "gpu.model", "V100");
	xp_labels_set(&n->governance, "pool", "train");
	xp_labels_set(&n->validation, "nccl", "pass");
	n->zone = xp_strdup("eu-1");
	n->rack = xp_strdup("r12");
	n->sw = xp_strdup("leaf-3");
	n->cpu_model = xp_strdup("AMD EPYC 7742 64-Core Processor");
	n->packages_n = 2, n->cores = 128, n->pus = 256, n->pus_allowed = 240;
	n->memory_mib = 1031891;
	rich_tables(n);
	rich_device0(n);
	rich_device1(n);
	xp_node_add_device(n);
	rich_links(n);
	n->cost_per_hour = 32.77;
	xp_cluster_add(c, n);

	n = xp_node_new("tiny");
	n->state = XP_NODE_DOWN;
	xp_cluster_add(c, n);
	c->generation = 42;
	return c;
}

static char *to_text(const struct xp_cluster *c, int pretty)
{
	char *buf = NULL;
	size_t len = 0;
	struct xp_err err = {{0}};
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(xp_cluster_write(c, f, pretty, &err), 0);
	fclose(f);
	ck_assert_uint_gt(len, 0);
	ck_assert_int_eq(buf[len - 1], '\n');
	return buf;
}

static struct xp_cluster *parse_ok(const char *text)
{
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_cluster_parse(text, strlen(text), "t.json", &err);
	ck_assert_msg(c != NULL, "rejected: %s", err.msg);
	return c;
}

/* Asserts text is rejected with a message that starts with want. */
static void parse_bad(const char *text, size_t len, const char *want)
{
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_cluster_parse(text, len, "t.json", &err);
	ck_assert_msg(c == NULL, "accepted, wanted \"%s\"", want);
	ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "error \"%s\", wanted \"%s\"",
		      err.msg, want);
}

/* ---- round trips ---- */

START_TEST(test_round_trip)
{
	struct xp_cluster *c = rich_cluster();
	char *t1 = to_text(c, 0);
	struct xp_cluster *c2 = parse_ok(t1);
	char *t2 = to_text(c2, 0);
	ck_assert_str_eq(t1, t2);

	json_t *d1 = xp_cluster_to_json(c), *d2 = xp_cluster_to_json(c2);
	ck_assert(json_equal(d1, d2));
	json_decref(d1);
	json_decref(d2);

	/* The same document, indented, decodes to the same model. */
	char *tp = to_text(c2, 1);
	ck_assert(strchr(tp, '\n') < tp + strlen(tp) - 1);
	struct xp_cluster *c3 = parse_ok(tp);
	char *t3 = to_text(c3, 0);
	ck_assert_str_eq(t1, t3);

	free(t1);
	free(t2);
	free(tp);
	free(t3);
	xp_cluster_free(c);
	xp_cluster_free(c2);
	xp_cluster_free(c3);
}
END_TEST

/* The round trip above could pass with a decoder that drops a field in both
 * passes' input; check the decoded values themselves. */
START_TEST(test_round_trip_values)
{
	struct xp_cluster *c = rich_cluster();
	char *t = to_text(c, 0);
	struct xp_cluster *r = parse_ok(t);
	ck_assert_uint_eq(r->generation, 42);
	ck_assert_uint_eq(r->n_nodes, 2);
	struct xp_node *n = xp_cluster_node(r, "conan");
	ck_assert_ptr_nonnull(n);
	ck_assert_str_eq(n->source, "local");
	ck_assert_int_eq(n->state, XP_NODE_DEGRADED);
	ck_assert_int_eq(n->age_s, 12);
	ck_assert_str_eq(xp_labels_get(&n->facts, "gpu.model"), "V100");
	ck_assert_str_eq(n->facts.keys[0], "vendor");
	ck_assert_str_eq(xp_labels_get(&n->governance, "pool"), "train");
	ck_assert_str_eq(xp_labels_get(&n->validation, "nccl"), "pass");
	ck_assert_str_eq(n->sw, "leaf-3");
	ck_assert_int_eq(n->pus_allowed, 240);
	ck_assert_int_eq(n->memory_mib, 1031891);
	ck_assert_uint_eq(n->n_packages, 2);
	ck_assert_ptr_null(n->packages[1].model);
	ck_assert_int_eq(n->numa[1].memory_mib, -1);
	ck_assert_int_eq(n->numa[1].package, -1);
	ck_assert_str_eq(n->nics[0].rdma, "mlx5_0");
	ck_assert_int_eq(n->nics[0].speed_mbps, 200000);
	ck_assert_int_eq(n->nics[1].speed_mbps, -1);
	ck_assert_int_eq(n->pci[1].pci_class, 0x0207);
	ck_assert_int_eq(n->pci[2].pci_class, -1);
	ck_assert_int_eq(n->pci[2].accel, 1);
	ck_assert_uint_eq(n->pci[1].n_os_devices, 2);
	ck_assert(n->cost_per_hour == 32.77);

	ck_assert_uint_eq(n->n_devices, 3);
	struct xp_device *d = &n->devices[0];
	ck_assert_int_eq(d->vendor_index, 3);
	ck_assert_int_eq(d->pci_class, 0x0302);
	ck_assert_str_eq(d->pci_path[1], "0000:3a:02.0");
	ck_assert(d->peaks[0].value == 989.4);
	ck_assert(d->peaks[1].value == 0.1);
	ck_assert(d->ecu == 0.1 + 0.2);
	ck_assert(d->power_w == 989.4);
	ck_assert(d->temperature_c == -40.25);
	ck_assert_uint_eq(d->partition, XP_PART_WHOLE | XP_PART_SHARE);
	ck_assert_str_eq(d->health_reasons[1], "temperature near limit");
	d = &n->devices[1];
	ck_assert_str_eq(d->model, "Ascend 910B \"quoted\" \xc3\xa9t\xc3\xa9");
	ck_assert_int_eq(d->ecc_corrected, 9007199254740993LL);
	ck_assert_int_eq(d->ecc_uncorrected, -1);
	ck_assert(d->utilization_pct == 0.1);
	ck_assert_uint_eq(d->partition, XP_PART_MIG | XP_PART_VNPU);
	ck_assert_int_eq(d->mem_access, XP_MEM_UNIFIED);
	ck_assert_uint_eq(d->n_allocs, 2);
	ck_assert_str_eq(d->allocs[0].owner, "job-17");
	ck_assert_int_eq(d->allocs[0].share_pct, 50);
	ck_assert_ptr_null(d->allocs[1].slice);
	ck_assert_int_eq(d->allocs[1].memory_mib, -1);
	d = &n->devices[2];
	ck_assert_int_eq(d->index, 2);
	ck_assert_int_eq(d->numa, -1);
	ck_assert(!XP_HAS(d->temperature_c) && !XP_HAS(d->ecu));
	ck_assert_uint_eq(d->partition, XP_PART_WHOLE);
	ck_assert_int_eq(xp_node_link(n, 1, 0)->cls, XP_LINK_NVLINK);
	ck_assert_int_eq(xp_node_link(n, 1, 0)->count, 18);
	ck_assert_int_eq(xp_node_link(n, 2, 1)->cls, XP_LINK_HCCS);
	ck_assert_int_eq(xp_node_link(n, 2, 1)->count, 4);
	ck_assert_int_eq(xp_node_link(n, 2, 2)->cls, XP_LINK_SELF);

	n = r->nodes[1];
	ck_assert_str_eq(n->name, "tiny");
	ck_assert_int_eq(n->state, XP_NODE_DOWN);
	ck_assert_ptr_null(n->links);
	ck_assert(!XP_HAS(n->cost_per_hour));
	free(t);
	xp_cluster_free(c);
	xp_cluster_free(r);
}
END_TEST

/* Scripts rely on every key being present, with fixed spellings. */
START_TEST(test_encoding_shape)
{
	struct xp_cluster *c = rich_cluster();
	char *t = to_text(c, 0);
	ck_assert_ptr_eq(strstr(t, "{\"schema\":\"xpool.inventory/v1\",\"generation\":42,"), t);
	ck_assert_ptr_nonnull(strstr(t, "\"pci_class\":\"0302\""));
	ck_assert_ptr_nonnull(strstr(t, "\"pci_class\":\"1200\""));
	ck_assert_ptr_nonnull(strstr(t, "\"partition\":[\"whole\",\"share\"]"));
	ck_assert_ptr_nonnull(strstr(t, "\"partition\":[\"mig\",\"vnpu\"]"));
	ck_assert_ptr_nonnull(strstr(t, "[\"X\",\"NV18\",\"SYS\"]"));
	ck_assert_ptr_nonnull(strstr(t, "[\"NV18\",\"X\",\"HCCS4\"]"));
	ck_assert_ptr_nonnull(strstr(t, "\"location\":{\"zone\":\"eu-1\",\"rack\":\"r12\","
					"\"switch\":\"leaf-3\"}"));
	ck_assert_ptr_nonnull(strstr(t, "\"links\":[],\"cost_per_hour\":null,\"warnings\":[]}]}\n"));
	ck_assert_ptr_nonnull(strstr(t, "\"ecc_corrected\":9007199254740993,"));
	free(t);

	static const char *const dev_keys[] = {
		"index", "vendor_index", "vendor", "model", "arch", "uuid", "pci_bus_id", "pci_id", "pci_class",
		"pci_path", "os_devices", "numa", "driver", "firmware", "runtime", "memory_mib",
		"memory_used_mib", "peak", "ecu", "ecu_basis", "memory_access", "affinity_group", "health",
		"health_reasons", "temperature_c", "power_w", "power_limit_w", "utilization_pct",
		"ecc_corrected", "ecc_uncorrected", "retired_pages", "partition", "mig_mode", "allocations"};
	json_t *doc = xp_cluster_to_json(c);
	json_t *dev = json_array_get(
		json_object_get(json_array_get(json_object_get(doc, "nodes"), 0), "devices"), 2);
	ck_assert_uint_eq(json_object_size(dev), sizeof dev_keys / sizeof dev_keys[0]);
	for (size_t i = 0; i < sizeof dev_keys / sizeof dev_keys[0]; i++)
		ck_assert_msg(json_object_get(dev, dev_keys[i]), "no key %s", dev_keys[i]);
	ck_assert(json_is_null(json_object_get(dev, "numa")));
	ck_assert(json_is_null(json_object_get(dev, "pci_class")));
	ck_assert(json_is_null(json_object_get(dev, "temperature_c")));
	ck_assert(json_is_null(json_object_get(dev, "mig_mode")));
	ck_assert_str_eq(json_string_value(json_object_get(dev, "health")), "unknown");
	json_t *tiny = json_array_get(json_object_get(doc, "nodes"), 1);
	ck_assert_uint_eq(json_object_size(tiny), 16);
	ck_assert(json_is_null(json_object_get(tiny, "memory_mib")));
	ck_assert_uint_eq(json_object_size(json_object_get(json_object_get(tiny, "labels"),
							   "governance")), 0);
	json_decref(doc);
	xp_cluster_free(c);
}
END_TEST

/* Reals print as short as they can while still reading back exactly. */
START_TEST(test_real_digits)
{
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *n = xp_node_new("n");
	struct xp_device *d = xp_node_add_device(n);
	d->power_w = 989.4;
	d->utilization_pct = 0.1;
	d->temperature_c = 61;
	n->cost_per_hour = 1e-7;
	xp_node_links_reset(n);
	xp_cluster_add(c, n);
	char *t = to_text(c, 0);
	ck_assert_ptr_nonnull(strstr(t, "\"temperature_c\":61.0,\"power_w\":989.4,"
					"\"power_limit_w\":null,\"utilization_pct\":0.1,"));
	ck_assert_ptr_nonnull(strstr(t, "\"cost_per_hour\":1e-7,"));
	struct xp_cluster *r = parse_ok(t);
	ck_assert(r->nodes[0]->devices[0].power_w == 989.4);
	ck_assert(r->nodes[0]->devices[0].utilization_pct == 0.1);
	ck_assert(r->nodes[0]->cost_per_hour == 1e-7);
	char *t2 = to_text(r, 0);
	ck_assert_str_eq(t, t2);
	free(t);
	free(t2);
	xp_cluster_free(r);

	/* One value that needs 17 digits makes the whole document use them. */
	c->nodes[0]->cost_per_hour = 0.1 + 0.2;
	t = to_text(c, 0);
	ck_assert_ptr_nonnull(strstr(t, "\"power_w\":989.39999999999998,"));
	ck_assert_ptr_nonnull(strstr(t, "\"cost_per_hour\":0.30000000000000004,"));
	r = parse_ok(t);
	ck_assert(r->nodes[0]->cost_per_hour == 0.1 + 0.2);
	ck_assert(r->nodes[0]->devices[0].power_w == 989.4);
	free(t);
	xp_cluster_free(r);
	xp_cluster_free(c);
}
END_TEST

/* Strings from sysfs may be any bytes; the document must still be valid JSON. */
START_TEST(test_encode_invalid_utf8)
{
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *n = xp_node_new("n");
	n->cpu_model = xp_strdup("bad\xff\xc3(");
	xp_labels_set(&n->facts, "k\xfe", "v\x80");
	xp_cluster_add(c, n);
	char *t = to_text(c, 0);
	struct xp_cluster *r = parse_ok(t);
	ck_assert_str_eq(r->nodes[0]->cpu_model, "bad\xef\xbf\xbd\xef\xbf\xbd(");
	ck_assert_str_eq(r->nodes[0]->facts.keys[0], "k\xef\xbf\xbd");
	ck_assert_str_eq(r->nodes[0]->facts.values[0], "v\xef\xbf\xbd");
	free(t);
	xp_cluster_free(c);
	xp_cluster_free(r);
}
END_TEST

/* The streaming writer spells exactly what jansson spells from xp_cluster_to_json's tree:
 * escapes, bytes that are not UTF-8, label keys that meet once fixed, reals of every kind. */
static void same_as_tree(const struct xp_cluster *c)
{
	json_t *doc = xp_cluster_to_json(c);
	for (int pretty = 0; pretty < 2; pretty++) {
		size_t flags = JSON_REAL_PRECISION(xp_cluster_real_digits(c)) | (pretty ? JSON_INDENT(2) : JSON_COMPACT);
		char *tree = json_dumps(doc, flags);
		char *want = xp_asprintf("%s\n", tree);
		char *got = to_text(c, pretty);
		ck_assert_str_eq(got, want);
		free(tree);
		free(want);
		free(got);
	}
	json_decref(doc);
}

START_TEST(test_writer_matches_tree)
{
	struct xp_cluster *c = rich_cluster();
	same_as_tree(c);
	struct xp_node *n = xp_node_new("odd \"quoted\" \\ name/\x7f");
	n->cpu_model = xp_strdup("esc\x1b[31m \x01\x1f \b\f\n\r\t bad\xff\xc3( caf\xc3\xa9 \xf0\x9f\x98\x80");
	xp_labels_set(&n->facts, "k\xfe", "first");
	xp_labels_set(&n->facts, "plain", "p");
	xp_labels_set(&n->facts, "k\xff", "second");
	struct xp_device *d = xp_node_add_device(n);
	d->temperature_c = -5.5;
	d->power_w = 1e300;
	d->utilization_pct = 5.0;
	d->ecu = 123456789.125;
	d->peaks = xp_calloc(1, sizeof *d->peaks);
	d->n_peaks = 1;
	d->peaks[0] = (struct xp_peak){xp_strdup("fp8"), NAN, xp_strdup("TFLOPS")};
	xp_node_links_reset(n);
	n->cost_per_hour = 1e-7;
	xp_cluster_add(c, n);
	same_as_tree(c);
	c->nodes[2]->cost_per_hour = 0.1 + 0.2;
	same_as_tree(c);
	xp_cluster_free(c);
	c = xp_cluster_new();
	same_as_tree(c);
	/* Each byte that stops the writer's 16-byte scan, at each place in a string. */
	static const char *const stops[] = {"\"", "\\", "\x01", "\x1f", "\n", "\x7f", "\xc3\xa9", "\xff", " "};
	n = xp_node_new("scan");
	xp_cluster_add(c, n);
	for (size_t k = 0; k < sizeof stops / sizeof stops[0]; k++)
		for (int pos = 0; pos <= 40; pos++) {
			free(n->cpu_model);
			n->cpu_model = xp_asprintf("%.*s%s%.*s", pos, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", stops[k],
						   40 - pos, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
			same_as_tree(c);
		}
	xp_cluster_free(c);
}
END_TEST

/* Short decimals take the decoder's own path, the rest strtod: both read what strtod reads. */
START_TEST(test_decode_reals)
{
	static const char *const reals[] = {"989.4", "0.1", "1e-7", "61", "61.0", "0.30000000000000004",
					   "123456789012345.6", "999999999999999", "1.7976931348623157e308",
					   "5e-324", "0.0000000000000000000001", "0.00000000000000000000001",
					   "1E2", "2.5e+3", "0.0", "1e-400", "100000000000000000000000.5"};
	for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
		char *t = xp_asprintf("{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"a\","
				      "\"cost_per_hour\":%s}]}", reals[i]);
		struct xp_cluster *c = parse_ok(t);
		ck_assert_msg(c->nodes[0]->cost_per_hour == strtod(reals[i], NULL), "%s read as %.17g", reals[i],
			      c->nodes[0]->cost_per_hour);
		xp_cluster_free(c);
		free(t);
	}
	const char *neg = "{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"a\",\"devices\":[{\"temperature_c\":-12.25}]}]}";
	struct xp_cluster *c = parse_ok(neg);
	ck_assert(c->nodes[0]->devices[0].temperature_c == -12.25);
	xp_cluster_free(c);
	/* Integers up to the 64-bit limits, and one past them. */
	const char *max = "{\"schema\":\"xpool.inventory/v1\",\"generation\":9223372036854775807,\"nodes\":[]}";
	c = parse_ok(max);
	ck_assert_uint_eq(c->generation, 9223372036854775807ull);
	xp_cluster_free(c);
	const char *over = "{\"schema\":\"xpool.inventory/v1\",\"generation\":9223372036854775808,\"nodes\":[]}";
	parse_bad(over, strlen(over), "t.json:1:");
	const char *minus = "{\"schema\":\"xpool.inventory/v1\",\"generation\":-9223372036854775808,\"nodes\":[]}";
	parse_bad(minus, strlen(minus), "t.json: $.generation: expected a non-negative integer, got -9223372036854775808");
}
END_TEST

/* A key twice in any object is refused as jansson refused it, whoever checks it: a table's
 * field (a bit each), a key with its own code (peak, name), a key nobody knows, a label. */
START_TEST(test_duplicate_keys)
{
	static const char *const objs[] = {
		"{\"name\":\"a\",\"devices\":[{\"vendor\":\"A\",\"model\":\"m\",\"vendor\":\"B\"}]}",
		"{\"name\":\"a\",\"devices\":[{\"memory_mib\":1,\"ecu\":2,\"memory_mib\":1}]}",
		"{\"name\":\"a\",\"devices\":[{\"peak\":[],\"peak\":[]}]}",
		"{\"name\":\"a\",\"devices\":[{\"future\":1,\"future\":1}]}",
		"{\"name\":\"a\",\"devices\":[{\"peak\":[{\"unit\":\"T\",\"precision\":\"x\",\"unit\":\"T\",\"value\":1}]}]}",
		"{\"name\":\"a\",\"name\":\"b\"}",
		"{\"name\":\"a\",\"cost_per_hour\":1,\"age_s\":1,\"cost_per_hour\":1}",
		"{\"name\":\"a\",\"labels\":{\"facts\":{\"k\":\"v\",\"k\":\"w\"}}}",
		"{\"name\":\"a\",\"labels\":{\"facts\":{},\"facts\":{}}}",
		"{\"name\":\"a\",\"cpu\":{\"cores\":1,\"cores\":2}}",
		"{\"name\":\"a\",\"x\":{\"y\":[{\"z\":1,\"z\":2}]}}",
	};
	for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) {
		char *t = xp_asprintf("{\"schema\":\"xpool.inventory/v1\",\"nodes\":[%s]}", objs[i]);
		struct xp_err err = {{0}};
		struct xp_cluster *c = xp_cluster_parse(t, strlen(t), "t.json", &err);
		ck_assert_msg(c == NULL, "accepted %s", objs[i]);
		ck_assert_msg(strncmp(err.msg, "t.json:1:", 9) == 0 && strstr(err.msg, "duplicate object key"),
			      "%s: %s", objs[i], err.msg);
		free(t);
	}
	/* The same keys in sibling objects are no duplicates. */
	struct xp_cluster *c = parse_ok("{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"a\",\"devices\":"
					"[{\"vendor\":\"A\",\"x\":1},{\"vendor\":\"A\",\"x\":1}]},{\"name\":\"b\"}]}");
	ck_assert_uint_eq(c->nodes[0]->n_devices, 2);
	xp_cluster_free(c);
}
END_TEST

/* The tokenizer holds no string longer than XP_JP_MAX_STR, even under a key nobody reads. */
START_TEST(test_string_cap)
{
	const char *head = "{\"schema\":\"xpool.inventory/v1\",\"nodes\":[],\"x\":\"";
	size_t hl = strlen(head);
	for (size_t extra = 0; extra < 2; extra++) {
		size_t n = XP_JP_MAX_STR + extra, len = hl + n + 2;
		char *t = malloc(len + 1);
		memcpy(t, head, hl);
		memset(t + hl, 'x', n);
		memcpy(t + hl + n, "\"}", 3);
		struct xp_err err = {{0}};
		struct xp_cluster *c = xp_cluster_parse(t, len, "t.json", &err);
		if (extra == 0) {
			ck_assert_msg(c != NULL, "%s", err.msg);
			xp_cluster_free(c);
		} else {
			ck_assert_ptr_null(c);
			ck_assert_msg(strncmp(err.msg, "t.json:1:", 9) == 0 && strstr(err.msg, "longer than"), "%s", err.msg);
		}
		free(t);
	}
	/* An array on top is "not an object" only when it is JSON at all. */
	parse_bad("[] x", 4, "t.json:1:");
	parse_bad("[1,]", 4, "t.json:1:");
}
END_TEST

/* Missing keys mean "not known", unknown keys are a newer writer's business. */
START_TEST(test_minimal_and_unknown_keys)
{
	struct xp_cluster *c = parse_ok(
		"{\"schema\":\"xpool.inventory/v1\",\"future\":{\"x\":[1,2]},\"nodes\":["
		"{\"name\":\"a\"},"
		"{\"name\":\"b\",\"gpu_fabric\":7,\"devices\":[{\"new\":true},{}],"
		" \"cpu\":{\"cores\":8,\"smt\":\"on\"},\"labels\":{\"other\":{}}}]}");
	ck_assert_uint_eq(c->n_nodes, 2);
	struct xp_node *a = c->nodes[0], *b = c->nodes[1];
	ck_assert_int_eq(a->state, XP_NODE_UP);
	ck_assert_int_eq(a->memory_mib, -1);
	ck_assert_ptr_null(a->source);
	ck_assert_ptr_null(a->links);
	ck_assert_uint_eq(b->n_devices, 2);
	ck_assert_int_eq(b->devices[1].index, 1);
	ck_assert_int_eq(b->devices[1].memory_mib, -1);
	ck_assert_uint_eq(b->devices[1].partition, XP_PART_WHOLE);
	ck_assert_int_eq(b->cores, 8);
	/* Devices without a matrix still get one: views read any cell. */
	ck_assert_ptr_nonnull(b->links);
	ck_assert_int_eq(xp_node_link(b, 0, 1)->cls, XP_LINK_UNKNOWN);
	ck_assert_int_eq(xp_node_link(b, 1, 1)->cls, XP_LINK_SELF);
	xp_cluster_free(c);

	c = parse_ok("{\"nodes\":[],\"schema\":\"xpool.inventory/v1\"}");
	ck_assert_uint_eq(c->n_nodes, 0);
	xp_cluster_free(c);
}
END_TEST

START_TEST(test_node_alone)
{
	struct xp_cluster *c = rich_cluster();
	json_t *o = xp_node_to_json(c->nodes[0]);
	struct xp_err err = {{0}};
	struct xp_node *n = xp_node_from_json(o, "$.agent", &err);
	ck_assert_msg(n != NULL, "%s", err.msg);
	ck_assert_str_eq(n->name, "conan");
	ck_assert_uint_eq(n->n_devices, 3);
	json_t *o2 = xp_node_to_json(n);
	ck_assert(json_equal(o, o2));
	xp_node_free(n);
	json_decref(o2);

	json_object_set_new(o, "age_s", json_integer(-3));
	ck_assert_ptr_null(xp_node_from_json(o, "$.agent", &err));
	ck_assert_str_eq(err.msg, "$.agent.age_s: expected a non-negative integer, got -3");
	json_decref(o);
	xp_cluster_free(c);
}
END_TEST

/* ---- rejections ---- */

/* Walks "nodes/0/devices/1" from doc (object keys and array indexes). */
static json_t *walk(json_t *doc, const char *spec)
{
	char buf[128], *save = NULL;
	snprintf(buf, sizeof buf, "%s", spec);
	json_t *j = doc;
	for (char *t = strtok_r(buf, "/", &save); t && j; t = strtok_r(NULL, "/", &save))
		j = json_is_array(j) ? json_array_get(j, strtoul(t, NULL, 10)) : json_object_get(j, t);
	ck_assert_msg(j != NULL, "no %s in the document", spec);
	return j;
}

/* Sets (or with v NULL, deletes) key of an object, or an index of an array. */
static void put_at(json_t *parent, const char *key, json_t *v)
{
	if (json_is_array(parent)) {
		size_t i = strtoul(key, NULL, 10);
		if (v)
			json_array_set_new(parent, i, v);
		else
			json_array_remove(parent, i);
	} else if (v) {
		json_object_set_new(parent, key, v);
	} else {
		json_object_del(parent, key);
	}
}

static json_t *rich_doc(void)
{
	struct xp_cluster *c = rich_cluster();
	json_t *doc = xp_cluster_to_json(c);
	xp_cluster_free(c);
	return doc;
}

/* Asserts doc is rejected with a message "PATH: ..."; takes doc's reference. */
static void reject(json_t *doc, const char *path)
{
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_cluster_from_json(doc, &err);
	json_decref(doc);
	ck_assert_msg(c == NULL, "accepted, wanted an error at %s", path);
	size_t n = strlen(path);
	ck_assert_msg(strncmp(err.msg, path, n) == 0 && err.msg[n] == ':' && err.msg[n + 1] == ' ',
		      "error \"%s\" does not name %s", err.msg, path);
}

static const struct bad_case {
	const char *at;    /* where to change the rich document */
	const char *key;   /* key or index there */
	const char *value; /* JSON text; NULL removes the key */
	const char *path;  /* the path the error must name */
} bad_cases[] = {
	{"", "schema", "\"xpool.inventory/v2\"", "$.schema"},
	{"", "schema", NULL, "$.schema"},
	{"", "schema", "1", "$.schema"},
	{"", "nodes", "{}", "$.nodes"},
	{"", "nodes", NULL, "$.nodes"},
	{"", "generation", "-1", "$.generation"},
	{"", "generation", "1.5", "$.generation"},
	{"nodes", "1", "\"tiny\"", "$.nodes[1]"},
	{"nodes/0", "name", NULL, "$.nodes[0].name"},
	{"nodes/1", "name", "\"\"", "$.nodes[1].name"},
	{"nodes/1", "name", "null", "$.nodes[1].name"},
	{"nodes/1", "name", "\"conan\"", "$.nodes[1].name"},
	{"nodes/0", "source", "5", "$.nodes[0].source"},
	{"nodes/0", "state", "\"sleeping\"", "$.nodes[0].state"},
	{"nodes/0", "state", "null", "$.nodes[0].state"},
	{"nodes/0", "age_s", "-1", "$.nodes[0].age_s"},
	{"nodes/0", "age_s", "\"5\"", "$.nodes[0].age_s"},
	{"nodes/0", "memory_mib", "-5", "$.nodes[0].memory_mib"},
	{"nodes/0", "memory_mib", "1e300", "$.nodes[0].memory_mib"},
	{"nodes/0", "memory_mib", "2.0", "$.nodes[0].memory_mib"},
	{"nodes/0", "cpu", "[]", "$.nodes[0].cpu"},
	{"nodes/0/cpu", "cores", "\"64\"", "$.nodes[0].cpu.cores"},
	{"nodes/0/cpu", "pus", "4294967296", "$.nodes[0].cpu.pus"},
	{"nodes/0/cpu", "model", "[]", "$.nodes[0].cpu.model"},
	{"nodes/0", "labels", "\"a=b\"", "$.nodes[0].labels"},
	{"nodes/0/labels", "governance", "[]", "$.nodes[0].labels.governance"},
	{"nodes/0/labels/facts", "vendor", "5", "$.nodes[0].labels.facts.vendor"},
	{"nodes/0/labels/validation", "", "\"x\"", "$.nodes[0].labels.validation."},
	{"nodes/0/location", "rack", "7", "$.nodes[0].location.rack"},
	{"nodes/0/packages/1", "cores", "-1", "$.nodes[0].packages[1].cores"},
	{"nodes/0/numa/1", "id", "-2", "$.nodes[0].numa[1].id"},
	{"nodes/0/numa/1", "id", "65536", "$.nodes[0].numa[1].id"},
	{"nodes/0/numa/1", "id", "0", "$.nodes[0].numa[1].id"},
	{"nodes/0/numa/0", "memory_mib", "true", "$.nodes[0].numa[0].memory_mib"},
	{"nodes/0/numa/0", "package", "-1", "$.nodes[0].numa[0].package"},
	{"nodes/0/numa", "0", "[]", "$.nodes[0].numa[0]"},
	{"nodes/0/nics/0", "numa", "-2", "$.nodes[0].nics[0].numa"},
	{"nodes/0/nics/0", "speed_mbps", "\"fast\"", "$.nodes[0].nics[0].speed_mbps"},
	{"nodes/0/pci/0", "class", "\"302\"", "$.nodes[0].pci[0].class"},
	{"nodes/0/pci/0", "class", "\"03g2\"", "$.nodes[0].pci[0].class"},
	{"nodes/0/pci/0", "class", "770", "$.nodes[0].pci[0].class"},
	{"nodes/0/pci/0", "accelerator", "3", "$.nodes[0].pci[0].accelerator"},
	{"nodes/0/pci/0", "accelerator", "-1", "$.nodes[0].pci[0].accelerator"},
	{"nodes/0/pci/1", "os_devices", "[\"ib0\",5]", "$.nodes[0].pci[1].os_devices[1]"},
	{"nodes/0", "devices", "{}", "$.nodes[0].devices"},
	{"nodes/0/devices", "1", "5", "$.nodes[0].devices[1]"},
	{"nodes/0/devices/1", "index", "0", "$.nodes[0].devices[1].index"},
	{"nodes/0/devices/1", "index", "\"1\"", "$.nodes[0].devices[1].index"},
	{"nodes/0/devices/2", "numa", "\"0\"", "$.nodes[0].devices[2].numa"},
	{"nodes/0/devices/2", "vendor_index", "-2", "$.nodes[0].devices[2].vendor_index"},
	{"nodes/0/devices/2", "vendor_index", "\"3\"", "$.nodes[0].devices[2].vendor_index"},
	{"nodes/0/devices/2", "numa", "-2", "$.nodes[0].devices[2].numa"},
	{"nodes/0/devices/0", "memory_mib", "-1", "$.nodes[0].devices[0].memory_mib"},
	{"nodes/0/devices/1", "memory_used_mib", "1e300", "$.nodes[0].devices[1].memory_used_mib"},
	{"nodes/0/devices/0", "pci_class", "\"03020\"", "$.nodes[0].devices[0].pci_class"},
	{"nodes/0/devices/0", "pci_path", "\"0000:3a:00.0\"", "$.nodes[0].devices[0].pci_path"},
	{"nodes/0/devices/1", "utilization_pct", "150", "$.nodes[0].devices[1].utilization_pct"},
	{"nodes/0/devices/1", "utilization_pct", "-0.5", "$.nodes[0].devices[1].utilization_pct"},
	{"nodes/0/devices/1", "utilization_pct", "\"50%\"", "$.nodes[0].devices[1].utilization_pct"},
	{"nodes/0/devices/1", "temperature_c", "300.5", "$.nodes[0].devices[1].temperature_c"},
	{"nodes/0/devices/1", "temperature_c", "-101", "$.nodes[0].devices[1].temperature_c"},
	{"nodes/0/devices/1", "power_w", "-1", "$.nodes[0].devices[1].power_w"},
	{"nodes/0/devices/1", "ecu", "-0.1", "$.nodes[0].devices[1].ecu"},
	{"nodes/0/devices/1", "ecc_uncorrected", "1.5", "$.nodes[0].devices[1].ecc_uncorrected"},
	{"nodes/0/devices/1", "health", "\"broken\"", "$.nodes[0].devices[1].health"},
	{"nodes/0/devices/1", "memory_access", "\"shared\"", "$.nodes[0].devices[1].memory_access"},
	{"nodes/0/devices/1", "partition", "\"whole\"", "$.nodes[0].devices[1].partition"},
	{"nodes/0/devices/1/partition", "1", "\"slice\"", "$.nodes[0].devices[1].partition[1]"},
	{"nodes/0/devices/0/health_reasons", "0", "null", "$.nodes[0].devices[0].health_reasons[0]"},
	{"nodes/0/devices/0/peak/1", "value", "\"fast\"", "$.nodes[0].devices[0].peak[1].value"},
	{"nodes/0/devices/0/peak", "0", "5", "$.nodes[0].devices[0].peak[0]"},
	{"nodes/0/devices/1/allocations/0", "share", "101",
	 "$.nodes[0].devices[1].allocations[0].share"},
	{"nodes/0/devices/1/allocations/1", "memory_mib", "-1",
	 "$.nodes[0].devices[1].allocations[1].memory_mib"},
	{"nodes/0", "links", "[[\"X\"]]", "$.nodes[0].links"},
	{"nodes/0", "links", "{}", "$.nodes[0].links"},
	{"nodes/0/links", "2", "[\"SYS\",\"HCCS4\"]", "$.nodes[0].links[2]"},
	{"nodes/0/links", "2", "\"SYS\"", "$.nodes[0].links[2]"},
	{"nodes/0/links/1", "1", "\"PIX\"", "$.nodes[0].links[1][1]"},
	{"nodes/0/links/0", "1", "\"X\"", "$.nodes[0].links[0][1]"},
	{"nodes/0/links/0", "2", "\"QPI\"", "$.nodes[0].links[0][2]"},
	{"nodes/0/links/0", "2", "7", "$.nodes[0].links[0][2]"},
	{"nodes/0/links/1", "2", "\"HCCS2\"", "$.nodes[0].links[2][1]"},
	{"nodes/0/links/2", "0", "\"PIX\"", "$.nodes[0].links[2][0]"},
	{"nodes/1", "links", "[[\"X\"]]", "$.nodes[1].links"},
	{"nodes/0", "cost_per_hour", "-1", "$.nodes[0].cost_per_hour"},
	{"nodes/0", "cost_per_hour", "\"1$\"", "$.nodes[0].cost_per_hour"},
};

/* An allocation's share null is the whole device, as the manual says (and as 0 is). */
START_TEST(test_share_null)
{
	json_t *doc = rich_doc();
	put_at(walk(doc, "nodes/0/devices/1/allocations/1"), "share", json_null());
	char *text = json_dumps(doc, 0);
	struct xp_cluster *c = parse_ok(text);
	const struct xp_device *d = &xp_cluster_node(c, "conan")->devices[1];
	ck_assert_uint_ge(d->n_allocs, 2);
	ck_assert_int_eq(d->allocs[1].share_pct, 0);
	xp_cluster_free(c);
	free(text);
	json_decref(doc);
}
END_TEST

START_TEST(test_reject_case)
{
	const struct bad_case *bc = &bad_cases[_i];
	json_t *doc = rich_doc();
	json_t *v = NULL;
	if (bc->value) {
		json_error_t je;
		v = json_loads(bc->value, JSON_DECODE_ANY, &je);
		ck_assert_msg(v != NULL, "bad test value %s", bc->value);
	}
	put_at(*bc->at ? walk(doc, bc->at) : doc, bc->key, v);
	reject(doc, bc->path);
}
END_TEST

START_TEST(test_reject_messages)
{
	/* Full messages for a few cases, as users see them. */
	struct xp_err err = {{0}};
	json_t *doc = rich_doc();
	json_object_set_new(walk(doc, "nodes/0/devices/2"), "numa", json_string("0"));
	ck_assert_ptr_null(xp_cluster_from_json(doc, &err));
	ck_assert_str_eq(err.msg, "$.nodes[0].devices[2].numa: expected an integer or null, "
				  "got a string");
	json_object_set_new(walk(doc, "nodes/0/devices/2"), "numa", json_integer(-2));
	ck_assert_ptr_null(xp_cluster_from_json(doc, &err));
	ck_assert_str_eq(err.msg, "$.nodes[0].devices[2].numa: expected an integer from 0 to "
				  "65535 or null, got -2");
	json_object_set_new(walk(doc, "nodes/0/devices/2"), "numa", json_null());
	json_object_set_new(walk(doc, "nodes/1"), "name", json_string("conan"));
	ck_assert_ptr_null(xp_cluster_from_json(doc, &err));
	ck_assert_str_eq(err.msg, "$.nodes[1].name: duplicate node name \"conan\" (also "
				  "$.nodes[0])");
	json_object_set_new(walk(doc, "nodes/1"), "name", json_string("tiny"));
	json_array_set_new(walk(doc, "nodes/0/links/1"), 0, json_string("PIX"));
	ck_assert_ptr_null(xp_cluster_from_json(doc, &err));
	ck_assert_str_eq(err.msg, "$.nodes[0].links[1][0]: \"PIX\" differs from [0][1] \"NV18\"; "
				  "links are symmetric");
	json_decref(doc);

	json_t *top = json_array();
	ck_assert_ptr_null(xp_cluster_from_json(top, &err));
	ck_assert_str_eq(err.msg, "$: expected an object, got an array");
	json_decref(top);
}
END_TEST

static char *repeat(const char *unit, size_t n)
{
	size_t k = strlen(unit);
	char *s = malloc(k * n + 1);
	for (size_t i = 0; i < n; i++)
		memcpy(s + i * k, unit, k);
	s[k * n] = '\0';
	return s;
}

START_TEST(test_reject_limits)
{
	/* More devices than a node may hold. */
	json_t *doc = rich_doc(), *devs = json_array();
	for (int i = 0; i < XP_MAX_DEVICES + 1; i++)
		json_array_append_new(devs, json_object());
	json_object_set_new(walk(doc, "nodes/1"), "devices", devs);
	reject(doc, "$.nodes[1].devices");

	/* Exactly the limit is fine. */
	doc = rich_doc();
	devs = json_array();
	for (int i = 0; i < XP_MAX_DEVICES; i++)
		json_array_append_new(devs, json_object());
	json_object_set_new(walk(doc, "nodes/1"), "devices", devs);
	json_object_del(walk(doc, "nodes/1"), "links");
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_cluster_from_json(doc, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	ck_assert_uint_eq(c->nodes[1]->n_devices, XP_MAX_DEVICES);
	ck_assert_int_eq(xp_node_link(c->nodes[1], 1023, 1023)->cls, XP_LINK_SELF);
	xp_cluster_free(c);
	json_decref(doc);

	doc = rich_doc();
	json_t *numa = json_array();
	for (int i = 0; i < XP_MAX_NUMA + 1; i++) {
		json_t *m = json_object();
		json_object_set_new(m, "id", json_integer(i));
		json_array_append_new(numa, m);
	}
	json_object_set_new(walk(doc, "nodes/1"), "numa", numa);
	reject(doc, "$.nodes[1].numa");

	/* Names: 255 bytes are fine, 256 are not; other strings stop at XP_MAX_STRING. */
	char *name = repeat("n", 255);
	doc = rich_doc();
	json_object_set_new(walk(doc, "nodes/1"), "name", json_string(name));
	c = xp_cluster_from_json(doc, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	xp_cluster_free(c);
	free(name);
	name = repeat("n", 256);
	json_object_set_new(walk(doc, "nodes/1"), "name", json_string(name));
	reject(doc, "$.nodes[1].name");
	free(name);

	char *big = repeat("x", XP_MAX_STRING + 1);
	doc = rich_doc();
	json_object_set_new(walk(doc, "nodes/0/devices/0"), "driver", json_string(big));
	reject(doc, "$.nodes[0].devices[0].driver");
	big[XP_MAX_STRING] = '\0';
	doc = rich_doc();
	json_object_set_new(walk(doc, "nodes/0/devices/0"), "driver", json_string(big));
	c = xp_cluster_from_json(doc, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	ck_assert_uint_eq(strlen(c->nodes[0]->devices[0].driver), XP_MAX_STRING);
	xp_cluster_free(c);
	json_decref(doc);
	free(big);
}
END_TEST

/* A C string would silently end at the NUL, so "co\0nan" must not become "co". */
START_TEST(test_reject_nul)
{
	json_t *doc = rich_doc();
	json_object_set_new(walk(doc, "nodes/0"), "name", json_stringn("co\0nan", 6));
	reject(doc, "$.nodes[0].name");

	doc = rich_doc();
	json_object_set_new(walk(doc, "nodes/0/devices/1"), "uuid", json_stringn("a\0", 2));
	reject(doc, "$.nodes[0].devices[1].uuid");

	doc = rich_doc();
	json_object_set_new(walk(doc, "nodes/0/devices/1"), "health", json_stringn("ok\0x", 4));
	reject(doc, "$.nodes[0].devices[1].health");

	doc = rich_doc();
	json_object_set_new(walk(doc, "nodes/0/labels/facts"), "vendor", json_stringn("N\0", 2));
	reject(doc, "$.nodes[0].labels.facts.vendor");

	doc = rich_doc();
	json_object_setn_new(walk(doc, "nodes/0/labels/facts"), "ke\0y", 4, json_string("v"));
	reject(doc, "$.nodes[0].labels.facts.ke");

	doc = rich_doc();
	json_array_set_new(walk(doc, "nodes/0/links/0"), 1, json_stringn("NV18\0", 5));
	reject(doc, "$.nodes[0].links[0][1]");

	/* In text, jansson itself refuses \u0000 (we do not pass JSON_ALLOW_NUL). */
	const char *t = "{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"co\\u0000nan\"}]}";
	parse_bad(t, strlen(t), "t.json:1:");
}
END_TEST

/* ---- text ---- */

START_TEST(test_parse_errors)
{
	struct xp_cluster *c = rich_cluster();
	char *t = to_text(c, 1);
	xp_cluster_free(c);
	size_t n = strlen(t);

	parse_bad(t, n / 2, "t.json:"); /* truncated */
	parse_bad("", 0, "t.json:");
	parse_bad(NULL, 0, "t.json:");
	parse_bad("   \n", 4, "t.json:");
	parse_bad("42", 2, "t.json:1:");
	parse_bad("[]", 2, "t.json: $: expected an object, got an array");
	const char *trailing = "{\"schema\":\"xpool.inventory/v1\",\"nodes\":[]} x";
	parse_bad(trailing, strlen(trailing), "t.json:1:");
	const char *dup = "{\"schema\":\"xpool.inventory/v1\",\"schema\":\"xpool.inventory/v1\","
			  "\"nodes\":[]}";
	parse_bad(dup, strlen(dup), "t.json:1:");
	/* Length is honoured: the tail after len is not read. */
	const char *ok = "{\"schema\":\"xpool.inventory/v1\",\"nodes\":[]}garbage";
	struct xp_err err = {{0}};
	c = xp_cluster_parse(ok, strlen(ok) - 7, "t.json", &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	xp_cluster_free(c);

	/* Syntax errors give line and column. */
	const char *lines = "{\n\"schema\": \"xpool.inventory/v1\",\n\"nodes\": [,]\n}";
	parse_bad(lines, strlen(lines), "t.json:3:");
	/* Validation errors name the file, then the path. */
	const char *v = "{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"a\","
			"\"devices\":[{\"numa\":\"x\"}]}]}";
	parse_bad(v, strlen(v), "t.json: $.nodes[0].devices[0].numa: expected an integer or null");
	/* An integer too big for 64 bits is a syntax error in jansson; 1e300 a real. */
	const char *huge = "{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"a\","
			   "\"memory_mib\":123456789012345678901234567890}]}";
	parse_bad(huge, strlen(huge), "t.json:1:");
	const char *real = "{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"a\","
			   "\"age_s\":1e300}]}";
	parse_bad(real, strlen(real), "t.json: $.nodes[0].age_s: expected an integer, got a real number");
	free(t);
}
END_TEST

START_TEST(test_deep_nesting)
{
	/* jansson stops at its depth limit instead of recursing 100000 frames. */
	char *deep = repeat("[", 100000);
	parse_bad(deep, strlen(deep), "t.json:1:");
	free(deep);

	/* Deep, but within the limit, under an unknown key: parsed and ignored. */
	char *open = repeat("[", 1000), *close = repeat("]", 1000);
	char *doc = xp_asprintf("{\"schema\":\"xpool.inventory/v1\",\"x\":%s%s,\"nodes\":[]}",
				open, close);
	struct xp_cluster *c = parse_ok(doc);
	ck_assert_uint_eq(c->n_nodes, 0);
	xp_cluster_free(c);
	free(open);
	free(close);
	free(doc);

	char *objs = repeat("{\"a\":", 100000);
	parse_bad(objs, strlen(objs), "t.json:1:");
	free(objs);
}
END_TEST

/* ---- snapshot files ---- */

START_TEST(test_snapshot_load)
{
	struct xp_cluster *c = rich_cluster();
	char *t = to_text(c, 1);
	char *path = xp_tmpfile(t, strlen(t));
	struct xp_err err = {{0}};
	struct xp_cluster *s = xp_snapshot_load(path, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	char *t2 = to_text(s, 1);
	ck_assert_str_eq(t, t2);
	xp_cluster_free(s);
	unlink(path);
	free(path);
	free(t2);
	free(t);
	xp_cluster_free(c);
}
END_TEST

START_TEST(test_snapshot_errors)
{
	struct xp_err err = {{0}};
	const char *missing = "/nonexistent/xpool-snapshot.json";
	ck_assert_ptr_null(xp_snapshot_load(missing, &err));
	ck_assert_ptr_eq(strstr(err.msg, missing), err.msg);
	ck_assert_ptr_nonnull(strstr(err.msg, "No such file"));

	ck_assert_ptr_null(xp_snapshot_load("/tmp", &err));
	ck_assert_str_eq(err.msg, "/tmp: is a directory");

	const char *bad = "{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{}]}";
	char *path = xp_tmpfile(bad, strlen(bad));
	ck_assert_ptr_null(xp_snapshot_load(path, &err));
	char *want = xp_asprintf("%s: $.nodes[0].name: missing", path);
	ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
	free(want);
	unlink(path);
	free(path);

	path = xp_tmpfile("{\"schema\":", 10);
	ck_assert_ptr_null(xp_snapshot_load(path, &err));
	want = xp_asprintf("%s:1:", path);
	ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
	free(want);
	unlink(path);
	free(path);
}
END_TEST

/* An allocation's "uuid" (an existing MIG instance's) is optional: read, written back where
 * known, absent where not; a non-string is refused. */
START_TEST(test_alloc_uuid)
{
	json_t *doc = rich_doc();
	put_at(walk(doc, "nodes/0/devices/1/allocations/0"), "uuid", json_string("MIG-00000003-0000-0000-0000-000000000003"));
	char *text = json_dumps(doc, 0);
	struct xp_cluster *c = parse_ok(text);
	const struct xp_device *d = &xp_cluster_node(c, "conan")->devices[1];
	ck_assert_str_eq(d->allocs[0].uuid, "MIG-00000003-0000-0000-0000-000000000003");
	ck_assert_ptr_null(d->allocs[1].uuid);
	json_t *back = xp_cluster_to_json(c);
	json_t *al = json_object_get(json_array_get(json_object_get(json_array_get(json_object_get(back, "nodes"), 0),
								     "devices"), 1), "allocations");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(al, 0), "uuid")),
			 "MIG-00000003-0000-0000-0000-000000000003");
	ck_assert_ptr_null(json_object_get(json_array_get(al, 1), "uuid"));
	json_decref(back);
	xp_cluster_free(c);
	free(text);
	put_at(walk(doc, "nodes/0/devices/1/allocations/0"), "uuid", json_integer(3));
	text = json_dumps(doc, 0);
	struct xp_err err = {{0}};
	c = xp_cluster_parse(text, strlen(text), "t.json", &err);
	ck_assert_ptr_null(c);
	free(text);
	json_decref(doc);
}
END_TEST



/* The digits %.*g needs for v to read back, found by printing (as jansson's users do). */
static int printed_digits(double v)
{
	char b[40];
	for (int p = 15; p < 17; p++) {
		snprintf(b, sizeof b, "%.*g", p, v);
		if (strtod(b, NULL) == v)
			return p;
	}
	return 17;
}

/* Reals the writer spells from their digits (short decimals at 15 digits) and the rest
 * (snprintf) come out as jansson writes them, sign, zeros, the ".0" and the exponent's edge
 * at 1e-4 included. */
START_TEST(test_writer_reals)
{
	static const double vals[] = {0.0, -0.0, 1.0, -1.0, 0.5, 989.4, 1978.9, 69.5, 700.0, 0.1, 0.7, 100.25,
				      -12.25, 0.0001, -0.0001, 0.00012, 0.0000999, 0.001, 1e-5, 123456789012345.0,
				      12345678901234.5, 99999999999999.9, 999999999999999.0, 1e15, 1e16, 1e20,
				      0.30000000000000004, 1.0 / 3, 2.5e-3, 1234.5678, 1e-7, 5e-324, 65536.0,
				      0.000123456789012345, 4503599627370497.0};
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		struct xp_cluster *c = xp_cluster_new();
		struct xp_node *n = xp_node_new("n");
		struct xp_device *d = xp_node_add_device(n);
		/* Alone (the document's precision is its own), and beside a value needing 17. */
		d->power_w = fabs(vals[i]) < 1e300 ? fabs(vals[i]) : 1;
		d->temperature_c = vals[i] >= -100 && vals[i] <= 300 ? vals[i] : 0;
		n->cost_per_hour = fabs(vals[i]);
		xp_node_links_reset(n);
		xp_cluster_add(c, n);
		int want = printed_digits(d->power_w);
		if (printed_digits(d->temperature_c) > want)
			want = printed_digits(d->temperature_c);
		if (printed_digits(n->cost_per_hour) > want)
			want = printed_digits(n->cost_per_hour);
		ck_assert_msg(xp_cluster_real_digits(c) == want, "%.17g: %d digits, not %d", vals[i],
			      xp_cluster_real_digits(c), want);
		same_as_tree(c);
		d = &c->nodes[0]->devices[0];
		d->utilization_pct = 0.1 + 0.2;
		same_as_tree(c);
		xp_cluster_free(c);
	}
	/* Random decimals of 1 to 15 digits with 0 to 6 places. */
	uint64_t x = 88172645463325252ull;
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *n = xp_node_new("r");
	for (int i = 0; i < 64; i++) {
		struct xp_device *d = xp_node_add_device(n);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		int digits = 1 + (int)(x % 15), places = (int)((x >> 8) % 7);
		uint64_t m = (x >> 16) % 1000000000000000ull;
		for (int k = digits; k < 15; k++)
			m /= 10;
		static const double p10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6};
		d->power_w = (double)m / p10[places];
		d->ecu = (double)(m % 100000) / p10[places % 4];
	}
	xp_node_links_reset(n);
	xp_cluster_add(c, n);
	same_as_tree(c);
	xp_cluster_free(c);
}
END_TEST

/* ---- the tokenizer's fast paths ---- */

/* Reads one value from text with the pull tokenizer: from memory, or (ws > 0) from a file
 * whose first ws bytes are spaces, so that the value straddles the reader's 256 KiB chunks. */
static enum xp_jp_type jp_one(const char *text, size_t ws, struct xp_jp *jp, int *fd)
{
	*fd = -1;
	if (!ws) {
		xp_jp_init_mem(jp, text, strlen(text));
		return xp_jp_value(jp);
	}
	size_t n = strlen(text);
	char *buf = xp_malloc(ws + n);
	memset(buf, ' ', ws);
	memcpy(buf + ws, text, n);
	char *path = xp_tmpfile(buf, ws + n);
	*fd = open(path, O_RDONLY);
	ck_assert_int_ge(*fd, 0);
	unlink(path);
	free(path);
	free(buf);
	xp_jp_init_fd(jp, *fd);
	return xp_jp_value(jp);
}

static void jp_done(struct xp_jp *jp, int fd)
{
	xp_jp_free(jp);
	if (fd >= 0)
		close(fd);
}

/* Strings are scanned 16 bytes at a time where 16 remain: whatever stops the scan (an escape,
 * a control byte, DEL, UTF-8 good or bad), wherever it falls in the string or in the chunk,
 * reads as the byte-at-a-time scan read it: the same text, the same "printable", the same
 * error at the same column. */
START_TEST(test_tokenizer_strings)
{
	static const struct {
		const char *in, *out; /* out NULL: refused with msg */
		const char *msg;      /* after "LINE:COLUMN: ", the column being ws + 3 + pos (+ extra) */
		int extra;
	} sp[] = {
		{"", "", NULL, 0},
		{"\\n", "\n", NULL, 0},
		{"\\u00e9", "\xc3\xa9", NULL, 0},
		{"\x7f", "\x7f", NULL, 0},
		{"\xc3\xa9", "\xc3\xa9", NULL, 0},
		{"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", NULL, 0},
		{"\x01", NULL, "control character 0x1 in a string", 0},
		{"\x1f", NULL, "control character 0x1f in a string", 0},
		{"\xff", NULL, "unable to decode byte 0xff", 0},
		{"\xc3" "a", NULL, "unable to decode byte 0xc3", 1},
		{"\\x", NULL, "invalid escape", 1},
	};
	const size_t wss[] = {0, 262144 - 1, 262144 - 7, 262144 - 16, 262144 - 17, 262144 - 30};
	for (size_t w = 0; w < sizeof wss / sizeof wss[0]; w++)
		for (size_t k = 0; k < sizeof sp / sizeof sp[0]; k++)
			for (int pos = 0; pos <= 40; pos += wss[w] ? 5 : 1) {
				char head[41], tail[41];
				memset(head, 'a', (size_t)pos);
				head[pos] = '\0';
				memset(tail, 'b', (size_t)(40 - pos));
				tail[40 - pos] = '\0';
				char *text = xp_asprintf("\"%s%s%s\"", head, sp[k].in, tail);
				struct xp_jp jp;
				int fd;
				enum xp_jp_type t = jp_one(text, wss[w], &jp, &fd);
				if (sp[k].out) {
					char *want = xp_asprintf("%s%s%s", head, sp[k].out, tail);
					ck_assert_msg(t == XP_JP_STRING, "%s (ws %zu): %s", text, wss[w], jp.msg);
					ck_assert_str_eq(jp.str, want);
					ck_assert_uint_eq(jp.str_len, strlen(want));
					ck_assert_int_eq(jp.str_printable, sp[k].in[0] == '\0');
					free(want);
				} else {
					char want[96];
					snprintf(want, sizeof want, "1:%d: %s", (int)wss[w] + 3 + pos + sp[k].extra, sp[k].msg);
					ck_assert_msg(t == XP_JP_ERROR, "%s accepted", text);
					ck_assert_str_eq(jp.msg, want);
				}
				jp_done(&jp, fd);
				free(text);
			}
}
END_TEST

/* Numbers an inventory is made of are read in place; every number reads as strtod (and, for
 * an integer, strtoll) reads it, and a malformed one fails as before, wherever it falls. */
START_TEST(test_tokenizer_numbers)
{
	static const char *const good[] = {
		"0", "-0", "7", "-7", "42", "123456789012345678", "-123456789012345678", "1234567890123456789",
		"9223372036854775807", "-9223372036854775808", "0.5", "-0.5", "989.4", "1978.9", "0.0", "-0.0",
		"123456789012345", "12345678901234.5", "0.00000000000001", "1234567890123456.5",
		"0.30000000000000004", "1.5e3", "1.5E-3", "2e0", "100.25", "69.5", "0.1", "0.7",
	};
	static const char *const ends[] = {"", ",", "]", "}", " ", "\n", "x"};
	const size_t wss[] = {0, 262144 - 1, 262144 - 3, 262144 - 10};
	for (size_t w = 0; w < sizeof wss / sizeof wss[0]; w++)
		for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
			for (size_t e = 0; e < sizeof ends / sizeof ends[0]; e++) {
				char *text = xp_asprintf("%s%s", good[i], ends[e]);
				struct xp_jp jp;
				int fd;
				enum xp_jp_type t = jp_one(text, wss[w], &jp, &fd);
				bool integer = !strpbrk(good[i], ".eE");
				ck_assert_msg(t == (integer ? XP_JP_INTEGER : XP_JP_REAL), "%s: %d %s", text, t, jp.msg);
				double dv = strtod(good[i], NULL);
				/* Bit for bit for a real (-0.0 too); an integer's double is its value ("-0" is 0). */
				ck_assert_msg(integer ? jp.dval == dv : memcmp(&jp.dval, &dv, sizeof dv) == 0,
					      "%s read as %.17g", text, jp.dval);
				if (integer)
					ck_assert_int_eq(jp.ival, strtoll(good[i], NULL, 10));
				/* The byte after it is the next to read. */
				ck_assert_int_eq(jp.col, (int)(wss[w] + 1 + strlen(good[i])));
				jp_done(&jp, fd);
				free(text);
			}
	static const struct {
		const char *in, *msg;
	} bad[] = {
		{"01", "1:2: invalid token"}, {"-01", "1:3: invalid token"}, {"-", "1:2: invalid token"},
		{"1.", "1:3: invalid token"}, {"1.e5", "1:3: invalid token"}, {"1e", "1:3: invalid token"},
		{"1.5e", "1:5: invalid token"}, {"-x", "1:2: invalid token"}, {"1.x", "1:3: invalid token"},
		{"9223372036854775808", "1:20: too big integer"}, {"-9223372036854775809", "1:21: too big negative integer"},
		{"1e999", "1:6: real number overflow"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct xp_jp jp;
		int fd;
		ck_assert_msg(jp_one(bad[i].in, 0, &jp, &fd) == XP_JP_ERROR, "%s accepted", bad[i].in);
		ck_assert_str_eq(jp.msg, bad[i].msg);
		jp_done(&jp, fd);
	}
}
END_TEST

XP_DEFINE_SUITE(json,
	{"round_trip",
	 .tests = {test_round_trip, test_round_trip_values, test_encoding_shape, test_real_digits,
		   test_encode_invalid_utf8, test_minimal_and_unknown_keys, test_tokenizer_strings, test_tokenizer_numbers, test_writer_reals, test_node_alone, test_share_null,
		   test_alloc_uuid, test_writer_matches_tree, test_decode_reals, test_string_cap, test_duplicate_keys}},
	{"reject", .loop = test_reject_case,
	 .loop_n = (int)(sizeof bad_cases / sizeof bad_cases[0]),
	 .tests = {test_reject_messages, test_reject_limits, test_reject_nul, test_parse_errors,
		   test_deep_nesting}},
	{"snapshot", .tests = {test_snapshot_load, test_snapshot_errors}})
