/* check_replay.c: bring-up rehearsal end to end: replay directories assembled from
 * the recorded vendor outputs, read by the real program with its real adapters. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checklib.h"
#include "suitelib.h"
#include "testlib.h"
#include "xp.h"

static char dir[128];

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/xpool-replay-%d", (int)getpid());
	mkdir(dir, 0755);
	/* The program's own adapters, and nothing a developer has installed. */
	unsetenv("XPOOL_ADAPTER_PATH");
	unsetenv("XPOOL_ADAPTER_PATH_ONLY");
	unsetenv("XPOOL_ADAPTERS");
}

static void teardown(void)
{
	xp_rm_rf(dir);
}

static json_t *inventory(const char *replay)
{
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", replay, "inventory", "--json", NULL), 0);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	json_error_t je;
	json_t *j = json_loads(r.out, 0, &je);
	ck_assert_msg(j != NULL, "not JSON: %s", je.text);
	xp_run_free(&r);
	return j;
}

static json_t *node0(json_t *doc)
{
	return json_array_get(json_object_get(doc, "nodes"), 0);
}

static const char *dstr(json_t *dev, const char *key)
{
	const char *s = json_string_value(json_object_get(dev, key));
	return s ? s : "(null)";
}

START_TEST(place_on_atlas)
{
	/* Placement on the real 8 x 910A capture: 4 NPUs come from one HCCS ring (the manifest's
	 * ring:4), the task sees them by their NPU ids (npu-smi's, not the node's device indices:
	 * this hwloc.xml lists 4 other accelerators first), the device files are those ids', and
	 * 5 NPUs are refused by the vendor's rule (1, 2, 4 or 8) with 4 offered instead. */
	char *d = xp_assemble(dir, "atlas-place", "ascend/npu-smi-info_atlas800-9010_8x910A_24.1.RC2.txt", "npu-smi-info.txt",
			   "ascend/npu-smi-info-m_atlas800-9010_8x910A_24.1.RC2.txt", "npu-smi-info-m.txt",
			   "hwloc/32em64t-2n8c2t-pci-wholeio.xml", "hwloc.xml", NULL);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", d, "place", "--dry-run", "--devices", "4", "--model", "Ascend*",
				      "--json", NULL), 0);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	json_error_t je;
	json_t *j = json_loads(r.out, 0, &je);
	ck_assert_msg(j != NULL, "%s", je.text);
	json_t *rep = json_array_get(json_object_get(j, "replicas"), 0);
	const char *env = json_string_value(json_object_get(json_object_get(rep, "env"), "ASCEND_VISIBLE_DEVICES"));
	ck_assert_ptr_nonnull(env);
	ck_assert_msg(strcmp(env, "0,1,2,3") == 0 || strcmp(env, "4,5,6,7") == 0, "not one ring: %s", env);
	char first[32];
	snprintf(first, sizeof first, "/dev/davinci%c", env[0]);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(rep, "mounts"), 0)), first);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(rep, "mounts"), 4)), "/dev/davinci_manager");
	/* The node's own indices of those NPUs are past the 4 accelerators hwloc lists first. */
	ck_assert_int_ge(json_integer_value(json_array_get(json_object_get(rep, "devices"), 0)), 4);
	json_decref(j);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", d, "place", "--dry-run", "--devices", "5", "--model", "Ascend*",
				      NULL), 0);
	ck_assert_int_eq(r.status, 3);
	xp_want_parts(r.out, "the vendor's rule for Ascend 910A allows 1, 2, 4 or 8 per replica on one node, not 5",
		      "would fit with devices 5 -> 4", NULL);
	xp_run_free(&r);
	free(d);
}
END_TEST

