/* slurm_jobs.c: Slurm's jobs (squeue, one line a job, fields as XP_SLURM_SQUEUE_FORMAT) into
 * the queue model's jobs. */
#include <ctype.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format.h"
#include "jobspec.h"
#include "qjob.h"
#include "qmodel.h"
#include "run.h"
#include "slurm.h"
#include "slurm_json.h"
#include "whatif.h"

#define N_FIELDS 16 /* %i %P %T %Q %D %l %b %r %N %V %S %A %q %a %u, then %j (a name may hold '|': the rest of the line) */

/* Slurm's job state (squeue %T) onto xpool's; -1 when not one Slurm prints. */
static int job_state(const char *s, const char *reason)
{
	static const struct {
		const char *slurm;
		int xp;
	} m[] = {
		{"PENDING", XP_JS_PENDING},        {"REQUEUED", XP_JS_PENDING},   {"REQUEUE_FED", XP_JS_PENDING},
		{"RESV_DEL_HOLD", XP_JS_HELD},     {"REQUEUE_HOLD", XP_JS_HELD},  {"SPECIAL_EXIT", XP_JS_HELD},
		{"CONFIGURING", XP_JS_RUNNING},    {"RUNNING", XP_JS_RUNNING},    {"COMPLETING", XP_JS_RUNNING},
		{"SUSPENDED", XP_JS_RUNNING},      {"STAGE_OUT", XP_JS_RUNNING},  {"SIGNALING", XP_JS_RUNNING},
		{"RESIZING", XP_JS_RUNNING},       {"STOPPED", XP_JS_RUNNING},    {"COMPLETED", XP_JS_COMPLETED},
		{"CANCELLED", XP_JS_CANCELLED},    {"REVOKED", XP_JS_CANCELLED},  {"PREEMPTED", XP_JS_PREEMPTED},
		{"FAILED", XP_JS_FAILED},          {"TIMEOUT", XP_JS_FAILED},     {"NODE_FAIL", XP_JS_FAILED},
		{"OUT_OF_MEMORY", XP_JS_FAILED},   {"BOOT_FAIL", XP_JS_FAILED},   {"DEADLINE", XP_JS_FAILED},
	};
	for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
		if (strcmp(s, m[i].slurm) == 0) {
			/* A pending job held by its user or an operator is held. */
			if (m[i].xp == XP_JS_PENDING && strncmp(reason, "JobHeld", 7) == 0)
				return XP_JS_HELD;
			return m[i].xp;
		}
	return -1;
}

/* Slurm's pending reason (squeue %r, its words kept in reason_text) onto xpool's codes. */
static int job_reason(const char *r)
{
	if (strcmp(r, "Resources") == 0 || strncmp(r, "ReqNodeNotAvail", 15) == 0 || strcmp(r, "Nodes_required_for_job_are_DOWN,_DRAINED_or_reserved_for_jobs_in_higher_priority_partitions") == 0)
		return XP_R_RESOURCES;
	if (strcmp(r, "Priority") == 0)
		return XP_R_PRIORITY;
	if (strncmp(r, "QOSGrp", 6) == 0 || strncmp(r, "QOSMax", 6) == 0 || strncmp(r, "AssocGrp", 8) == 0 ||
	    strncmp(r, "AssocMax", 8) == 0 || strncmp(r, "Licenses", 8) == 0)
		return XP_R_QUOTA;
	if (strcmp(r, "BadConstraints") == 0)
		return XP_R_AFFINITY;
	if (strncmp(r, "JobHeld", 7) == 0)
		return XP_R_HELD;
	if (strcmp(r, "PartitionDown") == 0 || strcmp(r, "PartitionInactive") == 0)
		return XP_R_QUEUE_INACTIVE;
	/* Dependency, BeginTime, PartitionTimeLimit and the rest: waiting for something other than
	 * devices, said in Slurm's words; Resources is the nearest code xpool has. */
	return XP_R_RESOURCES;
}

