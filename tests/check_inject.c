/* check_inject.c: terminal injection. Every kind of outside source hands xpool a name or a
 * text holding a CSI (ESC [ 2J, ESC [ 31m), an OSC (a window title, ESC ] 0; ... BEL, and a
 * clipboard write, ESC ] 52; ... ST), a DCS (ESC P ... ST), C1 controls (a raw 0x9b byte and
 * U+009B as UTF-8), U+202E (right-to-left override), the U+2066/U+2069 isolates and a lone
 * BEL, BS and CR:
 *   vendor tools (a replay directory: npu-smi's process name and health, the hostname,
 *   nvidia-smi's product name and serial), an agent (a real `xpool agent` serving that
 *   replay, and fake agents answering hostile replies), the engines (Slurm's scontrol and
 *   squeue faked on PATH; a loopback Kubernetes API server whose nodes carry it in their
 *   names, labels and taints) and files (inventory JSON, job specs, themes, agents files,
 *   bookmarks, validation imports, batch scripts, an hwloc XML, adapter manifests) and
 *   command-line words that come back in error messages.
 * Case "text": what the commands print (text and --json, stdout and stderr) holds no byte
 * below 0x20 but newline and tab, no DEL, nothing that is not UTF-8, no C1 control and no
 * bidirectional control; the payload shows as '?' where it was.
 * Case "console": the console in tmux on each source: the screen shows the payload masked
 * (capture-pane, also with -e), the pane's title and tmux's paste buffers are untouched, and
 * the raw bytes the console wrote to the terminal (pipe-pane) hold none of the payload's
 * sequences. */
#include <check.h>
#include <jansson.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checklib.h"
#include "fakehost.h"
#include "format.h"
#include "k8slib.h"
#include "safe_out.h"
#include "suitelib.h"
#include "testlib.h"
#include "tmuxlib.h"
#include "xp.h"

/* The payload, as raw bytes (text sources). */
#define PAYLOAD                                                                                        \
	"A\x1b[2J\x1b[31mB\x1b]0;pwned\x07" "C\x1b]52;c;cHduZWQ=\x1b\\D\x1bPqdcs\x1b\\E\x9b" "F\xc2\x9bG" \
	"\xe2\x80\xaeH\xe2\x81\xa6I\xe2\x81\xa9J\x07K\x08L\rM"
/* The same without the raw 0x9b and the CR, for JSON (which must be UTF-8) and one-line words. */
#define PAYLOAD_UTF8                                                                                   \
	"A\x1b[2J\x1b[31mB\x1b]0;pwned\x07" "C\x1b]52;c;cHduZWQ=\x1b\\D\x1bPqdcs\x1b\\E" "F\xc2\x9bG"      \
	"\xe2\x80\xaeH\xe2\x81\xa6I\xe2\x81\xa9J\x07K\x08LM"
/* What the start of either looks like once masked: the operator sees something was there. */
#define MARK "A?[2J?[31mB?]0;pwned?C"

static char dir[128];   /* this test's scratch directory */
static char *evil;      /* the hostile replay directory */

/* What is wrong with the text of n bytes at s for a terminal (NULL: nothing), and where. */
static const char *unsafe_what(const unsigned char *s, size_t n, size_t *at, bool raw)
{
	for (size_t i = 0; i < n;) {
		*at = i;
		unsigned c = s[i];
		if (c == '\n' || c == '\t') {
			i++;
			continue;
		}
		/* The terminal stream holds ncurses' own cursor motion and escapes, and the shift-in
		 * and shift-out of its line-drawing set. */
		if (raw && (c == 0x1b || c == '\r' || c == '\b' || c == 0x0e || c == 0x0f)) {
			i++;
			continue;
		}
		if (c < 0x20 || c == 0x7f)
			return "a C0 control or DEL";
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		if (!len || i + len > n)
			return "a byte that is not UTF-8";
		unsigned cp = c & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return "a byte that is not UTF-8";
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || (cp >= 0xd800 && cp <= 0xdfff))
			return "an overlong or surrogate form";
		if (cp >= 0x80 && cp <= 0x9f)
			return "a C1 control";
		if (cp == 0x61c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
		    (cp >= 0x2066 && cp <= 0x2069))
			return "a bidirectional control";
		i += len;
	}
	return NULL;
}

