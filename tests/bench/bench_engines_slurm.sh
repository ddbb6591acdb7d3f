#!/bin/bash
# bench_engines_slurm.sh: the Slurm half of bench_engines (which runs this script and is called
# back by it). A private munged and slurmctld on loopback (tests/slurm_lib.sh) with 10,000
# State=CLOUD nodes declaring Gres=gpu:h100:8 (no slurmd; PrivateData=cloud so that scontrol
# shows powered-down CLOUD nodes), and one 1,000-node job holding 4 GPUs on each, so that the
# records carry GresUsed. What `scontrol -d show node -o` prints is recorded, then
# `$XP_BENCH_ENGINES_BIN slurm SLURM_CONF RECORDED` measures the command and the parser.
# Without munged or slurmctld, or when they cannot start, it says SKIPPED loudly and exits 0.
# Only the pids started here are stopped.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
skip() { echo "bench_engines: slurm SKIPPED: $*" >&2; echo "  slurm: SKIPPED (no live Slurm benchmark ran): $*"; exit 0; }

. "$root/tests/slurm_lib.sh"
slurm_need munged munge slurmctld scontrol sbatch squeue
slurm_cloud gpu \
	"NodeName=gpu[00001-10000] CPUs=64 RealMemory=512000 Gres=gpu:h100:8 Feature=h100,nvlink State=CLOUD" \
	"PartitionName=train Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
sbatch -Q -N 1000 --gres=gpu:h100:4 -c 8 --wrap 'sleep 1000' -J bench >/dev/null || skip "sbatch failed"
for _ in $(seq 1 300); do
	[ "$(squeue -h -t CF,R -o %i | wc -l)" = 1 ] && break
	sleep 0.1
done
[ "$(squeue -h -t CF,R -o %i | wc -l)" = 1 ] || echo "bench_engines: the 1,000-node job did not start (no GresUsed)" >&2
scontrol -d show node -o >nodes.txt || { echo "bench_engines: scontrol failed" >&2; exit 1; }
"$XP_BENCH_ENGINES_BIN" slurm "$scratch/slurm.conf" "$scratch/nodes.txt"
