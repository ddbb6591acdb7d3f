/* check_jobspec.c: job specs (issue 6 "Job spec"): the JSON forms, the flags, the encoding
 * that reads back, every refusal with the path or flag it names, and hostile input. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "jobspec.h"
#include "manifest.h"
#include "suitelib.h"
#include "validate.h"

/* Ascend-like: the 910A trains in two HCCS rings of 4 (ring:4) and has vNPU templates; the
 * 310 inference card keeps the adapter's pcie rule. */
static const char ascend_text[] =
	"[adapter]\n"
	"name = ascend\n"
	"vendor = Huawei\n"
	"affinity = pcie\n"
	"[model Ascend 910A]\n"
	"match = *910A*\n"
	"match = Ascend910A\n"
	"memory_mib = 32768\n"
	"affinity = ring:4\n"
	"partition = whole vnpu\n"
	"template = vir02 memory_mib=2184 compute=2/30 count=15\n"
	"template = vir04 memory_mib=4369 compute=4/30 count=7\n"
	"[model Ascend 310]\n"
	"match = Ascend310\n"
	"memory_mib = 8192\n"
	"partition = whole\n";

/* NVIDIA-like: NVLink islands (no fixed size in the manifest) and MIG profiles. */
static const char nvidia_text[] =
	"[adapter]\n"
	"name = nvidia\n"
	"vendor = NVIDIA\n"
	"affinity = nvlink\n"
	"[model H100 80GB HBM3]\n"
	"match = *H100*80GB*HBM3*\n"
	"memory_mib = 81559\n"
	"partition = whole mig\n"
	"template = 1g.10gb memory_mib=10240 compute=1/7 count=7\n"
	"template = 7g.80gb memory_mib=81920 compute=1 count=1\n";

static void setup(void)
{
	xp_test_mans_parse(ascend_text, nvidia_text);
}


static struct xp_job *parse(const char *text, struct xp_err *err)
{
	return xp_job_parse(text, strlen(text), NULL, err);
}

/* Parses text, which must succeed. */
static struct xp_job *good(const char *text)
{
	struct xp_err err = {{0}};
	struct xp_job *j = parse(text, &err);
	ck_assert_msg(j != NULL, "%s: %s", text, err.msg);
	return j;
}

/* Parsing text fails with a message that starts with want. */
static void parse_fails(const char *text, const char *want)
{
	struct xp_err err = {{0}};
	struct xp_job *j = parse(text, &err);
	ck_assert_msg(j == NULL, "accepted: %s", text);
	ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "%s\n  got:  %s\n  want: %s...", text,
		      err.msg, want);
}

/* Parsing text succeeds and xp_job_check (with the manifests) refuses with a message that
 * starts with want. */
static void check_fails(const char *text, const char *want)
{
	struct xp_job *j = good(text);
	struct xp_err err = {{0}};
	ck_assert_msg(xp_job_check(j, XP_TEST_MANS, 2, &err) != 0, "passed the check: %s", text);
	ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "%s\n  got:  %s\n  want: %s...", text,
		      err.msg, want);
	xp_job_free(j);
}

static void check_passes(const char *text)
{
	struct xp_job *j = good(text);
	struct xp_err err = {{0}};
	ck_assert_msg(xp_job_check(j, XP_TEST_MANS, 2, &err) == 0, "%s: %s", text, err.msg);
	xp_job_free(j);
}

