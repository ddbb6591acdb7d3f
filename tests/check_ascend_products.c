/* check_ascend_products.c: the vendor's placement rule for the Ascend products beyond the Atlas
 * 800 (check_ascend_rule.c has that one), as Volcano's Ascend plugin applies it, against the
 * shipped manifest's [layout] sections (adapters/ascend/ascend.adapter). The expected answers
 * come from small references written here from the rule text (domain-rules.md "2. Ascend
 * affinity rules" and the plugin code the manifest cites), never from xpool's engine:
 *   - Atlas 200T A2 Box16 (910B x16): 1-8, 10, 12, 14 or 16; 8 or fewer in one group of 8
 *     (free counts n, n+1, ..., 8 tried in turn, the left group first, its lowest ids); 10, 12,
 *     14 in a job of one task as NPU p and p + 8 pairs, the lowest p first, in a job of several
 *     tasks as the i-th free NPU of the left group with the i-th of the right; 16 the whole
 *     node. A node that lists only 15 of its 16 NPUs: the missing one is healthy but never free.
 *   - A3 SuperPoD node (910C, 16 or 8 NPUs): 1 or an even count, 1 only in a job of one task;
 *     1 from a module (2k, 2k+1) with one usable NPU before a whole one; an even count takes
 *     whole modules, the lowest first.
 *   - Atlas 800T A2 (910B x8): 1 to 8, the lowest usable ids.
 *   - half910x4 (910B x4): 1, 2 or 4, the lowest usable ids.
 *   - Atlas 300I (310, four per card): 1 to 4 from one card, the card by its free count in the
 *     order 1: 1 3 2 4, 2: 2 3 4, 3: 3 4, 4: 4, cards in id order.
 *   - Atlas 300I Duo (310P3, two per card): 1 or 2 from one card; 1 from a card with 1 free first.
 * Node choice under pack follows each product's node score from the same code. A faulty NPU
 * counts as used everywhere. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "istr.h"
#include "jobspec.h"
#include "manifest.h"
#include "model.h"
#include "model_json.h"
#include "normalize.h"
#include "place.h"
#include "place_export.h"
#include "xp_adapter.h"
#include "suitelib.h"
#include "testlib.h"

#include <unistd.h>

enum npu { FREE, BUSY, FAULTY };

#define MAXN 16

static struct xp_manifest *ascend;

static void load(void)
{
	struct xp_err err = {{0}};
	ascend = xp_manifest_load("adapters/ascend/ascend.adapter", &err);
	ck_assert_msg(ascend != NULL, "%s", err.msg);
}

static void unload(void)
{
	xp_manifest_free(ascend);
	ascend = NULL;
}

/* ---- the references: each product's rule from its text ---- */

/* Each takes the node's state (n NPUs), a request of k, and writes the NPUs the plugin gives
 * (ascending) into out; returns their count, 0 when the plugin refuses. */
typedef size_t (*ref_fn)(const enum npu *st, int n, int k, int *out);
/* The plugin's node score for a request of k; any value when the node cannot take it. */
typedef long (*score_fn)(const enum npu *st, int n, int k);

static int count_free(const enum npu *st, int from, int to)
{
	int c = 0;
	for (int i = from; i < to; i++)
		c += st[i] == FREE;
	return c;
}

static int count_healthy(const enum npu *st, int n)
{
	int c = 0;
	for (int i = 0; i < n; i++)
		c += st[i] != FAULTY;
	return c;
}

/* The lowest k free NPUs of [from, to) into out. */
static size_t lowest(const enum npu *st, int from, int to, int k, int *out)
{
	size_t got = 0;
	for (int i = from; i < to && got < (size_t)k; i++)
		if (st[i] == FREE)
			out[got++] = i;
	return got;
}

/* Box16: NPUs 0-7 and 8-15; multi: a job of several tasks. */
static size_t box16(const enum npu *st, int k, bool multi, int *out)
{
	if (k < 1 || k > 16 || (k > 8 && k % 2))
		return 0; /* 9, 11, 13, 15 invalid */
	if (k == 16)
		return count_free(st, 0, 16) == 16 ? lowest(st, 0, 16, 16, out) : 0;
	if (k <= 8) {
		for (int p = k; p <= 8; p++) {
			if (count_free(st, 0, 8) == p)
				return lowest(st, 0, 8, k, out);
			if (count_free(st, 8, 16) == p)
				return lowest(st, 8, 16, k, out);
		}
		return 0;
	}
	if (multi) {
		/* The i-th free of the left with the i-th free of the right. */
		int l[8], r[8];
		size_t nl = lowest(st, 0, 8, 8, l), nr = lowest(st, 8, 16, 8, r);
		if ((nl < nr ? nl : nr) * 2 < (size_t)k)
			return 0;
		for (int i = 0; i < k / 2; i++) {
			out[i] = l[i];
			out[i + k / 2] = r[i];
		}
		return (size_t)k;
	}
	int pairs[8], np = 0;
	for (int q = 0; q < 8; q++)
		if (st[q] == FREE && st[q + 8] == FREE)
			pairs[np++] = q;
	if (np * 2 < k)
		return 0;
	for (int i = 0; i < k / 2; i++) {
		out[i] = pairs[i];
		out[i + k / 2] = pairs[i] + 8;
	}
	return (size_t)k;
}

static size_t ref_box16(const enum npu *st, int n, int k, int *out)
{
	(void)n;
	return box16(st, k, false, out);
}

static size_t ref_box16_multi(const enum npu *st, int n, int k, int *out)
{
	(void)n;
	return box16(st, k, true, out);
}

/* setNodeScore: 16 * (healthy - bestScore) + (16 - free); crossNPUNum counts pairs at the same
 * positions (one task) or twice the smaller group's free count (several). */
static long box16_score(const enum npu *st, int n, int k, bool multi)
{
	int l = count_free(st, 0, 8), r = count_free(st, 8, 16), best = 99;
	if (k == 16)
		best = 0;
	else if (k <= 8) {
		if (l >= k)
			best = l - k;
		if (r >= k && r - k < best)
			best = r - k;
	} else {
		int cross = 0;
		for (int q = 0; q < 8; q++)
			cross += 2 * (st[q] == FREE && st[q + 8] == FREE);
		if (multi)
			cross = 2 * (l < r ? l : r);
		best = (cross - k) / 2;
	}
	return 16L * (count_healthy(st, n) - best) + (16 - count_free(st, 0, n));
}

static long score_box16(const enum npu *st, int n, int k) { return box16_score(st, n, k, false); }
static long score_box16_multi(const enum npu *st, int n, int k) { return box16_score(st, n, k, true); }

