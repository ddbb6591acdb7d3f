/* suitelib.h: defines a check suite from a table of its test cases, so that each check file
 * lists its tests instead of repeating suite_create/tcase_create/tcase_add_test calls. */
#ifndef XP_SUITELIB_H
#define XP_SUITELIB_H

#include <check.h>

/* Most tests one test case lists (a longer list does not compile: excess initializers). */
#define XP_TCASE_MAX 32

/* One test case of a suite; fields left out are "none" or check's default. */
struct xp_tcase {
	const char *name;                 /* the case's name (CK_RUN_CASE); NULL ends a table */
	int timeout_s;                    /* its timeout in seconds; 0: CK_DEFAULT_TIMEOUT */
	void (*setup)(void);              /* checked fixture: runs in each test's process */
	void (*teardown)(void);           /* its teardown */
	void (*setup_all)(void);          /* unchecked fixture: runs once in the runner */
	void (*teardown_all)(void);       /* its teardown */
	const TTest *loop;                /* a loop test, run first with _i = 0 .. loop_n - 1 */
	int loop_n;                       /* how many times loop runs */
	const TTest *tests[XP_TCASE_MAX]; /* the plain tests in the order they run; the rest NULL */
};

/* The suite name made of the test cases in cases, in order, up to the one with a NULL name. */
Suite *xp_suite(const char *name, const struct xp_tcase *cases);

/* Defines `Suite *xp_suite_NAME(void)` (what the runner calls, see runner.c), a suite named
 * "NAME" of the struct xp_tcase initializers that follow, e.g.
 *   XP_DEFINE_SUITE(cmd, {"core", .tests = {find_rules, parse_options}});
 * A macro because check's tests (START_TEST) are variables, not constants: the table is built
 * when the function runs, and the prototype keeps -Wmissing-prototypes quiet. */
#define XP_DEFINE_SUITE(suite, ...)                                               \
	Suite *xp_suite_##suite(void);                                            \
	Suite *xp_suite_##suite(void)                                             \
	{                                                                         \
		return xp_suite(#suite, (const struct xp_tcase[]){__VA_ARGS__, {NULL}}); \
	}

#endif
