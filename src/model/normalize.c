/* normalize.c: raw adapter reports -> the model (see normalize.h for ECU). */
#include "normalize.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "istr.h"

/* Per thread: the console's refresh thread loads with its own database connection while
 * the key loop may run a command with another. */
static _Thread_local xp_coefficient_fn coef_fn;
static _Thread_local void *coef_arg;

/* The answers of the hook while it is installed: a cluster has few (model, driver) pairs and
 * many devices, and each answer is a database query. */
struct coef_memo {
	char *model, *driver;
	double c;
};
static _Thread_local struct coef_memo *memo;
static _Thread_local size_t n_memo, cap_memo;
#define MEMO_MAX 4096

void xp_normalize_set_coefficient_hook(xp_coefficient_fn fn, void *arg)
{
	coef_fn = fn;
	coef_arg = arg;
	for (size_t i = 0; i < n_memo; i++) {
		free(memo[i].model);
		free(memo[i].driver);
	}
	free(memo);
	memo = NULL;
	n_memo = cap_memo = 0;
}

/* The stored baseline for (model, driver), or NaN: the hook's answer, asked once per pair. */
static double coefficient(const char *model, const char *driver)
{
	if (!coef_fn)
		return XP_NA;
	for (size_t i = 0; i < n_memo; i++)
		if (strcmp(memo[i].model, model) == 0 &&
		    (memo[i].driver == driver || (memo[i].driver && driver && strcmp(memo[i].driver, driver) == 0)))
			return memo[i].c;
	double c = coef_fn(model, driver, coef_arg);
	if (n_memo < MEMO_MAX) {
		xp_grow(&memo, sizeof *memo, n_memo, &cap_memo);
		memo[n_memo++] = (struct coef_memo){xp_strdup(model), xp_strdup(driver), c};
	}
	return c;
}

__attribute__((format(printf, 2, 3))) static void node_warn(struct xp_node *n, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	/* The same disagreement found on every refresh is one warning, not many. */
	xp_strv_add_once(&n->warnings, &n->n_warnings, buf);
}

bool xp_normalize_bus_id(const char *in, char *out, size_t len)
{
	unsigned long dom, bus, dev, fn;
	char tail;
	if (!in || sscanf(in, "%lx:%lx:%lx.%lx%c", &dom, &bus, &dev, &fn, &tail) != 4)
		return false;
	if (bus > 0xff || dev > 0x1f || fn > 7 || dom > 0xffffffffUL)
		return false;
	if (dom > 0xffff)
		snprintf(out, len, "%08lx:%02lx:%02lx.%lx", dom, bus, dev, fn);
	else
		snprintf(out, len, "%04lx:%02lx:%02lx.%lx", dom, bus, dev, fn);
	return true;
}

static void set_str(char **slot, const char *v)
{
	if (!v || !*v)
		return;
	free(*slot);
	*slot = xp_strdup(v);
}

/* As set_str for an interned field (istr.h): every device of a model shares the text. */
static void set_istr(const char **slot, const char *v)
{
	if (!v || !*v)
		return;
	xp_istr_set(slot, v);
}

