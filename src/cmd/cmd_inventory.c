/* cmd_inventory.c: `xpool inventory [--json] [--processes] [--filter EXPR] [NODE...]`: what the cluster has. */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "format.h"
#include "model_json.h"
#include "node_filter.h"
#include "table.h"

static const struct xp_opt inventory_opts[] = {
	{"processes", 0, NULL, "list the processes using each device (pid, user, type, memory, utilization, command)", NULL},
	XP_NODE_FILTER_OPT,
	{NULL, 0, NULL, NULL},
};

/* One line per process of the nodes' devices; "-" for what the vendor does not say. Devices that
 * list no processes are counted apart from those whose vendor tool does not list them. */
static void print_processes(FILE *f, struct xp_node *const *nodes, size_t k)
{
	struct xp_table t;
	xp_table_init(&t, 8);
	xp_table_row(&t, "NODE", "ACC", "PID", "USER", "TYPE", "MEMORY", "UTIL", "COMMAND");
	size_t procs = 0, idle = 0, unknown = 0;
	for (size_t i = 0; i < k; i++) {
		const struct xp_node *n = nodes[i];
		for (size_t j = 0; j < n->n_devices; j++) {
			const struct xp_device *d = &n->devices[j];
			if (!d->procs_known) {
				unknown++;
				continue;
			}
			idle += d->n_procs == 0;
			for (size_t q = 0; q < d->n_procs; q++) {
				const struct xp_proc *p = &d->procs[q];
				char acc[16], pid[24], mem[32], util[16];
				snprintf(acc, sizeof acc, "%d", d->index);
				xp_fmt_int(pid, sizeof pid, p->pid);
				if (XP_HAS(p->util_pct))
					snprintf(util, sizeof util, "%.0f%%", p->util_pct);
				else
					snprintf(util, sizeof util, "-");
				xp_table_row(&t, n->name, acc, pid, p->user ? p->user : "-", p->type[0] ? p->type : "-",
					     xp_fmt_mib(mem, sizeof mem, p->memory_mib), util, p->command ? p->command : "-");
				procs++;
			}
		}
	}
	if (procs)
		xp_table_print(&t, f, "");
	xp_table_free(&t);
	fprintf(f, "%zu process%s; %zu device%s with none; %zu device%s not reporting processes\n", procs,
		procs == 1 ? "" : "es", idle, idle == 1 ? "" : "s", unknown, unknown == 1 ? "" : "s");
}

