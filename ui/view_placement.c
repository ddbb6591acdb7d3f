/* view_placement.c: view 3, placement. A job form on the left (edited in place, or loaded
 * from a job spec file), the dry-run on the right: where each replica would go with its
 * devices, score breakdown, environment and a mini map of the chosen nodes' devices with the
 * chosen ones marked and the device files to mount; or, when nothing fits, the reasons table
 * and the smallest change that would fit. A quick job is run under all four strategies at
 * once, so switching strategy compares without a wait.
 *
 * The dry-runs go through one placement index per cluster (place.h), built on the first run
 * (~60 ms at 10,000 nodes) and kept while the data stays the same: then a usual job takes
 * 0.02-5 ms per strategy and a job of thousands of replicas tens of ms. It is dropped when new
 * data comes (on_data: the cluster it points into may be freed) and rebuilt on the next run.
 * The dry-run is synchronous, on the key loop, and a huge refused job (its relaxation is
 * searched too) can still take seconds. So once run, the result follows the job and the data
 * (a field change reruns at once, a new cluster when the view is next drawn) only while a run
 * is quick; a slow one is marked stale instead and waits for r, and the other strategies of a
 * slow job wait for s or c.
 *
 * With --compare and --slurm, the result's head also shows Slurm's own answer for the job
 * (src/cmd/slurm_ask.h: sbatch --test-only on a thread of its own, so the keys never wait for
 * slurmctld) and whether the shown strategy's placement agrees. The request does not name
 * nodes: one answer serves every strategy and a rerun on new data (no sbatch per refresh);
 * another job asks again, as r does; Esc gives up a question in flight. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "draw.h"
#include "jobspec.h"
#include "line_edit.h"
#include "list.h"
#include "map_layout.h"
#include "place.h"
#include "place_form.h"
#include "place_text.h"
#include "slurm_ask.h"
#include "styled_doc.h"
#include "theme.h"
#include "view.h"
#include "xp.h"

/* Form rows that are not job fields. */
enum {
	ROW_GROUP = XP_PF_COUNT, /* which task group the fields edit (a job with several) */
	ROW_STRATEGY,
	ROW_RUN,
	ROW_FILE,   /* the path being typed after L (not a cursor row) */
	ROW_EXPLAIN /* the node name being typed after x (not a cursor row) */
};
#define MAX_ROWS (XP_PF_COUNT + 3)
/* Columns of a form label. */
#define LABEL_W 12
/* Replicas the details list before saying how many more (the table is for reading). */
#define MAX_SHOWN 500
/* A first strategy quicker than this (ms, on the kept index) runs the other three at once, for
 * the comparison: at most about 4 x this on the key loop. */
#define COMPARE_MS 100.0
/* A run quicker than this (ms; for new data, with the index build) is redone on its own after a
 * field or the data changed. */
#define AUTO_RERUN_MS 300.0

struct pv {
	struct xp_job *job; /* never NULL */
	size_t group;       /* the group the form edits */
	char *file;         /* the last file loaded, for the L prompt and the title */
	char *explain;      /* the node whose every check the result lists (x), NULL for none */
	int strategy, prev_strategy;
	int cursor;         /* index into the rows of the form */
	/* the inline editor */
	bool editing;
	int edit_row;       /* a field, ROW_FILE or ROW_EXPLAIN */
	struct xp_ledit ed;
	/* manifests, loaded on the first run */
	struct xp_manifest *ms[XP_PLACE_MANIFESTS];
	size_t nm;
	bool ms_loaded;
	/* the placement index of the cluster shown, built on the first run and kept while the
	 * data is the same (see the top of the file) */
	struct xp_place_index *ix;
	const struct xp_cluster *ix_c; /* what it indexes: compared only */
	uint64_t ix_gen;
	double ix_ms;       /* how long it took to build */
	bool ix_new;        /* built by the last run (the head says so) */
	/* the last dry-run, one per strategy */
	bool ran;
	struct xp_place_result *res[XP_STRAT_COUNT];
	double res_ms[XP_STRAT_COUNT]; /* how long each took */
	char *error;        /* the job could not be judged: why */
	bool stale;         /* the job or the data changed since, and the run was too slow to redo */
	double last_ms;     /* how long the last run took, every strategy it ran, index build aside */
	const struct xp_cluster *seen; /* what the results are for: compared, never read (freed since) */
	uint64_t seen_gen;
	size_t seen_nodes;
	/* the result's lines, built for a width */
	struct xp_sdoc doc;
	size_t head;        /* its first lines that stay put: title, summary, comparison */
	bool doc_dirty;
	int doc_w;
	struct xp_list pane; /* a pager over the result's lines under its head */
	/* --compare: Slurm's answer for the job (see the top of the file) */
	struct xp_slurm_ask *ask; /* the question asked for the job (in flight or answered), or NULL */
	bool ask_shown;           /* its answer is in the doc */
	char *slurm_note;         /* without a question: why not asked ("slurm: not asked: ..."), or NULL */
	/* the last frame, for clicks */
	int f_y, f_h, f_w;
	const struct xp_glyphs *g;
	char where[256];
};

/* ---- the form's rows ---- */

static int form_rows(const struct pv *v, int *rows)
{
	int n = 0;
	if (v->job->n_groups > 1)
		rows[n++] = ROW_GROUP;
	for (int f = 0; f < XP_PF_COUNT; f++)
		rows[n++] = f;
	rows[n++] = ROW_STRATEGY;
	rows[n++] = ROW_RUN;
	return n;
}

static int cur_row(const struct pv *v)
{
	int rows[MAX_ROWS];
	int n = form_rows(v, rows);
	return rows[v->cursor < n ? v->cursor : n - 1];
}

static struct xp_task_group *cur_group(struct pv *v)
{
	return &v->job->groups[v->group < v->job->n_groups ? v->group : 0];
}

/* ---- running ---- */

/* Drops Slurm's answer, and gives up a question in flight. */
static void slurm_forget(struct pv *v)
{
	xp_slurm_ask_abandon(v->ask);
	v->ask = NULL;
	v->ask_shown = false;
	free(v->slurm_note);
	v->slurm_note = NULL;
	v->doc_dirty = true;
}

static void results_free(struct pv *v)
{
	for (int s = 0; s < XP_STRAT_COUNT; s++) {
		xp_place_result_free(v->res[s]);
		v->res[s] = NULL;
	}
	free(v->error);
	v->error = NULL;
	v->doc_dirty = true;
}

