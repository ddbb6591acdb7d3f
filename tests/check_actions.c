/* check_actions.c: actions on nodes. Slurm's SlurmUser read from a recorded `scontrol show
 * config`; the Kubernetes side of `node drain|undrain` against a loopback API server
 * (libmicrohttpd) that checks the PATCH (method, path, content type, body, token) and answers
 * the SelfSubjectAccessReview allowed or denied; the console's Space/d/y cordoning through it
 * and its `?` without the action keys when denied; `s` with a stand-in command (argv written
 * to a file, exit 3) for a plain name and one with blanks and quotes; Z pausing the display
 * while the inventory file changes under --delay 0.2. The real Slurm side runs in
 * tests/slurm_node_check.sh. */
#include <check.h>
#include <jansson.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checklib.h"
#include "k8slib.h"
#include "node_act.h"
#include "node_ssh.h"
#include "suitelib.h"
#include "testlib.h"
#include "tmuxlib.h"
#include "xp.h"

/* What the server saw and how it answers; each test runs in its own process. */
static struct {
	json_t *nodes, *pods;
	bool deny;              /* the review says not allowed */
	int patches, reviews;
	char method[16], path[128], ctype[96], auth[128];
	char body[4096], review[4096];
} srv;
static struct MHD_Daemon *daemon_;
static int port;
static char dir[128];

struct upload {
	char buf[4096];
	size_t len;
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *body)
{
	return xp_k8slib_reply(c, code, body, strlen(body), MHD_RESPMEM_MUST_COPY);
}

