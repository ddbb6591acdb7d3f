/* check_k8s.c: the Kubernetes client against a loopback HTTP server (libmicrohttpd) that
 * serves Node and Pod lists in the API's own format (tests/fixtures/k8s), paged by limit and
 * continue, with the faults a real API server makes: 401 until the token file holds the new
 * token, 403, 410 Gone on a continuation, malformed, cut short and oversized bodies. No real
 * API server can run here; the client is still what one needs (paths, headers, TLS options).
 * Then kubeconfig parsing, and `xpool --k8s-server URL --json inventory` end to end. */
#include <check.h>
#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checklib.h"
#include "k8s_client.h"
#include "k8s_config.h"
#include "k8s_nodes.h"
#include "k8slib.h"
#include "model_json.h"
#include "suitelib.h"
#include "testlib.h"
#include "tmuxlib.h"
#include "xp.h"

enum fault { F_NONE, F_403, F_GONE_ONCE, F_GONE_ALWAYS, F_MALFORMED, F_TRUNCATED, F_NOT_LIST };

/* What the server does and what it saw; the tests run in their own processes. */
static struct {
	json_t *nodes, *pods;     /* the items served */
	const char *token;        /* the token it accepts; NULL: any */
	enum fault fault;
	int gone_sent;
	int requests, unauthorized;
	char last_auth[256], last_accept[64], last_field[256];
	char paths[64][64];       /* each request's path, in order */
	int max_limit;            /* the largest limit= asked */
} srv;
static struct MHD_Daemon *daemon_;
static int port;
static char dir[128];

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *body)
{
	return xp_k8slib_reply(c, code, body, strlen(body), MHD_RESPMEM_MUST_COPY);
}

static ssize_t half(void *cls, uint64_t pos, char *buf, size_t max)
{
	const char *body = cls;
	size_t len = strlen(body) / 2;
	if (pos >= len)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	size_t k = len - (size_t)pos < max ? len - (size_t)pos : max;
	memcpy(buf, body + pos, k);
	return (ssize_t)k;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_len, void **state)
{
	(void)cls, (void)version, (void)upload, (void)upload_len, (void)state;
	int k = srv.requests++;
	if (k < 64)
		snprintf(srv.paths[k], sizeof srv.paths[k], "%s", url);
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	const char *acc = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
	const char *field = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "fieldSelector");
	snprintf(srv.last_auth, sizeof srv.last_auth, "%s", auth ? auth : "");
	snprintf(srv.last_accept, sizeof srv.last_accept, "%s", acc ? acc : "");
	if (field)
		snprintf(srv.last_field, sizeof srv.last_field, "%s", field);
	if (strcmp(method, "GET"))
		return reply(c, 405, "{}");
	if (srv.token) {
		char want[200];
		snprintf(want, sizeof want, "Bearer %s", srv.token);
		if (!auth || strcmp(auth, want)) {
			srv.unauthorized++;
			return reply(c, 401, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
					     "\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\",\"code\":401}");
		}
	}
	if (srv.fault == F_403)
		return reply(c, 403, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
				     "\"message\":\"nodes is forbidden: User \\\"system:serviceaccount:default:xpool\\\" cannot list "
				     "resource \\\"nodes\\\" in API group \\\"\\\" at the cluster scope\",\"reason\":\"Forbidden\","
				     "\"details\":{\"kind\":\"nodes\"},\"code\":403}");
	json_t *items = !strcmp(url, "/api/v1/nodes") ? srv.nodes : !strcmp(url, "/api/v1/pods") ? srv.pods : NULL;
	if (!items)
		return reply(c, 404, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"NotFound\",\"code\":404}");
	const char *lim = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit");
	const char *cont = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "continue");
	size_t limit = lim ? strtoul(lim, NULL, 10) : 0, from = 0;
	if ((int)limit > srv.max_limit)
		srv.max_limit = (int)limit;
	if (cont) {
		/* An opaque token with characters a URL must escape, as the real ones (base64) have. */
		if (xp_k8slib_page_from(cont, &from))
			return reply(c, 400, "{\"kind\":\"Status\",\"code\":400,\"message\":\"bad continue\"}");
		if ((srv.fault == F_GONE_ONCE && !srv.gone_sent++) || srv.fault == F_GONE_ALWAYS)
			return reply(c, 410, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
					     "\"message\":\"The provided continue parameter is too old to display a consistent list "
					     "result. You can start a new list without the continue parameter.\",\"reason\":\"Expired\",\"code\":410}");
	}
	json_t *list = xp_k8slib_page(items, items == srv.nodes ? "NodeList" : "PodList", from, limit);
	if (srv.fault == F_NOT_LIST)
		json_object_del(list, "items"), json_object_set_new(list, "items", json_string("x"));
	char *body = json_dumps(list, JSON_COMPACT);
	json_decref(list);
	enum MHD_Result rc;
	if (srv.fault == F_MALFORMED) {
		body[strlen(body) - 3] = '\0';
		rc = reply(c, 200, body);
	} else if (srv.fault == F_TRUNCATED) {
		/* Content-Length says the whole body; half of it comes and the connection closes. */
		struct MHD_Response *r = MHD_create_response_from_callback(strlen(body), 4096, half, body, free);
		rc = MHD_queue_response(c, 200, r);
		MHD_destroy_response(r);
		return rc;
	} else
		rc = reply(c, 200, body);
	free(body);
	return rc;
}

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/xpool-k8s-%d", (int)getpid());
	mkdir(dir, 0700);
	memset(&srv, 0, sizeof srv);
	srv.nodes = xp_k8slib_items("k8s/nodes.json");
	srv.pods = xp_k8slib_items("k8s/pods.json");
	daemon_ = xp_k8slib_serve(handle, NULL, &port);
	ck_assert_ptr_nonnull(daemon_);
	unsetenv("KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
}

static void teardown(void)
{
	MHD_stop_daemon(daemon_);
	json_decref(srv.nodes);
	json_decref(srv.pods);
	xp_rm_rf(dir);
}

/* A client for the loopback server with the token in file tok (NULL: none). */
static struct xp_k8s_client *client(const char *tok, size_t page, size_t max_bytes)
{
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/", port);
	struct xp_k8s_opts o = {.server = url, .token_file = tok};
	struct xp_k8s_conf conf;
	struct xp_err err = {{0}};
	ck_assert_msg(xp_k8s_conf_load(&o, &conf, &err) == 0, "%s", err.msg);
	struct xp_k8s_client_opts co = {.page_limit = page, .max_bytes = max_bytes, .timeout_s = 10};
	return xp_k8s_client_new(&conf, &co);
}

START_TEST(list_pages)
{
	srv.token = "tok-1";
	char *tok = xp_write_file(dir, "token", "tok-1\n", 0600);
	struct xp_k8s_client *cl = client(tok, 2, 0);
	struct xp_err err = {{0}};
	json_t *nodes = xp_k8s_list(cl, "/api/v1/nodes", NULL, &err);
	ck_assert_msg(nodes, "%s", err.msg);
	/* Seven nodes two a page: four requests, every node once, in order. */
	ck_assert_uint_eq(json_array_size(nodes), 7);
	ck_assert_int_eq(srv.requests, 4);
	ck_assert_int_eq(srv.max_limit, 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(json_array_get(nodes, 6), "metadata"), "name")),
			 "dcu-node-7");
	ck_assert_str_eq(srv.last_auth, "Bearer tok-1");
	ck_assert_str_eq(srv.last_accept, "application/json");
	ck_assert_str_eq(srv.paths[3], "/api/v1/nodes");
	json_decref(nodes);
	free(tok);
	xp_k8s_client_free(cl);
}
END_TEST

