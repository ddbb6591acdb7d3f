/* place_mig.h: MIG geometry. A partitioned device has md->slots slots (a MIG GPU: 8 memory
 * slices); a slice of template t covers t->span slots from one of the starts t->at allows
 * (nvidia-smi mig -lgipp). Counting compute or memory fractions alone accepts layouts the
 * hardware cannot build; these say where a slice can really go. */
#ifndef XP_PLACE_MIG_H
#define XP_PLACE_MIG_H

#include <stdbool.h>
#include <stddef.h>

#include "manifest.h"

/* True when the model and template carry positions (slots, at, span), so geometry applies. */
bool xp_mig_geometric(const struct xp_mmodel *md, const struct xp_mtemplate *t);
/* The lowest legal start of t whose span is free in occupied (bit s: slot s taken); -1 none. */
int xp_mig_start(const struct xp_mmodel *md, const struct xp_mtemplate *t, unsigned occupied);
/* One MIG instance that exists on a GPU: its profile, and whether it is free (no job holds it:
 * a slice may go there as it is) or in use. */
struct xp_mig_inst {
	const char *name;
	bool free;
};
/* What one more slice of a profile would be on a GPU. */
struct xp_mig_answer {
	bool fits;     /* it can be had: on a free existing instance, or (existing false) as a new one */
	bool existing; /* a free existing instance of the profile is left for it, whatever the rest */
};
/* As xp_mig_fits, with the existing instances inst[0..n) of which some are free: the slices
 * this placement already put on the device (planned) took free instances of their profile
 * first, and only the rest are new. existing: in every mix of kinds making up planned a free
 * instance of t is left; fits: in every mix t is on a free instance or fits as a new one
 * however the existing ones sit. -1 as xp_mig_fits; else 0 with out set. */
int xp_mig_judge(const struct xp_mmodel *md, const struct xp_mig_inst *inst, size_t n,
		 const struct xp_mtemplate *const *kinds, size_t nk, double planned, const struct xp_mtemplate *t,
		 struct xp_mig_answer *out);
/* As xp_mig_judge, with this placement's own slices known by template (own[0..no)) besides
 * any known only as a share (planned): each took a free instance of its profile while one was
 * left, else is new and ours to arrange. */
int xp_mig_judge_own(const struct xp_mmodel *md, const struct xp_mig_inst *inst, size_t n,
		     const struct xp_mtemplate *const *own, size_t no, const struct xp_mtemplate *const *kinds,
		     size_t nk, double planned, const struct xp_mtemplate *t, struct xp_mig_answer *out);
/* Whether one more t fits beside the existing instances named by names[0..n), whose positions
 * are not known, and the slices this placement already put on the device, which are known
 * only as their compute share (planned) made of templates among kinds[0..nk). 1 when t fits
 * whichever legal arrangement the existing ones have and whichever kinds make up planned
 * (those are ours to arrange); 0 when not, when no mix of kinds makes up planned, or when a
 * template's count would be passed; -1 when the existing ones have no legal arrangement at all
 * (an unknown template or one without positions counts as filling the device). Every existing
 * instance counts as in use. */
int xp_mig_fits(const struct xp_mmodel *md, const char *const *names, size_t n,
		const struct xp_mtemplate *const *kinds, size_t nk, double planned, const struct xp_mtemplate *t);

#endif