static bool same(const json_t *v, const char *want)
{
	return json_is_string(v) && strcmp(json_string_value(v), want) == 0;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_len, void **state)
{
	(void)cls, (void)version;
	struct upload *u = *state;
	if (!u) {
		/* The first call sees the headers only; the body comes in the next ones. */
		*state = xp_calloc(1, sizeof *u);
		return MHD_YES;
	}
	if (*upload_len) {
		size_t k = *upload_len < sizeof u->buf - 1 - u->len ? *upload_len : sizeof u->buf - 1 - u->len;
		memcpy(u->buf + u->len, upload, k);
		u->len += k;
		*upload_len = 0;
		return MHD_YES;
	}
	char body[4096];
	memcpy(body, u->buf, u->len);
	body[u->len] = '\0';
	free(u);
	*state = NULL;
	const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	if (!auth || strcmp(auth, "Bearer act-token"))
		return reply(c, 401, "{\"kind\":\"Status\",\"message\":\"Unauthorized\"}");
	if (strcmp(method, "GET") == 0) {
		json_t *items = strstr(url, "/pods") ? srv.pods : strstr(url, "/nodes") ? srv.nodes : NULL;
		if (!items)
			return reply(c, 404, "{\"kind\":\"Status\",\"message\":\"not here\"}");
		json_t *page = xp_k8slib_page(items, strstr(url, "/pods") ? "PodList" : "NodeList", 0, 0);
		char *s = json_dumps(page, JSON_COMPACT);
		json_decref(page);
		return xp_k8slib_reply(c, 200, s, strlen(s), MHD_RESPMEM_MUST_FREE);
	}
	if (strcmp(method, "POST") == 0 && strcmp(url, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews") == 0) {
		srv.reviews++;
		snprintf(srv.review, sizeof srv.review, "%s", body);
		json_t *j = json_loads(body, 0, NULL);
		json_t *ra = json_object_get(json_object_get(j, "spec"), "resourceAttributes");
		bool right = ct && strncmp(ct, "application/json", 16) == 0 &&
			     same(json_object_get(j, "kind"), "SelfSubjectAccessReview") &&
			     same(json_object_get(ra, "verb"), "patch") && same(json_object_get(ra, "resource"), "nodes");
		json_decref(j);
		if (!right)
			return reply(c, 400, "{\"kind\":\"Status\",\"message\":\"not a review of patch on nodes\"}");
		return reply(c, 201, srv.deny ? "{\"kind\":\"SelfSubjectAccessReview\",\"status\":{\"allowed\":false,"
						"\"reason\":\"RBAC: no rule allows patch on nodes\"}}"
					      : "{\"kind\":\"SelfSubjectAccessReview\",\"status\":{\"allowed\":true}}");
	}
	if (strcmp(method, "PATCH") == 0 && strncmp(url, "/api/v1/nodes/", 14) == 0) {
		srv.patches++;
		snprintf(srv.method, sizeof srv.method, "%s", method);
		snprintf(srv.path, sizeof srv.path, "%s", url);
		snprintf(srv.ctype, sizeof srv.ctype, "%s", ct ? ct : "");
		snprintf(srv.auth, sizeof srv.auth, "%s", auth);
		snprintf(srv.body, sizeof srv.body, "%s", body);
		if (!ct || (strcmp(ct, "application/merge-patch+json") && strcmp(ct, "application/strategic-merge-patch+json")))
			return reply(c, 415, "{\"kind\":\"Status\",\"message\":\"unsupported media type\"}");
		size_t i;
		json_t *n;
		json_array_foreach(srv.nodes, i, n)
		{
			const char *name = json_string_value(json_object_get(json_object_get(n, "metadata"), "name"));
			if (name && strcmp(url + 14, name) == 0)
				return reply(c, 200, "{\"kind\":\"Node\"}");
		}
		return reply(c, 404, "{\"kind\":\"Status\",\"message\":\"nodes \\\"nosuch\\\" not found\"}");
	}
	return reply(c, 405, "{\"kind\":\"Status\",\"message\":\"method not allowed\"}");
}

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/xpool-actions-%d", (int)getpid());
	mkdir(dir, 0700);
	memset(&srv, 0, sizeof srv);
	srv.nodes = xp_k8slib_items("k8s/nodes.json");
	srv.pods = xp_k8slib_items("k8s/pods.json");
	daemon_ = xp_k8slib_serve(handle, NULL, &port);
	ck_assert_ptr_nonnull(daemon_);
	unsetenv("KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
}

static void teardown(void)
{
	MHD_stop_daemon(daemon_);
	json_decref(srv.nodes);
	json_decref(srv.pods);
	xp_rm_rf(dir);
}

/* Runs xpool against the loopback server with the database in dir; the NULL-ended arguments. */
static void k8s_run(struct xp_run *r, const char *first, ...)
{
	char url[64], db[192];
	snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
	snprintf(db, sizeof db, "%s/x.db", dir);
	char *tok = xp_write_file(dir, "token", "act-token\n", 0600);
	const char *argv[32] = {xp_bin(), "--k8s-server", url, "--k8s-token-file", tok, "--db", db};
	int n = 7;
	va_list ap;
	va_start(ap, first);
	for (const char *a = first; a && n < 31; a = va_arg(ap, const char *))
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	ck_assert_int_eq(xp_run_argv(r, (char *const *)argv, NULL), 0);
	free(tok);
}

START_TEST(slurm_user_and_names)
{
	size_t len;
	struct xp_err err = {{0}};
	char *text = xp_read_file(xp_fixture("slurm/scontrol-show-config.txt"), 1 << 20, &len, &err);
	ck_assert_msg(text, "%s", err.msg);
	char *u = xp_slurm_config_user(text, len);
	ck_assert_str_eq(u, "root");
	free(u);
	free(text);
	ck_assert_ptr_null(xp_slurm_config_user("SlurmUserId = 5\nSlurmctldHost = x\n", 35));
	u = xp_slurm_config_user("SlurmUser               = slurm(64030)\n", 39);
	ck_assert_str_eq(u, "slurm");
	free(u);
	ck_assert(xp_node_act_name_ok("gpu-node-1.rack2_a"));
	ck_assert(!xp_node_act_name_ok("gpu[01-02]"));
	ck_assert(!xp_node_act_name_ok("a,b"));
	ck_assert(!xp_node_act_name_ok("-x"));
	ck_assert(!xp_node_act_name_ok("a b"));
	ck_assert(!xp_node_act_name_ok(""));
}
END_TEST

/* {node} stays one argv word whatever the name holds; a template without it gets the name last. */
START_TEST(ssh_argv)
{
	int argc;
	char **argv;
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_ssh_argv("ssh -t {node} 'tmux attach || bash'", "n1 \"q\" 'x' ;rm", &argc, &argv, &err), 0);
	ck_assert_int_eq(argc, 4);
	ck_assert_str_eq(argv[2], "n1 \"q\" 'x' ;rm");
	ck_assert_str_eq(argv[3], "tmux attach || bash");
	xp_cmd_split_free(argc, argv);
	ck_assert_int_eq(xp_ssh_argv("mosh --ssh=\"ssh -p 22\" root@{node}.lab", "gpu1", &argc, &argv, &err), 0);
	ck_assert_int_eq(argc, 3);
	ck_assert_str_eq(argv[1], "--ssh=ssh -p 22");
	ck_assert_str_eq(argv[2], "root@gpu1.lab");
	xp_cmd_split_free(argc, argv);
	ck_assert_int_eq(xp_ssh_argv("ssh -x", "gpu1", &argc, &argv, &err), 0);
	ck_assert_int_eq(argc, 3);
	ck_assert_str_eq(argv[2], "gpu1");
	ck_assert_ptr_null(argv[3]);
	xp_cmd_split_free(argc, argv);
	ck_assert_int_eq(xp_ssh_argv("  ", "gpu1", &argc, &argv, &err), -1);
	ck_assert_int_eq(xp_ssh_argv("ssh '{node}", "gpu1", &argc, &argv, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "unterminated"));
}
END_TEST