/* Raises a device's health to level (never lowers it) and records why. */
static void escalate(struct xp_device *d, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void escalate(struct xp_device *d, int level, const char *fmt, ...)
{
	if (level > d->health)
		d->health = level;
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	xp_strv_add_once(&d->health_reasons, &d->n_health_reasons, buf);
}

/* The vendor's own health word, in our three levels. */
static int vendor_health(const char *w)
{
	static const char *const ok[] = {"ok", "normal", "healthy", "pass", "good"};
	static const char *const warn[] = {"warning", "warn", "minor", "degraded"};
	static const char *const fail[] = {"alarm", "critical", "major", "error", "fault", "failed",
					   "fail", "abnormal", "unhealthy"};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		if (strcasecmp(w, ok[i]) == 0)
			return XP_HEALTH_OK;
	for (size_t i = 0; i < sizeof warn / sizeof warn[0]; i++)
		if (strcasecmp(w, warn[i]) == 0)
			return XP_HEALTH_WARN;
	for (size_t i = 0; i < sizeof fail / sizeof fail[0]; i++)
		if (strcasecmp(w, fail[i]) == 0)
			return XP_HEALTH_FAIL;
	return -1;
}

void xp_normalize_health(struct xp_device *d, double tw, double tc, double pw, double pc)
{
	/* Only what was measured can say "ok": a device the tool merely named stays unknown. */
	bool measured = XP_HAS(d->temperature_c) || (XP_HAS(d->power_w) && XP_HAS(d->power_limit_w)) ||
			d->ecc_uncorrected >= 0 || d->retired_pages >= 0;
	if (d->health == XP_HEALTH_UNKNOWN && measured)
		d->health = XP_HEALTH_OK;
	if (XP_HAS(d->temperature_c)) {
		if (XP_HAS(tc) && d->temperature_c >= tc)
			escalate(d, XP_HEALTH_FAIL, "temperature %.0f C at or above %.0f C (critical)", d->temperature_c, tc);
		else if (XP_HAS(tw) && d->temperature_c >= tw)
			escalate(d, XP_HEALTH_WARN, "temperature %.0f C at or above %.0f C", d->temperature_c, tw);
	}
	if (XP_HAS(d->power_w) && XP_HAS(d->power_limit_w) && d->power_limit_w > 0) {
		double pct = d->power_w / d->power_limit_w * 100;
		if (XP_HAS(pc) && pct >= pc)
			escalate(d, XP_HEALTH_FAIL, "power %.0f W is %.0f%% of the %.0f W limit (critical at %.0f%%)",
				 d->power_w, pct, d->power_limit_w, pc);
		else if (XP_HAS(pw) && pct >= pw)
			escalate(d, XP_HEALTH_WARN, "power %.0f W is %.0f%% of the %.0f W limit", d->power_w, pct,
				 d->power_limit_w);
	}
	if (d->ecc_uncorrected > 0)
		escalate(d, XP_HEALTH_WARN, "%lld uncorrected ECC errors", (long long)d->ecc_uncorrected);
	if (d->retired_pages > 0)
		escalate(d, XP_HEALTH_WARN, "%lld retired memory pages", (long long)d->retired_pages);
}

/* How many 16-bit operations one operation at this precision is worth. */
static double conversion(const char *prec)
{
	return strcasecmp(prec, "int8") == 0 || strcasecmp(prec, "fp8") == 0 ? 0.5 : 1.0;
}

void xp_normalize_rebase(struct xp_node *n)
{
	if (!coef_fn)
		return;
	for (size_t i = 0; i < n->n_devices; i++) {
		struct xp_device *d = &n->devices[i];
		char prec[16];
		if (!XP_HAS(d->ecu) || !d->ecu_basis || !d->model || sscanf(d->ecu_basis, "%15s", prec) != 1)
			continue;
		const struct xp_peak *pk = NULL;
		for (size_t k = 0; k < d->n_peaks && !pk; k++)
			if (d->peaks[k].precision && strcasecmp(d->peaks[k].precision, prec) == 0)
				pk = &d->peaks[k];
		double c = pk ? coefficient(d->model, d->driver) : XP_NA;
		if (!XP_HAS(c))
			continue;
		/* From the peak the node counted with, not from its rounded basis text. */
		double conv = conversion(pk->precision);
		d->ecu = pk->value * conv * c;
		xp_istr_drop(d->ecu_basis);
		d->ecu_basis = xp_asprintf("%s %g %s%s x %.2f (baseline)", pk->precision, pk->value,
					   pk->unit ? pk->unit : "", conv != 1.0 ? " x 1/2" : "", c);
	}
}

static const struct xp_mpeak *peak_of(const struct xp_mmodel *md, const char *prec)
{
	for (size_t i = 0; i < md->n_peaks; i++)
		if (strcasecmp(md->peaks[i].precision, prec) == 0)
			return &md->peaks[i];
	return NULL;
}

static void set_ecu(struct xp_device *d, const struct xp_manifest *m, const struct xp_mmodel *md)
{
	const char *want = md->ecu_precision[0] ? md->ecu_precision : m->ecu_precision;
	if (!want[0] || (strcmp(md->cls, "inference") == 0 && !md->ecu_precision[0]))
		want = strcmp(md->cls, "inference") == 0 ? "int8" : "bf16";
	const struct xp_mpeak *pk = peak_of(md, want);
	/* A part without the preferred figure falls back in a fixed order, and says so. */
	static const char *const order[] = {"bf16", "fp16", "int8", "tf32", "fp32"};
	for (size_t i = 0; !pk && i < sizeof order / sizeof order[0]; i++)
		pk = peak_of(md, order[i]);
	if (!pk)
		return;
	double coef = md->coefficient;
	const char *from = "manifest";
	if (coef_fn) {
		double c = coefficient(md->name, d->driver);
		if (XP_HAS(c)) {
			coef = c;
			from = "baseline";
		}
	}
	double conv = conversion(pk->precision);
	d->ecu = pk->value * conv * coef;
	xp_istr_drop(d->ecu_basis);
	d->ecu_basis = xp_asprintf("%s %g %s%s x %.2f (%s)", pk->precision, pk->value, pk->unit,
				   conv != 1.0 ? " x 1/2" : "", coef, from);
}

static int pci_device_id(const struct xp_device *d)
{
	unsigned v, dev;
	if (d->pci_id && sscanf(d->pci_id, "%x:%x", &v, &dev) == 2)
		return (int)dev;
	return -1;
}

/* Adds a device no hwloc object stands for, keeping the existing link cells. */
static size_t add_device(struct xp_node *n)
{
	size_t k = n->n_devices;
	struct xp_link *old = n->links;
	n->links = NULL;
	xp_node_add_device(n);
	xp_node_links_reset(n);
	for (size_t a = 0; a < k; a++)
		for (size_t b = 0; b < k; b++)
			n->links[a * (k + 1) + b] = old[a * k + b];
	free(old);
	return k;
}

/* A token that names a product (H100, M2075, K40m, MI100, T4): letters and digits both, not
 * a memory size (80GB), a memory kind (HBM3), a form factor (SXM5, PCIe4, Gen4) or the bare id
 * of a function pci.ids does not name ("Device d801"); base is the whole name t is in. */
static bool model_token(const char *base, const char *t, size_t n)
{
	if (t - base >= 7 && strncasecmp(t - 7, "Device ", 7) == 0)
		return false;
	bool alpha = false, digit = false;
	for (size_t i = 0; i < n; i++) {
		alpha |= isalpha((unsigned char)t[i]) != 0;
		digit |= isdigit((unsigned char)t[i]) != 0;
	}
	if (n < 2 || !alpha || !digit)
		return false;
	size_t d = 0;
	while (d < n && isdigit((unsigned char)t[d]))
		d++;
	if (d && n - d <= 2 && (t[d] == 'G' || t[d] == 'g' || t[d] == 'M' || t[d] == 'm' || t[d] == 'T' || t[d] == 't'))
		return false; /* 80GB, 16G, 512MB */
	static const char *const forms[] = {"sxm", "pcie", "gen", "hbm", "gddr", "oam"};
	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		size_t l = strlen(forms[i]);
		if (n > l && strncasecmp(t, forms[i], l) == 0)
			return false;
	}
	return true;
}

