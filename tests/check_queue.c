/* check_queue.c: the queue model (src/queue) and `xpool queue`: parsing with errors that name
 * the option, round trips through real sqlite files, cycles refused, audit rows on every
 * write and no byte changed by a read, a database from before the queue tables read as it is,
 * and hostile input. */
#include <check.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"
#include "qmodel.h"
#include "store.h"
#include "checklib.h"
#include "suitelib.h"
#include "testlib.h"

static char dir[128], db[192];

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/xpool-queue-%d", (int)getpid());
	snprintf(db, sizeof db, "%s/q.db", dir);
	xp_rm_rf(dir);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	setenv("XPOOL_ACTOR", "tester", 1);
}

static void teardown(void)
{
	xp_rm_rf(dir);
}

/* Runs xpool --db db ARGS...; the result's status, out and err are checked by the caller. */
static void q(struct xp_run *r, ...)
{
	char *argv[40] = {"--db", db};
	int n = 2;
	va_list ap;
	va_start(ap, r);
	for (const char *s; (s = va_arg(ap, const char *)) && n < 39;)
		argv[n++] = (char *)s;
	va_end(ap);
	argv[n] = NULL;
	char *full[42] = {(char *)xp_bin()};
	memcpy(full + 1, argv, (size_t)(n + 1) * sizeof *argv);
	ck_assert_int_eq(xp_run_argv(r, full, NULL), 0);
}

