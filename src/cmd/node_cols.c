/* node_cols.c: the node row's columns: figures, text, order and fitting (node_cols.h). */
#include "node_cols.h"

#include "filter.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "format.h"

const struct xp_ncol_def xp_ncols[XP_NCOL_COUNT] = {
	[XP_NCOL_NODE] = {"node", "NODE", 'O', 12, 32, false, 0},
	[XP_NCOL_STATE] = {"state", "STATE", 'E', 4, 16, false, 1},
	[XP_NCOL_HEALTH] = {"health", "HEALTH", 'H', 4, 7, false, 5},
	[XP_NCOL_FREE] = {"free", "FREE", 'F', 3, 9, true, 2},
	[XP_NCOL_UTIL] = {"util", "UTIL", 'U', 4, 5, true, 3},
	[XP_NCOL_MEM] = {"mem", "MEM", 'M', 5, 15, true, 6},
	[XP_NCOL_TEMP] = {"temp", "TEMP", 'T', 4, 5, true, 4},
	[XP_NCOL_POWER] = {"power", "POWER", 'P', 5, 7, true, 7},
	[XP_NCOL_ECC] = {"ecc", "ECC", 0, 3, 11, true, 9},
	[XP_NCOL_MODEL] = {"model", "MODEL", 0, 5, 24, false, 8},
	[XP_NCOL_NET] = {"net", "NET", 0, 3, 14, false, 11},
	[XP_NCOL_CPU] = {"cpu", "CPU", 0, 3, 20, false, 10},
};

bool xp_device_free(const struct xp_node *n, const struct xp_device *d)
{
	return xp_device_is_free(n, d); /* the filter's `free` and this column count alike */
}

/* Health ranked by how bad: unknown below ok, so that any known value wins over it. */
static int health_rank(int h)
{
	switch (h) {
	case XP_HEALTH_OK:
		return 1;
	case XP_HEALTH_WARN:
		return 2;
	case XP_HEALTH_FAIL:
		return 3;
	default:
		return 0;
	}
}

static void sum_init(struct xp_node_sum *s)
{
	memset(s, 0, sizeof *s);
	s->util = s->temp = s->power = XP_NA;
	s->mem_used = s->mem_total = -1;
	s->ecc_corr = s->ecc_uncorr = -1;
	s->health = XP_HEALTH_UNKNOWN;
}

/* Adds a value that may be unknown (-1) to a sum that may be unknown. */
static void add_known(int64_t *sum, int64_t v)
{
	if (v < 0)
		return;
	*sum = *sum < 0 ? v : *sum + v;
}

static void sum_add(struct xp_node_sum *s, const struct xp_node *n, const struct xp_device *d)
{
	s->n_dev++;
	s->n_free += xp_device_free(n, d);
	if (XP_HAS(d->utilization_pct)) {
		/* A running mean: the sum would need a second pass or another field. */
		s->n_util++;
		s->util = s->n_util == 1 ? d->utilization_pct : s->util + (d->utilization_pct - s->util) / s->n_util;
	}
	add_known(&s->mem_used, d->memory_used_mib);
	add_known(&s->mem_total, d->memory_mib);
	if (XP_HAS(d->temperature_c) && (!XP_HAS(s->temp) || d->temperature_c > s->temp))
		s->temp = d->temperature_c;
	if (XP_HAS(d->power_w))
		s->power = XP_HAS(s->power) ? s->power + d->power_w : d->power_w;
	if (health_rank(d->health) > health_rank(s->health))
		s->health = d->health;
	add_known(&s->ecc_corr, d->ecc_corrected);
	add_known(&s->ecc_uncorr, d->ecc_uncorrected);
}

void xp_node_sum(const struct xp_node *n, struct xp_node_sum *s)
{
	sum_init(s);
	for (size_t i = 0; i < n->n_devices; i++)
		sum_add(s, n, &n->devices[i]);
}

void xp_device_sum(const struct xp_node *n, const struct xp_device *d, struct xp_node_sum *s)
{
	sum_init(s);
	sum_add(s, n, d);
}

int xp_ncol_find(const char *name)
{
	if (!name)
		return -1;
	for (int i = 0; i < XP_NCOL_COUNT; i++)
		if (strcasecmp(name, xp_ncols[i].name) == 0)
			return i;
	static const struct {
		const char *alias;
		int col;
	} aliases[] = {{"name", XP_NCOL_NODE},   {"memory", XP_NCOL_MEM}, {"temperature", XP_NCOL_TEMP},
		       {"utilization", XP_NCOL_UTIL}, {"devices", XP_NCOL_FREE}};
	for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++)
		if (strcasecmp(name, aliases[i].alias) == 0)
			return aliases[i].col;
	return -1;
}

