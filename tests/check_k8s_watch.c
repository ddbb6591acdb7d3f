/* check_k8s_watch.c: the console's Kubernetes watches against a loopback API server that
 * serves lists with a resourceVersion and watches from one: the events after it as
 * newline-ended WatchEvents, bookmarks, a 410 Gone (an ERROR event, or the HTTP status) for a
 * version older than it keeps, and a malformed, cut or oversized event line. Then the header's
 * health words, and the console itself: a change arrives by a watch, not a second list. */
#include <check.h>
#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "k8s_client.h"
#include "k8s_config.h"
#include "k8s_nodes.h"
#include "k8s_watch.h"
#include "checklib.h"
#include "k8slib.h"
#include "live.h"
#include "suitelib.h"
#include "testlib.h"
#include "tmuxlib.h"
#include "xp.h"

enum wfault { W_NONE, W_MALFORMED, W_CUT, W_HUGE, W_HTTP410, W_BUSY };

/* What the server holds and what it saw; the tests run in their own processes, the server in
 * its own thread. */
static struct {
	pthread_mutex_t mu;
	json_t *items[2];  /* the Nodes and Pods now */
	json_t *log;       /* every change: {"rv", "kind" (0, 1), "type", "object"} */
	long rv;           /* the version now */
	long oldest;       /* a watch from a version below this one is answered 410 Gone */
	bool bookmarks;    /* a watch ends with a BOOKMARK of the version now */
	enum wfault fault; /* on watches of Nodes */
	int lists[2], watches[2];
	char watch_args[2][512]; /* the last watch's arguments, of each kind */
} srv;
static struct MHD_Daemon *daemon_;
static int port;
static char dir[128];

static const char *const paths[2] = {"/api/v1/nodes", "/api/v1/pods"};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *body)
{
	return xp_k8slib_reply(c, code, body, strlen(body), MHD_RESPMEM_MUST_COPY);
}

static enum MHD_Result arg_cat(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	(void)kind;
	char *buf = cls;
	size_t l = strlen(buf);
	snprintf(buf + l, 512 - l, "%s%s=%s", l ? "&" : "", key, value ? value : "");
	return MHD_YES;
}

static const char *GONE = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
			  "\"message\":\"too old resource version: 5 (100)\",\"reason\":\"Expired\",\"code\":410}";

/* The watch's body: the events of kind after rv, a bookmark, and the fault asked for. */
static char *watch_body(int k, long from, bool bookmarks)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	size_t i;
	json_t *e;
	json_array_foreach(srv.log, i, e) {
		if (json_integer_value(json_object_get(e, "kind")) != k || json_integer_value(json_object_get(e, "rv")) <= from)
			continue;
		json_t *ev = json_pack("{s:O,s:O}", "type", json_object_get(e, "type"), "object", json_object_get(e, "object"));
		char *line = json_dumps(ev, JSON_COMPACT);
		fprintf(f, "%s\n", line);
		free(line);
		json_decref(ev);
	}
	if (bookmarks && srv.bookmarks)
		fprintf(f, "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"%s\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"%ld\"}}}\n",
			k ? "Pod" : "Node", srv.rv);
	if (k == 0 && srv.fault == W_MALFORMED)
		fprintf(f, "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Node\"]\n");
	else if (k == 0 && srv.fault == W_CUT)
		fprintf(f, "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Node\",\"metadata\":{\"name\":\"gpu-n");
	else if (k == 0 && srv.fault == W_HUGE) {
		fprintf(f, "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Node\",\"metadata\":{\"name\":\"gpu-node-1\",\"resourceVersion\":\"%ld\",\"annotations\":{\"a\":\"", srv.rv);
		for (int j = 0; j < 200000; j++)
			fputc('x', f);
		fprintf(f, "\"}}}}\n");
	}
	fclose(f);
	return text;
}

/* A busy cluster's (or a hostile server's) stream of Nodes: an event every 20 ms, never ending. */
/* A never-quiet stream: bursts of events, each sent in two halves (a window's byte cap may
 * fall inside one). */
struct busy {
	long n;
	bool second;
	char line[256];
	size_t len;
};

