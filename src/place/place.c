/* place.c: the placement search: a dry-run's attempts (per homogeneous kind, per switch or
 * rack), each replica's best node through the index or a plain scan, the reasons for a
 * refusal, and the result (see place.h for the rules, place_index.h for the index). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place_int.h"

/* Frees a replica's strings. */
static void replica_free(struct xp_place_replica *r)
{
	free(r->node);
	free(r->devices);
	free(r->pos);
	if (r->bus_ids) /* none for a bare placement */
		xp_strv_free(r->bus_ids, r->n_devices);
	xp_strv_free(r->mounts, r->n_mounts);
	free(r->slice);
	free(r->cpus);
	free(r->env_name);
	free(r->env_value);
	free(r->env_shown);
}

static void reasons_free(struct xp_place_reason *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].text);
	free(v);
}

/* One gang attempt under one homogeneous key (and one switch or rack). */
struct attempt {
	struct xp_place_replica *reps;
	size_t n_reps;
	bool placed;
	size_t pending;
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

static void add_reason(struct attempt *t, const char *code, const char *text, size_t count)
{
	for (size_t i = 0; i < t->n_reasons; i++)
		if (strcmp(t->reasons[i].text, text) == 0 && strcmp(t->reasons[i].code, code) == 0) {
			t->reasons[i].count += count;
			return;
		}
	t->reasons = xp_realloc(t->reasons, (t->n_reasons + 1) * sizeof *t->reasons);
	t->reasons[t->n_reasons++] = (struct xp_place_reason){code, xp_strdup(text), count};
}

static int reason_cmp(const void *a, const void *b)
{
	const struct xp_place_reason *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->text, y->text);
}

/* The memo's name for group g under this attempt's key and strategy: every field eval reads.
 * Built in one buffer: every dry-run names each of its groups (twice for a MIG slice). */
struct sig {
	char *s;       /* the caller's buffer at first, then the heap's */
	size_t n, cap;
	bool heap;
};

static void sig_add(struct sig *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sig_add(struct sig *b, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int w = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
		va_end(ap);
		if (w < 0)
			return; /* no such error with these formats; never loop on one */
		if ((size_t)w < b->cap - b->n) {
			b->n += (size_t)w;
			return;
		}
		b->cap = 2 * b->cap + (size_t)w + 1;
		char *t = xp_malloc(b->cap);
		memcpy(t, b->s, b->n);
		if (b->heap)
			free(b->s);
		b->s = t;
		b->heap = true;
	}
}

/* Appends s to the signature with its length first ("3:abc", "-" for NULL), so that no two
 * lists of strings make the same signature whatever the strings hold. */
static void sig_str(struct sig *b, const char *s)
{
	if (s)
		sig_add(b, "%zu:%s|", strlen(s), s);
	else
		sig_add(b, "-|");
}

static uint32_t query_of(struct pctx *p, const struct xp_task_group *g)
{
	/* A job of several tasks may follow another vendor rule (counts_multi, wide_multi); where
	 * products mix, the vendor's node score is not used (xpl_one_product). */
	bool one = p->one_product && g >= p->job->groups && g < p->job->groups + p->job->n_groups &&
		   p->one_product[g - p->job->groups];
	char buf[512];
	struct sig b = {buf, 0, sizeof buf, false};
	/* The ECU floor by its bits: exact, and no decimal conversion for every dry-run. */
	uint64_t ecu;
	memcpy(&ecu, &g->min_ecu, sizeof ecu);
	sig_add(&b, "%d|%d|%d|%d|%lld|%llx|%d|%lld|%d|%d|%d|%d|%zu|%d|%d|", p->strategy, p->reconfigure, g->devices,
		g->share_pct, (long long)g->memory_mib, (unsigned long long)ecu, g->cpus, (long long)g->host_memory_mib,
		g->homogeneous, g->same_group, g->numa, g->validated_layer, g->labels.n, xpl_multi_task(p->job), one);
	const char *strs[] = {g->slice, g->vendor, g->model, g->validated_case, p->key ? p->key->vendor : NULL,
			      p->key ? p->key->model : NULL, p->key ? p->key->driver : NULL};
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
		sig_str(&b, strs[i]);
	sig_str(&b, p->key ? "key" : NULL);
	for (size_t i = 0; i < g->labels.n; i++) {
		sig_str(&b, g->labels.keys[i]);
		sig_str(&b, g->labels.values[i]);
	}
	uint32_t q = xpi_query(p->ix, b.s);
	if (b.heap)
		free(b.s);
	return q;
}

/* xpl_one_product, as the index keeps it: that walks every device of the cluster, which at
 * 10,000 nodes costs more than the decision. Only a vendor group reads it (xpl_vendor_group:
 * pack, whole devices, a vendor or model named); for any other the answer does not matter and
 * is true without the walk. */
static bool one_product(struct pctx *p, const struct xp_task_group *g)
{
	if (p->strategy != XP_STRAT_PACK || g->slice || g->share_pct > 0 || (!g->vendor && !g->model))
		return true;
	int v = xpi_product_get(p->ix, g->vendor, g->model);
	if (v < 0) {
		v = xpl_one_product(p, g);
		xpi_product_put(p->ix, g->vendor, g->model, v);
	}
	return v;
}

/* Class k's answer to query q, judged on its first member when not kept yet. */
static const struct xpi_memo *judge(struct pctx *p, uint32_t k, uint32_t q, const struct xp_task_group *g,
				    struct answer *buf)
{
	struct xp_place_index *ix = p->ix;
	const struct xpi_memo *m = xpi_memo_get(ix, q, k);
	if (m) {
		ix->hits++;
		return m;
	}
	const struct xpi_class *kc = &ix->classes[k];
	xpl_eval(p, ix->order[kc->members[0]], g, buf, NULL);
	ix->evals++;
	struct xpi_memo mm = {buf->stage == ST_OK, buf->stage, buf->text, buf->dev, buf->n, buf->take, buf->score, {0}};
	memcpy(mm.parts, buf->parts, sizeof buf->parts);
	/* Stages before "free" read nothing of what is in use: the answer holds for every node
	 * of the static class, busy or idle. */
	return xpi_memo_put(ix, q, k, &mm, buf->stage < ST_FREE);
}

