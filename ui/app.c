/* app.c: the console: the frame (header, tabs, status line), the key loop, the
 * `/` filter, the `:` prompt and its output pane, the `?` overlay, and the
 * refresh thread that reads the data source off the drawing path. */
#include <errno.h>
#include <locale.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <stdint.h>
#include <unistd.h>

#include "app_history.h"
#include "draw.h"
#include "filter_cache.h"
#include "format.h"
#include "jobrun.h"
#include "layout.h"
#include "poller.h"
#include "prompt.h"
#include "source.h"
#include "store_open.h"
#include "theme.h"
#include "ui.h"
#include "view.h"
#include "words.h"

#define XP_VIEW(name) extern const struct xp_view xp_view_##name;
#include "views.inc"
#undef XP_VIEW

static const struct xp_view *const all_views[] = {
#define XP_VIEW(name) &xp_view_##name,
#include "views.inc"
#undef XP_VIEW
};
#define N_VIEWS (sizeof all_views / sizeof all_views[0])

/* Keys every view shares, for the `?` overlay. */
static const struct xp_view_key global_keys[] = {
	{"1-9  Tab  Shift-Tab", "switch view"},
	{"/", "filter (Enter keeps it, Esc clears it)"},
	{":", "command prompt (Tab completes, Up/Down history)"},
	{"r", "refresh the data now"},
	{"Z", "pause the display (refresh goes on behind; Z again shows the newest)"},
	{"?", "this help"},
	{"q  :q  Ctrl-C", "quit"},
	{NULL, NULL},
};

#define EVENT_LOG_CAP 10000
#define MSG_SECONDS 8 /* how long a status message stays */

struct slot {
	const struct xp_view *v;
	void *st;
};

struct xp_ui {
	struct xp_ctx *ctx;
	const struct xp_glyphs *g;
	struct xp_theme theme;
	bool colour;
	struct slot views[N_VIEWS];
	size_t nviews, cur;
	struct xp_layout lay;
	struct xp_tab_pos tabs[N_VIEWS];
	int ntabs;
	/* the `/` filter */
	char filter[256];
	bool filtering;
	struct xp_filter_cache *fcache; /* the filter compiled per kind of row */
	/* the `:` prompt and what its commands printed */
	struct xp_prompt *prompt;
	char **out_lines;
	size_t n_out;
	int out_top;
	bool out_open, out_err;
	bool help_open;
	int help_top;
	/* status line message */
	char msg[512];
	int msg_role;
	time_t msg_time;
	struct xp_event_log events;
	struct xp_cluster empty;       /* shown until the first load */
	time_t last_ok;                /* when data last arrived */
	char load_error[1024];
	bool loaded;
	struct xp_poller *poll;        /* the refresh thread (its own allocation, see xp_poller_new) */
	bool dirty;
	bool paused;                   /* Z: the data shown stays; the poller's news waits for Z again */
	/* Header figures, counted once per new cluster rather than on every frame. */
	struct xp_store *store;        /* opened on first use */
	bool store_failed;
	bool store_standin;            /* store is the empty in-memory stand-in: no file yet */
	int64_t audit_seen;            /* audit rows up to this id are in the event log */
	bool audit_started;
	const struct xp_cluster *counted;
	uint64_t counted_gen;
	/* While views hear of a refresh (views_data_changed): the cluster it replaced, its
	 * generation, and the positions whose node is not the same; valid only then. */
	struct xp_ui_moved moved;
	bool moved_valid;
	size_t health[XP_HEALTH_COUNT], devices;
	struct xp_history *history;    /* every device's recent past (app_history.h); fed here */
	bool history_loaded;           /* the store's samples are in it */
	/* Acknowledged problems (xp_ui_acks): read again when acks_stale; acks_gen counts reads. */
	struct xp_acks acks;
	bool acks_stale;
	uint64_t acks_gen;
	time_t acks_next_end;          /* the next snooze to end after the last count, 0 none */
};

static volatile sig_atomic_t quit_signal;

static void on_quit_signal(int sig)
{
	(void)sig;
	quit_signal = 1;
}

/* ---- accessors for views ---- */

const struct xp_cluster *xp_ui_cluster(const struct xp_ui *ui)
{
	return ui->ctx->cluster ? ui->ctx->cluster : &ui->empty;
}

bool xp_ui_moved(const struct xp_ui *ui, struct xp_ui_moved *m)
{
	if (!ui->moved_valid)
		return false;
	*m = ui->moved;
	return true;
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
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ui->msg, sizeof ui->msg, fmt, ap);
	va_end(ap);
	/* One line only: a newline would break the status row. */
	for (char *p = ui->msg; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	ui->msg_role = role;
	ui->msg_time = time(NULL);
	ui->dirty = true;
}

struct xp_history *xp_ui_history(const struct xp_ui *ui)
{
	return ui->history;
}

struct xp_store *xp_ui_store(struct xp_ui *ui)
{
	/* The console looks: read-only, and while there is no database an empty stand-in in
	 * memory, until a command or a live source records something and makes the file. */
	if (ui->store && ui->store_standin && xp_store_for_reading_exists(ui->ctx->db)) {
		xp_store_close(ui->store);
		ui->store = NULL;
		ui->audit_started = false;
	}
	if (!ui->store && !ui->store_failed) {
		struct xp_err err = {{0}};
		ui->store = xp_store_for_reading(ui->ctx->db, &ui->store_standin, &err);
		if (!ui->store) {
			/* Say it once; the views that need the database say what is missing. */
			ui->store_failed = true;
			xp_ui_message(ui, XP_ROLE_FAIL, "database: %s", err.msg);
		}
	}
	return ui->store;
}

int xp_ui_sync(struct xp_ui *ui, const struct xp_cluster *c, struct xp_err *err)
{
	return xp_sync_if_changed(ui->ctx->db, xp_ui_store(ui), c, 0, err);
}

bool xp_ui_matches(const struct xp_ui *ui, const char *text)
{
	return xp_filter_eval(xp_filter_cache_get(ui->fcache, NULL), NULL, NULL, text);
}

const struct xp_filter *xp_ui_filter_expr(const struct xp_ui *ui, const struct xp_filter_field *fields)
{
	return xp_filter_cache_get(ui->fcache, fields);
}

/* Why the filter does not parse for the rows of the view shown, or NULL. */
static const char *filter_error(struct xp_ui *ui)
{
	const struct slot *s = &ui->views[ui->cur];
	return ui->filter[0] ? xp_filter_cache_error(ui->fcache, s->v->filter_fields) : NULL;
}

const struct xp_acks *xp_ui_acks(struct xp_ui *ui, uint64_t *gen)
{
	if (ui->acks_stale) {
		ui->acks_stale = false;
		xp_acks_free(&ui->acks);
		struct xp_store *s = xp_ui_store(ui);
		struct xp_err err = {{0}};
		if (s && xp_acks_load(s, &ui->acks, &err) < 0)
			xp_ui_message(ui, XP_ROLE_FAIL, "database: %s", err.msg);
		ui->acks_gen++;
		/* The header's counts leave acknowledged devices out: count again. */
		ui->counted = NULL;
	}
	if (gen)
		*gen = ui->acks_gen;
	return &ui->acks;
}

bool xp_ui_agent_snaps(struct xp_ui *ui, uint64_t *gen, struct xp_agent_snap **out, size_t *n)
{
	return xp_poller_agent_snaps(ui->poll, gen, out, n);
}

time_t xp_ui_now(void)
{
	int64_t now;
	struct xp_err err = {{0}};
	return xp_jobrun_now(&now, &err) < 0 ? time(NULL) : (time_t)now;
}

/* The event log's quiet hook: an acknowledged problem is logged as info, not as a warning. */
static bool problem_quiet(const struct xp_problem *p, void *arg)
{
	struct xp_ui *ui = arg;
	return xp_ack_state(xp_ui_acks(ui, NULL), p, xp_ui_now(), NULL) != XP_ACK_OPEN;
}

static void switch_view(struct xp_ui *ui, size_t i);

bool xp_ui_open_node(struct xp_ui *ui, const char *name)
{
	for (size_t i = 0; i < ui->nviews; i++) {
		const struct slot *s = &ui->views[i];
		if (s->v->open_node && s->v->open_node(s->st, ui, name)) {
			switch_view(ui, i);
			return true;
		}
	}
	xp_ui_message(ui, XP_ROLE_WARN, "%s: not shown in the topology view (a filter hides it, or it is gone)",
		      name);
	return false;
}

struct xp_ctx *xp_ui_ctx(struct xp_ui *ui)
{
	return ui->ctx;
}

