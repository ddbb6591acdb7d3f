/* slurm.c: Slurm's node records (`scontrol -d show node -o`) into the model. */
#include "slurm.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "istr.h"
#include "nameset.h"
#include "qmodel.h"
#include "run.h"
#include "slurm_json.h"

#define MAX_FIELDS 512 /* a 22.05 node record has about 50 */

static bool has_word(const char *state, const char *word)
{
	size_t wl = strlen(word);
	for (const char *s = state; *s;) {
		size_t l = strcspn(s, "+");
		size_t k = l;
		/* A trailing '*' (not responding), '~' (powered down), '#' (powering up), '!',
		 * '%' or '$' marks the same word in sinfo's short forms. */
		while (k > 0 && strchr("*~#!%$@^-", s[k - 1]))
			k--;
		if (k == wl && strncasecmp(s, word, wl) == 0)
			return true;
		s += l + (s[l] == '+');
	}
	return false;
}

int xp_slurm_node_state(const char *state)
{
	if (!state || !*state)
		return XP_NODE_UNREACHABLE;
	/* Down or failed: no job starts there. Not responding ('*' after the base state) too,
	 * unless the node is powered down or powering up: then Slurm has not heard from it
	 * because it is off or booting (a CLOUD node stays so until it registers, and Slurm
	 * marks it DOWN itself when ResumeTimeout passes). */
	size_t base = strcspn(state, "+");
	bool asleep = has_word(state, "POWERED_DOWN") || has_word(state, "POWERING_UP") ||
		      has_word(state, "POWER_DOWN") || has_word(state, "POWERING_DOWN");
	bool silent = (base > 0 && state[base - 1] == '*') || has_word(state, "NOT_RESPONDING");
	if (has_word(state, "DOWN") || has_word(state, "FAIL") || has_word(state, "FAILING") ||
	    has_word(state, "FUTURE") || has_word(state, "INVAL") || (silent && !asleep))
		return XP_NODE_DOWN;
	/* Drained, draining, and a reboot asked for: no new job starts there, the running go on. */
	if (has_word(state, "DRAIN") || has_word(state, "DRAINED") || has_word(state, "DRAINING") ||
	    has_word(state, "REBOOT_REQUESTED") || has_word(state, "REBOOT_ISSUED"))
		return XP_NODE_DRAINING;
	/* A CLOUD node powered down (or powering down, or up) is capacity Slurm starts on demand
	 * (its ResumeProgram), so it is up: a job placed there runs once the node boots. */
	if (has_word(state, "IDLE") || has_word(state, "MIXED") || has_word(state, "ALLOCATED") ||
	    has_word(state, "ALLOC") || has_word(state, "COMPLETING") || has_word(state, "PLANNED") ||
	    has_word(state, "RESERVED") || has_word(state, "MAINT") || has_word(state, "CLOUD") ||
	    has_word(state, "POWERED_DOWN") || has_word(state, "POWERING_UP"))
		return XP_NODE_UP;
	/* UNKNOWN (slurmctld has not heard from the node since it started) and anything newer. */
	return XP_NODE_UNREACHABLE;
}

int xp_slurm_gres_is_device(const char *name)
{
	static const char *const dev[] = {"gpu", "npu", "mlu", "dcu", "gcu", "xpu", NULL};
	for (int i = 0; dev[i]; i++)
		if (strcasecmp(name, dev[i]) == 0)
			return 1;
	return 0;
}

static bool prefix_ci(const char *s, const char *p)
{
	return strncasecmp(s, p, strlen(p)) == 0;
}

