/* nvidia.c: the NVIDIA adapter: NVML when the driver's library loads, otherwise nvidia-smi's
 * XML report and link matrix, or the recorded copies of both in a replay directory.
 * It never prints: what went wrong is in last_error (and in probe's err). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nvidia.h"

#define SMI_TIMEOUT_S 10.0

struct nv_state {
	const struct xp_host *host;
	void *nvml;        /* NVML handle when live with the library, else NULL */
	char smi[1024];    /* nvidia-smi's path when live without NVML */
	/* What probe read from nvidia-smi, kept for the enumerate that follows: on a large node
	 * `-q -x` takes seconds, and probe and enumerate come back to back. */
	struct xp_raw_node *probed;
	char err[512];
};

static const char *const smi_xml_args[] = {"-q", "-x", NULL};
static const char *const smi_topo_args[] = {"topo", "-m", NULL};
static const char *const smi_list_args[] = {"-L", NULL};

/* Gets one source's text: the recorded file in replay mode, nvidia-smi's output live.
 * 1 with *out (free with host->free), 0 when a replay file is absent, -1 with s->err. */
static int read_source(struct nv_state *s, const char *file, const char *const *args, char **out, size_t *len)
{
	const struct xp_host *h = s->host;
	*out = NULL;
	*len = 0;
	if (h->replay_dir) {
		if (!h->replay) {
			snprintf(s->err, sizeof s->err, "the host cannot read replay files");
			return -1;
		}
		s->err[0] = '\0';
		int r = h->replay(h, file, XP_NVSMI_MAX_TEXT, out, len, s->err, sizeof s->err);
		if (r > 0)
			return 1; /* an empty file is the parser's to complain about */
		if (*out && h->free)
			h->free(*out);
		*out = NULL;
		*len = 0;
		if (r < 0 && !s->err[0])
			snprintf(s->err, sizeof s->err, "cannot read %s from the replay directory", file);
		return r < 0 ? -1 : 0;
	}
	if (!s->smi[0] && !xp_tool_find("nvidia-smi", NULL, s->smi, sizeof s->smi)) {
		snprintf(s->err, sizeof s->err, "no nvidia-smi on PATH");
		return -1;
	}
	if (!h->run) {
		snprintf(s->err, sizeof s->err, "the host cannot run tools");
		return -1;
	}
	const char *argv[8] = {s->smi};
	for (int i = 0; args[i] && i < 6; i++)
		argv[i + 1] = args[i];
	char e[384] = "";
	if (h->run(argv, SMI_TIMEOUT_S, XP_NVSMI_MAX_TEXT, out, len, e, sizeof e) != 0) {
		snprintf(s->err, sizeof s->err, "nvidia-smi %s %s: %s", args[0], args[1] ? args[1] : "", e);
		if (*out && h->free)
			h->free(*out);
		*out = NULL;
		return -1;
	}
	return 1;
}

static void release(struct nv_state *s, char *text)
{
	if (text && s->host->free)
		s->host->free(text);
}

/* nvidia-smi -L names the MIG instances' profiles, which -q -x does not: merged when there are
 * instances to name or a replay directory holds the listing (a capture with only topo -m and -L).
 * Its failure costs only the names, said as a warning. */
static void name_instances(struct nv_state *s, struct xp_raw_node *node)
{
	bool want = s->host->replay_dir != NULL;
	for (int i = 0; i < node->n_devices && !want; i++)
		want = node->devices[i].n_slices > 0 || node->devices[i].mig_mode == 1;
	if (!want)
		return;
	char *text;
	size_t len;
	char saved[sizeof s->err];
	memcpy(saved, s->err, sizeof saved);
	int r = read_source(s, XP_NVSMI_LIST_FILE, smi_list_args, &text, &len);
	if (r > 0) {
		char e[256] = "";
		if (xp_nvsmi_parse_list(text, len, node, e, sizeof e) < 0)
			xp_raw_warn(node, "%s: %s", XP_NVSMI_LIST_FILE, e);
		release(s, text);
	} else if (r < 0) {
		xp_raw_warn(node, "MIG profiles unknown: %s", s->err);
	}
	memcpy(s->err, saved, sizeof saved);
}

