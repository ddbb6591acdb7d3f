/* agent_token.c: reading and comparing bearer tokens. */
#include "agent_token.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sha256.h"

char *xp_secret_read(const char *path, const char *what, size_t max, bool follow, size_t *len_out,
		     struct xp_err *err)
{
	/* O_NOFOLLOW (unless follow): a secret file swapped for a link to something else is
	 * refused, not read. O_NONBLOCK: one swapped for a FIFO must be refused too, not hang the
	 * open (a regular file, the only kind read, reads the same with it). */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW));
	if (fd < 0) {
		if (errno == ELOOP && !follow)
			xp_errf(err, "%s %s: a symbolic link: give the file it points to", what, path);
		else
			xp_errf(err, "%s %s: %s", what, path, strerror(errno));
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		xp_errf(err, "%s %s: not a regular file", what, path);
		return NULL;
	}
	/* A secret everyone on the node can read is no secret, and saying so at startup is better
	 * than serving with it (ssh is stricter with private keys, refusing group access too;
	 * a group of operators sharing a token file is a common setup here). */
	if (st.st_mode & 007) {
		close(fd);
		xp_errf(err, "%s %s: others may read it (mode %03o); chmod o-rwx it", what, path,
			(unsigned)(st.st_mode & 0777));
		return NULL;
	}
	char *buf = xp_malloc(max + 2);
	size_t len = 0;
	for (;;) {
		ssize_t r = read(fd, buf + len, max + 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			close(fd);
			explicit_bzero(buf, len);
			free(buf);
			xp_errf(err, "%s %s: %s", what, path, strerror(e));
			return NULL;
		}
		if (r == 0 || (len += (size_t)r) > max)
			break;
	}
	close(fd);
	if (len > max) {
		explicit_bzero(buf, len);
		free(buf);
		xp_errf(err, "%s %s: longer than %zu bytes", what, path, max);
		return NULL;
	}
	buf[len] = '\0';
	*len_out = len;
	return buf;
}

char *xp_token_read(const char *path, struct xp_err *err)
{
	size_t len;
	char *buf = xp_secret_read(path, "token file", XP_TOKEN_MAX, false, &len, err);
	if (!buf)
		return NULL;
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' ' || buf[len - 1] == '\t'))
		len--;
	buf[len] = '\0';
	if (!len) {
		free(buf);
		xp_errf(err, "token file %s: empty", path);
		return NULL;
	}
	/* The token goes into an HTTP header: a newline or control byte there would split it. */
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (c < 0x21 || c == 0x7f) {
			free(buf);
			xp_errf(err, "token file %s: the token holds a space or control byte at offset %zu", path, i);
			return NULL;
		}
	}
	return buf;
}

bool xp_token_equal(const char *expected, const char *given)
{
	if (!expected || !given)
		return false;
	/* Comparing digests rather than the strings keeps the length of the expected token
	 * out of the timing too: both sides always cost one hash and a 32-byte loop. */
	unsigned char a[32], b[32];
	struct xp_sha256 h;
	xp_sha256_init(&h);
	xp_sha256_update(&h, expected, strlen(expected));
	xp_sha256_final(&h, a);
	xp_sha256_init(&h);
	xp_sha256_update(&h, given, strlen(given));
	xp_sha256_final(&h, b);
	unsigned char diff = 0;
	for (size_t i = 0; i < sizeof a; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return diff == 0;
}
