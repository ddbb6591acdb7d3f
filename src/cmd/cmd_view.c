/* cmd_view.c: views as command strings. `xpool view NAME [--filter EXPR] [--sort COL[-]]
 * [--group G] [--mode expanded] [--select NODE]` switches the console to that view (at the `:`
 * prompt) or, without a console, prints the rows view 1 would show as text or JSON; `xpool
 * bookmark` (cmd_bookmark.c) names such strings in the user's config. One table for the prompt,
 * the command line and batch scripts, as every command. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "words.h"
#include "filter.h"
#include "node_cols.h"
#include "node_filter.h"
#include "table.h"

/* The options of a view, in the order they are applied: the filter first, the selection last
 * (it looks for its node in rows the others made). */
static const struct xp_opt view_opts[] = {
	XP_NODE_FILTER_OPT,
	{"sort", 0, "COL[-]", "sort by a column (node, state, health, free, util, mem, temp, power, ecc, model, net, cpu); - descending"},
	{"group", 0, "G", "group by none, zone, rack or switch (the default)"},
	{"mode", 0, "MODE", "expanded: a row per device under each node; compact: one per node"},
	{"metric", 0, "M", "the metric a view shows (views that have one, as the fleet heatmap)"},
	{"select", 0, "NODE", "put the cursor on NODE (console)"},
	{NULL, 0, NULL, NULL},
};

/* ---- batch: the rows of view 1 ---- */

struct rows_ctx {
	const struct xp_cluster *c;
	const struct xp_node_sum *sums;
	int group, sort;
	bool desc;
};

static int row_cmp(const void *pa, const void *pb, void *arg)
{
	const struct rows_ctx *r = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c = xp_node_loc_cmp(r->c->nodes[a], r->c->nodes[b], r->group);
	if (!c && r->sort >= 0)
		c = xp_ncol_cmp(r->sort, r->desc, r->c->nodes[a], &r->sums[a], r->c->nodes[b], &r->sums[b]);
	return c ? c : (a > b) - (a < b);
}

static json_t *num_or_null(double v)
{
	return XP_HAS(v) ? json_real(v) : json_null();
}

static json_t *int_or_null(int64_t v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

/* The figures of a row (node or device) as JSON: numbers in their units, null when not known. */
static json_t *sum_json(const struct xp_node_sum *s)
{
	return json_pack("{s:o, s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "health",
			 s->health == XP_HEALTH_UNKNOWN ? json_null() : json_string(xp_health_name(s->health)), "free",
			 s->n_free, "devices", s->n_dev, "util_pct", num_or_null(s->util), "mem_used_mib",
			 int_or_null(s->mem_used), "mem_total_mib", int_or_null(s->mem_total), "temp_c",
			 num_or_null(s->temp), "power_w", num_or_null(s->power), "ecc_corrected", int_or_null(s->ecc_corr),
			 "ecc_uncorrected", int_or_null(s->ecc_uncorr));
}

static json_t *node_json(const struct xp_node *n, const struct xp_node_sum *s, bool expanded)
{
	char buf[256];
	json_t *o = sum_json(s);
	json_object_set_new(o, "node", json_string(n->name));
	json_object_set_new(o, "state", json_string(xp_node_state_name(n->state)));
	json_object_set_new(o, "model", json_string(xp_ncol_text(XP_NCOL_MODEL, n, s, buf, sizeof buf)));
	json_object_set_new(o, "net", json_string(xp_ncol_text(XP_NCOL_NET, n, s, buf, sizeof buf)));
	json_object_set_new(o, "cpu", json_string(xp_ncol_text(XP_NCOL_CPU, n, s, buf, sizeof buf)));
	if (expanded) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n->n_devices; i++) {
			const struct xp_device *d = &n->devices[i];
			struct xp_node_sum ds;
			xp_device_sum(n, d, &ds);
			json_t *dj = sum_json(&ds);
			json_object_del(dj, "devices");
			json_object_set_new(dj, "index", json_integer(d->index));
			json_object_set_new(dj, "model", d->model ? json_string(d->model) : json_null());
			json_object_set_new(dj, "bus_id", d->pci_bus_id ? json_string(d->pci_bus_id) : json_null());
			json_array_append_new(arr, dj);
		}
		json_object_set_new(o, "device_rows", arr);
	}
	return o;
}

