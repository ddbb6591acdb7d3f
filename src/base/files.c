/* files.c: private directories, exact file modes, writes that never follow a planted link,
 * and reads confined to a directory (see files.h). */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 0666 less the process's umask (read without changing it for good: umask has no getter). */
static mode_t umask_mode(void)
{
	mode_t m = umask(077);
	umask(m);
	return 0666 & ~m;
}

/* Makes each missing directory of dir (dir itself included), exactly 0700: mkdir's mode passes
 * through the umask, so it is set again, on the directory itself and never through a link. */
static int make_dirs(const char *dir, struct xp_err *err)
{
	if (!*dir)
		return xp_errf(err, "an empty directory name");
	char *copy = xp_strdup(dir);
	int rc = 0;
	for (char *p = copy + 1; rc == 0; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(copy, 0700) == 0) {
			if (fchmodat(AT_FDCWD, copy, 0700, AT_SYMLINK_NOFOLLOW) < 0)
				rc = xp_errf(err, "%s: setting mode 0700: %s", copy, strerror(errno));
		} else if (errno != EEXIST) {
			rc = xp_errf(err, "%s: %s", copy, strerror(errno));
		}
		*p = c;
		if (!c)
			break;
	}
	free(copy);
	return rc;
}

/* True when a user other than this one may add or replace names in the directory: others may
 * write, or a group other than the user's own, or it belongs to someone else (root aside:
 * /tmp is root's). */
static bool others_may_write(const struct stat *st)
{
	if (st->st_mode & S_IWOTH)
		return true;
	if ((st->st_mode & S_IWGRP) && st->st_gid != getegid())
		return true;
	return st->st_uid != geteuid() && st->st_uid != 0;
}

