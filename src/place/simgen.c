/* simgen.c: synthetic clusters built the way discovery builds real nodes (see simgen.h). */
#include "simgen.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest_path.h"
#include "model_json.h"
#include "normalize.h"
#include "pci_ids.h"

/* ---- random numbers ---- */

void xp_rng_seed(struct xp_rng *r, uint64_t seed)
{
	r->s = seed;
}

uint64_t xp_rng_next(struct xp_rng *r)
{
	/* splitmix64 (Steele, Lea, Flood 2014): one add and a bijective mix per output. */
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

uint64_t xp_rng_below(struct xp_rng *r, uint64_t n)
{
	if (n == 0)
		return 0;
	/* Rejection keeps small ranges exactly uniform; it almost never loops. */
	uint64_t limit = UINT64_MAX - UINT64_MAX % n;
	uint64_t x;
	do
		x = xp_rng_next(r);
	while (x >= limit);
	return x % n;
}

double xp_rng_unit(struct xp_rng *r)
{
	return (double)(xp_rng_next(r) >> 11) * 0x1.0p-53;
}

/* A uniform real in [lo, hi), rounded to tenths so that the JSON stays short and exact. */
static double uniform1(struct xp_rng *r, double lo, double hi)
{
	return round((lo + (hi - lo) * xp_rng_unit(r)) * 10) / 10;
}

/* An independent stream per (seed, what, index): a node's draws never depend on another's. */
static void rng_for(struct xp_rng *r, uint64_t seed, uint64_t what, uint64_t index)
{
	struct xp_rng m = {seed ^ (what * 0xD1B54A32D192ED03ULL)};
	m.s ^= xp_rng_next(&m) + index * 0x8CB92BA72F3D8DD7ULL;
	xp_rng_seed(r, xp_rng_next(&m));
}

/* ---- node kinds ---- */

/* Servers as sold: bus ids from vendor boards and recorded tool outputs (the 910A and MI100
 * ones from tests/fixtures), drivers within each manifest's supported range. The NVLink
 * counts are the boards': 18 links per H100 SXM5, 8 on the export-limited H800, 12 on A100. */
static const struct xp_sim_kind kinds[] = {
	{"nvidia-h100", "nvidia", "H100 SXM 80GB", "NVIDIA H100 80GB HBM3", "h100", 0x10de, 0x2330, 0x0302, 8,
	 18, false,
	 {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0", "0000:9a:00.0", "0000:ab:00.0",
	  "0000:ba:00.0", "0000:db:00.0"},
	 700, 72, {"535.183.01", "550.90.07", "560.35.03"}, {"CUDA 12.2", "CUDA 12.4", "CUDA 12.6"},
	 "96.00.74.00.1C", "Intel(R) Xeon(R) Platinum 8480+", "x86_64", 56, 2, 2097152, 400000, 98.3, 0.25},
	{"nvidia-h800", "nvidia", "H800", "NVIDIA H800", "h800", 0x10de, 0x2324, 0x0302, 8, 8, false,
	 {"0000:19:00.0", "0000:3b:00.0", "0000:4c:00.0", "0000:5e:00.0", "0000:9b:00.0", "0000:bb:00.0",
	  "0000:cb:00.0", "0000:dc:00.0"},
	 700, 70, {"525.105.17", "535.161.08", "550.54.15"}, {"CUDA 12.0", "CUDA 12.2", "CUDA 12.4"},
	 "96.00.5E.00.03", "Intel(R) Xeon(R) Platinum 8468", "x86_64", 48, 2, 2097152, 400000, 72.0, 0.0},
	{"nvidia-a100", "nvidia", "A100 80GB", "NVIDIA A100-SXM4-80GB", "a100", 0x10de, 0x20b2, 0x0302, 8, 12,
	 false,
	 {"0000:07:00.0", "0000:0f:00.0", "0000:47:00.0", "0000:4e:00.0", "0000:87:00.0", "0000:90:00.0",
	  "0000:b7:00.0", "0000:bd:00.0"},
	 400, 60, {"470.223.02", "535.183.01", "550.90.07"}, {"CUDA 11.4", "CUDA 12.2", "CUDA 12.4"},
	 "92.00.45.00.06", "AMD EPYC 7742 64-Core Processor", "x86_64", 64, 2, 1048576, 200000, 41.0, 0.35},
	{"ascend-910a", "ascend", "Ascend 910A", "Ascend 910A", "a910", 0x19e5, 0xd801, 0x1200, 8, 0, false,
	 {"0000:c1:00.0", "0000:81:00.0", "0000:41:00.0", "0000:01:00.0", "0000:c2:00.0", "0000:82:00.0",
	  "0000:42:00.0", "0000:02:00.0"},
	 310, 70, {"22.0.4", "23.0.3", "24.1.RC2"}, {"CANN 6.0.1", "CANN 7.0.0", "CANN 8.0.RC2"}, "1.84.15.1.310",
	 "Kunpeng-920", "aarch64", 64, 1, 786432, 100000, 22.0, 0.2},
	{"amd-mi300x", "amd", "AMD Instinct MI300X", "AMD Instinct MI300X", "mi300x", 0x1002, 0x74a1, 0x1200,
	 8, 0, true,
	 {"0000:05:00.0", "0000:26:00.0", "0000:46:00.0", "0000:65:00.0", "0000:85:00.0", "0000:a6:00.0",
	  "0000:c6:00.0", "0000:e5:00.0"},
	 750, 140, {"6.7.0", "6.8.5", "6.10.5"}, {"ROCm 6.1.2", "ROCm 6.2.4", "ROCm 6.3.1"}, "113-M3000100-102",
	 "AMD EPYC 9654 96-Core Processor", "x86_64", 96, 2, 2359296, 400000, 48.0, 0.0},
	{"amd-mi100", "amd", "AMD Instinct MI100", "Arcturus GL-XL [Instinct MI100]", "mi100", 0x1002, 0x738c,
	 0x0380, 4, 0, true, {"0000:83:00.0", "0000:a3:00.0", "0000:c3:00.0", "0000:e3:00.0"},
	 300, 38, {"6.3.6", "6.7.0", "6.8.5"}, {"ROCm 6.0.2", "ROCm 6.1.2", "ROCm 6.2.4"}, "113-D3431401-101",
	 "AMD EPYC 7543 32-Core Processor", "x86_64", 32, 2, 524288, 200000, 12.0, 0.0},
	{"cpu", NULL, NULL, NULL, "cpu", 0, 0, 0, 0, 0, false, {NULL}, 0, 0, {NULL}, {NULL}, NULL,
	 "AMD EPYC 9554 64-Core Processor", "x86_64", 64, 2, 786432, 0, 4.6, 0.0},
};
#define KIND_COUNT (sizeof kinds / sizeof kinds[0])

const struct xp_sim_kind *xp_sim_kinds(size_t *n)
{
	*n = KIND_COUNT;
	return kinds;
}

const struct xp_sim_kind *xp_sim_kind_find(const char *name)
{
	for (size_t i = 0; i < KIND_COUNT; i++)
		if (strcmp(kinds[i].name, name) == 0)
			return &kinds[i];
	return NULL;
}

static void kind_names(char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < KIND_COUNT && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", kinds[i].name);
}

/* ---- options ---- */

int xp_sim_mix_parse(const char *spec, struct xp_sim_mix *mix, struct xp_err *err)
{
	memset(mix, 0, sizeof *mix);
	if (!spec || !*spec)
		return xp_errf(err, "--mix is empty; give KIND:PERCENT,... (for example %s)", XP_SIM_DEFAULT_MIX);
	char *copy = xp_strdup(spec);
	int rc = 0, sum = 0;
	char *item = copy;
	/* strtok_r would skip empty items; an empty item is a typo worth naming. */
	for (char *next; item && rc == 0; item = next) {
		next = strchr(item, ',');
		if (next)
			*next++ = '\0';
		while (isspace((unsigned char)*item))
			item++;
		size_t n = strlen(item);
		while (n && isspace((unsigned char)item[n - 1]))
			item[--n] = '\0';
		if (!n) {
			rc = xp_errf(err, "--mix '%s': empty entry; give KIND:PERCENT,...", spec);
			break;
		}
		char *colon = strchr(item, ':');
		if (!colon) {
			rc = xp_errf(err, "--mix: '%s' is not KIND:PERCENT", item);
			break;
		}
		*colon = '\0';
		const char *pct = colon + 1;
		const struct xp_sim_kind *k = xp_sim_kind_find(item);
		if (!k) {
			char names[512];
			kind_names(names, sizeof names);
			rc = xp_errf(err, "--mix: unknown node kind '%s'; known kinds: %s", item, names);
			break;
		}
		for (size_t i = 0; i < mix->n; i++)
			if (mix->kind[i] == k)
				rc = xp_errf(err, "--mix: node kind '%s' given twice", item);
		if (rc)
			break;
		char *end;
		errno = 0;
		long v = strtol(pct, &end, 10);
		if (!*pct || !isdigit((unsigned char)*pct) || *end || errno || v > 100) {
			rc = xp_errf(err, "--mix: '%s:%s': the percentage must be a whole number from 0 to 100", item,
				     pct);
			break;
		}
		if (mix->n >= XP_SIM_MAX_MIX) {
			rc = xp_errf(err, "--mix: more than %d entries", XP_SIM_MAX_MIX);
			break;
		}
		mix->kind[mix->n] = k;
		mix->pct[mix->n++] = (int)v;
		sum += (int)v;
	}
	free(copy);
	if (rc == 0 && sum != 100)
		rc = xp_errf(err, "--mix: the percentages add up to %d, not 100", sum);
	if (rc)
		memset(mix, 0, sizeof *mix);
	return rc;
}

void xp_sim_mix_counts(const struct xp_sim_mix *mix, size_t nodes, size_t *counts)
{
	size_t given = 0;
	int rem[XP_SIM_MAX_MIX];
	for (size_t i = 0; i < mix->n; i++) {
		counts[i] = nodes / 100 * (size_t)mix->pct[i] + nodes % 100 * (size_t)mix->pct[i] / 100;
		rem[i] = (int)(nodes % 100 * (size_t)mix->pct[i] % 100);
		given += counts[i];
	}
	/* Largest remainder (Hamilton): the nodes left go to the largest fractions, ties to the
	 * kind named first, so every count is within one of its exact share. */
	while (given < nodes) {
		size_t best = 0;
		for (size_t i = 1; i < mix->n; i++)
			if (rem[i] > rem[best])
				best = i;
		counts[best]++;
		rem[best] = -1;
		given++;
	}
}

int xp_sim_parse_nodes(const char *s, size_t *out, struct xp_err *err)
{
	char *end;
	errno = 0;
	long long v = s ? strtoll(s, &end, 10) : 0;
	if (!s || !*s || *end || errno == EINVAL || (!isdigit((unsigned char)*s) && *s != '-' && *s != '+'))
		return xp_errf(err, "--nodes needs a whole number, not '%s'", s ? s : "");
	if (errno == ERANGE || v < 1 || v > XP_SIM_MAX_NODES)
		return xp_errf(err, "--nodes must be from 1 to %d, not %s", XP_SIM_MAX_NODES, s);
	*out = (size_t)v;
	return 0;
}

int xp_sim_parse_seed(const char *s, uint64_t *out, struct xp_err *err)
{
	char *end;
	errno = 0;
	/* strtoull would quietly wrap "-1" around; a seed is never negative. */
	/* Base 10 unless 0x: base 0 would read "010" as octal 8. */
	bool hex = s && (strncmp(s, "0x", 2) == 0 || strncmp(s, "0X", 2) == 0);
	unsigned long long v = s && isdigit((unsigned char)*s) ? strtoull(s, &end, hex ? 16 : 10) : 0;
	if (!s || !isdigit((unsigned char)*s) || *end || errno)
		return xp_errf(err, "--seed needs a number from 0 to %llu, not '%s'", (unsigned long long)UINT64_MAX,
			       s ? s : "");
	*out = (uint64_t)v;
	return 0;
}

/* ---- generation ---- */

/* Jobs as their names read in a queue: big runs take whole nodes, the rest share. */
static const char *const node_jobs[] = {"train-llama3-70b", "pretrain-gpt-175b", "train-mixtral-8x22b",
					"train-qwen2-72b"};
static const char *const group_jobs[] = {"finetune-llama3-8b", "infer-llama3-70b", "eval-mmlu",
					 "train-resnet50", "finetune-bert-large"};
static const char *const slice_jobs[] = {"infer-llama3-8b", "infer-sdxl", "notebook", "batch-embed", "ci-smoke"};
#define PICK(r, a) (a)[xp_rng_below((r), sizeof(a) / sizeof((a)[0]))]

/* Vendor words and reasons, as the tools phrase them. */
struct fault {
	const char *word, *reason;
};
static const struct fault nvidia_warn[] = {{"Warning", "XID 63: ECC page retirement or row remapping recorded"},
					   {"Warning", "XID 94: contained ECC error"},
					   {"Warning", "clocks throttled: HW slowdown"}};
static const struct fault nvidia_fail[] = {{"Critical", "XID 79: GPU has fallen off the bus"},
					   {"Critical", "XID 48: double bit ECC error"},
					   {"Critical", "XID 119: GSP RPC timeout"}};
static const struct fault ascend_warn[] = {{"Warning", "HBM single-bit ECC errors above threshold"},
					   {"Warning", "AI core frequency reduced"}};
static const struct fault ascend_fail[] = {{"Alarm", "HBM multi-bit ECC error"},
					   {"Alarm", "HCCS link down"}};
static const struct fault amd_warn[] = {{"Warning", "RAS: correctable ECC errors above threshold in UMC"},
					{"Warning", "XGMI link retraining"}};
static const struct fault amd_fail[] = {{"Critical", "RAS: uncorrectable ECC error in UMC"},
					{"Critical", "GPU hang: ring gfx timeout"}};

#define MAX_SLICES 4 /* slices one device holds here */
#define MAX_JOBS (XP_SIM_MAX_DEVICES * (MAX_SLICES + 1))

/* What one device gets: a whole job, slices for jobs, or nothing. */
struct dev_plan {
	int whole;            /* job slot, -1 when not allocated whole */
	int n_slices;
	int tmpl[MAX_SLICES]; /* template indices in the model */
	int job[MAX_SLICES];
	int health;           /* XP_HEALTH_OK, WARN or FAIL */
};

/* One kind as loaded: its manifest and model. */
struct loaded {
	const struct xp_sim_kind *k;
	const struct xp_manifest *m;
	const struct xp_mmodel *md;
	double temp_warn;     /* the threshold normalization applies, NAN when none */
	bool sliceable;       /* MIG or vNPU templates */
};

struct gen {
	uint64_t seed;
	struct xp_raw_node *raw; /* reused: it is large (links and slices of 64 devices) */
	uint64_t jobs;           /* jobs named so far */
	char jobname[MAX_JOBS][48];
	int n_jobs;          /* per node: at most MAX_SLICES per device, so MAX_JOBS is never reached */
	/* The whole-node job of the previous node, which the next one in its rack may continue. */
	char run_job[48];
	size_t run_rack, run_len;
};

static int new_job(struct gen *g, const char *base)
{
	snprintf(g->jobname[g->n_jobs], sizeof g->jobname[0], "%s-%06llu", base, (unsigned long long)++g->jobs);
	return g->n_jobs++;
}

/* Slices for one device: templates that fit what is left of its compute, memory and counts. */
static void plan_slices(struct xp_rng *r, const struct loaded *L, struct dev_plan *p, struct gen *g)
{
	const struct xp_mmodel *md = L->md;
	double compute = 0;
	int64_t mem = 0;
	int used[64] = {0};
	int want = 1 + (int)xp_rng_below(r, MAX_SLICES);
	while (p->n_slices < want) {
		int fit[64], nf = 0;
		for (size_t t = 0; t < md->n_templates && t < 64; t++) {
			const struct xp_mtemplate *tp = &md->templates[t];
			/* A template as large as the device is a whole allocation under another name. */
			if (tp->compute >= 1 - 1e-9 || used[t] >= tp->count || compute + tp->compute > 1 + 1e-9 ||
			    (md->memory_mib > 0 && tp->memory_mib > 0 && mem + tp->memory_mib > md->memory_mib))
				continue;
			fit[nf++] = (int)t;
		}
		if (!nf)
			break;
		int t = fit[xp_rng_below(r, (uint64_t)nf)];
		used[t]++;
		compute += md->templates[t].compute;
		mem += md->templates[t].memory_mib > 0 ? md->templates[t].memory_mib : 0;
		p->tmpl[p->n_slices] = t;
		p->job[p->n_slices++] = new_job(g, PICK(r, slice_jobs));
	}
}

/* Who uses what on one node. */
static void plan_node(struct xp_rng *r, const struct loaded *L, int state, size_t rack, struct dev_plan *plan,
		      struct gen *g)
{
	int n = L->k->devices;
	g->n_jobs = 0;
	bool any_fail = false;
	for (int i = 0; i < n; i++) {
		double u = xp_rng_unit(r);
		plan[i] = (struct dev_plan){.whole = -1,
					    .health = u < 0.004 ? XP_HEALTH_FAIL : u < 0.024 ? XP_HEALTH_WARN : XP_HEALTH_OK};
		any_fail |= plan[i].health == XP_HEALTH_FAIL;
	}
	/* A down node's jobs are gone; a failed device keeps the scheduler off it. */
	double u = xp_rng_unit(r);
	bool cont = g->run_len && g->run_rack == rack && g->run_len < 16 && xp_rng_unit(r) < 0.7;
	if (!n || state == XP_NODE_DOWN || u >= 0.75) {
		g->run_len = 0;
		return;
	}
	if (u < 0.45 && !any_fail && state == XP_NODE_UP) {
		/* Large training runs take whole nodes, several in a row under one switch. */
		int j;
		if (cont) {
			j = g->n_jobs++;
			memcpy(g->jobname[j], g->run_job, sizeof g->run_job);
			g->run_len++;
		} else {
			j = new_job(g, PICK(r, node_jobs));
			memcpy(g->run_job, g->jobname[j], sizeof g->run_job);
			g->run_rack = rack;
			g->run_len = 1;
		}
		for (int i = 0; i < n; i++)
			plan[i].whole = j;
		return;
	}
	g->run_len = 0;
	/* Partly busy: aligned groups of 1, 2 or 4 devices, each busy or not. */
	for (int i = 0; i < n;) {
		static const int sizes[] = {1, 2, 4};
		int gs;
		do
			gs = sizes[xp_rng_below(r, 3)];
		while (i % gs || i + gs > n);
		if (xp_rng_unit(r) < 0.55) {
			if (L->sliceable && xp_rng_unit(r) < L->k->slice_rate) {
				for (int k = i; k < i + gs; k++)
					if (plan[k].health != XP_HEALTH_FAIL)
						plan_slices(r, L, &plan[k], g);
			} else {
				int j = new_job(g, PICK(r, group_jobs));
				for (int k = i; k < i + gs; k++)
					if (plan[k].health != XP_HEALTH_FAIL)
						plan[k].whole = j;
			}
		}
		i += gs;
	}
}

/* "a-b" or "a-b,c-d": the PUs of one package, hyperthreads numbered after all cores. */
static char *cpu_list(const struct xp_sim_kind *k, int pkg)
{
	int c = k->cores_per_package, total = 2 * c;
	if (k->threads_per_core < 2)
		return xp_asprintf("%d-%d", pkg * c, pkg * c + c - 1);
	return xp_asprintf("%d-%d,%d-%d", pkg * c, pkg * c + c - 1, total + pkg * c, total + pkg * c + c - 1);
}

static void add_pci(struct xp_node *n, const char *bus, unsigned vid, unsigned did, int cls, const char *name,
		    int numa, int accel, const char *os1, const char *os2)
{
	struct xp_pci *p = xp_node_add_pci(n);
	p->bus_id = xp_strdup(bus);
	p->pci_id = xp_asprintf("%04x:%04x", vid, did);
	p->pci_class = cls;
	p->name = xp_strdup(name);
	p->numa = numa;
	p->accel = accel;
	if (os1)
		xp_strv_add(&p->os_devices, &p->n_os_devices, os1);
	if (os2)
		xp_strv_add(&p->os_devices, &p->n_os_devices, os2);
}

static void add_nic(struct xp_node *n, struct xp_rng *r, const char *name, const char *bus, const char *rdma,
		    int numa, int64_t mbps)
{
	struct xp_nic *c = xp_node_add_nic(n);
	c->name = xp_strdup(name);
	c->pci_bus_id = xp_strdup(bus);
	c->rdma = xp_strdup(rdma);
	uint64_t a = xp_rng_next(r);
	if (rdma)
		c->address = xp_asprintf("a088:c203:00%02x:%04x", (unsigned)(a & 0xff), (unsigned)(a >> 8 & 0xffff));
	else
		c->address = xp_asprintf("b8:3f:d2:%02x:%02x:%02x", (unsigned)(a & 0xff), (unsigned)(a >> 8 & 0xff),
					 (unsigned)(a >> 16 & 0xff));
	c->numa = numa;
	c->speed_mbps = mbps;
	if (rdma)
		add_pci(n, bus, 0x15b3, 0x1021, 0x0207, "Mellanox Technologies MT2910 Family [ConnectX-7]", numa, -1,
			name, rdma);
	else
		add_pci(n, bus, 0x8086, 0x159b, 0x0200, "Intel Corporation Ethernet Controller E810-XXV for SFP",
			numa, -1, name, NULL);
}

/* What hwloc would have found: CPUs, NUMA, NICs, the PCI functions and PCIe link classes. */
static void hwloc_view(struct xp_node *n, struct xp_rng *r, const struct xp_sim_kind *k)
{
	n->cpu_model = xp_strdup(k->cpu_model);
	n->packages_n = 2;
	n->cores = 2 * k->cores_per_package;
	n->pus = n->pus_allowed = n->cores * k->threads_per_core;
	n->memory_mib = k->memory_mib;
	for (int p = 0; p < 2; p++) {
		struct xp_package *pk = xp_node_add_package(n);
		pk->id = p;
		pk->model = xp_strdup(k->cpu_model);
		pk->cores = k->cores_per_package;
		pk->pus = k->cores_per_package * k->threads_per_core;
		pk->cpus = cpu_list(k, p);
		struct xp_numa *nm = xp_node_add_numa(n);
		nm->id = p;
		nm->memory_mib = k->memory_mib / 2;
		nm->cpus = cpu_list(k, p);
		nm->package = p;
	}
	xp_labels_set(&n->facts, "arch", k->arch);
	xp_labels_set(&n->facts, "os", strcmp(k->arch, "aarch64") == 0 ? "Linux 4.19.90-24.4.v2101.ky10.aarch64"
									 : "Linux 5.15.0-105-generic");
	xp_labels_set(&n->facts, "cpu.model", k->cpu_model);
	/* Bus numbers none of the kinds' accelerators use. */
	add_nic(n, r, "eth0", "0000:ef:00.0", NULL, 1, 25000);
	if (k->nic_mbps) {
		add_nic(n, r, "ib0", "0000:1f:00.0", "mlx5_0", 0, k->nic_mbps);
		add_nic(n, r, "ib1", "0000:9f:00.0", "mlx5_1", 1, k->nic_mbps);
	}
	const char *vname = xp_pci_vendor_name(k->pci_vendor);
	for (int i = 0; i < k->devices; i++) {
		struct xp_device *d = xp_node_add_device(n);
		d->vendor = xp_strdup(vname);
		d->model = xp_asprintf("[%04x:%04x]", k->pci_vendor, k->pci_device);
		d->pci_bus_id = xp_strdup(k->bus[i]);
		d->pci_id = xp_asprintf("%04x:%04x", k->pci_vendor, k->pci_device);
		d->pci_class = k->pci_class;
		d->numa = i < k->devices / 2 ? 0 : 1;
		/* Devices come in pairs under one PCIe switch, below the first one's root port. */
		unsigned bus0 = 0;
		sscanf(k->bus[i & ~1] + 5, "%x", &bus0);
		char *root = xp_asprintf("0000:%02x:01.0", (bus0 - 1) & 0xff);
		xp_strv_add(&d->pci_path, &d->n_pci_path, root);
		d->affinity_group = xp_asprintf("pcie:%s", root);
		free(root);
		char os1[16] = "", os2[16] = "";
		if (k->pci_vendor == 0x10de) {
			snprintf(os1, sizeof os1, "cuda%d", i);
			snprintf(os2, sizeof os2, "nvml%d", i);
		} else if (k->pci_vendor == 0x1002) {
			snprintf(os1, sizeof os1, "rsmi%d", i);
		}
		if (*os1)
			xp_strv_add(&d->os_devices, &d->n_os_devices, os1);
		if (*os2)
			xp_strv_add(&d->os_devices, &d->n_os_devices, os2);
		add_pci(n, k->bus[i], k->pci_vendor, k->pci_device, k->pci_class, NULL, d->numa, i,
			*os1 ? os1 : NULL, *os2 ? os2 : NULL);
	}
	xp_node_links_reset(n);
	for (int a = 0; a < k->devices; a++)
		for (int b = 0; b < k->devices; b++)
			if (a != b)
				*xp_node_link(n, (size_t)a, (size_t)b) = (struct xp_link){
					(a ^ b) == 1 && (a & ~1) == (b & ~1) ? XP_LINK_PIX
					: n->devices[a].numa == n->devices[b].numa ? XP_LINK_NODE
										 : XP_LINK_SYS,
					0};
	char cnt[16];
	snprintf(cnt, sizeof cnt, "%d", k->devices);
	xp_labels_set(&n->facts, "accelerator.count", cnt);
}

/* What the vendor tool would report, from the plan. */
static void vendor_report(struct xp_raw_node *raw, struct xp_rng *r, const struct loaded *L, int driver,
			  const struct dev_plan *plan)
{
	const struct xp_sim_kind *k = L->k;
	const struct xp_mmodel *md = L->md;
	bool nvidia = k->pci_vendor == 0x10de, ascend = k->pci_vendor == 0x19e5;
	raw->hostname[0] = '\0';
	raw->n_warnings = 0;
	raw->n_devices = k->devices;
	raw->has_links = k->nvlinks > 0 || k->xgmi;
	for (int i = 0; i < k->devices; i++) {
		struct xp_raw_device *d = &raw->devices[i];
		const struct dev_plan *p = &plan[i];
		xp_raw_device_init(d);
		d->index = i;
		snprintf(d->bus_id, sizeof d->bus_id, "%s", k->bus[i]);
		snprintf(d->name, sizeof d->name, "%s", k->product);
		uint64_t id = xp_rng_next(r), id2 = xp_rng_next(r);
		if (nvidia)
			snprintf(d->uuid, sizeof d->uuid, "GPU-%08x-%04x-%04x-%04x-%012llx", (unsigned)(id >> 32),
				 (unsigned)(id >> 16 & 0xffff), (unsigned)(0x4000 | (id & 0xfff)),
				 (unsigned)(0x8000 | (id2 >> 48 & 0x3fff)), (unsigned long long)(id2 & 0xffffffffffffULL));
		else if (ascend)
			snprintf(d->serial, sizeof d->serial, "033JLS10%09llu",
				 (unsigned long long)(id % 1000000000ULL));
		else
			snprintf(d->uuid, sizeof d->uuid, "0x%016llx", (unsigned long long)id);
		snprintf(d->driver, sizeof d->driver, "%s", k->drivers[driver]);
		snprintf(d->firmware, sizeof d->firmware, "%s", k->firmware);
		snprintf(d->runtime, sizeof d->runtime, "%s", k->runtimes[driver]);
		d->memory_total_mib = md->memory_mib;

		bool busy = p->whole >= 0 || p->n_slices > 0;
		int64_t used = 0;
		if (p->whole >= 0)
			used = (int64_t)((double)md->memory_mib * (0.55 + 0.4 * xp_rng_unit(r)));
		for (int s = 0; s < p->n_slices; s++)
			used += (int64_t)((double)md->templates[p->tmpl[s]].memory_mib * (0.3 + 0.6 * xp_rng_unit(r)));
		if (!busy)
			used = (int64_t)xp_rng_below(r, (uint64_t)(md->memory_mib / 100 + 1));
		d->memory_used_mib = used;
		d->utilization_pct = busy ? uniform1(r, p->whole >= 0 ? 60 : 15, 100) : 0;
		d->temperature_c = busy ? uniform1(r, 52, 76) : uniform1(r, 29, 42);
		d->power_w = busy ? uniform1(r, 0.5 * k->power_limit_w, 0.88 * k->power_limit_w)
				  : uniform1(r, 0.9 * k->idle_w, 1.1 * k->idle_w);
		/* npu-smi prints no power limit. */
		if (!ascend)
			d->power_limit_w = k->power_limit_w;
		if (!ascend) {
			d->ecc_corrected = (int64_t)(xp_rng_unit(r) < 0.1 ? xp_rng_below(r, 40) : 0);
			d->ecc_uncorrected = 0;
		}
		if (nvidia)
			d->retired_pages = 0;
		snprintf(d->health, sizeof d->health, "%s", ascend ? "OK" : "");
		if (p->health != XP_HEALTH_OK) {
			bool fail = p->health == XP_HEALTH_FAIL;
			double kind = xp_rng_unit(r);
			if (!fail && kind < 0.3 && XP_HAS(L->temp_warn)) {
				/* Hot: normalization's own threshold turns it to warn, with its reason. */
				d->temperature_c = L->temp_warn + 1 + (double)xp_rng_below(r, 3);
			} else if (!fail && kind < 0.45 && !ascend) {
				d->ecc_uncorrected = 1 + (int64_t)xp_rng_below(r, 4);
			} else {
				const struct fault *f;
				if (nvidia)
					f = fail ? &PICK(r, nvidia_fail) : &PICK(r, nvidia_warn);
				else if (ascend)
					f = fail ? &PICK(r, ascend_fail) : &PICK(r, ascend_warn);
				else
					f = fail ? &PICK(r, amd_fail) : &PICK(r, amd_warn);
				snprintf(d->health, sizeof d->health, "%s", f->word);
				snprintf(d->reasons[0], sizeof d->reasons[0], "%s", f->reason);
				d->n_reasons = 1;
			}
		}
		if (nvidia && (md->partition & XP_PART_MIG))
			d->mig_mode = p->n_slices > 0;
		for (int s = 0; s < p->n_slices; s++) {
			struct xp_raw_slice *sl = &d->slices[d->n_slices++];
			const struct xp_mtemplate *t = &md->templates[p->tmpl[s]];
			snprintf(sl->profile, sizeof sl->profile, "%s", t->name);
			sl->gpu_instance = s + 1;
			sl->compute_instance = nvidia ? 0 : -1;
			sl->memory_mib = t->memory_mib;
		}
		if (k->xgmi)
			snprintf(d->group, sizeof d->group, "xgmi0");
		for (int j = 0; j < k->devices && raw->has_links; j++) {
			if (i == j)
				snprintf(raw->links[i][j], sizeof raw->links[i][j], "X");
			else if (k->nvlinks)
				snprintf(raw->links[i][j], sizeof raw->links[i][j], "NV%d", k->nvlinks);
			else
				snprintf(raw->links[i][j], sizeof raw->links[i][j], "XGMI");
		}
	}
}

static struct xp_node *make_node(struct gen *g, const struct loaded *L, size_t index, size_t rack)
{
	const struct xp_sim_kind *k = L->k;
	struct xp_rng r;
	rng_for(&r, g->seed, 1, index);
	/* Drivers roll out rack by rack; a few nodes lag behind or run ahead. */
	struct xp_rng rr;
	rng_for(&rr, g->seed, 2, rack);
	int driver = (int)xp_rng_below(&rr, 3);
	if (xp_rng_unit(&r) < 0.05)
		driver = (int)xp_rng_below(&r, 3);
	const char *pool = k->devices == 0 ? "batch" : xp_rng_unit(&rr) < 0.75 ? "train" : "infer";

	char name[64];
	snprintf(name, sizeof name, "%s-%05zu", k->prefix, index + 1);
	struct xp_node *n = xp_node_new(name);
	n->source = xp_strdup("sim");
	n->zone = xp_asprintf("zone%02zu", rack / XP_SIM_RACKS_PER_ZONE);
	n->rack = xp_asprintf("rack%04zu", rack);
	n->sw = xp_asprintf("tor%04zu", rack);
	n->cost_per_hour = k->cost_per_hour;
	double su = xp_rng_unit(&r);
	n->state = su < 0.01 ? XP_NODE_DOWN : su < 0.025 ? XP_NODE_DRAINING : XP_NODE_UP;
	if (n->state == XP_NODE_DOWN)
		n->age_s = 600 + (int64_t)xp_rng_below(&r, 6 * 3600);
	xp_labels_set(&n->governance, "pool", pool);
	hwloc_view(n, &r, k);

	struct dev_plan plan[XP_SIM_MAX_DEVICES];
	plan_node(&r, L, n->state, rack, plan, g);
	if (!k->devices) {
		xp_normalize_facts(n);
		xp_node_clean(n);
		return n;
	}
	vendor_report(g->raw, &r, L, driver, plan);
	xp_normalize_merge(n, g->raw, L->m, k->adapter);
	/* Owners: normalization knows slices but not who holds them; whole jobs are the scheduler's. */
	bool failed = false;
	for (int i = 0; i < k->devices; i++) {
		struct xp_device *d = &n->devices[i];
		for (size_t s = 0; s < d->n_allocs && (int)s < plan[i].n_slices; s++)
			d->allocs[s].owner = xp_strdup(g->jobname[plan[i].job[s]]);
		if (plan[i].whole >= 0) {
			d->allocs = xp_calloc(1, sizeof *d->allocs);
			d->allocs[0].owner = xp_strdup(g->jobname[plan[i].whole]);
			d->allocs[0].memory_mib = d->memory_mib;
			d->n_allocs = 1;
		}
		failed |= d->health == XP_HEALTH_FAIL;
	}
	if (failed && n->state == XP_NODE_UP)
		n->state = XP_NODE_DEGRADED;
	xp_node_clean(n);
	return n;
}

static int load_kind(struct loaded *L, const struct xp_sim_kind *k, struct xp_manifest **ms, size_t *nm,
		     struct xp_err *err)
{
	memset(L, 0, sizeof *L);
	L->k = k;
	L->temp_warn = NAN;
	if (!k->adapter)
		return 0;
	struct xp_manifest *m = NULL;
	for (size_t i = 0; i < *nm && !m; i++)
		if (strcmp(ms[i]->name, k->adapter) == 0)
			m = ms[i];
	if (!m) {
		if (!(m = xp_adapter_manifest_load(k->adapter, err)))
			return -1;
		ms[(*nm)++] = m;
	}
	for (size_t i = 0; i < m->n_models && !L->md; i++)
		if (strcmp(m->models[i].name, k->model) == 0)
			L->md = &m->models[i];
	if (!L->md)
		return xp_errf(err, "%s: %s has no model '%s' (node kind %s)", m->path, m->name, k->model, k->name);
	/* The device must come out of normalization as this model, or the snapshot would lie. */
	const struct xp_mmodel *got = xp_manifest_model(m, k->product, (int)k->pci_device);
	if (got != L->md)
		return xp_errf(err, "%s: '%s' matches model '%s', not '%s' (node kind %s)", m->path, k->product,
			       got ? got->name : "none", k->model, k->name);
	if (L->md->memory_mib <= 0)
		return xp_errf(err, "%s: model '%s' gives no memory_mib (node kind %s)", m->path, k->model, k->name);
	L->m = m;
	L->temp_warn = XP_HAS(L->md->temp_warn) ? L->md->temp_warn : m->temp_warn;
	L->sliceable = L->md->n_templates > 0 && (L->md->partition & (XP_PART_MIG | XP_PART_VNPU));
	return 0;
}

struct xp_cluster *xp_sim_generate(size_t nodes, const struct xp_sim_mix *mix, uint64_t seed, struct xp_err *err)
{
	struct xp_sim_mix def;
	if (!mix) {
		if (xp_sim_mix_parse(XP_SIM_DEFAULT_MIX, &def, err) < 0)
			return NULL;
		mix = &def;
	}
	if (nodes < 1 || nodes > XP_SIM_MAX_NODES)
		return xp_errf(err, "--nodes must be from 1 to %d, not %zu", XP_SIM_MAX_NODES, nodes), NULL;
	struct xp_manifest *ms[XP_SIM_MAX_MIX];
	size_t nm = 0;
	struct loaded L[XP_SIM_MAX_MIX];
	size_t counts[XP_SIM_MAX_MIX];
	xp_sim_mix_counts(mix, nodes, counts);
	int rc = 0;
	/* Only the manifests the mix needs: a CPU-only cluster needs none. */
	for (size_t i = 0; i < mix->n && rc == 0; i++)
		if (counts[i])
			rc = load_kind(&L[i], mix->kind[i], ms, &nm, err);
	struct xp_cluster *c = NULL;
	if (rc == 0) {
		struct gen g = {.seed = seed, .raw = xp_malloc(sizeof *g.raw)};
		xp_raw_node_init(g.raw);
		c = xp_cluster_new();
		size_t index = 0, rack = 0;
		/* Sites buy by the rack: each kind fills its own racks, in the order of the mix. */
		for (size_t i = 0; i < mix->n; i++) {
			for (size_t j = 0; j < counts[i]; j++)
				xp_cluster_add(c, make_node(&g, &L[i], index++, rack + j / XP_SIM_NODES_PER_RACK));
			rack += (counts[i] + XP_SIM_NODES_PER_RACK - 1) / XP_SIM_NODES_PER_RACK;
		}
		c->generation = 1;
		free(g.raw);
	}
	for (size_t i = 0; i < nm; i++)
		xp_manifest_free(ms[i]);
	return c;
}

/* ---- writing ---- */

int xp_sim_write(const struct xp_cluster *c, FILE *f, struct xp_err *err)
{
	/* The inventory's streaming writer: no tree, one buffer, the same bytes. */
	return xp_cluster_write(c, f, 0, err);
}