START_TEST(full_form)
{
	struct xp_job *j = good(
		"{\"name\": \"llama-70b\", \"kind\": \"train\", \"queue\": \"research\", \"tenant\": \"nlp\","
		" \"priority\": -5, \"groups\": ["
		" {\"name\": \"workers\", \"replicas\": 4, \"gang_min\": 2, \"devices\": 8,"
		"  \"vendor\": \"Huawei\", \"model\": \"Ascend910B*\", \"memory_mib\": 32768, \"min_ecu\": 1.5,"
		"  \"cpus\": 32, \"host_memory_mib\": 262144, \"labels\": {\"pool\": \"train\", \"zone\": \"\"},"
		"  \"same_group\": true, \"numa\": \"strict\", \"network\": \"switch\","
		"  \"validated\": {\"layer\": \"executes\", \"case\": \"llama-70b\"}},"
		" {\"name\": \"eval\", \"slice\": \"vir04\", \"homogeneous\": false, \"numa\": \"prefer\","
		"  \"network\": \"rack\", \"validated\": {\"layer\": \"launches\"}},"
		" {\"name\": \"tb\", \"share_pct\": 25, \"validated\": null, \"labels\": null}]}");
	ck_assert_str_eq(j->name, "llama-70b");
	ck_assert_int_eq(j->kind, XP_JOB_TRAIN);
	ck_assert_str_eq(j->queue, "research");
	ck_assert_str_eq(j->tenant, "nlp");
	ck_assert_int_eq(j->priority, -5);
	ck_assert_int_eq(j->form, XP_JOB_FORM_FULL);
	ck_assert_uint_eq(j->n_groups, 3);
	const struct xp_task_group *g = &j->groups[0];
	ck_assert_str_eq(g->name, "workers");
	ck_assert_int_eq(g->replicas, 4);
	ck_assert_int_eq(g->gang_min, 2);
	ck_assert_int_eq(g->devices, 8);
	ck_assert_ptr_null(g->slice);
	ck_assert_int_eq(g->share_pct, 0);
	ck_assert_str_eq(g->vendor, "Huawei");
	ck_assert_str_eq(g->model, "Ascend910B*");
	ck_assert_int_eq(g->memory_mib, 32768);
	ck_assert(g->min_ecu == 1.5);
	ck_assert_int_eq(g->cpus, 32);
	ck_assert_int_eq(g->host_memory_mib, 262144);
	ck_assert_uint_eq(g->labels.n, 2);
	ck_assert_str_eq(xp_labels_get(&g->labels, "pool"), "train");
	ck_assert_str_eq(xp_labels_get(&g->labels, "zone"), "");
	ck_assert(g->homogeneous); /* train's default */
	ck_assert(g->same_group);
	ck_assert_int_eq(g->numa, XP_NUMA_STRICT);
	ck_assert_int_eq(g->network, XP_NET_SWITCH);
	ck_assert_int_eq(g->validated_layer, XP_LAYER_EXECUTES);
	ck_assert_str_eq(g->validated_case, "llama-70b");
	g = &j->groups[1];
	ck_assert_int_eq(g->replicas, 1);
	ck_assert_int_eq(g->gang_min, 1);
	ck_assert_int_eq(g->devices, 0); /* a slice instead of a device */
	ck_assert_str_eq(g->slice, "vir04");
	ck_assert(!g->homogeneous);
	ck_assert_int_eq(g->numa, XP_NUMA_PREFER);
	ck_assert_int_eq(g->network, XP_NET_RACK);
	ck_assert_int_eq(g->validated_layer, XP_LAYER_LAUNCHES);
	ck_assert_ptr_null(g->validated_case); /* any case */
	g = &j->groups[2];
	ck_assert_int_eq(g->devices, 0);
	ck_assert_int_eq(g->share_pct, 25);
	ck_assert_int_eq(g->validated_layer, -1);
	ck_assert_uint_eq(g->labels.n, 0);
	struct xp_err err = {{0}};
	/* No manifests: only the checks that need none. */
	ck_assert_msg(xp_job_check(j, NULL, 0, &err) == 0, "%s", err.msg);
	xp_job_free(j);
}
END_TEST

START_TEST(short_form)
{
	/* One group's fields beside the job's: the common case. */
	struct xp_job *j = good("{\"name\": \"ft\", \"kind\": \"train\", \"devices\": 4, \"model\": \"Ascend910A\","
				" \"replicas\": 2}");
	ck_assert_int_eq(j->form, XP_JOB_FORM_SHORT);
	ck_assert_str_eq(j->name, "ft");
	ck_assert_uint_eq(j->n_groups, 1);
	ck_assert_ptr_null(j->groups[0].name); /* "name" is the job's */
	ck_assert_int_eq(j->groups[0].devices, 4);
	ck_assert_int_eq(j->groups[0].replicas, 2);
	ck_assert_int_eq(j->groups[0].gang_min, 2);
	ck_assert(j->groups[0].homogeneous);
	struct xp_err err = {{0}};
	ck_assert_msg(xp_job_check(j, XP_TEST_MANS, 2, &err) == 0, "%s", err.msg);
	xp_job_free(j);

	/* Nothing at all: one replica of one device, kind batch, no constraints. */
	j = good("{}");
	ck_assert_int_eq(j->kind, XP_JOB_BATCH);
	ck_assert_ptr_null(j->name);
	ck_assert_ptr_null(j->queue);
	ck_assert_int_eq(j->priority, 0);
	const struct xp_task_group *g = &j->groups[0];
	ck_assert_int_eq(g->replicas, 1);
	ck_assert_int_eq(g->gang_min, 1);
	ck_assert_int_eq(g->devices, 1);
	ck_assert(!g->homogeneous); /* only train defaults to it */
	ck_assert(!g->same_group);
	ck_assert_int_eq(g->numa, XP_NUMA_NONE);
	ck_assert_int_eq(g->network, XP_NET_ANY);
	ck_assert_int_eq(g->validated_layer, -1);
	ck_assert_msg(xp_job_check(j, XP_TEST_MANS, 2, &err) == 0, "%s", err.msg);
	xp_job_free(j);

	/* Layers as xpool takes them everywhere: a unique prefix or the column number. */
	j = good("{\"validated\": {\"layer\": \"exec\"}}");
	ck_assert_int_eq(j->groups[0].validated_layer, XP_LAYER_EXECUTES);
	xp_job_free(j);
	j = good("{\"validated\": {\"layer\": \"1\", \"case\": null}}");
	ck_assert_int_eq(j->groups[0].validated_layer, XP_LAYER_SCHEDULABLE);
	xp_job_free(j);
}
END_TEST

