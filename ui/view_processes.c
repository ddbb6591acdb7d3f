/* view_processes.c: view 9, the processes using the devices of every node (as nvitop and
 * k9s list them): one row per process with its node, device, pid, owner, type, device memory,
 * utilization and command; "-" for what the vendor does not say. Filtered by the `/` expression
 * (words, or its fields: mem>1G & user=alice),
 * sorted by a column (s, S; the memory and utilization columns sort largest first), the
 * cursor kept on its process across refreshes. The list is the console's list widget. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "filter.h"
#include "format.h"
#include "list.h"
#include "list_draw.h"
#include "theme.h"
#include "view.h"
#include "xp.h"

enum { COL_NODE, COL_ACC, COL_PID, COL_USER, COL_TYPE, COL_MEM, COL_UTIL, COL_CMD, N_COLS };

static const struct xp_list_col columns[N_COLS] = {
	[COL_NODE] = {.title = "NODE", .max = 32, .min = 8},
	[COL_ACC] = {.title = "ACC", .align = XP_ALIGN_RIGHT},
	[COL_PID] = {.title = "PID", .align = XP_ALIGN_RIGHT},
	[COL_USER] = {.title = "USER", .max = 16, .min = 4},
	[COL_TYPE] = {.title = "TYPE"},
	[COL_MEM] = {.title = "MEMORY", .align = XP_ALIGN_RIGHT},
	[COL_UTIL] = {.title = "UTIL", .align = XP_ALIGN_RIGHT},
	[COL_CMD] = {.title = "COMMAND", .fill = true},
};

/* Where one row's process is in the cluster the rows were built from. */
struct pref {
	size_t node, dev, proc;
};

struct procs {
	struct xp_list list;
	struct pref *refs; /* every process of the cluster, row id = index */
	size_t n_refs, cap_refs;
	size_t unknown;    /* devices whose vendor does not list processes */
	/* What the rows were built from. */
	const struct xp_cluster *c;
	uint64_t generation;
	char *filter;
	int sort_col;
	bool sort_desc;
	const struct xp_ui *ui;
	/* The process under the cursor, to find it again after a refresh. */
	char *cur_node;
	int cur_dev;
	int64_t cur_pid;
	int w_node, w_user;
};

static const struct xp_node *node_of(const struct procs *v, size_t id)
{
	return v->c->nodes[v->refs[id].node];
}

static const struct xp_device *dev_of(const struct procs *v, size_t id)
{
	return &node_of(v, id)->devices[v->refs[id].dev];
}

static const struct xp_proc *proc_of(const struct procs *v, size_t id)
{
	return &dev_of(v, id)->procs[v->refs[id].proc];
}

/* The fields of a process row for the `/` filter (`mem>1G & user=alice`, `node:gpu-0*`). */
static const struct xp_filter_field proc_fields[] = {
	{"node", false, "the node", NULL},
	{"acc", true, "the device's index in its node", NULL},
	{"pid", true, "the process id", NULL},
	{"user", false, "its owner", NULL},
	{"type", false, "C, G or C+G", NULL},
	{"mem", true, "its device memory", "MiB"},
	{"util", true, "its utilization of the device", "%"},
	{"command", false, "its command line or name", NULL},
	{NULL, false, NULL, NULL},
};

struct prow {
	const struct procs *v;
	size_t id;
};

static bool proc_get(void *row, const char *field, struct xp_fval *out)
{
	const struct prow *r = row;
	const struct xp_proc *p = proc_of(r->v, r->id);
	const char *s = NULL;
	double num = XP_NA;
	if (!strcmp(field, "node"))
		s = node_of(r->v, r->id)->name;
	else if (!strcmp(field, "acc"))
		num = dev_of(r->v, r->id)->index;
	else if (!strcmp(field, "pid"))
		num = p->pid >= 0 ? (double)p->pid : XP_NA;
	else if (!strcmp(field, "user"))
		s = p->user;
	else if (!strcmp(field, "type"))
		s = p->type[0] ? p->type : NULL;
	else if (!strcmp(field, "mem"))
		num = p->memory_mib >= 0 ? (double)p->memory_mib : XP_NA;
	else if (!strcmp(field, "util"))
		num = p->util_pct;
	else if (!strcmp(field, "command"))
		s = p->command;
	if (s) {
		*out = (struct xp_fval){XP_FV_STR, 0, s};
		return true;
	}
	if (XP_HAS(num)) {
		*out = (struct xp_fval){XP_FV_NUM, num, NULL};
		return true;
	}
	*out = (struct xp_fval){XP_FV_NONE, 0, NULL};
	return false;
}

