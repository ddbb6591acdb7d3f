/* agent_probe_cmd.c: `xpool agent probe URL NAME [--case CASE --layer L]`: asks a node's agent
 * to run one of its whitelisted probes and, with --case, records what came back as evidence in
 * the validation matrix, one record per environment the node has (as `validate run` does for a
 * probe run here). Everything that could keep the result out of the matrix is checked before
 * the agent is asked: a probe's run is not thrown away afterwards. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent_client.h"
#include "agent_server.h"
#include "agent_ctl.h"
#include "agent_token.h"
#include "cmd.h"
#include "store.h"
#include "validate.h"

/* Largest probe reply read: the agent sends at most 64 KiB of output and a few fields. */
#define MAX_REPLY ((size_t)2 << 20)
/* How long to wait for a probe's reply by default: the agent's default probe timeout (600 s)
 * and a minute. The agent says nothing until the probe ends, so this is the only bound on a
 * hung agent; --timeout changes it for longer probes. */
#define PROBE_WAIT_S 660.0

struct buf {
	char *p;
	size_t len;
	bool too_big;
};

static size_t take(char *data, size_t size, size_t nmemb, void *user)
{
	struct buf *b = user;
	size_t n = size * nmemb;
	if (b->len + n > MAX_REPLY) {
		b->too_big = true;
		return 0;
	}
	b->p = xp_realloc(b->p, b->len + n + 1);
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

/* POSTs the probe; the reply document, or NULL after printing why. */
static json_t *post(struct xp_ctx *ctx, const char *url, const char *name, int layer, const char *token, double wait_s)
{
	/* ?layer= names the layer the evidence is for: an agent whose config gives the probe
	 * another layer refuses before running it (409), so no run is thrown away. */
	char *u = xp_asprintf("%s%sv1/probe/%s%s%s", url, url[strlen(url) - 1] == '/' ? "" : "/", name,
			      layer >= 0 ? "?layer=" : "", layer >= 0 ? xp_layer_name(layer) : "");
	struct buf b = {0};
	char errbuf[CURL_ERROR_SIZE] = "";
	/* The agent says nothing until the probe ends: the wait is the probe's, not a request's. */
	CURL *e = xp_agent_easy_new(ctx->agent_ca, ctx->agent_timeout > 0 ? ctx->agent_timeout : 5, wait_s, errbuf);
	if (!e) {
		xp_ctx_error(ctx, "agent probe: curl_easy_init failed");
		free(u);
		return NULL;
	}
	char *auth = xp_asprintf("Authorization: Bearer %s", token);
	struct curl_slist *h = curl_slist_append(NULL, auth);
	explicit_bzero(auth, strlen(auth));
	free(auth);
	h = curl_slist_append(h, "Accept: application/json");
	curl_easy_setopt(e, CURLOPT_URL, u);
	curl_easy_setopt(e, CURLOPT_POST, 1L);
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
	curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, 0L);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, take);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
	CURLcode res = curl_easy_perform(e);
	long code = 0;
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
	explicit_bzero(h->data, strlen(h->data)); /* the Authorization line */
	curl_slist_free_all(h);
	curl_easy_cleanup(e);
	json_t *doc = NULL;
	json_error_t je;
	if (b.too_big)
		xp_ctx_error(ctx, "agent probe %s: the reply is larger than %zu bytes", u, MAX_REPLY);
	else if (res == CURLE_OPERATION_TIMEDOUT)
		xp_ctx_error(ctx, "agent probe %s: no reply within %.0f s (a longer probe needs --timeout)", u, wait_s);
	else if (res != CURLE_OK)
		xp_ctx_error(ctx, "agent probe %s: %s", u, errbuf[0] ? errbuf : curl_easy_strerror(res));
	else if (!(doc = json_loadb(b.p ? b.p : "", b.len, 0, &je)))
		xp_ctx_error(ctx, "agent probe %s: HTTP %ld, not JSON: %d:%d: %s", u, code, je.line, je.column, je.text);
	else if (code != 200) {
		const char *msg = json_string_value(json_object_get(doc, "error"));
		xp_ctx_error(ctx, "agent probe %s: HTTP %ld: %.300s", u, code, msg ? msg : "(no reason given)");
		json_decref(doc);
		doc = NULL;
	}
	free(b.p);
	free(u);
	return doc;
}