START_TEST(token_reread_on_401)
{
	/* The token rotated after the client read it: a 401, the file read again, one retry. */
	srv.token = "new-token";
	char *tok = xp_write_file(dir, "token", "old-token", 0600);
	struct xp_k8s_client *cl = client(tok, 0, 0);
	free(xp_write_file(dir, "token", "new-token\n", 0600));
	struct xp_err err = {{0}};
	json_t *pods = xp_k8s_list(cl, "/api/v1/pods", "fieldSelector=status.phase%21%3DSucceeded", &err);
	ck_assert_msg(pods, "%s", err.msg);
	ck_assert_int_eq(srv.unauthorized, 1);
	ck_assert_int_eq(srv.requests, 2);
	ck_assert_str_eq(srv.last_field, "status.phase!=Succeeded");
	json_decref(pods);
	/* Still refused after the re-read: an error, once, that shows no token. */
	srv.token = "newer-token";
	srv.requests = 0;
	json_t *again = xp_k8s_list(cl, "/api/v1/pods", NULL, &err);
	ck_assert_ptr_null(again);
	/* Each list may re-read once: refused, read again, refused again, given up. */
	ck_assert_int_eq(srv.requests, 2);
	xp_want_parts(err.msg, "GET /api/v1/pods", "401", NULL);
	ck_assert_ptr_null(strstr(err.msg, "new-token"));
	free(tok);
	xp_k8s_client_free(cl);
}
END_TEST

START_TEST(no_reread_without_file)
{
	srv.token = "secret-a";
	struct xp_k8s_client *cl = client(NULL, 0, 0);
	struct xp_err err = {{0}};
	ck_assert_ptr_null(xp_k8s_list(cl, "/api/v1/nodes", NULL, &err));
	ck_assert_int_eq(srv.requests, 1);
	ck_assert_str_eq(srv.last_auth, "");
	xp_want_parts(err.msg, "401 Unauthorized", NULL);
	xp_k8s_client_free(cl);
}
END_TEST

START_TEST(forbidden)
{
	srv.fault = F_403;
	struct xp_k8s_client *cl = client(NULL, 0, 0);
	struct xp_err err = {{0}};
	ck_assert_ptr_null(xp_k8s_list(cl, "/api/v1/nodes", NULL, &err));
	xp_want_parts(err.msg, "GET /api/v1/nodes", "403 Forbidden", "cannot list resource", NULL);
	xp_k8s_client_free(cl);
}
END_TEST

START_TEST(gone_restarts_once)
{
	srv.fault = F_GONE_ONCE;
	struct xp_k8s_client *cl = client(NULL, 3, 0);
	struct xp_err err = {{0}};
	json_t *nodes = xp_k8s_list(cl, "/api/v1/nodes", NULL, &err);
	ck_assert_msg(nodes, "%s", err.msg);
	/* Page 1, 410 on page 2, then the whole list again (3 pages): nothing twice. */
	ck_assert_uint_eq(json_array_size(nodes), 7);
	ck_assert_int_eq(srv.requests, 5);
	json_decref(nodes);
	/* Gone on every continuation: the second 410 is an error. */
	srv.fault = F_GONE_ALWAYS;
	ck_assert_ptr_null(xp_k8s_list(cl, "/api/v1/nodes", NULL, &err));
	xp_want_parts(err.msg, "GET /api/v1/nodes", "410 Gone", "too old", NULL);
	xp_k8s_client_free(cl);
}
END_TEST

/* A trim for the test: drops unbound pods, and every pod's status. */
static bool drop_unbound(json_t *pod)
{
	if (!json_object_get(json_object_get(pod, "spec"), "nodeName"))
		return false;
	json_object_del(pod, "status");
	return true;
}

START_TEST(list_trim)
{
	srv.fault = F_GONE_ONCE;
	struct xp_k8s_client *cl = client(NULL, 3, 0);
	struct xp_err err = {{0}};
	xp_k8s_client_trim(cl, drop_unbound);
	json_t *pods = xp_k8s_list(cl, "/api/v1/pods", NULL, &err);
	ck_assert_msg(pods, "%s", err.msg);
	/* Page 1, 410 on page 2, the list again: each bound pod once (waiting-d is not), trimmed. */
	ck_assert_int_eq(srv.requests, 5);
	ck_assert_uint_eq(json_array_size(pods), 6);
	size_t i;
	json_t *p;
	json_array_foreach(pods, i, p) {
		ck_assert_ptr_null(json_object_get(p, "status"));
		ck_assert_ptr_nonnull(json_object_get(json_object_get(p, "spec"), "nodeName"));
	}
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(json_array_get(pods, 3), "metadata"), "name")),
			 "npu-job");
	json_decref(pods);
	/* No trim: every object whole. */
	xp_k8s_client_trim(cl, NULL);
	pods = xp_k8s_list(cl, "/api/v1/pods", NULL, &err);
	ck_assert_msg(pods, "%s", err.msg);
	ck_assert_uint_eq(json_array_size(pods), 7);
	ck_assert_ptr_nonnull(json_object_get(json_array_get(pods, 0), "status"));
	json_decref(pods);
	xp_k8s_client_free(cl);
}
END_TEST

START_TEST(malformed_bodies)
{
	struct xp_err err = {{0}};
	struct xp_k8s_client *cl = client(NULL, 0, 0);
	srv.fault = F_MALFORMED;
	ck_assert_ptr_null(xp_k8s_list(cl, "/api/v1/pods", NULL, &err));
	xp_want_parts(err.msg, "GET /api/v1/pods", "malformed JSON", NULL);
	srv.fault = F_TRUNCATED;
	ck_assert_ptr_null(xp_k8s_list(cl, "/api/v1/nodes", NULL, &err));
	xp_want_parts(err.msg, "GET /api/v1/nodes", NULL);
	srv.fault = F_NOT_LIST;
	ck_assert_ptr_null(xp_k8s_list(cl, "/api/v1/nodes", NULL, &err));
	xp_want_parts(err.msg, "GET /api/v1/nodes", "not a list", NULL);
	srv.fault = F_NONE;
	ck_assert_ptr_null(xp_k8s_list(cl, "/api/v1/secrets", NULL, &err));
	xp_want_parts(err.msg, "GET /api/v1/secrets", "HTTP 404", NULL);
	/* The same through the decode that builds only what a trim keeps (xp_k8s_cluster's). */
	xp_k8s_client_keep(cl, xp_k8s_pod_keep);
	srv.fault = F_MALFORMED;
	ck_assert_ptr_null(xp_k8s_list(cl, "/api/v1/pods", NULL, &err));
	xp_want_parts(err.msg, "GET /api/v1/pods", "malformed JSON: 1:", NULL);
	srv.fault = F_TRUNCATED;
	ck_assert_ptr_null(xp_k8s_list(cl, "/api/v1/pods", NULL, &err));
	xp_want_parts(err.msg, "GET /api/v1/pods", NULL);
	srv.fault = F_NOT_LIST;
	ck_assert_ptr_null(xp_k8s_list(cl, "/api/v1/pods", NULL, &err));
	xp_want_parts(err.msg, "GET /api/v1/pods", "not a list", NULL);
	xp_k8s_client_free(cl);
}
END_TEST