const char *xp_ui_selected_node(struct xp_ui *ui)
{
	for (size_t i = 0; i < ui->nviews; i++) {
		const struct slot *s = &ui->views[i];
		const char *n = s->v->selected_node ? s->v->selected_node(s->st) : NULL;
		if (n)
			return n;
	}
	return NULL;
}

static void views_data_changed(struct xp_ui *ui)
{
	ui->counted = NULL;
	for (size_t i = 0; i < ui->nviews; i++)
		if (ui->views[i].v->on_data)
			ui->views[i].v->on_data(ui->views[i].st, ui);
	ui->dirty = true;
}

/* New audit rows (this console's changes, and other processes' on the same database)
 * join the event log; at start, the last few give context. */
static void audit_events(struct xp_ui *ui)
{
	struct xp_store *s = xp_ui_store(ui);
	if (!s)
		return;
	if (!ui->audit_started) {
		int64_t last = xp_audit_last_id(s);
		if (xp_store_damage(s))
			xp_ui_message(ui, XP_ROLE_FAIL, "database: %s", xp_store_damage(s));
		ui->audit_seen = last > 50 ? last - 50 : 0;
		ui->audit_started = true;
	}
	struct xp_audit *rows;
	size_t n;
	struct xp_err err = {{0}};
	if (xp_audit_list_after(s, ui->audit_seen, 1000, &rows, &n, &err) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		/* Acknowledged here or by another process on the same database: read them again. */
		if (strncmp(rows[i].action, "problem.", 8) == 0)
			ui->acks_stale = true;
		xp_event_add(&ui->events, rows[i].time, XP_SEV_INFO, "", "audit: %s %s %s", rows[i].actor,
			     rows[i].action, rows[i].target);
		ui->audit_seen = rows[i].id;
	}
	xp_audit_free(rows, n);
}

/* Takes a finished load, if any: swaps the cluster in and records what changed. */
static void take_result(struct xp_ui *ui)
{
	struct xp_poller_news nw;
	if (ui->paused || !xp_poller_take(ui->poll, &nw))
		return;
	time_t now = time(NULL);
	for (size_t i = 0; i < nw.n_log; i++) {
		/* Agents going down or coming back are what an operator watches for. */
		bool bad = strstr(nw.log[i], ": up, serving") == NULL;
		xp_event_add(&ui->events, now, bad ? XP_SEV_WARN : XP_SEV_INFO, "", "%s", nw.log[i]);
		if (bad)
			xp_ui_message(ui, XP_ROLE_WARN, "%s", nw.log[i]);
		free(nw.log[i]);
	}
	free(nw.log);
	xp_app_history_batches(ui->history, nw.hist, nw.n_hist);
	if (nw.n_log)
		ui->dirty = true;
	if (nw.failed) {
		/* Keep showing the last good data; say once what went wrong. */
		if (strcmp(nw.error, ui->load_error) != 0) {
			snprintf(ui->load_error, sizeof ui->load_error, "%s", nw.error);
			xp_event_add(&ui->events, now, XP_SEV_FAIL, "", "refresh failed: %s", nw.error);
			xp_ui_message(ui, XP_ROLE_FAIL, "refresh failed: %s", nw.error);
		}
		ui->dirty = true;
		return;
	}
	if (!nw.fresh)
		return;
	if (ui->load_error[0]) {
		xp_event_add(&ui->events, now, XP_SEV_INFO, "", "refresh works again");
		ui->load_error[0] = '\0';
	}
	ui->last_ok = now;
	if (!nw.cluster) {
		/* Nothing changed (every agent said 304): the data shown is current. */
		xp_app_history_take(ui, ui->history, &ui->history_loaded, now);
		ui->dirty = true;
		return;
	}
	struct xp_cluster *c = nw.cluster;
	struct xp_cluster *old = ui->loaded ? ui->ctx->cluster : NULL;
	xp_events_diff(old, c, now, &ui->events);
	audit_events(ui);
	/* Agents' nodes that did not change are the same nodes in the new cluster (the pool
	 * shares them): the kept placement indexes index only the others again, when they are
	 * few (more than half: a new index costs no more). */
	size_t *chg = NULL, n_chg = 0;
	bool follow = old && old->n_nodes == c->n_nodes;
	if (follow) {
		chg = xp_malloc((c->n_nodes ? c->n_nodes : 1) * sizeof *chg);
		for (size_t i = 0; i < c->n_nodes; i++)
			if (old->nodes[i] != c->nodes[i])
				chg[n_chg++] = i;
		follow = n_chg * 2 <= c->n_nodes;
	}
	ui->moved = (struct xp_ui_moved){old, old ? old->generation : 0, chg, n_chg};
	if (follow)
		xp_ctx_place_follow(ui->ctx, old, ui->moved.old_gen, c, chg, n_chg);
	else
		/* The index a prompt's `place` kept points into the old cluster: it goes first. */
		xp_ctx_place_drop(ui->ctx);
	xp_cluster_free(ui->ctx->cluster);
#ifdef __GLIBC__
	/* A whole cluster was replaced (a file read again): glibc keeps the old one's pages in its
	 * free lists, so an idle console would hold two clusters' worth for good. Hand them back
	 * (a few milliseconds, only when a file changed; a followed agent refresh frees little). */
	if (old && !follow)
		malloc_trim(0);
#endif
	ui->ctx->cluster = c;
	ui->loaded = true;
	xp_app_history_take(ui, ui->history, &ui->history_loaded, now);
	ui->moved_valid = follow;
	views_data_changed(ui);
	ui->moved_valid = false;
	free(chg);
}

/* ---- drawing ---- */

static void fill_row(WINDOW *w, struct xp_rect r, int attr)
{
	wattrset(w, attr);
	wmove(w, r.y, r.x);
	for (int i = 0; i < r.w; i++)
		waddch(w, ' ');
}

/* Whether every problem of device d of node n is acknowledged at now (it stops shouting). */
static bool device_quiet(const struct xp_node *n, const struct xp_device *d, const struct xp_acks *acks, time_t now)
{
	char what[16];
	snprintf(what, sizeof what, "ACC%d", d->index);
	struct xp_problem p = {.node = n->name, .level = d->health};
	snprintf(p.what, sizeof p.what, "%s", what);
	if (!d->n_health_reasons) {
		p.reason = "no reason given";
		return xp_ack_state(acks, &p, now, NULL) != XP_ACK_OPEN;
	}
	for (size_t r = 0; r < d->n_health_reasons; r++) {
		p.reason = d->health_reasons[r];
		if (xp_ack_state(acks, &p, now, NULL) == XP_ACK_OPEN)
			return false;
	}
	return true;
}

static void health_counts(const struct xp_cluster *c, size_t cnt[XP_HEALTH_COUNT], const struct xp_acks *acks)
{
	memset(cnt, 0, sizeof(size_t) * XP_HEALTH_COUNT);
	time_t now = xp_ui_now();
	/* 10,000 nodes x 8 devices is 80,000 steps: once per cluster, not per frame. */
	for (size_t i = 0; i < c->n_nodes; i++) {
		/* A down or unreachable node's devices are not known to be fine: count them with the
		 * unknown, whatever their last report said. */
		int st = c->nodes[i]->state;
		bool gone = st == XP_NODE_DOWN || st == XP_NODE_UNREACHABLE;
		for (size_t j = 0; j < c->nodes[i]->n_devices; j++) {
			const struct xp_device *d = &c->nodes[i]->devices[j];
			int h = gone ? XP_HEALTH_UNKNOWN : d->health;
			/* An acknowledged device does not shout: the problems view (tab 6) lists it. */
			if (acks->n && (h == XP_HEALTH_WARN || h == XP_HEALTH_FAIL) && device_quiet(c->nodes[i], d, acks, now))
				continue;
			if (h >= 0 && h < XP_HEALTH_COUNT)
				cnt[h]++;
		}
	}
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b && b[1] ? b + 1 : path;
}

/* The source for the header, and an engine's health words in health ("" for none); *alarm
 * when some agent does not answer or the engine could not be read. */
