/* check_simgen.c: `xpool sim gen`: determinism, the mix, devices true to the manifests,
 * links by the vendors' rules, allocations that fit, the JSON round trip, and bad options. */
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adapters.h"
#include "cmd.h"
#include "model_json.h"
#include "simgen.h"
#include "suitelib.h"
#include "testlib.h"

extern const struct xp_cmd_entry xp_cmd_sim_entry;

#define MIX4 "nvidia-h100:40,ascend-910a:30,amd-mi100:20,cpu:10"
/* Every kind, so that every rule is seen. */
#define MIX_ALL "nvidia-h100:20,nvidia-h800:10,nvidia-a100:20,ascend-910a:20,amd-mi300x:10,amd-mi100:10,cpu:10"

static struct xp_cluster *gen(size_t nodes, const char *spec, uint64_t seed)
{
	struct xp_err err = {{0}};
	struct xp_sim_mix mix;
	ck_assert_msg(xp_sim_mix_parse(spec, &mix, &err) == 0, "%s", err.msg);
	struct xp_cluster *c = xp_sim_generate(nodes, &mix, seed, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	return c;
}

/* The snapshot as sim gen writes it. */
static char *gen_text(size_t nodes, const char *spec, uint64_t seed, size_t *len)
{
	struct xp_cluster *c = gen(nodes, spec, seed);
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	struct xp_err err = {{0}};
	ck_assert_msg(xp_sim_write(c, f, &err) == 0, "%s", err.msg);
	fclose(f);
	xp_cluster_free(c);
	return buf;
}

static char *write_text(const struct xp_cluster *c, int pretty, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	struct xp_err err = {{0}};
	ck_assert_msg(xp_cluster_write(c, f, pretty, &err) == 0, "%s", err.msg);
	fclose(f);
	return buf;
}

/* The kind a node was made as, from its name prefix. */
static const struct xp_sim_kind *kind_of(const struct xp_node *n)
{
	size_t nk;
	const struct xp_sim_kind *k = xp_sim_kinds(&nk);
	for (size_t i = 0; i < nk; i++) {
		size_t l = strlen(k[i].prefix);
		if (strncmp(n->name, k[i].prefix, l) == 0 && n->name[l] == '-')
			return &k[i];
	}
	ck_abort_msg("node %s is of no known kind", n->name);
	return NULL;
}

START_TEST(rng_stream)
{
	/* splitmix64's published first outputs for seed 0 (its reference implementation). */
	struct xp_rng r;
	xp_rng_seed(&r, 0);
	ck_assert_uint_eq(xp_rng_next(&r), 0xe220a8397b1dcdafULL);
	ck_assert_uint_eq(xp_rng_next(&r), 0x6e789e6aa1b965f4ULL);
	xp_rng_seed(&r, 42);
	for (int i = 0; i < 10000; i++) {
		ck_assert_uint_lt(xp_rng_below(&r, 7), 7);
		double u = xp_rng_unit(&r);
		ck_assert(u >= 0 && u < 1);
	}
	ck_assert_uint_eq(xp_rng_below(&r, 0), 0);
}
END_TEST

START_TEST(same_seed_same_bytes)
{
	size_t la, lb, lc;
	char *a = gen_text(300, MIX_ALL, 7, &la);
	char *b = gen_text(300, MIX_ALL, 7, &lb);
	char *c = gen_text(300, MIX_ALL, 8, &lc);
	ck_assert_uint_eq(la, lb);
	ck_assert(memcmp(a, b, la) == 0);
	ck_assert(la != lc || memcmp(a, c, la) != 0);
	free(a);
	free(b);
	free(c);
}
END_TEST

START_TEST(mix_counts)
{
	struct xp_cluster *c = gen(1000, MIX4, 1);
	ck_assert_uint_eq(c->n_nodes, 1000);
	size_t h100 = 0, a910 = 0, mi100 = 0, cpu = 0, devs = 0;
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct xp_node *n = c->nodes[i];
		const struct xp_sim_kind *k = kind_of(n);
		ck_assert_uint_eq(n->n_devices, (size_t)k->devices);
		devs += n->n_devices;
		h100 += strcmp(k->name, "nvidia-h100") == 0;
		a910 += strcmp(k->name, "ascend-910a") == 0;
		mi100 += strcmp(k->name, "amd-mi100") == 0;
		cpu += strcmp(k->name, "cpu") == 0;
		/* Names are unique. */
		ck_assert_ptr_eq(xp_cluster_node(c, n->name), n);
	}
	ck_assert_uint_eq(h100, 400);
	ck_assert_uint_eq(a910, 300);
	ck_assert_uint_eq(mi100, 200);
	ck_assert_uint_eq(cpu, 100);
	ck_assert_uint_eq(devs, 400 * 8 + 300 * 8 + 200 * 4);
	ck_assert_uint_eq(xp_cluster_device_count(c), devs);
	xp_cluster_free(c);

