/* k8s_config.c: kubeconfig (libyaml), in-cluster and explicit connection settings. */
#include "k8s_config.h"

/* The deepest flow nesting a kubeconfig may have. */
#define XP_K8S_MAX_NEST 64

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

static void wipe_free(char *s, size_t len)
{
	if (!s)
		return;
	/* A token or key must not linger in freed memory a later allocation hands out. */
	volatile char *v = s;
	for (size_t i = 0; i < len; i++)
		v[i] = 0;
	free(s);
}

void xp_k8s_conf_clear(struct xp_k8s_conf *c)
{
	free(c->server);
	wipe_free(c->token, c->token ? strlen(c->token) : 0);
	free(c->token_file);
	free(c->ca_file);
	free(c->ca_data);
	free(c->cert_file);
	free(c->key_file);
	free(c->cert_data);
	wipe_free(c->key_data, c->key_data_len);
	free(c->origin);
	*c = (struct xp_k8s_conf){0};
}

char *xp_k8s_read_token(const char *path, struct xp_err *err)
{
	size_t len;
	char *t = xp_read_file(path, XP_K8S_MAX_FILE, &len, err);
	if (!t)
		return NULL;
	size_t b = 0, e = len;
	while (b < e && strchr(" \t\r\n", t[b]))
		b++;
	while (e > b && strchr(" \t\r\n", t[e - 1]))
		e--;
	for (size_t i = b; i < e; i++)
		if ((unsigned char)t[i] < 0x21 || (unsigned char)t[i] > 0x7e) {
			/* A header with a control byte would be refused, or worse, split. */
			wipe_free(t, len);
			xp_errf(err, "%s: the token holds a byte that is not printable ASCII", path);
			return NULL;
		}
	if (b == e) {
		wipe_free(t, len);
		xp_errf(err, "%s: the token file is empty", path);
		return NULL;
	}
	char *tok = xp_strndup(t + b, e - b);
	wipe_free(t, len);
	return tok;
}

/* Decodes standard base64 (kubeconfig *-data fields); NULL when s is not base64. */
static char *b64_decode(const char *s, size_t *out_len)
{
	size_t n = strlen(s);
	char *out = xp_malloc(n / 4 * 3 + 4);
	size_t o = 0;
	unsigned acc = 0;
	int bits = 0, pad = 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		int v;
		if (ch >= 'A' && ch <= 'Z')
			v = ch - 'A';
		else if (ch >= 'a' && ch <= 'z')
			v = ch - 'a' + 26;
		else if (ch >= '0' && ch <= '9')
			v = ch - '0' + 52;
		else if (ch == '+')
			v = 62;
		else if (ch == '/')
			v = 63;
		else if (ch == '=') {
			pad++;
			continue;
		} else if (ch == '\n' || ch == '\r' || ch == ' ')
			continue;
		else {
			free(out);
			return NULL;
		}
		if (pad) {
			free(out);
			return NULL;
		}
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)((acc >> bits) & 0xff);
		}
	}
	if (pad > 2 || o == 0) {
		free(out);
		return NULL;
	}
	out[o] = '\0';
	*out_len = o;
	return out;
}

/* The document being read, for the lookups and the errors. */
struct kc {
	yaml_document_t doc;
	const char *path;
	struct xp_err *err;
};

static yaml_node_t *node(struct kc *k, int id)
{
	return id ? yaml_document_get_node(&k->doc, id) : NULL;
}

/* The value of key in mapping m, or NULL. */
static yaml_node_t *get(struct kc *k, yaml_node_t *m, const char *key)
{
	if (!m || m->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = node(k, p->key);
		if (kn && kn->type == YAML_SCALAR_NODE && strlen(key) == kn->data.scalar.length &&
		    memcmp(kn->data.scalar.value, key, kn->data.scalar.length) == 0)
			return node(k, p->value);
	}
	return NULL;
}

/* The scalar text of key in m: NULL when absent (or null); -1 through *bad, with the error
 * naming the field, when present but not a string. */
