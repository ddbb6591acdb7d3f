/* bench_console.c: how fast the console draws the cluster map of a big cluster,
 * how fast it answers a key, and how fast it starts.
 *
 * 1. Generates a snapshot of 10,000 nodes x 8 devices with the model API and writes
 *    it to a temporary file, so that the console loads it through --inventory.
 * 2. Runs $XPOOL_BIN in a 200x50 pseudo-terminal and times keystrokes (Down, PgDn)
 *    from the write of the key to the first byte of the answer and to the last byte
 *    before SETTLE_MS of silence. Nothing is subtracted: the pty round trip and the
 *    console's header are in the figures. Refresh is off (-d 3600) for the timed run;
 *    a second run times Down with the default refresh, and `cat` in a raw pty gives
 *    the floor the pty itself sets.
 * 3. Times the topology view in this process on an ncurses screen that writes to
 *    /dev/null, to tell drawing apart from the pty and the frame around the view.
 * 4. Times startup to first frame: from fork until the node name shows up in the
 *    terminal output, on a fixture (target) and on the big snapshot (information).
 * 5. Reports the console's peak RSS with the big snapshot (wait4).
 * The targets: under 5 ms per frame, under 100 ms to the first frame.
 * Machines are noisy, so a miss prints FAIL but only a miss by more than SLACK times
 * fails the run. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <curses.h>

#include "events.h"
#include "filter.h"
#include "glyphs.h"
#include "layout.h"
#include "model.h"
#include "model_json.h"
#include "theme.h"
#include "ui.h"
#include "view.h"
#include "xp.h"
#include "testlib.h"

#define N_NODES 10000
#define N_DEV 8
#define N_RACKS 250
#define ROWS 50
#define COLS 200
#define KEYS 50           /* keystrokes of each kind through the pty */
#define LIVE_KEYS 50      /* Down keys with the default live refresh */
#define FRAMES 2000       /* in-process frames of each kind */
#define FIX_RUNS 10
#define SETTLE_MS 50      /* silence that ends the answer to a key */
#define QUIET_MS 300      /* silence that ends the first frame */
#define WIN_LO 200        /* keys go out between these milliseconds past a second: */
#define WIN_HI 800        /* see wait_window */
#define TARGET_FRAME_MS 5.0
#define TARGET_START_MS 100.0
#define SLACK 3.0
#define DEADLINE_S 120    /* the whole run; alarm() ends a hang */

#define FIXTURE "hwloc/32em64t-2n8c2t-pci-wholeio.xml"
#define FIXTURE_NODE "conan"

struct stats {
	double med, p90, min, max;
	size_t n;
};

/* Sorts v; p90 by nearest rank. An empty set gives NaN everywhere. */
static struct stats stats_of(double *v, size_t n)
{
	struct stats s = {XP_NA, XP_NA, XP_NA, XP_NA, n};
	if (!n)
		return s;
	qsort(v, n, sizeof *v, xp_cmp_double);
	s.med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	s.p90 = v[(n * 9 + 9) / 10 - 1];
	s.min = v[0];
	s.max = v[n - 1];
	return s;
}

/* ---- clean-up on every path ---- */

/* What must not outlive the run: the console under test, the snapshot and the
 * console's state directory. Kept where a signal handler can reach them. */
static volatile sig_atomic_t live_pid;
static char snap_path[256];
static char state_dir[256];
static char state_sub[300], state_hist[320]; /* what the console writes there, for on_signal */

