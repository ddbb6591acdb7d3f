// k8s_strict.js: validates exported Kubernetes objects against npm's kubernetes-models (the
// Kubernetes OpenAPI schema compiled to validators), strictly: the compiled validators check
// types, enums and required fields but let unknown fields pass (the OpenAPI schema leaves
// additionalProperties open), so every object is also walked against the models' TypeScript
// declarations (generated from the same schema, one interface per definition) and a field no
// interface declares is an error, as `kubectl apply --validate=strict` would make it.
//
// Usage: node k8s_strict.js MODULES_DIR DOCS.json
// DOCS.json: [{"name": ..., "doc": {...}}] (the YAML documents as JSON). A Pod is checked
// whole; a batch.volcano.sh Job's metadata and each task's pod template are checked here (its
// own spec goes to Volcano's CRD schema, tests/schema/crd_strict.py). A Node is checked whole
// too (the objects tests/check_k8s.c serves as an API server would). Prints one line per
// error and "k8s: N documents valid"; exits 1 on any error.
'use strict';
const fs = require('fs');
const path = require('path');

const [modules, docsFile] = process.argv.slice(2);
if (!modules || !docsFile) {
	console.error('usage: node k8s_strict.js MODULES_DIR DOCS.json');
	process.exit(2);
}
const km = path.join(modules, 'kubernetes-models');
const validators = {
	Pod: require(path.join(km, '_schemas/IoK8sApiCoreV1Pod.js')).validate,
	Node: require(path.join(km, '_schemas/IoK8sApiCoreV1Node.js')).validate,
	PodTemplateSpec: require(path.join(km, '_schemas/IoK8sApiCoreV1PodTemplateSpec.js')).validate,
	ObjectMeta: require(path.join(modules, '@kubernetes-models/apimachinery/_schemas/IoK8sApimachineryPkgApisMetaV1ObjectMeta.js')).validate,
};

// One declaration file: its first exported interface's properties (name -> type text) and
// the files its imported names come from. null props: a type alias (a leaf, as Quantity).
const cache = new Map();
function load(file) {
	if (cache.has(file))
		return cache.get(file);
	const text = fs.readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
	const imports = new Map();
	for (const m of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*"([^"]+)"/g)) {
		const target = m[2].startsWith('.') ? path.resolve(path.dirname(file), m[2]) : path.join(modules, m[2]);
		for (const id of m[1].split(',').map(s => s.trim()).filter(Boolean))
			imports.set(id.split(/\s+as\s+/).pop(), target + '.d.ts');
	}
	let props = null;
	const start = text.search(/export interface \w+[^{]*\{/);
	if (start >= 0) {
		props = new Map();
		let i = text.indexOf('{', start) + 1, depth = 1, stmt = '';
		for (; i < text.length && depth > 0; i++) {
			const ch = text[i];
			if (ch === '{' || ch === '<' || ch === '(')
				depth++;
			else if (ch === '}' || ch === '>' || ch === ')')
				depth--;
			if (depth === 0)
				break;
			if (ch === ';' && depth === 1) {
				const m = stmt.trim().match(/^"?([^"?:]+)"?\??:\s*([\s\S]+)$/);
				if (m)
					props.set(m[1], m[2].trim());
				stmt = '';
			} else
				stmt += ch;
		}
	}
	const r = {file, props, imports};
	cache.set(file, r);
	return r;
}

let errors = 0;
function error(name, where, msg) {
	console.log(`k8s: ${name}: ${where || '/'}: ${msg}`);
	errors++;
}

// Walks value against type text t declared in decl (a load() result).
function walk(name, value, t, decl, where) {
	t = t.trim();
	let m;
	if ((m = t.match(/^Array<([\s\S]+)>$/))) {
		if (Array.isArray(value))
			value.forEach((v, k) => walk(name, v, m[1], decl, `${where}/${k}`));
		return;
	}
	if ((m = t.match(/^\{\s*\[key: string\]:\s*([\s\S]+?);?\s*\}$/))) {
		if (value && typeof value === 'object')
			for (const [k, v] of Object.entries(value))
				walk(name, v, m[1], decl, `${where}/${k}`);
		return;
	}
	if (!/^[A-Za-z_]\w*$/.test(t) || !decl.imports.has(t))
		return; // a primitive, a literal union or a local alias: the compiled validator judges it
	walkDecl(name, value, load(decl.imports.get(t)), where);
}

function walkDecl(name, value, decl, where) {
	if (!decl.props || !value || typeof value !== 'object' || Array.isArray(value))
		return;
	for (const [k, v] of Object.entries(value)) {
		if (!decl.props.has(k)) {
			error(name, where, `unknown field "${k}" (${path.basename(decl.file, '.d.ts')} declares no such field)`);
			continue;
		}
		walk(name, v, decl.props.get(k), decl, `${where}/${k}`);
	}
}

function check(name, value, kind, where) {
	const v = validators[kind];
	if (!v(value))
		for (const e of v.errors)
			error(name, where + e.instancePath, `${e.keyword}: ${JSON.stringify(e.params)}`);
	const files = {
		Pod: 'v1/Pod.d.ts', Node: 'v1/Node.d.ts', PodTemplateSpec: 'v1/PodTemplateSpec.d.ts',
		ObjectMeta: '../@kubernetes-models/apimachinery/apis/meta/v1/ObjectMeta.d.ts',
	};
	walkDecl(name, value, load(path.join(km, files[kind])), where);
}

const docs = JSON.parse(fs.readFileSync(docsFile, 'utf8'));
for (const {name, doc} of docs) {
	if (doc && doc.apiVersion === 'v1' && (doc.kind === 'Pod' || doc.kind === 'Node'))
		check(name, doc, doc.kind, '');
	else if (doc && doc.apiVersion === 'batch.volcano.sh/v1alpha1' && doc.kind === 'Job') {
		check(name, doc.metadata || {}, 'ObjectMeta', '/metadata');
		const tasks = (doc.spec && doc.spec.tasks) || [];
		tasks.forEach((t, k) => check(name, (t && t.template) || {}, 'PodTemplateSpec', `/spec/tasks/${k}/template`));
	} else
		error(name, '', `not a v1 Pod or Node or a batch.volcano.sh/v1alpha1 Job: ${JSON.stringify(doc).slice(0, 80)}`);
}
console.log(`k8s: ${docs.length} documents checked against kubernetes-models, ${errors} errors`);
process.exit(errors ? 1 : 0);
