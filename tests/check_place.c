/* check_place.c: the placement dry-run: each filter and strategy on small hand-made clusters
 * whose right answer is written next to it, gang all-or-nothing, reasons that add up to the
 * node count, determinism, network (switch/rack) constraints, a seeded property test over sim
 * clusters, and the CLI (exit 3, JSON). */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "checklib.h"
#include "cluster.h"
#include "cmd.h"
#include "istr.h"
#include "jobspec.h"
#include "manifest.h"
#include "model.h"
#include "place.h"
#include "place_index.h"
#include "simgen.h"
#include "suitelib.h"
#include "testlib.h"

/* Ascend-like: 910A in two HCCS rings of 4 (ring:4), vNPU templates. */
static const char ascend_text[] =
	"[adapter]\n"
	"name = ascend\n"
	"vendor = Huawei\n"
	"affinity = pcie\n"
	"visible_devices_env = ASCEND_VISIBLE_DEVICES\n"
	"device_nodes = /dev/davinci{index}\n"
	"control_nodes = /dev/davinci_manager\n"
	"[model Ascend 910A]\n"
	"match = *910A*\n"
	"memory_mib = 32768\n"
	"affinity = ring:4\n"
	"partition = whole vnpu\n"
	"template = vir04 memory_mib=4369 compute=4/30 count=7\n";

/* NVIDIA-like: no ring rule, MIG profiles of 1/7 of a device. */
static const char nvidia_text[] =
	"[adapter]\n"
	"name = nvidia\n"
	"vendor = NVIDIA\n"
	"affinity = nvlink\n"
	"visible_devices_env = CUDA_VISIBLE_DEVICES\n"
	"[model H100 80GB HBM3]\n"
	"match = *H100*80GB*HBM3*\n"
	"memory_mib = 81559\n"
	"partition = whole mig\n"
	"template = 1g.10gb memory_mib=10240 compute=1/7 count=7\n";

static void setup(void)
{
	xp_test_mans_parse(ascend_text, nvidia_text);
}


/* A node of n devices of one model: Ascend in rings of 4 (hccs:0, hccs:1), NVIDIA on one NVLink
 * island; NUMA domain = index / (n/2). */
static struct xp_node *mknode(struct xp_cluster *c, const char *name, int n, bool ascend, const char *driver)
{
	const struct xp_test_devs t = ascend ? (struct xp_test_devs){"Huawei", "Ascend 910A", driver, 32768, 2, "hccs", 4}
					     : (struct xp_test_devs){"NVIDIA", "H100 80GB HBM3", driver, 81559, 2, "nvlink", 0};
	return xp_test_node(c, name, n, &t);
}

/* A new cluster of two idle Ascend nodes of 8 (two HCCS rings each), named a and b. */
static struct xp_cluster *two_nodes(const char *a, const char *b)
{
	struct xp_cluster *c = xp_cluster_new();
	mknode(c, a, 8, true, "1");
	mknode(c, b, 8, true, "1");
	return c;
}

/* Marks device i of nd in use by a whole job (slice NULL) or by one slice. */
static void busy(struct xp_node *nd, int i, const char *slice)
{
	struct xp_device *d = &nd->devices[i];
	d->allocs = xp_realloc(d->allocs, (d->n_allocs + 1) * sizeof *d->allocs);
	d->allocs[d->n_allocs++] = (struct xp_alloc){slice ? xp_strdup(slice) : NULL, xp_strdup("other"), -1, 0};
}

static struct xp_job *job(const char *text)
{
	struct xp_err err = {{0}};
	struct xp_job *j = xp_job_parse(text, strlen(text), NULL, &err);
	ck_assert_msg(j != NULL, "%s", err.msg);
	return j;
}

static struct xp_place_result *place(const struct xp_cluster *c, const char *spec, int strategy)
{
	struct xp_job *j = job(spec);
	struct xp_err err = {{0}};
	struct xp_place_opts o = {strategy, 0, NULL};
	struct xp_place_result *r = xp_place(c, j, XP_TEST_MANS, 2, &o, &err);
	ck_assert_msg(r != NULL, "%s", err.msg);
	xp_job_free(j);
	return r;
}

static void sums(const struct xp_place_result *r)
{
	if (r->placed)
		return;
	size_t s = 0;
	for (size_t i = 0; i < r->n_reasons; i++) {
		s += r->reasons[i].count;
		if (i)
			ck_assert(r->reasons[i - 1].count >= r->reasons[i].count);
	}
	ck_assert_uint_eq(s, r->n_nodes);
}

static void devs_are(const struct xp_place_replica *p, const char *node, const char *env)
{
	ck_assert_str_eq(p->node, node);
	ck_assert_str_eq(p->env_value, env);
}

/* One placement on a hand-made cluster and its right answer. */
struct want {
	const char *spec;    /* the job */
	int strategy;        /* XP_STRAT_* */
	const char *nodes;   /* placed: each replica in order, "node" or "node=devices", space-separated;
			      * NULL: refused (no replica kept, reasons adding up to the node count) */
	const char *reason;  /* refused: the first reason's text; NULL: not checked */
	const char *summary; /* the whole summary; NULL: not checked */
	const char *relax;   /* refused: the one change that fits, "field=to"; "": none; NULL: not checked */
};

/* Places w->spec on c and checks the answer against w. */
static void expect(const struct xp_cluster *c, const struct want *w)
{
	struct xp_place_result *r = place(c, w->spec, w->strategy);
	if (w->summary)
		ck_assert_str_eq(r->summary, w->summary);
	if (!w->nodes) {
		ck_assert_msg(!r->placed, "%s: placed", w->spec);
		ck_assert_uint_eq(r->n_replicas, 0);
		sums(r);
		if (w->reason)
			ck_assert_msg(strcmp(r->reasons[0].text, w->reason) == 0, "%s: refused for %s, want %s", w->spec,
				      r->reasons[0].text, w->reason);
		if (w->relax && !*w->relax)
			ck_assert_ptr_null(r->relaxation);
		if (w->relax && *w->relax) {
			ck_assert_msg(r->relaxation != NULL, "%s: no relaxation, want %s", w->spec, w->relax);
			char *got = xp_asprintf("%s=%s", r->relaxation->field, r->relaxation->to);
			ck_assert_msg(strcmp(got, w->relax) == 0, "%s: relaxed %s, want %s", w->spec, got, w->relax);
			free(got);
		}
		xp_place_result_free(r);
		return;
	}
	ck_assert_msg(r->placed, "%s: %s", w->spec, r->summary);
	char *words = xp_strdup(w->nodes), *save = NULL;
	size_t i = 0;
	for (char *t = strtok_r(words, " ", &save); t; t = strtok_r(NULL, " ", &save), i++) {
		ck_assert_uint_lt(i, r->n_replicas);
		char *devs = strchr(t, '=');
		if (devs)
			*devs++ = '\0';
		ck_assert_msg(strcmp(r->replicas[i].node, t) == 0, "%s: replica %zu on %s, want %s", w->spec, i,
			      r->replicas[i].node, t);
		if (devs)
			ck_assert_msg(strcmp(r->replicas[i].env_value, devs) == 0, "%s: replica %zu takes %s, want %s",
				      w->spec, i, r->replicas[i].env_value, devs);
	}
	ck_assert_msg(r->n_replicas == i, "%s: %zu replicas, want %zu", w->spec, r->n_replicas, i);
	free(words);
	xp_place_result_free(r);
}

/* expect for each of the n placements in w, in order, on the same cluster. */
static void expect_all(const struct xp_cluster *c, const struct want *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		expect(c, &w[i]);
}

START_TEST(pack_and_spread)
{
	/* a: 8 free; b: ring 0 busy, ring 1 free. 4 devices: pack fills b (utilization 1.0
	 * after, against 0.5 on a) and keeps a whole; spread picks a (half free after, b none). */
	struct xp_cluster *c = xp_cluster_new();
	mknode(c, "a", 8, true, "1");
	struct xp_node *b = mknode(c, "b", 8, true, "1");
	for (int i = 0; i < 4; i++)
		busy(b, i, NULL);
	struct xp_place_result *r = place(c, "{\"devices\": 4}", XP_STRAT_PACK);
	ck_assert(r->placed);
	devs_are(&r->replicas[0], "b", "4,5,6,7");
	ck_assert_str_eq(r->replicas[0].env_name, "ASCEND_VISIBLE_DEVICES");
	/* The task's device files: each chosen device's node, then the control node. */
	ck_assert_uint_eq(r->replicas[0].n_mounts, 5);
	ck_assert_str_eq(r->replicas[0].mounts[0], "/dev/davinci4");
	ck_assert_str_eq(r->replicas[0].mounts[3], "/dev/davinci7");
	ck_assert_str_eq(r->replicas[0].mounts[4], "/dev/davinci_manager");
	ck_assert_str_eq(r->replicas[0].bus_ids[0], "0000:14:00.0");
	ck_assert_int_eq(r->replicas[0].numa, 1);
	xp_place_result_free(r);
	r = place(c, "{\"devices\": 4}", XP_STRAT_SPREAD);
	devs_are(&r->replicas[0], "a", "0,1,2,3");
	ck_assert(r->replicas[0].breakdown[XP_CRIT_BALANCE] > 0);
	xp_place_result_free(r);
	/* green: b already runs something (powered), a does not. */
	expect(c, &(struct want){"{\"devices\": 2}", XP_STRAT_GREEN, "b"});
	xp_cluster_free(c);
}
END_TEST

START_TEST(ring_rule)
{
	/* Devices 0, 1 and 4 busy: ring 0 has 2 free (2, 3), ring 1 has 3 free (5, 6, 7). Four
	 * devices fit in no one ring, so the node is refused though 5 are free; three fit in ring 1. */
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *n = mknode(c, "n", 8, true, "1");
	busy(n, 0, NULL);
	busy(n, 1, NULL);
	busy(n, 4, NULL);
	struct xp_place_result *r = place(c, "{\"devices\": 4}", XP_STRAT_PACK);
	ck_assert(!r->placed);
	ck_assert_uint_eq(r->n_reasons, 1);
	ck_assert_str_eq(r->reasons[0].code, "affinity");
	ck_assert_str_eq(r->reasons[0].text, "fewer than 4 free Ascend 910A in one HCCS group");
	ck_assert_str_eq(r->summary, "0/1 nodes fit: 1 fewer than 4 free Ascend 910A in one HCCS group");
	xp_place_result_free(r);
	expect_all(c, (const struct want[]){
		{"{\"devices\": 3}", XP_STRAT_PACK, "n=5,6,7"},
		/* Two devices: pack takes ring 0 (2 free: an exact fit), leaving ring 1's three. */
		{"{\"devices\": 2}", XP_STRAT_PACK, "n=2,3"},
		/* 8 needs both rings whole; 5 is not a multiple of the ring. */
		{"{\"devices\": 5}", XP_STRAT_PACK, NULL, "affinity rule ring:4 refuses 5 Ascend 910A devices"},
	}, 3);
	struct xp_cluster *c2 = xp_cluster_new();
	mknode(c2, "m", 8, true, "1");
	expect(c2, &(struct want){"{\"devices\": 8}", XP_STRAT_PACK, "m=0,1,2,3,4,5,6,7"});
	xp_cluster_free(c2);
	xp_cluster_free(c);
}
END_TEST

