/* check_tui_procs.c: processes in the console, end to end in tmux: the device view's
 * "processes" section and view 9, over a replay of the Tesla T4's recorded nvidia-smi report
 * (processes 675 Xorg, 22 MiB, and 5762 python, 1005 MiB). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "suitelib.h"
#include "testlib.h"
#include "tmuxlib.h"
#include "xp.h"

static char statedir[64];
static char *replay;

static void setup(void)
{
	xp_tmux_test_socket();
	snprintf(statedir, sizeof statedir, "/tmp/xpool-tuiprocs-%d", (int)getpid());
	xp_tmux_kill_server();
	char *argv[] = {"/bin/mkdir", "-p", statedir, NULL};
	struct xp_run r;
	xp_run_argv(&r, argv, NULL);
	xp_run_free(&r);
	replay = xp_assemble(statedir, "t4-node", "nvidia-smi/tesla-t4_515.105.01.q.xml", "nvidia-smi-q-x.xml", NULL);
	char cmd[8192];
	snprintf(cmd, sizeof cmd,
		 "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color XDG_STATE_HOME=%s %s --replay %s; echo $? > %s/rc",
		 statedir, xp_bin(), replay, statedir);
	xp_tmux_start(cmd, 120, 60);
}

static void teardown(void)
{
	xp_tmux_kill_server();
	xp_rm_rf(statedir);
	free(replay);
}

/* Where text is on the screen (a byte offset), failing when it is not there. */
static long at(const char *screen, const char *text)
{
	const char *p = strstr(screen, text);
	ck_assert_msg(p != NULL, "\"%s\" not on the screen:\n%s", text, screen);
	return (long)(p - screen);
}

START_TEST(device_view_section)
{
	xp_tmux_expect("  t4-node       up"); /* the map's row: the header names the replay before it loads */
	xp_tmux_keys("Enter");
	xp_tmux_expect("ACC0  NVIDIA Tesla T4");
	xp_tmux_keys("Down");
	xp_tmux_keys("Enter");
	xp_tmux_expect("pci bus id");
	char *s = xp_tmux_wait_all(10, "  processes             PID  USER         TYPE    MEMORY  UTIL  COMMAND",
				   "                        675  -            G       22 MiB     -  /usr/lib/xorg/Xorg",
				   "                       5762  -            C     1005 MiB     -  python", (const char *)NULL);
	free(s);
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

START_TEST(processes_view)
{
	xp_tmux_expect("9 Processes");
	xp_tmux_keys("9");
	char *s = xp_tmux_wait_all(10, "NODE", "COMMAND", "/usr/lib/xorg/Xorg", "python", (const char *)NULL);
	ck_assert_int_lt(at(s, "/usr/lib/xorg/Xorg"), at(s, "python")); /* the tool's order */
	free(s);
	xp_tmux_expect("1 of 2");
	/* s six times: NODE, ACC, PID, USER, TYPE, then MEMORY, largest first. */
	for (int i = 0; i < 6; i++)
		xp_tmux_keys("s");
	xp_tmux_expect("MEMORY\xe2\x86\x93");
	s = xp_tmux_capture();
	ck_assert_int_lt(at(s, "python"), at(s, "/usr/lib/xorg/Xorg"));
	free(s);
	xp_tmux_keys("S");
	xp_tmux_expect("MEMORY\xe2\x86\x91");
	/* The filter: a command's text. */
	xp_tmux_keys("/");
	xp_tmux_literal("Xorg");
	xp_tmux_keys("Enter");
	xp_tmux_expect("1 of 1 (1 filtered from 2)");
	xp_tmux_expect_gone("python");
	xp_tmux_keys("Escape");
	xp_tmux_expect("python");
	/* Or its fields: device memory over 100 MiB is python's 1005 MiB alone. */
	xp_tmux_keys("/");
	xp_tmux_literal("mem>100 & type=C");
	xp_tmux_keys("Enter");
	xp_tmux_expect("1 of 1 (1 filtered from 2)");
	xp_tmux_expect("python");
	xp_tmux_expect_gone("/usr/lib/xorg/Xorg");
	xp_tmux_keys("Escape");
	xp_tmux_expect("/usr/lib/xorg/Xorg");
	xp_tmux_keys("?");
	xp_tmux_expect("fields node acc pid user type mem util command");
	xp_tmux_keys("Escape");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(statedir, 0);
}
END_TEST

XP_DEFINE_SUITE(tui_procs,
	{"tmux", .timeout_s = 120, .setup = setup, .teardown = teardown,
	 .setup_all = xp_tmux_runner_setup, .teardown_all = xp_tmux_runner_teardown,
	 .tests = {device_view_section, processes_view}})
