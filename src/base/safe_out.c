/* safe_out.c: a stdio stream that keeps terminal controls out of what it passes on.
 *
 * The command-line output is the one place every name, reason and message of the text
 * output goes through, whichever source it came from (vendor tools, agents, engines, files,
 * the store) and whichever command printed it. Cleaning there, besides where each source is
 * read, means a field some reader forgot, a row an older version stored, or a new command's
 * fprintf can never steer the operator's terminal. */
#include "safe_out.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "xp.h"

/* Bytes looked at in one go: a character a piece cuts waits in held for the next. */
#define PIECE 4096

struct safe_out {
	FILE *under;
	unsigned char held[4]; /* the start of a character the last piece cut short */
	size_t n_held;
};

/* How many bytes the character that lead starts has (2-4), 1 for anything else. */
static size_t lead_len(unsigned char lead)
{
	return lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 1;
}

/* True when the m bytes at s (m < their character's length) could still become one
 * character: the rest may come with the next write. */
static bool cut_short(const unsigned char *s, size_t m)
{
	size_t k = lead_len(s[0]);
	if (k == 1 || m >= k)
		return false;
	for (size_t j = 1; j < m; j++)
		if ((s[j] & 0xc0) != 0x80)
			return false;
	return true;
}

/* Masks the m bytes of w (NUL-terminated after them; NULs inside are bytes of the data)
 * into out, keeping a character cut at the end in s->held; returns the bytes put in out. */
static size_t mask_piece(struct safe_out *s, const unsigned char *w, size_t m, char *out)
{
	size_t i = 0, o = 0;
	while (i < m) {
		if (w[i] == '\n' || w[i] == '\t') {
			out[o++] = (char)w[i++];
			continue;
		}
		if (cut_short(w + i, m - i)) {
			s->n_held = m - i;
			memcpy(s->held, w + i, s->n_held);
			break;
		}
		/* A NUL inside the data is a control like the others. */
		size_t b = w[i] ? xp_unsafe_len((const char *)w + i) : 1;
		if (b) {
			out[o++] = '?';
			i += b;
			continue;
		}
		for (size_t n = xp_utf8_len(w + i, m - i); n--;)
			out[o++] = (char)w[i++];
	}
	return o;
}

static ssize_t safe_write(void *cookie, const char *buf, size_t len)
{
	struct safe_out *s = cookie;
	unsigned char w[PIECE + 8];
	char out[PIECE + 8];
	size_t done = 0;
	while (done < len) {
		size_t m = s->n_held;
		memcpy(w, s->held, m);
		s->n_held = 0;
		size_t take = len - done < PIECE ? len - done : PIECE;
		memcpy(w + m, buf + done, take);
		m += take;
		w[m] = '\0';
		size_t o = mask_piece(s, w, m, out);
		if (o && fwrite(out, 1, o, s->under) != o)
			return 0; /* stdio marks the stream failed; errno says why */
		done += take;
	}
	/* Each write reaches the file at once, in order with what other streams and child
	 * processes write to it. */
	if (fflush(s->under) != 0)
		return 0;
	return (ssize_t)len;
}

static int safe_close(void *cookie)
{
	struct safe_out *s = cookie;
	int rc = 0;
	/* A character still cut short at the end never came whole. */
	if (s->n_held && fputc('?', s->under) == EOF)
		rc = EOF;
	if (fflush(s->under) != 0)
		rc = EOF;
	free(s);
	return rc;
}

FILE *xp_safe_stream(FILE *under, int buffering)
{
	struct safe_out *s = xp_calloc(1, sizeof *s);
	s->under = under;
	FILE *f = fopencookie(s, "w", (cookie_io_functions_t){.write = safe_write, .close = safe_close});
	if (!f) {
		free(s);
		return NULL;
	}
	setvbuf(f, NULL, buffering, buffering == _IONBF ? 0 : BUFSIZ);
	return f;
}