/* "UNLIMITED", "MM:SS", "HH:MM:SS", "D-HH:MM:SS", "D-HH": seconds; -1 when none of those. */
static int64_t time_limit(const char *s)
{
	if (strcmp(s, "UNLIMITED") == 0 || strcmp(s, "INFINITE") == 0 || strcmp(s, "NOT_SET") == 0)
		return 100LL * 365 * 86400; /* no limit: a century, far past any horizon (a what-if's
					     * is at most 366 days), so such a job never ends in a run */
	int64_t d = 0, part[3] = {0};
	int n = 0;
	const char *p = s;
	const char *dash = strchr(s, '-');
	if (dash) {
		char *end;
		long long v = strtoll(s, &end, 10);
		if (end != dash || v < 0 || v > 100000)
			return -1;
		d = v;
		p = dash + 1;
	}
	while (*p) {
		if (n == 3 || !isdigit((unsigned char)*p))
			return -1;
		char *end;
		long v = strtol(p, &end, 10);
		if (end - p > 6)
			return -1;
		part[n++] = v;
		p = end;
		if (*p == ':')
			p++;
		else if (*p)
			return -1;
	}
	int64_t secs;
	if (dash)
		secs = n == 1 ? part[0] * 3600 : n == 2 ? part[0] * 3600 + part[1] * 60
						     : part[0] * 3600 + part[1] * 60 + part[2];
	else if (n == 2)
		secs = part[0] * 60 + part[1];
	else if (n == 3)
		secs = part[0] * 3600 + part[1] * 60 + part[2];
	else if (n == 1)
		secs = part[0] * 60;
	else
		return -1;
	secs += d * 86400;
	return secs > 0 ? secs : 60;
}

/* "2026-12-02T05:42:35" (squeue's local time) as epoch seconds; -2 for what Slurm prints when
 * there is none (N/A, Unknown, None); -1 when malformed. */
static int64_t slurm_time(const char *s)
{
	if (!*s || strcmp(s, "N/A") == 0 || strcmp(s, "Unknown") == 0 || strcmp(s, "None") == 0)
		return -2;
	struct tm tm = {0};
	int n = 0;
	if (strlen(s) != 19 || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
				       &tm.tm_min, &tm.tm_sec, &n) != 6 || n != 19)
		return -1;
	if (tm.tm_year < 1970 || tm.tm_year > 9999 || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
	    tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	tm.tm_isdst = -1;
	time_t t = mktime(&tm);
	return t < 0 ? -1 : (int64_t)t;
}

/* The devices per node a job asks (squeue %b: "gres:gpu:h100:4", "gres/gpu:4", "N/A", a list):
 * the first accelerator GRES, its type as the model and its name's vendor when the name says
 * one (npu, mlu, dcu). 0 when it asks none; -1 when malformed. */
static int per_node(const char *b, char *model, size_t msize, const char **vendor, char *gres, size_t gsize)
{
	model[0] = '\0';
	gres[0] = '\0';
	*vendor = NULL;
	if (!*b || strcmp(b, "N/A") == 0 || strcmp(b, "(null)") == 0)
		return 0;
	for (const char *s = b; *s;) {
		size_t l = strcspn(s, ",");
		char item[256];
		if (l >= sizeof item)
			return -1;
		memcpy(item, s, l);
		item[l] = '\0';
		s += l + (s[l] == ',');
		char *t = item;
		if (strncmp(t, "gres:", 5) == 0 || strncmp(t, "gres/", 5) == 0)
			t += 5;
		char *parts[3] = {t, NULL, NULL};
		int np = 1;
		for (char *c = t; *c && np < 3; c++)
			if (*c == ':') {
				*c = '\0';
				parts[np++] = c + 1;
			}
		if (!xp_slurm_gres_is_device(parts[0]))
			continue;
		const char *num = np == 3 ? parts[2] : np == 2 && isdigit((unsigned char)parts[1][0]) ? parts[1] : "1";
		if (np == 3 || (np == 2 && !isdigit((unsigned char)parts[1][0])))
			snprintf(model, msize, "%s", parts[1]);
		*vendor = xp_slurm_gres_vendor(parts[0], model);
		snprintf(gres, gsize, "%s", parts[0]);
		char *end;
		long v = strtol(num, &end, 10);
		if (end == num || *end || v < 0 || v > XP_MAX_DEVICES)
			return -1;
		return (int)v;
	}
	return 0;
}

/* A word squeue prints for "none" in %q, %a, %u. */
static bool none_word(const char *s)
{
	return !*s || strcmp(s, "(null)") == 0 || strcmp(s, "N/A") == 0;
}

