#!/bin/sh
# replay.sh: part of `make check`: runs every harness, built without libFuzzer
# (tests/fuzz/fuzz_main.c), on its regression inputs (tests/fuzz/regress/NAME/: inputs a fuzzer
# once crashed on) and its seeds, under whichever compiler and sanitizers the build has.
#
#   sh tests/fuzz/replay.sh BINARY...
set -u
fail=0
for bin in "$@"; do
	name=$(basename "$bin"); name=${name#fuzz_}
	inputs=""
	globs=$(sed -n "s/^$name[[:space:]][[:space:]]*//p" tests/fuzz/seeds.txt)
	[ -n "$globs" ] || { echo "FAIL fuzz replay $name: no seeds line in tests/fuzz/seeds.txt"; fail=1; continue; }
	for g in $globs tests/fuzz/regress/$name/*; do
		for f in $g; do [ -f "$f" ] && inputs="$inputs $f"; done
	done
	if out=$("$bin" $inputs 2>&1); then
		echo "ok   fuzz replay $name: $(echo "$out" | tail -n 1 | sed 's/.*: //')"
	else
		echo "FAIL fuzz replay $name:"; echo "$out" | tail -n 20; fail=1
	fi
done
exit $fail