static bool proc_matches(size_t id, void *arg)
{
	const struct procs *v = arg;
	const struct xp_proc *p = proc_of(v, id);
	char text[600];
	snprintf(text, sizeof text, "%s\n%s\n%s\n%lld", node_of(v, id)->name, p->command ? p->command : "",
		 p->user ? p->user : "", (long long)p->pid);
	struct prow r = {v, id};
	return xp_filter_eval(xp_ui_filter_expr(v->ui, proc_fields), proc_get, &r, text);
}

static int cmp_i64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

/* Unknown values sort below every known one (so that descending puts them last). */
static int cmp_num(double a, double b)
{
	if (!XP_HAS(a) || !XP_HAS(b))
		return XP_HAS(a) - XP_HAS(b);
	return (a > b) - (a < b);
}

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int proc_cmp(size_t a, size_t b, int col, void *arg)
{
	const struct procs *v = arg;
	const struct xp_proc *x = proc_of(v, a), *y = proc_of(v, b);
	switch (col) {
	case COL_NODE:
		return strcmp(node_of(v, a)->name, node_of(v, b)->name);
	case COL_ACC:
		return cmp_i64(dev_of(v, a)->index, dev_of(v, b)->index);
	case COL_PID:
		return cmp_i64(x->pid, y->pid);
	case COL_USER:
		return cmp_str(x->user, y->user);
	case COL_TYPE:
		return strcmp(x->type, y->type);
	case COL_MEM:
		return cmp_i64(x->memory_mib, y->memory_mib);
	case COL_UTIL:
		return cmp_num(x->util_pct, y->util_pct);
	default:
		return cmp_str(x->command, y->command);
	}
}

static void remember(struct procs *v)
{
	long id = xp_list_current(&v->list);
	free(v->cur_node);
	v->cur_node = NULL;
	if (id < 0)
		return;
	v->cur_node = xp_strdup(node_of(v, (size_t)id)->name);
	v->cur_dev = dev_of(v, (size_t)id)->index;
	v->cur_pid = proc_of(v, (size_t)id)->pid;
}

static void rebuild(struct procs *v, struct xp_ui *ui)
{
	const struct xp_cluster *c = xp_ui_cluster(ui);
	const char *f = xp_ui_filter(ui);
	v->ui = ui;
	v->c = c;
	v->generation = c ? c->generation : 0;
	v->n_refs = 0;
	v->unknown = 0;
	for (size_t i = 0; c && i < c->n_nodes; i++) {
		const struct xp_node *n = c->nodes[i];
		for (size_t j = 0; j < n->n_devices; j++) {
			const struct xp_device *d = &n->devices[j];
			v->unknown += !d->procs_known;
			for (size_t k = 0; k < d->n_procs; k++) {
				if (v->n_refs == v->cap_refs) {
					v->cap_refs = v->cap_refs ? v->cap_refs * 2 : 64;
					v->refs = xp_realloc(v->refs, v->cap_refs * sizeof *v->refs);
				}
				v->refs[v->n_refs++] = (struct pref){i, j, k};
			}
		}
	}
	bool typed = *f && (!v->filter || strcmp(v->filter, f) != 0);
	xp_list_filter(&v->list, v->n_refs, *f ? proc_matches : NULL, v, proc_cmp, v);
	v->w_node = v->w_user = 0;
	for (size_t i = 0; i < v->list.n; i++) {
		size_t id = v->list.rows[i];
		int w = xp_draw_cols(node_of(v, id)->name);
		if (w > v->w_node)
			v->w_node = w;
		const char *u = proc_of(v, id)->user;
		w = u ? xp_draw_cols(u) : 1;
		if (w > v->w_user)
			v->w_user = w;
	}
	/* The same process (node, device, pid) when it is still there; a new filter starts at the top. */
	v->list.cursor = 0;
	if (typed)
		v->list.top = 0;
	else if (v->cur_node)
		for (size_t i = 0; i < v->list.n; i++) {
			size_t id = v->list.rows[i];
			if (proc_of(v, id)->pid == v->cur_pid && dev_of(v, id)->index == v->cur_dev &&
			    strcmp(node_of(v, id)->name, v->cur_node) == 0) {
				xp_list_move_to(&v->list, (long)i, 1);
				break;
			}
		}
	v->sort_col = v->list.sort_col;
	v->sort_desc = v->list.sort_desc;
	free(v->filter);
	v->filter = xp_strdup(f);
	remember(v);
}

