/* procs.c: who runs a device's processes, read from /proc on the node itself (compiled into each
 * adapter and the core). Vendor tools give a pid and at best a short name; the owner and the
 * whole command line are the kernel's to say, and only live: a replayed record is another
 * machine's, whose pids mean nothing here. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "xp_adapter.h"

/* Reads at most size - 1 bytes of /proc/PID/FILE into buf (NUL-terminated); the length, or -1. */
static ssize_t proc_read(int64_t pid, const char *file, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%lld/%s", (long long)pid, file);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t got = 0;
	while (got + 1 < size) {
		ssize_t r = read(fd, buf + got, size - 1 - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	return (ssize_t)got;
}

/* The real uid on the "Uid:" line of /proc/PID/status as a user name (the number when the
 * password database does not know it); "" when it cannot be read. */
static void owner(int64_t pid, char *user, size_t size)
{
	char status[4096];
	user[0] = '\0';
	if (proc_read(pid, "status", status, sizeof status) <= 0)
		return;
	const char *line = strstr(status, "\nUid:");
	if (!line)
		return;
	char *end;
	unsigned long uid = strtoul(line + 5, &end, 10);
	if (end == line + 5)
		return;
	struct passwd pw, *found = NULL;
	char buf[2048];
	if (getpwuid_r((uid_t)uid, &pw, buf, sizeof buf, &found) == 0 && found && found->pw_name)
		xp_raw_set(user, size, found->pw_name, strlen(found->pw_name));
	else
		snprintf(user, size, "%lu", uid);
}

/* /proc/PID/cmdline with its NULs as spaces into name; unchanged when empty or unreadable (a
 * kernel thread, a process gone since the tool listed it). */
static void command(int64_t pid, char *name, size_t size)
{
	char buf[512];
	ssize_t n = proc_read(pid, "cmdline", buf, sizeof buf);
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	if (n <= 0)
		return;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	xp_raw_set(name, size, buf, (size_t)n);
}

/* True when the process holds a file whose path starts with prefix open (at most 4096 of its
 * descriptors looked at). Reading another user's descriptors needs root: false then. */
static bool holds_device(int64_t pid, const char *prefix)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%lld/fd", (long long)pid);
	DIR *d = opendir(dir);
	if (!d)
		return false;
	bool found = false;
	size_t pl = strlen(prefix);
	struct dirent *e;
	for (int seen = 0; !found && seen < 4096 && (e = readdir(d)) != NULL; seen++) {
		if (e->d_name[0] == '.')
			continue;
		char link[PATH_MAX], target[256];
		snprintf(link, sizeof link, "%s/%s", dir, e->d_name);
		ssize_t n = readlink(link, target, sizeof target - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		found = (size_t)n >= pl && strncmp(target, prefix, pl) == 0;
	}
	closedir(d);
	return found;
}

/* True when /proc/PID is the process the tool listed. With a name: the kernel's (/proc/PID/comm,
 * cut to 15 bytes) and the base name of the tool's first word agree as far as the shorter goes.
 * Without one (NVML names none; npu-smi may print none): the process holds one of the vendor's
 * device files open. Otherwise the pid is another PID namespace's (the tool sees the host's,
 * xpool runs in a container, or the reverse) or reused since: its owner would be someone else's. */
static bool same_process(int64_t pid, const char *tool_name, const char *dev_prefix)
{
	if (!tool_name[0])
		return dev_prefix && holds_device(pid, dev_prefix);
	char comm[64];
	ssize_t n = proc_read(pid, "comm", comm, sizeof comm);
	while (n > 0 && (comm[n - 1] == '\n' || comm[n - 1] == '\0'))
		comm[--n] = '\0';
	if (n <= 0)
		return false;
	size_t wl = strcspn(tool_name, " ");
	const char *base = tool_name;
	for (size_t i = 0; i < wl; i++)
		if (tool_name[i] == '/')
			base = tool_name + i + 1;
	size_t bl = wl - (size_t)(base - tool_name);
	size_t l = bl < (size_t)n ? bl : (size_t)n;
	return l > 0 && strncmp(base, comm, l) == 0;
}

void xp_raw_procs_from_proc(struct xp_raw_node *node, const char *dev_prefix)
{
	for (int i = 0; i < node->n_devices; i++) {
		struct xp_raw_device *d = &node->devices[i];
		for (int k = 0; k < d->n_procs; k++) {
			struct xp_raw_proc *p = &d->procs[k];
			if (p->pid <= 0 || !same_process(p->pid, p->name, dev_prefix))
				continue;
			owner(p->pid, p->user, sizeof p->user);
			command(p->pid, p->name, sizeof p->name);
		}
	}
}
