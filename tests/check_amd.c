/* check_amd.c: the AMD/Hygon adapter: rocm-smi/hy-smi JSON and rocminfo parsers over every
 * fixture in tests/fixtures/amd/ (expected values read from the files by hand and written next
 * to each assertion), bad input, and the adapter itself through a fake host, in replay and live. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "amd/amd.h"
#include "fakehost.h"
#include "suitelib.h"
#include "testlib.h"
#include "xp_adapter.h"

extern const struct xp_adapter xp_adapter_amd;

/* ---- helpers ---------------------------------------------------------------------------- */

/* An AMD fixture's text, by its file name in tests/fixtures/amd/. */
static char *fixture(const char *name, size_t *len)
{
	char rel[512];
	snprintf(rel, sizeof rel, "amd/%s", name);
	return xp_fixture_text(rel, len);
}

static struct xp_raw_node *parse_fixture(const char *name)
{
	size_t len;
	char *text = fixture(name, &len);
	struct xp_raw_node *n = xp_fake_node();
	char err[256] = "";
	int rc = xp_rocmsmi_parse_json(text, len, n, err, sizeof err);
	ck_assert_msg(rc == 0, "%s: %s", name, err);
	free(text);
	return n;
}

static int parse_str(const char *json, struct xp_raw_node *n, char *err, size_t errlen)
{
	return xp_rocmsmi_parse_json(json, strlen(json), n, err, errlen);
}

/* ---- every fixture --------------------------------------------------------------------- */

START_TEST(test_every_fixture_parses)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", xp_fixture("amd"));
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	int smi = 0, info = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);
		bool is_smi = l > 14 && strcmp(e->d_name + l - 14, ".rocm-smi.json") == 0;
		bool is_info = l > 13 && strcmp(e->d_name + l - 13, ".rocminfo.txt") == 0;
		if (!is_smi && !is_info)
			continue;
		size_t len;
		char *text = fixture(e->d_name, &len), err[256] = "";
		struct xp_raw_node *n = xp_fake_node();
		int rc = is_smi ? xp_rocmsmi_parse_json(text, len, n, err, sizeof err)
				: xp_rocminfo_parse(text, len, n, err, sizeof err);
		ck_assert_msg(rc == 0, "%s: %s", e->d_name, err);
		ck_assert_msg(n->n_devices >= 1, "%s: no device", e->d_name);
		for (int i = 0; i < n->n_devices; i++)
			ck_assert_msg(n->devices[i].name[0], "%s: device %d has no name", e->d_name, i);
		smi += is_smi;
		info += is_info;
		free(n);
		free(text);
	}
	closedir(d);
	ck_assert_int_eq(smi, 5);
	ck_assert_int_eq(info, 1);
}
END_TEST

/* ---- rocm-smi, fixture by fixture ------------------------------------------------------ */

/* mi100-x4_rocm602: telegraf's query on 4x MI100, ROCm 6.0.2. */
START_TEST(test_mi100_x4)
{
	struct xp_raw_node *n = parse_fixture("mi100-x4_rocm602.rocm-smi.json");
	ck_assert_int_eq(n->n_devices, 4);
	ck_assert_int_eq(n->n_warnings, 0);
	static const char *const bus[] = {"0000:83:00.0", "0000:A3:00.0", "0000:C3:00.0", "0000:E3:00.0"};
	static const char *const uid[] = {"0x79ccd55167a2124a", "0x4edfb117a17a07d", "0xd4a9ec48d03d261d",
					  "0x1b9dd972253c3736"};
	static const double junction[] = {55.0, 58.0, 57.0, 53.0};
	static const double power[] = {36.0, 44.0, 43.0, 39.0};
	/* What the four cards share. */
	static const char *const same[] = {
		"chip=0",
		/* "Card series" (lower-case s in this version); "Card model" 0x0c34 and SKU lose. */
		"name=Arcturus GL-XL [Instinct MI100]",
		"serial=", /* "N/A" */
		"firmware=113-D3431401-101",
		"driver=6.3.6", /* from "system" */
		"arch=",        /* no "GFX Version" in this query */
		/* 34342961152 B = 32752 MiB exactly; used 6750208 B = 6.44 MiB. */
		"memory_total_mib=32752", "memory_used_mib=6",
		"power_limit_w=290", "utilization_pct=0", "numa=1", "ecc_corrected=-1", "mig_mode=-1",
		"group=", NULL};
	for (int i = 0; i < 4; i++) {
		const struct xp_raw_device *d = &n->devices[i];
		ck_assert_int_eq(d->index, i);
		ck_assert_str_eq(d->bus_id, bus[i]);
		ck_assert_str_eq(d->uuid, uid[i]);
		ck_assert_double_eq(d->temperature_c, junction[i]);
		ck_assert_double_eq(d->power_w, power[i]);
		xp_fake_want(d, "mi100-x4", same);
	}
	/* Every "Link type between DRM devices" is PCIE: nothing hwloc does not know. */
	ck_assert(!n->has_links);
	free(n);
}
END_TEST