static const char *source_name(struct xp_ui *ui, char *buf, size_t len, char *health, size_t hlen, bool *alarm)
{
	const struct xp_ctx *ctx = ui->ctx;
	size_t up, down;
	*alarm = false;
	health[0] = '\0';
	bool engine = ctx->slurm || ctx->k8s_server || ctx->k8s || ctx->k8s_token || ctx->k8s_ca;
	char agents[64] = "";
	if (xp_poller_agent_counts(ui->poll, &up, &down)) {
		*alarm = down > 0;
		/* The first thing to see on a cluster console: how many nodes answer. */
		snprintf(agents, sizeof agents, "agents %zu up %zu down", up, down);
	}
	/* Base names: the header has room for what the file is, not where it lives. */
	if (ctx->slurm)
		snprintf(buf, len, "slurm%s%s", *ctx->slurm ? " " : "", base_name(ctx->slurm));
	else if (ctx->k8s_server) {
		/* The server without any user:password@ a URL may carry. */
		const char *at = strchr(ctx->k8s_server, '@'), *sl = strstr(ctx->k8s_server, "://");
		snprintf(buf, len, "k8s %s", at && sl && at > sl ? at + 1 : ctx->k8s_server);
	} else if (engine)
		snprintf(buf, len, "k8s kubeconfig");
	else if (agents[0])
		snprintf(buf, len, "%s", agents);
	else if (ctx->inventory)
		snprintf(buf, len, "snapshot %s", base_name(ctx->inventory));
	else if (ctx->replay)
		snprintf(buf, len, "replay %s", base_name(ctx->replay));
	else if (ctx->topology)
		snprintf(buf, len, "topology %s", base_name(ctx->topology));
	else {
		char host[128] = "localhost";
		gethostname(host, sizeof host - 1);
		snprintf(buf, len, "local %s", host);
	}
	/* An engine's health follows where it is: reachable and when last listed, the watch;
	 * with agents beside it, how many answer. */
	struct xp_live_health eh;
	bool have = engine && xp_poller_engine_health(ui->poll, &eh);
	if (have) {
		char words[640];
		xp_live_health_words(&eh, time(NULL), words, sizeof words);
		xp_mask_controls(words);
		snprintf(health, hlen, "%.560s%s%s", words, agents[0] ? ", " : "", agents);
		*alarm = *alarm || !eh.ok;
	} else if (engine && agents[0])
		snprintf(health, hlen, "%s", agents);
	return buf;
}

/* Z: the age says PAUSED before it (drawn in the warn role by paused_mark). */
static void paused_age(const struct xp_ui *ui, char *age, size_t alen, char *sage, size_t slen)
{
	if (!ui->paused)
		return;
	char a[64];
	snprintf(a, sizeof a, "%s", age);
	snprintf(age, alen, "PAUSED %.40s", a);
	snprintf(a, sizeof a, "%s", sage);
	snprintf(sage, slen, "PAUSED %.40s", a);
}

/* The word PAUSED in the header's right part (drawn at column x0), in the warn role. */
static void paused_mark(const struct xp_ui *ui, const char *right, int y, int x0, int attr)
{
	const char *p = ui->paused ? strstr(right, "PAUSED") : NULL;
	if (!p)
		return;
	wattrset(stdscr, xp_theme_attr_on(XP_ROLE_WARN, XP_ROLE_HEADER) | A_BOLD);
	mvwaddstr(stdscr, y, x0 + (int)(p - right), "PAUSED");
	wattrset(stdscr, attr);
}

static void draw_header(struct xp_ui *ui)
{
	struct xp_rect r = ui->lay.header;
	int attr = xp_theme_attr(XP_ROLE_HEADER);
	fill_row(stdscr, r, attr);
	const struct xp_cluster *c = xp_ui_cluster(ui);
	const struct xp_acks *acks = xp_ui_acks(ui, NULL);
	time_t tnow = xp_ui_now();
	/* A snooze that ended shouts again without new data: count again then. */
	if (ui->acks_next_end && tnow >= ui->acks_next_end)
		ui->counted = NULL;
	if (c != ui->counted || c->generation != ui->counted_gen) {
		health_counts(c, ui->health, acks);
		ui->acks_next_end = 0;
		for (size_t i = 0; i < acks->n; i++)
			if (acks->a[i].kind == XP_ACK_SNOOZE && acks->a[i].until > tnow &&
			    (!ui->acks_next_end || acks->a[i].until < ui->acks_next_end))
				ui->acks_next_end = acks->a[i].until;
		ui->devices = xp_cluster_device_count(c);
		ui->counted = c;
		ui->counted_gen = c->generation;
	}
	const size_t *h = ui->health;
	char src[1024], right[128], age[48], sage[48];
	time_t now = time(NULL);
	if (!ui->loaded)
		snprintf(age, sizeof age, "loading");
	else if (ui->load_error[0])
		snprintf(age, sizeof age, "STALE %lds", (long)(now - ui->last_ok));
	else
		snprintf(age, sizeof age, "data %lds old", (long)(now - ui->last_ok));
	/* The short form for a narrow line keeps what matters: stale or not, and how old. */
	snprintf(sage, sizeof sage, "%s", ui->loaded && !ui->load_error[0] ? age + 5 : age);
	paused_age(ui, age, sizeof age, sage, sizeof sage);
	char counts[64];
	struct tm tm;
	localtime_r(&now, &tm);
	/* Health counts in their colours, between the source and the clock. */
	static const int hroles[XP_HEALTH_COUNT] = {XP_ROLE_DIM, XP_ROLE_OK, XP_ROLE_WARN, XP_ROLE_FAIL};
	static const char *const hnames[XP_HEALTH_COUNT] = {"n/a", "ok", "warn", "fail"};
	static const int order[XP_HEALTH_COUNT] = {XP_HEALTH_OK, XP_HEALTH_WARN, XP_HEALTH_FAIL,
						   XP_HEALTH_UNKNOWN};
	char hs[XP_HEALTH_COUNT][32];
	bool alarm;
	char health[640], brief[640] = "";
	source_name(ui, src, sizeof src, health, sizeof health, &alarm);
	if (health[0]) {
		/* Too long for the line: the engine's kind and its health, without where it is
		 * ("k8s watching, listed 12s ago"); the words themselves are cut at the end. */
		size_t kl = strcspn(src, " ");
		snprintf(brief, sizeof brief, "%.*s %s", (int)kl, src, health);
		size_t sl0 = strlen(src);
		snprintf(src + sl0, sizeof src - sl0, " %s", health);
	}
	/* What gives way on a short line, in turn, before the source is cut: the clock, the long
	 * form of the age, the zero health counts, the second blank between fields, then the
	 * word "devices" shortens to "dev". Non-zero counts and the age always stay, whole, with
	 * one blank at least between fields, so the source keeps room on an 80-column line. */
	enum { STEPS = 6 };
	const char *brand = " xpool  ", *sep = "  ";
	int bw = 0, cw = 0, sw = xp_draw_width(src), hw = 0, rw = 0;
	const char *sp = strchr(src, ' ');
	bool named = sp && (!alarm || brief[0]) && strncmp(src, "agents ", 7) != 0;
	const char *shorter = brief[0] ? brief : sp ? sp + 1 : src;
	int nw = named ? xp_draw_width(shorter) : sw;
	for (int step = 0; step < STEPS; step++) {
		bool tight = step >= 4;
		sep = tight ? " " : "  ";
		brand = tight ? " xpool " : " xpool  ";
		const char *dev = step >= 5 ? "dev" : ui->devices == 1 ? "device" : "devices";
		snprintf(counts, sizeof counts, "%s%zu node%s%s%zu %s%s", sep, c->n_nodes, c->n_nodes == 1 ? "" : "s",
			 sep, ui->devices, dev, sep);
		const char *a = step >= 2 ? sage : age;
		if (step == 0)
			snprintf(right, sizeof right, " %s  %02d:%02d:%02d ", a, tm.tm_hour, tm.tm_min, tm.tm_sec);
		else
			snprintf(right, sizeof right, "%s%s ", tight ? "" : " ", a);
		bw = (int)strlen(brand);
		cw = (int)strlen(counts);
		rw = (int)strlen(right);
		hw = 0;
		for (int i = 0; i < XP_HEALTH_COUNT; i++) {
			int hh = order[i];
			/* "n/a 0" says nothing; from the fourth step on neither does any other zero */
			if (!h[hh] && (hh == XP_HEALTH_UNKNOWN || (step >= 3 && hh != XP_HEALTH_OK)))
				hs[i][0] = '\0';
			else
				snprintf(hs[i], sizeof hs[i], "%s %zu%s", hnames[hh], h[hh], sep);
			hw += (int)strlen(hs[i]);
		}
		if (bw + sw + cw + hw + rw <= r.w)
			break;
		/* "devices" stays when the file's name alone fits (its kind gives way first) */
		if (step == 4 && bw + nw + cw + hw + rw <= r.w)
			break;
	}
	int sl = (int)strlen(sep);
	int room = r.w - bw - cw - hw - rw;
	/* A file's name says more than its kind ("snapshot") when only one of them fits. */
	const char *shown = sw > room && named ? shorter : src;
	int x = xp_draw_clip(stdscr, r.y, r.x, r.w, brand);
	/* Agents that do not answer are the header's alarm, as failed devices are. */
	if (room >= 6) {
		if (alarm)
			wattrset(stdscr, xp_theme_attr_on(XP_ROLE_FAIL, XP_ROLE_HEADER));
		x += xp_draw_clip_cut(stdscr, r.y, x, room, shown, XP_CUT_END, ui->g->ellipsis);
		wattrset(stdscr, attr);
	} else
		x -= sl; /* no source: the counts' own blank follows the name */
	x += xp_draw_clip(stdscr, r.y, x, r.w - rw - x, counts);
	for (int i = 0; i < XP_HEALTH_COUNT; i++) {
		int hh = order[i];
		int len = (int)strlen(hs[i]);
		if (!len)
			continue;
		if (x + len - sl > r.w - rw)
			break;
		/* Colour a count only when it is non-zero, so the eye finds problems; the bar's
		 * background stays under it. */
		wattrset(stdscr, h[hh] ? xp_theme_attr_on(hroles[hh], XP_ROLE_HEADER) : attr);
		x += xp_draw_clip(stdscr, r.y, x, len - sl, hs[i]);
		wattrset(stdscr, attr);
		x += xp_draw_clip(stdscr, r.y, x, r.w - rw - x, sep);
	}
	wattrset(stdscr, attr);
	if (r.w > rw) {
		xp_draw_clip(stdscr, r.y, r.w - rw, rw, right);
		paused_mark(ui, right, r.y, r.w - rw, attr);
	}
}

