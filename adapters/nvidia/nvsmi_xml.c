/* nvsmi_xml.c: parser of `nvidia-smi -q -x`, the XML report of every GPU.
 *
 * The element names moved between the DTD versions nvidia-smi declares (nvsmi_device_v10 to
 * v13): power_readings became gpu_power_readings, power_draw split into average and instant
 * draws, clocks_throttle_reasons became clocks_event_reasons, and the ECC counters went from
 * single_bit/double_bit totals to sram/dram correctable/uncorrectable counters. Each field
 * below is read from whichever spelling is present; "N/A" and missing elements leave it
 * unknown. The document is untrusted text: no DTD is loaded, no network is used, and entity
 * declarations are refused before libxml2 sees them. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include "nvidia.h"

static bool is_elem(const xmlNode *n, const char *name)
{
	return n && n->type == XML_ELEMENT_NODE && n->name && strcmp((const char *)n->name, name) == 0;
}

/* The first child element of n called name. */
static xmlNode *child(const xmlNode *n, const char *name)
{
	if (!n)
		return NULL;
	for (xmlNode *c = n->children; c; c = c->next)
		if (is_elem(c, name))
			return c;
	return NULL;
}

/* The element at a slash-separated path below n ("fb_memory_usage/total"). */
static xmlNode *path(const xmlNode *n, const char *p)
{
	xmlNode *cur = (xmlNode *)n;
	char part[64];
	while (cur && *p) {
		const char *slash = strchr(p, '/');
		size_t l = slash ? (size_t)(slash - p) : strlen(p);
		if (l >= sizeof part)
			return NULL;
		memcpy(part, p, l);
		part[l] = '\0';
		cur = child(cur, part);
		p += l + (slash ? 1 : 0);
	}
	return cur;
}

