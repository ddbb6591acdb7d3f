/* check_validate.c: the validation matrix: SHA-256, environment ids and prefixes, cases,
 * the layer rule, evidence logs, sync and staleness, the matrix, history, the placement
 * query, export/import, audit rows, the probe runner; then the `validate` command. */
#include <check.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checklib.h"
#include "model_json.h"
#include "store.h"
#include "suitelib.h"
#include "testlib.h"
#include "validate.h"

#define H100_OLD "NVIDIA:H100 80GB HBM3:535.54.03"
#define H100_NEW "NVIDIA:H100 80GB HBM3:550.54.14"
#define A100 "NVIDIA:A100-SXM4-80GB:535.54.03"

static char dir[128];

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/xpool-validate-%d", (int)getpid());
	mkdir(dir, 0700);
	setenv("XPOOL_ACTOR", "tester", 1);
}

static void teardown(void)
{
	xp_rm_rf(dir);
}

static struct xp_store *open_mem(void)
{
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_open(":memory:", &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	return s;
}

/* One integer from a query (-1 when no row). */
static long long q1(struct xp_store *s, const char *sql)
{
	sqlite3_stmt *st;
	ck_assert_int_eq(sqlite3_prepare_v2(s->db, sql, -1, &st, NULL), SQLITE_OK);
	long long v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
	sqlite3_finalize(st);
	return v;
}

/* Every row count that a refused change must leave alone, as one comparable string. */
static void counts(struct xp_store *s, char *buf, size_t len)
{
	snprintf(buf, len, "%lld/%lld/%lld/%lld", q1(s, "SELECT count(*) FROM environments"),
		 q1(s, "SELECT count(*) FROM cases"), q1(s, "SELECT count(*) FROM results"),
		 q1(s, "SELECT count(*) FROM audit"));
}

static void add_dev(struct xp_node *n, const char *vendor, const char *model, const char *driver, const char *fw)
{
	struct xp_device *d = xp_node_add_device(n);
	d->vendor = xp_strdup(vendor);
	d->model = xp_strdup(model);
	d->driver = xp_strdup(driver);
	d->firmware = xp_strdup(fw);
}

/* node7: two H100 with driver h100_driver; node8: one A100 with 535.54.03; node9: no accelerators. */
static struct xp_cluster *cluster(const char *h100_driver, int node7_state)
{
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *n = xp_node_new("node7");
	n->state = node7_state;
	add_dev(n, "NVIDIA", "H100 80GB HBM3", h100_driver, NULL);
	add_dev(n, "NVIDIA", "H100 80GB HBM3", h100_driver, NULL);
	xp_node_links_reset(n);
	xp_cluster_add(c, n);
	n = xp_node_new("node8");
	add_dev(n, "NVIDIA", "A100-SXM4-80GB", "535.54.03", NULL);
	xp_node_links_reset(n);
	xp_cluster_add(c, n);
	xp_cluster_add(c, xp_node_new("node9"));
	return c;
}

static void add_case(struct xp_store *s, const char *name, const char *const *entry)
{
	struct xp_err err = {{0}};
	struct xp_case c = {.name = (char *)name, .image = "registry/llm:1", .team = "infra", .entry = (char **)entry};
	ck_assert_msg(xp_validate_case_add(s, &c, &err) == 0, "%s", err.msg);
}

static void declare(struct xp_store *s, const char *vendor, const char *model, const char *driver)
{
	struct xp_err err = {{0}};
	struct xp_env e = {.vendor = (char *)vendor, .model = (char *)model, .driver = (char *)driver};
	ck_assert_msg(xp_validate_env_declare(s, &e, &err) >= 0, "%s", err.msg);
}

static void rec(struct xp_store *s, const char *env, const char *kase, int layer, int status, const char *node)
{
	struct xp_err err = {{0}};
	ck_assert_msg(xp_validate_record(s, env, kase, layer, status, NULL, NULL, node, &err) == 0, "%s", err.msg);
}

static int cell_status(struct xp_store *s, const char *env, const char *kase, int layer)
{
	struct xp_err err = {{0}};
	struct xp_evidence ev[XP_LAYER_COUNT];
	ck_assert_msg(xp_validate_cell(s, env, kase, ev, &err) == 0, "%s", err.msg);
	int st = ev[layer].status;
	xp_evidence_clear(ev, XP_LAYER_COUNT);
	return st;
}

static char *sha_of(const void *data, size_t len)
{
	struct xp_sha256 c;
	unsigned char d[32];
	static char hex[65];
	xp_sha256_init(&c);
	xp_sha256_update(&c, data, len);
	xp_sha256_final(&c, d);
	xp_sha256_hex(d, hex);
	return hex;
}

START_TEST(sha256_vectors)
{
	/* FIPS 180-4 examples (and the NIST one-million-'a' message). */
	ck_assert_str_eq(sha_of("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	ck_assert_str_eq(sha_of("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	ck_assert_str_eq(sha_of(two, strlen(two)), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	char *million = malloc(1000000);
	memset(million, 'a', 1000000);
	ck_assert_str_eq(sha_of(million, 1000000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	/* Streaming in odd pieces gives the same digest as one piece. */
	struct xp_sha256 c;
	unsigned char d[32];
	char hex[65];
	xp_sha256_init(&c);
	for (size_t off = 0, step = 1; off < 1000000; off += step, step = step * 7 % 1000 + 1)
		xp_sha256_update(&c, million + off, off + step > 1000000 ? 1000000 - off : step);
	xp_sha256_final(&c, d);
	xp_sha256_hex(d, hex);
	ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	/* Every length around the padding boundary: streaming matches one-shot. */
	for (size_t n = 50; n < 140; n++) {
		char one[65];
		snprintf(one, sizeof one, "%s", sha_of(million, n));
		xp_sha256_init(&c);
		xp_sha256_update(&c, million, n / 3);
		xp_sha256_update(&c, million, n - n / 3);
		xp_sha256_final(&c, d);
		xp_sha256_hex(d, hex);
		ck_assert_str_eq(hex, one);
	}
	/* A file, and files that cannot be read. */
	char *path = xp_tmpfile(million, 1000000);
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_sha256_file(path, hex, &err), 0);
	ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	unlink(path);
	ck_assert_int_eq(xp_sha256_file(path, hex, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, path));
	ck_assert_int_eq(xp_sha256_file("/", hex, &err), -1);
	free(path);
	free(million);
}
END_TEST

START_TEST(names_and_ids)
{
	ck_assert_str_eq(xp_layer_name(XP_LAYER_LAUNCHES), "launches");
	ck_assert_int_eq(xp_layer_parse("accepted"), XP_LAYER_ACCEPTED);
	ck_assert_int_eq(xp_layer_parse("sched"), XP_LAYER_SCHEDULABLE);
	ck_assert_int_eq(xp_layer_parse("2"), XP_LAYER_LAUNCHES);
	ck_assert_int_eq(xp_layer_parse("5"), -1);
	ck_assert_int_eq(xp_layer_parse("deployed"), -1);
	ck_assert_int_eq(xp_layer_parse(""), -1);
	ck_assert_int_eq(xp_vstatus_parse("stale"), XP_V_STALE);
	ck_assert_int_eq(xp_vstatus_parse("passed"), -1);
	ck_assert_str_eq(xp_vstatus_name(XP_V_UNTESTED), "untested");
	ck_assert_int_eq(xp_vstatus_mark(XP_V_PASS), 'P');
	ck_assert_int_eq(xp_vstatus_mark(XP_V_FAIL), 'F');
	ck_assert_int_eq(xp_vstatus_mark(XP_V_STALE), 'S');
	ck_assert_int_eq(xp_vstatus_mark(XP_V_UNTESTED), '.');

	char *id = xp_env_id("NVIDIA", "H100", "535.54.03", NULL, NULL);
	ck_assert_str_eq(id, "NVIDIA:H100:535.54.03");
	free(id);
	id = xp_env_id("NVIDIA", "H100", "535.54.03", "", "");
	ck_assert_str_eq(id, "NVIDIA:H100:535.54.03");
	free(id);
	id = xp_env_id("NVIDIA", "H100", "535.54.03", "96.00.5E", NULL);
	ck_assert_str_eq(id, "NVIDIA:H100:535.54.03:96.00.5E:");
	free(id);
	id = xp_env_id("Huawei", "Ascend910B", "24.1.rc2", NULL, "CANN 8.0");
	ck_assert_str_eq(id, "Huawei:Ascend910B:24.1.rc2::CANN 8.0");
	free(id);
}
END_TEST

START_TEST(env_declare_resolve)
{
	struct xp_store *s = open_mem();
	struct xp_err err = {{0}};
	declare(s, "NVIDIA", "H100", "535.54.03");
	declare(s, "NVIDIA", "H100", "550.54.14");
	declare(s, "AMD", "MI300X", "6.7.0");
	declare(s, "NVIDIA", "A100", "535");
	declare(s, "NVIDIA", "A100", "535.1");
	/* Declared twice: nothing changes, and it says so. */
	struct xp_env e = {.vendor = "AMD", .model = "MI300X", .driver = "6.7.0"};
	ck_assert_int_eq(xp_validate_env_declare(s, &e, &err), 1);
	ck_assert_int_eq(q1(s, "SELECT count(*) FROM audit WHERE action = 'env.declare'"), 5);
	/* Fields that are required or not printable. */
	struct xp_env bad = {.vendor = "", .model = "X", .driver = "1"};
	ck_assert_int_eq(xp_validate_env_declare(s, &bad, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "vendor"));
	struct xp_env ctl = {.vendor = "V", .model = "X\033[2J", .driver = "1"};
	ck_assert_int_eq(xp_validate_env_declare(s, &ctl, &err), -1);
	ck_assert_int_eq(q1(s, "SELECT count(*) FROM environments"), 5);

	char *id = xp_validate_env_resolve(s, "AMD", &err);
	ck_assert_str_eq(id, "AMD:MI300X:6.7.0");
	free(id);
	id = xp_validate_env_resolve(s, "NVIDIA:H100:550", &err);
	ck_assert_str_eq(id, "NVIDIA:H100:550.54.14");
	free(id);
	/* A whole id is never ambiguous, even when it begins a longer one. */
	id = xp_validate_env_resolve(s, "NVIDIA:A100:535", &err);
	ck_assert_str_eq(id, "NVIDIA:A100:535");
	free(id);
	ck_assert_ptr_null(xp_validate_env_resolve(s, "NVIDIA:H100:5", &err));
	xp_want_parts(err.msg, "ambiguous", "NVIDIA:H100:535.54.03", "NVIDIA:H100:550.54.14", NULL);
	ck_assert_ptr_null(xp_validate_env_resolve(s, "NVIDIA", &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "ambiguous"));
	ck_assert_ptr_null(xp_validate_env_resolve(s, "Intel", &err));
	ck_assert_str_eq(err.msg, "no environment matches Intel");
	/* LIKE wildcards in user text mean nothing. */
	ck_assert_ptr_null(xp_validate_env_resolve(s, "%", &err));
	ck_assert_ptr_null(xp_validate_env_resolve(s, "_MD", &err));

	struct xp_env *list;
	size_t n;
	ck_assert_int_eq(xp_validate_env_list(s, &list, &n, &err), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_str_eq(list[0].id, "AMD:MI300X:6.7.0");
	ck_assert(list[0].declared);
	ck_assert(list[0].first_seen > 0);
	ck_assert_int_eq(list[0].last_seen, 0);
	ck_assert_ptr_null(list[0].firmware);
	xp_env_list_free(list, n);
	xp_store_close(s);
}
END_TEST

START_TEST(case_add_rm_show)
{
	struct xp_store *s = open_mem();
	struct xp_err err = {{0}};
	const char *entry[] = {"printf", "a b", NULL};
	struct xp_case c = {.name = "llama-70b.inference", .image = "reg/llama:1", .model = "llama-70b",
			    .data = "v3", .acceptance = "tokens/s >= 900", .team = "ml", .entry = (char **)entry};
	ck_assert_msg(xp_validate_case_add(s, &c, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(xp_validate_case_add(s, &c, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "exists already"));
	const char *bad_names[] = {"", "-x", "a b", "a/b", "x\n", "0123456789012345678901234567890123456789012345678901234567890123456789"};
	for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
		struct xp_case b = {.name = (char *)bad_names[i]};
		ck_assert_int_eq(xp_validate_case_add(s, &b, &err), -1);
		ck_assert_ptr_nonnull(strstr(err.msg, "case name"));
	}
	const char *empty[] = {"", NULL};
	struct xp_case b = {.name = "e", .entry = (char **)empty};
	ck_assert_int_eq(xp_validate_case_add(s, &b, &err), -1);

	struct xp_case got;
	ck_assert_int_eq(xp_validate_case_get(s, "llama-70b.inference", &got, &err), 0);
	ck_assert_str_eq(got.image, "reg/llama:1");
	ck_assert_str_eq(got.model, "llama-70b");
	ck_assert_str_eq(got.data, "v3");
	ck_assert_str_eq(got.acceptance, "tokens/s >= 900");
	ck_assert_str_eq(got.team, "ml");
	ck_assert_str_eq(got.entry[0], "printf");
	ck_assert_str_eq(got.entry[1], "a b");
	ck_assert_ptr_null(got.entry[2]);
	ck_assert(got.created > 0);
	xp_case_clear(&got);
	ck_assert_int_eq(xp_validate_case_get(s, "nope", &got, &err), -1);
	ck_assert_str_eq(err.msg, "no case named nope");

	add_case(s, "bert", NULL);
	struct xp_case *list;
	size_t n;
	ck_assert_int_eq(xp_validate_case_list(s, &list, &n, &err), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(list[0].name, "bert");
	ck_assert_ptr_null(list[0].entry);
	xp_case_list_free(list, n);

	/* Removing a case removes its evidence, audited with what was there. */
	declare(s, "NVIDIA", "H100", "535");
	rec(s, "NVIDIA", "bert", XP_LAYER_DISCOVERED, XP_V_PASS, NULL);
	ck_assert_int_eq(xp_validate_case_rm(s, "bert", &err), 0);
	ck_assert_int_eq(q1(s, "SELECT count(*) FROM results"), 0);
	ck_assert_int_eq(xp_validate_case_rm(s, "bert", &err), -1);
	ck_assert_str_eq(err.msg, "no case named bert");
	struct xp_audit *a;
	ck_assert_int_eq(xp_audit_list(s, 0, 0, &a, &n, &err), 0);
	ck_assert_str_eq(a[n - 1].action, "case.rm");
	ck_assert_str_eq(a[n - 1].target, "bert");
	ck_assert_ptr_null(a[n - 1].after);
	json_t *j = json_loads(a[n - 1].before, 0, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(j, "name")), "bert");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "results")), 1);
	json_decref(j);
	ck_assert_str_eq(a[0].action, "case.add");
	ck_assert_ptr_null(a[0].before);
	j = json_loads(a[0].after, 0, NULL);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(j, "entry"), 1)), "a b");
	ck_assert_str_eq(json_string_value(json_object_get(j, "team")), "ml");
	json_decref(j);
	xp_audit_free(a, n);
	xp_store_close(s);
}
END_TEST

START_TEST(layer_rules)
{
	struct xp_store *s = open_mem();
	struct xp_err err = {{0}};
	declare(s, "NVIDIA", "H100", "535.54.03");
	add_case(s, "llama", NULL);
	const char *env = "NVIDIA:H100:535.54.03";
	char before[128], after[128];
	counts(s, before, sizeof before);
	ck_assert_int_eq(xp_validate_record(s, env, "llama", XP_LAYER_LAUNCHES, XP_V_PASS, NULL, NULL, NULL, &err), -1);
	ck_assert_str_eq(err.msg, "cannot record launches pass: discovered is untested");
	rec(s, env, "llama", XP_LAYER_DISCOVERED, XP_V_PASS, "node7");
	ck_assert_int_eq(xp_validate_record(s, env, "llama", XP_LAYER_LAUNCHES, XP_V_PASS, NULL, NULL, NULL, &err), -1);
	ck_assert_str_eq(err.msg, "cannot record launches pass: schedulable is untested");
	/* A fail may always be recorded, and then blocks the layers above it. */
	rec(s, env, "llama", XP_LAYER_ACCEPTED, XP_V_FAIL, NULL);
	rec(s, env, "llama", XP_LAYER_SCHEDULABLE, XP_V_FAIL, NULL);
	ck_assert_int_eq(xp_validate_record(s, env, "llama", XP_LAYER_LAUNCHES, XP_V_PASS, NULL, NULL, NULL, &err), -1);
	ck_assert_str_eq(err.msg, "cannot record launches pass: schedulable is fail");
	rec(s, env, "llama", XP_LAYER_SCHEDULABLE, XP_V_PASS, NULL);
	rec(s, "NVIDIA:H1", "llama", XP_LAYER_LAUNCHES, XP_V_PASS, NULL);
	ck_assert_int_eq(cell_status(s, env, "llama", XP_LAYER_LAUNCHES), XP_V_PASS);
	ck_assert_int_eq(cell_status(s, env, "llama", XP_LAYER_ACCEPTED), XP_V_FAIL);
	ck_assert_int_eq(cell_status(s, env, "llama", XP_LAYER_EXECUTES), XP_V_UNTESTED);
	/* A lower layer failing later does not rewrite the layers above (the matrix shows each),
	 * but the highest proven layer drops with it. */
	ck_assert_int_eq(xp_validate_highest(s, env, "llama"), XP_LAYER_LAUNCHES);
	rec(s, env, "llama", XP_LAYER_SCHEDULABLE, XP_V_FAIL, NULL);
	ck_assert_int_eq(cell_status(s, env, "llama", XP_LAYER_LAUNCHES), XP_V_PASS);
	ck_assert_int_eq(xp_validate_highest(s, env, "llama"), XP_LAYER_DISCOVERED);

	/* Refusals: nothing is written, not even an audit row. */
	counts(s, before, sizeof before);
	ck_assert_int_eq(xp_validate_record(s, env, "llama", XP_LAYER_ACCEPTED, XP_V_STALE, NULL, NULL, NULL, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "pass or fail"));
	ck_assert_int_eq(xp_validate_record(s, env, "llama", XP_LAYER_ACCEPTED, XP_V_UNTESTED, NULL, NULL, NULL, &err), -1);
	ck_assert_int_eq(xp_validate_record(s, env, "llama", 5, XP_V_FAIL, NULL, NULL, NULL, &err), -1);
	ck_assert_str_eq(err.msg, "unknown layer 5");
	ck_assert_int_eq(xp_validate_record(s, env, "bert", 0, XP_V_FAIL, NULL, NULL, NULL, &err), -1);
	ck_assert_str_eq(err.msg, "no case named bert");
	ck_assert_int_eq(xp_validate_record(s, "Intel", "llama", 0, XP_V_FAIL, NULL, NULL, NULL, &err), -1);
	ck_assert_str_eq(err.msg, "no environment matches Intel");
	ck_assert_int_eq(xp_validate_record(s, env, "llama", 0, XP_V_FAIL, "two\nlines", NULL, NULL, &err), -1);
	counts(s, after, sizeof after);
	ck_assert_str_eq(before, after);

	/* Inside a caller's transaction a refusal leaves the caller's batch whole. */
	ck_assert_int_eq(xp_store_begin(s, &err), 0);
	rec(s, env, "llama", XP_LAYER_EXECUTES, XP_V_FAIL, NULL);
	ck_assert_int_eq(xp_validate_record(s, env, "llama", XP_LAYER_ACCEPTED, XP_V_PASS, NULL, NULL, NULL, &err), -1);
	ck_assert_int_eq(xp_store_commit(s, &err), 0);
	ck_assert_int_eq(cell_status(s, env, "llama", XP_LAYER_EXECUTES), XP_V_FAIL);
	xp_store_close(s);
}
END_TEST

START_TEST(record_with_log)
{
	struct xp_store *s = open_mem();
	struct xp_err err = {{0}};
	declare(s, "NVIDIA", "H100", "535.54.03");
	add_case(s, "llama", NULL);
	char *log = xp_tmpfile("hello\n", 6);
	ck_assert_msg(xp_validate_record(s, "NVIDIA", "llama", 0, XP_V_PASS, "smoke ok", log, "node7", &err) == 0, "%s",
		      err.msg);
	struct xp_evidence ev[XP_LAYER_COUNT];
	ck_assert_int_eq(xp_validate_cell(s, "NVIDIA", "llama", ev, &err), 0);
	ck_assert_str_eq(ev[0].log_sha256, "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03");
	char hex[65];
	ck_assert_int_eq(xp_sha256_file(log, hex, &err), 0);
	ck_assert_str_eq(ev[0].log_sha256, hex);
	ck_assert_str_eq(ev[0].log_path, log);
	ck_assert_str_eq(ev[0].note, "smoke ok");
	ck_assert_str_eq(ev[0].node, "node7");
	ck_assert_str_eq(ev[0].actor, "tester");
	ck_assert_str_eq(ev[0].driver, "535.54.03");
	ck_assert_int_eq(ev[0].status, XP_V_PASS);
	ck_assert(ev[0].time > 0 && ev[0].id > 0);
	xp_evidence_clear(ev, XP_LAYER_COUNT);

	/* A log that cannot be read: an error naming it, and nothing written. */
	char before[128], after[128];
	counts(s, before, sizeof before);
	unlink(log);
	ck_assert_int_eq(xp_validate_record(s, "NVIDIA", "llama", 1, XP_V_PASS, NULL, log, NULL, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, log));
	ck_assert_ptr_nonnull(strstr(err.msg, "log file"));
	ck_assert_int_eq(xp_validate_record(s, "NVIDIA", "llama", 1, XP_V_PASS, NULL, dir, NULL, &err), -1);
	ck_assert_int_eq(xp_validate_record(s, "NVIDIA", "llama", 1, XP_V_PASS, NULL, "/dev/null", NULL, &err), -1);
	ck_assert_str_eq(err.msg, "log file: /dev/null: not a regular file");
	counts(s, after, sizeof after);
	ck_assert_str_eq(before, after);
	free(log);
	xp_store_close(s);
}
END_TEST

/* Ids as people read them: an empty firmware or runtime field is "-", and that form resolves. */
START_TEST(env_id_shown)
{
	const char *pairs[][2] = {
		{"NVIDIA:H100:535.54.03", "NVIDIA:H100:535.54.03"},
		{"NVIDIA:H100:535.54.03:96.00.5E:", "NVIDIA:H100:535.54.03:96.00.5E:-"},
		{"AMD:MI300X:6.7::ROCm 6.2", "AMD:MI300X:6.7:-:ROCm 6.2"},
		{"AMD:MI300X:6.7:113-D:ROCm 6.2", "AMD:MI300X:6.7:113-D:ROCm 6.2"},
	};
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		char *s = xp_env_id_show(pairs[i][0]);
		ck_assert_str_eq(s, pairs[i][1]);
		free(s);
	}
	struct xp_store *s = open_mem();
	struct xp_env e = {.vendor = "AMD", .model = "MI300X", .driver = "6.7", .runtime = "ROCm 6.2"};
	struct xp_err err = {{0}};
	ck_assert_int_ge(xp_validate_env_declare(s, &e, &err), 0);
	char *id = xp_validate_env_resolve(s, "AMD:MI300X:6.7:-:ROCm 6.2", &err);
	ck_assert_msg(id != NULL, "%s", err.msg);
	ck_assert_str_eq(id, "AMD:MI300X:6.7::ROCm 6.2");
	free(id);
	xp_store_close(s);
}
END_TEST

