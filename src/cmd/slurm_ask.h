/* slurm_ask.h: xpool's placement beside Slurm's own answer for the same request, for
 * `place --dry-run --compare` and for view 3 with --compare: the request xpool's Slurm export
 * writes for the placement, less its pinned nodes, asked of `sbatch --test-only`
 * (backends/slurm_compare.h) on a thread of its own, so that a console's keys never wait for
 * slurmctld. Read-only: nothing is submitted. */
#ifndef XP_SLURM_ASK_H
#define XP_SLURM_ASK_H

#include <stdbool.h>
#include <stddef.h>

#include "jobspec.h"
#include "manifest.h"
#include "model.h"
#include "place.h"
#include "xp.h"

struct xp_slurm_answer; /* slurm_compare.h */

/* Questions whose thread still runs, given up or not (at most 4 at once). */
int xp_slurm_ask_in_flight(void);

/* xpool's nodes in r in order of first use (pointers into r); *n of them (free the array). */
const char **xp_slurm_ask_nodes(const struct xp_place_result *r, size_t *n);

/* Why xpool's answer r is not Slurm's answer s (asked when now says it starts now), from
 * xpool's side (caller frees): xpool refused, Slurm refused, Slurm starts it later, or other
 * nodes with xpool's strategy and scores; NULL when they agree (same nodes, now). */
char *xp_slurm_ask_reason(const struct xp_place_result *r, const struct xp_slurm_answer *s, bool now);

/* The request xpool's placement r of job on c is asked with: its Slurm export less the nodes
 * it pinned (caller frees). The same job gives the same request whatever the nodes and the
 * strategy chose: an answer stays good for a rerun on new data. NULL with err when there is
 * none: r placed nothing, or the export cannot say it. */
char *xp_slurm_ask_request(const struct xp_place_result *r, const struct xp_job *job, const struct xp_cluster *c,
			   const struct xp_manifest *const *ms, size_t nm, struct xp_err *err);

/* One question to Slurm: in flight, then answered. */
struct xp_slurm_ask;
/* Asks Slurm (SLURM_CONF=conf; NULL or "" for the client's own) about request on a thread of
 * its own; the question keeps a copy. NULL with err when no thread starts. XPOOL_SLURM_ASK_HOLD
 * set in the environment holds the question until it is abandoned (tests: one surely in flight). */
struct xp_slurm_ask *xp_slurm_ask_start(const char *conf, const char *request, struct xp_err *err);
/* The request it asks about. */
const char *xp_slurm_ask_text(const struct xp_slurm_ask *a);
/* True once Slurm answered, or asking it failed. */
bool xp_slurm_ask_done(struct xp_slurm_ask *a);
/* A done question's answer beside r (a result for its request; asked again for each): *line
 * what Slurm would do ("slurm: would start on gpu01 at 2026-12-02T05:40:37 UTC (now) in
 * partition train", "slurm: refused: ...", or "slurm: could not ask: ..." when asking failed),
 * *verdict "agree" or "differ: " and xp_slurm_ask_reason, NULL when asking failed (caller
 * frees both). */
void xp_slurm_ask_lines(struct xp_slurm_ask *a, const struct xp_place_result *r, char **line, char **verdict);
/* Gives the question up or frees its answer: one in flight is freed by its thread when sbatch
 * returns (at most sbatch's timeout), one answered now. NULL is fine. */
void xp_slurm_ask_abandon(struct xp_slurm_ask *a);

#endif
