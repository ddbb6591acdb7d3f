/* fakehost.c: the adapter suites' fake host and their file helpers, one copy for every adapter
 * (amd, ascend, cambricon, nvidia), so a change to the host's contract is made once. */
#include "fakehost.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

struct xp_fake xp_fake;

void xp_fake_reset(void)
{
	memset(&xp_fake, 0, sizeof xp_fake);
	xp_fake.fail = "exit status 1";
}

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

void xp_fake_answer(struct xp_fake_rule r)
{
	size_t i = 0;
	while (i < xp_fake.n_rules &&
	       !(same(xp_fake.rules[i].prog, r.prog) && same(xp_fake.rules[i].args, r.args) &&
		 same(xp_fake.rules[i].has, r.has)))
		i++;
	ck_assert_uint_lt(i, XP_FAKE_MAX_RULES);
	xp_fake.rules[i] = r;
	if (i == xp_fake.n_rules)
		xp_fake.n_rules++;
}

bool xp_fake_saw(const char *arg)
{
	for (int i = 1; i < xp_fake.argc; i++)
		if (strcmp(xp_fake.argv[i], arg) == 0)
			return true;
	return false;
}

static bool matches(const struct xp_fake_rule *r, const char *prog, const char *args)
{
	return (!r->prog || strcmp(r->prog, prog) == 0) && (!r->args || strcmp(r->args, args) == 0) &&
	       (!r->has || xp_fake_saw(r->has));
}

/* The host's run: records the call, then answers from the first matching rule. */
static int fake_run(const char *const *argv, double timeout_s, size_t max_out, char **out, size_t *len,
		    char *err, size_t errlen)
{
	xp_fake.calls++;
	ck_assert(timeout_s > 0 && max_out > 0);
	if (xp_fake.want_timeout_s > 0)
		ck_assert_double_eq_tol(timeout_s, xp_fake.want_timeout_s, 1e-9);
	if (xp_fake.want_max_out > 0)
		ck_assert_uint_eq(max_out, xp_fake.want_max_out);
	char args[4096] = "";
	size_t al = 0;
	int n = 0;
	for (; argv[n]; n++) {
		ck_assert_int_lt(n, XP_FAKE_MAX_ARGS);
		ck_assert_uint_lt(strlen(argv[n]), sizeof xp_fake.argv[n]);
		snprintf(xp_fake.argv[n], sizeof xp_fake.argv[n], "%s", argv[n]);
		if (n > 0)
			al += (size_t)snprintf(args + al, sizeof args - al, "%s%s", n > 1 ? " " : "", argv[n]);
		ck_assert_uint_lt(al, sizeof args);
	}
	xp_fake.argc = n;
	const char *base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	for (size_t i = 0; i < xp_fake.n_rules; i++)
		if (matches(&xp_fake.rules[i], base, args)) {
			if (!xp_fake.rules[i].out)
				break;
			*out = strdup(xp_fake.rules[i].out);
			ck_assert_ptr_nonnull(*out);
			*len = strlen(*out);
			return 0;
		}
	snprintf(err, errlen, "%s", xp_fake.fail ? xp_fake.fail : "exit status 1");
	return -1;
}

/* The host's replay, as xpool's own: name in the host's directory, absent is 0, too big is -1. */
static int fake_replay(const struct xp_host *h, const char *name, size_t max, char **out, size_t *len,
		       char *err, size_t errlen)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", h->replay_dir, name);
	FILE *f = fopen(path, "rb");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	char *buf = malloc(max + 1);
	ck_assert_ptr_nonnull(buf);
	size_t n = fread(buf, 1, max + 1, f);
	fclose(f);
	if (n > max) {
		free(buf);
		snprintf(err, errlen, "%s: larger than %zu bytes", path, max);
		return -1;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 1;
}

static void fake_free(void *p)
{
	free(p);
}

struct xp_host xp_fake_host(const char *replay_dir)
{
	struct xp_host h = {.abi = XP_ADAPTER_ABI, .replay_dir = replay_dir, .run = fake_run,
			    .replay = fake_replay, .free = fake_free};
	return h;
}

char *xp_file_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s: %s", path, strerror(errno));
	char *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			ck_assert_ptr_nonnull(buf);
		}
		size_t r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (r == 0)
			break;
	}
	ck_assert_msg(!ferror(f), "cannot read %s", path);
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

