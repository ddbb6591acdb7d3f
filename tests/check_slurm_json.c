/* check_slurm_json.c: Slurm's JSON output (backends/slurm_json.c) read into the same model as
 * its one-line records. The fixtures were recorded from one moment of one slurmctld
 * (slurm-wlm 22.05.8, tests/slurm_json_check.sh with XP_SLURM_RECORD): sinfo --json and
 * squeue --json beside `scontrol -d show node -o` and squeue in XP_SLURM_SQUEUE_FORMAT. The
 * later data parser forms (v0.0.39, v0.0.40: {"set","infinite","number"} numbers, states as
 * lists of words, features as a list) are made from the recorded answer as Slurm's
 * src/plugins/data_parser/v0.0.40/parsers.c writes them; then hostile and cut answers. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakehost.h"
#include "jstore.h"
#include "model.h"
#include "model_json.h"
#include "qjob.h"
#include "slurm.h"
#include "slurm_json.h"
#include "suitelib.h"
#include "testlib.h"
#include "xp.h"

#define SINFO "slurm/sinfo.json"
#define SQUEUE "slurm/squeue.json"
#define NODES_TXT "slurm/json-moment-scontrol-show-node-d.txt"
#define JOBS_TXT "slurm/json-moment-squeue.txt"

/* The fixtures' times were printed in UTC (the recording machine's zone). */
static void utc(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
}

static void jobs_free(struct xp_qjob *j, size_t n)
{
	for (size_t i = 0; i < n; i++)
		xp_qjob_clear(&j[i]);
	free(j);
}

/* Slurm's JSON through the record readers, as xp_slurm_load and xp_slurm_load_queues take it. */
static int json_parse_nodes(const char *json, size_t len, const char *what, struct xp_cluster *c, struct xp_err *err)
{
	char *t;
	size_t tl;
	if (xp_slurm_json_nodes_text(json, len, what, &t, &tl, err) < 0)
		return -1;
	int rc = xp_slurm_parse_nodes(t, tl, what, c, err);
	free(t);
	return rc;
}

static int json_parse_jobs(const char *json, size_t len, const char *what, struct xp_qjob **out, size_t *n,
			   struct xp_err *err)
{
	char *t;
	size_t tl;
	*out = NULL;
	*n = 0;
	if (xp_slurm_json_jobs_text(json, len, what, &t, &tl, err) < 0)
		return -1;
	int rc = xp_slurm_parse_jobs(t, tl, what, out, n, err);
	free(t);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of text, sorted, joined again (squeue's order is its sort's; JSON's the job table's). */
static char *sorted_lines(const char *text)
{
	char *copy = xp_strdup(text), *save = NULL, *lines[256];
	size_t n = 0;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		ck_assert_uint_lt(n, 256);
		lines[n++] = l;
	}
	qsort(lines, n, sizeof *lines, cmp_str);
	size_t total = 1;
	for (size_t i = 0; i < n; i++)
		total += strlen(lines[i]) + 1;
	char *out = xp_malloc(total), *p = out;
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%s\n", lines[i]);
	*p = '\0';
	free(copy);
	return out;
}

static struct xp_cluster *text_nodes(void)
{
	size_t len;
	char *t = xp_fixture_text(NODES_TXT, &len);
	struct xp_cluster *c = xp_cluster_new();
	struct xp_err err = {{0}};
	ck_assert_msg(xp_slurm_parse_nodes(t, len, "scontrol", c, &err) == 0, "%s", err.msg);
	free(t);
	return c;
}

static struct xp_cluster *json_nodes(const char *json, size_t len)
{
	struct xp_cluster *c = xp_cluster_new();
	struct xp_err err = {{0}};
	ck_assert_msg(json_parse_nodes(json, len, "sinfo --json", c, &err) == 0, "%s", err.msg);
	return c;
}

/* The two clusters as xpool writes them (nodes, devices, in use, states, labels, warnings). */
static void same_cluster(const struct xp_cluster *a, const struct xp_cluster *b)
{
	json_t *ja = xp_cluster_to_json(a), *jb = xp_cluster_to_json(b);
	char *sa = json_dumps(ja, JSON_SORT_KEYS | JSON_INDENT(1)), *sb = json_dumps(jb, JSON_SORT_KEYS | JSON_INDENT(1));
	ck_assert_str_eq(sa, sb);
	free(sa);
	free(sb);
	json_decref(ja);
	json_decref(jb);
}

