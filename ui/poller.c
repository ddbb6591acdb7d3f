/* poller.c: the console's refresh thread. */
#include "poller.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "live.h"
#include "source.h"
#include "store.h"

/* Most `:agent` changes waiting for the thread; more means the user is pasting a list. */
#define MAX_OPS 10000
/* How long a load waits for slow agents, seconds: the refresh interval, within these bounds.
 * An answer on a LAN takes milliseconds; what is still in flight after the longest wait is
 * driven between loads (xp_live_pump) and shown by the next one, so a hung agent delays
 * the others' refresh by at most POLL_CYCLE_MAX_S, not by its timeout. */
#define POLL_CYCLE_MIN_S 0.25
#define POLL_CYCLE_MAX_S 0.5

static void *poll_main(void *arg)
{
	struct xp_poller *p = arg;
	pthread_mutex_lock(&p->mu);
	bool first = true;
	while (!p->stop) {
		if (!first && !p->want) {
			struct timespec until;
			clock_gettime(CLOCK_REALTIME, &until);
			double whole = (double)(long)p->delay;
			until.tv_sec += (time_t)whole;
			until.tv_nsec += (long)((p->delay - whole) * 1e9);
			if (until.tv_nsec >= 1000000000L) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			/* Requests a load left in flight (a slow or hung agent) are driven meanwhile,
			 * without the lock: a reply is read when it comes, and a timeout judged on
			 * time, not at the next load. A request or stop wakes it (xp_live_wake). */
			double delay = p->delay;
			pthread_mutex_unlock(&p->mu);
			xp_live_pump(p->live, delay);
			pthread_mutex_lock(&p->mu);
			while (!p->stop && !p->want) {
				if (pthread_cond_timedwait(&p->cv, &p->mu, &until) == ETIMEDOUT)
					break;
			}
			if (p->stop)
				break;
		}
		bool force = first || p->force;
		first = false;
		p->want = false;
		p->force = false;
		p->busy = true;
		if (p->agents_changed)
			xp_live_reset(p->live);
		p->agents_changed = false;
		char **ops = p->ops;
		size_t n_ops = p->n_ops;
		p->ops = NULL;
		p->n_ops = p->cap_ops = 0;
		struct xp_source_opts so = {
			.topology = xp_strdup(p->topology),
			.inventory = xp_strdup(p->inventory),
			.replay = xp_strdup(p->replay),
			.agents = xp_strdup(p->agents),
			.agents_file = xp_strdup(p->agents_file),
			.agent_token = xp_strdup(p->agent_token),
			.agent_ca = xp_strdup(p->agent_ca),
			.agent_timeout = p->agent_timeout,
			.slurm = xp_strdup(p->slurm),
			.k8s = p->k8s,
			.k8s_server = xp_strdup(p->k8s_server),
			.k8s_token_file = xp_strdup(p->k8s_token),
			.k8s_ca = xp_strdup(p->k8s_ca),
		};
		char *db = xp_strdup(p->db);
		/* One hung agent must not hold back the others' data until its timeout. */
		double cycle = p->delay < POLL_CYCLE_MAX_S ? p->delay : POLL_CYCLE_MAX_S;
		if (cycle < POLL_CYCLE_MIN_S)
			cycle = POLL_CYCLE_MIN_S;
		pthread_mutex_unlock(&p->mu);
		xp_live_set_cycle(p->live, cycle);

		/* The slow part, with the lock released so keys are never held up. */
		struct xp_err err = {{0}};
		bool unchanged;
		struct xp_cluster *c = xp_live_load(p->live, &so, db, ops, n_ops, force, &unchanged, &err);
		free(db);
		size_t up = 0, down = 0, n_log = 0;
		bool have_agents = xp_live_agent_counts(p->live, &up, &down);
		char *text = xp_live_agent_list(p->live);
		struct xp_agent_snap *snaps;
		size_t n_snaps = xp_live_agent_snaps(p->live, &snaps);
		char **log = xp_live_take_log(p->live, &n_log);
		size_t n_hist = 0;
		struct xp_hist_batch *hist = xp_live_take_history(p->live, &n_hist);
		struct xp_live_health health;
		bool have_health = xp_live_health(p->live, &health);
		free((char *)so.topology);
		free((char *)so.inventory);
		free((char *)so.replay);
		free((char *)so.agents);
		free((char *)so.agents_file);
		free((char *)so.agent_token);
		free((char *)so.agent_ca);
		free((char *)so.slurm);
		free((char *)so.k8s_server);
		free((char *)so.k8s_token_file);
		free((char *)so.k8s_ca);

		pthread_mutex_lock(&p->mu);
		p->busy = false;
		if (c || !unchanged) {
			xp_cluster_free(p->result);
			p->result = c;
			snprintf(p->error, sizeof p->error, "%s", c ? "" : err.msg);
		}
		p->unchanged = unchanged && !p->result;
		p->have_result = true;
		p->have_agents = have_agents;
		p->health = health;
		p->have_health = have_health;
		p->agents_up = up;
		p->agents_down = down;
		free(p->agents_text);
		p->agents_text = text;
		xp_agent_snaps_free(p->snaps, p->n_snaps);
		p->snaps = snaps;
		p->n_snaps = n_snaps;
		p->snaps_gen++;
		for (size_t i = 0; i < n_log; i++) {
			xp_grow(&p->log, sizeof *p->log, p->n_log, &p->cap_log);
			p->log[p->n_log++] = log[i];
		}
		free(log);
		for (size_t i = 0; i < n_hist; i++) {
			xp_grow(&p->hist, sizeof *p->hist, p->n_hist, &p->cap_hist);
			p->hist[p->n_hist++] = hist[i];
		}
		free(hist);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static void replace(char **slot, const char *v)
{
	free(*slot);
	*slot = xp_strdup(v);
}

static bool differs(const char *a, const char *b)
{
	return (a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0);
}

void xp_poller_set_source(struct xp_poller *p, const struct xp_ctx *ctx)
{
	pthread_mutex_lock(&p->mu);
	replace(&p->topology, ctx->topology);
	replace(&p->inventory, ctx->inventory);
	replace(&p->replay, ctx->replay);
	replace(&p->slurm, ctx->slurm);
	p->k8s = ctx->k8s;
	replace(&p->k8s_server, ctx->k8s_server);
	replace(&p->k8s_token, ctx->k8s_token);
	replace(&p->k8s_ca, ctx->k8s_ca);
	/* The pool (connections, backoff, last good data) survives anything but a change of the
	 * agent options themselves. */
	if (differs(p->agents, ctx->agents) || differs(p->agents_file, ctx->agents_file) ||
	    differs(p->agent_token, ctx->agent_token) || differs(p->agent_ca, ctx->agent_ca) ||
	    p->agent_timeout != ctx->agent_timeout) {
		replace(&p->agents, ctx->agents);
		replace(&p->agents_file, ctx->agents_file);
		replace(&p->agent_token, ctx->agent_token);
		replace(&p->agent_ca, ctx->agent_ca);
		p->agent_timeout = ctx->agent_timeout;
		p->agents_changed = true;
	}
	free(p->db);
	p->db = ctx->db ? xp_strdup(ctx->db) : xp_store_default_path();
	p->delay = ctx->delay;
	pthread_mutex_unlock(&p->mu);
}

void xp_poller_request(struct xp_poller *p, bool force)
{
	pthread_mutex_lock(&p->mu);
	p->want = true;
	p->force |= force;
	xp_live_wake(p->live); /* ends a pump between loads */
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

int xp_poller_agent(struct xp_poller *p, bool add, const char *url, struct xp_err *err)
{
	if (xp_live_url_check(url, err) < 0)
		return -1;
	pthread_mutex_lock(&p->mu);
	if (p->n_ops >= MAX_OPS) {
		pthread_mutex_unlock(&p->mu);
		return xp_errf(err, "too many agent changes waiting; try again in a moment");
	}
	xp_grow(&p->ops, sizeof *p->ops, p->n_ops, &p->cap_ops);
	p->ops[p->n_ops++] = xp_asprintf("%c%s", add ? '+' : '-', url);
	/* The new agent is polled at once, not after the others' backoff. */
	p->want = true;
	xp_live_wake(p->live);
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return 0;
}

struct xp_poller *xp_poller_new(void)
{
	struct xp_poller *p = xp_calloc(1, sizeof *p);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	atomic_init(&p->cancel, false);
	p->live = xp_live_new(&p->cancel);
	return p;
}

int xp_poller_start(struct xp_poller *p, const struct xp_ctx *ctx)
{
	xp_poller_set_source(p, ctx);
	if (pthread_create(&p->thread, NULL, poll_main, p) != 0)
		return -1;
	p->started = true;
	return 0;
}

bool xp_poller_take(struct xp_poller *p, struct xp_poller_news *news)
{
	memset(news, 0, sizeof *news);
	if (pthread_mutex_trylock(&p->mu) != 0)
		return false;
	bool any = p->have_result || p->n_log;
	if (p->have_result) {
		news->cluster = p->result;
		news->failed = !p->result && !p->unchanged;
		news->fresh = !news->failed;
		snprintf(news->error, sizeof news->error, "%s", p->error);
		p->result = NULL;
		p->have_result = false;
	}
	news->log = p->log;
	news->n_log = p->n_log;
	p->log = NULL;
	p->n_log = p->cap_log = 0;
	news->hist = p->hist;
	news->n_hist = p->n_hist;
	p->hist = NULL;
	p->n_hist = p->cap_hist = 0;
	pthread_mutex_unlock(&p->mu);
	return any;
}

bool xp_poller_agent_counts(struct xp_poller *p, size_t *up, size_t *down)
{
	pthread_mutex_lock(&p->mu);
	bool have = p->have_agents;
	*up = p->agents_up;
	*down = p->agents_down;
	pthread_mutex_unlock(&p->mu);
	return have;
}

bool xp_poller_engine_health(struct xp_poller *p, struct xp_live_health *h)
{
	pthread_mutex_lock(&p->mu);
	bool have = p->have_health;
	*h = p->health;
	pthread_mutex_unlock(&p->mu);
	return have;
}

bool xp_poller_agent_snaps(struct xp_poller *p, uint64_t *gen, struct xp_agent_snap **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	/* The thread holds the lock only to hand results over; a key never waits on a poll. */
	pthread_mutex_lock(&p->mu);
	bool changed = p->snaps_gen != *gen;
	if (changed) {
		*gen = p->snaps_gen;
		*n = p->n_snaps;
		*out = xp_agent_snaps_copy(p->snaps, p->n_snaps);
	}
	pthread_mutex_unlock(&p->mu);
	return changed;
}

char *xp_poller_agents_text(struct xp_poller *p)
{
	pthread_mutex_lock(&p->mu);
	char *t = xp_strdup(p->agents_text);
	pthread_mutex_unlock(&p->mu);
	return t;
}

void xp_poller_stop(struct xp_poller *p)
{
	if (!p)
		return;
	if (p->started) {
		pthread_mutex_lock(&p->mu);
		p->stop = true;
		atomic_store(&p->cancel, true);
		xp_live_wake(p->live);
		pthread_cond_signal(&p->cv);
		pthread_mutex_unlock(&p->mu);
		/* A poll of agents stops at once; a load stuck in a vendor tool or a bad file is
		 * abandoned, with this memory: the process is about to exit. */
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 3;
		if (pthread_timedjoin_np(p->thread, NULL, &until) != 0)
			return;
	}
	xp_cluster_free(p->result);
	xp_live_free(p->live);
	free(p->topology);
	free(p->inventory);
	free(p->replay);
	free(p->db);
	free(p->agents);
	free(p->agents_file);
	free(p->agent_token);
	free(p->agent_ca);
	free(p->slurm);
	free(p->k8s_server);
	free(p->k8s_token);
	free(p->k8s_ca);
	free(p->agents_text);
	xp_agent_snaps_free(p->snaps, p->n_snaps);
	xp_strv_free(p->ops, p->n_ops);
	xp_strv_free(p->log, p->n_log);
	for (size_t i = 0; i < p->n_hist; i++)
		xp_hist_batch_free(&p->hist[i]);
	free(p->hist);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p);
}
