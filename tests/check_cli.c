/* check_cli.c: the built program, run as a user would, its JSON read back with jansson. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"
#include "xp.h"

#define WHOLEIO "hwloc/32em64t-2n8c2t-pci-wholeio.xml"

static json_t *parse_out(const struct xp_run *r)
{
	json_error_t je;
	json_t *j = json_loads(r->out, 0, &je);
	ck_assert_msg(j != NULL, "output is not JSON: %s (line %d)", je.text, je.line);
	return j;
}

START_TEST(inventory_json)
{
	struct xp_run r;
	char topo[4096];
	snprintf(topo, sizeof topo, "%s", xp_fixture(WHOLEIO));
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--topology", topo, "inventory", "--json", NULL), 0);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_str_eq(r.err, "");
	json_t *j = parse_out(&r);
	ck_assert_str_eq(json_string_value(json_object_get(j, "schema")), "xpool.inventory/v1");
	json_t *nodes = json_object_get(j, "nodes");
	ck_assert_int_eq(json_array_size(nodes), 1);
	json_t *n = json_array_get(nodes, 0);
	ck_assert_str_eq(json_string_value(json_object_get(n, "name")), "conan");
	ck_assert_str_eq(json_string_value(json_object_get(n, "state")), "up");
	json_t *cpu = json_object_get(n, "cpu");
	ck_assert_int_eq(json_integer_value(json_object_get(cpu, "packages")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(cpu, "cores")), 16);
	ck_assert_int_eq(json_integer_value(json_object_get(cpu, "pus")), 32);
	/* 34330173440 + 34359738368 bytes of NUMA memory in the XML */
	ck_assert_int_eq(json_integer_value(json_object_get(n, "memory_mib")),
			 (34330173440LL + 34359738368LL) >> 20);
	ck_assert_int_eq(json_array_size(json_object_get(n, "numa")), 2);
	json_t *devs = json_object_get(n, "devices");
	ck_assert_int_eq(json_array_size(devs), 4);
	json_t *d2 = json_array_get(devs, 2);
	ck_assert_str_eq(json_string_value(json_object_get(d2, "pci_bus_id")), "0000:84:00.0");
	ck_assert_str_eq(json_string_value(json_object_get(d2, "vendor")), "NVIDIA");
	ck_assert_str_eq(json_string_value(json_object_get(d2, "model")), "Tesla K40m");
	ck_assert_str_eq(json_string_value(json_object_get(d2, "pci_id")), "10de:1094");
	ck_assert_int_eq(json_integer_value(json_object_get(d2, "numa")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(d2, "memory_mib")), 11796032 >> 10);
	json_t *links = json_object_get(n, "links");
	ck_assert_int_eq(json_array_size(links), 4);
	ck_assert_str_eq(json_string_value(json_array_get(json_array_get(links, 2), 3)), "PIX");
	ck_assert_str_eq(json_string_value(json_array_get(json_array_get(links, 0), 1)), "SYS");
	ck_assert_str_eq(json_string_value(json_array_get(json_array_get(links, 1), 1)), "X");
	json_decref(j);

	/* The snapshot round trip: what inventory --json writes, --inventory reads back unchanged. */
	char *snap = xp_tmpfile(r.out, strlen(r.out));
	struct xp_run r2;
	ck_assert_int_eq(xp_run_xpool(&r2, NULL, "--inventory", snap, "inventory", "--json", NULL), 0);
	ck_assert_msg(r2.status == 0, "exit %d: %s", r2.status, r2.err);
	ck_assert_str_eq(r2.out, r.out);
	xp_run_free(&r2);
	unlink(snap);
	free(snap);
	xp_run_free(&r);
}
END_TEST