START_TEST(flags)
{
	struct xp_job_flags f = {
		.name = "what-if", .kind = "train", .queue = "q1", .tenant = "t", .priority = "-3",
		.replicas = "2", .gang_min = "1", .devices = "8", .vendor = "huawei", .model = "Ascend910A",
		.memory = "16384", .ecu = "2.5", .cpus = "16", .host_memory = "65536",
		.labels = "pool=train,rack=", .homogeneous = "no", .same_group = NULL, .numa = "prefer",
		.network = "switch", .validated = "executes:llama-70b"};
	struct xp_err err = {{0}};
	struct xp_job *j = xp_job_from_flags(&f, &err);
	ck_assert_msg(j != NULL, "%s", err.msg);
	ck_assert_int_eq(j->form, XP_JOB_FORM_FLAGS);
	ck_assert_str_eq(j->name, "what-if");
	ck_assert_int_eq(j->kind, XP_JOB_TRAIN);
	ck_assert_str_eq(j->queue, "q1");
	ck_assert_str_eq(j->tenant, "t");
	ck_assert_int_eq(j->priority, -3);
	ck_assert_uint_eq(j->n_groups, 1);
	const struct xp_task_group *g = &j->groups[0];
	ck_assert_int_eq(g->replicas, 2);
	ck_assert_int_eq(g->gang_min, 1);
	ck_assert_int_eq(g->devices, 8);
	ck_assert_str_eq(g->vendor, "huawei");
	ck_assert_int_eq(g->memory_mib, 16384);
	ck_assert(g->min_ecu == 2.5);
	ck_assert_int_eq(g->cpus, 16);
	ck_assert_int_eq(g->host_memory_mib, 65536);
	ck_assert_str_eq(xp_labels_get(&g->labels, "pool"), "train");
	ck_assert_str_eq(xp_labels_get(&g->labels, "rack"), "");
	ck_assert(!g->homogeneous); /* "no" overrides train's default */
	ck_assert(!g->same_group);
	ck_assert_int_eq(g->numa, XP_NUMA_PREFER);
	ck_assert_int_eq(g->network, XP_NET_SWITCH);
	ck_assert_int_eq(g->validated_layer, XP_LAYER_EXECUTES);
	ck_assert_str_eq(g->validated_case, "llama-70b");
	/* 8 = two whole rings of 4; the vendor pattern matches the adapter's name too. */
	ck_assert_msg(xp_job_check(j, XP_TEST_MANS, 2, &err) == 0, "%s", err.msg);
	xp_job_free(j);

	/* No flags: the same defaults as "{}"; a flag given without a value is true. */
	struct xp_job_flags none = {.slice = "1g.10gb", .same_group = "", .validated = "accepted"};
	j = xp_job_from_flags(&none, &err);
	ck_assert_msg(j != NULL, "%s", err.msg);
	ck_assert_int_eq(j->kind, XP_JOB_BATCH);
	ck_assert_int_eq(j->groups[0].devices, 0);
	ck_assert_int_eq(j->groups[0].replicas, 1);
	ck_assert(j->groups[0].same_group);
	ck_assert_int_eq(j->groups[0].validated_layer, XP_LAYER_ACCEPTED);
	ck_assert_ptr_null(j->groups[0].validated_case);
	ck_assert_msg(xp_job_check(j, XP_TEST_MANS, 2, &err) == 0, "%s", err.msg);
	xp_job_free(j);
}
END_TEST

/* Encodes j, decodes the text, encodes again: the two documents must be equal. */
static void round_trip(const struct xp_job *j)
{
	json_t *a = xp_job_to_json(j);
	char *text = json_dumps(a, JSON_COMPACT);
	ck_assert_ptr_nonnull(text);
	struct xp_err err = {{0}};
	struct xp_job *back = xp_job_parse(text, strlen(text), "again", &err);
	ck_assert_msg(back != NULL, "%s: %s", text, err.msg);
	ck_assert_int_eq(back->form, XP_JOB_FORM_FULL);
	json_t *b = xp_job_to_json(back);
	char *again = json_dumps(b, JSON_COMPACT);
	ck_assert_msg(json_equal(a, b), "%s\n!=\n%s", text, again);
	free(again);
	free(text);
	json_decref(a);
	json_decref(b);
	xp_job_free(back);
}

