/* check_looking.c: a read is a read. Looking at a cluster (the console, inventory, health,
 * place --dry-run, validate matrix, audit) on a snapshot or a sim gen file never writes the
 * database; a live source (a replay here) records what it discovered only when it changed;
 * evidence turns stale only through a real node of the same name, and says who saw it. */
#include <check.h>
#include <stdarg.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checklib.h"
#include "sha256.h"
#include "suitelib.h"
#include "testlib.h"
#include "tmuxlib.h"
#include "xp.h"

static char dir[128], db[192], sim_a[192], sim_b[192];

static void suite_setup(void)
{
	xp_tmux_suite_setup("looking");
}

static void setup(void)
{
	xp_tmux_test_dir(dir, sizeof dir);
	snprintf(db, sizeof db, "%s/v.db", dir);
	snprintf(sim_a, sizeof sim_a, "%s/a.json", dir);
	snprintf(sim_b, sizeof sim_b, "%s/b.json", dir);
}

static void teardown(void)
{
	xp_tmux_test_dir_done(dir);
}

/* Runs xpool --db DB ARGS... and checks the exit status. */
static void xp_ok(int status, ...)
{
	va_list ap;
	va_start(ap, status);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpoolv(&r, NULL, ap), 0);
	va_end(ap);
	/* Capped: libcheck gives up on a longer message (a sanitizer's report can be long). */
	ck_assert_msg(r.status == status, "exit %d, wanted %d: %.300s%.2000s", r.status, status, r.out, r.err);
	xp_run_free(&r);
}

/* stdout of xpool --db DB ARGS... (caller frees); the command must succeed. */
static char *xp_out(const char *first, ...)
{
	const char *argv[24] = {xp_bin(), "--db", db, first};
	size_t n = 4;
	va_list ap;
	va_start(ap, first);
	for (const char *a; n < 23 && (a = va_arg(ap, const char *));)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	struct xp_run r;
	ck_assert_int_eq(xp_run_argv(&r, (char *const *)argv, NULL), 0);
	ck_assert_msg(r.status == 0, "%s: exit %d: %.2000s", first, r.status, r.err);
	char *out = r.out;
	r.out = NULL;
	xp_run_free(&r);
	return out;
}

/* The digest of the database file, or "none" when there is no file. */
static void digest(char hex[65])
{
	struct xp_err err = {{0}};
	if (access(db, F_OK) != 0 || xp_sha256_file(db, hex, &err) < 0)
		strcpy(hex, "none");
}

/* What the database holds, as its owner reads it: `db info`, then the whole audit log. */
static char *contents(void)
{
	if (access(db, F_OK) != 0)
		return xp_strdup("no database");
	char *info = xp_out("db", "info", NULL), *audit = xp_out("audit", "--json", NULL);
	char *all = xp_asprintf("%s%s", info, audit);
	free(info);
	free(audit);
	return all;
}

/* The database as a file and as its owner reads it. */
struct state {
	char digest[65];
	char *contents;
};

static void take(struct state *st)
{
	digest(st->digest);
	st->contents = contents();
}

/* Checks the database is as st found it, and frees st. */
static void unchanged(struct state *st)
{
	struct state now;
	take(&now);
	ck_assert_str_eq(now.contents, st->contents);
	ck_assert_str_eq(now.digest, st->digest);
	free(now.contents);
	free(st->contents);
}

/* Two sim gen clusters with the same node names, h100-00002 with another driver in b. */
static void two_sims(void)
{
	xp_ok(0, "sim", "gen", "--nodes", "8", "--seed", "1", "-o", sim_a, NULL);
	json_error_t je;
	json_t *j = json_load_file(sim_a, 0, &je);
	ck_assert_msg(j != NULL, "%s", je.text);
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(j, "nodes"), i, n)
	{
		if (strcmp(json_string_value(json_object_get(n, "name")), "h100-00002") != 0)
			continue;
		size_t k;
		json_t *d;
		json_array_foreach(json_object_get(n, "devices"), k, d)
			json_object_set_new(d, "driver", json_string("999.99.99"));
	}
	ck_assert_int_eq(json_dump_file(j, sim_b, JSON_INDENT(1)), 0);
	json_decref(j);
}