START_TEST(filters_and_reasons)
{
	/* One node per failing check, each refused for its first failing check only. */
	struct xp_cluster *c = xp_cluster_new();
	mknode(c, "a-down", 8, true, "1")->state = XP_NODE_DOWN;
	mknode(c, "b-drain", 8, true, "1")->state = XP_NODE_DRAINING;
	struct xp_node *sick = mknode(c, "c-sick", 8, true, "1");
	for (int i = 0; i < 5; i++)
		sick->devices[i].health = XP_HEALTH_FAIL;
	mknode(c, "d-nv", 8, false, "1");
	struct xp_node *full = mknode(c, "e-full", 8, true, "1");
	busy(full, 7, NULL);
	struct xp_node *nolabel = mknode(c, "f-nolabel", 8, true, "1");
	for (size_t i = 0; i < c->n_nodes; i++)
		if (c->nodes[i] != nolabel)
			xp_labels_set(&c->nodes[i]->governance, "pool", "train");
	struct xp_place_result *r = place(c, "{\"devices\": 8, \"model\": \"Ascend*\", \"labels\": {\"pool\": \"train\"}}",
					  XP_STRAT_PACK);
	ck_assert(!r->placed);
	sums(r);
	ck_assert_uint_eq(r->n_reasons, 6);
	const char *want[][2] = {{"fewer than 8 devices matching Ascend*", "model"},
				 {"fewer than 8 free Ascend 910A", "free"},
				 {"fewer than 8 healthy Ascend 910A", "health"},
				 {"label pool=train missing", "label"},
				 {"node down", "node-state"},
				 {"node draining", "node-state"}};
	for (size_t i = 0; i < 6; i++) {
		/* All count 1: sorted by text on ties. */
		ck_assert_uint_eq(r->reasons[i].count, 1);
		ck_assert_str_eq(r->reasons[i].text, want[i][0]);
		ck_assert_str_eq(r->reasons[i].code, want[i][1]);
	}
	xp_place_result_free(r);
	/* Memory: 40000 MiB is more than a 910A has. */
	r = place(c, "{\"devices\": 1, \"memory_mib\": 40000, \"model\": \"Ascend*\"}", XP_STRAT_PACK);
	ck_assert(!r->placed);
	sums(r);
	ck_assert_str_eq(r->reasons[0].code, "memory");
	ck_assert_uint_eq(r->reasons[0].count, 3); /* c-sick (3 healthy), e-full, f-nolabel */
	xp_place_result_free(r);
	xp_cluster_free(c);
}
END_TEST

START_TEST(gang_all_or_nothing)
{
	/* Two nodes of 8: two replicas of 8 fit (one each), three do not, and then nothing is kept. */
	struct xp_cluster *c = two_nodes("x", "y");
	expect_all(c, (const struct want[]){
		{"{\"devices\": 8, \"replicas\": 2}", XP_STRAT_PACK, "x y"},
		{"{\"devices\": 8, \"replicas\": 3}", XP_STRAT_PACK, NULL, NULL,
		 "only 2 of 3 replicas fit; for the next, 0/2 nodes fit: 2 fewer than 8 free Ascend 910A"},
	}, 2);
	xp_cluster_free(c);
}
END_TEST

/* A refused gang says how many replicas fit (fit: what "3 of 8 replicas fit" reads), placed or
 * not through the index, and a commit reads as live until released, its use per device the
 * index's own: two nodes of 8, three replicas of 8 -> 2 fit; two replicas placed -> fit 2 and
 * each device of x at use 1 after the commit, 0 (the cluster's base) after the release. */
START_TEST(gang_fit_and_commit_accessors)
{
	struct xp_cluster *c = two_nodes("x", "y");
	struct xp_place_index *ix = xp_place_index_new(c, XP_TEST_MANS, 2);
	struct xp_err err = {{0}};
	struct xp_place_opts o = {.strategy = XP_STRAT_PACK, .quiet = true};
	struct xp_job *j3 = job("{\"devices\": 8, \"replicas\": 3}");
	struct xp_place_result *r = xp_place_ix(ix, j3, &o, &err);
	ck_assert_msg(r != NULL, "%s", err.msg);
	ck_assert(!r->placed);
	ck_assert_uint_eq(r->fit, 2);
	xp_place_result_free(r);
	struct xp_job *j2 = job("{\"devices\": 8, \"replicas\": 2}");
	r = xp_place_ix(ix, j2, &o, &err);
	ck_assert(r && r->placed);
	ck_assert_uint_eq(r->fit, 2);
	int64_t id = xp_place_commit(ix, r);
	ck_assert(xp_place_commit_live(ix, id));
	ck_assert(!xp_place_commit_live(ix, id + 1));
	ck_assert(!xp_place_commit_live(ix, -1));
	double base = -1;
	ck_assert(xp_place_index_use(ix, 0, 3, &base) == 1.0);
	ck_assert(base == 0.0);
	ck_assert(xp_place_release(ix, id));
	ck_assert(!xp_place_commit_live(ix, id));
	ck_assert(xp_place_index_use(ix, 0, 3, NULL) == 0.0);
	xp_place_result_free(r);
	xp_job_free(j2);
	xp_job_free(j3);
	xp_place_index_free(ix);
	xp_cluster_free(c);
}
END_TEST

/* A bare placement (a scheduler's loop) picks the same devices as a full one but carries no
 * bus ids, environment or mounts, and a bare refusal no relaxation: two nodes of 8, a job of
 * 4 devices goes to x's devices 0-3 either way; 12 devices on one node fit nowhere. */
START_TEST(bare_placement)
{
	struct xp_cluster *c = two_nodes("x", "y");
	struct xp_place_index *ix = xp_place_index_new(c, XP_TEST_MANS, 2);
	struct xp_err err = {{0}};
	struct xp_job *j = job("{\"devices\": 4}");
	struct xp_place_opts full = {.strategy = XP_STRAT_PACK}, bare = {.strategy = XP_STRAT_PACK, .bare = true};
	struct xp_place_result *a = xp_place_ix(ix, j, &full, &err), *b = xp_place_ix(ix, j, &bare, &err);
	ck_assert(a && a->placed && b && b->placed);
	ck_assert_uint_eq(a->replicas[0].node_ix, b->replicas[0].node_ix);
	ck_assert_uint_eq(b->replicas[0].n_devices, 4);
	for (int k = 0; k < 4; k++)
		ck_assert_int_eq(a->replicas[0].pos[k], b->replicas[0].pos[k]);
	ck_assert_ptr_nonnull(a->replicas[0].env_value);
	ck_assert_ptr_null(b->replicas[0].env_value);
	ck_assert_ptr_null(b->replicas[0].bus_ids);
	ck_assert_uint_eq(b->replicas[0].n_mounts, 0);
	ck_assert_str_eq(b->replicas[0].isolation, "exclusive");
	xp_place_result_free(a);
	xp_place_result_free(b);
	xp_job_free(j);
	j = job("{\"devices\": 12}");
	a = xp_place_ix(ix, j, &full, &err);
	b = xp_place_ix(ix, j, &bare, &err);
	ck_assert(a && !a->placed && b && !b->placed);
	ck_assert_ptr_nonnull(a->relaxation);
	ck_assert_ptr_null(b->relaxation);
	ck_assert_str_eq(a->summary, b->summary);
	xp_place_result_free(a);
	xp_place_result_free(b);
	xp_job_free(j);
	xp_place_index_free(ix);
	xp_cluster_free(c);
}
END_TEST

START_TEST(homogeneous)
{
	/* x runs driver 1, y and z driver 2. Two replicas of 8, homogeneous: only y and z agree,
	 * though x sorts first; without the constraint x and y. */
	struct xp_cluster *c = xp_cluster_new();
	mknode(c, "x", 8, true, "1");
	mknode(c, "y", 8, true, "2");
	mknode(c, "z", 8, true, "2");
	expect_all(c, (const struct want[]){
		{"{\"devices\": 8, \"replicas\": 2, \"homogeneous\": true}", XP_STRAT_PACK, "y z"},
		{"{\"devices\": 8, \"replicas\": 2, \"homogeneous\": false}", XP_STRAT_PACK, "x y"},
		/* Three homogeneous replicas: no kind has three nodes. */
		{"{\"devices\": 8, \"replicas\": 3, \"homogeneous\": true}", XP_STRAT_PACK, NULL},
	}, 3);
	xp_cluster_free(c);
}
END_TEST

START_TEST(slices)
{
	/* Device 0 holds 5 of 7 1g.10gb slices, device 1 is busy whole: two more slices fit on
	 * device 0 (pack takes the busiest device that fits), a third fits nowhere. */
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *n = mknode(c, "g", 2, false, "1");
	for (int i = 0; i < 5; i++)
		busy(n, 0, "1g.10gb");
	busy(n, 1, NULL);
	struct xp_place_result *r = place(c, "{\"slice\": \"1g.10gb\", \"replicas\": 2}", XP_STRAT_PACK);
	ck_assert(r->placed);
	devs_are(&r->replicas[0], "g", "0");
	devs_are(&r->replicas[1], "g", "0");
	ck_assert_str_eq(r->replicas[0].slice, "1g.10gb");
	ck_assert_str_eq(r->replicas[0].env_name, "CUDA_VISIBLE_DEVICES");
	xp_place_result_free(r);
	expect(c, &(struct want){"{\"slice\": \"1g.10gb\", \"replicas\": 3}", XP_STRAT_PACK, NULL,
				 "fewer than 1 free H100 80GB HBM3 with slice 1g.10gb"});
	xp_cluster_free(c);
}
END_TEST

START_TEST(numa)
{
	/* 4 devices, NUMA 0: 0, 1; NUMA 1: 2, 3; device 1 busy. Two in one domain: 2, 3. Three
	 * strict: no domain has three, refused; prefer falls back to 0, 2, 3 across domains. */
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *n = mknode(c, "g", 4, false, "1");
	busy(n, 1, NULL);
	struct xp_place_result *r = place(c, "{\"devices\": 2, \"numa\": \"strict\"}", XP_STRAT_PACK);
	devs_are(&r->replicas[0], "g", "2,3");
	ck_assert_int_eq(r->replicas[0].numa, 1);
	xp_place_result_free(r);
	expect(c, &(struct want){"{\"devices\": 3, \"numa\": \"strict\"}", XP_STRAT_PACK, NULL,
				 "fewer than 3 free H100 80GB HBM3 in one NUMA domain"});
	r = place(c, "{\"devices\": 3, \"numa\": \"prefer\"}", XP_STRAT_PACK);
	devs_are(&r->replicas[0], "g", "0,2,3");
	ck_assert_int_eq(r->replicas[0].numa, -1);
	xp_place_result_free(r);
	xp_cluster_free(c);
}
END_TEST

/* Sets a node's switch and rack (NULL: not recorded). */
static void locate(struct xp_node *nd, const char *sw, const char *rack)
{
	nd->sw = sw ? xp_strdup(sw) : NULL;
	nd->rack = rack ? xp_strdup(rack) : NULL;
}