START_TEST(to_json)
{
	struct xp_job *j = good(
		"{\"name\": \"j\", \"kind\": \"infer\", \"queue\": \"q\", \"priority\": 7, \"groups\": ["
		" {\"name\": \"a\", \"replicas\": 3, \"devices\": 2, \"model\": \"*H100*\", \"min_ecu\": 0.25,"
		"  \"labels\": {\"pool\": \"serve\"}, \"homogeneous\": true, \"validated\": {\"layer\": \"accepted\","
		"  \"case\": \"resnet\"}},"
		" {\"name\": \"b\", \"slice\": \"1g.10gb\", \"memory_mib\": 8000, \"numa\": \"strict\"}]}");
	json_t *o = xp_job_to_json(j);
	/* The names the issue keeps stable, every field always there. */
	ck_assert_str_eq(json_string_value(json_object_get(o, "kind")), "infer");
	ck_assert(json_is_null(json_object_get(o, "tenant")));
	ck_assert_int_eq(json_integer_value(json_object_get(o, "priority")), 7);
	json_t *g = json_array_get(json_object_get(o, "groups"), 0);
	ck_assert_int_eq(json_object_size(g), 18);
	ck_assert_int_eq(json_integer_value(json_object_get(g, "gang_min")), 3);
	ck_assert(json_is_null(json_object_get(g, "slice")));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(g, "validated"), "layer")), "accepted");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(g, "labels"), "pool")), "serve");
	g = json_array_get(json_object_get(o, "groups"), 1);
	ck_assert(json_is_null(json_object_get(g, "validated")));
	ck_assert_int_eq(json_integer_value(json_object_get(g, "devices")), 0);
	ck_assert_str_eq(json_string_value(json_object_get(g, "numa")), "strict");
	ck_assert_str_eq(json_string_value(json_object_get(g, "network")), "any");
	json_decref(o);
	round_trip(j);
	xp_job_free(j);

	j = good("{\"share_pct\": 50, \"kind\": \"data\"}");
	round_trip(j);
	xp_job_free(j);

	struct xp_job_flags f = {.devices = "4", .labels = "a=1,b=2", .validated = "launches", .kind = "train"};
	struct xp_err err = {{0}};
	j = xp_job_from_flags(&f, &err);
	ck_assert_msg(j != NULL, "%s", err.msg);
	round_trip(j);
	xp_job_free(j);
}
END_TEST

START_TEST(parse_errors)
{
	/* Unknown fields: a typo must not drop a constraint. */
	parse_fails("{\"devcies\": 8}", "$.devcies: unknown field (did you mean \"devices\"?)");
	parse_fails("{\"GangMin\": 8}", "$.GangMin: unknown field (did you mean \"gang_min\"?)");
	parse_fails("{\"groups\": [{\"replicas\": 1, \"numa_policy\": \"strict\"}]}",
		    "$.groups[0].numa_policy: unknown field");
	parse_fails("{\"groups\": [{}], \"devices\": 8}", "$.devices: a group's field at the top level");
	parse_fails("{\"groups\": [{}], \"bogus\": 8}", "$.bogus: unknown field");
	parse_fails("{\"groups\": [{}], \"queues\": 8}", "$.queues: unknown field (did you mean \"queue\"?)");
	parse_fails("{\"validated\": {\"layer\": \"executes\", \"cases\": \"x\"}}", "$.validated.cases: unknown field");
	/* An unknown key is the user's text: shown printable, cut short. */
	parse_fails("{\"a\\u001b[2Jb\": 1}", "$.a?[2Jb: unknown field");
	/* Wrong types. */
	parse_fails("[]", "$: expected an object, got an array");
	parse_fails("{\"name\": 5}", "$.name: expected a string or null, got an integer");
	parse_fails("{\"kind\": \"training\"}", "$.kind: expected one of train, infer, data, batch");
	parse_fails("{\"priority\": \"high\"}", "$.priority: expected an integer, got a string");
	parse_fails("{\"priority\": 3000000000}", "$.priority: expected an integer from -2147483648 to 2147483647");
	parse_fails("{\"groups\": {}}", "$.groups: expected an array of task groups, got an object");
	parse_fails("{\"groups\": [{}, 3]}", "$.groups[1]: expected an object, got an integer");
	parse_fails("{\"groups\": [{\"replicas\": 2.0}]}", "$.groups[0].replicas: expected an integer, got a real number");
	parse_fails("{\"replicas\": -1}", "$.replicas: expected an integer from 0 to 2147483647, got -1");
	parse_fails("{\"devices\": \"8\"}", "$.devices: expected an integer, got a string");
	parse_fails("{\"devices\": 4294967297}", "$.devices: expected an integer from 0 to");
	parse_fails("{\"memory_mib\": -5}", "$.memory_mib: expected an integer from 0 to");
	parse_fails("{\"min_ecu\": \"1\"}", "$.min_ecu: expected a number, got a string");
	parse_fails("{\"min_ecu\": -0.5}", "$.min_ecu: expected a number >= 0");
	parse_fails("{\"homogeneous\": 1}", "$.homogeneous: expected a boolean, got an integer");
	parse_fails("{\"same_group\": \"yes\"}", "$.same_group: expected a boolean, got a string");
	parse_fails("{\"numa\": \"loose\"}", "$.numa: expected one of none, prefer, strict");
	parse_fails("{\"network\": null}", "$.network: expected one of any, switch, rack");
	parse_fails("{\"labels\": [\"pool=train\"]}", "$.labels: expected an object");
	parse_fails("{\"labels\": {\"pool\": 1}}", "$.labels.pool: expected a string, got an integer");
	parse_fails("{\"labels\": {\"\": \"x\"}}", "$.labels.: label key: must not be empty");
	parse_fails("{\"labels\": {\"a=b\": \"x\"}}", "$.labels.a=b: label key: must not contain");
	parse_fails("{\"validated\": \"executes\"}", "$.validated: expected an object");
	parse_fails("{\"validated\": {}}", "$.validated.layer: missing");
	parse_fails("{\"validated\": {\"layer\": \"deployed\"}}", "$.validated.layer: expected one of");
	parse_fails("{\"validated\": {\"layer\": \"e\", \"case\": 3}}", "$.validated.case: expected a string");
	/* Strings safe to print. */
	parse_fails("{\"model\": \"A\\u001b]0;x\\u0007\"}", "$.model: a string must not contain control characters");
	parse_fails("{\"queue\": \"a\\u009bb\"}", "$.queue: a string must not contain control characters (U+009B");
	parse_fails("{\"slice\": \"\"}", "$.slice: must not be empty");
	parse_fails("{\"name\": \"x\\u0000y\"}", "1:"); /* jansson refuses NUL escapes itself */
	parse_fails("{\"name\": \"a\", \"name\": \"b\"}", "1:");
	/* A file name prefixes the message. */
	struct xp_err err = {{0}};
	const char *t = "{\"replicas\": true}";
	ck_assert_ptr_null(xp_job_parse(t, strlen(t), "job.json", &err));
	ck_assert_str_eq(err.msg, "job.json: $.replicas: expected an integer, got a boolean");
	/* Limits. */
	char many[4096] = "{\"groups\": [";
	for (int i = 0; i <= XP_JOB_MAX_GROUPS; i++)
		strcat(many, i ? ",{}" : "{}");
	strcat(many, "]}");
	parse_fails(many, "$.groups: 65 groups, more than the 64 allowed");
	char *longs = malloc(XP_JOB_MAX_STRING + 32);
	snprintf(longs, XP_JOB_MAX_STRING + 32, "{\"model\": \"%0*d\"}", XP_JOB_MAX_STRING + 1, 0);
	parse_fails(longs, "$.model: a string of 257 bytes, more than the 256 allowed");
	free(longs);
}
END_TEST

