/* k8s_client.c: paged GETs against a Kubernetes API server. */
#include "k8s_client.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"

struct xp_k8s_client {
	struct xp_k8s_conf conf;
	struct xp_k8s_client_opts o;
	CURL *easy;
	size_t requests;
	xp_k8s_trim_fn *trim; /* applied to each item as its page arrives; NULL: none */
};

struct body {
	char *buf;
	size_t len, cap, max;
	bool over;
};

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct body *b = arg;
	size_t k = size * n;
	if (b->len + k > b->max) {
		/* Stop reading: a huge answer is refused, not held. */
		b->over = true;
		return 0;
	}
	if (b->len + k + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 65536;
		while (cap < b->len + k + 1)
			cap *= 2;
		b->buf = xp_realloc(b->buf, cap);
		b->cap = cap;
	}
	memcpy(b->buf + b->len, p, k);
	b->len += k;
	b->buf[b->len] = '\0';
	return k;
}

struct xp_k8s_client *xp_k8s_client_new(struct xp_k8s_conf *conf, const struct xp_k8s_client_opts *o)
{
	struct xp_k8s_client *cl = xp_calloc(1, sizeof *cl);
	cl->conf = *conf;
	*conf = (struct xp_k8s_conf){0};
	if (o)
		cl->o = *o;
	if (!cl->o.page_limit)
		cl->o.page_limit = 500;
	if (!cl->o.max_bytes)
		cl->o.max_bytes = (size_t)256 << 20;
	if (!(cl->o.timeout_s > 0))
		cl->o.timeout_s = 30;
	return cl;
}

void xp_k8s_client_trim(struct xp_k8s_client *cl, xp_k8s_trim_fn *trim)
{
	cl->trim = trim;
}

void xp_k8s_client_free(struct xp_k8s_client *cl)
{
	if (!cl)
		return;
	if (cl->easy)
		curl_easy_cleanup(cl->easy);
	xp_k8s_conf_clear(&cl->conf);
	free(cl);
}

const struct xp_k8s_conf *xp_k8s_client_conf(const struct xp_k8s_client *cl)
{
	return &cl->conf;
}

size_t xp_k8s_client_requests(const struct xp_k8s_client *cl)
{
	return cl->requests;
}

/* The handle with everything that does not change between requests: TLS and limits. */
static CURL *easy(struct xp_k8s_client *cl)
{
	if (cl->easy) {
		return cl->easy;
	}
	CURL *e = curl_easy_init();
	if (!e)
		return NULL;
	const struct xp_k8s_conf *c = &cl->conf;
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(cl->o.timeout_s * 1000));
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(e, CURLOPT_USERAGENT, "xpool/" XP_VERSION);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, c->insecure ? 0L : 1L);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, c->insecure ? 0L : 2L);
	if (c->ca_data) {
		struct curl_blob b = {.data = c->ca_data, .len = c->ca_data_len, .flags = CURL_BLOB_COPY};
		curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &b);
	} else if (c->ca_file)
		curl_easy_setopt(e, CURLOPT_CAINFO, c->ca_file);
	if (c->cert_data) {
		struct curl_blob b = {.data = c->cert_data, .len = c->cert_data_len, .flags = CURL_BLOB_COPY};
		curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &b);
		curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
	} else if (c->cert_file)
		curl_easy_setopt(e, CURLOPT_SSLCERT, c->cert_file);
	if (c->key_data) {
		struct curl_blob b = {.data = c->key_data, .len = c->key_data_len, .flags = CURL_BLOB_COPY};
		curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &b);
		curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
	} else if (c->key_file)
		curl_easy_setopt(e, CURLOPT_SSLKEY, c->key_file);
	cl->easy = e;
	return e;
}

/* The server's own words from a Status object, cut short; "" when none. */
static void status_message(const char *buf, size_t len, char *out, size_t olen)
{
	out[0] = '\0';
	json_t *j = buf ? json_loadb(buf, len, 0, NULL) : NULL;
	const char *m = j ? json_string_value(json_object_get(j, "message")) : NULL;
	if (m)
		snprintf(out, olen, ": %.200s", m);
	json_decref(j);
}

/* One GET; the HTTP status in *code and the body in *b. -1 with err set on a transport failure. */
static int get(struct xp_k8s_client *cl, const char *url, const char *path, long *code, struct body *b,
	       struct xp_err *err)
{
	CURL *e = easy(cl);
	if (!e)
		return xp_errf(err, "GET %s: cannot start libcurl", path);
	struct curl_slist *h = curl_slist_append(NULL, "Accept: application/json");
	char *auth = NULL;
	if (cl->conf.token) {
		auth = xp_asprintf("Authorization: Bearer %s", cl->conf.token);
		h = curl_slist_append(h, auth);
	}
	*b = (struct body){.max = cl->o.max_bytes};
	char errbuf[CURL_ERROR_SIZE] = "";
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, b);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
	cl->requests++;
	CURLcode rc = curl_easy_perform(e);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(h);
	if (auth) {
		memset(auth, 0, strlen(auth));
		free(auth);
	}
	*code = 0;
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, code);
	if (b->over)
		return xp_errf(err, "GET %s: the response is larger than %zu bytes", path, b->max);
	if (rc != CURLE_OK) {
		if (rc == CURLE_PARTIAL_FILE)
			return xp_errf(err, "GET %s: the response was cut short (%zu bytes arrived)", path, b->len);
		return xp_errf(err, "GET %s: %s", path, errbuf[0] ? errbuf : curl_easy_strerror(rc));
	}
	return 0;
}