/* A3: modules {2m, 2m+1}. */
static size_t ref_a3(const enum npu *st, int n, int k, int *out)
{
	if (k < 1 || k > 16 || (k > 1 && k % 2) || count_free(st, 0, n) < k)
		return 0;
	if (k == 1) {
		for (int want = 1; want <= 2; want++)
			for (int m = 0; m < n / 2; m++)
				if (count_free(st, 2 * m, 2 * m + 2) == want)
					return lowest(st, 2 * m, 2 * m + 2, 1, out);
		return 0;
	}
	size_t got = 0;
	for (int m = 0; m < n / 2 && got < (size_t)k; m++)
		if (st[2 * m] == FREE && st[2 * m + 1] == FREE) {
			out[got++] = 2 * m;
			out[got++] = 2 * m + 1;
		}
	return got == (size_t)k ? got : 0;
}

/* In a job of several tasks: even counts only ("only single task job can request single npu"). */
static size_t ref_a3_multi(const enum npu *st, int n, int k, int *out)
{
	return k % 2 ? 0 : ref_a3(st, n, k, out);
}

/* ScoreBestNPUNodes: 16 * (2 * 16 - bestScore), bestScore = usable - request, + 16 for one NPU
 * on a node with no module of one usable. */
static long score_a3(const enum npu *st, int n, int k)
{
	int best = count_free(st, 0, n) - k;
	if (k == 1) {
		bool single = false;
		for (int m = 0; m < n / 2; m++)
			single = single || count_free(st, 2 * m, 2 * m + 2) == 1;
		best += single ? 0 : 16;
	}
	return 16L * (2 * 16 - best);
}

/* 910B x8: flat, any count up to 8 (no invalid counts). */
static size_t ref_910bx8(const enum npu *st, int n, int k, int *out)
{
	if (k < 1 || k > 8 || count_free(st, 0, n) < k)
		return 0;
	return lowest(st, 0, n, k, out);
}

/* half910x4: flat, at most 4, 3 invalid. */
static size_t ref_half(const enum npu *st, int n, int k, int *out)
{
	if (k < 1 || k > 4 || k == 3 || count_free(st, 0, n) < k)
		return 0;
	return lowest(st, 0, n, k, out);
}

/* base ScoreBestNPUNodes: healthy * nodeWeight 100 - usable (free). */
static long score_910bx8(const enum npu *st, int n, int k)
{
	(void)k;
	return 100L * count_healthy(st, n) - count_free(st, 0, n);
}

/* Cards of size cs in id order: the first card whose free count is prio[0], else prio[1], ... */
static size_t ref_cards(const enum npu *st, int n, int cs, const int *prio, int np, int k, int *out)
{
	for (int p = 0; p < np; p++)
		for (int c = 0; c < n / cs; c++)
			if (count_free(st, c * cs, c * cs + cs) == prio[p])
				return lowest(st, c * cs, c * cs + cs, k, out);
	return 0;
}

static size_t ref_300i(const enum npu *st, int n, int k, int *out)
{
	static const int p1[] = {1, 3, 2, 4}, p2[] = {2, 3, 4}, p3[] = {3, 4}, p4[] = {4};
	static const int *const prio[] = {NULL, p1, p2, p3, p4};
	static const int np[] = {0, 4, 3, 2, 1};
	if (k < 1 || k > 4)
		return 0;
	return ref_cards(st, n, 4, prio[k], np[k], k, out);
}

/* card310x4 ScoreBestNPUNodes: 8 * (4 - the least affScoreList[k-1][free-1] over cards). */
static long score_300i(const enum npu *st, int n, int k)
{
	static const int aff[4][4] = {{0, 2, 1, 3}, {4, 0, 1, 2}, {4, 4, 0, 1}, {4, 4, 4, 0}};
	int best = 4;
	for (int c = 0; c < n / 4; c++) {
		int f = count_free(st, c * 4, c * 4 + 4);
		if (f && aff[k - 1][f - 1] < best)
			best = aff[k - 1][f - 1];
	}
	return 8L * (4 - best);
}

static size_t ref_duo(const enum npu *st, int n, int k, int *out)
{
	static const int p1[] = {1, 2}, p2[] = {2};
	if (k < 1 || k > 2)
		return 0;
	return ref_cards(st, n, 2, k == 1 ? p1 : p2, k == 1 ? 2 : 1, k, out);
}

/* card310px2 getScore: 8 * (2 - the least affScoreList[k-1][free-1] over cards). */
static long score_duo(const enum npu *st, int n, int k)
{
	static const int aff[2][2] = {{0, 1}, {2, 0}};
	int best = 2;
	for (int c = 0; c < n / 2; c++) {
		int f = count_free(st, c * 2, c * 2 + 2);
		if (f && aff[k - 1][f - 1] < best)
			best = aff[k - 1][f - 1];
	}
	return 8L * (2 - best);
}

/* ---- the products and xpool ---- */

struct product {
	const char *name;
	struct xp_test_devs devs; /* the test node's devices */
	int n;                    /* NPUs per node */
	ref_fn ref;
	score_fn score;
	bool multi;               /* a job of several tasks (2 replicas; the first is compared) */
	int vn;                   /* NPUs the vendor counts (0: n); those beyond n are never free */
};

#define B3 "Huawei", "Ascend 910B3", "24.1.RC2", 65536, 1
#define C "Huawei", "Ascend 910C", "24.1.RC2", 65536, 1
static const struct product products[] = {
	{"Box16", {B3, "hccs", 8}, 16, ref_box16, score_box16, false, 0},
	{"A3", {C, "card", 2}, 16, ref_a3, score_a3, false, 0},
	{"910B x8", {B3, "hccs", 8}, 8, ref_910bx8, score_910bx8, false, 0},
	{"300I", {"Huawei", "Ascend 310", "21.0.4", 8192, 1, "card", 4}, 12, ref_300i, score_300i, false, 0},
	{"300I Duo", {"Huawei", "Ascend 310P3", "24.1.RC2", 24576, 1, "card", 2}, 8, ref_duo, score_duo, false, 0},
	{"Box16 several tasks", {B3, "hccs", 8}, 16, ref_box16_multi, score_box16_multi, true, 0},
	{"A3 several tasks", {C, "card", 2}, 16, ref_a3_multi, score_a3, true, 0},
	{"910C x8", {C, "card", 2}, 8, ref_a3, score_a3, false, 0},
	{"half910x4", {B3, "hccs", 4}, 4, ref_half, score_910bx8, false, 0},
	{"Box16 of 15 listed", {B3, "hccs", 8}, 15, ref_box16, score_box16, false, 16},
	{"910B x8 several tasks", {B3, "hccs", 8}, 8, ref_910bx8, score_910bx8, true, 0},
};
#undef B3
#undef C
enum { P_BOX16, P_A3, P_910BX8, P_300I, P_DUO, P_BOX16M, P_A3M, P_A3X8, P_HALF, P_BOX15, P_910BX8M, N_PRODUCTS };

/* The state the vendor sees: the node's, and the NPUs it counts beyond them busy. */
static int vendor_state(const struct product *P, const enum npu *st, enum npu *vs)
{
	int vn = P->vn ? P->vn : P->n;
	for (int i = 0; i < vn; i++)
		vs[i] = i < P->n ? st[i] : BUSY;
	return vn;
}

