/* whatif.c: the scenario (a copy of the cluster and queue set with the changes made), and
 * the baseline and the scenario simulated at once on two threads (whatif.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "place.h"
#include "simgen.h"
#include "whatif.h"

/* ---------------------------------------------------------------- copies */

static void labels_copy(struct xp_labels *dst, const struct xp_labels *src)
{
	memset(dst, 0, sizeof *dst);
	for (size_t i = 0; i < src->n; i++)
		xp_labels_append(dst, src->keys[i], src->values[i]);
}

static struct xp_job *job_copy(const struct xp_job *s)
{
	if (!s)
		return NULL;
	struct xp_job *j = xp_calloc(1, sizeof *j);
	*j = *s;
	j->name = xp_strdup(s->name);
	j->queue = xp_strdup(s->queue);
	j->tenant = xp_strdup(s->tenant);
	j->groups = xp_calloc(s->n_groups + 1, sizeof *j->groups);
	for (size_t i = 0; i < s->n_groups; i++) {
		const struct xp_task_group *a = &s->groups[i];
		struct xp_task_group *b = &j->groups[i];
		*b = *a;
		b->name = xp_strdup(a->name);
		b->slice = xp_strdup(a->slice);
		b->vendor = xp_strdup(a->vendor);
		b->model = xp_strdup(a->model);
		b->validated_case = xp_strdup(a->validated_case);
		labels_copy(&b->labels, &a->labels);
	}
	return j;
}

void xp_qjob_copy(struct xp_qjob *dst, const struct xp_qjob *src)
{
	*dst = *src;
	dst->name = xp_strdup(src->name);
	dst->queue = xp_strdup(src->queue);
	dst->tenant = xp_strdup(src->tenant);
	dst->reason_text = xp_strdup(src->reason_text);
	dst->nodes = xp_strdup(src->nodes);
	dst->engine_id = xp_strdup(src->engine_id);
	dst->engine_gres = xp_strdup(src->engine_gres);
	dst->spec = job_copy(src->spec);
	if (src->alloc.n) {
		dst->alloc.slots = xp_malloc(src->alloc.n * sizeof *dst->alloc.slots);
		memcpy(dst->alloc.slots, src->alloc.slots, src->alloc.n * sizeof *dst->alloc.slots);
	} else
		dst->alloc.slots = NULL;
}

void xp_qset_copy(struct xp_qset *dst, const struct xp_qset *src)
{
	memset(dst, 0, sizeof *dst);
	dst->classes = xp_calloc(src->n_classes + 1, sizeof *dst->classes);
	for (size_t i = 0; i < src->n_classes; i++) {
		const struct xp_rclass *a = &src->classes[i];
		dst->classes[i] = *a;
		dst->classes[i].name = xp_strdup(a->name);
		dst->classes[i].vendor = xp_strdup(a->vendor);
		dst->classes[i].model = xp_strdup(a->model);
		dst->classes[i].label = xp_strdup(a->label);
	}
	dst->n_classes = src->n_classes;
	dst->queues = xp_calloc(src->n_queues + 1, sizeof *dst->queues);
	for (size_t i = 0; i < src->n_queues; i++) {
		const struct xp_queue *a = &src->queues[i];
		struct xp_queue *b = &dst->queues[i];
		*b = *a;
		b->name = xp_strdup(a->name);
		b->parent = xp_strdup(a->parent);
		b->engine_text = xp_strdup(a->engine_text);
		b->tenants = xp_calloc(a->n_tenants + 1, sizeof *b->tenants);
		for (size_t k = 0; k < a->n_tenants; k++)
			b->tenants[k] = xp_strdup(a->tenants[k]);
		b->quotas = xp_calloc(a->n_quotas + 1, sizeof *b->quotas);
		for (size_t k = 0; k < a->n_quotas; k++) {
			b->quotas[k] = a->quotas[k];
			b->quotas[k].rclass = xp_strdup(a->quotas[k].rclass);
		}
	}
	dst->n_queues = src->n_queues;
	for (size_t i = 0; i < src->n_notes; i++)
		xp_strv_add(&dst->notes, &dst->n_notes, src->notes[i]);
}