/* Ages as the map shows them: "45s", "12m", "3h", "2d". */
static void age_str(long long s, char *buf, size_t len)
{
	if (s < 0)
		s = 0;
	if (s < 60)
		snprintf(buf, len, "%llds", s);
	else if (s < 3600)
		snprintf(buf, len, "%lldm", s / 60);
	else if (s < 86400)
		snprintf(buf, len, "%lldh", s / 3600);
	else
		snprintf(buf, len, "%lldd", s / 86400);
}

static void cpu_text(const struct xp_node *n, char *buf, size_t len)
{
	/* Not known (0: no topology) is "-", as everywhere else. */
	char c[24], t[24], m[24], numa[24];
	xp_fmt_int(c, sizeof c, n->cores > 0 ? n->cores : -1);
	xp_fmt_int(t, sizeof t, n->pus > 0 ? n->pus : -1);
	xp_fmt_int(numa, sizeof numa, n->n_numa ? (long long)n->n_numa : -1);
	xp_fmt_mib_short(m, sizeof m, n->memory_mib);
	/* No topology at all (an agent's or a replayed node): one "-", or the memory alone,
	 * rather than "-c/-t -N -". */
	if (n->cores <= 0 && n->pus <= 0 && !n->n_numa)
		snprintf(buf, len, "%s", m);
	else
		snprintf(buf, len, "%sc/%st %sN %s", c, t, numa, m);
}

/* The RDMA NICs at their fastest speed ("2x400 Gb/s"), else every NIC with a speed. */
static void net_text(const struct xp_node *n, char *buf, size_t len)
{
	int64_t best = -1;
	size_t k = 0;
	for (int rdma = 1; rdma >= 0 && !k; rdma--)
		for (size_t i = 0; i < n->n_nics; i++) {
			const struct xp_nic *c = &n->nics[i];
			if ((rdma && !c->rdma) || c->speed_mbps <= 0)
				continue;
			if (c->speed_mbps > best) {
				best = c->speed_mbps;
				k = 0;
			}
			k += c->speed_mbps == best;
		}
	char sp[32];
	if (!k)
		snprintf(buf, len, "-");
	else if (k == 1)
		snprintf(buf, len, "%s", xp_fmt_link(sp, sizeof sp, best));
	else
		snprintf(buf, len, "%zux%s", k, xp_fmt_link(sp, sizeof sp, best));
}

static void model_text(const struct xp_node *n, char *buf, size_t len)
{
	const char *m = n->n_devices ? n->devices[0].model : NULL;
	bool mixed = false;
	for (size_t i = 1; i < n->n_devices && m; i++) {
		const char *o = n->devices[i].model;
		mixed |= !o || (o != m && strcmp(o, m) != 0);
	}
	/* A mixed node says so rather than naming only its first kind. */
	snprintf(buf, len, "%s%s", m ? m : "-", mixed ? " +" : "");
}