/* Percent-escapes a continue token (it is opaque: base64 with '=' and '/' in it). */
static char *escape(const char *s)
{
	size_t n = strlen(s);
	char *o = xp_malloc(n * 3 + 1), *p = o;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || strchr("-._~", c))
			*p++ = (char)c;
		else
			p += sprintf(p, "%%%02X", c);
	}
	*p = '\0';
	return o;
}

/* absent NULL: a 404 is an error like any other status. */
static json_t *list(struct xp_k8s_client *cl, const char *path, const char *query, bool *absent, struct xp_err *err)
{
	if (absent)
		*absent = false;
	json_t *items = json_array();
	char *cont = NULL;
	bool reread = false, restarted = false;
	size_t pages = 0;
	for (;;) {
		if (++pages > 100000) {
			/* A server that hands back continue tokens forever is not listing. */
			xp_errf(err, "GET %s: more than 100000 pages", path);
			goto fail;
		}
		char *esc = cont ? escape(cont) : NULL;
		char *url = xp_asprintf("%s%s?limit=%zu%s%s%s%s", cl->conf.server, path, cl->o.page_limit,
					query ? "&" : "", query ? query : "", esc ? "&continue=" : "", esc ? esc : "");
		free(esc);
		long code;
		struct body b;
		int rc = get(cl, url, path, &code, &b, err);
		free(url);
		if (rc < 0) {
			free(b.buf);
			goto fail;
		}
		if (code == 401 && cl->conf.token_file && !reread) {
			/* Bound service-account tokens rotate: the file holds the new one. Once. */
			free(b.buf);
			reread = true;
			char *t = xp_k8s_read_token(cl->conf.token_file, err);
			if (!t)
				goto fail;
			memset(cl->conf.token, 0, cl->conf.token ? strlen(cl->conf.token) : 0);
			free(cl->conf.token);
			cl->conf.token = t;
			continue;
		}
		if (code == 410 && cont && !restarted) {
			/* The continue token expired (the server compacted its history): the pages read
			 * so far are of an older version, so the whole list starts again. Once. */
			free(b.buf);
			restarted = true;
			free(cont);
			cont = NULL;
			json_array_clear(items);
			continue;
		}
		if (code == 404 && absent && !cont) {
			/* The API group is not served: that engine is not installed. */
			free(b.buf);
			*absent = true;
			goto fail;
		}
		if (code != 200) {
			char msg[256];
			status_message(b.buf, b.len, msg, sizeof msg);
			free(b.buf);
			xp_mask_controls(msg);
			if (code == 401)
				xp_errf(err, "GET %s: 401 Unauthorized: the server refused the credentials from %s%s", path,
					cl->conf.origin ? cl->conf.origin : "the options", msg);
			else if (code == 403)
				xp_errf(err, "GET %s: 403 Forbidden: this account may not list it (xpool needs list on it)%s",
					path, msg);
			else if (code == 410)
				xp_errf(err, "GET %s: 410 Gone: the list changed faster than it could be read%s", path, msg);
			else
				xp_errf(err, "GET %s: HTTP %ld%s", path, code, msg);
			goto fail;
		}
		json_error_t je;
		json_t *page = b.buf ? json_loadb(b.buf, b.len, 0, &je) : NULL;
		free(b.buf);
		if (!page) {
			xp_errf(err, "GET %s: malformed JSON%s%s", path, b.len ? ": " : " (an empty body)", b.len ? je.text : "");
			goto fail;
		}
		json_t *it = json_object_get(page, "items");
		json_t *md = json_object_get(page, "metadata");
		json_t *ct = json_object_get(md, "continue");
		if (!json_is_array(it) && !json_is_null(it)) {
			json_decref(page);
			xp_errf(err, "GET %s: not a list (no items array)", path);
			goto fail;
		}
		if (ct && !json_is_string(ct)) {
			json_decref(page);
			xp_errf(err, "GET %s: metadata.continue is not a string", path);
			goto fail;
		}
		if (it && cl->trim) {
			/* Page by page, so that a long list never holds whole objects: 50,000
			 * Pods decoded whole weigh several hundred MiB. */
			size_t i;
			json_t *x;
			json_array_foreach(it, i, x) if (cl->trim(x)) json_array_append(items, x);
		} else if (it)
			json_array_extend(items, it);
		free(cont);
		cont = ct && *json_string_value(ct) ? xp_strdup(json_string_value(ct)) : NULL;
		json_decref(page);
		if (!cont)
			break;
	}
	return items;
fail:
	free(cont);
	json_decref(items);
	return NULL;
}

json_t *xp_k8s_list(struct xp_k8s_client *cl, const char *path, const char *query, struct xp_err *err)
{
	return list(cl, path, query, NULL, err);
}

json_t *xp_k8s_list_opt(struct xp_k8s_client *cl, const char *path, const char *query, bool *absent,
			struct xp_err *err)
{
	return list(cl, path, query, absent, err);
}
