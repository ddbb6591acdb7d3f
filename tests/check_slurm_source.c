/* check_slurm_source.c: the Slurm source's node reader (backends/slurm.c) on the real
 * `scontrol -d show node -o` output recorded from slurm-wlm 22.05.8 by
 * tests/slurm_source_check.sh (tests/fixtures/slurm/), and on variants of it cut, grown and
 * spoiled: each must be an error naming the command, the line and the field, never a crash. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakehost.h"
#include "istr.h"
#include "model.h"
#include "place.h"
#include "qjob.h"
#include "qmodel.h"
#include "slurm.h"
#include "suitelib.h"
#include "testlib.h"
#include "xp.h"

#define NODES "slurm/scontrol-show-node-d.txt"
#define WHAT "scontrol -d show node -o"

static size_t in_use(const struct xp_node *n)
{
	size_t k = 0;
	for (size_t i = 0; i < n->n_devices; i++)
		k += n->devices[i].n_allocs > 0;
	return k;
}

/* Parses text that must parse; returns the cluster (free it). */
static struct xp_cluster *parse_ok(const char *text, size_t len)
{
	struct xp_cluster *c = xp_cluster_new();
	struct xp_err err = {{0}};
	ck_assert_msg(xp_slurm_parse_nodes(text, len, WHAT, c, &err) == 0, "%s", err.msg);
	return c;
}

/* Parses text that must fail; returns the message (static). */
static const char *parse_bad(const char *text, size_t len)
{
	static struct xp_err err;
	memset(&err, 0, sizeof err);
	struct xp_cluster *c = xp_cluster_new();
	ck_assert_int_eq(xp_slurm_parse_nodes(text, len, WHAT, c, &err), -1);
	xp_cluster_free(c);
	ck_assert_msg(strncmp(err.msg, WHAT ": line ", strlen(WHAT ": line ")) == 0, "no command and line: %s", err.msg);
	return err.msg;
}

/* The recorded text with the first from replaced by to (caller frees). */
static char *edited(const char *from, const char *to)
{
	char *t = xp_fixture_text(NODES, NULL);
	char *at = strstr(t, from);
	ck_assert_msg(at != NULL, "%s not in the fixture", from);
	char *r = xp_asprintf("%.*s%s%s", (int)(at - t), t, to, at + strlen(from));
	free(t);
	return r;
}

START_TEST(recorded_nodes)
{
	size_t len;
	char *t = xp_fixture_text(NODES, &len);
	struct xp_cluster *c = parse_ok(t, len);
	free(t);
	ck_assert_int_eq(c->n_nodes, 4);
	struct xp_node *g1 = xp_cluster_node(c, "gpu01"), *g2 = xp_cluster_node(c, "gpu02");
	struct xp_node *npu = xp_cluster_node(c, "npu01"), *mlu = xp_cluster_node(c, "mlu01");
	ck_assert(g1 && g2 && npu && mlu);
	ck_assert_int_eq(g1->pus, 64);
	ck_assert_int_eq(npu->pus, 192);
	ck_assert_int_eq(g1->memory_mib, 512000);
	ck_assert_str_eq(g1->source, "slurm");
	ck_assert_int_eq(g1->n_devices, 8);
	for (size_t i = 0; i < g1->n_devices; i++) {
		ck_assert_str_eq(g1->devices[i].vendor, "NVIDIA");
		ck_assert_str_eq(g1->devices[i].model, "h100");
		ck_assert_int_eq(g1->devices[i].vendor_index, (int)i);
	}
	/* GresUsed=gpu:h100:4: four of eight in use, the rest free for placement. */
	ck_assert_int_eq(in_use(g1), 4);
	ck_assert_int_eq(g1->state, XP_NODE_UP);
	ck_assert_str_eq(xp_labels_get(&g1->facts, "slurm.state"), "MIXED+CLOUD+POWERED_DOWN");
	ck_assert_str_eq(xp_labels_get(&g1->governance, "feature.h100"), "true");
	ck_assert_str_eq(xp_labels_get(&g1->governance, "feature.nvlink"), "true");
	ck_assert_str_eq(xp_labels_get(&g1->governance, "slurm.partitions"), "train,debug");
	/* Drained with a reason: draining, and the reason said in Slurm's words. */
	ck_assert_int_eq(g2->state, XP_NODE_DRAINING);
	ck_assert_int_eq(in_use(g2), 0);
	ck_assert_int_eq(g2->n_warnings, 1);
	ck_assert_msg(strstr(g2->warnings[0], "maintenance") != NULL, "%s", g2->warnings[0]);
	ck_assert_int_eq(npu->n_devices, 8);
	ck_assert_str_eq(npu->devices[0].vendor, "Huawei");
	ck_assert_str_eq(npu->devices[0].model, "910b");
	ck_assert_int_eq(in_use(npu), 8);
	ck_assert_int_eq(mlu->n_devices, 4);
	ck_assert_str_eq(mlu->devices[3].vendor, "Cambricon");
	ck_assert_int_eq(in_use(mlu), 2);
	ck_assert_ptr_null(xp_labels_get(&mlu->governance, "feature.(null)"));
	xp_cluster_free(c);
}
END_TEST

START_TEST(states_mapped)
{
	static const struct {
		const char *slurm;
		int xp;
	} m[] = {
		{"IDLE", XP_NODE_UP},
		{"MIXED", XP_NODE_UP},
		{"ALLOCATED", XP_NODE_UP},
		{"MIXED+CLOUD+POWERED_DOWN", XP_NODE_UP},
		{"IDLE+CLOUD+POWERING_UP", XP_NODE_UP},
		{"IDLE+COMPLETING", XP_NODE_UP},
		{"IDLE+DRAIN", XP_NODE_DRAINING},
		{"MIXED+DRAIN", XP_NODE_DRAINING},
		{"IDLE+CLOUD+DRAIN+POWERED_DOWN", XP_NODE_DRAINING},
		{"IDLE+REBOOT_REQUESTED", XP_NODE_DRAINING},
		{"DOWN", XP_NODE_DOWN},
		{"DOWN+DRAIN", XP_NODE_DOWN},
		{"IDLE*", XP_NODE_DOWN},
		{"MIXED+NOT_RESPONDING", XP_NODE_DOWN},
		/* A CLOUD node booting for its job, not yet registered (recorded from this Slurm). */
		{"MIXED+CLOUD+NOT_RESPONDING+POWERING_UP", XP_NODE_UP},
		{"IDLE+CLOUD+NOT_RESPONDING+POWERED_DOWN", XP_NODE_UP},
		{"DOWN+CLOUD+POWERED_DOWN", XP_NODE_DOWN},
		{"FUTURE", XP_NODE_DOWN},
		{"UNKNOWN", XP_NODE_UNREACHABLE},
		{"", XP_NODE_UNREACHABLE},
	};
	for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
		ck_assert_msg(xp_slurm_node_state(m[i].slurm) == m[i].xp, "%s: %s, not %s", m[i].slurm,
			      xp_node_state_name(xp_slurm_node_state(m[i].slurm)), xp_node_state_name(m[i].xp));
}
END_TEST