/* hygon-dcu_dtk24.04.3: rocminfo adds the ISA, matched by UUID (GPU-7100fa8866904061), the
 * name left as rocm-smi's. */
static void hygon_rocminfo(struct xp_raw_node *n)
{
	size_t len;
	char *text = fixture("hygon-dcu_dtk24.04.3.rocminfo.txt", &len), err[256] = "";
	ck_assert_int_eq(xp_rocminfo_parse(text, len, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 1);
	xp_fake_want(&n->devices[0], "hygon-dcu + rocminfo",
		     (const char *const[]){"arch=gfx928", "name=DCU xxxx", "uuid=7100fa8866904061", NULL});
	free(text);
}

/* The single-card fixtures: what the card must hold (fields not listed are not checked). None
 * has a link that hwloc does not know, and none is odd enough to warn about. */
static const struct xp_fake_expect smi_files[] = {
	/* 1x Radeon Instinct MI50 32GB (an older rocm-smi: "GPU ID", no "Device ID"). The
	 * matrix names DRM devices 0-7, but only card0 is in the output, and all are PCIE. */
	{"amd/mi50-32gb_vega20.rocm-smi.json",
	 {"index=0", "name=Radeon Instinct MI50 32GB", "bus_id=0000:63:00.0",
	  "uuid=0x2f048617326b1ea", "serial=692024000810", "firmware=113-D1631700-111",
	  "driver=5.9.17",
	  "temperature_c=38", /* junction; edge 36.0 */
	  "power_w=26", "power_limit_w=225", "utilization_pct=0", "memory_total_mib=32752",
	  "memory_used_mib=10", /* 10850304 B = 10.35 MiB */
	  "numa=0"}},
	/* rx6700xt_rocm612: consumer Navi 22 card, ROCm 6.1.2 (has "GFX Version"). */
	{"amd/rx6700xt_rocm612.rocm-smi.json",
	 /* "Card Series" equals "Device Name" here; "Card Model" is the hex id 0x73df. */
	 {"name=Navi 22 [Radeon RX 6700/6700 XT / 6800M]", "arch=gfx1031",
	  "bus_id=0000:07:00.0",
	  "uuid=", /* "Unique ID": "N/A" */
	  "firmware=113-67XA6SSB1-D01", "driver=6.3.6", "temperature_c=47", "power_w=6",
	  "power_limit_w=211", "utilization_pct=0", "memory_total_mib=12272",
	  "memory_used_mib=1500", /* 1572745216 B = 1499.89 MiB */
	  "numa=0"}},
	/* amd-gpu_rocm6.2.4: gpustack's narrower query on a Navi 32 card: no bus, no driver. */
	{"amd/amd-gpu_rocm6.2.4.rocm-smi.json",
	 {"name=Navi 32 [Radeon RX 7700 XT / 7800 XT]", "arch=gfx11001",
	  "uuid=0x5c88007d760374f3", "bus_id=", "driver=", "firmware=", "temperature_c=51",
	  "power_w=53", "power_limit_w=nan", "utilization_pct=100", "memory_total_mib=16368",
	  "memory_used_mib=11077", "numa=-1"}},
	/* hygon-dcu_dtk24.04.3: Hygon's spelling: "DCU use (%)", "vram ... (MiB)", "Sensor mem";
	 * the "": "" entry is ignored quietly. */
	{"amd/hygon-dcu_dtk24.04.3.rocm-smi.json",
	 {"index=0",
	  "name=DCU xxxx", /* masked in the source, kept as the tool says */
	  "serial=TPXxxxx", "uuid=7100fa8866904061", "driver=", "bus_id=", "power_w=80",
	  "temperature_c=39", /* junction 39.0 (edge 41.0, mem 44.0) */
	  "utilization_pct=0", "memory_total_mib=65520", "memory_used_mib=2"},
	 hygon_rocminfo},
};

START_TEST(test_smi_fixture)
{
	struct xp_raw_node *n = xp_fake_expect_one(&smi_files[_i], xp_rocmsmi_parse_json);
	ck_assert_int_eq(n->n_warnings, 0);
	ck_assert(!n->has_links);
	free(n);
}
END_TEST

/* ---- rocminfo --------------------------------------------------------------------------- */

START_TEST(test_rocminfo_agents)
{
	size_t len;
	char *text = fixture("hygon-dcu_dtk24.04.3.rocminfo.txt", &len), err[256] = "";
	struct xp_rocminfo_agent a[4];
	/* Agent 1 is the Hygon C86 7390 CPU; Agent 2 the DCU ("Device Type: DCU", not GPU). */
	ck_assert_int_eq(xp_rocminfo_agents(text, len, a, 4, err, sizeof err), 1);
	ck_assert_str_eq(a[0].name, "gfx928"); /* not the ISA block's "amdgcn-amd-amdhsa--gfx928..." */
	ck_assert_str_eq(a[0].marketing, "K1xx_AI");
	ck_assert_str_eq(a[0].uuid, "GPU-7100fa8866904061");
	ck_assert_str_eq(a[0].type, "DCU");
	ck_assert_int_eq(a[0].compute_units, 12);
	/* Counted even when there is no room to keep it. */
	ck_assert_int_eq(xp_rocminfo_agents(text, len, a, 0, err, sizeof err), 1);
	free(text);
}
END_TEST

/* Without rocm-smi, rocminfo alone makes the devices. */
START_TEST(test_rocminfo_creates_devices)
{
	size_t len;
	char *text = fixture("hygon-dcu_dtk24.04.3.rocminfo.txt", &len), err[256] = "";
	struct xp_raw_node *n = xp_fake_node();
	ck_assert_int_eq(xp_rocminfo_parse(text, len, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 1);
	ck_assert_int_eq(n->devices[0].index, 0);
	ck_assert_str_eq(n->devices[0].name, "K1xx_AI");
	ck_assert_str_eq(n->devices[0].arch, "gfx928");
	ck_assert_str_eq(n->devices[0].uuid, "GPU-7100fa8866904061");
	free(text);
	free(n);
}
END_TEST

/* The UUID wins over the order: the DCU's agent goes to the second device, which has its id. */
START_TEST(test_rocminfo_match_by_uuid)
{
	size_t len;
	char *text = fixture("hygon-dcu_dtk24.04.3.rocminfo.txt", &len), err[256] = "";
	struct xp_raw_node *n = xp_fake_node();
	n->n_devices = 2;
	xp_raw_device_init(&n->devices[0]);
	xp_raw_device_init(&n->devices[1]);
	n->devices[0].index = 0;
	snprintf(n->devices[0].uuid, sizeof n->devices[0].uuid, "0x1234");
	n->devices[1].index = 1;
	snprintf(n->devices[1].uuid, sizeof n->devices[1].uuid, "0x7100FA8866904061");
	ck_assert_int_eq(xp_rocminfo_parse(text, len, n, err, sizeof err), 0);
	ck_assert_str_eq(n->devices[0].arch, "");
	ck_assert_str_eq(n->devices[1].arch, "gfx928");
	ck_assert_str_eq(n->devices[1].name, "K1xx_AI"); /* it had none */
	free(text);
	free(n);
}
END_TEST

START_TEST(test_rocminfo_bad_input)
{
	xp_fake_refuses(xp_rocminfo_parse, (const char *const[]){"no agents here\n", NULL});
	char err[256] = "";
	struct xp_raw_node *n = xp_fake_node();
	/* Cut in the middle of the DCU's block: what was read is kept, nothing breaks. */
	size_t len;
	char *text = fixture("hygon-dcu_dtk24.04.3.rocminfo.txt", &len);
	for (size_t cut = 0; cut < len; cut += 97) {
		xp_raw_node_init(n);
		int rc = xp_rocminfo_parse(text, cut, n, err, sizeof err);
		ck_assert(rc == 0 || rc == -1);
		ck_assert_int_le(n->n_devices, 1);
	}
	free(text);
	/* 20 MiB of one line with no newline, then 20 MiB of agent headers (more than 64). */
	char *g = xp_fake_huge("x", 1, NULL);
	ck_assert_int_eq(xp_rocminfo_parse(g, XP_FAKE_HUGE, n, err, sizeof err), -1);
	free(g);
	static const char agent[] = "Agent 1\n  Name: gfx906\n  Device Type: GPU\n";
	size_t k;
	g = xp_fake_huge(agent, sizeof agent - 1, &k);
	xp_raw_node_init(n);
	ck_assert_int_eq(xp_rocminfo_parse(g, k, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, XP_RAW_MAX_DEVICES);
	ck_assert_int_ge(n->n_warnings, 1);
	free(g);
	free(n);
}
END_TEST

/* ---- links ------------------------------------------------------------------------------ */

/* Built from the key rocm_smi.py writes for --showtopotype --json ("(Topology) Link type between
 * DRM devices {} and {}", values PCIE or XGMI): no fixture has an XGMI hive. */
START_TEST(test_xgmi_links)
{
	static const char json[] =
		"{\"card0\": {\"Card series\": \"A\"}, \"card1\": {\"Card series\": \"A\"},"
		" \"card2\": {\"Card series\": \"A\"}, \"system\": {"
		"\"(Topology) Link type between DRM devices 0 and 1\": \"XGMI\","
		"\"(Topology) Link type between DRM devices 0 and 2\": \"PCIE\","
		"\"(Topology) Link type between DRM devices 1 and 2\": \"PCIE\","
		"\"(Topology) Link type between DRM devices 1 and 7\": \"XGMI\"}}";
	struct xp_raw_node *n = xp_fake_node();
	char err[256] = "";
	ck_assert_int_eq(parse_str(json, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 3);
	ck_assert(n->has_links);
	ck_assert_str_eq(n->links[0][0], "X");
	ck_assert_str_eq(n->links[2][2], "X");
	ck_assert_str_eq(n->links[0][1], "XGMI");
	ck_assert_str_eq(n->links[1][0], "XGMI");
	ck_assert_str_eq(n->links[0][2], ""); /* PCIe: hwloc classifies it */
	ck_assert_str_eq(n->devices[0].group, "xgmi0");
	ck_assert_str_eq(n->devices[1].group, "xgmi0");
	ck_assert_str_eq(n->devices[2].group, "");
	free(n);
}
END_TEST

/* ---- bad input -------------------------------------------------------------------------- */

START_TEST(test_smi_bad_input)
{
	xp_fake_refuses(xp_rocmsmi_parse_json, (const char *const[]){
		"   \n", "hello, world\nnot json\n",
		"[{\"card0\": {}}]", /* array at top */
		"\"card0\"", "{\"card0\": 5}", "{\"card0\": {}, \"card0\": {}}", "{\"card0\": {\"a\": 1}} trailing",
		NULL});
	char err[256];
	struct xp_raw_node *n = xp_fake_node();
	/* Truncated anywhere: an error, never a crash. */
	size_t len;
	char *text = fixture("mi100-x4_rocm602.rocm-smi.json", &len);
	for (size_t cut = 0; cut + 2 < len; cut += 101)
		ck_assert_int_eq(xp_rocmsmi_parse_json(text, cut, n, err, sizeof err), -1);
	free(text);
	/* 20 MiB: of garbage, and of '[' (and '{') past jansson's depth limit. */
	for (const char *fill = "x[{"; *fill; fill++) {
		char *g = xp_fake_huge(fill, 1, NULL);
		ck_assert_int_eq(xp_rocmsmi_parse_json(g, XP_FAKE_HUGE, n, err, sizeof err), -1);
		free(g);
	}
	free(n);
}
END_TEST

/* A number where a string was, and the reverse: the field is skipped with a warning. */
START_TEST(test_smi_wrong_types)
{
	static const char json[] =
		"{\"card0\": {\"PCI Bus\": 5, \"Card series\": [\"x\"], \"Unique ID\": null,"
		" \"VRAM Total Memory (B)\": 1073741824, \"VRAM Total Used Memory (B)\": \"N/A\","
		" \"GPU use (%)\": 50, \"Temperature (Sensor junction) (C)\": {\"v\": 1},"
		" \"Temperature (Sensor edge) (C)\": \"40.5\", \"(Topology) Numa Node\": \"x\"},"
		" \"system\": [1, 2], \"cardX\": 3}";
	struct xp_raw_node *n = xp_fake_node();
	char err[256] = "";
	ck_assert_int_eq(parse_str(json, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 1);
	const struct xp_raw_device *d = &n->devices[0];
	ck_assert_str_eq(d->bus_id, "");
	ck_assert_str_eq(d->name, "");
	ck_assert_str_eq(d->uuid, "");
	ck_assert_int_eq(d->memory_total_mib, 1024);
	ck_assert_int_eq(d->memory_used_mib, -1);
	ck_assert_double_eq(d->utilization_pct, 50.0);
	ck_assert_double_eq(d->temperature_c, 40.5); /* junction unusable: edge */
	ck_assert_int_eq(d->numa, -1);
	/* PCI Bus, Card series, Unique ID, junction, "system". */
	ck_assert_int_ge(n->n_warnings, 5);
	free(n);
}
END_TEST

/* A warning line before the JSON, and more cards than a node holds. */
START_TEST(test_smi_leading_text_and_many_cards)
{
	struct xp_raw_node *n = xp_fake_node();
	char err[256] = "";
	static const char warned[] = "WARNING: something\n{\"card3\": {\"Card SKU\": \"S\"}}";
	ck_assert_int_eq(parse_str(warned, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 1);
	ck_assert_int_eq(n->devices[0].index, 3);
	ck_assert_str_eq(n->devices[0].name, "S");
	ck_assert_int_eq(n->n_warnings, 1);

	size_t cap = 100 * 32 + 16, o = 0;
	char *big = malloc(cap);
	ck_assert_ptr_nonnull(big);
	o += (size_t)snprintf(big + o, cap - o, "{");
	for (int i = 99; i >= 0; i--) /* written backwards: the parse puts them in card order */
		o += (size_t)snprintf(big + o, cap - o, "%s\"card%d\": {}", i == 99 ? "" : ",", i);
	snprintf(big + o, cap - o, "}");
	ck_assert_int_eq(parse_str(big, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, XP_RAW_MAX_DEVICES);
	ck_assert_int_eq(n->n_warnings, 1);
	for (int i = 1; i < n->n_devices; i++)
		ck_assert_int_lt(n->devices[i - 1].index, n->devices[i].index);
	free(big);
	free(n);
}
END_TEST

/* ---- the adapter, through a fake host ------------------------------------------------- */

/* Live runs: rocm-smi and hy-smi print text (NULL: they fail) and rocminfo fails, with exit status
 * 2; with fail_full, a query with -o fails too, as an older rocm-smi refuses telegraf's query. */
static void fake_tools(const char *text, bool fail_full)
{
	xp_fake_reset();
	xp_fake.fail = "exit status 2";
	xp_fake_answer((struct xp_fake_rule){.prog = "rocminfo"});
	if (fail_full)
		xp_fake_answer((struct xp_fake_rule){.has = "-o"});
	xp_fake_answer((struct xp_fake_rule){.out = text});
}

START_TEST(test_adapter_identity)
{
	ck_assert_int_eq(xp_adapter_amd.abi, XP_ADAPTER_ABI);
	ck_assert_str_eq(xp_adapter_amd.name, "amd");
	ck_assert_ptr_nonnull(xp_adapter_amd.probe);
	ck_assert_ptr_nonnull(xp_adapter_amd.enumerate);
	ck_assert_ptr_nonnull(xp_adapter_amd.refresh);
	ck_assert_ptr_nonnull(xp_adapter_amd.health);
	ck_assert_ptr_nonnull(xp_adapter_amd.topology);
	ck_assert_ptr_nonnull(xp_adapter_amd.last_error);
	ck_assert_ptr_nonnull(xp_adapter_amd.close);
}
END_TEST

START_TEST(test_replay_mi100)
{
	struct xp_fake_session s;
	xp_fake_open(&s, &xp_adapter_amd, true);
	const struct xp_adapter *a = s.a;
	struct xp_raw_node *n = s.n;
	xp_fake_copy(s.dir, "rocm-smi.json", "amd/mi100-x4_rocm602.rocm-smi.json");
	fake_tools(NULL, false);
	ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_ACTIVE);
	ck_assert_ptr_nonnull(s.st);
	ck_assert_int_eq(a->enumerate(s.st, n), 0);
	ck_assert_int_eq(n->n_devices, 4);
	ck_assert_str_eq(n->devices[3].bus_id, "0000:E3:00.0");
	ck_assert_str_eq(n->devices[2].name, "Arcturus GL-XL [Instinct MI100]");
	/* No rocminfo.txt: no ISA, and no complaint either (a missing file is an absent source). */
	ck_assert_str_eq(n->devices[0].arch, "");
	ck_assert_int_eq(n->n_warnings, 0);
	ck_assert_int_eq(a->topology(s.st, n), 0);
	ck_assert(!n->has_links);
	n->devices[1].temperature_c = NAN;
	ck_assert_int_eq(a->refresh(s.st, n), 0);
	ck_assert_double_eq(n->devices[1].temperature_c, 58.0);
	ck_assert_int_eq(a->health(s.st, n), 0);
	ck_assert_str_eq(a->last_error(s.st), "");
	ck_assert_int_eq(xp_fake.calls, 0); /* replay never runs a tool */
	/* The file vanishing later is an error with a reason, not a crash. */
	xp_fake_rmdir(s.dir);
	ck_assert_int_eq(a->enumerate(s.st, n), -1);
	ck_assert_ptr_nonnull(strstr(a->last_error(s.st), "rocm-smi.json"));
	xp_fake_close(&s);
}
END_TEST

START_TEST(test_replay_hygon_with_rocminfo)
{
	struct xp_fake_session s;
	xp_fake_open(&s, &xp_adapter_amd, true);
	xp_fake_copy(s.dir, "rocm-smi.json", "amd/hygon-dcu_dtk24.04.3.rocm-smi.json");
	xp_fake_copy(s.dir, "rocminfo.txt", "amd/hygon-dcu_dtk24.04.3.rocminfo.txt");
	ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_ACTIVE);
	ck_assert_int_eq(s.a->enumerate(s.st, s.n), 0);
	ck_assert_int_eq(s.n->n_devices, 1);
	ck_assert_str_eq(s.n->devices[0].name, "DCU xxxx");
	ck_assert_str_eq(s.n->devices[0].arch, "gfx928");
	ck_assert_int_eq(s.n->devices[0].memory_total_mib, 65520);
	xp_fake_close(&s);
}
END_TEST

START_TEST(test_replay_empty_dir)
{
	struct xp_fake_session s;
	xp_fake_open(&s, &xp_adapter_amd, true);
	ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_IDLE);
	ck_assert_ptr_nonnull(strstr(s.why, "rocm-smi.json"));
	/* A garbage file still makes the probe ACTIVE (it is there); enumerate says why it fails. */
	xp_fake_file(s.dir, "rocm-smi.json", "garbage", 7, 0644);
	ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_ACTIVE);
	ck_assert_int_eq(s.a->enumerate(s.st, s.n), -1);
	ck_assert_ptr_nonnull(strstr(s.a->last_error(s.st), "rocm-smi.json"));
	xp_fake_close(&s);
}
END_TEST

/* Live: a directory on PATH holds a file named like the tool; the fake host answers for it. */
START_TEST(test_live_rocm_smi)
{
	struct xp_fake_session s;
	xp_fake_open(&s, &xp_adapter_amd, false);
	const struct xp_adapter *a = s.a;
	struct xp_raw_node *n = s.n;
	xp_fake_tool(s.dir, "rocm-smi");
	xp_fake_tool(s.dir, "rocminfo");
	size_t len;
	char *text = fixture("mi100-x4_rocm602.rocm-smi.json", &len);
	fake_tools(text, false);
	char want[4096];
	ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_ACTIVE);
	snprintf(want, sizeof want, "%s/rocm-smi", s.dir);
	ck_assert_str_eq(xp_fake.argv[0], want); /* found on PATH, run by absolute path */
	ck_assert_str_eq(xp_fake.argv[xp_fake.argc - 1], "--json");
	ck_assert(!xp_fake_saw("--showid")); /* telegraf's query first */
	ck_assert_int_eq(xp_fake.calls, 1);
	ck_assert_int_eq(a->enumerate(s.st, n), 0);
	ck_assert_int_eq(n->n_devices, 4);
	/* The probe's read serves the first enumerate; then rocminfo (which fails: ISA unknown). */
	ck_assert_int_eq(xp_fake.calls, 2);
	ck_assert_int_eq(n->n_warnings, 1);
	ck_assert_ptr_nonnull(strstr(n->warnings[0], "rocminfo"));
	ck_assert_str_eq(a->last_error(s.st), "");
	/* Later reads run rocm-smi again. */
	ck_assert_int_eq(a->enumerate(s.st, n), 0);
	ck_assert_int_eq(xp_fake.calls, 4);
	ck_assert_int_eq(n->n_devices, 4);

	/* A probe whose result no enumerate takes: the next probe's close frees it (LeakSanitizer
	 * checks). */
	ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_ACTIVE);

	/* An rocm-smi that refuses the long query gets gpustack's narrow one. */
	fake_tools(text, true);
	ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_ACTIVE);
	ck_assert_int_eq(xp_fake.calls, 2);
	ck_assert(xp_fake_saw("--showid"));

	/* A tool that fails outright: no hardware here, said why. */
	fake_tools(NULL, false);
	ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_IDLE);
	ck_assert_ptr_nonnull(strstr(s.why, "rocm-smi"));

	free(text);
	xp_fake_close(&s);
}
END_TEST

