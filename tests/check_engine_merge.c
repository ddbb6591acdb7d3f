/* check_engine_merge.c: an engine (Slurm's recorded `scontrol -d show node -o`, Kubernetes'
 * recorded Node and Pod lists) and a hardware source on the same nodes (a real `xpool agent`
 * over loopback replaying a DGX's recorded nvidia-smi, or the replay itself): the hardware from
 * the agent, the state, labels and allocations from the engine, disagreements as warnings. */
#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_client.h"
#include "engine_merge.h"
#include "fakehost.h"
#include "istr.h"
#include "k8s_nodes.h"
#include "model.h"
#include "slurm.h"
#include "source.h"
#include "suitelib.h"
#include "testlib.h"
#include "xp.h"

#define NODES "slurm/scontrol-show-node-d.txt"

static char dir[128];
static pid_t agent_pid;

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/xpool-emerge-%d", (int)getpid());
	mkdir(dir, 0755);
	unsetenv("XPOOL_ADAPTER_PATH");
	unsetenv("XPOOL_ADAPTER_PATH_ONLY");
	unsetenv("XPOOL_ADAPTERS");
	agent_pid = 0;
}

static void teardown(void)
{
	if (agent_pid > 0) {
		kill(agent_pid, SIGKILL);
		waitpid(agent_pid, NULL, 0);
	}
	xp_rm_rf(dir);
}

/* t with every from replaced by to (caller frees). */
static char *replace(const char *t, const char *from, const char *to)
{
	char *r = xp_strdup("");
	const char *at;
	ck_assert_msg(strstr(t, from) != NULL, "%s not in the text", from);
	while ((at = strstr(t, from))) {
		char *x = xp_asprintf("%s%.*s%s", r, (int)(at - t), t, to);
		free(r);
		r = x;
		t = at + strlen(from);
	}
	char *x = xp_asprintf("%s%s", r, t);
	free(r);
	return x;
}

/* The recorded Slurm cluster with node gpu01 renamed dgx-a100-07 (the DGX replay's host) and
 * its GRES line set to gres / gres_used (free it). */
static struct xp_cluster *slurm_with(const char *gres)
{
	char *t = xp_fixture_text(NODES, NULL);
	char *a = replace(t, "NodeName=gpu01 ", "NodeName=dgx-a100-07 ");
	char *b = replace(a, "Gres=gpu:h100:8 GresDrain=N/A GresUsed=gpu:h100:4,", gres);
	free(t);
	free(a);
	struct xp_cluster *c = xp_cluster_new();
	struct xp_err err = {{0}};
	ck_assert_msg(xp_slurm_parse_nodes(b, strlen(b), "scontrol", c, &err) == 0, "%s", err.msg);
	free(b);
	return c;
}

static bool has_warning(const struct xp_node *n, const char *part)
{
	for (size_t i = 0; i < n->n_warnings; i++)
		if (strstr(n->warnings[i], part))
			return true;
	return false;
}

static void dump_warnings(const struct xp_node *n)
{
	for (size_t i = 0; i < n->n_warnings; i++)
		fprintf(stderr, "  warning: %s\n", n->warnings[i]);
}

/* Devices a job holds whole (the DGX's A100 has MIG instances: slices, no holder). */
static size_t held(const struct xp_node *n)
{
	size_t k = 0;
	for (size_t i = 0; i < n->n_devices; i++) {
		bool whole = false;
		for (size_t a = 0; a < n->devices[i].n_allocs; a++)
			whole |= n->devices[i].allocs[a].slice == NULL;
		k += whole;
	}
	return k;
}

/* A pool of one real agent replaying the DGX (dgx-a100-07: the recorded nvidia-smi lists one A100,
 * in MIG mode), polled once. */
static struct xp_agent_pool *dgx_agent(char *url, size_t len)
{
	char *rep = xp_replay_dgx(dir);
	agent_pid = xp_agent_start(url, len, "--replay", rep, "--interval", "0.5", NULL);
	free(rep);
	ck_assert_msg(agent_pid > 0, "agent did not start: %s", url);
	struct xp_agent_pool *pool = xp_agent_pool_new(NULL);
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_agent_pool_add(pool, url, NULL, &err), 0);
	ck_assert_uint_eq(xp_agent_pool_poll(pool, true), 0);
	return pool;
}

/* Slurm says the node has gpu:a100:1 in use; the agent serving the node finds its A100: one node,
 * the agent's device (uuid, bus id, MIG instances) with Slurm's allocation on it, Slurm's state,
 * partitions and features; no count warning. Slurm's other nodes stay Slurm's. */