static void set_state(struct xp_node *nd, const enum npu *st, int n)
{
	for (int i = 0; i < n; i++) {
		struct xp_device *d = &nd->devices[i];
		if (st[i] == FAULTY)
			d->health = XP_HEALTH_FAIL;
		if (st[i] == BUSY) {
			d->allocs = xp_realloc(d->allocs, (d->n_allocs + 1) * sizeof *d->allocs);
			d->allocs[d->n_allocs++] = (struct xp_alloc){NULL, xp_strdup("other"), -1, 0};
		}
	}
}

/* Places k NPUs of any Ascend model; multi: as the first of 2 replicas (gang minimum 1, so
 * that the first is placed whether or not the second fits). */
static struct xp_place_result *place_k(const struct xp_cluster *c, int k, int strategy, bool multi)
{
	char spec[128];
	snprintf(spec, sizeof spec, "{\"devices\": %d, \"model\": \"Ascend*\"%s}", k,
		 multi ? ", \"replicas\": 2, \"gang_min\": 1" : "");
	struct xp_err err = {{0}};
	struct xp_job *j = xp_job_parse(spec, strlen(spec), NULL, &err);
	ck_assert_msg(j != NULL, "%s", err.msg);
	struct xp_place_opts o = {.strategy = strategy};
	const struct xp_manifest *ms[1] = {ascend};
	struct xp_place_result *r = xp_place(c, j, ms, 1, &o, &err);
	ck_assert_msg(r != NULL, "%s", err.msg);
	xp_job_free(j);
	return r;
}

static void list_text(const int *v, size_t n, char *out, size_t len)
{
	out[0] = 0;
	for (size_t i = 0; i < n; i++)
		snprintf(out + strlen(out), len - strlen(out), "%s%d", i ? "," : "", v[i]);
}

static void state_text(const enum npu *st, int n, char *out)
{
	for (int i = 0; i < n; i++)
		out[i] = "fbx"[st[i]];
	out[n] = 0;
}

/* Seeded patterns: each with its own density, so that sparse and full nodes both come up; a
 * fifth of them without faults. */
static uint64_t rng = 0x9e3779b97f4a7c15u;
static unsigned next(unsigned mod)
{
	rng = rng * 6364136223846793005u + 1442695040888963407u;
	return (unsigned)(rng >> 33) % mod;
}

static void pattern(enum npu *st, int n, int idx)
{
	unsigned busy = next(100), faulty = idx % 5 == 0 ? 0 : next(15);
	for (int i = 0; i < n; i++) {
		unsigned r = next(100);
		st[i] = r < faulty ? FAULTY : r < faulty + busy ? BUSY : FREE;
	}
	if (idx == 0) /* one all free */
		for (int i = 0; i < n; i++)
			st[i] = FREE;
}

static size_t agreed[N_PRODUCTS], refusals[N_PRODUCTS], choices[N_PRODUCTS], chosen[N_PRODUCTS];

/* One pattern of product pr, every request size 1..n under strategy: xpool's devices (or its
 * refusal) are the reference's. */
static void golden(int pr, const enum npu *st, int strategy)
{
	const struct product *P = &products[pr];
	struct xp_cluster *c = xp_cluster_new();
	set_state(xp_test_node(c, "n", P->n, &P->devs), st, P->n);
	char s[MAXN + 1];
	state_text(st, P->n, s);
	enum npu vs[MAXN];
	int vn = vendor_state(P, st, vs);
	for (int k = 1; k <= vn; k++) {
		int want[MAXN];
		size_t nw = P->ref(vs, vn, k, want);
		struct xp_place_result *r = place_k(c, k, strategy, P->multi);
		if (!nw) {
			ck_assert_msg(!r->placed, "%s %s k=%d: the plugin refuses, xpool placed %s", P->name, s, k,
				      r->placed ? r->replicas[0].env_value : "");
			refusals[pr]++;
		} else {
			ck_assert_msg(r->placed, "%s %s k=%d: the plugin places, xpool refuses: %s", P->name, s, k,
				      r->summary);
			char exp[64];
			list_text(want, nw, exp, sizeof exp);
			ck_assert_msg(strcmp(r->replicas[0].env_value, exp) == 0, "%s %s k=%d: plugin %s, xpool %s",
				      P->name, s, k, exp, r->replicas[0].env_value);
		}
		agreed[pr]++;
		xp_place_result_free(r);
	}
	xp_cluster_free(c);
}

/* 300 seeded patterns per product x every request size 1..n, under pack and spread (the rule
 * picks the devices whatever ranks the nodes). */
static void golden_product(int pr)
{
	const struct product *P = &products[pr];
	agreed[pr] = refusals[pr] = 0;
	enum npu st[MAXN];
	for (int strategy = XP_STRAT_PACK; strategy <= XP_STRAT_SPREAD; strategy++)
		for (int i = 0; i < 300; i++) {
			pattern(st, P->n, i);
			golden(pr, st, strategy);
		}
	ck_assert_uint_eq(agreed[pr], 300u * (size_t)(P->vn ? P->vn : P->n) * 2);
	ck_assert(refusals[pr] > 0 && refusals[pr] < agreed[pr]);
	fprintf(stderr, "ascend_products: %s: %zu cases agree with the plugin's rule: %zu placements compared, "
		"%zu refusals\n", P->name, agreed[pr], agreed[pr] - refusals[pr], refusals[pr]);
}

/* Node choice under pack: among three nodes in seeded states, xpool takes the node with the
 * plugin's highest score (the first by name among equals), and there the plugin's devices. */
static void node_choice(int pr)
{
	const struct product *P = &products[pr];
	static const char *const names[] = {"n0", "n1", "n2"};
	choices[pr] = chosen[pr] = 0;
	for (int t = 0; t < 200; t++) {
		enum npu st[3][MAXN];
		struct xp_cluster *c = xp_cluster_new();
		for (int v = 0; v < 3; v++) {
			pattern(st[v], P->n, t * 3 + v + 1);
			set_state(xp_test_node(c, names[v], P->n, &P->devs), st[v], P->n);
		}
		enum npu vs[3][MAXN];
		int vn = 0;
		for (int v = 0; v < 3; v++)
			vn = vendor_state(P, st[v], vs[v]);
		for (int k = 1; k <= vn; k++) {
			int pick = -1, tmp[MAXN];
			long ps = 0;
			for (int v = 0; v < 3; v++) {
				if (!P->ref(vs[v], vn, k, tmp))
					continue;
				long sc = P->score(vs[v], vn, k);
				if (pick < 0 || sc > ps) {
					pick = v;
					ps = sc;
				}
			}
			struct xp_place_result *r = place_k(c, k, XP_STRAT_PACK, P->multi);
			if (pick < 0)
				ck_assert_msg(!r->placed, "%s case %d k=%d: the plugin finds no node", P->name, t, k);
			else {
				int want[MAXN];
				char exp[64];
				list_text(want, P->ref(vs[pick], vn, k, want), exp, sizeof exp);
				chosen[pr]++;
				ck_assert_msg(r->placed, "%s case %d k=%d: %s", P->name, t, k, r->summary);
				ck_assert_msg(strcmp(r->replicas[0].node, names[pick]) == 0 &&
						      strcmp(r->replicas[0].env_value, exp) == 0,
					      "%s case %d k=%d: plugin %s=%s, xpool %s=%s", P->name, t, k, names[pick],
					      exp, r->replicas[0].node, r->replicas[0].env_value);
			}
			choices[pr]++;
			xp_place_result_free(r);
		}
		xp_cluster_free(c);
	}
	fprintf(stderr, "ascend_products: %s: %zu node choices agree with the plugin's score (%zu placed, %zu "
		"refused)\n", P->name, choices[pr], chosen[pr], choices[pr] - chosen[pr]);
}

