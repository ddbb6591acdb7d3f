/* check_mig.c: MIG geometry against NVIDIA's tables. The expected answers are written here from
 * NVIDIA's own listings (nvidia-smi mig -lgipp "{starts}:size" and the MIG user guide's
 * "Number of Instances Available"), not read from the manifest or the engine: the shipped
 * manifest must say the same, and the engine must accept exactly those starts. */
#include <check.h>
#include <stdarg.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "checklib.h"
#include "fakehost.h"
#include "jobspec.h"
#include "manifest.h"
#include "model_json.h"
#include "model.h"
#include "place.h"
#include "place_mig.h"
#include "simgen.h"
#include "suitelib.h"
#include "testlib.h"

#include <unistd.h>

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
 * guide's tables (+me: 1); H200's 7g.141gb: the guide's table (full memory, x1), GH100's 7g. */
static const struct table tables[] = {
	{"H100 SXM 80GB", 8,
	 {{"1g.10gb", "0,1,2,3,4,5,6", 1, 7}, {"1g.10gb+me", "0,1,2,3,4,5,6", 1, 1}, {"1g.20gb", "0,2,4,6", 2, 4},
	  {"2g.20gb", "0,2,4", 2, 3}, {"3g.40gb", "0,4", 4, 2}, {"4g.40gb", "0", 4, 1}, {"7g.80gb", "0", 8, 1}}},
	{"H100 PCIe", 8,
	 {{"1g.10gb", "0,1,2,3,4,5,6", 1, 7}, {"1g.10gb+me", "0,1,2,3,4,5,6", 1, 1}, {"1g.20gb", "0,2,4,6", 2, 4},
	  {"2g.20gb", "0,2,4", 2, 3}, {"3g.40gb", "0,4", 4, 2}, {"4g.40gb", "0", 4, 1}, {"7g.80gb", "0", 8, 1}}},
	{"H200", 8,
	 {{"1g.18gb", "0,1,2,3,4,5,6", 1, 7}, {"1g.18gb+me", "0,1,2,3,4,5,6", 1, 1}, {"1g.35gb", "0,2,4,6", 2, 4},
	  {"2g.35gb", "0,2,4", 2, 3}, {"3g.71gb", "0,4", 4, 2}, {"4g.71gb", "0", 4, 1}, {"7g.141gb", "0", 8, 1}}},
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
	/* Every row was judged: 35 rows of 8-slot GPUs and 5 of the A30's 4. */
	ck_assert_uint_eq(rows, 40);
	ck_assert_uint_eq(cases, 35 * 8 + 5 * 4);
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
	/* The issue's two impossible cases. */
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
	/* The issue's cases through the placement engine, with the reason it gives. */
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

/* Commits on ix one replica of each of the two slices a and b on node ni's GPU 0, as a placed
 * job's result says (isolation "mig", the template's compute share taken). */
static int64_t commit_pair(struct xp_place_index *ix, size_t ni, const char *node, const char *a, const char *b)
{
	const struct xp_mmodel *md = model("H100 SXM 80GB");
	struct xp_place_replica reps[2];
	int pos[2][1] = {{0}, {0}};
	const char *sl[2] = {a, b};
	memset(reps, 0, sizeof reps);
	for (int i = 0; i < 2; i++) {
		const struct xp_mtemplate *t = xp_manifest_template(md, sl[i]);
		ck_assert_msg(t != NULL, "%s", sl[i]);
		reps[i].node = (char *)node;
		reps[i].node_ix = ni;
		reps[i].n_devices = 1;
		reps[i].pos = pos[i];
		reps[i].devices = pos[i];
		reps[i].take = t->compute;
		reps[i].isolation = "mig";
		reps[i].slice = (char *)sl[i];
	}
	struct xp_place_result r = {.placed = true, .replicas = reps, .n_replicas = 2};
	int64_t id = xp_place_commit(ix, &r);
	ck_assert_int_ge(id, 0);
	return id;
}

START_TEST(committed_layouts_apart)
{
	/* What commits made of two H100s: 3g.40gb + 3g.40gb on one (6/7 in use, every memory slot
	 * taken), 4g.40gb + 2g.20gb on the other (6/7 in use, slots 6 and 7 free). Alike in use and
	 * in their hard slices' count, unlike in their instances: a kept index that put them in one
	 * class (a class key without the committed layout, or one class for slice jobs and whole
	 * devices alike) would judge both by the first by name. A 1g.10gb goes only on the second,
	 * as a new instance, whichever name sorts first, under every strategy, by the index as by
	 * the plain scan on the same index; whole devices and shares fit on neither, and the
	 * layouts released, both take the slice again. */
	static const char *const names[][2] = {{"a", "b"}, {"b", "a"}};
	for (int k = 0; k < 2; k++) {
		struct xp_cluster *c = xp_cluster_new();
		add_gpu(c, names[k][0], "H100 SXM 80GB", NULL, 0);
		add_gpu(c, names[k][1], "H100 SXM 80GB", NULL, 0);
		struct xp_place_index *ix = xp_place_index_new(c, (const struct xp_manifest *const *)ms, nm);
		int64_t full = commit_pair(ix, 0, names[k][0], "3g.40gb", "3g.40gb");
		int64_t room = commit_pair(ix, 1, names[k][1], "4g.40gb", "2g.20gb");
		static const char *const specs[] = {"{\"slice\": \"1g.10gb\"}", "{\"devices\": 1}",
						    "{\"share_pct\": 10}"};
		for (size_t si = 0; si < sizeof specs / sizeof specs[0]; si++) {
			struct xp_err err = {{0}};
			struct xp_job *j = xp_job_parse(specs[si], strlen(specs[si]), NULL, &err);
			ck_assert_msg(j != NULL, "%s", err.msg);
			for (int strat = 0; strat < XP_STRAT_COUNT; strat++)
				for (int scan = 0; scan < 2; scan++) {
					struct xp_place_opts o = {strat, 0, NULL, scan, false, true};
					struct xp_place_result *r = xp_place_ix(ix, j, &o, &err);
					ck_assert_msg(r != NULL, "%s", err.msg);
					if (si == 0) {
						ck_assert_msg(r->placed, "%s (%s, %s)", r->summary, names[k][0],
							      scan ? "scan" : "index");
						ck_assert_str_eq(r->replicas[0].node, names[k][1]);
						ck_assert_str_eq(r->replicas[0].instance, "new");
					} else
						ck_assert_msg(!r->placed, "%s: %s", specs[si], r->summary);
					xp_place_result_free(r);
				}
			xp_job_free(j);
		}
		/* Released, the full GPU holds a 1g.10gb again; it sorts first or is the only one. */
		ck_assert(xp_place_release(ix, room));
		ck_assert(xp_place_release(ix, full));
		struct xp_err err = {{0}};
		struct xp_job *j = xp_job_parse(specs[0], strlen(specs[0]), NULL, &err);
		struct xp_place_opts o = {XP_STRAT_PACK, 0, NULL, false, false, true};
		struct xp_place_result *r = xp_place_ix(ix, j, &o, &err);
		ck_assert_msg(r && r->placed, "%s", r ? r->summary : err.msg);
		ck_assert_str_eq(r->replicas[0].node, "a");
		xp_place_result_free(r);
		xp_job_free(j);
		xp_place_index_free(ix);
		xp_cluster_free(c);
	}
}
END_TEST

/* ---- existing versus new instances ---------------------------------------------------- */

/* A node of one H100 holding instances: "1g.10gb" is a free one (no job), "*1g.10gb" one a job
 * holds. */
static void add_h100(struct xp_cluster *c, const char *node, const char *const *inst, size_t n)
{
	struct xp_node *nd = xp_node_new(node);
	struct xp_device *d = xp_node_add_device(nd);
	d->vendor = xp_strdup("NVIDIA");
	d->model = xp_strdup("H100 SXM 80GB");
	d->driver = xp_strdup("550.90.07");
	d->memory_mib = 81559;
	d->health = XP_HEALTH_OK;
	for (size_t i = 0; i < n; i++) {
		bool held = inst[i][0] == '*';
		d->allocs = xp_realloc(d->allocs, (d->n_allocs + 1) * sizeof *d->allocs);
		d->allocs[d->n_allocs++] =
			(struct xp_alloc){xp_strdup(inst[i] + held), held ? xp_strdup("job") : NULL, -1, 0};
	}
	xp_cluster_add(c, nd);
}

static bool xpi_streq_test(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Places spec with or without --reconfigure under strategy, by the index and by the plain
 * scan, which must agree; the index's result (free it). */
static struct xp_place_result *place_mig_s(struct xp_cluster *c, const char *spec, bool reconfigure, int strategy)
{
	struct xp_err err = {{0}};
	struct xp_job *j = xp_job_parse(spec, strlen(spec), NULL, &err);
	ck_assert_msg(j != NULL, "%s", err.msg);
	struct xp_place_opts o = {strategy, 0, NULL, false, false, reconfigure}, so = o;
	so.scan = true;
	struct xp_place_result *r = xp_place(c, j, (const struct xp_manifest *const *)ms, nm, &o, &err);
	struct xp_place_result *s = xp_place(c, j, (const struct xp_manifest *const *)ms, nm, &so, &err);
	ck_assert_msg(r && s, "%s", err.msg);
	ck_assert_str_eq(r->summary, s->summary);
	ck_assert_uint_eq(r->n_replicas, s->n_replicas);
	for (size_t i = 0; i < r->n_replicas; i++) {
		ck_assert_str_eq(r->replicas[i].node, s->replicas[i].node);
		ck_assert(xpi_streq_test(r->replicas[i].instance, s->replicas[i].instance));
	}
	xp_place_result_free(s);
	xp_job_free(j);
	return r;
}

static struct xp_place_result *place_mig(struct xp_cluster *c, const char *spec, bool reconfigure)
{
	return place_mig_s(c, spec, reconfigure, XP_STRAT_PACK);
}

START_TEST(default_needs_a_free_instance)
{
	/* A node with no device that has the profile: the refusal names the slice alone (no empty
	 * "matching" where the job named no vendor or model). */
	struct xp_cluster *none = xp_cluster_new();
	xp_cluster_add(none, xp_node_new("cpu"));
	struct xp_place_result *rn = place_mig(none, "{\"slice\": \"1g.10gb\"}", true);
	ck_assert(!rn->placed);
	ck_assert_str_eq(rn->reasons[0].text, "fewer than 1 devices with slice 1g.10gb");
	xp_place_result_free(rn);
	xp_cluster_free(none);

	/* No instance (a GPU in MIG mode with none made, or one not in MIG mode): a slice needs a
	 * new instance, which only --reconfigure places, and the refusal says so. */
	struct xp_cluster *c = xp_cluster_new();
	add_h100(c, "g", NULL, 0);
	struct xp_place_result *r = place_mig(c, "{\"slice\": \"1g.10gb\"}", false);
	ck_assert(!r->placed);
	ck_assert_str_eq(r->reasons[0].code, "free");
	ck_assert_str_eq(r->reasons[0].text,
			 "no free 1g.10gb instance exists on H100 SXM 80GB (a new one could be made: --reconfigure)");
	xp_place_result_free(r);
	r = place_mig(c, "{\"slice\": \"1g.10gb\"}", true);
	ck_assert(r->placed);
	ck_assert_str_eq(r->replicas[0].instance, "new");
	xp_place_result_free(r);
	xp_cluster_free(c);

	/* An instance a job holds is not taken again: a new one beside it, with --reconfigure. */
	c = xp_cluster_new();
	add_h100(c, "g", (const char *[]){"*1g.10gb"}, 1);
	r = place_mig(c, "{\"slice\": \"1g.10gb\"}", false);
	ck_assert(!r->placed);
	ck_assert_ptr_nonnull(strstr(r->reasons[0].text, "a new one could be made: --reconfigure"));
	xp_place_result_free(r);
	r = place_mig(c, "{\"slice\": \"1g.10gb\"}", true);
	ck_assert(r->placed);
	ck_assert_str_eq(r->replicas[0].instance, "new");
	xp_place_result_free(r);
	xp_cluster_free(c);

	/* Two 3g.40gb in use fill the GPU: no free instance, nor room for a new one. */
	c = xp_cluster_new();
	add_h100(c, "g", (const char *[]){"*3g.40gb", "*3g.40gb"}, 2);
	r = place_mig(c, "{\"slice\": \"1g.10gb\"}", false);
	ck_assert(!r->placed);
	ck_assert_str_eq(r->reasons[0].text, "no free 1g.10gb instance exists on H100 SXM 80GB (nor could one be made)");
	xp_place_result_free(r);
	xp_cluster_free(c);
}
END_TEST

START_TEST(free_instance_taken)
{
	/* The free instance is taken by default (on whichever node holds it), once: a second
	 * replica needs a second free one. A free instance of another profile does not serve. */
	struct xp_cluster *c = xp_cluster_new();
	add_h100(c, "a", (const char *[]){"*3g.40gb"}, 1);
	add_h100(c, "b", (const char *[]){"*3g.40gb", "2g.20gb", "1g.10gb"}, 3);
	add_h100(c, "c", (const char *[]){"*1g.10gb", "2g.20gb"}, 2);
	struct xp_place_result *r = place_mig(c, "{\"slice\": \"1g.10gb\"}", false);
	ck_assert_msg(r->placed, "%s", r->summary);
	ck_assert_str_eq(r->replicas[0].node, "b");
	ck_assert_str_eq(r->replicas[0].instance, "existing");
	xp_place_result_free(r);
	r = place_mig(c, "{\"slice\": \"1g.10gb\", \"replicas\": 2}", false);
	ck_assert(!r->placed);
	ck_assert_ptr_nonnull(strstr(r->summary, "only 1 of 2 replicas fit"));
	xp_place_result_free(r);
	/* Free 2g.20gb on b and c: two replicas, each an existing instance. */
	r = place_mig(c, "{\"slice\": \"2g.20gb\", \"replicas\": 2}", false);
	ck_assert_msg(r->placed, "%s", r->summary);
	ck_assert_str_eq(r->replicas[0].instance, "existing");
	ck_assert_str_eq(r->replicas[1].instance, "existing");
	xp_place_result_free(r);
	/* With --reconfigure the two 1g.10gb fit (one taking b's free instance, the other new). */
	r = place_mig(c, "{\"slice\": \"1g.10gb\", \"replicas\": 2}", true);
	ck_assert_msg(r->placed, "%s", r->summary);
	xp_place_result_free(r);
	xp_cluster_free(c);

	/* Seven free 1g.10gb: all seven by default, an eighth is not there, nor can it be made. */
	c = xp_cluster_new();
	const char *seven[7];
	for (int i = 0; i < 7; i++)
		seven[i] = "1g.10gb";
	add_h100(c, "g", seven, 7);
	r = place_mig(c, "{\"slice\": \"1g.10gb\", \"replicas\": 7}", false);
	ck_assert_msg(r->placed, "%s", r->summary);
	for (size_t i = 0; i < r->n_replicas; i++)
		ck_assert_str_eq(r->replicas[i].instance, "existing");
	xp_place_result_free(r);
	r = place_mig(c, "{\"slice\": \"1g.10gb\", \"replicas\": 8}", true);
	ck_assert(!r->placed);
	xp_place_result_free(r);
	/* A partitioned GPU is not whole, nor shared, though none of its instances is in use. */
	r = place_mig(c, "{\"devices\": 1}", true);
	ck_assert(!r->placed);
	xp_place_result_free(r);
	r = place_mig(c, "{\"share_pct\": 10}", true);
	ck_assert(!r->placed);
	xp_place_result_free(r);
	xp_cluster_free(c);
}
END_TEST

START_TEST(held_and_free_apart)
{
	/* Nodes alike in their instances and in use (a 1g.10gb and a 1g.20gb, one seventh of
	 * the compute held) but for which instance is free are judged apart (the index's
	 * classes): in either name order the free 1g.10gb is taken, as the plain scan takes it. */
	static const char *const names[][2] = {{"x", "y"}, {"y", "x"}};
	for (int k = 0; k < 2; k++) {
		struct xp_cluster *c = xp_cluster_new();
		add_h100(c, names[k][0], (const char *[]){"*1g.10gb", "1g.20gb"}, 2);
		add_h100(c, names[k][1], (const char *[]){"1g.10gb", "*1g.20gb"}, 2);
		struct xp_place_result *r = place_mig(c, "{\"slice\": \"1g.10gb\"}", false);
		ck_assert_msg(r->placed, "%s", r->summary);
		ck_assert_str_eq(r->replicas[0].node, names[k][1]);
		xp_place_result_free(r);
		xp_cluster_free(c);
	}
}
END_TEST

START_TEST(judge_counts_what_was_taken)
{
	/* xp_mig_judge: slices this placement put on the GPU took free instances of their profile
	 * first. One free 1g.10gb beside a 3g.40gb in use: the first 1g is existing, the second
	 * new (at 4, 5 or 6 wherever the 3g sits), the fourth has no sure start. */
	const struct xp_mmodel *md = model("H100 SXM 80GB");
	const struct xp_mtemplate *t = xp_manifest_template(md, "1g.10gb");
	const struct xp_mtemplate *kinds[] = {t};
	const struct xp_mig_inst inst[] = {{"3g.40gb", false}, {"1g.10gb", true}};
	struct xp_mig_answer a;
	ck_assert_int_eq(xp_mig_judge(md, inst, 2, kinds, 1, 0, t, &a), 0);
	ck_assert(a.fits && a.existing);
	ck_assert_int_eq(xp_mig_judge(md, inst, 2, kinds, 1, 1.0 / 7, t, &a), 0);
	ck_assert(a.fits && !a.existing);
	ck_assert_int_eq(xp_mig_judge(md, inst, 2, kinds, 1, 2.0 / 7, t, &a), 0);
	ck_assert(a.fits && !a.existing);
	ck_assert_int_eq(xp_mig_judge(md, inst, 2, kinds, 1, 3.0 / 7, t, &a), 0);
	ck_assert(!a.fits);
	/* The same instance in use: the first is new already. */
	const struct xp_mig_inst held[] = {{"3g.40gb", false}, {"1g.10gb", false}};
	ck_assert_int_eq(xp_mig_judge(md, held, 2, kinds, 1, 0, t, &a), 0);
	ck_assert(a.fits && !a.existing);
}
END_TEST

/* The MIG instances nvidia-smi -L lists in the H200 capture (a real H200 in MIG mode), as
 * inventory allocations: a "Nc.PROFILE" line is a compute instance inside a GPU instance of
 * PROFILE (the capture's GI column: ids 2, 2, 3, 9, 10), which is then split and held as it is
 * (a job asking that profile does not get it); the others are free: no process runs. */
static size_t h200_instances(const char *names[8], bool held[8])
{
	size_t len, n = 0;
	char *text = xp_fixture_text("nvidia-smi/capture_h200-mig_590.48.01.txt", &len);
	const char *l = strstr(text, "# $ nvidia-smi -L\n");
	ck_assert_ptr_nonnull(l);
	l = strstr(l, "\n####"); /* the rule under the command line */
	ck_assert_ptr_nonnull(l);
	const char *end = strstr(l + 1, "\n####");
	static char buf[8][32];
	bool split_seen = false;
	for (const char *p = l; (p = strstr(p, "\n  MIG ")) != NULL && (!end || p < end); p++) {
		char name[32];
		ck_assert_int_eq(sscanf(p + 7, "%31s", name), 1);
		const char *dot = strchr(name, '.');
		bool ci = name[0] >= '0' && name[0] <= '9' && name[1] == 'c' && dot == name + 2;
		if (ci && split_seen)
			continue; /* the same GPU instance again */
		split_seen |= ci;
		ck_assert_uint_lt(n, 8);
		snprintf(buf[n], sizeof buf[n], "%s", ci ? dot + 1 : name);
		names[n] = buf[n];
		held[n++] = ci;
	}
	free(text);
	return n;
}

START_TEST(h200_capture_instances)
{
	const char *names[8];
	bool held[8];
	size_t n = h200_instances(names, held);
	ck_assert_uint_eq(n, 4);
	ck_assert_str_eq(names[0], "3g.71gb");
	ck_assert(held[0]);
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *nd = xp_node_new("h200");
	struct xp_device *d = xp_node_add_device(nd);
	d->vendor = xp_strdup("NVIDIA");
	d->model = xp_strdup("H200");
	d->driver = xp_strdup("590.48.01");
	d->memory_mib = 143771; /* the capture's memory.total */
	d->health = XP_HEALTH_OK;
	for (size_t i = 0; i < n; i++) {
		d->allocs = xp_realloc(d->allocs, (d->n_allocs + 1) * sizeof *d->allocs);
		d->allocs[d->n_allocs++] =
			(struct xp_alloc){xp_strdup(names[i]), held[i] ? xp_strdup("compute instances") : NULL, -1, 0};
	}
	xp_cluster_add(c, nd);
	/* Its two free 1g.18gb and its 2g.35gb are taken as they are; a third 1g.18gb exists
	 * nowhere and, the 8 memory slices being all cut, cannot be made either. */
	struct xp_place_result *r = place_mig(c, "{\"slice\": \"1g.18gb\", \"replicas\": 2}", false);
	ck_assert_msg(r->placed, "%s", r->summary);
	ck_assert_str_eq(r->replicas[1].instance, "existing");
	xp_place_result_free(r);
	r = place_mig(c, "{\"slice\": \"2g.35gb\"}", false);
	ck_assert_msg(r->placed, "%s", r->summary);
	ck_assert_str_eq(r->replicas[0].instance, "existing");
	xp_place_result_free(r);
	r = place_mig(c, "{\"slice\": \"1g.18gb\", \"replicas\": 3}", true);
	ck_assert(!r->placed);
	xp_place_result_free(r);
	r = place_mig(c, "{\"slice\": \"3g.71gb\"}", false);
	ck_assert(!r->placed);
	ck_assert_str_eq(r->reasons[0].text, "no free 3g.71gb instance exists on H200 (nor could one be made)");
	xp_place_result_free(r);
	r = place_mig(c, "{\"slice\": \"7g.141gb\"}", true);
	ck_assert(!r->placed);
	xp_place_result_free(r);
	/* Its instances destroyed, the GPU would take a 7g.141gb with its whole memory. */
	for (size_t i = 0; i < d->n_allocs; i++) {
		free(d->allocs[i].slice);
		free(d->allocs[i].owner);
	}
	d->n_allocs = 0;
	r = place_mig(c, "{\"slice\": \"7g.141gb\", \"memory_mib\": 142848}", true);
	ck_assert_msg(r->placed, "%s", r->summary);
	ck_assert_str_eq(r->replicas[0].instance, "new");
	xp_place_result_free(r);
	xp_cluster_free(c);
}
END_TEST

START_TEST(groups_take_existing_by_name)
{
	/* Review 14b item 3: free 1g.10gb, 1g.10gb and 2g.20gb beside a held 3g.40gb; a job of
	 * two groups (2 x 1g.10gb, 1 x 2g.20gb, either order) takes exactly those. Known only as
	 * a share (2/7 either way), this dry-run's own slices could have been one 2g.20gb, and
	 * every mix had to pass: refused, even with --reconfigure. */
	static const char *const jobs[] = {
		"{\"groups\": [{\"name\": \"a\", \"slice\": \"1g.10gb\", \"replicas\": 2},"
		" {\"name\": \"b\", \"slice\": \"2g.20gb\"}]}",
		"{\"groups\": [{\"name\": \"b\", \"slice\": \"2g.20gb\"},"
		" {\"name\": \"a\", \"slice\": \"1g.10gb\", \"replicas\": 2}]}"};
	for (int k = 0; k < 4; k++) {
		struct xp_cluster *c = xp_cluster_new();
		add_h100(c, "g", (const char *[]){"1g.10gb", "1g.10gb", "2g.20gb", "*3g.40gb"}, 4);
		struct xp_place_result *r = place_mig(c, jobs[k % 2], k >= 2);
		ck_assert_msg(r->placed, "%s", r->summary);
		ck_assert_uint_eq(r->n_replicas, 3);
		for (size_t i = 0; i < r->n_replicas; i++)
			ck_assert_str_eq(r->replicas[i].instance, "existing");
		xp_place_result_free(r);
		/* A fourth replica has no free instance left, nor room for a new one. */
		r = place_mig(c, "{\"slice\": \"1g.10gb\", \"replicas\": 3}", true);
		ck_assert(!r->placed);
		xp_place_result_free(r);
		xp_cluster_free(c);
	}
}
END_TEST

/* Adds a GPU holding inst (as add_h100 names them) to the last node of c. */
static void more_h100(struct xp_cluster *c, const char *const *inst, size_t n)
{
	struct xp_node *nd = c->nodes[c->n_nodes - 1];
	struct xp_device *d = xp_node_add_device(nd);
	const struct xp_device *d0 = &nd->devices[0];
	d->vendor = xp_strdup(d0->vendor);
	d->model = xp_strdup(d0->model);
	d->driver = xp_strdup(d0->driver);
	d->memory_mib = d0->memory_mib;
	d->health = XP_HEALTH_OK;
	for (size_t i = 0; i < n; i++) {
		bool held = inst[i][0] == '*';
		d->allocs = xp_realloc(d->allocs, (d->n_allocs + 1) * sizeof *d->allocs);
		d->allocs[d->n_allocs++] =
			(struct xp_alloc){xp_strdup(inst[i] + held), held ? xp_strdup("job") : NULL, -1, 0};
	}
}

START_TEST(existing_before_new)
{
	/* Review 14b item 4: --reconfigure only adds options. A free existing 1g.10gb is taken
	 * before a new instance on a busier GPU (which pack's score prefers) or an idler one
	 * (spread's), on another node or on the same one, under every strategy. */
	for (int s = 0; s < XP_STRAT_COUNT; s++) {
		/* Across nodes: a's GPU is busy (pack's pick), c's idle (spread's), b holds a free one. */
		struct xp_cluster *c = xp_cluster_new();
		add_h100(c, "a", (const char *[]){"*3g.40gb", "*2g.20gb"}, 2);
		add_h100(c, "b", (const char *[]){"1g.10gb", "*1g.10gb"}, 2);
		add_h100(c, "c", NULL, 0);
		struct xp_place_result *r = place_mig_s(c, "{\"slice\": \"1g.10gb\"}", true, s);
		ck_assert_msg(r->placed, "%s", r->summary);
		ck_assert_msg(strcmp(r->replicas[0].node, "b") == 0, "strategy %d: %s", s, r->replicas[0].node);
		ck_assert_str_eq(r->replicas[0].instance, "existing");
		xp_place_result_free(r);
		/* Two replicas: the free one first, then a new one. */
		r = place_mig_s(c, "{\"slice\": \"1g.10gb\", \"replicas\": 2}", true, s);
		ck_assert_msg(r->placed, "%s", r->summary);
		ck_assert_str_eq(r->replicas[0].node, "b");
		ck_assert_str_eq(r->replicas[0].instance, "existing");
		ck_assert_str_eq(r->replicas[1].instance, "new");
		xp_place_result_free(r);
		xp_cluster_free(c);

		/* Within a node: GPU 0 busy, GPU 1 with a free instance, GPU 2 idle. */
		c = xp_cluster_new();
		add_h100(c, "n", (const char *[]){"*3g.40gb", "*2g.20gb"}, 2);
		more_h100(c, (const char *[]){"1g.10gb"}, 1);
		more_h100(c, NULL, 0);
		r = place_mig_s(c, "{\"slice\": \"1g.10gb\"}", true, s);
		ck_assert_msg(r->placed, "%s", r->summary);
		ck_assert_msg(r->replicas[0].devices[0] == 1, "strategy %d: GPU %d", s, r->replicas[0].devices[0]);
		ck_assert_str_eq(r->replicas[0].instance, "existing");
		xp_place_result_free(r);
		xp_cluster_free(c);
	}
}
END_TEST

/* The recorded A100 report with its MIG devices list emptied (a GPU whose instances were all
 * destroyed) and current_mig set to mode; a replay directory under dir (free it). */
static char *replay_a100_no_instances(const char *dir, const char *mode)
{
	struct xp_err err = {{0}};
	size_t len;
	char *x = xp_read_file(xp_fixture("nvidia-smi/a100-sxm4-80gb-x4_535.54.03.q.xml"), 1 << 22, &len, &err);
	ck_assert_msg(x != NULL, "%s", err.msg);
	char *a = strstr(x, "<mig_devices>"), *b = strstr(x, "</mig_devices>");
	char *c = strstr(x, "<current_mig>Enabled</current_mig>");
	ck_assert(a && b && c && c < a);
	a += strlen("<mig_devices>");
	char *y = xp_asprintf("%.*s<current_mig>%s</current_mig>%.*s\n%s", (int)(c - x), x, mode,
			      (int)(a - c - strlen("<current_mig>Enabled</current_mig>")),
			      c + strlen("<current_mig>Enabled</current_mig>"), b);
	char *d = xp_asprintf("%s/dgx0", dir);
	ck_assert_int_eq(mkdir(d, 0700), 0);
	free(xp_write_file(d, "nvidia-smi-q-x.xml", y, 0600));
	free(xp_write_file(d, "hostname", "dgx-a100-07\n", 0600));
	free(x);
	free(y);
	return d;
}

START_TEST(mig_mode_modelled)
{
	/* Review 14b item 2: a GPU in MIG mode with no instance is not offered whole or as a
	 * share (NVIDIA's device plugin offers such a GPU only as its instances); discovery
	 * reads the mode (nvidia-smi -q -x current_mig) into the inventory's mig_mode. */
	char dir[] = "/tmp/xp-mig-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char *d = replay_a100_no_instances(dir, "Enabled");
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", d, "inventory", "--json", NULL), 0);
	ck_assert_msg(r.status == 0 && strstr(r.out, "\"mig_mode\": true") != NULL, "%s%s", r.out, r.err);
	ck_assert_msg(strstr(r.out, "\"allocations\": []") != NULL, "%s", r.out);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", d, "place", "--dry-run", "--devices", "1", NULL), 0);
	ck_assert_int_eq(r.status, 3);
	ck_assert_msg(strstr(r.out, "fewer than 1 free A100 80GB (1 partitioned: MIG mode on)") != NULL, "%s", r.out);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", d, "place", "--dry-run", "--share", "50", NULL), 0);
	ck_assert_int_eq(r.status, 3);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", d, "place", "--dry-run", "--slice", "1g.10gb",
				      "--reconfigure", NULL), 0);
	ck_assert_msg(r.status == 0 && strstr(r.out, "mig: new instance, needs repartition") != NULL, "%s%s", r.out,
		      r.err);
	xp_run_free(&r);
	xp_rm_rf(d);
	free(d);

	/* MIG mode off: whole as before; a slice needs MIG mode enabled, and both say so. */
	d = replay_a100_no_instances(dir, "Disabled");
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", d, "inventory", "--json", NULL), 0);
	ck_assert_msg(strstr(r.out, "\"mig_mode\": false") != NULL, "%s", r.out);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", d, "place", "--dry-run", "--devices", "1", NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.out);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", d, "place", "--dry-run", "--slice", "1g.10gb", NULL), 0);
	ck_assert_int_eq(r.status, 3);
	ck_assert_msg(strstr(r.out, "no free 1g.10gb instance exists on A100 80GB (MIG mode off; a new one could be "
				    "made with MIG mode enabled: --reconfigure)") != NULL, "%s", r.out);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", d, "place", "--dry-run", "--slice", "1g.10gb",
				      "--reconfigure", NULL), 0);
	ck_assert_msg(r.status == 0 && strstr(r.out, "mig: new instance, needs MIG mode enabled (MIG mode off) and "
						  "repartition") != NULL, "%s%s", r.out, r.err);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", d, "place", "--dry-run", "--slice", "1g.10gb",
				      "--reconfigure", "--json", NULL), 0);
	ck_assert_msg(strstr(r.out, "\"enable_mig\": true") != NULL, "%s", r.out);
	xp_run_free(&r);
	/* The exports say so too: the GPU needs MIG mode enabled before its new instance. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", d, "place", "--dry-run", "--slice", "1g.10gb",
				      "--reconfigure", "--export", "k8s", NULL), 0);
	ck_assert_msg(r.status == 0 && strstr(r.out, " 1g.10gb (enable MIG mode)\" # new MIG instances") != NULL,
		      "%.2000s%.1000s", r.out, r.err);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", d, "place", "--dry-run", "--slice", "1g.10gb",
				      "--reconfigure", "--export", "slurm", NULL), 0);
	ck_assert_msg(r.status == 0 && strstr(r.out, " 1g.10gb (enable MIG mode): Slurm cannot create") != NULL,
		      "%.2000s%.1000s", r.out, r.err);
	xp_run_free(&r);
	xp_rm_rf(d);
	free(d);
	xp_rm_rf(dir);

	/* In the model: on refuses whole and share, off and not known (a file without the key)
	 * do not; the index and the scan agree (nodes alike but for the mode are judged apart). */
	static const int modes[] = {1, 0, -1};
	for (int k = 0; k < 3; k++) {
		struct xp_cluster *c = xp_cluster_new();
		add_h100(c, "a", NULL, 0);
		add_h100(c, "b", NULL, 0);
		c->nodes[0]->devices[0].mig_mode = modes[k];
		struct xp_place_result *res = place_mig(c, "{\"devices\": 2}", false);
		ck_assert(!res->placed);
		xp_place_result_free(res);
		res = place_mig(c, "{\"devices\": 1, \"replicas\": 2}", false);
		ck_assert_msg(res->placed == (modes[k] != 1), "mode %d: %s", modes[k], res->summary);
		xp_place_result_free(res);
		res = place_mig(c, "{\"share_pct\": 60, \"replicas\": 2}", false);
		ck_assert_msg(res->placed == (modes[k] != 1), "mode %d: %s", modes[k], res->summary);
		xp_place_result_free(res);
		xp_cluster_free(c);
	}
}
END_TEST