START_TEST(network)
{
	/* s1: a (ring 0 busy, 4 free); s2: b (ring 0 busy, 4 free) and c (8 free); all in rack r1.
	 * 2 replicas of 4, pack: with no constraint a and b tie at utilization 1.0 for the first
	 * replica (a sorts first) and b takes the second: two switches. Under one switch, s1 holds
	 * only one replica, so s2 it is: b (fills it) then c. Under one rack: a and b again. */
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *a = mknode(c, "a", 8, true, "1");
	struct xp_node *b = mknode(c, "b", 8, true, "1");
	struct xp_node *cc = mknode(c, "c", 8, true, "1");
	for (int i = 0; i < 4; i++) {
		busy(a, i, NULL);
		busy(b, i, NULL);
	}
	locate(a, "s1", "r1");
	locate(b, "s2", "r1");
	locate(cc, "s2", "r1");
	expect_all(c, (const struct want[]){
		{"{\"devices\": 4, \"replicas\": 2}", XP_STRAT_PACK, "a b"},
		{"{\"devices\": 4, \"replicas\": 2, \"network\": \"switch\"}", XP_STRAT_PACK, "b=4,5,6,7 c=0,1,2,3"},
		{"{\"devices\": 4, \"replicas\": 2, \"network\": \"rack\"}", XP_STRAT_PACK, "a b"},
	}, 3);

	/* 2 replicas of 8 under one switch: s1's a has no 8 free (its own reason), s2 holds one
	 * replica on c but not the second (both its nodes say so), d has no switch: 4 reasons. */
	mknode(c, "d", 8, true, "1");
	struct xp_place_result *r = place(c, "{\"devices\": 8, \"replicas\": 2, \"network\": \"switch\"}", XP_STRAT_PACK);
	ck_assert(!r->placed);
	ck_assert_uint_eq(r->n_replicas, 0);
	sums(r);
	ck_assert_uint_eq(r->n_reasons, 3);
	ck_assert_str_eq(r->reasons[0].code, "network");
	ck_assert_str_eq(r->reasons[0].text, "its switch has room for fewer than 2 replicas");
	ck_assert_uint_eq(r->reasons[0].count, 2);
	ck_assert_str_eq(r->reasons[1].text, "fewer than 8 free Ascend 910A");
	ck_assert_str_eq(r->reasons[2].text, "no switch recorded");
	xp_place_result_free(r);
	/* Without the constraint the same job fits on c and d. */
	expect(c, &(struct want){"{\"devices\": 8, \"replicas\": 2}", XP_STRAT_PACK, "c d"});
	/* No rack recorded anywhere but r1: d is refused for it, the rest as before. */
	r = place(c, "{\"devices\": 8, \"replicas\": 3, \"network\": \"rack\"}", XP_STRAT_PACK);
	ck_assert(!r->placed);
	sums(r);
	bool norack = false;
	for (size_t i = 0; i < r->n_reasons; i++)
		norack = norack || (strcmp(r->reasons[i].text, "no rack recorded") == 0 && r->reasons[i].count == 1);
	ck_assert(norack);
	xp_place_result_free(r);
	xp_cluster_free(c);
}
END_TEST

START_TEST(explain)
{
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *n = mknode(c, "n", 8, true, "1");
	n->devices[3].health = XP_HEALTH_FAIL;
	struct xp_job *j = job("{\"devices\": 8}");
	struct xp_err err = {{0}};
	struct xp_place_opts o = {XP_STRAT_PACK, 0, "n"};
	struct xp_place_result *r = xp_place(c, j, XP_TEST_MANS, 2, &o, &err);
	ck_assert(r && r->explained && !r->placed);
	/* node-state, model, homogeneous pass; health fails with its numbers, and stops there. */
	ck_assert_uint_eq(r->n_checks, 4);
	ck_assert(r->checks[2].pass);
	ck_assert_str_eq(r->checks[3].name, "health");
	ck_assert(!r->checks[3].pass);
	ck_assert_str_eq(r->checks[3].detail, "have 7, need 8 Ascend 910A");
	xp_place_result_free(r);
	xp_job_free(j);
	xp_cluster_free(c);
}
END_TEST

/* Real manifests for the sim clusters (NULL entries skipped). */
static size_t real_manifests(struct xp_manifest **ms)
{
	size_t n = xp_place_manifests(ms);
	ck_assert_uint_ge(n, 3);
	return n;
}

/* The device's manifest model fits the group's patterns, as placement judges it. */
static bool model_in(struct xp_manifest **ms, size_t nm, const struct xp_task_group *g, const struct xp_device *d)
{
	for (size_t i = 0; i < nm; i++)
		for (size_t k = 0; k < ms[i]->n_models; k++)
			if (strcmp(ms[i]->models[k].name, d->model) == 0)
				return xp_job_model_matches(g, ms[i], &ms[i]->models[k]);
	return false;
}

START_TEST(property)
{
	/* Random sim clusters and jobs: every placement keeps to the job and to what is free, no
	 * device is taken twice, refusals' reasons add up to the node count, runs repeat. */
	struct xp_manifest *ms[XP_PLACE_MANIFESTS];
	size_t nm = real_manifests(ms);
	const struct xp_manifest *const *cms = (const struct xp_manifest *const *)ms;
	static const char *const models[] = {"*", "Ascend*", "H100*", "*MI*", "A100*"};
	struct xp_rng rng;
	xp_rng_seed(&rng, 42);
	size_t placed = 0, refused = 0, placed_net = 0;
	for (int it = 0; it < 1000; it++) {
		struct xp_err err = {{0}};
		struct xp_cluster *c = xp_sim_generate(5 + xp_rng_below(&rng, 30), NULL, 1000 + (uint64_t)it, &err);
		ck_assert_msg(c != NULL, "%s", err.msg);
		static const int devs[] = {1, 2, 3, 4, 8};
		char spec[256];
		snprintf(spec, sizeof spec,
			 "{\"devices\": %d, \"replicas\": %d, \"model\": \"%s\", \"numa\": \"%s\", \"memory_mib\": %d, "
			 "\"network\": \"%s\"}",
			 devs[xp_rng_below(&rng, 5)], 1 + (int)xp_rng_below(&rng, 4), models[xp_rng_below(&rng, 5)],
			 xp_rng_below(&rng, 3) ? "none" : "strict", xp_rng_below(&rng, 4) ? 0 : 40000,
			 it % 4 == 1 ? "switch" : it % 4 == 3 ? "rack" : "any");
		struct xp_job *j = job(spec);
		int strat = (int)xp_rng_below(&rng, XP_STRAT_COUNT);
		struct xp_place_opts o = {strat, 0, NULL, false, false};
		struct xp_place_result *r = xp_place(c, j, cms, nm, &o, &err);
		ck_assert_msg(r != NULL, "%s", err.msg);
		/* The index and a plain scan of every node give the same answer, reasons included. */
		struct xp_place_opts so = o;
		so.scan = true;
		struct xp_place_result *r2 = xp_place(c, j, cms, nm, &so, &err);
		ck_assert_int_eq(r->placed, r2->placed);
		ck_assert_uint_eq(r->n_replicas, r2->n_replicas);
		ck_assert_str_eq(r->summary, r2->summary);
		for (size_t i = 0; i < r->n_replicas; i++)
			ck_assert_double_eq(r->replicas[i].score, r2->replicas[i].score);
		ck_assert_uint_eq(r->n_reasons, r2->n_reasons);
		for (size_t i = 0; i < r->n_reasons; i++) {
			ck_assert_str_eq(r->reasons[i].text, r2->reasons[i].text);
			ck_assert_uint_eq(r->reasons[i].count, r2->reasons[i].count);
		}
		ck_assert_int_eq(r->relaxation != NULL, r2->relaxation != NULL);
		if (r->relaxation)
			ck_assert_str_eq(r->relaxation->summary, r2->relaxation->summary);
		/* The same again on the same cluster: the same answer. */
		struct xp_place_result *r3 = xp_place(c, j, cms, nm, &o, &err);
		ck_assert_str_eq(r->summary, r3->summary);
		for (size_t i = 0; i < r->n_replicas; i++)
			ck_assert_str_eq(r->replicas[i].env_value, r3->replicas[i].env_value);
		xp_place_result_free(r3);
		const struct xp_task_group *g = &j->groups[0];
		if (r->placed) {
			placed++;
			placed_net += g->network != XP_NET_ANY;
			ck_assert_uint_eq(r->n_replicas, (size_t)g->replicas);
			for (size_t i = 0; i < r->n_replicas; i++) {
				const struct xp_place_replica *p = &r->replicas[i];
				ck_assert_str_eq(p->node, r2->replicas[i].node);
				ck_assert_str_eq(p->env_value, r2->replicas[i].env_value);
				const struct xp_node *nd = xp_cluster_node(c, p->node);
				ck_assert(nd && (nd->state == XP_NODE_UP || nd->state == XP_NODE_DEGRADED));
				/* Under one switch (rack) when asked. */
				const struct xp_node *n0 = xp_cluster_node(c, r->replicas[0].node);
				if (g->network == XP_NET_SWITCH)
					ck_assert(nd->sw && n0->sw && strcmp(nd->sw, n0->sw) == 0);
				if (g->network == XP_NET_RACK)
					ck_assert(nd->rack && n0->rack && strcmp(nd->rack, n0->rack) == 0);
				ck_assert_uint_eq(p->n_devices, (size_t)g->devices);
				for (size_t k = 0; k < p->n_devices; k++) {
					const struct xp_device *d = &nd->devices[p->devices[k]];
					ck_assert_int_eq(d->n_allocs, 0);
					ck_assert_int_ne(d->health, XP_HEALTH_FAIL);
					ck_assert(model_in(ms, nm, g, d));
					if (p->n_devices <= 4 && d->affinity_group && strstr(d->affinity_group, "hccs"))
						ck_assert_str_eq(d->affinity_group,
								 nd->devices[p->devices[0]].affinity_group);
					ck_assert(g->memory_mib == 0 || d->memory_mib >= g->memory_mib);
					if (g->numa == XP_NUMA_STRICT)
						ck_assert_int_eq(d->numa, p->numa);
					ck_assert(strcmp(d->model, nd->devices[p->devices[0]].model) == 0);
					/* No device twice, within or across replicas. */
					for (size_t i2 = 0; i2 <= i; i2++)
						for (size_t k2 = 0; k2 < r->replicas[i2].n_devices; k2++)
							if (!(i2 == i && k2 == k) && strcmp(r->replicas[i2].node, p->node) == 0)
								ck_assert_int_ne(r->replicas[i2].devices[k2], p->devices[k]);
				}
			}
		} else {
			refused++;
			ck_assert_uint_eq(r->n_replicas, 0);
			sums(r);
		}
		xp_place_result_free(r);
		xp_place_result_free(r2);
		xp_job_free(j);
		xp_cluster_free(c);
	}
	/* Both outcomes are exercised. */
	ck_assert_uint_gt(placed, 20);
	ck_assert_uint_gt(refused, 20);
	ck_assert_uint_gt(placed_net, 10);
	xp_place_manifests_free(ms, nm);
}
END_TEST

/* The environment id of the first environment `validate env list` shows for model. */
static char *env_of(const char *db, const char *model)
{
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "validate", "env", "list", "--json", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	json_error_t je;
	json_t *j = json_loads(r.out, 0, &je), *e;
	ck_assert_msg(j != NULL, "%s", je.text);
	char *id = NULL;
	size_t i;
	json_array_foreach(json_object_get(j, "environments"), i, e) {
		if (!id && strcmp(json_string_value(json_object_get(e, "model")), model) == 0)
			id = xp_strdup(json_string_value(json_object_get(e, "id")));
	}
	json_decref(j);
	xp_run_free(&r);
	ck_assert_msg(id != NULL, "no environment for %s", model);
	return id;
}

