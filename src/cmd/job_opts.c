/* job_opts.c: the job flags of `place` and `job submit` (job_opts.h). */
#include "job_opts.h"

#include <stdlib.h>
#include <string.h>

#include "validate.h"

const char *xp_job_numa_value(int i)
{
	return i >= 0 && i < XP_NUMA_POLICY_COUNT ? xp_numa_policy_name(i) : NULL;
}

const char *xp_job_network_value(int i)
{
	return i >= 0 && i < XP_NET_COUNT ? xp_network_name(i) : NULL;
}

/* The flags' names, in the order of XP_JOB_OPTS. */
static const struct xp_opt job_opts[] = {XP_JOB_OPTS, {NULL, 0, NULL, NULL}};

struct xp_job *xp_job_opts_read(struct xp_ctx *ctx, const struct xp_args *a, const char *words,
				const char *also_with_file, int *code)
{
	struct xp_err err = {{0}};
	struct xp_job *job = NULL;
	const char *file = xp_args_get(a, "file");
	if (file) {
		for (int i = 0; job_opts[i].name; i++) {
			char key[40];
			snprintf(key, sizeof key, " %s ", job_opts[i].name);
			if (xp_args_has(a, job_opts[i].name) && !(also_with_file && strstr(also_with_file, key))) {
				xp_ctx_error(ctx, "%s: -f and --%s do not go together", words, job_opts[i].name);
				*code = XP_EXIT_USAGE;
				return NULL;
			}
		}
		size_t len;
		char *text = xp_read_file(file, XP_JOB_MAX_BYTES, &len, &err);
		if (!text) {
			xp_ctx_error(ctx, "%s: %s", words, err.msg);
			*code = XP_EXIT_ERROR;
			return NULL;
		}
		job = xp_job_parse(text, len, file, &err);
		free(text);
		if (!job) {
			xp_ctx_error(ctx, "%s: %s", words, err.msg);
			*code = XP_EXIT_USAGE;
		}
		return job;
	}
	struct xp_job_flags fl = {0};
	fl.name = xp_args_get(a, "name");
	fl.kind = xp_args_get(a, "kind");
	fl.queue = xp_args_get(a, "queue");
	fl.tenant = xp_args_get(a, "tenant");
	fl.priority = xp_args_get(a, "priority");
	fl.replicas = xp_args_get(a, "replicas");
	fl.gang_min = xp_args_get(a, "gang-min");
	fl.devices = xp_args_get(a, "devices");
	fl.vendor = xp_args_get(a, "vendor");
	fl.model = xp_args_get(a, "model");
	fl.memory = xp_args_get(a, "memory");
	fl.ecu = xp_args_get(a, "ecu");
	fl.slice = xp_args_get(a, "slice");
	fl.share = xp_args_get(a, "share");
	fl.cpus = xp_args_get(a, "cpus");
	fl.host_memory = xp_args_get(a, "host-memory");
	fl.labels = xp_args_get(a, "label");
	fl.homogeneous = xp_args_has(a, "homogeneous") ? "" : NULL;
	fl.same_group = xp_args_has(a, "same-group") ? "" : NULL;
	fl.numa = xp_args_get(a, "numa");
	fl.network = xp_args_get(a, "network");
	fl.validated = xp_args_get(a, "validated");
	if (!(job = xp_job_from_flags(&fl, &err))) {
		xp_ctx_error(ctx, "%s: %s", words, err.msg);
		*code = XP_EXIT_USAGE;
	}
	return job;
}

int xp_job_validated_layer(void *store, const struct xp_device *d, const char *kase)
{
	struct xp_store *s = store;
	int h = -1;
	if (s && d->vendor && d->model && d->driver) {
		char *id = xp_env_id(d->vendor, d->model, d->driver, d->firmware, d->runtime);
		h = xp_validate_highest(s, id, kase);
		free(id);
	}
	return h < XP_LAYER_DISCOVERED ? XP_LAYER_DISCOVERED : h;
}
