/* slurm_compare.h: Slurm's own answer for a placement request (`place --dry-run --compare`):
 * the sbatch script xpool's Slurm export writes for the job, less the nodes it pinned, given
 * to `sbatch --test-only` (an argv, never a shell; nothing is submitted), and its one-line
 * answer read: "Job N to start at T using P processors on nodes X in partition Q" (a
 * heterogeneous job: "... processors on X"), or a refusal ("allocation failure: Requested
 * node configuration is not available"). Read-only: Slurm's state does not change. */
#ifndef XP_SLURM_COMPARE_H
#define XP_SLURM_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "xp.h"

/* A time Slurm gives within this many seconds of the ask counts as "now" (slurmctld answers
 * with the moment it evaluated the request, a little after it was sent). */
#define XP_SLURM_NOW_SLACK_S 60
/* Most nodes one hostlist expression may expand to (a hostile "n[0-999999999]" is refused). */
#define XP_SLURM_MAX_HOSTS 100000

/* What sbatch --test-only answered. */
struct xp_slurm_answer {
	bool will_run;    /* true: a start time and nodes; false: refused, error says why */
	long long job_id; /* the id it would have had (nothing is submitted) */
	time_t start;     /* the start time, read as UTC (sbatch runs with TZ=UTC) */
	char start_text[32]; /* as Slurm printed it ("2026-12-02T05:40:37") */
	unsigned procs;   /* processors it would use */
	char *nodelist;   /* Slurm's hostlist expression ("gpu[01-02]") */
	char **nodes;     /* the expression expanded, in Slurm's order */
	size_t n_nodes;
	char *partition;  /* NULL when not printed (a heterogeneous job's answer names none) */
	char *error;      /* the refusal in Slurm's words (control bytes dropped), when !will_run */
};

/* Removes the scripts of sbatch --test-only questions still running (registered with atexit
 * by the first question, so a console quitting mid-question leaves none behind). */
void xp_slurm_test_only_clean(void);

/* Frees what a holds and zeroes it. */
void xp_slurm_answer_clear(struct xp_slurm_answer *a);
/* Expands a Slurm hostlist ("gpu[01-03,7],npu01") into *nodes (n of them; free each, then
 * the array). 0, or -1 with err on a malformed expression, more than one bracket in a name,
 * or more than XP_SLURM_MAX_HOSTS names. */
int xp_slurm_hostlist(const char *expr, char ***nodes, size_t *n, struct xp_err *err);
/* Parses sbatch --test-only's output (stdout and stderr together, text of len bytes) that
 * ended with exit status status into *a. Status 0 must come with exactly one will-run line;
 * another status is a refusal, its reason the "allocation failure:" or first "sbatch:
 * error:" text. 0, or -1 with err (a clears) on anything else: no answer, two answers, a
 * malformed or hostile line. */
int xp_slurm_parse_test_only(const char *text, size_t len, int status, struct xp_slurm_answer *a,
			     struct xp_err *err);
/* True when a will-run answer starts within XP_SLURM_NOW_SLACK_S of asked. */
bool xp_slurm_starts_now(const struct xp_slurm_answer *a, time_t asked);
/* The request Slurm is asked: export (an sbatch script written by xp_place_export) without
 * its #SBATCH --nodelist lines, so that Slurm chooses the nodes (caller frees). */
char *xp_slurm_request(const char *export);
/* Asks the live Slurm (SLURM_CONF=conf; NULL or "" for the client's own) about script:
 * writes it to a private temporary file, runs `sbatch --test-only FILE` with TZ=UTC and reads
 * the answer into *a; *asked is when it was asked. 0 (a refusal is an answer), or -1 with err
 * when sbatch is missing, times out or answers what cannot be read. */
int xp_slurm_test_only(const char *conf, const char *script, struct xp_slurm_answer *a, time_t *asked,
		       struct xp_err *err);

#endif
