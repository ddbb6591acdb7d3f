/* format.c: small formatters shared by text output. */
#include "format.h"

#include "xp.h"

#include <stdio.h>
#include <string.h>

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

const char *xp_fmt_mib_short(char *buf, size_t len, int64_t mib)
{
	if (mib < 0) {
		snprintf(buf, len, "-");
	} else if (mib < 1024) {
		snprintf(buf, len, "%lldM", (long long)mib);
	} else if (mib < 1024LL * 1024) {
		double g = (double)mib / 1024.0;
		/* 80 GiB reads "80G", an H100's 81559 MiB "79.6G": the decimal only where it says something. */
		if (g >= 100)
			snprintf(buf, len, "%.0fG", g);
		else
			snprintf(buf, len, "%.1fG", g);
		size_t n = strlen(buf);
		if (n > 3 && buf[n - 3] == '.' && buf[n - 2] == '0')
			memmove(buf + n - 3, buf + n - 1, 2);
	} else {
		snprintf(buf, len, "%.1fT", (double)mib / (1024.0 * 1024.0));
	}
	return buf;
}

const char *xp_fmt_link(char *buf, size_t len, int64_t mbps)
{
	if (mbps <= 0)
		snprintf(buf, len, "-");
	else if (mbps >= 1000)
		snprintf(buf, len, "%g Gb/s", (double)mbps / 1000.0);
	else
		snprintf(buf, len, "%lld Mb/s", (long long)mbps);
	return buf;
}

const char *xp_fmt_span(char *buf, size_t len, int64_t s)
{
	if (s < 0)
		snprintf(buf, len, "-");
	else if (s < 60)
		snprintf(buf, len, "%llds", (long long)s);
	else if (s < 3600)
		snprintf(buf, len, "%lldm", (long long)(s / 60));
	else if (s < 86400)
		snprintf(buf, len, "%lldh%02lldm", (long long)(s / 3600), (long long)(s % 3600 / 60));
	else
		snprintf(buf, len, "%lldd%lldh", (long long)(s / 86400), (long long)(s % 86400 / 3600));
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

size_t xp_unsafe_len(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	if (u[0] < 0x20 || u[0] == 0x7f)
		return 1;
	size_t n = xp_utf8_len(u, 4); /* a NUL ends a sequence early: no read past it */
	if (!n)
		return 1; /* a byte that starts no character: an 8-bit CSI (0x9b) among others */
	if (n == 2 && u[0] == 0xc2 && u[1] <= 0x9f)
		return 2; /* U+0080-U+009F: C1 controls, CSI and OSC among them */
	return xp_bidi_len(s);
}

char *xp_mask_controls(char *s)
{
	char *w = s;
	for (const char *p = s; *p;) {
		size_t b = xp_unsafe_len(p);
		if (b) {
			*w++ = '?';
			p += b;
		} else {
			/* A safe character is copied whole. */
			for (size_t n = xp_utf8_len((const unsigned char *)p, 4); n--;)
				*w++ = *p++;
		}
	}
	*w = '\0';
	return s;
}
