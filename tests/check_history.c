/* check_history.c: the per-device history rings (tiers, series, quantization, edge cases) and
 * the sparkline and graph renderers. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "history.h"
#include "model.h"
#include "spark.h"
#include "suitelib.h"
#include "xp.h"

/* A sample with every metric set. */
static void add4(struct xp_history *h, const char *node, int dev, time_t t, double u, double m, double te, double p)
{
	double v[XP_HIST_METRICS] = {u, m, te, p};
	xp_history_add(h, node, dev, t, v);
}

/* The newest sample lands in the last bucket; older ones in their place; the rest are gaps. */
START_TEST(test_series_places)
{
	struct xp_history *h = xp_history_new(2);
	time_t now = 1000000;
	add4(h, "n1", 0, now, 50, 1000, 40, 300);
	add4(h, "n1", 0, now - 30, 10, 500, 30, 100);
	double out[30];
	/* 60 s in 30 buckets of 2 s: the sample at now is the last bucket, now-30 is bucket 14. */
	ck_assert_uint_eq(xp_history_series(h, "n1", 0, XP_HIST_UTIL, 60, now, out, 30), 2);
	ck_assert(fabs(out[29] - 50) < 0.01);
	ck_assert(fabs(out[14] - 10) < 0.01);
	for (int i = 0; i < 30; i++)
		if (i != 29 && i != 14)
			ck_assert_msg(isnan(out[i]), "bucket %d is %g", i, out[i]);
	/* Other metrics, devices and nodes. */
	xp_history_series(h, "n1", 0, XP_HIST_POWER, 60, now, out, 30);
	ck_assert(fabs(out[29] - 300) < 0.5);
	ck_assert_uint_eq(xp_history_series(h, "n1", 1, XP_HIST_UTIL, 60, now, out, 30), 0);
	ck_assert_uint_eq(xp_history_series(h, "n2", 0, XP_HIST_UTIL, 60, now, out, 30), 0);
	ck_assert(isnan(out[0]) && isnan(out[29]));
	ck_assert(fabs(xp_history_last(h, "n1", 0, XP_HIST_TEMP, now) - 40) < 0.01);
	ck_assert(isnan(xp_history_last(h, "n1", 0, XP_HIST_TEMP, now + 120)));
	ck_assert_uint_eq(xp_history_devices(h), 1);
	xp_history_free(h);
}
END_TEST

/* Ten-second and one-minute buckets keep the mean; an hour of samples fits the coarse tier and
 * the finest tier forgets what is older than its ring. */
START_TEST(test_tiers)
{
	struct xp_history *h = xp_history_new(2);
	time_t t0 = 3600 * 1000; /* aligned to every tier */
	for (int s = 0; s < 3600; s += 2)
		add4(h, "n", 3, t0 + s, (s / 600) * 10, XP_NA, XP_NA, XP_NA); /* 0,10,..,50 for each 10 min */
	time_t now = t0 + 3598;
	double out[6];
	/* One hour in six buckets: each ten minutes' level. */
	ck_assert_uint_eq(xp_history_series(h, "n", 3, XP_HIST_UTIL, 3600, now, out, 6), 6);
	for (int i = 0; i < 6; i++)
		ck_assert_msg(fabs(out[i] - i * 10) < 0.6, "bucket %d: %g", i, out[i]);
	/* Ten minutes from the ten-second tier: all the last level. */
	ck_assert_uint_eq(xp_history_series(h, "n", 3, XP_HIST_UTIL, 600, now, out, 6), 6);
	for (int i = 0; i < 6; i++)
		ck_assert(fabs(out[i] - 50) < 0.01);
	/* The mean of a ten-second bucket: 0, 10, 20, 30, 40 -> 20. */
	struct xp_history *m = xp_history_new(2);
	for (int s = 0; s < 10; s += 2)
		add4(m, "n", 0, t0 + s, s * 5, XP_NA, XP_NA, XP_NA);
	double one[1];
	ck_assert_uint_eq(xp_history_series(m, "n", 0, XP_HIST_UTIL, 600, t0 + 9, one, 1), 1);
	ck_assert_msg(fabs(one[0] - 20) < 0.01, "%g", one[0]);
	/* The finest tier spans 60 x 2 s: a minute window holds only that tier's samples. */
	double fine[30];
	ck_assert_uint_eq(xp_history_series(m, "n", 0, XP_HIST_UTIL, 60, t0 + 9, fine, 30), 5);
	xp_history_free(m);
	/* After an hour of silence, nothing is left in any window. */
	ck_assert_uint_eq(xp_history_series(h, "n", 3, XP_HIST_UTIL, 3600, now + 3700, out, 6), 0);
	xp_history_free(h);
}
END_TEST