START_TEST(ascend_910)
{
	char *d = xp_assemble(dir, "atlas9010", "ascend/npu-smi-info_atlas800-9010_8x910A_24.1.RC2.txt", "npu-smi-info.txt",
			   "ascend/npu-smi-info-m_atlas800-9010_8x910A_24.1.RC2.txt", "npu-smi-info-m.txt",
			   "hwloc/32em64t-2n8c2t-pci-wholeio.xml", "hwloc.xml", NULL);
	json_t *doc = inventory(d);
	json_t *n = node0(doc);
	/* Named by its hwloc.xml's directory (no hostname file), topology from hwloc.xml. */
	ck_assert_str_eq(json_string_value(json_object_get(n, "name")), "atlas9010");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(n, "cpu"), "pus")), 32);
	json_t *devs = json_object_get(n, "devices");
	/* 4 accelerators from the PCI tree plus the 8 NPUs npu-smi lists at other bus ids. */
	ck_assert_uint_eq(json_array_size(devs), 12);
	int npus = 0, warn = 0;
	size_t i;
	json_t *dv;
	json_array_foreach(devs, i, dv)
	{
		if (strcmp(dstr(dv, "vendor"), "Huawei") != 0)
			continue;
		npus++;
		ck_assert_str_eq(dstr(dv, "model"), "Ascend 910A");
		ck_assert_str_eq(dstr(dv, "driver"), "24.1.RC2");
		ck_assert(fabs(json_real_value(json_object_get(dv, "ecu")) - 256) < 1e-9);
		ck_assert_str_eq(dstr(dv, "ecu_basis"), "fp16 256 TFLOPS x 1.00 (manifest)");
		if (strcmp(dstr(dv, "health"), "warn") == 0) {
			warn++;
			ck_assert_str_eq(json_string_value(json_array_get(json_object_get(dv, "health_reasons"), 0)),
					 "npu-smi health: Warning");
		}
	}
	ck_assert_int_eq(npus, 8);
	ck_assert_int_eq(warn, 2);
	/* NPU 0 (0000:c1:00.0) and NPU 3 (0000:01:00.0) share HCCS ring 0; NPU 4 is in ring 1. */
	int a = -1, b = -1, c = -1;
	json_array_foreach(devs, i, dv)
	{
		if (strcmp(dstr(dv, "pci_bus_id"), "0000:c1:00.0") == 0)
			a = (int)i;
		if (strcmp(dstr(dv, "pci_bus_id"), "0000:01:00.0") == 0)
			b = (int)i;
		if (strcmp(dstr(dv, "pci_bus_id"), "0000:c2:00.0") == 0)
			c = (int)i;
	}
	ck_assert(a >= 0 && b >= 0 && c >= 0);
	ck_assert_str_eq(dstr(json_array_get(devs, (size_t)a), "affinity_group"), "hccs:0");
	ck_assert_str_eq(dstr(json_array_get(devs, (size_t)c), "affinity_group"), "hccs:1");
	json_t *links = json_object_get(n, "links");
	ck_assert_str_eq(json_string_value(json_array_get(json_array_get(links, (size_t)a), (size_t)b)), "HCCS");
	json_decref(doc);

	/* A stored baseline replaces the manifest's coefficient, and says so. */
	char *db = xp_asprintf("%s/b.db", dir);
	struct xp_run br;
	ck_assert_int_eq(xp_run_xpool(&br, NULL, "--db", db, "baseline", "add", "Ascend 910A", "24.1.RC2", "llm", "0.5",
				      "--verified", NULL), 0);
	ck_assert_msg(br.status == 0, "%s", br.err);
	xp_run_free(&br);
	ck_assert_int_eq(xp_run_xpool(&br, NULL, "--db", db, "--replay", d, "inventory", NULL), 0);
	ck_assert_ptr_nonnull(strstr(br.out, ": fp16 256 TFLOPS x 0.50 (baseline)"));
	xp_run_free(&br);
	ck_assert_int_eq(xp_run_xpool(&br, NULL, "--db", db, "baseline", "add", "x", "y", "z", "-1", NULL), 0);
	ck_assert_int_eq(br.status, XP_EXIT_USAGE);
	xp_run_free(&br);
	free(db);

	/* health lists the two warnings with their reason. */
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", d, "health", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "warn   npu-smi health: Warning"));
	xp_run_free(&r);
	/* adapters: ascend active with 8 devices, the others idle (no recorded files). */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", d, "adapters", NULL), 0);
	xp_want_parts(r.out, "ascend     active", "8 devices", "nvidia     idle", NULL);
	xp_run_free(&r);
	free(d);
}
END_TEST