/* Fails when text (what a command printed) holds anything a terminal would act on. */
static void check_text(const char *what, const char *text)
{
	size_t at = 0;
	const char *bad = unsafe_what((const unsigned char *)text, strlen(text), &at, false);
	ck_assert_msg(!bad, "%s: %s at byte %zu: ...%.40s", what, bad, at, text + (at > 20 ? at - 20 : 0));
}

/* Runs xpool with the NULL-terminated arguments and checks both streams; returns the run
 * (free it). */
static struct xp_run run_checked(const char *first, ...)
{
	const char *argv[48] = {xp_bin()};
	size_t n = 1;
	va_list ap;
	va_start(ap, first);
	for (const char *a = first; a && n < 47; a = va_arg(ap, const char *))
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	struct xp_run r;
	ck_assert_int_eq(xp_run_argv(&r, (char *const *)argv, NULL), 0);
	char what[512] = "xpool";
	for (size_t i = 1; i < n; i++) {
		size_t l = strlen(what);
		snprintf(what + l, sizeof what - l, " %s", argv[i]);
	}
	char *w = xp_asprintf("%s (stdout)", what);
	check_text(w, r.out);
	free(w);
	w = xp_asprintf("%s (stderr)", what);
	check_text(w, r.err);
	free(w);
	return r;
}

/* run_checked, and the payload must show masked on stdout or stderr (the source reached the
 * output: the check above was not vacuous). */
#define SHOWN(...)                                                                                   \
	do {                                                                                         \
		struct xp_run r_ = run_checked(__VA_ARGS__, NULL);                                   \
		ck_assert_msg(strstr(r_.out, MARK) || strstr(r_.err, MARK), "payload not shown (%d):\n%s%s", \
			      r_.status, r_.out, r_.err);                                            \
		xp_run_free(&r_);                                                                    \
	} while (0)
/* run_checked only: the source may be refused whole (its error is then what is checked). */
#define CLEAN(...)                                              \
	do {                                                    \
		struct xp_run r_ = run_checked(__VA_ARGS__, NULL); \
		xp_run_free(&r_);                                  \
	} while (0)

/* Replaces the first from in text (a fixture's, heap) with to; fails when from is not there. */
static char *replace(char *text, const char *from, const char *to)
{
	char *p = strstr(text, from);
	ck_assert_msg(p != NULL, "fixture lacks \"%s\"", from);
	char *out = xp_asprintf("%.*s%s%s", (int)(p - text), text, to, p + strlen(from));
	free(text);
	return out;
}

/* The hostile replay: 8x 910B3 (npu-smi with processes) and 4x A100 (nvidia-smi -q -x), in
 * a directory whose name holds the payload too (the console's header names it). */
static char *make_evil(void)
{
	char *d = xp_asprintf("%s/evil" PAYLOAD_UTF8, dir);
	mkdir(d, 0755);
	free(xp_write_file(d, "hostname", "evil" PAYLOAD "\n", 0644));
	char *t = xp_fixture_text("ascend/npu-smi-info_8x910B3_25.2.0_procs.txt", NULL);
	t = replace(t, "| 2       0                 | 1333928       |                          |",
		    "| 2       0                 | 1333928       | py" PAYLOAD "   |");
	t = replace(t, "| 1     910B3               | OK            |", "| 1     910B3               | W" PAYLOAD " |");
	free(xp_write_file(d, "npu-smi-info.txt", t, 0644));
	free(t);
	/* XML 1.0 allows no C0 control but tab, newline and CR: C1 and bidi only. */
	t = xp_fixture_text("nvidia-smi/a100-sxm4-80gb-x4_535.54.03.q.xml", NULL);
	t = replace(t, "<product_name>NVIDIA A100-SXM4-80GB</product_name>",
		    "<product_name>NVIDIA A100\xc2\x9b" "2J\xe2\x80\xae" "evil</product_name>");
	t = replace(t, "<serial>1650522003820</serial>", "<serial>16\xc2\x9b" "31m\xe2\x81\xa6x</serial>");
	free(xp_write_file(d, "nvidia-smi-q-x.xml", t, 0644));
	free(t);
	return d;
}

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/xpool-inject-%d", (int)getpid());
	xp_rm_rf(dir);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	/* The commands' --db files and what they leave go there too. */
	ck_assert_int_eq(chdir(dir), 0);
	evil = make_evil();
	setenv("XDG_STATE_HOME", dir, 1);
	setenv("XDG_CONFIG_HOME", dir, 1);
}

