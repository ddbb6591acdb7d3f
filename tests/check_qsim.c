/* check_qsim.c: the discrete-event simulator (qsim.h), traces (trace.h) and what-if
 * (whatif.h). The event loop's golden cases are worked out by hand on one-node clusters
 * (every device one ECU, tests/cluster.c): two jobs back to back, an end and an arrival at the
 * same time, nearest-rank percentiles, the utilization integral, ECU-hours. The trace reader's
 * refusals each name FILE:LINE and the field. Then seeded random simulations: small sim gen
 * clusters, random queue trees and quotas, generated traces, xp_sched_check after every pass;
 * the same seed gives the same JSON report, and a scenario that changes nothing gives the
 * baseline. */
#include <check.h>
#include <jansson.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "jobspec.h"
#include "model.h"
#include "place.h"
#include "qjob.h"
#include "qmodel.h"
#include "qsched.h"
#include "qsim.h"
#include "simgen.h"
#include "suitelib.h"
#include "testlib.h"
#include "trace.h"
#include "whatif.h"

/* ---------- a one-node world ---------- */

struct world {
	struct xp_cluster *c;
	struct xp_qset qs;
	struct xp_sched *s;
	struct xp_qjob arr[16];
	size_t n_arr;
};

/* One node "n0" of per NVIDIA H100 devices; queue q (and class h100 when classed). */
static void w_init(struct world *w, int per, bool classed)
{
	memset(w, 0, sizeof *w);
	w->c = xp_cluster_new();
	const struct xp_test_devs t = {"NVIDIA", "H100 80GB HBM3", "550", 81559, 1, "nvlink", 0};
	struct xp_node *nd = xp_test_node(w->c, "n0", per, &t);
	nd->pus = nd->pus_allowed = 64;
	nd->memory_mib = 512 * 1024;
	w->qs.classes = xp_calloc(3, sizeof *w->qs.classes);
	w->qs.classes[0] = (struct xp_rclass){.name = xp_strdup("cpu"), .builtin = true};
	w->qs.classes[1] = (struct xp_rclass){.name = xp_strdup("mem"), .builtin = true};
	w->qs.n_classes = 2;
	if (classed)
		w->qs.classes[w->qs.n_classes++] =
			(struct xp_rclass){.name = xp_strdup("h100"), .vendor = xp_strdup("NVIDIA"), .model = xp_strdup("H100*")};
	w->qs.queues = xp_calloc(1, sizeof *w->qs.queues);
	w->qs.queues[0] = (struct xp_queue){.name = xp_strdup("q"), .weight = 1, .reclaimable = true};
	w->qs.n_queues = 1;
	struct xp_err err = {{0}};
	w->s = xp_sched_new(w->c, NULL, 0, &w->qs, &(struct xp_sched_opts){0}, &err);
	ck_assert_msg(w->s != NULL, "%s", err.msg);
}

/* An arrival: devices whole devices, submitted at submit, running dur seconds. */
static void w_job(struct world *w, const char *tenant, int devices, int64_t submit, int64_t dur)
{
	struct xp_err err = {{0}};
	char spec[64];
	snprintf(spec, sizeof spec, "{\"devices\": %d}", devices);
	struct xp_qjob *j = &w->arr[w->n_arr++];
	*j = (struct xp_qjob){.id = (int64_t)w->n_arr, .queue = xp_strdup("q"), .tenant = xp_strdup(tenant),
			      .submit = submit, .est_s = dur, .actual_s = dur, .start = -1, .end = -1, .eta = -1,
			      .state = XP_JS_PENDING, .alloc = {.commit = -1}};
	j->spec = xp_job_parse(spec, strlen(spec), NULL, &err);
	ck_assert_msg(j->spec != NULL, "%s", err.msg);
}

static void w_run(struct world *w, int64_t horizon, size_t buckets, struct xp_qsim_report *r)
{
	struct xp_err err = {{0}};
	struct xp_qsim_opts o = {.horizon_s = horizon, .buckets = buckets, .check = true, .cluster = w->c, .qs = &w->qs};
	ck_assert_msg(xp_qsim_run(w->s, w->arr, w->n_arr, &o, r, &err) == 0, "%s", err.msg);
}

static void w_free(struct world *w)
{
	for (size_t i = 0; i < w->n_arr; i++)
		xp_qjob_clear(&w->arr[i]);
	xp_sched_free(w->s);
	xp_qset_clear(&w->qs);
	xp_cluster_free(w->c);
}

#define NEAR(a, b) ck_assert_msg(fabs((a) - (b)) < 1e-9, "%s = %.12g, expected %.12g", #a, (double)(a), (double)(b))

/* A needs all 8 devices for [0, 100); B arrives at 10 asking for all 8 and can start only
 * when A ends: B's wait is 100 - 10 = 90. Waits {0, 90}: nearest rank p50 is the 1st
 * (ceil(0.5 x 2) = 1), p95 the 2nd (ceil(0.95 x 2) = 2). The devices are busy all of
 * [0, 150): three buckets of 50 s at 1.0. ECU-hours (one ECU a device): alice 8 x 100 s,
 * bob 8 x 50 s. */
/* The estimate is a time limit (Slurm --time, TIMEOUT): a job whose trace duration (300) is
 * above its estimate (100) stops at 100, failed, and the job waiting for its devices starts
 * then, at 100, not at 300. */