static const char *str(struct kc *k, yaml_node_t *m, const char *key, const char *field, int *bad)
{
	yaml_node_t *v = get(k, m, key);
	if (!v)
		return NULL;
	if (v->type != YAML_SCALAR_NODE) {
		xp_errf(k->err, "kubeconfig %s: %s.%s: not a string", k->path, field, key);
		*bad = -1;
		return NULL;
	}
	const char *s = (const char *)v->data.scalar.value;
	if (strlen(s) != v->data.scalar.length) {
		xp_errf(k->err, "kubeconfig %s: %s.%s: holds a NUL byte", k->path, field, key);
		*bad = -1;
		return NULL;
	}
	if (v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && (!strcmp(s, "null") || !strcmp(s, "~") || !*s))
		return NULL;
	return s;
}

/* The entry named name in the list key ("contexts", "clusters", "users"), and its inner
 * mapping (inner: "context", "cluster", "user"); NULL with err set when absent. */
static yaml_node_t *named(struct kc *k, yaml_node_t *root, const char *key, const char *inner,
			  const char *name, char *field, size_t flen)
{
	yaml_node_t *list = get(k, root, key);
	if (!list || list->type != YAML_SEQUENCE_NODE) {
		xp_errf(k->err, "kubeconfig %s: %s: %s", k->path, key, list ? "not a list" : "missing");
		return NULL;
	}
	size_t i = 0;
	for (yaml_node_item_t *it = list->data.sequence.items.start; it < list->data.sequence.items.top; it++, i++) {
		yaml_node_t *e = node(k, *it);
		yaml_node_t *nm = get(k, e, "name");
		if (!nm || nm->type != YAML_SCALAR_NODE || strcmp((const char *)nm->data.scalar.value, name))
			continue;
		yaml_node_t *in = get(k, e, inner);
		snprintf(field, flen, "%s[%zu].%s", key, i, inner);
		if (!in || in->type != YAML_MAPPING_NODE) {
			xp_errf(k->err, "kubeconfig %s: %s: %s", k->path, field, in ? "not a mapping" : "missing");
			return NULL;
		}
		return in;
	}
	/* The name comes from the file (not a secret) but may be long or odd: cut and masked. */
	xp_errf(k->err, "kubeconfig %s: %s: no entry named '%.64s'", k->path, key, name);
	return NULL;
}

/* A file path from the kubeconfig: relative ones are relative to its directory, as kubectl reads them. */
static char *rel_path(const char *kcpath, const char *p)
{
	if (p[0] == '/')
		return xp_strdup(p);
	const char *slash = strrchr(kcpath, '/');
	if (!slash)
		return xp_strdup(p);
	return xp_asprintf("%.*s/%s", (int)(slash - kcpath), kcpath, p);
}

/* A *-data field: base64 PEM; -1 with err naming the field when not base64. */
static int data_field(struct kc *k, const char *b64, const char *field, const char *key, char **out, size_t *len)
{
	*out = b64_decode(b64, len);
	if (!*out)
		return xp_errf(k->err, "kubeconfig %s: %s.%s: not base64", k->path, field, key);
	return 0;
}

