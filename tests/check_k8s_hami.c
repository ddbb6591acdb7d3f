/* check_k8s_hami.c: HAMi's node register annotations and the pod annotations of HAMi and of
 * Huawei's Ascend device plugin, decoded (both register forms, the malformed ones HAMi's own
 * tests feed it) and read into the model from tests/fixtures/k8s/hami_*.json, whose strings
 * come from those projects' docs and tests (tests/fixtures/SOURCES.md); then end to end
 * through `xpool --k8s-server URL --json inventory` on a loopback API server. */
#include <check.h>
#include <jansson.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checklib.h"
#include "k8s_client.h"
#include "k8s_config.h"
#include "k8s_hami.h"
#include "k8s_nodes.h"
#include "k8slib.h"
#include "model_json.h"
#include "suitelib.h"
#include "testlib.h"
#include "xp.h"

#define V100_A "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec"
#define V100_B "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448"

static struct {
	json_t *nodes, *pods;
} srv;
static struct MHD_Daemon *daemon_;
static int port;

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_len, void **state)
{
	(void)cls, (void)method, (void)version, (void)upload, (void)upload_len, (void)state;
	json_t *items = !strcmp(url, "/api/v1/nodes") ? srv.nodes : !strcmp(url, "/api/v1/pods") ? srv.pods : NULL;
	if (!items)
		return xp_k8slib_reply(c, 404, "{\"kind\":\"Status\",\"code\":404}", 28, MHD_RESPMEM_MUST_COPY);
	const char *lim = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit");
	const char *cont = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "continue");
	size_t from = 0;
	if (cont && xp_k8slib_page_from(cont, &from))
		return xp_k8slib_reply(c, 400, "{}", 2, MHD_RESPMEM_MUST_COPY);
	json_t *list = xp_k8slib_page(items, items == srv.nodes ? "NodeList" : "PodList", from, lim ? strtoul(lim, NULL, 10) : 0);
	char *body = json_dumps(list, JSON_COMPACT);
	json_decref(list);
	return xp_k8slib_reply(c, 200, body, strlen(body), MHD_RESPMEM_MUST_FREE);
}

static void setup(void)
{
	srv.nodes = xp_k8slib_items("k8s/hami_nodes.json");
	srv.pods = xp_k8slib_items("k8s/hami_pods.json");
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
}

/* The node's warning holding every part, or a failure listing them. */
static void want_warning(const struct xp_node *n, const char *a, const char *b)
{
	for (size_t i = 0; i < n->n_warnings; i++)
		if (strstr(n->warnings[i], a) && (!b || strstr(n->warnings[i], b)))
			return;
	ck_abort_msg("%s: no warning with '%s' and '%s' among %zu", n->name, a, b ? b : "", n->n_warnings);
}

