#!/bin/bash
# slurm_json_check.sh: xpool reads a real Slurm through its JSON output (sinfo --json or, from
# Slurm 23.02, scontrol --json; squeue --json) and through the one-line records
# (`scontrol -d show node -o`, squeue -o) to the same model. A private munged and slurmctld
# on loopback (slurm_lib.sh `slurm_cloud`): State=CLOUD nodes with typed GRES and no slurmd,
# jobs holding GRES, one pending for nodes, one held with a '|' in its name, a held array.
# `xpool --slurm-conf F --json inventory` and `--json job list` must print the same with
# XPOOL_SLURM_JSON=1 and =0; shims on PATH refuse the other path's commands, so each run
# shows it read only what it says.
#
# XP_SLURM_RECORD=DIR saves, from one moment of this cluster, sinfo --json and squeue --json
# and the text records beside them (how tests/fixtures/slurm/*json* were made: see
# tests/fixtures/SOURCES.md). Needs munged, slurmctld, sbatch, scontrol, sinfo, squeue, jq;
# without them, or when the daemons cannot start, it says SKIPPED loudly and exits 0.
# XPOOL_BIN names the xpool. Only pids started here stop.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${XPOOL_BIN:-$root/xpool}
record=${XP_SLURM_RECORD:-}
[ -z "$record" ] || record=$(cd "$record" && pwd) || exit 1
skip() { echo "slurm-json: SKIPPED: $*" >&2; echo "slurm-json: SKIPPED: the Slurm JSON checks did not run"; exit 0; }

. "$root/tests/slurm_lib.sh"
slurm_need munged munge slurmctld sbatch scontrol sinfo squeue jq
slurm_cloud gpu,npu,mlu \
	"NodeName=gpu[01-02] CPUs=64 RealMemory=512000 Gres=gpu:h100:8 Feature=h100,nvlink State=CLOUD" \
	"NodeName=npu01 CPUs=192 RealMemory=1024000 Gres=npu:910b:8 Feature=ascend State=CLOUD" \
	"NodeName=mlu01 CPUs=64 RealMemory=256000 Gres=mlu:mlu370:4 State=CLOUD" \
	"PartitionName=train Nodes=gpu[01-02],npu01 Default=YES MaxTime=INFINITE State=UP PriorityTier=10" \
	"PartitionName=debug Nodes=ALL MaxTime=60 State=UP PriorityTier=1"

fail=0
bad() { echo "slurm-json: FAIL: $*"; fail=$((fail + 1)); }

scontrol update nodename=gpu02 state=drain reason=maintenance || bad "scontrol could not drain gpu02"
sbatch -Q -p train --gres=gpu:h100:4 -N1 -c 8 --wrap 'sleep 1000' -J four || bad "sbatch four"
sbatch -Q -p train --gres=npu:8 -N1 --wrap 'sleep 1000' -J npu || bad "sbatch npu"
sbatch -Q -p debug --gres=mlu:2 --wrap 'sleep 1000' -J mlu || bad "sbatch mlu"
sbatch -Q -p train --gres=gpu:h100:8 -N2 --wrap 'sleep 1000' -J pend || bad "sbatch pend"
sbatch -Q -H -p debug -t 30 --gres=gpu:h100:1 --wrap 'sleep 1000' -J 'held|job' || bad "sbatch held"
sbatch -Q -H -p debug -t 90 -a 1-3 --gres=gpu:h100:1 --wrap 'sleep 1000' -J arr || bad "sbatch arr"
# Wait for the state, not for time: three jobs hold their nodes, one pends with a reason.
for _ in $(seq 1 300); do
	[ "$(squeue -h -t CF,R -o %i | wc -l)" = 3 ] && [ "$(squeue -h -n pend -o %r)" != None ] && break
	sleep 0.1
done
[ "$(squeue -h -t CF,R -o %i | wc -l)" = 3 ] || { squeue >&2; bad "the three jobs did not start"; }

if [ -n "$record" ]; then
	sinfo --json >"$record/sinfo.json"
	squeue -a -t all --json >"$record/squeue.json"
	scontrol -d show node -o >"$record/json-moment-scontrol-show-node-d.txt"
	squeue -h -a -t all -o '%i|%P|%T|%Q|%D|%l|%b|%r|%N|%V|%S|%A|%q|%a|%u|%j' >"$record/json-moment-squeue.txt" # XP_SLURM_SQUEUE_FORMAT
fi