static void teardown(void)
{
	xp_rm_rf(dir);
	free(evil);
}

/* --- Slurm: scontrol and squeue faked on PATH, printing recorded outputs made hostile. --- */

static char *slurm_conf(void)
{
	char *bin = xp_asprintf("%s/bin", dir);
	mkdir(bin, 0755);
	char *t = xp_fixture_text("slurm/scontrol-show-node-d.txt", NULL);
	t = replace(t, "NodeName=gpu02 ", "NodeName=gpu02" PAYLOAD_UTF8 " ");
	t = replace(t, "Reason=maintenance", "Reason=maint" PAYLOAD_UTF8);
	free(xp_write_file(dir, "nodes.txt", t, 0644));
	free(t);
	t = xp_fixture_text("slurm/squeue.txt", NULL);
	t = replace(t, "|root|four", "|root|four" PAYLOAD_UTF8);
	t = replace(t, "|ReqNodeNotAvail, UnavailableNodes:gpu02|", "|ReqNodeNotAvail" PAYLOAD_UTF8 "|");
	free(xp_write_file(dir, "squeue.txt", t, 0644));
	free(t);
	char *parts = xp_asprintf("%s/slurm/scontrol-show-partition.txt", getenv("XP_FIXTURES"));
	char *sh = xp_asprintf("#!/bin/sh\ncase \"$*\" in\n\"-d show node -o\") cat '%s/nodes.txt';;\n"
			       "\"show partition -o\") cat '%s';;\n*) echo \"scontrol: error: " PAYLOAD_UTF8 "\" >&2; exit 1;;\nesac\n",
			       dir, parts);
	free(xp_write_file(bin, "scontrol", sh, 0755));
	free(sh);
	sh = xp_asprintf("#!/bin/sh\ncat '%s/squeue.txt'\n", dir);
	free(xp_write_file(bin, "squeue", sh, 0755));
	free(sh);
	free(parts);
	char *path = xp_asprintf("%s:%s", bin, getenv("PATH"));
	setenv("PATH", path, 1);
	setenv("XPOOL_SLURM_JSON", "0", 1);
	free(path);
	free(bin);
	return xp_write_file(dir, "slurm.conf", "ClusterName=evil\n", 0644);
}

/* --- Kubernetes: a loopback API server whose nodes carry the payload. --- */

static struct {
	json_t *nodes, *pods;
} k8s;

static enum MHD_Result k8s_handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload, size_t *upload_len, void **state)
{
	(void)cls, (void)method, (void)version, (void)upload, (void)upload_len, (void)state;
	json_t *items = !strcmp(url, "/api/v1/nodes") ? k8s.nodes : !strcmp(url, "/api/v1/pods") ? k8s.pods : NULL;
	if (!items) {
		/* A refusal quoting the payload, as a proxy in the way might. */
		json_t *st = json_pack("{s:s, s:s, s:i}", "kind", "Status", "message", "not here: " PAYLOAD_UTF8, "code", 404);
		char *body = json_dumps(st, JSON_COMPACT);
		json_decref(st);
		enum MHD_Result rc = xp_k8slib_reply(c, 404, body, strlen(body), MHD_RESPMEM_MUST_FREE);
		return rc;
	}
	json_t *list = xp_k8slib_page(items, items == k8s.nodes ? "NodeList" : "PodList", 0, 0);
	char *body = json_dumps(list, JSON_COMPACT);
	json_decref(list);
	return xp_k8slib_reply(c, 200, body, strlen(body), MHD_RESPMEM_MUST_FREE);
}