/* ---------------------------------------------------------------- changes */

/* A name for messages: at most 64 bytes, control bytes masked. */
static const char *shown(const char *s, char *buf, size_t len)
{
	snprintf(buf, len, "%.64s", s);
	return xp_mask_controls(buf);
}

int xp_whatif_change_parse(int kind, const char *text, struct xp_whatif_change *c, struct xp_err *err)
{
	memset(c, 0, sizeof *c);
	c->kind = kind;
	char b[80];
	char *colon = strchr(text, ':'), *end = NULL;
	switch (kind) {
	case XP_WI_DRAIN:
		if (!*text || strlen(text) > 255)
			return xp_errf(err, "--drain: '%s' is not a node name", shown(text, b, sizeof b));
		c->node = xp_strdup(text);
		return 0;
	case XP_WI_FAIL: {
		colon = strrchr(text, ':');
		long dev = colon ? strtol(colon + 1, &end, 10) : -1;
		if (!colon || colon == text || !colon[1] || *end || dev < 0 || dev >= 4096 || colon - text > 255)
			return xp_errf(err, "--fail: '%s' is not NODE:DEVICE (a device index)", shown(text, b, sizeof b));
		c->node = xp_strndup(text, (size_t)(colon - text));
		c->dev = (int)dev;
		return 0;
	}
	case XP_WI_ADD: {
		errno = 0;
		unsigned long long n = colon ? strtoull(text, &end, 10) : 0;
		if (!colon || end != colon || n < 1 || n > 100000 || errno || !colon[1] || text[0] == '-' ||
		    text[0] == '+')
			return xp_errf(err, "--add: '%s' is not N:KIND (1 to 100000 nodes of a sim gen kind)",
				       shown(text, b, sizeof b));
		c->count = (size_t)n;
		c->node_kind = xp_strdup(colon + 1);
		return 0;
	}
	case XP_WI_QUOTA: {
		const char *eq = strchr(text, '=');
		if (!colon || !eq || eq < colon || colon == text || eq == colon + 1)
			return xp_errf(err, "--quota: '%s' is not QUEUE:CLASS=N", shown(text, b, sizeof b));
		c->queue = xp_strndup(text, (size_t)(colon - text));
		c->rclass = xp_strndup(colon + 1, (size_t)(eq - colon - 1));
		if (xp_qname_check(c->queue, "--quota: queue name", err) < 0 ||
		    xp_qname_check(c->rclass, "--quota: class name", err) < 0 ||
		    xp_qamount_parse(eq + 1, false, "--quota: N", &c->devices, err) < 0) {
			xp_whatif_change_clear(c);
			return -1;
		}
		return 0;
	}
	}
	return xp_errf(err, "unknown change");
}

void xp_whatif_change_clear(struct xp_whatif_change *c)
{
	free(c->node);
	free(c->node_kind);
	free(c->queue);
	free(c->rclass);
	memset(c, 0, sizeof *c);
}

static long node_ix(const struct xp_cluster *c, const char *name)
{
	for (size_t i = 0; i < c->n_nodes; i++)
		if (strcmp(c->nodes[i]->name, name) == 0)
			return (long)i;
	return -1;
}

/* Appends n nodes of kind to c: sim gen's, named whatif-NAME (NAME their generated name,
 * made unique), in racks of their own, up and idle. */
