/* check_export.c: `xpool place --export`: a small placed job written as Kubernetes Pods, a
 * Volcano Job and an sbatch script, read back by a strict checker for the YAML subset the
 * writer emits (block style, double-quoted scalars, integers), exact text for a known case,
 * hostile names (quotes, backslashes, newlines, `$(rm -rf /)`) escaped or refused, and the CLI. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checklib.h"
#include "cluster.h"
#include "jobspec.h"
#include "model.h"
#include "place.h"
#include "place_export.h"
#include "simgen.h"
#include "suitelib.h"
#include "testlib.h"

/* A node of n devices of one vendor, all free and healthy, on one NUMA domain and one link. */
static void mknode(struct xp_cluster *c, const char *name, int n, const char *vendor, const char *model)
{
	const struct xp_test_devs t = {vendor, model, "1", 32768, 1, "g", 0};
	xp_test_node(c, name, n, &t);
}

static struct xp_cluster *cluster(void)
{
	struct xp_cluster *c = xp_cluster_new();
	mknode(c, "gpu-a", 4, "NVIDIA", "H100 80GB HBM3");
	mknode(c, "npu-b", 8, "Huawei", "Ascend 910B3");
	mknode(c, "npu-c", 8, "Huawei", "Ascend 910B3");
	return c;
}

/* The shipped manifests, which name the resources and gres the export writes. */
static struct xp_manifest *mans[4];
static const char *const man_paths[4] = {"adapters/nvidia/nvidia.adapter", "adapters/ascend/ascend.adapter",
					 "adapters/amd/amd.adapter", "adapters/cambricon/cambricon.adapter"};

static void load_manifests(void)
{
	for (size_t i = 0; i < 4; i++) {
		struct xp_err err = {{0}};
		mans[i] = xp_manifest_load(man_paths[i], &err);
		ck_assert_msg(mans[i] != NULL, "%s", err.msg);
	}
}

static void free_manifests(void)
{
	for (size_t i = 0; i < 4; i++) {
		xp_manifest_free(mans[i]);
		mans[i] = NULL;
	}
}

#define MANS ((const struct xp_manifest *const *)mans)

/* Places spec on c and exports it as fmt with a Slurm partition (NULL for none); the result
 * text, or NULL with err. */
static char *export_to(const struct xp_cluster *c, const char *spec, const char *name, int fmt, const char *partition,
		       struct xp_err *err)
{
	struct xp_err perr = {{0}};
	struct xp_job *j = xp_job_parse(spec, strlen(spec), NULL, &perr);
	ck_assert_msg(j != NULL, "%s", perr.msg);
	if (name) { /* set after parsing: the writer must hold even for names the parser refuses */
		free(j->name);
		j->name = xp_strdup(name);
	}
	/* The test clusters' MIG GPUs hold no free instance: slices here are new ones. */
	struct xp_place_opts o = {XP_STRAT_PACK, 0, NULL, .reconfigure = true};
	struct xp_place_result *r = xp_place(c, j, MANS, 4, &o, &perr);
	ck_assert_msg(r != NULL, "%s", perr.msg);
	ck_assert_msg(r->placed, "not placed: %s", spec);
	struct xp_export_opts eo = {.partition = partition};
	char *text = xp_place_export(fmt, r, j, c, MANS, 4, &eo, err);
	xp_place_result_free(r);
	xp_job_free(j);
	return text;
}

/* Places spec on c (pack) and exports it as fmt with the options eo. */
static char *export_with(const struct xp_cluster *c, const char *spec, int fmt, const struct xp_export_opts *eo,
			 struct xp_err *err)
{
	struct xp_err perr = {{0}};
	struct xp_job *j = xp_job_parse(spec, strlen(spec), NULL, &perr);
	ck_assert_msg(j != NULL, "%s", perr.msg);
	/* As export_of: the test clusters' MIG GPUs hold no free instance. */
	struct xp_place_opts o = {XP_STRAT_PACK, 0, NULL, .reconfigure = true};
	struct xp_place_result *r = xp_place(c, j, MANS, 4, &o, &perr);
	ck_assert_msg(r != NULL, "%s", perr.msg);
	ck_assert_msg(r->placed, "not placed: %s", spec);
	char *text = xp_place_export(fmt, r, j, c, MANS, 4, eo, err);
	xp_place_result_free(r);
	xp_job_free(j);
	return text;
}

/* export_to without a partition. */
static char *export(const struct xp_cluster *c, const char *spec, const char *name, int fmt, struct xp_err *err)
{
	return export_to(c, spec, name, fmt, NULL, err);
}

/* Reads a YAML double-quoted scalar at *p (escapes \" \\ \n \t \xHH), advancing *p; heap
 * string, or NULL when malformed. */
static char *dq(const char **p)
{
	const char *s = *p;
	if (*s != '"')
		return NULL;
	char *out = xp_malloc(strlen(s) + 1);
	size_t k = 0;
	for (s++; *s && *s != '"'; s++) {
		if ((unsigned char)*s < 0x20) {
			free(out);
			return NULL;
		}
		if (*s != '\\') {
			out[k++] = *s;
			continue;
		}
		s++;
		if (*s == '"' || *s == '\\')
			out[k++] = *s;
		else if (*s == 'n')
			out[k++] = '\n';
		else if (*s == 't')
			out[k++] = '\t';
		else if (*s == 'x' && s[1] && s[2]) {
			char hex[3] = {s[1], s[2], 0};
			out[k++] = (char)strtol(hex, NULL, 16);
			s += 2;
		} else {
			free(out);
			return NULL;
		}
	}
	if (*s != '"') {
		free(out);
		return NULL;
	}
	out[k] = 0;
	*p = s + 1;
	return out;
}

/* Strict checker for the emitted subset: every line is "---" or INDENT ["- "] (KEY ":" [" " VALUE]
 * | VALUE) [" # comment"], KEY plain [A-Za-z] or double-quoted, VALUE double-quoted or an
 * integer, indentation even and growing by at most 2 (4 after "- "). When key is not NULL,
 * returns the decoded value of the n-th (0-based) occurrence of that key or list item under it. */
