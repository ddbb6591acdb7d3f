"""crd_strict.py: validates batch.volcano.sh/v1alpha1 Jobs against Volcano's own Job CRD
(its openAPIV3Schema, vendored in tests/fixtures/volcano), strictly.

A CRD's structural schema prunes unknown fields silently on the API server; a strict check
must reject them instead, so every object schema that declares properties and leaves
additionalProperties open (and is not x-kubernetes-preserve-unknown-fields) is closed with
additionalProperties: false before validating. The schema's own metadata stays open (the API
server checks ObjectMeta; k8s_strict.js checks it against Kubernetes' schema).

Usage: /usr/bin/python3 crd_strict.py CRD.yaml DOCS.json   (Debian's python3-jsonschema and
python3-yaml). DOCS.json: [{"name": ..., "doc": {...}}]. Prints one line per error and a
count; exits 1 on any error.
"""
import json
import sys

import jsonschema
import yaml


def close(schema):
    """Closes every object schema that lists properties, in place; returns how many."""
    n = 0
    if isinstance(schema, dict):
        if (isinstance(schema.get("properties"), dict) and "additionalProperties" not in schema
                and not schema.get("x-kubernetes-preserve-unknown-fields")):
            schema["additionalProperties"] = False
            n += 1
        for v in schema.values():
            n += close(v)
    elif isinstance(schema, list):
        for v in schema:
            n += close(v)
    return n


def main():
    if len(sys.argv) != 3:
        print("usage: crd_strict.py CRD.yaml DOCS.json", file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        crd = yaml.safe_load(f)
    versions = {v["name"]: v for v in crd["spec"]["versions"]}
    schema = versions["v1alpha1"]["schema"]["openAPIV3Schema"]
    closed = close(schema)
    group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
    validator = jsonschema.Draft7Validator(schema)
    with open(sys.argv[2]) as f:
        docs = json.load(f)
    errors = checked = 0
    for d in docs:
        doc = d["doc"]
        if not isinstance(doc, dict) or doc.get("apiVersion") != group + "/v1alpha1" or doc.get("kind") != kind:
            continue
        checked += 1
        for e in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path)):
            where = "/" + "/".join(str(p) for p in e.absolute_path)
            print("volcano: %s: %s: %s" % (d["name"], where, e.message))
            errors += 1
    print("volcano: %d Jobs checked against %s (%d object schemas closed), %d errors"
          % (checked, crd["metadata"]["name"], closed, errors))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