	/* Shares that do not divide: each count within one of its exact share, all adding up. */
	struct xp_sim_mix mix;
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_sim_mix_parse("nvidia-h100:33,nvidia-a100:33,cpu:34", &mix, &err), 0);
	for (size_t n = 1; n <= 250; n++) {
		size_t counts[XP_SIM_MAX_MIX], sum = 0;
		xp_sim_mix_counts(&mix, n, counts);
		for (size_t i = 0; i < mix.n; i++) {
			double exact = (double)n * mix.pct[i] / 100;
			ck_assert_msg(fabs((double)counts[i] - exact) < 1, "n=%zu kind %zu: %zu for %.2f", n, i,
				      counts[i], exact);
			sum += counts[i];
		}
		ck_assert_uint_eq(sum, n);
	}
	/* A kind at 0% gets no node; one node goes to the largest share. */
	ck_assert_int_eq(xp_sim_mix_parse("cpu:0,amd-mi100:100", &mix, &err), 0);
	c = xp_sim_generate(5, &mix, 1, &err);
	ck_assert_ptr_nonnull(c);
	for (size_t i = 0; i < c->n_nodes; i++)
		ck_assert_str_eq(kind_of(c->nodes[i])->name, "amd-mi100");
	xp_cluster_free(c);
}
END_TEST

START_TEST(layout)
{
	struct xp_cluster *c = gen(1000, MIX_ALL, 3);
	/* Racks of at most 32 nodes, one kind each, one switch each; zones of at most 16 racks. */
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct xp_node *n = c->nodes[i];
		ck_assert_ptr_nonnull(n->zone);
		ck_assert_ptr_nonnull(n->rack);
		ck_assert_ptr_nonnull(n->sw);
		size_t same = 0;
		unsigned rack = 0, zone = 0;
		ck_assert_int_eq(sscanf(n->rack, "rack%u", &rack), 1);
		ck_assert_int_eq(sscanf(n->zone, "zone%u", &zone), 1);
		ck_assert_uint_eq(rack / XP_SIM_RACKS_PER_ZONE, zone);
		for (size_t j = 0; j < c->n_nodes; j++) {
			const struct xp_node *o = c->nodes[j];
			if (strcmp(o->rack, n->rack) != 0)
				continue;
			same++;
			ck_assert_ptr_eq(kind_of(o), kind_of(n));
			ck_assert_str_eq(o->sw, n->sw);
		}
		ck_assert_uint_le(same, XP_SIM_NODES_PER_RACK);
		/* Two NUMA domains, half the devices on each, CPUs split between them. */
		ck_assert_uint_eq(n->n_numa, 2);
		ck_assert_int_gt(n->pus, 0);
		for (size_t k = 0; k < n->n_devices; k++)
			ck_assert_int_eq(n->devices[k].numa, k < n->n_devices / 2 ? 0 : 1);
	}
	xp_cluster_free(c);
}
END_TEST

