/* place_form.c: the Placement view's job form (place_form.h). */
#include "place_form.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[XP_PF_COUNT] = {
	"replicas", "gang min", "devices", "vendor", "model", "memory MiB", "slice",
	"numa", "network", "same-group", "homogeneous", "labels",
};

const char *xp_pf_name(int f)
{
	return f >= 0 && f < XP_PF_COUNT ? names[f] : NULL;
}

bool xp_pf_is_choice(int f)
{
	return f == XP_PF_NUMA || f == XP_PF_NETWORK || f == XP_PF_SAME_GROUP || f == XP_PF_HOMOGENEOUS;
}

static const char *labels_text(const struct xp_labels *l, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < l->n && at < len; i++) {
		int k = snprintf(buf + at, len - at, "%s%s=%s", i ? "," : "", l->keys[i], l->values[i]);
		if (k < 0)
			break;
		at += (size_t)k;
	}
	return buf;
}

const char *xp_pf_text(const struct xp_task_group *g, int f, char *buf, size_t len)
{
	buf[0] = '\0';
	switch (f) {
	case XP_PF_REPLICAS: snprintf(buf, len, "%d", g->replicas); break;
	case XP_PF_GANG_MIN: snprintf(buf, len, "%d", g->gang_min); break;
	case XP_PF_DEVICES: snprintf(buf, len, "%d", g->devices); break;
	case XP_PF_VENDOR: snprintf(buf, len, "%s", g->vendor ? g->vendor : ""); break;
	case XP_PF_MODEL: snprintf(buf, len, "%s", g->model ? g->model : ""); break;
	case XP_PF_MEMORY:
		if (g->memory_mib)
			snprintf(buf, len, "%" PRId64, g->memory_mib);
		break;
	case XP_PF_SLICE:
		if (g->slice)
			snprintf(buf, len, "%s", g->slice);
		else if (g->share_pct)
			snprintf(buf, len, "share:%d", g->share_pct);
		break;
	case XP_PF_NUMA: snprintf(buf, len, "%s", xp_numa_policy_name(g->numa)); break;
	case XP_PF_NETWORK: snprintf(buf, len, "%s", xp_network_name(g->network)); break;
	case XP_PF_SAME_GROUP: snprintf(buf, len, "%s", g->same_group ? "yes" : "no"); break;
	case XP_PF_HOMOGENEOUS: snprintf(buf, len, "%s", g->homogeneous ? "yes" : "no"); break;
	case XP_PF_LABELS: labels_text(&g->labels, buf, len); break;
	default: break;
	}
	return buf;
}

bool xp_pf_is_default(const struct xp_task_group *g, int f)
{
	switch (f) {
	case XP_PF_GANG_MIN: return g->gang_min == g->replicas;
	case XP_PF_VENDOR: return !g->vendor;
	case XP_PF_MODEL: return !g->model;
	case XP_PF_MEMORY: return !g->memory_mib;
	case XP_PF_SLICE: return !g->slice && !g->share_pct;
	case XP_PF_NUMA: return g->numa == XP_NUMA_NONE;
	case XP_PF_NETWORK: return g->network == XP_NET_ANY;
	case XP_PF_SAME_GROUP: return !g->same_group;
	case XP_PF_HOMOGENEOUS: return !g->homogeneous;
	case XP_PF_LABELS: return !g->labels.n;
	default: return false;
	}
}

const char *xp_pf_show(const struct xp_task_group *g, int f, char *buf, size_t len)
{
	if (f == XP_PF_GANG_MIN && g->gang_min == g->replicas) {
		snprintf(buf, len, "all");
		return buf;
	}
	xp_pf_text(g, f, buf, len);
	if (!buf[0])
		snprintf(buf, len, "%s", f == XP_PF_SLICE ? "none" : "any");
	return buf;
}

/* "--memory: expected ..." becomes "memory MiB: expected ...": the form's own name for it. */
static int field_error(struct xp_err *err, int f)
{
	char msg[sizeof err->msg];
	const char *m = err->msg;
	if (strncmp(m, "--", 2) == 0 && strstr(m, ": "))
		m = strstr(m, ": ") + 2;
	snprintf(msg, sizeof msg, "%s", m);
	return xp_errf(err, "%s: %s", names[f], msg);
}

static void set_str(char **dst, const char *src)
{
	free(*dst);
	*dst = src ? xp_strdup(src) : NULL;
}