START_TEST(golden_box16) { golden_product(P_BOX16); }
END_TEST
START_TEST(golden_a3) { golden_product(P_A3); }
END_TEST
START_TEST(golden_910bx8) { golden_product(P_910BX8); }
END_TEST
START_TEST(golden_300i) { golden_product(P_300I); }
END_TEST
START_TEST(golden_duo) { golden_product(P_DUO); }
END_TEST
START_TEST(choice_box16) { node_choice(P_BOX16); }
END_TEST
START_TEST(choice_a3) { node_choice(P_A3); }
END_TEST
START_TEST(choice_910bx8) { node_choice(P_910BX8); }
END_TEST
START_TEST(choice_300i) { node_choice(P_300I); }
END_TEST
START_TEST(choice_duo) { node_choice(P_DUO); }
END_TEST

START_TEST(golden_box16_multi) { golden_product(P_BOX16M); }
END_TEST

START_TEST(golden_a3_multi) { golden_product(P_A3M); }
END_TEST

START_TEST(golden_a3x8) { golden_product(P_A3X8); }
END_TEST

START_TEST(golden_half) { golden_product(P_HALF); }
END_TEST

START_TEST(golden_box15) { golden_product(P_BOX15); }
END_TEST

START_TEST(golden_910bx8_multi) { golden_product(P_910BX8M); }
END_TEST

START_TEST(choice_box16_multi) { node_choice(P_BOX16M); }
END_TEST

START_TEST(choice_a3_multi) { node_choice(P_A3M); }
END_TEST

START_TEST(choice_a3x8) { node_choice(P_A3X8); }
END_TEST

START_TEST(choice_half) { node_choice(P_HALF); }
END_TEST

START_TEST(choice_box15) { node_choice(P_BOX15); }
END_TEST

/* The cases the rule text names: Box16 10 NPUs as matching halves; A3 free {0,2,3,4} and 2 NPUs
 * -> {2,3}; a 300I card with 3 free before one with 2 for one NPU; a Duo card with 1 free first. */
