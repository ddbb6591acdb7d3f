/* engine_merge.c: an engine's node and the same machine's hardware made one node. */
#include "engine_merge.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "istr.h"
#include "nameset.h"
#include "xp.h"

/* The engine a source names, or NULL. */
static const char *engine_name(const char *source)
{
	if (!source)
		return NULL;
	if (strcmp(source, "slurm") == 0)
		return "slurm";
	if (strncmp(source, "k8s:", 4) == 0)
		return "k8s";
	return NULL;
}

const char *xp_engine_of(const struct xp_node *n)
{
	return engine_name(n->source);
}

/* A model reduced to what two namings of one product share: lower-case letters and digits,
 * without the vendor and brand words ("NVIDIA H100 80GB HBM3" -> "h10080gbhbm3", Slurm's
 * "h100" -> "h100", GPU feature discovery's "NVIDIA-H100-80GB-HBM3" -> "h10080gbhbm3"). */
static void model_key(const char *m, char *out, size_t len)
{
	static const char *const brand[] = {"nvidia", "geforce", "tesla", "huawei", "ascend", "amd",
					    "instinct", "radeon", "cambricon", "hygon", NULL};
	size_t k = 0;
	for (const char *s = m ? m : ""; *s && k + 1 < len; s++)
		if (isalnum((unsigned char)*s))
			out[k++] = (char)tolower((unsigned char)*s);
	out[k] = '\0';
	for (const char *const *b = brand; *b; b++) {
		char *at;
		size_t bl = strlen(*b);
		while ((at = strstr(out, *b)))
			memmove(at, at + bl, strlen(at + bl) + 1);
	}
}

/* A model that names only the kind ("gpu" of an untyped Slurm GRES, "NVIDIA GPU" of a node
 * without GPU feature discovery): any device of the vendor is one. */
static bool generic(const char *key)
{
	static const char *const kinds[] = {"", "gpu", "npu", "mlu", "dcu", "gcu", "xpu", NULL};
	for (const char *const *p = kinds; *p; p++)
		if (strcmp(key, *p) == 0)
			return true;
	return false;
}

/* The product in a model: its first word with a digit, lower case, without a brand in front
 * ("NVIDIA-A100-SXM4-80GB" and "A100 80GB" -> "a100", "Ascend910" -> "910", "910B3" -> "910b3");
 * "" when no word has a digit. */
static void product_of(const char *m, char *out, size_t len)
{
	out[0] = '\0';
	for (const char *s = m ? m : ""; *s;) {
		while (*s && !isalnum((unsigned char)*s))
			s++;
		char w[64];
		size_t k = 0;
		bool digit = false;
		for (; isalnum((unsigned char)*s); s++)
			if (k + 1 < sizeof w) {
				w[k++] = (char)tolower((unsigned char)*s);
				digit |= isdigit((unsigned char)*s) != 0;
			}
		w[k] = '\0';
		if (!digit)
			continue;
		char key[64];
		model_key(w, key, sizeof key);
		snprintf(out, len, "%s", key);
		return;
	}
}

/* One product named two ways: equal, or one the other with a suffix that starts with a letter
 * ("910b" of "910b3", "h100" of "h100nvl"; never "a10" of "a100"). */
static bool same_product(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > lb) {
		const char *t = a;
		a = b;
		b = t;
		size_t l = la;
		la = lb;
		lb = l;
	}
	return la && strncmp(a, b, la) == 0 && (la == lb || isalpha((unsigned char)b[la]));
}

/* An engine's device as the hardware side's devices are compared with it. */
struct kind {
	const char *vendor; /* NULL: any */
	char key[128];      /* model_key of its model */
	char product[64];   /* product_of its model */
	bool any;           /* generic: any device of the vendor */
};

static void kind_of(const struct xp_device *d, struct kind *k)
{
	k->vendor = d->vendor;
	model_key(d->model, k->key, sizeof k->key);
	product_of(d->model, k->product, sizeof k->product);
	k->any = generic(k->key);
}

