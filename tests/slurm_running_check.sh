#!/bin/bash
# slurm_running_check.sh: a real Slurm's running jobs end at their time limit in xpool's runs.
# A private munged and slurmctld (slurm_lib.sh) with one CLOUD node of 8 gpu:h100 and no slurmd:
# job "first" takes all 8 for at most 60 minutes and starts (CONFIGURING holds its GRES); job
# "second" asks for the 8 too and pends. Slurm's own answer: the second starts when the first's
# limit runs out, 60 minutes after the first started. xpool must say the same: `job list`'s
# estimated start for it, and `whatif --jobs-from-store` starting it in the baseline. Before
# running jobs took their devices back (src/cmd/engine_hold.c) the nodes held them for ever and
# xpool said the second never starts.
# Needs munged, slurmctld, sbatch, squeue, scontrol, jq; without them, or when the daemons cannot
# start, it says SKIPPED loudly and exits 0. Only pids started here are stopped.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${XPOOL_BIN:-$root/xpool}
skip() { echo "slurm-running: SKIPPED: $*" >&2; echo "slurm-running: SKIPPED: the live-Slurm running-job checks did not run"; exit 0; }

. "$root/tests/slurm_lib.sh"
slurm_need munged munge slurmctld sbatch scontrol squeue jq
slurm_cloud gpu \
	"NodeName=gpu01 CPUs=64 RealMemory=512000 Gres=gpu:h100:8 State=CLOUD" \
	"NodeName=gpu02 CPUs=64 RealMemory=512000 Gres=gpu:h100:8 State=CLOUD" \
	"PartitionName=train Nodes=gpu01 Default=YES MaxTime=INFINITE State=UP" \
	"PartitionName=other Nodes=gpu02 MaxTime=INFINITE State=UP"

fail=0
bad() { echo "slurm-running: FAIL: $*"; fail=$((fail + 1)); }

sbatch -Q -p train -t 60 --gres=gpu:h100:8 --wrap 'sleep 1000' -J first || bad "sbatch first"
sbatch -Q -p other -t 10 --gres=gpu:h100:8 --wrap 'sleep 1000' -J short || bad "sbatch short"
sbatch -Q -p train -t 30 --gres=gpu:h100:8 --wrap 'sleep 1000' -J second || bad "sbatch second"
# Asks either partition: Slurm starts it on gpu02 when short's 10 minutes are up.
sbatch -Q -p train,other -t 30 --gres=gpu:h100:8 --wrap 'sleep 1000' -J multi || bad "sbatch multi"
for _ in $(seq 1 300); do
	[ "$(squeue -h -t CF,R -o %i | wc -l)" = 2 ] && [ "$(squeue -h -n second -o %r)" != None ] &&
		[ "$(squeue -h -n multi -o %r)" != None ] && break
	sleep 0.1
done
[ "$(squeue -h -n first -t CF,R -o %i | wc -l)" = 1 ] || { squeue >&2; bad "the first job did not start"; }
first_start=$(squeue -h -n first -o %S)
# squeue prints local time; so does date here (TZ as the caller's).
t0=$(date -d "$first_start" +%s) || bad "squeue's start '$first_start' is not a time"
now=$(date +%s)

if ! XPOOL_NOW=$now "$bin" --slurm-conf "$scratch/slurm.conf" --json job list >jobs.json 2>jobs.err; then
	bad "job list failed:"; cat jobs.err
else
	eta=$(jq -r '.jobs[] | select(.name == "second") | .eta | fromdateiso8601' jobs.json)
	[ "$eta" = "$((t0 + 3600))" ] ||
		bad "job list: the second job's estimated start is '$eta', not the first's start + 60 min ($((t0 + 3600)))"
	[ "$(jq -r '.jobs[] | select(.name == "first") | .slots | length' jobs.json)" = 8 ] ||
		bad "job list: the first job does not hold 8 devices"
	short_start=$(date -d "$(squeue -h -n short -o %S)" +%s)
	meta=$(jq -r '.jobs[] | select(.name == "multi") | .eta | fromdateiso8601' jobs.json)
	[ "$meta" = "$((short_start + 600))" ] ||
		bad "job list: the job asking train,other starts at '$meta', not when short ends on other ($((short_start + 600)))"
fi
if ! XPOOL_NOW=$now "$bin" --slurm-conf "$scratch/slurm.conf" --json whatif --jobs-from-store >wi.json 2>wi.err; then
	bad "whatif failed:"; cat wi.err
else
	started=$(jq -r '[.baseline.queues[] | .started] | add' wi.json)
	never=$(jq -r '[.baseline.queues[] | .never_started] | add' wi.json)
	wmax=$(jq -r '[.baseline.queues[] | .wait_max] | max' wi.json)
	# Both start (the first already runs); the second waits until the first's limit.
	[ "$started" = 4 ] && [ "$never" = 0 ] || bad "whatif: $started started, $never never (want 4 and 0)"
	want=$((t0 + 3600 - $(date -d "$(squeue -h -n second -o %V)" +%s)))
	[ "$wmax" = "$want" ] || bad "whatif: the longest wait is '$wmax' s, not $want s (submit to the first's end)"
fi

echo "slurm-running: $fail failed"
[ "$fail" = 0 ]
