/* k8slib.c: a loopback Kubernetes API server's pieces for the tests and benchmarks. */
#include "k8slib.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>

#include "testlib.h"

enum MHD_Result xp_k8slib_reply(struct MHD_Connection *c, unsigned code, const char *body, size_t len,
				enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, mode);
	MHD_add_response_header(r, "Content-Type", "application/json");
	enum MHD_Result rc = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return rc;
}

json_t *xp_k8slib_page(json_t *items, const char *kind, size_t from, size_t limit)
{
	size_t n = json_array_size(items), to = limit && from + limit < n ? from + limit : n;
	json_t *page = json_array();
	for (size_t i = from; i < to; i++)
		json_array_append(page, json_array_get(items, i));
	json_t *md = json_pack("{s:s}", "resourceVersion", "81400");
	if (to < n) {
		/* An opaque token with characters a URL must escape, as the real (base64) ones have. */
		char tok[64];
		snprintf(tok, sizeof tok, "off=%zu/+", to);
		json_object_set_new(md, "continue", json_string(tok));
		json_object_set_new(md, "remainingItemCount", json_integer((json_int_t)(n - to)));
	}
	return json_pack("{s:s,s:s,s:o,s:o}", "kind", kind, "apiVersion", "v1", "metadata", md, "items", page);
}

int xp_k8slib_page_from(const char *cont, size_t *from)
{
	return sscanf(cont, "off=%zu/+", from) == 1 ? 0 : -1;
}

json_t *xp_k8slib_items(const char *rel)
{
	json_error_t je;
	json_t *l = json_load_file(xp_fixture(rel), 0, &je);
	if (!l) {
		fprintf(stderr, "k8slib: %s: %s\n", rel, je.text);
		exit(1);
	}
	json_t *it = json_incref(json_object_get(l, "items"));
	json_decref(l);
	return it;
}

struct MHD_Daemon *xp_k8slib_serve(MHD_AccessHandlerCallback handler, void *cls, int *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, handler, cls,
						MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_END);
	if (d)
		*port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
	return d;
}