static void sync(struct procs *v, struct xp_ui *ui)
{
	const struct xp_cluster *c = xp_ui_cluster(ui);
	if (!v->filter || c != v->c || (c && c->generation != v->generation) || strcmp(v->filter, xp_ui_filter(ui)) != 0 ||
	    v->sort_col != v->list.sort_col || v->sort_desc != v->list.sort_desc)
		rebuild(v, ui);
}

struct row_ctx {
	struct procs *v;
	struct xp_list_fit fit;
	int x0, maxx;
};

static void draw_row(void *arg, WINDOW *w, int y, size_t pos, bool sel)
{
	const struct row_ctx *c = arg;
	size_t id = c->v->list.rows[pos];
	const struct xp_proc *p = proc_of(c->v, id);
	int base = sel ? XP_ROLE_SELECTED : XP_ROLE_NORMAL;
	char acc[16], pid[24], mem[32], util[16];
	snprintf(acc, sizeof acc, "%d", dev_of(c->v, id)->index);
	xp_fmt_int(pid, sizeof pid, p->pid);
	xp_fmt_mib(mem, sizeof mem, p->memory_mib);
	if (XP_HAS(p->util_pct))
		snprintf(util, sizeof util, "%.0f%%", p->util_pct);
	else
		snprintf(util, sizeof util, "-");
	const char *text[N_COLS] = {node_of(c->v, id)->name, acc, pid, p->user ? p->user : "-",
				    p->type[0] ? p->type : "-", mem, util, p->command ? p->command : "-"};
	xp_draw_fill(w, y, c->x0 - 1, c->maxx, base);
	for (size_t j = 0; j < c->fit.n; j++) {
		int role = base;
		if (!sel && ((j == COL_USER && !p->user) || (j == COL_CMD && !p->command) || (j == COL_PID && p->pid < 0) ||
			     (j == COL_TYPE && !p->type[0]) || (j == COL_MEM && p->memory_mib < 0) ||
			     (j == COL_UTIL && !XP_HAS(p->util_pct))))
			role = XP_ROLE_DIM;
		else if (!sel && j == COL_UTIL)
			role = xp_role_for_util(p->util_pct);
		xp_list_draw_cell(w, y, c->x0 + c->fit.x[j], columns[j].fill ? c->maxx : c->fit.w[j], c->maxx, role,
				  columns[j].align, text[j]);
	}
}

static void draw(void *st, struct xp_ui *ui, WINDOW *w, struct xp_rect r)
{
	struct procs *v = st;
	sync(v, ui);
	if (r.h <= 0 || r.w <= 0)
		return;
	int maxx = r.x + r.w;
	int want[N_COLS] = {[COL_NODE] = v->w_node, [COL_ACC] = 3, [COL_PID] = 7, [COL_USER] = v->w_user,
			    [COL_TYPE] = 4, [COL_MEM] = 9, [COL_UTIL] = 4};
	struct row_ctx c = {v, {{0}, {0}, 0}, r.x + 1, maxx};
	xp_list_fit(columns, want, N_COLS, r.w - 1, 2, &c.fit);
	xp_list_draw_header(w, r.y, r.x, c.x0, maxx, columns, &c.fit, &v->list, xp_ui_glyphs(ui));
	struct xp_rect body = {r.y + 1, r.x, r.h - 1, r.w};
	xp_list_frame(&v->list, body.h);
	if (body.h <= 0)
		return;
	if (!v->list.n) {
		char msg[400];
		if (v->n_refs)
			snprintf(msg, sizeof msg, " no process matches \"%s\" (Esc clears the filter)", v->filter);
		else if (v->unknown)
			snprintf(msg, sizeof msg, " no processes listed; %zu device%s do not report processes", v->unknown,
				 v->unknown == 1 ? "" : "s");
		else
			snprintf(msg, sizeof msg, " no processes on any device");
		xp_list_draw_empty(w, body, msg);
		return;
	}
	xp_list_draw_rows(&v->list, w, body, draw_row, &c);
}