/* Fills node (emptied) with the devices, keeping its hostname; names: also the MIG instances'
 * profiles (a refresh copies only metrics or health, so it does not run -L again). */
static int load_devices(struct nv_state *s, struct xp_raw_node *node, bool names)
{
	char hostname[sizeof node->hostname];
	memcpy(hostname, node->hostname, sizeof hostname);
	int rc;
	if (s->nvml) {
		rc = xp_nvml_enumerate(s->nvml, node, s->err, sizeof s->err);
	} else {
		char *text;
		size_t len;
		int r = read_source(s, XP_NVSMI_XML_FILE, smi_xml_args, &text, &len);
		if (r > 0) {
			rc = xp_nvsmi_parse_xml(text, len, node, s->err, sizeof s->err);
			release(s, text);
		} else if (r == 0) {
			/* A replay directory with only the matrix: its rows are the devices. */
			xp_raw_node_init(node);
			r = read_source(s, XP_NVSMI_TOPO_FILE, smi_topo_args, &text, &len);
			rc = r < 0 ? -1 : 0;
			if (r > 0) {
				rc = xp_nvsmi_parse_topo(text, len, node, s->err, sizeof s->err);
				release(s, text);
			}
		} else {
			xp_raw_node_init(node);
			rc = -1;
		}
	}
	if (rc == 0 && !s->nvml && names)
		name_instances(s, node);
	if (rc == 0 && !s->host->replay_dir)
		xp_raw_procs_from_proc(node, "/dev/nvidia");
	memcpy(node->hostname, hostname, sizeof hostname);
	return rc;
}

static int probe_replay(struct nv_state *s)
{
	static const char *const files[] = {XP_NVSMI_XML_FILE, XP_NVSMI_TOPO_FILE};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char *text;
		size_t len;
		int r = read_source(s, files[i], NULL, &text, &len);
		if (r < 0)
			return XP_PROBE_UNAVAILABLE;
		release(s, text);
		if (r > 0)
			return XP_PROBE_ACTIVE;
	}
	snprintf(s->err, sizeof s->err, "no %s or %s in the replay directory", XP_NVSMI_XML_FILE,
		 XP_NVSMI_TOPO_FILE);
	return XP_PROBE_IDLE;
}

static int probe_live(struct nv_state *s)
{
	char nerr[256] = "";
	void *nv = NULL;
	int r = xp_nvml_open(&nv, nerr, sizeof nerr);
	if (r == XP_PROBE_ACTIVE) {
		s->nvml = nv;
		return r;
	}
	if (r == XP_PROBE_IDLE) {
		xp_nvml_close(nv);
		snprintf(s->err, sizeof s->err, "%s", nerr);
		return r;
	}
	/* No usable NVML: nvidia-smi may still work (a container with the tool but not the
	 * library on its loader path). */
	if (!xp_tool_find("nvidia-smi", NULL, s->smi, sizeof s->smi)) {
		if (strncmp(nerr, XP_NVML_NOLIB, strlen(XP_NVML_NOLIB)) == 0)
			snprintf(s->err, sizeof s->err, "no %s and no nvidia-smi", XP_NVML_LIB);
		else
			snprintf(s->err, sizeof s->err, "%s; no nvidia-smi on PATH", nerr);
		return XP_PROBE_UNAVAILABLE;
	}
	s->probed = malloc(sizeof *s->probed);
	if (!s->probed) {
		snprintf(s->err, sizeof s->err, "out of memory");
		return XP_PROBE_UNAVAILABLE;
	}
	xp_raw_node_init(s->probed);
	if (load_devices(s, s->probed, true) < 0)
		return XP_PROBE_UNAVAILABLE;
	if (s->probed->n_devices == 0) {
		snprintf(s->err, sizeof s->err, "nvidia-smi lists no GPU");
		return XP_PROBE_IDLE;
	}
	return XP_PROBE_ACTIVE;
}

static void nv_close(void *st)
{
	struct nv_state *s = st;
	if (!s)
		return;
	xp_nvml_close(s->nvml);
	free(s->probed);
	free(s);
}

/* Only an active adapter keeps a state; idle and unavailable ones leave *st NULL and say why
 * in err. */
