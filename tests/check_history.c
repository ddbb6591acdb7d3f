/* check_history.c: the per-device history rings (tiers, series, quantization, edge cases) and
 * the sparkline and graph renderers. */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_client.h"
#include "dev_graph.h"
#include "history.h"
#include "history_json.h"
#include "model.h"
#include "spark.h"
#include "store.h"
#include "store_history.h"
#include "suitelib.h"
#include "testlib.h"
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
	/* The finest tier spans 30 x 2 s: a minute window holds only that tier's samples. */
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
	ck_assert_uint_gt(xp_history_bytes(h), 3000 * 500);
	/* An unreachable node's last report is not a sample of now. */
	c->nodes[0]->state = XP_NODE_UNREACHABLE;
	xp_history_feed(h, c, now + 5);
	ck_assert_uint_eq(xp_history_series(h, "gpu-1", 3, XP_HIST_UTIL, 60, now + 5, out, 60), 5);
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
	/* A sample a year ahead (a skewed or hostile agent) is dropped: the refreshes after it
	 * still land. */
	xp_history_add(h, "a", 0, now - 600 + 365 * 86400, v);
	xp_history_feed(h, c, now - 598);
	ck_assert_uint_eq(xp_history_series(h, "a", 0, XP_HIST_UTIL, 60, now - 598, out, 30), 2);
	ck_assert(xp_history_last(h, "a", 0, XP_HIST_UTIL, now - 598) == 70);
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

/* A node of n devices whose metrics are base + device index. */
static struct xp_node *node_with(const char *name, int n, double base)
{
	struct xp_node *nd = xp_node_new(name);
	for (int i = 0; i < n; i++) {
		struct xp_device *d = xp_node_add_device(nd);
		d->utilization_pct = base + i;
		d->memory_used_mib = (int64_t)(1000 * (base + i));
		d->temperature_c = 30 + base + i;
		d->power_w = i == 1 ? XP_NA : 100 + base + i;
		char bus[32];
		snprintf(bus, sizeof bus, "0000:%02x:00.0", 0x10 + i);
		d->pci_bus_id = xp_strdup(bus);
	}
	return nd;
}

/* An agent's ring: kept in order, bounded, sent as JSON and read back into a history. */
START_TEST(test_ring_roundtrip)
{
	struct xp_hist_ring *r = xp_hist_ring_new(10, 2); /* 5 samples */
	time_t t0 = 7000000;
	for (int k = 0; k < 8; k++) {
		struct xp_node *n = node_with("ag", 2, k * 10);
		xp_hist_ring_add(r, n, t0 + 2 * k);
		xp_node_free(n);
	}
	ck_assert_uint_eq(xp_hist_ring_count(r), 5);
	json_t *j = xp_hist_ring_json(r, t0 + 10); /* of the 5 kept (t0 + 6 on), the last 3 */
	char *txt = json_dumps(j, JSON_COMPACT);
	ck_assert_msg(strstr(txt, "\"times\":[7000010,7000012,7000014]"), "%s", txt);
	ck_assert_msg(strstr(txt, "\"power\":[null,null,null]"), "%s", txt);
	struct xp_hist_batch b;
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_hist_batch_parse(j, "ag", &b, &err), 0);
	ck_assert_uint_eq(b.n_times, 3);
	ck_assert_uint_eq(b.n_dev, 2);
	struct xp_history *h = xp_history_new(2);
	xp_hist_batch_apply(&b, h);
	double out[30];
	ck_assert_uint_eq(xp_history_series(h, "ag", 1, XP_HIST_UTIL, 60, t0 + 14, out, 30), 3);
	ck_assert(fabs(out[29] - 71) < 0.01);
	ck_assert_uint_eq(xp_history_series(h, "ag", 1, XP_HIST_POWER, 60, t0 + 14, out, 30), 0);
	xp_hist_batch_free(&b);
	xp_history_free(h);
	json_decref(j);
	free(txt);
	/* A device that appears starts the ring over: old samples would not line up. */
	struct xp_node *n3 = node_with("ag", 3, 0);
	xp_hist_ring_add(r, n3, t0 + 100);
	xp_node_free(n3);
	ck_assert_uint_eq(xp_hist_ring_count(r), 1);
	xp_hist_ring_free(r);
}
END_TEST

