/* cambricon.c: the Cambricon adapter: MLU accelerators through `cnmon info`. Live, cnmon runs
 * through the host; in replay, it reads cnmon-info.txt. It never prints.
 *
 * The parser is UNTESTED AGAINST A REAL CAPTURE (see cnmon.c): until one is recorded, treat
 * what this adapter reports as a best reading of the documented format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cambricon.h"

#define TOOL_TIMEOUT_S 15.0

struct cambricon {
	const struct xp_host *h;
	char cnmon[4096]; /* absolute path; "" in replay */
	char err[512];
};

/* Gets `cnmon info`'s text: 1 with *out (host->free), 0 when the replay file is absent, -1 with
 * st->err. */
static int get_text(struct cambricon *st, char **out, size_t *len)
{
	char e[256] = "";
	if (st->h->replay_dir) {
		int r = st->h->replay(st->h, XP_CNMON_INFO_FILE, XP_CNMON_MAX_TEXT, out, len, e, sizeof e);
		if (r < 0)
			snprintf(st->err, sizeof st->err, "%s: %s", XP_CNMON_INFO_FILE,
				 e[0] ? e : "cannot be read");
		else if (r == 0)
			snprintf(st->err, sizeof st->err, "%s: not in the replay directory",
				 XP_CNMON_INFO_FILE);
		return r;
	}
	const char *argv[] = {st->cnmon, "info", NULL};
	if (st->h->run(argv, TOOL_TIMEOUT_S, XP_CNMON_MAX_TEXT, out, len, e, sizeof e) < 0) {
		snprintf(st->err, sizeof st->err, "cnmon info: %s", e[0] ? e : "failed");
		return -1;
	}
	return 1;
}

static int read_node(struct cambricon *st, struct xp_raw_node *node)
{
	char *out = NULL, e[256] = "";
	size_t len = 0;
	if (get_text(st, &out, &len) <= 0)
		return -1;
	int rc = xp_cnmon_parse_info(out, len, node, e, sizeof e);
	st->h->free(out);
	if (rc < 0)
		snprintf(st->err, sizeof st->err, "%s", e);
	return rc;
}

static int cambricon_probe(const struct xp_host *h, void **stp, char *err, size_t errlen)
{
	*stp = NULL;
	struct cambricon *st = calloc(1, sizeof *st);
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return XP_PROBE_UNAVAILABLE;
	}
	st->h = h;
	*stp = st;
	if (h->replay_dir) {
		char *out = NULL;
		size_t len = 0;
		int r = get_text(st, &out, &len);
		if (r < 0) {
			snprintf(err, errlen, "%s", st->err);
			return XP_PROBE_UNAVAILABLE;
		}
		if (r == 0) {
			snprintf(err, errlen, "no %s in the replay directory", XP_CNMON_INFO_FILE);
			return XP_PROBE_IDLE;
		}
		h->free(out);
		return XP_PROBE_ACTIVE;
	}
	if (!xp_tool_find("cnmon", NULL, st->cnmon, sizeof st->cnmon)) {
		snprintf(err, errlen, "no cnmon");
		return XP_PROBE_UNAVAILABLE;
	}
	struct xp_raw_node *node = malloc(sizeof *node);
	if (!node) {
		snprintf(err, errlen, "out of memory");
		return XP_PROBE_UNAVAILABLE;
	}
	xp_raw_node_init(node);
	/* cnmon without a driver or a card fails or lists nothing: no hardware here. */
	int r = read_node(st, node) < 0 ? XP_PROBE_IDLE : XP_PROBE_ACTIVE;
	if (r == XP_PROBE_IDLE)
		snprintf(err, errlen, "%s", st->err);
	free(node);
	return r;
}

static int cambricon_enumerate(void *p, struct xp_raw_node *node)
{
	struct cambricon *st = p;
	st->err[0] = '\0';
	return read_node(st, node);
}

/* The re-read xp_raw_reread runs: the whole tool output again. */
static int read_fresh(void *p, struct xp_raw_node *fresh)
{
	return read_node(p, fresh);
}

static int reread(struct cambricon *st, struct xp_raw_node *node, bool metrics)
{
	st->err[0] = '\0';
	return xp_raw_reread(node, metrics, read_fresh, st, "card ", st->err, sizeof st->err);
}

static int cambricon_refresh(void *p, struct xp_raw_node *node)
{
	return reread(p, node, true);
}

static int cambricon_health(void *p, struct xp_raw_node *node)
{
	return reread(p, node, false);
}

/* `cnmon info` says nothing of MLU-Link peers that we know how to read: no link matrix. */
static int cambricon_topology(void *p, struct xp_raw_node *node)
{
	(void)node;
	((struct cambricon *)p)->err[0] = '\0';
	return 0;
}

static const char *cambricon_last_error(void *p)
{
	struct cambricon *st = p;
	return st ? st->err : "";
}

static void cambricon_close(void *p)
{
	free(p);
}

const struct xp_adapter xp_adapter_cambricon = {
	.abi = XP_ADAPTER_ABI,
	.name = "cambricon",
	.probe = cambricon_probe,
	.enumerate = cambricon_enumerate,
	.refresh = cambricon_refresh,
	.health = cambricon_health,
	.topology = cambricon_topology,
	.last_error = cambricon_last_error,
	.close = cambricon_close,
};
