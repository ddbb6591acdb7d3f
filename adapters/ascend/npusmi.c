/* npusmi.c: parsers of Huawei's `npu-smi info` device table and `npu-smi info -m` chip map.
 *
 * Pure functions over text. Columns are found from the header rows, never from fixed
 * positions: the 910 layout ("Chip" under "NPU Name", an HBM-Usage column) and the 310
 * layouts ("Chip Device", no HBM, with or without Hugepages) differ, and npu-smi pads
 * values to widths that do not line up with their header words ("70            0
 * / 970" under "Temp(C)              Hugepages-Usage(page)"). So within a '|' cell the
 * n-th value belongs to the n-th header word, "a / b" counting as one value. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ascend.h"

#define MAX_CELLS 8  /* '|' cells kept per table row */
#define MAX_WORDS 12 /* values kept per cell */
#define MAX_MAP_FIELDS 16

struct span {
	const char *s;
	size_t n;
};

/* One table row: its cells, each split into values. */
struct row {
	int n_cells;
	int n_words[MAX_CELLS];
	struct span words[MAX_CELLS][MAX_WORDS];
	bool open; /* no closing '|': the line was cut */
	int line;
};

/* The columns read from the device table, by header word (before any "(unit)"). */
enum { C_NPU, C_NAME, C_HEALTH, C_POWER, C_TEMP, C_CHIP, C_BUS, C_AICORE, C_MEM, C_HBM, C_COUNT };
static const char *const col_keys[C_COUNT] = {"NPU",  "Name",   "Health", "Power",        "Temp",
					      "Chip", "Bus-Id", "AICore", "Memory-Usage", "HBM-Usage"};

/* Where a column sits: header row (0 or 1, -1 when absent), cell and word; its unit. */
struct col {
	int row, cell, word;
	struct span unit;
};

