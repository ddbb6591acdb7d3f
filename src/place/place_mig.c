/* place_mig.c: MIG geometry (see place_mig.h). */
#include "place_mig.h"

#include <math.h>
#include <string.h>
#include <strings.h>

bool xp_mig_geometric(const struct xp_mmodel *md, const struct xp_mtemplate *t)
{
	return md && t && md->slots > 0 && t->span > 0 && t->at;
}

/* Slots s..s+span as a mask; 0 when they run past the device. */
static unsigned span_mask(const struct xp_mmodel *md, const struct xp_mtemplate *t, int s)
{
	if (s + t->span > md->slots)
		return 0;
	return ((1u << t->span) - 1) << s;
}

int xp_mig_start(const struct xp_mmodel *md, const struct xp_mtemplate *t, unsigned occupied)
{
	if (!xp_mig_geometric(md, t))
		return -1;
	for (int s = 0; s < md->slots; s++) {
		unsigned m = span_mask(md, t, s);
		if ((t->at & (1u << s)) && m && !(m & occupied))
			return s;
	}
	return -1;
}

/* Whether ours[i..n) can all be placed over occupied (ours to place: some way will do). */
static bool place_ours(const struct xp_mmodel *md, const struct xp_mtemplate *const *ours, size_t i, size_t n,
		       unsigned occupied)
{
	if (i == n)
		return true;
	for (int s = 0; s < md->slots; s++) {
		unsigned m = span_mask(md, ours[i], s);
		if ((ours[i]->at & (1u << s)) && m && !(m & occupied) && place_ours(md, ours, i + 1, n, occupied | m))
			return true;
	}
	return false;
}

/* Walks every legal arrangement of the existing items[i..n) over occupied (where they are is
 * not known, so each counts); counts the arrangements (*seen) and those where ours still fit
 * (*fit). prev: where items[i - 1] starts. */
static void arrange(const struct xp_mmodel *md, const struct xp_mtemplate *const *items, size_t i, size_t n,
		    unsigned occupied, int prev, const struct xp_mtemplate *const *ours, size_t no, long *seen,
		    long *fit)
{
	if (i == n) {
		(*seen)++;
		*fit += place_ours(md, ours, 0, no, occupied);
		return;
	}
	const struct xp_mtemplate *it = items[i];
	/* Instances of one template are alike: the same starts in another order are the same
	 * arrangement, so each starts after the one before it (alike ones are next to each other). */
	int from = i > 0 && items[i - 1] == it ? prev + 1 : 0;
	for (int s = from; s < md->slots; s++) {
		unsigned m = span_mask(md, it, s);
		if ((it->at & (1u << s)) && m && !(m & occupied))
			arrange(md, items, i + 1, n, occupied | m, s, ours, no, seen, fit);
	}
}

/* Instances named like t among list[0..n). */
static int count_of(const struct xp_mtemplate *const *list, size_t n, const struct xp_mtemplate *t)
{
	int c = 0;
	for (size_t i = 0; i < n; i++)
		c += strcasecmp(list[i]->name, t->name) == 0;
	return c;
}

struct walk {
	const struct xp_mmodel *md;
	const struct xp_mtemplate *items[XP_MAX_SLOTS]; /* the existing instances */
	size_t n;
	const struct xp_mtemplate *const *kinds; /* what ours may be */
	size_t nk;
	const struct xp_mtemplate *ours[XP_MAX_SLOTS + 1];
	size_t no;
	const struct xp_mtemplate *t;
	const struct xp_mig_inst *inst; /* the existing instances as given (which are free) */
	size_t ninst, nfree;
	long compositions, bad, made;
	bool none_arranged;
};

/* Free existing instances of t among w->inst. */
static int free_of(const struct walk *w, const struct xp_mtemplate *t)
{
	int c = 0;
	for (size_t i = 0; i < w->ninst; i++)
		c += w->inst[i].free && strcasecmp(w->inst[i].name, t->name) == 0;
	return c;
}

/* One composition of ours: those of a kind up to its free existing instances took those
 * (a slice goes to a free instance of its profile first), the rest are new. t is on a free
 * instance when one is left; else it is new and must fit beside everything, however the
 * existing instances sit. Counts compositions where t needs a new one (made) and those where
 * it cannot be had at all (bad). */
static void judge_leaf(struct walk *w)
{
	const struct xp_mtemplate *made[XP_MAX_SLOTS + 1];
	size_t nm = 0;
	for (size_t i = 0; i < w->no; i++) {
		const struct xp_mtemplate *k = w->ours[i];
		int before = count_of(w->ours, i, k); /* ours of this kind ahead of it */
		if (before >= free_of(w, k))
			made[nm++] = k;
	}
	if (count_of(w->ours, w->no, w->t) < free_of(w, w->t))
		return; /* a free instance of t is left */
	w->made++;
	const struct xp_mtemplate *all[2 * XP_MAX_SLOTS + 1];
	memcpy(all, w->items, w->n * sizeof *all);
	memcpy(all + w->n, made, nm * sizeof *all);
	made[nm] = w->t;
	all[w->n + nm] = w->t;
	long seen = 0, fit = 0;
	arrange(w->md, w->items, 0, w->n, 0, -1, made, nm + 1, &seen, &fit);
	if (!seen)
		w->none_arranged = true;
	if (!seen || fit != seen || count_of(all, w->n + nm + 1, w->t) > w->t->count)
		w->bad++;
}

