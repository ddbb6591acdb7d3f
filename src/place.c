/* place.c: the placement dry-run (see place.h for the rules, strategies and weights). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "place.h"

#define EPS 1e-9
/* Stages a node passes in order; the first it fails is its one reason. */
enum stage { ST_STATE, ST_LABELS, ST_CPUS, ST_HOSTMEM, ST_MODEL, ST_HOMOG, ST_HEALTH, ST_MEMORY,
	     ST_ECU, ST_FREE, ST_SHAPE, ST_OK };
static const char *const stage_code[] = {"node-state", "label", "cpus", "host-memory", "model",
					 "homogeneous", "health", "memory", "ecu", "free", "affinity", "ok"};

static const char *const strat_names[XP_STRAT_COUNT] = {"pack", "spread", "topology", "green"};
static const char *const crit_names[XP_CRIT_COUNT] = {"utilization", "balance", "topology", "powered",
						      "efficiency"};
/* Rows: strategies; columns: criteria (documented in place.h and xpool(1)). */
static const double weights[XP_STRAT_COUNT][XP_CRIT_COUNT] = {
	{0.7, 0, 0.3, 0, 0},
	{0, 0.7, 0.3, 0, 0},
	{0.2, 0, 0.8, 0, 0},
	{0.1, 0, 0, 0.6, 0.3},
};

const char *xp_strategy_name(int s) { return s >= 0 && s < XP_STRAT_COUNT ? strat_names[s] : "unknown"; }
const char *xp_criterion_name(int c) { return c >= 0 && c < XP_CRIT_COUNT ? crit_names[c] : "unknown"; }
double xp_strategy_weight(int s, int c)
{
	return s >= 0 && s < XP_STRAT_COUNT && c >= 0 && c < XP_CRIT_COUNT ? weights[s][c] : 0;
}
int xp_strategy_parse(const char *s)
{
	for (int i = 0; s && i < XP_STRAT_COUNT; i++)
		if (strcasecmp(s, strat_names[i]) == 0)
			return i;
	return -1;
}

/* The manifest entry describing a device: its model by name, else by the match globs. */
struct dinfo {
	const struct xp_manifest *m;
	const struct xp_mmodel *md;
};

/* Model name -> manifest entry, so that the name is matched once per dry-run, not once per
 * device per replica (80,000 devices x every replica otherwise). */
#define CACHE_MAX 64
struct mcache {
	const char *model[CACHE_MAX];
	struct dinfo di[CACHE_MAX];
	size_t n;
};

struct pctx {
	struct mcache *cache;
	const struct xp_cluster *c;
	const struct xp_job *job;
	const struct xp_manifest *const *ms;
	size_t nm;
	int strategy;
	size_t *order;     /* node indices sorted by name: the deterministic scan order */
	double **delta;    /* scratch usage per node and device, NULL until something lands there */
	const struct xp_device *key; /* homogeneous key: vendor, model, driver of this device */
	int net;           /* enum xp_network of the whole job */
	const char *domain; /* the switch or rack this attempt keeps to, NULL for anywhere */
};

/* One node's answer for one replica. */
struct answer {
	int stage;          /* enum stage reached (ST_OK when it fits) */
	char text[256];     /* reason when it does not */
	int dev[XP_MAX_DEVICES];
	size_t n;
	double take;        /* capacity taken from each chosen device */
	double score, parts[XP_CRIT_COUNT];
};

/* Recorder for --explain: NULL when not asked. */
struct rec {
	struct xp_place_check *v;
	size_t n;
};