/* Starts the server; its URL in url. */
static struct MHD_Daemon *k8s_start(char *url, size_t len)
{
	k8s.nodes = xp_k8slib_items("k8s/nodes.json");
	k8s.pods = xp_k8slib_items("k8s/pods.json");
	json_t *n0 = json_array_get(k8s.nodes, 0);
	json_t *md = json_object_get(n0, "metadata");
	json_object_set_new(md, "name", json_string("k8s" PAYLOAD_UTF8));
	json_t *labels = json_object_get(md, "labels");
	if (labels)
		json_object_set_new(labels, "evil", json_string(PAYLOAD_UTF8));
	json_t *spec = json_object_get(n0, "spec");
	if (!spec)
		json_object_set_new(n0, "spec", spec = json_object());
	json_object_set_new(spec, "taints",
			    json_pack("[{s:s, s:s}]", "key", "t" PAYLOAD_UTF8, "effect", "NoSchedule"));
	int port = 0;
	struct MHD_Daemon *d = xp_k8slib_serve(k8s_handle, NULL, &port);
	ck_assert_ptr_nonnull(d);
	snprintf(url, len, "http://127.0.0.1:%d", port);
	return d;
}

static void k8s_stop(struct MHD_Daemon *d)
{
	MHD_stop_daemon(d);
	json_decref(k8s.nodes);
	json_decref(k8s.pods);
}

/* A fake agent answering every request with reply; its pid, its URL in url. */
static pid_t fake_agent(const char *reply, char *url, size_t len)
{
	int port = 0;
	pid_t pid = xp_fake_http(&port, reply, strlen(reply));
	ck_assert_int_gt(pid, 0);
	snprintf(url, len, "http://127.0.0.1:%d", port);
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

START_TEST(vendor_tools)
{
	const char *cmds[][4] = {{"inventory"}, {"inventory", "--processes"}, {"health"}, {"problem", "list"},
				 {"topo"}, {"adapters"}, {"view", "topology"}, {"--json", "inventory"},
				 {"--json", "health"}, {"place", "--dry-run", "--devices", "1"}};
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++)
		CLEAN("--replay", evil, "--db", "x.db", cmds[i][0], cmds[i][1], cmds[i][2], cmds[i][3]);
	SHOWN("--replay", evil, "inventory", "--processes");
	SHOWN("--replay", evil, "health");
	SHOWN("--replay", evil, "view", "topology");
	/* The recording also reaches the validation matrix and what the store keeps of it. */
	CLEAN("--replay", evil, "--db", "x.db", "validate", "sync");
	CLEAN("--replay", evil, "--db", "x.db", "validate", "matrix");
	CLEAN("--db", "x.db", "audit");
}
END_TEST

START_TEST(agents)
{
	char url[256];
	pid_t a = xp_agent_start(url, sizeof url, "--replay", evil, NULL);
	ck_assert_msg(a > 0, "%s", url);
	SHOWN("--agent", url, "inventory", "--processes");
	SHOWN("--agent", url, "health");
	CLEAN("--agent", url, "--json", "inventory");
	CLEAN("--agent", url, "agent", "probe", url);
	ck_assert_int_eq(xp_agent_stop(a), 0);
	/* Hostile agents: a status line and a body quoting the payload; a node whose strings hold
	 * it (JSON escapes); a reason phrase of raw bytes. */
	const char *replies[] = {
		"HTTP/1.1 500 " PAYLOAD_UTF8 "\r\nContent-Type: text/plain\r\nContent-Length: 40\r\nConnection: close\r\n\r\n"
		PAYLOAD "xxxxxxxxxxxxxxxxxxxxxxxx",
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
		"{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"n\\u001b]0;pwned\\u0007\\u202e\\u009b\","
		"\"warnings\":[\"\\u001b[2J\\u001bP\\u2066\"]}],\"error\":\"\\u001b]52;c;cHduZWQ=\\u001b\\\\\"}",
		"HTTP/1.1 401 " PAYLOAD "\r\nWWW-Authenticate: Bearer realm=\"" PAYLOAD_UTF8 "\"\r\nContent-Length: 0\r\n\r\n",
		PAYLOAD "\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof replies / sizeof *replies; i++) {
		pid_t f = fake_agent(replies[i], url, sizeof url);
		CLEAN("--agent", url, "--agent-timeout", "3", "inventory");
		CLEAN("--agent", url, "--agent-timeout", "3", "health");
		CLEAN("--agent", url, "--agent-timeout", "3", "agent", "probe", url);
		stop(f);
	}
}
END_TEST

