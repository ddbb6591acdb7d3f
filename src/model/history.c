/* history.c: per-device rings in three clock-aligned tiers (history.h). */
#include "history.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bucket periods of the two coarse tiers, s (the finest is the refresh period). */
static const int coarse_period[XP_HIST_TIERS - 1] = {10, 60};

/* The byte codes (utilization, temperature) and 16-bit codes (memory, power) meaning "no sample". */
#define NA8 0xFF
#define NA16 0xFFFF

/* One slot: the four metrics side by side, so that a refresh touches one cache line per tier
 * (a metric-major layout touched four, and a feed of 80,000 devices waited on memory). */
struct slot {
	uint16_t mem, power;
	uint8_t util, temp;
};

/* One device's rings. last[k] is the newest slot number of tier k plus one (0: empty); the
 * newest bucket of each coarse tier is a running mean kept exactly in sum/cnt, so that a
 * bucket of six samples is not six roundings of roundings. */
struct dev_hist {
	uint32_t last[XP_HIST_TIERS];
	uint8_t cnt[XP_HIST_TIERS - 1][XP_HIST_METRICS];
	float sum[XP_HIST_TIERS - 1][XP_HIST_METRICS];
	struct slot b[]; /* every tier's slots, tier k from xp_history.off[k] */
};

/* One node's devices. */
struct hnode {
	char *name;
	uint32_t hash;
	uint16_t n_dev;
	char *dev; /* n_dev records of xp_history.dev_size bytes */
};

struct xp_history {
	int period[XP_HIST_TIERS];
	size_t nslot[XP_HIST_TIERS]; /* slots of each tier */
	size_t off[XP_HIST_TIERS];   /* where each tier's slots start in dev_hist.b */
	size_t dev_size;             /* bytes of one device's record */
	struct hnode *nodes; /* open addressing, cap a power of two; name NULL: free */
	size_t cap, n;
	size_t devices;
	time_t last_feed;
	uint64_t generation;
};

/* ---- quantization ---- */

static uint8_t enc8(int metric, double v)
{
	if (isnan(v))
		return NA8;
	if (metric == XP_HIST_UTIL) {
		/* Half percents, 0..127 %: a device may report a little over 100. */
		v = v < 0 ? 0 : v > 127 ? 127 : v;
		return (uint8_t)lround(v * 2);
	}
	/* Whole degrees from -40 to 214. */
	v = v < -40 ? -40 : v > 214 ? 214 : v;
	return (uint8_t)(lround(v) + 40);
}

static double dec8(int metric, uint8_t c)
{
	if (c == NA8)
		return XP_NA;
	return metric == XP_HIST_UTIL ? c / 2.0 : (double)c - 40;
}

/* A float-like code: below 2048 the whole number itself; above, 10 bits of mantissa and an
 * exponent, so memory of any size and power keep 0.1 % relative precision in 16 bits. */
static uint16_t enc16(double v)
{
	if (isnan(v))
		return NA16;
	if (v < 0)
		v = 0;
	if (v < 2047.5)
		return (uint16_t)lround(v);
	int ex;
	double f = frexp(v, &ex); /* v = f * 2^ex, f in [0.5, 1); infinity gives a huge ex */
	if (isinf(v))
		f = 0.99999, ex = INT_MAX / 2;
	long m = lround(f * 2048);
	long e = (long)ex - 11;
	if (m >= 2048)
		m = 1024, e++;
	if (e > 62 || (e == 62 && m > 2046))
		e = 62, m = 2046; /* the largest code below NA16 */
	return (uint16_t)(1024 * (e + 1) + (m - 1024));
}

static double dec16(uint16_t c)
{
	if (c == NA16)
		return XP_NA;
	if (c < 2048)
		return c;
	int e = c / 1024 - 1;
	return ldexp((double)(c % 1024 + 1024), e);
}

double xp_hist_quantize(int metric, double v)
{
	if (metric == XP_HIST_UTIL || metric == XP_HIST_TEMP)
		return dec8(metric, enc8(metric, v));
	return dec16(enc16(v));
}