# Shims: "json" refuses the record commands (scontrol ... show node, squeue without --json),
# "text" refuses every --json; anything else runs the real tool.
for t in scontrol sinfo squeue; do
	real=$(command -v "$t")
	mkdir -p json text
	cat >"json/$t" <<EOF
#!/bin/bash
case " \$* " in *" --json "*) exec "$real" "\$@";; esac
case "$t \$*" in "scontrol -d show node"*|squeue*) echo "$t: refused by the json shim" >&2; exit 3;; esac
exec "$real" "\$@"
EOF
	cat >"text/$t" <<EOF
#!/bin/bash
case " \$* " in *" --json "*) echo "$t: unrecognized option '--json'" >&2; exit 1;; esac
exec "$real" "\$@"
EOF
	chmod +x "json/$t" "text/$t"
done

conf=$scratch/slurm.conf
db=$scratch/never.db
# job list's wait_s counts from now: two runs a second apart differ there only. The jobs come
# in squeue's sort order from the records (its default P,t,-p, with qsort: ties fall anyhow)
# and in Slurm's job table order from JSON: compared by id.
norm='if has("jobs") then .jobs |= (map(del(.wait_s)) | sort_by(.id, .name)) else . end'
for what in inventory "job list"; do
	f=${what// /-}
	# shellcheck disable=SC2086
	if ! PATH=$scratch/json:$PATH XPOOL_SLURM_JSON=1 "$bin" --slurm-conf "$conf" --db "$db" --json $what >"$f.json.out" 2>"$f.json.err"; then
		bad "$what with XPOOL_SLURM_JSON=1 failed:"; cat "$f.json.err"; continue
	fi
	# shellcheck disable=SC2086
	if ! PATH=$scratch/text:$PATH XPOOL_SLURM_JSON=0 "$bin" --slurm-conf "$conf" --db "$db" --json $what >"$f.text.out" 2>"$f.text.err"; then
		bad "$what with XPOOL_SLURM_JSON=0 failed:"; cat "$f.text.err"; continue
	fi
	jq -S "$norm" "$f.json.out" >"$f.json.n" && jq -S "$norm" "$f.text.out" >"$f.text.n" || bad "$what printed no JSON"
	diff -u "$f.text.n" "$f.json.n" >"$f.diff" || { bad "$what differs between the records and JSON:"; cat "$f.diff"; }
done
# What the two paths read is what the other checks expect: 4 nodes, 4 H100s in use on gpu01,
# gpu02 draining with Slurm's reason; 6 jobs, the pending one with Slurm's words.
q() { jq -r "$1" inventory.json.out; }
[ "$(q '.nodes | length')" = 4 ] || bad "not 4 nodes"
[ "$(q '[.nodes[] | select(.name == "gpu01") | .devices[] | select((.allocations | length) > 0)] | length')" = 4 ] ||
	bad "gpu01 has not 4 devices in use"
[ "$(q '.nodes[] | select(.name == "gpu02") | .state')" = draining ] || bad "gpu02 (drained) is not draining"
# 6 rows, 8 jobs: the held array 6_[1-3] is three.
[ "$(jq -r '.jobs | length' job-list.json.out)" = 8 ] || bad "not 8 jobs: $(cat job-list.json.out)"
[ "$(jq -r '.jobs[] | select(.name == "pend") | .engine_reason.text' job-list.json.out)" = \
	"ReqNodeNotAvail, UnavailableNodes:gpu02" ] || bad "pend has not Slurm's reason"
[ "$(jq -r '.jobs[] | select(.name == "held|job") | .state' job-list.json.out)" = held ] || bad "held|job is not held"
# Forced JSON where there is none is an error naming the command; auto falls back to the records.
if PATH=$scratch/text:$PATH XPOOL_SLURM_JSON=1 "$bin" --slurm-conf "$conf" --json inventory >forced.out 2>&1; then
	bad "XPOOL_SLURM_JSON=1 without JSON commands did not fail"; cat forced.out
elif ! grep -q 'sinfo --json' forced.out; then
	bad "the forced JSON error does not name sinfo --json:"; cat forced.out
fi
PATH=$scratch/text:$PATH "$bin" --slurm-conf "$conf" --db "$db" --json job list >auto.out 2>&1 &&
	[ "$(jq -r '.jobs | length' auto.out)" = 8 ] || { bad "without JSON commands the records were not read:"; cat auto.out; }
[ ! -e "$db" ] || bad "reading Slurm made the database $db"

echo "slurm-json: $fail failed"
[ "$fail" = 0 ]