static int parse_doc(struct kc *k, struct xp_k8s_conf *c)
{
	yaml_node_t *root = yaml_document_get_root_node(&k->doc);
	if (!root || root->type != YAML_MAPPING_NODE)
		return xp_errf(k->err, "kubeconfig %s: not a mapping (a kubeconfig is a YAML mapping)", k->path);
	int bad = 0;
	const char *cur = str(k, root, "current-context", "", &bad);
	if (bad)
		return -1;
	if (!cur)
		return xp_errf(k->err, "kubeconfig %s: current-context: missing (choose one with kubectl config use-context)", k->path);
	char field[96], cfield[96], ufield[96];
	yaml_node_t *ctx = named(k, root, "contexts", "context", cur, field, sizeof field);
	if (!ctx)
		return -1;
	const char *cluster = str(k, ctx, "cluster", field, &bad);
	const char *user = bad ? NULL : str(k, ctx, "user", field, &bad);
	if (bad)
		return -1;
	if (!cluster)
		return xp_errf(k->err, "kubeconfig %s: %s.cluster: missing", k->path, field);
	yaml_node_t *cl = named(k, root, "clusters", "cluster", cluster, cfield, sizeof cfield);
	if (!cl)
		return -1;
	const char *server = str(k, cl, "server", cfield, &bad);
	if (bad)
		return -1;
	if (!server)
		return xp_errf(k->err, "kubeconfig %s: %s.server: missing", k->path, cfield);
	c->server = xp_strdup(server);
	const char *ca = str(k, cl, "certificate-authority", cfield, &bad);
	const char *cad = bad ? NULL : str(k, cl, "certificate-authority-data", cfield, &bad);
	const char *ins = bad ? NULL : str(k, cl, "insecure-skip-tls-verify", cfield, &bad);
	if (bad)
		return -1;
	if (cad && data_field(k, cad, cfield, "certificate-authority-data", &c->ca_data, &c->ca_data_len) < 0)
		return -1;
	if (ca && !cad)
		c->ca_file = rel_path(k->path, ca);
	c->insecure = ins && strcmp(ins, "true") == 0;
	if (c->insecure && (ca || cad))
		/* As kubectl: which of the two was meant cannot be guessed, and a guess that skips
		 * the check would send the token to whoever answers. */
		return xp_errf(k->err, "kubeconfig %s: %s: certificate-authority and insecure-skip-tls-verify both given",
			       k->path, cfield);
	if (user) {
		yaml_node_t *u = named(k, root, "users", "user", user, ufield, sizeof ufield);
		if (!u)
			return -1;
		if (get(k, u, "exec") || get(k, u, "auth-provider"))
			return xp_errf(k->err, "kubeconfig %s: %s: exec and auth-provider credentials are not supported "
				       "(use a token, tokenFile or client certificate)", k->path, ufield);
		const char *tok = str(k, u, "token", ufield, &bad);
		const char *tf = bad ? NULL : str(k, u, "tokenFile", ufield, &bad);
		const char *cc = bad ? NULL : str(k, u, "client-certificate", ufield, &bad);
		const char *ccd = bad ? NULL : str(k, u, "client-certificate-data", ufield, &bad);
		const char *ck = bad ? NULL : str(k, u, "client-key", ufield, &bad);
		const char *ckd = bad ? NULL : str(k, u, "client-key-data", ufield, &bad);
		if (bad)
			return -1;
		if (tok) {
			for (const char *q = tok; *q; q++)
				if ((unsigned char)*q < 0x21 || (unsigned char)*q > 0x7e)
					/* A header with a control byte would be refused, or worse, split. */
					return xp_errf(k->err, "kubeconfig %s: %s.token: a byte that is not printable ASCII",
						       k->path, ufield);
			c->token = xp_strdup(tok);
		}
		else if (tf) {
			c->token_file = rel_path(k->path, tf);
			if (!(c->token = xp_k8s_read_token(c->token_file, k->err))) {
				xp_err_prefix(k->err, "kubeconfig %s: %s.tokenFile", k->path, ufield);
				return -1;
			}
		}
		if (ccd && data_field(k, ccd, ufield, "client-certificate-data", &c->cert_data, &c->cert_data_len) < 0)
			return -1;
		if (ckd && data_field(k, ckd, ufield, "client-key-data", &c->key_data, &c->key_data_len) < 0)
			return -1;
		if (cc && !ccd)
			c->cert_file = rel_path(k->path, cc);
		if (ck && !ckd)
			c->key_file = rel_path(k->path, ck);
		if ((c->cert_file || c->cert_data) != (c->key_file || c->key_data))
			return xp_errf(k->err, "kubeconfig %s: %s: a client certificate needs its key, and a key its certificate",
				       k->path, ufield);
	}
	c->origin = xp_asprintf("kubeconfig %s context %.64s", k->path, cur);
	return 0;
}

