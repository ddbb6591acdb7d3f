/* xp_adapter.h: the interface between xpool and a vendor adapter (device adaptation layer).
 *
 * An adapter is a shared object, adapters/<name>/ built into xp_<name>.so, exporting
 * one `const struct xp_adapter xp_adapter_<name>`. It reports what the vendor's
 * tools or libraries say, in the plain records below (raw inventory), and knows
 * nothing of xpool's model: src/model/normalize.c merges the records into the model
 * with the hwloc view and the adapter's manifest (<name>.adapter). Records use
 * fixed-size fields so nothing allocated on one side is freed on the other.
 * Parsers are pure functions over text, so tests feed them recorded outputs. */
#ifndef XP_ADAPTER_H
#define XP_ADAPTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bumped whenever a struct below changes; the loader refuses other versions. */
#define XP_ADAPTER_ABI 2 /* 2: processes per device */

#define XP_RAW_MAX_DEVICES 64 /* devices one adapter reports on one node */
#define XP_RAW_MAX_REASONS 8  /* vendor health reasons kept per device */
#define XP_RAW_MAX_SLICES 56  /* MIG instances / vNPUs per device (7 x 8 is the most MIG allows) */
#define XP_RAW_MAX_WARNINGS 16
#define XP_RAW_MAX_PROCS 64   /* processes kept per device (the rest are counted in a warning) */

/* A partition of a device: a MIG instance or a vNPU. */
struct xp_raw_slice {
	char profile[32];    /* "1g.10gb", "vir02"; "" when not known */
	int gpu_instance;    /* MIG GPU instance id, vNPU id; -1 when not known */
	int compute_instance; /* MIG compute instance id; -1 when not known */
	int64_t memory_mib;  /* -1 when not known */
	char uuid[96];       /* "" when not known */
};

/* A process using a device. Unknown: "" for text, -1 for numbers, NAN for utilization. */
struct xp_raw_proc {
	int64_t pid;         /* as the vendor reports it (the host's PID namespace) */
	char type[4];        /* "C" compute, "G" graphics, "C+G" (nvidia-smi's words) */
	char name[192];      /* the tool's process name, or the command line read from /proc live */
	char user[32];       /* the owner's name, read from /proc live (no vendor tool gives it) */
	int64_t memory_mib;  /* device memory it uses */
	double util_pct;     /* its share of the device's compute, when the vendor reports it */
};

/* One device as the vendor tool reports it. Unknown: "" for text, -1 for counts
 * and ids, NAN for measurements. */
struct xp_raw_device {
	int index;           /* the tool's own index (nvidia-smi/NVML GPU position, NPU id, card N) */
	int chip;            /* chip within a card (Ascend 310 cards hold four), 0 otherwise */
	char bus_id[32];     /* PCI bus id as the tool prints it (normalized by the host) */
	char name[128];      /* product name ("NVIDIA H100 80GB HBM3", "Ascend 910A") */
	char arch[64];       /* architecture/generation when the tool says ("Hopper", "gfx908") */
	char uuid[96];
	char serial[64];
	char driver[64];     /* driver version */
	char firmware[64];   /* VBIOS / firmware version */
	char runtime[64];    /* CUDA / CANN / ROCm version */
	int64_t memory_total_mib, memory_used_mib;
	double temperature_c, power_w, power_limit_w, utilization_pct;
	int64_t ecc_corrected, ecc_uncorrected, retired_pages;
	char health[32];     /* the vendor's own word ("OK", "Warning", "Alarm"); "" when none */
	char reasons[XP_RAW_MAX_REASONS][128]; /* why, in the vendor's words (throttle reasons, XIDs) */
	int n_reasons;
	int mig_mode;        /* -1 not applicable, 0 disabled, 1 enabled */
	struct xp_raw_slice slices[XP_RAW_MAX_SLICES];
	int n_slices;
	int numa;            /* NUMA node the tool reports, -1 when it does not */
	char group[64];      /* affinity group the tool reports (XGMI hive id), "" when none */
	int n_procs;         /* processes listed in procs; -1 when the tool does not list processes */
	struct xp_raw_proc procs[XP_RAW_MAX_PROCS];
	int procs_left_out;  /* processes listed beyond XP_RAW_MAX_PROCS (a warning said so once) */
};

