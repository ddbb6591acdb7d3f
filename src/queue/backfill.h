/* backfill.h: EASY backfill's reservation for the scheduler's head job (internal to
 * src/queue; the rule and its numbers are in sched.h and xpool-internals(7)). */
#ifndef XP_BACKFILL_H
#define XP_BACKFILL_H

#include <stddef.h>
#include <stdint.h>

struct xp_sched;
struct xp_job;

/* Whole devices job j needs at the least (its gang minimum's); 0 when it asks for slices or
 * shares: the counting gate's figure. */
size_t xs_whole_demand(const struct xp_job *j);

/* Works out the head job's shadow time and reserved slots at now into s (s->shadow -1 when it
 * does not fit within the horizon); the index is left as it was. */
void xs_reservation(struct xp_sched *s, size_t head, int64_t now);
/* The shadow time the head would get now, leaving s's kept reservation as it is. */
int64_t xs_shadow_probe(struct xp_sched *s, size_t head, int64_t now);

#endif
