#!/bin/sh
# security_check.sh: every file and test man/xpool-security.7 cites exists, so that the page's
# "the test that proves it" stays true as tests are renamed or removed. A citation is
# tests/FILE (a file that must exist) or tests/FILE.c:TEST (a START_TEST(TEST) in that file).
set -eu
page=man/xpool-security.7
out=$(groff -ww -z -man "$page" 2>&1) || { echo "security: groff failed: $out"; exit 1; }
if [ -n "$out" ]; then echo "security: groff warnings in $page:"; echo "$out"; exit 1; fi
bad=0; n=0
for cite in $(grep -o 'tests/[A-Za-z0-9_./-]*\(:[A-Za-z0-9_]*\)\{0,1\}' "$page" | sed 's/[.,;]*$//' | sort -u); do
	file=${cite%%:*}
	n=$((n + 1))
	if [ ! -e "$file" ]; then echo "security: $page cites $file, which does not exist"; bad=1; continue; fi
	case $cite in
	*:*) t=${cite#*:}
	     grep -q "^START_TEST($t)" "$file" || { echo "security: $page cites $cite: no START_TEST($t) in $file"; bad=1; } ;;
	esac
done
[ $bad = 0 ] && echo "security: $page renders cleanly and its $n citations exist"
exit $bad