START_TEST(nvidia_a100_and_h800)
{
	char *d = xp_replay_dgx(dir);
	json_t *doc = inventory(d);
	json_t *n = node0(doc);
	ck_assert_str_eq(json_string_value(json_object_get(n, "name")), "dgx-a100-07");
	json_t *dv = json_array_get(json_object_get(n, "devices"), 0);
	ck_assert_str_eq(dstr(dv, "vendor"), "NVIDIA");
	ck_assert_str_eq(dstr(dv, "driver"), "535.54.03");
	ck_assert_str_eq(dstr(dv, "pci_bus_id"), "0000:01:00.0");
	ck_assert_ptr_nonnull(strstr(dstr(dv, "model"), "A100"));
	ck_assert_int_eq(json_integer_value(json_object_get(dv, "memory_mib")), 81920);
	ck_assert(json_real_value(json_object_get(dv, "ecu")) > 0);
	json_decref(doc);
	free(d);

	/* Only a topo -m matrix (8x H800): eight devices, NV8 everywhere, one NVLink island,
	 * NUMA from the matrix's NUMA Affinity column. */
	d = xp_assemble(dir, "h800", "nvidia-smi/topo-matrix_8xH800-nv8_4nics_2numa.txt", "nvidia-smi-topo-m.txt", NULL);
	doc = inventory(d);
	n = node0(doc);
	json_t *devs = json_object_get(n, "devices");
	ck_assert_uint_eq(json_array_size(devs), 8);
	json_t *links = json_object_get(n, "links");
	ck_assert_str_eq(json_string_value(json_array_get(json_array_get(links, 0), 7)), "NV8");
	ck_assert_str_eq(json_string_value(json_array_get(json_array_get(links, 5), 2)), "NV8");
	ck_assert_str_eq(dstr(json_array_get(devs, 6), "affinity_group"), "nvlink:0");
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(devs, 3), "numa")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(devs, 4), "numa")), 1);
	/* The pasted matrix's damaged cells are reported, not hidden. */
	ck_assert_int_gt(json_array_size(json_object_get(n, "warnings")), 0);
	json_decref(doc);
	free(d);
}
END_TEST

START_TEST(amd_mi100)
{
	char *d = xp_assemble(dir, "mi100", "amd/mi100-x4_rocm602.rocm-smi.json", "rocm-smi.json", NULL);
	json_t *doc = inventory(d);
	json_t *devs = json_object_get(node0(doc), "devices");
	ck_assert_uint_eq(json_array_size(devs), 4);
	static const char *const bus[] = {"0000:83:00.0", "0000:a3:00.0", "0000:c3:00.0", "0000:e3:00.0"};
	for (size_t i = 0; i < 4; i++) {
		json_t *dv = json_array_get(devs, i);
		ck_assert_str_eq(dstr(dv, "vendor"), "AMD");
		ck_assert_str_eq(dstr(dv, "model"), "AMD Instinct MI100");
		ck_assert_str_eq(dstr(dv, "pci_bus_id"), bus[i]);
		ck_assert_str_eq(dstr(dv, "firmware"), "113-D3431401-101");
		ck_assert_str_eq(dstr(dv, "health"), "ok");
		ck_assert(fabs(json_real_value(json_object_get(dv, "ecu")) - 184.6) < 1e-9);
	}
	json_decref(doc);
	/* Without a hostname file the node is named after the directory, also when it is given
	 * as "DIR/." (or "." from inside it). */
	char *dot = xp_asprintf("%s/.", d);
	doc = inventory(dot);
	ck_assert_str_eq(json_string_value(json_object_get(node0(doc), "name")), "mi100");
	json_decref(doc);
	free(dot);
	free(d);
}
END_TEST

/* A replay that is not a directory, and an empty one: clear error, then an empty node. */
START_TEST(replay_errors)
{
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", "/nonexistent/dir", "inventory", NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_ERROR);
	ck_assert_str_eq(r.err, "xpool: /nonexistent/dir: No such file or directory\n");
	xp_run_free(&r);
	char *d = xp_assemble(dir, "empty", NULL);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", d, "inventory", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	xp_want_parts(r.out, "empty  up  replay:", "Accelerators: 0", NULL);
	xp_run_free(&r);
	/* A damaged vendor file costs that vendor, not the run. */
	char *bad = xp_asprintf("%s/rocm-smi.json", d);
	FILE *f = fopen(bad, "w");
	fputs("{\"card0\": {\"Card series\": ", f);
	fclose(f);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", d, "adapters", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "amd        unavailable  enumerate:"));
	xp_run_free(&r);
	free(bad);
	free(d);
}
END_TEST

