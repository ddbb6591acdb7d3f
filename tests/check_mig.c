/* check_mig.c: MIG geometry against NVIDIA's tables. The expected answers are written here from
 * NVIDIA's own listings (nvidia-smi mig -lgipp "{starts}:size" and the MIG user guide's
 * "Number of Instances Available"), not read from the manifest or the engine: the shipped
 * manifest must say the same, and the engine must accept exactly those starts. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "checklib.h"
#include "jobspec.h"
#include "manifest.h"
#include "model.h"
#include "place.h"
#include "place_mig.h"
#include "simgen.h"
#include "suitelib.h"
#include "testlib.h"

/* One profile row: where it may start, how many slots it covers, how many a GPU holds. */
struct row {
	const char *profile;
	const char *starts; /* "0,4" */
	int span;
	int count;
};

struct table {
	const char *model; /* manifest model name */
	int slots;
	struct row rows[8];
};

/* GH100 (H100 NVL) -lgipp: 19 {0..6}:1, 20 (+me) {0..6}:1, 15 {0,2,4,6}:2, 14 {0,2,4}:2,
 * 9 {0,4}:4, 5 {0}:4, 0 {0}:8; A100-40GB -lgipp: 19, 14, 9, 5, 0 the same; A30 -lgipp:
 * 14 {0,1,2,3}:1, 21 (+me) {0,1,2,3}:1, 5 {0,2}:2, 6 (+me) {0,2}:2, 0 {0}:4. Counts: the
 * guide's tables (+me: 1). H200 has no 7g row in the manifest (its size is not recorded). */
static const struct table tables[] = {
	{"H100 SXM 80GB", 8,
	 {{"1g.10gb", "0,1,2,3,4,5,6", 1, 7}, {"1g.10gb+me", "0,1,2,3,4,5,6", 1, 1}, {"1g.20gb", "0,2,4,6", 2, 4},
	  {"2g.20gb", "0,2,4", 2, 3}, {"3g.40gb", "0,4", 4, 2}, {"4g.40gb", "0", 4, 1}, {"7g.80gb", "0", 8, 1}}},
	{"H100 PCIe", 8,
	 {{"1g.10gb", "0,1,2,3,4,5,6", 1, 7}, {"1g.10gb+me", "0,1,2,3,4,5,6", 1, 1}, {"1g.20gb", "0,2,4,6", 2, 4},
	  {"2g.20gb", "0,2,4", 2, 3}, {"3g.40gb", "0,4", 4, 2}, {"4g.40gb", "0", 4, 1}, {"7g.80gb", "0", 8, 1}}},
	{"H200", 8,
	 {{"1g.18gb", "0,1,2,3,4,5,6", 1, 7}, {"1g.18gb+me", "0,1,2,3,4,5,6", 1, 1}, {"1g.35gb", "0,2,4,6", 2, 4},
	  {"2g.35gb", "0,2,4", 2, 3}, {"3g.71gb", "0,4", 4, 2}, {"4g.71gb", "0", 4, 1}}},
	{"A100 80GB", 8,
	 {{"1g.10gb", "0,1,2,3,4,5,6", 1, 7}, {"1g.10gb+me", "0,1,2,3,4,5,6", 1, 1}, {"1g.20gb", "0,2,4,6", 2, 4},
	  {"2g.20gb", "0,2,4", 2, 3}, {"3g.40gb", "0,4", 4, 2}, {"4g.40gb", "0", 4, 1}, {"7g.80gb", "0", 8, 1}}},
	{"A100 40GB", 8,
	 {{"1g.5gb", "0,1,2,3,4,5,6", 1, 7}, {"1g.5gb+me", "0,1,2,3,4,5,6", 1, 1}, {"1g.10gb", "0,2,4,6", 2, 4},
	  {"2g.10gb", "0,2,4", 2, 3}, {"3g.20gb", "0,4", 4, 2}, {"4g.20gb", "0", 4, 1}, {"7g.40gb", "0", 8, 1}}},
	{"A30", 4,
	 {{"1g.6gb", "0,1,2,3", 1, 4}, {"1g.6gb+me", "0,1,2,3", 1, 1}, {"2g.12gb", "0,2", 2, 2},
	  {"2g.12gb+me", "0,2", 2, 1}, {"4g.24gb", "0", 4, 1}}},
};