static void rec_add(struct rec *r, const char *name, bool pass, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void rec_add(struct rec *r, const char *name, bool pass, const char *fmt, ...)
{
	if (!r)
		return;
	r->v = xp_realloc(r->v, (r->n + 1) * sizeof *r->v);
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	r->v[r->n++] = (struct xp_place_check){name, pass, xp_strdup(buf)};
}

static struct dinfo lookup_uncached(const struct pctx *p, const struct xp_device *d)
{
	struct dinfo di = {NULL, NULL};
	for (size_t i = 0; i < p->nm && d->model; i++)
		for (size_t k = 0; k < p->ms[i]->n_models; k++)
			if (strcasecmp(p->ms[i]->models[k].name, d->model) == 0)
				return (struct dinfo){p->ms[i], &p->ms[i]->models[k]};
	for (size_t i = 0; i < p->nm && d->model; i++) {
		const struct xp_mmodel *md = xp_manifest_model(p->ms[i], d->model, -1);
		if (md)
			return (struct dinfo){p->ms[i], md};
	}
	return di;
}

static struct dinfo lookup(const struct pctx *p, const struct xp_device *d)
{
	struct mcache *mc = p->cache;
	for (size_t i = 0; d->model && i < mc->n; i++)
		if (strcmp(mc->model[i], d->model) == 0)
			return mc->di[i];
	struct dinfo di = lookup_uncached(p, d);
	if (d->model && mc->n < CACHE_MAX) {
		/* The cluster outlives the dry-run, so its strings can be the keys. */
		mc->model[mc->n] = d->model;
		mc->di[mc->n++] = di;
	}
	return di;
}

static const struct xp_mtemplate *tmpl(const struct dinfo *di, const char *name)
{
	for (size_t t = 0; di->md && name && t < di->md->n_templates; t++)
		if (strcasecmp(di->md->templates[t].name, name) == 0)
			return &di->md->templates[t];
	return NULL;
}

/* Share of a device already in use: whole allocations take all of it, shares their percent,
 * slices one template count's worth (all of it when the template is not known: safe side). */
static double base_used(const struct xp_device *d, const struct dinfo *di)
{
	double u = 0;
	for (size_t i = 0; i < d->n_allocs; i++) {
		const struct xp_alloc *a = &d->allocs[i];
		if (a->share_pct > 0)
			u += a->share_pct / 100.0;
		else if (!a->slice)
			u += 1;
		else {
			const struct xp_mtemplate *t = tmpl(di, a->slice);
			u += t && t->count > 0 ? 1.0 / t->count : 1;
		}
	}
	return u > 1 ? 1 : u;
}

static bool glob_or_null(const char *g, const char *s) { return !g || (s && xp_glob_match(g, s)); }

static bool model_ok(const struct xp_task_group *g, const struct xp_device *d, const struct dinfo *di)
{
	if (di->md)
		return xp_job_model_matches(g, di->m, di->md);
	/* No manifest: the device's own strings are all there is. */
	return glob_or_null(g->vendor, d->vendor) && glob_or_null(g->model, d->model);
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool same_kind(const struct xp_device *a, const struct xp_device *b)
{
	return same_str(a->vendor, b->vendor) && same_str(a->model, b->model) && same_str(a->driver, b->driver);
}

/* "HCCS" from "hccs:0": the group's kind as operators name it. */
static void group_kind(const char *g, char *out, size_t len)
{
	size_t i = 0;
	for (; g && g[i] && g[i] != ':' && i + 1 < len; i++)
		out[i] = (char)toupper((unsigned char)g[i]);
	out[i] = 0;
	if (!i)
		snprintf(out, len, "affinity");
}

static const char *env_for(const char *vendor)
{
	if (!vendor)
		return "XPOOL_VISIBLE_DEVICES";
	if (strcasestr(vendor, "nvidia"))
		return "CUDA_VISIBLE_DEVICES";
	if (strcasestr(vendor, "huawei") || strcasestr(vendor, "ascend"))
		return "ASCEND_VISIBLE_DEVICES";
	if (strcasestr(vendor, "amd") || strcasestr(vendor, "hygon") || strcasestr(vendor, "advanced micro"))
		return "HIP_VISIBLE_DEVICES";
	if (strcasestr(vendor, "cambricon"))
		return "MLU_VISIBLE_DEVICES";
	return "XPOOL_VISIBLE_DEVICES";
}

static double used_now(const struct pctx *p, size_t ni, size_t di, const struct xp_device *d,
		       const struct dinfo *inf)
{
	double u = base_used(d, inf) + (p->delta[ni] ? p->delta[ni][di] : 0);
	return u > 1 ? 1 : u;
}

/* Picks want devices from cand (indices, ascending) under the group rules; returns false with
 * text set. ring: the affinity rule's ring size (0 none). */
static bool shape(const struct xp_node *n, const int *cand, size_t nc, size_t want, int ring, bool same_group,
		  int strategy, const char *model, int *out, char *text, size_t tlen)
{
	char kind[32];
	group_kind(nc ? n->devices[cand[0]].affinity_group : NULL, kind, sizeof kind);
	if (ring > 0 && want > (size_t)ring) {
		if (want % (size_t)ring) {
			snprintf(text, tlen, "affinity rule ring:%d refuses %zu %s devices", ring, want, model);
			return false;
		}
		/* Whole groups: every device of the group on the node free. */
		size_t got = 0;
		for (size_t i = 0; i < nc && got < want; i++) {
			const char *g = n->devices[cand[i]].affinity_group;
			bool first = true;
			for (size_t j = 0; j < i; j++)
				first = first && !same_str(n->devices[cand[j]].affinity_group, g);
			if (!first || !g)
				continue;
			size_t total = 0, fr = 0;
			for (size_t k = 0; k < n->n_devices; k++)
				total += same_str(n->devices[k].affinity_group, g);
			for (size_t k = 0; k < nc; k++)
				fr += same_str(n->devices[cand[k]].affinity_group, g);
			if (fr != total || fr != (size_t)ring)
				continue;
			for (size_t k = 0; k < nc; k++)
				if (same_str(n->devices[cand[k]].affinity_group, g))
					out[got++] = cand[k];
		}
		if (got < want) {
			snprintf(text, tlen, "fewer than %zu whole free %s groups of %s", want / (size_t)ring, kind, model);
			return false;
		}
		return true;
	}
	if ((ring > 0) || same_group) {
		/* One group: pack takes the fullest group that fits (keeps whole groups free). */
		const char *best = NULL;
		size_t bestfree = 0;
		bool found = false;
		for (size_t i = 0; i < nc; i++) {
			const char *g = n->devices[cand[i]].affinity_group;
			size_t fr = 0;
			for (size_t k = 0; k < nc; k++)
				fr += g ? same_str(n->devices[cand[k]].affinity_group, g) : k == i;
			if (fr < want)
				continue;
			bool better = !found || (strategy == XP_STRAT_SPREAD ? fr > bestfree : fr < bestfree);
			if (better) {
				best = g;
				bestfree = fr;
				found = true;
				if (!g) {
					out[0] = cand[i];
					return true;
				}
			}
		}
		if (!found) {
			snprintf(text, tlen, "fewer than %zu free %s in one %s group", want, model, kind);
			return false;
		}
		size_t got = 0;
		for (size_t k = 0; k < nc && got < want; k++)
			if (same_str(n->devices[cand[k]].affinity_group, best))
				out[got++] = cand[k];
		return true;
	}
	for (size_t i = 0; i < want; i++)
		out[i] = cand[i];
	return true;
}

static double topology_of(const struct xp_node *n, const int *dev, size_t k)
{
	if (k < 2)
		return 1;
	if (!n->links)
		return 0.5;
	double sum = 0;
	size_t pairs = 0;
	for (size_t a = 0; a < k; a++)
		for (size_t b = a + 1; b < k; b++, pairs++) {
			int r = xp_link_rank(*xp_node_link(n, (size_t)dev[a], (size_t)dev[b]));
			sum += r > 7 ? 7 : r;
		}
	return 1 - sum / (double)pairs / 7.0;
}

/* Judges node ni for one replica of group g; fills a. rec: the explain recorder or NULL. */
static void eval(const struct pctx *p, size_t ni, const struct xp_task_group *g, struct answer *a, struct rec *rc)
{
	const struct xp_node *n = p->c->nodes[ni];
	memset(a, 0, sizeof *a);
	bool st_ok = n->state == XP_NODE_UP || n->state == XP_NODE_DEGRADED;
	rec_add(rc, "node-state", st_ok, "%s", xp_node_state_name(n->state));
	if (!st_ok) {
		a->stage = ST_STATE;
		snprintf(a->text, sizeof a->text, "node %s", xp_node_state_name(n->state));
		return;
	}
	for (size_t i = 0; i < g->labels.n; i++) {
		const char *v = xp_labels_get(&n->governance, g->labels.keys[i]);
		if (!v)
			v = xp_labels_get(&n->facts, g->labels.keys[i]);
		bool ok = v && strcmp(v, g->labels.values[i]) == 0;
		rec_add(rc, "label", ok, "%s=%s (node has %s)", g->labels.keys[i], g->labels.values[i], v ? v : "none");
		if (!ok) {
			a->stage = ST_LABELS;
			snprintf(a->text, sizeof a->text, "label %s=%s missing", g->labels.keys[i], g->labels.values[i]);
			return;
		}
	}
	if (g->cpus > 0 && n->pus > 0) {
		bool ok = n->pus >= g->cpus;
		rec_add(rc, "cpus", ok, "%d of %d", n->pus, g->cpus);
		if (!ok) {
			a->stage = ST_CPUS;
			snprintf(a->text, sizeof a->text, "fewer than %d CPUs", g->cpus);
			return;
		}
	}
	if (g->host_memory_mib > 0 && n->memory_mib > 0) {
		bool ok = n->memory_mib >= g->host_memory_mib;
		rec_add(rc, "host-memory", ok, "%lld of %lld MiB", (long long)n->memory_mib, (long long)g->host_memory_mib);
		if (!ok) {
			a->stage = ST_HOSTMEM;
			snprintf(a->text, sizeof a->text, "less than %lld MiB host memory", (long long)g->host_memory_mib);
			return;
		}
	}
	bool sliced = g->slice || g->share_pct > 0;
	size_t want = sliced ? 1 : (size_t)g->devices;
	/* Each kind of device on the node (vendor, model, driver) is judged apart, since one replica
	 * gets one kind; the node's answer is the kind that got furthest (first on ties). */
	int best_stage = ST_MODEL;
	struct answer tmp;
	bool any = false;
	size_t best_counts[ST_OK] = {0};
	const struct xp_device *best_rep = NULL;
	for (size_t k = 0; k < n->n_devices; k++) {
		const struct xp_device *rep = &n->devices[k];
		bool first = true;
		for (size_t j = 0; j < k && first; j++)
			first = !same_kind(&n->devices[j], rep);
		if (!first)
			continue;
		size_t counts[ST_OK] = {0};
		int cand[XP_MAX_DEVICES];
		size_t nc = 0;
		double take = 1;
		struct dinfo repinfo = lookup(p, rep);
		const struct xp_mtemplate *t = g->slice ? tmpl(&repinfo, g->slice) : NULL;
		if (g->slice && t)
			take = t->count > 0 ? 1.0 / t->count : 1;
		else if (g->share_pct > 0)
			take = g->share_pct / 100.0;
		for (size_t i = 0; i < n->n_devices; i++) {
			const struct xp_device *d = &n->devices[i];
			if (!same_kind(d, rep))
				continue;
			if (!model_ok(g, d, &repinfo) || (g->slice && !t))
				continue;
			counts[ST_MODEL]++;
			if (p->key && g->homogeneous && !same_kind(d, p->key))
				continue;
			counts[ST_HOMOG]++;
			if (d->health == XP_HEALTH_FAIL)
				continue;
			counts[ST_HEALTH]++;
			int64_t mem = t ? t->memory_mib : g->share_pct > 0 && d->memory_mib > 0
				? d->memory_mib * g->share_pct / 100 : d->memory_mib;
			if (g->memory_mib > 0 && mem < g->memory_mib)
				continue;
			counts[ST_MEMORY]++;
			if (g->min_ecu > 0 && !(XP_HAS(d->ecu) && d->ecu >= g->min_ecu))
				continue;
			counts[ST_ECU]++;
			double u = used_now(p, ni, i, d, &repinfo);
			if (sliced ? u + take > 1 + EPS : u > EPS)
				continue;
			counts[ST_FREE]++;
			cand[nc++] = (int)i;
		}
		int stage = ST_MODEL;
		while (stage <= ST_FREE && counts[stage] >= want)
			stage = stage == ST_MODEL ? ST_HOMOG : stage + 1;
		/* The stages between ST_MODEL and ST_FREE are consecutive. */
		if (stage > ST_FREE) {
			int ring = 0;
			if (repinfo.md) {
				int aff = repinfo.md->affinity ? repinfo.md->affinity : repinfo.m->affinity;
				int rs = repinfo.md->ring_size ? repinfo.md->ring_size : repinfo.m->ring_size;
				ring = aff == XP_AFF_RING ? rs : 0;
			}
			const char *mname = rep->model ? rep->model : "device";
			memset(&tmp, 0, sizeof tmp);
			bool ok = false;
			if (sliced) {
				/* pack: the busiest device that fits; spread: the idlest. */
				int pick = -1;
				double pu = 0;
				for (size_t i = 0; i < nc; i++) {
					double u = used_now(p, ni, (size_t)cand[i], &n->devices[cand[i]], &repinfo);
					if (g->numa == XP_NUMA_STRICT && n->devices[cand[i]].numa < 0)
						continue;
					if (pick < 0 || (p->strategy == XP_STRAT_SPREAD ? u < pu - EPS : u > pu + EPS)) {
						pick = cand[i];
						pu = u;
					}
				}
				ok = pick >= 0;
				if (ok) {
					tmp.dev[0] = pick;
				} else
					snprintf(tmp.text, sizeof tmp.text, "no free %s in a known NUMA domain", mname);
			} else if (g->numa == XP_NUMA_NONE) {
				ok = shape(n, cand, nc, want, ring, g->same_group, p->strategy, mname, tmp.dev,
					   tmp.text, sizeof tmp.text);
			} else {
				/* One NUMA domain: try each in id order; prefer falls back to anywhere. */
				for (size_t i = 0; i < nc && !ok; i++) {
					int dom = n->devices[cand[i]].numa;
					bool seen = dom < 0;
					for (size_t j = 0; j < i && !seen; j++)
						seen = n->devices[cand[j]].numa == dom;
					if (seen)
						continue;
					int sub[XP_MAX_DEVICES];
					size_t ns = 0;
					for (size_t j = 0; j < nc; j++)
						if (n->devices[cand[j]].numa == dom)
							sub[ns++] = cand[j];
					if (ns >= want)
						ok = shape(n, sub, ns, want, ring, g->same_group, p->strategy, mname, tmp.dev,
							   tmp.text, sizeof tmp.text);
				}
				if (!ok && g->numa == XP_NUMA_PREFER)
					ok = shape(n, cand, nc, want, ring, g->same_group, p->strategy, mname, tmp.dev,
						   tmp.text, sizeof tmp.text);
				else if (!ok && (!tmp.text[0] || strstr(tmp.text, "fewer than") == tmp.text))
					snprintf(tmp.text, sizeof tmp.text, "fewer than %zu free %s in one NUMA domain", want,
						 mname);
			}
			stage = ok ? ST_OK : ST_SHAPE;
			if (ok) {
				tmp.n = want;
				tmp.take = take;
				tmp.stage = ST_OK;
				/* Score: how the node looks after this replica lands. */
				double used = 0, eff = 0;
				bool powered = false;
				for (size_t i = 0; i < n->n_devices; i++) {
					struct dinfo inf = lookup(p, &n->devices[i]);
					double u = used_now(p, ni, i, &n->devices[i], &inf);
					powered = powered || u > EPS;
					for (size_t j = 0; j < tmp.n; j++)
						if (tmp.dev[j] == (int)i)
							u += take;
					used += u > 1 ? 1 : u;
				}
				double util = n->n_devices ? used / (double)n->n_devices : 0;
				const struct xp_device *d0 = &n->devices[tmp.dev[0]];
				if (XP_HAS(d0->ecu) && XP_HAS(d0->power_limit_w) && d0->power_limit_w > 0) {
					double e = d0->ecu * 100.0 / d0->power_limit_w; /* ECU per 100 W */
					eff = e / (1 + e);
				} else
					eff = 0.5;
				double raw[XP_CRIT_COUNT] = {util, 1 - util, topology_of(n, tmp.dev, tmp.n), powered, eff};
				tmp.score = 0;
				for (int c = 0; c < XP_CRIT_COUNT; c++) {
					tmp.parts[c] = 100 * weights[p->strategy][c] * raw[c];
					tmp.score += tmp.parts[c];
				}
				if (!any || a->stage != ST_OK || tmp.score > a->score + EPS) {
					*a = tmp;
					any = true;
				}
				best_stage = ST_OK;
				best_rep = rep;
				memcpy(best_counts, counts, sizeof counts);
				continue;
			}
			tmp.stage = ST_SHAPE;
		}
		if (any && a->stage == ST_OK)
			continue;
		if (!any || stage > best_stage) {
			best_stage = stage;
			best_rep = rep;
			memcpy(best_counts, counts, sizeof counts);
			a->stage = stage;
			any = true;
			if (stage == ST_SHAPE)
				snprintf(a->text, sizeof a->text, "%s", tmp.text);
		}
	}
	const char *mname = best_rep && best_rep->model ? best_rep->model : "device";
	char what[160];
	if (g->slice)
		snprintf(what, sizeof what, "%s with slice %s", mname, g->slice);
	else if (g->share_pct > 0)
		snprintf(what, sizeof what, "%s with %d%% free", mname, g->share_pct);
	else
		snprintf(what, sizeof what, "%s", mname);
	if (!any || a->stage == ST_MODEL) {
		a->stage = ST_MODEL;
		if (g->vendor || g->model || g->slice)
			snprintf(a->text, sizeof a->text, "fewer than %zu devices matching %s%s%s%s%s", want,
				 g->vendor ? g->vendor : "", g->vendor && g->model ? " " : "", g->model ? g->model : "",
				 g->slice ? " with slice " : "", g->slice ? g->slice : "");
		else
			snprintf(a->text, sizeof a->text, "fewer than %zu accelerators", want);
	} else if (a->stage == ST_HOMOG)
		snprintf(a->text, sizeof a->text, "no %zu %s %s (driver %s) for a homogeneous job", want,
			 p->key && p->key->vendor ? p->key->vendor : "?", p->key && p->key->model ? p->key->model : "?",
			 p->key && p->key->driver ? p->key->driver : "?");
	else if (a->stage == ST_HEALTH)
		snprintf(a->text, sizeof a->text, "fewer than %zu healthy %s", want, what);
	else if (a->stage == ST_MEMORY)
		snprintf(a->text, sizeof a->text, "fewer than %zu %s with %lld MiB", want, what, (long long)g->memory_mib);
	else if (a->stage == ST_ECU)
		snprintf(a->text, sizeof a->text, "fewer than %zu %s with %g ECU", want, what, g->min_ecu);
	else if (a->stage == ST_FREE)
		snprintf(a->text, sizeof a->text, "fewer than %zu free %s", want, what);
	if (rc) {
		static const char *const names[] = {[ST_MODEL] = "model", [ST_HOMOG] = "homogeneous",
						    [ST_HEALTH] = "health", [ST_MEMORY] = "memory",
						    [ST_ECU] = "ecu", [ST_FREE] = "free"};
		for (int s = ST_MODEL; s <= ST_FREE; s++) {
			rec_add(rc, names[s], best_counts[s] >= want, "have %zu, need %zu %s", best_counts[s], want, what);
			if (best_counts[s] < want)
				return;
		}
		rec_add(rc, "affinity", a->stage == ST_OK, "%s", a->stage == ST_OK ? "devices fit the group rules" : a->text);
	}
}

/* Frees a replica's strings. */
static void replica_free(struct xp_place_replica *r)
{
	free(r->node);
	free(r->devices);
	xp_strv_free(r->bus_ids, r->n_devices);
	free(r->slice);
	free(r->env_value);
}

static void reasons_free(struct xp_place_reason *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].text);
	free(v);
}