/* record then replay: the live machine into a directory, read back as the same node. */
START_TEST(record_and_replay)
{
	/* Live discovery under the sanitizer build: hwloc's PCI plugin (libpciaccess and the
	 * pci.ids names it loads) keeps allocations and is unloaded before exit, so its
	 * frames cannot even be named for a suppression. Leak checking is off for these
	 * runs only; address and undefined-behaviour checks stay on. */
	setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
	char *d = xp_asprintf("%s/rec", dir);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "record", d, NULL), 0);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	xp_want_parts(r.out, "wrote    hwloc.xml", "rehearse with: xpool --replay", NULL);
	/* Every manifest's tools are accounted for: written, or skipped as not installed. */
	xp_want_parts(r.out, "nvidia-smi-q-x.xml", "nvidia-smi-L.txt", "npu-smi-info.txt", "rocm-smi.json", NULL);
	xp_run_free(&r);
	struct xp_run live, back;
	ck_assert_int_eq(xp_run_xpool(&live, NULL, "inventory", "--json", NULL), 0);
	ck_assert_int_eq(xp_run_xpool(&back, NULL, "--replay", d, "inventory", "--json", NULL), 0);
	ck_assert_msg(back.status == 0, "%s", back.err);
	json_t *a = json_loads(live.out, 0, NULL), *b = json_loads(back.out, 0, NULL);
	json_t *na = node0(a), *nb = node0(b);
	ck_assert_str_eq(json_string_value(json_object_get(na, "name")), json_string_value(json_object_get(nb, "name")));
	ck_assert(json_equal(json_object_get(na, "cpu"), json_object_get(nb, "cpu")));
	ck_assert(json_equal(json_object_get(na, "numa"), json_object_get(nb, "numa")));
	ck_assert_uint_eq(json_array_size(json_object_get(na, "pci")), json_array_size(json_object_get(nb, "pci")));
	json_decref(a);
	json_decref(b);
	xp_run_free(&live);
	xp_run_free(&back);
	/* Not a directory. */
	char *file = xp_asprintf("%s/hwloc.xml", d);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "record", file, NULL), 0);
	ck_assert_int_eq(r.status, XP_EXIT_ERROR);
	ck_assert_ptr_nonnull(strstr(r.err, "not a directory"));
	xp_run_free(&r);
	free(file);
	free(d);
	unsetenv("ASAN_OPTIONS");
}
END_TEST

/* A Hygon host with hy-smi and no rocm-smi: record runs hy-smi (its narrow query) into the
 * file the AMD adapter replays, and the replay reads the DCU back. The tool is a fake on
 * PATH that prints the recorded Hygon output and keeps its arguments. */