static bool listed(const char *starts, int s)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%s", starts);
	char *save = NULL;
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save))
		if (atoi(w) == s)
			return true;
	return false;
}

static struct xp_manifest *ms[XP_PLACE_MANIFESTS];
static size_t nm;

static void setup(void)
{
	nm = xp_place_manifests(ms);
	ck_assert_uint_ge(nm, 1);
}

static void teardown(void)
{
	xp_place_manifests_free(ms, nm);
	nm = 0;
}

static const struct xp_mmodel *model(const char *name)
{
	for (size_t i = 0; i < nm; i++)
		for (size_t k = 0; k < ms[i]->n_models; k++)
			if (strcmp(ms[i]->models[k].name, name) == 0)
				return &ms[i]->models[k];
	ck_abort_msg("no manifest model %s", name);
	return NULL;
}

START_TEST(every_row_every_start)
{
	/* Each row at each slot: with every other slot taken, the slice goes there exactly when
	 * NVIDIA lists the start (and its span fits the GPU); on an empty GPU it takes the first. */
	size_t rows = 0, cases = 0;
	for (size_t ti = 0; ti < sizeof tables / sizeof *tables; ti++) {
		const struct table *tb = &tables[ti];
		const struct xp_mmodel *md = model(tb->model);
		ck_assert_int_eq(md->slots, tb->slots);
		for (const struct row *rw = tb->rows; rw->profile; rw++) {
			const struct xp_mtemplate *t = xp_manifest_template(md, rw->profile);
			ck_assert_msg(t != NULL, "%s: no template %s", tb->model, rw->profile);
			ck_assert_msg(t->span == rw->span && t->count == rw->count, "%s %s: span %d count %d", tb->model,
				      rw->profile, t->span, t->count);
			int first = -1;
			for (int s = 0; s < tb->slots; s++) {
				bool legal = listed(rw->starts, s) && s + rw->span <= tb->slots;
				unsigned all = (1u << tb->slots) - 1;
				unsigned hole = s + rw->span <= tb->slots ? ((1u << rw->span) - 1) << s : 0;
				int got = xp_mig_start(md, t, all & ~hole);
				ck_assert_msg(got == (legal ? s : -1), "%s %s at %d: got %d", tb->model, rw->profile, s, got);
				if (legal && first < 0)
					first = s;
				cases++;
			}
			ck_assert_int_eq(xp_mig_start(md, t, 0), first);
			/* No start is allowed that NVIDIA does not list, even with the GPU empty. */
			for (int s = 0; s < tb->slots; s++)
				ck_assert_msg(!(t->at & (1u << s)) == !listed(rw->starts, s), "%s %s: start %d", tb->model,
					      rw->profile, s);
			rows++;
		}
	}
	/* Every row was judged: 34 rows of 8-slot GPUs and 5 of the A30's 4. */
	ck_assert_uint_eq(rows, 39);
	ck_assert_uint_eq(cases, 34 * 8 + 5 * 4);
}
END_TEST

/* Whether one more of profile fits on a model's GPU holding the named instances. */
static int fits(const char *mname, const char *profile, const char *const *names, size_t n)
{
	const struct xp_mmodel *md = model(mname);
	return xp_mig_fits(md, names, n, NULL, 0, 0, xp_manifest_template(md, profile));
}

