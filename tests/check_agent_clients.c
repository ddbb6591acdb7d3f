/* check_agent_clients.c: one `xpool agent` (a real process on loopback) against many hostile
 * clients at once from several loopback source addresses (127.0.0.2 ...: each client socket is
 * bound to its address before it connects), while a good client keeps asking and is timed:
 *   slow readers:  connections that ask for several replies at once (pipelined) and read them a
 *                  hundred bytes a second from a tiny receive buffer, so every slot is held by a
 *                  reply in flight that never goes idle;
 *   mixed flood:   idle connections, tricklers (a header line a second), slow readers and a
 *                  connect-and-close flood together.
 * The good client is answered every time, each within GOOD_BOUND_S. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "suitelib.h"
#include "testlib.h"
#include "xp.h"

/* The most seconds a good request may take, connect to last byte, under any of these floods.
 * Served at once it takes a few milliseconds; a second allows for this 2-CPU machine shared
 * with parallel builds. Without a defence it waits for a slot to free: the agent's 5 s idle or
 * 10 s request deadline, or never for a slow reader. */
#define GOOD_BOUND_S 1.0
/* The agent's slots (--max-connections) in these tests. */
#define SLOTS 64

static char dir[128];
static char *asc;
static pid_t agent;
static int port;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void nap(double s)
{
	struct timespec t = {(time_t)s, (long)((s - (double)(long)s) * 1e9)};
	nanosleep(&t, NULL);
}

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/xpool-aclients-%d", (int)getpid());
	mkdir(dir, 0700);
	signal(SIGPIPE, SIG_IGN);
	asc = xp_assemble(dir, "asc", "ascend/npu-smi-info_atlas800-9010_8x910A_24.1.RC2.txt", "npu-smi-info.txt",
			  "ascend/npu-smi-info-m_atlas800-9010_8x910A_24.1.RC2.txt", "npu-smi-info-m.txt",
			  "hwloc/32em64t-2n8c2t-pci-wholeio.xml", "hwloc.xml", NULL);
	char url[256], slots[16];
	snprintf(slots, sizeof slots, "%d", SLOTS);
	const char *args[] = {"--replay", asc, "--max-connections", slots};
	agent = xp_agent_startv(url, sizeof url, "127.0.0.1:0", args, 4);
	ck_assert_msg(agent > 0, "agent: %s", url);
	const char *colon = strrchr(url, ':');
	ck_assert_ptr_nonnull(colon);
	port = atoi(colon + 1);
}

static void teardown(void)
{
	if (agent > 0)
		xp_agent_stop(agent);
	agent = 0;
	xp_rm_rf(dir);
	free(asc);
}

/* A connection to the agent from 127.0.0.SRC (its receive buffer rcvbuf bytes when not 0),
 * non-blocking once connected; -1 when the agent refused or reset it. */
static int connect_from(int src, int rcvbuf)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	if (rcvbuf) {
		/* A small window and, announced in the SYN, a small segment: the agent's send buffer
		 * then stays as small as on an Ethernet link (on loopback's 64 KiB segments the kernel
		 * would take a megabyte of replies off the agent's hands). */
		int mss = 536;
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
		setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof mss);
	}
	struct sockaddr_in from = {.sin_family = AF_INET};
	from.sin_addr.s_addr = htonl((127u << 24) | (unsigned)src);
	ck_assert_msg(bind(fd, (struct sockaddr *)&from, sizeof from) == 0, "bind 127.0.0.%d: %s", src,
		      strerror(errno));
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	to.sin_addr.s_addr = htonl(0x7f000001);
	if (connect(fd, (struct sockaddr *)&to, sizeof to) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void send_all(int fd, const char *s)
{
	size_t n = strlen(s);
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w <= 0)
			return; /* cut off by the agent: what these tests expect of hostile clients */
		s += w;
		n -= (size_t)w;
	}
}

/* One good request from 127.0.0.SRC: GET /v1/health, Connection: close. Its time, connect
 * to the whole reply, or a negative number when it was not answered 200 within 5 s. */