/* The queue of a job asking partitions (squeue %P: "train" or "train,cpu", Slurm's order)
 * with QOS qos (NULL: none) and reason: the QOS's queue ("qos.NAME") when set has it with
 * limits, or the reason is one of the QOS's limits; else the first partition set has open (a job
 * asking several starts in whichever takes it first), the first set has, or the first one.
 * *part gets the partition (a copy). */
static char *job_queue(const char *parts, const char *qos, const char *reason, const struct xp_qset *set,
		       char **part)
{
	*part = NULL;
	char *first = NULL, *present = NULL, *open = NULL;
	for (const char *s = parts; *s;) {
		size_t l = strcspn(s, ",");
		char *p = xp_strndup(s, l);
		s += l + (s[l] == ',');
		const struct xp_queue *q = set ? xp_qset_queue(set, p) : NULL;
		if (!first)
			first = xp_strdup(p);
		if (q && !present)
			present = xp_strdup(p);
		if (q && q->state == XP_QS_OPEN && !open)
			open = xp_strdup(p);
		free(p);
	}
	*part = open ? open : present ? present : first ? first : xp_strdup(parts);
	if (*part != open)
		free(open);
	if (*part != present)
		free(present);
	if (*part != first)
		free(first);
	/* A QOS with limits (GrpTRES as quotas) holds all its jobs, running ones included: what
	 * they use counts against the limit, so one pending for it waits (review: only pending
	 * ones were there, and the limit never held anything back). Without limits, the
	 * partition is the queue, or the QOS when the reason names it. */
	if (qos && set) {
		char *qn = xp_asprintf("qos.%s", qos);
		const struct xp_queue *q = xp_qset_queue(set, qn);
		if (q && (q->n_quotas > 0 || strncmp(reason, "QOS", 3) == 0))
			return qn;
		free(qn);
	}
	return xp_strdup(*part);
}

int xp_slurm_parse_jobs(const char *text, size_t len, const char *what, struct xp_qjob **out, size_t *n_out,
			struct xp_err *err)
{
	return xp_slurm_parse_jobs_in(text, len, what, NULL, out, n_out, err);
}

/* The largest array task id Slurm gives: MaxArraySize may not exceed 4000001 (slurm.conf),
 * and task ids are below it. A larger one is not Slurm's (and LONG_MAX would overflow the
 * loop that lists a range's tasks). */
#define MAX_TASK_ID 4000000L

/* The tasks of an array's pending rest as squeue prints it ("1-3", "1,4,7-9", "1-8%2": at most
 * 2 at once), into *tasks (*n of them, at most max); -1 when it is not such a list. */
static int array_tasks(const char *s, size_t len, long **tasks, size_t *n, size_t max)
{
	*tasks = NULL;
	*n = 0;
	const char *end = s + len;
	const char *pct = memchr(s, '%', len);
	if (pct)
		end = pct; /* the throttle: Slurm's to keep, not a task */
	size_t cap = 0;
	for (const char *p = s; p < end;) {
		char *e;
		long a = strtol(p, &e, 10), b = a;
		if (e == p || a < 0 || a > MAX_TASK_ID || e > end)
			goto bad;
		p = e;
		if (p < end && *p == '-') {
			b = strtol(p + 1, &e, 10);
			if (e == p + 1 || b < a || b > MAX_TASK_ID || e > end)
				goto bad;
			p = e;
		}
		/* A step ("1-9:2") is read as every task of the range: an upper bound. */
		if (p < end && *p == ':') {
			strtol(p + 1, &e, 10);
			p = e;
		}
		for (long k = a; k <= b; k++) {
			if (*n >= max)
				goto bad;
			xp_grow((void **)tasks, sizeof **tasks, *n, &cap);
			(*tasks)[(*n)++] = k;
		}
		if (p < end && *p == ',')
			p++;
		else if (p < end)
			goto bad;
	}
	return *n ? 0 : -1;
bad:
	free(*tasks);
	*tasks = NULL;
	*n = 0;
	return -1;
}

/* Most tasks one pending array row stands for (Slurm's MaxArraySize is 1001 by default). */
#define MAX_ARRAY_TASKS 100000

/* squeue prints an array's tasks that have not started as one row ("7_[2-5]"): each is a job
 * of its own to Slurm, and waits for devices of its own. They become one job each, named
 * "7_2" ... (ids past Slurm's 32-bit ones: unique, and never one of Slurm's). The components
 * of a heterogeneous job ("8+0", "8+1") start together: they become one job of one group a
 * component. The rest stay as read. */