/* A feed records every device of a cluster by position; NaN and missing metrics are gaps. */
START_TEST(test_feed)
{
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *n = xp_node_new("gpu-1");
	for (int i = 0; i < 4; i++) {
		struct xp_device *d = xp_node_add_device(n);
		d->utilization_pct = 10.0 * i;
		d->memory_used_mib = i == 2 ? -1 : 1024 * i;
		d->temperature_c = i == 3 ? XP_NA : 30 + i;
		d->power_w = 100 + i;
	}
	xp_cluster_add(c, n);
	xp_cluster_add(c, xp_node_new("cpu-only"));
	struct xp_history *h = xp_history_new(1);
	time_t now = 5000000;
	for (int k = 0; k < 5; k++)
		xp_history_feed(h, c, now + k);
	ck_assert_uint_eq(xp_history_devices(h), 4);
	double out[60];
	ck_assert_uint_eq(xp_history_series(h, "gpu-1", 3, XP_HIST_UTIL, 60, now + 4, out, 60), 5);
	ck_assert(fabs(out[59] - 30) < 0.01);
	ck_assert_uint_eq(xp_history_series(h, "gpu-1", 2, XP_HIST_MEM, 60, now + 4, out, 60), 0);
	ck_assert_uint_eq(xp_history_series(h, "gpu-1", 3, XP_HIST_TEMP, 60, now + 4, out, 60), 0);
	ck_assert_uint_eq(xp_history_series(h, "gpu-1", 1, XP_HIST_MEM, 60, now + 4, out, 60), 5);
	ck_assert(fabs(out[59] - 1024) < 1);
	/* Many nodes: the table grows and every one is found again. */
	for (int i = 0; i < 3000; i++) {
		char name[32];
		snprintf(name, sizeof name, "node-%05d", i);
		add4(h, name, i % 8, now, i % 100, XP_NA, XP_NA, XP_NA);
	}
	for (int i = 0; i < 3000; i += 7) {
		char name[32];
		snprintf(name, sizeof name, "node-%05d", i);
		ck_assert(fabs(xp_history_last(h, name, i % 8, XP_HIST_UTIL, now) - i % 100) < 0.01);
	}
	ck_assert_uint_gt(xp_history_bytes(h), 3000 * 1000);
	xp_history_free(h);
	xp_cluster_free(c);
}
END_TEST

/* The clock going back: a little is placed in the past; more than a minute starts over. Samples
 * from before the ring, negative times, bad device indexes and NULL names are dropped. */
START_TEST(test_clock_and_junk)
{
	struct xp_history *h = xp_history_new(2);
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *n = xp_node_new("a");
	xp_node_add_device(n)->utilization_pct = 70;
	xp_cluster_add(c, n);
	time_t now = 2000000;
	xp_history_feed(h, c, now);
	xp_history_feed(h, c, now - 10); /* a small step back: kept */
	double out[30];
	ck_assert_uint_eq(xp_history_series(h, "a", 0, XP_HIST_UTIL, 60, now, out, 30), 2);
	xp_history_feed(h, c, now - 600); /* a big one: the past cannot be placed */
	ck_assert_uint_eq(xp_history_series(h, "a", 0, XP_HIST_UTIL, 60, now, out, 30), 0);
	ck_assert_uint_eq(xp_history_series(h, "a", 0, XP_HIST_UTIL, 60, now - 600, out, 30), 1);
	double v[XP_HIST_METRICS] = {1, 2, 3, 4};
	xp_history_add(h, "a", 0, now - 600 - 7200, v); /* older than any ring */
	ck_assert_uint_eq(xp_history_series(h, "a", 0, XP_HIST_UTIL, 3600, now - 600, out, 30), 1);
	xp_history_add(h, "a", -1, now, v);
	xp_history_add(h, "a", XP_MAX_DEVICES, now, v);
	xp_history_add(h, NULL, 0, now, v);
	xp_history_add(h, "a", 0, -5, v);
	xp_history_add(h, "a", 0, (time_t)1 << 40, v); /* beyond what 32-bit slots place */
	ck_assert_uint_eq(xp_history_devices(h), 1);
	/* Bad arguments to series: nothing, never a crash. */
	ck_assert_uint_eq(xp_history_series(h, "a", 0, 99, 60, now, out, 30), 0);
	ck_assert_uint_eq(xp_history_series(h, "a", 0, XP_HIST_UTIL, 0, now, out, 30), 0);
	ck_assert_uint_eq(xp_history_series(h, "a", 0, XP_HIST_UTIL, 60, now, out, 0), 0);
	xp_history_free(h);
	xp_cluster_free(c);
}
END_TEST