START_TEST(slurm_and_agent_one_node)
{
	struct xp_cluster *c = slurm_with("Gres=gpu:a100:1 GresDrain=N/A GresUsed=gpu:a100:1,");
	size_t before = c->n_nodes;
	char url[256];
	struct xp_agent_pool *pool = dgx_agent(url, sizeof url);
	xp_source_merge_agents(c, pool, time(NULL), 0);
	ck_assert_uint_eq(c->n_nodes, before);
	const struct xp_node *n = xp_cluster_node(c, "dgx-a100-07");
	ck_assert_ptr_nonnull(n);
	dump_warnings(n);
	/* The hardware is the agent's. */
	ck_assert_str_eq(n->source, url);
	ck_assert_uint_eq(n->n_devices, 1);
	ck_assert_uint_gt(n->devices[0].n_allocs, 1); /* its MIG instances and Slurm's job */
	for (size_t i = 0; i < 1; i++) {
		ck_assert_ptr_nonnull(n->devices[i].uuid);
		ck_assert_ptr_nonnull(n->devices[i].pci_bus_id);
		ck_assert_msg(strstr(n->devices[i].model, "A100"), "%s", n->devices[i].model);
	}
	/* The allocations and labels are Slurm's. */
	ck_assert_uint_eq(held(n), 1);
	ck_assert_str_eq(xp_labels_get(&n->governance, "slurm.partitions"), "train,debug");
	ck_assert_str_eq(xp_labels_get(&n->governance, "feature.nvlink"), "true");
	ck_assert_str_eq(xp_labels_get(&n->facts, "engine"), "slurm");
	ck_assert_str_eq(xp_labels_get(&n->facts, "slurm.state"), "MIXED+CLOUD+POWERED_DOWN");
	ck_assert(!has_warning(n, "left out"));
	ck_assert(!has_warning(n, "but the agent"));
	/* The drained node no agent serves is Slurm's, still draining, with no warning added. */
	const struct xp_node *g2 = xp_cluster_node(c, "gpu02");
	ck_assert_str_eq(g2->source, "slurm");
	ck_assert_int_eq(g2->state, XP_NODE_DRAINING);
	ck_assert(!has_warning(g2, "agent"));
	xp_cluster_free(c);
	xp_agent_pool_free(pool);
}
END_TEST

/* Slurm's GRES says 4 A100 (2 in use) where the agent finds 1: warnings name both counts, and
 * the allocation that found no free device; the one device is held. */
START_TEST(slurm_count_disagrees)
{
	struct xp_cluster *c = slurm_with("Gres=gpu:a100:4 GresDrain=N/A GresUsed=gpu:a100:2,");
	char url[256];
	struct xp_agent_pool *pool = dgx_agent(url, sizeof url);
	xp_source_merge_agents(c, pool, time(NULL), 0);
	const struct xp_node *n = xp_cluster_node(c, "dgx-a100-07");
	dump_warnings(n);
	ck_assert_uint_eq(n->n_devices, 1);
	ck_assert_uint_eq(held(n), 1);
	char *w = xp_asprintf("slurm: Gres gpu:a100:4 but the agent %s found 1 (A100 80GB)", url);
	ck_assert_msg(has_warning(n, w), "no warning %s", w);
	free(w);
	ck_assert(has_warning(n, "slurm: 1 a100 in use beyond what the agent"));
	xp_cluster_free(c);
	xp_agent_pool_free(pool);
}
END_TEST

/* Slurm names a kind the agent's node does not have (gpu:h100), and the agent's A100s are in no
 * GRES: both are said. */
START_TEST(slurm_kind_missing)
{
	struct xp_cluster *c = slurm_with("Gres=gpu:h100:8 GresDrain=N/A GresUsed=gpu:h100:4,");
	char url[256];
	struct xp_agent_pool *pool = dgx_agent(url, sizeof url);
	xp_source_merge_agents(c, pool, time(NULL), 0);
	const struct xp_node *n = xp_cluster_node(c, "dgx-a100-07");
	dump_warnings(n);
	ck_assert_uint_eq(held(n), 0);
	ck_assert(has_warning(n, "slurm: Gres gpu:h100:8 but the agent"));
	ck_assert(has_warning(n, "found none of them"));
	ck_assert(has_warning(n, "found 1 A100 80GB that no Gres names"));
	ck_assert(has_warning(n, "slurm: 4 h100 in use beyond what the agent"));
	xp_cluster_free(c);
	xp_agent_pool_free(pool);
}
END_TEST

