/* check_nvidia.c: the NVIDIA adapter: `nvidia-smi -q -x` and `topo -m` parsers over every
 * recorded output in tests/fixtures/nvidia-smi, hostile and broken inputs, the adapter in
 * replay mode and in live mode with a stand-in nvidia-smi, and NVML's absence.
 * Expected values are read off the fixtures by hand. */
#include <check.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fakehost.h"
#include "nvidia/nvidia.h"
#include "suitelib.h"
#include "testlib.h"
#include "xp.h"

#define NV "nvidia-smi/"

/* Parses a fixture that must parse; returns the node (free it). */
static struct xp_raw_node *xml_fixture(const char *rel)
{
	size_t len;
	char *text = xp_fixture_text(rel, &len);
	struct xp_raw_node *n = xp_fake_node();
	char err[256] = "";
	ck_assert_msg(xp_nvsmi_parse_xml(text, len, n, err, sizeof err) == 0, "%s: %s", rel, err);
	free(text);
	return n;
}

/* Replaces the first occurrence of from in text (a malloc'd string) by to. */
static char *replace(char *text, const char *from, const char *to)
{
	char *at = strstr(text, from);
	ck_assert_msg(at != NULL, "fixture lacks \"%s\"", from);
	size_t pre = (size_t)(at - text), fl = strlen(from), tl = strlen(to), rest = strlen(at + fl);
	char *out = malloc(pre + tl + rest + 1);
	ck_assert_ptr_nonnull(out);
	memcpy(out, text, pre);
	memcpy(out + pre, to, tl);
	memcpy(out + pre + tl, at + fl, rest + 1);
	free(text);
	return out;
}

/* Fixture rel's text with each pair of strings that follows (from, to; up to a NULL from)
 * replaced at its first place (caller frees): a real document with values the fixtures lack. */
static char *edited(const char *rel, ...)
{
	char *t = xp_fixture_text(rel, NULL);
	va_list ap;
	va_start(ap, rel);
	const char *from;
	while ((from = va_arg(ap, const char *)) != NULL)
		t = replace(t, from, va_arg(ap, const char *));
	va_end(ap);
	return t;
}

static int parse_xml_str(const char *text, struct xp_raw_node *n, char *err, size_t errlen)
{
	return xp_nvsmi_parse_xml(text, strlen(text), n, err, errlen);
}

/* ---- capture files: sections headed "# $ command" ----------------------------------------- */

/* The output of the first section whose command is exactly cmd (malloc'd), NULL if none.
 * A section's output starts after the rule line below its "# $" line and ends at the next
 * rule line. */
static char *capture_section(const char *text, const char *cmd, size_t *len)
{
	const char *p = text;
	while ((p = strstr(p, "# $ ")) != NULL) {
		if (p != text && p[-1] != '\n') {
			p += 4;
			continue;
		}
		const char *eol = strchr(p, '\n');
		if (!eol)
			return NULL;
		size_t cl = (size_t)(eol - p - 4);
		bool same = cl == strlen(cmd) && strncmp(p + 4, cmd, cl) == 0;
		p = eol + 1;
		if (!same)
			continue;
		if (strncmp(p, "#####", 5) == 0)
			p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p);
		const char *end = strstr(p, "\n#####");
		size_t n = end ? (size_t)(end - p) + 1 : strlen(p);
		char *out = malloc(n + 1);
		ck_assert_ptr_nonnull(out);
		memcpy(out, p, n);
		out[n] = '\0';
		*len = n;
		return out;
	}
	return NULL;
}

/* Every command of a capture, to check what the captures hold. */
static int capture_commands(const char *text, char cmds[][96], int max)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, "# $ ")) != NULL && n < max; p += 4) {
		if (p != text && p[-1] != '\n')
			continue;
		const char *eol = strchr(p, '\n');
		size_t l = eol ? (size_t)(eol - p - 4) : strlen(p + 4);
		snprintf(cmds[n++], 96, "%.*s", (int)l, p + 4);
	}
	return n;
}

/* ---- nvidia-smi -q -x --------------------------------------------------------------------- */

/* A100 with MIG on: what only this file shows (its slices). */
static void a100_mig_more(struct xp_raw_node *n)
{
	/* telegraf kept one <gpu> of the four the report counts: a cut report is a warning. */
	ck_assert_int_eq(n->n_warnings, 1);
	ck_assert(xp_fake_warned(n, "nvidia-smi says attached_gpus 4 but lists 1 <gpu>"));
	const struct xp_raw_device *d = &n->devices[0];
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(d->slices[i].gpu_instance, 3 + i);
		ck_assert_int_eq(d->slices[i].compute_instance, 0);
		ck_assert_int_eq(d->slices[i].memory_mib, 19968);
		ck_assert_str_eq(d->slices[i].profile, "");
		ck_assert_str_eq(d->slices[i].uuid, "");
	}
	ck_assert(!n->has_links);
	ck_assert_str_eq(n->hostname, "");
}

/* Every recorded `nvidia-smi -q -x` holds one <gpu>; what its device must hold (fields not
 * listed are not checked), read off the file by hand. */
static const struct xp_fake_expect xml_files[] = {
	/* <attached_gpus> says 4 but the recorded file keeps a single <gpu>. */
	{NV "a100-sxm4-80gb-x4_535.54.03.q.xml",
	 {"index=0", /* position, not <minor_number>1 */
	  "bus_id=00000000:01:00.0", "name=NVIDIA A100-SXM4-80GB", "arch=Ampere",
	  "uuid=GPU-513536b6-7d19-9063-b049-1e69664bb298", "serial=1650522003820",
	  "driver=535.54.03", "runtime=CUDA 12.2", "firmware=92.00.36.00.02",
	  "memory_total_mib=81920", "memory_used_mib=50", "temperature_c=27", "power_w=67.03",
	  "power_limit_w=500",
	  "utilization_pct=nan", /* N/A with MIG on */
	  "ecc_corrected=0", "ecc_uncorrected=0",
	  "retired_pages=-1", /* N/A: A100s remap rows instead */
	  "n_reasons=0", "health=", "numa=-1", "mig_mode=1", "n_slices=4"},
	 a100_mig_more},
	{NV "tesla-t4_515.105.01.q.xml",
	 {"bus_id=00000000:00:1E.0", "name=Tesla T4", "arch=Turing",
	  "uuid=GPU-d37e67a5-91dd-3774-a5cb-99096249601a", "serial=0000000000000",
	  "driver=515.105.01", "runtime=CUDA 11.7", "firmware=90.04.84.00.06",
	  "memory_total_mib=15360", "memory_used_mib=1032", "temperature_c=40", "power_w=26.78",
	  "power_limit_w=70", "utilization_pct=0", "ecc_corrected=0", "ecc_uncorrected=0",
	  "retired_pages=0", "n_reasons=0",
	  "mig_mode=-1", /* N/A */
	  /* <mig_devices>None</mig_devices>; <processes> hold gpu_instance_id elements too,
	   * they are not MIG devices. */
	  "n_slices=0"}},
	{NV "rtx-4000-sff-ada_595.84.q.xml",
	 {"bus_id=00000000:06:00.0", "name=NVIDIA RTX 4000 SFF Ada Generation",
	  "arch=Ada Lovelace", "serial=REDACTED", "driver=595.84", "runtime=CUDA 13.2",
	  "firmware=95.04.53.00.01", "memory_total_mib=20475", "memory_used_mib=3534",
	  "temperature_c=38",
	  "power_w=8.44", /* instant_power_draw */
	  "power_limit_w=70", "utilization_pct=0",
	  "ecc_corrected=-1", "ecc_uncorrected=-1", "retired_pages=-1", /* ECC disabled: N/A */
	  "n_reasons=0", /* only gpu_idle is Active */
	  "mig_mode=-1"}},
	{NV "gtx-1070-ti.q.xml",
	 {"bus_id=00000000:01:00.0", "name=GeForce GTX 1070 Ti",
	  "uuid=GPU-f9ba66fc-a7f5-94c5-da19-019ef2f9c665",
	  "driver=", /* the abridged file has no driver_version */
	  "runtime=", "arch=", "memory_total_mib=4096", "memory_used_mib=42", "temperature_c=39",
	  "power_w=nan", "power_limit_w=nan", "utilization_pct=0", "ecc_corrected=-1",
	  "retired_pages=-1", "mig_mode=-1"}},
	{NV "quadro-p400_418.43.q.xml",
	 {"bus_id=00000000:43:00.0", "name=Quadro P400", "serial=0424418054852",
	  "uuid=GPU-8f750be4-dfbc-23b9-b33f-da729a536494", "driver=418.43", "runtime=CUDA 10.1",
	  "firmware=86.07.3B.00.4A", "memory_total_mib=1998", "memory_used_mib=0",
	  "temperature_c=33", "power_w=nan", "utilization_pct=0",
	  "ecc_corrected=-1", "ecc_uncorrected=-1", /* single_bit/total N/A */
	  "retired_pages=-1", "n_reasons=0",
	  "mig_mode=-1"}}, /* no <mig_mode> before r450 */
};

