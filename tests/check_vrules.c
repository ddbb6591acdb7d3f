/* check_vrules.c: validation rules a review asked for: no ':' inside id fields, no
 * terminal controls in evidence, imports obey the layer rule, evidence gets a node. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "suitelib.h"
#include "testlib.h"
#include "validate.h"

static struct xp_store *open_mem(void)
{
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_open(":memory:", &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	return s;
}

START_TEST(id_fields_and_text)
{
	struct xp_store *s = open_mem();
	struct xp_err err = {{0}};
	struct xp_env e = {.vendor = "V:x", .model = "M", .driver = "1"};
	ck_assert_int_eq(xp_validate_env_declare(s, &e, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "holds ':'"));
	struct xp_env ok = {.vendor = "V", .model = "M", .driver = "1"};
	ck_assert_int_ge(xp_validate_env_declare(s, &ok, &err), 0);
	struct xp_case c = {.name = "c1"};
	ck_assert_int_eq(xp_validate_case_add(s, &c, &err), 0);
	/* U+009B (CSI), invalid UTF-8 and a bidi override are refused; plain UTF-8 is fine. */
	ck_assert_int_eq(xp_validate_record(s, "V:M:1", "c1", XP_LAYER_DISCOVERED, XP_V_FAIL, "\xc2\x9b" "31m", NULL,
					   NULL, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "control character"));
	ck_assert_int_eq(xp_validate_record(s, "V:M:1", "c1", XP_LAYER_DISCOVERED, XP_V_FAIL, "\xff\xfe", NULL, NULL,
					   &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "not valid UTF-8"));
	ck_assert_int_eq(xp_validate_record(s, "V:M:1", "c1", XP_LAYER_DISCOVERED, XP_V_FAIL, "a\xe2\x80\xae" "b", NULL,
					   NULL, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "bidirectional"));
	ck_assert_int_eq(xp_validate_record(s, "V:M:1", "c1", XP_LAYER_DISCOVERED, XP_V_FAIL, "température ok", NULL,
					   NULL, &err), 0);
	xp_store_close(s);
}
END_TEST

START_TEST(import_layer_rule)
{
	struct xp_store *s = open_mem();
	struct xp_err err = {{0}};
	char doc[1024];
	snprintf(doc, sizeof doc,
		 "{\"schema\": \"%s\", \"environments\": [{\"id\": \"V:M:1\", \"vendor\": \"V\", \"model\": \"M\","
		 " \"driver\": \"1\"}], \"cases\": [{\"name\": \"c1\"}], \"results\": ["
		 "{\"env\": \"V:M:1\", \"case\": \"c1\", \"layer\": \"accepted\", \"status\": \"pass\", \"time\": 100,"
		 " \"actor\": \"x\"}]}",
		 XP_VALIDATE_SCHEMA);
	ck_assert_int_eq(xp_validate_import(s, doc, strlen(doc), "imp.json", &err), -1);
	ck_assert_msg(strstr(err.msg, "accepted pass above discovered untested") != NULL, "%s", err.msg);
	struct xp_matrix m;
	ck_assert_int_eq(xp_validate_matrix(s, &m, &err), 0);
	ck_assert_uint_eq(m.n_envs, 0); /* all or nothing */
	xp_matrix_free(&m);
	/* A time in the future is refused too. */
	snprintf(doc, sizeof doc,
		 "{\"schema\": \"%s\", \"environments\": [], \"cases\": [{\"name\": \"c2\"}], \"results\": ["
		 "{\"env\": \"V:M:1\", \"case\": \"c2\", \"layer\": \"discovered\", \"status\": \"fail\","
		 " \"time\": 4611686018427387904, \"actor\": \"x\"}]}",
		 XP_VALIDATE_SCHEMA);
	ck_assert_int_eq(xp_validate_import(s, doc, strlen(doc), "imp.json", &err), -1);
	xp_store_close(s);
}
END_TEST

/* Through the program: with one node in the inventory, evidence defaults to it (so it can
 * turn stale); with a replay of one node the record names it. */
START_TEST(record_defaults_node)
{
	char dir[128], db[192], topo[4096];
	snprintf(dir, sizeof dir, "/tmp/xpool-vrules-%d", (int)getpid());
	/* In a folder of its own: xpool refuses a database straight in /tmp (check_files). */
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(db, sizeof db, "%s/x.db", dir);
	snprintf(topo, sizeof topo, "%s", xp_fixture("hwloc/32em64t-2n8c2t-pci-wholeio.xml"));
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "validate", "env", "declare", "V", "M", "1", NULL), 0);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "validate", "case", "add", "c1", NULL), 0);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--topology", topo, "validate", "record", "V:M:1", "c1",
				      "discovered", "pass", NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--topology", topo, "validate", "history", "V:M:1", "c1",
				      "--json", NULL), 0);
	ck_assert_ptr_nonnull(strstr(r.out, "\"node\": \"conan\""));
	xp_run_free(&r);
	xp_rm_rf(dir);
}
END_TEST

XP_DEFINE_SUITE(vrules,
	{"core", .timeout_s = 60,
	 .tests = {id_fields_and_text, import_layer_rule, record_defaults_node}})
