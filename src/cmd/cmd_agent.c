/* cmd_agent.c: `xpool agent`: serve this node to consoles (backends/agent_server.h).
 * With no arguments it runs in the foreground until SIGTERM or SIGINT, as systemd wants;
 * `xpool agent SUB ...` is the console's side (managing the agents it polls). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent_ctl.h"
#include "agent_server.h"
#include "agent_token.h"
#include "cmd.h"
#include "source.h"

/* Largest TLS certificate chain or key file read. */
#define TLS_FILE_MAX ((size_t)1 << 20)
/* Bounds of --interval, seconds: a fifth of a second keeps tests quick, an hour is plenty. */
#define INTERVAL_MIN 0.2
#define INTERVAL_MAX 3600.0
#define INTERVAL_DEFAULT 5.0
/* Bounds of --max-connections (each is a socket and at most 32 KiB). */
#define MAXCONN_DEFAULT 64
#define MAXCONN_MAX 10000

static const struct xp_opt agent_opts[] = {
	{"listen", 0, "ADDR:PORT", "listen here (default " XP_AGENT_DEFAULT_LISTEN "; [::1]:PORT for IPv6; port 0: any)"},
	{"token-file", 0, "FILE", "require this bearer token on every request but probes (needed off loopback)"},
	{"write-token-file", 0, "FILE", "bearer token for POST /v1/probe (probes are refused without one)"},
	{"interval", 0, "SECONDS", "rediscover the node every SECONDS (default 5, 0.2 to 3600)"},
	{"name", 0, "NAME", "report the node under this name instead of the discovered host name"},
	{"config", 0, "FILE", "the agent's config: the probes it may run"},
	{"tls-cert", 0, "FILE", "serve HTTPS with this PEM certificate (chain); needs --tls-key"},
	{"tls-key", 0, "FILE", "the PEM private key of --tls-cert"},
	{"max-connections", 0, "N", "at most N connections at once (default 64; a quarter, at least 8, per client address)"},
	{"hide-args", 0, NULL, "serve each process's program without its arguments (they may hold secrets)"},
	{"case", 0, "CASE", "agent probe: record the result as evidence for this workload case (with --layer)"},
	{"layer", 0, "LAYER", "agent probe: the layer the agent's config gives the probe (checked before it runs)"},
	{"timeout", 0, "SECONDS", "agent probe: wait at most SECONDS for the reply (default 660)"},
	{NULL, 0, NULL, NULL},
};

static double mono_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Discovers the node: the CLI's own sources (live, --topology, --replay, --inventory).
 * NULL with err set when it fails or a snapshot does not single out one node. */
static struct xp_node *discover(const struct xp_ctx *ctx, const char *name, struct xp_err *err)
{
	struct xp_source_opts so = {.topology = ctx->topology, .inventory = ctx->inventory, .replay = ctx->replay};
	/* xp_source_load, not xp_ctx_cluster: the context caches its cluster, the agent wants fresh data. */
	struct xp_cluster *c = xp_source_load(&so, err);
	if (!c)
		return NULL;
	size_t pick = 0;
	if (c->n_nodes != 1 && !(ctx->inventory && name)) {
		xp_errf(err, "%s holds %zu nodes: an agent serves one (pick it with --name)",
			ctx->inventory ? ctx->inventory : "discovery", c->n_nodes);
		xp_cluster_free(c);
		return NULL;
	}
	if (c->n_nodes != 1) {
		for (pick = 0; pick < c->n_nodes && strcmp(c->nodes[pick]->name, name) != 0; pick++)
			;
		if (pick == c->n_nodes) {
			xp_errf(err, "%s: no node named %s", ctx->inventory, name);
			xp_cluster_free(c);
			return NULL;
		}
	}
	struct xp_node *n = c->nodes[pick];
	c->nodes[pick] = NULL; /* taken: the cluster frees the rest */
	xp_cluster_free(c);
	if (name) {
		free(n->name);
		n->name = xp_strdup(name);
	}
	return n;
}

/* Cuts each process's command line to its program (the first word): --hide-args, for nodes
 * whose jobs pass secrets as arguments, which every holder of the read token would see. */
static void hide_args(struct xp_node *n)
{
	for (size_t i = 0; i < n->n_devices; i++)
		for (size_t j = 0; j < n->devices[i].n_procs; j++) {
			char *c = n->devices[i].procs[j].command;
			char *sp = c ? strchr(c, ' ') : NULL;
			if (sp)
				memset(sp, 0, strlen(sp)); /* wiped, not only cut: the string is freed later */
		}
}

/* Reads a token file; NULL after printing why (the message names the file, never the token). */
static char *token(struct xp_ctx *ctx, const char *path, bool *bad)
{
	if (!path)
		return NULL;
	struct xp_err err = {{0}};
	char *t = xp_token_read(path, &err);
	if (!t) {
		xp_ctx_error(ctx, "agent: %s", err.msg);
		*bad = true;
	}
	return t;
}

