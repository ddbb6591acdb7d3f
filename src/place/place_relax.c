/* place_relax.c: the placement engine's entry points (xp_place_ix, xp_place): one dry-run and,
 * when it is refused, the smallest change that makes the job fit, tried in the order place.h
 * gives, each a quiet dry-run of a copy of the job with one field changed. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place_int.h"

/* A job sharing job's strings, with its own groups (and label arrays) to change. */
struct variant {
	struct xp_job job;
	struct xp_task_group *groups;
};

static void variant_init(struct variant *v, const struct xp_job *job)
{
	v->job = *job;
	v->groups = xp_calloc(job->n_groups, sizeof *v->groups);
	memcpy(v->groups, job->groups, job->n_groups * sizeof *v->groups);
	v->job.groups = v->groups;
}

/* Resets v's groups to the job's, then turns off the yes/no constraint at off (a bool in
 * each group) everywhere; false when no group had it, so there is nothing to relax. */
static bool variant_drop(struct variant *v, const struct xp_job *job, size_t off)
{
	bool any = false;
	memcpy(v->groups, job->groups, job->n_groups * sizeof *v->groups);
	for (size_t i = 0; i < job->n_groups; i++) {
		bool *b = (bool *)((char *)&v->groups[i] + off);
		any |= *b;
		*b = false;
	}
	return any;
}

/* Whether the variant places; its summary in *summary when it does. */
/* Dry-runs tried at most per relaxation search: each is a whole placement, and a node of 1,024
 * devices or a label with 10,000 values would otherwise mean thousands of them. The order
 * puts the smallest changes first, so the budget cuts only the far end. */
#define RELAX_TRIES 48

static bool fits(int *left, struct xp_place_index *ix, const struct xp_job *job, const struct xp_place_opts *opts,
		 int strategy, char **summary)
{
	if (*left <= 0)
		return false;
	(*left)--;
	struct xp_place_opts o = {strategy, opts ? opts->seed : 0, NULL, opts && opts->scan, true,
				  opts && opts->reconfigure};
	struct xp_err e = {{0}};
	struct xp_place_result *r = xpl_place(ix, job, &o, &e);
	bool ok = r && r->placed && !r->pending;
	if (ok)
		*summary = xp_strdup(r->summary);
	xp_place_result_free(r);
	return ok;
}

static struct xp_place_relax *relax_new(const char *field, const char *from, const char *to, char *summary)
{
	struct xp_place_relax *x = xp_calloc(1, sizeof *x);
	x->field = xp_strdup(field);
	x->from = xp_strdup(from);
	x->to = xp_strdup(to);
	x->summary = summary;
	return x;
}