/* The chosen node for one replica. */
struct choice {
	size_t ni;          /* SIZE_MAX: none */
	uint32_t rank;
	const int *dev;
	size_t n;
	double take, score;
	double parts[XP_CRIT_COUNT]; /* a copy: kept answers move as more are kept */
};

static bool beats(double score, uint32_t rank, const struct choice *c)
{
	return c->ni == SIZE_MAX || score > c->score || (score == c->score && rank < c->rank);
}

static void choose(struct choice *c, size_t ni, uint32_t rank, const int *dev, size_t n, double take,
		   double score, const double *parts)
{
	c->ni = ni;
	c->rank = rank;
	c->dev = dev;
	c->n = n;
	c->take = take;
	c->score = score;
	memcpy(c->parts, parts, sizeof c->parts);
}

static bool in_domain(const struct pctx *p, size_t ni)
{
	if (!p->domain)
		return true;
	const char *k = xpi_domain_of(p->ix, ni, p->net == XP_NET_RACK);
	return k && strcmp(k, p->domain) == 0;
}

/* A class not judged yet, with the highest score it could get. */
struct pend {
	uint32_t k;
	double ub;
};

#define PEND_BUCKETS 1024

static size_t bucket_of(double ub)
{
	double b = ub / 101.0 * PEND_BUCKETS;
	return b < 0 ? 0 : b >= PEND_BUCKETS ? PEND_BUCKETS - 1 : (size_t)b;
}

/* The highest score a replica of g could get under the strategy's weights w on a node of nd
 * devices of which used (sum of shares) are in use: utilization after is at most (used + what
 * the replica takes) / nd and at least used / nd, topology and efficiency at most 1, powered
 * is known. A millionth of a point more for the rounding of scores. */
static double bound(const double *w, const struct xp_task_group *g, double used, size_t nd)
{
	double want = g->slice || g->share_pct > 0 ? 1 : g->devices;
	double n = (double)nd, up = (used + want) / n, lo = used / n;
	return 100 * (w[XP_CRIT_UTILIZATION] * (up > 1 ? 1 : up) + w[XP_CRIT_BALANCE] * (1 - lo) +
		      w[XP_CRIT_TOPOLOGY] + w[XP_CRIT_POWERED] * (used > EPS) + w[XP_CRIT_EFFICIENCY]) + 1e-6;
}

/* False when a node in the state of class key v (use of nd devices, then each one's mode key:
 * XPI_HARD and XPI_SOFT bits plus 4 x its committed slices' name) cannot hold a replica of g
 * that takes whole devices: a whole device must be idle and hold no hard slice (dev_free), so
 * fewer such than asked fit nowhere, whatever else the node is. Slices and shares: true. */
static bool room(const struct xp_task_group *g, const double *v, size_t nd)
{
	if (g->slice || g->share_pct > 0)
		return true;
	size_t idle = 0;
	for (size_t d = 0; d < nd; d++) {
		double mode = fmod(v[nd + d], 4.0);
		idle += v[d] <= EPS && !((int)mode & XPI_HARD);
	}
	return idle >= (size_t)g->devices;
}

/* Whether a node of static class sc has a device of g's vendor and model (by its kinds),
 * kept per query: one with none never holds a replica asking devices, whatever is in use. */
static bool open_kinds(const struct xp_place_index *ix, struct xpi_query *qq, uint32_t sc,
		       const struct xp_task_group *g)
{
	if (qq->kinds_ok[sc])
		return qq->kinds_ok[sc] == 1;
	size_t rep = ix->scls_rep[sc];
	bool ok = false;
	for (size_t d = 0; d < ix->c->nodes[rep]->n_devices && !ok; d++)
		ok = xp_place_index_kind_matches(ix, ix->kind[ix->off[rep] + d], g);
	qq->kinds_ok[sc] = ok ? 1 : 2;
	return ok;
}

/* The best node for one replica of g, or none (c->ni SIZE_MAX). The scan judges every node;
 * the index judges each class with members once (or reuses its answer), or within a switch
 * (rack) each of its nodes through its class. buf/best: answer buffers (the scan's winner
 * stays in *best). */
