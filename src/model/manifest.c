/* manifest.c: the adapter manifest parser (format in adapters/README.md). */
#include "manifest.h"

#include <errno.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model.h"

#define LINE_MAX_BYTES 4096

void xp_manifest_free(struct xp_manifest *m)
{
	if (!m)
		return;
	free(m->path);
	free(m->pci_vendors);
	free(m->drivers);
	xp_strv_free(m->tools, m->n_tools);
	xp_strv_free(m->libraries, m->n_libraries);
	xp_strv_free(m->device_nodes, m->n_device_nodes);
	xp_strv_free(m->control_nodes, m->n_control_nodes);
	for (size_t i = 0; i < m->n_records; i++) {
		for (char **a = m->records[i].argv; a && *a; a++)
			free(*a);
		free(m->records[i].argv);
	}
	free(m->records);
	for (size_t i = 0; i < m->n_models; i++) {
		struct xp_mmodel *md = &m->models[i];
		xp_strv_free(md->match, md->n_match);
		free(md->pci_devices);
		free(md->peaks);
		free(md->templates);
	}
	free(m->models);
	free(m->variants); /* their heap parts are the models' */
	free(m->variant_of);
	free(m);
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

static int copy_field(struct xp_where *p, char *dst, size_t size, const char *key, const char *val)
{
	if (strlen(val) >= size)
		return xp_where_errf(p, "%s: value longer than %zu bytes", key, size - 1);
	strcpy(dst, val);
	return 0;
}

static int parse_num(struct xp_where *p, const char *key, const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || *trim(end) || !isfinite(v) || v < 0)
		return xp_where_errf(p, "%s: '%s' is not a non-negative number", key, s);
	*out = v;
	return 0;
}

/* "1/7" or "0.25", between 0 and 1. */
static int parse_fraction(struct xp_where *p, const char *key, const char *s, double *out)
{
	const char *slash = strchr(s, '/');
	double v;
	if (slash) {
		char *e1, *e2;
		double a = strtod(s, &e1), b = strtod(slash + 1, &e2);
		if (e1 != slash || *e2 || !(b > 0) || a < 0)
			return xp_where_errf(p, "%s: '%s' is not a fraction", key, s);
		v = a / b;
	} else if (parse_num(p, key, s, &v) < 0)
		return -1;
	if (v > 1)
		return xp_where_errf(p, "%s: '%s' is more than the whole device", key, s);
	*out = v;
	return 0;
}

static int parse_hex_list(struct xp_where *p, const char *key, char *val, unsigned **out, size_t *n)
{
	char *save = NULL;
	for (char *w = strtok_r(val, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save)) {
		char *end;
		unsigned long v = strtoul(w, &end, 16);
		if (*end || end == w || v > 0xffff)
			return xp_where_errf(p, "%s: '%s' is not a 4-digit hex PCI id", key, w);
		*out = xp_realloc(*out, (*n + 1) * sizeof **out);
		(*out)[(*n)++] = (unsigned)v;
	}
	return 0;
}

static void word_list(char *val, char ***out, size_t *n)
{
	char *save = NULL;
	for (char *w = strtok_r(val, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save))
		xp_strv_add(out, n, w);
}

static int parse_pair(struct xp_where *p, const char *key, const char *val, double *warn, double *crit)
{
	double a, b;
	char extra;
	if (sscanf(val, "%lf %lf %c", &a, &b, &extra) != 2 || !(a >= 0) || !(b >= a))
		return xp_where_errf(p, "%s: expected 'WARN CRIT' with WARN <= CRIT, got '%s'", key, val);
	*warn = a;
	*crit = b;
	return 0;
}

static int parse_affinity(struct xp_where *p, const char *val, int *aff, int *ring)
{
	if (strcmp(val, "pcie") == 0)
		*aff = XP_AFF_PCIE;
	else if (strcmp(val, "nvlink") == 0)
		*aff = XP_AFF_NVLINK;
	else if (strcmp(val, "xgmi") == 0)
		*aff = XP_AFF_XGMI;
	else if (strncmp(val, "ring:", 5) == 0 || strncmp(val, "card:", 5) == 0) {
		char *end;
		long k = strtol(val + 5, &end, 10);
		if (*end || k < 1 || k > XP_MAX_DEVICES)
			return xp_where_errf(p, "affinity: '%s': %.4s size must be 1 to %d", val, val, XP_MAX_DEVICES);
		*aff = val[0] == 'r' ? XP_AFF_RING : XP_AFF_CARD;
		*ring = (int)k;
	} else
		return xp_where_errf(p, "affinity: '%s' is not pcie, nvlink, xgmi, ring:N or card:N", val);
	return 0;
}

/* One word of a count list: "K" or a range "A-B" (A <= B), each from lo to hi; false when not. */
static bool count_range(const char *w, long lo, long hi, long *a, long *b)
{
	char *end;
	*a = strtol(w, &end, 10);
	*b = *a;
	if (end != w && *end == '-') {
		const char *r = end + 1;
		*b = strtol(r, &end, 10);
		if (end == r)
			return false;
	}
	return end != w && !*end && *a >= lo && *a <= *b && *b <= hi;
}

/* counts = 1,2,4,8 (ranges too: 1-8,10): the per-node request sizes the vendor allows; key
 * names the key in messages (devices of a [layout] reads the same way). */
static int parse_counts_key(struct xp_where *p, const char *key, char *val, uint64_t *out)
{
	char *save = NULL;
	*out = 0;
	for (char *w = strtok_r(val, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save)) {
		long a, b;
		if (!count_range(w, 1, 64, &a, &b))
			return xp_where_errf(p, "%s: '%s' is not a device count (or range A-B) from 1 to 64", key, w);
		for (long k = a; k <= b; k++)
			*out |= UINT64_C(1) << (k - 1);
	}
	if (!*out)
		return xp_where_errf(p, "%s: expected a list of device counts such as 1,2,4,8", key);
	return 0;
}

static int parse_counts(struct xp_where *p, char *val, uint64_t *out)
{
	return parse_counts_key(p, "counts", val, out);
}

/* wide = whole | mirror: what a request wider than one ring takes. */
static int parse_wide(struct xp_where *p, const char *val, int *out)
{
	if (strcmp(val, "whole") == 0)
		*out = XP_WIDE_WHOLE;
	else if (strcmp(val, "mirror") == 0)
		*out = XP_WIDE_MIRROR;
	else if (strcmp(val, "pair") == 0)
		*out = XP_WIDE_PAIR;
	else
		return xp_where_errf(p, "wide: '%s' is not whole, mirror or pair", val);
	return 0;
}

/* k8s_node_selector, k8s_pod_label, k8s_pod_annotation = KEY=VALUE: one pair per line, at
 * most XP_MKV_MAX of each. */
static int parse_kv(struct xp_where *p, const char *key, char *val, struct xp_mkv *v, size_t *n)
{
	char *eq = strchr(val, '=');
	if (!eq || eq == val || strchr(val, ' ') || strchr(val, '\t'))
		return xp_where_errf(p, "%s: expected KEY=VALUE, got '%s'", key, val);
	*eq = 0;
	if (*n >= XP_MKV_MAX || strlen(val) >= sizeof v->key || strlen(eq + 1) >= sizeof v->value)
		return xp_where_errf(p, "%s: at most %d pairs, keys under %zu and values under %zu bytes", key,
				     XP_MKV_MAX, sizeof v->key, sizeof v->value);
	snprintf(v[*n].key, sizeof v[*n].key, "%s", val);
	snprintf(v[*n].value, sizeof v[*n].value, "%s", eq + 1);
	(*n)++;
	return 0;
}

