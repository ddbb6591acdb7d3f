/* check_sched.c: the scheduler (qsched.h) on hand-built clusters and queue sets. Every
 * scenario's expected answer is worked out by hand from the rule it names (xpool-internals(7),
 * "Scheduler"), never read back from the engine; xp_sched_check runs after every step. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "jobspec.h"
#include "model.h"
#include "place.h"
#include "qjob.h"
#include "qmodel.h"
#include "qsched.h"
#include "suitelib.h"
#include "testlib.h"

/* ---------- a world: cluster, classes, queues, scheduler ---------- */

struct world {
	struct xp_cluster *c;
	struct xp_qset qs;
	struct xp_sched *s;
	int64_t next_id;
	/* state changes seen, as "id:from>to" words */
	char log[8192];
};

static void listen_fn(void *ctx, const struct xp_sched_event *ev)
{
	struct world *w = ctx;
	const struct xp_qjob *j = xp_sched_job(w->s, ev->job);
	size_t len = strlen(w->log);
	snprintf(w->log + len, sizeof w->log - len, "%s%lld:%s>%s", len ? " " : "", (long long)j->id,
		 ev->from < 0 ? "-" : xp_jstate_name(ev->from), xp_jstate_name(ev->to));
}

/* n_nodes nodes of per devices each, NVIDIA H100 (class h100), named n0, n1, ... */
static void w_nodes(struct world *w, int n_nodes, int per, const char *model)
{
	if (!w->c)
		w->c = xp_cluster_new();
	const struct xp_test_devs t = {"NVIDIA", model ? model : "H100 80GB HBM3", "550", 81559, 1, "nvlink", 0};
	for (int i = 0; i < n_nodes; i++) {
		char name[32];
		snprintf(name, sizeof name, "n%zu", w->c->n_nodes);
		struct xp_node *nd = xp_test_node(w->c, name, per, &t);
		nd->pus = nd->pus_allowed = 64;
		nd->memory_mib = 512 * 1024;
	}
}

/* A class: vendor and model globs (created in call order). */
static void w_class(struct world *w, const char *name, const char *vendor, const char *model, const char *label)
{
	struct xp_qset *q = &w->qs;
	q->classes = xp_realloc(q->classes, (q->n_classes + 1) * sizeof *q->classes);
	struct xp_rclass *c = &q->classes[q->n_classes++];
	memset(c, 0, sizeof *c);
	c->name = xp_strdup(name);
	c->vendor = vendor ? xp_strdup(vendor) : NULL;
	c->model = model ? xp_strdup(model) : NULL;
	c->label = label ? xp_strdup(label) : NULL;
	c->builtin = !vendor && !model && !label;
	c->created = (int64_t)q->n_classes;
}

static struct xp_queue *w_queue(struct world *w, const char *name, const char *parent, double weight)
{
	struct xp_qset *q = &w->qs;
	q->queues = xp_realloc(q->queues, (q->n_queues + 1) * sizeof *q->queues);
	struct xp_queue *u = &q->queues[q->n_queues++];
	memset(u, 0, sizeof *u);
	u->name = xp_strdup(name);
	u->parent = parent ? xp_strdup(parent) : NULL;
	u->weight = weight;
	u->reclaimable = true;
	u->created = (int64_t)q->n_queues;
	return u;
}

/* Gives queue name a quota of class/res in units (-1 unlimited for max, borrow, lend). */
static void w_quota(struct world *w, const char *queue, const char *cls, int res, double g, double d, double max,
		    double borrow, double lend)
{
	struct xp_queue *u = xp_qset_queue(&w->qs, queue);
	ck_assert_ptr_nonnull(u);
	u->quotas = xp_realloc(u->quotas, (u->n_quotas + 1) * sizeof *u->quotas);
	struct xp_quota *t = &u->quotas[u->n_quotas++];
	t->rclass = xp_strdup(cls);
	t->res = res;
	t->guaranteed = (int64_t)(g * 1000);
	t->deserved = (int64_t)(d * 1000);
	t->max = max < 0 ? XP_UNLIMITED : (int64_t)(max * 1000);
	t->borrowing_limit = borrow < 0 ? XP_UNLIMITED : (int64_t)(borrow * 1000);
	t->lending_limit = lend < 0 ? XP_UNLIMITED : (int64_t)(lend * 1000);
}

static void w_start(struct world *w, const struct xp_sched_opts *o)
{
	struct xp_err err = {{0}};
	w->s = xp_sched_new(w->c, NULL, 0, &w->qs, o, &err);
	ck_assert_msg(w->s != NULL, "%s", err.msg);
	xp_sched_listen(w->s, listen_fn, w);
}

static void w_check(struct world *w)
{
	struct xp_err err = {{0}};
	ck_assert_msg(xp_sched_check(w->s, &err) == 0, "invariant: %s", err.msg);
}

/* Submits a job (spec JSON) to queue at submit with estimate est; returns its index. */
static size_t w_job(struct world *w, const char *queue, int prio, int64_t submit, int64_t est, const char *spec)
{
	struct xp_err err = {{0}};
	struct xp_qjob j = {0};
	j.id = ++w->next_id;
	j.queue = xp_strdup(queue);
	j.priority = prio;
	j.submit = submit;
	j.est_s = est;
	j.actual_s = -1;
	j.start = j.end = -1;
	j.state = XP_JS_PENDING;
	j.spec = xp_job_parse(spec, strlen(spec), NULL, &err);
	ck_assert_msg(j.spec != NULL, "%s", err.msg);
	int64_t i = xp_sched_add(w->s, &j, &err);
	ck_assert_msg(i >= 0, "%s", err.msg);
	w_check(w);
	return (size_t)i;
}

static int w_pass(struct world *w, int64_t now)
{
	struct xp_err err = {{0}};
	int n = xp_sched_pass(w->s, now, &err);
	ck_assert_msg(n >= 0, "%s", err.msg);
	w_check(w);
	return n;
}

static void w_finish(struct world *w, size_t i, int64_t now)
{
	struct xp_err err = {{0}};
	ck_assert_msg(xp_sched_finish(w->s, i, XP_JS_COMPLETED, now, &err) == 0, "%s", err.msg);
	w_check(w);
}

static void w_free(struct world *w)
{
	xp_sched_free(w->s);
	xp_qset_clear(&w->qs);
	xp_cluster_free(w->c);
}

static const struct xp_qjob *J(struct world *w, size_t i)
{
	return xp_sched_job(w->s, i);
}

/* Time from..to-1: at each t the running jobs whose estimate runs out end, then a pass when
 * one ended or t is a multiple of every. */
static void w_run(struct world *w, int64_t from, int64_t to, int every)
{
	for (int64_t t = from; t < to; t++) {
		bool any = false;
		for (size_t i = 0; i < xp_sched_count(w->s); i++)
			if (J(w, i)->state == XP_JS_RUNNING && J(w, i)->start + J(w, i)->est_s == t) {
				w_finish(w, i, t);
				any = true;
			}
		if (any || t % every == 0)
			w_pass(w, t);
	}
}

/* Asserts job i is state st with reason code rc and, when text is not NULL, a reason text
 * starting with text. */
#define EXPECT(w, i, st, rc, text)                                                                          \
	do {                                                                                               \
		const struct xp_qjob *j_ = J(w, i);                                                        \
		ck_assert_msg(j_->state == (st) && j_->reason == (rc) &&                                   \
				      (!(text) || (j_->reason_text && strncmp(j_->reason_text, (text) ? (text) : "", \
									     strlen((text) ? (text) : "")) == 0)), \
			      "job %lld: %s %s \"%s\", wanted %s %s \"%s\"", (long long)j_->id,               \
			      xp_jstate_name(j_->state), xp_reason_name(j_->reason),                      \
			      j_->reason_text ? j_->reason_text : "", xp_jstate_name(st), xp_reason_name(rc), \
			      (text) ? (const char *)(text) : "*");                                        \
	} while (0)

/* ---------- first pass: order, placement, states, Resources, Held, positions ---------- */

/* Rule: jobs in a queue go by priority desc, submit asc, id; each is placed by the placement
 * engine into the scheduler's own index. 4 nodes x 8 devices = 32; five jobs of one replica
 * of 8 devices (a replica's devices lie on one node): the first four by submit time take one
 * node each, the fifth finds 0/4 nodes with 8 free and waits for Resources, position 1 in its
 * queue and 1 overall. When job 1 ends, the next pass starts job 5 on the node it freed. */
START_TEST(fifo_and_resources)
{
	struct world w = {0};
	w_nodes(&w, 4, 8, NULL);
	w_class(&w, "h100", "NVIDIA", "*H100*", NULL);
	w_queue(&w, "a", NULL, 1);
	w_start(&w, NULL);
	size_t j[5];
	for (int i = 0; i < 5; i++)
		j[i] = w_job(&w, "a", 0, i, 100, "{\"devices\": 8}");
	ck_assert_int_eq(w_pass(&w, 10), 4);
	for (int i = 0; i < 4; i++)
		EXPECT(&w, j[i], XP_JS_RUNNING, XP_R_NONE, NULL);
	EXPECT(&w, j[4], XP_JS_PENDING, XP_R_RESOURCES, "0/4 nodes fit: 4 ");
	ck_assert_uint_eq(J(&w, j[4])->pos_queue, 1);
	ck_assert_uint_eq(J(&w, j[4])->pos_global, 1);
	/* 8 devices of class h100 per running job: 32 of 32 used. */
	ck_assert_int_eq(xp_sched_used(w.s, 0, 0, XP_RES_DEVICES), 32000);
	ck_assert_int_eq(xp_sched_capacity(w.s, 0, XP_RES_DEVICES), 32000);
	ck_assert_int_eq(xp_sched_device_class(w.s, 0, 0), 0);
	w_finish(&w, j[0], 50);
	ck_assert_int_eq(w_pass(&w, 50), 1);
	EXPECT(&w, j[4], XP_JS_RUNNING, XP_R_NONE, NULL);
	/* pack: job 1 took n0 (equal scores go to the first name), and n0 is the node freed. */
	ck_assert_uint_eq(J(&w, j[4])->alloc.slots[0].node_ix, 0);
	ck_assert_int_eq(J(&w, j[4])->start, 50);
	ck_assert_int_eq(J(&w, j[0])->end, 50);
	ck_assert_ptr_nonnull(strstr(w.log, "1:-" ">pending 2:-" ">pending"));
	ck_assert_ptr_nonnull(strstr(w.log, "1:pending>admitted 1:admitted>running"));
	ck_assert_ptr_nonnull(strstr(w.log, "1:running>completed 5:pending>admitted 5:admitted>running"));
	w_free(&w);
}
END_TEST

