/* check_layout.c: the topology map's pure layout (ui/map_layout.c): row list by
 * location with filtering, device cells with affinity groups and "+N" overflow,
 * scroll clamping, and the short text columns; on built clusters and on a real
 * hwloc fixture. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "local/local.h"
#include "map_layout.h"
#include "model.h"
#include "suitelib.h"
#include "testlib.h"
#include "theme.h"

/* ---- helpers ---- */

static struct xp_node *loc_node(const char *name, const char *zone, const char *rack, const char *sw, int ndev)
{
	struct xp_node *n = xp_node_new(name);
	n->zone = zone ? strdup(zone) : NULL;
	n->rack = rack ? strdup(rack) : NULL;
	n->sw = sw ? strdup(sw) : NULL;
	for (int i = 0; i < ndev; i++)
		xp_node_add_device(n);
	return n;
}

/* A node with devices in the affinity groups given one letter each ('-' for none). */
static struct xp_node *group_node(const char *groups)
{
	struct xp_node *n = xp_node_new("g");
	for (const char *p = groups; *p; p++) {
		struct xp_device *d = xp_node_add_device(n);
		if (*p != '-') {
			char g[16];
			snprintf(g, sizeof g, "hccs:%c", *p);
			d->affinity_group = strdup(g);
		}
	}
	return n;
}

static const char *cells_str(const struct xp_node *n, int width, struct xp_cells *c)
{
	xp_map_cells(n, &xp_glyphs_ascii, width, c);
	return c->text;
}

/* Which rows the list holds, as "G0 n4 G1 n2 ...". */
static const char *rows_str(const struct xp_map_rows *r, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; i < r->n; i++) {
		size_t used = strlen(buf);
		snprintf(buf + used, len - used, "%s%c%zu", i ? " " : "", r->rows[i].kind == XP_MAP_GROUP ? 'G' : 'n',
			 r->rows[i].index);
	}
	return buf;
}

/* ---- row list ---- */

static struct xp_cluster *mixed_cluster(void)
{
	struct xp_cluster *c = xp_cluster_new();
	xp_cluster_add(c, loc_node("n0", "z1", "r10", "s1", 8));
	xp_cluster_add(c, loc_node("n1", NULL, NULL, NULL, 2));
	xp_cluster_add(c, loc_node("n2", "z1", "r2", "s1", 4));
	xp_cluster_add(c, loc_node("n3", "z1", "r10", "s1", 8));
	xp_cluster_add(c, loc_node("n4", "z0", NULL, NULL, 1));
	xp_cluster_add(c, loc_node("n5", NULL, NULL, NULL, 0));
	return c;
}

START_TEST(test_rows_grouped)
{
	struct xp_cluster *c = mixed_cluster();
	struct xp_map_rows r = {0};
	char buf[256];
	xp_map_rows_build(&r, c, NULL, NULL);
	/* z0 before z1; rack r2 before r10 (natural order); no location last; cluster order inside. */
	ck_assert_str_eq(rows_str(&r, buf, sizeof buf), "G0 n4 G1 n2 G2 n0 n3 G3 n1 n5");
	ck_assert_uint_eq(r.n_groups, 4);
	ck_assert_uint_eq(r.n_nodes, 6);
	ck_assert_str_eq(xp_map_group_label(&r.groups[0], buf, sizeof buf), "zone z0 / rack - / switch -");
	ck_assert_str_eq(xp_map_group_label(&r.groups[2], buf, sizeof buf), "zone z1 / rack r10 / switch s1");
	ck_assert_str_eq(xp_map_group_label(&r.groups[3], buf, sizeof buf), "(no location)");
	ck_assert_uint_eq(r.groups[2].n_nodes, 2);
	ck_assert_uint_eq(r.groups[2].n_devices, 16);
	ck_assert_uint_eq(r.groups[3].n_devices, 2);
	ck_assert_uint_eq(r.groups[3].n_total, 2);
	/* Building again replaces the rows rather than appending. */
	xp_map_rows_build(&r, c, NULL, NULL);
	ck_assert_uint_eq(r.n, 10);
	xp_map_rows_free(&r);
	ck_assert_ptr_null(r.rows);
	xp_cluster_free(c);
}
END_TEST