START_TEST(engines)
{
	char *conf = slurm_conf();
	SHOWN("--slurm-conf", conf, "inventory");
	SHOWN("--slurm-conf", conf, "--db", "s.db", "job", "list");
	CLEAN("--slurm-conf", conf, "health");
	CLEAN("--slurm-conf", conf, "--json", "inventory");
	CLEAN("--slurm-conf", conf, "--db", "s.db", "queue", "list");
	CLEAN("--slurm-conf", conf, "--db", "s.db", "--json", "job", "list");
	CLEAN("--slurm-conf", conf, "--db", "s.db", "--read-only", "node", "drain", "gpu01", "--reason", "x");
	CLEAN("--slurm-conf", conf, "--db", "s.db", "node", "drain", "gpu01", "--reason", "x");
	free(conf);

	char url[64];
	struct MHD_Daemon *d = k8s_start(url, sizeof url);
	SHOWN("--k8s-server", url, "inventory");
	SHOWN("--k8s-server", url, "health");
	CLEAN("--k8s-server", url, "--json", "inventory");
	CLEAN("--k8s-server", url, "--db", "k.db", "queue", "list");
	CLEAN("--k8s-server", url, "--db", "k.db", "job", "list");
	CLEAN("--k8s-server", url, "place", "--dry-run", "--devices", "1");
	k8s_stop(d);
}
END_TEST