static ssize_t busy_events(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct busy *b = cls;
	/* In bursts: several writes reach the client at once, so one read may carry it past a
	 * byte cap and on into the next event. */
	if (b->n % 8 == 0 && !b->second)
		usleep(40000);
	if (!b->second) {
		int k = snprintf(b->line, sizeof b->line,
				 "{\"type\":\"%s\",\"object\":{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":"
				 "{\"name\":\"busy-node\",\"resourceVersion\":\"%ld\"}}}\n",
				 b->n == 1000 ? "ADDED" : "MODIFIED", b->n);
		if (k <= 0 || (size_t)k >= sizeof b->line)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		b->len = (size_t)k;
		++b->n;
	}
	size_t half = b->len / 2, from = b->second ? half : 0, k = b->second ? b->len - half : half;
	b->second = !b->second;
	if (k > max)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	memcpy(buf, b->line + from, k);
	return (ssize_t)k;
}

/* While set, the server answers nothing yet (a slow API server). */
static atomic_bool hold;

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_len, void **state)
{
	(void)cls, (void)version, (void)upload, (void)upload_len, (void)state;
	for (int i = 0; i < 3000 && atomic_load(&hold); i++)
		usleep(10000);
	if (strcmp(method, "GET"))
		return reply(c, 405, "{}");
	int k = !strcmp(url, paths[0]) ? 0 : !strcmp(url, paths[1]) ? 1 : -1;
	if (k < 0)
		return reply(c, 404, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"NotFound\",\"code\":404}");
	const char *watch = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "watch");
	pthread_mutex_lock(&srv.mu);
	enum MHD_Result rc;
	if (watch && (!strcmp(watch, "1") || !strcmp(watch, "true"))) {
		srv.watches[k]++;
		srv.watch_args[k][0] = '\0';
		MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, arg_cat, srv.watch_args[k]);
		const char *rvs = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "resourceVersion");
		const char *bm = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "allowWatchBookmarks");
		long from = rvs ? strtol(rvs, NULL, 10) : 0;
		if (k == 0 && srv.fault == W_BUSY) {
			struct busy *b = xp_calloc(1, sizeof *b);
			b->n = 1000;
			struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, busy_events, b, free);
			MHD_add_response_header(r, "Content-Type", "application/json");
			rc = MHD_queue_response(c, 200, r);
			MHD_destroy_response(r);
		} else if (from < srv.oldest && srv.fault == W_HTTP410)
			rc = reply(c, 410, GONE);
		else if (from < srv.oldest) {
			/* What an API server does: 200, then an ERROR event holding the Status. */
			char *b = xp_asprintf("{\"type\":\"ERROR\",\"object\":%s}\n", GONE);
			rc = reply(c, 200, b);
			free(b);
		} else {
			char *b = watch_body(k, from, bm && !strcmp(bm, "true"));
			rc = reply(c, 200, b);
			free(b);
		}
	} else {
		srv.lists[k]++;
		json_t *list = xp_k8slib_page(srv.items[k], k ? "PodList" : "NodeList", 0, 0);
		char rv[32];
		snprintf(rv, sizeof rv, "%ld", srv.rv);
		json_object_set_new(json_object_get(list, "metadata"), "resourceVersion", json_string(rv));
		char *b = json_dumps(list, JSON_COMPACT);
		json_decref(list);
		rc = reply(c, 200, b);
		free(b);
	}
	pthread_mutex_unlock(&srv.mu);
	return rc;
}

/* A change of kind k on the server: the version moves on, the object (taken) gets it, the
 * lists hold the change and the log the event. */
static void change(int k, const char *type, json_t *obj)
{
	pthread_mutex_lock(&srv.mu);
	char rv[32];
	snprintf(rv, sizeof rv, "%ld", ++srv.rv);
	json_t *md = json_object_get(obj, "metadata");
	json_object_set_new(md, "resourceVersion", json_string(rv));
	const char *name = json_string_value(json_object_get(md, "name"));
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	json_t *items = srv.items[k];
	size_t i, at = (size_t)-1;
	json_t *o;
	json_array_foreach(items, i, o) {
		json_t *m = json_object_get(o, "metadata");
		const char *n2 = json_string_value(json_object_get(m, "name"));
		const char *ns2 = json_string_value(json_object_get(m, "namespace"));
		if (!strcmp(n2, name) && (!ns || (ns2 && !strcmp(ns, ns2))))
			at = i;
	}
	if (!strcmp(type, "DELETED")) {
		if (at != (size_t)-1)
			json_array_remove(items, at);
	} else if (at != (size_t)-1)
		json_array_set(items, at, obj);
	else
		json_array_append(items, obj);
	json_array_append_new(srv.log, json_pack("{s:I,s:i,s:s,s:o}", "rv", (json_int_t)srv.rv, "kind", k, "type", type, "object", obj));
	pthread_mutex_unlock(&srv.mu);
}

