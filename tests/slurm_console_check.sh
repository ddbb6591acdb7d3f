#!/bin/bash
# slurm_console_check.sh: a real Slurm with xpool's hardware sources and the console's --compare.
# A private munged and slurmctld on loopback (slurm_lib.sh), four State=CLOUD nodes gpu[01-04]
# with gres gpu:h100:8 and no slurmd; a job pinned to gpu02 holds 4 of its GPUs.
#   merge:   --slurm-conf with --replay of gpu01 (a DGX's recorded nvidia-smi: one A100): gpu01's
#            hardware is the replay's, Slurm's count that differs a warning, the others Slurm's.
#   console: xpool --slurm-conf F --compare, view 3: a job of 8 GPUs shows Slurm's answer
#            ("slurm: would start on gpu01 ...") and "agree"; 4 GPUs "differ: xpool's pack
#            strategy chose gpu02 ..." (Slurm takes the empty gpu01, as slurm_compare_check.sh).
#   held:    with XPOOL_SLURM_ASK_HOLD the question stays in flight: the keys still answer
#            (s switches strategy), Esc gives it up.
# Each console is a tmux server of our own socket, stopped at the end. Needs munged, slurmctld,
# sbatch, scontrol, squeue, jq, tmux; without them, or when the daemons cannot start, it says
# SKIPPED loudly and exits 0. XPOOL_BIN names the xpool. Only pids started here stop.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${XPOOL_BIN:-$root/xpool}
skip() { echo "slurm-console: SKIPPED: $*" >&2; echo "slurm-console: SKIPPED: the --slurm merge and console --compare checks did not run"; exit 0; }

. "$root/tests/slurm_lib.sh"
slurm_need munged munge slurmctld sbatch scontrol squeue jq tmux
slurm_cloud gpu \
	"NodeName=gpu[01-04] CPUs=64 RealMemory=512000 Gres=gpu:h100:8 State=CLOUD" \
	"PartitionName=train Nodes=gpu[01-04] Default=YES MaxTime=INFINITE State=UP"

fail=0
bad() { echo "slurm-console: FAIL: $*"; fail=$((fail + 1)); }
socks=()
stop_tmux() { local s; for s in "${socks[@]}"; do tmux -L "$s" kill-server 2>/dev/null; done; }
trap 'stop_tmux; slurm_finish' EXIT

sbatch -Q -p train --gres=gpu:h100:4 -N1 -w gpu02 --wrap 'sleep 1000' -J four || bad "sbatch four"
for _ in $(seq 1 300); do
	[ "$(squeue -h -t CF,R -o %i | wc -l)" = 1 ] && break
	sleep 0.1
done
[ "$(squeue -h -t CF,R -o %i | wc -l)" = 1 ] || { squeue >&2; skip "the job holding gpu02 did not start"; }

# Merge: the replay's node joins Slurm's of its name.
mkdir rep
cp "$root/tests/fixtures/nvidia-smi/a100-sxm4-80gb-x4_535.54.03.q.xml" rep/nvidia-smi-q-x.xml
echo gpu01 >rep/hostname
if ! "$bin" --slurm-conf "$SLURM_CONF" --replay "$scratch/rep" --json inventory >merged.json 2>merged.err; then
	bad "--slurm-conf with --replay failed:"; cat merged.err
elif [ "$(jq -r '.nodes[] | select(.name == "gpu01") | .source' merged.json)" != "replay:$scratch/rep" ] ||
	! jq -r '.nodes[] | select(.name == "gpu01") | .warnings[]' merged.json |
		grep -q "^slurm: Gres gpu:h100:8 but the replay $scratch/rep found none of them" ||
	[ "$(jq -r '[.nodes[] | select(.source == "slurm")] | length' merged.json)" != 3 ] ||
	[ "$(jq -r '.nodes | length' merged.json)" != 4 ]; then
	bad "merge: gpu01 is not the replay's with Slurm's count warned, beside Slurm's three:"; cat merged.json
else
	echo "slurm-console: ok: merge: gpu01 from the replay, $(jq -r '.nodes[] | select(.name == "gpu01") | .warnings | join("; ")' merged.json)"
fi

echo '{"devices": 8}' >eight.json
echo '{"devices": 4}' >four.json

