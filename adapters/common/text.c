/* text.c: line reading for parsers of vendor tools' text reports (compiled into each adapter). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "xp_adapter.h"

size_t xp_text_clean_line(const char *s, size_t n, char *out, size_t size)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < size; i++) {
		if (s[i] == '\033') {
			/* CSI: ESC [ parameters, then one final byte in @..~; other escapes: skip ESC X. */
			if (i + 1 < n && s[i + 1] == '[') {
				i += 2;
				while (i < n && !((unsigned char)s[i] >= '@' && (unsigned char)s[i] <= '~'))
					i++;
			} else
				i++;
			continue;
		}
		if (s[i] == '\r')
			continue;
		out[o++] = s[i];
	}
	out[o] = '\0';
	return o;
}

bool xp_text_next_line(const char *text, size_t len, size_t *pos, char *line, size_t size)
{
	if (*pos >= len)
		return false;
	const char *nl = memchr(text + *pos, '\n', len - *pos);
	size_t ll = nl ? (size_t)(nl - (text + *pos)) : len - *pos;
	xp_text_clean_line(text + *pos, ll, line, size);
	*pos += ll + (nl ? 1 : 0);
	return true;
}

char *xp_text_trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

void xp_text_err(char *err, size_t errlen, const char *fmt, ...)
{
	/* Parsers take an optional error buffer: callers that only want yes or no pass NULL. */
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}
