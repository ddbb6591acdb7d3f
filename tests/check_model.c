/* check_model.c: the resource model's constructors, lookups, labels and name tables. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "istr.h"
#include "model.h"
#include "model_json.h"
#include "normalize.h"
#include "simgen.h"
#include "source.h"
#include "suitelib.h"
#include "testlib.h"
#include "xp.h"

/* A clone is deep and whole: its JSON is the original's, it survives the original, and it
 * grows like any node (the arrays keep the capacity rule append() relies on). */
static void check_clone(struct xp_node *orig)
{
	json_t *a = xp_node_to_json(orig);
	struct xp_node *c = xp_node_clone(orig);
	xp_node_free(orig);
	json_t *b = xp_node_to_json(c);
	ck_assert_msg(json_equal(a, b), "clone of %s differs", c->name);
	for (int i = 0; i < 5; i++)
		xp_node_add_device(c)->vendor = xp_strdup("added");
	xp_strv_add(&c->warnings, &c->n_warnings, "more");
	xp_labels_set(&c->facts, "k", "v");
	json_decref(a);
	json_decref(b);
	xp_node_free(c);
}

START_TEST(test_node_clone)
{
	struct xp_err err = {{0}};
	/* Simulated nodes: slices, allocations, labels, locations, peaks, health reasons. */
	struct xp_cluster *sim = xp_sim_generate(40, NULL, 7, &err);
	ck_assert_msg(sim != NULL, "%s", err.msg);
	for (size_t i = 0; i < sim->n_nodes; i++) {
		check_clone(sim->nodes[i]);
		sim->nodes[i] = NULL;
	}
	xp_cluster_free(sim);
	/* A discovered node: packages, NUMA, NICs, the PCI tree, links. */
	struct xp_source_opts so = {.topology = xp_fixture("hwloc/32em64t-2n8c2t-pci-wholeio.xml")};
	struct xp_cluster *hw = xp_source_load(&so, &err);
	ck_assert_msg(hw != NULL, "%s", err.msg);
	ck_assert_uint_gt(hw->nodes[0]->n_pci, 0);
	check_clone(hw->nodes[0]);
	hw->nodes[0] = NULL;
	xp_cluster_free(hw);
	struct xp_node *empty = xp_node_new("empty");
	check_clone(empty);
}
END_TEST

START_TEST(test_node_defaults)
{
	struct xp_node *n = xp_node_new("conan");
	ck_assert_str_eq(n->name, "conan");
	ck_assert_int_eq(n->state, XP_NODE_UP);
	ck_assert_int_eq(n->memory_mib, -1);
	ck_assert(!XP_HAS(n->cost_per_hour));
	ck_assert_ptr_null(n->source);
	ck_assert_ptr_null(n->links);
	ck_assert_uint_eq(n->n_devices, 0);

	struct xp_device *d = xp_node_add_device(n);
	ck_assert_int_eq(d->index, 0);
	ck_assert_int_eq(d->pci_class, -1);
	ck_assert_int_eq(d->numa, -1);
	ck_assert_int_eq(d->memory_mib, -1);
	ck_assert_int_eq(d->memory_used_mib, -1);
	ck_assert_int_eq(d->ecc_corrected, -1);
	ck_assert_int_eq(d->ecc_uncorrected, -1);
	ck_assert(!XP_HAS(d->ecu));
	ck_assert(!XP_HAS(d->temperature_c));
	ck_assert(!XP_HAS(d->power_w));
	ck_assert(!XP_HAS(d->utilization_pct));
	ck_assert_uint_eq(d->partition, XP_PART_WHOLE);
	ck_assert_int_eq(d->health, XP_HEALTH_UNKNOWN);
	ck_assert_int_eq(d->mem_access, XP_MEM_UNKNOWN);
	ck_assert_int_eq(xp_node_add_device(n)->index, 1);
	ck_assert_int_eq(xp_node_add_device(n)->index, 2);
	ck_assert_uint_eq(n->n_devices, 3);

	struct xp_numa *m = xp_node_add_numa(n);
	ck_assert_int_eq(m->memory_mib, -1);
	ck_assert_int_eq(m->package, -1);
	struct xp_nic *c = xp_node_add_nic(n);
	ck_assert_int_eq(c->numa, -1);
	ck_assert_int_eq(c->speed_mbps, -1);
	struct xp_pci *p = xp_node_add_pci(n);
	ck_assert_int_eq(p->pci_class, -1);
	ck_assert_int_eq(p->numa, -1);
	ck_assert_int_eq(p->accel, -1);
	struct xp_package *k = xp_node_add_package(n);
	ck_assert_int_eq(k->cores, 0);
	ck_assert_ptr_null(k->model);
	xp_node_free(n);
	xp_node_free(NULL);
}
END_TEST