const char *xp_slurm_gres_vendor(const char *name, const char *type)
{
	if (!xp_slurm_gres_is_device(name))
		return NULL;
	if (strcasecmp(name, "npu") == 0)
		return "Huawei";
	if (strcasecmp(name, "mlu") == 0)
		return "Cambricon";
	if (strcasecmp(name, "dcu") == 0)
		return "Hygon";
	if (!type || !*type)
		return NULL;
	if (strcasecmp(name, "gpu") != 0)
		return NULL;
	/* The type is the site's own name (gres.conf Type=, or the model AutoDetect found):
	 * NVIDIA's data-centre and workstation names, and MIG profiles ("1g.10gb"). */
	static const char *const nv[] = {"nvidia", "tesla", "a100", "a800", "a40", "a30", "a10", "a16", "a2",
					 "h100", "h800", "h200", "h20", "gh200", "b100", "b200", "gb200",
					 "l40", "l20", "l4", "t4", "v100", "p100", "p40", "rtx", "geforce",
					 "quadro", NULL};
	for (int i = 0; nv[i]; i++)
		if (prefix_ci(type, nv[i]))
			return "NVIDIA";
	if (isdigit((unsigned char)type[0]) && type[1] == 'g' && type[2] == '.')
		return "NVIDIA";
	if (prefix_ci(type, "amd") || prefix_ci(type, "mi") || prefix_ci(type, "radeon") ||
	    prefix_ci(type, "instinct"))
		return "AMD";
	return NULL;
}

/* One key=value field of a record, pointing into the caller's copy of the line. */
struct field {
	const char *key, *value;
};

/* A field starts at a word "Key=": Key is letters, digits and ":_/" starting with a letter. */
static bool starts_field(const char *w)
{
	if (!isalpha((unsigned char)*w))
		return false;
	for (const char *s = w; *s && *s != ' '; s++) {
		if (*s == '=')
			return true;
		if (!isalnum((unsigned char)*s) && !strchr(":_/", *s))
			return false;
	}
	return false;
}

/* Splits a record line (modified in place) into fields; a word that starts no field belongs
 * to the value before it ("Reason=maint [root@...]", "OS=Linux 6.1.0 #1 SMP"). */
static int split_fields(char *line, struct field *f, size_t *nf, struct xp_err *err)
{
	*nf = 0;
	char *s = line;
	while (*s == ' ')
		s++;
	char *last_end = NULL;
	while (*s) {
		char *w = s;
		size_t l = strcspn(s, " ");
		char *next = s + l;
		while (*next == ' ')
			next++;
		if (starts_field(w)) {
			if (*nf >= MAX_FIELDS)
				return xp_errf(err, "more than %d fields", MAX_FIELDS);
			if (last_end)
				*last_end = '\0';
			char *eq = strchr(w, '=');
			*eq = '\0';
			f[*nf].key = w;
			f[*nf].value = eq + 1;
			(*nf)++;
		} else if (*nf == 0) {
			return xp_errf(err, "'%.40s' is not a Key=Value field", w);
		}
		last_end = w + l;
		s = next;
	}
	if (last_end)
		*last_end = '\0';
	return 0;
}

/* The first field named key (the first wins: a later one can only come from free text). */
static const char *get(const struct field *f, size_t nf, const char *key)
{
	for (size_t i = 0; i < nf; i++)
		if (strcmp(f[i].key, key) == 0)
			return f[i].value;
	return NULL;
}

/* A count: decimal digits only, at most max. -1 when not one. */
static int64_t count(const char *s, size_t len, int64_t max)
{
	if (len == 0 || len > 12)
		return -1;
	int64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v <= max ? v : -1;
}

static bool absent(const char *v)
{
	return !v || !*v || strcmp(v, "N/A") == 0 || strcmp(v, "(null)") == 0 || strcmp(v, "n/a") == 0;
}

/* One GRES entry: "gpu:h100:8(S:0-1)", "npu:8", "gpu", "mlu:mlu370:2(IDX:0-1)". */
struct gres {
	char name[64], type[128];
	int64_t count;
	char idx[512]; /* the IDX: list when given, else empty */
	bool idx_given;
};

