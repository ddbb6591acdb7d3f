/* check_ascend.c: the Huawei Ascend adapter: npu-smi parsers over every fixture in
 * tests/fixtures/ascend, damaged inputs, the manifest's vNPU templates against HAMi's
 * device config, and the adapter itself in replay and (faked) live mode.
 *
 * Expected values were read from the fixture files by eye and are written next to each
 * assertion; the template test reads HAMi's YAML itself instead of copying numbers. */
#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ascend/ascend.h"
#include "fakehost.h"
#include "suitelib.h"
#include "testlib.h"
#include "xp_adapter.h"

#define F910_INFO "ascend/npu-smi-info_atlas800-9010_8x910A_24.1.RC2.txt"
#define F910_MAP "ascend/npu-smi-info-m_atlas800-9010_8x910A_24.1.RC2.txt"
#define F310_INFO "ascend/npu-smi-info_atlas800-3000_310_21.0.4.txt"
#define F310_MAP "ascend/npu-smi-info-m_atlas800-3000_310_21.0.4.txt"
#define FOLD_INFO "ascend/npu-smi-info_atlas800-3000_310_old.txt"
#define FOLD_MAP "ascend/npu-smi-info-m_atlas800-3000_310_old.txt"
#define FHAMI "ascend/hami_chart_device-configmap.yaml"
#define MANIFEST "adapters/ascend/ascend.adapter"

/* ---- helpers ------------------------------------------------------------ */

/* Parses fixture rel with the info parser (and map, when given) into a new node. */
static struct xp_raw_node *parse_fixture(const char *info, const char *map)
{
	struct xp_raw_node *n = xp_fake_node();
	char err[256] = "";
	size_t len;
	char *text = xp_fixture_text(info, &len);
	ck_assert_msg(xp_npusmi_parse_info(text, len, n, err, sizeof err) == 0, "%s: %s", info, err);
	free(text);
	if (map) {
		text = xp_fixture_text(map, &len);
		ck_assert_msg(xp_npusmi_parse_map(text, len, n, err, sizeof err) == 0, "%s: %s", map, err);
		free(text);
	}
	return n;
}

static const struct xp_raw_device *dev(const struct xp_raw_node *n, int index, int chip)
{
	for (int i = 0; i < n->n_devices; i++)
		if (n->devices[i].index == index && n->devices[i].chip == chip)
			return &n->devices[i];
	ck_abort_msg("no NPU %d chip %d", index, chip);
	return NULL;
}

static void dump_warnings(const struct xp_raw_node *n)
{
	for (int i = 0; i < n->n_warnings; i++)
		fprintf(stderr, "warning: %s\n", n->warnings[i]);
}

/* parse_fixture for fixtures that parse without a warning into ndev devices. */
static struct xp_raw_node *parse_quiet(const char *info, const char *map, int ndev)
{
	struct xp_raw_node *n = parse_fixture(info, map);
	dump_warnings(n);
	ck_assert_msg(n->n_warnings == 0, "%s: %d warnings (above)", info, n->n_warnings);
	ck_assert_msg(n->n_devices == ndev, "%s: %d devices, not %d", info, n->n_devices, ndev);
	return n;
}

/* Replaces the first occurrence of from in text (same length or shorter) in place. */
static void replace_once(char *text, const char *from, const char *to)
{
	char *p = strstr(text, from);
	ck_assert_msg(p != NULL, "\"%s\" not in the fixture", from);
	size_t nf = strlen(from), nt = strlen(to);
	ck_assert_uint_le(nt, nf);
	memcpy(p, to, nt);
	memmove(p + nt, p + nf, strlen(p + nf) + 1);
}

/* Reads npu-smi info fixture rel, makes the (from, to) replacements that follow (up to a NULL,
 * each with replace_once) and parses it into n, cleared first; the parser's result. */
static int parse_edited(struct xp_raw_node *n, const char *rel, ...)
{
	char *text = xp_fixture_text(rel, NULL), err[256] = "";
	va_list ap;
	va_start(ap, rel);
	for (const char *from; (from = va_arg(ap, const char *)) != NULL;)
		replace_once(text, from, va_arg(ap, const char *));
	va_end(ap);
	xp_raw_node_init(n);
	int rc = xp_npusmi_parse_info(text, strlen(text), n, err, sizeof err);
	free(text);
	return rc;
}

/* ---- npu-smi info: the 8 x 910A training server ----------------------------- */

/* Rows of the 910A table: NPU id, health, power W, temperature C, bus id, Memory-Usage
 * total (the HBM is 0 / 32768 on every chip and wins). */
static const struct {
	int npu;
	const char *health;
	double power, temp;
	const char *bus;
} rows910[8] = {
	{0, "OK", 70.5, 42, "0000:C1:00.0"},      {1, "OK", 71.2, 36, "0000:81:00.0"},
	{2, "OK", 69.0, 35, "0000:41:00.0"},      {3, "Warning", 206.9, 39, "0000:01:00.0"},
	{4, "OK", 70.2, 39, "0000:C2:00.0"},      {5, "OK", 64.9, 37, "0000:82:00.0"},
	{6, "OK", 69.4, 40, "0000:42:00.0"},      {7, "Warning", 203.2, 42, "0000:02:00.0"},
};

