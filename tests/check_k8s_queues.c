/* check_k8s_queues.c: Volcano Queues and PodGroups, Kueue ClusterQueues, LocalQueues and
 * Workloads read from a loopback HTTP server (libmicrohttpd) that serves their lists in the API's
 * own form, paged by limit and continue (tests/fixtures/k8s: the upstream examples converted,
 * plus objects written to the CRDs' schemas; SOURCES.md), into the queue model, checked against
 * the mapping man/xpool.1's table gives (from domain-rules.md); a 404 for an API group is an
 * engine not installed; malformed objects are errors naming the object and the field. */
#include <check.h>
#include <jansson.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checklib.h"
#include "k8s_client.h"
#include "k8s_config.h"
#include "k8s_queues.h"
#include "k8slib.h"
#include "qjob.h"
#include "qmodel.h"
#include "suitelib.h"
#include "testlib.h"
#include "xp.h"

#define VQ "/apis/scheduling.volcano.sh/v1beta1/queues"
#define PG "/apis/scheduling.volcano.sh/v1beta1/podgroups"
#define CQ2 "/apis/kueue.x-k8s.io/v1beta2/clusterqueues"
#define LQ2 "/apis/kueue.x-k8s.io/v1beta2/localqueues"
#define WL2 "/apis/kueue.x-k8s.io/v1beta2/workloads"
#define CQ1 "/apis/kueue.x-k8s.io/v1beta1/clusterqueues"
#define LQ1 "/apis/kueue.x-k8s.io/v1beta1/localqueues"
#define WL1 "/apis/kueue.x-k8s.io/v1beta1/workloads"

/* What the server serves: path -> items (NULL: 404, as for an API group not installed). */
static struct {
	const char *path[8];
	json_t *items[8];
	int requests;
} srv;
static struct MHD_Daemon *daemon_;
static int port;

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *body)
{
	return xp_k8slib_reply(c, code, body, strlen(body), MHD_RESPMEM_MUST_COPY);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_len, void **state)
{
	(void)cls, (void)version, (void)upload, (void)upload_len, (void)state, (void)method;
	srv.requests++;
	json_t *items = NULL;
	for (int i = 0; i < 8; i++)
		if (srv.path[i] && strcmp(srv.path[i], url) == 0)
			items = srv.items[i];
	if (!items)
		/* What an API server answers for a group it does not serve. */
		return reply(c, 404, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
				     "\"message\":\"the server could not find the requested resource\",\"reason\":\"NotFound\","
				     "\"details\":{},\"code\":404}");
	const char *lim = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit");
	const char *cont = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "continue");
	size_t limit = lim ? strtoul(lim, NULL, 10) : 0, from = 0;
	if (cont && xp_k8slib_page_from(cont, &from))
		return reply(c, 400, "{\"kind\":\"Status\",\"code\":400,\"message\":\"bad continue\"}");
	json_t *list = xp_k8slib_page(items, "List", from, limit);
	char *body = json_dumps(list, JSON_COMPACT);
	json_decref(list);
	enum MHD_Result rc = reply(c, 200, body);
	free(body);
	return rc;
}

/* Serves items at path (slot i). */
static void serve(int i, const char *path, json_t *items)
{
	srv.path[i] = path;
	json_decref(srv.items[i]);
	srv.items[i] = items;
}