/* Adds a node's figures to a group's (the heading's totals). */
static void total_add(struct xp_node_sum *t, const struct xp_node_sum *s)
{
	t->n_dev += s->n_dev;
	t->n_free += s->n_free;
	if (s->n_util) {
		t->util = t->n_util ? (t->util * t->n_util + s->util * s->n_util) / (t->n_util + s->n_util) : s->util;
		t->n_util += s->n_util;
	}
	if (XP_HAS(s->temp) && (!XP_HAS(t->temp) || s->temp > t->temp))
		t->temp = s->temp;
	if (XP_HAS(s->power))
		t->power = XP_HAS(t->power) ? t->power + s->power : s->power;
}

/* One printed line: a heading (text) or the cells of a row. */
struct line {
	char *heading;
	char *cell[XP_NCOL_COUNT];
};

static void heading_text(char *buf, size_t len, const char *label, size_t nodes, const struct xp_node_sum *t)
{
	/* A label near the buffer's size (a long rack name from an inventory) leaves no room:
	 * each part is added only while the text so far fits. */
	int n = snprintf(buf, len, "%s: %zu node%s, free %d/%d", label, nodes, nodes == 1 ? "" : "s", t->n_free, t->n_dev);
	if (n >= 0 && (size_t)n < len && XP_HAS(t->util))
		n += snprintf(buf + n, len - (size_t)n, ", util %.0f%%", t->util);
	if (n >= 0 && (size_t)n < len && XP_HAS(t->temp))
		n += snprintf(buf + n, len - (size_t)n, ", max %.0fC", t->temp);
	/* As the console's headings: kilowatts from 10 kW. */
	if (n >= 0 && (size_t)n < len && XP_HAS(t->power))
		snprintf(buf + n, len - (size_t)n, t->power >= 10000 ? ", %.1f kW" : ", %.0f W",
			 t->power >= 10000 ? t->power / 1000.0 : t->power);
}

struct out {
	struct line *v;
	size_t n, cap;
};

static struct line *out_add(struct out *o)
{
	xp_grow(&o->v, sizeof *o->v, o->n, &o->cap);
	memset(&o->v[o->n], 0, sizeof o->v[o->n]);
	return &o->v[o->n++];
}

static void out_print(struct xp_ctx *ctx, struct out *o)
{
	int w[XP_NCOL_COUNT] = {0};
	for (int c = 0; c < XP_NCOL_COUNT; c++)
		w[c] = (int)strlen(xp_ncols[c].title);
	for (size_t i = 0; i < o->n; i++)
		for (int c = 0; c < XP_NCOL_COUNT && !o->v[i].heading; c++)
			if ((int)strlen(o->v[i].cell[c]) > w[c])
				w[c] = (int)strlen(o->v[i].cell[c]);
	for (int c = 0; c < XP_NCOL_COUNT; c++) {
		bool last = c + 1 == XP_NCOL_COUNT;
		/* The last column is not padded: no trailing blanks. */
		fprintf(ctx->out, "%s%*s%s", c ? "  " : "", xp_ncols[c].right ? w[c] : last ? 0 : -w[c],
			xp_ncols[c].title, last ? "\n" : "");
	}
	for (size_t i = 0; i < o->n; i++) {
		struct line *l = &o->v[i];
		if (l->heading) {
			fprintf(ctx->out, "== %s\n", l->heading);
			free(l->heading);
			continue;
		}
		for (int c = 0; c < XP_NCOL_COUNT; c++) {
			/* The last column is not padded: no trailing blanks. */
			if (c + 1 == XP_NCOL_COUNT && !xp_ncols[c].right)
				fprintf(ctx->out, "  %s\n", l->cell[c]);
			else
				fprintf(ctx->out, "%s%*s%s", c ? "  " : "", xp_ncols[c].right ? w[c] : -w[c], l->cell[c],
					c + 1 == XP_NCOL_COUNT ? "\n" : "");
			free(l->cell[c]);
		}
	}
	free(o->v);
}

