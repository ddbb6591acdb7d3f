/* check_agents.c: the console's side of the node agents, over real HTTP on loopback:
 * real `xpool agent` processes replaying recorded vendor outputs, a canned-reply server
 * for the faults a real agent would not make, and the pool API for recovery and backoff. */
#include <check.h>
#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_client.h"
#include "checklib.h"
#include "cmd.h"
#include "poller.h"
#include "snapshot.h"
#include "source.h"
#include <sys/resource.h>
#include "model_json.h"
#include "suitelib.h"
#include "testlib.h"
#include "xp.h"

static char dir[128];
static pid_t pids[16];
static size_t n_pids;

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/xpool-agents-%d", (int)getpid());
	mkdir(dir, 0755);
	unsetenv("XPOOL_ADAPTER_PATH");
	unsetenv("XPOOL_ADAPTER_PATH_ONLY");
	unsetenv("XPOOL_ADAPTERS");
	n_pids = 0;
}

static void teardown(void)
{
	for (size_t i = 0; i < n_pids; i++)
		if (pids[i] > 0) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], NULL, 0);
		}
	xp_rm_rf(dir);
}

static pid_t track(pid_t p)
{
	ck_assert_int_gt(p, 0);
	ck_assert_uint_lt(n_pids, 16);
	pids[n_pids++] = p;
	return p;
}

static void untrack(pid_t p)
{
	for (size_t i = 0; i < n_pids; i++)
		if (pids[i] == p)
			pids[i] = 0;
}

/* The Ascend and AMD nodes beside xp_replay_dgx's, each from its recorded tool outputs. */
static char *replay_atlas(void)
{
	return xp_assemble(dir, "atlas-9010-03", "ascend/npu-smi-info_atlas800-9010_8x910A_24.1.RC2.txt", "npu-smi-info.txt",
			   "ascend/npu-smi-info-m_atlas800-9010_8x910A_24.1.RC2.txt", "npu-smi-info-m.txt",
			   "hwloc/32em64t-2n8c2t-pci-wholeio.xml", "hwloc.xml", NULL);
}

static char *replay_mi100(void)
{
	return xp_assemble(dir, "mi100-11", "amd/mi100-x4_rocm602.rocm-smi.json", "rocm-smi.json", NULL);
}

/* Tracks p, an agent xp_agent_start started; when it did not, url says what it printed. */
static pid_t started(pid_t p, const char *url)
{
	ck_assert_msg(p > 0, "agent did not start: %s", url);
	return track(p);
}

static pid_t agent(char *url, size_t len, const char *replay)
{
	return started(xp_agent_start(url, len, "--replay", replay, "--interval", "0.5", NULL), url);
}

/* Runs xpool with the NULL-terminated arguments and checks its exit status and that its stderr
 * holds err_part (NULL: not checked). */
static void expect_xpool(int status, const char *err_part, ...)
{
	struct xp_run r;
	va_list ap;
	va_start(ap, err_part);
	int rc = xp_run_xpoolv(&r, NULL, ap);
	va_end(ap);
	ck_assert_int_eq(rc, 0);
	ck_assert_msg(r.status == status, "exit %d, want %d: %s", r.status, status, r.err);
	if (err_part)
		ck_assert_msg(strstr(r.err, err_part), "%s", r.err);
	xp_run_free(&r);
}

static json_t *node_named(json_t *doc, const char *name)
{
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(doc, "nodes"), i, n)
	{
		if (strcmp(json_string_value(json_object_get(n, "name")), name) == 0)
			return n;
	}
	return NULL;
}

/* `inventory --agents FILE --json` returns every agent's node, as the node itself would describe
 * itself from the same recorded outputs: only the source differs. */
