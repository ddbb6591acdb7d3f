/* nvml.c: the NVIDIA Management Library, loaded at run time.
 *
 * No NVIDIA header or library is needed to build: the few types used are declared here with
 * the layouts of NVML's public API reference (nvmlPciInfo_t as filled by the _v3 query, byte
 * counts in nvmlMemory_t, milliwatts for power), and every function is looked up with dlsym.
 * Enumeration parameters are passed as int, the size NVML's enums have in the C ABI. A symbol
 * this code cannot work without makes the library unavailable; the others are optional, so an
 * older driver still gives what it can. */
#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nvidia.h"

typedef int nvret;                   /* nvmlReturn_t */
typedef struct nvml_device_st *nvdev; /* nvmlDevice_t, opaque */

enum {
	NV_SUCCESS = 0,
	NV_ERROR_INSUFFICIENT_SIZE = 7,
	NV_TEMPERATURE_GPU = 0,
	NV_CORRECTED = 0,   /* nvmlMemoryErrorType_t */
	NV_UNCORRECTED = 1,
	NV_VOLATILE = 0,    /* nvmlEccCounterType_t */
	NV_AGGREGATE = 1,
	NV_RETIRE_SBE = 0,  /* nvmlPageRetirementCause_t: multiple single-bit errors */
	NV_RETIRE_DBE = 1,  /* a double-bit error */
	NV_LINK_TO_SWITCH = 2, /* nvmlIntNvLinkDeviceType_t */
	NV_MAX_LINKS = 18,  /* NVML_NVLINK_MAX_LINKS */
};

/* nvmlPciInfo_t */
struct nv_pci {
	char bus_id_legacy[16];
	unsigned int domain, bus, device;
	unsigned int pci_device_id;    /* device id << 16 | vendor id */
	unsigned int pci_subsystem_id;
	char bus_id[32];               /* "00000000:3B:00.0" */
};

/* nvmlMemory_t, in bytes */
struct nv_memory {
	unsigned long long total, free, used;
};

/* nvmlMemory_v2_t: its used excludes the driver's reserve, as nvidia-smi's report does; the
 * first query's used includes it on recent drivers. */
struct nv_memory_v2 {
	unsigned int version; /* sizeof | 2 << 24 (NVML_STRUCT_VERSION) */
	unsigned long long total, reserved, free, used;
};

/* nvmlProcessInfo_t as the _v3 process queries fill it (NVML's public API reference) */
struct nv_proc {
	unsigned int pid;
	unsigned long long used_memory; /* bytes; NVML_VALUE_NOT_AVAILABLE (all ones) when not known */
	unsigned int gpu_instance, compute_instance;
};

/* nvmlProcessUtilizationSample_t, in percent of the sampling period */
struct nv_proc_util {
	unsigned int pid;
	unsigned long long timestamp; /* microseconds */
	unsigned int sm, mem, enc, dec;
};

/* nvmlUtilization_t, in percent */
struct nv_util {
	unsigned int gpu, memory;
};

