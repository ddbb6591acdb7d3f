/* place_index.c: the placement index: node classes, their kept answers, use changes, commits
 * (see place_index.h for why). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "place.h"
#include "place_index.h"
#include "place_mig.h"

/* Hashing eight bytes a step: an index of 10,000 nodes hashes a few megabytes of strings. */
static uint64_t mix_w(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 32);
}

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (; n >= 8; b += 8, n -= 8) {
		uint64_t w;
		memcpy(&w, b, 8);
		h = mix_w(h, w);
	}
	if (n) {
		uint64_t w = 0;
		memcpy(&w, b, n);
		h = mix_w(h, w ^ ((uint64_t)n << 56));
	}
	return h;
}

static uint64_t mix_s(uint64_t h, const char *s)
{
	/* The length goes in after the bytes, so "ab","c" and "a","bc" differ; NULL is apart
	 * from "" (no length is all ones). */
	if (!s)
		return mix_w(h, ~0ULL);
	size_t n = strlen(s);
	return mix_w(mix(h, s, n), n);
}

bool xpi_streq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

double xpi_slice_share(const struct xp_mtemplate *t)
{
	if (t->compute > 0 && t->compute <= 1)
		return t->compute;
	return t->count > 0 ? 1.0 / t->count : 1;
}

static bool eq_d(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static bool labels_eq(const struct xp_labels *a, const struct xp_labels *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (!xpi_streq(a->keys[i], b->keys[i]) || !xpi_streq(a->values[i], b->values[i]))
			return false;
	return true;
}

static uint64_t labels_hash(uint64_t h, const struct xp_labels *l)
{
	for (size_t i = 0; i < l->n; i++)
		h = mix_s(mix_s(h, l->keys[i]), l->values[i]);
	return mix(h, &l->n, sizeof l->n);
}

/* The hard slices on a device, in order, and whether a job holds each: MIG geometry answers
 * by which instances exist and which of them are free, not only by the share of the device
 * they use, so nodes that differ in them are not one class. */
static bool slices_eq(const struct xp_device *a, const struct xp_device *b)
{
	size_t i = 0, j = 0;
	for (;;) {
		while (i < a->n_allocs && (!a->allocs[i].slice || a->allocs[i].share_pct > 0))
			i++;
		while (j < b->n_allocs && (!b->allocs[j].slice || b->allocs[j].share_pct > 0))
			j++;
		if (i == a->n_allocs || j == b->n_allocs)
			return i == a->n_allocs && j == b->n_allocs;
		if (!a->allocs[i].owner != !b->allocs[j].owner || strcmp(a->allocs[i].slice, b->allocs[j].slice) != 0)
			return false;
		i++;
		j++;
	}
}

/* What the engine reads of a device, bar its use: equal fields, equal answers. */
static bool dev_static_eq(const struct xp_device *a, const struct xp_device *b)
{
	return slices_eq(a, b) && xpi_streq(a->vendor, b->vendor) && xpi_streq(a->model, b->model) &&
	       xpi_streq(a->driver, b->driver) && xpi_streq(a->firmware, b->firmware) &&
	       xpi_streq(a->runtime, b->runtime) && a->health == b->health &&
	       a->memory_mib == b->memory_mib && eq_d(a->ecu, b->ecu) && eq_d(a->power_limit_w, b->power_limit_w) &&
	       a->numa == b->numa && xpi_streq(a->affinity_group, b->affinity_group) && a->mig_mode == b->mig_mode;
}

static uint64_t dev_static_hash(uint64_t h, const struct xp_device *d)
{
	h = mix_s(mix_s(mix_s(mix_s(mix_s(h, d->vendor), d->model), d->driver), d->firmware), d->runtime);
	h = mix(h, &d->health, sizeof d->health);
	h = mix(h, &d->memory_mib, sizeof d->memory_mib);
	h = mix(h, &d->ecu, sizeof d->ecu);
	h = mix(h, &d->power_limit_w, sizeof d->power_limit_w);
	h = mix(h, &d->numa, sizeof d->numa);
	h = mix(h, &d->mig_mode, sizeof d->mig_mode);
	for (size_t i = 0; i < d->n_allocs; i++)
		if (d->allocs[i].slice && d->allocs[i].share_pct == 0)
			h = mix_w(mix_s(h, d->allocs[i].slice), !d->allocs[i].owner);
	return mix_s(h, d->affinity_group);
}

static bool node_static_eq(const struct xp_node *a, const struct xp_node *b)
{
	if (a->state != b->state || a->pus != b->pus || a->memory_mib != b->memory_mib ||
	    a->n_devices != b->n_devices || !labels_eq(&a->facts, &b->facts) ||
	    !labels_eq(&a->governance, &b->governance))
		return false;
	for (size_t i = 0; i < a->n_devices; i++)
		if (!dev_static_eq(&a->devices[i], &b->devices[i]))
			return false;
	if (!a->links || !b->links)
		return !a->links && !b->links;
	return memcmp(a->links, b->links, a->n_devices * a->n_devices * sizeof *a->links) == 0;
}

static uint64_t node_static_hash(const struct xp_node *n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	h = mix(h, &n->state, sizeof n->state);
	h = mix(h, &n->pus, sizeof n->pus);
	h = mix(h, &n->memory_mib, sizeof n->memory_mib);
	h = labels_hash(labels_hash(h, &n->facts), &n->governance);
	for (size_t i = 0; i < n->n_devices; i++)
		h = dev_static_hash(h, &n->devices[i]);
	if (n->links)
		h = mix(h, n->links, n->n_devices * n->n_devices * sizeof *n->links);
	return h;
}

static struct xpi_dinfo lookup(const struct xp_place_index *ix, const struct xp_device *d)
{
	for (size_t i = 0; i < ix->nm && d->model; i++)
		for (size_t k = 0; k < ix->ms[i]->n_models; k++)
			if (strcasecmp(ix->ms[i]->models[k].name, d->model) == 0)
				return (struct xpi_dinfo){ix->ms[i], &ix->ms[i]->models[k]};
	for (size_t i = 0; i < ix->nm && d->model; i++) {
		const struct xp_mmodel *md = xp_manifest_model(ix->ms[i], d->model, -1);
		if (md)
			return (struct xpi_dinfo){ix->ms[i], md};
	}
	return (struct xpi_dinfo){NULL, NULL};
}

bool xpi_free_instance(const struct xp_alloc *a, const struct xpi_dinfo *di)
{
	return a->slice && !a->owner && a->share_pct == 0 &&
	       xp_mig_geometric(di->md, xp_manifest_template(di->md, a->slice));
}

/* Share of a device in use: whole allocations take all of it, shares their percent, slices
 * their template's compute share (all of it when the template is not known: the safe side).
 * A free MIG instance is not in use: a slice may take it (its slots are the geometry's). */
static double alloc_used(const struct xp_device *d, const struct xpi_dinfo *di)
{
	double u = 0;
	for (size_t i = 0; i < d->n_allocs; i++) {
		const struct xp_alloc *a = &d->allocs[i];
		if (xpi_free_instance(a, di))
			continue;
		if (a->share_pct > 0)
			u += a->share_pct / 100.0;
		else if (!a->slice)
			u += 1;
		else {
			const struct xp_mtemplate *t = xp_manifest_template(di->md, a->slice);
			u += t ? xpi_slice_share(t) : 1;
		}
	}
	return u;
}

static int rank_cmp(const void *a, const void *b, void *arg)
{
	const struct xp_cluster *c = arg;
	const struct xp_node *x = c->nodes[*(const size_t *)a], *y = c->nodes[*(const size_t *)b];
	int r = strcmp(x->name ? x->name : "", y->name ? y->name : "");
	if (r)
		return r;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static size_t n_dev(const struct xp_place_index *ix, uint32_t scls)
{
	return ix->c->nodes[ix->scls_rep[scls]]->n_devices;
}

double xpi_use(double u)
{
	u = u < 0 ? 0 : u > 1 ? 1 : u;
	return round(u * 1e9) / 1e9;
}

static double clamp01(double u) { return xpi_use(u); }
static double mode_key(const struct xp_place_index *ix, size_t node, size_t pos);

static uint64_t class_hash(uint32_t scls, const double *used, size_t n)
{
	uint64_t h = mix(0xcbf29ce484222325ULL, &scls, sizeof scls);
	return mix(h, used, n * sizeof *used);
}

/* Rehashes every class into a table of at least twice as many slots (doubling the old one). */
static void htab_grow(struct xp_place_index *ix)
{
	size_t cap = ix->hcap ? ix->hcap * 2 : 1024;
	while (cap < 2 * ix->n_classes + 2)
		cap *= 2;
	uint32_t *t = xp_calloc(cap, sizeof *t);
	for (size_t k = 0; k < ix->n_classes; k++) {
		size_t i = ix->classes[k].hash & (cap - 1);
		while (t[i])
			i = (i + 1) & (cap - 1);
		t[i] = (uint32_t)k + 1;
	}
	free(ix->htab);
	ix->htab = t;
	ix->hcap = cap;
}

/* The class of (scls, used), made when new; used is copied. */
static uint32_t class_of(struct xp_place_index *ix, uint32_t scls, const double *used)
{
	size_t n = 2 * n_dev(ix, scls);
	uint64_t h = class_hash(scls, used, n);
	if (ix->hcap) {
		for (size_t i = h & (ix->hcap - 1); ix->htab[i]; i = (i + 1) & (ix->hcap - 1)) {
			struct xpi_class *k = &ix->classes[ix->htab[i] - 1];
			if (k->hash == h && k->scls == scls && memcmp(k->used, used, n * sizeof *used) == 0)
				return ix->htab[i] - 1;
		}
	}
	if ((ix->n_classes + 1) * 2 > ix->hcap)
		htab_grow(ix);
	if (ix->n_classes == ix->cap_classes) {
		ix->cap_classes = ix->cap_classes ? ix->cap_classes * 2 : 256;
		ix->classes = xp_realloc(ix->classes, ix->cap_classes * sizeof *ix->classes);
	}
	uint32_t id = (uint32_t)ix->n_classes++;
	struct xpi_class *k = &ix->classes[id];
	memset(k, 0, sizeof *k);
	k->scls = scls;
	k->hash = h;
	k->used = xp_malloc((n ? n : 1) * sizeof *k->used);
	memcpy(k->used, used, n * sizeof *used);
	for (size_t i = 0; i < n / 2; i++)
		k->used_sum += used[i];
	k->live_at = SIZE_MAX;
	size_t i = h & (ix->hcap - 1);
	while (ix->htab[i])
		i = (i + 1) & (ix->hcap - 1);
	ix->htab[i] = id + 1;
	return id;
}

/* The first position in the sorted ranks v[0..n) whose rank is not below rank. */
static size_t lower_bound(const uint32_t *v, size_t n, uint32_t rank)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid] < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void member_add(struct xp_place_index *ix, uint32_t id, uint32_t rank)
{
	struct xpi_class *k = &ix->classes[id];
	if (k->n_members == k->cap_members) {
		k->cap_members = k->cap_members ? k->cap_members * 2 : 4;
		k->members = xp_realloc(k->members, k->cap_members * sizeof *k->members);
	}
	size_t lo = lower_bound(k->members, k->n_members, rank);
	memmove(k->members + lo + 1, k->members + lo, (k->n_members - lo) * sizeof *k->members);
	k->members[lo] = rank;
	if (k->n_members++ == 0) {
		uint32_t sc = k->scls;
		if (ix->n_live[sc] == ix->cap_live[sc]) {
			ix->cap_live[sc] = ix->cap_live[sc] ? ix->cap_live[sc] * 2 : 4;
			ix->live[sc] = xp_realloc(ix->live[sc], ix->cap_live[sc] * sizeof **ix->live);
		}
		k->live_at = ix->n_live[sc];
		ix->live[sc][ix->n_live[sc]++] = id;
		if (ix->n_live_all == ix->cap_live_all) {
			ix->cap_live_all = ix->cap_live_all ? ix->cap_live_all * 2 : 256;
			ix->live_all = xp_realloc(ix->live_all, ix->cap_live_all * sizeof *ix->live_all);
			ix->live_all_sc = xp_realloc(ix->live_all_sc, ix->cap_live_all * sizeof *ix->live_all_sc);
		}
		k->all_at = (uint32_t)ix->n_live_all;
		ix->live_all[ix->n_live_all] = id;
		ix->live_all_sc[ix->n_live_all++] = sc;
	}
}

static void member_rm(struct xp_place_index *ix, uint32_t id, uint32_t rank)
{
	struct xpi_class *k = &ix->classes[id];
	size_t lo = lower_bound(k->members, k->n_members, rank);
	if (lo == k->n_members || k->members[lo] != rank)
		return;
	memmove(k->members + lo, k->members + lo + 1, (k->n_members - lo - 1) * sizeof *k->members);
	if (--k->n_members == 0) {
		uint32_t sc = k->scls;
		uint32_t last = ix->live[sc][--ix->n_live[sc]];
		ix->live[sc][k->live_at] = last;
		ix->classes[last].live_at = k->live_at;
		k->live_at = SIZE_MAX;
		size_t at = --ix->n_live_all;
		ix->live_all[k->all_at] = ix->live_all[at];
		ix->live_all_sc[k->all_at] = ix->live_all_sc[at];
		ix->classes[ix->live_all[at]].all_at = k->all_at;
	}
}

/* Each device's [layout] by how many devices of its kind (vendor, model, driver) node i holds:
 * a 910B node of 16 is a Box16, of 8 an Atlas 800T A2. Its slots hold their manifest entries. */
static void layouts_apply(struct xp_place_index *ix, size_t i)
{
	const struct xp_node *n = ix->c->nodes[i];
	for (size_t d = 0; d < n->n_devices; d++) {
		struct xpi_dinfo *x = &ix->di[ix->off[i] + d];
		if (!x->md)
			continue;
		const struct xp_device *a = &n->devices[d];
		int same = 0;
		for (size_t e = 0; e < n->n_devices; e++) {
			const struct xp_device *b = &n->devices[e];
			same += xpi_streq(a->vendor, b->vendor) && xpi_streq(a->model, b->model) &&
				xpi_streq(a->driver, b->driver);
		}
		x->md = xp_manifest_layout(x->m, x->md, same);
	}
}

/* The node of name rank r joins the class of its static class and use; u is scratch room for
 * 2 x XP_MAX_DEVICES + 1 values. */
static void node_join(struct xp_place_index *ix, size_t r, double *u)
{
	size_t i = ix->order[r];
	const struct xp_node *n = ix->c->nodes[i];
	for (size_t d = 0; d < n->n_devices; d++) {
		u[d] = clamp01(ix->used[ix->off[i] + d]);
		u[n->n_devices + d] = mode_key(ix, i, d);
	}
	ix->cls[i] = class_of(ix, ix->scls[i], u);
	member_add(ix, ix->cls[i], (uint32_t)r);
}

/* Device slot s's use as its device shows it: the share in use, the hard slices and soft shares. */
static void slot_use(struct xp_place_index *ix, const struct xp_device *dv, size_t s)
{
	ix->base[s] = ix->used[s] = alloc_used(dv, &ix->di[s]);
	ix->hard[s] = ix->soft[s] = 0;
	for (size_t a = 0; a < dv->n_allocs; a++) {
		if (dv->allocs[a].share_pct > 0)
			ix->soft[s]++;
		else if (dv->allocs[a].slice)
			ix->hard[s]++;
	}
}

struct xp_place_index *xp_place_index_new(const struct xp_cluster *c, const struct xp_manifest *const *ms,
					  size_t nm)
{
	struct xp_place_index *ix = xp_calloc(1, sizeof *ix);
	size_t nn = c->n_nodes;
	ix->c = c;
	ix->ms = ms;
	ix->nm = ms ? nm : 0;
	ix->n_nodes = nn;
	ix->order = xp_calloc(nn ? nn : 1, sizeof *ix->order);
	ix->rank = xp_calloc(nn ? nn : 1, sizeof *ix->rank);
	ix->off = xp_calloc(nn + 1, sizeof *ix->off);
	for (size_t i = 0; i < nn; i++) {
		ix->order[i] = i;
		ix->off[i + 1] = ix->off[i] + c->nodes[i]->n_devices;
	}
	qsort_r(ix->order, nn, sizeof *ix->order, rank_cmp, (void *)c);
	for (size_t r = 0; r < nn; r++)
		ix->rank[ix->order[r]] = (uint32_t)r;
	size_t nd = ix->off[nn];
	ix->base = xp_calloc(nd ? nd : 1, sizeof *ix->base);
	ix->used = xp_calloc(nd ? nd : 1, sizeof *ix->used);
	ix->di = xp_calloc(nd ? nd : 1, sizeof *ix->di);
	ix->hard = xp_calloc(nd ? nd : 1, sizeof *ix->hard);
	ix->soft = xp_calloc(nd ? nd : 1, sizeof *ix->soft);
	/* Static classes by hash, each checked field by field against its first node. */
	ix->scls = xp_calloc(nn ? nn : 1, sizeof *ix->scls);
	ix->scls_rep = xp_calloc(nn ? nn : 1, sizeof *ix->scls_rep);
	size_t scap = 1024;
	while (scap < nn * 2)
		scap *= 2;
	uint32_t *st = xp_calloc(scap, sizeof *st);
	uint64_t *sh = xp_calloc(nn ? nn : 1, sizeof *sh);
	for (size_t r = 0; r < nn; r++) {
		size_t i = ix->order[r];
		uint64_t h = node_static_hash(c->nodes[i]);
		size_t p = h & (scap - 1);
		uint32_t found = UINT32_MAX;
		for (; st[p]; p = (p + 1) & (scap - 1))
			if (sh[st[p] - 1] == h && node_static_eq(c->nodes[ix->scls_rep[st[p] - 1]], c->nodes[i])) {
				found = st[p] - 1;
				break;
			}
		if (found == UINT32_MAX) {
			found = (uint32_t)ix->n_scls++;
			ix->scls_rep[found] = i;
			sh[found] = h;
			st[p] = found + 1;
		}
		ix->scls[i] = found;
	}
	free(st);
	free(sh);
	/* Manifest entries and kinds: judged on each static class's first node, copied to the
	 * others (equal devices, position by position). */
	ix->kind = xp_calloc(nd ? nd : 1, sizeof *ix->kind);
	const struct xp_device **kinds = NULL;
	struct xpi_dinfo *kind_di = NULL;
	for (size_t sc = 0; sc < ix->n_scls; sc++) {
		size_t i = ix->scls_rep[sc];
		const struct xp_node *n = c->nodes[i];
		for (size_t d = 0; d < n->n_devices; d++) {
			const struct xp_device *dv = &n->devices[d];
			size_t k = 0;
			while (k < ix->n_kinds && !(xpi_streq(kinds[k]->vendor, dv->vendor) && xpi_streq(kinds[k]->model, dv->model) &&
						   xpi_streq(kinds[k]->driver, dv->driver)))
				k++;
			if (k == ix->n_kinds) {
				kinds = xp_realloc(kinds, (k + 1) * sizeof *kinds);
				kind_di = xp_realloc(kind_di, (k + 1) * sizeof *kind_di);
				ix->kind_slot = xp_realloc(ix->kind_slot, (k + 1) * sizeof *ix->kind_slot);
				ix->kind_slot[k] = ix->off[i] + d;
				kinds[k] = dv;
				kind_di[k] = lookup(ix, dv);
				ix->n_kinds++;
			}
			ix->kind[ix->off[i] + d] = (uint32_t)k;
			ix->di[ix->off[i] + d] = kind_di[k];
		}
		layouts_apply(ix, i);
	}
	for (size_t i = 0; i < nn; i++) {
		size_t rep = ix->scls_rep[ix->scls[i]];
		const struct xp_node *n = c->nodes[i];
		for (size_t d = 0; d < n->n_devices; d++) {
			size_t s = ix->off[i] + d;
			ix->kind[s] = ix->kind[ix->off[rep] + d];
			ix->di[s] = ix->di[ix->off[rep] + d];
			slot_use(ix, &n->devices[d], s);
		}
	}
	free(kinds);
	free(kind_di);
	ix->cls = xp_calloc(nn ? nn : 1, sizeof *ix->cls);
	size_t ns = ix->n_scls ? ix->n_scls : 1;
	ix->live = xp_calloc(ns, sizeof *ix->live);
	ix->n_live = xp_calloc(ns, sizeof *ix->n_live);
	ix->cap_live = xp_calloc(ns, sizeof *ix->cap_live);
	ix->scls_n = xp_calloc(ns, sizeof *ix->scls_n);
	for (size_t i = 0; i < nn; i++)
		ix->scls_n[ix->scls[i]]++;
	double *u = xp_malloc((2 * XP_MAX_DEVICES + 1) * sizeof *u);
	for (size_t r = 0; r < nn; r++)
		node_join(ix, r, u);
	free(u);
	return ix;
}

/* The node at rank r's name, for the order check of xp_place_index_update. */
static int name_cmp_at(const struct xp_cluster *c, size_t a, size_t b)
{
	size_t x[2] = {a, b};
	return rank_cmp(&x[0], &x[1], (void *)c);
}

static void memo_clear(struct xp_place_index *ix);

/* Kinds numbered again from the static classes that have nodes, as the build numbers them: a
 * changed node may bring a kind (a driver upgrade) or take the last device of one, and a
 * homogeneous job tries each kind by the device slot that made it (kind_slot), which must be
 * a device of that kind in this cluster. Only equality of kind numbers means anything (kept
 * answers name a key by its strings), so renumbering keeps them valid. */
static void kinds_renumber(struct xp_place_index *ix)
{
	const struct xp_cluster *c = ix->c;
	const struct xp_device **kinds = NULL;
	size_t nk = 0;
	free(ix->kind_slot);
	ix->kind_slot = NULL;
	for (size_t sc = 0; sc < ix->n_scls; sc++) {
		if (!ix->scls_n[sc])
			continue;
		size_t i = ix->scls_rep[sc];
		const struct xp_node *n = c->nodes[i];
		for (size_t d = 0; d < n->n_devices; d++) {
			const struct xp_device *dv = &n->devices[d];
			size_t k = 0;
			while (k < nk && !(xpi_streq(kinds[k]->vendor, dv->vendor) && xpi_streq(kinds[k]->model, dv->model) &&
					   xpi_streq(kinds[k]->driver, dv->driver)))
				k++;
			if (k == nk) {
				kinds = xp_realloc(kinds, (k + 1) * sizeof *kinds);
				ix->kind_slot = xp_realloc(ix->kind_slot, (k + 1) * sizeof *ix->kind_slot);
				ix->kind_slot[k] = ix->off[i] + d;
				kinds[k] = dv;
				nk++;
			}
			ix->kind[ix->off[i] + d] = (uint32_t)k;
		}
	}
	for (size_t i = 0; i < ix->n_nodes; i++) {
		size_t rep = ix->scls_rep[ix->scls[i]];
		if (rep != i)
			for (size_t d = 0; d < c->nodes[i]->n_devices; d++)
				ix->kind[ix->off[i] + d] = ix->kind[ix->off[rep] + d];
	}
	ix->n_kinds = nk;
	free(kinds);
}

int xp_place_index_update(struct xp_place_index *ix, const struct xp_cluster *c, const size_t *changed,
			  size_t n_changed)
{
	size_t nn = ix->n_nodes;
	/* What a refresh changes only: the same nodes in the same places with as many devices,
	 * and nothing of the index's own (commits, a dry-run's changes) to carry over. */
	if (c->n_nodes != nn || ix->n_commits || ix->n_undo || ix->recording || ix->cs)
		return -1;
	for (size_t j = 0; j < n_changed; j++) {
		size_t i = changed[j];
		if (i >= nn || c->nodes[i]->n_devices != ix->off[i + 1] - ix->off[i])
			return -1;
		/* Its name keeps its rank: between its neighbours by name. */
		uint32_t r = ix->rank[i];
		if ((r > 0 && name_cmp_at(c, ix->order[r - 1], i) > 0) ||
		    (r + 1 < nn && name_cmp_at(c, i, ix->order[r + 1]) > 0))
			return -1;
	}
	bool *chg = xp_calloc(nn ? nn : 1, sizeof *chg);
	size_t k_changed = 0;
	for (size_t j = 0; j < n_changed; j++) {
		size_t i = changed[j];
		if (chg[i])
			continue;
		chg[i] = true;
		k_changed++;
		member_rm(ix, ix->cls[i], ix->rank[i]);
		ix->scls_n[ix->scls[i]]--;
	}
	ix->c = c;
	/* A static class whose first node changed is judged on another of its nodes, one that
	 * did not; one with none left is empty for good (it never gets members again). */
	size_t n_scls0 = ix->n_scls;
	bool *orphan = xp_calloc(n_scls0 ? n_scls0 : 1, sizeof *orphan);
	for (size_t sc = 0; sc < n_scls0; sc++)
		orphan[sc] = chg[ix->scls_rep[sc]];
	for (size_t i = 0; i < nn; i++)
		if (!chg[i] && orphan[ix->scls[i]]) {
			orphan[ix->scls[i]] = false;
			ix->scls_rep[ix->scls[i]] = i;
		}
	bool static_moved = false;
	for (size_t sc = 0; sc < n_scls0; sc++)
		static_moved |= orphan[sc];
	/* The static classes by hash (made here: the build does not keep its table). */
	size_t scap = 1024;
	while (scap < (n_scls0 + k_changed) * 2)
		scap *= 2;
	uint32_t *st = xp_calloc(scap, sizeof *st);
	uint64_t *sh = xp_malloc((n_scls0 + k_changed + 1) * sizeof *sh);
	for (size_t sc = 0; sc < n_scls0; sc++) {
		if (orphan[sc])
			continue;
		uint64_t h = node_static_hash(c->nodes[ix->scls_rep[sc]]);
		sh[sc] = h;
		size_t p = h & (scap - 1);
		while (st[p])
			p = (p + 1) & (scap - 1);
		st[p] = (uint32_t)sc + 1;
	}
	for (size_t r = 0; r < nn; r++) {
		size_t i = ix->order[r];
		if (!chg[i])
			continue;
		const struct xp_node *n = c->nodes[i];
		uint64_t h = node_static_hash(n);
		size_t p = h & (scap - 1);
		uint32_t found = UINT32_MAX;
		for (; st[p]; p = (p + 1) & (scap - 1))
			if (sh[st[p] - 1] == h && node_static_eq(c->nodes[ix->scls_rep[st[p] - 1]], n)) {
				found = st[p] - 1;
				break;
			}
		if (found == UINT32_MAX) {
			/* A new static class, this node its first: its devices judged as the build does. */
			found = (uint32_t)ix->n_scls++;
			static_moved = true;
			ix->scls_rep = xp_realloc(ix->scls_rep, ix->n_scls * sizeof *ix->scls_rep);
			ix->live = xp_realloc(ix->live, ix->n_scls * sizeof *ix->live);
			ix->n_live = xp_realloc(ix->n_live, ix->n_scls * sizeof *ix->n_live);
			ix->cap_live = xp_realloc(ix->cap_live, ix->n_scls * sizeof *ix->cap_live);
			ix->scls_n = xp_realloc(ix->scls_n, ix->n_scls * sizeof *ix->scls_n);
			ix->live[found] = NULL;
			ix->n_live[found] = ix->cap_live[found] = ix->scls_n[found] = 0;
			ix->scls_rep[found] = i;
			sh[found] = h;
			st[p] = found + 1;
			/* Its kinds are numbered with every node's after the update (kinds_renumber). */
			for (size_t d = 0; d < n->n_devices; d++)
				ix->di[ix->off[i] + d] = lookup(ix, &n->devices[d]);
			layouts_apply(ix, i);
		} else {
			size_t rep = ix->scls_rep[found];
			for (size_t d = 0; d < n->n_devices; d++)
				ix->di[ix->off[i] + d] = ix->di[ix->off[rep] + d];
		}
		ix->scls[i] = found;
		ix->scls_n[found]++;
		for (size_t d = 0; d < n->n_devices; d++) {
			size_t s = ix->off[i] + d;
			slot_use(ix, &n->devices[d], s);
		}
	}
	free(st);
	free(sh);
	free(orphan);
	double *u = xp_malloc((2 * XP_MAX_DEVICES + 1) * sizeof *u);
	for (size_t r = 0; r < nn; r++)
		if (chg[ix->order[r]])
			node_join(ix, r, u);
	free(u);
	free(chg);
	kinds_renumber(ix);
	/* Kept answers are a class's (its static class and use): they stay, unless static classes
	 * came or went (each query's static answers are sized by them). What reads the cluster
	 * across nodes goes: switch and rack lists, product walks. */
	if (static_moved)
		memo_clear(ix);
	for (int r = 0; r < 2; r++) {
		free(ix->dom[r].keys);
		free(ix->dom[r].start);
		free(ix->dom[r].nodes);
		free(ix->dom[r].of);
		memset(&ix->dom[r], 0, sizeof ix->dom[r]);
	}
	xp_strv_free(ix->pkeys, ix->n_p);
	free(ix->pvals);
	ix->pkeys = NULL;
	ix->pvals = NULL;
	ix->n_p = 0;
	return (int)k_changed;
}

static void query_drop(struct xpi_query *q)
{
	for (size_t i = 0; i < q->n_ans; i++)
		free(q->ans[i].dev);
	free(q->ans);
	free(q->slot);
	free(q->score);
	free(q->ub);
	free(q->sslot);
	free(q->open);
	free(q->kinds_ok);
	free(q->sig);
	xp_strv_free(q->texts, q->n_texts);
	memset(q, 0, sizeof *q);
}

static void memo_clear(struct xp_place_index *ix)
{
	for (size_t i = 0; i < ix->n_q; i++)
		query_drop(&ix->q[i]);
	free(ix->q);
	ix->q = NULL;
	ix->n_q = 0;
}

void xp_place_index_free(struct xp_place_index *ix)
{
	if (!ix)
		return;
	memo_clear(ix);
	free(ix->kind);
	free(ix->kind_slot);
	for (size_t k = 0; k < ix->n_classes; k++) {
		free(ix->classes[k].used);
		free(ix->classes[k].members);
	}
	free(ix->classes);
	free(ix->htab);
	for (size_t i = 0; i < ix->n_scls; i++)
		free(ix->live[i]);
	free(ix->live);
	free(ix->live_all);
	free(ix->live_all_sc);
	free(ix->n_live);
	free(ix->cap_live);
	free(ix->scls_n);
	for (size_t i = 0; i < ix->n_commits; i++) {
		struct xpi_commit *m = &ix->commits[i];
		for (size_t r = 0; r < m->n; r++)
			free(m->pos[r]);
		free(m->node);
		free(m->n_pos);
		free(m->pos);
		free(m->take);
		free(m->mode);
		free(m->tpl);
	}
	free(ix->commits);
	for (size_t s = 0; ix->cs && s < ix->off[ix->n_nodes]; s++)
		free(ix->cs[s].t);
	free(ix->cs);
	for (int r = 0; r < 2; r++) {
		free(ix->dom[r].keys);
		free(ix->dom[r].start);
		free(ix->dom[r].nodes);
		free(ix->dom[r].of);
	}
	xp_strv_free(ix->vkeys, ix->n_v);
	free(ix->vvals);
	xp_strv_free(ix->pkeys, ix->n_p);
	free(ix->pvals);
	free(ix->undo);
	free(ix->cls);
	free(ix->scls);
	free(ix->scls_rep);
	free(ix->di);
	free(ix->hard);
	free(ix->soft);
	free(ix->base);
	free(ix->used);
	free(ix->off);
	free(ix->rank);
	free(ix->order);
	free(ix);
}

const char *xpi_domain_of(const struct xp_place_index *ix, size_t i, bool rack)
{
	const struct xp_node *n = ix->c->nodes[i];
	const char *k = rack ? n->rack : n->sw;
	return k && *k ? k : NULL;
}

struct dom_ctx {
	const struct xp_place_index *ix;
	bool rack;
};

static int dom_cmp(const void *a, const void *b, void *arg)
{
	const struct dom_ctx *d = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int r = strcmp(xpi_domain_of(d->ix, x, d->rack), xpi_domain_of(d->ix, y, d->rack));
	if (r)
		return r;
	return d->ix->rank[x] < d->ix->rank[y] ? -1 : d->ix->rank[x] > d->ix->rank[y];
}

const struct xpi_domains *xpi_domains(struct xp_place_index *ix, bool rack)
{
	struct xpi_domains *d = &ix->dom[rack];
	if (d->built)
		return d;
	d->built = true;
	d->nodes = xp_calloc(ix->n_nodes ? ix->n_nodes : 1, sizeof *d->nodes);
	size_t m = 0;
	for (size_t i = 0; i < ix->n_nodes; i++) {
		if (xpi_domain_of(ix, i, rack))
			d->nodes[m++] = i;
		else
			d->nokey++;
	}
	struct dom_ctx ctx = {ix, rack};
	qsort_r(d->nodes, m, sizeof *d->nodes, dom_cmp, &ctx);
	d->keys = xp_calloc(m ? m : 1, sizeof *d->keys);
	d->start = xp_calloc(m + 1, sizeof *d->start);
	for (size_t i = 0; i < m; i++) {
		const char *k = xpi_domain_of(ix, d->nodes[i], rack);
		if (!d->n || strcmp(d->keys[d->n - 1], k) != 0) {
			d->start[d->n] = i;
			d->keys[d->n++] = k;
		}
	}
	d->start[d->n] = m;
	d->of = xp_malloc((ix->n_nodes ? ix->n_nodes : 1) * sizeof *d->of);
	for (size_t i = 0; i < ix->n_nodes; i++)
		d->of[i] = SIZE_MAX;
	for (size_t k = 0; k < d->n; k++)
		for (size_t i = d->start[k]; i < d->start[k + 1]; i++)
			d->of[d->nodes[i]] = k;
	return d;
}

void xp_place_index_stats(const struct xp_place_index *ix, struct xp_place_index_stats *s)
{
	memset(s, 0, sizeof *s);
	s->nodes = ix->n_nodes;
	s->static_classes = ix->n_scls;
	s->classes = ix->n_classes;
	s->live_classes = ix->n_live_all;
	for (size_t i = 0; i < ix->n_q; i++)
		s->queries += ix->q[i].sig != NULL;
	s->judged = ix->evals;
	s->reused = ix->hits;
	s->product_walks = ix->product_walks;
}

void xp_place_index_set_validation(struct xp_place_index *ix,
				   int (*fn)(void *ctx, const struct xp_device *d, const char *kase), void *ctx)
{
	ix->validated = fn;
	ix->vctx = ctx;
	xp_strv_free(ix->vkeys, ix->n_v);
	free(ix->vvals);
	ix->vkeys = NULL;
	ix->vvals = NULL;
	ix->n_v = 0;
	/* Answers judged under the old evidence are void. */
	memo_clear(ix);
}

int xpi_validated(struct xp_place_index *ix, const struct xp_device *d, const char *kase)
{
	if (!ix->validated)
		return -1;
	char *key = xp_asprintf("%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", d->vendor ? d->vendor : "", d->model ? d->model : "",
				d->driver ? d->driver : "", d->firmware ? d->firmware : "",
				d->runtime ? d->runtime : "", kase ? kase : "");
	for (size_t i = 0; i < ix->n_v; i++)
		if (strcmp(ix->vkeys[i], key) == 0) {
			free(key);
			return ix->vvals[i];
		}
	int v = ix->validated(ix->vctx, d, kase);
	ix->vkeys = xp_realloc(ix->vkeys, (ix->n_v + 1) * sizeof *ix->vkeys);
	ix->vvals = xp_realloc(ix->vvals, (ix->n_v + 1) * sizeof *ix->vvals);
	ix->vkeys[ix->n_v] = key;
	ix->vvals[ix->n_v++] = v;
	return v;
}

/* "v<vendor>" or "-", then "\x1f", then the same of the model: NULL apart from every string. */
static char *product_key(const char *vendor, const char *model)
{
	return xp_asprintf("%s%s\x1f%s%s", vendor ? "v" : "-", vendor ? vendor : "", model ? "v" : "-", model ? model : "");
}

int xpi_product_get(const struct xp_place_index *ix, const char *vendor, const char *model)
{
	if (!ix->n_p)
		return -1;
	char *key = product_key(vendor, model);
	int v = -1;
	for (size_t i = 0; i < ix->n_p && v < 0; i++)
		if (strcmp(ix->pkeys[i], key) == 0)
			v = ix->pvals[i];
	free(key);
	return v;
}

void xpi_product_put(struct xp_place_index *ix, const char *vendor, const char *model, bool one)
{
	if (ix->n_p == XPI_PRODUCTS) {
		xp_strv_free(ix->pkeys, ix->n_p);
		free(ix->pvals);
		ix->pkeys = NULL;
		ix->pvals = NULL;
		ix->n_p = 0;
	}
	ix->pvals = xp_realloc(ix->pvals, (ix->n_p + 1) * sizeof *ix->pvals);
	ix->pvals[ix->n_p] = one;
	ix->product_walks++;
	char *key = product_key(vendor, model);
	xp_strv_add(&ix->pkeys, &ix->n_p, key);
	free(key);
}

uint32_t xpi_query(struct xp_place_index *ix, const char *sig)
{
	ix->tick++;
	size_t lru = 0;
	for (size_t i = 0; i < ix->n_q; i++) {
		if (ix->q[i].sig && strcmp(ix->q[i].sig, sig) == 0) {
			ix->q[i].used_at = ix->tick;
			return (uint32_t)i;
		}
		if (ix->q[i].used_at < ix->q[lru].used_at)
			lru = i;
	}
	if (ix->n_q < XPI_QUERIES) {
		ix->q = xp_realloc(ix->q, (ix->n_q + 1) * sizeof *ix->q);
		memset(&ix->q[ix->n_q], 0, sizeof *ix->q);
		lru = ix->n_q++;
	} else
		query_drop(&ix->q[lru]);
	struct xpi_query *q = &ix->q[lru];
	q->sig = xp_strdup(sig);
	q->used_at = ix->tick;
	q->sslot = xp_calloc(ix->n_scls ? ix->n_scls : 1, sizeof *q->sslot);
	q->open = xp_malloc((ix->n_scls ? ix->n_scls : 1) * sizeof *q->open);
	for (size_t sc = 0; sc < ix->n_scls; sc++)
		q->open[sc] = (uint32_t)sc;
	q->n_open = ix->n_scls;
	q->kinds_ok = xp_calloc(ix->n_scls ? ix->n_scls : 1, sizeof *q->kinds_ok);
	return (uint32_t)lru;
}

size_t xpi_slot_node(const struct xp_place_index *ix, size_t slot)
{
	/* Slots run node by node: the node is the last whose first slot is at or below it. */
	size_t lo = 0, hi = ix->n_nodes;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (ix->off[mid] <= slot)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

const struct xpi_memo *xpi_static_get(const struct xp_place_index *ix, uint32_t qi, size_t sc)
{
	uint32_t a = ix->q[qi].sslot[sc];
	return a ? &ix->q[qi].ans[a - 1] : NULL;
}

const struct xpi_memo *xpi_memo_get(const struct xp_place_index *ix, uint32_t qi, uint32_t k)
{
	const struct xpi_query *q = &ix->q[qi];
	uint32_t a = q->sslot[ix->classes[k].scls];
	if (!a && k < q->cap_slot)
		a = q->slot[k];
	return a ? &q->ans[a - 1] : NULL;
}

/* Reason texts are kept once per query and go with it: a long-lived index asked about ever
 * new shapes does not keep every text it ever wrote. */
static const char *intern(struct xpi_query *q, const char *s)
{
	if (!s || !*s)
		return "";
	for (size_t i = q->n_texts; i-- > 0;)
		if (strcmp(q->texts[i], s) == 0)
			return q->texts[i];
	xp_strv_add(&q->texts, &q->n_texts, s);
	return q->texts[q->n_texts - 1];
}

/* Room in q's per-class arrays for classes 0..n-1: new slots not judged, new bounds not
 * reckoned. */
static void query_grow(struct xpi_query *q, size_t n)
{
	if (n <= q->cap_slot)
		return;
	size_t cap = q->cap_slot ? q->cap_slot : 256;
	while (cap < n)
		cap *= 2;
	q->slot = xp_realloc(q->slot, cap * sizeof *q->slot);
	q->score = xp_realloc(q->score, cap * sizeof *q->score);
	q->ub = xp_realloc(q->ub, cap * sizeof *q->ub);
	memset(q->slot + q->cap_slot, 0, (cap - q->cap_slot) * sizeof *q->slot);
	for (size_t k = q->cap_slot; k < cap; k++)
		q->ub[k] = -1;
	q->cap_slot = cap;
}

double *xpi_query_ub(struct xp_place_index *ix, uint32_t qi)
{
	query_grow(&ix->q[qi], ix->n_classes);
	return ix->q[qi].ub;
}

const struct xpi_memo *xpi_memo_put(struct xp_place_index *ix, uint32_t qi, uint32_t k, const struct xpi_memo *m,
				    bool statik)
{
	struct xpi_query *q = &ix->q[qi];
	if (q->n_ans == q->cap_ans) {
		q->cap_ans = q->cap_ans ? q->cap_ans * 2 : 64;
		q->ans = xp_realloc(q->ans, q->cap_ans * sizeof *q->ans);
	}
	struct xpi_memo *o = &q->ans[q->n_ans++];
	*o = *m;
	o->text = intern(q, m->text);
	o->dev = NULL;
	if (m->n) {
		o->dev = xp_malloc(m->n * sizeof *o->dev);
		memcpy(o->dev, m->dev, m->n * sizeof *o->dev);
	}
	if (statik)
		q->sslot[ix->classes[k].scls] = (uint32_t)q->n_ans;
	else {
		query_grow(q, k + 1);
		q->slot[k] = (uint32_t)q->n_ans;
		q->score[k] = m->ok ? m->score : -1;
	}
	return o;
}

size_t xpi_gc(struct xp_place_index *ix, bool force)
{
	if (ix->recording || (!force && ix->n_classes <= 2 * ix->n_live_all + 4096))
		return 0;
	uint32_t *map = xp_malloc((ix->n_classes ? ix->n_classes : 1) * sizeof *map);
	size_t n = 0;
	for (size_t k = 0; k < ix->n_classes; k++) {
		struct xpi_class *c = &ix->classes[k];
		if (c->n_members) {
			map[k] = (uint32_t)n;
			ix->classes[n++] = *c;
		} else {
			map[k] = UINT32_MAX;
			free(c->used);
			free(c->members);
		}
	}
	size_t dropped = ix->n_classes - n;
	ix->n_classes = n;
	for (size_t i = 0; i < ix->n_nodes; i++)
		ix->cls[i] = map[ix->cls[i]];
	for (size_t sc = 0; sc < ix->n_scls; sc++)
		for (size_t li = 0; li < ix->n_live[sc]; li++)
			ix->live[sc][li] = map[ix->live[sc][li]];
	for (size_t li = 0; li < ix->n_live_all; li++)
		ix->live_all[li] = map[ix->live_all[li]];
	/* Kept answers follow their class; a dropped class's answers go with it. */
	for (size_t qi = 0; qi < ix->n_q; qi++) {
		struct xpi_query *q = &ix->q[qi];
		if (!q->sig)
			continue;
		bool *keep = xp_calloc(q->n_ans ? q->n_ans : 1, sizeof *keep);
		uint32_t *slot = xp_calloc(q->cap_slot ? q->cap_slot : 1, sizeof *slot);
		double *score = xp_calloc(q->cap_slot ? q->cap_slot : 1, sizeof *score);
		double *ub = xp_malloc((q->cap_slot ? q->cap_slot : 1) * sizeof *ub);
		for (size_t k = 0; k < q->cap_slot; k++)
			ub[k] = -1;
		for (size_t k = 0; k < q->cap_slot && k < dropped + n; k++) {
			if (map[k] != UINT32_MAX)
				ub[map[k]] = q->ub[k];
			if (q->slot[k] && map[k] != UINT32_MAX) {
				slot[map[k]] = q->slot[k];
				score[map[k]] = q->score[k];
				keep[q->slot[k] - 1] = true;
			}
		}
		for (size_t sc = 0; sc < ix->n_scls; sc++)
			if (q->sslot[sc])
				keep[q->sslot[sc] - 1] = true;
		/* Compact the answers, old index -> new, and point the slots at the new places. */
		uint32_t *amap = xp_calloc(q->n_ans ? q->n_ans : 1, sizeof *amap);
		size_t na = 0;
		for (size_t a = 0; a < q->n_ans; a++) {
			if (!keep[a]) {
				free(q->ans[a].dev);
				continue;
			}
			q->ans[na] = q->ans[a];
			amap[a] = (uint32_t)++na;
		}
		q->n_ans = na;
		for (size_t k = 0; k < q->cap_slot; k++)
			if (slot[k])
				slot[k] = amap[slot[k] - 1];
		for (size_t sc = 0; sc < ix->n_scls; sc++)
			if (q->sslot[sc])
				q->sslot[sc] = amap[q->sslot[sc] - 1];
		free(amap);
		free(keep);
		free(q->slot);
		free(q->score);
		free(q->ub);
		q->slot = slot;
		q->score = score;
		q->ub = ub;
		if (!q->cap_slot) {
			free(q->slot);
			free(q->score);
			free(q->ub);
			q->slot = NULL;
			q->score = NULL;
			q->ub = NULL;
		}
	}
	free(ix->htab);
	ix->htab = NULL;
	ix->hcap = 0;
	htab_grow(ix);
	free(map);
	return dropped;
}

int xpi_mode(const struct xp_place_index *ix, size_t node, size_t pos)
{
	size_t s = ix->off[node] + pos;
	return (ix->hard[s] ? XPI_HARD : 0) | (ix->soft[s] ? XPI_SOFT : 0);
}

/* A device's mode as its class key holds it: the mode bits and which slices commits put
 * there, so that nodes alike in use but not in those instances are judged apart. */
static double mode_key(const struct xp_place_index *ix, size_t node, size_t pos)
{
	size_t s = ix->off[node] + pos;
	return xpi_mode(ix, node, pos) + (ix->cs ? 4.0 * ix->cs[s].sig : 0);
}

const struct xp_mtemplate *const *xpi_committed(const struct xp_place_index *ix, size_t s, size_t *n)
{
	*n = ix->cs ? ix->cs[s].n - ix->cs[s].own : 0;
	return *n ? ix->cs[s].t : NULL;
}

const struct xp_mtemplate *const *xpi_own_slices(const struct xp_place_index *ix, size_t s, size_t *n)
{
	*n = ix->cs ? ix->cs[s].own : 0;
	return *n ? ix->cs[s].t + (ix->cs[s].n - *n) : NULL;
}

/* A 40-bit name of the multiset of templates on a device (order-free: a sum of mixed
 * pointers), exact in a double. */
static void cs_resign(struct xpi_cslices *c)
{
	uint64_t h = 0;
	/* A dry-run's own slices apart from commits': its new instances are its to arrange. */
	for (size_t i = 0; i < c->n; i++)
		h += mix_w(i < c->n - c->own ? 0x9e3779b97f4a7c15ULL : 0xc2b2ae3d27d4eb4fULL,
			   (uint64_t)(uintptr_t)c->t[i]);
	c->sig = c->n ? (double)((h & ((1ULL << 40) - 1)) | 1) : 0;
}

/* Adds (add) or removes one t to the committed slices of device slot s. */
static void cs_change(struct xp_place_index *ix, size_t s, const struct xp_mtemplate *t, bool add)
{
	if (!t)
		return;
	if (!ix->cs)
		ix->cs = xp_calloc(ix->off[ix->n_nodes] ? ix->off[ix->n_nodes] : 1, sizeof *ix->cs);
	struct xpi_cslices *c = &ix->cs[s];
	if (add) {
		c->t = xp_realloc(c->t, (c->n + 1) * sizeof *c->t);
		c->t[c->n++] = t;
	} else
		for (size_t i = c->n; i-- > 0;)
			if (c->t[i] == t) { /* the last: a dry-run's own are undone last first */
				c->t[i] = c->t[--c->n];
				break;
			}
	cs_resign(c);
}

static void set_use(struct xp_place_index *ix, size_t node, size_t pos, double u, int64_t hard, int64_t soft)
{
	size_t s = ix->off[node] + pos;
	if (ix->recording) {
		if (ix->n_undo == ix->cap_undo) {
			ix->cap_undo = ix->cap_undo ? ix->cap_undo * 2 : 64;
			ix->undo = xp_realloc(ix->undo, ix->cap_undo * sizeof *ix->undo);
		}
		ix->undo[ix->n_undo++] = (struct xpi_undo){node, pos, ix->used[s], ix->hard[s], ix->soft[s]};
	}
	ix->used[s] = u;
	ix->hard[s] = (uint32_t)(hard < 0 ? 0 : hard);
	ix->soft[s] = (uint32_t)(soft < 0 ? 0 : soft);
	uint32_t old = ix->cls[node];
	const struct xpi_class *k = &ix->classes[old];
	size_t n = n_dev(ix, k->scls);
	double buf[128], *v = n <= 64 ? buf : xp_malloc(2 * n * sizeof *v);
	memcpy(v, k->used, 2 * n * sizeof *v);
	v[pos] = clamp01(u);
	v[n + pos] = mode_key(ix, node, pos);
	if (memcmp(v, k->used, 2 * n * sizeof *v) != 0) {
		/* class_of may move the class array: take ids, not pointers, across it. */
		uint32_t nid = class_of(ix, ix->scls[node], v);
		member_rm(ix, old, ix->rank[node]);
		member_add(ix, nid, ix->rank[node]);
		ix->cls[node] = nid;
	}
	if (v != buf)
		free(v);
}

void xpi_set_use(struct xp_place_index *ix, size_t node, size_t pos, double u, int dh, int ds)
{
	size_t s = ix->off[node] + pos;
	set_use(ix, node, pos, u, (int64_t)ix->hard[s] + dh, (int64_t)ix->soft[s] + ds);
}

void xpi_set_use_slice(struct xp_place_index *ix, size_t node, size_t pos, double u, int dh, int ds,
		       const struct xp_mtemplate *t)
{
	/* Before the use: the class key set_use makes reads the committed slices. A dry-run's
	 * own come last (undone last first, so a removal takes the last). */
	cs_change(ix, ix->off[node] + pos, t, true);
	if (ix->recording && t) {
		ix->cs[ix->off[node] + pos].own++;
		cs_resign(&ix->cs[ix->off[node] + pos]);
	}
	xpi_set_use(ix, node, pos, u, dh, ds);
	if (ix->recording && t)
		ix->undo[ix->n_undo - 1].tpl = t;
}

void xpi_set_used(struct xp_place_index *ix, size_t node, size_t pos, double u)
{
	xpi_set_use(ix, node, pos, u, 0, 0);
}

void xpi_undo_all(struct xp_place_index *ix)
{
	ix->recording = false;
	while (ix->n_undo > 0) {
		struct xpi_undo *u = &ix->undo[--ix->n_undo];
		if (u->tpl) {
			cs_change(ix, ix->off[u->node] + u->pos, u->tpl, false);
			ix->cs[ix->off[u->node] + u->pos].own--;
			cs_resign(&ix->cs[ix->off[u->node] + u->pos]);
		}
		set_use(ix, u->node, u->pos, u->old, u->hard, u->soft);
	}
}

int xpi_replica_mode(const struct xp_place_replica *p)
{
	if (!p->isolation || !strcmp(p->isolation, "exclusive"))
		return 0;
	return strcmp(p->isolation, "soft") == 0 ? XPI_SOFT : XPI_HARD;
}

int64_t xp_place_commit(struct xp_place_index *ix, const struct xp_place_result *r)
{
	if (!r || !r->placed || !r->n_replicas)
		return -1;
	ix->commits = xp_realloc(ix->commits, (ix->n_commits + 1) * sizeof *ix->commits);
	struct xpi_commit *m = &ix->commits[ix->n_commits];
	m->n = r->n_replicas;
	m->node = xp_calloc(m->n, sizeof *m->node);
	m->n_pos = xp_calloc(m->n, sizeof *m->n_pos);
	m->pos = xp_calloc(m->n, sizeof *m->pos);
	m->take = xp_calloc(m->n, sizeof *m->take);
	m->mode = xp_calloc(m->n, sizeof *m->mode);
	m->tpl = xp_calloc(m->n, sizeof *m->tpl);
	for (size_t i = 0; i < r->n_replicas; i++) {
		const struct xp_place_replica *p = &r->replicas[i];
		m->node[i] = p->node_ix;
		m->n_pos[i] = p->n_devices;
		m->pos[i] = xp_calloc(p->n_devices ? p->n_devices : 1, sizeof *m->pos[i]);
		memcpy(m->pos[i], p->pos, p->n_devices * sizeof *p->pos);
		m->take[i] = p->take;
		m->mode[i] = xpi_replica_mode(p);
		if (m->mode[i] == XPI_HARD && p->n_devices)
			m->tpl[i] = xp_manifest_template(ix->di[ix->off[p->node_ix] + (size_t)p->pos[0]].md, p->slice);
		for (size_t d = 0; d < p->n_devices; d++) {
			cs_change(ix, ix->off[p->node_ix] + (size_t)p->pos[d], m->tpl[i], true);
			xpi_set_use(ix, p->node_ix, (size_t)p->pos[d], ix->used[ix->off[p->node_ix] + (size_t)p->pos[d]] + p->take,
				    m->mode[i] == XPI_HARD, m->mode[i] == XPI_SOFT);
		}
	}
	return (int64_t)ix->n_commits++;
}

bool xp_place_release(struct xp_place_index *ix, int64_t id)
{
	if (id < 0 || (size_t)id >= ix->n_commits || !ix->commits[id].n)
		return false;
	struct xpi_commit *m = &ix->commits[id];
	for (size_t i = 0; i < m->n; i++) {
		for (size_t d = 0; d < m->n_pos[i]; d++) {
			size_t s = ix->off[m->node[i]] + (size_t)m->pos[i][d];
			double u = ix->used[s] - m->take[i];
			/* Back to what the cluster showed when sums of fractions leave crumbs. */
			if (u < ix->base[s] + 1e-9 && u > ix->base[s] - 1e-9)
				u = ix->base[s];
			cs_change(ix, s, m->tpl[i], false);
			xpi_set_use(ix, m->node[i], (size_t)m->pos[i][d], u, -(m->mode[i] == XPI_HARD),
				    -(m->mode[i] == XPI_SOFT));
		}
		free(m->pos[i]);
	}
	free(m->mode);
	free(m->tpl);
	free(m->node);
	free(m->n_pos);
	free(m->pos);
	free(m->take);
	memset(m, 0, sizeof *m);
	return true;
}

bool xp_place_commit_live(const struct xp_place_index *ix, int64_t id)
{
	return id >= 0 && (size_t)id < ix->n_commits && ix->commits[id].n > 0;
}

double xp_place_index_use(const struct xp_place_index *ix, size_t node_ix, size_t pos, double *base)
{
	size_t s = ix->off[node_ix] + pos;
	if (base)
		*base = ix->base[s];
	return ix->used[s];
}
