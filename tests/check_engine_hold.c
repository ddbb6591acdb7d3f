/* check_engine_hold.c: a live engine's running jobs take back the devices their nodes show in
 * use (src/cmd/engine_hold.c), on the Slurm outputs recorded from a real slurmctld
 * (tests/fixtures/slurm/): the node lines say GresUsed per node, the squeue lines say per job
 * its nodes (%N) and GRES per node (%b). The counts asserted are those two texts' numbers. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "engine_hold.h"
#include "fakehost.h"
#include "model.h"
#include "qjob.h"
#include "slurm.h"
#include "suitelib.h"
#include "testlib.h"
#include "xp.h"

static size_t in_use(const struct xp_cluster *c, const char *node)
{
	const struct xp_node *n = xp_cluster_node(c, node);
	ck_assert_ptr_nonnull(n);
	size_t k = 0;
	for (size_t i = 0; i < n->n_devices; i++)
		k += n->devices[i].n_allocs > 0;
	return k;
}

static struct xp_cluster *nodes(void)
{
	size_t len;
	char *t = xp_fixture_text("slurm/scontrol-show-node-d.txt", &len);
	struct xp_cluster *c = xp_cluster_new();
	struct xp_err err = {{0}};
	ck_assert_msg(xp_slurm_parse_nodes(t, len, "nodes", c, &err) == 0, "%s", err.msg);
	free(t);
	return c;
}

static struct xp_qjob *jobs_of(const char *text, size_t *n)
{
	struct xp_qjob *j;
	struct xp_err err = {{0}};
	ck_assert_msg(xp_slurm_parse_jobs(text, strlen(text), "squeue", &j, n, &err) == 0, "%s", err.msg);
	return j;
}

static void jobs_free(struct xp_qjob *j, size_t n)
{
	for (size_t i = 0; i < n; i++)
		xp_qjob_clear(&j[i]);
	free(j);
}

static const struct xp_qjob *by_id(const struct xp_qjob *j, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (j[i].id == id)
			return &j[i];
	ck_abort_msg("no job %lld", (long long)id);
	return NULL;
}

/* The recorded cluster: gpu01 GresUsed gpu:h100:4 (job 1, 4 per node), npu01 npu:910b:8 (job 2),
 * mlu01 mlu:mlu370:2 (job 3); jobs 4 and 5 pend. */
START_TEST(recorded_jobs_take_their_devices)
{
	struct xp_cluster *c = nodes();
	size_t n;
	char *t = xp_fixture_text("slurm/squeue.txt", NULL);
	struct xp_qjob *j = jobs_of(t, &n);
	free(t);
	struct xp_cluster *s = xp_engine_hold_share(c);
	bool held[8] = {0};
	ck_assert_int_eq(n, 5);
	ck_assert_int_eq(xp_engine_hold(s, j, n, held), 3);
	const struct xp_qjob *four = by_id(j, n, 1), *npu = by_id(j, n, 2), *mlu = by_id(j, n, 3);
	ck_assert_int_eq(four->alloc.n, 4);
	/* UNLIMITED (job 1's limit): it must not end within any run, and a what-if looks ahead
	 * up to 366 days (review: a year's stand-in ended it inside a 366-day horizon). */
	ck_assert_int_gt(four->est_s, 10 * 366LL * 86400);
	ck_assert_int_eq(npu->alloc.n, 8);
	ck_assert_int_eq(mlu->alloc.n, 2);
	ck_assert_int_eq(by_id(j, n, 4)->alloc.n, 0);
	ck_assert_int_eq(by_id(j, n, 5)->alloc.n, 0);
	for (size_t i = 0; i < four->alloc.n; i++) {
		ck_assert_str_eq(s->nodes[four->alloc.slots[i].node_ix]->name, "gpu01");
		ck_assert_int_eq(four->alloc.slots[i].take, 1000);
	}
	for (size_t i = 0; i < mlu->alloc.n; i++)
		ck_assert_str_eq(s->nodes[mlu->alloc.slots[i].node_ix]->name, "mlu01");
	/* The share's nodes no longer hold them; the context's cluster still shows all in use. */
	ck_assert_int_eq(in_use(s, "gpu01"), 0);
	ck_assert_int_eq(in_use(s, "npu01"), 0);
	ck_assert_int_eq(in_use(s, "mlu01"), 0);
	ck_assert_int_eq(in_use(c, "gpu01"), 4);
	ck_assert_int_eq(in_use(c, "npu01"), 8);
	ck_assert_int_eq(in_use(c, "mlu01"), 2);
	/* Nodes no job touched are still the very same nodes, shared. */
	ck_assert_ptr_eq(xp_cluster_node(s, "gpu02"), xp_cluster_node(c, "gpu02"));
	ck_assert_ptr_ne(xp_cluster_node(s, "gpu01"), xp_cluster_node(c, "gpu01"));
	jobs_free(j, n);
	xp_cluster_free(s);
	xp_cluster_free(c);
}
END_TEST

