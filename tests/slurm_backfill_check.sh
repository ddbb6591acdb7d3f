#!/bin/bash
# slurm_backfill_check.sh: xpool's scheduling semantics (EASY backfill, priority order, quota)
# judged against a real Slurm: the scenarios of tests/fixtures/slurm-backfill/*.jsonl (xpool
# traces, xpool(1) TRACE FORMAT) submitted to a private slurmctld (tests/slurm_lib.sh) with
# sched/backfill, one partition of 4 nodes x gres gpu:8 per scenario, and Slurm's own answer read
# back: which jobs it started, which pend with which Reason, the planned StartTime of the
# blocked head job (`squeue --start`). Nodes are State=CLOUD with ResumeProgram=/bin/true: an
# allocated node stays CONFIGURING with its jobs until ResumeTimeout (600 s), so the answer is
# read within seconds of the release, long before any time limit or the timeout.
#
# A trace job becomes `sbatch -H -p SCENARIO -J ID -N REPLICAS --gres=gpu:DEVICES -t EST/60
# --nice=(PMAX-PRIORITY)*1000` (priority/basic: a job's priority falls with its submit order and
# its nice, so a larger xpool priority goes first and equal ones keep the file's order). A
# queue with a devices max becomes a cluster license of that count, and each of its jobs asks
# -L QUEUE:ITS_DEVICES: QOS GrpTRES=gres/gpu (reason QOSGrpGRES) needs slurmdbd (sacctmgr:
# "Only 'accounting_storage/slurmdbd' is supported"; --qos is ignored, QOS=(null)), which is
# not installed, so licenses (reason Licenses) are the accounting-free quota. All jobs are
# submitted held and released by one `scontrol release`, so they are queued at the same time.
#
# SchedulerParameters (each checked in slurm.conf(5) of 22.05): bf_interval=1 (seconds between
# backfill cycles; min 1), bf_resolution=60 (time slots of a minute, as Slurm limits are
# minutes; the default, said so). Asked twice, each time of a fresh slurmctld: "default" as
# that, where backfill reserves for every job it tests (bf_max_job_test, 500), and "reserve1"
# with bf_job_part_count_reserve=1 too ("reserve resources for the specified count of highest
# priority jobs in each partition"), which is EASY. Slurm's answer is read once backfill has
# settled (sdiag: two cycles since the release, the last one after every start; every pending
# job with a reason); it goes to $scratch/answers/CONFIG
# (squeue.txt, start.txt, jobs.txt, run.txt, slurm.conf), is copied to $XP_SLURM_RECORD when set
# (that is how tests/fixtures/slurm-backfill/slurm-22.05 was made), and is compared with xpool's
# scheduler (one pass) and with `xpool whatif --trace` ($XPOOL_BIN) by the check suite
# slurm_peer ($RUNNER, with XP_SLURM_ANSWERS pointing at it), which prints the agree/differ
# table; the same suite runs in `make test` on the recorded answer.
#
# Needs munged, slurmctld, sbatch, squeue, scontrol, sdiag, jq; without them, or when the
# daemons cannot start, it says SKIPPED loudly and exits 0.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${XPOOL_BIN:-$root/xpool}
traces=$root/tests/fixtures/slurm-backfill
skip() {
	echo "slurm-backfill: SKIPPED: $*" >&2
	echo "slurm-backfill: SKIPPED: Slurm's backfill was not asked (the recorded answer is still compared by suite slurm_peer)"
	exit 0
}
export TZ=UTC # squeue and scontrol print local times; the parser reads them as UTC

. "$root/tests/slurm_lib.sh"
slurm_need munged munge slurmctld sbatch squeue scontrol sdiag jq
slurm_scratch
slurm_munge

