#!/bin/bash
# tests/soak/soak.sh: the console left running for SOAK_SECONDS (default 600) under load,
# to show that what it holds stays flat and that LeakSanitizer finds nothing at the end.
# `make soak SOAK_SECONDS=600` builds what it needs and runs it; it is not part of `make check`.
#
# What runs, all started (and stopped) by this script:
#   - SOAK_AGENTS (50) real `xpool agent` processes (the release build) on 127.0.0.1:42000...,
#     each serving one recorded node (NVIDIA, Ascend or AMD replays from tests/fixtures) under
#     its own name; every RESTART_EVERY seconds one of them, picked at random, is killed
#     (SIGKILL or SIGTERM, in turn) and started again on the same port;
#   - the console under test: the sanitizer build (ASan + UBSan + LeakSanitizer) in tmux on a
#     socket of its own, over those agents, refreshing every second (-d 1), with the database
#     the writers below write;
#   - a what-if: every WHATIF_EVERY seconds the queues view's what-if panel is run again
#     (x: drain the node under view 1's cursor, and every other time + 4:amd-mi100), over the
#     database's unfinished jobs; the console's other views are drawn in between;
#   - the store written: every STORE_EVERY seconds `xpool db snapshot` over the same agents
#     into the same sqlite file (one inventory per node, one sample per device), and one job
#     submitted and the oldest pending one cancelled (so the unfinished jobs stay as many).
#
# Every STEP seconds (60, or SOAK_SECONDS/10 when that is shorter) the console's RSS, open file
# descriptors (/proc/PID/fd), threads (/proc/PID/status) and the database's WAL file size are
# recorded, from the moment every agent first answered (start-up is not counted). The series is
# printed as a table and written to $SOAK_OUT/series.txt (build/soak/).
#
# "Flat", the rule this script fails on (first third: the samples up to N/3, last third: those
# from 2N/3, N the last sample's number; the maxima of each are compared):
#   RSS      last third's max <= first third's max x 1.10 + 8 MiB
#   fds      last third's max <= first third's max + 4 (agents restarting move a few sockets)
#   threads  last third's max <= first third's max + 1 (a what-if's thread may be in flight)
#   WAL      never above 16 MiB, and once it has passed 4 MiB (sqlite's automatic checkpoint
#            at 1000 pages) its salt (header bytes 16-23, which sqlite changes each time a
#            writer starts the file over after a complete checkpoint) must change at a later
#            sample: checkpoints keep starting it over, which a reader holding a transaction
#            open would prevent. The file does not shrink when started over, so its size is a
#            high-water mark: about 4 MiB plus one transaction when all is well, and it grows
#            by every write when not. (The checkpoint sequence at bytes 12-15 is no count: each
#            writer process starts its own from 0.)
# The sanitizers' allocator runs with a 16 MiB quarantine (ASAN_OPTIONS quarantine_size_mb), so
# that freed memory held for use-after-free checks fills early instead of looking like growth.
# At the end the console is quit with q: it must exit 0, and ASan/UBSan/LeakSanitizer must have
# written no report (ASAN_OPTIONS log_path; LSAN_OPTIONS suppressions=tests/lsan.supp, as the
# Makefile gives the tests).
#
# Only processes this script started are ever signalled (their PIDs are kept); the trap stops
# every one of them and the tmux server of its own socket. Ports: 42000-42999 (the soak's range).
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SOAK_SECONDS=${SOAK_SECONDS:-600}
SOAK_AGENTS=${SOAK_AGENTS:-50}
SOAK_OUT=${SOAK_OUT:-$ROOT/build/soak}
AGENT_BIN=${XPOOL_BIN:-$ROOT/xpool}
CONSOLE_BIN=${XPOOL_SAN_BIN:-$ROOT/build/san/xpool}
PORT0=${SOAK_PORT0:-42000}
PORT_MAX=${SOAK_PORT_MAX:-42999}
RESTART_EVERY=${RESTART_EVERY:-2}
WHATIF_EVERY=${WHATIF_EVERY:-15}
STORE_EVERY=${STORE_EVERY:-10}
FIX=$ROOT/tests/fixtures

