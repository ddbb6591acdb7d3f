#!/bin/bash
# slurm_source_check.sh: `--slurm-conf FILE` reads a real Slurm. A private munged and slurmctld on
# loopback (slurm_lib.sh) with State=CLOUD nodes declaring typed GRES (gpu:h100:8, npu:910b:8,
# mlu:mlu370:4) and no slurmd; sbatch jobs that start hold their GRES (the node stays CONFIGURING),
# one that cannot start pends; one node is drained. `xpool --slurm-conf ... --json inventory`
# must show the nodes, their CPUs, memory and features, one device per GRES unit with the
# vendor the GRES name and type say, the units Slurm allocated in use, and the states mapped.
# PrivateData=cloud: without it scontrol hides powered-down CLOUD nodes (all of them here).
#
# XP_SLURM_RECORD=DIR copies what scontrol printed into DIR (how tests/fixtures/slurm/ was made).
# Needs munged, slurmctld, sbatch, scontrol, jq; without them, or when the daemons cannot start,
# it says SKIPPED loudly and exits 0. XPOOL_BIN names the xpool. Only pids started here stop.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${XPOOL_BIN:-$root/xpool}
record=${XP_SLURM_RECORD:-}
skip() { echo "slurm-source: SKIPPED: $*" >&2; echo "slurm-source: SKIPPED: the live-Slurm source checks did not run"; exit 0; }

. "$root/tests/slurm_lib.sh"
slurm_need munged munge slurmctld sbatch scontrol squeue jq
slurm_cloud gpu,npu,mlu \
	"NodeName=gpu[01-02] CPUs=64 RealMemory=512000 Gres=gpu:h100:8 Feature=h100,nvlink State=CLOUD" \
	"NodeName=npu01 CPUs=192 RealMemory=1024000 Gres=npu:910b:8 Feature=ascend State=CLOUD" \
	"NodeName=mlu01 CPUs=64 RealMemory=256000 Gres=mlu:mlu370:4 State=CLOUD" \
	"PartitionName=train Nodes=gpu[01-02],npu01 Default=YES MaxTime=INFINITE State=UP PriorityTier=10" \
	"PartitionName=debug Nodes=ALL MaxTime=60 State=UP PriorityTier=1"

fail=0
bad() { echo "slurm-source: FAIL: $*"; fail=$((fail + 1)); }

# Drain gpu02 first, so that the jobs land on gpu01 and the two-node job pends.
scontrol update nodename=gpu02 state=drain reason=maintenance || bad "scontrol could not drain gpu02"
sbatch -Q -p train --gres=gpu:h100:4 -N1 -c 8 --wrap 'sleep 1000' -J four || bad "sbatch four"
sbatch -Q -p train --gres=npu:8 -N1 --wrap 'sleep 1000' -J npu || bad "sbatch npu"
sbatch -Q -p debug --gres=mlu:2 --wrap 'sleep 1000' -J mlu || bad "sbatch mlu"
sbatch -Q -p train --gres=gpu:h100:8 -N2 --wrap 'sleep 1000' -J pend || bad "sbatch pend"
sbatch -Q -H -p debug -t 30 --gres=gpu:h100:1 --wrap 'sleep 1000' -J 'held|job' || bad "sbatch held"
# Wait for the state, not for time: three jobs hold their nodes, one pends with a reason.
for _ in $(seq 1 300); do
	[ "$(squeue -h -t CF,R -o %i | wc -l)" = 3 ] && [ "$(squeue -h -n pend -o %r)" != None ] && break
	sleep 0.1
done
[ "$(squeue -h -t CF,R -o %i | wc -l)" = 3 ] || { squeue >&2; bad "the three jobs did not start"; }

if [ -n "$record" ]; then
	scontrol -d show node -o >"$record/scontrol-show-node-d.txt"
	scontrol show partition -o >"$record/scontrol-show-partition.txt"
	squeue -h -a -t all -o '%i|%P|%T|%Q|%D|%l|%b|%r|%N|%V|%S|%A|%q|%a|%u|%j' >"$record/squeue.txt" # XP_SLURM_SQUEUE_FORMAT
fi

if ! "$bin" --slurm-conf "$scratch/slurm.conf" --json inventory >inv.json 2>inv.err; then
	bad "xpool --slurm-conf inventory failed:"; cat inv.err