/* Appending past several powers of two must keep earlier elements intact. */
START_TEST(test_node_append_many)
{
	struct xp_node *n = xp_node_new("big");
	for (int i = 0; i < 37; i++) {
		struct xp_device *d = xp_node_add_device(n);
		d->memory_mib = i * 10;
		xp_node_add_numa(n)->id = 100 + i;
	}
	ck_assert_uint_eq(n->n_devices, 37);
	ck_assert_uint_eq(n->n_numa, 37);
	for (int i = 0; i < 37; i++) {
		ck_assert_int_eq(n->devices[i].index, i);
		ck_assert_int_eq(n->devices[i].memory_mib, i * 10);
		ck_assert_int_eq(n->numa[i].id, 100 + i);
	}
	ck_assert_ptr_eq(xp_node_numa_by_id(n, 136), &n->numa[36]);
	ck_assert_ptr_eq(xp_node_numa_by_id(n, 100), &n->numa[0]);
	ck_assert_ptr_null(xp_node_numa_by_id(n, 99));
	xp_node_free(n);
}
END_TEST

START_TEST(test_cluster_lookup)
{
	struct xp_cluster *c = xp_cluster_new();
	ck_assert_uint_eq(c->n_nodes, 0);
	ck_assert_uint_eq(xp_cluster_device_count(c), 0);
	ck_assert_ptr_null(xp_cluster_node(c, "a"));
	uint64_t g0 = c->generation;
	for (int i = 0; i < 9; i++) {
		char name[8];
		snprintf(name, sizeof name, "n%d", i);
		struct xp_node *n = xp_node_new(name);
		for (int k = 0; k < i; k++)
			xp_node_add_device(n);
		xp_cluster_add(c, n);
	}
	ck_assert_uint_eq(c->n_nodes, 9);
	ck_assert_uint_eq(c->generation, g0 + 9);
	ck_assert_uint_eq(xp_cluster_device_count(c), 36);
	ck_assert_ptr_eq(xp_cluster_node(c, "n4"), c->nodes[4]);
	ck_assert_str_eq(xp_cluster_node(c, "n8")->name, "n8");
	ck_assert_ptr_null(xp_cluster_node(c, "n9"));
	ck_assert_ptr_null(xp_cluster_node(c, "N4"));
	xp_cluster_free(c);
	xp_cluster_free(NULL);
}
END_TEST

START_TEST(test_device_by_bus)
{
	struct xp_node *n = xp_node_new("x");
	xp_node_add_device(n)->pci_bus_id = strdup("0000:3b:00.0");
	xp_node_add_device(n); /* no bus id: must be skipped, not crash */
	xp_node_add_device(n)->pci_bus_id = strdup("0000:AF:00.0");
	ck_assert_ptr_eq(xp_node_device_by_bus(n, "0000:3B:00.0"), &n->devices[0]);
	ck_assert_ptr_eq(xp_node_device_by_bus(n, "0000:af:00.0"), &n->devices[2]);
	ck_assert_ptr_null(xp_node_device_by_bus(n, "0000:3b:00.1"));
	xp_node_free(n);
}
END_TEST

START_TEST(test_links_reset)
{
	struct xp_node *n = xp_node_new("x");
	xp_node_links_reset(n);
	ck_assert_ptr_null(n->links);
	for (int i = 0; i < 3; i++)
		xp_node_add_device(n);
	xp_node_links_reset(n);
	ck_assert_ptr_nonnull(n->links);
	for (size_t a = 0; a < 3; a++)
		for (size_t b = 0; b < 3; b++)
			ck_assert_int_eq(xp_node_link(n, a, b)->cls,
					 a == b ? XP_LINK_SELF : XP_LINK_UNKNOWN);
	xp_node_link(n, 0, 2)->cls = XP_LINK_NVLINK;
	xp_node_link(n, 0, 2)->count = 4;
	ck_assert_int_eq(n->links[0 * 3 + 2].cls, XP_LINK_NVLINK);
	ck_assert_int_eq(n->links[2 * 3 + 0].cls, XP_LINK_UNKNOWN);
	/* Growing the device set and resetting must give a fresh, larger matrix. */
	xp_node_add_device(n);
	xp_node_links_reset(n);
	ck_assert_int_eq(xp_node_link(n, 0, 2)->cls, XP_LINK_UNKNOWN);
	ck_assert_int_eq(xp_node_link(n, 3, 3)->cls, XP_LINK_SELF);
	xp_node_free(n);
}
END_TEST

