/* check_property.c: a property test of the placement engine (issue 14). Seeded random clusters
 * (1-8 nodes of the shipped manifests' models: MIG GPUs, Ascend products by node size, AMD,
 * CPU-only nodes; busy, faulty and sliced devices, MIG instances free (no job) and held, GPUs
 * with none, a device the product counts but the node does not list, idle fresh nodes, NUMA
 * domains, racks and switches, labels) and random jobs (whole devices, MIG and vNPU slices,
 * shares, patterns, NUMA and network constraints, gang minimums, every strategy, half of the
 * cases with xp_place_opts.reconfigure) go through the real engine: a dry-run on a kept index,
 * the scan that judges node by node, xp_place's own index, and batches committed one after
 * another on one index, then a release. Every answer is judged here by a checker written from
 * the rule text (man xpool.1 PLACEMENT, MIG PLACEMENT) and the manifest data, never by the
 * engine's own helpers: no device used twice (the cluster's allocations and earlier replicas
 * and commits included), devices healthy and of the kind asked, MIG slices (default: each on
 * a distinct free existing instance of its profile, instance "existing"; reconfigure: that,
 * else a new instance legal beside every instance there, "new"; a commit holds a free
 * instance of its profile first; a GPU with any instance is not offered whole or as a share),
 * MIG starts and spans, slice counts, shares, gang all-or-nothing, NUMA and network
 * constraints, refusal reasons that cover every node, a refusal's relaxation that places the
 * job. Whole devices are judged by the entry the node places by: the model's first [layout]
 * whose devices range holds the node's count of that kind (the checker's own walk over the
 * manifest's variants), else the [model]: its counts (counts_multi in a job of several tasks:
 * more than one replica over all groups), its groups (ring:N and card:N alike: within one
 * group, the vendor's ring_priority order, lowest devices), and wider requests by its wide
 * rule (wide_multi in a job of several tasks): whole groups, mirror (an equal share of every
 * group at the same positions, the lowest first) or pair (each group's lowest free). The
 * vendor's node score (which node wins) is not judged here: tests/check_ascend_products.c has
 * golden references for it.
 *
 * Refusals on tiny clusters (1-2 nodes of at most 8 devices, one group, one replica, no NUMA
 * or network constraint, no slice) are checked against a brute force over every subset of a
 * node's devices judged by the same rules: it covers the 910A's Atlas 800 rule, Ascend 910B
 * half x4 (1-4) and Atlas 800T A2 (5-8), the A3 node (card:2, whole modules) of up to 8, Atlas
 * 300I and 300I Duo cards; not Atlas 200T A2 Box16 (its nodes hold 9-16, over the brute
 * force's 8) nor counts_multi / wide_multi (one replica is a job of one task).
 *
 * Each case is one seed; a failure names it. XP_PROP_SEED=N runs that one case alone,
 * XP_PROP_CASES=N changes the cases per chunk, XP_PROP_BASE=N adds N to every seed (other
 * cases than make check's), XP_PROP_STATS=1 prints what the chunks saw,
 * XP_PROP_SURVEY=1 (while hunting defects) prints each failure on one line and goes on (the
 * chunk still fails at its end). */
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "jobspec.h"
#include "manifest.h"
#include "model.h"
#include "place.h"
#include "suitelib.h"
#include "xp.h"

#define CHUNKS 4
#define CASES 25000 /* per chunk: 10^5 in all */
#define EPSV 1e-6

/* ---- a seeded generator (splitmix64): the same seed, the same case, on every machine ---- */

struct rng {
	uint64_t s;
};

static uint64_t rnext(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* lo..hi inclusive. */
static int rint_in(struct rng *r, int lo, int hi) { return lo + (int)(rnext(r) % (uint64_t)(hi - lo + 1)); }
static bool chance(struct rng *r, int pct) { return (int)(rnext(r) % 100) < pct; }

/* ---- the manifests, and the models clusters are made of ---- */

static struct xp_manifest *ms[XP_PLACE_MANIFESTS];
static size_t nm;

struct cat {
	const struct xp_manifest *m;
	const struct xp_mmodel *md;
	int weight;
};
static struct cat cats[256];
/* The [layout] names of the manifests, for the counts of replicas placed by each. */
static const char *lays[64];
static size_t nlays;
static size_t ncat;
static int cat_total;

/* A model's group size under the affinity rule ring:N or card:N (its own, else the
 * adapter's), 0 none: a card's chips are judged as a ring's devices are. */
static int ring_size(const struct xp_manifest *m, const struct xp_mmodel *md)
{
	int aff = md->affinity ? md->affinity : m->affinity;
	int rs = md->ring_size ? md->ring_size : m->ring_size;
	return aff == XP_AFF_RING || aff == XP_AFF_CARD ? rs : 0;
}

/* The entry a node holding n devices of md places by (adapters/README.md, [layout]): the first
 * layout made from md whose devices include n (none given: any), else md. The checker's own
 * walk over the manifest's variants. */
static const struct xp_mmodel *layout_of(const struct xp_manifest *m, const struct xp_mmodel *md, int n)
{
	for (size_t i = 0; m && md && i < m->n_variants; i++) {
		uint64_t d = m->variants[i].layout_devices;
		if (&m->models[m->variant_of[i]] == md && (!d || (n >= 1 && n <= 64 && (d >> (n - 1) & 1))))
			return &m->variants[i];
	}
	return md;
}

/* Whether md has any [layout] (a node's size may change its rule). */
static bool has_layouts(const struct xp_manifest *m, const struct xp_mmodel *md)
{
	for (size_t i = 0; i < m->n_variants; i++)
		if (&m->models[m->variant_of[i]] == md)
			return true;
	return false;
}

/* The counts a replica may take in a job of one task or several (counts_multi where given). */
static uint64_t counts_for(const struct xp_mmodel *md, bool multi)
{
	return multi && md->counts_multi ? md->counts_multi : md->counts;
}

/* What a request wider than a group takes (wide_multi where given in a job of several tasks). */
static int wide_for(const struct xp_mmodel *md, bool multi)
{
	return multi && md->has_wide_multi ? md->wide_multi : md->wide;
}

/* A job of several tasks: more than one replica over all its groups. */
static bool multi_task(const struct xp_job *j)
{
	int t = 0;
	for (size_t i = 0; i < j->n_groups; i++)
		t += j->groups[i].replicas;
	return t > 1;
}

static void setup(void)
{
	nm = xp_place_manifests(ms);
	ck_assert_uint_ge(nm, 1);
	ncat = 0;
	cat_total = 0;
	/* Every model of every manifest, so that a product added to a manifest is covered; those
	 * with rules (counts, rings, slices) more often. */
	for (size_t i = 0; i < nm; i++)
		for (size_t k = 0; k < ms[i]->n_models && ncat < sizeof cats / sizeof *cats; k++) {
			const struct xp_mmodel *md = &ms[i]->models[k];
			int w = 1 + (md->counts ? 3 : 0) + (ring_size(ms[i], md) ? 3 : 0) + (md->n_templates ? 2 : 0) +
				(md->slots ? 3 : 0) + (has_layouts(ms[i], md) ? 6 : 0);
			cats[ncat++] = (struct cat){ms[i], md, w};
			cat_total += w;
		}
	ck_assert_uint_ge(ncat, 4);
	nlays = 0;
	for (size_t i = 0; i < nm; i++)
		for (size_t k = 0; k < ms[i]->n_variants; k++) {
			bool seen = false;
			for (size_t j = 0; j < nlays; j++)
				seen = seen || !strcmp(lays[j], ms[i]->variants[k].layout);
			if (!seen && nlays < sizeof lays / sizeof *lays)
				lays[nlays++] = ms[i]->variants[k].layout;
		}
}

static void teardown(void)
{
	xp_place_manifests_free(ms, nm);
	nm = 0;
}

static const struct cat *pick_cat(struct rng *r)
{
	int x = rint_in(r, 0, cat_total - 1);
	for (size_t i = 0; i < ncat; i++) {
		if (x < cats[i].weight)
			return &cats[i];
		x -= cats[i].weight;
	}
	return &cats[0];
}

/* ---- the checker's own view of devices ---- */

/* What one device holds, as the checker tracks it: the cluster's allocations, then what
 * earlier replicas of this dry-run and earlier commits took. */
struct dst {
	const struct xp_manifest *m; /* its manifest and model (NULL: none describes it) */
	const struct xp_mmodel *md;
	const struct xp_mmodel *lay; /* the entry the node places it by: md's [layout] for the node's
				      * count of its kind, else md (NULL with md) */
	int whole;            /* whole-device holders */
	int soft_pct;         /* soft shares, percent */
	int soft;             /* soft holders */
	int hard;             /* hard slices (MIG, vNPU) */
	double hard_use;      /* their compute share */
	bool unknown;         /* a slice no template of the model names: the device is full */
	const char *inst[40]; /* the hard slices' template names (MIG instances, free or held) */
	bool free_inst[40];   /* that instance is free: no job holds it (a MIG slice may take it) */
	int ninst;
};

struct world {
	const struct xp_cluster *c;
	struct dst **d; /* [node][device] */
};

/* The template of md named name, any case (the checker's own lookup). */
static const struct xp_mtemplate *tmpl(const struct xp_mmodel *md, const char *name)
{
	for (size_t i = 0; md && name && i < md->n_templates; i++)
		if (strcasecmp(md->templates[i].name, name) == 0)
			return &md->templates[i];
	return NULL;
}

/* The compute share a hard slice takes: its compute, else 1/count, all when not known. */
static double slice_share(const struct xp_mtemplate *t)
{
	if (!t)
		return 1;
	if (t->compute > 0 && t->compute <= 1)
		return t->compute;
	return t->count > 0 ? 1.0 / t->count : 1;
}

static const struct xp_mmodel *model_of(const struct xp_device *d, const struct xp_manifest **m)
{
	*m = NULL;
	for (size_t i = 0; d->model && i < ncat; i++)
		if (strcmp(cats[i].md->name, d->model) == 0) {
			*m = cats[i].m;
			return cats[i].md;
		}
	return NULL;
}

/* A free instance of t on s not yet taken, -1 none. */
static int free_of(const struct dst *s, const struct xp_mtemplate *t)
{
	for (int i = 0; t && i < s->ninst; i++)
		if (s->free_inst[i] && tmpl(s->md, s->inst[i]) == t)
			return i;
	return -1;
}

/* A slice named name on s: an instance (free: no job holds it). */
static void world_add_inst(struct dst *s, const char *name, bool isfree)
{
	const struct xp_mtemplate *t = tmpl(s->md, name);
	s->hard++;
	s->hard_use += slice_share(t);
	if (!t)
		s->unknown = true;
	else if (s->ninst < (int)(sizeof s->inst / sizeof *s->inst)) {
		s->free_inst[s->ninst] = isfree;
		s->inst[s->ninst++] = t->name;
	} else
		s->unknown = true;
}

/* A slice placed or committed: it holds a free instance of its profile where one is left
 * (man xpool.1, MIG PLACEMENT), else it is a new instance. */
static void world_add_slice(struct dst *s, const char *name)
{
	int f = free_of(s, tmpl(s->md, name));
	if (f >= 0)
		s->free_inst[f] = false;
	else
		world_add_inst(s, name, false);
}

static bool geometric(const struct xp_mmodel *md, const struct xp_mtemplate *t);
static bool same_kind(const struct xp_device *a, const struct xp_device *b);

static struct world world_new(const struct xp_cluster *c)
{
	struct world w = {c, xp_calloc(c->n_nodes ? c->n_nodes : 1, sizeof *w.d)};
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct xp_node *n = c->nodes[i];
		w.d[i] = xp_calloc(n->n_devices ? n->n_devices : 1, sizeof **w.d);
		for (size_t k = 0; k < n->n_devices; k++) {
			struct dst *s = &w.d[i][k];
			const struct xp_device *d = &n->devices[k];
			s->md = model_of(d, &s->m);
			int same = 0;
			for (size_t e = 0; e < n->n_devices; e++)
				same += same_kind(&n->devices[e], d);
			s->lay = layout_of(s->m, s->md, same);
			for (size_t a = 0; a < d->n_allocs; a++) {
				const struct xp_alloc *al = &d->allocs[a];
				if (al->share_pct > 0) {
					s->soft++;
					s->soft_pct += al->share_pct;
				} else if (!al->slice)
					s->whole++;
				else
					/* Free: a MIG profile with positions that no job holds. */
					world_add_inst(s, al->slice, !al->owner && geometric(s->md, tmpl(s->md, al->slice)));
			}
		}
	}
	return w;
}