static bool fits(const struct kind *k, const struct xp_device *d)
{
	if (k->vendor && d->vendor && strcasecmp(k->vendor, d->vendor) != 0)
		return false;
	if (k->any)
		return true;
	char p[64];
	product_of(d->model, p, sizeof p);
	if (k->product[0] && p[0])
		return same_product(k->product, p);
	char key[128];
	model_key(d->model, key, sizeof key);
	return key[0] && (strstr(key, k->key) || strstr(k->key, key));
}

/* A MIG instance an engine counts as a device of its own (Kubernetes' nvidia.com/mig-*): a
 * slice of a GPU, not a GPU. */
static bool slice_kind(const struct xp_device *d)
{
	return d->model && strstr(d->model, " MIG ");
}

static void warn(struct xp_node *n, char *w)
{
	xp_strv_add_once(&n->warnings, &n->n_warnings, w);
	free(w);
}

/* How the engine names a kind of device in a warning: Slurm's GRES ("Gres gpu:h100:8"), or
 * Kubernetes' capacity ("capacity 8 NVIDIA-H100-80GB-HBM3"). */
static char *engine_says(const char *engine, const struct xp_device *d, size_t count)
{
	const char *model = d->model ? d->model : "?";
	if (strcmp(engine, "slurm") == 0) {
		const char *g = d->n_os_devices ? d->os_devices[0] : "gpu";
		if (strcmp(g, model) == 0)
			return xp_asprintf("Gres %s:%zu", g, count);
		return xp_asprintf("Gres %s:%s:%zu", g, model, count);
	}
	return xp_asprintf("capacity %zu %s", count, model);
}

static void copy_alloc(struct xp_device *to, const struct xp_alloc *a)
{
	to->allocs = xp_realloc(to->allocs, (to->n_allocs + 1) * sizeof *to->allocs);
	to->allocs[to->n_allocs++] = (struct xp_alloc){
		.slice = xp_strdup(a->slice),
		.owner = xp_strdup(a->owner),
		.memory_mib = a->memory_mib,
		.share_pct = a->share_pct,
		.uuid = xp_strdup(a->uuid),
	};
}

/* The hardware's whole-device allocations go: who holds a device is the engine's to say. */
static void drop_whole_allocs(struct xp_device *d)
{
	size_t k = 0;
	for (size_t i = 0; i < d->n_allocs; i++) {
		struct xp_alloc *a = &d->allocs[i];
		if (a->slice) {
			d->allocs[k++] = *a;
			continue;
		}
		free(a->owner);
		free(a->uuid);
	}
	d->n_allocs = k;
	if (!k) {
		free(d->allocs);
		d->allocs = NULL;
	}
}

/* True when no job holds the device whole (a MIG instance the hardware shows is no holder). */
static bool is_free(const struct xp_device *d)
{
	for (size_t i = 0; i < d->n_allocs; i++)
		if (!d->allocs[i].slice)
			return false;
	return true;
}