static double slot_get(const struct slot *q, int metric)
{
	switch (metric) {
	case XP_HIST_UTIL:
		return dec8(metric, q->util);
	case XP_HIST_TEMP:
		return dec8(metric, q->temp);
	case XP_HIST_MEM:
		return dec16(q->mem);
	default:
		return dec16(q->power);
	}
}

static void slot_set(struct slot *q, int metric, double v)
{
	switch (metric) {
	case XP_HIST_UTIL:
		q->util = enc8(metric, v);
		break;
	case XP_HIST_TEMP:
		q->temp = enc8(metric, v);
		break;
	case XP_HIST_MEM:
		q->mem = enc16(v);
		break;
	default:
		q->power = enc16(v);
		break;
	}
}

static bool slot_empty(const struct slot *q, int metric)
{
	switch (metric) {
	case XP_HIST_UTIL:
		return q->util == NA8;
	case XP_HIST_TEMP:
		return q->temp == NA8;
	case XP_HIST_MEM:
		return q->mem == NA16;
	default:
		return q->power == NA16;
	}
}

static void slot_clear(struct slot *q)
{
	*q = (struct slot){NA16, NA16, NA8, NA8};
}

/* Tier k's slots of d. */
static struct slot *tier_slots(const struct xp_history *h, const struct dev_hist *d, int k)
{
	return (struct slot *)&d->b[h->off[k]];
}

/* Device i of a node's records. */
static struct dev_hist *dev_at(const struct xp_history *h, const char *devs, size_t i)
{
	return (struct dev_hist *)(devs + i * h->dev_size);
}

/* ---- the table ---- */