static int add_nodes(struct xp_cluster *c, const struct xp_whatif_change *ch, uint64_t seed, char *words,
		     size_t len, struct xp_err *err)
{
	struct xp_sim_mix mix;
	char spec[96];
	snprintf(spec, sizeof spec, "%.80s:100", ch->node_kind);
	if (xp_sim_mix_parse(spec, &mix, err) < 0) {
		/* The kind is what --add named: sim gen's "--mix: " would point at an option not given. */
		if (strncmp(err->msg, "--mix: ", 7) == 0)
			memmove(err->msg, err->msg + 7, strlen(err->msg + 7) + 1);
		xp_err_prefix(err, "--add");
		return -1;
	}
	struct xp_cluster *add = xp_sim_generate(ch->count, &mix, seed, err);
	if (!add) {
		xp_err_prefix(err, "--add");
		return -1;
	}
	char first[160] = "", last[160] = "";
	for (size_t i = 0; i < add->n_nodes; i++) {
		struct xp_node *n = add->nodes[i];
		char *name = xp_asprintf("whatif-%s", n->name);
		for (int k = 2; xp_cluster_node(c, name); k++) {
			free(name);
			name = xp_asprintf("whatif%d-%s", k, n->name);
		}
		free(n->name);
		n->name = name;
		/* Its own racks: a switch-wide job must not think them beside the cluster's nodes. */
		char *z = xp_asprintf("whatif-%s", n->zone ? n->zone : "zone"), *r = xp_asprintf("whatif-%s", n->rack ? n->rack : "rack"),
		     *s = xp_asprintf("whatif-%s", n->sw ? n->sw : "sw");
		free(n->zone);
		free(n->rack);
		free(n->sw);
		n->zone = z;
		n->rack = r;
		n->sw = s;
		n->state = XP_NODE_UP;
		for (size_t d = 0; d < n->n_devices; d++) {
			struct xp_device *dv = &n->devices[d];
			dv->health = XP_HEALTH_OK;
			/* Idle and unpartitioned, as a new machine comes: what runs there is what the
			 * scenario starts (MIG on would offer only its instances, never the whole GPU). */
			for (size_t a = 0; a < dv->n_allocs; a++) {
				free(dv->allocs[a].slice);
				free(dv->allocs[a].owner);
				free(dv->allocs[a].uuid);
			}
			dv->n_allocs = 0;
			if (dv->mig_mode == 1)
				dv->mig_mode = 0;
		}
		if (i == 0)
			snprintf(first, sizeof first, "%s", name);
		snprintf(last, sizeof last, "%s", name);
		xp_cluster_add(c, n);
		add->nodes[i] = NULL;
	}
	size_t n_added = add->n_nodes;
	add->n_nodes = 0;
	xp_cluster_free(add);
	snprintf(words, len, "add %zu %s (%s%s%s)", n_added, ch->node_kind, first, n_added > 1 ? ".." : "",
		 n_added > 1 ? last : "");
	return 0;
}

/* The scenario's quota: the queue's deserved devices of the class set to ch->devices (and
 * its max raised to it when lower, its guaranteed and lending limit lowered to it when
 * higher); a quota is added when the queue had none for the class. */
static int set_quota(struct xp_qset *qs, const struct xp_whatif_change *ch, char *words, size_t len,
		     struct xp_err *err)
{
	struct xp_queue *q = xp_qset_queue(qs, ch->queue);
	if (!q)
		return xp_errf(err, "--quota: no queue '%s'", ch->queue);
	struct xp_rclass *cl = xp_qset_class(qs, ch->rclass);
	if (!cl || cl->builtin)
		return xp_errf(err, "--quota: no device class '%s'", ch->rclass);
	struct xp_quota *u = NULL;
	for (size_t i = 0; i < q->n_quotas; i++)
		if (strcmp(q->quotas[i].rclass, ch->rclass) == 0 && q->quotas[i].res == XP_RES_DEVICES)
			u = &q->quotas[i];
	if (!u) {
		q->quotas = xp_realloc(q->quotas, (q->n_quotas + 1) * sizeof *q->quotas);
		u = &q->quotas[q->n_quotas++];
		*u = (struct xp_quota){.rclass = xp_strdup(ch->rclass), .res = XP_RES_DEVICES, .max = XP_UNLIMITED,
				       .borrowing_limit = XP_UNLIMITED, .lending_limit = XP_UNLIMITED};
	}
	u->deserved = ch->devices;
	if (u->max != XP_UNLIMITED && u->max < u->deserved)
		u->max = u->deserved;
	if (u->guaranteed > u->deserved)
		u->guaranteed = u->deserved;
	if (u->lending_limit != XP_UNLIMITED && u->lending_limit > u->deserved)
		u->lending_limit = u->deserved;
	char amt[32];
	snprintf(words, len, "quota %s:%s=%s", ch->queue, ch->rclass, xp_qamount_format(ch->devices, amt, sizeof amt));
	return 0;
}