START_TEST(closest_devices)
{
	/* A PCIe node of 4 (one NUMA domain): 0-1 and 2-3 under one switch each (PIX), the pairs
	 * across host bridges (NODE). 2 devices with 0 busy: 2,3 (PIX) beat 1,2 (the first free,
	 * NODE apart); with 0 and 3 busy only 1,2 are left. */
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *nd = mknode(c, "p", 4, false, "1");
	for (int i = 0; i < 4; i++) {
		nd->devices[i].numa = 0;
		xp_istr_drop(nd->devices[i].affinity_group);
		nd->devices[i].affinity_group = NULL;
	}
	xp_node_links_reset(nd);
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 4; b++)
			if (a != b)
				xp_node_link(nd, (size_t)a, (size_t)b)->cls = a / 2 == b / 2 ? XP_LINK_PIX : XP_LINK_NODE;
	busy(nd, 0, NULL);
	expect(c, &(struct want){"{\"devices\": 2}", XP_STRAT_TOPOLOGY, "p=2,3"});
	busy(nd, 3, NULL);
	expect(c, &(struct want){"{\"devices\": 2}", XP_STRAT_TOPOLOGY, "p=1,2"});
	xp_cluster_free(c);
}
END_TEST

/* A node of one bare H100 SXM (no bus, NUMA or link: only what MIG placement reads). */
static struct xp_node *h100_node(struct xp_cluster *c, const char *name)
{
	struct xp_node *nd = xp_node_new(name);
	struct xp_device *d = xp_node_add_device(nd);
	d->vendor = xp_strdup("NVIDIA");
	d->model = xp_strdup("H100 SXM 80GB");
	d->driver = xp_strdup("550.90.07");
	d->memory_mib = 81559;
	d->health = XP_HEALTH_OK;
	xp_cluster_add(c, nd);
	return nd;
}

START_TEST(mig_mix)
{
	/* MIG on an H100 (the shipped manifest): a slice takes its compute share and a start
	 * NVIDIA allows. A 3g.40gb (3/7) leaves compute for four 1g.10gb, but it sits at memory
	 * slice 0 or 4 (which, the snapshot does not say): at 0, 1g slices start only at 4, 5
	 * and 6 (none at 7), so three are sure and a fourth is not. Two 3g.40gb fill all 8 memory
	 * slices: no 1g.10gb at all, though a seventh of the compute is left. */
	struct xp_manifest *ms[XP_PLACE_MANIFESTS];
	size_t nm = real_manifests(ms);
	const struct xp_manifest *const *cms = (const struct xp_manifest *const *)ms;
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *nd = h100_node(c, "g");
	busy(nd, 0, "3g.40gb");
	struct xp_job *j = job("{\"slice\": \"1g.10gb\", \"replicas\": 3}");
	/* The GPUs' instances are in use: new ones (--reconfigure) are what this judges. */
	struct xp_place_opts o = {XP_STRAT_PACK, 0, NULL, false, false, true};
	struct xp_err err = {{0}};
	struct xp_place_result *r = xp_place(c, j, cms, nm, &o, &err);
	ck_assert_msg(r && r->placed, "%s", r ? r->summary : err.msg);
	xp_place_result_free(r);
	xp_job_free(j);
	j = job("{\"slice\": \"1g.10gb\", \"replicas\": 4}");
	r = xp_place(c, j, cms, nm, &o, &err);
	ck_assert(!r->placed);
	ck_assert_str_eq(r->relaxation->to, "3");
	xp_place_result_free(r);
	xp_job_free(j);
	/* A soft share never lands beside hard slices (nor a slice beside shares): the device
	 * runs in one partition mode. */
	j = job("{\"share_pct\": 20}");
	r = xp_place(c, j, cms, nm, &o, &err);
	ck_assert(!r->placed);
	ck_assert_str_eq(r->reasons[0].code, "free");
	xp_place_result_free(r);
	xp_job_free(j);
	busy(nd, 0, "3g.40gb");
	j = job("{\"slice\": \"1g.10gb\"}");
	r = xp_place(c, j, cms, nm, &o, &err);
	ck_assert(!r->placed);
	ck_assert_msg(strstr(r->summary, "start") != NULL, "%s", r->summary);
	xp_place_result_free(r);
	xp_job_free(j);
	/* The other way, on a kept index: a committed share keeps MIG slices off the device,
	 * and its release lets them back. */
	h100_node(c, "h");
	struct xp_place_index *ix = xp_place_index_new(c, cms, nm);
	j = job("{\"share_pct\": 10}");
	r = xp_place_ix(ix, j, &o, &err);
	ck_assert(r->placed);
	ck_assert_str_eq(r->replicas[0].node, "h");
	ck_assert_str_eq(r->replicas[0].isolation, "soft");
	int64_t id = xp_place_commit(ix, r);
	xp_place_result_free(r);
	xp_job_free(j);
	/* g has one seventh left: a 2g.20gb fits only on h. */
	j = job("{\"slice\": \"2g.20gb\"}");
	r = xp_place_ix(ix, j, &o, &err);
	ck_assert(!r->placed);
	xp_place_result_free(r);
	ck_assert(xp_place_release(ix, id));
	r = xp_place_ix(ix, j, &o, &err);
	ck_assert(r->placed);
	ck_assert_str_eq(r->replicas[0].node, "h");
	ck_assert_str_eq(r->replicas[0].isolation, "mig");
	xp_place_result_free(r);
	xp_job_free(j);
	xp_place_index_free(ix);
	xp_cluster_free(c);
	xp_place_manifests_free(ms, nm);
}
END_TEST

START_TEST(topology_keeps_replicas_close)
{
	/* a (switch s1) sorts first; b and c share switch s2. Two replicas of a whole node:
	 * pack takes a and b (equal scores, name order); topology keeps both under one switch
	 * (b and c) and says so. With no switch holding both, topology places anywhere. */
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *a = mknode(c, "a", 8, true, "1"), *b = mknode(c, "b", 8, true, "1"),
		       *cc = mknode(c, "c", 8, true, "1");
	a->sw = xp_strdup("s1");
	b->sw = xp_strdup("s2");
	cc->sw = xp_strdup("s2");
	expect_all(c, (const struct want[]){
		{"{\"devices\": 8, \"replicas\": 2}", XP_STRAT_PACK, "a b"},
		{"{\"devices\": 8, \"replicas\": 2}", XP_STRAT_TOPOLOGY, "b c", NULL,
		 "placed 2 replicas on 2 nodes under one switch (topology)"},
		{"{\"devices\": 8, \"replicas\": 3}", XP_STRAT_TOPOLOGY, "a b c", NULL,
		 "placed 3 replicas on 3 nodes (topology)"},
	}, 3);
	xp_cluster_free(c);
}
END_TEST

START_TEST(review_regressions)
{
	/* An ECU far beyond its power limit overflowed green's efficiency to NaN, and a NaN score
	 * ordered nothing: the index and the scan then chose different nodes. */
	struct xp_cluster *c = xp_cluster_new();
	mknode(c, "a", 8, false, "1");
	struct xp_node *b = mknode(c, "b", 8, false, "1");
	for (int i = 0; i < 8; i++) {
		b->devices[i].ecu = 1e308;
		b->devices[i].power_limit_w = 1;
	}
	busy(b, 0, NULL);
	busy(b, 1, NULL);
	for (int s = 0; s < XP_STRAT_COUNT; s++) {
		struct xp_job *j = job("{\"devices\": 1}");
		struct xp_place_opts o = {s, 0, NULL, false, false}, so = o;
		so.scan = true;
		struct xp_err err = {{0}};
		struct xp_place_result *r = xp_place(c, j, XP_TEST_MANS, 2, &o, &err), *r2 = xp_place(c, j, XP_TEST_MANS, 2, &so, &err);
		ck_assert(r->placed && r2->placed);
		ck_assert(isfinite(r->replicas[0].score));
		ck_assert_str_eq(r->replicas[0].node, r2->replicas[0].node);
		xp_place_result_free(r);
		xp_place_result_free(r2);
		xp_job_free(j);
	}
	xp_cluster_free(c);
	/* Two shapes whose strings joined alike ("a|b","c" and "a","b|c") shared kept answers. */
	c = xp_cluster_new();
	struct xp_node *n = xp_node_new("x");
	struct xp_device *d = xp_node_add_device(n);
	d->vendor = xp_strdup("a");
	d->model = xp_strdup("b|c");
	d->health = XP_HEALTH_OK;
	xp_cluster_add(c, n);
	struct xp_place_index *ix = xp_place_index_new(c, NULL, 0);
	struct xp_job *j1 = job("{\"vendor\": \"a|b\", \"model\": \"c\"}"),
		      *j2 = job("{\"vendor\": \"a\", \"model\": \"b|c\"}");
	struct xp_place_opts o = {XP_STRAT_PACK, 0, NULL, false, false};
	struct xp_err err = {{0}};
	struct xp_place_result *r = xp_place_ix(ix, j1, &o, &err);
	ck_assert(!r->placed);
	xp_place_result_free(r);
	r = xp_place_ix(ix, j2, &o, &err);
	ck_assert(r->placed);
	xp_place_result_free(r);
	xp_job_free(j1);
	xp_job_free(j2);
	xp_place_index_free(ix);
	xp_cluster_free(c);
}
END_TEST

START_TEST(gc_many_classes)
{
	/* 1,500 nodes that differ by a label are 1,500 classes: more than the hash table a
	 * collection starts from, which once made it loop for ever. A job placed, committed
	 * and released on the collected index lands where a fresh one says. */
	struct xp_cluster *c = xp_cluster_new();
	for (int i = 0; i < 1500; i++) {
		char name[16];
		snprintf(name, sizeof name, "n%04d", i);
		struct xp_node *nd = mknode(c, name, 8, true, "1");
		xp_labels_set(&nd->governance, "rack", name);
	}
	struct xp_place_index *ix = xp_place_index_new(c, XP_TEST_MANS, 2);
	struct xp_job *j = job("{\"devices\": 4, \"replicas\": 20}");
	struct xp_place_opts o = {XP_STRAT_PACK, 0, NULL, false, false};
	struct xp_err err = {{0}};
	struct xp_place_result *r = xp_place_ix(ix, j, &o, &err);
	int64_t id = xp_place_commit(ix, r);
	xp_place_result_free(r);
	ck_assert(xp_place_release(ix, id));
	ck_assert_uint_gt(xpi_gc(ix, true), 0);
	struct xp_place_index_stats st;
	xp_place_index_stats(ix, &st);
	ck_assert_uint_eq(st.classes, 1500);
	r = xp_place_ix(ix, j, &o, &err);
	struct xp_place_result *r2 = xp_place(c, j, XP_TEST_MANS, 2, &o, &err);
	ck_assert_str_eq(r->summary, r2->summary);
	for (size_t i = 0; i < r->n_replicas; i++)
		ck_assert_str_eq(r->replicas[i].node, r2->replicas[i].node);
	xp_place_result_free(r);
	xp_place_result_free(r2);
	xp_job_free(j);
	xp_place_index_free(ix);
	xp_cluster_free(c);
}
END_TEST

