/* k8slib.h: the pieces of a loopback Kubernetes API server (libmicrohttpd) that the k8s check
 * suites and bench_engines share: replies, paged lists in the API's form, fixture items and
 * the server's start. No check here: the benchmarks link it too. */
#ifndef XP_K8SLIB_H
#define XP_K8SLIB_H

#include <jansson.h>
#include <microhttpd.h>
#include <stddef.h>

/* Queues a JSON reply with status code; body (len bytes) is copied, kept or freed per mode. */
enum MHD_Result xp_k8slib_reply(struct MHD_Connection *c, unsigned code, const char *body, size_t len,
				enum MHD_ResponseMemoryMode mode);

/* The list of kind holding items [from, from + limit) (limit 0: to the end), with a continue
 * token and remainingItemCount when more follow; a new reference. */
json_t *xp_k8slib_page(json_t *items, const char *kind, size_t from, size_t limit);

/* The offset a continue token of xp_k8slib_page names, in *from; -1 when it is not one. */
int xp_k8slib_page_from(const char *cont, size_t *from);

/* The items of the API list in fixture rel (a new reference); exits saying why when unreadable. */
json_t *xp_k8slib_items(const char *rel);

/* A server on a free loopback port answering with handler (cls its first argument), its port
 * in *port; NULL when it does not start. MHD_stop_daemon stops it. */
struct MHD_Daemon *xp_k8slib_serve(MHD_AccessHandlerCallback handler, void *cls, int *port);

#endif
