/* k8s_watch.h: a Kubernetes cluster kept across the console's refreshes: Nodes and Pods are
 * listed once, then changed by watch events from the list's resourceVersion, so that a
 * refresh transfers only what changed; a 410 Gone or a broken stream lists again. */
#ifndef XP_K8S_WATCH_H
#define XP_K8S_WATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "k8s_client.h"
#include "model.h"
#include "xp.h"

/* What is kept: the Nodes, or the Pods (those xp_k8s_trim_pod keeps). */
enum xp_k8s_kind { XP_K8S_NODES, XP_K8S_PODS };

/* How the watch stands, for the console's header. */
struct xp_k8s_watch_health {
	bool ok;           /* the last poll read the server */
	time_t listed;     /* the last whole list, 0 before one */
	time_t read;       /* the last poll that read the server (a list or a watch window), 0 before one */
	char state[256];   /* "listed", "watching", "re-listed after 410 Gone", "watch failed: ...; re-listed" */
	char error[512];   /* why the last poll failed, "" when ok */
	unsigned lists;    /* whole lists made (each of Nodes and Pods) */
	unsigned watches;  /* watch windows read (each of Nodes and Pods) */
};

struct xp_k8s_watch;

/* Kept state over client cl (taken over; freed with it), reading with the window bounds wo
 * (NULL: the defaults, its cancel flag included). Nothing is read until the first poll. */
struct xp_k8s_watch *xp_k8s_watch_new(struct xp_k8s_client *cl, const struct xp_k8s_watch_opts *wo);
/* Frees it, its client and the kept objects; NULL is fine. */
void xp_k8s_watch_free(struct xp_k8s_watch *w);
/* One refresh: the first lists Nodes and Pods (with the list path's trims and queries);
 * later ones read one watch window of each from the kept resourceVersion and apply the
 * events; a 410 Gone, a malformed or oversized event or a broken stream lists both again at
 * once (the health's state says why). *changed: a kept object changed. -1 with err set when
 * the server could not be read (the kept objects stay; a cancel keeps them watchable). */
int xp_k8s_watch_poll(struct xp_k8s_watch *w, bool *changed, struct xp_err *err);
/* Applies one watch event (ADDED, MODIFIED, DELETED, BOOKMARK) to the kept objects of kind:
 * objects are kept by name (Nodes) or namespace/name (Pods), trimmed as listed; the kind's
 * resourceVersion moves to the event's. -1 with err set on an object without a name or
 * resourceVersion, of another kind, or past the cap (500,000 of a kind). */
int xp_k8s_watch_event(struct xp_k8s_watch *w, enum xp_k8s_kind kind, const char *type, json_t *obj,
		       struct xp_err *err);
/* The cluster of the kept objects (xp_k8s_build, source "k8s:SERVER"); NULL with err set. */
struct xp_cluster *xp_k8s_watch_cluster(struct xp_k8s_watch *w, struct xp_err *err);
/* The health after the last poll. */
void xp_k8s_watch_health(const struct xp_k8s_watch *w, struct xp_k8s_watch_health *h);
/* Objects of kind kept now. */
size_t xp_k8s_watch_count(const struct xp_k8s_watch *w, enum xp_k8s_kind kind);
/* The resourceVersion of kind a watch goes on from, NULL before a list. */
const char *xp_k8s_watch_rv(const struct xp_k8s_watch *w, enum xp_k8s_kind kind);

#endif
