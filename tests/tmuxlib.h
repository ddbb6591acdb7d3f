/* tmuxlib.h: driving the real console in a private tmux server, for the end-to-end suites. */
#ifndef XP_TMUXLIB_H
#define XP_TMUXLIB_H

#include <stdbool.h>
#include <stddef.h>

/* The private server's socket name (tmux -L); each suite names it (after the runner). */
extern char xp_tmux_sock[64];

/* Runs tmux on the private server with the NULL-terminated arguments; returns its output (caller frees). */
char *xp_tmux(const char *first, ...);
/* Runs tmux on the private server with the NULL-terminated arguments, output dropped. */
void xp_tmux_do(const char *first, ...);
/* The text of session "t"'s pane (caller frees). */
char *xp_tmux_capture(void);
/* Waits until the screen holds text (or, with absent, until it does not); returns the screen. */
char *xp_tmux_wait(const char *text, bool absent, double seconds);
/* Waits until one capture of the screen holds every condition of the NULL-terminated list
 * together, or aborts with the screen and the first condition that failed after seconds.
 * A condition is text on the screen; "!text": not on the screen; "^text": on the first row
 * (the header); "$text": on the last non-blank row (the status line). Waiting for the whole
 * state, not one string of it, keeps a test from reading a frame the console is still
 * drawing (the header one refresh behind the status line). Returns the screen (caller frees). */
char *xp_tmux_wait_all(double seconds, const char *first, ...) __attribute__((sentinel));
/* xp_tmux_wait_all for up to 10 s, screen freed. */
#define xp_tmux_expect_all(...) free(xp_tmux_wait_all(10, __VA_ARGS__, (const char *)NULL))
/* The last non-blank row of a captured screen, copied (caller frees). */
char *xp_tmux_last_row(const char *screen);
/* Waits up to 30 s (10 s once ran out on a loaded two-core machine) for text on the screen. */
void xp_tmux_expect(const char *text);
/* Waits up to 30 s for text to leave the screen. */
void xp_tmux_expect_gone(const char *text);
/* Sends a key (tmux key name) to session "t". */
void xp_tmux_keys(const char *k);
/* Types text literally into session "t". */
void xp_tmux_literal(const char *text);
/* Runs a console command: ':' opens the prompt, line is typed, Enter runs it. */
void xp_tmux_command(const char *line);
/* Resizes session "t"'s window to cols x rows (the console sees SIGWINCH). */
void xp_tmux_resize(int cols, int rows);
/* Starts cmd (through sh) in a detached session "t" of cols x rows that stays after it exits. */
void xp_tmux_start(const char *cmd, int cols, int rows);
/* Kills the private server, if one runs. */
void xp_tmux_kill_server(void);
/* Waits for the exit status the console's command wrote to dir/rc and checks it is code. */
void xp_tmux_expect_exit(const char *dir, int code);

/* Names the private server after the runner, in a test (the runner is its parent), so one
 * teardown in the runner can remove whatever a failed test left behind. */
void xp_tmux_test_socket(void);
/* The suite's unchecked fixture (runs in the runner around all its tests): names the server. */
void xp_tmux_runner_setup(void);
/* The suite's unchecked teardown: kills the server the tests shared. */
void xp_tmux_runner_teardown(void);

/* A failed check ends the test's process with _exit (fork mode), so neither its teardown nor
 * atexit runs: suites whose tests keep files name the server and a scratch directory after the
 * runner, and the next test's setup and the tcase's unchecked teardown clean up. */
/* The suite's scratch directory, /tmp/xpool-SUITE-RUNNER (set by xp_tmux_suite_setup). */
extern char xp_tmux_topdir[64];
/* In the runner (unchecked setup): names the server xpool-SUITE-RUNNER and the scratch directory. */
void xp_tmux_suite_setup(const char *suite);
/* In the runner (unchecked teardown): kills the server and removes the scratch directory. */
void xp_tmux_suite_teardown(void);
/* In a test (checked setup): kills a server a failed test left and makes dir = topdir/PID. */
void xp_tmux_test_dir(char *dir, size_t len);
/* In a test (checked teardown): kills the server and removes dir. */
void xp_tmux_test_dir_done(const char *dir);

#endif