/* Parses the entry s[0..len); -1 with err set. */
static int gres_entry(const char *s, size_t len, struct gres *g, struct xp_err *err)
{
	memset(g, 0, sizeof *g);
	size_t body = len;
	const char *paren = memchr(s, '(', len);
	if (paren) {
		body = (size_t)(paren - s);
		if (s[len - 1] != ')')
			return xp_errf(err, "'%.*s': no ')' closes '('", (int)(len > 60 ? 60 : len), s);
		const char *in = paren + 1;
		size_t il = len - body - 2;
		/* "(S:0-1)" names sockets, "(IDX:0-3)" the indices in use, "(CNT:4)" a count. */
		if (il > 4 && strncmp(in, "IDX:", 4) == 0 && !(il == 7 && strncmp(in + 4, "N/A", 3) == 0)) {
			if (il - 4 >= sizeof g->idx)
				return xp_errf(err, "'%.40s...': the IDX list is too long", s);
			memcpy(g->idx, in + 4, il - 4);
			g->idx_given = true;
		}
	}
	if (body == 0)
		return xp_errf(err, "an empty GRES entry");
	const char *c1 = memchr(s, ':', body);
	size_t nl = c1 ? (size_t)(c1 - s) : body;
	if (nl == 0 || nl >= sizeof g->name)
		return xp_errf(err, "'%.*s': no GRES name", (int)(body > 60 ? 60 : body), s);
	memcpy(g->name, s, nl);
	for (size_t i = 0; i < nl; i++)
		if (!isalnum((unsigned char)g->name[i]) && g->name[i] != '_' && g->name[i] != '-')
			return xp_errf(err, "'%.*s': the GRES name is not a word", (int)(body > 60 ? 60 : body), s);
	g->count = 1;
	if (!c1)
		return 0;
	const char *rest = c1 + 1;
	size_t rl = body - nl - 1;
	const char *c2 = memchr(rest, ':', rl);
	const char *num = rest;
	size_t numl = rl;
	if (c2) {
		size_t tl = (size_t)(c2 - rest);
		if (tl == 0 || tl >= sizeof g->type)
			return xp_errf(err, "'%.*s': bad GRES type", (int)(body > 60 ? 60 : body), s);
		memcpy(g->type, rest, tl);
		num = c2 + 1;
		numl = rl - tl - 1;
	} else if (rl > 0 && !isdigit((unsigned char)rest[0])) {
		/* "gpu:h100": a type, one of it. */
		if (rl >= sizeof g->type)
			return xp_errf(err, "'%.60s': bad GRES type", s);
		memcpy(g->type, rest, rl);
		return 0;
	}
	for (const char *t = g->type; *t; t++)
		if ((unsigned char)*t < 0x21 || *t == '(' || *t == ')' || *t == ',')
			return xp_errf(err, "'%.60s': bad GRES type", s);
	/* Counts of non-device GRES may carry a K/M/G suffix (bandwidth, shards): not ours. */
	if (!xp_slurm_gres_is_device(g->name)) {
		g->count = 0;
		return 0;
	}
	g->count = count(num, numl, XP_MAX_DEVICES);
	if (g->count < 0)
		return xp_errf(err, "'%.*s': the count is not a number up to %d", (int)(body > 60 ? 60 : body), s,
			       XP_MAX_DEVICES);
	return 0;
}

/* Calls fn on each entry of a GRES list, split at commas outside parentheses. */
static int gres_list(const char *v, int (*fn)(void *, const struct gres *, struct xp_err *), void *arg,
		     struct xp_err *err)
{
	if (absent(v))
		return 0;
	size_t i = 0, start = 0, depth = 0, n = strlen(v);
	for (; i <= n; i++) {
		if (i < n && v[i] == '(')
			depth++;
		else if (i < n && v[i] == ')') {
			if (depth == 0)
				return xp_errf(err, "')' without '('");
			depth--;
		} else if (i == n || (v[i] == ',' && depth == 0)) {
			if (i == n && depth)
				return xp_errf(err, "'(' without ')'");
			struct gres g;
			if (gres_entry(v + start, i - start, &g, err) < 0 || fn(arg, &g, err) < 0)
				return -1;
			start = i + 1;
		}
	}
	return 0;
}

static int add_devices(void *arg, const struct gres *g, struct xp_err *err)
{
	struct xp_node *n = arg;
	if (!xp_slurm_gres_is_device(g->name))
		return 0;
	if (n->n_devices + (size_t)g->count > XP_MAX_DEVICES)
		return xp_errf(err, "more than %d devices on the node", XP_MAX_DEVICES);
	int same = 0; /* devices of this GRES name so far: the index Slurm's IDX lists count */
	for (size_t i = 0; i < n->n_devices; i++)
		if (n->devices[i].os_devices && strcmp(n->devices[i].os_devices[0], g->name) == 0)
			same++;
	for (int64_t k = 0; k < g->count; k++) {
		struct xp_device *d = xp_node_add_device(n);
		xp_istr_set(&d->vendor, xp_slurm_gres_vendor(g->name, g->type));
		xp_istr_set(&d->model, g->type[0] ? g->type : g->name);
		d->vendor_index = same + (int)k;
		d->partition = XP_PART_WHOLE;
		/* The GRES name, as the OS device Slurm hands out ("gpu" of --gres=gpu:...). */
		xp_strv_add(&d->os_devices, &d->n_os_devices, g->name);
	}
	return 0;
}