/* Does the word of n bytes at w appear among the product tokens of s? *any is set when s has one. */
static bool has_token(const char *s, const char *w, size_t n, bool *any)
{
	const char *base = s;
	bool found = false;
	while (*s) {
		while (*s && !isalnum((unsigned char)*s))
			s++;
		size_t l = 0;
		while (s[l] && isalnum((unsigned char)s[l]))
			l++;
		if (l && model_token(base, s, l)) {
			*any = true;
			if (l == n && strncasecmp(s, w, n) == 0)
				found = true;
		}
		s += l;
	}
	return found;
}

bool xp_normalize_names_disagree(const char *a, const char *b)
{
	if (!a || !b)
		return false;
	bool any_a = false, any_b = false, shared = false;
	has_token(b, "", 0, &any_b);
	for (const char *s = a; *s;) {
		while (*s && !isalnum((unsigned char)*s))
			s++;
		size_t l = 0;
		while (s[l] && isalnum((unsigned char)s[l]))
			l++;
		if (l && model_token(a, s, l)) {
			any_a = true;
			bool ignored = false;
			if (has_token(b, s, l, &ignored))
				shared = true;
		}
		s += l;
	}
	/* Without a product token on both sides there is nothing to compare. */
	return any_a && any_b && !shared;
}

/* The PCI database's name of the function at bus (hwloc's PCIVendor and PCIDevice), or NULL. */
static const char *pci_name(const struct xp_node *n, const char *bus)
{
	for (size_t i = 0; bus && i < n->n_pci; i++)
		if (n->pci[i].bus_id && strcasecmp(n->pci[i].bus_id, bus) == 0)
			return n->pci[i].name;
	return NULL;
}