/* Every device is its manifest model: name, memory, peaks, ECU, partitions. */
START_TEST(devices_from_manifests)
{
	struct xp_err err = {{0}};
	const char *adapters[] = {"nvidia", "ascend", "amd"};
	struct xp_manifest *ms[3];
	for (int i = 0; i < 3; i++) {
		ms[i] = xp_adapter_manifest_load(adapters[i], &err);
		ck_assert_msg(ms[i] != NULL, "%s", err.msg);
	}
	struct xp_cluster *c = gen(700, MIX_ALL, 11);
	size_t checked = 0;
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct xp_node *n = c->nodes[i];
		const struct xp_sim_kind *k = kind_of(n);
		for (size_t d = 0; d < n->n_devices; d++) {
			const struct xp_device *dv = &n->devices[d];
			const struct xp_manifest *m = NULL;
			for (int j = 0; j < 3; j++)
				if (strcmp(ms[j]->name, k->adapter) == 0)
					m = ms[j];
			ck_assert_ptr_nonnull(m);
			const struct xp_mmodel *md = NULL;
			for (size_t j = 0; j < m->n_models; j++)
				if (strcmp(m->models[j].name, dv->model) == 0)
					md = &m->models[j];
			ck_assert_msg(md != NULL, "%s ACC%zu: model %s not in %s", n->name, d, dv->model, m->name);
			ck_assert_str_eq(dv->model, k->model);
			ck_assert_str_eq(dv->vendor, md->vendor[0] ? md->vendor : m->vendor);
			ck_assert_int_eq(dv->memory_mib, md->memory_mib);
			ck_assert_uint_eq(dv->n_peaks, md->n_peaks);
			ck_assert_uint_gt(dv->n_peaks, 0);
			for (size_t p = 0; p < md->n_peaks; p++) {
				ck_assert_str_eq(dv->peaks[p].precision, md->peaks[p].precision);
				ck_assert(dv->peaks[p].value == md->peaks[p].value);
			}
			ck_assert_msg(XP_HAS(dv->ecu) && dv->ecu > 0, "%s ACC%zu: no ECU", n->name, d);
			ck_assert_ptr_nonnull(dv->ecu_basis);
			ck_assert_uint_eq(dv->partition & md->partition, md->partition);
			ck_assert_ptr_nonnull(dv->driver);
			ck_assert(xp_manifest_driver_ok(m, dv->driver));
			ck_assert_int_eq(dv->index, (int)d);
			checked++;
		}
	}
	ck_assert_uint_gt(checked, 3000);
	/* Known figures: H100's ECU is its dense bf16 peak, the 910A's its fp16 peak. */
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct xp_node *n = c->nodes[i];
		if (strcmp(kind_of(n)->name, "nvidia-h100") == 0)
			ck_assert(n->devices[0].ecu == 989.4);
		if (strcmp(kind_of(n)->name, "ascend-910a") == 0)
			ck_assert(n->devices[0].ecu == 256);
	}
	xp_cluster_free(c);
	for (int i = 0; i < 3; i++)
		xp_manifest_free(ms[i]);
}
END_TEST

START_TEST(links_by_rule)
{
	struct xp_cluster *c = gen(700, MIX_ALL, 5);
	size_t nv = 0, hccs = 0, xgmi = 0;
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct xp_node *n = c->nodes[i];
		const struct xp_sim_kind *k = kind_of(n);
		if (!n->n_devices) {
			ck_assert_ptr_null(n->links);
			continue;
		}
		for (size_t a = 0; a < n->n_devices; a++)
			for (size_t b = 0; b < n->n_devices; b++) {
				struct xp_link l = *xp_node_link(n, a, b), t = *xp_node_link(n, b, a);
				ck_assert_int_eq(l.cls, t.cls);
				ck_assert_int_eq(l.count, t.count);
				if (a == b) {
					ck_assert_int_eq(l.cls, XP_LINK_SELF);
					continue;
				}
				ck_assert_int_ne(l.cls, XP_LINK_UNKNOWN);
				if (k->pci_vendor == 0x10de) {
					/* NVSwitch boards: every pair at the board's link count. */
					ck_assert_int_eq(l.cls, XP_LINK_NVLINK);
					ck_assert_int_eq(l.count, k->nvlinks);
					nv++;
				} else if (strcmp(k->name, "ascend-910a") == 0) {
					/* The manifest's ring:4 rule: HCCS inside NPUs 0-3 and 4-7, PCIe across. */
					bool ring = a / 4 == b / 4;
					ck_assert_int_eq(l.cls == XP_LINK_HCCS, ring);
					if (!ring)
						ck_assert_int_eq(l.cls, XP_LINK_SYS);
					hccs += ring;
				} else {
					ck_assert_int_eq(l.cls, XP_LINK_XGMI);
					xgmi++;
				}
			}
		for (size_t a = 0; a < n->n_devices; a++) {
			const char *g = n->devices[a].affinity_group;
			char want[32];
			if (k->pci_vendor == 0x10de)
				snprintf(want, sizeof want, "nvlink:0");
			else if (strcmp(k->name, "ascend-910a") == 0)
				snprintf(want, sizeof want, "hccs:%zu", a / 4);
			else
				snprintf(want, sizeof want, "xgmi:xgmi0");
			ck_assert_ptr_nonnull(g);
			ck_assert_str_eq(g, want);
		}
	}
	ck_assert_uint_gt(nv, 0);
	ck_assert_uint_gt(hccs, 0);
	ck_assert_uint_gt(xgmi, 0);
	const struct xp_sim_kind *h100 = xp_sim_kind_find("nvidia-h100");
	ck_assert_ptr_nonnull(h100);
	ck_assert_int_eq(h100->nvlinks, 18);
	xp_cluster_free(c);
}
END_TEST

