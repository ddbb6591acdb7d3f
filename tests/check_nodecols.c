/* check_nodecols.c: the node row's columns (src/cmd/node_cols.c): figures and their units,
 * unknown as "-", the order of a sort (unknown last both ways), the columns that fit 80, 120
 * and 200 columns, and the short memory and link speed formats (src/base/format.c). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "model.h"
#include "node_cols.h"
#include "suitelib.h"
#include "testlib.h"
#include "xp.h"

/* A device with the figures given (NAN or -1: not known). */
static struct xp_device *dev(struct xp_node *n, double util, int64_t used, int64_t total, double temp, double power,
			     int health)
{
	struct xp_device *d = xp_node_add_device(n);
	d->utilization_pct = util;
	d->memory_used_mib = used;
	d->memory_mib = total;
	d->temperature_c = temp;
	d->power_w = power;
	d->health = health;
	return d;
}

static const char *text(int col, const struct xp_node *n, char *buf, size_t len)
{
	struct xp_node_sum s;
	xp_node_sum(n, &s);
	return xp_ncol_text(col, n, &s, buf, len);
}

START_TEST(test_formats)
{
	char b[32];
	ck_assert_str_eq(xp_fmt_mib_short(b, sizeof b, -1), "-");
	ck_assert_str_eq(xp_fmt_mib_short(b, sizeof b, 512), "512M");
	ck_assert_str_eq(xp_fmt_mib_short(b, sizeof b, 81920), "80G");
	ck_assert_str_eq(xp_fmt_mib_short(b, sizeof b, 81559), "79.6G"); /* an H100's 80 GB */
	ck_assert_str_eq(xp_fmt_mib_short(b, sizeof b, 65535), "64G");    /* 63.999: no ".0" */
	ck_assert_str_eq(xp_fmt_mib_short(b, sizeof b, 655360), "640G");
	ck_assert_str_eq(xp_fmt_mib_short(b, sizeof b, 2 * 1024 * 1024), "2.0T");
	ck_assert_str_eq(xp_fmt_link(b, sizeof b, 400000), "400 Gb/s");
	ck_assert_str_eq(xp_fmt_link(b, sizeof b, 2500), "2.5 Gb/s");
	ck_assert_str_eq(xp_fmt_link(b, sizeof b, 100), "100 Mb/s");
	ck_assert_str_eq(xp_fmt_link(b, sizeof b, -1), "-");
	ck_assert_str_eq(xp_fmt_link(b, sizeof b, 0), "-");
}
END_TEST