START_TEST(inventory_from_three_agents)
{
	char *reps[3] = {xp_replay_dgx(dir), replay_atlas(), replay_mi100()};
	const char *names[3] = {"dgx-a100-07", "atlas-9010-03", "mi100-11"};
	/* The A100 capture lists one of its four GPUs; the Atlas node has four more accelerators on its PCI bus. */
	size_t devs[3] = {1, 12, 4};
	char urls[3][256];
	for (int i = 0; i < 3; i++)
		agent(urls[i], sizeof urls[i], reps[i]);
	char *list = xp_asprintf("# the test cluster\n%s\n\n  %s/   # trailing slash is the same agent\n%s\n", urls[0],
				 urls[1], urls[2]);
	char *file = xp_write_file(dir, "agents.txt", list, 0644);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--agents", file, "inventory", "--json", NULL), 0);
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	json_error_t je;
	json_t *doc = json_loads(r.out, 0, &je);
	ck_assert_ptr_nonnull(doc);
	ck_assert_uint_eq(json_array_size(json_object_get(doc, "nodes")), 3);
	for (int i = 0; i < 3; i++) {
		json_t *n = node_named(doc, names[i]);
		ck_assert_msg(n != NULL, "no node %s in %s", names[i], r.out);
		ck_assert_str_eq(json_string_value(json_object_get(n, "state")), "up");
		ck_assert_str_eq(json_string_value(json_object_get(n, "source")), urls[i]);
		ck_assert_uint_eq(json_array_size(json_object_get(n, "devices")), devs[i]);
		/* The same node read locally from the same outputs. */
		struct xp_run l;
		ck_assert_int_eq(xp_run_xpool(&l, NULL, "--replay", reps[i], "inventory", "--json", NULL), 0);
		ck_assert_int_eq(l.status, 0);
		json_t *ldoc = json_loads(l.out, 0, &je);
		json_t *ln = json_array_get(json_object_get(ldoc, "nodes"), 0);
		json_object_del(ln, "source");
		json_t *an = json_deep_copy(n);
		json_object_del(an, "source");
		ck_assert_msg(json_equal(ln, an), "node %s differs from its local reading", names[i]);
		json_decref(an);
		json_decref(ldoc);
		xp_run_free(&l);
	}
	json_decref(doc);
	xp_run_free(&r);

	/* The text listing and `agent ls` say the same; all up is exit 0. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--agents", file, "agent", "ls", NULL), 0);
	ck_assert_int_eq(r.status, 0);
	for (int i = 0; i < 3; i++) {
		ck_assert_ptr_nonnull(strstr(r.out, urls[i]));
		ck_assert_ptr_nonnull(strstr(r.out, names[i]));
	}
	ck_assert_ptr_null(strstr(r.out, "down"));
	xp_run_free(&r);
	/* Placement reads the agents' nodes like any others. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--agents", file, "place", "--dry-run", "--devices", "8", "--model",
				      "Ascend*", NULL),
			 0);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "atlas-9010-03"));
	xp_run_free(&r);
	for (int i = 0; i < 3; i++)
		free(reps[i]);
	free(list);
	free(file);
}
END_TEST

static pid_t fake(char *url, size_t len, const char *reply, size_t n)
{
	int port = 0;
	pid_t p = track(xp_fake_http(&port, reply, n));
	snprintf(url, len, "http://127.0.0.1:%d", port);
	return p;
}

/* The line of text that names agent URL a (exactly) and holds b. */
static const char *line_with(const char *text, const char *url, const char *b)
{
	char *a = xp_asprintf("agent %s: ", url);
	const char *found = NULL;
	for (const char *l = text; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		char *line = xp_strndup(l, len);
		bool ok = strstr(line, a) && strstr(line, b);
		free(line);
		if (ok) {
			found = l;
			break;
		}
		l = nl ? nl + 1 : NULL;
	}
	free(a);
	return found;
}

/* Each fault costs only its own agent: the rest of the cluster is read, the command says which
 * agents failed and why, and exits 4. */
START_TEST(faults_cost_only_their_agent)
{
	char *rep = xp_replay_dgx(dir);
	char good[256], stopped[256], garbage[256], notjson[256], trunc[256], big[256], bigclose[256], twin[256],
		refused[64];
	agent(good, sizeof good, rep);
	char *rep2 = replay_mi100();
	pid_t sp = agent(stopped, sizeof stopped, rep2);
	kill(sp, SIGSTOP);
	const char *g = "\x01\x02 this is not HTTP at all \xff\xfe\n";
	fake(garbage, sizeof garbage, g, strlen(g));
	const char *nj = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n<html></html";
	fake(notjson, sizeof notjson, nj, strlen(nj));
	const char *tr = "HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n{\"schema\":\"xpool.inventory/v1\",\"nodes\":[";
	fake(trunc, sizeof trunc, tr, strlen(tr));
	/* 10 MB, announced, and 10 MB without a length (read until close). */
	size_t tenmb = (size_t)10 << 20;
	const char *h1 = "HTTP/1.1 200 OK\r\nContent-Length: 10485760\r\n\r\n";
	const char *h2 = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n";
	char *b1 = xp_malloc(strlen(h1) + tenmb), *b2 = xp_malloc(strlen(h2) + tenmb);
	memcpy(b1, h1, strlen(h1));
	memset(b1 + strlen(h1), ' ', tenmb);
	memcpy(b2, h2, strlen(h2));
	memset(b2 + strlen(h2), '[', tenmb);
	fake(big, sizeof big, b1, strlen(h1) + tenmb);
	fake(bigclose, sizeof bigclose, b2, strlen(h2) + tenmb);
	free(b1);
	free(b2);
	/* A valid reply that claims the good agent's node. */
	struct xp_run l;
	ck_assert_int_eq(xp_run_xpool(&l, NULL, "--replay", rep, "inventory", "--json", NULL), 0);
	char *tw = xp_asprintf("HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%s", strlen(l.out), l.out);
	fake(twin, sizeof twin, tw, strlen(tw));
	free(tw);
	xp_run_free(&l);
	int fp = 0;
	pid_t closed = xp_fake_http(&fp, "", 0);
	kill(closed, SIGKILL);
	waitpid(closed, NULL, 0);
	snprintf(refused, sizeof refused, "http://127.0.0.1:%d", fp);

	struct xp_run r;
	double t0 = (double)time(NULL);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--agent-timeout", "1.5", "--agent", good, "--agent", stopped, "--agent",
				      garbage, "--agent", notjson, "--agent", trunc, "--agent", big, "--agent",
				      bigclose, "--agent", twin, "--agent", refused, "inventory", "--json", NULL),
			 0);
	double took = (double)time(NULL) - t0;
	ck_assert_msg(r.status == 4, "status %d: %s", r.status, r.err);
	/* All at once: the hung agent's timeout is the whole wait, not one of several. */
	ck_assert_msg(took <= 4, "took %.0f s", took);
	ck_assert_msg(line_with(r.err, stopped, "no answer within 1.5 s"), "%s", r.err);
	ck_assert_msg(line_with(r.err, notjson, "not JSON"), "%s", r.err);
	ck_assert_msg(line_with(r.err, trunc, "remaining") || line_with(r.err, trunc, "partial"), "%s", r.err);
	ck_assert_msg(line_with(r.err, big, "larger than"), "%s", r.err);
	ck_assert_msg(line_with(r.err, bigclose, "larger than"), "%s", r.err);
	ck_assert_msg(line_with(r.err, twin, "dgx-a100-07 is served by"), "%s", r.err);
	ck_assert_msg(line_with(r.err, refused, "connect"), "%s", r.err);
	ck_assert_msg(line_with(r.err, garbage, ""), "%s", r.err);
	ck_assert_ptr_null(line_with(r.err, good, ""));
	json_error_t je;
	json_t *doc = json_loads(r.out, 0, &je);
	ck_assert_msg(doc != NULL, "%s", je.text);
	json_t *n = node_named(doc, "dgx-a100-07");
	ck_assert_ptr_nonnull(n);
	ck_assert_str_eq(json_string_value(json_object_get(n, "state")), "up");
	ck_assert_str_eq(json_string_value(json_object_get(n, "source")), good);
	ck_assert_uint_eq(json_array_size(json_object_get(n, "devices")), 1);
	/* Every failing agent is a node marked unreachable, named after its address. */
	ck_assert_uint_eq(json_array_size(json_object_get(doc, "nodes")), 9);
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(doc, "nodes"), i, o)
	{
		if (o != n)
			ck_assert_str_eq(json_string_value(json_object_get(o, "state")), "unreachable");
	}
	json_decref(doc);
	xp_run_free(&r);

	/* The hung agent comes back: the next command reads it. */
	kill(sp, SIGCONT);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--agent", good, "--agent", stopped, "inventory", NULL), 0);
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "mi100-11"));
	xp_run_free(&r);
	free(rep);
	free(rep2);
}
END_TEST