/* The placement keys a [model] and a [layout] both take beyond the basic ones: the rule for a
 * job of several tasks and the Kubernetes metadata; 1 when key is none of them. */
static int rule_key(struct xp_where *p, const char *key, char *val, struct xp_mmodel *md)
{
	if (strcmp(key, "counts_multi") == 0)
		return parse_counts_key(p, key, val, &md->counts_multi);
	if (strcmp(key, "wide_multi") == 0) {
		md->has_wide_multi = true;
		return parse_wide(p, val, &md->wide_multi);
	}
	if (strcmp(key, "k8s_node_selector") == 0)
		return parse_kv(p, key, val, md->k8s_selector, &md->n_k8s_selector);
	if (strcmp(key, "k8s_pod_label") == 0)
		return parse_kv(p, key, val, md->k8s_label, &md->n_k8s_label);
	if (strcmp(key, "k8s_pod_annotation") == 0)
		return parse_kv(p, key, val, md->k8s_annotation, &md->n_k8s_annotation);
	return 1;
}

/* node_score = healthy:W rank:W free:W: the vendor's node score as weights (each term at most
 * once, any left out weighs 0). */
static int parse_node_score(struct xp_where *p, char *val, struct xp_mmodel *md)
{
	static const char *const names[XP_SCORE_TERMS] = {"healthy", "rank", "free"};
	char *save = NULL;
	bool seen[XP_SCORE_TERMS] = {false};
	memset(md->score_w, 0, sizeof md->score_w);
	for (char *w = strtok_r(val, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save)) {
		char *colon = strchr(w, ':'), *end = w;
		int t = 0;
		while (t < XP_SCORE_TERMS && !(colon && (size_t)(colon - w) == strlen(names[t]) &&
					       strncmp(w, names[t], strlen(names[t])) == 0))
			t++;
		long v = colon ? strtol(colon + 1, &end, 10) : 0;
		if (t == XP_SCORE_TERMS || end == colon + 1 || *end || v < -1000 || v > 1000 || seen[t])
			return xp_where_errf(p, "node_score: '%s': expected healthy:W, rank:W or free:W (W from -1000 "
					     "to 1000), each once", w);
		seen[t] = true;
		md->score_w[t] = (int)v;
	}
	if (!seen[0] && !seen[1] && !seen[2])
		return xp_where_errf(p, "node_score: expected terms such as healthy:16 rank:-16 free:-1");
	md->has_score = true;
	return 0;
}

/* ring_priority = K: F1 F2 ...: a request of K devices takes the first ring (in ring order)
 * whose free count is F1, else F2, ... */
static int parse_ring_priority(struct xp_where *p, char *val, struct xp_mmodel *md)
{
	char *colon = strchr(val, ':'), *end, *save = NULL;
	long k = colon ? strtol(val, &end, 10) : 0;
	if (!colon || end != colon || k < 1 || k > XP_MRING_MAX)
		return xp_where_errf(p, "ring_priority: '%s': expected 'K: F1 F2 ...' with K from 1 to %d", val,
				     XP_MRING_MAX);
	if (md->n_ring_prio[k])
		return xp_where_errf(p, "ring_priority: request %ld given twice", k);
	unsigned char n = 0;
	for (char *w = strtok_r(colon + 1, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save)) {
		long a, b;
		if (!count_range(w, k, XP_MRING_MAX, &a, &b) || n + (b - a) >= XP_MRING_MAX)
			return xp_where_errf(p, "ring_priority: '%s': a free count (or range A-B) must be from %ld to %d, "
					     "at most %d of them", w, k, XP_MRING_MAX, XP_MRING_MAX);
		for (long f = a; f <= b; f++)
			md->ring_prio[k][n++] = (unsigned char)f;
	}
	if (!n)
		return xp_where_errf(p, "ring_priority: request %ld lists no free count", k);
	md->n_ring_prio[k] = n;
	return 0;
}

static int parse_drivers(struct xp_where *p, char *val, struct xp_manifest *m)
{
	char *save = NULL;
	for (char *w = strtok_r(val, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save)) {
		struct xp_mrange r;
		memset(&r, 0, sizeof r);
		const char *dash = strchr(w, '-');
		if (strncmp(w, ">=", 2) == 0) {
			if (copy_field(p, r.from, sizeof r.from, "drivers", w + 2) < 0)
				return -1;
		} else if (dash && dash != w && dash[1]) {
			if ((size_t)(dash - w) >= sizeof r.from || strlen(dash + 1) >= sizeof r.to)
				return xp_where_errf(p, "drivers: '%s' is too long", w);
			memcpy(r.from, w, (size_t)(dash - w));
			strcpy(r.to, dash + 1);
		} else
			return xp_where_errf(p, "drivers: '%s' is not FROM-TO or >=FROM", w);
		if (!isdigit((unsigned char)r.from[0]) || (r.to[0] && !isdigit((unsigned char)r.to[0])))
			return xp_where_errf(p, "drivers: '%s' does not start with a version number", w);
		m->drivers = xp_realloc(m->drivers, (m->n_drivers + 1) * sizeof *m->drivers);
		m->drivers[m->n_drivers++] = r;
	}
	return 0;
}