START_TEST(test_values)
{
	struct xp_node *n = xp_node_new("gpu-01");
	dev(n, 40, 20480, 81920, 61, 300.4, XP_HEALTH_OK);
	dev(n, 60, 10240, 81920, 74.6, 250, XP_HEALTH_WARN);
	struct xp_device *held = dev(n, XP_NA, -1, 81920, XP_NA, XP_NA, XP_HEALTH_UNKNOWN);
	held->allocs = xp_calloc(1, sizeof *held->allocs);
	held->n_allocs = 1;
	held->allocs[0].owner = xp_strdup("job-7");
	held->allocs[0].memory_mib = -1;
	dev(n, XP_NA, -1, -1, XP_NA, XP_NA, XP_HEALTH_FAIL)->ecc_uncorrected = 3;
	n->devices[0].ecc_corrected = 12;
	char b[128];
	ck_assert_str_eq(text(XP_NCOL_NODE, n, b, sizeof b), "gpu-01");
	ck_assert_str_eq(text(XP_NCOL_STATE, n, b, sizeof b), "up");
	/* Free: not held, not failed; 2 of 4. */
	ck_assert_str_eq(text(XP_NCOL_FREE, n, b, sizeof b), "2/4");
	/* The mean of the two devices that report, not of four. */
	ck_assert_str_eq(text(XP_NCOL_UTIL, n, b, sizeof b), "50%");
	ck_assert_str_eq(text(XP_NCOL_MEM, n, b, sizeof b), "30G/240G");
	ck_assert_str_eq(text(XP_NCOL_TEMP, n, b, sizeof b), "75C");
	ck_assert_str_eq(text(XP_NCOL_POWER, n, b, sizeof b), "550W");
	ck_assert_str_eq(text(XP_NCOL_HEALTH, n, b, sizeof b), "fail");
	ck_assert_str_eq(text(XP_NCOL_ECC, n, b, sizeof b), "12/3");
	ck_assert_str_eq(text(XP_NCOL_NET, n, b, sizeof b), "-");
	struct xp_nic *c = xp_node_add_nic(n);
	c->name = xp_strdup("ib0");
	c->rdma = xp_strdup("mlx5_0");
	c->speed_mbps = 400000;
	c = xp_node_add_nic(n);
	c->name = xp_strdup("ib1");
	c->rdma = xp_strdup("mlx5_1");
	c->speed_mbps = 400000;
	c = xp_node_add_nic(n);
	c->name = xp_strdup("eth0");
	c->speed_mbps = 25000;
	ck_assert_str_eq(text(XP_NCOL_NET, n, b, sizeof b), "2x400 Gb/s");

	/* A device row: its own figures. */
	struct xp_node_sum s;
	xp_device_sum(n, &n->devices[1], &s);
	ck_assert_str_eq(xp_ncol_dev_text(XP_NCOL_NODE, n, &n->devices[1], &s, b, sizeof b), "ACC1");
	ck_assert_str_eq(xp_ncol_dev_text(XP_NCOL_UTIL, n, &n->devices[1], &s, b, sizeof b), "60%");
	ck_assert_str_eq(xp_ncol_dev_text(XP_NCOL_MEM, n, &n->devices[1], &s, b, sizeof b), "10G/80G");
	ck_assert_str_eq(xp_ncol_dev_text(XP_NCOL_HEALTH, n, &n->devices[1], &s, b, sizeof b), "warn");
	xp_device_sum(n, &n->devices[2], &s);
	ck_assert_str_eq(xp_ncol_dev_text(XP_NCOL_STATE, n, &n->devices[2], &s, b, sizeof b), "job-7");
	ck_assert_str_eq(xp_ncol_dev_text(XP_NCOL_TEMP, n, &n->devices[2], &s, b, sizeof b), "-");

	/* Nothing known: "-" everywhere, never a zero made up. */
	struct xp_node *e = xp_node_new("bare");
	dev(e, XP_NA, -1, -1, XP_NA, XP_NA, XP_HEALTH_UNKNOWN);
	for (int col = XP_NCOL_HEALTH; col < XP_NCOL_COUNT; col++)
		if (col != XP_NCOL_FREE)
			ck_assert_msg(strcmp(text(col, e, b, sizeof b), "-") == 0, "column %s: '%s'", xp_ncols[col].name, b);
	/* A down node has nothing free. */
	e->state = XP_NODE_DOWN;
	ck_assert_str_eq(text(XP_NCOL_FREE, e, b, sizeof b), "0/1");
	e->state = XP_NODE_UNREACHABLE;
	e->age_s = 300;
	ck_assert_str_eq(text(XP_NCOL_STATE, e, b, sizeof b), "unreachable 5m");
	xp_node_free(e);
	xp_node_free(n);
}
END_TEST

START_TEST(test_compare)
{
	struct xp_node *hot = xp_node_new("n10"), *cool = xp_node_new("n2"), *none = xp_node_new("n1");
	dev(hot, 90, 1, 80, 88, 700, XP_HEALTH_OK);
	dev(cool, 10, 1, 80, 40, 100, XP_HEALTH_OK);
	dev(none, XP_NA, -1, -1, XP_NA, XP_NA, XP_HEALTH_UNKNOWN);
	struct xp_node_sum sh, sc, sn;
	xp_node_sum(hot, &sh);
	xp_node_sum(cool, &sc);
	xp_node_sum(none, &sn);
	ck_assert_int_lt(xp_ncol_cmp(XP_NCOL_TEMP, false, cool, &sc, hot, &sh), 0);
	ck_assert_int_gt(xp_ncol_cmp(XP_NCOL_TEMP, true, cool, &sc, hot, &sh), 0);
	/* Not known sorts last in both directions. */
	ck_assert_int_gt(xp_ncol_cmp(XP_NCOL_TEMP, false, none, &sn, cool, &sc), 0);
	ck_assert_int_gt(xp_ncol_cmp(XP_NCOL_TEMP, true, none, &sn, hot, &sh), 0);
	/* Names in natural order: n2 before n10. */
	ck_assert_int_lt(xp_ncol_cmp(XP_NCOL_NODE, false, cool, &sc, hot, &sh), 0);
	ck_assert_int_gt(xp_ncol_cmp(XP_NCOL_NODE, true, cool, &sc, hot, &sh), 0);
	/* A tie falls back to the name: a total order. */
	ck_assert_int_lt(xp_ncol_cmp(XP_NCOL_FREE, false, cool, &sc, hot, &sh), 0);
	ck_assert_int_gt(xp_ncol_cmp(XP_NCOL_POWER, true, cool, &sc, hot, &sh), 0);
	ck_assert_int_eq(xp_ncol_find("temp"), XP_NCOL_TEMP);
	ck_assert_int_eq(xp_ncol_find("Memory"), XP_NCOL_MEM);
	ck_assert_int_eq(xp_ncol_find("tmp"), -1);
	xp_node_free(hot);
	xp_node_free(cool);
	xp_node_free(none);
}
END_TEST