static void print_node(FILE *f, const struct xp_node *n)
{
	char mem[32];
	fprintf(f, "%s  %s  %s\n", n->name, xp_node_state_name(n->state), n->source ? n->source : "");
	if (n->pus == 0 && n->n_numa == 0) {
		/* A replay without hwloc.xml, or a snapshot from a tool that knows only devices. */
		fprintf(f, "  CPU     not known (no topology)\n");
	} else {
		char pk[16], co[16], pu[16]; /* 0: not known, "-" */
		fprintf(f, "  CPU     %s package%s, %s cores, %s PUs",
			xp_fmt_int(pk, sizeof pk, n->packages_n > 0 ? n->packages_n : -1), n->packages_n == 1 ? "" : "s",
			xp_fmt_int(co, sizeof co, n->cores > 0 ? n->cores : -1),
			xp_fmt_int(pu, sizeof pu, n->pus > 0 ? n->pus : -1));
		if (n->pus_allowed > 0 && n->pus_allowed != n->pus)
			fprintf(f, " (%d allowed)", n->pus_allowed);
		if (n->cpu_model)
			fprintf(f, "  %s", n->cpu_model);
		fprintf(f, "\n");
	}
	fprintf(f, "  Memory  %s\n", n->memory_mib >= 0 ? xp_fmt_mib(mem, sizeof mem, n->memory_mib) : "not known");
	for (size_t i = 0; i < n->n_numa; i++)
		fprintf(f, "  %s  %d: %s, cpus %s\n", i ? "      " : "NUMA  ", n->numa[i].id,
			xp_fmt_mib(mem, sizeof mem, n->numa[i].memory_mib),
			n->numa[i].cpus && *n->numa[i].cpus ? n->numa[i].cpus : "none");
	for (size_t i = 0; i < n->n_nics; i++) {
		const struct xp_nic *c = &n->nics[i];
		char numa[16];
		fprintf(f, "  %s  %s", i ? "      " : "NICs  ", c->name ? c->name : "?");
		if (c->rdma && (!c->name || strcmp(c->rdma, c->name) != 0))
			fprintf(f, " (RDMA %s)", c->rdma);
		else if (c->rdma)
			fprintf(f, " (RDMA)");
		fprintf(f, "  %s  NUMA %s\n", c->pci_bus_id ? c->pci_bus_id : "virtual",
			xp_fmt_int(numa, sizeof numa, c->numa));
	}
	fprintf(f, "  Accelerators: %zu\n", n->n_devices);
	if (!n->n_devices)
		return;
	struct xp_table t;
	xp_table_init(&t, 10);
	xp_table_row(&t, "IDX", "VENDOR", "MODEL", "BUS ID", "PCI ID", "NUMA", "MEMORY", "DRIVER", "HEALTH", "ECU");
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct xp_device *d = &n->devices[i];
		char idx[16], numa[16], ecu[32];
		snprintf(idx, sizeof idx, "%d", d->index);
		if (XP_HAS(d->ecu))
			snprintf(ecu, sizeof ecu, "%.0f", d->ecu);
		xp_table_row(&t, idx, d->vendor, d->model, d->pci_bus_id, d->pci_id,
			     xp_fmt_int(numa, sizeof numa, d->numa),
			     d->memory_mib >= 0 ? xp_fmt_mib(mem, sizeof mem, d->memory_mib) : NULL, d->driver,
			     d->health == XP_HEALTH_UNKNOWN ? NULL : xp_health_name(d->health),
			     XP_HAS(d->ecu) ? ecu : NULL);
	}
	xp_table_print(&t, f, "    ");
	xp_table_free(&t);
	/* What the numbers rest on, once per node: ECU basis, health reasons, warnings. */
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct xp_device *d = &n->devices[i];
		if (d->ecu_basis && (i == 0 || !n->devices[i - 1].ecu_basis ||
				     strcmp(d->ecu_basis, n->devices[i - 1].ecu_basis) != 0))
			fprintf(f, "    ECU of ACC%d: %s\n", d->index, d->ecu_basis);
		for (size_t r = 0; r < d->n_health_reasons; r++)
			fprintf(f, "    ACC%d %s: %s\n", d->index, xp_health_name(d->health), d->health_reasons[r]);
	}
	for (size_t i = 0; i < n->n_warnings; i++)
		fprintf(f, "  warning: %s\n", n->warnings[i]);
}

/* The accelerator models of a node from its devices (labels may be absent in a
 * snapshot): the model when all agree, else how many different ones. */
static const char *models_of(const struct xp_node *n, char *buf, size_t len)
{
	if (!n->n_devices)
		return NULL;
	size_t kinds = 0;
	for (size_t i = 0; i < n->n_devices; i++) {
		const char *m = n->devices[i].model ? n->devices[i].model : "?";
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(m, n->devices[j].model ? n->devices[j].model : "?") == 0;
		kinds += !seen;
	}
	if (kinds == 1)
		snprintf(buf, len, "%s", n->devices[0].model ? n->devices[0].model : "?");
	else
		snprintf(buf, len, "mixed (%zu models)", kinds);
	return buf;
}