START_TEST(time_limit)
{
	struct world w;
	w_init(&w, 8, false);
	w_job(&w, "alice", 8, 0, 100);
	w.arr[0].actual_s = 300;
	w_job(&w, "bob", 8, 10, 50);
	struct xp_qsim_report r;
	w_run(&w, 0, 3, &r);
	ck_assert_int_eq(xp_sched_job(w.s, 0)->end, 100);
	ck_assert_int_eq(xp_sched_job(w.s, 0)->state, XP_JS_FAILED);
	ck_assert_int_eq(xp_sched_job(w.s, 1)->start, 100);
	ck_assert_int_eq(xp_sched_job(w.s, 1)->state, XP_JS_COMPLETED);
	ck_assert_uint_eq(r.queues[0].failed, 1);
	xp_qsim_report_clear(&r);
	w_free(&w);
}
END_TEST

/* A job larger than the idle cluster (16 devices of 8) never starts, and its last reason is
 * AffinityUnsatisfiable (it fits nowhere even with every job gone), in a simulator's quick
 * passes (skip_tail, as whatif runs them) too: their counting gate says Resources only for
 * what the idle cluster could hold. */
START_TEST(never_fits_is_affinity)
{
	struct world w;
	w_init(&w, 8, false);
	struct xp_err err = {{0}};
	xp_sched_free(w.s);
	w.s = xp_sched_new(w.c, NULL, 0, &w.qs, &(struct xp_sched_opts){.skip_tail = true}, &err);
	ck_assert_msg(w.s != NULL, "%s", err.msg);
	w_job(&w, "alice", 16, 0, 100);
	w_job(&w, "bob", 8, 5, 100);
	struct xp_qsim_report r;
	w_run(&w, 0, 3, &r);
	ck_assert_int_eq(xp_sched_job(w.s, 0)->start, -1);
	ck_assert_uint_eq(r.queues[0].never, 1);
	ck_assert_uint_eq(r.queues[0].never_reasons[XP_R_AFFINITY], 1);
	xp_qsim_report_clear(&r);
	w_free(&w);
}
END_TEST

START_TEST(back_to_back)
{
	struct world w;
	w_init(&w, 8, false);
	w_job(&w, "alice", 8, 0, 100);
	w_job(&w, "bob", 8, 10, 50);
	struct xp_qsim_report r;
	w_run(&w, 0, 3, &r);
	ck_assert_int_eq(xp_sched_job(w.s, 0)->start, 0);
	ck_assert_int_eq(xp_sched_job(w.s, 1)->start, 100);
	ck_assert_int_eq(xp_sched_job(w.s, 1)->state, XP_JS_COMPLETED);
	ck_assert_uint_eq(r.n_queues, 1);
	ck_assert_uint_eq(r.queues[0].submitted, 2);
	ck_assert_uint_eq(r.queues[0].started, 2);
	ck_assert_uint_eq(r.queues[0].completed, 2);
	ck_assert_uint_eq(r.queues[0].never, 0);
	ck_assert_int_eq(r.queues[0].wait_p50, 0);
	ck_assert_int_eq(r.queues[0].wait_p95, 90);
	ck_assert_int_eq(r.queues[0].wait_max, 90);
	ck_assert_int_eq(r.t_end, 150);
	/* Events: 2 arrivals, 2 ends at 4 distinct times: 4 passes. */
	ck_assert_uint_eq(r.events, 4);
	ck_assert_uint_eq(r.passes, 4);
	ck_assert_uint_eq(r.n_util, 1);
	ck_assert_str_eq(r.util[0].rclass, "H100 80GB HBM3"); /* no class: the model's name */
	ck_assert_uint_eq(r.util[0].devices, 8);
	ck_assert_uint_eq(r.n_buckets, 3);
	for (int i = 0; i < 3; i++)
		NEAR(r.util[0].bucket[i], 1.0);
	NEAR(r.util[0].mean, 1.0);
	ck_assert_uint_eq(r.n_tenants, 2);
	ck_assert_str_eq(r.tenants[0].name, "alice");
	NEAR(r.tenants[0].ecu_hours, 800.0 / 3600);
	NEAR(r.tenants[0].device_hours, 800.0 / 3600);
	ck_assert_str_eq(r.tenants[1].name, "bob");
	NEAR(r.tenants[1].ecu_hours, 400.0 / 3600);
	xp_qsim_report_clear(&r);
	w_free(&w);
}
END_TEST

/* A holds the node for [0, 100); B arrives at 100 exactly. Ends come before arrivals at one
 * time and the pass runs after both: B starts at 100, wait 0. Three timestamps (0, 100, 110),
 * four events, three passes: one pass per timestamp, not per event. */
START_TEST(end_before_arrival)
{
	struct world w;
	w_init(&w, 8, false);
	w_job(&w, "a", 8, 0, 100);
	w_job(&w, "a", 8, 100, 10);
	struct xp_qsim_report r;
	w_run(&w, 0, 0, &r);
	ck_assert_int_eq(xp_sched_job(w.s, 1)->start, 100);
	ck_assert_int_eq(r.queues[0].wait_max, 0);
	ck_assert_uint_eq(r.events, 4);
	ck_assert_uint_eq(r.passes, 3);
	ck_assert_uint_eq(r.n_buckets, 96);
	xp_qsim_report_clear(&r);
	w_free(&w);
}
END_TEST

