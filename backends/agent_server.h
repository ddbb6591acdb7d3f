/* agent_server.h: `xpool agent`, the node agent: one node's inventory, health,
 * Prometheus metrics and whitelisted probes over HTTP(S) (libmicrohttpd).
 *
 * The command (src/cmd/cmd_agent.c) discovers the node and hands each result to the
 * server with xp_agent_publish; the server keeps the last good node, numbers its
 * changes (the generation) and answers from that copy, so a request never waits
 * for discovery and a failed rediscovery leaves the last good data served. */
#ifndef XP_AGENT_SERVER_H
#define XP_AGENT_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>

#include "model.h"
#include "xp.h"

/* Default listening address. */
#define XP_AGENT_DEFAULT_LISTEN "127.0.0.1:7447"
/* Longest probe name; names are [A-Za-z0-9_.-]. */
#define XP_AGENT_PROBE_NAME_MAX 64
/* Default probe timeout, seconds. */
#define XP_AGENT_PROBE_TIMEOUT 600.0
/* Most output a probe may print (more is cut and fails it) and how much of its end a reply keeps. */
#define XP_AGENT_PROBE_MAX_OUT ((size_t)1 << 20)
#define XP_AGENT_PROBE_TAIL ((size_t)64 << 10)
/* Seconds of samples the agent keeps for GET /v1/node?history=SECONDS (at its interval). */
#define XP_AGENT_HISTORY_S 600
/* Largest request body accepted (probes take none). */
#define XP_AGENT_MAX_REQUEST_BODY 4096

/* One probe the agent's config whitelists. */
struct xp_agent_probe {
	char *name;       /* what POST /v1/probe/NAME asks for */
	char *prog;       /* absolute path of the program, resolved at startup */
	char **argv;      /* NULL-terminated; argv[0] as written in the config */
	size_t argc;
	double timeout_s;
	int layer;        /* enum xp_layer the evidence is for */
};

/* The agent's config file: the probe whitelist. */
struct xp_agent_config {
	struct xp_agent_probe *probes;
	size_t n;
};

/* Reads a config file (`probe NAME [timeout=S] [layer=L] -- PROGRAM ARGS...` lines, `#`
 * comments); errors start with "FILE:LINE: ". */
int xp_agent_config_load(const char *path, struct xp_agent_config *cfg, struct xp_err *err);
/* Frees a config's contents. */
void xp_agent_config_free(struct xp_agent_config *cfg);
/* The whitelisted probe called name, or NULL. */
const struct xp_agent_probe *xp_agent_config_find(const struct xp_agent_config *cfg, const char *name);
/* True when name is a valid probe name: [A-Za-z0-9_.-], 1 to XP_AGENT_PROBE_NAME_MAX bytes. */
bool xp_agent_probe_name_ok(const char *name);

/* Parses "ADDR:PORT" or "[IPV6]:PORT" (numeric addresses only, port 0..65535) into ss. */
int xp_agent_listen_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len, struct xp_err *err);
/* True for 127.0.0.0/8, ::1 and IPv4-mapped 127.0.0.0/8. */
bool xp_agent_addr_loopback(const struct sockaddr *sa);

/* How the server runs. Strings are copied by xp_agent_new. */
struct xp_agent_opts {
	const char *listen;       /* "ADDR:PORT" (XP_AGENT_DEFAULT_LISTEN when NULL) */
	const char *read_token;   /* required on every request but POST /v1/probe when not NULL */
	const char *write_token;  /* required on POST /v1/probe; probes are refused without one */
	const char *tls_cert_pem; /* PEM text; HTTPS when both are set */
	const char *tls_key_pem;
	double interval_s;        /* rediscovery interval, reported in /v1/node */
	unsigned max_connections; /* concurrent connections (a quarter, at least 8, per client address) */
	int verbose;              /* > 0: one line per request on log */
	FILE *log;                /* request log and server errors (stderr) */
	const struct xp_agent_config *config; /* probe whitelist (borrowed; may be NULL) */
};

struct xp_agent;

/* A server, not yet listening. */
struct xp_agent *xp_agent_new(const struct xp_agent_opts *o);
/* Publishes a discovered node (taken); the generation goes up when its JSON changed. */
void xp_agent_publish(struct xp_agent *a, struct xp_node *n, double discovery_s, time_t when);
/* Records a failed rediscovery: the last good node stays served, health turns degraded. */
void xp_agent_fail(struct xp_agent *a, const char *why, double discovery_s);
/* Rotates the tokens (SIGHUP read the files again): each non-NULL one replaces the token of
 * its kind, the old one wiped. A kind the agent started without stays absent: rotation never
 * opens or closes the agent, it only changes the secret. Safe while requests are served. */
void xp_agent_set_tokens(struct xp_agent *a, const char *read_token, const char *write_token);
/* Starts listening; url (at most urllen bytes) gets "http[s]://ADDR:PORT" with the real port. */
int xp_agent_serve(struct xp_agent *a, char *url, size_t urllen, struct xp_err *err);
/* Stops serving (a running probe is killed) and frees the server; NULL is fine. */
void xp_agent_free(struct xp_agent *a);

#endif