START_TEST(xml_fixture_values)
{
	free(xp_fake_expect_one(&xml_files[_i], xp_nvsmi_parse_xml));
}
END_TEST

/* Health fields, with values written into real documents where the fixtures are all quiet. */
START_TEST(xml_health_fields)
{
	size_t len;
	char err[256];
	struct xp_raw_node *n = xp_fake_node();

	/* v11 throttle reasons: benign ones are not reasons, the others use nvidia-smi's words. */
	char *t = edited(NV "tesla-t4_515.105.01.q.xml",
			 "<clocks_throttle_reason_hw_slowdown>Not Active", "<clocks_throttle_reason_hw_slowdown>Active",
			 "<clocks_throttle_reason_sw_thermal_slowdown>Not Active",
			 "<clocks_throttle_reason_sw_thermal_slowdown>Active",
			 "<clocks_throttle_reason_gpu_idle>Not Active", "<clocks_throttle_reason_gpu_idle>Active",
			 "<pending_retirement>No", "<pending_retirement>Yes",
			 "<retired_count>0</retired_count>", "<retired_count>2</retired_count>", NULL);
	ck_assert_int_eq(parse_xml_str(t, n, err, sizeof err), 0);
	const struct xp_raw_device *d = &n->devices[0];
	ck_assert_int_eq(d->n_reasons, 3);
	ck_assert_str_eq(d->reasons[0], "Page retirement pending");
	ck_assert_str_eq(d->reasons[1], "HW slowdown");
	ck_assert_str_eq(d->reasons[2], "SW thermal slowdown");
	ck_assert_int_eq(d->retired_pages, 2);
	free(t);

	/* v12 ECC: sram + dram per scope, the larger of volatile and aggregate. */
	t = edited(NV "a100-sxm4-80gb-x4_535.54.03.q.xml",
		   "<sram_correctable>0</sram_correctable>", "<sram_correctable>2</sram_correctable>",
		   "<dram_correctable>0</dram_correctable>", "<dram_correctable>1</dram_correctable>",
		   "<reset_required>No", "<reset_required>Yes",
		   "<clocks_event_reason_hw_thermal_slowdown>Not Active",
		   "<clocks_event_reason_hw_thermal_slowdown>Active", NULL);
	/* the first (volatile) counts are set above; these are the aggregate's */
	char *agg = strstr(t, "<aggregate>");
	ck_assert_ptr_nonnull(agg);
	memcpy(strstr(agg, "<dram_correctable>0<") + 18, "5", 1);
	memcpy(strstr(agg, "<dram_uncorrectable>0<") + 20, "1", 1);
	ck_assert_int_eq(parse_xml_str(t, n, err, sizeof err), 0);
	d = &n->devices[0];
	ck_assert_int_eq(d->ecc_corrected, 5);   /* volatile 2+1=3, aggregate 0+5=5 */
	ck_assert_int_eq(d->ecc_uncorrected, 1); /* aggregate dram */
	ck_assert_int_eq(d->n_reasons, 2);
	ck_assert_str_eq(d->reasons[0], "GPU reset required");
	ck_assert_str_eq(d->reasons[1], "HW thermal slowdown");
	free(t);

	/* v13 ECC: sram_uncorrectable_parity and _secded are both uncorrected. */
	t = edited(NV "rtx-4000-sff-ada_595.84.q.xml",
		   "<sram_uncorrectable_parity>N/A", "<sram_uncorrectable_parity>1",
		   "<sram_uncorrectable_secded>N/A", "<sram_uncorrectable_secded>2",
		   "<remapped_row_failure>No", "<remapped_row_failure>Yes",
		   "<mig_mode>\n\t\t\t<current_mig>N/A", "<mig_mode>\n\t\t\t<current_mig>Disabled", NULL);
	ck_assert_int_eq(parse_xml_str(t, n, err, sizeof err), 0);
	d = &n->devices[0];
	ck_assert_int_eq(d->ecc_uncorrected, 3);
	ck_assert_int_eq(d->ecc_corrected, -1);
	ck_assert_int_eq(d->mig_mode, 0);
	ck_assert_int_eq(d->n_reasons, 1);
	ck_assert_str_eq(d->reasons[0], "Row remapping failure");
	free(t);

	/* v10-era ECC: single_bit/double_bit totals. */
	t = xp_fixture_text(NV "quadro-p400_418.43.q.xml", &len);
	char *vol = strstr(t, "<volatile>");
	ck_assert_ptr_nonnull(vol);
	char *tot = strstr(vol, "<total>N/A</total>");
	memcpy(tot, "<total>4</total>  ", 18); /* same length: trailing blanks are text */
	agg = strstr(t, "<aggregate>");
	tot = strstr(agg, "<total>N/A</total>");
	memcpy(tot, "<total>7</total>  ", 18);
	tot = strstr(tot + 1, "<total>N/A</total>");
	memcpy(tot, "<total>1</total>  ", 18);
	ck_assert_int_eq(parse_xml_str(t, n, err, sizeof err), 0);
	ck_assert_int_eq(n->devices[0].ecc_corrected, 7);
	ck_assert_int_eq(n->devices[0].ecc_uncorrected, 1);
	free(t);
	free(n);
}
END_TEST

