#!/bin/bash
# readme_check.sh: every `$ ` example in README.md runs as written and prints what the README
# shows. The blocks run in order, in one bash (they are documentation shell lines: files, `cd`,
# `&` jobs and `kill %N` carry from one line to the next), in a scratch copy of what the README
# assumes: the repository root (tests/fixtures and themes, read only), xpool on PATH, a fresh
# HOME. Outputs are compared after masking what differs from run to run: times, durations,
# ports, digests and ETags, the user's name and HOME.
#
#   tests/readme_check.sh            check (exit 1 and a diff per drifting example)
#   tests/readme_check.sh --update   rewrite README.md's outputs from this run (review: git diff)
#
# Conventions the README keeps: a line ending in `&` starts a background job; the harness waits
# (up to 20 s) for its first line of output, which is that line's output (an agent's "serving"
# line). `kill %N` also waits for the job to end. Every job still running at the end is stopped.
# A block whose lines do not start with `$ ` (a console screen) is not run. XPOOL_BIN names the
# xpool to test (default ./xpool).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
readme=$root/README.md
bin=${XPOOL_BIN:-$root/xpool}
update=0
[ "${1:-}" = --update ] && update=1

case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
[ -x "$bin" ] || { echo "readme: $bin: not an executable (build first, or set XPOOL_BIN)"; exit 1; }
for tool in curl jq; do
	command -v $tool >/dev/null 2>&1 || { echo "readme: the examples need $tool (make check installs it)"; exit 1; }
done

# The examples' agents listen on the ports the README names: one taken by something else would
# show up as a drifted example; say so plainly instead.
for port in $(grep -oE '^\$ .*(localhost|127\.0\.0\.1):[0-9]+' "$readme" | grep -oE ':[0-9]+' | tr -d : | sort -u); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		echo "readme: port $port is in use; the README's agents need it (stop what listens there)"
		exit 1
	fi
done

# The examples run in a scratch directory: one naming a file under /tmp would pass only where
# such a file happens to exist (and fail on a clean machine).
if grep -nE '^\$ .*[ =]/tmp/' "$readme"; then
	echo "readme: the lines above use /tmp; examples must use files of their own directory"
	exit 1
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/xpool-readme.XXXXXX") || exit 1
work=$scratch/work
mkdir -p "$work/tests" "$scratch/bin" "$scratch/home" "$scratch/run"
ln -s "$root/tests/fixtures" "$work/tests/fixtures"
ln -s "$root/themes" "$work/themes"
ln -s "$bin" "$scratch/bin/xpool"

