/* agent_route.c: what the agent answers a request, decided from the request's head alone
 * (agent_int.h, xpa_route): no socket, no lock, no libmicrohttpd, so that the fuzz harness
 * tests/fuzz/fuzz_agent_request.c drives the very decisions agent_server.c acts on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent_int.h"
#include "agent_token.h"
#include "validate.h"

int xpa_route_of(const char *url)
{
	if (strcmp(url, "/v1/node") == 0)
		return XPA_NODE;
	if (strcmp(url, "/v1/health") == 0)
		return XPA_HEALTH;
	if (strcmp(url, "/metrics") == 0)
		return XPA_METRICS;
	if (strncmp(url, "/v1/probe/", 10) == 0)
		return XPA_PROBE;
	return XPA_OTHER;
}

bool xpa_bearer_ok(const char *authorization, const char *token)
{
	const char *v = authorization;
	if (!v || strncasecmp(v, "Bearer ", 7) != 0)
		return false;
	v += 7;
	while (*v == ' ')
		v++;
	return xp_token_equal(token, v);
}

bool xpa_etag_matches(const char *inm, const char *etag)
{
	size_t el = strlen(etag);
	const char *p = inm;
	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (p[0] == 'W' && p[1] == '/')
			p += 2;
		const char *e = p;
		while (*e && *e != ',')
			e++;
		const char *t = e;
		while (t > p && (t[-1] == ' ' || t[-1] == '\t'))
			t--;
		if (((size_t)(t - p) == el && memcmp(p, etag, el) == 0) || (t - p == 1 && *p == '*'))
			return true;
		p = e;
	}
	return false;
}

/* ?history=SECONDS: -1 when absent, -2 when not a number of seconds 1 to XP_AGENT_HISTORY_S. */
static long history_arg(const char *v)
{
	if (!v)
		return -1;
	char *end;
	long s = strtol(v, &end, 10);
	return end == v || *end || s < 1 || s > XP_AGENT_HISTORY_S ? -2 : s;
}

static void answer(struct xpa_verdict *v, unsigned code, const char *msg, const char *allow, bool auth)
{
	v->act = XPA_ANSWER;
	v->code = code;
	v->msg = msg;
	v->allow = allow;
	v->auth = auth;
}

static bool too_long(const char *content_length)
{
	return content_length && strtoull(content_length, NULL, 10) > XP_AGENT_MAX_REQUEST_BODY;
}

/* The read token guards everything but a POST to a probe, unknown paths included: without it
 * nothing about the agent is revealed, not even how it is configured. */
static bool may_read(const struct xpa_policy *p, const struct xpa_head *h)
{
	return !p->read_token || xpa_bearer_ok(h->authorization, p->read_token);
}

#define NEED_TOKEN "this agent needs a token (Authorization: Bearer)"

/* POST /v1/probe/NAME: everything but the body is known; refuse early what will be refused. */
static void probe_head(const struct xpa_policy *p, const struct xpa_head *h, struct xpa_verdict *v)
{
	/* The token first: how the agent is configured (probes off) is only told to a caller
	 * who may read it, the read token's holder (anyone, on an agent without one). */
	if (!p->write_token) {
		if (!may_read(p, h))
			return answer(v, 401, NEED_TOKEN, NULL, true);
		return answer(v, 403, "probes are disabled: the agent was started without --write-token-file", NULL,
			      false);
	}
	if (!xpa_bearer_ok(h->authorization, p->write_token))
		return answer(v, 401, "a probe needs the write token (Authorization: Bearer)", NULL, true);
	const char *name = h->url + strlen("/v1/probe/");
	const struct xp_agent_probe *pr = xp_agent_probe_name_ok(name) ? xp_agent_config_find(p->config, name) : NULL;
	if (!pr)
		return answer(v, 404, "no such probe in the agent's config", NULL, false);
	/* ?layer=L: the caller will record the result as L evidence; when the config gives the
	 * probe another layer, say so before running it rather than have the run thrown away. */
	if (h->layer) {
		int l = xp_layer_parse(h->layer);
		if (l < 0)
			return answer(v, 400, "layer: not a layer (discovered, schedulable, launches, executes, accepted)",
				      NULL, false);
		if (l != pr->layer) {
			snprintf(v->buf, sizeof v->buf, "probe %s gives %s evidence (its config's layer=), not %s: nothing run",
				 pr->name, xp_layer_name(pr->layer), xp_layer_name(l));
			return answer(v, 409, v->buf, NULL, false);
		}
	}
	if (too_long(h->content_length))
		return answer(v, 413, "request body too large (probes take none)", NULL, false);
	v->act = XPA_RUN_PROBE;
	v->probe = pr;
}

void xpa_route(const struct xpa_policy *p, const struct xpa_head *h, bool early, struct xpa_verdict *v)
{
	memset(v, 0, sizeof *v);
	v->route = xpa_route_of(h->url);
	v->history = -1;
	v->act = XPA_CONTINUE;
	if (v->route == XPA_PROBE) {
		if (early)
			return; /* a probe's head is judged once the request is complete */
		bool post = strcmp(h->method, "POST") == 0;
		/* Anything but a POST is a read: the read token first, as everywhere. */
		if (!post && !may_read(p, h))
			return answer(v, 401, NEED_TOKEN, NULL, true);
		if (!post)
			return answer(v, 405, "use POST", "POST", false);
		return probe_head(p, h, v);
	}
	/* A body announced too large is refused before it is read, and a caller without the
	 * read token learns only that it needs one (401 before 413). */
	if (too_long(h->content_length)) {
		if (!may_read(p, h))
			return answer(v, 401, NEED_TOKEN, NULL, true);
		return answer(v, 413, "request body too large", NULL, false);
	}
	if (early)
		return; /* GETs are answered once the request is complete */
	if (!may_read(p, h))
		return answer(v, 401, NEED_TOKEN, NULL, true);
	if (v->route == XPA_OTHER)
		return answer(v, 404, "not found (try /v1/node, /v1/health, /metrics)", NULL, false);
	if (strcmp(h->method, "GET") != 0 && strcmp(h->method, "HEAD") != 0)
		return answer(v, 405, "use GET", "GET, HEAD", false);
	if (v->route != XPA_NODE) {
		v->act = XPA_SERVE_TEXT;
		return;
	}
	v->history = history_arg(h->history);
	if (v->history == -2)
		return answer(v, 400, "history: expected a number of seconds from 1 to 600", NULL, false);
	v->act = XPA_SERVE_NODE;
}
