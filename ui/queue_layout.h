/* queue_layout.h: the pure parts of the queues view (view 2; no ncurses), unit tested in
 * tests/check_queue_layout.c: the queue tree's rows (parent hierarchy, folding, one row per
 * quota), a quota bar's segments (used inside the deserved share, borrowed above it, free,
 * headroom up to the maximum), its numbers, the tree's columns on a narrow screen, and the
 * cells of the job list (wait, position, reason) with its sort order. */
#ifndef XP_QUEUE_LAYOUT_H
#define XP_QUEUE_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qjob.h"
#include "qmodel.h"

/* One row of the queue tree: a queue's line, or one more quota of the queue above. */
struct xp_ql_row {
	size_t queue;  /* index in the qset */
	size_t quota;  /* index in the queue's quotas; SIZE_MAX: the queue has none */
	int depth;     /* 0 at the top of the hierarchy */
	bool first;    /* the queue's own line (the cursor rests only there) */
	bool kids;     /* the queue has children */
	bool open;     /* its children are shown (not folded) */
};

/* The rows of the tree, top to bottom. */
struct xp_ql_tree {
	struct xp_ql_row *rows;
	size_t n, cap;
};

/* Builds the tree of qs into t (emptied first): top queues (no parent, or a parent that is not
 * in the set) by name, each followed by its children by name, depth first; a queue whose
 * folded[i] is true (folded may be NULL) hides its descendants. A queue with k > 1 quotas
 * takes k rows. A loop in the parents (the store refuses one) cannot hang it: each queue
 * shows once. */
void xp_ql_tree_build(const struct xp_qset *qs, const bool *folded, struct xp_ql_tree *t);
/* Frees the rows and zeroes t. */
void xp_ql_tree_free(struct xp_ql_tree *t);
/* The row of queue qi's own line, or -1 when it is hidden (under a folded parent). */
long xp_ql_tree_find(const struct xp_ql_tree *t, size_t qi);
/* The indentation and fold mark before a queue's name: two columns per level, then "▾ " (open
 * with children), "▸ " (folded), "  " (no children); ASCII "- ", "+ ", "  ". A quota's
 * continuation row: blanks only. Writes buf and returns it. */
const char *xp_ql_prefix(const struct xp_ql_row *r, bool utf8, char *buf, size_t len);

/* The name cell of a tree row in width columns: the prefix (xp_ql_prefix) and the queue's
 * name, the name cut at its end with ellipsis when it does not fit (the prefix, which says
 * where the queue sits, stays while there is room for a column of the name); a continuation
 * row's cell is blank. Writes buf and returns it. */
const char *xp_ql_name_cell(const struct xp_ql_row *r, const char *name, int width, bool utf8, const char *ellipsis,
			    char *buf, size_t len);

/* A quota bar's cells, left to right, summing to the bar's width. */
struct xp_ql_bar {
	int used;      /* used inside the deserved share */
	int borrowed;  /* used above the deserved share (taken from the cohort) */
	int free;      /* deserved but not used */
	int headroom;  /* above deserved, up to the maximum (or the bar's end when unlimited) */
};
/* Lays out a bar of width cells for used / deserved / max (milli-units; max XP_UNLIMITED: the
 * bar ends at the larger of deserved and used, and used < 0: not known, only the share and
 * headroom show). Cell boundaries round to the nearest cell, but a nonzero amount takes at
 * least one cell and an amount short of the bar's end leaves at least one, so that neither a
 * small use nor a small gap disappears. Used above max (never, by the invariants) fills the bar. */
void xp_ql_bar_fit(int64_t used, int64_t deserved, int64_t max, int width, struct xp_ql_bar *b);
/* The glyph of each bar segment: UTF-8 "█" "▓" "░" "·", ASCII "#" "=" "-" "."; every one is
 * one column and the four differ in shape, not only in colour. seg: 0 used, 1 borrowed, 2
 * free, 3 headroom. */
const char *xp_ql_bar_glyph(int seg, bool utf8);
/* The theme role of each bar segment (ok, warn, dim, dim). */
int xp_ql_bar_role(int seg);
/* The bar's numbers: "used/deserved/max" with borrowing as "own+borrowed" ("40+8/40/64"),
 * "-" for an unlimited max and "?" for a use not known. Writes buf and returns it. */
const char *xp_ql_amounts(int64_t used, int64_t deserved, int64_t max, char *buf, size_t len);

/* Widest and narrowest a bar is drawn; a name column is not cut below XP_QL_NAME_MIN. */
#define XP_QL_BAR_MAX 40
#define XP_QL_BAR_MIN 6
#define XP_QL_NAME_MIN 8
#define XP_QL_LABEL_MIN 4
/* Columns of the tree's table. */
enum { XP_QL_C_NAME, XP_QL_C_WEIGHT, XP_QL_C_LABEL, XP_QL_C_BAR, XP_QL_C_AMOUNTS, XP_QL_C_PEND, XP_QL_C_RUN,
       XP_QL_C_COUNT };
/* Where the tree's columns go: width 0 means the column is not shown. */
struct xp_ql_cols {
	int x[XP_QL_C_COUNT], w[XP_QL_C_COUNT];
};
/* Fits the tree's columns into avail with one blank between two: the name, weight, class
 * label and numbers take what their widest cell wants (want[], indexed by XP_QL_C_*; the bar's
 * and the counts' entries are ignored), PEND and RUN four each at the right, the bar what is
 * left up to XP_QL_BAR_MAX. When the bar would be under XP_QL_BAR_MIN: the name shrinks toward
 * XP_QL_NAME_MIN, then the label toward XP_QL_LABEL_MIN, then the weight goes, then the bar,
 * then the numbers; what still does not fit is cut at the right edge by the drawing. */
void xp_ql_cols_fit(const int want[XP_QL_C_COUNT], int avail, struct xp_ql_cols *c);

/* How long job j has waited at now: pending, held and preempted jobs since submit, started
 * ones from submit to start; -1 when neither applies. */
int64_t xp_ql_wait(const struct xp_qjob *j, int64_t now);
/* Queue position as "queue/global" ("3/40"), "-" when not pending. */
const char *xp_ql_position(const struct xp_qjob *j, char *buf, size_t len);
/* The reason cell: "Name: text" ("QuotaExceeded: h100 devices 64/64 used, 8 more needed"),
 * "Name" without text, "-" with none. */
const char *xp_ql_reason(const struct xp_qjob *j, char *buf, size_t len);
/* Columns of the job list. */
enum { XP_QL_J_ID, XP_QL_J_STATE, XP_QL_J_WAIT, XP_QL_J_PRIO, XP_QL_J_POS, XP_QL_J_REASON, XP_QL_J_COUNT };
/* The job list's order by column col (ascending; the list reverses it): id, state (in the
 * state enum's order), wait at now, priority, position (not pending last), reason (by code,
 * then text); ties by id. */
int xp_ql_job_cmp(const struct xp_qjob *a, const struct xp_qjob *b, int col, int64_t now);

/* One what-if line of a queue, its name padded to name_w columns: "research  p50 12m → 40m
 * p95 3h10m → 4h40m" (ASCII "->"), a side with no started job "-". Writes buf and returns it. */
const char *xp_ql_whatif_line(const char *queue, int name_w, int64_t base_p50, int64_t base_p95, int64_t scen_p50,
			      int64_t scen_p95, bool utf8, char *buf, size_t len);

#endif
