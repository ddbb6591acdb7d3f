#!/bin/bash
# schema_check.sh: `place --export k8s` Pods and `--export volcano` Jobs judged against the
# published schemas, strictly (no unknown fields):
#   - the Kubernetes OpenAPI schema through npm's kubernetes-models (its compiled validators
#     for types, enums and required fields, and a walk over its declarations that rejects any
#     field the schema does not declare): tests/schema/k8s_strict.js, every Pod, and every
#     Volcano Job's metadata and task pod templates;
#   - Volcano's Job CRD openAPIV3Schema (tests/fixtures/volcano, see SOURCES.md) with Debian's
#     python3-jsonschema, each object schema closed with additionalProperties: false:
#     tests/schema/crd_strict.py.
# The exports cover whole GPUs, NPUs, MIG slices, vNPU slices, HAMi shares and slices, several
# replicas, two task groups, a gang minimum and hostile names. Then copies with an unknown field
# (or a wrong type) injected must be refused by each checker, so that a pass means they looked.
#
# Needs node, npm and /usr/bin/python3 with jsonschema and yaml (`make check` installs nodejs,
# npm, python3-jsonschema and python3-yaml). kubernetes-models is installed once with npm into
# a cache outside the tree ($XP_NPM_CACHE, default ~/.cache/xpool/npm); later runs need no
# network. Anything missing, or an npm install that fails, FAILS this check loudly: it does not
# skip. XPOOL_BIN names the xpool.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${XPOOL_BIN:-$root/xpool}
py=/usr/bin/python3 # Debian's, with python3-jsonschema: not whatever python3 is first on PATH
km_version=4.5.1
die() { echo "schema: FAIL: $*"; exit 1; }

command -v node >/dev/null 2>&1 || die "node not installed (make check installs nodejs and npm)"
[ -x $py ] || die "$py missing (make check installs python3-jsonschema)"
$py -c 'import jsonschema, yaml' 2>/dev/null ||
	die "$py cannot import jsonschema and yaml (make check installs python3-jsonschema python3-yaml)"

# kubernetes-models, pinned, in a cache folder: installed into a fresh directory and renamed
# into place, so that a half install is never used and two runs at once do not mix.
cache=${XP_NPM_CACHE:-$HOME/.cache/xpool/npm}
mods=$cache/kubernetes-models-$km_version/node_modules
if [ ! -f "$mods/kubernetes-models/package.json" ]; then
	command -v npm >/dev/null 2>&1 || die "npm not installed (make check installs npm), kubernetes-models is not cached"
	mkdir -p "$cache" || die "cannot create $cache"
	tmp=$(mktemp -d "$cache/install.XXXXXX") || die "cannot create a directory under $cache"
	echo "schema: installing kubernetes-models@$km_version with npm into $cache"
	if ! npm install --prefix "$tmp" --no-audit --no-fund --no-save --loglevel=error \
		"kubernetes-models@$km_version" >"$tmp.log" 2>&1; then
		cat "$tmp.log"; rm -rf "$tmp" "$tmp.log"
		die "npm install kubernetes-models@$km_version failed (output above); the schema checks did not run"
	fi
	rm -f "$tmp.log"
	mv -T "$tmp" "$cache/kubernetes-models-$km_version" 2>/dev/null || rm -rf "$tmp"
	[ -f "$mods/kubernetes-models/package.json" ] || die "kubernetes-models not found in $mods after npm install"
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/xpool-schema.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
cd "$scratch" || exit 1
"$bin" sim gen --nodes 40 --seed 3 -o c.json >/dev/null || die "sim gen failed"
cat >two.json <<'EOF'
{"name": "Two \"groups\": ok", "queue": "research", "groups": [
 {"replicas": 2, "devices": 2, "model": "H100*"},
 {"replicas": 1, "devices": 1, "model": "*MI100*"}]}
EOF