static void setup(void)
{
	memset(&srv, 0, sizeof srv);
	serve(0, VQ, xp_k8slib_items("k8s/volcano_queues.json"));
	serve(1, PG, xp_k8slib_items("k8s/volcano_podgroups.json"));
	serve(2, CQ2, xp_k8slib_items("k8s/kueue_clusterqueues.json"));
	serve(3, LQ2, xp_k8slib_items("k8s/kueue_localqueues.json"));
	serve(4, WL2, xp_k8slib_items("k8s/kueue_workloads.json"));
	daemon_ = xp_k8slib_serve(handle, NULL, &port);
	ck_assert_ptr_nonnull(daemon_);
	unsetenv("KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
}

static void teardown(void)
{
	MHD_stop_daemon(daemon_);
	for (int i = 0; i < 8; i++)
		json_decref(srv.items[i]);
}

/* Reads everything through a client paging two objects at a time; rc as xp_k8s_queues'. */
static int load(struct xp_qset *set, struct xp_qjob **jobs, size_t *n, unsigned *engines, struct xp_err *err)
{
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
	struct xp_k8s_opts o = {.server = url};
	struct xp_k8s_conf conf;
	ck_assert_msg(xp_k8s_conf_load(&o, &conf, err) == 0, "%s", err->msg);
	struct xp_k8s_client_opts co = {.page_limit = 2, .timeout_s = 10};
	struct xp_k8s_client *cl = xp_k8s_client_new(&conf, &co);
	*set = (struct xp_qset){0};
	int rc = xp_k8s_queues(cl, set, jobs, n, engines, err);
	xp_k8s_client_free(cl);
	return rc;
}

static void free_all(struct xp_qset *set, struct xp_qjob *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		xp_qjob_clear(&jobs[i]);
	free(jobs);
	xp_qset_clear(set);
}

static const struct xp_quota *quota(const struct xp_queue *q, const char *cls, int res)
{
	for (size_t i = 0; i < q->n_quotas; i++)
		if (q->quotas[i].res == res && strcmp(q->quotas[i].rclass, cls) == 0)
			return &q->quotas[i];
	return NULL;
}

static void quota_is(const struct xp_queue *q, const char *cls, int res, int64_t g, int64_t d, int64_t m, int64_t b,
		     int64_t l)
{
	const struct xp_quota *x = quota(q, cls, res);
	ck_assert_msg(x, "%s: no quota %s:%s", q->name, cls, xp_res_name(res));
	ck_assert_msg(x->guaranteed == g && x->deserved == d && x->max == m && x->borrowing_limit == b &&
			      x->lending_limit == l,
		      "%s %s:%s: %lld/%lld/%lld/%lld/%lld", q->name, cls, xp_res_name(res), (long long)x->guaranteed,
		      (long long)x->deserved, (long long)x->max, (long long)x->borrowing_limit,
		      (long long)x->lending_limit);
}

static const struct xp_qjob *job(const struct xp_qjob *jobs, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(jobs[i].name, name) == 0)
			return &jobs[i];
	ck_abort_msg("no job %s", name);
	return NULL;
}

