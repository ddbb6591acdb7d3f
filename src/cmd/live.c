/* live.c: the console's source, loaded again and again. */
#include "live.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "agent_client.h"
#include "agent_ctl.h"
#include "k8s_config.h"
#include "k8s_watch.h"

/* What says a file changed without reading it: its identity, size and modification time
 * (all zero when it does not exist). A rewrite in place changes the time, a rename the inode. */
struct file_sig {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

static struct file_sig file_sig_of(const char *path)
{
	struct stat st;
	struct file_sig f = {0};
	if (path && stat(path, &st) == 0)
		f = (struct file_sig){st.st_dev, st.st_ino, st.st_size, st.st_mtim};
	return f;
}

static bool file_sig_eq(const struct file_sig *a, const struct file_sig *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
	       a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* The snapshot's, the database's and its WAL's signatures. */
static void sigs_of(const char *snapshot, const char *db, struct file_sig sig[3])
{
	char *wal = db ? xp_asprintf("%s-wal", db) : NULL;
	sig[0] = file_sig_of(snapshot);
	sig[1] = file_sig_of(db);
	sig[2] = file_sig_of(wal);
	free(wal);
}

static bool sigs_eq(const struct file_sig a[3], const struct file_sig b[3])
{
	return file_sig_eq(&a[0], &b[0]) && file_sig_eq(&a[1], &b[1]) && file_sig_eq(&a[2], &b[2]);
}

/* How old a file's modification time must be, at the start of a load, for its signature to
 * be trusted: a file's clock ticks coarsely (a kernel tick, a whole second on some file
 * systems, two on FAT), so a same-size rewrite in the tick of the load would keep the
 * signature the load saw. Until then each refresh reads the file again. */
#define XP_LIVE_SETTLE_S 2

static bool sigs_settled(const struct file_sig sig[3], const struct timespec *start)
{
	for (int i = 0; i < 3; i++)
		if (sig[i].ino && sig[i].mtime.tv_sec + XP_LIVE_SETTLE_S > start->tv_sec)
			return false;
	return true;
}

struct xp_live {
	const atomic_bool *cancel;
	pthread_mutex_t mu;          /* guards pool (the pointer) for xp_live_wake */
	struct xp_agent_pool *pool;
	bool need_pool;              /* build the pool from the options at the next load */
	uint64_t last_gen;           /* the pool's generation at the last cluster built */
	char **pending;              /* `:agent` changes waiting for an agent list that loads */
	size_t n_pending, cap_pending;
	char **log;                  /* failed `:agent` changes, for the event log */
	size_t n_log, cap_log;
	struct file_sig base_sig[3]; /* the snapshot, the database and its WAL at the last load */
	bool have_sig;               /* base_sig describes the cluster last returned */
	struct xp_k8s_watch *kw;     /* --k8s: Nodes and Pods kept across loads, read by watches */
	char *kw_key;                /* the options kw was made for */
	bool kw_built;               /* the cluster last returned was built from kw as it is */
	struct xp_live_health health;
	double cycle_s;              /* the pool's cycle (xp_live_set_cycle), 0 for none */
};

struct xp_live *xp_live_new(const atomic_bool *cancel)
{
	struct xp_live *l = xp_calloc(1, sizeof *l);
	l->cancel = cancel;
	l->need_pool = true;
	pthread_mutex_init(&l->mu, NULL);
	return l;
}

static void set_pool(struct xp_live *l, struct xp_agent_pool *pool)
{
	pthread_mutex_lock(&l->mu);
	struct xp_agent_pool *old = l->pool;
	l->pool = pool;
	pthread_mutex_unlock(&l->mu);
	/* A console that starts late still sees the agents' recent past (taken once per agent). */
	if (pool) {
		xp_agent_pool_want_history(pool, XP_AGENT_HISTORY_ASK_S);
		xp_agent_pool_set_cycle(pool, l->cycle_s);
	}
	xp_agent_pool_free(old);
}

void xp_live_set_cycle(struct xp_live *l, double cycle_s)
{
	l->cycle_s = cycle_s;
	if (l->pool)
		xp_agent_pool_set_cycle(l->pool, cycle_s);
}

bool xp_live_pump(struct xp_live *l, double secs)
{
	return l->pool && xp_agent_pool_pump(l->pool, secs);
}

void xp_live_free(struct xp_live *l)
{
	if (!l)
		return;
	xp_agent_pool_free(l->pool);
	xp_k8s_watch_free(l->kw);
	free(l->kw_key);
	xp_strv_free(l->pending, l->n_pending);
	xp_strv_free(l->log, l->n_log);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

void xp_live_reset(struct xp_live *l)
{
	l->need_pool = true;
	l->have_sig = false;
}

static void log_line(struct xp_live *l, char *line)
{
	xp_grow(&l->log, sizeof *l->log, l->n_log, &l->cap_log);
	l->log[l->n_log++] = line;
}

/* Applies `:agent add|rm` (the pool made on the first add, as the options would make it). */
static void apply_ops(struct xp_live *l, const struct xp_source_opts *so, char **ops, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *url = ops[i] + 1;
		struct xp_err err = {{0}};
		if (!l->pool) {
			struct xp_source_opts none = *so;
			none.agents = NULL;
			none.agents_file = NULL;
			struct xp_agent_pool *p = xp_source_agent_pool(&none, &err);
			if (!p) { /* cannot happen without agent options; said rather than assumed */
				log_line(l, xp_asprintf("agent: %s", err.msg));
				continue;
			}
			xp_agent_pool_set_cancel(p, l->cancel);
			set_pool(l, p);
		}
		if (ops[i][0] == '+') {
			if (xp_agent_pool_add(l->pool, url, so->agent_token, &err) < 0)
				log_line(l, xp_asprintf("agent add: %s", err.msg));
		} else if (xp_agent_pool_remove(l->pool, url) < 0) {
			log_line(l, xp_asprintf("agent rm: %s is not an agent of this console", url));
		}
	}
}

/* --k8s: the kept state made (again when the options changed), then one poll: a list the
 * first time, a watch window of Nodes and Pods after. -1 with err set; *changed: an object
 * changed. The health follows. */
static int k8s_poll(struct xp_live *l, const struct xp_source_opts *so, bool *changed, struct xp_err *err)
{
	snprintf(l->health.engine, sizeof l->health.engine, "k8s");
	char *key = xp_asprintf("%s\n%s\n%s\n", so->k8s_server ? so->k8s_server : "",
				so->k8s_token_file ? so->k8s_token_file : "", so->k8s_ca ? so->k8s_ca : "");
	if (!l->kw || strcmp(key, l->kw_key)) {
		xp_k8s_watch_free(l->kw);
		l->kw = NULL;
		l->kw_built = false;
		free(l->kw_key);
		l->kw_key = NULL;
		struct xp_k8s_opts ko = {.server = so->k8s_server, .token_file = so->k8s_token_file, .ca_file = so->k8s_ca};
		struct xp_k8s_conf conf;
		if (xp_k8s_conf_load(&ko, &conf, err) < 0) {
			free(key);
			l->health.ok = false;
			snprintf(l->health.error, sizeof l->health.error, "%.500s", err->msg);
			return -1;
		}
		/* Each refresh reads a short window of each watch: the server is asked to end it
		 * within 5 s, and it ends 300 ms after the last bytes (the server sends what it holds
		 * at once), so a refresh waits well under a second when nothing is happening. */
		struct xp_k8s_watch_opts wo = {.timeout_s = 5, .idle_ms = 300, .cancel = l->cancel};
		l->kw = xp_k8s_watch_new(xp_k8s_client_new(&conf, NULL), &wo);
		l->kw_key = key;
	} else
		free(key);
	int rc = xp_k8s_watch_poll(l->kw, changed, err);
	struct xp_k8s_watch_health h;
	xp_k8s_watch_health(l->kw, &h);
	l->health.ok = h.ok;
	l->health.listed = h.listed;
	l->health.lists = h.lists;
	l->health.watches = h.watches;
	snprintf(l->health.state, sizeof l->health.state, "%s", h.state);
	snprintf(l->health.error, sizeof l->health.error, "%s", h.error);
	if (rc < 0)
		l->kw_built = false;
	return rc;
}

struct xp_cluster *xp_live_load(struct xp_live *l, const struct xp_source_opts *so, const char *db, char **ops,
				size_t n_ops, bool force, bool *unchanged, struct xp_err *err)
{
	*unchanged = false;
	for (size_t i = 0; i < n_ops; i++) {
		xp_grow(&l->pending, sizeof *l->pending, l->n_pending, &l->cap_pending);
		l->pending[l->n_pending++] = ops[i];
	}
	free(ops);
	if (l->need_pool) {
		set_pool(l, NULL);
		l->last_gen = 0;
		if (xp_source_has_agents(so)) {
			struct xp_agent_pool *p = xp_source_agent_pool(so, err);
			if (!p)
				return NULL; /* the `:agent` changes wait for a list that loads */
			xp_agent_pool_set_cancel(p, l->cancel);
			set_pool(l, p);
		}
		l->need_pool = false;
	}
	apply_ops(l, so, l->pending, l->n_pending);
	xp_strv_free(l->pending, l->n_pending);
	l->pending = NULL;
	l->n_pending = l->cap_pending = 0;
	bool agents_same = true;
	if (l->pool) {
		xp_agent_pool_poll(l->pool, force);
		/* Only agents, all answering 304 and none down: nothing to parse or copy. This is
		 * what keeps a console over hundreds of agents cheap. */
		size_t down = 0;
		xp_agent_pool_counts(l->pool, NULL, &down);
		agents_same = xp_agent_pool_generation(l->pool) == l->last_gen && !down;
		if (!xp_source_has_base(so) && agents_same) {
			*unchanged = true;
			return NULL;
		}
	}
	struct xp_source_opts own = *so;
	/* Kubernetes is watched beside a replay or a snapshot of the same machines too (their
	 * hardware joins its nodes: source.c). */
	bool k8s = xp_source_has_k8s(so) && !so->slurm;
	if (so->slurm && strcmp(l->health.engine, "slurm"))
		l->health = (struct xp_live_health){.engine = "slurm"};
	else if (!so->slurm && !k8s)
		l->health = (struct xp_live_health){0}; /* no engine (any more): no health */
	if (k8s) {
		bool changed;
		if (k8s_poll(l, so, &changed, err) < 0)
			return NULL;
		if (!changed && !force && agents_same && l->kw_built && !so->inventory && !so->replay) {
			/* No event changed a kept object: the cluster shown is current. */
			*unchanged = true;
			return NULL;
		}
		own.k8s_watch = l->kw;
		so = &own;
	}
	/* A snapshot file is read again only when it, or the database whose baselines its ECU
	 * figures take, changed since the last load (or on a forced refresh): a console left on
	 * a file that never changes parses it once. */
	struct file_sig sig[3] = {{0}};
	struct timespec start;
	clock_gettime(CLOCK_REALTIME, &start);
	bool file_only = so->inventory && !so->topology && !so->replay && !k8s;
	if (file_only) {
		sigs_of(so->inventory, db, sig);
		if (!force && agents_same && l->have_sig && sigs_eq(sig, l->base_sig)) {
			*unchanged = true;
			return NULL;
		}
	}
	struct xp_cluster *c = xp_source_load_all(so, db, l->pool, err);
	if (c && l->pool)
		l->last_gen = xp_agent_pool_generation(l->pool);
	l->kw_built = c && so->k8s_watch;
	if (so->slurm) {
		/* Slurm is read whole each time: its health is whether that worked, and when. */
		l->health.ok = c != NULL;
		if (c)
			l->health.listed = time(NULL), l->health.error[0] = '\0';
		else
			snprintf(l->health.error, sizeof l->health.error, "%.500s", err->msg);
	}
	/* Kept only when nothing moved while it was read (sqlite may make the WAL on the first
	 * open) and nothing was written too recently to tell (XP_LIVE_SETTLE_S): otherwise the
	 * next load reads again rather than miss a change. */
	struct file_sig after[3] = {{0}};
	if (file_only)
		sigs_of(so->inventory, db, after);
	l->have_sig = c && file_only && sigs_eq(sig, after) && sigs_settled(sig, &start);
	memcpy(l->base_sig, sig, sizeof sig);
	return c;
}

int xp_live_url_check(const char *url, struct xp_err *err)
{
	return xp_agent_url_check(url, err);
}

void xp_live_wake(struct xp_live *l)
{
	pthread_mutex_lock(&l->mu);
	if (l->pool)
		xp_agent_pool_wake(l->pool);
	pthread_mutex_unlock(&l->mu);
}

bool xp_live_agent_counts(const struct xp_live *l, size_t *up, size_t *down)
{
	*up = *down = 0;
	if (!l->pool)
		return false;
	xp_agent_pool_counts(l->pool, up, down);
	return true;
}

bool xp_live_agent_work(const struct xp_live *l, uint64_t *decoded, uint64_t *built)
{
	*decoded = *built = 0;
	if (!l->pool)
		return false;
	xp_agent_pool_work(l->pool, decoded, built);
	return true;
}

size_t xp_live_agent_snaps(const struct xp_live *l, struct xp_agent_snap **out)
{
	*out = NULL;
	size_t n = l->pool ? xp_agent_pool_size(l->pool) : 0;
	if (!n)
		return 0;
	*out = xp_calloc(n, sizeof **out);
	for (size_t i = 0; i < n; i++) {
		struct xp_agent_status st;
		xp_agent_pool_status(l->pool, i, &st);
		(*out)[i] = (struct xp_agent_snap){
			.url = xp_strdup(st.url), .node = xp_strdup(st.node), .error = xp_strdup(st.error),
			.up = st.up, .ever = st.ever, .last_ok = st.last_ok, .latency_ms = st.latency_ms,
			.skew_s = st.skew_s, .have_skew = st.have_skew, .fails = st.fails, .polls = st.polls,
			.not_modified = st.not_modified, .rejected = st.rejected,
		};
	}
	return n;
}

struct xp_agent_snap *xp_agent_snaps_copy(const struct xp_agent_snap *s, size_t n)
{
	if (!n)
		return NULL;
	struct xp_agent_snap *d = xp_calloc(n, sizeof *d);
	for (size_t i = 0; i < n; i++) {
		d[i] = s[i];
		d[i].url = xp_strdup(s[i].url);
		d[i].node = xp_strdup(s[i].node);
		d[i].error = xp_strdup(s[i].error);
	}
	return d;
}

void xp_agent_snaps_free(struct xp_agent_snap *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(s[i].url);
		free(s[i].node);
		free(s[i].error);
	}
	free(s);
}

char *xp_live_agent_list(const struct xp_live *l)
{
	if (!l->pool)
		return NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	xp_agent_list_print(l->pool, f, false, time(NULL));
	fclose(f);
	return text;
}

struct xp_hist_batch *xp_live_take_history(struct xp_live *l, size_t *n)
{
	*n = 0;
	return l->pool ? xp_agent_pool_take_history(l->pool, n) : NULL;
}

char **xp_live_take_log(struct xp_live *l, size_t *n)
{
	size_t np = 0;
	char **pl = l->pool ? xp_agent_pool_take_log(l->pool, &np) : NULL;
	for (size_t i = 0; i < np; i++)
		log_line(l, pl[i]);
	free(pl);
	char **out = l->log;
	*n = l->n_log;
	l->log = NULL;
	l->n_log = l->cap_log = 0;
	return out;
}

bool xp_live_health(const struct xp_live *l, struct xp_live_health *h)
{
	*h = l->health;
	return l->health.engine[0] != '\0';
}

/* "12s", "3m", "5h", "2d": an age that fits a header. */
static void age_words(long s, char *buf, size_t len)
{
	if (s < 0)
		s = 0;
	if (s < 100)
		snprintf(buf, len, "%lds", s);
	else if (s < 100 * 60)
		snprintf(buf, len, "%ldm", s / 60);
	else if (s < 48 * 3600)
		snprintf(buf, len, "%ldh", s / 3600);
	else
		snprintf(buf, len, "%ldd", s / 86400);
}

void xp_live_health_words(const struct xp_live_health *h, time_t now, char *buf, size_t len)
{
	char age[48] = "";
	bool slurm = !strcmp(h->engine, "slurm");
	if (h->listed) {
		char a[24];
		age_words((long)(now - h->listed), a, sizeof a);
		snprintf(age, sizeof age, "%s %s ago", slurm ? "read" : "listed", a);
	}
	if (!h->ok)
		/* The error first: on a narrow line the age is what gives way. */
		snprintf(buf, len, "failed: %s%s%s", h->error[0] ? h->error : "not read yet", age[0] ? "; " : "", age);
	else if (slurm || !h->state[0] || !strcmp(h->state, "listed"))
		snprintf(buf, len, "%s", age[0] ? age : "not read yet");
	else
		snprintf(buf, len, "%s, %s", h->state, age);
}
