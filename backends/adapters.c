/* adapters.c: the adapter loader and the services adapters get from xpool. */
#include "adapters.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "model.h"
#include "run.h"

static const char *const state_names[] = {"active", "idle", "unavailable", "missing", "broken", "excluded"};

const char *xp_adapter_state_name(int s)
{
	return s >= 0 && s <= XP_AD_EXCLUDED ? state_names[s] : "unknown";
}

static int host_run(const char *const *argv, double timeout_s, size_t max_out, char **out, size_t *len,
		    char *err, size_t errlen)
{
	return xp_run_tool(argv, timeout_s, max_out, out, len, err, errlen);
}

static int host_replay(const struct xp_host *h, const char *name, size_t max, char **out, size_t *len,
		       char *err, size_t errlen)
{
	*out = NULL;
	*len = 0;
	if (!h->replay_dir || !name) {
		snprintf(err, errlen, "no replay directory");
		return -1;
	}
	/* A replay directory may come from anyone: its files are read without leaving it (no
	 * link followed, no '..', no absolute name; files.h). */
	struct xp_err e = {{0}};
	int r = xp_read_beneath(h->replay_dir, name, max, out, len, &e);
	if (r < 0)
		snprintf(err, errlen, "%s", e.msg);
	return r;
}

static void host_free(void *p)
{
	free(p);
}

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static bool excluded(const char *name)
{
	const char *env = getenv("XPOOL_ADAPTERS");
	if (!env)
		return false;
	char *copy = xp_strdup(env), *save = NULL;
	bool out = false;
	for (char *w = strtok_r(copy, ", \t", &save); w && !out; w = strtok_r(NULL, ", \t", &save))
		out = w[0] == '-' && strcmp(w + 1, name) == 0;
	free(copy);
	return out;
}

static void load_one(struct xp_adapters *a, struct xp_adapter_slot *s, char **dirs, size_t nd)
{
	if (excluded(s->name)) {
		s->state = XP_AD_EXCLUDED;
		snprintf(s->reason, sizeof s->reason, "excluded by XPOOL_ADAPTERS");
		return;
	}
	for (size_t i = 0; i < nd && !s->so_path; i++) {
		char *p = xp_asprintf("%s/xp_%s.so", dirs[i], s->name);
		if (is_file(p))
			s->so_path = p;
		else
			free(p);
	}
	if (!s->so_path) {
		s->state = XP_AD_MISSING;
		snprintf(s->reason, sizeof s->reason, "xp_%s.so not found on the adapter path", s->name);
		return;
	}
	s->manifest_path = xp_manifest_find(s->name, dirs, nd);
	if (!s->manifest_path) {
		s->state = XP_AD_BROKEN;
		snprintf(s->reason, sizeof s->reason, "no manifest %s.adapter next to %s", s->name, s->so_path);
		return;
	}
	struct xp_err err = {{0}};
	s->manifest = xp_manifest_load(s->manifest_path, &err);
	if (!s->manifest) {
		s->state = XP_AD_BROKEN;
		snprintf(s->reason, sizeof s->reason, "%s", err.msg);
		return;
	}
	if (strcmp(s->manifest->name, s->name) != 0) {
		s->state = XP_AD_BROKEN;
		snprintf(s->reason, sizeof s->reason, "%s: names adapter '%s', not '%s'", s->manifest_path,
			 s->manifest->name, s->name);
		return;
	}
	/* RTLD_LOCAL: adapters must not see each other's symbols (two may carry the same helpers). */
	s->dl = dlopen(s->so_path, RTLD_NOW | RTLD_LOCAL);
	if (!s->dl) {
		const char *e = dlerror();
		s->state = XP_AD_BROKEN;
		snprintf(s->reason, sizeof s->reason, "%s", e ? e : "dlopen failed");
		return;
	}
	char sym[64];
	snprintf(sym, sizeof sym, "xp_adapter_%s", s->name);
	s->ops = dlsym(s->dl, sym);
	if (!s->ops) {
		s->state = XP_AD_BROKEN;
		snprintf(s->reason, sizeof s->reason, "%s: no symbol %s", s->so_path, sym);
		return;
	}
	if (s->ops->abi != XP_ADAPTER_ABI) {
		s->state = XP_AD_BROKEN;
		snprintf(s->reason, sizeof s->reason, "%s: ABI version %d, this xpool needs %d", s->so_path,
			 s->ops->abi, XP_ADAPTER_ABI);
		s->ops = NULL;
		return;
	}
	if (!s->ops->probe || !s->ops->enumerate || !s->ops->close) {
		s->state = XP_AD_BROKEN;
		snprintf(s->reason, sizeof s->reason, "%s: probe, enumerate or close missing", s->so_path);
		s->ops = NULL;
		return;
	}
	char why[512] = "";
	int r = s->ops->probe(&a->host, &s->st, why, sizeof why);
	if (r == XP_PROBE_ACTIVE)
		s->state = XP_AD_ACTIVE;
	else if (r == XP_PROBE_IDLE) {
		s->state = XP_AD_IDLE;
		snprintf(s->reason, sizeof s->reason, "%s", why[0] ? why : "no matching hardware");
	} else {
		s->state = XP_AD_UNAVAILABLE;
		snprintf(s->reason, sizeof s->reason, "%s", why[0] ? why : "probe failed");
	}
}

