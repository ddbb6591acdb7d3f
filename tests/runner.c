/* runner.c: runs every check suite; the list comes from the tests/check_*.c file names. */
#include <check.h>
#include <stdlib.h>

#define XP_SUITE(name) Suite *xp_suite_##name(void);
#include "suites.inc"
#undef XP_SUITE

int main(void)
{
	SRunner *sr = srunner_create(NULL);
#define XP_SUITE(name) srunner_add_suite(sr, xp_suite_##name());
#include "suites.inc"
#undef XP_SUITE
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