struct nvml {
	void *lib;
	bool inited;
	/* required */
	nvret (*init)(void);
	nvret (*shutdown)(void);
	const char *(*error_string)(nvret);
	nvret (*count)(unsigned int *);
	nvret (*handle)(unsigned int, nvdev *);
	nvret (*name)(nvdev, char *, unsigned int);
	nvret (*uuid)(nvdev, char *, unsigned int);
	nvret (*pci)(nvdev, struct nv_pci *);
	nvret (*memory)(nvdev, struct nv_memory *);
	/* optional */
	nvret (*driver_version)(char *, unsigned int);
	nvret (*cuda_version)(int *);
	nvret (*serial)(nvdev, char *, unsigned int);
	nvret (*vbios)(nvdev, char *, unsigned int);
	nvret (*memory_v2)(nvdev, struct nv_memory_v2 *);
	nvret (*temperature)(nvdev, int, unsigned int *);
	nvret (*power)(nvdev, unsigned int *);
	nvret (*power_limit)(nvdev, unsigned int *);
	nvret (*utilization)(nvdev, struct nv_util *);
	nvret (*ecc)(nvdev, int, int, unsigned long long *);
	nvret (*retired)(nvdev, int, unsigned int *, unsigned long long *);
	nvret (*event_reasons)(nvdev, unsigned long long *);
	nvret (*mig_mode)(nvdev, unsigned int *, unsigned int *);
	nvret (*mig_max)(nvdev, unsigned int *);
	nvret (*mig_handle)(nvdev, unsigned int, nvdev *);
	nvret (*gpu_instance)(nvdev, unsigned int *);
	nvret (*compute_instance)(nvdev, unsigned int *);
	nvret (*ancestor)(nvdev, nvdev, int *);
	nvret (*link_state)(nvdev, unsigned int, int *);
	nvret (*link_remote_pci)(nvdev, unsigned int, struct nv_pci *);
	nvret (*link_remote_type)(nvdev, unsigned int, int *);
	nvret (*compute_procs)(nvdev, unsigned int *, struct nv_proc *);
	nvret (*graphics_procs)(nvdev, unsigned int *, struct nv_proc *);
	nvret (*proc_util)(nvdev, struct nv_proc_util *, unsigned int *, unsigned long long);
};

static const struct {
	const char *name;
	size_t offset;
	bool required;
} symbols[] = {
	{"nvmlInit_v2", offsetof(struct nvml, init), true},
	{"nvmlShutdown", offsetof(struct nvml, shutdown), true},
	{"nvmlErrorString", offsetof(struct nvml, error_string), true},
	{"nvmlDeviceGetCount_v2", offsetof(struct nvml, count), true},
	{"nvmlDeviceGetHandleByIndex_v2", offsetof(struct nvml, handle), true},
	{"nvmlDeviceGetName", offsetof(struct nvml, name), true},
	{"nvmlDeviceGetUUID", offsetof(struct nvml, uuid), true},
	{"nvmlDeviceGetPciInfo_v3", offsetof(struct nvml, pci), true},
	{"nvmlDeviceGetMemoryInfo", offsetof(struct nvml, memory), true},
	{"nvmlSystemGetDriverVersion", offsetof(struct nvml, driver_version), false},
	{"nvmlSystemGetCudaDriverVersion_v2", offsetof(struct nvml, cuda_version), false},
	{"nvmlDeviceGetSerial", offsetof(struct nvml, serial), false},
	{"nvmlDeviceGetVbiosVersion", offsetof(struct nvml, vbios), false},
	{"nvmlDeviceGetMemoryInfo_v2", offsetof(struct nvml, memory_v2), false},
	{"nvmlDeviceGetTemperature", offsetof(struct nvml, temperature), false},
	{"nvmlDeviceGetPowerUsage", offsetof(struct nvml, power), false},
	{"nvmlDeviceGetEnforcedPowerLimit", offsetof(struct nvml, power_limit), false},
	{"nvmlDeviceGetUtilizationRates", offsetof(struct nvml, utilization), false},
	{"nvmlDeviceGetTotalEccErrors", offsetof(struct nvml, ecc), false},
	{"nvmlDeviceGetRetiredPages", offsetof(struct nvml, retired), false},
	/* The event-reason query replaced the throttle-reason one; same signature and bits. */
	{"nvmlDeviceGetCurrentClocksEventReasons", offsetof(struct nvml, event_reasons), false},
	{"nvmlDeviceGetCurrentClocksThrottleReasons", offsetof(struct nvml, event_reasons), false},
	{"nvmlDeviceGetMigMode", offsetof(struct nvml, mig_mode), false},
	{"nvmlDeviceGetMaxMigDeviceCount", offsetof(struct nvml, mig_max), false},
	{"nvmlDeviceGetMigDeviceHandleByIndex", offsetof(struct nvml, mig_handle), false},
	{"nvmlDeviceGetGpuInstanceId", offsetof(struct nvml, gpu_instance), false},
	{"nvmlDeviceGetComputeInstanceId", offsetof(struct nvml, compute_instance), false},
	{"nvmlDeviceGetTopologyCommonAncestor", offsetof(struct nvml, ancestor), false},
	{"nvmlDeviceGetNvLinkState", offsetof(struct nvml, link_state), false},
	{"nvmlDeviceGetNvLinkRemotePciInfo_v2", offsetof(struct nvml, link_remote_pci), false},
	{"nvmlDeviceGetNvLinkRemoteDeviceType", offsetof(struct nvml, link_remote_type), false},
	{"nvmlDeviceGetComputeRunningProcesses_v3", offsetof(struct nvml, compute_procs), false},
	{"nvmlDeviceGetGraphicsRunningProcesses_v3", offsetof(struct nvml, graphics_procs), false},
	{"nvmlDeviceGetProcessUtilization", offsetof(struct nvml, proc_util), false},
};

