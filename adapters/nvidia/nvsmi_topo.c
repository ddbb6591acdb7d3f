/* nvsmi_topo.c: parser of `nvidia-smi topo -m` (also printed by `topo --matrix`).
 *
 * The matrix is a header line naming the columns (GPU0..GPUn, then NIC0.. or, with older
 * drivers, the RDMA devices' own names, then "CPU Affinity", "NUMA Affinity" and on newer
 * drivers "GPU NUMA ID"), one row per GPU and per NIC, and a legend. nvidia-smi separates
 * cells with tabs and underlines the header with ANSI escapes when writing to a terminal;
 * matrices pasted from documents have spaces instead, and some are cut short. Cells never
 * contain blanks, so rows are split on any run of blanks, which also absorbs the doubled tab
 * nvidia-smi writes before "GPU NUMA ID". */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvidia.h"

/* Most cells on one line: 64 GPUs, as many NICs and the affinity columns, with room to spare. */
#define MAX_CELLS 256

enum col_kind {
	COL_GPU,      /* a GPU: its cells are link classes */
	COL_OTHER,    /* a NIC or other PCI device: ignored */
	COL_CPU_AFF,  /* "CPU Affinity" */
	COL_NUMA_AFF, /* "NUMA Affinity" */
	COL_GPU_NUMA, /* "GPU NUMA ID": the GPU memory's own node on coherent systems; ignored */
	COL_UNKNOWN   /* a column after the affinities that this parser does not know */
};

struct col {
	enum col_kind kind;
	int gpu; /* COL_GPU: the n of GPUn */
};

/* Copies text without ANSI escape sequences, carriage returns and NUL bytes. */
static char *clean_copy(const char *text, size_t len)
{
	char *out = malloc(len + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c == 0x1b && i + 1 < len && text[i + 1] == '[') {
			/* CSI: parameters and intermediates up to a final byte in 0x40..0x7e */
			for (i += 2; i < len && !((unsigned char)text[i] >= 0x40 && (unsigned char)text[i] <= 0x7e);
			     i++)
				;
		} else if (c == 0x1b && i + 1 < len && text[i + 1] == ']') {
			/* OSC: up to BEL or ESC \ */
			for (i += 2; i < len && text[i] != 0x07; i++)
				if (text[i] == 0x1b && i + 1 < len && text[i + 1] == '\\') {
					i++;
					break;
				}
		} else if (c == 0x1b) {
			i++; /* a two-byte escape */
		} else if (c != '\r' && c != '\0') {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
	return out;
}

/* Splits a line in place on blanks; returns the number of cells (at most max). */
static int split(char *line, char **cell, int max, bool *dropped)
{
	int n = 0;
	*dropped = false;
	char *p = line;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		if (n == max) {
			*dropped = true;
			break;
		}
		cell[n++] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (*p)
			*p++ = '\0';
	}
	return n;
}

/* True when s is GPUn; *n gets n. */
static bool gpu_label(const char *s, int *n)
{
	if (strncmp(s, "GPU", 3) != 0 || !s[3])
		return false;
	int v = 0;
	for (const char *p = s + 3; *p; p++) {
		if (*p < '0' || *p > '9' || v > 99999)
			return false;
		v = v * 10 + (*p - '0');
	}
	*n = v;
	return true;
}

/* Checks a matrix cell; copies its spelling into out (8 bytes). */
static bool link_class(const char *s, char out[8])
{
	static const char *const fixed[] = {"X", "PIX", "PXB", "PHB", "NODE", "SYS"};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		if (strcmp(s, fixed[i]) == 0) {
			strcpy(out, s);
			return true;
		}
	/* Drivers before the NODE/SYS split called the inter-socket path SOC. */
	if (strcmp(s, "SOC") == 0) {
		strcpy(out, "SYS");
		return true;
	}
	/* NV#: a bonded set of # NVLinks */
	size_t l = strlen(s);
	if (l < 3 || l > 6 || strncmp(s, "NV", 2) != 0)
		return false;
	for (size_t i = 2; i < l; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	strcpy(out, s);
	return true;
}

/* A CPU list as nvidia-smi prints it ("0-31,64-95"); a cut-off paste leaves "-31,64-95". */
static bool cpu_list(const char *s)
{
	if (strcmp(s, "N/A") == 0)
		return true;
	if (*s < '0' || *s > '9')
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= '0' && *p <= '9') || *p == ',' || *p == '-'))
			return false;
	char last = s[strlen(s) - 1];
	return last >= '0' && last <= '9';
}

