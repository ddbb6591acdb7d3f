/* history_json.c: an agent's sample ring and its JSON, both ways (history_json.h). */
#include "history_json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const keys[XP_HIST_METRICS] = {"util", "mem", "temp", "power"};

struct xp_hist_ring {
	size_t cap, n, head; /* head: the oldest sample's slot */
	size_t n_dev;
	double interval_s;
	int64_t *t;
	float *v; /* [slot][device][metric] */
};

struct xp_hist_ring *xp_hist_ring_new(double window_s, double interval_s)
{
	struct xp_hist_ring *r = xp_calloc(1, sizeof *r);
	if (!(interval_s > 0))
		interval_s = 1;
	double c = ceil(window_s / interval_s);
	r->cap = !(c >= 1) ? 1 : c > XP_HIST_JSON_MAX_TIMES ? XP_HIST_JSON_MAX_TIMES : (size_t)c;
	r->interval_s = interval_s;
	r->t = xp_calloc(r->cap, sizeof *r->t);
	return r;
}

void xp_hist_ring_free(struct xp_hist_ring *r)
{
	if (!r)
		return;
	free(r->t);
	free(r->v);
	free(r);
}

size_t xp_hist_ring_count(const struct xp_hist_ring *r)
{
	return r->n;
}

void xp_hist_ring_add(struct xp_hist_ring *r, const struct xp_node *n, time_t t)
{
	size_t nd = n->n_devices < XP_MAX_DEVICES ? n->n_devices : XP_MAX_DEVICES;
	if (nd != r->n_dev || !r->v) {
		/* Devices came or went: the old samples no longer line up with them. */
		free(r->v);
		r->n_dev = nd;
		r->v = xp_calloc(r->cap * (nd ? nd : 1) * XP_HIST_METRICS, sizeof *r->v);
		r->n = r->head = 0;
	}
	/* A clock that went back: samples stay in time order by starting over. */
	if (r->n && t < r->t[(r->head + r->n - 1) % r->cap])
		r->n = r->head = 0;
	size_t slot;
	if (r->n < r->cap) {
		slot = (r->head + r->n) % r->cap;
		r->n++;
	} else {
		slot = r->head;
		r->head = (r->head + 1) % r->cap;
	}
	r->t[slot] = (int64_t)t;
	float *row = r->v + slot * nd * XP_HIST_METRICS;
	for (size_t k = 0; k < nd; k++)
		for (int m = 0; m < XP_HIST_METRICS; m++)
			row[k * XP_HIST_METRICS + (size_t)m] = (float)xp_hist_device_value(&n->devices[k], m);
}

json_t *xp_hist_ring_json(const struct xp_hist_ring *r, time_t since)
{
	json_t *o = json_object();
	json_object_set_new(o, "interval_s", json_real(r->interval_s));
	json_t *times = json_array();
	size_t first = r->n;
	for (size_t i = 0; i < r->n; i++) {
		size_t s = (r->head + i) % r->cap;
		if (r->t[s] >= (int64_t)since) {
			if (first == r->n)
				first = i;
			json_array_append_new(times, json_integer((json_int_t)r->t[s]));
		}
	}
	json_object_set_new(o, "times", times);
	json_t *devs = json_array();
	for (size_t k = 0; k < r->n_dev && first < r->n; k++) {
		json_t *d = json_object();
		json_object_set_new(d, "index", json_integer((json_int_t)k));
		for (int m = 0; m < XP_HIST_METRICS; m++) {
			json_t *a = json_array();
			for (size_t i = first; i < r->n; i++) {
				size_t s = (r->head + i) % r->cap;
				float x = r->v[(s * r->n_dev + k) * XP_HIST_METRICS + (size_t)m];
				/* Whole numbers where the metric is (MiB, a tenth of a unit elsewhere): compact. */
				json_array_append_new(a, isnan(x) ? json_null()
							  : m == XP_HIST_MEM ? json_integer((json_int_t)llroundf(x))
									     : json_real(round((double)x * 10) / 10));
			}
			json_object_set_new(d, keys[m], a);
		}
		json_array_append_new(devs, d);
	}
	json_object_set_new(o, "devices", devs);
	return o;
}

/* ---- reading ---- */

void xp_hist_batch_free(struct xp_hist_batch *b)
{
	free(b->node);
	free(b->times);
	free(b->dev);
	free(b->v);
	memset(b, 0, sizeof *b);
}