START_TEST(existing_instances)
{
	/* Where existing instances sit is not known: a slice must fit however they sit. */
	/* The two impossible cases. */
	ck_assert_int_eq(fits("H100 SXM 80GB", "1g.10gb", (const char *[]){"3g.40gb", "3g.40gb"}, 2), 0);
	ck_assert_int_eq(fits("A100 80GB", "1g.10gb", (const char *[]){"1g.20gb", "1g.20gb", "1g.20gb", "1g.20gb"}, 4),
			 0);
	/* And what the hardware allows beside them. */
	ck_assert_int_eq(fits("A100 80GB", "1g.10gb", (const char *[]){"1g.20gb", "1g.20gb", "1g.20gb"}, 3), 1);
	ck_assert_int_eq(fits("H100 SXM 80GB", "3g.40gb", (const char *[]){"4g.40gb"}, 1), 1);
	ck_assert_int_eq(fits("H100 SXM 80GB", "4g.40gb", (const char *[]){"3g.40gb"}, 1), 0);
	ck_assert_int_eq(fits("H100 SXM 80GB", "2g.20gb", (const char *[]){"4g.40gb"}, 1), 1);
	ck_assert_int_eq(fits("H100 SXM 80GB", "1g.10gb", (const char *[]){"4g.40gb", "2g.20gb"}, 2), 1);
	ck_assert_int_eq(fits("H100 SXM 80GB", "1g.10gb", (const char *[]){"4g.40gb", "2g.20gb", "1g.10gb"}, 3), 0);
	/* A 3g at 0 leaves 1g starts 4, 5, 6 only: three are sure beside one 3g, not four. */
	ck_assert_int_eq(fits("H100 SXM 80GB", "1g.10gb", (const char *[]){"3g.40gb", "1g.10gb", "1g.10gb"}, 3), 1);
	ck_assert_int_eq(
		fits("H100 SXM 80GB", "1g.10gb", (const char *[]){"3g.40gb", "1g.10gb", "1g.10gb", "1g.10gb"}, 4), 0);
	/* Seven 1g fill the compute; a 7g needs the whole GPU. */
	ck_assert_int_eq(fits("H100 SXM 80GB", "7g.80gb", (const char *[]){"1g.10gb"}, 1), 0);
	ck_assert_int_eq(fits("H100 SXM 80GB", "7g.80gb", NULL, 0), 1);
	/* One media-extension instance per GPU (the guide's count 1). */
	ck_assert_int_eq(fits("A100 40GB", "1g.5gb+me", (const char *[]){"1g.5gb"}, 1), 1);
	ck_assert_int_eq(fits("A100 40GB", "1g.5gb+me", (const char *[]){"1g.5gb+me"}, 1), 0);
	ck_assert_int_eq(fits("A30", "2g.12gb+me", (const char *[]){"2g.12gb"}, 1), 1);
	ck_assert_int_eq(fits("A30", "1g.6gb", (const char *[]){"2g.12gb", "2g.12gb"}, 2), 0);
	/* Instances that cannot all be on the GPU, or one xpool does not know: no arrangement. */
	ck_assert_int_eq(fits("H100 SXM 80GB", "1g.10gb", (const char *[]){"4g.40gb", "4g.40gb"}, 2), -1);
	ck_assert_int_eq(fits("H100 SXM 80GB", "1g.10gb", (const char *[]){"9g.99gb"}, 1), -1);
}
END_TEST

START_TEST(planned_by_this_job)
{
	/* Slices this placement already put on the device are known by their compute share and
	 * the job's templates: 3/7 of 1g.20gb on an A100 80GB is three of them, and a fourth
	 * fits; 4/7 is four, and a fifth does not. */
	const struct xp_mmodel *md = model("A100 80GB");
	const struct xp_mtemplate *t = xp_manifest_template(md, "1g.20gb");
	const struct xp_mtemplate *kinds[] = {t};
	ck_assert_int_eq(xp_mig_fits(md, NULL, 0, kinds, 1, 3.0 / 7, t), 1);
	ck_assert_int_eq(xp_mig_fits(md, NULL, 0, kinds, 1, 4.0 / 7, t), 0);
	/* A share no mix of the job's templates makes up is refused (the safe side). */
	ck_assert_int_eq(xp_mig_fits(md, NULL, 0, kinds, 1, 0.5, t), 0);
}
END_TEST

/* Adds a node of one GPU of model, holding the named slices. */
static void add_gpu(struct xp_cluster *c, const char *node, const char *mname, const char *const *slices, size_t n)
{
	struct xp_node *nd = xp_node_new(node);
	struct xp_device *d = xp_node_add_device(nd);
	d->vendor = xp_strdup("NVIDIA");
	d->model = xp_strdup(mname);
	d->driver = xp_strdup("550.90.07");
	d->memory_mib = 81559;
	d->health = XP_HEALTH_OK;
	for (size_t i = 0; i < n; i++) {
		d->allocs = xp_realloc(d->allocs, (d->n_allocs + 1) * sizeof *d->allocs);
		d->allocs[d->n_allocs++] = (struct xp_alloc){xp_strdup(slices[i]), xp_strdup("other"), -1, 0};
	}
	xp_cluster_add(c, nd);
}