/* Names the header's columns; returns how many. */
static int header_columns(char **cell, int n, struct col *cols)
{
	int nc = 0;
	bool after_affinity = false;
	for (int i = 0; i < n; i++) {
		struct col c = {COL_OTHER, -1};
		if (i + 1 < n && strcmp(cell[i], "CPU") == 0 && strcmp(cell[i + 1], "Affinity") == 0) {
			c.kind = COL_CPU_AFF;
			i++;
		} else if (i + 1 < n && strcmp(cell[i], "NUMA") == 0 && strcmp(cell[i + 1], "Affinity") == 0) {
			c.kind = COL_NUMA_AFF;
			i++;
		} else if (i + 2 < n && strcmp(cell[i], "GPU") == 0 && strcmp(cell[i + 1], "NUMA") == 0 &&
			   strcmp(cell[i + 2], "ID") == 0) {
			c.kind = COL_GPU_NUMA;
			i += 2;
		} else if (gpu_label(cell[i], &c.gpu)) {
			c.kind = COL_GPU;
		} else if (after_affinity) {
			c.kind = COL_UNKNOWN;
		}
		if (c.kind == COL_CPU_AFF || c.kind == COL_NUMA_AFF || c.kind == COL_GPU_NUMA)
			after_affinity = true;
		cols[nc++] = c;
	}
	return nc;
}

/* The header is the first line that starts with GPU0 and holds no self cell ("X"), which
 * tells it apart from GPU0's row even when its leading blanks were lost in a paste. */
static bool is_header(char **cell, int n)
{
	int g;
	if (n < 2 || !gpu_label(cell[0], &g) || g != 0)
		return false;
	for (int i = 0; i < n; i++)
		if (strcmp(cell[i], "X") == 0)
			return false;
	return true;
}

static int device_pos(const struct xp_raw_node *node, int index)
{
	for (int i = 0; i < node->n_devices; i++)
		if (node->devices[i].index == index)
			return i;
	return -1;
}

/* The position of GPU index's device, creating it when the matrix is the only source. */
static int gpu_pos(struct xp_raw_node *node, int index, bool create)
{
	int p = device_pos(node, index);
	if (p >= 0 || !create)
		return p;
	if (node->n_devices >= XP_RAW_MAX_DEVICES)
		return -1;
	struct xp_raw_device *d = &node->devices[node->n_devices];
	xp_raw_device_init(d);
	d->index = index;
	d->chip = 0;
	return node->n_devices++;
}

static void parse_row(struct xp_raw_node *node, int gpu, char **cell, int n, const struct col *cols,
		      int ncols, bool create)
{
	int p = gpu_pos(node, gpu, create);
	if (p < 0) {
		xp_raw_warn(node, "topo: GPU%d is not among the devices; its row is ignored", gpu);
		return;
	}
	int have = n - 1;
	if (have < ncols)
		xp_raw_warn(node, "topo: row GPU%d has %d of %d cells (truncated)", gpu, have, ncols);
	else if (have > ncols)
		xp_raw_warn(node, "topo: row GPU%d has %d cells, the header %d", gpu, have, ncols);
	for (int c = 0; c < ncols && c < have; c++) {
		const char *v = cell[1 + c];
		if (cols[c].kind == COL_GPU) {
			char cls[8];
			if (!link_class(v, cls)) {
				xp_raw_warn(node, "topo: GPU%d/GPU%d cell \"%.16s\" is not a link class", gpu,
					    cols[c].gpu, v);
				continue;
			}
			int q = gpu_pos(node, cols[c].gpu, create);
			if (q >= 0)
				memcpy(node->links[p][q], cls, sizeof cls);
		} else if (cols[c].kind == COL_CPU_AFF) {
			if (!cpu_list(v))
				xp_raw_warn(node, "topo: GPU%d CPU Affinity \"%.32s\" is not a CPU list (truncated?)",
					    gpu, v);
		} else if (cols[c].kind == COL_NUMA_AFF) {
			char *end;
			long numa = strtol(v, &end, 10);
			if (strcmp(v, "N/A") == 0)
				node->devices[p].numa = -1;
			else if (v[0] >= '0' && v[0] <= '9' && !*end && numa <= 65535)
				node->devices[p].numa = (int)numa;
			else
				xp_raw_warn(node, "topo: GPU%d NUMA Affinity \"%.32s\" is not a node number", gpu, v);
		}
	}
}