else
	q() { jq -r "$1" inv.json; }
	[ "$(q '.nodes | length')" = 4 ] || bad "not 4 nodes: $(q '[.nodes[].name] | join(" ")')"
	[ "$(q '.nodes[] | select(.name == "gpu01") | .devices | length')" = 8 ] || bad "gpu01 has not 8 devices"
	[ "$(q '[.nodes[] | select(.name == "gpu01") | .devices[] | select((.allocations | length) > 0)] | length')" = 4 ] ||
		bad "gpu01 has not 4 devices in use"
	[ "$(q '[.nodes[] | select(.name == "gpu01") | .devices[] | .vendor + "/" + .model] | unique | join(" ")')" = "NVIDIA/h100" ] ||
		bad "gpu01's devices are not NVIDIA h100"
	[ "$(q '[.nodes[] | select(.name == "npu01") | .devices[] | select((.allocations | length) > 0) | .vendor] | join(" ")')" = \
		"Huawei Huawei Huawei Huawei Huawei Huawei Huawei Huawei" ] || bad "npu01's 8 Huawei NPUs are not all in use"
	[ "$(q '[.nodes[] | select(.name == "mlu01") | .devices[] | select((.allocations | length) > 0) | .vendor + "/" + .model] | join(" ")')" = \
		"Cambricon/mlu370 Cambricon/mlu370" ] || bad "mlu01 has not 2 Cambricon mlu370 in use"
	[ "$(q '[.nodes[] | select(.name == "gpu02") | .devices[] | select((.allocations | length) > 0)] | length')" = 0 ] ||
		bad "gpu02 has devices in use"
	[ "$(q '.nodes[] | select(.name == "gpu02") | .state')" = draining ] || bad "gpu02 (drained) is not draining"
	[ "$(q '.nodes[] | select(.name == "gpu01") | .state')" = up ] || bad "gpu01 (mixed, cloud) is not up"
	[ "$(q '.nodes[] | select(.name == "npu01") | .cpu.pus // .pus // empty')" = 192 ] ||
		[ "$(grep -c '"pus": *192' inv.json)" -ge 1 ] || bad "npu01 has not 192 CPUs"
	[ "$(q '.nodes[] | select(.name == "gpu01") | .labels.governance["feature.nvlink"]')" = true ] ||
		bad "gpu01 has no feature.nvlink label"
fi
# In a batch script a line's --slurm-conf is that line's cluster, not the one an earlier line
# cached, and the next line without a source is this machine's again (the cached cluster is
# dropped both ways, as with --inventory). hwloc's PCI plugins are off for it: this machine's
# devices do not matter here, and they keep allocations a leak checker would report.
printf 'inventory\n--slurm-conf %s inventory\ninventory\n' "$scratch/slurm.conf" >batch.txt
if ! HWLOC_COMPONENTS=-pci,-linuxio "$bin" -b batch.txt >batch.out 2>batch.err; then
	bad "the batch script failed:"; cat batch.err
elif [ "$(grep -c 'gpu01' batch.out)" -lt 1 ] || [ "$(grep -c '  up  local' batch.out)" -ne 2 ]; then
	bad "a batch line's --slurm-conf did not give Slurm's nodes, or leaked to the next line:"; cat batch.out
fi
# Placement sees what is in use: 4 free H100s on gpu01, none on the drained gpu02.
if ! "$bin" --slurm-conf "$scratch/slurm.conf" place --dry-run --devices 4 --model h100 >place.out 2>&1; then
	bad "4 free H100s on gpu01 were not placed:"; cat place.out
fi
if "$bin" --slurm-conf "$scratch/slurm.conf" place --dry-run --devices 5 --model h100 >place5.out 2>&1; then
	bad "5 H100s were placed, but only 4 are free:"; cat place5.out
fi
# Slurm's partitions are the queues and its jobs the jobs (read: the database stays unmade).
db="$scratch/never.db"
if ! "$bin" --slurm-conf "$scratch/slurm.conf" --db "$db" --json queue list >ql.json 2>ql.err; then
	bad "queue list --slurm-conf failed:"; cat ql.err
else
	[ "$(jq -r '[.queues[].name] | sort | join(" ")' ql.json)" = "debug train" ] || bad "the queues are not debug, train: $(cat ql.json)"
	[ "$(jq -r '.queues[] | select(.name == "train") | "\(.priority) \(.running) \(.pending)"' ql.json)" = "10 2 1" ] ||
		bad "train is not priority 10 with 2 running, 1 pending: $(cat ql.json)"
	[ "$(jq -r '.queues[] | select(.name == "debug") | "\(.running) \(.pending)"' ql.json)" = "1 1" ] ||
		bad "debug has not 1 running, 1 pending (held): $(cat ql.json)"
	# No slurmdbd here: QOS and fair-share are notes saying why, not errors.
	jq -r '.notes[]' ql.json | grep -q '^QOS not available (no accounting: sacctmgr: ' ||
		bad "queue list does not note that QOS is not available: $(cat ql.json)"
	jq -r '.notes[]' ql.json | grep -q '^fair-share not available' ||
		bad "queue list does not note that fair-share is not available: $(cat ql.json)"