/* The pool keeps a dead agent's last data, marked with its age; backs off; and takes the agent
 * back when it returns on the same address. An unchanged node costs a 304. */
START_TEST(pool_recovers_and_backs_off)
{
	char *rep = xp_replay_dgx(dir);
	char url[256];
	pid_t p = agent(url, sizeof url, rep);
	struct xp_agent_pool *pool =
		xp_agent_pool_new(&(struct xp_agent_pool_opts){.timeout_s = 2, .backoff_base_s = 30});
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_agent_pool_add(pool, url, NULL, &err), 0);
	ck_assert_int_eq(xp_agent_pool_add(pool, url, NULL, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "listed already"));
	ck_assert_uint_eq(xp_agent_pool_poll(pool, false), 0);
	uint64_t g1 = xp_agent_pool_generation(pool);
	ck_assert_uint_eq(xp_agent_pool_poll(pool, false), 0);
	struct xp_agent_status st;
	xp_agent_pool_status(pool, 0, &st);
	ck_assert(st.up);
	ck_assert_str_eq(st.node, "dgx-a100-07");
	ck_assert_uint_eq(st.polls, 2);
	ck_assert_uint_eq(st.not_modified, 1);
	ck_assert_uint_eq(xp_agent_pool_generation(pool), g1);
	size_t nlog;
	char **log = xp_agent_pool_take_log(pool, &nlog);
	ck_assert_uint_eq(nlog, 1);
	ck_assert_ptr_nonnull(strstr(log[0], "up, serving dgx-a100-07"));
	free(log[0]);
	free(log);

	/* Killed: last data kept, unreachable. */
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
	untrack(p);
	ck_assert_uint_eq(xp_agent_pool_poll(pool, false), 1);
	struct xp_cluster *c = xp_agent_pool_cluster(pool, time(NULL) + 7);
	ck_assert_uint_eq(c->n_nodes, 1);
	ck_assert_str_eq(c->nodes[0]->name, "dgx-a100-07");
	ck_assert_int_eq(c->nodes[0]->state, XP_NODE_UNREACHABLE);
	ck_assert_int_ge(c->nodes[0]->age_s, 7);
	ck_assert_uint_eq(c->nodes[0]->n_devices, 1);
	ck_assert_str_eq(c->nodes[0]->source, url);
	xp_cluster_free(c);
	log = xp_agent_pool_take_log(pool, &nlog);
	ck_assert_uint_eq(nlog, 1);
	ck_assert_ptr_nonnull(strstr(log[0], "dgx-a100-07"));
	free(log[0]);
	free(log);
	/* Backing off: an unforced poll leaves it alone. */
	xp_agent_pool_status(pool, 0, &st);
	uint64_t polls = st.polls;
	ck_assert_uint_eq(st.fails, 1);
	ck_assert_int_ge(st.next_try, time(NULL) + 25);
	xp_agent_pool_poll(pool, false);
	xp_agent_pool_status(pool, 0, &st);
	ck_assert_uint_eq(st.polls, polls);

	/* Back on the same port: a forced poll takes it back. */
	char url2[256];
	const char *args[] = {"--replay", rep};
	track(xp_agent_restart(url2, sizeof url2, url, args, 2));
	ck_assert_uint_eq(xp_agent_pool_poll(pool, true), 0);
	xp_agent_pool_status(pool, 0, &st);
	ck_assert(st.up);
	ck_assert_uint_eq(st.fails, 0);
	c = xp_agent_pool_cluster(pool, time(NULL));
	ck_assert_int_eq(c->nodes[0]->state, XP_NODE_UP);
	ck_assert_int_eq(c->nodes[0]->age_s, 0);
	xp_cluster_free(c);
	ck_assert_int_eq(xp_agent_pool_remove(pool, url), 0);
	ck_assert_int_eq(xp_agent_pool_remove(pool, url), -1);
	ck_assert_uint_eq(xp_agent_pool_size(pool), 0);
	xp_agent_pool_free(pool);
	free(rep);
}
END_TEST

/* A node that changes its identity is refused, and its old data kept. */
START_TEST(identity_is_pinned)
{
	char *rep = xp_replay_dgx(dir);
	char url[256];
	pid_t p = agent(url, sizeof url, rep);
	struct xp_agent_pool *pool = xp_agent_pool_new(NULL);
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_agent_pool_add(pool, url, NULL, &err), 0);
	ck_assert_uint_eq(xp_agent_pool_poll(pool, true), 0);
	xp_agent_stop(p);
	untrack(p);
	const char *args[] = {"--replay", rep, "--name", "impostor"};
	char url2[256];
	track(xp_agent_restart(url2, sizeof url2, url, args, 4));
	ck_assert_uint_eq(xp_agent_pool_poll(pool, true), 1);
	struct xp_agent_status st;
	xp_agent_pool_status(pool, 0, &st);
	ck_assert_ptr_nonnull(strstr(st.error, "claims to be node impostor, but it served dgx-a100-07"));
	ck_assert_uint_eq(st.rejected, 1);
	struct xp_cluster *c = xp_agent_pool_cluster(pool, time(NULL));
	ck_assert_str_eq(c->nodes[0]->name, "dgx-a100-07");
	ck_assert_int_eq(c->nodes[0]->state, XP_NODE_UNREACHABLE);
	xp_cluster_free(c);
	xp_agent_pool_free(pool);
	free(rep);
}
END_TEST

/* Tokens: none, wrong, right (global and per line, relative to the agents file); files others
 * can read are refused on the console's side too. */