/* A cluster of one node with one GPU of model, holding the named slices. */
static struct xp_cluster *one_gpu(const char *mname, const char *const *slices, size_t n)
{
	struct xp_cluster *c = xp_cluster_new();
	add_gpu(c, "g", mname, slices, n);
	return c;
}

/* Places one replica of the slice on the cluster; true when it is placed. */
static bool placed(struct xp_cluster *c, const char *slice, int replicas, char *why, size_t size)
{
	char text[128];
	snprintf(text, sizeof text, "{\"slice\": \"%s\", \"replicas\": %d}", slice, replicas);
	struct xp_err err = {{0}};
	struct xp_job *j = xp_job_parse(text, strlen(text), NULL, &err);
	ck_assert_msg(j != NULL, "%s", err.msg);
	/* The instances these GPUs hold are in use: a slice is a new instance (--reconfigure). */
	struct xp_place_opts o = {XP_STRAT_PACK, 0, NULL, false, false, true};
	struct xp_place_result *r = xp_place(c, j, (const struct xp_manifest *const *)ms, nm, &o, &err);
	ck_assert_msg(r != NULL, "%s", err.msg);
	bool ok = r->placed;
	snprintf(why, size, "%s %s", r->summary ? r->summary : "",
		 r->n_reasons ? r->reasons[0].text : "");
	xp_place_result_free(r);
	xp_job_free(j);
	return ok;
}

START_TEST(engine_refuses_impossible)
{
	/* The cases through the placement engine, with the reason it gives. */
	char why[512];
	struct xp_cluster *c = one_gpu("H100 SXM 80GB", (const char *[]){"3g.40gb", "3g.40gb"}, 2);
	ck_assert(!placed(c, "1g.10gb", 1, why, sizeof why));
	ck_assert_msg(strstr(why, "start NVIDIA allows") != NULL, "%s", why);
	xp_cluster_free(c);
	c = one_gpu("A100 80GB", (const char *[]){"1g.20gb", "1g.20gb", "1g.20gb", "1g.20gb"}, 4);
	ck_assert(!placed(c, "1g.10gb", 1, why, sizeof why));
	xp_cluster_free(c);
	/* Beside three 1g.20gb one 1g.10gb fits, two do not (one pair of slots is left). */
	c = one_gpu("A100 80GB", (const char *[]){"1g.20gb", "1g.20gb", "1g.20gb"}, 3);
	ck_assert_msg(placed(c, "1g.10gb", 1, why, sizeof why), "%s", why);
	ck_assert(!placed(c, "1g.10gb", 2, why, sizeof why));
	xp_cluster_free(c);
	/* On an empty H100 a job of four 1g.20gb fits and five do not (compute would allow
	 * seven); two 3g.40gb fit and a third does not; a 4g.40gb and a 3g.40gb fit together. */
	c = one_gpu("H100 SXM 80GB", NULL, 0);
	ck_assert_msg(placed(c, "1g.20gb", 4, why, sizeof why), "%s", why);
	ck_assert(!placed(c, "1g.20gb", 5, why, sizeof why));
	ck_assert_msg(placed(c, "3g.40gb", 2, why, sizeof why), "%s", why);
	xp_cluster_free(c);
	c = one_gpu("H100 SXM 80GB", (const char *[]){"4g.40gb"}, 1);
	ck_assert_msg(placed(c, "3g.40gb", 1, why, sizeof why), "%s", why);
	ck_assert(!placed(c, "4g.40gb", 1, why, sizeof why));
	xp_cluster_free(c);
}
END_TEST

/* The table's row for a profile of a model; NULL when the table has none. */
static const struct row *row_of(const struct table *tb, const char *profile)
{
	for (const struct row *rw = tb->rows; rw->profile; rw++)
		if (strcasecmp(rw->profile, profile) == 0)
			return rw;
	return NULL;
}

/* Whether rows[i..n) can all sit on a GPU of slots with free slots, by the table alone. */
static bool arrangeable(const struct row *const *rows, size_t i, size_t n, int slots, unsigned taken)
{
	if (i == n)
		return true;
	for (int s = 0; s + rows[i]->span <= slots; s++) {
		unsigned m = ((1u << rows[i]->span) - 1) << s;
		if (listed(rows[i]->starts, s) && !(m & taken) && arrangeable(rows, i + 1, n, slots, taken | m))
			return true;
	}
	return false;
}

