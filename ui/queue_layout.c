/* queue_layout.c: the queues view's pure layout (see queue_layout.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "format.h"
#include "queue_layout.h"
#include "theme.h"
#include "xp.h"

/* ---- the tree ---- */

static void add_row(struct xp_ql_tree *t, struct xp_ql_row r)
{
	xp_grow(&t->rows, sizeof *t->rows, t->n, &t->cap);
	t->rows[t->n++] = r;
}

/* Index of q's parent in qs, or -1 for a top queue (no parent, or one the set lacks). */
static long parent_of(const struct xp_qset *qs, const struct xp_queue *q)
{
	if (!q->parent)
		return -1;
	for (size_t i = 0; i < qs->n_queues; i++)
		if (strcmp(qs->queues[i].name, q->parent) == 0)
			return (long)i;
	return -1;
}

struct walk {
	const struct xp_qset *qs;
	const bool *folded;
	const long *parent;
	bool *seen;
	struct xp_ql_tree *t;
};

static void walk_queue(struct walk *w, size_t qi, int depth)
{
	const struct xp_queue *q = &w->qs->queues[qi];
	w->seen[qi] = true;
	bool kids = false;
	for (size_t i = 0; i < w->qs->n_queues; i++)
		kids = kids || (w->parent[i] == (long)qi && i != qi);
	bool open = kids && !(w->folded && w->folded[qi]);
	size_t nq = q->n_quotas ? q->n_quotas : 1;
	for (size_t k = 0; k < nq; k++)
		add_row(w->t, (struct xp_ql_row){qi, q->n_quotas ? k : SIZE_MAX, depth, k == 0, kids, open});
	if (!open)
		return;
	/* The set is kept by name: children come out by name. */
	for (size_t i = 0; i < w->qs->n_queues; i++)
		if (w->parent[i] == (long)qi && !w->seen[i])
			walk_queue(w, i, depth + 1);
}

/* Marks every descendant of qi as seen (a folded queue's subtree is shown, just hidden). */
static void mark_under(struct walk *w, size_t qi)
{
	for (size_t i = 0; i < w->qs->n_queues; i++)
		if (w->parent[i] == (long)qi && !w->seen[i]) {
			w->seen[i] = true;
			mark_under(w, i);
		}
}

void xp_ql_tree_build(const struct xp_qset *qs, const bool *folded, struct xp_ql_tree *t)
{
	t->n = 0;
	size_t n = qs->n_queues;
	if (!n)
		return;
	long *parent = xp_malloc(n * sizeof *parent);
	bool *seen = xp_calloc(n, sizeof *seen);
	for (size_t i = 0; i < n; i++)
		parent[i] = parent_of(qs, &qs->queues[i]);
	struct walk w = {qs, folded, parent, seen, t};
	for (size_t i = 0; i < n; i++)
		if (parent[i] < 0) {
			walk_queue(&w, i, 0);
			mark_under(&w, i);
		}
	/* Queues on a loop of parents have no top: each shows once, at the top. */
	for (size_t i = 0; i < n; i++)
		if (!seen[i]) {
			walk_queue(&w, i, 0);
			mark_under(&w, i);
		}
	free(parent);
	free(seen);
}

void xp_ql_tree_free(struct xp_ql_tree *t)
{
	free(t->rows);
	memset(t, 0, sizeof *t);
}

long xp_ql_tree_find(const struct xp_ql_tree *t, size_t qi)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->rows[i].first && t->rows[i].queue == qi)
			return (long)i;
	return -1;
}

const char *xp_ql_prefix(const struct xp_ql_row *r, bool utf8, char *buf, size_t len)
{
	size_t at = 0;
	if (!len)
		return buf;
	buf[0] = '\0';
	for (int d = 0; d < r->depth && at + 3 < len; d++) {
		buf[at++] = ' ';
		buf[at++] = ' ';
	}
	const char *mark = "  ";
	if (r->first && r->kids)
		mark = r->open ? (utf8 ? "▾ " : "- ") : (utf8 ? "▸ " : "+ ");
	snprintf(buf + at, len - at, "%s", mark);
	return buf;
}