/* The template of a slice, by name, in the device's model. */
static const struct xp_mtemplate *template_of(const struct xp_mmodel *md, const char *name)
{
	for (size_t t = 0; t < md->n_templates; t++)
		if (strcmp(md->templates[t].name, name) == 0)
			return &md->templates[t];
	return NULL;
}

START_TEST(allocations_fit)
{
	struct xp_err err = {{0}};
	struct xp_manifest *ms[3] = {xp_adapter_manifest_load("nvidia", &err), xp_adapter_manifest_load("ascend", &err),
				     xp_adapter_manifest_load("amd", &err)};
	for (int i = 0; i < 3; i++)
		ck_assert_msg(ms[i] != NULL, "%s", err.msg);
	size_t whole = 0, sliced = 0, mig = 0, vnpu = 0, idle = 0, warn = 0, fail = 0, down = 0, draining = 0,
	       degraded = 0;
	for (uint64_t seed = 1; seed <= 4; seed++) {
		struct xp_cluster *c = gen(600, MIX_ALL, seed);
		for (size_t i = 0; i < c->n_nodes; i++) {
			const struct xp_node *n = c->nodes[i];
			const struct xp_sim_kind *k = kind_of(n);
			down += n->state == XP_NODE_DOWN;
			draining += n->state == XP_NODE_DRAINING;
			degraded += n->state == XP_NODE_DEGRADED;
			bool any_fail = false;
			for (size_t d = 0; d < n->n_devices; d++) {
				const struct xp_device *dv = &n->devices[d];
				warn += dv->health == XP_HEALTH_WARN;
				fail += dv->health == XP_HEALTH_FAIL;
				any_fail |= dv->health == XP_HEALTH_FAIL;
				ck_assert_int_ne(dv->health, XP_HEALTH_UNKNOWN);
				if (dv->health >= XP_HEALTH_WARN)
					ck_assert_uint_gt(dv->n_health_reasons, 0);
				if (!dv->n_allocs) {
					idle++;
					continue;
				}
				/* Nothing runs on a down node or a failed device. */
				ck_assert_int_ne(n->state, XP_NODE_DOWN);
				ck_assert_int_ne(dv->health, XP_HEALTH_FAIL);
				const struct xp_manifest *m =
					ms[k->pci_vendor == 0x10de ? 0 : k->pci_vendor == 0x19e5 ? 1 : 2];
				const struct xp_mmodel *md = xp_manifest_model(m, k->product, -1);
				ck_assert_ptr_nonnull(md);
				size_t n_whole = 0;
				int used[64] = {0};
				double compute = 0;
				int64_t mem = 0;
				for (size_t a = 0; a < dv->n_allocs; a++) {
					const struct xp_alloc *al = &dv->allocs[a];
					ck_assert_ptr_nonnull(al->owner);
					ck_assert_int_eq(al->share_pct, 0);
					if (!al->slice) {
						n_whole++;
						continue;
					}
					const struct xp_mtemplate *t = template_of(md, al->slice);
					ck_assert_msg(t != NULL, "%s ACC%zu: slice %s not a %s template", n->name, d,
						      al->slice, md->name);
					used[t - md->templates]++;
					ck_assert_int_le(used[t - md->templates], t->count);
					compute += t->compute;
					mem += t->memory_mib;
					ck_assert_int_eq(al->memory_mib, t->memory_mib);
				}
				/* One whole job, or slices that fit, never both. */
				ck_assert_uint_le(n_whole, 1);
				if (n_whole) {
					ck_assert_uint_eq(dv->n_allocs, 1);
					whole++;
				} else {
					ck_assert(compute <= 1 + 1e-9);
					ck_assert_int_le(mem, dv->memory_mib);
					ck_assert(dv->partition & (XP_PART_MIG | XP_PART_VNPU));
					sliced++;
					mig += (dv->partition & XP_PART_MIG) != 0;
					vnpu += (dv->partition & XP_PART_VNPU) != 0;
				}
				ck_assert_int_le(dv->memory_used_mib, dv->memory_mib);
			}
			ck_assert_int_eq(any_fail && n->state != XP_NODE_DOWN && n->state != XP_NODE_DRAINING,
					 n->state == XP_NODE_DEGRADED);
		}
		xp_cluster_free(c);
	}
	/* A realistic mix: every situation a placement engine meets shows up. */
	ck_assert_uint_gt(whole, idle / 4);
	ck_assert_uint_gt(idle, 0);
	ck_assert_uint_gt(mig, 0);
	ck_assert_uint_gt(vnpu, 0);
	ck_assert_uint_gt(warn, 0);
	ck_assert_uint_gt(fail, 0);
	ck_assert_uint_gt(down, 0);
	ck_assert_uint_gt(draining, 0);
	ck_assert_uint_gt(degraded, 0);
	ck_assert_uint_lt(warn + fail, (whole + sliced + idle) / 10);
	for (int i = 0; i < 3; i++)
		xp_manifest_free(ms[i]);
}
END_TEST

