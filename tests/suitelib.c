/* suitelib.c: a check suite from a table of test cases (see suitelib.h). */
#include "suitelib.h"

#include <stddef.h>

Suite *xp_suite(const char *name, const struct xp_tcase *cases)
{
	/* check owns what is created here: srunner_free frees the suite and its cases. */
	Suite *s = suite_create(name);
	for (const struct xp_tcase *c = cases; c->name; c++) {
		TCase *tc = tcase_create(c->name);
		if (c->timeout_s > 0)
			tcase_set_timeout(tc, (double)c->timeout_s);
		if (c->setup || c->teardown)
			tcase_add_checked_fixture(tc, c->setup, c->teardown);
		if (c->setup_all || c->teardown_all)
			tcase_add_unchecked_fixture(tc, c->setup_all, c->teardown_all);
		if (c->loop)
			tcase_add_loop_test(tc, c->loop, 0, c->loop_n);
		for (size_t i = 0; i < XP_TCASE_MAX && c->tests[i]; i++)
			tcase_add_test(tc, c->tests[i]);
		suite_add_tcase(s, tc);
	}
	return s;
}