START_TEST(files)
{
	/* Inventory JSON: the payload escaped in a name, and raw in a string (not JSON). */
	char *inv = xp_write_file(dir, "inv.json",
				  "{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"n\\u001b]0;pwned\\u0007C\\u202e\\u009b\"}]}",
				  0644);
	CLEAN("--inventory", inv, "inventory");
	free(inv);
	inv = xp_write_file(dir, "inv2.json", "{\"schema\":\"" PAYLOAD "\",\"nodes\":[]}", 0644);
	CLEAN("--inventory", inv, "inventory");
	free(inv);
	inv = xp_write_file(dir, PAYLOAD_UTF8 ".json", "{", 0644);
	SHOWN("--inventory", inv, "inventory");
	free(inv);
	/* A job spec: a name, an unknown key and a bad value holding the payload. */
	const char *specs[] = {"{\"name\":\"j\\u001b]0;pwned\\u0007\\u202e\",\"devices\":1}",
			       "{\"devices\":1,\"x\\u001b[2J\\u001b]0;pwned\\u0007\":1}",
			       "{\"devices\":1,\"vendor\":\"\\u001bP\\u009b\\u2066\"}", "{\"devices\":\"" PAYLOAD "\"}"};
	for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
		char *f = xp_write_file(dir, "job.json", specs[i], 0644);
		CLEAN("--replay", evil, "place", "--dry-run", "-f", f);
		CLEAN("--replay", evil, "--db", "j.db", "job", "submit", "-f", f, "--queue", "default", "--estimate", "1h");
		free(f);
	}
	/* A theme: its name, a key and a value. */
	char *th = xp_write_file(dir, "evil.theme", "name = " PAYLOAD "\nnormal = red\n" PAYLOAD " = red\nok = " PAYLOAD "\n",
				 0644);
	CLEAN("theme", th);
	free(th);
	/* An agents file: a URL and a token file named with the payload. */
	char *ag = xp_write_file(dir, "agents", "http://127.0.0.1:1/" PAYLOAD "\nhttp://127.0.0.1:1 " PAYLOAD_UTF8 "\n", 0644);
	CLEAN("--agents", ag, "inventory");
	CLEAN("--db", "x.db", "agent", "ls");
	free(ag);
	/* Bookmarks: a saved view holding the payload is listed and opened. */
	char *bm = xp_asprintf("%s/xpool", dir);
	mkdir(bm, 0700);
	free(xp_write_file(bm, "bookmarks", "hot topology --sort " PAYLOAD_UTF8 "\n" PAYLOAD " topology\n", 0600));
	free(bm);
	CLEAN("bookmark", "list");
	CLEAN("--replay", evil, "bookmark", "hot");
	free(xp_write_file(dir, "xpool/bookmarks", "hot topology --sort " PAYLOAD_UTF8 "\n", 0600));
	SHOWN("bookmark", "list");
	/* A validation import. */
	char *imp = xp_write_file(dir, "import.json",
				  "{\"schema\":\"xpool.validation/v1\",\"cases\":[{\"name\":\"c\",\"team\":\"t\\u001b]0;pwned\\u0007\\u202e\"}],"
				  "\"" PAYLOAD_UTF8 "\":1}",
				  0644);
	CLEAN("--db", "v.db", "validate", "import", imp);
	free(imp);
	imp = xp_write_file(dir, "import2.json", PAYLOAD, 0644);
	CLEAN("--db", "v.db", "validate", "import", imp);
	free(imp);
	/* A batch script and a --view string. */
	char *b = xp_write_file(dir, "script", "inventory\n" PAYLOAD "\nview " PAYLOAD_UTF8 "\n", 0644);
	CLEAN("--replay", evil, "-k", "-b", b);
	free(b);
	CLEAN("--replay", evil, "--view", PAYLOAD_UTF8);
	/* An hwloc XML whose process names and version hold bidi and C1 controls. */
	char *hw = xp_asprintf("%s/../hostile/hwloc-bidi-out-of-order.xml", getenv("XP_FIXTURES"));
	CLEAN("--topology", hw, "inventory");
	free(hw);
	hw = xp_asprintf("%s/../hostile/hwloc-c1-out-of-order.xml", getenv("XP_FIXTURES"));
	CLEAN("--topology", hw, "inventory");
	free(hw);
	/* An adapter manifest whose text holds the payload. */
	char *ad = xp_asprintf("%s/adapters", dir);
	mkdir(ad, 0755);
	free(xp_write_file(ad, "evil.adapter", "name = evil" PAYLOAD "\nvendor = " PAYLOAD "\n", 0644));
	setenv("XPOOL_ADAPTER_PATH", ad, 1);
	CLEAN("--replay", evil, "adapters");
	CLEAN("--replay", evil, "inventory");
	unsetenv("XPOOL_ADAPTER_PATH");
	free(ad);
	/* Words on the command line come back in errors. */
	CLEAN(PAYLOAD);
	CLEAN("help", PAYLOAD);
	CLEAN("--replay", PAYLOAD, "inventory");
	CLEAN("--db", "x.db", "queue", "add", PAYLOAD);
	CLEAN("--db", "x.db", "problem", "ack", PAYLOAD, PAYLOAD, "--note", PAYLOAD);
	CLEAN("--replay", evil, "place", "--dry-run", "--model", PAYLOAD);
	CLEAN("--replay", evil, "place", "--dry-run", "--explain", PAYLOAD, "--devices", "1");
	CLEAN("--db", "x.db", "validate", "case", "add", PAYLOAD);
	CLEAN("--db", "x.db", "bookmark", "save", PAYLOAD);
	/* Who did it: the audit log's actor comes from the environment. */
	setenv("XPOOL_ACTOR", "u" PAYLOAD, 1);
	CLEAN("--db", "a.db", "queue", "add", "qa");
	unsetenv("XPOOL_ACTOR");
	CLEAN("--db", "a.db", "audit");
	CLEAN("--db", "a.db", "--json", "audit");
}
END_TEST

/* --- The console. --- */

/* Starts the console on args (a shell word list) with its output teed raw into dir/raw
 * before it draws; waits for the masked payload on the screen. */