START_TEST(cordon_and_audit)
{
	struct xp_run r;
	k8s_run(&r, "node", "drain", "gpu-node-1", "--reason", "ECC storm", NULL);
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	ck_assert_str_eq(r.out, "gpu-node-1: cordoned (k8s)\n");
	xp_run_free(&r);
	ck_assert_int_eq(srv.reviews, 1);
	ck_assert_int_eq(srv.patches, 1);
	ck_assert_str_eq(srv.path, "/api/v1/nodes/gpu-node-1");
	ck_assert_str_eq(srv.ctype, "application/merge-patch+json");
	ck_assert_str_eq(srv.auth, "Bearer act-token");
	json_t *b = json_loads(srv.body, 0, NULL);
	ck_assert_msg(json_is_true(json_object_get(json_object_get(b, "spec"), "unschedulable")), "body %s", srv.body);
	ck_assert_int_eq(json_object_size(b), 1);
	json_decref(b);
	k8s_run(&r, "node", "undrain", "gpu-node-1", NULL);
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	ck_assert_str_eq(r.out, "gpu-node-1: uncordoned (k8s)\n");
	xp_run_free(&r);
	b = json_loads(srv.body, 0, NULL);
	ck_assert_msg(json_is_false(json_object_get(json_object_get(b, "spec"), "unschedulable")), "body %s", srv.body);
	json_decref(b);
	/* A node the cluster does not list: named, and nothing changed (the other one stays
	 * uncordoned): the names are checked against the engine's nodes before any is changed. */
	k8s_run(&r, "node", "drain", "nosuch", "gpu-node-1", NULL);
	ck_assert_int_eq(r.status, 1);
	xp_want_parts(r.err, "node drain: k8s lists no node named nosuch", NULL);
	ck_assert_str_eq(r.out, "");
	xp_run_free(&r);
	char db[192];
	snprintf(db, sizeof db, "%s/x.db", dir);
	xp_run_xpool(&r, NULL, "--db", db, "--json", "audit", NULL);
	ck_assert_int_eq(r.status, 0);
	json_t *doc = json_loads(r.out, 0, NULL);
	json_t *a = json_object_get(doc, "audit");
	ck_assert_int_eq(json_array_size(a), 2);
	const char *want[2][3] = {{"node.drain", "gpu-node-1", "true"}, {"node.undrain", "gpu-node-1", "true"}};
	for (size_t i = 0; i < 2; i++) {
		json_t *row = json_array_get(a, i), *after = json_object_get(row, "after");
		ck_assert_str_eq(json_string_value(json_object_get(row, "action")), want[i][0]);
		ck_assert_str_eq(json_string_value(json_object_get(row, "target")), want[i][1]);
		ck_assert_str_eq(json_string_value(json_object_get(after, "engine")), "k8s");
		ck_assert_int_eq(json_is_true(json_object_get(after, "ok")), want[i][2][0] == 't');
	}
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(json_array_get(a, 0), "after"), "reason")),
			 "ECC storm");
	json_decref(doc);
	xp_run_free(&r);
}
END_TEST

