/* format.c: small formatters shared by text output. */
#include "format.h"

#include <stdio.h>

const char *xp_fmt_mib(char *buf, size_t len, int64_t mib)
{
	if (mib < 0)
		snprintf(buf, len, "-");
	else if (mib >= 10240)
		snprintf(buf, len, "%.1f GiB", (double)mib / 1024.0);
	else
		snprintf(buf, len, "%lld MiB", (long long)mib);
	return buf;
}

const char *xp_fmt_int(char *buf, size_t len, long long v)
{
	if (v < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%lld", v);
	return buf;
}

size_t xp_bidi_len(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	if (u[0] == 0xd8 && u[1] == 0x9c)
		return 2; /* U+061C arabic letter mark */
	if (u[0] != 0xe2)
		return 0;
	if (u[1] == 0x80 && (u[2] == 0x8e || u[2] == 0x8f || (u[2] >= 0xaa && u[2] <= 0xae)))
		return 3; /* U+200E, U+200F marks; U+202A-U+202E embeddings and overrides */
	if (u[1] == 0x81 && u[2] >= 0xa6 && u[2] <= 0xa9)
		return 3; /* U+2066-U+2069 isolates */
	return 0;
}

char *xp_mask_controls(char *s)
{
	char *w = s;
	for (const char *p = s; *p;) {
		size_t b = xp_bidi_len(p);
		*w++ = b || (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p;
		p += b ? b : 1;
	}
	*w = '\0';
	return s;
}
