#!/bin/sh
# run.sh: `make fuzz`: runs every libFuzzer harness for FUZZ_SECONDS (default 20), FUZZ_JOBS at
# a time (default 2), each on its own corpus under DIR/corpus/NAME, seeded from
# tests/fuzz/seeds.txt and tests/fuzz/regress/NAME. A crash, leak, timeout or out-of-memory
# fails the run and leaves the input as DIR/crashes/NAME-*: copy it to tests/fuzz/regress/NAME/
# (then `make check` replays it in every build) before fixing what it found.
#
#   sh tests/fuzz/run.sh DIR BINARY...
set -u
dir=$1; shift
secs=${FUZZ_SECONDS:-20}
jobs=${FUZZ_JOBS:-2}
case $secs in ''|*[!0-9]*) echo "make fuzz: FUZZ_SECONDS must be a whole number of seconds, not '$secs'" >&2; exit 2;; esac
case $jobs in ''|*[!0-9]*|0) echo "make fuzz: FUZZ_JOBS must be a positive number, not '$jobs'" >&2; exit 2;; esac
mkdir -p "$dir/corpus" "$dir/seeds" "$dir/crashes" "$dir/logs"
# Leaks inside libhwloc's importer are hwloc's, as in `make check` (tests/lsan.supp, which
# make exports; set here too when this script is run by hand).
if [ -z "${LSAN_OPTIONS:-}" ]; then
	LSAN_OPTIONS="suppressions=$(pwd)/tests/lsan.supp:print_suppressions=0"
	export LSAN_OPTIONS
fi

# Copies NAME's seeds (globs from seeds.txt, and its regression inputs) into DIR/seeds/NAME.
seed() {
	name=$1
	rm -rf "$dir/seeds/$name"; mkdir -p "$dir/seeds/$name"
	globs=$(sed -n "s/^$name[[:space:]][[:space:]]*//p" tests/fuzz/seeds.txt)
	for g in $globs tests/fuzz/regress/$name/*; do
		for f in $g; do
			[ -f "$f" ] && cp "$f" "$dir/seeds/$name/$(echo "$f" | tr / _)"
		done
	done
	[ -n "$(ls "$dir/seeds/$name")" ] || { echo "make fuzz: $name has no seeds (tests/fuzz/seeds.txt)" >&2; return 1; }
}

# Runs one harness; prints one line; returns non-zero on a finding.
one() {
	bin=$1; name=$(basename "$bin"); name=${name#fuzz_}
	seed "$name" || return 1
	mkdir -p "$dir/corpus/$name"
	log="$dir/logs/$name.log"
	before="$dir/logs/$name.before"
	ls "$dir/crashes" >"$before"
	# libhwloc is built without frame pointers: with the fast unwinder a leak inside its
	# importer shows no hwloc_topology_load frame, and the suppression cannot name it.
	unwind=""
	[ "$name" = hwloc_xml ] && unwind="fast_unwind_on_malloc=0"
	ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+${unwind:+:}}$unwind" \
	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=262144 \
		-print_final_stats=1 -artifact_prefix="$dir/crashes/$name-" \
		"$dir/corpus/$name" "$dir/seeds/$name" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
	files=$(ls "$dir/corpus/$name" | wc -l)
	if [ $rc -ne 0 ]; then
		# The inputs this run wrote, whether or not the log says so (the code under test may
		# have had stderr pointed elsewhere when it failed, as during an hwloc load).
		inputs=$(ls "$dir/crashes" | grep "^$name-" | grep -v -x -F -f "$before" | sed "s|^|$dir/crashes/|")
		echo "FAIL fuzz $name: exit $rc after ${runs:-?} runs; log $log; input:" $inputs
		# Each input once more with the sanitizers' reports sent to a file, which stderr
		# pointed elsewhere cannot lose.
		for f in $inputs; do
			rep="$dir/logs/$name.replay"
			rm -f "$rep".*
			ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$rep" \
				UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$rep" \
				"$bin" -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$rep-" "$f" >>"$log" 2>&1
			cat "$rep".* >>"$log" 2>/dev/null
		done
		grep -E '^(==[0-9]+==.*ERROR|SUMMARY|.*runtime error)' "$log" | sort -u | head -n 5
		# CI's machine is gone once it has failed: its log must be enough to reproduce, so
		# xpool's frames of the stack and the input itself are printed too.
		grep -E '^ +#[0-9]+ ' "$log" | grep -v -E 'fuzzer::|__sanitizer|libc\.so|__libc_|pthread_kill|raise\.c|abort\.c|_start| in main ' |
			sed 's/ 0x[0-9a-f]* in / in /' | awk '!seen[$0]++' | head -n 10
		for f in $inputs; do
			size=$(wc -c <"$f")
			if [ "$size" -le 16384 ]; then
				echo "the input, $size bytes; to keep it: base64 -d >tests/fuzz/regress/$name/SOME-NAME <<'EOF'"
				base64 "$f"; echo "EOF"
			else
				echo "the input is $size bytes, too long to print; sha1 $(sha1sum <"$f" | cut -c1-40)"
			fi
		done
		return 1
	fi
	echo "ok   fuzz $name: ${secs} s, ${runs:-?} runs, ${cov:-cov: ?}, corpus $files"
}

fail=0; running=0; pids=""
for bin in "$@"; do
	one "$bin" >"$dir/logs/$(basename "$bin").line" 2>&1 &
	pids="$pids $!"; running=$((running + 1))
	if [ $running -ge "$jobs" ]; then
		for p in $pids; do wait "$p" || fail=1; done
		pids=""; running=0
		cat "$dir"/logs/*.line 2>/dev/null; rm -f "$dir"/logs/*.line
	fi
done
for p in $pids; do wait "$p" || fail=1; done
cat "$dir"/logs/*.line 2>/dev/null; rm -f "$dir"/logs/*.line
if [ $fail -ne 0 ]; then
	echo "make fuzz: a harness found a crash: copy its input to tests/fuzz/regress/NAME/ and fix it" >&2
	exit 1
fi
echo "make fuzz: $# harnesses, ${secs} s each, nothing found"