/* One device, five 10 s jobs at 0: they run one after another in id order (same priority and
 * submit time), waits {0, 10, 20, 30, 40}. Nearest rank: p50 = 3rd = 20, p95 = 5th
 * (ceil(4.75)) = 40, max 40. */
START_TEST(wait_percentiles)
{
	struct world w;
	w_init(&w, 1, false);
	for (int i = 0; i < 5; i++)
		w_job(&w, "a", 1, 0, 10);
	struct xp_qsim_report r;
	w_run(&w, 0, 0, &r);
	for (size_t i = 0; i < 5; i++)
		ck_assert_int_eq(xp_sched_job(w.s, i)->start, (int64_t)i * 10);
	ck_assert_int_eq(r.queues[0].wait_p50, 20);
	ck_assert_int_eq(r.queues[0].wait_p95, 40);
	ck_assert_int_eq(r.queues[0].wait_max, 40);
	xp_qsim_report_clear(&r);
	w_free(&w);
}
END_TEST

/* 8 devices of class h100; A takes 4 for [0, 100), B 2 for [50, 150); horizon 200 in four
 * 50 s buckets: 4/8, (4+2)/8, 2/8, 0 = 0.5, 0.75, 0.25, 0; mean 0.375. The row is the class. */
START_TEST(utilization_integral)
{
	struct world w;
	w_init(&w, 8, true);
	w_job(&w, "a", 4, 0, 100);
	w_job(&w, "b", 2, 50, 100);
	struct xp_qsim_report r;
	w_run(&w, 200, 4, &r);
	ck_assert_uint_eq(r.n_util, 1);
	ck_assert_str_eq(r.util[0].rclass, "h100");
	NEAR(r.bucket_s, 50.0);
	NEAR(r.util[0].bucket[0], 0.5);
	NEAR(r.util[0].bucket[1], 0.75);
	NEAR(r.util[0].bucket[2], 0.25);
	NEAR(r.util[0].bucket[3], 0.0);
	NEAR(r.util[0].mean, 0.375);
	NEAR(r.tenants[0].ecu_hours, 400.0 / 3600);
	NEAR(r.tenants[1].ecu_hours, 200.0 / 3600);
	xp_qsim_report_clear(&r);
	w_free(&w);
}
END_TEST

/* One device, A runs [0, 1000); B waits behind it; the horizon stops the run at 500: B never
 * started, for lack of resources; A's ECU-hours count up to the horizon (500 s). */
START_TEST(horizon_never_started)
{
	struct world w;
	w_init(&w, 1, false);
	w_job(&w, "a", 1, 0, 1000);
	w_job(&w, "a", 1, 0, 10);
	struct xp_qsim_report r;
	w_run(&w, 500, 5, &r);
	ck_assert_uint_eq(r.queues[0].started, 1);
	ck_assert_uint_eq(r.queues[0].never, 1);
	ck_assert_uint_eq(r.queues[0].never_reasons[XP_R_RESOURCES], 1);
	NEAR(r.tenants[0].ecu_hours, 500.0 / 3600);
	for (int i = 0; i < 5; i++)
		NEAR(r.util[0].bucket[i], 1.0);
	xp_qsim_report_clear(&r);
	w_free(&w);
}
END_TEST

/* A cancel flag already set stops the run at its first event, with "cancelled". */
START_TEST(cancel_flag)
{
	struct world w;
	w_init(&w, 1, false);
	w_job(&w, "a", 1, 0, 10);
	atomic_bool cancel = true;
	struct xp_qsim_report r;
	struct xp_err err = {{0}};
	struct xp_qsim_opts o = {.cancel = &cancel, .cluster = w.c, .qs = &w.qs};
	ck_assert_int_eq(xp_qsim_run(w.s, w.arr, w.n_arr, &o, &r, &err), -1);
	ck_assert_str_eq(err.msg, "cancelled");
	ck_assert_uint_eq(r.n_queues, 0);
	w_free(&w);
}
END_TEST

/* ---------- the trace reader ---------- */

#define HDR "{\"xpool_trace\":1,\"seed\":7,\"jobs\":1,\"start\":\"2026-12-01T00:00:00Z\"}\n"
#define JOB "{\"id\":\"j1\",\"submit\":0,\"queue\":\"q\",\"tenant\":\"t\",\"priority\":0,\"est\":600,\"dur\":300," \
	    "\"spec\":{\"devices\":1}}\n"

/* Reads text as a trace file; returns the reader's result, err filled. */
static int read_text(const char *text, size_t len, struct xp_trace *t, struct xp_err *err, char *path, size_t plen)
{
	char *p = xp_tmpfile(text, len);
	snprintf(path, plen, "%s", p);
	int rc = xp_trace_read(p, t, err);
	unlink(p);
	free(p);
	return rc;
}