START_TEST(busy_classes_not_judged)
{
	/* Nine NVIDIA nodes of 8, node i with i devices held by whole jobs: nine classes. Eight
	 * whole devices fit only on the idle one, and a decision judges that one alone, not the
	 * eight that lack idle devices (by their score bound under pack they all may reach 100,
	 * so each was judged and refused). One device: pack's best is n7, judged alone; the full
	 * n8, whose bound is as high, is not judged. The answers are the scan's. */
	struct xp_cluster *c = xp_cluster_new();
	for (int i = 0; i < 9; i++) {
		char name[16];
		snprintf(name, sizeof name, "n%d", i);
		struct xp_node *nd = mknode(c, name, 8, false, "1");
		for (int d = 0; d < i; d++)
			busy(nd, d, NULL);
	}
	struct xp_place_index *ix = xp_place_index_new(c, XP_TEST_MANS, 2);
	static const char *const specs[] = {"{\"devices\": 8}", "{\"devices\": 1}"};
	static const char *const node[] = {"n0", "n7"};
	static const uint64_t judged[] = {1, 1 + 1}; /* in all, so far */
	for (size_t i = 0; i < 2; i++) {
		struct xp_job *j = job(specs[i]);
		struct xp_err err = {{0}};
		struct xp_place_opts o = {XP_STRAT_PACK, 0, NULL, false, true}, so = o;
		so.scan = true;
		struct xp_place_result *r = xp_place_ix(ix, j, &o, &err);
		struct xp_place_result *s = xp_place(c, j, XP_TEST_MANS, 2, &so, &err);
		ck_assert(r && s && r->placed && s->placed);
		ck_assert_str_eq(r->replicas[0].node, node[i]);
		ck_assert_str_eq(s->replicas[0].node, node[i]);
		struct xp_place_index_stats st;
		xp_place_index_stats(ix, &st);
		ck_assert_uint_eq(st.live_classes, 9);
		ck_assert_msg(st.judged == judged[i], "%s: %llu classes judged", specs[i], (unsigned long long)st.judged);
		xp_place_result_free(r);
		xp_place_result_free(s);
		xp_job_free(j);
	}
	xp_place_index_free(ix);
	xp_cluster_free(c);
}
END_TEST

START_TEST(gang_min)
{
	/* Two free nodes of 8; 3 replicas of 8 with a gang minimum of 2: two start, one waits,
	 * and the result says why the third does not fit. Without the minimum: nothing. */
	struct xp_cluster *c = two_nodes("a", "b");
	struct xp_place_result *r = place(c, "{\"devices\": 8, \"replicas\": 3, \"gang_min\": 2}", XP_STRAT_PACK);
	ck_assert(r->placed);
	ck_assert_uint_eq(r->n_replicas, 2);
	ck_assert_uint_eq(r->pending, 1);
	ck_assert_uint_eq(r->n_reasons, 1);
	ck_assert_uint_eq(r->reasons[0].count, 2);
	ck_assert_ptr_nonnull(strstr(r->summary, "1 pending"));
	xp_place_result_free(r);
	expect(c, &(struct want){"{\"devices\": 8, \"replicas\": 3, \"gang_min\": 3}", XP_STRAT_PACK, NULL});
	xp_cluster_free(c);
}
END_TEST

START_TEST(relaxation)
{
	/* a: pool=infer, 8 free in two NUMA domains of 4; b: pool=train, 3 free. Each job below
	 * fails for one reason, and the relaxation names the one change that fixes it. */
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *a = mknode(c, "a", 8, false, "1");
	struct xp_node *b = mknode(c, "b", 8, false, "1");
	xp_labels_set(&a->governance, "pool", "infer");
	xp_labels_set(&b->governance, "pool", "train");
	for (int i = 0; i < 5; i++)
		busy(b, i, NULL);
	/* 8 devices in pool train: only b has the label and it has 3 free; a (infer) would. */
	struct xp_place_result *r = place(c, "{\"devices\": 8, \"labels\": {\"pool\": \"train\"}}", XP_STRAT_PACK);
	ck_assert(!r->placed);
	ck_assert_ptr_nonnull(r->relaxation);
	ck_assert_str_eq(r->relaxation->field, "labels");
	ck_assert_str_eq(r->relaxation->from, "pool=train");
	ck_assert_str_eq(r->relaxation->to, "pool=infer");
	ck_assert_str_eq(r->relaxation->summary, "placed 1 replica on 1 node (pack)");
	xp_place_result_free(r);
	expect_all(c, (const struct want[]){
		/* 6 in one NUMA domain (domains hold 4): strict fails, prefer places. */
		{"{\"devices\": 6, \"numa\": \"strict\"}", XP_STRAT_PACK, .relax = "numa=prefer"},
		/* 9 devices on nodes of 8: fewer devices (8 is the largest that fits). */
		{"{\"devices\": 9}", XP_STRAT_PACK, .relax = "devices=8"},
		/* 4 replicas of 3 on a (8 free) and b (3 free): fewer devices, 4 replicas of 2. */
		{"{\"devices\": 3, \"replicas\": 4}", XP_STRAT_PACK, .relax = "devices=2"},
		/* Nothing helps a model that is not there. */
		{"{\"devices\": 1, \"model\": \"B200*\"}", XP_STRAT_PACK, .relax = ""},
	}, 4);
	xp_cluster_free(c);
}
END_TEST

START_TEST(commit_release)
{
	/* A kept index: what is committed is busy for the next decision, and a release gives it
	 * back, so that the answer is again the fresh index's. */
	struct xp_cluster *c = two_nodes("a", "b");
	struct xp_place_index *ix = xp_place_index_new(c, XP_TEST_MANS, 2);
	struct xp_job *j = job("{\"devices\": 4}");
	struct xp_place_opts o = {XP_STRAT_PACK, 0, NULL, false, false};
	struct xp_err err = {{0}};
	int64_t ids[4];
	const char *want[] = {"a", "a", "b", "b"};
	for (int i = 0; i < 4; i++) {
		struct xp_place_result *r = xp_place_ix(ix, j, &o, &err);
		ck_assert(r && r->placed);
		/* pack fills a before b, and each commit takes the next free HCCS ring. */
		ck_assert_str_eq(r->replicas[0].node, want[i]);
		ids[i] = xp_place_commit(ix, r);
		ck_assert_int_eq(ids[i], i);
		xp_place_result_free(r);
	}
	struct xp_place_result *r = xp_place_ix(ix, j, &o, &err);
	ck_assert(!r->placed);
	ck_assert_str_eq(r->summary, "0/2 nodes fit: 2 fewer than 4 free Ascend 910A");
	ck_assert_int_eq(xp_place_commit(ix, r), -1);
	xp_place_result_free(r);
	ck_assert(xp_place_release(ix, ids[1]));
	ck_assert(!xp_place_release(ix, ids[1]));
	ck_assert(!xp_place_release(ix, 99));
	r = xp_place_ix(ix, j, &o, &err);
	ck_assert(r->placed);
	devs_are(&r->replicas[0], "a", "4,5,6,7");
	xp_place_result_free(r);
	for (int i = 0; i < 4; i++)
		if (i != 1)
			ck_assert(xp_place_release(ix, ids[i]));
	struct xp_place_index_stats st;
	xp_place_index_stats(ix, &st);
	/* Back to the start: the first class again (a and b alike, both idle). */
	ck_assert_uint_eq(st.live_classes, 1);
	r = xp_place_ix(ix, j, &o, &err);
	devs_are(&r->replicas[0], "a", "0,1,2,3");
	xp_place_result_free(r);
	xp_job_free(j);
	xp_place_index_free(ix);
	xp_cluster_free(c);
}
END_TEST

START_TEST(product_walk_kept)
{
	/* Whether a group's devices follow one product's rule reads every device of the cluster:
	 * the index keeps the answer per pattern, and a group that names no vendor or model, or
	 * takes slices or shares, never needs it. */
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_sim_generate(200, NULL, 7, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	struct xp_manifest *ms[XP_PLACE_MANIFESTS];
	size_t nm = xp_place_manifests(ms);
	struct xp_place_index *ix = xp_place_index_new(c, (const struct xp_manifest *const *)ms, nm);
	struct xp_place_opts o = {XP_STRAT_PACK, 0, NULL, false, false, false};
	struct xp_place_index_stats st;
	static const char *const plain[] = {"{\"devices\": 2}", "{\"share_pct\": 25, \"model\": \"H100*\"}",
					    "{\"devices\": 2, \"model\": \"H100*\"}", "{\"devices\": 4, \"model\": \"H100*\"}",
					    "{\"devices\": 1, \"vendor\": \"amd\"}", "{\"devices\": 2, \"model\": \"H100*\"}"};
	static const uint64_t walks[] = {0, 0, 1, 1, 2, 2};
	for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
		struct xp_job *j = job(plain[i]);
		struct xp_place_result *r = xp_place_ix(ix, j, &o, &err);
		struct xp_place_result *s = xp_place(c, j, (const struct xp_manifest *const *)ms, nm,
						     &(struct xp_place_opts){XP_STRAT_PACK, 0, NULL, true, false, false}, &err);
		ck_assert(r && s);
		/* The kept answer places as the scan on a fresh index does. */
		ck_assert_str_eq(r->summary, s->summary);
		xp_place_result_free(r);
		xp_place_result_free(s);
		xp_job_free(j);
		xp_place_index_stats(ix, &st);
		ck_assert_msg(st.product_walks == walks[i], "%s: %llu walks", plain[i], (unsigned long long)st.product_walks);
	}
	xp_place_index_free(ix);
	xp_place_manifests_free(ms, nm);
	xp_cluster_free(c);
}
END_TEST

/* The share of a device one slice of template name takes, from the manifests (1: unknown). */
static double slice_share(struct xp_manifest **ms, size_t nm, const char *model, const char *name)
{
	for (size_t i = 0; i < nm; i++)
		for (size_t k = 0; k < ms[i]->n_models; k++)
			if (strcmp(ms[i]->models[k].name, model) == 0)
				for (size_t t = 0; t < ms[i]->models[k].n_templates; t++)
					if (strcasecmp(ms[i]->models[k].templates[t].name, name) == 0)
						return ms[i]->models[k].templates[t].compute > 0
							? ms[i]->models[k].templates[t].compute
							: ms[i]->models[k].templates[t].count > 0
							? 1.0 / ms[i]->models[k].templates[t].count : 1;
	return 1;
}