/* Rule: priority desc before submit asc inside a queue. One node of 8; job A (prio 0, submit
 * 0) and B (prio 5, submit 1) each of 8 devices: B goes first though submitted later; A waits
 * (Resources), position 1. Hold A: Held "held by user", no position, not counted among the
 * queue's pending; release: pending again with the same submit time; cancel the running B:
 * its devices come free and A starts in the next pass. */
START_TEST(priority_hold_release_cancel)
{
	struct world w = {0};
	w_nodes(&w, 1, 8, NULL);
	w_class(&w, "h100", "NVIDIA", "*H100*", NULL);
	w_queue(&w, "a", NULL, 1);
	w_start(&w, NULL);
	size_t a = w_job(&w, "a", 0, 0, 100, "{\"devices\": 8}");
	size_t b = w_job(&w, "a", 5, 1, 100, "{\"devices\": 8}");
	ck_assert_int_eq(w_pass(&w, 2), 1);
	EXPECT(&w, b, XP_JS_RUNNING, XP_R_NONE, NULL);
	EXPECT(&w, a, XP_JS_PENDING, XP_R_RESOURCES, "0/1 nodes fit");
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_sched_hold(w.s, a, 3, &err), 0);
	w_check(&w);
	EXPECT(&w, a, XP_JS_HELD, XP_R_HELD, "held by user");
	ck_assert_uint_eq(J(&w, a)->pos_queue, 0);
	ck_assert_int_eq(xp_sched_hold(w.s, a, 3, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "held"));
	ck_assert_int_eq(w_pass(&w, 4), 0);
	EXPECT(&w, a, XP_JS_HELD, XP_R_HELD, "held by user");
	ck_assert_int_eq(xp_sched_release(w.s, a, 5, &err), 0);
	w_check(&w);
	ck_assert_int_eq(J(&w, a)->submit, 0);
	ck_assert_int_eq(w_pass(&w, 6), 0);
	EXPECT(&w, a, XP_JS_PENDING, XP_R_RESOURCES, "0/1 nodes fit");
	ck_assert_int_eq(xp_sched_cancel(w.s, b, 7, &err), 0);
	w_check(&w);
	ck_assert_int_eq(J(&w, b)->state, XP_JS_CANCELLED);
	ck_assert_int_eq(xp_sched_used(w.s, 0, 0, XP_RES_DEVICES), 0);
	ck_assert_int_eq(xp_sched_cancel(w.s, b, 7, &err), -1);
	ck_assert_int_eq(w_pass(&w, 8), 1);
	EXPECT(&w, a, XP_JS_RUNNING, XP_R_NONE, NULL);
	ck_assert_int_eq(xp_sched_finish(w.s, b, XP_JS_COMPLETED, 9, &err), -1);
	w_free(&w);
}
END_TEST

/* Rule: queues in order of weighted dominant share (used / capacity / weight, the largest over
 * class and resource), ties by queue priority desc then name. 16 devices on 2 nodes of 8;
 * queues a (weight 2) and b (weight 1), four 2-device jobs each (a: ids 1-4, b: 5-8). Shares
 * before each pick, by hand: a 0, b 0: tie, a by name -> a1 (a = 2/16/2 = .0625); b 0 -> b5
 * (b = 2/16/1 = .125); a .0625 -> a2 (.125); tie .125 -> a3 (.1875); b .125 -> b6 (.25);
 * a .1875 -> a4 (.25, a has no more); b7, b8. Starts: 1,5,2,3,6,4,7,8; after: a 8/16/2 = .25,
 * b 8/16/1 = .5. */
START_TEST(drf_order)
{
	struct world w = {0};
	w_nodes(&w, 2, 8, NULL);
	w_class(&w, "h100", "NVIDIA", "*H100*", NULL);
	w_queue(&w, "a", NULL, 2);
	w_queue(&w, "b", NULL, 1);
	w_start(&w, NULL);
	for (int i = 0; i < 4; i++)
		w_job(&w, "a", 0, i, 100, "{\"devices\": 2}");
	for (int i = 0; i < 4; i++)
		w_job(&w, "b", 0, i, 100, "{\"devices\": 2}");
	w.log[0] = 0;
	ck_assert_int_eq(w_pass(&w, 10), 8);
	/* ids: a's 1-4, b's 5-8 */
	char order[64] = "";
	for (const char *p = strstr(w.log, ":admitted>running"); p; p = strstr(p + 1, ":admitted>running")) {
		const char *q = p;
		while (q > w.log && q[-1] != ' ')
			q--;
		size_t len = strlen(order);
		snprintf(order + len, sizeof order - len, "%s%.*s", len ? "," : "", (int)(p - q), q);
	}
	ck_assert_str_eq(order, "1,5,2,3,6,4,7,8");
	/* Shares after: a 8/16/2 = 0.25, b 8/16/1 = 0.5. */
	ck_assert(xp_sched_share(w.s, 0) == 0.25);
	ck_assert(xp_sched_share(w.s, 1) == 0.5);
	w_free(&w);
}
END_TEST


/* Log of one job's transitions ("4:running>preempted 4:preempted>pending") present? */
static bool logged(const struct world *w, const char *words)
{
	return strstr(w->log, words) != NULL;
}

/* Rule (Volcano capability, Kueue nominal = max without a cohort; Slurm QOSGrpGRES): a queue
 * and its ancestors never use more than max. Queue a: h100 devices 0/16/16 on 32 devices;
 * three jobs of 8: 8 and 16 fit the max, the third would make 24 > 16: QuotaExceeded, the
 * numbers being used 16, limit 16, and 24 - 16 = 8 more needed. */
START_TEST(quota_exhaustion)
{
	struct world w = {0};
	w_nodes(&w, 4, 8, NULL);
	w_class(&w, "h100", "NVIDIA", "*H100*", NULL);
	w_queue(&w, "a", NULL, 1);
	w_quota(&w, "a", "h100", XP_RES_DEVICES, 0, 16, 16, -1, -1);
	w_start(&w, NULL);
	size_t j[3];
	for (int i = 0; i < 3; i++)
		j[i] = w_job(&w, "a", 0, i, 100, "{\"devices\": 8}");
	ck_assert_int_eq(w_pass(&w, 10), 2);
	EXPECT(&w, j[2], XP_JS_PENDING, XP_R_QUOTA, "h100 devices 16/16 used, 8 more needed");
	ck_assert_str_eq(J(&w, j[2])->reason_text, "h100 devices 16/16 used, 8 more needed");
	/* A parent's max binds its children too: p max 8, child c deserved/max 16: the second
	 * job of 8 would make p 16 > 8. */
	struct world v = {0};
	w_nodes(&v, 4, 8, NULL);
	w_class(&v, "h100", "NVIDIA", "*H100*", NULL);
	w_queue(&v, "p", NULL, 1);
	w_queue(&v, "c", "p", 1);
	w_quota(&v, "p", "h100", XP_RES_DEVICES, 0, 8, 8, -1, -1);
	w_quota(&v, "c", "h100", XP_RES_DEVICES, 0, 16, 16, -1, -1);
	w_start(&v, NULL);
	w_job(&v, "c", 0, 0, 100, "{\"devices\": 8}");
	size_t k = w_job(&v, "c", 0, 1, 100, "{\"devices\": 8}");
	ck_assert_int_eq(w_pass(&v, 10), 1);
	EXPECT(&v, k, XP_JS_PENDING, XP_R_QUOTA, "queue p: h100 devices 8/8 used, 8 more needed");
	ck_assert_int_eq(xp_sched_used(v.s, 0, 0, XP_RES_DEVICES), 8000);
	w_free(&v);
	w_free(&w);
}
END_TEST

/* A cohort: parent c (no quota) over A and B, each h100 devices deserved 16 on 32 devices. */
static void cohort(struct world *w, double b_guar, double b_lend, double a_borrow)
{
	w_nodes(w, 4, 8, NULL);
	w_class(w, "h100", "NVIDIA", "*H100*", NULL);
	w_queue(w, "c", NULL, 1);
	w_queue(w, "A", "c", 1);
	struct xp_queue *b = w_queue(w, "B", "c", 1);
	b->reclaim = XP_QP_ANY;
	w_quota(w, "A", "h100", XP_RES_DEVICES, 0, 16, -1, a_borrow, -1);
	w_quota(w, "B", "h100", XP_RES_DEVICES, b_guar, 16, -1, -1, b_lend);
}

/* Rule (Kueue cluster_queue.md: a ClusterQueue may borrow its cohort's unused nominal quota
 * within borrowingLimit and the lenders' lendingLimit; reclaimWithinCohort Any: a queue under
 * its nominal quota takes back what was lent, evicting the borrower's workloads). A submits
 * four jobs of 8: 8, 16 within deserved; 24 and 32 borrow 8 and 16 of B's unused 16: all four
 * run, A uses 32 and borrows 16. B then submits one job of 8: the cluster is full; B stays
 * within its deserved 16 after it, so it reclaims from A (borrowing, reclaimable): A's jobs
 * all have priority 0 and started together, so the highest id goes first: job 4 alone frees
 * the 8 devices (minimal set: one). Job 4 goes running -> preempted -> pending and waits for
 * Resources; A uses 24, B 8. */