/* A MIG compute instance's name, "<c>c.<g>g.<mem>" (the MIG user guide's device names: a GPU
 * instance split into compute instances): c and where the GPU instance's profile starts. */
static const char *ci_split(const char *p, int *c)
{
	char *e;
	long v = strtol(p, &e, 10);
	if (e == p || e[0] != 'c' || e[1] != '.' || v <= 0 || v > 8)
		return NULL;
	*c = (int)v;
	return e + 2;
}

/* The device's instances as allocations. An instance whose profile no tool named stays
 * "slice" (no template has that name, so placement says the profile is unknown). The compute
 * instances of one split GPU instance ("1c.3g.71gb", "2c.3g.71gb") are that GPU instance once,
 * held ("compute instances"): a job asking its profile cannot have it; they are one GPU
 * instance when their GPU instance ids agree or, ids unknown, while their c add up to its g. */
static void slices_to_allocs(struct xp_device *d, const struct xp_raw_device *r)
{
	int ns = r->n_slices < XP_RAW_MAX_SLICES ? r->n_slices : XP_RAW_MAX_SLICES;
	d->allocs = xp_calloc((size_t)ns, sizeof *d->allocs);
	int gi[XP_RAW_MAX_SLICES], csum[XP_RAW_MAX_SLICES];
	for (int i = 0; i < ns; i++) {
		const struct xp_raw_slice *s = &r->slices[i];
		int c = 0;
		const char *gp = s->profile[0] ? ci_split(s->profile, &c) : NULL;
		if (gp && d->n_allocs > 0) {
			size_t k = d->n_allocs - 1;
			struct xp_alloc *prev = &d->allocs[k];
			bool same = prev->owner && strcmp(prev->owner, "compute instances") == 0 &&
				    strcmp(prev->slice, gp) == 0;
			if (same && s->gpu_instance >= 0 && gi[k] >= 0)
				same = s->gpu_instance == gi[k];
			else if (same)
				same = csum[k] + c <= atoi(gp);
			if (same) {
				csum[k] += c;
				continue;
			}
		}
		struct xp_alloc *a = &d->allocs[d->n_allocs];
		gi[d->n_allocs] = s->gpu_instance;
		csum[d->n_allocs] = c;
		d->n_allocs++;
		a->slice = xp_strdup(gp ? gp : s->profile[0] ? s->profile : "slice");
		a->owner = gp ? xp_strdup("compute instances") : NULL;
		a->memory_mib = s->memory_mib;
		a->uuid = s->uuid[0] && !gp ? xp_strdup(s->uuid) : NULL;
	}
}

