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
#include "place_mig.h"
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

uint32_t xp_place_index_kind(const struct xp_place_index *ix, size_t node_ix, size_t pos)
{
	return ix->kind[ix->off[node_ix] + pos];
}

size_t xp_place_index_n_kinds(const struct xp_place_index *ix)
{
	return ix->n_kinds;
}

bool xp_place_index_kind_matches(const struct xp_place_index *ix, uint32_t k, const struct xp_task_group *g)
{
	if (k >= ix->n_kinds)
		return false;
	size_t slot = ix->kind_slot[k], n = xpi_slot_node(ix, slot);
	return model_ok(g, &ix->c->nodes[n]->devices[slot - ix->off[n]], &ix->di[slot]);
}

/* "HCCS" from "hccs:0": the group's kind as operators name it (a link in capitals, a "card"
 * group, which is a unit and no link, as it is). */
static void group_kind(const char *g, char *out, size_t len)
{
	size_t i = 0;
	bool card = g && strncmp(g, "card:", 5) == 0;
	for (; g && g[i] && g[i] != ':' && i + 1 < len; i++)
		out[i] = card ? g[i] : (char)toupper((unsigned char)g[i]);
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

/* The vendor's ring rule (a manifest's ring_priority for this request size): the free counts
 * prio[0..np) are tried in order, and for each the rings in device order; the first ring whose
 * free count (devices in cand: a failed device counts as used) equals it gives its lowest
 * want devices. No best fit: what the vendor's scheduler takes. */
static bool vendor_ring(const struct xp_node *n, const int *cand, size_t nc, size_t want, const unsigned char *prio,
			size_t np, const char *model, const char *kind, int *out, char *text, size_t tlen)
{
	for (size_t pi = 0; pi < np; pi++)
		for (size_t i = 0; i < nc; i++) {
			const char *g = n->devices[cand[i]].affinity_group;
			bool first = true;
			for (size_t j = 0; j < i && first; j++)
				first = !xpi_streq(n->devices[cand[j]].affinity_group, g);
			if (!first || !g)
				continue;
			size_t fr = 0;
			for (size_t k = 0; k < nc; k++)
				fr += xpi_streq(n->devices[cand[k]].affinity_group, g);
			if (fr != prio[pi] || fr < want)
				continue;
			size_t got = 0;
			for (size_t k = 0; k < nc && got < want; k++)
				if (xpi_streq(n->devices[cand[k]].affinity_group, g))
					out[got++] = cand[k];
			return true;
		}
	size_t o = (size_t)snprintf(text, tlen, "no %s group with", kind);
	for (size_t pi = 0; pi < np && o < tlen; pi++)
		o += (size_t)snprintf(text + o, tlen - o, "%s%u", pi == 0 ? " " : pi + 1 == np ? " or " : ", ",
				      prio[pi]);
	if (o < tlen)
		snprintf(text + o, tlen - o, " free %s (the vendor's rule for %zu)", model, want);
	return false;
}

/* The groups of the node's devices of model, each by its first device (ascending index), into
 * first[0..); returns how many. */
static size_t groups_of(const struct xp_node *n, const char *model, int *first)
{
	size_t ng = 0;
	for (size_t i = 0; i < n->n_devices; i++) {
		const char *g = n->devices[i].affinity_group;
		if (!g || !xpi_streq(n->devices[i].model, model))
			continue;
		bool seen = false;
		for (size_t j = 0; j < ng && !seen; j++)
			seen = xpi_streq(n->devices[first[j]].affinity_group, g);
		if (!seen)
			first[ng++] = (int)i;
	}
	return ng;
}

/* The device of model in group g at position pos of a ring of ring (its index modulo ring, so
 * that a device the tool does not list leaves its position empty); -1 when none is. */
static int group_at(const struct xp_node *n, const char *model, const char *g, size_t ring, size_t pos)
{
	size_t rank = 0;
	for (size_t i = 0; i < n->n_devices; i++) {
		if (!xpi_streq(n->devices[i].model, model) || !xpi_streq(n->devices[i].affinity_group, g))
			continue;
		int idx = n->devices[i].index;
		if (idx >= 0 ? (size_t)idx % ring == pos : rank == pos)
			return (int)i;
		rank++;
	}
	return -1;
}

/* An equal share of every group (wide = mirror or pair) of the node's devices of model, free
 * ones marked in isfree (by device index). mirror: the positions p, from 0 up, at which the
 * device at p of every group is free; pair: the groups' free devices paired by order (the
 * i-th free of each). Returns how many such rows there are, the group count in *ng; out (when
 * not NULL) gets the devices of the first per rows, ascending. */
static size_t mirror_fit(const struct xp_node *n, const char *model, const bool *isfree, size_t ring, int wide,
			 size_t per, size_t *ng, int *out)
{
	int first[XP_MAX_DEVICES];
	*ng = groups_of(n, model, first);
	size_t found = 0, got = 0;
	if (wide == XP_WIDE_PAIR) {
		/* Rows: the fewest free devices any group has. */
		size_t rows = SIZE_MAX;
		for (size_t gi = 0; gi < *ng; gi++) {
			const char *g = n->devices[first[gi]].affinity_group;
			size_t fr = 0;
			for (size_t i = 0; i < n->n_devices; i++)
				if (xpi_streq(n->devices[i].model, model) && xpi_streq(n->devices[i].affinity_group, g) &&
				    isfree[i] && fr++ < per && out)
					out[got++] = (int)i;
			rows = fr < rows ? fr : rows;
		}
		found = *ng ? rows : 0;
	} else
		for (size_t pos = 0; pos < ring && *ng; pos++) {
			bool all = true;
			for (size_t gi = 0; gi < *ng && all; gi++) {
				int d = group_at(n, model, n->devices[first[gi]].affinity_group, ring, pos);
				all = d >= 0 && isfree[d];
			}
			if (!all)
				continue;
			for (size_t gi = 0; out && found < per && gi < *ng; gi++)
				out[got++] = group_at(n, model, n->devices[first[gi]].affinity_group, ring, pos);
			found++;
		}
	if (out)
		qsort(out, got, sizeof *out, int_cmp);
	return found;
}

/* A request wider than one ring under wide = mirror or pair: an equal share of every group,
 * at the same positions in each (mirror: Volcano's module910bx16 cross-HCCS array for a job of
 * one task, NPU p and p + 8 both usable) or each group's lowest free (pair: the same array for
 * a job of several tasks), the lowest first. */
static bool mirror_pick(const struct xp_node *n, const int *cand, size_t nc, size_t want, int ring, int wide,
			const char *model, const char *kind, int *out, char *text, size_t tlen)
{
	bool *isfree = xp_calloc(n->n_devices ? n->n_devices : 1, sizeof *isfree);
	for (size_t i = 0; i < nc; i++)
		isfree[cand[i]] = true;
	size_t ng = 0, per = 0;
	const char *mod = n->devices[cand[0]].model;
	mirror_fit(n, mod, isfree, (size_t)ring, wide, 0, &ng, NULL);
	per = ng ? want / ng : 0;
	bool ok = ng && want % ng == 0 && per <= (size_t)ring;
	if (ok)
		ok = mirror_fit(n, mod, isfree, (size_t)ring, wide, per, &ng, out) >= per;
	free(isfree);
	if (!ok && wide == XP_WIDE_PAIR)
		snprintf(text, tlen, "fewer than %zu free %s in each of the %zu %s groups (the vendor's rule for %zu "
			 "in a job of several replicas)", per ? per : want, model, ng, kind, want);
	else if (!ok)
		snprintf(text, tlen, "fewer than %zu free %s at the same positions in each of the %zu %s groups (the "
			 "vendor's rule for %zu)", per ? per : want, model, ng, kind, want);
	return ok;
}

/* Picks want devices from cand (indices, ascending) under the group rules; returns false with
 * text set. ring: the affinity rule's ring size (0 none); prio/np: the vendor's ring order for
 * want (np 0: none, best fit by strategy); wide: enum xp_wide, what a request wider than a
 * ring takes. */
static bool shape(const struct xp_node *n, const int *cand, size_t nc, size_t want, int ring, bool same_group,
		  int strategy, const unsigned char *prio, size_t np, int wide, const char *model, int *out,
		  char *text, size_t tlen)
{
	char kind[32];
	group_kind(nc ? n->devices[cand[0]].affinity_group : NULL, kind, sizeof kind);
	if (ring > 0 && want <= (size_t)ring && np)
		return vendor_ring(n, cand, nc, want, prio, np, model, kind, out, text, tlen);
	if (ring > 0 && want > (size_t)ring && (wide == XP_WIDE_MIRROR || wide == XP_WIDE_PAIR) && nc)
		return mirror_pick(n, cand, nc, want, ring, wide, model, kind, out, text, tlen);
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

/* ---- the node stages: what the node itself must offer, before any device is looked at ---- */

/* A node that is down, draining or unreachable takes nothing, whatever its devices show;
 * a degraded one still works and may take work. */
static bool stage_state(const struct xp_node *n, struct answer *a, struct rec *rc)
{
	bool ok = n->state == XP_NODE_UP || n->state == XP_NODE_DEGRADED;
	rec_add(rc, "node-state", ok, "%s", xp_node_state_name(n->state));
	if (!ok) {
		a->stage = ST_STATE;
		snprintf(a->text, sizeof a->text, "node %s", xp_node_state_name(n->state));
	}
	return ok;
}

/* Labels pin a job to the nodes operators marked (governance) or discovery found (facts);
 * the operators' word wins where both name a key. */
static bool stage_labels(const struct xp_node *n, const struct xp_task_group *g, struct answer *a, struct rec *rc)
{
	for (size_t i = 0; i < g->labels.n; i++) {
		const char *v = xp_labels_get(&n->governance, g->labels.keys[i]);
		if (!v)
			v = xp_labels_get(&n->facts, g->labels.keys[i]);
		bool ok = v && strcmp(v, g->labels.values[i]) == 0;
		rec_add(rc, "label", ok, "%s=%s (node has %s)", g->labels.keys[i], g->labels.values[i], v ? v : "none");
		if (!ok) {
			a->stage = ST_LABELS;
			snprintf(a->text, sizeof a->text, "label %s=%s missing", g->labels.keys[i], g->labels.values[i]);
			return false;
		}
	}
	return true;
}

/* CPUs are checked only when the job asks and the node reports them: not knowing is no refusal. */
static bool stage_cpus(const struct xp_node *n, const struct xp_task_group *g, struct answer *a, struct rec *rc)
{
	if (g->cpus <= 0 || n->pus <= 0)
		return true;
	bool ok = n->pus >= g->cpus;
	rec_add(rc, "cpus", ok, "%d of %d", n->pus, g->cpus);
	if (!ok) {
		a->stage = ST_CPUS;
		snprintf(a->text, sizeof a->text, "fewer than %d CPUs", g->cpus);
	}
	return ok;
}

/* Host memory likewise: only when both the job and the node give it. */
static bool stage_host_memory(const struct xp_node *n, const struct xp_task_group *g, struct answer *a,
			      struct rec *rc)
{
	if (g->host_memory_mib <= 0 || n->memory_mib <= 0)
		return true;
	bool ok = n->memory_mib >= g->host_memory_mib;
	rec_add(rc, "host-memory", ok, "%lld of %lld MiB", (long long)n->memory_mib, (long long)g->host_memory_mib);
	if (!ok) {
		a->stage = ST_HOSTMEM;
		snprintf(a->text, sizeof a->text, "less than %lld MiB host memory", (long long)g->host_memory_mib);
	}
	return ok;
}

/* ---- the device stages: each device of one kind, judged in order ---- */

/* A homogeneous job runs every replica on the key's vendor, model and driver: a mixed set
 * would run at the slowest device's pace, or not at all. */
static bool dev_homogeneous(const struct pctx *p, const struct xp_task_group *g, uint32_t kind)
{
	return !(p->key && g->homogeneous && kind != p->key_kind);
}

/* The validation matrix must show the device's environment proven up to the layer asked. */
static bool dev_validated(const struct pctx *p, const struct xp_task_group *g, const struct xp_device *d)
{
	return g->validated_layer < 0 || xpi_validated(p->ix, d, g->validated_case) >= g->validated_layer;
}

/* A failed device is never offered; a warning is (it still runs). */
static bool dev_healthy(const struct xp_device *d)
{
	return d->health != XP_HEALTH_FAIL;
}

/* The memory a replica gets: the slice's own, its share of the device's, or the whole device's. */
static bool dev_memory(const struct xp_task_group *g, const struct xp_mtemplate *t, const struct xp_device *d)
{
	int64_t mem = t ? t->memory_mib : g->share_pct > 0 && d->memory_mib > 0
		? d->memory_mib * g->share_pct / 100 : d->memory_mib;
	return !(g->memory_mib > 0 && mem < g->memory_mib);
}

/* A device whose compute is not known never meets an ECU floor. */
static bool dev_ecu(const struct xp_task_group *g, const struct xp_device *d)
{
	return !(g->min_ecu > 0 && !(XP_HAS(d->ecu) && d->ecu >= g->min_ecu));
}

/* A slice with positions (MIG) goes on a free instance of its profile that exists (an
 * allocation naming it that no job holds: what NVIDIA's device plugin and Slurm offer), or,
 * with --reconfigure, on a new one: a start NVIDIA allows whose span is free. Where the
 * existing instances sit is not known (nvidia-smi and the snapshot name them, not their
 * start), so a new one must fit however they sit. What this placement and commits on a kept
 * index put on the device is known by template (xpi_own_slices, xpi_committed), each on a free
 * instance of its profile while one was left; any other use above what the cluster showed
 * is taken to be slices of this job's templates, in every mix that makes up that share. */
static bool dev_mig(const struct pctx *p, size_t ni, size_t i, const struct xp_mtemplate *t, struct xp_mig_answer *out)
{
	const struct xpi_dinfo *di = &p->ix->di[p->ix->off[ni] + i];
	const struct xp_device *d = &p->c->nodes[ni]->devices[i];
	struct xp_mig_inst inst[XP_MAX_SLOTS + 1];
	size_t n = 0;
	*out = (struct xp_mig_answer){false, false};
	for (size_t a = 0; a < d->n_allocs; a++) {
		if (!d->allocs[a].slice || d->allocs[a].share_pct > 0)
			continue;
		if (n == XP_MAX_SLOTS + 1)
			return false;
		inst[n++] = (struct xp_mig_inst){d->allocs[a].slice, xpi_free_instance(&d->allocs[a], di)};
	}
	/* What commits put there is known by name as the cluster's instances are (an earlier
	 * job's templates need not be this one's); only this dry-run's own is a share. A commit
	 * held a free instance of its profile where one was left, else it made a new one. */
	size_t nc;
	const struct xp_mtemplate *const *ct = xpi_committed(p->ix, p->ix->off[ni] + i, &nc);
	double committed = 0;
	for (size_t a = 0; a < nc; a++) {
		committed += xpi_slice_share(ct[a]);
		size_t j = 0;
		while (j < n && !(inst[j].free && xp_manifest_template(di->md, inst[j].name) == ct[a]))
			j++;
		if (j < n) {
			inst[j].free = false;
			continue;
		}
		if (n == XP_MAX_SLOTS + 1)
			return false;
		inst[n++] = (struct xp_mig_inst){ct[a]->name, false};
	}
	const struct xp_mtemplate *kinds[16];
	size_t nk = 0;
	for (size_t gi = 0; p->job && gi < p->job->n_groups && nk < 16; gi++) {
		const struct xp_mtemplate *k = xp_manifest_template(di->md, p->job->groups[gi].slice);
		bool dup = false;
		for (size_t j = 0; k && j < nk; j++)
			dup |= kinds[j] == k;
		if (k && !dup)
			kinds[nk++] = k;
	}
	/* This dry-run's own by template: each on a free instance of its profile while one is
	 * left, else new and ours to arrange. */
	size_t no;
	const struct xp_mtemplate *const *own = xpi_own_slices(p->ix, p->ix->off[ni] + i, &no);
	for (size_t a = 0; a < no; a++)
		committed += xpi_slice_share(own[a]);
	double planned = p->ix->used[p->ix->off[ni] + i] - p->ix->base[p->ix->off[ni] + i] - committed;
	/* A whole allocation leaves no room, whatever the instances. */
	for (size_t a = 0; a < d->n_allocs; a++)
		if (!d->allocs[a].slice && d->allocs[a].share_pct == 0)
			return true;
	return xp_mig_judge_own(di->md, inst, n, own, no, kinds, nk, planned > 1e-9 ? planned : 0, t, out) == 0;
}

/* A slice without positions (a vNPU template) still has its count per device, which can bind
 * before the compute does: the 310P3's 7 AI CPUs hold 3 vir02 where its 8 AI cores would hold
 * 4. Instances: the cluster's and the commits' by name, and this dry-run's own counted as if
 * all were t (the most there could be). */
static bool dev_count(const struct pctx *p, size_t ni, size_t i, const struct xp_mtemplate *t)
{
	if (t->count <= 0)
		return true;
	const struct xpi_dinfo *di = xpl_dinfo(p, ni, i);
	const struct xp_device *d = &p->c->nodes[ni]->devices[i];
	size_t s = p->ix->off[ni] + i, nc;
	double have = 0, committed = 0;
	for (size_t a = 0; a < d->n_allocs; a++)
		have += d->allocs[a].slice && d->allocs[a].share_pct <= 0 &&
			xp_manifest_template(di->md, d->allocs[a].slice) == t;
	const struct xp_mtemplate *const *ct = xpi_committed(p->ix, s, &nc);
	for (size_t k = 0; k < nc; k++) {
		have += ct[k] == t;
		committed += xpi_slice_share(ct[k]);
	}
	ct = xpi_own_slices(p->ix, s, &nc);
	for (size_t k = 0; k < nc; k++) {
		have += ct[k] == t;
		committed += xpi_slice_share(ct[k]);
	}
	double planned = p->ix->used[s] - p->ix->base[s] - committed;
	if (planned > 1e-9)
		have += floor(planned / xpi_slice_share(t) + 1e-6);
	return have + 1 <= t->count;
}

int xpl_mig_instance(const struct pctx *p, size_t ni, size_t di, const struct xp_task_group *g)
{
	const struct xp_mmodel *md = p->ix->di[p->ix->off[ni] + di].md;
	const struct xp_mtemplate *t = g->slice ? xp_manifest_template(md, g->slice) : NULL;
	struct xp_mig_answer m;
	if (!xp_mig_geometric(md, t) || !dev_mig(p, ni, di, t, &m) || !m.fits)
		return 0;
	return m.existing ? 1 : 2;
}

/* Why devices of a kind were refused at the free stage, for the refusal's words. */
struct free_why {
	size_t makeable;    /* MIG: only for want of a free instance (a new one fits) */
	size_t mig_off;     /* of those, GPUs not in MIG mode (a new instance enables it first) */
	size_t partitioned; /* idle but partitioned (MIG mode on, or MIG instances): not whole */
};

/* A whole-device replica needs an idle device not in MIG mode and with no MIG instance on it
 * (a free one is not in use, but the GPU is partitioned: NVIDIA's device plugin offers a GPU
 * in MIG mode only as its instances); a share the same; a slice needs room for its part. w:
 * counts why a device was refused (makeable: a MIG slice refused only because no free
 * instance exists and a new one could be made, which --reconfigure would place). */
static bool dev_free(const struct pctx *p, size_t ni, size_t i, const struct xp_task_group *g, double take,
		     bool sliced, const struct xp_mtemplate *t, struct free_why *w)
{
	double u = used_now(p, ni, i);
	const struct xp_mmodel *md = p->ix->di[p->ix->off[ni] + i].md;
	const struct xp_device *d = &p->c->nodes[ni]->devices[i];
	bool mig_slice = sliced && t && xp_mig_geometric(md, t);
	/* Whole or a share: a GPU in MIG mode, or holding (free) MIG instances, is partitioned. */
	bool partitioned = !mig_slice && (!sliced || g->share_pct > 0) && u <= EPS &&
			   (d->mig_mode == 1 || (!sliced && (xpi_mode(p->ix, ni, i) & XPI_HARD)) ||
			    (g->share_pct > 0 && (xpi_mode(p->ix, ni, i) & XPI_HARD)));
	if (partitioned) {
		w->partitioned++;
		return false;
	}
	if (sliced && u + take > 1 + EPS)
		return false; /* no room, existing or new: instances' shares add up to the device */
	if (mig_slice) {
		/* The geometry is the room: free instances hold slots but no use. */
		struct xp_mig_answer m;
		if (!dev_mig(p, ni, i, t, &m) || !m.fits)
			return false;
		if (!m.existing && !p->reconfigure) {
			w->makeable++;
			w->mig_off += d->mig_mode == 0;
			return false;
		}
	} else if (!sliced && (u > EPS || (xpi_mode(p->ix, ni, i) & XPI_HARD)))
		return false;
	if (sliced && t && !xp_mig_geometric(xpl_dinfo(p, ni, i)->md, t) && !dev_count(p, ni, i, t))
		return false;
	/* Hard slices and soft shares do not mix on one device. */
	return !(sliced && (xpi_mode(p->ix, ni, i) & (g->share_pct > 0 ? XPI_HARD : XPI_SOFT)));
}

/* Counts the devices of kind[k] that pass each device stage (counts[s]: how many passed stage
 * s), and lists those that pass them all in cand. The model stage is the kind's (one match for
 * all its devices), so the caller asks it first. */
static void count_kind(const struct pctx *p, size_t ni, const struct xp_task_group *g, const uint32_t *kind, size_t k,
		       const struct xp_mtemplate *t, double take, bool sliced, size_t counts[ST_OK], int *cand,
		       size_t *nc, struct free_why *w)
{
	const struct xp_node *n = p->c->nodes[ni];
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct xp_device *d = &n->devices[i];
		if (kind[i] != kind[k])
			continue;
		counts[ST_MODEL]++;
		if (!dev_homogeneous(p, g, kind[i]))
			continue;
		counts[ST_HOMOG]++;
		if (!dev_validated(p, g, d))
			continue;
		counts[ST_VALID]++;
		if (!dev_healthy(d))
			continue;
		counts[ST_HEALTH]++;
		if (!dev_memory(g, t, d))
			continue;
		counts[ST_MEMORY]++;
		if (!dev_ecu(g, d))
			continue;
		counts[ST_ECU]++;
		if (!dev_free(p, ni, i, g, take, sliced, t, w))
			continue;
		counts[ST_FREE]++;
		cand[(*nc)++] = (int)i;
	}
}

/* The first device stage with fewer than want devices through it; past ST_FREE when none. */
static int first_short(const size_t counts[ST_OK], size_t want)
{
	int stage = ST_MODEL;
	while (stage <= ST_FREE && counts[stage] >= want)
		stage = stage == ST_MODEL ? ST_HOMOG : stage + 1;
	/* The stages between ST_MODEL and ST_FREE are consecutive. */
	return stage;
}

/* ---- the shape stage: which of the candidates one replica takes ---- */

/* The ring size an affinity rule of the device's manifest entry asks (0 none): a ring of
 * devices only works whole. */
static int ring_of(const struct xpi_dinfo *di)
{
	if (!di->md)
		return 0;
	int aff = di->md->affinity ? di->md->affinity : di->m->affinity;
	int rs = di->md->ring_size ? di->md->ring_size : di->m->ring_size;
	return aff == XP_AFF_RING || aff == XP_AFF_CARD ? rs : 0;
}

/* A slice or share takes one device: pack the busiest that fits (keeps idle ones whole),
 * spread the idlest. Strict NUMA needs a device whose domain is known. */
static bool pick_shared(const struct pctx *p, size_t ni, const struct xp_task_group *g, const int *cand, size_t nc,
			const char *mname, struct answer *tmp)
{
	const struct xp_node *n = p->c->nodes[ni];
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
	if (pick < 0) {
		snprintf(tmp->text, sizeof tmp->text, "no free %s in a known NUMA domain", mname);
		return false;
	}
	tmp->dev[0] = pick;
	return true;
}

/* Whole devices in one NUMA domain: each domain tried in id order, since memory across
 * domains is slower; prefer falls back to anywhere, strict does not. */
static bool shape_numa(const struct pctx *p, const struct xp_node *n, const struct xp_task_group *g, const int *cand,
		       size_t nc, size_t want, int ring, const unsigned char *prio, size_t np, int wide, const char *mname,
		       struct answer *tmp)
{
	bool ok = false;
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
			ok = shape(n, sub, ns, want, ring, g->same_group, p->strategy, prio, np, wide, mname, tmp->dev,
				   tmp->text, sizeof tmp->text);
	}
	if (!ok && g->numa == XP_NUMA_PREFER)
		ok = shape(n, cand, nc, want, ring, g->same_group, p->strategy, prio, np, wide, mname, tmp->dev,
			   tmp->text, sizeof tmp->text);
	else if (!ok && (!tmp->text[0] || strstr(tmp->text, "fewer than") == tmp->text))
		snprintf(tmp->text, sizeof tmp->text, "fewer than %zu free %s in one NUMA domain", want, mname);
	return ok;
}