START_TEST(text_output)
{
	struct xp_run r;
	char topo[4096];
	snprintf(topo, sizeof topo, "%s", xp_fixture(WHOLEIO));
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--topology", topo, "inventory", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "conan  up"));
	ck_assert_ptr_nonnull(strstr(r.out, "2 packages, 16 cores, 32 PUs"));
	ck_assert_ptr_nonnull(strstr(r.out, "Accelerators: 4"));
	ck_assert_ptr_nonnull(strstr(r.out, "0000:84:00.0  10de:1094  1"));
	ck_assert_ptr_nonnull(strstr(r.out, "ib0 (RDMA mlx5_0)"));
	xp_run_free(&r);

	ck_assert_int_eq(xp_run_xpool(&r, NULL, "topo", "--topology", topo, NULL), 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "Machine conan: 2 packages"));
	ck_assert_ptr_nonnull(strstr(r.out, "  Package 1: "));
	ck_assert_ptr_nonnull(strstr(r.out, "    NUMA 1: 32.0 GiB, cpus 8-15,24-31"));
	ck_assert_ptr_nonnull(strstr(r.out, "PCI 0000:84:00.0 3D controller [10de:1094]"));
	ck_assert_ptr_nonnull(strstr(r.out, "  ACC2  SYS   PHB   X     PIX   1     pcie:0000:80:03.0"));
	ck_assert_ptr_nonnull(strstr(r.out, "Legend:"));
	xp_run_free(&r);

	/* topo --json: the tree puts each accelerator under its NUMA domain. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--json", "--topology", topo, "topo", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	json_t *j = parse_out(&r);
	json_t *n = json_array_get(json_object_get(j, "nodes"), 0);
	json_t *pk1 = json_array_get(json_object_get(n, "packages"), 1);
	json_t *numa1 = json_array_get(json_object_get(pk1, "numa"), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(numa1, "id")), 1);
	size_t i;
	json_t *p;
	int accs = 0;
	json_array_foreach(json_object_get(numa1, "pci"), i, p)
		if (json_is_integer(json_object_get(p, "accelerator")))
			accs++;
	ck_assert_int_eq(accs, 3);
	json_decref(j);
	xp_run_free(&r);
}
END_TEST

START_TEST(multi_node_snapshot)
{
	/* Two discovered machines joined into one snapshot: the summary lists both. */
	struct xp_run a, b;
	char t1[4096], t2[4096];
	snprintf(t1, sizeof t1, "%s", xp_fixture(WHOLEIO));
	snprintf(t2, sizeof t2, "%s", xp_fixture("hwloc/24em64t-2n6c2t-pci.xml"));
	ck_assert_int_eq(xp_run_xpool(&a, NULL, "--topology", t1, "inventory", "--json", NULL), 0);
	ck_assert_int_eq(xp_run_xpool(&b, NULL, "--topology", t2, "inventory", "--json", NULL), 0);
	ck_assert_int_eq(a.status | b.status, 0);
	json_t *ja = json_loads(a.out, 0, NULL), *jb = json_loads(b.out, 0, NULL);
	json_array_extend(json_object_get(ja, "nodes"), json_object_get(jb, "nodes"));
	char *text = json_dumps(ja, 0);
	char *snap = xp_tmpfile(text, strlen(text));
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", snap, "inventory", NULL), 0);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "NODE"));
	ck_assert_ptr_nonnull(strstr(r.out, "conan"));
	ck_assert_ptr_nonnull(strstr(r.out, "mirage004"));
	ck_assert_ptr_nonnull(strstr(r.out, "2 nodes, 7 accelerators"));
	xp_run_free(&r);
	/* One node by name, and a name that is not there. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", snap, "inventory", "conan", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "Accelerators: 4"));
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", snap, "inventory", "nope", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_ERROR);
	ck_assert_str_eq(r.err, "xpool: inventory: no node named nope\n");
	xp_run_free(&r);

	/* A duplicated node name is rejected, naming the path. */
	json_array_append(json_object_get(ja, "nodes"), json_array_get(json_object_get(ja, "nodes"), 0));
	char *dup = json_dumps(ja, 0);
	char *snap2 = xp_tmpfile(dup, strlen(dup));
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", snap2, "inventory", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_ERROR);
	ck_assert_ptr_nonnull(strstr(r.err, snap2));
	ck_assert_ptr_nonnull(strstr(r.err, "$.nodes[2]"));
	xp_run_free(&r);
	unlink(snap);
	unlink(snap2);
	free(snap);
	free(snap2);
	free(text);
	free(dup);
	json_decref(ja);
	json_decref(jb);
	xp_run_free(&a);
	xp_run_free(&b);
}
END_TEST