int xp_nvsmi_parse_topo(const char *text, size_t len, struct xp_raw_node *node, char *err, size_t errlen)
{
	if (!text || !len) {
		xp_text_err(err, errlen, "nvidia-smi topo -m: empty input");
		return -1;
	}
	if (len > XP_NVSMI_MAX_TEXT) {
		xp_text_err(err, errlen, "nvidia-smi topo -m: input is %zu bytes, more than the %zu MiB limit", len,
		     XP_NVSMI_MAX_TEXT >> 20);
		return -1;
	}
	char *buf = clean_copy(text, len);
	char **cell = malloc(MAX_CELLS * sizeof *cell);
	struct col *cols = malloc(MAX_CELLS * sizeof *cols);
	if (!buf || !cell || !cols) {
		free(buf);
		free(cell);
		free(cols);
		xp_text_err(err, errlen, "nvidia-smi topo -m: out of memory");
		return -1;
	}
	node->has_links = false;
	memset(node->links, 0, sizeof node->links);
	bool create = node->n_devices == 0;

	int ncols = -1, rows = 0;
	bool row_seen[XP_RAW_MAX_DEVICES] = {false};
	char *line = buf;
	while (line) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		bool dropped;
		int n = split(line, cell, MAX_CELLS, &dropped);
		int gpu;
		if (n == 0) {
			/* blank line */
		} else if (ncols < 0) {
			if (is_header(cell, n)) {
				if (dropped)
					xp_raw_warn(node, "topo: header has more than %d columns; the rest are ignored",
						    MAX_CELLS);
				ncols = header_columns(cell, n, cols);
				for (int c = 0; c < ncols; c++)
					if (cols[c].kind == COL_GPU)
						gpu_pos(node, cols[c].gpu, create);
			}
		} else if (strncmp(cell[0], "Legend", 6) == 0) {
			break;
		} else if (gpu_label(cell[0], &gpu)) {
			parse_row(node, gpu, cell, n, cols, ncols, create);
			int p = device_pos(node, gpu);
			if (p >= 0)
				row_seen[p] = true;
			rows++;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(buf);
	free(cell);

	int rc = 0;
	if (ncols < 0) {
		xp_text_err(err, errlen, "nvidia-smi topo -m: no header line (GPU0 ... CPU Affinity)");
		rc = -1;
	} else if (rows == 0) {
		xp_text_err(err, errlen, "nvidia-smi topo -m: no GPU rows after the header");
		rc = -1;
	}
	if (rc < 0 && create) {
		node->n_devices = 0; /* drop the bare devices the header made */
	} else if (rc == 0) {
		node->has_links = true;
		for (int c = 0; c < ncols; c++) {
			int p = cols[c].kind == COL_GPU ? device_pos(node, cols[c].gpu) : -1;
			if (p >= 0 && !row_seen[p]) {
				xp_raw_warn(node, "topo: no row for GPU%d (truncated matrix?)", cols[c].gpu);
				row_seen[p] = true;
			}
		}
	}
	free(cols);
	return rc;
}
