/* cmd_topo.c: `xpool topo [--json] [--all] [NODE]`: an lstopo-like tree
 * (machine, packages, NUMA domains, PCI functions) and the accelerator link
 * matrix in the layout of `nvidia-smi topo -m`. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "format.h"
#include "table.h"

#include "pci_ids.h"

static const struct xp_opt topo_opts[] = {
	{"all", 'a', NULL, "show every PCI function (chipset devices and system peripherals too)"},
	{NULL, 0, NULL, NULL},
};

/* Functions worth a line by default: what lstopo keeps as "important" I/O. */
static bool interesting(const struct xp_pci *p)
{
	int base = p->pci_class >> 8;
	if (p->accel >= 0)
		return true;
	return base == 0x01 || base == 0x02 || base == 0x03 || base == 0x0b || base == 0x12 ||
	       p->pci_class == 0x0c06;
}

static void print_pci(FILE *f, const struct xp_pci *p, const char *indent)
{
	const char *cls = xp_pci_class_name((unsigned)p->pci_class);
	fprintf(f, "%sPCI %s %s [%s]", indent, p->bus_id, cls ? cls : "PCI device",
		p->pci_id ? p->pci_id : "?");
	if (p->name)
		fprintf(f, " %s", p->name);
	if (p->accel >= 0)
		fprintf(f, "  => ACC%d", p->accel);
	for (size_t i = 0; i < p->n_os_devices; i++)
		fprintf(f, "%s%s", i ? "," : "  (", p->os_devices[i]);
	if (p->n_os_devices)
		fputc(')', f);
	fputc('\n', f);
}

static void print_pci_in(FILE *f, const struct xp_node *n, int numa, bool all, const char *indent)
{
	for (size_t i = 0; i < n->n_pci; i++)
		if (n->pci[i].numa == numa && (all || interesting(&n->pci[i])))
			print_pci(f, &n->pci[i], indent);
}

static void print_numa(FILE *f, const struct xp_node *n, const struct xp_numa *m, bool all,
		       const char *indent)
{
	char mem[32], sub[32];
	fprintf(f, "%sNUMA %d: %s, cpus %s\n", indent, m->id, xp_fmt_mib(mem, sizeof mem, m->memory_mib),
		m->cpus && *m->cpus ? m->cpus : "none");
	snprintf(sub, sizeof sub, "%s  ", indent);
	print_pci_in(f, n, m->id, all, sub);
}

static const char *const legend[] = {
	"  X    = Self",
	"  NV#  = Connection traversing a bonded set of # NVLinks",
	"  PIX  = Connection traversing at most a single PCIe bridge",
	"  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)",
	"  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)",
	"  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node",
	"  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)",
	NULL,
};

static void print_links(FILE *f, const struct xp_node *n)
{
	size_t k = n->n_devices;
	fprintf(f, "\nAccelerator links:\n");
	if (!k) {
		fprintf(f, "  none (no accelerators)\n");
		return;
	}
	struct xp_table t;
	xp_table_init(&t, k + 3);
	/* Cells live in one buffer of fixed-size slots: names, link spellings and numbers are short. */
	char (*buf)[48] = xp_calloc(k + 3, sizeof *buf);
	const char **row = xp_calloc(k + 3, sizeof *row);
	for (size_t j = 0; j < k + 3; j++)
		row[j] = buf[j];
	for (size_t j = 0; j < k; j++)
		snprintf(buf[j + 1], sizeof buf[0], "ACC%zu", j);
	row[k + 1] = "NUMA";
	row[k + 2] = "AFFINITY";
	xp_table_rowv(&t, row);
	for (size_t r = 0; r < k; r++) {
		const struct xp_device *d = &n->devices[r];
		snprintf(buf[0], sizeof buf[0], "ACC%zu", r);
		for (size_t j = 0; j < k; j++)
			xp_link_str(*xp_node_link(n, r, j), buf[j + 1], sizeof buf[0]);
		row[k + 1] = xp_fmt_int(buf[k + 1], sizeof buf[0], d->numa);
		row[k + 2] = d->affinity_group;
		xp_table_rowv(&t, row);
	}
	free(row);
	free(buf);
	xp_table_print(&t, f, "  ");
	xp_table_free(&t);
	fprintf(f, "\nLegend:\n");
	for (int i = 0; legend[i]; i++)
		fprintf(f, "%s\n", legend[i]);
}

static void print_tree(FILE *f, const struct xp_node *n, bool all)
{
	char mem[32];
	fprintf(f, "Machine %s: %d package%s, %d cores, %d PUs, %s\n", n->name, n->packages_n,
		n->packages_n == 1 ? "" : "s", n->cores, n->pus, xp_fmt_mib(mem, sizeof mem, n->memory_mib));
	for (size_t p = 0; p < n->n_packages; p++) {
		const struct xp_package *pk = &n->packages[p];
		fprintf(f, "  Package %d: %s%s%d cores, %d PUs, cpus %s\n", pk->id, pk->model ? pk->model : "",
			pk->model ? ", " : "", pk->cores, pk->pus, pk->cpus ? pk->cpus : "none");
		for (size_t m = 0; m < n->n_numa; m++)
			if (n->numa[m].package == pk->id)
				print_numa(f, n, &n->numa[m], all, "    ");
	}
	/* NUMA domains that no single package holds (memory-only nodes, or no packages known). */
	for (size_t m = 0; m < n->n_numa; m++)
		if (n->numa[m].package < 0 || n->n_packages == 0)
			print_numa(f, n, &n->numa[m], all, "  ");
	bool any = false;
	for (size_t i = 0; i < n->n_pci; i++) {
		const struct xp_pci *p = &n->pci[i];
		bool orphan = p->numa < 0 || !xp_node_numa_by_id(n, p->numa);
		if (!orphan || !(all || interesting(p)))
			continue;
		if (!any)
			fprintf(f, "  Not local to one NUMA domain:\n");
		any = true;
		print_pci(f, p, "    ");
	}
	print_links(f, n);
}

