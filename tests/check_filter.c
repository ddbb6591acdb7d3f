/* check_filter.c: the filter language (src/model/filter.h): every operator, precedence and
 * grouping, globs, units, unknown values, per-device semantics on nodes, errors with their
 * column, and hostile input (deep nesting, huge numbers, invalid UTF-8, control characters,
 * pathological globs). Expected answers are worked out from the grammar in filter.h by hand. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "model.h"
#include "suitelib.h"
#include "words.h"
#include "xp.h"

/* A row of plain fields for the grammar tests: a=1.5 b=-2 s="H100 SXM" t unset. */
static bool row_get(void *row, const char *field, struct xp_fval *v)
{
	(void)row;
	if (!strcmp(field, "a"))
		*v = (struct xp_fval){XP_FV_NUM, 1.5, NULL};
	else if (!strcmp(field, "b"))
		*v = (struct xp_fval){XP_FV_NUM, -2, NULL};
	else if (!strcmp(field, "s"))
		*v = (struct xp_fval){XP_FV_STR, 0, "H100 SXM"};
	else if (!strcmp(field, "m"))
		*v = (struct xp_fval){XP_FV_NUM, 81920, NULL};
	else
		return false;
	return true;
}

static const struct xp_filter_field row_fields[] = {
	{"a", true, "", NULL},
	{"b", true, "", NULL},
	{"t", true, "", NULL},
	{"m", true, "", "MiB"},
	{"s", false, "", NULL},
	{"u", false, "", NULL},
	{NULL, false, NULL, NULL},
};

/* Compiles expr against row_fields and evaluates it on the row with text "node7 busy"; -1 when
 * it does not compile (err holds why). */
static int ev(const char *expr, struct xp_err *err)
{
	struct xp_err e;
	if (!err)
		err = &e;
	struct xp_filter *f = xp_filter_compile(expr, row_fields, err);
	if (!f)
		return -1;
	int r = xp_filter_eval(f, row_get, NULL, "node7 busy");
	xp_filter_free(f);
	return r;
}

#define T(expr, want) ck_assert_msg(ev(expr, NULL) == (want), "%s: want %d got %d", expr, want, ev(expr, NULL))

START_TEST(operators)
{
	T("a=1.5", 1);
	T("a==1.5", 1);
	T("a:1.5", 1);
	T("a!=1.5", 0);
	T("a!=2", 1);
	T("a<2", 1);
	T("a<1.5", 0);
	T("a<=1.5", 1);
	T("a>1", 1);
	T("a>1.5", 0);
	T("a>=1.5", 1);
	T("b<-1", 1);
	T("b>=-2", 1);
	T("b>-2", 0);
	T("a>+1", 1);
	/* strings: = is a case-insensitive glob, != its negation, < > compare */
	T("s=h100*", 1);
	T("s==*sxm", 1);
	T("s:H100?SXM", 1);
	T("s='H100 SXM'", 1);
	T("s:'H100 SXM'", 1);
	T("s:\"h100 s*\" & a=1.5", 1);
	T("s=\"h100 sxm\"", 1);
	T("s=H100", 0);
	T("s!=A100*", 1);
	T("s!=*100*", 0);
	T("s<I", 1);
	T("s>I", 0);
	/* units */
	T("m=80G", 1);
	T("m>=80GiB", 1);
	T("m>80G", 0);
	T("m<1T", 1);
	T("m=81920", 1);
	T("m>1024K", 1);
}
END_TEST

