/* place_form.h: the job form of the Placement view (pure, no ncurses): which fields of a
 * task group it shows, how each reads, and setting one from the text typed into it. A value
 * is checked by the same parser as `xpool place`'s flags, so the console and the command
 * line accept and refuse the same values. */
#ifndef XP_PLACE_FORM_H
#define XP_PLACE_FORM_H

#include <stdbool.h>
#include <stddef.h>

#include "jobspec.h"
#include "xp.h"

/* The fields of one task group the form edits, in the order shown. */
enum xp_pf_field {
	XP_PF_REPLICAS,
	XP_PF_GANG_MIN, /* fewest replicas worth starting; the rest wait (pending) */
	XP_PF_DEVICES,
	XP_PF_VENDOR,
	XP_PF_MODEL,
	XP_PF_MEMORY,
	XP_PF_SLICE,
	XP_PF_NUMA,
	XP_PF_NETWORK,
	XP_PF_SAME_GROUP,
	XP_PF_HOMOGENEOUS,
	XP_PF_LABELS,
	XP_PF_COUNT
};

/* The field's label ("memory MiB"), NULL when out of range. */
const char *xp_pf_name(int f);
/* True for a field with a few values that cycle (numa, network, the yes/no ones) rather than text. */
bool xp_pf_is_choice(int f);
/* The field's value as the form shows it ("any", "none", "yes", "gpu=a100,zone=z1"; gang min:
 * "all" while it is every replica) in buf. */
const char *xp_pf_show(const struct xp_task_group *g, int f, char *buf, size_t len);
/* True when the field holds its default ("any", "none", 0, a gang of all replicas), which the
 * form shows dimmed. */
bool xp_pf_is_default(const struct xp_task_group *g, int f);
/* The field's value as text to edit ("" for any or none) in buf. */
const char *xp_pf_text(const struct xp_task_group *g, int f, char *buf, size_t len);
/* Sets field f of group gi from text ("" clears a pattern, slice or labels). A slice clears
 * the whole-device count and a device count clears the slice (a replica gets one or the
 * other), and gang_min follows replicas when it was all of them; note then says what else
 * changed ("" when nothing did). -1 with err naming the field when the text is refused; the
 * job is then unchanged. */
int xp_pf_set(struct xp_job *j, size_t gi, int f, const char *text, char *note, size_t nlen,
	      struct xp_err *err);
/* Moves a choice field of group gi to its next (dir > 0) or previous value; -1 for a text field. */
int xp_pf_cycle(struct xp_job *j, size_t gi, int f, int dir);

#endif
