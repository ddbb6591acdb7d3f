/* check_fuzz_vendor.c: what the fuzzers of vendor and engine outputs found (tests/fuzz/, the
 * inputs kept in tests/fuzz/regress/), each as a named test beside its replay. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "local/hwloc_xml.h"
#include "node_act.h"
#include "suitelib.h"
#include "testlib.h"
#include "xp.h"

/* `scontrol show config` whose SlurmUser value is not a user name: NUL bytes made it "", and
 * control bytes would reach the console in the refusal that quotes it. */
START_TEST(test_slurm_user_not_a_name)
{
	static const char nul[] = "SlurmUser               = \0\0root(0)\n";
	ck_assert_ptr_null(xp_slurm_config_user(nul, sizeof nul - 1));
	ck_assert_ptr_null(xp_slurm_config_user("SlurmUser = ro\033[2Jot(0)\n", 24));
	ck_assert_ptr_null(xp_slurm_config_user("SlurmUser = r\xe2\x80\xaeoot(0)\n", 22));
	char *u = xp_slurm_config_user("SlurmUser = slurm-svc.2$(64030)\n", 32);
	ck_assert_str_eq(u, "slurm-svc.2$");
	free(u);
}
END_TEST

/* Text, an element hwloc does not know, or an info without a value among an object's children:
 * libhwloc leaks the object it was importing; the check refuses each naming the line, and still
 * passes every recorded topology (whose distance matrices hold text where hwloc reads it). */
START_TEST(test_hwloc_text_in_object)
{
	static const char doc[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
				  "<topology version=\"2.0\">\n"
				  "  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\">\n"
				  "  +\n"
				  "    <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\"/>\n"
				  "  </object>\n"
				  "</topology>\n";
	char *out = NULL;
	size_t n = 0;
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_hwloc_xml_check("t.xml", doc, sizeof doc - 1, &out, &n, &err), -1);
	ck_assert_msg(strncmp(err.msg, "t.xml: line ", 12) == 0 && strstr(err.msg, ": text inside <object>"), "%s", err.msg);
	ck_assert_ptr_null(out);
	/* An element hwloc does not know among an object's children: the same leak. */
	static const char other[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
				    "<topology version=\"2.0\">\n"
				    "  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\">\n"
				    "    <orject type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\"/>\n"
				    "  </object>\n"
				    "</topology>\n";
	ck_assert_int_eq(xp_hwloc_xml_check("t.xml", other, sizeof other - 1, &out, &n, &err), -1);
	ck_assert_msg(strstr(err.msg, "t.xml: line 4: <orject> inside an object"), "%s", err.msg);
	/* An <info> without its value: the same leak. */
	static const char info[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
				   "<topology version=\"2.0\">\n"
				   "  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\">\n"
				   "    <info name=\"Backend\" valoue=\"OpenCL\"/>\n"
				   "    <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\"/>\n"
				   "  </object>\n"
				   "</topology>\n";
	ck_assert_int_eq(xp_hwloc_xml_check("t.xml", info, sizeof info - 1, &out, &n, &err), -1);
	ck_assert_msg(strstr(err.msg, "t.xml: line 4: <info> without a name or a value"), "%s", err.msg);
	/* A NUMA node without an os_index: hwloc sized a nodeset for index 2^32-1 (512 MiB). */
	static const char numa[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
				   "<topology version=\"2.0\">\n"
				   "  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\">\n"
				   "    <object type=\"NUMANode\" cpuset=\"0x1\" complete_cpuset=\"0x1\""
				   " nodeset=\"0x1\" complete_nodeset=\"0x1\"/>\n"
				   "    <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\"/>\n"
				   "  </object>\n"
				   "</topology>\n";
	ck_assert_int_eq(xp_hwloc_xml_check("t.xml", numa, sizeof numa - 1, &out, &n, &err), -1);
	ck_assert_msg(strstr(err.msg, "t.xml: line 4: object NUMANode without an os_index"), "%s", err.msg);
	/* An object whose type is not its first attribute, or one hwloc does not know: its
	 * importer gives up there, leaking the object. Old names it maps pass. */
	static const char *const types[][2] = {
		{"tye=\"Package\" os_index=\"0\"", "line 4: object without its type as the first attribute"},
		{"os_index=\"0\" type=\"Package\"", "line 4: object without its type as the first attribute"},
		{"type=\"Gizmo\"", "line 4: object of type Gizmo hwloc does not know"},
		{"type=\"Pac0001\"", NULL}, /* hwloc takes a name's first letters: Package */
		{"type=\"System\"", "line 4: object of type System hwloc does not know"}, /* only at the root */
		{"type=\"Socket\" os_index=\"0\"", NULL}, {"type=\"Cache\" depth=\"2\"", NULL},
		{"type=\"Tile\"", NULL}, {"type=\"Module\"", NULL}, {"type=\"L2Cache\" cache_size=\"1024\"", NULL},
	};
	for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
		char *d = xp_asprintf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<topology version=\"2.0\">\n"
					"  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\">\n"
					"    <object %s cpuset=\"0x1\" complete_cpuset=\"0x1\">\n"
					"      <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\"/>\n"
					"    </object>\n  </object>\n</topology>\n",
					types[i][0]);
		int rc = xp_hwloc_xml_check("t.xml", d, strlen(d), &out, &n, &err);
		if (types[i][1]) {
			ck_assert_msg(rc == -1 && strstr(err.msg, types[i][1]), "%s: %s", types[i][0], err.msg);
		} else {
			ck_assert_msg(rc == 0, "%s: %s", types[i][0], err.msg);
			free(out);
			out = NULL;
		}
		free(d);
	}
	DIR *d = opendir(xp_fixture("hwloc"));
	ck_assert_ptr_nonnull(d);
	int seen = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		if (l < 5 || strcmp(e->d_name + l - 4, ".xml"))
			continue;
		char rel[300];
		snprintf(rel, sizeof rel, "hwloc/%s", e->d_name);
		size_t len;
		char *text = xp_read_file(xp_fixture(rel), 64u << 20, &len, &err);
		ck_assert_msg(text, "%s", err.msg);
		ck_assert_msg(xp_hwloc_xml_check(rel, text, len, &out, &n, &err) == 0, "%s", err.msg);
		free(out);
		free(text);
		seen++;
	}
	closedir(d);
	ck_assert_int_ge(seen, 12);
}
END_TEST

