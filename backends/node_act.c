/* node_act.c: drain and resume through scontrol, cordon through the Kubernetes API. */
#include "node_act.h"

#include <ctype.h>
#include <jansson.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "run.h"
#include "slurm.h"

bool xp_node_act_name_ok(const char *name)
{
	if (!name || !*name || *name == '-' || strlen(name) > 253)
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      strchr("._-", *p)))
			return false;
	return true;
}

int xp_slurm_nodes_update(const char *conf, const char *list, bool drain, const char *reason, char **answer,
			  struct xp_err *err)
{
	*answer = NULL;
	if (drain && (!reason || !*reason))
		return xp_errf(err, "slurm: a drain needs a reason (Slurm requires one)");
	char *setting;
	if (xp_slurm_conf_setting(conf, &setting, err) < 0)
		return -1;
	char *nodes = xp_asprintf("NodeName=%s", list);
	char *why = drain ? xp_asprintf("Reason=%s", reason) : NULL;
	const char *argv[] = {"scontrol", "update", nodes, drain ? "State=DRAIN" : "State=RESUME", why, NULL};
	const char *env[] = {setting, NULL};
	char *out = NULL, msg[512];
	size_t len = 0;
	int status = 0;
	int rc = xp_run_tool_answer(argv, env, 30.0, 1 << 20, &out, &len, &status, msg, sizeof msg);
	free(setting);
	free(nodes);
	free(why);
	if (rc < 0)
		return xp_errf(err, "slurm: %s (scontrol update)", msg);
	/* scontrol says nothing when it worked; its complaint otherwise, one line. */
	while (len && (out[len - 1] == '\n' || out[len - 1] == ' '))
		out[--len] = '\0';
	xp_mask_controls(out);
	*answer = out;
	return status;
}

char *xp_slurm_config_user(const char *text, size_t len)
{
	size_t pos = 0;
	const char *s;
	size_t l;
	while (pos < len) {
		xp_slurm_next_line(text, len, &pos, &s, &l);
		/* "SlurmUser               = slurm(64030)" */
		if (l < 10 || strncmp(s, "SlurmUser", 9) != 0 || (s[9] != ' ' && s[9] != '='))
			continue;
		const char *eq = memchr(s, '=', l);
		if (!eq)
			continue;
		const char *v = eq + 1, *end = s + l;
		while (v < end && *v == ' ')
			v++;
		const char *u = v;
		while (u < end && *u != '(' && *u != ' ')
			u++;
		if (u == v)
			return NULL;
		/* A user name, nothing else: a NUL byte made it "" and control bytes would reach
		 * the console in the refusal that quotes it (tests/fuzz/regress/slurm_config). */
		for (const char *c = v; c < u; c++)
			if (!isalnum((unsigned char)*c) && *c != '.' && *c != '_' && *c != '-' && *c != '$')
				return NULL;
		return xp_strndup(v, (size_t)(u - v));
	}
	return NULL;
}

int xp_slurm_may_update(const char *conf, char *why, size_t len, struct xp_err *err)
{
	uid_t uid = geteuid();
	if (uid == 0)
		return 1;
	char *setting;
	if (xp_slurm_conf_setting(conf, &setting, err) < 0)
		return -1;
	const char *argv[] = {"scontrol", "show", "config", NULL};
	const char *env[] = {setting, NULL};
	char *out = NULL, msg[512];
	size_t olen = 0;
	int rc = xp_run_tool_env(argv, env, 10.0, 4 << 20, &out, &olen, msg, sizeof msg);
	free(setting);
	if (rc < 0)
		return xp_errf(err, "slurm: %s (scontrol show config)", msg);
	char *su = xp_slurm_config_user(out, olen);
	free(out);
	if (!su)
		return xp_errf(err, "slurm: scontrol show config names no SlurmUser");
	struct passwd pw, *res = NULL;
	char buf[4096];
	const char *me = getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res ? pw.pw_name : NULL;
	int ok = me && strcmp(me, su) == 0;
	if (!ok)
		snprintf(why, len, "Slurm lets only root or its SlurmUser (%s) drain nodes, and this is %s", su,
			 me ? me : "an unnamed user");
	free(su);
	return ok;
}

int xp_k8s_node_cordon(struct xp_k8s_client *cl, const char *name, bool on, struct xp_err *err)
{
	if (!xp_node_act_name_ok(name))
		return xp_errf(err, "not a Kubernetes node name");
	char *path = xp_asprintf("/api/v1/nodes/%s", name);
	const char *body = on ? "{\"spec\":{\"unschedulable\":true}}" : "{\"spec\":{\"unschedulable\":false}}";
	long code;
	char *resp;
	int rc = xp_k8s_send(cl, "PATCH", path, "application/merge-patch+json", body, &code, &resp, err);
	free(path);
	if (rc < 0)
		return -1;
	char msg[256];
	xp_k8s_status_text(resp, msg, sizeof msg);
	free(resp);
	if (code == 200)
		return 0;
	if (code == 404)
		return xp_errf(err, "404 Not Found: no such node%s", msg);
	if (code == 403)
		return xp_errf(err, "403 Forbidden: this account may not patch nodes%s", msg);
	if (code == 401)
		return xp_errf(err, "401 Unauthorized: the server refused the credentials%s", msg);
	return xp_errf(err, "HTTP %ld%s", code, msg);
}

int xp_k8s_may_patch_nodes(struct xp_k8s_client *cl, char *why, size_t len, struct xp_err *err)
{
	const char *body = "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SelfSubjectAccessReview\","
			   "\"spec\":{\"resourceAttributes\":{\"verb\":\"patch\",\"resource\":\"nodes\"}}}";
	const char *path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
	long code;
	char *resp;
	if (xp_k8s_send(cl, "POST", path, "application/json", body, &code, &resp, err) < 0)
		return -1;
	if (code != 200 && code != 201) {
		char msg[256];
		xp_k8s_status_text(resp, msg, sizeof msg);
		free(resp);
		return xp_errf(err, "POST %s: HTTP %ld%s", path, code, msg);
	}
	json_error_t je;
	json_t *j = json_loads(resp, 0, &je);
	free(resp);
	json_t *st = json_object_get(j, "status");
	json_t *allowed = json_object_get(st, "allowed");
	if (!json_is_boolean(allowed)) {
		json_decref(j);
		return xp_errf(err, "POST %s: the answer has no status.allowed", path);
	}
	int ok = json_is_true(allowed);
	if (!ok) {
		const char *r = json_string_value(json_object_get(st, "reason"));
		snprintf(why, len, "Kubernetes says this account may not patch nodes%s%.200s", r && *r ? ": " : "",
			 r && *r ? r : "");
		xp_mask_controls(why);
	}
	json_decref(j);
	return ok;
}