static void arrays_and_het(struct xp_qjob **jobs, size_t *n)
{
	struct xp_qjob *in = *jobs;
	size_t nin = *n, cap = nin + 1, k = 0;
	struct xp_qjob *out = xp_calloc(cap, sizeof *out);
	for (size_t i = 0; i < nin; i++) {
		struct xp_qjob *j = &in[i];
		const char *id = j->engine_id ? j->engine_id : "";
		const char *us = strchr(id, '_'), *plus = strchr(id, '+');
		size_t il = strlen(id);
		long *tasks = NULL;
		size_t nt = 0;
		if (us && us[1] == '[' && il > 0 && id[il - 1] == ']' &&
		    (j->state == XP_JS_PENDING || j->state == XP_JS_HELD) &&
		    array_tasks(us + 2, (size_t)(id + il - 1 - (us + 2)), &tasks, &nt, MAX_ARRAY_TASKS) == 0 && nt > 1) {
			for (size_t t = 0; t < nt; t++) {
				xp_grow((void **)&out, sizeof *out, k, &cap);
				xp_qjob_copy(&out[k], j);
				free(out[k].engine_id);
				out[k].engine_id = xp_asprintf("%.*s_%ld", (int)(us - id), id, tasks[t]);
				if (t)
					out[k].id = j->id + ((int64_t)t << 32);
				k++;
			}
			free(tasks);
			xp_qjob_clear(j);
			continue;
		}
		free(tasks);
		if (plus && j->spec && j->spec->n_groups == 1) {
			/* A later component joins the first one read of its job as one more group. */
			size_t base = (size_t)(plus - id);
			struct xp_qjob *first = NULL;
			for (size_t m = 0; m < k && !first; m++) {
				const char *oid = out[m].engine_id ? out[m].engine_id : "";
				if (strncmp(oid, id, base + 1) == 0 && out[m].spec)
					first = &out[m];
			}
			if (first) {
				struct xp_job *sp = first->spec;
				sp->groups = xp_realloc(sp->groups, (sp->n_groups + 1) * sizeof *sp->groups);
				sp->groups[sp->n_groups++] = j->spec->groups[0];
				free(j->spec->groups);
				j->spec->groups = NULL;
				j->spec->n_groups = 0;
				/* The job waits while any component does; it runs when all do. */
				if (j->state == XP_JS_PENDING || j->state == XP_JS_HELD) {
					first->state = j->state;
					first->reason = j->reason;
					free(first->reason_text);
					first->reason_text = xp_strdup(j->reason_text);
				}
				char *eid = xp_asprintf("%.*s", (int)base, id);
				free(first->engine_id);
				first->engine_id = eid;
				xp_qjob_clear(j);
				continue;
			}
		}
		xp_grow((void **)&out, sizeof *out, k, &cap);
		out[k++] = *j;
		memset(j, 0, sizeof *j);
	}
	free(in);
	*jobs = out;
	*n = k;
}