START_TEST(mig_mode_json)
{
	/* The inventory's mig_mode: true, false, null or absent (a file from before it: not
	 * known); written back as read; anything else refused with its path. */
	static const char *const in[] = {"true", "false", "null", NULL};
	static const int want[] = {1, 0, -1, -1};
	for (int k = 0; k < 4; k++) {
		char *doc = xp_asprintf("{\"schema\": \"xpool.inventory/v1\", \"nodes\": [{\"name\": \"n\", "
					"\"devices\": [{\"index\": 0, \"model\": \"H100 SXM 80GB\"%s%s}]}]}",
					in[k] ? ", \"mig_mode\": " : "", in[k] ? in[k] : "");
		struct xp_err err = {{0}};
		json_t *jd = json_loads(doc, 0, NULL);
		ck_assert_ptr_nonnull(jd);
		struct xp_cluster *c = xp_cluster_from_json(jd, &err);
		json_decref(jd);
		ck_assert_msg(c != NULL, "%s", err.msg);
		ck_assert_int_eq(c->nodes[0]->devices[0].mig_mode, want[k]);
		json_t *j = xp_cluster_to_json(c);
		json_t *v = json_object_get(json_array_get(json_object_get(json_array_get(json_object_get(j, "nodes"), 0),
									   "devices"), 0), "mig_mode");
		ck_assert(want[k] < 0 ? json_is_null(v) : json_is_boolean(v) && json_is_true(v) == (want[k] == 1));
		json_decref(j);
		xp_cluster_free(c);
		free(doc);
	}
	const char *badd = "{\"schema\": \"xpool.inventory/v1\", \"nodes\": [{\"name\": \"n\", \"devices\": "
			   "[{\"index\": 0, \"mig_mode\": \"on\"}]}]}";
	struct xp_err err = {{0}};
	json_t *jb = json_loads(badd, 0, NULL);
	ck_assert_ptr_null(xp_cluster_from_json(jb, &err));
	json_decref(jb);
	ck_assert_str_eq(err.msg, "$.nodes[0].devices[0].mig_mode: expected true, false or null, got a string");
}
END_TEST