/* s/S sort; the memory and utilization columns start largest first (what an operator looks for). */
static int on_key(void *st, struct xp_ui *ui, int key)
{
	struct procs *v = st;
	sync(v, ui);
	int before = v->list.sort_col;
	if (xp_list_sort_key(&v->list, key, N_COLS)) {
		if (key == 's' && v->list.sort_col != before && (v->list.sort_col == COL_MEM || v->list.sort_col == COL_UTIL))
			v->list.sort_desc = true;
		sync(v, ui);
		return XP_REACT_REDRAW;
	}
	if (!xp_list_key(&v->list, key))
		return XP_REACT_UNHANDLED;
	remember(v);
	return XP_REACT_REDRAW;
}

static int on_wheel(void *st, struct xp_ui *ui, int dir)
{
	struct procs *v = st;
	sync(v, ui);
	xp_list_wheel(&v->list, dir);
	remember(v);
	return XP_REACT_REDRAW;
}

static int on_click(void *st, struct xp_ui *ui, int y, int x)
{
	struct procs *v = st;
	(void)x;
	sync(v, ui);
	if (xp_list_click(&v->list, y - 1) == XP_LIST_MISS)
		return XP_REACT_NONE;
	remember(v);
	return XP_REACT_REDRAW;
}

static void on_data(void *st, struct xp_ui *ui)
{
	struct procs *v = st;
	/* The old cluster is gone: what the cursor was on is kept by name, not by pointer. */
	v->c = NULL;
	sync(v, ui);
}

static const char *count(void *st, char *buf, size_t len)
{
	const struct procs *v = st;
	return xp_list_count(&v->list, buf, len);
}

static const char *selected_node(void *st)
{
	const struct procs *v = st;
	return v->cur_node;
}

static const char *const sort_names[N_COLS] = {"node", "acc", "pid", "user", "type", "mem", "util", "command"};

/* `:view processes --sort mem-`: a column name, '-' for descending. */
static int set_opt(void *st, struct xp_ui *ui, const char *key, const char *value, char *err, size_t errlen)
{
	struct procs *v = st;
	if (strcmp(key, "sort") != 0) {
		snprintf(err, errlen, "processes: no option --%s (it takes --sort)", key);
		return -1;
	}
	size_t l = strlen(value);
	bool desc = l > 0 && value[l - 1] == '-';
	for (int i = 0; i < N_COLS; i++)
		if (strlen(sort_names[i]) == l - desc && strncmp(sort_names[i], value, l - desc) == 0) {
			v->list.sort_col = i;
			v->list.sort_desc = desc;
			sync(v, ui);
			return 0;
		}
	snprintf(err, errlen, "processes: --sort %s: expected node, acc, pid, user, type, mem, util or command, "
		 "'-' after it for descending", value);
	return -1;
}

static void opts(void *st, char *buf, size_t len)
{
	const struct procs *v = st;
	if (v->list.sort_col >= 0 && v->list.sort_col < N_COLS)
		snprintf(buf, len, " --sort %s%s", sort_names[v->list.sort_col], v->list.sort_desc ? "-" : "");
	else if (len)
		buf[0] = '\0';
}

static void *create(struct xp_ui *ui)
{
	(void)ui;
	struct procs *v = xp_calloc(1, sizeof *v);
	v->list = (struct xp_list)XP_LIST_INIT;
	v->sort_col = -1;
	return v;
}

static void destroy(void *st)
{
	struct procs *v = st;
	if (!v)
		return;
	xp_list_free(&v->list);
	free(v->refs);
	free(v->filter);
	free(v->cur_node);
	free(v);
}

static const struct xp_view_key keys[] = {
	{"Up/Down j/k", "move"},
	{"PgUp/PgDn Home/End", "page, first, last"},
	{"s / S", "sort by the next column (memory, util: largest first) / reverse it"},
	{"/", "filter: words in node, command, user, pid; fields node acc pid user type mem util command"},
	{NULL, NULL},
};

const struct xp_view xp_view_processes = {
	.name = "processes",
	.title = "Processes",
	.order = 9,
	.keys = keys,
	.create = create,
	.destroy = destroy,
	.draw = draw,
	.on_key = on_key,
	.on_click = on_click,
	.on_wheel = on_wheel,
	.on_data = on_data,
	.count = count,
	.selected_node = selected_node,
	.set_opt = set_opt,
	.opts = opts,
	.filter_fields = proc_fields,
};