START_TEST(logic)
{
	T("a=1.5 & b=-2", 1);
	T("a=1.5 && b=-1", 0);
	T("a=0 | b=-2", 1);
	T("a=0 || b=0", 0);
	T("!a=0", 1);
	T("!(a=1.5)", 0);
	T("!!a=1.5", 1);
	/* & binds tighter than |: a=0 & b=0 | s=H* is (a=0 & b=0) | s=H* */
	T("a=0 & b=0 | s=H*", 1);
	T("s=H* | a=0 & b=0", 1);
	T("a=0 & (b=0 | s=H*)", 0);
	T("(a=0 | b=-2) & s=H*", 1);
	/* ! binds tighter than &: !a=0 & b=0 is (!a=0) & b=0 */
	T("!a=0 & b=0", 0);
	T("!(a=0 & b=0)", 1);
	/* side by side means both */
	T("a=1.5 b=-2", 1);
	T("a=1.5 b=0", 0);
	T("((((a=1.5))))", 1);
}
END_TEST

START_TEST(words)
{
	/* a bare word matches the row's text, case-insensitive */
	T("node7", 1);
	T("BUSY", 1);
	T("idle", 0);
	T("node7 busy", 1);
	T("node7 idle", 0);
	T("node7 | idle", 1);
	T("!idle", 1);
	T("'7 bu'", 1);
	/* a colon after a word that is no field keeps the word whole (PCI ids, MIG profiles) */
	struct xp_filter *f = xp_filter_compile("0000:3b:00.0", row_fields, &(struct xp_err){{0}});
	ck_assert_ptr_nonnull(f);
	ck_assert(xp_filter_is_text(f));
	ck_assert(xp_filter_eval(f, row_get, NULL, "gpu at 0000:3b:00.0"));
	ck_assert(!xp_filter_eval(f, row_get, NULL, "gpu at 0000:3c:00.0"));
	ck_assert(!xp_filter_eval(f, row_get, NULL, NULL));
	xp_filter_free(f);
	f = xp_filter_compile("a>1", row_fields, &(struct xp_err){{0}});
	ck_assert(!xp_filter_is_text(f));
	xp_filter_free(f);
}
END_TEST

START_TEST(unknown_values)
{
	/* t is a field the row cannot say: every comparison is false but != */
	T("t=1", 0);
	T("t<1", 0);
	T("t>=0", 0);
	T("t!=1", 1);
	T("u=x", 0);
	T("u!=x", 1);
	T("!t=1", 1);
}
END_TEST

/* The error for expr, which must not compile. */
static const char *err_of(const char *expr, const struct xp_filter_field *fields)
{
	static struct xp_err e;
	struct xp_filter *f = xp_filter_compile(expr, fields, &e);
	ck_assert_msg(!f, "%s compiled", expr);
	return e.msg;
}

#define E(expr, want) \
	ck_assert_msg(strstr(err_of(expr, row_fields), want), "%s: want '%s' in '%s'", expr, want, err_of(expr, row_fields))

START_TEST(errors)
{
	E("", "empty expression");
	E("   ", "empty expression");
	E("tmp>85", "column 1: unknown field 'tmp' (fields: a b t m s u)");
	E("a=1 & tmp>85", "column 7: unknown field 'tmp'");
	E("a>", "column 2: a value must follow the operator");
	E("a>x", "column 3: 'x' is not a number for a");
	E("m>80X", "column 3: '80X' is not a number for m (in MiB)");
	E("a=1 &", "column 6: expression ends where a term was expected");
	E("(a=1", "column 1: '(' is not closed");
	E("a=1)", "column 4: ')' without '('");
	E("a=1 & )", "column 7: expected a field or a word at ')'");
	E("s='abc", "column 3: unterminated quote '");
	E("'s'=x", "column 1: a field name is not quoted");
	E("a=1 = 2", "column 5: unexpected '='");
	E("s:", "column 3: a value must follow ':'");
	E("a=1 modle:H100*", "column 5: unknown field 'modle'");
	/* columns count characters, not bytes */
	E("\xc3\xa9\xc3\xa9 & tmp>1", "column 6: unknown field 'tmp'");
	/* a view that filters by words only names that */
	ck_assert(strstr(err_of("a>1", NULL), "column 1: unknown field 'a' (this view filters by words only)"));
}
END_TEST

static char long_s[65536];