static void mark_used(struct xp_device *d)
{
	if (d->n_allocs)
		return;
	d->allocs = xp_calloc(1, sizeof *d->allocs);
	d->n_allocs = 1;
	d->allocs[0].memory_mib = -1;
}

static bool dev_is(const struct xp_device *d, const struct gres *g)
{
	if (!d->os_devices || strcmp(d->os_devices[0], g->name) != 0)
		return false;
	return !g->type[0] || (d->model && strcmp(d->model, g->type) == 0);
}

static int mark_in_use(void *arg, const struct gres *g, struct xp_err *err)
{
	struct xp_node *n = arg;
	if (!xp_slurm_gres_is_device(g->name) || g->count == 0)
		return 0;
	int64_t left = g->count;
	if (g->idx_given) {
		/* "0-3,6": indices among the node's devices of this GRES name. */
		for (const char *s = g->idx; *s;) {
			char *end;
			long a = strtol(s, &end, 10), b = a;
			if (end == s || a < 0)
				return xp_errf(err, "'%s': bad IDX list", g->idx);
			if (*end == '-') {
				s = end + 1;
				b = strtol(s, &end, 10);
				if (end == s || b < a)
					return xp_errf(err, "'%s': bad IDX list", g->idx);
			}
			if (b >= XP_MAX_DEVICES)
				return xp_errf(err, "'%s': an index past %d", g->idx, XP_MAX_DEVICES);
			for (long k = a; k <= b; k++) {
				bool found = false;
				for (size_t i = 0; i < n->n_devices; i++) {
					struct xp_device *d = &n->devices[i];
					if (d->os_devices && strcmp(d->os_devices[0], g->name) == 0 && d->vendor_index == k) {
						mark_used(d);
						found = true;
						left--;
					}
				}
				if (!found) {
					char *w = xp_asprintf("slurm: GresUsed %s index %ld is not among the node's Gres", g->name, k);
					xp_strv_add_once(&n->warnings, &n->n_warnings, w);
					free(w);
				}
			}
			s = end;
			if (*s == ',')
				s++;
			else if (*s)
				return xp_errf(err, "'%s': bad IDX list", g->idx);
		}
		return 0;
	}
	/* No indices (no slurmd has reported them): the first free ones of the type. */
	for (size_t i = 0; i < n->n_devices && left > 0; i++)
		if (dev_is(&n->devices[i], g) && !n->devices[i].n_allocs) {
			mark_used(&n->devices[i]);
			left--;
		}
	if (left > 0) {
		char *w = xp_asprintf("slurm: GresUsed says %lld %s%s%s in use, more than Gres declares",
				      (long long)g->count, g->name, g->type[0] ? ":" : "", g->type);
		xp_strv_add_once(&n->warnings, &n->n_warnings, w);
		free(w);
	}
	return 0;
}

/* A whole number field; -1 with err set when present and not one. */
static int int_field(const struct field *f, size_t nf, const char *key, int64_t max, int64_t *out, struct xp_err *err)
{
	const char *v = get(f, nf, key);
	*out = -1;
	if (absent(v))
		return 0;
	int64_t k = count(v, strlen(v), max);
	if (k < 0)
		return xp_errf(err, "field %s: '%.40s' is not a number up to %lld", key, v, (long long)max);
	*out = k;
	return 0;
}