/* Picks the devices of one replica from cand into tmp->dev under the group, NUMA and slice
 * rules; false with tmp->text saying why not. */
static bool stage_shape(const struct pctx *p, size_t ni, const struct xp_task_group *g, const struct xp_device *rep,
			const struct xpi_dinfo *repinfo, const int *cand, size_t nc, size_t want, bool sliced,
			struct answer *tmp)
{
	const struct xp_node *n = p->c->nodes[ni];
	int ring = ring_of(repinfo);
	const char *mname = rep->model ? rep->model : "device";
	if (sliced)
		return pick_shared(p, ni, g, cand, nc, mname, tmp);
	/* The vendor's rule: request sizes it allows, and which ring it takes for each; some
	 * differ in a job of several tasks. */
	const struct xp_mmodel *md = repinfo->md;
	bool multi = xpl_multi_task(p->job);
	uint64_t mask = xp_manifest_task_counts(md, multi);
	if (mask && !(want >= 1 && want <= 64 && (mask >> (want - 1) & 1))) {
		char counts[128];
		xp_manifest_mask_text(mask, counts, sizeof counts);
		/* Where no allowed count is wider than a card, the limit is the card's. */
		int aff = md->affinity ? md->affinity : repinfo->m->affinity, top = 64;
		while (top > 1 && !(mask >> (top - 1) & 1))
			top--;
		snprintf(tmp->text, sizeof tmp->text, "the vendor's rule for %s allows %s per replica on one %s%s, not %zu",
			 mname, counts, aff == XP_AFF_CARD && top <= ring ? "card" : "node",
			 multi && md->counts_multi ? " in a job of several replicas" : "", want);
		return false;
	}
	const unsigned char *prio = NULL;
	size_t np = 0;
	if (md && want <= XP_MRING_MAX && md->n_ring_prio[want]) {
		prio = md->ring_prio[want];
		np = md->n_ring_prio[want];
	}
	int wide = xp_manifest_wide(md, multi);
	if (g->numa == XP_NUMA_NONE)
		return shape(n, cand, nc, want, ring, g->same_group, p->strategy, prio, np, wide, mname, tmp->dev,
			     tmp->text, sizeof tmp->text);
	return shape_numa(p, n, g, cand, nc, want, ring, prio, np, wide, mname, tmp);
}