START_TEST(test_info_910a)
{
	/* The trailing URL and the process table are quiet; the process table adds no device. */
	struct xp_raw_node *n = parse_quiet(F910_INFO, NULL, 8);
	ck_assert(!n->has_links);
	for (int i = 0; i < 8; i++) {
		const struct xp_raw_device *d = &n->devices[i];
		ck_assert_int_eq(d->index, rows910[i].npu); /* in table order */
		ck_assert_int_eq(d->chip, 0);
		ck_assert_str_eq(d->name, "xxx"); /* masked in Huawei's sample, kept as given */
		ck_assert_str_eq(d->bus_id, rows910[i].bus);
		ck_assert_str_eq(d->health, rows910[i].health);
		ck_assert_str_eq(d->driver, "24.1.RC2");
		ck_assert_double_eq_tol(d->power_w, rows910[i].power, 1e-9);
		ck_assert_double_eq_tol(d->temperature_c, rows910[i].temp, 1e-9);
		ck_assert_double_eq_tol(d->utilization_pct, 0, 1e-9); /* AICore(%) 0 */
		ck_assert_int_eq(d->memory_total_mib, 32768);         /* HBM-Usage 0 / 32768 */
		ck_assert_int_eq(d->memory_used_mib, 0);
		ck_assert(isnan(d->power_limit_w));
		ck_assert_int_eq(d->ecc_corrected, -1);
		ck_assert_int_eq(d->mig_mode, -1);
		ck_assert_int_eq(d->n_slices, 0);
		if (strcmp(rows910[i].health, "OK") == 0) {
			ck_assert_int_eq(d->n_reasons, 0);
		} else {
			ck_assert_int_eq(d->n_reasons, 1);
			ck_assert_str_eq(d->reasons[0], "npu-smi health: Warning");
		}
	}
	/* Exactly NPUs 3 and 7 are in Warning (at 206.9 W and 203.2 W). */
	int warn = 0;
	for (int i = 0; i < 8; i++)
		warn += strcmp(n->devices[i].health, "Warning") == 0;
	ck_assert_int_eq(warn, 2);
	free(n);
}
END_TEST

START_TEST(test_map_910a)
{
	struct xp_raw_node *n = parse_quiet(F910_INFO, F910_MAP, 8); /* the map matches, adds nothing */
	for (int i = 0; i < 8; i++) {
		const struct xp_raw_device *d = dev(n, i, 0);
		ck_assert_str_eq(d->name, "Ascend 910A");
		ck_assert_str_eq(d->bus_id, rows910[i].bus); /* the table's fields survive */
	}
	free(n);
}
END_TEST