/* What one adapter reports for the node it runs on. */
struct xp_raw_node {
	char hostname[256];  /* "" when the tool does not say */
	int n_devices;
	struct xp_raw_device devices[XP_RAW_MAX_DEVICES];
	/* Device x device link cells in `nvidia-smi topo -m` spelling ("X", "NV18", "PIX",
	 * "HCCS", "XGMI"), indexed by position in devices[]; "" when not known. */
	bool has_links;
	char links[XP_RAW_MAX_DEVICES][XP_RAW_MAX_DEVICES][8];
	int n_warnings;      /* things that were odd but not fatal ("row 3 truncated") */
	char warnings[XP_RAW_MAX_WARNINGS][160];
};

/* Services xpool gives adapters. */
struct xp_host {
	int abi;                /* XP_ADAPTER_ABI */
	const char *replay_dir; /* read recorded outputs from here instead of running tools; NULL live */
	/* Runs a vendor tool: argv (no shell), a timeout, at most max_out bytes of stdout, a clean
	 * environment. 0 with *out (free with host->free) on exit status 0; -1 with err set otherwise. */
	int (*run)(const char *const *argv, double timeout_s, size_t max_out, char **out, size_t *len,
		   char *err, size_t errlen);
	/* Reads file name from the replay directory: 1 with *out (free with host->free), 0 when the
	 * file is absent (that source is absent), -1 with err set when it cannot be read. */
	int (*replay)(const struct xp_host *h, const char *name, size_t max, char **out, size_t *len,
		      char *err, size_t errlen);
	/* Frees what run and replay returned. */
	void (*free)(void *p);
};

/* Probe results. */
enum xp_probe {
	XP_PROBE_UNAVAILABLE = -1, /* the vendor library or tool is missing or broken (reason given) */
	XP_PROBE_IDLE = 0,         /* works, but no matching hardware (or no recorded files) */
	XP_PROBE_ACTIVE = 1        /* hardware found */
};

/* One adapter. Functions return 0 on success, -1 with last_error set. */
struct xp_adapter {
	int abi;            /* XP_ADAPTER_ABI */
	const char *name;   /* "nvidia": the manifest's name and the .so's base name */
	/* Looks for the vendor library, tool or recorded files; *st is the adapter's state. */
	int (*probe)(const struct xp_host *h, void **st, char *err, size_t errlen);
	/* Fills node with every device: identity, memory, versions, metrics, health, partitions. */
	int (*enumerate)(void *st, struct xp_raw_node *node);
	/* Re-reads the metrics (memory used, temperature, power, utilization, ECC) of node's devices. */
	int (*refresh)(void *st, struct xp_raw_node *node);
	/* Re-reads the health fields of node's devices. */
	int (*health)(void *st, struct xp_raw_node *node);
	/* Fills node's link matrix (has_links, links). */
	int (*topology)(void *st, struct xp_raw_node *node);
	/* Why the last call failed. */
	const char *(*last_error)(void *st);
	/* Frees the state. */
	void (*close)(void *st);
};