fi
"$bin" --slurm-conf "$scratch/slurm.conf" --db "$db" queue show train >qs.out 2>&1 &&
	grep -q '^priority: *10$' qs.out && grep -q '^jobs: *2 running, 1 pending$' qs.out ||
	{ bad "queue show train does not show Slurm's partition:"; cat qs.out; }
if ! "$bin" --slurm-conf "$scratch/slurm.conf" --db "$db" --json job list >jl.json 2>jl.err; then
	bad "job list --slurm-conf failed:"; cat jl.err
else
	jq_job() { jq -r ".jobs[] | select(.name == \"$1\") | $2" jl.json; }
	[ "$(jq -r '.jobs | length' jl.json)" = 5 ] || bad "not 5 jobs: $(cat jl.json)"
	[ "$(jq -r '[.jobs[].engine] | unique | join(" ")' jl.json)" = slurm ] || bad "the jobs do not say they are Slurm's"
	[ "$(jq_job four '.state + " " + .queue + " " + .engine_nodes')" = "running train gpu01" ] ||
		bad "four is not running in train on gpu01: $(jq_job four .)"
	[ "$(jq_job pend '.state + " " + .engine_reason.name + " " + .engine_reason.text')" = \
		"pending Resources ReqNodeNotAvail, UnavailableNodes:gpu02" ] || bad "pend has not Slurm's reason: $(jq_job pend .)"
	[ "$(jq_job 'held|job' '.state + " " + .engine_reason.name')" = "held Held" ] || bad "the held job is not held: $(jq_job 'held|job' .)"
	# Its wait counts from Slurm's submit time (squeue %V, local time): seconds here, not decades.
	w=$(jq_job pend .wait_s)
	[ "$w" -ge 0 ] 2>/dev/null && [ "$w" -lt 3600 ] || bad "pend's wait is not from its submit time: $w"
	# In another zone too (a POSIX TZ, no tzdata needed): squeue prints its local time, and
	# xpool reads it in the same zone only when squeue gets the caller's TZ.
	w=$(TZ=XPT-14 "$bin" --slurm-conf "$scratch/slurm.conf" --db "$db" --json job list |
		jq -r '.jobs[] | select(.name == "pend") | .wait_s')
	[ "$w" -ge 0 ] 2>/dev/null && [ "$w" -lt 3600 ] || bad "pend's wait under TZ=XPT-14 is not from its submit time: $w"
fi
"$bin" --slurm-conf "$scratch/slurm.conf" --db "$db" job show 4 >js.out 2>&1 && grep -q '^from: *slurm' js.out &&
	grep -q 'ReqNodeNotAvail' js.out || { bad "job show 4 does not show Slurm's job:"; cat js.out; }
# Read-only: a write with --slurm is refused, and nothing made the database.
if "$bin" --slurm-conf "$scratch/slurm.conf" --db "$db" job cancel 4 >jc.out 2>&1; then
	bad "job cancel with --slurm-conf was not refused"; cat jc.out
fi
[ ! -e "$db" ] || bad "reading Slurm's queues and jobs made the database $db"
[ "$(squeue -h -t CF,R,PD -o %i | wc -l)" = 5 ] || bad "Slurm's jobs changed"
# What-if on Slurm's jobs: the pending ones are simulated, and the three running ones hold
# their devices until their time limit (tests/slurm_running_check.sh checks when they end).
if ! "$bin" --slurm-conf "$scratch/slurm.conf" --db "$db" whatif --jobs-from-store >wi.out 2>&1; then
	bad "whatif --jobs-from-store with --slurm-conf failed:"; cat wi.out
else
	grep -q '^5 jobs from Slurm' wi.out || { bad "the what-if did not simulate Slurm's 2 waiting and 3 running jobs:"; cat wi.out; }
