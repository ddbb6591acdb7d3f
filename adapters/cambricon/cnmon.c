/* cnmon.c: parser of `cnmon info`, Cambricon's per-card report for MLU accelerators.
 *
 * UNTESTED AGAINST A REAL CAPTURE. No complete public `cnmon info` output with a traceable source
 * was available, so this follows the documented and quoted field names, not a recording:
 *   - one block per card opened by a "Card N" line, then "Key   : value" lines indented under
 *     it: Cambricon's own BANG C tutorial quotes "    Product Name                   : MLU370-X8",
 *     "Firmware : v1.1.6", "Driver : v5.10.26", "Compute Mode : Default" as `cnmon info` output;
 *     scripts that parse it key on "Card" (id last on the line), "Product", "Driver" and "Total"
 *     (value then unit, MiB);
 *   - nested sections whose header has no value: "Temperature" (Board, Chip, Memory), "Power"
 *     (Usage, Cap), "Physical Memory Usage" (Total, Used, Free), "Utilization" (MLU Average),
 *     "PCI" (Domain ID, Bus num, Device, Function), "Health State" (Device): the names cnmon's
 *     own JSON mode mirrors (PhysicalMemUsage.Total, Temperature.Chip, Utilization.MLUAverage).
 * Anything else is ignored, so fields a real version adds or renames cost only that field. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cambricon.h"

#define LINE_BYTES 1024
#define MAX_DEPTH 16

/* The PCI address comes in parts, put together when the card's block ends. */
struct pci_parts {
	char domain[8], bus[8], dev[8], fn[8]; /* 4+2+2+1 digits; 4 x 7 + 3 fits bus_id */
};

struct level {
	int indent;
	char key[64];
};

/* "Card 3" -> 3; -1 for anything else. */
static int card_header(const char *s)
{
	if (strncasecmp(s, "Card", 4) != 0 || !isspace((unsigned char)s[4]))
		return -1;
	s += 4;
	while (isspace((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)*s))
		return -1;
	long n = 0;
	for (; isdigit((unsigned char)*s); s++)
		if ((n = n * 10 + (*s - '0')) > 100000)
			return -1;
	return *s ? -1 : (int)n;
}

static bool is(const char *a, const char *b)
{
	return strcasecmp(a, b) == 0;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);
	return n >= t && strcasecmp(s + n - t, tail) == 0;
}

/* A measurement "44 W", "64 C", "66 %"; false for "N/A" and anything not starting with one. */
static bool number(const char *v, double *out)
{
	char *end;
	double d = strtod(v, &end);
	if (end == v || !isfinite(d))
		return false;
	*out = d;
	return true;
}

/* "23308 MiB" in MiB; a bare number is taken as MiB, the unit cnmon prints. */
static bool mib(const char *v, int64_t *out)
{
	double d;
	char *end;
	d = strtod(v, &end);
	if (end == v || !isfinite(d) || d < 0 || d > 1e15)
		return false;
	while (isspace((unsigned char)*end))
		end++;
	if (strncasecmp(end, "GiB", 3) == 0 || strncasecmp(end, "GB", 2) == 0)
		d *= 1024;
	else if (strncasecmp(end, "KiB", 3) == 0 || strncasecmp(end, "KB", 2) == 0)
		d /= 1024;
	else if (*end == 'B' || *end == 'b')
		d /= 1048576;
	*out = (int64_t)llround(d);
	return true;
}

static void set(char *dst, size_t size, const char *v)
{
	if (!dst[0] && *v && strncasecmp(v, "N/A", 3) != 0)
		xp_raw_set(dst, size, v, strlen(v));
}