/* Clock event reason bits (nvmlClocksEventReason*) worth reporting, in nvidia-smi's words;
 * idle (0x1), application clocks (0x2), SW power cap (0x4: a busy GPU holding to its
 * configured limit), sync boost (0x10) and display clocks (0x100) are normal operation. */
static const struct {
	unsigned long long bit;
	const char *reason;
} event_bits[] = {
	{0x8, "HW slowdown"},
	{0x20, "SW thermal slowdown"},
	{0x40, "HW thermal slowdown"},
	{0x80, "HW power brake slowdown"},
};

static const char *why(const struct nvml *nv, nvret rc)
{
	const char *s = nv->error_string ? nv->error_string(rc) : NULL;
	return s ? s : "unknown NVML error";
}

/* Copies a string NVML wrote into a fixed buffer of ours (NUL-terminated within size). */
static void set_str(char *dst, size_t size, const char *src, size_t srcsize)
{
	xp_raw_set(dst, size, src, strnlen(src, srcsize));
}

int xp_nvml_open(void **h, char *err, size_t errlen)
{
	*h = NULL;
	dlerror();
	void *lib = dlopen(XP_NVML_LIB, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		char first[256];
		const char *e = dlerror();
		snprintf(first, sizeof first, "%s", e ? e : "not found");
		/* Only the development package installs the unversioned name; try it as well. */
		lib = dlopen("libnvidia-ml.so", RTLD_NOW | RTLD_LOCAL);
		if (!lib) {
			xp_text_err(err, errlen, XP_NVML_NOLIB "%s", first);
			return XP_PROBE_UNAVAILABLE;
		}
	}
	struct nvml *nv = calloc(1, sizeof *nv);
	if (!nv) {
		dlclose(lib);
		xp_text_err(err, errlen, "NVML: out of memory");
		return XP_PROBE_UNAVAILABLE;
	}
	nv->lib = lib;
	for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
		void *fn;
		memcpy(&fn, (char *)nv + symbols[i].offset, sizeof fn);
		if (fn)
			continue; /* an alternative name already found it */
		fn = dlsym(lib, symbols[i].name);
		if (!fn && symbols[i].required) {
			xp_text_err(err, errlen, "libnvidia-ml lacks %s (driver too old?)", symbols[i].name);
			xp_nvml_close(nv);
			return XP_PROBE_UNAVAILABLE;
		}
		/* Object and function pointers share a representation on every POSIX system;
		 * copying the bytes avoids a cast C does not define. */
		memcpy((char *)nv + symbols[i].offset, &fn, sizeof fn);
	}
	nvret rc = nv->init();
	if (rc != NV_SUCCESS) {
		xp_text_err(err, errlen, "nvmlInit_v2: %s", why(nv, rc));
		xp_nvml_close(nv);
		return XP_PROBE_UNAVAILABLE;
	}
	nv->inited = true;
	unsigned int n = 0;
	rc = nv->count(&n);
	if (rc != NV_SUCCESS) {
		xp_text_err(err, errlen, "nvmlDeviceGetCount_v2: %s", why(nv, rc));
		xp_nvml_close(nv);
		return XP_PROBE_UNAVAILABLE;
	}
	*h = nv;
	if (n == 0) {
		xp_text_err(err, errlen, "NVML sees no GPU");
		return XP_PROBE_IDLE;
	}
	return XP_PROBE_ACTIVE;
}