static void world_free(struct world *w)
{
	for (size_t i = 0; i < w->c->n_nodes; i++)
		free(w->d[i]);
	free(w->d);
	w->d = NULL;
}

static bool dev_busy(const struct dst *s) { return s->whole || s->soft || s->hard; }

/* ---- MIG geometry, from the manifest's slots, starts and spans ---- */

/* Whether the instances names[0..n) have an arrangement on md's slots: each from a start its
 * template lists, its span inside the device, no two overlapping. Plain backtracking. */
static bool arrange(const struct xp_mmodel *md, const struct xp_mtemplate *const *t, int n, unsigned occ)
{
	if (n == 0)
		return true;
	const struct xp_mtemplate *x = t[n - 1];
	for (int s = 0; s < md->slots; s++) {
		if (!(x->at & (1u << s)) || s + x->span > md->slots)
			continue;
		unsigned span = ((1u << x->span) - 1) << s;
		if (occ & span)
			continue;
		if (arrange(md, t, n - 1, occ | span))
			return true;
	}
	return false;
}

static bool geometric(const struct xp_mmodel *md, const struct xp_mtemplate *t)
{
	return md && md->slots > 0 && t && t->span > 0 && t->at;
}

/* Whether the hard slices on s plus one more of extra (NULL: none) can all exist: counts per
 * template within the model's, the compute within the device, and with positions an
 * arrangement NVIDIA allows. */
static bool slices_legal(const struct dst *s, const struct xp_mtemplate *extra, char *why, size_t len)
{
	if (s->unknown) {
		snprintf(why, len, "a slice beside an unknown one (the device is full)");
		return false;
	}
	const struct xp_mtemplate *all[41];
	int n = 0;
	for (int i = 0; i < s->ninst; i++)
		all[n++] = tmpl(s->md, s->inst[i]);
	if (extra)
		all[n++] = extra;
	double use = 0;
	bool geo = true;
	for (int i = 0; i < n; i++) {
		use += slice_share(all[i]);
		int same = 0;
		for (int j = 0; j < n; j++)
			same += all[j] == all[i];
		if (all[i]->count > 0 && same > all[i]->count) {
			snprintf(why, len, "%d instances of %s, the model allows %d", same, all[i]->name, all[i]->count);
			return false;
		}
		geo = geo && geometric(s->md, all[i]);
	}
	if (use > 1 + EPSV) {
		snprintf(why, len, "slices take %.3f of the device", use);
		return false;
	}
	if (geo && n && !arrange(s->md, all, n, 0)) {
		size_t o = (size_t)snprintf(why, len, "no legal MIG arrangement of");
		for (int i = 0; i < n && o < len; i++)
			o += (size_t)snprintf(why + o, len - o, " %s", all[i]->name);
		return false;
	}
	return true;
}

/* ---- the rule text, judged here ---- */

/* The case's xp_place_opts.reconfigure: MIG slices may be new instances. */
static bool reconf;

static bool glob_or_null(const char *g, const char *s) { return !g || (s && xp_glob_match(g, s)); }
/* Equal strings, NULL equal to NULL only. */
static bool seq(const char *a, const char *b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }
static bool wild(const char *s) { return strpbrk(s, "*?") != NULL; }

/* jobspec.h: the vendor pattern against the model's vendor or the adapter's name, the model
 * pattern against the model's name or the product names it matches (a plain name there as
 * text, a plain user pattern against a glob there); no manifest: the device's own strings. */
static bool matches(const struct xp_task_group *g, const struct xp_device *d, const struct dst *s)
{
	if (!s->md)
		return glob_or_null(g->vendor, d->vendor) && glob_or_null(g->model, d->model);
	if (g->vendor) {
		const char *v = s->md->vendor[0] ? s->md->vendor : s->m->vendor;
		if (!xp_glob_match(g->vendor, v) && !xp_glob_match(g->vendor, s->m->name))
			return false;
	}
	if (!g->model || xp_glob_match(g->model, s->md->name))
		return true;
	for (size_t k = 0; k < s->md->n_match; k++)
		if ((!wild(s->md->match[k]) && xp_glob_match(g->model, s->md->match[k])) ||
		    (!wild(g->model) && xp_glob_match(s->md->match[k], g->model)))
			return true;
	return false;
}

static bool node_ok(const struct xp_node *n, const struct xp_task_group *g)
{
	if (n->state != XP_NODE_UP && n->state != XP_NODE_DEGRADED)
		return false;
	for (size_t i = 0; i < g->labels.n; i++) {
		const char *v = xp_labels_get(&n->governance, g->labels.keys[i]);
		if (!v)
			v = xp_labels_get(&n->facts, g->labels.keys[i]);
		if (!v || strcmp(v, g->labels.values[i]) != 0)
			return false;
	}
	if (g->cpus > 0 && n->pus > 0 && n->pus < g->cpus)
		return false;
	if (g->host_memory_mib > 0 && n->memory_mib > 0 && n->memory_mib < g->host_memory_mib)
		return false;
	return true;
}

static bool same_kind(const struct xp_device *a, const struct xp_device *b)
{
	return seq(a->vendor, b->vendor) && seq(a->model, b->model) && seq(a->driver, b->driver);
}

/* The slice a group asks on device s: its template, NULL when the model has none by that name. */
static const struct xp_mtemplate *asked_slice(const struct xp_task_group *g, const struct dst *s)
{
	return g->slice ? tmpl(s->md, g->slice) : NULL;
}

/* Whether device k of node ni may serve a replica of g now, bar the group rules (shape): the
 * device's own checks. key: the homogeneous job's device kind, NULL for none. */
static bool dev_ok(const struct world *w, size_t ni, size_t k, const struct xp_task_group *g,
		   const struct xp_device *key, char *why, size_t len)
{
	const struct xp_device *d = &w->c->nodes[ni]->devices[k];
	const struct dst *s = &w->d[ni][k];
	if (!matches(g, d, s))
		return snprintf(why, len, "device %zu does not match the patterns", k), false;
	if (g->homogeneous && key && !same_kind(d, key))
		return snprintf(why, len, "device %zu is not the homogeneous job's kind", k), false;
	if (d->health == XP_HEALTH_FAIL)
		return snprintf(why, len, "device %zu failed", k), false;
	const struct xp_mtemplate *t = asked_slice(g, s);
	if (g->slice && !t)
		return snprintf(why, len, "device %zu has no slice %s", k, g->slice), false;
	int64_t mem = t ? t->memory_mib
		    : g->share_pct > 0 && d->memory_mib > 0 ? d->memory_mib * g->share_pct / 100 : d->memory_mib;
	if (g->memory_mib > 0 && mem < g->memory_mib)
		return snprintf(why, len, "device %zu gives %lld MiB", k, (long long)mem), false;
	if (g->min_ecu > 0 && !(XP_HAS(d->ecu) && d->ecu >= g->min_ecu))
		return snprintf(why, len, "device %zu under %g ECU", k, g->min_ecu), false;
	if (g->slice) {
		if (s->whole || s->soft)
			return snprintf(why, len, "slice on device %zu held whole or shared", k), false;
		/* A MIG profile: a free instance of it, else (only with reconfigure) a new one
		 * beside every instance there, free or held. */
		if (geometric(s->md, t) && free_of(s, t) >= 0)
			return true;
		if (geometric(s->md, t) && !reconf)
			return snprintf(why, len, "no free %s instance on device %zu (no reconfigure)", t->name, k), false;
		return slices_legal(s, t, why, len);
	}
	if (g->share_pct > 0) {
		if (s->whole || s->hard)
			return snprintf(why, len, "share on device %zu held whole or sliced", k), false;
		if (s->soft_pct + g->share_pct > 100)
			return snprintf(why, len, "shares on device %zu pass 100%%", k), false;
		return true;
	}
	if (dev_busy(s))
		return snprintf(why, len, "device %zu in use", k), false;
	return true;
}

/* The distinct affinity groups of the node's devices of dev's kind, each by its first device
 * (ascending); returns how many, -1 when one of them has no group. */
static int kind_groups(const struct xp_node *n, const struct xp_device *dev, int *first)
{
	int ng = 0;
	for (size_t i = 0; i < n->n_devices; i++) {
		if (!same_kind(&n->devices[i], dev))
			continue;
		const char *grp = n->devices[i].affinity_group;
		if (!grp)
			return -1;
		bool seen = false;
		for (int j = 0; j < ng && !seen; j++)
			seen = seq(n->devices[first[j]].affinity_group, grp);
		if (!seen)
			first[ng++] = (int)i;
	}
	return ng;
}

/* Whole devices dev[0..k) of node ni as one replica of g, in a job of one task or several
 * (multi): the counts of the entry the node places by (its [layout]), its groups (ring:N or
 * card:N: k within one group, or wider by its wide rule: whole groups, or an equal share of
 * every group, mirror at the same positions), same_group. Device checks are dev_ok's. */