/* Applies one "key : value" line under its enclosing section (parent, "" at card level). */
static void apply(struct xp_raw_device *d, struct pci_parts *pci, bool *chip_temp, const char *parent,
		  const char *key, const char *val)
{
	double x;
	int64_t m;
	if (!*parent) {
		if (is(key, "Product Name"))
			set(d->name, sizeof d->name, val);
		else if (is(key, "Firmware"))
			set(d->firmware, sizeof d->firmware, val);
		else if (is(key, "Driver"))
			set(d->driver, sizeof d->driver, val);
		else if (is(key, "UUID"))
			set(d->uuid, sizeof d->uuid, val);
		else if (ends_with(key, "Serial Number"))
			set(d->serial, sizeof d->serial, val);
		else if (is(key, "Bus") || is(key, "Bus-Id") || is(key, "Bus Id"))
			set(d->bus_id, sizeof d->bus_id, val);
		else if ((is(key, "Health") || is(key, "Health State")) && *val)
			set(d->health, sizeof d->health, val);
		else if ((is(key, "MLU Util") || is(key, "MLU Utilization")) && number(val, &x))
			d->utilization_pct = x;
		else if (is(key, "Temperature") && number(val, &x))
			d->temperature_c = x;
		else if (is(key, "Power") && number(val, &x))
			d->power_w = x;
		return;
	}
	if (is(parent, "Temperature")) {
		/* The chip is what throttles; the board sensor only when the chip is not given. */
		if (is(key, "Chip") && number(val, &x)) {
			d->temperature_c = x;
			*chip_temp = true;
		} else if (is(key, "Board") && !*chip_temp && number(val, &x))
			d->temperature_c = x;
	} else if (is(parent, "Power")) {
		if (is(key, "Usage") && number(val, &x))
			d->power_w = x;
		else if (is(key, "Cap") && number(val, &x))
			d->power_limit_w = x;
	} else if (is(parent, "Physical Memory Usage") || is(parent, "Memory Usage")) {
		if (is(key, "Total") && mib(val, &m))
			d->memory_total_mib = m;
		else if (is(key, "Used") && mib(val, &m))
			d->memory_used_mib = m;
	} else if (is(parent, "Utilization")) {
		if (is(key, "MLU Average") && number(val, &x))
			d->utilization_pct = x;
	} else if (is(parent, "PCI")) {
		if (is(key, "Domain ID"))
			snprintf(pci->domain, sizeof pci->domain, "%s", val);
		else if (is(key, "Bus num"))
			snprintf(pci->bus, sizeof pci->bus, "%s", val);
		else if (is(key, "Device"))
			snprintf(pci->dev, sizeof pci->dev, "%s", val);
		else if (is(key, "Function"))
			snprintf(pci->fn, sizeof pci->fn, "%s", val);
	} else if (is(parent, "Health State")) {
		if (is(key, "Device"))
			set(d->health, sizeof d->health, val);
	}
}

static void finish(struct xp_raw_device *d, const struct pci_parts *pci)
{
	if (d->bus_id[0] || !pci->bus[0])
		return;
	snprintf(d->bus_id, sizeof d->bus_id, "%s:%s:%s.%s", pci->domain[0] ? pci->domain : "0000", pci->bus,
		 pci->dev[0] ? pci->dev : "00", pci->fn[0] ? pci->fn : "0");
}

int xp_cnmon_parse_info(const char *text, size_t len, struct xp_raw_node *node, char *err, size_t errlen)
{
	char host[sizeof node->hostname];
	memcpy(host, node->hostname, sizeof host);
	xp_raw_node_init(node);
	memcpy(node->hostname, host, sizeof host);
	if (!text)
		len = 0;
	size_t start = 0;
	while (start < len && isspace((unsigned char)text[start]))
		start++;
	if (start == len) {
		snprintf(err, errlen, "cnmon: empty output");
		return -1;
	}
	struct xp_raw_device *cur = NULL;
	struct pci_parts pci;
	struct level stack[MAX_DEPTH];
	int depth = 0, cards = 0;
	bool chip_temp = false;
	char line[LINE_BYTES];
	size_t pos = 0;
	while (xp_text_next_line(text, len, &pos, line, sizeof line)) {
		char *s = xp_text_trim(line);
		int idx = card_header(s);
		if (idx >= 0) {
			if (cur)
				finish(cur, &pci);
			cards++;
			cur = NULL;
			if (node->n_devices < XP_RAW_MAX_DEVICES) {
				cur = &node->devices[node->n_devices++];
				xp_raw_device_init(cur);
				cur->index = idx;
			}
			memset(&pci, 0, sizeof pci);
			depth = 0;
			chip_temp = false;
			continue;
		}
		char *colon = cur ? strchr(line, ':') : NULL;
		if (!colon)
			continue;
		int indent = 0;
		while (line[indent] == ' ' || line[indent] == '\t')
			indent++;
		*colon = '\0';
		char *key = xp_text_trim(line), *val = xp_text_trim(colon + 1);
		if (!*key)
			continue;
		/* Sections nest by indentation: close every one at or deeper than this line. */
		while (depth > 0 && stack[depth - 1].indent >= indent)
			depth--;
		apply(cur, &pci, &chip_temp, depth ? stack[depth - 1].key : "", key, val);
		if (depth < MAX_DEPTH) {
			stack[depth].indent = indent;
			snprintf(stack[depth].key, sizeof stack[depth].key, "%s", key);
			depth++;
		}
	}
	if (cur)
		finish(cur, &pci);
	if (cards > XP_RAW_MAX_DEVICES)
		xp_raw_warn(node, "cnmon: %d cards beyond the %d kept", cards - XP_RAW_MAX_DEVICES,
			    XP_RAW_MAX_DEVICES);
	if (!node->n_devices) {
		snprintf(err, errlen, "cnmon: no \"Card N\" block in the output");
		return -1;
	}
	return 0;
}