/* Each bad trace is refused with FILE:LINE: and the field, and nothing is left allocated. */
START_TEST(trace_errors)
{
	static const struct {
		const char *text, *want; /* want: what follows "PATH:" */
	} cases[] = {
		{"", "0: empty: no header line"},
		{JOB, "1: xpool_trace: the first line must be the header"},
		{"{\"xpool_trace\":2,\"jobs\":0,\"start\":\"2026-12-01T00:00:00Z\"}\n", "1: xpool_trace: version 2"},
		{"{\"xpool_trace\":1,\"jobs\":0,\"start\":\"yesterday\"}\n", "1: start: expected a time"},
		{"{\"xpool_trace\":1,\"jobs\":0,\"start\":\"2026-12-01T00:00:00Z\",\"x\":1}\n",
		 "1: header: unknown field \"x\""},
		{HDR "{\"id\":\"j1\",\"submit\":0,\"queue\":\"q\",\"dur\":1,\"spec\":{}}\n", "2: est: missing"},
		{HDR "{\"id\":\"j1\",\"submit\":-5,\"queue\":\"q\",\"est\":1,\"dur\":1,\"spec\":{}}\n",
		 "2: submit: -5 is outside 0 to"},
		{HDR "{\"id\":\"j1\",\"submit\":0,\"queue\":\"q\",\"est\":\"1h\",\"dur\":1,\"spec\":{}}\n",
		 "2: est: expected an integer, got a string"},
		{HDR "{\"id\":\"j1\",\"submit\":0,\"queue\":\"q\",\"est\":1,\"dur\":1,\"spec\":{\"devices\":0}}\n",
		 "2: spec: $.devices: 0 devices and no slice or share"},
		{HDR "{\"id\":\"j1\",\"submit\":0,\"queue\":\"q\",\"est\":1,\"dur\":1,\"spec\":{\"devcies\":1}}\n",
		 "2: spec: $.devcies: unknown field (did you mean \"devices\"?)"},
		{HDR "{\"id\":\"j1\",\"submit\":0,\"queue\":\"q\",\"est\":1,\"dur\":1,\"spec\":{},\"colour\":1}\n",
		 "2: job: unknown field \"colour\""},
		{HDR "{\"id\":\"j1\",\"submit\":0,\"submit\":1}\n", "2: column"},
		{HDR "{\"id\":\"j1\",\"submit\":0,\n", "2: column"},
		{HDR JOB JOB, "3: job: more job lines than the header's \"jobs\": 1"},
		{"{\"xpool_trace\":1,\"seed\":7,\"jobs\":2,\"start\":\"2026-12-01T00:00:00Z\"}\n" JOB,
		 "1: the header says 2 jobs, the file has 1 (cut short?)"},
		{"{\"xpool_trace\":1,\"seed\":7,\"jobs\":2,\"start\":\"2026-12-01T00:00:00Z\"}\n" JOB JOB,
		 " id: 'j1' is used by two jobs"},
		{HDR "{\"queue\":{\"name\":\"p\"}}\n" JOB, " job j1: queue: 'q' is not one of the trace's queues"},
		{HDR "{\"queue\":{\"name\":\"p\",\"quotas\":[{\"class\":\"h100\",\"resource\":\"devices\",\"deserved\":1}]}}\n",
		 "2: queue.quotas[]: --quota h100:devices: no resource class 'h100'"},
		{HDR "{\"queue\":{\"name\":\"p\",\"parent\":\"nope\"}}\n", "2: queue.parent:"},
		{HDR "{\"class\":{\"name\":\"h100\"}}\n", "2: class: needs a vendor or model glob or a label"},
		{HDR "[1,2]\n", "2: expected an object, got an array"},
		{HDR "{\"id\":\"j 1\",\"submit\":0,\"queue\":\"q\",\"est\":1,\"dur\":1,\"spec\":{}}\n", "2: id: not a printable word"},
		{HDR "{\"id\":\"j1\",\"submit\":0,\"queue\":\"../etc\",\"est\":1,\"dur\":1,\"spec\":{}}\n", "2: queue"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[2048], path[256], want[512];
		snprintf(text, sizeof text, "%s", cases[i].text);
		struct xp_trace t;
		struct xp_err err = {{0}};
		ck_assert_msg(read_text(text, strlen(text), &t, &err, path, sizeof path) == -1, "case %zu read", i);
		snprintf(want, sizeof want, "%s:%s", path, cases[i].want);
		ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "case %zu: got '%s', want '%s...'", i, err.msg,
			      want);
		ck_assert_uint_eq(t.n_jobs, 0);
		ck_assert_ptr_null(t.jobs);
	}
}
END_TEST

/* Hostile input: a line past the limit, a NUL byte, a header claiming more jobs than allowed. */
START_TEST(trace_hostile)
{
	char path[256], want[512];
	struct xp_trace t;
	struct xp_err err = {{0}};
	size_t n = XP_TRACE_MAX_LINE + 100;
	char *big = xp_malloc(n + 1);
	memset(big, ' ', n);
	big[n - 1] = '\n';
	big[n] = 0;
	ck_assert_int_eq(read_text(big, n, &t, &err, path, sizeof path), -1);
	snprintf(want, sizeof want, "%s:1: line longer than", path);
	ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
	free(big);
	static const char nul[] = "{\"xpool_trace\":1,\"jobs\":0,\"start\":\"2026-12-01T00:00:00Z\"}\0x\n";
	ck_assert_int_eq(read_text(nul, sizeof nul - 1, &t, &err, path, sizeof path), -1);
	snprintf(want, sizeof want, "%s:1: a NUL byte in the line", path);
	ck_assert_str_eq(err.msg, want);
	static const char many[] = "{\"xpool_trace\":1,\"jobs\":99999999999,\"start\":\"2026-12-01T00:00:00Z\"}\n";
	ck_assert_int_eq(read_text(many, sizeof many - 1, &t, &err, path, sizeof path), -1);
	snprintf(want, sizeof want, "%s:1: jobs: 99999999999 is outside 0 to %d", path, XP_TRACE_MAX_JOBS);
	ck_assert_str_eq(err.msg, want);
	ck_assert_int_eq(xp_trace_read("/nonexistent/trace.jsonl", &t, &err), -1);
	ck_assert_str_eq(err.msg, "/nonexistent/trace.jsonl: No such file or directory");
}
END_TEST

