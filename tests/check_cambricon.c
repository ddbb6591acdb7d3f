/* check_cambricon.c: the Cambricon adapter's `cnmon info` parser and the adapter through a fake
 * host.
 *
 * There is NO real capture of `cnmon info` in our fixtures (see tests/fixtures/SOURCES.md), so
 * the parser is UNTESTED AGAINST REAL OUTPUT. These tests check robustness (empty, garbage,
 * huge and cut inputs never crash) and that inputs built from the documented field names parse
 * as intended. The inputs below are constructed, not recorded: where a line is quoted from a
 * public source, the comment says so. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cambricon/cambricon.h"
#include "fakehost.h"
#include "suitelib.h"
#include "xp_adapter.h"

extern const struct xp_adapter xp_adapter_cambricon;

/* The four field lines are as Cambricon's BANG C tutorial quotes `cnmon info` on an MLU370-X8
 * (four-space indent, key padded to 31 columns, " : "); the "Card 0" line opening the block is
 * the documented header, added here. */
static const char minimal[] = "Card 0\n"
			      "    Product Name                   : MLU370-X8\n"
			      "    Firmware                       : v1.1.6\n"
			      "    Driver                         : v5.10.26\n"
			      "    Compute Mode                   : Default\n";

/* Constructed from the documented section names (Temperature, Power, Physical Memory Usage,
 * Utilization, PCI, Health State, Processes): two cards, the second with fewer fields. */
static const char sections[] =
	"\033[32mCNMON v5.10.22\033[0m\r\n"
	"Card 0\n"
	"    Product Name                   : MLU370-X4\n"
	"    UUID                           : 77013006-2457-0000-0000-000000000000\n"
	"    Driver                         : v5.10.22\n"
	"    Health State                   :\n"
	"        Device                     : Good\n"
	"        Driver                     : Running\n"
	"    Utilization                    :\n"
	"        MLU Average                : 66 %\n"
	"    Temperature                    :\n"
	"        Board                      : 64 C\n"
	"        Chip                       : 78 C\n"
	"        Memory                     : 63 C\n"
	"    Physical Memory Usage          :\n"
	"        Total                      : 23308 MiB\n"
	"        Used                       : 17320 MiB\n"
	"        Free                       : 5988 MiB\n"
	"    Power                          :\n"
	"        Usage                      : 44 W\n"
	"        Cap                        : 150 W\n"
	"    PCI                            :\n"
	"        Domain ID                  : 0000\n"
	"        Bus num                    : 01\n"
	"        Device                     : 00\n"
	"        Function                   : 0\n"
	"    Processes                      :\n"
	"        Process                    : 0\n"
	"            PID                    : 101934\n"
	"            MLU Memory Usage       : 15829 MiB\n"
	"Card 1\n"
	"    Product Name                   : MLU370-X4\n"
	"    Temperature                    :\n"
	"        Board                      : 51 C\n"
	"        Memory                     : N/A\n"
	"    Physical Memory Usage          :\n"
	"        Total                      : 22.5 GiB\n"
	"        Used                       : N/A\n";

static int parse(const char *text, struct xp_raw_node *n, char *err, size_t errlen)
{
	return xp_cnmon_parse_info(text, strlen(text), n, err, errlen);
}

