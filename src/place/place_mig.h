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
/* Whether one more t fits beside the existing instances named by names[0..n), whose positions
 * are not known, and the slices this placement already put on the device, which are known
 * only as their compute share (planned) made of templates among kinds[0..nk). 1 when t fits
 * whichever legal arrangement the existing ones have and whichever kinds make up planned
 * (those are ours to arrange); 0 when not, when no mix of kinds makes up planned, or when a
 * template's count would be passed; -1 when the existing ones have no legal arrangement at all
 * (an unknown template or one without positions counts as filling the device). */
int xp_mig_fits(const struct xp_mmodel *md, const char *const *names, size_t n,
		const struct xp_mtemplate *const *kinds, size_t nk, double planned, const struct xp_mtemplate *t);

#endif