static uint32_t hash_name(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

struct xp_history *xp_history_new(int period_s)
{
	struct xp_history *h = xp_calloc(1, sizeof *h);
	h->period[0] = period_s < 1 ? 1 : period_s > 60 ? 60 : period_s;
	/* The finest tier keeps the shortest window (a minute) and no more: at 2 s, 30 slots. */
	h->nslot[0] = (size_t)((XP_HIST_FINE_SPAN + h->period[0] - 1) / h->period[0]);
	if (h->nslot[0] < 2)
		h->nslot[0] = 2;
	for (int k = 1; k < XP_HIST_TIERS; k++) {
		h->period[k] = coarse_period[k - 1];
		h->nslot[k] = XP_HIST_SLOTS;
	}
	size_t n = 0;
	for (int k = 0; k < XP_HIST_TIERS; k++) {
		h->off[k] = n;
		n += h->nslot[k];
	}
	h->dev_size = sizeof(struct dev_hist) + n * sizeof(struct slot);
	h->dev_size = (h->dev_size + _Alignof(struct dev_hist) - 1) / _Alignof(struct dev_hist) * _Alignof(struct dev_hist);
	h->cap = 64;
	h->nodes = xp_calloc(h->cap, sizeof *h->nodes);
	return h;
}

static void clear_all(struct xp_history *h)
{
	for (size_t i = 0; i < h->cap; i++) {
		free(h->nodes[i].name);
		free(h->nodes[i].dev);
	}
	memset(h->nodes, 0, h->cap * sizeof *h->nodes);
	h->n = 0;
	h->devices = 0;
}

void xp_history_free(struct xp_history *h)
{
	if (!h)
		return;
	clear_all(h);
	free(h->nodes);
	free(h);
}

int xp_history_period(const struct xp_history *h)
{
	return h->period[0];
}

static const struct hnode *find(const struct xp_history *h, const char *name)
{
	uint32_t hv = hash_name(name);
	for (size_t i = hv & (h->cap - 1);; i = (i + 1) & (h->cap - 1)) {
		const struct hnode *e = &h->nodes[i];
		if (!e->name)
			return NULL;
		if (e->hash == hv && strcmp(e->name, name) == 0)
			return e;
	}
}

static struct hnode *find_or_add(struct xp_history *h, const char *name)
{
	if ((h->n + 1) * 2 > h->cap) {
		/* Half full at most: probes stay short. */
		size_t cap = h->cap * 2;
		struct hnode *t = xp_calloc(cap, sizeof *t);
		for (size_t i = 0; i < h->cap; i++) {
			if (!h->nodes[i].name)
				continue;
			size_t j = h->nodes[i].hash & (cap - 1);
			while (t[j].name)
				j = (j + 1) & (cap - 1);
			t[j] = h->nodes[i];
		}
		free(h->nodes);
		h->nodes = t;
		h->cap = cap;
	}
	uint32_t hv = hash_name(name);
	size_t i = hv & (h->cap - 1);
	for (;; i = (i + 1) & (h->cap - 1)) {
		struct hnode *e = &h->nodes[i];
		if (!e->name)
			break;
		if (e->hash == hv && strcmp(e->name, name) == 0)
			return e;
	}
	h->nodes[i] = (struct hnode){xp_strdup(name), hv, 0, NULL};
	h->n++;
	return &h->nodes[i];
}

static struct dev_hist *device(struct xp_history *h, struct hnode *e, int dev)
{
	if ((size_t)dev >= e->n_dev) {
		size_t n = (size_t)dev + 1;
		e->dev = xp_realloc(e->dev, n * h->dev_size);
		memset(e->dev + e->n_dev * h->dev_size, 0, (n - e->n_dev) * h->dev_size);
		h->devices += n - e->n_dev;
		e->n_dev = (uint16_t)n;
	}
	return dev_at(h, e->dev, (size_t)dev);
}

/* ---- recording ---- */

/* Puts one sample into tier k of d. */
static void tier_add(struct xp_history *h, struct dev_hist *d, int k, time_t t, const double *v)
{
	uint64_t s = (uint64_t)t / (uint64_t)h->period[k] + 1;
	if (s > UINT32_MAX)
		return; /* past 2106: not placeable in 32 bits */
	size_t ns = h->nslot[k];
	struct slot *q = tier_slots(h, d, k);
	size_t i = (size_t)(s % ns);
	bool newest;
	if (d->last[k] == 0 || s >= (uint64_t)d->last[k] + ns) {
		/* Empty, or every kept slot is older than the ring: start over. */
		for (size_t j = 0; j < ns; j++)
			slot_clear(&q[j]);
		d->last[k] = (uint32_t)s;
		newest = true;
		if (k > 0)
			memset(d->cnt[k - 1], 0, sizeof d->cnt[k - 1]);
	} else if (s > d->last[k]) {
		for (uint64_t j = (uint64_t)d->last[k] + 1; j <= s; j++)
			slot_clear(&q[j % ns]);
		d->last[k] = (uint32_t)s;
		newest = true;
		if (k > 0)
			memset(d->cnt[k - 1], 0, sizeof d->cnt[k - 1]);
	} else if (s + ns <= d->last[k]) {
		return; /* older than the ring */
	} else {
		newest = s == d->last[k];
	}
	for (int m = 0; m < XP_HIST_METRICS; m++) {
		if (isnan(v[m]))
			continue;
		if (k == 0) {
			slot_set(&q[i], m, v[m]);
		} else if (newest) {
			uint8_t *c = &d->cnt[k - 1][m];
			float *sum = &d->sum[k - 1][m];
			if (*c == 0)
				*sum = 0;
			if (*c < UINT8_MAX) {
				*sum += (float)v[m];
				(*c)++;
			}
			slot_set(&q[i], m, *sum / *c);
		} else if (slot_empty(&q[i], m)) {
			/* A late sample for a past bucket (an agent's ring, the store): fills a gap, never
			 * skews a mean it cannot weigh. */
			slot_set(&q[i], m, v[m]);
		}
	}
}

static void dev_add(struct xp_history *h, struct dev_hist *d, time_t t, const double *v)
{
	double c[XP_HIST_METRICS];
	for (int m = 0; m < XP_HIST_METRICS; m++)
		c[m] = isinf(v[m]) && v[m] < 0 ? XP_NA : v[m];
	for (int k = 0; k < XP_HIST_TIERS; k++)
		tier_add(h, d, k, t, c);
}

void xp_history_add(struct xp_history *h, const char *node, int dev, time_t t, const double values[])
{
	if (!node || dev < 0 || dev >= XP_MAX_DEVICES || t < 0)
		return;
	/* A sample from the future (an agent whose clock runs ahead, a hostile reply) would move
	 * its ring's newest slot past now, and every sample of now would then be refused as older:
	 * a device's history stopped until the clock caught up. More than two minutes past the
	 * last refresh (the clock before the first one) is dropped. */
	time_t ahead = (h->last_feed ? h->last_feed : time(NULL)) + 120;
	if (t > ahead)
		return;
	h->generation++;
	struct hnode *e = find_or_add(h, node);
	dev_add(h, device(h, e, dev), t, values);
}

double xp_hist_device_value(const struct xp_device *d, int metric)
{
	switch (metric) {
	case XP_HIST_UTIL:
		return d->utilization_pct;
	case XP_HIST_MEM:
		return d->memory_used_mib >= 0 ? (double)d->memory_used_mib : XP_NA;
	case XP_HIST_TEMP:
		return d->temperature_c;
	case XP_HIST_POWER:
		return d->power_w;
	default:
		return XP_NA;
	}
}

void xp_history_feed(struct xp_history *h, const struct xp_cluster *c, time_t now)
{
	if (h->last_feed && now + 60 < h->last_feed)
		clear_all(h);
	h->last_feed = now;
	h->generation++;
	if (!c || now < 0)
		return;
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct xp_node *n = c->nodes[i];
		/* An unreachable node's figures are its last report's, not now's: a gap, not a copy. */
		if (!n->n_devices || !n->name || n->state == XP_NODE_UNREACHABLE)
			continue;
		struct hnode *e = find_or_add(h, n->name);
		for (size_t k = 0; k < n->n_devices && k < XP_MAX_DEVICES; k++) {
			const struct xp_device *d = &n->devices[k];
			double v[XP_HIST_METRICS];
			bool any = false;
			for (int m = 0; m < XP_HIST_METRICS; m++) {
				v[m] = xp_hist_device_value(d, m);
				any = any || !isnan(v[m]);
			}
			/* A device that reports nothing costs no rings. */
			if (!any && (size_t)k >= e->n_dev)
				continue;
			/* The slot is the device's position: what the views index by. */
			dev_add(h, device(h, e, (int)k), now, v);
		}
	}
}