/* ---------- the generator ---------- */

/* The trace of gen options o on cluster c, written to a string (caller frees). */
static char *gen_text(const struct xp_cluster *c, const struct xp_trace_gen_opts *o, struct xp_trace *keep)
{
	struct xp_trace t;
	struct xp_err err = {{0}};
	struct xp_manifest *ms[XP_PLACE_MANIFESTS];
	size_t n_ms = xp_place_manifests(ms);
	ck_assert_msg(xp_trace_gen(c, (const struct xp_manifest *const *)ms, n_ms, o, &t, &err) == 0, "%s", err.msg);
	xp_place_manifests_free(ms, n_ms);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ck_assert_int_eq(xp_trace_write(f, &t, &err), 0);
	fclose(f);
	if (keep)
		*keep = t;
	else
		xp_trace_clear(&t);
	return text;
}

/* The same seed gives the same bytes, another seed others; what is written reads back and
 * writes the same bytes again. The shape is the documented one: submits in order, estimates
 * at least the duration and whole 5 minutes, durations from 1 minute to 7 days, whole
 * devices 1, 2, 4 or 8, gangs of 8-device replicas, the queues by weight. */
START_TEST(gen_determinism_and_shape)
{
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_sim_generate(64, NULL, 3, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	struct xp_trace_gen_opts o = {.jobs = 2000, .seed = 11};
	ck_assert_int_eq(xp_trace_queues_parse("research:3,prod", &o, &err), 0);
	struct xp_trace t;
	char *a = gen_text(c, &o, &t), *b = gen_text(c, &o, NULL);
	ck_assert_str_eq(a, b);
	o.seed = 12;
	char *d = gen_text(c, &o, NULL);
	ck_assert_str_ne(a, d);
	/* Round trip. */
	char *p = xp_tmpfile(a, strlen(a));
	struct xp_trace back;
	ck_assert_msg(xp_trace_read(p, &back, &err) == 0, "%s", err.msg);
	unlink(p);
	free(p);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ck_assert_int_eq(xp_trace_write(f, &back, &err), 0);
	fclose(f);
	ck_assert_str_eq(a, text);
	ck_assert_uint_eq(back.n_jobs, 2000);
	ck_assert(back.has_queues);
	ck_assert_uint_eq(back.qs.n_queues, 2);
	/* Shape. */
	size_t gangs = 0, research = 0, slices = 0;
	int64_t last = 0;
	for (size_t i = 0; i < t.n_jobs; i++) {
		const struct xp_qjob *j = &t.jobs[i];
		ck_assert_int_ge(j->submit, last);
		last = j->submit;
		ck_assert_int_ge(j->est_s, j->actual_s);
		ck_assert_int_le(j->est_s, 3 * j->actual_s + 300);
		ck_assert_int_eq(j->est_s % 300, 0);
		ck_assert_int_ge(j->actual_s, 60);
		ck_assert_int_le(j->actual_s, 7 * 86400);
		const struct xp_task_group *g = &j->spec->groups[0];
		if (g->slice)
			slices++;
		else if (g->replicas > 1) {
			gangs++;
			ck_assert_int_eq(g->devices, 8);
			ck_assert_int_eq(g->gang_min, g->replicas);
			ck_assert_int_eq(j->spec->kind, XP_JOB_TRAIN);
		} else
			ck_assert(g->devices == 1 || g->devices == 2 || g->devices == 4 || g->devices == 8);
		research += strcmp(j->queue, "research") == 0;
	}
	/* 30 % train x 20 % gangs of 2000 = 120 expected; weights 3:1 = 1500 expected. */
	ck_assert_msg(gangs > 60 && gangs < 200, "gangs %zu", gangs);
	ck_assert_msg(research > 1400 && research < 1600, "research %zu", research);
	ck_assert_msg(slices > 0, "no slice job");
	xp_trace_clear(&t);
	xp_trace_clear(&back);
	xp_trace_gen_opts_clear(&o);
	free(a);
	free(b);
	free(d);
	free(text);
	xp_cluster_free(c);
}
END_TEST

START_TEST(gen_options)
{
	int mix[XP_JOB_KIND_COUNT];
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_trace_mix_parse("train:50,infer:50", mix, &err), 0);
	ck_assert_int_eq(mix[XP_JOB_TRAIN], 50);
	ck_assert_int_eq(xp_trace_mix_parse("train:50,infer:40", mix, &err), -1);
	ck_assert_str_eq(err.msg, "--mix: the percentages add up to 90, not 100");
	ck_assert_int_eq(xp_trace_mix_parse("train:50,bake:50", mix, &err), -1);
	ck_assert_str_eq(err.msg, "--mix: unknown job kind 'bake' (train, infer, data, batch)");
	struct xp_trace_gen_opts o = {0};
	ck_assert_int_eq(xp_trace_queues_parse("a:0", &o, &err), -1);
	ck_assert_str_eq(err.msg, "--queues: 'a': the weight is not a number above 0");
	xp_trace_gen_opts_clear(&o);
	ck_assert_int_eq(xp_trace_queues_parse("a,a", &o, &err), -1);
	ck_assert_str_eq(err.msg, "--queues: 'a' given twice");
	xp_trace_gen_opts_clear(&o);
	struct xp_cluster *empty = xp_cluster_new();
	struct xp_trace t;
	o.jobs = 5;
	ck_assert_int_eq(xp_trace_gen(empty, NULL, 0, &o, &t, &err), -1);
	ck_assert_str_eq(err.msg, "the cluster has no free accelerator of a known model on a node that is up to make "
				  "jobs for");
	xp_cluster_free(empty);
}
END_TEST