/* Evidence on node7, a driver update there, and the cells that rested on it turn stale. */
START_TEST(sync_and_stale)
{
	struct xp_store *s = open_mem();
	struct xp_err err = {{0}};
	add_case(s, "llama", NULL);
	add_case(s, "resnet", NULL);
	struct xp_cluster *c1 = cluster("535.54.03", XP_NODE_UP);
	ck_assert_msg(xp_validate_sync(s, c1, 1000, 0, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(q1(s, "SELECT count(*) FROM environments"), 2);
	ck_assert_int_eq(q1(s, "SELECT count(*) FROM results"), 4);
	ck_assert_int_eq(cell_status(s, H100_OLD, "llama", XP_LAYER_DISCOVERED), XP_V_PASS);
	ck_assert_int_eq(q1(s, "SELECT count(*) FROM results WHERE actor = 'discovery' AND node = 'node7' AND "
			       "driver = '535.54.03' AND env = '" H100_OLD "'"),
			 2);
	ck_assert_int_eq(q1(s, "SELECT count(*) FROM audit WHERE action = 'env.discover'"), 2);
	ck_assert_int_eq(q1(s, "SELECT count(*) FROM audit WHERE action = 'validate.discover'"), 2);
	rec(s, H100_OLD, "llama", XP_LAYER_SCHEDULABLE, XP_V_PASS, "node7");
	rec(s, H100_OLD, "llama", XP_LAYER_LAUNCHES, XP_V_PASS, "node7");
	rec(s, H100_OLD, "resnet", XP_LAYER_SCHEDULABLE, XP_V_FAIL, "node7");
	rec(s, A100, "llama", XP_LAYER_SCHEDULABLE, XP_V_PASS, "node8");
	/* Evidence from a node that is not in the cluster is left alone. */
	rec(s, H100_OLD, "resnet", XP_LAYER_SCHEDULABLE, XP_V_PASS, "elsewhere");

	/* Nothing changed: a second sync writes nothing. */
	long long rows = q1(s, "SELECT count(*) FROM results"), audits = q1(s, "SELECT count(*) FROM audit");
	ck_assert_int_eq(xp_validate_sync(s, c1, 2000, 0, &err), 0);
	ck_assert_int_eq(q1(s, "SELECT count(*) FROM results"), rows);
	ck_assert_int_eq(q1(s, "SELECT count(*) FROM audit"), audits);
	ck_assert_int_eq(q1(s, "SELECT last_seen FROM environments WHERE id = '" H100_OLD "'"), 1000);

	/* node7 unreachable: it proves nothing either way. */
	struct xp_cluster *c3 = cluster("550.54.14", XP_NODE_UNREACHABLE);
	ck_assert_int_eq(xp_validate_sync(s, c3, 2500, 0, &err), 0);
	ck_assert_int_eq(q1(s, "SELECT count(*) FROM results"), rows);
	xp_cluster_free(c3);

	struct xp_cluster *c2 = cluster("550.54.14", XP_NODE_UP);
	ck_assert_msg(xp_validate_sync(s, c2, 3000, 0, &err) == 0, "%s", err.msg);
	/* The evidence on node7: discovered (both cases), llama's schedulable and launches. */
	ck_assert_int_eq(q1(s, "SELECT count(*) FROM results WHERE status = 'stale'"), 4);
	ck_assert_int_eq(cell_status(s, H100_OLD, "llama", XP_LAYER_DISCOVERED), XP_V_STALE);
	ck_assert_int_eq(cell_status(s, H100_OLD, "llama", XP_LAYER_SCHEDULABLE), XP_V_STALE);
	ck_assert_int_eq(cell_status(s, H100_OLD, "llama", XP_LAYER_LAUNCHES), XP_V_STALE);
	ck_assert_int_eq(cell_status(s, H100_OLD, "resnet", XP_LAYER_DISCOVERED), XP_V_STALE);
	ck_assert_int_eq(cell_status(s, H100_OLD, "resnet", XP_LAYER_SCHEDULABLE), XP_V_PASS);
	ck_assert_int_eq(cell_status(s, A100, "llama", XP_LAYER_SCHEDULABLE), XP_V_PASS);
	ck_assert_int_eq(cell_status(s, H100_NEW, "llama", XP_LAYER_DISCOVERED), XP_V_PASS);
	ck_assert_int_eq(xp_validate_highest(s, H100_OLD, "llama"), -1);
	ck_assert_int_eq(xp_validate_highest(s, H100_NEW, "llama"), XP_LAYER_DISCOVERED);
	ck_assert_int_eq(xp_validate_highest(s, A100, NULL), XP_LAYER_SCHEDULABLE);
	struct xp_evidence ev[XP_LAYER_COUNT];
	ck_assert_int_eq(xp_validate_cell(s, H100_OLD, "llama", ev, &err), 0);
	ck_assert_str_eq(ev[XP_LAYER_LAUNCHES].note, "driver 535.54.03 -> 550.54.14 on node7");
	ck_assert_str_eq(ev[XP_LAYER_LAUNCHES].driver, "550.54.14");
	ck_assert_str_eq(ev[XP_LAYER_LAUNCHES].node, "node7");
	ck_assert_str_eq(ev[XP_LAYER_LAUNCHES].actor, "discovery");
	ck_assert_int_eq(ev[XP_LAYER_LAUNCHES].time, 3000);
	xp_evidence_clear(ev, XP_LAYER_COUNT);

	/* One audit row per stale layer, naming the change, with the pass it replaced. */
	struct xp_audit *a;
	size_t n, stale = 0;
	ck_assert_int_eq(xp_audit_list(s, 0, 0, &a, &n, &err), 0);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(a[i].action, "validate.stale") != 0)
			continue;
		stale++;
		ck_assert_ptr_nonnull(strstr(a[i].after, "535.54.03 -> 550.54.14"));
		ck_assert_ptr_nonnull(strstr(a[i].target, H100_OLD "/"));
		json_t *b = json_loads(a[i].before, 0, NULL);
		ck_assert_str_eq(json_string_value(json_object_get(b, "status")), "pass");
		ck_assert_str_eq(json_string_value(json_object_get(b, "driver")), "535.54.03");
		json_decref(b);
	}
	ck_assert_uint_eq(stale, 4);
	xp_audit_free(a, n);

	/* Stale is settled: syncing again adds nothing. */
	rows = q1(s, "SELECT count(*) FROM results");
	ck_assert_int_eq(xp_validate_sync(s, c2, 4000, 0, &err), 0);
	ck_assert_int_eq(q1(s, "SELECT count(*) FROM results"), rows);

	/* A firmware change is staleness too, and is named as such. */
	c2->nodes[1]->devices[0].firmware = xp_strdup("92.00.45");
	ck_assert_int_eq(xp_validate_sync(s, c2, 5000, 0, &err), 0);
	ck_assert_int_eq(cell_status(s, A100, "llama", XP_LAYER_SCHEDULABLE), XP_V_STALE);
	ck_assert_int_eq(xp_validate_cell(s, A100, "llama", ev, &err), 0);
	ck_assert_str_eq(ev[XP_LAYER_SCHEDULABLE].note, "firmware unknown -> 92.00.45 on node8");
	xp_evidence_clear(ev, XP_LAYER_COUNT);
	xp_cluster_free(c1);
	xp_cluster_free(c2);
	xp_store_close(s);
}
END_TEST