/* Maps eng's allocations onto m's devices and says where the two disagree. */
static void merge_devices(struct xp_node *m, const struct xp_node *eng, const char *engine, const char *who)
{
	size_t ne = eng->n_devices, nm = m->n_devices;
	for (size_t i = 0; i < nm; i++)
		drop_whole_allocs(&m->devices[i]);
	struct kind *kinds = xp_calloc(ne ? ne : 1, sizeof *kinds);
	/* group[i]: the first engine device of i's kind (the kind's representative). */
	size_t *group = xp_calloc(ne ? ne : 1, sizeof *group);
	size_t *mgroup = xp_calloc(nm ? nm : 1, sizeof *mgroup); /* ne: of no engine kind */
	bool *taken = xp_calloc(nm ? nm : 1, sizeof *taken);
	size_t slices = 0;
	for (size_t i = 0; i < ne; i++) {
		const struct xp_device *d = &eng->devices[i];
		kind_of(d, &kinds[i]);
		group[i] = i;
		for (size_t j = 0; j < i; j++)
			if (group[j] == j && !slice_kind(&eng->devices[j]) &&
			    ((d->vendor == eng->devices[j].vendor) ||
			     (d->vendor && eng->devices[j].vendor && !strcasecmp(d->vendor, eng->devices[j].vendor))) &&
			    strcmp(kinds[i].key, kinds[j].key) == 0) {
				group[i] = j;
				break;
			}
	}
	/* Each hardware device counts for the first engine kind it fits. */
	for (size_t k = 0; k < nm; k++) {
		mgroup[k] = ne;
		for (size_t i = 0; i < ne; i++)
			if (group[i] == i && !slice_kind(&eng->devices[i]) && fits(&kinds[i], &m->devices[k])) {
				mgroup[k] = i;
				break;
			}
	}
	/* Counts by kind: the engine's configuration against the devices found. */
	for (size_t i = 0; i < ne; i++) {
		if (group[i] != i)
			continue;
		if (slice_kind(&eng->devices[i])) {
			for (size_t j = i; j < ne; j++)
				slices += slice_kind(&eng->devices[j]) && group[j] == i;
			continue;
		}
		size_t e = 0, f = 0, first = nm;
		for (size_t j = i; j < ne; j++)
			e += group[j] == i;
		for (size_t k = 0; k < nm; k++)
			if (mgroup[k] == i) {
				f++;
				if (first == nm)
					first = k;
			}
		if (e != f) {
			char *says = engine_says(engine, &eng->devices[i], e);
			if (f)
				warn(m, xp_asprintf("%s: %s but %s found %zu (%s)", engine, says, who, f,
						    m->devices[first].model ? m->devices[first].model : "?"));
			else
				warn(m, xp_asprintf("%s: %s but %s found none of them", engine, says, who));
			free(says);
		}
	}
	if (slices)
		warn(m, xp_asprintf("%s: %zu MIG instances counted as devices are not mapped onto %s's GPUs", engine,
				    slices, who));
	/* Devices the engine does not count at all: it never hands them out. */
	for (size_t k = 0; k < nm; k++) {
		if (mgroup[k] != ne || taken[k])
			continue;
		size_t f = 0;
		for (size_t j = k; j < nm; j++)
			if (mgroup[j] == ne && !taken[j] && m->devices[j].model == m->devices[k].model) {
				taken[j] = true;
				f++;
			}
		warn(m, xp_asprintf("%s: %s found %zu %s that %s", engine, who, f,
				    m->devices[k].model ? m->devices[k].model : "devices",
				    strcmp(engine, "slurm") == 0 ? "no Gres names" : "no capacity names"));
	}
	memset(taken, 0, (nm ? nm : 1) * sizeof *taken);
	/* Allocations: the device the engine names (uuid, then vendor index), else the first free
	 * device of the kind. */
	size_t *unplaced = xp_calloc(ne ? ne : 1, sizeof *unplaced);
	for (size_t i = 0; i < ne; i++) {
		const struct xp_device *d = &eng->devices[i];
		if (!d->n_allocs || slice_kind(d))
			continue;
		size_t at = nm;
		if (d->uuid) {
			for (size_t k = 0; k < nm && at == nm; k++)
				if (m->devices[k].uuid && strcmp(m->devices[k].uuid, d->uuid) == 0)
					at = k;
			if (at == nm)
				warn(m, xp_asprintf("%s: %s holds %s, which %s does not have", engine,
						    d->allocs[0].owner ? d->allocs[0].owner : "a job", d->uuid, who));
		}
		if (at == nm && d->vendor_index >= 0)
			for (size_t k = 0; k < nm && at == nm; k++)
				if (!taken[k] && is_free(&m->devices[k]) && m->devices[k].vendor_index == d->vendor_index &&
				    mgroup[k] == group[i])
					at = k;
		for (size_t k = 0; k < nm && at == nm; k++)
			if (!taken[k] && is_free(&m->devices[k]) && mgroup[k] == group[i])
				at = k;
		if (at == nm) {
			unplaced[group[i]]++;
			continue;
		}
		taken[at] = true;
		for (size_t a = 0; a < d->n_allocs; a++)
			copy_alloc(&m->devices[at], &d->allocs[a]);
	}
	for (size_t i = 0; i < ne; i++)
		if (unplaced[i]) {
			const struct xp_device *d = &eng->devices[i];
			warn(m, xp_asprintf("%s: %zu %s in use beyond what %s has free", engine, unplaced[i],
					    d->model ? d->model : "?", who));
		}
	free(unplaced);
	free(kinds);
	free(group);
	free(mgroup);
	free(taken);
}

