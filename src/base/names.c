/* names.c: enum spellings read both ways (see names.h). */
#include "names.h"

#include <string.h>

const char *xp_name_of(const char *const *names, int n, int value)
{
	return value >= 0 && value < n ? names[value] : "unknown";
}

int xp_name_parse(const char *const *names, int n, const char *text)
{
	if (!text)
		return -1;
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], text) == 0)
			return i;
	return -1;
}