START_TEST(test_rows_sorted_input)
{
	/* Already grouped input takes the no-sort path: the result must be the same shape. */
	struct xp_cluster *c = xp_cluster_new();
	xp_cluster_add(c, loc_node("a", "z", "r1", "s", 1));
	xp_cluster_add(c, loc_node("b", "z", "r1", "s", 1));
	xp_cluster_add(c, loc_node("c", "z", "r2", "s", 1));
	xp_cluster_add(c, loc_node("d", NULL, NULL, NULL, 1));
	struct xp_map_rows r = {0};
	char buf[128];
	xp_map_rows_build(&r, c, NULL, NULL);
	ck_assert_str_eq(rows_str(&r, buf, sizeof buf), "G0 n0 n1 G1 n2 G2 n3");
	xp_map_rows_free(&r);
	xp_cluster_free(c);
}
END_TEST

static bool name_has(const struct xp_node *n, size_t i, void *arg)
{
	(void)i;
	return strstr(n->name, arg) != NULL;
}

/* The predicate gets each node's cluster index (the view keys its search text by it). */
static bool index_even(const struct xp_node *n, size_t i, void *arg)
{
	(void)arg;
	ck_assert_int_eq(n->name[1] - '0', (int)i); /* mixed_cluster names node i "n<i>" */
	return i % 2 == 0;
}

START_TEST(test_rows_filtered)
{
	struct xp_cluster *c = mixed_cluster();
	struct xp_map_rows r = {0};
	char buf[256];
	/* Only n3 and n5: the groups they empty disappear, counts are of shown nodes. */
	xp_map_rows_build(&r, c, name_has, "3");
	ck_assert_str_eq(rows_str(&r, buf, sizeof buf), "G0 n3");
	ck_assert_uint_eq(r.groups[0].n_nodes, 1);
	ck_assert_uint_eq(r.groups[0].n_total, 2);
	ck_assert_uint_eq(r.groups[0].n_devices, 8);
	ck_assert_str_eq(xp_map_group_label(&r.groups[0], buf, sizeof buf), "zone z1 / rack r10 / switch s1");
	xp_map_rows_build(&r, c, name_has, "nothing");
	ck_assert_uint_eq(r.n, 0);
	ck_assert_uint_eq(r.n_groups, 0);
	ck_assert_uint_eq(r.n_nodes, 0);
	ck_assert_int_eq(xp_map_next_node(&r, 0, 1), -1);
	ck_assert_int_eq(xp_map_snap_node(&r, 0, 1), -1);
	xp_map_rows_build(&r, c, name_has, "n");
	ck_assert_uint_eq(r.n_nodes, 6);
	xp_map_rows_build(&r, c, index_even, NULL);
	ck_assert_str_eq(rows_str(&r, buf, sizeof buf), "G0 n4 G1 n2 G2 n0");
	/* Refiltering reuses the sorted order and gives what a full build gives. */
	xp_map_rows_refilter(&r, c, NULL, NULL);
	ck_assert_str_eq(rows_str(&r, buf, sizeof buf), "G0 n4 G1 n2 G2 n0 n3 G3 n1 n5");
	ck_assert_uint_eq(r.n_groups, 4);
	xp_map_rows_refilter(&r, c, name_has, "3");
	ck_assert_str_eq(rows_str(&r, buf, sizeof buf), "G0 n3");
	/* After the cluster grew, the old order cannot serve: a full build happens. */
	xp_cluster_add(c, loc_node("n6", "z0", NULL, NULL, 3));
	xp_map_rows_refilter(&r, c, NULL, NULL);
	ck_assert_str_eq(rows_str(&r, buf, sizeof buf), "G0 n4 n6 G1 n2 G2 n0 n3 G3 n1 n5");
	xp_map_rows_free(&r);
	/* An empty cluster and a NULL one give no rows. */
	xp_map_rows_build(&r, NULL, NULL, NULL);
	ck_assert_uint_eq(r.n, 0);
	xp_map_rows_free(&r);
	xp_cluster_free(c);
}
END_TEST