static void pick(struct pctx *p, const struct xp_task_group *g, uint32_t q, struct choice *c, struct answer **buf,
		 struct answer **best)
{
	struct xp_place_index *ix = p->ix;
	c->ni = SIZE_MAX;
	if (p->scan) {
		for (size_t r = 0; r < ix->n_nodes; r++) {
			size_t ni = ix->order[r];
			if (!in_domain(p, ni))
				continue;
			xpl_eval(p, ni, g, *buf, NULL);
			if ((*buf)->stage == ST_OK && beats((*buf)->score, (uint32_t)r, c)) {
				struct answer *t = *best;
				*best = *buf;
				*buf = t;
				choose(c, ni, (uint32_t)r, (*best)->dev, (*best)->n, (*best)->take, (*best)->score,
				       (*best)->parts);
			}
		}
		return;
	}
	if (p->domain) {
		const struct xpi_domains *d = &ix->dom[p->net == XP_NET_RACK];
		for (size_t j = p->dom_lo; j < p->dom_hi; j++) {
			size_t ni = d->nodes[j];
			const struct xpi_memo *m = judge(p, ix->cls[ni], q, g, *buf);
			if (m->stage == ST_OK && beats(m->score, ix->rank[ni], c))
				choose(c, ni, ix->rank[ni], m->dev, m->n, m->take, m->score, m->parts);
		}
		return;
	}
	/* Kept answers first; the classes not judged yet wait, bucketed by the best score they
	 * could reach, and are judged from the highest bucket down until no bucket can beat
	 * the best found. */
	struct pend *pd = NULL;
	size_t np = 0;
	/* One pass over the classes with members (a dense list beside each one's static class:
	 * after commits and releases most classes ever made are empty); the order does not
	 * change the choice, which beats() settles by score, then name rank. */
	double *ubs = xpi_query_ub(ix, q);
	struct xpi_query *qq = &ix->q[q];
	double w[XP_CRIT_COUNT];
	for (int ci = 0; ci < XP_CRIT_COUNT; ci++)
		w[ci] = xp_strategy_weight(p->strategy, ci);
	int vgroup = -1; /* xpl_vendor_group(p, g), asked once a class needs it */
	/* By static class, those not refused whatever is in use (none of whose nodes fits): a
	 * shape naming one model of several skips the others' classes without reading them. */
	bool asks_devices = g->devices > 0 || g->slice || g->share_pct > 0;
	for (size_t oi = 0; oi < qq->n_open;) {
		uint32_t sc = qq->open[oi];
		if (qq->sslot[sc] || (asks_devices && !open_kinds(ix, qq, sc, g))) {
			qq->open[oi] = qq->open[--qq->n_open];
			continue;
		}
		oi++;
		for (size_t li = 0; li < ix->n_live[sc]; li++) {
			uint32_t k = ix->live[sc][li];
			uint32_t a = qq->slot[k];
			if (a) {
				ix->hits++;
				/* The dense scores first; the answer and the first member are read only for a
				 * contender (each is another cache line). */
				double sc_ = qq->score[k];
				if (sc_ >= 0 && (c->ni == SIZE_MAX || sc_ >= c->score)) {
					const struct xpi_memo *m = &qq->ans[a - 1];
					uint32_t r = ix->classes[k].members[0];
					if (beats(m->score, r, c))
						choose(c, ix->order[r], r, m->dev, m->n, m->take, m->score, m->parts);
				}
				continue;
			}
			/* The bound of a class not judged yet is reckoned once per shape (it reads the
			 * class's node: a cache miss in the cluster); a class that cannot beat the best
			 * kept answer so far waits for nothing (the best only rises). */
			double ub = ubs[k];
			if (ub == -1) {
				const struct xpi_class *kc = &ix->classes[k];
				size_t rep = ix->scls_rep[kc->scls], nd = p->c->nodes[rep]->n_devices;
				if (vgroup < 0)
					vgroup = xpl_vendor_group(p, g);
				/* A vendor's score (xpl_vendor_scored) may reach 100 whatever is in use; a node
				 * without devices, or with fewer idle ones than whole devices asked, holds no
				 * replica (-2: never judged). */
				ub = !nd || !room(g, kc->used, nd) ? -2
				     : vgroup && xpl_vendor_scored(p, rep, g) ? 100 + 1e-6 : bound(w, g, kc->used_sum, nd);
				ubs[k] = ub;
			}
			if (ub < 0 || (c->ni != SIZE_MAX && ub < c->score))
				continue;
			if (!pd)
				pd = xp_malloc((ix->n_live_all ? ix->n_live_all : 1) * sizeof *pd);
			pd[np++] = (struct pend){k, ub};
		}
	}
	if (!np)
		return;
	size_t head[PEND_BUCKETS], *next = xp_malloc(np * sizeof *next);
	for (size_t b = 0; b < PEND_BUCKETS; b++)
		head[b] = SIZE_MAX;
	for (size_t i = 0; i < np; i++) {
		size_t b = bucket_of(pd[i].ub);
		next[i] = head[b];
		head[b] = i;
	}
	for (size_t b = PEND_BUCKETS; b-- > 0;)
		for (size_t i = head[b]; i != SIZE_MAX; i = next[i]) {
			if (c->ni != SIZE_MAX && pd[i].ub < c->score)
				continue;
			uint32_t k = pd[i].k;
			const struct xpi_memo *m = judge(p, k, q, g, *buf);
			uint32_t r = ix->classes[k].members[0];
			if (m->stage == ST_OK && beats(m->score, r, c))
				choose(c, ix->order[r], r, m->dev, m->n, m->take, m->score, m->parts);
		}
	free(next);
	free(pd);
}

/* One reason per node for why one more replica of g fits nowhere. */
static void refusal(struct pctx *p, const struct xp_task_group *g, uint32_t q, struct attempt *t,
		    struct answer *buf)
{
	struct xp_place_index *ix = p->ix;
	/* The reasons are this replica's alone: a group left pending before it had its own, and
	 * both together would count every node twice. */
	reasons_free(t->reasons, t->n_reasons);
	t->reasons = NULL;
	t->n_reasons = 0;
	if (p->scan) {
		for (size_t r = 0; r < ix->n_nodes; r++)
			if (in_domain(p, ix->order[r])) {
				xpl_eval(p, ix->order[r], g, buf, NULL);
				add_reason(t, xpl_stage_code[buf->stage], buf->text, 1);
			}
	} else if (p->domain) {
		const struct xpi_domains *d = &ix->dom[p->net == XP_NET_RACK];
		for (size_t j = p->dom_lo; j < p->dom_hi; j++) {
			const struct xpi_memo *m = judge(p, ix->cls[d->nodes[j]], q, g, buf);
			add_reason(t, xpl_stage_code[m->stage], m->text, 1);
		}
	} else
		for (size_t sc = 0; sc < ix->n_scls; sc++) {
			const struct xpi_memo *m = xpi_static_get(ix, q, sc);
			if (m) {
				add_reason(t, xpl_stage_code[m->stage], m->text, ix->scls_n[sc]);
				continue;
			}
			for (size_t li = 0; li < ix->n_live[sc]; li++) {
				uint32_t k = ix->live[sc][li];
				m = judge(p, k, q, g, buf);
				add_reason(t, xpl_stage_code[m->stage], m->text, ix->classes[k].n_members);
			}
		}
	if (t->n_reasons > 1)
		qsort(t->reasons, t->n_reasons, sizeof *t->reasons, reason_cmp);
}