char *xp_fixture_text(const char *rel, size_t *len)
{
	return xp_file_text(xp_fixture(rel), len);
}

struct xp_raw_node *xp_fake_node(void)
{
	struct xp_raw_node *n = malloc(sizeof *n);
	ck_assert_ptr_nonnull(n);
	xp_raw_node_init(n);
	return n;
}

char *xp_fake_huge(const char *unit, size_t ulen, size_t *whole)
{
	char *g = malloc(XP_FAKE_HUGE);
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_gt(ulen, 0);
	if (ulen == 1)
		memset(g, unit[0], XP_FAKE_HUGE);
	else
		for (size_t off = 0; off < XP_FAKE_HUGE; off += ulen)
			memcpy(g + off, unit, XP_FAKE_HUGE - off < ulen ? XP_FAKE_HUGE - off : ulen);
	if (whole)
		*whole = XP_FAKE_HUGE - XP_FAKE_HUGE % ulen;
	return g;
}

void xp_fake_refuses(xp_fake_parser *parse, const char *const *texts)
{
	char err[256];
	struct xp_raw_node *n = xp_fake_node();
	snprintf(n->hostname, sizeof n->hostname, "kept");
	ck_assert_int_eq(parse("", 0, n, err, sizeof err), -1);
	ck_assert_int_eq(parse(NULL, 0, n, err, sizeof err), -1);
	for (size_t i = 0; texts[i]; i++)
		ck_assert_msg(parse(texts[i], strlen(texts[i]), n, err, sizeof err) == -1, "accepted: %s", texts[i]);
	ck_assert_int_eq(n->n_devices, 0);
	ck_assert_str_eq(n->hostname, "kept");
	free(n);
}

bool xp_fake_warned(const struct xp_raw_node *n, const char *part)
{
	for (int i = 0; i < n->n_warnings; i++)
		if (strstr(n->warnings[i], part))
			return true;
	return false;
}

/* The fields xp_fake_want knows, by the names struct xp_raw_device gives them. */
enum want_kind { WANT_STR, WANT_INT, WANT_I64, WANT_DBL };
static const struct {
	const char *name;
	enum want_kind kind;
	size_t off;
} want_fields[] = {
#define F(field, kind) {#field, kind, offsetof(struct xp_raw_device, field)}
	F(index, WANT_INT), F(chip, WANT_INT), F(bus_id, WANT_STR), F(name, WANT_STR),
	F(arch, WANT_STR), F(uuid, WANT_STR), F(serial, WANT_STR), F(driver, WANT_STR),
	F(firmware, WANT_STR), F(runtime, WANT_STR), F(memory_total_mib, WANT_I64),
	F(memory_used_mib, WANT_I64), F(temperature_c, WANT_DBL), F(power_w, WANT_DBL),
	F(power_limit_w, WANT_DBL), F(utilization_pct, WANT_DBL), F(ecc_corrected, WANT_I64),
	F(ecc_uncorrected, WANT_I64), F(retired_pages, WANT_I64), F(health, WANT_STR),
	F(n_reasons, WANT_INT), F(mig_mode, WANT_INT), F(n_slices, WANT_INT), F(numa, WANT_INT),
	F(group, WANT_STR),
#undef F
};