START_TEST(oversized_body)
{
	struct xp_k8s_client *cl = client(NULL, 0, 4096);
	struct xp_err err = {{0}};
	ck_assert_ptr_null(xp_k8s_list(cl, "/api/v1/nodes", NULL, &err));
	xp_want_parts(err.msg, "GET /api/v1/nodes", "larger than 4096 bytes", NULL);
	xp_k8s_client_free(cl);
}
END_TEST

START_TEST(nodes_to_model)
{
	struct xp_k8s_client *cl = client(NULL, 2, 0);
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_k8s_cluster(cl, &err);
	ck_assert_msg(c, "%s", err.msg);
	ck_assert_str_eq(srv.last_field, "status.phase!=Succeeded,status.phase!=Failed");
	ck_assert_uint_eq(c->n_nodes, 7);
	struct xp_node *g = xp_cluster_node(c, "gpu-node-1");
	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(g->state, XP_NODE_UP);
	ck_assert_str_eq(g->zone, "us-east-1a");
	ck_assert_str_eq(g->rack, "r12");
	ck_assert_str_eq(g->sw, "leaf-3");
	ck_assert_int_eq(g->pus, 128);
	ck_assert_uint_eq(g->n_devices, 8);
	ck_assert_str_eq(g->devices[0].vendor, "NVIDIA");
	ck_assert_str_eq(g->devices[0].model, "NVIDIA-A100-SXM4-80GB");
	ck_assert_int_eq(g->devices[0].memory_mib, 81920);
	/* Capacity 8, allocatable 7: the eighth is unhealthy. */
	ck_assert_int_eq(g->devices[7].health, XP_HEALTH_FAIL);
	/* train-a (2, Running) and infer-b (1, Pending, limits only) hold three; done-c
	 * (Succeeded) and the unbound waiting-d hold none. */
	size_t held = 0;
	for (size_t i = 0; i < g->n_devices; i++)
		held += g->devices[i].n_allocs;
	ck_assert_uint_eq(held, 3);
	ck_assert_str_eq(g->devices[0].allocs[0].owner, "ml/train-a");
	ck_assert_str_eq(g->devices[2].allocs[0].owner, "ml/infer-b");
	struct xp_node *npu = xp_cluster_node(c, "npu-node-2");
	ck_assert_int_eq(npu->state, XP_NODE_DRAINING); /* cordoned */
	ck_assert_str_eq(npu->devices[0].vendor, "Huawei");
	ck_assert_str_eq(npu->devices[0].model, "Ascend910");
	ck_assert_uint_eq(npu->devices[3].n_allocs, 1);
	ck_assert_uint_eq(npu->devices[4].n_allocs, 0);
	ck_assert_int_eq(xp_cluster_node(c, "amd-node-3")->state, XP_NODE_UNREACHABLE); /* Ready Unknown */
	ck_assert_str_eq(xp_cluster_node(c, "amd-node-3")->devices[0].vendor, "AMD");
	struct xp_node *mig = xp_cluster_node(c, "mig-node-4");
	ck_assert_int_eq(mig->state, XP_NODE_DRAINING); /* NoExecute taint */
	ck_assert_uint_eq(mig->n_devices, 9);
	xp_want_parts(mig->devices[0].model, "MIG ", NULL);
	ck_assert_int_eq(xp_cluster_node(c, "cpu-node-5")->state, XP_NODE_DOWN); /* Ready False */
	ck_assert_uint_eq(xp_cluster_node(c, "cpu-node-5")->n_devices, 0);
	/* PreferNoSchedule is a preference, not a cordon. */
	ck_assert_int_eq(xp_cluster_node(c, "mlu-node-6")->state, XP_NODE_UP);
	ck_assert_str_eq(xp_cluster_node(c, "mlu-node-6")->devices[0].vendor, "Cambricon");
	/* HAMi's -memory companion is no device. */
	ck_assert_uint_eq(xp_cluster_node(c, "dcu-node-7")->n_devices, 8);
	ck_assert_str_eq(xp_cluster_node(c, "dcu-node-7")->devices[0].vendor, "Hygon");
	xp_cluster_free(c);
	xp_k8s_client_free(cl);
}
END_TEST

START_TEST(trims_keep_what_is_read)
{
	/* xp_k8s_cluster trims each page as it arrives (a Node to what node_from reads, a Pod to
	 * what pod_on reads, a Pod that holds no device dropped): the cluster must be the one
	 * the whole objects make, with the fields a real server adds that nothing reads. */
	size_t i;
	json_t *o;
	json_array_foreach(srv.pods, i, o) {
		json_object_set_new(json_object_get(o, "metadata"), "managedFields",
				    json_pack("[{s:s,s:s}]", "manager", "kubelet", "operation", "Update"));
		json_object_set_new(json_object_get(o, "status"), "conditions",
				    json_pack("[{s:s,s:s}]", "type", "Ready", "status", "True"));
	}
	json_array_foreach(srv.nodes, i, o)
	json_object_set_new(json_object_get(o, "status"), "images",
			    json_pack("[{s:[s],s:i}]", "names", "nvcr.io/nvidia/pytorch:23.10-py3", "sizeBytes", 9000000000));
	struct xp_k8s_client *cl = client(NULL, 2, 0);
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_k8s_cluster(cl, &err);
	ck_assert_msg(c, "%s", err.msg);
	char *src = xp_asprintf("k8s:%s", xp_k8s_client_conf(cl)->server);
	struct xp_cluster *whole = xp_k8s_build(srv.nodes, srv.pods, src, &err);
	ck_assert_msg(whole, "%s", err.msg);
	json_t *a = xp_cluster_to_json(c), *b = xp_cluster_to_json(whole);
	char *sa = json_dumps(a, JSON_SORT_KEYS), *sb = json_dumps(b, JSON_SORT_KEYS);
	size_t at = 0;
	while (sa[at] && sa[at] == sb[at])
		at++;
	ck_assert_msg(!sa[at] && !sb[at], "the trimmed lists make another cluster, from byte %zu: %.120s | %.120s", at,
		      sa + at, sb + at);
	free(sa);
	free(sb);
	json_decref(a);
	json_decref(b);
	free(src);
	xp_cluster_free(whole);
	xp_cluster_free(c);
	xp_k8s_client_free(cl);
}
END_TEST

/* ---- the filtered decode of a page is the whole decode cut by the trim ---- */

/* text with ins put right after the first occurrence of at (a new heap string). */
static char *splice(const char *text, const char *at, const char *ins)
{
	const char *p = strstr(text, at);
	ck_assert_msg(p, "no '%s' to splice at", at);
	p += strlen(at);
	return xp_asprintf("%.*s%s%s", (int)(p - text), text, ins, p);
}

/* text repeated n times (a heap string). */
static char *times(const char *text, int n)
{
	size_t l = strlen(text);
	char *o = xp_malloc(l * (size_t)n + 1);
	for (int i = 0; i < n; i++)
		memcpy(o + l * (size_t)i, text, l);
	o[l * (size_t)n] = '\0';
	return o;
}

/* The items of page kept by trim, compact (the order of members kept: the build reads labels
 * in order); NULL when page is. */