START_TEST(cohort_borrow_and_reclaim)
{
	struct world w = {0};
	cohort(&w, 0, -1, -1);
	w_start(&w, NULL);
	size_t a[4];
	for (int i = 0; i < 4; i++)
		a[i] = w_job(&w, "A", 0, i, 100, "{\"devices\": 8}");
	ck_assert_int_eq(w_pass(&w, 0), 4);
	ck_assert_int_eq(xp_sched_used(w.s, 1, 0, XP_RES_DEVICES), 32000);
	ck_assert_int_eq(xp_sched_used(w.s, 0, 0, XP_RES_DEVICES), 32000); /* the parent counts its children */
	size_t b = w_job(&w, "B", 0, 10, 100, "{\"devices\": 8}");
	w.log[0] = 0;
	ck_assert_int_eq(w_pass(&w, 10), 1);
	EXPECT(&w, b, XP_JS_RUNNING, XP_R_NONE, NULL);
	ck_assert_msg(logged(&w, "4:running>preempted 4:preempted>pending"), "%s", w.log);
	ck_assert_msg(!logged(&w, "3:running>preempted"), "%s", w.log);
	EXPECT(&w, a[3], XP_JS_PENDING, XP_R_RESOURCES, "0/4 nodes fit");
	ck_assert_int_eq(J(&w, a[3])->submit, 3);
	ck_assert_int_eq(J(&w, a[3])->preemptions, 1);
	ck_assert_int_eq(xp_sched_used(w.s, 1, 0, XP_RES_DEVICES), 24000);
	ck_assert_int_eq(xp_sched_used(w.s, 2, 0, XP_RES_DEVICES), 8000);
	w_free(&w);
}
END_TEST

/* Rule (Kueue lendingLimit; Volcano guarantee "reserved and not lent"): what B lends is
 * min(lending limit, deserved - guaranteed). With B's lending limit 4, A (jobs 8, 8, 4, 4)
 * runs 8 and 16 within deserved, borrows 4 for the third (20 - 16 = 4 <= 4), and the fourth
 * would borrow 8 > 4: QuotaExceeded, used 20 of 16 + 4, 24 - 20 = 4 more needed. B's
 * guarantee of 12 (deserved 16, nothing lent beyond 16 - 12 = 4) gives the same numbers.
 * A's own borrowing limit 2: the third job would borrow 4 > 2: QuotaExceeded used 16 of
 * 16 + 2, 20 - 18 = 2 more needed. */
START_TEST(cohort_lending_limits)
{
	for (int variant = 0; variant < 3; variant++) {
		struct world w = {0};
		cohort(&w, variant == 1 ? 12 : 0, variant == 0 ? 4 : -1, variant == 2 ? 2 : -1);
		w_start(&w, NULL);
		w_job(&w, "A", 0, 0, 100, "{\"devices\": 8}");
		w_job(&w, "A", 0, 1, 100, "{\"devices\": 8}");
		size_t j3 = w_job(&w, "A", 0, 2, 100, "{\"devices\": 4}");
		size_t j4 = w_job(&w, "A", 0, 3, 100, "{\"devices\": 4}");
		if (variant < 2) {
			ck_assert_int_eq(w_pass(&w, 10), 3);
			EXPECT(&w, j3, XP_JS_RUNNING, XP_R_NONE, NULL);
			EXPECT(&w, j4, XP_JS_PENDING, XP_R_QUOTA, NULL);
			ck_assert_str_eq(J(&w, j4)->reason_text,
					 "h100 devices 20/20 used (deserved 16, at most 4 borrowed in its cohort), 4 more needed");
		} else {
			ck_assert_int_eq(w_pass(&w, 10), 2);
			EXPECT(&w, j3, XP_JS_PENDING, XP_R_QUOTA, NULL);
			ck_assert_str_eq(J(&w, j3)->reason_text,
					 "h100 devices 16/18 used (deserved 16, borrowing limit 2), 2 more needed");
		}
		w_free(&w);
	}
}
END_TEST

/* The same rules with a larger last job, so that each number in the text is its own: with B's
 * lending limit 4, a fourth job of 8 would take A to 28 of 16 + 4: 8 more needed (not the 4 it
 * may borrow); with A's borrowing limit 2, a third job of 8 would take A to 24 of 16 + 2: 6 more
 * needed (not the limit 2). */
START_TEST(cohort_limits_numbers)
{
	for (int variant = 0; variant < 2; variant++) {
		struct world w = {0};
		cohort(&w, 0, variant == 0 ? 4 : -1, variant == 1 ? 2 : -1);
		w_start(&w, NULL);
		w_job(&w, "A", 0, 0, 100, "{\"devices\": 8}");
		w_job(&w, "A", 0, 1, 100, "{\"devices\": 8}");
		size_t j3 = w_job(&w, "A", 0, 2, 100, variant == 0 ? "{\"devices\": 4}" : "{\"devices\": 8}");
		size_t j4 = w_job(&w, "A", 0, 3, 100, "{\"devices\": 8}");
		w_pass(&w, 10);
		if (variant == 0)
			ck_assert_str_eq(J(&w, j4)->reason_text,
					 "h100 devices 20/20 used (deserved 16, at most 4 borrowed in its cohort), 8 more needed");
		else
			ck_assert_str_eq(J(&w, j3)->reason_text,
					 "h100 devices 16/18 used (deserved 16, borrowing limit 2), 6 more needed");
		w_free(&w);
	}
}
END_TEST

/* Rule (Kueue preemption: the borrowing workloads of other queues in the cohort are candidates
 * before the queue's own lower-priority ones; reclaimWithinCohort Any): A runs 24 (8 borrowed
 * from B), B runs one job of 8 at priority 0. B, within its deserved 16 and with both within =
 * lower-priority and reclaim = any, submits 8 at priority 3: the cluster (32) is full; taking
 * back what A borrowed (A's newest job) is enough, so B's own job keeps running: one victim. */
START_TEST(reclaim_before_within)
{
	struct world w = {0};
	cohort(&w, 0, -1, -1);
	xp_qset_queue(&w.qs, "B")->within = XP_QP_LOWER_PRIORITY;
	w_start(&w, NULL);
	size_t a1 = w_job(&w, "A", 0, 0, 100, "{\"devices\": 8}");
	size_t a2 = w_job(&w, "A", 0, 1, 100, "{\"devices\": 8}");
	size_t a3 = w_job(&w, "A", 0, 2, 100, "{\"devices\": 8}");
	size_t b1 = w_job(&w, "B", 0, 3, 100, "{\"devices\": 8}");
	ck_assert_int_eq(w_pass(&w, 5), 4);
	size_t b2 = w_job(&w, "B", 3, 6, 100, "{\"devices\": 8}");
	ck_assert_int_eq(w_pass(&w, 10), 1);
	EXPECT(&w, b2, XP_JS_RUNNING, XP_R_NONE, NULL);
	EXPECT(&w, b1, XP_JS_RUNNING, XP_R_NONE, NULL);
	EXPECT(&w, a3, XP_JS_PENDING, XP_R_RESOURCES, NULL); /* the cluster is full again */
	EXPECT(&w, a1, XP_JS_RUNNING, XP_R_NONE, NULL);
	EXPECT(&w, a2, XP_JS_RUNNING, XP_R_NONE, NULL);
	ck_assert_int_eq(J(&w, a3)->preemptions, 1);
	ck_assert_int_eq(J(&w, b1)->preemptions, 0);
	w_free(&w);
}
END_TEST

/* Rule (Kueue: a ClusterQueue outside any cohort cannot borrow; xpool's parent is the cohort):
 * a top-level queue with deserved 8 and max 16 runs one 8-device job; a second would take it to
 * 16 > 8 with nothing to borrow from: QuotaExceeded, 8/8 used, 8 more needed, and the text says
 * why the max above deserved does not help. */
START_TEST(top_level_no_cohort)
{
	struct world w = {0};
	w_nodes(&w, 4, 8, NULL);
	w_class(&w, "h100", "NVIDIA", "*H100*", NULL);
	w_queue(&w, "solo", NULL, 1);
	w_quota(&w, "solo", "h100", XP_RES_DEVICES, 0, 8, 16, -1, -1);
	w_start(&w, NULL);
	w_job(&w, "solo", 0, 0, 100, "{\"devices\": 8}");
	size_t j2 = w_job(&w, "solo", 0, 1, 100, "{\"devices\": 8}");
	ck_assert_int_eq(w_pass(&w, 10), 1);
	EXPECT(&w, j2, XP_JS_PENDING, XP_R_QUOTA, NULL);
	ck_assert_str_eq(J(&w, j2)->reason_text, "h100 devices 8/8 used (deserved 8; a queue without a parent has no "
						  "cohort to borrow from), 8 more needed");
	/* A job of 10 (2 x 5): its max of 16 would take 2 more, but deserved binds: 10 more. */
	size_t j3 = w_job(&w, "solo", 0, 2, 100, "{\"devices\": 5, \"replicas\": 2}");
	w_pass(&w, 11);
	ck_assert_str_eq(J(&w, j3)->reason_text, "h100 devices 8/8 used (deserved 8; a queue without a parent has no "
						  "cohort to borrow from), 10 more needed");
	w_free(&w);
}
END_TEST

/* Rule (Kueue withinClusterQueue LowerPriority, preemption.md: the minimal set of lower
 * priority workloads, the most recently started first). Four prio-0 jobs of 8 fill 32
 * devices, started at t=0,1,2,3 (ids 1-4); a prio-10 job of 8 arrives at t=20: it evicts only
 * job 4 (lowest priority, latest start; one frees a node) and starts on n3, job 4's node; job
 * 4 is pending again (Resources), its submit time kept. Under within=never the same job waits
 * with Priority, naming the one lower-priority job whose eviction would let it start. */