/* A copy of the served object of kind k named name (caller owns). */
static json_t *served(int k, const char *name)
{
	pthread_mutex_lock(&srv.mu);
	size_t i;
	json_t *o, *got = NULL;
	json_array_foreach(srv.items[k], i, o) if (!strcmp(json_string_value(json_object_get(json_object_get(o, "metadata"), "name")), name))
		got = json_deep_copy(o);
	pthread_mutex_unlock(&srv.mu);
	ck_assert_msg(got, "no %s served", name);
	return got;
}

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/xpool-k8sw-%d", (int)getpid());
	mkdir(dir, 0700);
	memset(&srv, 0, sizeof srv);
	pthread_mutex_init(&srv.mu, NULL);
	srv.items[0] = xp_k8slib_items("k8s/nodes.json");
	srv.items[1] = xp_k8slib_items("k8s/pods.json");
	srv.log = json_array();
	srv.rv = 100;
	daemon_ = xp_k8slib_serve(handle, NULL, &port);
	ck_assert_ptr_nonnull(daemon_);
	unsetenv("KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
}

static void teardown(void)
{
	if (daemon_)
		MHD_stop_daemon(daemon_);
	json_decref(srv.items[0]);
	json_decref(srv.items[1]);
	json_decref(srv.log);
	xp_rm_rf(dir);
}

/* Most bytes of one window (0: the default), for the test of that cap. */
static size_t watch_max_bytes;

/* Kept state over the loopback server; a window ends 100 ms after the stream goes quiet. */
static struct xp_k8s_watch *watcher(size_t max_event, const atomic_bool *cancel)
{
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
	struct xp_k8s_opts o = {.server = url};
	struct xp_k8s_conf conf;
	struct xp_err err = {{0}};
	ck_assert_msg(xp_k8s_conf_load(&o, &conf, &err) == 0, "%s", err.msg);
	struct xp_k8s_watch_opts wo = {.timeout_s = 1, .idle_ms = 100, .max_event = max_event, .cancel = cancel,
				       .max_bytes = watch_max_bytes};
	return xp_k8s_watch_new(xp_k8s_client_new(&conf, NULL), &wo);
}

static void poll_ok(struct xp_k8s_watch *w, bool want_changed)
{
	struct xp_err err = {{0}};
	bool changed;
	ck_assert_msg(xp_k8s_watch_poll(w, &changed, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(changed, want_changed);
}

static struct xp_node *node_named(struct xp_cluster *c, const char *name)
{
	for (size_t i = 0; i < c->n_nodes; i++)
		if (!strcmp(c->nodes[i]->name, name))
			return c->nodes[i];
	return NULL;
}

/* Devices of n held by owner. */
static int held_by(const struct xp_node *n, const char *owner)
{
	int k = 0;
	for (size_t i = 0; i < n->n_devices; i++)
		for (size_t j = 0; j < n->devices[i].n_allocs; j++)
			k += !strcmp(n->devices[i].allocs[j].owner, owner);
	return k;
}

static json_t *gpu_pod(const char *name, const char *node, const char *phase, int gpus)
{
	char n[8];
	snprintf(n, sizeof n, "%d", gpus);
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:{s:s,s:[{s:s,s:s,s:{s:{s:s}}}]},s:{s:s}}", "kind", "Pod", "apiVersion", "v1",
			 "metadata", "name", name, "namespace", "ml", "uid", name, "spec", "nodeName", node, "containers",
			 "name", "main", "image", "pytorch", "resources", "limits", "nvidia.com/gpu", n, "status", "phase", phase);
}

/* A list, then the changes by watch: a node cordoned, a pod bound, one deleted; the requests
 * are what an API server needs, and no second list is made. */
