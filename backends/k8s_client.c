/* k8s_client.c: paged GETs against a Kubernetes API server. */
#include "k8s_client.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format.h"
#include "jsonpull.h"

struct xp_k8s_client {
	struct xp_k8s_conf conf;
	struct xp_k8s_client_opts o;
	CURL *easy;
	size_t requests;
	xp_k8s_trim_fn *trim; /* applied to each item as its page arrives; NULL: none */
	const struct xp_k8s_keep *keep; /* what of each item is decoded; NULL: all of it */
};

struct body {
	char *buf;
	size_t len, cap, max;
	bool over;
};

/* Appends k bytes at p to *buf (*len of them, room for *cap; first the room to start with),
 * kept NUL-terminated: a body, a watch's partial event. */
static void append(char **buf, size_t *len, size_t *cap, size_t first, const char *p, size_t k)
{
	if (*len + k + 1 > *cap) {
		size_t c = *cap ? *cap : first;
		while (c < *len + k + 1)
			c *= 2;
		*buf = xp_realloc(*buf, c);
		*cap = c;
	}
	memcpy(*buf + *len, p, k);
	*len += k;
	(*buf)[*len] = '\0';
}

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct body *b = arg;
	size_t k = size * n;
	if (b->len + k > b->max) {
		/* Stop reading: a huge answer is refused, not held. */
		b->over = true;
		return 0;
	}
	append(&b->buf, &b->len, &b->cap, 65536, p, k);
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