static void load_manifests(struct pv *v)
{
	if (v->ms_loaded)
		return;
	v->ms_loaded = true;
	v->nm = xp_place_manifests(v->ms);
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void drop_index(struct pv *v)
{
	xp_place_index_free(v->ix);
	v->ix = NULL;
	v->ix_c = NULL;
	v->ix_new = false;
}

/* The index of c: the kept one while c is what it was built on, else a new one. */
static struct xp_place_index *index_for(struct pv *v, const struct xp_cluster *c)
{
	if (v->ix && (v->ix_c != c || v->ix_gen != c->generation))
		drop_index(v);
	if (!v->ix) {
		double t0 = now_ms();
		v->ix = xp_place_index_new(c, (const struct xp_manifest *const *)v->ms, v->nm);
		v->ix_ms = now_ms() - t0;
		v->ix_c = c;
		v->ix_gen = c->generation;
		v->ix_new = true;
	}
	return v->ix;
}

/* Runs strategy s against the cluster the results are for, unless done; false on an error. */
static bool run_one(struct pv *v, const struct xp_cluster *c, int s)
{
	if (v->res[s] || v->error)
		return !v->error;
	struct xp_place_index *ix = index_for(v, c);
	struct xp_err err = {{0}};
	struct xp_place_opts o = {s, 0, v->explain, false, false};
	double t0 = now_ms();
	v->res[s] = xp_place_ix(ix, v->job, &o, &err);
	v->res_ms[s] = now_ms() - t0;
	v->doc_dirty = true;
	if (!v->res[s])
		v->error = xp_strdup(err.msg);
	return !v->error;
}

static void slurm_ask(struct pv *v, struct xp_ui *ui, bool again);

/* Runs the job against the cluster shown: the current strategy, and the other three too when
 * the first was quick (a huge job at 10,000 nodes can take seconds; then they wait for s or
 * c). loud says the outcome in the status line; a quiet rerun keeps the operator's place and
 * says an error only when it is new. */
static void run(struct pv *v, struct xp_ui *ui, bool loud)
{
	const struct xp_cluster *c = xp_ui_cluster(ui);
	load_manifests(v);
	char *old_error = v->error;
	v->error = NULL;
	results_free(v);
	v->ran = true;
	v->stale = false;
	v->ix_new = false;
	v->seen = c;
	v->seen_gen = c->generation;
	v->seen_nodes = c->n_nodes;
	if (loud)
		v->pane.top = 0;
	const struct xp_manifest *const *ms = (const struct xp_manifest *const *)v->ms;
	struct xp_err err = {{0}};
	if (xp_job_check(v->job, ms, v->nm, &err) < 0)
		v->error = xp_strdup(err.msg);
	else if (run_one(v, c, v->strategy) && v->res_ms[v->strategy] < COMPARE_MS)
		for (int s = 0; s < XP_STRAT_COUNT && run_one(v, c, s); s++)
			;
	v->last_ms = 0;
	for (int s = 0; s < XP_STRAT_COUNT; s++)
		v->last_ms += v->res[s] ? v->res_ms[s] : 0;
	bool same = old_error && v->error && strcmp(old_error, v->error) == 0;
	free(old_error);
	if (v->error) {
		if (loud || !same)
			xp_ui_message(ui, XP_ROLE_FAIL, "placement: %s", v->error);
		return;
	}
	const struct xp_place_result *r = v->res[v->strategy];
	slurm_ask(v, ui, loud);
	if (loud)
		xp_ui_message(ui, r->placed ? XP_ROLE_OK : XP_ROLE_WARN, "%s", r->summary);
}

/* With --compare: asks Slurm about the job of the shown result, unless the question asked
 * already is this job's (again: anew, as r wants). */
static void slurm_ask(struct pv *v, struct xp_ui *ui, bool again)
{
	struct xp_ctx *ctx = xp_ui_ctx(ui);
	const struct xp_place_result *r = v->res[v->strategy];
	if (!ctx->compare || !r)
		return;
	struct xp_err err = {{0}};
	if (!ctx->slurm) {
		slurm_forget(v);
		v->slurm_note = xp_strdup("slurm: not asked: --compare asks the live Slurm (start with --slurm)");
		return;
	}
	char *req = xp_slurm_ask_request(r, v->job, xp_ui_cluster(ui), (const struct xp_manifest *const *)v->ms, v->nm,
					 &err);
	if (req && !again && v->ask && strcmp(req, xp_slurm_ask_text(v->ask)) == 0) {
		free(req);
		v->doc_dirty = true; /* the verdict is for the result shown now */
		return;
	}
	slurm_forget(v);
	if (req)
		v->ask = xp_slurm_ask_start(ctx->slurm, req, &err);
	if (!v->ask)
		v->slurm_note = xp_asprintf("slurm: not asked: %s", err.msg);
	free(req);
}

/* Something the result depends on changed: rerun at once when the last run was quick (new data:
 * with the index built again, as long as the last build); a slow one is only marked stale, so
 * that neither a keystroke nor a data refresh freezes the keys. */
static void rerun_or_mark(struct pv *v, struct xp_ui *ui)
{
	double cost = v->last_ms + (v->ix ? 0 : v->ix_ms);
	if (cost < AUTO_RERUN_MS)
		run(v, ui, false);
	else if (!v->stale) {
		v->stale = true;
		v->doc_dirty = true;
		xp_ui_message(ui, XP_ROLE_WARN, "placement: the dry-run takes %.1f s; r runs it again", cost / 1e3);
	}
}

/* A changed job makes the shown result wrong: rerun it, or drop it until asked. */
static void job_changed(struct pv *v, struct xp_ui *ui)
{
	if (v->ran)
		rerun_or_mark(v, ui);
	else
		results_free(v);
}

/* The data changed under a result: rerun against it (when the view is drawn, not per poll). */
static void sync_view(struct pv *v, struct xp_ui *ui)
{
	const struct xp_cluster *c = xp_ui_cluster(ui);
	v->g = xp_ui_glyphs(ui);
	if (v->ix && (c != v->ix_c || c->generation != v->ix_gen))
		drop_index(v);
	if (v->ran && !v->stale && (c != v->seen || c->generation != v->seen_gen))
		rerun_or_mark(v, ui);
}

/* Makes sure strategy s has a result for the shown data (s, c, or a switch to it). */
static void ensure(struct pv *v, struct xp_ui *ui, int s)
{
	sync_view(v, ui);
	if (!v->ran || v->stale || v->error || v->res[s])
		return;
	const struct xp_cluster *c = xp_ui_cluster(ui);
	if (c != v->seen || c->generation != v->seen_gen)
		run(v, ui, false);
	else
		run_one(v, c, s);
	if (v->error)
		xp_ui_message(ui, XP_ROLE_FAIL, "placement: %s", v->error);
}

/* ---- loading a job spec ---- */

static void set_job(struct pv *v, struct xp_job *j)
{
	xp_job_free(v->job);
	v->job = j;
	v->group = 0;
	int rows[MAX_ROWS];
	int n = form_rows(v, rows);
	if (v->cursor >= n)
		v->cursor = n - 1;
}

static void load_file(struct pv *v, struct xp_ui *ui, const char *path)
{
	struct xp_err err = {{0}};
	if (!*path) {
		xp_ui_message(ui, XP_ROLE_WARN, "load: no file named");
		return;
	}
	/* No shell expands what is typed here: "~/" is done as a shell would. */
	const char *home = getenv("HOME");
	char *full = strncmp(path, "~/", 2) == 0 && home && *home ? xp_asprintf("%s/%s", home, path + 2)
								    : xp_strdup(path);
	size_t len;
	char *text = xp_read_file(full, XP_JOB_MAX_BYTES, &len, &err);
	struct xp_job *j = text ? xp_job_parse(text, len, full, &err) : NULL;
	free(text);
	if (!j) {
		/* The job shown stays: a typo in a file must not cost the form. */
		xp_ui_message(ui, XP_ROLE_FAIL, "load: %s", err.msg);
		free(full);
		return;
	}
	free(v->file);
	v->file = full;
	path = full;
	set_job(v, j);
	/* A loaded job is run at once: loading it is asking where it goes. */
	run(v, ui, true);
	if (!v->error)
		xp_ui_message(ui, v->res[v->strategy]->placed ? XP_ROLE_OK : XP_ROLE_WARN, "loaded %s: %s", path,
			      v->res[v->strategy]->summary);
}

/* ---- the result's lines ---- */

static void add_head(struct pv *v)
{
	struct xp_sdoc *d = &v->doc;
	struct xp_sdoc_line *l = xp_sdoc_line(d);
	xp_sdoc_add(l, XP_ROLE_TITLE, "Dry-run  %s", xp_strategy_name(v->strategy));
	if (v->stale)
		xp_sdoc_add(l, XP_ROLE_WARN, "  STALE: the job or the data changed, r runs again");
	else {
		/* How long the dry-run took, and the index when this run had to build it. */
		char t[32], ti[32];
		xp_sdoc_add(l, XP_ROLE_DIM, "  %zu node%s, %s%s%s%s, nothing changes", v->seen_nodes,
			    v->seen_nodes == 1 ? "" : "s", xp_pv_ms(v->res_ms[v->strategy], t, sizeof t),
			    v->ix_new ? " (index built: " : "", v->ix_new ? xp_pv_ms(v->ix_ms, ti, sizeof ti) : "",
			    v->ix_new ? ")" : "");
	}
	const struct xp_place_result *r = v->res[v->strategy];
	l = xp_sdoc_line(d);
	xp_sdoc_add(l, r->placed ? XP_ROLE_OK : XP_ROLE_FAIL, "%s", r->summary ? r->summary : "");
	/* Refused: the smallest change that fits (as xpool place says it); placed with replicas
	 * waiting under a gang minimum: how many, the reasons for the next one come first below. */
	char buf[1024];
	if (r->relaxation) {
		l = xp_sdoc_line(d);
		xp_sdoc_add(l, XP_ROLE_WARN, "%s", xp_pv_relaxation(r, buf, sizeof buf));
	}
	if (r->placed && r->pending) {
		l = xp_sdoc_line(d);
		xp_sdoc_add(l, XP_ROLE_WARN, "%zu replica%s pending: the gang minimum is met, why the next waits is below",
			    r->pending, r->pending == 1 ? "" : "s");
	}
	/* --compare: Slurm's answer beside this result, or that it is being asked. */
	if (v->ask && !xp_slurm_ask_done(v->ask)) {
		l = xp_sdoc_line(d);
		xp_sdoc_add(l, XP_ROLE_DIM, "slurm: asking sbatch --test-only ... (Esc gives up)");
	} else if (v->ask) {
		char *line, *verdict;
		xp_slurm_ask_lines(v->ask, r, &line, &verdict);
		v->ask_shown = true;
		l = xp_sdoc_line(d);
		xp_sdoc_add(l, verdict ? XP_ROLE_NORMAL : XP_ROLE_FAIL, "%s", line);
		if (verdict) {
			l = xp_sdoc_line(d);
			xp_sdoc_add(l, strcmp(verdict, "agree") == 0 ? XP_ROLE_OK : XP_ROLE_WARN, "%s", verdict);
		}
		free(line);
		free(verdict);
	} else if (v->slurm_note) {
		l = xp_sdoc_line(d);
		xp_sdoc_add(l, XP_ROLE_DIM, "%s", v->slurm_note);
	}
	xp_sdoc_line(d);
	l = xp_sdoc_line(d);
	xp_sdoc_add(l, XP_ROLE_TITLE, "  %-9s %8s  %s", "STRATEGY", "SCORE", "RESULT");
	for (int s = 0; s < XP_STRAT_COUNT; s++) {
		const struct xp_place_result *x = v->res[s];
		char where[512];
		xp_pv_where(x, where, sizeof where);
		/* Not placed: the count in the score column, the reasons are below. */
		if (!x)
			snprintf(where, sizeof where, "not run yet (c compares all)");
		else if (!x->placed)
			snprintf(where, sizeof where, "%zu reason%s", x->n_reasons, x->n_reasons == 1 ? "" : "s");
		char score[32];
		xp_pv_outcome(x, score, sizeof score);
		l = xp_sdoc_line(d);
		bool here = s == v->strategy;
		xp_sdoc_add(l, here ? XP_ROLE_SELECTED : XP_ROLE_NORMAL, "%s %-9s %8s  %s", here ? ">" : " ",
			    xp_strategy_name(s), score, where);
	}
	xp_sdoc_line(d);
	v->head = d->n;
}

/* The reasons table: nodes refused for each reason, most common first. */
static void add_reasons(struct xp_sdoc *d, const struct xp_place_result *r)
{
	struct xp_sdoc_line *l;
	int cw = 4;
	for (size_t i = 0; i < r->n_reasons; i++) {
		int n = xp_draw_cols(r->reasons[i].code);
		if (n > cw)
			cw = n < 16 ? n : 16;
	}
	l = xp_sdoc_line(d);
	xp_sdoc_add(l, XP_ROLE_TITLE, "%6s  %-*s  %s", "NODES", cw, "CODE", "WHY NOT");
	for (size_t i = 0; i < r->n_reasons; i++) {
		l = xp_sdoc_line(d);
		xp_sdoc_add(l, XP_ROLE_FAIL, "%6zu", r->reasons[i].count);
		xp_sdoc_add(l, XP_ROLE_DIM, "  %-*.*s  ", cw, cw, r->reasons[i].code);
		xp_sdoc_add(l, XP_ROLE_NORMAL, "%s", r->reasons[i].text ? r->reasons[i].text : "");
	}
}

/* Columns of the node and device columns: the widest of the replicas shown. */
static void replica_widths(const struct xp_place_result *r, size_t shown, int *nw, int *dw)
{
	char devs[256];
	*nw = 4;
	*dw = 7;
	for (size_t i = 0; i < shown; i++) {
		int a = xp_draw_cols(r->replicas[i].node);
		int b = xp_draw_cols(xp_pv_devices(&r->replicas[i], devs, sizeof devs));
		*nw = a > *nw ? (a < 40 ? a : 40) : *nw;
		*dw = b > *dw ? (b < 40 ? b : 40) : *dw;
	}
}

static void add_replica(struct pv *v, const struct xp_cluster *c, size_t i, struct xp_cells *cells, int width,
			int nw, int dw)
{
	struct xp_sdoc *d = &v->doc;
	const struct xp_place_result *r = v->res[v->strategy];
	const struct xp_place_replica *p = &r->replicas[i];
	char devs[256], numa[16], buf[512];
	snprintf(numa, sizeof numa, "%d", p->numa);
	struct xp_sdoc_line *l = xp_sdoc_line(d);
	xp_sdoc_add(l, XP_ROLE_NORMAL, "%4zu %5.1f  ", i, p->score);
	xp_sdoc_add(l, XP_ROLE_OK, "%-*s", nw, p->node);
	xp_sdoc_add(l, XP_ROLE_NORMAL, "  %-*s  %s", dw, xp_pv_devices(p, devs, sizeof devs), p->numa >= 0 ? numa : "-");
	if (v->job->n_groups > 1) {
		const char *gn = v->job->groups[p->group].name;
		xp_sdoc_add(l, XP_ROLE_DIM, "  group %s", gn ? gn : "");
	}
	l = xp_sdoc_line(d);
	xp_sdoc_add(l, XP_ROLE_NORMAL, "      %s", xp_pv_breakdown(r->strategy, p, buf, sizeof buf));
	l = xp_sdoc_line(d);
	xp_sdoc_add(l, XP_ROLE_NORMAL, "      %s=%s", p->env_name ? p->env_name : "",
		    p->env_shown ? p->env_shown : p->env_value ? p->env_value : "");
	if (p->cpus) {
		l = xp_sdoc_line(d);
		xp_sdoc_add(l, XP_ROLE_DIM, "      cpus: %s (NUMA %d)", p->cpus, p->numa);
	}
	/* The device files, cut to the pane (the pane's first column is a margin). */
	if (p->n_mounts) {
		char *m = xp_malloc(4096);
		l = xp_sdoc_line(d);
		xp_sdoc_add(l, XP_ROLE_DIM, "      %s", xp_pv_mounts(p, width - 1 - 6, v->g->utf8, m, 4096));
		free(m);
	}
	/* The node's devices as the topology map draws them, the chosen ones as their own shape
	 * in the selected role: a shape, not only a colour, so NO_COLOR shows it too. */
	const struct xp_node *n = xp_cluster_node(c, p->node);
	if (!n)
		return;
	int cw = width - 20;
	xp_map_cells(n, v->g, cw > 8 ? cw : 8, cells);
	l = xp_sdoc_line(d);
	xp_sdoc_add(l, XP_ROLE_DIM, "      ");
	for (size_t k = 0; k < cells->n_seg; k++) {
		const struct xp_cell_seg *sg = &cells->seg[k];
		if (sg->dev >= 0 && xp_pv_chosen(r, p->node, sg->dev))
			xp_sdoc_add(l, XP_ROLE_SELECTED, "%s", xp_pv_chosen_glyph(v->g->utf8));
		else
			xp_sdoc_add(l, sg->role, "%.*s", (int)sg->len, cells->text + sg->off);
	}
	xp_sdoc_add(l, XP_ROLE_DIM, "  %s chosen", xp_pv_chosen_glyph(v->g->utf8));
}

/* The check list of the explained node, after the result. */
static void add_checks(struct pv *v)
{
	const struct xp_place_result *r = v->res[v->strategy];
	if (!v->explain || !r)
		return;
	xp_sdoc_line(&v->doc);
	struct xp_sdoc_line *l = xp_sdoc_line(&v->doc);
	xp_sdoc_add(l, XP_ROLE_TITLE, "Checks for %s", v->explain);
	xp_sdoc_add(l, XP_ROLE_DIM, "  (x, then an empty name, stops)");
	if (!r->explained) {
		l = xp_sdoc_line(&v->doc);
		xp_sdoc_add(l, XP_ROLE_WARN, "    not in the cluster shown");
		return;
	}
	for (size_t i = 0; i < r->n_checks; i++) {
		l = xp_sdoc_line(&v->doc);
		xp_sdoc_add(l, r->checks[i].pass ? XP_ROLE_OK : XP_ROLE_FAIL, "    %-4s", r->checks[i].pass ? "ok" : "FAIL");
		xp_sdoc_add(l, XP_ROLE_DIM, " %-12s ", r->checks[i].name);
		xp_sdoc_add(l, XP_ROLE_NORMAL, "%s", r->checks[i].detail ? r->checks[i].detail : "");
	}
}

static void build_body(struct pv *v, const struct xp_cluster *c, int width);

/* Lays out the result for width columns; c is the cluster shown (the one the result is for,
 * unless stale: then a node gone since has no map line). */
static void build_doc(struct pv *v, const struct xp_cluster *c, int width)
{
	build_body(v, c, width);
	add_checks(v);
}

static void build_body(struct pv *v, const struct xp_cluster *c, int width)
{
	xp_sdoc_free(&v->doc);
	v->doc_dirty = false;
	v->doc_w = width;
	v->head = 0;
	struct xp_sdoc *d = &v->doc;
	struct xp_sdoc_line *l;
	if (!v->error && !v->res[v->strategy]) {
		l = xp_sdoc_line(d);
		xp_sdoc_add(l, XP_ROLE_TITLE, "Dry-run  %s", xp_strategy_name(v->strategy));
		l = xp_sdoc_line(d);
		xp_sdoc_add(l, XP_ROLE_WARN, "not run for this job and data yet: r runs it");
		return;
	}
	if (v->error) {
		l = xp_sdoc_line(d);
		xp_sdoc_add(l, XP_ROLE_TITLE, "Dry-run");
		l = xp_sdoc_line(d);
		xp_sdoc_add(l, XP_ROLE_FAIL, "cannot judge this job: %s", v->error);
		l = xp_sdoc_line(d);
		xp_sdoc_add(l, XP_ROLE_DIM, "Change the field it names on the left; r runs again.");
		return;
	}
	add_head(v);
	const struct xp_place_result *r = v->res[v->strategy];
	if (r->placed && r->pending) {
		l = xp_sdoc_line(d);
		xp_sdoc_add(l, XP_ROLE_WARN, "PENDING  %zu replica%s wait; why the next one fits nowhere:", r->pending,
			    r->pending == 1 ? "" : "s");
		add_reasons(d, r);
		xp_sdoc_line(d);
	}
	if (r->placed) {
		size_t shown = r->n_replicas < MAX_SHOWN ? r->n_replicas : MAX_SHOWN;
		int nw, dw;
		replica_widths(r, shown, &nw, &dw);
		l = xp_sdoc_line(d);
		xp_sdoc_add(l, XP_ROLE_TITLE, "%4s %5s  %-*s  %-*s  %s", "#", "SCORE", nw, "NODE", dw, "DEVICES", "NUMA");
		struct xp_cells *cells = xp_calloc(1, sizeof *cells);
		for (size_t i = 0; i < shown; i++)
			add_replica(v, c, i, cells, width, nw, dw);
		free(cells);
		if (shown < r->n_replicas) {
			l = xp_sdoc_line(d);
			xp_sdoc_add(l, XP_ROLE_DIM, "      ... %zu more replicas (xpool place --json lists all)",
				    r->n_replicas - shown);
		}
		return;
	}
	add_reasons(d, r);
	if (!r->n_reasons) {
		l = xp_sdoc_line(d);
		xp_sdoc_add(l, XP_ROLE_DIM, "no nodes to place on yet (the data may still be loading)");
	}
}

/* ---- drawing ---- */

static void put_row(WINDOW *w, int y, int x, int maxx, int role, const char *s)
{
	int e = xp_draw_put(w, y, x, maxx, role, s, 0);
	xp_draw_fill(w, y, e, maxx, role == XP_ROLE_SELECTED ? role : XP_ROLE_NORMAL);
}

/* The editor's text from its scroll point, the cursor as one cell in the selected role. */
static void draw_editor(struct pv *v, WINDOW *w, int y, int x, int maxx)
{
	int width = maxx - x;
	if (width < 2)
		return;
	size_t start = xp_ledit_scroll(&v->ed, width);
	char before[XP_LEDIT_MAX + 1];
	size_t nb = v->ed.cur - start;
	memcpy(before, v->ed.text + start, nb);
	before[nb] = '\0';
	x = xp_draw_put(w, y, x, maxx, XP_ROLE_PROMPT, before, 0);
	const char *at = v->ed.text + v->ed.cur;
	char cell[8] = " ";
	if (*at) {
		size_t k = xp_draw_bytes(at, 1);
		memcpy(cell, at, k < sizeof cell - 1 ? k : sizeof cell - 1);
		cell[k < sizeof cell - 1 ? k : sizeof cell - 1] = '\0';
		at += k;
	}
	x = xp_draw_put(w, y, x, maxx, XP_ROLE_SELECTED, cell, 0);
	x = xp_draw_put(w, y, x, maxx, XP_ROLE_PROMPT, at, 0);
	xp_draw_fill(w, y, x, maxx, XP_ROLE_PROMPT);
}

static void row_value(struct pv *v, int row, char *buf, size_t len, int *role)
{
	struct xp_task_group *g = cur_group(v);
	*role = XP_ROLE_NORMAL;
	if (row < XP_PF_COUNT) {
		xp_pf_show(g, row, buf, len);
		if (xp_pf_is_default(g, row))
			*role = XP_ROLE_DIM;
	} else if (row == ROW_GROUP) {
		snprintf(buf, len, "%zu/%zu %s", v->group + 1, v->job->n_groups, g->name ? g->name : "");
	} else if (row == ROW_STRATEGY) {
		snprintf(buf, len, "%s", xp_strategy_name(v->strategy));
	} else {
		buf[0] = '\0';
	}
}

static void draw_form(struct pv *v, WINDOW *w, struct xp_rect r)
{
	int maxx = r.x + r.w;
	int rows[MAX_ROWS];
	int n = form_rows(v, rows);
	int y = r.y;
	char buf[512], title[512];
	/* Row 0: the job, or the path or node being typed after L or x. */
	if (v->editing && (v->edit_row == ROW_FILE || v->edit_row == ROW_EXPLAIN)) {
		int x = xp_draw_put(w, y, r.x, maxx, XP_ROLE_NORMAL, " ", 0);
		x = xp_draw_put(w, y, x, maxx, XP_ROLE_TITLE, v->edit_row == ROW_FILE ? "load: " : "explain node: ", 0);
		draw_editor(v, w, y, x, maxx);
	} else {
		const char *base = v->file ? strrchr(v->file, '/') : NULL;
		base = base ? base + 1 : v->file;
		snprintf(title, sizeof title, " Job%s%s (%s)%s%s", v->job->name ? " " : "",
			 v->job->name ? v->job->name : "", xp_job_kind_name(v->job->kind), base ? " from " : "",
			 base ? base : "");
		put_row(w, y, r.x, maxx, XP_ROLE_TITLE, title);
	}
	y++;
	v->f_y = y;
	v->f_h = n;
	v->f_w = r.w;
	if (v->cursor >= n)
		v->cursor = n - 1;
	for (int i = 0; i < n && y < r.y + r.h; i++, y++) {
		int row = rows[i];
		bool sel = i == v->cursor && !(v->editing && v->edit_row >= ROW_FILE);
		if (row == ROW_RUN) {
			xp_draw_fill(w, y, r.x, maxx, XP_ROLE_NORMAL);
			snprintf(buf, sizeof buf, "[ Run dry-run ]");
			int e = xp_draw_put(w, y, r.x + 2, maxx, sel ? XP_ROLE_SELECTED : XP_ROLE_TITLE, buf, 0);
			xp_draw_fill(w, y, e, maxx, XP_ROLE_NORMAL);
			continue;
		}
		const char *name = row < XP_PF_COUNT ? xp_pf_name(row) : row == ROW_GROUP ? "group" : "strategy";
		snprintf(title, sizeof title, " %-*s ", LABEL_W, name);
		int x = xp_draw_put(w, y, r.x, maxx, sel ? XP_ROLE_SELECTED : XP_ROLE_NORMAL, title, 0);
		if (v->editing && v->edit_row == row) {
			draw_editor(v, w, y, x, maxx - 1);
			xp_draw_fill(w, y, maxx - 1, maxx, XP_ROLE_NORMAL);
			continue;
		}
		int role;
		row_value(v, row, buf, sizeof buf, &role);
		/* A choice says it cycles: "< none >" on the cursor row. */
		bool choice = row == ROW_STRATEGY || row == ROW_GROUP || (row < XP_PF_COUNT && xp_pf_is_choice(row));
		if (sel && choice)
			x = xp_draw_put(w, y, x, maxx, XP_ROLE_SELECTED, "< ", 0);
		x = xp_draw_put(w, y, x, maxx, sel ? XP_ROLE_SELECTED : role, buf, 0);
		if (sel && choice)
			x = xp_draw_put(w, y, x, maxx, XP_ROLE_SELECTED, " >", 0);
		xp_draw_fill(w, y, x, maxx, sel ? XP_ROLE_SELECTED : XP_ROLE_NORMAL);
	}
	/* Under the fields: what the keys do here, since the status line speaks for the app. */
	static const char *const hints[] = {
		"Enter edit / change / run", "h l   change a choice", "r     run the dry-run",
		"s S c strategies, compare", "L x   load file, explain node", "n     new job   ? help",
	};
	static const char *const ehints[] = {"Enter keeps  Esc cancels", "Ctrl-U clears"};
	const char *const *hs = v->editing ? ehints : hints;
	int nh = v->editing ? 2 : (int)(sizeof hints / sizeof *hints);
	if (y < r.y + r.h)
		xp_draw_fill(w, y++, r.x, maxx, XP_ROLE_NORMAL);
	for (int i = 0; y < r.y + r.h; i++, y++) {
		xp_draw_fill(w, y, r.x, maxx, XP_ROLE_NORMAL);
		if (i < nh)
			xp_draw_put(w, y, r.x + 2, maxx, XP_ROLE_DIM, hs[i], 0);
	}
}

static void draw_intro(struct xp_ui *ui, WINDOW *w, struct xp_rect r)
{
	const struct xp_cluster *c = xp_ui_cluster(ui);
	char buf[256];
	snprintf(buf, sizeof buf, "The cluster shown has %zu node%s.", c->n_nodes, c->n_nodes == 1 ? "" : "s");
	const char *lines[] = {
		"No dry-run yet.",
		"",
		"Set the job on the left (Enter edits a field), then Enter on",
		"Run, or r. L loads a job spec file (what xpool place -f reads).",
		"",
		"Every strategy is tried (c, for a slow job); s switches",
		"between them and compares the scores. Nothing changes.",
		"",
		buf,
	};
	int n = (int)(sizeof lines / sizeof *lines);
	for (int i = 0; i < r.h; i++) {
		xp_draw_fill(w, r.y + i, r.x, r.x + r.w, XP_ROLE_NORMAL);
		if (i < n)
			xp_draw_put(w, r.y + i, r.x + 1, r.x + r.w, i ? XP_ROLE_NORMAL : XP_ROLE_TITLE, lines[i], 0);
	}
}

static void draw_result(struct pv *v, struct xp_ui *ui, WINDOW *w, struct xp_rect r)
{
	if (!v->ran) {
		draw_intro(ui, w, r);
		return;
	}
	if (v->doc_dirty || v->doc_w != r.w)
		build_doc(v, xp_ui_cluster(ui), r.w);
	int maxx = r.x + r.w;
	/* The summary and the comparison stay put; the details scroll under them. */
	int head = v->head && v->doc.n > v->head && r.h > (int)v->head + 3 && !v->error ? (int)v->head : 0;
	for (int i = 0; i < head; i++)
		xp_sdoc_draw(w, r.y + i, r.x + 1, maxx, &v->doc.lines[i]);
	int h = r.h - head;
	xp_list_set_count(&v->pane, v->doc.n - (size_t)head, 0);
	xp_list_frame(&v->pane, h);
	/* More below: the last row says so, in place of a line (a mark drawn over a line's end
	 * would hide what it says). */
	bool more = v->pane.top < xp_list_max_top(&v->pane) && h > 2;
	if (more)
		xp_list_frame(&v->pane, --h);
	for (int i = 0; i < h; i++) {
		size_t li = (size_t)head + v->pane.top + (size_t)i;
		xp_draw_fill(w, r.y + head + i, r.x, r.x + 1, XP_ROLE_NORMAL);
		xp_sdoc_draw(w, r.y + head + i, r.x + 1, maxx, li < v->doc.n ? &v->doc.lines[li] : NULL);
	}
	if (head)
		for (int i = 0; i < head; i++)
			xp_draw_fill(w, r.y + i, r.x, r.x + 1, XP_ROLE_NORMAL);
	if (more) {
		char m[96];
		size_t below = v->doc.n - (size_t)head - v->pane.top - (size_t)h;
		snprintf(m, sizeof m, " %s %zu more line%s (J, PgDn)", v->g->utf8 ? "\u2193" : "v", below,
			 below == 1 ? "" : "s");
		xp_draw_fill(w, r.y + r.h - 1, r.x, maxx, XP_ROLE_NORMAL);
		xp_draw_put(w, r.y + r.h - 1, r.x, maxx, XP_ROLE_DIM, m, 0);
	}
}

static void draw(void *st, struct xp_ui *ui, WINDOW *w, struct xp_rect r)
{
	struct pv *v = st;
	sync_view(v, ui);
	if (r.h <= 0 || r.w <= 0)
		return;
	int fw = xp_pv_form_width(r.w);
	draw_form(v, w, (struct xp_rect){r.y, r.x, r.h, fw});
	for (int y = r.y; y < r.y + r.h; y++) {
		wattrset(w, xp_theme_attr(XP_ROLE_BORDER));
		mvwaddstr(w, y, r.x + fw, v->g->vline);
	}
	draw_result(v, ui, w, (struct xp_rect){r.y, r.x + fw + 1, r.h, r.w - fw - 1});
}

/* ---- keys ---- */

/* Lists every check of one node under the result ("" stops it), running the job for it. */
static void explain(struct pv *v, struct xp_ui *ui, const char *node)
{
	free(v->explain);
	v->explain = *node ? xp_strdup(node) : NULL;
	if (v->explain && !xp_cluster_node(xp_ui_cluster(ui), node)) {
		xp_ui_message(ui, XP_ROLE_FAIL, "explain: no node named %s", node);
		free(v->explain);
		v->explain = NULL;
		return;
	}
	run(v, ui, true);
	v->pane.top = (size_t)-1 / 2; /* the checks are at the end: show them (draw clamps it) */
}

static void start_edit(struct pv *v, int row)
{
	char buf[XP_LEDIT_MAX + 1];
	v->editing = true;
	v->edit_row = row;
	if (row == ROW_FILE)
		xp_ledit_start(&v->ed, v->file ? v->file : "");
	else if (row == ROW_EXPLAIN)
		xp_ledit_start(&v->ed, v->explain ? v->explain : "");
	else
		xp_ledit_start(&v->ed, xp_pf_text(cur_group(v), row, buf, sizeof buf));
}

static void finish_edit(struct pv *v, struct xp_ui *ui)
{
	v->editing = false;
	if (v->edit_row == ROW_FILE) {
		load_file(v, ui, v->ed.text);
		return;
	}
	if (v->edit_row == ROW_EXPLAIN) {
		explain(v, ui, v->ed.text);
		return;
	}
	char note[256];
	struct xp_err err = {{0}};
	if (xp_pf_set(v->job, v->group, v->edit_row, v->ed.text, note, sizeof note, &err) < 0) {
		xp_ui_message(ui, XP_ROLE_FAIL, "%s", err.msg);
		return;
	}
	job_changed(v, ui);
	if (note[0] && !v->error)
		xp_ui_message(ui, XP_ROLE_WARN, "%s", note);
}

static void set_strategy(struct pv *v, struct xp_ui *ui, int s)
{
	v->prev_strategy = v->strategy;
	v->strategy = (s + XP_STRAT_COUNT) % XP_STRAT_COUNT;
	v->doc_dirty = true;
	v->pane.top = 0;
	ensure(v, ui, v->strategy);
	slurm_ask(v, ui, false);
	if (v->ran && !v->error) {
		char buf[256];
		xp_pv_compare(v->prev_strategy, v->res[v->prev_strategy], v->strategy, v->res[v->strategy], buf,
			      sizeof buf);
		xp_ui_message(ui, XP_ROLE_OK, "strategy %s: %s", xp_strategy_name(v->strategy), buf);
	} else {
		xp_ui_message(ui, XP_ROLE_DIM, "strategy %s", xp_strategy_name(v->strategy));
	}
}

/* Left/Right and Enter on a row that holds a few values. */
static bool change(struct pv *v, struct xp_ui *ui, int row, int dir)
{
	if (row == ROW_STRATEGY) {
		set_strategy(v, ui, v->strategy + dir);
	} else if (row == ROW_GROUP) {
		size_t n = v->job->n_groups;
		v->group = (v->group + n + (dir < 0 ? n - 1 : 1)) % n;
	} else if (row < XP_PF_COUNT && xp_pf_is_choice(row)) {
		xp_pf_cycle(v->job, v->group, row, dir);
		job_changed(v, ui);
	} else {
		return false;
	}
	return true;
}

/* Every key while the editor is open, and r (run) before the app takes it for a refresh. */
static int pre_key(void *st, struct xp_ui *ui, int key)
{
	struct pv *v = st;
	if (v->editing) {
		if (key == KEY_RESIZE || key == KEY_MOUSE)
			return XP_REACT_UNHANDLED;
		int s = xp_ledit_key(&v->ed, key);
		if (s == XP_LEDIT_DONE)
			finish_edit(v, ui);
		else if (s == XP_LEDIT_CANCEL)
			v->editing = false;
		return XP_REACT_REDRAW;
	}
	if (key == 27 && v->ask && !xp_slurm_ask_done(v->ask)) {
		/* Esc gives up the question to Slurm (the app's Esc has nothing to undo here). */
		slurm_forget(v);
		v->slurm_note = xp_strdup("slurm: not asked: given up (Esc); r asks again");
		xp_ui_message(ui, XP_ROLE_WARN, "placement: gave up asking Slurm");
		return XP_REACT_REDRAW;
	}
	if (key == 'r') {
		/* Here r runs the job rather than re-reading the data: the data refreshes on its own
		 * every few seconds, and a refresh asked for now would land just after this run and
		 * mark a slow one stale at once. */
		run(v, ui, true);
		return XP_REACT_REDRAW;
	}
	return XP_REACT_UNHANDLED;
}

static int on_key(void *st, struct xp_ui *ui, int key)
{
	struct pv *v = st;
	sync_view(v, ui);
	int rows[MAX_ROWS];
	int n = form_rows(v, rows);
	int row = cur_row(v);
	switch (key) {
	case KEY_UP:
	case 'k':
		v->cursor = v->cursor > 0 ? v->cursor - 1 : 0;
		break;
	case KEY_DOWN:
	case 'j':
		v->cursor = v->cursor < n - 1 ? v->cursor + 1 : n - 1;
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		if (row == ROW_RUN)
			run(v, ui, true);
		else if (!change(v, ui, row, 1))
			start_edit(v, row);
		break;
	case KEY_LEFT:
	case 'h':
		change(v, ui, row, -1);
		break;
	case KEY_RIGHT:
	case 'l':
		change(v, ui, row, 1);
		break;
	case 's':
		set_strategy(v, ui, v->strategy + 1);
		break;
	case 'S':
		set_strategy(v, ui, v->strategy - 1);
		break;
	case 'c':
		if (!v->ran) {
			run(v, ui, true);
		} else {
			for (int k = 0; k < XP_STRAT_COUNT; k++)
				ensure(v, ui, k);
			v->doc_dirty = true;
		}
		break;
	case 'L':
		start_edit(v, ROW_FILE);
		break;
	case 'x':
		start_edit(v, ROW_EXPLAIN);
		break;
	case 'n': {
		struct xp_job_flags fl = {0};
		struct xp_err err = {{0}};
		struct xp_job *j = xp_job_from_flags(&fl, &err);
		if (j) {
			set_job(v, j);
			free(v->file);
			v->file = NULL;
			v->ran = false;
			results_free(v);
			slurm_forget(v);
			xp_ui_message(ui, XP_ROLE_DIM, "new job: every field at its default");
		}
		break;
	}
	/* The result pager takes its keys under other names: Up/Down and j/k move the form. */
	case 'J':
		xp_list_key(&v->pane, KEY_DOWN);
		break;
	case 'K':
		xp_list_key(&v->pane, KEY_UP);
		break;
	case KEY_NPAGE:
	case ' ':
		xp_list_key(&v->pane, KEY_NPAGE);
		break;
	case KEY_PPAGE:
	case KEY_HOME:
	case KEY_END:
		xp_list_key(&v->pane, key);
		break;
	default:
		return XP_REACT_UNHANDLED;
	}
	return XP_REACT_REDRAW;
}

/* The wheel scrolls the result (the form is short and has its own keys). */
static int on_wheel(void *st, struct xp_ui *ui, int dir)
{
	struct pv *v = st;
	(void)ui;
	if (v->editing)
		return XP_REACT_NONE;
	xp_list_wheel(&v->pane, dir);
	return XP_REACT_REDRAW;
}

/* A click on a form row moves the cursor there; on the cursor row it acts as Enter. */
static int on_click(void *st, struct xp_ui *ui, int y, int x)
{
	struct pv *v = st;
	if (v->editing || x >= v->f_w)
		return XP_REACT_NONE;
	int i = y - 1; /* the form's rows start under the title row */
	if (i < 0 || i >= v->f_h)
		return XP_REACT_NONE;
	if (i == v->cursor)
		return on_key(st, ui, '\n');
	v->cursor = i;
	return XP_REACT_REDRAW;
}

/* New data (or a filter, or a command that may have changed the cluster in place): the kept
 * index may point into a cluster freed since, so it goes now, and the next run builds one;
 * unless a refresh changed only some nodes of the cluster it indexes: then it indexes those
 * again and follows (xp_place_index_update). */
static void on_data(void *st, struct xp_ui *ui)
{
	struct pv *v = st;
	v->g = xp_ui_glyphs(ui);
	struct xp_ui_moved m;
	const struct xp_cluster *c = xp_ui_cluster(ui);
	if (v->ix && xp_ui_moved(ui, &m) && v->ix_c == m.old && v->ix_gen == m.old_gen &&
	    xp_place_index_update(v->ix, c, m.changed, m.n_changed) >= 0) {
		v->ix_c = c;
		v->ix_gen = c->generation;
		v->ix_new = false;
		return;
	}
	drop_index(v);
}

/* A question to Slurm that was answered since the doc was built: show it. */
static int tick(void *st, struct xp_ui *ui)
{
	struct pv *v = st;
	(void)ui;
	if (v->ask && !v->ask_shown && xp_slurm_ask_done(v->ask)) {
		v->doc_dirty = true;
		v->ask_shown = true;
		return XP_REACT_REDRAW;
	}
	return XP_REACT_NONE;
}

static const char *where(void *st)
{
	struct pv *v = st;
	if (!v->g)
		return NULL;
	snprintf(v->where, sizeof v->where, "Placement %s %s%s", v->g->arrow, xp_strategy_name(v->strategy),
		 v->editing ? " (editing)" : "");
	return v->where;
}

static void *create(struct xp_ui *ui)
{
	struct pv *v = xp_calloc(1, sizeof *v);
	struct xp_job_flags fl = {0};
	struct xp_err err = {{0}};
	/* The defaults of `xpool place --dry-run`: one replica of one device, anywhere. */
	v->job = xp_job_from_flags(&fl, &err);
	v->strategy = v->prev_strategy = XP_STRAT_PACK;
	v->pane = (struct xp_list)XP_LIST_INIT;
	v->pane.pager = true;
	v->g = xp_ui_glyphs(ui);
	return v;
}

static void destroy(void *st)
{
	struct pv *v = st;
	if (!v)
		return;
	results_free(v);
	slurm_forget(v);
	drop_index(v);
	xp_sdoc_free(&v->doc);
	xp_place_manifests_free(v->ms, v->nm);
	xp_job_free(v->job);
	free(v->file);
	free(v->explain);
	free(v);
}

static const struct xp_view_key keys[] = {
	{"Up/Down j/k", "move between the job's fields"},
	{"Enter", "edit a field, change a choice; on Run: run"},
	{"Left/Right h/l", "previous / next value of a choice"},
	{"r", "run the dry-run (here r does not refresh data)"},
	{"s / S", "next / previous strategy, scores compared"},
	{"c", "compare: run every strategy (done at once when quick)"},
	{"L", "load a job spec file (as xpool place -f)"},
	{"x", "explain a node: every check, passed or failed"},
	{"n", "new job: every field at its default"},
	{"J/K PgUp/PgDn Space", "scroll the result"},
	{"Home/End", "top / bottom of the result"},
	{"while editing", "Enter keeps, Esc cancels, Ctrl-U clears"},
	{"Esc", "with --compare: give up asking Slurm"},
	{NULL, NULL},
};

const struct xp_view xp_view_placement = {
	.name = "placement",
	.title = "Placement",
	.order = 3,
	.keys = keys,
	.create = create,
	.destroy = destroy,
	.draw = draw,
	.pre_key = pre_key,
	.on_key = on_key,
	.on_click = on_click,
	.on_wheel = on_wheel,
	.on_data = on_data,
	.where = where,
	.tick = tick,
};