static bool long_get(void *row, const char *field, struct xp_fval *v)
{
	(void)row, (void)field;
	*v = (struct xp_fval){XP_FV_STR, 0, long_s};
	return true;
}

START_TEST(hostile)
{
	char *s = xp_malloc(XP_FILTER_MAX_LEN + 2);
	/* nesting: 64 levels compile, 65 do not */
	size_t n = 0;
	for (int i = 0; i < XP_FILTER_MAX_DEPTH - 1; i++)
		s[n++] = '(';
	n += (size_t)sprintf(s + n, "a=1.5");
	for (int i = 0; i < XP_FILTER_MAX_DEPTH - 1; i++)
		s[n++] = ')';
	s[n] = '\0';
	ck_assert_int_eq(ev(s, NULL), 1);
	n = 0;
	for (int i = 0; i < 3000; i++)
		s[n++] = '(';
	s[n] = '\0';
	ck_assert(strstr(err_of(s, row_fields), "nested deeper than 64"));
	memset(s, '!', 3000);
	s[3000] = '\0';
	ck_assert(strstr(err_of(s, row_fields), "nested deeper than 64"));
	/* length */
	memset(s, 'x', XP_FILTER_MAX_LEN + 1);
	s[XP_FILTER_MAX_LEN + 1] = '\0';
	ck_assert(strstr(err_of(s, row_fields), "longer than 4096 bytes"));
	/* the longest accepted: one word */
	s[XP_FILTER_MAX_LEN] = '\0';
	ck_assert_int_eq(ev(s, NULL), 0);
	/* a long chain of terms: no recursion per '&' */
	n = 0;
	while (n + 8 < XP_FILTER_MAX_LEN)
		n += (size_t)sprintf(s + n, "a=1.5 & ");
	sprintf(s + n, "a=1.5");
	ck_assert_int_eq(ev(s, NULL), 1);
	free(s);
	/* numbers */
	E("a>1e400", "'1e400' is not a number");
	E("a>nan", "'nan' is not a number");
	E("a>inf", "'inf' is not a number");
	E("a>0x10", "'0x10' is not a number");
	E("a>99999999999999999999999999999999999999999999999", "is not a number");
	T("a<99999999999999999999999999999999999", 1);
	T("m>99999999999999999999999999999999999T", 0);
	/* bytes */
	E("a=1\x01", "column 4: control character 0x01");
	E("s=\x1b[31m", "column 3: control character 0x1b");
	E("s=\xff", "column 3: invalid UTF-8");
	E("s=\xc3", "column 3: invalid UTF-8");
	E("s=\xe2\x80", "column 3: invalid UTF-8");
	E("\xed\xa0\x80", "column 1: invalid UTF-8"); /* a surrogate */
	T("s!=\xe2\x80\xae*", 1);                     /* U+202E is a character like any other here */
	/* a glob that naive backtracking matches in exponential time: answered at once (a hang
	 * here is the test's timeout) */
	char pat[256];
	n = (size_t)sprintf(pat, "s=");
	for (int i = 0; i < 40; i++)
		n += (size_t)sprintf(pat + n, "*a");
	sprintf(pat + n, "*b");
	memset(long_s, 'a', sizeof long_s - 1);
	struct xp_err e;
	struct xp_filter *f = xp_filter_compile(pat, row_fields, &e);
	ck_assert_ptr_nonnull(f);
	ck_assert(!xp_filter_eval(f, long_get, NULL, NULL));
	long_s[sizeof long_s - 2] = 'b';
	ck_assert(xp_filter_eval(f, long_get, NULL, NULL));
	xp_filter_free(f);
}
END_TEST