/* Trims blanks around s in place. */
static void trim(char *s)
{
	size_t len = strlen(s), start = 0;
	while (start < len && (s[start] == ' ' || s[start] == '\t' || s[start] == '\r' || s[start] == '\n'))
		start++;
	while (len > start &&
	       (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r' || s[len - 1] == '\n'))
		len--;
	memmove(s, s + start, len - start);
	s[len - start] = '\0';
}

/* Copies the text and CDATA children of a node list into buf, trimmed. Entity references are
 * skipped, never followed: reading their content would expand them. */
static const char *list_text(const xmlNode *first, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (const xmlNode *c = first; c; c = c->next) {
		if ((c->type != XML_TEXT_NODE && c->type != XML_CDATA_SECTION_NODE) || !c->content)
			continue;
		size_t l = strlen((const char *)c->content);
		if (l > size - 1 - len)
			l = size - 1 - len;
		memcpy(buf + len, c->content, l);
		len += l;
	}
	buf[len] = '\0';
	trim(buf);
	return buf;
}

static const char *text(const xmlNode *n, char *buf, size_t size)
{
	if (!n) {
		buf[0] = '\0';
		return buf;
	}
	return list_text(n->children, buf, size);
}

/* An attribute's value ("" when absent), read like element text. */
static const char *attr(const xmlNode *n, const char *name, char *buf, size_t size)
{
	buf[0] = '\0';
	for (const xmlAttr *a = n ? n->properties : NULL; a; a = a->next)
		if (a->name && strcmp((const char *)a->name, name) == 0)
			return list_text(a->children, buf, size);
	return buf;
}

/* False for the words nvidia-smi prints instead of a value. */
static bool known(const char *s)
{
	return *s && strcmp(s, "N/A") != 0 && strcasecmp(s, "Unknown Error") != 0 &&
	       strcmp(s, "Requested functionality has been deprecated") != 0;
}

/* Copies the element's text into a device field when it is a value. */
static void set_text(char *dst, size_t size, const xmlNode *n)
{
	char buf[512];
	if (known(text(n, buf, sizeof buf)))
		xp_raw_set(dst, size, buf, strlen(buf));
}

/* Reads a leading decimal number followed by nothing or a blank and a unit ("67.03 W", "27 C",
 * "-7 C"). Written out rather than strtod because the console may set LC_NUMERIC to a locale
 * whose decimal point is a comma. */
static bool decimal(const char *s, double *out)
{
	const char *p = s;
	bool neg = false;
	double v = 0;
	int digits = 0;
	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	for (; *p >= '0' && *p <= '9'; p++, digits++)
		v = v * 10 + (*p - '0');
	if (*p == '.') {
		double scale = 0.1;
		for (p++; *p >= '0' && *p <= '9'; p++, digits++, scale /= 10)
			v += (*p - '0') * scale;
	}
	if (!digits || (*p && *p != ' ') || !isfinite(v))
		return false;
	*out = neg ? -v : v;
	return true;
}

static double measure(const xmlNode *n)
{
	char buf[128];
	double v;
	return decimal(text(n, buf, sizeof buf), &v) ? v : NAN;
}

/* A count or a size: a non-negative whole number, -1 when unknown. */
static int64_t count(const xmlNode *n)
{
	double v = measure(n);
	return isnan(v) || v < 0 || v > 9e15 ? -1 : (int64_t)v;
}

/* The first of several alternative child elements that holds a value. */
static double measure_any(const xmlNode *n, const char *const *names)
{
	for (; *names; names++) {
		double v = measure(child(n, *names));
		if (!isnan(v))
			return v;
	}
	return NAN;
}

static bool says_yes(const xmlNode *n)
{
	char buf[32];
	return strcasecmp(text(n, buf, sizeof buf), "Yes") == 0;
}

/* Sum of the counters of one ECC scope (<volatile> or <aggregate>), -1 when none is known.
 * v10 and older: single_bit/total and double_bit/total. v11 on: sram_ and dram_ counters;
 * v13 splits sram_uncorrectable into _parity and _secded, which are added up. */
static int64_t ecc_scope(const xmlNode *scope, bool uncorrected)
{
	if (!scope)
		return -1;
	const xmlNode *old = child(scope, uncorrected ? "double_bit" : "single_bit");
	if (old)
		return count(child(old, "total"));
	int64_t sum = -1;
	for (const xmlNode *c = scope->children; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE)
			continue;
		const char *name = (const char *)c->name;
		size_t l = strlen(name);
		bool unc = strstr(name, "uncorrectable") != NULL;
		/* "_correctable" as a suffix keeps "sram_uncorrectable" out of the corrected sum. */
		bool cor = !unc && l >= 12 && strcmp(name + l - 12, "_correctable") == 0;
		if (uncorrected ? !unc : !cor)
			continue;
		int64_t v = count(c);
		if (v >= 0)
			sum = (sum < 0 ? 0 : sum) + v;
	}
	return sum;
}

/* Volatile counts restart with the driver; aggregate ones persist in the InfoROM but are written
 * back lazily, so either may be the larger: the larger is the one to judge health by. */
static int64_t ecc_total(const xmlNode *errors, bool uncorrected)
{
	int64_t v = ecc_scope(child(errors, "volatile"), uncorrected);
	int64_t a = ecc_scope(child(errors, "aggregate"), uncorrected);
	return v > a ? v : a;
}

/* Clock throttle (event) reasons that say something about the device's health, in
 * nvidia-smi's words. Idle, application clocks, display clocks, sync boost and the SW
 * power cap (a busy GPU holding to its configured limit) are normal operation. */
static const struct {
	const char *key, *reason;
} throttle_names[] = {
	{"sw_power_cap", NULL},
	{"hw_slowdown", "HW slowdown"},
	{"hw_thermal_slowdown", "HW thermal slowdown"},
	{"hw_power_brake_slowdown", "HW power brake slowdown"},
	{"sw_thermal_slowdown", "SW thermal slowdown"},
	{"gpu_idle", NULL},
	{"applications_clocks_setting", NULL},
	{"display_clocks_setting", NULL},
	{"sync_boost", NULL},
};

static void throttle_reasons(const xmlNode *list, const char *prefix, struct xp_raw_device *d)
{
	size_t pl = strlen(prefix);
	for (const xmlNode *c = list ? list->children : NULL; c; c = c->next) {
		char buf[64];
		if (c->type != XML_ELEMENT_NODE || strcmp(text(c, buf, sizeof buf), "Active") != 0)
			continue;
		const char *key = (const char *)c->name;
		if (strncmp(key, prefix, pl) == 0)
			key += pl;
		size_t i, n = sizeof throttle_names / sizeof throttle_names[0];
		for (i = 0; i < n && strcmp(throttle_names[i].key, key) != 0; i++)
			;
		if (i < n) {
			if (throttle_names[i].reason)
				xp_raw_add_reason(d, throttle_names[i].reason);
			continue;
		}
		/* A reason this parser does not know yet: report it in the tool's spelling. */
		char name[64];
		xp_raw_set(name, sizeof name, key, strlen(key));
		for (char *p = name; *p; p++)
			if (*p == '_')
				*p = ' ';
		xp_raw_add_reason(d, name);
	}
}

/* The first child element whose name ends with suffix (<fb_memory_usage>, and the
 * <shared_fb_memory_usage> that newer drivers print for MIG devices). */
static xmlNode *child_suffix(const xmlNode *n, const char *suffix)
{
	size_t sl = strlen(suffix);
	for (xmlNode *c = n ? n->children : NULL; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE)
			continue;
		size_t l = strlen((const char *)c->name);
		if (l >= sl && strcmp((const char *)c->name + l - sl, suffix) == 0)
			return c;
	}
	return NULL;
}