START_TEST(tokens)
{
	char *rep = replay_mi100();
	char *tok = xp_write_file(dir, "agent.token", "s3cret-token-value\n", 0600);
	char *wrong = xp_write_file(dir, "wrong.token", "not-the-token\n", 0600);
	char *open_tok = xp_write_file(dir, "open.token", "s3cret-token-value\n", 0644);
	char url[256];
	started(xp_agent_start(url, sizeof url, "--replay", rep, "--token-file", tok, NULL), url);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--agent", url, "inventory", NULL), 0);
	ck_assert_int_eq(r.status, 4);
	ck_assert_msg(strstr(r.err, "refused the token (none given)"), "%s", r.err);
	ck_assert_ptr_null(strstr(r.err, "s3cret"));
	xp_run_free(&r);
	expect_xpool(4, "HTTP 401", "--agent", url, "--agent-token", wrong, "inventory", NULL);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--agent", url, "--agent-token", tok, "inventory", NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "mi100-11"));
	xp_run_free(&r);
	char *line = xp_asprintf("%s agent.token\n", url);
	char *file = xp_write_file(dir, "agents.txt", line, 0644);
	expect_xpool(0, NULL, "--agents", file, "inventory", NULL);
	expect_xpool(1, "others may read it", "--agent", url, "--agent-token", open_tok, "inventory", NULL);
	free(line);
	free(file);
	free(tok);
	free(wrong);
	free(open_tok);
	free(rep);
}
END_TEST

/* `agent probe`: the agent runs a whitelisted probe; with --case the console records what came
 * back for the node's environments, with the output as the log. */
START_TEST(probe_becomes_evidence)
{
	char *rep = replay_mi100();
	char *wtok = xp_write_file(dir, "write.token", "probe-writer-token\n", 0600);
	char *rtok = xp_write_file(dir, "read.token", "probe-reader-token\n", 0600);
	char *conf = xp_write_file(dir, "agent.conf",
				"# what this node may be asked to run\n"
				"probe smoke timeout=30 layer=discovered -- /bin/echo hello from the probe\n"
				"probe broken layer=schedulable -- /bin/false\n"
				"probe slow timeout=30 -- /bin/sleep 5\n",
				0644);
	char url[256];
	started(xp_agent_start(url, sizeof url, "--replay", rep, "--config", conf, "--write-token-file", wtok, NULL),
		url);
	char *state = xp_asprintf("%s/state", dir);
	setenv("XDG_STATE_HOME", state, 1);
	char *db = xp_asprintf("%s/x.db", dir);
	struct xp_run r;
	expect_xpool(0, NULL, "--db", db, "validate", "case", "add", "llama", "--entry", "/bin/true", NULL);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "agent", "probe", url, "smoke", "--case", "llama",
				      "--layer", "discovered", "--write-token-file", wtok, NULL),
			 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_want_parts(r.out, "probe smoke on mi100-11: discovered pass", "hello from the probe",
		      "recorded discovered pass for AMD:AMD Instinct MI100", NULL);
	/* The unknown runtime reads "-", not an empty field after a ':'. */
	ck_assert_msg(strstr(r.out, ":-, case llama\n") && !strstr(r.out, ":, case"), "%s", r.out);
	/* The log holds what the probe printed. */
	const char *log = strstr(r.out, "\nlog ");
	ck_assert_ptr_nonnull(log);
	char *path = xp_strndup(log + 5, strcspn(log + 5, "\n"));
	ck_assert_ptr_nonnull(strstr(path, state));
	struct xp_err err = {{0}};
	size_t len;
	char *text = xp_read_file(path, 4096, &len, &err);
	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(text, "hello from the probe\n");
	free(text);
	free(path);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "agent", "probe", url, "broken", "--case", "llama",
				      "--layer", "schedulable", "--write-token-file", wtok, NULL),
			 0);
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.out, "recorded schedulable fail"));
	ck_assert_ptr_nonnull(strstr(r.err, "the fail is recorded"));
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "validate", "matrix", NULL), 0);
	ck_assert_ptr_nonnull(strstr(r.out, "PF..."));
	xp_run_free(&r);
	/* The read token is not the write token; a name not in the config is refused by the agent. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "agent", "probe", url, "smoke", "--write-token-file", rtok, NULL), 0);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "HTTP 401") || strstr(r.err, "HTTP 403"), "%s", r.err);
	ck_assert_ptr_null(strstr(r.err, "probe-reader-token"));
	xp_run_free(&r);
	expect_xpool(1, "HTTP 404", "agent", "probe", url, "nope", "--write-token-file", wtok, NULL);
	/* A probe longer than the console waits: a clear error, not a day's hang. */
	expect_xpool(1, "no reply within 1 s", "agent", "probe", url, "slow", "--timeout", "1", "--write-token-file",
		     wtok, NULL);
	expect_xpool(2, NULL, "agent", "probe", url, "slow", "--timeout", "0", "--write-token-file", wtok, NULL);
	expect_xpool(2, NULL, "agent", "probe", url, "../etc", "--write-token-file", wtok, NULL);
	unsetenv("XDG_STATE_HOME");
	free(state);
	free(db);
	free(wtok);
	free(rtok);
	free(conf);
	free(rep);
}
END_TEST

/* `agent probe --case`: what would keep the result out of the matrix (an unknown case, a layer
 * whose lower layers are not pass, no --layer) is refused before the agent is asked, so the
 * probe never runs for nothing; a layer the agent's config does not give the probe records
 * nothing. */