static json_t *jint_or_null(long long v)
{
	return v < 0 ? json_null() : json_integer(v);
}

static json_t *pci_json(const struct xp_pci *p)
{
	char cls[8];
	snprintf(cls, sizeof cls, "%04x", (unsigned)p->pci_class & 0xffff);
	json_t *os = json_array();
	for (size_t i = 0; i < p->n_os_devices; i++)
		json_array_append_new(os, json_string(p->os_devices[i]));
	return json_pack("{s:s, s:s?, s:s, s:s?, s:s?, s:o, s:o}", "bus_id", p->bus_id, "pci_id",
			 p->pci_id, "class", cls, "class_name", xp_pci_class_name((unsigned)p->pci_class),
			 "name", p->name, "accelerator", jint_or_null(p->accel), "os_devices", os);
}

static json_t *pci_list_json(const struct xp_node *n, int numa, bool orphans, bool all)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n->n_pci; i++) {
		const struct xp_pci *p = &n->pci[i];
		bool orphan = p->numa < 0 || !xp_node_numa_by_id(n, p->numa);
		if ((orphans ? orphan : p->numa == numa) && (all || interesting(p)))
			json_array_append_new(a, pci_json(p));
	}
	return a;
}

static json_t *numa_json(const struct xp_node *n, const struct xp_numa *m, bool all)
{
	return json_pack("{s:i, s:o, s:s?, s:o}", "id", m->id, "memory_mib", jint_or_null(m->memory_mib),
			 "cpus", m->cpus, "pci", pci_list_json(n, m->id, false, all));
}

static json_t *node_topo_json(const struct xp_node *n, bool all)
{
	json_t *pkgs = json_array();
	for (size_t p = 0; p < n->n_packages; p++) {
		const struct xp_package *pk = &n->packages[p];
		json_t *numa = json_array();
		for (size_t m = 0; m < n->n_numa; m++)
			if (n->numa[m].package == pk->id)
				json_array_append_new(numa, numa_json(n, &n->numa[m], all));
		json_array_append_new(pkgs, json_pack("{s:i, s:s?, s:i, s:i, s:s?, s:o}", "id", pk->id,
						      "model", pk->model, "cores", pk->cores, "pus",
						      pk->pus, "cpus", pk->cpus, "numa", numa));
	}
	json_t *loose = json_array();
	for (size_t m = 0; m < n->n_numa; m++)
		if (n->numa[m].package < 0 || n->n_packages == 0)
			json_array_append_new(loose, numa_json(n, &n->numa[m], all));
	json_t *devs = json_array(), *links = json_array();
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct xp_device *d = &n->devices[i];
		json_t *row = json_array();
		for (size_t j = 0; j < n->n_devices; j++) {
			char buf[16];
			json_array_append_new(row, json_string(xp_link_str(*xp_node_link(n, i, j), buf, sizeof buf)));
		}
		json_array_append_new(links, row);
		json_array_append_new(devs, json_pack("{s:i, s:s?, s:o, s:s?}", "index", d->index,
						      "pci_bus_id", d->pci_bus_id, "numa",
						      jint_or_null(d->numa), "affinity_group",
						      d->affinity_group));
	}
	return json_pack("{s:s, s:I, s:o, s:o, s:o, s:o, s:o}", "name", n->name, "memory_mib",
			 (json_int_t)n->memory_mib, "packages", pkgs, "numa", loose, "pci",
			 pci_list_json(n, -1, true, all), "devices", devs, "links", links);
}

static int topo_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	struct xp_cluster *c = xp_ctx_cluster(ctx);
	if (!c)
		return XP_EXIT_ERROR;
	bool all = xp_args_has(a, "all");
	struct xp_node *one = NULL;
	if (a->argc == 1 && !(one = xp_cluster_node(c, a->argv[0]))) {
		xp_ctx_error(ctx, "topo: no node named %s", a->argv[0]);
		return XP_EXIT_ERROR;
	}
	if (ctx->json) {
		json_t *nodes = json_array();
		for (size_t i = 0; i < c->n_nodes; i++)
			if (!one || c->nodes[i] == one)
				json_array_append_new(nodes, node_topo_json(c->nodes[i], all));
		json_t *doc = json_pack("{s:s, s:o}", "schema", "xpool.topology/v1", "nodes", nodes);
		json_dumpf(doc, ctx->out, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
		fputc('\n', ctx->out);
		json_decref(doc);
		return XP_EXIT_OK;
	}
	for (size_t i = 0; i < c->n_nodes; i++) {
		if (one && c->nodes[i] != one)
			continue;
		if (i && !one)
			fputc('\n', ctx->out);
		print_tree(ctx->out, c->nodes[i], all);
	}
	return XP_EXIT_OK;
}

const struct xp_cmd_entry xp_cmd_topo_entry = {
	.name = "topo",
	.alias = NULL,
	.usage = "[--json] [--all] [NODE]",
	.summary = "show the topology tree and the accelerator link matrix",
	.opts = topo_opts,
	.min_args = 0,
	.max_args = 1,
	.exec = topo_exec,
};