static void kill_live_child(void)
{
	pid_t pid = (pid_t)live_pid;
	if (pid > 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		live_pid = 0;
	}
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static pid_t main_pid; /* the snapshot writer is a fork: its exit must not clean up */

static void cleanup(void)
{
	if (getpid() != main_pid)
		return;
	kill_live_child();
	if (snap_path[0])
		unlink(snap_path);
	snap_path[0] = '\0';
	/* The console may write its readline history under XDG_STATE_HOME. */
	if (state_dir[0])
		nftw(state_dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	state_dir[0] = '\0';
}

/* Alarm, Ctrl-C, SIGTERM: only async-signal-safe calls here, so the state directory
 * goes by the paths the console is known to write (nftw is not safe here). */
static void on_signal(int sig)
{
	static const char msg[] = "bench_console: deadline passed or interrupted; console killed\n";
	pid_t pid = (pid_t)live_pid;
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (snap_path[0])
		unlink(snap_path);
	if (state_dir[0]) {
		unlink(state_hist);
		rmdir(state_sub);
		rmdir(state_dir);
	}
	if (write(2, msg, sizeof msg - 1) < 0) {
		/* nothing left to tell it with */
	}
	_exit(sig == SIGALRM ? 2 : 128 + sig);
}

/* ---- the generated cluster ---- */

/* xorshift64*: the same cluster on every run, so runs compare. */
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static unsigned rnd(unsigned n)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (unsigned)((rng * 0x2545f4914f6cdd1dULL) >> 33) % n;
}

/* One kind of machine; a rack holds one kind, as real racks do. */
struct kind {
	const char *vendor, *model, *arch, *pci_id, *driver;
	const char *group; /* affinity group prefix: "pcie" groups are named by their switch's bus */
	int pci_class;
	uint8_t fabric, fabric_count; /* link inside an affinity group; PIX for PCIe-only cards */
	int64_t memory_mib;
	double watts;
	int weight;
};

static const struct kind kinds[] = {
	{"NVIDIA", "H100 80GB HBM3", "Hopper", "10de:2330", "550.54.15", "pcie", 0x0302,
	 XP_LINK_NVLINK, 18, 81559, 700, 50},
	{"NVIDIA", "A100-SXM4-80GB", "Ampere", "10de:20b2", "535.161.08", "pcie", 0x0302,
	 XP_LINK_NVLINK, 12, 81920, 400, 15},
	{"NVIDIA", "L40S", "Ada Lovelace", "10de:26b9", "550.54.15", "pcie", 0x0302,
	 XP_LINK_PIX, 0, 46068, 350, 10},
	{"Huawei", "Ascend 910B", "Ascend910", "19e5:d802", "24.1.rc2", "hccs", 0x1200,
	 XP_LINK_HCCS, 0, 65536, 400, 15},
	{"AMD", "Instinct MI300X", "CDNA3", "1002:74a1", "6.7.0", "xgmi", 0x1200,
	 XP_LINK_XGMI, 0, 196608, 750, 10},
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

static const struct kind *pick_kind(void)
{
	int total = 0;
	for (size_t i = 0; i < N_KINDS; i++)
		total += kinds[i].weight;
	int r = (int)rnd((unsigned)total);
	for (size_t i = 0; i < N_KINDS; i++) {
		if (r < kinds[i].weight)
			return &kinds[i];
		r -= kinds[i].weight;
	}
	return &kinds[0];
}

/* PCI buses of the eight devices of an HGX-like board; the first of each half is the group's. */
static const unsigned dev_bus[N_DEV] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};

static void add_devices(struct xp_node *n, const struct kind *k)
{
	for (int i = 0; i < N_DEV; i++) {
		struct xp_device *d = xp_node_add_device(n);
		d->vendor = xp_strdup(k->vendor);
		d->model = xp_strdup(k->model);
		d->arch = xp_strdup(k->arch);
		d->uuid = xp_asprintf("%s-%08x-%04x", k->vendor, rnd(0x7fffffff), (unsigned)i);
		d->pci_bus_id = xp_asprintf("0000:%02x:00.0", dev_bus[i]);
		d->pci_id = xp_strdup(k->pci_id);
		d->pci_class = k->pci_class;
		d->numa = i < N_DEV / 2 ? 0 : 1;
		d->driver = xp_strdup(k->driver);
		d->memory_mib = k->memory_mib;
		/* Two affinity groups of four: one per PCIe switch / HCCS ring / XGMI hive. */
		if (strcmp(k->group, "pcie") == 0)
			d->affinity_group = xp_asprintf("pcie:0000:%02x:00.0", dev_bus[i / 4 * 4] - 2);
		else
			d->affinity_group = xp_asprintf("%s:%d", k->group, i / 4);
		d->mem_access = XP_MEM_EXPLICIT;
		unsigned h = rnd(1000);
		if (h < 8) {
			d->health = XP_HEALTH_FAIL;
			xp_strv_add(&d->health_reasons, &d->n_health_reasons, "XID 79: device has fallen off the bus");
		} else if (h < 30) {
			d->health = XP_HEALTH_WARN;
			xp_strv_add(&d->health_reasons, &d->n_health_reasons, "corrected ECC errors rising");
		} else {
			d->health = XP_HEALTH_OK;
		}
		/* Some agents do not report utilization: those cells show "unknown". */
		if (rnd(100) >= 5) {
			d->utilization_pct = (double)rnd(101);
			d->memory_used_mib = k->memory_mib * (int64_t)rnd(101) / 100;
			d->temperature_c = 35 + (double)rnd(50);
			d->power_w = k->watts * (0.2 + (double)rnd(80) / 100.0);
		}
		d->ecc_corrected = d->health == XP_HEALTH_WARN ? 100 + (int64_t)rnd(1000) : 0;
		d->ecc_uncorrected = d->health == XP_HEALTH_FAIL ? 1 : 0;
	}
	xp_node_links_reset(n);
	for (size_t a = 0; a < N_DEV; a++)
		for (size_t b = 0; b < N_DEV; b++) {
			if (a == b)
				continue;
			struct xp_link *l = xp_node_link(n, a, b);
			if (a / 4 != b / 4) {
				l->cls = XP_LINK_SYS; /* the other half hangs off the other socket */
			} else if (k->fabric == XP_LINK_PIX) {
				l->cls = a / 2 == b / 2 ? XP_LINK_PIX : XP_LINK_PXB;
			} else {
				l->cls = k->fabric;
				l->count = k->fabric_count;
			}
		}
}

static struct xp_node *make_node(int rack, int slot, const struct kind *k, int serial)
{
	char name[64];
	snprintf(name, sizeof name, "gpu-r%03d-n%02d", rack + 1, slot + 1);
	struct xp_node *n = xp_node_new(name);
	n->source = xp_strdup("generated");
	/* A few nodes never had their location recorded: they form the "(no location)" group. */
	if (serial % 997 != 500) {
		n->zone = xp_asprintf("az%d", rack / 50 + 1);
		n->rack = xp_asprintf("r%03d", rack + 1);
		n->sw = xp_asprintf("leaf-%03d-%c", rack + 1, slot < 20 ? 'a' : 'b');
	}
	unsigned s = rnd(1000);
	n->state = s < 950   ? XP_NODE_UP
		   : s < 970 ? XP_NODE_DEGRADED
		   : s < 985 ? XP_NODE_DRAINING
		   : s < 990 ? XP_NODE_DOWN
			     : XP_NODE_UNREACHABLE;
	if (n->state == XP_NODE_UNREACHABLE)
		n->age_s = 60 + (int64_t)rnd(7200);
	n->cpu_model = xp_strdup("Intel(R) Xeon(R) Platinum 8480+");
	n->packages_n = 2;
	n->cores = 112;
	n->pus = n->pus_allowed = 224;
	n->memory_mib = 2097152;
	for (int p = 0; p < 2; p++) {
		struct xp_package *pk = xp_node_add_package(n);
		pk->id = p;
		pk->model = xp_strdup(n->cpu_model);
		pk->cores = 56;
		pk->pus = 112;
		pk->cpus = xp_asprintf("%d-%d,%d-%d", p * 56, p * 56 + 55, 112 + p * 56, 167 + p * 56);
		struct xp_numa *m = xp_node_add_numa(n);
		m->id = p;
		m->memory_mib = n->memory_mib / 2;
		m->cpus = xp_strdup(pk->cpus);
		m->package = p;
	}
	struct xp_nic *nic = xp_node_add_nic(n);
	nic->name = xp_strdup("ib0");
	nic->pci_bus_id = xp_strdup("0000:1b:00.0");
	nic->rdma = xp_strdup("mlx5_0");
	nic->numa = 0;
	nic->speed_mbps = 400000;
	xp_labels_set(&n->governance, "pool", serial % 3 ? "train" : "infer");
	char tenant[16];
	snprintf(tenant, sizeof tenant, "team%d", serial % 7);
	xp_labels_set(&n->governance, "tenant", tenant);
	add_devices(n, k);
	return n;
}

static struct xp_cluster *make_cluster(void)
{
	struct xp_cluster *c = xp_cluster_new();
	int per_rack = N_NODES / N_RACKS, serial = 0;
	for (int r = 0; r < N_RACKS; r++) {
		const struct kind *k = pick_kind();
		for (int s = 0; s < per_rack; s++)
			xp_cluster_add(c, make_node(r, s, k, serial++));
	}
	return c;
}

/* Blocks the signals whose handlers stop live_pid (the alarm, ^C, TERM, HUP) and saves the
 * old mask in old: between a fork and live_pid's assignment, a handler would miss the child. */
static void block_stops(sigset_t *old)
{
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, old);
}