void xp_nvml_close(void *h)
{
	struct nvml *nv = h;
	if (!nv)
		return;
	if (nv->inited && nv->shutdown)
		nv->shutdown();
	if (nv->lib)
		dlclose(nv->lib);
	free(nv);
}

/* Larger of the volatile and aggregate counts (see nvsmi_xml.c), -1 when neither is known. */
static int64_t ecc_count(const struct nvml *nv, nvdev dev, int type)
{
	if (!nv->ecc)
		return -1;
	unsigned long long v = 0, a = 0;
	bool hv = nv->ecc(dev, type, NV_VOLATILE, &v) == NV_SUCCESS;
	bool ha = nv->ecc(dev, type, NV_AGGREGATE, &a) == NV_SUCCESS;
	if (!hv && !ha)
		return -1;
	unsigned long long m = hv && (!ha || v > a) ? v : a;
	return m > (unsigned long long)INT64_MAX ? INT64_MAX : (int64_t)m;
}

/* Pages retired for one cause: asked with no room for addresses, NVML returns the count. */
static long retired_count(const struct nvml *nv, nvdev dev, int cause)
{
	unsigned int n = 0;
	nvret rc = nv->retired(dev, cause, &n, NULL);
	return rc == NV_SUCCESS || rc == NV_ERROR_INSUFFICIENT_SIZE ? (long)n : -1;
}

static void mig_slices(const struct nvml *nv, nvdev dev, struct xp_raw_device *d, struct xp_raw_node *node)
{
	unsigned int max = 0;
	if (!nv->mig_max || !nv->mig_handle || nv->mig_max(dev, &max) != NV_SUCCESS)
		return;
	for (unsigned int i = 0; i < max; i++) {
		nvdev mig;
		if (nv->mig_handle(dev, i, &mig) != NV_SUCCESS)
			continue; /* an empty slot */
		struct xp_raw_slice *s = xp_raw_add_slice(node, d, "MIG devices");
		if (!s)
			return;
		unsigned int id;
		if (nv->gpu_instance && nv->gpu_instance(mig, &id) == NV_SUCCESS)
			s->gpu_instance = (int)id;
		if (nv->compute_instance && nv->compute_instance(mig, &id) == NV_SUCCESS)
			s->compute_instance = (int)id;
		struct nv_memory mem;
		if (nv->memory(mig, &mem) == NV_SUCCESS)
			s->memory_mib = (int64_t)(mem.total >> 20);
		char buf[128] = "";
		if (nv->uuid(mig, buf, sizeof buf) == NV_SUCCESS)
			set_str(s->uuid, sizeof s->uuid, buf, sizeof buf);
		/* NVML names a MIG handle by its profile ("NVIDIA H100 80GB HBM3 MIG 1g.10gb"; the name
		 * nvidia-smi -L prints), the only place the profile is given. */
		char name[128] = "";
		if (nv->name(mig, name, sizeof name) == NV_SUCCESS) {
			name[sizeof name - 1] = '\0';
			xp_nv_mig_profile(name, s->profile, sizeof s->profile);
		}
	}
}

/* Adds the processes one query lists (type "C" or "G"); a pid already listed by the other
 * query becomes "C+G", as nvidia-smi prints it. False when the query failed. */
static bool list_procs(nvret (*query)(nvdev, unsigned int *, struct nv_proc *), nvdev dev, const char *type,
		       struct xp_raw_device *d, struct xp_raw_node *node)
{
	struct nv_proc buf[XP_RAW_MAX_PROCS];
	unsigned int n = XP_RAW_MAX_PROCS;
	nvret rc = query(dev, &n, buf);
	if (rc == NV_ERROR_INSUFFICIENT_SIZE) {
		xp_raw_warn(node, "GPU %d: more than %d %s processes; none are listed", d->index, XP_RAW_MAX_PROCS,
			    type);
		return false;
	}
	if (rc != NV_SUCCESS || n > XP_RAW_MAX_PROCS)
		return false;
	if (d->n_procs < 0)
		d->n_procs = 0;
	for (unsigned int i = 0; i < n; i++) {
		struct xp_raw_proc *p = NULL;
		for (int k = 0; k < d->n_procs && !p; k++)
			if (d->procs[k].pid == (int64_t)buf[i].pid)
				p = &d->procs[k];
		if (p) {
			snprintf(p->type, sizeof p->type, "C+G");
			continue;
		}
		if (!(p = xp_raw_add_proc(node, d, "GPU")))
			break;
		p->pid = buf[i].pid;
		snprintf(p->type, sizeof p->type, "%s", type);
		p->memory_mib = buf[i].used_memory == ~0ULL ? -1 : (int64_t)(buf[i].used_memory >> 20);
	}
	return true;
}

