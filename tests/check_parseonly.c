/* check_parseonly.c: the pure decision functions the fuzz harnesses drive (tests/fuzz/):
 * xp_cmd_check (a command line taken as far as xp_cmd_run takes it, nothing run), xpa_route
 * (what the agent answers a request's head) and the client's reply header readers. Each must
 * decide exactly what the program acts on, so the harnesses test the real thing. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_client.h"
#include "agent_int.h"
#include "cmd.h"
#include "model_json.h"
#include "suitelib.h"
#include "words.h"

/* xp_cmd_check on line: its return, with the message in err. */
static int check_line(struct xp_ctx *ctx, const char *line, struct xp_err *err)
{
	int argc;
	char **argv;
	ck_assert_msg(xp_cmd_split(line, &argc, &argv, err) == 0, "%s", err->msg);
	err->msg[0] = '\0';
	int rc = xp_cmd_check(ctx, argc, argv, err);
	xp_cmd_split_free(argc, argv);
	return rc;
}

START_TEST(cmd_check)
{
	struct xp_ctx ctx;
	xp_ctx_init(&ctx, stdout, stderr);
	struct xp_err err;
	char db[] = "/tmp/xp-parseonly-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(db));
	char *path = xp_asprintf("%s/x.db", db);
	/* A line that would write the store passes the check and writes nothing. */
	char *line = xp_asprintf("--db %s validate import %s/none.json", path, db);
	ck_assert_msg(check_line(&ctx, line, &err) == 0, "%s", err.msg);
	ck_assert_int_ne(access(path, F_OK), 0);
	/* Its global option lasts the line only, as after a run. */
	ck_assert_ptr_null(ctx.db);
	free(line);
	/* The refusals xp_cmd_run prints, word for word. */
	ck_assert_int_eq(check_line(&ctx, "inventory --bogus", &err), -1);
	ck_assert_str_eq(err.msg, "inventory: unknown option --bogus");
	ck_assert_int_eq(check_line(&ctx, "frobnicate", &err), -1);
	ck_assert_str_eq(err.msg, "unknown command: frobnicate (try 'xpool help')");
	ck_assert_int_eq(check_line(&ctx, "--json", &err), -1);
	ck_assert_str_eq(err.msg, "options but no command (try 'xpool help')");
	ck_assert_int_eq(check_line(&ctx, "--delay 0 inventory", &err), -1);
	ck_assert_str_eq(err.msg, "option --delay: '0' is not a number of seconds from 0.1 to 86400 (try 'xpool help')");
	ck_assert_int_eq(check_line(&ctx, "--json db vacuum", &err), -1);
	ck_assert_str_eq(err.msg, "db vacuum: --json: this command prints no JSON (leave --json out)");
	ck_assert_int_eq(check_line(&ctx, "place --help", &err), 0);
	ck_assert_int_eq(ctx.json, false);
	xp_ctx_free(&ctx);
	rmdir(db);
	free(path);
}
END_TEST

/* Routes a complete request into *v (filled in place: its msg may point into its own buf, so
 * a copy of the verdict would point into the copied-from one). */
static void route(struct xpa_verdict *v, const struct xpa_policy *p, const char *method, const char *url,
		  const char *auth, const char *cl, const char *history, const char *layer)
{
	struct xpa_head h = {.method = method, .url = url, .authorization = auth, .content_length = cl,
			     .history = history, .layer = layer};
	xpa_route(p, &h, false, v);
}