START_TEST(test_rows_navigation)
{
	struct xp_cluster *c = mixed_cluster();
	struct xp_map_rows r = {0};
	xp_map_rows_build(&r, c, NULL, NULL);
	/* Rows: G0 n4 G1 n2 G2 n0 n3 G3 n1 n5 */
	ck_assert_int_eq(xp_map_next_node(&r, 1, 1), 3);  /* over a group header */
	ck_assert_int_eq(xp_map_next_node(&r, 9, 1), 1);  /* wraps to the first node */
	ck_assert_int_eq(xp_map_next_node(&r, 1, -1), 9); /* wraps to the last */
	ck_assert_int_eq(xp_map_next_node(&r, 6, -1), 5);
	ck_assert_int_eq(xp_map_snap_node(&r, 0, 1), 1);
	ck_assert_int_eq(xp_map_snap_node(&r, 0, -1), 1); /* nothing above: look down */
	ck_assert_int_eq(xp_map_snap_node(&r, 4, -1), 3);
	ck_assert_int_eq(xp_map_snap_node(&r, 7, 1), 8);
	ck_assert_int_eq(xp_map_snap_node(&r, 100, 1), 9); /* clamped to the end */
	ck_assert_int_eq(xp_map_row_of_node(&r, 3), 6);
	ck_assert_int_eq(xp_map_row_of_node(&r, 5), 9);
	ck_assert_int_eq(xp_map_row_of_node(&r, 99), -1);
	xp_map_rows_free(&r);

	/* One node only: next is itself. */
	xp_map_rows_build(&r, c, name_has, "4");
	ck_assert_int_eq(xp_map_next_node(&r, 1, 1), 1);
	ck_assert_int_eq(xp_map_next_node(&r, 1, -1), 1);
	xp_map_rows_free(&r);
	xp_cluster_free(c);
}
END_TEST

/* 10,000 nodes x 8 devices over 250 racks, in a shuffled order: the build must sort,
 * group and filter them all (no strict timing here; the benchmark times frames). */
START_TEST(test_rows_big)
{
	struct xp_cluster *c = xp_cluster_new();
	for (int i = 0; i < 10000; i++) {
		char name[32], rack[16];
		int k = (i * 7919) % 10000; /* a permutation: racks arrive interleaved */
		snprintf(name, sizeof name, "node%05d", k);
		snprintf(rack, sizeof rack, "r%d", k / 40);
		struct xp_node *n = loc_node(name, "z", rack, "sw", 8);
		for (int d = 0; d < 8; d++) {
			char g[16];
			snprintf(g, sizeof g, "pcie:%d", d / 4);
			n->devices[d].affinity_group = strdup(g);
			n->devices[d].utilization_pct = (double)((k + d) % 101);
		}
		xp_cluster_add(c, n);
	}
	struct xp_map_rows r = {0};
	xp_map_rows_build(&r, c, NULL, NULL);
	ck_assert_uint_eq(r.n_nodes, 10000);
	ck_assert_uint_eq(r.n_groups, 250);
	ck_assert_uint_eq(r.n, 10250);
	/* Natural order: r0, r1, ..., r9, r10, ...; every group holds 40 nodes. */
	ck_assert_str_eq(r.groups[0].rack, "r0");
	ck_assert_str_eq(r.groups[10].rack, "r10");
	ck_assert_str_eq(r.groups[249].rack, "r249");
	for (size_t g = 0; g < r.n_groups; g++)
		ck_assert_uint_eq(r.groups[g].n_nodes, 40);
	/* Inside a group, cluster order (not name order). */
	ck_assert_str_eq(c->nodes[r.rows[1].index]->rack, "r0");
	for (size_t i = 2; i <= 40; i++)
		ck_assert(r.rows[i - 1].index < r.rows[i].index);

	xp_map_rows_build(&r, c, name_has, "node0999");
	ck_assert_uint_eq(r.n_nodes, 10); /* node09990..node09999 */
	ck_assert_uint_eq(r.n_groups, 1);
	ck_assert_uint_eq(r.groups[0].n_total, 40);
	struct xp_cells cells;
	const struct xp_node *one = c->nodes[r.rows[1].index];
	cells_str(one, 40, &cells);
	ck_assert_int_eq(cells.shown, 8);
	ck_assert_int_eq(cells.cols, 12);
	ck_assert_uint_eq(strlen(cells.text), 12);
	ck_assert(cells.text[0] == '[' && cells.text[5] == ']' && cells.text[6] == '[' && cells.text[11] == ']');
	/* Known utilization: each cell is its level glyph, in its utilization role. */
	ck_assert_uint_eq(cells.seg[1].off, 1);
	ck_assert_int_eq(cells.seg[1].role, xp_role_for_util(one->devices[0].utilization_pct));
	ck_assert_int_eq(cells.text[1], xp_glyphs_ascii.level[xp_glyph_level(one->devices[0].utilization_pct)][0]);
	xp_map_rows_free(&r);
	xp_cluster_free(c);
}
END_TEST

