#!/bin/sh
# internals_check.sh: man/xpool-internals.7 (the architecture) renders without warnings and
# matches the tree: every file or folder it names exists, every folder of the engine and every
# command is in it, and every command it lists exists.
set -eu
cd "$(dirname "$0")/.."
page=man/xpool-internals.7
bin=${XPOOL_BIN:-./xpool}
out=$(groff -ww -z -man "$page" 2>&1) || { echo "internals: groff failed: $out"; exit 1; }
if [ -n "$out" ]; then echo "internals: groff warnings in $page:"; echo "$out"; exit 1; fi
bad=0
# The page's text without font escapes and with \- as -.
text=$(sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' "$page")

# 1. Paths it names (placeholders in capitals, such as cmd_NAME.c, are patterns, not files).
for p in $(printf '%s\n' "$text" | grep -oE '(src|ui|backends|adapters|tests|man|themes)/[A-Za-z0-9_./-]*' |
	   sed 's/[.,;:]*$//' | sort -u); do
	case $p in *[A-Z][A-Z]*) continue ;; esac
	[ -e "$p" ] || { echo "internals: $page names $p, which does not exist"; bad=1; }
done

# Bare file names (run.c, model.h) must be a file somewhere in the tree.
for f in $(printf '%s\n' "$text" | grep -oE '(^|[^A-Za-z0-9_/.])[a-z][a-z0-9_]*\.[ch]([^A-Za-z0-9_]|$)' |
	   grep -oE '[a-z][a-z0-9_]*\.[ch]' | sort -u); do
	[ -n "$(find src backends ui adapters tests -name "$f" -print -quit)" ] ||
		{ echo "internals: $page names $f, which is no file of the tree"; bad=1; }
done

# 2. Every folder of the engine is described.
for d in src/*/ backends/ ui/ adapters/; do
	printf '%s\n' "$text" | grep -qF "$d" || { echo "internals: $page does not describe $d"; bad=1; }
done

# 3. Commands: those listed under COMMANDS exist, and every command of `xpool help` is listed.
listed=$(printf '%s\n' "$text" | awk '/^\.SH COMMANDS/{c=1;next} /^\.SH/{c=0} c && /^\.BR? [a-z]+( [.,]|$)/{print $2}' |
	 sed 's/[.,]*$//')
[ -n "$listed" ] || { echo "internals: $page lists no commands"; bad=1; }
for c in $listed; do
	"$bin" help "$c" >/dev/null 2>&1 || { echo "internals: $page lists '$c', which is no command"; bad=1; }
done
for c in $("$bin" help | awk '/^commands:/{c=1;next} /^$/{c=0} c{print $1}'); do
	printf '%s\n' "$listed" | grep -qx "$c" || { echo "internals: $page does not list the command $c"; bad=1; }
	[ -f "src/cmd/cmd_$c.c" ] || { echo "internals: command $c has no src/cmd/cmd_$c.c"; bad=1; }
done
[ $bad = 0 ] && echo "internals: $page matches the tree"
exit $bad