/* Each process's SM utilization over the driver's last samples (the newest sample of each pid). */
static void procs_util(const struct nvml *nv, nvdev dev, struct xp_raw_device *d)
{
	struct nv_proc_util buf[XP_RAW_MAX_PROCS * 2];
	unsigned int n = sizeof buf / sizeof buf[0];
	if (!nv->proc_util || d->n_procs <= 0 || nv->proc_util(dev, buf, &n, 0) != NV_SUCCESS ||
	    n > sizeof buf / sizeof buf[0])
		return;
	for (int k = 0; k < d->n_procs; k++) {
		unsigned long long newest = 0;
		for (unsigned int i = 0; i < n; i++)
			if ((int64_t)buf[i].pid == d->procs[k].pid && buf[i].timestamp >= newest && buf[i].sm <= 100) {
				newest = buf[i].timestamp;
				d->procs[k].util_pct = buf[i].sm;
			}
	}
}

static void read_procs(const struct nvml *nv, nvdev dev, struct xp_raw_device *d, struct xp_raw_node *node)
{
	bool c = nv->compute_procs && list_procs(nv->compute_procs, dev, "C", d, node);
	bool g = nv->graphics_procs && list_procs(nv->graphics_procs, dev, "G", d, node);
	/* One list without the other would say "none" of what was not asked. */
	if (!c || !g) {
		d->n_procs = -1;
		return;
	}
	procs_util(nv, dev, d);
}

static void read_device(const struct nvml *nv, nvdev dev, struct xp_raw_device *d, struct xp_raw_node *node)
{
	char buf[128];
	unsigned int u;
	nvret rc;

	if ((rc = nv->name(dev, buf, sizeof buf)) == NV_SUCCESS)
		set_str(d->name, sizeof d->name, buf, sizeof buf);
	if ((rc = nv->uuid(dev, buf, sizeof buf)) == NV_SUCCESS)
		set_str(d->uuid, sizeof d->uuid, buf, sizeof buf);
	if (nv->serial && nv->serial(dev, buf, sizeof buf) == NV_SUCCESS)
		set_str(d->serial, sizeof d->serial, buf, sizeof buf);
	if (nv->vbios && nv->vbios(dev, buf, sizeof buf) == NV_SUCCESS)
		set_str(d->firmware, sizeof d->firmware, buf, sizeof buf);
	struct nv_pci pci;
	memset(&pci, 0, sizeof pci);
	if (nv->pci(dev, &pci) == NV_SUCCESS)
		set_str(d->bus_id, sizeof d->bus_id, pci.bus_id, sizeof pci.bus_id);

	struct nv_memory_v2 m2 = {(unsigned int)sizeof m2 | 2u << 24, 0, 0, 0, 0};
	struct nv_memory mem;
	if (nv->memory_v2 && nv->memory_v2(dev, &m2) == NV_SUCCESS) {
		d->memory_total_mib = (int64_t)(m2.total >> 20);
		d->memory_used_mib = (int64_t)(m2.used >> 20);
	} else if (nv->memory(dev, &mem) == NV_SUCCESS) {
		d->memory_total_mib = (int64_t)(mem.total >> 20);
		d->memory_used_mib = (int64_t)(mem.used >> 20);
	}
	if (nv->temperature && nv->temperature(dev, NV_TEMPERATURE_GPU, &u) == NV_SUCCESS)
		d->temperature_c = u;
	if (nv->power && nv->power(dev, &u) == NV_SUCCESS)
		d->power_w = u / 1000.0;
	if (nv->power_limit && nv->power_limit(dev, &u) == NV_SUCCESS)
		d->power_limit_w = u / 1000.0;
	struct nv_util util;
	if (nv->utilization && nv->utilization(dev, &util) == NV_SUCCESS)
		d->utilization_pct = util.gpu;

	d->ecc_corrected = ecc_count(nv, dev, NV_CORRECTED);
	d->ecc_uncorrected = ecc_count(nv, dev, NV_UNCORRECTED);
	if (nv->retired) {
		long sbe = retired_count(nv, dev, NV_RETIRE_SBE), dbe = retired_count(nv, dev, NV_RETIRE_DBE);
		if (sbe >= 0 || dbe >= 0)
			d->retired_pages = (sbe > 0 ? sbe : 0) + (dbe > 0 ? dbe : 0);
	}
	unsigned long long reasons;
	if (nv->event_reasons && nv->event_reasons(dev, &reasons) == NV_SUCCESS)
		for (size_t i = 0; i < sizeof event_bits / sizeof event_bits[0]; i++)
			if (reasons & event_bits[i].bit)
				xp_raw_add_reason(d, event_bits[i].reason);

	unsigned int cur, pending;
	if (nv->mig_mode && nv->mig_mode(dev, &cur, &pending) == NV_SUCCESS) {
		d->mig_mode = cur ? 1 : 0;
		if (cur)
			mig_slices(nv, dev, d, node);
	}
	read_procs(nv, dev, d, node);
}