struct table {
	struct row hdr[2];
	struct col cols[C_COUNT];
	struct row block[2];  /* the two rows of the chip being read */
	int n_block;
	bool seen[XP_RAW_MAX_DEVICES]; /* devices this text listed, to spot repeats */
	bool full_warned;
	int n_chips; /* chip blocks read */
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static struct span trim(struct span v)
{
	while (v.n && is_blank(*v.s)) {
		v.s++;
		v.n--;
	}
	while (v.n && is_blank(v.s[v.n - 1]))
		v.n--;
	return v;
}

/* Case-insensitive comparison of a span with a word. */
static bool span_is(struct span v, const char *w)
{
	size_t n = strlen(w);
	if (v.n != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (lower(v.s[i]) != lower(w[i]))
			return false;
	return true;
}

/* Position of needle in v, or -1. */
static long span_find(struct span v, const char *needle)
{
	size_t n = strlen(needle);
	for (size_t i = 0; n && i + n <= v.n; i++)
		if (memcmp(v.s + i, needle, n) == 0)
			return (long)i;
	return -1;
}

/* Next line of text from *pos, without its line ending; false at the end. */
static bool next_line(const char *text, size_t len, size_t *pos, struct span *line)
{
	if (*pos >= len)
		return false;
	const char *s = text + *pos;
	const char *nl = memchr(s, '\n', len - *pos);
	size_t n = nl ? (size_t)(nl - s) : len - *pos;
	*pos += n + (nl ? 1 : 0);
	while (n && s[n - 1] == '\r')
		n--;
	line->s = s;
	line->n = n;
	return true;
}

/* A short, printable copy of tool text for a warning: the console shows warnings, and a
 * damaged output must not reach the terminal as control sequences. */
static const char *shown(struct span v, char *buf, size_t size)
{
	size_t n = v.n < size - 1 ? v.n : size - 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v.s[i];
		buf[i] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
	}
	buf[n] = '\0';
	return buf;
}

/* Copies a value into a device field, replacing control characters for the same reason. */
static void set_field(char *dst, size_t size, struct span v)
{
	xp_raw_set(dst, size, v.s, v.n);
	for (char *p = dst; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
}

/* Parses an unsigned decimal integer that fills v. */
static bool parse_i64(struct span v, int64_t *out)
{
	if (!v.n || v.n > 18)
		return false;
	int64_t x = 0;
	for (size_t i = 0; i < v.n; i++) {
		if (!is_digit(v.s[i]))
			return false;
		x = x * 10 + (v.s[i] - '0');
	}
	*out = x;
	return true;
}

static bool parse_int(struct span v, int *out)
{
	int64_t x;
	if (v.n > 9 || !parse_i64(v, &x))
		return false;
	*out = (int)x;
	return true;
}

/* Parses a decimal number ("70.5", "-3") that fills v. Not strtod: that follows the
 * process locale, which the console sets, and npu-smi always prints a '.'. The digits
 * are gathered into an integer and divided once by a power of ten, so the result is the
 * double nearest the text, as a C literal of it would be. */
static bool parse_num(struct span v, double *out)
{
	static const double pow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
	size_t i = 0;
	bool neg = false;
	if (i < v.n && (v.s[i] == '-' || v.s[i] == '+'))
		neg = v.s[i++] == '-';
	uint64_t mant = 0;
	int digits = 0, frac = 0;
	bool dot = false;
	for (; i < v.n; i++) {
		if (v.s[i] == '.' && !dot) {
			dot = true;
			continue;
		}
		if (!is_digit(v.s[i]))
			return false;
		if (++digits > 15 || (dot && frac >= 9))
			return false;
		mant = mant * 10 + (uint64_t)(v.s[i] - '0');
		frac += dot;
	}
	if (!digits)
		return false;
	double x = (double)mant / pow10[frac];
	*out = neg ? -x : x;
	return true;
}

/* npu-smi's words for "no reading" (a chip that does not report its power prints "NA"). */
static bool is_na(struct span v)
{
	return span_is(v, "NA") || span_is(v, "N/A") || span_is(v, "-") || span_is(v, "--");
}

/* Splits a cell into values: blank-separated words, where a '/' joins its neighbours
 * ("4252 / 15137", "0    / 32768" are one value each). */
static int split_words(struct span cell, struct span *words, int max)
{
	int n = 0;
	size_t i = 0;
	while (i < cell.n) {
		while (i < cell.n && is_blank(cell.s[i]))
			i++;
		if (i >= cell.n)
			break;
		size_t start = i, end;
		for (;;) {
			while (i < cell.n && !is_blank(cell.s[i]))
				i++;
			end = i;
			size_t next = i;
			while (next < cell.n && is_blank(cell.s[next]))
				next++;
			bool joins = next < cell.n && (cell.s[end - 1] == '/' || cell.s[next] == '/');
			if (!joins)
				break;
			i = next;
		}
		if (n < max)
			words[n] = (struct span){cell.s + start, end - start};
		n++;
	}
	return n;
}

/* Splits a table row "| a b | c |" into cells. False when the line is not a table row. */
static bool split_row(struct span line, int lineno, struct row *r)
{
	memset(r, 0, sizeof *r);
	r->line = lineno;
	line = trim(line);
	if (!line.n || line.s[0] != '|')
		return false;
	size_t i = 1;
	while (i <= line.n) {
		const char *bar = i < line.n ? memchr(line.s + i, '|', line.n - i) : NULL;
		size_t end = bar ? (size_t)(bar - line.s) : line.n;
		struct span cell = {line.s + i, end - i};
		if (!bar) {
			/* Text after the last '|' means the row was cut before its closing bar. */
			if (trim(cell).n)
				r->open = true;
			else
				break;
		}
		if (r->n_cells < MAX_CELLS) {
			int c = r->n_cells++;
			int n = split_words(cell, r->words[c], MAX_WORDS);
			r->n_words[c] = n < MAX_WORDS ? n : MAX_WORDS;
		}
		if (!bar)
			break;
		i = end + 1;
	}
	return true;
}

/* The first value of a row, or an empty span. */
static struct span first_word(const struct row *r)
{
	if (r->n_cells && r->n_words[0])
		return r->words[0][0];
	return (struct span){"", 0};
}

static bool row_has_word(const struct row *r, const char *w)
{
	for (int c = 0; c < r->n_cells; c++)
		for (int k = 0; k < r->n_words[c]; k++)
			if (span_is(r->words[c][k], w))
				return true;
	return false;
}

/* True when header word h names key: "Power(W)" names "Power", with unit "W". */
static bool header_names(struct span h, const char *key, struct span *unit)
{
	long paren = span_find(h, "(");
	struct span name = {h.s, paren < 0 ? h.n : (size_t)paren};
	if (!span_is(name, key))
		return false;
	*unit = (struct span){"", 0};
	if (paren >= 0) {
		struct span rest = {h.s + paren + 1, h.n - (size_t)paren - 1};
		long close = span_find(rest, ")");
		if (close >= 0)
			*unit = (struct span){rest.s, (size_t)close};
	}
	return true;
}

/* Finds every column of interest in the two header rows. */
static void find_columns(struct table *t)
{
	for (int k = 0; k < C_COUNT; k++) {
		struct col *col = &t->cols[k];
		col->row = -1;
		for (int r = 0; r < 2 && col->row < 0; r++)
			for (int c = 0; c < t->hdr[r].n_cells && col->row < 0; c++)
				for (int w = 0; w < t->hdr[r].n_words[c]; w++)
					if (header_names(t->hdr[r].words[c][w], col_keys[k], &col->unit)) {
						col->row = r;
						col->cell = c;
						col->word = w;
						break;
					}
	}
}

/* The value of column k in the current block; false when the column is absent or its
 * cell does not hold as many values as the header has words (a value is missing, and
 * which one cannot be told, so none of that cell is trusted). */
static bool value(const struct table *t, int k, struct span *v)
{
	const struct col *col = &t->cols[k];
	if (col->row < 0 || col->row >= t->n_block)
		return false;
	const struct row *r = &t->block[col->row];
	if (col->cell >= r->n_cells || r->n_words[col->cell] != t->hdr[col->row].n_words[col->cell])
		return false;
	*v = r->words[col->cell][col->word];
	return true;
}

/* The device (index, chip) of node, added when absent; NULL when node is full. */
static struct xp_raw_device *device_at(struct xp_raw_node *node, int index, int chip)
{
	for (int i = 0; i < node->n_devices; i++)
		if (node->devices[i].index == index && node->devices[i].chip == chip)
			return &node->devices[i];
	if (node->n_devices >= XP_RAW_MAX_DEVICES)
		return NULL;
	struct xp_raw_device *d = &node->devices[node->n_devices++];
	xp_raw_device_init(d);
	d->index = index;
	d->chip = chip;
	return d;
}

/* Reads a measurement column into *out: unknown when it says "NA" or is not a number,
 * untouched when the row has no readable value there. */
static void read_num(struct table *t, struct xp_raw_node *node, int k, int npu, double *out)
{
	struct span v;
	char buf[40];
	if (!value(t, k, &v))
		return;
	*out = NAN;
	if (!is_na(v) && !parse_num(v, out))
		xp_raw_warn(node, "npu-smi info: NPU %d: %s \"%s\" is not a number", npu, col_keys[k],
			    shown(v, buf, sizeof buf));
}

/* Reads a "used / total" memory column; false when absent or unreadable. npu-smi's MB are
 * MiB (the 910A's HBM total prints as 32768). */
static bool read_mem(struct table *t, struct xp_raw_node *node, int k, int npu, int64_t *used,
		     int64_t *total)
{
	struct span v;
	char buf[40];
	if (!value(t, k, &v) || is_na(v))
		return false;
	int64_t scale = span_is(t->cols[k].unit, "GB") ? 1024 : 1;
	long slash = span_find(v, "/");
	int64_t u, n;
	if (slash < 0 || !parse_i64(trim((struct span){v.s, (size_t)slash}), &u) ||
	    !parse_i64(trim((struct span){v.s + slash + 1, v.n - (size_t)slash - 1}), &n)) {
		xp_raw_warn(node, "npu-smi info: NPU %d: %s \"%s\" is not used / total", npu,
			    col_keys[k], shown(v, buf, sizeof buf));
		return false;
	}
	if (n <= 0) /* 0 / 0: the chip has no memory of that kind */
		return false;
	*used = u * scale;
	*total = n * scale;
	return true;
}

/* Checks the block's cells against the header: false (with a warning) when a row has
 * fewer cells than its header, as a row cut after one of its inner bars has; a cell with
 * the wrong number of values is only reported (value() leaves it unread). */
static bool check_block(struct table *t, struct xp_raw_node *node, int npu)
{
	for (int r = 0; r < 2; r++) {
		const struct row *h = &t->hdr[r], *b = &t->block[r];
		if (b->n_cells < h->n_cells) {
			xp_raw_warn(node, "npu-smi info line %d: NPU %d: %d cells, the header has %d; "
				    "chip skipped", b->line, npu, b->n_cells, h->n_cells);
			return false;
		}
		if (b->n_cells > h->n_cells)
			xp_raw_warn(node, "npu-smi info line %d: NPU %d: %d cells, the header has %d",
				    b->line, npu, b->n_cells, h->n_cells);
		for (int c = 0; c < h->n_cells; c++)
			if (b->n_words[c] != h->n_words[c])
				xp_raw_warn(node,
					    "npu-smi info line %d: NPU %d: cell %d has %d values for %d "
					    "columns; ignored",
					    b->line, npu, c + 1, b->n_words[c], h->n_words[c]);
	}
	return true;
}

/* Turns the two rows of a chip into a device of node. */
static void add_block(struct table *t, struct xp_raw_node *node)
{
	struct span v;
	int npu, chip = 0;
	if (!value(t, C_NPU, &v) || !parse_int(v, &npu)) {
		xp_raw_warn(node, "npu-smi info line %d: no NPU id; chip skipped", t->block[0].line);
		return;
	}
	t->n_chips++;
	if (!check_block(t, node, npu))
		return;
	/* Tables without a Chip column list one chip per NPU. */
	if (t->cols[C_CHIP].row >= 0 && (!value(t, C_CHIP, &v) || !parse_int(v, &chip))) {
		xp_raw_warn(node, "npu-smi info line %d: NPU %d: no chip id; skipped", t->block[1].line,
			    npu);
		return;
	}
	struct xp_raw_device *d = device_at(node, npu, chip);
	if (!d) {
		if (!t->full_warned)
			xp_raw_warn(node, "npu-smi info: more than %d chips; NPU %d chip %d and later dropped",
				    XP_RAW_MAX_DEVICES, npu, chip);
		t->full_warned = true;
		return;
	}
	int at = (int)(d - node->devices);
	if (t->seen[at])
		xp_raw_warn(node, "npu-smi info: NPU %d chip %d listed twice; the last row kept", npu, chip);
	t->seen[at] = true;

	if (value(t, C_NAME, &v))
		set_field(d->name, sizeof d->name, v);
	if (value(t, C_BUS, &v))
		set_field(d->bus_id, sizeof d->bus_id, v);
	if (value(t, C_HEALTH, &v)) {
		set_field(d->health, sizeof d->health, v);
		/* The vendor word is kept as is (the core maps it); anything but OK also says why,
		 * in npu-smi's own word, so that `xpool health` lists a reason. */
		d->n_reasons = 0;
		if (d->health[0] && !span_is(v, "OK"))
			snprintf(d->reasons[d->n_reasons++], sizeof d->reasons[0], "npu-smi health: %s",
				 d->health);
	}
	read_num(t, node, C_POWER, npu, &d->power_w);
	read_num(t, node, C_TEMP, npu, &d->temperature_c);
	read_num(t, node, C_AICORE, npu, &d->utilization_pct);
	/* The HBM is the chip's working memory where there is one (910); Memory-Usage is
	 * then the on-chip control CPU's DDR. 310 chips have only Memory-Usage. */
	int64_t used, total;
	if (read_mem(t, node, C_HBM, npu, &used, &total) ||
	    read_mem(t, node, C_MEM, npu, &used, &total)) {
		d->memory_used_mib = used;
		d->memory_total_mib = total;
	} else if (t->cols[C_HBM].row >= 0 || t->cols[C_MEM].row >= 0) {
		d->memory_used_mib = d->memory_total_mib = -1;
	}
}

/* Takes the driver version from the banner "| npu-smi 24.1.RC2   Version: 24.1.RC2 |". */
static bool read_version(struct span line, char *out, size_t size)
{
	long at = span_find(line, "Version:");
	if (at < 0)
		return false;
	struct span rest = {line.s + at + 8, line.n - (size_t)at - 8};
	struct span w[1];
	rest = trim(rest);
	long bar = span_find(rest, "|");
	if (bar >= 0)
		rest.n = (size_t)bar;
	if (split_words(rest, w, 1) < 1)
		return false;
	set_field(out, size, w[0]);
	return true;
}

/* The process table's columns: which cell holds what (-1 when absent). */
struct ptable {
	int npu, pid, name, mem;
	int64_t mem_scale;
};

/* Finds the columns in the header "| NPU Chip | Process id | Process name | Process memory(MB) |"
 * (newer versions add "| Process id in container |", which is not the host's pid). False when
 * the pid or NPU column is missing. */
static bool ptable_header(const struct row *h, struct xp_raw_node *node, struct ptable *pt)
{
	pt->npu = pt->pid = pt->name = pt->mem = -1;
	pt->mem_scale = 1;
	for (int c = 0; c < h->n_cells; c++) {
		const struct span *w = h->words[c];
		int n = h->n_words[c];
		if (n >= 1 && span_is(w[0], "NPU"))
			pt->npu = c;
		else if (n == 2 && span_is(w[0], "Process") && span_is(w[1], "id"))
			pt->pid = c;
		else if (n == 2 && span_is(w[0], "Process") && span_is(w[1], "name"))
			pt->name = c;
		else if (n == 2 && span_is(w[0], "Process")) {
			struct span unit;
			if (!header_names(w[1], "memory", &unit))
				continue;
			if (unit.n && !span_is(unit, "MB") && !span_is(unit, "GB")) {
				char buf[40];
				xp_raw_warn(node, "npu-smi info: process memory in unknown unit \"%s\"; unread",
					    shown(unit, buf, sizeof buf));
				continue;
			}
			pt->mem = c;
			pt->mem_scale = span_is(unit, "GB") ? 1024 : 1;
		}
	}
	return pt->npu >= 0 && pt->pid >= 0;
}

/* The whole text of a cell (its first value to its last, blanks inside kept), or empty. */
static struct span cell_text(const struct row *r, int c)
{
	if (c < 0 || c >= r->n_cells || r->n_words[c] == 0)
		return (struct span){"", 0};
	struct span a = r->words[c][0], b = r->words[c][r->n_words[c] - 1];
	return (struct span){a.s, (size_t)(b.s + b.n - a.s)};
}

/* Marks every chip of NPU npu as running no process. */
static void no_processes(struct xp_raw_node *node, int npu)
{
	for (int i = 0; i < node->n_devices; i++)
		if (node->devices[i].index == npu && node->devices[i].n_procs < 0)
			node->devices[i].n_procs = 0;
}

/* Reads the process table after its header row: "| 0 0 | 37656 | hlt_host_devmm_ | 686 |" per
 * process, "| No running processes found in NPU 3 |" for an idle NPU. A chip the table does not
 * mention keeps its list unknown. */
static void read_processes(const char *text, size_t len, size_t pos, int lineno, const struct row *hdr,
			   struct xp_raw_node *node)
{
	struct ptable pt;
	if (!ptable_header(hdr, node, &pt)) {
		xp_raw_warn(node, "npu-smi info line %d: process table without NPU and Process id columns; unread",
			    hdr->line);
		return;
	}
	struct span line;
	struct row row;
	while (next_line(text, len, &pos, &line)) {
		lineno++;
		if (!split_row(line, lineno, &row) || row.n_cells == 0)
			continue;
		char buf[40];
		int n0 = row.n_words[0];
		const struct span *w0 = row.words[0];
		if (row.n_cells == 1 && n0 >= 2 && span_is(w0[0], "No")) {
			int npu;
			/* Without its closing bar the row may be cut inside the number ("NPU 1" of 12). */
			if (!row.open && parse_int(w0[n0 - 1], &npu) && span_is(w0[1], "running"))
				no_processes(node, npu);
			else
				xp_raw_warn(node, "npu-smi info line %d: unexpected row \"%s\"; skipped", lineno,
					    shown(trim(line), buf, sizeof buf));
			continue;
		}
		int npu, chip = 0;
		int64_t pid;
		/* Every cell of the header, closed: a row cut after an inner bar is no process. */
		if (row.open || row.n_cells < hdr->n_cells || pt.npu >= row.n_cells || row.n_words[pt.npu] < 1 ||
		    !parse_int(row.words[pt.npu][0], &npu) ||
		    (row.n_words[pt.npu] > 1 && !parse_int(row.words[pt.npu][1], &chip)) ||
		    row.n_words[pt.pid] != 1 || !parse_i64(row.words[pt.pid][0], &pid) || pid <= 0 ||
		    pid > INT32_MAX) {
			xp_raw_warn(node, "npu-smi info line %d: process row \"%s\" unread", lineno,
				    shown(trim(line), buf, sizeof buf));
			continue;
		}
		struct xp_raw_device *d = NULL;
		for (int i = 0; i < node->n_devices && !d; i++)
			if (node->devices[i].index == npu && node->devices[i].chip == chip)
				d = &node->devices[i];
		if (!d) {
			xp_raw_warn(node, "npu-smi info line %d: a process on NPU %d chip %d, which the device table "
				    "does not list", lineno, npu, chip);
			continue;
		}
		struct xp_raw_proc *p = xp_raw_add_proc(node, d, "NPU");
		if (!p)
			continue;
		p->pid = pid;
		set_field(p->name, sizeof p->name, cell_text(&row, pt.name));
		int64_t mem;
		struct span mv = cell_text(&row, pt.mem);
		if (pt.mem >= 0 && !is_na(mv) && parse_i64(mv, &mem) && mem < ((int64_t)1 << 40))
			p->memory_mib = mem * pt.mem_scale;
	}
}

static int fail(char *err, size_t errlen, const char *msg)
{
	if (errlen)
		snprintf(err, errlen, "%s", msg);
	return -1;
}

/* Checks what every parser checks first. */
static int check_input(const char *text, size_t len, struct xp_raw_node *node, char *err,
		       size_t errlen)
{
	if (!node || node->n_devices < 0 || node->n_devices > XP_RAW_MAX_DEVICES)
		return fail(err, errlen, "no node to fill");
	if (!text || !len)
		return fail(err, errlen, "empty output");
	if (len > XP_NPUSMI_MAX_TEXT) {
		if (errlen)
			snprintf(err, errlen, "output too large (%zu bytes, at most %zu)", len,
				 XP_NPUSMI_MAX_TEXT);
		return -1;
	}
	return 0;
}

int xp_npusmi_parse_info(const char *text, size_t len, struct xp_raw_node *node, char *err,
			 size_t errlen)
{
	if (check_input(text, len, node, err, errlen) < 0)
		return -1;
	struct table t;
	memset(&t, 0, sizeof t);
	enum { BEFORE, HEADER, BODY, DONE } state = BEFORE;
	char driver[64] = "";
	bool closed = true; /* a separator followed the last chip row */
	struct row row;
	struct span line;
	size_t pos = 0;
	int lineno = 0;
	while (state != DONE && next_line(text, len, &pos, &line)) {
		lineno++;
		struct span l = trim(line);
		if (l.n && l.s[0] == '+') { /* a separator closes a chip's block */
			if (state == BODY && t.n_block == 1)
				xp_raw_warn(node, "npu-smi info line %d: NPU row without its chip row; skipped",
					    t.block[0].line);
			t.n_block = 0;
			closed = true;
			continue;
		}
		if (!split_row(line, lineno, &row))
			continue; /* banner text, blank lines, the URL a fixture ends with */
		struct span first = first_word(&row);
		int64_t num;
		bool numeric = parse_i64(first, &num);
		if (state == BEFORE) {
			if (!driver[0])
				read_version(l, driver, sizeof driver);
			if (span_is(first, "NPU")) {
				t.hdr[0] = row;
				state = HEADER;
			}
			continue;
		}
		if (state == HEADER) {
			if (numeric || row.open)
				return fail(err, errlen, "device table header has one row");
			t.hdr[1] = row;
			find_columns(&t);
			if (t.cols[C_NPU].row != 0)
				return fail(err, errlen, "device table has no NPU column");
			/* Memory in a unit we do not know is better unread than misread. */
			for (int k = C_MEM; k <= C_HBM; k++) {
				struct span u = t.cols[k].unit;
				char buf[40];
				if (t.cols[k].row >= 0 && u.n && !span_is(u, "MB") && !span_is(u, "GB")) {
					xp_raw_warn(node, "npu-smi info: %s in unknown unit \"%s\"; unread",
						    col_keys[k], shown(u, buf, sizeof buf));
					t.cols[k].row = -1;
				}
			}
			for (int k = 0; k < C_COUNT; k++)
				if (t.cols[k].row < 0 && k != C_HBM && k != C_CHIP &&
				    !(k == C_MEM && t.cols[C_HBM].row >= 0))
					xp_raw_warn(node, "npu-smi info: the device table has no %s column",
						    col_keys[k]);
			state = BODY;
			continue;
		}
		if (!numeric) {
			if (row_has_word(&row, "Process")) {
				state = DONE; /* the process table follows the devices */
				read_processes(text, len, pos, lineno, &row, node);
				break;
			}
			char buf[40];
			xp_raw_warn(node, "npu-smi info line %d: unexpected row \"%s\"; skipped", lineno,
				    shown(l, buf, sizeof buf));
			continue;
		}
		if (row.open) {
			xp_raw_warn(node, "npu-smi info line %d: row cut short; its chip skipped", lineno);
			t.n_block = 0;
			closed = true;
			continue;
		}
		closed = false;
		t.block[t.n_block++] = row;
		if (t.n_block == 2) {
			add_block(&t, node);
			t.n_block = 0;
		}
	}
	if (state == BEFORE)
		return fail(err, errlen, "no device table (not npu-smi info output?)");
	if (state == HEADER)
		return fail(err, errlen, "device table header cut short");
	if (t.n_block == 1)
		xp_raw_warn(node, "npu-smi info line %d: output ends after an NPU row (cut short?)",
			    t.block[0].line);
	else if (state == BODY && !closed)
		xp_raw_warn(node, "npu-smi info: the device table is not closed (output cut short?)");
	if (!t.n_chips)
		xp_raw_warn(node, "npu-smi info: the device table lists no chip");
	if (driver[0]) {
		for (int i = 0; i < node->n_devices; i++)
			snprintf(node->devices[i].driver, sizeof node->devices[i].driver, "%s", driver);
	} else {
		xp_raw_warn(node, "npu-smi info: no Version line; driver unknown");
	}
	return 0;
}

/* Splits the -m header into column names: they hold single spaces ("Chip Logic ID") and
 * are set apart by runs of two or more. */
static int split_header(struct span line, struct span *names, int max)
{
	int n = 0;
	size_t i = 0;
	while (i < line.n) {
		while (i < line.n && is_blank(line.s[i]))
			i++;
		if (i >= line.n)
			break;
		size_t start = i;
		while (i < line.n && !(is_blank(line.s[i]) && (i + 1 >= line.n || is_blank(line.s[i + 1]))))
			i++;
		if (n < max)
			names[n] = (struct span){line.s + start, i - start};
		n++;
	}
	return n < max ? n : max;
}

int xp_npusmi_parse_map(const char *text, size_t len, struct xp_raw_node *node, char *err,
			size_t errlen)
{
	if (check_input(text, len, node, err, errlen) < 0)
		return -1;
	int c_npu = -1, c_chip = -1, c_logic = -1, c_name = -1, n_cols = 0;
	struct span line;
	size_t pos = 0;
	int lineno = 0;
	char buf[40];
	while (next_line(text, len, &pos, &line)) {
		lineno++;
		struct span l = trim(line);
		if (!l.n)
			continue;
		if (c_name < 0) {
			struct span names[MAX_MAP_FIELDS];
			int n = split_header(l, names, MAX_MAP_FIELDS);
			c_npu = c_chip = c_logic = c_name = -1;
			for (int i = 0; i < n; i++) {
				if (span_is(names[i], "NPU ID"))
					c_npu = i;
				else if (span_is(names[i], "Chip ID"))
					c_chip = i;
				else if (span_is(names[i], "Chip Logic ID"))
					c_logic = i;
				else if (span_is(names[i], "Chip Name"))
					c_name = i;
			}
			if (c_npu < 0 || c_chip < 0 || c_name < 0)
				return fail(err, errlen,
					    "no NPU ID / Chip ID / Chip Name header (not npu-smi info -m "
					    "output?)");
			n_cols = n;
			continue;
		}
		struct span w[MAX_MAP_FIELDS];
		struct span all = {l.s, l.n};
		int n = split_words(all, w, MAX_MAP_FIELDS);
		if (n == 1 && span_find(l, "://") >= 0)
			continue; /* a document's address, as the recorded samples end with */
		if (n < n_cols || n > MAX_MAP_FIELDS) {
			xp_raw_warn(node, "npu-smi info -m line %d: %d fields for %d columns; skipped",
				    lineno, n, n_cols);
			continue;
		}
		/* Only the name holds blanks ("Ascend 910A"): extra words belong to it. */
		int extra = n - n_cols;
#define FIELD(c) ((c) < c_name ? w[(c)] : (c) == c_name ? w[c_name] : w[(c) + extra])
		int npu, chip;
		struct span name = {w[c_name].s,
				    (size_t)(w[c_name + extra].s + w[c_name + extra].n - w[c_name].s)};
		if (!parse_int(FIELD(c_npu), &npu)) {
			xp_raw_warn(node, "npu-smi info -m line %d: NPU ID \"%s\" is not a number; skipped",
				    lineno, shown(FIELD(c_npu), buf, sizeof buf));
			continue;
		}
		if (!parse_int(FIELD(c_chip), &chip)) {
			xp_raw_warn(node, "npu-smi info -m line %d: Chip ID \"%s\" is not a number; skipped",
				    lineno, shown(FIELD(c_chip), buf, sizeof buf));
			continue;
		}
		/* Atlas 300 cards list their management MCU as a chip with no logic id: not an NPU. */
		if (span_is(name, "Mcu") || (c_logic >= 0 && span_is(FIELD(c_logic), "-")))
			continue;
#undef FIELD
		struct xp_raw_device *d = device_at(node, npu, chip);
		if (!d) {
			xp_raw_warn(node, "npu-smi info -m line %d: more than %d chips; skipped", lineno,
				    XP_RAW_MAX_DEVICES);
			continue;
		}
		set_field(d->name, sizeof d->name, name);
	}
	if (c_name < 0)
		return fail(err, errlen, "no NPU ID / Chip ID / Chip Name header (not npu-smi info -m output?)");
	return 0;
}