/* A string field of the reply, or NULL after printing which one is missing. */
static const char *field(struct xp_ctx *ctx, json_t *doc, const char *key)
{
	const char *v = json_string_value(json_object_get(doc, key));
	if (!v)
		xp_ctx_error(ctx, "agent probe: the reply has no string \"%s\"", key);
	return v;
}

static bool node_has_env(const struct xp_node *n, const char *env)
{
	bool found = false;
	for (size_t i = 0; i < n->n_devices && !found; i++) {
		const struct xp_device *d = &n->devices[i];
		if (!d->vendor || !d->model || !d->driver)
			continue;
		char *id = xp_env_id(d->vendor, d->model, d->driver, d->firmware, d->runtime);
		found = strcmp(id, env) == 0;
		free(id);
	}
	return found;
}

/* Prints what a remote probe wrote, with control bytes other than newline and tab shown as '?':
 * it goes to an operator's terminal. */
static void print_output(FILE *f, const char *out)
{
	for (const char *c = out; *c; c++)
		fputc((unsigned char)*c < 0x20 && *c != '\n' && *c != '\t' ? '?' : *c == 0x7f ? '?' : *c, f);
	if (out[strlen(out) - 1] != '\n')
		fputc('\n', f);
}

/* Records the result for every environment in it; -1 when one could not be recorded. */
static int record(struct xp_ctx *ctx, json_t *doc, const char *url, const char *kase, int layer, int status,
		  const char *node)
{
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_open(ctx->db, &err);
	if (!s) {
		xp_ctx_error(ctx, "agent probe: %s", err.msg);
		return -1;
	}
	/* The node's environments enter the matrix (and pass discovered) as inventory says. */
	struct xp_cluster *c = xp_ctx_cluster(ctx);
	if (c && xp_validate_sync(s, c, time(NULL), 0, &err) < 0)
		xp_ctx_error(ctx, "agent probe: sync: %s", err.msg);
	/* Evidence is only taken for what this agent's node is known to have: a node that claims
	 * another name, or environments it does not show, cannot write into other rows. */
	const struct xp_node *n = c ? xp_cluster_node(c, node) : NULL;
	char *norm = xp_agent_url_norm(url);
	bool ours = n && n->source && strcmp(n->source, norm) == 0 && n->state != XP_NODE_UNREACHABLE;
	free(norm);
	if (!ours) {
		xp_ctx_error(ctx, "agent probe: %s is not the node %s serves (or it did not answer); nothing recorded",
			     node, url);
		xp_store_close(s);
		return -1;
	}
	const char *out = json_string_value(json_object_get(doc, "output"));
	const char *note = json_string_value(json_object_get(doc, "note"));
	const char *probe = json_string_value(json_object_get(doc, "probe"));
	char *full = xp_asprintf("probe %s on %s via %s%s%s", probe ? probe : "?", node, url, note && *note ? ": " : "",
				 note ? note : "");
	char *dir = xp_validate_default_log_dir();
	int rc = 0;
	size_t i;
	json_t *ev;
	json_array_foreach(json_object_get(doc, "environments"), i, ev)
	{
		const char *env = json_string_value(ev);
		if (!env)
			continue;
		if (!node_has_env(n, env)) {
			xp_ctx_error(ctx, "agent probe: %.200s: not an environment of %s; not recorded", env, node);
			rc = -1;
			continue;
		}
		char *path = NULL;
		if (xp_validate_log_write(dir, kase, env, out ? out : "", out ? strlen(out) : 0, &path, &err) < 0 ||
		    xp_validate_record(s, env, kase, layer, status, full, path, node, &err) < 0) {
			xp_ctx_error(ctx, "agent probe: %s: %s", env, err.msg);
			rc = -1;
		} else if (!ctx->json) {
			/* With --json, standard output is the agent's reply alone: a script parses it. */
			char *shown = xp_env_id_show(env);
			fprintf(ctx->out, "recorded %s %s for %s, case %s\nlog %s\n", xp_layer_name(layer),
				xp_vstatus_name(status), shown, kase, path);
			free(shown);
		}
		free(path);
	}
	free(dir);
	free(full);
	xp_store_close(s);
	return rc;
}