static void console_start(const char *args)
{
	xp_tmux_test_socket();
	xp_tmux_kill_server();
	char *cmd = xp_asprintf("cd %s; while [ ! -e go ]; do sleep 0.05; done; "
				"env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color XDG_STATE_HOME=%s XDG_CONFIG_HOME=%s "
				"%s %s; echo $? > %s/rc",
				dir, dir, dir, xp_bin(), args, dir);
	xp_tmux_start(cmd, 200, 50);
	free(cmd);
	/* Where an application may set tmux's paste buffers, an OSC 52 would show there. */
	xp_tmux_do("set", "-g", "set-clipboard", "on", NULL);
	char *pipe = xp_asprintf("cat >> %s/raw", dir);
	xp_tmux_do("pipe-pane", "-o", "-t", "t", pipe, NULL);
	free(pipe);
	char *title = xp_tmux("display", "-p", "-t", "t", "#{pane_title}", NULL);
	free(xp_write_file(dir, "title0", title, 0644));
	free(title);
	free(xp_write_file(dir, "go", "", 0644));
}

/* Visits views 1-9 and checks the screen of each; ends the console and checks the raw bytes,
 * the title and the paste buffers. */
static void console_check(void)
{
	char *s = xp_tmux_wait(MARK, false, 30);
	ck_assert_msg(strstr(s, MARK), "payload not on the screen:\n%s", s);
	free(s);
	for (char k = '1'; k <= '9'; k++) {
		char key[2] = {k, 0};
		xp_tmux_keys(key);
		usleep(300 * 1000);
		s = xp_tmux("capture-pane", "-p", "-e", "-t", "t", NULL);
		ck_assert_msg(!strstr(s, "\x1b]") && !strstr(s, "\x1bP") && !strstr(s, "\xe2\x80\xae") && !strstr(s, "\xc2\x9b"),
			      "view %c: a payload sequence on the screen:\n%s", k, s);
		free(s);
	}
	/* The prompt: a pasted right-to-left override and C1 CSI are shown, not sent on. */
	xp_tmux_keys("1");
	xp_tmux_keys(":");
	xp_tmux_literal("x\xe2\x80\xaey\xc2\x9bz");
	xp_tmux_expect("x?y?z");
	xp_tmux_keys("Escape");
	xp_tmux_expect_gone("x?y?z");
	xp_tmux_keys("q");
	xp_tmux_expect_exit(dir, 0);
	char *title = xp_tmux("display", "-p", "-t", "t", "#{pane_title}", NULL);
	ck_assert_msg(!strstr(title, "pwned"), "the title changed: %s", title);
	free(title);
	char *bufs = xp_tmux("list-buffers", NULL);
	ck_assert_msg(!strstr(bufs, "pwned"), "the clipboard was written: %s", bufs);
	free(bufs);
	xp_tmux_do("pipe-pane", "-t", "t", NULL);
	xp_tmux_kill_server();
	char *path = xp_asprintf("%s/raw", dir);
	size_t n = 0;
	char *raw = xp_file_text(path, &n);
	free(path);
	ck_assert_msg(n > 1000, "only %zu raw bytes", n);
	/* ncurses writes CSI sequences, CR, BS, tabs and newlines of its own; never an OSC, a DCS
	 * or a string terminator, a BEL, C1 or bidi controls, or bytes that are not UTF-8. */
	const char *seqs[] = {"\x1b]", "\x1bP", "\x1b\\", "\x07", "\x1b[31mB", "pwned\x07", "\xe2\x80\xae",
			      "\xe2\x81\xa6", "\xe2\x81\xa9", "\xc2\x9b"};
	for (size_t i = 0; i < sizeof seqs / sizeof *seqs; i++) {
		char *p = memmem(raw, n, seqs[i], strlen(seqs[i]));
		ck_assert_msg(!p, "the console wrote payload sequence %zu at byte %zu", i, p ? (size_t)(p - raw) : 0);
	}
	size_t at = 0;
	const char *bad = unsafe_what((const unsigned char *)raw, n, &at, true);
	ck_assert_msg(!bad, "the console wrote %s at byte %zu", bad, at);
	free(raw);
}