START_TEST(stream_property)
{
	/* Thousands of seeded decisions committed and released on kept indexes of sim clusters:
	 * no device ever holds more than it can (what the cluster showed plus every commit on it,
	 * counted here apart from the index), every refusal accounts for every node, and releasing
	 * everything brings back the answers of a plain scan of the untouched cluster. */
	struct xp_manifest *ms[XP_PLACE_MANIFESTS];
	size_t nm = real_manifests(ms);
	const struct xp_manifest *const *cms = (const struct xp_manifest *const *)ms;
	static const char *const specs[] = {
		"{\"devices\": 1}", "{\"devices\": 2, \"same_group\": true}", "{\"devices\": 4, \"model\": \"Ascend*\"}",
		"{\"devices\": 8, \"kind\": \"train\", \"replicas\": 2}", "{\"slice\": \"1g.10gb\", \"model\": \"H100*\"}",
		"{\"share_pct\": 30}", "{\"devices\": 2, \"numa\": \"strict\", \"replicas\": 3, \"gang_min\": 1}",
		"{\"devices\": 4, \"network\": \"switch\", \"replicas\": 2}",
	};
	struct xp_job *jobs[8];
	for (size_t i = 0; i < 8; i++)
		jobs[i] = job(specs[i]);
	struct xp_rng rng;
	xp_rng_seed(&rng, 7);
	size_t decisions = 0, placed = 0, gc_dropped = 0;
	for (int it = 0; it < 20; it++) {
		struct xp_err err = {{0}};
		struct xp_cluster *c = xp_sim_generate(20 + xp_rng_below(&rng, 60), NULL, 500 + (uint64_t)it, &err);
		ck_assert_msg(c != NULL, "%s", err.msg);
		struct xp_place_index *ix = xp_place_index_new(c, cms, nm);
		size_t nd = 0;
		for (size_t i = 0; i < c->n_nodes; i++)
			nd += c->nodes[i]->n_devices;
		/* Our own account of every commit: device (node, index) -> share taken. */
		double *taken = calloc(nd ? nd : 1, sizeof *taken);
		size_t *off = calloc(c->n_nodes + 1, sizeof *off);
		for (size_t i = 0; i < c->n_nodes; i++)
			off[i + 1] = off[i] + c->nodes[i]->n_devices;
		int64_t live[64];
		struct xp_place_result *kept[64] = {NULL};
		size_t nl = 0;
		for (int k = 0; k < 150; k++) {
			struct xp_job *jb = jobs[xp_rng_below(&rng, 8)];
			struct xp_place_opts o = {(int)xp_rng_below(&rng, XP_STRAT_COUNT), 0, NULL, false, false, true};
			struct xp_place_result *r = xp_place_ix(ix, jb, &o, &err);
			ck_assert_msg(r != NULL, "%s", err.msg);
			decisions++;
			/* Every 20 decisions the classes no node is in are dropped and the rest
			 * renumbered; the checks below and the final scan hold across it. */
			if (k % 20 == 19)
				gc_dropped += xpi_gc(ix, true);
			if (!r->placed) {
				sums(r);
				xp_place_result_free(r);
			} else {
				placed++;
				for (size_t i = 0; i < r->n_replicas; i++) {
					const struct xp_place_replica *p = &r->replicas[i];
					const struct xp_node *n = c->nodes[p->node_ix];
					for (size_t d = 0; d < p->n_devices; d++) {
						const struct xp_device *dv = &n->devices[p->pos[d]];
						double have = 0;
						for (size_t a = 0; a < dv->n_allocs; a++)
							have += dv->allocs[a].share_pct > 0 ? dv->allocs[a].share_pct / 100.0
								: dv->allocs[a].slice ? slice_share(ms, nm, dv->model, dv->allocs[a].slice) : 1;
						taken[off[p->node_ix] + (size_t)p->pos[d]] += p->take;
						/* Whole devices come only idle; slices and shares only fill. */
						ck_assert_msg(taken[off[p->node_ix] + (size_t)p->pos[d]] + have <= 1 + 1e-6,
							      "device %s/%d over-allocated", n->name, dv->index);
					}
				}
				if (nl == 64 || xp_rng_below(&rng, 4) == 0) {
					/* Release the oldest. */
					if (nl) {
						ck_assert(xp_place_release(ix, live[0]));
						for (size_t i = 0; i < kept[0]->n_replicas; i++) {
							const struct xp_place_replica *p = &kept[0]->replicas[i];
							for (size_t d = 0; d < p->n_devices; d++)
								taken[off[p->node_ix] + (size_t)p->pos[d]] -= p->take;
						}
						xp_place_result_free(kept[0]);
						memmove(live, live + 1, (nl - 1) * sizeof *live);
						memmove(kept, kept + 1, (nl - 1) * sizeof *kept);
						nl--;
					}
				}
				live[nl] = xp_place_commit(ix, r);
				kept[nl++] = r;
			}
		}
		for (size_t i = 0; i < nl; i++) {
			ck_assert(xp_place_release(ix, live[i]));
			xp_place_result_free(kept[i]);
		}
		/* Everything released: the kept index answers as a fresh scan does. */
		for (size_t s = 0; s < 8; s++) {
			/* Sim clusters hold no free MIG instance: slices are new ones (--reconfigure). */
			struct xp_place_opts o = {XP_STRAT_PACK, 0, NULL, false, false, true}, so = o;
			so.scan = true;
			struct xp_place_result *r1 = xp_place_ix(ix, jobs[s], &o, &err);
			struct xp_place_result *r2 = xp_place(c, jobs[s], cms, nm, &so, &err);
			ck_assert_str_eq(r1->summary, r2->summary);
			for (size_t i = 0; i < r1->n_replicas; i++)
				ck_assert_str_eq(r1->replicas[i].env_value, r2->replicas[i].env_value);
			xp_place_result_free(r1);
			xp_place_result_free(r2);
		}
		free(taken);
		free(off);
		xp_place_index_free(ix);
		xp_cluster_free(c);
	}
	ck_assert_uint_ge(decisions, 3000);
	ck_assert_uint_gt(gc_dropped, 100);
	ck_assert_uint_gt(placed, decisions / 2);
	for (size_t i = 0; i < 8; i++)
		xp_job_free(jobs[i]);
	xp_place_manifests_free(ms, nm);
}
END_TEST

START_TEST(many_replicas_property)
{
	/* Groups of 16 or more replicas keep their candidates in a heap (of classes, or of nodes
	 * within a switch or rack): on random clusters, with slices, shares, network scopes and
	 * gang minimums, the answer (every replica, every reason, the
	 * relaxation) is the plain scan's. */
	struct xp_manifest *ms[XP_PLACE_MANIFESTS];
	size_t nm = real_manifests(ms);
	const struct xp_manifest *const *cms = (const struct xp_manifest *const *)ms;
	static const char *const shapes[] = {"\"devices\": 1", "\"devices\": 2", "\"share_pct\": 40",
					     "\"slice\": \"1g.10gb\", \"model\": \"H100*\"",
					     "\"devices\": 1, \"numa\": \"strict\"", "\"devices\": 1, \"network\": \"rack\"",
					     "\"devices\": 2, \"network\": \"switch\""};
	struct xp_rng rng;
	xp_rng_seed(&rng, 99);
	size_t placed = 0, refused = 0;
	for (int it = 0; it < 200; it++) {
		struct xp_err err = {{0}};
		struct xp_cluster *c = xp_sim_generate(4 + xp_rng_below(&rng, 12), NULL, 7000 + (uint64_t)it, &err);
		ck_assert_msg(c != NULL, "%s", err.msg);
		char spec[256];
		int reps = 16 + (int)xp_rng_below(&rng, 48);
		snprintf(spec, sizeof spec, "{%s, \"replicas\": %d, \"gang_min\": %d}", shapes[xp_rng_below(&rng, 7)], reps,
			 xp_rng_below(&rng, 2) ? reps : 1 + (int)xp_rng_below(&rng, (uint64_t)reps));
		struct xp_job *j = job(spec);
		struct xp_place_opts o = {(int)xp_rng_below(&rng, XP_STRAT_COUNT), 0, NULL, false, false}, so = o;
		so.scan = true;
		struct xp_place_result *r = xp_place(c, j, cms, nm, &o, &err);
		struct xp_place_result *r2 = xp_place(c, j, cms, nm, &so, &err);
		ck_assert_msg(r && r2, "%s", err.msg);
		ck_assert_str_eq(r->summary, r2->summary);
		ck_assert_uint_eq(r->n_replicas, r2->n_replicas);
		ck_assert_uint_eq(r->pending, r2->pending);
		for (size_t i = 0; i < r->n_replicas; i++) {
			ck_assert_str_eq(r->replicas[i].node, r2->replicas[i].node);
			ck_assert_str_eq(r->replicas[i].env_value, r2->replicas[i].env_value);
		}
		ck_assert_int_eq(r->relaxation != NULL, r2->relaxation != NULL);
		if (r->relaxation)
			ck_assert_str_eq(r->relaxation->summary, r2->relaxation->summary);
		if (r->placed)
			placed++;
		else {
			refused++;
			sums(r);
		}
		xp_place_result_free(r);
		xp_place_result_free(r2);
		xp_job_free(j);
		xp_cluster_free(c);
	}
	ck_assert_uint_gt(placed, 20);
	ck_assert_uint_gt(refused, 20);
	xp_place_manifests_free(ms, nm);
}
END_TEST

/* How many times s holds sub. */
static size_t count_of(const char *s, const char *sub)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, sub)); p += strlen(sub))
		n++;
	return n;
}

START_TEST(cli_batch_keeps_index)
{
	/* The lines of one batch share the index while the cluster stays: built once, and each
	 * dry-run leaves it as it was (the third line answers as the first and as a process of its
	 * own). Another source for one line is another cluster: its own index, and the base
	 * source's is built again after it. */
	char *path = xp_test_sim_file(60, 5), *other = xp_test_sim_file(30, 9);
	char *script = xp_asprintf("place --dry-run --devices 2 --json\n"
				   "place --dry-run --devices 8 --model 'H100*' --json\n"
				   "place --dry-run --devices 2 --json\n"
				   "--inventory %s place --dry-run --devices 1 -q\n"
				   "place --dry-run --devices 2 --json\n",
				   other);
	char *sf = xp_tmpfile(script, strlen(script));
	struct xp_run r, one;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "-v", "--inventory", path, "-b", sf, NULL), 0);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(count_of(r.err, "placement index built for 60 nodes") == 2, "%s", r.err);
	ck_assert_msg(count_of(r.err, "placement index built for 30 nodes") == 1, "%s", r.err);
	ck_assert_int_eq(xp_run_xpool(&one, NULL, "--inventory", path, "place", "--dry-run", "--devices", "2", "--json",
				      NULL), 0);
	ck_assert_int_eq(one.status, 0);
	/* Lines 1, 3 and 5 print what the single process does, each once. */
	ck_assert_uint_eq(count_of(r.out, one.out), 3);
	xp_run_free(&one);
	xp_run_free(&r);
	unlink(sf);
	unlink(path);
	unlink(other);
	free(sf);
	free(script);
	free(path);
	free(other);
}
END_TEST

