/* nameset.c: open addressing on FNV-1a, grown at half full. */
#include "nameset.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xp.h"

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

void *xp_nameset_get(const struct xp_nameset *s, const char *name)
{
	if (!s->cap)
		return NULL;
	for (size_t i = hash(name) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		if (!s->slot[i])
			return NULL;
		if (strcmp(s->slot[i], name) == 0)
			return s->val[i];
	}
}

static void insert(struct xp_nameset *s, const char *name, void *val)
{
	size_t i = hash(name) & (s->cap - 1);
	while (s->slot[i])
		i = (i + 1) & (s->cap - 1);
	s->slot[i] = name;
	s->val[i] = val;
	s->n++;
}

bool xp_nameset_put(struct xp_nameset *s, const char *name, void *val)
{
	if (xp_nameset_get(s, name))
		return false;
	if (2 * (s->n + 1) > s->cap) {
		struct xp_nameset old = *s;
		s->cap = old.cap ? old.cap * 2 : 64;
		s->slot = xp_calloc(s->cap, sizeof *s->slot);
		s->val = xp_calloc(s->cap, sizeof *s->val);
		s->n = 0;
		for (size_t i = 0; i < old.cap; i++)
			if (old.slot[i])
				insert(s, old.slot[i], old.val[i]);
		free(old.slot);
		free(old.val);
	}
	insert(s, name, val);
	return true;
}

void xp_nameset_clear(struct xp_nameset *s)
{
	free(s->slot);
	free(s->val);
	*s = (struct xp_nameset){0};
}