START_TEST(drivers_differ)
{
	struct xp_cluster *c = gen(2000, MIX4, 9);
	const char *seen[3] = {NULL, NULL, NULL};
	size_t n_seen = 0;
	for (size_t i = 0; i < c->n_nodes; i++) {
		const char *drv = xp_labels_get(&c->nodes[i]->facts, "accelerator.driver");
		if (strcmp(kind_of(c->nodes[i])->name, "nvidia-h100") != 0 || !drv)
			continue;
		bool known = false;
		for (size_t j = 0; j < n_seen; j++)
			known |= strcmp(seen[j], drv) == 0;
		if (!known && n_seen < 3)
			seen[n_seen++] = drv;
	}
	ck_assert_uint_ge(n_seen, 2);
	xp_cluster_free(c);
}
END_TEST

/* What sim gen writes is what xp_cluster_write writes, and reads back unchanged. */
START_TEST(json_round_trip)
{
	struct xp_cluster *c = gen(250, MIX_ALL, 21);
	size_t la, lb, lc;
	char *streamed = NULL;
	FILE *f = open_memstream(&streamed, &la);
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_sim_write(c, f, &err), 0);
	fclose(f);
	char *whole = write_text(c, 0, &lb);
	ck_assert_uint_eq(la, lb);
	ck_assert(memcmp(streamed, whole, la) == 0);
	struct xp_cluster *back = xp_cluster_parse(streamed, la, "sim.json", &err);
	ck_assert_msg(back != NULL, "%s", err.msg);
	char *again = write_text(back, 0, &lc);
	ck_assert_uint_eq(la, lc);
	ck_assert(memcmp(streamed, again, la) == 0);
	xp_cluster_free(back);
	free(streamed);
	free(whole);
	free(again);
	xp_cluster_free(c);
}
END_TEST

/* The built program loads the file (xp_snapshot_load) and prints the same cluster. */
START_TEST(snapshot_through_program)
{
	struct xp_cluster *c = gen(40, MIX_ALL, 4);
	size_t lt, lp;
	char *text = NULL;
	FILE *f = open_memstream(&text, &lt);
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_sim_write(c, f, &err), 0);
	fclose(f);
	char *pretty = write_text(c, 1, &lp);
	char *path = xp_tmpfile(text, lt);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", path, "inventory", "--json", NULL), 0);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_str_eq(r.out, pretty);
	xp_run_free(&r);
	unlink(path);
	free(path);
	free(text);
	free(pretty);
	xp_cluster_free(c);
}
END_TEST

/* jansson's spelling of a document: its own tree of the text, dumped as xp_cluster_write
 * promises to spell it (indent 2 or compact, the document's real precision). */