/* One integer from the database at p (opened raw, read only). */
static long long sql_int(const char *p, const char *sql)
{
	sqlite3 *raw;
	sqlite3_stmt *st;
	long long v = -1;
	ck_assert_int_eq(sqlite3_open_v2(p, &raw, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(raw, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(raw);
	return v;
}

/* The bytes and mtime of a file and its -wal, to tell that nothing wrote. */
struct fileprint {
	char *bytes, *wal;
	size_t len, wal_len;
	struct timespec mtime, wal_mtime;
};

static void fileprint(const char *p, struct fileprint *f)
{
	struct xp_err err;
	struct stat st;
	char wal[256];
	memset(f, 0, sizeof *f);
	f->bytes = xp_read_file(p, 1 << 26, &f->len, &err);
	ck_assert_ptr_nonnull(f->bytes);
	ck_assert_int_eq(stat(p, &st), 0);
	f->mtime = st.st_mtim;
	snprintf(wal, sizeof wal, "%s-wal", p);
	if (stat(wal, &st) == 0) {
		f->wal_mtime = st.st_mtim;
		f->wal = xp_read_file(wal, 1 << 26, &f->wal_len, &err);
	}
}

static void fileprint_same(const struct fileprint *a, const struct fileprint *b)
{
	ck_assert_uint_eq(a->len, b->len);
	ck_assert_int_eq(memcmp(a->bytes, b->bytes, a->len), 0);
	ck_assert(a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec);
	ck_assert_uint_eq(a->wal_len, b->wal_len);
	ck_assert(!a->wal_len || memcmp(a->wal, b->wal, a->wal_len) == 0);
	ck_assert(a->wal_mtime.tv_sec == b->wal_mtime.tv_sec && a->wal_mtime.tv_nsec == b->wal_mtime.tv_nsec);
}

static void fileprint_free(struct fileprint *f)
{
	free(f->bytes);
	free(f->wal);
}

/* Quantities: milli-units exactly, '-' only where unlimited is allowed, and every bad form
 * refused with the field named. */
START_TEST(amounts)
{
	struct xp_err err = {{0}};
	int64_t v;
	ck_assert_int_eq(xp_qamount_parse("8", false, "f", &v, &err), 0);
	ck_assert_int_eq(v, 8000);
	ck_assert_int_eq(xp_qamount_parse("0.5", false, "f", &v, &err), 0);
	ck_assert_int_eq(v, 500);
	ck_assert_int_eq(xp_qamount_parse(".5", false, "f", &v, &err), 0);
	ck_assert_int_eq(v, 500);
	ck_assert_int_eq(xp_qamount_parse("1.125", false, "f", &v, &err), 0);
	ck_assert_int_eq(v, 1125);
	ck_assert_int_eq(xp_qamount_parse("-", true, "f", &v, &err), 0);
	ck_assert_int_eq(v, XP_UNLIMITED);
	char buf[32];
	ck_assert_str_eq(xp_qamount_format(1125, buf, sizeof buf), "1.125");
	ck_assert_str_eq(xp_qamount_format(500, buf, sizeof buf), "0.5");
	ck_assert_str_eq(xp_qamount_format(1050, buf, sizeof buf), "1.05");
	ck_assert_str_eq(xp_qamount_format(8000, buf, sizeof buf), "8");
	ck_assert_str_eq(xp_qamount_format(XP_UNLIMITED, buf, sizeof buf), "unlimited");
	const char *bad[] = {"-", "", ".", "1.", "-1", "1e3", "0x10", "1.2345", "nan", "inf", " 1", "1 ",
			     "99999999999999999999999", "1000000000001"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err.msg[0] = '\0';
		ck_assert_msg(xp_qamount_parse(bad[i], false, "--quota x:devices deserved", &v, &err) == -1, "%s",
			      bad[i]);
		ck_assert_msg(strstr(err.msg, "--quota x:devices deserved"), "%s: %s", bad[i], err.msg);
	}
	ck_assert_int_eq(xp_qamount_parse("1000000000000", false, "f", &v, &err), 0);
	ck_assert_int_eq(v, 1000000000000000LL);
}
END_TEST

/* Quota lists: defaults, each field named in its error, duplicates, and the checks that need
 * the class. Names: letters, digits, '.', '_', '-'; control characters refused, not echoed. */
START_TEST(quotas_and_names)
{
	struct xp_err err = {{0}};
	struct xp_quota *qs;
	size_t n;
	ck_assert_int_eq(xp_quotas_parse("h100:devices=8/16,cpu:cpus=1/2/4/-/1", &qs, &n, &err), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(qs[0].rclass, "h100");
	ck_assert_int_eq(qs[0].res, XP_RES_DEVICES);
	ck_assert_int_eq(qs[0].deserved, 16000);
	ck_assert_int_eq(qs[0].max, XP_UNLIMITED);
	ck_assert_int_eq(qs[0].lending_limit, XP_UNLIMITED);
	ck_assert_int_eq(qs[1].max, 4000);
	ck_assert_int_eq(qs[1].borrowing_limit, XP_UNLIMITED);
	ck_assert_int_eq(qs[1].lending_limit, 1000);
	struct xp_rclass dev = {.name = "h100", .vendor = "NVIDIA"}, cpu = {.name = "cpu", .builtin = true};
	ck_assert_int_eq(xp_quota_check(&qs[0], &dev, &err), 0);
	ck_assert_int_eq(xp_quota_check(&qs[1], &cpu, &err), 0);
	ck_assert_int_eq(xp_quota_check(&qs[0], &cpu, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "class cpu limits cpus only"));
	ck_assert_int_eq(xp_quota_check(&qs[0], NULL, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "no resource class 'h100'"));
	qs[0].guaranteed = 20000;
	ck_assert_int_eq(xp_quota_check(&qs[0], &dev, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "guaranteed is above deserved"));
	qs[1].deserved = 5000;
	ck_assert_int_eq(xp_quota_check(&qs[1], &cpu, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "deserved is above max"));
	xp_quotas_free(qs, n);

	const struct {
		const char *text, *want;
	} bad[] = {
		{"h100", "is not CLASS:RESOURCE="},
		{"h100:gpus=1/2", "resource 'gpus' is not devices"},
		{"h100:devices=1", "needs at least GUARANTEED/DESERVED"},
		{"h100:devices=x/2", "h100:devices guaranteed: 'x' is not a number"},
		{"h100:devices=1/-", "h100:devices deserved: '-' is not a number"},
		{"h100:devices=1/2/y", "h100:devices max: 'y' is not a number or '-'"},
		{"h100:devices=1/2/3/4/5/6", "more than 5 numbers"},
		{"h100:devices=1/2,h100:devices=1/2", "h100:devices given twice"},
		{"h\x1b[2J:devices=1/2", "character 0x1b"},
		{":devices=1/2", "--quota class is empty"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err.msg[0] = '\0';
		ck_assert_int_eq(xp_quotas_parse(bad[i].text, &qs, &n, &err), -1);
		ck_assert_msg(strstr(err.msg, bad[i].want), "%s: %s", bad[i].text, err.msg);
		ck_assert_ptr_null(strchr(err.msg, '\x1b'));
	}
	ck_assert_int_eq(xp_qname_check("research-1.a_b", "queue name", &err), 0);
	char longname[80];
	memset(longname, 'a', 64);
	longname[64] = '\0';
	ck_assert_int_eq(xp_qname_check(longname, "queue name", &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "at most 63"));
	ck_assert_int_eq(xp_qname_check("-x", "queue name", &err), -1);
	ck_assert_int_eq(xp_qname_check("a\nb", "queue name", &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "0x0a"));
	ck_assert_int_eq(xp_qglob_check("*H100[", "--model", &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "--model"));
	ck_assert_int_eq(xp_qglob_check("a\tb", "--vendor", &err), -1);
	ck_assert_int_eq(xp_qglob_check("*H100*", "--model", &err), 0);
	ck_assert_int_eq(xp_qlabel_check("pool=a", &err), 0);
	ck_assert_int_eq(xp_qlabel_check("pool", &err), -1);
	ck_assert_int_eq(xp_qlabel_check("pool=", &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "--label value"));
	ck_assert_int_eq(xp_qpolicy_parse("lower-or-newer"), XP_QP_LOWER_OR_NEWER);
	ck_assert_str_eq(xp_qpolicy_name(XP_QP_ANY), "any");
	ck_assert_int_eq(xp_qstate_parse("Drain"), -1);
	ck_assert_str_eq(xp_qorder_name(XP_QO_STRICT), "strict");
}
END_TEST

/* add, set, show, list, rm through the CLI on a real file, text and --json. */
START_TEST(round_trip)
{
	OK("queue", "class", "add", "h100", "--vendor", "NVIDIA", "--model", "*H100*");
	OK("queue", "add", "research", "--weight", "2", "--priority", "5", "--quota",
	   "h100:devices=8/16/32/8/4,cpu:cpus=64/128", "--within", "lower-priority", "--reclaim", "any");
	OK("queue", "add", "vision", "--parent", "research", "--tenants", "alice,bob", "--ordering", "strict",
	   "--reclaimable", "no", "--quota", "mem:memory=0.5/1.25/-");
	struct xp_run r;
	q(&r, "queue", "list", NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "NAME") && strstr(r.out, "research") &&
			      strstr(r.out, "cpu:cpus 0/128/-,h100 0/16/32") && strstr(r.out, "alice,bob") &&
			      strstr(r.out, "mem:memory 0/1.25/-") && strstr(r.out, "PENDING") && strstr(r.out, "BORROWED"),
		      "%s%s", r.out, r.err);
	xp_run_free(&r);
	q(&r, "queue", "show", "research", NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "children:    vision") && strstr(r.out, "weight:      2") &&
			      strstr(r.out, "preemption:  within lower-priority, reclaim any") &&
			      strstr(r.out, "USED") && strstr(r.out, "jobs:        0 running, 0 pending"),
		      "%s%s", r.out, r.err);
	xp_run_free(&r);

	q(&r, "--json", "queue", "show", "research", NULL);
	ck_assert_int_eq(r.status, 0);
	json_error_t je;
	json_t *o = json_loads(r.out, 0, &je);
	ck_assert_msg(o != NULL, "%s: %s", je.text, r.out);
	ck_assert_str_eq(json_string_value(json_object_get(o, "name")), "research");
	ck_assert(json_is_null(json_object_get(o, "parent")));
	ck_assert_int_eq(json_integer_value(json_object_get(o, "priority")), 5);
	ck_assert(json_real_value(json_object_get(o, "weight")) == 2.0);
	ck_assert_str_eq(json_string_value(json_object_get(o, "within")), "lower-priority");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(o, "children"), 0)), "vision");
	json_t *qs = json_object_get(o, "quotas");
	ck_assert_uint_eq(json_array_size(qs), 2);
	json_t *h = NULL;
	for (size_t i = 0; i < 2; i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(qs, i), "class")), "h100") == 0)
			h = json_array_get(qs, i);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(json_integer_value(json_object_get(h, "deserved")), 16);
	ck_assert_int_eq(json_integer_value(json_object_get(h, "max")), 32);
	ck_assert_int_eq(json_integer_value(json_object_get(h, "borrowing_limit")), 8);
	ck_assert_int_eq(json_integer_value(json_object_get(h, "lending_limit")), 4);
	ck_assert_int_eq(json_integer_value(json_object_get(h, "used")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "pending")), 0);
	json_decref(o);
	xp_run_free(&r);

	/* set: one quota replaced whole, another dropped, the rest kept. */
	OK("queue", "set", "research", "--weight", "3", "--quota", "h100:devices=8/16", "--drop-quota", "cpu:cpus",
	   "--state", "hold");
	q(&r, "--json", "queue", "list", NULL);
	o = json_loads(r.out, 0, &je);
	ck_assert_msg(o != NULL, "%s", r.out);
	json_t *qa = json_object_get(o, "queues");
	ck_assert_uint_eq(json_array_size(qa), 2);
	json_t *res = json_array_get(qa, 0);
	ck_assert_str_eq(json_string_value(json_object_get(res, "name")), "research");
	ck_assert_str_eq(json_string_value(json_object_get(res, "state")), "hold");
	ck_assert(json_real_value(json_object_get(res, "weight")) == 3.0);
	qs = json_object_get(res, "quotas");
	ck_assert_uint_eq(json_array_size(qs), 1);
	ck_assert(json_is_null(json_object_get(json_array_get(qs, 0), "max")));
	json_t *vis = json_array_get(qa, 1);
	ck_assert_str_eq(json_string_value(json_object_get(vis, "parent")), "research");
	ck_assert(json_is_false(json_object_get(vis, "reclaimable")));
	ck_assert_str_eq(json_string_value(json_object_get(vis, "ordering")), "strict");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(vis, "tenants"), 1)), "bob");
	ck_assert(json_real_value(json_object_get(json_array_get(json_object_get(vis, "quotas"), 0), "deserved")) ==
		  1.25);
	json_decref(o);
	xp_run_free(&r);

	/* rm: refused while a child is there, then child and parent go. */
	FAILS(1, "queue research has 1 child queue: remove them or give them another parent", "queue", "rm", "research");
	FAILS(1, "class h100 is used by queue research's quotas", "queue", "class", "rm", "h100");
	FAILS(1, "class cpu is built in", "queue", "class", "rm", "cpu");
	OK("queue", "set", "vision", "--parent", "-");
	OK("queue", "rm", "research");
	OK("queue", "rm", "vision");
	OK("queue", "class", "rm", "h100");
	q(&r, "queue", "list", NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "no queues"), "%s%s", r.out, r.err);
	xp_run_free(&r);
	q(&r, "--json", "queue", "class", "list", NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "\"cpu\"") && strstr(r.out, "\"mem\"") && !strstr(r.out, "h100"),
		      "%s%s", r.out, r.err);
	xp_run_free(&r);
	ck_assert_int_eq(sql_int(db, "SELECT count(*) FROM quotas"), 0);
}
END_TEST