/* One gang attempt under one homogeneous key. */
struct attempt {
	struct xp_place_replica *reps;
	size_t n_reps;
	bool placed;
	double total;
	struct xp_place_reason *reasons;
	size_t n_reasons;
};

static void attempt_free(struct attempt *t)
{
	for (size_t i = 0; i < t->n_reps; i++)
		replica_free(&t->reps[i]);
	free(t->reps);
	reasons_free(t->reasons, t->n_reasons);
	memset(t, 0, sizeof *t);
}

static void add_reason(struct attempt *t, const char *code, const char *text)
{
	for (size_t i = 0; i < t->n_reasons; i++)
		if (strcmp(t->reasons[i].text, text) == 0 && strcmp(t->reasons[i].code, code) == 0) {
			t->reasons[i].count++;
			return;
		}
	t->reasons = xp_realloc(t->reasons, (t->n_reasons + 1) * sizeof *t->reasons);
	t->reasons[t->n_reasons++] = (struct xp_place_reason){code, xp_strdup(text), 1};
}

static int reason_cmp(const void *a, const void *b)
{
	const struct xp_place_reason *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->text, y->text);
}

static void scratch_reset(struct pctx *p)
{
	for (size_t i = 0; i < p->c->n_nodes; i++) {
		free(p->delta[i]);
		p->delta[i] = NULL;
	}
}