int xp_slurm_parse_jobs_in(const char *text, size_t len, const char *what, const struct xp_qset *set,
			   struct xp_qjob **out, size_t *n_out, struct xp_err *err)
{
	*out = NULL;
	*n_out = 0;
	size_t line_no = 0, pos = 0, cap = 0;
	int rc = 0;
	while (pos < len && rc == 0) {
		const char *s;
		size_t l;
		int nl = xp_slurm_next_line(text, len, &pos, &s, &l);
		line_no++;
		if (l == 0)
			continue;
		rc = xp_slurm_line_check(s, l, nl, err);
		if (rc == 0 && *n_out >= 10000000)
			rc = xp_errf(err, "more than 10000000 jobs");
		if (rc < 0)
			break;
		char *copy = xp_strndup(s, l);
		char *f[N_FIELDS];
		size_t nf = 0;
		for (char *p = copy; nf < N_FIELDS;) {
			f[nf++] = p;
			if (nf == N_FIELDS)
				break;
			char *bar = strchr(p, '|');
			if (!bar)
				break;
			*bar = '\0';
			p = bar + 1;
		}
		struct xp_qjob j = {0};
		char model[128], gres[256];
		char *end;
		long long id = 0, prio = 0, nodes = 0;
		int per = 0;
		const char *vendor = NULL;
		int64_t est = 0, submit = 0, start = 0;
		if (nf < N_FIELDS)
			rc = xp_errf(err, "%zu fields, not %d ('|'-separated %s)", nf, N_FIELDS, XP_SLURM_SQUEUE_FORMAT);
		else if (strtoll(f[0], &end, 10) <= 0 || (*end && *end != '_' && *end != '+') || strlen(f[0]) > 64)
			rc = xp_errf(err, "field 1 (job id): '%.40s' is not a job id", f[0]);
		else if ((id = strtoll(f[11], &end, 10)) <= 0 || *end || id > 4294967295LL)
			/* Slurm's job ids are 32-bit: an array's tasks get ids above that range. */
			rc = xp_errf(err, "field 12 (job id, %%A): '%.40s' is not a job id", f[11]);
		else if ((j.state = job_state(f[2], f[7])) < 0)
			rc = xp_errf(err, "field 3 (state): '%.40s' is not a Slurm job state", f[2]);
		else if ((prio = strtoll(f[3], &end, 10)) < 0 || *end || end == f[3] || prio > 4294967295LL)
			rc = xp_errf(err, "field 4 (priority): '%.40s' is not a number", f[3]);
		else if ((nodes = strtoll(f[4], &end, 10)) < 0 || *end || end == f[4] || nodes > 1000000)
			rc = xp_errf(err, "field 5 (nodes): '%.40s' is not a node count", f[4]);
		else if ((est = time_limit(f[5])) < 0)
			rc = xp_errf(err, "field 6 (time limit): '%.40s' is not a time", f[5]);
		else if ((per = per_node(f[6], model, sizeof model, &vendor, gres, sizeof gres)) < 0)
			rc = xp_errf(err, "field 7 (GRES per node): '%.60s' is not a GRES list", f[6]);
		else if ((submit = slurm_time(f[9])) == -1)
			rc = xp_errf(err, "field 10 (submit time): '%.40s' is not a time", f[9]);
		else if ((start = slurm_time(f[10])) == -1)
			rc = xp_errf(err, "field 11 (start time): '%.40s' is not a time", f[10]);
		if (rc == 0) {
			/* %A: an array's tasks ("7_1", "7_[2-5]") and a heterogeneous job's
			 * components ("8+0", "8+1") share %i's number but not %A; %i is kept as
			 * Slurm's own id of the row. */
			j.id = id;
			j.engine_id = xp_mask_controls(xp_strdup(f[0]));
			j.engine_gres = gres[0] ? xp_strdup(gres) : NULL;
			/* Words any Slurm user chooses (a job's name, and what Slurm echoes of them)
			 * reach a terminal: their control bytes masked. */
			j.name = *f[15] ? xp_mask_controls(xp_strndup(f[15], 255)) : NULL;
			j.engine = "slurm";
			j.nodes = *f[8] ? xp_mask_controls(xp_strndup(f[8], 4096)) : NULL;
			/* The account is the tenant (fair-share's unit); none without accounting. */
			j.tenant = none_word(f[13]) || xp_qname_check(f[13], "account", NULL) < 0 ? NULL : xp_strdup(f[13]);
			char *part;
			j.queue = job_queue(f[1], none_word(f[12]) ? NULL : f[12], f[7], set, &part);
			/* Slurm's priority is a 32-bit unsigned number; one past INT_MAX (PriorityType=
			 * priority/basic counts down from 2^32) is kept at INT_MAX. */
			j.priority = prio > INT_MAX ? INT_MAX : (int)prio;
			j.est_s = est;
			j.actual_s = -1;
			j.start = j.end = -1;
			j.submit = submit >= 0 ? submit : 0;
			/* A pending job's %S is Slurm's expected start, not a start. */
			if (j.state == XP_JS_RUNNING && start >= 0)
				j.start = start;
			j.eta = -1;
			j.alloc.commit = -1;
			if (j.state == XP_JS_PENDING || j.state == XP_JS_HELD) {
				j.reason = job_reason(f[7]);
				j.reason_text = xp_mask_controls(xp_strndup(f[7], 1024));
			}
			struct xp_job *spec = xp_calloc(1, sizeof *spec);
			spec->kind = XP_JOB_BATCH;
			spec->queue = xp_strdup(j.queue);
			spec->priority = j.priority;
			spec->form = XP_JOB_FORM_FLAGS;
			spec->groups = xp_calloc(1, sizeof *spec->groups);
			spec->n_groups = 1;
			struct xp_task_group *g = &spec->groups[0];
			g->replicas = nodes > 0 ? (int)nodes : 1;
			g->gang_min = g->replicas;
			g->devices = per;
			g->model = model[0] ? xp_strdup(model) : NULL;
			g->vendor = vendor ? xp_strdup(vendor) : NULL;
			/* Only the partition's nodes (their Partitions= field: see xp_slurm_parse_nodes);
			 * a job asking several may go to any of theirs (Slurm starts it in whichever
			 * takes it first): the nodes of the set carry its label in a run's cluster
			 * (xp_slurm_partsets). */
			char *key = strchr(f[1], ',') && strlen(f[1]) < 512 ? xp_asprintf("%s%s", XP_SLURM_PARTSET, f[1])
									      : xp_asprintf("slurm.partition.%s", part);
			for (char *c = key; *c; c++)
				if (*c == ',') /* a selector's key holds no ',' (job specs refuse one) */
					*c = '+';
			xp_labels_set(&g->labels, key, "true");
			free(key);
			free(part);
			g->memory_mib = 0;
			g->host_memory_mib = 0;
			g->min_ecu = 0;
			g->validated_layer = -1;
			j.spec = spec;
			if (*n_out == cap) {
				cap = cap ? cap * 2 : 16;
				*out = xp_realloc(*out, cap * sizeof **out);
			}
			(*out)[(*n_out)++] = j;
		}
		free(copy);
	}
	if (rc < 0)
		xp_err_prefix(err, "%s: line %zu", what, line_no);
	else
		arrays_and_het(out, n_out);
	return rc;
}

