/* validate_run.c: probe runs: the log directory and log files, writing a log that
 * arrived from elsewhere, and running a case's entry command to record its result. */
#include "validate_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "probe.h"
#include "run.h"

/* Where probes find programs: as run.c, never the caller's PATH (nothing of our environment leaks). */
#define SAFE_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* mkdir -p with mode 0700 (exactly) for what it creates: logs may show what a workload printed.
 * The default folder is xpool's own (the user's alone: files.h); one named by --log-dir must
 * not let another user swap or plant files without the sticky bit. */
static int make_dirs(const char *path, struct xp_err *err)
{
	char *def = xp_validate_default_log_dir();
	bool own = strcmp(def, path) == 0;
	free(def);
	int rc = own ? xp_private_dir(path, true, err) : xp_shared_dir_check(path, true, false, err);
	if (rc < 0)
		xp_err_prefix(err, "log directory");
	return rc;
}

/* s reduced to what is safe in a file name, at most max bytes. */
static void file_part(char *out, size_t max, const char *s)
{
	size_t o = 0;
	for (; *s && o + 1 < max; s++) {
		char c = *s;
		bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
			    c == '-';
		out[o++] = keep ? c : '_';
	}
	out[o] = '\0';
}

/* Creates the log file dir/CASE_ENV_TIME.log (a new file, never through a link), with
 * a counter when one run follows another within the second. */
static int open_log(const char *dir, const char *kase, const char *env, time_t now, char **path, struct xp_err *err)
{
	char c[XP_CASE_NAME_MAX + 1], e[101], when[32];
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(when, sizeof when, "%Y%m%dT%H%M%SZ", &tm);
	file_part(c, sizeof c, kase);
	file_part(e, sizeof e, env);
	for (int i = 1; i < 100; i++) {
		char *p = i == 1 ? xp_asprintf("%s/%s_%s_%s.log", dir, c, e, when)
				 : xp_asprintf("%s/%s_%s_%s-%d.log", dir, c, e, when, i);
		int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		/* Exactly 0600: the umask only ever takes bits off, but say so in the code. */
		if (fd >= 0 && fchmod(fd, 0600) < 0) {
			int e2 = errno;
			close(fd);
			unlink(p);
			free(p);
			return xp_errf(err, "log file in %s: %s", dir, strerror(e2));
		}
		if (fd >= 0) {
			*path = p;
			return fd;
		}
		int e2 = errno;
		free(p);
		if (e2 != EEXIST)
			return xp_errf(err, "log file in %s: %s", dir, strerror(e2));
	}
	return xp_errf(err, "log file in %s: too many runs this second", dir);
}

char *xp_validate_default_log_dir(void)
{
	char *db = xp_store_default_path();
	char *slash = strrchr(db, '/');
	if (slash)
		*slash = '\0';
	char *dir = xp_asprintf("%s/logs", slash ? db : ".");
	free(db);
	return dir;
}

int xp_validate_log_write(const char *log_dir, const char *kase, const char *env, const char *text, size_t len,
			  char **path, struct xp_err *err)
{
	*path = NULL;
	if (make_dirs(log_dir, err) < 0)
		return -1;
	int fd = open_log(log_dir, kase, env, time(NULL), path, err);
	if (fd < 0)
		return -1;
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, text + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = errno;
			close(fd);
			unlink(*path);
			xp_errf(err, "writing the log %s: %s", *path, strerror(e));
			free(*path);
			*path = NULL;
			return -1;
		}
		off += (size_t)w;
	}
	if (close(fd) < 0) {
		xp_errf(err, "writing the log %s: %s", *path, strerror(errno));
		free(*path);
		*path = NULL;
		return -1;
	}
	return 0;
}

/* The checks before a probe runs, so that nothing runs whose result could not be recorded:
 * the case has an entry, the environment resolves (*id), every layer below is pass, and
 * the program is found (*prog). Both are the caller's to free, set or not. */