/* One record into a node; NULL with err naming the field. */
static struct xp_node *node_from(const struct field *f, size_t nf, struct xp_err *err)
{
	const char *name = get(f, nf, "NodeName");
	if (absent(name))
		return xp_errf(err, "no NodeName field"), NULL;
	if (strlen(name) > XP_MAX_NODE_NAME)
		return xp_errf(err, "field NodeName: longer than %d bytes", XP_MAX_NODE_NAME), NULL;
	struct xp_node *n = xp_node_new(name);
	free(n->source);
	n->source = xp_strdup("slurm");
	int64_t cpus, eff, mem, sockets, cps;
	if (int_field(f, nf, "CPUTot", 1 << 22, &cpus, err) < 0 || int_field(f, nf, "CPUEfctv", 1 << 22, &eff, err) < 0 ||
	    int_field(f, nf, "RealMemory", (int64_t)1 << 40, &mem, err) < 0 ||
	    int_field(f, nf, "Sockets", 1 << 16, &sockets, err) < 0 ||
	    int_field(f, nf, "CoresPerSocket", 1 << 16, &cps, err) < 0)
		goto fail;
	if (cpus >= 0)
		n->pus = (int)cpus;
	n->pus_allowed = eff >= 0 ? (int)eff : n->pus;
	if (sockets > 0 && cps > 0 && sockets * cps <= (1 << 22))
		n->cores = (int)(sockets * cps);
	if (mem >= 0)
		n->memory_mib = mem;
	const char *state = get(f, nf, "State");
	n->state = xp_slurm_node_state(state);
	if (!absent(state))
		xp_labels_set(&n->facts, "slurm.state", state);
	const char *reason = get(f, nf, "Reason");
	if (!absent(reason)) {
		char *w = xp_asprintf("slurm: %s: %s", state ? state : "state not given", reason);
		xp_strv_add(&n->warnings, &n->n_warnings, w);
		free(w);
	}
	/* Features are what a job asks with --constraint: labels an operator set. */
	const char *feat = get(f, nf, "AvailableFeatures");
	if (!feat)
		feat = get(f, nf, "Features");
	if (!absent(feat)) {
		for (const char *s = feat; *s;) {
			size_t l = strcspn(s, ",");
			if (l > 0 && l < 256) {
				char *key = xp_asprintf("feature.%.*s", (int)l, s);
				xp_labels_set(&n->governance, key, "true");
				free(key);
			}
			s += l + (s[l] == ',');
		}
	}
	const char *parts = get(f, nf, "Partitions");
	if (!absent(parts)) {
		xp_labels_set(&n->governance, "slurm.partitions", parts);
		/* One label a partition, the selector a Slurm job's group carries (slurm_jobs.c):
		 * a partition's jobs go only to its nodes, and a label selector is one exact
		 * value, not a list. */
		for (const char *s = parts; *s;) {
			size_t l = strcspn(s, ",");
			if (l > 0 && l <= XP_QNAME_MAX) {
				char *key = xp_asprintf("slurm.partition.%.*s", (int)l, s);
				xp_labels_set(&n->governance, key, "true");
				free(key);
			}
			s += l + (s[l] == ',');
		}
	}
	/* The site's own gres type names (gpu:h100_1g.10gb): what an export asks Slurm for. */
	const char *gres = get(f, nf, "Gres");
	if (!absent(gres))
		xp_labels_set(&n->facts, "slurm.gres", gres);
	if (gres_list(get(f, nf, "Gres"), add_devices, n, err) < 0) {
		xp_err_prefix(err, "field Gres");
		goto fail;
	}
	if (n->n_devices)
		xp_node_links_reset(n);
	if (gres_list(get(f, nf, "GresUsed"), mark_in_use, n, err) < 0) {
		xp_err_prefix(err, "field GresUsed");
		goto fail;
	}
	xp_node_clean(n);
	return n;
fail:
	xp_node_free(n);
	return NULL;
}

int xp_slurm_next_line(const char *text, size_t len, size_t *pos, const char **s, size_t *l)
{
	const char *nl = memchr(text + *pos, '\n', len - *pos);
	*s = text + *pos;
	*l = nl ? (size_t)(nl - *s) : len - *pos;
	*pos += *l + (nl != NULL);
	return nl != NULL;
}

int xp_slurm_line_check(const char *s, size_t l, int ended, struct xp_err *err)
{
	if (l > XP_SLURM_MAX_LINE)
		return xp_errf(err, "longer than %d bytes", XP_SLURM_MAX_LINE);
	if (memchr(s, '\0', l))
		return xp_errf(err, "a NUL byte");
	if (!ended)
		return xp_errf(err, "truncated (no end of line)");
	return 0;
}

