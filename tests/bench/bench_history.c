/* bench_history.c: what an hour of device history costs at 10,000 nodes x 8 devices.
 *
 * Issue 18's target: the console's RSS with 1 h of history for 80,000 devices under 300 MiB.
 *   1. In process: a 10,000-node `sim gen` cluster (80,000 devices) fed 1 h of refreshes at the
 *      console's default period (2 s: 1,800 refreshes, every value changing each time); reports
 *      the time per refresh (median, worst), the history's own bytes and the peak RSS (cluster
 *      and history together).
 *   2. The console: `$XPOOL_BIN --inventory FILE` on the same cluster in a 200x50 pseudo-terminal
 *      with XPOOL_HISTORY_FILL=3600 (an hour of samples for every device before the first
 *      refresh); once its RSS holds still, its RSS and peak RSS.
 * Machines are noisy: a miss prints MISS; only a miss by more than SLACK times fails. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "history.h"
#include "model.h"
#include "simgen.h"
#include "testlib.h"
#include "xp.h"

#define N_NODES 10000
/* Kinds of eight devices each: 80,000 devices (the default mix has CPU and 4-device nodes). */
#define MIX "nvidia-h100:40,nvidia-a100:20,ascend-910a:20,amd-mi300x:20"
#define PERIOD_S 2
#define HOUR_S 3600
#define TARGET_RSS_MIB 300.0
#define TARGET_FEED_MS 50.0
#define SLACK 1.5

static char dir[64];
static pid_t con_pid = -1;

static void cleanup(void)
{
	if (con_pid > 0) {
		kill(con_pid, SIGTERM);
		waitpid(con_pid, NULL, 0);
		con_pid = -1;
	}
	if (dir[0]) {
		xp_rm_rf(dir);
		dir[0] = '\0';
	}
}

static void on_signal(int sig)
{
	(void)sig;
	cleanup();
	_exit(2);
}

/* VmRSS or VmHWM of pid (0: this process), MiB; -1 when not readable. */
static double status_mib(pid_t pid, const char *field)
{
	char p[64], line[256];
	if (pid)
		snprintf(p, sizeof p, "/proc/%d/status", (int)pid);
	else
		snprintf(p, sizeof p, "/proc/self/status");
	FILE *f = fopen(p, "r");
	if (!f)
		return -1;
	long kib = -1;
	size_t fl = strlen(field);
	while (fgets(line, sizeof line, f))
		if (strncmp(line, field, fl) == 0 && line[fl] == ':') {
			kib = strtol(line + fl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return kib < 0 ? -1 : (double)kib / 1024.0;
}

static int judge(const char *what, double v, double target, const char *unit)
{
	const char *verdict = v <= target ? "ok  " : v <= target * SLACK ? "MISS" : "FAIL";
	printf("  %s %-56s %10.1f %s (target < %g)\n", verdict, what, v, unit, target);
	return v > target * SLACK;
}

static int in_process(void)
{
	struct xp_err err = {{0}};
	struct xp_sim_mix mix;
	if (xp_sim_mix_parse(MIX, &mix, &err) < 0) {
		fprintf(stderr, "bench_history: mix: %s\n", err.msg);
		return 1;
	}
	struct xp_cluster *c = xp_sim_generate(N_NODES, &mix, 1, &err);
	if (!c) {
		fprintf(stderr, "bench_history: sim: %s\n", err.msg);
		return 1;
	}
	size_t devs = xp_cluster_device_count(c);
	double rss0 = status_mib(0, "VmRSS");
	struct xp_history *h = xp_history_new(PERIOD_S);
	size_t n = HOUR_S / PERIOD_S;
	double *ms = xp_malloc(n * sizeof *ms);
	time_t t0 = time(NULL) - HOUR_S;
	for (size_t i = 0; i < n; i++) {
		/* Every value moves each refresh, as a busy cluster's do. */
		for (size_t k = 0; k < c->n_nodes; k++) {
			struct xp_node *nd = c->nodes[k];
			for (size_t d = 0; d < nd->n_devices; d++) {
				struct xp_device *dv = &nd->devices[d];
				dv->utilization_pct = (double)((i * 7 + k + d) % 101);
				dv->temperature_c = 30 + (double)((i + d) % 60);
				dv->power_w = 100 + (double)((i * 3 + k) % 600);
				dv->memory_used_mib = (int64_t)((i * 997 + d) % 81920);
			}
		}
		double a = xp_now_ms();
		xp_history_feed(h, c, t0 + (time_t)(i * PERIOD_S));
		ms[i] = xp_now_ms() - a;
	}
	double total = 0, worst = 0;
	for (size_t i = 0; i < n; i++) {
		total += ms[i];
		worst = ms[i] > worst ? ms[i] : worst;
	}
	qsort(ms, n, sizeof *ms, xp_cmp_double);
	double rss1 = status_mib(0, "VmRSS"), peak = status_mib(0, "VmHWM");
	printf("bench_history: in process, %d nodes, %zu devices, %zu refreshes at %d s (1 h)\n", N_NODES, devs, n,
	       PERIOD_S);
	printf("  history: %zu devices, %.1f MiB (%.0f bytes a device); RSS %.1f MiB before, %.1f MiB after\n",
	       xp_history_devices(h), (double)xp_history_bytes(h) / 1048576.0,
	       (double)xp_history_bytes(h) / (double)(devs ? devs : 1), rss0, rss1);
	printf("  feed: %.2f ms a refresh (median), %.2f ms worst, %.1f s in all\n", ms[n / 2], worst, total / 1000);
	int bad = judge("feed time per refresh (median)", ms[n / 2], TARGET_FEED_MS, "ms");
	bad |= judge("peak RSS, cluster + 1 h history (in process)", peak, TARGET_RSS_MIB, "MiB");
	free(ms);
	xp_history_free(h);
	xp_cluster_free(c);
	return bad;
}

/* Starts argv on a new 50x200 pty with env set; the master's descriptor, -1 on failure. */
static int pty_start(char *const argv[], const char *state)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	char slave[128];
	struct winsize ws = {50, 200, 0, 0};
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || ptsname_r(m, slave, sizeof slave) != 0 ||
	    ioctl(m, TIOCSWINSZ, &ws) < 0) {
		if (m >= 0)
			close(m);
		return -1;
	}
	int s = open(slave, O_RDWR | O_NOCTTY); /* kept open: a master without a slave reads as hung up */
	if (s < 0) {
		close(m);
		return -1;
	}
	con_pid = fork();
	if (con_pid < 0) {
		close(s);
		close(m);
		return -1;
	}
	if (con_pid == 0) {
		setsid();
		if (ioctl(s, TIOCSCTTY, 0) < 0)
			_exit(127);
		dup2(s, 0);
		dup2(s, 1);
		dup2(s, 2);
		close(s);
		close(m);
		setenv("TERM", "xterm-256color", 1);
		setenv("LC_ALL", "C.UTF-8", 1);
		setenv("XDG_STATE_HOME", state, 1);
		setenv("XPOOL_HISTORY_FILL", "3600", 1);
		unsetenv("LINES");
		unsetenv("COLUMNS");
		execv(argv[0], argv);
		_exit(127);
	}
	close(s);
	fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK);
	return m;
}

