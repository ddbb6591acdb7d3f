/* bench_idle.c: what a console costs while it shows a 10,000-node snapshot that never changes.
 *
 * An operator leaves the console open on a shared login node for hours. Issue 15's targets:
 * under 1% of one core, no reparse of an unchanged snapshot, memory flat. This bench
 *   1. writes a 10,000-node `sim gen` snapshot with $XPOOL_BIN (about 100 MB);
 *   2. runs `$XPOOL_BIN --inventory FILE -d 1` (a refresh every second, the busiest the
 *      console allows) in a 200x50 pseudo-terminal, draining what it draws;
 *   3. after the first frame and a settling pause, samples the console's CPU time, the bytes
 *      it read (rchar in /proc/PID/io: every read(2), page cache or not) and its RSS every
 *      SAMPLE_S seconds for IDLE_S seconds ($XP_BENCH_IDLE_S overrides; an hour-long series
 *      is the same run with IDLE_S=3600);
 *   4. judges: CPU under 1% of a core, fewer bytes read than one snapshot (a reparse reads it
 *      whole), RSS at the end within GROW_PCT of the first sample.
 * Machines are noisy: a miss prints FAIL; only a miss by more than SLACK times fails. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "testlib.h"

#define N_NODES "10000"
#define ROWS 50
#define COLS 200
#define IDLE_S 60
#define SAMPLE_S 10
#define SETTLE_S 5
#define TARGET_CPU_PCT 1.0
#define GROW_PCT 5.0
#define SLACK 3.0

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
		char p[128];
		snprintf(p, sizeof p, "%s/c.json", dir);
		unlink(p);
		snprintf(p, sizeof p, "%s/state/xpool/history", dir);
		unlink(p);
		snprintf(p, sizeof p, "%s/state/xpool", dir);
		rmdir(p);
		snprintf(p, sizeof p, "%s/state", dir);
		rmdir(p);
		rmdir(dir);
		dir[0] = '\0';
	}
}

static void on_signal(int sig)
{
	(void)sig;
	cleanup();
	_exit(2);
}

/* Runs argv to completion with its output discarded; its exit status, -1 when it did not run. */
static int run_quiet(char *const argv[])
{
	pid_t p = fork();
	if (p < 0)
		return -1;
	if (p == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	if (waitpid(p, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Starts argv on a new pty of ROWS x COLS; the master's descriptor, -1 on failure. */
static int pty_start(char *const argv[], const char *state)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	char slave[128];
	struct winsize ws = {ROWS, COLS, 0, 0};
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || ptsname_r(m, slave, sizeof slave) != 0 ||
	    ioctl(m, TIOCSWINSZ, &ws) < 0) {
		if (m >= 0)
			close(m);
		return -1;
	}
	/* The slave stays open here too: a master without an open slave reads as hung up. */
	int s = open(slave, O_RDWR | O_NOCTTY);
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
		unsetenv("LINES");
		unsetenv("COLUMNS");
		execv(argv[0], argv);
		_exit(127);
	}
	close(s);
	fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK);
	return m;
}

/* Reads what the console drew for ms milliseconds; the bytes read, -1 when it is gone. */
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
			ssize_t n = read(m, buf, sizeof buf);
			if (n > 0)
				total += n;
			else if (n == 0 || (errno != EAGAIN && errno != EINTR))
				return -1;
		}
	}
}

struct sample {
	double cpu_s;            /* user + system */
	unsigned long long rchar; /* bytes read(2) so far */
	long rss_kib;
};

static int sample_of(pid_t pid, struct sample *s)
{
	char p[64], line[512];
	snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(p, "r");
	if (!f)
		return -1;
	char *ok = fgets(line, sizeof line, f);
	fclose(f);
	/* Fields after the command name, which is in parentheses and may hold spaces. */
	char *rp = ok ? strrchr(line, ')') : NULL;
	unsigned long ut = 0, st = 0;
	if (!rp || sscanf(rp + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	s->cpu_s = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
	s->rchar = 0;
	s->rss_kib = -1;
	snprintf(p, sizeof p, "/proc/%d/io", (int)pid);
	if ((f = fopen(p, "r"))) {
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "rchar: %llu", &s->rchar) == 1)
				break;
		fclose(f);
	}
	snprintf(p, sizeof p, "/proc/%d/status", (int)pid);
	if ((f = fopen(p, "r"))) {
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "VmRSS: %ld", &s->rss_kib) == 1)
				break;
		fclose(f);
	}
	return s->rss_kib < 0 ? -1 : 0;
}

static int judge(const char *what, double v, double target, const char *unit)
{
	const char *verdict = v <= target ? "ok  " : v <= target * SLACK ? "MISS" : "FAIL";
	printf("  %s %-52s %10.3f %s (target < %g)\n", verdict, what, v, unit, target);
	return v > target * SLACK;
}