/* ---- reading ---- */

static const struct dev_hist *dev_find(const struct xp_history *h, const char *node, int dev)
{
	if (!node || dev < 0)
		return NULL;
	const struct hnode *e = find(h, node);
	if (!e || (size_t)dev >= e->n_dev)
		return NULL;
	return dev_at(h, e->dev, (size_t)dev);
}

/* The finest tier that covers window_s and is no finer than the refresh period. */
static int pick_tier(const struct xp_history *h, int window_s)
{
	int best = -1;
	for (int k = 0; k < XP_HIST_TIERS; k++) {
		if (k > 0 && h->period[k] < h->period[0])
			continue;
		if ((size_t)h->period[k] * h->nslot[k] >= (size_t)window_s)
			return k;
		best = k;
	}
	return best < 0 ? 0 : best;
}

size_t xp_history_series(const struct xp_history *h, const char *node, int dev, int metric, int window_s,
			 time_t now, double *out, size_t n)
{
	for (size_t b = 0; b < n; b++)
		out[b] = XP_NA;
	const struct dev_hist *d = dev_find(h, node, dev);
	if (!d || n == 0 || window_s <= 0 || metric < 0 || metric >= XP_HIST_METRICS || now < 0)
		return 0;
	int k = pick_tier(h, window_s);
	if (d->last[k] == 0)
		return 0;
	int64_t p = h->period[k];
	int64_t last = (int64_t)d->last[k] - 1;
	int64_t ns = (int64_t)h->nslot[k];
	int64_t first = last - ns + 1;
	const struct slot *q = tier_slots(h, d, k);
	/* The window is (now - window_s, now]: a sample taken at now is in it. */
	int64_t start = (int64_t)now + 1 - window_s;
	double width = (double)window_s / (double)n;
	int64_t lo = start / p, hi = (int64_t)now / p;
	if (lo < first)
		lo = first;
	if (hi > last)
		hi = last;
	if (width >= (double)p) {
		/* Buckets wider than slots: each slot in the bucket its start time (clipped to the
		 * window) falls in; out[] sums, cnt counts. */
		int cnt_small[256];
		int *cnt = n <= 256 ? cnt_small : xp_calloc(n, sizeof *cnt);
		memset(cnt, 0, (n <= 256 ? n : 0) * sizeof *cnt);
		for (int64_t s = lo; s <= hi; s++) {
			double v = slot_get(&q[(s + 1) % ns], metric);
			if (isnan(v))
				continue;
			int64_t r = s * p < start ? start : s * p;
			size_t b = (size_t)((double)(r - start) / width);
			if (b >= n)
				b = n - 1;
			out[b] = cnt[b] ? out[b] + v : v;
			cnt[b]++;
		}
		size_t filled = 0;
		for (size_t b = 0; b < n; b++)
			if (cnt[b]) {
				out[b] /= cnt[b];
				filled++;
			}
		if (cnt != cnt_small)
			free(cnt);
		return filled;
	}
	/* Buckets narrower than slots: each shows the slot its middle falls in (steps, not gaps). */
	size_t filled = 0;
	for (size_t b = 0; b < n; b++) {
		int64_t s = (int64_t)floor(((double)start + width * ((double)b + 0.5)) / (double)p);
		if (s < lo || s > hi)
			continue;
		out[b] = slot_get(&q[(s + 1) % ns], metric);
		if (!isnan(out[b]))
			filled++;
	}
	return filled;
}