/* Every kind of bad input: a one-line error naming what was wrong, the right exit code, no crash. */
START_TEST(bad_input)
{
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "frobnicate", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_USAGE);
	ck_assert_str_eq(r.err, "xpool: unknown command: frobnicate (try 'xpool help')\n");
	xp_run_free(&r);

	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--frob", "inventory", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_USAGE);
	ck_assert_str_eq(r.err, "xpool: unknown option --frob (try 'xpool help')\n");
	xp_run_free(&r);

	ck_assert_int_eq(xp_run_xpool(&r, NULL, "inventory", "--frob", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_USAGE);
	ck_assert_str_eq(r.err, "xpool: inventory: unknown option --frob\n");
	xp_run_free(&r);

	ck_assert_int_eq(xp_run_xpool(&r, NULL, "inventory", "--topology", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_USAGE);
	ck_assert_str_eq(r.err, "xpool: inventory: option --topology needs a FILE\n");
	xp_run_free(&r);

	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--topology", "/nonexistent/t.xml", "topo", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_ERROR);
	ck_assert_str_eq(r.err, "xpool: /nonexistent/t.xml: No such file or directory\n");
	xp_run_free(&r);

	static const char junk[] = "<topology version=\"2.0\"><object type=";
	char *bad = xp_tmpfile(junk, sizeof junk - 1);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--topology", bad, "inventory", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_ERROR);
	ck_assert_ptr_nonnull(strstr(r.err, bad));
	ck_assert_ptr_null(strchr(strchr(r.err, '\n') + 1, '\n')); /* one line */
	xp_run_free(&r);
	unlink(bad);
	free(bad);

	static const char trunc[] = "{\"schema\": \"xpool.inventory/v1\", \"nodes\": [{\"name\": \"a\",";
	bad = xp_tmpfile(trunc, sizeof trunc - 1);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", bad, "inventory", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_ERROR);
	ck_assert_ptr_nonnull(strstr(r.err, bad));
	xp_run_free(&r);
	unlink(bad);
	free(bad);

	static const char wrong[] = "{\"schema\": \"xpool.inventory/v1\", \"nodes\": [{\"name\": \"a\","
				    " \"devices\": [{\"index\": 0, \"numa\": \"zero\"}]}]}";
	bad = xp_tmpfile(wrong, sizeof wrong - 1);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", bad, "inventory", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_ERROR);
	ck_assert_ptr_nonnull(strstr(r.err, "$.nodes[0].devices[0].numa"));
	xp_run_free(&r);
	unlink(bad);
	free(bad);

	ck_assert_int_eq(xp_run_xpool(&r, NULL, "-b", "/nonexistent/script", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_ERROR);
	ck_assert_str_eq(r.err, "xpool: /nonexistent/script: No such file or directory\n");
	xp_run_free(&r);

	ck_assert_int_eq(xp_run_xpool(&r, NULL, "help", "nope", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_USAGE);
	xp_run_free(&r);
}
END_TEST

START_TEST(batch_and_help)
{
	struct xp_run r;
	char script[8192];
	snprintf(script, sizeof script,
		 "# inventory twice from one discovery\n"
		 "inventory --topology %s --json\n"
		 "version\n"
		 "nosuch\n"
		 "version\n",
		 xp_fixture(WHOLEIO));
	ck_assert_int_eq(xp_run_xpool(&r, script, "-b", "-", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_USAGE);
	ck_assert_str_eq(r.err, "xpool: <stdin>:4: unknown command: nosuch (try 'xpool help')\n");
	ck_assert_ptr_nonnull(strstr(r.out, "\"schema\": \"xpool.inventory/v1\""));
	/* exactly one version line: the run stopped at line 4 */
	const char *v1 = strstr(r.out, "xpool " XP_VERSION "\n");
	ck_assert_ptr_nonnull(v1);
	ck_assert_ptr_null(strstr(v1 + 1, "xpool " XP_VERSION "\n"));
	xp_run_free(&r);

	ck_assert_int_eq(xp_run_xpool(&r, script, "-k", "-b", "-", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_USAGE);
	v1 = strstr(r.out, "xpool " XP_VERSION "\n");
	ck_assert_ptr_nonnull(v1);
	ck_assert_ptr_nonnull(strstr(v1 + 1, "xpool " XP_VERSION "\n"));
	xp_run_free(&r);

	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--version", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "xpool " XP_VERSION "\n");
	xp_run_free(&r);

	ck_assert_int_eq(xp_run_xpool(&r, NULL, "help", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "  inventory "));
	ck_assert_ptr_nonnull(strstr(r.out, "  topo "));
	ck_assert_ptr_nonnull(strstr(r.out, "--topology FILE"));
	xp_run_free(&r);

	ck_assert_int_eq(xp_run_xpool(&r, NULL, "help", "topo", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "usage: xpool topo [--json] [--all] [NODE]"));
	ck_assert_ptr_nonnull(strstr(r.out, "-a, --all"));
	xp_run_free(&r);

	/* Without a terminal and without a command: the summary, never a hang. */
	char topo[4096];
	snprintf(topo, sizeof topo, "%s", xp_fixture(WHOLEIO));
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--topology", topo, NULL), 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "Accelerators: 4"));
	xp_run_free(&r);
}
END_TEST

Suite *xp_suite_cli(void);
Suite *xp_suite_cli(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("binary");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, inventory_json);
	tcase_add_test(tc, text_output);
	tcase_add_test(tc, multi_node_snapshot);
	tcase_add_test(tc, bad_input);
	tcase_add_test(tc, batch_and_help);
	suite_add_tcase(s, tc);
	return s;
}
