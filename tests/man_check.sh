#!/bin/sh
# man_check.sh: the manual renders without warnings, and names every command and global option.
set -eu
page=man/xpool.1
out=$(groff -ww -z -man "$page" 2>&1) || { echo "man: groff failed: $out"; exit 1; }
if [ -n "$out" ]; then echo "man: groff warnings in $page:"; echo "$out"; exit 1; fi
bin=${XPOOL_BIN:-./xpool}
missing=0
# Every command of `xpool help` and every option it lists must appear in the page.
for word in $("$bin" help | awk '/^commands:/{c=1;next} /^$/{c=0} c{print $1}') \
            $("$bin" help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
	esc=$(printf '%s' "$word" | sed 's/-/\\\\-/g')
	if ! grep -q -- "$esc\|$word" "$page"; then echo "man: $page does not mention $word"; missing=1; fi
done
[ $missing = 0 ] && echo "man: $page renders cleanly and covers every command and option"
exit $missing
