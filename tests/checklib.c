/* checklib.c: the check suites' shared assertions (see checklib.h). */
#include "checklib.h"

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

const char *xp_first_missing(const char *text, ...)
{
	va_list ap;
	va_start(ap, text);
	const char *part;
	while ((part = va_arg(ap, const char *)) != NULL && strstr(text, part))
		;
	va_end(ap);
	return part;
}
