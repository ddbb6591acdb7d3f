/* slurm.h: a live Slurm cluster read into the model through Slurm's own client
 * (`scontrol -d show node -o`, run in an argv, never a shell): nodes with their CPUs,
 * memory, features, states and GRES as devices, with what Slurm has allocated of them
 * marked in use so that placement sees it. Read-only: nothing here changes Slurm.
 *
 * scontrol in Slurm 22.05 has no --json (only sinfo and squeue do, through the openapi
 * plugins): where this Slurm has JSON output, slurm_json.c turns it into these same records
 * (xp_slurm_json_nodes, xp_slurm_json_jobs), else the records are read. Partitions
 * (xp_slurm_parse_partitions), QOS (xp_slurm_parse_qos), jobs (xp_slurm_parse_jobs) and
 * fair-share (xp_slurm_parse_sshare) are read into the queue model (xp_slurm_load_queues) for
 * `queue`, `job` and `whatif`; without accounting (no slurmdbd) QOS and fair-share are notes
 * of the queue set, not errors. */
#ifndef XP_SLURM_H
#define XP_SLURM_H

#include <stddef.h>

#include "model.h"
#include "xp.h"

struct xp_qset;
struct xp_qjob;

/* The squeue format xp_slurm_parse_jobs reads (`squeue -h -a -t all -o FORMAT`): id as
 * Slurm writes it ("7", "7_[2-5]", "8+1"), partitions, state, priority, node count, time
 * limit, GRES per node, reason, the nodes (Slurm's compressed list), submit and start times
 * (local time, as the client prints them), the job's own number (%A: one per array task and
 * per heterogeneous component), QOS, account, user, and the name last (a name may hold '|'). */
#define XP_SLURM_SQUEUE_FORMAT "%i|%P|%T|%Q|%D|%l|%b|%r|%N|%V|%S|%A|%q|%a|%u|%j"

/* Longest record line read (a node's record is about 1 KiB; its Reason may be long). */
#define XP_SLURM_MAX_LINE (1 << 20)
/* Most bytes of scontrol output read (a 100,000-node cluster fits). */
#define XP_SLURM_MAX_OUTPUT ((size_t)512 << 20)

/* The next line of a command's output (text, len bytes) from *pos: its start in *s, its length
 * (newline not counted) in *l, *pos moved past it; 1 when a newline ended it, 0 when not. */
int xp_slurm_next_line(const char *text, size_t len, size_t *pos, const char **s, size_t *l);
/* 0 when a line (s, l bytes; ended: a newline ended it) is a whole record line; -1 with err
 * saying why not: longer than XP_SLURM_MAX_LINE, a NUL byte, or no end of line (cut short). */
int xp_slurm_line_check(const char *s, size_t l, int ended, struct xp_err *err);
/* Maps a Slurm node state ("MIXED+CLOUD+POWERED_DOWN", "DOWN*", "IDLE+DRAIN") onto
 * enum xp_node_state: see slurm.c for why each maps where it does. */
int xp_slurm_node_state(const char *state);
/* The vendor of a GRES (name "gpu", type "h100"): "NVIDIA", "Huawei", ...; NULL when the name
 * and type do not say (an untyped gpu), or when the GRES is not an accelerator at all. */
const char *xp_slurm_gres_vendor(const char *name, const char *type);
/* True when a GRES name counts accelerators (gpu, npu, mlu, dcu, gcu, xpu), not shards,
 * MPS shares or bandwidth. */
int xp_slurm_gres_is_device(const char *name);
/* Parses the output of `scontrol -d show node -o` (text, len bytes) and adds one node per
 * record to c. 0 on success; -1 with err naming what (the command), the line and the field
 * on a malformed, truncated or oversized record (c then holds the nodes read before it). */
int xp_slurm_parse_nodes(const char *text, size_t len, const char *what, struct xp_cluster *c,
			 struct xp_err *err);
/* Parses the output of `scontrol show partition -o` and appends one queue per partition to
 * set: its name, PriorityTier as priority, State UP and DRAIN open (a draining partition
 * takes no new job but starts those it holds), DOWN and INACTIVE hold. 0, or -1 with err
 * naming what, the line and the field (set then holds the queues read before it). */
int xp_slurm_parse_partitions(const char *text, size_t len, const char *what, struct xp_qset *set,
			      struct xp_err *err);
/* Parses squeue output in XP_SLURM_SQUEUE_FORMAT into *out (n_out jobs; free each with
 * xp_qjob_clear, then *out): id, name, queue = partition, priority (one past INT_MAX kept
 * at INT_MAX), state (CONFIGURING, RUNNING, COMPLETING, SUSPENDED: running; PENDING: pending,
 * held when the reason is JobHeld*), est_s from the time limit, a one-group spec of as many
 * replicas as nodes with the accelerator GRES per node as devices and its type as model,
 * and for a pending job its reason code with Slurm's own words as reason_text; engine "slurm",
 * Slurm's node list as nodes, submit time, and a running job's start. 0, or -1 with err naming what, the line and the field (*out
 * then holds the jobs read before it). Which devices of its nodes a running job holds is not
 * read (GresUsed on the nodes says how many are held: see xp_slurm_load). */