START_TEST(record_hy_smi)
{
	setenv("ASAN_OPTIONS", "detect_leaks=0", 1); /* live hwloc, as in record_and_replay */
	char *bin = xp_asprintf("%s/bin", dir);
	mkdir(bin, 0755);
	char *script = xp_asprintf("#!/bin/sh\nprintf '%%s\\n' \"$@\" > '%s/args'\nexec /bin/cat '%s'\n", dir,
				   xp_fixture("amd/hygon-dcu_dtk24.04.3.rocm-smi.json"));
	free(xp_write_file(bin, "hy-smi", script, 0755));
	/* A rocm-smi that is there but fails: said, and hy-smi tried next. */
	free(xp_write_file(bin, "rocm-smi", "#!/bin/sh\necho 'no ROCm here' >&2\nexit 1\n", 0755));
	char *old = getenv("PATH") ? xp_strdup(getenv("PATH")) : NULL;
	setenv("PATH", bin, 1);
	char *d = xp_asprintf("%s/rec", dir);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "record", d, NULL), 0);
	if (old)
		setenv("PATH", old, 1);
	else
		unsetenv("PATH");
	ck_assert_msg(r.status == 0, "exit %d: %s%s", r.status, r.out, r.err);
	xp_want_parts(r.out, "failed   rocm-smi.json with rocm-smi (", "; trying the next tool",
		      "wrote    rocm-smi.json (", "from hy-smi)", "skipped  rocminfo.txt (rocminfo not found)", NULL);
	xp_run_free(&r);
	size_t len;
	struct xp_err err = {{0}};
	char *path = xp_asprintf("%s/args", dir);
	char *args = xp_read_file(path, 4096, &len, &err);
	ck_assert_msg(args != NULL, "%s", err.msg);
	ck_assert_str_eq(args, "--showid\n--showmeminfo\nvram\n--showpower\n--showserial\n--showuse\n--showtemp\n"
			       "--showproductname\n--showuniqueid\n--json\n");
	json_t *doc = inventory(d);
	json_t *devs = json_object_get(node0(doc), "devices");
	bool dcu = false;
	for (size_t i = 0; i < json_array_size(devs); i++)
		dcu |= strcmp(dstr(json_array_get(devs, i), "vendor"), "Hygon") == 0 &&
		       json_integer_value(json_object_get(json_array_get(devs, i), "memory_mib")) == 65520;
	ck_assert_msg(dcu, "no Hygon DCU read back");
	json_decref(doc);
	free(args);
	free(path);
	free(d);
	free(old);
	free(script);
	free(bin);
	unsetenv("ASAN_OPTIONS");
}
END_TEST

/* Sources that disagree are discovery warnings, visible in health: a report that counts more
 * GPUs than it lists, a PCI id naming another product than the vendor tool (or the runtime
 * hwloc recorded) does. The inputs are real fixtures, edited. */
START_TEST(sources_disagree)
{
	/* The recorded A100 report: <attached_gpus>4 and one <gpu> (telegraf kept one). */
	char *d = xp_assemble(dir, "cut", "nvidia-smi/a100-sxm4-80gb-x4_535.54.03.q.xml", "nvidia-smi-q-x.xml", NULL);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", d, "health", NULL), 0);
	xp_want_parts(r.out, "warn   nvidia: nvidia-smi says attached_gpus 4 but lists 1 <gpu>", NULL);
	ck_assert_ptr_null(strstr(r.out, "no problems"));
	xp_run_free(&r);
	free(d);

	/* hwloc's XML of a machine whose PCI id 10de:1094 is a Tesla M2075 (pci.ids), with the
	 * Tesla T4 report's bus id moved onto that function; the same XML's CUDA runtime calls
	 * 0000:84:00.0 a Tesla K40m. */
	d = xp_assemble(dir, "mixed", "hwloc/32em64t-2n8c2t-pci-wholeio.xml", "hwloc.xml", NULL);
	size_t len;
	struct xp_err err = {{0}};
	char *t4 = xp_read_file(xp_fixture("nvidia-smi/tesla-t4_515.105.01.q.xml"), 1 << 24, &len, &err);
	ck_assert_ptr_nonnull(t4);
	for (char *p; (p = strstr(t4, "00000000:00:1E.0")) != NULL;)
		memcpy(p, "00000000:03:00.0", 16);
	free(xp_write_file(d, "nvidia-smi-q-x.xml", t4, 0644));
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", d, "health", NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_want_parts(r.out,
		      "ACC0 0000:03:00.0: PCI id 10de:1094 is NVIDIA Corporation Tesla M2075 Dual-Slot Computing "
		      "Processor Module, nvidia says Tesla T4",
		      "ACC2 0000:84:00.0: PCI id 10de:1094 is Tesla M2075 Dual-Slot Computing Processor Module, "
		      "the runtime (cuda0) says Tesla K40m",
		      NULL);
	xp_run_free(&r);
	free(t4);
	free(d);
}
END_TEST

XP_DEFINE_SUITE(replay,
	{"e2e", .timeout_s = 60, .setup = setup, .teardown = teardown,
	 .tests = {ascend_910, place_on_atlas, nvidia_a100_and_h800, amd_mi100, replay_errors,
		   record_and_replay, sources_disagree, record_hy_smi}})