static bool has(const int *cols, size_t n, int col)
{
	for (size_t i = 0; i < n; i++)
		if (cols[i] == col)
			return true;
	return false;
}

START_TEST(test_fit)
{
	/* The widths of an 8-GPU node of a sim cluster. */
	int want[XP_NCOL_COUNT] = {[XP_NCOL_NODE] = 10, [XP_NCOL_STATE] = 8, [XP_NCOL_HEALTH] = 4, [XP_NCOL_FREE] = 3,
				   [XP_NCOL_UTIL] = 3, [XP_NCOL_MEM] = 9, [XP_NCOL_TEMP] = 3, [XP_NCOL_POWER] = 5,
				   [XP_NCOL_ECC] = 4, [XP_NCOL_MODEL] = 13, [XP_NCOL_NET] = 10, [XP_NCOL_CPU] = 17};
	int cols[XP_NCOL_COUNT], w[XP_NCOL_COUNT];
	/* 80 wide (78 after the cursor margin), 12 kept for the device cells. */
	size_t n = xp_ncol_fit(want, 78, 2, 12, cols, w);
	int used = 0;
	for (size_t i = 0; i < n; i++)
		used += w[i] + (i ? 2 : 0);
	ck_assert_int_le(used + 12, 78);
	int essentials[] = {XP_NCOL_NODE, XP_NCOL_STATE, XP_NCOL_FREE, XP_NCOL_UTIL, XP_NCOL_TEMP, XP_NCOL_HEALTH};
	for (size_t i = 0; i < sizeof essentials / sizeof *essentials; i++)
		ck_assert_msg(has(cols, n, essentials[i]), "80: no %s", xp_ncols[essentials[i]].name);
	ck_assert(!has(cols, n, XP_NCOL_CPU));
	ck_assert(!has(cols, n, XP_NCOL_NET));
	/* Display order is the table's. */
	for (size_t i = 1; i < n; i++)
		ck_assert_int_lt(cols[i - 1], cols[i]);
	size_t n120 = xp_ncol_fit(want, 118, 2, 12, cols, w);
	ck_assert_uint_gt(n120, n);
	ck_assert(has(cols, n120, XP_NCOL_MEM) && has(cols, n120, XP_NCOL_POWER));
	/* 200 wide: every column, and most of the width used (no big empty area left of the cells). */
	size_t n200 = xp_ncol_fit(want, 198, 2, 12, cols, w);
	ck_assert_uint_eq(n200, XP_NCOL_COUNT);
	/* Too narrow for anything: the name still. */
	ck_assert_uint_eq(xp_ncol_fit(want, 10, 2, 12, cols, w), 1);
	ck_assert_int_eq(cols[0], XP_NCOL_NODE);
	ck_assert_int_eq(xp_ncol_width(XP_NCOL_NODE, 200), 32);
	ck_assert_int_eq(xp_ncol_width(XP_NCOL_HEALTH, 2), 6); /* the title */
}
END_TEST

START_TEST(test_groups)
{
	struct xp_node *a = xp_node_new("a"), *b = xp_node_new("b");
	a->zone = xp_strdup("z1");
	a->rack = xp_strdup("r2");
	a->sw = xp_strdup("s1");
	b->zone = xp_strdup("z1");
	b->rack = xp_strdup("r10");
	b->sw = xp_strdup("s1");
	ck_assert_int_eq(xp_node_loc_cmp(a, b, XP_GROUP_ZONE), 0);
	ck_assert_int_lt(xp_node_loc_cmp(a, b, XP_GROUP_RACK), 0); /* r2 before r10 */
	ck_assert_int_eq(xp_node_loc_cmp(a, b, XP_GROUP_NONE), 0);
	char buf[128];
	ck_assert_str_eq(xp_group_label(a, XP_GROUP_RACK, buf, sizeof buf), "zone z1 / rack r2");
	ck_assert_str_eq(xp_group_label(a, XP_GROUP_ZONE, buf, sizeof buf), "zone z1");
	ck_assert_str_eq(xp_group_label(a, XP_GROUP_SWITCH, buf, sizeof buf), "zone z1 / rack r2 / switch s1");
	ck_assert_int_eq(xp_group_parse("rack"), XP_GROUP_RACK);
	ck_assert_int_eq(xp_group_parse("row"), -1);
	xp_node_free(a);
	xp_node_free(b);
}
END_TEST

XP_DEFINE_SUITE(nodecols,
	{"columns", .tests = {test_formats, test_values, test_compare, test_fit, test_groups}})