/* An agent that answered once and is down now: Slurm's node stays (its own GRES devices), with a
 * warning; an agent whose node Slurm lacks is kept, warned about. */
START_TEST(agent_down_engine_stays)
{
	struct xp_cluster *c = slurm_with("Gres=gpu:a100:4 GresDrain=N/A GresUsed=gpu:a100:2,");
	char url[256];
	struct xp_agent_pool *pool = dgx_agent(url, sizeof url);
	xp_agent_stop(agent_pid);
	agent_pid = 0;
	ck_assert_uint_eq(xp_agent_pool_poll(pool, true), 1);
	xp_source_merge_agents(c, pool, time(NULL), 0);
	const struct xp_node *n = xp_cluster_node(c, "dgx-a100-07");
	dump_warnings(n);
	ck_assert_str_eq(n->source, "slurm");
	ck_assert_uint_eq(n->n_devices, 4);
	ck_assert_ptr_null(n->devices[0].uuid);
	ck_assert_uint_eq(held(n), 2);
	ck_assert(has_warning(n, "did not answer: the devices shown are slurm's"));
	ck_assert_uint_eq(c->sources_down, 1);
	xp_cluster_free(c);

	/* Slurm without that node: the agent's node (from its last answer) is not merged anywhere. */
	struct xp_cluster *c2 = xp_cluster_new();
	struct xp_err err = {{0}};
	char *t = xp_fixture_text(NODES, NULL);
	ck_assert_int_eq(xp_slurm_parse_nodes(t, strlen(t), "scontrol", c2, &err), 0);
	free(t);
	char *rep = xp_replay_dgx(dir);
	agent_pid = xp_agent_start(url, sizeof url, "--replay", rep, "--interval", "0.5", NULL);
	free(rep);
	ck_assert_int_gt(agent_pid, 0);
	struct xp_agent_pool *p2 = xp_agent_pool_new(NULL);
	ck_assert_int_eq(xp_agent_pool_add(p2, url, NULL, &err), 0);
	ck_assert_uint_eq(xp_agent_pool_poll(p2, true), 0);
	xp_source_merge_agents(c2, p2, time(NULL), 0);
	const struct xp_node *a = xp_cluster_node(c2, "dgx-a100-07");
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(a->source, url);
	ck_assert(has_warning(a, "not a node of slurm: what is in use on it is not known"));
	xp_cluster_free(c2);
	xp_agent_pool_free(p2);
	xp_agent_pool_free(pool);
}
END_TEST

/* Two hardware sources on one name, no engine: the base's node stays and the agent's is left out,
 * as before engines joined. */
START_TEST(no_engine_keeps_left_out)
{
	char *rep = xp_replay_dgx(dir);
	struct xp_source_opts so = {.replay = rep};
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_source_load(&so, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	free(rep);
	char url[256];
	struct xp_agent_pool *pool = dgx_agent(url, sizeof url);
	xp_source_merge_agents(c, pool, time(NULL), 0);
	ck_assert_uint_eq(c->n_nodes, 1);
	ck_assert(strncmp(c->nodes[0]->source, "replay:", 7) == 0);
	ck_assert(has_warning(c->nodes[0], "also serves a node named dgx-a100-07; left out"));
	ck_assert_ptr_null(xp_labels_get(&c->nodes[0]->facts, "engine"));
	xp_cluster_free(c);
	xp_agent_pool_free(pool);
}
END_TEST

/* The recorded Slurm nodes with the drained gpu02 named slurm_name and holding one A100, joined
 * with the DGX replay whose hostname file says host; *before gets the count of Slurm's nodes. */
static struct xp_cluster *slurm_dgx_join(const char *slurm_name, const char *host, size_t *before)
{
	char *t = xp_fixture_text(NODES, NULL);
	char *from = xp_asprintf("NodeName=%s ", slurm_name);
	char *a = replace(t, "NodeName=gpu02 ", from);
	char *b = replace(a, "Gres=gpu:h100:8 GresDrain=N/A GresUsed=gpu:h100:0,", "Gres=gpu:a100:1 GresDrain=N/A GresUsed=gpu:a100:0,");
	free(t);
	free(a);
	free(from);
	struct xp_cluster *c = xp_cluster_new();
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_slurm_parse_nodes(b, strlen(b), "scontrol", c, &err), 0);
	free(b);
	*before = c->n_nodes;
	char *rep = xp_replay_dgx(dir);
	char *line = xp_asprintf("%s\n", host);
	free(xp_write_file(rep, "hostname", line, 0644));
	free(line);
	struct xp_source_opts so = {.replay = rep};
	struct xp_cluster *hw = xp_source_load(&so, &err);
	ck_assert_msg(hw != NULL, "%s", err.msg);
	xp_engine_join(c, hw, false);
	xp_cluster_free(hw);
	free(rep);
	return c;
}

