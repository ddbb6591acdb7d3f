/* place_eval.c: judging one node for one replica of a job: the checks in order, the devices
 * the group rules allow, and the score (see place.h for the strategies and weights). */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "place_int.h"
#include "validate.h"

const char *const xpl_stage_code[] = {"node-state", "label", "cpus", "host-memory", "model",
					 "homogeneous", "validated", "health", "memory", "ecu", "free",
					 "affinity", "ok"};

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

static void answer_reset(struct answer *a)
{
	/* Not a memset: dev is 4 KiB and only n of it is read. */
	a->stage = 0;
	a->text[0] = 0;
	a->n = 0;
	a->take = 0;
	a->score = 0;
	memset(a->parts, 0, sizeof a->parts);
}

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

const struct xpi_dinfo *xpl_dinfo(const struct pctx *p, size_t ni, size_t di)
{
	return &p->ix->di[p->ix->off[ni] + di];
}


static bool glob_or_null(const char *g, const char *s) { return !g || (s && xp_glob_match(g, s)); }

static bool model_ok(const struct xp_task_group *g, const struct xp_device *d, const struct xpi_dinfo *di)
{
	if (di->md)
		return xp_job_model_matches(g, di->m, di->md);
	/* No manifest: the device's own strings are all there is. */
	return glob_or_null(g->vendor, d->vendor) && glob_or_null(g->model, d->model);
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


/* Share of device di of node ni in use now (what the cluster shows, commits, this dry-run). */
static double used_now(const struct pctx *p, size_t ni, size_t di)
{
	return xpi_use(p->ix->used[p->ix->off[ni] + di]);
}

static int rank_of(const struct xp_node *n, int a, int b)
{
	int r = xp_link_rank(*xp_node_link(n, (size_t)a, (size_t)b));
	return r > 7 ? 7 : r;
}

static int int_cmp(const void *a, const void *b)
{
	return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* The want devices of cand (ascending) closest to each other: from each start, add the device
 * with the lowest sum of link ranks to those taken (ties: the lower index), and keep the start
 * whose set sums lowest (ties: the first). Without links, or with a great many candidates,
 * the first want. out comes back ascending. */
#define CLOSEST_MAX 64
static void closest(const struct xp_node *n, const int *cand, size_t nc, size_t want, int *out)
{
	if (want < 2 || nc <= want || !n->links || nc > CLOSEST_MAX) {
		for (size_t i = 0; i < want; i++)
			out[i] = cand[i];
		return;
	}
	int best = -1, set[CLOSEST_MAX];
	for (size_t s = 0; s < nc; s++) {
		bool taken[CLOSEST_MAX] = {false};
		set[0] = cand[s];
		taken[s] = true;
		int sum = 0;
		for (size_t k = 1; k < want; k++) {
			int pick = -1, pick_add = 0;
			for (size_t j = 0; j < nc; j++) {
				if (taken[j])
					continue;
				int add = 0;
				for (size_t t = 0; t < k; t++)
					add += rank_of(n, set[t], cand[j]);
				if (pick < 0 || add < pick_add) {
					pick = (int)j;
					pick_add = add;
				}
			}
			taken[pick] = true;
			set[k] = cand[pick];
			sum += pick_add;
		}
		if (best < 0 || sum < best) {
			best = sum;
			memcpy(out, set, want * sizeof *out);
		}
	}
	qsort(out, want, sizeof *out, int_cmp);
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
				first = first && !xpi_streq(n->devices[cand[j]].affinity_group, g);
			if (!first || !g)
				continue;
			size_t total = 0, fr = 0;
			for (size_t k = 0; k < n->n_devices; k++)
				total += xpi_streq(n->devices[k].affinity_group, g);
			for (size_t k = 0; k < nc; k++)
				fr += xpi_streq(n->devices[cand[k]].affinity_group, g);
			if (fr != total || fr != (size_t)ring)
				continue;
			for (size_t k = 0; k < nc; k++)
				if (xpi_streq(n->devices[cand[k]].affinity_group, g))
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
				fr += g ? xpi_streq(n->devices[cand[k]].affinity_group, g) : k == i;
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
			if (xpi_streq(n->devices[cand[k]].affinity_group, best))
				out[got++] = cand[k];
		return true;
	}
	closest(n, cand, nc, want, out);
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

void xpl_eval(const struct pctx *p, size_t ni, const struct xp_task_group *g, struct answer *a, struct rec *rc)
{
	const struct xp_node *n = p->c->nodes[ni];
	answer_reset(a);
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
	const uint32_t *kind = &p->ix->kind[p->ix->off[ni]];
	int best_stage = ST_MODEL;
	struct answer tmp;
	bool any = false;
	size_t best_counts[ST_OK] = {0};
	const struct xp_device *best_rep = NULL;
	for (size_t k = 0; k < n->n_devices; k++) {
		const struct xp_device *rep = &n->devices[k];
		bool first = true;
		for (size_t j = 0; j < k && first; j++)
			first = kind[j] != kind[k];
		if (!first)
			continue;
		size_t counts[ST_OK] = {0};
		int cand[XP_MAX_DEVICES];
		size_t nc = 0;
		double take = 1;
		const struct xpi_dinfo repinfo = *xpl_dinfo(p, ni, k);
		const struct xp_mtemplate *t = g->slice ? xp_manifest_template(repinfo.md, g->slice) : NULL;
		/* Devices of one kind share vendor, model and manifest entry: one match for all. */
		bool kind_ok = model_ok(g, rep, &repinfo) && !(g->slice && !t);
		if (g->slice && t)
			take = xpi_slice_share(t);
		else if (g->share_pct > 0)
			take = g->share_pct / 100.0;
		for (size_t i = 0; i < n->n_devices; i++) {
			const struct xp_device *d = &n->devices[i];
			if (kind[i] != kind[k])
				continue;
			if (!kind_ok)
				continue;
			counts[ST_MODEL]++;
			if (p->key && g->homogeneous && kind[i] != p->key_kind)
				continue;
			counts[ST_HOMOG]++;
			if (g->validated_layer >= 0 && xpi_validated(p->ix, d, g->validated_case) < g->validated_layer)
				continue;
			counts[ST_VALID]++;
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
			double u = used_now(p, ni, i);
			if (sliced ? u + take > 1 + EPS : u > EPS)
				continue;
			/* Hard slices and soft shares do not mix on one device. */
			if (sliced && (xpi_mode(p->ix, ni, i) & (g->share_pct > 0 ? XPI_HARD : XPI_SOFT)))
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
			answer_reset(&tmp);
			bool ok = false;
			if (sliced) {
				/* pack: the busiest device that fits; spread: the idlest. */
				int pick = -1;
				double pu = 0;
				for (size_t i = 0; i < nc; i++) {
					double u = used_now(p, ni, (size_t)cand[i]);
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
					double u = used_now(p, ni, i);
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
					/* A huge ECU over a tiny limit overflows: efficiency is then at its
					 * top, never NaN (a NaN score would order nothing). */
					eff = isfinite(e) ? e / (1 + e) : 1;
				} else
					eff = 0.5;
				double raw[XP_CRIT_COUNT] = {util, 1 - util, topology_of(n, tmp.dev, tmp.n), powered, eff};
				tmp.score = 0;
				for (int c = 0; c < XP_CRIT_COUNT; c++) {
					tmp.parts[c] = 100 * weights[p->strategy][c] * raw[c];
					tmp.score += tmp.parts[c];
				}
				/* To a millionth of a point, so that equal choices tie exactly and the
				 * name order decides, whichever order the nodes are judged in. */
				tmp.score = round(tmp.score * 1e6) / 1e6;
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
	/* A fit needs no text (and most judgements are fits): only the explain list reads on. */
	if (any && a->stage == ST_OK && !rc)
		return;
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
	else if (a->stage == ST_VALID)
		snprintf(a->text, sizeof a->text, "%s driver %s not validated (%s) for %s%s", mname,
			 best_rep && best_rep->driver ? best_rep->driver : "?", xp_layer_name(g->validated_layer),
			 g->validated_case ? "case " : "any case", g->validated_case ? g->validated_case : "");
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
						    [ST_VALID] = "validated", [ST_HEALTH] = "health", [ST_MEMORY] = "memory",
						    [ST_ECU] = "ecu", [ST_FREE] = "free"};
		for (int s = ST_MODEL; s <= ST_FREE; s++) {
			if (s == ST_VALID && g->validated_layer < 0)
				continue;
			rec_add(rc, names[s], best_counts[s] >= want, "have %zu, need %zu %s", best_counts[s], want, what);
			if (best_counts[s] < want)
				return;
		}
		rec_add(rc, "affinity", a->stage == ST_OK, "%s", a->stage == ST_OK ? "devices fit the group rules" : a->text);
	}
}