static int instance_id(const xmlNode *n)
{
	int64_t v = count(n);
	return v >= 0 && v <= INT32_MAX ? (int)v : -1;
}

static void mig_devices(const xmlNode *list, struct xp_raw_device *d, struct xp_raw_node *node)
{
	for (const xmlNode *m = list ? list->children : NULL; m; m = m->next) {
		if (!is_elem(m, "mig_device"))
			continue;
		struct xp_raw_slice *s = xp_raw_add_slice(node, d, "MIG devices");
		if (!s)
			return;
		s->gpu_instance = instance_id(child(m, "gpu_instance_id"));
		s->compute_instance = instance_id(child(m, "compute_instance_id"));
		s->memory_mib = count(child(child_suffix(m, "fb_memory_usage"), "total"));
		set_text(s->uuid, sizeof s->uuid, child(m, "uuid"));
		/* The DTDs seen so far carry no profile name; take one when an attribute or element
		 * gives it rather than guess it from sizes (7g.80gb and 7g.79gb name the same
		 * A100 instance). */
		char buf[64];
		if (known(attr(m, "profile", buf, sizeof buf)))
			xp_raw_set(s->profile, sizeof s->profile, buf, strlen(buf));
		else
			set_text(s->profile, sizeof s->profile, child(m, "profile"));
	}
}

/* <processes>: one <process_info> per process (pid, type C/G/C+G, process_name, used_memory
 * "22 MiB"). An empty <processes/> lists none; a missing one, or one holding only a word
 * ("N/A", a GeForce's "Not Supported" in older drivers), leaves the list unknown. */
static void processes(const xmlNode *list, struct xp_raw_device *d, struct xp_raw_node *node)
{
	if (!list)
		return;
	char buf[64];
	bool any = false;
	for (const xmlNode *c = list->children; c && !any; c = c->next)
		any = c->type == XML_ELEMENT_NODE;
	if (!any && text(list, buf, sizeof buf)[0])
		return;
	d->n_procs = 0;
	for (const xmlNode *c = list->children; c; c = c->next) {
		if (!is_elem(c, "process_info"))
			continue;
		struct xp_raw_proc *p = xp_raw_add_proc(node, d, "GPU");
		if (!p)
			continue; /* counted in procs_left_out */
		int64_t pid = count(child(c, "pid"));
		p->pid = pid > 0 && pid <= INT32_MAX ? pid : -1;
		set_text(p->type, sizeof p->type, child(c, "type"));
		if (strcmp(p->type, "C") != 0 && strcmp(p->type, "G") != 0 && strcmp(p->type, "C+G") != 0)
			p->type[0] = '\0';
		set_text(p->name, sizeof p->name, child(c, "process_name"));
		p->memory_mib = count(child(c, "used_memory"));
	}
}