START_TEST(volcano_queues)
{
	struct xp_qset set;
	struct xp_qjob *jobs;
	size_t n;
	unsigned eng = 0;
	struct xp_err err = {{0}};
	ck_assert_msg(load(&set, &jobs, &n, &eng, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(eng, XP_K8S_VOLCANO | XP_K8S_KUEUE);
	/* The upstream hierarchy root/eng/prod with weights 1/2/8: root and root-eng are made
	 * for the levels no Queue object names, each with its level's weight. */
	const struct xp_queue *q = xp_qset_queue(&set, "root-eng-prod");
	ck_assert_ptr_nonnull(q);
	ck_assert_str_eq(q->parent, "root-eng");
	ck_assert(q->weight == 8);
	ck_assert(xp_qset_queue(&set, "root-sci-dev")->weight == 2);
	q = xp_qset_queue(&set, "root-eng");
	ck_assert_ptr_nonnull(q);
	ck_assert_str_eq(q->parent, "root");
	ck_assert(q->weight == 2);
	ck_assert(xp_qset_queue(&set, "root-sci")->weight == 8);
	ck_assert_ptr_null(xp_qset_queue(&set, "root")->parent);
	ck_assert_uint_eq(xp_qset_children(&set, "root"), 2);
	ck_assert_uint_eq(xp_qset_children(&set, "root-eng"), 2);
	/* capability = max, deserved = deserved, guarantee = guaranteed; the guarantee is not
	 * lent (lend = deserved - guarantee); Volcano has no borrowing limit; pods is no quota. */
	q = xp_qset_queue(&set, "gpu-team");
	ck_assert_str_eq(q->parent, "research");
	ck_assert(q->weight == 4);
	ck_assert(!q->reclaimable);
	ck_assert_int_eq(q->state, XP_QS_OPEN);
	ck_assert_uint_eq(q->n_quotas, 3);
	quota_is(q, "nvidia.com_gpu", XP_RES_DEVICES, 4000, 8000, 16000, XP_UNLIMITED, 4000);
	/* No guarantee for cpu: deserved 64, all of it may be lent. */
	quota_is(q, "cpu", XP_RES_CPUS, 0, 64000, 128000, XP_UNLIMITED, 64000);
	quota_is(q, "mem", XP_RES_MEMORY, 0, 256000, 512000, XP_UNLIMITED, 256000);
	const struct xp_rclass *c = xp_qset_class(&set, "nvidia.com_gpu");
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(c->vendor, "NVIDIA");
	ck_assert(xp_qset_class(&set, "cpu")->builtin && xp_qset_class(&set, "mem")->builtin);
	/* Closed: admits nothing new (hold); reclaimable by default. */
	q = xp_qset_queue(&set, "research");
	ck_assert_int_eq(q->state, XP_QS_HOLD);
	ck_assert(q->reclaimable);
	ck_assert_int_eq(xp_qset_queue(&set, "default")->state, XP_QS_OPEN);
	free_all(&set, jobs, n);
}
END_TEST

START_TEST(volcano_podgroups)
{
	struct xp_qset set;
	struct xp_qjob *jobs;
	size_t n;
	struct xp_err err = {{0}};
	ck_assert_msg(load(&set, &jobs, &n, NULL, &err) == 0, "%s", err.msg);
	/* The PodGroup of the upstream example Job: a gang of minAvailable 3 in queue default,
	 * pending for NotEnoughResources with Volcano's own message. */
	const struct xp_qjob *j = job(jobs, n, "default/test-job");
	ck_assert_str_eq(j->queue, "default");
	ck_assert_str_eq(j->tenant, "default");
	ck_assert_int_eq(j->state, XP_JS_PENDING);
	ck_assert_int_eq(j->reason, XP_R_RESOURCES);
	ck_assert_ptr_nonnull(strstr(j->reason_text, "1/1 tasks in gang unschedulable"));
	ck_assert_uint_eq(j->spec->n_groups, 1);
	ck_assert_int_eq(j->spec->groups[0].replicas, 3);
	ck_assert_int_eq(j->spec->groups[0].gang_min, 3);
	ck_assert_int_eq(j->spec->groups[0].cpus, 1);
	ck_assert_int_eq(j->spec->groups[0].devices, 0);
	ck_assert_int_eq(j->submit, 1793610000); /* 2026-11-02T09:00:00Z */
	/* minResources is the gang's: 8 GPUs over 2 members is 4 each. */
	j = job(jobs, n, "team-a/train-8gpu");
	ck_assert_str_eq(j->queue, "gpu-team");
	ck_assert_int_eq(j->state, XP_JS_RUNNING);
	ck_assert_int_eq(j->reason, XP_R_NONE);
	ck_assert_int_eq(j->spec->groups[0].devices, 4);
	ck_assert_str_eq(j->spec->groups[0].vendor, "NVIDIA");
	ck_assert_int_eq(j->spec->groups[0].cpus, 8);
	free_all(&set, jobs, n);
}
END_TEST

START_TEST(kueue_queues)
{
	struct xp_qset set;
	struct xp_qjob *jobs;
	size_t n;
	struct xp_err err = {{0}};
	ck_assert_msg(load(&set, &jobs, &n, NULL, &err) == 0, "%s", err.msg);
	/* The upstream single ClusterQueue: no cohort, so nothing is borrowed or lent: the
	 * nominal quota (cpu 9, memory 36Gi) is guaranteed, deserved and the most. */
	const struct xp_queue *q = xp_qset_queue(&set, "cluster-queue");
	ck_assert_ptr_nonnull(q);
	ck_assert_ptr_null(q->parent);
	ck_assert_int_eq(q->order, XP_QO_BEST_EFFORT);
	ck_assert_int_eq(q->state, XP_QS_OPEN);
	quota_is(q, "cpu", XP_RES_CPUS, 9000, 9000, 9000, 0, 0);
	quota_is(q, "mem", XP_RES_MEMORY, 36000, 36000, 36000, 0, 0);
	/* Its LocalQueue's namespace is who may submit. */
	ck_assert_uint_eq(q->n_tenants, 1);
	ck_assert_str_eq(q->tenants[0], "default");
	/* In a cohort: guaranteed = nominal - lendingLimit, max = nominal + borrowingLimit. */
	q = xp_qset_queue(&set, "team-b-cq");
	ck_assert_str_eq(q->parent, "all-teams");
	ck_assert_ptr_nonnull(xp_qset_queue(&set, "all-teams"));
	ck_assert_int_eq(q->order, XP_QO_STRICT);
	ck_assert_int_eq(q->state, XP_QS_HOLD);
	ck_assert_int_eq(q->within, XP_QP_LOWER_PRIORITY);
	ck_assert_int_eq(q->reclaim, XP_QP_ANY);
	ck_assert(q->weight == 2);
	quota_is(q, "h100", XP_RES_DEVICES, 6000, 8000, 12000, 4000, 2000);
	quota_is(q, "cpu", XP_RES_CPUS, 0, 32000, XP_UNLIMITED, XP_UNLIMITED, XP_UNLIMITED);
	ck_assert_str_eq(xp_qset_class(&set, "h100")->vendor, "NVIDIA");
	free_all(&set, jobs, n);
}
END_TEST

START_TEST(kueue_workloads)
{
	struct xp_qset set;
	struct xp_qjob *jobs;
	size_t n;
	struct xp_err err = {{0}};
	ck_assert_msg(load(&set, &jobs, &n, NULL, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(n, 4);
	/* Pending for quota, through LocalQueue user-queue to cluster-queue, Kueue's words kept. */
	const struct xp_qjob *j = job(jobs, n, "default/job-sample-job-5f6a2");
	ck_assert_str_eq(j->queue, "cluster-queue");
	ck_assert_int_eq(j->state, XP_JS_PENDING);
	ck_assert_int_eq(j->reason, XP_R_QUOTA);
	ck_assert_str_eq(j->reason_text,
			 "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 1 more needed");
	ck_assert_int_eq(j->spec->groups[0].replicas, 3);
	ck_assert_int_eq(j->spec->groups[0].cpus, 1);
	ck_assert_int_eq(j->spec->groups[0].host_memory_mib, 200);
	/* Admitted: running, in the ClusterQueue its admission names; minCount is the gang. */
	j = job(jobs, n, "team-b/gpu-train-1");
	ck_assert_str_eq(j->queue, "team-b-cq");
	ck_assert_int_eq(j->state, XP_JS_RUNNING);
	ck_assert_int_eq(j->priority, 100);
	ck_assert_int_eq(j->spec->groups[0].replicas, 4);
	ck_assert_int_eq(j->spec->groups[0].gang_min, 2);
	ck_assert_int_eq(j->spec->groups[0].devices, 2);
	ck_assert_int_eq(j->spec->groups[0].cpus, 4);
	free_all(&set, jobs, n);
}
END_TEST

START_TEST(absent_engines)
{
	/* No Volcano (404 for its group), and Kueue only as v1beta1 (before 0.15). */
	json_t *cq = xp_k8slib_items("k8s/kueue_clusterqueues.json");
	json_t *lq = xp_k8slib_items("k8s/kueue_localqueues.json");
	json_t *wl = xp_k8slib_items("k8s/kueue_workloads.json");
	/* v1beta1 calls the cohort spec.cohort. */
	json_t *spec = json_object_get(json_array_get(cq, 1), "spec");
	json_object_set(spec, "cohort", json_object_get(spec, "cohortName"));
	json_object_del(spec, "cohortName");
	serve(0, NULL, NULL);
	serve(1, NULL, NULL);
	serve(2, CQ1, cq);
	serve(3, LQ1, lq);
	serve(4, WL1, wl);
	struct xp_qset set;
	struct xp_qjob *jobs;
	size_t n;
	unsigned eng = 9;
	struct xp_err err = {{0}};
	ck_assert_msg(load(&set, &jobs, &n, &eng, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(eng, XP_K8S_KUEUE);
	ck_assert_ptr_nonnull(xp_qset_queue(&set, "cluster-queue"));
	ck_assert_str_eq(xp_qset_queue(&set, "team-b-cq")->parent, "all-teams");
	ck_assert_ptr_null(xp_qset_queue(&set, "default"));
	ck_assert_uint_eq(n, 2);
	free_all(&set, jobs, n);
	/* Neither engine: an empty model, no error. */
	serve(2, NULL, NULL);
	serve(3, NULL, NULL);
	serve(4, NULL, NULL);
	eng = 9;
	ck_assert_msg(load(&set, &jobs, &n, &eng, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(eng, 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(set.n_queues, 0);
	free_all(&set, jobs, n);
}
END_TEST

/* The error from serving one broken object of a list (slot i at path), with the rest fine. */
static void broken(int i, const char *path, const char *object, const char *want)
{
	json_error_t je;
	json_t *o = json_loads(object, 0, &je);
	ck_assert_msg(o, "%s", je.text);
	serve(i, path, json_pack("[o]", o));
	struct xp_qset set;
	struct xp_qjob *jobs;
	size_t n;
	struct xp_err err = {{0}};
	ck_assert_int_eq(load(&set, &jobs, &n, NULL, &err), -1);
	ck_assert_msg(strstr(err.msg, want), "'%s' does not say '%s'", err.msg, want);
	free_all(&set, jobs, n);
}

START_TEST(malformed_objects)
{
	broken(0, VQ, "{\"metadata\":{\"name\":\"q1\"},\"spec\":{\"weight\":\"heavy\"}}", "Queue q1: spec.weight: not a positive integer");
	broken(0, VQ, "{\"metadata\":{\"name\":\"q1\"},\"spec\":{\"capability\":{\"nvidia.com/gpu\":\"lots\"}}}",
	       "Queue q1: spec.capability.nvidia.com/gpu: not a quantity");
	broken(0, VQ, "{\"metadata\":{\"name\":\"q1\"},\"spec\":{\"deserved\":{\"cpu\":\"8\"},\"capability\":{\"cpu\":\"4\"}}}",
	       "Queue q1: spec (cpu)");
	broken(0, VQ, "{\"metadata\":{}}", "Queue #1: metadata.name");
	broken(0, VQ, "{\"metadata\":{\"name\":\"q1\"},\"status\":{\"state\":\"Sideways\"}}", "Queue q1: status.state");
	broken(0, VQ, "[1]", "Queue #1: not an object");
	serve(0, VQ, xp_k8slib_items("k8s/volcano_queues.json"));
	broken(1, PG, "{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\"},\"spec\":{\"minMember\":-1}}",
	       "PodGroup ns/pg: spec.minMember");
	broken(1, PG, "{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\"},\"status\":{\"phase\":\"Flying\"}}",
	       "PodGroup ns/pg: status.phase");
	serve(1, PG, xp_k8slib_items("k8s/volcano_podgroups.json"));
	broken(2, CQ2,
	       "{\"metadata\":{\"name\":\"cq\"},\"spec\":{\"resourceGroups\":[{\"flavors\":[{\"name\":\"f\",\"resources\":"
	       "[{\"name\":\"cpu\",\"nominalQuota\":\"x\"}]}]}]}}",
	       "ClusterQueue cq: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: not a quantity");
	broken(2, CQ2, "{\"metadata\":{\"name\":\"cq\"},\"spec\":{\"stopPolicy\":\"Never\"}}", "ClusterQueue cq: spec.stopPolicy");
	broken(2, CQ2,
	       "{\"metadata\":{\"name\":\"cq\"},\"spec\":{\"cohortName\":\"c\",\"resourceGroups\":[{\"flavors\":[{\"name\":\"f\",\"resources\":"
	       "[{\"name\":\"nvidia.com/gpu\",\"nominalQuota\":\"2\",\"lendingLimit\":\"3\"}]}]}]}}",
	       "ClusterQueue cq: spec.resourceGroups[0].flavors[0].resources[0]: lendingLimit is above nominalQuota");
	/* A ClusterQueue and a Volcano Queue of one name. */
	broken(2, CQ2, "{\"metadata\":{\"name\":\"default\"}}", "ClusterQueue default: metadata.name");
	serve(2, CQ2, xp_k8slib_items("k8s/kueue_clusterqueues.json"));
	broken(3, LQ2, "{\"metadata\":{\"name\":\"lq\",\"namespace\":\"ns\"},\"spec\":{}}", "LocalQueue ns/lq: spec.clusterQueue");
	serve(3, LQ2, xp_k8slib_items("k8s/kueue_localqueues.json"));
	broken(4, WL2, "{\"metadata\":{\"name\":\"w\",\"namespace\":\"ns\"},\"spec\":{\"queueName\":\"user-queue\",\"podSets\":[]}}",
	       "Workload ns/w: spec.podSets");
	broken(4, WL2,
	       "{\"metadata\":{\"name\":\"w\",\"namespace\":\"ns\"},\"spec\":{\"podSets\":[{\"name\":\"main\",\"count\":2,"
	       "\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"many\"}}}]}}}]}}",
	       "Workload ns/w: spec.podSets[0].template.spec.containers[0].resources: cpu is not a quantity");
	broken(4, WL2, "{\"metadata\":{\"name\":\"w\",\"namespace\":\"ns\"},\"spec\":{\"podSets\":[{\"count\":1}]},\"status\":{\"conditions\":{}}}",
	       "Workload ns/w: status.conditions");
}
END_TEST

/* The commands read them: with --k8s-server, `queue list` lists Volcano's and Kueue's queues,
 * `job list` their jobs marked k8s, and a write is refused (xpool never changes the engine). The
 * server also serves the Nodes and Pods the jobs are judged on. */
START_TEST(commands_end_to_end)
{
	serve(5, "/api/v1/nodes", xp_k8slib_items("k8s/nodes.json"));
	serve(6, "/api/v1/pods", xp_k8slib_items("k8s/pods.json"));
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
	char db[96];
	snprintf(db, sizeof db, "/tmp/xpool-k8sq-%d.db", (int)getpid());
	unlink(db);
	struct xp_run r;
	xp_run_xpool(&r, NULL, "--k8s-server", url, "--db", db, "--json", "queue", "list", NULL);
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	xp_want_parts(r.out, "\"root-eng-prod\"", "\"cluster-queue\"", "\"team-b-cq\"", NULL);
	xp_run_free(&r);
	xp_run_xpool(&r, NULL, "--k8s-server", url, "--db", db, "--json", "job", "list", NULL);
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	xp_want_parts(r.out, "default/job-sample-job-5f6a2", "\"engine\": \"k8s\"", "QuotaExceeded", NULL);
	xp_run_free(&r);
	xp_run_xpool(&r, NULL, "--k8s-server", url, "--db", db, "queue", "add", "x", NULL);
	ck_assert_int_eq(r.status, 2);
	xp_want_parts(r.err, "Kubernetes's queues read-only", NULL);
	xp_run_free(&r);
	/* A read is a read: no database was made. */
	ck_assert_int_ne(access(db, F_OK), 0);
}
END_TEST

XP_DEFINE_SUITE(k8s_queues,
		{"mapping", .setup = setup, .teardown = teardown,
		 .tests = {volcano_queues, volcano_podgroups, kueue_queues, kueue_workloads}},
		{"faults", .setup = setup, .teardown = teardown, .tests = {absent_engines, malformed_objects}},
		{"commands", .setup = setup, .teardown = teardown, .tests = {commands_end_to_end}});