START_TEST(test_labels)
{
	struct xp_labels l = {0};
	ck_assert_ptr_null(xp_labels_get(&l, "pool"));
	xp_labels_set(&l, "pool", "train");
	xp_labels_set(&l, "tenant", "a");
	for (int i = 0; i < 10; i++) {
		char k[8];
		snprintf(k, sizeof k, "k%d", i);
		xp_labels_set(&l, k, k);
	}
	ck_assert_uint_eq(l.n, 12);
	ck_assert_str_eq(xp_labels_get(&l, "pool"), "train");
	ck_assert_str_eq(xp_labels_get(&l, "k9"), "k9");
	xp_labels_set(&l, "pool", "infer");
	ck_assert_uint_eq(l.n, 12);
	ck_assert_str_eq(xp_labels_get(&l, "pool"), "infer");
	ck_assert_str_eq(l.keys[0], "pool"); /* replacing keeps the position */
	ck_assert_str_eq(xp_labels_get(&l, "tenant"), "a");
	ck_assert_ptr_null(xp_labels_get(&l, "Pool"));
	xp_labels_clear(&l);
	ck_assert_uint_eq(l.n, 0);
	ck_assert_ptr_null(l.keys);
	ck_assert_ptr_null(xp_labels_get(&l, "pool"));
	xp_labels_clear(&l);
}
END_TEST

START_TEST(test_strv)
{
	char **v = NULL;
	size_t n = 0;
	xp_strv_add(&v, &n, "cuda0");
	xp_strv_add(&v, &n, "nvml0");
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(v[0], "cuda0");
	ck_assert_str_eq(v[1], "nvml0");
	xp_strv_free(v, n);
	xp_strv_free(NULL, 0);
}
END_TEST

/* Each spelling parses to the expected cell and prints back the same. */
START_TEST(test_link_parse_print)
{
	static const struct {
		const char *s;
		int cls, count;
	} ok[] = {
		{"X", XP_LINK_SELF, 0},     {"NV18", XP_LINK_NVLINK, 18}, {"NV1", XP_LINK_NVLINK, 1},
		{"NV255", XP_LINK_NVLINK, 255}, {"HCCS", XP_LINK_HCCS, 0}, {"HCCS4", XP_LINK_HCCS, 4},
		{"XGMI2", XP_LINK_XGMI, 2}, {"PIX", XP_LINK_PIX, 0},      {"PXB", XP_LINK_PXB, 0},
		{"PHB", XP_LINK_PHB, 0},    {"NODE", XP_LINK_NODE, 0},    {"SYS", XP_LINK_SYS, 0},
		{"?", XP_LINK_UNKNOWN, 0},
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		struct xp_link l = {99, 99};
		char buf[16];
		ck_assert_msg(xp_link_parse(ok[i].s, &l) == 0, "%s rejected", ok[i].s);
		ck_assert_int_eq(l.cls, ok[i].cls);
		ck_assert_int_eq(l.count, ok[i].count);
		ck_assert_str_eq(xp_link_str(l, buf, sizeof buf), ok[i].s);
	}
}
END_TEST

START_TEST(test_link_reject)
{
	static const char *const bad[] = {"NV", "NV0", "NV256", "PIXX", "", "nv4", "X1",
					  "NV-1", "NV+4", "NV4x", " PIX", "sys"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct xp_link l = {XP_LINK_PIX, 7};
		ck_assert_msg(xp_link_parse(bad[i], &l) == -1, "\"%s\" accepted", bad[i]);
	}
	struct xp_link l;
	ck_assert_int_eq(xp_link_parse(NULL, &l), -1);
}
END_TEST

START_TEST(test_link_print_edge)
{
	char buf[16];
	struct xp_link l = {XP_LINK_CLASS_COUNT + 5, 0};
	ck_assert_str_eq(xp_link_str(l, buf, sizeof buf), "?");
	l = (struct xp_link){XP_LINK_PIX, 3}; /* a count on a PCIe class is not printed */
	ck_assert_str_eq(xp_link_str(l, buf, sizeof buf), "PIX");
}
END_TEST

