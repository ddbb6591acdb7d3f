/* cmd_topo.c: `xpool topo [--json] [--all] [NODE]`: an lstopo-like tree
 * (machine, packages, NUMA domains, PCI functions) and the accelerator link
 * matrix in the layout of `nvidia-smi topo -m`. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "format.h"
#include "model_json.h"
#include "table.h"

#include "pci_class.h"

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

/* A NUMA domain no listed package holds (memory-only domains, inconsistent snapshots):
 * shown at machine level rather than lost. */
static bool numa_loose(const struct xp_node *n, const struct xp_numa *m)
{
	if (m->package < 0)
		return true;
	for (size_t p = 0; p < n->n_packages; p++)
		if (n->packages[p].id == m->package)
			return false;
	return true;
}

/* A PCI function local to no listed NUMA domain. */
static bool pci_orphan(const struct xp_node *n, const struct xp_pci *p)
{
	return p->numa < 0 || !xp_node_numa_by_id(n, p->numa);
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
	char mem[32], pks[16], co[16], pu[16];
	if (n->pus == 0 && n->n_numa == 0)
		fprintf(f, "Machine %s: topology not known (no hwloc topology for it)\n", n->name);
	else
		fprintf(f, "Machine %s: %s package%s, %s cores, %s PUs, %s\n", n->name, /* 0: not known, "-" */
			xp_fmt_int(pks, sizeof pks, n->packages_n > 0 ? n->packages_n : -1), n->packages_n == 1 ? "" : "s",
			xp_fmt_int(co, sizeof co, n->cores > 0 ? n->cores : -1),
			xp_fmt_int(pu, sizeof pu, n->pus > 0 ? n->pus : -1), xp_fmt_mib(mem, sizeof mem, n->memory_mib));
	for (size_t p = 0; p < n->n_packages; p++) {
		const struct xp_package *pk = &n->packages[p];
		fprintf(f, "  Package %d: %s%s%d cores, %d PUs, cpus %s\n", pk->id, pk->model ? pk->model : "",
			pk->model ? ", " : "", pk->cores, pk->pus, pk->cpus ? pk->cpus : "none");
		for (size_t m = 0; m < n->n_numa; m++)
			if (!numa_loose(n, &n->numa[m]) && n->numa[m].package == pk->id)
				print_numa(f, n, &n->numa[m], all, "    ");
	}
	for (size_t m = 0; m < n->n_numa; m++)
		if (numa_loose(n, &n->numa[m]))
			print_numa(f, n, &n->numa[m], all, "  ");
	bool any = false;
	for (size_t i = 0; i < n->n_pci; i++) {
		const struct xp_pci *p = &n->pci[i];
		if (!pci_orphan(n, p) || !(all || interesting(p)))
			continue;
		if (!any)
			fprintf(f, "  Not local to one NUMA domain:\n");
		any = true;
		print_pci(f, p, "    ");
	}
	print_links(f, n);
}

/* JSON built key by key with the model's safe helpers: json_pack would return NULL
 * on a string that is not UTF-8 and the node would silently vanish. */
static void put(json_t *o, const char *key, json_t *v)
{
	json_object_set_new(o, key, v);
}

static json_t *pci_json(const struct xp_pci *p)
{
	json_t *o = json_object(), *os = json_array();
	for (size_t i = 0; i < p->n_os_devices; i++)
		json_array_append_new(os, xp_json_str(p->os_devices[i]));
	put(o, "bus_id", xp_json_str(p->bus_id));
	put(o, "pci_id", xp_json_str(p->pci_id));
	put(o, "class", xp_json_class(p->pci_class));
	put(o, "class_name", xp_json_str(p->pci_class >= 0 ? xp_pci_class_name((unsigned)p->pci_class) : NULL));
	put(o, "name", xp_json_str(p->name));
	put(o, "accelerator", xp_json_int(p->accel));
	put(o, "os_devices", os);
	return o;
}

static json_t *pci_list_json(const struct xp_node *n, int numa, bool orphans, bool all)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n->n_pci; i++) {
		const struct xp_pci *p = &n->pci[i];
		if ((orphans ? pci_orphan(n, p) : p->numa == numa) && (all || interesting(p)))
			json_array_append_new(a, pci_json(p));
	}
	return a;
}

static json_t *numa_json(const struct xp_node *n, const struct xp_numa *m, bool all)
{
	json_t *o = json_object();
	put(o, "id", json_integer(m->id));
	put(o, "memory_mib", xp_json_int(m->memory_mib));
	put(o, "cpus", xp_json_str(m->cpus));
	put(o, "pci", pci_list_json(n, m->id, false, all));
	return o;
}

static json_t *node_topo_json(const struct xp_node *n, bool all)
{
	json_t *pkgs = json_array();
	for (size_t p = 0; p < n->n_packages; p++) {
		const struct xp_package *pk = &n->packages[p];
		json_t *numa = json_array();
		for (size_t m = 0; m < n->n_numa; m++)
			if (!numa_loose(n, &n->numa[m]) && n->numa[m].package == pk->id)
				json_array_append_new(numa, numa_json(n, &n->numa[m], all));
		json_t *o = json_object();
		put(o, "id", json_integer(pk->id));
		put(o, "model", xp_json_str(pk->model));
		put(o, "cores", json_integer(pk->cores));
		put(o, "pus", json_integer(pk->pus));
		put(o, "cpus", xp_json_str(pk->cpus));
		put(o, "numa", numa);
		json_array_append_new(pkgs, o);
	}
	json_t *loose = json_array();
	for (size_t m = 0; m < n->n_numa; m++)
		if (numa_loose(n, &n->numa[m]))
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
		json_t *o = json_object();
		put(o, "index", json_integer(d->index));
		put(o, "pci_bus_id", xp_json_str(d->pci_bus_id));
		put(o, "numa", xp_json_int(d->numa));
		put(o, "affinity_group", xp_json_str(d->affinity_group));
		json_array_append_new(devs, o);
	}
	json_t *o = json_object();
	put(o, "name", xp_json_str(n->name));
	put(o, "memory_mib", xp_json_int(n->memory_mib));
	put(o, "packages", pkgs);
	put(o, "numa", loose);
	put(o, "pci", pci_list_json(n, -1, true, all));
	put(o, "devices", devs);
	put(o, "links", links);
	return o;
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
		json_t *doc = json_object();
		put(doc, "schema", json_string("xpool.topology/v1"));
		put(doc, "nodes", nodes);
		int w = json_dumpf(doc, ctx->out, JSON_INDENT(2));
		json_decref(doc);
		if (w < 0 || fputc('\n', ctx->out) == EOF) {
			xp_ctx_error(ctx, "topo: writing output failed");
			return XP_EXIT_ERROR;
		}
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
	.json = true,
};
