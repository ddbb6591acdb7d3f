/* node_ssh.c: a command on a node with the terminal handed over, argv only. */
#include "node_ssh.h"

#include <curses.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format.h"
#include "run.h"
#include "theme_file.h"
#include "words.h"

int xp_ssh_argv(const char *tmpl, const char *node, int *argc, char ***argv, struct xp_err *err)
{
	*argc = 0;
	*argv = NULL;
	/* A name from an inventory or an agent that starts with '-' would be an option of the
	 * command (ssh's -oProxyCommand=... runs anything): no node is called that. */
	if (!node || !*node || *node == '-')
		return xp_errf(err, "'%s' is not a host name to connect to", node ? node : "");
	int n;
	char **w;
	if (xp_cmd_split_argv(tmpl, &n, &w, err) < 0) {
		xp_err_prefix(err, "ssh command");
		return -1;
	}
	if (n == 0) {
		xp_cmd_split_free(n, w);
		return xp_errf(err, "ssh command: empty (give one like 'ssh -t {node}')");
	}
	bool used = false;
	size_t nl = strlen(node);
	for (int i = 0; i < n; i++) {
		const char *p = strstr(w[i], "{node}");
		if (!p)
			continue;
		used = true;
		/* Each {node} becomes the name, inside this one word: never a split, never a shell. */
		size_t k = 0;
		for (const char *q = w[i]; (q = strstr(q, "{node}")) != NULL; q += 6)
			k++;
		char *out = xp_malloc(strlen(w[i]) + k * nl + 1), *o = out;
		for (const char *q = w[i]; *q;) {
			if (strncmp(q, "{node}", 6) == 0) {
				memcpy(o, node, nl);
				o += nl;
				q += 6;
			} else
				*o++ = *q++;
		}
		*o = '\0';
		free(w[i]);
		w[i] = out;
	}
	if (!used) {
		/* words.h makes room for XP_CMD_MAX_WORDS + 1; the last is the NULL. */
		if (n >= XP_CMD_MAX_WORDS) {
			xp_cmd_split_free(n, w);
			return xp_errf(err, "ssh command: too many words");
		}
		w[n++] = xp_strdup(node);
		w[n] = NULL;
	}
	*argc = n;
	*argv = w;
	return 0;
}

/* The template: the option, the environment, the default. */
static const char *ssh_template(struct xp_ui *ui)
{
	const struct xp_ctx *ctx = xp_ui_ctx(ui);
	if (ctx->ssh_command && *ctx->ssh_command)
		return ctx->ssh_command;
	const char *e = getenv("XPOOL_SSH");
	return e && *e ? e : XP_SSH_DEFAULT;
}

void xp_ui_ssh(struct xp_ui *ui, const char *node)
{
	const char *tmpl = ssh_template(ui);
	int argc;
	char **argv;
	struct xp_err err = {{0}};
	if (xp_ssh_argv(tmpl, node, &argc, &argv, &err) < 0) {
		xp_ui_message(ui, XP_ROLE_FAIL, "s: %s", err.msg);
		return;
	}
	/* A missing program is said here, in the console, not on a screen that is gone. */
	char *path = strchr(argv[0], '/') ? xp_strdup(argv[0]) : xp_which(argv[0]);
	if (!path || access(path, X_OK) != 0) {
		xp_ui_message(ui, XP_ROLE_FAIL, "s: %s: %s (set --ssh-command or XPOOL_SSH)", argv[0],
			      path ? strerror(errno) : "not found on PATH");
		free(path);
		xp_cmd_split_free(argc, argv);
		return;
	}
	/* The terminal goes to the command; the refresh thread goes on loading, and only this
	 * thread draws, so nothing is drawn until the console is back. */
	def_prog_mode();
	endwin();
	/* Ctrl-C and Ctrl-\ are the command's while it runs (its process group has the terminal
	 * with ours): the console ignores them meanwhile, as a shell does for its foreground job. */
	struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	int status = -1, why = 0;
	pid_t pid = fork();
	if (pid == 0) {
		struct sigaction dfl = {.sa_handler = SIG_DFL};
		sigemptyset(&dfl.sa_mask);
		sigaction(SIGINT, &dfl, NULL);
		sigaction(SIGQUIT, &dfl, NULL);
		execv(path, argv);
		_exit(127);
	} else if (pid < 0)
		why = errno;
	else
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	reset_prog_mode();
	/* Everything drawn again: the command left its own screen behind. */
	clearok(curscr, TRUE);
	refresh();
	if (pid < 0)
		xp_ui_message(ui, XP_ROLE_FAIL, "s: cannot start %s: %s", argv[0], strerror(why));
	else if (WIFEXITED(status))
		xp_ui_message(ui, WEXITSTATUS(status) ? XP_ROLE_WARN : XP_ROLE_OK, "%s %s: exit %d", argv[0], node,
			      WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		xp_ui_message(ui, XP_ROLE_WARN, "%s %s: killed by signal %d", argv[0], node, WTERMSIG(status));
	free(path);
	xp_cmd_split_free(argc, argv);
}