scen=()
for t in "$traces"/*.jsonl; do scen+=("$(basename "$t" .jsonl)"); done
[ ${#scen[@]} -gt 0 ] || { echo "slurm-backfill: FAIL: no traces in $traces"; exit 1; }
# The trace jobs as sbatch arguments, one file per scenario (id TAB the rest).
for s in "${scen[@]}"; do
	jq -r --slurpfile all "$traces/$s.jsonl" '
		([$all[] | select(.queue | type == "object") | .queue | {(.name): ([(.quotas // [])[] |
		   select(.resource == "devices" and .max != null)] | length > 0)}] | add // {}) as $capped |
		([$all[] | select(.id) | .priority // 0] | max) as $pmax |
		select(.id) | (.spec.replicas // 1) as $r | (.spec.devices // 1) as $d |
		if .est % 60 != 0 then error("\(.id): est \(.est) is not whole minutes") else . end |
		[.id, "-N", "\($r)", "--gres=gpu:\($d)", "-t", "\(.est / 60)", "--nice=\(($pmax - (.priority // 0)) * 1000)"] +
		(if $capped[.queue] then ["-L", "\(.queue):\($r * $d)"] else [] end) | @tsv' "$traces/$s.jsonl" >"$s.jobs" ||
		{ echo "slurm-backfill: FAIL: $s.jsonl: cannot read"; exit 1; }
done
# One license per capped queue, as many as its devices max.
lic=$(jq -r 'select(.queue | type == "object") | .queue as $q | ($q.quotas // [])[] |
	select(.resource == "devices" and .max != null) | "\($q.name):\(.max)"' "$traces"/*.jsonl | paste -sd, -)

# ask CONFIG PARAMETERS: a fresh slurmctld with SchedulerParameters=PARAMETERS; for each trace,
# its jobs submitted held in file order and released at once, Slurm's answer appended to
# answers/CONFIG, the jobs cancelled.
ask() {
	local cfg=$1 params=$2 ids s id args out c0 release
	slurm_ports
	{
		slurm_conf_common
		echo "SchedulerType=sched/backfill"
		echo "SchedulerParameters=$params"
		echo "GresTypes=gpu"
		[ -n "$lic" ] && echo "Licenses=$lic"
		for s in "${scen[@]}"; do
			echo "NodeName=$s[1-4] CPUs=64 RealMemory=1000 Gres=gpu:8 State=CLOUD"
			echo "PartitionName=$s Nodes=$s[1-4] MaxTime=INFINITE State=UP"
		done
	} >slurm.conf
	slurm_ctld
	mkdir -p "answers/$cfg"
	echo "$(sbatch --version), SchedulerParameters=$params" >"answers/$cfg/run.txt"
	# One scenario at a time, its jobs cancelled before the next: Slurm's start estimate
	# (cons_tres _will_run_test) removes running jobs in groups by end time, and a running job
	# of another partition ending at the same time makes it take the next group of this one too
	# (a head of one node planned at +20 min where +10 is free), an artifact of sharing a
	# controller, not of the scheduling rule.
	for s in "${scen[@]}"; do
		ids=()
		while IFS=$'\t' read -r id args; do
			# shellcheck disable=SC2086 # args are the words jq wrote, no spaces inside one
			out=$(sbatch -H --parsable -p "$s" -J "$id" -o /dev/null $args --wrap true 2>&1) ||
				{ echo "slurm-backfill: FAIL: $cfg: sbatch refused $id ($args): $out"; exit 1; }
			ids+=("$out")
		done <"$s.jobs"
		c0=$(cycles)
		[ -n "$c0" ] || { sdiag >&2; echo "slurm-backfill: FAIL: no backfill cycle count in sdiag"; exit 1; }
		release=$(date +%s)
		scontrol release "$(IFS=,; echo "${ids[*]}")" || { echo "slurm-backfill: FAIL: scontrol release"; exit 1; }
		for _ in $(seq 1 600); do
			settled "$s" "$c0" "$release" && break
			sleep 0.1
		done
		settled "$s" "$c0" "$release" ||
			{ echo "slurm-backfill: FAIL: $cfg: $s: the backfill scheduler did not settle in 60 s"; sdiag; squeue -a; exit 1; }
		if [ "$s" = "${scen[0]}" ]; then
			squeue -a -p "$s" -o '%P|%j|%i|%T|%r|%Q|%S|%e|%N' --sort=i
		else
			squeue -h -a -p "$s" -o '%P|%j|%i|%T|%r|%Q|%S|%e|%N' --sort=i
		fi >>"answers/$cfg/squeue.txt" && squeue -a -p "$s" --start >>"answers/$cfg/start.txt" ||
			{ echo "slurm-backfill: FAIL: $cfg: squeue failed"; exit 1; }
		for id in "${ids[@]}"; do
			scontrol show job "$id" >>"answers/$cfg/jobs.txt" ||
				{ echo "slurm-backfill: FAIL: $cfg: scontrol show job $id failed"; exit 1; }
		done
		{
			echo "$s: released $release ($(date -u -d @"$release" +%Y-%m-%dT%H:%M:%SZ))"
			sed "s/^/$s: sbatch -H -p $s -o \/dev\/null --wrap true -J /" "$s.jobs"
		} >>"answers/$cfg/run.txt"
		scancel "${ids[@]}" || { echo "slurm-backfill: FAIL: scancel"; exit 1; }
	done
	cp slurm.conf "answers/$cfg/slurm.conf"
	echo "slurm-backfill: $cfg: Slurm's answer ($(sbatch --version), SchedulerParameters=$params):"
	awk -F'|' 'NR > 1 { printf "  %s: %s %s %s start=%s\n", $1, $2, $4, $5, $7 }' "answers/$cfg/squeue.txt"
	slurm_ctld_stop
}
# sdiag prints "Total cycles" for the main scheduler first and for backfill second.
cycles() { sdiag | sed -n 's/^[[:space:]]*Total cycles: *\([0-9]*\).*/\1/p' | sed -n 2p; }
# settled PARTITION C0 RELEASE: Slurm's answer for the partition is final: backfill ran twice
# since the release (cycle count C0 before it, at epoch RELEASE), its last cycle began after the
# release's second and after the latest start there, and every pending job there has a reason.
# Backfill runs a cycle only when something changed (a cycle that starts a job is followed by
# another), so a last cycle later than every start started nothing and saw every pending job.
settled() {
	local c l m
	c=$(cycles)
	l=$(sdiag | sed -n 's/^[[:space:]]*Last cycle when:.*(\([0-9]*\)).*/\1/p' | tail -n 1)
	[ -n "$c" ] && [ -n "$l" ] && [ "$c" -ge $(($2 + 2)) ] && [ "$l" -gt "$3" ] || return 1
	m=$(squeue -h -a -p "$1" -t CF,R -o '%S' | sort | tail -n 1)
	[ -z "$m" ] || [ "$l" -gt "$(date -u -d "$m" +%s)" ] || return 1
	! squeue -h -a -p "$1" -t PD -o '%r' | grep -qx None
}

# default: Slurm's backfill reserves for every job it tests (bf_max_job_test, 500); reserve1:
# bf_job_part_count_reserve=1 (reserve for the highest priority job of a partition only: EASY).
ask default bf_interval=1,bf_resolution=60
ask reserve1 bf_interval=1,bf_resolution=60,bf_job_part_count_reserve=1
if [ -n "${XP_SLURM_RECORD:-}" ]; then
	mkdir -p "$XP_SLURM_RECORD" && cp -r answers/. "$XP_SLURM_RECORD"/ &&
		echo "slurm-backfill: recorded Slurm's answer in $XP_SLURM_RECORD"
fi

if [ -z "${RUNNER:-}" ] || [ ! -x "$RUNNER" ]; then
	echo "slurm-backfill: SKIPPED: the comparison with xpool did not run: no check runner (RUNNER=${RUNNER:-unset}; make test sets it)"
	exit 0
fi
echo "slurm-backfill: comparing with xpool's scheduler and whatif (suite slurm_peer on this answer):"
XPOOL_BIN=$bin XP_SLURM_ANSWERS=$scratch/answers XP_FIXTURES=$root/tests/fixtures CK_RUN_SUITE=slurm_peer CK_DEFAULT_TIMEOUT=60 "$RUNNER"