static char *trimmed(json_t *page, xp_k8s_trim_fn *trim)
{
	if (!page)
		return NULL;
	json_t *kept = json_array(), *it = json_object_get(page, "items");
	size_t i;
	json_t *x;
	json_array_foreach(it, i, x) if (trim(x)) json_array_append(kept, x);
	json_t *out = json_pack("{s:O?,s:o,s:b}", "metadata", json_object_get(page, "metadata"), "items", kept, "list",
				json_is_array(it) || json_is_null(it));
	char *s = json_dumps(out, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(out);
	return s;
}

/* The cluster of nodes and pods (pages), as JSON text; "error: ..." when it is refused. */
static char *cluster_text(json_t *nodes, json_t *pods)
{
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_k8s_build(json_object_get(nodes, "items"), json_object_get(pods, "items"), "k8s:test", &err);
	if (!c)
		return xp_asprintf("error: %s", err.msg);
	json_t *j = xp_cluster_to_json(c);
	char *s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(j);
	xp_cluster_free(c);
	return s;
}

/* Decodes text both ways: whole (json_loadb, as a list without keep) then trimmed, and cut as
 * it is read (xp_k8s_decode_list with keep) then trimmed: the same page or the same refusal.
 * Returns the kept decode (NULL when refused), for a cluster. */
static json_t *same_both_ways(const char *what, const char *text, const struct xp_k8s_keep *keep, xp_k8s_trim_fn *trim)
{
	json_error_t je;
	json_t *whole = json_loadb(text, strlen(text), 0, &je);
	char msg[160] = "";
	json_t *cut = xp_k8s_decode_list(text, strlen(text), keep, msg, sizeof msg);
	ck_assert_msg(!whole == !cut, "%s: the whole decode %s (%s), the kept one %s (%s)", what, whole ? "takes it" : "refuses it",
		      whole ? "" : je.text, cut ? "takes it" : "refuses it", msg);
	if (!cut) {
		ck_assert_msg(msg[0], "%s: refused without a reason", what);
		return NULL;
	}
	char *a = trimmed(whole, trim), *b = trimmed(cut, trim);
	size_t at = 0;
	while (a[at] && a[at] == b[at])
		at++;
	ck_assert_msg(!a[at] && !b[at], "%s: the trims differ from byte %zu:\n%.300s\n%.300s", what, at, a + at, b + at);
	free(a);
	free(b);
	json_decref(whole);
	return cut;
}

START_TEST(keep_is_the_trim)
{
	/* xp_k8s_cluster decodes of each page only what the trims keep (xp_k8s_node_keep,
	 * xp_k8s_pod_keep): on the recorded lists and on hostile ones the pages must be those a
	 * whole decode and the trims make, kept keys inside skipped subtrees ignored, duplicate
	 * keys taken as jansson takes them (the last wins, where the first stood), and the same
	 * pages refused. */
	static const char *const pairs[][2] = {{"k8s/nodes.json", "k8s/pods.json"}, {"k8s/hami_nodes.json", "k8s/hami_pods.json"}};
	for (size_t f = 0; f < sizeof pairs / sizeof pairs[0]; f++) {
		struct xp_err err = {{0}};
		size_t len;
		char *nt = xp_read_file(xp_fixture(pairs[f][0]), 1 << 24, &len, &err);
		ck_assert_msg(nt, "%s", err.msg);
		char *pt = xp_read_file(xp_fixture(pairs[f][1]), 1 << 24, &len, &err);
		ck_assert_msg(pt, "%s", err.msg);
		json_t *n = same_both_ways(pairs[f][0], nt, xp_k8s_node_keep, xp_k8s_trim_node);
		json_t *p = same_both_ways(pairs[f][1], pt, xp_k8s_pod_keep, xp_k8s_trim_pod);
		ck_assert_ptr_nonnull(n);
		ck_assert_ptr_nonnull(p);
		/* The cluster: the one the whole objects make, untrimmed. */
		json_t *wn = json_loads(nt, 0, NULL), *wp = json_loads(pt, 0, NULL);
		char *a = cluster_text(wn, wp);
		size_t i;
		json_t *x;
		json_array_foreach(json_object_get(n, "items"), i, x) xp_k8s_trim_node(x);
		json_t *pk = json_array();
		json_array_foreach(json_object_get(p, "items"), i, x) if (xp_k8s_trim_pod(x)) json_array_append(pk, x);
		json_object_set_new(p, "items", pk);
		char *b = cluster_text(n, p);
		ck_assert_msg(!strncmp(a, "{", 1), "%s", a);
		ck_assert_msg(!strcmp(a, b), "%s: another cluster:\n%.300s\n%.300s", pairs[f][0], a, b);
		free(a);
		free(b);
		json_decref(wn);
		json_decref(wp);
		json_decref(n);
		json_decref(p);

		/* Hostile variants of the recorded pages, put before the first item's own members
		 * (so that its own, later, win duplicates) and before the page's. */
		static const char *const hostile[] = {
			/* kept names inside skipped subtrees */
			"\"managedFields\":[{\"metadata\":{\"name\":\"evil\"},\"status\":{\"capacity\":{\"nvidia.com/gpu\":\"64\"}}}],",
			"\"apiVersion\":{\"spec\":{\"nodeName\":\"gpu-node-1\",\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"9\"}}}]}},",
			/* duplicates of kept members: the item's own come later and win */
			"\"metadata\":{\"name\":\"first\",\"labels\":{\"rack\":\"r0\"},\"annotations\":{\"hami.io/node-nvidia-register\":\"x\"}},",
			"\"status\":{\"phase\":\"Running\",\"capacity\":{\"nvidia.com/gpu\":\"99\"}},\"kind\":\"Node\",",
			/* kept members of other types than the trims read */
			"\"zz\":1,\"kind\":[{\"metadata\":{}}],",
			/* duplicates and numbers inside a skipped subtree */
			"\"skipped\":{\"a\":1,\"a\":2.5e3,\"a\":-0,\"b\":[true,false,null,\"\\u00e9\\ud83d\\ude00\"]},",
		};
		for (size_t h = 0; h < sizeof hostile / sizeof hostile[0]; h++) {
			for (int which = 0; which < 2; which++) {
				const char *text = which ? pt : nt;
				char *v1 = splice(text, "\"items\": [\n  {", hostile[h]);
				char *v2 = splice(text, "{", hostile[h]);
				char what[64];
				snprintf(what, sizeof what, "%s hostile %zu", pairs[f][which], h);
				json_decref(same_both_ways(what, v1, which ? xp_k8s_pod_keep : xp_k8s_node_keep,
							   which ? xp_k8s_trim_pod : xp_k8s_trim_node));
				json_decref(same_both_ways(what, v2, which ? xp_k8s_pod_keep : xp_k8s_node_keep,
							   which ? xp_k8s_trim_pod : xp_k8s_trim_node));
				free(v1);
				free(v2);
			}
		}
		free(nt);
		free(pt);
	}

	/* Handmade pages: duplicates that stay (in a kept object), kept arrays of odd elements. */
	static const char *const pages[] = {
		"{\"items\":[{\"kind\":\"Node\",\"metadata\":{\"name\":\"a\",\"labels\":{\"rack\":\"1\",\"zone\":\"z\",\"rack\":\"2\"},"
		"\"annotations\":{\"hami.io/node-nvidia-register\":\"a\",\"x\":{\"name\":\"b\"},\"hami.io/node-nvidia-register\":\"c\"},"
		"\"name\":\"a2\"},\"status\":{\"capacity\":{\"nvidia.com/gpu\":\"4\"},\"capacity\":{\"nvidia.com/gpu\":\"2\",\"cpu\":\"8\"},"
		"\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"x\"},\"odd\",[{\"type\":1}],7],"
		"\"allocatable\":\"weird\",\"images\":[{\"capacity\":{}}]},\"spec\":[1,{\"taints\":[]}]},\"not an object\",5,null],"
		"\"metadata\":{\"continue\":\"\",\"resourceVersion\":\"1\",\"resourceVersion\":\"2\"},\"metadata\":{\"resourceVersion\":\"3\"}}",
		"{\"items\":[{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"annotations\":\"str\"},"
		"\"spec\":{\"nodeName\":\"a\",\"containers\":{\"name\":\"c\"},\"initContainers\":[{\"name\":\"i\",\"image\":\"x\","
		"\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"},\"claims\":[{\"name\":\"q\"}]}},\"s\",[1]]},"
		"\"status\":{\"phase\":\"Running\",\"conditions\":[]}},{\"spec\":{\"nodeName\":\"a\"},\"spec\":{\"containers\":[]}}]}",
		/* numbers at their edges, kept (labels are kept whole) and skipped */
		"{\"items\":[{\"metadata\":{\"name\":\"n\",\"labels\":{\"a\":1e-400,\"b\":-0,\"c\":1.5e308,\"d\":9223372036854775807,"
		"\"e\":-9223372036854775808,\"f\":0.12345678901234567890123,\"g\":2.2250738585072011e-308,\"h\":-0.0,\"i\":1E+2,"
		"\"j\":123456789012345678,\"k\":0.1,\"l\":100000000000000000000000e-10}},"
		"\"skipped\":[1e-400,-0,1.5e308,9223372036854775807,-9223372036854775808,0.12345678901234567890123]}]}",
		"{\"items\":null,\"kind\":\"NodeList\"}",
		"{\"items\":{\"metadata\":{\"name\":\"x\"}}}",
		"{\"items\":\"x\"}",
		"[{\"items\":[]}]",
		"{}",
	};
	for (size_t h = 0; h < sizeof pages / sizeof pages[0]; h++) {
		char what[32];
		snprintf(what, sizeof what, "page %zu", h);
		json_decref(same_both_ways(what, pages[h], xp_k8s_node_keep, xp_k8s_trim_node));
		json_decref(same_both_ways(what, pages[h], xp_k8s_pod_keep, xp_k8s_trim_pod));
	}

	/* Refused either way, however deep in a skipped subtree the fault lies. */
	static const char *const bad[] = {
		"{\"items\":[{\"managedFields\":[{\"f\":\"\\u0000\"}]}]}",
		"{\"items\":[{\"managedFields\":[{\"f\":\"\\ud800\"}]}]}",
		"{\"items\":[{\"managedFields\":[{\"f\":\"\xc3\x28\"}]}]}",
		"{\"items\":[{\"managedFields\":[{\"f\":99999999999999999999}]}]}",
		"{\"items\":[{\"managedFields\":[{\"f\":1e999}]}]}",
		"{\"items\":[{\"managedFields\":[{\"f\":9223372036854775808}]}]}",
		"{\"items\":[{\"managedFields\":[{\"f\":-9223372036854775809}]}]}",
		"{\"items\":[{\"managedFields\":[{\"f\":1.}]}]}",
		"{\"items\":[{\"managedFields\":[{\"f\":-}]}]}",
		"{\"items\":[{\"managedFields\":[{\"f\":tru}]}]}",
		"{\"items\":[{\"managedFields\":[{\"f\":\"\\x\"}]}]}",
		"{\"items\":[{\"managedFields\":[{\"f\":\"\\udc00\"}]}]}",
		"{\"items\":[{\"managedFields\":[{\"f\":\"\xed\xa0\x80\"}]}]}",
		"{\"items\":[{\"managedFields\":[{\"f\":\"\xf4\x90\x80\x80\"}]}]}",
		"{\"items\":[{\"managedFields\":[{\"f\":\"\xc0\xaf\"}]}]}",
		"{\"items\":[{\"managedFields\":[{\"f\":01}]}]}",
		"{\"items\":[{\"managedFields\":[{\"f\":\"tab\there\"}]}]}",
		"{\"items\":[{\"managedFields\":[{\"f\" 1}]}]}",
		"{\"items\":[{\"managedFields\":[{\"f\":1,}]}]}",
		"{\"items\":[{\"managedFields\":[{\"f\":1}]}]} x",
		"{\"items\":[{\"managedFields\":[{\"f\":1}]}]",
		"{\"items\":[{\"metadata\":{\"name\":\"a\"}},]}",
		"\"items\"",
		"",
	};
	for (size_t h = 0; h < sizeof bad / sizeof bad[0]; h++) {
		char what[32];
		snprintf(what, sizeof what, "bad %zu", h);
		ck_assert_ptr_null(same_both_ways(what, bad[h], xp_k8s_node_keep, xp_k8s_trim_node));
	}

	/* Where the tokenizer is stricter than json_loadb: a string over 4 MiB and a number over
	 * 512 characters, which no object an API server stores can hold (etcd takes at most
	 * 1.5 MiB an object), are refused, saying so. */
	char *big = times("a", (4 << 20) + 1);
	char *text = xp_asprintf("{\"items\":[{\"metadata\":{\"managedFields\":\"%s\"}}]}", big);
	char msg[160] = "";
	ck_assert_ptr_null(xp_k8s_decode_list(text, strlen(text), xp_k8s_node_keep, msg, sizeof msg));
	xp_want_parts(msg, "a string longer than 4194304 bytes", NULL);
	free(text);
	free(big);
	big = times("1", 600);
	text = xp_asprintf("{\"items\":[{\"metadata\":{\"managedFields\":0.%s}}]}", big);
	ck_assert_ptr_null(xp_k8s_decode_list(text, strlen(text), xp_k8s_node_keep, msg, sizeof msg));
	xp_want_parts(msg, "a number longer than 512 bytes", NULL);
	free(text);
	free(big);

	/* Nesting inside a skipped subtree and inside one kept whole (labels): jansson's depth
	 * (2048 in all) either way. */
	for (int labels = 0; labels < 2; labels++)
		for (int depth = 2040; depth <= 2050; depth += 5) {
			/* Around it: the page, items, the item, metadata (and labels). */
			char *open = times("[", depth - 4 - labels), *close = times("]", depth - 4 - labels);
			text = labels ? xp_asprintf("{\"items\":[{\"metadata\":{\"labels\":{\"a\":%s%s}}}]}", open, close)
				      : xp_asprintf("{\"items\":[{\"metadata\":{\"managedFields\":%s%s}}]}", open, close);
			char what[32];
			snprintf(what, sizeof what, "depth %d%s", depth, labels ? " (labels)" : "");
			json_t *cut = same_both_ways(what, text, xp_k8s_node_keep, xp_k8s_trim_node);
			ck_assert_msg(!cut == (depth > 2048), "%s", what);
			json_decref(cut);
			free(text);
			free(open);
			free(close);
		}
}
END_TEST