struct xp_node *xp_engine_merge(const struct xp_node *eng, const struct xp_node *hw, const char *who)
{
	const char *engine = xp_engine_of(eng);
	if (!engine)
		engine = eng->source ? eng->source : "engine";
	struct xp_node *m = xp_node_clone(hw);
	/* The engine's name: its jobs, its node lists and the requests written for it say that one
	 * (a machine calling itself gpu01.example.org is Slurm's gpu01). */
	if (eng->name && (!m->name || strcmp(m->name, eng->name) != 0)) {
		free(m->name);
		m->name = xp_strdup(eng->name);
	}
	/* The engine's word on the node: drained, down or cordoned there means no new work, whatever
	 * the hardware says; up there leaves the hardware's own state (degraded by a failed device). */
	if (eng->state != XP_NODE_UP)
		m->state = eng->state;
	for (size_t i = 0; i < eng->governance.n; i++)
		xp_labels_set(&m->governance, eng->governance.keys[i], eng->governance.values[i]);
	for (size_t i = 0; i < eng->facts.n; i++)
		if (!xp_labels_get(&m->facts, eng->facts.keys[i]))
			xp_labels_set(&m->facts, eng->facts.keys[i], eng->facts.values[i]);
	xp_labels_set(&m->facts, "engine", eng->source ? eng->source : engine);
	char **loc[] = {&m->zone, &m->rack, &m->sw};
	char *const eloc[] = {eng->zone, eng->rack, eng->sw};
	for (int i = 0; i < 3; i++)
		if (eloc[i]) {
			free(*loc[i]);
			*loc[i] = xp_strdup(eloc[i]);
		}
	if (!XP_HAS(m->cost_per_hour))
		m->cost_per_hour = eng->cost_per_hour;
	for (size_t i = 0; i < eng->n_warnings; i++)
		xp_strv_add_once(&m->warnings, &m->n_warnings, eng->warnings[i]);
	merge_devices(m, eng, engine, who);
	return m;
}

/* The hardware source's name in a warning. */
static char *who_of(const struct xp_node *n, bool agents)
{
	if (agents)
		return xp_asprintf("the agent %s", n->source ? n->source : "?");
	/* A snapshot keeps each node's own source (an agent's URL, a replay): the file says more. */
	if (n->from_file)
		return xp_asprintf("the inventory %s", n->from_file);
	if (n->source && strncmp(n->source, "replay:", 7) == 0)
		return xp_asprintf("the replay %s", n->source + 7);
	return xp_asprintf("the source %s", n->source ? n->source : "?");
}

/* The engine's node named n's name, or its short name ("gpu01" for "gpu01.example.org": Slurm
 * and Kubernetes often name nodes by short name where the machine calls itself by its full one). */
static void *find(const struct xp_nameset *names, const char *name)
{
	void *v = xp_nameset_get(names, name);
	const char *dot = strchr(name, '.');
	if (v || !dot || dot == name)
		return v;
	char *s = xp_strndup(name, (size_t)(dot - name));
	v = xp_nameset_get(names, s);
	free(s);
	return v;
}