/* A group of many replicas keeps its candidates in a heap, best first: each replica changes
 * one node, so after the first only that node's classes need judging again. An entry whose
 * class has lost its first member (or all) is stale and dropped when it comes to the top. */
#define HEAP_MIN 16

struct cand {
	double score;
	uint32_t rank, k;
};

struct heap {
	struct cand *v;
	size_t n, cap;
};

static bool cand_before(const struct cand *a, const struct cand *b)
{
	return a->score > b->score || (a->score == b->score && a->rank < b->rank);
}

static void heap_push(struct heap *h, struct cand c)
{
	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 256;
		h->v = xp_realloc(h->v, h->cap * sizeof *h->v);
	}
	size_t i = h->n++;
	while (i > 0 && cand_before(&c, &h->v[(i - 1) / 2])) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = c;
}

static void heap_pop(struct heap *h)
{
	struct cand last = h->v[--h->n];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, b = i;
		const struct cand *bc = &last;
		if (l < h->n && cand_before(&h->v[l], bc)) {
			b = l;
			bc = &h->v[l];
		}
		if (l + 1 < h->n && cand_before(&h->v[l + 1], bc))
			b = l + 1;
		if (b == i)
			break;
		h->v[i] = h->v[b];
		i = b;
	}
	if (h->n)
		h->v[i] = last;
}

/* Pushes class k when it has members and fits a replica of g. */
static void heap_class(struct pctx *p, struct heap *h, uint32_t k, uint32_t q, const struct xp_task_group *g,
		       struct answer *buf)
{
	const struct xpi_class *kc = &p->ix->classes[k];
	if (!kc->n_members)
		return;
	const struct xpi_memo *m = judge(p, k, q, g, buf);
	if (m->stage == ST_OK)
		heap_push(h, (struct cand){m->score, p->ix->classes[k].members[0], k});
}

/* The heap's best class that is still what its entry says. */
static void heap_pick(struct pctx *p, struct heap *h, uint32_t q, struct choice *c)
{
	c->ni = SIZE_MAX;
	while (h->n) {
		const struct cand *t = &h->v[0];
		const struct xpi_class *kc = &p->ix->classes[t->k];
		if (kc->n_members && kc->members[0] == t->rank) {
			const struct xpi_memo *m = xpi_memo_get(p->ix, q, t->k);
			choose(c, p->ix->order[t->rank], t->rank, m->dev, m->n, m->take, m->score, m->parts);
			return;
		}
		heap_pop(h);
	}
}

/* Within one switch (rack) the candidates are nodes, not classes: an entry holds the class its
 * node was in when pushed, and is stale once the node has moved on. */
static void heap_node(struct pctx *p, struct heap *h, size_t ni, uint32_t q, const struct xp_task_group *g,
		      struct answer *buf)
{
	uint32_t k = p->ix->cls[ni];
	const struct xpi_memo *m = judge(p, k, q, g, buf);
	if (m->stage == ST_OK)
		heap_push(h, (struct cand){m->score, p->ix->rank[ni], k});
}

static void heap_pick_node(struct pctx *p, struct heap *h, uint32_t q, struct choice *c)
{
	c->ni = SIZE_MAX;
	while (h->n) {
		const struct cand *t = &h->v[0];
		size_t ni = p->ix->order[t->rank];
		if (p->ix->cls[ni] == t->k) {
			const struct xpi_memo *m = xpi_memo_get(p->ix, q, t->k);
			choose(c, ni, t->rank, m->dev, m->n, m->take, m->score, m->parts);
			return;
		}
		heap_pop(h);
	}
}

/* The existing instance a MIG replica rp (judged "existing") takes, by the order the device
 * lists its free instances of the profile: commits held the first ones, then this dry-run's
 * earlier replicas on the device. NULL when it has no UUID or none is left. */
static const char *mig_uuid(const struct pctx *p, const struct attempt *t, const struct xp_place_replica *rp)
{
	const struct xpi_dinfo *di = xpl_dinfo(p, rp->node_ix, (size_t)rp->pos[0]);
	const struct xp_mtemplate *tm = xp_manifest_template(di->md, rp->slice);
	size_t nc, skip = 0;
	const struct xp_mtemplate *const *ct = xpi_committed(p->ix, p->ix->off[rp->node_ix] + (size_t)rp->pos[0], &nc);
	for (size_t k = 0; k < nc; k++)
		skip += ct[k] == tm;
	for (size_t k = 0; k + 1 < t->n_reps; k++) {
		const struct xp_place_replica *o = &t->reps[k];
		skip += o->node_ix == rp->node_ix && o->pos[0] == rp->pos[0] && o->instance &&
			!strcmp(o->instance, "existing") && o->slice && xp_manifest_template(di->md, o->slice) == tm;
	}
	const struct xp_device *d = &p->c->nodes[rp->node_ix]->devices[rp->pos[0]];
	for (size_t a = 0; a < d->n_allocs; a++) {
		const struct xp_alloc *al = &d->allocs[a];
		if (!al->slice || al->share_pct > 0 || !xpi_free_instance(al, di) ||
		    xp_manifest_template(di->md, al->slice) != tm)
			continue;
		if (skip-- == 0)
			return al->uuid;
	}
	return NULL;
}

/* What a MIG replica's task sets (replica.env_shown): CUDA selects a MIG instance by its UUID,
 * never by the GPU's index. */
