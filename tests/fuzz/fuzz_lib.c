/* fuzz_lib.c: helpers the harnesses share (fuzz.h). */
#include "fuzz.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *xp_fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

static char tmp_dir[PATH_MAX];
static char tmp_path[PATH_MAX];

void xp_fuzz_tmp_done(void)
{
	if (tmp_path[0])
		unlink(tmp_path);
	tmp_path[0] = '\0';
	if (tmp_dir[0])
		rmdir(tmp_dir);
	tmp_dir[0] = '\0';
}

const char *xp_fuzz_tmpfile(const uint8_t *data, size_t size, const char *name)
{
	if (!tmp_dir[0]) {
		const char *base = getenv("TMPDIR");
		snprintf(tmp_dir, sizeof tmp_dir, "%s/xpfuzz.XXXXXX", base && *base ? base : "/tmp");
		if (!mkdtemp(tmp_dir))
			abort();
		atexit(xp_fuzz_tmp_done);
	}
	if (tmp_path[0])
		unlink(tmp_path);
	if (snprintf(tmp_path, sizeof tmp_path, "%s/%s", tmp_dir, name ? name : "input") >= (int)sizeof tmp_path)
		abort(); /* gcc -Werror: a cut path is no path */
	int fd = open(tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	size_t off = 0;
	while (off < size) {
		ssize_t w = write(fd, data + off, size - off);
		if (w <= 0)
			abort();
		off += (size_t)w;
	}
	close(fd);
	return tmp_path;
}