int xp_nvml_enumerate(void *h, struct xp_raw_node *node, char *err, size_t errlen)
{
	struct nvml *nv = h;
	xp_raw_node_init(node);
	if (!nv || !nv->inited) {
		xp_text_err(err, errlen, "NVML is not initialized");
		return -1;
	}
	char driver[96] = "", runtime[64] = "";
	if (nv->driver_version && nv->driver_version(driver, sizeof driver) != NV_SUCCESS)
		driver[0] = '\0';
	driver[sizeof driver - 1] = '\0';
	int cuda;
	if (nv->cuda_version && nv->cuda_version(&cuda) == NV_SUCCESS && cuda > 0)
		snprintf(runtime, sizeof runtime, "CUDA %d.%d", cuda / 1000, cuda % 1000 / 10);

	unsigned int n = 0;
	nvret rc = nv->count(&n);
	if (rc != NV_SUCCESS) {
		xp_text_err(err, errlen, "nvmlDeviceGetCount_v2: %s", why(nv, rc));
		return -1;
	}
	if (n > XP_RAW_MAX_DEVICES) {
		xp_raw_warn(node, "NVML lists %u GPUs; only the first %d are kept", n, XP_RAW_MAX_DEVICES);
		n = XP_RAW_MAX_DEVICES;
	}
	for (unsigned int i = 0; i < n; i++) {
		struct xp_raw_device *d = &node->devices[node->n_devices++];
		xp_raw_device_init(d);
		d->index = (int)i;
		d->chip = 0;
		xp_raw_set(d->driver, sizeof d->driver, driver, strlen(driver));
		xp_raw_set(d->runtime, sizeof d->runtime, runtime, strlen(runtime));
		nvdev dev;
		rc = nv->handle(i, &dev);
		if (rc != NV_SUCCESS) {
			/* A GPU NVML counts but cannot open ("GPU is lost") is itself a health fact. */
			char reason[128];
			snprintf(reason, sizeof reason, "NVML: %s", why(nv, rc));
			xp_raw_add_reason(d, reason);
			continue;
		}
		read_device(nv, dev, d, node);
	}
	return 0;
}

/* `nvidia-smi topo -m`'s words for NVML's common-ancestor levels. Two GPUs on one board
 * (INTERNAL) meet behind the board's own switch, which nvidia-smi also calls PIX. */
