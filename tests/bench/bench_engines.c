/* bench_engines.c: loading a live engine's cluster (issue 17), whole process and in process.
 *
 * Slurm: 10,000 CLOUD nodes with Gres=gpu:h100:8 on a real private slurmctld, started by
 * bench_engines_slurm.sh (beside this file; it uses tests/slurm_lib.sh and says SKIPPED loudly
 * without slurmctld), which calls this program back as `bench_engines slurm CONF RECORDED`:
 *   "command": `xpool --slurm-conf CONF --json inventory` as its own process,
 *   "scontrol": `scontrol -d show node -o` alone (the floor: the command runs it),
 *   "parse":    xp_slurm_parse_nodes on RECORDED (that scontrol output) in this process.
 * Kubernetes: 5,000 Nodes and 50,000 bound Pods in the API's JSON form, made from the objects
 * of tests/fixtures/k8s/{nodes,pods}.json (renamed, bound to the new nodes), served with
 * paging (limit/continue, pages rendered once) by a libmicrohttpd server on loopback:
 *   "command": `xpool --k8s-server URL --k8s-token-file F --json inventory` as a process,
 *   "load":    xp_k8s_load in this process (HTTP, JSON decoding and the build),
 *   "build":   xp_k8s_build alone on the decoded lists (whole objects, not trimmed).
 * Each figure is the median of 5 runs: wall time, CPU time (user + system, what a shared
 * machine's load does not inflate) and the largest peak RSS from wait4's rusage. Targets:
 * under 2 s and under 300 MiB for each whole command; a miss prints MISS and does not fail.
 * XP_BENCH_ENGINES=slurm or k8s runs one of them; XP_BENCH_ENGINES_SERVE=S serves the k8s lists
 * for S seconds first (to profile a command by hand). The load average is printed with each. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "k8s_client.h"
#include "k8s_config.h"
#include "k8s_nodes.h"
#include "k8slib.h"
#include "model.h"
#include "slurm.h"
#include "testlib.h"

#define RUNS 5
#define K8S_NODES 5000
#define K8S_PODS_PER_NODE 10
#define TOKEN "bench-token"

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, xp_cmp_double);
	return v[n / 2];
}

static void load_avg(void)
{
	double l[3];
	if (getloadavg(l, 3) == 3)
		printf("  load average: %.2f %.2f %.2f (%ld CPUs)\n", l[0], l[1], l[2], sysconf(_SC_NPROCESSORS_ONLN));
}

/* The command's peak RSS must be its own: a child forked from this process once it holds the
 * generated lists starts with those pages counted (fork copies the resident count and exec
 * keeps the high-water mark). So commands are started by a launcher forked first, while this
 * process is small: it reads one argv at a time (a length, then NUL-separated words) from a
 * pipe, runs it, and writes back its sample; it ends when the pipe closes. */
static int to_launcher = -1, from_launcher = -1;
static pid_t launcher_pid = -1;

static bool read_full(int fd, void *buf, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t k = read(fd, (char *)buf + got, n - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		got += (size_t)k;
	}
	return true;
}

static void launcher_loop(int in, int out)
{
	static char buf[8192];
	uint32_t len;
	while (read_full(in, &len, sizeof len) && len < sizeof buf && read_full(in, buf, len)) {
		buf[len] = '\0';
		char *argv[32];
		size_t na = 0;
		for (size_t i = 0; i < len && na < 31; i += strlen(buf + i) + 1)
			argv[na++] = buf + i;
		argv[na] = NULL;
		struct xp_sample s = {0, 0, 0, -1};
		if (na)
			s = xp_run_timed(argv, 0);
		if (write(out, &s, sizeof s) != (ssize_t)sizeof s)
			_exit(1);
	}
	_exit(0);
}