START_TEST(priority_preemption)
{
	for (int never = 0; never < 2; never++) {
		struct world w = {0};
		w_nodes(&w, 4, 8, NULL);
		w_class(&w, "h100", "NVIDIA", "*H100*", NULL);
		struct xp_queue *q = w_queue(&w, "a", NULL, 1);
		q->within = never ? XP_QP_NEVER : XP_QP_LOWER_PRIORITY;
		w_start(&w, NULL);
		size_t j[4];
		for (int i = 0; i < 4; i++) {
			j[i] = w_job(&w, "a", 0, i, 100, "{\"devices\": 8}");
			ck_assert_int_eq(w_pass(&w, i), 1);
		}
		size_t hi = w_job(&w, "a", 10, 20, 100, "{\"devices\": 8}");
		w.log[0] = 0;
		if (!never) {
			ck_assert_int_eq(w_pass(&w, 20), 1);
			EXPECT(&w, hi, XP_JS_RUNNING, XP_R_NONE, NULL);
			ck_assert_uint_eq(J(&w, hi)->alloc.slots[0].node_ix, 3);
			ck_assert_msg(logged(&w, "4:running>preempted 4:preempted>pending"), "%s", w.log);
			for (int i = 0; i < 3; i++)
				EXPECT(&w, j[i], XP_JS_RUNNING, XP_R_NONE, NULL);
			EXPECT(&w, j[3], XP_JS_PENDING, XP_R_RESOURCES, "0/4 nodes fit");
			ck_assert_int_eq(J(&w, j[3])->submit, 3);
			ck_assert_int_eq(J(&w, j[3])->start, -1);
		} else {
			ck_assert_int_eq(w_pass(&w, 20), 0);
			EXPECT(&w, hi, XP_JS_PENDING, XP_R_PRIORITY, NULL);
			ck_assert_str_eq(J(&w, hi)->reason_text, "1 running job of lower priority in queue a holds what it "
								 "needs (preemption within the queue: never)");
			ck_assert_str_eq(w.log, "");
		}
		w_free(&w);
	}
}
END_TEST

/* Rule: EASY backfill (Mu'alem and Feitelson; Slurm's backfill for its first blocked job).
 * 4 nodes of 8. At t=0 jobs 1-3 (8 devices each, estimates 10, 20, 30) take n0, n1, n2. At
 * t=1 the head job 4 asks for 4 replicas of 8 (the whole cluster): only n3 is free, 1 of 4
 * replicas fit, so it waits (GangIncomplete). Its reservation: release the running jobs by
 * estimated end, 10 (16 free), 20 (24), 30 (32 free: it places): shadow time T = 30, reserved
 * slots R = all 32 devices. Job 5 (1 device, estimate 5): 1 + 5 = 6 <= 30, it backfills (on
 * n3, the only free node). Job 6 (1 device, estimate 100): 101 > 30 and every free device is
 * in R: it would delay job 4: Priority "would delay job 4 (reserved start t=30s)". After each
 * step the shadow time worked out again stays <= 30 (xp_sched_check, invariant e). At t=30,
 * with jobs 1-3 and 5 ended, job 4 starts on all four nodes and job 6 waits for Resources. */
START_TEST(easy_backfill)
{
	struct world w = {0};
	w_nodes(&w, 4, 8, NULL);
	w_class(&w, "h100", "NVIDIA", "*H100*", NULL);
	w_queue(&w, "a", NULL, 1);
	w_start(&w, NULL);
	size_t r1 = w_job(&w, "a", 0, 0, 10, "{\"devices\": 8}");
	size_t r2 = w_job(&w, "a", 0, 0, 20, "{\"devices\": 8}");
	size_t r3 = w_job(&w, "a", 0, 0, 30, "{\"devices\": 8}");
	ck_assert_int_eq(w_pass(&w, 0), 3);
	size_t h = w_job(&w, "a", 0, 1, 50, "{\"devices\": 8, \"replicas\": 4}");
	size_t b1 = w_job(&w, "a", 0, 1, 5, "{\"devices\": 1}");
	size_t b2 = w_job(&w, "a", 0, 1, 100, "{\"devices\": 1}");
	ck_assert_int_eq(w_pass(&w, 1), 1);
	EXPECT(&w, h, XP_JS_PENDING, XP_R_GANG, "1 of 4 replicas fit (gang minimum 4)");
	size_t head = 99;
	ck_assert_int_eq(xp_sched_shadow(w.s, &head), 30);
	ck_assert_uint_eq(head, h);
	EXPECT(&w, b1, XP_JS_RUNNING, XP_R_NONE, NULL);
	ck_assert_uint_eq(J(&w, b1)->alloc.slots[0].node_ix, 3);
	EXPECT(&w, b2, XP_JS_PENDING, XP_R_PRIORITY, NULL);
	ck_assert_str_eq(J(&w, b2)->reason_text, "would delay job 4 (reserved start t=30s)");
	ck_assert_uint_eq(J(&w, b2)->pos_queue, 2);
	ck_assert_uint_eq(J(&w, h)->pos_queue, 1);
	w_finish(&w, b1, 6);
	ck_assert_int_eq(w_pass(&w, 6), 0);
	EXPECT(&w, b2, XP_JS_PENDING, XP_R_PRIORITY, "would delay job 4 (reserved start t=30s)");
	w_finish(&w, r1, 10);
	ck_assert_int_eq(w_pass(&w, 10), 0);
	ck_assert_int_eq(xp_sched_shadow(w.s, NULL), 30);
	w_finish(&w, r2, 20);
	ck_assert_int_eq(w_pass(&w, 20), 0);
	w_finish(&w, r3, 30);
	ck_assert_int_eq(w_pass(&w, 30), 1);
	EXPECT(&w, h, XP_JS_RUNNING, XP_R_NONE, NULL);
	ck_assert_uint_eq(J(&w, h)->alloc.n, 32);
	EXPECT(&w, b2, XP_JS_PENDING, XP_R_RESOURCES, "0/4 nodes fit");
	w_free(&w);
	/* Without backfill the head stops everything behind it (strict order). */
	struct world v = {0};
	w_nodes(&v, 4, 8, NULL);
	w_queue(&v, "a", NULL, 1);
	w_start(&v, &(struct xp_sched_opts){.no_backfill = true});
	for (int i = 0; i < 3; i++)
		w_job(&v, "a", 0, 0, 10 * (i + 1), "{\"devices\": 8}");
	ck_assert_int_eq(w_pass(&v, 0), 3);
	w_job(&v, "a", 0, 1, 50, "{\"devices\": 8, \"replicas\": 4}");
	size_t c1 = w_job(&v, "a", 0, 1, 5, "{\"devices\": 1}");
	ck_assert_int_eq(w_pass(&v, 1), 0);
	EXPECT(&v, c1, XP_JS_PENDING, XP_R_PRIORITY, "behind job 4 (no backfill)");
	ck_assert_int_eq(xp_sched_shadow(v.s, NULL), -1);
	w_free(&v);
}
END_TEST

/* Rule: gang admission is the placement engine's (all replicas, or at least gang_min).
 * 4 nodes of 8, jobs 1-2 (8 devices) hold n0 and n1: a gang of 4 x 8 gets 2 of 4 replicas
 * (n2, n3): GangIncomplete "2 of 4 replicas fit (gang minimum 4)". With gang_min 2 the same
 * shape starts with its 2 replicas on n2 and n3 (16 devices). */
START_TEST(gang)
{
	struct world w = {0};
	w_nodes(&w, 4, 8, NULL);
	w_class(&w, "h100", "NVIDIA", "*H100*", NULL);
	w_queue(&w, "a", NULL, 1);
	w_start(&w, NULL);
	w_job(&w, "a", 0, 0, 100, "{\"devices\": 8}");
	w_job(&w, "a", 0, 0, 100, "{\"devices\": 8}");
	ck_assert_int_eq(w_pass(&w, 0), 2);
	size_t g = w_job(&w, "a", 0, 1, 100, "{\"devices\": 8, \"replicas\": 4}");
	ck_assert_int_eq(w_pass(&w, 1), 0);
	EXPECT(&w, g, XP_JS_PENDING, XP_R_GANG, "2 of 4 replicas fit (gang minimum 4); for the next, 0/4 nodes fit");
	size_t g2 = w_job(&w, "a", 5, 2, 100, "{\"devices\": 8, \"replicas\": 4, \"gang_min\": 2}");
	ck_assert_int_eq(w_pass(&w, 2), 1);
	EXPECT(&w, g2, XP_JS_RUNNING, XP_R_NONE, NULL);
	ck_assert_uint_eq(J(&w, g2)->alloc.n, 16);
	ck_assert_int_eq(xp_sched_used(w.s, 0, 0, XP_RES_DEVICES), 32000);
	w_free(&w);
}
END_TEST

static int no_validation(void *ctx, const struct xp_device *d, const char *kase)
{
	(void)ctx;
	(void)d;
	(void)kase;
	return -1;
}

/* One job per reason code, golden text, on 2 nodes of 8 (queue a open, b on hold, c draining):
 * 1 Resources: a 16-device job while 8 are busy: 0/2 nodes... its replica asks 8 on one node,
 *   so job 2 (8) fits n1 and job 3 (8) finds none: "0/2 nodes fit: 2 ..."
 * 2 Priority: a strict queue's later job: "behind job N"
 * 3 QuotaExceeded: queue q max 1 device, a 2-device job: "h100 devices 0/1 used, 1 more needed"
 * 4 GangIncomplete: 3 replicas of 8 on 2 nodes: "2 of 3 replicas fit (gang minimum 3)" (idle)
 *   ... that fits nowhere even idle: AffinityUnsatisfiable wins; so 2 x 8 while one node is busy
 * 5 NotValidated: validated layer asked, an empty matrix: the placement's top reason
 * 6 AffinityUnsatisfiable: a label no node has: "fits nowhere even with every job gone"
 * 7 Held: "held by user"
 * 8 QueueInactive: "queue b is on hold", "queue c is draining" (c's running job is evicted). */
