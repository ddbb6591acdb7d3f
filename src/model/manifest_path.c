/* manifest_path.c: where the vendor manifests are found, and which adapters the build has.
 * Placement, sim gen and the adapter loader all read manifests; finding them belongs with the
 * manifest, not with the loader, so that placement needs no backend to know a vendor. */
#include "manifest_path.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"

#ifndef XP_LIBDIR
#define XP_LIBDIR "/usr/local/lib/xpool"
#endif

/* Directory of the running program, so a build tree finds its own adapters. */
static char *exe_dir(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	char *slash = strrchr(buf, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	return xp_strdup(buf);
}

size_t xp_adapter_dirs(char ***dirs)
{
	*dirs = NULL;
	size_t n = 0;
	const char *env = getenv("XPOOL_ADAPTER_PATH");
	if (env && *env) {
		char *copy = xp_strdup(env), *save = NULL;
		for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save))
			xp_strv_add(dirs, &n, d);
		free(copy);
	}
	/* A site (or a test) may want its own adapters and nothing else. */
	const char *only = getenv("XPOOL_ADAPTER_PATH_ONLY");
	if (only && strcmp(only, "1") == 0 && n)
		return n;
	char *exe = exe_dir();
	if (exe) {
		/* ./xpool in the source tree, build/<kind>/xpool, build/<kind>/tests/runner. */
		static const char *const rel[] = {"build/rel/adapters", "adapters", "../adapters"};
		for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
			char *d = xp_asprintf("%s/%s", exe, rel[i]);
			xp_strv_add(dirs, &n, d);
			free(d);
		}
		free(exe);
	}
	xp_strv_add(dirs, &n, XP_LIBDIR "/adapters");
	return n;
}

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

char *xp_manifest_find(const char *name, char *const *dirs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		/* Beside the .so (installed), or in the source tree's adapters/NAME/ seen from
		 * build/<kind>/adapters or from the source tree itself. */
		char *cands[4] = {
			xp_asprintf("%s/%s.adapter", dirs[i], name),
			xp_asprintf("%s/%s/%s.adapter", dirs[i], name, name),
			xp_asprintf("%s/../../adapters/%s/%s.adapter", dirs[i], name, name),
			xp_asprintf("%s/../../../adapters/%s/%s.adapter", dirs[i], name, name),
		};
		char *found = NULL;
		for (size_t k = 0; k < 4; k++) {
			if (!found && is_file(cands[k]))
				found = cands[k];
			else
				free(cands[k]);
		}
		if (found)
			return found;
	}
	return NULL;
}

struct xp_manifest *xp_adapter_manifest_load(const char *name, struct xp_err *err)
{
	char **dirs;
	size_t nd = xp_adapter_dirs(&dirs);
	char *found = xp_manifest_find(name, dirs, nd);
	if (!found) {
		char path[768];
		size_t off = 0;
		path[0] = '\0';
		for (size_t i = 0; i < nd && off < sizeof path; i++)
			off += (size_t)snprintf(path + off, sizeof path - off, "%s%s", i ? ":" : "", dirs[i]);
		xp_strv_free(dirs, nd);
		return xp_errf(err, "no manifest %s.adapter on the adapter path %s (set XPOOL_ADAPTER_PATH)",
			       name, path),
		       NULL;
	}
	xp_strv_free(dirs, nd);
	struct xp_manifest *m = xp_manifest_load(found, err);
	free(found);
	return m;
}