static char *yaml_check(const char *text, const char *key, int nth)
{
	char *found = NULL;
	int prev = 0;
	const char *line = text;
	while (*line) {
		const char *end = strchr(line, '\n');
		ck_assert_msg(end != NULL, "last line unterminated");
		char *l = strndup(line, (size_t)(end - line));
		line = end + 1;
		if (!strcmp(l, "---")) {
			prev = 0;
			free(l);
			continue;
		}
		const char *p = l;
		int ind = 0;
		while (*p == ' ')
			p++, ind++;
		ck_assert_msg(ind % 2 == 0 && ind <= prev + 4, "bad indent: %s", l);
		prev = ind;
		if (!strncmp(p, "- ", 2))
			p += 2, prev += 2;
		char *k = NULL;
		if (*p == '"') {
			k = dq(&p);
			ck_assert_msg(k != NULL, "bad scalar: %s", l);
		} else {
			const char *b = p;
			while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
				p++;
			ck_assert_msg(p > b && *p == ':', "bad key: %s", l);
			k = strndup(b, (size_t)(p - b));
		}
		char *v = NULL;
		if (*p == ':') {
			p++;
			if (*p == ' ') {
				p++;
				if (*p == '"') {
					v = dq(&p);
					ck_assert_msg(v != NULL, "bad value: %s", l);
				} else {
					const char *b = p;
					while (*p >= '0' && *p <= '9')
						p++;
					ck_assert_msg(p > b, "bad value: %s", l);
					v = strndup(b, (size_t)(p - b));
				}
			}
		} else { /* a list item scalar: the value is the scalar itself */
			v = k;
			k = NULL;
		}
		ck_assert_msg(*p == 0 || !strncmp(p, " # ", 3), "trailing text: %s", l);
		if (key && k && !strcmp(k, key) && v && nth-- == 0 && !found)
			found = xp_strdup(v);
		if (v != k)
			free(v);
		free(k);
		free(l);
	}
	return found;
}

/* Asserts the first value of key in the YAML text is want. */
static void is(const char *text, const char *key, const char *want)
{
	char *x = yaml_check(text, key, 0);
	ck_assert_msg(x != NULL, "no %s", key);
	ck_assert_str_eq(x, want);
	free(x);
}

static const char k8s_expected[] =
	"apiVersion: \"v1\"\n"
	"kind: \"Pod\"\n"
	"metadata:\n"
	"  name: \"t1-0\"\n"
	"  labels:\n"
	"    \"app.kubernetes.io/managed-by\": \"xpool\"\n"
	"  annotations:\n"
	"    \"xpool.io/job\": \"t1\"\n"
	"    \"xpool.io/devices\": \"0,1\"\n"
	"spec:\n"
	"  restartPolicy: \"Never\"\n"
	"  affinity:\n"
	"    nodeAffinity:\n"
	"      requiredDuringSchedulingIgnoredDuringExecution:\n"
	"        nodeSelectorTerms:\n"
	"        - matchExpressions:\n"
	"          - key: \"kubernetes.io/hostname\"\n"
	"            operator: \"In\"\n"
	"            values:\n"
	"            - \"gpu-a\"\n"
	"  containers:\n"
	"  - name: \"main\"\n"
	"    image: \"busybox\" # replace with the workload's image\n"
	"    resources:\n"
	"      limits:\n"
	"        \"nvidia.com/gpu\": 2\n";