START_TEST(watch_applies_changes)
{
	struct xp_k8s_watch *w = watcher(0, NULL);
	poll_ok(w, true);
	ck_assert_int_eq(srv.lists[0], 1);
	ck_assert_int_eq(srv.lists[1], 1);
	ck_assert_uint_eq(xp_k8s_watch_count(w, XP_K8S_NODES), 7);
	/* The pods the list path keeps: bound, running or pending, asking for an accelerator. */
	ck_assert_uint_eq(xp_k8s_watch_count(w, XP_K8S_PODS), 4);
	ck_assert_str_eq(xp_k8s_watch_rv(w, XP_K8S_NODES), "100");
	json_t *n1 = served(0, "gpu-node-1");
	json_object_set_new(json_object_get(n1, "spec"), "unschedulable", json_true());
	change(0, "MODIFIED", n1);
	change(1, "ADDED", gpu_pod("new-e", "gpu-node-1", "Running", 1));
	change(1, "DELETED", served(1, "train-a"));
	poll_ok(w, true);
	ck_assert_int_eq(srv.lists[0] + srv.lists[1], 2);
	ck_assert_int_eq(srv.watches[0], 1);
	ck_assert_int_eq(srv.watches[1], 1);
	xp_want_parts(srv.watch_args[0], "watch=1", "resourceVersion=100", "allowWatchBookmarks=true", "timeoutSeconds=1", NULL);
	xp_want_parts(srv.watch_args[1], "resourceVersion=100", "fieldSelector=status.phase!=Succeeded,status.phase!=Failed", NULL);
	ck_assert_str_eq(xp_k8s_watch_rv(w, XP_K8S_NODES), "101");
	ck_assert_str_eq(xp_k8s_watch_rv(w, XP_K8S_PODS), "103");
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_k8s_watch_cluster(w, &err);
	ck_assert_msg(c, "%s", err.msg);
	struct xp_node *g = node_named(c, "gpu-node-1");
	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(g->state, XP_NODE_DRAINING);
	ck_assert_int_eq(held_by(g, "ml/new-e"), 1);
	ck_assert_int_eq(held_by(g, "ml/train-a"), 0);
	xp_cluster_free(c);
	/* Nothing new: a window that reads nothing changes nothing. */
	poll_ok(w, false);
	struct xp_k8s_watch_health h;
	xp_k8s_watch_health(w, &h);
	ck_assert_str_eq(h.state, "watching");
	ck_assert(h.ok);
	ck_assert_uint_eq(h.lists, 2);
	ck_assert_uint_eq(h.watches, 4);
	ck_assert_int_eq(srv.lists[0] + srv.lists[1], 2);
	xp_k8s_watch_free(w);
}
END_TEST

/* A bookmark moves the version on without a change; a pod that finishes leaves the kept set. */
START_TEST(watch_bookmarks_and_finished_pods)
{
	srv.bookmarks = true;
	struct xp_k8s_watch *w = watcher(0, NULL);
	poll_ok(w, true);
	srv.rv = 150; /* other objects changed: the bookmark says how far the server is */
	poll_ok(w, false);
	ck_assert_str_eq(xp_k8s_watch_rv(w, XP_K8S_NODES), "150");
	ck_assert_str_eq(xp_k8s_watch_rv(w, XP_K8S_PODS), "150");
	json_t *p = served(1, "train-a");
	json_object_set_new(json_object_get(p, "status"), "phase", json_string("Succeeded"));
	change(1, "MODIFIED", p);
	poll_ok(w, true);
	ck_assert_uint_eq(xp_k8s_watch_count(w, XP_K8S_PODS), 3);
	ck_assert_str_eq(xp_k8s_watch_rv(w, XP_K8S_PODS), "151");
	ck_assert_int_eq(srv.lists[0] + srv.lists[1], 2);
	xp_k8s_watch_free(w);
}
END_TEST

/* A version the server no longer keeps: 410 Gone as an ERROR event (what an API server sends)
 * or as the HTTP status; the state is listed again at once, with the changes. */
