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
	long compositions, bad;
	bool none_arranged;
};

/* Every way ours (kinds from k on) make up the planned compute share: for each one that could
 * exist (no count passed), t must fit in every arrangement of the existing instances. */
static void compose(struct walk *w, size_t k, double planned)
{
	if (fabs(planned) < 1e-6) {
		const struct xp_mtemplate *all[2 * XP_MAX_SLOTS + 1];
		memcpy(all, w->items, w->n * sizeof *all);
		memcpy(all + w->n, w->ours, w->no * sizeof *all);
		for (size_t i = 0; i < w->no; i++)
			if (count_of(all, w->n + w->no, w->ours[i]) > w->ours[i]->count)
				return;
		w->compositions++;
		w->ours[w->no] = w->t;
		all[w->n + w->no] = w->t;
		long seen = 0, fit = 0;
		arrange(w->md, w->items, 0, w->n, 0, -1, w->ours, w->no + 1, &seen, &fit);
		if (!seen)
			w->none_arranged = true;
		if (!seen || fit != seen || count_of(all, w->n + w->no + 1, w->t) > w->t->count)
			w->bad++;
		return;
	}
	if (planned < 0 || w->n + w->no >= (size_t)w->md->slots)
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

int xp_mig_fits(const struct xp_mmodel *md, const char *const *names, size_t n,
		const struct xp_mtemplate *const *kinds, size_t nk, double planned, const struct xp_mtemplate *t)
{
	if (!xp_mig_geometric(md, t))
		return 0;
	/* Every instance takes a slot at least: more than slots of them have no arrangement. */
	if (n > (size_t)md->slots)
		return -1;
	struct walk w = {.md = md, .n = n, .kinds = kinds, .nk = nk, .t = t};
	for (size_t i = 0; i < n; i++) {
		const struct xp_mtemplate *it = xp_manifest_template(md, names[i]);
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
	compose(&w, 0, planned);
	if (w.none_arranged && planned < 1e-6)
		return -1;
	return w.compositions > 0 && w.bad == 0;
}