/* ---- device cells ---- */

START_TEST(test_cells_groups)
{
	struct xp_node *n = group_node("AAAABBBB");
	struct xp_cells c;
	ck_assert_str_eq(cells_str(n, 80, &c), "[----][----]");
	ck_assert_int_eq(c.cols, 12);
	ck_assert_int_eq(c.shown, 8);
	ck_assert_int_eq(c.hidden, 0);
	/* Segments: bracket, 4 cells, bracket, bracket, 4 cells, bracket. */
	ck_assert_uint_eq(c.n_seg, 12);
	ck_assert_int_eq(c.seg[0].dev, -1);
	ck_assert_int_eq(c.seg[0].role, XP_ROLE_DIM);
	ck_assert_int_eq(c.seg[1].dev, 0);
	ck_assert_int_eq(c.seg[4].dev, 3);
	ck_assert_int_eq(c.seg[5].dev, -1);
	ck_assert_int_eq(c.seg[7].dev, 4);
	ck_assert_uint_eq(c.seg[7].col, 7);
	ck_assert_uint_eq(c.seg[11].col, 11);
	xp_node_free(n);

	/* Interleaved groups gather at their first member; ungrouped devices stand alone. */
	n = group_node("ABA-B");
	ck_assert_str_eq(cells_str(n, 80, &c), "[--][--]-");
	int devs[5], k = 0;
	for (size_t i = 0; i < c.n_seg; i++)
		if (c.seg[i].dev >= 0)
			devs[k++] = c.seg[i].dev;
	ck_assert_int_eq(k, 5);
	ck_assert_int_eq(devs[0], 0);
	ck_assert_int_eq(devs[1], 2);
	ck_assert_int_eq(devs[2], 1);
	ck_assert_int_eq(devs[3], 4);
	ck_assert_int_eq(devs[4], 3);
	xp_node_free(n);

	n = group_node("----");
	ck_assert_str_eq(cells_str(n, 80, &c), "----");
	xp_node_free(n);
	n = group_node("");
	ck_assert_str_eq(cells_str(n, 80, &c), "");
	ck_assert_int_eq(c.hidden, 0);
	xp_node_free(n);
}
END_TEST

START_TEST(test_cells_overflow)
{
	struct xp_node *n = group_node("AAAABBBB");
	struct xp_cells c;
	ck_assert_str_eq(cells_str(n, 12, &c), "[----][----]");
	ck_assert_int_eq(c.hidden, 0);
	/* One column short: the second group is cut and closed, the rest counted. */
	ck_assert_str_eq(cells_str(n, 11, &c), "[----][-]+3");
	ck_assert_int_eq(c.cols, 11);
	ck_assert_int_eq(c.shown, 5);
	ck_assert_int_eq(c.hidden, 3);
	ck_assert_int_eq(c.seg[c.n_seg - 1].dev, -1);
	ck_assert_int_eq(c.seg[c.n_seg - 1].role, XP_ROLE_DIM);
	ck_assert_str_eq(cells_str(n, 9, &c), "[----]+4");
	ck_assert_str_eq(cells_str(n, 6, &c), "[--]+6");
	ck_assert_str_eq(cells_str(n, 2, &c), "+8");
	ck_assert_int_eq(c.shown, 0);
	ck_assert_str_eq(cells_str(n, 1, &c), "");
	ck_assert_int_eq(c.hidden, 8);
	ck_assert_str_eq(cells_str(n, 0, &c), "");
	ck_assert_str_eq(cells_str(n, -5, &c), "");
	xp_node_free(n);

	/* The "+N" shrinks as more fit: "+11" then "+9". */
	n = group_node("------------");
	ck_assert_str_eq(cells_str(n, 5, &c), "---+9");
	ck_assert_str_eq(cells_str(n, 4, &c), "-+11");
	ck_assert_str_eq(cells_str(n, 12, &c), "------------");
	ck_assert_str_eq(cells_str(n, 11, &c), "---------+3");
	xp_node_free(n);
}
END_TEST