static char *mig_env(const struct pctx *p, const struct attempt *t, const struct xp_place_replica *rp, int gpu)
{
	if (rp->instance && !strcmp(rp->instance, "new"))
		return xp_asprintf("(a new instance on GPU %d: its MIG UUID exists once it is made)", gpu);
	const char *u = rp->instance ? mig_uuid(p, t, rp) : NULL;
	if (!u)
		return xp_asprintf("(an instance on GPU %d whose MIG UUID is not known)", gpu);
	return xp_asprintf("%s%s", strncmp(u, "MIG-", 4) ? "MIG-" : "", u);
}

/* Places the job's replicas one after another, each on the best node left; the changes are
 * taken back at the end (a dry-run changes nothing). */
static void run_attempt(struct pctx *p, struct attempt *t)
{
	struct xp_place_index *ix = p->ix;
	struct answer *buf = xp_malloc(sizeof *buf), *best = xp_malloc(sizeof *best);
	ix->recording = true;
	for (size_t gi = 0; gi < p->job->n_groups; gi++) {
		const struct xp_task_group *g = &p->job->groups[gi];
		uint32_t q = p->scan ? 0 : p->qid[gi];
		int min = g->gang_min > 0 && g->gang_min < g->replicas ? g->gang_min : g->replicas;
		struct heap h = {NULL, 0, 0};
		/* --reconfigure only adds options: a slice goes on a free existing instance anywhere
		 * before a new one is made, whatever the strategy's score says; each replica asks
		 * first without new instances (the heap keeps one query, so not by heap). */
		bool existing_first = p->reconfigure && g->slice;
		bool use_heap = !p->scan && g->replicas >= HEAP_MIN && !existing_first;
		bool by_node = use_heap && p->domain;
		const struct xpi_domains *dm = by_node ? &ix->dom[p->net == XP_NET_RACK] : NULL;
		for (size_t j = p->dom_lo; by_node && j < p->dom_hi; j++)
			heap_node(p, &h, dm->nodes[j], q, g, buf);
		for (size_t sc = 0; use_heap && !by_node && sc < ix->n_scls; sc++)
			if (!xpi_static_get(ix, q, sc))
				for (size_t li = 0; li < ix->n_live[sc]; li++)
					heap_class(p, &h, ix->live[sc][li], q, g, buf);
		for (int r = 0; r < g->replicas; r++) {
			struct choice ch;
			if (by_node)
				heap_pick_node(p, &h, q, &ch);
			else if (use_heap)
				heap_pick(p, &h, q, &ch);
			else {
				if (existing_first) {
					p->reconfigure = false;
					pick(p, g, p->scan ? 0 : p->qid_old[gi], &ch, &buf, &best);
					p->reconfigure = true;
				}
				if (!existing_first || ch.ni == SIZE_MAX)
					pick(p, g, q, &ch, &buf, &best);
			}
			if (ch.ni == SIZE_MAX) {
				if (!p->quiet)
					refusal(p, g, q, t, buf);
				free(h.v);
				h.v = NULL;
				if (r >= min) {
					/* The gang minimum holds: the rest wait. */
					t->pending += (size_t)(g->replicas - r);
					break;
				}
				goto out;
			}
			const struct xp_node *n = p->c->nodes[ch.ni];
			t->reps = xp_realloc(t->reps, (t->n_reps + 1) * sizeof *t->reps);
			struct xp_place_replica *rp = &t->reps[t->n_reps++];
			memset(rp, 0, sizeof *rp);
			rp->group = gi;
			rp->node = xp_strdup(n->name);
			rp->node_ix = ch.ni;
			rp->n_devices = ch.n;
			rp->devices = xp_calloc(ch.n ? ch.n : 1, sizeof(int));
			rp->pos = xp_calloc(ch.n ? ch.n : 1, sizeof(int));
			rp->take = ch.take;
			char env[XP_MAX_DEVICES * 6 + 1] = "";
			int *vid = xp_calloc(ch.n ? ch.n : 1, sizeof *vid);
			int numa = n->devices[ch.dev[0]].numa;
			size_t nb = 0, el = 0;
			for (size_t k = 0; k < ch.n; k++) {
				const struct xp_device *d = &n->devices[ch.dev[k]];
				rp->devices[k] = d->index;
				rp->pos[k] = ch.dev[k];
				if (p->bare)
					continue;
				xp_strv_add(&rp->bus_ids, &nb, d->pci_bus_id ? d->pci_bus_id : "");
				/* The task sees devices by the vendor's own numbering, which differs from
				 * the node's whenever other accelerators come first on the bus. */
				vid[k] = d->vendor_index >= 0 ? d->vendor_index : d->index;
				if (el < sizeof env)
					el += (size_t)snprintf(env + el, sizeof env - el, "%s%d", k ? "," : "", vid[k]);
				if (d->numa != numa)
					numa = -1;
			}
			rp->numa = p->bare ? -1 : numa;
			/* The CPUs to pin the task to: those of the devices' NUMA domain. */
			for (size_t k = 0; !p->bare && numa >= 0 && k < n->n_numa && !rp->cpus; k++)
				if (n->numa[k].id == numa && n->numa[k].cpus && *n->numa[k].cpus)
					rp->cpus = xp_strdup(n->numa[k].cpus);
			if (g->slice)
				rp->slice = xp_strdup(g->slice);
			else if (g->share_pct > 0)
				rp->slice = xp_asprintf("share:%d", g->share_pct);
			/* How the replica is fenced from its neighbours on the device. */
			const struct xpi_dinfo *pi = xpl_dinfo(p, ch.ni, (size_t)ch.dev[0]);
			unsigned part = pi->md ? pi->md->partition : 0;
			rp->isolation = g->share_pct > 0 ? "soft" : !g->slice ? "exclusive"
				      : part & XP_PART_VNPU ? "vnpu" : part & XP_PART_MIG ? "mig" : "partition";
			/* Judged before this replica's use is added below: as the engine saw it. */
			int inst = g->slice ? xpl_mig_instance(p, ch.ni, (size_t)ch.dev[0], g) : 0;
			rp->instance = inst == 1 ? "existing" : inst == 2 ? "new" : NULL;
			rp->enable_mig = inst == 2 && n->devices[ch.dev[0]].mig_mode == 0;
			rp->score = ch.score;
			memcpy(rp->breakdown, ch.parts, sizeof rp->breakdown);
			/* The binding comes from the vendor's manifest: which variable, which device files. */
			const struct xpi_dinfo *di = xpl_dinfo(p, ch.ni, (size_t)ch.dev[0]);
			if (!p->bare) {
				const char *ev = di->m ? xp_manifest_env(di->m) : NULL;
				rp->env_name = xp_strdup(ev ? ev : XP_PLACE_GENERIC_ENV);
				rp->env_value = xp_strdup(env);
				rp->env_shown = inst ? mig_env(p, t, rp, vid[0]) : xp_strdup(env);
				rp->n_mounts = di->m ? xp_manifest_mounts(di->m, vid, rp->n_devices, &rp->mounts) : 0;
			}
			free(vid);
			t->total += ch.score;
			/* This replica's devices are busy for the next ones (taken back at the end). */
			uint32_t was = ix->cls[ch.ni];
			int mode = xpi_replica_mode(rp);
			/* A hard slice by its template, as a commit keeps it: the next replica's MIG
			 * judgement knows which instance this one took, not only its share. */
			const struct xp_mtemplate *tpl = mode == XPI_HARD ? xp_manifest_template(di->md, rp->slice) : NULL;
			for (size_t k = 0; k < rp->n_devices; k++) {
				size_t s = ix->off[ch.ni] + (size_t)rp->pos[k];
				xpi_set_use_slice(ix, ch.ni, (size_t)rp->pos[k], ix->used[s] + rp->take, mode == XPI_HARD,
						  mode == XPI_SOFT, tpl);
			}
			if (use_heap) {
				/* The class the node left has a new first member (or none); the node's
				 * new class may be new to the heap. */
				if (by_node)
					heap_node(p, &h, ch.ni, q, g, buf);
				else {
					heap_class(p, &h, was, q, g, buf);
					heap_class(p, &h, ix->cls[ch.ni], q, g, buf);
				}
			}
		}
		free(h.v);
	}
	t->placed = true;
	if (!t->pending) {
		reasons_free(t->reasons, t->n_reasons);
		t->reasons = NULL;
		t->n_reasons = 0;
	}
out:
	xpi_undo_all(ix);
	free(buf);
	free(best);
}

