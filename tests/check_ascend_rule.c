/* check_ascend_rule.c: the Atlas 800 (Ascend 910, 8 NPUs in two HCCS rings of 4) placement
 * rule as Volcano's Ascend plugin applies it, against the shipped manifest
 * (adapters/ascend/ascend.adapter). The expected answers come from a small reference written
 * here from the rule text (domain-rules.md "2. Ascend affinity rules": the A-D table,
 * getNPUAllocPriorityArray, selectNPUFromNode), never from xpool's engine: requests of 1, 2,
 * 4 or 8 only; for each size the rings are tried by their free count in a fixed order
 * (1 -> 1, 3, 2, 4; 2 -> 2, 4, 3; 4 -> 4; 8 -> the whole healthy node), ring 0-3 before 4-7,
 * the lowest ids of the chosen ring; a faulty NPU counts as used. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "jobspec.h"
#include "manifest.h"
#include "model.h"
#include "place.h"
#include "suitelib.h"

enum npu { FREE, BUSY, FAULTY };

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

/* ---- the reference: the plugin's rule, from its text ---- */

/* The NPUs the plugin gives a task of k on a node in state st (ascending into out); 0 when it
 * refuses. */
static size_t reference(const enum npu st[8], int k, int out[8])
{
	static const int prio1[] = {1, 3, 2, 4}, prio2[] = {2, 4, 3}, prio4[] = {4};
	const int *prio = k == 1 ? prio1 : k == 2 ? prio2 : k == 4 ? prio4 : NULL;
	size_t np = k == 1 ? 4 : k == 2 ? 3 : k == 4 ? 1 : 0;
	if (k == 8) {
		for (int i = 0; i < 8; i++) {
			if (st[i] != FREE)
				return 0;
			out[i] = i;
		}
		return 8;
	}
	for (size_t p = 0; p < np; p++)
		for (int ring = 0; ring < 2; ring++) {
			int usable = 0;
			for (int i = ring * 4; i < ring * 4 + 4; i++)
				usable += st[i] == FREE;
			if (usable != prio[p])
				continue;
			size_t n = 0;
			for (int i = ring * 4; i < ring * 4 + 4 && n < (size_t)k; i++)
				if (st[i] == FREE)
					out[n++] = i;
			return n;
		}
	return 0; /* 3, 5, 6, 7, or no ring with a listed free count */
}

/* ---- xpool ---- */

static struct xp_node *atlas800(struct xp_cluster *c, const char *name)
{
	/* One NUMA domain, so that only the vendor's rule decides. */
	const struct xp_test_devs t = {"Huawei", "Ascend 910A", "24.1.RC2", 32768, 1, "hccs", 4};
	return xp_test_node(c, name, 8, &t);
}

static void set_state(struct xp_node *nd, const enum npu st[8])
{
	for (int i = 0; i < 8; i++) {
		struct xp_device *d = &nd->devices[i];
		if (st[i] == FAULTY)
			d->health = XP_HEALTH_FAIL;
		if (st[i] == BUSY) {
			d->allocs = xp_realloc(d->allocs, (d->n_allocs + 1) * sizeof *d->allocs);
			d->allocs[d->n_allocs++] = (struct xp_alloc){NULL, xp_strdup("other"), -1, 0};
		}
	}
}