fi
# The console reads the same cluster: its header names Slurm and when it was last read, its
# node list the four nodes
# (a tmux server of our own socket, stopped at the end; skipped without tmux).
if command -v tmux >/dev/null 2>&1; then
	sock=xpool-slurm-source-$$
	TERM=xterm-256color tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 40 \
		"$bin --no-color --slurm-conf $scratch/slurm.conf --db $scratch/console.db" 2>/dev/null
	seen=
	for _ in $(seq 1 200); do
		tmux -L "$sock" capture-pane -p >pane.txt 2>/dev/null
		grep -q 'slurm slurm.conf read [0-9]*s ago' pane.txt && grep -q npu01 pane.txt && { seen=1; break; }
		sleep 0.05
	done
	[ -n "$seen" ] || { bad "the console did not show Slurm's nodes under a 'slurm slurm.conf read Ns ago' header:"; cat pane.txt; }
	# View 2: Slurm's partitions as the queues, and its jobs saying they are Slurm's.
	tmux -L "$sock" send-keys 2 2>/dev/null
	seen=
	for _ in $(seq 1 200); do
		tmux -L "$sock" capture-pane -p >pane2.txt 2>/dev/null
		grep -q 'train' pane2.txt && grep -q 'debug' pane2.txt && grep -q 'slurm [0-9]' pane2.txt && { seen=1; break; }
		sleep 0.05
	done
	tmux -L "$sock" kill-server 2>/dev/null
	[ -n "$seen" ] || { bad "view 2 did not show Slurm's partitions and jobs:"; cat pane2.txt; }
fi
# A Slurm that cannot be reached is an error naming the command, not a crash.
sed "s/^SlurmctldPort=.*/SlurmctldPort=$slurm_d_port/" slurm.conf >gone.conf
if "$bin" --slurm-conf "$scratch/gone.conf" inventory >gone.out 2>&1 || ! grep -q 'scontrol' gone.out; then
	bad "an unreachable slurmctld was not an error naming scontrol:"; cat gone.out
fi


# A second slurmctld for the edge cases: an array (two tasks start, three pend as one row
# "1_[3-5]"), a heterogeneous job ("5+0", "5+1"), jobs asking two partitions, CPU-only jobs,
# and untyped GPU requests in a partition of one GPU kind (train: h100) and of two (mixed).
slurm_ctld_stop
slurm_ports
{
	slurm_conf_common
	echo "SchedulerType=sched/backfill"
	echo "PrivateData=cloud"
	echo "GresTypes=gpu"
	echo "NodeName=gpu[01-02] CPUs=64 RealMemory=512000 Gres=gpu:h100:8 State=CLOUD"
	echo "NodeName=gpu03 CPUs=64 RealMemory=512000 Gres=gpu:a100:8 State=CLOUD"
	echo "NodeName=cpu01 CPUs=64 RealMemory=512000 State=CLOUD"
	echo "PartitionName=train Nodes=gpu[01-02] Default=YES MaxTime=INFINITE State=UP PriorityTier=10"
	echo "PartitionName=mixed Nodes=gpu[01-03] MaxTime=INFINITE State=UP"
	echo "PartitionName=cpu Nodes=cpu01 MaxTime=INFINITE State=UP"
} >slurm.conf
slurm_ctld
sbatch -Q -p train --array=1-5 --gres=gpu:8 -N1 --wrap 'sleep 1000' -J arr || bad "sbatch arr"
sbatch -Q -p train,cpu -N1 -c 4 --wrap 'sleep 1000' -J multi || bad "sbatch multi"
sbatch -Q -p cpu -N1 -c 64 --wrap 'sleep 1000' -J cpuonly || bad "sbatch cpuonly"
sbatch -Q -p cpu,train -N1 -c 64 -t 10 --wrap 'sleep 1000' -J multipend || bad "sbatch multipend"
sbatch -Q -p train -N1 --gres=gpu:8 : -p train --gres=gpu:2 --wrap 'sleep 1000' -J het || bad "sbatch het"
sbatch -Q -p mixed -N1 --gres=gpu:8 --wrap 'sleep 1000' -J mixedrun || bad "sbatch mixedrun"
sbatch -Q -p mixed -N1 --gres=gpu:8 --wrap 'sleep 1000' -J mixedpend || bad "sbatch mixedpend"
sbatch -Q -p train -N1 --gres=gpu:4 --wrap 'sleep 1000' -J trainpend || bad "sbatch trainpend"
# Four rows hold nodes (1_1, 1_2, multi on cpu01, mixedrun on gpu03); wait for that state.
for _ in $(seq 1 300); do
	[ "$(squeue -h -t CF,R -o %i | wc -l)" = 4 ] && [ "$(squeue -h -n cpuonly -o %r)" != None ] && break
	sleep 0.1
