#!/bin/bash
# slurm_node_check.sh: `xpool node drain|undrain` and view 1's d/u against a real Slurm: a private
# munged and slurmctld on loopback (slurm_lib.sh), four State=CLOUD nodes gpu[01-04], no slurmd.
#   cli:       drain gpu01 gpu02 with a reason; scontrol shows both DRAIN with it; undrain; the
#              audit log has a row per node with the reason and Slurm's answer; an unknown node
#              (and `all`, Slurm's word for every node) is an error naming it (exit 1) before
#              anything is drained; no reason, no
#              engine and --read-only are refused (exit 2) with nothing changed; a user who is
#              neither root nor SlurmUser is read-only by default (when setpriv can be one).
#   console:   Space on gpu01, Down, Space on gpu02 (the status line counts 2 tagged), d, a
#              reason, Enter, y: scontrol shows both DRAIN with it; u y on gpu01 resumes it.
#   read-only: with --read-only, `?` lists no drain key and d says why.
# Needs munged, slurmctld, scontrol, jq, tmux; without them, or when the daemons cannot start,
# it says SKIPPED loudly and exits 0. XPOOL_BIN names the xpool. Only pids started here stop.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${XPOOL_BIN:-$root/xpool}
skip() { echo "slurm-node: SKIPPED: $*" >&2; echo "slurm-node: SKIPPED: the drain/undrain checks did not run"; exit 0; }

. "$root/tests/slurm_lib.sh"
slurm_need munged munge slurmctld scontrol jq tmux
slurm_cloud gpu \
	"NodeName=gpu[01-04] CPUs=64 RealMemory=512000 Gres=gpu:h100:8 State=CLOUD" \
	"PartitionName=train Nodes=gpu[01-04] Default=YES MaxTime=INFINITE State=UP"

fail=0
bad() { echo "slurm-node: FAIL: $*"; fail=$((fail + 1)); }
ok() { echo "slurm-node: ok: $*"; }
socks=()
stop_tmux() { local s; for s in "${socks[@]}"; do tmux -L "$s" kill-server 2>/dev/null; done; }
trap 'stop_tmux; slurm_finish' EXIT
db=$scratch/node.db
x() { "$bin" --slurm-conf "$SLURM_CONF" --db "$db" "$@"; }
# state NODE: Slurm's State= and Reason= of the node, one line.
state() { scontrol show node "$1" | grep -Eo '(State|Reason)=[^ ]*( [^=]*[^ =]*)?' | tr '\n' ' '; }
drained() { scontrol show node "$1" | grep -q 'State=[^ ]*DRAIN'; }

# cli
if ! x node drain gpu01 gpu02 --reason "fan check 7" >drain.out 2>drain.err; then
	bad "drain gpu01 gpu02 failed:"; cat drain.err
elif drained gpu01 && drained gpu02 && scontrol show node gpu01 | grep -q 'Reason=fan check 7' &&
	scontrol show node gpu02 | grep -q 'Reason=fan check 7' && ! drained gpu03 &&
	grep -q '^gpu01: drained (slurm)$' drain.out && grep -q '^gpu02: drained (slurm)$' drain.out; then
	ok "drain: gpu01 $(state gpu01)"
else
	bad "drain did not leave gpu01 and gpu02 DRAIN with the reason:"; cat drain.out; state gpu01; state gpu02
fi
if ! x node undrain gpu01 gpu02 >undrain.out 2>undrain.err; then
	bad "undrain failed:"; cat undrain.err
elif drained gpu01 || drained gpu02; then
	bad "undrain left a node DRAIN: $(state gpu01) / $(state gpu02)"
else
	ok "undrain: gpu01 $(state gpu01)"
fi
"$bin" --db "$db" --json audit >audit.json
if [ "$(jq '[.audit[] | select(.action == "node.drain" and .after.engine == "slurm" and .after.reason == "fan check 7" and .after.ok)] | length' audit.json)" = 2 ] &&
	[ "$(jq -r '[.audit[] | select(.action == "node.drain") | .target] | join(",")' audit.json)" = gpu01,gpu02 ] &&
	[ "$(jq '[.audit[] | select(.action == "node.undrain" and .after.ok)] | length' audit.json)" = 2 ] &&
	[ "$(jq -r '.audit[0].actor' audit.json)" = "$(id -un)" ]; then
	ok "audit: $(jq -c '[.audit[] | [.actor, .action, .target]]' audit.json)"
else
	bad "the audit log lacks the drain and undrain rows:"; cat audit.json
fi
x node drain gpu03 gpu09 --reason "bad" >mixed.out 2>mixed.err
rc=$?
if [ $rc = 1 ] && grep -q 'slurm lists no node named gpu09' mixed.err && ! drained gpu03; then
	ok "unknown node: exit 1 before anything changed, $(cat mixed.err)"
else
	bad "drain gpu03 gpu09: exit $rc, not the error naming gpu09 with nothing drained:"; cat mixed.out mixed.err
fi
# Slurm reads NodeName=ALL as every node: refused, nothing drained.
x node drain all --reason "one node" >all.out 2>all.err
rc=$?
if [ $rc = 1 ] && grep -q 'no node named all' all.err && ! drained gpu01 && ! drained gpu04; then
	ok "all: exit 1, nothing drained"
else
	bad "drain all: exit $rc:"; cat all.out all.err; scontrol show node | grep State=
fi
x node undrain gpu03 >/dev/null 2>&1
x node drain gpu04 >noreason.out 2>&1; rc=$?
[ $rc = 2 ] && grep -q 'Slurm requires a reason' noreason.out && ! drained gpu04 && ok "no reason: exit 2" ||
	{ bad "drain without a reason: exit $rc"; cat noreason.out; }
