/* check_adapters.c: the adapter loader (missing .so, wrong ABI, missing symbol, bad
 * manifest, exclusion, a working adapter end to end) and running vendor tools. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adapters.h"
#include "normalize.h"
#include "run.h"
#include "source.h"
#include "suitelib.h"
#include "testlib.h"

static char dir[128], replay[160];

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void copy(const char *from, const char *to)
{
	size_t len;
	struct xp_err err = {{0}};
	char *data = xp_read_file(from, 1 << 26, &len, &err);
	ck_assert_msg(data != NULL, "%s", err.msg);
	FILE *f = fopen(to, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	fclose(f);
	free(data);
}

static const char *testadapter(const char *name)
{
	static char buf[512];
	const char *d = getenv("XP_TESTADAPTERS");
	snprintf(buf, sizeof buf, "%s/%s.so", d ? d : "build/rel/testadapters", name);
	return buf;
}

/* A private adapter directory: the loader finds only what each test puts there. */
static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/xpool-adapters-%d", (int)getpid());
	snprintf(replay, sizeof replay, "%s/replay", dir);
	mkdir(dir, 0755);
	mkdir(replay, 0755);
	setenv("XPOOL_ADAPTER_PATH", dir, 1);
	setenv("XPOOL_ADAPTER_PATH_ONLY", "1", 1);
	unsetenv("XPOOL_ADAPTERS");
}

static void teardown(void)
{
	xp_rm_rf(dir);
}

static const char good_manifest[] =
	"# test manifest\n"
	"[adapter]\nname = amd\nvendor = Fakeco\npci_vendor = 1002\ndrivers = 1.0-1.9\n"
	"temperature = 80 85\n"
	"[model Fake X1]\nmatch = *X1*\nmemory_mib = 16384\npeak = bf16 100 TFLOPS\ncoefficient = 0.5\n";

static const struct xp_adapter_slot *slot(const struct xp_adapters *a, const char *name)
{
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->slots[i].name, name) == 0)
			return &a->slots[i];
	ck_abort_msg("no slot %s", name);
	return NULL;
}

START_TEST(loader_states)
{
	char p[512];
	snprintf(p, sizeof p, "%s/xp_nvidia.so", dir);
	copy(testadapter("badabi_nvidia"), p);
	snprintf(p, sizeof p, "%s/nvidia.adapter", dir);
	put(p, "[adapter]\nname = nvidia\n");
	snprintf(p, sizeof p, "%s/xp_ascend.so", dir);
	copy(testadapter("nosym_ascend"), p);
	snprintf(p, sizeof p, "%s/ascend.adapter", dir);
	put(p, "[adapter]\nname = ascend\n");
	snprintf(p, sizeof p, "%s/xp_amd.so", dir);
	copy(testadapter("fake_amd"), p);
	snprintf(p, sizeof p, "%s/amd.adapter", dir);
	put(p, good_manifest);
	snprintf(p, sizeof p, "%s/xp_cambricon.so", dir);
	copy(testadapter("fake_amd"), p);
	snprintf(p, sizeof p, "%s/cambricon.adapter", dir);
	put(p, "[adapter]\nname = cambricon\ncolour = blue\n");

	struct xp_adapters a;
	xp_adapters_open(&a, NULL);
	const struct xp_adapter_slot *s = slot(&a, "nvidia");
	ck_assert_int_eq(s->state, XP_AD_BROKEN);
	char abi[32]; /* what tests/adapters/badabi_nvidia.c declares */
	snprintf(abi, sizeof abi, "ABI version %d", XP_ADAPTER_ABI + 41);
	ck_assert_msg(strstr(s->reason, abi) != NULL, "%s", s->reason);
	s = slot(&a, "ascend");
	ck_assert_int_eq(s->state, XP_AD_BROKEN);
	ck_assert_ptr_nonnull(strstr(s->reason, "no symbol xp_adapter_ascend"));
	s = slot(&a, "amd");
	ck_assert_msg(s->state == XP_AD_ACTIVE, "amd: %s", s->reason);
	s = slot(&a, "cambricon");
	ck_assert_int_eq(s->state, XP_AD_BROKEN);
	ck_assert_msg(strstr(s->reason, "cambricon.adapter:3: unknown key 'colour'") != NULL, "%s", s->reason);
	xp_adapters_enumerate(&a);
	s = slot(&a, "amd");
	ck_assert_int_eq(s->raw->n_devices, 2);
	xp_adapters_close(&a);

	/* Missing and excluded. */
	snprintf(p, sizeof p, "%s/xp_nvidia.so", dir);
	unlink(p);
	setenv("XPOOL_ADAPTERS", "-amd", 1);
	xp_adapters_open(&a, NULL);
	ck_assert_int_eq(slot(&a, "nvidia")->state, XP_AD_MISSING);
	ck_assert_int_eq(slot(&a, "amd")->state, XP_AD_EXCLUDED);
	xp_adapters_close(&a);
	unsetenv("XPOOL_ADAPTERS");

	/* A manifest naming another adapter, and no manifest at all. */
	snprintf(p, sizeof p, "%s/amd.adapter", dir);
	put(p, "[adapter]\nname = nvidia\n");
	xp_adapters_open(&a, NULL);
	ck_assert_ptr_nonnull(strstr(slot(&a, "amd")->reason, "names adapter 'nvidia'"));
	xp_adapters_close(&a);
	unlink(p);
	xp_adapters_open(&a, NULL);
	ck_assert_int_eq(slot(&a, "amd")->state, XP_AD_BROKEN);
	ck_assert_ptr_nonnull(strstr(slot(&a, "amd")->reason, "no manifest amd.adapter"));
	xp_adapters_close(&a);
}
END_TEST