/* The node's switch or rack under the job's network constraint, NULL when not recorded. */
static const char *net_key(const struct pctx *p, const struct xp_node *n)
{
	const char *k = p->net == XP_NET_SWITCH ? n->sw : p->net == XP_NET_RACK ? n->rack : NULL;
	return k && *k ? k : NULL;
}

static void run_attempt(struct pctx *p, struct attempt *t)
{
	scratch_reset(p);
	struct answer a, best;
	for (size_t gi = 0; gi < p->job->n_groups; gi++) {
		const struct xp_task_group *g = &p->job->groups[gi];
		for (int r = 0; r < g->replicas; r++) {
			size_t bi = SIZE_MAX;
			for (size_t oi = 0; oi < p->c->n_nodes; oi++) {
				size_t ni = p->order[oi];
				const char *nk = net_key(p, p->c->nodes[ni]);
				if (p->domain && (!nk || strcmp(nk, p->domain) != 0))
					continue;
				eval(p, ni, g, &a, NULL);
				if (a.stage == ST_OK) {
					if (bi == SIZE_MAX || a.score > best.score + EPS) {
						best = a;
						bi = ni;
					}
				} else
					add_reason(t, stage_code[a.stage], a.text);
			}
			if (bi == SIZE_MAX) {
				qsort(t->reasons, t->n_reasons, sizeof *t->reasons, reason_cmp);
				return;
			}
			/* Reasons count only for the replica that fails. */
			reasons_free(t->reasons, t->n_reasons);
			t->reasons = NULL;
			t->n_reasons = 0;
			const struct xp_node *n = p->c->nodes[bi];
			if (!p->delta[bi])
				p->delta[bi] = xp_calloc(n->n_devices ? n->n_devices : 1, sizeof(double));
			t->reps = xp_realloc(t->reps, (t->n_reps + 1) * sizeof *t->reps);
			struct xp_place_replica *rp = &t->reps[t->n_reps++];
			memset(rp, 0, sizeof *rp);
			rp->group = gi;
			rp->node = xp_strdup(n->name);
			rp->n_devices = best.n;
			rp->devices = xp_calloc(best.n, sizeof(int));
			char env[XP_MAX_DEVICES * 6 + 1] = "";
			int numa = n->devices[best.dev[0]].numa;
			size_t nb = 0;
			for (size_t k = 0; k < best.n; k++) {
				const struct xp_device *d = &n->devices[best.dev[k]];
				p->delta[bi][best.dev[k]] += best.take;
				rp->devices[k] = d->index;
				xp_strv_add(&rp->bus_ids, &nb, d->pci_bus_id ? d->pci_bus_id : "");
				size_t l = strlen(env);
				snprintf(env + l, sizeof env - l, "%s%d", k ? "," : "", d->index);
				if (d->numa != numa)
					numa = -1;
			}
			rp->numa = numa;
			if (g->slice)
				rp->slice = xp_strdup(g->slice);
			else if (g->share_pct > 0)
				rp->slice = xp_asprintf("share:%d", g->share_pct);
			rp->score = best.score;
			memcpy(rp->breakdown, best.parts, sizeof rp->breakdown);
			rp->env_name = env_for(n->devices[best.dev[0]].vendor);
			rp->env_value = xp_strdup(env);
			t->total += best.score;
		}
	}
	t->placed = true;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* One gang attempt under the job's network constraint: one try per switch (rack), in key
 * order; the placed try with the highest total wins (ties: the key that sorts first). When
 * none places, every node gets one reason: no key recorded, its domain's per-node reasons
 * when not even one replica fit there, else the share of the job its domain could hold. */
static void run_network(struct pctx *p, struct attempt *t)
{
	p->domain = NULL;
	if (p->net == XP_NET_ANY) {
		run_attempt(p, t);
		return;
	}
	const char *what = p->net == XP_NET_SWITCH ? "switch" : "rack";
	size_t total = 0;
	for (size_t gi = 0; gi < p->job->n_groups; gi++)
		total += (size_t)(p->job->groups[gi].replicas > 0 ? p->job->groups[gi].replicas : 0);
	const char **keys = xp_calloc(p->c->n_nodes ? p->c->n_nodes : 1, sizeof *keys);
	size_t nk = 0, nokey = 0;
	for (size_t i = 0; i < p->c->n_nodes; i++) {
		const char *k = net_key(p, p->c->nodes[i]);
		if (k)
			keys[nk++] = k;
		else
			nokey++;
	}
	qsort(keys, nk, sizeof *keys, str_cmp);
	struct attempt best = {0}, fail = {0};
	for (size_t i = 0; i < nk; i++) {
		if (i && strcmp(keys[i], keys[i - 1]) == 0)
			continue;
		size_t members = 0;
		for (size_t j = i; j < nk && strcmp(keys[j], keys[i]) == 0; j++)
			members++;
		struct attempt a = {0};
		p->domain = keys[i];
		run_attempt(p, &a);
		if (a.placed) {
			if (!best.placed || a.total > best.total + EPS) {
				attempt_free(&best);
				best = a;
			} else
				attempt_free(&a);
			continue;
		}
		if (a.n_reps == 0)
			for (size_t r = 0; r < a.n_reasons; r++)
				for (size_t c = 0; c < a.reasons[r].count; c++)
					add_reason(&fail, a.reasons[r].code, a.reasons[r].text);
		else {
			char text[160];
			snprintf(text, sizeof text, "its %s has room for only %zu of %zu replicas", what, a.n_reps,
				 total);
			for (size_t c = 0; c < members; c++)
				add_reason(&fail, "network", text);
		}
		attempt_free(&a);
	}
	p->domain = NULL;
	free(keys);
	if (best.placed) {
		reasons_free(fail.reasons, fail.n_reasons);
		*t = best;
		return;
	}
	char text[64];
	snprintf(text, sizeof text, "no %s recorded", what);
	for (size_t c = 0; c < nokey; c++)
		add_reason(&fail, "network", text);
	qsort(fail.reasons, fail.n_reasons, sizeof *fail.reasons, reason_cmp);
	*t = fail;
}

static int node_cmp_ctx(const void *a, const void *b, void *arg)
{
	const struct xp_cluster *c = arg;
	const struct xp_node *x = c->nodes[*(const size_t *)a], *y = c->nodes[*(const size_t *)b];
	int r = strcmp(x->name ? x->name : "", y->name ? y->name : "");
	if (r)
		return r;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static int key_cmp(const struct xp_device *a, const struct xp_device *b)
{
	int r = strcmp(a->vendor ? a->vendor : "", b->vendor ? b->vendor : "");
	if (!r)
		r = strcmp(a->model ? a->model : "", b->model ? b->model : "");
	if (!r)
		r = strcmp(a->driver ? a->driver : "", b->driver ? b->driver : "");
	return r;
}

struct xp_place_result *xp_place(const struct xp_cluster *c, const struct xp_job *job,
				 const struct xp_manifest *const *manifests, size_t n,
				 const struct xp_place_opts *opts, struct xp_err *err)
{
	if (!job->n_groups)
		return xp_errf(err, "job has no task groups"), NULL;
	bool homog = false;
	int net = XP_NET_ANY;
	for (size_t i = 0; i < job->n_groups; i++) {
		const struct xp_task_group *g = &job->groups[i];
		/* The constraint holds the whole job; a switch lies within one rack, so it is the stricter. */
		if (g->network == XP_NET_SWITCH || (g->network == XP_NET_RACK && net == XP_NET_ANY))
			net = g->network;
		if (g->validated_layer >= 0)
			return xp_errf(err, "--validated: not supported by the placement engine yet"), NULL;
		if (!g->devices && !g->slice && g->share_pct <= 0)
			return xp_errf(err, "group %zu asks for no devices", i), NULL;
		if (g->devices > XP_MAX_DEVICES)
			return xp_errf(err, "group %zu asks for more than %d devices", i, XP_MAX_DEVICES), NULL;
		homog = homog || g->homogeneous;
	}
	int strategy = opts && opts->strategy >= 0 && opts->strategy < XP_STRAT_COUNT ? opts->strategy : XP_STRAT_PACK;
	struct mcache cache = {.n = 0};
	struct pctx p = {&cache, c, job, manifests, manifests ? n : 0, strategy, NULL, NULL, NULL, net, NULL};
	p.order = xp_calloc(c->n_nodes ? c->n_nodes : 1, sizeof *p.order);
	p.delta = xp_calloc(c->n_nodes ? c->n_nodes : 1, sizeof *p.delta);
	for (size_t i = 0; i < c->n_nodes; i++)
		p.order[i] = i;
	qsort_r(p.order, c->n_nodes, sizeof *p.order, node_cmp_ctx, (void *)c);

	/* Homogeneous: one attempt per kind of device in the cluster (sorted), best total wins;
	 * a greedy first replica could otherwise lock the job onto a kind too scarce for the rest. */
	const struct xp_device **keys = NULL;
	size_t nk = 0;
	if (homog)
		for (size_t oi = 0; oi < c->n_nodes; oi++) {
			const struct xp_node *nd = c->nodes[p.order[oi]];
			for (size_t d = 0; d < nd->n_devices; d++) {
				bool seen = false;
				for (size_t k = 0; k < nk && !seen; k++)
					seen = same_kind(keys[k], &nd->devices[d]);
				if (!seen) {
					keys = xp_realloc(keys, (nk + 1) * sizeof *keys);
					keys[nk++] = &nd->devices[d];
				}
			}
		}
	for (size_t i = 1; i < nk; i++)
		for (size_t j = i; j > 0 && key_cmp(keys[j - 1], keys[j]) > 0; j--) {
			const struct xp_device *t = keys[j];
			keys[j] = keys[j - 1];
			keys[j - 1] = t;
		}
	struct attempt best = {0};
	const struct xp_device *best_key = NULL;
	bool have = false;
	for (size_t k = 0; k < (nk ? nk : 1); k++) {
		struct attempt t = {0};
		p.key = nk ? keys[k] : NULL;
		run_network(&p, &t);
		bool better = !have || (t.placed && (!best.placed || t.total > best.total + EPS)) ||
			      (!t.placed && !best.placed && t.n_reps > best.n_reps);
		if (better) {
			attempt_free(&best);
			best = t;
			best_key = p.key;
			have = true;
		} else
			attempt_free(&t);
	}
	struct xp_place_result *r = xp_calloc(1, sizeof *r);
	r->placed = best.placed;
	r->strategy = strategy;
	r->n_nodes = c->n_nodes;
	if (best.placed) {
		r->replicas = best.reps;
		r->n_replicas = best.n_reps;
		reasons_free(best.reasons, best.n_reasons);
		size_t distinct = 0;
		for (size_t i = 0; i < r->n_replicas; i++) {
			bool seen = false;
			for (size_t j = 0; j < i && !seen; j++)
				seen = strcmp(r->replicas[i].node, r->replicas[j].node) == 0;
			distinct += !seen;
		}
		r->summary = xp_asprintf("placed %zu replica%s on %zu node%s (%s)", r->n_replicas,
					 r->n_replicas == 1 ? "" : "s", distinct, distinct == 1 ? "" : "s",
					 xp_strategy_name(strategy));
	} else {
		/* Gang: nothing of a partial attempt is kept. */
		for (size_t i = 0; i < best.n_reps; i++)
			replica_free(&best.reps[i]);
		free(best.reps);
		r->reasons = best.reasons;
		r->n_reasons = best.n_reasons;
		size_t len = 64;
		for (size_t i = 0; i < r->n_reasons; i++)
			len += strlen(r->reasons[i].text) + 32;
		r->summary = xp_malloc(len);
		int w = snprintf(r->summary, len, "0/%zu nodes fit%s", c->n_nodes, r->n_reasons ? ":" : "");
		for (size_t i = 0; i < r->n_reasons; i++)
			w += snprintf(r->summary + w, len - (size_t)w, "%s %zu %s", i ? "," : "", r->reasons[i].count,
				      r->reasons[i].text);
	}
	if (opts && opts->explain_node) {
		for (size_t i = 0; i < c->n_nodes && !r->explained; i++)
			if (c->nodes[i]->name && strcmp(c->nodes[i]->name, opts->explain_node) == 0) {
				struct rec rc = {NULL, 0};
				struct answer a;
				scratch_reset(&p);
				p.key = best_key;
				eval(&p, i, &job->groups[0], &a, &rc);
				r->checks = rc.v;
				r->n_checks = rc.n;
				r->explained = true;
			}
	}
	scratch_reset(&p);
	free(p.delta);
	free(p.order);
	free(keys);
	return r;
}

void xp_place_result_free(struct xp_place_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_replicas; i++)
		replica_free(&r->replicas[i]);
	free(r->replicas);
	reasons_free(r->reasons, r->n_reasons);
	for (size_t i = 0; i < r->n_checks; i++)
		free(r->checks[i].detail);
	free(r->checks);
	free(r->summary);
	free(r);
}