x --read-only node drain gpu04 --reason r >ro.out 2>&1; rc=$?
[ $rc = 2 ] && grep -q 'read-only (--read-only); nothing changed' ro.out && ! drained gpu04 && ok "--read-only: $(cat ro.out)" ||
	{ bad "--read-only: exit $rc"; cat ro.out; }
"$bin" --db "$db" node drain gpu04 --reason r >none.out 2>&1; rc=$?
[ $rc = 2 ] && grep -q 'no engine' none.out && ok "no engine: exit 2" || { bad "no engine: exit $rc"; cat none.out; }
# Not root, not SlurmUser (root here): read-only by default. The scratch directory opens for
# the other user to reach munged's socket and the configuration.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	chmod 711 "$scratch" && chmod 644 "$scratch/slurm.conf"
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$bin" --slurm-conf "$SLURM_CONF" \
		--db /nonexistent/x.db node drain gpu04 --reason r >user.out 2>&1; rc=$?
	chmod 700 "$scratch"
	if [ $rc = 2 ] && grep -q 'read-only: Slurm lets only root or its SlurmUser (root) drain nodes, and this is nobody' user.out &&
		! drained gpu04; then
		ok "default read-only: $(cat user.out)"
	else
		bad "nobody was not refused as read-only: exit $rc"; cat user.out
	fi
else
	echo "slurm-node: note: not root or no setpriv: the default read-only check for another user did not run"
fi

# console SOCK ARGS...: view 1 on Slurm under tmux, waits for gpu04.
console() {
	local s=$1
	shift
	socks+=("$s")
	TERM=xterm-256color tmux -L "$s" -f /dev/null new-session -d -x 160 -y 50 \
		"$bin --no-color --slurm-conf $SLURM_CONF --db $db $* 2>$scratch/$s.err" 2>/dev/null
	wait_for "$s" gpu04 >/dev/null
}
wait_for() { # wait_for SOCK PATTERN...: 0 once one capture shows every (grep -E) pattern
	local s=$1 p good
	shift
	for _ in $(seq 1 400); do
		tmux -L "$s" capture-pane -p >pane.txt 2>/dev/null
		good=1
		for p in "$@"; do grep -Eq -- "$p" pane.txt || { good=; break; }; done
		[ -n "$good" ] && return 0
		sleep 0.05
	done
	return 1
}
until_drained() { for _ in $(seq 1 100); do drained "$1" && return 0; sleep 0.05; done; return 1; }

s=xpool-slurm-node-$$
console "$s" || { bad "the console did not show Slurm's nodes:"; cat pane.txt; }
# The write-access check runs on a thread: `?` lists the keys once it said yes.
tmux -L "$s" send-keys '?'
wait_for "$s" 'drain \(Slurm\) / cordon' || { bad "? does not list d for root:"; cat pane.txt; }
tmux -L "$s" send-keys Escape
tmux -L "$s" send-keys Space Down Space
wait_for "$s" '2 tagged' '^\* +gpu01' '^\* +gpu02' || { bad "Space Down Space did not tag gpu01 and gpu02:"; cat pane.txt; }
tmux -L "$s" send-keys d
wait_for "$s" 'Drain gpu01, gpu02: reason' || { bad "d did not ask for a reason naming both:"; cat pane.txt; }
tmux -L "$s" send-keys -l "console fan"
tmux -L "$s" send-keys Enter
wait_for "$s" 'Drain 2 nodes gpu01, gpu02 \(reason "console fan"\)\? y/N' || { bad "no y/N naming the nodes:"; cat pane.txt; }
tmux -L "$s" send-keys y
if until_drained gpu01 && until_drained gpu02 && scontrol show node gpu02 | grep -q 'Reason=console fan' &&
	wait_for "$s" 'drained gpu01, gpu02'; then
	ok "console: Space Down Space d reason y: gpu01 $(state gpu01), gpu02 $(state gpu02)"
else
	bad "the console's drain did not reach Slurm: $(state gpu01) / $(state gpu02)"; cat pane.txt
fi
# The map reads Slurm again at once: gpu01's row says drain.
wait_for "$s" 'gpu01 +[^ ]*drain' || { bad "the map does not show gpu01 draining:"; cat pane.txt; }
tmux -L "$s" send-keys Up u
wait_for "$s" 'Undrain 1 node gpu01\? y/N' || { bad "u did not ask about gpu01:"; cat pane.txt; }
tmux -L "$s" send-keys y
for _ in $(seq 1 100); do drained gpu01 || break; sleep 0.05; done
drained gpu01 && bad "u y did not resume gpu01: $(state gpu01)" || ok "console: u y resumed gpu01"
tmux -L "$s" send-keys q
x node undrain gpu02 >/dev/null 2>&1

r=xpool-slurm-node-ro-$$
console "$r" --read-only || { bad "the read-only console did not show Slurm's nodes:"; cat pane.txt; }
tmux -L "$r" send-keys '?'
wait_for "$r" 'run ssh on the node' || { bad "? did not open:"; cat pane.txt; }
grep -q 'drain' pane.txt && { bad "--read-only: ? lists the drain key:"; cat pane.txt; }
tmux -L "$r" send-keys Escape d
if wait_for "$r" 'read-only \(--read-only\)' && ! grep -q 'reason' pane.txt; then
	ok "console --read-only: no drain key, d says read-only"
else
	bad "--read-only console: d did not say read-only:"; cat pane.txt
fi
tmux -L "$r" send-keys q
grep -l 'Sanitizer\|runtime error' "$scratch"/*.err 2>/dev/null && { bad "the sanitizers said:"; cat "$scratch"/*.err; }

echo "slurm-node: $fail failed"
[ "$fail" = 0 ]