START_TEST(quantities)
{
	double v;
	ck_assert_int_eq(xp_k8s_quantity("127500m", &v), 0);
	ck_assert(v == 127.5);
	ck_assert_int_eq(xp_k8s_quantity("1Gi", &v), 0);
	ck_assert(v == 1073741824.0);
	ck_assert_int_eq(xp_k8s_quantity("2k", &v), 0);
	ck_assert(v == 2000);
	ck_assert_int_eq(xp_k8s_quantity("8x", &v), -1);
	ck_assert_int_eq(xp_k8s_quantity("", &v), -1);
	ck_assert_int_eq(xp_k8s_quantity("-1", &v), -1);
	/* Past any real count or size: refused, so that no cast of it is undefined (review). */
	ck_assert_int_eq(xp_k8s_quantity("1e30", &v), -1);
	ck_assert_int_eq(xp_k8s_quantity("9999999999999Ei", &v), -1);
	ck_assert_int_eq(xp_k8s_quantity("1Ei", &v), 0);
	ck_assert_str_eq(xp_k8s_resource_vendor("huawei.com/Ascend910-2c"), "Huawei");
	ck_assert_ptr_null(xp_k8s_resource_vendor("huawei.com/Ascend910B3-memory"));
	ck_assert_ptr_null(xp_k8s_resource_vendor("nvidia.com/gpumem"));
	ck_assert_ptr_null(xp_k8s_resource_vendor("cpu"));
}
END_TEST