START_TEST(test_live_hy_smi)
{
	struct xp_fake_session s;
	xp_fake_open(&s, &xp_adapter_amd, false);
	xp_fake_tool(s.dir, "hy-smi");
	struct stat sb;
	/* The adapter also looks where ROCm and DTK install their tools; a real install there
	 * would be found first, so these checks only run on machines without one. */
	bool rocm_installed = stat("/opt/rocm/bin/rocm-smi", &sb) == 0 ||
			      stat("/opt/dtk/bin/rocm-smi", &sb) == 0 ||
			      stat("/opt/rocm/bin/hy-smi", &sb) == 0 || stat("/opt/dtk/bin/hy-smi", &sb) == 0;
	size_t len;
	char *text = fixture("hygon-dcu_dtk24.04.3.rocm-smi.json", &len);
	fake_tools(text, false);
	if (!rocm_installed) {
		ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_ACTIVE);
		ck_assert_ptr_nonnull(strstr(xp_fake.argv[0], "/hy-smi"));
		ck_assert(xp_fake_saw("--showid")); /* only the narrow query for hy-smi */
		ck_assert_int_eq(xp_fake.calls, 1);
		/* Neither tool: unavailable, with the reason the console shows. */
		char empty[] = "/tmp/xp_amd_XXXXXX";
		ck_assert_ptr_nonnull(mkdtemp(empty));
		setenv("PATH", empty, 1);
		ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_UNAVAILABLE);
		ck_assert_str_eq(s.why, "no rocm-smi or hy-smi");
		rmdir(empty);
	}
	free(text);
	xp_fake_close(&s);
}
END_TEST

XP_DEFINE_SUITE(amd,
	{"amd", .timeout_s = 60,
	 .loop = test_smi_fixture, .loop_n = (int)(sizeof smi_files / sizeof smi_files[0]),
	 .tests = {test_every_fixture_parses, test_mi100_x4, test_rocminfo_agents, test_rocminfo_creates_devices,
		   test_rocminfo_match_by_uuid, test_rocminfo_bad_input, test_xgmi_links,
		   test_smi_bad_input, test_smi_wrong_types, test_smi_leading_text_and_many_cards,
		   test_adapter_identity, test_replay_mi100, test_replay_hygon_with_rocminfo,
		   test_replay_empty_dir, test_live_rocm_smi, test_live_hy_smi}})
