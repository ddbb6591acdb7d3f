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
#include <stdint.h>
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

/* Printable ASCII, newline and tab: bytes that pass as they are. */
static inline bool fast(unsigned char c)
{
	return (unsigned char)(c - 0x20) < 0x5f || c == '\n' || c == '\t';
}

/* 0x80 in each byte of x that holds a byte to look at (below 0x20 but newline and tab,
 * 0x7f and above), 0 in the others: exact per byte, no carry crosses bytes. */
static inline uint64_t word_stops(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = ones * 0x80, low7 = ones * 0x7f;
	uint64_t l = x & low7;
	uint64_t ge20 = (l + ones * (0x80 - 0x20)) | x;   /* high bit: the byte is 0x20 or more */
	uint64_t nl = l ^ (ones * '\n'), tab = l ^ (ones * '\t');
	uint64_t not_nl = ((nl & low7) + low7) | nl;       /* high bit: the low seven bits are not '\n' */
	uint64_t not_tab = ((tab & low7) + low7) | tab;
	uint64_t ctrl = ~ge20 & not_nl & not_tab;         /* a C0 control other than newline and tab */
	uint64_t high = (l + ones) | x;                     /* 0x7f, or the high bit set */
	return (ctrl | high) & highs;
}

/* How many of the n bytes at p pass as they are, from the start: nearly all output is
 * printable ASCII, looked at eight bytes in one go. */
static size_t pass_run(const unsigned char *p, size_t n)
{
	size_t i = 0;
	while (i + 8 <= n) {
		uint64_t x;
		memcpy(&x, p + i, 8);
		if (word_stops(x))
			break;
		i += 8;
	}
	while (i < n && fast(p[i]))
		i++;
	return i;
}

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
		/* Printable ASCII, newlines and tabs go in runs. */
		size_t j = i + pass_run(w + i, m - i);
		if (j > i) {
			memcpy(out + o, w + i, j - i);
			o += j - i;
			i = j;
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
	/* Nearly all output is printable ASCII: it goes on as it is, uncopied. */
	if (!s->n_held) {
		done = pass_run((const unsigned char *)buf, len);
		if (done && fwrite(buf, 1, done, s->under) != done)
			return 0;
	}
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