/* Runs one command line (words split on spaces) on ctx; its stderr goes to err. */
static int ctx_run(struct xp_ctx *ctx, const char *line)
{
	char *copy = xp_strdup(line), *argv[16], *save = NULL;
	int argc = 0;
	for (char *w = strtok_r(copy, " ", &save); w && argc < 15; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	int rc = xp_cmd_run(ctx, argc, argv);
	free(copy);
	return rc;
}

START_TEST(console_keeps_index)
{
	/* What the console does around its prompt: a command's generation bump (xp_ctx_touch)
	 * keeps the index; a refresh with new data drops it first (xp_ctx_place_drop) and the next
	 * place builds one on the new cluster, which it then answers for. */
	char *path = xp_test_sim_file(50, 11);
	char *errs = NULL, *out = NULL;
	size_t le, lo;
	FILE *fe = open_memstream(&errs, &le), *fo = open_memstream(&out, &lo);
	struct xp_ctx ctx;
	xp_ctx_init(&ctx, fo, fe);
	ctx.verbose = 1;
	ctx.inventory = xp_strdup(path);
	xp_ctx_settle(&ctx);
	ck_assert_int_eq(ctx_run(&ctx, "place --dry-run --devices 2 -q"), 0);
	xp_ctx_touch(&ctx);
	ck_assert_int_eq(ctx_run(&ctx, "place --dry-run --devices 2 -q"), 0);
	fflush(fe);
	ck_assert_uint_eq(count_of(errs, "placement index built for 50 nodes"), 1);
	/* A refresh: another cluster of 20 nodes in place of the old one. */
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_sim_generate(20, NULL, 4, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	xp_ctx_place_drop(&ctx);
	xp_cluster_free(ctx.cluster);
	ctx.cluster = c;
	ck_assert_int_eq(ctx_run(&ctx, "place --dry-run --devices 2 --json"), 0);
	fflush(fe);
	fflush(fo);
	ck_assert_uint_eq(count_of(errs, "placement index built for 20 nodes"), 1);
	ck_assert_ptr_nonnull(strstr(out, "\"placed\": true"));
	/* The data changing in place (a generation the keep did not see): built again. */
	c->generation += 5;
	ck_assert_int_eq(ctx_run(&ctx, "place --dry-run --devices 2 -q"), 0);
	fflush(fe);
	ck_assert_uint_eq(count_of(errs, "placement index built for 20 nodes"), 2);
	xp_ctx_free(&ctx);
	fclose(fe);
	fclose(fo);
	free(errs);
	free(out);
	unlink(path);
	free(path);
}
END_TEST

/* A database path in a fresh folder of the test's own: xpool refuses one straight in /tmp,
 * where another user could plant its -wal (check_files). Remove the folder with rmdir. */
static char *scratch_db(void)
{
	char tmpl[] = "/tmp/xpool-placedb-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	return xp_asprintf("%s/x.db", tmpl);
}

START_TEST(cli_batch_sees_new_evidence)
{
	/* A kept index does not keep the validation evidence: a batch that records a result
	 * between two `place --validated` lines sees it on the second. */
	char *path = xp_test_sim_file(40, 3);
	char *db = scratch_db();
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "validate", "case", "add", "llama", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--inventory", path, "validate", "sync", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	xp_run_free(&r);
	char *env = env_of(db, "H100 SXM 80GB");
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", path, "place", "--dry-run", "--model", "H100 SXM*", "--json",
				      NULL), 0);
	json_error_t je;
	json_t *j = json_loads(r.out, 0, &je);
	ck_assert_msg(j != NULL, "%s", je.text);
	char *node = xp_strdup(json_string_value(json_object_get(json_array_get(json_object_get(j, "replicas"), 0), "node")));
	json_decref(j);
	xp_run_free(&r);
	char *script = xp_asprintf("place --dry-run --devices 2 -q\n"
				   "place --dry-run --devices 2 --validated executes:llama -q\n"
				   "validate record '%s' llama schedulable pass --node %s\n"
				   "validate record '%s' llama launches pass --node %s\n"
				   "validate record '%s' llama executes pass --node %s\n"
				   "place --dry-run --devices 2 --validated executes:llama --json\n",
				   env, node, env, node, env, node);
	char *sf = xp_tmpfile(script, strlen(script));
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "-v", "-k", "--db", db, "--inventory", path, "-b", sf, NULL), 0);
	/* The first --validated line is refused (exit 3: nothing proven yet), the last placed. */
	ck_assert_msg(r.status == 3, "exit %d: %s", r.status, r.err);
	ck_assert_msg(count_of(r.err, "placement index built") == 1, "%s", r.err);
	const char *last = strstr(r.out, "{");
	ck_assert_msg(last != NULL, "%s", r.out);
	j = json_loads(last, 0, &je);
	ck_assert_msg(j != NULL, "%s: %s", je.text, r.out);
	ck_assert(json_is_true(json_object_get(j, "placed")));
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(
					     json_array_get(json_object_get(j, "replicas"), 0), "node")), "h100"));
	json_decref(j);
	xp_run_free(&r);
	free(script);
	unlink(sf);
	free(sf);
	free(env);
	free(node);
	unlink(path);
	free(path);
	char *wal = xp_asprintf("%s-wal", db), *shm = xp_asprintf("%s-shm", db);
	unlink(db);
	unlink(wal);
	unlink(shm);
	free(wal);
	free(shm);
	*strrchr(db, '/') = '\0';
	rmdir(db);
	free(db);
}
END_TEST

START_TEST(cli_validated)
{
	/* --validated reads the validation matrix: only devices whose environment is proven to
	 * the layer for the case fit; the others are refused with their driver named. */
	char *path = xp_test_sim_file(40, 3);
	char *db = scratch_db();
	struct xp_run r;
	/* No database yet: a named case cannot be proven anywhere, and it says so. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--inventory", path, "place", "--dry-run", "--validated",
				      "executes:llama", NULL), 0);
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.err, "no case llama"));
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "validate", "case", "add", "llama", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--inventory", path, "validate", "sync", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	xp_run_free(&r);
	char *env = env_of(db, "H100 SXM 80GB");
	/* The evidence comes from an H100 node of the snapshot (one where such a job lands). */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", path, "place", "--dry-run", "--model", "H100 SXM*", "--json",
				      NULL), 0);
	json_error_t je;
	json_t *j = json_loads(r.out, 0, &je);
	ck_assert_msg(j != NULL, "%s", je.text);
	char *node = xp_strdup(json_string_value(json_object_get(json_array_get(json_object_get(j, "replicas"), 0), "node")));
	json_decref(j);
	xp_run_free(&r);
	static const char *const layers[] = {"schedulable", "launches", "executes"};
	for (size_t i = 0; i < 3; i++) {
		ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--inventory", path, "validate", "record", env, "llama",
					      layers[i], "pass", "--node", node, NULL), 0);
		ck_assert_msg(r.status == 0, "%s", r.err);
		xp_run_free(&r);
	}
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--inventory", path, "place", "--dry-run", "--devices", "2",
				      "--validated", "executes:llama", "--json", NULL), 0);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	j = json_loads(r.out, 0, &je);
	ck_assert_msg(j != NULL, "%s", je.text);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(
					     json_array_get(json_object_get(j, "replicas"), 0), "node")), "h100"));
	json_decref(j);
	xp_run_free(&r);
	/* Accepted is above what was proven: nothing fits, and the reason names driver and layer. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--inventory", path, "place", "--dry-run", "--devices", "2",
				      "--validated", "accepted:llama", NULL), 0);
	ck_assert_int_eq(r.status, 3);
	ck_assert_ptr_nonnull(strstr(r.out, "not validated (accepted) for case llama"));
	xp_run_free(&r);
	/* A100 nodes were never proven for llama. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--inventory", path, "place", "--dry-run", "--model", "A100*",
				      "--validated", "launches:llama", NULL), 0);
	ck_assert_int_eq(r.status, 3);
	xp_want_parts(r.out, "A100 80GB driver", "not validated (launches) for case llama", NULL);
	xp_run_free(&r);
	/* Any case: the discovered layer holds for every device in the inventory. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--inventory", path, "place", "--dry-run", "--validated",
				      "discovered", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	xp_run_free(&r);
	free(env);
	free(node);
	unlink(path);
	free(path);
	char *wal = xp_asprintf("%s-wal", db), *shm = xp_asprintf("%s-shm", db);
	unlink(db);
	unlink(wal);
	unlink(shm);
	free(wal);
	free(shm);
	*strrchr(db, '/') = '\0';
	rmdir(db);
	free(db);
}
END_TEST

START_TEST(cli)
{
	char *path = xp_test_sim_file(40, 3);
	struct xp_run r;
	/* 100 replicas of 8 cannot fit 40 nodes: exit 3 with the reasons. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", path, "place", "--dry-run", "--devices", "8",
				      "--replicas", "100", "--json", NULL), 0);
	ck_assert_msg(r.status == 3, "exit %d: %s", r.status, r.err);
	json_error_t je;
	json_t *j = json_loads(r.out, 0, &je);
	ck_assert_msg(j != NULL, "%s", je.text);
	const char *keys[] = {"placed", "strategy", "replicas", "reasons", "pending", "relaxation", "summary"};
	ck_assert_uint_eq(json_object_size(j), 7);
	for (size_t i = 0; i < 7; i++)
		ck_assert_msg(json_object_get(j, keys[i]) != NULL, "%s", keys[i]);
	ck_assert(json_is_false(json_object_get(j, "placed")));
	/* Fewer than 100 devices are free, so no smaller device count helps: fewer replicas is
	 * the change that fits, reported with what it would get. */
	json_t *rx = json_object_get(j, "relaxation");
	ck_assert(json_is_object(rx));
	ck_assert_str_eq(json_string_value(json_object_get(rx, "field")), "replicas");
	ck_assert_str_eq(json_string_value(json_object_get(rx, "from")), "100");
	ck_assert(strncmp(json_string_value(json_object_get(rx, "summary")), "placed ", 7) == 0);
	ck_assert(strncmp(json_string_value(json_object_get(j, "summary")), "only ", 5) == 0);
	json_int_t total = 0;
	json_t *x;
	size_t i;
	json_array_foreach(json_object_get(j, "reasons"), i, x) {
		ck_assert(json_is_string(json_object_get(x, "code")));
		ck_assert(json_is_string(json_object_get(x, "text")));
		total += json_integer_value(json_object_get(x, "count"));
	}
	ck_assert_int_eq(total, 40);
	json_decref(j);
	xp_run_free(&r);
	/* One device fits: exit 0, a replica with every key. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", path, "place", "--dry-run", "--json", NULL), 0);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	j = json_loads(r.out, 0, &je);
	ck_assert(json_is_true(json_object_get(j, "placed")));
	json_t *rep = json_array_get(json_object_get(j, "replicas"), 0);
	/* A replica in one NUMA domain is pinned to that domain's CPUs (sim nodes list them). */
	if (json_is_integer(json_object_get(rep, "numa")))
		ck_assert(json_is_string(json_object_get(rep, "cpus")));
	const char *rkeys[] = {"node",	"devices", "slices", "isolation", "numa", "cpus", "score", "score_breakdown",
			       "env",	"mounts"};
	for (size_t k = 0; k < 10; k++)
		ck_assert_msg(json_object_get(rep, rkeys[k]) != NULL, "%s", rkeys[k]);
	json_decref(j);
	xp_run_free(&r);
	/* Without --dry-run: a usage error. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", path, "place", NULL), 0);
	ck_assert_int_eq(r.status, 2);
	xp_run_free(&r);
	unlink(path);
	free(path);
}
END_TEST

/* Two results are the same answer: replicas, scores, reasons and counts, the relaxation. */
static void same_result(const struct xp_place_result *r, const struct xp_place_result *r2, const char *spec)
{
	ck_assert_msg(r->placed == r2->placed, "%s: placed %d vs %d", spec, r->placed, r2->placed);
	ck_assert_msg(strcmp(r->summary, r2->summary) == 0, "%s: %s | %s", spec, r->summary, r2->summary);
	ck_assert_uint_eq(r->n_replicas, r2->n_replicas);
	for (size_t i = 0; i < r->n_replicas; i++) {
		ck_assert_str_eq(r->replicas[i].node, r2->replicas[i].node);
		ck_assert_str_eq(r->replicas[i].env_value, r2->replicas[i].env_value);
		ck_assert_double_eq(r->replicas[i].score, r2->replicas[i].score);
	}
	ck_assert_uint_eq(r->n_reasons, r2->n_reasons);
	for (size_t i = 0; i < r->n_reasons; i++) {
		ck_assert_str_eq(r->reasons[i].text, r2->reasons[i].text);
		ck_assert_uint_eq(r->reasons[i].count, r2->reasons[i].count);
	}
	ck_assert_int_eq(r->relaxation != NULL, r2->relaxation != NULL);
	if (r->relaxation)
		ck_assert_str_eq(r->relaxation->summary, r2->relaxation->summary);
}