# console SOCK ENV...: starts the console with --compare on Slurm under tmux, waits for gpu04.
console() {
	local s=$1
	shift
	socks+=("$s")
	TERM=xterm-256color tmux -L "$s" -f /dev/null new-session -d -x 160 -y 50 \
		"env $* $bin --no-color --slurm-conf $SLURM_CONF --compare --db $scratch/console.db 2>$scratch/$s.err" 2>/dev/null
	wait_for "$s" gpu04 >/dev/null
}
# wait_for SOCK PATTERN...: the pane once every (grep -E) pattern shows; 1 when they do not.
wait_for() {
	local s=$1 p ok
	shift
	for _ in $(seq 1 400); do
		tmux -L "$s" capture-pane -p >pane.txt 2>/dev/null
		ok=1
		for p in "$@"; do grep -Eq -- "$p" pane.txt || { ok=; break; }; done
		[ -n "$ok" ] && return 0
		sleep 0.05
	done
	return 1
}
load() { # load SOCK FILE: view 3's L, Ctrl-U (the last path is offered), the path, Enter
	tmux -L "$1" send-keys L
	tmux -L "$1" send-keys C-u
	tmux -L "$1" send-keys -l "$2"
	tmux -L "$1" send-keys Enter
}

s=xpool-slurm-console-$$
console "$s" XPOOL_NOTHING=1 || { bad "the console did not show Slurm's nodes:"; cat pane.txt; }
tmux -L "$s" send-keys 3
wait_for "$s" 'No dry-run yet' || bad "view 3 did not open"
load "$s" "$scratch/eight.json"
if wait_for "$s" '│ slurm: would start on gpu01 at .* UTC \(now\) in partition train' '│ agree *$'; then
	echo "slurm-console: ok: agree: $(grep -Eo '(slurm: would|agree).*' pane.txt | tr -s ' ' | tr '\n' ' ')"
else
	bad "view 3 did not show Slurm's gpu01 and agree for 8 GPUs:"; cat pane.txt
fi
load "$s" "$scratch/four.json"
if wait_for "$s" '│ slurm: would start on gpu01 at .* \(now\)' "│ differ: xpool's pack strategy chose gpu02 \(score [0-9.]*\); Slurm chose gpu01"; then
	echo "slurm-console: ok: differ: $(grep -Eo '(slurm: would|differ).*' pane.txt | tr -s ' ' | tr '\n' ' ')"
else
	bad "view 3 did not show Slurm's gpu01 and differ (xpool gpu02) for 4 GPUs:"; cat pane.txt
fi
# q: the console ends cleanly (under the sanitizers: nothing leaked, the question's thread included).
quit_clean() { # quit_clean SOCK
	tmux -L "$1" send-keys q
	for _ in $(seq 1 400); do tmux -L "$1" has-session 2>/dev/null || break; sleep 0.05; done
	if tmux -L "$1" has-session 2>/dev/null; then bad "$1: q did not end the console"
	elif grep -q 'Sanitizer\|runtime error' "$scratch/$1.err"; then bad "$1: the sanitizers said:"; cat "$scratch/$1.err"
	fi
	tmux -L "$1" kill-server 2>/dev/null
}
quit_clean "$s"

# A question held in flight: the keys answer meanwhile, Esc gives it up.
h=xpool-slurm-console-held-$$
console "$h" XPOOL_SLURM_ASK_HOLD=1 || { bad "the held console did not show Slurm's nodes:"; cat pane.txt; }
tmux -L "$h" send-keys 3
wait_for "$h" 'No dry-run yet' || bad "view 3 did not open (held)"
load "$h" "$scratch/eight.json"
if ! wait_for "$h" 'slurm: asking sbatch --test-only'; then
	bad "the held question did not show as being asked:"; cat pane.txt
else
	tmux -L "$h" send-keys s
	if ! wait_for "$h" 'Dry-run +spread' 'slurm: asking sbatch --test-only'; then
		bad "the keys did not answer while Slurm was asked:"; cat pane.txt
	fi
	tmux -L "$h" send-keys Escape
	if wait_for "$h" 'slurm: not asked: given up \(Esc\); r asks again' && ! grep -q 'slurm: asking' pane.txt; then
		echo "slurm-console: ok: held: the keys answered while asking, Esc gave it up"
	else
		bad "Esc did not give the question up:"; cat pane.txt
	fi
	# Another question held in flight when the console quits: its thread is left to end.
	tmux -L "$h" send-keys r
	wait_for "$h" 'slurm: asking sbatch --test-only' || bad "r did not ask again (held)"
fi
quit_clean "$h"

echo "slurm-console: $fail failed"
[ "$fail" = 0 ]