static void apply_device(struct xp_node *n, size_t idx, const struct xp_raw_device *r,
			 const struct xp_manifest *m, const char *adapter)
{
	struct xp_device *d = &n->devices[idx];
	const struct xp_mmodel *md = xp_manifest_model(m, r->name, pci_device_id(d));
	/* The PCI id names one product, the vendor tool another: a flashed or misreported board,
	 * or a bus id that is not the device the tool means. The tool's name is kept. */
	const char *pn = pci_name(n, d->pci_bus_id);
	if (r->name[0] && xp_normalize_names_disagree(pn, r->name))
		node_warn(n, "ACC%d %s: PCI id %s is %s, %s says %s", d->index, d->pci_bus_id, d->pci_id ? d->pci_id : "-",
			  pn, adapter, r->name);
	if (r->index >= 0)
		d->vendor_index = r->index;
	set_istr(&d->vendor, md && md->vendor[0] ? md->vendor : m->vendor);
	if (md)
		set_istr(&d->model, md->name);
	else
		set_istr(&d->model, r->name);
	set_istr(&d->arch, r->arch[0] ? r->arch : md ? md->generation : NULL);
	set_str(&d->uuid, r->uuid[0] ? r->uuid : r->serial);
	set_istr(&d->driver, r->driver);
	set_istr(&d->firmware, r->firmware);
	set_istr(&d->runtime, r->runtime);
	if (r->memory_total_mib >= 0)
		d->memory_mib = r->memory_total_mib;
	else if (md && md->memory_mib >= 0 && d->memory_mib < 0)
		d->memory_mib = md->memory_mib;
	d->memory_used_mib = r->memory_used_mib;
	d->temperature_c = r->temperature_c;
	d->power_w = r->power_w;
	d->power_limit_w = r->power_limit_w;
	d->utilization_pct = XP_HAS(r->utilization_pct) && r->utilization_pct > 100 ? 100 : r->utilization_pct;
	d->ecc_corrected = r->ecc_corrected;
	d->ecc_uncorrected = r->ecc_uncorrected;
	d->retired_pages = r->retired_pages;

	/* NUMA: hwloc reads the firmware's tables and wins; a different answer is worth saying. */
	if (r->numa >= 0 && d->numa >= 0 && r->numa != d->numa)
		node_warn(n, "ACC%d %s: %s says NUMA %d, hwloc says NUMA %d (keeping hwloc's)", d->index,
			  d->pci_bus_id ? d->pci_bus_id : "", adapter, r->numa, d->numa);
	else if (r->numa >= 0 && d->numa < 0)
		d->numa = r->numa;

	/* Identity from the manifest. */
	for (size_t i = 0; i < d->n_peaks; i++) {
		xp_istr_drop(d->peaks[i].precision);
		xp_istr_drop(d->peaks[i].unit);
	}
	free(d->peaks);
	d->peaks = NULL;
	d->n_peaks = 0;
	if (md) {
		d->peaks = xp_calloc(md->n_peaks ? md->n_peaks : 1, sizeof *d->peaks);
		for (size_t i = 0; i < md->n_peaks; i++) {
			d->peaks[i].precision = xp_istr(md->peaks[i].precision);
			d->peaks[i].value = md->peaks[i].value;
			d->peaks[i].unit = xp_istr(md->peaks[i].unit);
		}
		d->n_peaks = md->n_peaks;
		set_ecu(d, m, md);
		if (md->memory_access)
			d->mem_access = md->memory_access;
		if (md->partition)
			d->partition = md->partition;
	}
	if (r->mig_mode == 1)
		d->partition |= XP_PART_MIG;
	/* The mode itself, apart from the capability: a GPU in MIG mode is never offered whole. */
	d->mig_mode = r->mig_mode == 0 || r->mig_mode == 1 ? r->mig_mode : -1;

	/* Slices that exist now (MIG instances, vNPUs): current allocations of the device. */
	for (size_t i = 0; i < d->n_allocs; i++) {
		free(d->allocs[i].slice);
		free(d->allocs[i].owner);
		free(d->allocs[i].uuid);
	}
	free(d->allocs);
	d->allocs = NULL;
	d->n_allocs = 0;
	if (r->n_slices > 0)
		slices_to_allocs(d, r);

	/* Processes now: replaced by every read (they come and go); unknown when the tool does
	 * not list them. The strings are cleaned with the rest of the node (xp_node_clean). */
	xp_device_procs_clear(d);
	int np = r->n_procs < XP_RAW_MAX_PROCS ? r->n_procs : XP_RAW_MAX_PROCS;
	if (np >= 0) {
		d->procs_known = true;
		if (np)
			d->procs = xp_calloc((size_t)np, sizeof *d->procs);
		for (int i = 0; i < np; i++) {
			const struct xp_raw_proc *rp = &r->procs[i];
			struct xp_proc *p = &d->procs[d->n_procs++];
			p->pid = rp->pid > 0 ? rp->pid : -1;
			p->user = rp->user[0] ? xp_strndup(rp->user, sizeof rp->user) : NULL;
			p->command = rp->name[0] ? xp_strndup(rp->name, sizeof rp->name) : NULL;
			p->memory_mib = rp->memory_mib >= 0 ? rp->memory_mib : -1;
			p->util_pct = isfinite(rp->util_pct) && rp->util_pct >= 0 && rp->util_pct <= 100 ? rp->util_pct : XP_NA;
			snprintf(p->type, sizeof p->type, "%.3s", rp->type);
		}
	}

	/* Health: the vendor's word first, then our thresholds on what it measured. */
	xp_strv_free(d->health_reasons, d->n_health_reasons);
	d->health_reasons = NULL;
	d->n_health_reasons = 0;
	d->health = XP_HEALTH_UNKNOWN;
	if (r->health[0]) {
		int h = vendor_health(r->health);
		if (h == XP_HEALTH_OK)
			d->health = XP_HEALTH_OK;
		if (h < 0)
			escalate(d, XP_HEALTH_WARN, "%s health '%s' not understood", adapter, r->health);
		else if (h > XP_HEALTH_OK && !r->n_reasons)
			escalate(d, h, "%s reports %s", adapter, r->health);
		else if (h > XP_HEALTH_OK)
			d->health = h; /* the adapter's reasons below say why */
	}
	for (int i = 0; i < r->n_reasons && i < XP_RAW_MAX_REASONS; i++)
		escalate(d, d->health > XP_HEALTH_OK ? d->health : XP_HEALTH_WARN, "%s", r->reasons[i]);
	double tw = md && XP_HAS(md->temp_warn) ? md->temp_warn : m->temp_warn;
	double tc = md && XP_HAS(md->temp_crit) ? md->temp_crit : m->temp_crit;
	double pw = md && XP_HAS(md->power_warn) ? md->power_warn : m->power_warn;
	double pc = md && XP_HAS(md->power_crit) ? md->power_crit : m->power_crit;
	xp_normalize_health(d, tw, tc, pw, pc);
	if (d->driver && !xp_manifest_driver_ok(m, d->driver))
		escalate(d, XP_HEALTH_WARN, "driver %s outside the versions %s supports", d->driver, m->name);
}

