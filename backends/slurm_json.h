/* slurm_json.h: Slurm's JSON client output (`scontrol -d --json show node` of Slurm 23.02 and
 * later, `sinfo --json` of 22.05, `squeue --json`) read where this Slurm has it, in an argv,
 * never a shell. Each node or job object is turned into exactly the text record the record
 * readers of slurm.c and slurm_jobs.c read (a `scontrol -d show node -o` line, an squeue line in
 * XP_SLURM_SQUEUE_FORMAT with the values as squeue prints them), so that both paths give one
 * model. Both data parser forms are read: 22.05's (openapi/v0.0.38: plain numbers, null for
 * none, a node's "state" a word and its flags in "state_flags") and 23.02's and later
 * (data_parser v0.0.39 and up: {"set","infinite","number"} numbers, states as arrays of
 * words). Partitions stay with `scontrol show partition -o` (22.05 has no JSON for them). */
#ifndef XP_SLURM_JSON_H
#define XP_SLURM_JSON_H

#include <stddef.h>

#include "xp.h"

/* Deepest nesting of arrays and objects read (Slurm's own output nests about 8 deep). */
#define XP_SLURM_JSON_MAX_DEPTH 64
/* Longest string value read (a job's name, a node's reason, a node list). */
#define XP_SLURM_JSON_MAX_STRING (64 * 1024)

/* Which path the load functions take, from XPOOL_SLURM_JSON: 0 ("0") the text records only,
 * 1 ("1") JSON only (an error when no JSON command answers), -1 (unset, anything else) JSON
 * where this Slurm has it, else the text records. */
int xp_slurm_json_mode(void);
/* The text of `scontrol -d show node -o` (*text, *tlen; free it) for the nodes of a JSON
 * answer (json, len bytes). 0, or -1 with err naming what, the field and the node's index. */
int xp_slurm_json_nodes_text(const char *json, size_t len, const char *what, char **text, size_t *tlen,
			     struct xp_err *err);
/* The text of `squeue -h -a -t all -o XP_SLURM_SQUEUE_FORMAT` (*text, *tlen; free it) for the
 * jobs of a JSON answer, times in local time as squeue prints them. 0, or -1 with err naming
 * what, the field and the job's index. */
int xp_slurm_json_jobs_text(const char *json, size_t len, const char *what, char **text, size_t *tlen,
			    struct xp_err *err);
/* xp_slurm_load's JSON path (SLURM_CONF=conf as there): 1 with *text (*tlen; free it) the
 * `scontrol -d show node -o` records made from the first JSON command that answers and *what
 * its name; 0 when none does (or the mode says records: run scontrol); -1 with err set when
 * an answer cannot be read, or none came in mode 1. */
int xp_slurm_json_nodes(const char *conf, char **text, size_t *tlen, const char **what, struct xp_err *err);
/* The same for xp_slurm_load_queues's jobs: squeue's XP_SLURM_SQUEUE_FORMAT lines made from
 * `squeue --json`. */
int xp_slurm_json_jobs(const char *conf, char **text, size_t *tlen, const char **what, struct xp_err *err);

#endif
