#!/bin/bash
# slurm_compare_check.sh: `place --dry-run --compare` against a real Slurm. A private munged and
# slurmctld on loopback (slurm_lib.sh), four State=CLOUD nodes gpu[01-04] with gres gpu:h100:8 and
# no slurmd; a job pinned to gpu02 holds 4 of its GPUs (the node stays CONFIGURING). xpool reads
# the cluster with --slurm-conf, places, and asks sbatch --test-only with its export's request:
#   agree:   8 GPUs: xpool's pack and Slurm both take gpu01, now
#   differ:  4 GPUs: pack fills gpu02's 4 free GPUs (best fit), Slurm takes the empty gpu01
#   refused: --gres-type whole=h200, a type no node has: Slurm's "Requested node configuration
#            is not available" shown as its answer, exit 0 (xpool placed it)
#   xpool refuses 9 GPUs on one node: exit 3, Slurm not asked, no verdict.
# The agreeing and differing answers are Slurm 22.05's choices on this cluster: a later Slurm
# choosing otherwise fails here loudly, the answer printed.
#
# XP_SLURM_RECORD=DIR copies sbatch --test-only's raw answers into DIR (how
# tests/fixtures/slurm/sbatch-test-only-*.txt were made). Needs munged, slurmctld, sbatch,
# scontrol, squeue, jq; without them, or when the daemons cannot start, it says SKIPPED loudly
# and exits 0. XPOOL_BIN names the xpool. Only pids started here stop.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${XPOOL_BIN:-$root/xpool}
record=${XP_SLURM_RECORD:-}
skip() { echo "slurm-compare: SKIPPED: $*" >&2; echo "slurm-compare: SKIPPED: the place --compare checks against Slurm did not run"; exit 0; }

. "$root/tests/slurm_lib.sh"
slurm_need munged munge slurmctld sbatch scontrol squeue jq
slurm_cloud gpu \
	"NodeName=gpu[01-04] CPUs=64 RealMemory=512000 Gres=gpu:h100:8 State=CLOUD" \
	"PartitionName=train Nodes=gpu[01-04] Default=YES MaxTime=INFINITE State=UP"

fail=0
n=0
bad() { echo "slurm-compare: FAIL: $*"; fail=$((fail + 1)); }

sbatch -Q -p train --gres=gpu:h100:4 -N1 -w gpu02 --wrap 'sleep 1000' -J four || bad "sbatch four"
# Wait for the state, not for time: the job holds gpu02's GPUs.
for _ in $(seq 1 300); do
	[ "$(squeue -h -t CF,R -o %i | wc -l)" = 1 ] && break
	sleep 0.1
done
[ "$(squeue -h -t CF,R -o %i | wc -l)" = 1 ] || { squeue >&2; skip "the job holding gpu02 did not start"; }

# cmp NAME WANT-EXIT PLACE-ARGS...: text and JSON answers into NAME.txt, NAME.json.
cmp() {
	local name=$1 want=$2
	shift 2
	n=$((n + 1))
	"$bin" --slurm-conf "$SLURM_CONF" place --dry-run --compare "$@" >"$name.txt" 2>"$name.err"
	local st=$?
	"$bin" --slurm-conf "$SLURM_CONF" --json place --dry-run --compare "$@" >"$name.json" 2>>"$name.err"
	local sj=$?
	if [ $st != "$want" ] || [ $sj != "$want" ]; then
		bad "$name: exit $st (json $sj), not $want:"; cat "$name.txt" "$name.err"; return 1
	fi
	return 0
}
q() { jq -r "$2" "$1.json"; }

if cmp agree 0 --devices 8; then
	if [ "$(tail -n +3 agree.txt | head -1)" != agree ] || ! grep -q '^xpool: gpu01 now' agree.txt ||
		! grep -q '^slurm: gpu01 at .* (now) in partition train$' agree.txt || grep -q '^reason:' agree.txt; then
		bad "agree: not xpool gpu01 beside Slurm gpu01, agree:"; cat agree.txt
	elif [ "$(q agree '.verdict + " " + (.slurm.nodes | join(",")) + " " + (.slurm.start_now | tostring) + " " + (.reason | tostring)')" != "agree gpu01 true null" ]; then
		bad "agree: the JSON says otherwise:"; cat agree.json
	else
		echo "slurm-compare: ok: agree: $(tr '\n' ' ' <agree.txt)"
	fi