START_TEST(vendors_from_gres)
{
	ck_assert_str_eq(xp_slurm_gres_vendor("gpu", "h100"), "NVIDIA");
	ck_assert_str_eq(xp_slurm_gres_vendor("gpu", "A100_80GB"), "NVIDIA");
	ck_assert_str_eq(xp_slurm_gres_vendor("gpu", "1g.10gb"), "NVIDIA");
	ck_assert_str_eq(xp_slurm_gres_vendor("gpu", "mi250x"), "AMD");
	ck_assert_str_eq(xp_slurm_gres_vendor("npu", NULL), "Huawei");
	ck_assert_str_eq(xp_slurm_gres_vendor("mlu", "mlu370"), "Cambricon");
	ck_assert_str_eq(xp_slurm_gres_vendor("dcu", "k100"), "Hygon");
	ck_assert_ptr_null(xp_slurm_gres_vendor("gpu", NULL));
	ck_assert_ptr_null(xp_slurm_gres_vendor("gpu", "site_special"));
	ck_assert_ptr_null(xp_slurm_gres_vendor("shard", "h100"));
	ck_assert(!xp_slurm_gres_is_device("mps"));
}
END_TEST

/* Slurm's documented forms this loopback Slurm (no slurmd) cannot print: several types on one
 * node with sockets, and GresUsed naming the indices in use (IDX), a list with a comma inside
 * the parentheses. */
START_TEST(typed_gres_with_indices)
{
	char *t = edited("Gres=gpu:h100:8 ", "Gres=gpu:a100:2(S:0),gpu:h100:4(S:1),shard:h100:16(S:1),bandwidth:lustre:4G ");
	char *u = xp_asprintf("%s", t);
	free(t);
	t = u;
	char *at = strstr(t, "GresUsed=gpu:h100:4,npu:0,mlu:0");
	ck_assert(at);
	u = xp_asprintf("%.*sGresUsed=gpu:a100:1(IDX:1),gpu:h100:3(IDX:2,4-5),shard:0,npu:0,mlu:0%s", (int)(at - t), t,
			at + strlen("GresUsed=gpu:h100:4,npu:0,mlu:0"));
	free(t);
	struct xp_cluster *c = parse_ok(u, strlen(u));
	free(u);
	struct xp_node *n = xp_cluster_node(c, "gpu01");
	ck_assert_int_eq(n->n_devices, 6);
	ck_assert_str_eq(n->devices[0].model, "a100");
	ck_assert_str_eq(n->devices[5].model, "h100");
	/* IDX counts the node's gpus across types: 1 is the second a100, 2 and 4-5 are h100s. */
	int used[6] = {0, 1, 1, 0, 1, 1};
	for (int i = 0; i < 6; i++)
		ck_assert_msg((n->devices[i].n_allocs > 0) == used[i], "device %d", i);
	ck_assert_int_eq(n->n_warnings, 0);
	xp_cluster_free(c);
}
END_TEST

START_TEST(free_text_cannot_add_fields)
{
	/* Reason is free text an operator typed: a "Gres=" inside it does not replace the node's. */
	char *t = edited("Reason=maintenance", "Reason=Gres=gpu:h100:999 GresUsed=gpu:h100:8 x");
	struct xp_cluster *c = parse_ok(t, strlen(t));
	free(t);
	struct xp_node *n = xp_cluster_node(c, "gpu02");
	ck_assert_int_eq(n->n_devices, 8);
	ck_assert_int_eq(in_use(n), 0);
	xp_cluster_free(c);
}
END_TEST

START_TEST(malformed_records)
{
	size_t len;
	char *t = xp_fixture_text(NODES, &len);
	/* Truncated: the last record cut in the middle, and cut before its newline. */
	const char *m = parse_bad(t, len / 2);
	ck_assert_msg(strstr(m, "truncated") != NULL, "%s", m);
	m = parse_bad(t, len - 1);
	ck_assert_msg(strstr(m, "line 4: truncated") != NULL, "%s", m);
	free(t);
	struct {
		const char *from, *to, *want;
	} v[] = {
		{"Gres=gpu:h100:8 ", "Gres=gpu:h100:x ", "field Gres"},
		{"Gres=gpu:h100:8 ", "Gres=gpu:h100:99999999 ", "field Gres"},
		{"Gres=gpu:h100:8 ", "Gres=gpu:h100:800 ", "(within the limit)"},
		{"Gres=gpu:h100:8 ", "Gres=gpu:h100:8(S:0 ", "field Gres"},
		{"Gres=gpu:h100:8 ", "Gres=gpu:h100:8) ", "field Gres"},
		{"Gres=gpu:h100:8 ", "Gres=:h100:8 ", "field Gres"},
		{"Gres=gpu:h100:8 ", "Gres=gpu,,npu ", "field Gres"},
		{"GresUsed=gpu:h100:4,", "GresUsed=gpu:h100:4(IDX:0-x),", "field GresUsed"},
		{"GresUsed=gpu:h100:4,", "GresUsed=gpu:h100:4(IDX:3-1),", "field GresUsed"},
		{"GresUsed=gpu:h100:4,", "GresUsed=gpu:h100:4(IDX:0-99999999),", "field GresUsed"},
		{"CPUTot=64", "CPUTot=-64", "field CPUTot"},
		{"RealMemory=512000", "RealMemory=5e9", "field RealMemory"},
		{"NodeName=gpu02", "NodeName=gpu01", "listed twice"},
		{"NodeName=gpu02", "Nodename=gpu02", "not a NodeName= record"},
		{"NodeName=gpu02", "NodeName= CPUs=1", "no NodeName"},
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		char *e = edited(v[i].from, v[i].to);
		struct xp_cluster *c = xp_cluster_new();
		struct xp_err err = {{0}};
		int rc = xp_slurm_parse_nodes(e, strlen(e), WHAT, c, &err);
		xp_cluster_free(c);
		free(e);
		if (strcmp(v[i].to, "Gres=gpu:h100:800 ") == 0) {
			/* 800 devices on one node is within the limit: it parses. */
			ck_assert_msg(rc == 0, "%s", err.msg);
			continue;
		}
		ck_assert_msg(rc == -1, "%s was read", v[i].to);
		ck_assert_msg(strstr(err.msg, WHAT ": line ") && strstr(err.msg, v[i].want), "%s: %s", v[i].to, err.msg);
	}
}
END_TEST

