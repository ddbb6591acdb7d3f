/* amd.c: the AMD adapter: AMD Instinct and Radeon GPUs (PCI vendor 1002) and Hygon DCUs
 * (1d94), whose DTK ships the same rocm-smi and a hy-smi speaking the same JSON. It reads
 * `rocm-smi --json` for identity, memory, versions and metrics, and `rocminfo` for the ISA
 * (gfx906, gfx928). Live, the tools run through the host; in replay, it reads rocm-smi.json
 * and rocminfo.txt. It never prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amd.h"

#define TOOL_TIMEOUT_S 15.0

/* What rocm-smi asks for. First the query telegraf runs (its amd_rocm_smi plugin), which made
 * our MI100, MI50 and RX 6700 XT fixtures: everything, links and NUMA included. Older or
 * trimmed builds refuse some of those options, so then the narrower query gpustack runs, which
 * made the Navi 32 and Hygon DCU fixtures. */
static const char *const query_full[] = {
	"-o", "-l", "-m", "-M", "-g", "-c", "-t", "-u", "-i", "-f", "-p", "-P", "-s", "-S", "-v",
	"--showreplaycount", "--showpids", "--showdriverversion", "--showmemvendor", "--showfwinfo",
	"--showproductname", "--showserial", "--showuniqueid", "--showbus", "--showpendingpages",
	"--showpagesinfo", "--showmeminfo", "all", "--showretiredpages", "--showunreservablepages",
	"--showmemuse", "--showvoltage", "--showtopo", "--showtopoweight", "--showtopohops",
	"--showtopotype", "--showtoponuma", "--json", NULL};
static const char *const query_basic[] = {
	"--showid", "--showmeminfo", "vram", "--showpower", "--showserial", "--showuse", "--showtemp",
	"--showproductname", "--showuniqueid", "--json", NULL};

/* Link matrix and groups of the last read, by card index, so topology() after enumerate()
 * does not run rocm-smi a second time. */
struct links {
	bool valid, has_links;
	int n, index[XP_RAW_MAX_DEVICES];
	char group[XP_RAW_MAX_DEVICES][64];
	char cells[XP_RAW_MAX_DEVICES][XP_RAW_MAX_DEVICES][8];
};

struct amd {
	const struct xp_host *h;
	char smi[4096];      /* rocm-smi or hy-smi, absolute; "" in replay */
	bool hy_smi;         /* smi is Hygon's hy-smi */
	char rocminfo[4096]; /* "" when not installed (or in replay) */
	struct links links;
	/* What the live probe read, handed to the first enumerate: rocm-smi's full query takes
	 * seconds, and discovery probes then enumerates straight away. */
	struct xp_raw_node *probed;
	char err[512];
};

/* Where ROCm and Hygon's DTK install their tools when PATH lacks them (telegraf defaults to
 * /opt/rocm/bin/rocm-smi; DTK puts its tools in /opt/dtk/bin). */
static const char *const tool_dirs[] = {"/opt/rocm/bin", "/opt/dtk/bin", NULL};

/* Reads a replay file: 1 with text, 0 absent, -1 with st->err. */
static int replay_file(struct amd *st, const char *name, char **out, size_t *len)
{
	char e[256] = "";
	int r = st->h->replay(st->h, name, XP_AMD_MAX_TEXT, out, len, e, sizeof e);
	if (r < 0)
		snprintf(st->err, sizeof st->err, "%s: %s", name, e[0] ? e : "cannot be read");
	return r;
}