/* A replay whose host calls itself by its full name joins Slurm's short one, named as Slurm names
 * it; a drained node keeps Slurm's state over the replay's; the fact "engine" says where the
 * allocations came from. */
START_TEST(replay_full_name_and_drain)
{
	size_t before;
	struct xp_cluster *c = slurm_dgx_join("dgx-a100-07", "dgx-a100-07.example.org", &before);
	/* One node, under Slurm's name: its jobs and requests name that one. */
	ck_assert_uint_eq(c->n_nodes, before);
	ck_assert_ptr_null(xp_cluster_node(c, "dgx-a100-07.example.org"));
	const struct xp_node *n = xp_cluster_node(c, "dgx-a100-07");
	ck_assert_ptr_nonnull(n);
	dump_warnings(n);
	ck_assert(strncmp(n->source, "replay:", 7) == 0);
	ck_assert_int_eq(n->state, XP_NODE_DRAINING);
	ck_assert_uint_eq(n->n_devices, 1);
	ck_assert(!has_warning(n, "but the replay"));
	ck_assert_uint_eq(held(n), 0);
	ck_assert(has_warning(n, "slurm: IDLE+CLOUD+DRAIN+POWERED_DOWN: maintenance"));
	ck_assert_str_eq(xp_labels_get(&n->facts, "engine"), "slurm");
	xp_cluster_free(c);
}
END_TEST

/* The other way round: the engine names the node by its full name, the machine calls itself
 * by its short one; still one node (review: two, the devices counted twice). */
START_TEST(engine_full_name_replay_short)
{
	size_t before;
	struct xp_cluster *c = slurm_dgx_join("dgx-a100-07.example.org", "dgx-a100-07", &before);
	ck_assert_uint_eq(c->n_nodes, before);
	ck_assert_ptr_null(xp_cluster_node(c, "dgx-a100-07"));
	const struct xp_node *n = xp_cluster_node(c, "dgx-a100-07.example.org");
	ck_assert_ptr_nonnull(n);
	ck_assert(strncmp(n->source, "replay:", 7) == 0);
	ck_assert_uint_eq(n->n_devices, 1);
	xp_cluster_free(c);
}
END_TEST

/* Kubernetes' node gpu-node-1 (capacity 8 nvidia.com/gpu, GPU feature discovery's product, pods
 * holding some) and the DGX replay named gpu-node-1: the replay's A100, held by a pod, the count
 * warning naming the capacity, the source URL kept as the fact "engine". */