START_TEST(named_cases)
{
	static const struct {
		int pr;
		const char *state; /* f free, b busy, x faulty */
		int k;
		const char *want; /* NULL: refused */
	} cases[] = {
		{P_BOX16, "ffffffbbfffbffff", 10, "0,1,2,4,5,8,9,10,12,13"},
		{P_BOX16, "ffffffffffffffff", 16, "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15"},
		{P_BOX16, "ffffffffffffffff", 9, NULL},
		{P_BOX16, "bbbbbfffffffffff", 3, "5,6,7"},
		{P_A3, "fbfffbbbbbbbbbbb", 2, "2,3"},
		{P_A3, "fbfffbbbbbbbbbbb", 1, "0"},
		{P_A3, "fbfbfbfbfbfbfbfb", 2, NULL},
		{P_A3, "ffffffffffffffff", 3, NULL},
		{P_910BX8, "bfxfbfff", 4, "1,3,5,6"},
		{P_910BX8, "bfxfbfff", 3, "1,3,5"},
		{P_910BX8, "ffffffff", 7, "0,1,2,3,4,5,6"},
		{P_BOX16M, "fffffbbbbbbfffff", 10, "0,1,2,3,4,11,12,13,14,15"},
		{P_BOX16, "fffffbbbbbbfffff", 10, NULL},
		{P_A3M, "ffffffffffffffff", 1, NULL},
		{P_A3X8, "ffffffff", 3, NULL},
		{P_A3X8, "fbffffff", 1, "0"},
		{P_HALF, "ffff", 3, NULL},
		{P_HALF, "bfff", 2, "1,2"},
		{P_BOX15, "fffffffffffffff", 8, "0,1,2,3,4,5,6,7"},
		{P_BOX15, "fffffffffffffff", 9, NULL},
		{P_BOX15, "fffffffffffffff", 15, NULL},
		{P_BOX15, "fffffffffffffff", 14, "0,1,2,3,4,5,6,8,9,10,11,12,13,14"},
		{P_BOX15, "fffffffffffffff", 16, NULL},
		{P_300I, "fffbffbbffff", 1, "0"},
		{P_300I, "ffbbffbbfffx", 1, "8"},
		{P_300I, "ffbbffbbfffb", 2, "0,1"},
		{P_300I, "ffffffffffff", 5, NULL},
		{P_DUO, "ffffbfff", 1, "5"},
		{P_DUO, "ffffbfff", 2, "0,1"},
		{P_DUO, "ffffffff", 3, NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct product *P = &products[cases[i].pr];
		enum npu st[MAXN];
		for (int d = 0; d < P->n; d++)
			st[d] = cases[i].state[d] == 'f' ? FREE : cases[i].state[d] == 'b' ? BUSY : FAULTY;
		struct xp_cluster *c = xp_cluster_new();
		set_state(xp_test_node(c, "n", P->n, &P->devs), st, P->n);
		struct xp_place_result *r = place_k(c, cases[i].k, XP_STRAT_PACK, P->multi);
		if (!cases[i].want) {
			ck_assert_msg(!r->placed, "%s %s k=%d placed", P->name, cases[i].state, cases[i].k);
			if (count_free(st, 0, P->n) >= cases[i].k)
				ck_assert_msg(r->n_reasons && strstr(r->reasons[0].text, "vendor's rule"), "%s %s k=%d: %s",
					      P->name, cases[i].state, cases[i].k,
					      r->n_reasons ? r->reasons[0].text : "(no reason)");
		} else {
			ck_assert_msg(r->placed, "%s %s k=%d: %s", P->name, cases[i].state, cases[i].k, r->summary);
			ck_assert_str_eq(r->replicas[0].env_value, cases[i].want);
		}
		xp_place_result_free(r);
		xp_cluster_free(c);
	}
}
END_TEST

/* Which rule a node places by: its model and how many of it the node holds. */
START_TEST(layout_choice)
{
	const struct xp_mmodel *b3 = xp_manifest_model(ascend, "Ascend 910B3", -1);
	ck_assert_ptr_nonnull(b3);
	const struct xp_mmodel *x16 = xp_manifest_layout(ascend, b3, 16), *x8 = xp_manifest_layout(ascend, b3, 8);
	ck_assert_str_eq(x16->layout, "Atlas 200T A2 Box16");
	ck_assert_str_eq(x8->layout, "Atlas 800T A2");
	ck_assert_str_eq(x16->name, "Ascend 910B3");
	ck_assert_ptr_eq(x16->templates, b3->templates); /* the model's own parts, shared */
	ck_assert_str_eq(xp_manifest_layout(ascend, b3, 4)->layout, "Ascend 910B half x4");
	ck_assert_str_eq(xp_manifest_layout(ascend, b3, 2)->layout, "Ascend 910B half x4");
	ck_assert_str_eq(xp_manifest_layout(ascend, b3, 7)->layout, "Atlas 800T A2");
	ck_assert_str_eq(xp_manifest_layout(ascend, b3, 15)->layout, "Atlas 200T A2 Box16");
	ck_assert(xp_manifest_count_ok(x16, 10) && !xp_manifest_count_ok(x16, 9) && xp_manifest_count_ok(x8, 3));
	ck_assert(!xp_manifest_count_ok(xp_manifest_layout(ascend, b3, 4), 3));
	ck_assert_int_eq(x16->wide, XP_WIDE_MIRROR);
	ck_assert_int_eq(xp_manifest_wide(x16, true), XP_WIDE_PAIR);
	ck_assert_int_eq(xp_manifest_wide(x16, false), XP_WIDE_MIRROR);
	ck_assert_int_eq(x16->n_ring_prio[3], 6); /* 3-8 */
	const struct xp_mmodel *c = xp_manifest_model(ascend, "Ascend 910C", -1);
	ck_assert_str_eq(xp_manifest_layout(ascend, c, 16)->layout, "Atlas 900 A3 SuperPoD node");
	ck_assert_str_eq(xp_manifest_layout(ascend, c, 8)->layout, "Atlas 900 A3 SuperPoD node");
	uint64_t m1 = xp_manifest_task_counts(xp_manifest_layout(ascend, c, 16), false),
		 mm = xp_manifest_task_counts(xp_manifest_layout(ascend, c, 16), true);
	ck_assert(m1 & 1);
	ck_assert(!(mm & 1) && (mm >> 1 & 1));
	const struct xp_mmodel *p310 = xp_manifest_model(ascend, "Ascend 310", -1);
	ck_assert_str_eq(xp_manifest_layout(ascend, p310, 3)->layout, "Atlas 300I"); /* any size */
	ck_assert_int_eq(xp_manifest_layout(ascend, p310, 3)->affinity, XP_AFF_CARD);
	/* A 910B job of 10 passes the job check (a Box16 takes it); one of 9 fits no product of
	 * the model but the model itself sets no counts, so nodes judge it. */
	const struct xp_manifest *ms[1] = {ascend};
	const char spec[] = "{\"devices\": 10, \"model\": \"Ascend 910B3\"}";
	struct xp_err err = {{0}};
	struct xp_job *j = xp_job_parse(spec, strlen(spec), NULL, &err);
	ck_assert_msg(j != NULL, "%s", err.msg);
	ck_assert_msg(xp_job_check(j, ms, 1, &err) == 0, "%s", err.msg);
	xp_job_free(j);
}
END_TEST

/* The new keys parse, and bad values are refused with their line. */
START_TEST(layout_keys)
{
	const char good[] = "[adapter]\nname = t\n[model M1]\n[model M2]\n[layout L]\nmodels = M*\ndevices = 4-6,8\n"
			    "affinity = card:2\ncounts = 1-3\nring_priority = 1: 1-2\nwide = mirror\n"
			    "node_score = healthy:3 free:-2\n";
	struct xp_err err = {{0}};
	struct xp_manifest *m = xp_manifest_parse(good, strlen(good), "t.adapter", &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	ck_assert_uint_eq(m->n_variants, 2);
	const struct xp_mmodel *v = xp_manifest_layout(m, &m->models[1], 5);
	ck_assert_ptr_eq(v, &m->variants[1]);
	ck_assert_ptr_eq(xp_manifest_layout(m, &m->models[1], 7), &m->models[1]);
	ck_assert_int_eq(v->affinity, XP_AFF_CARD);
	ck_assert_int_eq(v->ring_size, 2);
	ck_assert_uint_eq(v->n_ring_prio[1], 2);
	ck_assert(v->has_score && v->score_w[XP_SCORE_HEALTHY] == 3 && v->score_w[XP_SCORE_RANK] == 0 &&
		  v->score_w[XP_SCORE_FREE] == -2);
	ck_assert(xp_manifest_count_ok(v, 3) && !xp_manifest_count_ok(v, 4));
	xp_manifest_free(m);
	/* The rule of a job of several tasks, and the Kubernetes metadata, repeatable. */
	const char more[] = "[adapter]\nname = t\n[model M]\n[layout L]\nmodels = M\ncounts = 1-4\ncounts_multi = 2,4\n"
			    "wide_multi = pair\nk8s_node_selector = accelerator-type=x\nk8s_pod_label = a=b\n"
			    "k8s_pod_label = c=d\nk8s_pod_annotation = e/f=g\n";
	m = xp_manifest_parse(more, strlen(more), "t.adapter", &err);
	ck_assert_msg(m != NULL, "%s", err.msg);
	v = &m->variants[0];
	ck_assert_uint_eq(xp_manifest_task_counts(v, false), 0xf);
	ck_assert_uint_eq(xp_manifest_task_counts(v, true), 0xa);
	ck_assert_int_eq(xp_manifest_wide(v, true), XP_WIDE_PAIR);
	ck_assert_int_eq(xp_manifest_wide(v, false), XP_WIDE_WHOLE);
	ck_assert_uint_eq(v->n_k8s_selector, 1);
	ck_assert_str_eq(v->k8s_selector[0].key, "accelerator-type");
	ck_assert_str_eq(v->k8s_selector[0].value, "x");
	ck_assert_uint_eq(v->n_k8s_label, 2);
	ck_assert_str_eq(v->k8s_label[1].key, "c");
	ck_assert_uint_eq(v->n_k8s_annotation, 1);
	ck_assert_str_eq(v->k8s_annotation[0].key, "e/f");
	xp_manifest_free(m);
	static const char *const bad[] = {"models = X*", "devices = 0", "devices = 5-3", "wide = half",
					  "wide_multi = half", "counts_multi = 0", "k8s_pod_label = novalue",
					  "k8s_node_selector = =v", "k8s_pod_annotation = a=b c",
					  "node_score = healthy", "node_score = busy:1", "node_score = rank:1 rank:2",
					  "memory_mib = 5", "affinity = card:0", "counts = 1-99"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char text[256];
		snprintf(text, sizeof text, "[adapter]\nname = t\n[model M]\n[layout L]\n%s%s\n",
			 strncmp(bad[i], "models", 6) ? "models = M\n" : "", bad[i]);
		memset(&err, 0, sizeof err);
		m = xp_manifest_parse(text, strlen(text), "t.adapter", &err);
		ck_assert_msg(m == NULL, "accepted: %s", bad[i]);
		ck_assert_msg(strstr(err.msg, "t.adapter:"), "%s", err.msg);
	}
}
END_TEST

/* A node of n raw devices of name; chips > 0: n / chips cards (the tool's index) of chips each. */
static struct xp_node *normalized(int n, const char *name, int chips)
{
	struct xp_node *nd = xp_node_new("n");
	struct xp_raw_node *r = calloc(1, sizeof *r);
	ck_assert_ptr_nonnull(r);
	xp_raw_node_init(r);
	for (int i = 0; i < n; i++) {
		struct xp_raw_device *d = &r->devices[r->n_devices++];
		xp_raw_device_init(d);
		d->index = chips ? 4 + i / chips : i; /* cards need not start at 0 (npu-smi: NPU 6) */
		d->chip = chips ? i % chips : 0;
		snprintf(d->bus_id, sizeof d->bus_id, "0000:%02x:00.0", 0x10 + i);
		snprintf(d->name, sizeof d->name, "%s", name);
	}
	xp_normalize_merge(nd, r, ascend, "ascend");
	free(r);
	return nd;
}

/* Discovery groups a node's devices by the layout its size selects: a 910B node of 16 in two
 * HCCS groups of 8, one of 8 in one; Atlas 300I chips by the card npu-smi lists them on, with
 * no HCCS link implied between them. */
START_TEST(layout_groups)
{
	struct xp_node *n = normalized(16, "Ascend 910B3", 0);
	ck_assert_uint_eq(n->n_devices, 16);
	ck_assert_str_eq(n->devices[7].affinity_group, "hccs:0");
	ck_assert_str_eq(n->devices[8].affinity_group, "hccs:1");
	ck_assert_int_eq(xp_node_link(n, 8, 15)->cls, XP_LINK_HCCS);
	ck_assert_int_ne(xp_node_link(n, 7, 8)->cls, XP_LINK_HCCS);
	xp_node_free(n);
	n = normalized(8, "Ascend 910B3", 0);
	ck_assert_str_eq(n->devices[0].affinity_group, "hccs:0");
	ck_assert_str_eq(n->devices[7].affinity_group, "hccs:0");
	xp_node_free(n);
	n = normalized(8, "MiniD", 4);
	ck_assert_str_eq(n->devices[0].affinity_group, "card:4");
	ck_assert_str_eq(n->devices[3].affinity_group, "card:4");
	ck_assert_str_eq(n->devices[4].affinity_group, "card:5");
	ck_assert_int_ne(xp_node_link(n, 0, 1)->cls, XP_LINK_HCCS);
	xp_node_free(n);
	n = normalized(16, "Ascend 910C", 0); /* no chips listed: consecutive pairs */
	ck_assert_str_eq(n->devices[2].affinity_group, "card:1");
	ck_assert_str_eq(n->devices[3].affinity_group, "card:1");
	xp_node_free(n);
}
END_TEST

/* An inventory written without affinity groups: place gives the groups discovery would (the
 * layout by the node's size, by device index), so the vendor's rule applies as on a discovered
 * node: 16 free of a Box16 are the whole node, 1 goes to the left group, 10 split at matching
 * positions. */
START_TEST(inventory_groups)
{
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *nd = xp_test_node(c, "box", 16, &products[P_BOX16].devs);
	xp_node_links_reset(nd);
	for (size_t i = 0; i < nd->n_devices; i++) {
		xp_istr_drop(nd->devices[i].affinity_group);
		nd->devices[i].affinity_group = NULL;
		for (size_t k = 0; k < nd->n_devices; k++)
			*xp_node_link(nd, i, k) = (struct xp_link){i == k ? XP_LINK_SELF : XP_LINK_SYS, 0};
	}
	enum npu st[MAXN];
	for (int i = 0; i < 16; i++)
		st[i] = i == 2 || i == 13 ? BUSY : FREE;
	set_state(nd, st, 16);
	json_t *j = xp_cluster_to_json(c);
	char *text = json_dumps(j, 0);
	ck_assert(text && !strstr(text, "hccs:"));
	char *path = xp_tmpfile(text, strlen(text));
	static const struct {
		const char *k, *want;
	} cases[] = {{"14", NULL}, {"1", "0"}, {"10", "0,1,3,4,6,8,9,11,12,14"}, {"6", "0,1,3,4,5,6"}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct xp_run r;
		ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", path, "place", "--dry-run", "--devices",
					      cases[i].k, "--model", "Ascend*", NULL), 0);
		if (!cases[i].want) {
			ck_assert_msg(r.status == 3 && strstr(r.out, "at the same positions in each of the 2 HCCS groups"),
				      "k=%s: exit %d: %s%s", cases[i].k, r.status, r.out, r.err);
		} else {
			char env[96];
			snprintf(env, sizeof env, "ASCEND_VISIBLE_DEVICES=%s\n", cases[i].want);
			ck_assert_msg(r.status == 0 && strstr(r.out, env), "k=%s: exit %d: %s%s", cases[i].k, r.status,
				      r.out, r.err);
		}
		xp_run_free(&r);
	}
	unlink(path);
	free(path);
	free(text);
	json_decref(j);
	xp_cluster_free(c);
}
END_TEST