START_TEST(probe_checks_first)
{
	char *rep = replay_mi100();
	char *wtok = xp_write_file(dir, "write.token", "probe-writer-token\n", 0600);
	char *mark = xp_asprintf("%s/ran", dir);
	char *line = xp_asprintf("probe mark timeout=30 -- touch %s\nprobe ok layer=discovered -- /bin/true\n", mark);
	char *conf = xp_write_file(dir, "agent.conf", line, 0644);
	char url[256];
	started(xp_agent_start(url, sizeof url, "--replay", rep, "--config", conf, "--write-token-file", wtok, NULL),
		url);
	char *state = xp_asprintf("%s/state", dir);
	setenv("XDG_STATE_HOME", state, 1);
	char *db = xp_asprintf("%s/x.db", dir);
	expect_xpool(0, NULL, "--db", db, "validate", "case", "add", "llama", NULL);
	expect_xpool(1, "no case named nope", "--db", db, "agent", "probe", url, "mark", "--case", "nope", "--layer",
		     "executes", "--write-token-file", wtok, NULL);
	ck_assert_int_ne(access(mark, F_OK), 0);
	/* The agent's default layer, executes, on a fresh matrix: schedulable is untested. */
	expect_xpool(1, "cannot record executes pass for AMD:AMD Instinct MI100", "--db", db, "agent", "probe",
		     url, "mark", "--case", "llama", "--layer", "executes", "--write-token-file", wtok, NULL);
	ck_assert_int_ne(access(mark, F_OK), 0);
	expect_xpool(2, "--case needs --layer", "--db", db, "agent", "probe", url, "mark", "--case", "llama",
		     "--write-token-file", wtok, NULL);
	expect_xpool(2, "not a layer", "--db", db, "agent", "probe", url, "mark", "--case", "llama", "--layer", "bogus",
		     "--write-token-file", wtok, NULL);
	ck_assert_int_ne(access(mark, F_OK), 0);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "validate", "matrix", NULL), 0);
	ck_assert_msg(strstr(r.out, ":-  P....  1/5"), "%s", r.out);
	xp_run_free(&r);
	/* The agent's config makes the probe executes evidence, not discovered: the agent says so
	 * before running it (409), and nothing is run or recorded. */
	expect_xpool(1, "probe mark gives executes evidence (its config's layer=), not discovered: nothing run", "--db",
		     db, "agent", "probe", url, "mark", "--case", "llama", "--layer", "discovered", "--write-token-file",
		     wtok, NULL);
	ck_assert_int_ne(access(mark, F_OK), 0);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "validate", "history", "AMD:AMD Instinct MI100", "llama",
				      NULL),
			 0);
	ck_assert_msg(r.status == 0 && !strstr(r.out, "executes"), "%s%s", r.out, r.err);
	xp_run_free(&r);
	/* Recorded with --json: standard output is the agent's reply alone. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "agent", "probe", url, "ok", "--case", "llama", "--layer",
				      "discovered", "--write-token-file", wtok, "--json", NULL),
			 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	json_error_t je;
	json_t *doc = json_loads(r.out, 0, &je);
	ck_assert_msg(doc != NULL, "not JSON: %s: %s", je.text, r.out);
	json_decref(doc);
	xp_run_free(&r);
	/* The id as shown, "-" for the unknown runtime, names the environment. */
	expect_xpool(0, NULL, "--db", db, "validate", "history", "AMD:AMD Instinct MI100:6.3.6:113-D3431401-101:-", "llama",
		     NULL);
	unsetenv("XDG_STATE_HOME");
	free(state);
	free(db);
	free(wtok);
	free(conf);
	free(line);
	free(mark);
	free(rep);
}
END_TEST

/* The console's measured baselines apply to an agent's node as to its own: ECU counted again
 * from the peak the agent counted with. */
START_TEST(baselines_apply_to_agent_nodes)
{
	char *rep = xp_replay_dgx(dir);
	char url[256];
	agent(url, sizeof url, rep);
	char *db = xp_asprintf("%s/b.db", dir);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--agent", url, "inventory", "--json", NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	json_t *doc = json_loads(r.out, 0, NULL);
	json_t *d = json_array_get(json_object_get(json_array_get(json_object_get(doc, "nodes"), 0), "devices"), 0);
	double ecu = json_number_value(json_object_get(d, "ecu"));
	ck_assert_msg(ecu > 0, "%s", r.out);
	const char *model = json_string_value(json_object_get(d, "model"));
	const char *driver = json_string_value(json_object_get(d, "driver"));
	char *m = xp_strdup(model), *dr = xp_strdup(driver);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(d, "ecu_basis")), "(manifest)"));
	json_decref(doc);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "baseline", "add", m, dr, "gemm-bf16", "0.8", NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_run_free(&r);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--db", db, "--agent", url, "inventory", "--json", NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	doc = json_loads(r.out, 0, NULL);
	d = json_array_get(json_object_get(json_array_get(json_object_get(doc, "nodes"), 0), "devices"), 0);
	ck_assert_double_eq_tol(json_number_value(json_object_get(d, "ecu")), ecu * 0.8, 1e-6);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(d, "ecu_basis")), "x 0.80 (baseline)"));
	json_decref(doc);
	xp_run_free(&r);
	free(m);
	free(dr);
	free(db);
	free(rep);
}
END_TEST

/* An https agent with its own certificate: trusted with --agent-ca, refused without. */
START_TEST(https_agent)
{
	char *rep = replay_mi100();
	char *key = xp_asprintf("%s/key.pem", dir), *cert = xp_asprintf("%s/cert.pem", dir);
	xp_self_signed(key, cert);
	chmod(key, 0600);
	char url[256];
	struct xp_run r;
	started(xp_agent_start(url, sizeof url, "--replay", rep, "--tls-cert", cert, "--tls-key", key, NULL), url);
	ck_assert_msg(strncmp(url, "https://", 8) == 0, "%s", url);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--agent", url, "--agent-ca", cert, "inventory", NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "mi100-11"));
	xp_run_free(&r);
	/* Not trusted: the certificate is the reason, and the node is unreachable. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--agent", url, "inventory", NULL), 0);
	ck_assert_int_eq(r.status, 4);
	ck_assert_msg(strstr(r.err, "certificate"), "%s", r.err);
	xp_run_free(&r);
	/* Plain http to a TLS port is a failure of that agent, not a hang. */
	char *plain = xp_asprintf("http://%s", url + 8);
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--agent-timeout", "2", "--agent", plain, "inventory", NULL), 0);
	ck_assert_int_eq(r.status, 4);
	xp_run_free(&r);
	free(plain);
	free(key);
	free(cert);
	free(rep);
}
END_TEST