/* Runs a Slurm client command with SLURM_CONF=conf (as xp_slurm_load): its output in *out.
 * status NULL: a failure is an error; else its stderr is merged into *out and its exit
 * status kept in *status (a refusal is an answer: no accounting). */
static int run_client_st(const char *const *argv, const char *conf, const char *what, char **out, size_t *len,
			 int *status, struct xp_err *err)
{
	char *setting;
	if (xp_slurm_conf_setting(conf, &setting, err) < 0)
		return -1;
	/* squeue prints times in its local time: the caller's TZ, so that mktime here reads
	 * them in the same zone. */
	const char *tz = getenv("TZ");
	char *tzs = tz ? xp_asprintf("TZ=%s", tz) : NULL;
	const char *env[3] = {NULL, NULL, NULL};
	size_t k = 0;
	if (setting)
		env[k++] = setting;
	if (tzs)
		env[k++] = tzs;
	char msg[512];
	*out = NULL;
	*len = 0;
	int rc = status ? xp_run_tool_answer(argv, env, 30.0, XP_SLURM_MAX_OUTPUT, out, len, status, msg, sizeof msg)
			: xp_run_tool_env(argv, env, 30.0, XP_SLURM_MAX_OUTPUT, out, len, msg, sizeof msg);
	free(setting);
	free(tzs);
	if (rc < 0)
		return xp_errf(err, "slurm: %s (%s)", msg, what);
	return 0;
}

static int run_client(const char *const *argv, const char *conf, const char *what, char **out, size_t *len,
		      struct xp_err *err)
{
	return run_client_st(argv, conf, what, out, len, NULL, err);
}

/* The first line of a client's answer, control bytes masked, at most 160 bytes (caller frees). */
static char *first_line(const char *out, size_t len)
{
	size_t l = 0;
	while (l < len && l < 160 && out[l] != '\n' && out[l] != '\0')
		l++;
	return xp_mask_controls(xp_strndup(out, l));
}

/* Asks a client that needs Slurm's accounting (sacctmgr, sshare): its answer in *out, or a
 * note in set saying why there is none ("QOS not available (no accounting: ...)"); 0 when
 * it answered. */