static int parse_record(struct xp_where *p, const char *val, struct xp_manifest *m)
{
	const char *colon = strchr(val, ':');
	if (!colon)
		return xp_where_errf(p, "record: expected 'FILE: COMMAND ARGS', got '%s'", val);
	struct xp_mrecord r;
	memset(&r, 0, sizeof r);
	size_t fl = (size_t)(colon - val);
	while (fl && isspace((unsigned char)val[fl - 1]))
		fl--;
	if (!fl || fl >= sizeof r.file)
		return xp_where_errf(p, "record: bad file name in '%s'", val);
	memcpy(r.file, val, fl);
	/* The replay directory is flat: a file name, never a path. */
	if (strchr(r.file, '/') || strcmp(r.file, "..") == 0 || strcmp(r.file, ".") == 0)
		return xp_where_errf(p, "record: '%s' must be a plain file name", r.file);
	char *cmd = xp_strdup(colon + 1), *save = NULL;
	size_t n = 0;
	for (char *w = strtok_r(cmd, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		r.argv = xp_realloc(r.argv, (n + 2) * sizeof *r.argv);
		r.argv[n++] = xp_strdup(w);
		r.argv[n] = NULL;
	}
	free(cmd);
	if (!n)
		return xp_where_errf(p, "record: no command after '%s:'", r.file);
	m->records = xp_realloc(m->records, (m->n_records + 1) * sizeof *m->records);
	m->records[m->n_records++] = r;
	return 0;
}

/* An environment variable name: [A-Za-z_][A-Za-z0-9_]*. */
static int parse_env_name(struct xp_where *p, const char *key, const char *val, char *dst, size_t size)
{
	bool ok = (isalpha((unsigned char)val[0]) || val[0] == '_');
	for (const char *q = val; ok && *q; q++)
		ok = ((unsigned char)*q < 0x80) && (isalnum((unsigned char)*q) || *q == '_');
	if (!ok)
		return xp_where_errf(p, "%s: '%.60s' is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)", key, val);
	return copy_field(p, dst, size, key, val);
}

/* Counts the occurrences of ph in s. */
static size_t count_of(const char *s, const char *ph)
{
	size_t n = 0, l = strlen(ph);
	for (const char *q = strstr(s, ph); q; q = strstr(q + l, ph))
		n++;
	return n;
}

/* Device node paths, space separated: absolute, of [A-Za-z0-9/_.:+-] and, where placeholder is
 * not NULL, that placeholder (at least once); no "." or ".." component, no "//". */
static int parse_paths(struct xp_where *p, const char *key, char *val, const char *placeholder, char ***out,
		       size_t *n)
{
	char *save = NULL;
	for (char *w = strtok_r(val, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (strlen(w) >= 128)
			return xp_where_errf(p, "%s: '%.40s...' is longer than 127 bytes", key, w);
		if (w[0] != '/')
			return xp_where_errf(p, "%s: '%s' is not an absolute path", key, w);
		size_t ph = placeholder ? strlen(placeholder) : 0;
		for (const char *q = w; *q; q++) {
			if (ph && strncmp(q, placeholder, ph) == 0) {
				q += ph - 1;
				continue;
			}
			if (!((unsigned char)*q < 0x80) || (!isalnum((unsigned char)*q) && !strchr("/_.:+-", *q)))
				return xp_where_errf(p, "%s: '%s': byte 0x%02x is not allowed in a device path%s", key, w,
					    (unsigned char)*q, placeholder ? " (only {index} may be substituted)" : "");
		}
		if (strstr(w, "//") || strstr(w, "/../") || strstr(w, "/./") ||
		    (strlen(w) >= 3 && strcmp(w + strlen(w) - 3, "/..") == 0) ||
		    (strlen(w) >= 2 && strcmp(w + strlen(w) - 2, "/.") == 0))
			return xp_where_errf(p, "%s: '%s' has an empty, '.' or '..' component", key, w);
		if (placeholder && !count_of(w, placeholder))
			return xp_where_errf(p, "%s: '%s' has no %s", key, w, placeholder);
		for (size_t i = 0; i < *n; i++)
			if (strcmp((*out)[i], w) == 0)
				return xp_where_errf(p, "%s: '%s' given twice", key, w);
		xp_strv_add(out, n, w);
	}
	return 0;
}

/* A DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, 1 to 63 bytes. */
static bool dns_label(const char *s, size_t n)
{
	if (!n || n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((unsigned char)s[i] < 0x80) || isupper((unsigned char)s[i]) ||
		    (!isalnum((unsigned char)s[i]) && s[i] != '-'))
			return false;
	return true;
}

bool xp_k8s_resource_valid(const char *s)
{
	const char *slash = s ? strchr(s, '/') : NULL;
	if (!slash || strchr(slash + 1, '/'))
		return false;
	/* Prefix: a DNS subdomain (labels joined by '.', 253 bytes at most). */
	size_t pl = (size_t)(slash - s);
	if (!pl || pl > 253)
		return false;
	for (const char *a = s; a < slash;) {
		const char *dot = memchr(a, '.', (size_t)(slash - a));
		const char *e = dot ? dot : slash;
		if (!dns_label(a, (size_t)(e - a)))
			return false;
		a = dot ? dot + 1 : slash;
		if (dot && a == slash)
			return false;
	}
	/* Kubernetes keeps kubernetes.io and its subdomains for itself. */
	if ((pl == 13 && strncmp(s, "kubernetes.io", 13) == 0) ||
	    (pl > 13 && strncmp(slash - 14, ".kubernetes.io", 14) == 0))
		return false;
	/* Name: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, 63 bytes at most. */
	const char *nm = slash + 1;
	size_t nl = strlen(nm);
	if (!nl || nl > 63 || !isalnum((unsigned char)nm[0]) || !isalnum((unsigned char)nm[nl - 1]))
		return false;
	for (size_t i = 0; i < nl; i++)
		if (!((unsigned char)nm[i] < 0x80) || (!isalnum((unsigned char)nm[i]) && !strchr("-_.", nm[i])))
			return false;
	return true;
}

/* Replaces every ph in pattern with val; heap string. */
static char *substitute(const char *pattern, const char *ph, const char *val)
{
	size_t pl = strlen(ph), vl = strlen(val);
	char *out = xp_malloc(strlen(pattern) + count_of(pattern, ph) * vl + 1);
	size_t k = 0;
	for (const char *q = pattern; *q;) {
		if (strncmp(q, ph, pl) == 0) {
			memcpy(out + k, val, vl);
			k += vl;
			q += pl;
		} else
			out[k++] = *q++;
	}
	out[k] = '\0';
	return out;
}

static int parse_k8s_resource(struct xp_where *p, const char *key, const char *val, char *dst, size_t size)
{
	if (!xp_k8s_resource_valid(val))
		return xp_where_errf(p, "%s: '%.80s' is not a Kubernetes extended resource name (DOMAIN/NAME, "
			       "NAME [A-Za-z0-9._-] of at most 63 bytes)", key, val);
	return copy_field(p, dst, size, key, val);
}

/* A resource pattern with {slice} once; valid once {slice} is a plain word. */
static int parse_k8s_slice(struct xp_where *p, const char *key, const char *val, char *dst, size_t size)
{
	if (count_of(val, "{slice}") != 1)
		return xp_where_errf(p, "%s: '%.80s' must hold {slice} once", key, val);
	char *probe = substitute(val, "{slice}", "x");
	bool ok = xp_k8s_resource_valid(probe);
	free(probe);
	if (!ok)
		return xp_where_errf(p, "%s: '%.80s' is not a Kubernetes extended resource name once {slice} is "
			       "filled in", key, val);
	return copy_field(p, dst, size, key, val);
}

/* A Slurm gres name: [A-Za-z0-9_]+. */
static int parse_gres(struct xp_where *p, const char *key, const char *val, char *dst, size_t size)
{
	for (const char *q = val; *q; q++)
		if (!((unsigned char)*q < 0x80) || (!isalnum((unsigned char)*q) && *q != '_'))
			return xp_where_errf(p, "%s: '%.60s' is not a Slurm gres name ([A-Za-z0-9_])", key, val);
	return copy_field(p, dst, size, key, val);
}

/* Keys that [adapter] and [model] share: the Kubernetes and Slurm names. 1 when key is not one. */
static int export_key(struct xp_where *p, const char *key, const char *val, char *res, char *slice, char *gres)
{
	if (strcmp(key, "k8s_resource") == 0)
		return parse_k8s_resource(p, key, val, res, 128);
	if (strcmp(key, "k8s_slice_resource") == 0)
		return parse_k8s_slice(p, key, val, slice, 128);
	if (strcmp(key, "slurm_gres") == 0)
		return parse_gres(p, key, val, gres, 32);
	return 1;
}

/* `order`: where the adapter stands among the others, 0-999. The build reads it to list the
 * adapters (Makefile); the parser checks it so a typo is an error, not a silent 500. */
static int parse_order(struct xp_where *p, const char *val, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(val, &end, 10);
	if (end == val || *end || errno || v < 0 || v > 999 || !isdigit((unsigned char)*val))
		return xp_where_errf(p, "order: '%s' is not a whole number from 0 to 999", val);
	*out = (int)v;
	return 0;
}

static int hami_key(struct xp_where *p, const char *key, char *val, struct xp_mhami *h, struct xp_mhami *hv,
		    char *chip);

static int adapter_key(struct xp_where *p, struct xp_manifest *m, const char *key, char *val)
{
	int rc = export_key(p, key, val, m->k8s_resource, m->k8s_slice_resource, m->slurm_gres);
	if (rc <= 0)
		return rc;
	if ((rc = hami_key(p, key, val, &m->hami, &m->hami_volcano, m->hami_chip)) <= 0)
		return rc;
	if (strcmp(key, "visible_devices_env") == 0)
		return parse_env_name(p, key, val, m->visible_env, sizeof m->visible_env);
	if (strcmp(key, "device_nodes") == 0)
		return parse_paths(p, key, val, "{index}", &m->device_nodes, &m->n_device_nodes);
	if (strcmp(key, "control_nodes") == 0)
		return parse_paths(p, key, val, NULL, &m->control_nodes, &m->n_control_nodes);
	if (strcmp(key, "name") == 0)
		return copy_field(p, m->name, sizeof m->name, key, val);
	if (strcmp(key, "vendor") == 0)
		return copy_field(p, m->vendor, sizeof m->vendor, key, val);
	if (strcmp(key, "pci_vendor") == 0)
		return parse_hex_list(p, key, val, &m->pci_vendors, &m->n_pci_vendors);
	if (strcmp(key, "drivers") == 0)
		return parse_drivers(p, val, m);
	if (strcmp(key, "tools") == 0) {
		word_list(val, &m->tools, &m->n_tools);
		return 0;
	}
	if (strcmp(key, "libraries") == 0) {
		word_list(val, &m->libraries, &m->n_libraries);
		return 0;
	}
	if (strcmp(key, "record") == 0)
		return parse_record(p, val, m);
	if (strcmp(key, "ecu_precision") == 0)
		return copy_field(p, m->ecu_precision, sizeof m->ecu_precision, key, val);
	if (strcmp(key, "affinity") == 0)
		return parse_affinity(p, val, &m->affinity, &m->ring_size);
	if (strcmp(key, "temperature") == 0)
		return parse_pair(p, key, val, &m->temp_warn, &m->temp_crit);
	if (strcmp(key, "power") == 0)
		return parse_pair(p, key, val, &m->power_warn, &m->power_crit);
	if (strcmp(key, "order") == 0)
		return parse_order(p, val, &m->order);
	return xp_where_errf(p, "unknown key '%s' in [adapter]", key);
}

static int parse_peak(struct xp_where *p, const char *val, struct xp_mmodel *md)
{
	struct xp_mpeak k;
	memset(&k, 0, sizeof k);
	char extra;
	if (sscanf(val, "%15s %lf %15s %c", k.precision, &k.value, k.unit, &extra) != 3 ||
	    !isfinite(k.value) || k.value < 0)
		return xp_where_errf(p, "peak: expected 'PRECISION VALUE UNIT', got '%s'", val);
	md->peaks = xp_realloc(md->peaks, (md->n_peaks + 1) * sizeof *md->peaks);
	md->peaks[md->n_peaks++] = k;
	return 0;
}

static int parse_template(struct xp_where *p, char *val, struct xp_mmodel *md)
{
	struct xp_mtemplate t = {.memory_mib = -1, .compute = NAN, .count = -1, .aicpu = -1};
	char *save = NULL;
	char *w = strtok_r(val, " \t", &save);
	if (!w || copy_field(p, t.name, sizeof t.name, "template", w) < 0)
		return w ? -1 : xp_where_errf(p, "template: missing name");
	while ((w = strtok_r(NULL, " \t", &save)) != NULL) {
		char *eq = strchr(w, '=');
		if (!eq)
			return xp_where_errf(p, "template %s: '%s' is not key=value", t.name, w);
		*eq = '\0';
		const char *v = eq + 1;
		double d;
		if (strcmp(w, "memory_mib") == 0) {
			if (parse_num(p, "memory_mib", v, &d) < 0)
				return -1;
			/* Bounded before the conversion: a double past int64_t's range is undefined
			 * behaviour (found by fuzz_manifest). A mebibyte count past 2^40 (an exbibyte)
			 * is no device's. */
			if (!(d <= 1099511627776.0) || d != floor(d))
				return xp_where_errf(p, "template %s: memory_mib '%s' is not a whole number up to 2^40", t.name, v);
			t.memory_mib = (int64_t)d;
		} else if (strcmp(w, "compute") == 0) {
			if (parse_fraction(p, "compute", v, &t.compute) < 0)
				return -1;
		} else if (strcmp(w, "count") == 0 || strcmp(w, "aicpu") == 0) {
			if (parse_num(p, w, v, &d) < 0)
				return -1;
			if (d > 1024 || d != floor(d))
				return xp_where_errf(p, "%s: '%s' is not a small whole number", w, v);
			*(strcmp(w, "count") == 0 ? &t.count : &t.aicpu) = (int)d;
		} else if (strcmp(w, "k8s_slice") == 0) {
			/* Becomes part of a resource name: the same bytes a resource name allows. */
			bool ok = *v && isalnum((unsigned char)v[0]) && isalnum((unsigned char)v[strlen(v) - 1]);
			for (const char *q = v; ok && *q; q++)
				ok = ((unsigned char)*q < 0x80) && (isalnum((unsigned char)*q) || strchr("-_.", *q));
			if (!ok)
				return xp_where_errf(p, "template %s: k8s_slice '%.40s' is not [A-Za-z0-9._-]", t.name, v);
			if (copy_field(p, t.k8s_slice, sizeof t.k8s_slice, "k8s_slice", v) < 0)
				return -1;
		} else if (strcmp(w, "at") == 0) {
			/* Start slots, as nvidia-smi mig -lgipp prints them: "0,2,4". */
			char buf[64];
			if (copy_field(p, buf, sizeof buf, "at", v) < 0)
				return -1;
			char *s2 = NULL;
			for (char *x = strtok_r(buf, ",", &s2); x; x = strtok_r(NULL, ",", &s2)) {
				if (parse_num(p, "at", x, &d) < 0)
					return -1;
				if (d < 0 || d >= XP_MAX_SLOTS || d != floor(d))
					return xp_where_errf(p, "template %s: at '%s' is not a slot 0..%d", t.name, x,
							     XP_MAX_SLOTS - 1);
				t.at |= 1u << (int)d;
			}
		} else if (strcmp(w, "span") == 0) {
			if (parse_num(p, "span", v, &d) < 0)
				return -1;
			if (d < 1 || d > XP_MAX_SLOTS || d != floor(d))
				return xp_where_errf(p, "template %s: span '%s' is not 1..%d", t.name, v, XP_MAX_SLOTS);
			t.span = (int)d;
		} else
			return xp_where_errf(p, "template %s: unknown key '%s'", t.name, w);
	}
	if (t.memory_mib < 0 || isnan(t.compute) || t.count < 1)
		return xp_where_errf(p, "template %s: needs memory_mib, compute and count", t.name);
	if (!t.at != !t.span)
		return xp_where_errf(p, "template %s: at and span go together", t.name);
	md->templates = xp_realloc(md->templates, (md->n_templates + 1) * sizeof *md->templates);
	md->templates[md->n_templates++] = t;
	return 0;
}

static int parse_partition(struct xp_where *p, char *val, unsigned *out)
{
	char *save = NULL;
	for (char *w = strtok_r(val, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save)) {
		if (strcmp(w, "whole") == 0)
			*out |= XP_PART_WHOLE;
		else if (strcmp(w, "mig") == 0)
			*out |= XP_PART_MIG;
		else if (strcmp(w, "vnpu") == 0)
			*out |= XP_PART_VNPU;
		else if (strcmp(w, "share") == 0)
			*out |= XP_PART_SHARE;
		else
			return xp_where_errf(p, "partition: '%s' is not whole, mig, vnpu or share", w);
	}
	return 0;
}

static int model_key(struct xp_where *p, struct xp_mmodel *md, const char *key, char *val)
{
	double d;
	int rc = export_key(p, key, val, md->k8s_resource, md->k8s_slice_resource, md->slurm_gres);
	if (rc <= 0)
		return rc;
	if ((rc = hami_key(p, key, val, &md->hami, &md->hami_volcano, md->hami_chip)) <= 0)
		return rc;
	if (strcmp(key, "hami_unit") == 0) {
		if (parse_num(p, key, val, &d) < 0)
			return -1;
		if (d < 1 || d > 64 || d != (int)d)
			return xp_where_errf(p, "hami_unit: expected a whole number from 1 to 64, got '%s'", val);
		md->hami_unit = (int)d;
		return 0;
	}
	if (strcmp(key, "match") == 0) {
		xp_strv_add(&md->match, &md->n_match, val);
		return 0;
	}
	if (strcmp(key, "vendor") == 0)
		return copy_field(p, md->vendor, sizeof md->vendor, key, val);
	if (strcmp(key, "pci_device") == 0)
		return parse_hex_list(p, key, val, &md->pci_devices, &md->n_pci_devices);
	if (strcmp(key, "generation") == 0)
		return copy_field(p, md->generation, sizeof md->generation, key, val);
	if (strcmp(key, "class") == 0) {
		if (strcmp(val, "training") != 0 && strcmp(val, "inference") != 0)
			return xp_where_errf(p, "class: '%s' is not training or inference", val);
		return copy_field(p, md->cls, sizeof md->cls, key, val);
	}
	if (strcmp(key, "memory_mib") == 0) {
		if (parse_num(p, key, val, &d) < 0)
			return -1;
		/* As a template's: bounded before the conversion (past int64_t it is undefined). */
		if (!(d <= 1099511627776.0) || d != floor(d))
			return xp_where_errf(p, "memory_mib: '%s' is not a whole number up to 2^40", val);
		md->memory_mib = (int64_t)d;
		return 0;
	}
	if (strcmp(key, "slots") == 0) {
		if (parse_num(p, key, val, &d) < 0)
			return -1;
		if (d < 1 || d > XP_MAX_SLOTS || d != floor(d))
			return xp_where_errf(p, "slots: '%s' is not 1..%d", val, XP_MAX_SLOTS);
		md->slots = (int)d;
		return 0;
	}
	if (strcmp(key, "peak") == 0)
		return parse_peak(p, val, md);
	if (strcmp(key, "ecu_precision") == 0)
		return copy_field(p, md->ecu_precision, sizeof md->ecu_precision, key, val);
	if (strcmp(key, "coefficient") == 0)
		return parse_num(p, key, val, &md->coefficient);
	if (strcmp(key, "memory_access") == 0) {
		int a = xp_mem_access_parse(val);
		if (a <= 0)
			return xp_where_errf(p, "memory_access: '%s' is not explicit or unified", val);
		md->memory_access = a;
		return 0;
	}
	if (strcmp(key, "affinity") == 0)
		return parse_affinity(p, val, &md->affinity, &md->ring_size);
	if (strcmp(key, "counts") == 0)
		return parse_counts(p, val, &md->counts);
	if (strcmp(key, "ring_priority") == 0)
		return parse_ring_priority(p, val, md);
	if (strcmp(key, "wide") == 0)
		return parse_wide(p, val, &md->wide);
	if (strcmp(key, "node_score") == 0)
		return parse_node_score(p, val, md);
	int rk = rule_key(p, key, val, md);
	if (rk <= 0)
		return rk;
	if (strcmp(key, "partition") == 0)
		return parse_partition(p, val, &md->partition);
	if (strcmp(key, "template") == 0)
		return parse_template(p, val, md);
	if (strcmp(key, "temperature") == 0)
		return parse_pair(p, key, val, &md->temp_warn, &md->temp_crit);
	if (strcmp(key, "power") == 0)
		return parse_pair(p, key, val, &md->power_warn, &md->power_crit);
	return xp_where_errf(p, "unknown key '%s' in [model %s]", key, md->name);
}

/* A [layout NAME] section while the manifest is read: which models on which node sizes, and
 * the placement keys it puts over theirs. */
struct layout {
	char name[96];
	char **models;        /* globs over [model] names */
	size_t n_models;
	uint64_t devices;     /* node sizes (bit n-1), 0 any */
	struct xp_mmodel rule; /* only its placement keys are read */
	bool has_wide;
	int line;
};

static int layout_key(struct xp_where *p, struct layout *ly, const char *key, char *val)
{
	if (strcmp(key, "models") == 0) {
		char *save = NULL;
		for (char *w = strtok_r(val, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
			char *t = trim(w);
			if (*t)
				xp_strv_add(&ly->models, &ly->n_models, t);
		}
		return ly->n_models ? 0 : xp_where_errf(p, "models: expected model names (globs) separated by ','");
	}
	if (strcmp(key, "devices") == 0)
		return parse_counts_key(p, key, val, &ly->devices);
	if (strcmp(key, "affinity") == 0)
		return parse_affinity(p, val, &ly->rule.affinity, &ly->rule.ring_size);
	if (strcmp(key, "counts") == 0)
		return parse_counts(p, val, &ly->rule.counts);
	if (strcmp(key, "ring_priority") == 0)
		return parse_ring_priority(p, val, &ly->rule);
	if (strcmp(key, "wide") == 0) {
		ly->has_wide = true;
		return parse_wide(p, val, &ly->rule.wide);
	}
	if (strcmp(key, "node_score") == 0)
		return parse_node_score(p, val, &ly->rule);
	int rk = rule_key(p, key, val, &ly->rule);
	if (rk <= 0)
		return rk;
	return xp_where_errf(p, "unknown key '%s' in [layout %s] (models, devices, affinity, counts, counts_multi, "
			     "ring_priority, wide, wide_multi, node_score, k8s_node_selector, k8s_pod_label, "
			     "k8s_pod_annotation)", key, ly->name);
}

/* Makes each layout concrete: a copy of every model it names, its placement keys over the
 * model's, in layout order (the first that fits a node wins). A layout naming no model is an
 * error: a rule that never applies is a typo. */
static int layouts_apply(struct xp_where *p, struct xp_manifest *m, const struct layout *ly, size_t nl)
{
	for (size_t l = 0; l < nl; l++) {
		size_t made = 0;
		for (size_t k = 0; k < m->n_models; k++) {
			bool hit = false;
			for (size_t g = 0; g < ly[l].n_models && !hit; g++)
				hit = xp_glob_match(ly[l].models[g], m->models[k].name);
			if (!hit)
				continue;
			m->variants = xp_realloc(m->variants, (m->n_variants + 1) * sizeof *m->variants);
			m->variant_of = xp_realloc(m->variant_of, (m->n_variants + 1) * sizeof *m->variant_of);
			struct xp_mmodel *v = &m->variants[m->n_variants];
			const struct xp_mmodel *r = &ly[l].rule;
			*v = m->models[k];
			m->variant_of[m->n_variants++] = k;
			snprintf(v->layout, sizeof v->layout, "%s", ly[l].name);
			v->layout_devices = ly[l].devices;
			if (r->affinity) {
				v->affinity = r->affinity;
				v->ring_size = r->ring_size;
			}
			if (r->counts)
				v->counts = r->counts;
			bool prio = false;
			for (size_t q = 1; q <= XP_MRING_MAX; q++)
				prio = prio || r->n_ring_prio[q];
			if (prio) {
				memcpy(v->ring_prio, r->ring_prio, sizeof v->ring_prio);
				memcpy(v->n_ring_prio, r->n_ring_prio, sizeof v->n_ring_prio);
			}
			if (ly[l].has_wide)
				v->wide = r->wide;
			if (r->counts_multi)
				v->counts_multi = r->counts_multi;
			if (r->has_wide_multi) {
				v->has_wide_multi = true;
				v->wide_multi = r->wide_multi;
			}
			if (r->n_k8s_selector + r->n_k8s_label + r->n_k8s_annotation) {
				memcpy(v->k8s_selector, r->k8s_selector, sizeof v->k8s_selector);
				memcpy(v->k8s_label, r->k8s_label, sizeof v->k8s_label);
				memcpy(v->k8s_annotation, r->k8s_annotation, sizeof v->k8s_annotation);
				v->n_k8s_selector = r->n_k8s_selector;
				v->n_k8s_label = r->n_k8s_label;
				v->n_k8s_annotation = r->n_k8s_annotation;
			}
			if (r->has_score) {
				v->has_score = true;
				memcpy(v->score_w, r->score_w, sizeof v->score_w);
			}
			made++;
		}
		if (!made) {
			p->line = ly[l].line;
			return xp_where_errf(p, "[layout %s]: its models name no [model] section", ly[l].name);
		}
	}
	return 0;
}

static void layouts_free(struct layout *ly, size_t n)
{
	for (size_t i = 0; i < n; i++)
		xp_strv_free(ly[i].models, ly[i].n_models);
	free(ly);
}

/* Keys that may appear more than once in a section. */
static bool repeatable(const char *key)
{
	return strcmp(key, "match") == 0 || strcmp(key, "peak") == 0 || strcmp(key, "record") == 0 ||
	       strcmp(key, "template") == 0 || strcmp(key, "ring_priority") == 0 ||
	       strcmp(key, "k8s_node_selector") == 0 || strcmp(key, "k8s_pod_label") == 0 ||
	       strcmp(key, "k8s_pod_annotation") == 0;
}

static struct xp_mmodel *new_model(struct xp_manifest *m, const char *name, int line)
{
	m->models = xp_realloc(m->models, (m->n_models + 1) * sizeof *m->models);
	struct xp_mmodel *md = &m->models[m->n_models++];
	memset(md, 0, sizeof *md);
	snprintf(md->name, sizeof md->name, "%s", name);
	md->memory_mib = -1;
	md->coefficient = 1.0;
	md->temp_warn = md->temp_crit = md->power_warn = md->power_crit = NAN;
	md->line = line;
	return md;
}

struct xp_manifest *xp_manifest_parse(const char *text, size_t len, const char *file, struct xp_err *err)
{
	struct xp_where p = {file, 0, err};
	if (len > XP_MANIFEST_MAX_BYTES) {
		xp_errf(err, "%s: %zu bytes, more than the %u allowed", file, len, XP_MANIFEST_MAX_BYTES);
		return NULL;
	}
	if (memchr(text, '\0', len)) {
		xp_errf(err, "%s: holds a NUL byte: not a text file", file);
		return NULL;
	}
	struct xp_manifest *m = xp_calloc(1, sizeof *m);
	m->temp_warn = m->temp_crit = m->power_warn = m->power_crit = NAN;
	m->order = 500;
	m->path = xp_strdup(file);
	int section = 0; /* 0 none yet, 1 adapter, 2 model, 3 layout */
	struct layout *layouts = NULL;
	size_t n_layouts = 0;
	bool had_adapter = false;
	char seen[64][32];
	int n_seen = 0;
	const char *pos = text, *end = text + len;
	char line[LINE_MAX_BYTES + 1];
	while (pos < end) {
		const char *nl = memchr(pos, '\n', (size_t)(end - pos));
		size_t ll = nl ? (size_t)(nl - pos) : (size_t)(end - pos);
		p.line++;
		if (ll > LINE_MAX_BYTES) {
			xp_where_errf(&p, "line longer than %d bytes", LINE_MAX_BYTES);
			goto bad;
		}
		memcpy(line, pos, ll);
		line[ll] = '\0';
		pos += ll + (nl ? 1 : 0);
		char *s = trim(line);
		if (!*s || *s == '#')
			continue;
		if (*s == '[') {
			char *close = strrchr(s, ']');
			if (!close || close[1]) {
				xp_where_errf(&p, "section header without its closing ']'");
				goto bad;
			}
			*close = '\0';
			char *h = trim(s + 1);
			n_seen = 0;
			if (strcmp(h, "adapter") == 0) {
				if (had_adapter) {
					xp_where_errf(&p, "a second [adapter] section");
					goto bad;
				}
				had_adapter = true;
				section = 1;
			} else if (strncmp(h, "model", 5) == 0 && isspace((unsigned char)h[5])) {
				if (!had_adapter) {
					xp_where_errf(&p, "[model] before [adapter]");
					goto bad;
				}
				char *name = trim(h + 5);
				if (!*name || strlen(name) >= sizeof m->models[0].name) {
					xp_where_errf(&p, "[model NAME]: the name must have 1 to %zu bytes",
					     sizeof m->models[0].name - 1);
					goto bad;
				}
				for (size_t i = 0; i < m->n_models; i++)
					if (strcmp(m->models[i].name, name) == 0) {
						xp_where_errf(&p, "model '%s' again (first at line %d)", name, m->models[i].line);
						goto bad;
					}
				new_model(m, name, p.line);
				section = 2;
			} else if (strncmp(h, "layout", 6) == 0 && isspace((unsigned char)h[6])) {
				char *name = trim(h + 6);
				if (!had_adapter || !*name || strlen(name) >= sizeof layouts[0].name) {
					xp_where_errf(&p, "[layout NAME]: after [adapter], a name of 1 to %zu bytes",
						      sizeof layouts[0].name - 1);
					goto bad;
				}
				layouts = xp_realloc(layouts, (n_layouts + 1) * sizeof *layouts);
				struct layout *ly = &layouts[n_layouts++];
				memset(ly, 0, sizeof *ly);
				snprintf(ly->name, sizeof ly->name, "%s", name);
				ly->line = p.line;
				section = 3;
			} else {
				xp_where_errf(&p, "unknown section [%s] (expected [adapter], [model NAME] or [layout NAME])", h);
				goto bad;
			}
			continue;
		}
		char *eq = strchr(s, '=');
		if (!eq) {
			xp_where_errf(&p, "expected 'key = value' or a [section], got '%.40s'", s);
			goto bad;
		}
		*eq = '\0';
		char *key = trim(s), *val = trim(eq + 1);
		if (!section) {
			xp_where_errf(&p, "'%s' before any section", key);
			goto bad;
		}
		if (!*val) {
			xp_where_errf(&p, "%s: empty value", key);
			goto bad;
		}
		if (!repeatable(key)) {
			for (int i = 0; i < n_seen; i++)
				if (strcmp(seen[i], key) == 0) {
					xp_where_errf(&p, "%s: given twice in one section", key);
					goto bad;
				}
			if (n_seen < 64 && strlen(key) < sizeof seen[0])
				strcpy(seen[n_seen++], key);
		}
		int rc = section == 1	? adapter_key(&p, m, key, val)
			 : section == 2 ? model_key(&p, &m->models[m->n_models - 1], key, val)
					: layout_key(&p, &layouts[n_layouts - 1], key, val);
		if (rc < 0)
			goto bad;
	}
	if (!had_adapter || !m->name[0]) {
		xp_errf(err, "%s: no [adapter] section with a name", file);
		goto bad;
	}
	if (!m->vendor[0])
		snprintf(m->vendor, sizeof m->vendor, "%s", m->name);
	if (layouts_apply(&p, m, layouts, n_layouts) < 0)
		goto bad;
	layouts_free(layouts, n_layouts);
	return m;
bad:
	layouts_free(layouts, n_layouts);
	xp_manifest_free(m);
	return NULL;
}

struct xp_manifest *xp_manifest_load(const char *path, struct xp_err *err)
{
	size_t len;
	char *text = xp_read_file(path, XP_MANIFEST_MAX_BYTES, &len, err);
	if (!text)
		return NULL;
	struct xp_manifest *m = xp_manifest_parse(text, len, path, err);
	free(text);
	return m;
}

bool xp_glob_match(const char *g, const char *t)
{
	/* Iterative with one backtrack point: linear enough for product names. */
	const char *star = NULL, *mark = NULL;
	while (*t) {
		if (*g == '*') {
			star = g++;
			mark = t;
		} else if (*g == '?' || tolower((unsigned char)*g) == tolower((unsigned char)*t)) {
			g++;
			t++;
		} else if (star) {
			g = star + 1;
			t = ++mark;
		} else
			return false;
	}
	while (*g == '*')
		g++;
	return !*g;
}

const struct xp_mmodel *xp_manifest_model(const struct xp_manifest *m, const char *product, int pci_device)
{
	if (product && *product)
		for (size_t i = 0; i < m->n_models; i++)
			for (size_t k = 0; k < m->models[i].n_match; k++)
				if (xp_glob_match(m->models[i].match[k], product))
					return &m->models[i];
	if (pci_device >= 0)
		for (size_t i = 0; i < m->n_models; i++)
			for (size_t k = 0; k < m->models[i].n_pci_devices; k++)
				if (m->models[i].pci_devices[k] == (unsigned)pci_device)
					return &m->models[i];
	return NULL;
}

bool xp_manifest_has_vendor(const struct xp_manifest *m, unsigned v)
{
	for (size_t i = 0; i < m->n_pci_vendors; i++)
		if (m->pci_vendors[i] == v)
			return true;
	return false;
}

int xp_version_cmp(const char *a, const char *b)
{
	for (;;) {
		while (*a && !isdigit((unsigned char)*a))
			a++;
		while (*b && !isdigit((unsigned char)*b))
			b++;
		if (!*a || !*b)
			return (*a != 0) - (*b != 0);
		/* Compare digit runs as numbers without overflow: skip zeros, then length, then text. */
		while (*a == '0' && isdigit((unsigned char)a[1]))
			a++;
		while (*b == '0' && isdigit((unsigned char)b[1]))
			b++;
		size_t la = 0, lb = 0;
		while (isdigit((unsigned char)a[la]))
			la++;
		while (isdigit((unsigned char)b[lb]))
			lb++;
		if (la != lb)
			return la < lb ? -1 : 1;
		int c = strncmp(a, b, la);
		if (c)
			return c < 0 ? -1 : 1;
		a += la;
		b += lb;
	}
}

bool xp_manifest_driver_ok(const struct xp_manifest *m, const char *v)
{
	if (!m->n_drivers)
		return true;
	if (!v || !*v)
		return false;
	for (size_t i = 0; i < m->n_drivers; i++) {
		const struct xp_mrange *r = &m->drivers[i];
		if (xp_version_cmp(v, r->from) < 0)
			continue;
		/* "450-599" covers 599.x too: compare only as many fields as TO has. */
		if (r->to[0]) {
			int fields = 1;
			for (const char *q = r->to; *q; q++)
				fields += *q == '.';
			char cut[64];
			size_t k = 0;
			int f = 1;
			for (const char *q = v; *q && k + 1 < sizeof cut; q++) {
				if (*q == '.' && ++f > fields)
					break;
				cut[k++] = *q;
			}
			cut[k] = '\0';
			if (xp_version_cmp(cut, r->to) > 0)
				continue;
		}
		return true;
	}
	return false;
}

const char *xp_manifest_env(const struct xp_manifest *m)
{
	return m && m->visible_env[0] ? m->visible_env : NULL;
}

/* Adds s to the vector unless it is there; takes s. */
static void add_unique(char ***v, size_t *n, char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*v)[i], s) == 0) {
			free(s);
			return;
		}
	*v = xp_realloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = s;
}

