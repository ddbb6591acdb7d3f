/* k8s_config.h: where a Kubernetes API server is and how to authenticate to it: the current
 * kubeconfig context, the in-cluster service-account files, or explicit options. Secrets
 * (tokens, keys) are held here and never put in an error message. */
#ifndef XP_K8S_CONFIG_H
#define XP_K8S_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "xp.h"

/* The most bytes of a kubeconfig, token or certificate file read: more is an error. */
#define XP_K8S_MAX_FILE (1 << 20)

/* Where the connection settings come from. */
struct xp_k8s_opts {
	const char *server;     /* --k8s-server URL: explicit, no kubeconfig read */
	const char *token_file; /* --k8s-token-file F */
	const char *ca_file;    /* --k8s-ca F */
	const char *kubeconfig; /* a kubeconfig file; NULL: $KUBECONFIG (first file), ~/.kube/config */
	const char *sa_dir;     /* service-account directory; NULL: /var/run/secrets/kubernetes.io/serviceaccount */
};

/* One API server and the credentials for it; every string owned, NULL when not given. */
struct xp_k8s_conf {
	char *server;        /* "https://10.0.0.1:6443", no trailing '/' */
	char *token;         /* bearer token (secret) */
	char *token_file;    /* where the token was read: read again on a 401 */
	char *ca_file;       /* CA bundle file */
	char *ca_data;       /* CA bundle PEM (decoded certificate-authority-data) */
	size_t ca_data_len;
	char *cert_file, *key_file; /* client certificate and key files */
	char *cert_data, *key_data; /* client certificate and key PEM (key: secret) */
	size_t cert_data_len, key_data_len;
	bool insecure;       /* insecure-skip-tls-verify: true */
	char *origin;        /* what it came from: "kubeconfig F context C", "in-cluster", "--k8s-server" */
};

/* Fills c from o; -1 with err set (naming the file and field, never a secret) on failure. */
int xp_k8s_conf_load(const struct xp_k8s_opts *o, struct xp_k8s_conf *c, struct xp_err *err);
/* Parses the kubeconfig at path (its current context) into c; -1 with err set. */
int xp_k8s_kubeconfig(const char *path, struct xp_k8s_conf *c, struct xp_err *err);
/* Reads a token file (trimmed of surrounding white space) into a new string; NULL with err set. */
char *xp_k8s_read_token(const char *path, struct xp_err *err);
/* Frees what c holds (secrets wiped first) and zeroes it. */
void xp_k8s_conf_clear(struct xp_k8s_conf *c);

#endif