static void parse_gpu(const xmlNode *g, const char *driver, const char *cuda, struct xp_raw_node *node)
{
	struct xp_raw_device *d = &node->devices[node->n_devices];
	xp_raw_device_init(d);
	/* The position in the report is nvidia-smi's index (`-i N`, GPUn in `topo -m`, NVML's
	 * index); minor_number is the /dev/nvidiaN number and can differ from it. */
	d->index = node->n_devices++;
	d->chip = 0;

	char buf[128];
	if (known(attr(g, "id", buf, sizeof buf)))
		xp_raw_set(d->bus_id, sizeof d->bus_id, buf, strlen(buf));
	else
		set_text(d->bus_id, sizeof d->bus_id, path(g, "pci/pci_bus_id"));
	set_text(d->name, sizeof d->name, child(g, "product_name"));
	set_text(d->arch, sizeof d->arch, child(g, "product_architecture"));
	set_text(d->uuid, sizeof d->uuid, child(g, "uuid"));
	set_text(d->serial, sizeof d->serial, child(g, "serial"));
	set_text(d->firmware, sizeof d->firmware, child(g, "vbios_version"));
	if (known(driver))
		xp_raw_set(d->driver, sizeof d->driver, driver, strlen(driver));
	if (known(cuda))
		snprintf(d->runtime, sizeof d->runtime, "CUDA %s", cuda);

	const xmlNode *fb = child(g, "fb_memory_usage");
	d->memory_total_mib = count(child(fb, "total"));
	d->memory_used_mib = count(child(fb, "used"));
	d->temperature_c = measure(path(g, "temperature/gpu_temp"));
	d->utilization_pct = measure(path(g, "utilization/gpu_util"));

	const xmlNode *pw = child(g, "gpu_power_readings");
	if (!pw)
		pw = child(g, "power_readings");
	static const char *const draws[] = {"power_draw", "instant_power_draw", "average_power_draw", NULL};
	static const char *const limits[] = {"enforced_power_limit", "current_power_limit", "power_limit", NULL};
	d->power_w = measure_any(pw, draws);
	d->power_limit_w = measure_any(pw, limits);

	const xmlNode *ecc = child(g, "ecc_errors");
	d->ecc_corrected = ecc_total(ecc, false);
	d->ecc_uncorrected = ecc_total(ecc, true);
	if (says_yes(path(g, "ecc_errors/aggregate/sram_threshold_exceeded")))
		xp_raw_add_reason(d, "SRAM error threshold exceeded");

	const xmlNode *rp = child(g, "retired_pages");
	int64_t sbe = count(path(rp, "multiple_single_bit_retirement/retired_count"));
	int64_t dbe = count(path(rp, "double_bit_retirement/retired_count"));
	d->retired_pages = sbe < 0 && dbe < 0 ? -1 : (sbe > 0 ? sbe : 0) + (dbe > 0 ? dbe : 0);
	if (says_yes(child(rp, "pending_retirement")))
		xp_raw_add_reason(d, "Page retirement pending");

	const xmlNode *rows = child(g, "remapped_rows");
	if (says_yes(child(rows, "remapped_row_failure")))
		xp_raw_add_reason(d, "Row remapping failure");
	if (says_yes(child(rows, "remapped_row_pending")))
		xp_raw_add_reason(d, "Row remapping pending");
	if (says_yes(path(g, "gpu_reset_status/reset_required")))
		xp_raw_add_reason(d, "GPU reset required");
	if (says_yes(path(g, "gpu_reset_status/drain_and_reset_recommended")))
		xp_raw_add_reason(d, "Drain and reset recommended");

	const xmlNode *thr = child(g, "clocks_event_reasons");
	if (thr)
		throttle_reasons(thr, "clocks_event_reason_", d);
	else
		throttle_reasons(child(g, "clocks_throttle_reasons"), "clocks_throttle_reason_", d);

	text(path(g, "mig_mode/current_mig"), buf, sizeof buf);
	d->mig_mode = strcasecmp(buf, "Enabled") == 0 ? 1 : strcasecmp(buf, "Disabled") == 0 ? 0 : -1;
	mig_devices(child(g, "mig_devices"), d, node);
	processes(child(g, "processes"), d, node);
}