START_TEST(reasons_golden)
{
	struct world w = {0};
	w_nodes(&w, 2, 8, NULL);
	w_class(&w, "h100", "NVIDIA", "*H100*", NULL);
	w_queue(&w, "a", NULL, 1);
	w_queue(&w, "b", NULL, 1);
	w_queue(&w, "c", NULL, 1);
	w_queue(&w, "q", NULL, 1);
	w_queue(&w, "s", NULL, 1)->order = XP_QO_STRICT;
	w_quota(&w, "q", "h100", XP_RES_DEVICES, 0, 1, 1, -1, -1);
	w_start(&w, NULL);
	xp_sched_set_validation(w.s, no_validation, NULL);
	size_t busy = w_job(&w, "c", 0, 0, 1000, "{\"devices\": 8}");
	ck_assert_int_eq(w_pass(&w, 0), 1);
	/* from now on c drains and b holds */
	xp_qset_queue(&w.qs, "b")->state = XP_QS_HOLD;
	xp_qset_queue(&w.qs, "c")->state = XP_QS_DRAIN;
	size_t strict1 = w_job(&w, "s", 0, 1, 100, "{\"devices\": 8, \"replicas\": 3}");
	size_t strict2 = w_job(&w, "s", 0, 2, 100, "{\"devices\": 1}");
	size_t quota = w_job(&w, "q", 0, 1, 100, "{\"devices\": 2}");
	size_t valid = w_job(&w, "a", 0, 1, 100, "{\"devices\": 1, \"validated\": {\"layer\": \"schedulable\"}}");
	size_t aff = w_job(&w, "a", 0, 2, 100, "{\"devices\": 1, \"labels\": {\"pool\": \"nowhere\"}}");
	size_t held = w_job(&w, "a", 0, 3, 100, "{\"devices\": 1}");
	size_t onhold = w_job(&w, "b", 0, 1, 100, "{\"devices\": 1}");
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_sched_hold(w.s, held, 4, &err), 0);
	w.log[0] = 0;
	/* The drain evicts job 1 (c's), so both nodes are free: the 3-replica gang fits nowhere
	 * even idle (AffinityUnsatisfiable) and the strict queue's next job stops behind it. */
	ck_assert_int_eq(w_pass(&w, 5), 0);
	ck_assert_msg(logged(&w, "1:running>preempted 1:preempted>pending"), "%s", w.log);
	EXPECT(&w, busy, XP_JS_PENDING, XP_R_QUEUE_INACTIVE, NULL);
	ck_assert_str_eq(J(&w, busy)->reason_text, "queue c is draining");
	EXPECT(&w, onhold, XP_JS_PENDING, XP_R_QUEUE_INACTIVE, NULL);
	ck_assert_str_eq(J(&w, onhold)->reason_text, "queue b is on hold");
	EXPECT(&w, strict1, XP_JS_PENDING, XP_R_AFFINITY, "fits nowhere even with every job gone: only 2 of 3 replicas fit");
	EXPECT(&w, strict2, XP_JS_PENDING, XP_R_PRIORITY, NULL);
	ck_assert_str_eq(J(&w, strict2)->reason_text, "behind job 2");
	EXPECT(&w, quota, XP_JS_PENDING, XP_R_QUOTA, NULL);
	ck_assert_str_eq(J(&w, quota)->reason_text, "h100 devices 0/1 used, 1 more needed");
	EXPECT(&w, valid, XP_JS_PENDING, XP_R_NOT_VALIDATED, "0/2 nodes fit: 2 ");
	ck_assert_ptr_nonnull(strstr(J(&w, valid)->reason_text, "valid"));
	EXPECT(&w, aff, XP_JS_PENDING, XP_R_AFFINITY, "fits nowhere even with every job gone: 0/2 nodes fit: 2 ");
	EXPECT(&w, held, XP_JS_HELD, XP_R_HELD, NULL);
	ck_assert_str_eq(J(&w, held)->reason_text, "held by user");
	/* Resources and GangIncomplete: queue a, both nodes now taken by two 8-device jobs of a
	 * higher priority... one node busy: a 16-device gang gets 1 of 2; an 8-device job none. */
	size_t big = w_job(&w, "a", 9, 6, 100, "{\"devices\": 8}");
	ck_assert_int_eq(w_pass(&w, 6), 1);
	EXPECT(&w, big, XP_JS_RUNNING, XP_R_NONE, NULL);
	size_t big2 = w_job(&w, "a", 9, 7, 100, "{\"devices\": 8}");
	ck_assert_int_eq(w_pass(&w, 7), 1);
	EXPECT(&w, big2, XP_JS_RUNNING, XP_R_NONE, NULL);
	size_t res = w_job(&w, "a", 8, 8, 100, "{\"devices\": 8}");
	ck_assert_int_eq(w_pass(&w, 8), 0);
	EXPECT(&w, res, XP_JS_PENDING, XP_R_RESOURCES, "0/2 nodes fit: 2 ");
	w_finish(&w, big2, 9);
	size_t gang2 = w_job(&w, "a", 9, 9, 100, "{\"devices\": 8, \"replicas\": 2}");
	ck_assert_int_eq(w_pass(&w, 9), 0);
	EXPECT(&w, gang2, XP_JS_PENDING, XP_R_GANG, "1 of 2 replicas fit (gang minimum 2)");
	w_free(&w);
}
END_TEST

/* Rule: a drained node takes nothing new and its running jobs finish; a failed device takes
 * nothing new and its job fails at once. 2 nodes of 8: job 1 (8) runs on n0; drain n0: the
 * capacity of class h100 drops to 8 devices, job 1 keeps running; job 2 (8) takes n1; job 3
 * (1) finds nothing (n0 drained, n1 full). Fail device 3 of n1: job 2 fails there and then;
 * n1 has 7 usable devices, job 3 (1 device) starts on one of them, never device 3; capacity 7. */
START_TEST(drain_and_fail_device)
{
	struct world w = {0};
	w_nodes(&w, 2, 8, NULL);
	w_class(&w, "h100", "NVIDIA", "*H100*", NULL);
	w_queue(&w, "a", NULL, 1);
	w_start(&w, NULL);
	size_t j1 = w_job(&w, "a", 0, 0, 100, "{\"devices\": 8}");
	ck_assert_int_eq(w_pass(&w, 0), 1);
	ck_assert_uint_eq(J(&w, j1)->alloc.slots[0].node_ix, 0);
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_sched_drain(w.s, 0, &err), 0);
	w_check(&w);
	ck_assert_int_eq(xp_sched_capacity(w.s, 0, XP_RES_DEVICES), 8000);
	EXPECT(&w, j1, XP_JS_RUNNING, XP_R_NONE, NULL);
	size_t j2 = w_job(&w, "a", 0, 1, 100, "{\"devices\": 8}");
	size_t j3 = w_job(&w, "a", 0, 2, 100, "{\"devices\": 1}");
	ck_assert_int_eq(w_pass(&w, 1), 1);
	EXPECT(&w, j2, XP_JS_RUNNING, XP_R_NONE, NULL);
	EXPECT(&w, j3, XP_JS_PENDING, XP_R_RESOURCES, "0/2 nodes fit");
	w_finish(&w, j1, 2);
	ck_assert_int_eq(w_pass(&w, 2), 0); /* n0 drained: still nothing for job 3 */
	EXPECT(&w, j3, XP_JS_PENDING, XP_R_RESOURCES, "0/2 nodes fit");
	ck_assert_int_eq(xp_sched_fail_device(w.s, 1, 3, 3, &err), 0);
	w_check(&w);
	ck_assert_int_eq(J(&w, j2)->state, XP_JS_FAILED);
	ck_assert_int_eq(J(&w, j2)->end, 3);
	ck_assert_int_eq(xp_sched_capacity(w.s, 0, XP_RES_DEVICES), 7000);
	ck_assert_int_eq(w_pass(&w, 3), 1);
	EXPECT(&w, j3, XP_JS_RUNNING, XP_R_NONE, NULL);
	ck_assert_uint_eq(J(&w, j3)->alloc.slots[0].node_ix, 1);
	ck_assert_uint_ne(J(&w, j3)->alloc.slots[0].pos, 3);
	w_free(&w);
}
END_TEST

/* Rule: weighted DRF (Volcano drf, hierarchical queues): the free devices go to the queue of
 * the lowest used / capacity / weight. Queues a (weight 2) and b (weight 1), no quotas, 30
 * devices (5 nodes of 6); 2,000 jobs of 1 device in each, all submitted at t=0, running
 * 5 to 50 s (estimates = run times). Whenever a device frees, the queue furthest below its
 * weighted share gets it, so a holds two devices for each of b's: 20 and 10 of 30. Measured
 * as the time-averaged usage from t=200 (warm-up) until a queue runs out of jobs, the ratio
 * must be 2.0 +- 0.1. A simple event loop: finish what ends next, then one pass. */