/* The node the agent at url serves in the context's cluster (NULL after printing why). */
static const struct xp_node *agent_node(struct xp_ctx *ctx, const char *url)
{
	struct xp_cluster *c = xp_ctx_cluster(ctx);
	if (!c)
		return NULL;
	char *norm = xp_agent_url_norm(url);
	const struct xp_node *n = NULL;
	for (size_t i = 0; i < c->n_nodes && !n; i++) {
		const struct xp_node *x = c->nodes[i];
		if (x->source && strcmp(x->source, norm) == 0 && x->state != XP_NODE_UNREACHABLE)
			n = x;
	}
	free(norm);
	if (!n)
		xp_ctx_error(ctx, "agent probe: the agent at %s did not answer; nothing run", url);
	return n;
}

/* Before the probe runs: the case exists, and a pass at layer could be recorded for every
 * environment of the agent's node (each layer below it pass, after bringing the discovered
 * layer up to date from the agent's inventory), so that the run is not wasted. 0, or -1
 * after printing why. */
static int preflight(struct xp_ctx *ctx, const char *url, const char *kase, int layer)
{
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_open(ctx->db, &err);
	if (!s) {
		xp_ctx_error(ctx, "agent probe: %s", err.msg);
		return -1;
	}
	struct xp_case kc = {0};
	int rc = xp_validate_case_get(s, kase, &kc, &err);
	xp_case_clear(&kc);
	if (rc < 0)
		xp_ctx_error(ctx, "agent probe: %s; nothing run (add it: xpool validate case add %s)", err.msg, kase);
	const struct xp_node *n = rc == 0 ? agent_node(ctx, url) : NULL;
	if (rc == 0 && !n)
		rc = -1;
	if (rc == 0 && xp_validate_sync(s, ctx->cluster, time(NULL), 0, &err) < 0) {
		xp_ctx_error(ctx, "agent probe: sync: %s", err.msg);
		rc = -1;
	}
	size_t envs = 0;
	for (size_t i = 0; rc == 0 && n && i < n->n_devices; i++) {
		const struct xp_device *d = &n->devices[i];
		if (!d->vendor || !d->model || !d->driver)
			continue;
		char *id = xp_env_id(d->vendor, d->model, d->driver, d->firmware, d->runtime);
		struct xp_evidence cur[XP_LAYER_COUNT] = {{0}};
		if (xp_validate_cell(s, id, kase, cur, &err) < 0) {
			xp_ctx_error(ctx, "agent probe: %s", err.msg);
			rc = -1;
		}
		for (int l = 0; rc == 0 && l < layer; l++)
			if (cur[l].status != XP_V_PASS) {
				char *shown = xp_env_id_show(id);
				xp_ctx_error(ctx, "agent probe: cannot record %s pass for %s, case %s: %s is %s; nothing run",
					     xp_layer_name(layer), shown, kase, xp_layer_name(l), xp_vstatus_name(cur[l].status));
				free(shown);
				rc = -1;
			}
		xp_evidence_clear(cur, XP_LAYER_COUNT);
		free(id);
		envs++;
	}
	if (rc == 0 && envs == 0) {
		xp_ctx_error(ctx, "agent probe: %s has no device with a vendor, model and driver: no environment "
				  "to record for; nothing run", n->name);
		rc = -1;
	}
	xp_store_close(s);
	return rc;
}