die() { echo "soak: $*" >&2; exit 2; }
case $SOAK_SECONDS in '' | *[!0-9]*) die "SOAK_SECONDS=$SOAK_SECONDS: a whole number of seconds" ;; esac
[ "$SOAK_SECONDS" -ge 30 ] || die "SOAK_SECONDS=$SOAK_SECONDS: at least 30"
case $SOAK_AGENTS in '' | *[!0-9]*) die "SOAK_AGENTS=$SOAK_AGENTS: a whole number" ;; esac
[ "$SOAK_AGENTS" -ge 3 ] && [ "$SOAK_AGENTS" -le 900 ] || die "SOAK_AGENTS=$SOAK_AGENTS: 3 to 900"
[ -x "$AGENT_BIN" ] || die "$AGENT_BIN: not built (make)"
[ -x "$CONSOLE_BIN" ] || die "$CONSOLE_BIN: not built (make SANITIZE=1)"
command -v tmux >/dev/null || die "tmux is missing (make deps)"
STEP=$((SOAK_SECONDS / 10))
[ "$STEP" -le 60 ] || STEP=60

WORK=$(mktemp -d /tmp/xpool-soak.XXXXXX) || die "cannot make a scratch directory"
SOCK=xpool-soak-$$
DB=$WORK/soak.db
AGENTS=$WORK/agents.txt
mkdir -p "$SOAK_OUT"
SERIES=$SOAK_OUT/series.txt

declare -a APID  # agent i's PID (0: not running)
declare -a APORT # agent i's port
STORE_PID=0
CPID=0
FAILED=0