START_TEST(k8s_and_replay)
{
	json_error_t je;
	json_t *nodes = json_load_file(xp_fixture("k8s/nodes.json"), 0, &je);
	json_t *pods = json_load_file(xp_fixture("k8s/pods.json"), 0, &je);
	ck_assert_ptr_nonnull(nodes);
	ck_assert_ptr_nonnull(pods);
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_k8s_build(json_object_get(nodes, "items"), json_object_get(pods, "items"),
					    "k8s:https://127.0.0.1:6443", &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	json_decref(nodes);
	json_decref(pods);
	const struct xp_node *k = xp_cluster_node(c, "gpu-node-1");
	ck_assert_ptr_nonnull(k);
	size_t k8s_held = held(k);
	ck_assert_uint_ge(k8s_held, 1);
	char *rep = xp_replay_dgx(dir);
	char *host = xp_write_file(rep, "hostname", "gpu-node-1\n", 0644);
	free(host);
	struct xp_source_opts so = {.replay = rep};
	struct xp_cluster *hw = xp_source_load(&so, &err);
	ck_assert_msg(hw != NULL, "%s", err.msg);
	xp_engine_join(c, hw, false);
	xp_cluster_free(hw);
	const struct xp_node *n = xp_cluster_node(c, "gpu-node-1");
	dump_warnings(n);
	ck_assert(strncmp(n->source, "replay:", 7) == 0);
	ck_assert_uint_eq(n->n_devices, 1);
	ck_assert_ptr_nonnull(n->devices[0].uuid);
	ck_assert_uint_eq(held(n), 1);
	ck_assert(has_warning(n, "k8s: capacity 8 NVIDIA-A100-SXM4-80GB but the replay"));
	ck_assert(has_warning(n, "found 1 (A100 80GB)"));
	if (k8s_held > 1)
		ck_assert(has_warning(n, "NVIDIA-A100-SXM4-80GB in use beyond what the replay"));
	ck_assert_str_eq(xp_labels_get(&n->facts, "engine"), "k8s:https://127.0.0.1:6443");
	/* The node's own labels stay facts the hardware did not set. */
	ck_assert_str_eq(xp_labels_get(&n->facts, "nvidia.com/gpu.product"), "NVIDIA-A100-SXM4-80GB");
	xp_cluster_free(c);
	free(rep);
}
END_TEST

/* An inventory snapshot of agents' nodes (what `xpool --agent URL --json inventory` saves, here
 * the DGX replay's) gives the hardware as an agent would, the warnings naming the file. */
START_TEST(slurm_and_inventory)
{
	char *rep = xp_replay_dgx(dir);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", rep, "--json", "inventory", NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	char *inv = xp_write_file(dir, "inv.json", r.out, 0644);
	xp_run_free(&r);
	free(rep);
	struct xp_cluster *c = slurm_with("Gres=gpu:a100:2 GresDrain=N/A GresUsed=gpu:a100:1,");
	struct xp_source_opts so = {.inventory = inv};
	struct xp_err err = {{0}};
	struct xp_cluster *hw = xp_source_load(&so, &err);
	ck_assert_msg(hw != NULL, "%s", err.msg);
	xp_engine_join(c, hw, false);
	xp_cluster_free(hw);
	const struct xp_node *n = xp_cluster_node(c, "dgx-a100-07");
	dump_warnings(n);
	ck_assert_uint_eq(n->n_devices, 1);
	ck_assert_ptr_nonnull(n->devices[0].uuid);
	ck_assert_uint_eq(held(n), 1);
	char *w = xp_asprintf("slurm: Gres gpu:a100:2 but the inventory %s found 1 (A100 80GB)", inv);
	ck_assert_msg(has_warning(n, w), "no warning %s", w);
	free(w);
	free(inv);
	xp_cluster_free(c);
}
END_TEST

/* 10,000 engine nodes and 10,000 hardware nodes of the same names join in one pass (a hash by
 * name): each ends merged, none left out, in the engine's order. Not timed: a quadratic join
 * would take minutes here and time out the case. */
START_TEST(ten_thousand_nodes)
{
	struct xp_cluster *c = xp_cluster_new(), *hw = xp_cluster_new();
	for (int i = 0; i < 10000; i++) {
		char name[32];
		snprintf(name, sizeof name, "n%05d", i);
		struct xp_node *e = xp_node_new(name);
		free(e->source);
		e->source = xp_strdup("slurm");
		struct xp_device *d = xp_node_add_device(e);
		xp_istr_set(&d->vendor, "NVIDIA");
		xp_istr_set(&d->model, "h100");
		d->vendor_index = 0;
		xp_cluster_add(c, e);
		struct xp_node *h = xp_node_new(name);
		free(h->source);
		h->source = xp_strdup("replay:x");
		struct xp_device *g = xp_node_add_device(h);
		xp_istr_set(&g->vendor, "NVIDIA");
		xp_istr_set(&g->model, "NVIDIA H100 80GB HBM3");
		xp_cluster_add(hw, h);
	}
	xp_engine_join(c, hw, false);
	xp_cluster_free(hw);
	ck_assert_uint_eq(c->n_nodes, 10000);
	for (int i = 0; i < 10000; i += 997) {
		ck_assert_str_eq(c->nodes[i]->source, "replay:x");
		ck_assert_uint_eq(c->nodes[i]->n_warnings, 0);
	}
	xp_cluster_free(c);
}
END_TEST

XP_DEFINE_SUITE(engine_merge,
		{"agents", .timeout_s = 120, .setup = setup, .teardown = teardown,
		 .tests = {slurm_and_agent_one_node, slurm_count_disagrees, slurm_kind_missing, agent_down_engine_stays,
			   no_engine_keeps_left_out}},
		{"replays", .setup = setup, .teardown = teardown,
		 .tests = {replay_full_name_and_drain, engine_full_name_replay_short, k8s_and_replay, slurm_and_inventory, ten_thousand_nodes}})