/* A cpuset or nodeset that is not a bitmap as hwloc writes one: a leading comma failed an
 * assertion in libhwloc 2.9's bitmap reader (xpool --topology aborted without a word); signs,
 * spaces and wide words it took silently. The shapes hwloc writes pass, empty zero words too. */
START_TEST(test_hwloc_bitmap_text)
{
	static const struct {
		const char *set;
		bool ok;
	} cases[] = {
		{"0x00000003", true}, {"0x3", true}, {"0xf...f", true}, {"0xf...f,0xfffffff0", true},
		{"0x00000001,,,,,,,0x0", true}, {"0x00000001,,0x00000001,,0x0", true}, {"0x1,", true},
		{"0xf...f,,0x0", true}, {"0xf...f,", true}, {"000000ff", true}, {"0", true}, {"3", true},
		{"ff,00000001", true}, /* hwloc 0.9 wrote the words without 0x */
		{",x3", false}, {",0x3", false}, {"", false}, {",", false}, {"x3", false}, {"0x", false},
		{"0x,0x1", false}, {" 0x3", false}, {"-0x3", false}, {"+0x3", false}, {"0x123456789", false},
		{"123456789", false}, {"0x3 ", false}, {"0x3,x1", false}, {"0xf...fff", false}, {"0M-Y1", false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		for (int attr = 0; attr < 2; attr++) {
			char *doc = xp_asprintf(
				"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<topology version=\"2.0\">\n"
				"  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"%s\""
				" nodeset=\"0x1\" complete_nodeset=\"0x1\" allowed_nodeset=\"%s\">\n"
				"    <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\""
				" nodeset=\"0x1\" complete_nodeset=\"0x1\"/>\n  </object>\n</topology>\n",
				attr ? "0x1" : cases[i].set, attr ? cases[i].set : "0x1");
			char *out = NULL;
			size_t n = 0;
			struct xp_err err = {{0}};
			int rc = xp_hwloc_xml_check("t.xml", doc, strlen(doc), &out, &n, &err);
			if (cases[i].ok) {
				ck_assert_msg(rc == 0, "'%s': %s", cases[i].set, err.msg);
				free(out);
			} else {
				ck_assert_msg(rc == -1, "'%s' passed", cases[i].set);
				ck_assert_msg(strstr(err.msg, "t.xml: line 3: attribute ") &&
						      strstr(err.msg, attr ? "allowed_nodeset" : "complete_cpuset") &&
						      strstr(err.msg, "is not a bitmap as hwloc writes one"),
					      "'%s': %s", cases[i].set, err.msg);
			}
			free(doc);
		}
	}
}
END_TEST

XP_DEFINE_SUITE(fuzz_vendor, {"found", .timeout_s = 60,
			      .tests = {test_slurm_user_not_a_name, test_hwloc_text_in_object, test_hwloc_bitmap_text}})