START_TEST(decode_register_forms)
{
	struct xp_hami_dev *d;
	size_t n;
	const char *why = NULL;
	/* HAMi docs/develop/protocol.md: the colon form, 7 fields a device. */
	ck_assert_int_eq(xp_hami_decode_node(V100_A ",10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:" V100_B
					     ",10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:",
					     &d, &n, &why),
			 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(d[1].id, V100_B);
	ck_assert_int_eq(d[1].count, 10);
	ck_assert_int_eq(d[1].devmem, 32768);
	ck_assert_int_eq(d[1].devcore, 100);
	ck_assert_str_eq(d[1].type, "NVIDIA-Tesla V100-PCIE-32GB");
	ck_assert(d[1].health);
	ck_assert_int_eq(d[1].index, -1);
	ck_assert_ptr_null(d[1].mode);
	xp_hami_devs_free(d, n);
	/* HAMi pkg/device/hygon/device_test.go: 9 fields (index, mode). */
	ck_assert_int_eq(xp_hami_decode_node("test-0,1,1024,100,DCU,0,true,0,test:", &d, &n, &why), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(d[0].index, 0);
	ck_assert_str_eq(d[0].mode, "test");
	xp_hami_devs_free(d, n);
	/* HAMi pkg/device/nvidia/device_test.go: the JSON HAMi writes now, MIG profiles included. */
	ck_assert_int_eq(xp_hami_decode_node("[{\"id\":\"GPU-0\",\"count\":7,\"devmem\":40960,\"devcore\":100,\"type\":\"NVIDIA-"
					     "A100-SXM4-40GB\",\"numa\":0,\"health\":true,\"mode\":\"mig\",\"migProfiles\":[{\"name\":"
					     "\"1g.5gb\",\"memoryMB\":5120,\"core\":14,\"sliceCount\":1,\"instanceCount\":7,"
					     "\"multiprocessorCount\":14,\"placements\":[{\"start\":6,\"size\":1}]}]}]",
					     &d, &n, &why),
			 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(d[0].count, 7);
	ck_assert_int_eq(d[0].devmem, 40960);
	ck_assert_str_eq(d[0].mode, "mig");
	ck_assert_int_eq(d[0].index, -1);
	xp_hami_devs_free(d, n);
	/* index 0 left out by omitempty where another device says its index. */
	ck_assert_int_eq(xp_hami_decode_node("[{\"id\":\"a\",\"health\":true},{\"id\":\"b\",\"index\":1}]", &d, &n, &why), 0);
	ck_assert_int_eq(d[0].index, 0);
	ck_assert_int_eq(d[1].index, 1);
	ck_assert(!d[1].health); /* left out: false, as Go reads it */
	xp_hami_devs_free(d, n);
	/* HAMi pkg/device/ascend/device_test.go: Go matches field names in any case. */
	ck_assert_int_eq(xp_hami_decode_node("[{\"ID\":\"GPU-0\",\"Count\":4,\"Devmem\":8738,\"Devcore\":8,\"Type\":"
					     "\"huawei.com/Ascend910\",\"Numa\":0,\"Health\":true}]",
					     &d, &n, &why),
			 0);
	ck_assert_str_eq(d[0].id, "GPU-0");
	ck_assert_int_eq(d[0].count, 4);
	ck_assert_int_eq(d[0].devcore, 8);
	ck_assert(d[0].health);
	xp_hami_devs_free(d, n);
}
END_TEST

START_TEST(decode_malformed)
{
	/* The first four are HAMi's own tests' bad annotations (nvidia and hygon device_test.go). */
	static const char *const bad[] = {
		"not-valid-json", "test-0,1,1024,100,DCU:", ":", "", "[]", "[1,2]", "{\"id\":\"GPU-0\"}",
		"[{\"id\":\"GPU-0\",\"count\":\"5\"}]", "[{\"count\":5}]", "[{\"id\":\"\"}]",
		"[{\"id\":\"GPU-0\",\"count\":99999999999}]", "GPU-0,99999999999,1,1,T,0,true:", "GPU-0,-1,1,1,T,0,true:",
		"GPU-0,1,1,1,T,0,maybe:", "GPU-0,1,1,1,T,0,true,-1,x:", "GPU-0,1,1,1,T,0,true:GPU-0,1,1,1,T,0,true:",
		"[{\"id\":\"a\",\"health\":\"yes\"}]", "[{\"id\":\"a\"},{\"id\":\"a\"}]", "[{\"id\":\"a\",\"id\":\"b\"}]",
		"GPU-0,1,1,1,T,0,true", "GPU-0,0x10,1,1,T,0,true:", "[{\"id\":\"a\",\"index\":-3}]", "[[[[[[[[[[[",
		",1,1,1,T,0,true:",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct xp_hami_dev *d = (void *)1;
		size_t n = 7;
		const char *why = NULL;
		ck_assert_msg(xp_hami_decode_node(bad[i], &d, &n, &why) < 0, "accepted: %s", bad[i]);
		ck_assert_ptr_nonnull(why);
		ck_assert_ptr_null(d);
		ck_assert_uint_eq(n, 0);
	}
	/* Every prefix of a good annotation of each form: decoded or refused, never more. */
	static const char *const good[] = {
		V100_A ",10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:test-0,1,1024,100,DCU,0,true,0,test:",
		"[{\"ID\":\"GPU-0\",\"Count\":4,\"Devmem\":8738,\"Devcore\":8,\"Type\":\"huawei.com/Ascend910\",\"Health\":true}]",
		"GPU-0fc3eda5,NVIDIA,3000,0:;GPU-0fc3eda5,NVIDIA,5000,0:;"};
	for (size_t g = 0; g < sizeof good / sizeof good[0]; g++)
		for (size_t l = 0; l <= strlen(good[g]); l++) {
			char *p = xp_strndup(good[g], l);
			struct xp_hami_dev *d;
			struct xp_hami_use *u;
			size_t n;
			const char *why;
			if (xp_hami_decode_node(p, &d, &n, &why) == 0)
				xp_hami_devs_free(d, n);
			if (xp_hami_decode_pod(p, &u, &n, &why) == 0)
				xp_hami_uses_free(u, n);
			free(p);
		}
	/* More devices than a node holds. */
	char *big = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&big, &len);
	for (int i = 0; i < XP_MAX_DEVICES + 1; i++)
		fprintf(f, "GPU-%d,10,1,1,T,0,true:", i);
	fclose(f);
	struct xp_hami_dev *d;
	size_t n;
	const char *why;
	ck_assert_int_lt(xp_hami_decode_node(big, &d, &n, &why), 0);
	free(big);
	/* Pods: HAMi plugin/util_test.go's empty containers are fine; a number that is not one,
	 * or too few fields, is not. */
	struct xp_hami_use *u;
	ck_assert_int_eq(xp_hami_decode_pod("GPU-init1,NVIDIA,500,10:;;", &u, &n, &why), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(u[0].uuid, "GPU-init1");
	ck_assert_int_eq(u[0].usedmem, 500);
	ck_assert_int_eq(u[0].usedcores, 10);
	xp_hami_uses_free(u, n);
	ck_assert_int_eq(xp_hami_decode_pod(";;GPU-main1,NVIDIA,2000,50:;", &u, &n, &why), 0);
	ck_assert_uint_eq(n, 1);
	xp_hami_uses_free(u, n);
	ck_assert_int_eq(xp_hami_decode_pod("GPU-aaa,NVIDIA,3000,50:;GPU-bbb,NVIDIA,4000,60:;", &u, &n, &why), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(u[1].uuid, "GPU-bbb");
	xp_hami_uses_free(u, n);
	static const char *const badpod[] = {"GPU-x,NVIDIA,lots,0:;", "GPU-x,NVIDIA:;", ",NVIDIA,1,1:",
					     "GPU-x,NVIDIA,1,99999999999:", "GPU-x,NVIDIA,-5,0:"};
	for (size_t i = 0; i < sizeof badpod / sizeof badpod[0]; i++) {
		u = (void *)1;
		ck_assert_msg(xp_hami_decode_pod(badpod[i], &u, &n, &why) < 0, "accepted: %s", badpod[i]);
		ck_assert_ptr_null(u);
	}
}
END_TEST

/* The device of n whose uuid is id. */
static const struct xp_device *dev(const struct xp_node *n, const char *id)
{
	for (size_t i = 0; i < n->n_devices; i++)
		if (n->devices[i].uuid && !strcmp(n->devices[i].uuid, id))
			return &n->devices[i];
	ck_abort_msg("%s: no device %s", n->name, id);
	return NULL;
}

/* What the fixtures make: each device by its uuid, each pod on the devices it names. */
static void check_cluster(const struct xp_cluster *c)
{
	ck_assert_uint_eq(c->n_nodes, 6);
	/* protocol.md's two V100s split 10 ways: capacity 20 counts their shares. */
	const struct xp_node *g1 = xp_cluster_node(c, "hami-gpu-1");
	ck_assert_uint_eq(g1->n_devices, 2);
	const struct xp_device *a = dev(g1, V100_A), *b = dev(g1, V100_B);
	ck_assert_str_eq(b->vendor, "NVIDIA");
	ck_assert_str_eq(b->model, "NVIDIA-Tesla V100-PCIE-32GB");
	ck_assert_int_eq(b->memory_mib, 32768);
	ck_assert_int_eq(b->numa, 0);
	ck_assert_int_eq(b->health, XP_HEALTH_OK);
	ck_assert(b->partition & XP_PART_SHARE);
	ck_assert_str_eq(xp_labels_get(&g1->facts, "hami.io/" V100_B), "split 10, cores 100");
	/* Two containers of ml/vgpu-a on the same GPU, no core limit: shares of its memory. */
	ck_assert_uint_eq(b->n_allocs, 2);
	ck_assert_str_eq(b->allocs[0].owner, "ml/vgpu-a");
	ck_assert_str_eq(b->allocs[0].slice, "share");
	ck_assert_int_eq(b->allocs[0].memory_mib, 3000);
	ck_assert_int_eq(b->allocs[0].share_pct, 10);
	ck_assert_int_eq(b->allocs[1].memory_mib, 5000);
	ck_assert_int_eq(b->allocs[1].share_pct, 16);
	/* ml/vgpu-bad's annotation is no decision: a warning, and its count held the old way. */
	want_warning(g1, "ml/vgpu-bad", "hami.io/vgpu-devices-allocated");
	ck_assert_uint_eq(a->n_allocs, 1);
	ck_assert_str_eq(a->allocs[0].owner, "ml/vgpu-bad");
	ck_assert_ptr_null(a->allocs[0].slice);
	for (size_t i = 0; i < g1->n_warnings; i++)
		ck_assert_msg(!strstr(g1->warnings[i], "capacity"), "%s", g1->warnings[i]);
	/* The JSON form; -allocated read, the emptied -to-allocate not; an unknown uuid warned. */
	const struct xp_node *g2 = xp_cluster_node(c, "hami-gpu-2");
	ck_assert_uint_eq(g2->n_devices, 2);
	ck_assert_int_eq(dev(g2, "GPU-0")->memory_mib, 8192);
	ck_assert(!(dev(g2, "GPU-0")->partition & XP_PART_SHARE));
	ck_assert_uint_eq(dev(g2, "GPU-0")->n_allocs, 0);
	const struct xp_device *g21 = dev(g2, "GPU-1");
	ck_assert_uint_eq(g21->n_allocs, 1);
	ck_assert_str_eq(g21->allocs[0].owner, "ml/vgpu-b");
	ck_assert_int_eq(g21->allocs[0].share_pct, 60);
	ck_assert_int_eq(g21->allocs[0].memory_mib, 4000);
	want_warning(g2, "ml/vgpu-c", "GPU-abc123");
	/* HAMi's Ascend: one 910A in four shares, its cores of 8. */
	const struct xp_node *npu = xp_cluster_node(c, "hami-npu-3");
	ck_assert_uint_eq(npu->n_devices, 1);
	const struct xp_device *n0 = dev(npu, "GPU-0");
	ck_assert_str_eq(n0->vendor, "Huawei");
	ck_assert_int_eq(n0->memory_mib, 8738);
	ck_assert_uint_eq(n0->n_allocs, 1);
	ck_assert_str_eq(n0->allocs[0].owner, "npu/vnpu-a");
	ck_assert_int_eq(n0->allocs[0].share_pct, 13);
	ck_assert_int_eq(n0->allocs[0].memory_mib, 8738);
	ck_assert_uint_eq(npu->n_warnings, 0);
	/* Hygon's 9-field register; all of a DCU's cores: the whole device. */
	const struct xp_node *dcu = xp_cluster_node(c, "hami-dcu-4");
	const struct xp_device *d0 = dev(dcu, "test-0");
	ck_assert_str_eq(d0->vendor, "Hygon");
	ck_assert_int_eq(d0->vendor_index, 0);
	ck_assert_uint_eq(d0->n_allocs, 1);
	ck_assert_ptr_null(d0->allocs[0].slice);
	ck_assert_int_eq(d0->allocs[0].share_pct, 0);
	ck_assert_int_eq(d0->allocs[0].memory_mib, 1024);
	ck_assert_uint_eq(dcu->n_devices, 1); /* hygon.com/dcumem is no device */
	/* The Ascend device plugin: chips by name, AscendReal before the scheduler's. */
	const struct xp_node *asc = xp_cluster_node(c, "ascend-node-5");
	ck_assert_uint_eq(asc->n_devices, 8);
	static const char *const owner[8] = {"npu/train-910", "npu/train-910", "npu/stray-910", NULL,
					     "npu/train-910-real", "npu/train-910-real", "npu/train-910-real",
					     "npu/train-910-real"};
	for (int i = 0; i < 8; i++) {
		const struct xp_device *d = &asc->devices[i];
		ck_assert_uint_eq(d->n_allocs, owner[i] ? 1 : 0);
		if (owner[i])
			ck_assert_str_eq(d->allocs[0].owner, owner[i]);
	}
	ck_assert_int_eq(asc->devices[5].vendor_index, 5);
	/* Ascend910-9 on a node of 8: a warning, and its count held the old way (chip 2). */
	want_warning(asc, "npu/stray-910", "Ascend910-9");
	/* Malformed registers: a warning naming each, the capacity's devices instead. */
	const struct xp_node *bad = xp_cluster_node(c, "bad-node-6");
	ck_assert_uint_eq(bad->n_devices, 6);
	want_warning(bad, "hami.io/node-dcu-register", "7 nor 9");
	want_warning(bad, "hami.io/node-nvidia-register", NULL);
}

START_TEST(fixtures_to_model)
{
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_k8s_build(srv.nodes, srv.pods, "k8s:test", &err);
	ck_assert_msg(c, "%s", err.msg);
	check_cluster(c);
	xp_cluster_free(c);
}
END_TEST

/* An annotation that names no device (emptied, "") decides nothing: the pod's count is held
 * as without it (review: the resource was marked handled and the pod held nothing). */
START_TEST(empty_annotation_holds_by_count)
{
	json_t *pods = json_deep_copy(srv.pods);
	size_t i;
	json_t *p;
	json_array_foreach(pods, i, p) {
		json_t *md = json_object_get(p, "metadata");
		if (strcmp(json_string_value(json_object_get(md, "name")), "vgpu-a") == 0)
			json_object_set_new(json_object_get(md, "annotations"), "hami.io/vgpu-devices-to-allocate",
					    json_string(""));
	}
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_k8s_build(srv.nodes, pods, "k8s:test", &err);
	ck_assert_msg(c, "%s", err.msg);
	const struct xp_node *g1 = xp_cluster_node(c, "hami-gpu-1");
	int held = 0;
	for (size_t d = 0; d < g1->n_devices; d++)
		for (size_t a = 0; a < g1->devices[d].n_allocs; a++)
			held += g1->devices[d].allocs[a].owner && !strcmp(g1->devices[d].allocs[a].owner, "ml/vgpu-a");
	ck_assert_int_ge(held, 1);
	xp_cluster_free(c);
	json_decref(pods);
}
END_TEST

/* A client for the loopback server, page items a page. */
static struct xp_k8s_client *client(size_t page)
{
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/", port);
	struct xp_k8s_opts o = {.server = url};
	struct xp_k8s_conf conf;
	struct xp_err err = {{0}};
	ck_assert_msg(xp_k8s_conf_load(&o, &conf, &err) == 0, "%s", err.msg);
	struct xp_k8s_client_opts co = {.page_limit = page, .timeout_s = 10};
	return xp_k8s_client_new(&conf, &co);
}

START_TEST(trims_keep_the_annotations)
{
	/* Through the client the lists are trimmed page by page: every annotation but HAMi's
	 * and the Ascend plugin's is dropped, and the cluster must be the one the whole
	 * objects make. Annotations nothing reads are added to show they go. */
	size_t i;
	json_t *o;
	json_array_foreach(srv.nodes, i, o) json_object_set_new(
		json_object_get(json_object_get(o, "metadata"), "annotations"), "kubectl.kubernetes.io/last-applied-configuration",
		json_string("{\"apiVersion\":\"v1\",\"kind\":\"Node\"}"));
	struct xp_k8s_client *cl = client(2);
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_k8s_cluster(cl, &err);
	ck_assert_msg(c, "%s", err.msg);
	check_cluster(c);
	xp_cluster_free(c);
	xp_k8s_client_free(cl);
	ck_assert(xp_hami_node_annotation("hami.io/node-nvidia-register"));
	ck_assert(xp_hami_node_annotation("hami.io/node-register-Ascend910B3"));
	ck_assert(!xp_hami_node_annotation("hami.io/node-handshake"));
	ck_assert(!xp_hami_node_annotation("hami.io/node-register-xpu")); /* Kunlun's: not read */
	ck_assert(!xp_hami_node_annotation("kubectl.kubernetes.io/last-applied-configuration"));
	ck_assert(xp_hami_pod_annotation("hami.io/vgpu-devices-allocated"));
	ck_assert(xp_hami_pod_annotation("hami.io/Ascend910B4-1-devices-to-allocate"));
	ck_assert(xp_hami_pod_annotation("huawei.com/Ascend910"));
	ck_assert(xp_hami_pod_annotation("huawei.com/AscendReal"));
	ck_assert(!xp_hami_pod_annotation("hami.io/vgpu-time"));
	ck_assert(!xp_hami_pod_annotation("huawei.com/kltDev"));
}
END_TEST

START_TEST(resource_names)
{
	/* HAMi's count of MLU shares is a device; its MLU memory and cores are not. */
	ck_assert_str_eq(xp_k8s_resource_vendor("cambricon.com/vmlu"), "Cambricon");
	ck_assert_ptr_null(xp_k8s_resource_vendor("cambricon.com/mlu.smlu.vmemory"));
	ck_assert_ptr_null(xp_k8s_resource_vendor("cambricon.com/mlu.smlu.vcore"));
	ck_assert_str_eq(xp_k8s_resource_vendor("huawei.com/Ascend910B4-1"), "Huawei");
	ck_assert_ptr_null(xp_k8s_resource_vendor("huawei.com/Ascend910B4-1-memory"));
	ck_assert_ptr_null(xp_k8s_resource_vendor("nvidia.com/gpumem-percentage"));
	ck_assert_ptr_null(xp_k8s_resource_vendor("nvidia.com/gpucores"));
}
END_TEST

START_TEST(inventory_end_to_end)
{
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
	struct xp_run r;
	xp_run_xpool(&r, NULL, "--k8s-server", url, "--json", "inventory", NULL);
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	json_error_t je;
	json_t *j = json_loads(r.out, 0, &je);
	ck_assert_msg(j, "%s", je.text);
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_cluster_from_json(j, &err);
	ck_assert_msg(c, "%s", err.msg);
	check_cluster(c);
	xp_cluster_free(c);
	json_decref(j);
	xp_want_parts(r.out, "\"uuid\": \"" V100_B "\"", "\"job\": \"ml/vgpu-a\"", "\"share\": 16", NULL);
	xp_run_free(&r);
}
END_TEST

XP_DEFINE_SUITE(k8s_hami, {"decode", .tests = {decode_register_forms, decode_malformed, resource_names}},
		{"model", .setup = setup, .teardown = teardown,
		 .tests = {fixtures_to_model, empty_annotation_holds_by_count, trims_keep_the_annotations,
			   inventory_end_to_end}});
