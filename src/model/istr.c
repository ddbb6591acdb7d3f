/* istr.c: interned strings: one open-addressing table of (text, holders) under a mutex. */
#include "istr.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xp.h"

struct entry {
	char *s;       /* NULL when the slot is empty */
	size_t len;
	uint32_t hash;
	size_t refs;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *tab;
static size_t cap, used, refs_total;

static uint32_t hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static void grow(void)
{
	size_t nc = cap ? cap * 2 : 1024;
	struct entry *nt = xp_calloc(nc, sizeof *nt);
	for (size_t i = 0; i < cap; i++) {
		if (!tab[i].s)
			continue;
		size_t j = tab[i].hash & (nc - 1);
		while (nt[j].s)
			j = (j + 1) & (nc - 1);
		nt[j] = tab[i];
	}
	free(tab);
	tab = nt;
	cap = nc;
}

const char *xp_istrn(const char *s, size_t n)
{
	uint32_t h = hash(s, n);
	pthread_mutex_lock(&lock);
	if ((used + 1) * 2 > cap)
		grow();
	size_t i = h & (cap - 1);
	for (; tab[i].s; i = (i + 1) & (cap - 1))
		if (tab[i].hash == h && tab[i].len == n && memcmp(tab[i].s, s, n) == 0)
			break;
	if (!tab[i].s) {
		tab[i].s = xp_strndup(s, n);
		tab[i].len = n;
		tab[i].hash = h;
		tab[i].refs = 0;
		used++;
	}
	tab[i].refs++;
	refs_total++;
	const char *r = tab[i].s;
	pthread_mutex_unlock(&lock);
	return r;
}

const char *xp_istr(const char *s)
{
	return s ? xp_istrn(s, strlen(s)) : NULL;
}

/* Removes slot i, moving later entries of its run back (linear probing without tombstones). */
static void remove_slot(size_t i)
{
	tab[i].s = NULL;
	used--;
	for (size_t j = (i + 1) & (cap - 1); tab[j].s; j = (j + 1) & (cap - 1)) {
		size_t home = tab[j].hash & (cap - 1);
		/* Move j to the hole unless its home lies cyclically in (i, j]. */
		bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (!stays) {
			tab[i] = tab[j];
			tab[j].s = NULL;
			i = j;
		}
	}
}

void xp_istr_drop(const char *s)
{
	if (!s)
		return;
	size_t n = strlen(s);
	uint32_t h = hash(s, n);
	pthread_mutex_lock(&lock);
	size_t i = cap ? h & (cap - 1) : 0;
	bool found = false;
	for (; cap && tab[i].s; i = (i + 1) & (cap - 1))
		if (tab[i].s == s) {
			found = true;
			break;
		}
	if (found) {
		refs_total--;
		if (--tab[i].refs == 0) {
			char *p = tab[i].s;
			remove_slot(i);
			free(p);
		}
	}
	pthread_mutex_unlock(&lock);
	/* Not in the table: a plain heap copy, owned by the field alone. */
	if (!found)
		free((char *)s);
}

void xp_istr_hold(const char *s, size_t k)
{
	if (!s || !k)
		return;
	uint32_t h = hash(s, strlen(s));
	pthread_mutex_lock(&lock);
	size_t i = cap ? h & (cap - 1) : 0;
	for (; cap && tab[i].s; i = (i + 1) & (cap - 1))
		if (tab[i].s == s) {
			tab[i].refs += k;
			refs_total += k;
			break;
		}
	pthread_mutex_unlock(&lock);
}

void xp_istr_set(const char **field, const char *s)
{
	const char *old = *field;
	*field = xp_istr(s);
	xp_istr_drop(old);
}

void xp_istr_stats(size_t *strings, size_t *refs)
{
	pthread_mutex_lock(&lock);
	*strings = used;
	*refs = refs_total;
	pthread_mutex_unlock(&lock);
}