const char *xp_ql_name_cell(const struct xp_ql_row *r, const char *name, int width, bool utf8, const char *ellipsis,
			    char *buf, size_t len)
{
	char pre[128], cut[512];
	if (!len)
		return buf;
	buf[0] = '\0';
	if (width <= 0 || !r->first)
		return buf;
	xp_ql_prefix(r, utf8, pre, sizeof pre);
	int pw = xp_draw_cols(pre);
	if (pw >= width) {
		/* Not even one column of the name: the name alone, cut. */
		snprintf(buf, len, "%s", xp_draw_cut(name, width, XP_CUT_END, ellipsis, cut, sizeof cut));
		return buf;
	}
	snprintf(buf, len, "%s%s", pre, xp_draw_cut(name, width - pw, XP_CUT_END, ellipsis, cut, sizeof cut));
	return buf;
}

/* ---- the bar ---- */

/* The cell boundary of amount a on a bar of width cells over scale s. */
static int cells(int64_t a, int64_t s, int width)
{
	if (a <= 0 || s <= 0)
		return 0;
	if (a >= s)
		return width;
	int c = (int)((a * (int64_t)width * 2 + s) / (s * 2));
	if (c < 1)
		c = 1;
	if (c > width - 1)
		c = width - 1;
	return c;
}

void xp_ql_bar_fit(int64_t used, int64_t deserved, int64_t max, int width, struct xp_ql_bar *b)
{
	memset(b, 0, sizeof *b);
	if (width <= 0)
		return;
	if (deserved < 0)
		deserved = 0;
	int64_t scale = max;
	if (max < 0) {
		scale = deserved;
		if (used > scale)
			scale = used;
	}
	if (scale <= 0) {
		/* Nothing deserved, no maximum: a bar of headroom (or of borrowing when used). */
		if (used > 0)
			b->borrowed = width;
		else
			b->headroom = width;
		return;
	}
	int64_t own = used < 0 ? 0 : used < deserved ? used : deserved;
	int c_own = cells(own, scale, width);
	int c_used = used < 0 ? 0 : cells(used, scale, width);
	int c_des = cells(deserved, scale, width);
	/* A borrowing queue's own part is its whole share. */
	if (used > deserved)
		c_own = c_des;
	if (c_used < c_own)
		c_used = c_own;
	b->used = c_own;
	b->borrowed = c_used - c_own;
	b->free = c_des > c_used ? c_des - c_used : 0;
	b->headroom = width - b->used - b->borrowed - b->free;
}

const char *xp_ql_bar_glyph(int seg, bool utf8)
{
	static const char *const u[] = {"█", "▓", "░", "·"};
	static const char *const a[] = {"#", "=", "-", "."};
	if (seg < 0 || seg > 3)
		return " ";
	return utf8 ? u[seg] : a[seg];
}

int xp_ql_bar_role(int seg)
{
	switch (seg) {
	case 0:
		return XP_ROLE_OK;
	case 1:
		return XP_ROLE_WARN;
	default:
		return XP_ROLE_DIM;
	}
}

const char *xp_ql_amounts(int64_t used, int64_t deserved, int64_t max, char *buf, size_t len)
{
	char u[72], b[32], d[32], m[32];
	if (used < 0)
		snprintf(u, sizeof u, "?");
	else if (used > deserved) {
		xp_qamount_format(deserved, d, sizeof d);
		xp_qamount_format(used - deserved, b, sizeof b);
		snprintf(u, sizeof u, "%s+%s", d, b);
	} else
		xp_qamount_format(used, u, sizeof u);
	xp_qamount_format(deserved, d, sizeof d);
	if (max < 0)
		snprintf(m, sizeof m, "-");
	else
		xp_qamount_format(max, m, sizeof m);
	snprintf(buf, len, "%s/%s/%s", u, d, m);
	return buf;
}

/* ---- the tree's columns ---- */

/* Columns the shown columns but the bar take, with one blank after each but the last. */
static int rest_width(const int w[XP_QL_C_COUNT])
{
	int used = 0, n = 0;
	for (int i = 0; i < XP_QL_C_COUNT; i++)
		if (i != XP_QL_C_BAR && w[i]) {
			used += w[i];
			n++;
		}
	return n ? used + n - 1 : 0;
}

/* Takes up to what is missing for the bar from column i, down to min. */
static void shrink(int w[XP_QL_C_COUNT], int i, int min, int avail)
{
	int bar = avail - rest_width(w) - 1;
	int take = w[i] - min, need = XP_QL_BAR_MIN - bar;
	if (need <= 0 || take <= 0)
		return;
	w[i] -= take < need ? take : need;
}

