/* names.h: an enum's spellings as an array indexed by value, read both ways; the model's and the
 * job spec's enums (state, health, kind, ...) all print and parse through it, so they agree on
 * case and on unknown values. */
#ifndef XP_NAMES_H
#define XP_NAMES_H

/* names[value] for 0 <= value < n, else "unknown" (an enum read from outside may hold anything). */
const char *xp_name_of(const char *const *names, int n, int value);
/* The value whose name is exactly text (case-sensitive), -1 when none matches or text is NULL. */
int xp_name_parse(const char *const *names, int n, const char *text);

/* Defines PREFIX_name(int) and PREFIX_parse(const char *) over names[n] with the two functions
 * above, so that each enum's pair is one line and cannot drift from the others; the prototypes
 * stay in the module's own header, where callers look for them. */
#define XP_NAMES_DEFINE(prefix, names, n)                                                          \
	const char *prefix##_name(int value)                                                       \
	{                                                                                          \
		return xp_name_of(names, n, value);                                                \
	}                                                                                          \
	int prefix##_parse(const char *text)                                                       \
	{                                                                                          \
		return xp_name_parse(names, n, text);                                              \
	}

#endif
