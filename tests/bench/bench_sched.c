/* bench_sched.c: the scheduler and simulator at scale (issue 16).
 * 1. A 100,000-job trace (`sim trace`'s generator, seed 1, load 0.85) on 10,000 nodes of 8
 *    devices (sim gen, seed 1, nvidia-h100:40,nvidia-a100:30,ascend-910a:30), simulated to
 *    its end with backfill on: wall time, events per second, peak RSS. Targets: under 15 s,
 *    under 500 MiB.
 * 2. A what-if of the same trace with 10 nodes drained: baseline and scenario on two threads,
 *    against the one run of 1 (about equal when the two cores are free).
 * 3. The whole command as a user types it: `xpool --inventory C whatif --trace T --drain ...`
 *    on the 10,000-node file, as a process: wall time and its peak RSS.
 * Arguments: [JOBS [NODES [BUDGET_S]]] for a smaller run. Each run is cancelled (its cancel flag)
 * after BUDGET_S seconds (default 120): it then says how many events it got through and at what
 * rate. A miss prints MISS; the run does not fail on it (machines differ; the load average is
 * printed with the figures). */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model_json.h"
#include "place.h"
#include "qsched.h"
#include "qsim.h"
#include "simgen.h"
#include "testlib.h"
#include "trace.h"
#include "whatif.h"

#define MIX "nvidia-h100:40,nvidia-a100:30,ascend-910a:30"
#define TARGET_S 15.0
#define TARGET_MIB 500.0

static double rss_mib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024.0;
}

/* A budget: sets the flag after budget seconds unless stopped first. */
struct watch {
	atomic_bool cancel, stop;
	double budget;
	pthread_t th;
};

static void *watch_run(void *arg)
{
	struct watch *w = arg;
	double end = xp_now_ms() + w->budget * 1000;
	while (!atomic_load(&w->stop) && xp_now_ms() < end)
		nanosleep(&(struct timespec){0, 50000000}, NULL);
	if (!atomic_load(&w->stop))
		atomic_store(&w->cancel, true);
	return NULL;
}

static void watch_start(struct watch *w, double budget)
{
	atomic_store(&w->cancel, false);
	atomic_store(&w->stop, false);
	w->budget = budget;
	pthread_create(&w->th, NULL, watch_run, w);
}

static void watch_stop(struct watch *w)
{
	atomic_store(&w->stop, true);
	pthread_join(w->th, NULL);
}

static void load_avg(void)
{
	double l[3];
	if (getloadavg(l, 3) == 3)
		printf("  load average: %.2f %.2f %.2f (%ld CPUs)\n", l[0], l[1], l[2], sysconf(_SC_NPROCESSORS_ONLN));
}

/* The command's peak RSS must be its own. A child forked from this process once it holds a
 * simulated cluster starts with those pages counted (fork copies the resident count and exec
 * keeps the high-water mark), so the command is started by a launcher forked first, while this
 * process is small: it reads the argv (NUL-separated, an empty one last) from a pipe, runs it
 * under the budget, and writes back the wall time, the exit status and its rusage. */
struct launched {
	double wall_s;
	int status;
	bool killed;
	struct rusage ru;
};
static int to_launcher = -1, from_launcher = -1;