START_TEST(test_minimal)
{
	struct xp_raw_node *n = xp_fake_node();
	char err[256] = "";
	ck_assert_int_eq(parse(minimal, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 1);
	const struct xp_raw_device *d = &n->devices[0];
	ck_assert_int_eq(d->index, 0);
	ck_assert_str_eq(d->name, "MLU370-X8");
	ck_assert_str_eq(d->firmware, "v1.1.6");
	ck_assert_str_eq(d->driver, "v5.10.26");
	ck_assert_int_eq(d->memory_total_mib, -1);
	ck_assert(isnan(d->temperature_c));
	ck_assert_int_eq(n->n_warnings, 0);
	free(n);
}
END_TEST

START_TEST(test_sections)
{
	struct xp_raw_node *n = xp_fake_node();
	char err[256] = "";
	ck_assert_int_eq(parse(sections, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 2);
	const struct xp_raw_device *d = &n->devices[0];
	ck_assert_int_eq(d->index, 0);
	ck_assert_str_eq(d->name, "MLU370-X4");
	ck_assert_str_eq(d->uuid, "77013006-2457-0000-0000-000000000000");
	ck_assert_str_eq(d->driver, "v5.10.22"); /* not Health State's "Driver : Running" */
	ck_assert_str_eq(d->health, "Good");
	ck_assert_double_eq(d->utilization_pct, 66.0);
	ck_assert_double_eq(d->temperature_c, 78.0); /* the chip, not the board */
	ck_assert_int_eq(d->memory_total_mib, 23308);
	ck_assert_int_eq(d->memory_used_mib, 17320); /* not the process's 15829 MiB */
	ck_assert_double_eq(d->power_w, 44.0);
	ck_assert_double_eq(d->power_limit_w, 150.0);
	ck_assert_str_eq(d->bus_id, "0000:01:00.0");
	const struct xp_raw_device *e = &n->devices[1];
	ck_assert_int_eq(e->index, 1);
	ck_assert_double_eq(e->temperature_c, 51.0); /* no chip sensor: the board */
	ck_assert_int_eq(e->memory_total_mib, 23040); /* 22.5 GiB */
	ck_assert_int_eq(e->memory_used_mib, -1);
	ck_assert_str_eq(e->bus_id, "");
	ck_assert_str_eq(e->driver, "");
	ck_assert(isnan(e->power_w));
	free(n);
}
END_TEST

START_TEST(test_bad_input)
{
	xp_fake_refuses(xp_cnmon_parse_info, (const char *const[]){
		" \n\t\n", "garbage\nProduct Name : X\n: : :\n", "Card\nCard x\nCard 99999999999\n", NULL});
	char err[256];
	struct xp_raw_node *n = xp_fake_node();
	/* Every cut of the constructed output: parses or fails, never more cards than it holds. */
	for (size_t cut = 0; cut <= sizeof sections - 1; cut += 7) {
		int rc = xp_cnmon_parse_info(sections, cut, n, err, sizeof err);
		ck_assert(rc == 0 || rc == -1);
		ck_assert_int_le(n->n_devices, 2);
	}
	/* Odd lines inside a card: no key, deep nesting, a very long line. */
	char odd[8192];
	int o = snprintf(odd, sizeof odd, "Card 2\n : empty key\n    Product Name : ");
	memset(odd + o, 'A', 3000);
	o += 3000;
	o += snprintf(odd + o, sizeof odd - (size_t)o, "\n");
	for (int i = 0; i < 40; i++)
		o += snprintf(odd + o, sizeof odd - (size_t)o, "%*sLevel%d :\n", i + 4, "", i);
	snprintf(odd + o, sizeof odd - (size_t)o, "%*sProduct Name : deep\n", 44, "");
	ck_assert_int_eq(parse(odd, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 1);
	ck_assert_int_eq(n->devices[0].index, 2);
	/* Cut to the field, and not replaced by the nested "Product Name". */
	ck_assert_uint_eq(strlen(n->devices[0].name), sizeof n->devices[0].name - 1);
	ck_assert_int_eq(n->devices[0].name[0], 'A');
	/* 20 MiB: one line of garbage, then card blocks past the 64 a node holds. */
	char *g = xp_fake_huge("x", 1, NULL);
	ck_assert_int_eq(xp_cnmon_parse_info(g, XP_FAKE_HUGE, n, err, sizeof err), -1);
	free(g);
	size_t k;
	g = xp_fake_huge(minimal, sizeof minimal - 1, &k);
	ck_assert_int_eq(xp_cnmon_parse_info(g, k, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, XP_RAW_MAX_DEVICES);
	ck_assert_int_eq(n->n_warnings, 1);
	free(g);
	free(n);
}
END_TEST

/* ---- the adapter through a fake host -------------------------------------------------- */

/* The fake host's `cnmon info` prints the constructed two-card output. */
static void fake_cnmon(void)
{
	xp_fake_answer((struct xp_fake_rule){.prog = "cnmon", .args = "info", .out = sections});
}

START_TEST(test_adapter_replay)
{
	ck_assert_int_eq(xp_adapter_cambricon.abi, XP_ADAPTER_ABI);
	ck_assert_str_eq(xp_adapter_cambricon.name, "cambricon");
	struct xp_fake_session s;
	xp_fake_open(&s, &xp_adapter_cambricon, true);
	const struct xp_adapter *a = s.a;
	struct xp_raw_node *n = s.n;
	fake_cnmon();
	ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_IDLE);
	ck_assert_ptr_nonnull(strstr(s.why, "cnmon-info.txt"));

	xp_fake_file(s.dir, "cnmon-info.txt", minimal, strlen(minimal), 0644);
	ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_ACTIVE);
	ck_assert_int_eq(a->enumerate(s.st, n), 0);
	ck_assert_int_eq(n->n_devices, 1);
	ck_assert_str_eq(n->devices[0].name, "MLU370-X8");
	ck_assert_int_eq(a->refresh(s.st, n), 0);
	ck_assert_int_eq(a->health(s.st, n), 0);
	ck_assert_int_eq(a->topology(s.st, n), 0);
	ck_assert(!n->has_links);
	ck_assert_str_eq(a->last_error(s.st), "");
	ck_assert_int_eq(xp_fake.calls, 0);
	xp_fake_file(s.dir, "cnmon-info.txt", "no cards\n", 9, 0644);
	ck_assert_int_eq(a->enumerate(s.st, n), -1);
	ck_assert_ptr_nonnull(strstr(a->last_error(s.st), "Card"));
	xp_fake_close(&s);
}
END_TEST

START_TEST(test_adapter_live)
{
	struct xp_fake_session s;
	xp_fake_open(&s, &xp_adapter_cambricon, false);
	fake_cnmon();
	ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_UNAVAILABLE);
	ck_assert_str_eq(s.why, "no cnmon");

	xp_fake_tool(s.dir, "cnmon");
	ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_ACTIVE);
	char want[4096];
	snprintf(want, sizeof want, "%s/cnmon", s.dir);
	ck_assert_str_eq(xp_fake.argv[0], want);
	ck_assert_int_eq(xp_fake.argc, 2);
	ck_assert_str_eq(xp_fake.argv[1], "info");
	ck_assert_int_eq(s.a->enumerate(s.st, s.n), 0);
	ck_assert_int_eq(s.n->n_devices, 2);
	ck_assert_int_eq(xp_fake.calls, 2);
	xp_fake_close(&s);
}
END_TEST

XP_DEFINE_SUITE(cambricon,
	{"cambricon", .timeout_s = 60,
	 .tests = {test_minimal, test_sections, test_bad_input, test_adapter_replay,
		   test_adapter_live}})