/* The jobs of both readers, matched by id and name, as the job store writes them. */
static void same_jobs(const char *json, size_t len)
{
	size_t tl;
	char *t = xp_fixture_text(JOBS_TXT, &tl);
	struct xp_qjob *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	struct xp_err err = {{0}};
	ck_assert_msg(xp_slurm_parse_jobs(t, tl, "squeue", &a, &na, &err) == 0, "%s", err.msg);
	ck_assert_msg(json_parse_jobs(json, len, "squeue --json", &b, &nb, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(na, 8); /* six rows, the held array "6_[1-3]" three jobs */
	ck_assert_uint_eq(nb, na);
	for (size_t i = 0; i < na; i++) {
		size_t k = nb;
		for (size_t m = 0; m < nb; m++)
			if (a[i].id == b[m].id && strcmp(a[i].name, b[m].name) == 0)
				k = m;
		ck_assert_msg(k < nb, "job %lld (%s) not read from JSON", (long long)a[i].id, a[i].name);
		json_t *ja = xp_jstore_job_json(&a[i], NULL), *jb = xp_jstore_job_json(&b[k], NULL);
		char *sa = json_dumps(ja, JSON_SORT_KEYS), *sb = json_dumps(jb, JSON_SORT_KEYS);
		ck_assert_str_eq(sa, sb);
		free(sa);
		free(sb);
		json_decref(ja);
		json_decref(jb);
	}
	jobs_free(a, na);
	jobs_free(b, nb);
	free(t);
}

START_TEST(recorded_nodes_as_records)
{
	/* sinfo --json (22.05, openapi v0.0.38) gives the nodes the records give: CPUs, memory,
	 * GRES as devices, GresUsed in use, "idle" with ["CLOUD","DRAIN","POWERED_DOWN"] as
	 * IDLE+CLOUD+DRAIN+POWERED_DOWN, features, partitions, the reason with its [user@time]. */
	utc();
	size_t len;
	char *j = xp_fixture_text(SINFO, &len);
	char *text;
	size_t tl;
	struct xp_err err = {{0}};
	ck_assert_msg(xp_slurm_json_nodes_text(j, len, "sinfo --json", &text, &tl, &err) == 0, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(text, "NodeName=gpu02 "));
	ck_assert_ptr_nonnull(strstr(text, " State=IDLE+CLOUD+DRAIN+POWERED_DOWN "));
	ck_assert_ptr_nonnull(strstr(text, " GresUsed=gpu:h100:4,npu:0,mlu:0 "));
	ck_assert_ptr_nonnull(strstr(text, " Reason=maintenance [root@2026-12-02T08:03:44]\n"));
	free(text);
	struct xp_cluster *a = text_nodes(), *b = json_nodes(j, len);
	ck_assert_uint_eq(b->n_nodes, 4);
	same_cluster(a, b);
	xp_cluster_free(a);
	xp_cluster_free(b);
	free(j);
}
END_TEST

START_TEST(recorded_jobs_as_squeue)
{
	/* squeue --json gives, line for line, what squeue printed at the same moment: ids (the
	 * held array's rest as 6_[1-3]), states, priorities, node counts, limits (UNLIMITED for
	 * null, 1:30:00), GRES, reasons (the description "ReqNodeNotAvail, UnavailableNodes:gpu02"),
	 * nodes, submit and start times in local time, N/A for none, the '|' in a name kept. */
	utc();
	size_t len, tl;
	char *j = xp_fixture_text(SQUEUE, &len);
	char *want = xp_fixture_text(JOBS_TXT, &tl);
	char *text;
	size_t n;
	struct xp_err err = {{0}};
	ck_assert_msg(xp_slurm_json_jobs_text(j, len, "squeue --json", &text, &n, &err) == 0, "%s", err.msg);
	char *sa = sorted_lines(want), *sb = sorted_lines(text);
	ck_assert_str_eq(sb, sa);
	free(sa);
	free(sb);
	free(text);
	free(want);
	same_jobs(j, len);
	free(j);
}
END_TEST

/* {"set","infinite","number"} as data_parser v0.0.39+ writes UINT32_NO_VAL and
 * TIMESTAMP_NO_VAL (parsers.c DUMP_FUNC(UINT32_NO_VAL)). */
static json_t *nv(json_t *v, int infinite_if_null)
{
	json_t *o = json_object();
	bool set = v && json_is_integer(v);
	bool inf = !set && infinite_if_null;
	json_object_set_new(o, "set", json_boolean(set));
	json_object_set_new(o, "infinite", json_boolean(inf));
	json_object_set_new(o, "number", json_integer(set ? json_integer_value(v) : 0));
	return o;
}

/* A string split at sep into a list (CSV_STRING, a flag array). */
static json_t *split(const char *s, const char *sep)
{
	json_t *l = json_array();
	char *c = xp_strdup(s ? s : ""), *save = NULL;
	for (char *w = strtok_r(c, sep, &save); w; w = strtok_r(NULL, sep, &save))
		json_array_append_new(l, json_string(w));
	free(c);
	return l;
}

/* The recorded 22.05 answers rewritten into v0.0.40's forms. */
static char *as_v0040(const char *path, int nodes)
{
	size_t len;
	char *t = xp_fixture_text(path, &len);
	json_t *root = json_loadb(t, len, 0, NULL);
	free(t);
	ck_assert_ptr_nonnull(root);
	json_t *l = json_object_get(root, nodes ? "nodes" : "jobs"), *o;
	size_t i;
	json_array_foreach(l, i, o) {
		if (nodes) {
			/* NODE: state a flag array, base first; features a CSV_STRING list;
			 * reason_changed_at a TIMESTAMP_NO_VAL. */
			char *up = xp_strdup(json_string_value(json_object_get(o, "state")));
			for (char *p = up; *p; p++)
				*p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
			json_t *st = json_array();
			json_array_append_new(st, json_string(up));
			json_array_extend(st, json_object_get(o, "state_flags"));
			free(up);
			json_object_set_new(o, "state", st);
			json_object_del(o, "state_flags");
			json_object_set_new(o, "features", split(json_string_value(json_object_get(o, "features")), ","));
			json_object_set_new(o, "reason_changed_at", nv(json_object_get(o, "reason_changed_at"), 0));
		} else {
			/* JOB_INFO: job_state a flag array (a configuring job RUNNING+CONFIGURING);
			 * UINT32_NO_VAL and TIMESTAMP_NO_VAL numbers as objects (time_limit's
			 * null was INFINITE). */
			const char *s = json_string_value(json_object_get(o, "job_state"));
			json_object_set_new(o, "job_state",
					    strcmp(s, "CONFIGURING") == 0 ? split("RUNNING,CONFIGURING", ",") : split(s, ","));
			json_object_set_new(o, "time_limit", nv(json_object_get(o, "time_limit"), 1));
			static const char *const keys[] = {"priority", "node_count", "array_job_id", "array_task_id",
							   "het_job_id", "het_job_offset", "submit_time", "start_time"};
			for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
				json_object_set_new(o, keys[k], nv(json_object_get(o, keys[k]), 0));
		}
	}
	char *out = json_dumps(root, JSON_INDENT(2));
	json_decref(root);
	return out;
}

START_TEST(later_parser_forms)
{
	/* The same moment in data_parser v0.0.40's forms reads to the same nodes and jobs. */
	utc();
	char *n = as_v0040(SINFO, 1), *j = as_v0040(SQUEUE, 0);
	ck_assert_ptr_nonnull(strstr(n, "\"state\": [\n        \"IDLE\",\n        \"CLOUD\""));
	ck_assert_ptr_nonnull(strstr(j, "\"time_limit\": {\n        \"set\": false,\n        \"infinite\": true"));
	ck_assert_ptr_nonnull(strstr(j, "\"RUNNING\",\n        \"CONFIGURING\""));
	struct xp_cluster *a = text_nodes(), *b = json_nodes(n, strlen(n));
	same_cluster(a, b);
	xp_cluster_free(a);
	xp_cluster_free(b);
	size_t tl;
	char *want = xp_fixture_text(JOBS_TXT, &tl), *text;
	struct xp_err err = {{0}};
	ck_assert_msg(xp_slurm_json_jobs_text(j, strlen(j), "squeue --json", &text, &tl, &err) == 0, "%s", err.msg);
	char *sa = sorted_lines(want), *sb = sorted_lines(text);
	ck_assert_str_eq(sb, sa);
	free(sa);
	free(sb);
	free(text);
	free(want);
	same_jobs(j, strlen(j));
	free(n);
	free(j);
}
END_TEST

/* The squeue line one job object makes (static); NULL with *msg set when refused. */
static const char *one_job(const char *fields, const char **msg)
{
	static char line[16384];
	static struct xp_err err;
	/* fields (",\"key\":value...") replace the base job's. */
	const char *base = "{\"job_id\":1,\"job_state\":\"PENDING\",\"partition\":\"p\",\"name\":\"n\","
			   "\"priority\":5,\"node_count\":1,\"time_limit\":30,\"submit_time\":0,\"start_time\":0}";
	json_t *job = json_loads(base, 0, NULL);
	char *extra = xp_asprintf("{%s}", fields + 1);
	json_t *x = json_loads(extra, 0, NULL);
	ck_assert_msg(job && x, "%s", extra);
	json_object_update(job, x);
	json_t *root = json_pack("{s:[o]}", "jobs", job);
	char *json = json_dumps(root, 0);
	json_decref(root);
	json_decref(x);
	free(extra);
	char *text = NULL;
	size_t tl;
	memset(&err, 0, sizeof err);
	int rc = xp_slurm_json_jobs_text(json, strlen(json), "squeue --json", &text, &tl, &err);
	free(json);
	*msg = err.msg;
	if (rc < 0)
		return NULL;
	snprintf(line, sizeof line, "%s", text);
	free(text);
	return line;
}

START_TEST(value_forms)
{
	/* Each value as squeue prints it: a task 7_2, a heterogeneous component 9+1, a limit in
	 * days, NOT_SET, infinite (object or "Infinity"), v0.0.40's state flags picked as
	 * job_state_string() does, a pending start time. */
	utc();
	const char *m;
	ck_assert_str_eq(one_job(",\"array_job_id\":7,\"array_task_id\":2", &m), "7_2|p|PENDING|5|1|30:00|N/A|None||N/A|N/A|1|(null)|(null)|(null)|n\n");
	ck_assert_str_eq(one_job(",\"het_job_id\":9,\"het_job_offset\":1", &m), "9+1|p|PENDING|5|1|30:00|N/A|None||N/A|N/A|1|(null)|(null)|(null)|n\n");
	ck_assert_str_eq(one_job(",\"time_limit\":{\"set\":true,\"infinite\":false,\"number\":2910}", &m),
			 "1|p|PENDING|5|1|2-00:30:00|N/A|None||N/A|N/A|1|(null)|(null)|(null)|n\n");
	ck_assert_str_eq(one_job(",\"time_limit\":{\"set\":false,\"infinite\":false,\"number\":0}", &m),
			 "1|p|PENDING|5|1|NOT_SET|N/A|None||N/A|N/A|1|(null)|(null)|(null)|n\n");
	ck_assert_str_eq(one_job(",\"time_limit\":\"Infinity\"", &m), "1|p|PENDING|5|1|UNLIMITED|N/A|None||N/A|N/A|1|(null)|(null)|(null)|n\n");
	ck_assert_str_eq(one_job(",\"job_state\":[\"PENDING\",\"REQUEUE_HOLD\"]", &m),
			 "1|p|REQUEUE_HOLD|5|1|30:00|N/A|None||N/A|N/A|1|(null)|(null)|(null)|n\n");
	ck_assert_str_eq(one_job(",\"job_state\":[\"RUNNING\",\"COMPLETING\"],\"nodes\":\"a[1-2]\"", &m),
			 "1|p|COMPLETING|5|1|30:00|N/A|None|a[1-2]|N/A|N/A|1|(null)|(null)|(null)|n\n");
	ck_assert_str_eq(one_job(",\"start_time\":{\"set\":true,\"infinite\":false,\"number\":1796196712},"
				 "\"state_reason\":\"Priority\"",
				 &m),
			 "1|p|PENDING|5|1|30:00|N/A|Priority||N/A|2026-12-02T07:31:52|1|(null)|(null)|(null)|n\n");
	ck_assert_str_eq(one_job(",\"priority\":{\"set\":false,\"infinite\":true,\"number\":0}", &m),
			 "1|p|PENDING|4294967295|1|30:00|N/A|None||N/A|N/A|1|(null)|(null)|(null)|n\n");
	/* A long node list is written whole (the record reader keeps 4096 bytes of it). */
	char *list = xp_malloc(6001);
	for (int i = 0; i < 1000; i++)
		memcpy(list + 6 * i, i ? ",n0000" : "n00000", 6);
	list[6000] = '\0';
	char *f = xp_asprintf(",\"nodes\":\"%s\"", list);
	const char *l = one_job(f, &m);
	ck_assert_ptr_nonnull(l);
	ck_assert_ptr_nonnull(strstr(l, list));
	free(f);
	free(list);
}
END_TEST

START_TEST(free_text_masked)
{
	/* A job's name and reason are anyone's words: a newline in them would end the record
	 * and a '|' in the reason shift the fields after it: masked, the record stays one line.
	 * The name is last: its '|' stays, as squeue prints it. */
	utc();
	const char *m;
	ck_assert_str_eq(one_job(",\"name\":\"a|b\\nc\\u001b[31m\",\"state_description\":\"x|y\\nz\"", &m),
			 "1|p|PENDING|5|1|30:00|N/A|x?y?z||N/A|N/A|1|(null)|(null)|(null)|a|b?c?[31m\n");
	/* Through the job reader the name and reason come out whole. */
	const char *json = "{\"jobs\":[{\"job_id\":3,\"job_state\":\"PENDING\",\"partition\":\"p\",\"name\":\"a|b\\nc\","
			   "\"state_reason\":\"Resources\",\"priority\":5,\"node_count\":1,\"time_limit\":30,"
			   "\"tres_per_node\":\"gres:gpu:2\",\"submit_time\":1796196709,\"start_time\":0}]}";
	struct xp_qjob *j = NULL;
	size_t n = 0;
	struct xp_err err = {{0}};
	ck_assert_msg(json_parse_jobs(json, strlen(json), "squeue --json", &j, &n, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(j[0].name, "a|b?c");
	ck_assert_int_eq(j[0].spec->groups[0].devices, 2);
	ck_assert_int_eq(j[0].submit, 1796196709);
	jobs_free(j, n);
	/* A node's reason too; a "Key=" in it adds no field. */
	const char *node = "{\"nodes\":[{\"name\":\"n1\",\"cpus\":4,\"state\":\"idle\",\"state_flags\":[],"
			   "\"gres\":\"gpu:a100:2\",\"gres_used\":\"gpu:a100:1\",\"reason\":\"bad\\nCPUTot=999 Gres=gpu:x:64\"}]}";
	char *text;
	size_t tl;
	ck_assert_msg(xp_slurm_json_nodes_text(node, strlen(node), "sinfo --json", &text, &tl, &err) == 0, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(text, " Reason=bad?CPUTot=999 Gres=gpu:x:64\n"));
	ck_assert_ptr_null(strchr(text, '\n') + 1 < text + tl ? strchr(strchr(text, '\n') + 1, '\n') : NULL);
	free(text);
	struct xp_cluster *c = json_nodes(node, strlen(node));
	ck_assert_int_eq(c->nodes[0]->pus, 4);
	ck_assert_uint_eq(c->nodes[0]->n_devices, 2);
	ck_assert_int_eq(c->nodes[0]->devices[0].n_allocs, 1);
	ck_assert_int_eq(c->nodes[0]->devices[1].n_allocs, 0);
	xp_cluster_free(c);
}
END_TEST

/* A JSON answer that must be refused; the message (static). */
static const char *refused_nodes(const char *json, size_t len)
{
	static struct xp_err err;
	memset(&err, 0, sizeof err);
	struct xp_cluster *c = xp_cluster_new();
	ck_assert_int_eq(json_parse_nodes(json, len, "sinfo --json", c, &err), -1);
	xp_cluster_free(c);
	ck_assert_msg(strncmp(err.msg, "sinfo --json: ", 14) == 0, "no command: %s", err.msg);
	return err.msg;
}

START_TEST(hostile_answers)
{
	/* Cut, deep, huge and spoiled answers: an error naming the command, the object's index
	 * and the field, never a crash or a record with fields of the caller's choosing. */
	size_t len;
	char *j = xp_fixture_text(SINFO, &len);
	ck_assert_ptr_nonnull(strstr(refused_nodes(j, len / 2), "not JSON"));
	free(j);
	char deep[400];
	memset(deep, '[', 100);
	memset(deep + 100, ']', 100);
	deep[200] = '\0';
	ck_assert_str_eq(refused_nodes(deep, 200), "sinfo --json: nested deeper than 64");
	ck_assert_str_eq(refused_nodes("[]", 2), "sinfo --json: the answer is not a JSON object");
	ck_assert_str_eq(refused_nodes("{\"nodes\":{}}", 12), "sinfo --json: no \"nodes\" list");
	ck_assert_ptr_nonnull(strstr(refused_nodes("{\"nodes\":[],\"nodes\":[]}", 23), "not JSON"));
	const char *e = "{\"errors\":[{\"error\":\"Unable to contact slurm controller\\u001b]0;x\"}],\"nodes\":[]}";
	ck_assert_str_eq(refused_nodes(e, strlen(e)), "sinfo --json: Slurm says: Unable to contact slurm controller?]0;x");
	const char *s = "{\"nodes\":[{\"name\":\"a\"},{\"name\":\"b c\"}]}";
	ck_assert_str_eq(refused_nodes(s, strlen(s)),
			 "sinfo --json: node 1: field name: holds a space, a control byte or '|'");
	s = "{\"nodes\":[{\"name\":\"a\",\"gres\":\"gpu:1 CPUTot=9\"}]}";
	ck_assert_str_eq(refused_nodes(s, strlen(s)),
			 "sinfo --json: node 0: field gres: holds a space, a control byte or '|'");
	s = "{\"nodes\":[{\"name\":\"a\",\"cpus\":-4}]}";
	ck_assert_str_eq(refused_nodes(s, strlen(s)), "sinfo --json: node 0: field cpus: a negative number");
	s = "{\"nodes\":[{\"name\":\"a\",\"cpus\":\"4\"}]}";
	ck_assert_str_eq(refused_nodes(s, strlen(s)), "sinfo --json: node 0: field cpus: not a whole number");
	s = "{\"nodes\":[{\"name\":\"a\",\"cpus\":{\"set\":true}}]}";
	ck_assert_str_eq(refused_nodes(s, strlen(s)), "sinfo --json: node 0: field cpus: set, but no \"number\"");
	s = "{\"nodes\":[{\"name\":\"a\",\"partitions\":[\"x\",3]}]}";
	ck_assert_str_eq(refused_nodes(s, strlen(s)), "sinfo --json: node 0: field partitions: a list item is not a string");
	s = "{\"nodes\":[{\"name\":\"a\\u0000b\"}]}";
	ck_assert_ptr_nonnull(strstr(refused_nodes(s, strlen(s)), "not JSON"));
	s = "{\"nodes\":[7]}";
	ck_assert_str_eq(refused_nodes(s, strlen(s)), "sinfo --json: node 0: not an object");
	s = "{\"nodes\":[{\"cpus\":4}]}";
	ck_assert_str_eq(refused_nodes(s, strlen(s)), "sinfo --json: node 0: field name: missing");
	/* What the record reader refuses is refused here too, with its words. */
	s = "{\"nodes\":[{\"name\":\"a\",\"gres\":\"gpu:h100:99999\"}]}";
	ck_assert_ptr_nonnull(strstr(refused_nodes(s, strlen(s)), "field Gres"));
	/* A string past 64 KiB. */
	size_t big = 70000;
	char *h = xp_malloc(big + 64);
	int k = sprintf(h, "{\"nodes\":[{\"name\":\"");
	memset(h + k, 'a', big);
	strcpy(h + k + big, "\"}]}");
	ck_assert_str_eq(refused_nodes(h, strlen(h)), "sinfo --json: node 0: field name: longer than 65536 bytes");
	free(h);
	/* Jobs: the field and the job's index. */
	const char *m;
	ck_assert_ptr_null(one_job(",\"partition\":\"a|b\"", &m));
	ck_assert_str_eq(m, "squeue --json: job 0: field partition: holds a space, a control byte or '|'");
	ck_assert_ptr_null(one_job(",\"job_id\":\"1\"", &m));
	ck_assert_str_eq(m, "squeue --json: job 0: field job_id: not a whole number");
	ck_assert_ptr_null(one_job(",\"job_id\":0", &m));
	ck_assert_str_eq(m, "squeue --json: job 0: field job_id: not a job id");
	ck_assert_ptr_null(one_job(",\"nodes\":\"a\\nb\"", &m));
	ck_assert_str_eq(m, "squeue --json: job 0: field nodes: holds a space, a control byte or '|'");
	ck_assert_ptr_null(one_job(",\"job_state\":[]", &m));
	ck_assert_str_eq(m, "squeue --json: job 0: field job_state: missing");
	ck_assert_ptr_null(one_job(",\"submit_time\":99999999999999", &m));
	ck_assert_str_eq(m, "squeue --json: job 0: field submit_time: not a time");
	ck_assert_ptr_null(one_job(",\"time_limit\":{\"set\":1}", &m));
	ck_assert_str_eq(m, "squeue --json: job 0: field time_limit: \"set\" or \"infinite\" is not true or false");
	/* A state the job reader does not know: its own error, naming the line (the job). */
	const char *bogus = "{\"jobs\":[{\"job_id\":1,\"job_state\":\"WEIRD\"}]}";
	struct xp_qjob *jj = NULL;
	size_t n = 0;
	struct xp_err err = {{0}};
	ck_assert_int_eq(json_parse_jobs(bogus, strlen(bogus), "squeue --json", &jj, &n, &err), -1);
	ck_assert_str_eq(err.msg, "squeue --json: line 1: field 3 (state): 'WEIRD' is not a Slurm job state");
	jobs_free(jj, n);
}
END_TEST

START_TEST(mode_switch)
{
	/* XPOOL_SLURM_JSON=0 reads the records without running any JSON command; 1 forces JSON
	 * (an error naming the command when none answers: none is on this PATH); else JSON
	 * where it answers, the records otherwise. */
	setenv("PATH", "/nonexistent", 1);
	char *t = NULL;
	size_t tl = 0;
	const char *what = "unchanged";
	struct xp_err err = {{0}};
	setenv("XPOOL_SLURM_JSON", "0", 1);
	ck_assert_int_eq(xp_slurm_json_mode(), 0);
	ck_assert_int_eq(xp_slurm_json_nodes("/nonexistent/slurm.conf", &t, &tl, &what, &err), 0);
	ck_assert_int_eq(xp_slurm_json_jobs("/nonexistent/slurm.conf", &t, &tl, &what, &err), 0);
	ck_assert_ptr_null(t);
	ck_assert_str_eq(what, "unchanged");
	setenv("XPOOL_SLURM_JSON", "1", 1);
	ck_assert_int_eq(xp_slurm_json_mode(), 1);
	ck_assert_int_eq(xp_slurm_json_nodes("/nonexistent/slurm.conf", &t, &tl, &what, &err), -1);
	ck_assert_msg(strstr(err.msg, "slurm: ") == err.msg && strstr(err.msg, "(sinfo --json)"), "%s", err.msg);
	ck_assert_int_eq(xp_slurm_json_jobs("/nonexistent/slurm.conf", &t, &tl, &what, &err), -1);
	ck_assert_msg(strstr(err.msg, "(squeue --json)") != NULL, "%s", err.msg);
	setenv("XPOOL_SLURM_JSON", "auto", 1);
	ck_assert_int_eq(xp_slurm_json_mode(), -1);
	ck_assert_int_eq(xp_slurm_json_nodes("/nonexistent/slurm.conf", &t, &tl, &what, &err), 0);
	ck_assert_int_eq(xp_slurm_json_jobs("/nonexistent/slurm.conf", &t, &tl, &what, &err), 0);
	ck_assert_ptr_null(t);
	unsetenv("XPOOL_SLURM_JSON");
	ck_assert_int_eq(xp_slurm_json_mode(), -1);
}
END_TEST

XP_DEFINE_SUITE(slurm_json, {"recorded", .tests = {recorded_nodes_as_records, recorded_jobs_as_squeue, later_parser_forms}},
		{"values", .tests = {value_forms, free_text_masked}},
		{"hostile", .tests = {hostile_answers, mode_switch}})