/* ---------------------------------------------------------------- runs */

/* One run's inputs and outputs (each thread has its own). */
struct side {
	const struct xp_whatif *w;
	const struct xp_cluster *cluster;
	const struct xp_qset *qs;
	int strategy;
	/* Devices failed at t0 (node index, position). */
	size_t *fail_node, *fail_pos, n_fail;
	struct xp_qsim_report rep;
	struct xp_err err;
	int rc;
};

static void *side_run(void *arg)
{
	struct side *sd = arg;
	const struct xp_whatif *w = sd->w;
	/* Reservations look as far ahead as the scheduler's own (a day, 0 here) or the simulated
	 * span when longer: a shorter --horizon must not change what starts inside it (with the
	 * span as the limit, a head whose start lay beyond it got no reservation and later jobs
	 * backfilled past it, where one scheduling pass, and Slurm, hold them back). */
	struct xp_sched_opts so = {.strategy = sd->strategy, .no_backfill = w->no_backfill,
				   .horizon_s = w->horizon_s > 86400 ? w->horizon_s : 0, .reconfigure = w->reconfigure,
				   .skip_tail = true};
	sd->rc = -1;
	struct xp_sched *s = xp_sched_new(sd->cluster, w->ms, w->n_ms, sd->qs, &so, &sd->err);
	if (!s)
		return NULL;
	/* Jobs that already hold devices or wait (a store's) go in first; trace jobs arrive. */
	struct xp_qjob *arr = xp_calloc(w->n_jobs + 1, sizeof *arr);
	size_t n_arr = 0;
	int rc = 0;
	for (size_t i = 0; i < w->n_jobs && !rc; i++) {
		const struct xp_qjob *j = &w->jobs[i];
		if (j->state == XP_JS_RUNNING || j->state == XP_JS_HELD || j->submit < w->t0) {
			struct xp_qjob c;
			xp_qjob_copy(&c, j);
			if (xp_sched_add(s, &c, &sd->err) < 0)
				rc = -1;
		} else
			xp_qjob_copy(&arr[n_arr++], j);
	}
	for (size_t i = 0; i < sd->n_fail && !rc; i++)
		if (xp_sched_fail_device(s, sd->fail_node[i], sd->fail_pos[i], w->t0, &sd->err) < 0)
			rc = -1;
	struct xp_qsim_opts qo = {.t0 = w->t0, .horizon_s = w->horizon_s, .buckets = w->buckets, .check = w->check,
				  .cancel = w->cancel, .cluster = sd->cluster, .qs = sd->qs};
	if (!rc)
		rc = xp_qsim_run(s, arr, n_arr, &qo, &sd->rep, &sd->err);
	for (size_t i = 0; i < n_arr; i++)
		xp_qjob_clear(&arr[i]);
	free(arr);
	xp_sched_free(s);
	sd->rc = rc;
	return NULL;
}