static int run_tool(struct amd *st, const char *prog, const char *const *args, char **out, size_t *len)
{
	const char *argv[64];
	size_t n = 0;
	argv[n++] = prog;
	for (size_t i = 0; args && args[i] && n + 1 < sizeof argv / sizeof argv[0]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	char e[256] = "";
	if (st->h->run(argv, TOOL_TIMEOUT_S, XP_AMD_MAX_TEXT, out, len, e, sizeof e) < 0) {
		snprintf(st->err, sizeof st->err, "%s: %s", prog, e[0] ? e : "failed");
		return -1;
	}
	return 0;
}

static void keep_links(struct amd *st, const struct xp_raw_node *node)
{
	struct links *l = &st->links;
	l->valid = true;
	l->has_links = node->has_links;
	l->n = node->n_devices;
	for (int i = 0; i < node->n_devices; i++) {
		l->index[i] = node->devices[i].index;
		memcpy(l->group[i], node->devices[i].group, sizeof l->group[i]);
		memcpy(l->cells[i], node->links[i], sizeof l->cells[i]);
	}
}

/* Reads rocm-smi's JSON into node; 0, or -1 with st->err. */
static int read_smi(struct amd *st, struct xp_raw_node *node)
{
	char *out = NULL, e[256] = "";
	size_t len = 0;
	if (st->h->replay_dir) {
		int r = replay_file(st, XP_AMD_SMI_FILE, &out, &len);
		if (r == 0)
			snprintf(st->err, sizeof st->err, "%s: not in the replay directory", XP_AMD_SMI_FILE);
		if (r <= 0)
			return -1;
		int rc = xp_rocmsmi_parse_json(out, len, node, e, sizeof e);
		st->h->free(out);
		if (rc < 0) {
			snprintf(st->err, sizeof st->err, "%s: %s", XP_AMD_SMI_FILE, e);
			return -1;
		}
		keep_links(st, node);
		return 0;
	}
	const char *const *queries[] = {query_full, query_basic};
	/* hy-smi's option set is not rocm-smi's: only the narrow query is known to pass. */
	for (size_t q = st->hy_smi ? 1 : 0; q < sizeof queries / sizeof queries[0]; q++) {
		if (run_tool(st, st->smi, queries[q], &out, &len) < 0)
			continue;
		int rc = xp_rocmsmi_parse_json(out, len, node, e, sizeof e);
		st->h->free(out);
		if (rc == 0) {
			keep_links(st, node);
			return 0;
		}
		snprintf(st->err, sizeof st->err, "%s", e);
	}
	return -1;
}

/* Adds rocminfo's ISA names; its absence or failure costs only those, so it only warns. */
static void read_rocminfo(struct amd *st, struct xp_raw_node *node)
{
	char *out = NULL, e[256] = "";
	size_t len = 0;
	int r = 1;
	if (st->h->replay_dir)
		r = replay_file(st, XP_AMD_ROCMINFO_FILE, &out, &len);
	else if (!st->rocminfo[0])
		r = 0;
	else if (run_tool(st, st->rocminfo, NULL, &out, &len) < 0)
		r = -1;
	if (r < 0) {
		xp_raw_warn(node, "%s", st->err);
		st->err[0] = '\0';
	}
	if (r <= 0)
		return;
	if (xp_rocminfo_parse(out, len, node, e, sizeof e) < 0)
		xp_raw_warn(node, "%s", e);
	st->h->free(out);
}

static int amd_probe(const struct xp_host *h, void **stp, char *err, size_t errlen)
{
	*stp = NULL;
	struct amd *st = calloc(1, sizeof *st);
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return XP_PROBE_UNAVAILABLE;
	}
	st->h = h;
	*stp = st;
	if (h->replay_dir) {
		char *out = NULL;
		size_t len = 0;
		int r = replay_file(st, XP_AMD_SMI_FILE, &out, &len);
		if (r < 0) {
			snprintf(err, errlen, "%s", st->err);
			return XP_PROBE_UNAVAILABLE;
		}
		if (r == 0) {
			snprintf(err, errlen, "no %s in the replay directory", XP_AMD_SMI_FILE);
			return XP_PROBE_IDLE;
		}
		h->free(out);
		return XP_PROBE_ACTIVE;
	}
	if (xp_tool_find("rocm-smi", tool_dirs, st->smi, sizeof st->smi))
		st->hy_smi = false;
	else if (xp_tool_find("hy-smi", tool_dirs, st->smi, sizeof st->smi))
		st->hy_smi = true;
	else {
		snprintf(err, errlen, "no rocm-smi or hy-smi");
		return XP_PROBE_UNAVAILABLE;
	}
	xp_tool_find("rocminfo", tool_dirs, st->rocminfo, sizeof st->rocminfo);
	struct xp_raw_node *node = malloc(sizeof *node);
	if (!node) {
		snprintf(err, errlen, "out of memory");
		return XP_PROBE_UNAVAILABLE;
	}
	xp_raw_node_init(node);
	/* A tool that runs but finds nothing (no amdgpu driver, no card) means no hardware here. */
	if (read_smi(st, node) < 0) {
		snprintf(err, errlen, "%s", st->err);
		free(node);
		return XP_PROBE_IDLE;
	}
	if (node->n_devices == 0) {
		snprintf(err, errlen, "%s lists no card", st->hy_smi ? "hy-smi" : "rocm-smi");
		free(node);
		return XP_PROBE_IDLE;
	}
	st->probed = node;
	return XP_PROBE_ACTIVE;
}