START_TEST(watch_gone_relists)
{
	for (int http = 0; http < 2; http++) {
		struct xp_k8s_watch *w = watcher(0, NULL);
		int lists0 = srv.lists[0] + srv.lists[1];
		poll_ok(w, true);
		json_t *n1 = served(0, "gpu-node-1");
		json_object_set_new(json_object_get(n1, "spec"), "unschedulable", json_true());
		change(0, "MODIFIED", n1);
		srv.oldest = srv.rv + 1; /* compacted past what the watcher holds */
		srv.fault = http ? W_HTTP410 : W_NONE;
		poll_ok(w, true);
		ck_assert_int_eq(srv.lists[0] + srv.lists[1], lists0 + 4);
		struct xp_k8s_watch_health h;
		xp_k8s_watch_health(w, &h);
		ck_assert_str_eq(h.state, "re-listed after 410 Gone");
		char rv[32];
		snprintf(rv, sizeof rv, "%ld", srv.rv);
		ck_assert_str_eq(xp_k8s_watch_rv(w, XP_K8S_NODES), rv);
		struct xp_err err = {{0}};
		struct xp_cluster *c = xp_k8s_watch_cluster(w, &err);
		ck_assert_int_eq(node_named(c, "gpu-node-1")->state, XP_NODE_DRAINING);
		xp_cluster_free(c);
		srv.oldest = 0;
		srv.fault = W_NONE;
		poll_ok(w, false);
		xp_k8s_watch_health(w, &h);
		ck_assert_str_eq(h.state, "watching");
		xp_k8s_watch_free(w);
	}
}
END_TEST

/* A malformed event, a stream cut inside one, an event past the cap: the error is named in
 * the state and the watcher lists again rather than trust what follows. */
START_TEST(watch_bad_streams)
{
	static const struct {
		enum wfault f;
		const char *words;
	} t[] = {{W_MALFORMED, "a malformed event"},
		 {W_CUT, "the stream ended inside an event"},
		 {W_HUGE, "an event larger than 65536 bytes"}};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		srv.fault = W_NONE;
		struct xp_k8s_watch *w = watcher(65536, NULL);
		int lists0 = srv.lists[0] + srv.lists[1];
		poll_ok(w, true);
		srv.fault = t[i].f;
		poll_ok(w, true);
		ck_assert_int_eq(srv.lists[0] + srv.lists[1], lists0 + 4);
		struct xp_k8s_watch_health h;
		xp_k8s_watch_health(w, &h);
		xp_want_parts(h.state, "watch failed: GET /api/v1/nodes (watch): ", t[i].words, "; re-listed", NULL);
		ck_assert_uint_eq(xp_k8s_watch_count(w, XP_K8S_NODES), 7);
		xp_k8s_watch_free(w);
	}
}
END_TEST

/* A cancel (the console leaving) ends the window with an error and keeps the state: no list. */
START_TEST(watch_cancel)
{
	atomic_bool cancel;
	atomic_init(&cancel, false);
	struct xp_k8s_watch *w = watcher(0, &cancel);
	poll_ok(w, true);
	atomic_store(&cancel, true);
	struct xp_err err = {{0}};
	bool changed;
	ck_assert_int_lt(xp_k8s_watch_poll(w, &changed, &err), 0);
	xp_want_parts(err.msg, "cancelled", NULL);
	atomic_store(&cancel, false);
	poll_ok(w, false);
	ck_assert_int_eq(srv.lists[0] + srv.lists[1], 2);
	xp_k8s_watch_free(w);
}
END_TEST

/* A stream that never goes quiet nor ends (a busy cluster, or a hostile server): the window
 * still ends (timeoutSeconds and a second), its events applied, and no list is made; the next
 * window goes on from the last event. */
START_TEST(watch_busy_stream)
{
	struct xp_k8s_watch *w = watcher(0, NULL);
	poll_ok(w, true);
	srv.fault = W_BUSY;
	poll_ok(w, true);
	ck_assert_uint_eq(xp_k8s_watch_count(w, XP_K8S_NODES), 8);
	long rv = strtol(xp_k8s_watch_rv(w, XP_K8S_NODES), NULL, 10);
	ck_assert_int_gt(rv, 1000);
	ck_assert_int_eq(srv.lists[0] + srv.lists[1], 2);
	struct xp_k8s_watch_health h;
	xp_k8s_watch_health(w, &h);
	ck_assert_str_eq(h.state, "watching");
	srv.fault = W_NONE;
	xp_k8s_watch_free(w);
}
END_TEST

