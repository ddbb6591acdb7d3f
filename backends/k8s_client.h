/* k8s_client.h: list calls to a Kubernetes API server, and one write call for actions (libcurl + jansson): paging
 * with limit and continue, bearer tokens read again on a 401, CA and client certificates,
 * and a cap on what one response may weigh. */
#ifndef XP_K8S_CLIENT_H
#define XP_K8S_CLIENT_H

#include <jansson.h>
#include <stdatomic.h>
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
/* What a reader keeps of each listed item, so that a page is decoded straight into small
 * objects: one entry per member kept of an object, in a list ended by a NULL key; every other
 * member is read (checked) and skipped, never built. A value of another type than the entry
 * expects is kept whole, as a trim of the whole object would leave it. */
struct xp_k8s_keep {
	const char *key;               /* the member's name; NULL ends the list */
	const struct xp_k8s_keep *sub; /* its value is an object: only these members of it (NULL: whole) */
	bool each;                     /* its value is an array: sub applies to each object in it */
	bool (*want)(const char *key); /* its value is an object: only the members whose names want takes */
};
/* Sets what xp_k8s_list keeps of each item (NULL: every item decoded whole); the trim, if
 * any, then runs on what is kept. Both must read only what keep holds. */
void xp_k8s_client_keep(struct xp_k8s_client *cl, const struct xp_k8s_keep *keep);
/* Decodes one list page (len bytes at text) as xp_k8s_list does with keep: its items as keep
 * says, its metadata whole, nothing else; as strict as jansson's json_loadb (a duplicate key's
 * last value wins, as there), and a string over 4 MiB or a number over 512 characters (no
 * stored API object holds one) refused. NULL with msg ("LINE:COLUMN: ...") set when malformed. */
json_t *xp_k8s_decode_list(const char *text, size_t len, const struct xp_k8s_keep *keep, char *msg, size_t msglen);
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
/* As xp_k8s_list, and *rv takes the list's metadata.resourceVersion (caller frees), where a
 * watch of the same path goes on from; a list without one is an error. */
json_t *xp_k8s_list_rv(struct xp_k8s_client *cl, const char *path, const char *query, char **rv, struct xp_err *err);

/* What xp_k8s_watch returns when the server no longer holds the version asked for (410 Gone,
 * as the HTTP status or as an ERROR event): only a new list goes on. */
#define XP_K8S_GONE (-2)

/* Bounds of one watch window; zero fields take the defaults. */
struct xp_k8s_watch_opts {
	long timeout_s;           /* timeoutSeconds asked of the server, default 5 */
	long idle_ms;             /* the window ends this long after the last bytes (or the headers), default 300 */
	size_t max_event;         /* most bytes of one event line, default 16 MiB: past it, an error */
	size_t max_events;        /* most events read in one window, default 100000: the rest wait */
	size_t max_bytes;         /* most bytes read in one window, default the client's max_bytes */
	const atomic_bool *cancel; /* set: the window ends at once with an error */
};
/* One watch event: type ADDED, MODIFIED, DELETED or BOOKMARK and its object (borrowed);
 * -1 with err set stops the watch with that error. */
typedef int xp_k8s_event_fn(void *arg, const char *type, json_t *object, struct xp_err *err);
/* One window of a watch of path from resourceVersion rv (GET path?watch=1&resourceVersion=rv
 * &allowWatchBookmarks=true&timeoutSeconds=N, query added): each newline-ended WatchEvent
 * goes to fn in order, until the server ends the stream, it stays quiet for idle_ms, or a cap
 * is reached. 0 then; XP_K8S_GONE on 410; -1 with err set naming the path on a malformed or
 * oversized event, an ERROR event, a stream cut inside an event or broken, another status,
 * or a cancel. The events before a failure were given to fn. */
int xp_k8s_watch(struct xp_k8s_client *cl, const char *path, const char *query, const char *rv,
		 const struct xp_k8s_watch_opts *o, xp_k8s_event_fn *fn, void *arg, struct xp_err *err);
/* One write: method ("PATCH", "POST") on path with body of content type ctype, with the
 * client's credentials (a 401 reads a token file again, once). The HTTP status in *code and
 * the response body in *resp (caller frees); -1 with err set naming the method and path on a
 * transport failure or an oversized answer. */
int xp_k8s_send(struct xp_k8s_client *cl, const char *method, const char *path, const char *ctype, const char *body,
		long *code, char **resp, struct xp_err *err);
/* The message of a Status object in body as ": MESSAGE" (cut short, control bytes masked),
 * "" when body holds none. */
void xp_k8s_status_text(const char *body, char *out, size_t len);
/* Requests made so far (pages, retries): for the tests. */
size_t xp_k8s_client_requests(const struct xp_k8s_client *cl);

#endif