void xp_k8s_client_keep(struct xp_k8s_client *cl, const struct xp_k8s_keep *keep)
{
	cl->keep = keep;
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

/* One GET; the HTTP status in *code and the body in *b (its buffer kept from the last GET:
 * growing a new one for each page of a long list costs more than reading it). -1 with err
 * set on a transport failure. */
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
	b->len = 0;
	b->over = false;
	b->max = cl->o.max_bytes;
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

/* Reads the token file again after a 401 (bound service-account tokens rotate); -1 with err set. */
static int reread_token(struct xp_k8s_client *cl, struct xp_err *err)
{
	char *t = xp_k8s_read_token(cl->conf.token_file, err);
	if (!t)
		return -1;
	memset(cl->conf.token, 0, cl->conf.token ? strlen(cl->conf.token) : 0);
	free(cl->conf.token);
	cl->conf.token = t;
	return 0;
}

/* ---- pages decoded as a reader keeps them ----
 *
 * jansson decodes a page whole, and the trims then free most of it: for 50,000 Pods that is
 * millions of allocations made only to be freed, and most of the time of a list. A page is
 * read instead with the pull tokenizer (jsonpull.h, as strict as jansson: grammar, UTF-8,
 * no \u0000, depth 2048, numbers that fit) and only what keep names is built; the rest is
 * checked and skipped. Duplicate keys are allowed and the last value wins, as json_loadb
 * without JSON_REJECT_DUPLICATES has them, so the kept objects are those a whole decode and
 * the same cut would leave. Only the tokenizer's own caps go further than jansson: a string
 * over 4 MiB, a number over 512 characters; etcd stores no object over 1.5 MiB. */

/* Checks and passes over a value whose start was t; no duplicate check, as json_loadb. */
static int skip_value(struct xp_jp *jp, enum xp_jp_type t)
{
	int r;
	switch (t) {
	case XP_JP_ERROR:
		return -1;
	case XP_JP_OBJECT:
		while ((r = xp_jp_next_key_unchecked(jp)) == 1)
			if (skip_value(jp, xp_jp_value(jp)) < 0)
				return -1;
		return r;
	case XP_JP_ARRAY:
		while ((r = xp_jp_next_elem(jp)) == 1)
			if (skip_value(jp, xp_jp_value(jp)) < 0)
				return -1;
		return r;
	default:
		return 0;
	}
}

static json_t *kept(struct xp_jp *jp, const struct xp_k8s_keep *keep, bool (*want)(const char *));

/* The value whose start was t, as k says (NULL: whole); NULL on a syntax error. */
static json_t *value(struct xp_jp *jp, enum xp_jp_type t, const struct xp_k8s_keep *k)
{
	switch (t) {
	case XP_JP_OBJECT: {
		if (k && k->want)
			return kept(jp, NULL, k->want);
		if (k && k->sub && !k->each)
			return kept(jp, k->sub, NULL);
		return kept(jp, NULL, NULL);
	}
	case XP_JP_ARRAY: {
		json_t *a = json_array();
		int r;
		/* Each object of an "each" array cut by sub; anything else in it whole. */
		const struct xp_k8s_keep *el = k && k->each ? &(const struct xp_k8s_keep){.sub = k->sub} : NULL;
		while ((r = xp_jp_next_elem(jp)) == 1) {
			json_t *v = value(jp, xp_jp_value(jp), el);
			if (!v) {
				json_decref(a);
				return NULL;
			}
			json_array_append_new(a, v);
		}
		if (r < 0) {
			json_decref(a);
			return NULL;
		}
		return a;
	}
	case XP_JP_STRING:
		return json_stringn_nocheck(jp->str, jp->str_len); /* UTF-8 checked by the tokenizer */
	case XP_JP_INTEGER:
		return json_integer((json_int_t)jp->ival);
	case XP_JP_REAL:
		return json_real(jp->dval);
	case XP_JP_TRUE:
		return json_true();
	case XP_JP_FALSE:
		return json_false();
	case XP_JP_NULL:
		return json_null();
	default:
		return NULL;
	}
}

/* An object just entered: with keep, only the members it names (each as its entry says);
 * with want, only the members want takes (whole); with neither, every member whole. */
static json_t *kept(struct xp_jp *jp, const struct xp_k8s_keep *keep, bool (*want)(const char *))
{
	json_t *o = json_object();
	char small[128];
	int r;
	while ((r = xp_jp_next_key_unchecked(jp)) == 1) {
		const struct xp_k8s_keep *k = NULL;
		bool take = true;
		if (want)
			take = want(jp->key);
		else if (keep) {
			for (k = keep; k->key && strcmp(k->key, jp->key); k++)
				;
			take = k->key != NULL;
		}
		enum xp_jp_type t = xp_jp_value(jp);
		if (!take) {
			if (skip_value(jp, t) < 0) {
				r = -1;
				break;
			}
			continue;
		}
		/* The key is the tokenizer's until the next one: the value's own keys come first. */
		size_t klen = jp->key_len;
		char *key = klen < sizeof small ? small : xp_malloc(klen + 1);
		memcpy(key, jp->key, klen + 1);
		json_t *v = value(jp, t, want ? NULL : k);
		if (v)
			json_object_setn_new_nocheck(o, key, klen, v);
		if (key != small)
			free(key);
		if (!v) {
			r = -1;
			break;
		}
	}
	if (r < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *xp_k8s_decode_list(const char *text, size_t len, const struct xp_k8s_keep *keep, char *msg, size_t msglen)
{
	const struct xp_k8s_keep page[] = {{.key = "items", .sub = keep, .each = true}, {.key = "metadata"}, {0}};
	struct xp_jp jp;
	xp_jp_init_mem(&jp, text, len);
	enum xp_jp_type t = xp_jp_top(&jp);
	/* A page that is not an object is kept whole, to be found "not a list" as before. */
	json_t *v = t == XP_JP_OBJECT ? kept(&jp, page, NULL) : value(&jp, t, NULL);
	if (v && xp_jp_end(&jp) < 0) {
		json_decref(v);
		v = NULL;
	}
	if (!v)
		snprintf(msg, msglen, "%s", jp.failed ? jp.msg : "malformed");
	xp_jp_free(&jp);
	return v;
}

/* absent NULL: a 404 is an error like any other status. rv (NULL: not wanted) takes the
 * list's metadata.resourceVersion, where a watch of it starts. */
static json_t *list(struct xp_k8s_client *cl, const char *path, const char *query, bool *absent, char **rv,
		    struct xp_err *err)
{
	if (absent)
		*absent = false;
	if (rv)
		*rv = NULL;
	json_t *items = json_array();
	struct body b = {0}; /* one buffer for every page */
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
		int rc = get(cl, url, path, &code, &b, err);
		free(url);
		if (rc < 0)
			goto fail;
		if (code == 401 && cl->conf.token_file && !reread) {
			/* Bound service-account tokens rotate: the file holds the new one. Once. */
			reread = true;
			if (reread_token(cl, err) < 0)
				goto fail;
			continue;
		}
		if (code == 410 && cont && !restarted) {
			/* The continue token expired (the server compacted its history): the pages read
			 * so far are of an older version, so the whole list starts again. Once. */
			restarted = true;
			free(cont);
			cont = NULL;
			json_array_clear(items);
			continue;
		}
		if (code == 404 && absent && !cont) {
			/* The API group is not served: that engine is not installed. */
			*absent = true;
			goto fail;
		}
		if (code != 200) {
			char msg[256];
			status_message(b.buf, b.len, msg, sizeof msg);
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
		json_error_t je = {.text = ""};
		json_t *page = NULL;
		if (b.len && cl->keep)
			page = xp_k8s_decode_list(b.buf, b.len, cl->keep, je.text, sizeof je.text);
		else if (b.len)
			page = json_loadb(b.buf, b.len, 0, &je);
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
		if (rv) {
			/* Every page of one list is of the same version; after a restart, the new one. */
			const char *v = json_string_value(json_object_get(md, "resourceVersion"));
			free(*rv);
			*rv = v && *v ? xp_strdup(v) : NULL;
		}
		json_decref(page);
		if (!cont)
			break;
	}
	free(b.buf);
	b.buf = NULL;
	if (rv && !*rv) {
		/* A watch cannot start without it: a server that lists without one cannot be watched. */
		xp_errf(err, "GET %s: the list has no metadata.resourceVersion", path);
		goto fail;
	}
	return items;
fail:
	if (rv) {
		free(*rv);
		*rv = NULL;
	}
	free(cont);
	free(b.buf);
	json_decref(items);
	return NULL;
}

json_t *xp_k8s_list(struct xp_k8s_client *cl, const char *path, const char *query, struct xp_err *err)
{
	return list(cl, path, query, NULL, NULL, err);
}

json_t *xp_k8s_list_rv(struct xp_k8s_client *cl, const char *path, const char *query, char **rv, struct xp_err *err)
{
	return list(cl, path, query, NULL, rv, err);
}

json_t *xp_k8s_list_opt(struct xp_k8s_client *cl, const char *path, const char *query, bool *absent,
			struct xp_err *err)
{
	return list(cl, path, query, absent, NULL, err);
}

/* ---- writes ---- */

int xp_k8s_send(struct xp_k8s_client *cl, const char *method, const char *path, const char *ctype, const char *body,
		long *code, char **resp, struct xp_err *err)
{
	*code = 0;
	*resp = NULL;
	CURL *e = easy(cl);
	if (!e)
		return xp_errf(err, "%s %s: cannot start libcurl", method, path);
	char *url = xp_asprintf("%s%s", cl->conf.server, path);
	char *ct = xp_asprintf("Content-Type: %s", ctype);
	struct body b = {.max = cl->o.max_bytes};
	bool reread = false;
	int rc = 0;
	for (;;) {
		struct curl_slist *h = curl_slist_append(NULL, "Accept: application/json");
		h = curl_slist_append(h, ct);
		char *auth = NULL;
		if (cl->conf.token) {
			auth = xp_asprintf("Authorization: Bearer %s", cl->conf.token);
			h = curl_slist_append(h, auth);
		}
		b.len = 0;
		b.over = false;
		char errbuf[CURL_ERROR_SIZE] = "";
		curl_easy_setopt(e, CURLOPT_URL, url);
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
		curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
		cl->requests++;
		CURLcode cr = curl_easy_perform(e);
		/* The handle goes back to what the GETs of lists and watches expect. */
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, NULL);
		curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, NULL);
		/* errbuf and b live on this stack: a later transfer must not write into them. */
		curl_easy_setopt(e, CURLOPT_ERRORBUFFER, NULL);
		curl_easy_setopt(e, CURLOPT_WRITEDATA, NULL);
		curl_slist_free_all(h);
		if (auth) {
			memset(auth, 0, strlen(auth));
			free(auth);
		}
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, code);
		if (b.over) {
			rc = xp_errf(err, "%s %s: the response is larger than %zu bytes", method, path, b.max);
			break;
		}
		if (cr != CURLE_OK) {
			rc = xp_errf(err, "%s %s: %s", method, path, errbuf[0] ? errbuf : curl_easy_strerror(cr));
			break;
		}
		if (*code == 401 && cl->conf.token_file && !reread) {
			/* As for lists: a rotated service-account token is in its file. Once. */
			reread = true;
			if (reread_token(cl, err) < 0) {
				rc = -1;
				break;
			}
			continue;
		}
		break;
	}
	free(url);
	free(ct);
	if (rc < 0) {
		free(b.buf);
		return -1;
	}
	*resp = b.buf ? b.buf : xp_strdup("");
	return 0;
}

