/* fuzz_k8s_watch.c: a watch stream of Nodes and Pods (GET ...?watch=1) as the k8s backend reads
 * it: one WatchEvent a line ({"type": ..., "object": ...}, decoded as the client's event_line
 * does), applied to the kept objects (backends/k8s_watch.c, xp_k8s_watch_event: kept by name,
 * trimmed as listed, resourceVersion followed), Nodes or Pods by the object's kind. A fresh
 * watch each input (nothing is read from a server: none is asked). */
#include "fuzz.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_config.h"
#include "k8s_watch.h"

/* At most this many events an input (a watch window reads up to its own cap). */
#define FUZZ_MAX_EVENTS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xp_k8s_opts o = {.server = "http://127.0.0.1:9"};
	struct xp_k8s_conf conf;
	struct xp_err err = {{0}};
	if (xp_k8s_conf_load(&o, &conf, &err) < 0)
		abort();
	struct xp_k8s_watch *w = xp_k8s_watch_new(xp_k8s_client_new(&conf, NULL), NULL);
	size_t pos = 0;
	for (int events = 0; pos < size && events < FUZZ_MAX_EVENTS; events++) {
		const uint8_t *nl = memchr(data + pos, '\n', size - pos);
		size_t len = nl ? (size_t)(nl - (data + pos)) : size - pos;
		json_error_t je;
		json_t *ev = len ? json_loadb((const char *)data + pos, len, 0, &je) : NULL;
		pos += len + 1;
		const char *type = json_string_value(json_object_get(ev, "type"));
		json_t *obj = json_object_get(ev, "object");
		if (type && json_is_object(obj) &&
		    (!strcmp(type, "ADDED") || !strcmp(type, "MODIFIED") || !strcmp(type, "DELETED") ||
		     !strcmp(type, "BOOKMARK"))) {
			const char *kind = json_string_value(json_object_get(obj, "kind"));
			enum xp_k8s_kind k = kind && !strcmp(kind, "Pod") ? XP_K8S_PODS : XP_K8S_NODES;
			err.msg[0] = '\0';
			if (xp_k8s_watch_event(w, k, type, obj, &err) < 0 && !err.msg[0])
				abort();
		}
		json_decref(ev);
	}
	(void)xp_k8s_watch_count(w, XP_K8S_NODES);
	(void)xp_k8s_watch_count(w, XP_K8S_PODS);
	xp_k8s_watch_free(w);
	return 0;
}