static void draw_tabs(struct xp_ui *ui)
{
	struct xp_rect r = ui->lay.tabs;
	fill_row(stdscr, r, xp_theme_attr(XP_ROLE_TAB));
	char labels[N_VIEWS][48];
	const char *lp[N_VIEWS];
	const struct slot *s = &ui->views[ui->cur];
	const char *where = s->v->where ? s->v->where(s->st) : NULL;
	/* Nine tabs and a breadcrumb do not share a narrow row: the other tabs then show their
	 * number only, so that the path of the view in use keeps its room. */
	int need = where && *where ? xp_draw_cols(where) + 3 : 0;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < ui->nviews; i++) {
			if (pass && i != ui->cur)
				snprintf(labels[i], sizeof labels[i], "%d", ui->views[i].v->order);
			else
				snprintf(labels[i], sizeof labels[i], "%d %s", ui->views[i].v->order, ui->views[i].v->title);
			lp[i] = labels[i];
		}
		ui->ntabs = xp_layout_tabs(lp, (int)ui->nviews, r.w, ui->tabs);
		int used = ui->ntabs ? ui->tabs[ui->ntabs - 1].x + ui->tabs[ui->ntabs - 1].w + 2 : 1;
		if (used + need <= r.w && ui->ntabs == (int)ui->nviews)
			break;
	}
	for (int i = 0; i < ui->ntabs; i++) {
		wattrset(stdscr, xp_theme_attr((size_t)i == ui->cur ? XP_ROLE_TAB_ACTIVE : XP_ROLE_TAB));
		mvwprintw(stdscr, r.y, ui->tabs[i].x, " %s ", lp[i]);
	}
	/* The breadcrumb of the current view, right-aligned when it fits. */
	int end = ui->ntabs ? ui->tabs[ui->ntabs - 1].x + ui->tabs[ui->ntabs - 1].w + 2 : 1;
	if (where && *where && end < r.w - 2) {
		wattrset(stdscr, xp_theme_attr(XP_ROLE_TITLE));
		int avail = r.w - end - 1;
		/* Too long: the view's name goes first (its tab is lit), then the start of the path
		 * gives way to an ellipsis; the end says where the user is now. */
		const char *shown = where, *arrow = strstr(where, ui->g->arrow);
		if (xp_draw_cols(shown) > avail && arrow && arrow[strlen(ui->g->arrow)] == ' ')
			shown = arrow + strlen(ui->g->arrow) + 1;
		char cut[512];
		xp_draw_cut(shown, avail, XP_CUT_START, ui->g->ellipsis, cut, sizeof cut);
		int len = xp_draw_width(cut);
		xp_draw_clip(stdscr, r.y, r.w - 1 - len, avail, cut);
	}
}

static const char *view_string(struct xp_ui *ui, char *buf, size_t len);

static void draw_status(struct xp_ui *ui)
{
	struct xp_rect r = ui->lay.status;
	if (xp_prompt_active(ui->prompt)) {
		xp_prompt_draw(ui->prompt);
		return;
	}
	/* How many rows match ("3 of 12 (188 filtered from 200)"), at the right end: what a
	 * filter is for, so it keeps its place before the hint does. */
	const struct slot *s = &ui->views[ui->cur];
	char count[128] = "";
	const char *c = s->v->count && !ui->out_open ? s->v->count(s->st, count, sizeof count) : NULL;
	int cw = c && *c ? xp_draw_width(c) + 1 : 0;
	if (cw > r.w / 2)
		cw = 0;
	if (ui->filtering) {
		fill_row(stdscr, r, xp_theme_attr(XP_ROLE_PROMPT));
		if (cw)
			xp_draw_clip(stdscr, r.y, r.w - cw, cw, c);
		wmove(stdscr, r.y, 0);
		xp_draw_clip(stdscr, r.y, 0, r.w - 1, "/");
		int fw = xp_draw_clip(stdscr, r.y, 1, r.w - 2 - cw, ui->filter);
		/* A half-typed expression says what is wrong beside it; the rows keep the last one
		 * that parsed. */
		const char *e = filter_error(ui);
		if (e && 1 + fw + 3 < r.w - cw) {
			wattrset(stdscr, xp_theme_attr(XP_ROLE_FAIL));
			xp_draw_clip_cut(stdscr, r.y, 1 + fw + 2, r.w - cw - fw - 4, e, XP_CUT_END, ui->g->ellipsis);
		}
		return;
	}
	fill_row(stdscr, r, xp_theme_attr(XP_ROLE_STATUS));
	/* Over agents, how many answer stays at the right end whatever else the line says: the
	 * header's copy is the first thing a narrow terminal drops. */
	char agents[64] = "";
	size_t up, down;
	if (xp_poller_agent_counts(ui->poll, &up, &down))
		snprintf(agents, sizeof agents, " agents %zu up %zu down ", up, down);
	int aw = (int)strlen(agents);
	if (aw && aw < r.w / 2) {
		wattrset(stdscr, xp_theme_attr(down ? XP_ROLE_FAIL : XP_ROLE_STATUS));
		xp_draw_clip(stdscr, r.y, r.w - aw, aw, agents);
		r.w -= aw;
	}
	time_t now = time(NULL);
	if (!ui->loaded && ui->load_error[0]) {
		/* Nothing to show but the reason: keep it on screen, not only for a few seconds. */
		wattrset(stdscr, xp_theme_attr(XP_ROLE_FAIL));
		char m[1100];
		snprintf(m, sizeof m, " cannot read the source: %s", ui->load_error);
		xp_draw_clip_cut(stdscr, r.y, 0, r.w, m, XP_CUT_END, ui->g->ellipsis);
		return;
	}
	if (ui->msg[0] && now - ui->msg_time < MSG_SECONDS) {
		wattrset(stdscr, xp_theme_attr(ui->msg_role));
		/* A message longer than the line ends in the mark: cut text must not read as whole. */
		xp_draw_clip_cut(stdscr, r.y, 1, r.w - 2, ui->msg, XP_CUT_END, ui->g->ellipsis);
		return;
	}
	ui->msg[0] = '\0';
	char hint[1800], vs[1024];
	if (ui->out_open)
		snprintf(hint, sizeof hint, " Up/Down PgUp/PgDn scroll the output   Esc/q close");
	else
		snprintf(hint, sizeof hint, " :view %s  q quit  ? help  : command  / filter  r refresh  1-9 views",
			 view_string(ui, vs, sizeof vs));
	wattrset(stdscr, xp_theme_attr(XP_ROLE_STATUS));
	/* Where the view's list cursor is, right-aligned; under a filter it comes before the hint. */
	bool keep = cw != 0; /* the hint (with the view's string) is cut first */
	int hw = xp_draw_clip_cut(stdscr, r.y, 0, keep ? r.w - cw - 1 : r.w, hint, XP_CUT_END, ui->g->ellipsis);
	if (cw && (keep || hw + 2 + cw <= r.w))
		xp_draw_clip(stdscr, r.y, r.w - cw, cw, c);
}