cleanup() {
	for i in "${!APID[@]}"; do
		[ "${APID[$i]}" -gt 0 ] && kill -TERM "${APID[$i]}" 2>/dev/null
	done
	[ "$STORE_PID" -gt 0 ] && kill -TERM "$STORE_PID" 2>/dev/null
	tmux -L "$SOCK" kill-server 2>/dev/null
	rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$SOCK" # the socket outlives a server whose session ended
	wait 2>/dev/null
	if [ "$FAILED" = 1 ] && [ -d "$WORK" ]; then
		rm -rf "$SOAK_OUT/work"
		cp -r "$WORK" "$SOAK_OUT/work" 2>/dev/null && echo "soak: its files are kept in $SOAK_OUT/work" >&2
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'FAILED=1; exit 130' INT TERM

fail() {
	echo "soak: FAIL: $*" >&2
	FAILED=1
}

X() { XDG_STATE_HOME=$WORK/state "$AGENT_BIN" "$@"; }

# Three recorded nodes, as tests/bench/bench_agents.c assembles them.
mkdir -p "$WORK/nv" "$WORK/atlas" "$WORK/mi" "$WORK/state"
cp "$FIX/nvidia-smi/a100-sxm4-80gb-x4_535.54.03.q.xml" "$WORK/nv/nvidia-smi-q-x.xml" &&
	cp "$FIX/ascend/npu-smi-info_atlas800-9010_8x910A_24.1.RC2.txt" "$WORK/atlas/npu-smi-info.txt" &&
	cp "$FIX/ascend/npu-smi-info-m_atlas800-9010_8x910A_24.1.RC2.txt" "$WORK/atlas/npu-smi-info-m.txt" &&
	cp "$FIX/hwloc/32em64t-2n8c2t-pci-wholeio.xml" "$WORK/atlas/hwloc.xml" &&
	cp "$FIX/amd/mi100-x4_rocm602.rocm-smi.json" "$WORK/mi/rocm-smi.json" || die "cannot copy the fixtures"
REPLAYS=(nv atlas mi)

# Starts agent i on its port APORT[i], trying TRIES times (a quarter of a second apart): the
# range is inside Linux's ephemeral ports, so a port may be some connection's for a while.
start_agent() {
	local i=$1 port=${APORT[$1]} tries=${2:-120} try log=$WORK/agent$1.log
	for try in $(seq 1 "$tries"); do
		: >"$log"
		XDG_STATE_HOME=$WORK/state "$AGENT_BIN" --replay "$WORK/${REPLAYS[$((i % 3))]}" agent \
			--listen "127.0.0.1:$port" --name "$(printf 'soak-%03d' "$i")" --interval 5 >"$log" 2>&1 &
		APID[$i]=$!
		local w
		for w in $(seq 1 100); do
			grep -q ' on http://' "$log" && return 0
			kill -0 "${APID[$i]}" 2>/dev/null || break
			sleep 0.05
		done
		kill -KILL "${APID[$i]}" 2>/dev/null
		wait "${APID[$i]}" 2>/dev/null
		APID[$i]=0
		sleep 0.25
	done
	echo "soak: agent $i did not start on port $port: $(cat "$log")" >&2
	return 1
}

RESTARTS=0
restart_agent() {
	local i=$1 sig=KILL
	[ $((RESTARTS % 2)) = 1 ] && sig=TERM
	if [ "${APID[$i]}" -gt 0 ]; then
		kill -"$sig" "${APID[$i]}" 2>/dev/null
		wait "${APID[$i]}" 2>/dev/null
		APID[$i]=0
	fi
	start_agent "$i" || return 1
	RESTARTS=$((RESTARTS + 1))
}

: >"$AGENTS"
port=$PORT0
for i in $(seq 0 $((SOAK_AGENTS - 1))); do
	APID[$i]=0
	# At the start a busy port is skipped for the next one (up to PORT_MAX).
	while :; do
		[ "$port" -le "$PORT_MAX" ] || die "no free port left in $PORT0-$PORT_MAX"
		APORT[$i]=$port
		port=$((port + 1))
		start_agent "$i" 2 2>/dev/null && break
	done
	echo "http://127.0.0.1:${APORT[$i]}" >>"$AGENTS"
done

# Queues and jobs for the what-if: two queues over the A100 and MI100 nodes, some jobs
# running, more pending.
{
	X --db "$DB" queue class add a100 --vendor NVIDIA --model '*A100*' &&
		X --db "$DB" queue class add mi100 --vendor AMD --model '*MI100*' &&
		X --db "$DB" queue add research --weight 2 --quota a100:devices=4/8/16,mi100:devices=8/16/32 &&
		X --db "$DB" queue add vision --quota a100:devices=2/4/8,mi100:devices=4/8/16
} >"$WORK/setup.log" 2>&1 || die "setting up the queues: $(cat "$WORK/setup.log")"
JOBS=0
submit_job() {
	JOBS=$((JOBS + 1))
	if [ $((JOBS % 2)) = 0 ]; then
		X --db "$DB" --agents "$AGENTS" job submit --queue research --devices 4 --vendor AMD --estimate 3h --name "r$JOBS"
	else
		X --db "$DB" --agents "$AGENTS" job submit --queue vision --devices 1 --vendor NVIDIA --estimate 1h --name "v$JOBS"
	fi
}
for j in $(seq 1 $((SOAK_AGENTS * 2 / 3 + 10))); do
	submit_job >>"$WORK/setup.log" 2>&1
	rc=$?
	# 4: an agent did not answer (partial data); the job is still filed.
	[ "$rc" = 0 ] || [ "$rc" = 4 ] || die "submitting job $JOBS: $(tail -n 3 "$WORK/setup.log")"
done

# The console, from a small script that keeps its exit status (the pane's shell is its parent).
ASAN_OPTS="log_path=$WORK/asan:quarantine_size_mb=16:detect_leaks=1:abort_on_error=0"
LSAN_OPTS="suppressions=$ROOT/tests/lsan.supp:print_suppressions=0"
UBSAN_OPTS="log_path=$WORK/ubsan:print_stacktrace=1:halt_on_error=1"
cat >"$WORK/console.sh" <<EOF
#!/bin/sh
env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color XDG_STATE_HOME='$WORK/state' ASAN_OPTIONS='$ASAN_OPTS' \\
	LSAN_OPTIONS='$LSAN_OPTS' UBSAN_OPTIONS='$UBSAN_OPTS' '$CONSOLE_BIN' --db '$DB' --agents '$AGENTS' -d 1 2>'$WORK/console.err'
echo \$? >'$WORK/rc'
EOF
tmux -L "$SOCK" -f /dev/null new-session -d -s soak -x 160 -y 48 "sh $WORK/console.sh" ||
	die "tmux could not start the console"
PANE=$(tmux -L "$SOCK" display-message -p -t soak '#{pane_pid}')
screen() { tmux -L "$SOCK" capture-pane -p -t soak 2>/dev/null; }
keys() { tmux -L "$SOCK" send-keys -t soak "$@"; }
for w in $(seq 1 50); do
	CPID=$(cat "/proc/$PANE/task/$PANE/children" 2>/dev/null | awk '{print $1}')
	[ -n "$CPID" ] && [ "$(readlink "/proc/$CPID/exe")" = "$(readlink -f "$CONSOLE_BIN")" ] && break
	CPID=0
	sleep 0.1
done
[ "$CPID" -gt 0 ] || die "the console did not start ($(cat "$WORK/console.err" 2>/dev/null))"
alive() { [ ! -e "$WORK/rc" ] && kill -0 "$CPID" 2>/dev/null; }
sleep 1
alive || { cat "$WORK/console.err" >&2; die "the console exited at once"; }

# Start-up: wait (up to 120 s, the sanitizer build is slow) until every agent has answered.
for w in $(seq 1 240); do
	screen | grep -q "agents $SOAK_AGENTS up 0 down" && break
	alive || break
	sleep 0.5
done
screen | grep -q "agents $SOAK_AGENTS up 0 down" || {
	screen >&2
	fail "the console never saw all $SOAK_AGENTS agents up"
	exit 1
}

# The what-if panel, opened once: view 1 first, so that its cursor names a node to drain.
keys 1
sleep 0.5
keys 2
sleep 0.3
keys w
WHATIFS=0
WHATIFS_DONE=0
whatif() {
	keys 2
	sleep 0.3
	local s
	s=$(screen)
	if echo "$s" | grep -q 'running: '; then
		return 0 # the last one is still running: the next turn starts another
	fi
	# The last run's result line: it finished (not cancelled, not failed).
	echo "$s" | grep -q 'wait baseline' && WHATIFS_DONE=$((WHATIFS_DONE + 1))
	if [ $((WHATIFS % 2)) = 0 ]; then
		keys x
	else
		keys +
		sleep 0.2
		keys -l -- 4:amd-mi100
		keys Enter
	fi
	WHATIFS=$((WHATIFS + 1))
}

SNAPSHOTS=0
SNAP_FAIL=0
store_write() {
	if [ "$STORE_PID" -gt 0 ]; then
		wait "$STORE_PID"
		local rc=$?
		# 4: an agent being restarted did not answer; the others' nodes were saved.
		[ "$rc" = 0 ] || [ "$rc" = 4 ] || SNAP_FAIL=$((SNAP_FAIL + 1))
		STORE_PID=0
	fi
	X --db "$DB" --agents "$AGENTS" db snapshot >>"$WORK/store.log" 2>&1 &
	STORE_PID=$!
	SNAPSHOTS=$((SNAPSHOTS + 1))
	if [ $((SNAPSHOTS % 3)) = 0 ]; then
		submit_job >>"$WORK/store.log" 2>&1
		local oldest
		oldest=$(X --db "$DB" --agents "$AGENTS" job list --state pending --json 2>/dev/null |
			grep -o '"id": *[0-9]*' | head -n 1 | grep -o '[0-9]*$')
		[ -n "$oldest" ] && X --db "$DB" --agents "$AGENTS" job cancel "$oldest" >>"$WORK/store.log" 2>&1
	fi
}

# Views drawn between what-ifs (not 3, whose form takes digits, nor 4, which may write).
VIEWS=(1 7 8 6 5 9 2)
VI=0

declare -a S_T S_RSS S_FD S_TH S_WAL S_SALT S_CK S_UP
# The WAL header's salt (8 bytes at offset 16) in hex; - without a WAL.
wal_salt() {
	local b
	b=$(od -An -tx1 -j16 -N8 "$DB-wal" 2>/dev/null | tr -d ' \n')
	echo "${b:--}"
}
NS=0
sample() {
	local t=$1 rss th fd wal up
	rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$CPID/status" 2>/dev/null)
	th=$(awk '/^Threads:/ {print $2}' "/proc/$CPID/status" 2>/dev/null)
	fd=$(ls "/proc/$CPID/fd" 2>/dev/null | wc -l)
	wal=$(stat -c %s "$DB-wal" 2>/dev/null || echo 0)
	up=$(screen | grep -o 'agents [0-9]* up' | head -n 1 | grep -o '[0-9]*')
	S_T[$NS]=$t
	S_RSS[$NS]=${rss:-0}
	S_FD[$NS]=$fd
	S_TH[$NS]=${th:-0}
	S_WAL[$NS]=$wal
	S_SALT[$NS]=$(wal_salt)
	# Restarts seen: samples so far whose salt differs from the one before.
	if [ "$NS" = 0 ]; then
		S_CK[$NS]=0
	elif [ "${S_SALT[$NS]}" != "${S_SALT[$((NS - 1))]}" ] && [ "${S_SALT[$((NS - 1))]}" != - ]; then
		S_CK[$NS]=$((S_CK[NS - 1] + 1))
	else
		S_CK[$NS]=${S_CK[$((NS - 1))]}
	fi
	S_UP[$NS]=${up:--}
	NS=$((NS + 1))
}

T0=$(date +%s)
sample 0
next_sample=$STEP
next_restart=$RESTART_EVERY
next_whatif=1
next_store=$STORE_EVERY
next_view=5
while :; do
	now=$(($(date +%s) - T0))
	alive || { fail "the console exited during the run"; break; }
	if [ "$now" -ge "$next_sample" ]; then
		sample "$next_sample"
		[ "$next_sample" -ge "$SOAK_SECONDS" ] && break
		next_sample=$((next_sample + STEP))
	fi
	if [ "$now" -ge "$next_restart" ]; then
		restart_agent $((RANDOM % SOAK_AGENTS)) || { fail "an agent could not be restarted"; break; }
		next_restart=$((now + RESTART_EVERY))
	fi
	if [ "$now" -ge "$next_whatif" ]; then
		whatif
		next_whatif=$((now + WHATIF_EVERY))
	fi
	if [ "$now" -ge "$next_store" ]; then
		store_write
		next_store=$((now + STORE_EVERY))
	fi
	if [ "$now" -ge "$next_view" ]; then
		keys "${VIEWS[$VI]}"
		VI=$(((VI + 1) % ${#VIEWS[@]}))
		next_view=$((now + 3))
	fi
	sleep 0.2
done
[ "$STORE_PID" -gt 0 ] && { wait "$STORE_PID"; STORE_PID=0; }

# Quit with the quit key (a what-if in flight is cancelled and joined by the view's free).
if alive; then
	keys Escape
	sleep 0.3
	keys 1
	sleep 0.3
	keys q
	for w in $(seq 1 600); do
		alive || break
		sleep 0.1
	done
fi
for w in $(seq 1 50); do [ -s "$WORK/rc" ] && break; sleep 0.1; done
CRC=$(cat "$WORK/rc" 2>/dev/null)
alive && fail "the console did not quit within 60 s of q"

# The table.
{
	echo "xpool soak: $SOAK_SECONDS s, $SOAK_AGENTS agents, console $CONSOLE_BIN -d 1"
	echo "host: $(nproc) CPUs, load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "restarts $RESTARTS, what-ifs started $WHATIFS (seen finished $WHATIFS_DONE), store writes $SNAPSHOTS (failed $SNAP_FAIL), jobs submitted $JOBS"
	printf '%6s %10s %5s %8s %10s %9s %10s\n' 't(s)' 'RSS(KiB)' 'fds' 'threads' 'WAL(KiB)' 'WAL new' 'agents up'
	for k in $(seq 0 $((NS - 1))); do
		printf '%6s %10s %5s %8s %10s %9s %10s\n' "${S_T[$k]}" "${S_RSS[$k]}" "${S_FD[$k]}" "${S_TH[$k]}" \
			$((S_WAL[k] / 1024)) "${S_CK[$k]}" "${S_UP[$k]}"
	done
} >"$SERIES"
cat "$SERIES"

# The rule (see the top of this file).
if [ "$NS" -ge 4 ]; then
	last=$((NS - 1))
	first_end=$((last / 3))
	last_start=$(((2 * last + 2) / 3))
	maxof() { # NAME FROM TO
		local -n arr=$1
		local m=0 k
		for k in $(seq "$2" "$3"); do [ "${arr[$k]}" -gt "$m" ] && m=${arr[$k]}; done
		echo "$m"
	}
	r1=$(maxof S_RSS 0 "$first_end") r3=$(maxof S_RSS "$last_start" "$last")
	f1=$(maxof S_FD 0 "$first_end") f3=$(maxof S_FD "$last_start" "$last")
	t1=$(maxof S_TH 0 "$first_end") t3=$(maxof S_TH "$last_start" "$last")
	wall=$(maxof S_WAL 0 "$last")
	# After the first sample past 4 MiB, was the WAL started over (its salt changed)?
	big=-1
	for k in $(seq 0 "$last"); do [ "$big" -lt 0 ] && [ "${S_WAL[$k]}" -gt 4194304 ] && big=$k; done
	ck_moved=1
	[ "$big" -ge 0 ] && [ "$big" -lt "$last" ] && [ "${S_CK[$last]}" = "${S_CK[$big]}" ] && ck_moved=0
	rlim=$((r1 * 110 / 100 + 8192))
	echo "flat? RSS $r1 -> $r3 KiB (limit $rlim); fds $f1 -> $f3 (limit $((f1 + 4))); threads $t1 -> $t3 (limit $((t1 + 1)));" \
		"WAL at most $((wall / 1024)) KiB (limit 16384), started over $((S_CK[last])) times between samples$([ $ck_moved = 1 ] || echo ', never after passing 4 MiB')" |
		tee -a "$SERIES"
	[ "$r3" -le "$rlim" ] || fail "RSS grew: $r1 KiB in the first third, $r3 KiB in the last"
	[ "$f3" -le $((f1 + 4)) ] || fail "open files grew: $f1 in the first third, $f3 in the last"
	[ "$t3" -le $((t1 + 1)) ] || fail "threads grew: $t1 in the first third, $t3 in the last"
	[ "$wall" -le 16777216 ] || fail "the WAL reached $wall bytes (checkpoints not keeping up)"
	[ "$ck_moved" = 1 ] || fail "the WAL passed 4 MiB and was never started over after (checkpoints blocked)"
else
	fail "only $NS samples"
fi
[ "$WHATIFS" -lt 2 ] || [ "$WHATIFS_DONE" -gt 0 ] || fail "no what-if was seen to finish"
[ "$SNAP_FAIL" = 0 ] || fail "$SNAP_FAIL store writes failed (see store.log)"
[ "$CRC" = 0 ] || fail "the console exited with status ${CRC:-unknown}"
if ls "$WORK"/asan.* "$WORK"/ubsan.* >/dev/null 2>&1; then
	for f in "$WORK"/asan.* "$WORK"/ubsan.*; do [ -e "$f" ] && { echo "== $f"; cat "$f"; }; done | tee "$SOAK_OUT/sanitizer.txt" >&2
	fail "the sanitizers reported (above; kept in $SOAK_OUT/sanitizer.txt)"
else
	rm -f "$SOAK_OUT/sanitizer.txt"
fi
if [ -s "$WORK/console.err" ]; then
	echo "soak: the console's stderr:" >&2
	cat "$WORK/console.err" >&2
fi
if [ "$FAILED" = 1 ]; then
	echo "soak: FAILED (series in $SERIES)" >&2
	exit 1
fi
echo "soak: ok: flat over $SOAK_SECONDS s, nothing reported by the sanitizers (series in $SERIES)"