START_TEST(hostile_input)
{
	/* A line over the limit, a NUL byte, binary noise, thousands of fields, and a GRES list
	 * that asks for more devices than a node may hold: errors, not crashes or huge nodes. */
	size_t big = XP_SLURM_MAX_LINE + 10;
	char *huge = xp_malloc(big + 2);
	memcpy(huge, "NodeName=x Reason=", 18);
	memset(huge + 18, 'a', big - 18);
	huge[big] = '\n';
	huge[big + 1] = '\0';
	const char *m = parse_bad(huge, big + 1);
	ck_assert_msg(strstr(m, "longer than") != NULL, "%s", m);
	free(huge);

	const char nul[] = "NodeName=a CPUTot=1\0 Gres=gpu:8\n";
	m = parse_bad(nul, sizeof nul - 1);
	ck_assert_msg(strstr(m, "NUL") != NULL, "%s", m);

	const char noise[] = "\x01\xff\xfe=\x80\n";
	parse_bad(noise, sizeof noise - 1);

	char *many = xp_strdup("NodeName=a");
	for (int i = 0; i < 600; i++) {
		char *n = xp_asprintf("%s F%d=1", many, i);
		free(many);
		many = n;
	}
	char *line = xp_asprintf("%s\n", many);
	free(many);
	m = parse_bad(line, strlen(line));
	ck_assert_msg(strstr(m, "more than") != NULL, "%s", m);
	free(line);

	const char *lots = "NodeName=a Gres=gpu:a:1000,gpu:b:1000\n";
	m = parse_bad(lots, strlen(lots));
	ck_assert_msg(strstr(m, "field Gres") && strstr(m, "more than 1024 devices"), "%s", m);

	/* Control bytes in a name or a feature reach no terminal: the node is cleaned. */
	const char *ctl = "NodeName=a\x1b[2J AvailableFeatures=x\x07y Gres=gpu:h100:1\n";
	struct xp_cluster *c = parse_ok(ctl, strlen(ctl));
	ck_assert_ptr_null(strchr(c->nodes[0]->name, 0x1b));
	xp_cluster_free(c);

	/* scontrol's answer when it shows no node, and an empty output: no nodes, no error. */
	c = parse_ok("No nodes in the system\n", 23);
	ck_assert_int_eq(c->n_nodes, 0);
	xp_cluster_free(c);
	c = parse_ok("", 0);
	ck_assert_int_eq(c->n_nodes, 0);
	xp_cluster_free(c);
}
END_TEST

#define PARTS "slurm/scontrol-show-partition.txt"
#define PWHAT "scontrol show partition -o"

/* The recorded partitions with the first from replaced by to, parsed: rc, and err's text. */
static int parts_edited(const char *from, const char *to, struct xp_qset *set, struct xp_err *err)
{
	char *t = xp_fixture_text(PARTS, NULL);
	char *at = strstr(t, from);
	ck_assert_msg(at != NULL, "%s not in the fixture", from);
	char *e = xp_asprintf("%.*s%s%s", (int)(at - t), t, to, at + strlen(from));
	free(t);
	int rc = xp_slurm_parse_partitions(e, strlen(e), PWHAT, set, err);
	free(e);
	return rc;
}