/* A hostile agent's ETag with a CR in it must not reach the next request's headers. */
START_TEST(etag_cannot_inject_headers)
{
	char *rep = replay_mi100();
	struct xp_run l;
	ck_assert_int_eq(xp_run_xpool(&l, NULL, "--replay", rep, "inventory", "--json", NULL), 0);
	char *reply = xp_asprintf("HTTP/1.1 200 OK\r\nETag: \"x\"\rX-Injected: yes\r\nContent-Length: %zu\r\n"
				  "Connection: close\r\n\r\n%s",
				  strlen(l.out), l.out);
	xp_run_free(&l);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	ck_assert_int_eq(bind(s, (struct sockaddr *)&a, sizeof a), 0);
	ck_assert_int_eq(listen(s, 8), 0);
	socklen_t al = sizeof a;
	getsockname(s, (struct sockaddr *)&a, &al);
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d", ntohs(a.sin_port));
	struct xp_agent_pool *pool = xp_agent_pool_new(&(struct xp_agent_pool_opts){.timeout_s = 3});
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_agent_pool_add(pool, url, NULL, &err), 0);
	/* Serve two requests from a child; hand the second request's head back through a pipe. */
	int pp[2];
	ck_assert_int_eq(pipe(pp), 0);
	pid_t child = fork();
	if (child == 0) {
		for (int k = 0; k < 2; k++) {
			int c = accept(s, NULL, NULL);
			char head[8192] = "";
			size_t got = 0;
			while (got < sizeof head - 1 && !strstr(head, "\r\n\r\n")) {
				ssize_t r = read(c, head + got, sizeof head - 1 - got);
				if (r <= 0)
					break;
				got += (size_t)r;
				head[got] = '\0';
			}
			if (k == 1 && write(pp[1], head, got) < 0)
				_exit(1);
			if (write(c, reply, strlen(reply)) < 0)
				_exit(1);
			close(c);
		}
		_exit(0);
	}
	track(child);
	close(pp[1]);
	ck_assert_uint_eq(xp_agent_pool_poll(pool, true), 0);
	xp_agent_pool_poll(pool, true);
	char head[8192];
	ssize_t n = read(pp[0], head, sizeof head - 1);
	ck_assert_int_gt(n, 0);
	head[n] = '\0';
	ck_assert_msg(strstr(head, "X-Injected") == NULL, "%s", head);
	ck_assert_msg(strstr(head, "If-None-Match") == NULL, "%s", head);
	close(pp[0]);
	close(s);
	xp_agent_pool_free(pool);
	free(reply);
	free(rep);
}
END_TEST

/* Stopping the console's refresh thread does not wait out a hung agent's timeout. */
START_TEST(poller_stops_during_a_hung_poll)
{
	char *rep = replay_mi100();
	char url[256];
	pid_t p = agent(url, sizeof url, rep);
	kill(p, SIGSTOP);
	struct xp_ctx ctx;
	xp_ctx_init(&ctx, stdout, stderr);
	ctx.agents = xp_strdup(url);
	ctx.agent_timeout = 60;
	struct xp_poller *pl = xp_poller_new();
	ck_assert_int_eq(xp_poller_start(pl, &ctx), 0);
	usleep(300000); /* the first poll is now waiting on the stopped agent */
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	xp_poller_stop(pl);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_msg(s < 1.5, "stopping took %.2f s", s);
	xp_ctx_free(&ctx);
	kill(p, SIGCONT);
	free(rep);
}
END_TEST

static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* With a cycle (the console's), a hung agent does not hold back the others: each poll ends at
 * its cycle with the hung request left in flight, not asked again, and failed by its own
 * timeout in a later poll; meanwhile the good agent is asked and answers every poll. */
START_TEST(hung_agent_holds_back_no_other)
{
	char *rep = xp_replay_dgx(dir), *rep2 = replay_mi100();
	char good[256], slow[256];
	agent(good, sizeof good, rep);
	pid_t sp = agent(slow, sizeof slow, rep2);
	struct xp_agent_pool *pool = xp_agent_pool_new(
		&(struct xp_agent_pool_opts){.timeout_s = 3, .backoff_base_s = 30, .cycle_s = 0.3});
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_agent_pool_add(pool, good, NULL, &err), 0);
	ck_assert_int_eq(xp_agent_pool_add(pool, slow, NULL, &err), 0);
	ck_assert_uint_eq(xp_agent_pool_poll(pool, true), 0);
	struct xp_agent_status st;
	xp_agent_pool_status(pool, 1, &st);
	ck_assert(st.up);
	uint64_t slow_polls = st.polls;

	kill(sp, SIGSTOP);
	double t0 = mono_now(), failed_at = 0;
	unsigned polls = 0, good_answers = 0;
	while (mono_now() - t0 < 10 && !failed_at) {
		xp_agent_pool_status(pool, 0, &st);
		uint64_t before = st.polls;
		size_t failed = xp_agent_pool_poll(pool, false);
		polls++;
		xp_agent_pool_status(pool, 0, &st);
		good_answers += st.polls > before && st.up;
		xp_agent_pool_status(pool, 1, &st);
		if (failed) {
			ck_assert_uint_eq(failed, 1);
			ck_assert(!st.up);
			ck_assert_msg(st.error && strstr(st.error, "no answer within 3.0 s"), "%s", st.error ? st.error : "");
			failed_at = mono_now() - t0;
		} else {
			/* In flight, not failed: still up with its last data, and not asked again. */
			ck_assert(st.up);
			ck_assert_uint_eq(st.polls, slow_polls);
		}
	}
	/* The hung agent failed by its timeout, not before; the polls before that returned at
	 * their cycle, and the good agent answered in them (a loaded machine may miss some). */
	ck_assert_msg(failed_at >= 2.9 && failed_at < 8, "failed after %.2f s", failed_at);
	ck_assert_msg(polls >= 4, "%u polls in %.2f s", polls, failed_at);
	ck_assert_msg(good_answers >= polls / 2, "the good agent answered %u of %u polls", good_answers, polls);
	kill(sp, SIGCONT);
	xp_agent_pool_free(pool);
	free(rep);
	free(rep2);
}
END_TEST

/* Between polls the pump reads a slow agent's reply as it comes: the reply is taken even when
 * the next poll comes after the request's timeout (a poll alone would act on the expired timer
 * first and call it a timeout), and the pump ends when the request does, not at its limit. */