/* A window that reaches its byte cap inside an event ends there: the whole events before it
 * are kept and the rest wait for the next window, with no error and no list again (review:
 * the cut event read as a broken stream, and every busy window listed everything again). */
START_TEST(watch_byte_cap)
{
	watch_max_bytes = 3000;
	struct xp_k8s_watch *w = watcher(0, NULL);
	watch_max_bytes = 0;
	poll_ok(w, true);
	srv.fault = W_BUSY;
	poll_ok(w, true);
	/* Some whole events came (the stream starts at 1000), and fewer than the byte cap lets. */
	long rv = strtol(xp_k8s_watch_rv(w, XP_K8S_NODES), NULL, 10);
	ck_assert_int_ge(rv, 1000);
	ck_assert_int_lt(rv, 1000 + 3000 / 100);
	poll_ok(w, true);
	ck_assert_int_eq(srv.lists[0] + srv.lists[1], 2);
	struct xp_k8s_watch_health h;
	xp_k8s_watch_health(w, &h);
	ck_assert_str_eq(h.state, "watching");
	srv.fault = W_NONE;
	xp_k8s_watch_free(w);
}
END_TEST

/* The events themselves, without a server: kept by name, trimmed, the version followed; what
 * cannot be kept is an error that names why. */
START_TEST(watch_events_unit)
{
	struct xp_k8s_opts o = {.server = "http://127.0.0.1:9"};
	struct xp_k8s_conf conf;
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_k8s_conf_load(&o, &conf, &err), 0);
	struct xp_k8s_watch *w = xp_k8s_watch_new(xp_k8s_client_new(&conf, NULL), NULL);
	/* Each event its own object, as each line decodes to one: the trim cuts it in place. */
	for (int i = 0; i < 2; i++) {
		json_t *n = json_deep_copy(json_array_get(srv.items[0], 0));
		json_object_set_new(json_object_get(n, "metadata"), "resourceVersion", json_string(i ? "7" : "6"));
		ck_assert_int_eq(xp_k8s_watch_event(w, XP_K8S_NODES, i ? "MODIFIED" : "ADDED", n, &err), 0);
		json_decref(n);
	}
	ck_assert_uint_eq(xp_k8s_watch_count(w, XP_K8S_NODES), 1);
	ck_assert_str_eq(xp_k8s_watch_rv(w, XP_K8S_NODES), "7");
	json_t *p = gpu_pod("a", "gpu-node-1", "Running", 1);
	json_object_set_new(json_object_get(p, "metadata"), "resourceVersion", json_string("8"));
	ck_assert_int_eq(xp_k8s_watch_event(w, XP_K8S_PODS, "ADDED", p, &err), 0);
	ck_assert_uint_eq(xp_k8s_watch_count(w, XP_K8S_PODS), 1);
	/* Kept trimmed, as a list keeps it: the image is gone. */
	json_t *c0 = json_array_get(json_object_get(json_object_get(p, "spec"), "containers"), 0);
	ck_assert_ptr_nonnull(json_object_get(c0, "resources"));
	ck_assert_ptr_null(json_object_get(c0, "image"));
	json_decref(p);
	p = gpu_pod("a", "gpu-node-1", "Running", 1);
	json_object_set_new(json_object_get(p, "metadata"), "resourceVersion", json_string("9"));
	ck_assert_int_eq(xp_k8s_watch_event(w, XP_K8S_PODS, "DELETED", p, &err), 0);
	ck_assert_uint_eq(xp_k8s_watch_count(w, XP_K8S_PODS), 0);
	ck_assert_str_eq(xp_k8s_watch_rv(w, XP_K8S_PODS), "9");
	json_decref(p);
	json_t *bm = json_pack("{s:s,s:{s:s}}", "kind", "Node", "metadata", "resourceVersion", "12");
	ck_assert_int_eq(xp_k8s_watch_event(w, XP_K8S_NODES, "BOOKMARK", bm, &err), 0);
	ck_assert_str_eq(xp_k8s_watch_rv(w, XP_K8S_NODES), "12");
	json_decref(bm);
	json_t *norv = json_pack("{s:s,s:{s:s}}", "kind", "Node", "metadata", "name", "x");
	ck_assert_int_lt(xp_k8s_watch_event(w, XP_K8S_NODES, "ADDED", norv, &err), 0);
	xp_want_parts(err.msg, "without metadata.resourceVersion", NULL);
	json_decref(norv);
	json_t *noname = json_pack("{s:s,s:{s:s}}", "kind", "Node", "metadata", "resourceVersion", "13");
	ck_assert_int_lt(xp_k8s_watch_event(w, XP_K8S_NODES, "ADDED", noname, &err), 0);
	xp_want_parts(err.msg, "without metadata.name", NULL);
	json_decref(noname);
	json_t *other = json_pack("{s:s,s:{s:s,s:s}}", "kind", "Pod", "metadata", "name", "x", "resourceVersion", "14");
	ck_assert_int_lt(xp_k8s_watch_event(w, XP_K8S_NODES, "ADDED", other, &err), 0);
	xp_want_parts(err.msg, "of another kind", NULL);
	json_decref(other);
	ck_assert_str_eq(xp_k8s_watch_rv(w, XP_K8S_NODES), "12");
	struct xp_cluster *c = xp_k8s_watch_cluster(w, &err);
	ck_assert_ptr_null(c); /* nothing listed yet */
	xp_k8s_watch_free(w);
}
END_TEST