# One node of each Ascend product whose rule Volcano picks by Pod metadata (nodeSelector
# accelerator-type, labels npu-310-strategy and duo): an Atlas 800 node of the simulated cluster
# with its devices renamed and counted again, no affinity groups (place derives them).
$py - c.json <<'EOF' || die "could not make the product inventories"
import copy, json, sys
c = json.load(open(sys.argv[1]))
tmpl = next(n for n in c["nodes"] if n["devices"] and "Ascend" in (n["devices"][0].get("model") or ""))
for name, model, count in [("box16", "Ascend 910B3", 16), ("a2", "Ascend 910B3", 8), ("a3", "Ascend 910C", 16),
                           ("i300", "Ascend 310", 12), ("duo", "Ascend 310P3", 8)]:
    n = copy.deepcopy(tmpl)
    n["name"] = name
    n["devices"] = []
    for i in range(count):
        d = copy.deepcopy(tmpl["devices"][0])
        d.update(index=i, vendor_index=i, model=model, uuid="%s-%d" % (name, i), affinity_group=None,
                 pci_bus_id="0000:%02x:00.0" % (0x10 + i), allocations=[], partition=["whole"])
        n["devices"].append(d)
    n["pci"] = [p for p in n["pci"] if p.get("accelerator") is None]
    for d in n["devices"]:
        n["pci"].append({"bus_id": d["pci_bus_id"], "pci_id": d["pci_id"], "class": "1200", "name": None,
                         "numa": d["numa"], "accelerator": d["index"], "os_devices": []})
    n["links"] = [["X" if i == j else "SYS" for j in range(count)] for i in range(count)]
    n["labels"]["facts"]["accelerator.model"] = model
    n["labels"]["facts"]["accelerator.count"] = str(count)
    out = copy.deepcopy(c)
    out["nodes"] = [n]
    json.dump(out, open(name + ".json", "w"))
EOF

fail=0
n=0
# export NAME FORMAT PLACE-ARGS...: writes NAME.yaml, or counts a failure (inventory $inv, default c.json).
export_one() {
	local name=$1 fmt=$2
	shift 2
	n=$((n + 1))
	if ! "$bin" --inventory "${inv:-c.json}" place --dry-run "$@" --export "$fmt" >"$name.yaml" 2>"$name.err"; then
		echo "schema: FAIL: $name: xpool place $* --export $fmt did not export:"; cat "$name.err"
		fail=$((fail + 1))
		rm -f "$name.yaml"
	fi
}
for fmt in k8s volcano; do
	export_one $fmt-gpus $fmt --devices 4 --replicas 3 --model 'H100*' --name 'train-llm'
	export_one $fmt-npus $fmt --devices 4 --replicas 2 --model 'Ascend*'
	export_one $fmt-mig $fmt --reconfigure --slice 1g.10gb --replicas 3 --model 'A100*'
	export_one $fmt-vnpu $fmt --slice vir04 --replicas 2
	export_one $fmt-two-groups $fmt -f two.json
	export_one $fmt-gang $fmt --devices 1 --replicas 4 --gang-min 2 --model 'H800' --queue 'research.q1'
	export_one $fmt-amd $fmt --devices 1 --replicas 2 --model '*MI300X*'
	export_one $fmt-host-cpus-mem $fmt --devices 2 --replicas 2 --model 'H100*' --cpus 8 --host-memory 4096
done
# HAMi's sharing layer: soft shares of a GPU (by percent, by MiB) and vNPU slices by memory.
for fmt in k8s volcano; do
	inv=box16.json export_one $fmt-box16 $fmt --devices 10 --replicas 1 --model 'Ascend*'
	inv=a2.json export_one $fmt-800t-a2 $fmt --devices 3 --replicas 2 --model 'Ascend*'
	inv=a3.json export_one $fmt-a3 $fmt --devices 2 --replicas 2 --model 'Ascend*'
	inv=i300.json export_one $fmt-300i $fmt --devices 3 --replicas 2 --model 'Ascend*'
	inv=duo.json export_one $fmt-300i-duo $fmt --devices 2 --replicas 2 --model 'Ascend*'
	grep -q '"accelerator-type": "module-910b-16"' $fmt-box16.yaml ||
		{ echo "schema: FAIL: $fmt-box16: no nodeSelector accelerator-type"; fail=$((fail + 1)); }
	grep -q '"duo": "true"' $fmt-300i-duo.yaml ||
		{ echo "schema: FAIL: $fmt-300i-duo: no duo label"; fail=$((fail + 1)); }