int xp_k8s_kubeconfig(const char *path, struct xp_k8s_conf *c, struct xp_err *err)
{
	*c = (struct xp_k8s_conf){0};
	size_t len;
	char *text = xp_read_file(path, XP_K8S_MAX_FILE, &len, err);
	if (!text) {
		xp_err_prefix(err, "kubeconfig");
		return -1;
	}
	/* libyaml's time grows with the square of flow nesting ([ and { inside each other): a
	 * kubeconfig is a few levels deep, so a deep one is refused before it is parsed. */
	int depth = 0, most = 0;
	char quote = 0;
	for (size_t i = 0; i < len; i++) {
		char ch = text[i];
		if (ch == '\n') /* a quote left open by a plain word's apostrophe ends with its line */
			quote = 0;
		else if (quote) {
			if (ch == quote)
				quote = 0;
		} else if (ch == '"' || ch == '\'') {
			quote = ch;
		} else if (ch == '[' || ch == '{') {
			if (++depth > most)
				most = depth;
		} else if ((ch == ']' || ch == '}') && depth > 0)
			depth--;
	}
	if (most > XP_K8S_MAX_NEST) {
		wipe_free(text, len);
		return xp_errf(err, "kubeconfig %s: nested more than %d deep", path, XP_K8S_MAX_NEST);
	}
	yaml_parser_t p;
	struct kc k = {.path = path, .err = err};
	if (!yaml_parser_initialize(&p)) {
		wipe_free(text, len);
		return xp_errf(err, "kubeconfig %s: out of memory", path);
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	int rc;
	if (!yaml_parser_load(&p, &k.doc)) {
		/* libyaml's message names the place; the text near it could be a secret: not quoted. */
		rc = xp_errf(err, "kubeconfig %s: line %zu: %s", path, p.problem_mark.line + 1,
			     p.problem ? p.problem : "not YAML");
	} else {
		rc = parse_doc(&k, c);
		/* A token, a key: wipe the parsed copies too. */
		for (yaml_node_t *n = k.doc.nodes.start; n < k.doc.nodes.top; n++)
			if (n->type == YAML_SCALAR_NODE)
				memset(n->data.scalar.value, 0, n->data.scalar.length);
		yaml_document_delete(&k.doc);
	}
	yaml_parser_delete(&p);
	wipe_free(text, len);
	if (rc < 0)
		xp_k8s_conf_clear(c);
	return rc;
}

static int server_check(const char *s, const char *what, struct xp_err *err)
{
	if (strncmp(s, "https://", 8) && strncmp(s, "http://", 7))
		return xp_errf(err, "%s: the server '%.128s' is not an http:// or https:// URL", what, s);
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p <= 0x20 || *p == 0x7f)
			return xp_errf(err, "%s: the server URL holds a space or a control byte", what);
	return 0;
}

/* A bearer token goes only where it cannot be read on the way. API servers have served no
 * plain-HTTP port since Kubernetes 1.20: an http:// server is a proxy on this machine
 * (`kubectl proxy`, which holds the credentials itself), so a token over http:// is refused
 * unless the host is loopback. */