/* ---------- random simulations ---------- */

/* A random queue set over the trace's leaf queues: maybe a parent over some of them, a class
 * matching every device, quotas with random deserved, max, borrowing and lending limits. */
static void random_qset(struct xp_rng *g, const struct xp_trace *t, struct xp_qset *qs, size_t devices)
{
	memset(qs, 0, sizeof *qs);
	qs->classes = xp_calloc(3, sizeof *qs->classes);
	qs->classes[0] = (struct xp_rclass){.name = xp_strdup("cpu"), .builtin = true};
	qs->classes[1] = (struct xp_rclass){.name = xp_strdup("mem"), .builtin = true};
	qs->classes[2] = (struct xp_rclass){.name = xp_strdup("gpu"), .vendor = xp_strdup("*")};
	qs->n_classes = 3;
	size_t n = t->qs.n_queues;
	qs->queues = xp_calloc(n + 2, sizeof *qs->queues);
	bool parent = xp_rng_below(g, 2);
	if (parent)
		qs->queues[qs->n_queues++] = (struct xp_queue){.name = xp_strdup("org"), .weight = 1, .reclaimable = true};
	for (size_t i = 0; i < n; i++) {
		struct xp_queue *q = &qs->queues[qs->n_queues++];
		*q = (struct xp_queue){.name = xp_strdup(t->qs.queues[i].name), .weight = 1 + (double)xp_rng_below(g, 3),
				       .reclaimable = xp_rng_below(g, 2), .priority = (int)xp_rng_below(g, 2)};
		if (parent && xp_rng_below(g, 3))
			q->parent = xp_strdup("org");
		q->within = (int)xp_rng_below(g, 3);
		q->reclaim = xp_rng_below(g, 2) ? XP_QP_ANY : XP_QP_NEVER;
		q->order = (int)xp_rng_below(g, 2);
		if (xp_rng_below(g, 3)) {
			int64_t d = (int64_t)xp_rng_below(g, devices / 2 + 1) * 1000;
			int64_t gu = (int64_t)xp_rng_below(g, (uint64_t)d / 1000 + 1) * 1000;
			q->quotas = xp_calloc(1, sizeof *q->quotas);
			q->quotas[0] = (struct xp_quota){.rclass = xp_strdup("gpu"), .res = XP_RES_DEVICES, .guaranteed = gu,
							 .deserved = d,
							 .max = xp_rng_below(g, 2) ? XP_UNLIMITED : d + (int64_t)xp_rng_below(g, devices / 2 + 1) * 1000,
							 .borrowing_limit = xp_rng_below(g, 2) ? XP_UNLIMITED : (int64_t)xp_rng_below(g, 16) * 1000,
							 .lending_limit = xp_rng_below(g, 2) ? XP_UNLIMITED : d - gu};
			q->n_quotas = 1;
		}
	}
}

/* One seeded world: a sim gen cluster of 8 to 40 nodes, a trace of 200 jobs over two or
 * three queues, a random queue set; the what-if of no change with xp_sched_check after
 * every pass; returns the JSON text of {"baseline","scenario"} (caller frees). */