int xp_agent_probe_cmd(struct xp_ctx *ctx, const char *url, const char *name, const char *kase,
		       const char *layer_opt, const char *token_file, const char *timeout)
{
	double wait_s = PROBE_WAIT_S;
	if (timeout) {
		char *end;
		wait_s = strtod(timeout, &end);
		if (end == timeout || *end || !(wait_s >= 1 && wait_s <= 7 * 86400)) {
			xp_ctx_error(ctx, "agent probe: --timeout %.40s: not a number of seconds from 1 to a week", timeout);
			return XP_EXIT_USAGE;
		}
	}
	struct xp_err err = {{0}};
	if (xp_agent_url_check(url, &err) < 0) {
		xp_ctx_error(ctx, "agent probe: %s", err.msg);
		return XP_EXIT_USAGE;
	}
	if (!xp_agent_probe_name_ok(name)) {
		xp_ctx_error(ctx, "agent probe: %.80s: a probe name is 1-64 of A-Z a-z 0-9 _ . -", name);
		return XP_EXIT_USAGE;
	}
	if (!token_file) {
		xp_ctx_error(ctx, "agent probe: give the agent's write token (--write-token-file FILE)");
		return XP_EXIT_USAGE;
	}
	/* The agent's config fixes the probe's layer (layer=, executes when left out); the console
	 * must know it before the run to check that the result can be recorded. */
	int want = -1;
	if (kase && !layer_opt) {
		xp_ctx_error(ctx, "agent probe: --case needs --layer LAYER, the layer the agent's config gives the probe "
				  "(its layer=; executes when left out)");
		return XP_EXIT_USAGE;
	}
	if (layer_opt && !kase) {
		xp_ctx_error(ctx, "agent probe: --layer goes with --case (the layer of the evidence to record)");
		return XP_EXIT_USAGE;
	}
	if (layer_opt && (want = xp_layer_parse(layer_opt)) < 0) {
		xp_ctx_error(ctx, "agent probe: --layer %.40s: not a layer (discovered, schedulable, launches, executes, "
				  "accepted)", layer_opt);
		return XP_EXIT_USAGE;
	}
	if (kase && preflight(ctx, url, kase, want) < 0)
		return XP_EXIT_ERROR;
	char *token = xp_token_read(token_file, &err);
	if (!token) {
		xp_ctx_error(ctx, "agent probe: %s", err.msg);
		return XP_EXIT_ERROR;
	}
	json_t *doc = post(ctx, url, name, want, token, wait_s);
	explicit_bzero(token, strlen(token));
	free(token);
	if (!doc)
		return XP_EXIT_ERROR;
	int rc = XP_EXIT_OK;
	const char *schema = field(ctx, doc, "schema"), *node = field(ctx, doc, "node");
	const char *status = field(ctx, doc, "status"), *layer_s = field(ctx, doc, "layer");
	int layer = layer_s ? xp_layer_parse(layer_s) : -1;
	if (!schema || !node || !status || !layer_s) {
		rc = XP_EXIT_ERROR;
	} else if (strcmp(schema, "xpool.probe/v1") != 0 || layer < 0 ||
		   (strcmp(status, "pass") != 0 && strcmp(status, "fail") != 0) ||
		   !json_is_array(json_object_get(doc, "environments"))) {
		xp_ctx_error(ctx, "agent probe: not a probe result (schema %.40s, layer %.20s, status %.20s)", schema,
			     layer_s, status);
		rc = XP_EXIT_ERROR;
	}
	if (rc == XP_EXIT_OK) {
		bool pass = strcmp(status, "pass") == 0;
		if (ctx->json) {
			json_dumpf(doc, ctx->out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
			fputc('\n', ctx->out);
		} else {
			const char *note = json_string_value(json_object_get(doc, "note"));
			fprintf(ctx->out, "probe %s on %s: %s %s (%s, %.2f s)\n", name, node, xp_layer_name(layer), status,
				note && *note ? note : "-", json_number_value(json_object_get(doc, "duration_s")));
			const char *out = json_string_value(json_object_get(doc, "output"));
			if (out && *out && !ctx->quiet)
				print_output(ctx->out, out);
		}
		if (kase && layer != want) {
			xp_ctx_error(ctx, "agent probe: the agent ran %s as %s evidence, not %s (its config's layer=): "
					  "nothing recorded", name, xp_layer_name(layer), xp_layer_name(want));
			rc = XP_EXIT_ERROR;
		} else if (kase && record(ctx, doc, url, kase, layer, pass ? XP_V_PASS : XP_V_FAIL, node) < 0)
			rc = XP_EXIT_ERROR;
		if (!pass) {
			xp_ctx_error(ctx, "agent probe: %s failed on %s%s", name, node, kase ? " (the fail is recorded)" : "");
			rc = XP_EXIT_ERROR;
		}
	}
	json_decref(doc);
	return rc;
}