# The background jobs the examples start: stopped whatever happens.
bg_pids=()
finish() {
	for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${bg_pids[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$scratch"
}
trap finish EXIT
trap 'exit 2' INT TERM

# Splits the README into run/cmd.N (a command) and run/exp.N (the output shown after it).
n=$(awk -v dir="$scratch/run" '
	/^```/ { inblock = !inblock; cmd = 0; next }
	inblock && /^\$ / { n++; cmd = 1; printf "%s\n", substr($0, 3) > (dir "/cmd." n); printf "" > (dir "/exp." n); next }
	inblock && cmd { print > (dir "/exp." n) }
	END { print n + 0 }' "$readme")
[ "$n" -gt 0 ] || { echo "readme: no \$ examples in $readme"; exit 1; }

user=$(id -un)
# What differs from run to run, in the README and in a run alike.
mask() {
	sed -E \
		-e "s#$scratch/home#~#g" -e "s#$scratch/work#.#g" \
		-e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}(:[0-9]{2})?/<TIME>/g' \
		-e 's/[0-9]{8}T[0-9]{6}Z/<TIME>/g' \
		-e 's/^Date: .*/Date: <TIME>/' \
		-e 's/^X-Xpool-Time: .*/X-Xpool-Time: <TIME>/' \
		-e 's/\b[0-9]{2}:[0-9]{2}:[0-9]{2}\b/<TIME>/g' \
		-e 's/"(discovered|started|time|last_ok|age_s|next_try)": ?[0-9]+/"\1":<N>/g' \
		-e 's/"(discovery_ms|duration_s|latency_ms)": ?[-0-9.eE+]+/"\1":<N>/g' \
		-e 's/[0-9]+(\.[0-9]+)? ms\b/<N> ms/g' \
		-e 's/\b[0-9]+s\b/<N>s/g' \
		-e 's/\b[0-9]+\.[0-9]+ s\b/<N> s/g' \
		-e 's/[0-9a-f]{16,}/<HEX>/g' \
		-e 's/(127\.0\.0\.1|localhost|\[::1\]):[0-9]+/\1:<PORT>/g' \
		-e 's/port [0-9]+/port <PORT>/g' \
		-e "s/\\b($user|root)\\b/<USER>/g" \
		-e 's/\r$//' -e 's/  +/ /g' -e 's/ +$//'
}

# A file's text ending in a newline (curl's JSON replies end without one; the README shows the
# line as a line).
text() {
	cat "$1"
	[ -s "$1" ] && [ -n "$(tail -c 1 "$1")" ] && echo
	return 0
}

cd "$work" || exit 1
export PATH="$scratch/bin:$PATH" HOME="$scratch/home" LC_ALL=C.UTF-8 TZ=UTC
unset XDG_STATE_HOME XDG_CONFIG_HOME XDG_DATA_HOME NO_COLOR XPOOL_ADAPTER_PATH XPOOL_ADAPTER_PATH_ONLY XPOOL_ADAPTERS \
	HWLOC_XMLFILE
failed=0
drifted=0
last=0
for i in $(seq 1 "$n"); do
	cmd=$(cat "$scratch/run/cmd.$i")
	out=$scratch/run/out.$i
	case $cmd in
	*'&')
		# A background job: its first line is this example's output.
		eval "$cmd" >"$out" 2>&1
		bg_pids+=("$!")
		for _ in $(seq 1 200); do
			[ -s "$out" ] && break
			kill -0 "$!" 2>/dev/null || break
			sleep 0.1
		done
		# Only what it printed so far: later lines (request logs) are not the example's.
		head -n 1 "$out" >"$out.first" && mv "$out.first" "$out"
		last=0
		;;
	*)
		(exit $last)
		eval "$cmd" >"$out" 2>&1
		last=$?
		case $cmd in
		'kill %'*) for j in $cmd; do case $j in %*) wait "$j" 2>/dev/null ;; esac; done ;;
		esac
		;;
	esac
	# What the README should show: its own text while it still matches (no noise in the diff
	# of an update), else this run's.
	if cmp -s <(mask <"$scratch/run/exp.$i") <(text "$out" | mask); then
		cp "$scratch/run/exp.$i" "$scratch/run/new.$i"
	else
		text "$out" | sed -e 's/\r$//' -e "s#$scratch/home#~#g" >"$scratch/run/new.$i"
		drifted=$((drifted + 1))
		if [ $update = 0 ]; then
			echo "readme: example $i drifted: \$ $cmd"
			diff -u <(mask <"$scratch/run/exp.$i") <(text "$out" | mask) | sed -e '1,2d' -e 's/^/    /'
			failed=1
		fi
	fi
done

if [ $update = 1 ]; then
	# The README with each example's output replaced by new.N.
	awk -v dir="$scratch/run" '
		function emit(i,   line, f) {
			f = dir "/new." i
			while ((getline line < f) > 0)
				print line
			close(f)
		}
		/^```/ { inblock = !inblock; cmd = 0; print; next }
		inblock && /^\$ / { n++; cmd = 1; print; emit(n); next }
		inblock && cmd { next }
		{ print }' "$readme" >"$scratch/README.new" && cat "$scratch/README.new" >"$readme"
	echo "readme: rewrote the outputs of $drifted of $n examples in $readme; review them with git diff"
	exit 0
fi
[ $failed = 0 ] && echo "readme: all $n README examples run as written and print what it shows"
exit $failed