START_TEST(check_errors)
{
	/* Impossible values, each naming its field. */
	check_fails("{\"groups\": []}", "$.groups: a job needs at least one task group");
	check_fails("{\"groups\": [{\"replicas\": 0}]}", "$.groups[0].replicas: 0 replicas: a group needs at least 1");
	check_fails("{\"replicas\": 100001}", "$.replicas: 100001 replicas, more than the 100000 allowed");
	check_fails("{\"groups\": [{}, {\"replicas\": 2, \"gang_min\": 3}]}",
		    "$.groups[1].gang_min: a gang minimum of 3: it must be from 1 to the 2 replicas");
	check_fails("{\"replicas\": 2, \"gang_min\": 0}", "$.gang_min: a gang minimum of 0");
	check_fails("{\"groups\": [{\"devices\": 0}]}",
		    "$.groups[0].devices: 0 devices and no slice or share: a replica must ask for one");
	check_fails("{\"groups\": [{\"devices\": 2, \"slice\": \"vir04\"}]}",
		    "$.groups[0].devices: 2 devices and slice \"vir04\" both");
	check_fails("{\"devices\": 1, \"share_pct\": 50}", "$.devices: 1 devices and a share of 50% both");
	check_fails("{\"slice\": \"vir04\", \"share_pct\": 50}", "$.share_pct: a share of 50% and slice \"vir04\" both");
	check_fails("{\"share_pct\": 101}", "$.share_pct: a share of 101%: it must be from 1 to 100");
	check_fails("{\"devices\": 1025}", "$.devices: 1025 devices per replica, more than the 1024 a node can hold");
	check_fails("{\"groups\": [{\"name\": \"w\"}, {\"name\": \"e\"}, {\"name\": \"w\"}]}",
		    "$.groups[2].name: group \"w\" is named twice (also groups[0])");

	/* Slices: the template must belong to a model the patterns select. */
	check_fails("{\"groups\": [{\"model\": \"Ascend910A\", \"slice\": \"1g.10gb\"}]}",
		    "$.groups[0].slice: no model matching model \"Ascend910A\" has a template \"1g.10gb\" "
		    "(they have: vir02, vir04)");
	check_fails("{\"vendor\": \"nvidia\", \"slice\": \"vir04\"}",
		    "$.slice: no model matching vendor \"nvidia\" has a template \"vir04\" (they have: 1g.10gb, 7g.80gb)");
	check_fails("{\"model\": \"Ascend310\", \"slice\": \"vir04\"}",
		    "$.slice: no model matching model \"Ascend310\" has partition templates");
	check_fails("{\"model\": \"MI300*\", \"slice\": \"vir04\"}",
		    "$.slice: no model in the manifests matches model \"MI300*\", so none has a template \"vir04\"");
	check_fails("{\"model\": \"*910A*\", \"slice\": \"vir04\", \"memory_mib\": 8000}",
		    "$.memory_mib: 8000 MiB per replica, more than template \"vir04\" holds (4369 MiB at most)");
	check_passes("{\"model\": \"*910A*\", \"slice\": \"VIR04\", \"memory_mib\": 4000}");
	check_passes("{\"slice\": \"1g.10gb\"}"); /* any model: the H100 has it */

	/* Device counts against the affinity rule: ring:4 takes 1-4 in one ring or whole rings. */
	check_fails("{\"groups\": [{\"model\": \"Ascend910A\", \"devices\": 9}]}",
		    "$.groups[0].devices: 9 devices per replica break the ring:4 rule of Ascend 910A: 1 to 4 "
		    "within one ring, or a multiple of 4");
	check_fails("{\"vendor\": \"Huawei\", \"model\": \"*910A*\", \"devices\": 6}",
		    "$.devices: 6 devices per replica break the ring:4 rule of Ascend 910A");
	static const char *const ok_counts[] = {"1", "2", "3", "4", "8", "16"};
	for (size_t i = 0; i < sizeof ok_counts / sizeof ok_counts[0]; i++) {
		char t[128];
		snprintf(t, sizeof t, "{\"model\": \"Ascend 910A\", \"devices\": %s}", ok_counts[i]);
		check_passes(t);
	}
	/* One model of the selection allowing it is enough: the 310 follows pcie, H100 nvlink. */
	check_passes("{\"vendor\": \"Huawei\", \"devices\": 6}");
	check_passes("{\"model\": \"*H100*\", \"devices\": 9}");
	/* Models the manifests do not know: nothing to hold the count against. */
	check_passes("{\"model\": \"MI300*\", \"devices\": 9}");
	check_fails("{\"model\": \"Ascend910A\", \"devices\": 8, \"same_group\": true}",
		    "$.same_group: 8 devices do not fit in one affinity group: Ascend 910A groups devices in "
		    "rings of 4 (ring:4)");
	check_passes("{\"model\": \"Ascend910A\", \"devices\": 4, \"same_group\": true}");
	check_fails("{\"model\": \"*H100*\", \"memory_mib\": 90000}",
		    "$.memory_mib: 90000 MiB per device, more than any matching model has (the most: 81559 MiB, "
		    "H100 80GB HBM3)");
	check_passes("{\"memory_mib\": 81559}");

	/* Without manifests the checks that need them are skipped. */
	struct xp_job *j = good("{\"model\": \"Ascend910A\", \"devices\": 9, \"slice\": null}");
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_job_check(j, NULL, 0, &err), 0);
	xp_job_free(j);

	/* Values only a hand-built job can hold. */
	j = good("{}");
	j->groups[0].validated_case = strdup("llama");
	ck_assert_int_eq(xp_job_check(j, NULL, 0, &err), -1);
	ck_assert_str_eq(err.msg, "$.validated: case \"llama\" without a layer to prove for it");
	j->groups[0].validated_layer = XP_LAYER_COUNT;
	ck_assert_int_eq(xp_job_check(j, NULL, 0, &err), -1);
	ck_assert_str_eq(err.msg, "$.validated: layer 5 is not a validation layer");
	j->groups[0].validated_layer = 1;
	j->groups[0].numa = 7;
	ck_assert_int_eq(xp_job_check(j, NULL, 0, &err), -1);
	ck_assert_str_eq(err.msg, "$.numa: policy 7: expected none, prefer or strict");
	j->groups[0].numa = 0;
	j->groups[0].min_ecu = NAN;
	ck_assert_int_eq(xp_job_check(j, NULL, 0, &err), -1);
	ck_assert_str_eq(err.msg, "$.min_ecu: nan ECU: expected a number >= 0");
	j->groups[0].min_ecu = 0;
	j->groups[0].cpus = -2;
	ck_assert_int_eq(xp_job_check(j, NULL, 0, &err), -1);
	ck_assert_str_eq(err.msg, "$.cpus: -2 CPUs: the count cannot be negative");
	j->groups[0].cpus = 0;
	j->kind = 9;
	ck_assert_int_eq(xp_job_check(j, NULL, 0, &err), -1);
	ck_assert_str_eq(err.msg, "$.kind: kind 9: expected train, infer, data or batch");
	xp_job_free(j);
}
END_TEST