START_TEST(test_link_rank)
{
	static const int order[] = {XP_LINK_SELF, XP_LINK_NVLINK, XP_LINK_PIX, XP_LINK_PXB,
				    XP_LINK_PHB,  XP_LINK_NODE,   XP_LINK_SYS, XP_LINK_UNKNOWN};
	for (size_t i = 0; i + 1 < sizeof order / sizeof order[0]; i++) {
		struct xp_link a = {(uint8_t)order[i], 0}, b = {(uint8_t)order[i + 1], 0};
		ck_assert_int_lt(xp_link_rank(a), xp_link_rank(b));
	}
	struct xp_link self = {XP_LINK_SELF, 0}, nv = {XP_LINK_NVLINK, 18},
		       hccs = {XP_LINK_HCCS, 0}, xgmi = {XP_LINK_XGMI, 2},
		       mlu = {XP_LINK_MLULINK, 1};
	ck_assert_int_eq(xp_link_rank(self), 0);
	ck_assert_int_eq(xp_link_rank(hccs), xp_link_rank(nv));
	ck_assert_int_eq(xp_link_rank(xgmi), xp_link_rank(nv));
	ck_assert_int_eq(xp_link_rank(mlu), xp_link_rank(nv));
}
END_TEST

START_TEST(test_names)
{
	static const char *const states[] = {"up", "degraded", "unreachable", "draining", "down"};
	for (int i = 0; i < XP_NODE_STATE_COUNT; i++) {
		ck_assert_str_eq(xp_node_state_name(i), states[i]);
		ck_assert_int_eq(xp_node_state_parse(states[i]), i);
	}
	ck_assert_int_eq(xp_node_state_parse("Up"), -1);
	ck_assert_int_eq(xp_node_state_parse(""), -1);
	ck_assert_int_eq(xp_node_state_parse(NULL), -1);
	ck_assert_str_eq(xp_node_state_name(-1), "unknown");
	ck_assert_str_eq(xp_node_state_name(XP_NODE_STATE_COUNT), "unknown");

	static const char *const health[] = {"unknown", "ok", "warn", "fail"};
	for (int i = 0; i < XP_HEALTH_COUNT; i++) {
		ck_assert_str_eq(xp_health_name(i), health[i]);
		ck_assert_int_eq(xp_health_parse(health[i]), i);
	}
	ck_assert_int_eq(xp_health_parse("good"), -1);
	ck_assert_str_eq(xp_health_name(42), "unknown");

	ck_assert_int_eq(xp_mem_access_parse("unified"), XP_MEM_UNIFIED);
	ck_assert_int_eq(xp_mem_access_parse("explicit"), XP_MEM_EXPLICIT);
	ck_assert_int_eq(xp_mem_access_parse("unknown"), XP_MEM_UNKNOWN);
	ck_assert_int_eq(xp_mem_access_parse("shared"), -1);
	ck_assert_str_eq(xp_mem_access_name(XP_MEM_UNIFIED), "unified");
	ck_assert_str_eq(xp_mem_access_name(-3), "unknown");
}
END_TEST

/* Bidirectional controls (U+202E and friends) in discovered names and fields become one '?'
 * each, as control bytes do: they would reorder what a terminal shows around them. */
START_TEST(test_clean_bidi)
{
	struct xp_node *n = xp_node_new("gpu\xe2\x80\xae" "evil");
	struct xp_device *d = xp_node_add_device(n);
	d->model = xp_strdup("H100\xe2\x81\xa6x\xe2\x81\xa9 \xe2\x80\x8f\xd8\x9c\xe2\x80\xaa\x1b[31m");
	d->vendor = xp_strdup("caf\xc3\xa9 \xe2\x80\x94 ok"); /* e acute, em dash: kept */
	xp_node_clean(n);
	ck_assert_str_eq(n->name, "gpu?evil");
	ck_assert_str_eq(d->model, "H100?x? ????[31m");
	ck_assert_str_eq(d->vendor, "caf\xc3\xa9 \xe2\x80\x94 ok");
	xp_node_free(n);
	/* Error messages: the same masking. */
	char msg[] = "no such file: a\xe2\x80\xae" "b\x07.xml \xe2\x81\xa7";
	ck_assert_str_eq(xp_mask_controls(msg), "no such file: a?b?.xml ?");
	/* C1 controls (an 8-bit CSI or OSC, as UTF-8 or as a raw byte), bytes that start no
	 * UTF-8 character, overlong forms and surrogates: one '?' each; good UTF-8 is kept. */
	char c1[] = "x\x9b" "31mY \xc2\x9b" "31m \xc2\x9d" "]0;t \xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 "
		    "\xe2\x82 caf\xc3\xa9 \xf0\x9f\x98\x80 \x80" "end";
	ck_assert_str_eq(xp_mask_controls(c1), "x?31mY ?31m ?]0;t ?? ??? ???? ?? caf\xc3\xa9 \xf0\x9f\x98\x80 ?end");
}
END_TEST