/* Frees a token after overwriting it: it should not linger in freed memory. */
static void token_free(char *t)
{
	if (t) {
		explicit_bzero(t, strlen(t));
		free(t);
	}
}

/* SIGHUP: reads the token files again, so that a token can be rotated (a stolen one revoked)
 * without a restart. Both or neither: when one file cannot be read, the tokens in use stay and
 * the reason is said (naming the file, never the token). */
static void rotate_tokens(struct xp_ctx *ctx, struct xp_agent *ag, const char *rf, const char *wf)
{
	if (!rf && !wf)
		return;
	bool bad = false;
	char *r = token(ctx, rf, &bad);
	char *w = token(ctx, wf, &bad);
	if (bad)
		xp_ctx_error(ctx, "agent: SIGHUP: the tokens in use stay");
	else {
		xp_agent_set_tokens(ag, r, w);
		xp_ctx_error(ctx, "agent: SIGHUP: token files read again");
	}
	token_free(r);
	token_free(w);
}

static int agent_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	/* The console's side (agent ls|add|rm|probe) lives with the client, in src/cmd/agent_ctl.c. */
	if (a->argc > 0)
		return xp_agent_ctl(ctx, a);
	/* The server takes the process over (signals, the foreground): not from the console. */
	if (ctx->ui) {
		xp_ctx_error(ctx, "agent: run the agent as its own process ('xpool agent'), not from the console");
		return XP_EXIT_USAGE;
	}
	const char *listen = xp_args_has(a, "listen") ? xp_args_get(a, "listen") : XP_AGENT_DEFAULT_LISTEN;
	const char *name = xp_args_get(a, "name");
	double interval = INTERVAL_DEFAULT;
	unsigned maxconn = MAXCONN_DEFAULT;
	struct xp_err err = {{0}};
	if (xp_args_has(a, "interval")) {
		const char *v = xp_args_get(a, "interval");
		char *end;
		interval = strtod(v, &end);
		if (end == v || *end || !(interval >= INTERVAL_MIN && interval <= INTERVAL_MAX)) {
			xp_ctx_error(ctx, "agent: --interval '%s' is not a number of seconds from 0.2 to 3600", v);
			return XP_EXIT_USAGE;
		}
	}
	if (xp_args_has(a, "max-connections")) {
		const char *v = xp_args_get(a, "max-connections");
		char *end;
		errno = 0;
		long m = strtol(v, &end, 10);
		if (end == v || *end || errno || m < 1 || m > MAXCONN_MAX) {
			xp_ctx_error(ctx, "agent: --max-connections '%s' is not a number from 1 to %d", v, MAXCONN_MAX);
			return XP_EXIT_USAGE;
		}
		maxconn = (unsigned)m;
	}
	bool name_ok = !name || (*name && strlen(name) <= XP_MAX_NODE_NAME);
	for (const char *p = name; name_ok && p && *p; p++)
		name_ok = (unsigned char)*p >= 0x20 && *p != 0x7f;
	if (!name_ok) {
		xp_ctx_error(ctx, "agent: --name must be 1 to %d printable bytes", XP_MAX_NODE_NAME);
		return XP_EXIT_USAGE;
	}
	struct sockaddr_storage ss;
	socklen_t sl;
	if (xp_agent_listen_parse(listen, &ss, &sl, &err) < 0) {
		xp_ctx_error(ctx, "agent: %s", err.msg);
		return XP_EXIT_USAGE;
	}
	const char *tf = xp_args_get(a, "token-file");
	if (!tf && !xp_agent_addr_loopback((struct sockaddr *)&ss)) {
		xp_ctx_error(ctx, "agent: refusing to listen on %s without --token-file: anyone who can reach it "
				  "would read this node (use a loopback address, or give a token file)", listen);
		return XP_EXIT_USAGE;
	}
	const char *certf = xp_args_get(a, "tls-cert"), *keyf = xp_args_get(a, "tls-key");
	if (!certf != !keyf) {
		xp_ctx_error(ctx, "agent: --tls-cert and --tls-key go together");
		return XP_EXIT_USAGE;
	}

	int rc = XP_EXIT_OK;
	bool bad = false;
	char *rtok = token(ctx, tf, &bad);
	char *wtok = token(ctx, xp_args_get(a, "write-token-file"), &bad);
	char *cert = NULL, *key = NULL;
	struct xp_agent_config cfg = {0};
	struct xp_agent *ag = NULL;
	if (bad)
		rc = XP_EXIT_ERROR;
	if (rc == XP_EXIT_OK && certf) {
		size_t len;
		if (!(cert = xp_read_file(certf, TLS_FILE_MAX, &len, &err)) ||
		    /* Followed: certbot's live/NAME/privkey.pem is always a link into archive/. */
		    !(key = xp_secret_read(keyf, "TLS key file", TLS_FILE_MAX, true, &len, &err))) {
			xp_ctx_error(ctx, "agent: %s", err.msg);
			rc = XP_EXIT_ERROR;
		}
	}
	if (rc == XP_EXIT_OK && xp_args_has(a, "config") && xp_agent_config_load(xp_args_get(a, "config"), &cfg, &err) < 0) {
		xp_ctx_error(ctx, "agent: %s", err.msg);
		rc = XP_EXIT_USAGE;
	}
	/* The first discovery must work: an agent that serves nothing is a configuration error. */
	double t0 = mono_s();
	struct xp_node *n = rc == XP_EXIT_OK ? discover(ctx, name, &err) : NULL;
	bool hide = xp_args_has(a, "hide-args");
	if (n && hide)
		hide_args(n);
	if (rc == XP_EXIT_OK && !n) {
		xp_ctx_error(ctx, "agent: %s", err.msg);
		rc = XP_EXIT_ERROR;
	}
	/* Signals: SIGTERM and SIGINT stop, SIGHUP rediscovers now. They are blocked before the
	 * server's threads exist (the threads inherit the mask) and taken with sigtimedwait here. */
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	struct sigaction ign = {.sa_handler = SIG_IGN}, oldpipe;
	sigaction(SIGPIPE, &ign, &oldpipe);
	char url[512] = "";
	if (rc == XP_EXIT_OK) {
		struct xp_agent_opts o = {.listen = listen, .read_token = rtok, .write_token = wtok,
					  .tls_cert_pem = cert, .tls_key_pem = key, .interval_s = interval,
					  .max_connections = maxconn, .verbose = ctx->verbose, .log = ctx->err,
					  .config = &cfg};
		ag = xp_agent_new(&o);
		char *nm = xp_strdup(n->name);
		xp_agent_publish(ag, n, mono_s() - t0, time(NULL));
		if (xp_agent_serve(ag, url, sizeof url, &err) < 0) {
			xp_ctx_error(ctx, "agent: %s", err.msg);
			rc = XP_EXIT_ERROR;
		} else {
			fprintf(ctx->out, "xpool agent: serving %s on %s\n", nm, url);
			fflush(ctx->out);
		}
		free(nm);
	} else
		xp_node_free(n);
	/* The server copied what it needs: the secrets need not stay in this frame. */
	token_free(rtok);
	token_free(wtok);
	if (key)
		explicit_bzero(key, strlen(key));
	free(key);
	free(cert);

	while (rc == XP_EXIT_OK) {
		struct timespec ts = {(time_t)interval, (long)((interval - (double)(time_t)interval) * 1e9)};
		siginfo_t si;
		int sig = sigtimedwait(&set, &si, &ts);
		if (sig == SIGTERM || sig == SIGINT)
			break;
		if (sig < 0 && errno == EINTR)
			continue;
		if (sig == SIGHUP)
			rotate_tokens(ctx, ag, tf, xp_args_get(a, "write-token-file"));
		/* The interval passed, or SIGHUP: rediscover. */
		t0 = mono_s();
		struct xp_node *fresh = discover(ctx, name, &err);
		if (fresh && hide)
			hide_args(fresh);
		if (fresh)
			xp_agent_publish(ag, fresh, mono_s() - t0, time(NULL));
		else {
			xp_agent_fail(ag, err.msg, mono_s() - t0);
			if (ctx->verbose > 0)
				xp_ctx_error(ctx, "agent: rediscovery failed (still serving the last good node): %s",
					     err.msg);
		}
	}
	xp_agent_free(ag);
	xp_agent_config_free(&cfg);
	sigaction(SIGPIPE, &oldpipe, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

static const struct xp_subcmd agent_subs[] = {
	{"ls", true}, {"list", true}, {"add", false}, {"rm", false}, {"remove", false}, {"probe", true}, {NULL, false},
};
const struct xp_cmd_entry xp_cmd_agent_entry = {
	.name = "agent",
	.alias = NULL,
	.usage = "[--listen ADDR:PORT] [--token-file F] [--write-token-file F] [--interval S] [--name NAME] "
		 "[--config FILE] [--tls-cert F --tls-key F] [--max-connections N] [--hide-args] | ls | add URL... | rm URL... | "
		 "probe URL NAME [--case CASE --layer L] [--timeout S] --write-token-file F",
	.summary = "serve this node to consoles (inventory, health, metrics, probes); ls|add|rm|probe: the console's agents",
	.opts = agent_opts,
	.min_args = 0,
	.max_args = -1,
	.exec = agent_exec,
	.subs = agent_subs,
};