START_TEST(test_cells_roles)
{
	struct xp_node *n = xp_node_new("r");
	for (int i = 0; i < 9; i++)
		xp_node_add_device(n);
	n->devices[0].health = XP_HEALTH_FAIL;
	n->devices[0].utilization_pct = 5; /* health wins over an idle-looking utilization */
	n->devices[1].health = XP_HEALTH_WARN;
	n->devices[2].health = XP_HEALTH_OK;
	n->devices[2].utilization_pct = 50;
	n->devices[3].health = XP_HEALTH_OK; /* utilization unknown */
	n->devices[4].utilization_pct = 100;
	/* devices[5]: nothing known */
	/* devices[6]: Slurm's GresUsed holds it, utilization not known: in use, not idle */
	n->devices[6].allocs = xp_calloc(1, sizeof *n->devices[6].allocs);
	n->devices[6].n_allocs = 1;
	/* devices[7]: held, and its utilization known: the utilization says it */
	n->devices[7].allocs = xp_calloc(1, sizeof *n->devices[7].allocs);
	n->devices[7].n_allocs = 1;
	n->devices[7].utilization_pct = 0;
	/* devices[8]: a healthy GPU in MIG mode with an idle instance (an allocation without an
	 * owner; MIG mode reports no utilization): not in use */
	n->devices[8].health = XP_HEALTH_OK;
	n->devices[8].allocs = xp_calloc(1, sizeof *n->devices[8].allocs);
	n->devices[8].allocs[0].slice = xp_strdup("1g.10gb");
	n->devices[8].n_allocs = 1;
	struct xp_cells c;
	const struct xp_glyphs *g = &xp_glyphs_ascii;
	char want[32];
	/* healthy with utilization unknown and nothing known are two glyphs, not one in two colours */
	snprintf(want, sizeof want, "%s%s%s%s%s%s%s%s%s", g->fail, g->warn, g->level[xp_glyph_level(50)], g->unknown,
		 g->level[8], g->nohealth, g->held, g->level[0], g->unknown);
	ck_assert_str_eq(cells_str(n, 80, &c), want);
	ck_assert_uint_eq(c.n_seg, 9);
	ck_assert_int_eq(c.seg[6].role, XP_ROLE_UTIL_80);
	ck_assert_int_eq(c.seg[0].role, XP_ROLE_FAIL);
	ck_assert_int_eq(c.seg[1].role, XP_ROLE_WARN);
	ck_assert_int_eq(c.seg[2].role, xp_role_for_util(50));
	ck_assert_int_eq(c.seg[2].role, XP_ROLE_UTIL_40);
	ck_assert_int_eq(c.seg[3].role, XP_ROLE_OK);
	ck_assert_int_eq(c.seg[4].role, XP_ROLE_UTIL_80);
	ck_assert_int_eq(c.seg[5].role, XP_ROLE_DIM);

	/* The UTF-8 set: one column per cell although each glyph takes several bytes. */
	xp_map_cells(n, &xp_glyphs_utf8, 80, &c);
	ck_assert_int_eq(c.cols, 9);
	ck_assert_uint_eq(c.seg[5].col, 5);
	ck_assert_int_eq(strncmp(c.text + c.seg[3].off, xp_glyphs_utf8.unknown, c.seg[3].len), 0);
	ck_assert_int_eq(strncmp(c.text + c.seg[5].off, xp_glyphs_utf8.nohealth, c.seg[5].len), 0);
	ck_assert_int_eq(strncmp(c.text + c.seg[6].off, xp_glyphs_utf8.held, c.seg[6].len), 0);
	ck_assert_uint_eq(c.seg[7].col, 7);
	xp_node_free(n);
}
END_TEST