int xp_slurm_parse_nodes(const char *text, size_t len, const char *what, struct xp_cluster *c,
			 struct xp_err *err)
{
	struct field *f = xp_malloc(MAX_FIELDS * sizeof *f);
	size_t line_no = 0, pos = 0;
	int rc = 0;
	/* The names so far, hashed: a scan per record (xp_cluster_node) made 10,000 nodes
	 * 50 million comparisons. */
	struct xp_nameset names = {0};
	for (size_t i = 0; i < c->n_nodes; i++)
		if (c->nodes[i]->name)
			xp_nameset_put(&names, c->nodes[i]->name, c->nodes[i]);
	while (pos < len) {
		const char *s;
		size_t l;
		int nl = xp_slurm_next_line(text, len, &pos, &s, &l);
		line_no++;
		if (l > 0 && s[l - 1] == '\r')
			l--;
		if (l == 0)
			continue;
		if (l > XP_SLURM_MAX_LINE) {
			rc = xp_errf(err, "%s: line %zu: longer than %d bytes", what, line_no, XP_SLURM_MAX_LINE);
			break;
		}
		if (memchr(s, '\0', l)) {
			rc = xp_errf(err, "%s: line %zu: a NUL byte", what, line_no);
			break;
		}
		/* What scontrol prints, exit status 0, when it shows no node. */
		if (l == 22 && strncmp(s, "No nodes in the system", 22) == 0)
			continue;
		/* scontrol ends every record with a newline: a last line without one was cut. */
		if (!nl) {
			rc = xp_errf(err, "%s: line %zu: truncated (no end of line)", what, line_no);
			break;
		}
		char *copy = xp_strndup(s, l);
		size_t nf = 0;
		struct xp_node *n = NULL;
		if (strncmp(copy, "NodeName=", 9) != 0)
			xp_errf(err, "not a NodeName= record: '%.40s'", copy);
		else if (split_fields(copy, f, &nf, err) == 0)
			n = node_from(f, nf, err);
		free(copy);
		if (!n) {
			xp_err_prefix(err, "%s: line %zu", what, line_no);
			rc = -1;
			break;
		}
		if (xp_nameset_get(&names, n->name)) {
			rc = xp_errf(err, "%s: line %zu: node %s is listed twice", what, line_no, n->name);
			xp_node_free(n);
			break;
		}
		if (c->n_nodes >= XP_MAX_NODES) {
			rc = xp_errf(err, "%s: more than %d nodes", what, XP_MAX_NODES);
			xp_node_free(n);
			break;
		}
		xp_cluster_add(c, n);
		xp_nameset_put(&names, n->name, n);
	}
	xp_nameset_clear(&names);
	free(f);
	return rc;
}

/* One partition record into a queue; -1 with err naming the field. */
static int queue_from(const struct field *f, size_t nf, struct xp_queue *q, struct xp_err *err)
{
	const char *name = get(f, nf, "PartitionName");
	if (absent(name))
		return xp_errf(err, "no PartitionName field");
	if (xp_qname_check(name, "field PartitionName", err) < 0)
		return -1;
	int64_t tier;
	if (int_field(f, nf, "PriorityTier", 65535, &tier, err) < 0)
		return -1;
	const char *state = get(f, nf, "State");
	int qs;
	if (absent(state) || strcmp(state, "UP") == 0 || strcmp(state, "DRAIN") == 0)
		qs = XP_QS_OPEN;
	else if (strcmp(state, "DOWN") == 0 || strcmp(state, "INACTIVE") == 0)
		qs = XP_QS_HOLD;
	else
		return xp_errf(err, "field State: '%.40s' is not UP, DOWN, DRAIN or INACTIVE", state);
	memset(q, 0, sizeof *q);
	q->name = xp_strdup(name);
	q->weight = 1.0;
	q->priority = tier >= 0 ? (int)tier : 0;
	q->order = XP_QO_BEST_EFFORT;
	q->state = qs;
	q->within = XP_QP_NEVER;
	q->reclaim = XP_QP_NEVER;
	return 0;
}