/* Reads what the console draws for ms milliseconds; the bytes, -1 when it is gone. */
static long drain(int m, int ms)
{
	double end = xp_now_ms() + ms;
	long total = 0;
	char buf[65536];
	for (;;) {
		double left = end - xp_now_ms();
		if (left <= 0)
			return total;
		struct pollfd pf = {m, POLLIN, 0};
		int r = poll(&pf, 1, (int)left + 1);
		if (r < 0 && errno != EINTR)
			return -1;
		if (r > 0) {
			ssize_t k = read(m, buf, sizeof buf);
			if (k > 0)
				total += k;
			else if (k == 0 || (errno != EAGAIN && errno != EINTR))
				return -1;
		}
	}
}

/* CPU seconds pid has used (user + system), -1 when not readable. */
static double cpu_s(pid_t pid)
{
	char p[64], line[1024];
	snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(p, "r");
	if (!f)
		return -1;
	char *ok = fgets(line, sizeof line, f);
	fclose(f);
	char *rp = ok ? strrchr(line, ')') : NULL;
	unsigned long ut = 0, st = 0;
	if (!rp || sscanf(rp + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static int console(void)
{
	const char *bin = xp_bin();
	char snap[128], state[128], nodes[16];
	snprintf(snap, sizeof snap, "%s/c.json", dir);
	snprintf(state, sizeof state, "%s/state", dir);
	snprintf(nodes, sizeof nodes, "%d", N_NODES);
	mkdir(state, 0700);
	struct xp_run r;
	if (xp_run_xpool(&r, NULL, "sim", "gen", "--nodes", nodes, "--mix", MIX, "-o", snap, NULL) != 0 || r.status != 0) {
		fprintf(stderr, "bench_history: sim gen failed: %s\n", r.err ? r.err : "");
		xp_run_free(&r);
		return 1;
	}
	xp_run_free(&r);
	char *argv[] = {(char *)bin, "--inventory", snap, "-d", "2", NULL};
	int m = pty_start(argv, state);
	if (m < 0) {
		fprintf(stderr, "bench_history: cannot start the console: %s\n", strerror(errno));
		return 1;
	}
	/* Loaded and filled: the console idles (under a tenth of a core; loading and filling keep
	 * one busy) and its RSS holds still, for 3 samples of a second. */
	double t0 = xp_now_ms(), last = -1, rss = -1, cpu0 = cpu_s(con_pid);
	int still = 0;
	while (still < 3 && xp_now_ms() - t0 < 600e3) {
		if (drain(m, 1000) < 0)
			break;
		double cpu = cpu_s(con_pid);
		rss = status_mib(con_pid, "VmRSS");
		bool idle = cpu >= 0 && cpu - cpu0 < 0.1;
		still = idle && rss > 100 && last > 0 && rss - last < 1 && rss - last > -1 ? still + 1 : 0;
		last = rss;
		cpu0 = cpu;
	}
	double peak = status_mib(con_pid, "VmHWM");
	printf("bench_history: console %s --inventory (%d nodes x 8 devices) -d 2, XPOOL_HISTORY_FILL=3600, settled after %.0f s\n",
	       bin, N_NODES, (xp_now_ms() - t0) / 1000);
	int bad = rss < 0;
	if (rss < 0)
		fprintf(stderr, "bench_history: the console's RSS could not be read\n");
	else {
		bad |= judge("console RSS, 80,000 devices with 1 h history", rss, TARGET_RSS_MIB, "MiB");
		bad |= judge("console peak RSS (loading included)", peak, TARGET_RSS_MIB, "MiB");
	}
	close(m);
	return bad;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	alarm(900);
	atexit(cleanup);
	/* The console first: the in-process part's pages would not count in its RSS, but its
	 * peak would in the runner's own. */
	snprintf(dir, sizeof dir, "/tmp/xpool-bench-hist-XXXXXX");
	if (!mkdtemp(dir)) {
		dir[0] = '\0';
		fprintf(stderr, "bench_history: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	int bad = console();
	cleanup();
	bad |= in_process();
	return bad;
}