static char *tree_text(const char *text, size_t len, int pretty, int digits)
{
	json_error_t je;
	json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	ck_assert_msg(doc != NULL, "%s", je.text);
	size_t flags = JSON_REAL_PRECISION(digits) | (pretty ? JSON_INDENT(2) : JSON_COMPACT);
	char *t = json_dumps(doc, flags);
	json_decref(doc);
	char *out = xp_asprintf("%s\n", t);
	free(t);
	return out;
}

/* A 1,000-node file through the streaming decoder and writer: what `inventory --json` prints
 * is byte for byte what jansson prints from its own tree of the same file (the DOM path
 * xpool used before), and the compact form is the file itself. */
START_TEST(thousand_nodes_byte_identical)
{
	struct xp_cluster *c = gen(1000, XP_SIM_DEFAULT_MIX, 1);
	int digits = xp_cluster_real_digits(c);
	size_t lt;
	char *text = NULL;
	FILE *f = open_memstream(&text, &lt);
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_sim_write(c, f, &err), 0);
	fclose(f);
	xp_cluster_free(c);
	char *tree_compact = tree_text(text, lt, 0, digits), *tree_pretty = tree_text(text, lt, 1, digits);
	ck_assert_str_eq(tree_compact, text);

	char *path = xp_tmpfile(text, lt);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", path, "inventory", "--json", NULL), 0);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(strcmp(r.out, tree_pretty) == 0, "inventory --json differs from jansson's tree");
	xp_run_free(&r);
	unlink(path);
	free(path);
	free(text);
	free(tree_compact);
	free(tree_pretty);
}
END_TEST

/* The file is read in 256 KiB chunks: moving the document by 0 to 47 bytes puts every kind of
 * token (keys, strings, numbers, literals, escapes) across a chunk's end somewhere, and the
 * cluster read from the file is the one read from memory. */
