/* slurm_ask.c: Slurm's answer beside xpool's (slurm_ask.h). The question runs on a detached
 * thread that owns what it reads (the request text, the configuration path); who gives up
 * first of the asker and the thread frees it, decided by one atomic exchange. */
#include "slurm_ask.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "place_export.h"
#include "slurm_compare.h"

const char **xp_slurm_ask_nodes(const struct xp_place_result *r, size_t *n)
{
	const char **v = xp_calloc(r->n_replicas + 1, sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < r->n_replicas; i++) {
		size_t j = 0;
		while (j < k && strcmp(v[j], r->replicas[i].node))
			j++;
		if (j == k)
			v[k++] = r->replicas[i].node;
	}
	*n = k;
	return v;
}

/* True when the two node lists hold the same set (each list's names are distinct). */
static bool same_nodes(const char **x, size_t nx, char **y, size_t ny)
{
	if (nx != ny)
		return false;
	for (size_t i = 0; i < nx; i++) {
		size_t j = 0;
		while (j < ny && strcmp(x[i], y[j]))
			j++;
		if (j == ny)
			return false;
	}
	return true;
}

/* The best score xpool gave a replica on node (what its strategy chose the node by). */
static double node_score(const struct xp_place_result *r, const char *node)
{
	double best = -1e300;
	for (size_t i = 0; i < r->n_replicas; i++)
		if (!strcmp(r->replicas[i].node, node) && r->replicas[i].score > best)
			best = r->replicas[i].score;
	return best;
}

char *xp_slurm_ask_reason(const struct xp_place_result *r, const struct xp_slurm_answer *s, bool now)
{
	if (!r->placed)
		return xp_asprintf("xpool refuses it: %s", r->summary ? r->summary : "no node fits");
	if (!s->will_run)
		return xp_asprintf("xpool places it now on devices it sees free; Slurm refuses the request (%s)", s->error ? s->error : "no reason given");
	size_t nx = 0;
	const char **xn = xp_slurm_ask_nodes(r, &nx);
	if (same_nodes(xn, nx, s->nodes, s->n_nodes) && now) {
		free(xn);
		return NULL;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!now)
		fprintf(f, "xpool places it now on devices it sees free; Slurm would start it only at %s "
			   "(it holds them for another job, or reserves them)", s->start_text);
	else {
		fprintf(f, "xpool's %s strategy chose", xp_strategy_name(r->strategy));
		for (size_t i = 0; i < nx; i++)
			fprintf(f, "%s %s (score %.1f)", i ? "," : "", xn[i], node_score(r, xn[i]));
		fprintf(f, "; Slurm chose %s (it does not say why)", s->nodelist);
	}
	fclose(f);
	free(xn);
	return buf;
}

enum { ASK_RUNNING, ASK_DONE, ASK_ABANDONED };

struct xp_slurm_ask {
	char *conf, *request;
	bool hold;             /* XPOOL_SLURM_ASK_HOLD: wait to be abandoned (tests) */
	atomic_int state;      /* enum above: who frees is who changes it second */
	/* the thread's, read by the asker once state is ASK_DONE */
	int rc;
	struct xp_err err;
	struct xp_slurm_answer s;
	time_t asked;
};

static void ask_free(struct xp_slurm_ask *a)
{
	xp_slurm_answer_clear(&a->s);
	free(a->conf);
	free(a->request);
	free(a);
}

/* Questions whose thread still runs (given up or not): each may hold an sbatch for up to 30 s,
 * and a user pressing r again and again must not pile them up. */
#define MAX_IN_FLIGHT 4
static atomic_int in_flight;

int xp_slurm_ask_in_flight(void)
{
	return atomic_load(&in_flight);
}

