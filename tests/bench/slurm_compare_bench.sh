#!/bin/bash
# slurm_compare_bench.sh: `place --dry-run --compare` on 1,000 requests against a real slurmctld
# (issue 17's benchmark). A private munged and slurmctld on loopback (tests/slurm_lib.sh), 16
# State=CLOUD nodes gpu[01-16] with gres gpu:h100:8, four jobs holding 1, 2, 4 and 6 GPUs of
# gpu01, gpu03, gpu05, gpu07 (the nodes stay CONFIGURING without slurmd). One xpool run reads the
# cluster once (--slurm-conf) and runs a batch of 1,000 place lines (-b): devices 1 to 8,
# replicas 1 to 3, strategies pack and spread, each with --compare. -v says for each how long
# xpool's decision took and how long sbatch --test-only took to answer; printed: their totals,
# medians and the ratio, and how many answers agree, differ, or were refused by Slurm.
# Needs munged, slurmctld, sbatch, scontrol, squeue; without them it says SKIPPED and exits 0.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${XPOOL_BIN:-$root/xpool}
N=${XP_BENCH_REQUESTS:-1000}
skip() { echo "bench_slurm_compare: SKIPPED: $*"; exit 0; }

. "$root/tests/slurm_lib.sh"
slurm_need munged munge slurmctld sbatch scontrol squeue
slurm_cloud gpu \
	"NodeName=gpu[01-16] CPUs=64 RealMemory=512000 Gres=gpu:h100:8 State=CLOUD" \
	"PartitionName=train Nodes=gpu[01-16] Default=YES MaxTime=INFINITE State=UP"
k=0
for g in "01 1" "03 2" "05 4" "07 6"; do
	set -- $g
	sbatch -Q -p train --gres=gpu:h100:$2 -N1 -w gpu$1 --wrap 'sleep 1000' -J busy$1 || skip "sbatch failed"
	k=$((k + 1))
done
for _ in $(seq 1 300); do
	[ "$(squeue -h -t CF,R -o %i | wc -l)" = $k ] && break
	sleep 0.1
done
[ "$(squeue -h -t CF,R -o %i | wc -l)" = $k ] || skip "the busy jobs did not start"

strategies=(pack spread)
for i in $(seq 0 $((N - 1))); do
	echo "place --dry-run --compare --devices $((1 + i % 8)) --replicas $((1 + (i / 8) % 3)) --strategy ${strategies[$(((i / 24) % 2))]}"
done >requests.xp
t0=$(date +%s.%N)
"$bin" --slurm-conf "$SLURM_CONF" -v -k -b requests.xp >answers.txt 2>times.txt
st=$?
t1=$(date +%s.%N)
[ -n "${XP_BENCH_KEEP:-}" ] && cp answers.txt times.txt "$XP_BENCH_KEEP"/
grep -v '^xpool: place --compare: xpool decided' times.txt | grep -v 'placement index' | head -5
awk -v n="$N" -v t0="$t0" -v t1="$t1" -v st=$st '
	/^xpool: place --compare: xpool decided in/ { x[++k] = $7; s[k] = $13; xs += $7; ss += $13 }
	function median(a, m,   i, j, t) { for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j > 0 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } return m ? a[int((m + 1) / 2)] : 0 }
	END {
		if (k == 0) { print "bench_slurm_compare: no timings (exit " st ")"; exit 1 }
		printf "bench_slurm_compare: %d requests, %d asked of Slurm, %.1f s wall (exit %d)\n", n, k, t1 - t0, st
		printf "bench_slurm_compare: xpool decision %.3f ms total, median %.4f ms; sbatch --test-only %.1f ms total, median %.2f ms\n", xs, median(x, k), ss, median(s, k)
		printf "bench_slurm_compare: ratio sbatch/xpool %.0f (totals), %.0f (medians)\n", ss / (xs > 0 ? xs : 1e-9), median(s, k) / (median(x, k) > 0 ? median(x, k) : 1e-9)
	}' times.txt
echo "bench_slurm_compare: agree $(grep -cx agree answers.txt), differ $(grep -cx differ answers.txt) (of which Slurm refused $(grep -c '^slurm: refused' answers.txt)), not asked (xpool refused) $(grep -c '^slurm: not asked' answers.txt)"