/* The groups given to a node that clusters share (the agent pool's nodes, issue 15) go on a copy:
 * a shared node is never changed, since another thread may be reading it; a node of one owner
 * is given them in place, and one that needs none is left as it is. */
START_TEST(groups_copy_on_write)
{
	const struct xp_manifest *ms[] = {ascend};
	struct xp_cluster *c = xp_cluster_new(), *other = xp_cluster_new();
	struct xp_node *nd = xp_test_node(c, "box", 16, &products[P_BOX16].devs);
	for (size_t i = 0; i < nd->n_devices; i++) {
		xp_istr_drop(nd->devices[i].affinity_group);
		nd->devices[i].affinity_group = NULL;
	}
	xp_cluster_add(other, xp_node_ref(nd));
	xp_normalize_groups_cow(&c->nodes[0], ms, 1);
	ck_assert_ptr_ne(c->nodes[0], nd);
	ck_assert_ptr_eq(other->nodes[0], nd);
	for (size_t i = 0; i < nd->n_devices; i++) {
		ck_assert_ptr_null(nd->devices[i].affinity_group);
		ck_assert_ptr_nonnull(c->nodes[0]->devices[i].affinity_group);
	}
	/* Now each node has one owner: the copy needs nothing, the original changes in place. */
	struct xp_node *copy = c->nodes[0];
	xp_normalize_groups_cow(&c->nodes[0], ms, 1);
	ck_assert_ptr_eq(c->nodes[0], copy);
	xp_normalize_groups_cow(&other->nodes[0], ms, 1);
	ck_assert_ptr_eq(other->nodes[0], nd);
	ck_assert_str_eq(nd->devices[0].affinity_group, copy->devices[0].affinity_group);
	xp_cluster_free(c);
	xp_cluster_free(other);
}
END_TEST