START_TEST(partitioned_refusal_says_so)
{
	/* Minor: a whole GPU or a share on a GPU holding only free instances is refused as
	 * partitioned, not as merely not free. */
	struct xp_cluster *c = xp_cluster_new();
	add_h100(c, "g", (const char *[]){"1g.10gb", "1g.10gb"}, 2);
	struct xp_place_result *r = place_mig(c, "{\"devices\": 1}", false);
	ck_assert(!r->placed);
	ck_assert_str_eq(r->reasons[0].text, "fewer than 1 free H100 SXM 80GB (1 partitioned: MIG mode on)");
	xp_place_result_free(r);
	r = place_mig(c, "{\"share_pct\": 10}", false);
	ck_assert(!r->placed);
	ck_assert_str_eq(r->reasons[0].text, "fewer than 1 free H100 SXM 80GB with 10% free (1 partitioned: MIG mode on)");
	xp_place_result_free(r);
	xp_cluster_free(c);
}
END_TEST

START_TEST(a100_xml_unnamed_instances)
{
	/* The recorded A100 report lists MIG devices by size only (no profile): such an instance
	 * is not known to be free or of a profile, so its GPU takes no slice, new or existing. */
	char dir[] = "/tmp/xp-mig-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char *d = xp_replay_dgx(dir);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", d, "place", "--dry-run", "--slice", "1g.10gb",
				      "--reconfigure", NULL), 0);
	ck_assert_int_eq(r.status, 3);
	xp_run_free(&r);
	/* Without --reconfigure the refusal says why: the instances' profile is unknown. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", d, "place", "--dry-run", "--slice", "1g.20gb", NULL), 0);
	ck_assert_int_eq(r.status, 3);
	xp_want_parts(r.out, "no free 1g.20gb instance known on A100 80GB: the profile of its MIG instances is unknown",
		      NULL);
	xp_run_free(&r);
	free(d);
	xp_rm_rf(dir);
}
END_TEST

/* The text of one command's section in the H200 capture (the lines after its rule, up to the
 * next rule), written to dir/name. */
