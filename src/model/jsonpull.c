/* jsonpull.c: a strict pull tokenizer for JSON text read in chunks. */
#include "jsonpull.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "xp.h"

#define CHUNK ((size_t)256 << 10)
#define NUM_MAX 512 /* bytes in a number's text: 17 digits need far less */

/* The keys of one open object: an open-addressing hash over an arena of key bytes, so a
 * million labels cost a million lookups, not a million squared. */
struct kent {
	uint32_t hash, len;
	size_t off;
};

struct xp_jp_keys {
	bool first;     /* nothing read yet in this container */
	bool is_obj;
	struct kent *ents;
	size_t n, cap;
	uint32_t *slots; /* index + 1 into ents, 0 when empty */
	size_t nslots;
	char *arena;
	size_t alen, acap;
};

__attribute__((format(printf, 2, 3)))
static int fail(struct xp_jp *jp, const char *fmt, ...)
{
	if (jp->failed)
		return -1;
	char m[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sizeof m, fmt, ap);
	va_end(ap);
	snprintf(jp->msg, sizeof jp->msg, "%d:%d: %s", jp->line, jp->col, m);
	jp->failed = true;
	return -1;
}

static void init(struct xp_jp *jp)
{
	memset(jp, 0, sizeof *jp);
	jp->fd = -1;
	jp->line = 1;
	jp->col = 1;
}

void xp_jp_init_mem(struct xp_jp *jp, const char *text, size_t len)
{
	init(jp);
	jp->mem = (const unsigned char *)(text ? text : "");
	jp->p = jp->mem;
	jp->end = jp->mem + (text ? len : 0);
	jp->eof = true;
}

void xp_jp_init_fd(struct xp_jp *jp, int fd)
{
	init(jp);
	jp->fd = fd;
	jp->buf = xp_malloc(CHUNK);
	jp->p = jp->end = jp->buf;
}

void xp_jp_free(struct xp_jp *jp)
{
	free(jp->buf);
	free(jp->str);
	free(jp->key);
	if (jp->keys) {
		for (int i = 0; i <= XP_JP_MAX_DEPTH; i++) {
			free(jp->keys[i].ents);
			free(jp->keys[i].slots);
			free(jp->keys[i].arena);
		}
		free(jp->keys);
	}
	jp->buf = NULL;
	jp->str = jp->key = NULL;
	jp->keys = NULL;
}

/* Reads the next chunk; false at the end of the input (or a read error, which says so). */
static bool refill(struct xp_jp *jp)
{
	if (jp->eof)
		return false;
	for (;;) {
		ssize_t r = read(jp->fd, jp->buf, CHUNK);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fail(jp, "cannot read: %s", strerror(errno));
			jp->eof = true;
			return false;
		}
		if (r == 0) {
			jp->eof = true;
			return false;
		}
		jp->p = jp->buf;
		jp->end = jp->buf + r;
		return true;
	}
}

/* The next byte without taking it, -1 at the end. */
static inline int peek(struct xp_jp *jp)
{
	if (jp->p == jp->end && !refill(jp))
		return -1;
	return *jp->p;
}

/* Takes the next byte, -1 at the end. */
static inline int next(struct xp_jp *jp)
{
	if (jp->p == jp->end && !refill(jp))
		return -1;
	jp->col++;
	return *jp->p++;
}

static int skip_ws(struct xp_jp *jp)
{
	/* Most tokens follow the last one at once (compact files). */
	if (jp->p < jp->end && *jp->p > ' ')
		return *jp->p;
	for (;;) {
		int c = peek(jp);
		if (c == '\n') {
			jp->line++;
			jp->col = 0;
		} else if (c != ' ' && c != '\t' && c != '\r') {
			return c;
		}
		next(jp);
	}
}

/* put's slow path: the buffer grows (doubling), or the string is too long. */
static __attribute__((noinline)) int put_grow(struct xp_jp *jp, char **s, size_t *len, size_t *cap, const void *b,
					       size_t n)
{
	if (*len + n > XP_JP_MAX_STR)
		return fail(jp, "a string longer than %zu bytes", XP_JP_MAX_STR);
	if (*len + n + 1 > *cap) {
		size_t c = *cap ? *cap : 64;
		while (c < *len + n + 1)
			c *= 2;
		*s = xp_realloc(*s, c);
		*cap = c;
	}
	memcpy(*s + *len, b, n);
	*len += n;
	return 0;
}