static int cstr_cmp(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static struct xp_place_relax *relax(struct xp_place_index *ix, const struct xp_job *job,
				    const struct xp_place_opts *opts)
{
	int strategy = opts && opts->strategy >= 0 && opts->strategy < XP_STRAT_COUNT ? opts->strategy : XP_STRAT_PACK;
	char *sum = NULL, from[64], to[64];
	int left = RELAX_TRIES;
	struct xp_place_relax *x = NULL;
	/* Strategies change only which node comes first, but a gang placed greedily can fit
	 * under one and not under another. */
	size_t total = 0;
	for (size_t i = 0; i < job->n_groups; i++)
		total += (size_t)job->groups[i].replicas;
	for (int s = 0; s < XP_STRAT_COUNT && !x && total > 1; s++)
		if (s != strategy && fits(&left, ix, job, opts, s, &sum))
			x = relax_new("strategy", xp_strategy_name(strategy), xp_strategy_name(s), sum);
	struct variant v;
	variant_init(&v, job);
	/* One change to every group at once for the job-wide constraints. */
	bool any = false;
	for (size_t i = 0; i < v.job.n_groups; i++)
		if (v.groups[i].numa == XP_NUMA_STRICT) {
			v.groups[i].numa = XP_NUMA_PREFER;
			any = true;
		}
	if (!x && any && fits(&left, ix, &v.job, opts, strategy, &sum))
		x = relax_new("numa", xp_numa_policy_name(XP_NUMA_STRICT), xp_numa_policy_name(XP_NUMA_PREFER), sum);
	memcpy(v.groups, job->groups, job->n_groups * sizeof *v.groups);
	for (int step = 0; step < 2 && !x; step++) {
		int from_net = XP_NET_ANY;
		for (size_t i = 0; i < v.job.n_groups; i++)
			if (job->groups[i].network != XP_NET_ANY) {
				from_net = from_net == XP_NET_SWITCH ? from_net : job->groups[i].network;
				v.groups[i].network = step == 0 && job->groups[i].network == XP_NET_SWITCH ? XP_NET_RACK
													 : XP_NET_ANY;
			}
		if (from_net == XP_NET_ANY || (step == 0 && from_net != XP_NET_SWITCH))
			continue;
		if (fits(&left, ix, &v.job, opts, strategy, &sum))
			x = relax_new("network", xp_network_name(from_net),
				      xp_network_name(step == 0 ? XP_NET_RACK : XP_NET_ANY), sum);
	}
	any = variant_drop(&v, job, offsetof(struct xp_task_group, same_group));
	if (!x && any && fits(&left, ix, &v.job, opts, strategy, &sum))
		x = relax_new("same_group", "true", "false", sum);
	any = variant_drop(&v, job, offsetof(struct xp_task_group, homogeneous));
	if (!x && any && fits(&left, ix, &v.job, opts, strategy, &sum))
		x = relax_new("homogeneous", "true", "false", sum);
	memcpy(v.groups, job->groups, job->n_groups * sizeof *v.groups);
	/* Another pool: each label's other values in the cluster, sorted, then no such label. */
	for (size_t gi = 0; gi < v.job.n_groups && !x; gi++) {
		const struct xp_labels *L = &job->groups[gi].labels;
		for (size_t li = 0; li < L->n && !x; li++) {
			const char **vals = NULL;
			size_t nv = 0;
			for (size_t sc = 0; sc < ix->n_scls; sc++) {
				const struct xp_node *nd = ix->c->nodes[ix->scls_rep[sc]];
				const char *val = xp_labels_get(&nd->governance, L->keys[li]);
				if (!val)
					val = xp_labels_get(&nd->facts, L->keys[li]);
				bool seen = !val || strcmp(val, L->values[li]) == 0;
				for (size_t k = 0; k < nv && !seen; k++)
					seen = strcmp(vals[k], val) == 0;
				if (!seen) {
					vals = xp_realloc(vals, (nv + 1) * sizeof *vals);
					vals[nv++] = val;
				}
			}
			if (nv > 1)
				qsort(vals, nv, sizeof *vals, cstr_cmp);
			struct xp_labels nl = *L;
			nl.keys = xp_calloc(L->n, sizeof *nl.keys);
			nl.values = xp_calloc(L->n, sizeof *nl.values);
			memcpy(nl.keys, L->keys, L->n * sizeof *nl.keys);
			memcpy(nl.values, L->values, L->n * sizeof *nl.values);
			v.groups[gi].labels = nl;
			char *was = xp_asprintf("%s=%s", L->keys[li], L->values[li]);
			for (size_t k = 0; k <= nv && !x; k++) {
				if (k < nv) {
					nl.values[li] = (char *)vals[k];
					v.groups[gi].labels = nl;
				} else {
					/* Without the label: the others move down one. */
					for (size_t j = li; j + 1 < L->n; j++) {
						nl.keys[j] = L->keys[j + 1];
						nl.values[j] = L->values[j + 1];
					}
					nl.n = L->n - 1;
					v.groups[gi].labels = nl;
				}
				if (fits(&left, ix, &v.job, opts, strategy, &sum)) {
					char *now = k < nv ? xp_asprintf("%s=%s", L->keys[li], vals[k]) : xp_strdup("none");
					x = relax_new("labels", was, now, sum);
					free(now);
				}
			}
			free(was);
			free(nl.keys);
			free(nl.values);
			free(vals);
			v.groups[gi].labels = *L;
		}
	}
	/* No count above the largest node's devices can fit: start there. */
	int maxdev = 0;
	for (size_t sc = 0; sc < ix->n_scls; sc++) {
		size_t nd = ix->c->nodes[ix->scls_rep[sc]]->n_devices;
		maxdev = (int)nd > maxdev ? (int)nd : maxdev;
	}
	for (size_t gi = 0; gi < v.job.n_groups && !x; gi++) {
		int top = job->groups[gi].devices - 1 < maxdev ? job->groups[gi].devices - 1 : maxdev;
		for (int d = top; d >= 1 && !x; d--) {
			v.groups[gi].devices = d;
			if (fits(&left, ix, &v.job, opts, strategy, &sum)) {
				snprintf(from, sizeof from, "%d", job->groups[gi].devices);
				snprintf(to, sizeof to, "%d", d);
				x = relax_new("devices", from, to, sum);
			}
		}
		v.groups[gi].devices = job->groups[gi].devices;
	}
	/* Fewer replicas: replicas are placed one after another, each where the ones before left
	 * room, so if n fit then n - 1 do; the largest that fits is found by halving (a job of
	 * 100,000 replicas takes 17 tries, not 99,999). */
	for (size_t gi = 0; gi < v.job.n_groups && !x; gi++) {
		int lo = 1, hi = job->groups[gi].replicas - 1, found = 0;
		char *fsum = NULL;
		while (lo <= hi) {
			int n = lo + (hi - lo) / 2;
			v.groups[gi].replicas = n;
			v.groups[gi].gang_min = job->groups[gi].gang_min < n ? job->groups[gi].gang_min : n;
			if (fits(&left, ix, &v.job, opts, strategy, &sum)) {
				found = n;
				free(fsum);
				fsum = sum;
				lo = n + 1;
			} else
				hi = n - 1;
		}
		if (found) {
			snprintf(from, sizeof from, "%d", job->groups[gi].replicas);
			snprintf(to, sizeof to, "%d", found);
			x = relax_new("replicas", from, to, fsum);
		}
		v.groups[gi] = job->groups[gi];
	}
	free(v.groups);
	return x;
}

struct xp_place_result *xp_place_ix(struct xp_place_index *ix, const struct xp_job *job,
				    const struct xp_place_opts *opts, struct xp_err *err)
{
	struct xp_place_result *r = xpl_place(ix, job, opts, err);
	/* A scheduler's loop (quiet or bare) has no use for the relaxation's dry-runs. */
	if (r && !r->placed && !(opts && (opts->quiet || opts->bare)))
		r->relaxation = relax(ix, job, opts);
	return r;
}

struct xp_place_result *xp_place(const struct xp_cluster *c, const struct xp_job *job,
				 const struct xp_manifest *const *manifests, size_t n,
				 const struct xp_place_opts *opts, struct xp_err *err)
{
	struct xp_place_index *ix = xp_place_index_new(c, manifests, n);
	struct xp_place_result *r = xp_place_ix(ix, job, opts, err);
	xp_place_index_free(ix);
	return r;
}