static int accounting_ask(const char *const *argv, const char *conf, const char *what, const char *topic,
			  struct xp_qset *set, char **out, size_t *len)
{
	struct xp_err e = {{0}};
	int status = 0;
	/* Its answer is stdout alone: a warning on stderr must not read as a line of it. */
	if (run_client(argv, conf, what, out, len, &e) == 0)
		return 0;
	/* It failed: asked again with stderr kept, for the words of its refusal. */
	memset(&e, 0, sizeof e);
	if (run_client_st(argv, conf, what, out, len, &status, &e) < 0) {
		char *n = xp_asprintf("%s not available (%s)", topic, e.msg);
		xp_strv_add(&set->notes, &set->n_notes, n);
		free(n);
		return -1;
	}
	char *w = first_line(*out, *len);
	char *n = xp_asprintf("%s not available (no accounting: %s: %s)", topic, what, *w ? w : "failed");
	xp_strv_add(&set->notes, &set->n_notes, n);
	free(n);
	free(w);
	free(*out);
	*out = NULL;
	return -1;
}

int xp_slurm_load_queues(const char *conf, struct xp_qset *set, struct xp_qjob **jobs, size_t *n_jobs,
			 struct xp_err *err)
{
	*jobs = NULL;
	*n_jobs = 0;
	const char *pargv[] = {"scontrol", "show", "partition", "-o", NULL};
	const char *pwhat = "scontrol show partition -o";
	/* -a: hidden partitions too; -t all: every state squeue still remembers. */
	const char *jargv[] = {"squeue", "-h", "-a", "-t", "all", "-o", XP_SLURM_SQUEUE_FORMAT, NULL};
	const char *jwhat = "squeue";
	char *out;
	size_t len;
	if (run_client(pargv, conf, pwhat, &out, &len, err) < 0)
		return -1;
	int rc = xp_slurm_parse_partitions(out, len, pwhat, set, err);
	free(out);
	if (rc < 0) {
		xp_err_prefix(err, "slurm");
		return -1;
	}
	/* QOS before the jobs: a job pending for its QOS's limit is in the QOS's queue. */
	const char *qargv[] = {"sacctmgr", "-P", "-n", "show", "qos", "format=" XP_SLURM_QOS_FORMAT, NULL};
	if (accounting_ask(qargv, conf, "sacctmgr", "QOS", set, &out, &len) == 0) {
		struct xp_err e = {{0}};
		if (xp_slurm_parse_qos(out, len, "sacctmgr show qos", set, &e) < 0) {
			/* Read up to the bad line; what could not be read is said, not fatal. */
			char *n = xp_asprintf("QOS partly read (%s)", e.msg);
			xp_strv_add(&set->notes, &set->n_notes, n);
			free(n);
		}
		free(out);
	}
	const char *sargv[] = {"sshare", "-a", "-P", "-l", NULL};
	if (accounting_ask(sargv, conf, "sshare", "fair-share", set, &out, &len) == 0) {
		struct xp_err e = {{0}};
		if (xp_slurm_parse_sshare(out, len, "sshare -a -P -l", set, &e) < 0) {
			char *n = xp_asprintf("fair-share not read (%s)", e.msg);
			xp_strv_add(&set->notes, &set->n_notes, n);
			free(n);
		}
		free(out);
	}
	/* squeue --json where this Slurm has it (slurm_json.c, XPOOL_SLURM_JSON): these lines made
	 * from it; 0: it has not, squeue's own are read. */
	rc = xp_slurm_json_jobs(conf, &out, &len, &jwhat, err);
	if (rc < 0)
		return -1;
	if (rc == 0 && run_client(jargv, conf, jwhat, &out, &len, err) < 0)
		return -1;
	rc = xp_slurm_parse_jobs_in(out, len, jwhat, set, jobs, n_jobs, err);
	free(out);
	if (rc < 0)
		xp_err_prefix(err, "slurm");
	return rc;
}

/* The label a job's group selects its nodes with (slurm.partition.NAME, or a set of them
 * XP_SLURM_PARTSET "A+B"), or NULL; *name what follows the prefix. */
static const char *group_partition(const struct xp_task_group *g, const char **name)
{
	size_t pl = strlen(XP_SLURM_PARTSET);
	for (size_t i = 0; i < g->labels.n; i++) {
		if (strncmp(g->labels.keys[i], "slurm.partition.", 16) == 0) {
			*name = g->labels.keys[i] + 16;
			return g->labels.keys[i];
		}
		if (strncmp(g->labels.keys[i], XP_SLURM_PARTSET, pl) == 0) {
			*name = g->labels.keys[i] + pl;
			return g->labels.keys[i];
		}
	}
	return NULL;
}

