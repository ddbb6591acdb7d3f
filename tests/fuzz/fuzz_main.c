/* fuzz_main.c: runs a harness without libFuzzer, on the files (or every file of the
 * directories) named on the command line, so that `make check` replays the regression inputs
 * and seeds with the normal compiler and sanitizers. Exit 0 when every input ran; a crash is a
 * crash (the sanitizer reports it and the process dies). */
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Largest input replayed; libFuzzer's own -max_len in `make fuzz` is far smaller. */
#define FUZZ_MAIN_MAX (64u << 20)

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	size_t n;
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			if (cap >= FUZZ_MAIN_MAX)
				break;
			uint8_t *b = realloc(buf, cap * 2);
			if (!b) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = b;
			cap *= 2;
		}
	}
	fclose(f);
	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", path);
		return -1;
	}
	/* A copy of exactly len bytes, so that ASan sees a read past the input's end. */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

static int run_path(const char *path, int *count)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return run_file(path);
	}
	struct dirent **list;
	int n = scandir(path, &list, NULL, alphasort);
	if (n < 0) {
		perror(path);
		return -1;
	}
	int rc = 0;
	for (int i = 0; i < n; i++) {
		if (list[i]->d_name[0] != '.' && rc == 0) {
			char sub[4096];
			snprintf(sub, sizeof sub, "%s/%s", path, list[i]->d_name);
			rc = run_path(sub, count);
		}
		free(list[i]);
	}
	free(list);
	return rc;
}

int main(int argc, char **argv)
{
	int count = 0;
	for (int i = 1; i < argc; i++)
		if (run_path(argv[i], &count) < 0)
			return 1;
	printf("%s: %d inputs\n", argc > 0 ? argv[0] : "fuzz", count);
	return 0;
}