static struct xp_place_result *place_k(const struct xp_cluster *c, int k, int strategy)
{
	char spec[96];
	snprintf(spec, sizeof spec, "{\"devices\": %d, \"model\": \"Ascend*\"}", k);
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

static void state_text(const enum npu st[8], char *out)
{
	for (int i = 0; i < 8; i++)
		out[i] = "fbx"[st[i]];
	out[8] = 0;
}

static size_t agreed, refusals;

/* One pattern, every request size 1..8, under strategy: xpool's devices (or refusal) are the
 * reference's. */
static void golden(const enum npu st[8], int strategy)
{
	struct xp_cluster *c = xp_cluster_new();
	set_state(atlas800(c, "n"), st);
	char s[9];
	state_text(st, s);
	for (int k = 1; k <= 8; k++) {
		int want[8];
		size_t nw = reference(st, k, want);
		struct xp_place_result *r = place_k(c, k, strategy);
		if (!nw) {
			ck_assert_msg(!r->placed, "%s k=%d: the plugin refuses, xpool placed %s", s, k,
				      r->placed ? r->replicas[0].env_value : "");
			/* A size the vendor does not allow says so (once enough NPUs are free: the
			 * first check a node fails is its reason). */
			int nfree = 0;
			for (int i = 0; i < 8; i++)
				nfree += st[i] == FREE;
			if ((k == 3 || (k >= 5 && k <= 7)) && nfree >= k)
				ck_assert_msg(r->n_reasons && strstr(r->reasons[0].text, "vendor's rule"), "%s k=%d: %s", s,
					      k, r->n_reasons ? r->reasons[0].text : "(no reason)");
			refusals++;
		} else {
			ck_assert_msg(r->placed, "%s k=%d: the plugin places, xpool refuses: %s", s, k, r->summary);
			char exp[32] = "";
			for (size_t i = 0; i < nw; i++)
				snprintf(exp + strlen(exp), sizeof exp - strlen(exp), "%s%d", i ? "," : "", want[i]);
			ck_assert_msg(strcmp(r->replicas[0].env_value, exp) == 0, "%s k=%d: plugin %s, xpool %s", s, k,
				      exp, r->replicas[0].env_value);
		}
		agreed++;
		xp_place_result_free(r);
	}
	xp_cluster_free(c);
}

/* Every busy pattern of the 8 NPUs (256), then 200 seeded patterns with faulty NPUs too, each
 * with requests of 1 to 8: under pack (the default) and spread, since the rule picks the
 * devices whatever ranks the nodes. */
START_TEST(golden_patterns)
{
	agreed = refusals = 0;
	enum npu st[8];
	for (int strategy = XP_STRAT_PACK; strategy <= XP_STRAT_SPREAD; strategy++) {
		for (unsigned m = 0; m < 256; m++) {
			for (int i = 0; i < 8; i++)
				st[i] = m >> i & 1 ? BUSY : FREE;
			golden(st, strategy);
		}
		uint64_t x = 0x9e3779b97f4a7c15u;
		for (int n = 0; n < 200; n++) {
			for (int i = 0; i < 8; i++) {
				x = x * 6364136223846793005u + 1442695040888963407u;
				st[i] = (enum npu)((x >> 33) % 3);
			}
			golden(st, strategy);
		}
	}
	/* 456 patterns x 8 sizes x 2 strategies, all agreeing (the count is the closing note's). */
	ck_assert_uint_eq(agreed, 456 * 8 * 2);
	ck_assert(refusals > 0 && refusals < agreed);
	fprintf(stderr, "ascend_rule: %zu of %zu placements agree with the plugin's rule (%zu refusals)\n", agreed,
		agreed, refusals);
}
END_TEST

/* The plugin's node score (module910x8 ScoreBestNPUNodes, from the rule text): nodeWeight 8 *
 * (healthy NPUs * 4 - the rank of the best ring's free count in the size's priority list);
 * -1 when the node cannot take k. */
static int plugin_score(const enum npu st[8], int k)
{
	static const int prio1[] = {1, 3, 2, 4}, prio2[] = {2, 4, 3}, prio4[] = {4};
	const int *prio = k == 1 ? prio1 : k == 2 ? prio2 : k == 4 ? prio4 : NULL;
	int np = k == 1 ? 4 : k == 2 ? 3 : k == 4 ? 1 : 0;
	int healthy = 0, best = 4, out[8];
	for (int i = 0; i < 8; i++)
		healthy += st[i] != FAULTY;
	if (!reference(st, k, out))
		return -1;
	if (k == 8)
		best = 0;
	for (int ring = 0; ring < 2 && prio; ring++) {
		int usable = 0;
		for (int i = ring * 4; i < ring * 4 + 4; i++)
			usable += st[i] == FREE;
		for (int r = 0; r < np; r++)
			if (prio[r] == usable && r < best)
				best = r;
	}
	return 8 * (healthy * 4 - best);
}

/* Node choice under pack: among three nodes in seeded states, xpool picks the node with the
 * plugin's highest score, then the fuller one (more NPUs in use: the plugin's policy of
 * filling nodes), then the first by name; and there the plugin's devices. */
START_TEST(node_choice)
{
	uint64_t x = 0x2545f4914f6cdd1du;
	size_t cases = 0;
	for (int n = 0; n < 300; n++) {
		enum npu st[3][8];
		struct xp_cluster *c = xp_cluster_new();
		static const char *const names[] = {"n0", "n1", "n2"};
		for (int v = 0; v < 3; v++) {
			for (int i = 0; i < 8; i++) {
				x = x * 6364136223846793005u + 1442695040888963407u;
				unsigned r = (unsigned)(x >> 33) % 10;
				/* Mostly free, so that several nodes compete. */
				st[v][i] = r < 6 ? FREE : r < 9 ? BUSY : FAULTY;
			}
			set_state(atlas800(c, names[v]), st[v]);
		}
		static const int sizes[] = {1, 2, 4, 8};
		for (int si = 0; si < 4; si++) {
			int k = sizes[si], pick = -1, ps = -1, pbusy = -1;
			for (int v = 0; v < 3; v++) {
				int sc = plugin_score(st[v], k), busy = 0;
				for (int i = 0; i < 8; i++)
					busy += st[v][i] == BUSY;
				if (sc >= 0 && (sc > ps || (sc == ps && busy > pbusy))) {
					pick = v;
					ps = sc;
					pbusy = busy;
				}
			}
			struct xp_place_result *r = place_k(c, k, XP_STRAT_PACK);
			if (pick < 0)
				ck_assert_msg(!r->placed, "case %d k=%d: the plugin finds no node", n, k);
			else {
				int want[8];
				size_t nw = reference(st[pick], k, want);
				char exp[32] = "";
				for (size_t i = 0; i < nw; i++)
					snprintf(exp + strlen(exp), sizeof exp - strlen(exp), "%s%d", i ? "," : "", want[i]);
				ck_assert_msg(r->placed, "case %d k=%d: %s", n, k, r->summary);
				ck_assert_msg(strcmp(r->replicas[0].node, names[pick]) == 0 &&
						      strcmp(r->replicas[0].env_value, exp) == 0,
					      "case %d k=%d: plugin %s=%s, xpool %s=%s", n, k, names[pick], exp,
					      r->replicas[0].node, r->replicas[0].env_value);
			}
			cases++;
			xp_place_result_free(r);
		}
		xp_cluster_free(c);
	}
	fprintf(stderr, "ascend_rule: %zu node choices agree with the plugin's score\n", cases);
}
END_TEST

/* The two cases the issue names: a 1-NPU task goes to the ring with 3 free, not the one with 2;
 * a 2-NPU task to the ring with 4 free, not the one with 3. */
START_TEST(issue_cases)
{
	struct xp_cluster *c = xp_cluster_new();
	/* Ring 0: 3 free (0 busy); ring 1: 2 free (4, 5 busy). */
	set_state(atlas800(c, "n"), (const enum npu[8]){BUSY, FREE, FREE, FREE, BUSY, BUSY, FREE, FREE});
	struct xp_place_result *r = place_k(c, 1, XP_STRAT_PACK);
	ck_assert(r->placed);
	ck_assert_str_eq(r->replicas[0].env_value, "1");
	xp_place_result_free(r);
	xp_cluster_free(c);
	c = xp_cluster_new();
	/* Ring 0: 4 free; ring 1: 3 free (7 faulty: a faulty NPU counts as used). */
	set_state(atlas800(c, "n"), (const enum npu[8]){FREE, FREE, FREE, FREE, FREE, FREE, FREE, FAULTY});
	r = place_k(c, 2, XP_STRAT_PACK);
	ck_assert(r->placed);
	ck_assert_str_eq(r->replicas[0].env_value, "0,1");
	xp_place_result_free(r);
	/* 8 needs the whole healthy node. */
	r = place_k(c, 8, XP_STRAT_PACK);
	ck_assert(!r->placed);
	xp_place_result_free(r);
	xp_cluster_free(c);
}
END_TEST

/* The job check refuses 3, 5, 6 and 7 NPUs of an Ascend 910A up front, naming the vendor's rule;
 * 1, 2, 4 and 8 pass. */
START_TEST(job_check_counts)
{
	const struct xp_manifest *ms[1] = {ascend};
	for (int k = 1; k <= 8; k++) {
		char spec[96];
		snprintf(spec, sizeof spec, "{\"devices\": %d, \"model\": \"Ascend 910A\"}", k);
		struct xp_err err = {{0}};
		struct xp_job *j = xp_job_parse(spec, strlen(spec), NULL, &err);
		ck_assert_msg(j != NULL, "%s", err.msg);
		int rc = xp_job_check(j, ms, 1, &err);
		if (k == 1 || k == 2 || k == 4 || k == 8)
			ck_assert_msg(rc == 0, "%d: %s", k, err.msg);
		else {
			ck_assert_int_eq(rc, -1);
			ck_assert_msg(strstr(err.msg, "the vendor's rule for Ascend 910A allows 1, 2, 4 or 8 per replica on one node"),
				      "%s", err.msg);
		}
		xp_job_free(j);
	}
}
END_TEST

/* The manifest keys: counts and ring_priority parse, and bad values are refused with the line. */
START_TEST(manifest_keys)
{
	const struct xp_mmodel *md = xp_manifest_model(ascend, "Ascend 910A", -1);
	ck_assert_ptr_nonnull(md);
	ck_assert(xp_manifest_count_ok(md, 4) && !xp_manifest_count_ok(md, 3) && !xp_manifest_count_ok(md, 9));
	ck_assert_uint_eq(md->n_ring_prio[1], 4);
	ck_assert_uint_eq(md->ring_prio[1][1], 3);
	ck_assert_uint_eq(md->n_ring_prio[3], 0);
	static const char *const bad[] = {"counts = 0", "counts = 1,x", "ring_priority = 2 2 4",
					  "ring_priority = 2: 1", "ring_priority = 17: 17", "ring_priority = 1:"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char text[256];
		snprintf(text, sizeof text, "[adapter]\nname = t\n[model M]\n%s\n", bad[i]);
		struct xp_err err = {{0}};
		struct xp_manifest *m = xp_manifest_parse(text, strlen(text), "t.adapter", &err);
		ck_assert_msg(m == NULL, "accepted: %s", bad[i]);
		ck_assert_msg(strstr(err.msg, "t.adapter:4:"), "%s", err.msg);
	}
	const char twice[] = "[adapter]\nname = t\n[model M]\nring_priority = 1: 1\nring_priority = 1: 2\n";
	struct xp_err err = {{0}};
	ck_assert_ptr_null(xp_manifest_parse(twice, strlen(twice), "t.adapter", &err));
}
END_TEST

XP_DEFINE_SUITE(ascend_rule,
	{"core", .timeout_s = 300, .setup = load, .teardown = unload,
	 .tests = {golden_patterns, node_choice, issue_cases, job_check_counts, manifest_keys}})