int xp_whatif_run(const struct xp_whatif *w, struct xp_whatif_result *res, struct xp_err *err)
{
	memset(res, 0, sizeof *res);
	/* The scenario's cluster: the nodes shared with the baseline's (a node is never changed
	 * in place, xp_node_ref), those that change copied. */
	struct xp_cluster *sc = xp_cluster_new();
	for (size_t i = 0; i < w->cluster->n_nodes; i++)
		xp_cluster_add(sc, xp_node_ref(w->cluster->nodes[i]));
	struct xp_qset sq;
	xp_qset_copy(&sq, w->qs);
	struct side base = {.w = w, .cluster = w->cluster, .qs = w->qs, .strategy = 0};
	struct side scen = {.w = w, .cluster = sc, .qs = &sq, .strategy = w->strategy < 0 ? 0 : w->strategy};
	scen.fail_node = xp_calloc(w->n_changes + 1, sizeof *scen.fail_node);
	scen.fail_pos = xp_calloc(w->n_changes + 1, sizeof *scen.fail_pos);
	res->changes = xp_calloc(w->n_changes + 2, sizeof *res->changes);
	int rc = 0;
	char b[80];
	for (size_t i = 0; i < w->n_changes && !rc; i++) {
		const struct xp_whatif_change *ch = &w->changes[i];
		char words[512] = "";
		long ni = ch->node ? node_ix(sc, ch->node) : -1;
		if ((ch->kind == XP_WI_DRAIN || ch->kind == XP_WI_FAIL) && ni < 0) {
			rc = xp_errf(err, "--%s %s: no such node", ch->kind == XP_WI_DRAIN ? "drain" : "fail",
				     shown(ch->node, b, sizeof b));
			break;
		}
		if (ch->kind == XP_WI_DRAIN || ch->kind == XP_WI_FAIL) {
			/* Copy on change: the baseline keeps reading the original node. */
			struct xp_node *copy = xp_node_clone(sc->nodes[ni]);
			xp_node_free(sc->nodes[ni]);
			sc->nodes[ni] = copy;
		}
		switch (ch->kind) {
		case XP_WI_DRAIN:
			sc->nodes[ni]->state = XP_NODE_DRAINING;
			snprintf(words, sizeof words, "drain %s", sc->nodes[ni]->name);
			break;
		case XP_WI_FAIL:
			if ((size_t)ch->dev >= sc->nodes[ni]->n_devices) {
				rc = xp_errf(err, "--fail %s:%d: the node has %zu devices", shown(ch->node, b, sizeof b), ch->dev,
					     sc->nodes[ni]->n_devices);
				break;
			}
			sc->nodes[ni]->devices[ch->dev].health = XP_HEALTH_FAIL;
			scen.fail_node[scen.n_fail] = (size_t)ni;
			scen.fail_pos[scen.n_fail++] = (size_t)ch->dev;
			snprintf(words, sizeof words, "fail %s:%d", sc->nodes[ni]->name, ch->dev);
			break;
		case XP_WI_ADD:
			rc = add_nodes(sc, ch, w->seed + i, words, sizeof words, err);
			break;
		case XP_WI_QUOTA:
			rc = set_quota(&sq, ch, words, sizeof words, err);
			break;
		}
		if (!rc)
			res->changes[res->n_changes++] = xp_strdup(words);
	}
	if (!rc && w->strategy >= 0 && w->strategy != 0)
		res->changes[res->n_changes++] = xp_asprintf("strategy %s", xp_strategy_name(w->strategy));
	if (!rc) {
		pthread_t th;
		bool threaded = pthread_create(&th, NULL, side_run, &base) == 0;
		if (!threaded)
			side_run(&base);
		side_run(&scen);
		if (threaded)
			pthread_join(th, NULL);
		if (base.rc < 0)
			rc = xp_errf(err, "%s%s", strcmp(base.err.msg, "cancelled") == 0 ? "" : "baseline: ", base.err.msg);
		else if (scen.rc < 0)
			rc = xp_errf(err, "%s%s", strcmp(scen.err.msg, "cancelled") == 0 ? "" : "scenario: ", scen.err.msg);
	}
	if (!rc) {
		res->baseline = base.rep;
		res->scenario = scen.rep;
	} else {
		xp_qsim_report_clear(&base.rep);
		xp_qsim_report_clear(&scen.rep);
		xp_whatif_result_clear(res);
	}
	free(scen.fail_node);
	free(scen.fail_pos);
	xp_qset_clear(&sq);
	xp_cluster_free(sc);
	return rc;
}

void xp_whatif_result_clear(struct xp_whatif_result *res)
{
	xp_qsim_report_clear(&res->baseline);
	xp_qsim_report_clear(&res->scenario);
	xp_strv_free(res->changes, res->n_changes);
	memset(res, 0, sizeof *res);
}

json_t *xp_whatif_json(const struct xp_whatif_result *res)
{
	json_t *o = json_object(), *ch = json_array();
	for (size_t i = 0; i < res->n_changes; i++)
		json_array_append_new(ch, json_string(res->changes[i]));
	json_object_set_new(o, "changes", ch);
	json_object_set_new(o, "baseline", xp_qsim_report_json(&res->baseline));
	json_object_set_new(o, "scenario", xp_qsim_report_json(&res->scenario));
	return o;
}
