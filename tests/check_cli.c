/* check_cli.c: the built program, run as a user would, its JSON read back with jansson. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checklib.h"
#include "cluster.h"
#include "sha256.h"
#include "suitelib.h"
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
	xp_want_parts(r.out, "conan  up", "2 packages, 16 cores, 32 PUs", "Accelerators: 4",
		      "0000:84:00.0  10de:1094  1", "ib0 (RDMA mlx5_0)", NULL);
	xp_run_free(&r);

	ck_assert_int_eq(xp_run_xpool(&r, NULL, "topo", "--topology", topo, NULL), 0);
	ck_assert_int_eq(r.status, 0);
	xp_want_parts(r.out, "Machine conan: 2 packages", "  Package 1: ",
		      "    NUMA 1: 32.0 GiB, cpus 8-15,24-31", "PCI 0000:84:00.0 3D controller [10de:1094]",
		      "  ACC2  SYS   PHB   X     PIX   1     pcie:0000:80:03.0", "Legend:", NULL);
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
	xp_want_parts(r.out, "NODE", "conan", "mirage004", "2 nodes, 7 accelerators", NULL);
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
	static const struct {
		const char *args[4]; /* after the program name; the rest NULL */
		int status;
		const char *err;     /* all of stderr; NULL: not checked */
	} runs[] = {
		{{"frobnicate"}, XP_EXIT_USAGE, "xpool: unknown command: frobnicate (try 'xpool help')\n"},
		{{"--frob", "inventory"}, XP_EXIT_USAGE, "xpool: unknown option --frob (try 'xpool help')\n"},
		{{"inventory", "--frob"}, XP_EXIT_USAGE, "xpool: inventory: unknown option --frob\n"},
		{{"inventory", "--topology"}, XP_EXIT_USAGE,
		 "xpool: inventory: option --topology needs a FILE\n"},
		{{"--topology", "/nonexistent/t.xml", "topo"}, XP_EXIT_ERROR,
		 "xpool: /nonexistent/t.xml: No such file or directory\n"},
		{{"-b", "/nonexistent/script"}, XP_EXIT_ERROR,
		 "xpool: /nonexistent/script: No such file or directory\n"},
		{{"help", "nope"}, XP_EXIT_USAGE, NULL},
	};
	struct xp_run r;
	for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
		const char *argv[6] = {xp_bin()};
		memcpy(argv + 1, runs[i].args, sizeof runs[i].args);
		ck_assert_int_eq(xp_run_argv(&r, (char *const *)argv, NULL), 0);
		ck_assert_msg(r.status == runs[i].status, "xpool %s ...: exit %d, want %d", runs[i].args[0],
			      r.status, runs[i].status);
		if (runs[i].err)
			ck_assert_str_eq(r.err, runs[i].err);
		xp_run_free(&r);
	}

	/* Damaged input files: one error naming the file, or the JSON path of the bad value. */
	static const struct {
		const char *option, *text;
		const char *names; /* what stderr must name; NULL: the file's path */
	} files[] = {
		{"--topology", "<topology version=\"2.0\"><object type="},
		{"--inventory", "{\"schema\": \"xpool.inventory/v1\", \"nodes\": [{\"name\": \"a\","},
		{"--inventory",
		 "{\"schema\": \"xpool.inventory/v1\", \"nodes\": [{\"name\": \"a\","
		 " \"devices\": [{\"index\": 0, \"numa\": \"zero\"}]}]}",
		 "$.nodes[0].devices[0].numa"},
	};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char *bad = xp_tmpfile(files[i].text, strlen(files[i].text));
		ck_assert_int_eq(xp_run_xpool(&r, NULL, files[i].option, bad, "inventory", NULL), 0);
		ck_assert_int_eq(r.status, XP_EXIT_ERROR);
		ck_assert_ptr_nonnull(strstr(r.err, files[i].names ? files[i].names : bad));
		ck_assert_ptr_null(strchr(strchr(r.err, '\n') + 1, '\n')); /* one line */
		xp_run_free(&r);
		unlink(bad);
		free(bad);
	}
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
	xp_want_parts(r.out, "  inventory ", "  topo ", "--topology FILE", NULL);
	xp_run_free(&r);

	ck_assert_int_eq(xp_run_xpool(&r, NULL, "help", "topo", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	xp_want_parts(r.out, "usage: xpool topo [--json] [--all] [NODE]", "-a, --all", NULL);
	xp_run_free(&r);

	/* `COMMAND --help` is `help COMMAND`, as in every other tool; `help --help` the summary. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "topo", "--help", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	xp_want_parts(r.out, "usage: xpool topo [--json] [--all] [NODE]", "-a, --all", NULL);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "help", "--help", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	xp_want_parts(r.out, "  inventory ", "  topo ", NULL);
	xp_run_free(&r);

	/* A single-valued option twice: refused, naming both values; the same value twice is fine. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "place", "--dry-run", "--strategy", "pack", "--strategy", "spread",
				      NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_USAGE);
	ck_assert_str_eq(r.err, "xpool: place: option --strategy given twice (pack, then spread): give it once\n");
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

/* Runs xpool with stdout on /dev/full; returns the exit code, stderr in *err (caller frees). */
static int run_to_full(char **errout, const char *a1, const char *a2, const char *a3, const char *a4)
{
	int pe[2];
	ck_assert_int_eq(pipe(pe), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open("/dev/full", O_WRONLY);
		dup2(fd, 1);
		dup2(pe[1], 2);
		close(pe[0]);
		const char *argv[] = {xp_bin(), a1, a2, a3, a4, NULL};
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(pe[1]);
	char buf[4096];
	size_t n = 0;
	ssize_t k;
	while ((k = read(pe[0], buf + n, sizeof buf - 1 - n)) > 0)
		n += (size_t)k;
	buf[n] = '\0';
	close(pe[0]);
	int st;
	waitpid(pid, &st, 0);
	*errout = strdup(buf);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Problems a review found, each kept from coming back. */
START_TEST(review_regressions)
{
	struct xp_run r;
	char topo[4096];
	snprintf(topo, sizeof topo, "%s", xp_fixture(WHOLEIO));

	/* An option after a batch line's command lasts for that line only. */
	ck_assert_int_eq(xp_run_xpool(&r, "inventory --json\ninventory\n", "--topology", topo, "-b", "-", NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_want_parts(r.out, "\"schema\"", "conan  up", NULL);
	xp_run_free(&r);

	/* A snapshot through a pipe. */
	struct xp_run j;
	ck_assert_int_eq(xp_run_xpool(&j, NULL, "--topology", topo, "inventory", "--json", NULL), 0);
	ck_assert_int_eq(xp_run_xpool(&r, j.out, "--inventory", "-", "inventory", NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "Accelerators: 4"));
	xp_run_free(&r);

	/* A NIC without a name, and a terminal escape in a model name, are refused by path. */
	json_t *doc = json_loads(j.out, 0, NULL);
	json_t *node = json_array_get(json_object_get(doc, "nodes"), 0);
	json_object_set_new(json_array_get(json_object_get(node, "nics"), 2), "name", json_null());
	char *text = json_dumps(doc, 0);
	ck_assert_int_eq(xp_run_xpool(&r, text, "--inventory", "-", "inventory", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_ERROR);
	ck_assert_ptr_nonnull(strstr(r.err, "$.nodes[0].nics[2].name"));
	xp_run_free(&r);
	free(text);
	json_object_set_new(json_array_get(json_object_get(node, "nics"), 2), "name", json_string("ib0"));
	json_object_set_new(json_array_get(json_object_get(node, "devices"), 1), "model",
			    json_string("\x1b]0;PWNED\x07"));
	text = json_dumps(doc, 0);
	ck_assert_int_eq(xp_run_xpool(&r, text, "--inventory", "-", "inventory", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_ERROR);
	xp_want_parts(r.err, "$.nodes[0].devices[1].model", "control characters", NULL);
	ck_assert_ptr_null(strchr(r.err, 0x1b));
	xp_run_free(&r);
	free(text);
	json_decref(doc);
	xp_run_free(&j);

	/* A full disk is an error, for every command. */
	static const char *const cmds[] = {"inventory", "topo", "help", "version"};
	for (size_t i = 0; i < 4; i++) {
		char *err = NULL;
		int rc = run_to_full(&err, "--topology", topo, cmds[i], NULL);
		ck_assert_msg(rc == XP_EXIT_ERROR, "%s > /dev/full: exit %d", cmds[i], rc);
		ck_assert_msg(strstr(err, "writing output") != NULL, "%s: %s", cmds[i], err);
		free(err);
	}

	/* Odd arguments get clear one-line messages. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_USAGE);
	ck_assert_str_eq(r.err, "xpool: empty command name (try 'xpool help')\n");
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "-b", "", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(r.err, "option -b needs a FILE"));
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "-b", "/tmp", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_ERROR);
	ck_assert_str_eq(r.err, "xpool: /tmp: is a directory, not a script\n");
	xp_run_free(&r);

	/* -q: the command runs, only errors print. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "-q", "--topology", topo, "inventory", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "");
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "-q", "--inventory", "/nonexistent.json", "inventory", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_ERROR);
	ck_assert_ptr_nonnull(strstr(r.err, "/nonexistent.json"));
	xp_run_free(&r);
}
END_TEST

/* A host name that is not UTF-8 (hwloc's own XML reader lets it through) must not
 * make the node vanish from topo --json, nor reach a terminal as a raw byte. */
START_TEST(topo_json_bad_utf8)
{
	size_t len;
	struct xp_err err = {{0}};
	char *xml = xp_read_file(xp_fixture(WHOLEIO), 1 << 24, &len, &err);
	ck_assert_ptr_nonnull(xml);
	char *h = strstr(xml, "value=\"conan\"");
	ck_assert_ptr_nonnull(h);
	h[10] = (char)0xe9; /* "cona\xe9" */
	char *tmp = xp_tmpfile(xml, len);
	setenv("HWLOC_LIBXML_IMPORT", "0", 1);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--topology", tmp, "topo", "--json", NULL), 0);
	unsetenv("HWLOC_LIBXML_IMPORT");
	unlink(tmp);
	ck_assert_msg(r.status == 0, "%s", r.err);
	json_t *j = parse_out(&r);
	json_t *nodes = json_object_get(j, "nodes");
	ck_assert_int_eq(json_array_size(nodes), 1);
	/* Discovery cleans names: a byte that is not UTF-8 becomes '?'. */
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(nodes, 0), "name")), "con?n");
	json_decref(j);
	xp_run_free(&r);
	free(tmp);
	free(xml);
}
END_TEST

/* Unicode bidirectional controls (U+202E and friends) never reach the terminal as they are:
 * a discovered name shows '?' for each, an error message too, a snapshot refuses them. */
START_TEST(bidi_masked)
{
	static const char rlo[] = "\xe2\x80\xae";
	/* The host name of a real fixture, with an override and an isolate in it. */
	size_t len;
	struct xp_err err = {{0}};
	char *xml = xp_read_file(xp_fixture(WHOLEIO), 1 << 24, &len, &err);
	ck_assert_ptr_nonnull(xml);
	char *at = strstr(xml, "value=\"conan\"");
	ck_assert_ptr_nonnull(at);
	char *edited = xp_asprintf("%.*svalue=\"co%snan\xe2\x81\xa7x\"%s", (int)(at - xml), xml, rlo,
				   at + strlen("value=\"conan\""));
	char *topo = xp_tmpfile(edited, strlen(edited));
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--topology", topo, "inventory", NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_want_parts(r.out, "co?nan?x  up", NULL);
	ck_assert_ptr_null(strstr(r.out, rlo));
	xp_run_free(&r);
	/* A snapshot naming a device model with one is refused, and the message shows none. */
	struct xp_run j;
	ck_assert_int_eq(xp_run_xpool(&j, NULL, "--topology", xp_fixture(WHOLEIO), "inventory", "--json", NULL), 0);
	json_t *doc = json_loads(j.out, 0, NULL);
	json_t *node = json_array_get(json_object_get(doc, "nodes"), 0);
	char *model = xp_asprintf("H100%sevil", rlo);
	json_object_set_new(json_array_get(json_object_get(node, "devices"), 1), "model", json_string(model));
	char *text = json_dumps(doc, 0);
	ck_assert_int_eq(xp_run_xpool(&r, text, "--inventory", "-", "inventory", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_ERROR);
	xp_want_parts(r.err, "$.nodes[0].devices[1].model", "bidirectional controls (U+202E at 4)", NULL);
	xp_run_free(&r);
	/* An error message quoting a file name with one. */
	char *missing = xp_asprintf("/nonexistent/a%sb.xml", rlo);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--topology", missing, "inventory", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_ERROR);
	xp_want_parts(r.err, "/nonexistent/a?b.xml", NULL);
	ck_assert_ptr_null(strstr(r.err, rlo));
	xp_run_free(&r);
	free(missing);
	/* C1 controls: an 8-bit CSI as a raw byte and as UTF-8 (U+009B), an OSC (U+009D). */
	missing = xp_strdup("/nonexistent/x\x9b" "31mY\xc2\x9b" "2J\xc2\x9d" "0;t.xml");
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--topology", missing, "inventory", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_ERROR);
	xp_want_parts(r.err, "/nonexistent/x?31mY?2J?0;t.xml", NULL);
	ck_assert_ptr_null(strchr(r.err, '\x9b'));
	ck_assert_ptr_null(strchr(r.err, '\xc2'));
	xp_run_free(&r);
	free(missing);
	free(text);
	free(model);
	json_decref(doc);
	xp_run_free(&j);
	remove(topo);
	free(topo);
	free(edited);
	free(xml);
}
END_TEST

/* ---------- `xpool sim trace` and `xpool whatif` (issue 16) ---------- */

/* Runs xpool with up to 20 arguments; the caller frees r. */
static void run_args(struct xp_run *r, const char *first, ...)
{
	const char *argv[24] = {xp_bin(), first};
	int n = 2;
	va_list ap;
	va_start(ap, first);
	for (const char *a; n < 22 && (a = va_arg(ap, const char *));)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	ck_assert_int_eq(xp_run_argv(r, (char *const *)argv, NULL), 0);
}

#define EXPECT_RUN(status_, err_, ...)                                                             \
	do {                                                                                       \
		struct xp_run r_;                                                                  \
		run_args(&r_, __VA_ARGS__, NULL);                                                  \
		ck_assert_msg(r_.status == (status_), "exit %d, want %d: %s", r_.status, (status_), r_.err); \
		ck_assert_msg(strstr(r_.err, (err_)) != NULL, "stderr '%s' lacks '%s'", r_.err, (err_)); \
		xp_run_free(&r_);                                                                  \
	} while (0)

/* Usage errors exit 2 and say which option; runtime errors (a file, a node) exit 1. */
START_TEST(sim_trace_whatif_errors)
{
	char *sim = xp_test_sim_file(16, 1);
	char trace[4096];
	snprintf(trace, sizeof trace, "%s", xp_fixture("traces/day16.jsonl"));
	EXPECT_RUN(2, "sim trace: --jobs N is required", "sim", "trace");
	EXPECT_RUN(2, "sim trace: --jobs: '0' is not a number from 1 to 2000000", "sim", "trace", "--jobs", "0");
	EXPECT_RUN(2, "sim trace: --mix: the percentages add up to 50, not 100", "sim", "trace", "--jobs", "5", "--mix",
		   "train:50");
	EXPECT_RUN(2, "sim trace: --load: 'x' is not a number above 0", "sim", "trace", "--jobs", "5", "--load", "x");
	EXPECT_RUN(2, "sim trace: option --nodes does not apply", "sim", "trace", "--jobs", "5", "--nodes", "3");
	EXPECT_RUN(2, "sim gen: option --jobs does not apply", "sim", "gen", "--nodes", "3", "--jobs", "5");
	EXPECT_RUN(2, "whatif: give the workload: --trace FILE or --jobs-from-store", "whatif");
	EXPECT_RUN(2, "whatif: give the workload: --trace FILE or --jobs-from-store (one of them, not both)", "whatif",
		   "--trace", trace, "--jobs-from-store");
	EXPECT_RUN(2, "whatif: give the workload", "whatif", "--drain", "h100-00001");
	EXPECT_RUN(2, "whatif: --horizon: '5x' is not a duration", "whatif", "--trace", trace, "--horizon", "5x");
	EXPECT_RUN(2, "whatif: --fail: 'n0' is not NODE:DEVICE", "whatif", "--trace", trace, "--fail", "n0");
	EXPECT_RUN(2, "whatif: --add: '0:nvidia-h100' is not N:KIND", "whatif", "--trace", trace, "--add", "0:nvidia-h100");
	EXPECT_RUN(2, "whatif: --strategy: unknown strategy 'best'", "whatif", "--trace", trace, "--strategy", "best");
	EXPECT_RUN(2, "whatif: wrong number of arguments", "whatif", "--trace", trace, "extra");
	EXPECT_RUN(1, "whatif: /nonexistent/t.jsonl: No such file or directory", "--inventory", sim, "whatif", "--trace",
		   "/nonexistent/t.jsonl");
	EXPECT_RUN(1, "whatif: --drain nonode: no such node", "--inventory", sim, "whatif", "--trace", trace, "--drain",
		   "h100-00001,nonode");
	EXPECT_RUN(1, "whatif: --add: unknown node kind 'toaster'", "--inventory", sim, "whatif", "--trace", trace,
		   "--add", "2:toaster");
	EXPECT_RUN(1, "whatif: --quota: no queue 'nope'", "--inventory", sim, "whatif", "--trace", trace, "--quota",
		   "nope:h100=4");
	char *bad = xp_tmpfile("{\"xpool_trace\":1,\"jobs\":1,\"start\":\"2026-12-01T00:00:00Z\"}\n{\"id\":1}\n", 67);
	char want[4200];
	snprintf(want, sizeof want, "whatif: %s:2: id: expected a string", bad);
	EXPECT_RUN(1, want, "--inventory", sim, "whatif", "--trace", bad);
	unlink(bad);
	free(bad);
	unlink(sim);
	free(sim);
}
END_TEST

/* A trace out of `sim trace` feeds `whatif`; --json has both runs and the changes; the same
 * command twice gives the same bytes. */
START_TEST(sim_trace_whatif_run)
{
	char *sim = xp_test_sim_file(16, 1);
	char *dir = xp_strdup("/tmp/xpool-cli-trace-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char *out = xp_asprintf("%s/t.jsonl", dir);
	struct xp_run r, r2;
	run_args(&r, "--inventory", sim, "sim", "trace", "--jobs", "60", "--seed", "9", "--queues", "a:2,b", "-o", out, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	char want[4200];
	snprintf(want, sizeof want, "%s: 60 jobs in 2 queues (seed 9)\n", out);
	ck_assert_str_eq(r.out, want);
	xp_run_free(&r);
	run_args(&r, "--inventory", sim, "--json", "whatif", "--trace", out, "--drain", "h100-00001", "--horizon", "12h", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	json_t *j = parse_out(&r);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(j, "changes"), 0)), "drain h100-00001");
	ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(j, "baseline"), "queues")), 2);
	ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(j, "scenario"), "queues")), 2);
	ck_assert_uint_eq(json_array_size(json_array_get(json_object_get(json_object_get(j, "scenario"), "utilization"), 0) ?
			  json_object_get(json_array_get(json_object_get(json_object_get(j, "scenario"), "utilization"), 0),
					  "buckets") : NULL), 96);
	json_decref(j);
	run_args(&r2, "--inventory", sim, "--json", "whatif", "--trace", out, "--drain", "h100-00001", "--horizon", "12h", NULL);
	ck_assert_str_eq(r.out, r2.out);
	xp_run_free(&r);
	xp_run_free(&r2);
	/* Text: the queues side by side. */
	run_args(&r, "--inventory", sim, "whatif", "--trace", out, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_want_parts(r.out, "baseline | scenario: no change\n60 jobs from ", "horizon 24h\n\nQUEUE ", "WAIT P95",
		      "CLASS ", "TENANT ", NULL);
	xp_run_free(&r);
	/* A list option given twice takes both, as a comma list does. */
	run_args(&r, "--inventory", sim, "whatif", "--trace", out, "--drain", "h100-00001", "--drain", "h100-00002", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_want_parts(r.out, "baseline | scenario: drain h100-00001; drain h100-00002\n", NULL);
	xp_run_free(&r);
	unlink(out);
	rmdir(dir);
	free(out);
	free(dir);
	unlink(sim);
	free(sim);
}
END_TEST

/* A trace without queue lines takes the database's queues, read only: the file's bytes are
 * the same after; with no database, no file is made and the queue is unknown (exit 1).
 * --jobs-from-store reads the database's jobs, and writes nothing either. */
START_TEST(whatif_reads_store_only)
{
	char *sim = xp_test_sim_file(16, 1);
	char *dir = xp_strdup("/tmp/xpool-cli-whatif-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char *db = xp_asprintf("%s/q.db", dir);
	char trace[4096];
	snprintf(trace, sizeof trace, "%s", xp_fixture("traces/noqueues.jsonl"));
	EXPECT_RUN(1, "whatif: ", "--db", db, "--inventory", sim, "whatif", "--trace", trace);
	ck_assert_int_ne(access(db, F_OK), 0);
	struct xp_run r;
	run_args(&r, "--db", db, "queue", "add", "research", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_run_free(&r);
	chmod(db, 0444);
	struct xp_err err = {{0}};
	char before[65], after[65];
	ck_assert_int_eq(xp_sha256_file(db, before, &err), 0);
	run_args(&r, "--db", db, "--inventory", sim, "--json", "whatif", "--trace", trace, "--drain", "h100-00001", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	json_t *j = parse_out(&r);
	json_t *q = json_array_get(json_object_get(json_object_get(j, "baseline"), "queues"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(q, "name")), "research");
	ck_assert_int_eq(json_integer_value(json_object_get(q, "started")), 2);
	json_decref(j);
	xp_run_free(&r);
	ck_assert_int_eq(xp_sha256_file(db, after, &err), 0);
	ck_assert_str_eq(before, after);
	/* The database's own jobs as the workload: two of 8 H100s submitted at now; from an hour
	 * later, both are in the report and the file is untouched again. */
	chmod(db, 0644);
	setenv("XPOOL_NOW", "1764640800", 1);
	for (int i = 0; i < 2; i++) {
		run_args(&r, "--db", db, "--inventory", sim, "job", "submit", "--queue", "research", "--devices", "8",
			 "--model", "H100*", "--estimate", "2h", NULL);
		ck_assert_msg(r.status == 0, "%s", r.err);
		xp_run_free(&r);
	}
	chmod(db, 0444);
	ck_assert_int_eq(xp_sha256_file(db, before, &err), 0);
	setenv("XPOOL_NOW", "1764644400", 1);
	run_args(&r, "--db", db, "--inventory", sim, "--json", "whatif", "--jobs-from-store", "--drain", "h100-00001", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	j = parse_out(&r);
	q = json_array_get(json_object_get(json_object_get(j, "scenario"), "queues"), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(q, "submitted")), 2);
	json_decref(j);
	xp_run_free(&r);
	ck_assert_int_eq(xp_sha256_file(db, after, &err), 0);
	ck_assert_str_eq(before, after);
	chmod(db, 0644);
	xp_rm_rf(dir);
	free(db);
	free(dir);
	unlink(sim);
	free(sim);
}
END_TEST

XP_DEFINE_SUITE(cli,
	{"binary", .timeout_s = 120,
	 .tests = {inventory_json, text_output, multi_node_snapshot, bad_input, batch_and_help,
		   review_regressions, topo_json_bad_utf8, bidi_masked}},
	{"workload", .timeout_s = 120, .tests = {sim_trace_whatif_errors, sim_trace_whatif_run, whatif_reads_store_only}})