/* Jobs whose words do not add up keep their devices on the nodes, and change nothing. */
START_TEST(mismatches_change_nothing)
{
	struct xp_cluster *c = nodes();
	const char *text =
		/* more than gpu01 shows in use */
		"11|train|RUNNING|1|1|UNLIMITED|gres:gpu:h100:5|None|gpu01|2026-12-02T05:43:32|2026-12-02T05:43:34|11|(null)|(null)|root|a\n"
		/* a node Slurm did not list */
		"12|train|RUNNING|1|1|UNLIMITED|gres:gpu:h100:1|None|gpu09|2026-12-02T05:43:32|2026-12-02T05:43:34|12|(null)|(null)|root|b\n"
		/* two nodes, one replica */
		"13|train|RUNNING|1|1|UNLIMITED|gres:gpu:h100:1|None|gpu[01-02]|2026-12-02T05:43:32|2026-12-02T05:43:34|13|(null)|(null)|root|c\n"
		/* gpu02 shows none in use */
		"14|train|RUNNING|1|1|UNLIMITED|gres:gpu:h100:1|None|gpu02|2026-12-02T05:43:32|2026-12-02T05:43:34|14|(null)|(null)|root|d\n"
		/* no device asked */
		"15|train|RUNNING|1|1|UNLIMITED|N/A|None|gpu01|2026-12-02T05:43:32|2026-12-02T05:43:34|15|(null)|(null)|root|e\n"
		/* another model than gpu01's */
		"16|train|RUNNING|1|1|UNLIMITED|gres:gpu:a100:1|None|gpu01|2026-12-02T05:43:32|2026-12-02T05:43:34|16|(null)|(null)|root|f\n"
		/* a node list that is not one */
		"17|train|RUNNING|1|1|UNLIMITED|gres:gpu:h100:1|None|gpu[01|2026-12-02T05:43:32|2026-12-02T05:43:34|17|(null)|(null)|root|g\n";
	size_t n;
	struct xp_qjob *j = jobs_of(text, &n);
	ck_assert_int_eq(n, 7);
	struct xp_cluster *s = xp_engine_hold_share(c);
	bool held[8];
	memset(held, 1, sizeof held);
	ck_assert_int_eq(xp_engine_hold(s, j, n, held), 0);
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(!held[i], "job %lld held", (long long)j[i].id);
		ck_assert_int_eq(j[i].alloc.n, 0);
	}
	for (size_t i = 0; i < c->n_nodes; i++)
		ck_assert_ptr_eq(s->nodes[i], c->nodes[i]);
	jobs_free(j, n);

	/* An untyped request takes any in-use unit; two jobs share gpu01's four; a fifth finds
	 * none left. */
	text = "21|train|RUNNING|1|1|UNLIMITED|gres:gpu:2|None|gpu01|2026-12-02T05:43:32|2026-12-02T05:43:34|21|(null)|(null)|root|a\n"
	       "22|train|RUNNING|1|1|UNLIMITED|gres:gpu:h100:2|None|gpu01|2026-12-02T05:43:32|2026-12-02T05:43:34|22|(null)|(null)|root|b\n"
	       "23|train|RUNNING|1|1|UNLIMITED|gres:gpu:1|None|gpu01|2026-12-02T05:43:32|2026-12-02T05:43:34|23|(null)|(null)|root|c\n";
	j = jobs_of(text, &n);
	ck_assert_int_eq(xp_engine_hold(s, j, n, held), 2);
	ck_assert(held[0] && held[1] && !held[2]);
	ck_assert_int_ne(j[0].alloc.slots[0].pos, j[1].alloc.slots[0].pos);
	ck_assert_int_ne(j[0].alloc.slots[1].pos, j[1].alloc.slots[1].pos);
	ck_assert_int_eq(in_use(s, "gpu01"), 0);
	ck_assert_int_eq(in_use(c, "gpu01"), 4);
	jobs_free(j, n);
	xp_cluster_free(s);
	xp_cluster_free(c);
}
END_TEST