/* Zero GPUs is a valid report; more GPUs than a node record holds is a warning. */
START_TEST(xml_gpu_counts)
{
	size_t len;
	char err[256];
	struct xp_raw_node *n = xp_fake_node();
	char *t = xp_fixture_text(NV "tesla-t4_515.105.01.q.xml", &len);
	char *g0 = strstr(t, "    <gpu id=");
	char *g1 = strstr(t, "</gpu>");
	ck_assert(g0 && g1);
	g1 += strlen("</gpu>\n");
	size_t glen = (size_t)(g1 - g0);

	/* the same document without its <gpu> */
	char *none = malloc(len + 1);
	memcpy(none, t, (size_t)(g0 - t));
	strcpy(none + (g0 - t), g1);
	ck_assert_int_eq(parse_xml_str(none, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 0);
	ck_assert_int_eq(n->n_warnings, 1); /* it still says <attached_gpus>1 */
	ck_assert(xp_fake_warned(n, "attached_gpus 1 but lists 0 <gpu>"));
	/* and with the count it should have: zero GPUs is a valid report */
	char *zero = malloc(len + 1);
	ck_assert_ptr_nonnull(zero);
	strcpy(zero, none);
	char *at = strstr(zero, "<attached_gpus>1<");
	ck_assert_ptr_nonnull(at);
	at[strlen("<attached_gpus>")] = '0';
	ck_assert_int_eq(parse_xml_str(zero, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 0);
	ck_assert_int_eq(n->n_warnings, 0);
	/* a count that is no count (words, negative, past what a long holds) is said as written */
	const char *odd[] = {"abc", "-3", "99999999999999999999"};
	for (size_t i = 0; i < 3; i++) {
		char *bad = xp_asprintf("%.*s<attached_gpus>%s%s", (int)(at - zero), zero, odd[i],
					at + strlen("<attached_gpus>0"));
		ck_assert_int_eq(parse_xml_str(bad, n, err, sizeof err), 0);
		char want[96];
		snprintf(want, sizeof want, "nvidia-smi says attached_gpus %s, not a count; it lists 0 <gpu>", odd[i]);
		ck_assert_msg(xp_fake_warned(n, want), "%s", want);
		free(bad);
	}
	free(zero);
	free(none);

	/* 70 copies of it */
	size_t big = len + 70 * glen + 1;
	char *many = malloc(big);
	size_t o = (size_t)(g0 - t);
	memcpy(many, t, o);
	for (int i = 0; i < 70; i++, o += glen)
		memcpy(many + o, g0, glen);
	strcpy(many + o, g1);
	ck_assert_int_eq(parse_xml_str(many, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, XP_RAW_MAX_DEVICES);
	ck_assert_int_eq(n->devices[63].index, 63);
	ck_assert_str_eq(n->devices[63].name, "Tesla T4");
	ck_assert(xp_fake_warned(n, "lists 70 GPUs; only the first 64"));
	free(many);
	free(t);
	free(n);
}
END_TEST

/* Runs fn with stderr sent to a temporary file; returns how many bytes were written there. */
static long stderr_bytes_during(void (*fn)(void))
{
	fflush(stderr);
	char path[] = "/tmp/xp-nv-stderr-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	int saved = dup(2);
	dup2(fd, 2);
	fn();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	struct stat st;
	fstat(fd, &st);
	close(fd);
	unlink(path);
	return (long)st.st_size;
}

static void expect_xml_error(const char *text, size_t len, const char *part)
{
	struct xp_raw_node *n = xp_fake_node();
	char err[256] = "";
	ck_assert_int_eq(xp_nvsmi_parse_xml(text, len, n, err, sizeof err), -1);
	ck_assert_msg(strstr(err, part) != NULL, "error \"%s\" lacks \"%s\"", err, part);
	ck_assert_int_eq(n->n_devices, 0);
	free(n);
}

static void bad_xml_inputs(void)
{
	expect_xml_error("", 0, "empty input");
	expect_xml_error(NULL, 0, "empty input");
	expect_xml_error("   \n", 4, "not XML");

	size_t len;
	char *t = xp_fixture_text(NV "tesla-t4_515.105.01.q.xml", &len);
	size_t cuts[] = {1, 40, len / 10, len / 2, len * 9 / 10, len - 3};
	for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
		expect_xml_error(t, cuts[i], "nvidia-smi -q -x: ");
	free(t);

	/* garbage: deterministic pseudo-random bytes, with and without a leading '<' */
	char *g = malloc(65536);
	unsigned s = 12345;
	for (size_t i = 0; i < 65536; i++) {
		s = s * 1103515245u + 12345u;
		g[i] = (char)(s >> 16);
	}
	g[0] = 'x';
	expect_xml_error(g, 65536, "not XML");
	g[0] = '<';
	expect_xml_error(g, 65536, "nvidia-smi -q -x: ");
	free(g);

	/* 20 MiB: refused before parsing */
	size_t huge = (size_t)20 << 20;
	char *h = malloc(huge);
	memset(h, ' ', huge);
	memcpy(h, "<nvidia_smi_log>", 16);
	expect_xml_error(h, huge, "more than the 16 MiB limit");
	free(h);

	/* an entity expansion bomb and an external entity are refused, not expanded */
	const char *lol = "<?xml version=\"1.0\"?>\n<!DOCTYPE nvidia_smi_log [\n"
			  " <!ENTITY a \"aaaaaaaaaa\">\n <!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">\n"
			  " <!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">\n"
			  " <!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\">\n"
			  " <!ENTITY e \"&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;\">\n"
			  " <!ENTITY f \"&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;\">\n"
			  " <!ENTITY g \"&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;\">\n"
			  " <!ENTITY h \"&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;\">\n"
			  " <!ENTITY i \"&h;&h;&h;&h;&h;&h;&h;&h;&h;&h;\">\n"
			  "]>\n<nvidia_smi_log><gpu id=\"&i;\"><product_name>&i;</product_name></gpu>"
			  "</nvidia_smi_log>\n";
	expect_xml_error(lol, strlen(lol), "entity declarations are not accepted");
	const char *xxe = "<?xml version=\"1.0\"?>\n<!DOCTYPE nvidia_smi_log [ <!ENTITY x SYSTEM "
			  "\"file:///etc/passwd\"> ]>\n<nvidia_smi_log><gpu><product_name>&x;"
			  "</product_name></gpu></nvidia_smi_log>\n";
	expect_xml_error(xxe, strlen(xxe), "entity declarations are not accepted");
	/* an undeclared entity is a parse error, not a lookup */
	const char *undeclared = "<nvidia_smi_log><gpu><product_name>&x;</product_name></gpu></nvidia_smi_log>";
	expect_xml_error(undeclared, strlen(undeclared), "nvidia-smi -q -x: ");

	/* wrong root, wrong format, wrong vendor */
	const char *root = "<?xml version=\"1.0\"?>\n<smi_log><gpu id=\"0\"/></smi_log>\n";
	expect_xml_error(root, strlen(root), "the root element is <smi_log>, not <nvidia_smi_log>");
	char *q = xp_fixture_text(NV "q-i0_h800_525.105.17.txt", &len); /* the text form of -q */
	expect_xml_error(q, len, "not XML");
	free(q);
	const char *json = "{\"card0\": {\"Card series\": \"x\"}}";
	expect_xml_error(json, strlen(json), "not XML");
}

START_TEST(xml_bad_input)
{
	/* libxml2 must not print its complaints: the console owns the terminal. */
	ck_assert_int_eq(stderr_bytes_during(bad_xml_inputs), 0);
}
END_TEST

/* The fixture with ins put after "<product_name>"; caller frees. */
static char *t4_with(const char *ins, size_t ins_len, size_t *len)
{
	size_t tlen;
	char *t = xp_fixture_text(NV "tesla-t4_515.105.01.q.xml", &tlen);
	char *at = strstr(t, "<product_name>");
	ck_assert_ptr_nonnull(at);
	size_t head = (size_t)(at - t) + strlen("<product_name>");
	char *d = malloc(tlen + ins_len + 1);
	ck_assert_ptr_nonnull(d);
	memcpy(d, t, head);
	memcpy(d + head, ins, ins_len);
	memcpy(d + head + ins_len, t + head, tlen - head + 1);
	*len = tlen + ins_len;
	free(t);
	return d;
}

/* A parse error whose message holds no control byte. */
static void expect_clean_error(const char *text, size_t len, const char *part)
{
	struct xp_raw_node *n = xp_fake_node();
	char err[256] = "";
	ck_assert_int_eq(xp_nvsmi_parse_xml(text, len, n, err, sizeof err), -1);
	ck_assert_msg(strstr(err, part) != NULL, "error \"%s\" lacks \"%s\"", err, part);
	for (const char *p = err; *p; p++)
		ck_assert_msg((unsigned char)*p >= 0x20 && *p != 0x7f, "control byte in \"%s\"", err);
	free(n);
}

static void hostile_xml_inputs(void)
{
	/* A text node past libxml2's 10 MB limit with terminal escapes (retitle, recolour)
	 * around it: libxml2 reports "huge text node" through the validity handler, which
	 * XML_PARSE_NOERROR leaves alone, quoting the input line, escapes and all. */
	size_t big = 10000100, len;
	char *fill = malloc(big);
	ck_assert_ptr_nonnull(fill);
	memset(fill, 'x', big);
	char *d;
	const char esc[] = "\x1b]0;pwned\x07\x1b[41;37m";
	memcpy(fill, esc, sizeof esc - 1);
	memcpy(fill + big - (sizeof esc - 1), esc, sizeof esc - 1);
	d = t4_with(fill, big, &len);
	expect_clean_error(d, len, "nvidia-smi -q -x: line 9: ");
	free(d);
	free(fill);
	/* A 10 MiB end-tag name. */
	size_t nl = (size_t)10 << 20;
	char *tag = malloc(nl + 8);
	ck_assert_ptr_nonnull(tag);
	memcpy(tag, "<a></", 5);
	memset(tag + 5, 'b', nl);
	tag[5 + nl] = '>';
	d = t4_with(tag, nl + 6, &len);
	expect_clean_error(d, len, "nvidia-smi -q -x: ");
	free(d);
	free(tag);
}

/* Hostile text never reaches the terminal: no libxml2 output, and the error xpool gives
 * has its control bytes masked. */
START_TEST(xml_hostile_text)
{
	ck_assert_int_eq(stderr_bytes_during(hostile_xml_inputs), 0);
}
END_TEST

/* A DOCTYPE naming the external DTD, as every real report has, is fine and is not loaded. */
START_TEST(xml_doctype_not_loaded)
{
	const char *doc = "<?xml version=\"1.0\" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM \"/nonexistent/x.dtd\">\n"
			  "<nvidia_smi_log><driver_version>1.2</driver_version></nvidia_smi_log>\n";
	struct xp_raw_node *n = xp_fake_node();
	char err[256] = "";
	ck_assert_int_eq(parse_xml_str(doc, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 0);
	free(n);
}
END_TEST

/* ---- captures ----------------------------------------------------------------------------- */

static const char *const captures[] = {
	NV "capture_h100-80gb-hbm3_590.48.01.txt",
	NV "capture_h200-mig_590.48.01.txt",
	NV "capture_l40s_595.80.txt",
};

START_TEST(capture_sections)
{
	for (size_t c = 0; c < sizeof captures / sizeof captures[0]; c++) {
		size_t len, sl;
		char *text = xp_fixture_text(captures[c], &len);
		char cmds[64][96];
		int n = capture_commands(text, cmds, 64);
		ck_assert_int_ge(n, 20);
		/* The captures hold `-q` in its text form only, never `-q -x`. */
		for (int i = 0; i < n; i++)
			ck_assert_msg(strstr(cmds[i], "-q -x") == NULL && strstr(cmds[i], "--xml") == NULL,
				      "%s: %s", captures[c], cmds[i]);
		char *q = capture_section(text, "nvidia-smi -q", &sl);
		ck_assert_ptr_nonnull(q);
		ck_assert_ptr_nonnull(strstr(q, "==============NVSMI LOG=============="));
		struct xp_raw_node *node = xp_fake_node();
		char err[256] = "";
		ck_assert_int_eq(xp_nvsmi_parse_xml(q, sl, node, err, sizeof err), -1);
		ck_assert_ptr_nonnull(strstr(err, "not XML"));
		free(q);

		/* topo -m: one GPU, its self cell, NUMA node 0; the header is underlined with
		 * ANSI escapes and the row has a doubled tab before "GPU NUMA ID". */
		char *topo = capture_section(text, "nvidia-smi topo -m", &sl);
		ck_assert_ptr_nonnull(topo);
		ck_assert_ptr_nonnull(strchr(topo, '\033'));
		xp_raw_node_init(node);
		ck_assert_msg(xp_nvsmi_parse_topo(topo, sl, node, err, sizeof err) == 0, "%s", err);
		ck_assert_int_eq(node->n_devices, 1);
		ck_assert(node->has_links);
		ck_assert_str_eq(node->links[0][0], "X");
		ck_assert_int_eq(node->devices[0].index, 0);
		ck_assert_int_eq(node->devices[0].numa, 0);
		ck_assert_int_eq(node->n_warnings, 0);
		free(topo);
		free(node);
		free(text);
	}
}
END_TEST

/* The H200 capture's MIG state is only in text sections; this checks the splitter finds the
 * same five instances the XML parser would report as slices. */
START_TEST(capture_h200_mig_listing)
{
	size_t len, sl;
	char *text = xp_fixture_text(captures[1], &len);
	char *l = capture_section(text, "nvidia-smi -L", &sl);
	ck_assert_ptr_nonnull(l);
	ck_assert_ptr_nonnull(strstr(l, "GPU 0: NVIDIA H200 (UUID: GPU-00000000-0000-0000-0000-000000000000)"));
	int migs = 0;
	for (const char *p = l; (p = strstr(p, "  MIG ")) != NULL; p++)
		migs++;
	ck_assert_int_eq(migs, 5);
	ck_assert_ptr_nonnull(strstr(l, "MIG 1c.3g.71gb"));
	ck_assert_ptr_nonnull(strstr(l, "MIG 1g.18gb"));
	/* The parser names them on the GPU the topo -m matrix gave (no -q -x in the capture). */
	char *topo = capture_section(text, "nvidia-smi topo -m", &len);
	struct xp_raw_node *node = xp_fake_node();
	char err[256] = "";
	ck_assert_int_eq(xp_nvsmi_parse_topo(topo, len, node, err, sizeof err), 0);
	ck_assert_msg(xp_nvsmi_parse_list(l, sl, node, err, sizeof err) == 0, "%s", err);
	const struct xp_raw_device *d = &node->devices[0];
	ck_assert_str_eq(d->name, "NVIDIA H200");
	ck_assert_int_eq(d->mig_mode, 1);
	ck_assert_int_eq(d->n_slices, 5);
	static const char *const prof[] = {"1c.3g.71gb", "2c.3g.71gb", "2g.35gb", "1g.18gb", "1g.18gb"};
	for (int i = 0; i < 5; i++) {
		ck_assert_str_eq(d->slices[i].profile, prof[i]);
		char u[64];
		snprintf(u, sizeof u, "MIG-0000000%d-0000-0000-0000-00000000000%d", i, i);
		ck_assert_str_eq(d->slices[i].uuid, u);
	}
	/* A second pass (as after -q -x gave the instances by UUID) adds none. */
	ck_assert_int_eq(xp_nvsmi_parse_list(l, sl, node, err, sizeof err), 0);
	ck_assert_int_eq(node->devices[0].n_slices, 5);
	char pr[32];
	ck_assert_int_eq(xp_nv_mig_profile("MIG 2g.35gb     Device  2:", pr, sizeof pr), 1);
	ck_assert_str_eq(pr, "2g.35gb");
	ck_assert_int_eq(xp_nv_mig_profile("NVIDIA H200", pr, sizeof pr), 0);
	free(node);
	free(topo);
	free(l);
	free(text);
}
END_TEST

/* ---- topo -m ------------------------------------------------------------------------------ */

static struct xp_raw_node *topo_fixture(const char *rel)
{
	size_t len;
	char *text = xp_fixture_text(rel, &len);
	struct xp_raw_node *n = xp_fake_node();
	char err[256] = "";
	ck_assert_msg(xp_nvsmi_parse_topo(text, len, n, err, sizeof err) == 0, "%s: %s", rel, err);
	free(text);
	return n;
}

START_TEST(topo_2x1080ti)
{
	struct xp_raw_node *n = topo_fixture(NV "topo-m_2x1080ti-phb.txt");
	ck_assert_int_eq(n->n_devices, 2);
	ck_assert(n->has_links);
	ck_assert_int_eq(n->n_warnings, 0);
	ck_assert_int_eq(n->devices[0].index, 0);
	ck_assert_int_eq(n->devices[1].index, 1);
	ck_assert_str_eq(n->links[0][0], "X");
	ck_assert_str_eq(n->links[0][1], "PHB");
	ck_assert_str_eq(n->links[1][0], "PHB");
	ck_assert_str_eq(n->links[1][1], "X");
	ck_assert_int_eq(n->devices[0].numa, -1); /* N/A */
	ck_assert_int_eq(n->devices[1].numa, -1);
	ck_assert_str_eq(n->devices[0].name, ""); /* the matrix names nothing */
	free(n);
}
END_TEST

START_TEST(topo_4xa10_nics)
{
	struct xp_raw_node *n = topo_fixture(NV "topo-m_4xA10-pcie_2nics.txt");
	ck_assert_int_eq(n->n_devices, 4); /* NIC rows and columns are not devices */
	ck_assert_int_eq(n->n_warnings, 0);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(n->devices[i].numa, 0);
		for (int j = 0; j < 4; j++)
			ck_assert_str_eq(n->links[i][j], i == j ? "X" : "SYS");
		ck_assert_str_eq(n->links[i][4], "");
	}
	free(n);
}
END_TEST

START_TEST(topo_8xh800_truncated_paste)
{
	struct xp_raw_node *n = topo_fixture(NV "topo-matrix_8xH800-nv8_4nics_2numa.txt");
	ck_assert_int_eq(n->n_devices, 8);
	for (int i = 0; i < 8; i++) {
		ck_assert_int_eq(n->devices[i].numa, i < 4 ? 0 : 1);
		for (int j = 0; j < 8; j++)
			ck_assert_str_eq(n->links[i][j], i == j ? "X" : "NV8");
	}
	/* GPU0..3's CPU Affinity lost its first character in the paste ("-31,64-95"). */
	ck_assert_int_eq(n->n_warnings, 4);
	for (int i = 0; i < 4; i++) {
		char want[64];
		snprintf(want, sizeof want, "GPU%d CPU Affinity \"-31,64-95\"", i);
		ck_assert_msg(xp_fake_warned(n, want), "no warning for GPU%d", i);
	}
	free(n);
}
END_TEST

/* Rows matched to devices already known (from the XML report), by index. */
START_TEST(topo_onto_devices)
{
	struct xp_raw_node *n = xml_fixture(NV "a100-sxm4-80gb-x4_535.54.03.q.xml");
	size_t len, sl;
	char *cap = xp_fixture_text(captures[0], &len);
	char *topo = capture_section(cap, "nvidia-smi topo -m", &sl);
	char err[256] = "";
	ck_assert_int_eq(xp_nvsmi_parse_topo(topo, sl, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 1);
	ck_assert_str_eq(n->devices[0].name, "NVIDIA A100-SXM4-80GB");
	ck_assert_str_eq(n->links[0][0], "X");
	ck_assert_int_eq(n->devices[0].numa, 0);
	free(topo);
	free(cap);

	/* a matrix with more GPUs than the node has: the extra rows are reported, not invented */
	char *a10 = xp_fixture_text(NV "topo-m_4xA10-pcie_2nics.txt", &len);
	ck_assert_int_eq(xp_nvsmi_parse_topo(a10, len, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 1);
	ck_assert_str_eq(n->links[0][0], "X");
	ck_assert(xp_fake_warned(n, "GPU1 is not among the devices"));
	ck_assert(xp_fake_warned(n, "GPU3 is not among the devices"));
	free(a10);
	free(n);
}
END_TEST

START_TEST(topo_damaged)
{
	size_t len;
	char err[256];
	struct xp_raw_node *n = xp_fake_node();
	char *t = xp_fixture_text(NV "topo-m_4xA10-pcie_2nics.txt", &len);

	/* cut in the middle of GPU2's row: GPU2 keeps what it has, GPU3 has no row */
	char *row2 = strstr(t, "\nGPU2");
	ck_assert_ptr_nonnull(row2);
	size_t cut = (size_t)(row2 - t) + 1 + strlen("GPU2    SYS     SYS");
	ck_assert_int_eq(xp_nvsmi_parse_topo(t, cut, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 4);
	ck_assert_str_eq(n->links[2][0], "SYS");
	ck_assert_str_eq(n->links[2][1], "SYS");
	ck_assert_str_eq(n->links[2][2], ""); /* missing cell */
	ck_assert_str_eq(n->links[3][0], "");
	ck_assert_int_eq(n->devices[2].numa, -1);
	ck_assert(xp_fake_warned(n, "row GPU2 has 2 of 9 cells"));
	ck_assert(xp_fake_warned(n, "no row for GPU3"));

	/* a cell that is not a link class; NV# with any count; tabs instead of spaces */
	char *u = malloc(len + 8);
	strcpy(u, t);
	memcpy(strstr(u, "GPU1    SYS ") + 8, "ZZZ", 3);
	xp_raw_node_init(n);
	ck_assert_int_eq(xp_nvsmi_parse_topo(u, strlen(u), n, err, sizeof err), 0);
	ck_assert_str_eq(n->links[1][0], "");
	ck_assert(xp_fake_warned(n, "GPU1/GPU0 cell \"ZZZ\" is not a link class"));
	free(u);
	char *h = xp_fixture_text(NV "topo-matrix_8xH800-nv8_4nics_2numa.txt", &len);
	h = replace(h, "GPU0     X      NV8 ", "GPU0\t X \tNV18\t");
	xp_raw_node_init(n);
	ck_assert_int_eq(xp_nvsmi_parse_topo(h, strlen(h), n, err, sizeof err), 0);
	ck_assert_str_eq(n->links[0][1], "NV18");
	ck_assert_str_eq(n->links[0][2], "NV8");
	free(h);

	/* no header: an error, and no devices made up */
	char *body = strstr(t, "\nGPU0") + 1;
	xp_raw_node_init(n);
	ck_assert_int_eq(xp_nvsmi_parse_topo(body, strlen(body), n, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "no header line"));
	ck_assert_int_eq(n->n_devices, 0);
	ck_assert(!n->has_links);

	/* a header and nothing else */
	char *nl = strchr(t, '\n');
	ck_assert_int_eq(xp_nvsmi_parse_topo(t, (size_t)(nl - t + 1), n, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "no GPU rows"));
	ck_assert_int_eq(n->n_devices, 0);
	free(t);
	free(n);
}
END_TEST

static void expect_topo_error(const char *text, size_t len, const char *part)
{
	struct xp_raw_node *n = xp_fake_node();
	char err[256] = "";
	ck_assert_int_eq(xp_nvsmi_parse_topo(text, len, n, err, sizeof err), -1);
	ck_assert_msg(strstr(err, part) != NULL, "error \"%s\" lacks \"%s\"", err, part);
	ck_assert(!n->has_links);
	free(n);
}

START_TEST(topo_bad_input)
{
	expect_topo_error("", 0, "empty input");
	expect_topo_error(NULL, 0, "empty input");
	size_t len;
	char *csv = xp_fixture_text(NV "query-gpu_csv_timestamp-pstate-mem.csv", &len);
	expect_topo_error(csv, len, "no header line");
	free(csv);
	char *xml = xp_fixture_text(NV "tesla-t4_515.105.01.q.xml", &len);
	expect_topo_error(xml, len, "no header line");
	free(xml);
	char *g = malloc(1 << 20);
	unsigned s = 99;
	for (size_t i = 0; i < (1u << 20); i++) {
		s = s * 1103515245u + 12345u;
		g[i] = (char)(s >> 16);
	}
	expect_topo_error(g, 1 << 20, "no header line");
	free(g);
	size_t huge = (size_t)20 << 20;
	char *h = malloc(huge);
	memset(h, '\t', huge);
	expect_topo_error(h, huge, "more than the 16 MiB limit");
	/* a header with hundreds of columns and a row as long: cut to size, no crash */
	size_t o = 0;
	o += (size_t)sprintf(h + o, "GPU0");
	for (int i = 1; i < 400; i++)
		o += (size_t)sprintf(h + o, "\tGPU%d", i);
	o += (size_t)sprintf(h + o, "\tCPU Affinity\tNUMA Affinity\nGPU0\t X");
	for (int i = 1; i < 400; i++)
		o += (size_t)sprintf(h + o, "\tNV%d", i);
	o += (size_t)sprintf(h + o, "\t0-1\t0\n");
	struct xp_raw_node *n = xp_fake_node();
	char err[256] = "";
	ck_assert_int_eq(xp_nvsmi_parse_topo(h, o, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, XP_RAW_MAX_DEVICES);
	ck_assert_str_eq(n->links[0][1], "NV1");
	ck_assert_str_eq(n->links[0][63], "NV63");
	free(n);
	free(h);
}
END_TEST

/* ---- the adapter -------------------------------------------------------------------------- */

START_TEST(adapter_replay)
{
	const struct xp_adapter *a = &xp_adapter_nvidia;
	ck_assert_int_eq(a->abi, XP_ADAPTER_ABI);
	ck_assert_str_eq(a->name, "nvidia");

	struct xp_fake_session s;
	xp_fake_open(&s, a, true);
	const char *dir = s.dir;
	struct xp_raw_node *n = s.n;
	size_t len, sl;
	char *xml = xp_fixture_text(NV "a100-sxm4-80gb-x4_535.54.03.q.xml", &len);
	xp_fake_file(dir, XP_NVSMI_XML_FILE, xml, len, 0644);
	free(xml);
	char *cap = xp_fixture_text(captures[0], &len);
	char *topo = capture_section(cap, "nvidia-smi topo -m", &sl);
	xp_fake_file(dir, XP_NVSMI_TOPO_FILE, topo, sl, 0644);
	free(topo);
	free(cap);

	ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_ACTIVE);
	ck_assert_ptr_nonnull(s.st);
	snprintf(n->hostname, sizeof n->hostname, "node7");
	ck_assert_int_eq(a->enumerate(s.st, n), 0);
	ck_assert_str_eq(n->hostname, "node7");
	ck_assert_int_eq(n->n_devices, 1); /* the recorded "4x" file keeps one <gpu> */
	ck_assert_str_eq(n->devices[0].name, "NVIDIA A100-SXM4-80GB");
	ck_assert_int_eq(n->devices[0].n_slices, 4);
	ck_assert_int_eq(a->topology(s.st, n), 0);
	ck_assert(n->has_links);
	ck_assert_str_eq(n->links[0][0], "X");
	ck_assert_int_eq(n->devices[0].numa, 0);
	n->devices[0].temperature_c = 99;
	n->devices[0].n_reasons = 0;
	ck_assert_int_eq(a->refresh(s.st, n), 0);
	ck_assert_double_eq_tol(n->devices[0].temperature_c, 27, 1e-9);
	ck_assert_int_eq(a->health(s.st, n), 0);
	ck_assert_int_eq(n->devices[0].ecc_uncorrected, 0);
	ck_assert_int_eq(n->n_warnings, 1);
	ck_assert(xp_fake_warned(n, "attached_gpus 4 but lists 1 <gpu>"));
	ck_assert_str_eq(a->last_error(s.st), "");
	ck_assert_int_eq(xp_fake.calls, 0); /* replay never runs a tool */

	/* only the matrix: the rows are the devices */
	xp_fake_unlink(dir, XP_NVSMI_XML_FILE);
	char *h800 = xp_fixture_text(NV "topo-matrix_8xH800-nv8_4nics_2numa.txt", &len);
	xp_fake_file(dir, XP_NVSMI_TOPO_FILE, h800, len, 0644);
	free(h800);
	ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_ACTIVE);
	ck_assert_int_eq(a->enumerate(s.st, n), 0);
	ck_assert_int_eq(n->n_devices, 8);
	ck_assert_int_eq(a->topology(s.st, n), 0);
	ck_assert_str_eq(n->links[7][0], "NV8");
	ck_assert_int_eq(n->devices[7].numa, 1);
	a->close(s.st);

	/* an empty directory: idle, no state, a reason */
	xp_fake_unlink(dir, XP_NVSMI_XML_FILE);
	xp_fake_unlink(dir, XP_NVSMI_TOPO_FILE);
	s.st = (void *)1; /* the probe must clear it */
	ck_assert_int_eq(a->probe(&s.h, &s.st, s.why, sizeof s.why), XP_PROBE_IDLE);
	ck_assert_ptr_null(s.st);
	ck_assert_ptr_nonnull(strstr(s.why, "no nvidia-smi-q-x.xml or nvidia-smi-topo-m.txt"));

	/* a broken recording: enumerate fails with the parser's message */
	xp_fake_file(dir, XP_NVSMI_XML_FILE, "<nvidia_smi_log><gpu>", 21, 0644);
	ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_ACTIVE);
	ck_assert_int_eq(a->enumerate(s.st, n), -1);
	ck_assert_ptr_nonnull(strstr(a->last_error(s.st), "nvidia-smi -q -x: "));
	ck_assert_int_eq(n->n_devices, 0);
	xp_fake_close(&s);
}
END_TEST

static bool nvml_present(void)
{
	void *lib = dlopen(XP_NVML_LIB, RTLD_NOW | RTLD_LOCAL);
	if (lib)
		dlclose(lib);
	return lib != NULL;
}

START_TEST(nvml_missing_or_working)
{
	void *h = (void *)1;
	char err[256] = "";
	int r = xp_nvml_open(&h, err, sizeof err);
	if (!nvml_present()) {
		ck_assert_int_eq(r, XP_PROBE_UNAVAILABLE);
		ck_assert_ptr_null(h);
		ck_assert_msg(strncmp(err, XP_NVML_NOLIB, strlen(XP_NVML_NOLIB)) == 0, "%s", err);
		ck_assert_ptr_nonnull(strstr(err, "libnvidia-ml.so")); /* dlerror's text */
		xp_nvml_close(NULL);
		return;
	}
	/* On a machine with the driver: whatever it has must read back sanely. */
	ck_assert_msg(r != XP_PROBE_UNAVAILABLE, "%s", err);
	struct xp_raw_node *n = xp_fake_node();
	ck_assert_msg(xp_nvml_enumerate(h, n, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(n->n_devices > 0, r == XP_PROBE_ACTIVE);
	for (int i = 0; i < n->n_devices; i++) {
		ck_assert_int_eq(n->devices[i].index, i);
		ck_assert_str_ne(n->devices[i].name, "");
		ck_assert_str_ne(n->devices[i].bus_id, "");
		ck_assert_int_gt(n->devices[i].memory_total_mib, 0);
	}
	ck_assert_msg(xp_nvml_topology(h, n, err, sizeof err) == 0, "%s", err);
	for (int i = 0; i < n->n_devices; i++)
		ck_assert_str_eq(n->links[i][i], "X");
	free(n);
	xp_nvml_close(h);
}
END_TEST

/* Live mode without NVML: nvidia-smi found on PATH and run through the host. */
START_TEST(adapter_live_fallback)
{
	if (nvml_present())
		return; /* the NVML path is taken instead; covered above */
	struct xp_fake_session s;
	xp_fake_open(&s, &xp_adapter_nvidia, false);
	const struct xp_adapter *a = s.a;
	struct xp_raw_node *n = s.n;

	/* neither the library nor the tool: the normal state of a machine without NVIDIA */
	s.st = (void *)1; /* the probe must clear it */
	ck_assert_int_eq(a->probe(&s.h, &s.st, s.why, sizeof s.why), XP_PROBE_UNAVAILABLE);
	ck_assert_ptr_null(s.st);
	ck_assert_str_eq(s.why, "no libnvidia-ml.so.1 and no nvidia-smi");

	/* a stand-in nvidia-smi (never executed: the host's run answers for it) */
	char tool[4096];
	snprintf(tool, sizeof tool, "%s", xp_fake_tool(s.dir, "nvidia-smi"));
	size_t len;
	char *xml = xp_fixture_text(NV "tesla-t4_515.105.01.q.xml", &len);
	char *cap = xp_fixture_text(captures[2], &len);
	char *topo = capture_section(cap, "nvidia-smi topo -m", &len);
	xp_fake.fail = "unexpected command";
	xp_fake_answer((struct xp_fake_rule){.prog = "nvidia-smi", .args = "-q -x", .out = xml});
	xp_fake_answer((struct xp_fake_rule){.prog = "nvidia-smi", .args = "topo -m", .out = topo});
	ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_ACTIVE);
	ck_assert_str_eq(xp_fake.argv[0], tool); /* found on PATH, run by absolute path */
	ck_assert_int_eq(a->enumerate(s.st, n), 0);
	ck_assert_int_eq(n->n_devices, 1);
	ck_assert_str_eq(n->devices[0].name, "Tesla T4");
	ck_assert_int_eq(a->topology(s.st, n), 0);
	ck_assert_str_eq(n->links[0][0], "X");
	ck_assert_int_eq(xp_fake.calls, 2); /* probe (whose report enumerate reuses), topology */
	ck_assert_int_eq(a->refresh(s.st, n), 0); /* refresh runs the tool again */
	ck_assert_int_eq(xp_fake.calls, 3);
	ck_assert_double_eq_tol(n->devices[0].temperature_c, 40, 1e-9);
	a->close(s.st);
	s.st = NULL;

	/* the tool fails: unavailable, with its error */
	struct xp_host broken = s.h;
	broken.run = NULL;
	ck_assert_int_eq(a->probe(&broken, &s.st, s.why, sizeof s.why), XP_PROBE_UNAVAILABLE);
	ck_assert_ptr_nonnull(strstr(s.why, "cannot run tools"));

	free(topo);
	free(cap);
	free(xml);
	xp_fake_close(&s);
}
END_TEST

/* ---- NVML against a stand-in library ------------------------------------------------------ */

/* A stand-in libnvidia-ml with the layouts nvml.c declares: five GPUs, where 0 and 1 share
 * four direct NVLinks, 2 and 3 reach NVSwitches over eighteen each, 1 has two MIG devices,
 * 2 has ECC errors, 3 retired pages and throttles, and 4 is lost. */
static const char fake_nvml_src[] =
	"#include <stdio.h>\n#include <string.h>\n"
	"typedef int R; typedef struct dev *D;\n"
	"struct pci { char legacy[16]; unsigned domain, bus, device, did, sid; char busid[32]; };\n"
	"struct mem { unsigned long long total, free, used; };\n"
	"struct util { unsigned gpu, memory; };\n"
	"struct dev { int idx, mig, gi, ci; };\n"
	"static struct dev g[5] = {{0,0,0,0},{1,0,0,0},{2,0,0,0},{3,0,0,0},{4,0,0,0}};\n"
	"static struct dev m[2] = {{1,1,3,0},{1,1,4,1}};\n"
	"R nvmlInit_v2(void) { return 0; }\n"
	"R nvmlShutdown(void) { return 0; }\n"
	"const char *nvmlErrorString(R r) { return r == 15 ? \"GPU is lost\" : \"Not Supported\"; }\n"
	"R nvmlSystemGetDriverVersion(char *v, unsigned l) { snprintf(v, l, \"590.48.01\"); return 0; }\n"
	"R nvmlSystemGetCudaDriverVersion_v2(int *v) { *v = 13010; return 0; }\n"
	"R nvmlDeviceGetCount_v2(unsigned *n) { *n = 5; return 0; }\n"
	"R nvmlDeviceGetHandleByIndex_v2(unsigned i, D *d) { if (i == 4) return 15; if (i > 4) return 2;"
	" *d = &g[i]; return 0; }\n"
	/* A MIG handle's name carries its profile after "MIG " (NVML's nvmlDeviceGetName: "MIG device
	 * names"; nvidia-smi -L prints the same words). */
	"R nvmlDeviceGetName(D d, char *s, unsigned l) { snprintf(s, l, d->mig ? \"NVIDIA H100 80GB HBM3 MIG 2g.20gb\""
	" : \"NVIDIA H100 80GB HBM3\"); return 0; }\n"
	"R nvmlDeviceGetUUID(D d, char *s, unsigned l) { snprintf(s, l, d->mig ? \"MIG-%d\" : \"GPU-%d\","
	" d->mig ? d->gi : d->idx); return 0; }\n"
	"R nvmlDeviceGetSerial(D d, char *s, unsigned l) { snprintf(s, l, \"SER%d\", d->idx); return 0; }\n"
	"R nvmlDeviceGetVbiosVersion(D d, char *s, unsigned l) { (void)d; snprintf(s, l, \"96.00.99.00.01\");"
	" return 0; }\n"
	"R nvmlDeviceGetPciInfo_v3(D d, struct pci *p) { memset(p, 0, sizeof *p); p->bus = 16 * (d->idx + 1);"
	" snprintf(p->busid, 32, \"00000000:%02X:00.0\", p->bus); return 0; }\n"
	"R nvmlDeviceGetMemoryInfo(D d, struct mem *x) { x->total = (d->mig ? 19968ull : 81559ull) << 20;"
	" x->used = 123ull << 20; x->free = x->total - x->used; return 0; }\n"
	"struct mem2 { unsigned version; unsigned long long total, reserved, free, used; };\n"
	"R nvmlDeviceGetMemoryInfo_v2(D d, struct mem2 *x) { if (x->version != (40u | 2u << 24)) return 25;"
	" x->total = (d->mig ? 19968ull : 81559ull) << 20; x->reserved = 500ull << 20; x->used = 100ull << 20;"
	" x->free = x->total - x->used - x->reserved; return 0; }\n"
	"R nvmlDeviceGetTemperature(D d, int s, unsigned *t) { (void)s; *t = 40 + d->idx; return 0; }\n"
	"R nvmlDeviceGetPowerUsage(D d, unsigned *p) { (void)d; *p = 123456; return 0; }\n"
	"R nvmlDeviceGetEnforcedPowerLimit(D d, unsigned *p) { (void)d; *p = 700000; return 0; }\n"
	"R nvmlDeviceGetUtilizationRates(D d, struct util *u) { u->gpu = 10 * d->idx; u->memory = 1; return 0; }\n"
	"R nvmlDeviceGetTotalEccErrors(D d, int t, int c, unsigned long long *n) {"
	" *n = d->idx == 2 ? (t ? 1 : (c ? 9 : 4)) : 0; return 0; }\n"
	"R nvmlDeviceGetRetiredPages(D d, int c, unsigned *n, unsigned long long *a) { (void)a;"
	" if (d->idx == 3) { *n = c ? 2 : 3; return 7; } return 3; }\n"
	"R nvmlDeviceGetCurrentClocksEventReasons(D d, unsigned long long *r) {"
	" *r = d->idx == 3 ? 0x1 | 0x4 | 0x40 : 0x1; return 0; }\n"
	"R nvmlDeviceGetMigMode(D d, unsigned *c, unsigned *p) { *c = *p = d->idx == 1; return 0; }\n"
	"R nvmlDeviceGetMaxMigDeviceCount(D d, unsigned *n) { *n = d->idx == 1 ? 7 : 0; return 0; }\n"
	"R nvmlDeviceGetMigDeviceHandleByIndex(D d, unsigned i, D *x) { if (d->idx != 1 || i >= 2) return 6;"
	" *x = &m[i]; return 0; }\n"
	"R nvmlDeviceGetGpuInstanceId(D d, unsigned *i) { *i = d->gi; return 0; }\n"
	"R nvmlDeviceGetComputeInstanceId(D d, unsigned *i) { *i = d->ci; return 0; }\n"
	"R nvmlDeviceGetTopologyCommonAncestor(D a, D b, int *l) { *l = (a->idx < 2) == (b->idx < 2) ? 20 : 50;"
	" return 0; }\n"
	"R nvmlDeviceGetNvLinkState(D d, unsigned l, int *a) { *a = d->idx < 2 ? l < 4 : 1; return 0; }\n"
	"R nvmlDeviceGetNvLinkRemotePciInfo_v2(D d, unsigned l, struct pci *p) { (void)l; memset(p, 0, sizeof *p);"
	" p->bus = d->idx < 2 ? 16 * (2 - d->idx) : 0xA0; return 0; }\n"
	"R nvmlDeviceGetNvLinkRemoteDeviceType(D d, unsigned l, int *t) { (void)l; *t = d->idx < 2 ? 0 : 2;"
	" return 0; }\n"
	/* Processes (nvmlProcessInfo_t as the _v3 queries fill it): GPU 0 runs 4242 (compute and
	 * graphics, 1000 MiB) and 4243 (memory not available); GPU 1 none; GPU 2 more than the
	 * caller's room; GPU 3's graphics list is not supported. */
	"struct proc { unsigned pid; unsigned long long mem; unsigned gi, ci; };\n"
	"R nvmlDeviceGetComputeRunningProcesses_v3(D d, unsigned *n, struct proc *p) {"
	" if (d->idx == 2) { *n = 500; return 7; }"
	" if (d->idx != 0) { *n = 0; return 0; } if (*n < 2) { *n = 2; return 7; }"
	" p[0] = (struct proc){4242, 1000ull << 20, ~0u, ~0u}; p[1] = (struct proc){4243, ~0ull, ~0u, ~0u};"
	" *n = 2; return 0; }\n"
	"R nvmlDeviceGetGraphicsRunningProcesses_v3(D d, unsigned *n, struct proc *p) {"
	" if (d->idx == 3) return 3; if (d->idx != 0) { *n = 0; return 0; }"
	" p[0] = (struct proc){4242, 1000ull << 20, ~0u, ~0u}; *n = 1; return 0; }\n"
	"struct sample { unsigned pid; unsigned long long ts; unsigned sm, mem, enc, dec; };\n"
	"R nvmlDeviceGetProcessUtilization(D d, struct sample *s, unsigned *n, unsigned long long last) {"
	" (void)last; if (d->idx != 0) return 6; if (*n < 3) { *n = 3; return 7; }"
	" s[0] = (struct sample){4242, 5, 30, 0, 0, 0}; s[1] = (struct sample){4242, 9, 55, 0, 0, 0};"
	" s[2] = (struct sample){4243, 1, 200, 0, 0, 0}; *n = 3; return 0; }\n";

START_TEST(nvml_stand_in)
{
	char dir[] = "/tmp/xp-nv-nvml-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	xp_fake_file(dir, "fake.c", fake_nvml_src, strlen(fake_nvml_src), 0644);
	char cmd[8192], lib[4096];
	snprintf(lib, sizeof lib, "%s/libnvidia-ml.so.1", dir);
	snprintf(cmd, sizeof cmd, "exec ${CC:-cc} -shared -fPIC -Wl,-soname,libnvidia-ml.so.1 -o %s %s/fake.c", lib,
		 dir);
	char *argv[] = {"/bin/sh", "-c", cmd, NULL};
	struct xp_run r;
	if (xp_run_argv(&r, argv, NULL) != 0 || r.status != 0) {
		/* no compiler here: nothing to exercise */
		xp_run_free(&r);
		xp_fake_rmdir(dir);
		return;
	}
	xp_run_free(&r);
	/* Loaded by path first, the stand-in answers nvml.c's dlopen by its soname. */
	void *pre = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(pre != NULL, "%s", dlerror());

	void *h = NULL;
	char err[256] = "";
	ck_assert_int_eq(xp_nvml_open(&h, err, sizeof err), XP_PROBE_ACTIVE);
	struct xp_raw_node *n = xp_fake_node();
	ck_assert_int_eq(xp_nvml_enumerate(h, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 5);
	const struct xp_raw_device *d = &n->devices[0];
	ck_assert_str_eq(d->name, "NVIDIA H100 80GB HBM3");
	ck_assert_str_eq(d->bus_id, "00000000:10:00.0");
	ck_assert_str_eq(d->uuid, "GPU-0");
	ck_assert_str_eq(d->serial, "SER0");
	ck_assert_str_eq(d->driver, "590.48.01");
	ck_assert_str_eq(d->runtime, "CUDA 13.1");
	ck_assert_str_eq(d->firmware, "96.00.99.00.01");
	ck_assert_int_eq(d->memory_total_mib, 81559);
	ck_assert_int_eq(d->memory_used_mib, 100); /* the _v2 query: without the driver's reserve */
	ck_assert_double_eq_tol(d->temperature_c, 40, 1e-9);
	ck_assert_double_eq_tol(d->power_w, 123.456, 1e-9);
	ck_assert_double_eq_tol(d->power_limit_w, 700, 1e-9);
	ck_assert_int_eq(d->mig_mode, 0);
	ck_assert_int_eq(d->retired_pages, -1); /* not supported */
	ck_assert_int_eq(d->n_reasons, 0);      /* idle only */
	d = &n->devices[1];
	ck_assert_int_eq(d->mig_mode, 1);
	ck_assert_int_eq(d->n_slices, 2);
	ck_assert_int_eq(d->slices[1].gpu_instance, 4);
	ck_assert_int_eq(d->slices[1].compute_instance, 1);
	ck_assert_int_eq(d->slices[1].memory_mib, 19968);
	ck_assert_str_eq(d->slices[1].uuid, "MIG-4");
	ck_assert_str_eq(d->slices[1].profile, "2g.20gb");
	ck_assert_int_eq(n->devices[2].ecc_corrected, 9); /* aggregate 9 > volatile 4 */
	ck_assert_int_eq(n->devices[2].ecc_uncorrected, 1);
	d = &n->devices[3];
	ck_assert_int_eq(d->retired_pages, 5); /* counts come back with INSUFFICIENT_SIZE */
	ck_assert_int_eq(d->n_reasons, 1); /* the SW power cap bit is normal operation */
	ck_assert_str_eq(d->reasons[0], "HW thermal slowdown");
	d = &n->devices[4];
	ck_assert_int_eq(d->index, 4);
	ck_assert_str_eq(d->reasons[0], "NVML: GPU is lost");
	ck_assert_int_eq(d->n_procs, -1); /* never opened */
	/* Processes: both lists merged by pid (C+G), the newest utilization sample, memory the
	 * driver does not know as unknown, an impossible 200 % dropped. */
	d = &n->devices[0];
	ck_assert_int_eq(d->n_procs, 2);
	ck_assert_int_eq(d->procs[0].pid, 4242);
	ck_assert_str_eq(d->procs[0].type, "C+G");
	ck_assert_int_eq(d->procs[0].memory_mib, 1000);
	ck_assert_double_eq_tol(d->procs[0].util_pct, 55, 1e-9);
	ck_assert_int_eq(d->procs[1].pid, 4243);
	ck_assert_str_eq(d->procs[1].type, "C");
	ck_assert_int_eq(d->procs[1].memory_mib, -1);
	ck_assert(isnan(d->procs[1].util_pct));
	ck_assert_int_eq(n->devices[1].n_procs, 0); /* listed: none */
	ck_assert_int_eq(n->devices[2].n_procs, -1); /* too many to list: not known */
	ck_assert(xp_fake_warned(n, "GPU 2: more than 64 C processes; none are listed"));
	ck_assert_int_eq(n->devices[3].n_procs, -1); /* one of the two lists failed */

	ck_assert_int_eq(xp_nvml_topology(h, n, err, sizeof err), 0);
	ck_assert(n->has_links);
	ck_assert_str_eq(n->links[0][1], "NV4");
	ck_assert_str_eq(n->links[1][0], "NV4");
	ck_assert_str_eq(n->links[2][3], "NV18"); /* through switches */
	ck_assert_str_eq(n->links[0][2], "SYS");
	ck_assert_str_eq(n->links[4][4], "X");
	ck_assert_str_eq(n->links[0][4], "");
	ck_assert(xp_fake_warned(n, "GPU 4 could not be opened"));
	free(n);
	xp_nvml_close(h);
	dlclose(pre);
	xp_fake_rmdir(dir);
}
END_TEST

/* Parser speed on the largest report (informational bound, generous for sanitizer builds). */
START_TEST(xml_speed)
{
	size_t len;
	char *t = xp_fixture_text(NV "rtx-4000-sff-ada_595.84.q.xml", &len);
	struct xp_raw_node *n = xp_fake_node();
	char err[256];
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < 50; i++)
		ck_assert_int_eq(xp_nvsmi_parse_xml(t, len, n, err, sizeof err), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ms = ((double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6) / 50;
	ck_assert_msg(ms < 50, "%.2f ms per parse", ms);
	free(n);
	free(t);
}
END_TEST

XP_DEFINE_SUITE(nvidia,
	{"xml", .loop = xml_fixture_values, .loop_n = (int)(sizeof xml_files / sizeof xml_files[0]),
	 .tests = {xml_health_fields, xml_gpu_counts, xml_bad_input, xml_hostile_text, xml_doctype_not_loaded,
		   xml_speed}},
	{"captures", .tests = {capture_sections, capture_h200_mig_listing}},
	{"topo",
	 .tests = {topo_2x1080ti, topo_4xa10_nics, topo_8xh800_truncated_paste, topo_onto_devices,
		   topo_damaged, topo_bad_input}},
	{"adapter",
	 .tests = {adapter_replay, adapter_live_fallback, nvml_missing_or_working,
		   nvml_stand_in}})