/* Sets every field of a device to "unknown" (its process slots beyond n_procs are left as they were). */
void xp_raw_device_init(struct xp_raw_device *d);
/* Empties a node (no devices, no links, no warnings). */
void xp_raw_node_init(struct xp_raw_node *n);
/* Adds a warning to a node (printf style); extra warnings beyond the limit are dropped. */
void xp_raw_warn(struct xp_raw_node *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Copies src into a fixed field, cutting it to fit, and trims surrounding blanks. */
void xp_raw_set(char *dst, size_t size, const char *src, size_t len);

/* Adds a health reason to d unless it is there already or d has XP_RAW_MAX_REASONS. */
void xp_raw_add_reason(struct xp_raw_device *d, const char *reason);
/* The next slice of d (MIG device, vNPU), cleared, its ids and memory unknown (-1); NULL with
 * the warning "GPU N: more than XP_RAW_MAX_SLICES <what>; the rest are left out" when d is full. */
struct xp_raw_slice *xp_raw_add_slice(struct xp_raw_node *node, struct xp_raw_device *d, const char *what);
/* The next process of d, cleared, its numbers unknown; NULL with the warning "<unit> N: more
 * than XP_RAW_MAX_PROCS processes; the rest are left out" (once, counted in procs_left_out) when d is full. Sets d's list
 * known (n_procs from -1 to 0) either way. */
struct xp_raw_proc *xp_raw_add_proc(struct xp_raw_node *node, struct xp_raw_device *d, const char *unit);
/* Live only (never on replayed text): fills each process's user from /proc/PID/status's real
 * uid and, where /proc/PID/cmdline reads, its name with the command line, for the processes
 * /proc shows to be the ones the tool listed: /proc/PID/comm agrees with the tool's name, or,
 * the tool naming none, the process holds a file under dev_prefix ("/dev/nvidia") open. Any
 * other pid (gone, reused, another PID namespace's) keeps the tool's name and no user. */
void xp_raw_procs_from_proc(struct xp_raw_node *node, const char *dev_prefix);
/* Copies what a re-read refreshes from f onto d: the metrics and processes (metrics true) or
 * the health and its reasons, and the error counters either way. */
void xp_raw_copy_fresh(struct xp_raw_device *d, const struct xp_raw_device *f, bool metrics);
/* Re-reads the node with read(st, fresh) and copies what changed onto node's devices, matched
 * by index (xp_raw_copy_fresh); a device no longer listed gets the warning "<unit><index> is no
 * longer listed". -1 when read fails (it says why in the adapter's own error) or out of memory. */
int xp_raw_reread(struct xp_raw_node *node, bool metrics, int (*read)(void *st, struct xp_raw_node *fresh),
		  void *st, const char *unit, char *err, size_t errlen);

/* Finds prog's executable in PATH (a safe default when unset or empty; empty and relative
 * entries skipped, never the current directory), then in extra_dirs (NULL-terminated, may be
 * NULL); true with its path in out, false with out empty. */
bool xp_tool_find(const char *prog, const char *const *extra_dirs, char *out, size_t size);

/* Copies a line of n bytes into out without ANSI escape sequences and CRs; returns its length. */
size_t xp_text_clean_line(const char *s, size_t n, char *out, size_t size);
/* Reads the line at *pos of text (len bytes), cleaned as above, into line; false at the end. */
bool xp_text_next_line(const char *text, size_t len, size_t *pos, char *line, size_t size);
/* Trims surrounding white space in place; returns the first kept character. */
char *xp_text_trim(char *s);
/* Formats a parser's error message into err (errlen bytes); does nothing when err is NULL. */
void xp_text_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

struct _xmlDoc;
/* Parses len bytes of XML with libxml2 (encoding NULL: as the document says), quietly: xpool's
 * own error handlers for this parse only (never libxml2's, which print the input to stderr, nor
 * one another library left behind), no network. The document (free it with xmlFreeDoc), or
 * NULL with "line N: MESSAGE" (control bytes as '?') in err on any error. */
struct _xmlDoc *xp_xml_read(const char *text, size_t len, const char *encoding, char *err, size_t errlen);
/* Writes doc back as text in encoding (characters it cannot hold as character references),
 * quietly as above: a NUL-terminated copy the caller frees (length in len), or NULL. */
char *xp_xml_dump(struct _xmlDoc *doc, const char *encoding, size_t *len);

#endif