/* A box over the body with a title, for the help overlay and the output pane. */
static struct xp_rect draw_box(struct xp_ui *ui, const char *title)
{
	struct xp_rect b = ui->lay.body;
	const struct xp_glyphs *g = ui->g;
	int attr = xp_theme_attr(XP_ROLE_BORDER);
	wattrset(stdscr, xp_theme_attr(XP_ROLE_NORMAL));
	for (int y = b.y; y < b.y + b.h; y++) {
		wmove(stdscr, y, b.x);
		wclrtoeol(stdscr);
	}
	wattrset(stdscr, attr);
	for (int x = 1; x < b.w - 1; x++) {
		mvwaddstr(stdscr, b.y, b.x + x, g->hline);
		mvwaddstr(stdscr, b.y + b.h - 1, b.x + x, g->hline);
	}
	for (int y = 1; y < b.h - 1; y++) {
		mvwaddstr(stdscr, b.y + y, b.x, g->vline);
		mvwaddstr(stdscr, b.y + y, b.x + b.w - 1, g->vline);
	}
	mvwaddstr(stdscr, b.y, b.x, g->tl);
	mvwaddstr(stdscr, b.y, b.x + b.w - 1, g->tr);
	mvwaddstr(stdscr, b.y + b.h - 1, b.x, g->bl);
	mvwaddstr(stdscr, b.y + b.h - 1, b.x + b.w - 1, g->br);
	wattrset(stdscr, xp_theme_attr(XP_ROLE_TITLE));
	char t[128];
	snprintf(t, sizeof t, " %s ", title);
	xp_draw_clip(stdscr, b.y, b.x + 2, b.w - 4, t);
	return (struct xp_rect){b.y + 1, b.x + 2, b.h - 2, b.w - 4};
}

static int help_lines(const struct xp_ui *ui, char ***out)
{
	const struct xp_view *v = ui->views[ui->cur].v;
	char **lines = NULL;
	size_t n = 0;
	char buf[256];
	snprintf(buf, sizeof buf, "%s view", v->title);
	xp_strv_add(&lines, &n, buf);
	const struct xp_view_key *vk = v->keys_now ? v->keys_now(ui->views[ui->cur].st) : v->keys;
	for (const struct xp_view_key *k = vk; k && k->keys; k++) {
		snprintf(buf, sizeof buf, "  %-22s %s", k->keys, k->help);
		xp_strv_add(&lines, &n, buf);
	}
	xp_strv_add(&lines, &n, "");
	xp_strv_add(&lines, &n, "Everywhere");
	for (const struct xp_view_key *k = global_keys; k->keys; k++) {
		snprintf(buf, sizeof buf, "  %-22s %s", k->keys, k->help);
		xp_strv_add(&lines, &n, buf);
	}
	/* The legend of the map's cells, from the glyph table: the set in use (UTF-8 or ASCII),
	 * coloured as the map colours them when drawn (legend_glyphs). */
	xp_strv_add(&lines, &n, "");
	xp_strv_add(&lines, &n, "Device cells on the map");
	for (const struct xp_glyph_cell *e = xp_glyph_cells; e->name; e++) {
		char glyphs[64] = "";
		for (int i = 0; i < e->count; i++)
			strncat(glyphs, xp_glyph_at(ui->g, e->offset, i), sizeof glyphs - strlen(glyphs) - 1);
		snprintf(buf, sizeof buf, "  %-*s %s", 22 + (int)(strlen(glyphs) - (size_t)xp_draw_cols(glyphs)), glyphs,
			 e->meaning);
		xp_strv_add(&lines, &n, buf);
	}
	xp_strv_add(&lines, &n, "");
	xp_strv_add(&lines, &n, "Any key closes this help.");
	*out = lines;
	return (int)n;
}

/* Colours the glyphs of the legend's row for entry e at (y, x), as the map draws them. */
static void legend_glyphs(const struct xp_ui *ui, const struct xp_glyph_cell *e, int y, int x, int maxx)
{
	for (int i = 0; i < e->count && x < maxx; i++) {
		int role = e->role >= 0 ? e->role : xp_role_for_util(i * 100.0 / (e->count - 1));
		x = xp_draw_put(stdscr, y, x, maxx, role, xp_glyph_at(ui->g, e->offset, i), 0);
	}
}

static void draw_help(struct xp_ui *ui)
{
	struct xp_rect in = draw_box(ui, "Help");
	char **lines;
	int n = help_lines(ui, &lines);
	int ncells = 0;
	while (xp_glyph_cells[ncells].name)
		ncells++;
	int first = n - 2 - ncells; /* the legend's rows end before the closing two */
	for (int i = 0; i < in.h && ui->help_top + i < n; i++) {
		int li = ui->help_top + i;
		wattrset(stdscr, xp_theme_attr(li == first - 1 ? XP_ROLE_TITLE : XP_ROLE_NORMAL));
		xp_draw_clip(stdscr, in.y + i, in.x, in.w, lines[li]);
		if (li >= first && li < first + ncells)
			legend_glyphs(ui, &xp_glyph_cells[li - first], in.y + i, in.x + 2, in.x + in.w);
	}
	xp_strv_free(lines, (size_t)n);
}

static void draw_output(struct xp_ui *ui)
{
	struct xp_rect in = draw_box(ui, ui->out_err ? "Command output (errors)" : "Command output");
	wattrset(stdscr, xp_theme_attr(ui->out_err ? XP_ROLE_FAIL : XP_ROLE_NORMAL));
	for (int i = 0; i < in.h && (size_t)(ui->out_top + i) < ui->n_out; i++)
		xp_draw_clip(stdscr, in.y + i, in.x, in.w, ui->out_lines[ui->out_top + i]);
}

static void draw(struct xp_ui *ui)
{
	int rows, cols;
	getmaxyx(stdscr, rows, cols);
	ui->lay = xp_layout_frame(rows, cols);
	if (ui->lay.too_small) {
		wattrset(stdscr, xp_theme_attr(XP_ROLE_NORMAL));
		werase(stdscr);
		/* Three short centred lines: one long line would lose the needed size exactly on
		 * the narrow terminals that show it. */
		char have[64], need[64];
		snprintf(have, sizeof have, "terminal too small: %dx%d", cols, rows);
		snprintf(need, sizeof need, "xpool needs %dx%d", XP_MIN_COLS, XP_MIN_ROWS);
		const char *lines[] = {have, need, "(q to quit)"};
		int y0 = rows > 3 ? (rows - 3) / 2 : 0;
		for (int i = 0; i < 3 && y0 + i < rows; i++) {
			int w = (int)strlen(lines[i]);
			xp_draw_clip(stdscr, y0 + i, cols > w ? (cols - w) / 2 : 0, cols, lines[i]);
		}
		wnoutrefresh(stdscr);
		doupdate();
		ui->dirty = false;
		return;
	}
	if (xp_prompt_active(ui->prompt))
		xp_prompt_resize(ui->prompt, ui->lay.status.y, ui->lay.status.w);
	draw_header(ui);
	draw_tabs(ui);
	if (ui->help_open)
		draw_help(ui);
	else if (ui->out_open)
		draw_output(ui);
	else {
		const struct slot *s = &ui->views[ui->cur];
		wattrset(stdscr, xp_theme_attr(XP_ROLE_NORMAL));
		s->v->draw(s->st, ui, stdscr, ui->lay.body);
	}
	draw_status(ui);
	if (!xp_prompt_active(ui->prompt))
		curs_set(ui->filtering ? 1 : 0);
	if (ui->filtering)
		wmove(stdscr, ui->lay.status.y, 1 + (int)strlen(ui->filter));
	wnoutrefresh(stdscr);
	doupdate();
	ui->dirty = false;
}

/* ---- commands at the prompt ---- */

static void out_clear(struct xp_ui *ui)
{
	xp_strv_free(ui->out_lines, ui->n_out);
	ui->out_lines = NULL;
	ui->n_out = 0;
	ui->out_top = 0;
	ui->out_open = false;
}

static void out_add_text(struct xp_ui *ui, const char *text)
{
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xp_strndup(p, len);
		ui->out_lines = xp_realloc(ui->out_lines, (ui->n_out + 1) * sizeof *ui->out_lines);
		ui->out_lines[ui->n_out++] = line;
		p += len + (nl ? 1 : 0);
	}
}

