/* check_qview.c: the Queues view (view 2) end to end: a database made by the real binary's
 * commands (queues, then jobs), the console in a real terminal (tmux), keys sent and the screen
 * read back: the tree with its quota bars and counts, folding, Tab between the tree and the
 * jobs, a job's pager, a hold asked and confirmed (the store's state and audit checked after),
 * and a what-if run and a cancelled one. */
#include <check.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "queue_layout.h"
#include "simgen.h"
#include "suitelib.h"
#include "testlib.h"
#include "tmuxlib.h"
#include "xp.h"

#define SIM_NODES 12
#define SIM_SEED 5

static char statedir[96]; /* this test's XDG_STATE_HOME, snapshot and database */
static char simpath[128];
static char dbpath[128];

static void setup_all(void)
{
	xp_tmux_suite_setup("qview");
}

/* Runs xpool with the NULL-terminated arguments on the test's database and snapshot; checks
 * it exits 0 and returns its output (caller frees). */
static char *xpool(const char *first, ...) __attribute__((sentinel));
static char *xpool(const char *first, ...)
{
	char *argv[40];
	int n = 0;
	argv[n++] = "--db";
	argv[n++] = dbpath;
	argv[n++] = "--inventory";
	argv[n++] = simpath;
	va_list ap;
	va_start(ap, first);
	for (const char *a = first; a && n < 38; a = va_arg(ap, const char *))
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;
	char *full[42] = {(char *)xp_bin()};
	memcpy(full + 1, argv, (size_t)(n + 1) * sizeof *argv);
	struct xp_run r;
	ck_assert_int_eq(xp_run_argv(&r, full, NULL), 0);
	ck_assert_msg(r.status == 0, "xpool %s %s: exit %d: %s", first, n > 5 ? argv[5] : "", r.status, r.err);
	char *out = r.out;
	r.out = NULL;
	xp_run_free(&r);
	return out;
}

/* Every node up and every device healthy, whole and free: the sim's own jobs gone, so that the
 * scheduler's figures below follow from the jobs submitted alone. */
static void idle(struct xp_cluster *c)
{
	for (size_t i = 0; i < c->n_nodes; i++) {
		struct xp_node *n = c->nodes[i];
		n->state = XP_NODE_UP;
		for (size_t k = 0; k < n->n_devices; k++) {
			struct xp_device *d = &n->devices[k];
			for (size_t a = 0; a < d->n_allocs; a++) {
				free(d->allocs[a].slice);
				free(d->allocs[a].owner);
				free(d->allocs[a].uuid);
			}
			free(d->allocs);
			d->allocs = NULL;
			d->n_allocs = 0;
			xp_strv_free(d->health_reasons, d->n_health_reasons);
			d->health_reasons = NULL;
			d->n_health_reasons = 0;
			d->health = XP_HEALTH_OK;
			d->mig_mode = 0;
			d->memory_used_mib = 0;
			d->utilization_pct = 0;
		}
	}
}

/* The jobs' clock (XPOOL_NOW): submitted at T0, the console looks 10 minutes later. */
#define T0 "1800000000"
#define T_CONSOLE "1800000600"