static void *ask_thread(void *arg)
{
	struct xp_slurm_ask *a = arg;
	while (a->hold && atomic_load(&a->state) == ASK_RUNNING) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	if (atomic_load(&a->state) == ASK_RUNNING)
		a->rc = xp_slurm_test_only(a->conf, a->request, &a->s, &a->asked, &a->err);
	int expect = ASK_RUNNING;
	if (!atomic_compare_exchange_strong(&a->state, &expect, ASK_DONE))
		ask_free(a); /* abandoned while it ran: nobody else will */
	atomic_fetch_sub(&in_flight, 1);
	return NULL;
}

char *xp_slurm_ask_request(const struct xp_place_result *r, const struct xp_job *job, const struct xp_cluster *c,
			   const struct xp_manifest *const *ms, size_t nm, struct xp_err *err)
{
	if (!r->placed) {
		xp_errf(err, "xpool placed nothing, so it has no sbatch request to ask with");
		return NULL;
	}
	struct xp_export_opts eo = {.strategy = r->strategy};
	char *script = xp_place_export(XP_EXPORT_SLURM, r, job, c, ms, nm, &eo, err);
	if (!script)
		return NULL;
	char *req = xp_slurm_request(script);
	free(script);
	return req;
}

struct xp_slurm_ask *xp_slurm_ask_start(const char *conf, const char *request, struct xp_err *err)
{
	if (atomic_fetch_add(&in_flight, 1) >= MAX_IN_FLIGHT) {
		atomic_fetch_sub(&in_flight, 1);
		xp_errf(err, "%d earlier questions to Slurm are still being answered; ask again (r) when they are",
			MAX_IN_FLIGHT);
		return NULL;
	}
	struct xp_slurm_ask *a = xp_calloc(1, sizeof *a);
	a->request = xp_strdup(request);
	a->conf = xp_strdup(conf);
	const char *hold = getenv("XPOOL_SLURM_ASK_HOLD");
	a->hold = hold && *hold;
	atomic_init(&a->state, ASK_RUNNING);
	pthread_t th;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	int rc = pthread_create(&th, &at, ask_thread, a);
	pthread_attr_destroy(&at);
	if (rc != 0) {
		ask_free(a);
		atomic_fetch_sub(&in_flight, 1);
		xp_errf(err, "cannot start a thread to ask Slurm");
		return NULL;
	}
	return a;
}

const char *xp_slurm_ask_text(const struct xp_slurm_ask *a)
{
	return a->request;
}

bool xp_slurm_ask_done(struct xp_slurm_ask *a)
{
	return atomic_load(&a->state) == ASK_DONE;
}

void xp_slurm_ask_lines(struct xp_slurm_ask *a, const struct xp_place_result *r, char **line, char **verdict)
{
	*line = *verdict = NULL;
	if (a->rc < 0) {
		*line = xp_asprintf("slurm: could not ask: %s", a->err.msg);
		return;
	}
	const struct xp_slurm_answer *s = &a->s;
	bool now = xp_slurm_starts_now(s, a->asked);
	if (s->will_run) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		fprintf(f, "slurm: would start on ");
		for (size_t i = 0; i < s->n_nodes; i++)
			fprintf(f, "%s%s", i ? "," : "", s->nodes[i]);
		fprintf(f, " at %s UTC%s", s->start_text, now ? " (now)" : "");
		if (s->partition)
			fprintf(f, " in partition %s", s->partition);
		fclose(f);
		*line = buf;
	} else
		*line = xp_asprintf("slurm: refused: %s", s->error ? s->error : "no reason given");
	char *why = xp_slurm_ask_reason(r, s, now);
	*verdict = why ? xp_asprintf("differ: %s", why) : xp_strdup("agree");
	free(why);
}

void xp_slurm_ask_abandon(struct xp_slurm_ask *a)
{
	if (!a)
		return;
	int expect = ASK_RUNNING;
	if (!atomic_compare_exchange_strong(&a->state, &expect, ASK_ABANDONED))
		ask_free(a); /* it had answered: the thread is gone */
}