/* Prints view 1's rows of the context's cluster. */
static int print_topology(struct xp_ctx *ctx, const struct xp_args *a, const char *cmdline)
{
	const char *fexpr = xp_args_get(a, "filter"), *sort = xp_args_get(a, "sort"), *group = xp_args_get(a, "group"),
		   *mode = xp_args_get(a, "mode");
	struct rows_ctx r = {NULL, NULL, XP_GROUP_SWITCH, -1, false};
	if (xp_args_has(a, "metric")) {
		xp_ctx_error(ctx, "view topology takes no --metric");
		return XP_EXIT_USAGE;
	}
	if (group && (r.group = xp_group_parse(group)) < 0) {
		xp_ctx_error(ctx, "view: --group: '%s' is not none, zone, rack or switch", group);
		return XP_EXIT_USAGE;
	}
	if (sort && *sort) {
		char name[64];
		snprintf(name, sizeof name, "%s", sort);
		size_t n = strlen(name);
		if (n && (name[n - 1] == '-' || name[n - 1] == '+')) {
			r.desc = name[n - 1] == '-';
			name[--n] = '\0';
		}
		if (strcmp(name, "none") != 0 && (r.sort = xp_ncol_find(name)) < 0) {
			xp_ctx_error(ctx, "view: --sort: unknown column '%s' (columns: node, state, health, free, util, mem, "
					  "temp, power, ecc, model, net, cpu; a trailing - sorts descending)", name);
			return XP_EXIT_USAGE;
		}
	}
	if (mode && strcmp(mode, "expanded") != 0 && strcmp(mode, "compact") != 0) {
		xp_ctx_error(ctx, "view: --mode: '%s' is not expanded or compact", mode);
		return XP_EXIT_USAGE;
	}
	bool expanded = mode && strcmp(mode, "expanded") == 0;
	struct xp_filter *f = NULL;
	if (fexpr && *fexpr && xp_node_filter_compile(ctx, a, "view", &f) < 0)
		return XP_EXIT_USAGE;
	const struct xp_cluster *c = xp_ctx_cluster(ctx);
	if (!c) {
		xp_filter_free(f);
		return XP_EXIT_ERROR;
	}
	size_t n = c->n_nodes, k = 0;
	struct xp_node_sum *sums = xp_malloc((n ? n : 1) * sizeof *sums);
	size_t *order = xp_malloc((n ? n : 1) * sizeof *order);
	for (size_t i = 0; i < n; i++) {
		xp_node_sum(c->nodes[i], &sums[i]);
		if (xp_node_filter_match(f, c->nodes[i]))
			order[k++] = i;
	}
	xp_filter_free(f);
	r.c = c;
	r.sums = sums;
	qsort_r(order, k, sizeof *order, row_cmp, &r);

	json_t *groups = ctx->json ? json_array() : NULL;
	struct out o = {0};
	char buf[512], label[512];
	for (size_t i = 0; i < k;) {
		size_t j = i + 1;
		while (j < k && xp_node_loc_cmp(c->nodes[order[i]], c->nodes[order[j]], r.group) == 0)
			j++;
		struct xp_node_sum t;
		memset(&t, 0, sizeof t);
		t.util = t.temp = t.power = XP_NA;
		for (size_t m = i; m < j; m++)
			total_add(&t, &sums[order[m]]);
		xp_group_label(c->nodes[order[i]], r.group, label, sizeof label);
		json_t *rows = groups ? json_array() : NULL;
		if (!groups && r.group != XP_GROUP_NONE) {
			heading_text(buf, sizeof buf, label, j - i, &t);
			out_add(&o)->heading = xp_strdup(buf);
		}
		for (size_t m = i; m < j; m++) {
			const struct xp_node *node = c->nodes[order[m]];
			const struct xp_node_sum *s = &sums[order[m]];
			if (rows) {
				json_array_append_new(rows, node_json(node, s, expanded));
				continue;
			}
			struct line *l = out_add(&o);
			for (int col = 0; col < XP_NCOL_COUNT; col++)
				l->cell[col] = xp_strdup(xp_ncol_text(col, node, s, buf, sizeof buf));
			for (size_t d = 0; expanded && d < node->n_devices; d++) {
				struct xp_node_sum ds;
				xp_device_sum(node, &node->devices[d], &ds);
				l = out_add(&o);
				for (int col = 0; col < XP_NCOL_COUNT; col++) {
					xp_ncol_dev_text(col, node, &node->devices[d], &ds, buf, sizeof buf);
					l->cell[col] = col == XP_NCOL_NODE ? xp_asprintf("  %s", buf) : xp_strdup(buf);
				}
			}
		}
		if (groups) {
			json_t *g = json_pack("{s:s?, s:i, s:i, s:i, s:o, s:o, s:o, s:o}", "group",
					      r.group == XP_GROUP_NONE ? NULL : label, "nodes", (json_int_t)(j - i), "free",
					      t.n_free, "devices", t.n_dev, "util_pct", num_or_null(t.util), "temp_c",
					      num_or_null(t.temp), "power_w", num_or_null(t.power), "rows", rows);
			json_array_append_new(groups, g);
		}
		i = j;
	}
	if (groups)
		xp_print_json(ctx->out, json_pack("{s:s, s:s, s:i, s:i, s:o}", "view", "topology", "command", cmdline,
						  "nodes", (json_int_t)k, "total", (json_int_t)n, "groups", groups));
	else if (k)
		out_print(ctx, &o);
	else
		fprintf(ctx->out, "no node matches\n");
	if (!groups && !k)
		free(o.v);
	free(sums);
	free(order);
	return XP_EXIT_OK;
}