/* ---- the score of a fit ---- */

/* ECU per watt as 0..1 (0.5 when not known): what the green strategy prefers. */
static double efficiency_of(const struct xp_device *d)
{
	if (!(XP_HAS(d->ecu) && XP_HAS(d->power_limit_w) && d->power_limit_w > 0))
		return 0.5;
	double e = d->ecu * 100.0 / d->power_limit_w; /* ECU per 100 W */
	/* A huge ECU over a tiny limit overflows: efficiency is then at its top, never NaN (a NaN
	 * score would order nothing). */
	return isfinite(e) ? e / (1 + e) : 1;
}

/* Scores how the node looks after the replica in tmp lands: each criterion weighed by the
 * strategy, so that the search can compare nodes with one number. */
static void score_fit(const struct pctx *p, size_t ni, struct answer *tmp)
{
	const struct xp_node *n = p->c->nodes[ni];
	double used = 0;
	bool powered = false;
	for (size_t i = 0; i < n->n_devices; i++) {
		double u = used_now(p, ni, i);
		powered = powered || u > EPS;
		for (size_t j = 0; j < tmp->n; j++)
			if (tmp->dev[j] == (int)i)
				u += tmp->take;
		used += u > 1 ? 1 : u;
	}
	double util = n->n_devices ? used / (double)n->n_devices : 0;
	double raw[XP_CRIT_COUNT] = {util, 1 - util, topology_of(n, tmp->dev, tmp->n), powered,
				     efficiency_of(&n->devices[tmp->dev[0]])};
	tmp->score = 0;
	for (int c = 0; c < XP_CRIT_COUNT; c++) {
		tmp->parts[c] = 100 * weights[p->strategy][c] * raw[c];
		tmp->score += tmp->parts[c];
	}
	/* To a millionth of a point, so that equal choices tie exactly and the name order
	 * decides, whichever order the nodes are judged in. */
	tmp->score = round(tmp->score * 1e6) / 1e6;
}