static int rule_of(const struct xp_manifest *m, const struct xp_mmodel *md, int *ring)
{
	if (md && md->affinity) {
		*ring = md->ring_size;
		return md->affinity;
	}
	*ring = m->ring_size;
	return m->affinity;
}

static int find_root(int *parent, int i)
{
	while (parent[i] != i)
		i = parent[i] = parent[parent[i]];
	return i;
}

/* The group of the device at index under a ring or card rule of ring: a card is the tool's own
 * card where it lists chips on cards (npu-smi's NPU id on Atlas 300I), else consecutive
 * indices. */
static char *group_name(int rule, int ring, int index, bool chips)
{
	int g = rule == XP_AFF_CARD && chips ? index : index / ring;
	return xp_asprintf("%s:%d", rule == XP_AFF_RING ? "hccs" : "card", g);
}

/* The groups xp_normalize_groups gives; with write false, only whether it would give any. */
static bool groups_give(struct xp_node *n, const struct xp_manifest *const *ms, size_t nm, bool write)
{
	bool any = false;
	for (size_t i = 0; i < n->n_devices; i++) {
		struct xp_device *d = &n->devices[i];
		if (d->affinity_group || !d->model || d->index < 0)
			continue;
		int same = 0;
		for (size_t j = 0; j < n->n_devices; j++)
			same += n->devices[j].model && strcasecmp(n->devices[j].model, d->model) == 0;
		for (size_t k = 0; k < nm; k++) {
			const struct xp_mmodel *md = xp_manifest_model(ms[k], d->model, -1);
			if (!md)
				continue;
			int ring = 0, rule = rule_of(ms[k], xp_manifest_layout(ms[k], md, same), &ring);
			if ((rule == XP_AFF_RING || rule == XP_AFF_CARD) && ring > 0) {
				if (!write)
					return true;
				d->affinity_group = group_name(rule, ring, d->index, false);
				any = true;
			}
			break;
		}
	}
	return any;
}

void xp_normalize_groups(struct xp_node *n, const struct xp_manifest *const *ms, size_t nm)
{
	groups_give(n, ms, nm, true);
}

void xp_normalize_groups_cow(struct xp_node **slot, const struct xp_manifest *const *ms, size_t nm)
{
	struct xp_node *n = *slot;
	if (!groups_give(n, ms, nm, false))
		return;
	/* Another cluster (the agent pool's, the console's last) holds this node too, and reads
	 * it from another thread: change a copy of it instead. */
	if (__atomic_load_n(&n->refs, __ATOMIC_ACQUIRE) != 0) {
		*slot = xp_node_clone(n);
		xp_node_free(n);
		n = *slot;
	}
	groups_give(n, ms, nm, true);
}