/* Whether node n is in one of the partitions of set ("A+B"). */
static bool in_partset(const struct xp_node *n, const char *set)
{
	for (const char *s = set; *s;) {
		size_t l = strcspn(s, "+");
		char *key = xp_asprintf("slurm.partition.%.*s", (int)l, s);
		const char *v = xp_labels_get(&n->governance, key);
		free(key);
		if (v && strcmp(v, "true") == 0)
			return true;
		s += l + (s[l] == '+');
	}
	return false;
}

void xp_slurm_partsets(struct xp_cluster *c, const struct xp_qjob *jobs, size_t n)
{
	size_t pl = strlen(XP_SLURM_PARTSET);
	char **sets = NULL;
	size_t n_sets = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t g = 0; jobs[i].spec && g < jobs[i].spec->n_groups; g++) {
			const struct xp_labels *l = &jobs[i].spec->groups[g].labels;
			for (size_t k = 0; k < l->n; k++)
				if (strncmp(l->keys[k], XP_SLURM_PARTSET, pl) == 0)
					xp_strv_add_once(&sets, &n_sets, l->keys[k]);
		}
	for (size_t i = 0; n_sets && i < c->n_nodes; i++) {
		bool own = false;
		for (size_t k = 0; k < n_sets; k++) {
			if (!in_partset(c->nodes[i], sets[k] + pl) || xp_labels_get(&c->nodes[i]->governance, sets[k]))
				continue;
			/* Another cluster (the context's) holds this node too: a copy changes. */
			if (!own && __atomic_load_n(&c->nodes[i]->refs, __ATOMIC_ACQUIRE) != 0) {
				struct xp_node *copy = xp_node_clone(c->nodes[i]);
				xp_node_free(c->nodes[i]);
				c->nodes[i] = copy;
			}
			own = true;
			xp_labels_set(&c->nodes[i]->governance, sets[k], "true");
		}
	}
	for (size_t k = 0; k < n_sets; k++)
		free(sets[k]);
	free(sets);
}

char *xp_slurm_job_fit(struct xp_qjob *j, const struct xp_cluster *c)
{
	if (!j->spec || !j->spec->n_groups || !c)
		return NULL;
	struct xp_task_group *g = &j->spec->groups[0];
	if (!g->devices && !g->slice && g->share_pct <= 0)
		return xp_strdup("asks no accelerator (no GRES): xpool places devices, Slurm places its CPUs");
	if (g->vendor || g->model)
		return NULL;
	/* Untyped ("gres/gpu:2"): the kind of the partition's GPUs when they are all one. */
	const char *part = NULL;
	const char *label = group_partition(g, &part);
	char *key = label ? xp_strdup(label) : NULL;
	const char *seen[8]; /* the kinds so far, by model (interned): a few are enough to say */
	char kinds[256] = "";
	size_t n_kinds = 0, kl = 0;
	const char *vendor = NULL, *model = NULL;
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct xp_node *n = c->nodes[i];
		const char *v = key ? xp_labels_get(&n->governance, key) : NULL;
		if (key && (!v || strcmp(v, "true") != 0))
			continue;
		for (size_t k = 0; k < n->n_devices; k++) {
			const struct xp_device *d = &n->devices[k];
			if (!d->os_devices || strcmp(d->os_devices[0], "gpu") != 0 || !d->model)
				continue;
			bool known = false;
			for (size_t s = 0; s < n_kinds && s < 8 && !known; s++)
				known = strcmp(seen[s], d->model) == 0;
			if (known || n_kinds == 8)
				continue;
			if (n_kinds == 0) {
				vendor = d->vendor;
				model = d->model;
			}
			if (n_kinds < 8)
				seen[n_kinds] = d->model;
			if (kl < sizeof kinds - 1)
				kl += (size_t)snprintf(kinds + kl, sizeof kinds - kl, "%s%s", n_kinds ? ", " : "", d->model);
			n_kinds++;
		}
	}
	free(key);
	if (n_kinds == 1) {
		g->vendor = vendor ? xp_strdup(vendor) : NULL;
		g->model = xp_strdup(model);
		return NULL;
	}
	if (n_kinds > 1)
		return xp_asprintf("asks untyped gres/gpu, and %s%s's GPUs are of %zu kinds (%s): ambiguous",
				   part ? "partition " : "the cluster", part ? part : "", n_kinds, kinds);
	return NULL;
}