/* The command string of a parsed `view` line ("topology --sort temp-"), quoting values. */
static char *view_string(const struct xp_args *a)
{
	char *s = xp_strdup(a->argv[0]);
	for (const struct xp_opt *o = view_opts; o->name; o++) {
		const char *v = xp_args_get(a, o->name);
		if (!v)
			continue;
		char *q = strcmp(o->name, "filter") == 0 ? xp_cmd_quote_always(v) : xp_cmd_quote(v);
		char *t = xp_asprintf("%s --%s %s", s, o->name, q);
		free(q);
		free(s);
		s = t;
	}
	return s;
}

static int view_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	const char *name = a->argv[0];
	if (ctx->ui_view) {
		const char *keys[XP_CMD_MAX_OPTS], *vals[XP_CMD_MAX_OPTS];
		size_t n = 0;
		for (const struct xp_opt *o = view_opts; o->name; o++) {
			const char *v = xp_args_get(a, o->name);
			if (v) {
				keys[n] = o->name;
				vals[n++] = v;
			}
		}
		struct xp_err err = {{0}};
		if (ctx->ui_view(ctx, name, keys, vals, n, &err) < 0) {
			xp_ctx_error(ctx, "view: %s", err.msg);
			return XP_EXIT_USAGE;
		}
		return XP_EXIT_OK;
	}
	if (strcmp(name, "topology") != 0 && strcmp(name, "1") != 0) {
		xp_ctx_error(ctx, "view: %s has no batch form (outside the console: topology)", name);
		return XP_EXIT_USAGE;
	}
	char *s = view_string(a);
	int rc = print_topology(ctx, a, s);
	free(s);
	return rc;
}

static size_t view_names(char ***values)
{
	*values = NULL;
	size_t n = 0;
	static const char *const names[] = {"topology", "queues", "placement", "validation", "events",
					    "problems", "agents", "fleet", "processes"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		xp_strv_add(values, &n, names[i]);
	return n;
}

const struct xp_cmd_entry xp_cmd_view_entry = {
	.name = "view",
	.alias = NULL,
	.usage = "NAME [--filter EXPR] [--sort COL[-]] [--group G] [--mode expanded] [--select NODE]",
	.summary = "show a view (console), or print view 1's rows (topology) as text or JSON",
	.opts = view_opts,
	.min_args = 1,
	.max_args = 1,
	.exec = view_exec,
	.json = true,
	.arg_values = view_names,
};