START_TEST(console_vendor)
{
	char *args = xp_asprintf("--replay '%s'", evil);
	console_start(args);
	free(args);
	console_check();
}
END_TEST

START_TEST(console_agent)
{
	char url[256];
	pid_t a = xp_agent_start(url, sizeof url, "--replay", evil, NULL);
	ck_assert_msg(a > 0, "%s", url);
	char *args = xp_asprintf("--agent %s", url);
	console_start(args);
	free(args);
	console_check();
	xp_agent_stop(a);
}
END_TEST

START_TEST(console_slurm)
{
	char *conf = slurm_conf();
	char *args = xp_asprintf("--slurm-conf %s", conf);
	console_start(args);
	free(args);
	free(conf);
	console_check();
}
END_TEST

START_TEST(console_k8s)
{
	char url[64];
	struct MHD_Daemon *d = k8s_start(url, sizeof url);
	char *args = xp_asprintf("--k8s-server %s", url);
	console_start(args);
	free(args);
	console_check();
	k8s_stop(d);
}
END_TEST

/* --- The output stream itself: the same masking as xp_mask_controls, whatever pieces the
 * text is written in (a character cut between two writes is kept whole). --- */

/* What the stream passes on for text written in pieces of step bytes (0: one write). */
static char *through_stream(const char *text, size_t len, size_t step, int buffering)
{
	char *buf = NULL;
	size_t blen = 0;
	FILE *under = open_memstream(&buf, &blen);
	ck_assert_ptr_nonnull(under);
	FILE *s = xp_safe_stream(under, buffering);
	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < len; i += step ? step : len)
		ck_assert_uint_eq(fwrite(text + i, 1, step && len - i > step ? step : len - i, s), step && len - i > step ? step : len - i);
	ck_assert_int_eq(fclose(s), 0);
	fclose(under);
	return buf;
}

START_TEST(stream_pieces)
{
	/* The payload, good UTF-8 of every length and the bad forms of check_model's test, long
	 * enough to cross the stream's pieces and words. */
	char *text = xp_strdup("");
	for (int k = 0; k < 300; k++) {
		char *t = xp_asprintf("%s%s caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x98\x80 %d \xc0\xaf \xed\xa0\x80 \xe2\x82 \x7f" PAYLOAD "%s",
				      text, k % 2 ? "plain ascii words and spaces" : "", k, k % 3 ? "" : "\xe2");
		free(text);
		text = t;
	}
	char *want = xp_strdup(text);
	xp_mask_controls(want);
	size_t len = strlen(text);
	const size_t steps[] = {0, 1, 2, 3, 5, 7, 8, 13, 4095, 4096, 4097};
	for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
		for (int b = 0; b < 3; b++) {
			int mode = b == 0 ? _IONBF : b == 1 ? _IOLBF : _IOFBF;
			char *got = through_stream(text, len, steps[i], mode);
			ck_assert_msg(strcmp(got, want) == 0, "pieces of %zu, mode %d: differs at %zu", steps[i], mode,
				      (size_t)(strspn(got, want)));
			free(got);
		}
	/* Newlines and tabs pass; a character cut short at the very end is one '?'. */
	char *got = through_stream("a\tb\nc\r\xe2\x80", 8, 1, _IONBF);
	ck_assert_str_eq(got, "a\tb\nc??");
	free(got);
	got = through_stream("x\0y", 3, 0, _IOFBF);
	ck_assert_str_eq(got, "x?y");
	free(got);
	free(want);
	free(text);
}
END_TEST

XP_DEFINE_SUITE(inject,
		{"stream", .tests = {stream_pieces}},
		{"text", .timeout_s = 600, .setup = setup, .teardown = teardown,
		 .tests = {vendor_tools, agents, engines, files}},
		{"console", .timeout_s = 300, .setup = setup, .teardown = teardown,
		 .tests = {console_vendor, console_agent, console_slurm, console_k8s}});