/* The map alone creates the devices it lists. */
START_TEST(test_map_alone)
{
	struct xp_raw_node *n = xp_fake_node();
	char err[256];
	size_t len;
	char *text = xp_fixture_text(F910_MAP, &len);
	ck_assert_int_eq(xp_npusmi_parse_map(text, len, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 8);
	ck_assert_int_eq(n->n_warnings, 0);
	for (int i = 0; i < 8; i++) {
		ck_assert_int_eq(n->devices[i].index, i);
		ck_assert_int_eq(n->devices[i].chip, 0);
		ck_assert_str_eq(n->devices[i].name, "Ascend 910A");
		ck_assert_str_eq(n->devices[i].bus_id, "");
		ck_assert_int_eq(n->devices[i].memory_total_mib, -1);
	}
	/* Then the table fills in the rest of the same devices. */
	free(text);
	text = xp_fixture_text(F910_INFO, &len);
	ck_assert_int_eq(xp_npusmi_parse_info(text, len, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 8);
	ck_assert_str_eq(dev(n, 3, 0)->name, "xxx"); /* the later source wins */
	ck_assert_str_eq(dev(n, 3, 0)->health, "Warning");
	free(text);
	free(n);
}
END_TEST

/* ---- npu-smi info: the Atlas 300 cards with four Ascend 310 chips ------------ */

START_TEST(test_info_310_2104)
{
	/* NPU 6, chips 0-3; the MCU row of -m is skipped */
	struct xp_raw_node *n = parse_quiet(F310_INFO, F310_MAP, 4);
	static const char *const bus[4] = {"0000:89:00.0", "0000:8A:00.0", "0000:8B:00.0",
					   "0000:8C:00.0"};
	static const double temp[4] = {73, 74, 70, 65};
	static const int64_t used[4] = {2703, 2867, 2867, 2867};
	for (int c = 0; c < 4; c++) {
		const struct xp_raw_device *d = &n->devices[c];
		ck_assert_int_eq(d->index, 6);
		ck_assert_int_eq(d->chip, c);
		ck_assert_str_eq(d->name, "MiniD"); /* -m's Chip Name replaces the table's "310" */
		ck_assert_str_eq(d->bus_id, bus[c]);
		ck_assert_str_eq(d->health, "OK");
		ck_assert_int_eq(d->n_reasons, 0);
		ck_assert_str_eq(d->driver, "21.0.4.B030");
		ck_assert_double_eq_tol(d->power_w, 12.8, 1e-9);
		ck_assert_double_eq_tol(d->temperature_c, temp[c], 1e-9);
		ck_assert_double_eq_tol(d->utilization_pct, 0, 1e-9);
		ck_assert_int_eq(d->memory_total_mib, 8192); /* Memory-Usage: 8 GiB per chip */
		ck_assert_int_eq(d->memory_used_mib, used[c]);
	}
	free(n);

	/* Without the map the table's own name stays. */
	n = parse_fixture(F310_INFO, NULL);
	ck_assert_int_eq(n->n_devices, 4);
	ck_assert_str_eq(n->devices[0].name, "310");
	free(n);
}
END_TEST

START_TEST(test_info_310_old)
{
	/* No warning for the missing Hugepages column: not one we read. */
	struct xp_raw_node *n = parse_quiet(FOLD_INFO, FOLD_MAP, 4);
	static const char *const bus[4] = {"0000:DA:00.0", "0000:DC:00.0", "0000:DD:00.0",
					   "0000:DB:00.0"};
	static const double temp[4] = {56, 57, 57, 55};
	for (int c = 0; c < 4; c++) {
		const struct xp_raw_device *d = &n->devices[c];
		ck_assert_int_eq(d->index, 215);
		ck_assert_int_eq(d->chip, c);
		ck_assert_str_eq(d->name, "MiniD");
		ck_assert_str_eq(d->bus_id, bus[c]);
		ck_assert_str_eq(d->health, "OK");
		ck_assert_str_eq(d->driver, "20.2.0");
		ck_assert_double_eq_tol(d->power_w, 12.8, 1e-9);
		ck_assert_double_eq_tol(d->temperature_c, temp[c], 1e-9);
		ck_assert_int_eq(d->memory_total_mib, 8192);
		ck_assert_int_eq(d->memory_used_mib, 2703);
	}
	free(n);
}
END_TEST

/* ---- damaged inputs -------------------------------------------------------------- */

START_TEST(test_empty_and_garbage)
{
	struct xp_raw_node *n = xp_fake_node();
	char err[256];
	err[0] = '\0';
	ck_assert_int_eq(xp_npusmi_parse_info("", 0, n, err, sizeof err), -1);
	ck_assert_str_eq(err, "empty output");
	ck_assert_int_eq(xp_npusmi_parse_info(NULL, 10, n, err, sizeof err), -1);
	ck_assert_int_eq(xp_npusmi_parse_map("", 0, n, err, sizeof err), -1);
	ck_assert_int_eq(xp_npusmi_parse_info("\n\n   \n", 6, n, err, sizeof err), -1);

	const char *text = "hello world\nthis is not a table\n";
	ck_assert_int_eq(xp_npusmi_parse_info(text, strlen(text), n, err, sizeof err), -1);
	ck_assert(strstr(err, "no device table") != NULL);
	ck_assert_int_eq(xp_npusmi_parse_map(text, strlen(text), n, err, sizeof err), -1);
	ck_assert(strstr(err, "NPU ID") != NULL);

	/* Other vendors' output is not a device table. */
	size_t len;
	char *other = xp_fixture_text("hwloc/16amd64-4distances.lstopo-v.txt", &len);
	ck_assert_int_eq(xp_npusmi_parse_info(other, len, n, err, sizeof err), -1);
	ck_assert_int_eq(xp_npusmi_parse_map(other, len, n, err, sizeof err), -1);
	free(other);

	/* Pseudo-random bytes, with and without bars and newlines. */
	char junk[8192];
	uint32_t s = 12345;
	for (int round = 0; round < 50; round++) {
		for (size_t i = 0; i < sizeof junk; i++) {
			s = s * 1103515245u + 12345u;
			unsigned char c = (unsigned char)(s >> 16);
			junk[i] = round % 2 ? "| +-=/0123456789NPUChip\n"[c % 24] : (char)c;
		}
		xp_raw_node_init(n);
		int r = xp_npusmi_parse_info(junk, sizeof junk, n, err, sizeof err);
		ck_assert(r == 0 || r == -1);
		ck_assert_int_le(n->n_devices, XP_RAW_MAX_DEVICES);
		r = xp_npusmi_parse_map(junk, sizeof junk, n, err, sizeof err);
		ck_assert(r == 0 || r == -1);
	}
	ck_assert_int_eq(n->n_devices, 0); /* nothing in those bytes looks like a chip */
	free(n);
}
END_TEST

/* Every prefix of every fixture: never a crash, never more devices than the whole file,
 * and every device a prefix yields is the whole file's device, field for field: a cut
 * output never gives a half-read chip. */
START_TEST(test_truncated_everywhere)
{
	static const char *const infos[] = {F910_INFO, F310_INFO, FOLD_INFO};
	static const char *const maps[] = {F910_MAP, F310_MAP, FOLD_MAP};
	static const int full_count[] = {8, 4, 4};
	struct xp_raw_node *n = xp_fake_node();
	char err[256];
	for (int f = 0; f < 3; f++) {
		struct xp_raw_node *full = parse_fixture(infos[f], NULL);
		ck_assert_int_eq(full->n_devices, full_count[f]);
		size_t len;
		char *text = xp_fixture_text(infos[f], &len);
		for (size_t cut = 0; cut <= len; cut++) {
			xp_raw_node_init(n);
			char *copy = malloc(cut ? cut : 1); /* exact size: ASan sees any over-read */
			memcpy(copy, text, cut);
			int r = xp_npusmi_parse_info(copy, cut, n, err, sizeof err);
			ck_assert(r == 0 || r == -1);
			ck_assert_int_le(n->n_devices, full_count[f]);
			for (int i = 0; i < n->n_devices; i++) {
				const struct xp_raw_device *d = &n->devices[i], *fd = dev(full, d->index, d->chip);
				ck_assert_msg(memcmp(d, fd, offsetof(struct xp_raw_device, n_procs)) == 0,
					      "%s cut at %zu: NPU %d chip %d differs", infos[f], cut,
					      d->index, d->chip);
				/* The process table (after the devices) cut short: fewer processes, or
				 * none known, but never a half-read one. */
				ck_assert_int_le(d->n_procs, fd->n_procs);
				for (int k = 0; k < d->n_procs; k++)
					ck_assert_msg(memcmp(&d->procs[k], &fd->procs[k], sizeof d->procs[k]) == 0,
						      "%s cut at %zu: NPU %d process %d differs", infos[f], cut, d->index, k);
			}
			if (r == 0 && n->n_devices < full_count[f] && cut && text[cut - 1] != '\n' &&
			    text[cut - 1] != '+' && text[cut - 1] != '=' && text[cut - 1] != '-')
				ck_assert_msg(n->n_warnings > 0, "%s cut at %zu: %d devices, no warning",
					      infos[f], cut, n->n_devices);
			free(copy);
		}
		free(text);
		free(full);

		text = xp_fixture_text(maps[f], &len);
		for (size_t cut = 0; cut <= len; cut++) {
			xp_raw_node_init(n);
			char *copy = malloc(cut ? cut : 1);
			memcpy(copy, text, cut);
			int r = xp_npusmi_parse_map(copy, cut, n, err, sizeof err);
			ck_assert(r == 0 || r == -1);
			ck_assert_int_le(n->n_devices, full_count[f]);
			free(copy);
		}
		free(text);
	}
	free(n);
}
END_TEST

/* The 910A table cut in the middle of NPU 3's chip row. */
START_TEST(test_truncated_mid_table)
{
	size_t len;
	char *text = xp_fixture_text(F910_INFO, &len);
	const char *at = strstr(text, "0000:01:00.0");
	ck_assert_ptr_nonnull(at);
	struct xp_raw_node *n = xp_fake_node();
	char err[256];
	ck_assert_int_eq(xp_npusmi_parse_info(text, (size_t)(at - text) + 6, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 3); /* NPUs 0-2 whole; 3 dropped */
	ck_assert_str_eq(dev(n, 2, 0)->bus_id, "0000:41:00.0");
	ck_assert(xp_fake_warned(n, "cut short"));
	ck_assert_str_eq(n->devices[0].driver, "24.1.RC2");

	/* Cut at the end of NPU 3's first row: its chip row is missing. */
	const char *eol = strchr(strstr(text, "| 3     xxx"), '\n');
	xp_raw_node_init(n);
	ck_assert_int_eq(xp_npusmi_parse_info(text, (size_t)(eol - text) + 1, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 3);
	ck_assert(xp_fake_warned(n, "after an NPU row"));

	/* Cut inside the header: no table to read. */
	const char *hdr = strstr(text, "| Chip");
	xp_raw_node_init(n);
	ck_assert_int_eq(xp_npusmi_parse_info(text, (size_t)(hdr - text), n, err, sizeof err), -1);
	ck_assert_str_eq(err, "device table header cut short");
	free(n);
	free(text);
}
END_TEST

START_TEST(test_oversized)
{
	size_t unit;
	char *text = xp_fixture_text(F910_INFO, &unit);
	size_t big = XP_FAKE_HUGE;
	char *huge = xp_fake_huge(text, unit, NULL);
	struct xp_raw_node *n = xp_fake_node();
	char err[256];
	ck_assert_int_eq(xp_npusmi_parse_info(huge, big, n, err, sizeof err), -1);
	ck_assert(strstr(err, "too large") != NULL);
	ck_assert_int_eq(xp_npusmi_parse_map(huge, big, n, err, sizeof err), -1);
	ck_assert_int_eq(n->n_devices, 0);
	free(huge);
	free(text);
	free(n);
}
END_TEST

/* More chips than a node record holds: 100 blocks of the old 310 layout with distinct NPU
 * ids, under the size limit. */
START_TEST(test_too_many_chips)
{
	size_t len;
	char *text = xp_fixture_text(FOLD_INFO, &len);
	/* The header: everything up to and including the "+===" line after the headers. */
	char *body = strstr(text, "+===");
	ck_assert_ptr_nonnull(body);
	char *body_end = strchr(body, '\n') + 1;
	/* One chip block: NPU row, chip row, separator. */
	char *row1 = strstr(body_end, "| 215");
	char *sep = strstr(row1, "+---");
	char *block_end = strchr(sep, '\n') + 1;
	size_t head = (size_t)(body_end - text), block = (size_t)(block_end - row1);
	char *big = malloc(head + 100 * (block + 8) + 1);
	memcpy(big, text, head);
	size_t at = head;
	for (int i = 0; i < 100; i++) {
		char npu[8];
		snprintf(npu, sizeof npu, "%-3d", 100 + i); /* replaces "215" in place */
		memcpy(big + at, row1, block);
		memcpy(big + at + 2, npu, 3);
		at += block;
	}
	struct xp_raw_node *n = xp_fake_node();
	char err[256];
	ck_assert_int_eq(xp_npusmi_parse_info(big, at, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, XP_RAW_MAX_DEVICES);
	ck_assert_int_eq(n->devices[63].index, 163);
	ck_assert(xp_fake_warned(n, "more than 64 chips"));

	/* The same block twice is reported and kept once. */
	memcpy(big + head, row1, block);
	memcpy(big + head + block, row1, block);
	xp_raw_node_init(n);
	ck_assert_int_eq(xp_npusmi_parse_info(big, head + 2 * block, n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 1);
	ck_assert(xp_fake_warned(n, "listed twice"));
	free(big);
	free(text);
	free(n);
}
END_TEST

/* A table without its Bus-Id column (header and rows), and one row missing a value. */
START_TEST(test_missing_column)
{
	/* Drop the Bus-Id cell: from "| Bus-Id          " and from every chip row. */
	struct xp_raw_node *n = xp_fake_node();
	ck_assert_int_eq(parse_edited(n, FOLD_INFO, "| Bus-Id          ", "", "| 0000:DA:00.0    ", "",
				      "| 0000:DC:00.0    ", "", "| 0000:DD:00.0    ", "",
				      "| 0000:DB:00.0    ", "", NULL),
			 0);
	ck_assert_int_eq(n->n_devices, 4);
	ck_assert(xp_fake_warned(n, "no Bus-Id column"));
	for (int c = 0; c < 4; c++) {
		ck_assert_str_eq(n->devices[c].bus_id, "");
		ck_assert_int_eq(n->devices[c].memory_total_mib, 8192); /* the rest still read */
		ck_assert_str_eq(n->devices[c].health, "OK");
	}

	/* NPU 215 chip 1's temperature is missing: that cell is not trusted, the rest is. */
	ck_assert_int_eq(parse_edited(n, FOLD_INFO, "| 12.8              57                   |\n| 1",
				      "| 12.8                                   |\n| 1", NULL),
			 0);
	ck_assert_int_eq(n->n_devices, 4);
	ck_assert(xp_fake_warned(n, "1 values for 2 columns"));
	ck_assert(isnan(dev(n, 215, 1)->temperature_c));
	ck_assert(isnan(dev(n, 215, 1)->power_w));
	ck_assert_str_eq(dev(n, 215, 1)->bus_id, "0000:DC:00.0");
	ck_assert_double_eq_tol(dev(n, 215, 2)->temperature_c, 57, 1e-9);

	/* A header without the NPU column is no device table. */
	ck_assert_int_eq(parse_edited(n, FOLD_INFO, "| NPU     Name", "| Card    Name", NULL), -1);
	free(n);
}
END_TEST

/* Values that are not numbers: "NA" is npu-smi's "no reading", anything else a warning. */
START_TEST(test_bad_values)
{
	size_t len;
	char *text = xp_fixture_text(F910_INFO, &len);
	replace_once(text, "70.5 ", "NA   ");   /* NPU 0 power */
	replace_once(text, "71.2 ", "7x.2 ");   /* NPU 1 power */
	replace_once(text, "4666 / 15137", "4666 / 1513x"); /* NPU 1 Memory-Usage: HBM wins, unread */
	replace_once(text, "0    / 32768", "a    / 32768"); /* NPU 0 HBM */
	struct xp_raw_node *n = xp_fake_node();
	char err[256];
	ck_assert_int_eq(xp_npusmi_parse_info(text, strlen(text), n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 8);
	ck_assert(isnan(dev(n, 0, 0)->power_w));
	ck_assert(isnan(dev(n, 1, 0)->power_w));
	ck_assert(xp_fake_warned(n, "Power \"7x.2\" is not a number"));
	/* NPU 0's HBM is unreadable: Memory-Usage (4252 / 15137) stands in. */
	ck_assert(xp_fake_warned(n, "HBM-Usage \"a    / 32768\""));
	ck_assert_int_eq(dev(n, 0, 0)->memory_total_mib, 15137);
	ck_assert_int_eq(dev(n, 0, 0)->memory_used_mib, 4252);
	ck_assert_int_eq(dev(n, 1, 0)->memory_total_mib, 32768);
	ck_assert(!xp_fake_warned(n, "Memory-Usage"));

	/* Parsing again over the same node: "NA" replaces the earlier reading. */
	char *clean = xp_fixture_text(F910_INFO, &len);
	xp_raw_node_init(n);
	ck_assert_int_eq(xp_npusmi_parse_info(clean, len, n, err, sizeof err), 0);
	ck_assert_double_eq_tol(dev(n, 0, 0)->power_w, 70.5, 1e-9);
	ck_assert_int_eq(xp_npusmi_parse_info(text, strlen(text), n, err, sizeof err), 0);
	ck_assert(isnan(dev(n, 0, 0)->power_w));
	ck_assert_int_eq(n->n_devices, 8);
	free(clean);
	free(text);

	/* Memory in a unit npu-smi does not print is left unread, not misread. */
	ck_assert_int_eq(parse_edited(n, F910_INFO, "HBM-Usage(MB)", "HBM-Usage(KB)", NULL), 0);
	ck_assert(xp_fake_warned(n, "HBM-Usage in unknown unit \"KB\""));
	ck_assert_int_eq(n->n_warnings, 1);
	ck_assert_int_eq(dev(n, 7, 0)->memory_total_mib, 15039); /* Memory-Usage 4521 / 15039 */
	ck_assert_int_eq(dev(n, 7, 0)->memory_used_mib, 4521);

	/* Control characters from a damaged output never reach a field or a warning. */
	ck_assert_int_eq(parse_edited(n, F910_INFO, "Warning ", "War\x1b[2J", NULL), 0);
	ck_assert_str_eq(dev(n, 3, 0)->health, "War?[2J");
	ck_assert_str_eq(dev(n, 3, 0)->reasons[0], "npu-smi health: War?[2J");
	free(n);
}
END_TEST

START_TEST(test_map_bad_rows)
{
	size_t len;
	char *text = xp_fixture_text(F910_MAP, &len);
	/* NPU 2's row: "2   0   2   Ascend 910A" -> a non-numeric NPU ID. */
	replace_once(text, "\n2 ", "\nx ");
	/* NPU 5's row loses its chip id's digits. */
	replace_once(text, "\n5                              0", "\n5                              ?");
	struct xp_raw_node *n = xp_fake_node();
	char err[256];
	ck_assert_int_eq(xp_npusmi_parse_map(text, strlen(text), n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 6);
	ck_assert(xp_fake_warned(n, "NPU ID \"x\" is not a number"));
	ck_assert(xp_fake_warned(n, "Chip ID \"?\" is not a number"));
	free(text);

	/* A short row is reported, not guessed at. */
	const char *shortrow = "NPU ID   Chip ID   Chip Logic ID   Chip Name\n3   0\n4  0  4  Ascend 910A\n";
	xp_raw_node_init(n);
	ck_assert_int_eq(xp_npusmi_parse_map(shortrow, strlen(shortrow), n, err, sizeof err), 0);
	ck_assert_int_eq(n->n_devices, 1);
	ck_assert_int_eq(n->devices[0].index, 4);
	ck_assert(xp_fake_warned(n, "2 fields for 4 columns"));

	/* A header without Chip Name is not the map. */
	const char *noname = "NPU ID   Chip ID   Chip Logic ID\n0   0   0\n";
	xp_raw_node_init(n);
	ck_assert_int_eq(xp_npusmi_parse_map(noname, strlen(noname), n, err, sizeof err), -1);
	free(n);
}
END_TEST

/* ---- manifest vs HAMi's vNPU templates -------------------------------------------------- */

struct tpl {
	char name[32];
	long memory, aicore, aicpu; /* aicpu -1 when not given */
	double compute;             /* manifest only */
	long count;                 /* manifest only */
};

struct chip_cfg {
	long mem_alloc, mem_cap, aicore, aicpu;
	struct tpl t[8];
	int n;
};

/* The text after "key:" on a trimmed YAML line, when the line is that key. */
static const char *yaml_value(const char *line, const char *key)
{
	size_t k = strlen(key);
	if (strncmp(line, key, k) != 0 || line[k] != ':')
		return NULL;
	line += k + 1;
	while (*line == ' ')
		line++;
	return line;
}

/* Reads the vnpus config of chipName chip from HAMi's chart: just the lines needed. */
static bool hami_chip(const char *yaml, const char *chip, struct chip_cfg *c)
{
	memset(c, 0, sizeof *c);
	c->aicpu = -1;
	bool in = false, in_tpl = false;
	const char *p = yaml;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		char line[256];
		snprintf(line, sizeof line, "%.*s", (int)(n < 255 ? n : 255), p);
		p += n + (eol ? 1 : 0);
		char *s = line;
		while (*s == ' ')
			s++;
		const char *v;
		if ((v = yaml_value(s, "- chipName"))) {
			if (in)
				break; /* the next chip */
			in = strcmp(v, chip) == 0;
			continue;
		}
		if (!in)
			continue;
		if (strcmp(s, "templates:") == 0) {
			in_tpl = true;
			continue;
		}
		if (!in_tpl) {
			if ((v = yaml_value(s, "memoryAllocatable")))
				c->mem_alloc = atol(v);
			else if ((v = yaml_value(s, "memoryCapacity")))
				c->mem_cap = atol(v);
			else if ((v = yaml_value(s, "aiCore")))
				c->aicore = atol(v);
			else if ((v = yaml_value(s, "aiCPU")))
				c->aicpu = atol(v);
			continue;
		}
		if ((v = yaml_value(s, "- name"))) {
			ck_assert_int_lt(c->n, 8);
			struct tpl *t = &c->t[c->n++];
			snprintf(t->name, sizeof t->name, "%s", v);
			t->aicpu = -1;
		} else if (c->n && (v = yaml_value(s, "memory"))) {
			c->t[c->n - 1].memory = atol(v);
		} else if (c->n && (v = yaml_value(s, "aiCore"))) {
			c->t[c->n - 1].aicore = atol(v);
		} else if (c->n && (v = yaml_value(s, "aiCPU"))) {
			c->t[c->n - 1].aicpu = atol(v);
		} else if (strncmp(s, "{{", 2) == 0) {
			break;
		}
	}
	return in || c->n;
}

/* Reads the [model NAME] section of the manifest: memory_mib and its templates. */
static bool manifest_model(const char *text, const char *model, long *memory, struct tpl *t, int *nt)
{
	char header[128];
	snprintf(header, sizeof header, "[model %s]", model);
	const char *p = strstr(text, header);
	if (!p)
		return false;
	p += strlen(header);
	*nt = 0;
	*memory = -1;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		char line[256];
		snprintf(line, sizeof line, "%.*s", (int)(n < 255 ? n : 255), p);
		p += n + (eol ? 1 : 0);
		if (line[0] == '[')
			break;
		long a, b;
		char name[32], frac[32];
		if (sscanf(line, "memory_mib = %ld", &a) == 1) {
			*memory = a;
		} else if (sscanf(line, "template = %31s memory_mib=%ld compute=%31s count=%ld", name, &a,
				  frac, &b) == 4) {
			ck_assert_int_lt(*nt, 8);
			struct tpl *x = &t[(*nt)++];
			snprintf(x->name, sizeof x->name, "%s", name);
			x->memory = a;
			x->count = b;
			long num, den;
			if (sscanf(frac, "%ld/%ld", &num, &den) == 2)
				x->compute = (double)num / (double)den;
			else
				x->compute = atof(frac);
			const char *ac = strstr(line, "aicpu=");
			x->aicpu = ac ? atol(ac + 6) : -1;
		} else if (strncmp(line, "template", 8) == 0) {
			ck_abort_msg("unreadable template line: %s", line);
		}
	}
	return true;
}

static const struct {
	const char *model, *chip;
} tpl_models[] = {
	{"Ascend 910A", "910A"},   {"Ascend 910B2", "910B2"}, {"Ascend 910B3", "910B3"},
	{"Ascend 910B4", "910B4"}, {"Ascend 310P3", "310P3"},
};

START_TEST(test_manifest_templates)
{
	char *yaml = xp_fixture_text(FHAMI, NULL);
	char *man = xp_file_text(MANIFEST, NULL);
	struct chip_cfg c;
	ck_assert_msg(hami_chip(yaml, tpl_models[_i].chip, &c), "%s not in HAMi's config",
		      tpl_models[_i].chip);
	struct tpl t[8];
	int nt;
	long memory;
	ck_assert_msg(manifest_model(man, tpl_models[_i].model, &memory, t, &nt), "no [model %s]",
		      tpl_models[_i].model);
	ck_assert_int_gt(c.n, 0);
	ck_assert_int_eq(nt, c.n);
	ck_assert_int_eq(memory, c.mem_cap);
	for (int i = 0; i < nt; i++) {
		const struct tpl *y = &c.t[i];
		ck_assert_str_eq(t[i].name, y->name);
		ck_assert_int_eq(t[i].memory, y->memory);
		ck_assert_int_eq(t[i].aicpu, y->aicpu);
		ck_assert_double_eq_tol(t[i].compute, (double)y->aicore / (double)c.aicore, 1e-9);
		/* How many fit: the scarcest of AI cores, AI CPUs and allocatable memory. */
		long fit = c.aicore / y->aicore;
		if (c.aicpu > 0 && y->aicpu > 0 && c.aicpu / y->aicpu < fit)
			fit = c.aicpu / y->aicpu;
		if (c.mem_alloc / y->memory < fit)
			fit = c.mem_alloc / y->memory;
		ck_assert_int_eq(t[i].count, fit);
	}
	/* For the 910A (no AI CPUs in the config), memory never binds: count is by AI cores. */
	if (strcmp(tpl_models[_i].chip, "910A") == 0)
		for (int i = 0; i < nt; i++)
			ck_assert_int_eq(t[i].count, c.aicore / c.t[i].aicore);
	free(yaml);
	free(man);
}
END_TEST

START_TEST(test_manifest_adapter)
{
	char *man = xp_file_text(MANIFEST, NULL);
	ck_assert(strstr(man, "\n[adapter]\n") != NULL || strncmp(man, "[adapter]\n", 10) == 0);
	ck_assert(strstr(man, "\nname = ascend\n") != NULL);
	ck_assert(strstr(man, "\npci_vendor = 19e5\n") != NULL);
	ck_assert(strstr(man, "\nrecord = npu-smi-info.txt: npu-smi info\n") != NULL);
	ck_assert(strstr(man, "\nrecord = npu-smi-info-m.txt: npu-smi info -m\n") != NULL);
	/* Every product name the fixtures print has a model whose match it is meant for. */
	ck_assert(strstr(man, "match = Ascend 910A") != NULL || strstr(man, "match = *910A*") != NULL);
	ck_assert(strstr(man, "match = MiniD\n") != NULL);
	free(man);
}
END_TEST

/* ---- the adapter ------------------------------------------------------------------ */

/* Every run: npu-smi's timeout and output limit as the adapter sets them. */
static void fake_reset(void)
{
	xp_fake_reset();
	xp_fake.want_timeout_s = 15.0;
	xp_fake.want_max_out = (size_t)4 << 20;
}

/* The fake npu-smi: `info` prints info and `info -m` prints map (NULL: they fail). */
static void fake_npusmi(const char *info, const char *map)
{
	xp_fake_answer((struct xp_fake_rule){.prog = "npu-smi", .args = "info", .out = info});
	xp_fake_answer((struct xp_fake_rule){.prog = "npu-smi", .args = "info -m", .out = map});
}

START_TEST(test_adapter_shape)
{
	const struct xp_adapter *a = &xp_adapter_ascend;
	ck_assert_int_eq(a->abi, XP_ADAPTER_ABI);
	ck_assert_str_eq(a->name, "ascend");
	ck_assert(a->probe && a->enumerate && a->refresh && a->health && a->topology &&
		  a->last_error && a->close);
	ck_assert_str_eq(a->last_error(NULL), "ascend: not probed");
	a->close(NULL);
}
END_TEST

START_TEST(test_adapter_replay)
{
	struct xp_fake_session s;
	xp_fake_open(&s, &xp_adapter_ascend, true);
	const struct xp_adapter *a = s.a;
	struct xp_raw_node *n = s.n;
	xp_fake_copy(s.dir, "npu-smi-info.txt", F910_INFO);
	xp_fake_copy(s.dir, "npu-smi-info-m.txt", F910_MAP);
	fake_reset();
	ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_ACTIVE);
	ck_assert_ptr_nonnull(s.st);
	n->n_devices = 5; /* enumerate starts from nothing */
	ck_assert_int_eq(a->enumerate(s.st, n), 0);
	dump_warnings(n);
	ck_assert_int_eq(n->n_warnings, 0);
	ck_assert_int_eq(n->n_devices, 8);
	for (int i = 0; i < 8; i++) {
		ck_assert_int_eq(n->devices[i].index, i);
		ck_assert_str_eq(n->devices[i].name, "Ascend 910A");
		ck_assert_str_eq(n->devices[i].driver, "24.1.RC2");
		ck_assert_str_eq(n->devices[i].bus_id, rows910[i].bus);
	}
	ck_assert_str_eq(n->devices[7].health, "Warning");
	ck_assert_str_eq(n->devices[7].reasons[0], "npu-smi health: Warning");
	ck_assert_int_eq(a->topology(s.st, n), 0);
	ck_assert(!n->has_links);

	/* Refresh and health re-read the table; a chip gone from it loses its readings. */
	n->devices[0].temperature_c = 99;
	n->devices[3].health[0] = '\0';
	n->devices[3].n_reasons = 0;
	ck_assert_int_eq(a->refresh(s.st, n), 0);
	ck_assert_double_eq_tol(n->devices[0].temperature_c, 42, 1e-9);
	ck_assert_int_eq(a->health(s.st, n), 0);
	ck_assert_str_eq(n->devices[3].health, "Warning");
	ck_assert_int_eq(n->devices[3].n_reasons, 1);
	n->devices[0].index = 42;
	ck_assert_int_eq(a->refresh(s.st, n), 0);
	ck_assert(isnan(n->devices[0].temperature_c));
	ck_assert_int_eq(n->devices[0].memory_total_mib, -1);
	ck_assert_int_eq(a->health(s.st, n), 0);
	ck_assert_str_eq(n->devices[0].health, "");
	ck_assert_str_eq(n->devices[0].reasons[0], "no longer listed by npu-smi info");
	ck_assert_int_eq(xp_fake.calls, 0); /* replay never runs the tool */

	/* The recording damaged: enumerate fails and says why. */
	xp_fake_file(s.dir, "npu-smi-info.txt", "garbage\n", 8, 0644);
	ck_assert_int_eq(a->enumerate(s.st, n), -1);
	ck_assert(strstr(a->last_error(s.st), "npu-smi-info.txt: no device table") != NULL);
	ck_assert_int_eq(a->refresh(s.st, n), -1);

	/* Without the map, names stay as the table prints them. */
	xp_fake_copy(s.dir, "npu-smi-info.txt", F310_INFO);
	xp_fake_unlink(s.dir, "npu-smi-info-m.txt");
	ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_ACTIVE);
	ck_assert_int_eq(a->enumerate(s.st, n), 0);
	ck_assert_int_eq(n->n_devices, 4);
	ck_assert_str_eq(n->devices[0].name, "310");
	ck_assert_int_eq(n->n_warnings, 0);
	xp_fake_close(&s);
}
END_TEST

START_TEST(test_adapter_replay_empty)
{
	struct xp_fake_session s;
	xp_fake_open(&s, &xp_adapter_ascend, true);
	ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_IDLE);
	ck_assert_int_eq(s.a->enumerate(s.st, s.n), 0);
	ck_assert_int_eq(s.n->n_devices, 0);
	ck_assert_int_eq(s.n->n_warnings, 0);
	ck_assert_int_eq(s.a->refresh(s.st, s.n), -1); /* nothing to re-read */
	xp_fake_close(&s);
}
END_TEST

/* Live mode with PATH pointing at an empty directory: no npu-smi, no tool run. */
START_TEST(test_adapter_no_tool)
{
	struct xp_fake_session s;
	xp_fake_open(&s, &xp_adapter_ascend, false);
	fake_reset();
	s.st = (void *)1; /* the probe must clear it: no state without a tool */
	ck_assert_int_eq(s.a->probe(&s.h, &s.st, s.why, sizeof s.why), XP_PROBE_UNAVAILABLE);
	ck_assert_str_eq(s.why, "npu-smi not found");
	ck_assert_ptr_null(s.st);
	ck_assert_int_eq(xp_fake.calls, 0);
	xp_fake_close(&s);
}
END_TEST

/* Live mode with an npu-smi on PATH, its output faked by the host's run. */
START_TEST(test_adapter_live)
{
	struct xp_fake_session s;
	xp_fake_open(&s, &xp_adapter_ascend, false);
	const struct xp_adapter *a = s.a;
	struct xp_raw_node *n = s.n;
	char tool[PATH_MAX];
	snprintf(tool, sizeof tool, "%s", xp_fake_tool(s.dir, "npu-smi"));
	char path[PATH_MAX];
	snprintf(path, sizeof path, "/nonexistent-xp:%s", s.dir);
	setenv("PATH", path, 1); /* a missing directory first: the search goes on past it */

	char *info = xp_fixture_text(F910_INFO, NULL), *map = xp_fixture_text(F910_MAP, NULL);
	fake_reset();
	fake_npusmi(info, map);
	ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_ACTIVE);
	ck_assert_str_eq(xp_fake.argv[0], tool); /* the full path found on PATH */
	ck_assert_int_eq(a->enumerate(s.st, n), 0);
	ck_assert_int_eq(n->n_devices, 8);
	ck_assert_str_eq(n->devices[5].name, "Ascend 910A");
	ck_assert_int_eq(xp_fake.calls, 3); /* probe's info, enumerate's info and -m */

	/* -m failing leaves the table's names and a warning. */
	fake_npusmi(info, NULL);
	ck_assert_int_eq(a->enumerate(s.st, n), 0);
	ck_assert_str_eq(n->devices[5].name, "xxx");
	ck_assert(xp_fake_warned(n, "npu-smi info -m: exit status 1"));
	/* info failing is an error. */
	fake_npusmi(NULL, NULL);
	ck_assert_int_eq(a->refresh(s.st, n), -1);
	ck_assert_str_eq(a->last_error(s.st), "npu-smi info: exit status 1");
	a->close(s.st);

	/* npu-smi that fails at probe: unavailable, with its reason. */
	s.st = (void *)1;
	ck_assert_int_eq(a->probe(&s.h, &s.st, s.why, sizeof s.why), XP_PROBE_UNAVAILABLE);
	ck_assert_str_eq(s.why, "npu-smi info: exit status 1");
	ck_assert_ptr_null(s.st);

	/* npu-smi whose table lists no chip: idle. */
	char *empty = strdup(info);
	*strstr(empty, "| 0     xxx") = '\0';
	fake_npusmi(empty, NULL);
	ck_assert_int_eq(xp_fake_probe(&s), XP_PROBE_IDLE);

	free(empty);
	free(info);
	free(map);
	xp_fake_close(&s);
}
END_TEST

XP_DEFINE_SUITE(ascend,
	{"npu-smi", .timeout_s = 120,
	 .tests = {test_info_910a, test_map_910a, test_map_alone, test_info_310_2104,
		   test_info_310_old, test_empty_and_garbage, test_truncated_everywhere,
		   test_truncated_mid_table, test_oversized, test_too_many_chips,
		   test_missing_column, test_bad_values, test_map_bad_rows}},
	{"manifest", .loop = test_manifest_templates,
	 .loop_n = (int)(sizeof tpl_models / sizeof tpl_models[0]),
	 .tests = {test_manifest_adapter}},
	{"adapter",
	 .tests = {test_adapter_shape, test_adapter_replay, test_adapter_replay_empty,
		   test_adapter_no_tool, test_adapter_live}})
