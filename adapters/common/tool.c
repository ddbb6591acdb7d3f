/* tool.c: finding a vendor tool's executable without a shell (compiled into each adapter). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xp_adapter.h"

/* Searched when PATH is unset or empty; Huawei's driver package installs npu-smi in
 * /usr/local/sbin, which a shorter default would miss. */
#define XP_TOOL_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* Whether dir (n bytes) holds an executable regular file prog; its path is left in out. */
static bool try_dir(const char *dir, size_t n, const char *prog, char *out, size_t size)
{
	/* Empty or relative entries name the current directory, which is never where a vendor
	 * tool should come from: unlike execvp, never run whatever sits where xpool started. */
	if (n == 0 || dir[0] != '/')
		return false;
	int w = snprintf(out, size, "%.*s/%s", (int)n, dir, prog);
	struct stat sb;
	return w > 0 && (size_t)w < size && stat(out, &sb) == 0 && S_ISREG(sb.st_mode) &&
	       access(out, X_OK) == 0;
}

bool xp_tool_find(const char *prog, const char *const *extra_dirs, char *out, size_t size)
{
	if (!size)
		return false;
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = XP_TOOL_DEFAULT_PATH;
	for (const char *p = path;;) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (try_dir(p, n, prog, out, size))
			return true;
		if (!end)
			break;
		p = end + 1;
	}
	for (size_t i = 0; extra_dirs && extra_dirs[i]; i++)
		if (try_dir(extra_dirs[i], strlen(extra_dirs[i]), prog, out, size))
			return true;
	out[0] = '\0';
	return false;
}
