/* place_text.c: the Placement view's words and numbers (place_text.h). */
#include "place_text.h"

#include <stdio.h>
#include <string.h>

/* The form needs about 34 columns (label, value, a margin); on a wide screen the result,
 * with its node names, reasons and map, is what wants the room. */
int xp_pv_form_width(int width)
{
	int w = width * 2 / 5;
	if (w > 40)
		w = 40;
	if (w < 30)
		w = 30;
	if (w > width / 2)
		w = width / 2;
	return w;
}

double xp_pv_mean_score(const struct xp_place_result *r)
{
	if (!r || !r->placed || !r->n_replicas)
		return -1;
	double s = 0;
	for (size_t i = 0; i < r->n_replicas; i++)
		s += r->replicas[i].score;
	return s / (double)r->n_replicas;
}

size_t xp_pv_node_count(const struct xp_place_result *r)
{
	size_t n = 0;
	for (size_t i = 0; r && i < r->n_replicas; i++) {
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = strcmp(r->replicas[k].node, r->replicas[i].node) == 0;
		n += !seen;
	}
	return n;
}

const char *xp_pv_outcome(const struct xp_place_result *r, char *buf, size_t len)
{
	if (!r)
		snprintf(buf, len, "-");
	else if (r->placed)
		snprintf(buf, len, "%.1f", xp_pv_mean_score(r));
	else
		snprintf(buf, len, "0/%zu fit", r->n_nodes);
	return buf;
}

const char *xp_pv_compare(int from, const struct xp_place_result *a, int to, const struct xp_place_result *b,
			  char *buf, size_t len)
{
	char x[64], y[64];
	snprintf(buf, len, "%s %s -> %s %s", xp_strategy_name(from), xp_pv_outcome(a, x, sizeof x),
		 xp_strategy_name(to), xp_pv_outcome(b, y, sizeof y));
	return buf;
}

const char *xp_pv_devices(const struct xp_place_replica *p, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < p->n_devices && at < len; k++) {
		int n = snprintf(buf + at, len - at, "%s%d", k ? "," : "", p->devices[k]);
		if (n < 0)
			break;
		at += (size_t)n;
	}
	if (p->slice && at < len)
		snprintf(buf + at, len - at, " %s", p->slice);
	return buf;
}

const char *xp_pv_where(const struct xp_place_result *r, char *buf, size_t len)
{
	buf[0] = '\0';
	if (!r)
		return buf;
	if (!r->placed) {
		snprintf(buf, len, "%s", r->summary ? r->summary : "");
		return buf;
	}
	if (r->n_replicas == 1) {
		char d[256];
		snprintf(buf, len, "%s [%s]", r->replicas[0].node, xp_pv_devices(&r->replicas[0], d, sizeof d));
		return buf;
	}
	size_t nodes = xp_pv_node_count(r);
	int at = snprintf(buf, len, "%zu node%s:", nodes, nodes == 1 ? "" : "s");
	for (size_t i = 0; i < r->n_replicas && at >= 0 && (size_t)at < len; i++) {
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = strcmp(r->replicas[k].node, r->replicas[i].node) == 0;
		if (!seen)
			at += snprintf(buf + at, len - (size_t)at, "%s %s", i ? "," : "", r->replicas[i].node);
	}
	return buf;
}

const char *xp_pv_breakdown(int strategy, const struct xp_place_replica *p, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (int c = 0; c < XP_CRIT_COUNT && at < len; c++) {
		if (xp_strategy_weight(strategy, c) <= 0)
			continue;
		int n = snprintf(buf + at, len - at, "%s%s %.1f", at ? " + " : "", xp_criterion_name(c),
				 p->breakdown[c]);
		if (n < 0)
			break;
		at += (size_t)n;
	}
	return buf;
}

const char *xp_pv_chosen_glyph(bool utf8)
{
	return utf8 ? "\u25c6" : "*";
}

bool xp_pv_chosen(const struct xp_place_result *r, const char *node, int dev)
{
	for (size_t i = 0; r && i < r->n_replicas; i++) {
		if (strcmp(r->replicas[i].node, node) != 0)
			continue;
		for (size_t k = 0; k < r->replicas[i].n_devices; k++)
			if (r->replicas[i].devices[k] == dev)
				return true;
	}
	return false;
}