void xp_adapters_open(struct xp_adapters *a, const char *replay_dir)
{
	memset(a, 0, sizeof *a);
	a->replay_dir = xp_strdup(replay_dir);
	a->host.abi = XP_ADAPTER_ABI;
	a->host.replay_dir = a->replay_dir;
	a->host.run = host_run;
	a->host.replay = host_replay;
	a->host.free = host_free;
	static const char *const names[] = XP_ADAPTER_NAMES;
	char **dirs;
	size_t nd = xp_adapter_dirs(&dirs);
	for (size_t i = 0; i < XP_ADAPTER_COUNT; i++) {
		struct xp_adapter_slot *s = &a->slots[a->n++];
		snprintf(s->name, sizeof s->name, "%s", names[i]);
		load_one(a, s, dirs, nd);
	}
	xp_strv_free(dirs, nd);
}

void xp_adapters_enumerate(struct xp_adapters *a)
{
	for (size_t i = 0; i < a->n; i++) {
		struct xp_adapter_slot *s = &a->slots[i];
		if (s->state != XP_AD_ACTIVE)
			continue;
		if (!s->raw)
			s->raw = xp_malloc(sizeof *s->raw);
		xp_raw_node_init(s->raw);
		if (s->ops->enumerate(s->st, s->raw) < 0) {
			const char *e = s->ops->last_error ? s->ops->last_error(s->st) : NULL;
			/* A vendor tool that fails takes its devices' details with it, not discovery. */
			s->state = XP_AD_UNAVAILABLE;
			snprintf(s->reason, sizeof s->reason, "enumerate: %s", e && *e ? e : "failed");
			continue;
		}
		if (s->ops->topology && s->ops->topology(s->st, s->raw) < 0) {
			const char *e = s->ops->last_error ? s->ops->last_error(s->st) : NULL;
			xp_raw_warn(s->raw, "%s: link matrix unavailable: %s", s->name, e && *e ? e : "failed");
		}
	}
}

void xp_adapters_close(struct xp_adapters *a)
{
	for (size_t i = 0; i < a->n; i++) {
		struct xp_adapter_slot *s = &a->slots[i];
		if (s->ops && s->st)
			s->ops->close(s->st);
		if (s->dl)
			dlclose(s->dl);
		free(s->raw);
		free(s->so_path);
		free(s->manifest_path);
		xp_manifest_free(s->manifest);
	}
	free(a->replay_dir);
	memset(a, 0, sizeof *a);
}
