#!/bin/bash
# slurm_check.sh: `place --export slurm` scripts judged by a real Slurm. A private munged (its
# own key and socket) and a slurmctld on loopback (a generated slurm.conf: select/cons_tres,
# GresTypes=gpu,npu, the simulated cluster's nodes declared State=CLOUD with ResumeProgram=
# /bin/true, so that no slurmd is needed and Slurm's own select and gres code answers). Each
# exported script goes to `sbatch --test-only`, which must accept it ("to start at"); the same
# script asking one device more on a node must be refused, so that the acceptance means the
# counts were checked. Only the pids started here are stopped.
#
# The cluster is as busy as the snapshot in counts: each node declares only the devices (MIG
# slices) the snapshot leaves free, so that a script asking a node for more than was placed
# there (--gres=gpu:4 on every node of a job with 2 and 1 replicas of 2 GPUs) is refused. Which
# devices are free is not told to Slurm (its gres has no busy indices without slurmd).
#
# Needs munged, slurmctld, sbatch, scontrol (`make check` installs munge, slurmctld and
# slurm-client); without them, or when the daemons cannot start, it says SKIPPED loudly and
# exits 0, so that a machine without the packages still builds. XPOOL_BIN names the xpool.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${XPOOL_BIN:-$root/xpool}
skip() { echo "slurm: SKIPPED: $*" >&2; echo "slurm: SKIPPED: the real-Slurm export checks did not run"; exit 0; }

. "$root/tests/slurm_lib.sh"
slurm_need munged munge slurmctld sbatch scontrol jq
slurm_scratch
slurm_munge

