/* slurm_compare.c: sbatch --test-only asked and its answer read (slurm_compare.h). The
 * message formats are Slurm 22.05's, recorded in tests/fixtures/slurm/sbatch-test-only.txt. */
#include "slurm_compare.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"
#include "slurm.h"

/* sbatch --test-only prints a few lines; more is not an answer. */
#define MAX_OUTPUT ((size_t)64 << 10)

void xp_slurm_answer_clear(struct xp_slurm_answer *a)
{
	free(a->nodelist);
	for (size_t i = 0; i < a->n_nodes; i++)
		free(a->nodes[i]);
	free(a->nodes);
	free(a->partition);
	free(a->error);
	memset(a, 0, sizeof *a);
}

/* The names expanded so far: grown by doubling, since one range may give 100,000. */
struct names {
	char **v;
	size_t n, cap;
};

static void push(struct names *l, char *s)
{
	xp_grow(&l->v, sizeof *l->v, l->n, &l->cap);
	l->v[l->n++] = s;
}

/* A character of a node name: what Slurm's hostnames hold. */
static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

/* Expands one name with at most one bracket: prefix[ranges]suffix. */
static int expand_one(const char *s, size_t len, struct names *l, struct xp_err *err)
{
	const char *open = memchr(s, '[', len);
	if (!open) {
		for (size_t i = 0; i < len; i++)
			if (!name_char(s[i]))
				return xp_errf(err, "hostlist: '%.*s' is not a node name", (int)len, s);
		if (!len)
			return xp_errf(err, "hostlist: an empty name");
		push(l, xp_strndup(s, len));
		return 0;
	}
	const char *close = memchr(open, ']', len - (size_t)(open - s));
	if (!close)
		return xp_errf(err, "hostlist: '%.*s' has no ']'", (int)len, s);
	size_t plen = (size_t)(open - s), slen = len - (size_t)(close + 1 - s);
	const char *suffix = close + 1;
	for (size_t i = 0; i < plen; i++)
		if (!name_char(s[i]))
			return xp_errf(err, "hostlist: '%.*s' is not a node name", (int)len, s);
	for (size_t i = 0; i < slen; i++)
		if (!name_char(suffix[i]))
			return xp_errf(err, "hostlist: '%.*s': more than one bracket, or not a node name", (int)len, s);
	/* The ranges: "01-03,7": a number keeps the width its low bound was written with. */
	const char *p = open + 1;
	if (p == close)
		return xp_errf(err, "hostlist: '%.*s': empty brackets", (int)len, s);
	while (p < close) {
		const char *lo = p;
		while (p < close && isdigit((unsigned char)*p))
			p++;
		size_t width = (size_t)(p - lo);
		if (!width || width > 9)
			return xp_errf(err, "hostlist: '%.*s': a range bound is not a number of 1 to 9 digits", (int)len, s);
		long a = strtol(lo, NULL, 10), b = a;
		if (p < close && *p == '-') {
			const char *hi = ++p;
			while (p < close && isdigit((unsigned char)*p))
				p++;
			if (p == hi || p - hi > 9)
				return xp_errf(err, "hostlist: '%.*s': a range bound is not a number of 1 to 9 digits",
					       (int)len, s);
			b = strtol(hi, NULL, 10);
		}
		if (b < a)
			return xp_errf(err, "hostlist: '%.*s': a range runs backwards", (int)len, s);
		if (p < close && *p != ',')
			return xp_errf(err, "hostlist: '%.*s': '%c' in a range", (int)len, s, *p);
		if (p < close)
			p++;
		if ((size_t)(b - a) >= XP_SLURM_MAX_HOSTS || l->n + (size_t)(b - a) >= XP_SLURM_MAX_HOSTS)
			return xp_errf(err, "hostlist: more than %d nodes", XP_SLURM_MAX_HOSTS);
		for (long k = a; k <= b; k++)
			push(l, xp_asprintf("%.*s%0*ld%.*s", (int)plen, s, (int)width, k, (int)slen, suffix));
	}
	return 0;
}

int xp_slurm_hostlist(const char *expr, char ***nodes, size_t *n, struct xp_err *err)
{
	struct names l = {0};
	int rc = 0;
	const char *s = expr;
	if (!*s)
		rc = xp_errf(err, "hostlist: empty");
	while (rc == 0 && *s) {
		/* A top-level comma ends a name; one inside brackets separates ranges. */
		const char *e = s;
		int depth = 0;
		while (*e && (depth || *e != ',')) {
			if (*e == '[' && ++depth > 1)
				break;
			if (*e == ']' && --depth < 0)
				break;
			e++;
		}
		if (depth < 0 || depth > 1)
			rc = xp_errf(err, "hostlist: '%s': unbalanced brackets", expr);
		else
			rc = expand_one(s, (size_t)(e - s), &l, err);
		s = *e ? e + 1 : e;
		if (rc == 0 && e[0] == ',' && !*s)
			rc = xp_errf(err, "hostlist: '%s' ends with a comma", expr);
	}
	if (rc < 0) {
		for (size_t i = 0; i < l.n; i++)
			free(l.v[i]);
		free(l.v);
		return -1;
	}
	*nodes = l.v;
	*n = l.n;
	return 0;
}