size_t xp_manifest_mounts(const struct xp_manifest *m, const int *indices, size_t n, char ***out)
{
	char **v = NULL;
	size_t nv = 0;
	for (size_t i = 0; m && indices && i < n; i++) {
		if (indices[i] < 0)
			continue;
		char num[16];
		snprintf(num, sizeof num, "%d", indices[i]);
		for (size_t k = 0; k < m->n_device_nodes; k++)
			add_unique(&v, &nv, substitute(m->device_nodes[k], "{index}", num));
	}
	for (size_t k = 0; m && k < m->n_control_nodes; k++)
		add_unique(&v, &nv, xp_strdup(m->control_nodes[k]));
	*out = v;
	return nv;
}

const char *xp_manifest_k8s_resource(const struct xp_manifest *m, const struct xp_mmodel *md)
{
	if (md && md->k8s_resource[0])
		return md->k8s_resource;
	return m && m->k8s_resource[0] ? m->k8s_resource : NULL;
}

const struct xp_mtemplate *xp_manifest_template(const struct xp_mmodel *md, const char *name)
{
	for (size_t i = 0; md && name && i < md->n_templates; i++)
		if (strcasecmp(md->templates[i].name, name) == 0)
			return &md->templates[i];
	return NULL;
}

char *xp_manifest_k8s_slice(const struct xp_manifest *m, const struct xp_mmodel *md, const char *slice)
{
	const char *pat = md && md->k8s_slice_resource[0] ? md->k8s_slice_resource
			  : m && m->k8s_slice_resource[0] ? m->k8s_slice_resource
							  : NULL;
	if (!pat || !slice)
		return NULL;
	const struct xp_mtemplate *t = xp_manifest_template(md, slice);
	const char *word = !t ? slice : t->k8s_slice[0] ? t->k8s_slice : t->name;
	return substitute(pat, "{slice}", word);
}