/* Builds the cluster and writes it to fd (snap_path) in a child process. The consoles
 * are forked from this process, and Linux counts in a child's ru_maxrss what it had
 * before exec, the parent's resident pages included: building the cluster here would
 * add its hundreds of MiB to the console's peak RSS. Returns 0, or -1 said on stderr. */
static int write_snapshot(int fd)
{
	fflush(stdout);
	sigset_t old;
	block_stops(&old);
	pid_t pid = fork();
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		struct xp_cluster *c = make_cluster();
		FILE *f = fdopen(fd, "w");
		struct xp_err err = {{0}};
		int rc = f ? xp_cluster_write(c, f, 0, &err) : -1;
		if (f && fclose(f) != 0 && rc == 0) {
			snprintf(err.msg, sizeof err.msg, "%s", strerror(errno));
			rc = -1;
		}
		if (rc < 0)
			fprintf(stderr, "bench_console: writing %s: %s\n", snap_path, f ? err.msg : strerror(errno));
		_exit(rc < 0 ? 1 : 0);
	}
	if (pid > 0)
		live_pid = pid;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(fd);
	if (pid < 0) {
		fprintf(stderr, "bench_console: fork: %s\n", strerror(errno));
		return -1;
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	live_pid = 0;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* The name on the first node row of the map: groups sort by zone, rack, switch, and
 * node 0 is in the first group (az1 / r001 / leaf-001-a). */
#define BIG_FIRST_NODE "gpu-r001-n01"

/* ---- the console in a pseudo-terminal ---- */

struct con {
	pid_t pid;
	int fd;              /* the pty master */
	bool eof;            /* every slave descriptor closed: the console is gone */
	double t0;           /* when it was forked */
	const char *marker;  /* text to look for in the output, NULL when not looking */
	double marker_at;    /* when the marker arrived (ms since t0), < 0 before */
	char *seen;          /* output kept while looking for the marker */
	size_t n_seen, cap_seen;
	double first_out;    /* when the first output arrived (ms since t0), < 0 before */
	double last_byte;    /* absolute ms of the last read that returned data */
	size_t bytes;        /* output read so far */
};

/* Starts argv in a new pty of ROWS x COLS; raw puts the terminal in raw mode first
 * (for a program that, unlike the console, does not). posix_openpt and friends rather
 * than forkpty: they need no -lutil on any libc, so the Makefile's bench rule fits. */
static int con_start(struct con *c, char *const argv[], const char *marker, bool raw)
{
	memset(c, 0, sizeof *c);
	c->pid = -1;
	c->marker = marker;
	c->marker_at = -1;
	c->first_out = -1;
	c->fd = posix_openpt(O_RDWR | O_NOCTTY);
	if (c->fd < 0)
		return -1;
	char slave[128];
	struct winsize ws = {ROWS, COLS, 0, 0};
	if (grantpt(c->fd) < 0 || unlockpt(c->fd) < 0 || ptsname_r(c->fd, slave, sizeof slave) != 0 ||
	    fcntl(c->fd, F_SETFD, FD_CLOEXEC) < 0 || ioctl(c->fd, TIOCSWINSZ, &ws) < 0) {
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	/* The slave is opened here, before the fork, and stays open in the child: a master
	 * whose slave is not open reads as hung up, which would pass for the child's exit. */
	int s = open(slave, O_RDWR | O_NOCTTY);
	struct termios tio;
	if (s >= 0 && raw && tcgetattr(s, &tio) == 0) {
		cfmakeraw(&tio);
		tcsetattr(s, TCSANOW, &tio);
	}
	/* The alarm must not strike between the fork and live_pid, or the child would be missed. */
	sigset_t old;
	block_stops(&old);
	c->t0 = xp_now_ms();
	c->pid = s < 0 ? -1 : fork();
	if (c->pid < 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (s >= 0)
			close(s);
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	if (c->pid == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		/* A new session whose controlling terminal is the slave, as a login shell's would be. */
		setsid();
		if (ioctl(s, TIOCSCTTY, 0) < 0)
			_exit(127);
		dup2(s, 0);
		dup2(s, 1);
		dup2(s, 2);
		if (s > 2)
			close(s);
		/* The same terminal on every run: these would change what is drawn, or its size. */
		setenv("TERM", "xterm-256color", 1);
		setenv("LC_ALL", "C.UTF-8", 1);
		setenv("XDG_STATE_HOME", state_dir, 1);
		unsetenv("NO_COLOR");
		unsetenv("ESCDELAY");
		unsetenv("LINES");
		unsetenv("COLUMNS");
		execv(argv[0], argv);
		_exit(127);
	}
	live_pid = c->pid;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(s);
	fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

/* Waits up to timeout_ms for output and reads all of it; returns the bytes read
 * (0 on timeout) or -1 once the console has closed the terminal. *at receives the
 * absolute time at which poll saw the data: as close to its arrival as we can see. */
static long con_pump(struct con *c, int timeout_ms, double *at)
{
	if (c->eof)
		return -1;
	struct pollfd p = {c->fd, POLLIN, 0};
	int r = poll(&p, 1, timeout_ms < 0 ? 0 : timeout_ms);
	double t = xp_now_ms();
	if (r < 0)
		return errno == EINTR ? 0 : -1;
	if (r == 0)
		return 0;
	long total = 0;
	char buf[65536];
	for (;;) {
		ssize_t n = read(c->fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* EIO: the slave side is closed (the console exited). EAGAIN: all read. */
			if (n == 0 || errno != EAGAIN)
				c->eof = true;
			break;
		}
		total += n;
		c->bytes += (size_t)n;
		if (c->marker && c->marker_at < 0) {
			xp_grow(&c->seen, 1, c->n_seen + (size_t)n + 1, &c->cap_seen);
			memcpy(c->seen + c->n_seen, buf, (size_t)n);
			c->n_seen += (size_t)n;
			/* Only the new bytes and the marker's length before them need a look. */
			size_t ml = strlen(c->marker);
			size_t from = c->n_seen - (size_t)n >= ml ? c->n_seen - (size_t)n - ml + 1 : 0;
			if (memmem(c->seen + from, c->n_seen - from, c->marker, ml))
				c->marker_at = t - c->t0;
		}
	}
	if (total) {
		if (c->first_out < 0)
			c->first_out = t - c->t0;
		c->last_byte = t;
		if (at)
			*at = t;
	}
	return total ? total : c->eof ? -1 : 0;
}

/* Reads until nothing came for quiet_ms; -1 when the console left or never went quiet
 * within max_ms. */
static int con_quiet(struct con *c, int quiet_ms, int max_ms)
{
	double start = xp_now_ms();
	for (;;) {
		long n = con_pump(c, quiet_ms, NULL);
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		if (xp_now_ms() - start > max_ms)
			return -1;
	}
}

/* Reads until the marker has arrived; returns its time in ms since the fork, -1 on
 * timeout or when the console left first. */
static double con_wait_marker(struct con *c, int max_ms)
{
	while (c->marker_at < 0) {
		double left = c->t0 + max_ms - xp_now_ms();
		if (left <= 0 || con_pump(c, (int)left + 1, NULL) < 0)
			return -1;
	}
	c->marker = NULL; /* done looking: stop keeping output */
	free(c->seen);
	c->seen = NULL;
	c->n_seen = c->cap_seen = 0;
	return c->marker_at;
}

/* Waits, reading, until the wall clock is WIN_LO..WIN_HI ms past a second. The console
 * redraws its clock once a second, at its first getch timeout (100 ms) after the second
 * turns; keeping keys and their SETTLE_MS away from that keeps the tick frame from being
 * taken for the key's. Returns -1 when the console left. */
static int wait_window(struct con *c)
{
	for (;;) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		int ms = (int)(ts.tv_nsec / 1000000);
		if (ms >= WIN_LO && ms <= WIN_HI)
			break;
		int wait = ms < WIN_LO ? WIN_LO - ms : 1000 - ms + WIN_LO;
		if (con_pump(c, wait, NULL) < 0)
			return -1;
	}
	/* Anything still pending (the tick) is not the key's. */
	while (con_pump(c, 0, NULL) > 0)
		;
	return c->eof ? -1 : 0;
}

/* One key's answer: ms after the write of the key, and its size. */
struct answer {
	double first, last;
	size_t bytes;
};

/* Sends one key and times its answer: first byte and last byte before settle_ms of
 * silence. window: wait for the quiet part of the second first (see wait_window).
 * -1 when no answer came within a second. */
static int con_key(struct con *c, const char *seq, int settle_ms, bool window, struct answer *a)
{
	if (window && wait_window(c) < 0)
		return -1;
	while (con_pump(c, 0, NULL) > 0)
		;
	size_t len = strlen(seq), before = c->bytes;
	double t0 = xp_now_ms();
	if (write(c->fd, seq, len) != (ssize_t)len)
		return -1;
	double at, end = -1;
	a->first = a->last = -1;
	for (;;) {
		int wait = end < 0 ? (int)(t0 + 1000 - xp_now_ms()) : (int)(end + settle_ms - xp_now_ms()) + 1;
		if (wait <= 0)
			break;
		long n = con_pump(c, wait, &at);
		if (n < 0)
			return -1;
		if (n == 0)
			continue;
		if (a->first < 0)
			a->first = at - t0;
		a->last = at - t0;
		end = at;
	}
	a->bytes = c->bytes - before;
	return a->first < 0 ? -1 : 0;
}

/* Asks the program to quit (types quit, or sends SIGTERM when quit is NULL), then makes
 * sure it is gone: SIGKILL after limit_ms. Fills *ru (peak RSS) and returns the exit
 * status, 128+signal when killed. */
static int con_stop(struct con *c, const char *quit, int limit_ms, struct rusage *ru)
{
	int st = 0;
	if (c->pid > 0) {
		double t = xp_now_ms();
		if (!quit)
			kill(c->pid, SIGTERM);
		else if (!c->eof && write(c->fd, quit, strlen(quit)) != (ssize_t)strlen(quit))
			c->eof = true;
		for (;;) {
			/* Keep reading: a console blocked on a full pty could not exit. */
			if (con_pump(c, 20, NULL) < 0)
				poll(NULL, 0, 10);
			pid_t w = wait4(c->pid, &st, WNOHANG, ru);
			if (w == c->pid)
				break;
			if (w < 0 && errno != EINTR) {
				st = -1;
				break;
			}
			if (xp_now_ms() - t > limit_ms) {
				kill(c->pid, SIGKILL);
				while (wait4(c->pid, &st, 0, ru) < 0 && errno == EINTR)
					;
				break;
			}
		}
		live_pid = 0;
		c->pid = -1;
	}
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->seen);
	c->seen = NULL;
	if (st < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- the console, in process ---- */

/* A stand-in for the app: views see the console only through ui.h, whose struct
 * xp_ui is opaque, so this program supplies the accessors itself. The archive's
 * app.o, which defines them too, is then never linked; if anything ever pulls it
 * in, the link fails on the duplicates instead of measuring something else. */
struct xp_ui {
	const struct xp_cluster *c;
	const struct xp_glyphs *g;
	char filter[256];
	struct xp_event_log events;
	char msg[512];
	struct xp_ctx ctx; /* no source options: view 1's actions know at once they are off */
};

const struct xp_cluster *xp_ui_cluster(const struct xp_ui *ui)
{
	return ui->c;
}

const char *xp_ui_filter(const struct xp_ui *ui)
{
	return ui->filter;
}

const struct xp_glyphs *xp_ui_glyphs(const struct xp_ui *ui)
{
	return ui->g;
}

const struct xp_event_log *xp_ui_events(const struct xp_ui *ui)
{
	return &ui->events;
}

void xp_ui_message(struct xp_ui *ui, int role, const char *fmt, ...)
{
	(void)role;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ui->msg, sizeof ui->msg, fmt, ap);
	va_end(ap);
}

/* No device history here: the device page draws no graph (the map does not read it). */
struct xp_history *xp_ui_history(const struct xp_ui *ui)
{
	(void)ui;
	return NULL;
}

struct xp_ctx *xp_ui_ctx(struct xp_ui *ui)
{
	return &ui->ctx;
}

/* View 1's actions run commands through the app; nothing here runs one. */
int xp_ui_command(struct xp_ui *ui, const char *line, char **out, char **errs)
{
	(void)ui, (void)line;
	*out = xp_strdup("");
	*errs = xp_strdup("xpool: no commands in the benchmark\n");
	return XP_EXIT_ERROR;
}

/* The filter compiled for the view's fields, as app.c's cache gives it (kept until the text
 * or the fields change). */
const struct xp_filter *xp_ui_filter_expr(const struct xp_ui *ui, const struct xp_filter_field *fields)
{
	static struct xp_filter *f;
	static char text[256];
	static const struct xp_filter_field *for_fields;
	if (!ui->filter[0])
		return NULL;
	if (!f || strcmp(text, ui->filter) != 0 || for_fields != fields) {
		struct xp_err err = {{0}};
		xp_filter_free(f);
		f = xp_filter_compile(ui->filter, fields, &err);
		snprintf(text, sizeof text, "%s", ui->filter);
		for_fields = fields;
	}
	return f;
}

/* No refresh here says which nodes stayed: the view counts every node again. */
bool xp_ui_moved(const struct xp_ui *ui, struct xp_ui_moved *m)
{
	(void)ui;
	(void)m;
	return false;
}

/* The words-only rule of app.c's filter for a plain word: a case-insensitive substring. */
bool xp_ui_matches(const struct xp_ui *ui, const char *text)
{
	return !ui->filter[0] || (text && strcasestr(text, ui->filter) != NULL);
}

extern const struct xp_view xp_view_topology;

struct inproc {
	bool ok;
	struct stats down_draw, down_frame, page_frame, rebuild, refilter;
};

/* Times the view over c on a 200x50 screen that writes to /dev/null: the view's draw
 * after a key, and the whole frame with ncurses' diff and output (doupdate). The app
 * adds a header, tabs and status line; part 2 has those. */
static struct inproc run_inproc(struct xp_cluster *c)
{
	struct inproc res = {false};
	/* The console runs in a UTF-8 locale on the pty; the draw does here too. */
	if (!setlocale(LC_ALL, "C.UTF-8"))
		setlocale(LC_ALL, "");
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	/* The terminal type is named, not taken from $TERM: `make bench` may run without one. */
	SCREEN *scr = out && in ? newterm("xterm-256color", out, in) : NULL;
	if (!scr) {
		fprintf(stderr, "bench_console: in-process: no ncurses screen for xterm-256color\n");
		if (out)
			fclose(out);
		if (in)
			fclose(in);
		return res;
	}
	set_term(scr);
	resizeterm(ROWS, COLS);
	struct xp_theme th;
	xp_theme_default(&th);
	xp_theme_apply(&th, true);

	static struct xp_ui ui;
	ui.c = c;
	ui.g = xp_glyphs_pick(false);
	xp_ctx_init(&ui.ctx, stdout, stderr);
	xp_event_log_init(&ui.events, 16);
	struct xp_rect body = xp_layout_frame(ROWS, COLS).body;
	const struct xp_view *v = &xp_view_topology;
	void *st = v->create(&ui);

	/* What a refresh costs the key loop: the app calls on_data when new data arrive and
	 * the view (which rebuilds lazily) pays at its next draw: time both. A new generation
	 * makes the view see new data without a new cluster. */
	double reb[5], ref[5];
	for (int i = 0; i < 5; i++) {
		c->generation++;
		double t0 = xp_now_ms();
		v->on_data(st, &ui);
		v->draw(st, &ui, stdscr, body);
		reb[i] = xp_now_ms() - t0;
	}
	/* A `/` filter keystroke: on_data with the new text, same cluster, then the frame. */
	static const char *const typed[] = {"r", "r1", "r12", "r12", "r1"};
	for (int i = 0; i < 5; i++) {
		snprintf(ui.filter, sizeof ui.filter, "%s", typed[i]);
		double t0 = xp_now_ms();
		v->on_data(st, &ui);
		v->draw(st, &ui, stdscr, body);
		ref[i] = xp_now_ms() - t0;
	}
	ui.filter[0] = '\0';
	v->on_data(st, &ui);
	v->draw(st, &ui, stdscr, body);
	wnoutrefresh(stdscr);
	doupdate();

	static double draw[FRAMES], frame[FRAMES], page[FRAMES];
	for (int i = 0; i < FRAMES; i++) {
		double t0 = xp_now_ms();
		v->on_key(st, &ui, KEY_DOWN);
		v->draw(st, &ui, stdscr, body);
		double t1 = xp_now_ms();
		wnoutrefresh(stdscr);
		doupdate();
		double t2 = xp_now_ms();
		draw[i] = t1 - t0;
		frame[i] = t2 - t0;
	}
	/* Every PgDn repaints the whole body; 2000 pages would run off the end, so back to the top. */
	v->on_key(st, &ui, KEY_HOME);
	for (int i = 0; i < FRAMES; i++) {
		if (i % 100 == 0)
			v->on_key(st, &ui, KEY_HOME);
		double t0 = xp_now_ms();
		v->on_key(st, &ui, KEY_NPAGE);
		v->draw(st, &ui, stdscr, body);
		wnoutrefresh(stdscr);
		doupdate();
		page[i] = xp_now_ms() - t0;
	}
	v->destroy(st);
	endwin();
	delscreen(scr);
	fclose(out);
	fclose(in);
	xp_event_log_free(&ui.events);
	res.ok = true;
	res.down_draw = stats_of(draw, FRAMES);
	res.down_frame = stats_of(frame, FRAMES);
	res.page_frame = stats_of(page, FRAMES);
	res.rebuild = stats_of(reb, 5);
	res.refilter = stats_of(ref, 5);
	return res;
}

/* ---- report ---- */

static void row(const char *what, struct stats s, const char *unit)
{
	if (!s.n) {
		printf("%-44s %8s\n", what, "n/a");
		return;
	}
	printf("%-44s %8.2f %8.2f %8.2f %8.2f %5zu  %s\n", what, s.med, s.p90, s.min, s.max, s.n, unit);
}

/* Prints a PASS/FAIL line for the median of s against target; returns 1 when the miss
 * is wide enough to fail the run (or there is no value at all). */
static int judge(const char *what, struct stats s, double target, const char *unit)
{
	double value = s.med;
	if (!s.n || isnan(value)) {
		printf("  FAIL %s: not measured\n", what);
		return 1;
	}
	printf("  %s %s: %.2f %s (target < %.0f %s)\n", value < target ? "PASS" : "FAIL", what, value, unit,
	       target, unit);
	if (value > target * SLACK) {
		printf("  ^ more than %.0fx over the target\n", SLACK);
		return 1;
	}
	return 0;
}

struct series {
	struct stats first, last, bytes;
	int missed; /* keys that got no answer */
};

/* Sends seq count times (at most KEYS) and gathers the answers; no console (c NULL)
 * gives an empty series, every figure NaN. */
static struct series key_series(struct con *c, const char *seq, int count, int settle_ms, bool window)
{
	double f[KEYS], l[KEYS], b[KEYS];
	size_t n = 0;
	struct series s = {{0}};
	for (int i = 0; c && i < count && i < KEYS; i++) {
		struct answer a;
		if (con_key(c, seq, settle_ms, window, &a) < 0) {
			s.missed++;
			if (c->eof)
				break;
			continue;
		}
		f[n] = a.first;
		l[n] = a.last;
		b[n++] = (double)a.bytes;
	}
	s.first = stats_of(f, n);
	s.last = stats_of(l, n);
	s.bytes = stats_of(b, n);
	return s;
}

/* One console on the big snapshot: startup, then down_keys Down and page_keys PgDn. */
struct big_run {
	bool ok;
	double start, rss;   /* ms to the first frame (-1: never), MiB */
	size_t frame_bytes;  /* output up to the first full frame */
	struct series down, page;
};

static struct big_run run_big(char *const argv[], int down_keys, int page_keys)
{
	struct big_run r = {false, -1, XP_NA, 0, key_series(NULL, "", 0, 0, false), key_series(NULL, "", 0, 0, false)};
	struct con c;
	if (con_start(&c, argv, BIG_FIRST_NODE, false) < 0) {
		fprintf(stderr, "bench_console: cannot start %s in a pty: %s\n", argv[0], strerror(errno));
		return r;
	}
	r.start = con_wait_marker(&c, 30000);
	if (r.start < 0 || con_quiet(&c, QUIET_MS, 5000) < 0) {
		fprintf(stderr, "bench_console: %s --inventory: no first frame showing %s\n", argv[0],
			BIG_FIRST_NODE);
	} else {
		r.ok = true;
		r.frame_bytes = c.bytes;
		/* Down in the form the terminal sends once ncurses has turned on keypad
		 * transmit mode (smkx): xterm's kcud1 is ESC O B; ESC [ B is no key there. */
		r.down = key_series(&c, "\033OB", down_keys, SETTLE_MS, true);
		r.page = key_series(&c, "\033[6~", page_keys, SETTLE_MS, true);
	}
	struct rusage ru;
	memset(&ru, 0, sizeof ru);
	/* A refresh in flight finishes before the console quits: allow a whole load. */
	int rc = con_stop(&c, "q", 10000, &ru);
	r.rss = (double)ru.ru_maxrss / 1024.0;
	if (rc != 0) {
		fprintf(stderr, "bench_console: %s --inventory ended with %d on q\n", argv[0], rc);
		r.ok = false;
	}
	return r;
}

int main(void)
{
	/* $XPOOL_BIN and $XP_FIXTURES, as the check suites read them. */
	const char *bin = xp_bin();
	if (access(bin, X_OK) < 0) {
		fprintf(stderr, "bench_console: %s: %s\n", bin, strerror(errno));
		return 1;
	}
	char fixture[4096];
	snprintf(fixture, sizeof fixture, "%s", xp_fixture(FIXTURE));
	if (access(fixture, R_OK) < 0) {
		fprintf(stderr, "bench_console: %s: %s\n", fixture, strerror(errno));
		return 1;
	}

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGALRM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	alarm(DEADLINE_S);
	main_pid = getpid();
	atexit(cleanup);

	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	snprintf(state_dir, sizeof state_dir, "%s/xpool-bench-state-XXXXXX", tmp);
	if (!mkdtemp(state_dir)) {
		fprintf(stderr, "bench_console: %s: %s\n", state_dir, strerror(errno));
		state_dir[0] = '\0';
		return 1;
	}
	snprintf(state_sub, sizeof state_sub, "%s/xpool", state_dir);
	snprintf(state_hist, sizeof state_hist, "%s/history", state_sub);

	/* 1. the snapshot */
	snprintf(snap_path, sizeof snap_path, "%s/xpool-bench-XXXXXX.json", tmp);
	int sfd = mkstemps(snap_path, 5);
	if (sfd < 0) {
		fprintf(stderr, "bench_console: %s: %s\n", snap_path, strerror(errno));
		snap_path[0] = '\0';
		return 1;
	}
	double t0 = xp_now_ms();
	if (write_snapshot(sfd) < 0)
		return 1;
	double gen_ms = xp_now_ms() - t0;
	struct stat sst;
	double snap_mib = stat(snap_path, &sst) == 0 ? (double)sst.st_size / 1048576.0 : 0;
	printf("bench_console: %s, %d nodes x %d devices (snapshot %.1f MiB, built and written in %.0f ms)\n", bin,
	       N_NODES, N_DEV, snap_mib, gen_ms);
	fflush(stdout);

	/* 2. keystrokes through the pty, on the big snapshot. -d 3600: no live refresh while
	 * keys are timed, so that a reload's frame and CPU stay out of the keys' windows; a
	 * second run with the default refresh shows what an operator gets meanwhile. */
	int bad = 0;
	char *quiet_argv[] = {(char *)bin, "--inventory", snap_path, "-d", "3600", NULL};
	char *live_argv[] = {(char *)bin, "--inventory", snap_path, NULL};
	struct big_run quiet = run_big(quiet_argv, KEYS, KEYS);
	struct big_run live = run_big(live_argv, LIVE_KEYS, 0);
	if (!quiet.ok || !live.ok)
		bad = 1;
	unlink(snap_path);
	snap_path[0] = '\0';

	/* What the pty alone costs: cat in a raw pty echoes each byte at once. */
	struct series echo = key_series(NULL, "x", 0, 0, false);
	struct con con;
	char *cat_argv[] = {"/bin/cat", NULL};
	if (con_start(&con, cat_argv, NULL, true) == 0) {
		echo = key_series(&con, "x", KEYS, 10, false);
		struct rusage cru;
		con_stop(&con, NULL, 1000, &cru);
	}

	/* 4. startup on the fixture, while this process is still small: forking a big one
	 * copies its page tables, which would count against the console. */
	double st_ms[FIX_RUNS], out_ms[FIX_RUNS];
	size_t n_st = 0;
	char *fix_argv[] = {(char *)bin, "--topology", fixture, NULL};
	for (int i = 0; i < FIX_RUNS; i++) {
		struct rusage ru;
		if (con_start(&con, fix_argv, FIXTURE_NODE, false) < 0) {
			fprintf(stderr, "bench_console: cannot start %s in a pty: %s\n", bin, strerror(errno));
			return 1;
		}
		double ms = con_wait_marker(&con, 5000);
		double out = con.first_out;
		int rc = con_stop(&con, "q", 3000, &ru);
		if (ms >= 0) {
			out_ms[n_st] = out;
			st_ms[n_st++] = ms;
		}
		if (ms < 0 || rc != 0) {
			fprintf(stderr, "bench_console: %s --topology %s: %s (exit %d)\n", bin, fixture,
				ms < 0 ? "\"" FIXTURE_NODE "\" never showed" : "did not quit cleanly", rc);
			bad = 1;
			break; /* the next runs would fail alike, each after a wait */
		}
	}
	struct stats start = stats_of(st_ms, n_st), first_out = stats_of(out_ms, n_st);

	/* 3. in process, on the same cluster (the generator is deterministic) */
	struct xp_cluster *big = make_cluster();
	struct inproc ip = run_inproc(big);
	xp_cluster_free(big);

	printf("%-44s %8s %8s %8s %8s %5s\n", "measure (200x50 pty, xterm-256color)", "median", "p90", "min",
	       "max", "n");
	row("pty Down: key -> first byte", quiet.down.first, "ms");
	row("pty Down: key -> last byte (frame)", quiet.down.last, "ms");
	row("pty PgDn: key -> first byte", quiet.page.first, "ms");
	row("pty PgDn: key -> last byte (frame)", quiet.page.last, "ms");
	row("pty Down, live refresh (-d 2): last byte", live.down.last, "ms");
	row("pty floor: cat echoes a byte", echo.last, "ms");
	row("answer size: Down", quiet.down.bytes, "bytes");
	row("answer size: PgDn", quiet.page.bytes, "bytes");
	if (ip.ok) {
		row("in-process Down: on_key + view draw", ip.down_draw, "ms");
		row("in-process Down: + doupdate (frame)", ip.down_frame, "ms");
		row("in-process PgDn: whole frame", ip.page_frame, "ms");
		row("in-process refresh: on_data + draw, 10k", ip.rebuild, "ms");
		row("in-process filter key: on_data + draw", ip.refilter, "ms");
	} else {
		printf("%-44s %8s\n", "in-process", "skipped");
	}
	row("startup to first output, fixture", first_out, "ms");
	row("startup to first frame, fixture", start, "ms");
	double bs[2] = {quiet.start, live.start};
	row("startup to first frame, 10k snapshot", stats_of(bs, (quiet.start >= 0) + (live.start >= 0)), "ms");
	printf("%-44s %8.0f %8s %8s %8.0f %5d  MiB\n", "peak RSS, 10k snapshot (-d 3600, -d 2)", quiet.rss, "",
	       "", live.rss, 2);
	if (quiet.ok)
		printf("%-44s %8zu  bytes\n", "output up to the first full frame, 10k", quiet.frame_bytes);
	int missed = quiet.down.missed + quiet.page.missed + live.down.missed;
	if (missed)
		printf("  %d key%s got no answer within a second\n", missed, missed == 1 ? "" : "s");

	printf("targets (issue: frame < %.0f ms, startup to first frame < %.0f ms):\n", TARGET_FRAME_MS,
	       TARGET_START_MS);
	bad |= judge("Down, key to last byte over the pty, median", quiet.down.last, TARGET_FRAME_MS, "ms");
	bad |= judge("PgDn, key to last byte over the pty, median", quiet.page.last, TARGET_FRAME_MS, "ms");
	if (ip.ok) {
		bad |= judge("Down, in-process frame, median", ip.down_frame, TARGET_FRAME_MS, "ms");
		bad |= judge("PgDn, in-process frame, median", ip.page_frame, TARGET_FRAME_MS, "ms");
	}
	bad |= judge("startup to first frame on " FIXTURE ", median", start, TARGET_START_MS, "ms");
	if (missed > KEYS / 10) {
		printf("  FAIL %d keys unanswered\n", missed);
		bad = 1;
	}
	printf("  info: pty figures include the pty round trip (see the cat floor); the live-refresh row,\n"
	       "  the 10k startup and the RSS have no target\n");
	return bad ? 1 : 0;
}