int main(void)
{
	const char *bin = xp_bin();
	if (access(bin, X_OK) < 0) {
		fprintf(stderr, "bench_idle: %s: %s\n", bin, strerror(errno));
		return 1;
	}
	int idle_s = IDLE_S;
	const char *e = getenv("XP_BENCH_IDLE_S");
	if (e && atoi(e) >= SAMPLE_S)
		idle_s = atoi(e);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	alarm((unsigned)idle_s + 300); /* a hang ends the run */
	atexit(cleanup);

	snprintf(dir, sizeof dir, "/tmp/xpool-bench-idle-XXXXXX");
	if (!mkdtemp(dir)) {
		dir[0] = '\0';
		fprintf(stderr, "bench_idle: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	char snap[128], state[128];
	snprintf(snap, sizeof snap, "%s/c.json", dir);
	snprintf(state, sizeof state, "%s/state", dir);
	mkdir(state, 0700);
	char *gen[] = {(char *)bin, "sim", "gen", "--nodes", N_NODES, "-o", snap, NULL};
	if (run_quiet(gen) != 0) {
		fprintf(stderr, "bench_idle: %s sim gen failed\n", bin);
		return 1;
	}
	struct stat st;
	if (stat(snap, &st) < 0)
		return 1;
	printf("bench_idle: %s --inventory (%s nodes, %.1f MiB) -d 1, idle %d s in a %dx%d pty\n", bin, N_NODES,
	       (double)st.st_size / 1048576.0, idle_s, COLS, ROWS);
	fflush(stdout);

	char *argv[] = {(char *)bin, "--inventory", snap, "-d", "1", NULL};
	int m = pty_start(argv, state);
	if (m < 0) {
		fprintf(stderr, "bench_idle: cannot start the console in a pty: %s\n", strerror(errno));
		return 1;
	}
	/* The first frame, then the settling: the first refreshes after start are not idle. */
	double t0 = xp_now_ms();
	long first = 0;
	while (first == 0 && xp_now_ms() - t0 < 60000) {
		long n = drain(m, 200);
		if (n < 0)
			break;
		first += n;
	}
	if (first <= 0 || drain(m, SETTLE_S * 1000) < 0) {
		fprintf(stderr, "bench_idle: the console drew nothing or exited\n");
		return 1;
	}

	struct sample s0, s, prev;
	if (sample_of(con_pid, &s0) < 0) {
		fprintf(stderr, "bench_idle: cannot read /proc/%d\n", (int)con_pid);
		return 1;
	}
	prev = s0;
	long rss_max = s0.rss_kib;
	long drawn = 0;
	printf("  %6s %10s %12s %10s\n", "t (s)", "CPU %", "read bytes", "RSS MiB");
	printf("  %6d %10s %12s %10.1f\n", 0, "-", "-", (double)s0.rss_kib / 1024.0);
	for (int t = SAMPLE_S; t <= idle_s; t += SAMPLE_S) {
		long n = drain(m, SAMPLE_S * 1000);
		if (n < 0 || sample_of(con_pid, &s) < 0) {
			fprintf(stderr, "bench_idle: the console exited while idle\n");
			return 1;
		}
		drawn += n;
		if (s.rss_kib > rss_max)
			rss_max = s.rss_kib;
		printf("  %6d %10.2f %12llu %10.1f\n", t, 100.0 * (s.cpu_s - prev.cpu_s) / SAMPLE_S,
		       s.rchar - prev.rchar, (double)s.rss_kib / 1024.0);
		fflush(stdout);
		prev = s;
	}
	double cpu_pct = 100.0 * (s.cpu_s - s0.cpu_s) / idle_s;
	double read_mib = (double)(s.rchar - s0.rchar) / 1048576.0;
	double grow_pct = 100.0 * (double)(s.rss_kib - s0.rss_kib) / (double)s0.rss_kib;
	printf("  drawn while idle: %ld bytes (the clock and data age in the header)\n", drawn);
	printf("  RSS first %.1f MiB, last %.1f MiB, peak %.1f MiB\n", (double)s0.rss_kib / 1024.0,
	       (double)s.rss_kib / 1024.0, (double)rss_max / 1024.0);
	printf("targets (issue 15):\n");
	int bad = judge("CPU of one core while idle", cpu_pct, TARGET_CPU_PCT, "%");
	bad |= judge("bytes read while idle (one reparse reads the file)", read_mib,
		     (double)st.st_size / 1048576.0 / 10.0, "MiB");
	bad |= judge("RSS growth from the first sample", grow_pct < 0 ? 0 : grow_pct, GROW_PCT, "%");
	close(m);
	cleanup();
	return bad ? 1 : 0;
}