/* Hostile history members: each is refused with a message naming the field; nothing leaks. */
START_TEST(test_hostile_history)
{
	static const struct {
		const char *json, *err;
	} bad[] = {
		{"[]", "history: expected an object"},
		{"{\"devices\":[]}", "history.times: expected an array"},
		{"{\"times\":[1],\"devices\":{}}", "history.devices: expected an array"},
		{"{\"times\":[1,\"x\"],\"devices\":[]}", "history.times[1]: expected a time"},
		{"{\"times\":[-1],\"devices\":[]}", "history.times[0]: expected a time"},
		{"{\"times\":[5,4],\"devices\":[]}", "history.times[1]: older than"},
		{"{\"times\":[1],\"devices\":[7]}", "history.devices[0]: expected an object"},
		{"{\"times\":[1],\"devices\":[{}]}", "history.devices[0].index"},
		{"{\"times\":[1],\"devices\":[{\"index\":4096}]}", "history.devices[0].index"},
		{"{\"times\":[1],\"devices\":[{\"index\":0,\"util\":[1,2]}]}", "history.devices[0].util: expected an array of 1"},
		{"{\"times\":[1],\"devices\":[{\"index\":0,\"temp\":\"hot\"}]}", "history.devices[0].temp: expected an array"},
		{"{\"times\":[1],\"devices\":[{\"index\":0,\"mem\":[true]}]}", "history.devices[0].mem[0]: expected a number"},
		{"{\"times\":[1],\"devices\":[{\"index\":0,\"mem\":[{}]}]}", "history.devices[0].mem[0]: expected a number"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		json_error_t je;
		json_t *j = json_loads(bad[i].json, JSON_DECODE_ANY, &je);
		ck_assert_msg(j, "%s: %s", bad[i].json, je.text);
		struct xp_hist_batch b;
		struct xp_err err = {{0}};
		ck_assert_msg(xp_hist_batch_parse(j, "n", &b, &err) < 0, "%s accepted", bad[i].json);
		ck_assert_msg(strstr(err.msg, bad[i].err), "%s: %s", bad[i].json, err.msg);
		json_decref(j);
	}
	/* Huge: more times than accepted, more devices, more values (checked before reading them). */
	json_t *times = json_array(), *devs = json_array(), *dev = json_object();
	for (int i = 0; i < XP_HIST_JSON_MAX_TIMES + 1; i++)
		json_array_append_new(times, json_integer(i));
	json_object_set_new(dev, "index", json_integer(0));
	for (int i = 0; i < XP_MAX_DEVICES + 1; i++)
		json_array_append(devs, dev);
	json_t *j = json_pack("{s:O,s:O}", "times", times, "devices", devs);
	struct xp_hist_batch b;
	struct xp_err err = {{0}};
	ck_assert_int_lt(xp_hist_batch_parse(j, "n", &b, &err), 0);
	ck_assert_msg(strstr(err.msg, "samples, more than"), "%s", err.msg);
	json_array_remove(times, 0);
	json_decref(j);
	j = json_pack("{s:O,s:O}", "times", times, "devices", devs);
	ck_assert_int_lt(xp_hist_batch_parse(j, "n", &b, &err), 0);
	ck_assert_msg(strstr(err.msg, "devices, more than"), "%s", err.msg);
	json_array_remove(devs, 0);
	json_decref(j);
	j = json_pack("{s:O,s:O}", "times", times, "devices", devs);
	ck_assert_int_lt(xp_hist_batch_parse(j, "n", &b, &err), 0);
	ck_assert_msg(strstr(err.msg, "values, more than"), "%s", err.msg);
	json_decref(j);
	json_decref(times);
	json_decref(devs);
	json_decref(dev);
}
END_TEST

/* The store's samples read back: two `db snapshot`s are two samples per device in the history,
 * found by PCI bus id or ACC index; nodes the cluster does not have are left out. */
START_TEST(test_store_readback)
{
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_open(":memory:", &err);
	ck_assert_msg(s, "%s", err.msg);
	struct xp_cluster *c = xp_cluster_new();
	xp_cluster_add(c, node_with("s1", 2, 10));
	struct xp_node *nobus = node_with("s2", 1, 50);
	free(nobus->devices[0].pci_bus_id);
	nobus->devices[0].pci_bus_id = NULL; /* saved as ACC0 */
	xp_cluster_add(c, nobus);
	time_t now = time(NULL);
	ck_assert_int_eq(xp_store_snapshot(s, c, now - 120, &err), 0);
	c->nodes[0]->devices[1].utilization_pct = 90;
	ck_assert_int_eq(xp_store_snapshot(s, c, now - 60, &err), 0);
	struct xp_cluster *only = xp_cluster_new();
	xp_cluster_add(only, node_with("s1", 2, 0));
	xp_cluster_add(only, node_with("s2", 1, 0));
	free(only->nodes[1]->devices[0].pci_bus_id);
	only->nodes[1]->devices[0].pci_bus_id = NULL;
	struct xp_history *h = xp_history_new(2);
	size_t added = 0;
	ck_assert_int_eq(xp_store_history_load(s, h, only, now - 3600, &added, &err), 0);
	ck_assert_uint_eq(added, 6);
	double out[60];
	ck_assert_uint_eq(xp_history_series(h, "s1", 1, XP_HIST_UTIL, 600, now, out, 60), 2);
	ck_assert(fabs(out[59 - 6] - 90) < 0.01 || fabs(out[60 - 6] - 90) < 0.01);
	ck_assert_uint_eq(xp_history_series(h, "s2", 0, XP_HIST_TEMP, 600, now, out, 60), 2);
	/* since: only the newer snapshot. */
	struct xp_history *h2 = xp_history_new(2);
	ck_assert_int_eq(xp_store_history_load(s, h2, only, now - 90, &added, &err), 0);
	ck_assert_uint_eq(added, 3);
	/* A cluster without the nodes: nothing to place. */
	struct xp_cluster *other = xp_cluster_new();
	xp_cluster_add(other, node_with("elsewhere", 2, 0));
	ck_assert_int_eq(xp_store_history_load(s, h2, other, 0, &added, &err), 0);
	ck_assert_uint_eq(added, 0);
	xp_history_free(h);
	xp_history_free(h2);
	xp_cluster_free(c);
	xp_cluster_free(only);
	xp_cluster_free(other);
	xp_store_close(s);
}
END_TEST

/* The device graph: title with now/min/max, the scale's ends, the time axis, gaps when empty. */
START_TEST(test_dev_graph)
{
	struct xp_history *h = xp_history_new(2);
	struct xp_node *n = node_with("g", 1, 0);
	n->devices[0].memory_mib = 81920;
	time_t now = 9000000;
	for (int k = 0; k < 30; k++)
		add4(h, "g", 0, now - 58 + 2 * k, 10 + k, 1024 * k, 40, 300);
	struct xp_dev_graph g;
	xp_dev_graph_build(h, n, 0, XP_HIST_UTIL, 60, now, 60, false, &g);
	ck_assert(!g.empty);
	ck_assert_msg(strstr(g.title, "utilization, last 1 min: now 39.0 %, min 10.0 %, max 39.0 %"), "%s", g.title);
	ck_assert_str_eq(g.axis[0], "100.0 %");
	ck_assert_str_eq(g.axis[XP_DEV_GRAPH_ROWS - 1], "0.0 %");
	ck_assert_msg(strncmp(g.time_axis, "-1 min", 6) == 0 && strstr(g.time_axis, "now"), "%s", g.time_axis);
	xp_dev_graph_free(&g);
	xp_dev_graph_build(h, n, 0, XP_HIST_MEM, 600, now, 60, true, &g);
	ck_assert_str_eq(g.axis[0], "80.0 GiB");
	ck_assert_msg(strstr(g.title, "memory used, last 10 min"), "%s", g.title);
	xp_dev_graph_free(&g);
	xp_dev_graph_build(h, n, 0, XP_HIST_TEMP, 3600, now + 7200, 60, false, &g);
	ck_assert(g.empty);
	ck_assert_msg(strstr(g.title, "no samples yet"), "%s", g.title);
	xp_dev_graph_free(&g);
	xp_node_free(n);
	xp_history_free(h);
}
END_TEST

static char agdir[128];
static pid_t agpid[2];

static void agent_setup(void)
{
	snprintf(agdir, sizeof agdir, "/tmp/xpool-history-%d", (int)getpid());
	mkdir(agdir, 0755);
	agpid[0] = agpid[1] = 0;
}

static void agent_teardown(void)
{
	for (int i = 0; i < 2; i++)
		if (agpid[i] > 0) {
			kill(agpid[i], SIGKILL);
			waitpid(agpid[i], NULL, 0);
		}
	xp_rm_rf(agdir);
}

/* A real agent over loopback keeps its samples and serves them with ?history=; a console's pool
 * asks once, at the first good answer, and the samples land in its history. */
START_TEST(test_agent_history)
{
	char *rep = xp_assemble(agdir, "mi100-h", "amd/mi100-x4_rocm602.rocm-smi.json", "rocm-smi.json", NULL);
	char url[256];
	agpid[0] = xp_agent_start(url, sizeof url, "--replay", rep, "--interval", "0.2", NULL);
	ck_assert_msg(agpid[0] > 0, "agent did not start: %s", url);
	usleep(1500 * 1000); /* several discoveries */
	struct xp_agent_pool *p = xp_agent_pool_new(NULL);
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_agent_pool_add(p, url, NULL, &err), 0);
	xp_agent_pool_want_history(p, 600);
	ck_assert_uint_eq(xp_agent_pool_poll(p, true), 0);
	size_t n = 0;
	struct xp_hist_batch *b = xp_agent_pool_take_history(p, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_ge(b[0].n_times, 3);
	ck_assert_uint_eq(b[0].n_dev, 4);
	struct xp_history *h = xp_history_new(1);
	xp_hist_batch_apply(&b[0], h);
	double out[60];
	ck_assert_uint_ge(xp_history_series(h, b[0].node, 0, XP_HIST_TEMP, 60, time(NULL), out, 60), 2);
	xp_hist_batch_free(&b[0]);
	free(b);
	/* Once: the next poll asks for the node alone (a 304). */
	xp_agent_pool_poll(p, true);
	ck_assert_ptr_null(xp_agent_pool_take_history(p, &n));
	struct xp_agent_status st;
	xp_agent_pool_status(p, 0, &st);
	ck_assert_uint_eq(st.not_modified, 1);
	xp_agent_pool_free(p);
	/* A pool that does not want it gets none. */
	p = xp_agent_pool_new(NULL);
	ck_assert_int_eq(xp_agent_pool_add(p, url, NULL, &err), 0);
	xp_agent_pool_poll(p, true);
	ck_assert_ptr_null(xp_agent_pool_take_history(p, &n));
	xp_agent_pool_free(p);
	/* The agent refuses a bad window. */
	char cmd[400];
	snprintf(cmd, sizeof cmd, "%s/v1/node?history=99999", url);
	char *argv[] = {"/usr/bin/curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", cmd, NULL};
	struct xp_run r;
	xp_run_argv(&r, argv, NULL);
	ck_assert_str_eq(r.out, "400");
	xp_run_free(&r);
	xp_history_free(h);
	free(rep);
}
END_TEST

/* An agent whose history is garbage: the history is refused (logged), the node is kept. */
START_TEST(test_agent_bad_history)
{
	const char *body = "{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"fk\"}],"
			   "\"history\":{\"times\":[1,2],\"devices\":[{\"index\":0,\"util\":[1]}]}}";
	char *reply = xp_asprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
				  "Connection: close\r\n\r\n%s",
				  strlen(body), body);
	int port = 0;
	agpid[1] = xp_fake_http(&port, reply, strlen(reply));
	ck_assert_int_gt(agpid[1], 0);
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
	struct xp_agent_pool *p = xp_agent_pool_new(NULL);
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_agent_pool_add(p, url, NULL, &err), 0);
	xp_agent_pool_want_history(p, 600);
	ck_assert_uint_eq(xp_agent_pool_poll(p, true), 0);
	size_t n = 0;
	ck_assert_ptr_null(xp_agent_pool_take_history(p, &n));
	char **log = xp_agent_pool_take_log(p, &n);
	bool said = false;
	for (size_t i = 0; i < n; i++) {
		said = said || strstr(log[i], "history rejected: history.devices[0].util: expected an array of 2");
		free(log[i]);
	}
	free(log);
	ck_assert_msg(said, "no history rejected line");
	struct xp_agent_status st;
	xp_agent_pool_status(p, 0, &st);
	ck_assert(st.up);
	ck_assert_str_eq(st.node, "fk");
	xp_agent_pool_free(p);
	free(reply);
}
END_TEST

XP_DEFINE_SUITE(history,
	{"rings", .tests = {test_series_places, test_tiers, test_feed, test_clock_and_junk, test_quantize}},
	{"spark", .tests = {test_spark, test_graph, test_dev_graph}},
	{"json", .tests = {test_ring_roundtrip, test_hostile_history}},
	{"store", .tests = {test_store_readback}},
	{"agent", .setup = agent_setup, .teardown = agent_teardown, .tests = {test_agent_history, test_agent_bad_history}})
