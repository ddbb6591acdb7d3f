/* rocminfo.c: parser of `rocminfo`, the HSA runtime's list of agents. rocm-smi does not say
 * which ISA (gfx906, gfx928) a card runs or how many compute units it has; rocminfo does, one
 * "Agent N" block per CPU and GPU, with "Key:   value" lines indented under it. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "amd.h"

#define LINE_BYTES 1024

/* "Agent 12" (the block header between lines of stars). */
static bool is_agent_header(const char *s)
{
	if (strncmp(s, "Agent", 5) != 0 || !isspace((unsigned char)s[5]))
		return false;
	s += 5;
	while (isspace((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)*s))
		return false;
	while (isdigit((unsigned char)*s))
		s++;
	return *s == '\0';
}

static bool is_accelerator(const struct xp_rocminfo_agent *a)
{
	return strcasecmp(a->type, "GPU") == 0 || strcasecmp(a->type, "DCU") == 0;
}

int xp_rocminfo_agents(const char *text, size_t len, struct xp_rocminfo_agent *agents, int max, char *err,
		       size_t errlen)
{
	if (!text)
		len = 0;
	struct xp_rocminfo_agent cur;
	bool in_agent = false, any_agent = false;
	int base = -1, count = 0;
	char line[LINE_BYTES];
	size_t pos = 0;
	while (xp_text_next_line(text, len, &pos, line, sizeof line)) {
		char *s = xp_text_trim(line);
		bool header = is_agent_header(s), done = strncmp(s, "*** Done", 8) == 0;
		if ((header || done) && in_agent) {
			if (is_accelerator(&cur)) {
				if (count < max)
					agents[count] = cur;
				count++;
			}
			in_agent = false;
		}
		if (header) {
			memset(&cur, 0, sizeof cur);
			cur.compute_units = -1;
			in_agent = any_agent = true;
			base = -1;
			continue;
		}
		if (!in_agent)
			continue;
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		/* Agent fields sit at one indent; deeper lines (pools, ISA, cache) repeat key names
		 * such as "Name" and must not overwrite them. */
		int indent = 0;
		while (line[indent] == ' ' || line[indent] == '\t')
			indent++;
		if (base < 0)
			base = indent;
		if (indent != base)
			continue;
		*colon = '\0';
		char *key = xp_text_trim(line), *val = xp_text_trim(colon + 1);
		if (strcmp(key, "Name") == 0)
			xp_raw_set(cur.name, sizeof cur.name, val, strlen(val));
		else if (strcmp(key, "Marketing Name") == 0)
			xp_raw_set(cur.marketing, sizeof cur.marketing, val, strlen(val));
		else if (strcmp(key, "Uuid") == 0)
			xp_raw_set(cur.uuid, sizeof cur.uuid, val, strlen(val));
		else if (strcmp(key, "Device Type") == 0)
			xp_raw_set(cur.type, sizeof cur.type, val, strlen(val));
		else if (strcmp(key, "Compute Unit") == 0) {
			char *end;
			long n = strtol(val, &end, 10);
			if (end != val && n >= 0 && n < 1 << 20)
				cur.compute_units = (int)n;
		}
	}
	if (in_agent && is_accelerator(&cur)) {
		if (count < max)
			agents[count] = cur;
		count++;
	}
	if (!any_agent) {
		snprintf(err, errlen, "rocminfo: no \"Agent N\" block in the output");
		return -1;
	}
	return count;
}

/* The hex digits of an id without "GPU-" or "0x" or leading zeros, lowercased, so that
 * rocminfo's "GPU-04edfb117a17a07d" meets rocm-smi's "0x4edfb117a17a07d"; false when the id
 * is not hex (rocminfo prints "GPU-XX" for parts without one). */
static bool uuid_key(const char *s, char *out, size_t size)
{
	if (strncasecmp(s, "GPU-", 4) == 0)
		s += 4;
	if (strncasecmp(s, "0x", 2) == 0)
		s += 2;
	while (*s == '0' && s[1])
		s++;
	size_t o = 0;
	for (; *s; s++) {
		if (!isxdigit((unsigned char)*s) || o + 1 >= size)
			return false;
		out[o++] = (char)tolower((unsigned char)*s);
	}
	out[o] = '\0';
	return o > 0;
}

static bool same_uuid(const char *a, const char *b)
{
	char ka[96], kb[96];
	return uuid_key(a, ka, sizeof ka) && uuid_key(b, kb, sizeof kb) && strcmp(ka, kb) == 0;
}

int xp_rocminfo_parse(const char *text, size_t len, struct xp_raw_node *node, char *err, size_t errlen)
{
	struct xp_rocminfo_agent *agents = calloc(XP_RAW_MAX_DEVICES, sizeof *agents);
	if (!agents) {
		snprintf(err, errlen, "rocminfo: out of memory");
		return -1;
	}
	int n = xp_rocminfo_agents(text, len, agents, XP_RAW_MAX_DEVICES, err, errlen);
	if (n < 0) {
		free(agents);
		return -1;
	}
	if (n > XP_RAW_MAX_DEVICES) {
		xp_raw_warn(node, "rocminfo: %d accelerators beyond the %d kept", n - XP_RAW_MAX_DEVICES,
			    XP_RAW_MAX_DEVICES);
		n = XP_RAW_MAX_DEVICES;
	}
	bool create = node->n_devices == 0, used[XP_RAW_MAX_DEVICES] = {false};
	for (int k = 0; k < n; k++) {
		const struct xp_rocminfo_agent *a = &agents[k];
		int pick = -1;
		for (int i = 0; i < node->n_devices && pick < 0; i++)
			if (!used[i] && a->uuid[0] && same_uuid(a->uuid, node->devices[i].uuid))
				pick = i;
		/* Without a shared id, both tools list the cards in the same (KFD node) order. */
		if (pick < 0 && k < node->n_devices && !used[k])
			pick = k;
		if (pick < 0 && create && node->n_devices < XP_RAW_MAX_DEVICES) {
			pick = node->n_devices++;
			xp_raw_device_init(&node->devices[pick]);
			node->devices[pick].index = k;
		}
		if (pick < 0) {
			xp_raw_warn(node, "rocminfo: agent %s (%s) matches no rocm-smi card", a->name,
				    a->marketing[0] ? a->marketing : a->type);
			continue;
		}
		used[pick] = true;
		struct xp_raw_device *d = &node->devices[pick];
		/* rocminfo's ISA name is the compiler target, more exact than rocm-smi's "GFX Version". */
		if (a->name[0])
			snprintf(d->arch, sizeof d->arch, "%s", a->name);
		if (!d->name[0] && a->marketing[0])
			snprintf(d->name, sizeof d->name, "%s", a->marketing);
		if (!d->uuid[0] && a->uuid[0])
			snprintf(d->uuid, sizeof d->uuid, "%s", a->uuid);
	}
	free(agents);
	return 0;
}