/* Applies a theme for `:theme NAME` (the command checks it first). */
static int apply_theme_hook(struct xp_ctx *ctx, const char *name, struct xp_err *err)
{
	struct xp_ui *ui = ctx->ui;
	struct xp_theme t;
	if (xp_theme_load(name, &t, err) < 0)
		return -1;
	ui->theme = t;
	xp_theme_apply(&ui->theme, ui->colour);
	xp_prompt_set_attrs(ui->prompt, xp_theme_attr(XP_ROLE_PROMPT), xp_theme_attr(XP_ROLE_DIM));
	/* Colour pairs changed under cells already on the terminal: repaint them all. */
	clearok(stdscr, TRUE);
	ui->dirty = true;
	return 0;
}

/* `:agent add|rm URL`: the refresh thread changes its pool on its next poll, at once. */
static int agent_hook(struct xp_ctx *ctx, bool add, const char *url, struct xp_err *err)
{
	struct xp_ui *ui = ctx->ui;
	return xp_poller_agent(ui->poll, add, url, err);
}

/* `:agent ls`: the listing the refresh thread made after its last poll. */
static int agent_list_hook(struct xp_ctx *ctx, FILE *out)
{
	struct xp_ui *ui = ctx->ui;
	char *t = xp_poller_agents_text(ui->poll);
	if (!t)
		return -1;
	fputs(t, out);
	free(t);
	return 0;
}

/* `:q` and `:quit` leave the console, as in vi and k9s; they are the console's, not commands. */
static bool is_quit(const char *line)
{
	line += strspn(line, " \t");
	size_t n = strcspn(line, " \t");
	bool word = (n == 1 && line[0] == 'q') || (n == 4 && strncmp(line, "quit", 4) == 0) ||
		    (n == 2 && strncmp(line, "q!", 2) == 0);
	return word && line[n + strspn(line + n, " \t")] == '\0';
}

int xp_ui_command(struct xp_ui *ui, const char *line, char **out, char **errs)
{
	struct xp_ctx *ctx = ui->ctx;
	int argc = 0;
	char **argv = NULL;
	struct xp_err err = {{0}};
	*out = *errs = NULL;
	if (xp_cmd_split(line, &argc, &argv, &err) < 0) {
		*errs = xp_asprintf("xpool: %s\n", err.msg);
		return XP_EXIT_USAGE;
	}
	if (!argc) {
		xp_cmd_split_free(argc, argv);
		*out = xp_strdup("");
		*errs = xp_strdup("");
		return XP_EXIT_OK;
	}
	size_t ol = 0, el = 0;
	FILE *fo = open_memstream(out, &ol), *fe = open_memstream(errs, &el);
	if (!fo || !fe) {
		if (fo)
			fclose(fo);
		if (fe)
			fclose(fe);
		free(*out);
		free(*errs);
		xp_cmd_split_free(argc, argv);
		*out = xp_strdup("");
		*errs = xp_asprintf("xpool: cannot capture output: %s\n", strerror(errno));
		return XP_EXIT_ERROR;
	}
	FILE *so = ctx->out, *se = ctx->err;
	ctx->out = fo;
	ctx->err = fe;
	struct xp_cluster *before = ctx->cluster;
	int rc = xp_cmd_run(ctx, argc, argv);
	ctx->out = so;
	ctx->err = se;
	fclose(fo);
	fclose(fe);
	xp_cmd_split_free(argc, argv);

	/* A command may have switched the source (`inventory --topology F`): show that from now on. */
	if (ctx->cluster != before) {
		ui->loaded = ctx->cluster != NULL;
		ui->last_ok = time(NULL);
		views_data_changed(ui);
	}
	xp_poller_set_source(ui->poll, ctx);
	audit_events(ui); /* what the command changed shows in the events view at once */
	/* The command may have changed what the views read from the database: a new
	 * generation tells them to read again. */
	xp_ctx_touch(ctx);
	views_data_changed(ui);
	return rc;
}

static void run_command(struct xp_ui *ui, const char *line)
{
	/* A line that does not split says why; an empty one runs nothing. */
	int argc = 0;
	char **argv = NULL;
	struct xp_err err = {{0}};
	if (xp_cmd_split(line, &argc, &argv, &err) < 0) {
		xp_ui_message(ui, XP_ROLE_FAIL, "%s", err.msg);
		return;
	}
	xp_cmd_split_free(argc, argv);
	if (!argc)
		return;
	char *out, *errs;
	int rc = xp_ui_command(ui, line, &out, &errs);
	size_t ol = strlen(out), el = strlen(errs);
	size_t out_n = 0;
	for (const char *p = out; *p; p++)
		out_n += *p == '\n';
	out_clear(ui);
	if (rc != 0 && el) {
		out_add_text(ui, errs);
		ui->out_err = true;
		if (ol)
			out_add_text(ui, out);
		if (ui->n_out > 1)
			ui->out_open = true;
		else
			out_clear(ui);
		/* Errors start "xpool: "; the console is xpool already. */
		const char *e = strncmp(errs, "xpool: ", 7) == 0 ? errs + 7 : errs;
		xp_ui_message(ui, XP_ROLE_FAIL, "%.*s (exit %d)", (int)strcspn(e, "\n"), e, rc);
	} else if (out_n > 1 || (out_n == 1 && el)) {
		out_add_text(ui, out);
		if (el)
			out_add_text(ui, errs);
		ui->out_err = false;
		ui->out_open = true;
		xp_ui_message(ui, XP_ROLE_OK, "%s: %zu lines", line, ui->n_out);
	} else if (ol) {
		xp_ui_message(ui, rc ? XP_ROLE_FAIL : XP_ROLE_OK, "%.*s", (int)strcspn(out, "\n"), out);
	} else {
		xp_ui_message(ui, rc ? XP_ROLE_FAIL : XP_ROLE_OK, "%s: %s", line, rc ? "failed" : "done");
	}
	free(out);
	free(errs);
}

static size_t node_names(void *arg, const char *const **names)
{
	struct xp_ui *ui = arg;
	static const char **buf;
	static size_t cap;
	const struct xp_cluster *c = xp_ui_cluster(ui);
	if (!names) {
		free(buf);
		buf = NULL;
		cap = 0;
		return 0;
	}
	if (c->n_nodes > cap) {
		cap = c->n_nodes;
		buf = xp_realloc(buf, cap * sizeof *buf);
	}
	for (size_t i = 0; i < c->n_nodes; i++)
		buf[i] = c->nodes[i]->name;
	*names = buf;
	return c->n_nodes;
}

/* ---- keys ---- */

static void switch_view(struct xp_ui *ui, size_t i)
{
	if (i < ui->nviews && i != ui->cur) {
		ui->cur = i;
		ui->help_open = false;
		ui->out_open = false;
	}
	ui->dirty = true;
}

static void open_prompt(struct xp_ui *ui)
{
	keypad(stdscr, FALSE); /* readline reads the raw escape sequences */
	curs_set(1);
	xp_prompt_open(ui->prompt, stdscr, ui->lay.status.y, ui->lay.status.w, ":");
	ui->dirty = true;
}

static void close_prompt(struct xp_ui *ui)
{
	keypad(stdscr, TRUE);
	curs_set(0);
	ui->dirty = true;
}

/* Feeds the prompt one key; returns false when the line was `:q`. */
static bool prompt_key(struct xp_ui *ui, int ch)
{
	int st;
	if (ch == 27) {
		/* A lone Esc cancels; Esc followed at once by more bytes is a key sequence. */
		timeout(30);
		int next = getch();
		timeout(100);
		st = xp_prompt_feed(ui->prompt, 27);
		if (st == XP_PROMPT_EDITING)
			st = xp_prompt_feed(ui->prompt, next == ERR ? -1 : next);
	} else {
		st = xp_prompt_feed(ui->prompt, ch);
	}
	if (st == XP_PROMPT_EDITING)
		return true;
	close_prompt(ui);
	if (st == XP_PROMPT_DONE) {
		if (is_quit(xp_prompt_line(ui->prompt)))
			return false;
		char *line = xp_strdup(xp_prompt_line(ui->prompt));
		run_command(ui, line);
		free(line);
	}
	return true;
}

static void filter_changed(struct xp_ui *ui)
{
	xp_filter_cache_text(ui->fcache, ui->filter);
	views_data_changed(ui);
}


