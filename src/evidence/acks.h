/* acks.h: acknowledged and snoozed health problems, kept in the store (table acks, schema 5)
 * and audited. An acknowledgement is of one problem as it was (node, what, reason, level):
 * the same problem then stops shouting (the problems view puts it at the bottom, dimmed; the
 * header and the event log count it apart), and a problem that changes its reason or level
 * is a new one and shouts again. A snooze is an acknowledgement that ends at a time. */
#ifndef XP_ACKS_H
#define XP_ACKS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "problems.h"
#include "store.h"

/* What kind of row. */
enum xp_ack_kind {
	XP_ACK_ACK,   /* acknowledged until un-acknowledged or the problem changes */
	XP_ACK_SNOOZE /* acknowledged until `until` */
};

/* Where a problem stands against the stored rows. */
enum xp_ack_state {
	XP_ACK_OPEN,    /* nothing stored for it (or the stored row is for another level, or expired) */
	XP_ACK_ACKED,   /* acknowledged */
	XP_ACK_SNOOZED  /* snoozed, not yet expired */
};

/* One stored row. */
struct xp_ack {
	char *node, *what, *reason;
	int level;         /* XP_HEALTH_WARN or XP_HEALTH_FAIL, as when acknowledged */
	int kind;          /* enum xp_ack_kind */
	time_t time;       /* when */
	time_t until;      /* a snooze's end, 0 for an acknowledgement */
	char *actor, *note; /* who; the note or NULL */
};

/* Every stored row, sorted by node, what, reason (for xp_acks_find). Zero-initialized is empty. */
struct xp_acks {
	struct xp_ack *a;
	size_t n;
};

/* Reads every row into out (an older file without the table reads as none); -1 with err set. */
int xp_acks_load(struct xp_store *s, struct xp_acks *out, struct xp_err *err);
/* Frees the rows and empties the set. */
void xp_acks_free(struct xp_acks *a);
/* The row stored for (node, what, reason), or NULL. */
const struct xp_ack *xp_acks_find(const struct xp_acks *a, const char *node, const char *what, const char *reason);
/* Where problem p stands at now (enum xp_ack_state); *row (when not NULL) gets the row that
 * decided it, or NULL when open. A row for another level, or a snooze at or past its end,
 * leaves the problem open. */
int xp_ack_state(const struct xp_acks *a, const struct xp_problem *p, time_t now, const struct xp_ack **row);
/* The state's word: "open", "acked", "snoozed". */
const char *xp_ack_state_name(int state);
/* Acknowledges (kind XP_ACK_ACK, until ignored) or snoozes until `until` the n problems p (all
 * of one node and what: the rows `problem ack NODE WHAT` means), replacing what was stored for
 * them, with one audit row ("problem.ack" or "problem.snooze", target "NODE WHAT"); one
 * transaction. -1 with err set. */
int xp_acks_put(struct xp_store *s, const struct xp_problem *p, size_t n, int kind, time_t now, time_t until,
		const char *note, struct xp_err *err);
/* Removes what is stored for (node, what) with an audit row ("problem.unack") saying what was
 * there; *removed gets how many rows went (0: nothing was stored, and nothing is audited).
 * -1 with err set. */
int xp_acks_clear(struct xp_store *s, const char *node, const char *what, size_t *removed, struct xp_err *err);
/* Parses a snooze length: a positive number and a unit, s, m, h or d ("30m", "4h", "1d"; a
 * bare number is minutes), at most 365 days, into *secs. -1 with err naming the text. */
int xp_ack_duration(const char *text, int64_t *secs, struct xp_err *err);
/* Sorts p most severe first, as the problems view and `problem list` show them: open before
 * acknowledged or snoozed, fail before warn, the node itself before its devices, then since[]
 * (when not NULL: each problem's first-seen time, oldest first), node, what and reason. state[]
 * (when not NULL) holds each problem's enum xp_ack_state and is sorted along, as is since[]. */
void xp_problems_order(struct xp_problem *p, int *state, time_t *since, size_t n);

#endif