START_TEST(denied_and_read_only)
{
	struct xp_run r;
	srv.deny = true;
	k8s_run(&r, "node", "drain", "gpu-node-1", NULL);
	ck_assert_int_eq(r.status, 2);
	xp_want_parts(r.err, "node drain: read-only: Kubernetes says this account may not patch nodes: RBAC: no rule "
			     "allows patch on nodes; nothing changed",
		      NULL);
	xp_run_free(&r);
	ck_assert_int_eq(srv.reviews, 1);
	ck_assert_int_eq(srv.patches, 0);
	srv.deny = false;
	k8s_run(&r, "--read-only", "node", "undrain", "gpu-node-1", NULL);
	ck_assert_int_eq(r.status, 2);
	xp_want_parts(r.err, "node undrain: read-only (--read-only); nothing changed", NULL);
	xp_run_free(&r);
	ck_assert_int_eq(srv.reviews, 1);
	ck_assert_int_eq(srv.patches, 0);
	/* Names that are no node name never reach the engine; nor does a run without one. */
	k8s_run(&r, "node", "drain", "a,b", NULL);
	ck_assert_int_eq(r.status, 2);
	xp_want_parts(r.err, "'a,b' is not a node name", NULL);
	xp_run_free(&r);
	xp_run_xpool(&r, NULL, "node", "drain", "gpu-node-1", NULL);
	ck_assert_int_eq(r.status, 2);
	xp_want_parts(r.err, "node drain: no engine to change nodes through", NULL);
	xp_run_free(&r);
	ck_assert_int_eq(srv.patches, 0);
}
END_TEST

/* Starts the console on the loopback server (extra arguments after), waits for its nodes. */
static void k8s_console(const char *extra)
{
	char *tok = xp_write_file(dir, "token", "act-token\n", 0600);
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color XDG_STATE_HOME=%s %s --db %s/x.db --k8s-server "
		 "http://127.0.0.1:%d --k8s-token-file %s %s; echo $? > %s/rc",
		 dir, xp_bin(), dir, port, tok, extra, dir);
	xp_tmux_start(cmd, 200, 50);
	free(xp_tmux_wait_all(20, "k8s http://127.0.0.1", "gpu-node-1", NULL));
	free(tok);
}

START_TEST(console_cordon)
{
	xp_tmux_test_socket();
	xp_tmux_kill_server();
	k8s_console("");
	/* The review answered yes: `?` lists the action keys. */
	xp_tmux_keys("?");
	xp_tmux_expect_all("drain (Slurm) / cordon (Kubernetes)", "Space", "tag / untag");
	xp_tmux_keys("Escape");
	xp_tmux_expect_gone("tag / untag");
	/* The first node of the map, tagged, then cordoned with an empty reason (Kubernetes needs none). */
	xp_tmux_keys("Space");
	xp_tmux_expect_all("$1 tagged");
	xp_tmux_keys("d");
	xp_tmux_expect_all("Cordon ", ": reason (Enter, Esc cancels)");
	xp_tmux_keys("Enter");
	xp_tmux_expect_all("Cordon 1 node ", "(reason \"\")? y/N");
	/* Anything but y: nothing is done. */
	xp_tmux_keys("n");
	xp_tmux_expect_all("$not done");
	ck_assert_int_eq(srv.patches, 0);
	xp_tmux_keys("d");
	xp_tmux_keys("Enter");
	xp_tmux_expect_all("y/N");
	xp_tmux_keys("y");
	xp_tmux_expect_all("$cordoned ", "!1 tagged");
	ck_assert_int_eq(srv.patches, 1);
	ck_assert_ptr_nonnull(strstr(srv.body, "\"unschedulable\":true"));
	xp_tmux_keys("u");
	xp_tmux_expect_all("Uncordon 1 node ");
	xp_tmux_keys("y");
	xp_tmux_expect_all("$uncordoned ");
	ck_assert_int_eq(srv.patches, 2);
	ck_assert_ptr_nonnull(strstr(srv.body, "\"unschedulable\":false"));
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
	xp_tmux_kill_server();
}
END_TEST

