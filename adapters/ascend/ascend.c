/* ascend.c: the Huawei Ascend adapter: `npu-smi info` and `npu-smi info -m`, run live
 * or read from a replay directory (npu-smi-info.txt, npu-smi-info-m.txt).
 *
 * Never prints: everything it has to say goes into node warnings or last_error. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ascend.h"

#define INFO_FILE "npu-smi-info.txt"
#define MAP_FILE "npu-smi-info-m.txt"
#define TOOL "npu-smi"
#define TOOL_TIMEOUT_S 15.0
struct ascend {
	const struct xp_host *host;
	char tool[4096]; /* npu-smi's full path (live) */
	char err[256];
};

static void release(const struct ascend *a, char *p)
{
	if (!p)
		return;
	if (a->host->free)
		a->host->free(p);
	else
		free(p);
}

/* Reads one npu-smi output: the replay file, or `npu-smi info [-m]` (m_flag). 1 with *out,
 * 0 when the replay directory lacks the file (that source is absent), -1 with err set. */
static int fetch(const struct ascend *a, bool m_flag, char **out, size_t *len, char *err,
		 size_t errlen)
{
	const struct xp_host *h = a->host;
	const char *file = m_flag ? MAP_FILE : INFO_FILE;
	char why[200] = "";
	*out = NULL;
	*len = 0;
	if (h->replay_dir) {
		if (!h->replay) {
			snprintf(err, errlen, "%s: the host cannot read replay files", file);
			return -1;
		}
		int r = h->replay(h, file, XP_NPUSMI_MAX_TEXT, out, len, why, sizeof why);
		if (r < 0) {
			snprintf(err, errlen, "%s: %s", file, why[0] ? why : "cannot be read");
			*out = NULL;
			return -1;
		}
		return r > 0 ? 1 : 0;
	}
	const char *argv[] = {a->tool, "info", m_flag ? "-m" : NULL, NULL};
	if (!h->run || h->run(argv, TOOL_TIMEOUT_S, XP_NPUSMI_MAX_TEXT, out, len, why, sizeof why) != 0) {
		snprintf(err, errlen, "npu-smi info%s: %s", m_flag ? " -m" : "",
			 why[0] ? why : "cannot be run");
		*out = NULL;
		return -1;
	}
	return 1;
}

/* Reads and parses `npu-smi info` into node (initialized here). 0, or -1 with a->err set;
 * absent_ok: a replay directory without the file gives an empty node. */
static int read_info(struct ascend *a, struct xp_raw_node *node, bool absent_ok)
{
	xp_raw_node_init(node);
	char *text;
	size_t len;
	int r = fetch(a, false, &text, &len, a->err, sizeof a->err);
	if (r < 0)
		return -1;
	if (r == 0) {
		if (absent_ok)
			return 0;
		snprintf(a->err, sizeof a->err, "%s: absent from the replay directory", INFO_FILE);
		return -1;
	}
	char why[200] = "";
	int rc = xp_npusmi_parse_info(text, len, node, why, sizeof why);
	release(a, text);
	if (rc < 0) {
		snprintf(a->err, sizeof a->err, "%s: %s", a->host->replay_dir ? INFO_FILE : "npu-smi info",
			 why);
		return -1;
	}
	if (!a->host->replay_dir)
		xp_raw_procs_from_proc(node, "/dev/davinci");
	return 0;
}

static int ascend_probe(const struct xp_host *h, void **st, char *err, size_t errlen)
{
	*st = NULL;
	if (!h || h->abi != XP_ADAPTER_ABI) {
		snprintf(err, errlen, "host ABI %d, adapter ABI %d", h ? h->abi : -1, XP_ADAPTER_ABI);
		return XP_PROBE_UNAVAILABLE;
	}
	struct ascend *a = calloc(1, sizeof *a);
	if (!a) {
		snprintf(err, errlen, "out of memory");
		return XP_PROBE_UNAVAILABLE;
	}
	a->host = h;
	if (h->replay_dir) {
		/* Rehearsal: the recorded table stands for the hardware. */
		char *text;
		size_t len;
		int r = fetch(a, false, &text, &len, err, errlen);
		if (r < 0) {
			free(a);
			return XP_PROBE_UNAVAILABLE;
		}
		release(a, text);
		*st = a;
		if (r == 0) {
			snprintf(err, errlen, "no %s in the replay directory", INFO_FILE);
			return XP_PROBE_IDLE;
		}
		return XP_PROBE_ACTIVE;
	}
	if (!xp_tool_find(TOOL, NULL, a->tool, sizeof a->tool)) {
		snprintf(err, errlen, "npu-smi not found");
		free(a);
		return XP_PROBE_UNAVAILABLE;
	}
	/* The node record is large (every device's partitions); not for the stack. */
	struct xp_raw_node *node = malloc(sizeof *node);
	if (!node) {
		snprintf(err, errlen, "out of memory");
		free(a);
		return XP_PROBE_UNAVAILABLE;
	}
	if (read_info(a, node, false) < 0) {
		snprintf(err, errlen, "%s", a->err);
		free(node);
		free(a);
		return XP_PROBE_UNAVAILABLE;
	}
	int n = node->n_devices;
	free(node);
	*st = a;
	if (!n) {
		snprintf(err, errlen, "npu-smi lists no NPU");
		return XP_PROBE_IDLE;
	}
	return XP_PROBE_ACTIVE;
}