/* A working adapter end to end: replay directory -> loader -> normalize -> model. */
START_TEST(replay_through_fake)
{
	char p[512];
	snprintf(p, sizeof p, "%s/xp_amd.so", dir);
	copy(testadapter("fake_amd"), p);
	snprintf(p, sizeof p, "%s/amd.adapter", dir);
	put(p, good_manifest);
	setenv("XPOOL_ADAPTERS", "-nvidia,-ascend,-cambricon", 1);

	/* Without its file the adapter is idle and the node has no devices. */
	struct xp_source_opts o = {.replay = replay};
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_source_load(&o, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	ck_assert_uint_eq(c->nodes[0]->n_devices, 0);
	ck_assert_str_eq(c->nodes[0]->name, "replay");
	xp_cluster_free(c);

	snprintf(p, sizeof p, "%s/fake.txt", replay);
	put(p, "x");
	snprintf(p, sizeof p, "%s/hostname", replay);
	put(p, "  rehearsal-07\nrest ignored\n");
	c = xp_source_load(&o, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	struct xp_node *n = c->nodes[0];
	ck_assert_str_eq(n->name, "rehearsal-07");
	ck_assert_uint_eq(n->n_devices, 2);
	const struct xp_device *d0 = &n->devices[0], *d1 = &n->devices[1];
	ck_assert_str_eq(d0->vendor, "Fakeco");
	ck_assert_str_eq(d0->model, "Fake X1");
	ck_assert_str_eq(d0->pci_bus_id, "0000:c1:00.0");
	ck_assert_int_eq(d0->health, XP_HEALTH_OK);
	ck_assert(fabs(d0->ecu - 50.0) < 1e-9); /* 100 TFLOPS bf16 x 0.5 */
	ck_assert_str_eq(d0->ecu_basis, "bf16 100 TFLOPS x 0.50 (manifest)");
	/* Warning from the vendor and 90 C over the 85 C critical line: fail, both reasons kept. */
	ck_assert_int_eq(d1->health, XP_HEALTH_FAIL);
	ck_assert_uint_eq(d1->n_health_reasons, 2);
	ck_assert_str_eq(d1->health_reasons[0], "amd reports Warning");
	ck_assert_str_eq(d1->health_reasons[1], "temperature 90 C at or above 85 C (critical)");
	ck_assert_str_eq(xp_labels_get(&n->facts, "accelerator.driver"), "1.2.3");
	xp_cluster_free(c);

	/* A driver outside the manifest's range is a warning with its reason. */
	snprintf(p, sizeof p, "%s/amd.adapter", dir);
	char *m2 = strdup(good_manifest);
	char *r = strstr(m2, "1.0-1.9");
	memcpy(r, "2.0-2.9", 7);
	put(p, m2);
	free(m2);
	c = xp_source_load(&o, &err);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(c->nodes[0]->devices[0].health, XP_HEALTH_WARN);
	ck_assert_str_eq(c->nodes[0]->devices[0].health_reasons[0], "driver 1.2.3 outside the versions amd supports");
	xp_cluster_free(c);

	/* Not a directory. */
	struct xp_source_opts bad = {.replay = "/nonexistent/replay"};
	ck_assert_ptr_null(xp_source_load(&bad, &err));
	ck_assert_str_eq(err.msg, "/nonexistent/replay: No such file or directory");
	unsetenv("XPOOL_ADAPTERS");
}
END_TEST

START_TEST(run_tool)
{
	char *out;
	size_t len;
	char err[256];
	const char *echo[] = {"printf", "%s|", "a b", "c;d", "$(x)", NULL};
	ck_assert_int_eq(xp_run_tool(echo, 5, 1024, &out, &len, err, sizeof err), 0);
	/* No shell: the arguments arrive as they were given. */
	ck_assert_str_eq(out, "a b|c;d|$(x)|");
	free(out);
	const char *env[] = {"env", NULL};
	setenv("XPOOL_SECRET_TOKEN", "s3cret", 1);
	ck_assert_int_eq(xp_run_tool(env, 5, 65536, &out, &len, err, sizeof err), 0);
	ck_assert_ptr_null(strstr(out, "s3cret")); /* a clean environment */
	ck_assert_ptr_nonnull(strstr(out, "LANG=C"));
	free(out);
	const char *missing[] = {"xpool-no-such-tool", NULL};
	ck_assert_int_eq(xp_run_tool(missing, 5, 1024, &out, &len, err, sizeof err), -1);
	ck_assert_str_eq(err, "xpool-no-such-tool: not found");
	const char *fails[] = {"false", NULL};
	ck_assert_int_eq(xp_run_tool(fails, 5, 1024, &out, &len, err, sizeof err), -1);
	ck_assert_str_eq(err, "false: exit status 1");
	const char *slow[] = {"sleep", "30", NULL};
	ck_assert_int_eq(xp_run_tool(slow, 0.3, 1024, &out, &len, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "sleep: timed out"));
	/* A tool that closes its output and keeps running still meets the deadline. */
	const char *linger[] = {"sh", "-c", "exec >&-; sleep 30", NULL};
	ck_assert_int_eq(xp_run_tool(linger, 0.3, 1024, &out, &len, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "sh: timed out"));
	const char *big[] = {"head", "-c", "1000000", "/dev/zero", NULL};
	ck_assert_int_eq(xp_run_tool(big, 5, 4096, &out, &len, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "printed more than allowed"));
	ck_assert_ptr_null(out);
}
END_TEST

START_TEST(bus_ids)
{
	char b[32];
	ck_assert(xp_normalize_bus_id("00000000:3B:00.0", b, sizeof b));
	ck_assert_str_eq(b, "0000:3b:00.0");
	ck_assert(xp_normalize_bus_id("0000:C1:00.0", b, sizeof b));
	ck_assert_str_eq(b, "0000:c1:00.0");
	ck_assert(xp_normalize_bus_id("00010000:01:02.3", b, sizeof b));
	ck_assert_str_eq(b, "00010000:01:02.3");
	ck_assert(!xp_normalize_bus_id("N/A", b, sizeof b));
	ck_assert(!xp_normalize_bus_id("0000:3b:00.0 extra", b, sizeof b));
	ck_assert(!xp_normalize_bus_id("0000:3b:40.0", b, sizeof b));
	ck_assert(!xp_normalize_bus_id("", b, sizeof b));
}
END_TEST

XP_DEFINE_SUITE(adapters,
	{"loader", .timeout_s = 60, .setup = setup, .teardown = teardown,
	 .tests = {loader_states, replay_through_fake, run_tool, bus_ids}})
