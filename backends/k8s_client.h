/* k8s_client.h: read-only list calls to a Kubernetes API server (libcurl + jansson): paging
 * with limit and continue, bearer tokens read again on a 401, CA and client certificates,
 * and a cap on what one response may weigh. */
#ifndef XP_K8S_CLIENT_H
#define XP_K8S_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "k8s_config.h"
#include "xp.h"

/* Limits of a client; zero fields take the defaults. */
struct xp_k8s_client_opts {
	size_t page_limit; /* objects a page asks for (limit=), default 500 */
	size_t max_bytes;  /* most bytes of one response body, default 256 MiB */
	double timeout_s;  /* most seconds one request may take, default 30 */
};

struct xp_k8s_client;

/* A client for the server in conf; the client takes what conf holds (conf is zeroed). */
struct xp_k8s_client *xp_k8s_client_new(struct xp_k8s_conf *conf, const struct xp_k8s_client_opts *o);
/* Frees the client (and the settings it took); NULL is fine. */
void xp_k8s_client_free(struct xp_k8s_client *cl);
/* Drops in place, from one listed item, what the caller will not read; false drops the item. */
typedef bool xp_k8s_trim_fn(json_t *item);
/* Sets the trim xp_k8s_list applies to each item as its page arrives (NULL: none), so that
 * a long list holds only what its reader needs. */
void xp_k8s_client_trim(struct xp_k8s_client *cl, xp_k8s_trim_fn *trim);
/* The settings the client uses (server, origin...). */
const struct xp_k8s_conf *xp_k8s_client_conf(const struct xp_k8s_client *cl);
/* Lists path ("/api/v1/nodes") page by page, query (NULL for none: "fieldSelector=...",
 * already escaped) added to each request; a new JSON array of every page's items, or NULL
 * with err set naming the path. A 410 Gone on a continuation starts the list again once. */
json_t *xp_k8s_list(struct xp_k8s_client *cl, const char *path, const char *query, struct xp_err *err);
/* As xp_k8s_list, but a 404 on the first page (the API group or resource is not served: a
 * CRD's engine is not installed) sets *absent and returns NULL without an error. */
json_t *xp_k8s_list_opt(struct xp_k8s_client *cl, const char *path, const char *query, bool *absent,
			struct xp_err *err);
/* Requests made so far (pages, retries): for the tests. */
size_t xp_k8s_client_requests(const struct xp_k8s_client *cl);

#endif
