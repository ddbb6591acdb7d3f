/* fuzz_k8s_queues.c: the queue engines' lists as the k8s backend reads them
 * (backends/k8s_queues.c, xp_k8s_build_queues): Volcano Queues and PodGroups, Kueue
 * ClusterQueues, LocalQueues and Workloads. The input is one list page (the client decodes it
 * whole: json_loadb), put in the slot its kind names ("QueueList", ...), or a JSON array of such
 * pages, so that the fuzzer can give several engines' objects at once. */
#include "fuzz.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_queues.h"
#include "qjob.h"
#include "qmodel.h"

static const char *const kinds[5] = {"QueueList", "PodGroupList", "ClusterQueueList", "LocalQueueList",
				     "WorkloadList"};

/* Puts page's items in the slot of its kind (the last page of a kind wins). */
static void place(json_t *page, json_t *slot[5])
{
	const char *k = json_string_value(json_object_get(page, "kind"));
	json_t *it = json_object_get(page, "items");
	for (int i = 0; k && i < 5; i++)
		if (!strcmp(k, kinds[i]) && it) {
			json_decref(slot[i]);
			slot[i] = json_incref(it);
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t je;
	json_t *doc = json_loadb((const char *)data, size, 0, &je);
	if (!doc)
		return 0;
	json_t *slot[5] = {0};
	if (json_is_array(doc)) {
		size_t i;
		json_t *p;
		json_array_foreach(doc, i, p) place(p, slot);
	} else {
		place(doc, slot);
	}
	struct xp_qset set = {0};
	struct xp_qjob *jobs = NULL;
	size_t n = 0;
	struct xp_err err = {{0}};
	if (xp_k8s_build_queues(slot[0], slot[1], slot[2], slot[3], slot[4], &set, &jobs, &n, &err) < 0 &&
	    !err.msg[0])
		abort();
	for (size_t i = 0; i < n; i++)
		xp_qjob_clear(&jobs[i]);
	free(jobs);
	xp_qset_clear(&set);
	for (int i = 0; i < 5; i++)
		json_decref(slot[i]);
	json_decref(doc);
	return 0;
}