static bool shape_ok(const struct world *w, size_t ni, const struct xp_task_group *g, const int *dev, size_t k,
		     bool multi, char *why, size_t len)
{
	const struct xp_node *n = w->c->nodes[ni];
	const struct dst *s = &w->d[ni][dev[0]];
	const struct xp_mmodel *L = s->lay;
	uint64_t mask = L ? counts_for(L, multi) : 0;
	if (mask && (k > 64 || !(mask & (1ULL << (k - 1)))))
		return snprintf(why, len, "%zu devices: not a count %s allows%s", k, L->layout[0] ? L->layout : L->name,
				multi ? " in a job of several tasks" : ""), false;
	int ring = L ? ring_size(s->m, L) : 0;
	int wide = L ? wide_for(L, multi) : XP_WIDE_WHOLE;
	if (ring > 0 && k <= (size_t)ring) {
		const char *grp = n->devices[dev[0]].affinity_group;
		for (size_t i = 0; i < k; i++)
			if (!grp || !seq(n->devices[dev[i]].affinity_group, grp))
				return snprintf(why, len, "%zu devices of a group of %d across groups", k, ring), false;
	} else if (ring > 0 && (wide == XP_WIDE_MIRROR || wide == XP_WIDE_PAIR)) {
		/* An equal share of every group of the kind; mirror: the same positions in each. */
		int first[XP_MAX_DEVICES];
		int ng = kind_groups(n, &n->devices[dev[0]], first);
		if (ng <= 0 || k % (size_t)ng || k / (size_t)ng > (size_t)ring)
			return snprintf(why, len, "%zu devices: not an equal share of %d groups of %d", k, ng, ring), false;
		size_t per = k / (size_t)ng;
		unsigned pos0 = 0;
		for (int gi = 0; gi < ng; gi++) {
			const char *grp = n->devices[first[gi]].affinity_group;
			size_t in = 0;
			unsigned pos = 0;
			for (size_t i = 0; i < k; i++)
				if (seq(n->devices[dev[i]].affinity_group, grp)) {
					in++;
					pos |= 1u << (n->devices[dev[i]].index % ring);
				}
			if (in != per)
				return snprintf(why, len, "%zu devices: %zu in group %s, not %zu", k, in, grp, per), false;
			if (gi == 0)
				pos0 = pos;
			else if (wide == XP_WIDE_MIRROR && pos != pos0)
				return snprintf(why, len, "%zu devices not at the same positions in each group", k), false;
		}
	} else if (ring > 0 && k % (size_t)ring == 0) {
		/* Whole groups: every device of each taken (a device the product counts but the
		 * node does not list leaves its group never whole). */
		for (size_t i = 0; i < k; i++) {
			const char *grp = n->devices[dev[i]].affinity_group;
			size_t total = 0, taken = 0;
			for (size_t j = 0; j < n->n_devices; j++)
				total += grp && seq(n->devices[j].affinity_group, grp);
			for (size_t j = 0; j < k; j++)
				taken += grp && seq(n->devices[dev[j]].affinity_group, grp);
			if (!grp || total != (size_t)ring || taken != total)
				return snprintf(why, len, "%zu devices not whole groups of %d", k, ring), false;
		}
	} else if (ring > 0)
		return snprintf(why, len, "%zu devices: wider than a group of %d and not whole groups", k, ring), false;
	if (g->same_group && k > 1 && !(ring > 0 && k > (size_t)ring)) {
		const char *grp = n->devices[dev[0]].affinity_group;
		for (size_t i = 0; i < k; i++)
			if (!grp || !seq(n->devices[dev[i]].affinity_group, grp))
				return snprintf(why, len, "same_group across affinity groups"), false;
	}
	return true;
}

/* ---- a case: what is judged, and how a failure names it ---- */

struct kase {
	uint64_t seed;
	struct xp_cluster *c;
	struct xp_job *jobs[4];
	size_t n_jobs;
	const char *stage; /* "index", "scan", "batch 2", ... */
	char note[160];
};

static struct {
	size_t reconf_cases, existing, fresh, layouts[64], mirror, pair, multi_counts;
	size_t failures, cases, answers, placed, refused, replicas, slices, shares, brute, brute_fit, batches, pending, big, relaxed;
} st;