/* Every validation error: the option or field named, usage errors exit 2, what the store
 * decides (unknown names, duplicates) exit 1; nothing written by a refused command. */
START_TEST(validation)
{
	OK("queue", "class", "add", "h100", "--vendor", "NVIDIA");
	OK("queue", "add", "a");
	long long audits = sql_int(db, "SELECT count(*) FROM audit");
	FAILS(2, "--weight: '0' is not a number above 0", "queue", "add", "b", "--weight", "0");
	FAILS(2, "--weight: 'nan'", "queue", "add", "b", "--weight", "nan");
	FAILS(2, "--weight: '1e400'", "queue", "add", "b", "--weight", "1e400");
	FAILS(2, "--priority: '99999999999999999999' is not a whole number", "queue", "add", "b", "--priority",
	      "99999999999999999999");
	FAILS(2, "--ordering: 'fifo' is not best-effort or strict", "queue", "add", "b", "--ordering", "fifo");
	FAILS(2, "--state: 'closed' is not open, hold or drain", "queue", "add", "b", "--state", "closed");
	FAILS(2, "--within: 'any' is not never, lower-priority or lower-or-newer", "queue", "add", "b", "--within", "any");
	FAILS(2, "--reclaim: 'lower-or-newer' is not never", "queue", "add", "b", "--reclaim", "lower-or-newer");
	FAILS(2, "--reclaimable: 'maybe' is not yes or no", "queue", "add", "b", "--reclaimable", "maybe");
	FAILS(2, "--tenants name has character 0x20", "queue", "add", "b", "--tenants", "a b");
	FAILS(2, "--quota h100:devices deserved: '99999999999999' is too large", "queue", "add", "b", "--quota",
	      "h100:devices=1/99999999999999");
	FAILS(2, "--quota h100:devices: guaranteed is above deserved", "queue", "add", "b", "--quota", "h100:devices=4/2");
	FAILS(2, "--quota h100:devices: deserved is above max", "queue", "add", "b", "--quota", "h100:devices=1/4/2");
	FAILS(2, "--quota h100:devices: lending limit is above deserved", "queue", "add", "b", "--quota",
	      "h100:devices=1/4/8/-/5");
	FAILS(2, "--quota h100:cpus: a device class limits devices or ecu", "queue", "add", "b", "--quota",
	      "h100:cpus=1/4");
	FAILS(2, "--quota mem:cpus: class mem limits memory only", "queue", "add", "b", "--quota", "mem:cpus=1/4");
	FAILS(1, "--quota a100:devices: no resource class 'a100'", "queue", "add", "b", "--quota", "a100:devices=1/4");
	FAILS(1, "--parent: no queue 'nope'", "queue", "add", "b", "--parent", "nope");
	FAILS(2, "queue name has character 0x1b", "queue", "add", "b\x1b]0;x\x07");
	FAILS(2, "queue name is 64 characters long", "queue", "add",
	      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	FAILS(1, "queue 'a' exists", "queue", "add", "a");
	FAILS(1, "no queue 'zz'", "queue", "set", "zz", "--weight", "2");
	FAILS(1, "no queue 'zz'", "queue", "rm", "zz");
	FAILS(2, "nothing to change: give an option", "queue", "set", "a");
	FAILS(1, "no queue 'zz'", "queue", "show", "zz");
	FAILS(2, "--drop-quota: 'h100:devices' is not a quota of a", "queue", "set", "a", "--drop-quota", "h100:devices");
	FAILS(2, "option --drop-quota does not apply", "queue", "add", "b", "--drop-quota", "h100:devices");
	FAILS(2, "option --vendor does not apply", "queue", "add", "b", "--vendor", "x");
	FAILS(2, "option --weight does not apply", "queue", "class", "add", "x", "--weight", "2");
	FAILS(2, "--model: '[' without its ']'", "queue", "class", "add", "x", "--model", "H100[");
	FAILS(2, "--vendor: control character 0x1b", "queue", "class", "add", "x", "--vendor", "a\x1b");
	FAILS(2, "--label or globs", "queue", "class", "add", "x", "--vendor", "a", "--label", "pool=a");
	FAILS(2, "give --vendor and/or --model globs, or --label", "queue", "class", "add", "x");
	FAILS(2, "--label: 'pool' is not KEY=VALUE", "queue", "class", "add", "x", "--label", "pool");
	FAILS(1, "class 'h100' exists", "queue", "class", "add", "h100", "--vendor", "AMD");
	FAILS(1, "class 'cpu' exists", "queue", "class", "add", "cpu", "--vendor", "AMD");
	FAILS(2, "unknown subcommand frob", "queue", "frob");
	FAILS(2, "wrong number of arguments", "queue", "add");
	FAILS(2, "queue class: unknown subcommand frob", "queue", "class", "frob");
	ck_assert_int_eq(sql_int(db, "SELECT count(*) FROM audit"), audits);
	ck_assert_int_eq(sql_int(db, "SELECT count(*) FROM queues"), 1);
}
END_TEST

/* A parent chain never loops: own parent, and a descendant made the parent, are refused. */
START_TEST(cycles)
{
	OK("queue", "add", "a");
	OK("queue", "add", "b", "--parent", "a");
	OK("queue", "add", "c", "--parent", "b");
	FAILS(1, "--parent: queue a cannot be its own parent", "queue", "set", "a", "--parent", "a");
	FAILS(1, "--parent: b is below a already; making it a's parent would make a cycle", "queue", "set", "a",
	      "--parent", "b");
	FAILS(1, "--parent: c is below a already", "queue", "set", "a", "--parent", "c");
	FAILS(1, "would make a cycle", "queue", "set", "b", "--parent", "c");
	OK("queue", "add", "d");
	OK("queue", "set", "a", "--parent", "d"); /* moving a whole subtree under another top is fine */
	ck_assert_int_eq(sql_int(db, "SELECT count(*) FROM queues WHERE name = 'a' AND parent = 'd'"), 1);
}
END_TEST

/* Every write leaves one audit row with before/after JSON in the same transaction; reads
 * (list, show, class list, text and JSON) change no byte of the file or its WAL. */
START_TEST(audit_and_reads)
{
	OK("queue", "class", "add", "ascend", "--label", "pool=npu");
	OK("queue", "add", "a", "--quota", "ascend:ecu=1/2");
	OK("queue", "set", "a", "--weight", "4");
	OK("queue", "add", "b");
	OK("queue", "rm", "b");
	ck_assert_int_eq(sql_int(db, "SELECT count(*) FROM audit"), 5);
	ck_assert_int_eq(sql_int(db, "SELECT count(*) FROM audit WHERE action = 'rclass.add' AND target = 'ascend'"
				     " AND before IS NULL AND after LIKE '%\"label\":\"pool=npu\"%'"),
			 1);
	ck_assert_int_eq(sql_int(db, "SELECT count(*) FROM audit WHERE action = 'queue.add' AND target = 'a'"
				     " AND after LIKE '%\"resource\":\"ecu\"%'"),
			 1);
	ck_assert_int_eq(sql_int(db, "SELECT count(*) FROM audit WHERE action = 'queue.set' AND target = 'a'"
				     " AND before LIKE '%\"weight\":1.0%' AND after LIKE '%\"weight\":4.0%'"),
			 1);
	ck_assert_int_eq(sql_int(db, "SELECT count(*) FROM audit WHERE action = 'queue.rm' AND target = 'b'"
				     " AND after IS NULL AND before LIKE '%\"name\":\"b\"%'"),
			 1);
	ck_assert_int_eq(sql_int(db, "SELECT count(*) FROM audit WHERE actor = 'tester'"), 5);
	struct xp_run r;
	q(&r, "audit", "--limit", "1", NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "queue.rm"), "%s%s", r.out, r.err);
	xp_run_free(&r);

	struct fileprint before, after;
	fileprint(db, &before);
	const char *reads[][4] = {{"queue", "list", NULL}, {"queue", "show", "a", NULL}, {"queue", "class", "list", NULL}};
	for (size_t i = 0; i < 3; i++)
		for (int json = 0; json < 2; json++) {
			if (json)
				q(&r, "--json", reads[i][0], reads[i][1], reads[i][2], NULL);
			else
				q(&r, reads[i][0], reads[i][1], reads[i][2], NULL);
			ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
			xp_run_free(&r);
		}
	fileprint(db, &after);
	fileprint_same(&before, &after);
	fileprint_free(&before);
	fileprint_free(&after);

	/* No database: an empty list, and no file made. */
	char none[256];
	snprintf(none, sizeof none, "%s/none/x.db", dir);
	char *argv[] = {(char *)xp_bin(), "--db", none, "queue", "list", NULL};
	ck_assert_int_eq(xp_run_argv(&r, argv, NULL), 0);
	ck_assert_msg(r.status == 0 && strstr(r.out, "no queues"), "%s%s", r.out, r.err);
	xp_run_free(&r);
	char *argv2[] = {(char *)xp_bin(), "--db", none, "queue", "show", "a", NULL};
	ck_assert_int_eq(xp_run_argv(&r, argv2, NULL), 0);
	ck_assert_msg(r.status == 1 && strstr(r.err, "no queue 'a'"), "%s%s", r.out, r.err);
	xp_run_free(&r);
	struct stat st;
	snprintf(none, sizeof none, "%s/none", dir);
	ck_assert_int_ne(stat(none, &st), 0);
}
END_TEST