/* Nodes refused for something other than holding another kind (homogeneous). */
static size_t reach(const struct attempt *a)
{
	size_t n = 0;
	for (size_t i = 0; i < a->n_reasons; i++)
		n += strcmp(a->reasons[i].code, "homogeneous") ? a->reasons[i].count : 0;
	return n;
}

/* Placed beats refused; then fewer pending, a higher total; refused: more replicas placed,
 * then the wider reach. */
static bool attempt_better(const struct attempt *a, const struct attempt *b, bool have_b)
{
	if (!have_b)
		return true;
	if (a->placed != b->placed)
		return a->placed;
	if (a->placed) {
		if (a->pending != b->pending)
			return a->pending < b->pending;
		return a->total > b->total + EPS;
	}
	if (a->n_reps != b->n_reps)
		return a->n_reps > b->n_reps;
	/* Equally refused: the kind that more nodes could even offer tells the operator more. */
	return reach(a) > reach(b);
}

/* One gang attempt under the job's network constraint: one try per switch (rack), in key
 * order; the best placed try wins (ties: the key that sorts first). When none places, every
 * node gets one reason: no key recorded, its domain's per-node reasons when not even one
 * replica fit there, else that its domain has room for fewer replicas than the job needs. */
static void run_network(struct pctx *p, struct attempt *t)
{
	p->domain = NULL;
	if (p->net == XP_NET_ANY) {
		run_attempt(p, t);
		return;
	}
	bool rack = p->net == XP_NET_RACK;
	const char *what = rack ? "rack" : "switch";
	const struct xpi_domains *d = xpi_domains(p->ix, rack);
	struct attempt best = {0}, fail = {0};
	bool have = false;
	/* Fewest replicas that make the job placed (gang minimums). */
	size_t need = 0;
	for (size_t gi = 0; gi < p->job->n_groups; gi++) {
		const struct xp_task_group *g = &p->job->groups[gi];
		need += (size_t)(g->gang_min > 0 && g->gang_min < g->replicas ? g->gang_min : g->replicas);
	}
	char room[160];
	snprintf(room, sizeof room, "its %s has room for fewer than %zu replicas", what, need);
	/* With one group, a switch whose nodes could not hold need replicas even if each took
	 * as many as its devices allow is refused without placing replica by replica. */
	const struct xp_task_group *g0 = p->job->n_groups == 1 ? &p->job->groups[0] : NULL;
	bool sliced = g0 && (g0->slice || g0->share_pct > 0);
	uint32_t q0 = g0 && !p->scan ? p->qid[0] : 0;
	struct answer *buf = g0 && !p->scan ? xp_malloc(sizeof *buf) : NULL;
	/* How many replicas each switch could hold at most, from the classes that fit one (a
	 * static class that fits none is skipped whole): each node holds as many as its devices
	 * allow. */
	size_t *ubd = buf ? xp_calloc(d->n ? d->n : 1, sizeof *ubd) : NULL;
	for (size_t sc = 0; buf && sc < p->ix->n_scls; sc++) {
		if (xpi_static_get(p->ix, q0, sc))
			continue;
		size_t nd = p->c->nodes[p->ix->scls_rep[sc]]->n_devices;
		size_t per = sliced ? need : g0->devices > 0 ? nd / (size_t)g0->devices : 0;
		for (size_t li = 0; li < p->ix->n_live[sc] && per; li++) {
			if (judge(p, p->ix->live[sc][li], q0, g0, buf)->stage != ST_OK)
				continue;
			const struct xpi_class *k = &p->ix->classes[p->ix->live[sc][li]];
			for (size_t mi = 0; mi < k->n_members; mi++) {
				size_t di = d->of[p->ix->order[k->members[mi]]];
				if (di != SIZE_MAX && ubd[di] < need)
					ubd[di] += per;
			}
		}
	}
	for (size_t i = 0; i < d->n; i++) {
		size_t members = d->start[i + 1] - d->start[i];
		struct attempt a = {0};
		p->domain = d->keys[i];
		p->dom_lo = d->start[i];
		p->dom_hi = d->start[i + 1];
		if (buf) {
			if (ubd[i] > 0 && ubd[i] < need) {
				if (!p->quiet)
					add_reason(&fail, "network", room, members);
				continue;
			}
			/* Not one replica fits there: a quiet try needs no reasons, so no walk. */
			if (ubd[i] == 0 && p->quiet)
				continue;
		}
		run_attempt(p, &a);
		if (a.placed) {
			if (attempt_better(&a, &best, have)) {
				attempt_free(&best);
				best = a;
				have = true;
			} else
				attempt_free(&a);
			continue;
		}
		if (p->quiet)
			;
		else if (a.n_reps == 0)
			for (size_t r = 0; r < a.n_reasons; r++)
				add_reason(&fail, a.reasons[r].code, a.reasons[r].text, a.reasons[r].count);
		else
			add_reason(&fail, "network", room, members);
		attempt_free(&a);
	}
	free(buf);
	free(ubd);
	p->domain = NULL;
	if (have) {
		reasons_free(fail.reasons, fail.n_reasons);
		*t = best;
		return;
	}
	if (d->nokey && !p->quiet) {
		char text[64];
		snprintf(text, sizeof text, "no %s recorded", what);
		add_reason(&fail, "network", text, d->nokey);
	}
	if (fail.n_reasons > 1)
		qsort(fail.reasons, fail.n_reasons, sizeof *fail.reasons, reason_cmp);
	*t = fail;
}