/* A copy of s without control bytes (a refusal is shown to a terminal). */
static char *clean(const char *s, size_t n)
{
	char *r = xp_malloc(n + 1);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!iscntrl((unsigned char)s[i]))
			r[k++] = s[i];
	r[k] = 0;
	return r;
}

/* Digits only, at most max of them, into *v. */
static bool number(const char *s, size_t max, unsigned long long *v)
{
	size_t n = strlen(s);
	if (!n || n > max || strspn(s, "0123456789") != n)
		return false;
	*v = strtoull(s, NULL, 10);
	return true;
}

/* Parses a will-run line, "Job N to start at T using P processors on nodes X in partition Q"
 * or (a heterogeneous job) "Job N to start at T using P processors on X", into a. */
static int will_run(char *line, struct xp_slurm_answer *a, struct xp_err *err)
{
	char *tok[16];
	size_t nt = 0;
	char *save = NULL;
	for (char *t = strtok_r(line, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (nt == sizeof tok / sizeof tok[0])
			return xp_errf(err, "a will-run line with too many words");
		tok[nt++] = t;
	}
	bool het = nt == 11;
	if ((nt != 15 && !het) || strcmp(tok[0], "Job") || strcmp(tok[2], "to") || strcmp(tok[3], "start") ||
	    strcmp(tok[4], "at") || strcmp(tok[6], "using") || strcmp(tok[8], "processors") || strcmp(tok[9], "on") ||
	    (!het && (strcmp(tok[10], "nodes") || strcmp(tok[12], "in") || strcmp(tok[13], "partition"))))
		return xp_errf(err, "not Slurm's will-run line (Job N to start at T using P processors on nodes X "
				    "in partition Q)");
	unsigned long long id, procs;
	if (!number(tok[1], 18, &id) || !number(tok[7], 9, &procs))
		return xp_errf(err, "a job id or processor count that is not a number");
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	const char *end = strptime(tok[5], "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end || *end || strlen(tok[5]) >= sizeof a->start_text)
		return xp_errf(err, "start time '%.40s' is not YYYY-MM-DDTHH:MM:SS", tok[5]);
	const char *hosts = tok[het ? 10 : 11];
	if (xp_slurm_hostlist(hosts, &a->nodes, &a->n_nodes, err) < 0)
		return -1;
	if (!het) {
		const char *q = tok[14];
		for (const char *c = q; *c; c++)
			if (!name_char(*c)) {
				xp_slurm_answer_clear(a);
				return xp_errf(err, "partition '%.40s' is not a name", q);
			}
		a->partition = xp_strdup(q);
	}
	a->will_run = true;
	a->job_id = (long long)id;
	a->procs = (unsigned)procs;
	a->start = timegm(&tm);
	snprintf(a->start_text, sizeof a->start_text, "%s", tok[5]);
	a->nodelist = xp_strdup(hosts);
	return 0;
}

/* s with prefix removed, or NULL when it does not start with it. */
static const char *after(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

int xp_slurm_parse_test_only(const char *text, size_t len, int status, struct xp_slurm_answer *a,
			     struct xp_err *err)
{
	memset(a, 0, sizeof *a);
	if (memchr(text, 0, len))
		return xp_errf(err, "sbatch --test-only: a NUL byte in its answer");
	char *copy = xp_strndup(text, len), *save = NULL;
	char *failure = NULL, *first_error = NULL, *last = NULL;
	int rc = 0;
	size_t answers = 0;
	for (char *line = strtok_r(copy, "\n", &save); line && rc == 0; line = strtok_r(NULL, "\n", &save)) {
		size_t n = strlen(line);
		if (n && line[n - 1] == '\r')
			line[--n] = 0;
		if (!n)
			continue;
		last = line;
		const char *body = after(line, "sbatch: ");
		const char *x;
		if (body && (x = after(body, "Job ")) && strstr(x, " to start at ")) {
			if (status != 0 || answers++) {
				rc = xp_errf(err, status ? "a will-run line with exit status %d" : "two will-run lines", status);
				break;
			}
			char *w = xp_strdup(body);
			rc = will_run(w, a, err);
			free(w);
		} else if ((x = after(line, "allocation failure: ")) && !failure)
			failure = clean(x, strlen(x));
		else if (body && (x = after(body, "error: ")) && !first_error)
			first_error = clean(x, strlen(x));
	}
	if (rc == 0 && status == 0 && !answers)
		rc = xp_errf(err, "no will-run line (Job N to start at ...) with exit status 0");
	if (rc == 0 && status != 0) {
		/* A refusal: Slurm's own reason, the allocation failure's before a first error's. */
		a->error = failure ? failure : first_error ? first_error : last ? clean(last, strlen(last))
							       : xp_asprintf("exit status %d, nothing said", status);
		if (a->error == failure)
			failure = NULL;
		else if (a->error == first_error)
			first_error = NULL;
		if (!a->error[0]) {
			free(a->error);
			a->error = xp_asprintf("exit status %d, nothing said", status);
		}
	}
	free(failure);
	free(first_error);
	free(copy);
	if (rc < 0) {
		xp_slurm_answer_clear(a);
		xp_err_prefix(err, "sbatch --test-only");
	}
	return rc;
}

bool xp_slurm_starts_now(const struct xp_slurm_answer *a, time_t asked)
{
	return a->will_run && a->start <= asked + XP_SLURM_NOW_SLACK_S;
}

char *xp_slurm_request(const char *export)
{
	size_t n = strlen(export);
	char *r = xp_malloc(n + 1), *w = r;
	for (const char *s = export; *s;) {
		const char *e = strchr(s, '\n');
		size_t l = e ? (size_t)(e - s) + 1 : strlen(s);
		if (strncmp(s, "#SBATCH --nodelist=", 19) != 0) {
			memcpy(w, s, l);
			w += l;
		}
		s += l;
	}
	*w = 0;
	return r;
}

/* The scripts sbatch is reading now: a console that quits while a question to Slurm runs on
 * its own thread (view 3) must not leave them behind. */
#define MAX_LIVE 64
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static char *live[MAX_LIVE];
static bool live_hooked;

void xp_slurm_test_only_clean(void)
{
	pthread_mutex_lock(&live_mu);
	for (int i = 0; i < MAX_LIVE; i++)
		if (live[i])
			unlink(live[i]);
	pthread_mutex_unlock(&live_mu);
}

/* Records path (held, not copied) as live, or forgets it (on false). */
static void live_set(char *path, bool on)
{
	pthread_mutex_lock(&live_mu);
	if (!live_hooked)
		live_hooked = atexit(xp_slurm_test_only_clean) == 0;
	for (int i = 0; i < MAX_LIVE; i++)
		if (on ? !live[i] : live[i] == path) {
			live[i] = on ? path : NULL;
			break;
		}
	pthread_mutex_unlock(&live_mu);
}

int xp_slurm_test_only(const char *conf, const char *script, struct xp_slurm_answer *a, time_t *asked,
		       struct xp_err *err)
{
	memset(a, 0, sizeof *a);
	const char *dir = getenv("TMPDIR");
	char *path = xp_asprintf("%s/xpool-sbatch.XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0) {
		xp_errf(err, "slurm: a temporary file for the sbatch script: %s", strerror(errno));
		free(path);
		return -1;
	}
	live_set(path, true);
	size_t len = strlen(script);
	FILE *f = fdopen(fd, "w");
	bool ok = f && fwrite(script, 1, len, f) == len;
	if (f ? fclose(f) != 0 : close(fd) != 0)
		ok = false;
	if (!ok) {
		xp_errf(err, "slurm: could not write the sbatch script %s", path);
		unlink(path);
		live_set(path, false);
		free(path);
		return -1;
	}
	/* The client's own configuration: the caller's SLURM_CONF when set (see xp_slurm_load).
	 * TZ=UTC: the start time is printed in the client's zone, read back here as UTC. */
	char *setting;
	if (xp_slurm_conf_setting(conf, &setting, err) < 0) {
		unlink(path);
		live_set(path, false);
		free(path);
		return -1;
	}
	const char *env[] = {"TZ=UTC", setting, NULL};
	const char *argv[] = {"sbatch", "--test-only", path, NULL};
	char *out = NULL, msg[512];
	size_t n = 0;
	int status = 0;
	*asked = time(NULL);
	int rc = xp_run_tool_answer(argv, env, 30.0, MAX_OUTPUT, &out, &n, &status, msg, sizeof msg);
	unlink(path);
	live_set(path, false);
	free(path);
	free(setting);
	if (rc < 0)
		return xp_errf(err, "slurm: %s (sbatch --test-only)", msg);
	rc = xp_slurm_parse_test_only(out, n, status, a, err);
	free(out);
	if (rc < 0)
		xp_err_prefix(err, "slurm");
	return rc;
}