static void setup(void)
{
	xp_tmux_test_dir(statedir, sizeof statedir);
	snprintf(simpath, sizeof simpath, "%s/sim.json", statedir);
	snprintf(dbpath, sizeof dbpath, "%s/q.db", statedir);
	struct xp_err err = {{0}};
	struct xp_sim_mix mix;
	ck_assert_msg(xp_sim_mix_parse("nvidia-h100:100", &mix, &err) == 0, "%s", err.msg);
	struct xp_cluster *c = xp_sim_generate(SIM_NODES, &mix, SIM_SEED, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	idle(c);
	FILE *f = fopen(simpath, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_msg(xp_sim_write(c, f, &err) == 0, "%s", err.msg);
	fclose(f);
	xp_cluster_free(c);
	/* research (weight 2) holds vision and nlp; prod stands alone. */
	free(xpool("queue", "class", "add", "h100", "--vendor", "NVIDIA", "--model", "*H100*", NULL));
	free(xpool("queue", "add", "research", "--weight", "2", "--quota", "h100:devices=8/40/64", NULL));
	free(xpool("queue", "add", "vision", "--parent", "research", "--quota", "h100:devices=0/16/16", NULL));
	free(xpool("queue", "add", "nlp", "--parent", "research", "--quota", "h100:devices=0/8/-,cpu:cpus=0/64",
		   NULL));
	free(xpool("queue", "add", "prod", "--weight", "3", "--quota", "h100:devices=16/32/32", NULL));
	/* 12 nodes of 8 H100s, every job 8 devices (one node). prod: 4 run (32/32), the 5th waits
	 * for its quota. nlp (deserved 8, no max) runs 2: 8 of its own and 8 borrowed from its
	 * cohort (vision lends what it does not use). vision runs 1 (8/16) and its 2-replica job
	 * (16 more) waits for its quota. research uses what its children use: 24 of 40. */
	setenv("XPOOL_NOW", T0, 1);
	for (int i = 0; i < 5; i++)
		free(xpool("job", "submit", "--queue", "prod", "--devices", "8", "--model", "*H100*", "--estimate", "2h",
			   NULL));
	for (int i = 0; i < 2; i++)
		free(xpool("job", "submit", "--queue", "nlp", "--devices", "8", "--model", "*H100*", "--estimate", "1h",
			   NULL));
	free(xpool("job", "submit", "--queue", "vision", "--devices", "8", "--model", "*H100*", "--estimate", "30m",
		   "--name", "v1", "--priority", "5", NULL));
	free(xpool("job", "submit", "--queue", "vision", "--devices", "8", "--replicas", "2", "--model", "*H100*",
		   "--estimate", "30m", "--name", "v2", NULL));
}

static void teardown(void)
{
	xp_tmux_test_dir_done(statedir);
}

/* Starts the console; env: more VAR=VALUE words for it ("" for none). */
static void start_env(const char *lang, int cols, int rows, const char *env)
{
	char cmd[8192];
	snprintf(cmd, sizeof cmd,
		 "env LANG=%s LC_ALL=%s TERM=screen-256color XDG_STATE_HOME=%s XPOOL_ACTOR=qview-tester "
		 "XPOOL_NOW=" T_CONSOLE " %s %s --inventory %s --db %s; echo $? > %s/rc",
		 lang, lang, statedir, env, xp_bin(), simpath, dbpath, statedir);
	xp_tmux_start(cmd, cols, rows);
	char nodes[32];
	snprintf(nodes, sizeof nodes, "%d nodes", SIM_NODES);
	xp_tmux_expect(nodes);
}

static void start(const char *lang, int cols, int rows)
{
	start_env(lang, cols, rows, "");
}

/* The row holding text, its trailing blanks cut (caller frees). */
static char *row_trim(const char *screen, const char *text);

/* The screen row that holds text (caller frees), or aborts. */
static char *row_with(const char *screen, const char *text)
{
	const char *p = strstr(screen, text);
	ck_assert_msg(p != NULL, "no row holds \"%s\" in:\n%s", text, screen);
	const char *b = p;
	while (b > screen && b[-1] != '\n')
		b--;
	return xp_strndup(b, strcspn(b, "\n"));
}

static char *row_trim(const char *screen, const char *text)
{
	char *r = row_with(screen, text);
	size_t n = strlen(r);
	while (n && r[n - 1] == ' ')
		r[--n] = '\0';
	return r;
}

/* True when a comes before b on the screen (both on it). */
static bool before(const char *screen, const char *a, const char *b)
{
	const char *pa = strstr(screen, a), *pb = strstr(screen, b);
	ck_assert_msg(pa && pb, "\"%s\" or \"%s\" not on:\n%s", a, b, screen);
	return pa < pb;
}

/* A left click at screen column x, row y (from 0): the X10 mouse report ncurses reads, pressed
 * and released. */
static void click(int x, int y)
{
	char seq[16];
	snprintf(seq, sizeof seq, "\033[M%c%c%c\033[M%c%c%c", 32, 33 + x, 33 + y, 35, 33 + x, 33 + y);
	xp_tmux_literal(seq);
}

START_TEST(tree_bars_fold)
{
	start("C.UTF-8", 120, 36);
	xp_tmux_keys("2");
	/* Top queues by name, research open with its children under it, nlp's second quota on a
	 * row of its own; the numbers as worked out in setup. */
	char *s = xp_tmux_wait_all(10, "QUEUE", "USED/DES/MAX", "PEND", "\u25be research", "  nlp", "  vision",
				   "prod", "32/32/32", "24/40/64", "8+8/8/-", "8/16/16", "cpu cpu", "0/64/-",
				   "Queues \u203a prod", NULL);
	/* research: 24 of its 40 used (█), the rest of its share free (░), then headroom to 64
	 * (·); it borrows nothing (no ▓). */
	char *r = row_trim(s, "\u25be research");
	ck_assert_msg(strstr(r, "\u2588\u2591") && strstr(r, "\u2591\u00b7") && !strstr(r, "\u2593"), "%s", r);
	ck_assert_msg(strstr(r, "w2"), "%s", r);
	free(r);
	/* nlp's devices: its own 8 (█) then 8 borrowed (▓), shown apart. */
	r = row_trim(s, "8+8/8/-");
	ck_assert_msg(strstr(r, "\u2588\u2593") && !strstr(r, "\u2591"), "%s", r);
	free(r);
	/* prod: full, 1 pending and 4 running; vision 1 and 1. */
	r = row_trim(s, "32/32/32");
	ck_assert_msg(strstr(r, "\u2588") && !strstr(r, "\u2591") && !strstr(r, "\u2593"), "%s", r);
	ck_assert_msg(strlen(r) > 9 && strcmp(r + strlen(r) - 9, "   1    4") == 0, "%s", r);
	free(r);
	r = row_trim(s, "8/16/16");
	ck_assert_msg(strcmp(r + strlen(r) - 9, "   1    1") == 0, "%s", r);
	free(r);
	free(s);
	/* Down to research and Enter: folded, its children gone. */
	xp_tmux_keys("Down");
	xp_tmux_expect("Queues \u203a research");
	xp_tmux_keys("Enter");
	xp_tmux_expect_all("\u25b8 research", "!  vision", "!  nlp");
	xp_tmux_keys("Right");
	xp_tmux_expect_all("\u25be research", "  vision");
	/* Down onto nlp (two rows), Down again skips its second quota row to vision. */
	xp_tmux_keys("Down");
	xp_tmux_expect("Queues \u203a nlp");
	xp_tmux_keys("Down");
	xp_tmux_expect("Queues \u203a vision");
	/* Left on a leaf goes to its parent. */
	xp_tmux_keys("Left");
	xp_tmux_expect("Queues \u203a research");
	/* The mouse: a click on prod's row (screen row 3: header, tabs, headings, prod) selects
	 * it; one on the fourth job (row 13: under 5 tree rows, the rule and the headings) gives
	 * the job list the keys; a second click there opens the job. */
	click(5, 3);
	xp_tmux_expect("Queues \u203a prod\n");
	click(5, 13);
	xp_tmux_expect_all("Queues \u203a prod \u203a jobs", "$4 of 5");
	click(5, 13);
	xp_tmux_expect_all("Queues \u203a prod \u203a job 4", "job show 4");
	xp_tmux_keys("Escape");
	xp_tmux_expect("Jobs (prod)");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

START_TEST(ascii_narrow)
{
	/* ASCII: the fold marks and the bar's glyphs change; on 80 columns the bar, the numbers
	 * and the counts all fit (narrower tables: check_queue_layout's columns). */
	start("C", 80, 24);
	xp_tmux_keys("2");
	char *s = xp_tmux_wait_all(10, "- research", "24/40/64", "8+8/8/-", "PEND", "RUN", NULL);
	char *r = row_with(s, "- research");
	ck_assert_msg(strstr(r, "#-") && strstr(r, "-.") && !strstr(r, "="), "%s", r);
	free(r);
	r = row_with(s, "8+8/8/-");
	ck_assert_msg(strstr(r, "#="), "%s", r);
	free(r);
	free(s);
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

START_TEST(jobs_pager_hold)
{
	start("C.UTF-8", 120, 40);
	xp_tmux_keys("2");
	xp_tmux_expect("Queues \u203a prod\n");
	/* Tab: the job list of prod has the keys; its waiting job says why, where it stands and
	 * for how long (the console looks 10 minutes after the submissions). */
	xp_tmux_keys("Tab");
	char *s = xp_tmux_wait_all(10, "Queues \u203a prod \u203a jobs", "Jobs (prod)", "ID", "STATE", "WAIT",
				   "PRIO", "POS", "REASON", "$1 of 5", NULL);
	char *r = row_trim(s, "QuotaExceeded");
	ck_assert_msg(strstr(r, " 5  pending   10m     0  1/1  QuotaExceeded: h100 devices 32/32 used, 8 more needed"),
		      "%s", r);
	free(r);
	r = row_trim(s, " 1  running");
	ck_assert_msg(strstr(r, "0s") && strstr(r, "  -  -"), "%s", r);
	free(r);
	/* In the view's own order (by id) the waiting job is last. */
	ck_assert(before(s, " 1  running", "QuotaExceeded"));
	free(s);
	/* s three times: sorted by WAIT, then S: longest wait first. */
	xp_tmux_keys("s");
	xp_tmux_keys("s");
	xp_tmux_keys("s");
	xp_tmux_keys("S");
	s = xp_tmux_wait_all(10, "sort: WAIT desc", NULL);
	ck_assert(before(s, "QuotaExceeded", " 1  running"));
	free(s);
	/* The filter keeps the jobs whose state or reason matches. */
	xp_tmux_keys("/");
	xp_tmux_literal("quota");
	xp_tmux_keys("Enter");
	xp_tmux_expect_all("filter: /quota", "QuotaExceeded", "! 1  running", "$1 of 1 (4 filtered from 5)");
	/* Enter: `job show 5` in a pager, Esc back to the list. */
	xp_tmux_keys("Enter");
	xp_tmux_expect_all("Queues \u203a prod \u203a job 5", "job show 5", "queue:       prod", "state:       pending",
			   "history:", "submitted");
	xp_tmux_keys("Escape");
	xp_tmux_expect_all("Jobs (prod)", "QuotaExceeded", "!history:");
	xp_tmux_keys("Escape"); /* clears the filter */
	xp_tmux_expect_all(" 1  running", "!filter:");
	/* To vision's jobs: the tree (Tab), down three queues, back (Tab). */
	xp_tmux_keys("Tab");
	xp_tmux_expect("Queues \u203a prod\n");
	for (int i = 0; i < 3; i++)
		xp_tmux_keys("Down");
	xp_tmux_expect("Queues \u203a vision");
	xp_tmux_keys("Tab");
	xp_tmux_expect_all("Queues \u203a vision \u203a jobs", "Jobs (vision)", " 9  pending", "QuotaExceeded: h100");
	/* The sort stays (longest wait first): the waiting job is under the cursor. h asks,
	 * naming it; n leaves it. */
	xp_tmux_keys("h");
	xp_tmux_expect("Hold job 9 \"v2\" (vision, pending)? y/N");
	xp_tmux_keys("n");
	xp_tmux_expect_all("$not done", " 9  pending", "!y/N");
	/* h, y: `job hold 9` runs, the list reads again. */
	xp_tmux_keys("h");
	xp_tmux_expect("Hold job 9 \"v2\" (vision, pending)? y/N");
	xp_tmux_keys("y");
	xp_tmux_expect_all("$job 9 held", " 9  held", "Held", "!y/N");
	/* The store says so, and who did it: the hold is the user's write, audited. */
	char *out = xpool("job", "show", "9", NULL);
	ck_assert_msg(strstr(out, "state:       held"), "%s", out);
	free(out);
	out = xpool("audit", NULL);
	r = row_with(out, "job.hold");
	ck_assert_msg(strstr(r, "qview-tester") && strstr(r, " 9 "), "%s", r);
	free(r);
	free(out);
	/* u releases it (asked again). */
	xp_tmux_keys("u");
	xp_tmux_expect("Release job 9 \"v2\" (vision, held)? y/N");
	xp_tmux_keys("y");
	xp_tmux_expect_all("$job 9 released", " 9  pending");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

/* The node under view 1's cursor: its breadcrumb once opened (caller frees). */
static char *map_node(void)
{
	xp_tmux_keys("1");
	xp_tmux_keys("Down");
	xp_tmux_keys("Enter");
	char *s = xp_tmux_wait_all(10, "Topology \u203a h100-", NULL);
	char *r = row_with(s, "Topology \u203a h100-");
	char *name = strstr(r, "h100-");
	char *copy = xp_strndup(name, strcspn(name, " "));
	free(r);
	free(s);
	xp_tmux_keys("Escape");
	xp_tmux_expect_gone("Topology \u203a h100-");
	return copy;
}

/* A wait of a what-if report's queue in seconds; -1 when none started (null). */
static int64_t wait_of(json_t *q, const char *key)
{
	json_t *v = json_object_get(q, key);
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}

START_TEST(whatif_drain_add)
{
	start("C.UTF-8", 120, 40);
	char *node = map_node();
	xp_tmux_keys("2");
	xp_tmux_keys("w");
	xp_tmux_expect("x: drain the node under view 1's cursor");
	xp_tmux_keys("x");
	/* Draining a node lets its job finish: prod's waiting job still waits for one of prod's
	 * four (2 h estimates, started at the submission) to end: 2 h in both runs. */
	char done[128];
	snprintf(done, sizeof done, "drain %s: wait baseline \u2192 scenario, 9 jobs over 24h", node);
	char *s = xp_tmux_wait_all(20, done, NULL);
	char *r = row_trim(s, "prod      p50");
	ck_assert_msg(strstr(r, "p95 2h00m \u2192 2h00m"), "%s", r);
	free(r);
	ck_assert_msg(strstr(s, "vision    p50") && strstr(s, "nlp       p50") && strstr(s, "research  p50"), "%s", s);
	/* The same answer as `xpool whatif --jobs-from-store --drain NODE` at the same time, queue by
	 * queue (its JSON's waits, written as the panel writes them). */
	setenv("XPOOL_NOW", T_CONSOLE, 1);
	char *js = xpool("whatif", "--jobs-from-store", "--drain", node, "--json", NULL);
	json_error_t je;
	json_t *doc = json_loads(js, 0, &je);
	ck_assert_msg(doc != NULL, "%s: %s", je.text, js);
	json_t *bq = json_object_get(json_object_get(doc, "baseline"), "queues");
	json_t *sq = json_object_get(json_object_get(doc, "scenario"), "queues");
	ck_assert_int_eq(json_array_size(bq), 4);
	for (size_t i = 0; i < json_array_size(bq); i++) {
		json_t *b = json_array_get(bq, i), *c = json_array_get(sq, i);
		char want[256];
		xp_ql_whatif_line(json_string_value(json_object_get(b, "name")), 8, wait_of(b, "wait_p50"),
				  wait_of(b, "wait_p95"), wait_of(c, "wait_p50"), wait_of(c, "wait_p95"), true, want,
				  sizeof want);
		ck_assert_msg(strstr(s, want), "\"%s\" (xpool whatif) not on:\n%s", want, s);
	}
	json_decref(doc);
	free(js);
	free(s);
	/* +: nodes of a kind, typed in the panel. */
	xp_tmux_keys("+");
	xp_tmux_expect("add N:KIND");
	xp_tmux_literal("4:nvidia-h100");
	xp_tmux_keys("Enter");
	xp_tmux_expect_all("add 4:nvidia-h100: wait baseline \u2192 scenario", "prod      p50");
	/* A kind that does not exist: the simulator's message, the panel stays. */
	xp_tmux_keys("+");
	xp_tmux_literal("2:no-such-kind");
	xp_tmux_keys("Enter");
	xp_tmux_expect("unknown node kind 'no-such-kind'");
	/* Esc closes the panel (no run in flight). */
	xp_tmux_keys("Escape");
	xp_tmux_expect_gone("What-if");
	free(node);
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

START_TEST(whatif_cancel)
{
	/* XPOOL_WHATIF_HOLD: a run waits for its cancel, so that Esc surely meets it in flight. */
	start_env("C.UTF-8", 120, 40, "XPOOL_WHATIF_HOLD=1");
	char *node = map_node();
	xp_tmux_keys("2");
	xp_tmux_keys("w");
	xp_tmux_keys("x");
	char running[128];
	snprintf(running, sizeof running, "running: drain %s", node);
	xp_tmux_expect_all(running, "Esc cancels");
	/* The keys still work while it runs: the tree's cursor moves. */
	xp_tmux_keys("Down");
	xp_tmux_expect_all("Queues \u203a research", running);
	/* A second run waits its turn. */
	xp_tmux_keys("x");
	xp_tmux_expect("a run is in flight");
	xp_tmux_keys("Escape");
	char cancelled[128];
	snprintf(cancelled, sizeof cancelled, "cancelled: drain %s", node);
	xp_tmux_expect_all(cancelled, "What-if", "!Esc cancels");
	free(node);
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

/* The bytes of path ("" when it does not exist; caller frees). */
static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	*n = 0;
	if (!f)
		return xp_strdup("");
	char *buf = NULL;
	size_t cap = 0;
	for (;;) {
		buf = xp_realloc(buf, cap + 65536);
		size_t got = fread(buf + *n, 1, 65536, f);
		*n += got;
		cap += 65536;
		if (got < 65536)
			break;
	}
	fclose(f);
	return buf;
}

START_TEST(reads_never_write)
{
	/* Looking writes nothing: the tree, the jobs, a job's pager and a what-if leave the
	 * database and its log byte for byte as they were. */
	char wal[160];
	snprintf(wal, sizeof wal, "%s-wal", dbpath);
	size_t n_db, n_wal;
	char *db = slurp(dbpath, &n_db), *log = slurp(wal, &n_wal);
	start("C.UTF-8", 120, 40);
	xp_tmux_keys("2");
	xp_tmux_expect("32/32/32");
	xp_tmux_keys("Tab");
	xp_tmux_keys("End");
	xp_tmux_keys("Enter");
	xp_tmux_expect_all("job show 5", "history:");
	xp_tmux_keys("Escape");
	xp_tmux_keys("w");
	xp_tmux_keys("x");
	xp_tmux_expect("wait baseline \u2192 scenario");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
	size_t m_db, m_wal;
	char *db2 = slurp(dbpath, &m_db), *log2 = slurp(wal, &m_wal);
	ck_assert_msg(n_db == m_db && memcmp(db, db2, n_db) == 0, "the database changed (%zu -> %zu bytes)", n_db, m_db);
	ck_assert_msg(n_wal == m_wal && memcmp(log, log2, n_wal) == 0, "its log changed (%zu -> %zu bytes)", n_wal,
		      m_wal);
	free(db);
	free(db2);
	free(log);
	free(log2);
}
END_TEST

XP_DEFINE_SUITE(qview,
	{"tmux", .timeout_s = 120, .setup = setup, .teardown = teardown, .setup_all = setup_all,
	 .teardown_all = xp_tmux_suite_teardown, .tests = {tree_bars_fold, ascii_narrow, jobs_pager_hold, whatif_drain_add, whatif_cancel,
		   reads_never_write}})
