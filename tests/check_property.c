/* check_property.c: a property test of the placement engine (issue 14). Seeded random clusters
 * (1-8 nodes of the shipped manifests' models: MIG GPUs, Ascend rings, AMD, CPU-only nodes;
 * busy, faulty and sliced devices, NUMA domains, racks and switches, labels) and random jobs
 * (whole devices, MIG and vNPU slices, shares, patterns, NUMA and network constraints, gang
 * minimums, every strategy) go through the real engine: a dry-run on a kept index, the scan
 * that judges node by node, xp_place's own index, and batches committed one after another
 * on one index, then a release. Every answer is judged here by a checker written from the
 * rule text and the manifest data, never by the engine's own helpers: no device used twice
 * (the cluster's allocations and earlier replicas and commits included), devices healthy and
 * of the kind asked, per-node counts the model allows, rings and the vendor's ring order, MIG
 * starts and spans, slice counts, shares, gang all-or-nothing, NUMA and network constraints,
 * refusal reasons that cover every node, a refusal's relaxation that places the job. Refusals
 * on tiny clusters are checked against a brute-force search where the rule is simple enough
 * to search honestly.
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
static size_t ncat;
static int cat_total;

/* A model's ring size under the affinity rule ring:N (its own, else the adapter's), 0 none. */
static int ring_size(const struct xp_manifest *m, const struct xp_mmodel *md)
{
	int aff = md->affinity ? md->affinity : m->affinity;
	int rs = md->ring_size ? md->ring_size : m->ring_size;
	return aff == XP_AFF_RING ? rs : 0;
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
				(md->slots ? 3 : 0);
			cats[ncat++] = (struct cat){ms[i], md, w};
			cat_total += w;
		}
	ck_assert_uint_ge(ncat, 4);
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
	int whole;            /* whole-device holders */
	int soft_pct;         /* soft shares, percent */
	int soft;             /* soft holders */
	int hard;             /* hard slices (MIG, vNPU) */
	double hard_use;      /* their compute share */
	bool unknown;         /* a slice no template of the model names: the device is full */
	const char *inst[40]; /* the hard slices' template names */
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