/* A refresh changed node i: a copy changed in what placement reads (use, health, labels, state). */
static struct xp_node *changed_node(const struct xp_node *o, struct xp_rng *rng)
{
	struct xp_node *n = xp_node_clone(o);
	size_t d = n->n_devices ? xp_rng_below(rng, (uint32_t)n->n_devices) : 0;
	switch (xp_rng_below(rng, 7)) {
	case 6: /* a driver upgrade: its devices become another kind (a homogeneous job's keys) */
		for (size_t k = 0; k < n->n_devices; k++)
			xp_istr_set(&n->devices[k].driver, n->devices[k].driver && !strcmp(n->devices[k].driver, "999.1")
								 ? "550.54.15"
								 : "999.1");
		break;
	case 0: /* a job took a device, or left them all */
	case 1:
		if (n->n_devices && n->devices[d].n_allocs == 0) {
			n->devices[d].allocs = xp_calloc(1, sizeof *n->devices[d].allocs);
			n->devices[d].allocs[0] = (struct xp_alloc){.owner = xp_strdup("job-x"), .memory_mib = -1};
			n->devices[d].n_allocs = 1;
		} else {
			for (size_t k = 0; k < n->n_devices; k++) {
				struct xp_device *dv = &n->devices[k];
				for (size_t a = 0; a < dv->n_allocs; a++) {
					free(dv->allocs[a].slice);
					free(dv->allocs[a].owner);
					free(dv->allocs[a].uuid);
				}
				free(dv->allocs);
				dv->allocs = NULL;
				dv->n_allocs = 0;
			}
		}
		break;
	case 2:
		if (n->n_devices)
			n->devices[d].health = n->devices[d].health == XP_HEALTH_FAIL ? XP_HEALTH_OK : XP_HEALTH_FAIL;
		break;
	case 3:
		xp_labels_set(&n->governance, "pool", xp_rng_below(rng, 2) ? "batch" : "research");
		break;
	case 4:
		n->state = n->state == XP_NODE_UP ? XP_NODE_DOWN : XP_NODE_UP;
		break;
	default: /* what placement does not read: a metric */
		if (n->n_devices)
			n->devices[d].utilization_pct = (double)xp_rng_below(rng, 100);
		break;
	}
	return n;
}

/* An index moved to a refreshed cluster by re-indexing only the changed nodes answers every job
 * as an index built afresh on that cluster, round after round (issue 15: the console over agents). */
START_TEST(index_update_matches_rebuild)
{
	struct xp_manifest *ms[XP_PLACE_MANIFESTS];
	size_t nm = real_manifests(ms);
	const struct xp_manifest *const *cms = (const struct xp_manifest *const *)ms;
	static const char *const models[] = {"*", "Ascend*", "H100*", "*MI*", "A100*"};
	struct xp_rng rng;
	xp_rng_seed(&rng, 15);
	struct xp_err err = {{0}};
	for (int trial = 0; trial < 4; trial++) {
		struct xp_cluster *c = xp_sim_generate(60 + xp_rng_below(&rng, 200), NULL, 500 + (uint64_t)trial, &err);
		ck_assert_msg(c != NULL, "%s", err.msg);
		struct xp_place_index *ix = xp_place_index_new(c, cms, nm);
		for (int round = 0; round < 8; round++) {
			/* Some jobs first, so that the index holds answers to keep or drop. */
			for (int q = 0; q < 2 * 12; q++) {
				static const int devs[] = {1, 2, 4, 8};
				char spec[256];
				snprintf(spec, sizeof spec,
					 "{\"devices\": %d, \"replicas\": %d, \"model\": \"%s\", \"numa\": \"%s\", "
					 "\"network\": \"%s\", \"homogeneous\": %s}",
					 devs[xp_rng_below(&rng, 4)], 1 + (int)xp_rng_below(&rng, 3),
					 models[xp_rng_below(&rng, 5)], xp_rng_below(&rng, 3) ? "none" : "strict",
					 q % 5 == 1 ? "switch" : q % 5 == 3 ? "rack" : "any", q % 3 == 0 ? "true" : "false");
				struct xp_job *j = job(spec);
				struct xp_place_opts o = {(int)xp_rng_below(&rng, XP_STRAT_COUNT), 0, NULL, false, false};
				struct xp_place_result *r = xp_place_ix(ix, j, &o, &err);
				ck_assert_msg(r != NULL, "%s", err.msg);
				if (q >= 12) {
					/* The second half: against a fresh index of the same cluster. */
					struct xp_place_index *fresh = xp_place_index_new(c, cms, nm);
					struct xp_place_result *r2 = xp_place_ix(fresh, j, &o, &err);
					same_result(r, r2, spec);
					xp_place_result_free(r2);
					xp_place_index_free(fresh);
				}
				xp_place_result_free(r);
				xp_job_free(j);
			}
			/* A refresh: K nodes changed, the others the same nodes (shared, as the pool does). */
			struct xp_cluster *c2 = xp_cluster_new();
			size_t k = 1 + xp_rng_below(&rng, round == 7 ? (uint32_t)c->n_nodes : 8);
			bool *chg = xp_calloc(c->n_nodes, sizeof *chg);
			size_t *list = xp_calloc(k, sizeof *list), n_list = 0;
			for (size_t j = 0; j < k; j++) {
				size_t i = xp_rng_below(&rng, (uint32_t)c->n_nodes);
				list[n_list++] = i; /* a node listed twice is re-indexed once */
				chg[i] = true;
			}
			size_t distinct = 0;
			for (size_t i = 0; i < c->n_nodes; i++) {
				distinct += chg[i];
				xp_cluster_add(c2, chg[i] ? changed_node(c->nodes[i], &rng) : xp_node_ref(c->nodes[i]));
			}
			ck_assert_int_eq(xp_place_index_update(ix, c2, list, n_list), (int)distinct);
			/* The index holds nothing of the old cluster: it goes first. */
			xp_cluster_free(c);
			c = c2;
			free(chg);
			free(list);
		}
		/* What it refuses, unchanged: another node count, another device count. */
		struct xp_cluster *c3 = xp_cluster_new();
		for (size_t i = 0; i + 1 < c->n_nodes; i++)
			xp_cluster_add(c3, xp_node_ref(c->nodes[i]));
		size_t zero = 0;
		ck_assert_int_eq(xp_place_index_update(ix, c3, &zero, 1), -1);
		xp_cluster_free(c3);
		c3 = xp_cluster_new();
		for (size_t i = 0; i < c->n_nodes; i++)
			xp_cluster_add(c3, i == 0 && c->nodes[0]->n_devices ? xp_node_new(c->nodes[0]->name)
									 : xp_node_ref(c->nodes[i]));
		ck_assert_int_eq(xp_place_index_update(ix, c3, &zero, 1), c->nodes[0]->n_devices ? -1 : 1);
		xp_cluster_free(c3);
		xp_place_index_free(ix);
		xp_cluster_free(c);
	}
	xp_place_manifests_free(ms, nm);
}
END_TEST

/* The console's refresh over agents (issue 15): the new cluster has the old one's nodes in the
 * same places, most of them the very same nodes; the prompt's kept index follows it by indexing
 * only the changed ones again (xp_ctx_place_follow), and answers as an index built afresh. */
START_TEST(console_index_follows_refresh)
{
	char *path = xp_test_sim_file(60, 12);
	char *errs = NULL, *out = NULL;
	size_t le, lo;
	FILE *fe = open_memstream(&errs, &le), *fo = open_memstream(&out, &lo);
	struct xp_ctx ctx;
	xp_ctx_init(&ctx, fo, fe);
	ctx.verbose = 1;
	ctx.inventory = xp_strdup(path);
	xp_ctx_settle(&ctx);
	ck_assert_int_eq(ctx_run(&ctx, "place --dry-run --devices 2 -q"), 0);
	struct xp_cluster *old = ctx.cluster;
	struct xp_rng rng;
	xp_rng_seed(&rng, 7);
	for (int round = 0; round < 4; round++) {
		/* A refresh: three nodes changed, the rest shared. */
		struct xp_cluster *c = xp_cluster_new();
		size_t chg[3] = {3 + (size_t)round, 20 + (size_t)round * 2, 41};
		for (size_t i = 0, k = 0; i < old->n_nodes; i++) {
			if (k < 3 && chg[k] == i) {
				xp_cluster_add(c, changed_node(old->nodes[i], &rng));
				k++;
			} else {
				xp_cluster_add(c, xp_node_ref(old->nodes[i]));
			}
		}
		ck_assert(xp_ctx_place_follow(&ctx, old, old->generation, c, chg, 3));
		xp_cluster_free(old);
		ctx.cluster = old = c;
		fflush(fo);
		size_t at = lo;
		ck_assert_int_eq(ctx_run(&ctx, "place --dry-run --devices 4 --replicas 3 --json"), 0);
		fflush(fo);
		char *kept = xp_strndup(out + at, lo - at);
		/* The same command on an index built afresh: the same answer. */
		xp_ctx_place_drop(&ctx);
		at = lo;
		ck_assert_int_eq(ctx_run(&ctx, "place --dry-run --devices 4 --replicas 3 --json"), 0);
		fflush(fo);
		ck_assert_str_eq(kept, out + at);
		free(kept);
	}
	fflush(fe);
	ck_assert_uint_eq(count_of(errs, "placement index moved to the new data (3 nodes indexed again)"), 4);
	/* Built by the first place and by each comparison's fresh index, never for a refresh. */
	ck_assert_uint_eq(count_of(errs, "placement index built for 60 nodes"), 1 + 4);
	/* An index not current for the old cluster does not follow: dropped. */
	ck_assert(!xp_ctx_place_follow(&ctx, (const struct xp_cluster *)&rng, 0, ctx.cluster, NULL, 0));
	ck_assert_ptr_null(ctx.place_keep);
	xp_ctx_free(&ctx);
	fclose(fe);
	fclose(fo);
	free(errs);
	free(out);
	unlink(path);
	free(path);
}
END_TEST

XP_DEFINE_SUITE(place,
	{"core", .timeout_s = 120, .setup = setup, .teardown = xp_test_mans_free,
	 .tests = {pack_and_spread, ring_rule, filters_and_reasons, gang_all_or_nothing, gang_fit_and_commit_accessors, bare_placement,
		   homogeneous, slices, numa, explain, network, property, cli, cli_validated, cli_batch_keeps_index, product_walk_kept,
		   console_keeps_index,
		   cli_batch_sees_new_evidence,
		   closest_devices, mig_mix, topology_keeps_replicas_close, review_regressions,
		   gc_many_classes, busy_classes_not_judged, gang_min, relaxation, commit_release, stream_property,
		   many_replicas_property}},
	{"update", .timeout_s = 120, .setup = setup, .teardown = xp_test_mans_free,
	 .tests = {index_update_matches_rebuild, console_index_follows_refresh}})