static void capture_to(const char *dir, const char *cmd, const char *name)
{
	size_t len;
	char *text = xp_fixture_text("nvidia-smi/capture_h200-mig_590.48.01.txt", &len);
	char *head = xp_asprintf("# $ %s\n", cmd);
	const char *l = strstr(text, head);
	ck_assert_ptr_nonnull(l);
	l = strstr(l, "\n####");
	ck_assert_ptr_nonnull(l);
	l = strchr(l + 1, '\n') + 1;
	const char *end = strstr(l, "\n####");
	ck_assert_ptr_nonnull(end);
	char *body = xp_strndup(l, (size_t)(end - l + 1));
	free(xp_write_file(dir, name, body, 0644));
	free(body);
	free(head);
	free(text);
}

/* Discovery of the real H200 capture through the program's replay: nvidia-smi -L (which
 * `xpool record` saves) names the instances; the split GPU instance (1c. and 2c.3g.71gb) is one
 * held 3g.71gb; the others are free with their UUIDs. */
START_TEST(h200_capture_replay)
{
	char dir[] = "/tmp/xp-mig-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	capture_to(dir, "nvidia-smi topo -m", "nvidia-smi-topo-m.txt");
	capture_to(dir, "nvidia-smi -L", "nvidia-smi-L.txt");
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", dir, "inventory", "--json", NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	json_t *doc = json_loads(r.out, 0, NULL);
	ck_assert_ptr_nonnull(doc);
	json_t *dv = json_array_get(json_object_get(json_array_get(json_object_get(doc, "nodes"), 0), "devices"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(dv, "model")), "H200");
	json_t *al = json_object_get(dv, "allocations");
	ck_assert_uint_eq(json_array_size(al), 4);
	static const char *const want[][3] = {
		{"3g.71gb", "compute instances", NULL},
		{"2g.35gb", NULL, "MIG-00000002-0000-0000-0000-000000000002"},
		{"1g.18gb", NULL, "MIG-00000003-0000-0000-0000-000000000003"},
		{"1g.18gb", NULL, "MIG-00000004-0000-0000-0000-000000000004"},
	};
	for (size_t i = 0; i < 4; i++) {
		json_t *a = json_array_get(al, i);
		ck_assert_str_eq(json_string_value(json_object_get(a, "slice")), want[i][0]);
		const char *job = json_string_value(json_object_get(a, "job"));
		const char *uuid = json_string_value(json_object_get(a, "uuid"));
		ck_assert(want[i][1] ? job && strcmp(job, want[i][1]) == 0 : job == NULL);
		ck_assert(want[i][2] ? uuid && strcmp(uuid, want[i][2]) == 0 : uuid == NULL);
	}
	json_decref(doc);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", dir, "place", "--dry-run", "--slice", "1g.18gb",
				      "--replicas", "2", NULL), 0);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	xp_want_parts(r.out, "0 1g.18gb", "mig: existing instance", NULL);
	/* Each replica its own instance, by the UUID CUDA selects a MIG instance by. */
	xp_want_parts(r.out, "CUDA_VISIBLE_DEVICES=MIG-00000003-0000-0000-0000-000000000003",
		      "CUDA_VISIBLE_DEVICES=MIG-00000004-0000-0000-0000-000000000004", NULL);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", dir, "place", "--dry-run", "--slice", "3g.71gb", NULL), 0);
	ck_assert_int_eq(r.status, 3);
	xp_run_free(&r);
	xp_rm_rf(dir);
}
END_TEST