/* ---- the vendor's node score ---- */

/* The vendor's ring order for want whole devices of the model di describes (NULL: none), with
 * its length in *np and the ring size in *ring. */
static const unsigned char *vendor_prio(const struct xpi_dinfo *di, size_t want, size_t *np, int *ring)
{
	*ring = ring_of(di);
	bool any = false;
	for (size_t k = 1; di->md && k <= XP_MRING_MAX; k++)
		any = any || di->md->n_ring_prio[k];
	if (*ring <= 0 || !any)
		return NULL;
	*np = want <= XP_MRING_MAX ? di->md->n_ring_prio[want] : 0;
	return want <= XP_MRING_MAX ? di->md->ring_prio[want] : NULL;
}

bool xpl_multi_task(const struct xp_job *j)
{
	int tasks = 0;
	for (size_t i = 0; j && i < j->n_groups; i++)
		tasks += j->groups[i].replicas;
	return tasks > 1;
}

bool xpl_one_product(const struct pctx *p, const struct xp_task_group *g)
{
	const char *product = NULL;
	for (size_t ni = 0; ni < p->ix->n_nodes; ni++) {
		const struct xp_node *n = p->c->nodes[ni];
		for (size_t i = 0; i < n->n_devices; i++) {
			const struct xpi_dinfo *di = xpl_dinfo(p, ni, i);
			if (!model_ok(g, &n->devices[i], di))
				continue;
			const char *k = !di->md ? "" : di->md->layout[0] ? di->md->layout : di->md->name;
			if (!product)
				product = k;
			else if (strcmp(product, k))
				return false;
		}
	}
	return true;
}

