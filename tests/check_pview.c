/* check_pview.c: the Placement view (view 3) end to end: the real binary on a sim snapshot in
 * a real terminal (tmux), the job typed into the form or loaded from a file, the screen read
 * back and compared with what the placement engine says about the same cluster and job. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobspec.h"
#include "place.h"
#include "place_text.h"
#include "simgen.h"
#include "suitelib.h"
#include "testlib.h"
#include "tmuxlib.h"
#include "xp.h"

#define SIM_NODES 40
#define SIM_SEED 3

/* Files and server are named after the runner (see tmuxlib.h). */
static char statedir[96]; /* this test's XDG_STATE_HOME and files */
static char simpath[128]; /* the snapshot the console shows */

static void setup_all(void)
{
	xp_tmux_suite_setup("pview");
}

static struct xp_cluster *sim(void)
{
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_sim_generate(SIM_NODES, NULL, SIM_SEED, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	return c;
}

static void setup(void)
{
	xp_tmux_test_dir(statedir, sizeof statedir);
	snprintf(simpath, sizeof simpath, "%s/sim.json", statedir);
	struct xp_cluster *c = sim();
	FILE *f = fopen(simpath, "w");
	ck_assert_ptr_nonnull(f);
	struct xp_err err = {{0}};
	ck_assert_msg(xp_sim_write(c, f, &err) == 0, "%s", err.msg);
	fclose(f);
	xp_cluster_free(c);
}

static void teardown(void)
{
	xp_tmux_test_dir_done(statedir);
}

static void start(const char *lang, int cols, int rows)
{
	char cmd[8192];
	snprintf(cmd, sizeof cmd,
		 "env LANG=%s LC_ALL=%s TERM=screen-256color XDG_STATE_HOME=%s %s --inventory %s --db %s/x.db; "
		 "echo $? > %s/rc",
		 lang, lang, statedir, xp_bin(), simpath, statedir, statedir);
	xp_tmux_start(cmd, cols, rows);
	char nodes[32];
	snprintf(nodes, sizeof nodes, "%d nodes", SIM_NODES);
	xp_tmux_expect(nodes);
}

static char *write_file(const char *name, const char *text)
{
	char *path = xp_asprintf("%s/%s", statedir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* What the engine says for a job spec on the same sim cluster, with the real manifests. */
static struct xp_place_result *expected(const char *spec, int strategy)
{
	struct xp_manifest *ms[XP_PLACE_MANIFESTS];
	size_t nm = xp_place_manifests(ms);
	struct xp_err err = {{0}};
	struct xp_job *j = xp_job_parse(spec, strlen(spec), NULL, &err);
	ck_assert_msg(j != NULL, "%s", err.msg);
	struct xp_cluster *c = sim();
	struct xp_place_opts o = {strategy, 0, NULL};
	struct xp_place_result *r = xp_place(c, j, (const struct xp_manifest *const *)ms, nm, &o, &err);
	ck_assert_msg(r != NULL, "%s", err.msg);
	xp_cluster_free(c);
	xp_job_free(j);
	xp_place_manifests_free(ms, nm);
	return r;
}

/* Moves the form's cursor to the row downs below the top. */
static void move_to(int downs)
{
	for (int i = 0; i < 20; i++)
		xp_tmux_keys("Up");
	for (int i = 0; i < downs; i++)
		xp_tmux_keys("Down");
}

/* Sets a text field: Enter opens it, Ctrl-U clears, the text, Enter keeps it. */
static void set_field(int downs, const char *text)
{
	move_to(downs);
	xp_tmux_keys("Enter");
	xp_tmux_keys("C-u");
	if (*text)
		xp_tmux_literal(text);
	xp_tmux_keys("Enter");
}

static void load(const char *path)
{
	xp_tmux_keys("L");
	xp_tmux_keys("C-u");
	xp_tmux_literal(path);
	xp_tmux_keys("Enter");
}

START_TEST(placed_and_strategies)
{
	start("C.UTF-8", 120, 40);
	xp_tmux_keys("3");
	xp_tmux_expect("No dry-run yet");
	set_field(2, "2");     /* devices */
	set_field(4, "H100*"); /* model */
	xp_tmux_keys("r");
	struct xp_place_result *pack = expected("{\"devices\": 2, \"model\": \"H100*\"}", XP_STRAT_PACK);
	struct xp_place_result *spread = expected("{\"devices\": 2, \"model\": \"H100*\"}", XP_STRAT_SPREAD);
	ck_assert(pack->placed && spread->placed);
	xp_tmux_expect(pack->summary);
	const struct xp_place_replica *p = &pack->replicas[0];
	char buf[512], env[512], breakdown[512], mounts[512];
	snprintf(env, sizeof env, "%s=%s", p->env_name, p->env_value);
	/* the score breakdown: pack weighs utilization and topology */
	snprintf(breakdown, sizeof breakdown, "utilization %.1f + topology %.1f", p->breakdown[XP_CRIT_UTILIZATION],
		 p->breakdown[XP_CRIT_TOPOLOGY]);
	/* the device files to mount, as xpool place lists them, cut to the pane (120 columns: the
	 * form takes 40 and the rule 1, the result's margin 1 and the line's indent 6) */
	ck_assert_msg(p->n_mounts > 0, "the engine gave %s no mounts", p->node);
	char *m = xp_asprintf("mounts: %s", p->mounts[0]);
	xp_pv_mounts(p, 120 - 40 - 1 - 1 - 6, true, mounts, sizeof mounts);
	/* the chosen devices marked on the node's mini map; all of it in one frame */
	xp_tmux_expect_all(p->node, env, breakdown, "\u25c6 chosen", m, mounts);
	free(m);
	/* s: the next strategy, compared with the last */
	xp_tmux_keys("s");
	snprintf(buf, sizeof buf, "pack %.1f -> spread %.1f", pack->replicas[0].score, spread->replicas[0].score);
	xp_tmux_expect(buf);
	xp_tmux_expect(spread->summary);
	snprintf(buf, sizeof buf, "balance %.1f", spread->replicas[0].breakdown[XP_CRIT_BALANCE]);
	xp_tmux_expect_all(spread->replicas[0].node, buf);
	/* a choice cycles in place, and the result follows the job at once */
	move_to(8); /* network: Enter moves any -> switch, the cursor row shows it cycles */
	xp_tmux_keys("Enter");
	xp_tmux_expect("network      < switch >");
	xp_tmux_keys("Left");
	xp_tmux_expect("network      < any >");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
	xp_place_result_free(pack);
	xp_place_result_free(spread);
}
END_TEST

START_TEST(not_fit_shows_reasons)
{
	start("C.UTF-8", 120, 40);
	xp_tmux_keys("3");
	xp_tmux_expect("No dry-run yet");
	set_field(0, "100"); /* replicas */
	set_field(2, "8");   /* devices */
	move_to(20); /* Run, at the bottom */
	xp_tmux_keys("Enter");
	struct xp_place_result *r = expected("{\"replicas\": 100, \"devices\": 8}", XP_STRAT_PACK);
	ck_assert(!r->placed && r->n_reasons > 0);
	char buf[64];
	snprintf(buf, sizeof buf, "0/%d nodes fit", SIM_NODES);
	xp_tmux_expect(buf);
	/* the reasons, most common first, with their counts */
	snprintf(buf, sizeof buf, "%6zu  %s", r->reasons[0].count, r->reasons[0].code);
	xp_tmux_expect_all("WHY NOT", buf, r->reasons[0].text);
	/* under the summary: the smallest change that fits, in xpool place's words (the start of
	 * it: the pane is 78 columns) */
	ck_assert_msg(r->relaxation != NULL, "the engine found no relaxation");
	char relax[512];
	xp_pv_relaxation(r, relax, sizeof relax);
	ck_assert_msg(strncmp(relax, "would fit with ", 15) == 0, "%s", relax);
	relax[70] = '\0';
	xp_tmux_expect(relax);
	xp_place_result_free(r);
	/* x: every check of one node, passed or failed */
	xp_tmux_keys("x");
	xp_tmux_expect("explain node: ");
	xp_tmux_literal("h100-00001");
	xp_tmux_keys("Enter");
	xp_tmux_expect_all("Checks for h100-00001", "node-state");
	xp_tmux_keys("x");
	xp_tmux_keys("C-u");
	xp_tmux_literal("no-such-node");
	xp_tmux_keys("Enter");
	xp_tmux_expect("explain: no node named no-such-node");
	/* a gang minimum: placed when that many fit, the rest pending with why the next waits */
	xp_tmux_expect("gang min     all");
	set_field(1, "5");
	xp_tmux_expect("gang min     5");
	r = expected("{\"replicas\": 100, \"devices\": 8, \"gang_min\": 5}", XP_STRAT_PACK);
	ck_assert(r->placed && r->pending > 0 && r->n_reasons > 0);
	snprintf(buf, sizeof buf, "%zu replicas pending", r->pending);
	xp_tmux_expect(buf);
	snprintf(buf, sizeof buf, "%6zu  %s", r->reasons[0].count, r->reasons[0].code);
	xp_tmux_expect_all("PENDING", buf);
	xp_place_result_free(r);
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

START_TEST(load_and_errors)
{
	start("C.UTF-8", 120, 40);
	xp_tmux_keys("3");
	xp_tmux_expect("No dry-run yet");
	/* a value the flag parser refuses names the field, and the old value stays */
	set_field(2, "two");
	xp_tmux_expect("devices: expected an integer");
	xp_tmux_expect("devices      1");
	/* a malformed file: the error names the field; the console keeps running */
	char *bad = write_file("bad.json", "{\"devices\": \"eight\"}");
	load(bad);
	xp_tmux_expect("$.devices: expected an integer");
	char *unknown = write_file("unknown.json", "{\"devices\": 2, \"colour\": \"red\"}");
	load(unknown);
	xp_tmux_expect("$.colour: unknown field");
	char *missing = xp_asprintf("%s/no-such.json", statedir);
	load(missing);
	xp_tmux_expect("no-such.json");
	xp_tmux_keys("1");
	xp_tmux_expect("h100-00001");
	xp_tmux_keys("3");
	xp_tmux_expect("[ Run dry-run ]");
	/* a good one fills the form and runs at once */
	char *good = write_file("good.json",
				"{\"name\": \"t1\", \"kind\": \"train\", \"replicas\": 2, \"devices\": 4, \"model\": \"H100*\"}");
	load(good);
	xp_tmux_expect("Job t1 (train) from good.json");
	xp_tmux_expect("homogeneous  yes");
	struct xp_place_result *r = expected("{\"kind\": \"train\", \"replicas\": 2, \"devices\": 4, \"model\": \"H100*\"}",
					     XP_STRAT_PACK);
	xp_tmux_expect(r->summary);
	xp_tmux_expect(r->replicas[1].node);
	xp_place_result_free(r);
	/* a job of two groups: the form edits one at a time, the replicas say which */
	char *two = write_file("two.json", "{\"groups\": [{\"name\": \"ga\", \"model\": \"H100*\"}, "
					   "{\"name\": \"gb\", \"model\": \"A100*\"}]}");
	load(two);
	xp_tmux_expect("1/2 ga");
	xp_tmux_expect("group gb");
	move_to(0);
	xp_tmux_keys("Right");
	xp_tmux_expect("< 2/2 gb >");
	xp_tmux_expect("A100*");
	free(two);
	load(good);
	xp_tmux_expect("Job t1 (train)");
	/* Esc while typing a path cancels and keeps the job */
	xp_tmux_keys("L");
	xp_tmux_expect("load: ");
	xp_tmux_keys("Escape");
	xp_tmux_expect("Job t1 (train)");
	free(bad);
	free(unknown);
	free(missing);
	free(good);
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

START_TEST(ascii_help_and_small)
{
	start("C", 80, 24);
	xp_tmux_keys("3");
	xp_tmux_expect("No dry-run yet");
	xp_tmux_keys("r");
	xp_tmux_expect("placed 1 replica");
	char *s = xp_tmux_wait("* chosen", false, 10);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		ck_assert_msg(*p < 0x80, "non-ASCII byte 0x%02x on an ASCII screen:\n%s", *p, s);
	free(s);
	xp_tmux_keys("?");
	xp_tmux_expect("Placement view");
	xp_tmux_expect("next / previous strategy");
	xp_tmux_keys("Escape");
	xp_tmux_expect_gone("Placement view");
	/* editing keeps every key: q and 1 are text here, not quit and a view switch */
	xp_tmux_keys("Enter");
	xp_tmux_keys("C-u");
	xp_tmux_literal("q1");
	xp_tmux_expect("Enter keeps  Esc cancels");
	xp_tmux_expect("q1");
	xp_tmux_keys("Escape");
	xp_tmux_expect("replicas     1");
	xp_tmux_resize(60, 20);
	xp_tmux_expect("terminal too small");
	xp_tmux_resize(80, 24);
	xp_tmux_expect("[ Run dry-run ]");
	xp_tmux_expect("placed 1 replica");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

XP_DEFINE_SUITE(pview,
	{"tmux", .timeout_s = 120, .setup = setup, .teardown = teardown, .setup_all = setup_all,
	 .teardown_all = xp_tmux_suite_teardown,
	 .tests = {placed_and_strategies, not_fit_shows_reasons, load_and_errors,
		   ascii_help_and_small}})