/* One line per node: what an operator scans on a large cluster. */
static void print_summary(FILE *f, struct xp_node *const *nodes, size_t k)
{
	struct xp_table t;
	xp_table_init(&t, 7);
	xp_table_row(&t, "NODE", "STATE", "CORES/PUS", "MEMORY", "NUMA", "ACCEL", "MODELS");
	size_t devs = 0;
	for (size_t i = 0; i < k; i++) {
		const struct xp_node *n = nodes[i];
		char cpus[48], cb[16], pb[16], mem[32], numa[16], acc[16];
		/* 0 is "not known" (no topology: an agent's or a device-only snapshot's node), shown
		 * as "-" like every unknown value, never as a count of none. */
		if (n->cores > 0 || n->pus > 0)
			snprintf(cpus, sizeof cpus, "%s/%s", xp_fmt_int(cb, sizeof cb, n->cores > 0 ? n->cores : -1),
				 xp_fmt_int(pb, sizeof pb, n->pus > 0 ? n->pus : -1));
		else
			snprintf(cpus, sizeof cpus, "-");
		xp_fmt_int(numa, sizeof numa, n->n_numa ? (long long)n->n_numa : -1);
		snprintf(acc, sizeof acc, "%zu", n->n_devices);
		char models[256];
		xp_table_row(&t, n->name, xp_node_state_name(n->state), cpus,
			     xp_fmt_mib(mem, sizeof mem, n->memory_mib), numa, acc,
			     models_of(n, models, sizeof models));
		devs += n->n_devices;
	}
	xp_table_print(&t, f, "");
	xp_table_free(&t);
	fprintf(f, "%zu node%s, %zu accelerator%s\n", k, k == 1 ? "" : "s", devs, devs == 1 ? "" : "s");
}

static int inventory_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	/* A bad expression is a usage error found before any discovery. */
	struct xp_filter *f;
	if (xp_node_filter_compile(ctx, a, "inventory", &f) < 0)
		return XP_EXIT_USAGE;
	struct xp_cluster *c = xp_ctx_cluster(ctx);
	if (!c) {
		xp_filter_free(f);
		return XP_EXIT_ERROR;
	}
	struct xp_node **sel = c->nodes;
	size_t k = c->n_nodes;
	struct xp_node **picked = NULL;
	if (a->argc) {
		picked = xp_calloc((size_t)a->argc, sizeof *picked);
		k = 0;
		for (int i = 0; i < a->argc; i++) {
			struct xp_node *n = xp_cluster_node(c, a->argv[i]);
			if (!n) {
				xp_ctx_error(ctx, "inventory: no node named %s", a->argv[i]);
				free(picked);
				xp_filter_free(f);
				return XP_EXIT_ERROR;
			}
			/* Naming a node twice shows it once: a snapshot must not hold duplicates. */
			bool dup = false;
			for (size_t j = 0; j < k && !dup; j++)
				dup = picked[j] == n;
			if (!dup)
				picked[k++] = n;
		}
		sel = picked;
	}
	if (f) {
		/* Named nodes and the expression: the nodes named that it matches. */
		struct xp_node **kept = xp_calloc(k ? k : 1, sizeof *kept);
		size_t m = 0;
		for (size_t i = 0; i < k; i++)
			if (xp_node_filter_match(f, sel[i]))
				kept[m++] = sel[i];
		free(picked);
		sel = picked = kept;
		k = m;
	}
	int rc = XP_EXIT_OK;
	if (ctx->json) {
		/* A view over the chosen nodes: the cluster keeps ownership. */
		struct xp_cluster view = {.generation = c->generation, .nodes = sel, .n_nodes = k};
		struct xp_err err = {{0}};
		if (xp_cluster_write(&view, ctx->out, 1, &err) < 0) {
			xp_ctx_error(ctx, "inventory: %s", err.msg);
			rc = XP_EXIT_ERROR;
		}
	} else if (xp_args_has(a, "processes")) {
		print_processes(ctx->out, sel, k);
	} else if (k == 1 && !f) {
		print_node(ctx->out, sel[0]);
	} else {
		print_summary(ctx->out, sel, k);
	}
	free(picked);
	xp_filter_free(f);
	return rc;
}

const struct xp_cmd_entry xp_cmd_inventory_entry = {
	.name = "inventory",
	.alias = "inv",
	.usage = "[--json] [--processes] [--filter EXPR] [NODE...]",
	.summary = "show nodes: CPUs, NUMA, memory, NICs and accelerators",
	.opts = inventory_opts,
	.min_args = 0,
	.max_args = -1,
	.exec = inventory_exec,
	.json = true,
};