static double good_request(int src)
{
	double t0 = now_s();
	int fd = connect_from(src, 0);
	if (fd < 0)
		return -1;
	send_all(fd, "GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	char buf[4096];
	size_t len = 0;
	double end = t0 + 5;
	for (;;) {
		struct pollfd pf = {fd, POLLIN, 0};
		if (now_s() > end || poll(&pf, 1, 50) < 0)
			break;
		if (!pf.revents)
			continue;
		ssize_t k = recv(fd, buf + len, sizeof buf - 1 - len, MSG_DONTWAIT);
		if (k <= 0)
			break;
		len += (size_t)k;
	}
	close(fd);
	buf[len] = '\0';
	double took = now_s() - t0;
	return strncmp(buf, "HTTP/1.1 200", 12) == 0 && strstr(buf, "\r\n\r\n") ? took : -1;
}

/* Reads at most n bytes waiting on fd; how many, 0 at the end of the stream or none waiting. */
static size_t drain(int fd, size_t n)
{
	char buf[4096];
	ssize_t k = recv(fd, buf, n < sizeof buf ? n : sizeof buf, MSG_DONTWAIT);
	return k > 0 ? (size_t)k : 0;
}

/* The good client's figures over a flood. */
struct tally {
	int asked, answered;
	double worst, sum;
};

static void tally_add(struct tally *t, double took)
{
	t->asked++;
	if (took < 0)
		return;
	t->answered++;
	t->sum += took;
	if (took > t->worst)
		t->worst = took;
}

static void tally_check(const struct tally *t, const char *what)
{
	fprintf(stderr, "agent_clients: %s: good client %d/%d answered, mean %.1f ms, worst %.1f ms\n", what,
		t->answered, t->asked, t->answered ? t->sum / t->answered * 1000 : 0, t->worst * 1000);
	ck_assert_msg(t->answered == t->asked, "%s: the good client was answered %d times of %d", what, t->answered,
		      t->asked);
	ck_assert_msg(t->worst <= GOOD_BOUND_S, "%s: a good request took %.2f s (bound %.1f s)", what, t->worst,
		      GOOD_BOUND_S);
}

/* Slow readers: from five addresses, 16 connections each (a quarter of the slots, each address
 * within its share; together more than all the slots), opened 5 ms apart so that each has its
 * requests in before the next comes; each asks for eight replies at once and reads them through a
 * 2 KiB window, 2 KiB a second: its replies stay in flight for a minute, and it is never idle
 * long enough for the agent's 5 s timeout nor ever waiting for a request. For 12 s (past the
 * 5 s idle timeout and the 10 s request deadline) a good client asks twice a second, in turn
 * from a sixth address and from the first slow readers' address (every local client shares
 * 127.0.0.1). */
START_TEST(slow_readers)
{
	enum { ADDRS = 5, EACH = 16, PIPELINED = 8, N = ADDRS * EACH };
	int slow[N];
	char reqs[PIPELINED * 64] = "";
	for (int i = 0; i < PIPELINED; i++)
		strcat(reqs, "GET /v1/node HTTP/1.1\r\nHost: x\r\n\r\n");
	for (int i = 0; i < N; i++) {
		slow[i] = connect_from(2 + i / EACH, 2048);
		if (slow[i] >= 0)
			send_all(slow[i], reqs);
		nap(0.005);
	}
	struct tally t = {0};
	double end = now_s() + 12, next_read = 0, next_good = now_s() + 0.5;
	while (now_s() < end) {
		if (now_s() >= next_read) {
			for (int i = 0; i < N; i++)
				if (slow[i] >= 0)
					drain(slow[i], 2048);
			next_read = now_s() + 1;
		}
		if (now_s() >= next_good) {
			tally_add(&t, good_request(t.asked % 2 ? 2 : 9));
			next_good = now_s() + 0.5;
		}
		nap(0.02);
	}
	for (int i = 0; i < N; i++)
		if (slow[i] >= 0)
			close(slow[i]);
	tally_check(&t, "slow readers");
}
END_TEST

/* Everything at once from six addresses: 16 idle connections (127.0.0.2), 16 tricklers
 * sending a header line a second (.3), 16 slow readers as above (.4), 16 more slow readers
 * (.5), and a flood that opens and closes a connection every 10 ms (.6); the good client asks
 * from .9 and from .2, the idle connections' address (every local client shares 127.0.0.1). */
START_TEST(mixed_flood)
{
	enum { EACH = SLOTS / 4 };
	int idle[EACH], trickle[EACH], slow[2 * EACH];
	char reqs[8 * 64] = "";
	for (int i = 0; i < 8; i++)
		strcat(reqs, "GET /v1/node HTTP/1.1\r\nHost: x\r\n\r\n");
	for (int i = 0; i < EACH; i++) {
		idle[i] = connect_from(2, 0);
		trickle[i] = connect_from(3, 0);
		if (trickle[i] >= 0)
			send_all(trickle[i], "GET /v1/health HTTP/1.1\r\n");
	}
	for (int i = 0; i < 2 * EACH; i++) {
		slow[i] = connect_from(4 + i / EACH, 2048);
		if (slow[i] >= 0)
			send_all(slow[i], reqs);
	}
	struct tally t = {0};
	double end = now_s() + 12, next_tick = 0, next_good = now_s() + 0.3;
	int turn = 0;
	while (now_s() < end) {
		if (now_s() >= next_tick) {
			for (int i = 0; i < EACH; i++)
				if (trickle[i] >= 0)
					send_all(trickle[i], "X-A: b\r\n");
			for (int i = 0; i < 2 * EACH; i++)
				if (slow[i] >= 0)
					drain(slow[i], 2048);
			next_tick = now_s() + 1;
		}
		int f = connect_from(6, 0);
		if (f >= 0)
			close(f);
		if (now_s() >= next_good) {
			tally_add(&t, good_request(turn++ % 2 ? 2 : 9));
			next_good = now_s() + 0.5;
		}
		nap(0.01);
	}
	for (int i = 0; i < EACH; i++) {
		if (idle[i] >= 0)
			close(idle[i]);
		if (trickle[i] >= 0)
			close(trickle[i]);
	}
	for (int i = 0; i < 2 * EACH; i++)
		if (slow[i] >= 0)
			close(slow[i]);
	tally_check(&t, "mixed flood");
	/* The agent lived through it and serves as before. */
	ck_assert_msg(good_request(9) >= 0, "the agent does not answer after the flood");
	ck_assert_int_eq(xp_agent_stop(agent), 0);
	agent = 0;
}
END_TEST

XP_DEFINE_SUITE(agent_clients, {"clients", .timeout_s = 60, .setup = setup, .teardown = teardown,
				.tests = {slow_readers, mixed_flood}})