static void fail_case(const struct kase *k, const struct xp_job *job, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail_case(const struct kase *k, const struct xp_job *job, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (getenv("XP_PROP_SURVEY")) {
		/* Survey (while hunting defects): one line per failure, and on. */
		fprintf(stderr, "FAIL seed %llu %s: %s\n", (unsigned long long)k->seed, k->stage, msg);
		st.failures++;
		return;
	}
	json_t *j = job ? xp_job_to_json(job) : NULL;
	char *js = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	/* The cluster, briefly: enough to see the case; XP_PROP_SEED replays it whole. */
	char cl[4096];
	size_t o = 0;
	for (size_t i = 0; i < k->c->n_nodes && o < sizeof cl; i++) {
		const struct xp_node *n = k->c->nodes[i];
		o += (size_t)snprintf(cl + o, sizeof cl - o, " [%s %s sw=%s rack=%s:", n->name,
				      xp_node_state_name(n->state), n->sw ? n->sw : "-", n->rack ? n->rack : "-");
		for (size_t d = 0; d < n->n_devices && o < sizeof cl; d++) {
			const struct xp_device *dv = &n->devices[d];
			o += (size_t)snprintf(cl + o, sizeof cl - o, " %zu:%s/%s/h%d/n%d", d, dv->model ? dv->model : "-",
					      dv->affinity_group ? dv->affinity_group : "-", dv->health, dv->numa);
			for (size_t a = 0; a < dv->n_allocs && o < sizeof cl; a++)
				o += (size_t)snprintf(cl + o, sizeof cl - o, "+%s%d",
						      dv->allocs[a].slice ? dv->allocs[a].slice : "whole",
						      dv->allocs[a].share_pct);
		}
		if (o < sizeof cl)
			o += (size_t)snprintf(cl + o, sizeof cl - o, "]");
	}
	ck_abort_msg("seed %llu (XP_PROP_SEED=%llu to replay), %s: %s\n  job %s\n  cluster%s",
		     (unsigned long long)k->seed, (unsigned long long)k->seed, k->stage, msg, js ? js : "?", cl);
	free(js);
}

/* The job's network scope: a switch is stricter than a rack (place.h). */
static int job_net(const struct xp_job *job)
{
	int net = XP_NET_ANY;
	for (size_t i = 0; i < job->n_groups; i++)
		if (job->groups[i].network == XP_NET_SWITCH ||
		    (job->groups[i].network == XP_NET_RACK && net == XP_NET_ANY))
			net = job->groups[i].network;
	return net;
}

/* Marks a checked replica's devices as held in w. */
static void world_take(struct world *w, const struct xp_task_group *g, const struct xp_place_replica *rp)
{
	for (size_t i = 0; i < rp->n_devices; i++) {
		struct dst *s = &w->d[rp->node_ix][rp->pos[i]];
		if (g->slice)
			world_add_slice(s, g->slice);
		else if (g->share_pct > 0) {
			s->soft++;
			s->soft_pct += g->share_pct;
		} else
			s->whole++;
	}
}

/* Whether whole devices of the vendor's ring rule were chosen as the rule says: for a request
 * of k within a ring, the free counts of its ring_priority list are tried in order, rings in
 * device order, and the first ring showing that count gives its lowest k free devices. Only
 * without NUMA constraints (a domain narrows the candidates first). */
static void check_ring_order(const struct kase *ks, const struct xp_job *job, const struct world *w, size_t ni,
			     const struct xp_task_group *g, const struct xp_device *key, const struct xp_place_replica *rp)
{
	const struct dst *s = &w->d[ni][rp->pos[0]];
	const struct xp_mmodel *L = s->lay;
	size_t k = rp->n_devices;
	int ring = L ? ring_size(s->m, L) : 0;
	if (ring <= 0 || g->numa != XP_NUMA_NONE)
		return;
	const struct xp_node *n = w->c->nodes[ni];
	const struct xp_device *rep = &n->devices[rp->pos[0]];
	bool cand[XP_MAX_DEVICES] = {false};
	char why[256];
	for (size_t d = 0; d < n->n_devices; d++)
		cand[d] = same_kind(&n->devices[d], rep) && dev_ok(w, ni, d, g, key, why, sizeof why);
	int wide = wide_for(L, multi_task(job));
	if (k > (size_t)ring && (wide == XP_WIDE_MIRROR || wide == XP_WIDE_PAIR)) {
		/* Mirror: the lowest positions free in every group; pair: each group's lowest free. */
		int first[XP_MAX_DEVICES];
		int ng = kind_groups(n, rep, first);
		if (ng <= 0)
			return;
		st.mirror += wide == XP_WIDE_MIRROR;
		st.pair += wide == XP_WIDE_PAIR;
		size_t per = k / (size_t)ng, got = 0;
		bool mine[XP_MAX_DEVICES] = {false}, want_set[XP_MAX_DEVICES] = {false};
		for (size_t i = 0; i < k; i++)
			mine[rp->pos[i]] = true;
		if (wide == XP_WIDE_PAIR)
			for (int gi = 0; gi < ng; gi++) {
				size_t in = 0;
				for (size_t d = 0; d < n->n_devices && in < per; d++)
					if (cand[d] && seq(n->devices[d].affinity_group, n->devices[first[gi]].affinity_group)) {
						want_set[d] = true;
						in++;
					}
			}
		else
			for (int p = 0; p < ring && got < per; p++) {
				int at[XP_MAX_DEVICES];
				bool all = true;
				for (int gi = 0; gi < ng && all; gi++) {
					at[gi] = -1;
					for (size_t d = 0; d < n->n_devices; d++)
						if (seq(n->devices[d].affinity_group, n->devices[first[gi]].affinity_group) &&
						    same_kind(&n->devices[d], rep) && n->devices[d].index % ring == p)
							at[gi] = (int)d;
					all = at[gi] >= 0 && cand[at[gi]];
				}
				if (!all)
					continue;
				for (int gi = 0; gi < ng; gi++)
					want_set[at[gi]] = true;
				got++;
			}
		for (size_t d = 0; d < n->n_devices; d++)
			if (mine[d] != want_set[d]) {
				fail_case(ks, job, "replica on %s: device %zu %s, the %s rule says otherwise", n->name, d,
					  mine[d] ? "taken" : "left", wide == XP_WIDE_PAIR ? "pair" : "mirror");
				return;
			}
		return;
	}
	if (k > (size_t)ring || k > XP_MRING_MAX || !L->n_ring_prio[k])
		return;
	for (size_t pi = 0; pi < L->n_ring_prio[k]; pi++) {
		size_t want = L->ring_prio[k][pi];
		for (size_t d = 0; d < n->n_devices; d++) {
			const char *grp = n->devices[d].affinity_group;
			if (!cand[d] || !grp)
				continue;
			bool first = true;
			for (size_t e = 0; e < d && first; e++)
				first = !(cand[e] && seq(n->devices[e].affinity_group, grp));
			if (!first)
				continue;
			size_t fr = 0;
			for (size_t e = 0; e < n->n_devices; e++)
				fr += cand[e] && seq(n->devices[e].affinity_group, grp);
			if (fr != want || fr < k)
				continue;
			/* This ring, its lowest k. */
			size_t got = 0;
			for (size_t e = 0; e < n->n_devices && got < k; e++)
				if (cand[e] && seq(n->devices[e].affinity_group, grp)) {
					if (rp->pos[got] != (int)e)
						fail_case(ks, job, "replica on %s took %d..., the ring rule gives device %zu "
							  "(ring %s with %zu free)", n->name, rp->pos[0], e, grp, fr);
					got++;
				}
			return;
		}
	}
	fail_case(ks, job, "replica on %s: no ring shows a free count the rule lists", n->name);
}

/* Judges one replica rp of g against w (then takes its devices). */
static void check_replica(const struct kase *ks, const struct xp_job *job, struct world *w,
			  const struct xp_task_group *g, const struct xp_place_replica *rp, const struct xp_device **key)
{
	char why[256];
	if (rp->node_ix >= w->c->n_nodes)
		fail_case(ks, job, "replica on node index %zu of %zu", rp->node_ix, w->c->n_nodes);
	size_t ni = rp->node_ix;
	const struct xp_node *n = w->c->nodes[ni];
	if (!rp->node || strcmp(rp->node, n->name) != 0)
		fail_case(ks, job, "replica names node %s, index says %s", rp->node ? rp->node : "-", n->name);
	if (!node_ok(n, g))
		fail_case(ks, job, "replica on %s, which the group's node rules refuse (state %s)", n->name,
			  xp_node_state_name(n->state));
	bool sliced = g->slice || g->share_pct > 0;
	size_t want = sliced ? 1 : (size_t)g->devices;
	if (rp->n_devices != want)
		fail_case(ks, job, "replica on %s has %zu devices, asked %zu", n->name, rp->n_devices, want);
	char env[XP_MAX_DEVICES * 6] = "";
	size_t el = 0;
	for (size_t i = 0; i < rp->n_devices; i++) {
		if (rp->pos[i] < 0 || (size_t)rp->pos[i] >= n->n_devices)
			fail_case(ks, job, "replica on %s: device position %d", n->name, rp->pos[i]);
		for (size_t j = 0; j < i; j++)
			if (rp->pos[j] == rp->pos[i])
				fail_case(ks, job, "replica on %s takes device %d twice", n->name, rp->pos[i]);
		const struct xp_device *d = &n->devices[rp->pos[i]];
		if (rp->devices[i] != d->index)
			fail_case(ks, job, "replica on %s: device %d at position %d", n->name, rp->devices[i], rp->pos[i]);
		if (!same_kind(d, &n->devices[rp->pos[0]]))
			fail_case(ks, job, "replica on %s mixes device kinds", n->name);
		if (!dev_ok(w, ni, (size_t)rp->pos[i], g, *key, why, sizeof why))
			fail_case(ks, job, "replica on %s: %s", n->name, why);
		el += (size_t)snprintf(env + el, sizeof env - el, "%s%d", i ? "," : "",
				       d->vendor_index >= 0 ? d->vendor_index : d->index);
	}
	if (!rp->env_value || strcmp(rp->env_value, env) != 0)
		fail_case(ks, job, "replica on %s: env %s, devices say %s", n->name, rp->env_value ? rp->env_value : "-", env);
	const struct dst *s0 = &w->d[ni][rp->pos[0]];
	if (!sliced && !shape_ok(w, ni, g, rp->pos, want, multi_task(job), why, sizeof why))
		fail_case(ks, job, "replica on %s: %s", n->name, why);
	if (!sliced)
		check_ring_order(ks, job, w, ni, g, *key, rp);
	/* What it takes of each device, and how it is fenced. */
	double take = g->slice ? slice_share(asked_slice(g, s0)) : g->share_pct > 0 ? g->share_pct / 100.0 : 1;
	if (fabs(rp->take - take) > EPSV)
		fail_case(ks, job, "replica on %s takes %g of a device, the request %g", n->name, rp->take, take);
	/* A MIG slice: on a free instance of its profile ("existing"), else a new one, legal
	 * beside every instance there and only with reconfigure; a free instance of the profile
	 * left is taken first. A job asking two profiles: the engine knows its own earlier
	 * slices by their share only (man xpool.1), so "new" beside a free one is allowed. */
	const struct xp_mtemplate *t0 = asked_slice(g, s0);
	if (g->slice && geometric(s0->md, t0)) {
		bool ex = free_of(s0, t0) >= 0, kinds2 = false;
		for (size_t i = 0; i < job->n_groups; i++)
			kinds2 = kinds2 || (job->groups[i].slice && tmpl(s0->md, job->groups[i].slice) != t0);
		if (!rp->instance || (strcmp(rp->instance, "existing") && strcmp(rp->instance, "new")))
			fail_case(ks, job, "MIG slice on %s: instance %s", n->name, rp->instance ? rp->instance : "-");
		else if (!strcmp(rp->instance, "existing")) {
			st.existing++;
			if (!ex)
				fail_case(ks, job, "MIG slice on %s says existing; no free %s instance is there", n->name, t0->name);
		} else {
			st.fresh++;
			if (!reconf)
				fail_case(ks, job, "MIG slice on %s is a new instance without reconfigure", n->name);
			if (ex && !kinds2)
				fail_case(ks, job, "MIG slice on %s is new beside a free %s instance", n->name, t0->name);
			if (!slices_legal(s0, t0, why, sizeof why))
				fail_case(ks, job, "MIG slice on %s: new instance: %s", n->name, why);
		}
	} else if (rp->instance)
		fail_case(ks, job, "replica on %s: instance %s, not a MIG slice", n->name, rp->instance);
	const char *iso = g->share_pct > 0 ? "soft" : !g->slice ? "exclusive"
			: s0->md && (s0->md->partition & XP_PART_VNPU) ? "vnpu"
			: s0->md && (s0->md->partition & XP_PART_MIG) ? "mig" : "partition";
	if (!rp->isolation || strcmp(rp->isolation, iso) != 0)
		fail_case(ks, job, "replica on %s: isolation %s, expected %s", n->name, rp->isolation ? rp->isolation : "-",
			  iso);
	/* NUMA: strict keeps the replica in one known domain; the field names the common one. */
	int dom = n->devices[rp->pos[0]].numa;
	for (size_t i = 1; i < rp->n_devices; i++)
		if (n->devices[rp->pos[i]].numa != dom)
			dom = -1;
	if (rp->numa != dom)
		fail_case(ks, job, "replica on %s says NUMA %d, its devices %d", n->name, rp->numa, dom);
	if (g->numa == XP_NUMA_STRICT && dom < 0)
		fail_case(ks, job, "replica on %s across NUMA domains under strict", n->name);
	/* Prefer: across domains only when no domain had room; judged where no ring or group
	 * rule narrows the choice (then the rule is simple: enough fitting devices in one). */
	if (g->numa == XP_NUMA_PREFER && dom < 0 && !sliced && !g->same_group && !(s0->lay && s0->lay->counts) &&
	    !(s0->lay && ring_size(s0->m, s0->lay))) {
		for (size_t a = 0; a < n->n_devices; a++) {
			int da = n->devices[a].numa;
			if (da < 0)
				continue;
			size_t fit = 0;
			for (size_t b = 0; b < n->n_devices; b++)
				fit += n->devices[b].numa == da && same_kind(&n->devices[b], &n->devices[rp->pos[0]]) &&
				       dev_ok(w, ni, b, g, *key, why, sizeof why);
			if (fit >= want)
				fail_case(ks, job, "replica on %s across NUMA domains under prefer; domain %d had %zu", n->name,
					  da, fit);
		}
	}
	if (g->homogeneous && !*key)
		*key = &n->devices[rp->pos[0]];
	world_take(w, g, rp);
	st.replicas++;
	st.slices += g->slice != NULL;
	st.multi_counts += s0->lay && s0->lay->counts_multi && multi_task(job) && !sliced;
	for (size_t i = 0; s0->lay && s0->lay->layout[0] && i < nlays; i++)
		st.layouts[i] += !strcmp(lays[i], s0->lay->layout);
	st.shares += g->share_pct > 0;
}

/* Judges one answer r to job against w (the state it was asked in), and takes what it placed. */
static void check_result(const struct kase *ks, const struct xp_job *job, struct world *w,
			 const struct xp_place_result *r, bool quiet)
{
	st.answers++;
	const struct xp_cluster *c = w->c;
	if (r->n_nodes != c->n_nodes)
		fail_case(ks, job, "result counts %zu nodes of %zu", r->n_nodes, c->n_nodes);
	if (!r->placed) {
		st.refused++;
		/* Gang: a refusal places nothing, and its reasons cover every node once. */
		if (r->n_replicas || r->pending)
			fail_case(ks, job, "refused with %zu replicas and %zu pending", r->n_replicas, r->pending);
		if (!quiet) {
			size_t sum = 0;
			for (size_t i = 0; i < r->n_reasons; i++)
				sum += r->reasons[i].count;
			if (sum != c->n_nodes)
				fail_case(ks, job, "refusal reasons count %zu nodes of %zu (%s)", sum, c->n_nodes,
					  r->summary ? r->summary : "-");
		}
		return;
	}
	st.placed++;
	size_t per[XP_JOB_MAX_GROUPS] = {0}, pending = 0;
	const struct xp_device *key = NULL;
	const char *sw = NULL, *rack = NULL;
	int net = job_net(job);
	for (size_t i = 0; i < r->n_replicas; i++) {
		const struct xp_place_replica *rp = &r->replicas[i];
		if (rp->group >= job->n_groups)
			fail_case(ks, job, "replica of group %zu", rp->group);
		if (i && rp->group < r->replicas[i - 1].group)
			fail_case(ks, job, "replicas out of group order");
		per[rp->group]++;
		st.big += job->groups[rp->group].replicas >= 16 && per[rp->group] == 16;
		check_replica(ks, job, w, &job->groups[rp->group], rp, &key);
		const struct xp_node *n = c->nodes[rp->node_ix];
		if (net == XP_NET_SWITCH && (!n->sw || !*n->sw || (sw && strcmp(sw, n->sw) != 0)))
			fail_case(ks, job, "switch constraint: replica on %s under %s, first under %s", n->name,
				  n->sw ? n->sw : "none", sw ? sw : "-");
		if (net == XP_NET_RACK && (!n->rack || !*n->rack || (rack && strcmp(rack, n->rack) != 0)))
			fail_case(ks, job, "rack constraint: replica on %s in %s, first in %s", n->name,
				  n->rack ? n->rack : "none", rack ? rack : "-");
		sw = n->sw;
		rack = n->rack;
	}
	for (size_t gi = 0; gi < job->n_groups; gi++) {
		const struct xp_task_group *g = &job->groups[gi];
		int min = g->gang_min > 0 && g->gang_min < g->replicas ? g->gang_min : g->replicas;
		if (per[gi] < (size_t)min || per[gi] > (size_t)g->replicas)
			fail_case(ks, job, "group %zu placed %zu replicas: gang minimum %d of %d", gi, per[gi], min,
				  g->replicas);
		pending += (size_t)g->replicas - per[gi];
	}
	if (pending != r->pending)
		fail_case(ks, job, "%zu pending, the groups leave %zu", r->pending, pending);
	st.pending += pending > 0;
}

/* Two answers to one job on one state (the index and the scan) must be the same. */
static void check_same(const struct kase *ks, const struct xp_job *job, const struct xp_place_result *a,
		       const struct xp_place_result *b)
{
	if (a->placed != b->placed || a->n_replicas != b->n_replicas || a->pending != b->pending)
		fail_case(ks, job, "index %s %zu replicas, scan %s %zu", a->placed ? "placed" : "refused", a->n_replicas,
			  b->placed ? "placed" : "refused", b->n_replicas);
	for (size_t i = 0; i < a->n_replicas; i++) {
		const struct xp_place_replica *x = &a->replicas[i], *y = &b->replicas[i];
		bool same = x->node_ix == y->node_ix && x->n_devices == y->n_devices;
		for (size_t d = 0; same && d < x->n_devices; d++)
			same = x->pos[d] == y->pos[d];
		if (!same)
			fail_case(ks, job, "replica %zu: index on %s, scan on %s (or other devices)", i, x->node, y->node);
	}
}

/* ---- the smallest relaxation: applied, the job fits ---- */

/* A copy of job sharing its strings, with its own groups (and label arrays) to change. */
struct variant {
	struct xp_job job;
	struct xp_task_group g[XP_JOB_MAX_GROUPS];
	char *keys[XP_JOB_MAX_GROUPS][XP_JOB_MAX_LABELS], *vals[XP_JOB_MAX_GROUPS][XP_JOB_MAX_LABELS];
};

/* The only group whose field matches (devices or replicas == from, or holding label from as
 * "KEY=VALUE"), -1 when none or several (the relaxation does not say which it changed). */
static int only_group(const struct xp_job *job, const char *field, const char *from)
{
	int found = -1;
	for (size_t i = 0; i < job->n_groups; i++) {
		const struct xp_task_group *g = &job->groups[i];
		bool m = false;
		if (strcmp(field, "devices") == 0)
			m = g->devices == atoi(from);
		else if (strcmp(field, "replicas") == 0)
			m = g->replicas == atoi(from);
		else
			for (size_t l = 0; l < g->labels.n && !m; l++) {
				char kv[2 * XP_JOB_MAX_STRING + 2];
				snprintf(kv, sizeof kv, "%s=%s", g->labels.keys[l], g->labels.values[l]);
				m = strcmp(kv, from) == 0;
			}
		if (m && found >= 0)
			return -1;
		if (m)
			found = (int)i;
	}
	return found;
}

/* Applies the relaxation x to a copy of job (and the strategy in *strategy); false when x
 * cannot be applied unambiguously here. */
static bool relax_apply(const struct xp_job *job, const struct xp_place_relax *x, struct variant *v, int *strategy)
{
	v->job = *job;
	memcpy(v->g, job->groups, job->n_groups * sizeof *v->g);
	v->job.groups = v->g;
	for (size_t i = 0; i < job->n_groups; i++) {
		const struct xp_labels *L = &job->groups[i].labels;
		for (size_t l = 0; l < L->n; l++) {
			v->keys[i][l] = L->keys[l];
			v->vals[i][l] = L->values[l];
		}
		v->g[i].labels.keys = v->keys[i];
		v->g[i].labels.values = v->vals[i];
	}
	if (strcmp(x->field, "strategy") == 0) {
		*strategy = xp_strategy_parse(x->to);
		return *strategy >= 0;
	}
	for (size_t i = 0; i < job->n_groups; i++) {
		struct xp_task_group *g = &v->g[i];
		if (strcmp(x->field, "numa") == 0 && g->numa == XP_NUMA_STRICT)
			g->numa = XP_NUMA_PREFER;
		else if (strcmp(x->field, "network") == 0 && g->network != XP_NET_ANY)
			g->network = strcmp(x->to, "rack") == 0 && g->network == XP_NET_SWITCH ? XP_NET_RACK : XP_NET_ANY;
		else if (strcmp(x->field, "same_group") == 0)
			g->same_group = false;
		else if (strcmp(x->field, "homogeneous") == 0)
			g->homogeneous = false;
	}
	if (strcmp(x->field, "numa") == 0 || strcmp(x->field, "network") == 0 || strcmp(x->field, "same_group") == 0 ||
	    strcmp(x->field, "homogeneous") == 0)
		return true;
	int gi = only_group(job, x->field, x->from);
	if (gi < 0)
		return false;
	struct xp_task_group *g = &v->g[gi];
	if (strcmp(x->field, "devices") == 0)
		g->devices = atoi(x->to);
	else if (strcmp(x->field, "replicas") == 0) {
		g->replicas = atoi(x->to);
		g->gang_min = g->gang_min < g->replicas ? g->gang_min : g->replicas;
	} else if (strcmp(x->field, "labels") == 0) {
		size_t l = 0;
		for (; l < g->labels.n; l++) {
			char kv[2 * XP_JOB_MAX_STRING + 2];
			snprintf(kv, sizeof kv, "%s=%s", g->labels.keys[l], g->labels.values[l]);
			if (strcmp(kv, x->from) == 0)
				break;
		}
		const char *eq = strchr(x->to, '=');
		if (strcmp(x->to, "none") == 0) {
			for (size_t j = l; j + 1 < g->labels.n; j++) {
				v->keys[gi][j] = v->keys[gi][j + 1];
				v->vals[gi][j] = v->vals[gi][j + 1];
			}
			g->labels.n--;
		} else if (eq)
			v->vals[gi][l] = (char *)(uintptr_t)(eq + 1);
		else
			return false;
	} else
		return false;
	return true;
}

static void check_relaxation(const struct kase *ks, const struct xp_job *job, struct xp_place_index *ix,
			     const struct xp_place_result *r, const struct xp_place_opts *o)
{
	if (r->placed || !r->relaxation)
		return;
	struct variant *v = xp_malloc(sizeof *v);
	int strategy = o->strategy;
	if (relax_apply(job, r->relaxation, v, &strategy)) {
		struct xp_place_opts q = *o;
		q.strategy = strategy;
		q.quiet = true;
		struct xp_err err = {{0}};
		struct xp_place_result *x = xp_place_ix(ix, &v->job, &q, &err);
		bool ok = x && x->placed && !x->pending;
		xp_place_result_free(x);
		st.relaxed++;
		if (!ok)
			fail_case(ks, job, "the relaxation %s %s -> %s does not place the job", r->relaxation->field,
				  r->relaxation->from, r->relaxation->to);
	}
	free(v);
}

/* ---- brute force: a single replica on a tiny cluster ---- */

/* Whether any node has a set of devices that serves one replica of g (whole devices: every
 * subset of the node's devices; a share: every device). Only for jobs whose rules are all
 * judged above: one group, one replica, no NUMA or network constraint. */
static bool brute_fits(const struct world *w, const struct xp_task_group *g)
{
	char why[256];
	for (size_t ni = 0; ni < w->c->n_nodes; ni++) {
		const struct xp_node *n = w->c->nodes[ni];
		if (!node_ok(n, g))
			continue;
		if (g->share_pct > 0) {
			for (size_t d = 0; d < n->n_devices; d++)
				if (dev_ok(w, ni, d, g, NULL, why, sizeof why))
					return true;
			continue;
		}
		size_t k = (size_t)g->devices;
		for (unsigned set = 0; set < (1u << n->n_devices); set++) {
			if ((size_t)__builtin_popcount(set) != k)
				continue;
			int dev[16];
			size_t m = 0;
			bool ok = true;
			for (size_t d = 0; d < n->n_devices && ok; d++)
				if (set & (1u << d)) {
					dev[m++] = (int)d;
					ok = dev_ok(w, ni, d, g, NULL, why, sizeof why) && same_kind(&n->devices[d], &n->devices[dev[0]]);
				}
			if (!ok || !shape_ok(w, ni, g, dev, k, false, why, sizeof why))
				continue;
			/* Within a ring, the ring's free count must be one the vendor's list names. */
			const struct dst *s = &w->d[ni][dev[0]];
			const struct xp_mmodel *L = s->lay;
			int ring = L ? ring_size(s->m, L) : 0;
			if (ring > 0 && k <= (size_t)ring && k <= XP_MRING_MAX && L->n_ring_prio[k]) {
				size_t fr = 0;
				for (size_t e = 0; e < n->n_devices; e++)
					fr += seq(n->devices[e].affinity_group, n->devices[dev[0]].affinity_group) &&
					      same_kind(&n->devices[e], &n->devices[dev[0]]) &&
					      dev_ok(w, ni, e, g, NULL, why, sizeof why);
				bool listed = false;
				for (size_t pi = 0; pi < L->n_ring_prio[k]; pi++)
					listed = listed || L->ring_prio[k][pi] == fr;
				if (!listed)
					continue;
			}
			return true;
		}
	}
	return false;
}

static bool brute_applies(const struct xp_cluster *c, const struct xp_job *job)
{
	if (c->n_nodes > 2 || job->n_groups != 1)
		return false;
	for (size_t i = 0; i < c->n_nodes; i++)
		if (c->nodes[i]->n_devices > 8)
			return false;
	const struct xp_task_group *g = &job->groups[0];
	return g->replicas == 1 && !g->slice && g->numa == XP_NUMA_NONE && g->network == XP_NET_ANY;
}

/* ---- generating a case ---- */

static const char *const zones[] = {"z1", "z2"};
static const char *const racks[] = {"r1", "r2", NULL};
static const char *const switches[] = {"s1", "s2", "s3", NULL};
static const char *const pools[] = {"train", "infer"};

/* Puts random existing hard slices on a MIG or vNPU device: a layout that can exist. MIG
 * instances are free (no job: a slice may take them) or held; now and then the GPU is
 * partitioned into one profile, as operators do. */
static void add_slices(struct rng *r, struct xp_device *d, const struct xp_mmodel *md)
{
	unsigned occ = 0;
	double use = 0;
	bool uniform = chance(r, 40);
	int free_pct = uniform ? 80 : 50;
	const struct xp_mtemplate *one = &md->templates[rint_in(r, 0, (int)md->n_templates - 1)];
	int tries = uniform ? 8 : rint_in(r, 1, 5);
	for (int i = 0; i < tries; i++) {
		const struct xp_mtemplate *t = uniform ? one : &md->templates[rint_in(r, 0, (int)md->n_templates - 1)];
		int same = 0;
		for (size_t a = 0; a < d->n_allocs; a++)
			same += d->allocs[a].slice && strcasecmp(d->allocs[a].slice, t->name) == 0;
		if (t->count > 0 && same >= t->count)
			continue;
		if (geometric(md, t)) {
			int start = -1;
			for (int s = 0; s < md->slots && start < 0; s++) {
				unsigned span = ((1u << t->span) - 1) << s;
				if ((t->at & (1u << s)) && s + t->span <= md->slots && !(occ & span) && (uniform || chance(r, 60)))
					start = s;
			}
			if (start < 0)
				continue;
			occ |= ((1u << t->span) - 1) << start;
		} else if (use + slice_share(t) > 1 + EPSV)
			continue;
		use += slice_share(t);
		d->allocs = xp_realloc(d->allocs, (d->n_allocs + 1) * sizeof *d->allocs);
		d->allocs[d->n_allocs++] =
			(struct xp_alloc){xp_strdup(t->name), chance(r, free_pct) ? NULL : xp_strdup("old"), t->memory_mib, 0};
	}
}

static void add_alloc(struct xp_device *d, const char *slice, int share)
{
	d->allocs = xp_realloc(d->allocs, (d->n_allocs + 1) * sizeof *d->allocs);
	d->allocs[d->n_allocs++] = (struct xp_alloc){slice ? xp_strdup(slice) : NULL, xp_strdup("old"), -1, share};
}

/* The node being made is idle: its devices hold nothing yet (wide requests need room). */
static bool gen_idle;

/* Adds n devices of model ct to node nd from index first; missing >= 0: that one is left out
 * (the tool does not list it; its index stays empty). Groups as discovery names them by the
 * rule of the entry the node's count selects (ring:N "hccs:K", card:N "card:K", K the index
 * over N). */
static void add_devices(struct rng *r, struct xp_node *nd, const struct cat *ct, int n, int n_numa, const char *driver,
			int vshift, int missing)
{
	const struct xp_mmodel *L = layout_of(ct->m, ct->md, missing >= 0 ? n - 1 : n);
	int ring = ring_size(ct->m, L);
	int aff = L->affinity ? L->affinity : ct->m->affinity;
	int first = nd->n_devices ? nd->devices[nd->n_devices - 1].index + 1 : 0;
	for (int i = 0; i < n; i++) {
		if (i == missing)
			continue;
		struct xp_device *d = xp_node_add_device(nd);
		int ix = first + i;
		d->index = ix;
		d->vendor_index = chance(r, 90) ? i + vshift : -1;
		d->vendor = xp_strdup(ct->md->vendor[0] ? ct->md->vendor : ct->m->vendor);
		d->model = xp_strdup(ct->md->name);
		d->driver = xp_strdup(driver);
		d->pci_bus_id = xp_asprintf("0000:%02x:00.0", 0x10 + ix);
		d->memory_mib = ct->md->memory_mib > 0 ? ct->md->memory_mib : 16384;
		d->memory_used_mib = -1;
		d->ecu = chance(r, 10) ? XP_NA : rint_in(r, 1, 8) * 0.5;
		d->power_limit_w = chance(r, 50) ? XP_NA : rint_in(r, 100, 700);
		d->temperature_c = d->power_w = d->utilization_pct = XP_NA;
		d->pci_class = -1;
		d->retired_pages = d->ecc_corrected = d->ecc_uncorrected = -1;
		d->numa = n_numa ? (chance(r, 5) ? -1 : i * n_numa / n) : -1;
		int h = rint_in(r, 0, 99);
		d->health = h < 80 ? XP_HEALTH_OK : h < 88 ? XP_HEALTH_WARN : h < 95 ? XP_HEALTH_FAIL : XP_HEALTH_UNKNOWN;
		if (gen_idle && h >= 80 && h < 95)
			d->health = XP_HEALTH_OK; /* an idle node is a fresh one */
		if (ring > 0)
			d->affinity_group = xp_asprintf("%s:%d", aff == XP_AFF_CARD ? "card" : "hccs", ix / ring);
		else if (ct->m->affinity == XP_AFF_NVLINK || ct->md->affinity == XP_AFF_NVLINK)
			d->affinity_group = chance(r, 90) ? xp_asprintf("nvlink:%d", i / 4) : NULL;
		else
			d->affinity_group = chance(r, 80) ? xp_asprintf("pcie:%d", i / 2) : NULL;
		d->partition = ct->md->partition;
		/* What runs there already (nothing on an idle node). */
		int u = rint_in(r, 0, 99);
		if (gen_idle)
			u = 99;
		if (u < 15)
			add_alloc(d, NULL, 0);
		else if (u < (ct->md->slots ? 50 : 33) && ct->md->n_templates && (ct->md->partition & (XP_PART_MIG | XP_PART_VNPU)))
			add_slices(r, d, ct->md);
		else if (u < 40) {
			int left = 100;
			for (int k = rint_in(r, 1, 2); k > 0 && left > 10; k--) {
				int p = rint_in(r, 5, left > 60 ? 60 : left);
				add_alloc(d, "share", p);
				left -= p;
			}
		} else if (u < 41 && ct->md->n_templates)
			add_alloc(d, "no-such-slice", 0);
	}
}

static struct xp_cluster *gen_cluster(struct rng *r, bool tiny)
{
	struct xp_cluster *c = xp_cluster_new();
	int nn = tiny ? rint_in(r, 1, 2) : rint_in(r, 1, 8);
	for (int i = 0; i < nn; i++) {
		char name[16];
		/* Names out of index order now and then: ties go by name, not by position. */
		snprintf(name, sizeof name, "n%02d", chance(r, 20) ? rint_in(r, 0, 99) : i);
		if (xp_cluster_node(c, name))
			snprintf(name, sizeof name, "m%02d", i);
		struct xp_node *nd = xp_node_new(name);
		int s = rint_in(r, 0, 99);
		nd->state = s < 85 ? XP_NODE_UP : s < 91 ? XP_NODE_DEGRADED : rint_in(r, XP_NODE_UNREACHABLE, XP_NODE_DOWN);
		nd->pus = chance(r, 20) ? 0 : 8 * rint_in(r, 1, 16);
		nd->memory_mib = chance(r, 20) ? 0 : 65536LL * rint_in(r, 1, 16);
		nd->zone = xp_strdup(zones[rint_in(r, 0, 1)]);
		const char *rk = racks[rint_in(r, 0, 2)], *sw = switches[rint_in(r, 0, 3)];
		nd->rack = rk ? xp_strdup(rk) : NULL;
		nd->sw = sw ? xp_strdup(sw) : NULL;
		if (chance(r, 50))
			xp_labels_set(&nd->governance, "pool", pools[rint_in(r, 0, 1)]);
		xp_labels_set(&nd->facts, "zone", nd->zone);
		int n_numa = rint_in(r, 0, 2);
		for (int k = 0; k < n_numa; k++) {
			struct xp_numa *u = xp_node_add_numa(nd);
			u->id = k;
			u->memory_mib = 65536;
			u->cpus = xp_asprintf("%d-%d", k * 16, k * 16 + 15);
			u->package = k;
		}
		for (int k = rint_in(r, 0, 2); k > 0; k--) {
			struct xp_nic *x = xp_node_add_nic(nd);
			x->name = xp_asprintf("ib%d", k);
			x->rdma = chance(r, 50) ? xp_asprintf("mlx5_%d", k) : NULL;
			x->numa = n_numa ? rint_in(r, -1, n_numa - 1) : -1;
			x->speed_mbps = 200000;
		}
		gen_idle = chance(r, 25);
		if (!chance(r, 8)) {
			/* One kind, now and then a second (other vendor) after it. */
			const struct cat *a = pick_cat(r);
			int ring = ring_size(a->m, a->md), n, missing = -1;
			if (has_layouts(a->m, a->md)) {
				/* A product by its node size (Ascend [layout]s): any size up to 16, often
				 * whole groups of the rule that size selects. */
				n = rint_in(r, 1, tiny ? 8 : 16);
				int lr = ring_size(a->m, layout_of(a->m, a->md, n));
				if (lr > 0 && chance(r, 50))
					n = (n + lr - 1) / lr * lr;
				if (n > (tiny ? 8 : 16))
					n = tiny ? 8 : 16;
			} else
				n = ring > 0 ? ring * rint_in(r, 1, 2) : rint_in(r, 1, tiny ? 4 : 8);
			if (tiny && n > 8)
				n = 8;
			if (n >= 2 && ring_size(a->m, layout_of(a->m, a->md, n - 1)) > 0 && chance(r, 10))
				missing = rint_in(r, 0, n - 1);
			const char *drv = chance(r, 80) ? "1.0" : "2.0";
			add_devices(r, nd, a, n, n_numa, drv, 0, missing);
			int ra = ring_size(a->m, layout_of(a->m, a->md, missing >= 0 ? n - 1 : n));
			const struct cat *b = !tiny && chance(r, 15) ? pick_cat(r) : NULL;
			int rb = b ? ring_size(b->m, layout_of(b->m, b->md, 4)) : 0;
			/* A second kind after the first, not of the same model (the node's count of a
			 * model picks its layout) nor grouped beside a grouped one. */
			if (b && b->md != a->md && !(ra > 0 && rb > 0)) {
				int nb = rb > 0 ? rb : rint_in(r, 1, 4);
				add_devices(r, nd, b, nb, n_numa, drv, b->m == a->m ? n : 0, -1);
			} else if (chance(r, 3)) {
				/* A device no manifest describes: placement judges its strings. */
				struct xp_device *d = xp_node_add_device(nd);
				d->index = nd->n_devices > 1 ? nd->devices[nd->n_devices - 2].index + 1 : 0;
				d->vendor_index = -1;
				d->vendor = xp_strdup("Acme");
				d->model = xp_strdup("Acme X1");
				d->memory_mib = 8192;
				d->ecu = 1;
				d->power_limit_w = XP_NA;
				d->numa = -1;
				d->health = XP_HEALTH_OK;
			}
			if (chance(r, 50)) {
				xp_node_links_reset(nd);
				for (size_t x = 0; x < nd->n_devices; x++)
					for (size_t y = x + 1; y < nd->n_devices; y++) {
						struct xp_link l = {(uint8_t)rint_in(r, XP_LINK_NVLINK, XP_LINK_SYS), 0};
						*xp_node_link(nd, x, y) = l;
						*xp_node_link(nd, y, x) = l;
					}
			}
		}
		xp_cluster_add(c, nd);
	}
	return c;
}

/* A model from the cluster (most jobs ask what is there; *dv the device), else from the
 * catalogue (*dv NULL). */
static const struct cat *job_cat(struct rng *r, const struct xp_cluster *c, const struct xp_device **dv,
				 const struct xp_node **dn)
{
	*dv = NULL;
	if (chance(r, 80) && c->n_nodes) {
		const struct xp_node *n = c->nodes[rint_in(r, 0, (int)c->n_nodes - 1)];
		if (n->n_devices) {
			const struct xp_device *d = &n->devices[rint_in(r, 0, (int)n->n_devices - 1)];
			for (size_t i = 0; d->model && i < ncat; i++)
				if (strcmp(cats[i].md->name, d->model) == 0) {
					*dv = d;
					*dn = n;
					return &cats[i];
				}
		}
	}
	return pick_cat(r);
}

static void gen_group(struct rng *r, const struct xp_cluster *c, struct xp_task_group *g, bool simple)
{
	const struct xp_device *dv;
	const struct xp_node *dn = NULL;
	const struct cat *ct = job_cat(r, c, &dv, &dn);
	/* The rule of the node the device came from: a wide rule (mirror, pair) is asked for. */
	const struct xp_mmodel *dl = NULL;
	if (dv) {
		int same = 0;
		for (size_t i = 0; i < dn->n_devices; i++)
			same += same_kind(&dn->devices[i], dv);
		dl = layout_of(ct->m, ct->md, same);
	}
	int dring = dl ? ring_size(ct->m, dl) : 0;
	bool dwide = dring > 0 && dring % 2 == 0 && (dl->wide != XP_WIDE_WHOLE || dl->has_wide_multi);
	g->replicas = simple ? 1 : chance(r, 50) ? 1 : rint_in(r, 2, chance(r, 20) ? 12 : 4);
	/* Now and then enough replicas that the engine keeps its candidates in a heap (16 up). */
	if (!simple && chance(r, 6))
		g->replicas = rint_in(r, 16, 40);
	g->gang_min = chance(r, g->replicas >= 16 ? 30 : 70) ? g->replicas : rint_in(r, 1, g->replicas);
	g->validated_layer = -1;
	int kind = rint_in(r, 0, 99);
	int ring = ring_size(ct->m, ct->md);
	if (simple ? kind < 85 : kind < 60 || !ct->md->n_templates) {
		if (simple && kind >= 70)
			g->share_pct = rint_in(r, 1, 20) * 5;
		else if (dwide && chance(r, 50))
			g->devices = dring + 2 * rint_in(r, 1, dring / 2);
		else if (has_layouts(ct->m, ct->md) && chance(r, 70))
			/* A product by node size: up to a whole Box16 or A3 node (wider than a group). */
			g->devices = rint_in(r, 1, 16);
		else if (ring > 0 && chance(r, 70))
			g->devices = rint_in(r, 1, 2 * ring);
		else
			g->devices = chance(r, 70) ? 1 << rint_in(r, 0, 2) : rint_in(r, 1, 8);
	} else if (kind < 85) {
		/* Often the profile of an instance the device has (free ones are what a slice takes
		 * without reconfigure). */
		const char *have = NULL;
		for (size_t a = 0; dv && a < dv->n_allocs; a++)
			if (dv->allocs[a].slice && dv->allocs[a].share_pct == 0 && tmpl(ct->md, dv->allocs[a].slice) &&
			    (!have || chance(r, 50)))
				have = dv->allocs[a].slice;
		g->slice = xp_strdup(chance(r, 3) ? "9g.99gb" : have && chance(r, 60) ? have
				     : ct->md->templates[rint_in(r, 0, (int)ct->md->n_templates - 1)].name);
	} else
		g->share_pct = rint_in(r, 1, 20) * 5;
	if (g->replicas >= 16 && g->devices && chance(r, 60)) {
		/* Many replicas fit where each takes a little. */
		g->devices = 0;
		g->share_pct = rint_in(r, 1, 5) * 5;
	}
	if (chance(r, 50)) {
		const char *v = ct->md->vendor[0] ? ct->md->vendor : ct->m->vendor;
		int x = rint_in(r, 0, 9);
		g->vendor = xp_strdup(x < 4 ? v : x < 7 ? ct->m->name : x == 7 ? "*" : x == 8 ? "n*" : "intel");
	}
	if (chance(r, 45)) {
		int x = rint_in(r, 0, 9);
		if (x < 4)
			g->model = xp_strdup(ct->md->name);
		else if (x < 6)
			g->model = xp_asprintf("%.4s*", ct->md->name);
		else if (x < 8 && ct->md->n_match)
			g->model = xp_strdup(ct->md->match[rint_in(r, 0, (int)ct->md->n_match - 1)]);
		else
			g->model = xp_strdup(chance(r, 70) ? "*9*" : "no-such-model");
	}
	g->memory_mib = chance(r, 88) ? 0 : 1024LL * rint_in(r, 1, 64);
	g->min_ecu = chance(r, 90) ? 0 : rint_in(r, 1, 6) * 0.5;
	g->cpus = chance(r, 88) ? 0 : rint_in(r, 1, 48);
	g->host_memory_mib = chance(r, 92) ? 0 : 65536LL * rint_in(r, 1, 12);
	if (chance(r, 8))
		xp_labels_set(&g->labels, "pool", pools[rint_in(r, 0, 1)]);
	if (chance(r, 4))
		xp_labels_set(&g->labels, "zone", zones[rint_in(r, 0, 1)]);
	g->homogeneous = chance(r, 30);
	g->same_group = chance(r, 15);
	if (!simple) {
		int u = rint_in(r, 0, 99);
		g->numa = u < 65 ? XP_NUMA_NONE : u < 85 ? XP_NUMA_PREFER : XP_NUMA_STRICT;
		u = rint_in(r, 0, 99);
		g->network = u < 80 ? XP_NET_ANY : u < 90 ? XP_NET_SWITCH : XP_NET_RACK;
	}
}

static struct xp_job *gen_job(struct rng *r, const struct xp_cluster *c, bool simple)
{
	struct xp_job *j = xp_calloc(1, sizeof *j);
	j->kind = rint_in(r, 0, XP_JOB_KIND_COUNT - 1);
	j->form = XP_JOB_FORM_FULL;
	j->n_groups = simple || chance(r, 80) ? 1 : 2;
	j->groups = xp_calloc(j->n_groups, sizeof *j->groups);
	for (size_t i = 0; i < j->n_groups; i++) {
		gen_group(r, c, &j->groups[i], simple);
		if (j->n_groups > 1)
			j->groups[i].name = xp_asprintf("g%zu", i);
	}
	return j;
}

/* ---- one case ---- */

static struct xp_place_result *place_ix(const struct kase *ks, struct xp_place_index *ix, const struct xp_job *job,
					const struct xp_place_opts *o)
{
	struct xp_err err = {{0}};
	struct xp_place_result *r = xp_place_ix(ix, job, o, &err);
	if (!r)
		fail_case(ks, job, "the engine gave no answer: %s", err.msg);
	return r;
}

static void run_case(uint64_t seed)
{
	struct rng r = {seed * 0x2545f4914f6cdd1dULL + 1};
	struct kase ks = {.seed = seed, .stage = "index"};
	bool tiny = chance(&r, 30);
	ks.c = gen_cluster(&r, tiny);
	bool simple = tiny && chance(&r, 70);
	struct xp_job *job = gen_job(&r, ks.c, simple);
	ks.jobs[ks.n_jobs++] = job;
	struct xp_place_opts o = {.strategy = rint_in(&r, 0, XP_STRAT_COUNT - 1), .seed = seed,
				  .quiet = chance(&r, 85), .reconfigure = chance(&r, 50)};
	reconf = o.reconfigure;
	st.reconf_cases += reconf;
	struct xp_place_index *ix = xp_place_index_new(ks.c, (const struct xp_manifest *const *)ms, nm);
	struct xp_place_result *a = place_ix(&ks, ix, job, &o);
	struct world w = world_new(ks.c);
	check_result(&ks, job, &w, a, o.quiet);
	world_free(&w);
	check_relaxation(&ks, job, ix, a, &o);

	/* The scan (node by node, no index) must say the same on the same state. */
	ks.stage = "scan";
	struct xp_place_opts so = o;
	so.scan = true;
	struct xp_place_result *b = place_ix(&ks, ix, job, &so);
	w = world_new(ks.c);
	check_result(&ks, job, &w, b, so.quiet);
	world_free(&w);
	check_same(&ks, job, a, b);
	xp_place_result_free(b);

	/* And xp_place, which builds an index of its own for one dry-run. */
	if (chance(&r, 20)) {
		ks.stage = "xp_place";
		struct xp_err err = {{0}};
		b = xp_place(ks.c, job, (const struct xp_manifest *const *)ms, nm, &o, &err);
		if (!b)
			fail_case(&ks, job, "xp_place gave no answer: %s", err.msg);
		check_same(&ks, job, a, b);
		xp_place_result_free(b);
	}

	/* Brute force: where a single replica fits, the engine must not refuse (nor the reverse). */
	if (brute_applies(ks.c, job)) {
		w = world_new(ks.c);
		bool fits = brute_fits(&w, &job->groups[0]);
		world_free(&w);
		st.brute++;
		st.brute_fit += fits;
		if (fits != a->placed)
			fail_case(&ks, job, "brute force %s, the engine %s", fits ? "finds a placement" : "finds none",
				  a->placed ? "placed" : "refused");
	}

	/* A batch: the answer committed, more jobs after it on the same index, each judged against
	 * what the commits before it took; then one commit released and the next job judged again. */
	if (chance(&r, 35)) {
		st.batches++;
		w = world_new(ks.c);
		struct xp_place_result *rs[4] = {a};
		int64_t ids[4] = {-1, -1, -1, -1};
		if (a->placed) {
			/* a was judged on a fresh state above; take its devices into this one. */
			for (size_t i = 0; i < a->n_replicas; i++)
				world_take(&w, &job->groups[a->replicas[i].group], &a->replicas[i]);
			ids[0] = xp_place_commit(ix, a);
		}
		a = NULL;
		int more = rint_in(&r, 1, 3);
		static const char *const names[] = {"batch 1", "batch 2", "batch 3", "batch 4"};
		for (int k = 1; k <= more; k++) {
			struct xp_job *jk = gen_job(&r, ks.c, false);
			ks.jobs[ks.n_jobs++] = jk;
			ks.stage = names[k - 1];
			rs[k] = place_ix(&ks, ix, jk, &o);
			check_result(&ks, jk, &w, rs[k], o.quiet);
			if (rs[k]->placed)
				ids[k] = xp_place_commit(ix, rs[k]);
		}
		/* Released: the devices of the first commit are free again for the last job. */
		if (ids[0] >= 0) {
			if (!xp_place_release(ix, ids[0]))
				fail_case(&ks, job, "release of commit %lld refused", (long long)ids[0]);
			world_free(&w);
			w = world_new(ks.c);
			for (int k = 1; k <= more; k++)
				for (size_t i = 0; rs[k]->placed && i < rs[k]->n_replicas; i++)
					world_take(&w, &ks.jobs[k]->groups[rs[k]->replicas[i].group], &rs[k]->replicas[i]);
			ks.stage = "after release";
			struct xp_place_result *x = place_ix(&ks, ix, ks.jobs[more], &o);
			check_result(&ks, ks.jobs[more], &w, x, o.quiet);
			xp_place_result_free(x);
		}
		world_free(&w);
		for (int k = 0; k <= more; k++)
			if (k)
				xp_place_result_free(rs[k]);
		xp_place_result_free(rs[0]);
	}
	xp_place_result_free(a);
	xp_place_index_free(ix);
	for (size_t i = 0; i < ks.n_jobs; i++)
		xp_job_free(ks.jobs[i]);
	xp_cluster_free(ks.c);
	st.cases++;
}

START_TEST(random_cases)
{
	/* _i: the chunk; 25,000 cases each, 10^5 in all. */
	const char *one = getenv("XP_PROP_SEED");
	const char *nc = getenv("XP_PROP_CASES");
	memset(&st, 0, sizeof st);
	if (one && *one) {
		if (_i == 0)
			run_case(strtoull(one, NULL, 10));
		return;
	}
	const char *nb = getenv("XP_PROP_BASE");
	uint64_t cases = nc && *nc ? strtoull(nc, NULL, 10) : CASES, base = nb && *nb ? strtoull(nb, NULL, 10) : 0;
	for (uint64_t k = 0; k < cases; k++)
		run_case(base + 1 + (uint64_t)_i * cases + k);
	ck_assert_uint_eq(st.cases, cases);
	ck_assert_uint_eq(st.failures, 0);
	if (getenv("XP_PROP_STATS"))
		printf("property chunk %d: %zu cases, %zu answers (%zu placed, %zu refused, %zu with pending), "
		       "%zu replicas (%zu slices, %zu shares), %zu batches, %zu brute-force (%zu fit), %zu groups of 16+ placed, %zu relaxations applied\n",
		       _i, st.cases, st.answers, st.placed, st.refused, st.pending, st.replicas, st.slices, st.shares,
		       st.batches, st.brute, st.brute_fit, st.big, st.relaxed);
	if (getenv("XP_PROP_STATS")) {
		printf("property chunk %d: %zu cases with reconfigure, MIG slices on %zu existing and %zu new instances; "
		       "%zu mirror and %zu pair replicas, %zu under counts_multi; replicas by layout:", _i, st.reconf_cases,
		       st.existing, st.fresh, st.mirror, st.pair, st.multi_counts);
		for (size_t i = 0; i < nlays; i++)
			printf(" %s %zu;", lays[i], st.layouts[i]);
		printf("\n");
	}
	/* The cases must exercise the engine, not only its refusals (a chunk of any size). */
	if (cases >= 1000) {
		ck_assert_uint_ge(st.placed * 10, st.answers);
		ck_assert_uint_ge(st.slices * 100, st.replicas);
		ck_assert_uint_ge(st.brute_fit * 100, st.brute);
	}
	/* And every rule the checker judges (make check's chunks see each many times). */
	if (cases >= 10000) {
		ck_assert(st.reconf_cases > 0 && st.reconf_cases < cases);
		ck_assert(st.existing > 0 && st.fresh > 0);
		ck_assert(st.mirror > 0 && st.pair > 0 && st.multi_counts > 0);
		for (size_t i = 0; i < nlays; i++)
			ck_assert_msg(st.layouts[i] > 0, "no replica placed by layout %s", lays[i]);
	}
}
END_TEST

/* ---- the defects the cases found, each as a small fixed case ---- */

/* A node of n free, healthy devices of the manifest model named model. */
static struct xp_node *fixed_node(struct xp_cluster *c, const char *name, const char *model, int n)
{
	const struct cat *ct = NULL;
	for (size_t i = 0; i < ncat && !ct; i++)
		if (strcmp(cats[i].md->name, model) == 0)
			ct = &cats[i];
	ck_assert_msg(ct != NULL, "no manifest model %s", model);
	struct rng r = {1};
	struct xp_node *nd = xp_node_new(name);
	add_devices(&r, nd, ct, n, 0, "1.0", 0, -1);
	for (size_t i = 0; i < nd->n_devices; i++) {
		struct xp_device *d = &nd->devices[i];
		for (size_t a = 0; a < d->n_allocs; a++) {
			free(d->allocs[a].slice);
			free(d->allocs[a].owner);
		}
		free(d->allocs);
		d->allocs = NULL;
		d->n_allocs = 0;
		d->health = XP_HEALTH_OK;
		d->ecu = 1;
	}
	xp_cluster_add(c, nd);
	return nd;
}

/* A one-group job: devices (0: a slice or share), slice, share, replicas, gang minimum. */
static struct xp_job *fixed_job(int devices, const char *slice, int share, int replicas, int gang_min)
{
	struct xp_job *j = xp_calloc(1, sizeof *j);
	j->kind = XP_JOB_BATCH;
	j->n_groups = 1;
	j->groups = xp_calloc(1, sizeof *j->groups);
	struct xp_task_group *g = &j->groups[0];
	g->devices = devices;
	g->slice = slice ? xp_strdup(slice) : NULL;
	g->share_pct = share;
	g->replicas = replicas;
	g->gang_min = gang_min;
	g->validated_layer = -1;
	return j;
}

static struct xp_place_result *fixed_place(struct xp_place_index *ix, const struct xp_job *j, bool quiet,
					       bool reconfigure)
{
	struct xp_err err = {{0}};
	struct xp_place_opts o = {.strategy = XP_STRAT_PACK, .quiet = quiet, .reconfigure = reconfigure};
	struct xp_place_result *r = xp_place_ix(ix, j, &o, &err);
	ck_assert_msg(r != NULL, "%s", err.msg);
	return r;
}

START_TEST(reasons_once_per_node)
{
	/* Seed 27263: a group left pending, then a group refused: the reasons are the refused
	 * replica's, one per node, not both groups' (which said "0/10 nodes fit" of 5). */
	struct xp_cluster *c = xp_cluster_new();
	fixed_node(c, "a", "H100 SXM 80GB", 1);
	fixed_node(c, "b", "H100 SXM 80GB", 1);
	struct xp_job *j = fixed_job(0, NULL, 60, 3, 1);
	j->groups = xp_realloc(j->groups, 2 * sizeof *j->groups);
	j->n_groups = 2;
	j->groups[1] = (struct xp_task_group){.replicas = 1, .gang_min = 1, .devices = 1, .validated_layer = -1};
	struct xp_place_index *ix = xp_place_index_new(c, (const struct xp_manifest *const *)ms, nm);
	for (int scan = 0; scan < 2; scan++) {
		struct xp_place_opts o = {.strategy = XP_STRAT_PACK, .scan = scan};
		struct xp_err err = {{0}};
		struct xp_place_result *r = xp_place_ix(ix, j, &o, &err);
		ck_assert_ptr_nonnull(r);
		ck_assert(!r->placed);
		size_t sum = 0;
		for (size_t i = 0; i < r->n_reasons; i++)
			sum += r->reasons[i].count;
		ck_assert_msg(sum == 2, "reasons count %zu nodes of 2: %s", sum, r->summary);
		ck_assert_msg(strstr(r->summary, "0/2 nodes fit") != NULL, "%s", r->summary);
		xp_place_result_free(r);
	}
	xp_place_index_free(ix);
	xp_job_free(j);
	xp_cluster_free(c);
}
END_TEST

START_TEST(committed_mig_by_name)
{
	/* Seeds 5248 and 93704: slices an earlier commit took are instances of its templates, not
	 * of the next job's: after four 1g.20gb (all 8 slots) or two 3g.40gb no 1g.10gb fits on an
	 * H100, though the compute left (3/7, 1/7) would let 1g.10gb slices be counted in. New
	 * instances: with reconfigure (without, an empty GPU has no instance to take). */
	static const char *const first[] = {"1g.20gb", "3g.40gb"};
	static const int times[] = {4, 2};
	for (int k = 0; k < 2; k++) {
		struct xp_cluster *c = xp_cluster_new();
		fixed_node(c, "a", "H100 SXM 80GB", 1);
		struct xp_place_index *ix = xp_place_index_new(c, (const struct xp_manifest *const *)ms, nm);
		struct xp_job *ja = fixed_job(0, first[k], 0, times[k], times[k]);
		struct xp_place_result *ra = fixed_place(ix, ja, true, true);
		ck_assert_msg(ra->placed, "%s", ra->summary);
		int64_t id = xp_place_commit(ix, ra);
		ck_assert_int_ge(id, 0);
		struct xp_job *jb = fixed_job(0, "1g.10gb", 0, 1, 1);
		for (int scan = 0; scan < 2; scan++) {
			struct xp_place_opts o = {.strategy = XP_STRAT_PACK, .scan = scan, .quiet = true, .reconfigure = true};
			struct xp_err err = {{0}};
			struct xp_place_result *rb = xp_place_ix(ix, jb, &o, &err);
			ck_assert_msg(!rb->placed, "1g.10gb placed beside %d x %s", times[k], first[k]);
			xp_place_result_free(rb);
		}
		/* Released, the GPU is empty again. */
		ck_assert(xp_place_release(ix, id));
		struct xp_place_result *rc = fixed_place(ix, jb, true, true);
		ck_assert(rc->placed);
		ck_assert_str_eq(rc->replicas[0].instance, "new");
		xp_place_result_free(rc);
		xp_place_result_free(ra);
		xp_job_free(ja);
		xp_job_free(jb);
		xp_place_index_free(ix);
		xp_cluster_free(c);
	}
}
END_TEST

START_TEST(committed_free_instances)
{
	/* The same without reconfigure, on a GPU partitioned into four free 1g.20gb instances: a
	 * commit holds the free instances it took, so a later 1g.20gb finds none and a 1g.10gb
	 * none either (nor, with reconfigure, room for a new one); released, they are free. */
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *nd = fixed_node(c, "a", "H100 SXM 80GB", 1);
	for (int i = 0; i < 4; i++) {
		add_alloc(&nd->devices[0], "1g.20gb", 0);
		free(nd->devices[0].allocs[i].owner);
		nd->devices[0].allocs[i].owner = NULL; /* free: no job holds it */
	}
	struct xp_place_index *ix = xp_place_index_new(c, (const struct xp_manifest *const *)ms, nm);
	struct xp_job *ja = fixed_job(0, "1g.20gb", 0, 4, 4);
	struct xp_place_result *ra = fixed_place(ix, ja, true, false);
	ck_assert_msg(ra->placed, "%s", ra->summary);
	for (size_t i = 0; i < ra->n_replicas; i++)
		ck_assert_str_eq(ra->replicas[i].instance, "existing");
	int64_t id = xp_place_commit(ix, ra);
	ck_assert_int_ge(id, 0);
	struct xp_job *one20 = fixed_job(0, "1g.20gb", 0, 1, 1), *one10 = fixed_job(0, "1g.10gb", 0, 1, 1);
	for (int scan = 0; scan < 2; scan++)
		for (int re = 0; re < 2; re++) {
			struct xp_place_opts o = {.strategy = XP_STRAT_PACK, .scan = scan, .quiet = true, .reconfigure = re};
			struct xp_err err = {{0}};
			struct xp_place_result *rb = xp_place_ix(ix, one20, &o, &err);
			ck_assert_msg(rb && !rb->placed, "a 5th 1g.20gb placed (reconfigure %d)", re);
			xp_place_result_free(rb);
			rb = xp_place_ix(ix, one10, &o, &err);
			ck_assert_msg(rb && !rb->placed, "1g.10gb placed beside 4 held 1g.20gb (reconfigure %d)", re);
			xp_place_result_free(rb);
		}
	ck_assert(xp_place_release(ix, id));
	struct xp_place_result *rc = fixed_place(ix, one20, true, false);
	ck_assert(rc->placed);
	ck_assert_str_eq(rc->replicas[0].instance, "existing");
	xp_place_result_free(rc);
	xp_place_result_free(ra);
	xp_job_free(ja);
	xp_job_free(one20);
	xp_job_free(one10);
	xp_place_index_free(ix);
	xp_cluster_free(c);
}
END_TEST

START_TEST(vnpu_template_counts)
{
	/* An Atlas 300I Pro (310P3) holds 3 vir02 and 1 vir04 (its 7 AI CPUs bind before its 8 AI
	 * cores): the manifest's count, which compute shares alone (4 x 2/8, 2 x 4/8) passed. */
	struct xp_cluster *c = xp_cluster_new();
	fixed_node(c, "a", "Ascend 310P3", 1);
	struct xp_place_index *ix = xp_place_index_new(c, (const struct xp_manifest *const *)ms, nm);
	static const char *const tpl[] = {"vir02", "vir04"};
	static const size_t fit[] = {3, 1};
	for (int k = 0; k < 2; k++) {
		/* A gang of one more than fits is refused; with a minimum of 1, the count fits. */
		struct xp_job *all = fixed_job(0, tpl[k], 0, (int)fit[k] + 1, (int)fit[k] + 1);
		struct xp_place_result *r = fixed_place(ix, all, true, false);
		ck_assert_msg(!r->placed, "%zu x %s placed on one 310P3", fit[k] + 1, tpl[k]);
		xp_place_result_free(r);
		xp_job_free(all);
		struct xp_job *some = fixed_job(0, tpl[k], 0, (int)fit[k] + 1, 1);
		r = fixed_place(ix, some, true, false);
		ck_assert(r->placed);
		ck_assert_uint_eq(r->n_replicas, fit[k]);
		ck_assert_uint_eq(r->pending, 1);
		/* Committed, they are the device's count: not one more. */
		int64_t id = xp_place_commit(ix, r);
		struct xp_job *one = fixed_job(0, tpl[k], 0, 1, 1);
		struct xp_place_result *r1 = fixed_place(ix, one, true, false);
		ck_assert(!r1->placed);
		xp_place_result_free(r1);
		ck_assert(xp_place_release(ix, id));
		xp_place_result_free(r);
		xp_job_free(some);
		xp_job_free(one);
	}
	xp_place_index_free(ix);
	/* Instances the cluster shows count too. */
	struct xp_device *d = &c->nodes[0]->devices[0];
	for (int i = 0; i < 3; i++)
		add_alloc(d, "vir02", 0);
	struct xp_job *one = fixed_job(0, "vir02", 0, 1, 1);
	struct xp_err err = {{0}};
	struct xp_place_opts o = {.strategy = XP_STRAT_PACK, .quiet = true};
	struct xp_place_result *r = xp_place(c, one, (const struct xp_manifest *const *)ms, nm, &o, &err);
	ck_assert(r && !r->placed);
	xp_place_result_free(r);
	xp_job_free(one);
	xp_cluster_free(c);
}
END_TEST

XP_DEFINE_SUITE(property,
	{"defects", .setup = setup, .teardown = teardown,
	 .tests = {reasons_once_per_node, committed_mig_by_name, committed_free_instances, vnpu_template_counts}},
	{"random", .timeout_s = 300, .setup = setup, .teardown = teardown, .loop = random_cases, .loop_n = CHUNKS})
