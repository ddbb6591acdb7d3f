/* fuzz_k8s_cluster.c: a Kubernetes list page (GET /api/v1/nodes or /api/v1/pods) as the k8s
 * backend reads it (backends/k8s_client.c, k8s_nodes.c, k8s_hami.c): decoded with what is kept
 * of a Node (xp_k8s_decode_list, xp_k8s_node_keep) and, the same bytes, of a Pod
 * (xp_k8s_pod_keep), each item trimmed (xp_k8s_trim_node, xp_k8s_trim_pod) and the whole built
 * into a cluster (xp_k8s_build: capacities, conditions, taints, GPU labels, HAMi's register
 * and allocation annotations). A list of Nodes and Pods at once (a v1 List) feeds both. The
 * page is also read as an error body (xp_k8s_status_text). */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "k8s_client.h"
#include "k8s_nodes.h"
#include "model.h"

/* The items of a page as the client's list keeps them: NULL when the page is refused. */
static json_t *items(const char *text, size_t size, const struct xp_k8s_keep *keep, bool (*trim)(json_t *))
{
	char msg[160] = "";
	json_t *page = xp_k8s_decode_list(text, size, keep, msg, sizeof msg);
	if (!page) {
		if (!msg[0])
			abort();
		return NULL;
	}
	json_t *it = json_object_get(page, "items");
	json_t *out = NULL;
	if (json_is_array(it)) {
		out = json_array();
		size_t i;
		json_t *x;
		json_array_foreach(it, i, x) if (trim(x)) json_array_append(out, x);
	}
	json_decref(page);
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xp_fuzz_str(data, size);
	char status[256];
	xp_k8s_status_text(text, status, sizeof status);
	if (strnlen(status, sizeof status) >= sizeof status)
		abort();
	json_t *nodes = items(text, size, xp_k8s_node_keep, xp_k8s_trim_node);
	json_t *pods = items(text, size, xp_k8s_pod_keep, xp_k8s_trim_pod);
	if (nodes) {
		struct xp_err err = {{0}};
		if (!pods)
			pods = json_array(); /* the program lists Pods too: a list, maybe empty */
		struct xp_cluster *c = xp_k8s_build(nodes, pods, "k8s:fuzz", &err);
		if (!c && !err.msg[0])
			abort();
		xp_cluster_free(c);
	}
	json_decref(nodes);
	json_decref(pods);
	free(text);
	return 0;
}
