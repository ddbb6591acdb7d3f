/* bookmarks.c: named views in the user's config folder (bookmarks.h). */
#include "bookmarks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "words.h"

/* A bookmarks file is a few lines; a megabyte is a broken or hostile one. */
#define MAX_FILE (1024 * 1024)

char *xp_bookmarks_path(void)
{
	const char *cfg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	if (cfg && *cfg)
		return xp_asprintf("%s/xpool/bookmarks", cfg);
	if (home && *home)
		return xp_asprintf("%s/.config/xpool/bookmarks", home);
	return NULL;
}

bool xp_bookmark_name_ok(const char *name)
{
	if (!name || !*name || strlen(name) > 64)
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
		      *p == '_' || *p == '-'))
			return false;
	/* The command's own words: `bookmark list` must list, whatever is saved. */
	static const char *const words[] = {"save", "list", "ls", "rm"};
	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		if (strcmp(name, words[i]) == 0)
			return false;
	return name[0] != '-';
}

void xp_bookmarks_free(struct xp_bookmarks *b)
{
	for (size_t i = 0; i < b->n; i++) {
		free(b->v[i].name);
		free(b->v[i].view);
	}
	free(b->v);
	b->v = NULL;
	b->n = 0;
}

const char *xp_bookmarks_get(const struct xp_bookmarks *b, const char *name)
{
	for (size_t i = 0; i < b->n; i++)
		if (strcmp(b->v[i].name, name) == 0)
			return b->v[i].view;
	return NULL;
}

void xp_bookmarks_set(struct xp_bookmarks *b, const char *name, const char *view)
{
	for (size_t i = 0; i < b->n; i++)
		if (strcmp(b->v[i].name, name) == 0) {
			free(b->v[i].view);
			b->v[i].view = xp_strdup(view);
			return;
		}
	b->v = xp_realloc(b->v, (b->n + 1) * sizeof *b->v);
	b->v[b->n].name = xp_strdup(name);
	b->v[b->n].view = xp_strdup(view);
	b->n++;
}

bool xp_bookmarks_rm(struct xp_bookmarks *b, const char *name)
{
	for (size_t i = 0; i < b->n; i++)
		if (strcmp(b->v[i].name, name) == 0) {
			free(b->v[i].name);
			free(b->v[i].view);
			memmove(&b->v[i], &b->v[i + 1], (b->n - i - 1) * sizeof *b->v);
			b->n--;
			return true;
		}
	return false;
}

/* One line "NAME VIEW" (no newline): adds it, or says what is wrong with it. */
static int parse_line(struct xp_bookmarks *b, char *line, const char *path, size_t ln, struct xp_err *err)
{
	char *p = line + strspn(line, " \t");
	size_t end = strlen(p);
	while (end && (p[end - 1] == ' ' || p[end - 1] == '\t' || p[end - 1] == '\r'))
		p[--end] = '\0';
	if (!*p || *p == '#')
		return 0;
	size_t nl = strcspn(p, " \t");
	char *view = p + nl + strspn(p + nl, " \t");
	p[nl] = '\0';
	if (!xp_bookmark_name_ok(p))
		return xp_errf(err, "%s:%zu: '%s' is not a bookmark name (letters, digits, '.', '_', '-'; not save, list, ls, rm)",
			       path, ln, p);
	if (!*view)
		return xp_errf(err, "%s:%zu: bookmark %s has no view (a line is NAME VIEW, e.g. 'hot topology --sort temp-')",
			       path, ln, p);
	int argc = 0;
	char **argv = NULL;
	struct xp_err e = {{0}};
	if (xp_cmd_split(view, &argc, &argv, &e) < 0)
		return xp_errf(err, "%s:%zu: bookmark %s: %s", path, ln, p, e.msg);
	xp_cmd_split_free(argc, argv);
	if (xp_bookmarks_get(b, p))
		return xp_errf(err, "%s:%zu: bookmark %s is given twice", path, ln, p);
	xp_bookmarks_set(b, p, view);
	return 0;
}

int xp_bookmarks_load(const char *path, struct xp_bookmarks *b, struct xp_err *err)
{
	xp_bookmarks_free(b);
	struct stat st;
	if (stat(path, &st) < 0 && errno == ENOENT)
		return 0; /* nothing saved yet */
	size_t len = 0;
	struct xp_err e = {{0}};
	char *text = xp_read_file(path, MAX_FILE, &len, &e);
	if (!text)
		return xp_errf(err, "%s", e.msg);
	if (memchr(text, '\0', len)) {
		free(text);
		return xp_errf(err, "%s: not a text file (a NUL byte)", path);
	}
	size_t ln = 0;
	int rc = 0;
	for (char *line = text; line && rc == 0;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		ln++;
		rc = parse_line(b, line, path, ln, err);
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	if (rc < 0)
		xp_bookmarks_free(b);
	return rc;
}

int xp_bookmarks_save(const char *path, const struct xp_bookmarks *b, struct xp_err *err)
{
	/* The folder is the user's own (0700 where made, no one else may write in it), and the file
	 * a whole new one renamed over the old: never written through a link, never half written. */
	char *dir = xp_dir_of(path);
	int rc = xp_private_dir(dir, true, err);
	free(dir);
	struct xp_afile a;
	if (rc < 0 || xp_afile_open(&a, path, XP_FMODE_PRIVATE, err) < 0)
		return -1;
	fprintf(a.f, "# xpool bookmarks: NAME VIEW (written by `xpool bookmark save`)\n");
	for (size_t i = 0; i < b->n; i++)
		fprintf(a.f, "%s %s\n", b->v[i].name, b->v[i].view);
	return xp_afile_commit(&a, err);
}