/* Building from f fails with a message that starts with want. */
static void flags_fail(const struct xp_job_flags *f, const char *want)
{
	struct xp_err err = {{0}};
	struct xp_job *j = xp_job_from_flags(f, &err);
	ck_assert_msg(j == NULL, "accepted, want: %s", want);
	ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "got:  %s\nwant: %s...", err.msg, want);
}

/* Building from f succeeds and the check refuses with a message that starts with want. */
static void flags_check_fails(const struct xp_job_flags *f, const char *want)
{
	struct xp_err err = {{0}};
	struct xp_job *j = xp_job_from_flags(f, &err);
	ck_assert_msg(j != NULL, "%s", err.msg);
	ck_assert_msg(xp_job_check(j, XP_TEST_MANS, 2, &err) != 0, "passed, want: %s", want);
	ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "got:  %s\nwant: %s...", err.msg, want);
	xp_job_free(j);
}

START_TEST(flag_errors)
{
	flags_fail(&(struct xp_job_flags){.replicas = "two"}, "--replicas: expected an integer from 0 to 2147483647, got \"two\"");
	flags_fail(&(struct xp_job_flags){.devices = " 8"}, "--devices: expected an integer");
	flags_fail(&(struct xp_job_flags){.devices = "8k"}, "--devices: expected an integer");
	flags_fail(&(struct xp_job_flags){.devices = "-1"}, "--devices: expected an integer from 0");
	flags_fail(&(struct xp_job_flags){.devices = "99999999999999999999999"}, "--devices: expected an integer");
	flags_fail(&(struct xp_job_flags){.priority = "-"}, "--priority: expected an integer from -2147483648");
	flags_fail(&(struct xp_job_flags){.memory = "80G"}, "--memory: expected an integer");
	flags_fail(&(struct xp_job_flags){.host_memory = ""}, "--host-memory: expected an integer");
	flags_fail(&(struct xp_job_flags){.share = "1e2"}, "--share: expected an integer");
	flags_fail(&(struct xp_job_flags){.gang_min = "x"}, "--gang-min: expected an integer");
	flags_fail(&(struct xp_job_flags){.cpus = "1.5"}, "--cpus: expected an integer");
	flags_fail(&(struct xp_job_flags){.ecu = "inf"}, "--ecu: expected a number >= 0, got \"inf\"");
	flags_fail(&(struct xp_job_flags){.ecu = "-1"}, "--ecu: expected a number >= 0");
	flags_fail(&(struct xp_job_flags){.ecu = "1x"}, "--ecu: expected a number >= 0");
	flags_fail(&(struct xp_job_flags){.kind = "serve"}, "--kind: expected one of train, infer, data, batch, got \"serve\"");
	flags_fail(&(struct xp_job_flags){.numa = "strict,prefer"}, "--numa: expected one of none, prefer, strict");
	flags_fail(&(struct xp_job_flags){.network = "zone"}, "--network: expected one of switch, rack, any");
	flags_fail(&(struct xp_job_flags){.homogeneous = "maybe"}, "--homogeneous: expected yes or no, got \"maybe\"");
	flags_fail(&(struct xp_job_flags){.same_group = "2"}, "--same-group: expected yes or no");
	flags_fail(&(struct xp_job_flags){.validated = "deployed"}, "--validated: expected LAYER[:CASE]");
	flags_fail(&(struct xp_job_flags){.validated = "executes:"}, "--validated: a case name after ':' is missing");
	flags_fail(&(struct xp_job_flags){.validated = ":llama"}, "--validated: expected LAYER[:CASE]");
	flags_fail(&(struct xp_job_flags){.labels = "pool"}, "--label: expected KEY=VALUE, got \"pool\"");
	flags_fail(&(struct xp_job_flags){.labels = "=x"}, "--label: expected KEY=VALUE");
	flags_fail(&(struct xp_job_flags){.labels = ","}, "--label: expected KEY=VALUE");
	flags_fail(&(struct xp_job_flags){.labels = "a=1,a=2"}, "--label: a given twice");
	flags_fail(&(struct xp_job_flags){.model = "A\x1b[31m"}, "--model: a string must not contain control characters (byte 0x1b at 1)");
	flags_fail(&(struct xp_job_flags){.vendor = "\xff\xfe"}, "--vendor: not UTF-8 (byte 0xff at 0)");
	flags_fail(&(struct xp_job_flags){.queue = ""}, "--queue: must not be empty");
	/* A bad value is echoed printable and short. */
	flags_fail(&(struct xp_job_flags){.replicas = "\x1b]0;pwned\x07"}, "--replicas: expected an integer from 0 to 2147483647, got \"?]0;pwned?\"");

	/* The check names flags for a job made from them. */
	flags_check_fails(&(struct xp_job_flags){.replicas = "0"}, "--replicas: 0 replicas");
	flags_check_fails(&(struct xp_job_flags){.replicas = "2", .gang_min = "5"}, "--gang-min: a gang minimum of 5");
	flags_check_fails(&(struct xp_job_flags){.devices = "0"}, "--devices: 0 devices and no slice or share");
	flags_check_fails(&(struct xp_job_flags){.devices = "2", .slice = "vir02"}, "--devices: 2 devices and slice \"vir02\" both");
	flags_check_fails(&(struct xp_job_flags){.share = "200"}, "--share: a share of 200%");
	flags_check_fails(&(struct xp_job_flags){.model = "Ascend910A", .devices = "9"},
			  "--devices: 9 devices per replica break the ring:4 rule of Ascend 910A");
	flags_check_fails(&(struct xp_job_flags){.model = "Ascend910A", .devices = "8", .same_group = ""},
			  "--same-group: 8 devices do not fit in one affinity group");
	flags_check_fails(&(struct xp_job_flags){.model = "Ascend910A", .slice = "3g.40gb"},
			  "--slice: no model matching model \"Ascend910A\" has a template \"3g.40gb\"");
	flags_check_fails(&(struct xp_job_flags){.model = "Ascend910A", .memory = "40000"},
			  "--memory: 40000 MiB per device, more than any matching model has");
}
END_TEST