/* Two names of one device disagree only when they name different products: the PCI
 * database's names (pci.ids, as hwloc gives them) and the vendor tools' names of the same
 * parts agree; a Tesla M2075 id with a K40m name does not. */
START_TEST(test_names_disagree)
{
	static const char *const same[][2] = {
		{"NVIDIA Corporation GA100 [A100 SXM4 80GB]", "NVIDIA A100-SXM4-80GB"},
		{"NVIDIA Corporation GH100 [H100 SXM5 80GB]", "NVIDIA H100 80GB HBM3"},
		{"NVIDIA Corporation TU104GL [Tesla T4]", "Tesla T4"},
		{"NVIDIA Corporation GP104 [GeForce GTX 1070 Ti]", "NVIDIA GeForce GTX 1070 Ti"},
		{"NVIDIA Corporation AD104GL [RTX 4000 SFF Ada Generation]", "NVIDIA RTX 4000 SFF Ada Generation"},
		{"NVIDIA Corporation GP107GL [Quadro P400]", "Quadro P400"},
		{"Advanced Micro Devices, Inc. [AMD/ATI] Arcturus GL-XL [Instinct MI100]", "Arcturus GL-XL [Instinct MI100]"},
		{"Huawei Technologies Co., Ltd. Device d801", "910A"},
		{"Chengdu Haiguang IC Design Co., Ltd. Device 6210", "DCU xxxx"},
		{"NVIDIA Corporation GK110BGL [Tesla K40m]", "Tesla K40m"},
	};
	for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
		ck_assert_msg(!xp_normalize_names_disagree(same[i][0], same[i][1]), "%s / %s", same[i][0], same[i][1]);
	ck_assert(xp_normalize_names_disagree("Tesla M2075 Dual-Slot Computing Processor Module", "Tesla K40m"));
	ck_assert(xp_normalize_names_disagree("NVIDIA Corporation GA100 [A100 SXM4 80GB]", "NVIDIA H100 80GB HBM3"));
	ck_assert(!xp_normalize_names_disagree(NULL, "Tesla K40m"));
}
END_TEST