static char *random_run(uint64_t seed, bool *same)
{
	struct xp_rng g;
	xp_rng_seed(&g, seed * 7919 + 1);
	struct xp_err err = {{0}};
	size_t nodes = 8 + (size_t)xp_rng_below(&g, 33);
	struct xp_cluster *c = xp_sim_generate(nodes, NULL, seed, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	if (getenv("XP_QSIM_IDLE"))
		for (size_t i = 0; i < c->n_nodes; i++)
			for (size_t d = 0; d < c->nodes[i]->n_devices; d++) {
				struct xp_device *dv = &c->nodes[i]->devices[d];
				for (size_t a = 0; a < dv->n_allocs; a++) {
					free(dv->allocs[a].slice);
					free(dv->allocs[a].owner);
					free(dv->allocs[a].uuid);
				}
				dv->n_allocs = 0;
			}
	/* The manifests: a device's slices count by their templates' share, not 1 each. */
	struct xp_manifest *ms[XP_PLACE_MANIFESTS];
	size_t n_ms = xp_place_manifests(ms);
	const struct xp_manifest *const *cms = (const struct xp_manifest *const *)ms;
	struct xp_trace_gen_opts o = {.jobs = 200, .seed = seed, .load = 0.5 + xp_rng_unit(&g)};
	ck_assert_int_eq(xp_trace_queues_parse(xp_rng_below(&g, 2) ? "a:2,b" : "a,b,c:3", &o, &err), 0);
	struct xp_trace t;
	if (xp_trace_gen(c, cms, n_ms, &o, &t, &err) < 0) {
		xp_place_manifests_free(ms, n_ms);
		/* A cluster whose every accelerator is busy or down: nothing to simulate. */
		xp_trace_gen_opts_clear(&o);
		xp_cluster_free(c);
		*same = true;
		return xp_strdup("");
	}
	struct xp_qset qs;
	random_qset(&g, &t, &qs, xp_cluster_device_count(c));
	struct xp_whatif w = {.cluster = c, .ms = cms, .n_ms = n_ms, .qs = &qs, .jobs = t.jobs, .n_jobs = t.n_jobs, .strategy = -1,
			      .horizon_s = 2 * 86400, .check = true};
	struct xp_whatif_result res;
	ck_assert_msg(xp_whatif_run(&w, &res, &err) == 0, "seed %llu: %s", (unsigned long long)seed, err.msg);
	json_t *jb = xp_qsim_report_json(&res.baseline), *js = xp_qsim_report_json(&res.scenario);
	char *b = json_dumps(jb, JSON_COMPACT), *s = json_dumps(js, JSON_COMPACT);
	*same = strcmp(b, s) == 0;
	json_t *all = xp_whatif_json(&res);
	char *text = json_dumps(all, JSON_COMPACT);
	json_decref(all);
	json_decref(jb);
	json_decref(js);
	free(b);
	free(s);
	xp_whatif_result_clear(&res);
	xp_qset_clear(&qs);
	xp_trace_clear(&t);
	xp_trace_gen_opts_clear(&o);
	xp_place_manifests_free(ms, n_ms);
	xp_cluster_free(c);
	return text;
}

/* Seeds 1..RANDOM_SEEDS: every invariant after every event and pass (xp_whatif_run's check),
 * the baseline equal to the scenario of no change, and (every third seed) a second run of the
 * same seed giving the same bytes. XP_QSIM_SEEDS sets another count (a longer soak). Sized
 * for the sanitizer build, where a check after every event costs most. */
#define RANDOM_SEEDS 12
START_TEST(random_simulations)
{
	const char *env = getenv("XP_QSIM_SEEDS");
	uint64_t seeds = env && atoi(env) > 0 ? (uint64_t)atoi(env) : RANDOM_SEEDS;
	for (uint64_t seed = 1; seed <= seeds; seed++) {
		bool same = false, same2 = false;
		char *a = random_run(seed, &same);
		ck_assert_msg(same, "seed %llu: the scenario of no change differs from the baseline", (unsigned long long)seed);
		if (seed % 3) {
			free(a);
			continue;
		}
		char *b = random_run(seed, &same2);
		ck_assert_msg(strcmp(a, b) == 0, "seed %llu: two runs differ", (unsigned long long)seed);
		free(a);
		free(b);
	}
}
END_TEST

/* ---------- what-if changes ---------- */

START_TEST(whatif_change_parse)
{
	struct xp_whatif_change c;
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_whatif_change_parse(XP_WI_FAIL, "n0:3", &c, &err), 0);
	ck_assert_str_eq(c.node, "n0");
	ck_assert_int_eq(c.dev, 3);
	xp_whatif_change_clear(&c);
	ck_assert_int_eq(xp_whatif_change_parse(XP_WI_FAIL, "n0", &c, &err), -1);
	ck_assert_str_eq(err.msg, "--fail: 'n0' is not NODE:DEVICE (a device index)");
	ck_assert_int_eq(xp_whatif_change_parse(XP_WI_ADD, "4:nvidia-h100", &c, &err), 0);
	ck_assert_uint_eq(c.count, 4);
	ck_assert_str_eq(c.node_kind, "nvidia-h100");
	xp_whatif_change_clear(&c);
	ck_assert_int_eq(xp_whatif_change_parse(XP_WI_ADD, "0:nvidia-h100", &c, &err), -1);
	ck_assert_int_eq(xp_whatif_change_parse(XP_WI_ADD, "x:nvidia-h100", &c, &err), -1);
	ck_assert_int_eq(xp_whatif_change_parse(XP_WI_QUOTA, "research:h100=32", &c, &err), 0);
	ck_assert_str_eq(c.queue, "research");
	ck_assert_str_eq(c.rclass, "h100");
	ck_assert_int_eq(c.devices, 32000);
	xp_whatif_change_clear(&c);
	ck_assert_int_eq(xp_whatif_change_parse(XP_WI_QUOTA, "research=32", &c, &err), -1);
	ck_assert_str_eq(err.msg, "--quota: 'research=32' is not QUEUE:CLASS=N");
}
END_TEST

/* One node of 8, all 8 wanted by each of two 100 s jobs at 0. Draining the node in the
 * scenario: nothing starts (both never start, AffinityUnsatisfiable or Resources: the only
 * node is out); adding a node of 8 (sim gen's nvidia-h100, idle): both start at 0. The
 * baseline is the same in both: B waits 100. Unknown names are refused. */