static int amd_enumerate(void *p, struct xp_raw_node *node)
{
	struct amd *st = p;
	st->err[0] = '\0';
	if (st->probed) {
		char host[sizeof node->hostname];
		memcpy(host, node->hostname, sizeof host);
		memcpy(node, st->probed, sizeof *node);
		memcpy(node->hostname, host, sizeof host);
		free(st->probed);
		st->probed = NULL;
	} else if (read_smi(st, node) < 0)
		return -1;
	read_rocminfo(st, node);
	return 0;
}

/* The re-read xp_raw_reread runs: the whole tool output again. */
static int read_fresh(void *p, struct xp_raw_node *fresh)
{
	return read_smi(p, fresh);
}

static int reread(struct amd *st, struct xp_raw_node *node, bool metrics)
{
	st->err[0] = '\0';
	return xp_raw_reread(node, metrics, read_fresh, st, "card", st->err, sizeof st->err);
}

static int amd_refresh(void *p, struct xp_raw_node *node)
{
	return reread(p, node, true);
}

static int amd_health(void *p, struct xp_raw_node *node)
{
	return reread(p, node, false);
}

/* Copies the XGMI matrix of the last read onto node by card index. Without an XGMI link the
 * node is left as it is: PCIe paths are hwloc's to describe. */
static int amd_topology(void *p, struct xp_raw_node *node)
{
	struct amd *st = p;
	st->err[0] = '\0';
	if (!st->links.valid) {
		struct xp_raw_node *fresh = malloc(sizeof *fresh);
		if (!fresh) {
			snprintf(st->err, sizeof st->err, "out of memory");
			return -1;
		}
		xp_raw_node_init(fresh);
		int rc = read_smi(st, fresh);
		free(fresh);
		if (rc < 0)
			return -1;
	}
	const struct links *l = &st->links;
	if (!l->has_links)
		return 0;
	int pos[XP_RAW_MAX_DEVICES];
	for (int i = 0; i < node->n_devices; i++) {
		pos[i] = -1;
		for (int k = 0; k < l->n; k++)
			if (l->index[k] == node->devices[i].index)
				pos[i] = k;
	}
	node->has_links = true;
	for (int i = 0; i < node->n_devices; i++) {
		if (pos[i] < 0)
			continue;
		memcpy(node->devices[i].group, l->group[pos[i]], sizeof node->devices[i].group);
		for (int j = 0; j < node->n_devices; j++)
			if (pos[j] >= 0)
				memcpy(node->links[i][j], l->cells[pos[i]][pos[j]], sizeof node->links[i][j]);
	}
	return 0;
}

static const char *amd_last_error(void *p)
{
	struct amd *st = p;
	return st ? st->err : "";
}

static void amd_close(void *p)
{
	struct amd *st = p;
	if (st)
		free(st->probed);
	free(st);
}

const struct xp_adapter xp_adapter_amd = {
	.abi = XP_ADAPTER_ABI,
	.name = "amd",
	.probe = amd_probe,
	.enumerate = amd_enumerate,
	.refresh = amd_refresh,
	.health = amd_health,
	.topology = amd_topology,
	.last_error = amd_last_error,
	.close = amd_close,
};
