/* trace.h: workload traces: a day of job submissions as JSON lines (a header, optional class
 * and queue lines, one line per job: submit time, queue, tenant, priority, estimate, actual
 * duration and the placement spec), read strictly (every error names FILE:LINE and the field),
 * written back, and generated from a seed (`xpool sim trace`) so that a what-if has realistic
 * load: bursty arrivals, heavy-tailed durations by job kind, gang jobs, slices.
 * The format is documented in xpool(1), TRACE FORMAT. */
#ifndef XP_TRACE_H
#define XP_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "manifest.h"
#include "model.h"
#include "qjob.h"
#include "qmodel.h"
#include "xp.h"

/* The format's version (the header's "xpool_trace"). */
#define XP_TRACE_VERSION 1
/* Most jobs one trace may hold (a week of a busy site is far less). */
#define XP_TRACE_MAX_JOBS 2000000
/* Longest line: a job spec at its limit (XP_JOB_MAX_BYTES) and the fields around it. */
#define XP_TRACE_MAX_LINE (XP_JOB_MAX_BYTES + 4096)
/* Largest submit time, estimate or duration, seconds (ten years). */
#define XP_TRACE_MAX_SECONDS (10LL * 366 * 86400)

/* A trace in memory. Job times are seconds from start. */
struct xp_trace {
	uint64_t seed;        /* the generator's seed (0 for a trace written by hand) */
	int64_t start;        /* epoch seconds of the header's "start" */
	struct xp_qset qs;    /* classes (cpu and mem first) and queues of its class and queue lines */
	bool has_queues;      /* it had queue lines (else the store's queues apply) */
	struct xp_qjob *jobs; /* pending, id = its order in the file (1..), name = its "id" */
	size_t n_jobs;
};

/* Reads the trace at path ("-": standard input). Errors are "PATH:LINE: field: message".
 * When the trace has queue lines, every job must name one of them. -1 with err. */
int xp_trace_read(const char *path, struct xp_trace *t, struct xp_err *err);
/* As xp_trace_read from an open stream, named name in errors. */
int xp_trace_read_file(FILE *f, const char *name, struct xp_trace *t, struct xp_err *err);
/* Writes t (header, classes that are not built in, queues when has_queues, jobs) to f;
 * -1 with err on a write error. */
int xp_trace_write(FILE *f, const struct xp_trace *t, struct xp_err *err);
/* Frees what t owns and zeroes it. */
void xp_trace_clear(struct xp_trace *t);

/* Most queues a generated trace may have. */
#define XP_TRACE_MAX_QUEUES 64
/* Job kinds when --mix is not given: percent of jobs by kind. */
#define XP_TRACE_DEFAULT_MIX "train:30,infer:30,batch:30,data:10"

/* What the generator makes. */
struct xp_trace_gen_opts {
	size_t jobs;          /* how many (1..XP_TRACE_MAX_JOBS) */
	uint64_t seed;
	int mix[XP_JOB_KIND_COUNT]; /* percent of jobs by enum xp_job_kind, adding to 100 */
	char **queues;        /* queue names (none: one queue "default") */
	double *weights;      /* their weights (> 0) */
	size_t n_queues;
	size_t tenants;       /* tenants tenant-1..tenant-N (0: 4) */
	double load;          /* offered device-time over the cluster's device-time (0: 0.85) */
	int64_t start;        /* epoch seconds of the trace's start (0: 2026-12-01T00:00:00Z) */
};

/* Parses a job --mix ("train:30,infer:70": whole percentages adding to 100; kinds train,
 * infer, data, batch) into mix; -1 with err naming the bad entry. */
int xp_trace_mix_parse(const char *spec, int mix[XP_JOB_KIND_COUNT], struct xp_err *err);
/* Parses --queues ("research:2,prod,batch:0.5": a weight defaults to 1) into o's queues;
 * -1 with err. */
int xp_trace_queues_parse(const char *spec, struct xp_trace_gen_opts *o, struct xp_err *err);
/* Frees the queues xp_trace_queues_parse put in o. */
void xp_trace_gen_opts_clear(struct xp_trace_gen_opts *o);

/* Generates a trace for cluster c (its accelerators decide models, sizes and the load's
 * scale; ms give each model's slices and allowed counts, may be none). Arrivals follow a
 * two-state Markov-modulated Poisson process (bursts at 8x the base rate lasting about ten
 * minutes, about one an hour), durations are log-normal by kind (medians: train 2h, infer
 * 30m, data 20m, batch 10m; sigma 1.5; 1 minute to 7 days), the estimate is the duration
 * times U[1,3] rounded up to 5 minutes; 20 % of train jobs are gangs of 2 to 64 whole nodes
 * (where a model has nodes of 8), the rest take 1, 2, 4 or 8 devices, 10 % of infer and
 * batch jobs take one slice where the model has slices. The mean rate is set so that the
 * offered device-time over the span of arrivals is o->load of the cluster's. Writes one
 * queue line per queue (weight only, no quotas). The same options and cluster give the same
 * trace, byte for byte. -1 with err (no accelerators in c). */
int xp_trace_gen(const struct xp_cluster *c, const struct xp_manifest *const *ms, size_t n_ms,
		 const struct xp_trace_gen_opts *o, struct xp_trace *t, struct xp_err *err);

#endif