int xp_pf_set(struct xp_job *j, size_t gi, int f, const char *text, char *note, size_t nlen,
	      struct xp_err *err)
{
	if (note && nlen)
		note[0] = '\0';
	if (!j || gi >= j->n_groups || f < 0 || f >= XP_PF_COUNT)
		return xp_errf(err, "no such field");
	/* The flag parser checks the one value: the form refuses what `xpool place` refuses. */
	struct xp_job_flags fl = {0};
	const char *t = text ? text : "";
	const char *v = *t ? t : NULL; /* "": cleared */
	switch (f) {
	case XP_PF_REPLICAS: fl.replicas = t; break;
	case XP_PF_GANG_MIN: fl.gang_min = v; break;
	case XP_PF_DEVICES: fl.devices = t; break;
	case XP_PF_VENDOR: fl.vendor = v; break;
	case XP_PF_MODEL: fl.model = v; break;
	case XP_PF_MEMORY: fl.memory = v ? v : "0"; break;
	case XP_PF_SLICE:
		/* "share:N" is how the form shows a soft share: typed back, it stays one. */
		if (v && strncmp(v, "share:", 6) == 0)
			fl.share = v + 6;
		else
			fl.slice = v;
		break;
	case XP_PF_NUMA: fl.numa = t; break;
	case XP_PF_NETWORK: fl.network = t; break;
	case XP_PF_SAME_GROUP: fl.same_group = t; break;
	case XP_PF_HOMOGENEOUS: fl.homogeneous = t; break;
	case XP_PF_LABELS: fl.labels = v; break;
	default: break;
	}
	struct xp_job *tmp = xp_job_from_flags(&fl, err);
	if (!tmp)
		return field_error(err, f);
	struct xp_task_group *g = &j->groups[gi];
	const struct xp_task_group *n = &tmp->groups[0];
	switch (f) {
	case XP_PF_REPLICAS:
		/* A gang of all replicas stays all of them; a smaller minimum stays unless too big. */
		if (g->gang_min == g->replicas || n->replicas < g->gang_min)
			g->gang_min = n->replicas;
		g->replicas = n->replicas;
		break;
	case XP_PF_GANG_MIN:
		/* "" (no flag: the parser's default is every replica) is all of this group's. */
		if (!v) {
			g->gang_min = g->replicas;
			break;
		}
		if (n->gang_min < 1 || n->gang_min > g->replicas) {
			xp_errf(err, "%s: expected 1 to the %d replicas, got %d", names[f], g->replicas, n->gang_min);
			xp_job_free(tmp);
			return -1;
		}
		g->gang_min = n->gang_min;
		break;
	case XP_PF_DEVICES:
		g->devices = n->devices;
		if (n->devices > 0 && (g->slice || g->share_pct)) {
			set_str(&g->slice, NULL);
			g->share_pct = 0;
			if (note)
				snprintf(note, nlen, "slice cleared: a replica gets whole devices or one slice");
		}
		break;
	case XP_PF_VENDOR: set_str(&g->vendor, n->vendor); break;
	case XP_PF_MODEL: set_str(&g->model, n->model); break;
	case XP_PF_MEMORY: g->memory_mib = n->memory_mib; break;
	case XP_PF_SLICE:
		set_str(&g->slice, n->slice);
		g->share_pct = n->share_pct;
		if ((n->slice || n->share_pct) && g->devices > 0) {
			g->devices = 0;
			if (note)
				snprintf(note, nlen, "devices set to 0: a replica gets whole devices or one slice");
		} else if (!n->slice && !n->share_pct && g->devices == 0) {
			g->devices = 1;
			if (note)
				snprintf(note, nlen, "devices set to 1: no slice asked");
		}
		break;
	case XP_PF_NUMA: g->numa = n->numa; break;
	case XP_PF_NETWORK: g->network = n->network; break;
	case XP_PF_SAME_GROUP: g->same_group = n->same_group; break;
	case XP_PF_HOMOGENEOUS: g->homogeneous = n->homogeneous; break;
	case XP_PF_LABELS:
		xp_labels_clear(&g->labels);
		for (size_t i = 0; i < n->labels.n; i++)
			xp_labels_set(&g->labels, n->labels.keys[i], n->labels.values[i]);
		break;
	default: break;
	}
	xp_job_free(tmp);
	return 0;
}

int xp_pf_cycle(struct xp_job *j, size_t gi, int f, int dir)
{
	if (!j || gi >= j->n_groups || !xp_pf_is_choice(f))
		return -1;
	struct xp_task_group *g = &j->groups[gi];
	int step = dir < 0 ? -1 : 1;
	switch (f) {
	case XP_PF_NUMA: g->numa = (g->numa + step + XP_NUMA_POLICY_COUNT) % XP_NUMA_POLICY_COUNT; break;
	case XP_PF_NETWORK: g->network = (g->network + step + XP_NET_COUNT) % XP_NET_COUNT; break;
	case XP_PF_SAME_GROUP: g->same_group = !g->same_group; break;
	case XP_PF_HOMOGENEOUS: g->homogeneous = !g->homogeneous; break;
	default: break;
	}
	return 0;
}