/* A database from before the queue tables (schema 2): reads show no queues and the built-in
 * classes without migrating or writing it; the first write migrates it, keeping its data. */
START_TEST(old_database)
{
	struct xp_store *s = xp_old_store(db, 2);
	ck_assert_int_eq(sqlite3_exec(s->db, "INSERT INTO cases(name, created) VALUES('kept', 1)", NULL, NULL, NULL),
			 SQLITE_OK);
	xp_store_close(s);
	ck_assert_int_eq(sql_int(db, "PRAGMA user_version"), 2);

	struct fileprint before, after;
	fileprint(db, &before);
	struct xp_run r;
	q(&r, "queue", "list", NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "no queues"), "%s%s", r.out, r.err);
	xp_run_free(&r);
	q(&r, "--json", "queue", "list", NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "\"queues\": []"), "%s%s", r.out, r.err);
	xp_run_free(&r);
	q(&r, "queue", "class", "list", NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "cpu") && strstr(r.out, "mem"), "%s%s", r.out, r.err);
	xp_run_free(&r);
	FAILS(1, "no queue 'a'", "queue", "show", "a");
	fileprint(db, &after);
	fileprint_same(&before, &after);
	fileprint_free(&before);
	fileprint_free(&after);
	ck_assert_int_eq(sql_int(db, "PRAGMA user_version"), 2);

	OK("queue", "add", "a", "--quota", "cpu:cpus=1/2");
	ck_assert_int_eq(sql_int(db, "PRAGMA user_version"), XP_STORE_VERSION);
	ck_assert_int_eq(sql_int(db, "SELECT count(*) FROM cases WHERE name = 'kept'"), 1);
	ck_assert_int_eq(sql_int(db, "SELECT count(*) FROM quotas WHERE queue = 'a' AND deserved = 2000"), 1);
}
END_TEST

XP_DEFINE_SUITE(queue,
	{"model", .timeout_s = 30, .tests = {amounts, quotas_and_names}},
	{"cli", .timeout_s = 120, .setup = setup, .teardown = teardown,
	 .tests = {round_trip, validation, cycles, audit_and_reads, old_database}})