/* Affinity groups and the links they imply, by the manifest's rule. */
static void apply_affinity(struct xp_node *n, const struct xp_raw_node *raw, const int *map, int nr,
			   const struct xp_manifest *m)
{
	int parent[XP_RAW_MAX_DEVICES];
	for (int i = 0; i < nr; i++)
		parent[i] = i;
	for (int i = 0; i < nr; i++) {
		if (map[i] < 0)
			continue;
		struct xp_device *d = &n->devices[map[i]];
		const struct xp_raw_device *r = &raw->devices[i];
		int ring = 0, same = 0;
		bool chips = false;
		/* A [layout] may apply by how many devices of the model the node holds. */
		for (int j = 0; j < nr; j++) {
			same += map[j] >= 0 && strcasecmp(raw->devices[j].name, r->name) == 0;
			chips = chips || raw->devices[j].chip > 0;
		}
		const struct xp_mmodel *md = xp_manifest_layout(m, xp_manifest_model(m, r->name, pci_device_id(d)), same);
		int rule = rule_of(m, md, &ring);
		if ((rule == XP_AFF_RING || rule == XP_AFF_CARD) && ring > 0 && r->index >= 0) {
			xp_istr_drop(d->affinity_group);
			d->affinity_group = group_name(rule, ring, r->index, chips);
			int g = r->index / ring;
			/* The ring's own links, unless the tool already said what they are (chips of a
			 * card share only its PCIe switch: no link is implied). */
			for (int j = 0; j < nr && rule == XP_AFF_RING; j++) {
				const struct xp_raw_device *o = &raw->devices[j];
				if (j == i || map[j] < 0 || map[j] == map[i] || o->index < 0 || o->index / ring != g)
					continue;
				struct xp_link *l = xp_node_link(n, (size_t)map[i], (size_t)map[j]);
				if (!raw->has_links || !raw->links[i][j][0])
					*l = (struct xp_link){XP_LINK_HCCS, 0};
			}
		} else if (rule == XP_AFF_XGMI && r->group[0]) {
			xp_istr_drop(d->affinity_group);
			d->affinity_group = xp_asprintf("xgmi:%s", r->group);
		} else if (rule == XP_AFF_NVLINK) {
			for (int j = 0; j < nr; j++)
				if (j != i && map[j] >= 0 &&
				    xp_node_link(n, (size_t)map[i], (size_t)map[j])->cls == XP_LINK_NVLINK) {
					int a = find_root(parent, i), b = find_root(parent, j);
					if (a != b)
						parent[a < b ? b : a] = a < b ? a : b;
				}
		}
	}
	/* NVLink islands: named by their first device; a lone GPU keeps its PCIe group. */
	for (int i = 0; i < nr; i++) {
		if (map[i] < 0)
			continue;
		int root = find_root(parent, i);
		bool island = false;
		for (int j = 0; j < nr && !island; j++)
			island = j != i && map[j] >= 0 && find_root(parent, j) == root;
		if (island) {
			struct xp_device *d = &n->devices[map[i]];
			xp_istr_drop(d->affinity_group);
			d->affinity_group = xp_asprintf("nvlink:%d", n->devices[map[root]].index);
		}
	}
}

static bool pcie_class(int c)
{
	return c == XP_LINK_PIX || c == XP_LINK_PXB || c == XP_LINK_PHB || c == XP_LINK_NODE || c == XP_LINK_SYS;
}

