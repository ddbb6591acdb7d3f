/* fuzz_agent_reply.c: an agent's reply as the client (backends/agent_client.c) takes it, with no
 * socket: the input is the reply's header lines, a blank line, then the body. Each header line
 * goes through xp_agent_clock_header and xp_agent_etag_header as curl's header callback hands
 * it; the body through xp_cluster_decode (the /v1/node reply: one node of the inventory
 * schema) and its "history" member through xp_hist_batch_parse, as take_body and take_history
 * do. An ETag kept must be printable ASCII (it goes back in our next request's header); a
 * clock kept must lie between 1970 and 9999. */
#include "fuzz.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "agent_client.h"
#include "history_json.h"
#include "model_json.h"

static void headers(const char *h, size_t n)
{
	double clock = 0;
	char etag[257];
	for (size_t i = 0; i < n;) {
		const char *nl = memchr(h + i, '\n', n - i);
		size_t len = nl ? (size_t)(nl - (h + i)) + 1 : n - i; /* curl's lines end in "\r\n" */
		clock = xp_agent_clock_header(h + i, len, clock);
		if (clock < 0 || clock >= 253402300800.0)
			abort();
		if (xp_agent_etag_header(h + i, len, etag, sizeof etag)) {
			for (const char *c = etag; *c; c++)
				if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
					abort();
		}
		i += len;
	}
}

static void body(const char *b, size_t n)
{
	struct xp_err err = {{0}};
	bool syntax = false;
	struct xp_cluster *c = xp_cluster_decode(b, n, &syntax, &err);
	if (!c) {
		if (!err.msg[0])
			abort(); /* a refusal must say why */
		return;
	}
	const char *node = c->n_nodes ? c->nodes[0]->name : "node";
	json_error_t je;
	json_t *doc = json_loadb(b, n, 0, &je);
	const json_t *h = json_object_get(doc, "history");
	if (h) {
		struct xp_hist_batch hb;
		struct xp_err herr = {{0}};
		if (xp_hist_batch_parse(h, node, &hb, &herr) == 0)
			xp_hist_batch_free(&hb);
		else if (!herr.msg[0])
			abort();
	}
	json_decref(doc);
	xp_cluster_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	size_t split = size, skip = 0;
	for (size_t i = 0; i + 1 < size; i++) {
		if (s[i] == '\n' && s[i + 1] == '\n') {
			split = i + 1, skip = 1;
			break;
		}
		if (i + 3 < size && memcmp(s + i, "\r\n\r\n", 4) == 0) {
			split = i + 2, skip = 2;
			break;
		}
	}
	headers(s, split);
	if (split + skip <= size)
		body(s + split + skip, size - split - skip);
	return 0;
}