START_TEST(pump_reads_a_slow_reply_between_polls)
{
	char *rep = replay_mi100();
	char slow[256];
	pid_t sp = agent(slow, sizeof slow, rep);
	struct xp_agent_pool *pool = xp_agent_pool_new(
		&(struct xp_agent_pool_opts){.timeout_s = 1.5, .backoff_base_s = 30, .cycle_s = 0.3});
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_agent_pool_add(pool, slow, NULL, &err), 0);
	ck_assert(!xp_agent_pool_pump(pool, 1)); /* nothing in flight: at once */
	ck_assert_uint_eq(xp_agent_pool_poll(pool, true), 0);
	struct xp_agent_status st;
	xp_agent_pool_status(pool, 0, &st);
	ck_assert(st.up);
	uint64_t polls = st.polls;

	kill(sp, SIGSTOP);
	double t0 = mono_now();
	ck_assert_uint_eq(xp_agent_pool_poll(pool, true), 0);
	xp_agent_pool_status(pool, 0, &st);
	ck_assert_uint_eq(st.polls, polls); /* in flight */
	/* Resumed only after that poll has returned: a loaded machine that delays this process
	 * can make the agent later, never early. */
	pid_t waker = fork();
	if (waker == 0) {
		usleep(500000);
		kill(sp, SIGCONT);
		_exit(0);
	}
	ck_assert(xp_agent_pool_pump(pool, 3));
	double pumped = mono_now() - t0;
	ck_assert_msg(pumped >= 0.7 && pumped < 2.8, "the pump returned after %.2f s", pumped);
	/* The next poll comes after the request's 1.5 s timeout, and still takes its reply. */
	while (mono_now() - t0 < 2.0)
		usleep(50000);
	ck_assert_uint_eq(xp_agent_pool_poll(pool, false), 0);
	xp_agent_pool_status(pool, 0, &st);
	ck_assert_msg(st.up, "%s", st.error ? st.error : "");
	ck_assert_uint_eq(st.polls, polls + 1);
	ck_assert_msg(st.latency_ms >= 700, "latency %.0f ms", st.latency_ms);
	waitpid(waker, NULL, 0);
	xp_agent_pool_free(pool);
	free(rep);
}
END_TEST