START_TEST(k8s_exact)
{
	/* 2 NVIDIA devices: only gpu-a has NVIDIA, pack takes the lowest indices 0,1. */
	struct xp_cluster *c = cluster();
	struct xp_err err = {{0}};
	char *t = export(c, "{\"name\": \"t1\", \"devices\": 2, \"vendor\": \"NVIDIA\"}", NULL, XP_EXPORT_K8S, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_str_eq(t, k8s_expected);
	free(yaml_check(t, NULL, 0));
	free(t);
	xp_cluster_free(c);
}
END_TEST

START_TEST(k8s_ascend_family)
{
	/* Two replicas of 8 Ascend 910B3: one Pod each on npu-b and npu-c, resource named by the
	 * family (huawei.com/Ascend910), no env (the plugin sets it). */
	struct xp_cluster *c = cluster();
	struct xp_err err = {{0}};
	char *t = export(c, "{\"name\": \"t\", \"replicas\": 2, \"devices\": 8, \"model\": \"Ascend*\"}", NULL,
			 XP_EXPORT_K8S, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	xp_want_parts(t, "\n---\n", "\"huawei.com/Ascend910\": 8\n", NULL);
	ck_assert_ptr_null(strstr(t, "env:"));
	char *n0 = yaml_check(t, "name", 0);
	ck_assert_str_eq(n0, "t-0");
	free(n0);
	char *v = yaml_check(t, "values", 0);
	ck_assert_ptr_null(v); /* "values:" has no scalar of its own */
	free(t);
	xp_cluster_free(c);
}
END_TEST

START_TEST(k8s_unknown_vendor_refused)
{
	/* A vendor no manifest describes: its resource name is unknown, so nothing is exported and
	 * the error names the node and the device instead of guessing a name. */
	struct xp_cluster *c = xp_cluster_new();
	mknode(c, "acme-1", 2, "Acme", "X1");
	struct xp_err err = {{0}};
	for (int fmt = XP_EXPORT_K8S; fmt < XP_EXPORT_COUNT; fmt++) {
		char *t = export(c, "{\"name\": \"a\", \"devices\": 2}", NULL, fmt, &err);
		ck_assert_ptr_null(t);
		ck_assert_msg(strstr(err.msg, "node acme-1 device 0 (Acme X1)") != NULL, "%s", err.msg);
		ck_assert_msg(strstr(err.msg, "no adapter manifest") != NULL, "%s", err.msg);
	}
	xp_cluster_free(c);
}
END_TEST

START_TEST(resources_from_manifests)
{
	/* Every name comes from the manifests: AMD, Hygon (a model override in the amd manifest),
	 * Cambricon, the Ascend 310P family, and slices through each template's k8s_slice. */
	struct xp_cluster *c = xp_cluster_new();
	mknode(c, "amd-1", 2, "AMD", "AMD Instinct MI300X");
	mknode(c, "dcu-1", 2, "Hygon", "Hygon DCU K100_AI");
	mknode(c, "mlu-1", 2, "Cambricon", "MLU370-X8");
	mknode(c, "p-1", 2, "Huawei", "Ascend 310P3");
	struct xp_err err = {{0}};
	static const struct {
		const char *spec, *k8s, *gres;
	} cases[] = {
		{"{\"devices\": 2, \"vendor\": \"AMD\"}", "\"amd.com/gpu\": 2\n", "--gres=gpu:2\n"},
		{"{\"devices\": 2, \"vendor\": \"Hygon\"}", "\"hygon.com/dcunum\": 2\n", "--gres=gpu:2\n"},
		{"{\"devices\": 1, \"vendor\": \"Cambricon\"}", "\"cambricon.com/mlu\": 1\n", "--gres=mlu:1\n"},
		{"{\"devices\": 2, \"model\": \"Ascend 310P3\"}", "\"huawei.com/Ascend310P\": 2\n", "--gres=npu:2\n"},
		{"{\"slice\": \"vir02\", \"model\": \"Ascend 310P3\"}", "\"huawei.com/Ascend310P-2c\": 1\n", "--gres=npu:vir02:1\n"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *t = export(c, cases[i].spec, NULL, XP_EXPORT_K8S, &err);
		ck_assert_msg(t != NULL, "case %zu: %s", i, err.msg);
		ck_assert_msg(strstr(t, cases[i].k8s) != NULL, "case %zu: %s", i, t);
		free(yaml_check(t, NULL, 0));
		free(t);
		t = export(c, cases[i].spec, NULL, XP_EXPORT_SLURM, &err);
		ck_assert_msg(t != NULL, "case %zu: %s", i, err.msg);
		ck_assert_msg(strstr(t, cases[i].gres) != NULL, "case %zu: %s", i, t);
		free(t);
	}
	xp_cluster_free(c);
	/* 910B3 vNPU and an H100 MIG profile. */
	c = cluster();
	char *t = export(c, "{\"slice\": \"vir05_1c_16g\", \"model\": \"Ascend*\"}", NULL, XP_EXPORT_K8S, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(t, "\"huawei.com/Ascend910-5c.1cpu.16g\": 1\n"));
	free(t);
	t = export(c, "{\"slice\": \"1g.10gb\", \"vendor\": \"NVIDIA\"}", NULL, XP_EXPORT_VOLCANO, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(t, "\"nvidia.com/mig-1g.10gb\": 1\n"));
	free(t);
	xp_cluster_free(c);
}
END_TEST

START_TEST(manifest_without_names)
{
	/* A manifest that describes the device but names no resource or gres: refused, naming the
	 * node, the device and the manifest. No manifests at all: the same. */
	static const char bare_text[] = "[adapter]\nname = acme\nvendor = Acme\n";
	struct xp_manifest *bare = xp_test_manifest(bare_text, "acme.adapter");
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_cluster_new();
	mknode(c, "acme-1", 1, "Acme", "X1");
	struct xp_job *j = xp_job_parse("{\"devices\": 1}", strlen("{\"devices\": 1}"), NULL, &err);
	ck_assert_msg(j != NULL, "%s", err.msg);
	struct xp_place_opts o = {XP_STRAT_PACK, 0, NULL};
	struct xp_place_result *r = xp_place(c, j, NULL, 0, &o, &err);
	ck_assert(r && r->placed);
	const struct xp_manifest *one[1] = {bare};
	ck_assert_ptr_null(xp_place_export(XP_EXPORT_K8S, r, j, c, one, 1, NULL, &err));
	ck_assert_msg(strstr(err.msg, "node acme-1 device 0 (Acme X1): manifest acme gives no k8s_resource"), "%s", err.msg);
	ck_assert_ptr_null(xp_place_export(XP_EXPORT_SLURM, r, j, c, one, 1, NULL, &err));
	ck_assert_msg(strstr(err.msg, "manifest acme gives no slurm_gres"), "%s", err.msg);
	ck_assert_ptr_null(xp_place_export(XP_EXPORT_VOLCANO, r, j, c, NULL, 0, NULL, &err));
	ck_assert_msg(strstr(err.msg, "node acme-1 device 0"), "%s", err.msg);
	xp_place_result_free(r);
	xp_job_free(j);
	xp_cluster_free(c);
	xp_manifest_free(bare);
}
END_TEST

START_TEST(volcano)
{
	struct xp_cluster *c = cluster();
	struct xp_err err = {{0}};
	char *t = export(c, "{\"name\": \"t\", \"queue\": \"gold\", \"replicas\": 2, \"devices\": 8, \"model\": \"Ascend*\"}",
			 NULL, XP_EXPORT_VOLCANO, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert(!strncmp(t, "apiVersion: \"batch.volcano.sh/v1alpha1\"\nkind: \"Job\"\n", 52));
	is(t, "schedulerName", "volcano");
	is(t, "minAvailable", "2");
	is(t, "queue", "gold");
	is(t, "replicas", "2");
	is(t, "key", "kubernetes.io/hostname");
	is(t, "operator", "In");
	xp_want_parts(t, "                  - \"npu-b\"\n                  - \"npu-c\"\n",
		      "              \"huawei.com/Ascend910\": 8\n", NULL);
	free(t);
	/* No queue: "default". */
	t = export(c, "{\"devices\": 1}", NULL, XP_EXPORT_VOLCANO, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	is(t, "queue", "default");
	free(t);
	/* A gang minimum: 3 asked, 2 fit (two NPU nodes), the job may start with 1. The export
	 * holds the 2 placed and lets Volcano start the gang at 1. */
	t = export(c, "{\"replicas\": 3, \"gang_min\": 1, \"devices\": 8, \"model\": \"Ascend*\"}", NULL,
		   XP_EXPORT_VOLCANO, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	is(t, "minAvailable", "1");
	is(t, "replicas", "2");
	free(t);
	xp_cluster_free(c);
}
END_TEST

START_TEST(hostile_yaml)
{
	/* Quotes, backslashes, a newline, a tab, DEL and $(...) come back byte for byte through the
	 * checker and never start a line or a key of their own. */
	static const char evil[] = "x\"\n: y\\ $(rm -rf /)'\t\x7f";
	struct xp_cluster *c = cluster();
	struct xp_err err = {{0}};
	for (int fmt = XP_EXPORT_K8S; fmt <= XP_EXPORT_VOLCANO; fmt++) {
		/* A queue only goes to Volcano, whose CRD allows DNS subdomains alone. */
		char *t = export(c, fmt == XP_EXPORT_VOLCANO ? "{\"queue\": \"q-1.a\", \"devices\": 1}"
							    : "{\"queue\": \"q\\\"1\\\\\", \"devices\": 1}", evil, fmt, &err);
		ck_assert_msg(t != NULL, "%s", err.msg);
		char *x = yaml_check(t, "xpool.io/job", 0);
		ck_assert_str_eq(x, evil);
		free(x);
		ck_assert_ptr_null(strstr(t, "\n: y"));
		/* The object name is a DNS-1123 label cut from it. */
		x = yaml_check(t, "name", 0);
		ck_assert_str_eq(x, fmt == XP_EXPORT_K8S ? "x-y-rm-rf-0" : "x-y-rm-rf");
		free(x);
		if (fmt == XP_EXPORT_VOLCANO)
			is(t, "queue", "q-1.a");
		free(t);
	}
	/* A queue Volcano's CRD refuses (spec.queue is a DNS subdomain) is refused here, named. */
	static const char *const bad_queues[] = {"q\\\"1\\\\", "Gold", "-q", "q.", "a..b", "a.-b"};
	for (size_t i = 0; i < sizeof bad_queues / sizeof *bad_queues; i++) {
		char spec[96];
		snprintf(spec, sizeof spec, "{\"queue\": \"%s\", \"devices\": 1}", bad_queues[i]);
		ck_assert_ptr_null(export(c, spec, NULL, XP_EXPORT_VOLCANO, &err));
		ck_assert_msg(strstr(err.msg, "is not a Kubernetes DNS subdomain") != NULL, "%s: %s", spec, err.msg);
	}
	/* The quoting itself. */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	xp_yaml_quote(f, "a\"b\\c\nd\x01");
	fclose(f);
	ck_assert_str_eq(buf, "\"a\\\"b\\\\c\\nd\\x01\"");
	free(buf);
	xp_cluster_free(c);
}
END_TEST

START_TEST(slurm)
{
	struct xp_cluster *c = cluster();
	struct xp_err err = {{0}};
	/* The partition is the one named for the export; a queue is not a partition (Slurm
	 * refuses one that does not exist), so a queue alone writes none. */
	char *t = export(c, "{\"name\": \"t.1\", \"queue\": \"gold\", \"replicas\": 2, \"devices\": 8, \"model\": \"Ascend*\"}",
			 NULL, XP_EXPORT_SLURM, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_ptr_null(strstr(t, "--partition"));
	free(t);
	t = export_to(c, "{\"name\": \"t.1\", \"queue\": \"gold\", \"replicas\": 2, \"devices\": 8, \"model\": \"Ascend*\"}",
		      NULL, XP_EXPORT_SLURM, "batch", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	/* One job step per replica (the batch script runs once, on the first node), each on its
	 * node with its devices: npu is a gres Slurm only counts, so the step sets the variable. */
	static const char want[] =
		"#!/bin/bash\n"
		"#SBATCH --job-name=t.1\n"
		"#SBATCH --nodes=2\n"
		"#SBATCH --ntasks=2\n"
		"#SBATCH --ntasks-per-node=1\n"
		"#SBATCH --nodelist=npu-b,npu-c\n"
		"#SBATCH --gres=npu:8\n"
		"#SBATCH --partition=batch\n"
		"# Run as: sbatch THIS-SCRIPT COMMAND [ARG...]. The script runs once, on the first node:\n"
		"# each replica is a job step on its node with its devices (see xpool(1), place --export).\n"
		"[ $# -gt 0 ] || { echo \"usage: sbatch $0 COMMAND [ARG...]\" >&2; exit 2; }\n"
		"pids=()\n"
		"srun --nodes=1 --ntasks=1 --exact --nodelist='npu-b' --gres=npu:8 env XPOOL_DEVICES='0,1,2,3,4,5,6,7' "
		"ASCEND_VISIBLE_DEVICES='0,1,2,3,4,5,6,7' \"$@\" &\n"
		"pids+=($!)\n"
		"srun --nodes=1 --ntasks=1 --exact --nodelist='npu-c' --gres=npu:8 env XPOOL_DEVICES='0,1,2,3,4,5,6,7' "
		"ASCEND_VISIBLE_DEVICES='0,1,2,3,4,5,6,7' \"$@\" &\n"
		"pids+=($!)\n"
		"rc=0\n"
		"for p in \"${pids[@]}\"; do wait \"$p\" || rc=$?; done\n"
		"exit $rc\n";
	ck_assert_str_eq(t, want);
	free(t);
	/* Several replicas on one node: a step each, each with its own devices (issue 14: every
	 * task got the first replica's devices). */
	t = export(c, "{\"replicas\": 4, \"devices\": 2, \"model\": \"Ascend*\"}", NULL, XP_EXPORT_SLURM, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	xp_want_parts(t, "#SBATCH --nodes=1\n#SBATCH --ntasks=4\n#SBATCH --ntasks-per-node=4\n#SBATCH --nodelist=npu-b\n"
			 "#SBATCH --gres=npu:8\n",
		      "--nodelist='npu-b' --gres=npu:2 env XPOOL_DEVICES='0,1' ASCEND_VISIBLE_DEVICES='0,1' \"$@\" &\n",
		      "--nodelist='npu-b' --gres=npu:2 env XPOOL_DEVICES='2,3' ASCEND_VISIBLE_DEVICES='2,3' \"$@\" &\n",
		      "--nodelist='npu-b' --gres=npu:2 env XPOOL_DEVICES='4,5' ASCEND_VISIBLE_DEVICES='4,5' \"$@\" &\n",
		      "--nodelist='npu-b' --gres=npu:2 env XPOOL_DEVICES='6,7' ASCEND_VISIBLE_DEVICES='6,7' \"$@\" &\n", NULL);
	ck_assert_ptr_null(strstr(t, "SLURMD_NODENAME"));
	ck_assert_ptr_null(strstr(t, "hetjob"));
	free(t);
	/* Uneven replicas per node (3 tasks of 4 NPUs: 2 on npu-b, 1 on npu-c): each node is asked
	 * for exactly what was placed on it, through a heterogeneous job with a component per count,
	 * never the busiest node's count on every node (issue 14: --gres=gpu:4 everywhere). */
	t = export(c, "{\"replicas\": 3, \"devices\": 4, \"model\": \"Ascend*\"}", NULL, XP_EXPORT_SLURM, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	xp_want_parts(t, "#SBATCH --nodes=1\n#SBATCH --ntasks=2\n#SBATCH --ntasks-per-node=2\n#SBATCH --nodelist=npu-b\n"
			 "#SBATCH --gres=npu:8\n",
		      "#SBATCH hetjob\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --ntasks-per-node=1\n"
		      "#SBATCH --nodelist=npu-c\n#SBATCH --gres=npu:4\n",
		      "srun --het-group=0 --nodes=1 --ntasks=1 --exact --nodelist='npu-b' --gres=npu:4 env "
		      "XPOOL_DEVICES='0,1,2,3' ASCEND_VISIBLE_DEVICES='0,1,2,3' \"$@\" &\n",
		      "srun --het-group=0 --nodes=1 --ntasks=1 --exact --nodelist='npu-b' --gres=npu:4 env "
		      "XPOOL_DEVICES='4,5,6,7' ASCEND_VISIBLE_DEVICES='4,5,6,7' \"$@\" &\n",
		      "srun --het-group=1 --nodes=1 --ntasks=1 --exact --nodelist='npu-c' --gres=npu:4 env "
		      "XPOOL_DEVICES='0,1,2,3' ASCEND_VISIBLE_DEVICES='0,1,2,3' \"$@\" &\n", NULL);
	ck_assert_ptr_null(strstr(t, "--gres=npu:8\n#SBATCH --partition"));
	free(t);
	/* NVIDIA with MIG: typed gres per step; Slurm's gpu plugin sets CUDA_VISIBLE_DEVICES
	 * itself (renumbered under ConstrainDevices), so the script does not override it. */
	t = export(c, "{\"replicas\": 3, \"slice\": \"1g.10gb\", \"vendor\": \"NVIDIA\"}", NULL, XP_EXPORT_SLURM, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	xp_want_parts(t, "#SBATCH --ntasks-per-node=3\n", "#SBATCH --gres=gpu:1g.10gb:3\n",
		      "--nodelist='gpu-a' --gres=gpu:1g.10gb:1 env XPOOL_DEVICES=", NULL);
	ck_assert_ptr_null(strstr(t, "CUDA_VISIBLE_DEVICES"));
	ck_assert_ptr_nonnull(strstr(t, "\n# gres type for slice 1g.10gb: 1g.10gb (the profile name; "));
	free(t);
	/* NVIDIA: gres gpu, no partition without one named. */
	t = export(c, "{\"name\": \"g\", \"devices\": 2, \"vendor\": \"NVIDIA\"}", NULL, XP_EXPORT_SLURM, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(t, "\n#SBATCH --gres=gpu:2\n"));
	ck_assert_ptr_null(strstr(t, "--partition"));
	free(t);
	/* A soft share would take a whole device in every format without a sharing system: not
	 * exported, and the reason says so (issue 14: --share 50 became nvidia.com/gpu: 1). */
	for (int fmt = 0; fmt < XP_EXPORT_COUNT; fmt++) {
		t = export(c, "{\"name\": \"s\", \"share_pct\": 50, \"vendor\": \"NVIDIA\"}", NULL, fmt, &err);
		ck_assert_ptr_null(t);
		ck_assert_msg(strstr(err.msg, "soft share (50%)") && strstr(err.msg, "whole device"), "%s", err.msg);
	}
	/* Hostile names are refused, nothing written. */
	const char *bad[] = {"x$(rm -rf /)", "a\nb", "a'b", "a b", "-x", "a;b"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		t = export(c, "{\"devices\": 1}", bad[i], XP_EXPORT_SLURM, &err);
		ck_assert_ptr_null(t);
		ck_assert_ptr_nonnull(strstr(err.msg, "refused"));
	}
	t = export_to(c, "{\"devices\": 1}", NULL, XP_EXPORT_SLURM, "q$(id)", &err);
	ck_assert_ptr_null(t);
	ck_assert_ptr_nonnull(strstr(err.msg, "partition not plain"));
	xp_cluster_free(c);
}
END_TEST

/* Places spec on c and exports it for Slurm with a --gres-type map. */
static char *export_types(const struct xp_cluster *c, const char *spec, const char *types, struct xp_err *err)
{
	struct xp_err perr = {{0}};
	struct xp_job *j = xp_job_parse(spec, strlen(spec), NULL, &perr);
	ck_assert_msg(j != NULL, "%s", perr.msg);
	/* The test clusters' MIG GPUs hold no free instance: slices here are new ones. */
	struct xp_place_opts o = {XP_STRAT_PACK, 0, NULL, .reconfigure = true};
	struct xp_place_result *r = xp_place(c, j, MANS, 4, &o, &perr);
	ck_assert_msg(r && r->placed, "not placed: %s", spec);
	struct xp_export_opts eo = {.gres_types = types};
	char *text = xp_place_export(XP_EXPORT_SLURM, r, j, c, MANS, 4, &eo, err);
	xp_place_result_free(r);
	xp_job_free(j);
	return text;
}

START_TEST(slurm_gres_types)
{
	/* Slurm matches gres types literally and sites name MIG types their own way (Slurm's docs:
	 * h100_1g.10gb): --gres-type maps a profile to the site's type, and the script says which
	 * type was used; a map without the profile, or with a type that is not plain, is refused. */
	struct xp_cluster *c = cluster();
	struct xp_err err = {{0}};
	static const char spec[] = "{\"replicas\": 2, \"slice\": \"1g.10gb\", \"vendor\": \"NVIDIA\"}";
	char *t = export_types(c, spec, "2g.20gb=h100_2g.20gb,1g.10gb=h100_1g.10gb", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	xp_want_parts(t, "#SBATCH --gres=gpu:h100_1g.10gb:2\n", "# gres type for slice 1g.10gb: h100_1g.10gb (--gres-type)\n",
		      "--gres=gpu:h100_1g.10gb:1 env", NULL);
	ck_assert_ptr_null(strstr(t, "gpu:1g.10gb"));
	free(t);
	static const char *const bad[] = {"2g.20gb=x", "1g.10gb=", "1g.10gb=a$(id)", "1g.10gb", "1g.10gbx=y"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		t = export_types(c, spec, bad[i], &err);
		ck_assert_msg(t == NULL, "%s: %s", bad[i], t);
		ck_assert_msg(strstr(err.msg, "--gres-type names no plain type for slice 1g.10gb"), "%s", err.msg);
	}
	/* Whole devices have no type: the map is not used. */
	t = export_types(c, "{\"devices\": 2, \"vendor\": \"NVIDIA\"}", "1g.10gb=h100_1g.10gb", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(t, "#SBATCH --gres=gpu:2\n"));
	free(t);
	xp_cluster_free(c);
}
END_TEST

/* With --slurm the nodes carry Slurm's own Gres= declaration (fact slurm.gres, as scontrol
 * prints it): the export asks for the site's type names from it instead of guessing. Slurm's
 * gres.conf documentation names MIG types like h100_1g.10gb; scontrol adds (S:...) socket
 * lists. */
START_TEST(slurm_gres_types_from_slurm)
{
	struct xp_cluster *c = cluster();
	struct xp_node *a = xp_cluster_node(c, "gpu-a");
	xp_labels_set(&a->facts, "slurm.gres", "gpu:h100:3(S:0-1),gpu:h100_1g.10gb:7(S:0,1),shard:8");
	struct xp_err err = {{0}};
	static const char slice[] = "{\"replicas\": 2, \"slice\": \"1g.10gb\", \"vendor\": \"NVIDIA\"}";
	static const char whole[] = "{\"devices\": 2, \"vendor\": \"NVIDIA\"}";
	char *t = export_types(c, slice, NULL, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	xp_want_parts(t, "#SBATCH --gres=gpu:h100_1g.10gb:2\n",
		      "# gres type for slice 1g.10gb: h100_1g.10gb (Slurm's Gres= on gpu-a)\n", NULL);
	free(t);
	t = export_types(c, whole, NULL, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	xp_want_parts(t, "#SBATCH --gres=gpu:h100:2\n", "# gres type for whole devices: h100 (Slurm's Gres= on gpu-a)\n",
		      NULL);
	free(t);
	/* The operator's map still wins. */
	t = export_types(c, slice, "1g.10gb=mine", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	xp_want_parts(t, "#SBATCH --gres=gpu:mine:2\n", "(--gres-type)", NULL);
	free(t);
	/* A profile Slurm declares no type for: refused, saying what Slurm declares. */
	t = export_types(c, "{\"slice\": \"2g.20gb\", \"vendor\": \"NVIDIA\"}", NULL, &err);
	ck_assert_ptr_null(t);
	xp_want_parts(err.msg, "node gpu-a", "Gres=gpu:h100:3(S:0-1)", "no gpu type for slice 2g.20gb", "--gres-type", NULL);
	/* Two whole types: the one the placed device's model names. */
	xp_labels_set(&a->facts, "slurm.gres", "gpu:a100:2,gpu:h100:2");
	t = export_types(c, whole, NULL, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(t, "#SBATCH --gres=gpu:h100:2\n"));
	free(t);
	/* The model's whole name first, then as a word: an A100 is not an a10. */
	xp_labels_set(&a->facts, "slurm.gres", "gpu:h10:2,gpu:h100:2,gpu:h100_1g.10gb:7");
	t = export_types(c, whole, NULL, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(t, "#SBATCH --gres=gpu:h100:2\n"));
	free(t);
	/* A ')' before any '(' does not swallow the items after it. */
	xp_labels_set(&a->facts, "slurm.gres", "shard:2),gpu:h100_1g.10gb:7");
	t = export_types(c, slice, NULL, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(t, "#SBATCH --gres=gpu:h100_1g.10gb:2\n"));
	free(t);
	/* Untyped GPUs: untyped, as without Slurm's word. */
	xp_labels_set(&a->facts, "slurm.gres", "gpu:4");
	t = export_types(c, whole, NULL, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(t, "#SBATCH --gres=gpu:2\n"));
	ck_assert_ptr_null(strstr(t, "Slurm's Gres"));
	free(t);
	/* A type that is not plain never reaches the script. */
	xp_labels_set(&a->facts, "slurm.gres", "gpu:h$(id):4");
	t = export_types(c, whole, NULL, &err);
	ck_assert_ptr_null(t);
	ck_assert_msg(strstr(err.msg, "not plain"), "%s", err.msg);
	xp_cluster_free(c);
}
END_TEST

/* gpu-a's and npu-b's devices with UUIDs, as nvidia-smi and npu-smi report them. */
static struct xp_cluster *cluster_uuids(void)
{
	struct xp_cluster *c = cluster();
	for (size_t k = 0; k < c->n_nodes; k++)
		for (size_t i = 0; i < c->nodes[k]->n_devices; i++) {
			free(c->nodes[k]->devices[i].uuid);
			c->nodes[k]->devices[i].uuid = xp_asprintf("GPU-%zu-%zu", k, i);
		}
	return c;
}

START_TEST(hami_share)
{
	/* --share 30 with --flavor hami: one GPU, 30% of its cores and (no --memory) 30% of its
	 * memory, pinned by UUID, with HAMi's binpack policy for pack. */
	struct xp_cluster *c = cluster_uuids();
	struct xp_err err = {{0}};
	struct xp_export_opts eo = {.flavor = XP_FLAVOR_HAMI, .strategy = XP_STRAT_PACK};
	char *t = export_with(c, "{\"name\": \"s\", \"replicas\": 2, \"share_pct\": 30, \"vendor\": \"NVIDIA\"}",
			      XP_EXPORT_K8S, &eo, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	xp_want_parts(t, "        \"nvidia.com/gpu\": 1\n        \"nvidia.com/gpucores\": 30\n"
			 "        \"nvidia.com/gpumem-percentage\": 30\n",
		      "    \"nvidia.com/use-gpuuuid\": \"GPU-0-0\"\n    \"hami.io/gpu-scheduler-policy\": \"binpack\"\n"
		      "spec:\n", "\n---\n", NULL);
	free(yaml_check(t, NULL, 0));
	free(t);
	/* With --memory: MiB (nvidia.com/gpumem); spread: HAMi's spread. */
	eo.strategy = XP_STRAT_SPREAD;
	t = export_with(c, "{\"share_pct\": 50, \"memory_mib\": 16000, \"vendor\": \"NVIDIA\"}", XP_EXPORT_K8S, &eo, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	xp_want_parts(t, "\"nvidia.com/gpucores\": 50\n        \"nvidia.com/gpumem\": 16000\n",
		      "\"hami.io/gpu-scheduler-policy\": \"spread\"\n", NULL);
	ck_assert_ptr_null(strstr(t, "gpumem-percentage"));
	free(t);
	/* Volcano: its own device-sharing names, the pin in the task template, no policy. */
	eo.strategy = XP_STRAT_PACK;
	t = export_with(c, "{\"replicas\": 2, \"share_pct\": 30, \"vendor\": \"NVIDIA\"}", XP_EXPORT_VOLCANO, &eo, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	xp_want_parts(t, "        annotations:\n          \"volcano.sh/vgpu-use-gpuuuid\": \"GPU-0-0\"\n      spec:\n",
		      "              \"volcano.sh/vgpu-number\": 1\n              \"volcano.sh/vgpu-cores\": 30\n"
		      "              \"volcano.sh/vgpu-memory-percentage\": 30\n", NULL);
	ck_assert_ptr_null(strstr(t, "hami.io/gpu-scheduler-policy"));
	free(yaml_check(t, NULL, 0));
	free(t);
	/* Without the flavour the share is refused, and the reason names it. */
	for (int fmt = XP_EXPORT_K8S; fmt <= XP_EXPORT_VOLCANO; fmt++) {
		struct xp_export_opts none = {0};
		ck_assert_ptr_null(export_with(c, "{\"share_pct\": 30, \"vendor\": \"NVIDIA\"}", fmt, &none, &err));
		ck_assert_msg(strstr(err.msg, "soft share (30%)") && strstr(err.msg, "--flavor hami"), "%s", err.msg);
	}
	/* Slurm has no HAMi flavour. */
	ck_assert_ptr_null(export_with(c, "{\"devices\": 1}", XP_EXPORT_SLURM, &eo, &err));
	ck_assert_msg(strstr(err.msg, "goes with k8s and volcano") != NULL, "%s", err.msg);
	xp_cluster_free(c);
}
END_TEST

START_TEST(hami_whole_and_ascend)
{
	struct xp_cluster *c = cluster_uuids();
	struct xp_err err = {{0}};
	struct xp_export_opts eo = {.flavor = XP_FLAVOR_HAMI};
	/* Whole GPUs: 100% of cores and memory, so that HAMi does not share them on. */
	char *t = export_with(c, "{\"devices\": 2, \"vendor\": \"NVIDIA\"}", XP_EXPORT_K8S, &eo, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	xp_want_parts(t, "\"nvidia.com/use-gpuuuid\": \"GPU-0-0,GPU-0-1\"\n",
		      "\"nvidia.com/gpu\": 2\n        \"nvidia.com/gpucores\": 100\n"
		      "        \"nvidia.com/gpumem-percentage\": 100\n", NULL);
	free(t);
	/* Ascend 910B3: HAMi's per-chip resource, from the model's hami_chip. */
	t = export_with(c, "{\"replicas\": 2, \"devices\": 8, \"model\": \"Ascend*\"}", XP_EXPORT_VOLCANO, &eo, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	xp_want_parts(t, "              \"huawei.com/Ascend910B3\": 8\n", NULL);
	ck_assert_ptr_null(strstr(t, "-memory"));
	free(t);
	/* A vNPU template: one NPU and the template's memory, which HAMi maps back to it. */
	t = export_with(c, "{\"slice\": \"vir05_1c_16g\", \"model\": \"Ascend*\"}", XP_EXPORT_K8S, &eo, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	xp_want_parts(t, "        \"huawei.com/Ascend910B3\": 1\n        \"huawei.com/Ascend910B3-memory\": 16384\n", NULL);
	free(t);
	/* A soft share of an NPU: HAMi shares Ascend by template only; refused, saying so. */
	ck_assert_ptr_null(export_with(c, "{\"share_pct\": 25, \"model\": \"Ascend*\"}", XP_EXPORT_K8S, &eo, &err));
	ck_assert_msg(strstr(err.msg, "by memory only") && strstr(err.msg, "--slice"), "%s", err.msg);
	/* A MIG slice keeps the device plugin's resource. */
	t = export_with(c, "{\"slice\": \"1g.10gb\", \"vendor\": \"NVIDIA\"}", XP_EXPORT_K8S, &eo, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	xp_want_parts(t, "        \"nvidia.com/mig-1g.10gb\": 1\n", NULL);
	ck_assert_ptr_null(strstr(t, "gpucores"));
	free(t);
	xp_cluster_free(c);
	/* A vendor whose manifest gives no hami names: whole devices keep its plugin's resource,
	 * a share is refused naming the manifest. */
	c = xp_cluster_new();
	mknode(c, "amd-1", 2, "AMD", "AMD Instinct MI300X");
	t = export_with(c, "{\"devices\": 1}", XP_EXPORT_K8S, &eo, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	xp_want_parts(t, "\"amd.com/gpu\": 1\n", NULL);
	free(t);
	ck_assert_ptr_null(export_with(c, "{\"share_pct\": 40}", XP_EXPORT_K8S, &eo, &err));
	ck_assert_msg(strstr(err.msg, "manifest amd gives no `hami` names"), "%s", err.msg);
	xp_cluster_free(c);
}
END_TEST

START_TEST(hami_manifest_keys)
{
	/* The keys parse into names with {chip} filled from the model; bad lines are errors. */
	static const char text[] = "[adapter]\nname = acme\nvendor = Acme\n"
				   "hami = count=acme.io/{chip} memory=acme.io/{chip}-mem uuid=acme.io/use-uuid\n"
				   "[model X1]\nmatch = X1\nhami_chip = AcmeX1\n[model X2]\nmatch = X2\n";
	struct xp_manifest *m = xp_test_manifest(text, "acme.adapter");
	struct xp_mhami h;
	ck_assert(xp_manifest_hami(m, &m->models[0], false, &h));
	ck_assert_str_eq(h.count, "acme.io/AcmeX1");
	ck_assert_str_eq(h.memory, "acme.io/AcmeX1-mem");
	ck_assert_str_eq(h.uuid, "acme.io/use-uuid");
	ck_assert_str_eq(h.cores, "");
	ck_assert(xp_manifest_hami(m, &m->models[0], true, &h)); /* no hami_volcano: hami */
	ck_assert_str_eq(h.count, "acme.io/AcmeX1");
	ck_assert(!xp_manifest_hami(m, &m->models[1], false, &h)); /* {chip} without a chip */
	xp_manifest_free(m);
	static const char *const bad[] = {
		"hami = memory=a.io/m\n",            /* no count */
		"hami = count=a.io/x size=a.io/y\n", /* unknown key */
		"hami = count=a.io/x cores\n",       /* not key=value */
		"hami = count=kubernetes.io/x\n",    /* a reserved domain */
		"hami_chip = a/b\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char buf[256];
		snprintf(buf, sizeof buf, "[adapter]\nname = acme\nvendor = Acme\n%s", bad[i]);
		struct xp_err err = {{0}};
		struct xp_manifest *b = xp_manifest_parse(buf, strlen(buf), "acme.adapter", &err);
		ck_assert_msg(b == NULL, "accepted: %s", bad[i]);
		ck_assert_msg(strstr(err.msg, "acme.adapter:4:") != NULL, "%s", err.msg);
	}
}
END_TEST

START_TEST(not_placed)
{
	struct xp_err err = {{0}};
	struct xp_place_result r = {0};
	struct xp_job j = {0};
	ck_assert_ptr_null(xp_place_export(XP_EXPORT_K8S, &r, &j, NULL, NULL, 0, NULL, &err));
	ck_assert_int_eq(xp_export_parse("volcano"), XP_EXPORT_VOLCANO);
	ck_assert_int_eq(xp_export_parse("yaml"), -1);
}
END_TEST

START_TEST(cli)
{
	char *path = xp_test_sim_file(40, 3);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", path, "place", "--dry-run", "--export", "volcano", NULL), 0);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert(!strncmp(r.out, "apiVersion: \"batch.volcano.sh/v1alpha1\"\n", 40));
	free(yaml_check(r.out, NULL, 0));
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", path, "place", "--dry-run", "--export", "k8s", NULL), 0);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	free(yaml_check(r.out, NULL, 0));
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", path, "place", "--dry-run", "--export", "slurm", NULL), 0);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert(!strncmp(r.out, "#!/bin/bash\n#SBATCH --job-name=xpool-job\n", 41));
	xp_run_free(&r);
	/* --gres-type goes with --export slurm only. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", path, "place", "--dry-run", "--export", "k8s",
				      "--gres-type", "1g.10gb=a", NULL), 0);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "--gres-type goes with --export slurm"));
	xp_run_free(&r);
	/* --flavor: with k8s or volcano only, and a known name; a share without it is refused
	 * naming it, with it written for HAMi. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", path, "place", "--dry-run", "--export", "slurm",
				      "--flavor", "hami", NULL), 0);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "--flavor goes with --export k8s or volcano"));
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", path, "place", "--dry-run", "--export", "k8s",
				      "--flavor", "mps", NULL), 0);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "unknown flavour mps (hami)"));
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", path, "place", "--dry-run", "--share", "30", "--model",
				      "H100*", "--export", "volcano", NULL), 0);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "with HAMi installed, export it with --flavor hami"));
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", path, "place", "--dry-run", "--share", "30", "--model",
				      "H100*", "--export", "volcano", "--flavor", "hami", NULL), 0);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "\"volcano.sh/vgpu-cores\": 30\n"));
	free(yaml_check(r.out, NULL, 0));
	xp_run_free(&r);
	/* Unknown format: usage error. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", path, "place", "--dry-run", "--export", "yaml", NULL), 0);
	ck_assert_int_eq(r.status, 2);
	ck_assert_str_eq(r.out, "");
	xp_run_free(&r);
	/* Not placeable: exit 3, the reasons, nothing exported. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--inventory", path, "place", "--dry-run", "--devices", "8",
				      "--replicas", "100", "--export", "k8s", NULL), 0);
	ck_assert_int_eq(r.status, 3);
	ck_assert_ptr_nonnull(strstr(r.out, "nodes fit"));
	ck_assert_ptr_null(strstr(r.out, "apiVersion"));
	xp_run_free(&r);
	unlink(path);
	free(path);
}
END_TEST

XP_DEFINE_SUITE(export,
	{"core", .timeout_s = 60, .setup = load_manifests, .teardown = free_manifests,
	 .tests = {k8s_exact, k8s_ascend_family, k8s_unknown_vendor_refused,
		   resources_from_manifests, manifest_without_names, volcano, hostile_yaml, slurm, slurm_gres_types, slurm_gres_types_from_slurm,
		   hami_share, hami_whole_and_ascend, hami_manifest_keys, not_placed, cli}})
