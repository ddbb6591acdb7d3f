/* checklib.h: assertions the check suites share that testlib cannot hold (testlib is linked
 * into the benchmarks too, which have no check): each ends the calling test when it fails. */
#ifndef XP_CHECKLIB_H
#define XP_CHECKLIB_H

#include <check.h>
#include <string.h>

struct xp_store;

/* A new database at path made as an older xpool left it: the migrations up to schema version
 * only (not this xpool's), open for the test to add rows before it closes it. */
struct xp_store *xp_old_store(const char *path, int version);

/* Makes a self-signed EC certificate for localhost and 127.0.0.1 at cert, its key at key
 * (openssl req); the test ends when openssl fails. */
void xp_self_signed(const char *key, const char *cert);

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

/* A suite that runs the binary through a function of its own, static void q(struct xp_run *r,
 * ...) (the arguments up to a NULL, with the suite's --db and cluster), checks each run with
 * these: OK (exit 0), FAILS (exit code, stderr holding want), OUT (exit code, stdout holding
 * want); a failure shows both streams. */
#define XP_RUN_CHECK(code, stream, want, ...)                                                          \
	do {                                                                                            \
		struct xp_run r_;                                                                       \
		q(&r_, __VA_ARGS__, NULL);                                                              \
		ck_assert_msg(r_.status == (code) && strstr(r_.stream, (want)), "want %d '%s', got %d: %s%s", \
			      code, (want), r_.status, r_.out, r_.err);                                 \
		xp_run_free(&r_);                                                                       \
	} while (0)
#define OK(...) XP_RUN_CHECK(0, out, "", __VA_ARGS__)
#define FAILS(code, want, ...) XP_RUN_CHECK(code, err, want, __VA_ARGS__)
#define OUT(code, want, ...) XP_RUN_CHECK(code, out, want, __VA_ARGS__)

#endif