bool xpl_vendor_group(const struct pctx *p, const struct xp_task_group *g)
{
	bool one = !p->one_product || !p->job || g < p->job->groups || g >= p->job->groups + p->job->n_groups ||
		   p->one_product[g - p->job->groups];
	return p->strategy == XP_STRAT_PACK && !g->slice && g->share_pct <= 0 && (g->vendor || g->model) && one;
}

bool xpl_vendor_scored(const struct pctx *p, size_t ni, const struct xp_task_group *g)
{
	if (!xpl_vendor_group(p, g))
		return false;
	const struct xp_node *n = p->c->nodes[ni];
	for (size_t i = 0; i < n->n_devices; i++) {
		size_t np = 0;
		int ring;
		if (vendor_prio(xpl_dinfo(p, ni, i), 1, &np, &ring))
			return true;
	}
	return false;
}

/* The vendor's node score as the manifest's node_score weighs it: healthy devices of the kind,
 * the rank of the chosen ring in the size's priority list (under wide = mirror: how many
 * mirrored positions beyond those taken, per group, the place of their count in the list
 * want, want + groups, ...), and the free devices of the kind. Scaled to 0..100 over the
 * range the terms can take; the healthy and rank parts are the breakdown's topology, the
 * free part its utilization. */
static bool linear_score(const struct pctx *p, size_t ni, const struct xp_mmodel *md, uint32_t k, size_t want,
			 int ring, size_t nd, size_t healthy, size_t nfree, size_t rank, struct answer *tmp)
{
	const struct xp_node *n = p->c->nodes[ni];
	const uint32_t *kind = &p->ix->kind[p->ix->off[ni]];
	int wide = xp_manifest_wide(md, xpl_multi_task(p->job));
	if (ring > 0 && want > (size_t)ring && (wide == XP_WIDE_MIRROR || wide == XP_WIDE_PAIR)) {
		bool *isfree = xp_calloc(n->n_devices ? n->n_devices : 1, sizeof *isfree);
		for (size_t i = 0; i < n->n_devices; i++)
			isfree[i] = kind[i] == k && n->devices[i].health != XP_HEALTH_FAIL && used_now(p, ni, i) <= EPS;
		size_t ng = 0, aligned =
			mirror_fit(n, n->devices[tmp->dev[0]].model, isfree, (size_t)ring, wide, 0, &ng, NULL);
		free(isfree);
		rank = ng && aligned * ng >= want ? (aligned * ng - want) / ng : 0;
	}
	double x[XP_SCORE_TERMS] = {(double)healthy, (double)rank, (double)nfree};
	double top[XP_SCORE_TERMS] = {(double)nd, XP_MRING_MAX, (double)nd};
	double lo = 0, hi = 0, part[XP_SCORE_TERMS];
	for (int t = 0; t < XP_SCORE_TERMS; t++) {
		double w = md->score_w[t], e = w * top[t];
		lo += e < 0 ? e : 0;
		hi += e > 0 ? e : 0;
		part[t] = w * x[t] - (e < 0 ? e : 0); /* each part from 0 */
	}
	double scale = hi > lo ? 100.0 / (hi - lo) : 0;
	memset(tmp->parts, 0, sizeof tmp->parts);
	tmp->parts[XP_CRIT_TOPOLOGY] = (part[XP_SCORE_HEALTHY] + part[XP_SCORE_RANK]) * scale;
	tmp->parts[XP_CRIT_UTILIZATION] = part[XP_SCORE_FREE] * scale;
	tmp->score = round((tmp->parts[XP_CRIT_TOPOLOGY] + tmp->parts[XP_CRIT_UTILIZATION]) * 1e6) / 1e6;
	return true;
}