START_TEST(matrix_contents)
{
	struct xp_store *s = open_mem();
	struct xp_err err = {{0}};
	struct xp_matrix m;
	ck_assert_int_eq(xp_validate_matrix(s, &m, &err), 0);
	ck_assert_uint_eq(m.n_envs, 0);
	xp_matrix_free(&m);
	add_case(s, "resnet", NULL);
	add_case(s, "llama", NULL);
	add_case(s, "bert", NULL);
	declare(s, "NVIDIA", "H100", "535");
	declare(s, "AMD", "MI300X", "6.7");
	rec(s, "NVIDIA", "llama", 0, XP_V_PASS, "n1");
	rec(s, "NVIDIA", "llama", 1, XP_V_PASS, "n1");
	rec(s, "NVIDIA", "llama", 2, XP_V_FAIL, "n1");
	rec(s, "AMD", "bert", 0, XP_V_FAIL, NULL);
	rec(s, "AMD", "bert", 0, XP_V_PASS, "n2");
	ck_assert_int_eq(xp_validate_matrix(s, &m, &err), 0);
	ck_assert_uint_eq(m.n_envs, 2);
	ck_assert_uint_eq(m.n_cases, 3);
	ck_assert_str_eq(m.envs[0].id, "AMD:MI300X:6.7");
	ck_assert_str_eq(m.envs[1].id, "NVIDIA:H100:535");
	ck_assert_str_eq(m.cases[0].name, "bert");
	ck_assert_str_eq(m.cases[1].name, "llama");
	ck_assert_str_eq(m.cases[2].name, "resnet");
	for (size_t i = 0; i < 6; i++) {
		ck_assert_uint_eq(m.cells[i].env, i / 3);
		ck_assert_uint_eq(m.cells[i].kase, i % 3);
		for (int l = 0; l < XP_LAYER_COUNT; l++)
			ck_assert_int_eq(m.cells[i].layers[l].layer, l);
	}
	const struct xp_cell *c = &m.cells[0 * 3 + 0]; /* AMD x bert: the latest record wins */
	ck_assert_int_eq(c->layers[0].status, XP_V_PASS);
	ck_assert_str_eq(c->layers[0].node, "n2");
	c = &m.cells[1 * 3 + 1]; /* NVIDIA x llama */
	ck_assert_int_eq(c->layers[0].status, XP_V_PASS);
	ck_assert_int_eq(c->layers[1].status, XP_V_PASS);
	ck_assert_int_eq(c->layers[2].status, XP_V_FAIL);
	ck_assert_int_eq(c->layers[3].status, XP_V_UNTESTED);
	ck_assert_ptr_null(c->layers[3].actor);
	ck_assert_str_eq(c->layers[2].actor, "tester");
	ck_assert_int_eq(m.cells[1 * 3 + 2].layers[0].status, XP_V_UNTESTED);

	json_t *j = xp_matrix_to_json(&m);
	ck_assert_int_eq(json_array_size(json_object_get(j, "environments")), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(j, "environments"), 1), "id")),
			 "NVIDIA:H100:535");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(j, "cases"), 0), "name")),
			 "bert");
	json_t *cells = json_object_get(j, "cells");
	ck_assert_int_eq(json_array_size(cells), 6);
	json_t *cell = json_array_get(cells, 4);
	ck_assert_str_eq(json_string_value(json_object_get(cell, "env")), "NVIDIA:H100:535");
	ck_assert_str_eq(json_string_value(json_object_get(cell, "case")), "llama");
	json_t *layers = json_object_get(cell, "layers");
	const char *names[] = {"discovered", "schedulable", "launches", "executes", "accepted"};
	const char *want[] = {"pass", "pass", "fail", "untested", "untested"};
	for (int l = 0; l < 5; l++) {
		json_t *e = json_object_get(layers, names[l]);
		ck_assert_str_eq(json_string_value(json_object_get(e, "status")), want[l]);
		const char *keys[] = {"status", "time", "actor", "note", "log_sha256", "node"};
		for (size_t k = 0; k < 6; k++)
			ck_assert_msg(json_object_get(e, keys[k]) != NULL, "no %s", keys[k]);
		ck_assert_uint_eq(json_object_size(e), 6);
	}
	ck_assert(json_is_null(json_object_get(json_object_get(layers, "executes"), "time")));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(layers, "launches"), "node")), "n1");
	json_decref(j);
	xp_matrix_free(&m);
	xp_store_close(s);
}
END_TEST