void xp_fake_want(const struct xp_raw_device *d, const char *what, const char *const *want)
{
	for (; *want; want++) {
		const char *eq = strchr(*want, '=');
		ck_assert_msg(eq != NULL, "%s: \"%s\" is not field=value", what, *want);
		size_t nl = (size_t)(eq - *want), i = 0;
		while (i < sizeof want_fields / sizeof want_fields[0] &&
		       !(strlen(want_fields[i].name) == nl && strncmp(want_fields[i].name, *want, nl) == 0))
			i++;
		ck_assert_msg(i < sizeof want_fields / sizeof want_fields[0], "%s: no field \"%.*s\"", what,
			      (int)nl, *want);
		const char *at = (const char *)d + want_fields[i].off, *v = eq + 1;
		char *end = NULL;
		switch (want_fields[i].kind) {
		case WANT_STR:
			ck_assert_msg(strcmp(at, v) == 0, "%s: %s is \"%s\", want \"%s\"", what,
				      want_fields[i].name, at, v);
			break;
		case WANT_INT:
		case WANT_I64: {
			int64_t got = want_fields[i].kind == WANT_INT ? *(const int *)at : *(const int64_t *)at;
			int64_t w = strtoll(v, &end, 10);
			ck_assert_msg(*v && !*end, "%s: \"%s\" is not a whole number", what, *want);
			ck_assert_msg(got == w, "%s: %s is %" PRId64 ", want %s", what, want_fields[i].name,
				      got, v);
			break;
		}
		case WANT_DBL: {
			double got = *(const double *)at, w = strtod(v, &end);
			ck_assert_msg(*v && !*end, "%s: \"%s\" is not a number", what, *want);
			/* A whole number exactly; a fraction within 1e-9, as the parsers may scale
			 * ("26.78 W" can come out as 26.779999999999998). */
			bool ok = isnan(w) ? isnan(got) : w == trunc(w) ? got == w : fabs(got - w) <= 1e-9;
			ck_assert_msg(ok, "%s: %s is %.17g, want %s", what, want_fields[i].name, got, v);
			break;
		}
		}
	}
}

struct xp_raw_node *xp_fake_expect_one(const struct xp_fake_expect *e, xp_fake_parser *parse)
{
	size_t len;
	char *text = xp_fixture_text(e->file, &len), err[256] = "";
	struct xp_raw_node *n = xp_fake_node();
	ck_assert_msg(parse(text, len, n, err, sizeof err) == 0, "%s: %s", e->file, err);
	free(text);
	ck_assert_int_eq(n->n_devices, 1);
	xp_fake_want(&n->devices[0], e->file, e->want);
	if (e->more)
		e->more(n);
	return n;
}

void xp_fake_file(const char *dir, const char *name, const char *text, size_t len, unsigned mode)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	ck_assert_msg(f != NULL, "cannot write %s: %s", path, strerror(errno));
	ck_assert_uint_eq(fwrite(text, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, (mode_t)mode), 0);
}

void xp_fake_copy(const char *dir, const char *name, const char *rel)
{
	size_t len;
	char *text = xp_fixture_text(rel, &len);
	xp_fake_file(dir, name, text, len, 0644);
	free(text);
}

void xp_fake_unlink(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	unlink(path);
}

const char *xp_fake_tool(const char *dir, const char *name)
{
	static char path[4096];
	xp_fake_file(dir, name, "#!/bin/sh\nexit 1\n", 17, 0755);
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return path;
}

void xp_fake_rmdir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			xp_fake_unlink(dir, e->d_name);
	closedir(d);
	rmdir(dir);
}

char *xp_fake_path_set(const char *path)
{
	const char *old = getenv("PATH");
	char *copy = old ? strdup(old) : NULL;
	ck_assert(!old || copy);
	setenv("PATH", path, 1);
	return copy;
}

void xp_fake_path_restore(char *old)
{
	if (old)
		setenv("PATH", old, 1);
	else
		unsetenv("PATH");
	free(old);
}

void xp_fake_open(struct xp_fake_session *s, const struct xp_adapter *a, bool replay)
{
	memset(s, 0, sizeof *s);
	xp_fake_reset();
	s->a = a;
	snprintf(s->dir, sizeof s->dir, "/tmp/xp_%s_XXXXXX", a->name);
	ck_assert_ptr_nonnull(mkdtemp(s->dir));
	s->h = xp_fake_host(replay ? s->dir : NULL);
	/* Live: only what the test puts in the directory is on PATH, so no real tool is found. */
	if (!replay)
		s->old_path = xp_fake_path_set(s->dir);
	s->n = xp_fake_node();
}

int xp_fake_probe(struct xp_fake_session *s)
{
	if (s->st)
		s->a->close(s->st);
	s->st = NULL;
	s->why[0] = '\0';
	return s->a->probe(&s->h, &s->st, s->why, sizeof s->why);
}

void xp_fake_close(struct xp_fake_session *s)
{
	if (s->st)
		s->a->close(s->st);
	s->st = NULL;
	if (!s->h.replay_dir)
		xp_fake_path_restore(s->old_path);
	s->old_path = NULL;
	free(s->n);
	s->n = NULL;
	xp_fake_rmdir(s->dir);
}
