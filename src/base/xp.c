/* xp.c: error messages, allocation wrappers and whole-file reading. */
#include "xp.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int xp_errf(struct xp_err *err, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
	}
	return -1;
}

void xp_err_prefix(struct xp_err *err, const char *fmt, ...)
{
	if (!err)
		return;
	char pre[256], old[sizeof err->msg];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(pre, sizeof pre, fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof old);
	/* Built by hand: the result is truncated on purpose when the two do not fit. */
	size_t n = strlen(pre), cap = sizeof err->msg - 1;
	if (n > cap)
		n = cap;
	memcpy(err->msg, pre, n);
	size_t k = n;
	for (const char *s = ": "; *s && k < cap; s++)
		err->msg[k++] = *s;
	for (const char *s = old; *s && k < cap; s++)
		err->msg[k++] = *s;
	err->msg[k] = '\0';
}

int xp_where_errf(const struct xp_where *w, const char *fmt, ...)
{
	char msg[sizeof w->err->msg];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return xp_errf(w->err, "%s:%d: %s", w->file, w->line, msg);
}

int xp_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void oom(void)
{
	/* Nothing sensible can continue without memory; say so once and stop. */
	static const char m[] = "xpool: out of memory\n";
	if (write(2, m, sizeof m - 1) < 0) {
		/* nothing more to do */
	}
	abort();
}

void *xp_malloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xp_calloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *xp_realloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom();
	return q;
}

char *xp_strdup(const char *s)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		oom();
	return d;
}

char *xp_strndup(const char *s, size_t n)
{
	char *d = strndup(s, n);
	if (!d)
		oom();
	return d;
}

char *xp_asprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		oom();
	char *s = xp_malloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

void xp_grow(void *arr, size_t sz, size_t n, size_t *cap)
{
	void **a = arr;
	if (n < *cap)
		return;
	size_t c = *cap ? *cap : 4;
	while (c <= n)
		c *= 2;
	*a = xp_realloc(*a, c * sz);
	memset((char *)*a + *cap * sz, 0, (c - *cap) * sz);
	*cap = c;
}

int xp_open_input(const char *path, struct stat *st, struct xp_err *err)
{
	/* "-" is standard input, so snapshots can come from a pipe (`jq ... | xpool --inventory -`). */
	bool is_stdin = strcmp(path, "-") == 0;
	if (is_stdin && isatty(STDIN_FILENO)) {
		/* Reading "a file" from the keyboard would freeze the program (and the console). */
		xp_errf(err, "<stdin>: is a terminal; pipe the file in, or name it");
		return -1;
	}
	/* O_NONBLOCK for the open alone: a FIFO nobody writes to must not hang us (it then
	 * reads as empty); reads block as usual once it is open. */
	int fd = is_stdin ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	const char *shown = is_stdin ? "<stdin>" : path;
	if (fd < 0) {
		xp_errf(err, "%s: %s", shown, strerror(errno));
		return -1;
	}
	if (!is_stdin) {
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0)
			fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	}
	if (fstat(fd, st) < 0 || !(S_ISREG(st->st_mode) || S_ISFIFO(st->st_mode) || S_ISCHR(st->st_mode)) ||
	    (S_ISCHR(st->st_mode) && isatty(fd))) {
		xp_errf(err, "%s: %s", shown,
			S_ISDIR(st->st_mode) ? "is a directory" : isatty(fd) ? "is a terminal" : "not a regular file or a pipe");
		close(fd);
		return -1;
	}
	return fd;
}

char *xp_read_file(const char *path, size_t max, size_t *len, struct xp_err *err)
{
	struct stat st;
	int fd = xp_open_input(path, &st, err);
	const char *shown = strcmp(path, "-") == 0 ? "<stdin>" : path;
	if (fd < 0)
		return NULL;
	if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size > max) {
		xp_errf(err, "%s: file is %lld bytes, more than the %zu allowed", shown,
			(long long)st.st_size, max);
		close(fd);
		return NULL;
	}
	/* Pipes have no size: read in chunks and stop at max. */
	size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536, n = 0;
	char *buf = xp_malloc(cap);
	for (;;) {
		if (n + 1 >= cap) {
			if (n >= max) {
				xp_errf(err, "%s: more than the %zu bytes allowed", shown, max);
				free(buf);
				close(fd);
				return NULL;
			}
			cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			buf = xp_realloc(buf, cap);
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			xp_errf(err, "%s: %s", shown, strerror(errno));
			free(buf);
			close(fd);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* Strict on purpose (no overlongs, surrogates or values past U+10FFFF): every text that
 * reaches a terminal or a store passes through here. */
size_t xp_utf8_len(const unsigned char *s, size_t left)
{
	unsigned c = s[0], cp, min;
	size_t len;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2, cp = c & 0x1f, min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3, cp = c & 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4, cp = c & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len > left)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