START_TEST(recorded_partitions)
{
	size_t len;
	char *t = xp_fixture_text(PARTS, &len);
	struct xp_qset set = {0};
	struct xp_err err = {{0}};
	ck_assert_msg(xp_slurm_parse_partitions(t, len, PWHAT, &set, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(set.n_queues, 2);
	struct xp_queue *train = xp_qset_queue(&set, "train"), *debug = xp_qset_queue(&set, "debug");
	ck_assert(train && debug);
	ck_assert_int_eq(train->priority, 10);
	ck_assert_int_eq(debug->priority, 1);
	ck_assert_int_eq(train->state, XP_QS_OPEN);
	ck_assert_ptr_null(train->parent);
	xp_qset_clear(&set);
	/* Cut before its end: an error naming the line; the set keeps what came before. */
	ck_assert_int_eq(xp_slurm_parse_partitions(t, len - 1, PWHAT, &set, &err), -1);
	ck_assert_msg(strstr(err.msg, PWHAT ": line 2: truncated") != NULL, "%s", err.msg);
	ck_assert_int_eq(set.n_queues, 1);
	xp_qset_clear(&set);
	free(t);

	ck_assert_int_eq(parts_edited("State=UP", "State=DOWN", &set, &err), 0);
	ck_assert_int_eq(xp_qset_queue(&set, "train")->state, XP_QS_HOLD);
	xp_qset_clear(&set);
	static const struct {
		const char *from, *to, *want;
	} bad[] = {
		{"State=UP", "State=SIDEWAYS", "field State"},
		{"PriorityTier=10", "PriorityTier=ten", "field PriorityTier"},
		{"PartitionName=debug", "PartitionName=train", "listed twice"},
		{"PartitionName=debug", "PartitionName=de/bug", "PartitionName"},
		{"PartitionName=debug", "Partition=debug", "not a PartitionName= record"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(&err, 0, sizeof err);
		ck_assert_int_eq(parts_edited(bad[i].from, bad[i].to, &set, &err), -1);
		ck_assert_msg(strstr(err.msg, PWHAT ": line ") && strstr(err.msg, bad[i].want), "%s: %s", bad[i].to, err.msg);
		xp_qset_clear(&set);
	}
}
END_TEST

#define JOBS "slurm/squeue.txt"
#define JWHAT "squeue"

static void jobs_free(struct xp_qjob *j, size_t n)
{
	for (size_t i = 0; i < n; i++)
		xp_qjob_clear(&j[i]);
	free(j);
}

static struct xp_qjob *job_by_id(struct xp_qjob *j, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (j[i].id == id)
			return &j[i];
	ck_abort_msg("no job %lld", (long long)id);
	return NULL;
}

START_TEST(recorded_jobs)
{
	size_t len, n;
	char *t = xp_fixture_text(JOBS, &len);
	struct xp_qjob *j;
	struct xp_err err = {{0}};
	ck_assert_msg(xp_slurm_parse_jobs(t, len, JWHAT, &j, &n, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(n, 5);
	struct xp_qjob *four = job_by_id(j, n, 1), *pend = job_by_id(j, n, 4), *held = job_by_id(j, n, 5);
	/* CONFIGURING: the CLOUD node boots; the job holds its resources, so it runs. */
	ck_assert_int_eq(four->state, XP_JS_RUNNING);
	ck_assert_str_eq(four->queue, "train");
	ck_assert_str_eq(four->name, "four");
	ck_assert_int_eq(four->priority, INT32_MAX); /* 4294901759: priority/basic, kept at INT_MAX */
	ck_assert_int_eq(four->spec->groups[0].devices, 4);
	ck_assert_str_eq(four->spec->groups[0].model, "h100");
	ck_assert_int_eq(four->reason, XP_R_NONE);
	ck_assert_ptr_null(four->reason_text);
	/* Slurm's own: which engine, and the nodes in its words (a pending job has none yet). */
	ck_assert_str_eq(four->engine, "slurm");
	ck_assert_str_eq(four->nodes, "gpu01");
	ck_assert_ptr_null(pend->nodes);
	ck_assert_int_eq(four->start - four->submit, 3); /* submitted 07:22:31, started 07:22:34 */
	ck_assert_int_eq(pend->start, -1);
	ck_assert_int_eq(pend->submit, four->submit);
	ck_assert_int_eq(pend->state, XP_JS_PENDING);
	ck_assert_int_eq(pend->reason, XP_R_RESOURCES);
	ck_assert_str_eq(pend->reason_text, "ReqNodeNotAvail, UnavailableNodes:gpu02");
	ck_assert_int_eq(pend->spec->groups[0].replicas, 2);
	ck_assert_int_eq(pend->spec->groups[0].devices, 8);
	ck_assert_int_eq(held->state, XP_JS_HELD);
	ck_assert_int_eq(held->reason, XP_R_HELD);
	ck_assert_str_eq(held->name, "held|job");
	ck_assert_int_eq(held->est_s, 30 * 60);
	ck_assert_int_eq(held->priority, 0);
	ck_assert_int_eq(job_by_id(j, n, 3)->est_s, 3600);
	ck_assert_int_eq(job_by_id(j, n, 2)->spec->groups[0].devices, 8);
	jobs_free(j, n);

	/* Cut, spoiled: an error naming the line and the field; the jobs before it are kept. */
	ck_assert_int_eq(xp_slurm_parse_jobs(t, len - 1, JWHAT, &j, &n, &err), -1);
	ck_assert_msg(strstr(err.msg, JWHAT ": line 5: truncated") != NULL, "%s", err.msg);
	ck_assert_int_eq(n, 4);
	jobs_free(j, n);
	free(t);
	static const struct {
		const char *text, *want;
	} bad[] = {
		{"3|debug|CONFIGURING|1|1|1:00:00|gres:mlu:2|None\n", "fields"},
		/* The formats before the node list (%N) and the times (%V, %S) were read: short. */
		{"3|debug|CONFIGURING|1|1|1:00:00|gres:mlu:2|None|a\n", "fields"},
		{"3|debug|CONFIGURING|1|1|1:00:00|gres:mlu:2|None|n1|a\n", "fields"},
		{"3|debug|RUNNING|1|1|1:00:00|gres:mlu:2|None|n1|yesterday|N/A|3|(null)|(null)|root|a\n", "field 10"},
		{"3|debug|RUNNING|1|1|1:00:00|gres:mlu:2|None|n1|2026-13-02T05:43:32|N/A|3|(null)|(null)|root|a\n", "field 10"},
		{"3|debug|RUNNING|1|1|1:00:00|gres:mlu:2|None|n1|2026-12-02T05:43:32|2026-12-02T05:43:32Z|3|(null)|(null)|root|a\n", "field 11"},
		{"x|debug|CONFIGURING|1|1|1:00:00|gres:mlu:2|None||2026-12-02T05:43:32|N/A|3|(null)|(null)|root|a\n", "field 1"},
		{"3|debug|DANCING|1|1|1:00:00|gres:mlu:2|None||2026-12-02T05:43:32|N/A|3|(null)|(null)|root|a\n", "field 3"},
		{"3|debug|RUNNING|-1|1|1:00:00|gres:mlu:2|None||2026-12-02T05:43:32|N/A|3|(null)|(null)|root|a\n", "field 4"},
		{"3|debug|RUNNING|99999999999|1|1:00:00|gres:mlu:2|None||2026-12-02T05:43:32|N/A|3|(null)|(null)|root|a\n", "field 4"},
		{"3|debug|RUNNING|1|x|1:00:00|gres:mlu:2|None||2026-12-02T05:43:32|N/A|3|(null)|(null)|root|a\n", "field 5"},
		{"3|debug|RUNNING|1|1|1:00:00:00:00|gres:mlu:2|None||2026-12-02T05:43:32|N/A|3|(null)|(null)|root|a\n", "field 6"},
		{"3|debug|RUNNING|1|1|1:00:00|gres:mlu:99999|None||2026-12-02T05:43:32|N/A|3|(null)|(null)|root|a\n", "field 7"},
		{"3|debug|RUNNING|1|1|1:00:00|gres:mlu:t:x|None||2026-12-02T05:43:32|N/A|3|(null)|(null)|root|a\n", "field 7"},
		/* The format before %A, %q, %a, %u: short. */
		{"3|debug|RUNNING|1|1|1:00:00|gres:mlu:2|None|n1|2026-12-02T05:43:32|N/A|a\n", "fields"},
		{"3_1|debug|RUNNING|1|1|1:00:00|gres:mlu:2|None||2026-12-02T05:43:32|N/A|3_1|(null)|(null)|root|a\n", "field 12"},
		/* Slurm's job ids are 32-bit (uint32_t job_id): one past that is not Slurm's, and an
		 * array's task ids (id + task << 32) would overflow (a fuzzer's find). */
		{"3_[1-2]|debug|PENDING|1|1|1:00:00|gres:mlu:2|None||2026-12-02T05:43:32|N/A|4294967296|(null)|(null)|root|a\n", "field 12"},
		{"3_[1-2]|debug|PENDING|1|1|1:00:00|gres:mlu:2|None||2026-12-02T05:43:32|N/A|9223372036854775807|(null)|(null)|root|a\n", "field 12"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(&err, 0, sizeof err);
		ck_assert_int_eq(xp_slurm_parse_jobs(bad[i].text, strlen(bad[i].text), JWHAT, &j, &n, &err), -1);
		ck_assert_msg(strstr(err.msg, JWHAT ": line 1: ") && strstr(err.msg, bad[i].want), "%s: %s", bad[i].text,
			      err.msg);
		ck_assert_int_eq(n, 0);
		jobs_free(j, n);
	}
	/* The largest 32-bit id is Slurm's own, and its array tasks get ids past it, in order. */
	const char *top = "4294967295_[1-2]|debug|PENDING|1|1|1:00:00|gres:mlu:2|None||2026-12-02T05:43:32|N/A|4294967295|(null)|(null)|root|a\n";
	memset(&err, 0, sizeof err);
	ck_assert_msg(xp_slurm_parse_jobs(top, strlen(top), JWHAT, &j, &n, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(j[0].id, 4294967295LL);
	ck_assert_int_eq(j[1].id, 4294967295LL + (1LL << 32));
	jobs_free(j, n);
	/* Task ids stop at Slurm's largest (MaxArraySize may not exceed 4000001): the last two
	 * are two jobs; a range past it (the loop listing it overflowed at 2^63-1, a fuzzer's
	 * find) is not Slurm's, and the row stays one job as read. */
	const char *last = "6_[3999999-4000000]|debug|PENDING|1|1|1:00:00|gres:mlu:2|None||2026-12-02T05:43:32|N/A|6|(null)|(null)|root|a\n"
			   "7_[0-1,9223372036854775807]|debug|PENDING|1|1|1:00:00|gres:mlu:2|None||2026-12-02T05:43:32|N/A|7|(null)|(null)|root|a\n"
			   "8_[4000000-4000001]|debug|PENDING|1|1|1:00:00|gres:mlu:2|None||2026-12-02T05:43:32|N/A|8|(null)|(null)|root|a\n";
	memset(&err, 0, sizeof err);
	ck_assert_msg(xp_slurm_parse_jobs(last, strlen(last), JWHAT, &j, &n, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(n, 4);
	ck_assert_str_eq(j[0].engine_id, "6_3999999");
	ck_assert_str_eq(j[1].engine_id, "6_4000000");
	ck_assert_str_eq(j[2].engine_id, "7_[0-1,9223372036854775807]");
	ck_assert_str_eq(j[3].engine_id, "8_[4000000-4000001]");
	jobs_free(j, n);
	/* A job's name (any Slurm user picks it) and Slurm's words reach a terminal: their control
	 * bytes are masked, so a name cannot retitle or recolour it (review). */
	const char *esc = "9|train|PENDING|1|1|5|N/A|Bad\x1b[31m||2026-12-02T05:43:32|N/A|9|(null)|(null)|root|x\x1b]0;PWNED\x07\x1b[31mRED\n";
	memset(&err, 0, sizeof err);
	ck_assert_msg(xp_slurm_parse_jobs(esc, strlen(esc), JWHAT, &j, &n, &err) == 0, "%s", err.msg);
	{
		ck_assert_int_eq(n, 1);
		for (const char *q = j[0].name; *q; q++)
			ck_assert_msg((unsigned char)*q >= 0x20 && *q != 0x7f, "a control byte in %s", j[0].name);
		for (const char *q = j[0].reason_text; q && *q; q++)
			ck_assert_msg((unsigned char)*q >= 0x20 && *q != 0x7f, "a control byte in the reason");
		jobs_free(j, n);
	}
	/* Other forms squeue prints: days in a limit, an array task, a job asking no device. */
	const char *ok = "7_3|train|RUNNING|5|1|2-00:00:00|N/A|None|n[1-2]|2026-12-02T05:43:32|2026-12-02T05:43:34|9|normal|physics|ann|arr\n"
			 "8|train|PENDING|6|1|5|gres/gpu:2,gres/shard:1|Priority||Unknown|2026-12-03T00:00:00|8|(null)|(null)|bob|\n";
	ck_assert_msg(xp_slurm_parse_jobs(ok, strlen(ok), JWHAT, &j, &n, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(j[0].id, 9); /* %A: the task's own number; %i is Slurm's name for it */
	ck_assert_str_eq(j[0].engine_id, "7_3");
	ck_assert_str_eq(j[0].tenant, "physics");
	ck_assert_ptr_null(j[1].tenant);
	ck_assert_int_eq(j[0].est_s, 2 * 86400);
	ck_assert_int_eq(j[0].spec->groups[0].devices, 0);
	ck_assert_str_eq(j[0].nodes, "n[1-2]");
	ck_assert_ptr_null(j[1].nodes);
	/* Local times, two seconds apart; a pending job's %S is Slurm's guess, not a start. */
	ck_assert_int_eq(j[0].start - j[0].submit, 2);
	ck_assert_int_eq(j[1].start, -1);
	ck_assert_int_eq(j[1].submit, 0);
	ck_assert_int_eq(j[1].est_s, 5 * 60);
	ck_assert_int_eq(j[1].reason, XP_R_PRIORITY);
	ck_assert_int_eq(j[1].spec->groups[0].devices, 2);
	ck_assert_ptr_null(j[1].spec->groups[0].model);
	ck_assert_ptr_null(j[1].name);
	jobs_free(j, n);
}
END_TEST

START_TEST(partition_and_job_lines)
{
	/* The partitions' and the jobs' readers refuse a NUL byte and an overlong line as the
	 * nodes' does, each error naming the command and the line. */
	struct xp_qset set = {0};
	struct xp_qjob *j = NULL;
	size_t n = 0;
	struct xp_err err = {{0}};
	const char pnul[] = "PartitionName=a\0 State=UP\n";
	ck_assert_int_eq(xp_slurm_parse_partitions(pnul, sizeof pnul - 1, PWHAT, &set, &err), -1);
	ck_assert_str_eq(err.msg, PWHAT ": line 1: a NUL byte");
	xp_qset_clear(&set);
	const char jnul[] = "\n3|debug\0|RUNNING\n";
	ck_assert_int_eq(xp_slurm_parse_jobs(jnul, sizeof jnul - 1, JWHAT, &j, &n, &err), -1);
	ck_assert_str_eq(err.msg, JWHAT ": line 2: a NUL byte");
	jobs_free(j, n);
	size_t big = XP_SLURM_MAX_LINE + 1;
	char *huge = xp_malloc(big + 1);
	memset(huge, 'a', big);
	huge[big] = '\n';
	ck_assert_int_eq(xp_slurm_parse_partitions(huge, big + 1, PWHAT, &set, &err), -1);
	ck_assert_msg(strstr(err.msg, PWHAT ": line 1: longer than ") == err.msg, "%s", err.msg);
	xp_qset_clear(&set);
	ck_assert_int_eq(xp_slurm_parse_jobs(huge, big + 1, JWHAT, &j, &n, &err), -1);
	ck_assert_msg(strstr(err.msg, JWHAT ": line 1: longer than ") == err.msg, "%s", err.msg);
	jobs_free(j, n);
	free(huge);
}
END_TEST

/* Recorded from slurm-wlm 22.05.8 on loopback (tests/fixtures/SOURCES.md, squeue-edge.txt):
 * an array of 5 (two tasks started, three pending as one row), a heterogeneous job of two
 * components, jobs asking two partitions, CPU-only jobs, untyped GPU jobs. */
START_TEST(array_het_and_partitions)
{
	size_t len, n;
	char *t = xp_fixture_text("slurm/squeue-edge.txt", &len);
	struct xp_qset set = {0};
	char *pt = xp_fixture_text("slurm/scontrol-show-partition-edge.txt", NULL);
	struct xp_err err = {{0}};
	ck_assert_msg(xp_slurm_parse_partitions(pt, strlen(pt), PWHAT, &set, &err) == 0, "%s", err.msg);
	struct xp_qjob *j;
	ck_assert_msg(xp_slurm_parse_jobs_in(t, len, JWHAT, &set, &j, &n, &err) == 0, "%s", err.msg);
	/* Eleven rows, twelve jobs: the array's pending rest "1_[3-5]" is three jobs (each waits
	 * for its own devices), and the heterogeneous job's components "5+0", "5+1" are one job of
	 * two groups (they start together); each its own id, none read as 1 or 5 alone. */
	ck_assert_int_eq(n, 12);
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++)
			ck_assert_msg(j[a].id != j[b].id, "rows %zu and %zu share id %lld", a, b, (long long)j[a].id);
	const char *want[] = {"1_1", "1_2", "1_3", "1_4", "1_5", "5"};
	for (size_t w = 0; w < 6; w++) {
		size_t k = 0;
		while (k < n && strcmp(j[k].engine_id, want[w]) != 0)
			k++;
		ck_assert_msg(k < n, "no row %s", want[w]);
		ck_assert_str_eq(j[k].queue, "train");
		ck_assert_str_eq(xp_labels_get(&j[k].spec->groups[0].labels, "slurm.partition.train"), "true");
	}
	struct xp_qjob *het = NULL;
	for (size_t k = 0; k < n; k++)
		if (!strcmp(j[k].engine_id, "5"))
			het = &j[k];
	ck_assert_uint_eq(het->spec->n_groups, 2);
	ck_assert_int_eq(het->spec->groups[0].devices, 8);
	ck_assert_int_eq(het->spec->groups[1].devices, 2);
	ck_assert_int_eq(het->state, XP_JS_PENDING);
	for (size_t k = 0; k < n; k++)
		ck_assert_msg(strcmp(j[k].engine_id, "5+1") && strcmp(j[k].engine_id, "1_[3-5]"), "%s", j[k].engine_id);
	/* "train,cpu": the first of its partitions that is open names its queue and its nodes. */
	struct xp_qjob *multi = job_by_id(j, n, 4);
	ck_assert_str_eq(multi->engine_id, "4");
	ck_assert_str_eq(multi->queue, "train");
	/* Its nodes: those of either partition (xp_slurm_partsets labels them in a run). */
	ck_assert_str_eq(xp_labels_get(&multi->spec->groups[0].labels, "slurm.partset.train+cpu"), "true");
	jobs_free(j, n);
	/* With train down, cpu. */
	set.queues[0].state = XP_QS_HOLD;
	ck_assert_str_eq(set.queues[0].name, "train");
	ck_assert_msg(xp_slurm_parse_jobs_in(t, len, JWHAT, &set, &j, &n, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(job_by_id(j, n, 4)->queue, "cpu");
	jobs_free(j, n);
	xp_qset_clear(&set);
	free(pt);
	free(t);
}
END_TEST

/* The edge cluster's nodes (gpu01-02 h100 in train and mixed, gpu03 a100 in mixed, cpu01 in
 * cpu) and jobs, read as `job list --slurm` reads them. */
static struct xp_cluster *edge_cluster(struct xp_qjob **j, size_t *n)
{
	size_t len;
	char *t = xp_fixture_text("slurm/scontrol-show-node-edge.txt", &len);
	struct xp_cluster *c = parse_ok(t, len);
	free(t);
	t = xp_fixture_text("slurm/squeue-edge.txt", &len);
	struct xp_err err = {{0}};
	ck_assert_msg(xp_slurm_parse_jobs(t, len, JWHAT, j, n, &err) == 0, "%s", err.msg);
	free(t);
	return c;
}

static struct xp_qjob *job_named(struct xp_qjob *j, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (j[i].name && strcmp(j[i].name, name) == 0)
			return &j[i];
	ck_abort_msg("no job %s", name);
	return NULL;
}

/* A job asking several partitions may start on the nodes of any of them, as Slurm starts it
 * in whichever takes it first (review: it was judged against the first open one only, so a
 * GPU job asking "cpu,mixed" could never start though mixed's gpu03 was free). */
START_TEST(partition_sets)
{
	struct xp_qjob *j0;
	size_t n0;
	struct xp_cluster *c = edge_cluster(&j0, &n0);
	jobs_free(j0, n0);
	struct xp_node *g3 = xp_cluster_node(c, "gpu03");
	for (size_t i = 0; i < g3->n_devices; i++) {
		free(g3->devices[i].allocs);
		g3->devices[i].allocs = NULL;
		g3->devices[i].n_allocs = 0;
	}
	const char *jl = "20|cpu,mixed|PENDING|1|1|UNLIMITED|gres:gpu:8|Priority||2026-12-02T07:24:59|N/A|20|(null)|(null)|root|mp\n";
	struct xp_qjob *j;
	size_t n;
	struct xp_err err = {{0}};
	ck_assert_msg(xp_slurm_parse_jobs(jl, strlen(jl), JWHAT, &j, &n, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(xp_labels_get(&j[0].spec->groups[0].labels, "slurm.partset.cpu+mixed"), "true");
	/* A run's own cluster sharing c's nodes: the set's nodes get its label there, not in c. */
	struct xp_cluster *s = xp_cluster_new();
	for (size_t i = 0; i < c->n_nodes; i++)
		xp_cluster_add(s, xp_node_ref(c->nodes[i]));
	xp_slurm_partsets(s, j, n);
	const char *in[] = {"gpu01", "gpu02", "gpu03", "cpu01"};
	for (size_t i = 0; i < 4; i++) {
		ck_assert_str_eq(xp_labels_get(&xp_cluster_node(s, in[i])->governance, "slurm.partset.cpu+mixed"), "true");
		ck_assert_ptr_null(xp_labels_get(&xp_cluster_node(c, in[i])->governance, "slurm.partset.cpu+mixed"));
	}
	struct xp_place_opts po = {.strategy = XP_STRAT_PACK};
	struct xp_place_result *r = xp_place(s, j[0].spec, NULL, 0, &po, &err);
	ck_assert_msg(r != NULL, "%s", err.msg);
	ck_assert_msg(r->placed, "not placed: %s", r->summary ? r->summary : "");
	ck_assert_str_eq(s->nodes[r->replicas[0].node_ix]->name, "gpu03");
	xp_place_result_free(r);
	/* Without the labels (the first partition alone, cpu), nowhere. */
	r = xp_place(c, j[0].spec, NULL, 0, &po, &err);
	ck_assert_msg(r != NULL && !r->placed, "placed without the set's nodes labelled");
	xp_place_result_free(r);
	jobs_free(j, n);
	xp_cluster_free(s);
	xp_cluster_free(c);
}
END_TEST

START_TEST(untyped_and_cpu_only)
{
	struct xp_qjob *j;
	size_t n;
	struct xp_cluster *c = edge_cluster(&j, &n);
	ck_assert_str_eq(xp_labels_get(&xp_cluster_node(c, "gpu03")->governance, "slurm.partition.mixed"), "true");
	ck_assert_ptr_null(xp_labels_get(&xp_cluster_node(c, "gpu03")->governance, "slurm.partition.train"));
	/* gres:gpu:4 in train, whose GPUs are all h100: NVIDIA h100. */
	struct xp_qjob *tp = job_named(j, n, "trainpend");
	ck_assert_ptr_null(tp->spec->groups[0].model);
	ck_assert_ptr_null(xp_slurm_job_fit(tp, c));
	ck_assert_str_eq(tp->spec->groups[0].vendor, "NVIDIA");
	ck_assert_str_eq(tp->spec->groups[0].model, "h100");
	/* gres:gpu:8 in mixed (h100 and a100): ambiguous, said, and not guessed. */
	struct xp_qjob *mp = job_named(j, n, "mixedpend");
	char *note = xp_slurm_job_fit(mp, c);
	ck_assert_ptr_nonnull(note);
	ck_assert_msg(strstr(note, "partition mixed") && strstr(note, "h100") && strstr(note, "a100") &&
			      strstr(note, "ambiguous"), "%s", note);
	ck_assert_ptr_null(mp->spec->groups[0].model);
	free(note);
	/* Kinds are told apart whole, not by prefix: h10 is not h100. */
	struct xp_node *g3 = xp_cluster_node(c, "gpu03");
	for (size_t i = 0; i < g3->n_devices; i++)
		xp_istr_set(&g3->devices[i].model, "h10");
	note = xp_slurm_job_fit(mp, c);
	ck_assert_ptr_nonnull(note);
	ck_assert_msg(strstr(note, "2 kinds (h100, h10)"), "%s", note);
	free(note);
	/* No GRES: a note, not AffinityUnsatisfiable from the placement. */
	note = xp_slurm_job_fit(job_named(j, n, "cpuonly"), c);
	ck_assert_ptr_nonnull(note);
	ck_assert_msg(strstr(note, "no accelerator") != NULL, "%s", note);
	free(note);
	/* A typed request is left as asked. */
	struct xp_qjob *npu = job_named(j, n, "arr");
	ck_assert_ptr_null(xp_slurm_job_fit(npu, c));
	jobs_free(j, n);
	xp_cluster_free(c);
}
END_TEST

START_TEST(partition_nodes_limit)
{
	/* gpu01 and gpu02 (train) are in use, gpu03 (mixed only) free: an untyped 8-GPU job of
	 * train may not go to gpu03; the same request without the partition's selector would. */
	struct xp_qjob *j;
	size_t n;
	struct xp_cluster *c = edge_cluster(&j, &n);
	struct xp_node *g3 = xp_cluster_node(c, "gpu03");
	for (size_t i = 0; i < g3->n_devices; i++) {
		free(g3->devices[i].allocs);
		g3->devices[i].allocs = NULL;
		g3->devices[i].n_allocs = 0;
	}
	struct xp_qjob *arr = NULL;
	for (size_t i = 0; i < n; i++)
		if (strcmp(j[i].engine_id, "1_3") == 0)
			arr = &j[i];
	ck_assert_ptr_nonnull(arr);
	struct xp_err err = {{0}};
	struct xp_place_opts po = {.strategy = XP_STRAT_PACK};
	struct xp_place_result *r = xp_place(c, arr->spec, NULL, 0, &po, &err);
	ck_assert_msg(r != NULL, "%s", err.msg);
	ck_assert_msg(!r->placed, "placed outside partition train");
	ck_assert_msg(r->summary && strstr(r->summary, "slurm.partition.train"), "%s", r->summary ? r->summary : "");
	xp_place_result_free(r);
	xp_labels_clear(&arr->spec->groups[0].labels);
	r = xp_place(c, arr->spec, NULL, 0, &po, &err);
	ck_assert_msg(r != NULL, "%s", err.msg);
	ck_assert_msg(r->placed && r->n_replicas == 1, "not placed: %s", r->summary ? r->summary : "");
	ck_assert_str_eq(c->nodes[r->replicas[0].node_ix]->name, "gpu03");
	xp_place_result_free(r);
	jobs_free(j, n);
	xp_cluster_free(c);
}
END_TEST

/* sacctmgr's QOS lines, built from the documented format (no slurmdbd here: SOURCES.md). */
START_TEST(qos_as_queues)
{
	size_t len;
	char *t = xp_fixture_text("slurm/sacctmgr-show-qos.txt", &len);
	struct xp_qset set = {0};
	struct xp_err err = {{0}};
	ck_assert_msg(xp_slurm_parse_qos(t, len, "sacctmgr", &set, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(set.n_queues, 3);
	const struct xp_queue *high = xp_qset_queue(&set, "qos.high");
	ck_assert_ptr_nonnull(high);
	ck_assert_int_eq(high->priority, 100);
	ck_assert_int_eq(high->state, XP_QS_OPEN);
	/* GrpTRES gres/gpu=16: at most 16 devices of class gpu at once, a hard limit. */
	ck_assert_int_eq(high->n_quotas, 1);
	ck_assert_str_eq(high->quotas[0].rclass, "gpu");
	ck_assert_int_eq(high->quotas[0].res, XP_RES_DEVICES);
	ck_assert_int_eq(high->quotas[0].max, 16000);
	ck_assert_int_eq(high->quotas[0].deserved, 16000);
	ck_assert_int_eq(high->quotas[0].borrowing_limit, 0);
	ck_assert_msg(strstr(high->engine_text, "GrpTRES also node=4") && strstr(high->engine_text, "MaxTRESPerUser gres/gpu=4") &&
			      strstr(high->engine_text, "MaxWall 1-00:00:00") && strstr(high->engine_text, "preempts normal,scavenger"),
		      "%s", high->engine_text);
	const struct xp_queue *scav = xp_qset_queue(&set, "qos.scavenger");
	ck_assert_int_eq(scav->n_quotas, 3);
	ck_assert_str_eq(scav->quotas[0].rclass, "cpu");
	ck_assert_int_eq(scav->quotas[0].max, 512000);
	ck_assert_str_eq(scav->quotas[1].rclass, "mem");
	ck_assert_int_eq(scav->quotas[1].max, 2048 * 1000); /* 2T in GiB */
	ck_assert_str_eq(scav->quotas[2].rclass, "gpu.h100");
	const struct xp_rclass *h100 = xp_qset_class(&set, "gpu.h100");
	ck_assert_str_eq(h100->model, "h100");
	ck_assert_str_eq(h100->vendor, "NVIDIA");
	for (size_t i = 0; i < set.n_queues; i++)
		for (size_t k = 0; k < set.queues[i].n_quotas; k++)
			ck_assert_msg(xp_quota_check(&set.queues[i].quotas[k], xp_qset_class(&set, set.queues[i].quotas[k].rclass), &err) == 0,
				      "%s", err.msg);
	ck_assert_str_eq(xp_qset_queue(&set, "qos.normal")->engine_text, "Slurm QOS normal");
	/* A QOS with limits holds its jobs, running ones too (what they use counts against the
	 * limit); a job of a QOS without limits is in its partition unless pending for the QOS. */
	const char *jl = "11|train|PENDING|5|1|5|gres:gpu:4|QOSGrpGRES||2026-12-02T05:43:32|N/A|11|high|physics|ann|a\n"
			 "12|train|PENDING|5|1|5|gres:gpu:4|Priority||2026-12-02T05:43:32|N/A|12|high|physics|ann|b\n"
			 "13|train|PENDING|5|1|5|gres:gpu:4|QOSMaxGRESPerUser||2026-12-02T05:43:32|N/A|13|gone|physics|ann|c\n"
			 "14|train|RUNNING|5|1|5|gres:gpu:4|None|n1|2026-12-02T05:43:32|2026-12-02T05:43:34|14|high|physics|ann|d\n"
			 "15|train|PENDING|5|1|5|gres:gpu:4|Priority||2026-12-02T05:43:32|N/A|15|normal|physics|ann|e\n";
	struct xp_qjob *j;
	size_t n;
	ck_assert_msg(xp_slurm_parse_jobs_in(jl, strlen(jl), JWHAT, &set, &j, &n, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(j[0].queue, "qos.high");
	ck_assert_int_eq(j[0].reason, XP_R_QUOTA);
	ck_assert_str_eq(xp_labels_get(&j[0].spec->groups[0].labels, "slurm.partition.train"), "true");
	ck_assert_str_eq(j[1].queue, "qos.high");
	ck_assert_str_eq(j[2].queue, "train"); /* a QOS sacctmgr did not list */
	ck_assert_str_eq(j[3].queue, "qos.high");
	ck_assert_int_eq(xp_qset_queue(&set, "qos.normal")->n_quotas, 0);
	ck_assert_str_eq(j[4].queue, "train");
	jobs_free(j, n);
	xp_qset_clear(&set);
	free(t);
	/* Spoiled lines: errors naming the line and the field. */
	static const struct {
		const char *text, *want;
	} bad[] = {
		{"normal|0|||\n", "fields"},
		{"normal|0|||||x\n", "fields"},
		{"no/rmal|0||||\n", "QOS name"},
		{"normal|-3||||\n", "field 2"},
		{"normal|0|gres/gpu=lots|||\n", "GrpTRES"},
		{"normal|0|gres/gpu|||\n", "GrpTRES"},
		{"normal|0||||\nnormal|0||||\n", "twice"},
		{"normal|0||||", "truncated"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(&err, 0, sizeof err);
		ck_assert_int_eq(xp_slurm_parse_qos(bad[i].text, strlen(bad[i].text), "sacctmgr", &set, &err), -1);
		ck_assert_msg(strstr(err.msg, "sacctmgr: line ") && strstr(err.msg, bad[i].want), "%s: %s", bad[i].text, err.msg);
		xp_qset_clear(&set);
	}
}
END_TEST

START_TEST(fair_share_notes)
{
	/* With accounting (rows built from sshare's documented columns) and without (recorded:
	 * the header alone). */
	size_t len;
	char *t = xp_fixture_text("slurm/sshare-a-P-l.txt", &len);
	struct xp_qset set = {0};
	struct xp_err err = {{0}};
	ck_assert_msg(xp_slurm_parse_sshare(t, len, "sshare", &set, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(set.n_notes, 2);
	ck_assert_str_eq(set.notes[0], "fair-share physics/ann: 0.500000 (NormShares 0.500000, EffectvUsage 0.666667)");
	ck_assert_str_eq(set.notes[1], "fair-share physics/bob: 0.750000 (NormShares 0.500000, EffectvUsage 0.333333)");
	xp_qset_clear(&set);
	free(t);
	t = xp_fixture_text("slurm/sshare-no-accounting.txt", &len);
	ck_assert_msg(xp_slurm_parse_sshare(t, len, "sshare", &set, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(set.n_notes, 1);
	ck_assert_msg(strstr(set.notes[0], "fair-share not available") != NULL, "%s", set.notes[0]);
	xp_qset_clear(&set);
	free(t);
	const char *bad = "Account|User|RawShares\nx|y|1\n";
	ck_assert_int_eq(xp_slurm_parse_sshare(bad, strlen(bad), "sshare", &set, &err), -1);
	ck_assert_msg(strstr(err.msg, "sshare: line 1: ") && strstr(err.msg, "FairShare"), "%s", err.msg);
	xp_qset_clear(&set);
	const char *short_row = "Account|User|FairShare\nx|y\n";
	ck_assert_int_eq(xp_slurm_parse_sshare(short_row, strlen(short_row), "sshare", &set, &err), -1);
	ck_assert_msg(strstr(err.msg, "sshare: line 2: 2 fields"), "%s", err.msg);
	xp_qset_clear(&set);
}
END_TEST

START_TEST(conf_unreadable)
{
	/* A --slurm-conf that names no readable file fails at once naming it: the client itself
	 * would fall back to DNS SRV records and wait out its timeouts (30 s) first. */
	struct xp_err err = {{0}};
	ck_assert_ptr_null(xp_slurm_load("/nonexistent/slurm.conf", &err));
	ck_assert_str_eq(err.msg, "slurm: --slurm-conf /nonexistent/slurm.conf: No such file or directory");
	struct xp_qset set = {0};
	struct xp_qjob *j = NULL;
	size_t n = 0;
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(xp_slurm_load_queues("/", &set, &j, &n, &err), -1);
	ck_assert_str_eq(err.msg, "slurm: --slurm-conf /: not a file");
	xp_qset_clear(&set);
	free(j);
}
END_TEST

/* The accounting clients' answer is their stdout: a warning they print on stderr (a
 * slurmdbd that answers late, a deprecated option) must not read as a line of it and lose
 * the QOS queues and fair-share (review). Faked clients on PATH print the recorded and
 * documented answers, and one warning line on stderr each. */
START_TEST(accounting_warnings_on_stderr)
{
	char dir[] = "/tmp/xpool-slurm-acct-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	const char *tools[][2] = {{"scontrol", "slurm/scontrol-show-partition.txt"},
				  {"squeue", "slurm/squeue.txt"},
				  {"sacctmgr", "slurm/sacctmgr-show-qos.txt"},
				  {"sshare", "slurm/sshare-a-P-l.txt"}};
	for (size_t i = 0; i < 4; i++) {
		char *fx = xp_asprintf("%s/%s", getenv("XP_FIXTURES"), tools[i][1]);
		char *sh = xp_asprintf("#!/bin/sh\necho '%s: warning: something to say' >&2\ncat '%s'\n", tools[i][0], fx);
		free(xp_write_file(dir, tools[i][0], sh, 0700));
		free(sh);
		free(fx);
	}
	char *conf = xp_write_file(dir, "slurm.conf", "ClusterName=x\n", 0600);
	char *path = xp_asprintf("%s:%s", dir, getenv("PATH"));
	char *old = xp_strdup(getenv("PATH"));
	setenv("PATH", path, 1);
	setenv("XPOOL_SLURM_JSON", "0", 1);
	struct xp_qset set = {0};
	struct xp_qjob *j = NULL;
	size_t n = 0;
	struct xp_err err = {{0}};
	int rc = xp_slurm_load_queues(conf, &set, &j, &n, &err);
	setenv("PATH", old, 1);
	unsetenv("XPOOL_SLURM_JSON");
	ck_assert_msg(rc == 0, "%s", err.msg);
	ck_assert_ptr_nonnull(xp_qset_queue(&set, "qos.high"));
	ck_assert_ptr_nonnull(xp_qset_queue(&set, "qos.scavenger"));
	bool fair = false;
	for (size_t i = 0; i < set.n_notes; i++) {
		ck_assert_msg(!strstr(set.notes[i], "not read") && !strstr(set.notes[i], "partly"), "%s", set.notes[i]);
		fair = fair || strncmp(set.notes[i], "fair-share ", 11) == 0;
	}
	ck_assert(fair);
	for (size_t i = 0; i < n; i++)
		xp_qjob_clear(&j[i]);
	free(j);
	xp_qset_clear(&set);
	free(conf);
	free(path);
	free(old);
	xp_rm_rf(dir);
}
END_TEST

XP_DEFINE_SUITE(slurm_source, {"nodes", .tests = {recorded_nodes, states_mapped, vendors_from_gres,
						typed_gres_with_indices, free_text_cannot_add_fields, recorded_partitions, recorded_jobs}},
		{"malformed", .tests = {malformed_records, hostile_input, partition_and_job_lines}},
		{"engine", .tests = {conf_unreadable, array_het_and_partitions, untyped_and_cpu_only, partition_nodes_limit, partition_sets, qos_as_queues,
					     fair_share_notes, accounting_warnings_on_stderr}})