static void launcher_loop(int in, int out, double budget)
{
	static char buf[8192];
	size_t n = 0;
	ssize_t k;
	while (n < sizeof buf - 1 && (k = read(in, buf + n, sizeof buf - 1 - n)) > 0)
		n += (size_t)k;
	char *argv[32];
	size_t na = 0;
	for (size_t i = 0; i < n && na < 31 && buf[i]; i += strlen(buf + i) + 1)
		argv[na++] = buf + i;
	argv[na] = NULL;
	struct launched l = {.status = -1};
	double a = xp_now_ms();
	pid_t pid = na ? fork() : -1;
	if (pid == 0) {
		int dn = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (dn >= 0)
			dup2(dn, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	while (pid > 0 && wait4(pid, &l.status, WNOHANG, &l.ru) == 0) {
		if (!l.killed && xp_now_ms() - a > budget * 1000) {
			kill(pid, SIGTERM); /* the command this launcher started, by its pid */
			l.killed = true;
		}
		nanosleep(&(struct timespec){0, 20000000}, NULL);
	}
	l.wall_s = (xp_now_ms() - a) / 1000.0;
	if (pid < 0) /* no argv (this bench stopped early) or no fork: nothing to report */
		_exit(1);
	if (write(out, &l, sizeof l) != (ssize_t)sizeof l)
		_exit(1);
	_exit(0);
}

static void launcher_start(double budget)
{
	int a[2], b[2];
	if (pipe2(a, O_CLOEXEC) < 0 || pipe2(b, O_CLOEXEC) < 0) {
		perror("bench_sched: pipe");
		exit(1);
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("bench_sched: fork");
		exit(1);
	}
	if (pid == 0) {
		close(a[1]);
		close(b[0]);
		launcher_loop(a[0], b[1], budget);
	}
	signal(SIGPIPE, SIG_IGN); /* here only (the command keeps its own): a launcher gone is a
				    * failed launch(), not a silent death */
	close(a[0]);
	close(b[1]);
	to_launcher = a[1];
	from_launcher = b[0];
}

/* Runs argv (at most 31 words, 8 KiB in all) through the launcher; false when it could not. */
static bool launch(const char *const *argv, struct launched *l)
{
	size_t len = 0, n = 0;
	for (; argv[n]; n++)
		len += strlen(argv[n]) + 1;
	if (n > 31 || len >= 8192)
		return false;
	for (size_t i = 0; argv[i]; i++)
		if (write(to_launcher, argv[i], strlen(argv[i]) + 1) < 0)
			return false;
	close(to_launcher);
	to_launcher = -1;
	bool ok = read(from_launcher, l, sizeof *l) == (ssize_t)sizeof *l && l->status != -1;
	close(from_launcher);
	while (wait(NULL) > 0)
		;
	return ok;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	size_t jobs = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 100000;
	size_t nodes = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 10000;
	double budget = argc > 3 ? strtod(argv[3], NULL) : 120;
	launcher_start(budget);
	struct watch wd;
	struct xp_err err = {{0}};
	struct xp_manifest *ms[XP_PLACE_MANIFESTS];
	size_t nm = xp_place_manifests(ms);
	const struct xp_manifest *const *cms = (const struct xp_manifest *const *)ms;
	printf("bench_sched: %zu jobs on %zu nodes (%s), backfill on\n", jobs, nodes, MIX);
	load_avg();
	struct xp_sim_mix mix;
	if (xp_sim_mix_parse(MIX, &mix, &err) < 0) {
		fprintf(stderr, "bench_sched: %s\n", err.msg);
		return 1;
	}
	double a = xp_now_ms();
	struct xp_cluster *c = xp_sim_generate(nodes, &mix, 1, &err);
	if (!c) {
		fprintf(stderr, "bench_sched: %s\n", err.msg);
		return 1;
	}
	struct xp_trace t;
	struct xp_trace_gen_opts go = {.jobs = jobs, .seed = 1};
	if (xp_trace_queues_parse("research:2,prod:1,batch:1", &go, &err) < 0 ||
	    xp_trace_gen(c, cms, nm, &go, &t, &err) < 0) {
		fprintf(stderr, "bench_sched: %s\n", err.msg);
		return 1;
	}
	printf("  cluster and trace generated in %.0f ms (%zu devices; last arrival at %.1f h)\n", xp_now_ms() - a,
	       xp_cluster_device_count(c), t.n_jobs ? t.jobs[t.n_jobs - 1].submit / 3600.0 : 0);

	/* 1. One run to the end. */
	double rss0 = rss_mib();
	a = xp_now_ms();
	struct xp_sched_opts so = {.reconfigure = true, .skip_tail = true};
	struct xp_sched *s = xp_sched_new(c, cms, nm, &t.qs, &so, &err);
	if (!s) {
		fprintf(stderr, "bench_sched: %s\n", err.msg);
		return 1;
	}
	struct xp_qjob *arr = xp_calloc(t.n_jobs + 1, sizeof *arr);
	for (size_t i = 0; i < t.n_jobs; i++)
		xp_qjob_copy(&arr[i], &t.jobs[i]);
	struct xp_qsim_opts qo = {.cluster = c, .qs = &t.qs, .cancel = &wd.cancel};
	struct xp_qsim_report r;
	watch_start(&wd, budget);
	int rc = xp_qsim_run(s, arr, t.n_jobs, &qo, &r, &err);
	watch_stop(&wd);
	double one = (xp_now_ms() - a) / 1000.0;
	if (rc < 0 && strcmp(err.msg, "cancelled") != 0) {
		fprintf(stderr, "bench_sched: run: %s\n", err.msg);
		return 1;
	}
	if (rc < 0)
		printf("  one run: MISS: cancelled after %.0f s (budget), %llu events (%.0f/s), %llu passes, simulated %.1f h "
		       "of the trace; peak RSS %.0f MiB\n",
		       one, (unsigned long long)r.events, r.events / (one > 0 ? one : 1e-9), (unsigned long long)r.passes,
		       r.t_end / 3600.0, rss_mib());
	size_t started = 0, never = 0;
	for (size_t q = 0; q < r.n_queues; q++) {
		started += r.queues[q].started;
		never += r.queues[q].never;
	}
	double rss = rss_mib();
	if (rc == 0)
		printf("  one run: %.2f s %s, %llu events (%.0f/s), %llu passes, %zu started, %zu never, simulated %.1f h; "
	       "peak RSS %.0f MiB %s (%.0f MiB before the run)\n",
	       one, one <= TARGET_S ? "ok" : "MISS (target 15 s)", (unsigned long long)r.events,
	       r.events / (one > 0 ? one : 1e-9), (unsigned long long)r.passes, started, never, r.t_end / 3600.0, rss,
	       rss <= TARGET_MIB ? "ok" : "MISS (target 500 MiB)", rss0);
	xp_qsim_report_clear(&r);
	for (size_t i = 0; i < t.n_jobs; i++)
		xp_qjob_clear(&arr[i]);
	free(arr);
	xp_sched_free(s);

	/* 2. The what-if: both runs at once. */
	struct xp_whatif_change ch[10];
	size_t n_ch = 0;
	for (size_t i = 0; i < c->n_nodes && n_ch < 10; i += c->n_nodes / 10 ? c->n_nodes / 10 : 1)
		if (xp_whatif_change_parse(XP_WI_DRAIN, c->nodes[i]->name, &ch[n_ch], &err) == 0)
			n_ch++;
	struct xp_whatif w = {.cluster = c, .ms = cms, .n_ms = nm, .qs = &t.qs, .jobs = t.jobs, .n_jobs = t.n_jobs,
			      .changes = ch, .n_changes = n_ch, .strategy = -1, .reconfigure = true, .seed = 1};
	w.cancel = &wd.cancel;
	struct xp_whatif_result res;
	a = xp_now_ms();
	watch_start(&wd, budget);
	rc = xp_whatif_run(&w, &res, &err);
	watch_stop(&wd);
	double two = (xp_now_ms() - a) / 1000.0;
	if (rc < 0 && strcmp(err.msg, "cancelled") != 0) {
		fprintf(stderr, "bench_sched: whatif: %s\n", err.msg);
		return 1;
	}
	if (rc < 0)
		printf("  whatif (%zu nodes drained), two threads: MISS: cancelled after %.0f s (budget)\n", n_ch, two);
	else
		printf("  whatif (%zu nodes drained), baseline and scenario on two threads: %.2f s (one run: %.2f s, ratio %.2f); "
	       "peak RSS %.0f MiB\n",
	       n_ch, two, one, two / (one > 0 ? one : 1e-9), rss_mib());
	xp_whatif_result_clear(&res);
	for (size_t i = 0; i < n_ch; i++)
		xp_whatif_change_clear(&ch[i]);

	/* 3. The command: files written, then xpool run as a user would. */
	char dir[] = "/tmp/xpool-bench-sched-XXXXXX";
	if (!mkdtemp(dir)) {
		perror("bench_sched: mkdtemp");
		return 1;
	}
	char cpath[128], tpath[128];
	snprintf(cpath, sizeof cpath, "%s/cluster.json", dir);
	snprintf(tpath, sizeof tpath, "%s/trace.jsonl", dir);
	FILE *f = fopen(cpath, "w"), *g = fopen(tpath, "w");
	if (!f || !g || xp_sim_write(c, f, &err) < 0 || xp_trace_write(g, &t, &err) < 0) {
		fprintf(stderr, "bench_sched: writing the files: %s\n", err.msg);
		return 1;
	}
	fclose(f);
	fclose(g);
	char drain[256];
	snprintf(drain, sizeof drain, "%s,%s", c->nodes[0]->name, c->nodes[c->n_nodes / 2]->name);
	const char *bin = xp_bin();
	struct launched l;
	const char *cargv[] = {bin, "--inventory", cpath, "whatif", "--trace", tpath, "--drain", drain, NULL};
	if (!launch(cargv, &l)) {
		fprintf(stderr, "bench_sched: the launcher failed\n");
		return 1;
	}
	int status = l.status;
	struct rusage ru = l.ru;
	double cmd = l.wall_s;
	if (l.killed)
		printf("  the command: MISS: stopped after %.0f s (budget)\n", cmd);
	printf("  xpool --inventory cluster.json whatif --trace trace.jsonl --drain %s: %.2f s, exit %d, peak RSS %.0f "
	       "MiB, CPU %.2f s\n",
	       drain, cmd, WIFEXITED(status) ? WEXITSTATUS(status) : -1, ru.ru_maxrss / 1024.0,
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	load_avg();
	unlink(cpath);
	unlink(tpath);
	rmdir(dir);
	xp_trace_clear(&t);
	xp_trace_gen_opts_clear(&go);
	xp_cluster_free(c);
	xp_place_manifests_free(ms, nm);
	return 0;
}
