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

const char *xp_pv_relaxation(const struct xp_place_result *r, char *buf, size_t len)
{
	const struct xp_place_relax *x = r ? r->relaxation : NULL;
	if (!x) {
		if (len)
			buf[0] = '\0';
		return buf;
	}
	snprintf(buf, len, "would fit with %s %s -> %s: %s", x->field ? x->field : "", x->from ? x->from : "",
		 x->to ? x->to : "", x->summary ? x->summary : "");
	return buf;
}

char *xp_pv_clip(char *buf, size_t len, int cols, bool utf8)
{
	const char *dots = utf8 ? "\u2026" : "...";
	int dcols = utf8 ? 1 : 3;
	if (!len)
		return buf;
	if (cols < 0)
		cols = 0;
	/* Where the character after the first cols starts (the text is longer: cut), and where the
	 * dots go: after the first cols - dcols characters. */
	size_t keep = 0, cut = 0;
	bool longer = false;
	int n = 0;
	for (size_t i = 0; buf[i]; i++) {
		if (((unsigned char)buf[i] & 0xc0) == 0x80)
			continue; /* a continuation byte belongs to the character before */
		if (n == cols - dcols)
			keep = i;
		if (n == cols) {
			cut = i;
			longer = true;
			break;
		}
		n++;
	}
	if (!longer)
		return buf;
	if (cols < dcols) {
		buf[cut] = '\0'; /* no room for the dots: only cut */
		return buf;
	}
	/* The dots may take more bytes than the characters they stand for: step back while they
	 * would not fit in the buffer. */
	size_t dl = strlen(dots);
	while (keep > 0 && keep + dl + 1 > len) {
		keep--;
		while (keep > 0 && ((unsigned char)buf[keep] & 0xc0) == 0x80)
			keep--;
	}
	if (keep + dl + 1 > len) {
		buf[cut < len ? cut : len - 1] = '\0';
		return buf;
	}
	memcpy(buf + keep, dots, dl + 1);
	return buf;
}

const char *xp_pv_mounts(const struct xp_place_replica *p, int cols, bool utf8, char *buf, size_t len)
{
	if (!len)
		return buf;
	buf[0] = '\0';
	if (!p || !p->n_mounts)
		return buf;
	size_t at = 0;
	int k = snprintf(buf, len, "mounts:");
	at = k > 0 ? (size_t)k : 0;
	for (size_t i = 0; i < p->n_mounts && at < len; i++) {
		k = snprintf(buf + at, len - at, " %s", p->mounts[i] ? p->mounts[i] : "");
		if (k < 0)
			break;
		at += (size_t)k;
	}
	/* A list the buffer cut short ends in the dots too (at most len - 1 characters shown). */
	if (at >= len) {
		int n = 0;
		for (const char *q = buf; *q; q++)
			n += ((unsigned char)*q & 0xc0) != 0x80;
		if (n - 1 < cols)
			cols = n - 1;
	}
	return xp_pv_clip(buf, len, cols, utf8);
}

const char *xp_pv_ms(double ms, char *buf, size_t len)
{
	if (ms < 0)
		ms = 0;
	if (ms < 1)
		snprintf(buf, len, "%.2f ms", ms);
	else if (ms < 1000)
		snprintf(buf, len, "%.1f ms", ms);
	else
		snprintf(buf, len, "%.2f s", ms / 1e3);
	return buf;
}