/* Under pack, a model with the vendor's ring rule ranks nodes as Volcano's Ascend plugin does
 * (module910x8 ScoreBestNPUNodes: nodeWeight * (healthy NPUs * ring size - the rank of the
 * best ring's free count in the priority list)): more healthy devices of the kind first (a
 * node with a failed one is still used, after the others), then the better ring, then (the
 * plugin's policy of filling nodes, not in that formula) the node with more in use. Scaled
 * to 0..100: the ring part is the breakdown's topology, the fill its utilization. */
static bool vendor_score(const struct pctx *p, size_t ni, const struct xpi_dinfo *di, size_t want,
			 struct answer *tmp)
{
	size_t np = 0;
	int ring;
	const unsigned char *prio = vendor_prio(di, 1, &np, &ring);
	if (!prio)
		return false; /* no vendor rule for this model: the strategy's score */
	prio = vendor_prio(di, want, &np, &ring);
	const struct xp_node *n = p->c->nodes[ni];
	const uint32_t *kind = &p->ix->kind[p->ix->off[ni]];
	uint32_t k = kind[tmp->dev[0]];
	const char *g = n->devices[tmp->dev[0]].affinity_group;
	size_t healthy = 0, busy = 0, ring_free = 0, nd = 0;
	for (size_t i = 0; i < n->n_devices; i++) {
		if (kind[i] != k)
			continue;
		nd++;
		if (n->devices[i].health == XP_HEALTH_FAIL)
			continue;
		healthy++;
		bool used = used_now(p, ni, i) > EPS;
		busy += used;
		ring_free += !used && xpi_streq(n->devices[i].affinity_group, g);
	}
	/* The rank of the chosen ring's free count in the list (0: the first); a request wider
	 * than a ring takes whole rings and has no list: rank 0. */
	size_t rank = 0;
	if (prio && want <= (size_t)ring)
		while (rank < np && prio[rank] != ring_free)
			rank++;
	/* A device the layout's node size counts but the node does not list (npu-smi left one out)
	 * is healthy to the vendor's score (MaxNodeNPUNum less the unhealthy) and never free. */
	size_t size = 0;
	for (size_t b = 0; b < 64; b++)
		if (di->md->layout_devices >> b & 1)
			size = b + 1;
	if (size > nd) {
		healthy += size - nd;
		busy += size - nd;
		nd = size;
	}
	if (di->md->has_score)
		return linear_score(p, ni, di->md, k, want, ring, nd, healthy, healthy - busy, rank, tmp);
	double r = ring, top = (double)nd * r, fit = (double)healthy * r - (double)rank;
	double scale = 100.0 / (top * (double)(nd + 1) + (double)nd);
	memset(tmp->parts, 0, sizeof tmp->parts);
	tmp->parts[XP_CRIT_TOPOLOGY] = fit * (double)(nd + 1) * scale;
	tmp->parts[XP_CRIT_UTILIZATION] = (double)busy * scale;
	tmp->score = round((tmp->parts[XP_CRIT_TOPOLOGY] + tmp->parts[XP_CRIT_UTILIZATION]) * 1e6) / 1e6;
	return true;
}