/* A node of two devices for the node semantics: ACC0 hot on NUMA 1, ACC1 cool on NUMA 0. */
static struct xp_node *two_devices(void)
{
	struct xp_node *n = xp_node_new("gpu7");
	n->rack = xp_strdup("r12");
	xp_labels_set(&n->governance, "pool", "train");
	struct xp_device *d = xp_node_add_device(n);
	d->model = xp_strdup("H100 80GB HBM3");
	d->temperature_c = 91;
	d->numa = 1;
	d->health = XP_HEALTH_WARN;
	d->memory_mib = 81559;
	d->memory_used_mib = 40000;
	d->utilization_pct = 97;
	d->power_w = 650;
	d = xp_node_add_device(n);
	d->model = xp_strdup("H100 80GB HBM3");
	d->temperature_c = 40;
	d->numa = 0;
	d->health = XP_HEALTH_OK;
	d->memory_mib = 81559;
	d->memory_used_mib = 0;
	d->utilization_pct = 0;
	d->power_w = 70;
	return n;
}

static int node_ev(const struct xp_node *n, const char *expr)
{
	struct xp_err e;
	struct xp_filter *f = xp_filter_compile(expr, xp_filter_node_fields, &e);
	ck_assert_msg(f, "%s: %s", expr, e.msg);
	int r = xp_filter_node(f, n, NULL);
	xp_filter_free(f);
	return r;
}

#define N(n, expr, want) ck_assert_msg(node_ev(n, expr) == (want), "%s: want %d", expr, want)

START_TEST(nodes)
{
	struct xp_node *n = two_devices();
	/* one device must make the whole expression true */
	N(n, "temp>85", 1);
	N(n, "temp>85 & numa==1", 1);
	N(n, "temp>85 & numa==0", 0);
	N(n, "temp<50 & numa==0", 1);
	N(n, "health!=ok", 1);
	N(n, "health=fail", 0);
	N(n, "model:H100*", 1);
	N(n, "model:H100* & free>=1", 1); /* ACC0 and ACC1 unallocated, neither failed */
	N(n, "model:H100* & free>=4", 0);
	N(n, "free=2 & devices=2", 1);
	N(n, "rack=r12 & label.pool=train", 1);
	N(n, "label.pool=infer", 0);
	N(n, "label.nothere=x", 0);
	N(n, "label.nothere!=x", 1);
	N(n, "mem>=39G & util>90", 1);
	N(n, "mem>=39G & util<90", 0);
	N(n, "power>=0.6kW", 1);
	N(n, "temp>=91C", 1);
	N(n, "util>=97%", 1);
	N(n, "state=up & name=gpu*", 1);
	N(n, "GPU7", 1); /* a word against the name */
	N(n, "zone=z1", 0); /* no zone: not equal */
	N(n, "zone!=z1", 1);
	/* a failed device is not free; a down node has none */
	n->devices[1].health = XP_HEALTH_FAIL;
	N(n, "free=1", 1);
	n->state = XP_NODE_DOWN;
	N(n, "free=0", 1);
	N(n, "state=down", 1);
	xp_node_free(n);
	/* a node without devices: device fields are not known, health is its state's */
	n = xp_node_new("cpu1");
	N(n, "health=ok", 1);
	N(n, "health!=ok", 0);
	N(n, "temp>0", 0);
	N(n, "model!=H100*", 1);
	n->state = XP_NODE_UNREACHABLE;
	N(n, "health=fail", 1);
	xp_node_free(n);
}
END_TEST

START_TEST(devices)
{
	struct xp_node *n = two_devices();
	struct xp_err e;
	struct xp_filter *f = xp_filter_compile("temp>85 | dev=1 & power<100", xp_filter_node_fields, &e);
	ck_assert_ptr_nonnull(f);
	ck_assert(xp_filter_device(f, n, &n->devices[0], NULL));
	ck_assert(xp_filter_device(f, n, &n->devices[1], NULL));
	xp_filter_free(f);
	f = xp_filter_compile("dev=1 & temp>85", xp_filter_node_fields, &e);
	ck_assert(!xp_filter_device(f, n, &n->devices[0], NULL));
	ck_assert(!xp_filter_device(f, n, &n->devices[1], NULL));
	ck_assert(!xp_filter_node(f, n, NULL));
	xp_filter_free(f);
	xp_node_free(n);
	/* every node field the manual lists compiles */
	for (const struct xp_filter_field *fd = xp_filter_node_fields; fd->name; fd++) {
		char expr[64];
		snprintf(expr, sizeof expr, "%s%s%s", fd->name, fd->name[strlen(fd->name) - 1] == '.' ? "k" : "",
			 fd->numeric ? ">=0" : "=x*");
		f = xp_filter_compile(expr, xp_filter_node_fields, &e);
		ck_assert_msg(f, "%s: %s", expr, e.msg);
		xp_filter_free(f);
	}
}
END_TEST