void xp_ql_cols_fit(const int want[XP_QL_C_COUNT], int avail, struct xp_ql_cols *c)
{
	int w[XP_QL_C_COUNT];
	for (int i = 0; i < XP_QL_C_COUNT; i++)
		w[i] = want[i] > 0 ? want[i] : 0;
	w[XP_QL_C_PEND] = 4;
	w[XP_QL_C_RUN] = 4;
	w[XP_QL_C_BAR] = 0;
	int name_min = w[XP_QL_C_NAME] < XP_QL_NAME_MIN ? w[XP_QL_C_NAME] : XP_QL_NAME_MIN;
	int label_min = w[XP_QL_C_LABEL] < XP_QL_LABEL_MIN ? w[XP_QL_C_LABEL] : XP_QL_LABEL_MIN;
	shrink(w, XP_QL_C_NAME, name_min, avail);
	shrink(w, XP_QL_C_LABEL, label_min, avail);
	if (avail - rest_width(w) - 1 < XP_QL_BAR_MIN)
		w[XP_QL_C_WEIGHT] = 0;
	int bar = avail - rest_width(w) - 1;
	if (bar < XP_QL_BAR_MIN) {
		/* No bar (nor its blank); the numbers go too when the rest still does not fit. */
		bar = 0;
		if (rest_width(w) > avail)
			w[XP_QL_C_AMOUNTS] = 0;
	}
	w[XP_QL_C_BAR] = bar > XP_QL_BAR_MAX ? XP_QL_BAR_MAX : bar;
	int x = 0;
	for (int i = 0; i < XP_QL_C_COUNT; i++) {
		c->x[i] = x;
		c->w[i] = w[i];
		if (w[i])
			x += w[i] + 1;
	}
}

/* ---- the job list ---- */

int64_t xp_ql_wait(const struct xp_qjob *j, int64_t now)
{
	if (j->submit < 0)
		return -1;
	if (j->state == XP_JS_PENDING || j->state == XP_JS_HELD || j->state == XP_JS_PREEMPTED)
		return now >= j->submit ? now - j->submit : 0;
	if (j->start >= 0)
		return j->start >= j->submit ? j->start - j->submit : 0;
	return -1;
}

const char *xp_ql_position(const struct xp_qjob *j, char *buf, size_t len)
{
	if (!j->pos_queue)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%zu/%zu", j->pos_queue, j->pos_global);
	return buf;
}

const char *xp_ql_reason(const struct xp_qjob *j, char *buf, size_t len)
{
	if (j->reason == XP_R_NONE) {
		snprintf(buf, len, "-");
		return buf;
	}
	const char *name = xp_reason_name(j->reason);
	if (j->reason_text && *j->reason_text)
		snprintf(buf, len, "%s: %s", name ? name : "?", j->reason_text);
	else
		snprintf(buf, len, "%s", name ? name : "?");
	return buf;
}

static int cmp64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

int xp_ql_job_cmp(const struct xp_qjob *a, const struct xp_qjob *b, int col, int64_t now)
{
	int r = 0;
	switch (col) {
	case XP_QL_J_STATE:
		r = cmp64(a->state, b->state);
		break;
	case XP_QL_J_WAIT:
		r = cmp64(xp_ql_wait(a, now), xp_ql_wait(b, now));
		break;
	case XP_QL_J_PRIO:
		r = cmp64(a->priority, b->priority);
		break;
	case XP_QL_J_POS: {
		/* Not pending (0) goes after every position. */
		uint64_t pa = a->pos_queue ? a->pos_queue : UINT64_MAX, pb = b->pos_queue ? b->pos_queue : UINT64_MAX;
		r = (pa > pb) - (pa < pb);
		break;
	}
	case XP_QL_J_REASON:
		r = cmp64(a->reason, b->reason);
		if (!r)
			r = strcmp(a->reason_text ? a->reason_text : "", b->reason_text ? b->reason_text : "");
		break;
	default:
		break;
	}
	return r ? r : cmp64(a->id, b->id);
}

/* ---- the what-if panel ---- */

const char *xp_ql_whatif_line(const char *queue, int name_w, int64_t base_p50, int64_t base_p95, int64_t scen_p50,
			      int64_t scen_p95, bool utf8, char *buf, size_t len)
{
	char b50[24], b95[24], s50[24], s95[24];
	const char *arrow = utf8 ? "→" : "->";
	snprintf(buf, len, "%-*s  p50 %s %s %s  p95 %s %s %s", name_w, queue, xp_fmt_span(b50, sizeof b50, base_p50),
		 arrow, xp_fmt_span(s50, sizeof s50, scen_p50), xp_fmt_span(b95, sizeof b95, base_p95), arrow,
		 xp_fmt_span(s95, sizeof s95, scen_p95));
	return buf;
}