START_TEST(fair_share_converges)
{
	/* Variant 1: no class defined (a trace's, a new store's): the devices' model is a class of
	 * its own for the shares (index 0 here), and the answer is the same. */
	for (int variant = 0; variant < 2; variant++) {
		struct world w = {0};
		w_nodes(&w, 5, 6, NULL);
		if (variant == 0)
			w_class(&w, "h100", "NVIDIA", "*H100*", NULL);
		w_queue(&w, "a", NULL, 2);
		w_queue(&w, "b", NULL, 1);
		w_start(&w, &(struct xp_sched_opts){.skip_tail = true});
		xp_sched_listen(w.s, NULL, NULL);
		enum { PER = 2000 };
		int64_t *dur = malloc(2 * PER * sizeof *dur);
		for (int k = 0; k < 2 * PER; k++) {
			dur[k] = 5 + (k * 37) % 46;
			struct xp_err err = {{0}};
			struct xp_qjob j = {.id = k + 1, .queue = xp_strdup(k % 2 ? "b" : "a"), .submit = 0, .est_s = dur[k],
					    .actual_s = -1, .start = -1, .end = -1, .state = XP_JS_PENDING};
			j.spec = xp_job_parse("{\"devices\": 1}", 14, NULL, &err);
			ck_assert_int_ge(xp_sched_add(w.s, &j, &err), 0);
		}
		int64_t t = 0;
		double ua = 0, ub = 0;
		size_t left[2] = {PER, PER};
		w_pass(&w, 0);
		for (int step = 0; left[0] && left[1]; step++) {
			int64_t next = INT64_MAX;
			left[0] = left[1] = 0;
			for (size_t i = 0; i < xp_sched_count(w.s); i++) {
				const struct xp_qjob *j = J(&w, i);
				if (j->state == XP_JS_RUNNING && j->start + j->est_s < next)
					next = j->start + j->est_s;
				if (j->state == XP_JS_PENDING)
					left[j->queue[0] == 'b']++;
			}
			ck_assert(next != INT64_MAX);
			if (t >= 200) {
				ua += (double)xp_sched_used(w.s, 0, 0, XP_RES_DEVICES) * (double)(next - t);
				ub += (double)xp_sched_used(w.s, 1, 0, XP_RES_DEVICES) * (double)(next - t);
			}
			t = next;
			for (size_t i = 0; i < xp_sched_count(w.s); i++) {
				const struct xp_qjob *j = J(&w, i);
				if (j->state == XP_JS_RUNNING && j->start + j->est_s == t) {
					struct xp_err err = {{0}};
					ck_assert_int_eq(xp_sched_finish(w.s, i, XP_JS_COMPLETED, t, &err), 0);
				}
			}
			struct xp_err err = {{0}};
			ck_assert_int_ge(xp_sched_pass(w.s, t, &err), 0);
			if (step % 97 == 0)
				w_check(&w);
		}
		ck_assert_msg(t > 1000, "ran until t=%lld", (long long)t);
		double ratio = ua / ub;
		ck_assert_msg(ratio > 1.9 && ratio < 2.1, "variant %d: usage ratio a:b = %.3f", variant, ratio);
		free(dur);
		w_free(&w);
	}
}
END_TEST

/* A job added as running (a store's) keeps its slots: 8 devices of n0 committed as they are,
 * charged 8 devices of class h100; a second one on the same devices, an unknown queue, or a
 * tenant the queue does not take is refused with words, and nothing is kept. */
START_TEST(add_running_and_refusals)
{
	struct world w = {0};
	w_nodes(&w, 2, 8, NULL);
	w_class(&w, "h100", "NVIDIA", "*H100*", NULL);
	w_queue(&w, "a", NULL, 1);
	struct xp_queue *t = w_queue(&w, "t", NULL, 1);
	t->tenants = xp_calloc(1, sizeof *t->tenants);
	t->tenants[0] = xp_strdup("alice");
	t->n_tenants = 1;
	w_start(&w, NULL);
	for (int round = 0; round < 2; round++) {
		struct xp_err err = {{0}};
		struct xp_qjob j = {.id = 100 + round, .queue = xp_strdup("a"), .submit = 0, .est_s = 50, .actual_s = -1,
				    .start = 5, .end = -1, .state = XP_JS_RUNNING};
		j.spec = xp_job_parse("{\"devices\": 8}", 14, NULL, &err);
		j.alloc.slots = xp_calloc(8, sizeof *j.alloc.slots);
		j.alloc.n = 8;
		for (int k = 0; k < 8; k++)
			j.alloc.slots[k] = (struct xp_qslot){.node_ix = 0, .pos = (uint16_t)k, .take = 1000};
		int64_t i = xp_sched_add(w.s, &j, &err);
		if (round == 0) {
			ck_assert_msg(i == 0, "%s", err.msg);
			EXPECT(&w, 0, XP_JS_RUNNING, XP_R_NONE, NULL);
			ck_assert_int_eq(xp_sched_used(w.s, 0, 0, XP_RES_DEVICES), 8000);
		} else {
			ck_assert_int_eq(i, -1);
			ck_assert_msg(strstr(err.msg, "already full"), "%s", err.msg);
			ck_assert_ptr_null(j.spec);
		}
		w_check(&w);
	}
	struct xp_err err = {{0}};
	struct xp_qjob j = {.id = 7, .queue = xp_strdup("nope"), .est_s = 1, .state = XP_JS_PENDING};
	j.spec = xp_job_parse("{\"devices\": 1}", 14, NULL, &err);
	ck_assert_int_eq(xp_sched_add(w.s, &j, &err), -1);
	ck_assert_msg(strstr(err.msg, "no queue 'nope'"), "%s", err.msg);
	struct xp_qjob k = {.id = 8, .queue = xp_strdup("t"), .tenant = xp_strdup("bob"), .est_s = 1,
			    .state = XP_JS_PENDING};
	k.spec = xp_job_parse("{\"devices\": 1}", 14, NULL, &err);
	ck_assert_int_eq(xp_sched_add(w.s, &k, &err), -1);
	ck_assert_msg(strstr(err.msg, "does not take tenant 'bob'"), "%s", err.msg);
	ck_assert_uint_eq(xp_sched_count(w.s), 1);
	/* The running job's devices are taken: an 8-device job goes to n1. */
	size_t n = w_job(&w, "a", 0, 6, 10, "{\"devices\": 8}");
	ck_assert_int_eq(w_pass(&w, 6), 1);
	ck_assert_uint_eq(J(&w, n)->alloc.slots[0].node_ix, 1);
	w_free(&w);
}
END_TEST

/* Determinism: the same jobs and times give the same transitions, word for word (no clock,
 * no hash order): the backfill scenario run twice. */
static void replay(struct world *w)
{
	w_nodes(w, 4, 8, NULL);
	w_class(w, "h100", "NVIDIA", "*H100*", NULL);
	w_queue(w, "a", NULL, 2);
	w_queue(w, "b", NULL, 1);
	w_start(w, NULL);
	for (int i = 0; i < 12; i++)
		w_job(w, i % 2 ? "a" : "b", i % 3, i, 5 + i * 7 % 13, i % 4 ? "{\"devices\": 4}" : "{\"devices\": 8, \"replicas\": 2}");
	for (int64_t t = 0; t < 80; t += 5) {
		for (size_t i = 0; i < xp_sched_count(w->s); i++)
			if (J(w, i)->state == XP_JS_RUNNING && J(w, i)->start + J(w, i)->est_s <= t)
				w_finish(w, i, t);
		w_pass(w, t);
	}
}

START_TEST(deterministic)
{
	struct world a = {0}, b = {0};
	replay(&a);
	replay(&b);
	ck_assert_str_eq(a.log, b.log);
	ck_assert_ptr_nonnull(strstr(a.log, "running>completed"));
	w_free(&a);
	w_free(&b);
}
END_TEST

/* Rule: DRF recursively over the tree: top-level p (weight 1, children x weight 1 and y weight
 * 3) against z (weight 1); 16 devices, 8 one-device jobs in each leaf (x: ids 1-8, y: 9-16,
 * z: 17-24). Each pick, by hand (shares over 16 devices; ties by name):
 * p 0 = z 0 -> p: x 0 = y 0 -> x1; z -> z1; p 1 = z 1 -> p: x 1/16 > y 0 -> y1; z2; tie -> p:
 * x 3/48 > y 1/48 -> y2; z3; tie -> y3 (x 3/48 > y 2/48); z4; tie -> p: x 3/48 = y 3/48 -> x2;
 * z5; p: x 6/48 > y 3/48 -> y4; z6; y5; z7; y6; z8: 16 devices, x 2 : y 6 = 1 : 3 inside p,
 * p 8 : z 8. */
START_TEST(drf_hierarchy)
{
	struct world w = {0};
	w_nodes(&w, 2, 8, NULL);
	w_class(&w, "h100", "NVIDIA", "*H100*", NULL);
	w_queue(&w, "p", NULL, 1);
	w_queue(&w, "x", "p", 1);
	w_queue(&w, "y", "p", 3);
	w_queue(&w, "z", NULL, 1);
	w_start(&w, NULL);
	const char *leaf[3] = {"x", "y", "z"};
	for (int q = 0; q < 3; q++)
		for (int i = 0; i < 8; i++)
			w_job(&w, leaf[q], 0, i, 100, "{\"devices\": 1}");
	w.log[0] = 0;
	ck_assert_int_eq(w_pass(&w, 10), 16);
	char order[160] = "";
	for (const char *p = strstr(w.log, ":admitted>running"); p; p = strstr(p + 1, ":admitted>running")) {
		const char *q = p;
		while (q > w.log && q[-1] != ' ')
			q--;
		size_t len = strlen(order);
		snprintf(order + len, sizeof order - len, "%s%.*s", len ? "," : "", (int)(p - q), q);
	}
	ck_assert_str_eq(order, "1,17,9,18,10,19,11,20,2,21,12,22,13,23,14,24");
	ck_assert_int_eq(xp_sched_used(w.s, 1, 0, XP_RES_DEVICES), 2000);
	ck_assert_int_eq(xp_sched_used(w.s, 2, 0, XP_RES_DEVICES), 6000);
	ck_assert_int_eq(xp_sched_used(w.s, 0, 0, XP_RES_DEVICES), 8000);
	ck_assert_int_eq(xp_sched_used(w.s, 3, 0, XP_RES_DEVICES), 8000);
	/* Positions of what waits: x's 6 jobs are 1..6 in x. */
	ck_assert_uint_eq(J(&w, 2)->pos_queue, 1);
	ck_assert_uint_eq(J(&w, 7)->pos_queue, 6);
	w_free(&w);
}
END_TEST

/* Rule (Kueue flavorFungibility TryNextFlavor; a device's class is the first class in creation
 * order that matches it): n0 has 8 H100 (class h100, created first), n1 8 A100 (class a100).
 * Queue a may use no h100 (max 0) and 8 a100. A job of 8 NVIDIA devices: pack's tie goes to n0
 * by name, its H100s would make h100 8 > 0; narrowed to class h100 the same; narrowed to a100
 * it places on n1 and 8 <= 8: it starts there, charged 8 a100 devices. A second such job:
 * a100 8 + 8 > 8 and h100 0 + 8 > 0: QuotaExceeded on the class it placed on first (h100). */
