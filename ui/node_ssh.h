/* node_ssh.h: the console's `s`: a command run on a node (`ssh NODE` by default) with the
 * terminal given back, no shell in between. */
#ifndef XP_NODE_SSH_H
#define XP_NODE_SSH_H

#include "ui.h"

/* The command when neither --ssh-command nor $XPOOL_SSH names one. */
#define XP_SSH_DEFAULT "ssh {node}"

/* Splits tmpl into words as a command line is (words.h: quotes, backslashes) and replaces
 * every {node} inside a word by node, which stays inside that one word whatever it holds; a
 * template without {node} gets node as a last word. -1 with err set on a bad or empty template. */
int xp_ssh_argv(const char *tmpl, const char *node, int *argc, char ***argv, struct xp_err *err);
/* Runs the command of ctx (--ssh-command, else $XPOOL_SSH, else XP_SSH_DEFAULT) for node with
 * the terminal handed over (def_prog_mode, endwin), waits for it, gives the console back
 * (reset_prog_mode, everything drawn again) and says its exit status in the status line. */
void xp_ui_ssh(struct xp_ui *ui, const char *node);

#endif