double xp_history_last(const struct xp_history *h, const char *node, int dev, int metric, time_t now)
{
	const struct dev_hist *d = dev_find(h, node, dev);
	if (!d || d->last[0] == 0 || metric < 0 || metric >= XP_HIST_METRICS)
		return XP_NA;
	/* The finest tier's newest sample, if it is from the last minute. */
	int64_t p = h->period[0], last = (int64_t)d->last[0] - 1, ns = (int64_t)h->nslot[0];
	const struct slot *q = tier_slots(h, d, 0);
	for (int64_t s = last; s > last - ns && (s + 1) * p > (int64_t)now - 60; s--) {
		double x = slot_get(&q[(s + 1) % ns], metric);
		if (!isnan(x))
			return x;
	}
	return XP_NA;
}

uint64_t xp_history_generation(const struct xp_history *h)
{
	return h->generation;
}

size_t xp_history_devices(const struct xp_history *h)
{
	return h->devices;
}

size_t xp_history_bytes(const struct xp_history *h)
{
	size_t b = sizeof *h + h->cap * sizeof *h->nodes + h->devices * h->dev_size;
	for (size_t i = 0; i < h->cap; i++)
		if (h->nodes[i].name)
			b += strlen(h->nodes[i].name) + 1;
	return b;
}

static const char *const metric_names[XP_HIST_METRICS] = {"util", "mem", "temp", "power"};
static const char *const metric_units[XP_HIST_METRICS] = {"%", "MiB", "C", "W"};

const char *xp_hist_metric_name(int metric)
{
	return metric >= 0 && metric < XP_HIST_METRICS ? metric_names[metric] : "?";
}

const char *xp_hist_metric_unit(int metric)
{
	return metric >= 0 && metric < XP_HIST_METRICS ? metric_units[metric] : "";
}

int xp_hist_metric_parse(const char *s)
{
	for (int m = 0; s && m < XP_HIST_METRICS; m++)
		if (strcmp(s, metric_names[m]) == 0)
			return m;
	return -1;
}