done
for fmt in k8s volcano; do
	export_one $fmt-hami-share $fmt --flavor hami --share 30 --replicas 3 --model 'H100*'
	export_one $fmt-hami-share-mib $fmt --flavor hami --share 50 --memory 20000 --replicas 2 --model 'A100*'
	export_one $fmt-hami-gpus $fmt --flavor hami --devices 2 --replicas 2 --model 'H100*' --strategy spread
	export_one $fmt-hami-vnpu $fmt --flavor hami --slice vir08 --replicas 2
	export_one $fmt-hami-npus $fmt --flavor hami --devices 2 --replicas 2 --model 'Ascend*'
	export_one $fmt-hami-mig $fmt --flavor hami --reconfigure --slice 1g.10gb --replicas 2 --model 'A100*'
done

# --cpus and --host-memory reach each container as cpu and memory limits and requests.
for f in k8s-host-cpus-mem volcano-host-cpus-mem; do
	n=$((n + 1))
	if [ "$(grep -c '"cpu": "8"' $f.yaml)" -lt 2 ] || [ "$(grep -c '"memory": "4096Mi"' $f.yaml)" -lt 2 ] ||
		! grep -q '^ *requests:$' $f.yaml; then
		echo "schema: FAIL: $f: the placed CPUs and host memory are not asked:"; cat $f.yaml; fail=$((fail + 1))
	fi
done
# A queue Volcano's CRD would refuse (spec.queue is a DNS subdomain) is refused by xpool.
n=$((n + 1))
if "$bin" --inventory c.json place --dry-run --devices 1 --queue 'q: "x"' --export volcano >bad-queue.out 2>&1; then
	echo "schema: FAIL: bad-queue: xpool exported a queue Volcano's CRD refuses:"; cat bad-queue.out; fail=$((fail + 1))
elif ! grep -q 'not a Kubernetes DNS subdomain' bad-queue.out; then
	echo "schema: FAIL: bad-queue: refused without the reason:"; cat bad-queue.out; fail=$((fail + 1))
fi

# Every YAML document as JSON for the checkers: [{"name": "FILE#K", "doc": ...}].
$py - "$scratch" >docs.json <<'EOF' || die "the exported YAML does not parse (above)"
import glob, json, os, sys, yaml
out = []
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.yaml"))):
    with open(f) as fh:
        for k, d in enumerate(yaml.safe_load_all(fh)):
            out.append({"name": "%s#%d" % (os.path.basename(f), k), "doc": d})