static int launcher_start(void)
{
	int a[2], b[2];
	if (pipe2(a, O_CLOEXEC) < 0 || pipe2(b, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(a[1]);
		close(b[0]);
		launcher_loop(a[0], b[1]);
	}
	signal(SIGPIPE, SIG_IGN); /* a launcher gone is a failed launch, not a silent death */
	close(a[0]);
	close(b[1]);
	to_launcher = a[1];
	from_launcher = b[0];
	launcher_pid = pid;
	return 0;
}

static void launcher_stop(void)
{
	if (launcher_pid < 0)
		return;
	close(to_launcher);
	close(from_launcher);
	waitpid(launcher_pid, NULL, 0);
	launcher_pid = -1;
}

/* Runs argv through the launcher (at most 31 words, 8 KiB in all). */
static struct xp_sample launch(char *const argv[])
{
	struct xp_sample s = {0, 0, 0, -1};
	char buf[8192];
	size_t len = 0, n = 0;
	for (; argv[n]; n++) {
		size_t k = strlen(argv[n]) + 1;
		if (n >= 31 || len + k >= sizeof buf)
			return s;
		memcpy(buf + len, argv[n], k);
		len += k;
	}
	uint32_t l = (uint32_t)len;
	if (write(to_launcher, &l, sizeof l) != (ssize_t)sizeof l || write(to_launcher, buf, len) != (ssize_t)len ||
	    !read_full(from_launcher, &s, sizeof s))
		s.status = -1;
	return s;
}

/* Median wall and CPU time and the largest peak RSS of RUNS runs; false when one failed. */
static bool measure(const char *name, char *const argv[], bool launcher, double *ms, double *cpu, long *rss)
{
	double t[RUNS], u[RUNS];
	*rss = 0;
	for (int r = 0; r < RUNS; r++) {
		struct xp_sample s = launcher ? launch(argv) : xp_run_timed(argv, 0);
		if (s.status != 0) {
			fprintf(stderr, "bench_engines: %s (%s ...) exited %d\n", name, argv[0], s.status);
			return false;
		}
		t[r] = s.ms;
		u[r] = s.cpu_ms;
		if (s.rss_kib > *rss)
			*rss = s.rss_kib;
	}
	*ms = median(t, RUNS);
	*cpu = median(u, RUNS);
	return true;
}

static const char *verdict(double ms, long rss_kib)
{
	return ms < 2000 && rss_kib < 300 * 1024 ? "ok" : "MISS (target 2 s, 300 MiB)";
}

static void print_command(const char *name, double ms, double cpu, long rss)
{
	printf("    %-9s %7.0f ms (cpu %6.0f ms) %5ld MiB %s\n", name, ms, cpu, rss / 1024, verdict(ms, rss));
}

/* ---- Slurm: called back by bench_engines_slurm.sh with the live slurmctld's configuration ---- */

static int bench_slurm(const char *bin, const char *conf, const char *recorded)
{
	setenv("SLURM_CONF", conf, 1);
	char *cmd[] = {(char *)bin, "--slurm-conf", (char *)conf, "--json", "inventory", NULL};
	char *sc[] = {"scontrol", "-d", "show", "node", "-o", NULL};
	double ms, cpu, sms, scpu;
	long rss, srss;
	if (!measure("xpool --slurm-conf", cmd, false, &ms, &cpu, &rss) || !measure("scontrol", sc, false, &sms, &scpu, &srss))
		return 1;
	/* The parser in this process, on the records scontrol printed. */
	struct stat st;
	int fd = open(recorded, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(recorded);
		return 1;
	}
	char *text = malloc((size_t)st.st_size + 1);
	if (!text || !read_full(fd, text, (size_t)st.st_size)) {
		fprintf(stderr, "bench_engines: cannot read %s\n", recorded);
		return 1;
	}
	close(fd);
	text[st.st_size] = '\0';
	double d[RUNS];
	size_t nodes = 0, devs = 0;
	for (int r = 0; r < RUNS; r++) {
		struct xp_err err = {{0}};
		struct xp_cluster *c = xp_cluster_new();
		double t0 = xp_now_ms();
		int rc = xp_slurm_parse_nodes(text, (size_t)st.st_size, "scontrol -d show node -o", c, &err);
		d[r] = xp_now_ms() - t0;
		if (rc < 0) {
			fprintf(stderr, "bench_engines: %s\n", err.msg);
			xp_cluster_free(c);
			free(text);
			return 1;
		}
		nodes = c->n_nodes;
		devs = xp_cluster_device_count(c);
		xp_cluster_free(c);
	}
	free(text);
	printf("  slurm: %zu nodes, %zu devices, scontrol output %.1f MB\n", nodes, devs, (double)st.st_size / 1e6);
	load_avg();
	print_command("command", ms, cpu, rss);
	printf("    %-9s %7.0f ms (cpu %6.0f ms) %5ld MiB (the floor: the command runs it)\n", "scontrol", sms, scpu,
	       srss / 1024);
	printf("    %-9s %7.0f ms (%.1f ms per 1,000 nodes)\n", "parse", median(d, RUNS), median(d, RUNS) * 1000 / (double)nodes);
	return nodes == 10000 && devs == 80000 ? 0 : (fprintf(stderr, "bench_engines: not 10,000 nodes of 8\n"), 1);
}

/* Runs bench_engines_slurm.sh (it says SKIPPED itself, and exits 0, without a Slurm). */
static int slurm_script(const char *self)
{
	const char *fx = getenv("XP_FIXTURES");
	char script[4096];
	snprintf(script, sizeof script, "%s/../bench/bench_engines_slurm.sh", fx ? fx : "tests/fixtures");
	char exe[4096];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (k > 0)
		exe[k] = '\0';
	setenv("XP_BENCH_ENGINES_BIN", k > 0 ? exe : self, 1);
	pid_t pid = fork();
	if (pid == 0) {
		execlp("bash", "bash", script, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* ---- Kubernetes ---- */

/* What the loopback API server serves: each list's items and its pages rendered once for the
 * limit the client asks (another limit is rendered per request). */
struct list {
	const char *kind;
	json_t *items;
	size_t limit, n_pages;
	char **pages;
	size_t *lens;
};
static struct list k8s_nodes = {"NodeList", NULL, 0, 0, NULL, NULL};
static struct list k8s_pods = {"PodList", NULL, 0, 0, NULL, NULL};
static size_t k8s_requests;

static char *render(struct list *l, size_t from, size_t limit)
{
	json_t *list = xp_k8slib_page(l->items, l->kind, from, limit);
	char *body = json_dumps(list, JSON_COMPACT);
	json_decref(list);
	return body;
}

static void prerender(struct list *l, size_t limit)
{
	size_t n = json_array_size(l->items);
	l->limit = limit;
	l->n_pages = (n + limit - 1) / limit;
	l->pages = calloc(l->n_pages, sizeof *l->pages);
	l->lens = calloc(l->n_pages, sizeof *l->lens);
	for (size_t p = 0; p < l->n_pages; p++) {
		l->pages[p] = render(l, p * limit, limit);
		l->lens[p] = strlen(l->pages[p]);
	}
}

static void list_clear(struct list *l)
{
	for (size_t p = 0; p < l->n_pages; p++)
		free(l->pages[p]);
	free(l->pages);
	free(l->lens);
	json_decref(l->items);
	l->items = NULL;
	l->pages = NULL;
	l->lens = NULL;
	l->n_pages = 0;
}

#define STATUS(code, reason) \
	"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"reason\":\"" reason \
	"\",\"code\":" #code "}"

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_len, void **state)
{
	(void)cls, (void)version, (void)upload, (void)upload_len, (void)state;
	k8s_requests++;
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	if (strcmp(method, "GET"))
		return xp_k8slib_reply(c, 405, "{}", 2, MHD_RESPMEM_PERSISTENT);
	if (!auth || strcmp(auth, "Bearer " TOKEN))
		return xp_k8slib_reply(c, 401, STATUS(401, "Unauthorized"), strlen(STATUS(401, "Unauthorized")), MHD_RESPMEM_PERSISTENT);
	struct list *l = !strcmp(url, "/api/v1/nodes") ? &k8s_nodes : !strcmp(url, "/api/v1/pods") ? &k8s_pods : NULL;
	if (!l)
		return xp_k8slib_reply(c, 404, STATUS(404, "NotFound"), strlen(STATUS(404, "NotFound")), MHD_RESPMEM_PERSISTENT);
	/* The pods' fieldSelector (phase not Succeeded nor Failed) is not applied: every pod made
	 * here is Running or Pending, so it would keep them all. */
	const char *lim = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit");
	const char *cont = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "continue");
	size_t limit = lim ? strtoul(lim, NULL, 10) : 0, from = 0;
	if (cont && xp_k8slib_page_from(cont, &from))
		return xp_k8slib_reply(c, 400, STATUS(400, "BadRequest"), strlen(STATUS(400, "BadRequest")), MHD_RESPMEM_PERSISTENT);
	if (limit && limit == l->limit && from % limit == 0 && from / limit < l->n_pages)
		return xp_k8slib_reply(c, 200, l->pages[from / limit], l->lens[from / limit], MHD_RESPMEM_PERSISTENT);
	char *body = render(l, from, limit);
	enum MHD_Result rc = xp_k8slib_reply(c, 200, body, strlen(body), MHD_RESPMEM_MUST_FREE);
	return rc;
}

static void rename_object(json_t *o, const char *name)
{
	json_t *md = json_object_get(o, "metadata");
	json_object_set_new(md, "name", json_string(name));
	char uid[160];
	snprintf(uid, sizeof uid, "b3c7-%s", name);
	json_object_set_new(md, "uid", json_string(uid));
}

/* 5,000 Nodes cycling through the fixture's seven (one of each kind of accelerator and a
 * CPU-only one), and 10 Pods bound to each: first the fixture's Running or Pending pods bound
 * to that node's template (so no node is asked more than it has), then copies of its CPU-only
 * system pod. */
static void make_lists(void)
{
	json_t *fn = xp_k8slib_items("k8s/nodes.json"), *fp = xp_k8slib_items("k8s/pods.json");
	json_t *cpu_pod = NULL;
	size_t nt = json_array_size(fn), k;
	json_t *pod;
	json_array_foreach(fp, k, pod)
	if (!strncmp(json_string_value(json_object_get(json_object_get(pod, "metadata"), "name")), "coredns", 7))
		cpu_pod = pod;
	if (!nt || !cpu_pod) {
		fprintf(stderr, "bench_engines: the k8s fixtures have no nodes or no coredns pod\n");
		exit(1);
	}
	k8s_nodes.items = json_array();
	k8s_pods.items = json_array();
	for (size_t i = 0; i < K8S_NODES; i++) {
		json_t *t = json_array_get(fn, i % nt);
		const char *tname = json_string_value(json_object_get(json_object_get(t, "metadata"), "name"));
		char name[128];
		snprintf(name, sizeof name, "%s-%05zu", tname, i);
		json_t *n = json_deep_copy(t);
		rename_object(n, name);
		json_t *labels = json_object_get(json_object_get(n, "metadata"), "labels");
		if (json_object_get(labels, "kubernetes.io/hostname"))
			json_object_set_new(labels, "kubernetes.io/hostname", json_string(name));
		json_array_append_new(k8s_nodes.items, n);
		size_t made = 0;
		json_array_foreach(fp, k, pod)
		{
			const char *on = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
			const char *phase = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
			if (made >= K8S_PODS_PER_NODE || pod == cpu_pod || !on || strcmp(on, tname) || !phase ||
			    !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))
				continue;
			json_t *p = json_deep_copy(pod);
			char pname[192];
			snprintf(pname, sizeof pname, "%s-%05zu", json_string_value(json_object_get(json_object_get(pod, "metadata"), "name")), i);
			rename_object(p, pname);
			json_object_set_new(json_object_get(p, "spec"), "nodeName", json_string(name));
			json_array_append_new(k8s_pods.items, p);
			made++;
		}
		for (; made < K8S_PODS_PER_NODE; made++) {
			json_t *p = json_deep_copy(cpu_pod);
			char pname[192];
			snprintf(pname, sizeof pname, "coredns-5d78c9869d-%05zu-%zu", i, made);
			rename_object(p, pname);
			json_object_set_new(json_object_get(p, "spec"), "nodeName", json_string(name));
			json_array_append_new(k8s_pods.items, p);
		}
	}
	json_decref(fn);
	json_decref(fp);
}

static int bench_k8s(const char *bin)
{
	char dir[] = "/tmp/xpool-bench-engines-XXXXXX";
	if (!mkdtemp(dir)) {
		perror("bench_engines: mkdtemp");
		return 1;
	}
	char tok[sizeof dir + 16];
	snprintf(tok, sizeof tok, "%s/token", dir);
	FILE *f = fopen(tok, "w");
	if (!f || fputs(TOKEN "\n", f) < 0 || fclose(f) != 0) {
		perror(tok);
		return 1;
	}
	double g0 = xp_now_ms();
	make_lists();
	prerender(&k8s_nodes, 500); /* xp_k8s_client's default page */
	prerender(&k8s_pods, 500);
	size_t bytes = 0;
	for (size_t p = 0; p < k8s_nodes.n_pages; p++)
		bytes += k8s_nodes.lens[p];
	for (size_t p = 0; p < k8s_pods.n_pages; p++)
		bytes += k8s_pods.lens[p];
	double gen_ms = xp_now_ms() - g0;
	int port = 0;
	struct MHD_Daemon *d = xp_k8slib_serve(handle, NULL, &port);
	if (!d) {
		fprintf(stderr, "bench_engines: the loopback API server did not start\n");
		return 1;
	}
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
	if (getenv("XP_BENCH_ENGINES_SERVE")) {
		/* For profiling by hand: the server alone, for as many seconds. */
		printf("  serving %s (token file %s) for %s s\n", url, tok, getenv("XP_BENCH_ENGINES_SERVE"));
		sleep((unsigned)atoi(getenv("XP_BENCH_ENGINES_SERVE")));
	}
	char *cmd[] = {(char *)bin, "--k8s-server", url, "--k8s-token-file", tok, "--json", "inventory", NULL};
	double ms, cpu;
	long rss;
	int rc = 0;
	if (!measure("xpool --k8s-server", cmd, true, &ms, &cpu, &rss))
		rc = 1;
	/* In this process: the whole load (HTTP included), then the build alone. */
	double dl[RUNS], db[RUNS];
	size_t nodes = 0, devs = 0;
	for (int r = 0; r < RUNS && !rc; r++) {
		struct xp_err err = {{0}};
		struct xp_k8s_opts o = {.server = url, .token_file = tok};
		double t0 = xp_now_ms();
		struct xp_cluster *c = xp_k8s_load(&o, &err);
		dl[r] = xp_now_ms() - t0;
		t0 = xp_now_ms();
		struct xp_cluster *b = c ? xp_k8s_build(k8s_nodes.items, k8s_pods.items, "bench", &err) : NULL;
		db[r] = xp_now_ms() - t0;
		if (!c || !b) {
			fprintf(stderr, "bench_engines: %s\n", err.msg);
			rc = 1;
		} else {
			nodes = c->n_nodes;
			devs = xp_cluster_device_count(c);
		}
		xp_cluster_free(c);
		xp_cluster_free(b);
	}
	MHD_stop_daemon(d);
	if (!rc) {
		printf("  k8s: %zu nodes, %zu pods, %zu devices, %.1f MB in %zu pages of 500 (made in %.1f s), %zu requests\n",
		       json_array_size(k8s_nodes.items), json_array_size(k8s_pods.items), devs, (double)bytes / 1e6,
		       k8s_nodes.n_pages + k8s_pods.n_pages, gen_ms / 1000, k8s_requests);
		load_avg();
		print_command("command", ms, cpu, rss);
		printf("    %-9s %7.0f ms (in process, HTTP included)\n", "load", median(dl, RUNS));
		printf("    %-9s %7.0f ms (%.1f ms per 1,000 nodes; whole objects)\n", "build", median(db, RUNS),
		       median(db, RUNS) * 1000 / K8S_NODES);
		if (nodes != K8S_NODES) {
			fprintf(stderr, "bench_engines: %zu nodes read, not %d\n", nodes, K8S_NODES);
			rc = 1;
		}
	}
	list_clear(&k8s_nodes);
	list_clear(&k8s_pods);
	xp_rm_rf(dir);
	return rc;
}

int main(int argc, char **argv)
{
	const char *bin = getenv("XPOOL_BIN");
	if (!bin) {
		fprintf(stderr, "bench_engines: set XPOOL_BIN to the built program\n");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "slurm"))
		return bench_slurm(bin, argv[2], argv[3]);
	const char *only = getenv("XP_BENCH_ENGINES");
	printf("bench_engines: live engines' clusters, whole command (median of %d, peak RSS) and in process\n", RUNS);
	int rc = 0;
	if (!only || !strcmp(only, "slurm"))
		rc = slurm_script(argv[0]);
	if (!rc && (!only || !strcmp(only, "k8s"))) {
		if (launcher_start() < 0) {
			perror("bench_engines: launcher");
			return 1;
		}
		rc = bench_k8s(bin);
		launcher_stop();
	}
	return rc;
}
