/* node_access.c: read-only unless the engine says this caller may change nodes. */
#include "node_access.h"

#include <stdio.h>

#include "k8s_client.h"
#include "k8s_config.h"
#include "node_act.h"

const char *xp_node_engine(const struct xp_source_opts *so)
{
	if (so->slurm)
		return "slurm";
	if (xp_source_has_k8s(so))
		return "k8s";
	return NULL;
}

int xp_node_access(const struct xp_source_opts *so, bool read_only, char *why, size_t len)
{
	if (read_only) {
		snprintf(why, len, "read-only (--read-only)");
		return 0;
	}
	const char *eng = xp_node_engine(so);
	struct xp_err err = {{0}};
	char w[400] = "";
	int ok;
	if (!eng) {
		snprintf(why, len, "no engine: nodes change only through --slurm or --k8s");
		return 0;
	}
	if (eng[0] == 's') {
		ok = xp_slurm_may_update(so->slurm, w, sizeof w, &err);
	} else {
		struct xp_k8s_opts ko = {.server = so->k8s_server, .token_file = so->k8s_token_file, .ca_file = so->k8s_ca};
		struct xp_k8s_conf conf;
		if (xp_k8s_conf_load(&ko, &conf, &err) < 0) {
			ok = -1;
		} else {
			struct xp_k8s_client_opts o = {.timeout_s = 5}; /* the console waits for it at exit */
			struct xp_k8s_client *cl = xp_k8s_client_new(&conf, &o);
			ok = xp_k8s_may_patch_nodes(cl, w, sizeof w, &err);
			xp_k8s_client_free(cl);
		}
	}
	if (ok < 0) {
		/* Cannot tell: read-only, as with no credentials at all. */
		snprintf(why, len, "read-only: cannot tell whether this user may change nodes: %s", err.msg);
		return 0;
	}
	if (!ok)
		snprintf(why, len, "read-only: %s", w);
	return ok;
}