/* Random token soup, compiled and (when it parses) evaluated on a node: never a crash, a leak or
 * an error without a column (the sanitizer build runs this too). */
START_TEST(token_soup)
{
	static const char *const toks[] = {"temp", ">", "85", "&", "|", "!", "(", ")", "'", "\"", "model", ":",
					   "H100*", " ", "=", "<=", ">=", "!=", "label.pool", "\xff", "1e400",
					   "*", "?", "numa", "0", "-", "80G", "free", "x", "\xc3\xa9", "&&", "||",
					   "util%", "50%", "0000:3b:00.0"};
	struct xp_node *n = two_devices();
	unsigned seed = 12345;
	char expr[512];
	int parsed = 0;
	for (int i = 0; i < 20000; i++) {
		size_t len = 0;
		int k = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 12;
		for (int j = 0; j < k; j++) {
			const char *t = toks[((seed = seed * 1103515245u + 12345u) >> 16) % (sizeof toks / sizeof *toks)];
			size_t tl = strlen(t);
			if (len + tl + 1 >= sizeof expr)
				break;
			memcpy(expr + len, t, tl);
			len += tl;
		}
		expr[len] = '\0';
		struct xp_err e = {{0}};
		struct xp_filter *f = xp_filter_compile(expr, xp_filter_node_fields, &e);
		if (f) {
			parsed++;
			(void)xp_filter_node(f, n, "some text");
			xp_filter_free(f);
		} else {
			ck_assert_msg(!strncmp(e.msg, "column ", 7) || !strcmp(e.msg, "empty expression"),
				      "%s: %s", expr, e.msg);
		}
	}
	/* the soup is not all errors: the parser's success path ran too */
	ck_assert_int_gt(parsed, 1000);
	xp_node_free(n);
}
END_TEST

/* A filter (or a node name) in a view string comes back whole from the command line's split,
 * whatever quotes and backslashes it holds: bookmarks and `view --json`'s command rely on it. */
START_TEST(quote_roundtrip)
{
	static const char *const v[] = {"h800", "temp>85 & numa==0", "model='H100 SXM*'",
					"model=\"H100 SXM*\" & label.pool='train'", "a\\b \"c\" 'd'", "x\\",
					"", "#not a comment", "cr\rin", "lf\nin", NULL};
	for (int i = 0; v[i]; i++)
		for (int always = 0; always < 2; always++) {
			char *q = always ? xp_cmd_quote_always(v[i]) : xp_cmd_quote(v[i]);
			char *line = xp_asprintf("view --filter %s", q);
			int argc = 0;
			char **argv = NULL;
			struct xp_err e;
			ck_assert_msg(xp_cmd_split(line, &argc, &argv, &e) == 0, "%s: %s", line, e.msg);
			ck_assert_msg(argc == 3 && !strcmp(argv[2], v[i]), "%s: %d words, '%s'", line, argc,
				      argc > 2 ? argv[2] : "");
			xp_cmd_split_free(argc, argv);
			free(line);
			free(q);
		}
}
END_TEST

XP_DEFINE_SUITE(filter, {"grammar", .tests = {operators, logic, words, unknown_values, errors}},
		{"hostile", .tests = {hostile, token_soup}}, {"nodes", .tests = {nodes, devices, quote_roundtrip}});