int xp_slurm_parse_jobs(const char *text, size_t len, const char *what, struct xp_qjob **out, size_t *n_out,
			struct xp_err *err);
/* xp_slurm_parse_jobs knowing the queues read so far (set; NULL: none): each job's id is %A,
 * engine_id %i's text, tenant its account; its queue is the QOS's ("qos.NAME") when it pends
 * for one of that QOS's limits and set has it, else the first of its partitions set has open
 * (a job may ask several: "train,cpu"); its group selects that partition's nodes (label
 * slurm.partition.NAME=true, which xp_slurm_parse_nodes sets from a node's Partitions=). */
int xp_slurm_parse_jobs_in(const char *text, size_t len, const char *what, const struct xp_qset *set,
			   struct xp_qjob **out, size_t *n_out, struct xp_err *err);
/* The environment entry "SLURM_CONF=FILE" (caller frees) for conf, else the caller's
 * SLURM_CONF; *setting NULL when neither names one (the client's default file). -1 with err
 * naming the file and why when it cannot be read, so that a bad name fails at once instead
 * of after the client's own timeouts. */
int xp_slurm_conf_setting(const char *conf, char **setting, struct xp_err *err);
/* Reads the live cluster: runs scontrol with SLURM_CONF=conf (NULL or "" for the client's
 * own configuration: the caller's SLURM_CONF, else Slurm's default file). NULL with err set
 * when scontrol is missing, fails, times out or prints what cannot be read. */
struct xp_cluster *xp_slurm_load(const char *conf, struct xp_err *err);
/* The QOS fields xp_slurm_parse_qos reads (`sacctmgr -P -n show qos format=...`: '|'
 * between fields, no header; man sacctmgr, "LIST/SHOW QOS FORMAT OPTIONS"). */
#define XP_SLURM_QOS_FORMAT "Name,Priority,GrpTRES,MaxTRESPerUser,MaxWall,Preempt"
/* Parses sacctmgr's QOS lines and appends one queue a QOS to set, named "qos.NAME": its
 * Priority as priority, open, and its GrpTRES as hard quotas (deserved = max, nothing
 * borrowed or lent) of the classes gpu, gpu.TYPE, npu, ... (devices), cpu and mem (GiB),
 * added to set when new; what no field holds (other TRES, MaxTRESPerUser, MaxWall, the QOS
 * it preempts) as the queue's engine_text. 0, or -1 with err naming what, the line and the
 * field (set then holds the queues read before it). */
int xp_slurm_parse_qos(const char *text, size_t len, const char *what, struct xp_qset *set, struct xp_err *err);
/* Parses `sshare -a -P -l` (a header naming the columns, then '|'-separated rows) into
 * set's notes: "fair-share ACCOUNT[/USER]: FACTOR (NormShares N, EffectvUsage U)" for each
 * association with a factor (at most 200, then a count), or one note saying there is none
 * (no accounting: sshare prints only its header). 0, or -1 with err naming what and the line. */
int xp_slurm_parse_sshare(const char *text, size_t len, const char *what, struct xp_qset *set, struct xp_err *err);
/* Fits a Slurm job read by xp_slurm_parse_jobs to the cluster c read from the same Slurm: a
 * group asking untyped GPUs ("gres/gpu:2") gets the vendor and model of its partition's GPUs
 * when they are all one kind. NULL, or a note (caller frees) saying why xpool cannot simulate
 * it: it asks no accelerator (a CPU-only job), or its partition's GPUs are of several kinds. */
char *xp_slurm_job_fit(struct xp_qjob *j, const struct xp_cluster *c);
/* Reads the live Slurm's partitions and QOS into set (appended), fair-share into set's notes,
 * and its jobs into *jobs (n_jobs; free each with xp_qjob_clear, then *jobs): `scontrol show
 * partition -o`, `sacctmgr -P -n show qos`, `sshare -a -P -l` and `squeue` with
 * SLURM_CONF=conf as xp_slurm_load. Read-only. A sacctmgr or sshare that fails or is missing
 * (no accounting) is a note in set ("QOS not available (...)"); the others failing is -1 with
 * err naming the command (what was read is kept for the caller to free). */
/* The label prefix of a job asking several partitions ("slurm.partset.train+cpu"): its group
 * selects the nodes of any of them, once xp_slurm_partsets labelled them. */
#define XP_SLURM_PARTSET "slurm.partset."
/* Labels, in c (a run's own cluster: nodes shared with another are copied first), the nodes of
 * each partition set jobs (n of them) ask with the set's label. */
void xp_slurm_partsets(struct xp_cluster *c, const struct xp_qjob *jobs, size_t n);
int xp_slurm_load_queues(const char *conf, struct xp_qset *set, struct xp_qjob **jobs, size_t *n_jobs,
			 struct xp_err *err);

#endif