void xp_engine_join(struct xp_cluster *c, struct xp_cluster *hw, bool agents)
{
	/* By name through a hash: the value is the node's place in c plus one (c->nodes moves as
	 * nodes are added; places do not). */
	struct xp_nameset names = {0};
	const char *engine = NULL;
	size_t base = c->n_nodes;
	/* An engine that names its nodes by full name ("gpu01.example.org") beside hardware that
	 * calls itself by its short one: the short names too (held here, the set borrows them). */
	char **shorts = NULL;
	size_t n_shorts = 0;
	for (size_t i = 0; i < base; i++) {
		struct xp_node *n = c->nodes[i];
		if (n->name)
			xp_nameset_put(&names, n->name, (void *)(uintptr_t)(i + 1));
		const char *dot = n->name && xp_engine_of(n) ? strchr(n->name, '.') : NULL;
		if (dot && dot != n->name) {
			char *sn = xp_strndup(n->name, (size_t)(dot - n->name));
			if (!xp_nameset_get(&names, sn) && xp_nameset_put(&names, sn, (void *)(uintptr_t)(i + 1))) {
				shorts = xp_realloc(shorts, (n_shorts + 1) * sizeof *shorts);
				shorts[n_shorts++] = sn;
			} else
				free(sn);
		}
		/* An engine's node, or one merged already (a replay's before the agents'). */
		if (!engine)
			engine = xp_engine_of(n) ? xp_engine_of(n) : engine_name(xp_labels_get(&n->facts, "engine"));
	}
	/* A merged node is new: the engine's node it replaces goes after the loop, as names borrow it. */
	struct xp_node **gone = NULL;
	size_t n_gone = 0;
	for (size_t i = 0; i < hw->n_nodes; i++) {
		struct xp_node *n = hw->nodes[i];
		hw->nodes[i] = NULL;
		uintptr_t at = (uintptr_t)find(&names, n->name);
		struct xp_node *had = at ? c->nodes[at - 1] : NULL;
		if (had && xp_engine_of(had)) {
			if (n->state == XP_NODE_UNREACHABLE) {
				/* An agent that is down: what the engine says stands. */
				warn(had, xp_asprintf("agent %s did not answer: the devices shown are %s's", n->source,
						      xp_engine_of(had)));
			} else {
				char *who = who_of(n, agents);
				c->nodes[at - 1] = xp_engine_merge(had, n, who);
				free(who);
				gone = xp_realloc(gone, (n_gone + 1) * sizeof *gone);
				gone[n_gone++] = had;
			}
			xp_node_free(n);
			continue;
		}
		if (had) {
			/* One name, two machines (or one machine seen twice): keep what the base source
			 * said and say so, rather than let one silently replace the other. */
			warn(had, agents ? xp_asprintf("agent %s also serves a node named %s; left out", n->source, n->name)
					 : xp_asprintf("%s also holds a node named %s; left out", n->source, n->name));
			xp_node_free(n);
			continue;
		}
		if (engine && n->state != XP_NODE_UNREACHABLE) {
			/* A node the engine does not know: its hardware is real, what is in use there is
			 * not known. A shared node (an agent's, kept between loads) is never changed: a copy. */
			struct xp_node *k = xp_node_clone(n);
			xp_node_free(n);
			n = k;
			warn(n, xp_asprintf("not a node of %s: what is in use on it is not known", engine));
		}
		xp_cluster_add(c, n);
		xp_nameset_put(&names, n->name, (void *)(uintptr_t)c->n_nodes);
	}
	xp_nameset_clear(&names);
	for (size_t i = 0; i < n_shorts; i++)
		free(shorts[i]);
	free(shorts);
	for (size_t i = 0; i < n_gone; i++)
		xp_node_free(gone[i]);
	free(gone);
	hw->n_nodes = 0;
}