/* The id of h100-00002's environment in sim_a (caller frees). */
static char *h100_env(void)
{
	char *out = xp_out("--inventory", sim_a, "validate", "env", "list", "--json", NULL);
	json_t *j = json_loads(out, 0, NULL);
	ck_assert_msg(j != NULL, "%.2000s", out);
	char *id = NULL;
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(j, "environments"), i, e)
	{
		const char *s = json_string_value(json_object_get(e, "id"));
		if (!id && strstr(s, "H100 SXM"))
			id = xp_strdup(s);
	}
	json_decref(j);
	free(out);
	ck_assert_ptr_nonnull(id);
	return id;
}

/* Every read command on a sim file: the database stays exactly as it was (or absent). */
static void look_at(const char *sim)
{
	xp_ok(0, "--db", db, "--inventory", sim, "inventory", NULL);
	xp_ok(0, "--db", db, "--inventory", sim, "inventory", "--json", NULL);
	xp_ok(0, "--db", db, "--inventory", sim, "place", "--dry-run", "--devices", "1", NULL);
	xp_ok(0, "--db", db, "--inventory", sim, "validate", "matrix", NULL);
	xp_ok(0, "--db", db, "--inventory", sim, "validate", "matrix", "--json", NULL);
	xp_ok(0, "--db", db, "--inventory", sim, "validate", "case", "list", NULL);
	xp_ok(0, "--db", db, "--inventory", sim, "validate", "env", "list", NULL);
	xp_ok(0, "--db", db, "audit", NULL);
	xp_ok(0, "--db", db, "baseline", "list", NULL);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--inventory", sim, "health", NULL), 0);
	xp_run_free(&r); /* health's status says what it found; the point here is what it wrote */
}

START_TEST(reads_on_files_write_nothing)
{
	two_sims();
	/* No database: looking does not make one. */
	look_at(sim_a);
	look_at(sim_b);
	ck_assert_msg(access(db, F_OK) != 0, "a read command created %s", db);

	/* A database with evidence taken on h100-00002. */
	xp_ok(0, "--db", db, "validate", "case", "add", "llama", NULL);
	xp_ok(0, "--db", db, "--inventory", sim_a, "validate", "sync", NULL);
	char *env = h100_env();
	xp_ok(0, "--db", db, "--inventory", sim_a, "validate", "record", env, "llama", "schedulable", "pass", "--node",
	      "h100-00002", NULL);
	struct state st;
	take(&st);
	look_at(sim_a);
	look_at(sim_b);
	unchanged(&st);

	/* Asked to record sim b: its environments join, but a sim node shares only a name with
	 * the node the evidence was taken on: nothing turns stale. */
	xp_ok(0, "--db", db, "--inventory", sim_b, "validate", "sync", NULL);
	char *csv = xp_out("--inventory", sim_b, "validate", "matrix", "--csv", NULL); /* a file: no live discovery */
	char want[512];
	snprintf(want, sizeof want, "%s,llama,schedulable,pass,", env);
	ck_assert_msg(strstr(csv, want) != NULL, "%.2000s", csv);
	ck_assert_ptr_null(strstr(csv, ",stale,"));
	free(csv);

	/* The same file with h100-00002 a real machine (an inventory --json of it): synced, it
	 * speaks for the node, and the stale note names the file it was seen in. */
	json_error_t je;
	json_t *j = json_load_file(sim_b, 0, &je);
	ck_assert_msg(j != NULL, "%s", je.text);
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(j, "nodes"), i, n)
		json_object_set_new(n, "source", json_string("local"));
	char real[256];
	snprintf(real, sizeof real, "%s/real.json", dir);
	ck_assert_int_eq(json_dump_file(j, real, JSON_INDENT(1)), 0);
	json_decref(j);
	xp_ok(0, "--db", db, "--inventory", real, "validate", "sync", NULL);
	char *hist = xp_out("validate", "history", env, "llama", "--json", NULL);
	ck_assert_msg(strstr(hist, "-> 999.99.99 on h100-00002 (seen in ") && strstr(hist, real), "%.2000s", hist);
	free(hist);
	free(env);
}
END_TEST

/* A copy of the DGX replay with another driver, as after an update on the machine. */
static char *replay_with_driver(const char *sub, const char *driver)
{
	char *d = xp_replay_dgx(dir);
	char *to = xp_asprintf("%s/%s", dir, sub);
	ck_assert_int_eq(rename(d, to), 0);
	free(d);
	char *xml = xp_asprintf("%s/nvidia-smi-q-x.xml", to);
	FILE *f = fopen(xml, "rb");
	ck_assert_ptr_nonnull(f);
	static char text[1 << 20];
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = '\0';
	char *out = xp_calloc(1, n * 2 + 1);
	size_t k = 0;
	for (const char *p = text; *p;) {
		if (strncmp(p, "535.54.03", 9) == 0) {
			memcpy(out + k, driver, strlen(driver));
			k += strlen(driver);
			p += 9;
		} else {
			out[k++] = *p++;
		}
	}
	f = fopen(xml, "wb");
	ck_assert_int_eq((int)fwrite(out, 1, strlen(out), f), (int)strlen(out));
	fclose(f);
	free(out);
	free(xml);
	return to;
}