START_TEST(chunk_boundaries)
{
	struct xp_cluster *c = gen(60, MIX_ALL, 9);
	/* Escapes and multi-byte characters too, in every node. */
	for (size_t i = 0; i < c->n_nodes; i++)
		xp_labels_set(&c->nodes[i]->governance, "note", "slash/ \"q\" \\ caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	size_t lt, lm;
	char *text = write_text(c, 1, &lt);
	xp_cluster_free(c);
	ck_assert_uint_gt(lt, (size_t)3 << 18);
	struct xp_err err = {{0}};
	struct xp_cluster *m = xp_cluster_parse(text, lt, "mem", &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	char *want = write_text(m, 0, &lm);
	xp_cluster_free(m);
	for (size_t shift = 0; shift < 48; shift++) {
		char *padded = malloc(lt + shift);
		memset(padded, ' ', shift);
		memcpy(padded + shift, text, lt);
		char *path = xp_tmpfile(padded, lt + shift);
		FILE *in = fopen(path, "r");
		ck_assert_ptr_nonnull(in);
		struct xp_cluster *fc = xp_cluster_read_fd(fileno(in), path, &err);
		fclose(in);
		ck_assert_msg(fc != NULL, "shift %zu: %s", shift, err.msg);
		size_t lf;
		char *got = write_text(fc, 0, &lf);
		ck_assert_msg(lf == lm && memcmp(got, want, lm) == 0, "shift %zu: a different cluster", shift);
		free(got);
		xp_cluster_free(fc);
		unlink(path);
		free(path);
		free(padded);
	}
	free(want);
	free(text);
}
END_TEST

/* Runs `sim ARGS...` through the command's own parser and exec; out and err captured. */
static int run_sim(char **out, char **errs, ...)
{
	char *argv[16] = {"sim"};
	int argc = 1;
	va_list ap;
	va_start(ap, errs);
	for (char *a; argc < 15 && (a = va_arg(ap, char *)) != NULL;)
		argv[argc++] = a;
	va_end(ap);
	size_t lo, le;
	FILE *fo = open_memstream(out, &lo), *fe = open_memstream(errs, &le);
	struct xp_ctx ctx;
	xp_ctx_init(&ctx, fo, fe);
	struct xp_args args;
	struct xp_err err = {{0}};
	int rc;
	if (xp_cmd_parse(&ctx, &xp_cmd_sim_entry, argc, argv, &args, &err) < 0) {
		fprintf(fe, "%s\n", err.msg);
		rc = XP_EXIT_USAGE;
	} else {
		rc = xp_cmd_sim_entry.exec(&ctx, &args);
		free(args.argv);
	}
	xp_ctx_free(&ctx);
	fclose(fo);
	fclose(fe);
	return rc;
}

START_TEST(command_output)
{
	char *out, *errs;
	ck_assert_int_eq(run_sim(&out, &errs, "gen", "--nodes", "12", "--seed", "5", "--mix", MIX4, NULL), 0);
	ck_assert_str_eq(errs, "");
	size_t len;
	char *want = gen_text(12, MIX4, 5, &len);
	ck_assert_str_eq(out, want);
	free(want);
	free(out);
	free(errs);

	/* -o FILE: the snapshot in the file, a summary on stdout; the default mix and seed. */
	char *path = xp_tmpfile("", 0);
	ck_assert_int_eq(run_sim(&out, &errs, "gen", "--nodes", "30", "-o", path, NULL), 0);
	ck_assert_str_eq(errs, "");
	ck_assert_ptr_nonnull(strstr(out, "30 nodes"));
	struct xp_err err = {{0}};
	size_t flen;
	char *ftext = xp_read_file(path, 1 << 26, &flen, &err);
	ck_assert_ptr_nonnull(ftext);
	struct xp_cluster *def = xp_sim_generate(30, NULL, 1, &err);
	ck_assert_ptr_nonnull(def);
	char *dtext = NULL;
	size_t dlen;
	FILE *f = open_memstream(&dtext, &dlen);
	ck_assert_int_eq(xp_sim_write(def, f, &err), 0);
	fclose(f);
	ck_assert_str_eq(ftext, dtext);
	free(dtext);
	xp_cluster_free(def);
	free(ftext);
	unlink(path);
	free(path);
	free(out);
	free(errs);
}
END_TEST

static const struct {
	const char *nodes, *mix, *seed, *expect;
} bad_args[] = {
	{"0", NULL, NULL, "--nodes must be from 1 to 1000000, not 0"},
	{"-5", NULL, NULL, "--nodes must be from 1 to 1000000, not -5"},
	{"1000001", NULL, NULL, "--nodes must be from 1 to 1000000, not 1000001"},
	{"99999999999999999999", NULL, NULL, "--nodes must be from 1 to 1000000"},
	{"ten", NULL, NULL, "--nodes needs a whole number, not 'ten'"},
	{"12x", NULL, NULL, "--nodes needs a whole number, not '12x'"},
	{"10", "nvidia-h200:100", NULL, "unknown node kind 'nvidia-h200'; known kinds: nvidia-h100, "},
	{"10", "nvidia-h100:50,cpu:40", NULL, "the percentages add up to 90, not 100"},
	{"10", "nvidia-h100:60,cpu:60", NULL, "the percentages add up to 120, not 100"},
	{"10", "garbage", NULL, "'garbage' is not KIND:PERCENT"},
	{"10", "cpu:abc", NULL, "'cpu:abc': the percentage must be a whole number from 0 to 100"},
	{"10", "cpu:-10,amd-mi100:110", NULL, "'cpu:-10': the percentage must be"},
	{"10", "cpu:101", NULL, "'cpu:101': the percentage must be"},
	{"10", "cpu:50,,amd-mi100:50", NULL, "empty entry"},
	{"10", "cpu:50,cpu:50", NULL, "node kind 'cpu' given twice"},
	{"10", NULL, "-1", "--seed needs a number"},
	{"10", NULL, "x", "--seed needs a number"},
};

START_TEST(bad_options)
{
	char *out, *errs;
	char *argv[8];
	int n = 0;
	argv[n++] = "gen";
	argv[n++] = "--nodes";
	argv[n++] = (char *)bad_args[_i].nodes;
	if (bad_args[_i].mix) {
		argv[n++] = "--mix";
		argv[n++] = (char *)bad_args[_i].mix;
	}
	if (bad_args[_i].seed) {
		argv[n++] = "--seed";
		argv[n++] = (char *)bad_args[_i].seed;
	}
	while (n < 8)
		argv[n++] = NULL;
	int rc = run_sim(&out, &errs, argv[0], argv[1], argv[2], argv[3], argv[4], argv[5], argv[6], NULL);
	ck_assert_int_eq(rc, XP_EXIT_USAGE);
	ck_assert_str_eq(out, "");
	ck_assert_msg(strstr(errs, bad_args[_i].expect) != NULL, "want '%s' in: %s", bad_args[_i].expect, errs);
	ck_assert_ptr_nonnull(strstr(errs, "sim gen: "));
	free(out);
	free(errs);
}
END_TEST

START_TEST(bad_usage)
{
	char *out, *errs;
	ck_assert_int_eq(run_sim(&out, &errs, "gen", NULL), XP_EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(errs, "--nodes N is required"));
	free(out);
	free(errs);
	ck_assert_int_eq(run_sim(&out, &errs, "run", "--nodes", "3", NULL), XP_EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(errs, "unknown subcommand 'run'"));
	free(out);
	free(errs);
	ck_assert_int_eq(run_sim(&out, &errs, "gen", "--nodes", "3", "-o", "/nonexistent/dir/x.json", NULL),
			 XP_EXIT_ERROR);
	ck_assert_ptr_nonnull(strstr(errs, "/nonexistent/dir/x.json: No such file or directory"));
	free(out);
	free(errs);
}
END_TEST

START_TEST(parse_numbers)
{
	struct xp_err err = {{0}};
	uint64_t seed = 0;
	size_t nodes = 0;
	ck_assert_int_eq(xp_sim_parse_seed("010", &seed, &err), 0);
	ck_assert_uint_eq(seed, 10); /* decimal, never octal */
	ck_assert_int_eq(xp_sim_parse_seed("0x10", &seed, &err), 0);
	ck_assert_uint_eq(seed, 16);
	ck_assert_int_eq(xp_sim_parse_seed("18446744073709551615", &seed, &err), 0);
	ck_assert_uint_eq(seed, UINT64_MAX);
	ck_assert_int_eq(xp_sim_parse_seed("18446744073709551616", &seed, &err), -1);
	ck_assert_int_eq(xp_sim_parse_nodes("1000000", &nodes, &err), 0);
	ck_assert_uint_eq(nodes, XP_SIM_MAX_NODES);
	ck_assert_int_eq(xp_sim_parse_nodes("", &nodes, &err), -1);
}
END_TEST

/* No manifest on the path: a clear error naming where it looked; CPU-only needs none. */
START_TEST(manifest_missing)
{
	setenv("XPOOL_ADAPTER_PATH", "/nonexistent/adapters", 1);
	setenv("XPOOL_ADAPTER_PATH_ONLY", "1", 1);
	char *out, *errs;
	ck_assert_int_eq(run_sim(&out, &errs, "gen", "--nodes", "3", "--mix", "amd-mi100:100", NULL), XP_EXIT_ERROR);
	ck_assert_ptr_nonnull(strstr(errs, "no manifest amd.adapter on the adapter path /nonexistent/adapters"));
	free(out);
	free(errs);
	ck_assert_int_eq(run_sim(&out, &errs, "gen", "--nodes", "3", "--mix", "cpu:100", NULL), 0);
	ck_assert_str_eq(errs, "");
	free(out);
	free(errs);
	unsetenv("XPOOL_ADAPTER_PATH");
	unsetenv("XPOOL_ADAPTER_PATH_ONLY");
}
END_TEST

/* The benchmark size: 10,000 nodes in memory (the time is the bench's to report). */
START_TEST(ten_thousand)
{
	struct xp_cluster *c = gen(10000, XP_SIM_DEFAULT_MIX, 1);
	ck_assert_uint_eq(c->n_nodes, 10000);
	size_t devs = 0;
	for (size_t i = 0; i < c->n_nodes; i++)
		devs += (size_t)kind_of(c->nodes[i])->devices;
	ck_assert_uint_eq(xp_cluster_device_count(c), devs);
	xp_cluster_free(c);
}
END_TEST

XP_DEFINE_SUITE(simgen,
	{"generate", .timeout_s = 120,
	 .tests = {rng_stream, same_seed_same_bytes, mix_counts, layout, devices_from_manifests,
		   links_by_rule, allocations_fit, drivers_differ, ten_thousand}},
	{"json", .timeout_s = 120,
	 .tests = {json_round_trip, snapshot_through_program, thousand_nodes_byte_identical, chunk_boundaries}},
	{"command", .loop = bad_options, .loop_n = (int)(sizeof bad_args / sizeof bad_args[0]),
	 .tests = {command_output, bad_usage, parse_numbers, manifest_missing}})