/* Denied by the review: `?` has no action key, d says why, and nothing reaches the server. */
START_TEST(console_denied)
{
	xp_tmux_test_socket();
	xp_tmux_kill_server();
	srv.deny = true;
	k8s_console("");
	xp_tmux_keys("?");
	char *s = xp_tmux_wait_all(10, "run ssh on the node", NULL);
	ck_assert_msg(!strstr(s, "drain") && !strstr(s, "tag / untag"), "read-only ? lists actions:\n%s", s);
	free(s);
	xp_tmux_keys("Escape");
	xp_tmux_keys("Space");
	xp_tmux_keys("d");
	xp_tmux_expect_all("$read-only: Kubernetes says this account may not patch nodes", "!tagged", "!reason");
	ck_assert_int_eq(srv.patches, 0);
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
	xp_tmux_kill_server();
}
END_TEST

/* Writes the sim cluster src with node 0 renamed name0 to path (atomically: a new file). */
static void write_inv(const char *src, const char *path, const char *name0)
{
	json_t *j = json_load_file(src, 0, NULL);
	ck_assert_ptr_nonnull(j);
	json_t *n0 = json_array_get(json_object_get(j, "nodes"), 0);
	json_object_set_new(n0, "name", json_string(name0));
	char tmp[256];
	snprintf(tmp, sizeof tmp, "%s.new", path);
	ck_assert_int_eq(json_dump_file(j, tmp, JSON_INDENT(1)), 0);
	ck_assert_int_eq(rename(tmp, path), 0);
	json_decref(j);
}

static void sim(char *path, size_t len)
{
	snprintf(path, len, "%s/sim.json", dir);
	struct xp_run r;
	xp_run_xpool(&r, NULL, "sim", "gen", "--nodes", "3", "-o", path, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_run_free(&r);
}

/* s: the stand-in gets the node's name as one argv word (blanks and quotes in it too), the
 * console comes back and says its exit status; a missing command is said, the console stays. */
START_TEST(ssh_stand_in)
{
	xp_tmux_test_socket();
	xp_tmux_kill_server();
	char src[192], inv[192], script[256];
	sim(src, sizeof src);
	snprintf(inv, sizeof inv, "%s/inv.json", dir);
	write_inv(src, inv, "aa node \"one\" 'q'");
	char body[512];
	snprintf(body, sizeof body, "#!/bin/sh\nfor a in \"$@\"; do printf '<%%s>\\n' \"$a\"; done > %s/argv\nexit 3\n", dir);
	free(xp_write_file(dir, "standin", body, 0755));
	snprintf(script, sizeof script, "%s/standin", dir);
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color XDG_STATE_HOME=%s XPOOL_SSH=/nonexistent %s --db "
		 "%s/x.db --inventory %s --ssh-command '%s -t {node} uptime'; echo $? > %s/rc",
		 dir, xp_bin(), dir, inv, script, dir);
	xp_tmux_start(cmd, 160, 40);
	xp_tmux_expect_all("aa node \"one\" 'q'");
	xp_tmux_keys("s");
	xp_tmux_expect_all("$standin aa node \"one\" 'q': exit 3", "aa node \"one\" 'q'", "Topology");
	size_t len;
	struct xp_err err = {{0}};
	char path[256];
	snprintf(path, sizeof path, "%s/argv", dir);
	char *got = xp_read_file(path, 4096, &len, &err);
	ck_assert_msg(got, "%s", err.msg);
	ck_assert_str_eq(got, "<-t>\n<aa node \"one\" 'q'>\n<uptime>\n");
	free(got);
	/* In the node's drill-in too. */
	unlink(path);
	xp_tmux_keys("Enter");
	xp_tmux_expect_all("Topology › aa node");
	xp_tmux_keys("s");
	xp_tmux_expect_all("$exit 3");
	got = xp_read_file(path, 4096, &len, &err);
	ck_assert_msg(got, "%s", err.msg);
	ck_assert_str_eq(got, "<-t>\n<aa node \"one\" 'q'>\n<uptime>\n");
	free(got);
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
	xp_tmux_kill_server();
	/* XPOOL_SSH naming no program: said in the status line, the console goes on. */
	snprintf(cmd, sizeof cmd,
		 "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color XDG_STATE_HOME=%s XPOOL_SSH='no-such-ssh-xp {node}' "
		 "%s --db %s/x.db --inventory %s; echo $? > %s/rc",
		 dir, xp_bin(), dir, inv, dir);
	xp_tmux_start(cmd, 160, 40);
	xp_tmux_expect_all("aa node \"one\" 'q'");
	xp_tmux_keys("s");
	xp_tmux_expect_all("$s: no-such-ssh-xp: not found on PATH (set --ssh-command or XPOOL_SSH)");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
	xp_tmux_kill_server();
}
END_TEST