START_TEST(live_records_only_changes)
{
	char *dgx = replay_with_driver("dgx", "535.54.03");
	xp_ok(0, "--db", db, "validate", "case", "add", "llama", NULL);
	/* The first look at a live source records what it found... */
	xp_ok(0, "--db", db, "--replay", dgx, "validate", "matrix", NULL);
	char *audit = xp_out("audit", NULL);
	ck_assert_msg(strstr(audit, "env.discover") && strstr(audit, "validate.discover"), "%.2000s", audit);
	free(audit);
	/* ...and the second, on an unchanged node, nothing at all. */
	struct state st;
	take(&st);
	xp_ok(0, "--db", db, "--replay", dgx, "validate", "matrix", NULL);
	xp_ok(0, "--db", db, "--replay", dgx, "validate", "matrix", "--json", NULL);
	unchanged(&st);

	/* Evidence on the node, then a driver update there: stale, and the note names the source. */
	char *out = xp_out("--replay", dgx, "validate", "env", "list", "--json", NULL);
	json_t *j = json_loads(out, 0, NULL);
	const char *env = json_string_value(json_object_get(json_array_get(json_object_get(j, "environments"), 0), "id"));
	xp_ok(0, "--db", db, "--replay", dgx, "validate", "record", env, "llama", "schedulable", "pass", NULL);
	char *dgx2 = replay_with_driver("dgx2", "550.54.14");
	/* The replay's node is named by its hostname file, so both are dgx-a100-07. */
	xp_ok(0, "--db", db, "--replay", dgx2, "validate", "matrix", NULL);
	out = (free(out), xp_out("validate", "history", env, "llama", "--json", NULL));
	ck_assert_msg(strstr(out, "driver 535.54.03 -> 550.54.14 on dgx-a100-07 (seen by replay:"), "%.2000s", out);
	json_decref(j);
	free(out);
	free(dgx);
	free(dgx2);
}
END_TEST

/* The console on one sim file, then another, as an operator flips between clusters. */
static void console_on(const char *how, const char *what, const char *node, const char *view4)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "env LANG=C.UTF-8 TERM=screen-256color XDG_STATE_HOME=%s %s --db %s %s %s; "
				  "echo $? > %s/rc",
		 dir, xp_bin(), db, how, what, dir);
	char rc[256];
	snprintf(rc, sizeof rc, "%s/rc", dir);
	unlink(rc);
	xp_tmux_start(cmd, 160, 40);
	xp_tmux_expect(node);
	xp_tmux_keys("4"); /* the validation view reads (and, for a live source, syncs) the store */
	xp_tmux_expect(view4);
	xp_tmux_keys("r"); /* a refresh reloads the source: a new cluster for the view to sync */
	xp_tmux_keys("5");
	xp_tmux_keys("1");
	xp_tmux_keys("r");
	xp_tmux_expect(node);
	xp_tmux_keys("4");
	xp_tmux_expect(view4);
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
	xp_tmux_kill_server();
}

START_TEST(console_on_files_writes_nothing)
{
	two_sims();
	xp_ok(0, "--db", db, "validate", "case", "add", "llama", NULL);
	struct state st;
	take(&st);
	console_on("--inventory", sim_a, "h100-00002", "looking records nothing");
	console_on("--inventory", sim_b, "h100-00002", "looking records nothing");
	unchanged(&st);
	/* A live source recorded once: the console, refreshing it, writes nothing more. */
	char *dgx = replay_with_driver("dgx", "535.54.03");
	xp_ok(0, "--db", db, "--replay", dgx, "validate", "matrix", NULL);
	take(&st);
	console_on("--replay", dgx, "dgx-a100-07", "A100");
	unchanged(&st);
	free(dgx);
}
END_TEST

XP_DEFINE_SUITE(looking,
	{"reads", .timeout_s = 180, .setup = setup, .teardown = teardown,
	 .setup_all = suite_setup, .teardown_all = xp_tmux_suite_teardown,
	 .tests = {reads_on_files_write_nothing, live_records_only_changes, console_on_files_writes_nothing}})