/* A decoded cluster holds each repeated text once; freeing it gives every reference back. */
START_TEST(test_istr_shared)
{
	size_t s0, r0, s1, r1;
	xp_istr_stats(&s0, &r0);
	const char *t = "{\"schema\":\"xpool.inventory/v1\",\"nodes\":["
			"{\"name\":\"a\",\"devices\":[{\"vendor\":\"NVIDIA\",\"model\":\"H100\",\"peak\":[{\"precision\":\"bf16\",\"value\":1,\"unit\":\"TFLOPS\"}]},"
			"{\"vendor\":\"NVIDIA\",\"model\":\"H100\",\"peak\":[{\"precision\":\"bf16\",\"value\":1,\"unit\":\"TFLOPS\"}]}]},"
			"{\"name\":\"b\",\"devices\":[{\"vendor\":\"NVIDIA\",\"model\":\"H100\"}]}]}";
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_cluster_parse(t, strlen(t), "t.json", &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	const struct xp_device *a0 = &c->nodes[0]->devices[0], *a1 = &c->nodes[0]->devices[1];
	const struct xp_device *b0 = &c->nodes[1]->devices[0];
	ck_assert_ptr_eq(a0->vendor, a1->vendor);
	ck_assert_ptr_eq(a0->vendor, b0->vendor);
	ck_assert_ptr_eq(a0->model, b0->model);
	ck_assert_ptr_eq(a0->peaks[0].unit, a1->peaks[0].unit);
	/* A clone shares them too; a plain copy put in a field is freed the same way. */
	struct xp_node *cl = xp_node_clone(c->nodes[1]);
	ck_assert_ptr_eq(cl->devices[0].vendor, b0->vendor);
	xp_istr_drop(cl->devices[0].model);
	cl->devices[0].model = xp_strdup("H100");
	xp_istr_set(&cl->devices[0].arch, "Hopper");
	ck_assert_str_eq(cl->devices[0].arch, "Hopper");
	xp_node_free(cl);
	xp_cluster_free(c);
	xp_istr_stats(&s1, &r1);
	ck_assert_uint_eq(s1, s0);
	ck_assert_uint_eq(r1, r0);
	xp_istr_drop(NULL);
}
END_TEST

static void *istr_worker(void *arg)
{
	const char *const words[] = {"NVIDIA", "Huawei", "AMD", "TFLOPS", "bf16", "fp8", "535.104.05"};
	size_t seed = (size_t)arg;
	const char *held[64] = {0};
	for (size_t i = 0; i < 20000; i++) {
		size_t k = (seed * 31 + i * 7) % 64;
		xp_istr_drop(held[k]);
		held[k] = xp_istr(words[(seed + i) % 7]);
		ck_assert_str_eq(held[k], words[(seed + i) % 7]);
	}
	for (size_t k = 0; k < 64; k++)
		xp_istr_drop(held[k]);
	return NULL;
}

/* Agent replies are decoded on polling threads: the table holds under contention. */
START_TEST(test_istr_threads)
{
	size_t s0, r0, s1, r1;
	xp_istr_stats(&s0, &r0);
	pthread_t th[4];
	for (size_t i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, istr_worker, (void *)i), 0);
	for (size_t i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	xp_istr_stats(&s1, &r1);
	ck_assert_uint_eq(s1, s0);
	ck_assert_uint_eq(r1, r0);
}
END_TEST


/* The decoder counts the references it hands out and registers them when a node ends: the
 * counts come out exact, past its cache (more distinct strings than it keeps), and through
 * every way a decoding gives up (a bad field after interned ones, a duplicate node). */
START_TEST(test_istr_decoder_refs)
{
	size_t s0, r0, s1, r1;
	xp_istr_stats(&s0, &r0);
	char *devs = xp_strdup("");
	for (int i = 0; i < 300; i++) {
		char *d = xp_asprintf("%s%s{\"vendor\":\"ic-vendor\",\"model\":\"ic-model-%d\"}", devs, i ? "," : "", i % 150);
		free(devs);
		devs = d;
	}
	char *t = xp_asprintf("{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"a\",\"devices\":[%s]},"
			      "{\"name\":\"b\",\"devices\":[{\"vendor\":\"ic-vendor\",\"model\":\"ic-model-7\"}]}]}", devs);
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_cluster_parse(t, strlen(t), "t.json", &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	xp_istr_stats(&s1, &r1);
	ck_assert_uint_eq(s1 - s0, 151);
	ck_assert_uint_eq(r1 - r0, 2 * 301);
	ck_assert_str_eq(c->nodes[1]->devices[0].model, "ic-model-7");
	ck_assert_ptr_eq(c->nodes[1]->devices[0].model, c->nodes[0]->devices[7].model);
	xp_cluster_free(c);
	xp_istr_stats(&s1, &r1);
	ck_assert_uint_eq(s1, s0);
	ck_assert_uint_eq(r1, r0);
	free(t);
	static const char *const fails[] = {
		/* the second node fails after its interned fields */
		"{\"name\":\"b\",\"devices\":[{\"vendor\":\"ic-vendor\",\"model\":\"ic-x\",\"numa\":\"x\"}]}",
		/* a node named twice: decoded whole, then given up */
		"{\"name\":\"a\",\"devices\":[{\"vendor\":\"ic-vendor\",\"model\":\"ic-y\"}]}",
		/* a syntax error inside an interned field's node */
		"{\"name\":\"b\",\"devices\":[{\"vendor\":\"ic-vendor\",\"model\":\"ic-z\",]}",
	};
	for (size_t i = 0; i < sizeof fails / sizeof fails[0]; i++) {
		t = xp_asprintf("{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"a\",\"devices\":[%s]},%s]}",
				devs, fails[i]);
		ck_assert_ptr_null(xp_cluster_parse(t, strlen(t), "t.json", &err));
		xp_istr_stats(&s1, &r1);
		ck_assert_msg(s1 == s0 && r1 == r0, "%zu: %zu strings, %zu refs left", i, s1 - s0, r1 - r0);
		free(t);
	}
	free(devs);
}
END_TEST

XP_DEFINE_SUITE(model,
	{"core",
	 .tests = {test_node_defaults, test_node_append_many, test_cluster_lookup,
		   test_device_by_bus, test_links_reset, test_labels, test_strv,
		   test_link_parse_print, test_link_reject, test_link_print_edge, test_link_rank,
		   test_names, test_node_clone, test_clean_bidi, test_names_disagree, test_istr_shared,
		   test_istr_threads, test_istr_decoder_refs}})