static int run_preflight(struct xp_store *s, const struct xp_case *c, const char *kase, const char *env, int layer,
			 char **id, char **prog, struct xp_err *err)
{
	struct xp_evidence cur[XP_LAYER_COUNT] = {{0}};
	int rc = 0;
	if (!c->entry)
		rc = xp_errf(err, "case %s has no entry command (add the case with --entry)", kase);
	if (rc == 0 && !(*id = xp_validate_env_resolve(s, env, err)))
		rc = -1;
	if (rc == 0)
		rc = xpv_cell_read(s, *id, kase, cur, err);
	/* A pass could not be recorded: say so before the probe runs, not after. */
	int gap = rc == 0 ? xpv_lower_gap(cur, layer) : -1;
	if (gap >= 0)
		rc = xp_errf(err, "cannot run %s on %s: %s is %s", kase, xp_layer_name(layer), xp_layer_name(gap),
			     xp_vstatus_name(cur[gap].status));
	if (rc == 0 && !(*prog = xp_which(c->entry[0])))
		rc = xp_errf(err, "case %s: %s: program not found", kase, c->entry[0]);
	xp_evidence_clear(cur, XP_LAYER_COUNT);
	return rc;
}

/* Most variables probe_env sets. */
#define PROBE_ENV_MAX 8

/* A clean environment, as for vendor tools, plus what the probe may want to know; envp gets
 * the strings (the caller frees them) and a NULL. Returns how many. */
static int probe_env(char *envp[PROBE_ENV_MAX + 1], const char *kase, const char *id, int layer, const char *node)
{
	const char *home = getenv("HOME");
	int k = 0;
	envp[k++] = xp_strdup("PATH=" SAFE_PATH);
	envp[k++] = xp_strdup("LANG=C");
	envp[k++] = xp_strdup("LC_ALL=C");
	envp[k++] = xp_asprintf("XPOOL_CASE=%s", kase);
	envp[k++] = xp_asprintf("XPOOL_ENV=%s", id);
	envp[k++] = xp_asprintf("XPOOL_LAYER=%s", xp_layer_name(layer));
	envp[k++] = xp_asprintf("XPOOL_NODE=%s", node ? node : "");
	if (home && *home)
		envp[k++] = xp_asprintf("HOME=%s", home);
	envp[k] = NULL;
	return k;
}

/* Runs the probe with its output into fd, the log at path, and closes fd: 1 when it passed,
 * 0 when it failed (note says how), -1 with err when it could not run or the log could not
 * be written (a log cut short is no evidence). */
static int run_probe(const char *prog, char *const *argv, const char *kase, const char *id, int layer,
		     const char *node, int fd, const char *path, double timeout_s, char *note, size_t note_len,
		     struct xp_err *err)
{
	char *envp[PROBE_ENV_MAX + 1];
	int k = probe_env(envp, kase, id, layer, node);
	struct xp_probe_result pr;
	int ok = xp_probe_run(prog, argv, envp, fd, timeout_s, XP_VALIDATE_MAX_LOG, NULL, &pr, err);
	if (ok >= 0)
		xp_probe_note(&pr, timeout_s, XP_VALIDATE_MAX_LOG, note, note_len);
	for (int i = 0; i < k; i++)
		free(envp[i]);
	if (close(fd) < 0 && ok >= 0)
		ok = xp_errf(err, "writing the log %s: %s", path, strerror(errno));
	return ok;
}

int xp_validate_run(struct xp_store *s, const char *kase, const char *env, int layer, const char *node,
		    double timeout_s, const char *log_dir, struct xp_err *err)
{
	if (layer < 0 || layer >= XP_LAYER_COUNT)
		return xp_errf(err, "unknown layer %d", layer);
	if (!(timeout_s > 0))
		return xp_errf(err, "the timeout must be more than 0 seconds");
	if (!known(log_dir))
		return xp_errf(err, "no log directory given");
	if (xpv_check_text("node", node, FIELD_MAX, false, err) < 0)
		return -1;
	struct xp_case c;
	if (xp_validate_case_get(s, kase, &c, err) < 0)
		return -1;
	char *id = NULL, *prog = NULL, *path = NULL;
	int fd = -1, rc = run_preflight(s, &c, kase, env, layer, &id, &prog, err);
	if (rc == 0 && make_dirs(log_dir, err) < 0)
		rc = -1;
	if (rc == 0 && (fd = open_log(log_dir, kase, id, time(NULL), &path, err)) < 0)
		rc = -1;
	char note[160] = "";
	int ok = 0;
	if (rc == 0 && (ok = run_probe(prog, c.entry, kase, id, layer, node, fd, path, timeout_s, note, sizeof note,
				       err)) < 0)
		rc = -1;
	if (rc == 0)
		rc = xp_validate_record(s, id, kase, layer, ok ? XP_V_PASS : XP_V_FAIL, note, path, node, err);
	xp_case_clear(&c);
	free(id);
	free(prog);
	free(path);
	return rc;
}