int xp_slurm_parse_partitions(const char *text, size_t len, const char *what, struct xp_qset *set,
			      struct xp_err *err)
{
	struct field *f = xp_malloc(MAX_FIELDS * sizeof *f);
	size_t line_no = 0, pos = 0;
	int rc = 0;
	while (pos < len && rc == 0) {
		const char *s;
		size_t l;
		int nl = xp_slurm_next_line(text, len, &pos, &s, &l);
		line_no++;
		if (l == 0 || (l == 27 && strncmp(s, "No partitions in the system", 27) == 0))
			continue;
		rc = xp_slurm_line_check(s, l, nl, err);
		if (rc == 0 && set->n_queues >= 100000)
			rc = xp_errf(err, "more than 100000 partitions");
		if (rc == 0) {
			char *copy = xp_strndup(s, l);
			size_t nf = 0;
			struct xp_queue q;
			if (strncmp(copy, "PartitionName=", 14) != 0)
				rc = xp_errf(err, "not a PartitionName= record: '%.40s'", copy);
			else if ((rc = split_fields(copy, f, &nf, err)) == 0 && (rc = queue_from(f, nf, &q, err)) == 0) {
				if (xp_qset_queue(set, q.name)) {
					rc = xp_errf(err, "partition %s is listed twice", q.name);
					xp_queue_clear(&q);
				} else {
					set->queues = xp_realloc(set->queues, (set->n_queues + 1) * sizeof *set->queues);
					set->queues[set->n_queues++] = q;
				}
			}
			free(copy);
		}
		if (rc < 0)
			xp_err_prefix(err, "%s: line %zu", what, line_no);
	}
	free(f);
	return rc;
}

int xp_slurm_conf_setting(const char *conf, char **setting, struct xp_err *err)
{
	*setting = NULL;
	const char *from = "--slurm-conf";
	/* The client's own configuration: the caller's SLURM_CONF when set, which the clean
	 * environment of xp_run_tool would otherwise drop. */
	if (!conf || !*conf) {
		conf = getenv("SLURM_CONF");
		from = "SLURM_CONF";
	}
	if (!conf || !*conf)
		return 0;
	/* A client given a file it cannot read does not say so: it falls back to DNS SRV
	 * records and then waits for its timeouts (30 s here). Opened here first, it fails at
	 * once naming the file. */
	int fd = open(conf, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0)
		return xp_errf(err, "slurm: %s %s: %s", from, conf, strerror(errno));
	int bad = fstat(fd, &st) < 0 ? errno : 0;
	close(fd);
	if (bad)
		return xp_errf(err, "slurm: %s %s: %s", from, conf, strerror(bad));
	if (!S_ISREG(st.st_mode))
		return xp_errf(err, "slurm: %s %s: not a file", from, conf);
	*setting = xp_asprintf("SLURM_CONF=%s", conf);
	return 0;
}

struct xp_cluster *xp_slurm_load(const char *conf, struct xp_err *err)
{
	const char *argv[] = {"scontrol", "-d", "show", "node", "-o", NULL};
	const char *what = "scontrol -d show node -o";
	char *setting;
	if (xp_slurm_conf_setting(conf, &setting, err) < 0)
		return NULL;
	const char *env[] = {setting, NULL};
	char *out = NULL, msg[512];
	size_t len = 0;
	/* JSON first where this Slurm has it (slurm_json.c, XPOOL_SLURM_JSON): these records made
	 * from it; 0: it has not, scontrol's own are read. */
	int rc = xp_slurm_json_nodes(conf, &out, &len, &what, err);
	if (rc < 0) {
		free(setting);
		return NULL;
	}
	if (rc == 0)
		rc = xp_run_tool_env(argv, env, 30.0, XP_SLURM_MAX_OUTPUT, &out, &len, msg, sizeof msg);
	free(setting);
	if (rc < 0) {
		xp_errf(err, "slurm: %s (%s)", msg, what);
		return NULL;
	}
	struct xp_cluster *c = xp_cluster_new();
	if (xp_slurm_parse_nodes(out, len, what, c, err) < 0) {
		xp_err_prefix(err, "slurm");
		free(out);
		xp_cluster_free(c);
		return NULL;
	}
	free(out);
	if (c->n_nodes == 0) {
		xp_errf(err, "slurm: %s shows no node (powered-down CLOUD nodes are hidden unless slurm.conf "
			     "has PrivateData=cloud)", what);
		xp_cluster_free(c);
		return NULL;
	}
	return c;
}