START_TEST(sim_layouts_are_buildable)
{
	/* Simulated clusters hold only MIG layouts the GPU can build (checked here against the
	 * table, by brute force), within each profile's count: the generator fits compute, memory
	 * and counts, and with the manifest's memory sizes that must not pass what the positions
	 * allow (a guard on the manifest data; the generator does not read positions). */
	size_t gpus = 0;
	for (uint64_t seed = 1; seed <= 10; seed++) {
		struct xp_err err = {{0}};
		struct xp_cluster *c = xp_sim_generate(300, NULL, seed, &err);
		ck_assert_msg(c != NULL, "%s", err.msg);
		for (size_t i = 0; i < c->n_nodes; i++)
			for (size_t d = 0; d < c->nodes[i]->n_devices; d++) {
				const struct xp_device *dv = &c->nodes[i]->devices[d];
				const struct table *tb = NULL;
				for (size_t k = 0; k < sizeof tables / sizeof *tables && dv->model; k++)
					if (strcmp(tables[k].model, dv->model) == 0)
						tb = &tables[k];
				const struct row *rows[16];
				size_t n = 0;
				for (size_t a = 0; tb && a < dv->n_allocs && n < 16; a++)
					if (dv->allocs[a].slice && dv->allocs[a].share_pct == 0) {
						rows[n] = row_of(tb, dv->allocs[a].slice);
						ck_assert_msg(rows[n] != NULL, "%s: %s", dv->model, dv->allocs[a].slice);
						n++;
					}
				if (!n)
					continue;
				for (size_t a = 0; a < n; a++) {
					int same = 0;
					for (size_t b = 0; b < n; b++)
						same += rows[b] == rows[a];
					ck_assert_msg(same <= rows[a]->count, "%s/%d: %d of %s", c->nodes[i]->name, dv->index,
						      same, rows[a]->profile);
				}
				ck_assert_msg(arrangeable(rows, 0, n, tb->slots, 0), "%s/%d: its slices fit no layout",
					      c->nodes[i]->name, dv->index);
				gpus++;
			}
		xp_cluster_free(c);
	}
	ck_assert_uint_gt(gpus, 20);
}
END_TEST

START_TEST(alike_use_unlike_instances)
{
	/* Two H100s with 6/7 of their compute in use: 4g.40gb + 2g.20gb leaves memory slices 6
	 * and 7 (a 1g.10gb fits at 6), two 3g.40gb leave none. The index groups nodes that look
	 * alike to answer once for all; these must not be grouped. In either name order the
	 * slice lands on the node with room. */
	static const char *const names[][2] = {{"a", "b"}, {"b", "a"}};
	for (int k = 0; k < 2; k++) {
		struct xp_cluster *c = xp_cluster_new();
		add_gpu(c, names[k][0], "H100 SXM 80GB", (const char *[]){"3g.40gb", "3g.40gb"}, 2);
		add_gpu(c, names[k][1], "H100 SXM 80GB", (const char *[]){"4g.40gb", "2g.20gb"}, 2);
		const char *text = "{\"slice\": \"1g.10gb\"}";
		struct xp_err err = {{0}};
		struct xp_job *j = xp_job_parse(text, strlen(text), NULL, &err);
		ck_assert_msg(j != NULL, "%s", err.msg);
		for (int strat = 0; strat < XP_STRAT_COUNT; strat++) {
			struct xp_place_opts o = {strat, 0, NULL, false, false, true};
			struct xp_place_result *r = xp_place(c, j, (const struct xp_manifest *const *)ms, nm, &o, &err);
			ck_assert_msg(r && r->placed, "%s", r ? r->summary : err.msg);
			ck_assert_str_eq(r->replicas[0].node, names[k][1]);
			xp_place_result_free(r);
		}
		xp_job_free(j);
		xp_cluster_free(c);
	}
}
END_TEST

XP_DEFINE_SUITE(mig,
	{"core", .timeout_s = 120, .setup = setup, .teardown = teardown,
	 .tests = {every_row_every_start, existing_instances, planned_by_this_job, engine_refuses_impossible,
		   sim_layouts_are_buildable, alike_use_unlike_instances}})