static int ascend_enumerate(void *st, struct xp_raw_node *node)
{
	struct ascend *a = st;
	if (!a || !node)
		return -1;
	if (read_info(a, node, true) < 0)
		return -1;
	if (!node->n_devices && a->host->replay_dir)
		return 0; /* nothing recorded, nothing to name */
	/* The map only adds product names; without it the table's names stay. */
	char *text;
	size_t len;
	char why[256];
	int r = fetch(a, true, &text, &len, why, sizeof why);
	if (r < 0) {
		xp_raw_warn(node, "%s; names as npu-smi info prints them", why);
	} else if (r > 0) {
		char perr[200] = "";
		if (xp_npusmi_parse_map(text, len, node, perr, sizeof perr) < 0)
			xp_raw_warn(node, "npu-smi info -m: %s; names as npu-smi info prints them", perr);
		release(a, text);
	}
	return 0;
}

/* The device of fresh listing the same chip as d, or NULL. */
static const struct xp_raw_device *same_chip(const struct xp_raw_node *fresh,
					     const struct xp_raw_device *d)
{
	for (int i = 0; i < fresh->n_devices; i++)
		if (fresh->devices[i].index == d->index && fresh->devices[i].chip == d->chip)
			return &fresh->devices[i];
	return NULL;
}

/* Re-reads the table into a scratch node for refresh and health. */
static struct xp_raw_node *reread(struct ascend *a)
{
	struct xp_raw_node *fresh = malloc(sizeof *fresh);
	if (!fresh) {
		snprintf(a->err, sizeof a->err, "out of memory");
		return NULL;
	}
	if (read_info(a, fresh, false) < 0) {
		free(fresh);
		return NULL;
	}
	return fresh;
}

static int ascend_refresh(void *st, struct xp_raw_node *node)
{
	struct ascend *a = st;
	if (!a || !node)
		return -1;
	struct xp_raw_node *fresh = reread(a);
	if (!fresh)
		return -1;
	/* A chip the tool no longer lists has no current reading; stale numbers would look
	 * healthy. health() says why. */
	struct xp_raw_device none;
	xp_raw_device_init(&none);
	for (int i = 0; i < node->n_devices; i++) {
		struct xp_raw_device *d = &node->devices[i];
		const struct xp_raw_device *f = same_chip(fresh, d);
		if (!f)
			f = &none;
		d->memory_used_mib = f->memory_used_mib;
		d->memory_total_mib = f->memory_total_mib;
		d->temperature_c = f->temperature_c;
		d->power_w = f->power_w;
		d->utilization_pct = f->utilization_pct;
		d->n_procs = f->n_procs;
		d->procs_left_out = f->procs_left_out;
		if (f->n_procs > 0)
			memcpy(d->procs, f->procs, (size_t)f->n_procs * sizeof d->procs[0]);
	}
	free(fresh);
	return 0;
}

static int ascend_health(void *st, struct xp_raw_node *node)
{
	struct ascend *a = st;
	if (!a || !node)
		return -1;
	struct xp_raw_node *fresh = reread(a);
	if (!fresh)
		return -1;
	for (int i = 0; i < node->n_devices; i++) {
		struct xp_raw_device *d = &node->devices[i];
		const struct xp_raw_device *f = same_chip(fresh, d);
		if (f) {
			memcpy(d->health, f->health, sizeof d->health);
			memcpy(d->reasons, f->reasons, sizeof d->reasons);
			d->n_reasons = f->n_reasons;
		} else {
			d->health[0] = '\0';
			d->n_reasons = 1;
			snprintf(d->reasons[0], sizeof d->reasons[0], "no longer listed by npu-smi info");
		}
	}
	free(fresh);
	return 0;
}

/* npu-smi info prints no link matrix, so has_links stays false. The HCCS rings of the
 * 910 training servers (0-3 and 4-7) are the manifest's `affinity = ring:4` rule, which
 * the core applies to device indexes; links within a ring are HCCS, across rings SYS. */
static int ascend_topology(void *st, struct xp_raw_node *node)
{
	(void)st;
	if (!node)
		return -1;
	node->has_links = false;
	return 0;
}

static const char *ascend_last_error(void *st)
{
	const struct ascend *a = st;
	if (!a)
		return "ascend: not probed";
	return a->err[0] ? a->err : "no error";
}

static void ascend_close(void *st)
{
	free(st);
}

const struct xp_adapter xp_adapter_ascend = {
	.abi = XP_ADAPTER_ABI,
	.name = "ascend",
	.probe = ascend_probe,
	.enumerate = ascend_enumerate,
	.refresh = ascend_refresh,
	.health = ascend_health,
	.topology = ascend_topology,
	.last_error = ascend_last_error,
	.close = ascend_close,
};