/* Quantization: small steps where it matters, huge and odd values clamped, never NA by accident. */
START_TEST(test_quantize)
{
	ck_assert(fabs(xp_hist_quantize(XP_HIST_UTIL, 33.3) - 33.5) < 1e-9);
	ck_assert(xp_hist_quantize(XP_HIST_UTIL, -4) == 0);
	ck_assert(xp_hist_quantize(XP_HIST_UTIL, 1e9) == 127);
	ck_assert(isnan(xp_hist_quantize(XP_HIST_UTIL, NAN)));
	ck_assert(xp_hist_quantize(XP_HIST_TEMP, -12.4) == -12);
	ck_assert(xp_hist_quantize(XP_HIST_TEMP, 1e300) == 214);
	ck_assert(xp_hist_quantize(XP_HIST_TEMP, -INFINITY) == -40);
	/* Memory: whole MiB to 2047, then 0.1 % whatever the size (a 288 GiB device). */
	ck_assert(xp_hist_quantize(XP_HIST_MEM, 1500) == 1500);
	for (double m = 2047; m < 1e12; m *= 1.37) {
		double q = xp_hist_quantize(XP_HIST_MEM, m);
		ck_assert_msg(fabs(q - m) / m < 0.001, "%g reads back %g", m, q);
	}
	ck_assert(fabs(xp_hist_quantize(XP_HIST_MEM, 294912) - 294912) < 300);
	ck_assert(!isnan(xp_hist_quantize(XP_HIST_MEM, 1e300)));
	ck_assert(!isnan(xp_hist_quantize(XP_HIST_POWER, INFINITY)));
	ck_assert(xp_hist_quantize(XP_HIST_POWER, -3) == 0);
	ck_assert(isnan(xp_hist_quantize(XP_HIST_POWER, NAN)));
	ck_assert(fabs(xp_hist_quantize(XP_HIST_POWER, 699.6) - 700) < 1e-9);
	ck_assert_int_eq(xp_hist_metric_parse("temp"), XP_HIST_TEMP);
	ck_assert_int_eq(xp_hist_metric_parse("nope"), -1);
	ck_assert_str_eq(xp_hist_metric_unit(XP_HIST_POWER), "W");
}
END_TEST

/* Sparklines: scaled bars, gaps as blanks, ASCII, flat series, short buffers. */
START_TEST(test_spark)
{
	double v[] = {0, 50, 100, NAN, 25};
	char buf[XP_SPARK_BYTES(5)];
	ck_assert_uint_eq(xp_spark(v, 5, 0, 100, false, buf, sizeof buf), 5);
	ck_assert_str_eq(buf, "\u2581\u2585\u2588 \u2583");
	ck_assert_uint_eq(xp_spark(v, 5, 0, 100, true, buf, sizeof buf), 5);
	ck_assert_str_eq(buf, "_-# .");
	/* Its own range when the scale is not one: 0..100 here too. */
	xp_spark(v, 5, NAN, NAN, true, buf, sizeof buf);
	ck_assert_str_eq(buf, "_-# .");
	double flat[] = {7, 7, NAN};
	xp_spark(flat, 3, NAN, NAN, false, buf, sizeof buf);
	ck_assert_str_eq(buf, "\u2585\u2585 ");
	double none[] = {NAN, NAN};
	double lo, hi;
	ck_assert(!xp_spark_range(none, 2, &lo, &hi));
	xp_spark(none, 2, NAN, NAN, false, buf, sizeof buf);
	ck_assert_str_eq(buf, "  ");
	/* A short buffer: whole glyphs only. */
	char small[5];
	ck_assert_uint_eq(xp_spark(v, 5, 0, 100, false, small, sizeof small), 1);
	ck_assert_str_eq(small, "\u2581");
	/* Values beyond the scale are clamped. */
	double out[] = {-50, 500};
	xp_spark(out, 2, 0, 100, true, buf, sizeof buf);
	ck_assert_str_eq(buf, "_#");
}
END_TEST

/* Graphs: columns filled from the bottom in eighths; a known zero still shows. */
START_TEST(test_graph)
{
	double v[] = {0, 50, 100, NAN};
	char r0[XP_SPARK_BYTES(4)], r1[XP_SPARK_BYTES(4)];
	char *rows[] = {r0, r1};
	xp_graph(v, 4, 2, 0, 100, false, rows);
	ck_assert_str_eq(r0, "  \u2588 ");
	ck_assert_str_eq(r1, "\u2581\u2588\u2588 ");
	xp_graph(v, 4, 2, 0, 100, true, rows);
	ck_assert_str_eq(r0, "  # ");
	ck_assert_str_eq(r1, ".## ");
	double q[] = {25};
	char a[XP_SPARK_BYTES(1)], b[XP_SPARK_BYTES(1)];
	char *qr[] = {a, b};
	xp_graph(q, 1, 2, 0, 100, false, qr);
	ck_assert_str_eq(a, " ");
	ck_assert_str_eq(b, "\u2584");
}
END_TEST

XP_DEFINE_SUITE(history,
	{"rings", .tests = {test_series_places, test_tiers, test_feed, test_clock_and_junk, test_quantize}},
	{"spark", .tests = {test_spark, test_graph}})
