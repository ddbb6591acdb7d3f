/* live.c: the console's source, loaded again and again. */
#include "live.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent_client.h"
#include "agent_ctl.h"

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
	xp_agent_pool_free(old);
}

void xp_live_free(struct xp_live *l)
{
	if (!l)
		return;
	xp_agent_pool_free(l->pool);
	xp_strv_free(l->pending, l->n_pending);
	xp_strv_free(l->log, l->n_log);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

void xp_live_reset(struct xp_live *l)
{
	l->need_pool = true;
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
	if (l->pool) {
		xp_agent_pool_poll(l->pool, force);
		/* Only agents, all answering 304 and none down: nothing to parse or copy. This is
		 * what keeps a console over hundreds of agents cheap. */
		size_t down = 0;
		xp_agent_pool_counts(l->pool, NULL, &down);
		if (!xp_source_has_base(so) && xp_agent_pool_generation(l->pool) == l->last_gen && !down) {
			*unchanged = true;
			return NULL;
		}
	}
	struct xp_cluster *c = xp_source_load_all(so, db, l->pool, err);
	if (c && l->pool)
		l->last_gen = xp_agent_pool_generation(l->pool);
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
