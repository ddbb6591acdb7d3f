/* node_actions.h: view 1's actions on nodes: Space tags nodes, d drains (cordons) and u
 * undrains (uncordons) the tagged ones or the one under the cursor, through the command
 * table (`node drain|undrain`) after asking for a reason and a y/N that names them; s opens
 * a shell on the node (node_ssh.h). The action keys show only when this run may change
 * nodes: the check (src/cmd/node_access.h) runs on a thread of its own at start. */
#ifndef XP_NODE_ACTIONS_H
#define XP_NODE_ACTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "view.h"

/* Most nodes one action takes (one command line holds them). */
#define XP_NACT_MAX 200

struct xp_nact;

/* The actions' state for the console ui; starts the write-access check. */
struct xp_nact *xp_nact_new(struct xp_ui *ui);
/* Frees it (waits for the check's thread). NULL is fine. */
void xp_nact_free(struct xp_nact *a);
/* True when node name is tagged. */
bool xp_nact_tagged(const struct xp_nact *a, const char *name);
/* How many nodes are tagged. */
size_t xp_nact_count(const struct xp_nact *a);
/* Keys while a reason or a y/N is asked: every key is the question's (XP_REACT_* bits);
 * XP_REACT_UNHANDLED when nothing is asked. */
int xp_nact_pre_key(struct xp_nact *a, struct xp_ui *ui, int key);
/* Space, d, u (map rows only: map true) and s on node (the one under the cursor or open,
 * NULL: none): XP_REACT_* bits, XP_REACT_UNHANDLED for other keys. */
int xp_nact_key(struct xp_nact *a, struct xp_ui *ui, int key, const char *node, bool map);
/* Draws the question being asked, if any, on the last row of r. */
void xp_nact_draw(const struct xp_nact *a, WINDOW *w, struct xp_rect r);
/* The view's keys with the action keys added when nodes may be changed (for `?`). */
const struct xp_view_key *xp_nact_keys(struct xp_nact *a, const struct xp_view_key *base);

#endif