static void filter_key(struct xp_ui *ui, int ch)
{
	size_t len = strlen(ui->filter);
	if (ch == 27 || ch == 3) {
		ui->filter[0] = '\0';
		ui->filtering = false;
		filter_changed(ui);
	} else if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		ui->filtering = false;
		const char *e = filter_error(ui);
		if (e)
			xp_ui_message(ui, XP_ROLE_FAIL, "filter: %s", e);
	} else if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
		if (len) {
			/* Remove a whole UTF-8 character. */
			do
				len--;
			while (len && ((unsigned char)ui->filter[len] & 0xc0) == 0x80);
			ui->filter[len] = '\0';
			filter_changed(ui);
		} else
			ui->filtering = false;
	} else if (ch == 21) { /* Ctrl-U */
		ui->filter[0] = '\0';
		filter_changed(ui);
	} else if (ch >= 32 && ch < 256 && ch != 127 && len + 1 < sizeof ui->filter) {
		ui->filter[len] = (char)ch;
		ui->filter[len + 1] = '\0';
		filter_changed(ui);
	}
	ui->dirty = true;
}

static int pane_key(struct xp_ui *ui, int ch, int *top, int total)
{
	int page = ui->lay.body.h > 3 ? ui->lay.body.h - 3 : 1;
	switch (ch) {
	case KEY_UP: case 'k': (*top)--; break;
	case KEY_DOWN: case 'j': (*top)++; break;
	case KEY_PPAGE: *top -= page; break;
	case KEY_NPAGE: case ' ': *top += page; break;
	case KEY_HOME: case 'g': *top = 0; break;
	case KEY_END: case 'G': *top = total; break;
	default: return 0;
	}
	int max = total - (ui->lay.body.h - 2);
	if (*top > max)
		*top = max;
	if (*top < 0)
		*top = 0;
	ui->dirty = true;
	return 1;
}

/* A wheel notch over the body: the help, the command output or the view's list scrolls. */
static void wheel(struct xp_ui *ui, const MEVENT *ev, int dir)
{
	struct xp_rect b = ui->lay.body;
	const struct slot *s = &ui->views[ui->cur];
	if (ev->y < b.y || ev->y >= b.y + b.h)
		return;
	if (ui->help_open || ui->out_open) {
		char **lines = NULL;
		int n = ui->help_open ? help_lines(ui, &lines) : (int)ui->n_out;
		if (lines)
			xp_strv_free(lines, (size_t)n);
		for (int i = 0; i < 3; i++)
			pane_key(ui, dir < 0 ? KEY_UP : KEY_DOWN, ui->help_open ? &ui->help_top : &ui->out_top, n);
		return;
	}
	if (!s->v->on_wheel)
		return;
	if (s->v->on_wheel(s->st, ui, dir) & XP_REACT_REFRESH)
		xp_poller_request(ui->poll, false);
	ui->dirty = true;
}

static void click(struct xp_ui *ui)
{
	MEVENT ev;
	if (getmouse(&ev) != OK)
		return;
	if (ev.bstate & BUTTON4_PRESSED) {
		wheel(ui, &ev, -1);
		return;
	}
	if (ev.bstate & BUTTON5_PRESSED) {
		wheel(ui, &ev, 1);
		return;
	}
	if (!(ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)))
		return;
	if (ev.y == ui->lay.tabs.y) {
		for (int i = 0; i < ui->ntabs; i++)
			if (ev.x >= ui->tabs[i].x && ev.x < ui->tabs[i].x + ui->tabs[i].w)
				switch_view(ui, (size_t)i);
		return;
	}
	struct xp_rect b = ui->lay.body;
	const struct slot *s = &ui->views[ui->cur];
	if (!ui->help_open && !ui->out_open && ev.y >= b.y && ev.y < b.y + b.h && s->v->on_click) {
		int r = s->v->on_click(s->st, ui, ev.y - b.y, ev.x - b.x);
		if (r & XP_REACT_REFRESH)
			xp_poller_request(ui->poll, false);
		ui->dirty = true;
	}
}

/* Does what a view's key asked (enum xp_reaction bits); returns false to quit. */
static bool react(struct xp_ui *ui, int r)
{
	if (r & XP_REACT_REFRESH)
		xp_poller_request(ui->poll, false);
	if (r & XP_REACT_QUIT)
		return false;
	if (r & (XP_REACT_REDRAW | XP_REACT_REFRESH))
		ui->dirty = true;
	return true;
}

/* Handles one key; returns false to quit. */
static bool key(struct xp_ui *ui, int ch)
{
	if (xp_prompt_active(ui->prompt)) {
		ui->dirty = true;
		return prompt_key(ui, ch);
	}
	if (ch == KEY_RESIZE) {
		ui->dirty = true;
		return true;
	}
	if (ui->lay.too_small)
		return ch != 'q' && ch != 3;
	if (ui->filtering) {
		filter_key(ui, ch);
		return true;
	}
	if (ui->help_open) {
		char **lines;
		int n = help_lines(ui, &lines);
		xp_strv_free(lines, (size_t)n);
		if (!pane_key(ui, ch, &ui->help_top, n)) {
			ui->help_open = false;
			ui->dirty = true;
		}
		return true;
	}
	if (ui->out_open) {
		if (!pane_key(ui, ch, &ui->out_top, (int)ui->n_out) &&
		    (ch == 27 || ch == 'q' || ch == '\n' || ch == '\r' || ch == KEY_ENTER)) {
			ui->out_open = false;
			ui->dirty = true;
			return true;
		}
		if (ch != ':' && ch != '?' && !(ch >= '1' && ch <= '9'))
			return true;
		ui->out_open = false;
	}
	struct slot *s = &ui->views[ui->cur];
	if (s->v->pre_key) {
		int r = s->v->pre_key(s->st, ui, ch);
		if (!(r & XP_REACT_UNHANDLED))
			return react(ui, r);
	}
	if (ch == 27) {
		if (s->v->nested && s->v->nested(s->st)) {
			s->v->on_key(s->st, ui, ch);
		} else if (ui->filter[0]) {
			ui->filter[0] = '\0';
			filter_changed(ui);
		}
		ui->dirty = true;
		return true;
	}
	switch (ch) {
	case 'q':
	case 3: /* Ctrl-C (the terminal is raw) */
		return false;
	case '\t':
		switch_view(ui, (ui->cur + 1) % ui->nviews);
		return true;
	case KEY_BTAB:
		switch_view(ui, (ui->cur + ui->nviews - 1) % ui->nviews);
		return true;
	case ':':
		open_prompt(ui);
		return true;
	case '/':
		ui->filtering = true;
		ui->dirty = true;
		return true;
	case '?':
		ui->help_open = true;
		ui->help_top = 0;
		ui->dirty = true;
		return true;
	case 'Z':
		/* htop's pause: what is shown stays until Z again, which shows the newest at once. */
		ui->paused = !ui->paused;
		xp_ui_message(ui, XP_ROLE_DIM, "%s", ui->paused ? "paused: Z resumes" : "resumed");
		ui->dirty = true;
		return true;
	case 'r':
		/* The operator asked: agents that are backing off are asked too. */
		xp_poller_request(ui->poll, true);
		xp_ui_message(ui, XP_ROLE_DIM, "refreshing...");
		return true;
	case KEY_MOUSE:
		click(ui);
		return true;
	default:
		break;
	}
	if (ch >= '1' && ch <= '9') {
		for (size_t i = 0; i < ui->nviews; i++)
			if (ui->views[i].v->order == ch - '0')
				switch_view(ui, i);
		return true;
	}
	if (s->v->on_key)
		return react(ui, s->v->on_key(s->st, ui, ch));
	return true;
}

/* ---- views as command strings (`:view topology --sort temp-`, bookmarks, --view) ---- */

/* A view by name, unique prefix or tab number; NULL when none or ambiguous. */
static long find_view(const struct xp_ui *ui, const char *name)
{
	long hit = -1;
	size_t len = strlen(name);
	for (size_t i = 0; i < ui->nviews; i++) {
		const struct xp_view *v = ui->views[i].v;
		char num[8];
		snprintf(num, sizeof num, "%d", v->order);
		if (strcmp(v->name, name) == 0 || strcmp(num, name) == 0)
			return (long)i;
		if (len && strncmp(v->name, name, len) == 0)
			hit = hit < 0 ? (long)i : -2;
	}
	return hit >= 0 ? hit : -1;
}

/* The shown view's command string: its name, the filter, the view's own options. */
static const char *view_string(struct xp_ui *ui, char *buf, size_t len)
{
	const struct slot *s = &ui->views[ui->cur];
	int n = snprintf(buf, len, "%s", s->v->name);
	if (ui->filter[0] && n >= 0 && (size_t)n < len) {
		/* Quoted for xp_cmd_split: a filter holds spaces, operators and quotes. */
		char *q = xp_cmd_quote_always(ui->filter);
		n += snprintf(buf + n, len - (size_t)n, " --filter %s", q);
		free(q);
	}
	if (s->v->opts && n >= 0 && (size_t)n < len)
		s->v->opts(s->st, buf + n, len - (size_t)n);
	return buf;
}