/* ---- one kind of device, and the node's answer ---- */

/* The kind of device that got furthest on the node so far: one replica gets one kind, so
 * the node's answer (and its explanation) is that kind's. */
struct furthest {
	bool any;                /* a kind was judged */
	int stage;               /* how far it got */
	const struct xp_device *rep; /* its first device */
	size_t counts[ST_OK];    /* its devices through each device stage */
	bool geometric;          /* its slice has MIG start positions */
	struct free_why why;     /* why its devices were refused at the free stage */
	bool unnamed;            /* some of its GPUs hold instances whose profile no tool named */
};

static void furthest_set(struct furthest *f, int stage, const struct xp_device *rep, const size_t counts[ST_OK],
			 const struct free_why *why)
{
	f->why = *why;
	f->stage = stage;
	f->rep = rep;
	memcpy(f->counts, counts, sizeof f->counts);
}

/* True when a device of kind[k] on node ni holds an instance named by no template of md (the
 * profile discovery could not name: normalize.c calls it "slice"). */
static bool kind_unnamed(const struct pctx *p, size_t ni, const uint32_t *kind, size_t k, const struct xp_mmodel *md)
{
	const struct xp_node *n = p->c->nodes[ni];
	for (size_t i = 0; i < n->n_devices; i++)
		for (size_t a = 0; kind[i] == kind[k] && a < n->devices[i].n_allocs; a++) {
			const struct xp_alloc *al = &n->devices[i].allocs[a];
			if (al->slice && al->share_pct <= 0 && !xp_manifest_template(md, al->slice))
				return true;
		}
	return false;
}

/* True when device k is the first of its kind on the node (the kind is judged once). */
static bool first_of_kind(const uint32_t *kind, size_t k)
{
	for (size_t j = 0; j < k; j++)
		if (kind[j] == kind[k])
			return false;
	return true;
}

/* Judges the kind of device k for one replica: the device stages, then the shape and the
 * score. A fit replaces a's answer when it scores higher (first on ties); a refusal is kept
 * when no kind fits and it got further than the kinds before it (first on ties). */
static void judge_kind(const struct pctx *p, size_t ni, const struct xp_task_group *g, const uint32_t *kind, size_t k,
		       size_t want, bool sliced, struct answer *a, struct furthest *f)
{
	const struct xp_device *rep = &p->c->nodes[ni]->devices[k];
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
	struct free_why why = {0, 0, 0};
	if (kind_ok)
		count_kind(p, ni, g, kind, k, t, take, sliced, counts, cand, &nc, &why);
	int stage = first_short(counts, want);
	struct answer tmp;
	if (stage > ST_FREE) {
		answer_reset(&tmp);
		if (stage_shape(p, ni, g, rep, &repinfo, cand, nc, want, sliced, &tmp)) {
			tmp.n = want;
			tmp.take = take;
			tmp.stage = ST_OK;
			/* The vendor's node score where its rule applies, else the strategy's. */
			if (!(xpl_vendor_group(p, g) && vendor_score(p, ni, &repinfo, want, &tmp)))
				score_fit(p, ni, &tmp);
			if (!f->any || a->stage != ST_OK || tmp.score > a->score + EPS) {
				*a = tmp;
				f->any = true;
			}
			furthest_set(f, ST_OK, rep, counts, &why);
			return;
		}
		stage = ST_SHAPE;
	}
	if (f->any && a->stage == ST_OK)
		return;
	if (!f->any || stage > f->stage) {
		furthest_set(f, stage, rep, counts, &why);
		f->geometric = xp_mig_geometric(repinfo.md, t);
		f->unnamed = f->geometric && kind_unnamed(p, ni, kind, k, repinfo.md);
		a->stage = stage;
		f->any = true;
		if (stage == ST_SHAPE)
			snprintf(a->text, sizeof a->text, "%s", tmp.text);
	}
}

/* ---- the reason for a refusal, and the --explain list ---- */

/* Sets a->text for a refusal at a device stage, in the words of the stage that stopped the
 * furthest kind (what a user can change). what: the devices asked, as a phrase. */