static const char *ancestor_class(int level)
{
	switch (level) {
	case 0:  /* NVML_TOPOLOGY_INTERNAL */
	case 10: /* NVML_TOPOLOGY_SINGLE */
		return "PIX";
	case 20: /* NVML_TOPOLOGY_MULTIPLE */
		return "PXB";
	case 30: /* NVML_TOPOLOGY_HOSTBRIDGE */
		return "PHB";
	case 40: /* NVML_TOPOLOGY_NODE */
		return "NODE";
	case 50: /* NVML_TOPOLOGY_SYSTEM */
		return "SYS";
	default:
		return "";
	}
}

int xp_nvml_topology(void *h, struct xp_raw_node *node, char *err, size_t errlen)
{
	struct nvml *nv = h;
	if (!nv || !nv->inited) {
		xp_text_err(err, errlen, "NVML is not initialized");
		return -1;
	}
	int n = node->n_devices;
	nvdev *dev = calloc(XP_RAW_MAX_DEVICES, sizeof *dev);
	struct nv_pci *pci = calloc(XP_RAW_MAX_DEVICES, sizeof *pci);
	int(*links)[XP_RAW_MAX_DEVICES] = calloc(XP_RAW_MAX_DEVICES, sizeof *links);
	int *to_switch = calloc(XP_RAW_MAX_DEVICES, sizeof *to_switch);
	bool *ok = calloc(XP_RAW_MAX_DEVICES, sizeof *ok);
	if (!dev || !pci || !links || !to_switch || !ok) {
		free(dev);
		free(pci);
		free(links);
		free(to_switch);
		free(ok);
		xp_text_err(err, errlen, "NVML topology: out of memory");
		return -1;
	}
	for (int p = 0; p < n; p++) {
		int idx = node->devices[p].index;
		ok[p] = idx >= 0 && nv->handle((unsigned int)idx, &dev[p]) == NV_SUCCESS &&
			nv->pci(dev[p], &pci[p]) == NV_SUCCESS;
	}

	/* Active NVLinks, counted per peer GPU, or per GPU when they go to NVSwitches. */
	for (int p = 0; p < n; p++) {
		if (!ok[p] || !nv->link_state || !nv->link_remote_pci)
			continue;
		for (unsigned int l = 0; l < NV_MAX_LINKS; l++) {
			int active = 0;
			struct nv_pci rp;
			memset(&rp, 0, sizeof rp);
			if (nv->link_state(dev[p], l, &active) != NV_SUCCESS || !active ||
			    nv->link_remote_pci(dev[p], l, &rp) != NV_SUCCESS)
				continue;
			int q;
			for (q = 0; q < n; q++)
				if (q != p && ok[q] && pci[q].domain == rp.domain && pci[q].bus == rp.bus &&
				    pci[q].device == rp.device)
					break;
			int type = -1;
			if (q < n)
				links[p][q]++;
			else if (nv->link_remote_type && nv->link_remote_type(dev[p], l, &type) == NV_SUCCESS &&
				 type == NV_LINK_TO_SWITCH)
				to_switch[p]++;
		}
	}

	memset(node->links, 0, sizeof node->links);
	for (int p = 0; p < n; p++) {
		for (int q = 0; q < n; q++) {
			char *cell = node->links[p][q];
			if (p == q) {
				strcpy(cell, "X");
				continue;
			}
			if (!ok[p] || !ok[q])
				continue;
			/* Through NVSwitches every pair gets the smaller of the two GPUs' link sets,
			 * which is what nvidia-smi prints for switched systems (NV18 on HGX H100). */
			int nl = links[p][q] ? links[p][q]
					     : (to_switch[p] < to_switch[q] ? to_switch[p] : to_switch[q]);
			int level;
			if (nl > 0 && nl < 1000)
				snprintf(cell, sizeof node->links[0][0], "NV%d", nl);
			else if (nv->ancestor && nv->ancestor(dev[p], dev[q], &level) == NV_SUCCESS)
				strcpy(cell, ancestor_class(level));
		}
		if (!ok[p])
			xp_raw_warn(node, "NVML topology: GPU %d could not be opened", node->devices[p].index);
	}
	node->has_links = true;
	free(dev);
	free(pci);
	free(links);
	free(to_switch);
	free(ok);
	return 0;
}