static void view_string_hook(struct xp_ctx *ctx, char *buf, size_t len)
{
	view_string(ctx->ui, buf, len);
}

static int view_hook(struct xp_ctx *ctx, const char *name, const char *const *keys, const char *const *vals, size_t n,
		     struct xp_err *err)
{
	struct xp_ui *ui = ctx->ui;
	long i = find_view(ui, name);
	if (i < 0) {
		char names[256] = "";
		for (size_t k = 0; k < ui->nviews; k++)
			snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? ", " : "",
				 ui->views[k].v->name);
		return xp_errf(err, "no view '%s' (views: %s)", name, names);
	}
	struct slot *s = &ui->views[i];
	/* What can be checked first is: an option the view does not take, a filter too long for
	 * the console's line or that does not parse for the view's rows. The view's own options
	 * are applied in order (one it refuses stops there, the earlier ones stay); the filter
	 * only once they all were. */
	const char *filter = NULL;
	for (size_t k = 0; k < n; k++) {
		if (strcmp(keys[k], "filter") != 0) {
			if (!s->v->set_opt)
				return xp_errf(err, "view %s takes no --%s", s->v->name, keys[k]);
			continue;
		}
		if (strlen(vals[k]) >= sizeof ui->filter)
			return xp_errf(err, "--filter: longer than the console's %zu bytes", sizeof ui->filter - 1);
		struct xp_filter *f = xp_filter_compile(vals[k], s->v->filter_fields, err);
		if (!f) {
			xp_err_prefix(err, "--filter");
			return -1;
		}
		xp_filter_free(f);
		filter = vals[k];
	}
	for (size_t k = 0; k < n; k++) {
		if (strcmp(keys[k], "filter") == 0)
			continue;
		char msg[512] = "";
		if (s->v->set_opt(s->st, ui, keys[k], vals[k], msg, sizeof msg) < 0)
			return xp_errf(err, "%s", msg[0] ? msg : "bad option");
	}
	if (filter) {
		snprintf(ui->filter, sizeof ui->filter, "%s", filter);
		filter_changed(ui);
	}
	switch_view(ui, (size_t)i);
	/* Said back as the one line of output, which the prompt shows as its message. */
	char vs[1024];
	fprintf(ctx->out, "view %s\n", view_string(ui, vs, sizeof vs));
	return 0;
}

/* --view STRING: the view the console opens on, as if typed at the prompt. */
static void open_start_view(struct xp_ui *ui)
{
	if (!ui->ctx->view || !*ui->ctx->view)
		return;
	char *line = xp_asprintf("view %s", ui->ctx->view);
	run_command(ui, line);
	free(line);
}

/* ---- set-up ---- */

static int cmp_order(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;
	return x->v->order - y->v->order;
}

static char *history_path(void)
{
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	if (state && *state)
		return xp_asprintf("%s/xpool/history", state);
	if (home && *home)
		return xp_asprintf("%s/.local/state/xpool/history", home);
	return NULL;
}

static void load_theme(struct xp_ui *ui)
{
	struct xp_ctx *ctx = ui->ctx;
	struct xp_err err = {{0}};
	xp_theme_default(&ui->theme);
	if (ctx->theme && xp_theme_load(ctx->theme, &ui->theme, &err) < 0) {
		/* A broken theme must not keep the console from opening: say why, use the default. */
		xp_theme_default(&ui->theme);
		xp_ui_message(ui, XP_ROLE_FAIL, "theme: %s (using default)", err.msg);
		xp_event_add(&ui->events, time(NULL), XP_SEV_WARN, "", "theme: %s", err.msg);
	}
	ui->colour = !ctx->no_color && has_colors();
	xp_theme_apply(&ui->theme, ui->colour);
}

int xp_ui_run(struct xp_ctx *ctx)
{
	struct xp_ui *ui = xp_calloc(1, sizeof *ui);
	ui->ctx = ctx;
	ui->fcache = xp_filter_cache_new();
	xp_event_log_init(&ui->events, EVENT_LOG_CAP);
	ui->events.quiet = problem_quiet;
	ui->events.quiet_arg = ui;
	ui->acks_stale = true;
	ui->g = xp_glyphs_pick(ctx->ascii);
	xp_draw_set_ellipsis(ui->g->ellipsis);
	for (size_t i = 0; i < N_VIEWS; i++)
		ui->views[i].v = all_views[i];
	ui->nviews = N_VIEWS;
	qsort(ui->views, ui->nviews, sizeof ui->views[0], cmp_order);

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_quit_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	/* Short Esc delay: Esc is "back" here, and 1 s (the default) feels broken. */
	if (!getenv("ESCDELAY"))
		set_escdelay(25);
	if (!initscr()) {
		fprintf(stderr, "xpool: cannot start the console on this terminal\n");
		xp_event_log_free(&ui->events);
		xp_filter_cache_free(ui->fcache);
	xp_acks_free(&ui->acks);
		free(ui);
		return XP_EXIT_ERROR;
	}
	/* raw, not cbreak: Ctrl-C arrives as a key, so it can cancel the prompt
	 * instead of killing the console; outside the prompt it quits. */
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	timeout(100);
	mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	mouseinterval(0);
	load_theme(ui);

	char *hist = history_path();
	ui->prompt = xp_prompt_new(hist, node_names, ui);
	free(hist);
	xp_prompt_set_attrs(ui->prompt, xp_theme_attr(XP_ROLE_PROMPT), xp_theme_attr(XP_ROLE_DIM));
	ctx->ui = ui;
	ctx->ui_theme = apply_theme_hook;
	ctx->ui_agent = agent_hook;
	ctx->ui_agent_list = agent_list_hook;
	ctx->ui_view = view_hook;
	ctx->ui_view_string = view_string_hook;
	for (size_t i = 0; i < ui->nviews; i++)
		if (ui->views[i].v->create)
			ui->views[i].st = ui->views[i].v->create(ui);

	int rc = XP_EXIT_OK;
	ui->history = xp_history_new((int)(ctx->delay + 0.5));
	ui->poll = xp_poller_new();
	if (xp_poller_start(ui->poll, ctx) < 0) {
		xp_ui_message(ui, XP_ROLE_FAIL, "cannot start the refresh thread");
		rc = XP_EXIT_ERROR;
	}
	if (rc == XP_EXIT_OK)
		open_start_view(ui);
	ui->dirty = true;
	time_t last_draw = 0;
	bool running = rc == XP_EXIT_OK;
	while (running && !quit_signal) {
		take_result(ui);
		for (size_t i = 0; i < ui->nviews && running; i++)
			if (ui->views[i].v->tick)
				running = react(ui, ui->views[i].v->tick(ui->views[i].st, ui));
		time_t now = time(NULL);
		/* The clock and the age in the header move once a second. */
		if (ui->dirty || now != last_draw) {
			draw(ui);
			last_draw = now;
		}
		/* Until the first data lands, look for it often: the first frame should not
		 * wait out a whole key timeout. */
		timeout(ui->loaded ? 100 : 5);
		int ch = getch();
		if (ch == ERR)
			continue;
		running = key(ui, ch);
		/* Take every key already typed before drawing again, so a burst costs one frame. */
		while (running && !quit_signal && !ui->lay.too_small) {
			timeout(0);
			ch = getch();
			timeout(100);
			if (ch == ERR)
				break;
			running = key(ui, ch);
		}
	}

	/* The terminal first: whatever happens to the refresh thread, the user gets it back. */
	endwin();
	xp_poller_stop(ui->poll);
	for (size_t i = 0; i < ui->nviews; i++)
		if (ui->views[i].v->destroy)
			ui->views[i].v->destroy(ui->views[i].st);
	struct xp_err herr = {{0}};
	if (xp_prompt_save(ui->prompt, &herr) < 0)
		/* ctx->err: the masking stream, as every message (the error quotes a path). */
		fprintf(ctx->err, "xpool: history not saved: %s\n", xp_mask_controls(herr.msg));
	xp_prompt_free(ui->prompt);
	node_names(ui, NULL);
	ctx->ui = NULL;
	ctx->ui_theme = NULL;
	ctx->ui_agent = NULL;
	ctx->ui_agent_list = NULL;
	ctx->ui_view = NULL;
	ctx->ui_view_string = NULL;
	out_clear(ui);
	xp_store_close(ui->store);
	xp_history_free(ui->history);
	xp_event_log_free(&ui->events);
	xp_filter_cache_free(ui->fcache);
	xp_acks_free(&ui->acks);
	free(ui);
	return rc;
}