/* Appends n bytes to a growing string buffer, refusing more than XP_JP_MAX_STR; inline, as
 * every key and string of a document comes through here, nearly always with room to spare. */
static inline int put(struct xp_jp *jp, char **s, size_t *len, size_t *cap, const void *b, size_t n)
{
	if (*len + n + 1 > *cap || *len + n > XP_JP_MAX_STR)
		return put_grow(jp, s, len, cap, b, n);
	memcpy(*s + *len, b, n);
	*len += n;
	return 0;
}

static int hex4(struct xp_jp *jp, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		int c = next(jp);
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return fail(jp, "invalid escape");
		v = v << 4 | (unsigned)d;
	}
	*out = v;
	return 0;
}

static size_t utf8_put(unsigned cp, unsigned char *b)
{
	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | cp >> 6);
		b[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		b[0] = (unsigned char)(0xe0 | cp >> 12);
		b[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	b[0] = (unsigned char)(0xf0 | cp >> 18);
	b[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
	b[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
	b[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

/* One escape after the backslash. */
static int escape(struct xp_jp *jp, char **s, size_t *len, size_t *cap)
{
	int c = next(jp);
	unsigned char b[4];
	unsigned cp, lo;
	switch (c) {
	case '"': case '\\': case '/':
		b[0] = (unsigned char)c;
		return put(jp, s, len, cap, b, 1);
	case 'b': return put(jp, s, len, cap, "\b", 1);
	case 'f': return put(jp, s, len, cap, "\f", 1);
	case 'n': return put(jp, s, len, cap, "\n", 1);
	case 'r': return put(jp, s, len, cap, "\r", 1);
	case 't': return put(jp, s, len, cap, "\t", 1);
	case 'u':
		if (hex4(jp, &cp))
			return -1;
		if (cp >= 0xdc00 && cp <= 0xdfff)
			return fail(jp, "invalid Unicode '\\u%04X'", cp);
		if (cp >= 0xd800 && cp <= 0xdbff) {
			if (next(jp) != '\\' || next(jp) != 'u' || hex4(jp, &lo))
				return fail(jp, "invalid Unicode '\\u%04X'", cp);
			if (lo < 0xdc00 || lo > 0xdfff)
				return fail(jp, "invalid Unicode '\\u%04X\\u%04X'", cp, lo);
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		}
		if (cp == 0 && !jp->allow_nul)
			return fail(jp, "\\u0000 is not allowed in a string");
		return put(jp, s, len, cap, b, utf8_put(cp, b));
	default:
		return fail(jp, "invalid escape");
	}
}

/* One multi-byte UTF-8 character whose first byte c was taken. */
static int utf8_char(struct xp_jp *jp, int c, char **s, size_t *len, size_t *cap)
{
	unsigned char b[4] = {(unsigned char)c};
	size_t n;
	unsigned cp;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = (unsigned)c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = (unsigned)c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = (unsigned)c & 0x07;
	else
		return fail(jp, "unable to decode byte 0x%x", (unsigned)c);
	for (size_t i = 1; i < n; i++) {
		int d = next(jp);
		if (d < 0x80 || d > 0xbf)
			return fail(jp, "unable to decode byte 0x%x", (unsigned)c);
		b[i] = (unsigned char)d;
		cp = cp << 6 | ((unsigned)d & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return fail(jp, "unable to decode byte 0x%x", (unsigned)c);
	return put(jp, s, len, cap, b, n);
}

/* Bytes a string's fast path copies as they are: printable ASCII but the quote and the backslash. */
static const bool plain[256] = {
	[0x20 ... 0x21] = true, [0x23 ... 0x5b] = true, [0x5d ... 0x7e] = true,
};

/* The first byte from p on (before end) that is not plain: 16 bytes at a time with SSE2 (part
 * of every x86-64), which finds the same byte as the table, then the table for the tail. A
 * byte is not plain when it is the quote, the backslash, DEL, or below 0x20 or above 0x7f:
 * as signed bytes, those last two are exactly the ones less than 0x20. */
static inline const unsigned char *plain_run(const unsigned char *p, const unsigned char *end)
{
#ifdef __SSE2__
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20),
		      del = _mm_set1_epi8(0x7f);
	while (end - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
					    _mm_or_si128(_mm_cmplt_epi8(v, space), _mm_cmpeq_epi8(v, del)));
		unsigned m = (unsigned)_mm_movemask_epi8(stop);
		if (m)
			return p + __builtin_ctz(m);
		p += 16;
	}
#endif
	while (p < end && plain[*p])
		p++;
	return p;
}

/* The rest of a string after its opening quote; *printable says whether every byte was
 * printable ASCII taken as it was (no escape, no control, no DEL, nothing above 0x7f). */
static __attribute__((noinline)) int string_slow(struct xp_jp *jp, char **s, size_t *len, size_t *cap,
						   bool *printable)
{
	*len = 0;
	*printable = true;
	if (!*s) {
		*s = xp_malloc(64);
		*cap = 64;
	}
	for (;;) {
		/* Plain bytes in a run, copied at once. */
		const unsigned char *q = plain_run(jp->p, jp->end);
		if (q > jp->p) {
			size_t k = (size_t)(q - jp->p);
			if (put(jp, s, len, cap, jp->p, k))
				return -1;
			jp->p = q;
			jp->col += (int)k;
		}
		int c = next(jp);
		if (c == '"')
			break;
		*printable = *printable && c >= 0x20 && c < 0x7f && c != '\\';
		if (c < 0)
			return fail(jp, "premature end of input in a string");
		if (c == '\\') {
			if (escape(jp, s, len, cap))
				return -1;
		} else if (c < 0x20) {
			return fail(jp, "control character 0x%x in a string", (unsigned)c);
		} else if (c >= 0x80) {
			if (utf8_char(jp, c, s, len, cap))
				return -1;
		} else {
			/* A plain byte the run above did not take: it began the next chunk. */
			char ch = (char)c;
			if (put(jp, s, len, cap, &ch, 1))
				return -1;
		}
	}
	(*s)[*len] = '\0';
	return 0;
}

/* As string_slow; inline, for the string that is short, printable and whole in the chunk
 * (nearly every key and value of an inventory): one scan, one copy, no call. */
static inline int string(struct xp_jp *jp, char **s, size_t *len, size_t *cap, bool *printable)
{
	const unsigned char *e = plain_run(jp->p, jp->end);
	size_t k = (size_t)(e - jp->p);
	if (e == jp->end || *e != '"' || k + 1 > *cap || k > XP_JP_MAX_STR)
		return string_slow(jp, s, len, cap, printable);
	memcpy(*s, jp->p, k);
	(*s)[k] = '\0';
	*len = k;
	*printable = true;
	jp->col += (int)k + 1;
	jp->p = e + 1;
	return 0;
}

/* The numbers an inventory is made of, read in place: an integer of up to 18 digits, or a
 * decimal without exponent of up to 15 digits in all, whole in the chunk (a byte that cannot
 * continue it follows). Its value is what the general path below computes for the same text
 * (an exact integer; m / 10^frac, both exact doubles, so one correctly rounded division).
 * Anything else (an exponent, more digits, a number that may go on in the next chunk, a
 * syntax error) returns false having taken nothing, and the general path reads it. */
static bool number_fast(struct xp_jp *jp, enum xp_jp_type *type)
{
	static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13,
				     1e14, 1e15};
	const unsigned char *p = jp->p, *end = jp->end;
	bool neg = *p == '-';
	p += neg;
	const unsigned char *d0 = p;
	uint64_t m = 0;
	while (p < end && *p >= '0' && *p <= '9')
		m = m * 10 + (uint64_t)(*p++ - '0');
	size_t nint = (size_t)(p - d0);
	if (nint == 0 || nint > 18 || (nint > 1 && *d0 == '0') || p == end)
		return false;
	if (*p == '.') {
		const unsigned char *f0 = ++p;
		while (p < end && *p >= '0' && *p <= '9')
			m = m * 10 + (uint64_t)(*p++ - '0');
		size_t nfrac = (size_t)(p - f0);
		if (nfrac == 0 || nint + nfrac > 15 || p == end || *p == 'e' || *p == 'E')
			return false;
		double v = (double)m / p10[nfrac];
		jp->dval = neg ? -v : v;
		*type = XP_JP_REAL;
	} else {
		if (*p == 'e' || *p == 'E')
			return false;
		jp->ival = neg ? (int64_t)(0 - m) : (int64_t)m;
		jp->dval = (double)jp->ival;
		*type = XP_JP_INTEGER;
	}
	jp->col += (int)(p - jp->p);
	jp->p = p;
	return true;
}

/* A number whose first byte is next; ival/dval set. */
static enum xp_jp_type number(struct xp_jp *jp)
{
	enum xp_jp_type ft;
	if (jp->p < jp->end && number_fast(jp, &ft))
		return ft;
	char b[NUM_MAX + 1];
	size_t n = 0;
	bool real = false;
	int c;
#define TAKE()                                                                 \
	do {                                                                   \
		if (n == NUM_MAX)                                              \
			return fail(jp, "a number longer than %d bytes", NUM_MAX), XP_JP_ERROR; \
		b[n++] = (char)next(jp);                                       \
	} while (0)
#define DIGITS()                                                    \
	do {                                                        \
		if ((c = peek(jp)) < '0' || c > '9')                \
			return fail(jp, "invalid token"), XP_JP_ERROR; \
		while ((c = peek(jp)) >= '0' && c <= '9')           \
			TAKE();                                     \
	} while (0)
	if (peek(jp) == '-')
		TAKE();
	c = peek(jp);
	if (c == '0') {
		TAKE();
		if ((c = peek(jp)) >= '0' && c <= '9')
			return fail(jp, "invalid token"), XP_JP_ERROR;
	} else {
		DIGITS();
	}
	if (peek(jp) == '.') {
		real = true;
		TAKE();
		DIGITS();
	}
	if ((c = peek(jp)) == 'e' || c == 'E') {
		real = true;
		TAKE();
		if ((c = peek(jp)) == '+' || c == '-')
			TAKE();
		DIGITS();
	}
#undef TAKE
#undef DIGITS
	b[n] = '\0';
	errno = 0;
	if (!real) {
		/* Digits by hand: strtoll's locale and base handling cost more than the rest. */
		bool neg = b[0] == '-';
		uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
		for (const char *q = b + neg; *q; q++) {
			unsigned dg = (unsigned)(*q - '0');
			if (v > (lim - dg) / 10)
				return fail(jp, neg ? "too big negative integer" : "too big integer"), XP_JP_ERROR;
			v = v * 10 + dg;
		}
		jp->ival = neg ? (int64_t)(0 - v) : (int64_t)v;
		jp->dval = (double)jp->ival;
		return XP_JP_INTEGER;
	}
	/* Most reals are short decimals ("989.4"): up to 15 digits and a power of ten up to 22
	 * are both exact doubles, so one division or multiplication rounds as strtod would. */
	uint64_t m = 0;
	int digits = 0, e10 = 0, frac = 0;
	const char *q = b + (b[0] == '-');
	bool in_frac = false;
	for (; *q && *q != 'e' && *q != 'E'; q++) {
		if (*q == '.') {
			in_frac = true;
			continue;
		}
		if (m || *q != '0')
			digits++;
		m = m * 10 + (uint64_t)(*q - '0');
		frac += in_frac;
		if (digits > 15)
			break;
	}
	if (digits <= 15 && !*q) {
		static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
					     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
		e10 = -frac;
		double v = e10 < -22 ? -1 : (double)m / p10[-e10];
		if (v >= 0) {
			jp->dval = b[0] == '-' ? -v : v;
			return XP_JP_REAL;
		}
	}
	/* strtod reads the locale's decimal point (xpool sets LC_ALL from the environment). */
	const char *dp = localeconv()->decimal_point;
	char *dot = strchr(b, '.');
	if (dot && dp && dp[0] && dp[0] != '.' && !dp[1])
		*dot = dp[0];
	double v = strtod(b, NULL);
	/* Underflow reads as the nearest real (0 or a denormal), as jansson takes it. */
	if (errno == ERANGE && isinf(v))
		return fail(jp, "real number overflow"), XP_JP_ERROR;
	jp->dval = v;
	return XP_JP_REAL;
}

static enum xp_jp_type literal(struct xp_jp *jp)
{
	char w[8];
	size_t n = 0;
	int c;
	while (n < sizeof w - 1 && (c = peek(jp)) >= 'a' && c <= 'z')
		w[n++] = (char)next(jp);
	w[n] = '\0';
	if (strcmp(w, "true") == 0)
		return XP_JP_TRUE;
	if (strcmp(w, "false") == 0)
		return XP_JP_FALSE;
	if (strcmp(w, "null") == 0)
		return XP_JP_NULL;
	return fail(jp, "invalid token"), XP_JP_ERROR;
}

static struct xp_jp_keys *level(struct xp_jp *jp)
{
	return &jp->keys[jp->depth];
}

static enum xp_jp_type enter(struct xp_jp *jp, bool obj)
{
	next(jp);
	if (jp->depth >= XP_JP_MAX_DEPTH)
		return fail(jp, "maximum parsing depth reached"), XP_JP_ERROR;
	if (!jp->keys)
		jp->keys = xp_calloc(XP_JP_MAX_DEPTH + 1, sizeof *jp->keys);
	jp->depth++;
	struct xp_jp_keys *k = level(jp);
	k->first = true;
	k->is_obj = obj;
	if (obj && k->n) {
		/* A big table (a node's labels) is not worth clearing for the next small object. */
		if (k->nslots > 1024) {
			free(k->slots);
			k->slots = NULL;
			k->nslots = 0;
		} else {
			memset(k->slots, 0, k->nslots * sizeof *k->slots);
		}
		k->n = 0;
		k->alen = 0;
	}
	return obj ? XP_JP_OBJECT : XP_JP_ARRAY;
}

enum xp_jp_type xp_jp_value(struct xp_jp *jp)
{
	if (jp->failed)
		return XP_JP_ERROR;
	int c = skip_ws(jp);
	switch (c) {
	case '{':
		return enter(jp, true);
	case '[':
		return enter(jp, false);
	case '"':
		next(jp);
		return string(jp, &jp->str, &jp->str_len, &jp->str_cap, &jp->str_printable) ? XP_JP_ERROR
											     : XP_JP_STRING;
	case 't':
	case 'f':
	case 'n':
		return literal(jp);
	case -1:
		return fail(jp, "premature end of input"), XP_JP_ERROR;
	default:
		if (c == '-' || (c >= '0' && c <= '9'))
			return number(jp);
		return fail(jp, "unexpected token '%c'", c >= 0x20 && c < 0x7f ? c : '?'), XP_JP_ERROR;
	}
}

enum xp_jp_type xp_jp_top(struct xp_jp *jp)
{
	int c = skip_ws(jp);
	if (c != '{' && c != '[') {
		if (c < 0)
			return fail(jp, "'[' or '{' expected near end of file"), XP_JP_ERROR;
		return fail(jp, "'[' or '{' expected"), XP_JP_ERROR;
	}
	return xp_jp_value(jp);
}

static uint32_t hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

/* Adds the current key to the level's set; -1 when it was there. */
static int key_add(struct xp_jp *jp, struct xp_jp_keys *k)
{
	uint32_t h = hash(jp->key, jp->key_len);
	if ((k->n + 1) * 2 > k->nslots) {
		size_t ns = k->nslots ? k->nslots * 2 : 64;
		free(k->slots);
		k->slots = xp_calloc(ns, sizeof *k->slots);
		k->nslots = ns;
		for (size_t i = 0; i < k->n; i++) {
			size_t s = k->ents[i].hash & (ns - 1);
			while (k->slots[s])
				s = (s + 1) & (ns - 1);
			k->slots[s] = (uint32_t)i + 1;
		}
	}
	size_t s = h & (k->nslots - 1);
	for (; k->slots[s]; s = (s + 1) & (k->nslots - 1)) {
		const struct kent *e = &k->ents[k->slots[s] - 1];
		if (e->hash == h && e->len == jp->key_len && memcmp(k->arena + e->off, jp->key, e->len) == 0)
			return -1;
	}
	if (k->n == k->cap) {
		k->cap = k->cap ? k->cap * 2 : 32;
		k->ents = xp_realloc(k->ents, k->cap * sizeof *k->ents);
	}
	/* "" as the first key still gets an arena: memcpy into a null pointer is undefined even
	 * for no bytes. */
	if (!k->arena || k->alen + jp->key_len > k->acap) {
		size_t c = k->acap ? k->acap : 512;
		while (c < k->alen + jp->key_len)
			c *= 2;
		k->arena = xp_realloc(k->arena, c);
		k->acap = c;
	}
	memcpy(k->arena + k->alen, jp->key, jp->key_len);
	k->ents[k->n] = (struct kent){h, (uint32_t)jp->key_len, k->alen};
	k->alen += jp->key_len;
	k->slots[s] = (uint32_t)++k->n;
	return 0;
}

static int next_key(struct xp_jp *jp, bool check);

int xp_jp_next_key(struct xp_jp *jp)
{
	return next_key(jp, true);
}

int xp_jp_next_key_unchecked(struct xp_jp *jp)
{
	return next_key(jp, false);
}

int xp_jp_key_check(struct xp_jp *jp)
{
	if (jp->failed)
		return -1;
	if (key_add(jp, level(jp)))
		return xp_jp_key_dup(jp);
	return 0;
}

int xp_jp_key_dup(struct xp_jp *jp)
{
	return fail(jp, "duplicate object key \"%.64s\"", jp->key);
}

static int next_key(struct xp_jp *jp, bool check)
{
	if (jp->failed)
		return -1;
	struct xp_jp_keys *k = level(jp);
	int c = skip_ws(jp);
	if (c == '}') {
		next(jp);
		jp->depth--;
		return 0;
	}
	if (!k->first) {
		if (c != ',')
			return c < 0 ? fail(jp, "premature end of input") : fail(jp, "',' or '}' expected");
		next(jp);
		c = skip_ws(jp);
	}
	if (c != '"')
		return c < 0 ? fail(jp, "premature end of input") : fail(jp, "string or '}' expected");
	k->first = false;
	next(jp);
	bool printable;
	if (string(jp, &jp->key, &jp->key_len, &jp->key_cap, &printable))
		return -1;
	if (check && key_add(jp, k))
		return xp_jp_key_dup(jp);
	if (skip_ws(jp) != ':')
		return fail(jp, "':' expected");
	next(jp);
	return 1;
}

int xp_jp_next_elem(struct xp_jp *jp)
{
	if (jp->failed)
		return -1;
	struct xp_jp_keys *k = level(jp);
	int c = skip_ws(jp);
	if (c == ']') {
		next(jp);
		jp->depth--;
		return 0;
	}
	if (!k->first) {
		if (c != ',')
			return c < 0 ? fail(jp, "premature end of input") : fail(jp, "',' or ']' expected");
		next(jp);
	}
	k->first = false;
	return 1;
}

int xp_jp_skip(struct xp_jp *jp, enum xp_jp_type t)
{
	int r;
	switch (t) {
	case XP_JP_ERROR:
		return -1;
	case XP_JP_OBJECT:
		while ((r = xp_jp_next_key(jp)) == 1)
			if (xp_jp_skip(jp, xp_jp_value(jp)))
				return -1;
		return r;
	case XP_JP_ARRAY:
		while ((r = xp_jp_next_elem(jp)) == 1)
			if (xp_jp_skip(jp, xp_jp_value(jp)))
				return -1;
		return r;
	default:
		return 0;
	}
}

int xp_jp_end(struct xp_jp *jp)
{
	if (jp->failed)
		return -1;
	if (skip_ws(jp) >= 0)
		return fail(jp, "end of file expected");
	return jp->failed ? -1 : 0;
}