static void refusal_text(const struct pctx *p, const struct xp_task_group *g, size_t want, const struct furthest *f,
			 const char *mname, const char *what, struct answer *a)
{
	if (!f->any || a->stage == ST_MODEL) {
		a->stage = ST_MODEL;
		if (g->vendor || g->model || g->slice)
			snprintf(a->text, sizeof a->text, "fewer than %zu devices%s%s%s%s%s%s", want,
				 g->vendor || g->model ? " matching " : "", g->vendor ? g->vendor : "",
				 g->vendor && g->model ? " " : "", g->model ? g->model : "", g->slice ? " with slice " : "",
				 g->slice ? g->slice : "");
		else
			snprintf(a->text, sizeof a->text, "fewer than %zu accelerators", want);
	} else if (a->stage == ST_HOMOG)
		snprintf(a->text, sizeof a->text, "no %zu %s %s (driver %s) for a homogeneous job", want,
			 p->key && p->key->vendor ? p->key->vendor : "?", p->key && p->key->model ? p->key->model : "?",
			 p->key && p->key->driver ? p->key->driver : "?");
	else if (a->stage == ST_VALID)
		snprintf(a->text, sizeof a->text, "%s driver %s not validated (%s) for %s%s", mname,
			 f->rep && f->rep->driver ? f->rep->driver : "?", xp_layer_name(g->validated_layer),
			 g->validated_case ? "case " : "any case", g->validated_case ? g->validated_case : "");
	else if (a->stage == ST_HEALTH)
		snprintf(a->text, sizeof a->text, "fewer than %zu healthy %s", want, what);
	else if (a->stage == ST_MEMORY)
		snprintf(a->text, sizeof a->text, "fewer than %zu %s with %lld MiB", want, what,
			 (long long)g->memory_mib);
	else if (a->stage == ST_ECU)
		snprintf(a->text, sizeof a->text, "fewer than %zu %s with %g ECU", want, what, g->min_ecu);
	else if (a->stage == ST_FREE && f->geometric && !p->reconfigure && f->unnamed)
		snprintf(a->text, sizeof a->text, "no free %s instance known on %.80s: the profile of its MIG "
			 "instances is unknown (nvidia-smi -L or NVML names it)", g->slice, mname);
	else if (a->stage == ST_FREE && f->geometric && !p->reconfigure && f->why.makeable &&
		 f->why.mig_off == f->why.makeable)
		snprintf(a->text, sizeof a->text, "no free %s instance exists on %.80s (MIG mode off; a new one "
			 "could be made with MIG mode enabled: --reconfigure)", g->slice, mname);
	else if (a->stage == ST_FREE && f->geometric && !p->reconfigure && f->why.makeable)
		snprintf(a->text, sizeof a->text, "no free %s instance exists on %.80s (a new one could be made: "
			 "--reconfigure)", g->slice, mname);
	else if (a->stage == ST_FREE && f->geometric && !p->reconfigure)
		snprintf(a->text, sizeof a->text, "no free %s instance exists on %.80s (nor could one be made)",
			 g->slice, mname);
	else if (a->stage == ST_FREE && f->geometric)
		snprintf(a->text, sizeof a->text, "fewer than %zu free %.120s (MIG: a free instance, or a free "
			 "start NVIDIA allows wherever the instances there sit)", want, what);
	else if (a->stage == ST_FREE && f->why.partitioned)
		snprintf(a->text, sizeof a->text, "fewer than %zu free %.120s (%zu partitioned: MIG mode on)", want,
			 what, f->why.partitioned);
	else if (a->stage == ST_FREE)
		snprintf(a->text, sizeof a->text, "fewer than %zu free %s", want, what);
}

/* Records the device stages of the furthest kind for --explain, up to the first it fails. */
static void record_devices(struct rec *rc, const struct xp_task_group *g, size_t want, const struct furthest *f,
			   const char *what, const struct answer *a)
{
	static const char *const names[] = {[ST_MODEL] = "model", [ST_HOMOG] = "homogeneous",
					    [ST_VALID] = "validated", [ST_HEALTH] = "health", [ST_MEMORY] = "memory",
					    [ST_ECU] = "ecu", [ST_FREE] = "free"};
	for (int s = ST_MODEL; s <= ST_FREE; s++) {
		if (s == ST_VALID && g->validated_layer < 0)
			continue;
		rec_add(rc, names[s], f->counts[s] >= want, "have %zu, need %zu %s", f->counts[s], want, what);
		if (f->counts[s] < want)
			return;
	}
	rec_add(rc, "affinity", a->stage == ST_OK, "%s", a->stage == ST_OK ? "devices fit the group rules" : a->text);
}

/* Explains the node's answer: the refusal text, and with rc the device stages. */
static void explain(const struct pctx *p, const struct xp_task_group *g, size_t want, const struct furthest *f,
		    struct answer *a, struct rec *rc)
{
	const char *mname = f->rep && f->rep->model ? f->rep->model : "device";
	char what[160];
	if (g->slice)
		snprintf(what, sizeof what, "%s with slice %s", mname, g->slice);
	else if (g->share_pct > 0)
		snprintf(what, sizeof what, "%s with %d%% free", mname, g->share_pct);
	else
		snprintf(what, sizeof what, "%s", mname);
	refusal_text(p, g, want, f, mname, what, a);
	if (rc)
		record_devices(rc, g, want, f, what, a);
}

void xpl_eval(const struct pctx *p, size_t ni, const struct xp_task_group *g, struct answer *a, struct rec *rc)
{
	const struct xp_node *n = p->c->nodes[ni];
	answer_reset(a);
	if (!stage_state(n, a, rc) || !stage_labels(n, g, a, rc) || !stage_cpus(n, g, a, rc) ||
	    !stage_host_memory(n, g, a, rc))
		return;
	bool sliced = g->slice || g->share_pct > 0;
	size_t want = sliced ? 1 : (size_t)g->devices;
	/* Each kind of device on the node (vendor, model, driver) is judged apart, since one replica
	 * gets one kind; the node's answer is the kind that got furthest (first on ties). */
	const uint32_t *kind = &p->ix->kind[p->ix->off[ni]];
	struct furthest f = {.stage = ST_MODEL};
	for (size_t k = 0; k < n->n_devices; k++)
		if (first_of_kind(kind, k))
			judge_kind(p, ni, g, kind, k, want, sliced, a, &f);
	/* A fit needs no text (and most judgements are fits): only the explain list reads on. */
	if (f.any && a->stage == ST_OK && !rc)
		return;
	explain(p, g, want, &f, a, rc);
}