int xp_hist_batch_parse(const json_t *j, const char *node, struct xp_hist_batch *b, struct xp_err *err)
{
	memset(b, 0, sizeof *b);
	if (!json_is_object(j))
		return xp_errf(err, "history: expected an object");
	const json_t *times = json_object_get(j, "times"), *devs = json_object_get(j, "devices");
	if (!json_is_array(times))
		return xp_errf(err, "history.times: expected an array");
	if (!json_is_array(devs))
		return xp_errf(err, "history.devices: expected an array");
	size_t nt = json_array_size(times), nd = json_array_size(devs);
	if (nt > XP_HIST_JSON_MAX_TIMES)
		return xp_errf(err, "history.times: %zu samples, more than the %d accepted", nt, XP_HIST_JSON_MAX_TIMES);
	if (nd > XP_MAX_DEVICES)
		return xp_errf(err, "history.devices: %zu devices, more than the %d accepted", nd, XP_MAX_DEVICES);
	if (nt * nd * XP_HIST_METRICS > XP_HIST_JSON_MAX_VALUES)
		return xp_errf(err, "history: %zu values, more than the %zu accepted", nt * nd * XP_HIST_METRICS,
			       XP_HIST_JSON_MAX_VALUES);
	b->node = xp_strdup(node);
	b->n_times = nt;
	b->times = xp_calloc(nt ? nt : 1, sizeof *b->times);
	for (size_t i = 0; i < nt; i++) {
		const json_t *t = json_array_get(times, i);
		if (!json_is_integer(t) || json_integer_value(t) < 0) {
			xp_hist_batch_free(b);
			return xp_errf(err, "history.times[%zu]: expected a time in Unix seconds", i);
		}
		b->times[i] = (int64_t)json_integer_value(t);
		if (i && b->times[i] < b->times[i - 1]) {
			xp_hist_batch_free(b);
			return xp_errf(err, "history.times[%zu]: older than the time before it", i);
		}
	}
	b->n_dev = nd;
	b->dev = xp_calloc(nd ? nd : 1, sizeof *b->dev);
	b->v = xp_calloc((nd ? nd : 1) * XP_HIST_METRICS * (nt ? nt : 1), sizeof *b->v);
	for (size_t k = 0; k < nd; k++) {
		const json_t *d = json_array_get(devs, k);
		const json_t *ix = json_object_get(d, "index");
		if (!json_is_object(d)) {
			xp_hist_batch_free(b);
			return xp_errf(err, "history.devices[%zu]: expected an object", k);
		}
		if (!json_is_integer(ix) || json_integer_value(ix) < 0 || json_integer_value(ix) >= XP_MAX_DEVICES) {
			xp_hist_batch_free(b);
			return xp_errf(err, "history.devices[%zu].index: expected a device index 0 to %d", k,
				       XP_MAX_DEVICES - 1);
		}
		b->dev[k] = (int)json_integer_value(ix);
		for (int m = 0; m < XP_HIST_METRICS; m++) {
			const json_t *a = json_object_get(d, keys[m]);
			float *out = b->v + (k * XP_HIST_METRICS + (size_t)m) * nt;
			if (!a || json_is_null(a)) { /* a metric the node does not report */
				for (size_t i = 0; i < nt; i++)
					out[i] = NAN;
				continue;
			}
			if (!json_is_array(a) || json_array_size(a) != nt) {
				xp_hist_batch_free(b);
				return xp_errf(err, "history.devices[%zu].%s: expected an array of %zu values (one per time)", k,
					       keys[m], nt);
			}
			for (size_t i = 0; i < nt; i++) {
				const json_t *x = json_array_get(a, i);
				if (json_is_null(x)) {
					out[i] = NAN;
				} else if (json_is_number(x) && isfinite(json_number_value(x))) {
					out[i] = (float)json_number_value(x);
				} else {
					xp_hist_batch_free(b);
					return xp_errf(err, "history.devices[%zu].%s[%zu]: expected a number or null", k, keys[m], i);
				}
			}
		}
	}
	return 0;
}

void xp_hist_batch_apply(const struct xp_hist_batch *b, struct xp_history *h)
{
	for (size_t k = 0; k < b->n_dev; k++)
		for (size_t i = 0; i < b->n_times; i++) {
			double v[XP_HIST_METRICS];
			for (int m = 0; m < XP_HIST_METRICS; m++)
				v[m] = b->v[(k * XP_HIST_METRICS + (size_t)m) * b->n_times + i];
			xp_history_add(h, b->node, b->dev[k], (time_t)b->times[i], v);
		}
}