done
[ "$(squeue -h -t CF,R -o %i | wc -l)" = 4 ] || { squeue >&2; bad "the four edge jobs did not start"; }
if [ -n "$record" ]; then
	scontrol -d show node -o >"$record/scontrol-show-node-edge.txt"
	scontrol show partition -o >"$record/scontrol-show-partition-edge.txt"
	squeue -h -a -t all -o '%i|%P|%T|%Q|%D|%l|%b|%r|%N|%V|%S|%A|%q|%a|%u|%j' >"$record/squeue-edge.txt"
fi
if ! "$bin" --slurm-conf "$scratch/slurm.conf" --db "$db" --json job list >je.json 2>je.err; then
	bad "job list on the edge cluster failed:"; cat je.err
else
	je() { jq -r ".jobs[] | select(.name == \"$1\") | $2" je.json; }
	# 11 rows, 12 jobs: the array's pending rest 1_[3-5] is three, the het job's two components one.
	[ "$(jq -r '[.jobs[].id] | unique | length' je.json)" = 12 ] || bad "12 jobs have not 12 ids: $(jq -c '[.jobs[].id]' je.json)"
	[ "$(jq -r '[.jobs[] | select(.name == "arr" or .name == "het") | .engine_id] | sort | join(" ")' je.json)" = \
		"1_1 1_2 1_3 1_4 1_5 5" ] || bad "the array's tasks and the het job are not Slurm's: $(cat je.json)"
	[ "$(je het '.spec.groups | length')" = 2 ] || bad "the het job is not one job of two groups: $(je het .)"
	[ "$(je multipend .queue)" = train ] ||
		bad "the job asking cpu,train has not its first open partition as its queue: $(je multipend .)"
	[ "$(je cpuonly '.reason.name // "-"')" != AffinityUnsatisfiable ] && je cpuonly .note | grep -q 'no accelerator' ||
		bad "the CPU-only job reads AffinityUnsatisfiable: $(je cpuonly .)"
	je mixedpend .note | grep -q 'ambiguous' || bad "an untyped GPU job in a partition of two kinds is not ambiguous: $(je mixedpend .)"
	[ "$(je trainpend '.spec.groups[0].vendor // .spec.vendor' )/$(je trainpend '.spec.groups[0].model // .spec.model')" = NVIDIA/h100 ] ||
		bad "an untyped GPU job in train (all h100) did not get NVIDIA h100: $(je trainpend .spec)"
fi
"$bin" --slurm-conf "$scratch/slurm.conf" --db "$db" job list >je.out 2>&1 && grep -q 'slurm 1_4' je.out ||
	{ bad "job list does not show Slurm's id 1_4:"; cat je.out; }
# The what-if leaves out (and says) what it cannot simulate, as job list does, and fails on none.
if ! "$bin" --slurm-conf "$scratch/slurm.conf" --db "$db" whatif --jobs-from-store >we.out 2>&1; then
	bad "whatif on the edge cluster failed:"; cat we.out
elif ! grep -q '^not simulated: job 3 (slurm 3): asks no accelerator' we.out || ! grep -q '^not simulated: .*ambiguous' we.out ||
	grep -q '^cpu .*AffinityUnsatisfiable' we.out; then
	bad "whatif does not leave out the CPU-only and the ambiguous jobs:"; cat we.out
fi
# View 2 names an array's tasks and the het job by Slurm's own ids, as job list does.
if command -v tmux >/dev/null 2>&1; then
	sock=xpool-slurm-edge-$$
	TERM=xterm-256color tmux -L "$sock" -f /dev/null new-session -d -x 160 -y 50 \
		"$bin --no-color --slurm-conf $scratch/slurm.conf --db $scratch/console-edge.db" 2>/dev/null
	for _ in $(seq 1 200); do
		tmux -L "$sock" capture-pane -p >pane3.txt 2>/dev/null
		grep -q gpu03 pane3.txt && break
		sleep 0.05
	done
	tmux -L "$sock" send-keys 2 2>/dev/null
	seen=
	for _ in $(seq 1 200); do
		tmux -L "$sock" capture-pane -p >pane3.txt 2>/dev/null
		grep -q 'slurm 1_1 ' pane3.txt && grep -q 'slurm 1_4 ' pane3.txt && grep -q 'slurm 5 ' pane3.txt && { seen=1; break; }
		sleep 0.05
	done
	tmux -L "$sock" kill-server 2>/dev/null
	[ -n "$seen" ] || { bad "view 2 does not name the array's tasks and the het job by Slurm's ids:"; cat pane3.txt; }
fi

echo "slurm-source: $fail failed"
[ "$fail" = 0 ]