json.dump(out, sys.stdout)
EOF
ndocs=$($py -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' docs.json)
[ "$ndocs" -gt 0 ] || die "no exported documents to check"

node "$root/tests/schema/k8s_strict.js" "$mods" docs.json >k8s.out 2>&1 || { cat k8s.out; fail=$((fail + 1)); }
$py "$root/tests/schema/crd_strict.py" "$root/tests/fixtures/volcano/batch.volcano.sh_jobs.yaml" docs.json \
	>crd.out 2>&1 || { cat crd.out; fail=$((fail + 1)); }
echo "schema: $(tail -1 k8s.out)"
echo "schema: $(tail -1 crd.out)"

# The Node and Pod objects tests/check_k8s.c and check_k8s_hami.c serve as an API server would
# (tests/fixtures/k8s): each list's items, given the kind and apiVersion a list leaves out,
# checked the same way; then a Node with an unknown field must be refused.
$py - "$root/tests/fixtures/k8s" >served.json <<'EOF' || die "tests/fixtures/k8s does not parse"
import json, os, sys
out = []
for f, kind in (("nodes.json", "Node"), ("pods.json", "Pod"), ("hami_nodes.json", "Node"), ("hami_pods.json", "Pod")):
    lst = json.load(open(os.path.join(sys.argv[1], f)))
    assert lst["kind"] == kind + "List" and lst["apiVersion"] == "v1", f
    for k, d in enumerate(lst["items"]):
        out.append({"name": "%s#%d" % (f, k), "doc": dict(d, kind=kind, apiVersion="v1")})
json.dump(out, sys.stdout)
EOF
n=$((n + 1))
node "$root/tests/schema/k8s_strict.js" "$mods" served.json >served.out 2>&1 || { cat served.out; fail=$((fail + 1)); }
echo "schema: served fixtures: $(tail -1 served.out)"
n=$((n + 1))
$py -c '
import json, sys
d = json.load(open(sys.argv[1]))[:1]
d[0]["doc"]["status"]["nodeInf"] = {}
json.dump(d, sys.stdout)' served.json >mut-node.json || die "mutant node: could not be made"
if out=$(node "$root/tests/schema/k8s_strict.js" "$mods" mut-node.json 2>&1) || ! grep -qF 'unknown field "nodeInf"' <<<"$out"; then
	echo "schema: FAIL: mutant node-unknown-field passed k8s-node: $out"; fail=$((fail + 1))
else
	echo "schema: ok: mutant node-unknown-field refused: $(grep -F 'nodeInf' <<<"$out" | head -1)"
fi

# mutant NAME CHECKER PYTHON-EXPR WANT: the first document of the kind CHECKER reads, changed
# by PYTHON-EXPR on d, must be refused with an error line holding WANT.
mutant() {
	local name=$1 checker=$2 expr=$3 want=$4 kind src out
	n=$((n + 1))
	[ "$checker" = k8s-pod ] && kind=Pod || kind=Job
	$py -c '
import json, sys
kind, expr = sys.argv[1], sys.argv[2]
docs = [x for x in json.load(open(sys.argv[3])) if x["doc"].get("kind") == kind][:1]
d = docs[0]["doc"]
exec(expr)
json.dump(docs, sys.stdout)' "$kind" "$expr" docs.json >"mut-$name.json" || die "mutant $name: could not be made"
	if [ "$checker" = crd ]; then
		out=$($py "$root/tests/schema/crd_strict.py" "$root/tests/fixtures/volcano/batch.volcano.sh_jobs.yaml" \
			"mut-$name.json" 2>&1)
	else
		out=$(node "$root/tests/schema/k8s_strict.js" "$mods" "mut-$name.json" 2>&1)
	fi
	if [ $? -eq 0 ] || ! grep -qF -- "$want" <<<"$out"; then
		echo "schema: FAIL: mutant $name passed $checker (or without '$want'): $out"
		fail=$((fail + 1))
	else
		echo "schema: ok: mutant $name refused: $(grep -F -- "$want" <<<"$out" | head -1)"
	fi
}
mutant pod-unknown-field k8s-pod 'd["spec"]["containers"][0]["resources"]["limitz"] = {}' 'unknown field "limitz"'
mutant pod-unknown-top k8s-pod 'd["spec"]["nodeAfinity"] = {}' 'unknown field "nodeAfinity"'
mutant pod-bad-policy k8s-pod 'd["spec"]["restartPolicy"] = "Sometimes"' 'enum'
mutant job-template-unknown k8s-job 'd["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["limits"] = {}' \
	'unknown field "limits"'
mutant job-unknown-field crd 'd["spec"]["minAvailible"] = 1' "'minAvailible' was unexpected"
mutant job-task-unknown crd 'd["spec"]["tasks"][0]["replica"] = 2' "'replica' was unexpected"
mutant job-bad-type crd 'd["spec"]["tasks"][0]["replicas"] = "two"' "is not of type 'integer'"
echo "schema: $((n - fail)) of $n exports and mutants judged as expected ($ndocs documents)"
[ $fail -eq 0 ]