/* The header's words for an engine. */
START_TEST(health_words)
{
	char b[256];
	struct xp_live_health h = {.engine = "k8s", .ok = true, .listed = 1000, .state = "watching"};
	xp_live_health_words(&h, 1012, b, sizeof b);
	ck_assert_str_eq(b, "watching, listed 12s ago");
	snprintf(h.state, sizeof h.state, "listed");
	xp_live_health_words(&h, 1000 + 600, b, sizeof b);
	ck_assert_str_eq(b, "listed 10m ago");
	snprintf(h.state, sizeof h.state, "re-listed after 410 Gone");
	xp_live_health_words(&h, 1001, b, sizeof b);
	ck_assert_str_eq(b, "re-listed after 410 Gone, listed 1s ago");
	h.ok = false;
	snprintf(h.error, sizeof h.error, "GET /api/v1/nodes: Connection refused");
	xp_live_health_words(&h, 1000 + 7200, b, sizeof b);
	ck_assert_str_eq(b, "failed: GET /api/v1/nodes: Connection refused; listed 2h ago");
	struct xp_live_health s = {.engine = "slurm", .ok = true, .listed = 1000};
	xp_live_health_words(&s, 1003, b, sizeof b);
	ck_assert_str_eq(b, "read 3s ago");
}
END_TEST

/* The console's source (live.c) over an engine: a Kubernetes server is listed once, then
 * watched, and a refresh with no event says "unchanged" without building the cluster again;
 * the health says so. A server that does not answer and a Slurm that cannot be read: the
 * health holds the error. */
START_TEST(live_engine_health)
{
	atomic_bool cancel;
	atomic_init(&cancel, false);
	struct xp_live *l = xp_live_new(&cancel);
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
	struct xp_source_opts so = {.k8s_server = url};
	struct xp_err err = {{0}};
	bool unchanged;
	struct xp_cluster *c = xp_live_load(l, &so, NULL, NULL, 0, true, &unchanged, &err);
	ck_assert_msg(c, "%s", err.msg);
	ck_assert_uint_eq(c->n_nodes, 7);
	xp_cluster_free(c);
	struct xp_live_health h;
	ck_assert(xp_live_health(l, &h));
	ck_assert_str_eq(h.engine, "k8s");
	ck_assert(h.ok);
	ck_assert_str_eq(h.state, "listed");
	ck_assert_uint_eq(h.lists, 2);
	c = xp_live_load(l, &so, NULL, NULL, 0, false, &unchanged, &err);
	ck_assert_ptr_null(c);
	ck_assert(unchanged);
	ck_assert(xp_live_health(l, &h));
	ck_assert_str_eq(h.state, "watching");
	ck_assert_uint_eq(h.watches, 2);
	change(0, "DELETED", served(0, "cpu-node-5"));
	c = xp_live_load(l, &so, NULL, NULL, 0, false, &unchanged, &err);
	ck_assert_msg(c, "%s", err.msg);
	ck_assert_uint_eq(c->n_nodes, 6);
	xp_cluster_free(c);
	ck_assert_int_eq(srv.lists[0] + srv.lists[1], 2);
	/* The server goes away: the load fails and the health says why. */
	MHD_stop_daemon(daemon_);
	daemon_ = NULL;
	c = xp_live_load(l, &so, NULL, NULL, 0, false, &unchanged, &err);
	ck_assert_ptr_null(c);
	ck_assert(!unchanged);
	ck_assert(xp_live_health(l, &h));
	ck_assert(!h.ok);
	xp_want_parts(h.error, "GET /api/v1/nodes", NULL);
	xp_live_free(l);
	/* A Slurm whose client is not there (this test's own process: PATH is its own). */
	l = xp_live_new(&cancel);
	setenv("PATH", dir, 1);
	struct xp_source_opts ss = {.slurm = ""};
	c = xp_live_load(l, &ss, NULL, NULL, 0, true, &unchanged, &err);
	ck_assert_ptr_null(c);
	ck_assert(xp_live_health(l, &h));
	ck_assert_str_eq(h.engine, "slurm");
	ck_assert(!h.ok);
	xp_want_parts(h.error, "scontrol", NULL);
	xp_live_free(l);
	/* No engine, no health. */
	l = xp_live_new(&cancel);
	ck_assert(!xp_live_health(l, &h));
	xp_live_free(l);
}
END_TEST

