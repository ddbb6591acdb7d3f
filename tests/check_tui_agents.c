/* check_tui_agents.c: the console over real node agents, in a real terminal (tmux):
 * nodes from several agents, one killed (its node turns unreachable and keeps its data),
 * brought back, and the agent list changed from the prompt. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model.h"
#include "simgen.h"
#include "suitelib.h"
#include "testlib.h"
#include "tmuxlib.h"
#include "xp.h"

static char statedir[64];
static pid_t agents[2];

static void setup(void)
{
	xp_tmux_test_socket();
	snprintf(statedir, sizeof statedir, "/tmp/xpool-tuia-%d", (int)getpid());
	xp_tmux_kill_server();
	mkdir(statedir, 0755);
	unsetenv("XPOOL_ADAPTER_PATH");
	unsetenv("XPOOL_ADAPTER_PATH_ONLY");
	unsetenv("XPOOL_ADAPTERS");
}

static void teardown(void)
{
	xp_tmux_kill_server();
	for (int i = 0; i < 2; i++)
		if (agents[i] > 0) {
			kill(agents[i], SIGKILL);
			waitpid(agents[i], NULL, 0);
			agents[i] = 0;
		}
	xp_rm_rf(statedir);
}

START_TEST(agents_in_the_console)
{
	char *dgx = xp_replay_dgx(statedir);
	char *mi = xp_assemble(statedir, "mi100-11", "amd/mi100-x4_rocm602.rocm-smi.json", "rocm-smi.json", NULL);
	char u1[256], u2[256];
	agents[0] = xp_agent_start(u1, sizeof u1, "--replay", dgx, NULL);
	ck_assert_msg(agents[0] > 0, "%s", u1);
	agents[1] = xp_agent_start(u2, sizeof u2, "--replay", mi, NULL);
	ck_assert_msg(agents[1] > 0, "%s", u2);

	char cmd[4096];
	snprintf(cmd, sizeof cmd,
		 "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color XDG_STATE_HOME=%s %s --delay 0.5 "
		 "--agent-timeout 1 --agent %s --agent %s; echo $? > %s/rc",
		 statedir, xp_bin(), u1, u2, statedir);
	xp_tmux_start(cmd, 140, 36);
	/* The whole state at once: the header, the map and the status line are drawn in one frame,
	 * but a test that waits for one string can read the frame before the one it wants. */
	free(xp_tmux_wait_all(15, "^agents 2 up 0 down", "^2 nodes", "$agents 2 up 0 down", "dgx-a100-07", "mi100-11",
			      NULL));

	/* One agent dies: its node stays, unreachable, with its devices. */
	kill(agents[1], SIGKILL);
	waitpid(agents[1], NULL, 0);
	agents[1] = 0;
	free(xp_tmux_wait_all(15, "^agents 1 up 1 down", "$agents 1 up 1 down", "unreachable", "mi100-11", "^2 nodes",
			      NULL));
	/* The events view tells when and why. */
	xp_tmux_keys("5");
	free(xp_tmux_wait_all(10, "mi100-11)", u2, NULL));
	xp_tmux_keys("1");

	/* `:agent ls` lists both, one down with the reason. */
	xp_tmux_command("agent ls");
	free(xp_tmux_wait_all(10, "DATA AGE", "down", "connect", NULL));
	xp_tmux_keys("Escape");

	/* Back on the same port: `r` asks at once, whatever the backoff says. */
	const char *args[] = {"--replay", mi};
	char u3[256];
	pid_t p = xp_agent_restart(u3, sizeof u3, u2, args, 2);
	ck_assert_int_gt(p, 0);
	agents[1] = p;
	xp_tmux_keys("r");
	free(xp_tmux_wait_all(15, "^agents 2 up 0 down", "$agents 2 up 0 down", NULL));

	/* Removed and added again from the prompt. */
	char line[512];
	snprintf(line, sizeof line, "agent rm %s", u2);
	xp_tmux_command(line);
	free(xp_tmux_wait_all(15, "^agents 1 up 0 down", "^1 node ", NULL));
	xp_tmux_keys("Escape");
	snprintf(line, sizeof line, "agent add %s", u2);
	xp_tmux_command(line);
	free(xp_tmux_wait_all(15, "^agents 2 up 0 down", "^2 nodes", NULL));
	xp_tmux_keys("Escape");
	/* On an 80-column terminal the header drops the source; the status line keeps the count. */
	xp_tmux_resize(80, 24);
	xp_tmux_expect_all("$agents 2 up 0 down", "^2 nodes");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
	free(dgx);
	free(mi);
}
END_TEST

/* Sets a text field of view 3's form (as check_pview.c does): Enter opens it, Ctrl-U clears. */
static void set_field(int downs, const char *text)
{
	for (int i = 0; i < 20; i++)
		xp_tmux_keys("Up");
	for (int i = 0; i < downs; i++)
		xp_tmux_keys("Down");
	xp_tmux_keys("Enter");
	xp_tmux_keys("C-u");
	xp_tmux_literal(text);
	xp_tmux_keys("Enter");
}

/* 40 agents served by the farm (issue 15): a refresh where one node changed gives the console
 * a cluster sharing every other node, and view 3's placement index follows it (only that node
 * indexed again) rather than being built anew: the dry-run it reruns on the new data says no
 * "index built". */
START_TEST(placement_index_follows_agents)
{
	struct xp_err err = {{0}};
	struct xp_cluster *src = xp_sim_generate(40, NULL, 3, &err);
	ck_assert_msg(src != NULL, "%s", err.msg);
	struct xp_farm *farm = xp_farm_start(src);
	ck_assert_ptr_nonnull(farm);
	char list[128];
	snprintf(list, sizeof list, "%s/agents", statedir);
	FILE *f = fopen(list, "w");
	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < src->n_nodes; i++) {
		char url[64];
		xp_farm_url(farm, i, url, sizeof url);
		fprintf(f, "%s\n", url);
	}
	fclose(f);
	char cmd[4096];
	snprintf(cmd, sizeof cmd,
		 "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color XDG_STATE_HOME=%s %s --delay 0.5 "
		 "--agent-timeout 2 --agents %s; echo $? > %s/rc",
		 statedir, xp_bin(), list, statedir);
	xp_tmux_start(cmd, 140, 40);
	free(xp_tmux_wait_all(20, "^agents 40 up 0 down", "^40 nodes", NULL));
	xp_tmux_keys("3");
	xp_tmux_expect("No dry-run yet");
	set_field(2, "2");     /* devices */
	set_field(4, "H100*"); /* model */
	xp_tmux_keys("r");
	free(xp_tmux_wait_all(15, "(index built:", "nothing changes", NULL));
	/* One node changes (all its devices taken): the next refresh fetches it alone. */
	struct xp_farm_counts c0 = xp_farm_counts(farm);
	xp_farm_change(farm, 7);
	for (int t = 0; t < 200 && xp_farm_counts(farm).ok200 == c0.ok200; t++)
		usleep(50000);
	ck_assert_uint_eq(xp_farm_counts(farm).ok200, c0.ok200 + 1);
	/* The view reruns on the new data with the index it kept. */
	free(xp_tmux_wait("(index built:", true, 15));
	xp_tmux_expect("nothing changes");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
	xp_farm_stop(farm);
	xp_cluster_free(src);
}
END_TEST

XP_DEFINE_SUITE(tui_agents,
	{"tmux", .timeout_s = 120, .setup = setup, .teardown = teardown,
	 .setup_all = xp_tmux_runner_setup, .teardown_all = xp_tmux_runner_teardown,
	 .tests = {agents_in_the_console, placement_index_follows_agents}})
