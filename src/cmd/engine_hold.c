/* engine_hold.c: a live engine's running jobs take back the devices they hold. Slurm says
 * per node how many of each GRES are in use (GresUsed) and per job on which nodes it runs and
 * how many per node (squeue's %N and %b); which units exactly it does not say without slurmd.
 * Any in-use unit of the job's type on its node is as good as another for what a run asks
 * (when the job ends, how many are free), so the job takes that many of them. */
#include "engine_hold.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nameset.h"
#include "slurm.h"
#include "slurm_compare.h"

/* A character inside a model's word: "a10" must not name an "A100", nor "h100" a MIG type
 * "h100_1g.10gb". */
static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.';
}

/* Whether a job's GRES type (model, "h100") names a device model an agent reported ("NVIDIA H100
 * 80GB HBM3"): the same, or one word of it. */
static bool model_names(const char *dm, const char *model)
{
	if (strcasecmp(dm, model) == 0)
		return true;
	size_t ml = strlen(model);
	for (const char *p = dm; ml && (p = strcasestr(p, model)); p++)
		if ((p == dm || !word_char(p[-1])) && !word_char(p[ml]))
			return true;
	return false;
}

/* A device the engine marks in use for no one in particular, of what group g of job j asks. */
static bool takeable(const struct xp_device *d, const struct xp_qjob *j, const struct xp_task_group *g)
{
	if (d->n_allocs != 1 || d->allocs[0].owner || d->allocs[0].slice)
		return false;
	/* A device Slurm's Gres made carries its GRES name ("gpu") and its type as the model:
	 * both are the site's words and must be the job's exactly. */
	bool slurms = d->n_os_devices && xp_slurm_gres_is_device(d->os_devices[0]);
	if (slurms && j->engine_gres && strcmp(d->os_devices[0], j->engine_gres) != 0)
		return false;
	if (g->model && *g->model)
		return d->model && (slurms ? strcasecmp(d->model, g->model) == 0 : model_names(d->model, g->model));
	/* Untyped: the vendor its GRES name says (npu: Huawei), else not another vendor's. */
	if (g->vendor)
		return d->vendor && strcasecmp(d->vendor, g->vendor) == 0;
	if (!slurms && j->engine_gres && strcmp(j->engine_gres, "gpu") == 0 && d->vendor)
		return strcasecmp(d->vendor, "Huawei") && strcasecmp(d->vendor, "Cambricon") &&
		       strcasecmp(d->vendor, "Hygon");
	return true;
}

/* The node at *slot, copied first when another cluster holds it too (it may be read from
 * another thread, and must not change under it). */
static struct xp_node *own(struct xp_node **slot)
{
	struct xp_node *n = *slot;
	if (__atomic_load_n(&n->refs, __ATOMIC_ACQUIRE) != 0) {
		*slot = xp_node_clone(n);
		xp_node_free(n);
	}
	return *slot;
}

/* Job j's slots on c, or false when its nodes or their in-use devices do not add up (then
 * nothing changes). */
static bool hold_one(struct xp_cluster *c, const struct xp_nameset *names, struct xp_qjob *j)
{
	if (!j->spec || j->spec->n_groups != 1 || !j->nodes || j->alloc.n)
		return false;
	const struct xp_task_group *g = &j->spec->groups[0];
	if (g->devices <= 0)
		return false;
	char **hosts = NULL;
	size_t nh = 0;
	struct xp_err err = {{0}};
	if (xp_slurm_hostlist(j->nodes, &hosts, &nh, &err) < 0)
		return false;
	bool ok = nh > 0 && nh == (size_t)g->replicas;
	size_t *ix = xp_calloc(nh + 1, sizeof *ix);
	for (size_t h = 0; ok && h < nh; h++) {
		/* Names hold index + 1: a node's pointer changes when it is copied. */
		uintptr_t v = (uintptr_t)xp_nameset_get(names, hosts[h]);
		if (!v || v > c->n_nodes) {
			ok = false;
			break;
		}
		size_t k = (size_t)v - 1;
		const struct xp_node *n = c->nodes[k];
		ix[h] = k;
		int found = 0;
		for (size_t d = 0; d < n->n_devices && found < g->devices; d++)
			found += takeable(&n->devices[d], j, g);
		ok = found == g->devices;
		for (size_t e = 0; ok && e < h; e++) /* one node named twice: not a job's node list */
			ok = ix[e] != k;
	}
	if (ok) {
		j->alloc.slots = xp_calloc(nh * (size_t)g->devices, sizeof *j->alloc.slots);
		for (size_t h = 0; h < nh; h++) {
			struct xp_node *n = own(&c->nodes[ix[h]]);
			int left = g->devices;
			for (size_t d = 0; d < n->n_devices && left > 0; d++) {
				struct xp_device *dev = &n->devices[d];
				if (!takeable(dev, j, g))
					continue;
				free(dev->allocs[0].slice);
				free(dev->allocs[0].owner);
				free(dev->allocs[0].uuid);
				free(dev->allocs);
				dev->allocs = NULL;
				dev->n_allocs = 0;
				j->alloc.slots[j->alloc.n++] = (struct xp_qslot){
					.node_ix = (uint32_t)ix[h], .pos = (uint16_t)d, .take = 1000};
				left--;
			}
		}
	}
	free(ix);
	for (size_t h = 0; h < nh; h++)
		free(hosts[h]);
	free(hosts);
	return ok;
}

size_t xp_engine_hold(struct xp_cluster *c, struct xp_qjob *jobs, size_t n, bool *held)
{
	struct xp_nameset names = {0};
	for (size_t i = 0; i < c->n_nodes; i++)
		if (c->nodes[i]->name)
			xp_nameset_put(&names, c->nodes[i]->name, (void *)(uintptr_t)(i + 1));
	size_t k = 0;
	if (held)
		memset(held, 0, n * sizeof *held);
	/* Typed jobs first: an untyped one takes any unit of its GRES, and taking first it could
	 * leave a typed job none of its type. */
	for (int typed = 1; typed >= 0; typed--)
		for (size_t i = 0; i < n; i++) {
			struct xp_qjob *j = &jobs[i];
			const struct xp_task_group *g = j->spec && j->spec->n_groups ? &j->spec->groups[0] : NULL;
			if (!g || (g->model && *g->model) != (typed == 1))
				continue;
			bool h = false;
			if (j->engine && (j->state == XP_JS_RUNNING || j->state == XP_JS_ADMITTED))
				h = hold_one(c, &names, j);
			if (held)
				held[i] = h;
			k += h;
		}
	xp_nameset_clear(&names);
	/* Jobs asking several partitions select the nodes of any: those carry the set's label. */
	xp_slurm_partsets(c, jobs, n);
	return k;
}

struct xp_cluster *xp_engine_hold_share(const struct xp_cluster *c)
{
	struct xp_cluster *s = xp_cluster_new();
	for (size_t i = 0; i < c->n_nodes; i++)
		xp_cluster_add(s, xp_node_ref(c->nodes[i]));
	return s;
}