static void mem_text(int64_t used, int64_t total, char *buf, size_t len)
{
	char u[24], t[24];
	if (used < 0 && total < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%s/%s", xp_fmt_mib_short(u, sizeof u, used), xp_fmt_mib_short(t, sizeof t, total));
}

/* The figure columns, shared by node and device rows. */
static bool figure_text(int col, const struct xp_node_sum *s, char *buf, size_t len)
{
	switch (col) {
	case XP_NCOL_HEALTH:
		snprintf(buf, len, "%s", s->health == XP_HEALTH_UNKNOWN ? "-" : xp_health_name(s->health));
		return true;
	case XP_NCOL_UTIL:
		if (XP_HAS(s->util))
			snprintf(buf, len, "%.0f%%", s->util);
		else
			snprintf(buf, len, "-");
		return true;
	case XP_NCOL_MEM:
		mem_text(s->mem_used, s->mem_total, buf, len);
		return true;
	case XP_NCOL_TEMP:
		if (XP_HAS(s->temp))
			snprintf(buf, len, "%.0fC", s->temp);
		else
			snprintf(buf, len, "-");
		return true;
	case XP_NCOL_POWER:
		if (XP_HAS(s->power))
			snprintf(buf, len, "%.0fW", s->power);
		else
			snprintf(buf, len, "-");
		return true;
	case XP_NCOL_ECC:
		if (s->ecc_corr < 0 && s->ecc_uncorr < 0) {
			snprintf(buf, len, "-");
		} else {
			char a[24], b[24];
			snprintf(buf, len, "%s/%s", xp_fmt_int(a, sizeof a, s->ecc_corr),
				 xp_fmt_int(b, sizeof b, s->ecc_uncorr));
		}
		return true;
	default:
		return false;
	}
}

const char *xp_ncol_text(int col, const struct xp_node *n, const struct xp_node_sum *s, char *buf, size_t len)
{
	if (figure_text(col, s, buf, len))
		return buf;
	switch (col) {
	case XP_NCOL_NODE:
		snprintf(buf, len, "%s", n->name);
		break;
	case XP_NCOL_STATE:
		if (n->state == XP_NODE_UNREACHABLE) {
			/* How long it has been silent is what the operator asks next. */
			char age[24];
			age_str(n->age_s, age, sizeof age);
			snprintf(buf, len, "unreachable %s", age);
		} else {
			snprintf(buf, len, "%s", xp_node_state_name(n->state));
		}
		break;
	case XP_NCOL_FREE:
		if (s->n_dev)
			snprintf(buf, len, "%d/%d", s->n_free, s->n_dev);
		else
			snprintf(buf, len, "-");
		break;
	case XP_NCOL_MODEL:
		model_text(n, buf, len);
		break;
	case XP_NCOL_NET:
		net_text(n, buf, len);
		break;
	case XP_NCOL_CPU:
		cpu_text(n, buf, len);
		break;
	default:
		snprintf(buf, len, "-");
		break;
	}
	return buf;
}

const char *xp_ncol_dev_text(int col, const struct xp_node *n, const struct xp_device *d,
			     const struct xp_node_sum *s, char *buf, size_t len)
{
	if (figure_text(col, s, buf, len))
		return buf;
	switch (col) {
	case XP_NCOL_NODE:
		snprintf(buf, len, "ACC%d", d->index);
		break;
	case XP_NCOL_STATE:
		/* Who holds it: what a device row is read for. */
		if (d->n_allocs && d->allocs[0].owner)
			snprintf(buf, len, "%s", d->allocs[0].owner);
		else if (d->n_allocs)
			snprintf(buf, len, "held");
		else
			snprintf(buf, len, "%s", xp_device_free(n, d) ? "free" : "-");
		break;
	case XP_NCOL_FREE:
		snprintf(buf, len, "%s", s->n_free ? "free" : "used");
		break;
	case XP_NCOL_MODEL:
		snprintf(buf, len, "%s", d->model ? d->model : "-");
		break;
	case XP_NCOL_CPU:
		if (d->numa >= 0)
			snprintf(buf, len, "numa %d", d->numa);
		else
			snprintf(buf, len, "-");
		break;
	default:
		snprintf(buf, len, "-");
		break;
	}
	return buf;
}

double xp_ncol_value(int col, const struct xp_node *n, const struct xp_node_sum *s)
{
	switch (col) {
	case XP_NCOL_STATE:
		return n->state;
	case XP_NCOL_HEALTH:
		return s->health == XP_HEALTH_UNKNOWN ? XP_NA : health_rank(s->health);
	case XP_NCOL_FREE:
		return s->n_dev ? s->n_free : XP_NA;
	case XP_NCOL_UTIL:
		return s->util;
	case XP_NCOL_MEM:
		return s->mem_used >= 0 ? (double)s->mem_used : XP_NA;
	case XP_NCOL_TEMP:
		return s->temp;
	case XP_NCOL_POWER:
		return s->power;
	case XP_NCOL_ECC:
		return s->ecc_uncorr >= 0 || s->ecc_corr >= 0
			       ? (double)(s->ecc_uncorr > 0 ? s->ecc_uncorr : 0) * 1e9 + (double)(s->ecc_corr > 0 ? s->ecc_corr : 0)
			       : XP_NA;
	case XP_NCOL_NET: {
		int64_t best = -1;
		for (size_t i = 0; i < n->n_nics; i++)
			if (n->nics[i].speed_mbps > best)
				best = n->nics[i].speed_mbps;
		return best > 0 ? (double)best : XP_NA;
	}
	case XP_NCOL_CPU:
		return n->cores > 0 ? n->cores : XP_NA;
	default:
		return XP_NA;
	}
}

static int name_cmp(const struct xp_node *a, const struct xp_node *b)
{
	return strverscmp(a->name, b->name);
}

int xp_ncol_cmp(int col, bool desc, const struct xp_node *a, const struct xp_node_sum *sa, const struct xp_node *b,
		const struct xp_node_sum *sb)
{
	int c = 0;
	if (col == XP_NCOL_NODE) {
		c = name_cmp(a, b);
		return desc ? -c : c;
	}
	if (col == XP_NCOL_MODEL) {
		const char *ma = a->n_devices ? a->devices[0].model : NULL, *mb = b->n_devices ? b->devices[0].model : NULL;
		if (!ma || !mb)
			c = (ma == NULL) - (mb == NULL); /* none last, either way */
		else if ((c = strverscmp(ma, mb)) != 0)
			c = desc ? -c : c;
		return c ? c : name_cmp(a, b);
	}
	double va = xp_ncol_value(col, a, sa), vb = xp_ncol_value(col, b, sb);
	bool ka = XP_HAS(va), kb = XP_HAS(vb);
	if (!ka || !kb)
		c = (int)kb - (int)ka; /* not known last, in both directions */
	else
		c = (va > vb) - (va < vb), c = desc ? -c : c;
	return c ? c : name_cmp(a, b);
}

static const char *const group_names[XP_GROUP_COUNT] = {"none", "zone", "rack", "switch"};

const char *xp_group_name(int by)
{
	return by >= 0 && by < XP_GROUP_COUNT ? group_names[by] : "?";
}

int xp_group_parse(const char *s)
{
	for (int i = 0; s && i < XP_GROUP_COUNT; i++)
		if (strcasecmp(s, group_names[i]) == 0)
			return i;
	return -1;
}

/* Location parts compare in natural order ("rack2" before "rack10"); an unknown part
 * sorts after every known one, so "(no location)" ends the list. */
static int part_cmp(const char *a, const char *b)
{
	if (!a || !b)
		return (a == NULL) - (b == NULL);
	return strverscmp(a, b);
}

int xp_node_loc_cmp(const struct xp_node *a, const struct xp_node *b, int by)
{
	int c = 0;
	if (by >= XP_GROUP_ZONE)
		c = part_cmp(a->zone, b->zone);
	if (!c && by >= XP_GROUP_RACK)
		c = part_cmp(a->rack, b->rack);
	if (!c && by >= XP_GROUP_SWITCH)
		c = part_cmp(a->sw, b->sw);
	return c;
}

const char *xp_group_label(const struct xp_node *n, int by, char *buf, size_t len)
{
	bool none = by == XP_GROUP_NONE || (!n->zone && (by < XP_GROUP_RACK || !n->rack) &&
					    (by < XP_GROUP_SWITCH || !n->sw));
	if (by == XP_GROUP_NONE)
		snprintf(buf, len, "all nodes");
	else if (none)
		snprintf(buf, len, "(no location)");
	/* Unknown parts are written as "-", as every unknown value, so that "rack -" still says a
	 * rack was expected. */
	else if (by == XP_GROUP_ZONE)
		snprintf(buf, len, "zone %s", n->zone ? n->zone : "-");
	else if (by == XP_GROUP_RACK)
		snprintf(buf, len, "zone %s / rack %s", n->zone ? n->zone : "-", n->rack ? n->rack : "-");
	else
		snprintf(buf, len, "zone %s / rack %s / switch %s", n->zone ? n->zone : "-", n->rack ? n->rack : "-",
			 n->sw ? n->sw : "-");
	return buf;
}

int xp_ncol_width(int col, int want)
{
	const struct xp_ncol_def *d = &xp_ncols[col];
	int w = want;
	if (d->max && w > d->max)
		w = d->max;
	if (w < d->min)
		w = d->min;
	int t = (int)strlen(d->title);
	return w < t ? t : w;
}

size_t xp_ncol_fit(const int *want, int width, int gap, int reserve, int *out, int *w)
{
	bool take[XP_NCOL_COUNT] = {false};
	int used = 0;
	/* Priority order: the node name first (always), then the figures an operator scans for. */
	for (int p = 0; p < XP_NCOL_COUNT; p++) {
		for (int col = 0; col < XP_NCOL_COUNT; col++) {
			if (xp_ncols[col].prio != p)
				continue;
			int cw = xp_ncol_width(col, want[col]) + (used ? gap : 0);
			if (col == XP_NCOL_NODE || used + cw + reserve <= width) {
				take[col] = true;
				used += cw;
			}
		}
	}
	size_t k = 0;
	for (int col = 0; col < XP_NCOL_COUNT; col++)
		if (take[col]) {
			out[k] = col;
			w[k] = xp_ncol_width(col, want[col]);
			k++;
		}
	return k;
}