START_TEST(next_class_quota)
{
	struct world w = {0};
	w_nodes(&w, 1, 8, "H100 80GB HBM3");
	w_nodes(&w, 1, 8, "A100 80GB");
	w_class(&w, "h100", NULL, "*H100*", NULL);
	w_class(&w, "a100", NULL, "*A100*", NULL);
	w_queue(&w, "a", NULL, 1);
	w_quota(&w, "a", "h100", XP_RES_DEVICES, 0, 0, 0, -1, -1);
	w_quota(&w, "a", "a100", XP_RES_DEVICES, 0, 8, 8, -1, -1);
	w_start(&w, NULL);
	ck_assert_int_eq(xp_sched_device_class(w.s, 0, 0), 0);
	ck_assert_int_eq(xp_sched_device_class(w.s, 1, 7), 1);
	size_t j1 = w_job(&w, "a", 0, 0, 100, "{\"devices\": 8, \"vendor\": \"NVIDIA\"}");
	size_t j2 = w_job(&w, "a", 0, 1, 100, "{\"devices\": 8, \"vendor\": \"NVIDIA\"}");
	ck_assert_int_eq(w_pass(&w, 0), 1);
	EXPECT(&w, j1, XP_JS_RUNNING, XP_R_NONE, NULL);
	ck_assert_uint_eq(J(&w, j1)->alloc.slots[0].node_ix, 1);
	ck_assert_int_eq(xp_sched_used(w.s, 0, 1, XP_RES_DEVICES), 8000);
	ck_assert_int_eq(xp_sched_used(w.s, 0, 0, XP_RES_DEVICES), 0);
	EXPECT(&w, j2, XP_JS_PENDING, XP_R_QUOTA, NULL);
	ck_assert_str_eq(J(&w, j2)->reason_text, "h100 devices 0/0 used, 8 more needed");
	w_free(&w);
}
END_TEST

/* Rule: EASY lets a later job start when its devices avoid the reserved ones, wherever the
 * strategy would rather put it. Spread, 4 nodes of 8: job 1 (8 devices, estimate 10) on n0,
 * job 2 (4 devices, estimate 100) on n1. The head, 3 replicas of 8, finds 2 whole nodes (n2,
 * n3): GangIncomplete; at t=10 job 1 ends and n0, n2, n3 hold it: T = 10, R = n0, n2, n3.
 * Job 4 (2 devices, estimate 100 > 10): spread would take the emptiest node, n2 (in R); n1's
 * 4 free devices avoid R, so it starts there. Job 5 (8 devices, estimate 100): only R has 8
 * free on one node: would delay job 3. */
START_TEST(backfill_around_reservation)
{
	struct world w = {0};
	w_nodes(&w, 4, 8, NULL);
	w_class(&w, "h100", "NVIDIA", "*H100*", NULL);
	w_queue(&w, "a", NULL, 1);
	w_start(&w, &(struct xp_sched_opts){.strategy = XP_STRAT_SPREAD});
	size_t r1 = w_job(&w, "a", 0, 0, 10, "{\"devices\": 8}");
	size_t r2 = w_job(&w, "a", 0, 0, 100, "{\"devices\": 4}");
	ck_assert_int_eq(w_pass(&w, 0), 2);
	ck_assert_uint_eq(J(&w, r1)->alloc.slots[0].node_ix, 0);
	ck_assert_uint_eq(J(&w, r2)->alloc.slots[0].node_ix, 1);
	size_t h = w_job(&w, "a", 0, 1, 50, "{\"devices\": 8, \"replicas\": 3}");
	size_t b = w_job(&w, "a", 0, 1, 100, "{\"devices\": 2}");
	size_t c = w_job(&w, "a", 0, 1, 100, "{\"devices\": 8}");
	ck_assert_int_eq(w_pass(&w, 1), 1);
	EXPECT(&w, h, XP_JS_PENDING, XP_R_GANG, "2 of 3 replicas fit");
	ck_assert_int_eq(xp_sched_shadow(w.s, NULL), 10);
	EXPECT(&w, b, XP_JS_RUNNING, XP_R_NONE, NULL);
	ck_assert_uint_eq(J(&w, b)->alloc.slots[0].node_ix, 1);
	EXPECT(&w, c, XP_JS_PENDING, XP_R_PRIORITY, "would delay job 3 (reserved start t=10s)");
	w_free(&w);
}
END_TEST

/* A simulator's pass (skip_tail: quiet dry-runs, counting gates, refusals kept across releases
 * by count, early stops) starts the same jobs at the same times on the same devices as a full
 * pass of the same depth: those shortcuts only skip work whose answer is known. 60 jobs of
 * mixed shapes (1-8 devices, gangs of 2 x 8, a share) in two queues on 4 nodes of 8, run by
 * the same event loop both ways. */
static void mixed_run(struct world *w, bool sim, bool kinds)
{
	static const char *const shapes[] = {"{\"devices\": 1}", "{\"devices\": 2}", "{\"devices\": 4}",
					     "{\"devices\": 8}", "{\"devices\": 8, \"replicas\": 2}",
					     "{\"share_pct\": 50, \"devices\": 0}"};
	/* Kinds: the counting gate's cases (qcount.c): nodes of two models and jobs naming one, a
	 * node down and a failed device (placement never gives them: neither is idle to the
	 * counts), gangs of whole nodes, one that never fits (3 x 8 A100: two A100 nodes whole). */
	static const char *const kshapes[] = {"{\"devices\": 8, \"model\": \"A100*\"}",
					      "{\"devices\": 8, \"replicas\": 2, \"model\": \"*H100*\"}",
					      "{\"devices\": 4, \"model\": \"A100*\"}",
					      "{\"devices\": 2}",
					      "{\"devices\": 8, \"replicas\": 3, \"model\": \"A100*\"}",
					      "{\"devices\": 1, \"model\": \"*H100*\"}",
					      "{\"devices\": 8, \"replicas\": 2}"};
	if (kinds) {
		w_nodes(w, 3, 8, NULL);
		w_nodes(w, 3, 8, "A100 80GB");
		w->c->nodes[1]->state = XP_NODE_DOWN;
		w->c->nodes[4]->devices[2].health = XP_HEALTH_FAIL;
	} else
		w_nodes(w, 4, 8, NULL);
	w_class(w, "h100", "NVIDIA", "*H100*", NULL);
	w_queue(w, "a", NULL, 2);
	w_queue(w, "b", NULL, 1);
	w_start(w, &(struct xp_sched_opts){.skip_tail = sim, .depth = 1000});
	for (int i = 0; i < 60; i++)
		w_job(w, i % 3 ? "a" : "b", i % 4 == 0, i * 3, 10 + (i * 17) % 41,
		      kinds ? kshapes[(i * 5) % 7] : shapes[(i * 7) % 6]);
	w_run(w, 0, 2000, 3);
}

START_TEST(sim_pass_same_starts)
{
	for (int kinds = 0; kinds < 2; kinds++) {
		struct world a = {0}, b = {0};
		mixed_run(&a, false, kinds);
		mixed_run(&b, true, kinds);
		size_t done = 0, never = 0;
		for (size_t i = 0; i < xp_sched_count(a.s); i++) {
			const struct xp_qjob *x = J(&a, i), *y = J(&b, i);
			ck_assert_msg(x->state == y->state && x->start == y->start && x->end == y->end,
				      "kinds %d, job %lld: %s %lld-%lld vs %s %lld-%lld", kinds, (long long)x->id,
				      xp_jstate_name(x->state), (long long)x->start, (long long)x->end,
				      xp_jstate_name(y->state), (long long)y->start, (long long)y->end);
			done += x->state == XP_JS_COMPLETED;
			never += x->state == XP_JS_PENDING;
		}
		/* The never-started jobs' reasons, once explained, are a full pass's. */
		xp_sched_explain(b.s);
		for (size_t i = 0; i < xp_sched_count(a.s); i++) {
			const struct xp_qjob *x = J(&a, i), *y = J(&b, i);
			if (x->state == XP_JS_PENDING)
				ck_assert_msg(x->reason == y->reason && strcmp(x->reason_text, y->reason_text) == 0,
					      "kinds %d, job %lld: %s \"%s\" vs %s \"%s\"", kinds, (long long)x->id,
					      xp_reason_name(x->reason), x->reason_text, xp_reason_name(y->reason),
					      y->reason_text);
		}
		/* Kinds: the 3 x 8 A100 gangs (jobs 6, 13, ... 55: every 7th) never start. */
		ck_assert_uint_eq(done, (kinds ? 52 : 60));
		ck_assert_uint_eq(never, (kinds ? 8 : 0));
		w_free(&a);
		w_free(&b);
	}
}
END_TEST

/* Rule (within never): a job that would start by evicting lower-priority jobs of its queue
 * waits with Priority; one that would not, even with all of them gone, keeps its refusal. A
 * simulator's passes leave that check to xp_sched_explain, which asks only whether it would
 * (all candidates gone), not how many: the same reason codes, words without the count. 10
 * nodes of 8: three priority-20 jobs of 8 devices and one priority-0 job of 8 fill four nodes;
 * six priority-20 jobs of 5 devices leave 3 free on each of the other six (18 free, no node
 * with 8). Priority-10 jobs: G (2 replicas of 8) would get only the priority-0 job's node: 1
 * of 2 replicas, it stays refused (Resources: no replica fits now); O (8 devices) would start
 * there: Priority. */
/* Rule: a job that fits nowhere even on the idle cluster (AffinityUnsatisfiable) is never the
 * head, in either mode: the count gates answer only for shapes known to fit the idle cluster.
 * 4 nodes of 8: A (8 devices, ends 100), B (5, ends 1000) and C (5, ends 150) run; H (2 x 8)
 * waits, the head, reserved start 100; U asks 6 devices on a node labelled zone=x (none is)
 * and F (1 device) backfills. At 100 A ends and H starts; G (8 devices) is the next head,
 * reserved start 150 (C's end); K (3 devices, estimate 1000) would delay it and waits until G
 * has started. */
