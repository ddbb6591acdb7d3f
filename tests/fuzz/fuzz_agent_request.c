/* fuzz_agent_request.c: a request as the agent's server (backends/agent_server.c) routes it,
 * with no socket: the input is "METHOD URL" on its first line (URL with ?history= and ?layer=
 * arguments), then "Name: value" header lines. libmicrohttpd's own parsing of the bytes is
 * not xpool's: the harness splits them plainly and hands the head to xpa_route, the decision
 * handle() acts on (early, as the head arrives, and once the request is complete), and the
 * If-None-Match value to xpa_etag_matches. The first byte picks which tokens the agent has.
 * Invariants: nothing is served or run without the token that guards it; every refusal has a
 * status from the handful the agent sends and a message. */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent_int.h"

#define READ_TOKEN "fuzz-read-token-0123456789"
#define WRITE_TOKEN "fuzz-write-token-9876543210"

static struct xp_agent_config config;

static void free_config(void)
{
	xp_agent_config_free(&config);
}

/* The README's example whitelist: two probes, one with a layer. */
static void load_config(void)
{
	static bool done;
	if (done)
		return;
	done = true;
	static const char text[] = "probe hello timeout=10 -- /bin/echo hello from the probe\n"
				   "probe start layer=launches -- /bin/echo container started\n";
	const char *path = xp_fuzz_tmpfile((const uint8_t *)text, sizeof text - 1, "agent.conf");
	struct xp_err err = {{0}};
	if (xp_agent_config_load(path, &config, &err) < 0)
		abort();
	xp_fuzz_tmp_done();
	atexit(free_config);
}

/* The value of ?key= in query (a copy in out), or NULL. */
static const char *arg(const char *query, const char *key, char *out, size_t cap)
{
	size_t kl = strlen(key);
	for (const char *p = query; p && *p;) {
		const char *amp = strchr(p, '&');
		size_t n = amp ? (size_t)(amp - p) : strlen(p);
		if (n > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
			size_t vl = n - kl - 1 < cap - 1 ? n - kl - 1 : cap - 1;
			memcpy(out, p + kl + 1, vl);
			out[vl] = '\0';
			return out;
		}
		p = amp ? amp + 1 : NULL;
	}
	return NULL;
}

static bool valid_code(unsigned c)
{
	return c == 400 || c == 401 || c == 403 || c == 404 || c == 405 || c == 409 || c == 413;
}

static void check(const struct xpa_policy *p, const struct xpa_head *h, const struct xpa_verdict *v)
{
	bool read_ok = !p->read_token || xpa_bearer_ok(h->authorization, p->read_token);
	switch (v->act) {
	case XPA_ANSWER:
		if (!valid_code(v->code) || !v->msg || !*v->msg)
			abort();
		break;
	case XPA_SERVE_NODE:
	case XPA_SERVE_TEXT:
		if (!read_ok || (strcmp(h->method, "GET") && strcmp(h->method, "HEAD")))
			abort(); /* served without the read token, or to a non-GET */
		if (v->route == XPA_OTHER || v->route == XPA_PROBE)
			abort();
		if (v->act == XPA_SERVE_NODE && (v->history == -2 || v->history > XP_AGENT_HISTORY_S))
			abort();
		break;
	case XPA_RUN_PROBE:
		if (!p->write_token || !xpa_bearer_ok(h->authorization, p->write_token) || strcmp(h->method, "POST"))
			abort(); /* a probe run without the write token */
		if (!v->probe || v->route != XPA_PROBE)
			abort();
		break;
	default:
		abort(); /* a complete request always gets a decision */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	load_config();
	if (!size || size > 65536)
		return 0; /* libmicrohttpd refuses heads past the connection's 32 KiB with 431 */
	struct xpa_policy p = {.config = (data[0] & 4) ? NULL : &config};
	if (data[0] & 1)
		p.read_token = READ_TOKEN;
	if (data[0] & 2)
		p.write_token = WRITE_TOKEN;
	char *text = xp_fuzz_str(data + 1, size - 1);
	struct xpa_head h = {0};
	char *save = NULL;
	char *first = strtok_r(text, "\r\n", &save);
	char *line = first ? first : (char *)"";
	char *sp = strchr(line, ' ');
	if (sp)
		*sp = '\0';
	h.method = line;
	char *url = sp ? sp + 1 : (char *)"/";
	char *q = strchr(url, '?');
	if (q)
		*q++ = '\0';
	h.url = url;
	char hist[64], layer[64];
	h.history = arg(q, "history", hist, sizeof hist);
	h.layer = arg(q, "layer", layer, sizeof layer);
	for (char *l; (l = strtok_r(NULL, "\r\n", &save));) {
		char *colon = strchr(l, ':');
		if (!colon)
			continue;
		*colon = '\0';
		char *v = colon + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		if (strcasecmp(l, "authorization") == 0)
			h.authorization = v;
		else if (strcasecmp(l, "content-length") == 0)
			h.content_length = v;
		else if (strcasecmp(l, "if-none-match") == 0)
			h.if_none_match = v;
	}
	struct xpa_verdict v;
	xpa_route(&p, &h, true, &v);
	if (v.act != XPA_CONTINUE && v.act != XPA_ANSWER)
		abort(); /* early, only a refusal can be decided */
	if (v.act == XPA_ANSWER)
		check(&p, &h, &v);
	xpa_route(&p, &h, false, &v);
	check(&p, &h, &v);
	if (h.if_none_match)
		(void)xpa_etag_matches(h.if_none_match, "\"0123456789abcdef0123456789abcdef\"");
	free(text);
	return 0;
}