fi
if cmp differ 0 --devices 4; then
	if [ "$(sed -n 3p differ.txt)" != differ ] || ! grep -q '^xpool: gpu02 now (strategy pack)' differ.txt ||
		! grep -q '^slurm: gpu01 at .* (now)' differ.txt ||
		! grep -q "^reason: xpool's pack strategy chose gpu02 (score [0-9.]*); Slurm chose gpu01" differ.txt; then
		bad "differ: not xpool gpu02 (pack) beside Slurm gpu01, differ, with the reason:"; cat differ.txt
	elif [ "$(q differ '.verdict + " " + (.xpool.nodes | join(",")) + " " + (.slurm.nodes | join(","))')" != "differ gpu02 gpu01" ] ||
		! q differ '.request | join(" ")' | grep -q -- '--nodes=1 --ntasks=1 --ntasks-per-node=1 --gres=gpu:h100:4' ||
		q differ '.request | join(" ")' | grep -q -- '--nodelist'; then
		bad "differ: the JSON's verdict, nodes or request are wrong:"; cat differ.json
	else
		echo "slurm-compare: ok: differ: $(tr '\n' ' ' <differ.txt)"
	fi
fi
if cmp refused 0 --devices 4 --gres-type whole=h200; then
	if ! grep -qx 'slurm: refused: Requested node configuration is not available' refused.txt ||
		[ "$(sed -n 3p refused.txt)" != differ ] || ! grep -q '^reason: xpool places it now' refused.txt; then
		bad "refused: Slurm's refusal not shown as its answer:"; cat refused.txt
	elif [ "$(q refused '.slurm.will_run | tostring') $(q refused .slurm.error)" != "false Requested node configuration is not available" ]; then
		bad "refused: the JSON says otherwise:"; cat refused.json
	else
		echo "slurm-compare: ok: refused: $(tr '\n' ' ' <refused.txt)"
	fi
fi
if cmp xpool-refuses 3 --devices 9; then
	if ! grep -q '^xpool: refused: ' xpool-refuses.txt || ! grep -q '^slurm: not asked' xpool-refuses.txt ||
		grep -qx 'agree\|differ' xpool-refuses.txt || [ "$(q xpool-refuses '.slurm.asked | tostring') $(q xpool-refuses .verdict)" != "false null" ]; then
		bad "xpool-refuses: not a refusal with Slurm not asked:"; cat xpool-refuses.txt xpool-refuses.json
	else
		echo "slurm-compare: ok: xpool-refuses: $(tr '\n' ' ' <xpool-refuses.txt)"
	fi
fi
# Without a Slurm source --compare is a usage error.
n=$((n + 1))
"$bin" --inventory /dev/null place --dry-run --compare --devices 1 >nosrc.out 2>&1
st=$?
if [ $st != 2 ] || ! grep -q -- '--slurm' nosrc.out; then bad "no-source: exit $st, not 2 naming --slurm:"; cat nosrc.out
else echo "slurm-compare: ok: no-source: $(cat nosrc.out)"; fi

if [ -n "$record" ]; then
	# The raw answers, for tests/check_slurm_compare.c: one node, a node range, a heterogeneous
	# job, and two refusals (a gres type no node has; a partition that does not exist).
	ask() { # ask FILE PLACE-ARGS...: the export less its --nodelist lines, to sbatch --test-only
		local f=$1; shift
		"$bin" --slurm-conf "$SLURM_CONF" place --dry-run --export slurm "$@" | grep -v '^#SBATCH --nodelist=' >req.sh
		sbatch --test-only req.sh >"$record/$f" 2>&1
		echo "# exit $?" >>"$record/$f"
	}
	ask sbatch-test-only-one.txt --devices 8
	ask sbatch-test-only-range.txt --devices 8 --replicas 2
	ask sbatch-test-only-het.txt --devices 2 --replicas 3
	ask sbatch-test-only-gres.txt --devices 4 --gres-type whole=h200
	ask sbatch-test-only-partition.txt --devices 4 --partition nope
fi

echo "slurm-compare: $((n - fail)) of $n place --compare answers as expected from $(sbatch --version)"
[ $fail -eq 0 ]
