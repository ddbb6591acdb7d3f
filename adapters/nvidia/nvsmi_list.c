/* nvsmi_list.c: `nvidia-smi -L`, the one nvidia-smi report that names each MIG instance's profile
 * (`-q -x` gives its ids, memory and UUID but no profile). Its lines, as the recorded captures
 * show them (tests/fixtures/nvidia-smi/capture_h200-mig_590.48.01.txt):
 *   GPU 0: NVIDIA H200 (UUID: GPU-...)
 *     MIG 1g.18gb     Device  3: (UUID: MIG-...)
 * The profile is the word after "MIG ", as in the name NVML gives a MIG handle ("... MIG 1g.10gb"). */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvidia.h"

int xp_nv_mig_profile(const char *name, char *out, size_t outlen)
{
	if (outlen)
		out[0] = '\0';
	/* The last "MIG " word: a product name could hold the letters, a profile follows them. */
	const char *p = NULL;
	for (const char *q = name; (q = strstr(q, "MIG ")) != NULL; q++)
		if (q == name || q[-1] == ' ')
			p = q + 4;
	if (!p)
		return 0;
	while (*p == ' ')
		p++;
	size_t n = 0;
	while (p[n] && !isspace((unsigned char)p[n]))
		n++;
	/* A profile is "<g>g.<mem>gb" with an optional "<c>c." in front and "+me" behind: it starts
	 * with a digit and holds a dot. */
	if (n == 0 || n >= outlen || !isdigit((unsigned char)p[0]) || !memchr(p, '.', n))
		return 0;
	memcpy(out, p, n);
	out[n] = '\0';
	return 1;
}

/* The text between "(UUID: " and ")" on a line, "" when absent. */
static void line_uuid(const char *line, size_t len, char *out, size_t outlen)
{
	out[0] = '\0';
	const char *u = NULL;
	for (size_t i = 0; i + 7 <= len; i++)
		if (memcmp(line + i, "(UUID: ", 7) == 0) {
			u = line + i + 7;
			break;
		}
	if (!u)
		return;
	const char *e = memchr(u, ')', (size_t)(line + len - u));
	if (e)
		xp_raw_set(out, outlen, u, (size_t)(e - u));
}

static struct xp_raw_device *device_at(struct xp_raw_node *node, int index, const char *uuid)
{
	for (int i = 0; i < node->n_devices; i++)
		if (uuid[0] && strcmp(node->devices[i].uuid, uuid) == 0)
			return &node->devices[i];
	for (int i = 0; i < node->n_devices; i++)
		if (node->devices[i].index == index)
			return &node->devices[i];
	return NULL;
}

/* The slice a MIG line describes: the one with its UUID, else the Nth of the GPU (-L lists them
 * in the order -q -x and NVML do), else a new one when the other report gave none. */
static struct xp_raw_slice *slice_for(struct xp_raw_node *node, struct xp_raw_device *d, int nth,
				      const char *uuid, bool had)
{
	if (uuid[0])
		for (int i = 0; i < d->n_slices; i++)
			if (strcmp(d->slices[i].uuid, uuid) == 0)
				return &d->slices[i];
	if (had)
		return nth < d->n_slices && (!uuid[0] || !d->slices[nth].uuid[0]) ? &d->slices[nth] : NULL;
	return xp_raw_add_slice(node, d, "MIG devices");
}

int xp_nvsmi_parse_list(const char *text, size_t len, struct xp_raw_node *node, char *err, size_t errlen)
{
	struct xp_raw_device *d = NULL;
	bool had = false; /* whether d's instances came from the other report */
	int nth = 0, gpus = 0;
	const char *end = text + len;
	for (const char *l = text; l < end;) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		size_t ll = nl ? (size_t)(nl - l) : (size_t)(end - l);
		char line[512];
		xp_raw_set(line, sizeof line, l, ll);
		l = nl ? nl + 1 : end;
		char uuid[96];
		line_uuid(line, strlen(line), uuid, sizeof uuid);
		int idx;
		int off = 0;
		if (sscanf(line, "GPU %d: %n", &idx, &off) == 1 && off > 0) {
			gpus++;
			d = device_at(node, idx, uuid);
			nth = 0;
			had = d && d->n_slices > 0;
			if (!d)
				continue;
			const char *u = strstr(line, " (UUID: ");
			if (!d->name[0] && u)
				xp_raw_set(d->name, sizeof d->name, line + off, (size_t)(u - line - off));
			if (!d->uuid[0] && uuid[0])
				xp_raw_set(d->uuid, sizeof d->uuid, uuid, strlen(uuid));
			continue;
		}
		const char *m = line;
		while (*m == ' ' || *m == '\t')
			m++;
		if (!d || strncmp(m, "MIG ", 4) != 0)
			continue;
		char profile[32];
		if (!xp_nv_mig_profile(m, profile, sizeof profile))
			continue;
		int dev = nth;
		const char *dv = strstr(m, " Device ");
		if (dv)
			sscanf(dv + 8, "%d", &dev);
		nth++;
		struct xp_raw_slice *s = slice_for(node, d, dev, uuid, had);
		if (!s)
			continue;
		d->mig_mode = 1; /* instances exist only in MIG mode */
		if (!s->profile[0])
			xp_raw_set(s->profile, sizeof s->profile, profile, strlen(profile));
		if (!s->uuid[0] && uuid[0])
			xp_raw_set(s->uuid, sizeof s->uuid, uuid, strlen(uuid));
	}
	if (gpus == 0 && len > 0) {
		snprintf(err, errlen, "nvidia-smi -L lists no GPU line");
		return -1;
	}
	return 0;
}