/* Bad agent lists are refused before anything is polled, naming the line. */
START_TEST(bad_agent_lists)
{
	struct {
		const char *text, *msg;
	} cases[] = {
		{"http://127.0.0.1:1\nftp://x:1\n", ":2: agent URL ftp://x:1: must start with http:// or https://"},
		{"http://127.0.0.1:1\nhttp://127.0.0.1:1/\n", ":2: agent http://127.0.0.1:1 is listed already"},
		{"http://admin:pw@node:7447\n", ":1: agent URL http://admin:pw@node:7447: no user or password"},
		{"http://node:7447 a.token extra\n", ":1: expected URL [TOKEN_FILE], found more: extra"},
		{"http://node:99999\n", "port is not 1-65535"},
		{"http://node:7447 missing.token\n", "missing.token: No such file"},
		{"http://node:7447/v1?x=1\n", "no query"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *file = xp_write_file(dir, "bad.txt", cases[i].text, 0644);
		struct xp_run r;
		ck_assert_int_eq(xp_run_xpool(&r, NULL, "--agents", file, "inventory", NULL), 0);
		ck_assert_msg(r.status == 1, "case %zu: status %d", i, r.status);
		ck_assert_msg(strstr(r.err, cases[i].msg), "case %zu: %s", i, r.err);
		xp_run_free(&r);
		free(file);
	}
	expect_xpool(2, NULL, "--agent", "gopher://x", "inventory", NULL);
	expect_xpool(1, "/nonexistent/agents", "--agents", "/nonexistent/agents", "inventory", NULL);
	/* add and rm belong to a running console. */
	expect_xpool(2, "running console", "agent", "add", "http://x:1", NULL);
	expect_xpool(2, NULL, "agent", "ls", NULL);
}
END_TEST

/* The node the cluster shows for farm node i, and what the farm serves, as JSON texts. */
static void expect_same_node(const struct xp_node *got, struct xp_farm *farm, const struct xp_cluster *src, size_t i)
{
	char url[64];
	xp_farm_url(farm, i, url, sizeof url);
	struct xp_node *want = xp_farm_node(farm, src, i);
	free(want->source);
	want->source = xp_strdup(url);
	want->age_s = 0; /* the agent answered: its data is fresh */
	json_t *a = xp_node_to_json(got), *b = xp_node_to_json(want);
	char *ta = json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS), *tb = json_dumps(b, JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_msg(strcmp(ta, tb) == 0, "node %zu: got %.300s\nwant %.300s", i, ta, tb);
	free(ta);
	free(tb);
	json_decref(a);
	json_decref(b);
	xp_node_free(want);
}

/* At scale, through one farm process answering for every node over real HTTP (issue 15): a warm
 * cycle is all 304s and decodes nothing; after K nodes change, exactly K replies are decoded and
 * K nodes copied into the next cluster, which shares every other node with the last one; the
 * cluster is what the agents serve, every time. */
START_TEST(farm_warm_cycle_and_k_changes)
{
	size_t n = 1500;
	struct rlimit rl;
	/* Each agent is a socket here and one in the farm: fit under the descriptor limit. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && rl.rlim_max < n + 256)
		n = rl.rlim_max > 512 ? (size_t)rl.rlim_max - 256 : (size_t)rl.rlim_max / 4;
	if (n < 32) {
		fprintf(stderr, "check_agents: SKIPPED farm_warm_cycle_and_k_changes: a descriptor limit of %lu "
				"leaves no room for agents\n", (unsigned long)rl.rlim_max);
		return;
	}
	char inv[256], nodes_s[32];
	snprintf(inv, sizeof inv, "%s/inv.json", dir);
	snprintf(nodes_s, sizeof nodes_s, "%zu", n);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "sim", "gen", "--nodes", nodes_s, "-o", inv, NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	xp_run_free(&r);
	struct xp_err err = {{0}};
	struct xp_cluster *src = xp_snapshot_load(inv, &err);
	ck_assert_msg(src != NULL, "%s", err.msg);
	struct xp_farm *farm = xp_farm_start(src);
	ck_assert_ptr_nonnull(farm);
	struct xp_agent_pool *pool = xp_agent_pool_new(NULL);
	for (size_t i = 0; i < n; i++) {
		char url[64];
		xp_farm_url(farm, i, url, sizeof url);
		ck_assert_int_eq(xp_agent_pool_add(pool, url, NULL, &err), 0);
	}
	/* The first cycle connects to all at once: one that the listen queue made late is asked again. */
	size_t failed = xp_agent_pool_poll(pool, true);
	for (int t = 0; t < 5 && failed; t++)
		failed = xp_agent_pool_poll(pool, true);
	ck_assert_uint_eq(failed, 0);
	uint64_t dec0, built0;
	xp_agent_pool_work(pool, &dec0, &built0);
	ck_assert_uint_ge(dec0, n);
	ck_assert_uint_eq(built0, 0);
	struct xp_cluster *c1 = xp_cluster_new();
	xp_source_merge_agents(c1, pool, time(NULL), 0);
	ck_assert_uint_eq(c1->n_nodes, n);
	uint64_t dec, built;
	xp_agent_pool_work(pool, &dec, &built);
	ck_assert_uint_eq(built, n);
	for (size_t i = 0; i < n; i++)
		expect_same_node(c1->nodes[i], farm, src, i);

	/* Warm: every agent answers 304; nothing is decoded, nothing changed. */
	uint64_t gen = xp_agent_pool_generation(pool);
	struct xp_farm_counts f0 = xp_farm_counts(farm);
	ck_assert_uint_eq(xp_agent_pool_poll(pool, false), 0);
	struct xp_farm_counts f1 = xp_farm_counts(farm);
	ck_assert_uint_eq(f1.not_modified - f0.not_modified, n);
	ck_assert_uint_eq(f1.ok200 - f0.ok200, 0);
	ck_assert_uint_eq(xp_agent_pool_generation(pool), gen);
	xp_agent_pool_work(pool, &dec, &built);
	ck_assert_uint_eq(dec, dec0);

	/* Rounds of K changed nodes: K decoded, K copied, the rest shared with the last cluster. */
	unsigned seed = 15;
	bool *changed = calloc(n, sizeof *changed);
	for (int round = 0; round < 3; round++) {
		size_t k = 0;
		memset(changed, 0, n * sizeof *changed);
		for (size_t j = 0; j < 37; j++) {
			size_t i = (size_t)rand_r(&seed) % n;
			if (!changed[i]) {
				changed[i] = true;
				xp_farm_change(farm, i);
				k++;
			}
		}
		uint64_t d0, b0;
		xp_agent_pool_work(pool, &d0, &b0);
		f0 = xp_farm_counts(farm);
		ck_assert_uint_eq(xp_agent_pool_poll(pool, false), 0);
		f1 = xp_farm_counts(farm);
		ck_assert_uint_eq(f1.ok200 - f0.ok200, k);
		ck_assert_uint_eq(f1.not_modified - f0.not_modified, n - k);
		ck_assert_uint_ne(xp_agent_pool_generation(pool), gen);
		gen = xp_agent_pool_generation(pool);
		struct xp_cluster *c2 = xp_cluster_new();
		xp_source_merge_agents(c2, pool, time(NULL), 0);
		xp_agent_pool_work(pool, &dec, &built);
		ck_assert_uint_eq(dec - d0, k);
		ck_assert_uint_eq(built - b0, k);
		ck_assert_uint_eq(c2->n_nodes, n);
		for (size_t i = 0; i < n; i++) {
			if (changed[i]) {
				ck_assert_ptr_ne(c2->nodes[i], c1->nodes[i]);
				expect_same_node(c2->nodes[i], farm, src, i);
			} else {
				ck_assert_ptr_eq(c2->nodes[i], c1->nodes[i]);
			}
		}
		/* The old cluster goes (as the console frees the one it showed): the shared nodes stay. */
		xp_cluster_free(c1);
		c1 = c2;
	}
	for (size_t i = 0; i < n; i++)
		expect_same_node(c1->nodes[i], farm, src, i);
	/* Another baselines basis (the database changed): every node is made again, rebased, with
	 * nothing decoded; the same basis again makes none. */
	uint64_t d0, b0;
	xp_agent_pool_work(pool, &d0, &b0);
	for (int again = 0; again < 2; again++) {
		struct xp_cluster *c2 = xp_cluster_new();
		xp_source_merge_agents(c2, pool, time(NULL), 1);
		xp_agent_pool_work(pool, &dec, &built);
		ck_assert_uint_eq(dec, d0);
		ck_assert_uint_eq(built - b0, again ? 0 : n);
		for (size_t i = 0; i < n; i++)
			if (!again)
				ck_assert_ptr_ne(c2->nodes[i], c1->nodes[i]);
			else
				ck_assert_ptr_eq(c2->nodes[i], c1->nodes[i]);
		xp_cluster_free(c1);
		c1 = c2;
		b0 = built;
	}
	free(changed);
	xp_agent_pool_free(pool);
	/* The pool gone, the cluster is the nodes' last owner. */
	ck_assert_str_eq(c1->nodes[0]->name, src->nodes[0]->name);
	xp_cluster_free(c1);
	xp_farm_stop(farm);
	xp_cluster_free(src);
}
END_TEST

XP_DEFINE_SUITE(agents,
	{"client", .timeout_s = 120, .setup = setup, .teardown = teardown,
	 .tests = {inventory_from_three_agents, faults_cost_only_their_agent,
		   pool_recovers_and_backs_off, identity_is_pinned, tokens, bad_agent_lists,
		   probe_becomes_evidence, probe_checks_first, https_agent, baselines_apply_to_agent_nodes,
		   etag_cannot_inject_headers, poller_stops_during_a_hung_poll, hung_agent_holds_back_no_other,
		   pump_reads_a_slow_reply_between_polls}},
	{"scale", .timeout_s = 120, .setup = setup, .teardown = teardown, .tests = {farm_warm_cycle_and_k_changes}})
