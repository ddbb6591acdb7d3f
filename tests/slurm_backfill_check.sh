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
# SchedulerParameters (slurm.conf(5) of 22.05): bf_interval=1 (seconds between backfill
# cycles; min 1), bf_resolution=60 (time slots of a minute, as Slurm limits are minutes; the
# default, said so). Slurm's answer is read after three backfill cycles (sdiag "Total cycles")
# following the release. It is written to $scratch/answers (squeue.txt, start.txt, jobs.txt),
# copied to $XP_SLURM_RECORD when set (that is how tests/fixtures/slurm-backfill/slurm-22.05
# was made), and compared with xpool's scheduler by the check suite slurm_peer ($RUNNER, with
# XP_SLURM_ANSWERS pointing at it); the same suite runs in `make test` on the recorded answer.
#
# Needs munged, slurmctld, sbatch, squeue, scontrol, sdiag, jq; without them, or when the
# daemons cannot start, it says SKIPPED loudly and exits 0.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
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

# ask CONFIG PARAMETERS: a fresh slurmctld with SchedulerParameters=PARAMETERS, every job of
# every trace submitted held in file order, released at once, Slurm's answer in answers/CONFIG.
ask() {
	local cfg=$1 params=$2 ids=() s id args out c0 c release
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
	for s in "${scen[@]}"; do
		while IFS=$'\t' read -r id args; do
			# shellcheck disable=SC2086 # args are the words jq wrote, no spaces inside one
			out=$(sbatch -H --parsable -p "$s" -J "$id" -o /dev/null $args --wrap true 2>&1) ||
				{ echo "slurm-backfill: FAIL: $cfg: sbatch refused $id ($args): $out"; exit 1; }
			ids+=("$out")
		done <"$s.jobs"
	done
	c0=$(cycles)
	[ -n "$c0" ] || { sdiag >&2; echo "slurm-backfill: FAIL: no backfill cycle count in sdiag"; exit 1; }
	release=$(date +%s)
	scontrol release "$(IFS=,; echo "${ids[*]}")" || { echo "slurm-backfill: FAIL: scontrol release"; exit 1; }
	for _ in $(seq 1 600); do
		c=$(cycles)
		[ -n "$c" ] && [ "$c" -ge $((c0 + 3)) ] && break
		sleep 0.1
	done
	[ "$(cycles)" -ge $((c0 + 3)) ] || { echo "slurm-backfill: FAIL: $cfg: the backfill scheduler ran no 3 cycles in 60 s"; exit 1; }

	mkdir -p "answers/$cfg"
	squeue -a -p "$(IFS=,; echo "${scen[*]}")" -o '%P|%j|%i|%T|%r|%Q|%S|%e|%N' --sort=i >"answers/$cfg/squeue.txt" &&
		squeue -a -p "$(IFS=,; echo "${scen[*]}")" --start >"answers/$cfg/start.txt" &&
		scontrol show job >"answers/$cfg/jobs.txt" ||
		{ echo "slurm-backfill: FAIL: $cfg: squeue or scontrol failed"; exit 1; }
	{
		echo "released $release ($(date -u -d @"$release" +%Y-%m-%dT%H:%M:%SZ))"
		echo "$(sbatch --version), SchedulerParameters=$params"
		for s in "${scen[@]}"; do sed "s/^/$s: sbatch -H -p $s -o \/dev\/null --wrap true -J /" "$s.jobs"; done
	} >"answers/$cfg/run.txt"
	cp slurm.conf "answers/$cfg/slurm.conf"
	echo "slurm-backfill: $cfg: Slurm's answer ($(sbatch --version), SchedulerParameters=$params):"
	awk -F'|' 'NR > 1 { printf "  %s: %s %s %s start=%s\n", $1, $2, $4, $5, $7 }' "answers/$cfg/squeue.txt"
	slurm_ctld_stop
}
# sdiag prints "Total cycles" for the main scheduler first and for backfill second.
cycles() { sdiag | sed -n 's/^[[:space:]]*Total cycles: *\([0-9]*\).*/\1/p' | sed -n 2p; }

# default: Slurm's backfill reserves for every job it tests (bf_max_job_test, 500); reserve1:
# bf_job_part_count_reserve=1 (reserve for the highest priority job of a partition only: EASY).
ask default bf_interval=1,bf_resolution=60
ask reserve1 bf_interval=1,bf_resolution=60,bf_job_part_count_reserve=1
if [ -n "${XP_SLURM_RECORD:-}" ]; then
	mkdir -p "$XP_SLURM_RECORD" && cp -r answers/. "$XP_SLURM_RECORD"/ &&
		echo "slurm-backfill: recorded Slurm's answer in $XP_SLURM_RECORD"
fi

if [ ! -f "$root/tests/check_slurm_peer.c" ]; then
	echo "slurm-backfill: SKIPPED: the comparison with xpool did not run: suite slurm_peer (tests/check_slurm_peer.c) is not there yet"
	exit 0
fi
if [ -z "${RUNNER:-}" ] || [ ! -x "$RUNNER" ]; then
	echo "slurm-backfill: SKIPPED: the comparison with xpool did not run: no check runner (RUNNER=${RUNNER:-unset}; make test sets it)"
	exit 0
fi
echo "slurm-backfill: comparing with xpool's scheduler (suite slurm_peer on this answer):"
XP_SLURM_ANSWERS=$scratch/answers XP_FIXTURES=$root/tests/fixtures CK_RUN_SUITE=slurm_peer CK_DEFAULT_TIMEOUT=60 "$RUNNER"