int xp_nvsmi_parse_xml(const char *text_in, size_t len, struct xp_raw_node *node, char *err, size_t errlen)
{
	xp_raw_node_init(node);
	if (!text_in || !len) {
		xp_text_err(err, errlen, "nvidia-smi -q -x: empty input");
		return -1;
	}
	if (len > XP_NVSMI_MAX_TEXT) {
		xp_text_err(err, errlen, "nvidia-smi -q -x: input is %zu bytes, more than the %zu MiB limit", len,
		     XP_NVSMI_MAX_TEXT >> 20);
		return -1;
	}
	size_t lead = 0;
	while (lead < len && (text_in[lead] == ' ' || text_in[lead] == '\t' || text_in[lead] == '\r' ||
			      text_in[lead] == '\n'))
		lead++;
	if (lead == len || text_in[lead] != '<') {
		xp_text_err(err, errlen, "nvidia-smi -q -x: not XML (the text does not start with '<')");
		return -1;
	}
	/* nvidia-smi never declares entities; refusing them outright rules out entity expansion
	 * bombs and external entities whatever libxml2 version is installed. */
	if (memmem(text_in, len, "<!ENTITY", 8)) {
		xp_text_err(err, errlen, "nvidia-smi -q -x: entity declarations are not accepted");
		return -1;
	}

	char why[200];
	xmlDocPtr doc = xp_xml_read(text_in, len, NULL, why, sizeof why);
	if (!doc) {
		xp_text_err(err, errlen, "nvidia-smi -q -x: %s", why);
		return -1;
	}

	int rc = 0;
	const xmlNode *root = xmlDocGetRootElement(doc);
	if (!root || !is_elem(root, "nvidia_smi_log")) {
		xp_text_err(err, errlen, "nvidia-smi -q -x: the root element is <%.64s>, not <nvidia_smi_log>",
		     root && root->name ? (const char *)root->name : "");
		rc = -1;
	} else {
		char driver[64], cuda[64];
		text(child(root, "driver_version"), driver, sizeof driver);
		text(child(root, "cuda_version"), cuda, sizeof cuda);
		int seen = 0;
		for (const xmlNode *g = root->children; g; g = g->next) {
			if (!is_elem(g, "gpu"))
				continue;
			if (node->n_devices < XP_RAW_MAX_DEVICES)
				parse_gpu(g, driver, cuda, node);
			seen++;
		}
		if (seen > XP_RAW_MAX_DEVICES)
			xp_raw_warn(node, "nvidia-smi lists %d GPUs; only the first %d are kept", seen,
				    XP_RAW_MAX_DEVICES);
		/* The report counts the GPUs the driver has attached before listing them; fewer
		 * <gpu> elements is a cut report (or a GPU the driver lost while writing it). */
		char attached[32];
		text(child(root, "attached_gpus"), attached, sizeof attached);
		char *end = NULL;
		errno = 0;
		long want = attached[0] ? strtol(attached, &end, 10) : -1;
		bool count = end && end != attached && !*end && want >= 0 && errno == 0;
		if (count && want != seen)
			xp_raw_warn(node, "nvidia-smi says attached_gpus %ld but lists %d <gpu>", want, seen);
		else if (attached[0] && !count)
			xp_raw_warn(node, "nvidia-smi says attached_gpus %.20s, not a count; it lists %d <gpu>", attached,
				    seen);
	}
	xmlFreeDoc(doc);
	return rc;
}