const char *xp_manifest_slurm_gres(const struct xp_manifest *m, const struct xp_mmodel *md)
{
	if (md && md->slurm_gres[0])
		return md->slurm_gres;
	return m && m->slurm_gres[0] ? m->slurm_gres : NULL;
}

const struct xp_mmodel *xp_manifest_layout(const struct xp_manifest *m, const struct xp_mmodel *md, int n)
{
	for (size_t i = 0; m && md && i < m->n_variants; i++) {
		uint64_t d = m->variants[i].layout_devices;
		if (&m->models[m->variant_of[i]] == md && (!d || (n >= 1 && n <= 64 && (d >> (n - 1) & 1))))
			return &m->variants[i];
	}
	return md;
}

bool xp_manifest_count_ok(const struct xp_mmodel *md, int k)
{
	if (!md || !md->counts)
		return true;
	return k >= 1 && k <= 64 && (md->counts >> (k - 1) & 1);
}

void xp_manifest_counts_text(const struct xp_mmodel *md, char *out, size_t len)
{
	xp_manifest_mask_text(md ? md->counts : 0, out, len);
}

uint64_t xp_manifest_task_counts(const struct xp_mmodel *md, bool multi)
{
	if (!md)
		return 0;
	return multi && md->counts_multi ? md->counts_multi : md->counts;
}