# The simulated cluster the exports are placed on, and the same nodes declared to Slurm:
# NVIDIA H100/H800 and AMD nodes hold gres gpu, Ascend nodes gres npu, A100 nodes typed MIG
# gres gpu:1g.10gb, named as the export writes them (down and draining nodes are left out).
"$bin" sim gen --nodes 40 --seed 3 -o sim.json >/dev/null || { echo "slurm: sim gen failed"; exit 1; }
# And one H100 node mixing MIG and whole GPUs: GPU 0 cut into seven free 1g.10gb instances (the
# existing ones a slice takes by default), GPUs 1-7 whole; label pool=mix to place on it.
jq '.nodes += [(.nodes[] | select(.name == "h100-00002") | .name = "h100-mix" | .labels.governance = {"pool": "mix"} |
	.devices[0].allocations = [range(7) | {"slice": "1g.10gb", "job": null, "memory_mib": null, "share": 0}])]' \
	sim.json >c.json || { echo "slurm: jq failed"; exit 1; }
{
	slurm_conf_common
	echo "SchedulerType=sched/backfill"
	echo "GresTypes=gpu,npu"
	# Each node declares only what the snapshot leaves free: whole devices without an
	# allocation, and on A100s the MIG slices (7 per GPU) less those allocated, so that Slurm
	# refuses a script asking more of a node than the dry-run found there. The snapshot's MIG
	# instances are all in use, so the MIG jobs below are placed on new ones (--reconfigure):
	# the 1g.10gb gres declared here is those GPUs repartitioned as the script's comment asks.
	# H100 nodes hold MIG instances too (typed gres by profile, as gres.conf AutoDetect=nvml
	# declares them): their whole GPUs are typed h100, which an export asks with
	# --gres-type whole=h100 (an untyped gpu:N could be given a MIG instance).
	jq -r '.nodes[] | select(.state == "up" and (.devices | length) > 0) |
		(.devices[0].vendor) as $v | (.devices[0].model // "") as $m |
		([.devices[] | select((.allocations | length) == 0)] | length) as $free |
		([.devices[] | 7 - ([.allocations[] | (.slice // "7g") | capture("^(?<g>[0-9]+)g").g | tonumber] | add // 0)]
		 | add) as $slices |
		([.devices[].allocations[] | select(.slice != null and .job == null) | .slice] | group_by(.) |
		 map(",gpu:\(.[0]):\(length)") | join("")) as $inst |
		(if $v == "Huawei" then "npu:\($free)"
		 elif ($v == "NVIDIA" and ($m | test("A100"))) then "gpu:1g.10gb:\($slices)"
		 elif ($v == "NVIDIA" and ($m | test("H100"))) then "gpu:h100:\($free)\($inst)"
		 elif ($v == "NVIDIA" or $v == "AMD") then "gpu:\($free)" else empty end) as $g |
		"NodeName=\(.name) CPUs=64 RealMemory=1000 Gres=\($g) State=CLOUD"' c.json
	echo "PartitionName=train Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
} >slurm.conf
slurm_ctld

fail=0
n=0
# check NAME STEPS PLACE-ARGS...: the export must hold STEPS job steps (one per replica: the
# batch script runs once, on the first node), be accepted as it is, and be refused asking
# far more on its first --gres line.
check() {
	local name=$1 steps=$2
	shift 2
	n=$((n + 1))
	if ! "$bin" --inventory c.json place --dry-run "$@" --export slurm --partition train >"$name.sh" 2>"$name.err"; then
		echo "slurm: FAIL: $name: xpool place $* did not export:"; cat "$name.err"
		fail=$((fail + 1)); return
	fi
	if [ "$(grep -c '^srun ' "$name.sh")" != "$steps" ]; then
		echo "slurm: FAIL: $name: not one srun step per replica ($steps):"; cat "$name.sh"
		fail=$((fail + 1)); return
	fi
	local out
	out=$(sbatch --test-only "$name.sh" true 2>&1)
	if [ $? -ne 0 ] || ! grep -q 'to start at' <<<"$out"; then
		echo "slurm: FAIL: $name: sbatch --test-only refused it: $out"; cat "$name.sh"
		fail=$((fail + 1)); return
	fi
	# One more of the gres on the first component: more than the node holds must be refused.
	awk '!done && /^#SBATCH --gres=/ { n = split($0, a, ":"); a[n] = a[n] + 1000; s = a[1];
		for (i = 2; i <= n; i++) s = s ":" a[i]; print s; done = 1; next } { print }' "$name.sh" >"$name-over.sh"
	if sbatch --test-only "$name-over.sh" true >/dev/null 2>&1; then
		echo "slurm: FAIL: $name: Slurm accepted an over-asking copy too, so it checked nothing"
		fail=$((fail + 1)); return
	fi
	echo "slurm: ok: $name: $(grep -c '^srun ' "$name.sh") steps; $(grep -o 'Job [0-9]* to start at.*' <<<"$out")"
}
check gpus-several-nodes 3 --devices 4 --replicas 3 --model 'H100*' --gres-type whole=h100
check gpus-uneven 5 --devices 2 --replicas 5 --model 'H100*' --gres-type whole=h100
check gpus-uneven-three 9 --devices 1 --replicas 9 --model 'H100*' --gres-type whole=h100
# The default: a slice on existing instances (the mixed node's seven free 1g.10gb), and the
# whole GPUs beside them asked by type.
check mig-existing 7 --slice 1g.10gb --replicas 7 --model 'H100*'
check mixed-whole-typed 1 --devices 7 --label pool=mix --gres-type whole=h100
n=$((n + 1))
if grep -q -- '--gres=gpu:h100:7$' mixed-whole-typed.sh; then echo "slurm: ok: mixed-whole-typed asks gpu:h100:7"
else echo "slurm: FAIL: mixed-whole-typed: no typed whole-GPU gres:"; cat mixed-whole-typed.sh; fail=$((fail + 1)); fi
# An untyped whole-GPU request on a node holding MIG instances is refused (exit 2, the reason).
n=$((n + 1))
"$bin" --inventory c.json place --dry-run --devices 1 --label pool=mix --export slurm >mixed-untyped.sh 2>mixed-untyped.err
st=$?
if [ $st -ne 2 ] || ! grep -q 'holds MIG instances' mixed-untyped.err; then
	echo "slurm: FAIL: mixed-untyped: exit $st, not 2 with the reason:"; cat mixed-untyped.err mixed-untyped.sh; fail=$((fail + 1))
else
	echo "slurm: ok: mixed-untyped: refused: $(cat mixed-untyped.err)"
fi
check npus 2 --devices 4 --replicas 2 --model 'Ascend*'
# The host CPUs and memory placed with each replica (nodes declare CPUs=64 RealMemory=1000):
# asked per task and per node, and a copy asking more CPUs per task than a node has is refused.
check host-cpus-mem 5 --devices 2 --replicas 5 --model 'H100*' --gres-type whole=h100 --cpus 8 --host-memory 400
n=$((n + 1))
if ! grep -q -- '^#SBATCH --cpus-per-task=8$' host-cpus-mem.sh || ! grep -q -- '^#SBATCH --mem=[48]00M$' host-cpus-mem.sh ||
	! grep -q -- ' --cpus-per-task=8 --mem=400M ' host-cpus-mem.sh; then
	echo "slurm: FAIL: host-cpus-mem: CPUs or memory not asked as placed:"; cat host-cpus-mem.sh; fail=$((fail + 1))
elif sed 's/^#SBATCH --cpus-per-task=8$/#SBATCH --cpus-per-task=65/' host-cpus-mem.sh >host-cpus-over.sh &&
	sbatch --test-only host-cpus-over.sh true >/dev/null 2>&1; then
	echo "slurm: FAIL: host-cpus-mem: Slurm accepted 65 CPUs per task, so it checked nothing"; fail=$((fail + 1))
else
	echo "slurm: ok: host-cpus-mem: --cpus-per-task and --mem as placed, more CPUs refused"
fi
check mig-typed 12 --slice 1g.10gb --replicas 12 --model 'A100*' --reconfigure
# Slurm matches a gres type literally: the same MIG job under a type this site does not name
# (--gres-type) must be refused, so that the accepted one above means the type was checked.
n=$((n + 1))
if ! "$bin" --inventory c.json place --dry-run --slice 1g.10gb --replicas 12 --model 'A100*' --reconfigure --export slurm \
	--gres-type 1g.10gb=h100_1g.10gb >mig-other-type.sh 2>mig-other-type.err; then
	echo "slurm: FAIL: mig-other-type: xpool did not export:"; cat mig-other-type.err; fail=$((fail + 1))
elif ! grep -q -- '--gres=gpu:h100_1g.10gb:12$' mig-other-type.sh; then
	echo "slurm: FAIL: mig-other-type: the --gres-type type is not asked for:"; cat mig-other-type.sh; fail=$((fail + 1))
elif out=$(sbatch --test-only mig-other-type.sh true 2>&1); then
	echo "slurm: FAIL: mig-other-type: Slurm accepted a type no node has: $out"; fail=$((fail + 1))
else
	echo "slurm: ok: mig-other-type: refused as it should be: $out"
fi
echo "slurm: $((n - fail)) of $n exports judged as expected by $(sbatch --version)"
[ $fail -eq 0 ]
