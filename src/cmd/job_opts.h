/* job_opts.h: the options that describe a job, shared by `place --dry-run` and `job submit`
 * (one task group from flags, or a whole spec from -f FILE), and reading them into a job. */
#ifndef XP_JOB_OPTS_H
#define XP_JOB_OPTS_H

#include "cmd.h"
#include "jobspec.h"

/* The values --numa and --network take (prompt completion). */
const char *xp_job_numa_value(int i);
const char *xp_job_network_value(int i);

/* The job flags, as entries of a command's option table (place.c and cmd_job.c put them in
 * theirs; xp_job_opts_read looks them up by name). */
#define XP_JOB_OPTS                                                                                             \
	{"name", 0, "NAME", "the job's name"},                                                                  \
	{"kind", 0, "KIND", "train, infer, data or batch (train implies --homogeneous)"},                       \
	{"queue", 0, "NAME", "the queue the job is for"},                                                       \
	{"tenant", 0, "NAME", "the tenant the job runs for"},                                                   \
	{"priority", 0, "N", "larger goes first (default 0)"},                                                  \
	{"replicas", 0, "N", "replicas, all placed or none (default 1)"},                                       \
	{"gang-min", 0, "N", "place the job when N of its replicas fit; the rest wait (default: all)"},          \
	{"devices", 0, "N", "whole devices per replica (default 1)"},                                           \
	{"vendor", 0, "PATTERN", "vendor or adapter glob (\"Huawei\", \"ascend\")"},                            \
	{"model", 0, "PATTERN", "model glob (\"Ascend910*\")"},                                                 \
	{"memory", 0, "MIB", "device memory per device, slice or share"},                                       \
	{"ecu", 0, "N", "effective compute units per device, at least"},                                        \
	{"slice", 0, "NAME", "one MIG profile or vNPU template per replica"},                                   \
	{"share", 0, "PERCENT", "a soft share of one device per replica"},                                      \
	{"cpus", 0, "N", "CPUs per replica"},                                                                   \
	{"host-memory", 0, "MIB", "host memory per replica"},                                                   \
	{"label", 0, "K=V[,K=V]", "node labels that must hold"},                                                \
	{"homogeneous", 0, NULL, "same vendor, model and driver across the whole job"},                         \
	{"same-group", 0, NULL, "each replica's devices in one affinity group"},                                \
	{"numa", 0, "POLICY", "none, prefer or strict: a replica's devices in one NUMA domain",                 \
	 xp_job_numa_value},                                                                                    \
	{"network", 0, "SCOPE", "switch, rack or any: every replica under one switch or in one rack",           \
	 xp_job_network_value},                                                                                 \
	{"validated", 0, "LAYER[:CASE]", "devices proven to LAYER (for CASE, or any case) in the validation matrix"}

/* The job of a command line: read from the file of option "file" (-f), where none of the job
 * flags may stand except those named in also_with_file (" queue tenant "), or else built from
 * the job flags. NULL after printing "WORDS: why" with *code set to the exit code (2 for a bad
 * spec or a flag clash, 1 for a file that cannot be read). */
struct xp_job *xp_job_opts_read(struct xp_ctx *ctx, const struct xp_args *a, const char *words,
				const char *also_with_file, int *code);

/* The highest validation layer proven for d's environment and kase (any case when NULL) in
 * the store (a struct xp_store *; NULL: no database, nothing proven beyond discovery). A
 * device in the inventory is discovered by definition, even before `validate` recorded it.
 * What placement's and the scheduler's --validated read. */
int xp_job_validated_layer(void *store, const struct xp_device *d, const char *kase);

#endif