static int token_check(const struct xp_k8s_conf *c, struct xp_err *err)
{
	if (!c->token || strncmp(c->server, "http://", 7) != 0)
		return 0;
	/* The host as curl will connect to it (a user part before '@' is not the host). */
	CURLU *u = curl_url();
	char *host = NULL, *user = NULL;
	bool loop = false;
	if (u && curl_url_set(u, CURLUPART_URL, c->server, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK && host &&
	    curl_url_get(u, CURLUPART_USER, &user, 0) != CURLUE_OK) {
		unsigned char a[16];
		const char *h = host;
		char v6[64];
		size_t hl = strlen(h);
		if (hl > 2 && hl < sizeof v6 && h[0] == '[' && h[hl - 1] == ']') {
			memcpy(v6, h + 1, hl - 2);
			v6[hl - 2] = '\0';
			loop = inet_pton(AF_INET6, v6, a) == 1 && memcmp(a, (unsigned char[16]){[15] = 1}, 16) == 0;
		} else if (inet_pton(AF_INET, h, a) == 1)
			loop = a[0] == 127;
		else
			loop = strcasecmp(h, "localhost") == 0;
	}
	curl_free(host);
	curl_free(user);
	curl_url_cleanup(u);
	if (loop)
		return 0;
	return xp_errf(err, "%s: a bearer token would go to %.128s unencrypted; use https:// "
		       "(plain http:// is allowed only to this machine, for kubectl proxy)", c->origin, c->server);
}

int xp_k8s_conf_load(const struct xp_k8s_opts *o, struct xp_k8s_conf *c, struct xp_err *err)
{
	*c = (struct xp_k8s_conf){0};
	if (o->server) {
		c->server = xp_strdup(o->server);
		c->origin = xp_strdup("--k8s-server");
	} else {
		char *kc = o->kubeconfig ? xp_strdup(o->kubeconfig) : NULL;
		const char *env = getenv("KUBECONFIG");
		/* KUBECONFIG is a list: its first file that exists (xpool does not merge several). */
		for (const char *s = env; !kc && s && *s;) {
			size_t l = strcspn(s, ":");
			char *f = xp_strndup(s, l);
			if (*f && access(f, F_OK) == 0)
				kc = f;
			else
				free(f);
			s += l + (s[l] == ':');
		}
		const char *home = getenv("HOME");
		if (!kc && !(env && *env) && home && *home) {
			char *f = xp_asprintf("%s/.kube/config", home);
			if (access(f, F_OK) == 0)
				kc = f;
			else
				free(f);
		}
		const char *sa = o->sa_dir ? o->sa_dir : SA_DIR;
		if (kc) {
			int rc = xp_k8s_kubeconfig(kc, c, err);
			free(kc);
			if (rc < 0)
				return -1;
		} else if (getenv("KUBERNETES_SERVICE_HOST") && *getenv("KUBERNETES_SERVICE_HOST")) {
			const char *h = getenv("KUBERNETES_SERVICE_HOST");
			const char *port = getenv("KUBERNETES_SERVICE_PORT");
			bool v6 = strchr(h, ':') != NULL;
			c->server = xp_asprintf("https://%s%s%s:%s", v6 ? "[" : "", h, v6 ? "]" : "",
						port && *port ? port : "443");
			c->token_file = xp_asprintf("%s/token", sa);
			c->ca_file = xp_asprintf("%s/ca.crt", sa);
			c->origin = xp_strdup("in-cluster service account");
			if (!(c->token = xp_k8s_read_token(c->token_file, err))) {
				xp_k8s_conf_clear(c);
				return -1;
			}
		} else
			return xp_errf(err, "no Kubernetes cluster: no kubeconfig (%s) and not in a pod "
				       "(KUBERNETES_SERVICE_HOST unset); give --k8s-server",
				       env && *env ? "none of KUBECONFIG's files exists" : "~/.kube/config does not exist");
	}
	/* Explicit options win over what the kubeconfig said. */
	if (o->token_file) {
		free(c->token_file);
		wipe_free(c->token, c->token ? strlen(c->token) : 0);
		c->token_file = xp_strdup(o->token_file);
		if (!(c->token = xp_k8s_read_token(o->token_file, err))) {
			xp_k8s_conf_clear(c);
			return -1;
		}
	}
	if (o->ca_file) {
		free(c->ca_file);
		free(c->ca_data);
		c->ca_data = NULL;
		c->ca_data_len = 0;
		c->ca_file = xp_strdup(o->ca_file);
		c->insecure = false; /* a CA named on the command line is to be checked against */
	}
	if (server_check(c->server, c->origin, err) < 0 || token_check(c, err) < 0) {
		xp_k8s_conf_clear(c);
		return -1;
	}
	size_t l = strlen(c->server);
	while (l > 0 && c->server[l - 1] == '/')
		c->server[--l] = '\0';
	return 0;
}