/* Kinds kept apart (review): a typed job takes only its own type, exactly as Slurm names it
 * (an a10 job is not an a100 one, an h100 job not a MIG unit's), an untyped one only its GRES
 * name's units (a gpu job never an npu), and typed jobs choose first whatever squeue's order. */
START_TEST(kinds_kept_apart)
{
	static const char nodes_text[] =
		"NodeName=n1 CPUTot=8 RealMemory=1000 State=MIXED Gres=gpu:a100:2,gpu:h100:2 GresUsed=gpu:a100:2,gpu:h100:2\n"
		"NodeName=n2 CPUTot=8 RealMemory=1000 State=MIXED Gres=gpu:h100:2,npu:910b:2 GresUsed=gpu:h100:0,npu:910b:2\n"
		"NodeName=n3 CPUTot=8 RealMemory=1000 State=MIXED Gres=gpu:h100_1g.10gb:2,gpu:h100:1 "
		"GresUsed=gpu:h100_1g.10gb:1,gpu:h100:1\n"
		"NodeName=n4 CPUTot=8 RealMemory=1000 State=MIXED Gres=gpu:a100:2 GresUsed=gpu:a100:2\n";
	struct xp_cluster *c = xp_cluster_new();
	struct xp_err err = {{0}};
	ck_assert_msg(xp_slurm_parse_nodes(nodes_text, strlen(nodes_text), "nodes", c, &err) == 0, "%s", err.msg);
#define RUN(id, gres, node) #id "|train|RUNNING|1|1|UNLIMITED|" gres "|None|" node \
	"|2026-12-02T05:43:32|2026-12-02T05:43:34|" #id "|(null)|(null)|root|j" #id "\n"
	const char *text = RUN(31, "gres:gpu:2", "n1") RUN(32, "gres:gpu:a100:2", "n1") RUN(33, "gres:gpu:h100:2", "n1")
		RUN(34, "gres:gpu:2", "n2") RUN(35, "gres:gpu:a10:2", "n4") RUN(36, "gres:gpu:h100:1", "n3")
			RUN(37, "gres:gpu:h100_1g.10gb:1", "n3");
#undef RUN
	size_t n;
	struct xp_qjob *j = jobs_of(text, &n);
	ck_assert_int_eq(n, 7);
	struct xp_cluster *s = xp_engine_hold_share(c);
	bool held[8];
	ck_assert_int_eq(xp_engine_hold(s, j, n, held), 4);
	ck_assert(!held[0] && held[1] && held[2] && !held[3] && !held[4] && held[5] && held[6]);
	const struct xp_node *n1 = xp_cluster_node(s, "n1"), *n3 = xp_cluster_node(s, "n3");
	for (size_t i = 0; i < 2; i++) {
		ck_assert_str_eq(n1->devices[j[1].alloc.slots[i].pos].model, "a100");
		ck_assert_str_eq(n1->devices[j[2].alloc.slots[i].pos].model, "h100");
	}
	ck_assert_str_eq(n3->devices[j[5].alloc.slots[0].pos].model, "h100");
	ck_assert_str_eq(n3->devices[j[6].alloc.slots[0].pos].model, "h100_1g.10gb");
	ck_assert_int_eq(in_use(s, "n2"), 2); /* the NPUs stay held by the node */
	ck_assert_int_eq(in_use(s, "n4"), 2);
	jobs_free(j, n);
	xp_cluster_free(s);
	xp_cluster_free(c);
}
END_TEST

XP_DEFINE_SUITE(engine_hold, {"slurm", .tests = {recorded_jobs_take_their_devices, mismatches_change_nothing, kinds_kept_apart}});