START_TEST(never_fits_is_not_head)
{
	for (int sim = 0; sim < 2; sim++) {
		struct world w = {0};
		w_nodes(&w, 4, 8, NULL);
		w_class(&w, "h100", "NVIDIA", "*H100*", NULL);
		w_queue(&w, "a", NULL, 1);
		w_start(&w, &(struct xp_sched_opts){.skip_tail = sim});
		size_t a = w_job(&w, "a", 0, 0, 100, "{\"devices\": 8}");
		w_job(&w, "a", 0, 1, 1000, "{\"devices\": 5}");
		w_job(&w, "a", 0, 2, 150, "{\"devices\": 5}");
		size_t h = w_job(&w, "a", 0, 3, 100, "{\"devices\": 8, \"replicas\": 2}");
		size_t u = w_job(&w, "a", 0, 4, 500, "{\"devices\": 6, \"labels\": {\"zone\": \"x\"}}");
		w_job(&w, "a", 0, 5, 1000, "{\"devices\": 1}");
		w_pass(&w, 0);
		EXPECT(&w, u, XP_JS_PENDING, XP_R_AFFINITY, NULL);
		w_finish(&w, a, 100);
		size_t g = w_job(&w, "a", 0, 6, 100, "{\"devices\": 8}");
		size_t k = w_job(&w, "a", 0, 7, 1000, "{\"devices\": 3}");
		w_pass(&w, 100);
		size_t hd;
		int64_t shadow = xp_sched_shadow(w.s, &hd);
		ck_assert_msg(shadow == 150 && hd == g, "sim %d: head %zu shadow %lld", sim, hd, (long long)shadow);
		w_run(&w, 101, 400, 1);
		if (sim)
			xp_sched_explain(w.s);
		ck_assert_int_eq(J(&w, h)->start, 100);
		ck_assert_int_eq(J(&w, g)->start, 150);
		ck_assert_int_eq(J(&w, k)->start, 200);
		EXPECT(&w, u, XP_JS_PENDING, XP_R_AFFINITY, NULL);
		w_free(&w);
	}
}
END_TEST

START_TEST(sim_probe_within_never)
{
	for (int sim = 0; sim < 2; sim++) {
		struct world w = {0};
		w_nodes(&w, 10, 8, NULL);
		w_class(&w, "h100", "NVIDIA", "*H100*", NULL);
		struct xp_queue *q = w_queue(&w, "a", NULL, 1);
		q->within = XP_QP_NEVER;
		w_start(&w, &(struct xp_sched_opts){.skip_tail = sim});
		int64_t t = 0;
		for (int i = 0; i < 4; i++, t++) {
			w_job(&w, "a", i == 3 ? 0 : 20, t, 100, "{\"devices\": 8}");
			ck_assert_int_eq(w_pass(&w, t), 1);
		}
		for (int i = 0; i < 6; i++, t++) {
			w_job(&w, "a", 20, t, 100, "{\"devices\": 5}");
			ck_assert_int_eq(w_pass(&w, t), 1);
		}
		size_t g = w_job(&w, "a", 10, 20, 100, "{\"devices\": 8, \"replicas\": 2}");
		size_t o = w_job(&w, "a", 10, 21, 100, "{\"devices\": 8}");
		ck_assert_int_eq(w_pass(&w, 21), 0);
		if (sim) {
			/* Before the explanation: refused for devices, as any job. */
			EXPECT(&w, o, XP_JS_PENDING, XP_R_RESOURCES, NULL);
			xp_sched_explain(w.s);
			w_check(&w);
		}
		EXPECT(&w, g, XP_JS_PENDING, XP_R_RESOURCES, NULL);
		EXPECT(&w, o, XP_JS_PENDING, XP_R_PRIORITY,
		       sim ? "running jobs of lower priority in queue a hold what it needs (preemption within the queue: "
			     "never)"
			   : "1 running job of lower priority in queue a holds what it needs (preemption within the "
			     "queue: never)");
		/* Kept answers: the same again with nothing changed. */
		ck_assert_int_eq(w_pass(&w, 22), 0);
		if (sim)
			xp_sched_explain(w.s);
		EXPECT(&w, g, XP_JS_PENDING, XP_R_RESOURCES, NULL);
		EXPECT(&w, o, XP_JS_PENDING, XP_R_PRIORITY, NULL);
		w_free(&w);
	}
}
END_TEST

/* Rule (EASY, within never): a job waiting with Priority because lower-priority jobs of its
 * queue hold its devices still waits for devices, so as the first such job it holds the
 * reservation: a later job that would end after the reserved start on those devices waits
 * ("would delay"); else backfill could keep the higher-priority job waiting for ever. One
 * node of 8: priority-0 A (4 devices, ends 100) and B (4, ends 1000) run; X (priority 10, 8)
 * waits. At 100 A ends: X is refused, Priority (B holds what it needs); its reserved start is
 * 1000; Y (priority 0, 4 devices, estimate 5000) would end at 5100 on X's devices: it waits.
 * Z (4 devices, estimate 800) ends by 1000: it starts. Both modes. */
START_TEST(held_back_job_reserves)
{
	for (int sim = 0; sim < 2; sim++) {
		struct world w = {0};
		w_nodes(&w, 1, 8, NULL);
		struct xp_queue *q = w_queue(&w, "a", NULL, 1);
		q->within = XP_QP_NEVER;
		w_start(&w, &(struct xp_sched_opts){.skip_tail = sim});
		size_t a = w_job(&w, "a", 0, 0, 100, "{\"devices\": 4}");
		w_job(&w, "a", 0, 0, 1000, "{\"devices\": 4}");
		ck_assert_int_eq(w_pass(&w, 0), 2);
		size_t x = w_job(&w, "a", 10, 10, 100, "{\"devices\": 8}");
		w_pass(&w, 10);
		w_finish(&w, a, 100);
		size_t y = w_job(&w, "a", 0, 100, 5000, "{\"devices\": 4}");
		ck_assert_int_eq(w_pass(&w, 100), 0);
		if (sim)
			xp_sched_explain(w.s);
		EXPECT(&w, x, XP_JS_PENDING, XP_R_PRIORITY, NULL);
		size_t head;
		int64_t shadow = xp_sched_shadow(w.s, &head);
		ck_assert_msg(shadow == 1000 && head == x, "sim %d: shadow %lld, head %zu", sim, (long long)shadow, head);
		EXPECT(&w, y, XP_JS_PENDING, XP_R_PRIORITY, "would delay job 3 (reserved start t=1000s)");
		size_t z = w_job(&w, "a", 0, 101, 800, "{\"devices\": 4}");
		ck_assert_int_eq(w_pass(&w, 101), 1);
		ck_assert_int_eq(J(&w, z)->state, XP_JS_RUNNING);
		ck_assert_int_eq(J(&w, y)->state, XP_JS_PENDING);
		w_free(&w);
	}
}
END_TEST

/* qjob.h's names both ways, as the store and the commands spell them; the reason numbers are
 * stable (1 Resources ... 8 QueueInactive); unknown names and values; final states. */
START_TEST(names_both_ways)
{
	static const char *const st[] = {"pending", "admitted", "running", "preempted",
					  "completed", "failed", "held", "cancelled"};
	for (int i = 0; i < XP_JS_COUNT; i++) {
		ck_assert_str_eq(xp_jstate_name(i), st[i]);
		ck_assert_int_eq(xp_jstate_parse(st[i]), i);
		ck_assert(xp_jstate_final(i) == (i == XP_JS_COMPLETED || i == XP_JS_FAILED || i == XP_JS_CANCELLED));
	}
	static const char *const rs[] = {"None", "Resources", "Priority", "QuotaExceeded", "GangIncomplete",
					  "NotValidated", "AffinityUnsatisfiable", "Held", "QueueInactive"};
	for (int i = 0; i < XP_R_COUNT; i++) {
		ck_assert_str_eq(xp_reason_name(i), rs[i]);
		ck_assert_int_eq(xp_reason_parse(rs[i]), i);
	}
	ck_assert_int_eq(XP_R_RESOURCES, 1);
	ck_assert_int_eq(XP_R_QUEUE_INACTIVE, 8);
	ck_assert_int_eq(xp_jstate_parse("Running"), -1);
	ck_assert_int_eq(xp_reason_parse("resources"), -1);
	ck_assert_int_eq(xp_reason_parse(NULL), -1);
	ck_assert_str_eq(xp_jstate_name(99), "unknown");
	ck_assert_str_eq(xp_reason_name(-1), "unknown");
	struct xp_err err = {{0}};
	struct xp_qjob j = {.name = xp_strdup("n"), .queue = xp_strdup("q"), .tenant = xp_strdup("t"),
			    .reason_text = xp_strdup("r"), .spec = xp_job_parse("{\"devices\": 1}", 14, NULL, &err)};
	j.alloc.slots = xp_calloc(1, sizeof *j.alloc.slots);
	j.alloc.n = 1;
	xp_qjob_clear(&j);
	ck_assert_ptr_null(j.name);
	ck_assert_ptr_null(j.spec);
	ck_assert_uint_eq(j.alloc.n, 0);
	xp_qjob_clear(NULL);
}
END_TEST

XP_DEFINE_SUITE(sched,
	{"core", .timeout_s = 60, .tests = {names_both_ways, fifo_and_resources, priority_hold_release_cancel, drf_order, drf_hierarchy, add_running_and_refusals, deterministic}},
	{"quota", .timeout_s = 60,
	 .tests = {quota_exhaustion, cohort_borrow_and_reclaim, cohort_lending_limits, cohort_limits_numbers, top_level_no_cohort, reclaim_before_within, priority_preemption,
		   next_class_quota}},
	{"backfill", .timeout_s = 60, .tests = {easy_backfill, backfill_around_reservation, gang}},
	{"fair", .timeout_s = 120, .tests = {fair_share_converges, sim_pass_same_starts, sim_probe_within_never, held_back_job_reserves, never_fits_is_not_head}},
	{"reasons", .timeout_s = 60, .tests = {reasons_golden, drain_and_fail_device}})