/* A cluster of six Ascend products (the review's mixed repro): each vendor score ranks nodes of
 * its own product only, so between products pack's own score decides: the A3 node, fullest
 * after the replica (14 of 16 in use), takes 2 NPUs as its rule gives them (a whole module),
 * not the 300I Duo node that each product's score scaled to its own range put first. Within
 * one product the vendor's score still ranks (the choice_* tests). */
START_TEST(mixed_products)
{
	static const struct {
		const char *name, *state;
		struct xp_test_devs devs;
	} nodes[] = {
		{"box", "ffffffbbfffbffff", {"Huawei", "Ascend 910B3", "24.1.RC2", 65536, 1, "hccs", 8}},
		{"a2", "fbffffff", {"Huawei", "Ascend 910B3", "24.1.RC2", 65536, 1, "hccs", 8}},
		{"old", "ffffbfff", {"Huawei", "Ascend 910A", "24.1.RC2", 32768, 1, "hccs", 4}},
		{"a3", "fbfffbbbbbbbbbbb", {"Huawei", "Ascend 910C", "24.1.RC2", 65536, 1, "card", 2}},
		{"i300", "ffbfffffbbff", {"Huawei", "Ascend 310", "21.0.4", 8192, 1, "card", 4}},
		{"duo", "fbffffff", {"Huawei", "Ascend 310P3", "24.1.RC2", 24576, 1, "card", 2}},
	};
	struct xp_cluster *c = xp_cluster_new();
	for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
		int n = (int)strlen(nodes[i].state);
		enum npu st[MAXN];
		for (int d = 0; d < n; d++)
			st[d] = nodes[i].state[d] == 'f' ? FREE : BUSY;
		set_state(xp_test_node(c, nodes[i].name, n, &nodes[i].devs), st, n);
	}
	struct xp_place_result *r = place_k(c, 2, XP_STRAT_PACK, false);
	ck_assert_msg(r->placed, "%s", r->summary);
	ck_assert_str_eq(r->replicas[0].node, "a3");
	ck_assert_str_eq(r->replicas[0].env_value, "2,3");
	xp_place_result_free(r);
	xp_cluster_free(c);
}
END_TEST

/* Refusals say the limit's unit: the 300I and Duo limits are per replica on one card, the A3's
 * per replica on one node, and its groups are "card" groups, not "CARD". */