START_TEST(agent_route)
{
	static const char conf[] = "probe hello -- /bin/echo hello\nprobe start layer=launches -- /bin/echo started\n";
	char dir[] = "/tmp/xp-parseonly-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char *path = xp_asprintf("%s/agent.conf", dir);
	FILE *f = fopen(path, "w");
	ck_assert(f && fputs(conf, f) >= 0 && fclose(f) == 0);
	struct xp_agent_config cfg;
	struct xp_err err;
	ck_assert_msg(xp_agent_config_load(path, &cfg, &err) == 0, "%s", err.msg);
	struct xpa_policy open = {.config = &cfg};
	struct xpa_policy tok = {.read_token = "r-token", .write_token = "w-token", .config = &cfg};

	struct xpa_verdict v;
	route(&v, &open, "GET", "/v1/node", NULL, NULL, NULL, NULL);
	ck_assert_int_eq(v.act, XPA_SERVE_NODE);
	ck_assert_int_eq(v.history, -1);
	route(&v, &open, "HEAD", "/v1/node", NULL, NULL, "60", NULL);
	ck_assert_int_eq(v.act, XPA_SERVE_NODE);
	ck_assert_int_eq(v.history, 60);
	route(&v, &open, "GET", "/v1/node", NULL, NULL, "601", NULL);
	ck_assert_uint_eq(v.code, 400);
	route(&v, &open, "GET", "/metrics", NULL, NULL, NULL, NULL);
	ck_assert_int_eq(v.act, XPA_SERVE_TEXT);
	route(&v, &open, "PUT", "/v1/health", NULL, NULL, NULL, NULL);
	ck_assert_uint_eq(v.code, 405);
	ck_assert_str_eq(v.allow, "GET, HEAD");
	route(&v, &open, "GET", "/v1/nodes", NULL, NULL, NULL, NULL);
	ck_assert_uint_eq(v.code, 404);
	/* The read token guards everything, unknown paths and oversized bodies included. */
	route(&v, &tok, "GET", "/v1/nodes", NULL, NULL, NULL, NULL);
	ck_assert_uint_eq(v.code, 401);
	ck_assert(v.auth);
	route(&v, &tok, "GET", "/v1/node", "Bearer w-token", NULL, NULL, NULL);
	ck_assert_uint_eq(v.code, 401);
	route(&v, &tok, "GET", "/v1/node", "bearer   r-token", NULL, NULL, NULL);
	ck_assert_int_eq(v.act, XPA_SERVE_NODE);
	struct xpa_head big = {.method = "GET", .url = "/v1/node", .content_length = "4097"};
	xpa_route(&tok, &big, true, &v);
	ck_assert_uint_eq(v.code, 401);
	big.authorization = "Bearer r-token";
	xpa_route(&tok, &big, true, &v);
	ck_assert_uint_eq(v.code, 413);
	big.content_length = "4096";
	xpa_route(&tok, &big, true, &v);
	ck_assert_int_eq(v.act, XPA_CONTINUE);
	/* Probes: POST only, the write token, a whitelisted name, the config's layer. */
	route(&v, &open, "POST", "/v1/probe/hello", NULL, NULL, NULL, NULL);
	ck_assert_uint_eq(v.code, 403);
	route(&v, &tok, "POST", "/v1/probe/hello", NULL, NULL, NULL, NULL);
	ck_assert_uint_eq(v.code, 401);
	route(&v, &tok, "GET", "/v1/probe/hello", "Bearer r-token", NULL, NULL, NULL);
	ck_assert_uint_eq(v.code, 405);
	ck_assert_str_eq(v.allow, "POST");
	route(&v, &tok, "POST", "/v1/probe/../hello", "Bearer w-token", NULL, NULL, NULL);
	ck_assert_uint_eq(v.code, 404);
	route(&v, &tok, "POST", "/v1/probe/start", "Bearer w-token", NULL, NULL, "executes");
	ck_assert_uint_eq(v.code, 409);
	ck_assert_str_eq(v.msg, "probe start gives launches evidence (its config's layer=), not executes: nothing run");
	route(&v, &tok, "POST", "/v1/probe/start", "Bearer w-token", NULL, NULL, "deployed");
	ck_assert_uint_eq(v.code, 400);
	route(&v, &tok, "POST", "/v1/probe/start", "Bearer w-token", "5000", NULL, "launches");
	ck_assert_uint_eq(v.code, 413);
	route(&v, &tok, "POST", "/v1/probe/start", "Bearer w-token", "0", NULL, "launches");
	ck_assert_int_eq(v.act, XPA_RUN_PROBE);
	ck_assert_str_eq(v.probe->name, "start");
	/* If-None-Match lists. */
	ck_assert(xpa_etag_matches("W/\"a\", \"b\"", "\"b\""));
	ck_assert(xpa_etag_matches(" * ", "\"b\""));
	ck_assert(!xpa_etag_matches("\"bb\"", "\"b\""));
	xp_agent_config_free(&cfg);
	unlink(path);
	rmdir(dir);
	free(path);
}
END_TEST

START_TEST(reply_headers)
{
	char etag[257] = "";
	static const char ok[] = "ETag:  \"0123abcd\" \r\n";
	ck_assert(xp_agent_etag_header(ok, sizeof ok - 1, etag, sizeof etag));
	ck_assert_str_eq(etag, "\"0123abcd\"");
	/* A CR inside would write headers into our next request: no cache key then. */
	static const char bad[] = "etag: \"a\"\rX-Evil: 1\r\n";
	ck_assert(!xp_agent_etag_header(bad, sizeof bad - 1, etag, sizeof etag));
	char longv[300] = "ETag: ";
	memset(longv + 6, 'a', 280);
	ck_assert(!xp_agent_etag_header(longv, strlen(longv), etag, sizeof etag));
	static const char t[] = "X-Xpool-Time: 1764680001.250\r\n";
	ck_assert(xp_agent_clock_header(t, sizeof t - 1, 0) == 1764680001.25);
	static const char date[] = "Date: Wed, 02 Dec 2026 13:06:41 GMT\r\n";
	ck_assert(xp_agent_clock_header(date, sizeof date - 1, 0) == 1796216801.5);
	/* The agent's own clock wins over the HTTP Date, in either order. */
	ck_assert(xp_agent_clock_header(date, sizeof date - 1, 7.0) == 7.0);
	static const char far[] = "Date: Wed, 02 Dec 202250\r\n"; /* found by fuzz_agent_reply */
	ck_assert(xp_agent_clock_header(far, sizeof far - 1, 0) == 0);
	static const char neg[] = "X-Xpool-Time: -5\r\n";
	ck_assert(xp_agent_clock_header(neg, sizeof neg - 1, 3.0) == 3.0);
}
END_TEST

/* Found by fuzz_inventory: a link matrix that breaks off inside a row (a snapshot cut short, a
 * hostile agent's reply) crashed the decoder as it freed the row's cells; now it is refused
 * with the place of the error. */
START_TEST(links_cut_short)
{
	static const char *const docs[] = {
		"{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"a\",\"links\":[[@]]}]}",
		"{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"a\",\"links\":[[\"X\",\"SYS\",\"SYS\","
		"\"SYS\",\"SYS\",\"SYS\",\"SYS\",\"SYS\",@]]}]}",
		"{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"a\",\"links\":[[\"X\",",
	};
	for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
		struct xp_err err = {{0}};
		struct xp_cluster *c = xp_cluster_parse(docs[i], strlen(docs[i]), "cut.json", &err);
		ck_assert_ptr_null(c);
		ck_assert_msg(strncmp(err.msg, "cut.json:1:", 11) == 0, "%s", err.msg);
	}
}
END_TEST

XP_DEFINE_SUITE(parseonly, {"pure", .tests = {cmd_check, agent_route, reply_headers}},
		{"found", .tests = {links_cut_short}});