/* The device in slot s of the index. */
static const struct xp_device *slot_dev(const struct xp_place_index *ix, size_t s)
{
	size_t n = xpi_slot_node(ix, s);
	return &ix->c->nodes[n]->devices[s - ix->off[n]];
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

struct xp_place_result *xpl_place(struct xp_place_index *ix, const struct xp_job *job,
				     const struct xp_place_opts *opts, struct xp_err *err)
{
	/* Between dry-runs: drop the states no node is in any more, when they pile up. */
	xpi_gc(ix, false);
	const struct xp_cluster *c = ix->c;
	if (!job->n_groups)
		return xp_errf(err, "job has no task groups"), NULL;
	bool homog = false;
	int net = XP_NET_ANY;
	for (size_t i = 0; i < job->n_groups; i++) {
		const struct xp_task_group *g = &job->groups[i];
		/* The constraint holds the whole job; a switch lies within one rack, so it is the stricter. */
		if (g->network == XP_NET_SWITCH || (g->network == XP_NET_RACK && net == XP_NET_ANY))
			net = g->network;
		if (!g->devices && !g->slice && g->share_pct <= 0)
			return xp_errf(err, "group %zu asks for no devices", i), NULL;
		if (g->devices > XP_MAX_DEVICES)
			return xp_errf(err, "group %zu asks for more than %d devices", i, XP_MAX_DEVICES), NULL;
		homog = homog || g->homogeneous;
	}
	int strategy = opts && opts->strategy >= 0 && opts->strategy < XP_STRAT_COUNT ? opts->strategy : XP_STRAT_PACK;
	struct pctx p = {.ix = ix, .c = c, .job = job, .strategy = strategy, .scan = opts && opts->scan,
			 .quiet = opts && opts->quiet, .bare = opts && opts->bare, .reconfigure = opts && opts->reconfigure, .net = net};

	/* Homogeneous: one attempt per kind of device in the cluster (sorted), best wins; a greedy
	 * first replica could otherwise lock the job onto a kind too scarce for the rest. Each
	 * kind by the device that made it (kinds differ in vendor, model or driver, so the sort
	 * has no ties and any device of the kind is its key). */
	size_t *keys = NULL; /* device slots, one per kind */
	size_t nk = 0;
	if (homog) {
		nk = ix->n_kinds;
		keys = xp_malloc((nk ? nk : 1) * sizeof *keys);
		if (nk)
			memcpy(keys, ix->kind_slot, nk * sizeof *keys);
	}
	for (size_t i = 1; i < nk; i++)
		for (size_t j = i; j > 0 && key_cmp(slot_dev(ix, keys[j - 1]), slot_dev(ix, keys[j])) > 0; j--) {
			size_t t = keys[j];
			keys[j] = keys[j - 1];
			keys[j - 1] = t;
		}
	p.qid = xp_calloc(job->n_groups, sizeof *p.qid);
	p.qid_old = xp_calloc(job->n_groups, sizeof *p.qid_old);
	p.one_product = xp_calloc(job->n_groups, sizeof *p.one_product);
	for (size_t gi = 0; gi < job->n_groups; gi++)
		p.one_product[gi] = one_product(&p, &job->groups[gi]);
	struct attempt best = {0};
	const struct xp_device *best_key = NULL;
	uint32_t best_kind = 0;
	/* topology keeps replicas close to each other too: a job of several replicas with no
	 * network constraint goes under one switch when one holds it, else in one rack, else
	 * anywhere (a switch hop costs more than any link inside a node). */
	size_t total = 0;
	for (size_t gi = 0; gi < job->n_groups; gi++)
		total += (size_t)job->groups[gi].replicas;
	int nets[3] = {net, net, net}, n_nets = 1;
	if (strategy == XP_STRAT_TOPOLOGY && net == XP_NET_ANY && total > 1) {
		nets[0] = XP_NET_SWITCH;
		nets[1] = XP_NET_RACK;
		nets[2] = XP_NET_ANY;
		n_nets = 3;
	}
	int got_net = net;
	for (int ni = 0; ni < n_nets; ni++) {
		p.net = nets[ni];
		struct attempt nbest = {0};
		const struct xp_device *nkey = NULL;
		uint32_t nkind = 0;
		bool nhave = false;
		for (size_t k = 0; k < (nk ? nk : 1); k++) {
			struct attempt t = {0};
			p.key = nk ? slot_dev(ix, keys[k]) : NULL;
			p.key_kind = nk ? ix->kind[keys[k]] : 0;
			/* Once per key, not per switch: the answers kept under it serve every attempt. */
			for (size_t gi = 0; gi < job->n_groups && !p.scan; gi++) {
				p.qid[gi] = query_of(&p, &job->groups[gi]);
				if (p.reconfigure && job->groups[gi].slice) {
					p.reconfigure = false;
					p.qid_old[gi] = query_of(&p, &job->groups[gi]);
					p.reconfigure = true;
				}
			}
			run_network(&p, &t);
			if (attempt_better(&t, &nbest, nhave)) {
				attempt_free(&nbest);
				nbest = t;
				nkey = p.key;
				nkind = p.key_kind;
				nhave = true;
			} else
				attempt_free(&t);
		}
		/* The narrowest scope that places the job wins; refused in all, the widest explains. */
		if (nbest.placed || ni == n_nets - 1) {
			attempt_free(&best);
			best = nbest;
			best_key = nkey;
			best_kind = nkind;
			got_net = nets[ni];
			break;
		}
		attempt_free(&nbest);
	}
	p.net = net;
	struct xp_place_result *r = xp_calloc(1, sizeof *r);
	r->placed = best.placed;
	r->strategy = strategy;
	r->n_nodes = c->n_nodes;
	r->reasons = best.reasons;
	r->n_reasons = best.n_reasons;
	best.reasons = NULL;
	best.n_reasons = 0;
	char *why = NULL;
	if (r->n_reasons) {
		size_t len = 64;
		for (size_t i = 0; i < r->n_reasons; i++)
			len += strlen(r->reasons[i].text) + 32;
		why = xp_malloc(len);
		/* The nodes the reasons cover: all of them, or one switch's for a pending replica. */
		size_t covered = 0;
		for (size_t i = 0; i < r->n_reasons; i++)
			covered += r->reasons[i].count;
		int w = snprintf(why, len, "0/%zu nodes fit%s:", covered,
				 best.placed && p.net != XP_NET_ANY ? p.net == XP_NET_SWITCH ? " under its switch" : " in its rack" : "");
		for (size_t i = 0; i < r->n_reasons; i++)
			w += snprintf(why + w, len - (size_t)w, "%s %zu %s", i ? "," : "", r->reasons[i].count,
				      r->reasons[i].text);
	}
	if (best.placed) {
		r->replicas = best.reps;
		r->n_replicas = best.n_reps;
		r->pending = best.pending;
		r->fit = best.n_reps;
		/* Nodes told apart among the replicas (a few: a scan of those before, not a
		 * per-node array cleared for every dry-run). */
		size_t distinct = 0;
		bool *seen = r->n_replicas > 64 ? xp_calloc(c->n_nodes ? c->n_nodes : 1, sizeof *seen) : NULL;
		for (size_t i = 0; i < r->n_replicas; i++) {
			size_t ni = r->replicas[i].node_ix;
			bool again = false;
			if (seen) {
				again = seen[ni];
				seen[ni] = true;
			} else
				for (size_t j = 0; j < i && !again; j++)
					again = r->replicas[j].node_ix == ni;
			distinct += !again;
		}
		free(seen);
		char *s = xp_asprintf("placed %zu replica%s on %zu node%s%s (%s)", r->n_replicas,
				      r->n_replicas == 1 ? "" : "s", distinct, distinct == 1 ? "" : "s",
				      got_net != net ? got_net == XP_NET_SWITCH ? " under one switch" : " in one rack" : "",
				      xp_strategy_name(strategy));
		if (r->pending) {
			r->summary = xp_asprintf("%s; %zu pending (gang minimum met)%s%s", s, r->pending,
						 why ? "; for one more: " : "", why ? why : "");
			free(s);
		} else
			r->summary = s;
	} else {
		r->fit = best.n_reps;
		/* Gang: nothing of a partial attempt is kept. */
		for (size_t i = 0; i < best.n_reps; i++)
			replica_free(&best.reps[i]);
		free(best.reps);
		const char *w = why ? why : "";
		/* Some replicas fit and then one did not: the reasons are that one's. */
		if (best.n_reps)
			r->summary = xp_asprintf("only %zu of %zu replicas fit; for the next, %s", best.n_reps, total,
						 why ? w : "no node fits");
		else
			r->summary = why ? xp_strdup(why) : xp_asprintf("0/%zu nodes fit", c->n_nodes);
	}
	free(why);
	if (opts && opts->explain_node) {
		for (size_t i = 0; i < c->n_nodes && !r->explained; i++)
			if (c->nodes[i]->name && strcmp(c->nodes[i]->name, opts->explain_node) == 0) {
				struct rec rc = {NULL, 0};
				struct answer *a = xp_malloc(sizeof *a);
				p.key = best_key;
				p.key_kind = best_kind;
				xpl_eval(&p, i, &job->groups[0], a, &rc);
				free(a);
				r->checks = rc.v;
				r->n_checks = rc.n;
				r->explained = true;
			}
	}
	free(keys);
	free(p.qid);
	free(p.qid_old);
	free(p.one_product);
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
	if (r->relaxation) {
		free(r->relaxation->field);
		free(r->relaxation->from);
		free(r->relaxation->to);
		free(r->relaxation->summary);
		free(r->relaxation);
	}
	free(r);
}
