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

char *xp_mask_controls(char *s)
{
	for (char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return s;
}
