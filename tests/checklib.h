/* checklib.h: assertions the check suites share that testlib cannot hold (testlib is linked
 * into the benchmarks too, which have no check): each ends the calling test when it fails. */
#ifndef XP_CHECKLIB_H
#define XP_CHECKLIB_H

#include <check.h>

/* The first string up to a NULL that text does not hold; NULL when it holds them all. */
const char *xp_first_missing(const char *text, ...);

/* Checks that text holds each string of the NULL-terminated list; a failure names the first one
 * missing and shows the whole text, so a run's output needs no check per line to say what went
 * wrong. A macro so that the failure names the caller's line. */
#define xp_want_parts(text, ...)                                                          \
	do {                                                                              \
		const char *xp_text_ = (text);                                            \
		ck_assert_ptr_nonnull(xp_text_);                                          \
		const char *xp_miss_ = xp_first_missing(xp_text_, __VA_ARGS__);           \
		ck_assert_msg(xp_miss_ == NULL, "no \"%s\" in:\n%s", xp_miss_, xp_text_); \
	} while (0)

#endif