/* More devices than the small-buffer path holds: the order must still gather groups. */
START_TEST(test_dev_order_many)
{
	struct xp_node *n = xp_node_new("many");
	for (int i = 0; i < 100; i++) {
		struct xp_device *d = xp_node_add_device(n);
		d->affinity_group = strdup(i % 2 ? "pcie:B" : "pcie:A");
	}
	int order[100], grp[100];
	xp_map_dev_order(n, order, grp);
	for (int i = 0; i < 50; i++) {
		ck_assert_int_eq(order[i], 2 * i);
		ck_assert_int_eq(grp[i], 0);
		ck_assert_int_eq(order[50 + i], 2 * i + 1);
		ck_assert_int_eq(grp[50 + i], 1);
	}
	struct xp_cells c;
	cells_str(n, 30, &c);
	ck_assert_int_eq(c.cols, 30);
	ck_assert_int_eq(c.shown, 25);
	ck_assert_str_eq(c.text + strlen(c.text) - 4, "]+75");
	xp_node_free(n);
}
END_TEST

/* ---- scrolling ---- */

START_TEST(test_scroll)
{
	ck_assert_uint_eq(xp_scroll_top(0, 0, 10, 100), 0);
	ck_assert_uint_eq(xp_scroll_top(0, 9, 10, 100), 0);
	ck_assert_uint_eq(xp_scroll_top(0, 10, 10, 100), 1);  /* one past the window: move by one */
	ck_assert_uint_eq(xp_scroll_top(0, 15, 10, 100), 6);
	ck_assert_uint_eq(xp_scroll_top(50, 45, 10, 100), 45); /* cursor above: it becomes the top */
	ck_assert_uint_eq(xp_scroll_top(50, 55, 10, 100), 50); /* inside: no move */
	ck_assert_uint_eq(xp_scroll_top(95, 99, 10, 100), 90); /* no blank rows below the last */
	ck_assert_uint_eq(xp_scroll_top(40, 3, 10, 5), 0);    /* fewer rows than the window */
	ck_assert_uint_eq(xp_scroll_top(7, 200, 10, 100), 90); /* cursor past the end is clamped */
	ck_assert_uint_eq(xp_scroll_top(5, 5, 0, 100), 0);
	ck_assert_uint_eq(xp_scroll_top(5, 5, 10, 0), 0);

	ck_assert_uint_eq(xp_scroll_move(0, -1, 10), 0);
	ck_assert_uint_eq(xp_scroll_move(9, 1, 10), 9);
	ck_assert_uint_eq(xp_scroll_move(5, -100, 10), 0);
	ck_assert_uint_eq(xp_scroll_move(5, 100, 10), 9);
	ck_assert_uint_eq(xp_scroll_move(5, 2, 10), 7);
	ck_assert_uint_eq(xp_scroll_move(3, 1, 0), 0);

	ck_assert_uint_eq(xp_scroll_page(0, 10, 100, 1), 10);
	ck_assert_uint_eq(xp_scroll_page(95, 10, 100, 1), 99);
	ck_assert_uint_eq(xp_scroll_page(5, 10, 100, -1), 0);
	ck_assert_uint_eq(xp_scroll_page(50, 10, 100, -1), 40);
	ck_assert_uint_eq(xp_scroll_page(50, 0, 100, 1), 51); /* a zero-row window still moves */
	ck_assert_uint_eq(xp_scroll_page(0, 10, 0, 1), 0);
}
END_TEST

/* ---- text columns ---- */

