#!/bin/sh
# layers.sh: checks that calls run one way. Every folder's README.md names, on its `Uses:`
# line, the folders its code may call (src/README.md explains the layers); this fails when
#  - a file includes a header of a folder its README does not name, or another folder's
#    internal header (NAME_int.h),
#  - an object file calls or reads a symbol defined in such a folder (nm), or
#  - two object files of the engine (src/, backends/, ui/) call each other in a circle.
# Usage: tests/layers.sh OBJDIR (the build's obj/ folder, after the program is built).
set -eu
obj=${1:?usage: layers.sh OBJDIR}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The folder (unit) a path belongs to: src/LAYER, backends, ui, adapters, or src/main.c.
unit_awk='function unit(p,   parts_) {
	sub(/^\.\//, "", p)
	if (p ~ /^src\/[^\/]+\//) { split(p, parts_, "/"); return "src/" parts_[2] }
	if (p ~ /^src\//) return "main"
	split(p, parts_, "/"); return parts_[1]
}'

# Allowed: "UNIT USED" pairs from the README files (USED a folder, or one header of a folder:
# an interface such as adapters/xp_adapter.h); main may use everything.
for r in src/*/README.md backends/README.md ui/README.md adapters/README.md; do
	u=${r%/README.md}
	uses=$(sed -n 's/^Uses: *//p' "$r")
	[ -n "$uses" ] || { echo "layers: $r has no 'Uses:' line"; exit 1; }
	for x in $uses; do
		[ -e "$x" ] || { echo "layers: $r: Uses: names $x, which does not exist"; exit 1; }
		echo "$u $x"
	done
done > "$tmp/allowed"
for d in src/*/ backends/ ui/ adapters/; do echo "main ${d%/}"; done >> "$tmp/allowed"

# Header name -> folder (headers are included by file name; local/ and nvidia/ by a path).
find src backends ui adapters -name '*.h' | sed 's|^\./||' > "$tmp/headers"

# 1. Includes.
find src backends ui adapters -name '*.[ch]' | sort | while read -r f; do
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | sed "s|^|$f |"
done > "$tmp/includes"
awk "$unit_awk"'
FILENAME == ARGV[1] { ok[$1 " " $2] = 1; next }
FILENAME == ARGV[2] { n = split($0, parts, "/"); base = parts[n]; where[base] = where[base] " " $0;
		      where[$0] = where[$0] " " $0; next }
{
	f = $1; h = $2
	if (h ~ /\.inc$/) next                   # generated lists (build/*/gen)
	dir = f; sub(/\/[^\/]*$/, "", dir)
	cand = where[h]
	if (cand == "") {                          # a path like local/local.h or nvidia/nvidia.h
		for (k in where) if (index(k, "/" h) && substr(k, length(k) - length(h)) == "/" h) cand = cand " " k
	}
	if (cand == "") { print "layers: " f ": includes \"" h "\", which is no header of the tree"; bad = 1; next }
	# The header next to the file wins, as the compiler finds it first.
	m = split(cand, cs, " "); pick = ""
	for (i = 1; i <= m; i++) { c = cs[i]; cd = c; sub(/\/[^\/]*$/, "", cd); if (cd == dir) pick = c }
	if (pick == "") pick = cs[1]
	fu = unit(f); hu = unit(pick)
	pd = pick; sub(/\/[^\/]*$/, "", pd)
	if (pick ~ /_int\.h$/ && pd != dir) { print "layers: " f " includes " pick ", which is internal to " pd; bad = 1 }
	if (fu != hu && !ok[fu " " hu] && !ok[fu " " pick]) { print "layers: " f " includes " pick ": " fu " may not use " hu; bad = 1 }
}
END { exit bad }' "$tmp/allowed" "$tmp/headers" "$tmp/includes"

# 2. Symbols: who defines what, who uses what.
# Only objects whose source still exists: a build directory may hold objects of moved files.
find "$obj/src" "$obj/backends" "$obj/ui" -name '*.o' | sort | while read -r o; do
	c=${o#"$obj"/}
	[ -f "${c%.o}.c" ] && echo "$o"
done > "$tmp/objs"
[ -s "$tmp/objs" ] || { echo "layers: no objects under $obj"; exit 1; }
while read -r o; do
	p=${o#"$obj"/}
	nm --defined-only "$o" | awk -v p="$p" '$2 ~ /^[TDBRCV]$/ { print $3, p }'
done < "$tmp/objs" > "$tmp/defs"
while read -r o; do
	p=${o#"$obj"/}
	nm -u "$o" | awk -v p="$p" '{ print p, $2 }'
done < "$tmp/objs" > "$tmp/uses"
awk "$unit_awk"'
FILENAME == ARGV[1] { ok[$1 " " $2] = 1; next }
FILENAME == ARGV[2] { def[$1] = $2; next }
($2 in def) && def[$2] != $1 {
	a = $1; b = def[$2]; ua = unit(a); ub = unit(b)
	if (ua != ub && !ok[ua " " ub]) { print "layers: " a " uses " $2 " of " b ": " ua " may not use " ub; bad = 1 }
	print a, b > "'"$tmp/edges"'"
}
END { exit bad }' "$tmp/allowed" "$tmp/defs" "$tmp/uses"

# 3. Circles between object files of the engine (below the command table, whose dispatcher
# and commands call each other by design, as tmux's do): a file that reaches itself.
sort -u "$tmp/edges" | grep -E '^(src/(base|model|evidence|place|queue)|backends)/[^ ]* (src/(base|model|evidence|place|queue)|backends)/' |
	awk '
{ if (!($1 in id)) { id[$1] = ++n; name[n] = $1 } if (!($2 in id)) { id[$2] = ++n; name[n] = $2 }
  r[id[$1], id[$2]] = 1 }
END {
	for (k = 1; k <= n; k++) for (i = 1; i <= n; i++) if (r[i, k]) for (j = 1; j <= n; j++) if (r[k, j]) r[i, j] = 1
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
		if (r[i, j] && r[j, i]) { print "layers: " name[i] " and " name[j] " call each other (a circle)"; bad = 1 }
	exit bad
}'
echo "layers: calls run one way"