int xp_private_dir(const char *dir, bool make, struct xp_err *err)
{
	struct stat lst, st;
	if (make && make_dirs(dir, err) < 0)
		return -1;
	if (lstat(dir, &lst) < 0) {
		if (errno == ENOENT && !make)
			return 0;
		return xp_errf(err, "%s: %s", dir, strerror(errno));
	}
	/* A link the user made (state kept on another disk) is fine; one of another user's
	 * making points wherever that user likes. */
	if (S_ISLNK(lst.st_mode) && lst.st_uid != geteuid())
		return xp_errf(err, "%s: a symbolic link owned by uid %u, not by you: xpool keeps its files only"
			       " in a directory of your own", dir, (unsigned)lst.st_uid);
	if (stat(dir, &st) < 0)
		return xp_errf(err, "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return xp_errf(err, "%s: not a directory", dir);
	if (st.st_uid != geteuid())
		return xp_errf(err, "%s: owned by uid %u, not by you: xpool keeps its files only in a directory"
			       " of your own", dir, (unsigned)st.st_uid);
	/* Even with the sticky bit, another user could make the names xpool is about to use
	 * (a database's -wal) before it does: its own directory is writable by the user alone,
	 * or by the user's own group too (a per-user group, Debian's default with umask 002). */
	if (others_may_write(&st))
		return xp_errf(err, "%s: other users may write in it (mode %04o), so they could plant files"
			       " xpool then writes through: chmod go-w it", dir, (unsigned)(st.st_mode & 07777));
	return 0;
}

int xp_shared_dir_check(const char *dir, bool make, bool strict, struct xp_err *err)
{
	if (make && make_dirs(dir, err) < 0)
		return -1;
	struct stat st;
	if (stat(dir, &st) < 0)
		return xp_errf(err, "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return xp_errf(err, "%s: not a directory", dir);
	if (!others_may_write(&st))
		return 0;
	if (strict)
		return xp_errf(err, "%s: other users may write in this directory (mode %04o, owner uid %u), so"
			       " they could plant the files sqlite makes beside a database (-wal, -shm, -journal):"
			       " keep the database in a directory only you can write", dir,
			       (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
	/* Sticky (/tmp): others cannot replace what xpool renames into place there. */
	if (st.st_mode & S_ISVTX)
		return 0;
	return xp_errf(err, "%s: other users may write in this directory (mode %04o, owner uid %u) and it has"
		       " no sticky bit, so they could replace what xpool writes there: choose a directory of"
		       " your own", dir, (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
}

char *xp_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return xp_strdup(".");
	if (slash == path)
		return xp_strdup("/");
	return xp_strndup(path, (size_t)(slash - path));
}

/* True when path names a FIFO, a socket or a character device (/dev/stdout, /dev/null, a
 * shell's >(...) pipe) reached without a link of another user's making: written in place, as
 * the user asked, since renaming a file over it would replace the device or pipe itself. */
static bool write_in_place(const char *path)
{
	struct stat lst, st;
	if (lstat(path, &lst) < 0 || stat(path, &st) < 0)
		return false;
	if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISSOCK(st.st_mode))
		return false;
	/* A link planted in /tmp by another user must not steer a write into a device; the
	 * system's own (/dev/stdout is root's) and the user's own are followed. */
	return !S_ISLNK(lst.st_mode) || lst.st_uid == geteuid() || lst.st_uid == 0;
}

int xp_afile_open(struct xp_afile *a, const char *path, enum xp_fmode mode, struct xp_err *err)
{
	memset(a, 0, sizeof *a);
	if (write_in_place(path)) {
		int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		if (fd < 0 || !(a->f = fdopen(fd, "w"))) {
			xp_errf(err, "%s: %s", path, strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		a->path = xp_strdup(path);
		return 0;
	}
	/* A temporary beside the target (rename does not cross file systems), named at random:
	 * a name known in advance is a name another user can plant a link at. */
	a->tmp = xp_asprintf("%s.XXXXXX", path);
	int fd = mkostemp(a->tmp, O_CLOEXEC);
	if (fd < 0) {
		xp_errf(err, "%s: %s", path, strerror(errno));
		free(a->tmp);
		a->tmp = NULL;
		return -1;
	}
	mode_t m = mode == XP_FMODE_PRIVATE ? 0600 : umask_mode();
	if (fchmod(fd, m) < 0 || !(a->f = fdopen(fd, "w"))) {
		xp_errf(err, "%s: %s", a->tmp, strerror(errno));
		close(fd);
		unlink(a->tmp);
		free(a->tmp);
		a->tmp = NULL;
		return -1;
	}
	a->path = xp_strdup(path);
	return 0;
}

void xp_afile_abort(struct xp_afile *a)
{
	if (a->f)
		fclose(a->f);
	if (a->tmp)
		unlink(a->tmp);
	free(a->tmp);
	free(a->path);
	memset(a, 0, sizeof *a);
}

int xp_afile_commit(struct xp_afile *a, struct xp_err *err)
{
	int e = 0;
	/* A pipe or a device written in place has nothing to sync or rename. */
	if (fflush(a->f) != 0 || ferror(a->f) || (a->tmp && fsync(fileno(a->f)) < 0))
		e = errno ? errno : EIO;
	if (fclose(a->f) != 0 && !e)
		e = errno;
	a->f = NULL;
	/* rename replaces the name itself: a link planted at the target is gone, not followed. */
	if (!e && a->tmp && rename(a->tmp, a->path) < 0)
		e = errno;
	if (e) {
		xp_errf(err, "%s: %s", a->path, strerror(e));
		xp_afile_abort(a);
		return -1;
	}
	free(a->tmp);
	free(a->path);
	memset(a, 0, sizeof *a);
	return 0;
}

int xp_write_atomic(const char *path, const void *data, size_t len, enum xp_fmode mode, struct xp_err *err)
{
	struct xp_afile a;
	if (xp_afile_open(&a, path, mode, err) < 0)
		return -1;
	if (len && fwrite(data, 1, len, a.f) != len) {
		xp_errf(err, "%s: %s", path, strerror(errno));
		xp_afile_abort(&a);
		return -1;
	}
	return xp_afile_commit(&a, err);
}

int xp_private_file(const char *path, struct xp_err *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		/* The umask may have taken bits off 0600, never added any; set it exactly anyway. */
		int rc = fchmod(fd, 0600) < 0 ? xp_errf(err, "%s: %s", path, strerror(errno)) : 1;
		close(fd);
		return rc;
	}
	if (errno != EEXIST)
		return xp_errf(err, "%s: %s", path, strerror(errno));
	struct stat st;
	if (lstat(path, &st) < 0)
		return xp_errf(err, "%s: %s", path, strerror(errno));
	if (S_ISLNK(st.st_mode))
		return xp_errf(err, "%s: a symbolic link: xpool does not write through links", path);
	if (!S_ISREG(st.st_mode))
		return xp_errf(err, "%s: not a regular file", path);
	return 0;
}

/* Opens the last component of name under dfd (a directory of dir) for reading: regular files
 * only, and O_NONBLOCK so that a FIFO planted there cannot hang the open. */
static int open_leaf(int dfd, const char *dir, const char *name, const char *leaf, struct stat *st,
		     struct xp_err *err)
{
	int fd = openat(dfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return -2;
		if (errno == ELOOP)
			return xp_errf(err, "%s/%s: a symbolic link: only the directory's own files are read,"
				       " never through a link", dir, name);
		return xp_errf(err, "%s/%s: %s", dir, name, strerror(errno));
	}
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return xp_errf(err, "%s/%s: not a regular file", dir, name);
	}
	return fd;
}

int xp_read_beneath(const char *dir, const char *name, size_t max, char **out, size_t *len, struct xp_err *err)
{
	*out = NULL;
	*len = 0;
	if (!*name || name[0] == '/')
		return xp_errf(err, "%s: '%s' is not a name inside the directory", dir, name);
	/* Component by component with O_NOFOLLOW, rather than openat2's RESOLVE_BENEATH: the same
	 * code on every kernel and libc, and no link is followed at all, even one that stays inside. */
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return xp_errf(err, "%s: %s", dir, strerror(errno));
	struct stat dst;
	if (fstat(dfd, &dst) < 0) {
		close(dfd);
		return xp_errf(err, "%s: %s", dir, strerror(errno));
	}
	char *copy = xp_strdup(name), *save = NULL;
	int fd = -1;
	struct stat st;
	char *part = strtok_r(copy, "/", &save);
	while (part) {
		char *next = strtok_r(NULL, "/", &save);
		if (strcmp(part, "..") == 0 || strcmp(part, ".") == 0) {
			fd = xp_errf(err, "%s/%s: a '%s' component: only names inside the directory are read",
				     dir, name, part);
			break;
		}
		if (!next) {
			fd = open_leaf(dfd, dir, name, part, &st, err);
			break;
		}
		int sub = openat(dfd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			int e = errno;
			fd = e == ENOENT ? -2
			     : xp_errf(err, "%s/%s: %s", dir, name,
				       e == ELOOP || e == ENOTDIR ? "a component is a symbolic link or not a directory"
								  : strerror(e));
			break;
		}
		close(dfd);
		dfd = sub;
		part = next;
	}
	free(copy);
	close(dfd);
	if (fd == -2)
		return 0;
	if (fd < 0)
		return -1;
	/* With fs.protected_hardlinks off, another user can link a file of yours into a directory
	 * of theirs: a file shared by links and not of the directory owner's is refused. */
	if (st.st_nlink > 1 && st.st_uid != dst.st_uid) {
		close(fd);
		return xp_errf(err, "%s/%s: a hard link to a file of uid %u in a directory of uid %u: only the"
			       " directory's own files are read", dir, name, (unsigned)st.st_uid,
			       (unsigned)dst.st_uid);
	}
	if ((unsigned long long)st.st_size > max) {
		close(fd);
		return xp_errf(err, "%s/%s: file is %lld bytes, more than the %zu allowed", dir, name,
			       (long long)st.st_size, max);
	}
	/* Room for the NUL and one byte more: a file of exactly max bytes is read to its end,
	 * one that grew past max since the fstat is seen to. */
	size_t cap = (size_t)st.st_size + 2, n = 0;
	char *buf = xp_malloc(cap);
	for (;;) {
		if (n > max) {
			free(buf);
			close(fd);
			return xp_errf(err, "%s/%s: more than the %zu bytes allowed", dir, name, max);
		}
		if (n + 1 >= cap) {
			cap = cap * 2 > max + 2 ? max + 2 : cap * 2;
			buf = xp_realloc(buf, cap);
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			close(fd);
			return xp_errf(err, "%s/%s: %s", dir, name, strerror(e));
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 1;
}