/* A kubeconfig in dir named kubeconfig with text; the path. */
static char *kubeconfig(const char *text)
{
	return xp_write_file(dir, "kubeconfig", text, 0600);
}

/* base64 of "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n" */
#define CA_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="

START_TEST(kubeconfig_contexts)
{
	char *p = kubeconfig("apiVersion: v1\nkind: Config\ncurrent-context: prod\n"
			     "clusters:\n"
			     "- name: dev\n  cluster:\n    server: https://dev.example:6443\n    insecure-skip-tls-verify: true\n"
			     "- name: prod\n  cluster:\n    server: https://10.0.0.1:6443/\n"
			     "    certificate-authority-data: " CA_B64 "\n"
			     "contexts:\n"
			     "- name: dev\n  context: {cluster: dev, user: dev-user}\n"
			     "- name: prod\n  context:\n    cluster: prod\n    user: admin\n    namespace: ml\n"
			     "users:\n"
			     "- name: dev-user\n  user: {token: dev-token}\n"
			     "- name: admin\n  user:\n    client-certificate: certs/admin.crt\n    client-key: certs/admin.key\n");
	struct xp_k8s_conf c;
	struct xp_err err = {{0}};
	ck_assert_msg(xp_k8s_kubeconfig(p, &c, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(c.server, "https://10.0.0.1:6443/");
	ck_assert_uint_eq(c.ca_data_len, 59);
	ck_assert(strncmp(c.ca_data, "-----BEGIN CERTIFICATE-----\n", 28) == 0);
	ck_assert(!c.insecure);
	ck_assert_ptr_null(c.token);
	/* Relative paths are relative to the kubeconfig's folder, as kubectl reads them. */
	char want[256];
	snprintf(want, sizeof want, "%s/certs/admin.crt", dir);
	ck_assert_str_eq(c.cert_file, want);
	xp_want_parts(c.origin, "context prod", NULL);
	xp_k8s_conf_clear(&c);
	/* The other context: a token and insecure-skip-tls-verify. */
	free(p);
	p = kubeconfig("current-context: dev\nclusters:\n- name: dev\n  cluster:\n    server: https://dev.example:6443\n"
		       "    insecure-skip-tls-verify: true\ncontexts:\n- name: dev\n  context: {cluster: dev, user: u}\n"
		       "users:\n- name: u\n  user:\n    tokenFile: tok\n");
	free(xp_write_file(dir, "tok", "  file-token \n", 0600));
	ck_assert_msg(xp_k8s_kubeconfig(p, &c, &err) == 0, "%s", err.msg);
	ck_assert(c.insecure);
	ck_assert_str_eq(c.token, "file-token");
	xp_want_parts(c.token_file, "/tok", NULL);
	xp_k8s_conf_clear(&c);
	/* Through KUBECONFIG (a list: its first file that exists), the explicit CA wins. */
	char *list = xp_asprintf("%s/absent:%s", dir, p);
	setenv("KUBECONFIG", list, 1);
	struct xp_k8s_opts o = {.ca_file = "/etc/ca.pem"};
	ck_assert_msg(xp_k8s_conf_load(&o, &c, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(c.server, "https://dev.example:6443");
	ck_assert_str_eq(c.ca_file, "/etc/ca.pem");
	/* A CA named on the command line is checked against, even where the kubeconfig said
	 * insecure-skip-tls-verify (review: the token went to any server). */
	ck_assert(!c.insecure);
	xp_k8s_conf_clear(&c);
	free(list);
	free(p);
}
END_TEST

START_TEST(kubeconfig_errors)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"current-context: x\n", "contexts: missing"},
		{"clusters: []\n", "current-context: missing"},
		{"current-context: [a]\n", "current-context: not a string"},
		{"current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\nclusters:\n- name: k\n  cluster: {}\n",
		 "clusters[0].cluster.server: missing"},
		{"current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\nclusters:\n- name: other\n  cluster: {}\n",
		 "clusters: no entry named 'k'"},
		{"current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nclusters:\n- name: k\n"
		 "  cluster: {server: 'https://h', certificate-authority-data: '%%%'}\nusers: []\n",
		 "clusters[0].cluster.certificate-authority-data: not base64"},
		{"current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nclusters:\n- name: k\n"
		 "  cluster: {server: 'https://h'}\nusers:\n- name: u\n  user: {client-certificate: a.crt}\n",
		 "a client certificate needs its key"},
		{"current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nclusters:\n- name: k\n"
		 "  cluster: {server: 'https://h'}\nusers:\n- name: u\n  user: {exec: {command: aws}}\n",
		 "exec and auth-provider credentials are not supported"},
		{"current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nclusters:\n- name: k\n"
		 "  cluster: {server: 'ftp://h'}\nusers:\n- name: u\n  user: {token: s3cret}\n",
		 "not an http:// or https:// URL"},
		/* A token with a line break would add headers of its own (review). */
		{"current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nclusters:\n- name: k\n"
		 "  cluster: {server: 'https://h'}\nusers:\n- name: u\n  user: {token: \"abc\\r\\nX-Injected: evil\"}\n",
		 "users[0].user.token: a byte that is not printable ASCII"},
		/* Which was meant cannot be guessed (kubectl refuses it too). */
		{"current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\nclusters:\n- name: k\n"
		 "  cluster: {server: 'https://h', certificate-authority: ca.crt, insecure-skip-tls-verify: true}\n",
		 "certificate-authority and insecure-skip-tls-verify both given"},
		/* Deep flow nesting: libyaml's time grows with its square; refused before parsing. */
		{"a: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
		 "nested more than 64 deep"},
		{"key: [unclosed\n", "line "},
		{"- a list\n", "not a mapping"},
		{"", "not a mapping"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *p = kubeconfig(cases[i].text);
		setenv("KUBECONFIG", p, 1);
		struct xp_k8s_conf c;
		struct xp_err err = {{0}};
		struct xp_k8s_opts o = {0};
		ck_assert_msg(xp_k8s_conf_load(&o, &c, &err) < 0, "case %zu parsed", i);
		xp_want_parts(err.msg, "kubeconfig ", p, cases[i].want, NULL);
		ck_assert_ptr_null(strstr(err.msg, "s3cret"));
		free(p);
	}
	/* Huge: refused by size before parsing. */
	size_t big = XP_K8S_MAX_FILE + 10;
	char *text = xp_malloc(big + 1);
	memset(text, '#', big);
	text[big] = '\0';
	char *p = kubeconfig(text);
	free(text);
	struct xp_k8s_conf c;
	struct xp_err err = {{0}};
	ck_assert_int_lt(xp_k8s_kubeconfig(p, &c, &err), 0);
	xp_want_parts(err.msg, "kubeconfig", p, NULL);
	free(p);
}
END_TEST

START_TEST(kubeconfig_hostile)
{
	/* A billion laughs: aliases are references in libyaml's document, never copies, and
	 * xpool walks only the fields it needs. */
	const char *laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
			     "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
			     "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
			     "current-context: *f\n";
	char *p = kubeconfig(laughs);
	struct xp_k8s_conf c;
	struct xp_err err = {{0}};
	ck_assert_int_lt(xp_k8s_kubeconfig(p, &c, &err), 0);
	xp_want_parts(err.msg, "current-context: not a string", NULL);
	free(p);
	/* Deep nesting and a NUL byte in a value. */
	char deep[20010];
	memset(deep, '[', 20000);
	strcpy(deep + 20000, "\n");
	p = kubeconfig(deep);
	ck_assert_int_lt(xp_k8s_kubeconfig(p, &c, &err), 0);
	xp_want_parts(err.msg, "kubeconfig ", NULL);
	free(p);
	p = kubeconfig("current-context: \"a\\0b\"\n");
	ck_assert_int_lt(xp_k8s_kubeconfig(p, &c, &err), 0);
	xp_want_parts(err.msg, "NUL", NULL);
	free(p);
}
END_TEST

/* Standard base64 of len bytes (kubeconfig *-data fields). */
static char *b64(const char *s, size_t len)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *o = xp_malloc(len / 3 * 4 + 5), *p = o;
	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned char)s[i] << 16 | (i + 1 < len ? (unsigned char)s[i + 1] << 8 : 0) |
			     (i + 2 < len ? (unsigned char)s[i + 2] : 0);
		*p++ = t[v >> 18 & 63];
		*p++ = t[v >> 12 & 63];
		*p++ = i + 1 < len ? t[v >> 6 & 63] : '=';
		*p++ = i + 2 < len ? t[v & 63] : '=';
	}
	*p = '\0';
	return o;
}