int xp_manifest_wide(const struct xp_mmodel *md, bool multi)
{
	if (!md)
		return XP_WIDE_WHOLE;
	return multi && md->has_wide_multi ? md->wide_multi : md->wide;
}

void xp_manifest_mask_text(uint64_t mask, char *out, size_t len)
{
	size_t o = 0;
	int total = 0, seen = 0;
	out[0] = 0;
	for (int k = 1; k <= 64; k++)
		total += (int)(mask >> (k - 1) & 1);
	for (int k = 1; total && k <= 64 && o < len; k++)
		if (mask >> (k - 1) & 1) {
			seen++;
			int w = snprintf(out + o, len - o, "%s%d", seen == 1 ? "" : seen == total ? " or " : ", ", k);
			o += w > 0 ? (size_t)w : 0;
		}
}

/* `hami` and `hami_volcano`: "count=RES [memory=RES] [memory_percent=RES] [cores=RES]
 * [uuid=ANNOTATION]", each a Kubernetes name once {chip} is filled in; `hami_chip`: the word
 * {chip} becomes, a name part. 1 when key is none of them. */
static int hami_key(struct xp_where *p, const char *key, char *val, struct xp_mhami *h, struct xp_mhami *hv,
		    char *chip)
{
	if (strcmp(key, "hami_chip") == 0) {
		bool ok = *val && isalnum((unsigned char)val[0]) && isalnum((unsigned char)val[strlen(val) - 1]);
		for (const char *q = val; ok && *q; q++)
			ok = ((unsigned char)*q < 0x80) && (isalnum((unsigned char)*q) || strchr("-_.", *q));
		if (!ok)
			return xp_where_errf(p, "hami_chip: '%.40s' is not [A-Za-z0-9._-]", val);
		return copy_field(p, chip, 48, key, val);
	}
	bool volcano = strcmp(key, "hami_volcano") == 0;
	if (!volcano && strcmp(key, "hami") != 0)
		return 1;
	struct xp_mhami t;
	memset(&t, 0, sizeof t);
	char *save = NULL;
	for (char *w = strtok_r(val, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(w, '=');
		if (!eq)
			return xp_where_errf(p, "%s: '%s' is not key=value", key, w);
		*eq = '\0';
		char *dst = strcmp(w, "count") == 0 ? t.count : strcmp(w, "memory") == 0 ? t.memory
			    : strcmp(w, "memory_percent") == 0 ? t.memory_percent : strcmp(w, "cores") == 0 ? t.cores
			    : strcmp(w, "uuid") == 0 ? t.uuid : NULL;
		if (!dst)
			return xp_where_errf(p, "%s: unknown key '%s' (count, memory, memory_percent, cores, uuid)", key, w);
		char *probe = substitute(eq + 1, "{chip}", "x");
		bool ok = xp_k8s_resource_valid(probe);
		free(probe);
		if (!ok)
			return xp_where_errf(p, "%s: %s '%.80s' is not a Kubernetes name (DOMAIN/NAME) once {chip} is "
					     "filled in", key, w, eq + 1);
		if (copy_field(p, dst, sizeof t.count, w, eq + 1) < 0)
			return -1;
	}
	if (!t.count[0])
		return xp_where_errf(p, "%s: needs count=RESOURCE", key);
	*(volcano ? hv : h) = t;
	return 0;
}

/* One name of a sharing layer with {chip} filled in; false when it needs a chip and has none. */
static bool hami_fill(char *dst, const char *pat, const char *chip)
{
	if (!strstr(pat, "{chip}")) {
		snprintf(dst, 128, "%s", pat);
		return true;
	}
	if (!chip || !*chip)
		return false;
	char *s = substitute(pat, "{chip}", chip);
	bool ok = strlen(s) < 128 && xp_k8s_resource_valid(s);
	if (ok)
		snprintf(dst, 128, "%s", s);
	free(s);
	return ok;
}

bool xp_manifest_hami(const struct xp_manifest *m, const struct xp_mmodel *md, bool volcano, struct xp_mhami *out)
{
	memset(out, 0, sizeof *out);
	const struct xp_mhami *h = NULL;
	if (volcano)
		h = md && md->hami_volcano.count[0] ? &md->hami_volcano
		    : m && m->hami_volcano.count[0] ? &m->hami_volcano : NULL;
	if (!h)
		h = md && md->hami.count[0] ? &md->hami : m && m->hami.count[0] ? &m->hami : NULL;
	if (!h)
		return false;
	const char *chip = md && md->hami_chip[0] ? md->hami_chip : m ? m->hami_chip : NULL;
	struct xp_mhami t;
	memset(&t, 0, sizeof t);
	if (!hami_fill(t.count, h->count, chip) || !hami_fill(t.memory, h->memory, chip) ||
	    !hami_fill(t.memory_percent, h->memory_percent, chip) || !hami_fill(t.cores, h->cores, chip) ||
	    !hami_fill(t.uuid, h->uuid, chip))
		return false;
	*out = t;
	return true;
}