static int nv_probe(const struct xp_host *h, void **st, char *err, size_t errlen)
{
	*st = NULL;
	if (!h || h->abi != XP_ADAPTER_ABI) {
		snprintf(err, errlen, "host ABI %d, adapter ABI %d", h ? h->abi : -1, XP_ADAPTER_ABI);
		return XP_PROBE_UNAVAILABLE;
	}
	struct nv_state *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return XP_PROBE_UNAVAILABLE;
	}
	s->host = h;
	int r = h->replay_dir ? probe_replay(s) : probe_live(s);
	if (r == XP_PROBE_ACTIVE) {
		s->err[0] = '\0';
		*st = s;
	} else {
		snprintf(err, errlen, "%s", s->err);
		nv_close(s);
	}
	return r;
}

static int nv_enumerate(void *st, struct xp_raw_node *node)
{
	struct nv_state *s = st;
	s->err[0] = '\0';
	if (!s->probed)
		return load_devices(s, node, true);
	memcpy(s->probed->hostname, node->hostname, sizeof node->hostname);
	memcpy(node, s->probed, sizeof *node);
	free(s->probed);
	s->probed = NULL;
	return 0;
}

static int nv_topology(void *st, struct xp_raw_node *node)
{
	struct nv_state *s = st;
	s->err[0] = '\0';
	if (s->nvml)
		return xp_nvml_topology(s->nvml, node, s->err, sizeof s->err);
	char *text;
	size_t len;
	int r = read_source(s, XP_NVSMI_TOPO_FILE, smi_topo_args, &text, &len);
	if (r <= 0)
		return r; /* a replay directory without the matrix has no links to give */
	int rc = xp_nvsmi_parse_topo(text, len, node, s->err, sizeof s->err);
	release(s, text);
	return rc;
}

/* The fresh record of the device d was, matched by bus id, else by index. */
static const struct xp_raw_device *match(const struct xp_raw_node *fresh, const struct xp_raw_device *d)
{
	for (int i = 0; i < fresh->n_devices; i++) {
		const struct xp_raw_device *f = &fresh->devices[i];
		if (d->bus_id[0] ? strcasecmp(f->bus_id, d->bus_id) == 0 : f->index == d->index)
			return f;
	}
	return NULL;
}

/* Re-reads everything (NVML or the whole XML document) and copies either the metrics or the
 * health fields into node's devices. */
static int reread(struct nv_state *s, struct xp_raw_node *node, bool health)
{
	s->err[0] = '\0';
	struct xp_raw_node *fresh = malloc(sizeof *fresh);
	if (!fresh) {
		snprintf(s->err, sizeof s->err, "out of memory");
		return -1;
	}
	xp_raw_node_init(fresh);
	if (load_devices(s, fresh, false) < 0) {
		free(fresh);
		return -1;
	}
	for (int i = 0; i < node->n_devices; i++) {
		struct xp_raw_device *d = &node->devices[i];
		const struct xp_raw_device *f = match(fresh, d);
		if (!f) {
			xp_raw_warn(node, "GPU %d (%s) is no longer reported", d->index, d->bus_id);
			if (health) {
				xp_raw_add_reason(d, "no longer reported by the driver");
			} else {
				d->memory_used_mib = -1;
				d->temperature_c = d->power_w = d->utilization_pct = NAN;
			}
			continue;
		}
		xp_raw_copy_fresh(d, f, !health);
	}
	free(fresh);
	return 0;
}

static int nv_refresh(void *st, struct xp_raw_node *node)
{
	return reread(st, node, false);
}

static int nv_health(void *st, struct xp_raw_node *node)
{
	return reread(st, node, true);
}

static const char *nv_last_error(void *st)
{
	const struct nv_state *s = st;
	return s ? s->err : "the NVIDIA adapter is not active";
}

const struct xp_adapter xp_adapter_nvidia = {
	.abi = XP_ADAPTER_ABI,
	.name = "nvidia",
	.probe = nv_probe,
	.enumerate = nv_enumerate,
	.refresh = nv_refresh,
	.health = nv_health,
	.topology = nv_topology,
	.last_error = nv_last_error,
	.close = nv_close,
};
