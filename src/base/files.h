/* files.h: the files xpool writes and the directories it reads, safe on a machine shared with
 * other users: its own directories 0700 and owned by the user, files at an exact mode whatever
 * the umask, never written through a link another user planted, and a directory's files read
 * without leaving it. */
#ifndef XP_FILES_H
#define XP_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "xp.h"

/* The mode of a file xpool writes. */
enum xp_fmode {
	XP_FMODE_PRIVATE, /* 0600 whatever the umask: anything holding operational data */
	XP_FMODE_UMASK    /* 0666 less the umask: an export of nothing private, named by the user */
};

/* Makes dir and its missing parents (each made one exactly 0700, whatever the umask) when make
 * is true, then checks that dir is fit to hold xpool's own state: a directory owned by this user
 * that neither its group nor others may write in (a symbolic link to one only when the link is
 * the user's own). Missing and make false: 0, nothing checked. -1 with err naming the directory. */
int xp_private_dir(const char *dir, bool make, struct xp_err *err);

/* Makes dir and its missing parents (each made one 0700) when make is true, then checks the
 * directory a file the user named goes in: refused when another user may write in it (others,
 * or a group not the user's own) and it has no sticky bit, or when sticky is not enough (strict:
 * names fixed in advance, as sqlite's -wal and -journal, could be planted there before us).
 * -1 with err naming the directory. */
int xp_shared_dir_check(const char *dir, bool make, bool strict, struct xp_err *err);

/* The directory part of path ("." when it has none, "/" for a file in /); caller frees. */
char *xp_dir_of(const char *path);

/* A file being written: a temporary of a random name in the target's directory (mkstemp),
 * renamed over the target when complete, so a link planted at the target is replaced, never
 * followed, and no reader sees half a file. */
struct xp_afile {
	FILE *f;    /* write here */
	char *path; /* the target */
	char *tmp;  /* the temporary; NULL when the target is a pipe or a device written in place */
};

/* Starts writing path with the given mode; -1 with err naming the file. A FIFO, socket or
 * character device at path (/dev/stdout, a shell's >(...)), reached through no link of another
 * user's, is written in place instead: a rename would replace the device itself. */
int xp_afile_open(struct xp_afile *a, const char *path, enum xp_fmode mode, struct xp_err *err);
/* Flushes, syncs and renames the temporary over the target, then frees a; -1 with err (the
 * temporary removed, the target untouched). */
int xp_afile_commit(struct xp_afile *a, struct xp_err *err);
/* Drops what was written (the temporary removed) and frees a; the target is untouched. */
void xp_afile_abort(struct xp_afile *a);
/* The whole of data written to path through an xp_afile; -1 with err. */
int xp_write_atomic(const char *path, const void *data, size_t len, enum xp_fmode mode, struct xp_err *err);

/* Creates path as an empty file of mode 0600 (whatever the umask) when nothing is there,
 * never through a link: 1 made, 0 already there (a regular file, not a link), -1 with err.
 * For files another library opens by name afterwards (sqlite's database). */
int xp_private_file(const char *path, struct xp_err *err);

/* Reads the file name inside dir without leaving dir: name must be relative, without ".."
 * components, and no component may be a symbolic link; the file must be a regular file, not a
 * hard link to a file of another owner than dir's. 1 with *out (NUL-terminated, at most max
 * bytes, caller frees), 0 when there is no such file, -1 with err naming dir/name. */
int xp_read_beneath(const char *dir, const char *name, size_t max, char **out, size_t *len, struct xp_err *err);

#endif