START_TEST(highest_and_history)
{
	struct xp_store *s = open_mem();
	struct xp_err err = {{0}};
	declare(s, "NVIDIA", "H100", "535");
	declare(s, "AMD", "MI300X", "6.7");
	add_case(s, "llama", NULL);
	add_case(s, "bert", NULL);
	const char *env = "NVIDIA:H100:535";
	ck_assert_int_eq(xp_validate_highest(s, env, "llama"), -1);
	ck_assert_int_eq(xp_validate_highest(s, env, NULL), -1);
	ck_assert_int_eq(xp_validate_highest(s, "no-such-env", NULL), -1);
	for (int l = 0; l <= XP_LAYER_EXECUTES; l++)
		rec(s, env, "llama", l, XP_V_PASS, NULL);
	rec(s, env, "bert", 0, XP_V_PASS, NULL);
	rec(s, env, "bert", 1, XP_V_FAIL, NULL);
	ck_assert_int_eq(xp_validate_highest(s, env, "llama"), XP_LAYER_EXECUTES);
	ck_assert_int_eq(xp_validate_highest(s, env, "bert"), XP_LAYER_DISCOVERED);
	ck_assert_int_eq(xp_validate_highest(s, env, NULL), XP_LAYER_EXECUTES);
	ck_assert_int_eq(xp_validate_highest(s, "AMD:MI300X:6.7", NULL), -1);
	ck_assert_int_eq(xp_validate_highest(s, env, "missing"), -1);
	rec(s, env, "llama", XP_LAYER_ACCEPTED, XP_V_PASS, NULL);
	ck_assert_int_eq(xp_validate_highest(s, env, NULL), XP_LAYER_ACCEPTED);

	struct xp_evidence *rows;
	size_t n;
	ck_assert_int_eq(xp_validate_history(s, "NVIDIA", "bert", &rows, &n, &err), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(rows[0].layer, 0);
	ck_assert_int_eq(rows[0].status, XP_V_PASS);
	ck_assert_int_eq(rows[1].layer, 1);
	ck_assert_int_eq(rows[1].status, XP_V_FAIL);
	ck_assert(rows[0].id < rows[1].id);
	xp_evidence_free(rows, n);
	ck_assert_int_eq(xp_validate_history(s, "NVIDIA", "llama", &rows, &n, &err), 0);
	ck_assert_uint_eq(n, 5);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(rows[i].layer, (int)i);
	xp_evidence_free(rows, n);
	ck_assert_int_eq(xp_validate_history(s, "AMD", "llama", &rows, &n, &err), 0);
	ck_assert_uint_eq(n, 0);
	xp_evidence_free(rows, n);
	ck_assert_int_eq(xp_validate_history(s, "NVIDIA", "gpt", &rows, &n, &err), -1);
	ck_assert_str_eq(err.msg, "no case named gpt");
	ck_assert_int_eq(xp_validate_history(s, "Intel", "llama", &rows, &n, &err), -1);
	xp_store_close(s);
}
END_TEST

static char *export_text(struct xp_store *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct xp_err err = {{0}};
	ck_assert_msg(xp_validate_export(s, f, &err) == 0, "%s", err.msg);
	fclose(f);
	return buf;
}

/* A store with a bit of everything an export holds. */
static void fill(struct xp_store *s)
{
	struct xp_err err = {{0}};
	const char *entry[] = {"printf", "hello world", NULL};
	add_case(s, "llama", entry);
	add_case(s, "resnet", NULL);
	struct xp_env e = {.vendor = "Huawei", .model = "Ascend910B", .driver = "24.1", .firmware = "7.5",
			   .runtime = "CANN 8.0"};
	ck_assert_int_eq(xp_validate_env_declare(s, &e, &err), 0);
	struct xp_cluster *c = cluster("535.54.03", XP_NODE_UP);
	ck_assert_int_eq(xp_validate_sync(s, c, 1000, 0, &err), 0);
	char *log = xp_tmpfile("log text\n", 9);
	ck_assert_int_eq(xp_validate_record(s, H100_OLD, "llama", 1, XP_V_PASS, "note, with \"quotes\"", log, "node7",
					    &err), 0);
	rec(s, "Huawei", "resnet", 0, XP_V_FAIL, NULL);
	xp_cluster_free(c);
	c = cluster("550.54.14", XP_NODE_UP);
	ck_assert_int_eq(xp_validate_sync(s, c, 2000, 0, &err), 0);
	xp_cluster_free(c);
	unlink(log);
	free(log);
}

START_TEST(export_import_roundtrip)
{
	struct xp_err err = {{0}};
	char path[256];
	snprintf(path, sizeof path, "%s/a.db", dir);
	struct xp_store *s = xp_store_open(path, &err);
	ck_assert_msg(s != NULL, "%s", err.msg);
	fill(s);
	char *one = export_text(s);
	json_t *doc = json_loads(one, 0, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(doc, "schema")), "xpool.validation/v1");
	ck_assert_int_eq(json_array_size(json_object_get(doc, "environments")), 4);
	ck_assert_int_eq(json_array_size(json_object_get(doc, "cases")), 2);
	ck_assert_int_eq(json_array_size(json_object_get(doc, "results")), q1(s, "SELECT count(*) FROM results"));
	json_decref(doc);
	xp_store_close(s);

	struct xp_store *t = open_mem();
	ck_assert_msg(xp_validate_import(t, one, strlen(one), "one.json", &err) == 0, "%s", err.msg);
	char *two = export_text(t);
	ck_assert_str_eq(one, two);
	ck_assert_int_eq(q1(t, "SELECT count(*) FROM audit WHERE action = 'validate.import' AND target = 'one.json'"), 1);
	/* Once more into the same store: the cases exist now, so it is refused whole. */
	char before[128], after[128];
	counts(t, before, sizeof before);
	ck_assert_int_eq(xp_validate_import(t, one, strlen(one), "one.json", &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "one.json: $.cases[0].name: case llama exists already"));
	counts(t, after, sizeof after);
	ck_assert_str_eq(before, after);
	xp_store_close(t);
	free(one);
	free(two);
}
END_TEST