/* The same server over TLS with its own certificate: trusted through certificate-authority-data
 * or --k8s-ca, refused without, accepted with insecure-skip-tls-verify; client certificate and
 * key given as data are loaded (a key that is not the certificate's fails). */
START_TEST(https_server)
{
	char *key = xp_asprintf("%s/key.pem", dir), *cert = xp_asprintf("%s/cert.pem", dir);
	xp_self_signed(key, cert);
	struct xp_err err = {{0}};
	size_t klen, clen;
	char *key_pem = xp_read_file(key, 65536, &klen, &err), *cert_pem = xp_read_file(cert, 65536, &clen, &err);
	ck_assert_ptr_nonnull(key_pem);
	ck_assert_ptr_nonnull(cert_pem);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct MHD_Daemon *tls = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_TLS, 0, NULL, NULL, handle, NULL,
						  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_HTTPS_MEM_KEY, key_pem,
						  MHD_OPTION_HTTPS_MEM_CERT, cert_pem, MHD_OPTION_END);
	ck_assert_ptr_nonnull(tls);
	char url[64];
	snprintf(url, sizeof url, "https://127.0.0.1:%d", MHD_get_daemon_info(tls, MHD_DAEMON_INFO_BIND_PORT)->port);
	char *ca64 = b64(cert_pem, clen), *key64 = b64(key_pem, klen);
	for (int k = 0; k < 4; k++) {
		/* 0: CA and client pair as data; 1: no CA; 2: insecure; 3: client key of another pair. */
		char *text = xp_asprintf("current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\n"
					 "clusters:\n- name: k\n  cluster:\n    server: %s\n%s%s%s"
					 "users:\n- name: u\n  user:\n    client-certificate-data: %s\n    client-key-data: %s\n",
					 url, k == 1 || k == 2 ? "" : "    certificate-authority-data: ", k == 1 || k == 2 ? "" : ca64,
					 k == 2 ? "    insecure-skip-tls-verify: true\n" : k == 1 ? "" : "\n", ca64,
					 k == 3 ? ca64 : key64);
		char *p = kubeconfig(text);
		free(text);
		struct xp_k8s_conf c;
		ck_assert_msg(xp_k8s_kubeconfig(p, &c, &err) == 0, "%s", err.msg);
		struct xp_k8s_client *cl = xp_k8s_client_new(&c, NULL);
		json_t *nodes = xp_k8s_list(cl, "/api/v1/nodes", NULL, &err);
		if (k == 0 || k == 2) {
			ck_assert_msg(nodes, "case %d: %s", k, err.msg);
			ck_assert_uint_eq(json_array_size(nodes), 7);
		} else {
			ck_assert_msg(!nodes, "case %d listed", k);
			xp_want_parts(err.msg, "GET /api/v1/nodes", NULL);
			if (k == 1)
				xp_want_parts(err.msg, "certificate", NULL);
		}
		json_decref(nodes);
		xp_k8s_client_free(cl);
		free(p);
	}
	/* --k8s-ca: the CA from a file. */
	struct xp_k8s_opts o = {.server = url, .ca_file = cert};
	struct xp_k8s_conf c;
	ck_assert_msg(xp_k8s_conf_load(&o, &c, &err) == 0, "%s", err.msg);
	struct xp_k8s_client *cl = xp_k8s_client_new(&c, NULL);
	json_t *nodes = xp_k8s_list(cl, "/api/v1/nodes", NULL, &err);
	ck_assert_msg(nodes, "%s", err.msg);
	json_decref(nodes);
	xp_k8s_client_free(cl);
	MHD_stop_daemon(tls);
	free(ca64);
	free(key64);
	free(key_pem);
	free(cert_pem);
	free(key);
	free(cert);
}
END_TEST