/* Runs xpool place on an inventory file with the args after path; its stdout (free it). */
static char *run_place(const char *path, int status, ...)
{
	char *argv[16] = {"--inventory", (char *)path, "place", "--dry-run"};
	size_t n = 4;
	va_list ap;
	va_start(ap, status);
	for (char *a; (a = va_arg(ap, char *)) != NULL && n < 13;)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, argv[0], argv[1], argv[2], argv[3], n > 4 ? argv[4] : NULL,
				      n > 5 ? argv[5] : NULL, n > 6 ? argv[6] : NULL, n > 7 ? argv[7] : NULL,
				      n > 8 ? argv[8] : NULL, n > 9 ? argv[9] : NULL, n > 10 ? argv[10] : NULL,
				      n > 11 ? argv[11] : NULL, n > 12 ? argv[12] : NULL, NULL),
			 0);
	ck_assert_msg(r.status == status, "exit %d: %s", r.status, r.err);
	char *out = r.out;
	r.out = NULL;
	xp_run_free(&r);
	return out;
}

START_TEST(cli_says_existing_or_new)
{
	/* Through the command: the text, the JSON and each export say which instance a slice is. */
	struct xp_cluster *c = xp_cluster_new();
	add_h100(c, "a", (const char *[]){"1g.10gb"}, 1);
	add_h100(c, "b", NULL, 0);
	json_t *j = xp_cluster_to_json(c);
	/* One GPU a node: its link matrix is its own cell. */
	for (size_t i = 0; i < json_array_size(json_object_get(j, "nodes")); i++)
		json_object_set_new(json_array_get(json_object_get(j, "nodes"), i), "links",
				    json_pack("[[s]]", "X"));
	char *text = json_dumps(j, 0);
	json_decref(j);
	xp_cluster_free(c);
	char *path = xp_tmpfile(text, strlen(text));
	free(text);

	char *out = run_place(path, 0, "--slice", "1g.10gb", NULL);
	ck_assert_msg(strstr(out, "mig: existing instance") != NULL, "%s", out);
	free(out);
	out = run_place(path, 0, "--slice", "1g.10gb", "--json", NULL);
	ck_assert_msg(strstr(out, "\"instance\": \"existing\"") != NULL, "%s", out);
	/* No UUID in this inventory: the env says so rather than give the GPU's index. */
	ck_assert_msg(strstr(out, "\"CUDA_VISIBLE_DEVICES\": \"(an instance on GPU 0 whose MIG UUID is not known)\"") != NULL,
		      "%s", out);
	free(out);
	/* A real H100's 1g.10gb holds 9.75 GiB (nvidia-smi mig -lgip), not 10240 MiB. */
	out = run_place(path, 0, "--slice", "1g.10gb", "--memory", "9984", NULL);
	free(out);
	out = run_place(path, 3, "--slice", "1g.10gb", "--memory", "10200", NULL);
	free(out);
	out = run_place(path, 0, "--slice", "1g.10gb", "--export", "k8s", NULL);
	ck_assert_msg(strstr(out, "mig-repartition") == NULL, "%s", out);
	free(out);
	/* A Volcano Job's record of the devices names the slice, as a Pod's does. */
	out = run_place(path, 0, "--slice", "1g.10gb", "--export", "volcano", NULL);
	ck_assert_msg(strstr(out, "\"xpool.io/devices\": \"a:0 1g.10gb\"") != NULL, "%s", out);
	free(out);
	/* Two replicas: the second is new (b, or a beside its instance). */
	out = run_place(path, 3, "--slice", "1g.10gb", "--replicas", "2", NULL);
	ck_assert_msg(strstr(out, "a new one could be made: --reconfigure") != NULL, "%s", out);
	free(out);
	out = run_place(path, 0, "--slice", "1g.10gb", "--replicas", "2", "--reconfigure", NULL);
	ck_assert_msg(strstr(out, "(a new instance on GPU 0: its MIG UUID exists once it is made)") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "mig: new instance, needs repartition") != NULL, "%s", out);
	free(out);
	out = run_place(path, 0, "--slice", "1g.10gb", "--replicas", "2", "--reconfigure", "--json", NULL);
	ck_assert_msg(strstr(out, "\"instance\": \"new\"") != NULL, "%s", out);
	free(out);
	out = run_place(path, 0, "--slice", "1g.10gb", "--replicas", "2", "--reconfigure", "--export", "k8s", NULL);
	ck_assert_msg(strstr(out, "\"xpool.io/mig-repartition\": ") != NULL, "%s", out);
	free(out);
	out = run_place(path, 0, "--slice", "1g.10gb", "--replicas", "2", "--reconfigure", "--export", "volcano", NULL);
	ck_assert_msg(strstr(out, "\"xpool.io/mig-repartition\": ") != NULL, "%s", out);
	free(out);
	out = run_place(path, 0, "--slice", "1g.10gb", "--replicas", "2", "--reconfigure", "--export", "slurm", NULL);
	ck_assert_msg(strstr(out, "# MIG: new instances (NODE:GPU PROFILE) ") != NULL &&
			      strstr(out, "Slurm cannot create MIG instances") != NULL,
		      "%s", out);
	free(out);
	/* A batch line takes the option too (the command table is the console prompt's as well). */
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, "place --dry-run --slice 1g.10gb --replicas 2 --reconfigure\n", "--inventory",
				      path, "-b", "-", NULL),
			 0);
	ck_assert_msg(r.status == 0 && strstr(r.out, "mig: new instance, needs repartition") != NULL, "%d: %s%s",
		      r.status, r.out, r.err);
	xp_run_free(&r);
	unlink(path);
	free(path);
}
END_TEST

XP_DEFINE_SUITE(mig,
	{"core", .timeout_s = 120, .setup = setup, .teardown = teardown,
	 .tests = {every_row_every_start, existing_instances, planned_by_this_job, engine_refuses_impossible,
		   sim_layouts_are_buildable, alike_use_unlike_instances, committed_layouts_apart,
		   default_needs_a_free_instance,
		   free_instance_taken, held_and_free_apart, judge_counts_what_was_taken, h200_capture_instances,
		   a100_xml_unnamed_instances, h200_capture_replay, cli_says_existing_or_new, groups_take_existing_by_name,
		   existing_before_new, mig_mode_modelled, mig_mode_json, partitioned_refusal_says_so}})