/* Z: the header says PAUSED, the map keeps the old name while the file changes under it (and
 * the age goes on counting), keys still move; Z again shows the new name at once. */
START_TEST(pause_freezes)
{
	xp_tmux_test_socket();
	xp_tmux_kill_server();
	char src[192], inv[192];
	sim(src, sizeof src);
	snprintf(inv, sizeof inv, "%s/inv.json", dir);
	write_inv(src, inv, "aa-before");
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color XDG_STATE_HOME=%s %s --db %s/x.db --inventory %s "
		 "--delay 0.2; echo $? > %s/rc",
		 dir, xp_bin(), dir, inv, dir);
	xp_tmux_start(cmd, 160, 40);
	xp_tmux_expect_all("aa-before", "^data 0s old");
	/* Not paused, a change shows within a refresh or two. */
	write_inv(src, inv, "aa-moving");
	xp_tmux_expect_all("aa-moving", "!aa-before");
	xp_tmux_keys("Z");
	xp_tmux_expect_all("^PAUSED data", "aa-moving");
	write_inv(src, inv, "aa-after");
	/* Two seconds is ten refreshes: the map still shows what it showed, the age counts on. */
	sleep(2);
	char *s = xp_tmux_wait_all(10, "^PAUSED data", "aa-moving", "!aa-after", NULL);
	ck_assert_msg(!strstr(s, "data 0s old"), "the age stopped while paused:\n%s", s);
	free(s);
	/* Down twice: over the next rack's heading (the cursor rests on headings) to its node. */
	xp_tmux_keys("j");
	xp_tmux_keys("j");
	xp_tmux_expect_all("$2 of 3", "aa-moving", "!aa-after");
	xp_tmux_keys("Z");
	xp_tmux_expect_all("aa-after", "!aa-moving", "!PAUSED");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
	xp_tmux_kill_server();
}
END_TEST

XP_DEFINE_SUITE(actions,
		{"units", .tests = {slurm_user_and_names, ssh_argv}},
		{"k8s", .setup = setup, .teardown = teardown, .tests = {cordon_and_audit, denied_and_read_only}},
		{"console", .timeout_s = 90, .setup = setup, .teardown = teardown,
		 .setup_all = xp_tmux_runner_setup, .teardown_all = xp_tmux_runner_teardown,
		 .tests = {console_cordon, console_denied, ssh_stand_in, pause_freezes}});