void xp_k8s_status_text(const char *body, char *out, size_t len)
{
	status_message(body, body ? strlen(body) : 0, out, len);
	xp_mask_controls(out);
}

/* ---- watches ---- */

/* One watch window as it is read: whole lines are events, a partial one waits for the rest. */
struct wstream {
	CURL *e;
	const struct xp_k8s_watch_opts *o;
	xp_k8s_event_fn *fn;
	void *arg;
	const char *path;
	struct xp_err *err;
	char *buf;             /* the line being read, or the body of a status other than 200 */
	size_t len, cap;
	size_t events, bytes;  /* read in this window */
	long code;             /* the HTTP status once the headers came; 0 before */
	bool enough;           /* the window's caps were reached: it ends, what came is applied */
	int failed;            /* 0, or the result (-1, XP_K8S_GONE) of an event that stopped it (err set) */
	struct timespec last;  /* when bytes last came */
};

static long ms_since(const struct timespec *t)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)(now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

static void wappend(struct wstream *w, const char *p, size_t k)
{
	append(&w->buf, &w->len, &w->cap, 4096, p, k);
}

/* One whole line: a WatchEvent {"type":..., "object":{...}}. */
static void event_line(struct wstream *w)
{
	if (w->len == 0)
		return; /* a blank line between events is no event */
	json_error_t je;
	json_t *ev = json_loadb(w->buf, w->len, 0, &je);
	w->len = 0;
	const char *type = json_string_value(json_object_get(ev, "type"));
	json_t *obj = json_object_get(ev, "object");
	if (!ev || !json_is_object(ev)) {
		w->failed = xp_errf(w->err, "GET %s (watch): a malformed event: %s", w->path, ev ? "not an object" : je.text);
	} else if (!type || !json_is_object(obj)) {
		w->failed = xp_errf(w->err, "GET %s (watch): a malformed event: no type or no object", w->path);
	} else if (!strcmp(type, "ERROR")) {
		/* The object is a Status; 410 says the version asked for is older than the server
		 * keeps (compacted): only a new list can go on. */
		json_int_t code = json_integer_value(json_object_get(obj, "code"));
		char msg[256];
		const char *m = json_string_value(json_object_get(obj, "message"));
		snprintf(msg, sizeof msg, "%.200s", m ? m : "no message");
		xp_mask_controls(msg);
		if (code == 410)
			xp_errf(w->err, "GET %s (watch): 410 Gone: %s", w->path, msg);
		else
			xp_errf(w->err, "GET %s (watch): ERROR %lld: %s", w->path, (long long)code, msg);
		w->failed = code == 410 ? XP_K8S_GONE : -1;
	} else if (strcmp(type, "ADDED") && strcmp(type, "MODIFIED") && strcmp(type, "DELETED") && strcmp(type, "BOOKMARK")) {
		char t[48];
		snprintf(t, sizeof t, "%.40s", type);
		xp_mask_controls(t);
		w->failed = xp_errf(w->err, "GET %s (watch): an event of unknown type %s", w->path, t);
	} else if (w->fn(w->arg, type, obj, w->err) < 0) {
		w->failed = -1;
	} else if (++w->events >= w->o->max_events) {
		w->enough = true;
	}
	json_decref(ev);
}

static size_t on_stream(char *p, size_t size, size_t n, void *arg)
{
	struct wstream *w = arg;
	size_t k = size * n;
	clock_gettime(CLOCK_MONOTONIC, &w->last);
	if (w->failed || w->enough)
		return 0; /* stops the transfer */
	if (!w->code)
		curl_easy_getinfo(w->e, CURLINFO_RESPONSE_CODE, &w->code);
	if (w->code != 200) {
		/* A Status body: the first 64 KiB say why. */
		if (w->len < 65536)
			wappend(w, p, k < 65536 - w->len ? k : 65536 - w->len);
		return k;
	}
	w->bytes += k;
	size_t off = 0;
	while (off < k && !w->failed && !w->enough) {
		char *nl = memchr(p + off, '\n', k - off);
		size_t seg = nl ? (size_t)(nl - (p + off)) : k - off;
		if (w->len + seg > w->o->max_event) {
			w->failed = xp_errf(w->err, "GET %s (watch): an event larger than %zu bytes", w->path, w->o->max_event);
			break;
		}
		wappend(w, p + off, seg);
		off += seg;
		if (nl) {
			off++;
			event_line(w);
		}
	}
	if (w->bytes > w->o->max_bytes)
		w->enough = true;
	return k;
}

int xp_k8s_watch(struct xp_k8s_client *cl, const char *path, const char *query, const char *rv,
		 const struct xp_k8s_watch_opts *wo, xp_k8s_event_fn *fn, void *arg, struct xp_err *err)
{
	struct xp_k8s_watch_opts o = wo ? *wo : (struct xp_k8s_watch_opts){0};
	if (o.timeout_s <= 0)
		o.timeout_s = 5;
	if (o.idle_ms <= 0)
		o.idle_ms = 300;
	if (!o.max_event)
		o.max_event = (size_t)16 << 20;
	if (!o.max_events)
		o.max_events = 100000;
	if (!o.max_bytes)
		o.max_bytes = cl->o.max_bytes;
	CURL *e = easy(cl);
	if (!e)
		return xp_errf(err, "GET %s (watch): cannot start libcurl", path);
	char *esc = escape(rv);
	char *url = xp_asprintf("%s%s?watch=1&resourceVersion=%s&allowWatchBookmarks=true&timeoutSeconds=%ld%s%s",
				cl->conf.server, path, esc, o.timeout_s, query ? "&" : "", query ? query : "");
	free(esc);
	int rc = 0;
	for (int attempt = 0;; attempt++) {
		struct wstream w = {.e = e, .o = &o, .fn = fn, .arg = arg, .path = path, .err = err};
		struct curl_slist *h = curl_slist_append(NULL, "Accept: application/json");
		char *auth = NULL;
		if (cl->conf.token) {
			auth = xp_asprintf("Authorization: Bearer %s", cl->conf.token);
			h = curl_slist_append(h, auth);
		}
		char errbuf[CURL_ERROR_SIZE] = "";
		curl_easy_setopt(e, CURLOPT_URL, url);
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_stream);
		curl_easy_setopt(e, CURLOPT_WRITEDATA, &w);
		curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
		/* The server ends the stream after timeoutSeconds, and the window ends a second later
		 * in any case (below); libcurl's own bound is the last resort. */
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, o.timeout_s * 1000L + 5000L);
		cl->requests++;
		/* Driven through a multi handle so that the window can end when the stream goes
		 * quiet (everything after rv has come: the server sends what it holds at once) and
		 * when the console is leaving (cancel), not only when the server closes it. */
		CURLM *m = curl_multi_init();
		CURLcode done = CURLE_OK;
		bool finished = false, cancelled = false, late = false;
		struct timespec start, heads = {0};
		clock_gettime(CLOCK_MONOTONIC, &start);
		w.last = start;
		if (!m || curl_multi_add_handle(m, e) != CURLM_OK) {
			rc = xp_errf(err, "GET %s (watch): cannot start libcurl", path);
		} else {
			for (;;) {
				int running = 0;
				curl_multi_perform(m, &running);
				CURLMsg *msg;
				int left;
				while ((msg = curl_multi_info_read(m, &left)))
					if (msg->msg == CURLMSG_DONE) {
						finished = true;
						done = msg->data.result;
					}
				if (finished || !running || w.failed || w.enough)
					break;
				if (o.cancel && atomic_load(o.cancel)) {
					cancelled = true;
					break;
				}
				long code = 0;
				curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
				if (code && !heads.tv_sec && !heads.tv_nsec)
					clock_gettime(CLOCK_MONOTONIC, &heads);
				/* Quiet since the headers or the last bytes: what was waiting has come. */
				if (code == 200 && ms_since(&heads) >= o.idle_ms && ms_since(&w.last) >= o.idle_ms)
					break;
				/* A busy cluster's stream is never quiet: the window ends anyway, its whole
				 * events applied, and the next one goes on from the last of them. */
				if (ms_since(&start) >= o.timeout_s * 1000L + 1000L) {
					late = !code;
					break;
				}
				curl_multi_poll(m, NULL, 0, 50, NULL);
			}
			curl_multi_remove_handle(m, e);
		}
		curl_multi_cleanup(m);
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, NULL);
		curl_easy_setopt(e, CURLOPT_ERRORBUFFER, NULL); /* errbuf and w end with this loop */
		curl_easy_setopt(e, CURLOPT_WRITEDATA, NULL);
		curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(cl->o.timeout_s * 1000));
		curl_slist_free_all(h);
		if (auth) {
			memset(auth, 0, strlen(auth));
			free(auth);
		}
		long code = w.code;
		if (!code)
			curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
		if (rc < 0)
			; /* said above */
		else if (cancelled) {
			rc = xp_errf(err, "GET %s (watch): cancelled", path);
		} else if (late) {
			rc = xp_errf(err, "GET %s (watch): no answer in %ld s", path, o.timeout_s + 1);
		} else if (w.failed) {
			rc = w.failed;
		} else if (code == 401 && cl->conf.token_file && attempt == 0) {
			free(w.buf);
			if (reread_token(cl, err) < 0) {
				rc = -1;
				break;
			}
			continue;
		} else if (code && code != 200) {
			char msg[256];
			status_message(w.buf, w.len, msg, sizeof msg);
			xp_mask_controls(msg);
			if (code == 410)
				rc = XP_K8S_GONE, xp_errf(err, "GET %s (watch): 410 Gone%s", path, msg);
			else if (code == 401)
				rc = xp_errf(err, "GET %s (watch): 401 Unauthorized: the server refused the credentials from %s%s",
					     path, cl->conf.origin ? cl->conf.origin : "the options", msg);
			else if (code == 403)
				rc = xp_errf(err, "GET %s (watch): 403 Forbidden: this account may not watch it (xpool needs watch on it)%s",
					     path, msg);
			else
				rc = xp_errf(err, "GET %s (watch): HTTP %ld%s", path, code, msg);
		} else if (finished && done != CURLE_OK && !w.enough) {
			rc = xp_errf(err, "GET %s (watch): the stream broke: %s", path, errbuf[0] ? errbuf : curl_easy_strerror(done));
		} else if (finished && !code) {
			rc = xp_errf(err, "GET %s (watch): no answer", path);
		} else if (finished && w.len && !w.enough) {
			/* The server closed it inside an event: what came of that event is not one. (A
			 * window xpool ended at its byte cap leaves its partial event to the next one,
			 * which starts from the last whole event's version.) */
			rc = xp_errf(err, "GET %s (watch): the stream ended inside an event (%zu bytes of it)", path, w.len);
		}
		free(w.buf);
		break;
	}
	free(url);
	return rc;
}