START_TEST(in_cluster)
{
	char sa[200];
	snprintf(sa, sizeof sa, "%s/sa", dir);
	mkdir(sa, 0700);
	free(xp_write_file(sa, "token", "sa-token\n", 0600));
	setenv("HOME", dir, 1); /* no ~/.kube/config there */
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
	struct xp_k8s_opts o = {.sa_dir = sa};
	struct xp_k8s_conf c;
	struct xp_err err = {{0}};
	ck_assert_msg(xp_k8s_conf_load(&o, &c, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(c.server, "https://[fd00::1]:6443");
	ck_assert_str_eq(c.token, "sa-token");
	xp_want_parts(c.ca_file, "/sa/ca.crt", NULL);
	xp_k8s_conf_clear(&c);
	unsetenv("KUBERNETES_SERVICE_HOST");
	ck_assert_int_lt(xp_k8s_conf_load(&o, &c, &err), 0);
	xp_want_parts(err.msg, "no Kubernetes cluster", NULL);
}
END_TEST

/* A bearer token never goes over plain http:// except to this machine (kubectl proxy, the
 * tests' loopback server): on the way to anywhere else anyone on the path reads it. */
START_TEST(token_not_over_http)
{
	char *tok = xp_write_file(dir, "tok-http", "secret-token\n", 0600);
	const char *refused[] = {"http://api.example:8080", "http://10.0.0.1:6443/", "http://[fd00::1]:8080",
				 "http://localhost.example/", "http://127.0.0.1.example.com/", "http://127.evil/",
				 /* a user part: curl connects to the host after the '@' (review) */
				 "http://localhost:8001@evil.example", "http://127.0.0.1:1@evil.example:8080",
				 "http://[::1]@evil.example", "http://localhost:x@evil.example", "http://[::2]:8001"};
	const char *allowed[] = {"http://127.0.0.1:8001", "http://localhost:8001/", "http://[::1]:8001",
				 "https://api.example:6443"};
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
		struct xp_k8s_opts o = {.server = refused[i], .token_file = tok};
		struct xp_k8s_conf c;
		struct xp_err err = {{0}};
		ck_assert_msg(xp_k8s_conf_load(&o, &c, &err) < 0, "%s accepted", refused[i]);
		xp_want_parts(err.msg, "--k8s-server", "unencrypted", NULL);
		ck_assert_msg(!strstr(err.msg, "secret-token"), "%s", err.msg);
	}
	for (size_t i = 0; i < sizeof allowed / sizeof *allowed; i++) {
		struct xp_k8s_opts o = {.server = allowed[i], .token_file = tok};
		struct xp_k8s_conf c;
		struct xp_err err = {{0}};
		ck_assert_msg(xp_k8s_conf_load(&o, &c, &err) == 0, "%s: %s", allowed[i], err.msg);
		xp_k8s_conf_clear(&c);
	}
	/* Without a token, any http:// server is only a server. */
	struct xp_k8s_opts o = {.server = "http://api.example:8080"};
	struct xp_k8s_conf c;
	struct xp_err err = {{0}};
	ck_assert_msg(xp_k8s_conf_load(&o, &c, &err) == 0, "%s", err.msg);
	xp_k8s_conf_clear(&c);
	free(tok);
}
END_TEST

START_TEST(inventory_end_to_end)
{
	srv.token = "e2e-token";
	char *tok = xp_write_file(dir, "token", "e2e-token\n", 0600);
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
	struct xp_run r;
	xp_run_xpool(&r, NULL, "--k8s-server", url, "--k8s-token-file", tok, "--json", "inventory", NULL);
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	json_error_t je;
	json_t *j = json_loads(r.out, 0, &je);
	ck_assert_msg(j, "%s", je.text);
	json_t *nodes = json_object_get(j, "nodes");
	ck_assert_uint_eq(json_array_size(nodes), 7);
	xp_want_parts(r.out, "\"gpu-node-1\"", "ml/train-a", "NVIDIA-A100-SXM4-80GB", "k8s:http://127.0.0.1", "Ascend910",
		      NULL);
	json_decref(j);
	xp_run_free(&r);
	/* A refused token: exit 1 and the reason, never the token. */
	free(xp_write_file(dir, "token", "wrong\n", 0600));
	xp_run_xpool(&r, NULL, "--k8s-server", url, "--k8s-token-file", tok, "inventory", NULL);
	ck_assert_int_eq(r.status, 1);
	xp_want_parts(r.err, "GET /api/v1/nodes", "401 Unauthorized", NULL);
	ck_assert_ptr_null(strstr(r.err, "wrong"));
	xp_run_free(&r);
	/* --k8s: the same server through the kubeconfig's current context and its tokenFile. */
	free(xp_write_file(dir, "token", "e2e-token\n", 0600));
	char *kc_text = xp_asprintf("apiVersion: v1\nkind: Config\ncurrent-context: lab\n"
				    "clusters:\n- name: lab\n  cluster:\n    server: %s\n"
				    "contexts:\n- name: lab\n  context:\n    cluster: lab\n    user: me\n"
				    "users:\n- name: me\n  user:\n    tokenFile: token\n", url);
	char *kc = kubeconfig(kc_text);
	free(kc_text);
	setenv("KUBECONFIG", kc, 1);
	xp_run_xpool(&r, NULL, "--k8s", "--json", "inventory", NULL);
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	xp_want_parts(r.out, "\"dcu-node-7\"", "ml/infer-b", NULL);
	xp_run_free(&r);
	unsetenv("KUBECONFIG");
	free(kc);
	/* --k8s with a replay of one of its nodes: that node's hardware is the replay's, its pods'
	 * allocations Kubernetes', the count that differs a warning (a snapshot that is not one is
	 * an error; a topology file alone names no node). */
	char *rep = xp_replay_dgx(dir);
	free(xp_write_file(rep, "hostname", "gpu-node-1\n", 0644));
	xp_run_xpool(&r, NULL, "--k8s-server", url, "--k8s-token-file", tok, "--replay", rep, "--json", "inventory", NULL);
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	xp_want_parts(r.out, "\"gpu-node-1\"", "replay:", "\"engine\": \"k8s:http://127.0.0.1",
		      "k8s: capacity 8 NVIDIA-A100-SXM4-80GB but the replay", "\"dcu-node-7\"", NULL);
	xp_run_free(&r);
	free(rep);
	xp_run_xpool(&r, NULL, "--k8s-server", url, "--k8s-token-file", tok, "--inventory", tok, "inventory", NULL);
	ck_assert_int_ne(r.status, 0);
	xp_run_free(&r);
	xp_run_xpool(&r, NULL, "--k8s-server", url, "--topology", tok, "inventory", NULL);
	ck_assert_int_eq(r.status, 1);
	xp_want_parts(r.err, "--k8s and --topology", NULL);
	xp_run_free(&r);
	free(tok);
}
END_TEST

/* The console on the loopback API server: the header names the engine and view 1 lists its
 * nodes (a console started with --k8s-server used to show this machine: the options never
 * reached its poller). */
START_TEST(console_end_to_end)
{
	xp_tmux_test_socket();
	xp_tmux_kill_server(); /* a server a failed test left */
	srv.token = "console-token";
	char *tok = xp_write_file(dir, "token", "console-token\n", 0600);
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color XDG_STATE_HOME=%s %s --k8s-server "
		 "http://127.0.0.1:%d --k8s-token-file %s; echo $? > %s/rc",
		 dir, xp_bin(), port, tok, dir);
	xp_tmux_start(cmd, 200, 50);
	free(xp_tmux_wait_all(20, "k8s http://127.0.0.1", "gpu-node-1", NULL));
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
	xp_tmux_kill_server();
	free(tok);
}
END_TEST

XP_DEFINE_SUITE(k8s,
		{"client", .setup = setup, .teardown = teardown,
		 .tests = {list_pages, token_reread_on_401, no_reread_without_file, forbidden, gone_restarts_once,
			   list_trim, malformed_bodies, oversized_body}},
		{"nodes", .setup = setup, .teardown = teardown, .tests = {nodes_to_model, trims_keep_what_is_read, keep_is_the_trim, quantities}},
		{"kubeconfig", .setup = setup, .teardown = teardown,
		 .tests = {kubeconfig_contexts, kubeconfig_errors, kubeconfig_hostile, https_server, in_cluster,
			   token_not_over_http}},
		{"cli", .setup = setup, .teardown = teardown, .tests = {inventory_end_to_end}},
		{"console", .timeout_s = 60, .setup = setup, .teardown = teardown,
		 .setup_all = xp_tmux_runner_setup, .teardown_all = xp_tmux_runner_teardown,
		 .tests = {console_end_to_end}});