/* The console: the first refresh lists, the next ones watch; a node the server adds arrives
 * by a watch (the header counts it, view 1 lists it) while the server sees no second list;
 * the header says the watch's state, on an 80-column line too. */
START_TEST(console_watches)
{
	xp_tmux_test_socket();
	xp_tmux_kill_server(); /* a server a failed test left */
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color XDG_STATE_HOME=%s %s --delay 0.5 --k8s-server "
		 "http://127.0.0.1:%d; echo $? > %s/rc",
		 dir, xp_bin(), port, dir);
	/* Before the first list comes back the header names the engine, not this machine
	 * (review: it said "local HOST" until the first answer). */
	atomic_store(&hold, true);
	xp_tmux_start(cmd, 200, 50);
	char *first = xp_tmux_wait("k8s http://127.0.0.1", false, 30);
	ck_assert_msg(!strstr(first, " local "), "%s", first);
	free(first);
	atomic_store(&hold, false);
	free(xp_tmux_wait_all(20, "^k8s http://127.0.0.1", "^watching, listed", "^7 nodes", "gpu-node-1", NULL));
	json_t *n8 = served(0, "gpu-node-1");
	json_t *md = json_object_get(n8, "metadata");
	json_object_set_new(md, "name", json_string("gpu-node-8"));
	change(0, "ADDED", n8);
	free(xp_tmux_wait_all(20, "^8 nodes", "gpu-node-8", "^watching, listed", NULL));
	pthread_mutex_lock(&srv.mu);
	int lists = srv.lists[0] + srv.lists[1], watches = srv.watches[0];
	pthread_mutex_unlock(&srv.mu);
	ck_assert_int_eq(lists, 2);
	ck_assert_int_ge(watches, 2);
	/* 80 columns: where the server is gives way to the health. */
	xp_tmux_resize(80, 30);
	free(xp_tmux_wait_all(20, "^k8s watching, listed", NULL));
	/* The server compacts: the next watch is answered 410 and the console lists again. */
	pthread_mutex_lock(&srv.mu);
	srv.oldest = srv.rv + 1;
	pthread_mutex_unlock(&srv.mu);
	xp_tmux_resize(200, 50);
	free(xp_tmux_wait_all(20, "^re-listed after 410 Gone", NULL));
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
	xp_tmux_kill_server();
}
END_TEST

XP_DEFINE_SUITE(k8s_watch,
		{"watch", .setup = setup, .teardown = teardown,
		 .tests = {watch_applies_changes, watch_bookmarks_and_finished_pods, watch_gone_relists, watch_bad_streams,
			   watch_cancel, watch_busy_stream, watch_byte_cap, watch_events_unit, health_words, live_engine_health}},
		{"console", .timeout_s = 60, .setup = setup, .teardown = teardown,
		 .setup_all = xp_tmux_runner_setup, .teardown_all = xp_tmux_runner_teardown,
		 .tests = {console_watches}});
