/* tmuxlib.c: driving the real console in a private tmux server (tmuxlib.h). */
#include <check.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "tmuxlib.h"
#include "xp.h"

char xp_tmux_sock[64];

/* Runs tmux with the private socket and the arguments in ap; returns the run (checked to start). */
static struct xp_run run_tmux(const char *first, va_list ap)
{
	const char *argv[32] = {"/usr/bin/tmux", "-L", xp_tmux_sock, "-f", "/dev/null"};
	int n = 5;
	for (const char *a = first; a && n < 31; a = va_arg(ap, const char *))
		argv[n++] = a;
	argv[n] = NULL;
	struct xp_run r;
	ck_assert_int_eq(xp_run_argv(&r, (char *const *)argv, NULL), 0);
	return r;
}

char *xp_tmux(const char *first, ...)
{
	va_list ap;
	va_start(ap, first);
	struct xp_run r = run_tmux(first, ap);
	va_end(ap);
	free(r.err);
	return r.out;
}

void xp_tmux_do(const char *first, ...)
{
	va_list ap;
	va_start(ap, first);
	struct xp_run r = run_tmux(first, ap);
	va_end(ap);
	xp_run_free(&r);
}

char *xp_tmux_capture(void)
{
	return xp_tmux("capture-pane", "-p", "-t", "t", NULL);
}

char *xp_tmux_wait(const char *text, bool absent, double seconds)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		char *s = xp_tmux_capture();
		bool has = strstr(s, text) != NULL;
		if (has != absent)
			return s;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if ((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9 > seconds)
			ck_abort_msg("screen %s \"%s\" after %.0f s:\n%s", absent ? "still shows" : "never showed", text,
				     seconds, s);
		free(s);
		usleep(50 * 1000);
	}
}

char *xp_tmux_last_row(const char *screen)
{
	size_t end = strlen(screen);
	while (end && (screen[end - 1] == '\n' || screen[end - 1] == ' '))
		end--;
	size_t b = end;
	while (b && screen[b - 1] != '\n')
		b--;
	return xp_strndup(screen + b, end - b);
}

/* Whether one condition of xp_tmux_wait_all holds on screen s. */
static bool holds(const char *s, const char *cond)
{
	switch (cond[0]) {
	case '!':
		return strstr(s, cond + 1) == NULL;
	case '^': {
		size_t n = strcspn(s, "\n");
		char *row = xp_strndup(s, n);
		bool ok = strstr(row, cond + 1) != NULL;
		free(row);
		return ok;
	}
	case '$': {
		char *row = xp_tmux_last_row(s);
		bool ok = strstr(row, cond + 1) != NULL;
		free(row);
		return ok;
	}
	default:
		return strstr(s, cond) != NULL;
	}
}

char *xp_tmux_wait_all(double seconds, const char *first, ...)
{
	const char *conds[32];
	int n = 0;
	va_list ap;
	va_start(ap, first);
	for (const char *c = first; c && n < 32; c = va_arg(ap, const char *))
		conds[n++] = c;
	va_end(ap);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		char *s = xp_tmux_capture();
		int bad = 0;
		while (bad < n && holds(s, conds[bad]))
			bad++;
		if (bad == n)
			return s;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if ((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9 > seconds)
			ck_abort_msg("after %.0f s the screen does not hold \"%s\" (with the %d condition%s before it):\n%s",
				     seconds, conds[bad], bad, bad == 1 ? "" : "s", s);
		free(s);
		usleep(50 * 1000);
	}
}

void xp_tmux_expect(const char *text)
{
	free(xp_tmux_wait(text, false, 30));
}

void xp_tmux_expect_gone(const char *text)
{
	free(xp_tmux_wait(text, true, 30));
}

void xp_tmux_keys(const char *k)
{
	xp_tmux_do("send-keys", "-t", "t", k, NULL);
}

void xp_tmux_literal(const char *text)
{
	/* "--": text that starts with a dash ("--explain") is text, not tmux's options. */
	xp_tmux_do("send-keys", "-t", "t", "-l", "--", text, NULL);
}

void xp_tmux_command(const char *line)
{
	xp_tmux_keys(":");
	xp_tmux_literal(line);
	xp_tmux_keys("Enter");
}

void xp_tmux_resize(int cols, int rows)
{
	char x[16], y[16];
	snprintf(x, sizeof x, "%d", cols);
	snprintf(y, sizeof y, "%d", rows);
	xp_tmux_do("resize-window", "-t", "t", "-x", x, "-y", y, NULL);
}

void xp_tmux_start(const char *cmd, int cols, int rows)
{
	char geom_x[16], geom_y[16];
	snprintf(geom_x, sizeof geom_x, "%d", cols);
	snprintf(geom_y, sizeof geom_y, "%d", rows);
	xp_tmux_do("new-session", "-d", "-s", "t", "-x", geom_x, "-y", geom_y, cmd, NULL);
	xp_tmux_do("set-option", "-t", "t", "remain-on-exit", "on", NULL);
}

void xp_tmux_kill_server(void)
{
	const char *argv[] = {"/usr/bin/tmux", "-L", xp_tmux_sock, "kill-server", NULL};
	struct xp_run r;
	if (xp_run_argv(&r, (char *const *)argv, NULL) == 0)
		xp_run_free(&r);
}

void xp_tmux_expect_exit(const char *dir, int code)
{
	char path[128];
	snprintf(path, sizeof path, "%s/rc", dir);
	for (int i = 0; i < 200; i++) {
		FILE *f = fopen(path, "r");
		int st = -1;
		if (f) {
			int got = fscanf(f, "%d", &st);
			fclose(f);
			if (got == 1) {
				ck_assert_int_eq(st, code);
				return;
			}
		}
		usleep(50 * 1000);
	}
	char *screen = xp_tmux_capture();
	ck_abort_msg("xpool did not exit; the screen:\n%s", screen);
}

void xp_tmux_test_socket(void)
{
	snprintf(xp_tmux_sock, sizeof xp_tmux_sock, "xpool-test-%d", (int)getppid());
}

void xp_tmux_runner_setup(void)
{
	snprintf(xp_tmux_sock, sizeof xp_tmux_sock, "xpool-test-%d", (int)getpid());
}

void xp_tmux_runner_teardown(void)
{
	xp_tmux_runner_setup();
	xp_tmux_kill_server();
}

char xp_tmux_topdir[64];

void xp_tmux_suite_setup(const char *suite)
{
	snprintf(xp_tmux_sock, sizeof xp_tmux_sock, "xpool-%s-%d", suite, (int)getpid());
	snprintf(xp_tmux_topdir, sizeof xp_tmux_topdir, "/tmp/xpool-%s-%d", suite, (int)getpid());
}

void xp_tmux_suite_teardown(void)
{
	xp_tmux_kill_server();
	xp_rm_rf(xp_tmux_topdir);
}

void xp_tmux_test_dir(char *dir, size_t len)
{
	/* The server of a test that failed before this one still runs its session "t". */
	xp_tmux_kill_server();
	snprintf(dir, len, "%s/%d", xp_tmux_topdir, (int)getpid());
	char *argv[] = {"/bin/mkdir", "-p", dir, NULL};
	struct xp_run r;
	xp_run_argv(&r, argv, NULL);
	xp_run_free(&r);
}

void xp_tmux_test_dir_done(const char *dir)
{
	xp_tmux_kill_server();
	xp_rm_rf(dir);
}