START_TEST(test_text_columns)
{
	char buf[64];
	struct xp_node *n = xp_node_new("t");
	/* No topology: one "-" (memory alone when it is known), not "-c/-t -N -". */
	ck_assert_str_eq(xp_map_cpu_summary(n, buf, sizeof buf), "-");
	n->memory_mib = 65507;
	ck_assert_str_eq(xp_map_cpu_summary(n, buf, sizeof buf), "64G");
	n->memory_mib = -1;
	n->cores = 16;
	n->pus = 32;
	n->memory_mib = 65507;
	xp_node_add_numa(n);
	xp_node_add_numa(n);
	ck_assert_str_eq(xp_map_cpu_summary(n, buf, sizeof buf), "16c/32t 2N 64G");
	n->memory_mib = 512;
	ck_assert_str_eq(xp_map_cpu_summary(n, buf, sizeof buf), "16c/32t 2N 512M");
	n->memory_mib = 2LL * 1024 * 1024;
	ck_assert_str_eq(xp_map_cpu_summary(n, buf, sizeof buf), "16c/32t 2N 2.0T");

	ck_assert_str_eq(xp_map_state_str(n, buf, sizeof buf), "up");
	n->state = XP_NODE_UNREACHABLE;
	n->age_s = 300;
	ck_assert_str_eq(xp_map_state_str(n, buf, sizeof buf), "unreachable 5m");
	n->state = XP_NODE_DRAINING;
	ck_assert_str_eq(xp_map_state_str(n, buf, sizeof buf), "draining");
	ck_assert_str_eq(xp_map_age(45, buf, sizeof buf), "45s");
	ck_assert_str_eq(xp_map_age(7200, buf, sizeof buf), "2h");
	ck_assert_str_eq(xp_map_age(3 * 86400 + 5, buf, sizeof buf), "3d");
	ck_assert_str_eq(xp_map_age(-4, buf, sizeof buf), "0s");

	ck_assert_int_eq(xp_map_state_role(XP_NODE_UP), XP_ROLE_OK);
	ck_assert_int_eq(xp_map_state_role(XP_NODE_DEGRADED), XP_ROLE_WARN);
	ck_assert_int_eq(xp_map_state_role(XP_NODE_DRAINING), XP_ROLE_WARN);
	ck_assert_int_eq(xp_map_state_role(XP_NODE_DOWN), XP_ROLE_FAIL);
	ck_assert_int_eq(xp_map_state_role(XP_NODE_UNREACHABLE), XP_ROLE_FAIL);
	xp_node_free(n);
}
END_TEST

/* ---- a real machine ---- */

START_TEST(test_fixture)
{
	struct xp_local_opts opts = {xp_fixture("hwloc/32em64t-2n8c2t-pci-wholeio.xml")};
	struct xp_err err;
	struct xp_node *n = xp_local_discover(&opts, &err);
	ck_assert_msg(n != NULL, "discovery failed: %s", err.msg);
	char buf[64];
	ck_assert_str_eq(xp_map_cpu_summary(n, buf, sizeof buf), "16c/32t 2N 64G");
	/* ACC0 and ACC1 each behind their own root port, ACC2 and ACC3 behind one switch port. */
	ck_assert_uint_eq(n->n_devices, 4);
	struct xp_cells c;
	ck_assert_str_eq(cells_str(n, 80, &c), "[-][-][--]");
	ck_assert_int_eq(c.seg[c.n_seg - 2].dev, 3);
	ck_assert_str_eq(cells_str(n, 9, &c), "[-][-]+2");
	ck_assert_str_eq(cells_str(n, 7, &c), "[-]+3");

	struct xp_cluster *cl = xp_cluster_new();
	xp_cluster_add(cl, n);
	struct xp_map_rows r = {0};
	xp_map_rows_build(&r, cl, NULL, NULL);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_str_eq(xp_map_group_label(&r.groups[0], buf, sizeof buf), "(no location)");
	ck_assert_uint_eq(r.groups[0].n_devices, 4);
	xp_map_rows_free(&r);
	xp_cluster_free(cl);
}
END_TEST

XP_DEFINE_SUITE(layout,
	{"rows",
	 .tests = {test_rows_grouped, test_rows_sorted_input, test_rows_filtered,
		   test_rows_navigation, test_rows_big}},
	{"cells",
	 .tests = {test_cells_groups, test_cells_overflow, test_cells_roles, test_dev_order_many}},
	{"scroll", .tests = {test_scroll, test_text_columns}},
	{"fixture", .timeout_s = 30, .tests = {test_fixture}})