START_TEST(refusal_texts)
{
	static const struct {
		int pr, k;
		const char *state, *want;
	} cases[] = {
		{P_300I, 5, "ffffffffffff", "allows 1, 2, 3 or 4 per replica on one card, not 5"},
		{P_DUO, 3, "ffffffff", "allows 1 or 2 per replica on one card, not 3"},
		{P_A3, 3, "ffffffffffffffff", "per replica on one node, not 3"},
		{P_A3, 4, "fbfffbbbbbbbbbbb", "fewer than 2 whole free card groups of Ascend 910C"},
		{P_A3M, 1, "ffffffffffffffff", "per replica on one node in a job of several replicas, not 1"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct product *P = &products[cases[i].pr];
		enum npu st[MAXN];
		for (int d = 0; d < P->n; d++)
			st[d] = cases[i].state[d] == 'f' ? FREE : BUSY;
		struct xp_cluster *c = xp_cluster_new();
		set_state(xp_test_node(c, "n", P->n, &P->devs), st, P->n);
		struct xp_place_result *r = place_k(c, cases[i].k, XP_STRAT_PACK, P->multi);
		ck_assert_msg(!r->placed && r->n_reasons && strstr(r->reasons[0].text, cases[i].want), "%s k=%d: %s",
			      P->name, cases[i].k, r->n_reasons ? r->reasons[0].text : r->summary);
		xp_place_result_free(r);
		xp_cluster_free(c);
	}
}
END_TEST

/* A Box16 whose npu-smi lists 15 NPUs scores as the plugin scores it (MaxNodeNPUNum 16 less
 * the unhealthy: the missing NPU healthy, never free): the same as a node of 16 with that NPU
 * busy, so the first by name wins the tie; counted as 15 healthy it would lose by 16. */
START_TEST(missing_npu_score)
{
	for (int k = 1; k <= 14; k++) {
		if (k == 9 || k == 11 || k == 13)
			continue;
		struct xp_cluster *c = xp_cluster_new();
		xp_test_node(c, "a15", 15, &products[P_BOX16].devs);
		enum npu st[MAXN];
		for (int i = 0; i < 16; i++)
			st[i] = i == 15 ? BUSY : FREE;
		set_state(xp_test_node(c, "b16", 16, &products[P_BOX16].devs), st, 16);
		struct xp_place_result *r = place_k(c, k, XP_STRAT_PACK, false);
		ck_assert_msg(r->placed && !strcmp(r->replicas[0].node, "a15"), "k=%d: %s %s", k, r->summary,
			      r->placed ? r->replicas[0].node : "");
		xp_place_result_free(r);
		xp_cluster_free(c);
	}
	/* NPU 12 missing: positions are indices within the group, so p = 4 has no pair; 10 NPUs
	 * take p = 0, 1, 2, 3 and 5 with p + 8. */
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *nd = xp_test_node(c, "n", 15, &products[P_BOX16].devs);
	for (size_t i = 12; i < nd->n_devices; i++) {
		nd->devices[i].index = (int)i + 1;
		xp_istr_drop(nd->devices[i].affinity_group);
		nd->devices[i].affinity_group = xp_strdup("hccs:1");
	}
	struct xp_place_result *r = place_k(c, 10, XP_STRAT_PACK, false);
	ck_assert_msg(r->placed, "%s", r->summary);
	ck_assert_str_eq(r->replicas[0].env_value, "0,1,2,3,5,8,9,10,11,13");
	xp_place_result_free(r);
	xp_cluster_free(c);
}
END_TEST

/* Exports a placement of spec on c as fmt (flavor: 0 or XP_FLAVOR_HAMI); NULL with err set
 * when refused. */
static char *export_of(const struct xp_cluster *c, const char *spec, int fmt, int flavor, struct xp_err *err)
{
	struct xp_job *j = xp_job_parse(spec, strlen(spec), NULL, err);
	ck_assert_msg(j != NULL, "%s", err->msg);
	struct xp_place_opts o = {.strategy = XP_STRAT_PACK};
	const struct xp_manifest *ms[1] = {ascend};
	struct xp_place_result *r = xp_place(c, j, ms, 1, &o, err);
	ck_assert_msg(r && r->placed, "%s: %s", spec, r ? r->summary : err->msg);
	struct xp_export_opts eo = {.flavor = flavor};
	char *y = xp_place_export(fmt, r, j, c, ms, 1, &eo, err);
	xp_place_result_free(r);
	xp_job_free(j);
	return y;
}

/* The Pod metadata Volcano's plugin picks the handler by (factory.go): a nodeSelector
 * accelerator-type for the 910B and A3 products, the labels npu-310-strategy=card (and duo=true)
 * for the inference cards, written by both exports; none for the Atlas 800 (its default) or a
 * vNPU. */
START_TEST(vendor_exports)
{
	static const struct {
		int pr;
		int k;
		const char *want[2]; /* NULL: none */
	} cases[] = {
		{P_BOX16, 10, {"\"accelerator-type\": \"module-910b-16\""}},
		{P_910BX8, 3, {"\"accelerator-type\": \"module-910b-8\""}},
		{P_HALF, 2, {"\"accelerator-type\": \"half\""}},
		{P_A3, 2, {"\"accelerator-type\": \"module-a3-16\""}},
		{P_A3X8, 2, {"\"accelerator-type\": \"module-a3-16\""}},
		{P_300I, 3, {"\"npu-310-strategy\": \"card\""}},
		{P_DUO, 2, {"\"npu-310-strategy\": \"card\"", "\"duo\": \"true\""}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct product *P = &products[cases[i].pr];
		struct xp_cluster *c = xp_cluster_new();
		xp_test_node(c, "n", P->n, &P->devs);
		char spec[96];
		snprintf(spec, sizeof spec, "{\"devices\": %d, \"model\": \"Ascend*\"}", cases[i].k);
		for (int fmt = XP_EXPORT_K8S; fmt <= XP_EXPORT_VOLCANO; fmt++) {
			struct xp_err err = {{0}};
			char *y = export_of(c, spec, fmt, 0, &err);
			ck_assert_msg(y != NULL, "%s: %s", P->name, err.msg);
			for (int w = 0; w < 2 && cases[i].want[w]; w++)
				ck_assert_msg(strstr(y, cases[i].want[w]), "%s fmt %d: no %s in\n%s", P->name, fmt,
					      cases[i].want[w], y);
			bool selector = strstr(cases[i].want[0], "accelerator-type") != NULL;
			ck_assert_msg(!strstr(y, "nodeSelector:") == !selector, "%s: %s", P->name, y);
			free(y);
		}
		xp_cluster_free(c);
	}
	/* The Atlas 800 (910A): Volcano's default handler, nothing to write. */
	struct xp_cluster *c = xp_cluster_new();
	xp_test_node(c, "n", 8, &(struct xp_test_devs){"Huawei", "Ascend 910A", "24.1.RC2", 32768, 1, "hccs", 4});
	struct xp_err err = {{0}};
	char *y = export_of(c, "{\"devices\": 2, \"model\": \"Ascend*\"}", XP_EXPORT_VOLCANO, 0, &err);
	ck_assert_msg(y && !strstr(y, "nodeSelector:") && !strstr(y, "npu-310"), "%s", y ? y : err.msg);
	free(y);
	xp_cluster_free(c);
}
END_TEST

/* One Volcano task has one Pod template: replicas on two products the plugin tells apart by
 * that template cannot be one task. */
START_TEST(vendor_export_mixed)
{
	struct xp_cluster *c = xp_cluster_new();
	enum npu st[MAXN];
	for (int i = 0; i < 16; i++)
		st[i] = i < 2 || i >= 8 ? BUSY : FREE; /* one group of 6 free: one replica of 5 */
	set_state(xp_test_node(c, "box", 16, &products[P_BOX16].devs), st, 16);
	xp_test_node(c, "x8", 8, &products[P_910BX8].devs);
	struct xp_err err = {{0}};
	char *y = export_of(c, "{\"devices\": 5, \"replicas\": 2, \"model\": \"Ascend*\"}", XP_EXPORT_VOLCANO, 0,
			    &err);
	ck_assert_msg(y == NULL && strstr(err.msg, "one Pod template"), "%s", y ? y : err.msg);
	memset(&err, 0, sizeof err);
	y = export_of(c, "{\"devices\": 5, \"replicas\": 2, \"model\": \"Ascend*\"}", XP_EXPORT_K8S, 0, &err);
	ck_assert_msg(y && strstr(y, "module-910b-16") && strstr(y, "module-910b-8"), "%s", y ? y : err.msg);
	free(y);
	xp_cluster_free(c);
}
END_TEST

/* HAMi turns a 1-NPU Ascend910C request into a module of 2 (MutateAdmission): the export of a
 * 1-NPU A3 placement is refused with that reason; 2 is written. No vendor selector under HAMi
 * (HAMi's scheduler, not the Ascend plugin, places it). */
START_TEST(hami_a3_unit)
{
	struct xp_cluster *c = xp_cluster_new();
	xp_test_node(c, "a3", 16, &products[P_A3].devs);
	for (int fmt = XP_EXPORT_K8S; fmt <= XP_EXPORT_VOLCANO; fmt++) {
		struct xp_err err = {{0}};
		char *y = export_of(c, "{\"devices\": 1, \"model\": \"Ascend*\"}", fmt, XP_FLAVOR_HAMI, &err);
		ck_assert_msg(y == NULL && strstr(err.msg, "rounds a request of 1 up to 2"), "%s", y ? y : err.msg);
		memset(&err, 0, sizeof err);
		y = export_of(c, "{\"devices\": 2, \"model\": \"Ascend*\"}", fmt, XP_FLAVOR_HAMI, &err);
		ck_assert_msg(y && strstr(y, "\"huawei.com/Ascend910C\": 2") && !strstr(y, "accelerator-type"), "%s",
			      y ? y : err.msg);
		free(y);
	}
	xp_cluster_free(c);
}
END_TEST

XP_DEFINE_SUITE(ascend_products,
	{"core", .timeout_s = 600, .setup = load, .teardown = unload,
	 .tests = {golden_box16, golden_a3, golden_910bx8, golden_300i, golden_duo, choice_box16, choice_a3,
		   choice_910bx8, choice_300i, choice_duo, golden_box16_multi, golden_a3_multi, golden_a3x8,
		   golden_half, golden_box15, golden_910bx8_multi, choice_box16_multi, choice_a3_multi, choice_a3x8,
		   choice_half, choice_box15, named_cases, layout_choice, layout_keys, layout_groups,
		   inventory_groups, vendor_exports, vendor_export_mixed, hami_a3_unit, mixed_products,
		   refusal_texts, missing_npu_score}},
	{"shared", .setup = load, .teardown = unload, .tests = {groups_copy_on_write}})