static void world_add_slice(struct dst *s, const char *name)
{
	const struct xp_mtemplate *t = tmpl(s->md, name);
	s->hard++;
	s->hard_use += slice_share(t);
	if (!t)
		s->unknown = true;
	else if (s->ninst < (int)(sizeof s->inst / sizeof *s->inst))
		s->inst[s->ninst++] = t->name;
	else
		s->unknown = true;
}

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
			for (size_t a = 0; a < d->n_allocs; a++) {
				const struct xp_alloc *al = &d->allocs[a];
				if (al->share_pct > 0) {
					s->soft++;
					s->soft_pct += al->share_pct;
				} else if (!al->slice)
					s->whole++;
				else
					world_add_slice(s, al->slice);
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

/* Whole devices dev[0..k) of node ni as one replica of g: the model's counts, its rings,
 * same_group. Device checks are dev_ok's. */
static bool shape_ok(const struct world *w, size_t ni, const struct xp_task_group *g, const int *dev, size_t k,
		     char *why, size_t len)
{
	const struct xp_node *n = w->c->nodes[ni];
	const struct dst *s = &w->d[ni][dev[0]];
	if (s->md && s->md->counts && (k > 64 || !(s->md->counts & (1ULL << (k - 1)))))
		return snprintf(why, len, "%zu devices: not a count %s allows", k, s->md->name), false;
	int ring = s->md ? ring_size(s->m, s->md) : 0;
	if (ring > 0 && k <= (size_t)ring) {
		const char *grp = n->devices[dev[0]].affinity_group;
		for (size_t i = 0; i < k; i++)
			if (!grp || !seq(n->devices[dev[i]].affinity_group, grp))
				return snprintf(why, len, "%zu devices of a ring of %d across rings", k, ring), false;
	} else if (ring > 0 && k % (size_t)ring == 0) {
		/* Whole rings: every device of each ring taken. */
		for (size_t i = 0; i < k; i++) {
			const char *grp = n->devices[dev[i]].affinity_group;
			size_t total = 0, taken = 0;
			for (size_t j = 0; j < n->n_devices; j++)
				total += grp && seq(n->devices[j].affinity_group, grp);
			for (size_t j = 0; j < k; j++)
				taken += grp && seq(n->devices[dev[j]].affinity_group, grp);
			if (!grp || total != (size_t)ring || taken != total)
				return snprintf(why, len, "%zu devices not whole rings of %d", k, ring), false;
		}
	} else if (ring > 0) {
		/* A request wider than a ring and not a multiple: a product's own split rule (none
		 * in the shipped manifests refuses this above); only the count is judged. */
	}
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
	size_t k = rp->n_devices;
	int ring = s->md ? ring_size(s->m, s->md) : 0;
	if (ring <= 0 || k > (size_t)ring || k > XP_MRING_MAX || !s->md->n_ring_prio[k] || g->numa != XP_NUMA_NONE)
		return;
	const struct xp_node *n = w->c->nodes[ni];
	const struct xp_device *rep = &n->devices[rp->pos[0]];
	bool cand[XP_MAX_DEVICES] = {false};
	char why[256];
	for (size_t d = 0; d < n->n_devices; d++)
		cand[d] = same_kind(&n->devices[d], rep) && dev_ok(w, ni, d, g, key, why, sizeof why);
	for (size_t pi = 0; pi < s->md->n_ring_prio[k]; pi++) {
		size_t want = s->md->ring_prio[k][pi];
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
	if (!sliced && !shape_ok(w, ni, g, rp->pos, want, why, sizeof why))
		fail_case(ks, job, "replica on %s: %s", n->name, why);
	if (!sliced)
		check_ring_order(ks, job, w, ni, g, *key, rp);
	/* What it takes of each device, and how it is fenced. */
	double take = g->slice ? slice_share(asked_slice(g, s0)) : g->share_pct > 0 ? g->share_pct / 100.0 : 1;
	if (fabs(rp->take - take) > EPSV)
		fail_case(ks, job, "replica on %s takes %g of a device, the request %g", n->name, rp->take, take);
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
	if (g->numa == XP_NUMA_PREFER && dom < 0 && !sliced && !g->same_group && !(s0->md && s0->md->counts) &&
	    !(s0->md && ring_size(s0->m, s0->md))) {
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
			if (!ok || !shape_ok(w, ni, g, dev, k, why, sizeof why))
				continue;
			/* Within a ring, the ring's free count must be one the vendor's list names. */
			const struct dst *s = &w->d[ni][dev[0]];
			int ring = s->md ? ring_size(s->m, s->md) : 0;
			if (ring > 0 && k <= (size_t)ring && k <= XP_MRING_MAX && s->md->n_ring_prio[k]) {
				size_t fr = 0;
				for (size_t e = 0; e < n->n_devices; e++)
					fr += seq(n->devices[e].affinity_group, n->devices[dev[0]].affinity_group) &&
					      same_kind(&n->devices[e], &n->devices[dev[0]]) &&
					      dev_ok(w, ni, e, g, NULL, why, sizeof why);
				bool listed = false;
				for (size_t pi = 0; pi < s->md->n_ring_prio[k]; pi++)
					listed = listed || s->md->ring_prio[k][pi] == fr;
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

/* Puts random existing hard slices on a MIG or vNPU device: a layout that can exist. */
static void add_slices(struct rng *r, struct xp_device *d, const struct xp_mmodel *md)
{
	unsigned occ = 0;
	double use = 0;
	int tries = rint_in(r, 1, 5);
	for (int i = 0; i < tries; i++) {
		const struct xp_mtemplate *t = &md->templates[rint_in(r, 0, (int)md->n_templates - 1)];
		int same = 0;
		for (size_t a = 0; a < d->n_allocs; a++)
			same += d->allocs[a].slice && strcasecmp(d->allocs[a].slice, t->name) == 0;
		if (t->count > 0 && same >= t->count)
			continue;
		if (geometric(md, t)) {
			int start = -1;
			for (int s = 0; s < md->slots && start < 0; s++) {
				unsigned span = ((1u << t->span) - 1) << s;
				if ((t->at & (1u << s)) && s + t->span <= md->slots && !(occ & span) && chance(r, 60))
					start = s;
			}
			if (start < 0)
				continue;
			occ |= ((1u << t->span) - 1) << start;
		} else if (use + slice_share(t) > 1 + EPSV)
			continue;
		use += slice_share(t);
		d->allocs = xp_realloc(d->allocs, (d->n_allocs + 1) * sizeof *d->allocs);
		d->allocs[d->n_allocs++] = (struct xp_alloc){xp_strdup(t->name), xp_strdup("old"), t->memory_mib, 0};
	}
}

static void add_alloc(struct xp_device *d, const char *slice, int share)
{
	d->allocs = xp_realloc(d->allocs, (d->n_allocs + 1) * sizeof *d->allocs);
	d->allocs[d->n_allocs++] = (struct xp_alloc){slice ? xp_strdup(slice) : NULL, xp_strdup("old"), -1, share};
}

/* Adds n devices of model ct to node nd from index first. */
static void add_devices(struct rng *r, struct xp_node *nd, const struct cat *ct, int n, int n_numa, const char *driver,
			int vshift)
{
	int ring = ring_size(ct->m, ct->md);
	int first = (int)nd->n_devices;
	for (int i = 0; i < n; i++) {
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
		if (ring > 0)
			d->affinity_group = xp_asprintf("hccs:%d", i / ring);
		else if (ct->m->affinity == XP_AFF_NVLINK || ct->md->affinity == XP_AFF_NVLINK)
			d->affinity_group = chance(r, 90) ? xp_asprintf("nvlink:%d", i / 4) : NULL;
		else
			d->affinity_group = chance(r, 80) ? xp_asprintf("pcie:%d", i / 2) : NULL;
		d->partition = ct->md->partition;
		/* What runs there already. */
		int u = rint_in(r, 0, 99);
		if (u < 15)
			add_alloc(d, NULL, 0);
		else if (u < 33 && ct->md->n_templates && (ct->md->partition & (XP_PART_MIG | XP_PART_VNPU)))
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
		if (!chance(r, 8)) {
			/* One kind, now and then a second (other vendor) after it. */
			const struct cat *a = pick_cat(r);
			int ring = ring_size(a->m, a->md);
			int n = ring > 0 ? ring * rint_in(r, 1, 2) : rint_in(r, 1, tiny ? 4 : 8);
			if (tiny && n > 8)
				n = 8;
			const char *drv = chance(r, 80) ? "1.0" : "2.0";
			add_devices(r, nd, a, n, n_numa, drv, 0);
			if (!tiny && chance(r, 15)) {
				const struct cat *b = pick_cat(r);
				int rb = ring_size(b->m, b->md);
				add_devices(r, nd, b, rb > 0 ? rb : rint_in(r, 1, 4), n_numa, drv, b->m == a->m ? n : 0);
			} else if (chance(r, 3)) {
				/* A device no manifest describes: placement judges its strings. */
				struct xp_device *d = xp_node_add_device(nd);
				d->index = (int)nd->n_devices - 1;
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

/* A model from the cluster (most jobs ask what is there), else from the catalogue. */
static const struct cat *job_cat(struct rng *r, const struct xp_cluster *c)
{
	if (chance(r, 80) && c->n_nodes) {
		const struct xp_node *n = c->nodes[rint_in(r, 0, (int)c->n_nodes - 1)];
		if (n->n_devices) {
			const struct xp_device *d = &n->devices[rint_in(r, 0, (int)n->n_devices - 1)];
			for (size_t i = 0; d->model && i < ncat; i++)
				if (strcmp(cats[i].md->name, d->model) == 0)
					return &cats[i];
		}
	}
	return pick_cat(r);
}

static void gen_group(struct rng *r, const struct xp_cluster *c, struct xp_task_group *g, bool simple)
{
	const struct cat *ct = job_cat(r, c);
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
		else if (ring > 0 && chance(r, 70))
			g->devices = rint_in(r, 1, 2 * ring);
		else
			g->devices = chance(r, 70) ? 1 << rint_in(r, 0, 2) : rint_in(r, 1, 8);
	} else if (kind < 85) {
		g->slice = xp_strdup(chance(r, 3) ? "9g.99gb" : ct->md->templates[rint_in(r, 0, (int)ct->md->n_templates - 1)].name);
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
				  .quiet = chance(&r, 85)};
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
	/* The cases must exercise the engine, not only its refusals (a chunk of any size). */
	if (cases >= 1000) {
		ck_assert_uint_ge(st.placed * 10, st.answers);
		ck_assert_uint_ge(st.slices * 100, st.replicas);
		ck_assert_uint_ge(st.brute_fit * 100, st.brute);
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
	add_devices(&r, nd, ct, n, 0, "1.0", 0);
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

static struct xp_place_result *fixed_place(struct xp_place_index *ix, const struct xp_job *j, bool quiet)
{
	struct xp_err err = {{0}};
	struct xp_place_opts o = {.strategy = XP_STRAT_PACK, .quiet = quiet};
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
	 * H100, though the compute left (3/7, 1/7) would let 1g.10gb slices be counted in. */
	static const char *const first[] = {"1g.20gb", "3g.40gb"};
	static const int times[] = {4, 2};
	for (int k = 0; k < 2; k++) {
		struct xp_cluster *c = xp_cluster_new();
		fixed_node(c, "a", "H100 SXM 80GB", 1);
		struct xp_place_index *ix = xp_place_index_new(c, (const struct xp_manifest *const *)ms, nm);
		struct xp_job *ja = fixed_job(0, first[k], 0, times[k], times[k]);
		struct xp_place_result *ra = fixed_place(ix, ja, true);
		ck_assert_msg(ra->placed, "%s", ra->summary);
		int64_t id = xp_place_commit(ix, ra);
		ck_assert_int_ge(id, 0);
		struct xp_job *jb = fixed_job(0, "1g.10gb", 0, 1, 1);
		for (int scan = 0; scan < 2; scan++) {
			struct xp_place_opts o = {.strategy = XP_STRAT_PACK, .scan = scan, .quiet = true};
			struct xp_err err = {{0}};
			struct xp_place_result *rb = xp_place_ix(ix, jb, &o, &err);
			ck_assert_msg(!rb->placed, "1g.10gb placed beside %d x %s", times[k], first[k]);
			xp_place_result_free(rb);
		}
		/* Released, the GPU is empty again. */
		ck_assert(xp_place_release(ix, id));
		struct xp_place_result *rc = fixed_place(ix, jb, true);
		ck_assert(rc->placed);
		xp_place_result_free(rc);
		xp_place_result_free(ra);
		xp_job_free(ja);
		xp_job_free(jb);
		xp_place_index_free(ix);
		xp_cluster_free(c);
	}
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
		struct xp_place_result *r = fixed_place(ix, all, true);
		ck_assert_msg(!r->placed, "%zu x %s placed on one 310P3", fit[k] + 1, tpl[k]);
		xp_place_result_free(r);
		xp_job_free(all);
		struct xp_job *some = fixed_job(0, tpl[k], 0, (int)fit[k] + 1, 1);
		r = fixed_place(ix, some, true);
		ck_assert(r->placed);
		ck_assert_uint_eq(r->n_replicas, fit[k]);
		ck_assert_uint_eq(r->pending, 1);
		/* Committed, they are the device's count: not one more. */
		int64_t id = xp_place_commit(ix, r);
		struct xp_job *one = fixed_job(0, tpl[k], 0, 1, 1);
		struct xp_place_result *r1 = fixed_place(ix, one, true);
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
	 .tests = {reasons_once_per_node, committed_mig_by_name, vnpu_template_counts}},
	{"random", .timeout_s = 300, .setup = setup, .teardown = teardown, .loop = random_cases, .loop_n = CHUNKS})