START_TEST(import_errors)
{
	struct xp_store *s = open_mem();
	struct xp_err err = {{0}};
	declare(s, "NVIDIA", "H100", "535");
	add_case(s, "llama", NULL);
	rec(s, "NVIDIA", "llama", 0, XP_V_PASS, NULL);
	struct {
		const char *doc, *want;
	} bad[] = {
		{"{", "bad.json:1:"},
		{"[]", "$: expected an object"},
		{"{\"schema\": \"xpool.validation/v2\"}", "$.schema: expected \"xpool.validation/v1\", not \"xpool.validation/v2\""},
		{"{\"environments\": []}", "$.schema"},
		{"{\"schema\": \"xpool.validation/v1\", \"environments\": {}}", "$.environments: expected an array"},
		{"{\"schema\": \"xpool.validation/v1\", \"environments\": [{\"id\": \"a:b:c\", \"vendor\": 5}]}",
		 "$.environments[0].vendor: expected a string"},
		{"{\"schema\": \"xpool.validation/v1\", \"environments\": [{\"id\": \"a:b:d\", \"vendor\": \"a\", "
		 "\"model\": \"b\", \"driver\": \"c\"}]}",
		 "$.environments[0].id: a:b:d does not match its fields (a:b:c)"},
		{"{\"schema\": \"xpool.validation/v1\", \"cases\": [{\"name\": \"new\", \"entry\": [\"ls\", 3]}]}",
		 "$.cases[0].entry[1]: expected a string"},
		{"{\"schema\": \"xpool.validation/v1\", \"cases\": [{\"name\": \"new\", \"created\": \"today\"}]}",
		 "$.cases[0].created: expected seconds"},
		{"{\"schema\": \"xpool.validation/v1\", \"cases\": [{\"name\": \"a\"}, {\"name\": \"a\"}]}",
		 "$.cases[1].name: a is listed twice"},
		{"{\"schema\": \"xpool.validation/v1\", \"cases\": [{\"name\": \"llama\"}]}",
		 "$.cases[0].name: case llama exists already"},
		/* Good environments and cases first, then a bad result: none of it stays. */
		{"{\"schema\": \"xpool.validation/v1\", \"environments\": [{\"id\": \"a:b:c\", \"vendor\": \"a\", "
		 "\"model\": \"b\", \"driver\": \"c\"}], \"cases\": [{\"name\": \"new\"}], \"results\": ["
		 "{\"env\": \"a:b:c\", \"case\": \"new\", \"layer\": \"discovered\", \"status\": \"pass\", \"time\": 5, "
		 "\"actor\": \"x\"}, {\"env\": \"a:b:c\", \"case\": \"gpt\", \"layer\": \"discovered\", \"status\": "
		 "\"pass\", \"time\": 5, \"actor\": \"x\"}]}",
		 "$.results[1].case: no case gpt"},
		{"{\"schema\": \"xpool.validation/v1\", \"results\": [{\"env\": \"Intel:X:1\", \"case\": \"llama\", "
		 "\"layer\": \"discovered\", \"status\": \"pass\", \"time\": 5, \"actor\": \"x\"}]}",
		 "$.results[0].env: no environment Intel:X:1"},
		{"{\"schema\": \"xpool.validation/v1\", \"results\": [{\"env\": \"NVIDIA:H100:535\", \"case\": \"llama\", "
		 "\"layer\": \"deployed\", \"status\": \"pass\", \"time\": 5, \"actor\": \"x\"}]}",
		 "$.results[0].layer: unknown layer deployed"},
		{"{\"schema\": \"xpool.validation/v1\", \"results\": [{\"env\": \"NVIDIA:H100:535\", \"case\": \"llama\", "
		 "\"layer\": 1, \"status\": \"pass\", \"time\": 5, \"actor\": \"x\"}]}",
		 "$.results[0].layer: expected a string"},
		{"{\"schema\": \"xpool.validation/v1\", \"results\": [{\"env\": \"NVIDIA:H100:535\", \"case\": \"llama\", "
		 "\"layer\": \"accepted\", \"status\": \"untested\", \"time\": 5, \"actor\": \"x\"}]}",
		 "$.results[0].status: untested is not pass, fail or stale"},
		{"{\"schema\": \"xpool.validation/v1\", \"results\": [{\"env\": \"NVIDIA:H100:535\", \"case\": \"llama\", "
		 "\"layer\": \"accepted\", \"status\": \"pass\", \"time\": \"yesterday\", \"actor\": \"x\"}]}",
		 "$.results[0].time: expected seconds"},
		{"{\"schema\": \"xpool.validation/v1\", \"results\": [7]}", "$.results[0]: expected an object"},
		{"{\"schema\": \"xpool.validation/v1\", \"results\": [{\"env\": \"NVIDIA:H100:535\", \"case\": \"llama\", "
		 "\"layer\": \"accepted\", \"status\": \"pass\", \"time\": 5, \"actor\": \"x\", \"log_sha256\": \"ABC\"}]}",
		 "$.results[0].log_sha256: expected 64 hex digits"},
	};
	char before[128], after[128];
	counts(s, before, sizeof before);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_int_eq(xp_validate_import(s, bad[i].doc, strlen(bad[i].doc), "bad.json", &err), -1);
		ck_assert_msg(strstr(err.msg, bad[i].want) != NULL, "case %zu: '%s' lacks '%s'", i, err.msg, bad[i].want);
		ck_assert_msg(strncmp(err.msg, "bad.json", 8) == 0, "%s", err.msg);
		counts(s, after, sizeof after);
		ck_assert_msg(strcmp(before, after) == 0, "case %zu changed the store: %s -> %s", i, before, after);
	}
	/* And a good one that adds to what is there. */
	const char *good = "{\"schema\": \"xpool.validation/v1\", \"results\": [{\"env\": \"NVIDIA:H100:535\", "
			   "\"case\": \"llama\", \"layer\": \"schedulable\", \"status\": \"stale\", \"time\": 5, "
			   "\"actor\": \"x\", \"future_key\": 1}]}";
	ck_assert_msg(xp_validate_import(s, good, strlen(good), "good.json", &err) == 0, "%s", err.msg);
	ck_assert_int_eq(cell_status(s, "NVIDIA", "llama", 1), XP_V_STALE);
	xp_store_close(s);
}
END_TEST