void xp_normalize_merge(struct xp_node *n, const struct xp_raw_node *raw, const struct xp_manifest *m,
			const char *adapter)
{
	int map[XP_RAW_MAX_DEVICES];
	int nr = raw->n_devices < XP_RAW_MAX_DEVICES ? raw->n_devices : XP_RAW_MAX_DEVICES;
	bool *claimed = xp_calloc(XP_MAX_DEVICES, sizeof *claimed);
	bool has_topology = n->pus > 0 || n->n_pci > 0;
	for (int i = 0; i < nr; i++) {
		map[i] = -1;
		const struct xp_raw_device *r = &raw->devices[i];
		char bus[32];
		bool has_bus = xp_normalize_bus_id(r->bus_id, bus, sizeof bus);
		struct xp_device *d = has_bus ? xp_node_device_by_bus(n, bus) : NULL;
		size_t idx;
		if (d) {
			idx = (size_t)d->index;
			if (claimed[idx]) {
				/* Two reports of one bus id: keep the first, say so, never merge them. */
				node_warn(n, "%s: two devices report bus id %s; the second (index %d) is left out", adapter,
					  bus, r->index);
				continue;
			}
		} else {
			if (n->n_devices >= XP_MAX_DEVICES) {
				node_warn(n, "%s: more than %d devices; the rest are left out", adapter, XP_MAX_DEVICES);
				break;
			}
			/* hwloc did not see it (a replay without hwloc.xml, a VM): the tool's word stands. */
			idx = add_device(n);
			if (has_bus)
				n->devices[idx].pci_bus_id = xp_strdup(bus);
			else if (r->bus_id[0])
				node_warn(n, "%s: device %d has bus id '%s', which is not one", adapter, r->index,
					  r->bus_id);
			if (has_topology && has_bus)
				node_warn(n, "ACC%zu %s: %s reports it, but it is not on the PCI bus hwloc sees", idx, bus,
					  adapter);
		}
		claimed[idx] = true;
		map[i] = (int)idx;
		apply_device(n, idx, r, m, adapter);
	}
	if (raw->has_links) {
		for (int i = 0; i < nr; i++)
			for (int j = 0; j < nr; j++) {
				if (i == j || map[i] < 0 || map[j] < 0 || map[i] == map[j] || !raw->links[i][j][0])
					continue;
				struct xp_link l;
				if (xp_link_parse(raw->links[i][j], &l) < 0 || l.cls == XP_LINK_SELF) {
					node_warn(n, "%s: link ACC%d-ACC%d '%s' is not a link class", adapter, map[i],
						  map[j], raw->links[i][j]);
					continue;
				}
				struct xp_link *cur = xp_node_link(n, (size_t)map[i], (size_t)map[j]);
				/* The vendor tool knows NVLink and its own view of PCIe; it wins, but a
				 * PCIe disagreement with hwloc usually means a BIOS or a riser problem. */
				if (i < j && pcie_class(cur->cls) && pcie_class(l.cls) && cur->cls != l.cls) {
					char a[16], b[16];
					node_warn(n, "link ACC%d-ACC%d: hwloc says %s, %s says %s", map[i], map[j],
						  xp_link_str(*cur, a, sizeof a), adapter, xp_link_str(l, b, sizeof b));
				}
				*cur = l;
			}
	}
	apply_affinity(n, raw, map, nr, m);
	/* A device of this vendor on the PCI bus that the vendor's tool does not list has
	 * fallen off the bus, or has no working driver: the classic bring-up problem. */
	for (size_t k = 0; k < n->n_devices; k++) {
		struct xp_device *d = &n->devices[k];
		unsigned v = 0, dev = 0;
		if (claimed[k] || !d->pci_id || sscanf(d->pci_id, "%x:%x", &v, &dev) != 2 ||
		    !xp_manifest_has_vendor(m, v))
			continue;
		escalate(d, XP_HEALTH_WARN, "on the PCI bus, but %s does not report it (fallen off the bus, or no driver)",
			 adapter);
		node_warn(n, "ACC%zu %s: on the PCI bus, but %s does not report it", k,
			  d->pci_bus_id ? d->pci_bus_id : "", adapter);
	}
	free(claimed);
	for (int i = 0; i < raw->n_warnings && i < XP_RAW_MAX_WARNINGS; i++)
		node_warn(n, "%s: %s", adapter, raw->warnings[i]);
	xp_normalize_facts(n);
}

void xp_normalize_facts(struct xp_node *n)
{
	char cnt[32];
	snprintf(cnt, sizeof cnt, "%zu", n->n_devices);
	xp_labels_set(&n->facts, "accelerator.count", cnt);
	if (!n->n_devices)
		return;
	static const char *const keys[] = {"accelerator.vendor", "accelerator.model", "accelerator.driver"};
	for (int k = 0; k < 3; k++) {
		const char *v = NULL;
		bool mixed = false;
		for (size_t i = 0; i < n->n_devices; i++) {
			const struct xp_device *d = &n->devices[i];
			const char *x = k == 0 ? d->vendor : k == 1 ? d->model : d->driver;
			if (!x)
				continue;
			if (!v)
				v = x;
			else if (strcmp(v, x) != 0)
				mixed = true;
		}
		if (v)
			xp_labels_set(&n->facts, keys[k], mixed ? "mixed" : v);
	}
}