/* Parses hostile text: it must fail cleanly or succeed, never crash or leak. */
static void hostile(const char *text, size_t len, const char *want)
{
	struct xp_err err = {{0}};
	struct xp_job *j = xp_job_parse(text, len, "h.json", &err);
	if (want) {
		ck_assert_msg(j == NULL, "accepted hostile input");
		ck_assert_msg(strstr(err.msg, want) != NULL, "got: %s\nwant: ...%s...", err.msg, want);
		for (const char *c = err.msg; *c; c++)
			ck_assert_msg((unsigned char)*c >= 0x20 && *c != 0x7f, "control byte in: %s", err.msg);
	}
	if (j) {
		xp_job_check(j, XP_TEST_MANS, 2, &err);
		json_decref(xp_job_to_json(j));
	}
	xp_job_free(j);
}

START_TEST(hostile_input)
{
	size_t big = 10u << 20;
	char *buf = malloc(big + 64);
	/* Deep nesting: jansson's depth limit, in a field and at the top. */
	memset(buf, '[', 200000);
	hostile(buf, 200000, "h.json: 1:");
	memcpy(buf, "{\"labels\": ", 11);
	memset(buf + 11, '{', 100000);
	hostile(buf, 100011, "h.json: 1:");
	/* Huge numbers. */
	hostile("{\"replicas\": 99999999999999999999999999}", 41, "h.json: 1:");
	const char *t = "{\"min_ecu\": 1e999}";
	hostile(t, strlen(t), "h.json: 1:");
	t = "{\"groups\": [{\"replicas\": 9223372036854775807}]}";
	hostile(t, strlen(t), "$.groups[0].replicas: expected an integer from 0 to 2147483647");
	t = "{\"memory_mib\": 9223372036854775807, \"host_memory_mib\": 9223372036854775807, \"min_ecu\": 1e308}";
	hostile(t, strlen(t), NULL);
	/* A 10 MB string: refused by size before it is decoded. */
	memcpy(buf, "{\"model\": \"", 11);
	memset(buf + 11, 'A', big);
	memcpy(buf + 11 + big, "\"}", 2);
	hostile(buf, big + 13, "h.json: a job spec of 10485773 bytes, more than the 1048576 allowed");
	/* ... and as a flag, which no size check guards. */
	buf[11 + big] = '\0';
	flags_fail(&(struct xp_job_flags){.model = buf + 11}, "--model: a string of 10485760 bytes, more than the 256 allowed");
	flags_fail(&(struct xp_job_flags){.labels = buf + 11}, "--label: a string of 10485760 bytes");
	/* NUL bytes: raw in the text, and in an unknown key's echo. */
	hostile("{\"name\": \"a\0b\"}", 15, "h.json: 1:");
	hostile("{\"devices\": 1}\0garbage", 22, "h.json: 1:");
	hostile("", 0, "h.json: 1:");
	hostile(NULL, 0, "h.json: 1:");
	/* Control characters in the file name and in jansson's quote of the input. */
	struct xp_err err = {{0}};
	ck_assert_ptr_null(xp_job_parse("{\x1b", 2, "a\x1b[2J.json", &err));
	for (const char *c = err.msg; *c; c++)
		ck_assert_msg((unsigned char)*c >= 0x20 && *c != 0x7f, "control byte in: %s", err.msg);
	/* A long key and a long path. */
	memcpy(buf, "{\"", 2);
	memset(buf + 2, 'k', 5000);
	memcpy(buf + 5002, "\": 1}", 5);
	hostile(buf, 5007, "h.json: $.kkkkkkkkkk");
	/* Every prefix of a valid spec: truncated files fail cleanly. */
	const char *full = "{\"name\": \"n\", \"kind\": \"train\", \"groups\": [{\"name\": \"g\", \"replicas\": 2,"
			   " \"devices\": 4, \"labels\": {\"pool\": \"x\"}, \"validated\": {\"layer\": \"executes\","
			   " \"case\": \"c\"}}]}";
	for (size_t n = 0; n < strlen(full); n++)
		hostile(full, n, "h.json: ");
	hostile(full, strlen(full), NULL);
	/* Every byte flipped to each troublesome value. */
	static const char flips[] = {'\0', '"', '\\', '{', '[', '\x1b', '\xff', '-', '9'};
	for (size_t n = 0; n < strlen(full); n++)
		for (size_t k = 0; k < sizeof flips; k++) {
			memcpy(buf, full, strlen(full));
			buf[n] = flips[k];
			hostile(buf, strlen(full), NULL);
		}
	free(buf);
}
END_TEST

XP_DEFINE_SUITE(jobspec,
	{"core", .setup = setup, .teardown = xp_test_mans_free,
	 .tests = {full_form, short_form, flags, to_json, parse_errors, check_errors, flag_errors,
		   hostile_input}})