/* Every way ours (kinds from k on) make up the planned compute share: for each one that could
 * exist (no count passed), t must be had in every arrangement of the existing instances. */
static void compose(struct walk *w, size_t k, double planned)
{
	if (fabs(planned) < 1e-6) {
		const struct xp_mtemplate *all[2 * XP_MAX_SLOTS + 1];
		memcpy(all, w->items, w->n * sizeof *all);
		memcpy(all + w->n, w->ours, w->no * sizeof *all);
		/* Ours on free instances are among the items already: count each once. */
		for (size_t i = 0; i < w->no; i++) {
			int taken = count_of(w->ours, w->no, w->ours[i]), fr = free_of(w, w->ours[i]);
			if (count_of(all, w->n + w->no, w->ours[i]) - (taken < fr ? taken : fr) > w->ours[i]->count)
				return;
		}
		w->compositions++;
		judge_leaf(w);
		return;
	}
	/* Ours on free instances are among the existing ones: they take no more slots. */
	if (planned < 0 || w->n + w->no >= (size_t)w->md->slots + w->nfree)
		return;
	for (size_t i = k; i < w->nk; i++) {
		double c = w->kinds[i]->compute;
		if (!(c > 0) || c > planned + 1e-6)
			continue;
		w->ours[w->no++] = w->kinds[i];
		compose(w, i, planned - c);
		w->no--;
	}
}

int xp_mig_judge(const struct xp_mmodel *md, const struct xp_mig_inst *inst, size_t n,
		 const struct xp_mtemplate *const *kinds, size_t nk, double planned, const struct xp_mtemplate *t,
		 struct xp_mig_answer *out)
{
	return xp_mig_judge_own(md, inst, n, NULL, 0, kinds, nk, planned, t, out);
}

int xp_mig_judge_own(const struct xp_mmodel *md, const struct xp_mig_inst *inst, size_t n,
		     const struct xp_mtemplate *const *own, size_t no, const struct xp_mtemplate *const *kinds,
		     size_t nk, double planned, const struct xp_mtemplate *t, struct xp_mig_answer *out)
{
	*out = (struct xp_mig_answer){false, false};
	if (!xp_mig_geometric(md, t))
		return 0;
	/* Every instance takes a slot at least: more than slots of them have no arrangement. */
	if (n > (size_t)md->slots)
		return -1;
	struct walk w = {.md = md, .n = n, .kinds = kinds, .nk = nk, .t = t, .inst = inst, .ninst = n};
	for (size_t i = 0; i < n; i++) {
		w.nfree += inst[i].free;
		const struct xp_mtemplate *it = xp_manifest_template(md, inst[i].name);
		if (!xp_mig_geometric(md, it))
			return -1;
		/* Insertion by template: alike instances next to each other (see arrange). */
		size_t j = i;
		while (j > 0 && w.items[j - 1] > it) {
			w.items[j] = w.items[j - 1];
			j--;
		}
		w.items[j] = it;
	}
	for (size_t i = 0; i < nk; i++)
		if (!xp_mig_geometric(md, kinds[i]))
			return 0;
	/* Ours known by template come first in every composition. */
	if (no > XP_MAX_SLOTS)
		return 0;
	for (size_t i = 0; i < no; i++) {
		if (!xp_mig_geometric(md, own[i]))
			return 0;
		w.ours[w.no++] = own[i];
	}
	compose(&w, 0, planned);
	if (w.none_arranged && planned < 1e-6)
		return -1;
	if (w.compositions > 0 && w.bad == 0) {
		out->fits = true;
		out->existing = w.made == 0;
	}
	return 0;
}

int xp_mig_fits(const struct xp_mmodel *md, const char *const *names, size_t n,
		const struct xp_mtemplate *const *kinds, size_t nk, double planned, const struct xp_mtemplate *t)
{
	if (!xp_mig_geometric(md, t))
		return 0;
	if (n > XP_MAX_SLOTS)
		return -1;
	struct xp_mig_inst inst[XP_MAX_SLOTS];
	for (size_t i = 0; i < n; i++)
		inst[i] = (struct xp_mig_inst){names[i], false};
	struct xp_mig_answer a;
	if (xp_mig_judge(md, inst, n, kinds, nk, planned, t, &a) < 0)
		return -1;
	return a.fits;
}