START_TEST(audit_rows)
{
	struct xp_store *s = open_mem();
	struct xp_err err = {{0}};
	declare(s, "NVIDIA", "H100", "535");
	add_case(s, "llama", NULL);
	rec(s, "NVIDIA", "llama", 0, XP_V_PASS, "n1");
	rec(s, "NVIDIA", "llama", 0, XP_V_FAIL, NULL);
	struct xp_audit *a;
	size_t n;
	ck_assert_int_eq(xp_audit_list(s, 0, 0, &a, &n, &err), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_str_eq(a[0].action, "env.declare");
	ck_assert_str_eq(a[0].target, "NVIDIA:H100:535");
	ck_assert_str_eq(a[0].actor, "tester");
	ck_assert_ptr_nonnull(strstr(a[0].after, "\"declared\":true"));
	ck_assert_str_eq(a[1].action, "case.add");
	ck_assert_str_eq(a[2].action, "validate.record");
	ck_assert_str_eq(a[2].target, "NVIDIA:H100:535/llama/discovered");
	ck_assert_ptr_null(a[2].before);
	json_t *j = json_loads(a[2].after, 0, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "pass");
	ck_assert_str_eq(json_string_value(json_object_get(j, "node")), "n1");
	json_decref(j);
	j = json_loads(a[3].before, 0, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "pass");
	json_decref(j);
	j = json_loads(a[3].after, 0, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "fail");
	json_decref(j);
	xp_audit_free(a, n);
	xp_store_close(s);
}
END_TEST

static char *read_all(const char *path)
{
	struct xp_err err = {{0}};
	size_t len;
	char *t = xp_read_file(path, 1 << 20, &len, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	return t;
}

START_TEST(run_probe)
{
	struct xp_store *s = open_mem();
	struct xp_err err = {{0}};
	declare(s, "NVIDIA", "H100", "535");
	const char *ok[] = {"printf", "hello", NULL}, *no[] = {"false", NULL}, *slow[] = {"sleep", "5", NULL};
	const char *env_probe[] = {"env", NULL}, *missing[] = {"no-such-program-xpool", NULL};
	add_case(s, "ok", ok);
	add_case(s, "no", no);
	add_case(s, "slow", slow);
	add_case(s, "envp", env_probe);
	add_case(s, "missing", missing);
	add_case(s, "none", NULL);
	char logs[256];
	snprintf(logs, sizeof logs, "%s/logs/deeper", dir);
	ck_assert_msg(xp_validate_run(s, "ok", "NVIDIA", 0, "node7", 10, logs, &err) == 0, "%s", err.msg);
	struct stat st;
	ck_assert_int_eq(stat(logs, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	struct xp_evidence ev[XP_LAYER_COUNT];
	ck_assert_int_eq(xp_validate_cell(s, "NVIDIA", "ok", ev, &err), 0);
	ck_assert_int_eq(ev[0].status, XP_V_PASS);
	ck_assert_str_eq(ev[0].note, "exit status 0");
	ck_assert_str_eq(ev[0].node, "node7");
	ck_assert_ptr_nonnull(strstr(ev[0].log_path, "/logs/deeper/ok_NVIDIA_H100_535_"));
	char *text = read_all(ev[0].log_path);
	ck_assert_str_eq(text, "hello");
	free(text);
	ck_assert_str_eq(ev[0].log_sha256, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
	xp_evidence_clear(ev, XP_LAYER_COUNT);

	ck_assert_int_eq(xp_validate_run(s, "no", "NVIDIA", 0, "node7", 10, logs, &err), 0);
	ck_assert_int_eq(xp_validate_cell(s, "NVIDIA", "no", ev, &err), 0);
	ck_assert_int_eq(ev[0].status, XP_V_FAIL);
	ck_assert_str_eq(ev[0].note, "exit status 1");
	ck_assert_str_eq(ev[0].log_sha256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	xp_evidence_clear(ev, XP_LAYER_COUNT);

	ck_assert_int_eq(xp_validate_run(s, "slow", "NVIDIA", 0, NULL, 0.3, logs, &err), 0);
	ck_assert_int_eq(xp_validate_cell(s, "NVIDIA", "slow", ev, &err), 0);
	ck_assert_int_eq(ev[0].status, XP_V_FAIL);
	ck_assert_str_eq(ev[0].note, "timed out after 0.3 s");
	xp_evidence_clear(ev, XP_LAYER_COUNT);

	/* The probe sees a clean environment, with what it may want to know about the run. */
	setenv("XPOOL_SECRET", "hunter2", 1);
	ck_assert_int_eq(xp_validate_run(s, "envp", "NVIDIA", 0, "node7", 10, logs, &err), 0);
	unsetenv("XPOOL_SECRET");
	ck_assert_int_eq(xp_validate_cell(s, "NVIDIA", "envp", ev, &err), 0);
	text = read_all(ev[0].log_path);
	xp_want_parts(text, "XPOOL_CASE=envp\n", "XPOOL_ENV=NVIDIA:H100:535\n", "XPOOL_LAYER=discovered\n",
		      NULL);
	ck_assert_ptr_null(strstr(text, "hunter2"));
	free(text);
	xp_evidence_clear(ev, XP_LAYER_COUNT);

	/* Errors: nothing runs, nothing is recorded. */
	char before[128], after[128];
	counts(s, before, sizeof before);
	ck_assert_int_eq(xp_validate_run(s, "missing", "NVIDIA", 0, NULL, 10, logs, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "program not found"));
	ck_assert_int_eq(xp_validate_run(s, "none", "NVIDIA", 0, NULL, 10, logs, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "no entry command"));
	ck_assert_int_eq(xp_validate_run(s, "ok", "NVIDIA", XP_LAYER_EXECUTES, NULL, 10, logs, &err), -1);
	ck_assert_str_eq(err.msg, "cannot run ok on executes: schedulable is untested");
	ck_assert_int_eq(xp_validate_run(s, "gone", "NVIDIA", 0, NULL, 10, logs, &err), -1);
	ck_assert_int_eq(xp_validate_run(s, "ok", "AMD", 0, NULL, 10, logs, &err), -1);
	counts(s, after, sizeof after);
	ck_assert_str_eq(before, after);
	xp_store_close(s);
}
END_TEST

/* ---- the command ---- */

static char db[256], snap[256];

/* A snapshot of the node7/node8 cluster for --inventory. */
static void write_snapshot(const char *driver)
{
	struct xp_cluster *c = cluster(driver, XP_NODE_UP);
	snprintf(snap, sizeof snap, "%s/inv-%s.json", dir, driver);
	FILE *f = fopen(snap, "w");
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_cluster_write(c, f, 0, &err), 0);
	fclose(f);
	xp_cluster_free(c);
}

/* Runs xpool --db DB ARGS...; status checked by the caller. */
#define XP(r, ...) ck_assert_int_eq(xp_run_xpool(r, NULL, "--db", db, __VA_ARGS__, NULL), 0)

static void expect(struct xp_run *r, int status, const char *in_out, const char *in_err)
{
	ck_assert_msg(r->status == status, "exit %d, wanted %d: %s%s", r->status, status, r->out, r->err);
	if (in_out)
		ck_assert_msg(strstr(r->out, in_out) != NULL, "stdout lacks '%s': %s", in_out, r->out);
	if (in_err)
		ck_assert_msg(strstr(r->err, in_err) != NULL, "stderr lacks '%s': %s", in_err, r->err);
	xp_run_free(r);
}

START_TEST(cli)
{
	/* record and run bring environments up to date from the inventory, which without
	 * --inventory is live discovery: under the sanitizer build hwloc's PCI plugin keeps
	 * allocations that cannot be suppressed by name (see check_replay.c). */
	setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
	struct xp_run r;
	snprintf(db, sizeof db, "%s/cli.db", dir);
	write_snapshot("535.54.03");
	XP(&r, "validate", "case", "add", "llama", "--image", "reg/llama:1", "--entry", "printf hello", "--team", "ml");
	expect(&r, 0, "added case llama", NULL);
	XP(&r, "validate", "case", "add", "bad", "--entry", "false");
	expect(&r, 0, NULL, NULL);
	XP(&r, "validate", "case", "add", "llama");
	expect(&r, 1, NULL, "xpool: validate case add: case llama exists already");
	XP(&r, "validate", "case", "add");
	expect(&r, 2, NULL, "usage: xpool validate case add NAME");
	XP(&r, "validate", "case", "add", "x", "--entry", "'unterminated");
	expect(&r, 2, NULL, "unterminated");
	XP(&r, "validate", "case", "show", "llama");
	expect(&r, 0, "entry       printf hello", NULL);
	XP(&r, "validate", "case", "list");
	expect(&r, 0, "reg/llama:1", NULL);
	XP(&r, "--inventory", snap, "validate", "sync");
	expect(&r, 0, "synced with 3 nodes, 3 accelerators", NULL);
	XP(&r, "validate", "env", "list");
	expect(&r, 0, H100_OLD, NULL);
	XP(&r, "validate", "env", "declare", "AMD", "MI300X", "6.7", "--runtime", "ROCm 6.2");
	expect(&r, 0, "declared environment AMD:MI300X:6.7:-:ROCm 6.2", NULL);

	XP(&r, "validate", "record", "NVIDIA:H100", "llama", "schedulable", "pass", "--note", "dry-run ok", "--node", "node7");
	expect(&r, 0, "recorded " H100_OLD " llama schedulable pass", NULL);
	XP(&r, "validate", "record", "NVIDIA:H100", "llama", "accepted", "pass");
	expect(&r, 1, NULL, "xpool: validate record: cannot record accepted pass: launches is untested");
	XP(&r, "validate", "record", "NVIDIA:H100", "llama", "deployed", "pass");
	expect(&r, 1, NULL, "unknown layer deployed");
	XP(&r, "validate", "record", "NVIDIA:H100", "llama", "launches", "maybe");
	expect(&r, 1, NULL, "unknown status maybe");
	XP(&r, "validate", "record", "Intel", "llama", "launches", "fail");
	expect(&r, 1, NULL, "no environment matches Intel");
	XP(&r, "validate", "record", "NVIDIA", "llama", "launches", "fail");
	expect(&r, 1, NULL, "ambiguous");
	XP(&r, "validate", "record", "NVIDIA:H100", "gpt", "launches", "fail");
	expect(&r, 1, NULL, "no case named gpt");
	XP(&r, "validate", "record", "NVIDIA:H100", "llama", "launches", "fail", "--log", "/nonexistent/log");
	expect(&r, 1, NULL, "/nonexistent/log");
	XP(&r, "validate", "record", "NVIDIA:H100", "llama");
	expect(&r, 2, NULL, "usage: xpool validate record ENV CASE LAYER pass|fail");
	XP(&r, "validate", "history", "NVIDIA:H100", "llama", "--json");
	json_t *j = json_loads(r.out, 0, NULL);
	ck_assert_msg(j != NULL, "%s", r.out);
	json_t *h = json_object_get(j, "history");
	ck_assert_int_eq(json_array_size(h), 2); /* discovered, schedulable: the refusals left nothing */
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(h, 1), "note")), "dry-run ok");
	ck_assert_str_eq(json_string_value(json_object_get(j, "env")), H100_OLD);
	json_decref(j);
	expect(&r, 0, NULL, NULL);
	XP(&r, "validate", "history", "NVIDIA:H100", "llama");
	expect(&r, 0, "schedulable", NULL);

	/* run: the probe's output is the log, its digest the evidence. */
	char logs[256];
	snprintf(logs, sizeof logs, "%s/logs", dir);
	XP(&r, "validate", "run", "llama", "--node", "node7", "--env", "NVIDIA:H100", "--layer", "launches", "--log-dir", logs);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "llama on " H100_OLD ": launches pass (exit status 0)"));
	ck_assert_ptr_nonnull(strstr(r.out, "sha256 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"));
	char *lp = strstr(r.out, "\nlog ");
	ck_assert_ptr_nonnull(lp);
	char logpath[512];
	ck_assert_int_eq(sscanf(lp + 5, "%511s", logpath), 1);
	char *text = read_all(logpath);
	ck_assert_str_eq(text, "hello");
	free(text);
	xp_run_free(&r);
	/* The node's only environment is the default; a failing probe exits 1, recorded. */
	XP(&r, "--inventory", snap, "validate", "run", "bad", "--node", "node7", "--layer", "schedulable", "--log-dir", logs);
	expect(&r, 1, "bad on " H100_OLD ": schedulable fail (exit status 1)", "the fail is recorded");
	XP(&r, "--inventory", snap, "validate", "run", "bad", "--node", "node9", "--log-dir", logs);
	expect(&r, 1, NULL, "give --env");
	XP(&r, "validate", "run", "bad");
	expect(&r, 2, NULL, "--node NODE is required");

	/* matrix: synced from the inventory first, so the discovered layer is live. */
	XP(&r, "--inventory", snap, "validate", "matrix", "--json");
	j = json_loads(r.out, 0, NULL);
	ck_assert_msg(j != NULL, "%s", r.out);
	json_t *envs = json_object_get(j, "environments"), *cases = json_object_get(j, "cases");
	ck_assert_int_eq(json_array_size(envs), 3);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(envs, 0), "id")), "AMD:MI300X:6.7::ROCm 6.2");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(cases, 1), "name")), "llama");
	json_t *cells = json_object_get(j, "cells");
	ck_assert_int_eq(json_array_size(cells), 6);
	json_t *cell = json_array_get(cells, 5); /* H100 x llama */
	ck_assert_str_eq(json_string_value(json_object_get(cell, "env")), H100_OLD);
	ck_assert_str_eq(json_string_value(json_object_get(cell, "case")), "llama");
	json_t *layers = json_object_get(cell, "layers");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(layers, "discovered"), "status")), "pass");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(layers, "launches"), "log_sha256")),
			 "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(layers, "accepted"), "status")), "untested");
	json_decref(j);
	expect(&r, 0, NULL, NULL);
	XP(&r, "--inventory", snap, "validate", "matrix", "--csv");
	expect(&r, 0, "env,case,layer,status,time,actor,node,log_sha256,note\n", NULL);
	XP(&r, "--inventory", snap, "validate", "matrix", "--csv");
	expect(&r, 0, H100_OLD ",llama,schedulable,pass,", NULL);
	XP(&r, "--inventory", snap, "validate", "matrix");
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "ENVIRONMENT"));
	ck_assert_ptr_nonnull(strstr(r.out, H100_OLD "  PF...  PPP..  4/10"));
	ck_assert_ptr_nonnull(strstr(r.out, "P pass  F fail  S stale  . untested"));
	xp_run_free(&r);
	/* No inventory: the stored matrix, and exit 4 (partial). */
	XP(&r, "--inventory", "/nonexistent.json", "validate", "matrix");
	expect(&r, 4, H100_OLD "  PF...  PPP..  4/10", "showing the stored matrix");
	XP(&r, "--json", "validate", "matrix", "--csv");
	expect(&r, 2, NULL, "choose one");

	/* A driver update on node7, in a snapshot: looking at it records nothing... */
	write_snapshot("550.54.14");
	XP(&r, "--inventory", snap, "validate", "matrix");
	expect(&r, 0, H100_OLD "  PF...  PPP..  4/10", "what it shows is not recorded ('xpool validate sync' records it)");
	XP(&r, "--inventory", snap, "validate", "matrix", "--csv");
	ck_assert_ptr_null(strstr(r.err, "not recorded")); /* scripts asking for CSV get CSV only */
	expect(&r, 0, NULL, NULL);
	/* ...until the user asks: the evidence taken there turns stale. */
	XP(&r, "--inventory", snap, "validate", "sync");
	expect(&r, 0, NULL, NULL);
	XP(&r, "--inventory", snap, "validate", "matrix");
	ck_assert_ptr_null(strstr(r.err, "not recorded"));
	expect(&r, 0, H100_OLD "  SF...  SSS..  0/10", NULL);
	XP(&r, "audit");
	expect(&r, 0, "validate.stale", NULL);

	/* export, import into a fresh database, export again: the same document. */
	char out[256], db2[256];
	snprintf(out, sizeof out, "%s/export.json", dir);
	XP(&r, "validate", "export", out);
	expect(&r, 0, NULL, NULL);
	char *one = read_all(out);
	snprintf(db2, sizeof db2, "%s/other.db", dir);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db2, "validate", "import", out, NULL), 0);
	expect(&r, 0, "imported", NULL);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db2, "validate", "export", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, one);
	xp_run_free(&r);
	free(one);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db2, "validate", "import", out, NULL), 0);
	expect(&r, 1, NULL, "$.cases[0].name: case bad exists already");
	char *bad = xp_tmpfile("{\"schema\": \"other\"}", 19);
	XP(&r, "validate", "import", bad);
	expect(&r, 1, NULL, "$.schema: expected \"xpool.validation/v1\"");
	unlink(bad);
	free(bad);

	XP(&r, "validate", "case", "rm", "bad");
	expect(&r, 0, "removed case bad", NULL);
	XP(&r, "validate", "case", "show", "bad");
	expect(&r, 1, NULL, "no case named bad");

	/* Usage: exit 2, one line. */
	XP(&r, "validate");
	expect(&r, 2, NULL, "which subcommand");
	XP(&r, "validate", "bogus");
	expect(&r, 2, NULL, "unknown subcommand bogus");
	XP(&r, "validate", "case", "frob");
	expect(&r, 2, NULL, "unknown subcommand frob");
	XP(&r, "validate", "matrix", "--image", "x");
	expect(&r, 2, NULL, "option --image does not apply");
	XP(&r, "validate", "help");
	expect(&r, 0, "xpool validate run CASE --node NODE", NULL);
	XP(&r, "help", "validate");
	expect(&r, 0, "--entry", NULL);
}
END_TEST

XP_DEFINE_SUITE(validate,
	{"store", .timeout_s = 60, .setup = setup, .teardown = teardown,
	 .tests = {sha256_vectors, names_and_ids, env_declare_resolve, case_add_rm_show,
		   layer_rules, record_with_log, env_id_shown, sync_and_stale, matrix_contents,
		   highest_and_history, export_import_roundtrip, import_errors, audit_rows,
		   run_probe}},
	{"cli", .timeout_s = 120, .setup = setup, .teardown = teardown, .tests = {cli}})