START_TEST(whatif_scenarios)
{
	struct world w;
	w_init(&w, 8, false);
	struct xp_err err = {{0}};
	w_job(&w, "a", 8, 0, 100);
	w_job(&w, "a", 8, 0, 100);
	/* Jobs asking for "H100*" so that the added sim gen H100 nodes serve them too. */
	for (size_t i = 0; i < 2; i++) {
		free(w.arr[i].spec->groups[0].model);
		w.arr[i].spec->groups[0].model = xp_strdup("H100*");
	}
	struct xp_whatif_change ch[2];
	ck_assert_int_eq(xp_whatif_change_parse(XP_WI_DRAIN, "n0", &ch[0], &err), 0);
	struct xp_whatif wi = {.cluster = w.c, .qs = &w.qs, .jobs = w.arr, .n_jobs = 2, .changes = ch, .n_changes = 1,
			       .strategy = -1, .horizon_s = 1000, .check = true, .seed = 1};
	struct xp_whatif_result res;
	ck_assert_msg(xp_whatif_run(&wi, &res, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(res.changes[0], "drain n0");
	ck_assert_uint_eq(res.baseline.queues[0].started, 2);
	ck_assert_int_eq(res.baseline.queues[0].wait_max, 100);
	ck_assert_uint_eq(res.scenario.queues[0].started, 0);
	ck_assert_uint_eq(res.scenario.queues[0].never, 2);
	xp_whatif_result_clear(&res);
	xp_whatif_change_clear(&ch[0]);
	ck_assert_int_eq(xp_whatif_change_parse(XP_WI_ADD, "1:nvidia-h100", &ch[0], &err), 0);
	ck_assert_msg(xp_whatif_run(&wi, &res, &err) == 0, "%s", err.msg);
	ck_assert_msg(strncmp(res.changes[0], "add 1 nvidia-h100 (whatif-h100-", 31) == 0, "%s", res.changes[0]);
	ck_assert_uint_eq(res.scenario.queues[0].started, 2);
	ck_assert_int_eq(res.scenario.queues[0].wait_max, 0);
	ck_assert_int_eq(res.baseline.queues[0].wait_max, 100);
	xp_whatif_result_clear(&res);
	xp_whatif_change_clear(&ch[0]);
	ck_assert_int_eq(xp_whatif_change_parse(XP_WI_DRAIN, "n9", &ch[0], &err), 0);
	ck_assert_int_eq(xp_whatif_run(&wi, &res, &err), -1);
	ck_assert_str_eq(err.msg, "--drain n9: no such node");
	xp_whatif_change_clear(&ch[0]);
	ck_assert_int_eq(xp_whatif_change_parse(XP_WI_FAIL, "n0:8", &ch[0], &err), 0);
	ck_assert_int_eq(xp_whatif_run(&wi, &res, &err), -1);
	ck_assert_str_eq(err.msg, "--fail n0:8: the node has 8 devices");
	xp_whatif_change_clear(&ch[0]);
	ck_assert_int_eq(xp_whatif_change_parse(XP_WI_QUOTA, "q:h100=4", &ch[0], &err), 0);
	ck_assert_int_eq(xp_whatif_run(&wi, &res, &err), -1);
	ck_assert_str_eq(err.msg, "--quota: no device class 'h100'");
	xp_whatif_change_clear(&ch[0]);
	(void)ch[1];
	w_free(&w);
}
END_TEST

/* --quota in the scenario: class h100 over the node's 8 devices, queue q deserving and at
 * most 4. Two 4-device 100 s jobs at 0: the baseline runs one, the other waits 100 (the
 * queue's max is 4); the scenario's q:h100=8 raises deserved to 8 and max with it (max is
 * raised to the new deserved when lower): both run at 0. The caller's set is unchanged. */
START_TEST(whatif_quota)
{
	struct world w;
	w_init(&w, 8, true);
	struct xp_queue *q = &w.qs.queues[0];
	q->quotas = xp_calloc(1, sizeof *q->quotas);
	q->quotas[0] = (struct xp_quota){.rclass = xp_strdup("h100"), .res = XP_RES_DEVICES, .deserved = 4000, .max = 4000,
					 .borrowing_limit = XP_UNLIMITED, .lending_limit = XP_UNLIMITED};
	q->n_quotas = 1;
	struct xp_err err = {{0}};
	w_job(&w, "a", 4, 0, 100);
	w_job(&w, "a", 4, 0, 100);
	struct xp_whatif_change ch;
	ck_assert_int_eq(xp_whatif_change_parse(XP_WI_QUOTA, "q:h100=8", &ch, &err), 0);
	struct xp_whatif wi = {.cluster = w.c, .qs = &w.qs, .jobs = w.arr, .n_jobs = 2, .changes = &ch, .n_changes = 1,
			       .strategy = -1, .check = true};
	struct xp_whatif_result res;
	ck_assert_msg(xp_whatif_run(&wi, &res, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(res.changes[0], "quota q:h100=8");
	ck_assert_int_eq(res.baseline.queues[0].wait_max, 100);
	ck_assert_int_eq(res.scenario.queues[0].wait_max, 0);
	ck_assert_int_eq(w.qs.queues[0].quotas[0].deserved, 4000);
	ck_assert_int_eq(w.qs.queues[0].quotas[0].max, 4000);
	xp_whatif_result_clear(&res);
	xp_whatif_change_clear(&ch);
	w_free(&w);
}
END_TEST

XP_DEFINE_SUITE(qsim,
	{"loop", .timeout_s = 60,
	 .tests = {back_to_back, time_limit, never_fits_is_affinity, end_before_arrival, wait_percentiles, utilization_integral, horizon_never_started,
		   cancel_flag}},
	{"trace", .timeout_s = 60, .tests = {trace_errors, trace_hostile, gen_determinism_and_shape, gen_options}},
	{"whatif", .timeout_s = 60, .tests = {whatif_change_parse, whatif_scenarios, whatif_quota}},
	{"random", .timeout_s = 600, .tests = {random_simulations}})
